/*
 * margo_thread_sleep() and the progress threads: a sleep is a blocking
 * wait on the instance's clock (virtual on the simulated fabric) that
 * keeps doing this thread's share of progress; a progress thread drives
 * its instance alone and runs its handlers when rpc_thread_count is -1.
 * The driving and waiting they build on are margo_progress.c's.
 */
#include "margo_internal.h"
#include "margo_progress.h"

#include <string.h>

/* ---- Sleeping -------------------------------------------------------- */

struct margo_sleep {
    struct margo_instance *mid;
    uint64_t deadline_ns;
    const struct margo_tls *thread; /* the sleeping thread's */
    struct margo_sleep *next;       /* (L) in mid->sleepers */
};

/* Recompute mid->sleep_deadline_min (lock held). */
static void
margo_sleepers_update(struct margo_instance *mid)
{
    uint64_t min = 0;

    for (struct margo_sleep *s = mid->sleepers; s; s = s->next)
        if (min == 0 || s->deadline_ns < min)
            min = s->deadline_ns;
    mid->sleep_deadline_min = min;
}

/* The earliest deadline of mid's sleepers that may wake before this
 * thread returns: another thread's, or this thread's innermost (its
 * outer sleeps wait for the inner one). 0 if none. Lock held. */
uint64_t
margo_sleepers_next(const struct margo_instance *mid)
{
    uint64_t min = margo_tls.deadline_ns;

    if (mid->sleep_deadline_min == 0)
        return min;
    for (const struct margo_sleep *s = mid->sleepers; s; s = s->next)
        if (s->thread != &margo_tls && (min == 0 || s->deadline_ns < min))
            min = s->deadline_ns;
    return min;
}

static bool
margo_sleep_done(void *arg)
{
    struct margo_sleep *s = arg;

    return HG_Clock_now(s->mid->hg_class) >= s->deadline_ns ||
           s->mid->teardown_started;
}

void
margo_thread_sleep(margo_instance_id mid, double timeout_ms)
{
    struct margo_sleep s;
    uint64_t saved = margo_tls.deadline_ns;

    if (mid == MARGO_INSTANCE_NULL || !(timeout_ms > 0))
        return;
    s.mid = mid;
    s.thread = &margo_tls;
    s.deadline_ns =
        HG_Clock_now(mid->hg_class) + (uint64_t) (timeout_ms * 1e6 + 0.5);
    /* Sleeping is waiting like any other blocking call: this thread keeps
     * doing its share of progress and handlers meanwhile, as a ULT's
     * scheduler would. On the simulator the clock is virtual. */
    /* A sleep nested in another (a handler run from inside this thread's
     * own sleep) ends first whatever the outer deadline says: cutting its
     * waits to the outer one would stop the virtual clock short of its
     * own. */
    margo_tls.deadline_ns = s.deadline_ns;
    pthread_mutex_lock(&margo_lock);
    s.next = mid->sleepers;
    mid->sleepers = &s;
    margo_sleepers_update(mid);
    margo_wake(mid); /* a progress thread idle "when needed" now is needed */
    margo_block_until(mid, margo_sleep_done, &s, true);
    for (struct margo_sleep **p = &mid->sleepers; *p; p = &(*p)->next) {
        if (*p == &s) {
            *p = s.next;
            break;
        }
    }
    margo_sleepers_update(mid);
    pthread_mutex_unlock(&margo_lock);
    margo_tls.deadline_ns = saved;
}

/* ---- Threads --------------------------------------------------------- */

/* With progress_when_needed, whether the progress thread has a reason to
 * make progress: an operation in flight, work queued for it, a timer or a
 * sleeper, finalize (lock held). */
static bool
margo_progress_needed(const struct margo_instance *mid)
{
    return !mid->progress_when_needed || mid->inflight != NULL ||
           (mid->rpc_thread_count < 0 && mid->queue_head != NULL) ||
           mid->timers != NULL || mid->sleepers != NULL ||
           mid->finalize_requested;
}

static void *
margo_progress_main(void *arg)
{
    struct margo_instance *mid = arg;

    margo_tls.own_instance = mid;
    margo_tls.is_progress_thread = true;
    margo_tls.progress_of = mid;
    margo_tls.pt_counted = true; /* counted by margo_threads_start */
    pthread_mutex_lock(&margo_lock);
    while (!mid->stop_threads) {
        bool queued = mid->rpc_thread_count < 0 && mid->queue_head;

        if (!margo_progress_needed(mid)) {
            /* Idle and told to progress only when needed: no HG_Progress()
             * until margo_wake() says something changed. */
            margo_cond_wait(&margo_driver_cond, NULL);
            continue;
        }
        pthread_mutex_unlock(&margo_lock);
        (void) margo_progress_instance(mid, queued ? 0 : margo_idle_ms(mid));
        pthread_mutex_lock(&margo_lock);
        if (mid->rpc_thread_count < 0) {
            margo_pt_count(false);
            while (margo_run_one_handler(mid))
                ;
            margo_pt_count(true);
        }
    }
    pthread_mutex_unlock(&margo_lock);
    margo_pt_count(false);
    return NULL;
}

int
margo_threads_start(struct margo_instance *mid)
{
    int rc;

    if (mid->has_progress_thread) {
        /* At work from the start (margo_progress_main counts on it). */
        atomic_fetch_add(&margo_pt_outside, 1);
        rc = pthread_create(&mid->progress_thread, NULL, margo_progress_main,
                            mid);
        if (rc != 0) {
            atomic_fetch_sub(&margo_pt_outside, 1);
            margo_log(mid, MARGO_LOG_ERROR,
                      "margo: cannot start the progress thread: %s",
                      strerror(rc));
            return -1;
        }
        mid->progress_thread_started = true;
        pthread_setname_np(mid->progress_thread, "margo-progress");
    }
    return 0;
}

void
margo_threads_stop(struct margo_instance *mid)
{
    pthread_mutex_lock(&margo_lock);
    mid->stop_threads = true;
    margo_wake(mid);
    pthread_mutex_unlock(&margo_lock);

    if (mid->progress_thread_started) {
        /* Idle meanwhile: the thread may have to wait out its deadline. */
        margo_idle_enter();
        pthread_join(mid->progress_thread, NULL);
        margo_idle_leave();
        mid->progress_thread_started = false;
    }
}

int
margo_set_progress_when_needed(margo_instance_id mid, bool when_needed)
{
    if (mid == MARGO_INSTANCE_NULL)
        return -1;
    pthread_mutex_lock(&margo_lock);
    mid->progress_when_needed = when_needed;
    margo_wake(mid);
    pthread_mutex_unlock(&margo_lock);
    return 0;
}
