/*
 * Argobots on pthreads: mutexes (plain, recursive, static), condition
 * variables, readers-writer locks, eventuals, futures, barriers, keys and
 * timers. ULTs run on two execution streams so that they really race.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "abt.h"

static ABT_xstream xs[2];
static ABT_pool pool; /* served by both streams */

static int
setup(void **state)
{
    (void) state;
    if (ABT_init(0, NULL) != ABT_SUCCESS ||
        ABT_pool_create_basic(ABT_POOL_FIFO_WAIT, ABT_POOL_ACCESS_MPMC,
                              ABT_TRUE, &pool) != ABT_SUCCESS)
        return -1;
    for (int i = 0; i < 2; i++)
        if (ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, 1, &pool,
                                     ABT_SCHED_CONFIG_NULL,
                                     &xs[i]) != ABT_SUCCESS)
            return -1;
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    for (int i = 0; i < 2; i++)
        if (ABT_xstream_free(&xs[i]) != ABT_SUCCESS)
            return -1;
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

enum { N = 8, ITERS = 2000 };

static void
run_n(void (*fn)(void *), void *arg)
{
    ABT_thread t[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(
            ABT_thread_create(pool, fn, arg, ABT_THREAD_ATTR_NULL, &t[i]),
            ABT_SUCCESS);
    assert_int_equal(ABT_thread_free_many(N, t), ABT_SUCCESS);
}

/* ---- mutexes ------------------------------------------------------------- */

struct counted {
    ABT_mutex m;
    long count; /* guarded by m */
};

static void
locked_add_ult(void *arg)
{
    struct counted *c = arg;
    for (int i = 0; i < ITERS; i++) {
        ABT_mutex_lock(c->m);
        c->count++;
        ABT_mutex_unlock(c->m);
    }
}

static void
test_mutex_counts(void **state)
{
    (void) state;
    struct counted c = {0};
    assert_int_equal(ABT_mutex_create(&c.m), ABT_SUCCESS);
    run_n(locked_add_ult, &c);
    assert_int_equal(c.count, (long) N * ITERS);
    assert_int_equal(ABT_mutex_free(&c.m), ABT_SUCCESS);
    assert_null(c.m);
    assert_int_equal(ABT_mutex_free(&c.m), ABT_ERR_INV_MUTEX);
    assert_int_equal(ABT_mutex_lock(ABT_MUTEX_NULL), ABT_ERR_INV_MUTEX);
}

static ABT_mutex_memory static_mutex = ABT_MUTEX_INITIALIZER;

static void
test_mutex_static(void **state)
{
    (void) state;
    struct counted c = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_mutex), 0};
    run_n(locked_add_ult, &c);
    assert_int_equal(c.count, (long) N * ITERS);
    /* Static memory is not freed. */
    assert_int_equal(ABT_mutex_free(&c.m), ABT_ERR_INV_MUTEX);
}

struct try_args {
    ABT_mutex m;
    int ret;
};

static void *
try_from_other_thread(void *arg)
{
    struct try_args *a = arg;
    a->ret = ABT_mutex_trylock(a->m);
    if (a->ret == ABT_SUCCESS)
        ABT_mutex_unlock(a->m);
    return NULL;
}

static int
trylock_elsewhere(ABT_mutex m)
{
    struct try_args a = {m, -1};
    pthread_t tid;
    pthread_create(&tid, NULL, try_from_other_thread, &a);
    pthread_join(tid, NULL);
    return a.ret;
}

static ABT_mutex_memory static_rec = ABT_RECURSIVE_MUTEX_INITIALIZER;

