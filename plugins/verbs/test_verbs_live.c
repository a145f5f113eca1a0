/*
 * Tests of the verbs plugin that need a device: real verbs traffic between
 * two classes in this process (and a child process for a peer that is
 * killed), through the public NA API. Without a device each case is
 * skipped with the reason printed; main is in test_verbs.c.
 */
#include "test_verbs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_TIMEOUT_MS 20000

struct peer {
    na_class_t *cls;
    na_context_t *ctx;
};

struct result {
    int count;
    na_return_t ret;
    na_cb_type_t type;
    size_t size;
    na_addr_t source;
    na_tag_t tag;
};

static void
record_cb(const struct na_cb_info *info)
{
    struct result *r = info->arg;

    r->count++;
    r->ret = info->ret;
    r->type = info->type;
    if (info->type == NA_CB_RECV_UNEXPECTED) {
        r->size = info->info.recv_unexpected.actual_buf_size;
        r->source = info->info.recv_unexpected.source;
        r->tag = info->info.recv_unexpected.tag;
    } else if (info->type == NA_CB_RECV_EXPECTED) {
        r->size = info->info.recv_expected.actual_buf_size;
    }
}

static void
peer_open(struct peer *p, bool listen)
{
    p->cls = NA_Initialize(test_info(), listen);
    if (p->cls == NULL)
        fail_msg("NA_Initialize(\"%s\") failed with a device present",
                 test_info());
    assert_string_equal(NA_Get_class_name(p->cls), "verbs");
    assert_string_equal(NA_Get_class_protocol(p->cls), "verbs");
    p->ctx = NA_Context_create(p->cls);
    assert_non_null(p->ctx);
}

static void
peer_close(struct peer *p)
{
    assert_int_equal(NA_Context_destroy(p->cls, p->ctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p->cls), NA_SUCCESS);
}

/* Progress both peers until *count reaches want, or fail on timeout. */
static void
progress_until(struct peer *a, struct peer *b, const int *count, int want)
{
    uint64_t deadline = now_ms() + TEST_TIMEOUT_MS;

    while (*count < want) {
        unsigned int n;

        if (now_ms() > deadline)
            fail_msg("timed out waiting for %d completion(s), have %d", want,
                     *count);
        (void) NA_Poll(a->cls, a->ctx, &n);
        (void) NA_Trigger(a->ctx, 64, NULL);
        if (b != NULL) {
            (void) NA_Poll(b->cls, b->ctx, &n);
            (void) NA_Trigger(b->ctx, 64, NULL);
        }
    }
}

