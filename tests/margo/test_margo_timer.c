/*
 * Timers (margo-timer.h): fire once after their timeout on the fabric
 * clock (virtual on the simulator: a 10 s timer there takes no real time),
 * cancel, cancel_many, destroy, re-arm from the callback, and callbacks on
 * handler threads.
 */
#include "tm.h"

#include <margo-timer.h>

#include <stdatomic.h>

struct tt_count {
    atomic_int fired;
    uint64_t fired_at; /* NA clock */
    margo_instance_id mid;
    margo_timer_t self; /* re-armed from the callback while rearm > 0 */
    int rearm;
};

static void
tt_cb(void *arg)
{
    struct tt_count *c = arg;

    c->fired_at = HG_Clock_now(margo_get_class(c->mid));
    atomic_fetch_add(&c->fired, 1);
    if (c->rearm > 0) {
        c->rearm--;
        margo_timer_start(c->self, 10);
    }
}

static margo_instance_id
tt_init(int pt, int rt)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), "timer");
    mid = margo_init(addr, MARGO_SERVER_MODE, pt, rt);
    assert_non_null(mid);
    return mid;
}

/* Sleep on the fabric clock until the counter reaches `want` (bounded). */
static void
tt_wait_fired(margo_instance_id mid, struct tt_count *c, int want)
{
    for (int i = 0; i < 2000 && atomic_load(&c->fired) < want; i++)
        margo_thread_sleep(mid, 5);
    /* Callbacks on a pool's workers run in real time, which on the
     * simulator is not tied to the virtual clock. */
    while (atomic_load(&c->fired) < want)
        margo_thread_sleep(mid, 1);
    assert_int_equal(atomic_load(&c->fired), want);
}

static void
tt_fires_once(int pt, int rt)
{
    margo_instance_id mid = tt_init(pt, rt);
    struct tt_count c = {0};
    double ms = tm_is_sim() ? 10000 : 30;
    margo_timer_t t;
    uint64_t start, r0 = tm_real_ns();

    c.mid = mid;
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t), 0);
    start = HG_Clock_now(margo_get_class(mid));
    assert_int_equal(margo_timer_start(t, ms), 0);
    assert_int_equal(margo_timer_start(t, ms), -1); /* already armed */
    margo_thread_sleep(mid, ms / 2);
    /* Not early. On the simulator without a progress thread the clock
     * moves only inside this thread's Margo calls, so at half-time nothing
     * has fired. With a progress thread (or on a real clock) time also
     * passes while this thread is between calls: an idle progress thread
     * moves the simulator's clock in 100 ms slices whenever no sleeper
     * holds it back, so if this thread is descheduled between
     * margo_timer_start() and margo_thread_sleep() the deadline can pass
     * before the sleep begins (seed 1364412749 under load). The timer may
     * then have fired, but never before its deadline. */
    if (tm_is_sim() && pt == 0)
        assert_int_equal(atomic_load(&c.fired), 0);
    else if (atomic_load(&c.fired) != 0)
        assert_true(c.fired_at - start >= (uint64_t) (ms * 1e6));
    tt_wait_fired(mid, &c, 1);
    assert_true(c.fired_at - start >= (uint64_t) (ms * 1e6));
    if (tm_is_sim())
        assert_true(tm_real_ns() - r0 < 3000000000ull);
    /* Once only. */
    margo_thread_sleep(mid, ms);
    assert_int_equal(atomic_load(&c.fired), 1);
    assert_int_equal(margo_timer_destroy(t), 0);
    margo_finalize(mid);
}

static void
test_timer_fires(void **state)
{
    (void) state;
    tt_fires_once(0, 0);
    tt_fires_once(1, 0);
    tt_fires_once(1, 2);
    tt_fires_once(0, -1);
}

