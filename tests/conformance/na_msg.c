/*
 * NA conformance, messages: unexpected and expected exchanges, tag
 * matching with early arrivals, context ids, size limits, the unexpected
 * backlog, cancel, and peers that are gone. See docs/conformance.md.
 */
#include "conformance/na_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
fill(unsigned char *buf, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (unsigned char) (seed + i * 7);
}

/*
 * An unexpected message carries its tag and a source the receiver can
 * answer to; the answer is an expected message matched by tag.
 */
static void
exchange(struct na_env *env, size_t size, bool use_msg_buf)
{
    size_t max = NA_Msg_get_max_unexpected_size(env->cli);
    void *sdata = NULL, *rdata = NULL;
    unsigned char *sbuf, *rbuf, reply[64], rreply[64];
    struct na_result s = {0}, r = {0}, rs = {0}, rr = {0};
    na_op_id_t *s_op = NA_Op_create(env->cli, 0);
    na_op_id_t *r_op = NA_Op_create(env->srv, 0);
    na_op_id_t *rs_op = NA_Op_create(env->srv, 0);
    na_op_id_t *rr_op = NA_Op_create(env->cli, 0);

    assert_true(size <= max);
    if (use_msg_buf) {
        sbuf = NA_Msg_buf_alloc(env->cli, max, 0, &sdata);
        rbuf = NA_Msg_buf_alloc(env->srv, max, 0, &rdata);
    } else {
        sbuf = malloc(max);
        rbuf = malloc(max);
    }
    assert_non_null(sbuf);
    assert_non_null(rbuf);
    fill(sbuf, size, 3);
    memset(rbuf, 0, max);

    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &r,
                                        rbuf, max, rdata, r_op));
    assert_na_ok(NA_Msg_recv_expected(env->cli, env->cctx, na_record_cb, &rr,
                                      rreply, sizeof(rreply), NULL,
                                      env->srv_addr, 0, 0x1234, rr_op));
    assert_na_ok(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &s,
                                        sbuf, size, sdata, env->srv_addr, 0, 42,
                                        s_op));
    /* Callbacks run from NA_Trigger only, never inside a post. */
    assert_int_equal(s.calls + r.calls + rr.calls, 0);
    na_drive(env, &r.calls, 1);
    na_drive(env, &s.calls, 1);
    assert_na_ok(s.ret);
    assert_int_equal(s.type, NA_CB_SEND_UNEXPECTED);
    assert_na_ok(r.ret);
    assert_int_equal(r.type, NA_CB_RECV_UNEXPECTED);
    assert_int_equal(r.size, size);
    assert_int_equal(r.tag, 42);
    assert_memory_equal(rbuf, sbuf, size);
    /* The source is the client the server already knows. */
    assert_non_null(r.source);
    assert_true(NA_Addr_cmp(env->srv, r.source, env->cli_addr));
    assert_false(NA_Addr_is_self(env->srv, r.source));

    /* Answer through the source address. */
    fill(reply, sizeof(reply), 9);
    assert_na_ok(NA_Msg_send_expected(env->srv, env->sctx, na_record_cb, &rs,
                                      reply, sizeof(reply), NULL, r.source, 0,
                                      0x1234, rs_op));
    na_drive(env, &rr.calls, 1);
    na_drive(env, &rs.calls, 1);
    assert_na_ok(rs.ret);
    assert_int_equal(rs.type, NA_CB_SEND_EXPECTED);
    assert_na_ok(rr.ret);
    assert_int_equal(rr.type, NA_CB_RECV_EXPECTED);
    assert_int_equal(rr.size, sizeof(reply));
    assert_memory_equal(rreply, reply, sizeof(reply));

    /* Exactly once each. */
    na_settle(env, 10);
    assert_int_equal(s.calls + r.calls + rs.calls + rr.calls, 4);
    NA_Addr_free(env->srv, r.source);
    assert_na_ok(NA_Op_destroy(env->cli, s_op));
    assert_na_ok(NA_Op_destroy(env->srv, r_op));
    assert_na_ok(NA_Op_destroy(env->srv, rs_op));
    assert_na_ok(NA_Op_destroy(env->cli, rr_op));
    if (use_msg_buf) {
        assert_na_ok(NA_Msg_buf_free(env->cli, sbuf, sdata));
        assert_na_ok(NA_Msg_buf_free(env->srv, rbuf, rdata));
    } else {
        free(sbuf);
        free(rbuf);
    }
}

