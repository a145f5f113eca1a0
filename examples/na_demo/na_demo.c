/*
 * The NA demo: two nodes of the simulated fabric exchange an unexpected
 * message and an expected reply, then one writes into and reads back the
 * other's memory with RMA. It prints what happened in virtual time and the
 * trace hash, which is the same on every run with the same seed
 * (QS_SIM_SEED).
 */
#include <na.h>
#include <na_sim.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    const char *name;
    na_class_t *cls;
    na_context_t *ctx;
    na_op_id_t *op;
};

static int pending;

static void
on_complete(const struct na_cb_info *info)
{
    const char *what = info->arg;

    printf("  [%8.3f us] %-28s %s\n", na_sim_clock_now() / 1000.0, what,
           NA_Error_to_string(info->ret));
    pending--;
}

static na_addr_t last_source;

static void
on_recv_unexpected(const struct na_cb_info *info)
{
    last_source = info->info.recv_unexpected.source;
    printf("  [%8.3f us] bob received %zu bytes, tag %u\n",
           na_sim_clock_now() / 1000.0,
           info->info.recv_unexpected.actual_buf_size,
           info->info.recv_unexpected.tag);
    pending--;
}

/* Drive both nodes until every posted operation has completed. */
static int
drive(struct node *a, struct node *b)
{
    for (int i = 0; i < 10000 && pending > 0; i++) {
        NA_Poll_wait(a->cls, a->ctx, 10, NULL);
        NA_Trigger(a->ctx, 16, NULL);
        if (pending == 0)
            break;
        NA_Poll_wait(b->cls, b->ctx, 10, NULL);
        NA_Trigger(b->ctx, 16, NULL);
    }
    return pending == 0 ? 0 : -1;
}

static int
node_init(struct node *n, const char *info)
{
    n->cls = NA_Initialize(info, true);
    if (n->cls == NULL)
        return -1;
    n->ctx = NA_Context_create(n->cls);
    n->op = NA_Op_create(n->cls, 0);
    return n->ctx && n->op ? 0 : -1;
}

static void
node_fini(struct node *n)
{
    NA_Op_destroy(n->cls, n->op);
    NA_Context_destroy(n->cls, n->ctx);
    NA_Finalize(n->cls);
}

int
main(void)
{
    struct node alice = {.name = "alice"}, bob = {.name = "bob"};
    char msg[64] = "hello from alice", reply[64] = "", rbuf[64] = "";
    char region[64] = "", local[64] = "RMA payload", readback[64] = "";
    na_addr_t bob_addr = NA_ADDR_NULL;
    na_op_id_t *op2;
    na_mem_handle_t bob_mh, alice_mh, remote_mh;
    char desc[256];
    size_t desc_size;
    uint64_t hash;
    int rc = 1;

    if (node_init(&alice, "sim://alice") || node_init(&bob, "sim://bob")) {
        fprintf(stderr, "na_demo: could not create the two sim nodes\n");
        return 1;
    }
    /* The world exists once its first node does: keep its trace lines. */
    na_sim_trace_enable(true);
    printf("simulated fabric, seed %" PRIu64 "\n", na_sim_get_seed());
    NA_Addr_lookup(alice.cls, "sim://bob", &bob_addr);
    op2 = NA_Op_create(alice.cls, 0);

    printf("1. unexpected message alice -> bob, expected reply bob -> alice\n");
    NA_Msg_recv_unexpected(bob.cls, bob.ctx, on_recv_unexpected, NULL, rbuf,
                           sizeof(rbuf), NULL, bob.op);
    NA_Msg_recv_expected(alice.cls, alice.ctx, on_complete,
                         "alice got the reply", reply, sizeof(reply), NULL,
                         bob_addr, 0, 42, op2);
    NA_Msg_send_unexpected(alice.cls, alice.ctx, on_complete,
                           "alice's send completed", msg, strlen(msg) + 1, NULL,
                           bob_addr, 0, 7, alice.op);
    pending = 2;
    if (drive(&alice, &bob) != 0)
        goto out;
    printf("  bob read: \"%s\"\n", rbuf);
    NA_Msg_send_expected(bob.cls, bob.ctx, on_complete, "bob's reply completed",
                         "hi alice", 9, NULL, last_source, 0, 42, bob.op);
    pending = 2;
    if (drive(&alice, &bob) != 0)
        goto out;
    printf("  alice read: \"%s\"\n", reply);

    printf("2. RMA: bob exposes 64 bytes, alice puts then gets them\n");
    NA_Mem_handle_create(bob.cls, region, sizeof(region), NA_MEM_READWRITE,
                         &bob_mh);
    NA_Mem_register(bob.cls, bob_mh, NA_MEM_TYPE_HOST, 0);
    desc_size = NA_Mem_handle_get_serialize_size(bob.cls, bob_mh);
    NA_Mem_handle_serialize(bob.cls, desc, sizeof(desc), bob_mh);
    NA_Mem_handle_deserialize(alice.cls, &remote_mh, desc, desc_size);
    NA_Mem_handle_create(alice.cls, local, sizeof(local), NA_MEM_READWRITE,
                         &alice_mh);
    NA_Mem_register(alice.cls, alice_mh, NA_MEM_TYPE_HOST, 0);
    pending = 1;
    NA_Put(alice.cls, alice.ctx, on_complete, "alice's put completed", alice_mh,
           0, remote_mh, 0, 12, bob_addr, 0, alice.op);
    if (drive(&alice, &bob) != 0)
        goto out;
    printf("  bob's memory now holds: \"%s\"\n", region);
    NA_Mem_deregister(alice.cls, alice_mh);
    NA_Mem_handle_free(alice.cls, alice_mh);
    NA_Mem_handle_create(alice.cls, readback, sizeof(readback),
                         NA_MEM_READWRITE, &alice_mh);
    NA_Mem_register(alice.cls, alice_mh, NA_MEM_TYPE_HOST, 0);
    pending = 1;
    NA_Get(alice.cls, alice.ctx, on_complete, "alice's get completed", alice_mh,
           0, remote_mh, 0, 12, bob_addr, 0, alice.op);
    if (drive(&alice, &bob) != 0)
        goto out;
    printf("  alice read back: \"%s\"\n", readback);
    rc = strcmp(readback, "RMA payload") == 0 && strcmp(reply, "hi alice") == 0
             ? 0
             : 1;

    NA_Mem_deregister(alice.cls, alice_mh);
    NA_Mem_handle_free(alice.cls, alice_mh);
    NA_Mem_handle_free(alice.cls, remote_mh);
    NA_Mem_deregister(bob.cls, bob_mh);
    NA_Mem_handle_free(bob.cls, bob_mh);
out:
    printf("the fabric's event trace (time ns, seq, event, src, dst, "
           "bytes, tag):\n");
    fflush(stdout);
    na_sim_trace_dump(stdout);
    hash = na_sim_trace_hash();
    printf("virtual time %.3f us, %" PRIu64 " trace events, trace hash "
           "%016" PRIx64 "\n",
           na_sim_clock_now() / 1000.0, na_sim_trace_count(), hash);
    if (rc != 0)
        na_sim_print_replay_hint(stderr);
    if (last_source != NA_ADDR_NULL)
        NA_Addr_free(bob.cls, last_source);
    NA_Addr_free(alice.cls, bob_addr);
    NA_Op_destroy(alice.cls, op2);
    node_fini(&alice);
    node_fini(&bob);
    printf("%s\n", rc == 0 ? "na_demo: OK" : "na_demo: FAILED");
    fflush(stdout);
    return rc;
}
