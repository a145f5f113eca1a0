/*
 * Tests of the shared-memory plugin through the public NA API: names and
 * addresses, messages and their matching, RMA and its checks (forged,
 * stale, out-of-bounds and read-only handles), cancel, the wait fd, and a
 * peer process that exits or is killed. Two classes of this process talk
 * over the same sockets and rings as two processes would; the peer-death
 * cases fork a real peer. Waits are NA_Poll_wait with a bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_TIMEOUT_NS (20ull * 1000000000ull)

struct fixture {
    na_class_t *srv, *cli;
    na_context_t *sctx, *cctx;
    na_addr_t srv_addr; /* the server as the client looked it up */
};

/* Drive the server and the client in turn until *calls reaches want. */
static bool
progress_until(struct fixture *fx, const int *calls, int want)
{
    const struct na_peer peers[] = {{fx->srv, fx->sctx}, {fx->cli, fx->cctx}};

    return na_peers_progress(peers, 2, calls, want, 1, TEST_TIMEOUT_NS);
}

static void
addr_string(na_class_t *cls, na_addr_t addr, char *buf, size_t size)
{
    assert_int_equal(NA_Addr_to_string(cls, buf, &size, addr), NA_SUCCESS);
}

static int
setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    char name[128];
    na_addr_t self;

    fx->srv = NA_Initialize("na+sm", true);
    fx->cli = NA_Initialize("sm", false);
    assert_non_null(fx->srv);
    assert_non_null(fx->cli);
    fx->sctx = NA_Context_create(fx->srv);
    fx->cctx = NA_Context_create(fx->cli);
    assert_int_equal(NA_Addr_self(fx->srv, &self), NA_SUCCESS);
    addr_string(fx->srv, self, name, sizeof(name));
    NA_Addr_free(fx->srv, self);
    assert_int_equal(NA_Addr_lookup(fx->cli, name, &fx->srv_addr), NA_SUCCESS);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;

    NA_Addr_free(fx->cli, fx->srv_addr);
    assert_int_equal(NA_Context_destroy(fx->srv, fx->sctx), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(fx->cli, fx->cctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(fx->srv), NA_SUCCESS);
    assert_int_equal(NA_Finalize(fx->cli), NA_SUCCESS);
    free(fx);
    return 0;
}

static void
test_names(void **state)
{
    struct na_init_info ii = NA_INIT_INFO_INITIALIZER;
    char info[64], want[80], got[80];
    na_class_t *a, *b;
    na_addr_t self;

    (void) state;
    snprintf(info, sizeof(info), "sm://qs-test-%ld", (long) getpid());
    a = NA_Initialize(info, true);
    assert_non_null(a);
    assert_int_equal(NA_Addr_self(a, &self), NA_SUCCESS);
    addr_string(a, self, got, sizeof(got));
    snprintf(want, sizeof(want), "na+sm://qs-test-%ld", (long) getpid());
    assert_string_equal(got, want);
    NA_Addr_free(a, self);
    b = NA_Initialize(info, true); /* the name is taken */
    assert_null(b);
    assert_int_equal(NA_Finalize(a), NA_SUCCESS);
    b = NA_Initialize(info, true); /* and free again */
    assert_non_null(b);
    assert_int_equal(NA_Finalize(b), NA_SUCCESS);
    assert_null(NA_Initialize("sm://bad/name", true));
    ii.auth_key = "key";
    assert_null(NA_Initialize_opt("na+sm", true, &ii));
}