static void
test_exchange_small(void **state)
{
    struct na_env *env = *state;

    exchange(env, 8, false);
    na_env_finish(env);
}

static void
test_exchange_max_msg_buf(void **state)
{
    struct na_env *env = *state;

    exchange(env, NA_Msg_get_max_unexpected_size(env->cli), true);
    na_env_finish(env);
}

static void
test_exchange_empty_and_mid(void **state)
{
    struct na_env *env = *state;
    size_t max = NA_Msg_get_max_unexpected_size(env->cli);

    exchange(env, 0, false);
    exchange(env, max / 2 + 1, false);
    na_env_finish(env);
}

/*
 * Expected messages match by tag whatever the order: two receives posted
 * first and their messages sent in the opposite order; then many messages
 * sent before any receive exists (early arrivals, and far more messages
 * than a credit-based plugin has credits), received in reverse tag order.
 */
#define N_EARLY 100

static void
test_tag_matching(void **state)
{
    struct na_env *env = *state;
    struct na_result r1 = {0}, r2 = {0}, s1 = {0}, s2 = {0};
    struct na_result rs[N_EARLY], rr[N_EARLY];
    unsigned char b1[16] = {0}, b2[2000] = {0}, m2[2000];
    uint32_t out[N_EARLY], in[N_EARLY];
    na_op_id_t *send[N_EARLY], *recv[N_EARLY];

    for (int i = 0; i < N_EARLY; i++) {
        send[i] = NA_Op_create(env->cli, 0);
        recv[i] = NA_Op_create(env->srv, 0);
    }
    fill(m2, sizeof(m2), 22);
    assert_na_ok(NA_Msg_recv_expected(env->srv, env->sctx, na_record_cb, &r1,
                                      b1, sizeof(b1), NULL, env->cli_addr, 0, 1,
                                      recv[0]));
    assert_na_ok(NA_Msg_recv_expected(env->srv, env->sctx, na_record_cb, &r2,
                                      b2, sizeof(b2), NULL, env->cli_addr, 0, 2,
                                      recv[1]));
    assert_na_ok(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &s2,
                                      m2, sizeof(m2), NULL, env->srv_addr, 0, 2,
                                      send[1]));
    assert_na_ok(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &s1,
                                      "one", 4, NULL, env->srv_addr, 0, 1,
                                      send[0]));
    na_drive(env, &r1.calls, 1);
    na_drive(env, &r2.calls, 1);
    na_drive(env, &s1.calls, 1);
    na_drive(env, &s2.calls, 1);
    assert_na_ok(r1.ret);
    assert_na_ok(r2.ret);
    assert_na_ok(s1.ret);
    assert_na_ok(s2.ret);
    assert_int_equal(r1.size, 4);
    assert_int_equal(r2.size, sizeof(m2));
    assert_string_equal((char *) b1, "one");
    assert_memory_equal(b2, m2, sizeof(m2));

    memset(rs, 0, sizeof(rs));
    memset(rr, 0, sizeof(rr));
    for (int i = 0; i < N_EARLY; i++) {
        out[i] = 0xa5000000u + (uint32_t) i;
        in[i] = 0;
        assert_na_ok(NA_Msg_send_expected(
            env->cli, env->cctx, na_record_cb, &rs[i], &out[i], sizeof(out[i]),
            NULL, env->srv_addr, 0, (na_tag_t) (100 + i), send[i]));
    }
    for (int i = 0; i < N_EARLY; i++) {
        na_drive(env, &rs[i].calls, 1);
        assert_na_ok(rs[i].ret);
    }
    for (int i = N_EARLY - 1; i >= 0; i--)
        assert_na_ok(NA_Msg_recv_expected(
            env->srv, env->sctx, na_record_cb, &rr[i], &in[i], sizeof(in[i]),
            NULL, env->cli_addr, 0, (na_tag_t) (100 + i), recv[i]));
    for (int i = 0; i < N_EARLY; i++) {
        na_drive(env, &rr[i].calls, 1);
        assert_na_ok(rr[i].ret);
        assert_int_equal(rr[i].size, sizeof(uint32_t));
        assert_int_equal(in[i], out[i]);
    }

    /* A receive for a tag nobody sent stays pending, then cancels. */
    memset(&r1, 0, sizeof(r1));
    assert_na_ok(NA_Msg_recv_expected(env->srv, env->sctx, na_record_cb, &r1,
                                      b1, sizeof(b1), NULL, env->cli_addr, 0,
                                      999999, recv[0]));
    na_settle(env, 20);
    assert_int_equal(r1.calls, 0);
    assert_na_ok(NA_Cancel(env->srv, env->sctx, recv[0]));
    na_drive(env, &r1.calls, 1);
    assert_na_ret(r1.ret, NA_CANCELED);
    assert_int_equal(r1.type, NA_CB_RECV_EXPECTED);

    na_settle(env, 10);
    for (int i = 0; i < N_EARLY; i++) {
        assert_int_equal(rs[i].calls + rr[i].calls, 2);
        assert_na_ok(NA_Op_destroy(env->cli, send[i]));
        assert_na_ok(NA_Op_destroy(env->srv, recv[i]));
    }
    na_env_finish(env);
}

