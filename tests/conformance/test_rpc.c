/*
 * Conformance: the RPC layer (HG_*), written once against the public API
 * and run on every plugin through the harness.
 *
 * Each case checks behaviour only: what completed, how many times, with
 * which code and which bytes. None measures how long anything took.
 */
#include "conformance/harness.h"
#include "conformance/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forward a void-input RPC and require success exactly once. */
static void
test_class_info(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    unsigned major = 0, minor = 0, patch = 0;
    hg_bool_t flag = HG_FALSE;
    hg_id_t id = 0;

    assert_hg_ok(HG_Version_get(&major, &minor, &patch));
    assert_int_equal(major, HG_VERSION_MAJOR);
    assert_int_equal(minor, HG_VERSION_MINOR);
    assert_int_equal(patch, HG_VERSION_PATCH);

    assert_non_null(HG_Class_get_name(env->client));
    assert_non_null(HG_Class_get_protocol(env->client));
    assert_false(HG_Class_is_listening(env->client));
    if (env->server != NULL) {
        assert_true(HG_Class_is_listening(env->server));
        assert_string_equal(HG_Class_get_name(env->server),
                            HG_Class_get_name(env->client));
        assert_int_equal(HG_Context_get_id(env->server_ctx[0]), 0);
        assert_int_equal(HG_Context_get_id(env->server_ctx[1]), 1);
        assert_ptr_equal(HG_Context_get_class(env->server_ctx[1]), env->server);
    }
    if (env->is_sim)
        assert_string_equal(HG_Class_get_name(env->client), "sim");
    assert_true(HG_Class_get_input_eager_size(env->client) > 0);
    assert_true(HG_Class_get_output_eager_size(env->client) > 0);
    assert_ptr_equal(HG_Context_get_class(env->client_ctx), env->client);
    assert_non_null(HG_Class_get_na(env->client));

    /* Ids come from the name alone. */
    assert_hg_ok(HG_Registered_name(env->client, CT_RPC_ADD, &id, &flag));
    assert_true(flag);
    assert_true(id == env->ids.add);
    assert_hg_ok(HG_Registered(env->client, env->ids.add, &flag));
    assert_true(flag);
    assert_hg_ok(
        HG_Registered_name(env->client, "ct_never_registered", &id, &flag));
    assert_false(flag);
    assert_true(MERCURY_REGISTER(env->client, CT_RPC_ADD, ct_add_in_t,
                                 ct_add_out_t, NULL) == env->ids.add);

    assert_hg_ok(
        HG_Registered_disabled_response(env->client, env->ids.oneway, &flag));
    assert_true(flag);
    assert_hg_ok(
        HG_Registered_disabled_response(env->client, env->ids.add, &flag));
    assert_false(flag);
    harness_finish(env);
}

static void
test_null_rpc(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_stats_out_t before, after;

    ct_server_stats(env, &before);
    ct_forward_null_ok(env);
    ct_server_stats(env, &after);
    /* The null handler ran once, plus the second stats request itself. */
    assert_true(after.handled == before.handled + 2);
    harness_finish(env);
}

static void
check_types(const ct_types_in_t *in, const ct_types_out_t *out)
{
    char want[512];

    snprintf(want, sizeof(want), CT_GREETING_FMT,
             in->name ? in->name : "(null)", in->tag ? in->tag : "(null)");
    assert_non_null(out->greeting);
    assert_string_equal(out->greeting, want);
    if (in->maybe_null == NULL)
        assert_null(out->maybe_null);
    else
        assert_string_equal(out->maybe_null, in->maybe_null);
    assert_int_equal(out->name_len, in->name ? strlen(in->name) : 0);
    assert_true(out->signed_sum ==
                (int64_t) in->i8 + in->i16 + in->i32 + in->i64);
    assert_true(out->unsigned_xor ==
                ((uint64_t) in->u8 ^ in->u16 ^ in->u32 ^ in->u64 ^ in->size));
    assert_int_equal(out->flag, !in->flag);
    assert_int_equal(out->i8, in->i8);
    assert_int_equal(out->u16, in->u16);
    assert_true(out->real == in->real * 2.0);
}

static void
types_round_trip(struct ct_env *env, const ct_types_in_t *in)
{
    hg_handle_t h;
    struct ct_op op = {0};
    ct_types_out_t out;

    memset(&out, 0, sizeof(out));
    op.out = &out;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.types, &h));
    assert_hg_ok(ct_forward_wait(env, h, (void *) in, &op));
    assert_hg_ok(op.out_ret);
    check_types(in, &out);
    assert_hg_ok(HG_Free_output(h, &out));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
}

