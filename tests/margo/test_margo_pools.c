/*
 * Pools and execution streams (abt.h): handlers of an RPC registered on a
 * pool run on that pool's workers; the handler and progress pools; the
 * find-by-name/index/handle calls; margo_rpc_set_pool; timers on a pool;
 * a handler blocked on its pool's only execution stream does not stop new
 * work on that pool.
 */
#include "tm.h"

#include <margo-timer.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static const char *tq_json =
    "{ \"argobots\": { \"pools\": [ {\"name\": \"pool_a\"},"
    "                               {\"name\": \"pool_b\"} ],"
    "  \"xstreams\": [ {\"name\": \"es_a\", \"scheduler\": {\"type\":"
    "                   \"basic_wait\", \"pools\": [\"pool_a\"]}},"
    "                  {\"name\": \"es_b\", \"scheduler\": {\"type\":"
    "                   \"basic_wait\", \"pools\": [\"pool_b\"]}} ] },"
    "  \"rpc_pool\": \"pool_b\" }";

struct tq_env {
    margo_instance_id server, client;
    hg_addr_t addr;
    hg_id_t id;
};

static void
tq_start(struct tq_env *env, const char *json)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    char saddr[64], caddr[64];

    tm_addr_for(saddr, sizeof(saddr), "pools-s");
    tm_addr_for(caddr, sizeof(caddr), "pools-c");
    info.json_config = json;
    env->server = margo_init_ext(saddr, MARGO_SERVER_MODE, &info);
    env->client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(env->server);
    assert_non_null(env->client);
    env->id =
        MARGO_REGISTER(env->client, "tm_where", void, tm_where_out_t, NULL);
    env->addr = tm_lookup_self(env->client, env->server);
}

static void
tq_stop(struct tq_env *env)
{
    assert_hg_ok(margo_addr_free(env->client, env->addr));
    margo_finalize(env->client);
    margo_finalize(env->server);
}

static int32_t
tq_call(struct tq_env *env, uint16_t provider)
{
    tm_where_out_t out;
    hg_handle_t h;
    int32_t where;

    assert_hg_ok(margo_create(env->client, env->addr, env->id, &h));
    assert_hg_ok(margo_provider_forward(provider, h, NULL));
    assert_hg_ok(margo_get_output(h, &out));
    where = out.pool_index;
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    return where;
}

