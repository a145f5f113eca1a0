/*
 * The HG ground floor (hg_core.h): completion queue, timers, progress and
 * trigger.
 */
#include "core/hg_core.h"
#include "na/na_clock.h"
#include "util/qs_atomic.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

const struct hg_core_check_hooks *_Atomic hg_core_check_hooks;

void
hg_core_init(struct hg_core *core, hg_class_t *hg_class,
             struct hg_core_class *cls, uint8_t id)
{
    pthread_condattr_t attr;

    core->hg_class = hg_class;
    core->cls = cls;
    core->id = id;
    core->na_context = NULL;
    pthread_mutex_init(&core->timer_lock, NULL);
    TAILQ_INIT(&core->timers);
    atomic_init(&core->timer_hint, UINT64_MAX);
    atomic_init(&core->n_fine, 0);
    atomic_init(&core->coarse_pass, 0);
    atomic_init(&core->coarse_now, 0);
    pthread_mutex_init(&core->queue_lock, NULL);
    /* HG_Trigger()'s wait must not stretch when the wall clock is set:
     * time it on the monotonic clock. */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&core->queue_cond, &attr);
    pthread_condattr_destroy(&attr);
    STAILQ_INIT(&core->queue);
    atomic_init(&core->n_queued, 0);
    core->queue_waiters = 0;
    atomic_init(&core->notify_fd, -1);
    core->bulk_pool = NULL;
}

void
hg_core_fini(struct hg_core *core)
{
    pthread_cond_destroy(&core->queue_cond);
    pthread_mutex_destroy(&core->queue_lock);
    pthread_mutex_destroy(&core->timer_lock);
}

uint64_t
hg_core_now(const struct hg_core *core)
{
    return NA_Clock_now(core->cls->na_class);
}

/* Completion queue. */

void
hg_core_complete(struct hg_core *core, struct hg_completion *comp)
{
    int notify_fd;

    qs_hot_lock(&core->queue_lock);
    STAILQ_INSERT_TAIL(&core->queue, comp, entry);
    qs_atomic_fetch_add(&core->n_queued, 1, memory_order_release);
    /* Only a trigger waiting on the queue needs a signal. Waiters count
     * themselves under the queue lock, which a process with threads takes
     * here, so none can be missed; a process without them has none. */
    if (core->queue_waiters > 0)
        pthread_cond_signal(&core->queue_cond);
    qs_hot_unlock(&core->queue_lock);
    /* A program blocked in poll() on HG_Event_get_wait_fd() wakes up. */
    notify_fd = atomic_load_explicit(&core->notify_fd, memory_order_relaxed);
    if (notify_fd >= 0) {
        uint64_t one = 1;

        if (write(notify_fd, &one, sizeof(one)) < 0)
            (void) 0; /* a full counter is still readable */
    }
}

bool
hg_core_has_completions(struct hg_core *core)
{
    return atomic_load_explicit(&core->n_queued, memory_order_acquire) > 0;
}

/* Deadlines. */

/* Timer lock held: take a timer off the list, keeping the fine count. */
static void
hg_core_timer_remove(struct hg_core *core, struct hg_timer *timer)
{
    TAILQ_REMOVE(&core->timers, timer, entry);
    timer->linked = false;
    if (!timer->coarse)
        atomic_fetch_sub_explicit(&core->n_fine, 1, memory_order_relaxed);
}

static void
hg_core_timer_arm_kind(struct hg_core *core, struct hg_timer *timer,
                       unsigned int timeout_ms,
                       void (*expire)(struct hg_timer *), bool coarse)
{
    uint64_t deadline = hg_core_now(core) + (uint64_t) timeout_ms * 1000000ull;

    qs_hot_lock(&core->timer_lock);
    if (timer->linked && timer->coarse != coarse)
        hg_core_timer_remove(core, timer);
    timer->deadline_ns = deadline;
    timer->expire = expire;
    timer->coarse = coarse;
    /* The sweep reads the flag under this lock, and a disarm needs no
     * ordering with the fields above: a release store, not a barrier. */
    atomic_store_explicit(&timer->armed, true, memory_order_release);
    if (!timer->linked) {
        TAILQ_INSERT_TAIL(&core->timers, timer, entry);
        timer->linked = true;
        if (!coarse)
            atomic_fetch_add_explicit(&core->n_fine, 1, memory_order_relaxed);
    }
    if (deadline < atomic_load(&core->timer_hint))
        atomic_store(&core->timer_hint, deadline);
    qs_hot_unlock(&core->timer_lock);
}

void
hg_core_timer_arm(struct hg_core *core, struct hg_timer *timer,
                  unsigned int timeout_ms, void (*expire)(struct hg_timer *))
{
    hg_core_timer_arm_kind(core, timer, timeout_ms, expire, false);
}

