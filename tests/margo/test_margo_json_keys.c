/*
 * Margo's JSON keys have their effect, or are warned by name at
 * margo_init_ext() (issue 24, item 5): the "mercury" keys reach HG and NA
 * (message sizes, checksums, progress mode, address format, strings the
 * plugins refuse, log settings), xstreams' cpubind and affinity bind
 * their threads, and every key that is not honoured gives one warning
 * line through the library's log sink (HG_Set_log_func()).
 */
#include "tm.h"

#include <na.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The log sink ---------------------------------------------------- */

#define TK_LINES 64
static char tk_lines[TK_LINES][512];
static int tk_count;

static int
tk_sink(FILE *stream, const char *format, ...)
{
    va_list ap;

    (void) stream;
    va_start(ap, format);
    if (tk_count < TK_LINES)
        vsnprintf(tk_lines[tk_count], sizeof(tk_lines[0]), format, ap);
    va_end(ap);
    tk_count++;
    return 0;
}

static void
tk_capture(void)
{
    tk_count = 0;
    HG_Set_log_func(tk_sink);
}

static void
tk_release(void)
{
    HG_Set_log_func(NULL);
}

/* Lines captured that contain both needles (b may be NULL). */
static int
tk_lines_with(const char *a, const char *b)
{
    int n = 0;

    for (int i = 0; i < tk_count && i < TK_LINES; i++)
        if (strstr(tk_lines[i], a) && (b == NULL || strstr(tk_lines[i], b)))
            n++;
    return n;
}

static void
tk_dump(void)
{
    for (int i = 0; i < tk_count && i < TK_LINES; i++)
        print_message("  log: %s", tk_lines[i]);
}

/* ---- Instances ------------------------------------------------------- */

static margo_instance_id
tk_init_at(const char *addr, int mode, const char *json)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;

    info.json_config = json;
    return margo_init_ext(addr, mode, &info);
}

static margo_instance_id
tk_init(const char *role, int mode, const char *json)
{
    char addr[64];

    tm_addr_for(addr, sizeof(addr), role);
    return tk_init_at(addr, mode, json);
}

static void
tk_expect_config(margo_instance_id mid, const char *needle)
{
    char *cfg = margo_get_config(mid);

    assert_non_null(cfg);
    if (strstr(cfg, needle) == NULL)
        fail_msg("\"%s\" not in the configuration: %s", needle, cfg);
    free(cfg);
}

/* Forward tm_add(a, b) from client to server; the forward's result. */
static hg_return_t
tk_forward_add(margo_instance_id client, margo_instance_id server, hg_id_t id,
               int32_t *sum)
{
    hg_addr_t addr = tm_lookup_self(client, server);
    tm_add_in_t in = {.a = 20, .b = 22};
    tm_add_out_t out;
    hg_handle_t h;
    hg_return_t ret;

    assert_hg_ok(margo_create(client, addr, id, &h));
    ret = margo_forward(h, &in);
    if (ret == HG_SUCCESS) {
        assert_hg_ok(margo_get_output(h, &out));
        *sum = out.sum;
        assert_hg_ok(margo_free_output(h, &out));
    }
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_addr_free(client, addr));
    return ret;
}

/* ---- mercury.na_max_unexpected_size / na_max_expected_size ---------- */