static void
test_mutex_trylock_recursive(void **state)
{
    (void) state;
    ABT_mutex m;
    ABT_mutex_attr attr;
    ABT_bool rec = ABT_FALSE;
    ABT_mutex_create(&m);
    assert_int_equal(ABT_mutex_trylock(m), ABT_SUCCESS);
    assert_int_equal(trylock_elsewhere(m), ABT_ERR_MUTEX_LOCKED);
    assert_int_equal(ABT_mutex_trylock(m), ABT_ERR_MUTEX_LOCKED);
    assert_int_equal(ABT_mutex_unlock(m), ABT_SUCCESS);
    assert_int_equal(trylock_elsewhere(m), ABT_SUCCESS);
    assert_int_equal(ABT_mutex_get_attr(m, &attr), ABT_SUCCESS);
    ABT_mutex_attr_get_recursive(attr, &rec);
    assert_int_equal(rec, ABT_FALSE);
    ABT_mutex_attr_free(&attr);
    ABT_mutex_free(&m);

    assert_int_equal(ABT_mutex_attr_create(&attr), ABT_SUCCESS);
    assert_int_equal(ABT_mutex_attr_set_recursive(attr, ABT_TRUE), ABT_SUCCESS);
    assert_int_equal(ABT_mutex_attr_get_recursive(attr, &rec), ABT_SUCCESS);
    assert_int_equal(rec, ABT_TRUE);
    assert_int_equal(ABT_mutex_create_with_attr(attr, &m), ABT_SUCCESS);
    assert_int_equal(ABT_mutex_attr_free(&attr), ABT_SUCCESS);
    ABT_mutex handles[2] = {m, ABT_MUTEX_MEMORY_GET_HANDLE(&static_rec)};
    for (int i = 0; i < 2; i++) {
        ABT_mutex r = handles[i];
        assert_int_equal(ABT_mutex_lock(r), ABT_SUCCESS);
        assert_int_equal(ABT_mutex_lock_high(r), ABT_SUCCESS);
        assert_int_equal(ABT_mutex_trylock(r), ABT_SUCCESS);
        assert_int_equal(trylock_elsewhere(r), ABT_ERR_MUTEX_LOCKED);
        assert_int_equal(ABT_mutex_unlock(r), ABT_SUCCESS);
        assert_int_equal(ABT_mutex_unlock_se(r), ABT_SUCCESS);
        assert_int_equal(trylock_elsewhere(r), ABT_ERR_MUTEX_LOCKED);
        assert_int_equal(ABT_mutex_unlock_de(r), ABT_SUCCESS);
        assert_int_equal(trylock_elsewhere(r), ABT_SUCCESS);
        assert_int_equal(ABT_mutex_lock_low(r), ABT_SUCCESS);
        assert_int_equal(ABT_mutex_spinlock(r), ABT_SUCCESS);
        ABT_mutex_unlock(r);
        ABT_mutex_unlock(r);
        /* Unlocking a mutex one does not hold is refused. */
        assert_int_equal(ABT_mutex_unlock(r), ABT_ERR_MUTEX);
    }
    ABT_bool eq;
    ABT_mutex_equal(handles[0], handles[1], &eq);
    assert_int_equal(eq, ABT_FALSE);
    ABT_mutex_equal(m, m, &eq);
    assert_int_equal(eq, ABT_TRUE);
    ABT_mutex_free(&m);
}

/* ---- condition variables ------------------------------------------------- */

struct queue {
    ABT_mutex m;
    ABT_cond c;
    int items; /* guarded by m */
    int taken; /* guarded by m */
};

static void
consumer_ult(void *arg)
{
    struct queue *q = arg;
    ABT_mutex_lock(q->m);
    while (q->items == 0)
        ABT_cond_wait(q->c, q->m);
    q->items--;
    q->taken++;
    ABT_mutex_unlock(q->m);
}

