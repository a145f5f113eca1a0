/*
 * Conformance: cancellation and timeouts of RPCs.
 *
 * The server's CT_RPC_HOLD handler keeps its request without answering
 * until a CT_RPC_RELEASE arrives, which gives every case a forward that is
 * certainly in flight, and a late response on demand.
 */
#include "conformance/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hg_handle_t
forward_hold(struct ct_env *env, uint32_t token, struct ct_op *op,
             ct_token_t *out, unsigned timeout_ms)
{
    ct_token_t in = {.token = token};
    hg_handle_t h;

    memset(op, 0, sizeof(*op));
    op->env = env;
    op->out = out;
    op->out_ret = HG_OTHER_ERROR;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.hold, &h));
    if (timeout_ms != 0)
        assert_hg_ok(HG_Forward_timed(h, ct_op_cb, op, &in, timeout_ms));
    else
        assert_hg_ok(HG_Forward(h, ct_op_cb, op, &in));
    return h;
}

/* The target has the request and will not answer: cancel wins, exactly
 * once, and the response released afterwards is dropped cleanly. */
static void
test_cancel_before_response(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_op op;
    ct_token_t out;
    hg_handle_t h;

    h = forward_hold(env, 5, &op, &out, 0);
    ct_wait_held(env, 1);
    assert_int_equal(op.calls, 0);
    assert_hg_ok(HG_Cancel(h));
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_hg_ret(op.ret, HG_CANCELED);

    /* Now the target answers the cancelled request. */
    assert_int_equal(ct_release_held(env), 1);
    ct_assert_once(env, &op);
    /* Cancelling again, after completion, is a no-op. */
    assert_hg_ok(HG_Cancel(h));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    ct_forward_null_ok(env);
    harness_finish(env);
}

/* Cancel right after posting, before anything was progressed: the
 * callback runs once, cancelled or with the result that won the race. */
static void
test_cancel_immediately(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    hg_handle_t h;
    struct ct_op op = {0};

    op.env = env;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, &h));
    assert_hg_ok(HG_Forward(h, ct_op_cb, &op, NULL));
    assert_hg_ok(HG_Cancel(h));
    assert_int_equal(op.calls, 0); /* never inside the call */
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    if (op.ret != HG_CANCELED && op.ret != HG_SUCCESS)
        fail_msg("cancelled forward completed with %s",
                 HG_Error_to_string(op.ret));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    ct_forward_null_ok(env);
    harness_finish(env);
}

static void
test_cancel_after_completion(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    hg_handle_t h;
    struct ct_op op = {0};

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, &h));
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));
    assert_hg_ok(HG_Cancel(h));
    ct_assert_once(env, &op);
    assert_hg_ok(op.ret);
    /* The handle is still usable. */
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    harness_finish(env);
}

#define CT_CANCEL_MANY 32

/* Many held forwards cancelled together: each completes once, cancelled,
 * and none of the late responses reaches anyone. */
static void
test_cancel_many(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_op op[CT_CANCEL_MANY];
    ct_token_t out[CT_CANCEL_MANY];
    hg_handle_t h[CT_CANCEL_MANY];
    int done = 0, i;

    for (i = 0; i < CT_CANCEL_MANY; i++) {
        h[i] = forward_hold(env, (uint32_t) i, &op[i], &out[i], 0);
        op[i].done = &done;
    }
    ct_wait_held(env, CT_CANCEL_MANY);
    for (i = CT_CANCEL_MANY - 1; i >= 0; i--)
        assert_hg_ok(HG_Cancel(h[i]));
    harness_run_until_count(env, &done, CT_CANCEL_MANY, CT_WAIT_MS);
    assert_int_equal(ct_release_held(env), CT_CANCEL_MANY);
    harness_settle(env, 20);
    for (i = 0; i < CT_CANCEL_MANY; i++) {
        if (op[i].calls != 1 || op[i].ret != HG_CANCELED)
            fail_msg("forward %d: %d callback(s), ret %s", i, op[i].calls,
                     HG_Error_to_string(op[i].ret));
        assert_hg_ok(HG_Destroy(h[i]));
    }
    ct_forward_null_ok(env);
    harness_finish(env);
}

/*
 * A deadline against a target that never answers: HG_TIMEOUT, once, not
 * before the deadline on the NA clock (virtual on the simulated fabric,
 * where the case takes no real time). The response released afterwards
 * must not reach the next forward, even one that reuses the pooled handle.
 */
