/*
 * Argobots' execution model: the ULTs of one execution stream run one at
 * a time, in their pools' order, and switch only at yield points. Real
 * Mochi code relies on it (Yokan's per-item callbacks on the progress
 * pool share unlocked state), so every case here shares plain, unlocked
 * variables between ULTs of one stream and checks that:
 *
 * - a yield-free critical section never overlaps another ULT's (an "in
 *   critical section" flag, a read-modify-write with sched_yield() in the
 *   middle to give a concurrent pthread every chance to interleave);
 * - ULTs start in creation order, higher-priority pools first;
 * - a ULT that blocks (eventual, join, mutex, barrier, yield) lets the next ULT
 * in pool order run, and gets the stream back without overlapping anyone.
 *
 * The stream has one pool and one worker; blocking makes it start spare
 * pthreads, which must never run ULT code at the same time.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "abt.h"
#include "abt_test_stream.h"

enum { N = 16, ROUNDS = 50 };

static ABT_xstream xs;
static ABT_pool pool;

/* The shared, unlocked state. */
static int in_cs;
static int overlaps;
static long counter;
static int order[4 * N];
static int norder;

static void
long_critical_section(int rounds)
{
    if (in_cs)
        overlaps++;
    in_cs = 1;
    for (int r = 0; r < rounds; r++) {
        long v = counter;
        sched_yield(); /* an OS yield, not an Argobots yield point */
        counter = v + 1;
    }
    in_cs = 0;
}

static void
critical_section(void)
{
    long_critical_section(ROUNDS);
}

static void
record(int v)
{
    if (norder < (int) (sizeof(order) / sizeof(order[0])))
        order[norder++] = v;
}

static void
reset_state(void)
{
    in_cs = 0;
    overlaps = 0;
    counter = 0;
    norder = 0;
    memset(order, 0, sizeof(order));
}

static int
setup(void **state)
{
    (void) state;
    return abt_test_stream_setup(&pool, &xs);
}

static int
teardown(void **state)
{
    (void) state;
    if (ABT_xstream_free(&xs) != ABT_SUCCESS ||
        ABT_pool_free(&pool) != ABT_SUCCESS)
        return -1;
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

/* Runs fn(i) for i < n as ULTs created on the stream's pool by a ULT of
 * that stream, which then joins them (Yokan's back-RPC handlers). */
struct fan {
    void (*fn)(void *);
    int n;
};

static void
fan_out(void *arg)
{
    struct fan *f = arg;
    ABT_thread t[N];
    for (int i = 0; i < f->n; i++)
        assert_int_equal(ABT_thread_create(pool, f->fn, (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    /* Nothing has run yet: this ULT still has the stream. */
    assert_int_equal(norder, 0);
    for (int i = 0; i < f->n; i++)
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
}

static void
run_fan(void (*fn)(void *))
{
    struct fan f = {fn, N};
    ABT_thread h;
    reset_state();
    assert_int_equal(
        ABT_thread_create(pool, fan_out, &f, ABT_THREAD_ATTR_NULL, &h),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&h), ABT_SUCCESS);
}

/* ---- no blocking: one at a time, in creation order ----------------------- */

static void
plain_item(void *arg)
{
    record((int) (intptr_t) arg);
    critical_section();
}

static void
test_creation_order(void **state)
{
    (void) state;
    run_fan(plain_item);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, (long) N * ROUNDS);
    assert_int_equal(norder, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], i);
}

/* ---- blocking on an eventual in the middle --------------------------------
 */

static ABT_eventual evs[N];

/* Item i waits for item i+1 to set its eventual (the last one sets its
 * own): every item blocks at once, so the stream runs them on spares. */
static void
eventual_item(void *arg)
{
    int i = (int) (intptr_t) arg;
    record(i);
    critical_section();
    if (i + 1 < N)
        assert_int_equal(ABT_eventual_wait(evs[i], NULL), ABT_SUCCESS);
    critical_section();
    if (i > 0)
        assert_int_equal(ABT_eventual_set(evs[i - 1], NULL, 0), ABT_SUCCESS);
    /* Long enough for item i - 1's pthread to wake up meanwhile: it must
     * not run before this ULT ends. */
    long_critical_section(10 * ROUNDS);
}

static void
test_eventual_no_overlap(void **state)
{
    (void) state;
    for (int i = 0; i < N; i++)
        assert_int_equal(ABT_eventual_create(0, &evs[i]), ABT_SUCCESS);
    run_fan(eventual_item);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, 12L * N * ROUNDS);
    for (int i = 0; i < N; i++) {
        assert_int_equal(order[i], i);
        assert_int_equal(ABT_eventual_free(&evs[i]), ABT_SUCCESS);
    }
}

/* ---- a barrier: released in the order they arrived ------------------------
 */

static ABT_barrier barrier;

/* Every item but the last blocks at the barrier; the last one passes it
 * without a yield point and ends, then the others resume in the order
 * they arrived, one at a time. */
static void
barrier_item(void *arg)
{
    int i = (int) (intptr_t) arg;
    record(i);
    critical_section();
    assert_int_equal(ABT_barrier_wait(barrier), ABT_SUCCESS);
    record(N + i);
    long_critical_section(4 * ROUNDS);
}