static void
test_addr(void **state)
{
    struct fixture *fx = *state;
    static const uint8_t junk[][8] = {
        {0x4d},                           /* short */
        {0x00, 0x00, 0x01, 'a'},          /* bad magic */
        {0x4d, 0x53, 0x07, 'a', 'b'},     /* length past the end */
        {0x4d, 0x53, 0x02, 'a', '/'},     /* bad character */
        {0x4d, 0x53, 0x00, 'a', 'b', 'c'} /* empty name */
    };
    static const size_t junk_len[] = {1, 4, 5, 5, 6};
    uint8_t buf[128];
    na_addr_t a;
    size_t n;

    n = NA_Addr_get_serialize_size(fx->cli, fx->srv_addr);
    assert_true(n <= sizeof(buf));
    assert_int_equal(NA_Addr_serialize(fx->cli, buf, n - 1, fx->srv_addr),
                     NA_OVERFLOW);
    assert_int_equal(NA_Addr_serialize(fx->cli, buf, n, fx->srv_addr),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_deserialize(fx->cli, &a, buf, n), NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->cli, a, fx->srv_addr));
    assert_false(NA_Addr_is_self(fx->cli, a));
    NA_Addr_free(fx->cli, a);
    for (size_t i = 0; i < sizeof(junk_len) / sizeof(junk_len[0]); i++)
        assert_int_not_equal(
            NA_Addr_deserialize(fx->cli, &a, junk[i], junk_len[i]), NA_SUCCESS);
    assert_int_not_equal(NA_Addr_lookup(fx->cli, "tcp://x", &a), NA_SUCCESS);
    assert_int_not_equal(NA_Addr_lookup(fx->cli, "na+sm://", &a), NA_SUCCESS);
}

static void
test_messages(void **state)
{
    struct fixture *fx = *state;
    na_op_id_t *s1 = NA_Op_create(fx->cli, 0), *r1 = NA_Op_create(fx->srv, 0);
    na_op_id_t *s2 = NA_Op_create(fx->srv, 0), *r2 = NA_Op_create(fx->cli, 0);
    char out[64] = "hello", in[64] = {0}, small[2];
    struct na_result rs = {0}, rr = {0}, xs = {0}, xr = {0};

    /* Unexpected, sent before the receive is posted (backlog path). */
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                            &rs, out, 6, NULL, fx->srv_addr, 0,
                                            42, s1),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rs.calls, 1));
    assert_int_equal(rs.ret, NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb,
                                            &rr, in, sizeof(in), NULL, r1),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rr.calls, 1));
    assert_int_equal(rr.ret, NA_SUCCESS);
    assert_int_equal(rr.size, 6);
    assert_int_equal(rr.tag, 42);
    assert_string_equal(in, "hello");

    /* Expected reply to the reported source, posted first. */
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, na_record_cb, &xr,
                                          in, sizeof(in), NULL, fx->srv_addr, 0,
                                          7, r2),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, na_record_cb, &xs,
                                          "world", 6, NULL, rr.source, 0, 6,
                                          s2),
                     NA_SUCCESS); /* another tag: must not match */
    assert_true(progress_until(fx, &xs.calls, 1));
    assert_int_equal(xr.calls, 0);
    xs.calls = 0;
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, na_record_cb, &xs,
                                          "world", 6, NULL, rr.source, 0, 7,
                                          s2),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &xr.calls, 1));
    assert_int_equal(xr.ret, NA_SUCCESS);
    assert_int_equal(xr.size, 6);
    assert_string_equal(in, "world");

    /* The first reply (tag 6) still waits; a short buffer: NA_MSGSIZE. */
    xr.calls = 0;
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, na_record_cb, &xr,
                                          small, sizeof(small), NULL,
                                          fx->srv_addr, 0, 6, r2),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &xr.calls, 1));
    assert_int_equal(xr.ret, NA_MSGSIZE);

    assert_true(progress_until(fx, &xs.calls, 1));
    NA_Addr_free(fx->srv, rr.source);
    NA_Op_destroy(fx->cli, s1);
    NA_Op_destroy(fx->srv, r1);
    NA_Op_destroy(fx->srv, s2);
    NA_Op_destroy(fx->cli, r2);
}

/* A stream of 2 KiB-class messages, up to 16 at a time (batches of 15, 16
 * and 16), each batch drained by one server pass, the way a busy service
 * with 16 RPCs in flight runs: a send must find room in the ring at once
 * (its completion is queued when it is posted), never wait for the
 * receiver to show its head. The ring's window once wrapped as soon as the
 * unread bytes fit, leaving the sender less room than one batch: it then
 * waited for a wake-up through the socket. */