/*
 * Context ids: an unexpected message reaches the receives of the context
 * id it was sent to, and an expected reply matches only the receive that
 * names the replying context's id.
 */
static void
test_context_ids(void **state)
{
    struct na_env *env = *state;
    unsigned char req[32], r0[32], r1[32], rep[48], q0[48], q1[48];
    struct na_result u0 = {0}, u1 = {0}, s = {0}, rs = {0}, e0 = {0}, e1 = {0};
    na_op_id_t *u0_op = NA_Op_create(env->srv, 0);
    na_op_id_t *u1_op = NA_Op_create(env->srv, 0);
    na_op_id_t *rs_op = NA_Op_create(env->srv, 0);
    na_op_id_t *s_op = NA_Op_create(env->cli, 0);
    na_op_id_t *e0_op = NA_Op_create(env->cli, 0);
    na_op_id_t *e1_op = NA_Op_create(env->cli, 0);

    fill(req, sizeof(req), 4);
    fill(rep, sizeof(rep), 8);
    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &u0,
                                        r0, sizeof(r0), NULL, u0_op));
    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx1, na_record_cb, &u1,
                                        r1, sizeof(r1), NULL, u1_op));
    /* Replies from server context 0 and from server context 1, same tag. */
    assert_na_ok(NA_Msg_recv_expected(env->cli, env->cctx, na_record_cb, &e0,
                                      q0, sizeof(q0), NULL, env->srv_addr, 0,
                                      55, e0_op));
    assert_na_ok(NA_Msg_recv_expected(env->cli, env->cctx, na_record_cb, &e1,
                                      q1, sizeof(q1), NULL, env->srv_addr, 1,
                                      55, e1_op));
    assert_na_ok(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &s,
                                        req, sizeof(req), NULL, env->srv_addr,
                                        1, 55, s_op));
    na_drive(env, &u1.calls, 1);
    na_drive(env, &s.calls, 1);
    assert_na_ok(s.ret);
    assert_na_ok(u1.ret);
    assert_memory_equal(r1, req, sizeof(req));
    assert_int_equal(u0.calls, 0);

    /* Context 1 answers: only the receive naming source id 1 matches. */
    assert_na_ok(NA_Msg_send_expected(env->srv, env->sctx1, na_record_cb, &rs,
                                      rep, sizeof(rep), NULL, u1.source, 0, 55,
                                      rs_op));
    na_drive(env, &e1.calls, 1);
    na_drive(env, &rs.calls, 1);
    assert_na_ok(rs.ret);
    assert_na_ok(e1.ret);
    assert_memory_equal(q1, rep, sizeof(rep));
    na_settle(env, 10);
    assert_int_equal(e0.calls, 0);
    assert_int_equal(u0.calls, 0);

    assert_na_ok(NA_Cancel(env->srv, env->sctx, u0_op));
    assert_na_ok(NA_Cancel(env->cli, env->cctx, e0_op));
    na_drive(env, &u0.calls, 1);
    na_drive(env, &e0.calls, 1);
    assert_na_ret(u0.ret, NA_CANCELED);
    assert_na_ret(e0.ret, NA_CANCELED);
    NA_Addr_free(env->srv, u1.source);
    assert_na_ok(NA_Op_destroy(env->srv, u0_op));
    assert_na_ok(NA_Op_destroy(env->srv, u1_op));
    assert_na_ok(NA_Op_destroy(env->srv, rs_op));
    assert_na_ok(NA_Op_destroy(env->cli, s_op));
    assert_na_ok(NA_Op_destroy(env->cli, e0_op));
    assert_na_ok(NA_Op_destroy(env->cli, e1_op));
    na_env_finish(env);
}

