/*
 * Tests of the ofi plugin through the public NA API, once per provider
 * (tcp, served as tcp;ofi_rxm, and sockets). Each test starts a listening
 * class and a client class in this process and drives both of them: the
 * providers progress only when their completion queue is read.
 *
 * A provider missing at run time skips its cases with the reason; nothing
 * sleeps on the wall clock: waiting is NA_Poll_wait with a bound.
 *
 * FI_SOCKETS_PE_WAITTIME=0 is set for the sockets provider (unless the
 * environment already sets it): by default its progress thread spins for
 * 10 ms after each event and competes with the test for the CPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"

#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Upper bound on any wait in these tests. */
#define TEST_TIMEOUT_NS (20ull * 1000000000ull)

/* One run of the suite: a provider, and whether multi-receive is off. */
struct config {
    const char *protocol;
    bool no_multi_recv;
    unsigned int multi_recv_op_max; /* 0: the plugin's default */
};

struct fixture {
    const struct config *config;
    const char *protocol;
    na_class_t *srv, *cli;
    na_context_t *sctx, *cctx;
    na_addr_t srv_addr; /* the server as the client looked it up */
};

/* What a completion callback saw. */
struct result {
    int calls;
    na_return_t ret;
    size_t size;
    na_addr_t source;
    na_tag_t tag;
};

static void
record_cb(const struct na_cb_info *info)
{
    struct result *r = info->arg;

    r->calls++;
    r->ret = info->ret;
    if (info->type == NA_CB_RECV_UNEXPECTED) {
        r->size = info->info.recv_unexpected.actual_buf_size;
        r->source = info->info.recv_unexpected.source;
        r->tag = info->info.recv_unexpected.tag;
    } else if (info->type == NA_CB_RECV_EXPECTED) {
        r->size = info->info.recv_expected.actual_buf_size;
    }
}

/* Drive both classes until *calls reaches want, or fail after the bound. */
static bool
progress_until(struct fixture *fx, const int *calls, int want)
{
    uint64_t deadline = NA_Clock_now(fx->srv) + TEST_TIMEOUT_NS;

    while (*calls < want) {
        if (NA_Clock_now(fx->srv) > deadline)
            return false;
        NA_Poll_wait(fx->srv, fx->sctx, 1, NULL);
        NA_Trigger(fx->sctx, 64, NULL);
        NA_Poll_wait(fx->cli, fx->cctx, 1, NULL);
        NA_Trigger(fx->cctx, 64, NULL);
    }
    return true;
}

/* Drain both contexts so a late duplicate completion would be seen. */
static void
progress_some(struct fixture *fx, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        NA_Poll(fx->srv, fx->sctx, NULL);
        NA_Trigger(fx->sctx, 64, NULL);
        NA_Poll(fx->cli, fx->cctx, NULL);
        NA_Trigger(fx->cctx, 64, NULL);
    }
}

static void
info_string(char *buf, size_t size, const char *protocol)
{
    snprintf(buf, size, "ofi+%s://127.0.0.1:0", protocol);
}

static int
setup(void **state)
{
    const struct config *config = *state;
    struct na_init_info init_info = NA_INIT_INFO_INITIALIZER;
    struct fixture *fx = calloc(1, sizeof(*fx));
    char info[64], addr[128];
    size_t addr_size = sizeof(addr);
    na_addr_t self;

    if (fx == NULL)
        return -1;
    fx->config = config;
    fx->protocol = config->protocol;
    init_info.no_multi_recv = config->no_multi_recv;
    init_info.multi_recv_op_max = config->multi_recv_op_max;
    info_string(info, sizeof(info), fx->protocol);
    fx->srv = NA_Initialize_opt2(info, true, NA_VERSION(6, 0), &init_info);
    if (fx->srv == NULL) {
        /* The plugin already printed why; the cases report the skip. */
        *state = fx;
        return 0;
    }
    fx->cli = NA_Initialize_opt2(info, false, NA_VERSION(6, 0), &init_info);
    fx->sctx = NA_Context_create(fx->srv);
    fx->cctx = fx->cli ? NA_Context_create(fx->cli) : NULL;
    if (fx->cli == NULL || fx->sctx == NULL || fx->cctx == NULL)
        return -1;
    if (NA_Addr_self(fx->srv, &self) != NA_SUCCESS ||
        NA_Addr_to_string(fx->srv, addr, &addr_size, self) != NA_SUCCESS ||
        NA_Addr_lookup(fx->cli, addr, &fx->srv_addr) != NA_SUCCESS)
        return -1;
    NA_Addr_free(fx->srv, self);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;
    int rc = 0;

    if (fx->srv_addr != NULL)
        NA_Addr_free(fx->cli, fx->srv_addr);
    if (fx->cctx != NULL && NA_Context_destroy(fx->cli, fx->cctx) != NA_SUCCESS)
        rc = -1;
    if (fx->sctx != NULL && NA_Context_destroy(fx->srv, fx->sctx) != NA_SUCCESS)
        rc = -1;
    if (fx->cli != NULL && NA_Finalize(fx->cli) != NA_SUCCESS)
        rc = -1;
    if (fx->srv != NULL && NA_Finalize(fx->srv) != NA_SUCCESS)
        rc = -1;
    *state = (void *) fx->config;
    free(fx);
    return rc;
}

/* Every case starts here: a provider that did not come up is a skip. */
static struct fixture *
fixture_or_skip(void **state)
{
    struct fixture *fx = *state;

    if (fx->srv == NULL) {
        print_message("ofi+%s is not available here (see the message above); "
                      "skipping\n",
                      fx->protocol);
        skip();
    }
    return fx;
}