static void
test_cond_signal_broadcast(void **state)
{
    (void) state;
    struct queue q = {0};
    ABT_thread t[N];
    assert_int_equal(ABT_mutex_create(&q.m), ABT_SUCCESS);
    assert_int_equal(ABT_cond_create(&q.c), ABT_SUCCESS);
    for (int i = 0; i < N; i++)
        ABT_thread_create(pool, consumer_ult, &q, ABT_THREAD_ATTR_NULL, &t[i]);
    /* One item per signal. */
    for (int i = 0; i < N / 2; i++) {
        ABT_mutex_lock(q.m);
        q.items++;
        assert_int_equal(ABT_cond_signal(q.c), ABT_SUCCESS);
        ABT_mutex_unlock(q.m);
    }
    /* The rest at once. */
    ABT_mutex_lock(q.m);
    q.items += N - N / 2;
    assert_int_equal(ABT_cond_broadcast(q.c), ABT_SUCCESS);
    ABT_mutex_unlock(q.m);
    ABT_thread_free_many(N, t);
    assert_int_equal(q.taken, N);
    assert_int_equal(q.items, 0);

    /* A deadline in the past times out without waiting. */
    struct timespec past = {0, 0};
    ABT_mutex_lock(q.m);
    assert_int_equal(ABT_cond_timedwait(q.c, q.m, &past),
                     ABT_ERR_COND_TIMEDOUT);
    ABT_mutex_unlock(q.m);
    assert_int_equal(ABT_cond_wait(ABT_COND_NULL, q.m), ABT_ERR_INV_COND);
    ABT_cond_free(&q.c);
    assert_null(q.c);
    ABT_mutex_free(&q.m);
}

static ABT_cond_memory static_cond = ABT_COND_INITIALIZER;
static ABT_mutex_memory static_cond_mutex = ABT_MUTEX_INITIALIZER;

static void
test_cond_static(void **state)
{
    (void) state;
    struct queue q = {ABT_MUTEX_MEMORY_GET_HANDLE(&static_cond_mutex),
                      ABT_COND_MEMORY_GET_HANDLE(&static_cond), 0, 0};
    ABT_thread t;
    ABT_thread_create(pool, consumer_ult, &q, ABT_THREAD_ATTR_NULL, &t);
    ABT_mutex_lock(q.m);
    q.items = 1;
    ABT_cond_signal(q.c);
    ABT_mutex_unlock(q.m);
    ABT_thread_free(&t);
    assert_int_equal(q.taken, 1);
    assert_int_equal(ABT_cond_free(&q.c), ABT_ERR_INV_COND);
}

/* ---- readers-writer locks ------------------------------------------------ */

struct rw_state {
    ABT_rwlock rw;
    ABT_barrier both_readers;
    long value;
};

static void
reader_ult(void *arg)
{
    struct rw_state *s = arg;
    ABT_rwlock_rdlock(s->rw);
    /* Both readers get here together: shared mode really is shared. */
    ABT_barrier_wait(s->both_readers);
    ABT_rwlock_unlock(s->rw);
}

static void
writer_ult(void *arg)
{
    struct rw_state *s = arg;
    for (int i = 0; i < ITERS; i++) {
        ABT_rwlock_wrlock(s->rw);
        s->value++;
        ABT_rwlock_unlock(s->rw);
    }
}

static void
test_rwlock(void **state)
{
    (void) state;
    struct rw_state s = {0};
    ABT_thread r[2];
    assert_int_equal(ABT_rwlock_create(&s.rw), ABT_SUCCESS);
    ABT_barrier_create(2, &s.both_readers);
    for (int i = 0; i < 2; i++)
        ABT_thread_create(pool, reader_ult, &s, ABT_THREAD_ATTR_NULL, &r[i]);
    ABT_thread_free_many(2, r);
    run_n(writer_ult, &s);
    assert_int_equal(s.value, (long) N * ITERS);
    ABT_barrier_free(&s.both_readers);
    assert_int_equal(ABT_rwlock_free(&s.rw), ABT_SUCCESS);
    assert_null(s.rw);
    assert_int_equal(ABT_rwlock_rdlock(ABT_RWLOCK_NULL), ABT_ERR_INV_RWLOCK);
}

/* ---- eventuals ----------------------------------------------------------- */