/*
 * Size limits: the plugin's limits are sane, a message over them is
 * refused at post time without a completion, and a message larger than
 * the receive's buffer fails that receive without writing past it.
 */
static void
test_message_size(void **state)
{
    struct na_env *env = *state;
    size_t max_u = NA_Msg_get_max_unexpected_size(env->cli);
    size_t max_e = NA_Msg_get_max_expected_size(env->cli);
    size_t big_size = (max_u > max_e ? max_u : max_e) + 1;
    unsigned char *big = calloc(1, big_size), small[16];
    struct na_result s = {0}, r = {0}, x = {0};
    na_op_id_t *send = NA_Op_create(env->cli, 0);
    na_op_id_t *recv = NA_Op_create(env->srv, 0);

    assert_non_null(big);
    assert_true(max_u >= 512);
    assert_true(max_e >= 512);
    assert_int_equal(NA_Msg_get_max_unexpected_size(env->srv), max_u);
    assert_true(NA_Msg_get_max_tag(env->cli) >= 0xffffU);
    assert_true(NA_Msg_get_max_tag(env->srv) == NA_Msg_get_max_tag(env->cli));

    /* Over the limit: refused at post, no completion ever. */
    assert_na_ret(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &x,
                                         big, max_u + 1, NULL, env->srv_addr, 0,
                                         0, send),
                  NA_MSGSIZE);
    assert_na_ret(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &x,
                                       big, max_e + 1, NULL, env->srv_addr, 0,
                                       0, send),
                  NA_MSGSIZE);
    /* A tag above the class's largest is refused at post as well. */
    if (NA_Msg_get_max_tag(env->cli) < UINT32_MAX)
        assert_na_ret(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb,
                                           &x, big, 1, NULL, env->srv_addr, 0,
                                           NA_Msg_get_max_tag(env->cli) + 1,
                                           send),
                      NA_INVALID_ARG);
    na_settle(env, 10);
    assert_int_equal(x.calls, 0);

    /* Larger than the posted buffer: the receive fails with NA_MSGSIZE,
     * nothing is written past its end; the send itself was delivered. */
    memset(small, 0, sizeof(small));
    assert_na_ok(NA_Msg_recv_expected(env->srv, env->sctx, na_record_cb, &r,
                                      small, 4, NULL, env->cli_addr, 0, 5,
                                      recv));
    /* One byte over: the boundary an off-by-one would miss. */
    fill(big, 5, 1);
    assert_na_ok(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &s,
                                      big, 5, NULL, env->srv_addr, 0, 5, send));
    na_drive(env, &r.calls, 1);
    na_drive(env, &s.calls, 1);
    print_message("expected message of 5 bytes into a 4-byte receive: "
                  "receive %s, send %s\n",
                  NA_Error_to_string(r.ret), NA_Error_to_string(s.ret));
    assert_na_ret(r.ret, NA_MSGSIZE);
    assert_na_ok(s.ret);
    for (size_t i = 4; i < sizeof(small); i++)
        assert_int_equal(small[i], 0);

    na_settle(env, 10);
    assert_int_equal(r.calls + s.calls, 2);
    assert_na_ok(NA_Op_destroy(env->cli, send));
    assert_na_ok(NA_Op_destroy(env->srv, recv));
    free(big);
    na_env_finish(env);
}

