/*
 * margo_init_ext() and Margo's JSON configuration: defaults, the legacy
 * fields, named pools and execution streams, the "mercury" section, an
 * existing HG class and context, a logger, margo_get_config(_opt), and
 * every kind of bad input giving MARGO_INSTANCE_NULL.
 */
#include "tm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static margo_instance_id
tc_init(const char *role, int mode, const char *json)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    char addr[64];

    tm_addr_for(addr, sizeof(addr), role);
    info.json_config = json;
    return margo_init_ext(addr, mode, &info);
}

/* Serve tm_add on `server` and call it from a fresh client. */
static void
tc_check_serves(margo_instance_id server)
{
    margo_instance_id client = tc_init("cfg-c", MARGO_CLIENT_MODE, NULL);
    hg_id_t id =
        MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    hg_addr_t addr;

    assert_non_null(client);
    MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tm_call_add(client, addr, id, i, 7), i + 7);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
}

static void
tc_expect(margo_instance_id mid, int options, const char *needle)
{
    char *cfg = margo_get_config_opt(mid, options);

    assert_non_null(cfg);
    if (strstr(cfg, needle) == NULL)
        fail_msg("\"%s\" not in the configuration: %s", needle, cfg);
    free(cfg);
}

static void
test_defaults(void **state)
{
    char addr[64];
    margo_instance_id mid;
    char *cfg;

    (void) state;
    tm_addr_for(addr, sizeof(addr), "cfg-default");
    mid = margo_init_ext(addr, MARGO_SERVER_MODE, NULL);
    assert_non_null(mid);
    cfg = margo_get_config(mid);
    assert_non_null(cfg);
    /* Margo's keys, not the legacy ones. */
    assert_null(strstr(cfg, "use_progress_thread"));
    assert_null(strstr(cfg, "rpc_thread_count"));
    assert_null(strstr(cfg, "affinity"));
    assert_non_null(strstr(cfg, "\"progress_spindown_msec\":10"));
    assert_non_null(strstr(cfg, "\"handle_cache_size\":256"));
    assert_non_null(strstr(cfg, "\"profiling_dir\":\".\""));
    assert_non_null(strstr(cfg, "\"nic_policy\":\"roundrobin\""));
    assert_non_null(strstr(cfg, "\"name\":\"__primary__\""));
    assert_non_null(strstr(cfg, "\"listening\":true"));
    assert_non_null(strstr(cfg, "\"progress_pool\":0"));
    free(cfg);
    tc_expect(mid, MARGO_CONFIG_PRETTY_JSON, "\n");
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"rpc_pool\":\"__primary__\"");
    assert_null(margo_get_config(MARGO_INSTANCE_NULL));
    tc_check_serves(mid);
    margo_finalize(mid);
}

static void
test_legacy_fields(void **state)
{
    margo_instance_id mid =
        tc_init("cfg-legacy", MARGO_SERVER_MODE,
                "{\"use_progress_thread\": true, \"rpc_thread_count\": 2}");

    (void) state;
    assert_non_null(mid);
    /* Margo's names: __pool_1__ with __xstream_1__ for progress,
     * __pool_2__ with __xstream_2__ and __xstream_3__ for handlers. */
    tc_expect(mid, 0, "\"name\":\"__pool_1__\"");
    tc_expect(mid, 0, "\"name\":\"__xstream_3__\"");
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"rpc_pool\":\"__pool_2__\"");
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"progress_pool\":\"__pool_1__\"");
    tc_check_serves(mid);
    margo_finalize(mid);
}

static void
test_named_pools(void **state)
{
    static const char *json =
        "{ \"argobots\": {"
        "    \"pools\": [ {\"name\": \"my_pool\", \"kind\": \"fifo_wait\","
        "                  \"access\": \"mpmc\"},"
        "                 {\"name\": \"my_progress\"} ],"
        "    \"xstreams\": [ {\"name\": \"my_es\", \"scheduler\":"
        "                     {\"type\": \"basic_wait\","
        "                      \"pools\": [\"my_pool\"]}},"
        "                    {\"name\": \"my_es2\", \"scheduler\":"
        "                     {\"type\": \"basic_wait\", \"pools\": [1]}} ] },"
        "  \"progress_pool\": \"my_progress\", \"rpc_pool\": \"my_pool\","
        "  \"mercury\": {\"request_post_init\": 16, \"stats\": false,"
        "                \"probe_interval_ms\": 250, \"no_probe\": true} }";
    margo_instance_id mid = tc_init("cfg-pools", MARGO_SERVER_MODE, json);

    (void) state;
    assert_non_null(mid);
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"rpc_pool\":\"my_pool\"");
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"progress_pool\":\"my_progress\"");
    tc_expect(mid, 0, "\"name\":\"my_es2\"");
    tc_expect(mid, 0, "\"request_post_init\":16");
    tc_expect(mid, 0, "\"probe_interval_ms\":250");
    tc_expect(mid, 0, "\"no_probe\":true");
    /* The JSON's pools first, in order; __primary__ after them. */
    tc_expect(mid, 0, "\"progress_pool\":1,\"rpc_pool\":0");
    tc_check_serves(mid);
    margo_finalize(mid);
}