static void
test_msg_sizes_reach_na(void **state)
{
    margo_instance_id dflt, mid, client;
    na_class_t *na;
    hg_size_t header;
    hg_id_t id;
    int32_t sum = 0;

    (void) state;
    dflt = tk_init("keys-dflt", MARGO_CLIENT_MODE, NULL);
    assert_non_null(dflt);
    na = HG_Class_get_na(margo_get_class(dflt));
    header = NA_Msg_get_max_unexpected_size(na) -
             HG_Class_get_input_eager_size(margo_get_class(dflt));
    assert_int_not_equal(NA_Msg_get_max_unexpected_size(na), 1024);
    margo_finalize(dflt);

    mid = tk_init("keys-size", MARGO_SERVER_MODE,
                  "{\"mercury\": {\"na_max_unexpected_size\": 1024,"
                  " \"na_max_expected_size\": 2048}}");
    assert_non_null(mid);
    na = HG_Class_get_na(margo_get_class(mid));
    assert_int_equal(NA_Msg_get_max_unexpected_size(na), 1024);
    assert_int_equal(NA_Msg_get_max_expected_size(na), 2048);
    assert_int_equal(HG_Class_get_input_eager_size(margo_get_class(mid)),
                     1024 - header);
    assert_int_equal(HG_Class_get_output_eager_size(margo_get_class(mid)),
                     2048 - header);
    tk_expect_config(mid, "\"na_max_unexpected_size\":1024");
    {
        char needle[64];

        snprintf(needle, sizeof(needle), "\"input_eager_size\":%llu",
                 (unsigned long long) (1024 - header));
        tk_expect_config(mid, needle);
    }
    /* RPCs still work at that size. */
    client = tk_init("keys-size-c", MARGO_CLIENT_MODE, NULL);
    assert_non_null(client);
    id = MARGO_REGISTER(mid, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    assert_hg_ok(tk_forward_add(client, mid, id, &sum));
    assert_int_equal(sum, 42);
    margo_finalize(client);
    margo_finalize(mid);
}

/* ---- mercury.checksum_level ----------------------------------------- */

static void
test_checksum_level_reaches_hg(void **state)
{
    static const char *crc = "{\"mercury\": {\"checksum_level\": "
                             "\"rpc_payload\"}}";
    margo_instance_id server, plain, checked;
    hg_id_t id;
    int32_t sum = 0;

    (void) state;
    server = tk_init("keys-crc", MARGO_SERVER_MODE, crc);
    plain = tk_init("keys-crc-plain", MARGO_CLIENT_MODE, NULL);
    checked = tk_init("keys-crc-checked", MARGO_CLIENT_MODE, crc);
    assert_non_null(server);
    assert_non_null(plain);
    assert_non_null(checked);
    tk_expect_config(server, "\"checksum_level\":\"rpc_payload\"");
    id = MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(plain, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    MARGO_REGISTER(checked, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    /* The server's HG refuses a request without the checksums it was
     * configured for; a client configured alike is served. */
    assert_hg_ret(tk_forward_add(plain, server, id, &sum), HG_CHECKSUM_ERROR);
    assert_hg_ok(tk_forward_add(checked, server, id, &sum));
    assert_int_equal(sum, 42);
    margo_finalize(checked);
    margo_finalize(plain);
    margo_finalize(server);
    /* Margo's three values only. */
    assert_null(tk_init("keys-crc-bad", MARGO_CLIENT_MODE,
                        "{\"mercury\": {\"checksum_level\": \"all\"}}"));
}

/* ---- mercury.na_no_block -------------------------------------------- */

/* The ofi plugin opens its completion queue without a wait object under
 * NA_NO_BLOCK, so it has no descriptor to give (the other plugins here
 * keep theirs): run on ofi+tcp over loopback whatever the fabric under
 * test, skipped in a build without it. */
static int
tk_ofi_fd(const char *json, bool *made)
{
    margo_instance_id mid;
    na_class_t *na;
    na_context_t *ctx;
    int fd;

    /* libfabric's tcp provider, not the native plugin every TCP spelling
     * means by default (docs/architecture.md, "Transport names"). */
    const char *was = getenv("QS_OFI_TCP");
    char *saved = was != NULL ? strdup(was) : NULL;

    setenv("QS_OFI_TCP", "libfabric", 1);
    mid = tk_init_at("ofi+tcp://127.0.0.1:0", MARGO_CLIENT_MODE, json);
    if (saved != NULL)
        setenv("QS_OFI_TCP", saved, 1);
    else
        unsetenv("QS_OFI_TCP");
    free(saved);
    *made = mid != MARGO_INSTANCE_NULL;
    if (!*made)
        return -1;
    na = HG_Class_get_na(margo_get_class(mid));
    ctx = NA_Context_create(na);
    assert_non_null(ctx);
    fd = NA_Poll_get_fd(na, ctx);
    assert_int_equal(NA_Context_destroy(na, ctx), NA_SUCCESS);
    if (json != NULL)
        tk_expect_config(mid, "\"na_no_block\":true");
    margo_finalize(mid);
    return fd;
}

static void
test_no_block_reaches_na(void **state)
{
    bool made;
    int fd;

    (void) state;
    fd = tk_ofi_fd(NULL, &made);
    if (!made) {
        print_message("ofi+tcp unavailable: na_no_block not checked\n");
        skip();
    }
    if (fd < 0) {
        print_message("the tcp provider gives no wait fd: na_no_block not "
                      "checked\n");
        skip();
    }
    fd = tk_ofi_fd("{\"mercury\": {\"na_no_block\": true}}", &made);
    assert_true(made);
    assert_int_equal(fd, -1);
}

/* ---- mercury.na_addr_format, auth_key, na_request_mem_device -------- */

static void
test_refused_by_na(void **state)
{
    static const char *refused[] = {
        "{\"mercury\": {\"na_addr_format\": \"ipv6\"}}",
        "{\"mercury\": {\"na_addr_format\": \"native\"}}",
        "{\"mercury\": {\"auth_key\": \"secret\"}}",
        "{\"mercury\": {\"na_request_mem_device\": true}}",
        "{\"mercury\": {\"na_addr_format\": \"ipv5\"}}",
        "{\"mercury\": {\"max_contexts\": 256}}",
    };
    static const char *needle[] = {"addr_format",    "addr_format",
                                   "auth_key",       "request_mem_device",
                                   "na_addr_format", "max_contexts"};
    margo_instance_id mid;

    (void) state;
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        tk_capture();
        mid = tk_init("keys-refused", MARGO_CLIENT_MODE, refused[i]);
        tk_release();
        if (mid != MARGO_INSTANCE_NULL) {
            margo_finalize(mid);
            fail_msg("accepted: %s", refused[i]);
        }
        if (tk_lines_with(needle[i], NULL) == 0) {
            tk_dump();
            fail_msg("refused without naming %s: %s", needle[i], refused[i]);
        }
    }
    mid = tk_init("keys-ipv4", MARGO_CLIENT_MODE,
                  "{\"mercury\": {\"na_addr_format\": \"ipv4\"}}");
    assert_non_null(mid);
    tk_expect_config(mid, "\"na_addr_format\":\"ipv4\"");
    margo_finalize(mid);
}

/* ---- Keys without effect here are warned ---------------------------- */

static void
test_not_honoured_keys_warned(void **state)
{
    static const struct {
        const char *json, *key;
    } cases[] = {
        {"{\"bogus_top\": 1}", "\"bogus_top\""},
        {"{\"mercury\": {\"bogus_hg\": 1}}", "mercury.bogus_hg"},
        {"{\"argobots\": {\"bogus_abt\": 1}}", "argobots.bogus_abt"},
        {"{\"mercury\": {\"max_contexts\": 4}}", "mercury.max_contexts"},
        {"{\"mercury\": {\"input_eager_size\": 5}}",
         "mercury.input_eager_size"},
        {"{\"mercury\": {\"output_eager_size\": 5}}",
         "mercury.output_eager_size"},
        {"{\"mercury\": {\"address\": \"sim://elsewhere\"}}",
         "mercury.address"},
        {"{\"mercury\": {\"version\": \"1.0.0\"}}", "mercury.version"},
        {"{\"progress_spindown_msec\": 5}", "\"progress_spindown_msec\""},
        {"{\"monitoring\": {}}", "\"monitoring\""},
        {"{\"enable_diagnostics\": true}", "\"enable_diagnostics\""},
        {"{\"handle_cache_size\": 64}", "\"handle_cache_size\""},
        {"{\"argobots\": {\"abt_mem_max_num_stacks\": 4}}",
         "argobots.abt_mem_max_num_stacks"},
        {"{\"plumber\": {\"nic_policy\": \"random\"}}", "\"plumber\""},
        {"{\"argobots\": {\"pools\": [{\"name\": \"p\", \"kind\": "
         "\"prio_wait\"}]}}",
         "prio_wait"},
    };

    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        margo_instance_id mid;

        tk_capture();
        mid = tk_init("keys-warn", MARGO_CLIENT_MODE, cases[i].json);
        tk_release();
        assert_non_null(mid);
        if (tk_lines_with("warning", cases[i].key) != 1) {
            tk_dump();
            fail_msg("want one warning naming %s for %s", cases[i].key,
                     cases[i].json);
        }
        margo_finalize(mid);
    }
    /* Also on the simulator: the sim plugin ignores ip_subnet (ofi
     * refuses it, so the instance is not made there). */
    if (tm_is_sim()) {
        margo_instance_id mid;

        tk_capture();
        mid = tk_init("keys-subnet", MARGO_CLIENT_MODE,
                      "{\"mercury\": {\"ip_subnet\": \"10.0.0.0/8\"}}");
        tk_release();
        assert_non_null(mid);
        assert_int_equal(tk_lines_with("warning", "mercury.ip_subnet"), 1);
        margo_finalize(mid);
    }
}

/* An instance's own configuration, given back, is honoured without a
 * word (the address is the argument's, so this is on the simulator). */
static void
test_own_config_round_trips_silently(void **state)
{
    static const char *json =
        "{\"use_progress_thread\": true, \"rpc_thread_count\": 1,"
        " \"mercury\": {\"na_max_unexpected_size\": 4096,"
        "               \"checksum_level\": \"rpc_headers\"}}";
    margo_instance_id first, again;
    char addr[64];
    char *cfg;

    (void) state;
    if (!tm_is_sim())
        skip();
    tm_addr_for(addr, sizeof(addr), "keys-round");
    tk_capture();
    first = tk_init_at(addr, MARGO_SERVER_MODE, json);
    assert_non_null(first);
    /* By name and without what Argobots already ran ("__primary__" is
     * then the program's, kind "external", which a configuration may not
     * ask for): the form that can be given back in any process. */
    cfg = margo_get_config_opt(first, MARGO_CONFIG_USE_NAMES |
                                          MARGO_CONFIG_HIDE_EXTERNAL);
    assert_non_null(cfg);
    margo_finalize(first);
    again = tk_init_at(addr, MARGO_SERVER_MODE, cfg);
    tk_release();
    assert_non_null(again);
    if (tk_lines_with("margo config", NULL) != 0) {
        tk_dump();
        fail_msg("warnings for the instance's own configuration: %s", cfg);
    }
    free(cfg);
    tk_expect_config(again, "\"checksum_level\":\"rpc_headers\"");
    tk_expect_config(again, "\"na_max_unexpected_size\":4096");
    margo_finalize(again);
}

/* ---- mercury.log_level / log_subsys --------------------------------- */

static void
test_log_level_reaches_hg(void **state)
{
    static const char *crc = "{\"mercury\": {\"checksum_level\": "
                             "\"rpc_headers\", \"log_level\": \"debug\","
                             " \"log_subsys\": \"hg\"}}";
    margo_instance_id server, client;
    hg_id_t id;
    int32_t sum;

    (void) state;
    server = tk_init("keys-log", MARGO_SERVER_MODE, crc);
    client = tk_init("keys-log-c", MARGO_CLIENT_MODE, NULL);
    assert_non_null(server);
    assert_non_null(client);
    tk_expect_config(server, "\"log_level\":\"debug\"");
    id = MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    /* HG says at debug level why it refused the request. */
    tk_capture();
    assert_hg_ret(tk_forward_add(client, server, id, &sum), HG_CHECKSUM_ERROR);
    tk_release();
    HG_Set_log_level("error");
    HG_Set_log_subsys("hg_all");
    if (tk_lines_with("hg: debug", "checksums") == 0) {
        tk_dump();
        fail_msg("no debug line from HG");
    }
    margo_finalize(server);
    margo_finalize(client);
}

/* ---- argobots.xstreams[].cpubind / affinity ------------------------- */

/* The CPU set of the thread that runs a ULT on `pool`. */
struct tk_where {
    cpu_set_t set;
    atomic_int done;
};

static void
tk_where_ult(void *arg)
{
    struct tk_where *w = arg;

    CPU_ZERO(&w->set);
    sched_getaffinity(0, sizeof(w->set), &w->set);
    atomic_store(&w->done, 1);
}

static void
tk_ult_cpus(margo_instance_id mid, const char *pool_name, cpu_set_t *set)
{
    struct margo_pool_info pool;
    struct tk_where w;
    ABT_thread t;

    atomic_init(&w.done, 0);
    assert_hg_ok(margo_find_pool_by_name(mid, pool_name, &pool));
    assert_int_equal(ABT_thread_create(pool.pool, tk_where_ult, &w,
                                       ABT_THREAD_ATTR_NULL, &t),
                     ABT_SUCCESS);
    tm_wait_flag(&w.done);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    *set = w.set;
}

static void
test_cpubind_and_affinity_bind_threads(void **state)
{
    static const char *json =
        "{\"argobots\": {"
        "  \"pools\": [{\"name\": \"p1\"}, {\"name\": \"p0\"}],"
        "  \"xstreams\": ["
        "    {\"name\": \"x1\", \"cpubind\": 1,"
        "     \"scheduler\": {\"pools\": [\"p1\"]}},"
        "    {\"name\": \"x0\", \"affinity\": [0],"
        "     \"scheduler\": {\"pools\": [\"p0\"]}}]}}";
    int cpus[CPU_SETSIZE], ncpus = 0, id = -1, got[4], n = 0;
    struct margo_xstream_info x;
    margo_instance_id mid;
    cpu_set_t start, set;

    (void) state;
    /* As in Argobots, CPU ids index the CPUs the process started with. */
    CPU_ZERO(&start);
    assert_int_equal(sched_getaffinity(0, sizeof(start), &start), 0);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &start))
            cpus[ncpus++] = c;
    if (ncpus < 2) {
        print_message("one CPU: binding not checked\n");
        skip();
    }
    mid = tk_init("keys-bind", MARGO_CLIENT_MODE, json);
    assert_non_null(mid);
    assert_hg_ok(margo_find_xstream_by_name(mid, "x1", &x));
    assert_int_equal(ABT_xstream_get_cpubind(x.xstream, &id), ABT_SUCCESS);
    assert_int_equal(id, 1);
    assert_hg_ok(margo_find_xstream_by_name(mid, "x0", &x));
    assert_int_equal(ABT_xstream_get_affinity(x.xstream, 4, got, &n),
                     ABT_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(got[0], 0);
    /* The threads themselves run there. */
    tk_ult_cpus(mid, "p1", &set);
    assert_int_equal(CPU_COUNT(&set), 1);
    assert_true(CPU_ISSET(cpus[1], &set));
    tk_ult_cpus(mid, "p0", &set);
    assert_int_equal(CPU_COUNT(&set), 1);
    assert_true(CPU_ISSET(cpus[0], &set));
    /* Applied, not written back: Margo writes them only over an Argobots
     * built with affinity support, which its reference outputs are not. */
    tk_expect_config(mid, "\"name\":\"x1\"}");
    tk_expect_config(mid, "\"name\":\"x0\"}");
    margo_finalize(mid);
    /* "__primary__" is the running program's once Argobots is up (it is
     * here, ABT_init() counts): defining it is refused, as in Margo. */
    assert_int_equal(ABT_init(0, NULL), ABT_SUCCESS);
    assert_null(
        tk_init("keys-bind-primary", MARGO_CLIENT_MODE,
                "{\"argobots\": {\"pools\": [{\"name\": \"__primary__\"}],"
                " \"xstreams\": [{\"name\": \"__primary__\", \"cpubind\": 1,"
                " \"scheduler\": {\"pools\": [0]}}]}}"));
    assert_int_equal(ABT_finalize(), ABT_SUCCESS);
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    assert_true(CPU_EQUAL(&set, &start));
    /* Not CPU ids: refused. */
    assert_null(tk_init("keys-bind-bad", MARGO_CLIENT_MODE,
                        "{\"argobots\": {\"xstreams\": [{\"name\": \"x\","
                        " \"affinity\": [\"one\"],"
                        " \"scheduler\": {\"pools\": [0]}}]}}"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_sizes_reach_na),
        cmocka_unit_test(test_checksum_level_reaches_hg),
        cmocka_unit_test(test_no_block_reaches_na),
        cmocka_unit_test(test_refused_by_na),
        cmocka_unit_test(test_not_honoured_keys_warned),
        cmocka_unit_test(test_own_config_round_trips_silently),
        cmocka_unit_test(test_log_level_reaches_hg),
        cmocka_unit_test(test_cpubind_and_affinity_bind_threads),
    };

    return tm_main("margo_json_keys", tests, sizeof(tests) / sizeof(tests[0]));
}
