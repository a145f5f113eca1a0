/*
 * An execution stream's run token: Argobots' rule that the ULTs of one
 * stream run one at a time, in their pools' order, and switch only at
 * yield points.
 *
 * Exactly one pthread holds xs->token while it runs xs's ULT code (the
 * primary thread holds the primary stream's from ABT_init). A worker takes
 * the free token to pop the next ULT (abt_runtime.c) and keeps it while
 * the ULT runs. At a yield point the holder gives the token up
 * (abt_token_release_locked): to the first direct waiter if there is one,
 * else the token is freed and the stream kicked, so an idle worker, or a
 * spare started for the purpose, runs the next ULT in pool order.
 *
 * A ULT that gave the token up gets it back in Argobots' order: it is
 * pushed to its pool's tail as a resume marker (t->waiter) and sleeps on
 * its own pthread, which keeps its stack, until a worker of its stream
 * pops the marker and hands the token over (abt_token_dispatch_locked).
 * The only shortcut: when the token is free and none of the stream's
 * pools holds work, the marker would be popped at once, so the ULT takes
 * the token directly. A pthread with no pool to go back to (no ULT, a pool
 * its stream no longer serves, a user pool that made no unit) queues on
 * xs->token_q instead and is granted the token before the pools are
 * looked at again.
 *
 * Every pthread waiting for a grant is counted in xs->blocked, and the
 * granter takes it out, so "workers - blocked - idle" is the number of
 * awake workers: the token holder and workers about to look at the
 * pools. The lock order of abt_internal.h holds: a pthread waits for the
 * token holding no lock other than the caller's ABT mutex (never a
 * parking-lot bucket or a library's own mutex), since the token holder
 * may need those without passing a yield point.
 */
#include "abt/abt_internal.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

static void
grant_locked(struct abt_waiter *w)
{
    w->granted = 1;
    w->xs->blocked--;
    pthread_cond_signal(&w->cv);
}

void
abt_token_release_locked(ABT_xstream xs)
{
    struct abt_waiter *w = xs->token_q;
    if (w) {
        xs->token_q = w->next;
        grant_locked(w);
        return;
    }
    xs->token = 0;
    abt_xs_kick_locked(xs);
}

static void
queue_direct_locked(ABT_xstream xs, struct abt_waiter *w)
{
    struct abt_waiter **pp = &xs->token_q;
    while (*pp)
        pp = &(*pp)->next;
    w->next = NULL;
    *pp = w;
}

void
abt_token_acquire_locked(ABT_xstream xs)
{
    if (!xs->token) {
        xs->token = 1;
        return;
    }
    struct abt_waiter w;
    memset(&w, 0, sizeof(w));
    w.xs = xs;
    pthread_cond_init(&w.cv, NULL);
    xs->blocked++;
    queue_direct_locked(xs, &w);
    while (!w.granted)
        pthread_cond_wait(&w.cv, &abt_g.lock);
    pthread_cond_destroy(&w.cv);
}

int
abt_token_dispatch_locked(ABT_xstream xs, ABT_thread t)
{
    struct abt_waiter *w = t->waiter;
    if (!w)
        return 0;
    /* The pop counted t active in its pool. */
    if (w->xs != xs) {
        /* It blocked on another stream, whose pthread holds its stack:
         * that stream runs it next, and this one looks further. */
        t->pool->active--;
        t->next = NULL;
        ABT_thread *pp = &w->xs->ready;
        while (*pp)
            pp = &(*pp)->next;
        *pp = t;
        abt_token_release_locked(xs);
        abt_xs_kick_locked(w->xs);
        return 1;
    }
    if (t->primary) /* the primary ULT is never counted in its pool */
        t->pool->active--;
    t->waiter = NULL;
    grant_locked(w);
    return 1;
}

/* The pool a resuming ULT goes back to: its last pool, the primary
 * stream's first pool for the primary ULT; NULL if xs does not serve it. */
static ABT_pool
resume_pool_locked(ABT_xstream xs, ABT_thread t)
{
    ABT_sched s = xs->sched;
    if (!t || !s || s->num_pools == 0)
        return ABT_POOL_NULL;
    ABT_pool p = t->primary ? s->pools[0] : t->pool;
    return abt_sched_uses_pool_locked(s, p) ? p : ABT_POOL_NULL;
}