static void
test_types_rpc(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    char long_name[301];
    ct_types_in_t in = {
        .name = (char *) "quicksilver",
        .tag = "",
        .maybe_null = NULL,
        .i8 = -7,
        .u8 = 250,
        .i16 = -30000,
        .u16 = 65000,
        .i32 = -2000000000,
        .u32 = 4000000000u,
        .i64 = -9000000000000000000LL,
        .u64 = 0xfedcba9876543210ULL,
        .size = (hg_size_t) 1 << 40,
        .flag = HG_TRUE,
        .real = 3.25,
    };

    types_round_trip(env, &in);

    /* Extremes, a non-NULL optional string and a longer name. */
    memset(long_name, 'q', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    in.name = long_name;
    in.tag = "t";
    in.maybe_null = (char *) "not null";
    in.i8 = INT8_MIN;
    in.u8 = UINT8_MAX;
    in.i16 = INT16_MAX;
    in.u16 = 0;
    in.i32 = INT32_MIN;
    in.u32 = UINT32_MAX;
    in.i64 = INT64_MAX / 2;
    in.u64 = UINT64_MAX;
    in.size = 0;
    in.flag = HG_FALSE;
    in.real = -0.5;
    types_round_trip(env, &in);
    harness_finish(env);
}

#define CT_MANY 1000

struct many_rec {
    struct ct_op op;
    ct_add_out_t out;
    hg_handle_t h;
};

/* One client, CT_MANY requests posted before any progress: each completes
 * exactly once with its own output. More than the server's initial posted
 * receives (request_post_init, 256 by default) are in flight at once. */
static void
test_many_in_flight(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct many_rec *r = (struct many_rec *) calloc(CT_MANY, sizeof(*r));
    ct_stats_out_t before, after;
    int done = 0, i;

    assert_non_null(r);
    ct_server_stats(env, &before);
    for (i = 0; i < CT_MANY; i++) {
        ct_add_in_t in = {.a = i, .b = 2 * i, .seq = (uint32_t) i};

        r[i].op.out = &r[i].out;
        r[i].op.out_ret = HG_OTHER_ERROR;
        r[i].op.done = &done;
        assert_hg_ok(HG_Create(env->client_ctx, env->server_addr, env->ids.add,
                               &r[i].h));
        assert_hg_ok(HG_Forward(r[i].h, ct_op_cb, &r[i].op, &in));
    }
    harness_run_until_count(env, &done, CT_MANY, CT_WAIT_MS);
    harness_settle(env, 20);
    assert_int_equal(done, CT_MANY);
    for (i = 0; i < CT_MANY; i++) {
        if (r[i].op.calls != 1 || r[i].op.ret != HG_SUCCESS ||
            r[i].op.out_ret != HG_SUCCESS)
            fail_msg("request %d: %d callback(s), ret %s, output %s", i,
                     r[i].op.calls, HG_Error_to_string(r[i].op.ret),
                     HG_Error_to_string(r[i].op.out_ret));
        if (r[i].out.sum != 3 * i || r[i].out.seq != (uint32_t) i)
            fail_msg("request %d got the output of another (sum %d, seq %u)", i,
                     r[i].out.sum, r[i].out.seq);
        assert_hg_ok(HG_Free_output(r[i].h, &r[i].out));
        assert_hg_ok(HG_Destroy(r[i].h));
    }
    free(r);
    ct_server_stats(env, &after);
    assert_true(after.add_calls == before.add_calls + CT_MANY);
    harness_finish(env);
}

#define CT_BURST 300

/* Post CT_BURST add requests at once and wait for every callback. Returns
 * how many succeeded; every other one must have failed with `allowed`. */
static int
add_burst(struct ct_env *env, hg_return_t allowed)
{
    struct many_rec *r = (struct many_rec *) calloc(CT_BURST, sizeof(*r));
    int done = 0, ok = 0, i;

    assert_non_null(r);
    for (i = 0; i < CT_BURST; i++) {
        ct_add_in_t in = {.a = i, .b = 1, .seq = (uint32_t) i};

        r[i].op.out = &r[i].out;
        r[i].op.done = &done;
        assert_hg_ok(HG_Create(env->client_ctx, env->server_addr, env->ids.add,
                               &r[i].h));
        assert_hg_ok(HG_Forward(r[i].h, ct_op_cb, &r[i].op, &in));
    }
    harness_run_until_count(env, &done, CT_BURST, CT_WAIT_MS);
    harness_settle(env, 20);
    for (i = 0; i < CT_BURST; i++) {
        if (r[i].op.calls != 1)
            fail_msg("request %d: %d callbacks", i, r[i].op.calls);
        if (r[i].op.ret == HG_SUCCESS) {
            assert_hg_ok(r[i].op.out_ret);
            assert_int_equal(r[i].out.sum, i + 1);
            assert_int_equal(r[i].out.seq, i);
            assert_hg_ok(HG_Free_output(r[i].h, &r[i].out));
            ok++;
        } else if (r[i].op.ret != allowed) {
            fail_msg("request %d failed with %s", i,
                     HG_Error_to_string(r[i].op.ret));
        }
        assert_hg_ok(HG_Destroy(r[i].h));
    }
    free(r);
    return ok;
}

/*
 * A server that posts only 8 request receives up front (request_post_init)
 * still serves a burst far larger than that. On the simulated fabric the
 * burst also meets a tiny unexpected backlog: when a full backlog holds
 * senders back, everything still succeeds; when it fails them with
 * NA_AGAIN, every forward still completes exactly once, with success or
 * HG_AGAIN, and exactly the successful ones reached the handler.
 */
static void
test_small_post_init(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_stats_out_t before, after;
    int ok;

    ct_server_stats(env, &before);
    assert_int_equal(add_burst(env, HG_SUCCESS), CT_BURST);
    ct_server_stats(env, &after);
    assert_true(after.add_calls == before.add_calls + CT_BURST);

    if (harness_sim_backlog(env, 4, 0) == 0) {
        assert_int_equal(add_burst(env, HG_SUCCESS), CT_BURST);
        assert_int_equal(harness_sim_backlog(env, 4, 1), 0);
        ct_server_stats(env, &before);
        ok = add_burst(env, HG_AGAIN);
        assert_int_equal(harness_sim_backlog(env, 256, 0), 0);
        ct_server_stats(env, &after);
        fprintf(stderr, "backlog of 4 failing senders: %d of %d succeeded\n",
                ok, CT_BURST);
        assert_true(after.add_calls == before.add_calls + (uint64_t) ok);
        assert_true(ok < CT_BURST); /* the backlog really was exhausted */
    }
    harness_finish(env);
}

/* The target has no handler for the id: the origin learns HG_NOENTRY,
 * and the target keeps serving. */
static void
test_unregistered_id(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_id_t numeric = 0x7e57c0deULL;
    hg_handle_t h;
    struct ct_op op = {0};

    assert_hg_ok(HG_Create(env->client_ctx, env->server_addr,
                           env->ids.not_on_server, &h));
    assert_hg_ret(ct_forward_wait(env, h, NULL, &op), HG_NOENTRY);
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));

    /* The same for a caller-chosen id. */
    assert_hg_ok(HG_Register(env->client, numeric, NULL, NULL, NULL));
    assert_hg_ok(HG_Create(env->client_ctx, env->server_addr, numeric, &h));
    assert_hg_ret(ct_forward_wait(env, h, NULL, &op), HG_NOENTRY);
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Deregister(env->client, numeric));

    ct_forward_null_ok(env);
    harness_finish(env);
}