struct ev_args {
    ABT_eventual ev;
    int seen; /* value read after the wait */
};

static void
ev_wait_ult(void *arg)
{
    struct ev_args *a = arg;
    int *v = NULL;
    if (ABT_eventual_wait(a->ev, (void **) &v) == ABT_SUCCESS && v)
        __atomic_fetch_add(&a->seen, *v, __ATOMIC_RELAXED);
}

static void
test_eventual(void **state)
{
    (void) state;
    struct ev_args a = {NULL, 0};
    ABT_bool ready = ABT_TRUE;
    void *v = NULL;
    int val = 7;
    ABT_thread t[N];
    assert_int_equal(ABT_eventual_create(-1, &a.ev), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_eventual_create(sizeof(int), &a.ev), ABT_SUCCESS);
    assert_int_equal(ABT_eventual_test(a.ev, &v, &ready), ABT_SUCCESS);
    assert_int_equal(ready, ABT_FALSE);
    for (int i = 0; i < N; i++)
        ABT_thread_create(pool, ev_wait_ult, &a, ABT_THREAD_ATTR_NULL, &t[i]);
    assert_int_equal(ABT_eventual_set(a.ev, &val, 2 * sizeof(int)),
                     ABT_ERR_INV_EVENTUAL);
    assert_int_equal(ABT_eventual_set(a.ev, &val, sizeof(int)), ABT_SUCCESS);
    val = 99; /* the eventual holds a copy */
    ABT_thread_free_many(N, t);
    assert_int_equal(a.seen, 7 * N);
    assert_int_equal(ABT_eventual_set(a.ev, &val, sizeof(int)),
                     ABT_ERR_EVENTUAL);
    assert_int_equal(ABT_eventual_test(a.ev, &v, &ready), ABT_SUCCESS);
    assert_int_equal(ready, ABT_TRUE);
    assert_int_equal(*(int *) v, 7);
    struct timespec past = {0, 0};
    assert_int_equal(ABT_eventual_timedwait(a.ev, &v, &past), ABT_SUCCESS);
    assert_int_equal(ABT_eventual_reset(a.ev), ABT_SUCCESS);
    assert_int_equal(ABT_eventual_test(a.ev, &v, &ready), ABT_SUCCESS);
    assert_int_equal(ready, ABT_FALSE);
    assert_int_equal(ABT_eventual_timedwait(a.ev, &v, &past),
                     ABT_ERR_COND_TIMEDOUT);
    assert_int_equal(ABT_eventual_set(a.ev, &val, sizeof(int)), ABT_SUCCESS);
    assert_int_equal(ABT_eventual_wait(a.ev, &v), ABT_SUCCESS);
    assert_int_equal(*(int *) v, 99);
    assert_int_equal(ABT_eventual_free(&a.ev), ABT_SUCCESS);
    assert_null(a.ev);
    assert_int_equal(ABT_eventual_wait(ABT_EVENTUAL_NULL, NULL),
                     ABT_ERR_INV_EVENTUAL);
}

static ABT_eventual_memory static_ev = ABT_EVENTUAL_INITIALIZER;

static void
set_static_ult(void *arg)
{
    ABT_eventual_set((ABT_eventual) arg, NULL, 0);
}

static void
test_eventual_static(void **state)
{
    (void) state;
    ABT_eventual e = ABT_EVENTUAL_MEMORY_GET_HANDLE(&static_ev);
    ABT_bool ready;
    ABT_eventual_test(e, NULL, &ready);
    assert_int_equal(ready, ABT_FALSE);
    ABT_thread_create(pool, set_static_ult, e, ABT_THREAD_ATTR_NULL, NULL);
    assert_int_equal(ABT_eventual_wait(e, NULL), ABT_SUCCESS);
    assert_int_equal(ABT_eventual_free(&e), ABT_ERR_INV_EVENTUAL);
}

/* ---- futures ------------------------------------------------------------- */

