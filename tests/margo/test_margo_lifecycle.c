/*
 * Lifecycle: finalize and pre-finalize callbacks (plain and provider
 * forms), remote shutdown, reference counting, margo_finalize_and_wait,
 * margo_thread_sleep on the fabric clock, margo_respond_timed,
 * margo_state_dump, and a forward in flight ended by finalize.
 */
#include "tm.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static margo_instance_id
tl_init(const char *role, int mode, int pt, int rt)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), role);
    mid = margo_init(addr, mode, pt, rt);
    assert_non_null(mid);
    return mid;
}

/* Callbacks append their letter to tl_order. */
static char tl_order[16];
static void
tl_mark(void *arg)
{
    size_t n = strlen(tl_order);

    if (n + 1 < sizeof(tl_order))
        tl_order[n] = *(const char *) arg;
}

static void
test_finalize_callbacks(void **state)
{
    static const char a = 'a', b = 'b', c = 'c', p = 'p', q = 'q';
    margo_instance_id mid = tl_init("cb", MARGO_SERVER_MODE, 0, 0);
    int owner1, owner2;
    margo_finalize_callback_t cb;
    void *uargs;

    (void) state;
    memset(tl_order, 0, sizeof(tl_order));
    assert_int_equal(margo_top_finalize_callback(mid, &cb, &uargs), 0);
    assert_int_equal(margo_pop_finalize_callback(mid), 0);
    margo_push_finalize_callback(mid, tl_mark, (void *) &a);
    margo_provider_push_finalize_callback(mid, &owner1, tl_mark, (void *) &b);
    margo_push_finalize_callback(mid, tl_mark, (void *) &c);
    margo_provider_push_finalize_callback(mid, &owner2, tl_mark, (void *) &q);
    assert_int_equal(margo_top_finalize_callback(mid, &cb, &uargs), 1);
    assert_ptr_equal(uargs, &q);
    assert_int_equal(
        margo_provider_top_finalize_callback(mid, &owner1, &cb, &uargs), 1);
    assert_ptr_equal(uargs, &b);
    /* The provider forms only see their owner's callbacks. */
    assert_int_equal(margo_provider_pop_finalize_callback(mid, &owner2), 1);
    assert_int_equal(margo_provider_pop_finalize_callback(mid, &owner2), 0);
    assert_int_equal(margo_provider_top_finalize_callback(mid, &a, &cb, NULL),
                     0);
    /* Pre-finalize callbacks, run before the finalize ones. */
    margo_push_prefinalize_callback(mid, tl_mark, (void *) &p);
    margo_provider_push_prefinalize_callback(mid, &owner1, tl_mark,
                                             (void *) &q);
    assert_int_equal(margo_top_prefinalize_callback(mid, &cb, &uargs), 1);
    assert_ptr_equal(uargs, &q);
    assert_int_equal(
        margo_provider_top_prefinalize_callback(mid, &owner1, NULL, &uargs), 1);
    assert_int_equal(margo_provider_pop_prefinalize_callback(mid, &owner1), 1);
    assert_int_equal(margo_provider_pop_prefinalize_callback(mid, &owner1), 0);
    margo_push_prefinalize_callback(mid, tl_mark, (void *) &q);
    assert_int_equal(margo_pop_prefinalize_callback(mid), 1);
    margo_finalize(mid);
    /* p (pre-finalize), then c, b, a: last pushed first. */
    assert_string_equal(tl_order, "pcba");
}

/* A pre-finalize callback may still send RPCs. */
struct tl_pre {
    margo_instance_id client;
    hg_addr_t addr;
    hg_id_t add_id;
    int32_t result;
};

static void
tl_pre_rpc(void *arg)
{
    struct tl_pre *pre = arg;

    pre->result = tm_call_add(pre->client, pre->addr, pre->add_id, 20, 22);
}