/* A handler that returns an error without responding: the origin gets
 * that very code (two different codes, so it is not a fixed mapping). */
static void
test_handler_error(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_return_t codes[] = {HG_PERMISSION, HG_IO_ERROR};
    size_t i;

    for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        ct_fail_in_t in = {.code = (int32_t) codes[i]};
        hg_handle_t h;
        struct ct_op op = {0};

        assert_hg_ok(
            HG_Create(env->client_ctx, env->server_addr, env->ids.fail, &h));
        assert_hg_ret(ct_forward_wait(env, h, &in, &op), codes[i]);
        ct_assert_once(env, &op);
        assert_hg_ok(HG_Destroy(h));
    }
    ct_forward_null_ok(env);
    harness_finish(env);
}

/* One-way: the forward completes once sent; the target's HG_Respond is
 * refused with HG_OPNOTSUPPORTED. */
static void
test_oneway(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_token_t in = {.token = 77};
    ct_stats_out_t before, st;
    hg_handle_t h;
    struct ct_op op = {0};
    uint64_t start;

    ct_server_stats(env, &before);
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.oneway, &h));
    assert_hg_ok(ct_forward_wait(env, h, &in, &op));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));

    /* Completion at the origin says nothing about delivery: wait for the
     * target to report it. */
    start = harness_now_ns(env);
    for (;;) {
        ct_server_stats(env, &st);
        if (st.oneway_received > before.oneway_received)
            break;
        if (harness_now_ns(env) - start > (uint64_t) CT_WAIT_MS * 1000000ULL)
            fail_msg("the one-way request never reached its handler");
    }
    assert_int_equal(st.oneway_received, before.oneway_received + 1);
    assert_int_equal(st.last_oneway_token, 77);
    assert_hg_ret((hg_return_t) st.oneway_respond_ret, HG_OPNOTSUPPORTED);
    harness_finish(env);
}

/* Forward to the client's own address, handled on the client's context
 * (loopback: no network involved). */
static void
test_forward_self(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_add_in_t in = {.a = 40, .b = 2, .seq = 9};
    ct_add_out_t out;
    hg_addr_t self;
    hg_handle_t h;
    struct ct_op op = {0};

    assert_true(MERCURY_REGISTER(env->client, CT_RPC_ADD, ct_add_in_t,
                                 ct_add_out_t, ct_add_handler) == env->ids.add);
    assert_hg_ok(HG_Addr_self(env->client, &self));
    assert_true(HG_Addr_is_self(env->client, self));
    assert_false(HG_Addr_is_self(env->client, env->server_addr));
    assert_hg_ok(HG_Create(env->client_ctx, self, env->ids.add, &h));
    op.out = &out;
    assert_hg_ok(ct_forward_wait(env, h, &in, &op));
    assert_hg_ok(op.out_ret);
    assert_int_equal(out.sum, 42);
    assert_int_equal(out.seq, 9);
    assert_int_equal(out.info_context_id, 0);
    assert_hg_ok(HG_Free_output(h, &out));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Addr_free(env->client, self));
    harness_finish(env);
}