static void
test_timer_cancel(void **state)
{
    margo_instance_id mid = tt_init(0, 0);
    struct tt_count c = {0}, d = {0}, e = {0};
    margo_timer_t t[3];

    (void) state;
    c.mid = d.mid = e.mid = mid;
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t[0]), 0);
    assert_int_equal(
        margo_timer_create_with_pool(mid, tt_cb, &d, ABT_POOL_NULL, &t[1]), 0);
    assert_int_equal(margo_timer_create(mid, tt_cb, &e, &t[2]), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(margo_timer_start(t[i], 20 + 10 * i), 0);
    assert_int_equal(margo_timer_cancel(t[0]), 0);
    assert_int_equal(margo_timer_cancel_many(2, &t[1]), 0);
    margo_thread_sleep(mid, 100);
    assert_int_equal(atomic_load(&c.fired) + atomic_load(&d.fired) +
                         atomic_load(&e.fired),
                     0);
    /* A cancelled timer can be started again. */
    assert_int_equal(margo_timer_start(t[1], 10), 0);
    tt_wait_fired(mid, &d, 1);
    /* As in Margo, destroying an armed timer does not disarm it: it fires,
     * then is freed (the AddressSanitizer build checks the latter). */
    assert_int_equal(margo_timer_start(t[2], 10), 0);
    assert_int_equal(margo_timer_destroy(t[2]), 0);
    tt_wait_fired(mid, &e, 1);
    assert_int_equal(margo_timer_destroy(t[0]), 0);
    assert_int_equal(margo_timer_destroy(t[1]), 0);
    assert_int_equal(margo_timer_cancel(MARGO_TIMER_NULL), -1);
    assert_int_equal(margo_timer_destroy(MARGO_TIMER_NULL), -1);
    assert_int_equal(margo_timer_create(MARGO_INSTANCE_NULL, tt_cb, &c, &t[0]),
                     -1);
    margo_finalize(mid);
}

/* A callback that sleeps longer than the thread that let it run. */
static void
tt_sleepy_cb(void *arg)
{
    struct tt_count *c = arg;

    atomic_fetch_add(&c->fired, 1);
    margo_thread_sleep(c->mid, 1000);
    c->fired_at = HG_Clock_now(margo_get_class(c->mid));
}

/*
 * A timer's callback on the default pool (the primary pool here) that
 * sleeps 1 s does not hold up the main thread's own 200 ms sleep: as in
 * Margo, the callback is a ULT of its own, so the main thread wakes at
 * 200 ms and cancels a 500 ms timer before it fires; cancelling the
 * sleeping callback's timer waits for the callback to end.
 */
static void
test_timer_sleeping_callback(void **state)
{
    margo_instance_id mid = tt_init(0, 0);
    hg_class_t *cls = margo_get_class(mid);
    struct tt_count slow = {0}, late = {0};
    margo_timer_t t[2];
    uint64_t start, woke;

    (void) state;
    slow.mid = late.mid = mid;
    assert_int_equal(margo_timer_create(mid, tt_sleepy_cb, &slow, &t[0]), 0);
    assert_int_equal(margo_timer_create(mid, tt_cb, &late, &t[1]), 0);
    start = HG_Clock_now(cls);
    assert_int_equal(margo_timer_start(t[0], 100), 0);
    assert_int_equal(margo_timer_start(t[1], 500), 0);
    margo_thread_sleep(mid, 200);
    woke = HG_Clock_now(cls);
    assert_int_equal(atomic_load(&slow.fired), 1);
    assert_int_equal(margo_timer_cancel_many(2, t), 0);
    assert_int_equal(atomic_load(&late.fired), 0);
    if (tm_is_sim()) {
        /* On the virtual clock: woke before the callback's sleep ended. */
        assert_true(woke - start < 500000000u);
        assert_true(slow.fired_at - start >= 1100000000u);
    }
    assert_int_equal(margo_timer_destroy(t[0]), 0);
    assert_int_equal(margo_timer_destroy(t[1]), 0);
    margo_finalize(mid);
}