static void
test_addr_roundtrip(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    char str[128], prefix[64], again[128];
    size_t size = 0, str_size = sizeof(str), again_size = sizeof(again);
    na_addr_t self, looked_up, deser;
    uint8_t ser[64];
    size_t ser_size;

    assert_int_equal(NA_Addr_self(fx->srv, &self), NA_SUCCESS);
    assert_true(NA_Addr_is_self(fx->srv, self));

    /* Size probe, then too small, then exact. */
    assert_int_equal(NA_Addr_to_string(fx->srv, NULL, &size, self), NA_SUCCESS);
    assert_true(size > 1);
    str_size = size - 1;
    assert_int_equal(NA_Addr_to_string(fx->srv, str, &str_size, self),
                     NA_OVERFLOW);
    assert_int_equal(str_size, size);
    assert_int_equal(NA_Addr_to_string(fx->srv, str, &str_size, self),
                     NA_SUCCESS);
    snprintf(prefix, sizeof(prefix), "ofi+%s://127.0.0.1:", fx->protocol);
    assert_memory_equal(str, prefix, strlen(prefix));
    assert_true(atoi(str + strlen(prefix)) > 0); /* a real port */

    /* Looking the string up on the server itself gives self back. */
    assert_int_equal(NA_Addr_lookup(fx->srv, str, &looked_up), NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->srv, looked_up, self));
    assert_true(NA_Addr_is_self(fx->srv, looked_up));
    NA_Addr_free(fx->srv, looked_up);

    /* On the client the same string is a peer, and prints the same. */
    assert_false(NA_Addr_is_self(fx->cli, fx->srv_addr));
    assert_int_equal(
        NA_Addr_to_string(fx->cli, again, &again_size, fx->srv_addr),
        NA_SUCCESS);
    assert_string_equal(again, str);

    /* Serialize / deserialize round trip. */
    ser_size = NA_Addr_get_serialize_size(fx->cli, fx->srv_addr);
    assert_true(ser_size > 0 && ser_size <= sizeof(ser));
    assert_int_equal(
        NA_Addr_serialize(fx->cli, ser, ser_size - 1, fx->srv_addr),
        NA_OVERFLOW);
    assert_int_equal(NA_Addr_serialize(fx->cli, ser, ser_size, fx->srv_addr),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_deserialize(fx->cli, &deser, ser, ser_size),
                     NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->cli, deser, fx->srv_addr));
    NA_Addr_free(fx->cli, deser);

    /* Truncated and corrupted bytes are refused. */
    assert_int_not_equal(NA_Addr_deserialize(fx->cli, &deser, ser, 3),
                         NA_SUCCESS);
    ser[0] ^= 0xff;
    assert_int_not_equal(NA_Addr_deserialize(fx->cli, &deser, ser, ser_size),
                         NA_SUCCESS);

    /* The scheme with the provider's full name is the same peer. */
    if (strcmp(fx->protocol, "tcp") == 0) {
        char rxm[160];
        snprintf(rxm, sizeof(rxm), "ofi+tcp;ofi_rxm://%s",
                 str + strlen("ofi+tcp://"));
        assert_int_equal(NA_Addr_lookup(fx->cli, rxm, &looked_up), NA_SUCCESS);
        assert_true(NA_Addr_cmp(fx->cli, looked_up, fx->srv_addr));
        NA_Addr_free(fx->cli, looked_up);
    }
    NA_Addr_free(fx->srv, self);
}

static void exchange(struct fixture *fx, size_t size, bool use_msg_buf);

/* A removed peer is forgotten: the next lookup of its name makes a new
 * address (interned addresses of one peer otherwise compare equal), and
 * messages flow through it. */
static void
test_addr_set_remove(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    char str[128];
    size_t size = sizeof(str);
    na_addr_t old = fx->srv_addr, same, fresh, self;

    assert_int_equal(NA_Addr_to_string(fx->cli, str, &size, old), NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(fx->cli, str, &same), NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->cli, same, old));
    NA_Addr_free(fx->cli, same);

    assert_int_equal(NA_Addr_set_remove(fx->cli, old), NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(fx->cli, str, &fresh), NA_SUCCESS);
    assert_false(NA_Addr_cmp(fx->cli, fresh, old));
    fx->srv_addr = fresh;
    NA_Addr_free(fx->cli, old);
    exchange(fx, 64, false);

    /* The class's own address cannot be removed; NULLs are refused. */
    assert_int_equal(NA_Addr_self(fx->srv, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_set_remove(fx->srv, self), NA_INVALID_ARG);
    NA_Addr_free(fx->srv, self);
    assert_int_equal(NA_Addr_set_remove(NULL, fresh), NA_INVALID_ARG);
    assert_int_equal(NA_Addr_set_remove(fx->cli, NA_ADDR_NULL), NA_INVALID_ARG);
}

static void
fill(uint8_t *buf, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (uint8_t) (seed + i * 7);
}

/*
 * An unexpected message carries its tag and a source the receiver can
 * answer to; the answer is an expected message matched by tag.
 */
