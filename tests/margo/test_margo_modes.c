/*
 * Every combination of progress thread (0, 1) and rpc_thread_count (-1, 0,
 * 2) on a server instance and a client instance living in one process and
 * one calling thread: 36 set-ups, each serving plain RPCs and an RPC whose
 * handler makes a blocking bulk pull. Real Margo serves all of them (its
 * primary execution stream runs every instance's work that has no thread
 * of its own); so must this one.
 */
#include "tm.h"

#include <stdio.h>

static void
tm_run_mode(int sp, int sr, int cp, int cr)
{
    char saddr[64], caddr[64];
    margo_instance_id server, client;
    hg_id_t add_id, sum_id;
    hg_addr_t addr;

    tm_addr_for(saddr, sizeof(saddr), "modes-server");
    tm_addr_for(caddr, sizeof(caddr), "modes-client");
    server = margo_init(saddr, MARGO_SERVER_MODE, sp, sr);
    assert_non_null(server);
    client = margo_init(caddr, MARGO_CLIENT_MODE, cp, cr);
    assert_non_null(client);
    add_id =
        MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    sum_id =
        MARGO_REGISTER(server, "tm_sum", tm_sum_in_t, tm_sum_out_t, tm_sum);
    assert_int_equal(
        MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL),
        add_id);
    assert_int_equal(
        MARGO_REGISTER(client, "tm_sum", tm_sum_in_t, tm_sum_out_t, NULL),
        sum_id);
    addr = tm_lookup_self(client, server);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tm_call_add(client, addr, add_id, i, 10), i + 10);
    assert_int_equal(tm_call_sum(client, addr, sum_id), TM_SUM);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

static void
test_every_mode(void **state)
{
    static const int counts[] = {-1, 0, 2};

    (void) state;
    for (int sp = 0; sp < 2; sp++)
        for (int si = 0; si < 3; si++)
            for (int cp = 0; cp < 2; cp++)
                for (int ci = 0; ci < 3; ci++) {
                    fprintf(stderr,
                            "server (progress thread %d, rpc_thread_count %d),"
                            " client (%d, %d)\n",
                            sp, counts[si], cp, counts[ci]);
                    tm_run_mode(sp, counts[si], cp, counts[ci]);
                }
}

/* The set-up of the report: server margo_init(addr, MARGO_SERVER_MODE, 1,
 * 0), client with neither, many RPCs. */
static void
test_server_progress_thread_client_none(void **state)
{
    char saddr[64], caddr[64];
    margo_instance_id server, client;
    hg_id_t add_id;
    hg_addr_t addr;

    (void) state;
    tm_addr_for(saddr, sizeof(saddr), "pt-server");
    tm_addr_for(caddr, sizeof(caddr), "pt-client");
    server = margo_init(saddr, MARGO_SERVER_MODE, 1, 0);
    client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(server);
    assert_non_null(client);
    add_id =
        MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    for (int i = 0; i < 200; i++)
        assert_int_equal(tm_call_add(client, addr, add_id, i, 1), i + 1);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_progress_thread_client_none),
        cmocka_unit_test(test_every_mode),
    };

    return tm_main("margo_modes", tests, sizeof(tests) / sizeof(tests[0]));
}