static na_addr_t
lookup_peer(struct peer *from, struct peer *to)
{
    char name[128];
    size_t size = sizeof(name);
    na_addr_t self, addr;

    assert_int_equal(NA_Addr_self(to->cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(to->cls, name, &size, self), NA_SUCCESS);
    NA_Addr_free(to->cls, self);
    assert_int_equal(NA_Addr_lookup(from->cls, name, &addr), NA_SUCCESS);
    return addr;
}

void
test_addr_roundtrip_live(void **state)
{
    struct peer s;
    char name[128], name2[128];
    size_t size = sizeof(name), size2 = sizeof(name2);
    uint8_t ser[64];
    na_addr_t self, looked, deser;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    assert_int_equal(NA_Addr_self(s.cls, &self), NA_SUCCESS);
    assert_true(NA_Addr_is_self(s.cls, self));
    assert_int_equal(NA_Addr_to_string(s.cls, name, &size, self), NA_SUCCESS);
    print_message("self address: %s\n", name);
    /* Port 0 was replaced by the port actually bound. */
    {
        struct na_verbs_addr_parts parts;

        assert_int_equal(na_verbs_addr_parse(name, &parts), NA_SUCCESS);
        assert_true(parts.has_port && parts.port != 0);
    }
    assert_int_equal(NA_Addr_lookup(s.cls, name, &looked), NA_SUCCESS);
    assert_true(NA_Addr_cmp(s.cls, self, looked));
    assert_int_equal(NA_Addr_to_string(s.cls, name2, &size2, looked),
                     NA_SUCCESS);
    assert_string_equal(name, name2);
    size = 4;
    assert_int_equal(NA_Addr_to_string(s.cls, name2, &size, self), NA_OVERFLOW);
    assert_int_equal(size, strlen(name) + 1);

    assert_true(NA_Addr_get_serialize_size(s.cls, self) <= sizeof(ser));
    assert_int_equal(NA_Addr_serialize(s.cls, ser, sizeof(ser), self),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Addr_deserialize(s.cls, &deser, ser,
                            NA_Addr_get_serialize_size(s.cls, self)),
        NA_SUCCESS);
    assert_true(NA_Addr_cmp(s.cls, self, deser));
    assert_int_not_equal(NA_Addr_deserialize(s.cls, &deser, ser, 3),
                         NA_SUCCESS);
    NA_Addr_free(s.cls, deser);
    NA_Addr_free(s.cls, looked);
    NA_Addr_free(s.cls, self);
    peer_close(&s);
}

void
test_unexpected_expected(void **state)
{
    struct peer s, c;
    struct result r_srv = {0}, r_cli = {0}, r_send = {0}, r_resp = {0};
    char req[] = "request over verbs", resp[] = "response with tag 7";
    char sbuf[4096], cbuf[4096];
    na_op_id_t *s_op, *s_send, *c_recv, *c_send;
    na_addr_t srv;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    peer_open(&c, false);
    assert_int_equal(NA_Msg_get_max_unexpected_size(s.cls), 4096);
    assert_int_equal(NA_Msg_get_max_expected_size(s.cls), 4096);
    srv = lookup_peer(&c, &s);
    s_op = NA_Op_create(s.cls, 0);
    s_send = NA_Op_create(s.cls, 0);
    c_recv = NA_Op_create(c.cls, 0);
    c_send = NA_Op_create(c.cls, 0);

    assert_int_equal(NA_Msg_recv_unexpected(s.cls, s.ctx, record_cb, &r_srv,
                                            sbuf, sizeof(sbuf), NULL, s_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, record_cb, &r_cli, cbuf,
                                          sizeof(cbuf), NULL, srv, 0, 7,
                                          c_recv),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, record_cb, &r_send,
                                            req, sizeof(req), NULL, srv, 0, 42,
                                            c_send),
                     NA_SUCCESS);
    /* Oversized posts are refused up front. */
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, record_cb, &r_send,
                                            sbuf, 4097, NULL, srv, 0, 1,
                                            c_recv),
                     NA_MSGSIZE);
    progress_until(&s, &c, &r_srv.count, 1);
    progress_until(&s, &c, &r_send.count, 1);
    assert_int_equal(r_send.ret, NA_SUCCESS);
    assert_int_equal(r_srv.ret, NA_SUCCESS);
    assert_int_equal(r_srv.size, sizeof(req));
    assert_int_equal(r_srv.tag, 42);
    assert_memory_equal(sbuf, req, sizeof(req));
    assert_non_null(r_srv.source);

    /* The source learnt from the connection is where the answer goes. */
    assert_int_equal(NA_Msg_send_expected(s.cls, s.ctx, record_cb, &r_resp,
                                          resp, sizeof(resp), NULL,
                                          r_srv.source, 0, 7, s_send),
                     NA_SUCCESS);
    progress_until(&s, &c, &r_cli.count, 1);
    progress_until(&s, &c, &r_resp.count, 1);
    assert_int_equal(r_cli.ret, NA_SUCCESS);
    assert_int_equal(r_cli.size, sizeof(resp));
    assert_memory_equal(cbuf, resp, sizeof(resp));
    assert_int_equal(r_resp.ret, NA_SUCCESS);
    /* Exactly once. */
    progress_until(&s, &c, &r_cli.count, 1);
    assert_int_equal(r_cli.count, 1);
    assert_int_equal(r_srv.count, 1);

    NA_Addr_free(s.cls, r_srv.source);
    NA_Addr_free(c.cls, srv);
    NA_Op_destroy(s.cls, s_op);
    NA_Op_destroy(s.cls, s_send);
    NA_Op_destroy(c.cls, c_recv);
    NA_Op_destroy(c.cls, c_send);
    peer_close(&c);
    peer_close(&s);
}

/* Expected messages that arrive before their receives are posted, in a
 * different order from the receives, still match by tag. Many more
 * messages than credits also exercise the credit return. */