static void
exchange(struct fixture *fx, size_t size, bool use_msg_buf)
{
    size_t max = NA_Msg_get_max_unexpected_size(fx->cli);
    void *sdata = NULL, *rdata = NULL;
    uint8_t *sbuf = malloc(max), *rbuf = malloc(max), reply[64], rreply[64];
    char src[128], cli[128];
    size_t src_size = sizeof(src), cli_size = sizeof(cli);
    struct result s = {0}, r = {0}, rs = {0}, rr = {0};
    na_op_id_t *s_op = NA_Op_create(fx->cli, 0);
    na_op_id_t *r_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *rs_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *rr_op = NA_Op_create(fx->cli, 0);
    na_addr_t cli_self;

    if (use_msg_buf) {
        free(sbuf);
        free(rbuf);
        sbuf = NA_Msg_buf_alloc(fx->cli, max, 0, &sdata);
        rbuf = NA_Msg_buf_alloc(fx->srv, max, 0, &rdata);
    }
    assert_non_null(sbuf);
    assert_non_null(rbuf);
    fill(sbuf, size, 3);
    memset(rbuf, 0, max);

    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, record_cb, &r,
                                            rbuf, max, rdata, r_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &rr,
                                          rreply, sizeof(rreply), NULL,
                                          fx->srv_addr, 0, 0x1234, rr_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, record_cb, &s,
                                            sbuf, size, sdata, fx->srv_addr, 0,
                                            42, s_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_true(progress_until(fx, &s.calls, 1));
    assert_int_equal(s.ret, NA_SUCCESS);
    assert_int_equal(r.ret, NA_SUCCESS);
    assert_int_equal(r.size, size);
    assert_int_equal(r.tag, 42);
    assert_memory_equal(rbuf, sbuf, size);

    /* The source is the client, as the client prints itself. */
    assert_non_null(r.source);
    assert_int_equal(NA_Addr_to_string(fx->srv, src, &src_size, r.source),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_self(fx->cli, &cli_self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(fx->cli, cli, &cli_size, cli_self),
                     NA_SUCCESS);
    NA_Addr_free(fx->cli, cli_self);
    assert_string_equal(src, cli);

    /* Answer through the source address. */
    fill(reply, sizeof(reply), 9);
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, record_cb, &rs,
                                          reply, sizeof(reply), NULL, r.source,
                                          0, 0x1234, rs_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rr.calls, 1));
    assert_true(progress_until(fx, &rs.calls, 1));
    assert_int_equal(rs.ret, NA_SUCCESS);
    assert_int_equal(rr.ret, NA_SUCCESS);
    assert_int_equal(rr.size, sizeof(reply));
    assert_memory_equal(rreply, reply, sizeof(reply));

    progress_some(fx, 10);
    assert_int_equal(s.calls + r.calls + rs.calls + rr.calls, 4);
    NA_Addr_free(fx->srv, r.source);
    assert_int_equal(NA_Op_destroy(fx->cli, s_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, r_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, rs_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->cli, rr_op), NA_SUCCESS);
    if (use_msg_buf) {
        NA_Msg_buf_free(fx->cli, sbuf, sdata);
        NA_Msg_buf_free(fx->srv, rbuf, rdata);
    } else {
        free(sbuf);
        free(rbuf);
    }
}

static void
test_unexpected_small(void **state)
{
    exchange(fixture_or_skip(state), 8, false);
}

static void
test_unexpected_max_msg_buf(void **state)
{
    struct fixture *fx = fixture_or_skip(state);

    exchange(fx, NA_Msg_get_max_unexpected_size(fx->cli), true);
}

static void
test_unexpected_mid_plain_buf(void **state)
{
    exchange(fixture_or_skip(state), 1000, false);
}

/* Many distinct peers looked up and freed do not break the class: the
 * cache drops unreferenced peers past its bound, never a held one. */
static void
test_addr_cache_bound(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    char name[64];

    for (unsigned i = 0; i < 3000; i++) {
        na_addr_t a;
        snprintf(name, sizeof(name), "ofi+%s://10.%u.%u.1:%u", fx->protocol,
                 i / 250, i % 250, 1000 + i);
        assert_int_equal(NA_Addr_lookup(fx->cli, name, &a), NA_SUCCESS);
        NA_Addr_free(fx->cli, a);
    }
    exchange(fx, 8, false); /* the held server address still works */
}

/* A message sent before any receive is posted waits in the backlog. */
static void
test_unexpected_backlog(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    uint8_t sbuf[300], rbuf[300];
    struct result s = {0}, r = {0};
    na_op_id_t *s_op = NA_Op_create(fx->cli, 0);
    na_op_id_t *r_op = NA_Op_create(fx->srv, 0);

    fill(sbuf, sizeof(sbuf), 1);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, record_cb, &s,
                                            sbuf, sizeof(sbuf), NULL,
                                            fx->srv_addr, 0, 7, s_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &s.calls, 1));
    /* Let the message reach the server with no receive posted. */
    progress_some(fx, 200);
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, record_cb, &r,
                                            rbuf, sizeof(rbuf), NULL, r_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_int_equal(r.ret, NA_SUCCESS);
    assert_int_equal(r.tag, 7);
    assert_int_equal(r.size, sizeof(sbuf));
    assert_memory_equal(rbuf, sbuf, sizeof(sbuf));
    NA_Addr_free(fx->srv, r.source);
    NA_Op_destroy(fx->cli, s_op);
    NA_Op_destroy(fx->srv, r_op);
}

/* Two expected receives with different tags each get their own message,
 * whatever order the messages are sent in. */