void
hg_core_timer_arm_coarse(struct hg_core *core, struct hg_timer *timer,
                         unsigned int timeout_ms,
                         void (*expire)(struct hg_timer *))
{
    hg_core_timer_arm_kind(core, timer, timeout_ms, expire, true);
}

/* Before the memory of a timer is freed or reused for something else. */
void
hg_core_timer_unlink(struct hg_core *core, struct hg_timer *timer)
{
    atomic_store(&timer->armed, false);
    qs_hot_lock(&core->timer_lock);
    if (timer->linked)
        hg_core_timer_remove(core, timer);
    qs_hot_unlock(&core->timer_lock);
}

/*
 * Walk the timers under the lock: unlink the disarmed ones, take the first
 * that is due at `now` (disarming it), and refresh the hint. Returns the
 * due timer or NULL; *next gets the nearest deadline still armed.
 */
static struct hg_timer *
hg_core_sweep_timers(struct hg_core *core, uint64_t now, uint64_t *next)
{
    struct hg_timer *timer, *tmp, *expired = NULL;
    uint64_t nearest = UINT64_MAX;

    qs_hot_lock(&core->timer_lock);
    for (timer = TAILQ_FIRST(&core->timers); timer != NULL; timer = tmp) {
        tmp = TAILQ_NEXT(timer, entry);
        if (!atomic_load(&timer->armed)) {
            hg_core_timer_remove(core, timer);
        } else if (expired == NULL && timer->deadline_ns <= now &&
                   atomic_exchange(&timer->armed, false)) {
            hg_core_timer_remove(core, timer);
            expired = timer;
        } else if (timer->deadline_ns < nearest) {
            nearest = timer->deadline_ns;
        }
    }
    /* With a timer fired, the hint stays low so the next pass looks
     * again: several may be due at once. */
    atomic_store(&core->timer_hint, expired != NULL ? now : nearest);
    qs_hot_unlock(&core->timer_lock);
    *next = nearest;
    return expired;
}

/*
 * Fire the timers due at `now`; returns whether one fired. A pass with
 * nothing due reads only the hint and takes no lock. A timer is disarmed
 * before its expire function runs.
 */
static __attribute__((noinline)) bool
hg_core_check_timers_due(struct hg_core *core, uint64_t now, uint64_t next)
{
    bool fired = false;

    while (next <= now) {
        struct hg_timer *expired = hg_core_sweep_timers(core, now, &next);

        if (expired == NULL)
            break;
        expired->expire(expired);
        fired = true;
        next = atomic_load(&core->timer_hint);
    }
    return fired;
}

static inline bool
hg_core_check_timers(struct hg_core *core, uint64_t now)
{
    uint64_t next = atomic_load(&core->timer_hint);

    return next <= now && hg_core_check_timers_due(core, now, next);
}

/* The time for a timer check: the NA clock if a linked timer may be due,
 * else 0 without reading it (with no timer linked the hint is UINT64_MAX
 * and hg_core_check_timers() fires nothing whatever the time), so a busy
 * loop on a context without timers reads no clock. With only coarse
 * timers linked (an origin with RPCs in flight, each with its liveness
 * probe), the clock is read on one call in HG_CORE_COARSE_PASSES and the
 * others reuse that reading: a reading that is a little old only makes
 * a timer fire a few passes late. */
static inline uint64_t
hg_core_timer_now(struct hg_core *core)
{
    unsigned int pass;
    uint64_t now;

    if (atomic_load(&core->timer_hint) == UINT64_MAX)
        return 0;
    if (atomic_load_explicit(&core->n_fine, memory_order_relaxed) == 0) {
        /* A plain load and store, not a locked add: threads that race
         * here only move the next reading by a pass. */
        pass = atomic_load_explicit(&core->coarse_pass, memory_order_relaxed);
        atomic_store_explicit(&core->coarse_pass, pass + 1,
                              memory_order_relaxed);
        if (pass % HG_CORE_COARSE_PASSES != 0)
            return atomic_load_explicit(&core->coarse_now,
                                        memory_order_relaxed);
    }
    now = hg_core_now(core);
    atomic_store_explicit(&core->coarse_now, now, memory_order_relaxed);
    return now;
}

/* The exact nearest deadline of an armed timer if it may come before
 * `limit` (*exact set); otherwise the hint, which is at least `limit`. */
static uint64_t
hg_core_next_timer(struct hg_core *core, uint64_t limit, bool *exact)
{
    uint64_t next = atomic_load(&core->timer_hint);

    *exact = next < limit;
    if (*exact)
        hg_core_sweep_timers(core, 0, &next);
    return next;
}

/* Progress and trigger. */

/*
 * Each pass reads the NA clock once (a zero timeout on a context with no
 * timer linked: not at all) and hands that time to the timer
 * check: NA callbacks, timers, then either return (completions are
 * queued or the time is up) or wait in NA until the nearer of the
 * caller's deadline and the next timer.
 */
