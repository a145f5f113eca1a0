/*
 * Run-time parameters and counters (margo.h, margo-util.h): the progress
 * timeout upper bound and margo_set_param(), the HG_Progress() and
 * HG_Trigger() counters, the Argobots environment set before ABT_init(),
 * the current RPC id of a handler or ULT, progress only when needed,
 * migrating the progress pool, and Argobots profiling (not supported).
 */
#include "tm.h"

#include <margo-config.h>
#include <margo-util.h>

#include <stdlib.h>
#include <string.h>

static margo_instance_id
tp_init(int pt, int rt)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), "params");
    mid = margo_init(addr, MARGO_SERVER_MODE, pt, rt);
    assert_non_null(mid);
    return mid;
}

/* Runs first: nothing has initialized Argobots yet in this process. */
static void
test_environment(void **state)
{
    margo_instance_id mid;
    ABT_thread_attr attr;
    size_t ss = 0;

    (void) state;
    assert_int_not_equal(ABT_initialized(), ABT_SUCCESS);
    unsetenv("ABT_THREAD_STACKSIZE");
    unsetenv("ABT_MEM_MAX_NUM_STACKS");
    assert_int_equal(margo_set_environment(NULL), 0);
    assert_string_equal(getenv("ABT_THREAD_STACKSIZE"), "2097152");
    assert_string_equal(getenv("ABT_MEM_MAX_NUM_STACKS"), "8");
    assert_int_equal(
        margo_set_environment("{\"argobots\":{\"abt_thread_stacksize\":"
                              "131072,\"abt_mem_max_num_stacks\":3}}"),
        0);
    assert_string_equal(getenv("ABT_THREAD_STACKSIZE"), "131072");
    assert_string_equal(getenv("ABT_MEM_MAX_NUM_STACKS"), "3");
    assert_int_equal(margo_set_environment("{\"argobots\": [1,"), -1);
    assert_string_equal(getenv("ABT_THREAD_STACKSIZE"), "131072");

    /* The stack size reaches Argobots' ULT attributes. */
    assert_int_equal(margo_set_abt_thread_stacksize(262144), 0);
    assert_int_equal(margo_set_abt_mem_max_num_stacks(4), 0);
    assert_string_equal(getenv("ABT_MEM_MAX_NUM_STACKS"), "4");
    mid = tp_init(0, 0);
    assert_int_equal(ABT_thread_attr_create(&attr), ABT_SUCCESS);
    assert_int_equal(ABT_thread_attr_get_stacksize(attr, &ss), ABT_SUCCESS);
    assert_int_equal(ss, 262144);
    ABT_thread_attr_free(&attr);
    /* Too late now. */
    assert_int_equal(margo_set_abt_thread_stacksize(65536), -1);
    assert_int_equal(margo_set_abt_mem_max_num_stacks(2), -1);
    assert_string_equal(getenv("ABT_THREAD_STACKSIZE"), "262144");
    margo_finalize(mid);
}

/* Progress calls made while sleeping 1 s of the fabric clock. */
static uint64_t
tp_calls_for_sleep(margo_instance_id mid)
{
    uint64_t before = margo_get_num_progress_calls(mid);

    margo_thread_sleep(mid, 1000);
    return margo_get_num_progress_calls(mid) - before;
}

