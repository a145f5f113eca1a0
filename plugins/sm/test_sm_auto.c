/*
 * Tests of auto_sm at the NA level: a server class made by
 * na_auto_sm_initialize() (the plugin table's way to the sm plugin's
 * auto class) over ofi+tcp, a client with auto_sm (same node:
 * its traffic must go over shared memory) and a plain ofi+tcp client (over
 * the network), side by side in this process. Checks the routes taken
 * (through the composite's internal structures), messages both ways, RMA
 * from both clients on one serialized handle, and hostile serialized
 * bytes. Waits are NA_Poll_wait with a bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"
#include "na/na_auto_sm.h"
#include "na_sm_auto_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define TEST_TIMEOUT_NS (20ull * 1000000000ull)
#define TCP "ofi+tcp://127.0.0.1:0"

struct fixture {
    struct na_peer srv, autoc, plain;
    char srv_name[512];
    na_addr_t at_auto, at_plain; /* the server, as each client sees it */
};

static bool
progress_until(struct fixture *fx, const int *calls, int want)
{
    const struct na_peer peers[] = {fx->srv, fx->autoc, fx->plain};

    return na_peers_progress(peers, 3, calls, want, 1, TEST_TIMEOUT_NS);
}

static int
setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    size_t n = sizeof(fx->srv_name);
    char net[512];
    na_addr_t self;

    /* This test is built only with the ofi plugin: a server that does not
     * start is the code under test failing, not a missing capability. */
    fx->srv.cls = na_auto_sm_initialize(TCP, NULL, true, NULL);
    if (fx->srv.cls == NULL) {
        free(fx);
        fail_msg("na_auto_sm_initialize(\"%s\") failed (see the message "
                 "above)",
                 TCP);
    }
    fx->autoc.cls = na_auto_sm_initialize(TCP, "na+sm", false, NULL);
    fx->plain.cls = NA_Initialize(TCP, false);
    assert_non_null(fx->autoc.cls);
    assert_non_null(fx->plain.cls);
    fx->srv.ctx = NA_Context_create(fx->srv.cls);
    fx->autoc.ctx = NA_Context_create(fx->autoc.cls);
    fx->plain.ctx = NA_Context_create(fx->plain.cls);
    assert_int_equal(NA_Addr_self(fx->srv.cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(fx->srv.cls, fx->srv_name, &n, self),
                     NA_SUCCESS);
    NA_Addr_free(fx->srv.cls, self);
    assert_non_null(strstr(fx->srv_name, "#na+sm://"));
    assert_int_equal(NA_Addr_lookup(fx->autoc.cls, fx->srv_name, &fx->at_auto),
                     NA_SUCCESS);
    /* A plain class takes the network part (HG_Addr_lookup cuts it). */
    snprintf(net, sizeof(net), "%.*s",
             (int) (strchr(fx->srv_name, '#') - fx->srv_name), fx->srv_name);
    assert_int_equal(NA_Addr_lookup(fx->plain.cls, net, &fx->at_plain),
                     NA_SUCCESS);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;
    struct na_peer *p[3] = {&fx->srv, &fx->autoc, &fx->plain};

    NA_Addr_free(fx->autoc.cls, fx->at_auto);
    NA_Addr_free(fx->plain.cls, fx->at_plain);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(NA_Context_destroy(p[i]->cls, p[i]->ctx), NA_SUCCESS);
        assert_int_equal(NA_Finalize(p[i]->cls), NA_SUCCESS);
    }
    free(fx);
    return 0;
}

/* One request from `c` to the server and its reply; returns the source
 * address the server saw (freed here) through *side. */