/* Forward to self through the plugin (no_loopback) on a listening class. */
static void
test_forward_self_no_loopback(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    ct_add_in_t in = {.a = -5, .b = 8, .seq = 3};
    ct_add_out_t out;
    struct ct_ids ids;
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_addr_t self;
    hg_handle_t h;
    struct ct_op op = {0};
    char name[128];

    ii.no_loopback = HG_TRUE;
    harness_class_name(env, "loop", name, sizeof(name));
    cls = HG_Init_opt2(name, HG_TRUE, HG_VERSION(2, 4), &ii);
    assert_non_null(cls);
    ctx = HG_Context_create(cls);
    assert_non_null(ctx);
    harness_add_context(env, ctx);
    ct_register_rpcs(cls, 1, &ids);

    assert_hg_ok(HG_Addr_self(cls, &self));
    assert_hg_ok(HG_Create(ctx, self, ids.add, &h));
    op.out = &out;
    assert_hg_ok(ct_forward_wait(env, h, &in, &op));
    assert_hg_ok(op.out_ret);
    assert_int_equal(out.sum, 3);
    assert_int_equal(out.seq, 3);
    assert_hg_ok(HG_Free_output(h, &out));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Addr_free(cls, self));

    harness_settle(env, 20);
    harness_remove_context(env, ctx);
    assert_hg_ok(HG_Context_destroy(ctx));
    assert_hg_ok(HG_Finalize(cls));
    harness_finish(env);
}

/* The server has contexts 0 and 1: HG_Set_target_id picks the one that
 * runs the handler, which sees it in hg_info->context_id. */
static void
test_contexts(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const uint8_t order[5] = {1, 0, 1, 1, 0};
    hg_handle_t h;
    unsigned k;

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.add, &h));
    for (k = 0; k < sizeof(order); k++) {
        ct_add_in_t in = {.a = (int32_t) k, .b = 100, .seq = k};
        ct_add_out_t out;
        struct ct_op op = {0};

        assert_hg_ok(HG_Set_target_id(h, order[k]));
        op.out = &out;
        assert_hg_ok(ct_forward_wait(env, h, &in, &op));
        assert_hg_ok(op.out_ret);
        assert_int_equal(out.sum, (int32_t) k + 100);
        assert_int_equal(out.info_context_id, order[k]);
        assert_int_equal(out.context_get_id, order[k]);
        assert_hg_ok(HG_Free_output(h, &out));
        ct_assert_once(env, &op);
    }
    assert_hg_ok(HG_Destroy(h));
    harness_finish(env);
}

/* A target context id the server does not have: an error (or the
 * deadline), exactly once, never a hang. */
static void
test_context_missing(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    hg_handle_t h;
    struct ct_op op = {0};

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, &h));
    assert_hg_ok(HG_Set_target_id(h, 7));
    op.env = env;
    assert_hg_ok(HG_Forward_timed(h, ct_op_cb, &op, NULL, 500));
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    if (op.ret == HG_SUCCESS)
        fail_msg("a request to context id 7 of a server with contexts 0 "
                 "and 1 succeeded");
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    ct_forward_null_ok(env);
    harness_finish(env);
}

/* One handle, reset between forwards to different RPC ids and targets. */
static void
test_reset_reuse(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_add_in_t add_in = {.a = 1, .b = 2, .seq = 1};
    ct_add_out_t add_out;
    ct_types_in_t types_in = {.name = (char *) "reset", .tag = "again"};
    ct_types_out_t types_out;
    ct_token_t hold_in = {.token = 4};
    hg_handle_t h;
    struct ct_op op = {0};
    const struct hg_info *info;

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.add, &h));
    op.out = &add_out;
    assert_hg_ok(ct_forward_wait(env, h, &add_in, &op));
    assert_hg_ok(op.out_ret);
    assert_int_equal(add_out.sum, 3);
    assert_hg_ok(HG_Free_output(h, &add_out));

    assert_hg_ok(HG_Reset(h, env->server_addr, env->ids.null));
    info = HG_Get_info(h);
    assert_non_null(info);
    assert_true(info->id == env->ids.null);
    op.out = NULL;
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));

    assert_hg_ok(HG_Reset(h, env->server_addr, env->ids.types));
    assert_true(HG_Get_info(h)->id == env->ids.types);
    memset(&types_out, 0, sizeof(types_out));
    op.out = &types_out;
    assert_hg_ok(ct_forward_wait(env, h, &types_in, &op));
    assert_hg_ok(op.out_ret);
    check_types(&types_in, &types_out);
    assert_hg_ok(HG_Free_output(h, &types_out));

    /* Back to add, with a new sequence number. */
    assert_hg_ok(HG_Reset(h, env->server_addr, env->ids.add));
    add_in.seq = 2;
    op.out = &add_out;
    assert_hg_ok(ct_forward_wait(env, h, &add_in, &op));
    assert_hg_ok(op.out_ret);
    assert_int_equal(add_out.sum, 3);
    assert_int_equal(add_out.seq, 2);
    assert_hg_ok(HG_Free_output(h, &add_out));
    ct_assert_once(env, &op);

    /* A handle with a forward in flight cannot be reset. */
    assert_hg_ok(HG_Reset(h, env->server_addr, env->ids.hold));
    op.calls = 0;
    op.out = NULL;
    assert_hg_ok(HG_Forward(h, ct_op_cb, &op, &hold_in));
    assert_hg_ret(HG_Reset(h, env->server_addr, env->ids.null), HG_BUSY);
    ct_wait_held(env, 1);
    assert_int_equal(ct_release_held(env), 1);
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_hg_ok(op.ret);
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    harness_finish(env);
}