static int cb_sum;

static void
future_cb(void **values)
{
    for (int i = 0; i < 3; i++)
        cb_sum += *(int *) values[i];
}

static void
test_future(void **state)
{
    (void) state;
    ABT_future f;
    ABT_bool ready;
    int vals[3] = {1, 20, 300};
    cb_sum = 0;
    assert_int_equal(ABT_future_create(3, future_cb, &f), ABT_SUCCESS);
    for (int i = 0; i < 3; i++) {
        ABT_future_test(f, &ready);
        assert_int_equal(ready, ABT_FALSE);
        assert_int_equal(ABT_future_set(f, &vals[i]), ABT_SUCCESS);
    }
    assert_int_equal(ABT_future_wait(f), ABT_SUCCESS);
    ABT_future_test(f, &ready);
    assert_int_equal(ready, ABT_TRUE);
    assert_int_equal(cb_sum, 321);
    assert_int_equal(ABT_future_set(f, &vals[0]), ABT_ERR_FUTURE);
    assert_int_equal(ABT_future_reset(f), ABT_SUCCESS);
    ABT_future_test(f, &ready);
    assert_int_equal(ready, ABT_FALSE);
    assert_int_equal(ABT_future_free(&f), ABT_SUCCESS);
    assert_null(f);
    assert_int_equal(ABT_future_wait(ABT_FUTURE_NULL), ABT_ERR_INV_FUTURE);
}

/* ---- barriers ------------------------------------------------------------ */

struct phase {
    ABT_barrier b;
    int arrived[3];
    int early; /* a ULT left a phase before everyone arrived */
};

static void
phase_ult(void *arg)
{
    struct phase *p = arg;
    for (int ph = 0; ph < 3; ph++) {
        __atomic_fetch_add(&p->arrived[ph], 1, __ATOMIC_RELAXED);
        ABT_barrier_wait(p->b);
        if (__atomic_load_n(&p->arrived[ph], __ATOMIC_RELAXED) != N)
            __atomic_store_n(&p->early, 1, __ATOMIC_RELAXED);
    }
}

static void
test_barrier(void **state)
{
    (void) state;
    struct phase p = {0};
    uint32_t n = 0;
    assert_int_equal(ABT_barrier_create(0, &p.b), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_barrier_create(2, &p.b), ABT_SUCCESS);
    assert_int_equal(ABT_barrier_reinit(p.b, N), ABT_SUCCESS);
    assert_int_equal(ABT_barrier_get_num_waiters(p.b, &n), ABT_SUCCESS);
    assert_int_equal(n, N);
    run_n(phase_ult, &p);
    assert_int_equal(p.early, 0);
    for (int ph = 0; ph < 3; ph++)
        assert_int_equal(p.arrived[ph], N);
    assert_int_equal(ABT_barrier_free(&p.b), ABT_SUCCESS);
    assert_null(p.b);
    assert_int_equal(ABT_barrier_wait(ABT_BARRIER_NULL), ABT_ERR_INV_BARRIER);
}

/* ---- keys ---------------------------------------------------------------- */

static int destroyed; /* sum of the values destroyed */

static void
key_dtor(void *value)
{
    __atomic_fetch_add(&destroyed, *(int *) value, __ATOMIC_RELAXED);
}

struct key_args {
    ABT_key key;
    int value;
    int was_null; /* the key read NULL before this ULT set it */
    int read_back;
};

static void
key_ult(void *arg)
{
    struct key_args *a = arg;
    void *v = &v;
    ABT_key_get(a->key, &v);
    a->was_null = v == NULL;
    ABT_key_set(a->key, &a->value);
    ABT_self_get_specific(a->key, &v);
    a->read_back = v ? *(int *) v : -1;
}