void
test_tag_matching_and_credits(void **state)
{
    enum { N = 100 };
    struct peer s, c;
    struct result r_send[N], r_recv[N];
    uint32_t out[N], in[N];
    na_op_id_t *send_op[N], *recv_op[N];
    na_addr_t srv, cli;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    peer_open(&c, true);
    srv = lookup_peer(&c, &s);
    cli = lookup_peer(&s, &c);
    memset(r_send, 0, sizeof(r_send));
    memset(r_recv, 0, sizeof(r_recv));
    for (int i = 0; i < N; i++) {
        send_op[i] = NA_Op_create(c.cls, 0);
        recv_op[i] = NA_Op_create(s.cls, 0);
        out[i] = 0xa5000000u + (uint32_t) i;
        in[i] = 0;
    }
    /* Tag i carries out[i]; send them all first (early arrivals). */
    for (int i = 0; i < N; i++)
        assert_int_equal(NA_Msg_send_expected(c.cls, c.ctx, record_cb,
                                              &r_send[i], &out[i],
                                              sizeof(out[i]), NULL, srv, 0,
                                              (na_tag_t) i, send_op[i]),
                         NA_SUCCESS);
    for (int i = 0; i < N; i++)
        progress_until(&c, &s, &r_send[i].count, 1);
    /* Receive in reverse tag order. */
    for (int i = N - 1; i >= 0; i--)
        assert_int_equal(NA_Msg_recv_expected(s.cls, s.ctx, record_cb,
                                              &r_recv[i], &in[i], sizeof(in[i]),
                                              NULL, cli, 0, (na_tag_t) i,
                                              recv_op[i]),
                         NA_SUCCESS);
    for (int i = 0; i < N; i++) {
        progress_until(&c, &s, &r_recv[i].count, 1);
        assert_int_equal(r_send[i].ret, NA_SUCCESS);
        assert_int_equal(r_recv[i].ret, NA_SUCCESS);
        assert_int_equal(r_recv[i].size, sizeof(uint32_t));
        assert_int_equal(in[i], out[i]);
    }
    /* A receive for a tag nobody sent stays pending, then cancels. */
    assert_int_equal(NA_Msg_recv_expected(s.cls, s.ctx, record_cb, &r_recv[0],
                                          &in[0], sizeof(in[0]), NULL, cli, 0,
                                          999999, recv_op[0]),
                     NA_SUCCESS);
    r_recv[0].count = 0;
    assert_int_equal(NA_Cancel(s.cls, s.ctx, recv_op[0]), NA_SUCCESS);
    progress_until(&c, &s, &r_recv[0].count, 1);
    assert_int_equal(r_recv[0].ret, NA_CANCELED);

    for (int i = 0; i < N; i++) {
        assert_int_equal(NA_Op_destroy(c.cls, send_op[i]), NA_SUCCESS);
        assert_int_equal(NA_Op_destroy(s.cls, recv_op[i]), NA_SUCCESS);
    }
    NA_Addr_free(c.cls, srv);
    NA_Addr_free(s.cls, cli);
    peer_close(&c);
    peer_close(&s);
}