/* Unexpected messages sent before any receive is posted wait at the
 * destination: the sends complete, and later receives take them in order
 * with their tags and sources. */
static void
test_unexpected_backlog(void **state)
{
    struct na_env *env = *state;
    unsigned char sbuf[3][300], rbuf[3][300];
    struct na_result s[3], r[3];
    na_op_id_t *s_op[3], *r_op[3];

    memset(s, 0, sizeof(s));
    memset(r, 0, sizeof(r));
    for (int i = 0; i < 3; i++) {
        s_op[i] = NA_Op_create(env->cli, 0);
        r_op[i] = NA_Op_create(env->srv, 0);
        fill(sbuf[i], sizeof(sbuf[i]), (unsigned) i + 1);
        assert_na_ok(NA_Msg_send_unexpected(
            env->cli, env->cctx, na_record_cb, &s[i], sbuf[i],
            sizeof(sbuf[i]) - (size_t) i, NULL, env->srv_addr, 0,
            (na_tag_t) (7 + i), s_op[i]));
    }
    for (int i = 0; i < 3; i++) {
        na_drive(env, &s[i].calls, 1);
        assert_na_ok(s[i].ret);
    }
    /* Let the messages reach the server with no receive posted. */
    na_settle(env, 20);
    for (int i = 0; i < 3; i++) {
        memset(rbuf[i], 0, sizeof(rbuf[i]));
        assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb,
                                            &r[i], rbuf[i], sizeof(rbuf[i]),
                                            NULL, r_op[i]));
        na_drive(env, &r[i].calls, 1);
        assert_na_ok(r[i].ret);
        assert_int_equal(r[i].tag, 7 + i);
        assert_int_equal(r[i].size, sizeof(sbuf[i]) - (size_t) i);
        assert_memory_equal(rbuf[i], sbuf[i], r[i].size);
        assert_true(NA_Addr_cmp(env->srv, r[i].source, env->cli_addr));
        NA_Addr_free(env->srv, r[i].source);
    }
    for (int i = 0; i < 3; i++) {
        assert_na_ok(NA_Op_destroy(env->cli, s_op[i]));
        assert_na_ok(NA_Op_destroy(env->srv, r_op[i]));
    }
    na_env_finish(env);
}

/*
 * Cancel of receives: a posted receive keeps its op and context busy;
 * cancel completes it once with NA_CANCELED, cancelling again or after
 * completion changes nothing.
 */
static void
test_cancel_recv(void **state)
{
    struct na_env *env = *state;
    unsigned char buf[64];
    struct na_result u = {0}, e = {0};
    na_op_id_t *u_op = NA_Op_create(env->srv, 0);
    na_op_id_t *e_op = NA_Op_create(env->cli, 0);

    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &u,
                                        buf, sizeof(buf), NULL, u_op));
    assert_na_ret(NA_Op_destroy(env->srv, u_op), NA_BUSY);
    assert_na_ok(NA_Cancel(env->srv, env->sctx, u_op));
    assert_na_ok(NA_Cancel(env->srv, env->sctx, u_op));
    assert_int_equal(u.calls, 0);
    na_drive(env, &u.calls, 1);
    assert_na_ret(u.ret, NA_CANCELED);
    assert_int_equal(u.type, NA_CB_RECV_UNEXPECTED);

    assert_na_ok(NA_Msg_recv_expected(env->cli, env->cctx, na_record_cb, &e,
                                      buf, sizeof(buf), NULL, env->srv_addr, 0,
                                      99, e_op));
    na_settle(env, 5);
    /* Completions not yet triggered keep the context busy. */
    assert_na_ok(NA_Cancel(env->cli, env->cctx, e_op));
    for (int i = 0; i < 1000 && NA_Context_get_completion_count(env->cctx) == 0;
         i++)
        (void) NA_Poll(env->cli, env->cctx, NULL);
    assert_true(NA_Context_get_completion_count(env->cctx) > 0);
    assert_na_ret(NA_Context_destroy(env->cli, env->cctx), NA_BUSY);
    na_drive(env, &e.calls, 1);
    assert_na_ret(e.ret, NA_CANCELED);
    assert_int_equal(e.type, NA_CB_RECV_EXPECTED);

    /* After completion: no-ops, and no second callback. */
    assert_na_ok(NA_Cancel(env->srv, env->sctx, u_op));
    assert_na_ok(NA_Cancel(env->cli, env->cctx, e_op));
    na_settle(env, 10);
    assert_int_equal(u.calls, 1);
    assert_int_equal(e.calls, 1);
    assert_na_ret(NA_Trigger(env->cctx, 16, NULL), NA_TIMEOUT);
    assert_na_ok(NA_Op_destroy(env->srv, u_op));
    assert_na_ok(NA_Op_destroy(env->cli, e_op));
    na_env_finish(env);
}