static void
test_handlers_run_on_their_pool(void **state)
{
    struct tq_env env;
    struct margo_pool_info a, b, byidx;
    struct margo_xstream_info xs;
    ABT_pool handler_pool, progress_pool, got;
    hg_id_t id;

    (void) state;
    tq_start(&env, tq_json);
    assert_int_equal(margo_get_num_pools(env.server), 3);
    assert_int_equal(margo_get_num_xstreams(env.server), 3);
    assert_hg_ok(margo_find_pool_by_name(env.server, "pool_a", &a));
    assert_hg_ok(margo_find_pool_by_name(env.server, "pool_b", &b));
    assert_hg_ret(margo_find_pool_by_name(env.server, "nope", NULL),
                  HG_NOENTRY);
    assert_hg_ok(margo_find_pool_by_index(env.server, a.index, &byidx));
    assert_ptr_equal(byidx.pool, a.pool);
    assert_string_equal(byidx.name, "pool_a");
    assert_hg_ret(margo_find_pool_by_index(env.server, 9, NULL),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_find_xstream_by_name(env.server, "es_b", &xs));
    assert_hg_ok(margo_find_xstream_by_handle(env.server, xs.xstream, NULL));
    /* As in Margo, the JSON's entries first, then __primary__. */
    assert_hg_ok(margo_find_xstream_by_index(env.server, 2, &xs));
    assert_string_equal(xs.name, "__primary__");
    assert_hg_ok(margo_find_pool_by_index(env.server, 2, &byidx));
    assert_string_equal(byidx.name, "__primary__");
    assert_hg_ret(margo_find_xstream_by_name(env.server, "nope", NULL),
                  HG_NOENTRY);
    /* The _Generic forms dispatch on the argument's type. */
    assert_hg_ok(margo_find_pool(env.server, "pool_b", &byidx));
    assert_ptr_equal(byidx.pool, b.pool);
    assert_hg_ok(margo_find_pool(env.server, (uint32_t) 1, &byidx));
    assert_hg_ok(margo_find_pool(env.server, a.pool, &byidx));
    assert_string_equal(byidx.name, "pool_a");
    assert_hg_ok(margo_find_xstream(env.server, "es_a", &xs));
    assert_hg_ok(margo_find_xstream(env.server, xs.xstream, &xs));
    assert_string_equal(xs.name, "es_a");
    assert_int_equal(margo_get_handler_pool(env.server, &handler_pool), 0);
    assert_ptr_equal(handler_pool, b.pool);
    assert_int_equal(margo_get_progress_pool(env.server, &progress_pool), 0);
    assert_hg_ok(margo_find_pool_by_handle(env.server, progress_pool, &byidx));
    assert_string_equal(byidx.name, "__primary__");
    /* The main thread runs from the primary stream's first pool, which
     * Margo's init made __primary__, asked either way. */
    ABT_thread self;
    got = ABT_POOL_NULL;
    assert_int_equal(ABT_self_get_last_pool(&got), ABT_SUCCESS);
    assert_ptr_equal(got, progress_pool);
    got = ABT_POOL_NULL;
    assert_int_equal(ABT_thread_self(&self), ABT_SUCCESS);
    assert_int_equal(ABT_thread_get_last_pool(self, &got), ABT_SUCCESS);
    assert_ptr_equal(got, progress_pool);

    /* Provider 1 on pool_a, provider 2 on the handler pool (pool_b). */
    id = MARGO_REGISTER_PROVIDER(env.server, "tm_where", void, tm_where_out_t,
                                 tm_where, 1, a.pool);
    MARGO_REGISTER_PROVIDER(env.server, "tm_where", void, tm_where_out_t,
                            tm_where, 2, ABT_POOL_NULL);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tq_call(&env, 1), (int32_t) a.index);
        assert_int_equal(tq_call(&env, 2), (int32_t) b.index);
    }
    assert_hg_ok(margo_rpc_get_pool(env.server, id, &got));
    assert_ptr_equal(got, a.pool);
    /* Moved to pool_b. */
    assert_hg_ok(margo_rpc_set_pool(env.server, id, b.pool));
    assert_int_equal(tq_call(&env, 1), (int32_t) b.index);
    assert_hg_ret(margo_rpc_set_pool(env.server, 12345, b.pool), HG_NOENTRY);
    tq_stop(&env);
}

static void
test_legacy_pools(void **state)
{
    char addr[64];
    margo_instance_id mid;
    struct margo_pool_info info;
    ABT_pool pool;

    (void) state;
    tm_addr_for(addr, sizeof(addr), "pools-legacy");
    mid = margo_init(addr, MARGO_SERVER_MODE, 1, 3);
    assert_non_null(mid);
    assert_int_equal(margo_get_handler_pool(mid, &pool), 0);
    assert_hg_ok(margo_find_pool_by_handle(mid, pool, &info));
    assert_string_equal(info.name, "__pool_2__");
    assert_int_equal(margo_get_progress_pool(mid, &pool), 0);
    assert_hg_ok(margo_find_pool_by_handle(mid, pool, &info));
    assert_string_equal(info.name, "__pool_1__");
    /* Margo's names: __primary__, then __xstream_1__ for the progress
     * pool and __xstream_2__ .. __xstream_4__ for the RPC pool. */
    assert_int_equal(margo_get_num_xstreams(mid), 5);
    assert_hg_ok(margo_find_xstream_by_name(mid, "__xstream_4__", NULL));
    assert_hg_ok(margo_find_xstream_by_index(mid, 0, NULL));
    assert_int_equal(margo_get_handler_pool(MARGO_INSTANCE_NULL, &pool), -1);
    margo_finalize(mid);
}