/* A second forward on a handle that has one in flight is refused, and
 * gets no callback of its own. */
static void
test_forward_busy(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_token_t in = {.token = 11};
    hg_handle_t h;
    struct ct_op op = {0}, second = {0};

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.hold, &h));
    assert_hg_ok(HG_Forward(h, ct_op_cb, &op, &in));
    assert_hg_ret(HG_Forward(h, ct_op_cb, &second, &in), HG_BUSY);
    ct_wait_held(env, 1);
    assert_int_equal(ct_release_held(env), 1);
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_hg_ok(op.ret);
    ct_assert_once(env, &op);
    assert_int_equal(second.calls, 0);
    assert_hg_ok(HG_Destroy(h));
    harness_finish(env);
}

static int ct_handle_data_freed;

static void
handle_data_free(void *data)
{
    (void) data;
    ct_handle_data_freed++;
}

/* Reference counting and user data of handles. */
static void
test_handle_refs(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    static int token;
    hg_handle_t h;
    struct ct_op op = {0};

    ct_handle_data_freed = 0;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, &h));
    assert_hg_ok(HG_Set_data(h, &token, handle_data_free));
    assert_ptr_equal(HG_Get_data(h), &token);
    assert_int_equal(HG_Ref_get(h), 1);
    assert_hg_ok(HG_Ref_incr(h));
    assert_int_equal(HG_Ref_get(h), 2);
    assert_hg_ok(HG_Destroy(h));
    /* Still alive: one reference is left. */
    assert_int_equal(ct_handle_data_freed, 0);
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    assert_int_equal(ct_handle_data_freed, 1);
    harness_finish(env);
}

/* Addresses: string, lookup, dup, compare and serialize round trips. */
static void
test_addr_roundtrip(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    char buf[256], small[4];
    hg_size_t size = 0, need;
    hg_addr_t again, dup, self, deser;
    void *ser;

    assert_hg_ok(HG_Addr_to_string(env->client, NULL, &size, env->server_addr));
    need = size;
    assert_true(need > 1 && need <= sizeof(buf));
    size = sizeof(small);
    if (need > sizeof(small)) {
        assert_hg_ret(
            HG_Addr_to_string(env->client, small, &size, env->server_addr),
            HG_OVERFLOW);
        assert_true(size == need);
    }
    size = sizeof(buf);
    assert_hg_ok(HG_Addr_to_string(env->client, buf, &size, env->server_addr));
    assert_int_equal(strlen(buf) + 1, need);

    assert_hg_ok(HG_Addr_lookup(env->client, buf, &again));
    assert_true(HG_Addr_cmp(env->client, again, env->server_addr));
    assert_hg_ok(HG_Addr_dup(env->client, again, &dup));
    assert_true(HG_Addr_cmp(env->client, dup, env->server_addr));
    assert_hg_ok(HG_Addr_lookup2(env->client, buf, &deser));
    assert_true(HG_Addr_cmp(env->client, deser, dup));
    assert_hg_ok(HG_Addr_free(env->client, deser));

    size = HG_Addr_get_serialize_size(env->client, dup);
    assert_true(size > 0);
    ser = malloc((size_t) size);
    assert_non_null(ser);
    assert_hg_ok(HG_Addr_serialize(env->client, ser, size, dup));
    assert_hg_ok(HG_Addr_deserialize(env->client, &deser, ser, size));
    assert_true(HG_Addr_cmp(env->client, deser, env->server_addr));
    assert_hg_ok(HG_Addr_free(env->client, deser));
    /* A truncated serialized address is refused, never read past. */
    assert_true(HG_Addr_deserialize(env->client, &deser, ser, size - 1) !=
                HG_SUCCESS);
    free(ser);

    assert_hg_ok(HG_Addr_self(env->client, &self));
    assert_false(HG_Addr_cmp(env->client, self, env->server_addr));
    assert_true(HG_Addr_cmp(env->client, self, self));
    assert_hg_ok(HG_Addr_free(env->client, self));
    assert_hg_ok(HG_Addr_free(env->client, dup));
    assert_hg_ok(HG_Addr_free(env->client, again));

    /* The looked-up copy works for a forward like the original. */
    ct_forward_null_ok(env);
    harness_finish(env);
}

/* The return-code table: documented values, distinct strings, and the
 * shared prefix with NA. */