hg_return_t
hg_core_progress(struct hg_core *core, unsigned int timeout_ms)
{
    uint64_t now, deadline;

    /* A zero timeout needs the time only for the timers. */
    now = timeout_ms > 0 ? hg_core_now(core) : hg_core_timer_now(core);
    deadline = now + (uint64_t) timeout_ms * 1000000ull;
    for (;;) {
        uint64_t next_timer, wait_ns;
        unsigned int wait_ms;
        bool exact, fired;
        na_return_t na_ret;

        /* NA callbacks turn network completions into HG completions. On
         * a real clock, a timer that is due fires only after NA has been
         * polled in this pass: an answer that reached us before its
         * deadline (a probe's, a timed forward's response) is read first,
         * not judged missing because this side had not looked yet (seen
         * under ThreadSanitizer on a loaded machine: a forward failed with
         * HG_HOSTUNREACH while its target answered every probe). */
        if (atomic_load(&core->timer_hint) <= now &&
            na_clock_is_real(core->cls->na_class))
            NA_Poll(core->cls->na_class, core->na_context, NULL);
        NA_Trigger(core->na_context, UINT32_MAX, NULL);
        hg_core_check_timers(core, now);
        if (hg_core_has_completions(core))
            return HG_SUCCESS;
        if (now >= deadline) {
            /* A zero timeout still polls once without blocking. */
            NA_Poll(core->cls->na_class, core->na_context, NULL);
            NA_Trigger(core->na_context, UINT32_MAX, NULL);
            hg_core_check_timers(core, hg_core_timer_now(core));
            return hg_core_has_completions(core) ? HG_SUCCESS : HG_TIMEOUT;
        }
        wait_ns = deadline - now;
        next_timer = hg_core_next_timer(core, deadline, &exact);
        if (next_timer != UINT64_MAX && next_timer - now < wait_ns)
            wait_ns = next_timer > now ? next_timer - now : 0;
        /* Round up so a deadline is reached, not approached forever. */
        wait_ms = (unsigned int) ((wait_ns + 999999ull) / 1000000ull);
        na_ret =
            NA_Poll_wait(core->cls->na_class, core->na_context, wait_ms, NULL);
        if (na_ret != NA_SUCCESS && na_ret != NA_TIMEOUT)
            return hg_from_na(na_ret);
        now = hg_core_now(core);
        NA_Trigger(core->na_context, UINT32_MAX, NULL);
        fired = hg_core_check_timers(core, now);
        if (hg_core_has_completions(core))
            return HG_SUCCESS;
        /* NA_TIMEOUT can be early: work may be due elsewhere (another
         * context of the simulated fabric, or a spurious wake-up). The
         * caller loops; returning lets a single thread drive several
         * contexts. Without an exact next deadline (none was near), a
         * timer that just fired says one was due. */
        if (na_ret == NA_TIMEOUT &&
            !(exact ? next_timer != UINT64_MAX && now >= next_timer : fired))
            return HG_TIMEOUT;
    }
}

hg_return_t
hg_core_trigger(struct hg_core *core, unsigned int timeout_ms,
                unsigned int max_count, unsigned int *actual_count)
{
    unsigned int done = 0;

    while (done < max_count) {
        struct hg_completion *comp;
        bool wait = done == 0 && timeout_ms > 0;

        /* An empty queue is seen without the lock unless we wait. */
        if (!wait && !hg_core_has_completions(core))
            break;
        /* Only a wait uses the condition variable, so only a wait needs
         * the mutex in a process without threads (lib/util/qs_lock.h). */
        if (wait)
            qs_mutex_lock(&core->queue_lock);
        else
            qs_hot_lock(&core->queue_lock);
        if (STAILQ_EMPTY(&core->queue) && wait) {
            struct timespec ts;

            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += timeout_ms / 1000;
            ts.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            core->queue_waiters++;
            while (STAILQ_EMPTY(&core->queue)) {
                if (pthread_cond_timedwait(&core->queue_cond, &core->queue_lock,
                                           &ts) == ETIMEDOUT)
                    break;
            }
            core->queue_waiters--;
        }
        comp = STAILQ_FIRST(&core->queue);
        if (comp != NULL) {
            STAILQ_REMOVE_HEAD(&core->queue, entry);
            qs_atomic_fetch_sub(&core->n_queued, 1, memory_order_relaxed);
        }
        if (wait)
            pthread_mutex_unlock(&core->queue_lock);
        else
            qs_hot_unlock(&core->queue_lock);
        if (comp == NULL)
            break;
        HG_CORE_CHECK(op_ran, comp);
        comp->run(comp);
        done++;
    }
    if (actual_count != NULL)
        *actual_count = done;
    return done > 0 ? HG_SUCCESS : HG_TIMEOUT;
}