static void
test_progress_timeout_ub(void **state)
{
    margo_instance_id mid = tp_init(0, 0);
    unsigned ub = 0;
    uint64_t coarse, fine;

    (void) state;
    assert_int_equal(margo_get_progress_timeout_ub_msec(mid, &ub), 0);
    assert_int_equal(ub, 100);
    assert_int_equal(margo_set_progress_timeout_ub_msec(mid, 50), 0);
    assert_int_equal(margo_get_progress_timeout_ub_msec(mid, &ub), 0);
    assert_int_equal(ub, 50);
    assert_int_equal(margo_set_param(mid, "progress_timeout_ub_msecs", "100"),
                     0);
    assert_int_equal(margo_get_progress_timeout_ub_msec(mid, &ub), 0);
    assert_int_equal(ub, 100);

    /* Bad input changes nothing. */
    assert_int_equal(margo_set_param(mid, "no_such_key", "1"), -1);
    assert_int_equal(margo_set_param(mid, "progress_timeout_ub_msecs", "x"),
                     -1);
    assert_int_equal(margo_set_param(mid, "progress_timeout_ub_msecs", ""), -1);
    assert_int_equal(margo_set_param(mid, NULL, "1"), -1);
    assert_int_equal(
        margo_set_param(MARGO_INSTANCE_NULL, "progress_timeout_ub_msecs", "1"),
        -1);
    assert_int_equal(margo_set_progress_timeout_ub_msec(NULL, 1), -1);
    assert_int_equal(margo_get_progress_timeout_ub_msec(NULL, &ub), -1);
    assert_int_equal(margo_get_progress_timeout_ub_msec(mid, &ub), 0);
    assert_int_equal(ub, 100);

    if (tm_is_sim()) {
        /* On the virtual clock an idle wait blocks for the whole bound:
         * a tenth of the bound takes about ten times as many calls. */
        coarse = tp_calls_for_sleep(mid);
        assert_int_equal(
            margo_set_param(mid, "progress_timeout_ub_msecs", "10"), 0);
        fine = tp_calls_for_sleep(mid);
        fprintf(stderr,
                "progress calls for 1 s idle: %llu at 100 ms, %llu "
                "at 10 ms\n",
                (unsigned long long) coarse, (unsigned long long) fine);
        assert_true(coarse >= 10);
        assert_true(fine >= 5 * coarse);
    }
    margo_finalize(mid);
}

static void
test_counters(void **state)
{
    margo_instance_id mid = tp_init(0, 0);
    hg_id_t id =
        MARGO_REGISTER(mid, "tp_add", tm_add_in_t, tm_add_out_t, tm_add);
    hg_addr_t self;
    uint64_t p0, t0;

    (void) state;
    assert_int_equal(margo_get_num_progress_calls(MARGO_INSTANCE_NULL), 0);
    assert_int_equal(margo_get_num_trigger_calls(MARGO_INSTANCE_NULL), 0);
    p0 = margo_get_num_progress_calls(mid);
    t0 = margo_get_num_trigger_calls(mid);
    assert_hg_ok(margo_addr_self(mid, &self));
    assert_int_equal(tm_call_add(mid, self, id, 2, 3), 5);
    assert_true(margo_get_num_progress_calls(mid) > p0);
    assert_true(margo_get_num_trigger_calls(mid) > t0);
    margo_addr_free(mid, self);
    margo_finalize(mid);
}

/* ---- The current RPC id ---------------------------------------------- */

struct tp_seen {
    hg_id_t in_handler, handle_id, in_ult;
    hg_id_t set_then_get;
    atomic_int done;
};
static struct tp_seen tp_seen;

static void
tp_who(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    tm_add_in_t in;
    tm_add_out_t out = {0};

    assert_hg_ok(margo_get_current_rpc_id(mid, &tp_seen.in_handler));
    tp_seen.handle_id = margo_get_info(h)->id;
    assert_hg_ok(margo_get_input(h, &in));
    out.sum = in.a + in.b;
    margo_free_input(h, &in);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tp_who)