static void
test_window_no_wait(void **state)
{
    enum { BATCH = 16, ROUNDS = 63, LEN = 2100 };
    struct fixture *fx = *state;
    na_op_id_t *sops[BATCH], *rops[BATCH];
    struct na_result rs[BATCH], rr[BATCH];
    static char out[LEN], in[BATCH][LEN];
    int waited = 0, sent = 0;

    memset(out, 'w', sizeof(out));
    for (int i = 0; i < BATCH; i++) {
        sops[i] = NA_Op_create(fx->cli, 0);
        rops[i] = NA_Op_create(fx->srv, 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        int batch = round % 3 == 0 ? BATCH - 1 : BATCH, done = 0, got = 0;
        unsigned int n = 0;

        memset(rs, 0, sizeof(rs));
        memset(rr, 0, sizeof(rr));
        for (int i = 0; i < batch; i++)
            assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx,
                                                    na_record_cb, &rr[i], in[i],
                                                    LEN, NULL, rops[i]),
                             NA_SUCCESS);
        for (int i = 0; i < batch; i++)
            assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx,
                                                    na_record_cb, &rs[i], out,
                                                    LEN, NULL, fx->srv_addr, 0,
                                                    (na_tag_t) i, sops[i]),
                             NA_SUCCESS);
        /* No progress on the client: only sends already in the ring have
         * completed. */
        while (NA_Trigger(fx->cctx, BATCH, &n) == NA_SUCCESS && n > 0)
            ;
        for (int i = 0; i < batch; i++)
            done += rs[i].calls;
        waited += batch - done;
        sent += batch;
        /* Server passes until it has read what was sent: one, once the
         * connection is up; the head it read to is shown at the next. */
        for (int i = 0; i < batch && got < done; i++) {
            got = 0;
            NA_Poll(fx->srv, fx->sctx, &n);
            while (NA_Trigger(fx->sctx, BATCH, &n) == NA_SUCCESS && n > 0)
                ;
            for (int j = 0; j < batch; j++)
                got += rr[j].calls;
        }
        for (int i = 0; i < batch; i++) {
            assert_true(progress_until(fx, &rs[i].calls, 1));
            assert_true(progress_until(fx, &rr[i].calls, 1));
        }
        for (int i = 0; i < batch; i++) {
            assert_int_equal(rr[i].ret, NA_SUCCESS);
            assert_int_equal(rr[i].size, LEN);
            assert_int_equal(rr[i].tag, i);
            NA_Addr_free(fx->srv, rr[i].source);
        }
    }
    for (int i = 0; i < BATCH; i++) {
        NA_Op_destroy(fx->cli, sops[i]);
        NA_Op_destroy(fx->srv, rops[i]);
    }
    print_message("sends that waited for room: %d of %d\n", waited, sent);
    assert_int_equal(waited, 0);
}

