/*
 * Pools and execution streams added and removed at run time
 * (margo_add_pool_from_json, margo_add_xstream_from_json, the external
 * forms, margo_remove_*, the reference counts, margo_transfer_pool_content):
 * what is added shows in margo_get_config() and runs work; what is in use
 * cannot be removed, and a refused removal changes nothing.
 */
#include "tm.h"

#include <margo-config.h>

#include <stdlib.h>
#include <string.h>

static margo_instance_id
te_server(const char *role)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), role);
    mid = margo_init(addr, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(mid);
    return mid;
}

static bool
te_config_has(margo_instance_id mid, int options, const char *text)
{
    char *json = margo_get_config_opt(mid, options);
    bool found;

    assert_non_null(json);
    found = strstr(json, text) != NULL;
    free(json);
    return found;
}

/* A ULT that records where it ran. */
struct te_ult {
    atomic_int done;
    ABT_xstream xstream;
};

static void
te_ult_main(void *arg)
{
    struct te_ult *u = arg;

    ABT_xstream_self(&u->xstream);
    atomic_store(&u->done, 1);
}

static void
test_add_pool_and_xstream_from_json(void **state)
{
    margo_instance_id mid = te_server("elastic-add");
    struct margo_pool_info pi, gen;
    struct margo_xstream_info xi;
    size_t npools = margo_get_num_pools(mid);
    size_t nxs = margo_get_num_xstreams(mid);
    struct te_ult u = {0, ABT_XSTREAM_NULL};
    ABT_thread t;

    (void) state;
    assert_hg_ok(margo_add_pool_from_json(
        mid,
        "{\"name\":\"my_pool\",\"kind\":\"fifo_wait\",\"access\":\"mpmc\"}",
        &pi));
    assert_string_equal(pi.name, "my_pool");
    assert_int_equal(pi.index, npools);
    assert_non_null(pi.pool);
    assert_int_equal(margo_get_num_pools(mid), npools + 1);
    assert_true(te_config_has(mid, MARGO_CONFIG_USE_NAMES, "\"my_pool\""));
    /* A name is made up when none is given. */
    assert_hg_ok(margo_add_pool_from_json(mid, "{}", &gen));
    assert_true(strncmp(gen.name, "__pool_", 7) == 0);
    assert_hg_ok(margo_remove_pool_by_name(mid, gen.name));

    /* Refused, and nothing added: bad JSON, a taken name, an unknown kind,
     * an external kind. */
    assert_hg_ret(margo_add_pool_from_json(mid, "{\"name\":", NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_add_pool_from_json(mid, "{\"name\":\"my_pool\"}", NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_add_pool_from_json(
                      mid, "{\"name\":\"p2\",\"kind\":\"nope\"}", NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_add_pool_from_json(
                      mid, "{\"name\":\"p3\",\"kind\":\"external\"}", NULL),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_add_pool_from_json(MARGO_INSTANCE_NULL, "{}", NULL),
                  HG_INVALID_ARG);
    assert_int_equal(margo_get_num_pools(mid), npools + 1);

    /* An xstream over it runs the work pushed there. */
    assert_hg_ret(margo_add_xstream_from_json(
                      mid,
                      "{\"name\":\"my_es\",\"scheduler\":{\"type\":"
                      "\"basic_wait\",\"pools\":[\"nope\"]}}",
                      NULL),
                  HG_INVALID_ARG);
    assert_int_equal(margo_get_num_xstreams(mid), nxs);
    assert_hg_ok(margo_add_xstream_from_json(
        mid,
        "{\"name\":\"my_es\",\"scheduler\":{\"type\":\"basic_wait\","
        "\"pools\":[\"my_pool\"]}}",
        &xi));
    assert_string_equal(xi.name, "my_es");
    assert_int_equal(xi.index, nxs);
    assert_int_equal(margo_get_num_xstreams(mid), nxs + 1);
    assert_true(te_config_has(mid, MARGO_CONFIG_USE_NAMES, "\"my_es\""));
    assert_int_equal(
        ABT_thread_create(pi.pool, te_ult_main, &u, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    tm_wait_flag(&u.done);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_ptr_equal(u.xstream, xi.xstream);

    /* The pool is in my_es's scheduler: removal refused, nothing changed. */
    assert_hg_ret(margo_remove_pool_by_handle(mid, pi.pool), HG_PERMISSION);
    assert_hg_ok(margo_find_pool_by_name(mid, "my_pool", NULL));
    assert_hg_ok(margo_remove_xstream_by_name(mid, "my_es"));
    assert_int_equal(margo_get_num_xstreams(mid), nxs);
    assert_false(te_config_has(mid, MARGO_CONFIG_USE_NAMES, "\"my_es\""));
    assert_hg_ok(margo_remove_pool_by_handle(mid, pi.pool));
    assert_int_equal(margo_get_num_pools(mid), npools);
    assert_false(te_config_has(mid, MARGO_CONFIG_USE_NAMES, "\"my_pool\""));
    assert_hg_ret(margo_find_pool_by_name(mid, "my_pool", NULL), HG_NOENTRY);
    assert_hg_ret(margo_remove_pool_by_name(mid, "my_pool"), HG_INVALID_ARG);
    margo_finalize(mid);
}

static void
test_rpc_on_added_pool(void **state)
{
    margo_instance_id server = te_server("elastic-rpc-s");
    margo_instance_id client;
    struct margo_pool_info pi;
    struct margo_xstream_info xi;
    char caddr[64];
    tm_where_out_t out;
    hg_handle_t h;
    hg_addr_t addr;
    hg_id_t sid, cid;
    unsigned refs = 99;

    (void) state;
    tm_addr_for(caddr, sizeof(caddr), "elastic-rpc-c");
    client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(client);
    assert_hg_ok(margo_add_pool_from_json(server, "{\"name\":\"rpc_p\"}", &pi));
    assert_hg_ok(margo_add_xstream_from_json(
        server, "{\"name\":\"rpc_es\",\"scheduler\":{\"pools\":[\"rpc_p\"]}}",
        &xi));
    sid = MARGO_REGISTER_PROVIDER(server, "te_where", void, tm_where_out_t,
                                  tm_where, 3, pi.pool);
    assert_true(sid != 0);
    /* The RPC holds a reference on its pool. */
    assert_hg_ok(margo_pool_ref_count_by_name(server, "rpc_p", &refs));
    assert_int_equal(refs, 1);
    cid = MARGO_REGISTER(client, "te_where", void, tm_where_out_t, NULL);
    addr = tm_lookup_self(client, server);
    assert_hg_ok(margo_create(client, addr, cid, &h));
    assert_hg_ok(margo_provider_forward(3, h, NULL));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.pool_index, (int32_t) pi.index);
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));

    /* Still used by the RPC once its xstream is gone. */
    assert_hg_ok(margo_remove_xstream_by_handle(server, xi.xstream));
    assert_hg_ret(margo_remove_pool_by_name(server, "rpc_p"), HG_PERMISSION);
    assert_hg_ok(margo_find_pool_by_name(server, "rpc_p", NULL));
    assert_hg_ok(margo_deregister(server, sid));
    assert_hg_ok(margo_pool_ref_count_by_handle(server, pi.pool, &refs));
    assert_int_equal(refs, 0);
    assert_hg_ok(margo_remove_pool_by_name(server, "rpc_p"));
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

static void
test_reference_counts_and_refusals(void **state)
{
    margo_instance_id mid = te_server("elastic-refs");
    struct margo_pool_info pi;
    struct margo_xstream_info xi;
    ABT_pool progress, handler;
    unsigned refs = 99;

    (void) state;
    assert_hg_ok(margo_add_pool_from_json(mid, "{\"name\":\"rp\"}", &pi));
    assert_hg_ok(margo_add_xstream_from_json(
        mid, "{\"name\":\"rx\",\"scheduler\":{\"pools\":[\"rp\"]}}", &xi));
    assert_hg_ok(margo_remove_xstream_by_index(mid, xi.index));
    assert_hg_ok(margo_add_xstream_from_json(
        mid, "{\"name\":\"rx\",\"scheduler\":{\"pools\":[\"rp\"]}}", &xi));

    /* Pool references, by each key and through the _Generic forms. */
    assert_hg_ok(margo_pool_ref_incr_by_handle(mid, pi.pool));
    assert_hg_ok(margo_pool_ref_incr_by_index(mid, pi.index));
    assert_hg_ok(margo_pool_ref_incr(mid, "rp"));
    assert_hg_ok(margo_pool_ref_count(mid, pi.pool, &refs));
    assert_int_equal(refs, 3);
    assert_hg_ok(margo_pool_release_by_name(mid, "rp"));
    assert_hg_ok(margo_pool_release(mid, pi.pool));
    assert_hg_ok(margo_pool_ref_count_by_index(mid, pi.index, &refs));
    assert_int_equal(refs, 1);
    assert_hg_ok(margo_remove_xstream(mid, "rx"));
    assert_hg_ret(margo_remove_pool(mid, pi.pool), HG_PERMISSION);
    assert_hg_ok(margo_pool_release_by_index(mid, pi.index));
    assert_hg_ret(margo_pool_release_by_handle(mid, pi.pool), HG_PERMISSION);
    assert_hg_ret(margo_pool_ref_incr_by_name(mid, "nope"), HG_NOENTRY);
    assert_hg_ret(margo_pool_ref_count_by_index(mid, 999, &refs),
                  HG_INVALID_ARG);
    assert_hg_ret(margo_pool_ref_incr_by_handle(mid, ABT_POOL_NULL),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_remove_pool(mid, "rp"));

    /* Xstream references. */
    assert_hg_ok(margo_add_xstream_from_json(
        mid, "{\"name\":\"rx2\",\"scheduler\":{\"pools\":[0]}}", &xi));
    assert_hg_ok(margo_xstream_ref_incr_by_name(mid, "rx2"));
    assert_hg_ok(margo_xstream_ref_incr(mid, xi.xstream));
    assert_hg_ok(margo_xstream_ref_count_by_handle(mid, xi.xstream, &refs));
    assert_int_equal(refs, 2);
    assert_hg_ret(margo_remove_xstream_by_name(mid, "rx2"), HG_PERMISSION);
    assert_hg_ok(margo_find_xstream_by_name(mid, "rx2", NULL));
    assert_hg_ok(margo_xstream_release_by_index(mid, xi.index));
    assert_hg_ok(margo_xstream_release(mid, "rx2"));
    assert_hg_ret(margo_xstream_release_by_handle(mid, xi.xstream),
                  HG_PERMISSION);
    assert_hg_ok(margo_xstream_ref_count(mid, (uint32_t) xi.index, &refs));
    assert_int_equal(refs, 0);
    assert_hg_ret(margo_xstream_ref_count_by_name(mid, "nope", &refs),
                  HG_NOENTRY);
    assert_hg_ret(margo_xstream_ref_incr_by_index(mid, 999), HG_INVALID_ARG);
    assert_hg_ok(margo_remove_xstream_by_name(mid, "rx2"));

    /* The progress and handler pools, and __primary__, stay. */
    assert_int_equal(margo_get_progress_pool(mid, &progress), 0);
    assert_int_equal(margo_get_handler_pool(mid, &handler), 0);
    assert_hg_ret(margo_remove_pool_by_handle(mid, progress), HG_OTHER_ERROR);
    assert_hg_ret(margo_remove_pool_by_handle(mid, handler), HG_OTHER_ERROR);
    assert_hg_ret(margo_remove_xstream_by_index(mid, 0), HG_PERMISSION);
    assert_hg_ret(margo_remove_xstream_by_index(mid, 999), HG_OTHER_ERROR);
    assert_hg_ret(margo_remove_xstream_by_name(mid, "nope"), HG_INVALID_ARG);
    assert_hg_ret(margo_remove_pool_by_index(mid, 999), HG_INVALID_ARG);
    margo_finalize(mid);
}

static void
test_waiting_work_blocks_removal_until_transferred(void **state)
{
    margo_instance_id mid = te_server("elastic-transfer");
    struct margo_pool_info idle, served;
    struct te_ult u = {0, ABT_XSTREAM_NULL};
    struct margo_xstream_info xi;
    size_t size = 0;
    ABT_thread t;

    (void) state;
    assert_hg_ok(margo_add_pool_from_json(mid, "{\"name\":\"idle\"}", &idle));
    assert_hg_ok(
        margo_add_pool_from_json(mid, "{\"name\":\"served\"}", &served));
    assert_hg_ok(margo_add_xstream_from_json(
        mid, "{\"name\":\"sx\",\"scheduler\":{\"pools\":[\"served\"]}}", &xi));
    /* No xstream serves "idle": the ULT waits there. */
    assert_int_equal(
        ABT_thread_create(idle.pool, te_ult_main, &u, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    assert_int_equal(ABT_pool_get_total_size(idle.pool, &size), ABT_SUCCESS);
    assert_int_equal(size, 1);
    assert_hg_ret(margo_remove_pool_by_name(mid, "idle"), HG_PERMISSION);
    assert_hg_ok(margo_find_pool_by_handle(mid, idle.pool, NULL));
    assert_int_equal(atomic_load(&u.done), 0);

    assert_hg_ok(margo_transfer_pool_content(idle.pool, served.pool));
    tm_wait_flag(&u.done);
    assert_ptr_equal(u.xstream, xi.xstream);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_hg_ret(margo_transfer_pool_content(ABT_POOL_NULL, served.pool),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_remove_pool_by_name(mid, "idle"));
    margo_finalize(mid);
}

static void
test_external_pool_and_xstream(void **state)
{
    margo_instance_id mid = te_server("elastic-ext");
    struct margo_pool_info pi;
    struct margo_xstream_info xi;
    struct te_ult u = {0, ABT_XSTREAM_NULL};
    size_t npools = margo_get_num_pools(mid);
    ABT_pool mine, xpool;
    ABT_xstream xs;
    ABT_thread t;

    (void) state;
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
                                           ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                                           &mine),
                     ABT_SUCCESS);
    assert_hg_ok(margo_add_pool_external(mid, "mine", mine, ABT_FALSE, &pi));
    assert_ptr_equal(pi.pool, mine);
    assert_hg_ret(margo_add_pool_external(mid, "again", mine, ABT_FALSE, NULL),
                  HG_INVALID_ARG);
    assert_true(te_config_has(mid, 0, "\"external\""));
    assert_false(te_config_has(mid, MARGO_CONFIG_HIDE_EXTERNAL, "\"mine\""));
    assert_true(te_config_has(mid, MARGO_CONFIG_USE_NAMES, "\"mine\""));

    /* An xstream of the program's over a pool of its own: refused until
     * the pool is registered, and nothing is added meanwhile. */
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
                                           ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                                           &xpool),
                     ABT_SUCCESS);
    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, 1, &xpool,
                                              ABT_SCHED_CONFIG_NULL, &xs),
                     ABT_SUCCESS);
    assert_hg_ret(margo_add_xstream_external(mid, "x", xs, ABT_FALSE, NULL),
                  HG_INVALID_ARG);
    assert_int_equal(margo_get_num_pools(mid), npools + 1);
    assert_hg_ok(margo_add_pool_external(mid, NULL, xpool, ABT_FALSE, NULL));
    assert_hg_ok(margo_add_xstream_external(mid, NULL, xs, ABT_FALSE, &xi));
    assert_true(strncmp(xi.name, "__xstream_", 10) == 0);
    assert_int_equal(margo_get_num_pools(mid), npools + 2);
    assert_hg_ok(margo_find_pool_by_handle(mid, xpool, NULL));
    assert_hg_ret(margo_add_xstream_external(mid, "x", xs, ABT_FALSE, NULL),
                  HG_INVALID_ARG);

    /* Removing what the program owns only forgets it. */
    assert_hg_ok(margo_remove_xstream_by_handle(mid, xs));
    assert_hg_ok(margo_remove_pool_by_handle(mid, xpool));
    assert_hg_ok(margo_remove_pool_by_name(mid, "mine"));
    assert_int_equal(margo_get_num_pools(mid), npools);
    assert_int_equal(
        ABT_thread_create(xpool, te_ult_main, &u, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    tm_wait_flag(&u.done);
    assert_ptr_equal(u.xstream, xs);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    /* Still the program's (before margo_finalize, which ends Argobots
     * when margo_init started it). */
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&xpool), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&mine), ABT_SUCCESS);
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_pool_and_xstream_from_json),
        cmocka_unit_test(test_rpc_on_added_pool),
        cmocka_unit_test(test_reference_counts_and_refusals),
        cmocka_unit_test(test_waiting_work_blocks_removal_until_transferred),
        cmocka_unit_test(test_external_pool_and_xstream),
    };
    return tm_main("test_margo_elastic", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
