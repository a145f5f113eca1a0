/*
 * A large RMA on na+sm copied by both peers (na_sm_assist.c).
 *
 * Two classes in this process: "helper" owns a registered region,
 * "requester" reads and writes it. The helper's side is driven by hand:
 * the test writes the claim word and an ASSIST record as a requester
 * would, and one progress pass of the helper must copy exactly the
 * chunks it may (all of them for a record it can check; none for a stale
 * sequence number, an unknown region or a region without the right
 * permission), and end the connection on a malformed record. Then whole
 * gets and puts of 8 MiB, with and without a thread that keeps the helper
 * progressing, must move every byte; chunks a helper claims and fails are
 * copied again by the requester; and a helper process that exits in the
 * middle of a get makes it fail instead of hang. The last two use the
 * test hooks of QS_SM_ASSIST_TEST (na_sm_assist.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"
#include "na_sm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define REGION (8u << 20)

struct world {
    na_class_t *hc, *rc; /* helper, requester */
    na_context_t *hctx, *rctx;
    na_addr_t at_helper;
    uint8_t *region, *sink;
    na_mem_handle_t hreg;   /* the helper's region */
    na_mem_handle_t remote; /* the same, as the requester knows it */
    na_mem_handle_t local;  /* the requester's sink */
    atomic_bool stop;
};

static void
flag_cb(const struct na_cb_info *info)
{
    *(int *) info->arg = info->ret == NA_SUCCESS ? 1 : -1;
}

static void
poll_both(struct world *w)
{
    NA_Poll(w->hc, w->hctx, NULL);
    NA_Trigger(w->hctx, 64, NULL);
    NA_Poll(w->rc, w->rctx, NULL);
    NA_Trigger(w->rctx, 64, NULL);
}

static struct na_sm_conn *
req_conn(struct world *w)
{
    return LIST_FIRST(&na_sm_class(w->rc)->conns);
}

static struct na_sm_conn *
helper_conn(struct world *w)
{
    return LIST_FIRST(&na_sm_class(w->hc)->conns);
}