/* One execution stream on pool_a; the first handler waits for the second
 * to run on the same pool. Argobots never lets a blocked ULT starve its
 * pool; neither may this implementation. */
static ABT_eventual tq_ev;
static atomic_int tq_order;

static void
tq_block(hg_handle_t h)
{
    tm_where_out_t out = {0};

    ABT_eventual_wait(tq_ev, NULL);
    out.pool_index = atomic_fetch_add(&tq_order, 1);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tq_block)

static void
tq_release(hg_handle_t h)
{
    tm_where_out_t out = {0};

    out.pool_index = atomic_fetch_add(&tq_order, 1);
    ABT_eventual_set(tq_ev, NULL, 0);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tq_release)

static void
test_blocked_handler_does_not_starve_pool(void **state)
{
    struct tq_env env;
    struct margo_pool_info a;
    hg_id_t block_id, release_id;
    hg_handle_t h1, h2;
    margo_request r1, r2;
    tm_where_out_t out;

    (void) state;
    tq_start(&env, tq_json);
    assert_hg_ok(margo_find_pool_by_name(env.server, "pool_a", &a));
    assert_int_equal(ABT_eventual_create(0, &tq_ev), ABT_SUCCESS);
    atomic_store(&tq_order, 0);
    block_id = MARGO_REGISTER_PROVIDER(env.server, "tq_block", void,
                                       tm_where_out_t, tq_block, 3, a.pool);
    release_id = MARGO_REGISTER_PROVIDER(env.server, "tq_release", void,
                                         tm_where_out_t, tq_release, 3, a.pool);
    assert_int_not_equal(block_id, 0);
    assert_int_not_equal(release_id, 0);
    MARGO_REGISTER(env.client, "tq_block", void, tm_where_out_t, NULL);
    MARGO_REGISTER(env.client, "tq_release", void, tm_where_out_t, NULL);
    assert_hg_ok(
        margo_create(env.client, env.addr, (block_id & 0xffffffffu), &h1));
    assert_hg_ok(
        margo_create(env.client, env.addr, (release_id & 0xffffffffu), &h2));
    assert_hg_ok(margo_provider_iforward(3, h1, NULL, &r1));
    /* Let the first handler start and block before the second is sent. */
    margo_thread_sleep(env.client, 20);
    assert_hg_ok(margo_provider_iforward(3, h2, NULL, &r2));
    assert_hg_ok(margo_wait(r2));
    assert_hg_ok(margo_wait(r1));
    assert_hg_ok(margo_get_output(h1, &out));
    assert_int_equal(out.pool_index, 1); /* ran second */
    assert_hg_ok(margo_free_output(h1, &out));
    assert_hg_ok(margo_destroy(h1));
    assert_hg_ok(margo_destroy(h2));
    ABT_eventual_free(&tq_ev);
    tq_stop(&env);
}

/* A handler on pool_a (one execution stream) that makes a blocking Margo
 * call whose answer needs another handler on the same pool: the pool must
 * not wait for the blocked handler to finish. */
static hg_id_t tq_inner_id;

static void
tq_inner(hg_handle_t h)
{
    tm_where_out_t out = {7};

    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tq_inner)

static void
tq_outer(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    tm_where_out_t out = {-1}, inner = {-1};
    hg_handle_t ih;
    hg_addr_t self;

    if (margo_addr_self(mid, &self) == HG_SUCCESS) {
        if (margo_create(mid, self, tq_inner_id, &ih) == HG_SUCCESS) {
            if (margo_provider_forward(3, ih, NULL) == HG_SUCCESS &&
                margo_get_output(ih, &inner) == HG_SUCCESS) {
                out.pool_index = inner.pool_index;
                margo_free_output(ih, &inner);
            }
            margo_destroy(ih);
        }
        margo_addr_free(mid, self);
    }
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tq_outer)