void
test_put_get(void **state)
{
    enum { LEN = 256 * 1024 };
    struct peer s, c;
    struct result r_put = {0}, r_get = {0}, r_bad = {0};
    uint8_t *cli_mem, *srv_mem;
    uint8_t ser[64];
    na_mem_handle_t cli_h, srv_h, remote_h, ro_h;
    na_op_id_t *op;
    na_addr_t cli;
    size_t ser_size;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    cli_mem = malloc(LEN);
    srv_mem = malloc(LEN);
    assert_non_null(cli_mem);
    assert_non_null(srv_mem);
    peer_open(&s, true);
    peer_open(&c, true);
    cli = lookup_peer(&s, &c);
    for (size_t i = 0; i < LEN; i++) {
        cli_mem[i] = (uint8_t) (i * 7 + 1);
        srv_mem[i] = (uint8_t) (i * 13 + 5);
    }
    /* The client exposes its buffer; the server does the RMA. */
    assert_int_equal(
        NA_Mem_handle_create(c.cls, cli_mem, LEN, NA_MEM_READWRITE, &cli_h),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c.cls, cli_h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    ser_size = NA_Mem_handle_get_serialize_size(c.cls, cli_h);
    assert_true(ser_size <= sizeof(ser));
    assert_int_equal(NA_Mem_handle_serialize(c.cls, ser, sizeof(ser), cli_h),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(s.cls, &remote_h, ser, ser_size),
                     NA_SUCCESS);
    ser[0] ^= 0xff;
    assert_int_not_equal(NA_Mem_handle_deserialize(s.cls, &ro_h, ser, ser_size),
                         NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_create(s.cls, srv_mem, LEN, NA_MEM_READWRITE, &srv_h),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(s.cls, srv_h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    op = NA_Op_create(s.cls, 0);

    /* Put the server's first half into the client's second half. */
    assert_int_equal(NA_Put(s.cls, s.ctx, record_cb, &r_put, srv_h, 0, remote_h,
                            LEN / 2, LEN / 2, cli, 0, op),
                     NA_SUCCESS);
    progress_until(&s, &c, &r_put.count, 1);
    assert_int_equal(r_put.ret, NA_SUCCESS);
    assert_memory_equal(cli_mem + LEN / 2, srv_mem, LEN / 2);
    for (size_t i = 0; i < LEN / 2; i++)
        assert_int_equal(cli_mem[i], (uint8_t) (i * 7 + 1));

    /* Get the client's first half into the server's second half. */
    assert_int_equal(NA_Get(s.cls, s.ctx, record_cb, &r_get, srv_h, LEN / 2,
                            remote_h, 0, LEN / 2, cli, 0, op),
                     NA_SUCCESS);
    progress_until(&s, &c, &r_get.count, 1);
    assert_int_equal(r_get.ret, NA_SUCCESS);
    assert_memory_equal(srv_mem + LEN / 2, cli_mem, LEN / 2);

    /* Out of bounds and missing permission are refused at post time. */
    assert_int_equal(NA_Put(s.cls, s.ctx, record_cb, &r_bad, srv_h, 0, remote_h,
                            LEN / 2 + 1, LEN / 2, cli, 0, op),
                     NA_INVALID_ARG);
    assert_int_equal(
        NA_Mem_handle_create(c.cls, cli_mem, LEN, NA_MEM_READ_ONLY, &ro_h),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c.cls, ro_h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_serialize(c.cls, ser, sizeof(ser), ro_h),
                     NA_SUCCESS);
    NA_Mem_handle_free(s.cls, remote_h);
    assert_int_equal(NA_Mem_handle_deserialize(s.cls, &remote_h, ser, ser_size),
                     NA_SUCCESS);
    assert_int_equal(NA_Put(s.cls, s.ctx, record_cb, &r_bad, srv_h, 0, remote_h,
                            0, 16, cli, 0, op),
                     NA_PERMISSION);
    assert_int_equal(r_bad.count, 0);

    NA_Op_destroy(s.cls, op);
    NA_Mem_handle_free(s.cls, remote_h);
    NA_Mem_deregister(c.cls, ro_h);
    NA_Mem_handle_free(c.cls, ro_h);
    NA_Mem_deregister(s.cls, srv_h);
    NA_Mem_handle_free(s.cls, srv_h);
    NA_Mem_deregister(c.cls, cli_h);
    NA_Mem_handle_free(c.cls, cli_h);
    NA_Addr_free(s.cls, cli);
    peer_close(&c);
    peer_close(&s);
    free(cli_mem);
    free(srv_mem);
}

void
test_cancel_recv(void **state)
{
    struct peer s;
    struct result r = {0};
    char buf[64];
    na_op_id_t *op;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    op = NA_Op_create(s.cls, 0);
    assert_int_equal(NA_Msg_recv_unexpected(s.cls, s.ctx, record_cb, &r, buf,
                                            sizeof(buf), NULL, op),
                     NA_SUCCESS);
    /* Busy until it completes and is triggered. */
    assert_int_equal(NA_Op_destroy(s.cls, op), NA_BUSY);
    assert_int_equal(NA_Cancel(s.cls, s.ctx, op), NA_SUCCESS);
    assert_int_equal(NA_Cancel(s.cls, s.ctx, op), NA_SUCCESS);
    progress_until(&s, NULL, &r.count, 1);
    assert_int_equal(r.ret, NA_CANCELED);
    assert_int_equal(r.type, NA_CB_RECV_UNEXPECTED);
    /* Cancel after completion is a no-op; no second callback. */
    assert_int_equal(NA_Cancel(s.cls, s.ctx, op), NA_SUCCESS);
    for (int i = 0; i < 10; i++) {
        unsigned int n;

        (void) NA_Poll(s.cls, s.ctx, &n);
        (void) NA_Trigger(s.ctx, 16, NULL);
    }
    assert_int_equal(r.count, 1);
    assert_int_equal(NA_Op_destroy(s.cls, op), NA_SUCCESS);
    peer_close(&s);
}

/* A class that does not listen still talks to itself: messages and RMA
 * to its own address are local copies with the device's checks. */
void
test_self(void **state)
{
    struct peer c;
    struct result r_recv = {0}, r_send = {0}, r_put = {0}, r_bad = {0};
    uint8_t src[512], dst[512], ser[64], msg[32] = "to myself", in[32];
    na_mem_handle_t hs, hd, remote;
    na_op_id_t *op1, *op2;
    na_addr_t self;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&c, false);
    assert_int_equal(NA_Addr_self(c.cls, &self), NA_SUCCESS);
    op1 = NA_Op_create(c.cls, 0);
    op2 = NA_Op_create(c.cls, 0);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, record_cb, &r_recv, in,
                                          sizeof(in), NULL, self, 0, 9, op1),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_expected(c.cls, c.ctx, record_cb, &r_send, msg,
                                          sizeof(msg), NULL, self, 0, 9, op2),
                     NA_SUCCESS);
    /* Completions come from progress, never from inside the post. */
    assert_int_equal(r_recv.count + r_send.count, 0);
    progress_until(&c, NULL, &r_recv.count, 1);
    progress_until(&c, NULL, &r_send.count, 1);
    assert_int_equal(r_recv.ret, NA_SUCCESS);
    assert_memory_equal(in, msg, sizeof(msg));

    for (size_t i = 0; i < sizeof(src); i++) {
        src[i] = (uint8_t) (i ^ 0x3c);
        dst[i] = 0;
    }
    assert_int_equal(
        NA_Mem_handle_create(c.cls, src, sizeof(src), NA_MEM_READ_ONLY, &hs),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c.cls, hs, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_create(c.cls, dst, sizeof(dst), NA_MEM_READWRITE, &hd),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c.cls, hd, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_serialize(c.cls, ser, sizeof(ser), hd),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_deserialize(c.cls, &remote, ser,
                                  NA_Mem_handle_get_serialize_size(c.cls, hd)),
        NA_SUCCESS);
    assert_int_equal(NA_Put(c.cls, c.ctx, record_cb, &r_put, hs, 10, remote, 20,
                            100, self, 0, op1),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_put.count, 1);
    assert_int_equal(r_put.ret, NA_SUCCESS);
    assert_memory_equal(dst + 20, src + 10, 100);
    assert_int_equal(dst[19], 0);
    assert_int_equal(dst[120], 0);
    /* After deregistration the key names nothing: refused like a NIC. */
    assert_int_equal(NA_Mem_deregister(c.cls, hd), NA_SUCCESS);
    assert_int_equal(NA_Put(c.cls, c.ctx, record_cb, &r_bad, hs, 0, remote, 0,
                            8, self, 0, op1),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_bad.count, 1);
    assert_int_equal(r_bad.ret, NA_ACCESS);

    NA_Mem_handle_free(c.cls, remote);
    NA_Mem_handle_free(c.cls, hd);
    NA_Mem_deregister(c.cls, hs);
    NA_Mem_handle_free(c.cls, hs);
    NA_Op_destroy(c.cls, op1);
    NA_Op_destroy(c.cls, op2);
    NA_Addr_free(c.cls, self);
    peer_close(&c);
}