/* One RMA from the client on the server's region described by `bytes`. */
static na_return_t
rma_once(struct fixture *fx, bool put, const uint8_t *bytes, size_t n,
         char *local, size_t len, size_t off)
{
    na_mem_handle_t lh, rh;
    na_op_id_t *op = NA_Op_create(fx->cli, 0);
    struct na_result r = {0};
    na_return_t ret;

    assert_int_equal(
        NA_Mem_handle_create(fx->cli, local, len, NA_MEM_READWRITE, &lh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(fx->cli, &rh, bytes, n),
                     NA_SUCCESS);
    ret = (put ? NA_Put : NA_Get)(fx->cli, fx->cctx, na_record_cb, &r, lh, 0,
                                  rh, off, len, fx->srv_addr, 0, op);
    if (ret == NA_SUCCESS) {
        assert_true(progress_until(fx, &r.calls, 1));
        ret = r.ret;
    }
    NA_Mem_handle_free(fx->cli, rh);
    NA_Mem_handle_free(fx->cli, lh);
    NA_Op_destroy(fx->cli, op);
    return ret;
}

static void
test_rma(void **state)
{
    struct fixture *fx = *state;
    char region[256], local[64];
    uint8_t bytes[64], forged[64];
    na_mem_handle_t h, ro;
    size_t n;

    memset(region, 'r', sizeof(region));
    assert_int_equal(NA_Mem_handle_create(fx->srv, region, sizeof(region),
                                          NA_MEM_READWRITE, &h),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv, h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    n = NA_Mem_handle_get_serialize_size(fx->srv, h);
    assert_true(n <= sizeof(bytes));
    assert_int_equal(NA_Mem_handle_serialize(fx->srv, bytes, n, h), NA_SUCCESS);

    memset(local, 'l', sizeof(local));
    assert_int_equal(rma_once(fx, true, bytes, n, local, 64, 100), NA_SUCCESS);
    assert_memory_equal(region + 100, local, 64);
    assert_int_equal(region[99], 'r');
    assert_int_equal(region[164], 'r');
    memset(region, 'x', 64);
    assert_int_equal(rma_once(fx, false, bytes, n, local, 64, 0), NA_SUCCESS);
    assert_memory_equal(local, region, 64);

    /* Out of the handle's bounds: refused, nothing touched. */
    assert_int_not_equal(rma_once(fx, true, bytes, n, local, 64, 200),
                         NA_SUCCESS);
    assert_int_equal(region[255], 'r');

    /* A handle claiming more than was registered: NA_ACCESS. */
    memcpy(forged, bytes, n);
    forged[32] = 0xff; /* length low byte: 255 -> 511 */
    forged[33] = 0x01;
    memset(local, 'f', sizeof(local));
    assert_int_equal(rma_once(fx, true, forged, n, local, 64, 300), NA_ACCESS);
    /* A wrong generation: NA_ACCESS. */
    memcpy(forged, bytes, n);
    forged[16] ^= 0x5a;
    assert_int_equal(rma_once(fx, true, forged, n, local, 64, 0), NA_ACCESS);
    assert_int_equal(region[0], 'x');
    /* One byte more than registered, read at the very end: NA_ACCESS. */
    memcpy(forged, bytes, n);
    forged[32]++; /* length 256 -> 257 */
    assert_int_equal(rma_once(fx, false, forged, n, local, 64, 193), NA_ACCESS);

    /* Stale: deregistered after it was sent. */
    assert_int_equal(NA_Mem_deregister(fx->srv, h), NA_SUCCESS);
    assert_int_equal(rma_once(fx, true, bytes, n, local, 64, 0), NA_ACCESS);
    assert_int_equal(region[0], 'x');
    NA_Mem_handle_free(fx->srv, h);

    /* Read-only region: a put is refused, a get works. */
    assert_int_equal(NA_Mem_handle_create(fx->srv, region, sizeof(region),
                                          NA_MEM_READ_ONLY, &ro),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv, ro, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_serialize(fx->srv, bytes, n, ro),
                     NA_SUCCESS);
    assert_int_equal(rma_once(fx, true, bytes, n, local, 64, 0), NA_PERMISSION);
    assert_int_equal(region[0], 'x');
    assert_int_equal(rma_once(fx, false, bytes, n, local, 64, 0), NA_SUCCESS);
    /* Forging the flags does not help: the table says read-only. */
    bytes[4] = NA_MEM_READWRITE;
    assert_int_equal(rma_once(fx, true, bytes, n, local, 64, 0), NA_PERMISSION);
    assert_int_equal(region[0], 'x');
    NA_Mem_handle_free(fx->srv, ro);

    /* Junk handles. */
    assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &h, bytes, 8),
                         NA_SUCCESS);
    memset(forged, 0, sizeof(forged));
    assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &h, forged, n),
                         NA_SUCCESS);
}