static void
test_error_strings(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    int i, j;

    assert_int_equal(HG_SUCCESS, 0);
    assert_int_equal(HG_NOENTRY, 2);
    assert_int_equal(HG_INVALID_ARG, 11);
    assert_int_equal(HG_TIMEOUT, 20);
    assert_int_equal(HG_CANCELED, 21);
    assert_int_equal(HG_HOSTFIREWALL, 23);
    assert_int_equal(HG_CHECKSUM_ERROR, 24);
    assert_int_equal(HG_OTHER_ERROR, 26);
    assert_int_equal((int) HG_TIMEOUT, (int) NA_TIMEOUT);
    assert_int_equal((int) HG_HOSTFIREWALL, (int) NA_HOSTFIREWALL);
    assert_int_equal(HG_SIZE_ERROR, HG_MSGSIZE);
    for (i = 0; i < (int) HG_RETURN_MAX; i++) {
        const char *s = HG_Error_to_string((hg_return_t) i);

        assert_non_null(s);
        assert_true(s[0] != '\0');
        for (j = 0; j < i; j++)
            if (strcmp(s, HG_Error_to_string((hg_return_t) j)) == 0)
                fail_msg("codes %d and %d share the string \"%s\"", j, i, s);
    }
    assert_non_null(HG_Error_to_string(HG_RETURN_MAX));
    assert_non_null(HG_Error_to_string((hg_return_t) 12345));
    assert_non_null(HG_Error_to_string((hg_return_t) -1));
    harness_finish(env);
}

static hg_return_t
never_called_cb(const struct hg_cb_info *info)
{
    (void) info;
    fail_msg("a call that was refused ran its callback");
    return HG_SUCCESS;
}

