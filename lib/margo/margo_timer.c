/*
 * Timers (margo-timer.h). An armed timer sits on its instance's list with
 * a deadline on the NA clock; margo_progress_instance() queues the
 * callbacks of those that expired as work for the instance's handler
 * scheduling (or the timer's pool), and cuts its waits short to the next
 * deadline, so on the simulator timers fire in virtual time.
 *
 * States, guarded by margo_lock: idle -> armed (start) -> queued (expired)
 * -> running -> idle; cancel takes armed or queued back to idle and waits
 * out running. As in Margo, destroying a timer that is armed, queued or
 * running does not cancel it: it is freed once its callback has run (or
 * at finalize, if that comes first).
 */
#include "margo_internal.h"
#include "margo-timer.h"

#include "hg/hg_check.h"

#include <stdlib.h>

enum margo_timer_state { MT_IDLE, MT_ARMED, MT_QUEUED, MT_RUNNING };

struct margo_timer {
    struct margo_instance *mid; /* NULL once the instance is finalized */
    margo_timer_callback_fn cb;
    void *arg;
    ABT_pool pool;
    enum margo_timer_state state; /* (L) */
    uint64_t deadline_ns;         /* (L) while armed */
    bool destroy_pending;         /* (L) destroyed; freed after firing */
    pthread_t runner;             /* (L) while running */
    struct margo_timer *next;     /* (L) in mid->timers */
    struct margo_handler_entry entry;
};

static void margo_timer_fire(void *arg);

/* A destroyed timer about to run its callback leaves the instance's list
 * (lock held): nothing may arm or find it any more. */
