/*
 * The hot path's read-modify-writes (lib/util/qs_atomic.h): exact while
 * the process has one thread, when they load and store, and exact once
 * it has more, when they are locked (checked directly, and by two threads
 * hammering the same counters). The hot locks
 * (lib/util/qs_lock.h): skipped without threads, taken with them, and a
 * thread created inside a skipped section stops the process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/qs_atomic.h"
#include "util/qs_lock.h"

/* Increments per thread: enough that two threads on two CPUs overlap
 * for many thousands of them, so a plain load and store loses some. */
#define HAMMER_N 2000000

static atomic_uint counter_u;
static atomic_ulong counter_ul;
static atomic_int counter_cas;
static pthread_barrier_t start;

static void
test_one_thread(void **state)
{
    atomic_uint u;
    atomic_ulong ul;
    atomic_int s;
    int expected = 3;

    (void) state;
    /* Runs first, before this process makes a thread. */
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    assert_true(QS_SINGLE_THREADED());
#endif
    atomic_init(&u, 1);
    atomic_init(&ul, 0);
    atomic_init(&s, 2);
    assert_int_equal(qs_atomic_fetch_add(&u, 4, memory_order_relaxed), 1);
    assert_int_equal(qs_atomic_fetch_sub(&u, 5, memory_order_acq_rel), 5);
    assert_int_equal(atomic_load(&u), 0);
    assert_int_equal(qs_atomic_fetch_sub(&u, 1, memory_order_relaxed), 0);
    assert_int_equal(atomic_load(&u), UINT32_MAX);
    assert_int_equal(qs_atomic_fetch_add(&ul, 7, memory_order_relaxed), 0);
    assert_int_equal(atomic_load(&ul), 7);
    /* A failed exchange reports the value found and changes nothing. */
    assert_false(qs_atomic_cas_int(&s, &expected, 9, memory_order_acquire,
                                   memory_order_relaxed));
    assert_int_equal(expected, 2);
    assert_int_equal(atomic_load(&s), 2);
    assert_true(qs_atomic_cas_int(&s, &expected, 9, memory_order_acquire,
                                  memory_order_relaxed));
    assert_int_equal(atomic_load(&s), 9);
}

static void *
no_op_thread(void *arg)
{
    return arg;
}

static void
test_hot_lock_one_thread(void **state)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    uint64_t counted = qs_lock_count();
    pid_t pid;
    int status;

    (void) state;
    qs_hot_lock(&m);
    /* Skipped: the mutex is free inside the section. */
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    assert_int_equal(pthread_mutex_trylock(&m), 0);
    pthread_mutex_unlock(&m);
#endif
    qs_hot_unlock(&m);
    assert_int_equal(qs_lock_count() - counted, 1);
    /* A thread made inside a skipped section: the unlock stops the
     * process (a child, so that this one stays without threads). */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pthread_t t;

        /* A sanitizer's runtime may own a thread in the child. */
        if (!QS_SINGLE_THREADED())
            _exit(4);
        qs_hot_lock(&m);
        if (pthread_create(&t, NULL, no_op_thread, NULL) != 0 ||
            pthread_join(t, NULL) != 0)
            _exit(3);
        qs_hot_unlock(&m);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
        printf("the forked child has threads here: no section to skip\n");
        return;
    }
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
#endif
}

static void
test_hot_lock_threads(void **state)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

    (void) state;
    /* Runs after test_two_threads: taken for real now. */
    assert_false(QS_SINGLE_THREADED());
    qs_hot_lock(&m);
    assert_int_equal(pthread_mutex_trylock(&m), EBUSY);
    qs_hot_unlock(&m);
    assert_int_equal(pthread_mutex_trylock(&m), 0);
    pthread_mutex_unlock(&m);
}

static void *
hammer(void *arg)
{
    (void) arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < HAMMER_N; i++) {
        int cur = atomic_load_explicit(&counter_cas, memory_order_relaxed);

        qs_atomic_fetch_add(&counter_u, 3, memory_order_relaxed);
        qs_atomic_fetch_sub(&counter_u, 2, memory_order_relaxed);
        qs_atomic_fetch_add(&counter_ul, 1, memory_order_relaxed);
        while (!qs_atomic_cas_int(&counter_cas, &cur, cur + 1,
                                  memory_order_relaxed, memory_order_relaxed))
            ;
    }
    return NULL;
}

static void
test_two_threads(void **state)
{
    pthread_t t;

    (void) state;
    atomic_init(&counter_u, 0);
    atomic_init(&counter_ul, 0);
    atomic_init(&counter_cas, 0);
    assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
    assert_int_equal(pthread_create(&t, NULL, hammer, NULL), 0);
    assert_false(QS_SINGLE_THREADED());
    hammer(NULL);
    /* With a second thread (still running, or at least not joined), a
     * thread that owns no bias makes every read-modify-write locked:
     * exact whatever the interleaving, which the counts below show only
     * when the hammering happened to lose an update. Checked before the
     * join, so that a failure leaves no thread waiting at the barrier. */
    {
        int how = qs_atomic_plain_begin();

        qs_atomic_plain_end(how);
        assert_int_equal(how, QS_LOCKED);
    }
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&start);
    printf("counters: %u %lu %d of %d each\n", atomic_load(&counter_u),
           atomic_load(&counter_ul), atomic_load(&counter_cas), 2 * HAMMER_N);
    assert_int_equal(atomic_load(&counter_u), 2 * HAMMER_N);
    assert_int_equal(atomic_load(&counter_ul), 2 * HAMMER_N);
    assert_int_equal(atomic_load(&counter_cas), 2 * HAMMER_N);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread),
        cmocka_unit_test(test_hot_lock_one_thread),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_hot_lock_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