static void
test_prefinalize_sends_rpc(void **state)
{
    margo_instance_id server = tl_init("pre-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("pre-c", MARGO_CLIENT_MODE, 0, 0);
    struct tl_pre pre = {client, HG_ADDR_NULL, 0, 0};

    (void) state;
    pre.add_id =
        MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
    MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    pre.addr = tm_lookup_self(client, server);
    margo_push_prefinalize_callback(client, tl_pre_rpc, &pre);
    margo_finalize(client);
    assert_int_equal(pre.result, 42);
    margo_finalize(server);
}

static int tl_server_done;
static void
tl_set_done(void *arg)
{
    (void) arg;
    tl_server_done = 1;
}

static void
test_remote_shutdown(void **state)
{
    margo_instance_id server = tl_init("rs-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("rs-c", MARGO_CLIENT_MODE, 0, 0);
    hg_addr_t addr = tm_lookup_self(client, server);

    (void) state;
    tl_server_done = 0;
    margo_push_finalize_callback(server, tl_set_done, NULL);
    /* Not enabled: refused, and the server lives on. */
    assert_int_equal(margo_shutdown_remote_instance(client, addr), -1);
    assert_int_equal(margo_shutdown_remote_instance(MARGO_INSTANCE_NULL, addr),
                     -1);
    margo_enable_remote_shutdown(server);
    assert_int_equal(margo_shutdown_remote_instance(client, addr), 0);
    assert_int_equal(tl_server_done, 0);
    /* The request is recorded; the wait completes the shutdown at once. */
    margo_wait_for_finalize(server);
    assert_int_equal(tl_server_done, 1);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
}

/*
 * Once margo_shutdown_remote_instance() has returned 0, the target answers
 * no RPC: here its handler runs in its own thread, so without the refusal
 * a call made at once could still be served before that thread finalizes.
 * Repeated, since only a later scheduling opens that window.
 */
static void
test_remote_shutdown_refuses_after(void **state)
{
    margo_instance_id client = tl_init("rsa-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t cid =
        MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);

    (void) state;
    for (int i = 0; i < 20; i++) {
        margo_instance_id server = tl_init("rsa-s", MARGO_SERVER_MODE, 1, 1);
        hg_addr_t addr;
        hg_handle_t h;
        tm_add_in_t in = {1, 2};

        MARGO_REGISTER(server, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
        margo_enable_remote_shutdown(server);
        addr = tm_lookup_self(client, server);
        assert_int_equal(tm_call_add(client, addr, cid, 1, 2), 3);
        assert_int_equal(margo_shutdown_remote_instance(client, addr), 0);
        assert_hg_ok(margo_create(client, addr, cid, &h));
        assert_int_equal(margo_forward_timed(h, &in, 5000), HG_CANCELED);
        assert_hg_ok(margo_destroy(h));
        margo_wait_for_finalize(server);
        assert_hg_ok(margo_addr_free(client, addr));
    }
    margo_finalize(client);
}

static void
test_refcount(void **state)
{
    margo_instance_id mid = tl_init("ref", MARGO_CLIENT_MODE, 0, 0);
    unsigned count;
    bool flag = true;

    (void) state;
    assert_hg_ok(margo_instance_ref_count(mid, &count));
    assert_int_equal(count, 1);
    assert_hg_ok(margo_instance_ref_incr(mid));
    assert_hg_ok(margo_instance_ref_count(mid, &count));
    assert_int_equal(count, 2);
    assert_hg_ok(margo_instance_is_finalized(mid, &flag));
    assert_false(flag);
    margo_finalize(mid);
    /* The memory outlives the instance while a reference is held. */
    assert_hg_ok(margo_instance_is_finalized(mid, &flag));
    assert_true(flag);
    assert_null(margo_get_class(mid));
    assert_hg_ok(margo_instance_ref_count(mid, &count));
    assert_int_equal(count, 1);
    assert_hg_ok(margo_instance_release(mid));
    assert_hg_ret(margo_instance_ref_incr(MARGO_INSTANCE_NULL), HG_INVALID_ARG);
    assert_hg_ret(margo_instance_is_finalized(MARGO_INSTANCE_NULL, &flag),
                  HG_INVALID_ARG);

    /* Releasing the last reference of a live instance finalizes it. */
    tl_server_done = 0;
    mid = tl_init("ref2", MARGO_CLIENT_MODE, 0, 0);
    margo_push_finalize_callback(mid, tl_set_done, NULL);
    assert_hg_ok(margo_instance_release(mid));
    assert_int_equal(tl_server_done, 1);
}

static void *
tl_waiter(void *arg)
{
    margo_wait_for_finalize(arg);
    return NULL;
}

static void
test_finalize_and_wait(void **state)
{
    margo_instance_id mid = tl_init("faw", MARGO_SERVER_MODE, 1, 0);
    pthread_t waiter;

    (void) state;
    tl_server_done = 0;
    margo_push_finalize_callback(mid, tl_set_done, NULL);
    /* The waiter may reach margo_wait_for_finalize() only after the
     * teardown: a reference keeps the instance valid until it returns. */
    assert_hg_ok(margo_instance_ref_incr(mid));
    assert_int_equal(pthread_create(&waiter, NULL, tl_waiter, mid), 0);
    /* Whoever tears down (the waiter or this thread), this returns after. */
    margo_finalize_and_wait(mid);
    assert_int_equal(tl_server_done, 1);
    pthread_join(waiter, NULL);
    assert_hg_ok(margo_instance_release(mid));
}

/* Two threads wait, a third finalizes: whichever waiter tears down, the
 * other must neither read the freed instance (ASan) nor return before the
 * finalize callbacks ran. */
static void *
tl_waiter_check(void *arg)
{
    margo_wait_for_finalize(arg);
    return (void *) (intptr_t) tl_server_done;
}

static void
test_two_waiters(void **state)
{
    margo_instance_id mid = tl_init("two", MARGO_SERVER_MODE, 1, 0);
    pthread_t waiter[2];
    void *done[2];
    unsigned count = 0;
    int i;

    (void) state;
    tl_server_done = 0;
    margo_push_finalize_callback(mid, tl_set_done, NULL);
    for (i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&waiter[i], NULL, tl_waiter_check, mid),
                         0);
    /* Both waiters hold a reference once they wait. */
    while (count < 3) {
        assert_hg_ok(margo_instance_ref_count(mid, &count));
        sched_yield();
    }
    margo_finalize(mid);
    for (i = 0; i < 2; i++) {
        pthread_join(waiter[i], &done[i]);
        assert_int_equal((intptr_t) done[i], 1);
    }
}

static void
tl_check_sleep(int pt)
{
    margo_instance_id mid = tl_init("sleep", MARGO_SERVER_MODE, pt, 0);
    double ms = tm_is_sim() ? 10000 : 50;
    uint64_t t0 = HG_Clock_now(margo_get_class(mid)), r0 = tm_real_ns();

    margo_thread_sleep(mid, ms);
    assert_true(HG_Clock_now(margo_get_class(mid)) - t0 >=
                (uint64_t) (ms * 1e6));
    if (tm_is_sim())
        /* Virtual time: ten seconds on the fabric clock in far less. */
        assert_true(tm_real_ns() - r0 < 3000000000ull);
    margo_thread_sleep(mid, 0);
    margo_thread_sleep(MARGO_INSTANCE_NULL, 10);
    margo_finalize(mid);
}

static void
test_thread_sleep(void **state)
{
    (void) state;
    tl_check_sleep(0);
    tl_check_sleep(1);
}

/* Answers with margo_respond_timed() or margo_irespond_timed(). */
static hg_return_t tl_respond_ret = HG_OTHER_ERROR;
static void
tl_timed_add(hg_handle_t h)
{
    tm_add_in_t in;
    tm_add_out_t out;
    margo_request req;

    margo_get_input(h, &in);
    out.sum = in.a + in.b;
    if (in.a % 2) {
        tl_respond_ret = margo_respond_timed(h, &out, 5000);
    } else {
        tl_respond_ret = margo_irespond_timed(h, &out, 5000, &req);
        if (tl_respond_ret == HG_SUCCESS)
            tl_respond_ret = margo_wait(req);
    }
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tl_timed_add)

static void
test_respond_timed(void **state)
{
    margo_instance_id server = tl_init("rt-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("rt-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t id = MARGO_REGISTER(server, "tl_timed_add", tm_add_in_t,
                                tm_add_out_t, tl_timed_add);
    hg_addr_t addr;

    (void) state;
    MARGO_REGISTER(client, "tl_timed_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    for (int i = 0; i < 4; i++) {
        tl_respond_ret = HG_OTHER_ERROR;
        assert_int_equal(tm_call_add(client, addr, id, i, 1), i + 1);
        assert_hg_ok(tl_respond_ret);
    }
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

/*
 * margo_finalize ends the operations in flight before it goes on: a
 * forward its target holds is cancelled and has ended (HG_CANCELED)
 * before the finalize callbacks run, as the state dump one of them takes
 * shows ("operations in flight: 0").
 */
static _Atomic(hg_handle_t) tl_held;
static void
tl_hold(hg_handle_t h)
{
    atomic_store(&tl_held, h); /* never answered; the test destroys it */
}
DEFINE_MARGO_RPC_HANDLER(tl_hold)

static int tl_inflight_at_finalize = -1;
/* The in-flight forward's request and handle: the finalize callback waits
 * for the request and destroys the handle, so no handle of the program's
 * is left when finalize tears the HG context down (one still held then
 * makes finalize keep, and leak, the instance). */
static margo_request tl_req;
static hg_handle_t tl_fwd;
static hg_return_t tl_req_ret = HG_OTHER_ERROR;
static void
tl_count_inflight(void *arg)
{
    static const char key[] = "operations in flight: ";
    char path[] = "/tmp/qs_margo_inflightXXXXXX", buf[4096];
    const char *p;
    FILE *f;
    size_t n;
    int fd = mkstemp(path);

    if (fd < 0)
        return;
    close(fd);
    if (margo_state_dump((margo_instance_id) arg, path, 0, NULL) == 0 &&
        (f = fopen(path, "r")) != NULL) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        p = strstr(buf, key);
        if (p != NULL)
            tl_inflight_at_finalize = atoi(p + strlen(key));
    }
    unlink(path);
    if (tl_fwd != HG_HANDLE_NULL) {
        tl_req_ret = margo_wait(tl_req);
        (void) margo_destroy(tl_fwd);
        tl_fwd = HG_HANDLE_NULL;
    }
}

static void
test_finalize_ends_inflight(void **state)
{
    margo_instance_id server = tl_init("if-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("if-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t id = MARGO_REGISTER(server, "tl_hold", void, void, tl_hold);
    margo_request req;
    hg_addr_t addr;
    hg_handle_t h;
    int flag = 0;

    (void) state;
    MARGO_REGISTER(client, "tl_hold", void, void, NULL);
    addr = tm_lookup_self(client, server);
    assert_hg_ok(margo_create(client, addr, id, &h));
    assert_hg_ok(margo_iforward(h, NULL, &req));
    while (atomic_load(&tl_held) == HG_HANDLE_NULL) {
        assert_hg_ok(margo_test(req, &flag));
        assert_int_equal(flag, 0);
        margo_thread_sleep(client, 1.0);
    }
    assert_hg_ok(margo_addr_free(client, addr));
    tl_req = req;
    tl_fwd = h;
    margo_push_finalize_callback(client, tl_count_inflight, client);
    margo_finalize(client);
    assert_int_equal(tl_inflight_at_finalize, 0);
    assert_int_equal(tl_req_ret, HG_CANCELED);
    assert_hg_ok(margo_destroy(atomic_load(&tl_held)));
    margo_finalize(server);
}

static void
test_state_dump(void **state)
{
    margo_instance_id mid = tl_init("dump", MARGO_SERVER_MODE, 0, 0);
    char path[] = "/tmp/qs_margo_dumpXXXXXX", *resolved = NULL, buf[4096];
    FILE *f;
    size_t n;
    int fd;

    (void) state;
    MARGO_REGISTER(mid, "tl_dumped_rpc", void, void, NULL);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(margo_state_dump(mid, path, 0, &resolved), 0);
    assert_string_equal(resolved, path);
    free(resolved);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "tl_dumped_rpc"));
    assert_non_null(strstr(buf, "mode: server"));
    /* uniquify appends host and pid. */
    assert_int_equal(margo_state_dump(mid, path, 1, &resolved), 0);
    assert_true(strlen(resolved) > strlen(path));
    assert_int_equal(strncmp(resolved, path, strlen(path)), 0);
    unlink(resolved);
    free(resolved);
    assert_int_equal(margo_state_dump(mid, "/nonexistent/dir/x", 0, NULL), -1);
    assert_int_equal(margo_state_dump(MARGO_INSTANCE_NULL, path, 0, NULL), -1);
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finalize_callbacks),
        cmocka_unit_test(test_prefinalize_sends_rpc),
        cmocka_unit_test(test_remote_shutdown),
        cmocka_unit_test(test_remote_shutdown_refuses_after),
        cmocka_unit_test(test_refcount),
        cmocka_unit_test(test_finalize_and_wait),
        cmocka_unit_test(test_two_waiters),
        cmocka_unit_test(test_thread_sleep),
        cmocka_unit_test(test_respond_timed),
        cmocka_unit_test(test_state_dump),
        cmocka_unit_test(test_finalize_ends_inflight),
    };

    return tm_main("margo_lifecycle", tests, sizeof(tests) / sizeof(tests[0]));
}