/* Public functions check their arguments and say HG_INVALID_ARG. */
static void
test_bad_args(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    hg_handle_t h = HG_HANDLE_NULL;
    hg_addr_t a = HG_ADDR_NULL;
    hg_size_t size = 16;
    char buf[16];
    hg_return_t ret;
    int dummy;

    assert_null(HG_Init(NULL, HG_FALSE));
    /* Finalizing nothing, like free(NULL), may be a no-op. */
    ret = HG_Finalize(NULL);
    assert_true(ret == HG_SUCCESS || ret == HG_INVALID_ARG);
    assert_null(HG_Context_create(NULL));
    assert_null(HG_Context_create_id(NULL, 1));
    assert_hg_ret(HG_Context_destroy(NULL), HG_INVALID_ARG);
    /* As in Mercury, NULL outputs are skipped. */
    assert_hg_ok(HG_Version_get(NULL, NULL, NULL));

    assert_true(HG_Register_name(NULL, "x", NULL, NULL, NULL) == 0);
    assert_true(HG_Register_name(env->client, NULL, NULL, NULL, NULL) == 0);
    assert_true(HG_Registered_disable_response(env->client, 0x5151ULL,
                                               HG_TRUE) != HG_SUCCESS);

    assert_hg_ret(HG_Create(NULL, env->server_addr, env->ids.null, &h),
                  HG_INVALID_ARG);
    assert_hg_ret(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, NULL),
        HG_INVALID_ARG);
    assert_hg_ret(HG_Forward(HG_HANDLE_NULL, never_called_cb, NULL, NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(
        HG_Forward_timed(HG_HANDLE_NULL, never_called_cb, NULL, NULL, 10),
        HG_INVALID_ARG);
    assert_hg_ret(HG_Respond(HG_HANDLE_NULL, never_called_cb, NULL, NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Cancel(HG_HANDLE_NULL), HG_INVALID_ARG);
    assert_hg_ret(HG_Reset(HG_HANDLE_NULL, env->server_addr, env->ids.null),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Set_target_id(HG_HANDLE_NULL, 1), HG_INVALID_ARG);
    assert_hg_ret(HG_Get_input(HG_HANDLE_NULL, &dummy), HG_INVALID_ARG);
    assert_hg_ret(HG_Get_output(HG_HANDLE_NULL, &dummy), HG_INVALID_ARG);
    assert_hg_ret(HG_Ref_incr(HG_HANDLE_NULL), HG_INVALID_ARG);
    assert_null(HG_Get_info(HG_HANDLE_NULL));
    /* Destroying nothing must not crash; either answer is acceptable. */
    ret = HG_Destroy(HG_HANDLE_NULL);
    assert_true(ret == HG_SUCCESS || ret == HG_INVALID_ARG);

    assert_hg_ret(HG_Progress(NULL, 0), HG_INVALID_ARG);
    assert_hg_ret(HG_Trigger(NULL, 0, 1, NULL), HG_INVALID_ARG);

    assert_hg_ret(HG_Addr_lookup(NULL, "sim://x", &a), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_lookup(env->client, NULL, &a), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_lookup(env->client, "", &a), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_self(NULL, &a), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_self(env->client, NULL), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_dup(env->client, HG_ADDR_NULL, &a), HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_to_string(env->client, buf, NULL, env->server_addr),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Addr_to_string(env->client, buf, &size, HG_ADDR_NULL),
                  HG_INVALID_ARG);
    assert_null(a);

    /* Refused calls left nothing behind: the leak check would say so. */
    harness_finish(env);
}

/* The leak check itself: finalize and context destroy refuse while
 * something created from them is alive, and succeed once it is gone. */
static void
test_finalize_busy(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_addr_t a;
    hg_handle_t h;
    hg_bulk_t bulk;
    hg_size_t len = 64;
    char name[128];

    harness_class_name(env, "leaky", name, sizeof(name));
    cls = HG_Init(name, HG_FALSE);
    assert_non_null(cls);
    ct_register_rpcs(cls, 0, &(struct ct_ids){0});

    assert_hg_ok(HG_Addr_self(cls, &a));
    assert_hg_ret(HG_Finalize(cls), HG_BUSY);
    assert_hg_ok(HG_Addr_free(cls, a));

    ctx = HG_Context_create(cls);
    assert_non_null(ctx);
    assert_hg_ret(HG_Finalize(cls), HG_BUSY);
    assert_hg_ok(HG_Addr_self(cls, &a));
    assert_hg_ok(HG_Create(ctx, a, env->ids.null, &h));
    assert_hg_ok(HG_Addr_free(cls, a));
    assert_hg_ret(HG_Context_destroy(ctx), HG_BUSY);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Context_destroy(ctx));

    assert_hg_ok(HG_Bulk_create(cls, 1, NULL, &len, HG_BULK_READWRITE, &bulk));
    assert_hg_ret(HG_Finalize(cls), HG_BUSY);
    assert_hg_ok(HG_Bulk_free(bulk));
    assert_hg_ok(HG_Finalize(cls));
    harness_finish(env);
}

/* Both classes checksum the payload: ordinary RPCs, small and through
 * overflow, work unchanged. */
static void
test_checksum_payload(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_types_in_t in = {.name = (char *) "sum me",
                        .tag = "crc",
                        .i32 = -4,
                        .u64 = 99,
                        .flag = HG_TRUE,
                        .real = 1.5};

    ct_forward_null_ok(env);
    types_round_trip(env, &in);
    harness_finish(env);
}

/*
 * Corruption detection: a payload byte flipped in flight must end in
 * HG_CHECKSUM_ERROR at the origin, exactly once, and the next RPC must
 * work. The flip comes from the simulated fabric's corruption fault through
 * harness_sim_corrupt_next(); until na_sim.h offers one, that hook reports
 * it cannot, and the case skips saying so.
 */
static void
test_checksum_corruption(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    ct_types_in_t in = {.name = (char *) "flip", .tag = "me", .u32 = 7};
    ct_types_out_t out;
    hg_handle_t h;
    struct ct_op op = {0};

    if (harness_sim_corrupt_next(env) != 0) {
        harness_finish(env);
        fprintf(stderr,
                "skip: no corruption fault to inject on %s (the "
                "simulated fabric's fault API is not there yet)\n",
                env->info);
        skip();
    }
    /* One random bit of each request flips. A flip in the payload must be
     * reported as HG_CHECKSUM_ERROR; a flip in the header makes the target
     * drop the request (it cannot trust who to answer), so that forward
     * ends at its deadline. No forward may succeed with corrupted input.
     * Repeat until a payload flip was seen; the seed fixes the sequence. */
    int checksum_errors = 0, tries;

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.types, &h));
    for (tries = 0; tries < 20 && checksum_errors == 0; tries++) {
        memset(&out, 0, sizeof(out));
        memset(&op, 0, sizeof(op));
        op.out = &out;
        op.env = env;
        assert_hg_ok(HG_Forward_timed(h, ct_op_cb, &op, &in, 1000));
        harness_run_until(env, &op.calls, CT_WAIT_MS);
        ct_assert_once(env, &op);
        if (op.ret == HG_CHECKSUM_ERROR)
            checksum_errors++;
        else if (op.ret != HG_TIMEOUT)
            fail_msg("corrupted request completed with %s",
                     HG_Error_to_string(op.ret));
    }
    assert_true(checksum_errors > 0);
    harness_sim_faults_clear(env);
    /* Once the link is clean again, the same handle works. */
    memset(&out, 0, sizeof(out));
    memset(&op, 0, sizeof(op));
    op.out = &out;
    op.env = env;
    assert_hg_ok(HG_Forward(h, ct_op_cb, &op, &in));
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_hg_ok(op.ret);
    assert_hg_ok(op.out_ret);
    assert_hg_ok(HG_Free_output(h, &out));
    assert_hg_ok(HG_Destroy(h));
    ct_forward_null_ok(env);
    harness_finish(env);
}

/*
 * Determinism on the simulated fabric: the same scenario, run twice in
 * fresh worlds with the same seed, leaves the same event trace (same hash,
 * same number of events) and the same virtual clock.
 */
struct det_result {
    int have;
    uint64_t hash, count, clock;
};

static struct det_result det_first;