static void
test_expected_tags(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    uint8_t a[200], b[2000], ra[200], rb[2000];
    struct result sa = {0}, sb = {0}, qa = {0}, qb = {0};
    na_op_id_t *ops[4];
    na_addr_t cli_addr;
    char cli[128];
    size_t cli_size = sizeof(cli);
    na_addr_t self;

    for (int i = 0; i < 4; i++)
        ops[i] = NA_Op_create(i < 2 ? fx->srv : fx->cli, 0);
    assert_int_equal(NA_Addr_self(fx->cli, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(fx->cli, cli, &cli_size, self),
                     NA_SUCCESS);
    NA_Addr_free(fx->cli, self);
    assert_int_equal(NA_Addr_lookup(fx->srv, cli, &cli_addr), NA_SUCCESS);
    fill(a, sizeof(a), 11);
    fill(b, sizeof(b), 22);
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &qa, ra,
                                          sizeof(ra), NULL, fx->srv_addr, 0, 7,
                                          ops[2]),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &qb, rb,
                                          sizeof(rb), NULL, fx->srv_addr, 0, 8,
                                          ops[3]),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, record_cb, &sb, b,
                                          sizeof(b), NULL, cli_addr, 0, 8,
                                          ops[1]),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, record_cb, &sa, a,
                                          sizeof(a), NULL, cli_addr, 0, 7,
                                          ops[0]),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &qa.calls, 1));
    assert_true(progress_until(fx, &qb.calls, 1));
    assert_true(progress_until(fx, &sa.calls, 1));
    assert_true(progress_until(fx, &sb.calls, 1));
    assert_int_equal(qa.ret, NA_SUCCESS);
    assert_int_equal(qb.ret, NA_SUCCESS);
    assert_int_equal(qa.size, sizeof(a));
    assert_int_equal(qb.size, sizeof(b));
    assert_memory_equal(ra, a, sizeof(a));
    assert_memory_equal(rb, b, sizeof(b));

    /* Over the limit is refused at post time. */
    assert_int_equal(
        NA_Msg_send_expected(fx->srv, fx->sctx, record_cb, &sa, b,
                             NA_Msg_get_max_expected_size(fx->srv) + 1, NULL,
                             cli_addr, 0, 7, ops[0]),
        NA_MSGSIZE);
    NA_Addr_free(fx->srv, cli_addr);
    for (int i = 0; i < 4; i++)
        assert_int_equal(NA_Op_destroy(i < 2 ? fx->srv : fx->cli, ops[i]),
                         NA_SUCCESS);
}

/*
 * Context ids: an unexpected message reaches the receives of the context
 * id it was sent to, and an expected reply matches only the receive that
 * names the replying context's id.
 */
static void
test_context_ids(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    na_context_t *sctx1 = NA_Context_create_id(fx->srv, 1);
    uint8_t req[32], r0[32], r1[32], rep[48], q0[48], q1[48];
    struct result u0 = {0}, u1 = {0}, s = {0}, rs = {0}, e0 = {0}, e1 = {0};
    na_op_id_t *u0_op = NA_Op_create(fx->srv, 0),
               *u1_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *rs_op = NA_Op_create(fx->srv, 0),
               *s_op = NA_Op_create(fx->cli, 0);
    na_op_id_t *e0_op = NA_Op_create(fx->cli, 0),
               *e1_op = NA_Op_create(fx->cli, 0);
    uint64_t deadline;

    assert_non_null(sctx1);
    fill(req, sizeof(req), 4);
    fill(rep, sizeof(rep), 8);
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, record_cb, &u0,
                                            r0, sizeof(r0), NULL, u0_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, sctx1, record_cb, &u1, r1,
                                            sizeof(r1), NULL, u1_op),
                     NA_SUCCESS);
    /* Replies from server context 0 and from server context 1, same tag. */
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &e0, q0,
                                          sizeof(q0), NULL, fx->srv_addr, 0, 55,
                                          e0_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &e1, q1,
                                          sizeof(q1), NULL, fx->srv_addr, 1, 55,
                                          e1_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, record_cb, &s,
                                            req, sizeof(req), NULL,
                                            fx->srv_addr, 1, 55, s_op),
                     NA_SUCCESS);
    deadline = NA_Clock_now(fx->srv) + TEST_TIMEOUT_NS;
    while (u1.calls == 0) {
        assert_true(NA_Clock_now(fx->srv) < deadline);
        progress_some(fx, 1);
        NA_Poll_wait(fx->srv, sctx1, 1, NULL);
        NA_Trigger(sctx1, 64, NULL);
    }
    assert_int_equal(u1.ret, NA_SUCCESS);
    assert_memory_equal(r1, req, sizeof(req));
    assert_int_equal(u0.calls, 0);

    /* Context 1 answers: only the receive naming source id 1 matches. */
    assert_int_equal(NA_Msg_send_expected(fx->srv, sctx1, record_cb, &rs, rep,
                                          sizeof(rep), NULL, u1.source, 0, 55,
                                          rs_op),
                     NA_SUCCESS);
    while (e1.calls == 0 || rs.calls == 0) {
        assert_true(NA_Clock_now(fx->srv) < deadline);
        progress_some(fx, 1);
        NA_Poll_wait(fx->srv, sctx1, 1, NULL);
        NA_Trigger(sctx1, 64, NULL);
    }
    assert_int_equal(e1.ret, NA_SUCCESS);
    assert_memory_equal(q1, rep, sizeof(rep));
    assert_int_equal(e0.calls, 0);

    NA_Cancel(fx->srv, fx->sctx, u0_op);
    NA_Cancel(fx->cli, fx->cctx, e0_op);
    assert_true(progress_until(fx, &u0.calls, 1));
    assert_true(progress_until(fx, &e0.calls, 1));
    assert_int_equal(u0.ret, NA_CANCELED);
    assert_int_equal(e0.ret, NA_CANCELED);
    NA_Addr_free(fx->srv, u1.source);
    NA_Op_destroy(fx->srv, u0_op);
    NA_Op_destroy(fx->srv, u1_op);
    NA_Op_destroy(fx->srv, rs_op);
    NA_Op_destroy(fx->cli, s_op);
    NA_Op_destroy(fx->cli, e0_op);
    NA_Op_destroy(fx->cli, e1_op);
    assert_int_equal(NA_Context_destroy(fx->srv, sctx1), NA_SUCCESS);
}