/*
 * Puts t (s pthread waiting on w, counted in xs->blocked) back in line
 * for xs's token: its resume marker at its pool's tail, or, with no pool
 * to go back to, the direct queue. If the token is free and nothing waits
 * ahead, the marker would be popped at once: w is granted the token now.
 * Lock held (dropped to push to a user pool).
 */
static void
requeue_locked(ABT_xstream xs, ABT_thread t, struct abt_waiter *w)
{
    if (!xs->token && !abt_xs_has_work_locked(xs) && !xs->token_q) {
        xs->token = 1;
        grant_locked(w);
        return;
    }
    ABT_pool pool = resume_pool_locked(xs, t);
    if (pool) {
        t->waiter = w;
        if (!t->primary)
            pool->active--;
        __atomic_store_n(&t->state, ABT_THREAD_STATE_READY, __ATOMIC_RELAXED);
        if (!pool->user) {
            abt_pool_push_locked(pool, t);
            return;
        }
        pthread_mutex_unlock(&abt_g.lock);
        int ret = abt_pool_add_thread(pool, t);
        pthread_mutex_lock(&abt_g.lock);
        if (ret == ABT_SUCCESS)
            return;
        t->waiter = NULL;
        if (!t->primary)
            pool->active++;
    }
    if (!xs->token) {
        xs->token = 1;
        grant_locked(w);
        return;
    }
    queue_direct_locked(xs, w);
}

/*
 * The calling pthread, counted in xs->blocked, waits for xs's token; if
 * `holding`, it holds the token now and gives it up once it is queued
 * (a yield). Lock held on entry and exit (dropped to push to a user
 * pool). On return the caller holds the token.
 */
static void
wait_turn_locked(ABT_xstream xs, int holding)
{
    struct abt_waiter w;
    memset(&w, 0, sizeof(w));
    w.xs = xs;
    pthread_cond_init(&w.cv, NULL);
    if (holding) {
        /* Queued behind the stream's other work, then the token goes to
         * the next in line. */
        ABT_pool pool = resume_pool_locked(xs, abt_self.thread);
        if (pool) {
            ABT_thread t = abt_self.thread;
            t->waiter = &w;
            if (!t->primary)
                pool->active--;
            __atomic_store_n(&t->state, ABT_THREAD_STATE_READY,
                             __ATOMIC_RELAXED);
            if (!pool->user) {
                abt_pool_push_locked(pool, t);
            } else {
                pthread_mutex_unlock(&abt_g.lock);
                int ret = abt_pool_add_thread(pool, t);
                pthread_mutex_lock(&abt_g.lock);
                if (ret != ABT_SUCCESS) {
                    t->waiter = NULL;
                    if (!t->primary)
                        pool->active++;
                    pool = ABT_POOL_NULL;
                }
            }
        }
        if (!pool)
            queue_direct_locked(xs, &w);
        abt_token_release_locked(xs);
    } else {
        requeue_locked(xs, abt_self.thread, &w);
    }
    while (!w.granted)
        pthread_cond_wait(&w.cv, &abt_g.lock);
    pthread_cond_destroy(&w.cv);
}

void
abt_token_yield(void)
{
    ABT_xstream xs = abt_self.xs;
    pthread_mutex_lock(&abt_g.lock);
    if (!abt_xs_has_work_locked(xs)) {
        /* Argobots would pop the yielding ULT again at once; other
         * streams may want the core. */
        pthread_mutex_unlock(&abt_g.lock);
        sched_yield();
        return;
    }
    xs->blocked++;
    abt_self.token = 0;
    wait_turn_locked(xs, 1);
    abt_self.token = 1;
    pthread_mutex_unlock(&abt_g.lock);
    if (abt_self.thread)
        __atomic_store_n(&abt_self.thread->state, ABT_THREAD_STATE_RUNNING,
                         __ATOMIC_RELAXED);
}

void
abt_block_begin(void)
{
    ABT_xstream xs = abt_self.xs;
    if (!xs)
        return;
    if (abt_self.block_depth++ > 0 || !abt_self.token)
        return;
    if (abt_self.thread)
        __atomic_store_n(&abt_self.thread->state, ABT_THREAD_STATE_BLOCKED,
                         __ATOMIC_RELAXED);
    pthread_mutex_lock(&abt_g.lock);
    xs->blocked++;
    abt_self.token = 0;
    abt_self.released = 1;
    abt_token_release_locked(xs);
    pthread_mutex_unlock(&abt_g.lock);
}