static void
det_scenario(struct ct_env *env, struct det_result *res)
{
    struct many_rec r[40];
    ct_types_in_t tin = {.name = (char *) "det", .tag = "x", .i64 = -3};
    struct ct_op op;
    ct_token_t out;
    ct_token_t hin = {.token = 1};
    hg_handle_t h;
    int done = 0, i;

    memset(r, 0, sizeof(r));
    for (i = 0; i < 40; i++) {
        ct_add_in_t in = {.a = i, .b = i, .seq = (uint32_t) i};

        r[i].op.out = &r[i].out;
        r[i].op.done = &done;
        assert_hg_ok(HG_Create(env->client_ctx, env->server_addr, env->ids.add,
                               &r[i].h));
        assert_hg_ok(HG_Set_target_id(r[i].h, (uint8_t) (i % 2)));
        assert_hg_ok(HG_Forward(r[i].h, ct_op_cb, &r[i].op, &in));
    }
    harness_run_until_count(env, &done, 40, CT_WAIT_MS);
    for (i = 0; i < 40; i++) {
        assert_hg_ok(r[i].op.ret);
        assert_int_equal(r[i].out.sum, 2 * i);
        assert_hg_ok(HG_Free_output(r[i].h, &r[i].out));
        assert_hg_ok(HG_Destroy(r[i].h));
    }
    types_round_trip(env, &tin);
    /* A timeout and a late response are part of the trace too. */
    memset(&op, 0, sizeof(op));
    op.out = &out;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.hold, &h));
    assert_hg_ok(HG_Forward_timed(h, ct_op_cb, &op, &hin, 50));
    harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_hg_ret(op.ret, HG_TIMEOUT);
    assert_hg_ok(HG_Destroy(h));
    assert_int_equal(ct_release_held(env), 1);
    harness_settle(env, 5);

    res->clock = harness_now_ns(env);
    assert_int_equal(harness_sim_trace(env, &res->hash, &res->count), 0);
    res->have = 1;
}

static void
test_sim_determinism_first(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;

    if (!env->is_sim || !env->fresh_world) {
        harness_finish(env);
        fprintf(stderr, "skip: needs the simulated fabric and a new world\n");
        skip();
    }
    det_scenario(env, &det_first);
    harness_finish(env);
}

static void
test_sim_determinism_replay(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct det_result again = {0};

    if (!env->is_sim || !env->fresh_world || !det_first.have) {
        harness_finish(env);
        fprintf(stderr, "skip: needs the simulated fabric, a new world and "
                        "the first run\n");
        skip();
    }
    det_scenario(env, &again);
    fprintf(stderr, "sim trace: %llu events, hash 0x%016llx, clock %llu ns\n",
            (unsigned long long) again.count, (unsigned long long) again.hash,
            (unsigned long long) again.clock);
    if (again.hash != det_first.hash || again.count != det_first.count ||
        again.clock != det_first.clock)
        fail_msg("same seed, same scenario, different runs: first %llu "
                 "events hash 0x%016llx clock %llu, replay %llu events hash "
                 "0x%016llx clock %llu",
                 (unsigned long long) det_first.count,
                 (unsigned long long) det_first.hash,
                 (unsigned long long) det_first.clock,
                 (unsigned long long) again.count,
                 (unsigned long long) again.hash,
                 (unsigned long long) again.clock);
    harness_finish(env);
}

static struct ct_opts checksum_opts, small_post_opts;

int
main(int argc, char **argv)
{
    small_post_opts.server_init = HG_INIT_INFO_INITIALIZER;
    small_post_opts.server_init.request_post_init = 8;
    small_post_opts.server_init.request_post_incr = 8;
    small_post_opts.has_server_init = 1;
    small_post_opts.local_server = 1;

    checksum_opts.client_init = HG_INIT_INFO_INITIALIZER;
    checksum_opts.client_init.checksum_level = HG_CHECKSUM_RPC_PAYLOAD;
    checksum_opts.server_init = checksum_opts.client_init;
    checksum_opts.has_client_init = 1;
    checksum_opts.has_server_init = 1;
    checksum_opts.local_server = 1;

    const struct CMUnitTest tests[] = {
        /* First, so that no earlier failure can leave the world alive. */
        CT_TEST(test_sim_determinism_first),
        CT_TEST(test_sim_determinism_replay),
        CT_TEST(test_class_info),
        CT_TEST(test_null_rpc),
        CT_TEST(test_types_rpc),
        CT_TEST(test_many_in_flight),
        CT_TEST_OPTS(test_small_post_init, &small_post_opts),
        CT_TEST(test_unregistered_id),
        CT_TEST(test_handler_error),
        CT_TEST(test_oneway),
        CT_TEST(test_forward_self),
        CT_TEST(test_forward_self_no_loopback),
        CT_TEST(test_contexts),
        CT_TEST(test_context_missing),
        CT_TEST(test_reset_reuse),
        CT_TEST(test_forward_busy),
        CT_TEST(test_handle_refs),
        CT_TEST(test_addr_roundtrip),
        CT_TEST(test_error_strings),
        CT_TEST(test_bad_args),
        CT_TEST(test_finalize_busy),
        CT_TEST_OPTS(test_checksum_payload, &checksum_opts),
        CT_TEST_OPTS(test_checksum_corruption, &checksum_opts),
    };

    return harness_main(argc, argv, "rpc", tests,
                        sizeof(tests) / sizeof(tests[0]));
}