/* Put and get between a client buffer and a server region, byte-exact. */
static void
test_rma(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    const size_t size = 1 << 20;
    uint8_t *region = calloc(1, size), *local = malloc(size);
    uint8_t ser[128];
    size_t ser_size;
    na_mem_handle_t srv_mh, srv_ro_mh, cli_mh, remote, remote_ro;
    struct result p = {0}, g = {0};
    na_op_id_t *op = NA_Op_create(fx->cli, 0);

    assert_non_null(region);
    assert_non_null(local);
    fill(local, size, 5);

    assert_int_equal(
        NA_Mem_handle_create(fx->srv, region, size, NA_MEM_READWRITE, &srv_mh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv, srv_mh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_create(fx->srv, region, size,
                                          NA_MEM_READ_ONLY, &srv_ro_mh),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv, srv_ro_mh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_create(fx->cli, local, size, NA_MEM_READWRITE, &cli_mh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->cli, cli_mh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);

    ser_size = NA_Mem_handle_get_serialize_size(fx->srv, srv_mh);
    assert_true(ser_size <= sizeof(ser));
    assert_int_equal(NA_Mem_handle_serialize(fx->srv, ser, ser_size, srv_mh),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(fx->cli, &remote, ser, ser_size),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_serialize(fx->srv, ser, ser_size, srv_ro_mh),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_deserialize(fx->cli, &remote_ro, ser, ser_size),
        NA_SUCCESS);

    /* Put the whole buffer, then get a window back into a cleared copy. */
    assert_int_equal(NA_Put(fx->cli, fx->cctx, record_cb, &p, cli_mh, 0, remote,
                            0, size, fx->srv_addr, 0, op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &p.calls, 1));
    assert_int_equal(p.ret, NA_SUCCESS);
    assert_memory_equal(region, local, size);

    memset(local, 0, size);
    assert_int_equal(NA_Get(fx->cli, fx->cctx, record_cb, &g, cli_mh, 100,
                            remote_ro, 4096, 65536, fx->srv_addr, 0, op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &g.calls, 1));
    assert_int_equal(g.ret, NA_SUCCESS);
    assert_memory_equal(local + 100, region + 4096, 65536);
    assert_int_equal(local[99], 0);
    assert_int_equal(local[100 + 65536], 0);

    /* Refused before posting: no write access, and out of bounds. */
    assert_int_equal(NA_Put(fx->cli, fx->cctx, record_cb, &p, cli_mh, 0,
                            remote_ro, 0, 16, fx->srv_addr, 0, op),
                     NA_PERMISSION);
    assert_int_equal(NA_Get(fx->cli, fx->cctx, record_cb, &g, cli_mh, 0, remote,
                            size - 8, 16, fx->srv_addr, 0, op),
                     NA_INVALID_ARG);
    assert_int_equal(NA_Get(fx->cli, fx->cctx, record_cb, &g, cli_mh, size - 8,
                            remote, 0, 16, fx->srv_addr, 0, op),
                     NA_INVALID_ARG);
    assert_int_equal(p.calls + g.calls, 2);

    /* A forged handle with a wrong key is refused by the target. */
    ser[24] ^= 0x5a;
    na_mem_handle_t forged;
    assert_int_equal(NA_Mem_handle_deserialize(fx->cli, &forged, ser, ser_size),
                     NA_SUCCESS);
    g.calls = 0;
    assert_int_equal(NA_Get(fx->cli, fx->cctx, record_cb, &g, cli_mh, 0, forged,
                            0, 64, fx->srv_addr, 0, op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &g.calls, 1));
    assert_int_not_equal(g.ret, NA_SUCCESS);
    NA_Mem_handle_free(fx->cli, forged);

    NA_Mem_handle_free(fx->cli, remote);
    NA_Mem_handle_free(fx->cli, remote_ro);
    assert_int_equal(NA_Mem_deregister(fx->cli, cli_mh), NA_SUCCESS);
    NA_Mem_handle_free(fx->cli, cli_mh);
    assert_int_equal(NA_Mem_deregister(fx->srv, srv_mh), NA_SUCCESS);
    NA_Mem_handle_free(fx->srv, srv_mh);
    assert_int_equal(NA_Mem_deregister(fx->srv, srv_ro_mh), NA_SUCCESS);
    NA_Mem_handle_free(fx->srv, srv_ro_mh);
    assert_int_equal(NA_Op_destroy(fx->cli, op), NA_SUCCESS);
    free(region);
    free(local);
}

/* Hostile memory-handle bytes are refused. */
static void
test_mem_handle_bad_bytes(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    uint8_t buf[64], good[64];
    na_mem_handle_t mh, out;
    size_t size;

    assert_int_equal(
        NA_Mem_handle_create(fx->srv, buf, sizeof(buf), NA_MEM_READ_ONLY, &mh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv, mh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    size = NA_Mem_handle_get_serialize_size(fx->srv, mh);
    assert_int_equal(NA_Mem_handle_serialize(fx->srv, good, size, mh),
                     NA_SUCCESS);
    for (size_t i = 0; i < size; i++)
        assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &out, good, i),
                             NA_SUCCESS);
    memcpy(buf, good, size);
    buf[0] = 9; /* version */
    assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &out, buf, size),
                         NA_SUCCESS);
    memcpy(buf, good, size);
    buf[1] = 0x10; /* flags */
    assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &out, buf, size),
                         NA_SUCCESS);
    memcpy(buf, good, size);
    memset(buf + 8, 0xff, 16); /* base + length wraps */
    assert_int_not_equal(NA_Mem_handle_deserialize(fx->cli, &out, buf, size),
                         NA_SUCCESS);
    NA_Mem_deregister(fx->srv, mh);
    NA_Mem_handle_free(fx->srv, mh);
}