static void
test_bad_configurations(void **state)
{
    static const char *bad[] = {
        "{",
        "[1, 2]",
        "{\"use_progress_thread\": 3}",
        "{\"rpc_thread_count\": \"two\"}",
        "{\"rpc_pool\": \"nope\"}",
        "{\"progress_pool\": 7}",
        "{\"mercury\": {\"request_post_init\": \"x\"}}",
        "{\"mercury\": 5}",
        "{\"mercury\": {\"auto_sm\": \"yes\"}}",
        "{\"mercury\": {\"no_probe\": \"yes\"}}",
        "{\"mercury\": {\"probe_interval_ms\": 3600001}}",
        /* Unsigned fields (docs/margo.md): a negative count or bound. */
        "{\"handle_cache_size\": -1}",
        "{\"progress_timeout_ub_msec\": -100}",
        "{\"mercury\": {\"request_post_init\": -4}}",
        "{\"mercury\": {\"sm_info_string\": 5}}",
        "{\"argobots\": {\"pools\": [{\"name\": \"p\", \"kind\": \"lifo\"}]}}",
        "{\"progress_pool\": true}",
        "{\"argobots\": {\"pools\": [{\"name\": \"2p\"}]}}",
        "{\"argobots\": {\"pools\": [{\"name\": \"p-q\"}]}}",
        "{\"argobots\": {\"pools\": [{\"kind\": \"external\"}]}}",
        "{\"argobots\": {\"abt_mem_max_num_stacks\": true}}",
        ("{\"argobots\": {\"pools\": [{\"name\": \"p\"}, {\"name\":"
         " \"__primary__\"}], \"xstreams\": [{\"name\": \"__primary__\","
         " \"scheduler\": {\"pools\": [\"p\", \"__primary__\"]}}]}}"),
        "{\"argobots\": {\"pools\": [{\"name\": \"p\"}, {\"name\": \"p\"}]}}",
        ("{\"argobots\": {\"xstreams\": [{\"name\": \"x\", \"scheduler\":"
         " {\"pools\": [\"missing\"]}}]}}"),
        "{\"argobots\": {\"xstreams\": [{\"name\": \"x\"}]}}",
        "{\"use_progress_thread\": true} trailing",
    };

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        margo_instance_id mid = tc_init("cfg-bad", MARGO_SERVER_MODE, bad[i]);

        if (mid != MARGO_INSTANCE_NULL) {
            margo_finalize(mid);
            fail_msg("accepted: %s", bad[i]);
        }
    }
    /* Unknown keys are reported and ignored, as Margo does. */
    margo_instance_id mid =
        tc_init("cfg-unknown", MARGO_SERVER_MODE, "{\"some_future_key\": 1}");
    assert_non_null(mid);
    margo_finalize(mid);
    /* Accepted as Margo accepts them: a pool without a name (one is made
     * up), a negative rpc_thread_count (handlers on the progress pool),
     * an RPC pool no xstream serves yet (a warning). */
    mid = tc_init("cfg-ok", MARGO_SERVER_MODE,
                  "{\"argobots\": {\"pools\": [{\"kind\": \"fifo\"}]},"
                  " \"rpc_thread_count\": -5}");
    assert_non_null(mid);
    tc_expect(mid, 0, "\"name\":\"__pool_0__\"");
    margo_finalize(mid);
    mid = tc_init("cfg-ok", MARGO_SERVER_MODE,
                  "{\"argobots\": {\"pools\": [{\"name\": \"p\"}]},"
                  " \"rpc_pool\": \"p\"}");
    assert_non_null(mid);
    tc_expect(mid, MARGO_CONFIG_USE_NAMES, "\"rpc_pool\":\"p\"");
    margo_finalize(mid);
    /* An invalid mode or a missing address is refused too. */
    assert_null(margo_init_ext(NULL, MARGO_SERVER_MODE, NULL));
    assert_null(margo_init_ext("sim://x", 7, NULL));
}

static int tc_logged;
static void
tc_log(void *uargs, const char *msg)
{
    (void) uargs;
    (void) msg;
    tc_logged++;
}