static void
test_current_rpc_id_handler(void **state)
{
    margo_instance_id mid = tp_init(0, 0);
    hg_id_t id = MARGO_REGISTER_PROVIDER(
        mid, "tp_who", tm_add_in_t, tm_add_out_t, tp_who, 7, ABT_POOL_NULL);
    hg_id_t cur = 1;
    hg_addr_t self;
    hg_handle_t h;
    tm_add_in_t in = {1, 2};
    tm_add_out_t out;

    (void) state;
    assert_hg_ret(margo_get_current_rpc_id(NULL, &cur), HG_INVALID_ARG);
    assert_hg_ret(margo_get_current_rpc_id(mid, NULL), HG_INVALID_ARG);
    assert_hg_ret(margo_set_current_rpc_id(NULL, 5), HG_INVALID_ARG);
    /* Nothing set: base 0 with the default provider. */
    assert_hg_ok(margo_get_current_rpc_id(mid, &cur));
    assert_true(cur == 0);
    assert_hg_ok(margo_set_current_rpc_id(mid, 0x1234));
    assert_hg_ok(margo_get_current_rpc_id(mid, &cur));
    assert_true(cur == 0x1234);

    /* The handler runs nested in this thread's forward: it sees its own
     * RPC (with provider 7), and the caller's id comes back after. */
    assert_hg_ok(margo_addr_self(mid, &self));
    assert_hg_ok(margo_create(mid, self, id, &h));
    assert_hg_ok(margo_provider_forward(7, h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 3);
    margo_free_output(h, &out);
    margo_destroy(h);
    assert_true(tp_seen.handle_id != 0);
    assert_true(tp_seen.in_handler == tp_seen.handle_id);
    assert_int_equal(margo_rpc_id_get_provider_id(tp_seen.in_handler), 7);
    assert_hg_ok(margo_get_current_rpc_id(mid, &cur));
    assert_true(cur == 0x1234);
    assert_hg_ok(margo_set_current_rpc_id(mid, 0));
    assert_hg_ok(margo_get_current_rpc_id(mid, &cur));
    assert_true(cur == 0);
    margo_addr_free(mid, self);
    margo_finalize(mid);
}

static void
tp_ult_set(void *arg)
{
    margo_instance_id mid = arg;

    (void) margo_set_current_rpc_id(mid, 0x777);
    (void) margo_get_current_rpc_id(mid, &tp_seen.set_then_get);
}

static void
tp_ult_get(void *arg)
{
    (void) margo_get_current_rpc_id(arg, &tp_seen.in_ult);
}

static void
test_current_rpc_id_is_per_ult(void **state)
{
    /* One handler execution stream: both ULTs run on the same worker. */
    margo_instance_id mid = tp_init(0, 1);
    ABT_pool pool = ABT_POOL_NULL;
    ABT_thread t;

    (void) state;
    assert_int_equal(margo_get_handler_pool(mid, &pool), 0);
    assert_hg_ok(margo_set_current_rpc_id(mid, 0x55));
    tp_seen.in_ult = 1;
    assert_int_equal(
        ABT_thread_create(pool, tp_ult_set, mid, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_true(tp_seen.set_then_get == 0x777);
    assert_int_equal(
        ABT_thread_create(pool, tp_ult_get, mid, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    /* Neither the creator's id nor the earlier ULT's. */
    assert_true(tp_seen.in_ult == 0);
    margo_finalize(mid);
}

static uint64_t
busy_calls(margo_instance_id mid, uint64_t before)
{
    return margo_get_num_progress_calls(mid) - before;
}

/* A client's progress thread told to progress only when needed makes no
 * HG_Progress() calls while idle, and still completes its forwards. */
static void
test_progress_when_needed(void **state)
{
    margo_instance_id server = tp_init(0, 0), client;
    char caddr[64];
    uint64_t before, idle, busy;
    hg_addr_t addr;
    hg_id_t id;

    (void) state;
    tm_addr_for(caddr, sizeof(caddr), "params-c");
    client = margo_init(caddr, MARGO_CLIENT_MODE, 1, 0);
    assert_non_null(client);
    MARGO_REGISTER(server, "tp_wn", tm_add_in_t, tm_add_out_t, tm_add);
    id = MARGO_REGISTER(client, "tp_wn", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    assert_int_equal(margo_set_progress_when_needed(MARGO_INSTANCE_NULL, true),
                     -1);
    assert_int_equal(margo_set_progress_when_needed(client, true), 0);
    assert_int_equal(tm_call_add(client, addr, id, 20, 22), 42);
    if (tm_is_sim()) {
        /* The server's 1 s sleep moves the virtual clock. */
        margo_thread_sleep(server, 10);
        before = margo_get_num_progress_calls(client);
        margo_thread_sleep(server, 1000);
        idle = margo_get_num_progress_calls(client) - before;
        /* Told to progress always, it does (how soon depends on thread
         * scheduling: wait up to 60 s of virtual time for two calls). */
        assert_int_equal(margo_set_progress_when_needed(client, false), 0);
        before = margo_get_num_progress_calls(client);
        for (int i = 0; i < 600 && busy_calls(client, before) < 2; i++)
            margo_thread_sleep(server, 100);
        busy = busy_calls(client, before);
        fprintf(stderr,
                "client progress calls in 1 s idle when needed: %llu; "
                "always: %llu\n",
                (unsigned long long) idle, (unsigned long long) busy);
        assert_true(idle <= 1);
        assert_true(busy >= 2);
        assert_int_equal(margo_set_progress_when_needed(client, true), 0);
    }
    assert_int_equal(tm_call_add(client, addr, id, 1, 2), 3);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

/* The progress pool designation moves; the pool it names stays. */
static void
test_migrate_progress_loop(void **state)
{
    margo_instance_id mid = tp_init(1, 0);
    struct margo_pool_info info, old;
    ABT_pool pool;
    char *json;

    (void) state;
    assert_int_equal(margo_get_progress_pool(mid, &pool), 0);
    assert_hg_ok(margo_find_pool_by_handle(mid, pool, &old));
    assert_hg_ok(margo_add_pool_from_json(mid, "{\"name\":\"moved\"}", &info));
    assert_int_equal(margo_migrate_progress_loop(mid, info.index), 0);
    assert_int_equal(margo_migrate_progress_loop(mid, info.index), 0);
    assert_int_equal(margo_get_progress_pool(mid, &pool), 0);
    assert_ptr_equal(pool, info.pool);
    json = margo_get_config_opt(mid, MARGO_CONFIG_USE_NAMES);
    assert_non_null(strstr(json, "\"progress_pool\":\"moved\""));
    free(json);
    assert_hg_ret(margo_remove_pool_by_name(mid, "moved"), HG_OTHER_ERROR);
    assert_int_equal(margo_migrate_progress_loop(mid, 999), ABT_ERR_INV_ARG);
    assert_int_equal(margo_migrate_progress_loop(NULL, 0), ABT_ERR_INV_ARG);
    /* Back to where it was; "moved" is an ordinary pool again. */
    assert_int_equal(margo_migrate_progress_loop(mid, old.index), 0);
    assert_hg_ok(margo_remove_pool_by_name(mid, "moved"));
    margo_finalize(mid);
}

/* Counts the error lines that say "not supported". */
static void
tp_count_unsupported(void *uargs, const char *message)
{
    if (strstr(message, "not supported") != NULL)
        (*(int *) uargs)++;
}

static void
test_abt_profiling_not_supported(void **state)
{
    margo_instance_id mid = tp_init(0, 0);
    char *name = (char *) "unchanged";
    int said = 0;
    struct margo_logger logger = {&said,
                                  tp_count_unsupported,
                                  tp_count_unsupported,
                                  tp_count_unsupported,
                                  tp_count_unsupported,
                                  tp_count_unsupported,
                                  tp_count_unsupported};

    (void) state;
    assert_int_equal(margo_set_logger(mid, &logger), 0);
    assert_int_equal(margo_start_abt_profiling(mid, true), -1);
    assert_int_equal(margo_start_abt_profiling(MARGO_INSTANCE_NULL, false), -1);
    assert_int_equal(margo_stop_abt_profiling(mid), -1);
    assert_int_equal(margo_dump_abt_profiling(mid, "-", 0, &name), -1);
    assert_null(name);
    assert_int_equal(said, 3);
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_progress_timeout_ub),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_progress_when_needed),
        cmocka_unit_test(test_migrate_progress_loop),
        cmocka_unit_test(test_abt_profiling_not_supported),
        cmocka_unit_test(test_current_rpc_id_handler),
        cmocka_unit_test(test_current_rpc_id_is_per_ult),
    };

    return tm_main("margo_params", tests, sizeof(tests) / sizeof(tests[0]));
}