static void
test_cancel(void **state)
{
    struct fixture *fx = *state;
    na_op_id_t *op = NA_Op_create(fx->srv, 0);
    struct na_result r = {0};
    char buf[64];

    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, op), NA_SUCCESS); /* idle */
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb, &r,
                                            buf, sizeof(buf), NULL, op),
                     NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, op), NA_BUSY);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, op), NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_int_equal(r.ret, NA_CANCELED);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, op), NA_SUCCESS); /* done */
    r.calls = 0;
    assert_int_equal(NA_Msg_recv_expected(fx->srv, fx->sctx, na_record_cb, &r,
                                          buf, sizeof(buf), NULL, fx->srv_addr,
                                          0, 1, op),
                     NA_SUCCESS);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, op), NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_int_equal(r.ret, NA_CANCELED);
    assert_int_equal(NA_Op_destroy(fx->srv, op), NA_SUCCESS);
}

static void
test_unreachable(void **state)
{
    struct fixture *fx = *state;
    na_op_id_t *op = NA_Op_create(fx->cli, 0);
    struct na_result r = {0};
    na_addr_t nobody;

    assert_int_equal(
        NA_Addr_lookup(fx->cli, "sm://nobody-serves-this", &nobody),
        NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb, &r,
                                            "x", 1, NULL, nobody, 0, 1, op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_int_equal(r.ret, NA_HOSTUNREACH);
    NA_Addr_free(fx->cli, nobody);
    NA_Op_destroy(fx->cli, op);
}

struct waiter {
    struct fixture *fx;
    struct na_result r;
    na_return_t ret;
};

static void *
waiter_main(void *arg)
{
    struct waiter *w = arg;

    /* One long wait: it must end when the message lands, not at 20 s. */
    w->ret = NA_Poll_wait(w->fx->srv, w->fx->sctx, 20000, NULL);
    return NULL;
}

static void
test_wait_fd(void **state)
{
    struct fixture *fx = *state;
    na_op_id_t *r = NA_Op_create(fx->srv, 0), *s = NA_Op_create(fx->cli, 0);
    struct waiter w = {.fx = fx};
    struct na_result rs = {0};
    struct rusage u0, u1;
    pthread_t t;
    char buf[16];
    uint64_t t0, cpu_us;

    assert_true(NA_Poll_get_fd(fx->srv, fx->sctx) >= 0);
    /* Idle: a 300 ms wait costs (almost) no CPU. */
    getrusage(RUSAGE_THREAD, &u0);
    assert_int_equal(NA_Poll_wait(fx->srv, fx->sctx, 300, NULL), NA_TIMEOUT);
    getrusage(RUSAGE_THREAD, &u1);
    cpu_us = (uint64_t) ((u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) * 1000000 +
                         (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) +
                         (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1000000 +
                         (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec));
    assert_true(cpu_us < 60000);

    /* A sleeper is woken by a message from another class. */
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb,
                                            &w.r, buf, sizeof(buf), NULL, r),
                     NA_SUCCESS);
    t0 = NA_Clock_now(fx->cli);
    pthread_create(&t, NULL, waiter_main, &w);
    NA_Poll_wait(fx->cli, fx->cctx, 50, NULL); /* let it fall asleep */
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                            &rs, "wake", 5, NULL, fx->srv_addr,
                                            0, 3, s),
                     NA_SUCCESS);
    pthread_join(t, NULL);
    assert_int_equal(w.ret, NA_SUCCESS);
    assert_true(NA_Clock_now(fx->cli) - t0 < 10ull * 1000000000ull);
    NA_Trigger(fx->sctx, 64, NULL);
    assert_int_equal(w.r.calls, 1);
    assert_string_equal(buf, "wake");
    assert_true(progress_until(fx, &rs.calls, 1));
    NA_Addr_free(fx->srv, w.r.source);
    NA_Op_destroy(fx->srv, r);
    NA_Op_destroy(fx->cli, s);
}