void
abt_block_end(void)
{
    ABT_xstream xs = abt_self.xs;
    if (!xs)
        return;
    if (--abt_self.block_depth > 0 || !abt_self.released)
        return;
    abt_self.released = 0;
    struct abt_worker *dead = NULL;
    pthread_mutex_lock(&abt_g.lock);
    wait_turn_locked(xs, 0);
    abt_self.token = 1;
    if (xs->dead)
        abt_xs_reap_locked(xs, &dead);
    pthread_mutex_unlock(&abt_g.lock);
    abt_reap_join(dead);
    if (abt_self.thread)
        __atomic_store_n(&abt_self.thread->state, ABT_THREAD_STATE_RUNNING,
                         __ATOMIC_RELAXED);
}

/* ---- waits whose waker requeues ------------------------------------ */

int
abt_sleep_begin(struct abt_sleep *s)
{
    ABT_xstream xs = abt_self.xs;
    memset(s, 0, sizeof(*s));
    if (!xs || !abt_self.token || abt_self.block_depth > 0)
        return 0;
    s->armed = 1;
    s->thread = abt_self.thread;
    s->w.xs = xs;
    pthread_cond_init(&s->w.cv, NULL);
    if (s->thread)
        __atomic_store_n(&s->thread->state, ABT_THREAD_STATE_BLOCKED,
                         __ATOMIC_RELAXED);
    pthread_mutex_lock(&abt_g.lock);
    xs->blocked++;
    abt_self.token = 0;
    abt_token_release_locked(xs);
    pthread_mutex_unlock(&abt_g.lock);
    return 1;
}

void
abt_sleep_wake(struct abt_sleep *s)
{
    if (!s->armed)
        return;
    pthread_mutex_lock(&abt_g.lock);
    if (!s->queued) {
        s->queued = 1;
        requeue_locked(s->w.xs, s->thread, &s->w);
    }
    pthread_mutex_unlock(&abt_g.lock);
}

int
abt_sleep_end(struct abt_sleep *s, const struct timespec *abstime)
{
    if (!s->armed)
        return 0;
    ABT_xstream xs = s->w.xs;
    struct abt_worker *dead = NULL;
    pthread_mutex_lock(&abt_g.lock);
    int by_self = 0;
    while (!s->w.granted) {
        if (s->queued || !abstime) {
            pthread_cond_wait(&s->w.cv, &abt_g.lock);
        } else if (pthread_cond_timedwait(&s->w.cv, &abt_g.lock, abstime) ==
                       ETIMEDOUT &&
                   !s->queued) {
            s->queued = 1;
            by_self = 1;
            requeue_locked(xs, s->thread, &s->w);
        }
    }
    abt_self.token = 1;
    if (xs->dead)
        abt_xs_reap_locked(xs, &dead);
    pthread_mutex_unlock(&abt_g.lock);
    pthread_cond_destroy(&s->w.cv);
    /* s stays armed and queued: a waker that still finds it listed
     * leaves it alone. */
    abt_reap_join(dead);
    if (s->thread)
        __atomic_store_n(&s->thread->state, ABT_THREAD_STATE_RUNNING,
                         __ATOMIC_RELAXED);
    return !by_self;
}

int
abt_stream_held(void)
{
    return abt_self.xs && abt_self.token && abt_self.block_depth == 0;
}

int
abt_stream_busy(void)
{
    ABT_xstream xs = abt_self.xs;
    if (!xs || !abt_self.token || abt_self.block_depth > 0)
        return 0;
    pthread_mutex_lock(&abt_g.lock);
    int busy = abt_xs_has_work_locked(xs);
    pthread_mutex_unlock(&abt_g.lock);
    return busy;
}

void
abt_stream_yield(void)
{
    if (abt_self.xs && abt_self.token && abt_self.block_depth == 0)
        abt_token_yield();
}

/* ---- the layer above's wait hooks ------------------------------------- */

static void (*wait_hook_before)(void);
static void (*wait_hook_after)(void);

void
abt_set_wait_hooks(void (*before)(void), void (*after)(void))
{
    __atomic_store_n(&wait_hook_before, before, __ATOMIC_RELEASE);
    __atomic_store_n(&wait_hook_after, after, __ATOMIC_RELEASE);
}

void
abt_wait_hook_before(void)
{
    void (*fn)(void) = __atomic_load_n(&wait_hook_before, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}

void
abt_wait_hook_after(void)
{
    void (*fn)(void) = __atomic_load_n(&wait_hook_after, __ATOMIC_ACQUIRE);
    if (fn)
        fn();
}
