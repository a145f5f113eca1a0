/*
 * The callback forms (margo_cforward, margo_provider_cforward, their timed
 * variants, margo_crespond, margo_crespond_timed, margo_bulk_ctransfer,
 * margo_bulk_ctransfer_timed): the callback runs exactly once, with the
 * operation's result, and the operation really happened (the output, the
 * bytes moved). A client without a progress thread drives progress by
 * sleeping in margo_thread_sleep(), which on the simulator costs no real
 * time. Also __margo_respond_with_error, the other way a handler answers
 * without margo_respond.
 */
#include "tm.h"

#include <string.h>

struct tc_result {
    atomic_int calls;
    hg_return_t ret;
};

static void
tc_done(void *arg, hg_return_t ret)
{
    struct tc_result *r = arg;

    r->ret = ret;
    atomic_fetch_add(&r->calls, 1);
}

/* Make progress on mid until r's callback ran, then a little more, so a
 * second call would be seen. */
static void
tc_wait(margo_instance_id mid, struct tc_result *r)
{
    while (atomic_load(&r->calls) == 0)
        margo_thread_sleep(mid, 1);
    for (int i = 0; i < 5; i++)
        margo_thread_sleep(mid, 1);
    assert_int_equal(atomic_load(&r->calls), 1);
}

/* The server's handlers. tc_slow keeps its handle and answers only when
 * the test says so. tc_cadd answers through margo_crespond_timed and
 * records its callback. */
static struct tc_result tc_respond_result;
static hg_handle_t tc_parked = HG_HANDLE_NULL;

static void
tc_slow(hg_handle_t h)
{
    tc_parked = h;
}
DEFINE_MARGO_RPC_HANDLER(tc_slow)

static void
tc_cadd(hg_handle_t h)
{
    tm_add_in_t in;
    tm_add_out_t out = {-1};

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        out.sum = in.a + in.b;
        margo_free_input(h, &in);
    }
    if (margo_crespond_timed(h, &out, 5000, tc_done, &tc_respond_result) !=
        HG_SUCCESS)
        tc_respond_result.ret = HG_OTHER_ERROR;
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tc_cadd)

/* Pulls the client's ten values with margo_bulk_ctransfer_timed and
 * answers their sum once the callback said, once, that they arrived. */
static hg_return_t
tc_pull_ctransfer(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
                  hg_bulk_t local, hg_size_t size)
{
    struct tc_result r = {0, HG_SUCCESS};
    hg_return_t ret;

    ret = margo_bulk_ctransfer_timed(mid, HG_BULK_PULL, addr, remote, 0, local,
                                     0, size, 10000, tc_done, &r);
    if (ret != HG_SUCCESS)
        return ret;
    while (atomic_load(&r.calls) == 0)
        margo_thread_sleep(mid, 1);
    return atomic_load(&r.calls) == 1 ? r.ret : HG_OTHER_ERROR;
}

static void
tc_csum(hg_handle_t h)
{
    tm_sum_with(h, tc_pull_ctransfer);
}
DEFINE_MARGO_RPC_HANDLER(tc_csum)

struct tc_env {
    margo_instance_id server, client;
    hg_addr_t addr;
    hg_id_t add, slow, cadd, csum;
};