/* A peer process: serves `name`, says so on `fd`, waits for one message,
 * then exits without finalizing (or is killed before). */
static void
peer_main(const char *name, int fd)
{
    na_class_t *c = NA_Initialize(name, true);
    na_context_t *ctx = c ? NA_Context_create(c) : NULL;
    na_op_id_t *op = c ? NA_Op_create(c, 0) : NULL;
    struct na_result r = {0};
    char buf[64];

    if (ctx == NULL || op == NULL)
        _exit(2);
    NA_Msg_recv_unexpected(c, ctx, na_record_cb, &r, buf, sizeof(buf), NULL,
                           op);
    if (write(fd, "r", 1) != 1)
        _exit(3);
    while (r.calls == 0) {
        NA_Poll_wait(c, ctx, 1000, NULL);
        NA_Trigger(ctx, 64, NULL);
    }
    _exit(0);
}

static void
peer_death(struct fixture *fx, bool kill_it)
{
    char info[64];
    na_op_id_t *s = NA_Op_create(fx->cli, 0), *r = NA_Op_create(fx->cli, 0);
    struct na_result rs = {0}, rr = {0}, rg = {0};
    int fds[2], status;
    na_addr_t peer;
    char c, buf[16];
    pid_t pid;

    snprintf(info, sizeof(info), "sm://qs-peer-%ld-%d", (long) getpid(),
             kill_it);
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        peer_main(info, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    assert_int_equal(NA_Addr_lookup(fx->cli, info, &peer), NA_SUCCESS);
    /* A reply that will never come, posted before the request. */
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, na_record_cb, &rr,
                                          buf, sizeof(buf), NULL, peer, 0, 9,
                                          r),
                     NA_SUCCESS);
    if (kill_it) {
        /* Connected (by a message the peer reads), then killed. */
        assert_int_equal(NA_Msg_send_expected(fx->cli, fx->cctx, na_record_cb,
                                              &rs, "x", 1, NULL, peer, 0, 1, s),
                         NA_SUCCESS);
        assert_true(progress_until(fx, &rs.calls, 1));
        kill(pid, SIGKILL);
    } else {
        assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                                &rs, "bye", 4, NULL, peer, 0, 1,
                                                s),
                         NA_SUCCESS);
        assert_true(progress_until(fx, &rs.calls, 1));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    /* No deadline of ours: the end of the peer's socket fails the wait. */
    assert_true(progress_until(fx, &rr.calls, 1));
    assert_int_equal(rr.ret, NA_HOSTUNREACH);
    /* And anything new to it fails too. */
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                            &rg, "x", 1, NULL, peer, 0, 1, s),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rg.calls, 1));
    assert_int_equal(rg.ret, NA_HOSTUNREACH);

    /* The name served again by a new process: reachable again. */
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        peer_main(info, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    rr.calls = rg.calls = 0;
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, na_record_cb, &rr,
                                          buf, sizeof(buf), NULL, peer, 0, 9,
                                          r),
                     NA_SUCCESS);
    for (int i = 0; i < 100; i++) {
        NA_Poll(fx->cli, fx->cctx, NULL);
        NA_Trigger(fx->cctx, 64, NULL);
    }
    assert_int_equal(rr.calls, 0); /* not failed: the peer is back */
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                            &rg, "hi", 3, NULL, peer, 0, 1, s),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rg.calls, 1));
    assert_int_equal(rg.ret, NA_SUCCESS);
    assert_int_equal(waitpid(pid, &status, 0), pid); /* it got the message */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(progress_until(fx, &rr.calls, 1));
    assert_int_equal(rr.ret, NA_HOSTUNREACH);
    NA_Addr_free(fx->cli, peer);
    NA_Op_destroy(fx->cli, s);
    NA_Op_destroy(fx->cli, r);
}

static void
test_peer_exits(void **state)
{
    peer_death(*state, false);
}

static void
test_peer_killed(void **state)
{
    peer_death(*state, true);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_addr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_no_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rma, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_exits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_killed, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