static void
test_timeout(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_op op1, op2;
    ct_token_t out1, out2;
    ct_stats_out_t st;
    hg_handle_t h1, h2;
    uint32_t held1;
    uint64_t t0;

    t0 = harness_now_ns(env);
    h1 = forward_hold(env, 1, &op1, &out1, 200);
    harness_run_until(env, &op1.calls, CT_WAIT_MS);
    assert_hg_ret(op1.ret, HG_TIMEOUT);
    if (op1.at_ns - t0 < 200ULL * 1000000ULL)
        fail_msg("HG_TIMEOUT after %llu ns on the NA clock, before the "
                 "200 ms deadline",
                 (unsigned long long) (op1.at_ns - t0));
    /* Whether the target got the request is a race on a real fabric: on a
     * loaded machine the deadline can pass before the request has left,
     * which then is withdrawn and never delivered (waiting for the target
     * to hold it then waited 30 s and failed). One origin's messages
     * arrive in order, so this question, asked now, counts the request if
     * it was sent. The simulated fabric always delivers it first. */
    ct_server_stats(env, &st);
    held1 = st.held;
    assert_true(held1 <= 1);
    if (env->is_sim)
        assert_int_equal(held1, 1);
    else if (held1 == 0)
        fprintf(stderr, "test_timeout: the deadline passed before the request "
                        "reached the target (loaded machine); the late "
                        "response was not exercised in this run\n");
    assert_hg_ok(HG_Destroy(h1));

    /* A second held forward, then both are answered: token 1 first. */
    h2 = forward_hold(env, 2, &op2, &out2, 0);
    ct_wait_held(env, held1 + 1);
    assert_int_equal(ct_release_held(env), held1 + 1);
    harness_run_until(env, &op2.calls, CT_WAIT_MS);
    assert_hg_ok(op2.ret);
    assert_hg_ok(op2.out_ret);
    assert_int_equal(out2.token, 2);
    assert_hg_ok(HG_Free_output(h2, &out2));
    ct_assert_once(env, &op1);
    ct_assert_once(env, &op2);
    assert_hg_ok(HG_Destroy(h2));
    ct_forward_null_ok(env);
    harness_finish(env);
}

/*
 * A deadline that does not pass: success once, and nothing fires later.
 * On a real fabric the response races the deadline on the real clock: a
 * loaded machine (a sanitizer build, a parallel suite) can hold either
 * process past a short deadline. A call whose deadline wins has still
 * ended correctly (HG_TIMEOUT, once) but has not checked what this case is
 * about, so the case calls again with twice the deadline, up to 4.8 s: the
 * verdict does not depend on the load, and a loopback round trip that
 * misses all five deadlines is a failure. The simulated fabric always
 * checks it at the first, 300 ms.
 */
static void
test_timed_no_expiry(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_add_in_t in = {.a = 2, .b = 3, .seq = 1};
    ct_add_out_t out;
    hg_handle_t h;
    struct ct_op op;
    unsigned deadline_ms = 300;

    ct_forward_null_ok(env);
    for (;;) {
        memset(&op, 0, sizeof(op));
        op.env = env;
        op.out = &out;
        assert_hg_ok(
            HG_Create(env->client_ctx, env->server_addr, env->ids.add, &h));
        assert_hg_ok(HG_Forward_timed(h, ct_op_cb, &op, &in, deadline_ms));
        harness_run_until(env, &op.calls, CT_WAIT_MS);
        if (op.ret != HG_TIMEOUT || env->is_sim || deadline_ms >= 4800)
            break;
        ct_assert_once(env, &op);
        assert_hg_ok(HG_Destroy(h));
        print_message("test_timed_no_expiry: no response within %u ms "
                      "(loaded machine); again with %u ms\n",
                      deadline_ms, 2 * deadline_ms);
        deadline_ms *= 2;
    }
    assert_hg_ok(op.ret);
    assert_hg_ok(op.out_ret);
    assert_int_equal(out.sum, 5);
    assert_hg_ok(HG_Free_output(h, &out));
    /* Past the deadline: the timer must be gone. */
    harness_settle(env, deadline_ms + 100);
    assert_int_equal(op.calls, 1);
    assert_hg_ok(HG_Destroy(h));
    harness_finish(env);
}

/* An address nobody listens at: an error or the deadline, once. */
static void
test_unreachable(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    char name[128];
    hg_addr_t nobody;
    hg_handle_t h;
    struct ct_op op = {0};
    hg_return_t ret;

    harness_unreachable_name(env, name, sizeof(name));
    assert_hg_ok(HG_Addr_lookup(env->client, name, &nobody));
    assert_hg_ok(HG_Create(env->client_ctx, nobody, env->ids.null, &h));
    op.env = env;
    /* A plugin may already know at the post that the peer is gone: then
     * the error comes back from the call and no callback follows. */
    ret = HG_Forward_timed(h, ct_op_cb, &op, NULL, 200);
    if (ret == HG_SUCCESS) {
        harness_run_until(env, &op.calls, CT_WAIT_MS);
        if (op.ret == HG_SUCCESS)
            fail_msg("a forward to %s, where nothing listens, succeeded", name);
        ct_assert_once(env, &op);
    } else {
        harness_settle(env, 20);
        assert_int_equal(op.calls, 0);
    }
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Addr_free(env->client, nobody));
    ct_forward_null_ok(env);
    harness_finish(env);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        CT_TEST(test_cancel_before_response),
        CT_TEST(test_cancel_immediately),
        CT_TEST(test_cancel_after_completion),
        CT_TEST(test_cancel_many),
        CT_TEST(test_timeout),
        CT_TEST(test_timed_no_expiry),
        CT_TEST(test_unreachable),
    };

    return harness_main(argc, argv, "rpc_cancel", tests,
                        sizeof(tests) / sizeof(tests[0]));
}