static void
tc_start(struct tc_env *env)
{
    char saddr[64], caddr[64];

    tm_addr_for(saddr, sizeof(saddr), "cforms-s");
    tm_addr_for(caddr, sizeof(caddr), "cforms-c");
    env->server = margo_init(saddr, MARGO_SERVER_MODE, 0, 0);
    env->client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(env->server);
    assert_non_null(env->client);
    MARGO_REGISTER(env->server, "tc_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(env->server, "tc_slow", void, tm_add_out_t, tc_slow);
    MARGO_REGISTER(env->server, "tc_cadd", tm_add_in_t, tm_add_out_t, tc_cadd);
    MARGO_REGISTER(env->server, "tc_csum", tm_sum_in_t, tm_sum_out_t, tc_csum);
    env->add =
        MARGO_REGISTER(env->client, "tc_add", tm_add_in_t, tm_add_out_t, NULL);
    env->slow =
        MARGO_REGISTER(env->client, "tc_slow", void, tm_add_out_t, NULL);
    env->cadd =
        MARGO_REGISTER(env->client, "tc_cadd", tm_add_in_t, tm_add_out_t, NULL);
    env->csum =
        MARGO_REGISTER(env->client, "tc_csum", tm_sum_in_t, tm_sum_out_t, NULL);
    env->addr = tm_lookup_self(env->client, env->server);
}

static void
tc_stop(struct tc_env *env)
{
    assert_hg_ok(margo_addr_free(env->client, env->addr));
    margo_finalize(env->client);
    margo_finalize(env->server);
}

static void
test_cforward_calls_back_once(void **state)
{
    struct tc_env env;
    struct tc_result r = {0, HG_OTHER_ERROR};
    tm_add_in_t in = {20, 22};
    tm_add_out_t out;
    hg_handle_t h;

    (void) state;
    tc_start(&env);
    assert_hg_ok(margo_create(env.client, env.addr, env.add, &h));
    assert_hg_ok(margo_cforward(h, &in, tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ok(r.ret);
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 42);
    assert_hg_ok(margo_free_output(h, &out));

    /* The timed form with a deadline that is not reached, and the
     * provider form to the default provider. */
    memset(&r, 0, sizeof(r));
    in.a = 1;
    assert_hg_ok(margo_cforward_timed(h, &in, 10000, tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ok(r.ret);
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 23);
    assert_hg_ok(margo_free_output(h, &out));
    memset(&r, 0, sizeof(r));
    assert_hg_ok(margo_provider_cforward(MARGO_DEFAULT_PROVIDER_ID, h, &in,
                                         tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ok(r.ret);
    assert_hg_ok(margo_destroy(h));

    /* No callback: refused, nothing sent. */
    assert_hg_ok(margo_create(env.client, env.addr, env.add, &h));
    assert_hg_ret(margo_cforward(h, &in, NULL, NULL), HG_INVALID_ARG);
    assert_hg_ok(margo_destroy(h));
    tc_stop(&env);
}

static void
test_cforward_errors_reach_the_callback(void **state)
{
    struct tc_env env;
    struct tc_result r = {0, HG_SUCCESS};
    tm_add_in_t in = {1, 2};
    hg_handle_t h;

    (void) state;
    tc_start(&env);
    /* A provider the server does not have. */
    assert_hg_ok(margo_create(env.client, env.addr, env.add, &h));
    assert_hg_ok(margo_provider_cforward_timed(7, h, &in, 10000, tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ret(r.ret, HG_NOENTRY);
    assert_hg_ok(margo_destroy(h));

    /* A deadline that passes first. */
    memset(&r, 0, sizeof(r));
    assert_hg_ok(margo_create(env.client, env.addr, env.slow, &h));
    assert_hg_ok(margo_cforward_timed(h, NULL, 100, tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ret(r.ret, HG_TIMEOUT);
    assert_hg_ok(margo_destroy(h));
    /* The late answer is dropped by the origin. */
    assert_non_null(tc_parked);
    {
        tm_add_out_t out = {0};

        margo_respond(tc_parked, &out);
        assert_hg_ok(margo_destroy(tc_parked));
        tc_parked = HG_HANDLE_NULL;
    }
    tc_stop(&env);
}

static void
test_crespond_and_ctransfer(void **state)
{
    struct tc_env env;
    tm_add_in_t in = {40, 2};
    tm_add_out_t out;
    hg_handle_t h;

    (void) state;
    tc_start(&env);
    memset(&tc_respond_result, 0, sizeof(tc_respond_result));
    tc_respond_result.ret = HG_OTHER_ERROR;
    assert_hg_ok(margo_create(env.client, env.addr, env.cadd, &h));
    assert_hg_ok(margo_forward(h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 42);
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    tc_wait(env.client, &tc_respond_result);
    assert_hg_ok(tc_respond_result.ret);

    /* The handler pulls with margo_bulk_ctransfer_timed. */
    assert_int_equal(tm_call_sum(env.client, env.addr, env.csum), TM_SUM);
    tc_stop(&env);
}

static void
test_ctransfer_untimed_and_bad_args(void **state)
{
    struct tc_env env;
    struct tc_result r = {0, HG_OTHER_ERROR};
    int32_t src[4] = {1, 2, 3, 4}, dst[4] = {0};
    void *sp = src, *dp = dst;
    hg_size_t size = sizeof(src);
    hg_bulk_t bs, bd;
    hg_addr_t self;

    (void) state;
    tc_start(&env);
    /* A push from one local handle to another through the client's own
     * address. */
    assert_hg_ok(
        margo_bulk_create(env.client, 1, &sp, &size, HG_BULK_READ_ONLY, &bs));
    assert_hg_ok(
        margo_bulk_create(env.client, 1, &dp, &size, HG_BULK_READWRITE, &bd));
    assert_hg_ok(margo_addr_self(env.client, &self));
    assert_hg_ok(margo_bulk_ctransfer(env.client, HG_BULK_PULL, self, bs, 0, bd,
                                      0, size, tc_done, &r));
    tc_wait(env.client, &r);
    assert_hg_ok(r.ret);
    assert_memory_equal(src, dst, sizeof(src));
    assert_hg_ret(margo_bulk_ctransfer(env.client, HG_BULK_PULL, self, bs, 0,
                                       bd, 0, size, NULL, NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_bulk_ctransfer(MARGO_INSTANCE_NULL, HG_BULK_PULL, self,
                                       bs, 0, bd, 0, size, tc_done, &r),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_addr_free(env.client, self));
    assert_hg_ok(margo_bulk_free(bs));
    assert_hg_ok(margo_bulk_free(bd));
    tc_stop(&env);
}

/* Answers every request with HG_PERMISSION. */
static void
tc_refuse(hg_handle_t h)
{
    __margo_respond_with_error(h, HG_PERMISSION);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tc_refuse)

static void
test_respond_with_error(void **state)
{
    struct tc_env env;
    tm_add_in_t in = {1, 2};
    hg_handle_t h;
    hg_id_t id;

    (void) state;
    tc_start(&env);
    MARGO_REGISTER(env.server, "tc_refuse", tm_add_in_t, tm_add_out_t,
                   tc_refuse);
    id = MARGO_REGISTER(env.client, "tc_refuse", tm_add_in_t, tm_add_out_t,
                        NULL);
    assert_hg_ok(margo_create(env.client, env.addr, id, &h));
    assert_hg_ret(margo_forward(h, &in), HG_PERMISSION);
    assert_hg_ok(margo_destroy(h));
    tc_stop(&env);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cforward_calls_back_once),
        cmocka_unit_test(test_cforward_errors_reach_the_callback),
        cmocka_unit_test(test_crespond_and_ctransfer),
        cmocka_unit_test(test_ctransfer_untimed_and_bad_args),
        cmocka_unit_test(test_respond_with_error),
    };
    return tm_main("test_margo_cforms", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