static void
round_trip(struct fixture *fx, struct na_peer *c, na_addr_t to, int *side)
{
    na_op_id_t *cs = NA_Op_create(c->cls, 0), *cr = NA_Op_create(c->cls, 0);
    na_op_id_t *ss = NA_Op_create(fx->srv.cls, 0);
    na_op_id_t *sr = NA_Op_create(fx->srv.cls, 0);
    struct na_result a = {0}, b = {0}, d = {0}, e = {0};
    char in[64] = {0}, back[64] = {0};

    assert_int_equal(NA_Msg_recv_unexpected(fx->srv.cls, fx->srv.ctx,
                                            na_record_cb, &a, in, sizeof(in),
                                            NULL, sr),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(c->cls, c->ctx, na_record_cb, &b,
                                          back, sizeof(back), NULL, to, 0, 5,
                                          cr),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c->cls, c->ctx, na_record_cb, &d,
                                            "ping", 5, NULL, to, 0, 4, cs),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &a.calls, 1));
    assert_int_equal(a.ret, NA_SUCCESS);
    assert_string_equal(in, "ping");
    *side = a.source->part[NA_AUTO_SM] != NULL ? NA_AUTO_SM : NA_AUTO_NET;
    assert_int_equal(NA_Msg_send_expected(fx->srv.cls, fx->srv.ctx,
                                          na_record_cb, &e, "pong", 5, NULL,
                                          a.source, 0, 5, ss),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &b.calls, 1));
    assert_int_equal(b.ret, NA_SUCCESS);
    assert_string_equal(back, "pong");
    assert_true(progress_until(fx, &d.calls, 1));
    assert_true(progress_until(fx, &e.calls, 1));
    NA_Addr_free(fx->srv.cls, a.source);
    NA_Op_destroy(c->cls, cs);
    NA_Op_destroy(c->cls, cr);
    NA_Op_destroy(fx->srv.cls, ss);
    NA_Op_destroy(fx->srv.cls, sr);
}

static void
test_routes(void **state)
{
    struct fixture *fx = *state;
    int side = -1;

    /* Same node, both with auto_sm: shared memory. */
    assert_non_null(fx->at_auto->part[NA_AUTO_SM]);
    round_trip(fx, &fx->autoc, fx->at_auto, &side);
    assert_int_equal(side, NA_AUTO_SM);
    /* A client without auto_sm: the network. */
    round_trip(fx, &fx->plain, fx->at_plain, &side);
    assert_int_equal(side, NA_AUTO_NET);
}