static void
test_keys(void **state)
{
    (void) state;
    ABT_key key;
    struct key_args a[2];
    ABT_thread t[2];
    destroyed = 0;
    assert_int_equal(ABT_key_create(key_dtor, &key), ABT_SUCCESS);
    for (int i = 0; i < 2; i++) {
        a[i] = (struct key_args){key, 10 * (i + 1), 0, 0};
        ABT_thread_create(pool, key_ult, &a[i], ABT_THREAD_ATTR_NULL, &t[i]);
    }
    for (int i = 0; i < 2; i++) {
        ABT_thread_join(t[i]);
        void *v = NULL;
        assert_int_equal(ABT_thread_get_specific(t[i], key, &v), ABT_SUCCESS);
        assert_ptr_equal(v, &a[i].value);
        assert_int_equal(a[i].was_null, 1);
        assert_int_equal(a[i].read_back, a[i].value);
    }
    assert_int_equal(destroyed, 0);
    ABT_thread_free(&t[0]);
    assert_int_equal(destroyed, 10);
    /* Overwritten from outside before the free. */
    int other = 5;
    assert_int_equal(ABT_thread_set_specific(t[1], key, &other), ABT_SUCCESS);
    ABT_thread_free(&t[1]);
    assert_int_equal(destroyed, 15);
    /* The primary ULT has its own values too. */
    void *v = &v;
    assert_int_equal(ABT_self_set_specific(key, NULL), ABT_SUCCESS);
    assert_int_equal(ABT_key_get(key, &v), ABT_SUCCESS);
    assert_null(v);
    assert_int_equal(ABT_key_free(&key), ABT_SUCCESS);
    assert_null(key);
    assert_int_equal(ABT_key_set(key, NULL), ABT_ERR_INV_KEY);
}

/* A ULT freed after its key was freed runs no destructor. */
static void
test_key_freed_first(void **state)
{
    (void) state;
    ABT_key key;
    struct key_args a = {NULL, 3, 0, 0};
    ABT_thread t;
    destroyed = 0;
    ABT_key_create(key_dtor, &key);
    a.key = key;
    ABT_thread_create(pool, key_ult, &a, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_join(t);
    ABT_key_free(&key);
    ABT_thread_free(&t);
    assert_int_equal(destroyed, 0);
}

/* ---- timers -------------------------------------------------------------- */

static void
test_timer(void **state)
{
    (void) state;
    ABT_timer t, d;
    double secs = -1, sum = 1.0, oh = -1;
    assert_int_equal(ABT_timer_create(&t), ABT_SUCCESS);
    assert_int_equal(ABT_timer_start(t), ABT_SUCCESS);
    assert_int_equal(ABT_timer_stop(t), ABT_SUCCESS);
    assert_int_equal(ABT_timer_read(t, &secs), ABT_SUCCESS);
    assert_true(secs >= 0);
    assert_int_equal(ABT_timer_dup(t, &d), ABT_SUCCESS);
    double secs2;
    ABT_timer_read(d, &secs2);
    assert_true(secs2 == secs);
    assert_int_equal(ABT_timer_stop_and_read(t, &secs), ABT_SUCCESS);
    assert_true(secs >= 0);
    assert_int_equal(ABT_timer_stop_and_add(t, &sum), ABT_SUCCESS);
    assert_true(sum >= 1.0);
    assert_int_equal(ABT_timer_get_overhead(&oh), ABT_SUCCESS);
    assert_true(oh >= 0);
    assert_int_equal(ABT_timer_free(&t), ABT_SUCCESS);
    assert_null(t);
    ABT_timer_free(&d);
    assert_int_equal(ABT_timer_start(ABT_TIMER_NULL), ABT_ERR_INV_TIMER);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_mutex_counts),
        T(test_mutex_static),
        T(test_mutex_trylock_recursive),
        T(test_cond_signal_broadcast),
        T(test_cond_static),
        T(test_rwlock),
        T(test_eventual),
        T(test_eventual_static),
        T(test_future),
        T(test_barrier),
        T(test_keys),
        T(test_key_freed_first),
        T(test_timer),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