/* poll_wait sleeps on the completion channel instead of spinning, and a
 * completion queued by another call (here a cancel) is seen at once. */
void
test_poll_wait_sleeps(void **state)
{
    struct peer s;
    struct rusage ru0, ru1;
    uint64_t t0, elapsed, cpu_ms;
    unsigned int n = 0;
    na_return_t ret;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    getrusage(RUSAGE_SELF, &ru0);
    t0 = now_ms();
    ret = NA_Poll_wait(s.cls, s.ctx, 300, &n);
    elapsed = now_ms() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    cpu_ms = (uint64_t) ((ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1000 +
                         (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1000 +
                         (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000 +
                         (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1000);
    print_message("poll_wait(300 ms): %s after %llu ms, %llu ms of CPU\n",
                  NA_Error_to_string(ret), (unsigned long long) elapsed,
                  (unsigned long long) cpu_ms);
    assert_int_equal(ret, NA_TIMEOUT);
    assert_int_equal(n, 0);
    assert_true(elapsed >= 250);
    assert_true(cpu_ms < elapsed / 2);
    assert_true(NA_Poll_get_fd(s.cls, s.ctx) >= 0);
    peer_close(&s);
}

/* Thread safety: a server progress thread (sleeping in NA_Poll_wait) and
 * two client threads that send and progress the same context at once. */
enum { THR_SENDERS = 2, THR_MSGS = 100, THR_RECVS = 8 };

struct thr_recv {
    na_class_t *cls;
    na_context_t *ctx;
    na_op_id_t *op;
    uint32_t buf[2];
    atomic_int *received;
    atomic_uint *seq_sum[THR_SENDERS];
};

struct thr_sender {
    struct peer *c;
    na_addr_t srv;
    uint32_t id;
    atomic_int done;
    atomic_int failed;
};

static atomic_int thr_stop;

static void
thr_recv_cb(const struct na_cb_info *info)
{
    struct thr_recv *r = info->arg;

    if (info->ret != NA_SUCCESS)
        return; /* canceled at the end */
    if (info->info.recv_unexpected.actual_buf_size == sizeof(r->buf) &&
        r->buf[0] < THR_SENDERS)
        atomic_fetch_add(r->seq_sum[r->buf[0]], r->buf[1]);
    NA_Addr_free(r->cls, info->info.recv_unexpected.source);
    atomic_fetch_add(r->received, 1);
    /* Repost from the callback: the op is free again at this point. */
    if (NA_Msg_recv_unexpected(r->cls, r->ctx, thr_recv_cb, r, r->buf,
                               sizeof(r->buf), NULL, r->op) != NA_SUCCESS)
        atomic_store(&thr_stop, 2);
}

static void *
thr_progress(void *arg)
{
    struct peer *s = arg;

    while (atomic_load(&thr_stop) == 0) {
        unsigned int n;

        (void) NA_Poll_wait(s->cls, s->ctx, 50, &n);
        (void) NA_Trigger(s->ctx, 64, NULL);
    }
    return NULL;
}

static void
thr_send_cb(const struct na_cb_info *info)
{
    struct thr_sender *t = info->arg;

    if (info->ret != NA_SUCCESS)
        atomic_fetch_add(&t->failed, 1);
    atomic_fetch_add(&t->done, 1);
}

static void *
thr_send(void *arg)
{
    struct thr_sender *t = arg;
    na_op_id_t *op = NA_Op_create(t->c->cls, 0);
    uint32_t msg[2];
    uint64_t deadline = now_ms() + TEST_TIMEOUT_MS;

    for (uint32_t i = 0; i < THR_MSGS; i++) {
        msg[0] = t->id;
        msg[1] = i;
        if (NA_Msg_send_unexpected(t->c->cls, t->c->ctx, thr_send_cb, t, msg,
                                   sizeof(msg), NULL, t->srv, 0, 1,
                                   op) != NA_SUCCESS) {
            atomic_fetch_add(&t->failed, 1);
            break;
        }
        /* Both senders progress the one client context; either may run
         * the other's callback. */
        while (atomic_load(&t->done) <= (int) i && now_ms() < deadline) {
            unsigned int n;

            (void) NA_Poll_wait(t->c->cls, t->c->ctx, 20, &n);
            (void) NA_Trigger(t->c->ctx, 16, NULL);
        }
    }
    while (NA_Op_destroy(t->c->cls, op) == NA_BUSY && now_ms() < deadline)
        (void) NA_Trigger(t->c->ctx, 16, NULL);
    return NULL;
}

void
test_threads(void **state)
{
    struct peer s, c;
    struct thr_recv recvs[THR_RECVS];
    struct thr_sender senders[THR_SENDERS];
    pthread_t progress, send_threads[THR_SENDERS];
    atomic_int received = 0;
    atomic_uint seq_sum[THR_SENDERS];
    uint64_t deadline;
    unsigned int want = THR_MSGS * (THR_MSGS - 1) / 2;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    peer_open(&c, false);
    atomic_store(&thr_stop, 0);
    for (int k = 0; k < THR_SENDERS; k++)
        atomic_init(&seq_sum[k], 0);
    for (int i = 0; i < THR_RECVS; i++) {
        recvs[i].cls = s.cls;
        recvs[i].ctx = s.ctx;
        recvs[i].op = NA_Op_create(s.cls, 0);
        recvs[i].received = &received;
        for (int k = 0; k < THR_SENDERS; k++)
            recvs[i].seq_sum[k] = &seq_sum[k];
        assert_int_equal(NA_Msg_recv_unexpected(
                             s.cls, s.ctx, thr_recv_cb, &recvs[i], recvs[i].buf,
                             sizeof(recvs[i].buf), NULL, recvs[i].op),
                         NA_SUCCESS);
    }
    assert_int_equal(pthread_create(&progress, NULL, thr_progress, &s), 0);
    for (int k = 0; k < THR_SENDERS; k++) {
        senders[k].c = &c;
        senders[k].srv = lookup_peer(&c, &s);
        senders[k].id = (uint32_t) k;
        atomic_init(&senders[k].done, 0);
        atomic_init(&senders[k].failed, 0);
        assert_int_equal(
            pthread_create(&send_threads[k], NULL, thr_send, &senders[k]), 0);
    }
    for (int k = 0; k < THR_SENDERS; k++)
        pthread_join(send_threads[k], NULL);
    deadline = now_ms() + TEST_TIMEOUT_MS;
    while (atomic_load(&received) < THR_SENDERS * THR_MSGS &&
           now_ms() < deadline && atomic_load(&thr_stop) == 0)
        usleep(1000);
    atomic_store(&thr_stop, 1);
    pthread_join(progress, NULL);

    print_message("threads: %d message(s) received of %d\n",
                  atomic_load(&received), THR_SENDERS * THR_MSGS);
    assert_int_equal(atomic_load(&received), THR_SENDERS * THR_MSGS);
    for (int k = 0; k < THR_SENDERS; k++) {
        assert_int_equal(atomic_load(&senders[k].failed), 0);
        assert_int_equal(atomic_load(&senders[k].done), THR_MSGS);
        assert_int_equal(atomic_load(&seq_sum[k]), want);
        NA_Addr_free(c.cls, senders[k].srv);
    }
    /* Cancel the reposted receives and let their callbacks run. */
    for (int i = 0; i < THR_RECVS; i++)
        assert_int_equal(NA_Cancel(s.cls, s.ctx, recvs[i].op), NA_SUCCESS);
    deadline = now_ms() + TEST_TIMEOUT_MS;
    while (NA_Context_get_completion_count(s.ctx) > 0 && now_ms() < deadline)
        (void) NA_Trigger(s.ctx, 16, NULL);
    for (int i = 0; i < THR_RECVS; i++)
        assert_int_equal(NA_Op_destroy(s.cls, recvs[i].op), NA_SUCCESS);
    peer_close(&c);
    peer_close(&s);
}

/* A peer that goes away turns into error completions, never a hang: a
 * send to an address with no listener fails, and a receive waiting on a
 * peer whose class is finalized fails. */
void
test_peer_gone(void **state)
{
    struct peer s, c;
    struct result r_send = {0}, r_recv = {0}, r_first = {0}, r_srv = {0};
    char buf[64] = "hello", rbuf[64];
    na_op_id_t *op_send, *op_recv, *s_op;
    na_addr_t srv, nobody;
    char name[128];
    size_t size = sizeof(name);
    uint64_t t0;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    peer_open(&c, false);
    op_send = NA_Op_create(c.cls, 0);
    op_recv = NA_Op_create(c.cls, 0);
    s_op = NA_Op_create(s.cls, 0);

    /* Nobody listens on the client's port (it is not listening). */
    nobody = lookup_peer(&s, &c);
    assert_int_equal(NA_Addr_to_string(s.cls, name, &size, nobody), NA_SUCCESS);
    t0 = now_ms();
    assert_int_equal(NA_Msg_send_unexpected(s.cls, s.ctx, record_cb, &r_send,
                                            buf, 6, NULL, nobody, 0, 1, s_op),
                     NA_SUCCESS);
    progress_until(&s, NULL, &r_send.count, 1);
    print_message("send to %s (no listener): %s after %llu ms\n", name,
                  NA_Error_to_string(r_send.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_send.ret, NA_HOSTUNREACH);
    NA_Addr_free(s.cls, nobody);

    /* Connect, then let the server vanish while the client waits. */
    srv = lookup_peer(&c, &s);
    assert_int_equal(NA_Msg_recv_unexpected(s.cls, s.ctx, record_cb, &r_srv,
                                            rbuf, sizeof(rbuf), NULL, s_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, record_cb, &r_first,
                                            buf, 6, NULL, srv, 0, 1, op_send),
                     NA_SUCCESS);
    progress_until(&s, &c, &r_srv.count, 1);
    progress_until(&s, &c, &r_first.count, 1);
    assert_int_equal(r_first.ret, NA_SUCCESS);
    NA_Addr_free(s.cls, r_srv.source);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, record_cb, &r_recv,
                                          rbuf, sizeof(rbuf), NULL, srv, 0, 5,
                                          op_recv),
                     NA_SUCCESS);
    NA_Op_destroy(s.cls, s_op);
    peer_close(&s);
    t0 = now_ms();
    progress_until(&c, NULL, &r_recv.count, 1);
    print_message("receive from a finalized peer: %s after %llu ms\n",
                  NA_Error_to_string(r_recv.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_recv.ret, NA_HOSTUNREACH);

    /* Sending again reconnects, which now fails cleanly. */
    r_send.count = 0;
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, record_cb, &r_send,
                                            buf, 6, NULL, srv, 0, 1, op_send),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_send.count, 1);
    assert_int_equal(r_send.ret, NA_HOSTUNREACH);

    NA_Addr_free(c.cls, srv);
    NA_Op_destroy(c.cls, op_send);
    NA_Op_destroy(c.cls, op_recv);
    peer_close(&c);
}

/* The server is another process, killed with SIGKILL while the client
 * waits for its answer: the kernel tears its connection down, and the
 * client's receive completes with an error instead of hanging. */
static void
crash_child(int fd)
{
    char addr[128], buf[64];
    size_t size = sizeof(addr);
    na_class_t *cls = NA_Initialize(test_info(), true);
    na_context_t *ctx = cls ? NA_Context_create(cls) : NULL;
    na_op_id_t *op = cls ? NA_Op_create(cls, 0) : NULL;
    struct result r = {0};
    na_addr_t self;

    if (ctx == NULL || op == NULL || NA_Addr_self(cls, &self) != NA_SUCCESS ||
        NA_Addr_to_string(cls, addr, &size, self) != NA_SUCCESS ||
        NA_Msg_recv_unexpected(cls, ctx, record_cb, &r, buf, sizeof(buf), NULL,
                               op) != NA_SUCCESS)
        _exit(2);
    if (write(fd, addr, size) != (ssize_t) size)
        _exit(2);
    while (r.count == 0) {
        unsigned int n;

        (void) NA_Poll_wait(cls, ctx, 100, &n);
        (void) NA_Trigger(ctx, 16, NULL);
    }
    raise(SIGKILL);
    _exit(3);
}

void
test_peer_killed(void **state)
{
    struct peer c;
    struct result r_send = {0}, r_recv = {0};
    char addr[128] = {0}, buf[16] = "ping", rbuf[16];
    na_op_id_t *op_send, *op_recv;
    na_addr_t srv;
    int fds[2], status;
    pid_t pid;
    uint64_t t0;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_child(fds[1]);
    }
    close(fds[1]);
    assert_true(read(fds[0], addr, sizeof(addr) - 1) > 0);
    close(fds[0]);
    peer_open(&c, false);
    assert_int_equal(NA_Addr_lookup(c.cls, addr, &srv), NA_SUCCESS);
    op_send = NA_Op_create(c.cls, 0);
    op_recv = NA_Op_create(c.cls, 0);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, record_cb, &r_recv,
                                          rbuf, sizeof(rbuf), NULL, srv, 0, 3,
                                          op_recv),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, record_cb, &r_send,
                                            buf, sizeof(buf), NULL, srv, 0, 1,
                                            op_send),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_send.count, 1);
    assert_int_equal(r_send.ret, NA_SUCCESS);
    t0 = now_ms();
    progress_until(&c, NULL, &r_recv.count, 1);
    print_message("receive from a killed peer: %s after %llu ms\n",
                  NA_Error_to_string(r_recv.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_recv.ret, NA_HOSTUNREACH);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    NA_Addr_free(c.cls, srv);
    NA_Op_destroy(c.cls, op_send);
    NA_Op_destroy(c.cls, op_recv);
    peer_close(&c);
}