static na_return_t
get_once(struct na_peer *c, na_addr_t from, const uint8_t *bytes, size_t n,
         char *local, size_t len, struct fixture *fx)
{
    na_mem_handle_t lh, rh;
    na_op_id_t *op = NA_Op_create(c->cls, 0);
    struct na_result r = {0};
    na_return_t ret;

    assert_int_equal(
        NA_Mem_handle_create(c->cls, local, len, NA_MEM_READWRITE, &lh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c->cls, lh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    ret = NA_Mem_handle_deserialize(c->cls, &rh, bytes, n);
    if (ret == NA_SUCCESS) {
        ret = NA_Get(c->cls, c->ctx, na_record_cb, &r, lh, 0, rh, 0, len, from,
                     0, op);
        if (ret == NA_SUCCESS) {
            assert_true(progress_until(fx, &r.calls, 1));
            ret = r.ret;
        }
        NA_Mem_handle_free(c->cls, rh);
    }
    NA_Mem_deregister(c->cls, lh);
    NA_Mem_handle_free(c->cls, lh);
    NA_Op_destroy(c->cls, op);
    return ret;
}

static void
test_rma(void **state)
{
    struct fixture *fx = *state;
    char region[4096], local[4096];
    uint8_t bytes[512];
    na_mem_handle_t h;
    size_t n;

    for (size_t i = 0; i < sizeof(region); i++)
        region[i] = (char) (i * 7);
    assert_int_equal(NA_Mem_handle_create(fx->srv.cls, region, sizeof(region),
                                          NA_MEM_READ_ONLY, &h),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(fx->srv.cls, h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    n = NA_Mem_handle_get_serialize_size(fx->srv.cls, h);
    assert_true(n <= sizeof(bytes));
    assert_int_equal(NA_Mem_handle_serialize(fx->srv.cls, bytes, n, h),
                     NA_SUCCESS);
    memset(local, 0, sizeof(local));
    assert_int_equal(
        get_once(&fx->autoc, fx->at_auto, bytes, n, local, sizeof(local), fx),
        NA_SUCCESS);
    assert_memory_equal(local, region, sizeof(region));
    /* The same bytes, read by a class without auto_sm. */
    memset(local, 0, sizeof(local));
    assert_int_equal(
        get_once(&fx->plain, fx->at_plain, bytes, n, local, sizeof(local), fx),
        NA_SUCCESS);
    assert_memory_equal(local, region, sizeof(region));
    NA_Mem_deregister(fx->srv.cls, h);
    NA_Mem_handle_free(fx->srv.cls, h);
}

static void
test_junk(void **state)
{
    struct fixture *fx = *state;
    uint8_t bytes[512], bad[512];
    na_addr_t a;
    size_t n;

    assert_int_equal(NA_Addr_self(fx->srv.cls, &a), NA_SUCCESS);
    n = NA_Addr_get_serialize_size(fx->srv.cls, a);
    assert_int_equal(NA_Addr_serialize(fx->srv.cls, bytes, n, a), NA_SUCCESS);
    NA_Addr_free(fx->srv.cls, a);
    /* Round trip keeps both parts. */
    assert_int_equal(NA_Addr_deserialize(fx->autoc.cls, &a, bytes, n),
                     NA_SUCCESS);
    assert_non_null(a->part[NA_AUTO_SM]);
    assert_non_null(a->part[NA_AUTO_NET]);
    NA_Addr_free(fx->autoc.cls, a);
    /* Lengths that do not add up. */
    memcpy(bad, bytes, n);
    bad[n - 9] ^= 0x40;
    assert_int_not_equal(NA_Addr_deserialize(fx->autoc.cls, &a, bad, n),
                         NA_SUCCESS);
    /* Another node: the shared-memory part is dropped. */
    memcpy(bad, bytes, n);
    bad[n - 10] ^= 0x01; /* last byte of the node id */
    assert_int_equal(NA_Addr_deserialize(fx->autoc.cls, &a, bad, n),
                     NA_SUCCESS);
    assert_null(a->part[NA_AUTO_SM]);
    NA_Addr_free(fx->autoc.cls, a);
    /* A string naming shared memory of another node only. */
    assert_int_not_equal(
        NA_Addr_lookup(fx->autoc.cls, "na+sm://x@not-this-node", &a),
        NA_SUCCESS);
    assert_int_not_equal(NA_Addr_deserialize(fx->autoc.cls, &a, bytes, 0),
                         NA_SUCCESS);
}

static uint64_t
thread_cpu_us(void)
{
    struct rusage u;

    getrusage(RUSAGE_THREAD, &u);
    return (uint64_t) (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000u +
           (uint64_t) (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* An idle class waits without spinning: 300 ms cost little CPU. */
static void
test_idle(void **state)
{
    struct fixture *fx = *state;
    uint64_t t0 = thread_cpu_us();

    assert_int_equal(NA_Poll_wait(fx->srv.cls, fx->srv.ctx, 300, NULL),
                     NA_TIMEOUT);
    assert_true(thread_cpu_us() - t0 < 60000);
}

static void
addr_string(na_class_t *cls, char *buf, size_t size)
{
    na_addr_t self;

    assert_int_equal(NA_Addr_self(cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(cls, buf, &size, self), NA_SUCCESS);
    NA_Addr_free(cls, self);
}

/* A class started on the address an earlier one printed (a server
 * restarted at its address) has that same address, both parts; a
 * shared-memory part from another boot is ignored; a string that is
 * only a suffix is refused. */
static void
test_restart_at_address(void **state)
{
    char first[512], again[512], other[600];
    na_class_t *cls = na_auto_sm_initialize(TCP, NULL, true, NULL);
    char *at;

    (void) state;
    assert_non_null(cls);
    addr_string(cls, first, sizeof(first));
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    cls = na_auto_sm_initialize(first, NULL, true, NULL);
    assert_non_null(cls);
    addr_string(cls, again, sizeof(again));
    assert_string_equal(again, first);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);

    at = strrchr(first, '@');
    assert_non_null(at);
    snprintf(other, sizeof(other), "%.*s@another-boot", (int) (at - first),
             first);
    cls = na_auto_sm_initialize(other, NULL, true, NULL);
    assert_non_null(cls);
    addr_string(cls, again, sizeof(again));
    assert_string_not_equal(again, first);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    assert_null(na_auto_sm_initialize(strchr(first, '#'), NULL, true, NULL));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rma, setup, teardown),
        cmocka_unit_test_setup_teardown(test_junk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
        cmocka_unit_test(test_restart_at_address),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