/* Cancel completes a posted receive once with NA_CANCELED; cancelling
 * again, or after completion, changes nothing. */
static void
test_cancel(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    uint8_t buf[64];
    struct result u = {0}, e = {0};
    na_op_id_t *u_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *e_op = NA_Op_create(fx->cli, 0);

    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, record_cb, &u,
                                            buf, sizeof(buf), NULL, u_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, u_op), NA_BUSY);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, u_op), NA_SUCCESS);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, u_op), NA_SUCCESS);
    assert_true(progress_until(fx, &u.calls, 1));
    assert_int_equal(u.ret, NA_CANCELED);

    /* An expected receive is with the provider: fi_cancel withdraws it. */
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, record_cb, &e, buf,
                                          sizeof(buf), NULL, fx->srv_addr, 0,
                                          99, e_op),
                     NA_SUCCESS);
    progress_some(fx, 5);
    assert_int_equal(NA_Cancel(fx->cli, fx->cctx, e_op), NA_SUCCESS);
    assert_true(progress_until(fx, &e.calls, 1));
    assert_int_equal(e.ret, NA_CANCELED);

    progress_some(fx, 20);
    assert_int_equal(NA_Cancel(fx->srv, fx->sctx, u_op), NA_SUCCESS);
    assert_int_equal(NA_Cancel(fx->cli, fx->cctx, e_op), NA_SUCCESS);
    progress_some(fx, 20);
    assert_int_equal(u.calls, 1);
    assert_int_equal(e.calls, 1);
    assert_int_equal(NA_Op_destroy(fx->srv, u_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->cli, e_op), NA_SUCCESS);
}