static void
test_timer_rearm_from_callback(void **state)
{
    margo_instance_id mid = tt_init(0, 0);
    struct tt_count c = {0};

    (void) state;
    c.mid = mid;
    c.rearm = 4;
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &c.self), 0);
    assert_int_equal(margo_timer_start(c.self, 10), 0);
    tt_wait_fired(mid, &c, 5);
    assert_int_equal(margo_timer_destroy(c.self), 0);
    margo_finalize(mid);
}

/* A timer still armed at finalize never fires; destroying it afterwards
 * is allowed. No progress thread: an idle one would move the simulator's
 * clock while this thread is between margo_timer_start() and
 * margo_finalize(), and the timer could legitimately fire first. */
static void
test_timer_outlives_instance(void **state)
{
    margo_instance_id mid = tt_init(0, 0);
    struct tt_count c = {0};
    margo_timer_t t;

    (void) state;
    c.mid = mid;
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t), 0);
    assert_int_equal(margo_timer_start(t, 60000), 0);
    margo_finalize(mid);
    assert_int_equal(atomic_load(&c.fired), 0);
    assert_int_equal(margo_timer_start(t, 1), -1);
    assert_int_equal(margo_timer_destroy(t), 0);
}

/* Timers left in every state at finalize (never started, armed, expired
 * and queued, on the handler pool and on a pool of their own) belong to
 * the program, which destroys them afterwards: nothing may leak (the
 * AddressSanitizer build checks) and none fires after finalize. */
static void
test_timer_pending_at_finalize_freed(void **state)
{
    const char *json = "{\"argobots\":{\"pools\":[{\"name\":\"tp\"}],"
                       "\"xstreams\":[{\"name\":\"tx\",\"scheduler\":"
                       "{\"pools\":[\"tp\"]}}]}}";
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    struct tt_count c = {0};
    margo_instance_id mid;
    margo_timer_t t[5], destroyed;
    struct margo_pool_info pinfo;
    ABT_pool pool;
    char addr[64];

    (void) state;
    info.json_config = json;
    tm_addr_for(addr, sizeof(addr), "timer-fin");
    mid = margo_init_ext(addr, MARGO_SERVER_MODE, &info);
    assert_non_null(mid);
    assert_hg_ok(margo_find_pool_by_name(mid, "tp", &pinfo));
    pool = pinfo.pool;
    c.mid = mid;
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t[0]), 0);
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t[1]), 0);
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &t[2]), 0);
    assert_int_equal(margo_timer_create_with_pool(mid, tt_cb, &c, pool, &t[3]),
                     0);
    assert_int_equal(margo_timer_create_with_pool(mid, tt_cb, &c, pool, &t[4]),
                     0);
    assert_int_equal(margo_timer_start(t[1], 600000), 0);
    assert_int_equal(margo_timer_start(t[2], 0), 0);
    assert_int_equal(margo_timer_start(t[3], 0), 0);
    assert_int_equal(margo_timer_start(t[4], 600000), 0);
    /* Destroyed while armed: finalize frees it (it never fires). */
    assert_int_equal(margo_timer_create(mid, tt_cb, &c, &destroyed), 0);
    assert_int_equal(margo_timer_start(destroyed, 600000), 0);
    assert_int_equal(margo_timer_destroy(destroyed), 0);
    margo_finalize(mid);
    int fired = atomic_load(&c.fired);
    assert_true(fired <= 2); /* only the two expired ones, if at all */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(margo_timer_start(t[i], 0), -1);
        assert_int_equal(margo_timer_cancel(t[i]), 0);
        assert_int_equal(margo_timer_destroy(t[i]), 0);
    }
    assert_int_equal(atomic_load(&c.fired), fired);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timer_fires),
        cmocka_unit_test(test_timer_cancel),
        cmocka_unit_test(test_timer_sleeping_callback),
        cmocka_unit_test(test_timer_rearm_from_callback),
        cmocka_unit_test(test_timer_outlives_instance),
        cmocka_unit_test(test_timer_pending_at_finalize_freed),
    };

    return tm_main("margo_timer", tests, sizeof(tests) / sizeof(tests[0]));
}
