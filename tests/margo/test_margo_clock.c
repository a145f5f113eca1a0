/*
 * Virtual time on the simulator and the ULTs of other execution streams:
 * computing takes no virtual time, so a timed call whose handler runs on
 * a handler thread must not expire because that thread was slow to be
 * scheduled, or computed for a while before answering (na_runtime.h).
 * And a ULT that never stops running must not freeze the clock for good.
 * Simulator only: elsewhere the deadline is real time.
 */
#include "tm.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <na_sim.h>

/* Real time a handler computes before it answers: far beyond the 1 ms
 * that a waiter would once wait for a post before jumping to its
 * deadline, well below the runtime's grace period. */
#define TC_COMPUTE_MS 30

/* Computes (no yield point, no fabric call) for TC_COMPUTE_MS, then
 * answers tm_add. */
static void
tc_slow_add(hg_handle_t h)
{
    uint64_t until = tm_real_ns() + TC_COMPUTE_MS * 1000000ull;
    tm_add_in_t in;
    tm_add_out_t out = {0};

    while (tm_real_ns() < until)
        ;
    if (margo_get_input(h, &in) == HG_SUCCESS) {
        out.sum = in.a + in.b;
        margo_free_input(h, &in);
    }
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tc_slow_add)

/* Real time the whole process is paused (SIGSTOP, then SIGCONT) while
 * a handler computes: beyond the runtime's grace (NA_RUNTIME_GRACE_MS,
 * 250 ms). The pause stands for a loaded machine or a sanitizer stopping
 * every thread at once; it is what this case tests, not a wait for
 * another thread. */
#define TC_PAUSE_MS 350

/* Set when tc_paused_add could not pause the process: the case then
 * fails instead of passing without its pause. */
static atomic_int tc_pause_missed;

/* Forks a child that pauses this process for TC_PAUSE_MS while this
 * handler waits for it (so that the pause falls within the handler's
 * work), then answers as tc_slow_add does. */
static void
tc_paused_add(hg_handle_t h)
{
    int done[2];
    pid_t child;
    char byte;

    if (pipe(done) != 0) {
        atomic_store(&tc_pause_missed, 1);
        tc_slow_add(h);
        return;
    }
    child = fork();
    if (child == 0) {
        /* Only async-signal-safe calls in the child of a threaded
         * process. */
        struct timespec ts = {TC_PAUSE_MS / 1000,
                              (long) (TC_PAUSE_MS % 1000) * 1000000L};
        pid_t parent = getppid();

        kill(parent, SIGSTOP);
        while (nanosleep(&ts, &ts) != 0)
            ;
        kill(parent, SIGCONT);
        _exit(write(done[1], "x", 1) == 1 ? 0 : 1);
    }
    close(done[1]);
    if (child > 0) {
        /* Block until the child is done: to the runtime, a ULT blocked
         * outside any wait it knows of computes. */
        while (read(done[0], &byte, 1) < 0 && errno == EINTR)
            ;
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
    } else
        atomic_store(&tc_pause_missed, 1);
    close(done[0]);
    tc_slow_add(h);
}
DEFINE_MARGO_RPC_HANDLER(tc_paused_add)

/* A server with one handler thread (and a progress thread or not), a
 * client driven by this thread: `calls` 100 ms calls to the computing
 * handler (or the one paused in its compute) succeed, each in less than
 * 100 ms of virtual time, and no waiter's grace ran out. */
static void
tc_run(int use_progress_thread, int paused, int calls)
{
    char addr_str[64];
    margo_instance_id server, client;
    tm_add_in_t in = {20, 22};
    tm_add_out_t out;
    hg_addr_t addr;
    hg_handle_t h;
    hg_id_t id;
    uint64_t v0, v1, expiries;

    if (!tm_is_sim())
        skip();
    tm_addr_for(addr_str, sizeof(addr_str), "clock");
    server = margo_init(addr_str, MARGO_SERVER_MODE, use_progress_thread, 1);
    assert_non_null(server);
    if (paused)
        MARGO_REGISTER(server, "tc_slow_add", tm_add_in_t, tm_add_out_t,
                       tc_paused_add);
    else
        MARGO_REGISTER(server, "tc_slow_add", tm_add_in_t, tm_add_out_t,
                       tc_slow_add);
    client = margo_init("sim", MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(client);
    id = MARGO_REGISTER(client, "tc_slow_add", tm_add_in_t, tm_add_out_t, NULL);
    addr = tm_lookup_self(client, server);
    atomic_store(&tc_pause_missed, 0);
    expiries = na_sim_grace_expiries();
    for (int i = 0; i < calls; i++) {
        assert_hg_ok(margo_create(client, addr, id, &h));
        v0 = HG_Clock_now(margo_get_class(client));
        assert_hg_ok(margo_forward_timed(h, &in, 100.0));
        v1 = HG_Clock_now(margo_get_class(client));
        assert_hg_ok(margo_get_output(h, &out));
        assert_int_equal(out.sum, 42);
        margo_free_output(h, &out);
        assert_hg_ok(margo_destroy(h));
        assert_true(v1 - v0 < 100ull * 1000000ull);
    }
    assert_int_equal(na_sim_grace_expiries(), expiries);
    assert_int_equal(atomic_load(&tc_pause_missed), 0);
    assert_hg_ok(margo_addr_free(client, addr));
    margo_finalize(client);
    margo_finalize(server);
}

static void
test_handler_thread_computes(void **state)
{
    (void) state;
    tc_run(0, 0, 3);
}

static void
test_handler_thread_computes_progress_thread(void **state)
{
    (void) state;
    tc_run(1, 0, 3);
}

/* The whole process paused for longer than the grace while a handler
 * computes: the pause counts for one gap of the grace at most
 * (na_runtime.h), so the call still succeeds (it once expired here). */
static void
test_process_paused_progress_thread(void **state)
{
    (void) state;
    tc_run(1, 1, 1);
}

/* A ULT of another stream that spins until told to stop (a yield loop
 * that is not an Argobots yield point): this thread's 50 ms sleep still
 * ends, once the grace period has passed. */
static atomic_int tc_stop;

static void
tc_spin(void *arg)
{
    (void) arg;
    while (!atomic_load(&tc_stop))
        sched_yield();
}

static void
test_spinning_ult_does_not_freeze_time(void **state)
{
    margo_instance_id mid;
    ABT_xstream xs;
    ABT_pool pool;
    ABT_thread t;
    uint64_t v0, v1, expiries;

    (void) state;
    if (!tm_is_sim())
        skip();
    mid = margo_init("sim", MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(mid);
    assert_int_equal(ABT_xstream_create(ABT_SCHED_NULL, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_get_main_pools(xs, 1, &pool), ABT_SUCCESS);
    atomic_store(&tc_stop, 0);
    assert_int_equal(
        ABT_thread_create(pool, tc_spin, NULL, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    expiries = na_sim_grace_expiries();
    v0 = HG_Clock_now(margo_get_class(mid));
    margo_thread_sleep(mid, 50.0);
    v1 = HG_Clock_now(margo_get_class(mid));
    assert_true(v1 - v0 >= 50ull * 1000000ull);
    /* The sleep ended because its grace ran out. */
    assert_true(na_sim_grace_expiries() > expiries);
    atomic_store(&tc_stop, 1);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_join(xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handler_thread_computes),
        cmocka_unit_test(test_handler_thread_computes_progress_thread),
        cmocka_unit_test(test_process_paused_progress_thread),
        cmocka_unit_test(test_spinning_ult_does_not_freeze_time),
    };

    return tm_main("test_margo_clock", tests, sizeof(tests) / sizeof(tests[0]));
}
