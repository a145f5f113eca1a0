/*
 * Groups of sub-operations (lib/core/hg_opgroup.h), which count an RPC's
 * NA operations and a transfer's RMA pieces: a group ends exactly once, and
 * only after it is closed, whatever order its sub-operations end in; the
 * first error wins; a group with no sub-operation ends at its close; and
 * with sub-operations ending on other threads while more are posted, one
 * call, never two, reports the end.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/hg_opgroup.h"

/* Sub-operations that all end before the close: the close ends the group,
 * none of the ends does. */
static void
test_end_before_close(void **state)
{
    struct hg_opgroup g;

    (void) state;
    hg_opgroup_open(&g);
    hg_opgroup_add(&g, 2);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    hg_opgroup_add(&g, 1);
    assert_int_equal(hg_opgroup_running(&g), 2);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    assert_true(hg_opgroup_busy(&g)); /* open: not ended with none running */
    assert_true(hg_opgroup_close(&g));
    assert_false(hg_opgroup_busy(&g));
    assert_int_equal(hg_opgroup_result(&g), HG_SUCCESS);
}

/* Sub-operations still running at the close: the last end ends it. */
static void
test_end_after_close(void **state)
{
    struct hg_opgroup g;

    (void) state;
    hg_opgroup_open(&g);
    hg_opgroup_add(&g, 2);
    assert_false(hg_opgroup_close(&g));
    assert_false(hg_opgroup_is_open(&g));
    assert_true(hg_opgroup_busy(&g));
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_DONE);
    assert_false(hg_opgroup_busy(&g));
}

/* No sub-operation at all: the close ends it; an idle group is not busy. */
static void
test_zero_subops(void **state)
{
    struct hg_opgroup g;

    (void) state;
    hg_opgroup_init(&g);
    assert_false(hg_opgroup_busy(&g));
    assert_int_equal(hg_opgroup_result(&g), HG_SUCCESS);
    hg_opgroup_open(&g);
    assert_true(hg_opgroup_busy(&g));
    assert_true(hg_opgroup_close(&g));
    assert_false(hg_opgroup_busy(&g));
    assert_int_equal(hg_opgroup_result(&g), HG_SUCCESS);
}

/* The first error wins, whether a sub-operation or a cancel recorded it;
 * FIRST_ERROR is reported once, and an error on the last end is DONE. */
static void
test_first_error_wins(void **state)
{
    struct hg_opgroup g;

    (void) state;
    hg_opgroup_arm(&g, 4);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    assert_int_equal(hg_opgroup_end(&g, HG_TIMEOUT), HG_OPGROUP_FIRST_ERROR);
    assert_int_equal(hg_opgroup_end(&g, HG_CANCELED), HG_OPGROUP_RUNNING);
    assert_false(hg_opgroup_fail(&g, HG_NOMEM));
    assert_int_equal(hg_opgroup_end(&g, HG_PROTOCOL_ERROR), HG_OPGROUP_DONE);
    assert_int_equal(hg_opgroup_result(&g), HG_TIMEOUT);

    /* A cancel before any error is the first error. */
    hg_opgroup_arm(&g, 2);
    assert_int_equal(hg_opgroup_result(&g), HG_SUCCESS); /* round forgot */
    assert_false(hg_opgroup_fail(&g, HG_SUCCESS));
    assert_true(hg_opgroup_fail(&g, HG_CANCELED));
    assert_false(hg_opgroup_fail(&g, HG_TIMEOUT));
    assert_int_equal(hg_opgroup_end(&g, HG_NA_ERROR), HG_OPGROUP_RUNNING);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_DONE);
    assert_int_equal(hg_opgroup_result(&g), HG_CANCELED);

    /* The only sub-operation fails: DONE, with its error. */
    hg_opgroup_arm(&g, 1);
    assert_int_equal(hg_opgroup_end(&g, HG_NOMEM), HG_OPGROUP_DONE);
    assert_int_equal(hg_opgroup_result(&g), HG_NOMEM);
}

/* A sub-operation starts a follow-up from its completion after the close
 * (an overflow pull from the response receive): adding before ending
 * keeps the group alive. */
static void
test_follow_up(void **state)
{
    struct hg_opgroup g;

    (void) state;
    hg_opgroup_arm(&g, 1);
    hg_opgroup_add(&g, 1);
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_RUNNING);
    assert_true(hg_opgroup_busy(&g));
    assert_int_equal(hg_opgroup_end(&g, HG_SUCCESS), HG_OPGROUP_DONE);
}

/* Threads end sub-operations while the main thread posts more, all under
 * one lock as an owner would: exactly one call reports the end, and it
 * comes after every sub-operation was posted. Every STRESS_BATCH posts the
 * poster waits until all it posted have ended, so the count falls to zero
 * while the group is open, as when a sub-operation ends during the
 * posting loop. */
#define STRESS_SUBOPS 2000
#define STRESS_BATCH 50
#define STRESS_THREADS 4

struct stress {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct hg_opgroup g;
    unsigned int posted, taken, ends_seen;
    int done_reports, early_reports;
    bool closed;
};

/* Under the lock; checked by the main thread (cmocka's asserts are not for
 * other threads). */
static void
stress_report(struct stress *s)
{
    s->done_reports++;
    /* Nothing may end the group before its close. */
    if (!s->closed || s->posted != STRESS_SUBOPS)
        s->early_reports++;
}

static void *
stress_worker(void *arg)
{
    struct stress *s = arg;

    pthread_mutex_lock(&s->lock);
    while (s->taken < STRESS_SUBOPS) {
        if (s->taken == s->posted) {
            pthread_cond_wait(&s->cond, &s->lock);
            continue;
        }
        s->taken++;
        /* The sub-operation "runs" without the lock. */
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&s->lock);
        if (hg_opgroup_end(&s->g, s->taken % 7 ? HG_SUCCESS : HG_TIMEOUT) ==
            HG_OPGROUP_DONE)
            stress_report(s);
        s->ends_seen++;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void
test_threads(void **state)
{
    struct stress s = {.posted = 0};
    pthread_t threads[STRESS_THREADS];

    (void) state;
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.cond, NULL);
    hg_opgroup_open(&s.g);
    for (int i = 0; i < STRESS_THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, stress_worker, &s),
                         0);
    for (unsigned int i = 0; i < STRESS_SUBOPS; i++) {
        pthread_mutex_lock(&s.lock);
        hg_opgroup_add(&s.g, 1);
        s.posted++;
        pthread_cond_broadcast(&s.cond);
        while (s.posted % STRESS_BATCH == 0 && s.ends_seen < s.posted)
            pthread_cond_wait(&s.cond, &s.lock);
        pthread_mutex_unlock(&s.lock);
    }
    pthread_mutex_lock(&s.lock);
    s.closed = true;
    if (hg_opgroup_close(&s.g))
        stress_report(&s);
    pthread_cond_broadcast(&s.cond);
    pthread_mutex_unlock(&s.lock);
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(s.ends_seen, STRESS_SUBOPS);
    assert_int_equal(s.early_reports, 0);
    assert_int_equal(s.done_reports, 1);
    assert_false(hg_opgroup_busy(&s.g));
    assert_int_equal(hg_opgroup_result(&s.g), HG_TIMEOUT);
    pthread_cond_destroy(&s.cond);
    pthread_mutex_destroy(&s.lock);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_before_close),
        cmocka_unit_test(test_end_after_close),
        cmocka_unit_test(test_zero_subops),
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_follow_up),
        cmocka_unit_test(test_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
