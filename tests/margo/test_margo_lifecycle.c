/*
 * Lifecycle: finalize and pre-finalize callbacks (plain and provider
 * forms), remote shutdown, reference counting, margo_finalize_and_wait,
 * margo_thread_sleep on the fabric clock, margo_respond_timed,
 * margo_state_dump, and a forward in flight ended by finalize.
 */
#include "tm.h"

#include <na_sim.h>

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

/*
 * A handler queued but never started when its instance finalizes does not
 * run, and its origin is answered at once with HG_CANCELED rather than
 * left to its deadline. The server runs handlers in its callers' context
 * (no handler stream, no progress thread), so a request it takes in stays
 * queued until one of its threads waits in a Margo call. The test takes
 * the request in by driving the server's HG context itself (and the
 * client's, which a real fabric needs to send) until Margo's RPC callback
 * has run, before margo_finalize(): a request arriving once finalize has
 * begun is refused at the door instead (the refusal, not this drop). The
 * teardown then drops the queued handler. Without the answer the client's
 * call would end only when the liveness probe finds the server gone
 * (HG_HOSTUNREACH after 1 s on the simulator) or at its 5 s bound.
 */
static int tl_queued_ran;

static void
tl_queued_add(hg_handle_t h)
{
    tl_queued_ran = 1;
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tl_queued_add)

/* Drive the two contexts until one callback of the server's has run (the
 * request taken in); returns how many ran. */
static unsigned int
tl_take_in(margo_instance_id server, margo_instance_id client)
{
    hg_context_t *ctx = margo_get_context(server);
    hg_context_t *client_ctx = margo_get_context(client);
    unsigned int triggered = 0;

    for (int i = 0; i < 1000 && triggered == 0; i++) {
        unsigned int n = 0;

        /* A real fabric's client sends only as its own context progresses
         * (its callbacks wait for the client's margo_wait()). */
        (void) HG_Progress(client_ctx, 0);
        (void) HG_Progress(ctx, 10);
        if (HG_Trigger(ctx, 0, 1, &n) == HG_SUCCESS)
            triggered += n;
    }
    return triggered;
}

