/*
 * Argobots' guarantee that blocking never starves a pool: a ULT blocked in
 * a synchronization call keeps its worker pthread but hands its stream's
 * token on, and a stream whose workers are all blocked while its pools
 * hold work starts a spare worker, so the work that would unblock them
 * still runs. Every case puts
 * all its ULTs on ONE stream with one worker and makes the early ULTs wait
 * for the late ones; without spare workers each one hangs forever. After
 * the run the stream shrinks back to one worker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "abt.h"
#include "abt_test_stream.h"
#include "abt/abt_internal.h"

enum { N = 8 };

static ABT_xstream xs;
static ABT_pool pool;

static int
setup(void **state)
{
    (void) state;
    return abt_test_stream_setup(&pool, &xs);
}

/* Waits (on the stream's done condition, no clock) until the spares have
 * exited, then checks the stream grew during the case and stops it. */
static int
teardown(void **state)
{
    (void) state;
    pthread_mutex_lock(&abt_g.lock);
    while (xs->workers > 1)
        pthread_cond_wait(&xs->done, &abt_g.lock);
    int grew = xs->spares_started > 0;
    int workers = xs->workers;
    pthread_mutex_unlock(&abt_g.lock);
    if (!grew || workers != 1)
        return -1;
    if (ABT_xstream_free(&xs) != ABT_SUCCESS ||
        ABT_pool_free(&pool) != ABT_SUCCESS)
        return -1;
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

static void
run_all(void (*fn)(void *), void *args, size_t arg_size)
{
    ABT_thread t[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(ABT_thread_create(pool, fn,
                                           (char *) args + i * arg_size,
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
}

/* ---- eventuals: ULT i waits for the eventual ULT i+1 sets --------------- */

static ABT_eventual ev[N];
static int done_count;

static void
chain_ult(void *arg)
{
    int i = *(int *) arg;
    if (i > 0)
        ABT_eventual_set(ev[i - 1], &i, sizeof(i));
    if (i < N - 1) {
        int *v = NULL;
        ABT_eventual_wait(ev[i], (void **) &v);
        if (v && *v == i + 1)
            __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
    } else {
        __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
    }
}

static void
test_eventual_chain(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++) {
        idx[i] = i;
        ABT_eventual_create(sizeof(int), &ev[i]);
    }
    done_count = 0;
    run_all(chain_ult, idx, sizeof(int));
    assert_int_equal(done_count, N);
    for (int i = 0; i < N; i++)
        ABT_eventual_free(&ev[i]);
}

/* ---- eventuals: every ULT waits for the last one (all blocked at once) -- */

static void
fan_in_ult(void *arg)
{
    int i = *(int *) arg;
    if (i == N - 1) {
        for (int j = 0; j < N - 1; j++)
            ABT_eventual_set(ev[j], NULL, 0);
    } else {
        ABT_eventual_wait(ev[i], NULL);
    }
    __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
}

static void
test_eventual_fan_in(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++) {
        idx[i] = i;
        ABT_eventual_create(0, &ev[i]);
    }
    done_count = 0;
    run_all(fan_in_ult, idx, sizeof(int));
    assert_int_equal(done_count, N);
    for (int i = 0; i < N; i++)
        ABT_eventual_free(&ev[i]);
}

/* ---- condition variable: waiters first, the signaller last -------------- */

static ABT_mutex mtx;
static ABT_cond cnd;
static int go;

static void
cond_ult(void *arg)
{
    int i = *(int *) arg;
    ABT_mutex_lock(mtx);
    if (i == N - 1) {
        go = 1;
        ABT_cond_broadcast(cnd);
    } else {
        while (!go)
            ABT_cond_wait(cnd, mtx);
    }
    done_count++;
    ABT_mutex_unlock(mtx);
}

static void
test_cond(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = i;
    ABT_mutex_create(&mtx);
    ABT_cond_create(&cnd);
    go = 0;
    done_count = 0;
    run_all(cond_ult, idx, sizeof(int));
    assert_int_equal(done_count, N);
    ABT_cond_free(&cnd);
    ABT_mutex_free(&mtx);
}

/* ---- mutex: ULT 0 holds it until the last ULT lets it go ----------------- */

static void
mutex_ult(void *arg)
{
    int i = *(int *) arg;
    if (i == 0) {
        ABT_mutex_lock(mtx);
        ABT_eventual_wait(ev[0], NULL);
        done_count++;
        ABT_mutex_unlock(mtx);
    } else if (i == N - 1) {
        ABT_eventual_set(ev[0], NULL, 0);
    } else {
        ABT_mutex_lock(mtx);
        done_count++;
        ABT_mutex_unlock(mtx);
    }
}

static void
test_mutex(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = i;
    ABT_mutex_create(&mtx);
    ABT_eventual_create(0, &ev[0]);
    done_count = 0;
    run_all(mutex_ult, idx, sizeof(int));
    assert_int_equal(done_count, N - 1);
    ABT_eventual_free(&ev[0]);
    ABT_mutex_free(&mtx);
}

/* ---- join: each ULT joins a ULT it creates on its own (busy) pool -------- */

static void
joiner_ult(void *arg)
{
    int depth = *(int *) arg;
    __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
    if (depth == 0)
        return;
    int next = depth - 1;
    ABT_thread child;
    ABT_thread_create(pool, joiner_ult, &next, ABT_THREAD_ATTR_NULL, &child);
    ABT_thread_free(&child);
}

static void
test_join(void **state)
{
    (void) state;
    int depth = 2 * N;
    ABT_thread t;
    done_count = 0;
    ABT_thread_create(pool, joiner_ult, &depth, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_free(&t);
    assert_int_equal(done_count, 2 * N + 1);
}

/* ---- barrier of N on one worker ------------------------------------------ */

static ABT_barrier bar;

static void
barrier_ult(void *arg)
{
    (void) arg;
    __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
    ABT_barrier_wait(bar);
    /* Everyone arrived before anyone left. */
    if (__atomic_load_n(&done_count, __ATOMIC_RELAXED) < N)
        __atomic_fetch_add(&done_count, 1000, __ATOMIC_RELAXED);
}

static void
test_barrier(void **state)
{
    (void) state;
    int idx[N];
    ABT_barrier_create(N, &bar);
    done_count = 0;
    run_all(barrier_ult, idx, sizeof(int));
    assert_int_equal(done_count, N);
    ABT_barrier_free(&bar);
}

/* ---- rwlock: a writer holds it until the last ULT releases it ------------ */

static ABT_rwlock rw;

static void
rwlock_ult(void *arg)
{
    int i = *(int *) arg;
    if (i == 0) {
        ABT_rwlock_wrlock(rw);
        ABT_eventual_wait(ev[0], NULL);
        ABT_rwlock_unlock(rw);
    } else if (i == N - 1) {
        ABT_eventual_set(ev[0], NULL, 0);
    } else {
        ABT_rwlock_rdlock(rw);
        __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
        ABT_rwlock_unlock(rw);
    }
}

static void
test_rwlock(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = i;
    ABT_rwlock_create(&rw);
    ABT_eventual_create(0, &ev[0]);
    done_count = 0;
    run_all(rwlock_ult, idx, sizeof(int));
    assert_int_equal(done_count, N - 2);
    ABT_eventual_free(&ev[0]);
    ABT_rwlock_free(&rw);
}

/* ---- yield: a ULT spins, yielding, until a ULT queued behind it ran ------ */

static int flag;

static void
spin_ult(void *arg)
{
    (void) arg;
    while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
        ABT_thread_yield();
}

static void
flag_ult(void *arg)
{
    (void) arg;
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}

static void
test_yield(void **state)
{
    (void) state;
    ABT_thread a, b;
    flag = 0;
    ABT_thread_create(pool, spin_ult, NULL, ABT_THREAD_ATTR_NULL, &a);
    ABT_thread_create(pool, flag_ult, NULL, ABT_THREAD_ATTR_NULL, &b);
    ABT_thread_free(&a);
    ABT_thread_free(&b);
    assert_int_equal(flag, 1);
}

/* ---- future: compartments set by later ULTs ------------------------------ */

static ABT_future fut;

static void
future_ult(void *arg)
{
    int i = *(int *) arg;
    if (i < N / 2)
        ABT_future_wait(fut);
    else
        ABT_future_set(fut, arg);
    __atomic_fetch_add(&done_count, 1, __ATOMIC_RELAXED);
}

static void
test_future(void **state)
{
    (void) state;
    int idx[N];
    for (int i = 0; i < N; i++)
        idx[i] = i;
    ABT_future_create(N - N / 2, NULL, &fut);
    done_count = 0;
    run_all(future_ult, idx, sizeof(int));
    assert_int_equal(done_count, N);
    ABT_future_free(&fut);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eventual_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eventual_fan_in, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cond, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barrier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rwlock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yield, setup, teardown),
        cmocka_unit_test_setup_teardown(test_future, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
