/*
 * Who drives HG progress, and how blocking calls wait.
 *
 * An instance with a progress thread is driven by that thread alone;
 * threads blocked on it sleep on margo_driver_cond and are woken by the HG
 * callbacks that complete their operations. A thread blocked on such an
 * instance that is not one of Margo's own threads also serves the
 * instances without a progress thread (below) and the caller-context
 * handlers of every instance, as the primary Argobots execution stream
 * does in real Margo.
 *
 * Instances without a progress thread are "driven": they sit on one
 * process-wide list, and a thread that blocks on any of them takes the
 * single driving role and makes rounds over the whole list (trigger,
 * progress, run caller-context handlers) until its own condition holds.
 * Driving every instance, not just the one waited on, is what lets a
 * client and a server instance share one thread: the client's
 * margo_forward() also moves the server. Other blocked threads sleep on
 * margo_driver_cond until their operation completes or the role is free.
 * With one thread, the rounds visit instances in creation order and make
 * the same HG calls every run, so a run on the simulated fabric is
 * deterministic for its seed.
 *
 * A handler runs on the thread that pops it from its instance's queue:
 * a handler thread, the progress thread (rpc_thread_count -1), or a thread
 * blocked in a Margo call (rpc_thread_count 0). The HG RPC callback only
 * queues it, so handlers never run inside HG_Trigger() and a handler's own
 * blocking calls never nest HG_Trigger().
 */
#include "margo_internal.h"
#include "margo_progress.h"

#include "abt/abt_block.h"
#include "na/na_runtime.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t margo_lock = PTHREAD_MUTEX_INITIALIZER;

/* Threads waiting for the driving role or for an operation on a driven
 * instance sleep here; every completion and every role release wakes them. */
pthread_cond_t margo_driver_cond = PTHREAD_COND_INITIALIZER;
static bool margo_driver_active;                 /* (L) the role is taken     */
static unsigned int margo_role_waiters;          /* (L) threads that want it  */
static uint64_t margo_role_generation;           /* (L) bumped at every take  */
static struct margo_instance *margo_driven_head; /* (L) creation order */
/* Bumped whenever an instance leaves that list: a round that lent the role
 * for an abt.h wait must not trust its snapshot of the list afterwards. */
static uint64_t margo_driven_epoch; /* (L) */
/* Every instance, for the caller-context handlers any blocked thread may
 * run (L). */
static struct margo_instance *margo_all_head;
/* Instances with a progress thread whose handlers run in callers' threads:
 * while there are some, a driver never sleeps long in one HG_Progress(),
 * since their handlers are queued by another thread (L). */
static unsigned int margo_caller_pt_count;

/*
 * Threads that hold an Argobots execution stream (a ULT, the primary
 * thread) and block in a Margo call give the stream up while they sleep
 * and are put back in line by whoever wakes them, in the order they went
 * to sleep (abt_sleep, abt_block.h): so the ULTs of one stream run one at
 * a time, in an order a run on the simulator repeats. (L)
 */
struct margo_sleeper {
    margo_pred_t pred; /* its condition, if it waits for one */
    void *arg;
    struct margo_instance *mid; /* the instance its call is on, if any */
    bool may_drive;             /* wake it when the driving role is free */
    bool runs_callers;          /* wake it for queued caller-context handlers */
    bool wants_role;            /* in margo_role_take(): hand it the role */
    bool woken;
    struct abt_sleep s;
    struct margo_sleeper *next;
};
static struct margo_sleeper *margo_sleepers; /* (L) in arrival order */
/* Progress threads at work in their loop: not waiting in the fabric, not
 * idle, not running handlers (which may block anywhere). A simulated
 * fabric keeps its clock while one of them may be about to hand a request
 * to a handler (margo_runtime_busy). */
atomic_int margo_pt_outside;
/* The role handed to a margo_role_take() sleeper, still on its way. */
static struct margo_sleeper *margo_role_reserved; /* (L) */

_Thread_local struct margo_tls margo_tls;

static bool margo_caller_work_queued(void);

/*
 * Put back in line the sleepers whose wait is over, in arrival order:
 * those whose condition holds; if the role is free, the first that
 * asked for it by name (it is handed over), else the first that may
 * drive; if caller-context handlers wait, the first that may run them.
 * Lock held.
 */