static void
test_existing_class_and_logger(void **state)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    struct margo_logger logger = {NULL,   tc_log, tc_log, tc_log,
                                  tc_log, tc_log, tc_log};
    char addr[64];
    hg_class_t *cls;
    hg_context_t *ctx;
    margo_instance_id mid;

    (void) state;
    tm_addr_for(addr, sizeof(addr), "cfg-hg");
    cls = HG_Init(addr, HG_TRUE);
    assert_non_null(cls);
    ctx = HG_Context_create(cls);
    assert_non_null(ctx);
    info.hg_class = cls;
    info.hg_context = ctx;
    info.logger = &logger;
    mid = margo_init_ext(NULL, MARGO_SERVER_MODE, &info);
    assert_non_null(mid);
    assert_ptr_equal(margo_get_class(mid), cls);
    assert_ptr_equal(margo_get_context(mid), ctx);
    tc_logged = 0;
    margo_error(mid, "through the given logger");
    assert_int_equal(tc_logged, 1);
    tc_check_serves(mid);
    margo_finalize(mid);
    /* Still the caller's. */
    assert_hg_ok(HG_Context_destroy(ctx));
    assert_hg_ok(HG_Finalize(cls));

    info = (struct margo_init_info) MARGO_INIT_INFO_INITIALIZER;
    info.hg_context = ctx; /* a context without its class */
    assert_null(margo_init_ext(addr, MARGO_SERVER_MODE, &info));
}

/* A child instance (parent_mid) runs on its parent's pools and xstreams,
 * may name them as its progress and RPC pools, serves RPCs, and keeps its
 * parent referenced until it is finalized. */
static void
test_parent_mid(void **state)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    struct margo_pool_info mine;
    margo_instance_id parent, child;
    ABT_pool p_rpc, c_rpc, c_progress;
    unsigned refs;
    char addr[64];

    (void) state;
    parent = tc_init("cfg-parent", MARGO_SERVER_MODE,
                     "{\"argobots\": {\"pools\": [{\"name\": \"mine\"}],"
                     " \"xstreams\": [{\"name\": \"es\", \"scheduler\":"
                     " {\"pools\": [\"mine\"]}}]}}");
    assert_non_null(parent);
    assert_hg_ok(margo_find_pool_by_name(parent, "mine", &mine));
    tm_addr_for(addr, sizeof(addr), "cfg-child");
    info.parent_mid = parent;
    child = margo_init_ext(addr, MARGO_SERVER_MODE, &info);
    assert_non_null(child);
    assert_int_equal(margo_get_handler_pool(parent, &p_rpc), 0);
    assert_int_equal(margo_get_handler_pool(child, &c_rpc), 0);
    assert_ptr_equal(p_rpc, c_rpc);
    assert_int_equal(margo_get_num_pools(child), margo_get_num_pools(parent));
    assert_hg_ok(margo_instance_ref_count(parent, &refs));
    assert_int_equal(refs, 2);
    tc_check_serves(child);
    margo_finalize(child);
    assert_hg_ok(margo_instance_ref_count(parent, &refs));
    assert_int_equal(refs, 1);

    info.json_config = "{\"progress_pool\": \"mine\", \"rpc_pool\": 0}";
    child = margo_init_ext(addr, MARGO_SERVER_MODE, &info);
    assert_non_null(child);
    assert_int_equal(margo_get_progress_pool(child, &c_progress), 0);
    assert_ptr_equal(c_progress, mine.pool);
    assert_int_equal(margo_get_handler_pool(child, &c_rpc), 0);
    assert_ptr_equal(c_rpc, mine.pool);
    tc_check_serves(child);
    margo_finalize(child);

    /* The parent's Argobots layout is not the child's to change. */
    info.json_config = "{\"argobots\": {}}";
    assert_null(margo_init_ext(addr, MARGO_SERVER_MODE, &info));
    info.json_config = "{\"use_progress_thread\": true}";
    assert_null(margo_init_ext(addr, MARGO_SERVER_MODE, &info));
    info.json_config = "{\"rpc_pool\": \"nope\"}";
    assert_null(margo_init_ext(addr, MARGO_SERVER_MODE, &info));
    tc_check_serves(parent);
    margo_finalize(parent);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_legacy_fields),
        cmocka_unit_test(test_named_pools),
        cmocka_unit_test(test_bad_configurations),
        cmocka_unit_test(test_existing_class_and_logger),
        cmocka_unit_test(test_parent_mid),
    };

    return tm_main("margo_config", tests, sizeof(tests) / sizeof(tests[0]));
}
