/*
 * The hot path's bias (lib/util/qs_bias.h): the only thread of a process
 * takes it and keeps skipping the hot locks and locked instructions while
 * other threads exist but stay away; the first other thread that comes
 * to the hot path revokes it, waits until the owner has left the section
 * it is in, and from then on both take the locks. Each case runs in a
 * forked child, because a bias is taken once per process and only while
 * it has one thread. Skipped where no bias can be taken (ThreadSanitizer,
 * a kernel without membarrier, a sanitizer runtime's own thread).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/qs_atomic.h"
#include "util/qs_bias.h"
#include "util/qs_lock.h"

/* A child's verdicts. */
#define CHILD_OK 0
#define CHILD_NO_BIAS 77

/* Increments per thread in the read-modify-write race: enough that two
 * threads on two CPUs overlap for many thousands of them. */
#define HAMMER_N 2000000

/* Spins of the owner inside its section once the revoker has begun: long
 * enough (milliseconds) that a revoker that did not wait would be seen
 * inside the section too. */
#define OWNER_SPIN 20000000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static atomic_int owner_inside, owner_done;
static atomic_uint counter;
static pthread_barrier_t start;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);         \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

/* Run fn in a forked child and check its verdict; a child that could not
 * take the bias makes the case a skip. */
static void
in_child(void (*fn)(void))
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(CHILD_OK);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == CHILD_NO_BIAS) {
        print_message("no bias can be taken in this build or kernel\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

static void
take_bias(void)
{
    if (!QS_SINGLE_THREADED() || !qs_bias_grant())
        _exit(CHILD_NO_BIAS);
    CHECK(qs_bias_state() == QS_BIAS_HELD);
}

/* Whether qs_hot_lock() skipped m: the mutex is free inside the section
 * (a normal mutex refuses a second lock from its holder too). */
static bool
hot_lock_skips(pthread_mutex_t *mu)
{
    bool skipped;

    qs_hot_lock(mu);
    skipped = pthread_mutex_trylock(mu) == 0;
    if (skipped)
        pthread_mutex_unlock(mu);
    qs_hot_unlock(mu);
    /* Either way the mutex is free again. */
    CHECK(pthread_mutex_trylock(mu) == 0);
    pthread_mutex_unlock(mu);
    return skipped;
}

static void *
idle_thread(void *arg)
{
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&start);
    return arg;
}

/* Threads that stay away from the hot path leave the bias alone. */
static void
held_with_threads(void)
{
    pthread_t t;
    atomic_uint u;

    take_bias();
    CHECK(!qs_bias_grant()); /* once per process */
    pthread_barrier_init(&start, NULL, 2);
    CHECK(pthread_create(&t, NULL, idle_thread, NULL) == 0);
    pthread_barrier_wait(&start);
    CHECK(!QS_SINGLE_THREADED());
    CHECK(hot_lock_skips(&m));
    /* The owner's plain read-modify-writes sit in a skipped section a
     * revoker waits for, never bare. */
    {
        int how = qs_atomic_plain_begin();

        CHECK(how == QS_PLAIN_BIASED);
        qs_atomic_plain_end(how);
    }
    atomic_init(&u, 5);
    CHECK(qs_atomic_fetch_add(&u, 2, memory_order_relaxed) == 5);
    CHECK(atomic_load(&u) == 7);
    CHECK(qs_bias_state() == QS_BIAS_HELD);
    pthread_barrier_wait(&start);
    CHECK(pthread_join(t, NULL) == 0);
}

static void
test_held_with_threads(void **state)
{
    (void) state;
    in_child(held_with_threads);
}

static void *
no_op_thread(void *arg)
{
    return arg;
}

/* No bias once the process has threads, nor with QS_HOT_BIAS=0. */
static void
refused(void)
{
    pthread_t t;

    if (!QS_SINGLE_THREADED())
        _exit(CHILD_NO_BIAS);
    setenv("QS_HOT_BIAS", "0", 1);
    CHECK(!qs_bias_grant());
    unsetenv("QS_HOT_BIAS");
    CHECK(pthread_create(&t, NULL, no_op_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(!qs_bias_grant());
    CHECK(qs_bias_state() == QS_BIAS_NONE);
    CHECK(!hot_lock_skips(&m));
}

static void
test_refused(void **state)
{
    (void) state;
    in_child(refused);
}

/* The revoker comes while the owner is inside a skipped section: its own
 * lock returns only after the owner has left it. */
static void *
revoker_thread(void *arg)
{
    while (!atomic_load(&owner_inside))
        ;
    qs_hot_lock(&m);
    /* The owner finished its section before this one began. */
    if (!atomic_load(&owner_done))
        arg = (void *) 1;
    qs_hot_unlock(&m);
    return arg;
}

static void
revoke_waits(void)
{
    pthread_t t;
    void *ret;
    volatile unsigned long spin = 0;

    take_bias();
    CHECK(pthread_create(&t, NULL, revoker_thread, NULL) == 0);
    qs_hot_lock(&m);
    CHECK(pthread_mutex_trylock(&m) == 0); /* skipped */
    pthread_mutex_unlock(&m);
    atomic_store(&owner_inside, 1);
    while (qs_bias_state() == QS_BIAS_HELD)
        ;
    CHECK(qs_bias_state() == QS_BIAS_REVOKING);
    /* Still inside: a nested acquisition stays skipped, and its release
     * leaves the mutex free. */
    qs_hot_lock(&m2);
    CHECK(pthread_mutex_trylock(&m2) == 0);
    pthread_mutex_unlock(&m2);
    qs_hot_unlock(&m2);
    for (unsigned long i = 0; i < OWNER_SPIN; i++)
        spin = spin + i;
    atomic_store(&owner_done, 1);
    qs_hot_unlock(&m);
    CHECK(pthread_join(t, &ret) == 0);
    CHECK(ret == NULL);
    CHECK(qs_bias_state() == QS_BIAS_REVOKED);
    /* Both mutexes are free, and the owner now takes them. */
    CHECK(pthread_mutex_trylock(&m2) == 0);
    pthread_mutex_unlock(&m2);
    CHECK(!hot_lock_skips(&m));
}

static void
test_revoke_waits(void **state)
{
    (void) state;
    in_child(revoke_waits);
}

/* The watchdog's way: it borrows the bias to drive, takes the locks
 * meanwhile without ending the bias, and gives it back; another thread
 * that comes while it is lent ends it for good. */
static pthread_barrier_t step;

/* A failed check here ends the child (CHECK's _exit), so the owner is
 * never left waiting at a barrier. */
static void *
lender_thread(void *arg)
{
    pthread_barrier_wait(&step); /* 1 */
    CHECK(qs_bias_lend());
    CHECK(qs_bias_state() == QS_BIAS_LENT);
    qs_hot_lock(&m);
    CHECK(pthread_mutex_trylock(&m) == EBUSY); /* taken for real */
    qs_hot_unlock(&m);
    CHECK(qs_bias_state() == QS_BIAS_LENT);
    pthread_barrier_wait(&step); /* 2: the owner looks */
    pthread_barrier_wait(&step); /* 3 */
    qs_bias_return();
    pthread_barrier_wait(&step); /* 4: the owner looks */
    pthread_barrier_wait(&step); /* 5 */
    CHECK(qs_bias_lend());
    pthread_barrier_wait(&step); /* 6: another thread comes */
    pthread_barrier_wait(&step); /* 7 */
    qs_bias_return();
    return arg;
}

static void *
comer_thread(void *arg)
{
    qs_hot_lock(&m);
    qs_hot_unlock(&m);
    return arg;
}

static void
lend_and_return(void)
{
    pthread_t l, c;
    void *ret;

    take_bias();
    pthread_barrier_init(&step, NULL, 2);
    CHECK(pthread_create(&l, NULL, lender_thread, NULL) == 0);
    pthread_barrier_wait(&step); /* 1 */
    pthread_barrier_wait(&step); /* 2: lent, the owner takes the locks */
    CHECK(qs_bias_state() == QS_BIAS_LENT);
    CHECK(!hot_lock_skips(&m));
    pthread_barrier_wait(&step); /* 3 */
    pthread_barrier_wait(&step); /* 4: given back, the owner skips again */
    CHECK(qs_bias_state() == QS_BIAS_HELD);
    CHECK(hot_lock_skips(&m));
    pthread_barrier_wait(&step); /* 5 */
    pthread_barrier_wait(&step); /* 6: lent again, and another comes */
    CHECK(pthread_create(&c, NULL, comer_thread, NULL) == 0);
    CHECK(pthread_join(c, NULL) == 0);
    CHECK(qs_bias_state() == QS_BIAS_REVOKED);
    pthread_barrier_wait(&step); /* 7 */
    CHECK(pthread_join(l, &ret) == 0);
    CHECK(ret == NULL);
    /* The return did not bring back what the other thread ended. */
    CHECK(qs_bias_state() == QS_BIAS_REVOKED);
    CHECK(!hot_lock_skips(&m));
}

static void
test_lend_and_return(void **state)
{
    (void) state;
    in_child(lend_and_return);
}

/* The owner and another thread hammer one counter through the hot path's
 * read-modify-write; the other thread's first one revokes the bias while
 * the owner is at it. Not one update may be lost. */
/* Both threads running before either starts: a barrier's waiter may be
 * woken milliseconds late on a loaded machine, after the other thread
 * has finished alone. */
static atomic_int hammer_running;

static void
hammer_start(void)
{
    atomic_fetch_add(&hammer_running, 1);
    while (atomic_load(&hammer_running) < 2)
        ;
}

static void *
hammer_thread(void *arg)
{
    hammer_start();
    for (int i = 0; i < HAMMER_N; i++)
        qs_atomic_fetch_add(&counter, 1, memory_order_relaxed);
    return arg;
}

static void
hammer(void)
{
    pthread_t t;

    take_bias();
    atomic_init(&counter, 0);
    CHECK(pthread_create(&t, NULL, hammer_thread, NULL) == 0);
    hammer_start();
    for (int i = 0; i < HAMMER_N; i++)
        qs_atomic_fetch_add(&counter, 1, memory_order_relaxed);
    CHECK(pthread_join(t, NULL) == 0);
    if (atomic_load(&counter) != 2u * HAMMER_N)
        fprintf(stderr, "counter %u, expected %u\n", atomic_load(&counter),
                2u * HAMMER_N);
    CHECK(atomic_load(&counter) == 2u * HAMMER_N);
    CHECK(qs_bias_state() == QS_BIAS_REVOKED);
}

static void
test_hammer(void **state)
{
    (void) state;
    in_child(hammer);
}

static void
bias_available(void)
{
    take_bias();
}

int
main(void)
{
    pid_t pid = fork();
    int status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_with_threads),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_revoke_waits),
        cmocka_unit_test(test_lend_and_return),
        cmocka_unit_test(test_hammer),
    };

    /* A build or kernel where no bias can be taken has nothing to test:
     * the whole case is a skip. */
    if (pid == 0) {
        bias_available();
        _exit(CHILD_OK);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 1;
    if (WEXITSTATUS(status) == CHILD_NO_BIAS) {
        printf("no hot-path bias can be taken here (ThreadSanitizer, "
               "valgrind, no membarrier, or a sanitizer runtime's thread): "
               "skipped\n");
        return CHILD_NO_BIAS;
    }
    return cmocka_run_group_tests_name("qs_bias", tests, NULL, NULL);
}