static void
margo_sleepers_wake(void)
{
    bool successor = !margo_driver_active, callers = true;
    struct margo_sleeper *s;

    if (margo_sleepers == NULL)
        return;
    for (s = margo_sleepers; s; s = s->next) {
        if (!s->woken && s->wants_role && !margo_driver_active) {
            margo_driver_active = true;
            margo_role_reserved = s;
            successor = false;
            s->woken = true;
            abt_sleep_wake(&s->s);
        }
    }
    for (s = margo_sleepers; s; s = s->next) {
        if (s->woken || s->wants_role)
            continue;
        if (s->pred != NULL && s->pred(s->arg)) {
            s->woken = true;
        } else if (s->mid != NULL && s->mid->progress_lent &&
                   !s->mid->progress_borrowed) {
            /* Its instance's progress thread waits in abt.h: make its
             * progress meanwhile (margo_block_until_held). */
            s->woken = true;
        } else if (successor && s->may_drive) {
            successor = false;
            s->woken = true;
        } else if (callers && s->runs_callers) {
            callers = false;
            s->woken = margo_caller_work_queued();
        }
        if (s->woken)
            abt_sleep_wake(&s->s);
    }
}

void
margo_wake(struct margo_instance *mid)
{
    (void) mid;
    /* Every blocked thread sleeps on the one condition: a thread blocked
     * on one instance may run handlers or drive progress for another. */
    margo_sleepers_wake();
    pthread_cond_broadcast(&margo_driver_cond);
}