static int
world_setup(void **state)
{
    struct world *w = calloc(1, sizeof(*w));
    char name[256], hbuf[64];
    size_t n = sizeof(name);
    na_addr_t self;
    na_op_id_t *op;
    int sent = 0;

    assert_non_null(w);
    w->hc = NA_Initialize("na+sm", true);
    w->rc = NA_Initialize("na+sm", false);
    assert_non_null(w->hc);
    assert_non_null(w->rc);
    w->hctx = NA_Context_create(w->hc);
    w->rctx = NA_Context_create(w->rc);
    w->region = malloc(REGION);
    w->sink = malloc(REGION);
    assert_non_null(w->region);
    assert_non_null(w->sink);
    assert_int_equal(NA_Addr_self(w->hc, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(w->hc, name, &n, self), NA_SUCCESS);
    NA_Addr_free(w->hc, self);
    assert_int_equal(NA_Addr_lookup(w->rc, name, &w->at_helper), NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_create(w->hc, w->region, REGION,
                                          NA_MEM_READWRITE, &w->hreg),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(w->hc, w->hreg, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_serialize(w->hc, hbuf, sizeof(hbuf), w->hreg),
        NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_deserialize(w->rc, &w->remote, hbuf, sizeof(hbuf)),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_create(w->rc, w->sink, REGION,
                                          NA_MEM_READWRITE, &w->local),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(w->rc, w->local, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    /* One message makes the connection; both ends must hold it. */
    op = NA_Op_create(w->rc, 0);
    assert_int_equal(NA_Msg_send_unexpected(w->rc, w->rctx, flag_cb, &sent, "x",
                                            1, NULL, w->at_helper, 0, 0, op),
                     NA_SUCCESS);
    for (int i = 0; i < 1000000 && (sent == 0 || helper_conn(w) == NULL ||
                                    req_conn(w) == NULL || !req_conn(w)->ready);
         i++)
        poll_both(w);
    NA_Op_destroy(w->rc, op);
    assert_int_equal(sent, 1);
    assert_non_null(helper_conn(w));
    *state = w;
    return 0;
}

static int
world_teardown(void **state)
{
    struct world *w = *state;

    NA_Mem_deregister(w->rc, w->local);
    NA_Mem_handle_free(w->rc, w->local);
    NA_Mem_handle_free(w->rc, w->remote);
    NA_Mem_deregister(w->hc, w->hreg);
    NA_Mem_handle_free(w->hc, w->hreg);
    NA_Addr_free(w->rc, w->at_helper);
    NA_Context_destroy(w->hc, w->hctx);
    NA_Context_destroy(w->rc, w->rctx);
    NA_Finalize(w->hc);
    NA_Finalize(w->rc);
    free(w->region);
    free(w->sink);
    free(w);
    return 0;
}

static void
fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t) (i * 131u + seed + (i >> 12));
}

/* The wire layout of na_sm_assist.c, as a requester writes it. */
struct assist_wire {
    uint32_t seq, nchunks;
    uint64_t chunk, size, remote, local, gen;
    uint32_t slot, put;
};

/* Write the claim word for `claim_seq` and a record as a requester would,
 * then run the helper's progress. */
static void
offer(struct world *w, uint32_t claim_seq, struct assist_wire rec)
{
    struct na_sm_conn *c = req_conn(w);
    struct na_sm_class *rcls = na_sm_class(w->rc);
    bool pushed;

    atomic_store(&c->tx->assist.done, 0);
    atomic_store(&c->tx->assist.failed, 0);
    atomic_store(&c->tx->assist.claim, (uint64_t) claim_seq << 32);
    pthread_mutex_lock(&rcls->lock);
    pushed = na_sm_ring_push(c, NA_SM_REC_ASSIST, 0, 0, 0, &rec, sizeof(rec),
                             NULL, 0);
    pthread_mutex_unlock(&rcls->lock);
    assert_true(pushed);
    for (int i = 0; i < 4; i++) {
        NA_Poll(w->hc, w->hctx, NULL);
        NA_Trigger(w->hctx, 64, NULL);
    }
}

static struct assist_wire
good_record(struct world *w, uint32_t seq)
{
    struct na_mem_handle *h = w->hreg;
    struct assist_wire rec = {.seq = seq,
                              .nchunks = 32,
                              .chunk = REGION / 32,
                              .size = REGION,
                              .remote = (uint64_t) (uintptr_t) w->region,
                              .local = (uint64_t) (uintptr_t) w->sink,
                              .gen = h->gen,
                              .slot = h->slot,
                              .put = 0};
    return rec;
}

/* A record the helper can check: it copies every chunk itself, since no
 * requester claims any. */
static void
test_helper_copies_all(void **state)
{
    struct world *w = *state;
    struct na_sm_assist *a = &req_conn(w)->tx->assist;

    fill(w->region, REGION, 1);
    memset(w->sink, 0, REGION);
    offer(w, 7, good_record(w, 7));
    assert_int_equal(atomic_load(&a->done), UINT64_C(0xffffffff));
    assert_int_equal(atomic_load(&a->failed), 0);
    assert_int_equal((uint32_t) atomic_load(&a->claim), 32);
    assert_memory_equal(w->sink, w->region, REGION);

    /* A put: the helper reads the requester's bytes into its region. */
    struct assist_wire rec = good_record(w, 8);
    rec.put = 1;
    fill(w->sink, REGION, 2);
    offer(w, 8, rec);
    assert_int_equal(atomic_load(&a->done), UINT64_C(0xffffffff));
    assert_memory_equal(w->sink, w->region, REGION);
    assert_false(helper_conn(w)->dead);
}

/* Well-formed records the helper must not act on: nothing is copied and
 * the connection stays. */
static void
test_helper_refuses(void **state)
{
    struct world *w = *state;
    struct na_sm_assist *a = &req_conn(w)->tx->assist;
    struct na_mem_handle *h = w->hreg;
    struct assist_wire rec;

    fill(w->region, REGION, 3);
    memset(w->sink, 0, REGION);
    /* A stale record: the claim word carries a later transfer. */
    offer(w, 10, good_record(w, 9));
    /* An unregistered generation, another slot, a range past the end. */
    rec = good_record(w, 11);
    rec.gen = h->gen + 1;
    offer(w, 11, rec);
    rec = good_record(w, 12);
    rec.slot = h->slot + 1;
    offer(w, 12, rec);
    rec = good_record(w, 13);
    rec.remote += 4096;
    offer(w, 13, rec);
    assert_int_equal(atomic_load(&a->done), 0);
    assert_int_equal(atomic_load(&a->failed), 0);
    for (size_t i = 0; i < REGION; i += 4096)
        assert_int_equal(w->sink[i], 0);
    assert_false(helper_conn(w)->dead);
}

/* Counts that do not describe the size end the connection. */
static void
test_helper_malformed(void **state)
{
    struct world *w = *state;
    struct assist_wire rec = good_record(w, 14);

    rec.nchunks = 65;
    offer(w, 14, rec);
    for (int i = 0; i < 1000000 && helper_conn(w) != NULL; i++)
        poll_both(w);
    assert_null(helper_conn(w));
}

static void *
helper_thread(void *arg)
{
    struct world *w = arg;

    while (!atomic_load(&w->stop))
        NA_Poll(w->hc, w->hctx, NULL);
    return NULL;
}

/* One RMA of the whole region through NA: every byte arrives. */
static void
rma_all(struct world *w, bool put, unsigned seed)
{
    na_op_id_t *op = NA_Op_create(w->rc, 0);
    int done = 0;
    na_return_t ret;

    fill(put ? w->sink : w->region, REGION, seed);
    memset(put ? w->region : w->sink, 0, REGION);
    if (put)
        ret = NA_Put(w->rc, w->rctx, flag_cb, &done, w->local, 0, w->remote, 0,
                     REGION, w->at_helper, 0, op);
    else
        ret = NA_Get(w->rc, w->rctx, flag_cb, &done, w->local, 0, w->remote, 0,
                     REGION, w->at_helper, 0, op);
    assert_int_equal(ret, NA_SUCCESS);
    for (int i = 0; i < 1000000 && done == 0; i++) {
        NA_Poll(w->rc, w->rctx, NULL);
        NA_Trigger(w->rctx, 64, NULL);
    }
    NA_Op_destroy(w->rc, op);
    assert_int_equal(done, 1);
    assert_memory_equal(w->sink, w->region, REGION);
}

/* Without and with a thread that keeps the helper progressing. */
static void
test_rma_moves_every_byte(void **state)
{
    struct world *w = *state;
    struct na_sm_class *rcls = na_sm_class(w->rc);
    pthread_t t;

    for (unsigned i = 0; i < 4; i++)
        rma_all(w, i % 2 == 1, 20 + i);
    /* Nobody progressed the helper during those posts. */
    assert_int_equal(atomic_load(&rcls->assist_chunks), 0);
    atomic_store(&w->stop, false);
    assert_int_equal(pthread_create(&t, NULL, helper_thread, w), 0);
    for (unsigned i = 0; i < 16; i++)
        rma_all(w, i % 2 == 1, 40 + i);
    atomic_store(&w->stop, true);
    pthread_join(t, NULL);
    printf("chunks the helper copied in 16 transfers of 8 MiB: %llu of %u\n",
           (unsigned long long) atomic_load(&rcls->assist_chunks), 16u * 32u);
}

/* The requester holds until the helper claims; the helper fails every
 * chunk it claims: the requester copies them again. Then the helper
 * copies: it always gets at least the chunk the requester waited for. */
static void
test_failed_chunks_copied_again(void **state)
{
    struct world *w = *state;
    struct na_sm_class *rcls = na_sm_class(w->rc);
    pthread_t t;

    rcls->assist_test = NA_SM_ASSIST_TEST_HOLD;
    na_sm_class(w->hc)->assist_test = NA_SM_ASSIST_TEST_FAIL;
    atomic_store(&w->stop, false);
    assert_int_equal(pthread_create(&t, NULL, helper_thread, w), 0);
    for (unsigned i = 0; i < 4; i++)
        rma_all(w, i % 2 == 1, 60 + i);
    assert_int_equal(atomic_load(&rcls->assist_chunks), 0);
    na_sm_class(w->hc)->assist_test = NA_SM_ASSIST_TEST_NONE;
    for (unsigned i = 0; i < 4; i++)
        rma_all(w, i % 2 == 1, 70 + i);
    atomic_store(&w->stop, true);
    pthread_join(t, NULL);
    assert_true(atomic_load(&rcls->assist_chunks) >= 4);
}

static void
poll_until(na_class_t *c, na_context_t *ctx, const int *flag)
{
    for (int i = 0; i < 10000000 && *flag == 0; i++) {
        NA_Poll(c, ctx, NULL);
        NA_Trigger(ctx, 64, NULL);
    }
}

/* The helper process of test_helper_dies: one region, its address and
 * handle to the parent, then progress until it exits in its first claim. */
static void
dying_helper(int fd)
{
    char msg[512] = {0};
    size_t n = 256;
    char *region = malloc(REGION);
    na_class_t *c;
    na_context_t *ctx;
    na_addr_t self;
    na_mem_handle_t h;
    na_op_id_t *rop;
    char rbuf[64];
    int received = 0;

    setenv("QS_SM_ASSIST_TEST", "die", 1);
    c = NA_Initialize("na+sm", true);
    if (c == NULL || region == NULL)
        _exit(2);
    ctx = NA_Context_create(c);
    memset(region, 7, REGION);
    rop = NA_Op_create(c, 0);
    if (NA_Addr_self(c, &self) != NA_SUCCESS ||
        NA_Addr_to_string(c, msg, &n, self) != NA_SUCCESS ||
        NA_Mem_handle_create(c, region, REGION, NA_MEM_READWRITE, &h) !=
            NA_SUCCESS ||
        NA_Mem_register(c, h, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS ||
        NA_Mem_handle_serialize(c, msg + 256, 64, h) != NA_SUCCESS ||
        NA_Msg_recv_unexpected(c, ctx, flag_cb, &received, rbuf, sizeof(rbuf),
                               NULL, rop) != NA_SUCCESS ||
        write(fd, msg, sizeof(msg)) != (ssize_t) sizeof(msg))
        _exit(2);
    for (;;) {
        NA_Poll(c, ctx, NULL);
        NA_Trigger(ctx, 64, NULL);
    }
}

/* A helper process that exits in the middle of a get: the get completes
 * with an error instead of waiting for it. */
static void
test_helper_dies(void **state)
{
    struct world w = {0};
    char msg[512];
    na_op_id_t *op;
    int fd, done = 0, sent = 0, status = 0;
    pid_t pid;

    (void) state;
    pid = na_peer_fork(dying_helper, &fd);
    assert_true(pid > 0);
    assert_true(na_peer_read_all(fd, msg, sizeof(msg)));
    close(fd);
    setenv("QS_SM_ASSIST_TEST", "hold", 1);
    w.rc = NA_Initialize("na+sm", false);
    unsetenv("QS_SM_ASSIST_TEST");
    assert_non_null(w.rc);
    w.rctx = NA_Context_create(w.rc);
    w.sink = malloc(REGION);
    assert_non_null(w.sink);
    assert_int_equal(NA_Addr_lookup(w.rc, msg, &w.at_helper), NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(w.rc, &w.remote, msg + 256,
                                               NA_SM_MEM_HANDLE_SIZE),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_create(w.rc, w.sink, REGION, NA_MEM_READWRITE, &w.local),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(w.rc, w.local, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    op = NA_Op_create(w.rc, 0);
    assert_int_equal(NA_Msg_send_unexpected(w.rc, w.rctx, flag_cb, &sent, "x",
                                            1, NULL, w.at_helper, 0, 0, op),
                     NA_SUCCESS);
    poll_until(w.rc, w.rctx, &sent);
    assert_int_equal(sent, 1);
    /* A small get first, so the kernel has taken a call on the connection
     * (a large RMA is offered to the helper only then). */
    assert_int_equal(NA_Get(w.rc, w.rctx, flag_cb, &done, w.local, 0, w.remote,
                            0, 4096, w.at_helper, 0, op),
                     NA_SUCCESS);
    poll_until(w.rc, w.rctx, &done);
    assert_int_equal(done, 1);
    assert_int_equal(w.sink[0], 7);
    done = 0;
    assert_int_equal(NA_Get(w.rc, w.rctx, flag_cb, &done, w.local, 0, w.remote,
                            0, REGION, w.at_helper, 0, op),
                     NA_SUCCESS);
    poll_until(w.rc, w.rctx, &done);
    assert_int_equal(done, -1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
    NA_Op_destroy(w.rc, op);
    NA_Mem_deregister(w.rc, w.local);
    NA_Mem_handle_free(w.rc, w.local);
    NA_Mem_handle_free(w.rc, w.remote);
    NA_Addr_free(w.rc, w.at_helper);
    NA_Context_destroy(w.rc, w.rctx);
    NA_Finalize(w.rc);
    free(w.sink);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_helper_copies_all, world_setup,
                                        world_teardown),
        cmocka_unit_test_setup_teardown(test_helper_refuses, world_setup,
                                        world_teardown),
        cmocka_unit_test_setup_teardown(test_helper_malformed, world_setup,
                                        world_teardown),
        cmocka_unit_test_setup_teardown(test_rma_moves_every_byte, world_setup,
                                        world_teardown),
        cmocka_unit_test_setup_teardown(test_failed_chunks_copied_again,
                                        world_setup, world_teardown),
        cmocka_unit_test(test_helper_dies),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