static void
test_barrier_order(void **state)
{
    (void) state;
    assert_int_equal(ABT_barrier_create(N, &barrier), ABT_SUCCESS);
    run_fan(barrier_item);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, 5L * N * ROUNDS);
    assert_int_equal(norder, 2 * N);
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], i);
    assert_int_equal(order[N], 2 * N - 1);
    for (int i = 0; i + 1 < N; i++)
        assert_int_equal(order[N + 1 + i], N + i);
    assert_int_equal(ABT_barrier_free(&barrier), ABT_SUCCESS);
}

/* ---- yield: back to the pool's tail ---------------------------------------
 */

static void
yield_item(void *arg)
{
    int i = (int) (intptr_t) arg;
    record(i);
    critical_section();
    assert_int_equal(ABT_thread_yield(), ABT_SUCCESS);
    record(N + i);
    critical_section();
}

static void
test_yield_round_robin(void **state)
{
    (void) state;
    run_fan(yield_item);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, 2L * N * ROUNDS);
    /* Argobots: every item runs to its yield, in order, then every item
     * resumes, in the order it yielded. */
    assert_int_equal(norder, 2 * N);
    for (int i = 0; i < 2 * N; i++)
        assert_int_equal(order[i], i);
}

/* ---- a contended mutex is a yield point -----------------------------------
 */

static ABT_mutex mtx;

static void
mutex_item(void *arg)
{
    int i = (int) (intptr_t) arg;
    record(i);
    critical_section();
    assert_int_equal(ABT_mutex_lock(mtx), ABT_SUCCESS);
    critical_section();
    /* Holding the mutex across a yield makes the others contend. */
    assert_int_equal(ABT_thread_yield(), ABT_SUCCESS);
    critical_section();
    assert_int_equal(ABT_mutex_unlock(mtx), ABT_SUCCESS);
    critical_section();
}

static void
test_mutex_no_overlap(void **state)
{
    (void) state;
    assert_int_equal(ABT_mutex_create(&mtx), ABT_SUCCESS);
    run_fan(mutex_item);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, 4L * N * ROUNDS);
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], i);
    assert_int_equal(ABT_mutex_free(&mtx), ABT_SUCCESS);
}

/* ---- pools in priority order ----------------------------------------------
 */

static ABT_pool hi, lo;

static void
prio_item(void *arg)
{
    record((int) (intptr_t) arg);
    critical_section();
}

static void
prio_creator(void *arg)
{
    (void) arg;
    ABT_thread t[8];
    /* Low-priority first, then high: the high ones must run first. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(ABT_thread_create(lo, prio_item,
                                           (void *) (intptr_t) (4 + i),
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ABT_thread_create(hi, prio_item, (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, &t[4 + i]),
                         ABT_SUCCESS);
    for (int i = 0; i < 8; i++)
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
}

static void
test_pool_priority(void **state)
{
    (void) state;
    ABT_xstream x2;
    ABT_thread c;
    ABT_pool pools[2];
    reset_state();
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &hi),
                     ABT_SUCCESS);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &lo),
                     ABT_SUCCESS);
    pools[0] = hi;
    pools[1] = lo;
    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_BASIC, 2, pools,
                                              ABT_SCHED_CONFIG_NULL, &x2),
                     ABT_SUCCESS);
    assert_int_equal(
        ABT_thread_create(lo, prio_creator, NULL, ABT_THREAD_ATTR_NULL, &c),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&c), ABT_SUCCESS);
    assert_int_equal(overlaps, 0);
    assert_int_equal(norder, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(order[i], i);
    assert_int_equal(ABT_xstream_free(&x2), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&hi), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&lo), ABT_SUCCESS);
}

/* ---- the primary stream ---------------------------------------------------
 */

static void
primary_item(void *arg)
{
    record((int) (intptr_t) arg);
    critical_section();
}

/* Work pushed to the primary pool waits while the primary thread runs its
 * own code, and runs, in order, when the primary thread blocks. */
static void
test_primary_pool(void **state)
{
    (void) state;
    ABT_xstream self;
    ABT_pool main_pool;
    ABT_thread t[4];
    reset_state();
    assert_int_equal(ABT_xstream_self(&self), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_get_main_pools(self, 1, &main_pool),
                     ABT_SUCCESS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ABT_thread_create(main_pool, primary_item,
                                           (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    /* Yield-free code of the primary ULT: nothing else of its stream runs,
     * so this critical section sees the state as it left it. */
    critical_section();
    assert_int_equal(norder, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
    assert_int_equal(overlaps, 0);
    assert_int_equal(counter, 5L * ROUNDS);
    for (int i = 0; i < 4; i++)
        assert_int_equal(order[i], i);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creation_order),
        cmocka_unit_test(test_eventual_no_overlap),
        cmocka_unit_test(test_barrier_order),
        cmocka_unit_test(test_yield_round_robin),
        cmocka_unit_test(test_mutex_no_overlap),
        cmocka_unit_test(test_pool_priority),
        cmocka_unit_test(test_primary_pool),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