/* ms from now on CLOCK_REALTIME, for a timed condition wait. */
static void
margo_abstime(struct timespec *ts, unsigned int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long) (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/*
 * Sleep until woken: a thread holding a stream gives it up and gets it
 * back in line (margo_sleepers_wake); any other thread sleeps on
 * margo_driver_cond. At most timeout_ms (0: no limit). Lock held on entry
 * and exit.
 */
static void
margo_sleep_on(struct margo_sleeper *me, unsigned int timeout_ms)
{
    struct margo_sleeper **p = &margo_sleepers;
    struct timespec ts;

    while (*p)
        p = &(*p)->next;
    me->next = NULL;
    me->woken = false;
    *p = me;
    if (timeout_ms > 0)
        margo_abstime(&ts, timeout_ms);
    if (abt_sleep_begin(&me->s)) {
        pthread_mutex_unlock(&margo_lock);
        (void) abt_sleep_end(&me->s, timeout_ms > 0 ? &ts : NULL);
        pthread_mutex_lock(&margo_lock);
    } else if (timeout_ms > 0) {
        (void) margo_cond_wait(&margo_driver_cond, &ts);
    } else {
        margo_cond_wait(&margo_driver_cond, NULL);
    }
    for (p = &margo_sleepers; *p; p = &(*p)->next) {
        if (*p == me) {
            *p = me->next;
            break;
        }
    }
}

bool
margo_thread_must_defer(const struct margo_instance *mid)
{
    (void) mid;
    return margo_tls.handler_depth > 0 || margo_tls.own_instance != NULL;
}

bool
margo_thread_in_handler_of(const struct margo_instance *mid)
{
    for (int i = 0; i < margo_tls.handler_depth; i++)
        if (margo_tls.handler_of[i] == mid)
            return true;
    return false;
}

/* ---- Handlers -------------------------------------------------------- */

hg_return_t
margo_rpc_dispatch(hg_handle_t handle, void (*fn)(hg_handle_t))
{
    const struct hg_info *info = HG_Get_info(handle);
    struct margo_instance *mid;
    struct margo_handler_entry *e;
    ABT_pool pool;

    if (info == NULL || fn == NULL)
        return HG_INVALID_ARG;
    mid = margo_instance_of_class(info->hg_class);
    if (mid == NULL) {
        /* A handler registered on a class Margo does not own has no queue
         * to go to; running it here is the only way it runs at all. */
        fn(handle);
        return HG_SUCCESS;
    }

    pool = margo_rpc_pool_of(mid, info->id);
    e = malloc(sizeof(*e));
    pthread_mutex_lock(&margo_lock);
    if (mid->finalize_requested || e == NULL) {
        hg_return_t why = e ? HG_CANCELED : HG_NOMEM;

        pthread_mutex_unlock(&margo_lock);
        free(e);
        margo_log(mid, MARGO_LOG_DEBUG, "margo: refusing RPC %llu: %s",
                  (unsigned long long) info->id, HG_Error_to_string(why));
        /* Drop the handler's reference; returning an error makes HG answer
         * the origin with it (HG holds its own reference meanwhile), so
         * the origin fails at once instead of waiting for a timeout. */
        HG_Destroy(handle);
        return why;
    }
    memset(e, 0, sizeof(*e));
    e->handle = handle;
    e->fn = fn;
    margo_schedule_work(mid, pool, e);
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

void
margo_queue_work(struct margo_instance *mid, struct margo_handler_entry *e)
{
    e->next = NULL;
    if (mid->queue_tail)
        mid->queue_tail->next = e;
    else
        mid->queue_head = e;
    mid->queue_tail = e;
    margo_wake(mid);
}

bool
margo_unqueue_work(struct margo_instance *mid, struct margo_handler_entry *e)
{
    struct margo_handler_entry **p, *prev = NULL;

    for (p = &mid->queue_head; *p; prev = *p, p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            if (mid->queue_tail == e)
                mid->queue_tail = prev;
            return true;
        }
    }
    return false;
}

/* Whether threads blocked in Margo calls (rather than dedicated threads)
 * run mid's handlers. */
static bool
margo_callers_run_handlers(const struct margo_instance *mid)
{
    return mid->rpc_thread_count == 0 ||
           (mid->rpc_thread_count < 0 && !mid->has_progress_thread);
}

/* Whether a caller-context handler of any instance waits to run. */
static bool
margo_caller_work_queued(void)
{
    for (struct margo_instance *m = margo_all_head; m; m = m->all_next)
        if (m->queue_head != NULL && !m->teardown_started &&
            margo_callers_run_handlers(m))
            return true;
    return false;
}

/*
 * Pop and run one queued handler of mid on this thread. Lock held on entry
 * and exit, released while the handler runs. False if none was run.
 */
void
margo_run_entry(struct margo_instance *mid, struct margo_handler_entry *e,
                bool as_ult)
{
    const struct margo_instance *saved_own = margo_tls.own_instance;

    if (as_ult) {
        /* A ULT on one of the instance's pools: like a handler thread,
         * this worker is the instance's while the work runs. */
        pthread_mutex_lock(&margo_lock);
        mid->running_handlers++;
        pthread_mutex_unlock(&margo_lock);
        margo_tls.own_instance = mid;
    }
    margo_tls.handler_of[margo_tls.handler_depth++] = mid;
    if (e->work) {
        /* The entry belongs to the work (a timer's). */
        e->work(e->arg);
    } else {
        const struct hg_info *info = HG_Get_info(e->handle);
        hg_id_t saved = margo_rpc_id_enter(mid, info ? info->id : 0);

        e->fn(e->handle);
        margo_rpc_id_leave(mid, saved);
        free(e);
    }
    margo_tls.handler_depth--;
    if (as_ult) {
        margo_tls.own_instance = saved_own;
        pthread_mutex_lock(&margo_lock);
        mid->running_handlers--;
        margo_wake(mid);
        pthread_mutex_unlock(&margo_lock);
    }
}

/*
 * Whether this thread may run a caller-context handler nested in its own
 * blocking call. The primary ULT at its own level may, as Margo's primary
 * stream would run the handler's ULT while it waits; a ULT or a handler
 * may not, since what it holds across its call (a lock a service keeps
 * across a transfer) may be what the handler waits for, and the handler
 * would then wait under it forever: their handlers become ULTs of their
 * pools (margo_run_one_handler). A thread without a stream runs them as
 * before.
 */
static bool
margo_may_nest(void)
{
    ABT_bool primary = ABT_FALSE;

    if (!abt_stream_held())
        return true;
    return margo_tls.handler_depth == 0 &&
           ABT_self_is_primary(&primary) == ABT_SUCCESS && primary;
}

bool
margo_run_one_handler(struct margo_instance *mid)
{
    struct margo_handler_entry *e = mid->queue_head;

    if (e == NULL)
        return false;
    if (!margo_may_nest()) {
        /* Lock held throughout: ULT creation does not call back. */
        while ((e = mid->queue_head) != NULL) {
            mid->queue_head = e->next;
            if (mid->queue_head == NULL)
                mid->queue_tail = NULL;
            if (e->pool == ABT_POOL_NULL && mid->npools)
                e->pool = mid->pools[mid->config.primary_pool];
            margo_spawn_work(mid, e);
        }
        return true;
    }
    if (margo_tls.handler_depth >= MARGO_MAX_HANDLER_DEPTH)
        return false;
    mid->queue_head = e->next;
    if (mid->queue_head == NULL)
        mid->queue_tail = NULL;
    mid->running_handlers++;
    pthread_mutex_unlock(&margo_lock);

    margo_run_entry(mid, e, false);

    pthread_mutex_lock(&margo_lock);
    mid->running_handlers--;
    margo_wake(mid);
    return true;
}

/*
 * Run one caller-context handler of any instance, the one waited on first.
 * Like Argobots' primary pool, which every instance without handler
 * threads shares, such handlers run in any thread blocked in a Margo call
 * that is not an instance's own thread. Lock held. False if none ran.
 */
static bool
margo_run_caller_handler(struct margo_instance *mid)
{
    struct margo_instance *m;

    if (margo_tls.own_instance != NULL)
        return false;
    if (margo_callers_run_handlers(mid) && margo_run_one_handler(mid))
        return true;
    for (m = margo_all_head; m; m = m->all_next)
        if (m != mid && !m->teardown_started && margo_callers_run_handlers(m) &&
            margo_run_one_handler(m))
            return true;
    return false;
}

/*
 * The probe a simulated fabric asks before its clock jumps to a waiter's
 * deadline (na_runtime.h): whether a progress thread is at work outside
 * the fabric, or a ULT of another stream waits to run or runs. Handlers
 * queued for the callers' threads do not count: the waiter may be the
 * thread that is to run them once its wait ends.
 */
static bool
margo_runtime_busy(void)
{
    return atomic_load(&margo_pt_outside) > 0 || abt_busy_elsewhere();
}

void
margo_pt_count(bool on)
{
    if (margo_tls.pt_counted != on) {
        atomic_fetch_add(&margo_pt_outside, on ? 1 : -1);
        margo_tls.pt_counted = on;
    }
}

/* Around a wait, in a simulated fabric or on a condition: the calling
 * thread is not about to act meanwhile. */
void
margo_idle_enter(void)
{
    margo_tls.pt_counted_before_wait = margo_tls.pt_counted;
    margo_pt_count(false);
    abt_idle_enter();
}

void
margo_idle_leave(void)
{
    abt_idle_leave();
    margo_pt_count(margo_tls.pt_counted_before_wait);
}

int
margo_cond_wait(pthread_cond_t *cond, const struct timespec *abstime)
{
    int rc;

    margo_idle_enter();
    rc = abstime != NULL ? pthread_cond_timedwait(cond, &margo_lock, abstime)
                         : pthread_cond_wait(cond, &margo_lock);
    margo_idle_leave();
    return rc;
}

static const struct na_runtime_hooks margo_runtime_hooks = {
    .busy = margo_runtime_busy,
    .wait_enter = margo_idle_enter,
    .wait_leave = margo_idle_leave,
};

void
margo_all_add(struct margo_instance *mid)
{
    struct margo_instance **p = &margo_all_head;

    while (*p)
        p = &(*p)->all_next;
    mid->all_next = NULL;
    *p = mid;
    /* A simulated fabric keeps its clock while ULTs wait to run. */
    na_runtime_set_hooks(&margo_runtime_hooks);
    if (mid->has_progress_thread && margo_callers_run_handlers(mid))
        margo_caller_pt_count++;
}

void
margo_all_remove(struct margo_instance *mid)
{
    for (struct margo_instance **p = &margo_all_head; *p; p = &(*p)->all_next) {
        if (*p == mid) {
            *p = mid->all_next;
            if (mid->has_progress_thread && margo_callers_run_handlers(mid))
                margo_caller_pt_count--;
            return;
        }
    }
}

/* ---- Progress -------------------------------------------------------- */

/*
 * Run what is queued, then progress for up to timeout_ms (0 when something
 * already ran), then run what that queued. Lock not held. Returns how much
 * happened; 0 means the instance had nothing to do.
 */
/* Cut a progress wait short to the next timer or margo_thread_sleep()
 * deadline of this thread. */
static unsigned int
margo_wait_slice(struct margo_instance *mid, unsigned int timeout_ms)
{
    uint64_t left = margo_timers_next_ns(mid), now, deadline;

    /* This thread's own sleep, and any thread sleeping on mid: on the
     * simulator's clock, progress must not carry time past a sleeper's
     * deadline before the sleeper wakes up. */
    pthread_mutex_lock(&margo_lock);
    deadline = margo_sleepers_next(mid);
    if (deadline) {
        now = HG_Clock_now(mid->hg_class);
        if (deadline <= now) {
            left = 0;
            margo_wake(mid);
        } else if (deadline - now < left) {
            left = deadline - now;
        }
    }
    pthread_mutex_unlock(&margo_lock);
    if (left == UINT64_MAX)
        return timeout_ms;
    left = (left + 999999u) / 1000000u;
    return left < timeout_ms ? (unsigned int) left : timeout_ms;
}

unsigned int
margo_progress_instance(struct margo_instance *mid, unsigned int timeout_ms)
{
    unsigned int activity = 0, n = 0;
    hg_return_t ret;

    margo_timers_check(mid);
    if (timeout_ms > 0)
        timeout_ms = margo_wait_slice(mid, timeout_ms);
    atomic_fetch_add(&mid->num_trigger_calls, 1);
    if (HG_Trigger(mid->hg_context, 0, MARGO_TRIGGER_BATCH, &n) == HG_SUCCESS)
        activity += n;
    atomic_fetch_add(&mid->num_progress_calls, 1);
    ret = HG_Progress(mid->hg_context, activity ? 0 : timeout_ms);
    if (ret == HG_SUCCESS) {
        activity++;
        n = 0;
        atomic_fetch_add(&mid->num_trigger_calls, 1);
        if (HG_Trigger(mid->hg_context, 0, MARGO_TRIGGER_BATCH, &n) ==
            HG_SUCCESS)
            activity += n;
    } else if (ret != HG_TIMEOUT) {
        margo_log(mid, MARGO_LOG_ERROR, "margo: HG_Progress: %s",
                  HG_Error_to_string(ret));
    }
    margo_timers_check(mid);
    return activity;
}

/*
 * How long an idle loop of mid blocks in HG_Progress(): the instance's
 * progress timeout upper bound, capped at MARGO_BLOCK_MS so that stop
 * requests and waiting finalizers are still seen in time.
 */
unsigned int
margo_idle_ms(struct margo_instance *mid)
{
    unsigned int ub = atomic_load(&mid->progress_timeout_ub_ms);

    return ub < MARGO_BLOCK_MS ? ub : MARGO_BLOCK_MS;
}

/* How a round may wait when no instance had anything to do. */
enum margo_round {
    MARGO_ROUND_BLOCK,  /* sleep in HG_Progress() (blocking calls)        */
    MARGO_ROUND_POKE,   /* never on a real clock; on a virtual one, let
                           time move so that a margo_test() loop ends     */
    MARGO_ROUND_NOWAIT, /* never: other ULTs of the stream wait to run   */
};

/*
 * One round over every driven instance. The caller holds the driving role,
 * which is what keeps the list (and the instances on it) stable while the
 * lock is released: an instance leaves the list only in the hands of the
 * role's holder. Lock not held.
 */
static void
margo_drive_round(enum margo_round mode, bool short_slice)
{
    struct margo_instance *stack_set[8], **set = stack_set, *m;
    size_t count = 0, i, cap = 8;
    unsigned int activity = 0;
    bool all_virtual = true, stale = false;
    uint64_t epoch;

    pthread_mutex_lock(&margo_lock);
    epoch = margo_driven_epoch;
    for (m = margo_driven_head; m; m = m->driven_next) {
        if (count == cap) {
            struct margo_instance **bigger = malloc(2 * cap * sizeof(*bigger));
            if (bigger == NULL)
                break;
            memcpy(bigger, set, count * sizeof(*set));
            if (set != stack_set)
                free(set);
            set = bigger;
            cap *= 2;
        }
        set[count++] = m;
        all_virtual = all_virtual && m->virtual_clock;
    }
    short_slice = short_slice || margo_caller_pt_count > 0;
    pthread_mutex_unlock(&margo_lock);

    /* A handler or callback that waits in abt.h lends the role out, and
     * the borrower may unlist (and free) instances of the snapshot: the
     * round ends there. */
    for (i = 0; i < count && !stale; i++) {
        activity += margo_progress_instance(set[i], 0);
        pthread_mutex_lock(&margo_lock);
        stale = margo_driven_epoch != epoch;
        if (!stale && margo_callers_run_handlers(set[i]))
            while (!stale && margo_run_one_handler(set[i])) {
                activity++;
                stale = margo_driven_epoch != epoch;
            }
        pthread_mutex_unlock(&margo_lock);
    }

    /*
     * Nothing anywhere: sleep in HG_Progress() (in virtual time on the
     * simulated fabric, whose wait also returns as soon as a completion
     * lands on any context). With several instances each gets a short
     * slice, so that traffic arriving for one is not held up by a long
     * wait on another.
     */
    if (activity == 0 && count > 0 && !stale && mode != MARGO_ROUND_NOWAIT &&
        (mode == MARGO_ROUND_BLOCK || all_virtual)) {
        unsigned int slice =
            count == 1 && mode == MARGO_ROUND_BLOCK && !short_slice
                ? margo_idle_ms(set[0])
                : 1;
        for (i = 0; i < count && activity == 0; i++)
            activity += margo_progress_instance(set[i], slice);
    }
    if (set != stack_set)
        free(set);
}

/*
 * Take the driving role, waiting for it if another thread has it. Lock
 * held. The caller must not already hold it. A thread holding a stream
 * waits as a sleeper, which the holder hands the role to between rounds.
 */
static void
margo_role_take(void)
{
    struct margo_sleeper me;

    memset(&me, 0, sizeof(me));
    me.wants_role = true;
    while (margo_driver_active && margo_role_reserved != &me) {
        if (abt_stream_held()) {
            margo_sleep_on(&me, 0);
            continue;
        }
        margo_role_waiters++;
        margo_cond_wait(&margo_driver_cond, NULL);
        margo_role_waiters--;
    }
    if (margo_role_reserved == &me)
        margo_role_reserved = NULL;
    margo_driver_active = true;
    margo_role_generation++;
    margo_tls.drive_depth++;
}

/* Whether a thread waits in margo_role_take() (lock held). */
static bool
margo_role_wanted(void)
{
    if (margo_role_waiters > 0)
        return true;
    for (struct margo_sleeper *s = margo_sleepers; s; s = s->next)
        if (s->wants_role)
            return true;
    return false;
}

/*
 * Give the role back. If others want it, wait until one of them has taken
 * it or given up, so a thread that drives in a loop cannot starve a thread
 * that needs the role once (finalize, to unlist its instance); a thread
 * holding a stream hands it to the first sleeper that asked instead,
 * since that sleeper may need the stream to take it. Lock held.
 */
static void
margo_role_release(void)
{
    uint64_t gen = margo_role_generation;

    margo_tls.drive_depth--;
    margo_driver_active = false;
    margo_wake(NULL);
    if (abt_stream_held())
        return;
    while (margo_role_waiters > 0 && margo_role_generation == gen &&
           !margo_driver_active)
        margo_cond_wait(&margo_driver_cond, NULL);
}

/*
 * A thread about to wait in an abt.h call (abt_set_wait_hooks). In
 * Argobots that wait switches to the stream's other ULTs, Margo's
 * progress loop among them, so the ULTs waited for can finish their own
 * Margo calls. Here the thread gives up what it drives until the wait is
 * over: the driving role (another blocked thread takes it), or, on a
 * progress thread, the instance's progress (a thread blocked on the
 * instance makes it meanwhile).
 */
static void
margo_abt_wait_before(void)
{
    if (margo_tls.drive_depth == 0 && margo_tls.progress_of == NULL)
        return;
    pthread_mutex_lock(&margo_lock);
    if (margo_tls.drive_depth > 0) {
        margo_tls.lent_depth = margo_tls.drive_depth;
        margo_tls.drive_depth = 0;
        margo_driver_active = false;
    }
    if (margo_tls.progress_of != NULL) {
        margo_tls.progress_of->progress_lent = true;
        margo_tls.lent_progress = margo_tls.progress_of;
    }
    margo_wake(NULL);
    pthread_mutex_unlock(&margo_lock);
}

/* The wait is over: take back what was lent, once the borrower is done. */
static void
margo_abt_wait_after(void)
{
    struct margo_instance *mid = margo_tls.lent_progress;

    if (margo_tls.lent_depth == 0 && mid == NULL)
        return;
    pthread_mutex_lock(&margo_lock);
    if (mid != NULL) {
        /* No new borrower from here; the current one gives it back
         * within its short slice. */
        mid->progress_lent = false;
        while (mid->progress_borrowed)
            margo_cond_wait(&margo_driver_cond, NULL);
        margo_tls.lent_progress = NULL;
    }
    if (margo_tls.lent_depth > 0) {
        int depth = margo_tls.lent_depth;

        margo_tls.lent_depth = 0;
        margo_role_take();
        margo_tls.drive_depth = depth;
    }
    pthread_mutex_unlock(&margo_lock);
}

void
margo_abt_hooks_install(void)
{
    abt_set_wait_hooks(margo_abt_wait_before, margo_abt_wait_after);
}

void
margo_driven_add(struct margo_instance *mid)
{
    struct margo_instance **p = &margo_driven_head;

    while (*p)
        p = &(*p)->driven_next;
    mid->driven_next = NULL;
    *p = mid;
    mid->driven = true;
}

void
margo_driven_remove(struct margo_instance *mid)
{
    struct margo_instance **p;
    bool took = false;

    if (!mid->driven)
        return;
    if (margo_tls.drive_depth == 0) {
        margo_role_take();
        took = true;
    }
    for (p = &margo_driven_head; *p; p = &(*p)->driven_next) {
        if (*p == mid) {
            *p = mid->driven_next;
            break;
        }
    }
    mid->driven = false;
    margo_driven_epoch++;
    if (took)
        margo_role_release();
}

/* ---- Blocking waits -------------------------------------------------- */

static void
margo_timed_cond_wait(pthread_cond_t *cond, unsigned int ms)
{
    struct timespec ts;

    margo_abstime(&ts, ms);
    (void) margo_cond_wait(cond, &ts);
}

/*
 * If mid's progress thread waits in abt.h (maybe for this very thread),
 * make its progress for a short slice, since the progress thread takes
 * it back as soon as its wait is over. Lock held. False if it was not
 * lent, or another thread has it.
 */
static bool
margo_borrow_progress(struct margo_instance *mid)
{
    if (!mid->has_progress_thread || !mid->progress_lent ||
        mid->progress_borrowed)
        return false;
    mid->progress_borrowed = true;
    pthread_mutex_unlock(&margo_lock);
    (void) margo_progress_instance(mid, 1);
    pthread_mutex_lock(&margo_lock);
    if (mid->rpc_thread_count < 0)
        (void) margo_run_one_handler(mid);
    mid->progress_borrowed = false;
    margo_wake(mid);
    return true;
}

/*
 * Whether a thread blocked on mid, which has a progress thread, should
 * drive the instances without one meanwhile: a caller thread blocked on
 * a client with a progress thread is what moves a server instance
 * without one in the same process (Argobots' primary execution stream
 * runs both in real Margo). Lock held.
 */
static bool
margo_serves_driven(const struct margo_instance *mid)
{
    return mid->has_progress_thread && margo_tls.own_instance == NULL &&
           margo_driven_head != NULL && !margo_driver_active;
}

/* margo_block_until() for a thread that holds no execution stream: it
 * sleeps on margo_driver_cond, and drives one round at a time. */
static void
margo_block_until_free(struct margo_instance *mid, margo_pred_t pred, void *arg,
                       bool counted)
{
    /* For the execution stream that may be running this call (a handler or
     * a ULT on a pool), the whole call is a blocked wait, whether this
     * thread drives progress or sleeps: the stream must start a spare
     * worker for the pool's other work, which may be what ends the wait
     * (a handler that calls its own instance). */
    bool blocked = !pred(arg);

    if (blocked)
        abt_block_begin();
    if (counted)
        mid->active_calls++;
    while (!pred(arg)) {
        bool serve_driven;

        if (mid->has_progress_thread && margo_tls.is_progress_thread &&
            margo_tls.own_instance == mid) {
            /* A handler running on the progress thread: nobody else
             * moves this instance, so this thread must. */
            pthread_mutex_unlock(&margo_lock);
            (void) margo_progress_instance(mid, margo_idle_ms(mid));
            pthread_mutex_lock(&margo_lock);
            if (mid->rpc_thread_count < 0)
                (void) margo_run_one_handler(mid);
            continue;
        }
        if (margo_run_caller_handler(mid))
            continue;
        if (margo_borrow_progress(mid))
            continue;
        serve_driven = margo_serves_driven(mid);
        if (mid->has_progress_thread && !serve_driven) {
            /* Finalize's own waits wake up now and then, to look at its
             * grace period on the NA clock; so does a caller thread that
             * may have to serve instances without a progress thread. */
            if (counted && margo_driven_head == NULL &&
                margo_tls.deadline_ns == 0)
                margo_cond_wait(&margo_driver_cond, NULL);
            else
                margo_timed_cond_wait(&margo_driver_cond,
                                      counted ? 1 : MARGO_BLOCK_MS);
            continue;
        }
        if (margo_tls.drive_depth > 0) {
            /* A handler this thread runs made a blocking call: keep
             * driving from here. */
            pthread_mutex_unlock(&margo_lock);
            margo_drive_round(MARGO_ROUND_BLOCK, serve_driven);
            pthread_mutex_lock(&margo_lock);
            continue;
        }
        if (margo_driver_active) {
            margo_role_waiters++;
            margo_cond_wait(&margo_driver_cond, NULL);
            margo_role_waiters--;
            /* The holder may be waiting to hand the role over. */
            pthread_cond_broadcast(&margo_driver_cond);
            continue;
        }
        margo_role_take();
        pthread_mutex_unlock(&margo_lock);
        margo_drive_round(MARGO_ROUND_BLOCK, serve_driven);
        pthread_mutex_lock(&margo_lock);
        margo_role_release();
    }
    if (counted) {
        mid->active_calls--;
        margo_wake(mid);
    }
    if (blocked) {
        /* Getting the stream back may wait for the ULT that runs there,
         * which may need the lock. */
        pthread_mutex_unlock(&margo_lock);
        abt_block_end();
        pthread_mutex_lock(&margo_lock);
    }
}

/*
 * One round for the thread holding the role, on a stream: it keeps the
 * stream while it makes the round, so the round's handlers and callbacks
 * run between the stream's other ULTs and never beside them, and it
 * lets the ULTs that wait run before the next round, as Margo's progress
 * loop does from its ULT. It sleeps in HG_Progress() only when none
 * waits. Lock held on entry and exit.
 */
static void
margo_drive_step(bool short_slice)
{
    bool busy = abt_stream_busy();

    pthread_mutex_unlock(&margo_lock);
    margo_drive_round(busy ? MARGO_ROUND_NOWAIT : MARGO_ROUND_BLOCK,
                      short_slice);
    pthread_mutex_lock(&margo_lock);
    margo_sleepers_wake();
    if (abt_stream_busy()) {
        pthread_mutex_unlock(&margo_lock);
        abt_stream_yield();
        pthread_mutex_lock(&margo_lock);
    }
}

/* margo_block_until() for a thread that holds an execution stream: it
 * drives holding it, and sleeps without it (margo_sleep_on). */
static void
margo_block_until_held(struct margo_instance *mid, margo_pred_t pred, void *arg,
                       bool counted)
{
    struct margo_sleeper me;
    bool handed = false;

    memset(&me, 0, sizeof(me));
    me.pred = pred;
    me.arg = arg;
    me.mid = mid;
    me.runs_callers = margo_tls.own_instance == NULL;
    if (counted)
        mid->active_calls++;
    while (!pred(arg)) {
        bool serve_driven;

        if (margo_run_caller_handler(mid))
            continue;
        if (margo_borrow_progress(mid))
            continue;
        serve_driven = margo_serves_driven(mid);
        if (mid->has_progress_thread && !serve_driven) {
            me.may_drive = false;
            margo_sleep_on(&me, counted && margo_driven_head == NULL &&
                                        margo_tls.deadline_ns == 0
                                    ? 0
                                    : (counted ? 1 : MARGO_BLOCK_MS));
            continue;
        }
        if (margo_tls.drive_depth > 0) {
            /* A handler this thread runs made a blocking call: keep
             * driving from here. */
            margo_drive_step(serve_driven);
            continue;
        }
        if (margo_driver_active || (handed && margo_role_waiters > 0)) {
            /* Woken when the role is free or the condition holds, never
             * by a timer, which would make the order the machine's; a
             * thread without a stream that asked for the role gets a
             * moment to take it. */
            me.may_drive = true;
            margo_sleep_on(&me, handed ? 1 : 0);
            handed = false;
            continue;
        }
        margo_role_take();
        while (!pred(arg) && !margo_role_wanted())
            if (!margo_run_caller_handler(mid))
                margo_drive_step(serve_driven);
        handed = !pred(arg);
        margo_role_release();
    }
    if (counted) {
        mid->active_calls--;
        margo_wake(mid);
    }
}

void
margo_block_until(struct margo_instance *mid, margo_pred_t pred, void *arg,
                  bool counted)
{
    if (abt_stream_held())
        margo_block_until_held(mid, pred, arg, counted);
    else
        margo_block_until_free(mid, pred, arg, counted);
}

void
margo_poke_progress(struct margo_instance *mid)
{
    if (margo_run_caller_handler(mid))
        return;
    if (mid->has_progress_thread &&
        (margo_tls.own_instance != NULL || margo_driven_head == NULL))
        return;
    if (margo_tls.drive_depth > 0) {
        pthread_mutex_unlock(&margo_lock);
        margo_drive_round(MARGO_ROUND_POKE, false);
        pthread_mutex_lock(&margo_lock);
        return;
    }
    if (margo_driver_active)
        return;
    margo_role_take();
    pthread_mutex_unlock(&margo_lock);
    margo_drive_round(MARGO_ROUND_POKE, false);
    pthread_mutex_lock(&margo_lock);
    margo_role_release();
}
