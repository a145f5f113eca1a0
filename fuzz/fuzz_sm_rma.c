/*
 * Fuzz target for the shared-memory plugin's RMA records (RMA through the
 * rings, plugins/sm/na_sm_rma_msg.c): the input is written, as one
 * NA_SM_REC_RMA record, into the ring a connected peer class writes, and
 * the target class's progress reads it. The target has one 64 KiB region
 * registered (slot 0, generation 1) inside a larger buffer whose guard
 * bytes around it must never change, whatever the record says; a record
 * the target finds malformed ends the connection, and the next input
 * starts over with new classes.
 *
 * Input (native byte order, as both ends of a ring share a node): the
 * 64-byte record header then its data:
 *   u32 type (1 get request, 2 get data, 3 put data, 4 done) | i32 status |
 *   u64 token | u32 slot | u32 zero | u64 generation | u64 base | u64 total |
 *   u64 addr | u64 len
 * base and addr are offsets from the registered region's first byte (the
 * harness adds its address), so inputs reach inside and outside it.
 *
 * An input that starts with the u32 "ASST" (0x54535341) is instead one
 * NA_SM_REC_ASSIST record (plugins/sm/na_sm_assist.c) made of the bytes
 * after it: u32 seq | u32 nchunks | u64 chunk | u64 size | u64 remote |
 * u64 local | u64 generation | u32 slot | u32 put. remote is an offset
 * from the region, local one (modulo 64 KiB + 1: a requester names its
 * own memory) from a sink buffer of twice the region's size; the
 * harness sets the claim word to the record's sequence number, so a
 * record the target accepts is copied at once. The sink's guard bytes
 * must not change either.
 *
 * The records go through the plugin's own na_sm_ring_push, and the
 * harness aborts if the target left a record unread on a live
 * connection: a harness whose records are never read tests nothing.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/sm/na_sm_internal.h"
#include "na_fuzz_util.h"

#define REGION (64u * 1024u)
#define GUARD (16u * 1024u)
#define WIRE 64u
#define ASSIST_MAGIC 0x54535341u /* "ASST" */
#define SINK (2u * REGION)

static struct fuzz_world {
    na_class_t *srv, *cli;
    na_context_t *sctx, *cctx;
    na_addr_t at_srv;
    na_mem_handle_t h;
    uint8_t buf[GUARD + REGION + GUARD];
    uint8_t sink[SINK + GUARD]; /* the requester's memory, then a guard */
} w;

static void
world_down(void)
{
    if (w.h != NULL) {
        NA_Mem_deregister(w.srv, w.h);
        NA_Mem_handle_free(w.srv, w.h);
    }
    if (w.at_srv != NULL)
        NA_Addr_free(w.cli, w.at_srv);
    if (w.sctx != NULL)
        NA_Context_destroy(w.srv, w.sctx);
    if (w.cctx != NULL)
        NA_Context_destroy(w.cli, w.cctx);
    if (w.srv != NULL)
        NA_Finalize(w.srv);
    if (w.cli != NULL)
        NA_Finalize(w.cli);
    memset(&w, 0, offsetof(struct fuzz_world, buf));
}

static void
progress(void)
{
    for (int i = 0; i < 4; i++) {
        NA_Poll(w.srv, w.sctx, NULL);
        NA_Trigger(w.sctx, 64, NULL);
        NA_Poll(w.cli, w.cctx, NULL);
        NA_Trigger(w.cctx, 64, NULL);
    }
}

static void
sent_cb(const struct na_cb_info *info)
{
    *(int *) info->arg = 1;
}

/* Both ends hold a live connection with its rings mapped. A record the
 * target refused ends the connection, and the client finds that out only
 * when it next looks at its sockets. */
static bool
world_connected(void)
{
    struct na_sm_conn *c = LIST_FIRST(&na_sm_class(w.cli)->conns);
    struct na_sm_conn *s = LIST_FIRST(&na_sm_class(w.srv)->conns);

    return c != NULL && s != NULL && c->tx != NULL && !c->dead &&
           s->rx != NULL && !s->dead;
}