/*
 * Cancel of a send right after its post: it completes exactly once, with
 * NA_SUCCESS (it had already left) or NA_CANCELED, and a send reported
 * cancelled is never delivered.
 */
static void
test_cancel_send(void **state)
{
    struct na_env *env = *state;
    unsigned char buf[64];
    struct na_result s = {0}, r = {0};
    na_op_id_t *s_op = NA_Op_create(env->cli, 0);
    na_op_id_t *r_op = NA_Op_create(env->srv, 0);

    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &r,
                                        buf, sizeof(buf), NULL, r_op));
    assert_na_ok(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &s,
                                        "gone", 5, NULL, env->srv_addr, 0, 3,
                                        s_op));
    assert_na_ok(NA_Cancel(env->cli, env->cctx, s_op));
    na_drive(env, &s.calls, 1);
    print_message("send cancelled right after its post: %s\n",
                  NA_Error_to_string(s.ret));
    assert_true(s.ret == NA_SUCCESS || s.ret == NA_CANCELED);
    assert_int_equal(s.type, NA_CB_SEND_UNEXPECTED);
    if (s.ret == NA_SUCCESS) {
        na_drive(env, &r.calls, 1);
        assert_na_ok(r.ret);
        assert_string_equal((char *) buf, "gone");
        NA_Addr_free(env->srv, r.source);
    } else {
        na_settle(env, 50);
        assert_int_equal(r.calls, 0);
        assert_na_ok(NA_Cancel(env->srv, env->sctx, r_op));
        na_drive(env, &r.calls, 1);
        assert_na_ret(r.ret, NA_CANCELED);
    }
    assert_na_ok(NA_Cancel(env->cli, env->cctx, s_op));
    na_settle(env, 10);
    assert_int_equal(s.calls, 1);
    assert_int_equal(r.calls, 1);
    assert_na_ok(NA_Op_destroy(env->cli, s_op));
    assert_na_ok(NA_Op_destroy(env->srv, r_op));
    na_env_finish(env);
}

/* Post an operation to a peer that is gone and return its result: the
 * post's error, or the completion's. */
static na_return_t
to_gone(struct na_env *env, na_addr_t gone, int kind, na_op_id_t *op)
{
    static unsigned char buf[64];
    struct na_result r = {0};
    na_mem_handle_t lh = NULL;
    na_return_t ret;

    if (kind == 0)
        ret = NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &r, buf,
                                     sizeof(buf), NULL, gone, 0, 1, op);
    else if (kind == 1)
        ret = NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &r, buf,
                                   sizeof(buf), NULL, gone, 0, 1, op);
    else {
        lh = na_registered(env->cli, buf, sizeof(buf), NA_MEM_READWRITE);
        ret = NA_Get(env->cli, env->cctx, na_record_cb, &r, lh, 0, lh, 0, 8,
                     gone, 0, op);
    }
    if (ret == NA_SUCCESS) {
        na_drive(env, &r.calls, 1);
        ret = r.ret;
        na_settle(env, 5);
        assert_int_equal(r.calls, 1);
    }
    if (lh != NULL) {
        assert_na_ok(NA_Mem_deregister(env->cli, lh));
        NA_Mem_handle_free(env->cli, lh);
    }
    return ret;
}