static void
margo_timer_unlink_if_destroyed(struct margo_timer *t)
{
    struct margo_timer **p;

    if (!t->destroy_pending || t->mid == NULL)
        return;
    for (p = &t->mid->timers; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    t->next = NULL;
}

static void
margo_timer_dropped(void *arg)
{
    struct margo_timer *t = arg;

    /* Called by the teardown, which holds no lock. */
    pthread_mutex_lock(&margo_lock);
    if (t->state == MT_QUEUED)
        t->state = MT_IDLE;
    pthread_mutex_unlock(&margo_lock);
}

int
margo_timer_create_with_pool(margo_instance_id mid,
                             margo_timer_callback_fn cb_fn, void *cb_dat,
                             ABT_pool pool, margo_timer_t *timer)
{
    struct margo_timer *t;

    if (mid == MARGO_INSTANCE_NULL || cb_fn == NULL || timer == NULL)
        return -1;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    t->mid = mid;
    t->cb = cb_fn;
    t->arg = cb_dat;
    t->pool = pool;
    t->entry.work = margo_timer_fire;
    t->entry.drop = margo_timer_dropped;
    t->entry.arg = t;
    pthread_mutex_lock(&margo_lock);
    if (mid->teardown_started) {
        pthread_mutex_unlock(&margo_lock);
        free(t);
        return -1;
    }
    t->next = mid->timers;
    mid->timers = t;
    pthread_mutex_unlock(&margo_lock);
    HG_CHECK(hg_check_margo_add(mid->hg_class, t, HG_CHECK_MARGO_TIMER,
                                "timer (margo_timer_destroy)"));
    *timer = t;
    return 0;
}

int
margo_timer_create(margo_instance_id mid, margo_timer_callback_fn cb_fn,
                   void *cb_dat, margo_timer_t *timer)
{
    return margo_timer_create_with_pool(mid, cb_fn, cb_dat, ABT_POOL_NULL,
                                        timer);
}

int
margo_timer_start(margo_timer_t timer, double timeout_ms)
{
    struct margo_instance *mid;
    int rc = 0;

    if (timer == MARGO_TIMER_NULL || !(timeout_ms >= 0))
        return -1;
    pthread_mutex_lock(&margo_lock);
    mid = timer->mid;
    if (mid == NULL || mid->teardown_started || timer->state == MT_ARMED ||
        timer->state == MT_QUEUED || timer->destroy_pending) {
        rc = -1;
    } else {
        /* Started from its own callback (state RUNNING), it re-arms. */
        timer->deadline_ns =
            HG_Clock_now(mid->hg_class) + (uint64_t) (timeout_ms * 1e6 + 0.5);
        timer->state = MT_ARMED;
        margo_wake(mid);
    }
    pthread_mutex_unlock(&margo_lock);
    return rc;
}

/* Run the callback (on a handler's thread, lock not held). */
static void
margo_timer_fire(void *arg)
{
    struct margo_timer *t = arg;
    bool free_it;

    pthread_mutex_lock(&margo_lock);
    if (t->state != MT_QUEUED) {
        /* Cancelled between queueing and here. */
        pthread_mutex_unlock(&margo_lock);
        return;
    }
    margo_timer_unlink_if_destroyed(t);
    t->state = MT_RUNNING;
    t->runner = pthread_self();
    pthread_mutex_unlock(&margo_lock);

    t->cb(t->arg);

    pthread_mutex_lock(&margo_lock);
    if (t->state == MT_RUNNING)
        t->state = MT_IDLE;
    /* Destroyed before or during the callback: freed now, unless the
     * callback armed it again (it then fires once more first). */
    free_it = t->destroy_pending && t->state == MT_IDLE;
    if (free_it)
        margo_timer_unlink_if_destroyed(t);
    if (t->mid)
        margo_wake(t->mid);
    pthread_mutex_unlock(&margo_lock);
    if (free_it)
        free(t);
}

void
margo_timers_check(struct margo_instance *mid)
{
    struct margo_timer *t;
    uint64_t now;

    pthread_mutex_lock(&margo_lock);
    if (mid->timers == NULL || mid->teardown_started) {
        pthread_mutex_unlock(&margo_lock);
        return;
    }
    now = HG_Clock_now(mid->hg_class);
    for (t = mid->timers; t; t = t->next) {
        if (t->state != MT_ARMED || t->deadline_ns > now)
            continue;
        t->state = MT_QUEUED;
        margo_schedule_work(mid, t->pool, &t->entry);
    }
    pthread_mutex_unlock(&margo_lock);
}

uint64_t
margo_timers_next_ns(struct margo_instance *mid)
{
    struct margo_timer *t;
    uint64_t next = UINT64_MAX, now;

    pthread_mutex_lock(&margo_lock);
    if (mid->timers == NULL) {
        pthread_mutex_unlock(&margo_lock);
        return next;
    }
    now = HG_Clock_now(mid->hg_class);
    for (t = mid->timers; t; t = t->next) {
        if (t->state != MT_ARMED)
            continue;
        if (t->deadline_ns <= now)
            next = 0;
        else if (t->deadline_ns - now < next)
            next = t->deadline_ns - now;
    }
    pthread_mutex_unlock(&margo_lock);
    return next;
}

static bool
margo_timer_not_running(void *arg)
{
    return ((struct margo_timer *) arg)->state != MT_RUNNING;
}

/* Disarm (lock held); waits out a running callback unless it is this
 * thread's. */
static void
margo_timer_cancel_locked(struct margo_timer *t)
{
    if (t->state == MT_ARMED) {
        t->state = MT_IDLE;
    } else if (t->state == MT_QUEUED) {
        if (t->mid)
            margo_unqueue_work(t->mid, &t->entry);
        /* If the entry was already popped, margo_timer_fire() sees the
         * state and returns without running the callback. */
        t->state = MT_IDLE;
    } else if (t->state == MT_RUNNING && t->mid &&
               !pthread_equal(t->runner, pthread_self())) {
        margo_block_until(t->mid, margo_timer_not_running, t, true);
    }
}

bool
margo_timer_disarm_locked(margo_timer_t t)
{
    if (t->state == MT_RUNNING)
        return false;
    if (t->state == MT_QUEUED && t->mid)
        margo_unqueue_work(t->mid, &t->entry);
    t->state = MT_IDLE;
    return true;
}

int
margo_timer_cancel(margo_timer_t timer)
{
    if (timer == MARGO_TIMER_NULL)
        return -1;
    pthread_mutex_lock(&margo_lock);
    margo_timer_cancel_locked(timer);
    pthread_mutex_unlock(&margo_lock);
    return 0;
}

int
margo_timer_cancel_many(size_t n, margo_timer_t *timers)
{
    int rc = 0;

    if (n > 0 && timers == NULL)
        return -1;
    /* As in Margo: every timer is disarmed first, then the running
     * callbacks are waited out, so a long one cannot let a later timer of
     * the list fire meanwhile. */
    pthread_mutex_lock(&margo_lock);
    for (size_t i = 0; i < n; i++) {
        if (timers[i] == MARGO_TIMER_NULL)
            rc = -1;
        else if (timers[i]->state != MT_RUNNING)
            margo_timer_cancel_locked(timers[i]);
    }
    for (size_t i = 0; i < n; i++)
        if (timers[i] != MARGO_TIMER_NULL)
            margo_timer_cancel_locked(timers[i]);
    pthread_mutex_unlock(&margo_lock);
    return rc;
}

int
margo_timer_destroy(margo_timer_t timer)
{
    struct margo_timer **p;
    bool free_now = true;

    if (timer == MARGO_TIMER_NULL)
        return -1;
    HG_CHECK(hg_check_obj_del(timer));
    pthread_mutex_lock(&margo_lock);
    if (timer->mid != NULL && timer->state != MT_IDLE) {
        /* Armed, queued or running: it fires (or finishes) first, as in
         * Margo, and margo_timer_fire() frees it. */
        timer->destroy_pending = true;
        free_now = false;
    } else if (timer->mid != NULL) {
        for (p = &timer->mid->timers; *p; p = &(*p)->next) {
            if (*p == timer) {
                *p = timer->next;
                break;
            }
        }
    } else if (timer->state == MT_RUNNING) {
        /* Its instance is gone but its callback still runs (destroyed
         * from inside it). */
        timer->destroy_pending = true;
        free_now = false;
    }
    pthread_mutex_unlock(&margo_lock);
    if (free_now)
        free(timer);
    return 0;
}

void
margo_timers_release(struct margo_instance *mid)
{
    struct margo_timer *t;

    /* The teardown has stopped every handler: no callback runs now. The
     * timers stay the program's to destroy; they only forget the
     * instance. */
    pthread_mutex_lock(&margo_lock);
    while ((t = mid->timers) != NULL) {
        mid->timers = t->next;
        t->next = NULL;
        t->state = MT_IDLE;
        t->mid = NULL;
        /* Destroyed while armed: it will not fire now, and nobody else
         * frees it. */
        if (t->destroy_pending)
            free(t);
    }
    pthread_mutex_unlock(&margo_lock);
}