/* Two classes, a connection between them and a registered region. */
static struct na_sm_conn *
world_up(void)
{
    char name[256];
    size_t n = sizeof(name);
    na_addr_t self;
    na_op_id_t *op;
    na_op_id_t *rop;
    int sent = 0, received = 0;
    char rbuf[64];

    if (w.srv != NULL && world_connected())
        return LIST_FIRST(&na_sm_class(w.cli)->conns);
    world_down();
    setenv("QS_SM_RMA", "msg", 1);
    w.srv = NA_Initialize("na+sm", true);
    w.cli = NA_Initialize("na+sm", false);
    if (w.srv == NULL || w.cli == NULL) {
        static int said;
        if (!said++)
            fprintf(stderr, "fuzz_sm_rma: no na+sm class here: every input "
                            "is accepted\n");
        world_down();
        return NULL;
    }
    w.sctx = NA_Context_create(w.srv);
    w.cctx = NA_Context_create(w.cli);
    memset(w.buf, 0xa5, sizeof(w.buf));
    if (NA_Addr_self(w.srv, &self) != NA_SUCCESS ||
        NA_Addr_to_string(w.srv, name, &n, self) != NA_SUCCESS ||
        NA_Addr_lookup(w.cli, name, &w.at_srv) != NA_SUCCESS ||
        NA_Mem_handle_create(w.srv, w.buf + GUARD, REGION, NA_MEM_READWRITE,
                             &w.h) != NA_SUCCESS ||
        NA_Mem_register(w.srv, w.h, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS)
        abort();
    NA_Addr_free(w.srv, self);
    /* One message makes the connection. The target receives it: an
     * unexpected message nobody receives stays in the ring, and every
     * record behind it would wait there unread. */
    op = NA_Op_create(w.cli, 0);
    rop = NA_Op_create(w.srv, 0);
    if (NA_Msg_recv_unexpected(w.srv, w.sctx, sent_cb, &received, rbuf,
                               sizeof(rbuf), NULL, rop) != NA_SUCCESS ||
        NA_Msg_send_unexpected(w.cli, w.cctx, sent_cb, &sent, "x", 1, NULL,
                               w.at_srv, 0, 0, op) != NA_SUCCESS)
        abort();
    /* A busy pass looks at the sockets only now and then, so the
     * handshake takes many passes: wait until both ends hold it. */
    for (int i = 0; i < 1000000 && (!sent || !received || !world_connected());
         i++)
        progress();
    NA_Op_destroy(w.cli, op);
    NA_Op_destroy(w.srv, rop);
    if (!received || !world_connected())
        abort();
    return LIST_FIRST(&na_sm_class(w.cli)->conns);
}

/* One record through the plugin's own producer side (its lock held, as
 * there); false when the ring has no room. */
static bool
ring_push(struct na_sm_conn *conn, uint8_t kind, const uint8_t *p, size_t len)
{
    struct na_sm_class *cls = na_sm_class(w.cli);
    bool ok;

    pthread_mutex_lock(&cls->lock);
    ok = na_sm_ring_push(conn, kind, 0, 0, 0, p, len, NULL, 0);
    pthread_mutex_unlock(&cls->lock);
    return ok;
}

/* Offsets from the harness's buffers, made addresses. */
static void
rebase(uint8_t *rec, size_t size, size_t field, uint64_t base)
{
    uint64_t v;

    if (field + 8 <= size) {
        memcpy(&v, rec + field, 8);
        v += base;
        memcpy(rec + field, &v, 8);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t rec[WIRE + REGION];
    struct na_sm_conn *conn, *sconn;
    uint64_t base = (uint64_t) (uintptr_t) (w.buf + GUARD), tail, v;
    uint32_t magic = 0, seq = 0;
    uint8_t kind = NA_SM_REC_RMA;

    if (size > sizeof(rec) || size > NA_SM_MAX_MSG_SIZE)
        return 0;
    conn = world_up();
    if (conn == NULL)
        return 0;
    memset(w.sink + SINK, 0x5a, GUARD);
    memcpy(&magic, data, size >= 4 ? 4 : 0);
    if (size >= 4 && magic == ASSIST_MAGIC) {
        size -= 4;
        memcpy(rec, data + 4, size);
        rebase(rec, size, 24, base); /* remote */
        if (size >= 40) {            /* local: in the sink's first half */
            memcpy(&v, rec + 32, 8);
            v = v % (REGION + 1) + (uint64_t) (uintptr_t) w.sink;
            memcpy(rec + 32, &v, 8);
        }
        memcpy(&seq, rec, size >= 4 ? 4 : 0);
        atomic_store(&conn->tx->assist.claim, (uint64_t) seq << 32);
        kind = NA_SM_REC_ASSIST;
    } else {
        memcpy(rec, data, size);
        rebase(rec, size, 32, base); /* base, then addr */
        rebase(rec, size, 48, base);
    }
    if (!ring_push(conn, kind, rec, size))
        return 0;
    tail = atomic_load(&conn->tx->tail);
    progress();
    sconn = LIST_FIRST(&na_sm_class(w.srv)->conns);
    if (sconn != NULL && !sconn->dead && sconn->rx_head != tail)
        abort(); /* the record was never read: this harness tests nothing */
    for (size_t i = 0; i < GUARD; i++)
        if (w.buf[i] != 0xa5 || w.buf[GUARD + REGION + i] != 0xa5 ||
            w.sink[SINK + i] != 0x5a)
            abort(); /* a record wrote outside the registered region */
    return 0;
}