/*
 * A peer that is gone (a listening class that was finalized): operations
 * to it fail, at post time or in their completion, and never hang; the
 * peers that are still there keep working.
 */
static void
test_unreachable(void **state)
{
    struct na_env *env = *state;
    char name[256];
    na_addr_t gone;
    na_op_id_t *op = NA_Op_create(env->cli, 0);
    na_return_t ret;
    static const char *what[] = {"unexpected send", "expected send", "get"};

    na_env_gone_address(env, name, sizeof(name));
    assert_na_ok(NA_Addr_lookup(env->cli, name, &gone));
    for (int kind = 0; kind < 3; kind++) {
        ret = to_gone(env, gone, kind, op);
        print_message("%s to %s (gone): %s\n", what[kind], name,
                      NA_Error_to_string(ret));
        assert_na_ret(ret, NA_HOSTUNREACH);
    }
    NA_Addr_free(env->cli, gone);
    assert_na_ok(NA_Op_destroy(env->cli, op));
    /* The server is still reachable. */
    exchange(env, 16, false);
    na_env_finish(env);
}

/* A listening class named sim://<name> with a context, on the sim. */
static na_class_t *
sim_peer(const char *name, na_context_t **ctx)
{
    na_class_t *peer = NA_Initialize(name, true);

    assert_non_null(peer);
    *ctx = NA_Context_create(peer);
    assert_non_null(*ctx);
    return peer;
}

static void
sim_peer_gone(na_class_t *peer, na_context_t *ctx)
{
    assert_na_ok(NA_Context_destroy(peer, ctx));
    assert_na_ok(NA_Finalize(peer));
}

/*
 * On the simulated fabric, addresses of a name whose class comes and goes:
 * one looked up before any class held the name reaches whichever holds it;
 * one looked up from a class is fenced off from the classes that take the
 * name after it. Either fails while nobody holds the name, however often
 * it was used before.
 */
static void
test_gone_after_use(void **state)
{
    static const char name[] = "sim://gone-after-use";
    struct na_env *env = *state;
    na_op_id_t *op;
    na_context_t *pctx;
    na_class_t *peer;
    na_addr_t early, first;

    if (!env->is_sim) {
        na_env_finish(env);
        skip();
    }
    op = NA_Op_create(env->cli, 0);
    assert_na_ok(NA_Addr_lookup(env->cli, name, &early));
    assert_na_ret(to_gone(env, early, 1, op), NA_HOSTUNREACH);
    peer = sim_peer(name, &pctx);
    assert_na_ok(NA_Addr_lookup(env->cli, name, &first));
    for (int i = 0; i < 3; i++) {
        assert_na_ok(to_gone(env, early, 1, op));
        assert_na_ok(to_gone(env, first, 1, op));
    }
    sim_peer_gone(peer, pctx);
    for (int kind = 1; kind <= 2; kind++) {
        assert_na_ret(to_gone(env, early, kind, op), NA_HOSTUNREACH);
        assert_na_ret(to_gone(env, first, kind, op), NA_HOSTUNREACH);
    }
    peer = sim_peer(name, &pctx);
    assert_na_ok(to_gone(env, early, 1, op));
    assert_na_ret(to_gone(env, first, 1, op), NA_HOSTUNREACH);
    sim_peer_gone(peer, pctx);
    assert_na_ret(to_gone(env, early, 1, op), NA_HOSTUNREACH);
    NA_Addr_free(env->cli, early);
    NA_Addr_free(env->cli, first);
    assert_na_ok(NA_Op_destroy(env->cli, op));
    na_env_finish(env);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        NA_TEST(test_exchange_small),
        NA_TEST(test_exchange_max_msg_buf),
        NA_TEST(test_exchange_empty_and_mid),
        NA_TEST(test_tag_matching),
        NA_TEST(test_context_ids),
        NA_TEST(test_message_size),
        NA_TEST(test_unexpected_backlog),
        NA_TEST(test_cancel_recv),
        NA_TEST(test_cancel_send),
        NA_TEST(test_unreachable),
        NA_TEST(test_gone_after_use),
    };

    return na_main(argc, argv, "na_msg", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