/* A peer nobody listens on: the operation fails, it does not hang. */
static void
test_unreachable_peer(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    na_class_t *gone;
    na_context_t *gone_ctx;
    na_addr_t gone_self, dead;
    char info[64], str[128];
    size_t str_size = sizeof(str);
    uint8_t buf[2048] = {0};
    struct result s = {0};
    na_op_id_t *op = NA_Op_create(fx->cli, 0);
    na_return_t ret;

    /* Learn a port that was just free, then close its class. */
    info_string(info, sizeof(info), fx->protocol);
    gone = NA_Initialize(info, true);
    assert_non_null(gone);
    gone_ctx = NA_Context_create(gone);
    assert_int_equal(NA_Addr_self(gone, &gone_self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(gone, str, &str_size, gone_self),
                     NA_SUCCESS);
    NA_Addr_free(gone, gone_self);
    NA_Context_destroy(gone, gone_ctx);
    assert_int_equal(NA_Finalize(gone), NA_SUCCESS);

    /* Either the post fails (sockets connects at post time) or the op
     * completes with an error (tcp;ofi_rxm, after its retry bound). */
    assert_int_equal(NA_Addr_lookup(fx->cli, str, &dead), NA_SUCCESS);
    ret = NA_Msg_send_expected(fx->cli, fx->cctx, record_cb, &s, buf,
                               sizeof(buf), NULL, dead, 0, 1, op);
    if (ret == NA_SUCCESS) {
        assert_true(progress_until(fx, &s.calls, 1));
        ret = s.ret;
    }
    print_message("send to a closed port: %s\n", NA_Error_to_string(ret));
    assert_int_equal(ret, NA_HOSTUNREACH);
    NA_Addr_free(fx->cli, dead);
    assert_int_equal(NA_Op_destroy(fx->cli, op), NA_SUCCESS);
}

static void
test_bad_strings(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    static const char *bad_init[] = {
        "ofi+tcp://256.1.1.1:x",
        "ofi+nosuchprov://",
        "",
        "ofi+tcp://1.2.3",
        "ofi+tcp://127.0.0.1:65536",
        "ofi+tcp://127.0.0.1:-1",
        "ofi+sockets://example.invalid:1",
        "ofi+tcp://198.51.100.7:0", /* TEST-NET-2: not an address of ours */
    };
    static const char *bad_lookup[] = {
        "",
        "ofi+tcp://",
        "ofi+tcp://256.1.1.1:1",
        "ofi+tcp://1.2.3.4:x",
        "ofi+tcp://1.2.3.4:0",
        "ofi+tcp://1.2.3.4",
        "ofi+tcp://1.2.3.4:99999",
        "ofi+verbs://1.2.3.4:5",
        "ofi+tcp://0.0.0.0:5",
        "1.2.3.4:",
        "ofi+tcp://[::1]:5",
        "ofi+tcp://1.2.3.4:5:6",
    };
    na_addr_t addr;

    for (size_t i = 0; i < sizeof(bad_init) / sizeof(bad_init[0]); i++) {
        na_class_t *c = NA_Initialize(bad_init[i], false);
        if (c != NULL)
            fail_msg("NA_Initialize(\"%s\") succeeded", bad_init[i]);
    }
    for (size_t i = 0; i < sizeof(bad_lookup) / sizeof(bad_lookup[0]); i++) {
        na_return_t ret = NA_Addr_lookup(fx->cli, bad_lookup[i], &addr);
        if (ret == NA_SUCCESS)
            fail_msg("NA_Addr_lookup(\"%s\") succeeded", bad_lookup[i]);
    }
}

/*
 * Threads: each class has a progress thread, and two client threads post
 * request/reply exchanges concurrently. The server echoes every
 * unexpected message back as an expected one with the same tag.
 */
#define MT_SLOTS 8
#define MT_SENDERS 2
#define MT_ROUNDS 300

struct mt_slot {
    struct mt_server *srv;
    na_op_id_t *recv_op, *send_op;
    uint8_t buf[256], reply[256];
    na_addr_t source;
};

struct mt_server {
    na_class_t *c;
    na_context_t *ctx;
    struct mt_slot slots[MT_SLOTS];
    atomic_int errors;
};

struct mt_progress {
    na_class_t *c;
    na_context_t *ctx;
    atomic_bool stop;
};

struct mt_sender {
    struct fixture *fx;
    int id;
    atomic_int done;
    atomic_int errors;
};

static void mt_post_recv(struct mt_slot *slot);

static void
mt_reply_cb(const struct na_cb_info *info)
{
    struct mt_slot *slot = info->arg;

    if (info->ret != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
    NA_Addr_free(slot->srv->c, slot->source);
    mt_post_recv(slot);
}

static void
mt_recv_cb(const struct na_cb_info *info)
{
    struct mt_slot *slot = info->arg;
    const struct na_cb_info_recv_unexpected *u = &info->info.recv_unexpected;

    if (info->ret == NA_CANCELED)
        return;
    if (info->ret != NA_SUCCESS) {
        atomic_fetch_add(&slot->srv->errors, 1);
        return;
    }
    slot->source = u->source;
    memcpy(slot->reply, slot->buf, u->actual_buf_size);
    if (NA_Msg_send_expected(slot->srv->c, slot->srv->ctx, mt_reply_cb, slot,
                             slot->reply, u->actual_buf_size, NULL, u->source,
                             0, u->tag, slot->send_op) != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
}

static void
mt_post_recv(struct mt_slot *slot)
{
    if (NA_Msg_recv_unexpected(slot->srv->c, slot->srv->ctx, mt_recv_cb, slot,
                               slot->buf, sizeof(slot->buf), NULL,
                               slot->recv_op) != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
}

static void *
mt_progress_main(void *arg)
{
    struct mt_progress *p = arg;

    while (!atomic_load(&p->stop)) {
        NA_Poll_wait(p->c, p->ctx, 10, NULL);
        NA_Trigger(p->ctx, 64, NULL);
    }
    return NULL;
}

static void
mt_count_cb(const struct na_cb_info *info)
{
    struct mt_sender *s = info->arg;

    if (info->ret != NA_SUCCESS)
        atomic_fetch_add(&s->errors, 1);
    atomic_fetch_add(&s->done, 1);
}

/* Wait for a counter that the progress thread advances. */
static bool
mt_wait(atomic_int *counter, int want, uint64_t deadline, na_class_t *c)
{
    while (atomic_load(counter) < want) {
        if (NA_Clock_now(c) > deadline)
            return false;
        sched_yield();
    }
    return true;
}

static void *
mt_sender_main(void *arg)
{
    struct mt_sender *s = arg;
    struct fixture *fx = s->fx;
    na_op_id_t *send_op = NA_Op_create(fx->cli, 0);
    na_op_id_t *recv_op = NA_Op_create(fx->cli, 0);
    uint64_t deadline = NA_Clock_now(fx->cli) + TEST_TIMEOUT_NS;
    uint8_t out[64], in[64];

    for (int i = 0; i < MT_ROUNDS; i++) {
        na_tag_t tag = (na_tag_t) (s->id * 1000000 + i);
        int want = atomic_load(&s->done) + 2;

        fill(out, sizeof(out), (unsigned) tag);
        memset(in, 0, sizeof(in));
        if (NA_Msg_recv_expected(fx->cli, fx->cctx, mt_count_cb, s, in,
                                 sizeof(in), NULL, fx->srv_addr, 0, tag,
                                 recv_op) != NA_SUCCESS ||
            NA_Msg_send_unexpected(fx->cli, fx->cctx, mt_count_cb, s, out,
                                   (size_t) 1 + i % 64, NULL, fx->srv_addr, 0,
                                   tag, send_op) != NA_SUCCESS ||
            !mt_wait(&s->done, want, deadline, fx->cli) ||
            memcmp(in, out, (size_t) 1 + i % 64) != 0) {
            atomic_fetch_add(&s->errors, 1);
            break;
        }
    }
    NA_Op_destroy(fx->cli, send_op);
    NA_Op_destroy(fx->cli, recv_op);
    return NULL;
}

static void
test_threads(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    struct mt_server srv = {.c = fx->srv, .ctx = fx->sctx};
    struct mt_progress sp = {.c = fx->srv, .ctx = fx->sctx};
    struct mt_progress cp = {.c = fx->cli, .ctx = fx->cctx};
    struct mt_sender senders[MT_SENDERS];
    pthread_t st, ct, sender_threads[MT_SENDERS];
    int cancelled = 0;

    atomic_init(&srv.errors, 0);
    atomic_init(&sp.stop, false);
    atomic_init(&cp.stop, false);
    for (int i = 0; i < MT_SLOTS; i++) {
        srv.slots[i].srv = &srv;
        srv.slots[i].recv_op = NA_Op_create(fx->srv, 0);
        srv.slots[i].send_op = NA_Op_create(fx->srv, 0);
        mt_post_recv(&srv.slots[i]);
    }
    pthread_create(&st, NULL, mt_progress_main, &sp);
    pthread_create(&ct, NULL, mt_progress_main, &cp);
    for (int i = 0; i < MT_SENDERS; i++) {
        senders[i].fx = fx;
        senders[i].id = i + 1;
        atomic_init(&senders[i].done, 0);
        atomic_init(&senders[i].errors, 0);
        pthread_create(&sender_threads[i], NULL, mt_sender_main, &senders[i]);
    }
    for (int i = 0; i < MT_SENDERS; i++)
        pthread_join(sender_threads[i], NULL);

    /* Stop the server's receives while its progress thread still runs;
     * each slot's receive completes (cancelled) before its op is freed. */
    for (int i = 0; i < MT_SLOTS; i++)
        NA_Cancel(fx->srv, fx->sctx, srv.slots[i].recv_op);
    atomic_store(&cp.stop, true);
    pthread_join(ct, NULL);
    atomic_store(&sp.stop, true);
    pthread_join(st, NULL);
    for (int i = 0; i < MT_SLOTS; i++) {
        uint64_t deadline = NA_Clock_now(fx->srv) + TEST_TIMEOUT_NS;
        while (NA_Op_destroy(fx->srv, srv.slots[i].recv_op) != NA_SUCCESS) {
            assert_true(NA_Clock_now(fx->srv) < deadline);
            /* A reply finishing late may have reposted the receive. */
            NA_Cancel(fx->srv, fx->sctx, srv.slots[i].recv_op);
            NA_Poll_wait(fx->srv, fx->sctx, 1, NULL);
            NA_Trigger(fx->sctx, 64, NULL);
        }
        cancelled++;
        assert_int_equal(NA_Op_destroy(fx->srv, srv.slots[i].send_op),
                         NA_SUCCESS);
    }
    assert_int_equal(cancelled, MT_SLOTS);
    for (int i = 0; i < MT_SENDERS; i++) {
        assert_int_equal(atomic_load(&senders[i].errors), 0);
        assert_int_equal(atomic_load(&senders[i].done), 2 * MT_ROUNDS);
    }
    assert_int_equal(atomic_load(&srv.errors), 0);
}

/*
 * With no provider of that name in the process, initialization fails and
 * says which provider it wanted. libfabric reads FI_PROVIDER once per
 * process, so this runs in a child started with FI_PROVIDER=shm.
 */
static int
child_missing_provider(void)
{
    na_class_t *c = NA_Initialize("ofi+tcp://127.0.0.1:0", true);
    return c == NULL ? 0 : 1;
}

static void
test_missing_provider(void **state)
{
    const char *self_exe = "/proc/self/exe";
    char *argv[] = {"test_ofi", "--missing-provider", NULL};
    char *envp[] = {"FI_PROVIDER=shm", NULL};
    int pipefd[2], status;
    posix_spawn_file_actions_t fa;
    pid_t pid;
    char out[4096];
    size_t len = 0;
    ssize_t n;

    (void) state;
    assert_int_equal(pipe(pipefd), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    assert_int_equal(posix_spawn(&pid, self_exe, &fa, NULL, argv, envp), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    while (len < sizeof(out) - 1 &&
           (n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
        len += (size_t) n;
    out[len] = '\0';
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    print_message("child said: %s", out);
    assert_non_null(strstr(out, "tcp;ofi_rxm"));
}

#define OFI_TESTS                                                              \
    cmocka_unit_test_setup_teardown(test_addr_roundtrip, setup, teardown),     \
        cmocka_unit_test_setup_teardown(test_unexpected_small, setup,          \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_unexpected_max_msg_buf, setup,    \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_unexpected_mid_plain_buf, setup,  \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_unexpected_backlog, setup,        \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_addr_cache_bound, setup,          \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_expected_tags, setup, teardown),  \
        cmocka_unit_test_setup_teardown(test_context_ids, setup, teardown),    \
        cmocka_unit_test_setup_teardown(test_rma, setup, teardown),            \
        cmocka_unit_test_setup_teardown(test_mem_handle_bad_bytes, setup,      \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),         \
        cmocka_unit_test_setup_teardown(test_unreachable_peer, setup,          \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),        \
        cmocka_unit_test_setup_teardown(test_bad_strings, setup, teardown),    \
        cmocka_unit_test_setup_teardown(test_addr_set_remove, setup, teardown)

static int
run_provider(const struct config *config)
{
    struct CMUnitTest tests[] = {OFI_TESTS};
    char name[64];

    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        tests[i].initial_state = (void *) config;
    snprintf(name, sizeof(name), "ofi+%s%s%s", config->protocol,
             config->no_multi_recv ? " (no_multi_recv)" : "",
             config->multi_recv_op_max == 1 ? " (multi_recv_op_max 1)" : "");
    return _cmocka_run_group_tests(
        name, tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest common[] = {
        cmocka_unit_test(test_missing_provider),
    };
    int failed = 0;

    if (argc > 1 && strcmp(argv[1], "--missing-provider") == 0)
        return child_missing_provider();
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
    static const struct config configs[] = {
        {"tcp", false, 0},
        {"tcp", true, 0},
        {"sockets", false, 0},
        /* One multi-receive buffer: every message waits for its repost. */
        {"tcp", false, 1}};
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
        failed += run_provider(&configs[i]);
    failed += cmocka_run_group_tests_name("ofi", common, NULL, NULL);
    return failed;
}