static void
test_finalize_answers_queued(void **state)
{
    margo_instance_id server = tl_init("fq-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("fq-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t id = MARGO_REGISTER(server, "tl_queued_add", tm_add_in_t,
                                tm_add_out_t, tl_queued_add);
    tm_add_in_t in = {1, 2};
    margo_request req;
    hg_handle_t h;
    hg_addr_t addr;

    (void) state;
    tl_queued_ran = 0;
    MARGO_REGISTER(client, "tl_queued_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    assert_hg_ok(margo_create(client, addr, id, &h));
    assert_hg_ok(margo_iforward_timed(h, &in, 5000, &req));
    assert_int_equal(tl_take_in(server, client), 1); /* taken in */
    margo_finalize(server);
    assert_int_equal(tl_queued_ran, 0);
    assert_int_equal(margo_wait(req), HG_CANCELED);
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
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
 * no RPC. The handler that accepted the request is held between its answer
 * and its margo_finalize(), where the refusal must already hold: the
 * server's one handler stream is kept by a ULT ("hold") that waits, on a
 * plain condition variable, for the client's next call to end, and that
 * call's RPC is registered on a pool of the test's own stream, which the
 * hold leaves free. Without the refusal, that call is served (3) in every
 * round.
 *
 * The order is fixed beforehand, with no timing in it: a "gate" ULT keeps
 * the handler stream until the shutdown handler is queued behind it, the
 * hold is queued behind the handler, and the server's progress thread is
 * stopped in a completion callback of the test's (tl_progress_stop). Then
 * the gate lets go. The handler answers and waits for the send to
 * complete, which only the stopped progress thread can report, so it gives
 * up the stream; the hold takes it, checks in the server's debug log that
 * the handler has not reached margo_finalize(), and lets the progress
 * thread go on. The handler resumes only once the hold ends.
 */
struct tl_hold {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool gate_running, gate_open, call_done;
    bool progress_stopped, progress_open;
    atomic_bool finalize_logged; /* the handler reached margo_finalize() */
    bool held;                   /* the hold ran before that             */
    margo_instance_id client;
    hg_addr_t addr;
    hg_id_t cid;
    int shutdown_ret;
    hg_return_t call_ret;
    int32_t sum;
};

static void
tl_hold_log(void *uargs, const char *message)
{
    struct tl_hold *s = uargs;

    if (strstr(message, "margo_finalize: requested") != NULL)
        atomic_store(&s->finalize_logged, true);
}

static void
tl_hold_signal(struct tl_hold *s, bool *flag)
{
    pthread_mutex_lock(&s->lock);
    *flag = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void
tl_hold_await(struct tl_hold *s, const bool *flag)
{
    pthread_mutex_lock(&s->lock);
    while (!*flag)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

static void
tl_gate_ult(void *arg)
{
    struct tl_hold *s = arg;

    tl_hold_signal(s, &s->gate_running);
    tl_hold_await(s, &s->gate_open);
}

static void
tl_hold_ult(void *arg)
{
    struct tl_hold *s = arg;

    s->held = !atomic_load(&s->finalize_logged);
    tl_hold_signal(s, &s->progress_open);
    tl_hold_await(s, &s->call_done);
}

/* A completion callback, so it runs where the server's progress is made,
 * its progress thread, and keeps that thread until the hold runs. */
static hg_return_t
tl_progress_gate_cb(const struct hg_cb_info *info)
{
    struct tl_hold *s = info->arg;

    tl_hold_signal(s, &s->progress_stopped);
    tl_hold_await(s, &s->progress_open);
    return HG_SUCCESS;
}

/* Stop the server's progress thread: a local bulk copy whose callback
 * keeps it (tl_progress_gate_cb). */
static void
tl_progress_stop(struct tl_hold *s, margo_instance_id server, hg_bulk_t bulk[2])
{
    static char bytes[2][8];
    hg_class_t *cls = margo_get_class(server);
    hg_addr_t self;

    for (int i = 0; i < 2; i++) {
        void *ptr = bytes[i];
        hg_size_t size = sizeof(bytes[i]);

        assert_hg_ok(
            HG_Bulk_create(cls, 1, &ptr, &size, HG_BULK_READWRITE, &bulk[i]));
    }
    assert_hg_ok(HG_Addr_self(cls, &self));
    assert_hg_ok(HG_Bulk_transfer(
        margo_get_context(server), tl_progress_gate_cb, s, HG_BULK_PUSH, self,
        bulk[0], 0, bulk[1], 0, sizeof(bytes[0]), HG_OP_ID_IGNORE));
    assert_hg_ok(HG_Addr_free(cls, self));
    tl_hold_await(s, &s->progress_stopped);
}

static void *
tl_hold_client(void *arg)
{
    struct tl_hold *s = arg;
    tm_add_in_t in = {1, 2};
    tm_add_out_t out;
    hg_handle_t h;

    s->shutdown_ret = margo_shutdown_remote_instance(s->client, s->addr);
    s->call_ret = margo_create(s->client, s->addr, s->cid, &h);
    if (s->call_ret == HG_SUCCESS) {
        s->call_ret = margo_forward_timed(h, &in, 5000);
        if (s->call_ret == HG_SUCCESS &&
            margo_get_output(h, &out) == HG_SUCCESS) {
            s->sum = out.sum;
            margo_free_output(h, &out);
        }
        margo_destroy(h);
    }
    tl_hold_signal(s, &s->call_done);
    return NULL;
}

static void
test_remote_shutdown_refuses_after(void **state)
{
    margo_instance_id client = tl_init("rsa-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t cid =
        MARGO_REGISTER(client, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
    int rounds;
    ABT_pool side;
    ABT_xstream side_xs;

    (void) state;
    /* A stream of the test's own for tm_add, which the hold leaves free. */
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
                                           ABT_POOL_ACCESS_MPMC, ABT_TRUE,
                                           &side),
                     ABT_SUCCESS);
    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, 1, &side,
                                              ABT_SCHED_CONFIG_NULL, &side_xs),
                     ABT_SUCCESS);
    for (rounds = 0; rounds < 3; rounds++) {
        struct tl_hold s = {.lock = PTHREAD_MUTEX_INITIALIZER,
                            .cond = PTHREAD_COND_INITIALIZER,
                            .client = client,
                            .cid = cid};
        struct margo_logger logger = {.uargs = &s, .debug = tl_hold_log};
        margo_instance_id server = tl_init("rsa-s", MARGO_SERVER_MODE, 1, 1);
        ABT_pool handlers;
        ABT_thread gate, hold;
        hg_bulk_t bulk[2];
        pthread_t caller;
        size_t queued = 0;

        atomic_init(&s.finalize_logged, false);
        assert_int_equal(margo_get_handler_pool(server, &handlers), 0);
        assert_int_not_equal(
            MARGO_REGISTER_PROVIDER(server, "tm_add", tm_add_in_t, tm_add_out_t,
                                    tm_add, MARGO_DEFAULT_PROVIDER_ID, side),
            0);
        assert_int_equal(margo_set_logger(server, &logger), 0);
        assert_int_equal(margo_set_log_level(server, MARGO_LOG_DEBUG), 0);
        margo_enable_remote_shutdown(server);
        s.addr = tm_lookup_self(client, server);
        assert_int_equal(tm_call_add(client, s.addr, cid, 1, 2), 3);

        assert_int_equal(ABT_thread_create(handlers, tl_gate_ult, &s,
                                           ABT_THREAD_ATTR_NULL, &gate),
                         ABT_SUCCESS);
        tl_hold_await(&s, &s.gate_running);
        assert_int_equal(pthread_create(&caller, NULL, tl_hold_client, &s), 0);
        while (queued == 0) {
            assert_int_equal(ABT_pool_get_size(handlers, &queued), ABT_SUCCESS);
            if (queued == 0)
                sched_yield();
        }
        assert_int_equal(ABT_thread_create(handlers, tl_hold_ult, &s,
                                           ABT_THREAD_ATTR_NULL, &hold),
                         ABT_SUCCESS);
        tl_progress_stop(&s, server, bulk);
        tl_hold_signal(&s, &s.gate_open);
        assert_int_equal(pthread_join(caller, NULL), 0);
        assert_int_equal(ABT_thread_free(&gate), ABT_SUCCESS);
        assert_int_equal(ABT_thread_free(&hold), ABT_SUCCESS);
        assert_hg_ok(HG_Bulk_free(bulk[0]));
        assert_hg_ok(HG_Bulk_free(bulk[1]));

        assert_int_equal(s.shutdown_ret, 0);
        if (!s.held)
            fail_msg("round %d: the shutdown handler reached margo_finalize "
                     "before the hold took its stream",
                     rounds);
        if (s.call_ret != HG_CANCELED)
            fail_msg("round %d: the call after an accepted shutdown "
                     "returned %s (sum %d), not HG_CANCELED",
                     rounds, HG_Error_to_string(s.call_ret), (int) s.sum);
        margo_wait_for_finalize(server);
        assert_hg_ok(margo_addr_free(client, s.addr));
    }
    /* Before the client goes: Margo's last instance ends Argobots. */
    assert_int_equal(ABT_xstream_join(side_xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&side_xs), ABT_SUCCESS);
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

/*
 * The 5 s deadline of both respond forms is 5 s of the fabric's clock. On
 * the simulator every link takes 20 ms one way while the calls run, and a
 * send completes when it is delivered: each response needs 20 ms, which a
 * deadline read in the wrong unit (5 ms) would not give it.
 */
static void
test_respond_timed(void **state)
{
    margo_instance_id server = tl_init("rt-s", MARGO_SERVER_MODE, 0, 0);
    margo_instance_id client = tl_init("rt-c", MARGO_CLIENT_MODE, 0, 0);
    hg_id_t id = MARGO_REGISTER(server, "tl_timed_add", tm_add_in_t,
                                tm_add_out_t, tl_timed_add);
    struct na_sim_link fast = {0, 0}, slow;
    hg_addr_t addr;

    (void) state;
    MARGO_REGISTER(client, "tl_timed_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    if (tm_is_sim()) {
        /* Two names no node has: their link is the default one. */
        assert_int_equal(na_sim_get_link("rt-none-a", "rt-none-b", &fast),
                         NA_SUCCESS);
        slow = fast;
        slow.latency_ns = UINT64_C(20000000);
        assert_int_equal(na_sim_set_link_default(&slow), NA_SUCCESS);
    }
    for (int i = 0; i < 4; i++) {
        uint64_t start = tm_is_sim() ? na_sim_clock_now() : 0;

        tl_respond_ret = HG_OTHER_ERROR;
        /* Bounded, so that a response the server gave up on fails the
         * case at once rather than leaving the call waiting. */
        assert_int_equal(tm_call_add_timed(client, addr, id, i, 1, 10000),
                         i + 1);
        assert_hg_ok(tl_respond_ret);
        if (tm_is_sim()) /* the request and the response each took 20 ms */
            assert_true(na_sim_clock_now() - start >= UINT64_C(40000000));
    }
    if (tm_is_sim())
        assert_int_equal(na_sim_set_link_default(&fast), NA_SUCCESS);
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
        cmocka_unit_test(test_finalize_answers_queued),
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