static void
test_blocking_margo_call_in_handler(void **state)
{
    struct tq_env env;
    struct margo_pool_info a;
    hg_id_t outer_id;
    hg_handle_t h;
    tm_where_out_t out;

    (void) state;
    tq_start(&env, tq_json);
    assert_hg_ok(margo_find_pool_by_name(env.server, "pool_a", &a));
    outer_id = MARGO_REGISTER_PROVIDER(env.server, "tq_outer", void,
                                       tm_where_out_t, tq_outer, 3, a.pool);
    tq_inner_id = MARGO_REGISTER_PROVIDER(env.server, "tq_inner", void,
                                          tm_where_out_t, tq_inner, 3, a.pool);
    assert_int_not_equal(outer_id, 0);
    assert_int_not_equal(tq_inner_id, 0);
    tq_inner_id &= 0xffffffffu;
    /* The server calls itself: it needs the origin's registration too. */
    MARGO_REGISTER(env.server, "tq_inner", void, tm_where_out_t, NULL);
    MARGO_REGISTER(env.client, "tq_outer", void, tm_where_out_t, NULL);
    assert_hg_ok(
        margo_create(env.client, env.addr, (outer_id & 0xffffffffu), &h));
    assert_hg_ok(margo_provider_forward(3, h, NULL));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.pool_index, 7);
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    tq_stop(&env);
}

/* A timer whose callback runs on pool_a, and a ULT a program pushes onto
 * the handler pool itself. */
static ABT_pool tq_timer_pool;
static atomic_int tq_timer_fired;
static void
tq_timer_cb(void *arg)
{
    (void) arg;
    ABT_self_get_last_pool(&tq_timer_pool);
    atomic_store(&tq_timer_fired, 1);
}

static atomic_int tq_ult_ran;
static void
tq_ult(void *arg)
{
    (void) arg;
    atomic_store(&tq_ult_ran, 1);
}

static void
test_timer_and_ult_on_pool(void **state)
{
    struct tq_env env;
    struct margo_pool_info a;
    margo_timer_t t;
    ABT_pool handler_pool;
    ABT_thread ult;

    (void) state;
    tq_start(&env, tq_json);
    assert_hg_ok(margo_find_pool_by_name(env.server, "pool_a", &a));
    atomic_store(&tq_timer_fired, 0);
    assert_int_equal(
        margo_timer_create_with_pool(env.server, tq_timer_cb, NULL, a.pool, &t),
        0);
    assert_int_equal(margo_timer_start(t, 10), 0);
    /* Past the deadline on the fabric clock the callback has been handed
     * to pool_a; its worker runs it in real time, which on the simulator
     * is not tied to the virtual clock: wait for the event itself. */
    margo_thread_sleep(env.server, 20);
    margo_thread_sleep(env.server, 1);
    tm_wait_flag(&tq_timer_fired);
    assert_ptr_equal(tq_timer_pool, a.pool);
    assert_int_equal(margo_timer_destroy(t), 0);

    assert_int_equal(margo_get_handler_pool(env.server, &handler_pool), 0);
    assert_int_equal(ABT_thread_create(handler_pool, tq_ult, NULL,
                                       ABT_THREAD_ATTR_NULL, &ult),
                     ABT_SUCCESS);
    assert_int_equal(ABT_thread_join(ult), ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&ult), ABT_SUCCESS);
    assert_int_equal(atomic_load(&tq_ult_ran), 1);
    tq_stop(&env);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handlers_run_on_their_pool),
        cmocka_unit_test(test_legacy_pools),
        cmocka_unit_test(test_blocked_handler_does_not_starve_pool),
        cmocka_unit_test(test_blocking_margo_call_in_handler),
        cmocka_unit_test(test_timer_and_ult_on_pool),
    };

    return tm_main("margo_pools", tests, sizeof(tests) / sizeof(tests[0]));
}
