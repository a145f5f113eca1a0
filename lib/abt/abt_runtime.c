/*
 * Argobots' runtime on pthreads: initialization, the worker loop of an
 * execution stream, and the rule that keeps a stream from getting stuck.
 *
 * A worker runs ULTs only while it holds its stream's run token
 * (abt_token.c), so the stream's ULTs run one at a time. A ULT that blocks
 * keeps its worker pthread (its stack) and gives the token up; the next
 * ULT then runs on an idle worker of the stream or, when every worker is
 * blocked, on a spare worker started for it (abt_xs_kick_locked). A spare
 * exits once it has found no work for a linger period while another
 * worker of its stream is not blocked, so the number of workers falls
 * back to one shortly after the blocking ends.
 */
#include "abt/abt_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct abt_global abt_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .key_lock = PTHREAD_MUTEX_INITIALIZER,
    .stacksize = 16384,
};
_Thread_local struct abt_self abt_self;

#define ABT_PARK_BUCKETS 64
#define ABT_SPARE_LINGER_NS 20000000L /* 20 ms */
static struct abt_park park_lot[ABT_PARK_BUCKETS];
static pthread_once_t park_once = PTHREAD_ONCE_INIT;

static void
park_init(void)
{
    for (int i = 0; i < ABT_PARK_BUCKETS; i++) {
        pthread_mutex_init(&park_lot[i].m, NULL);
        pthread_cond_init(&park_lot[i].cv, NULL);
    }
}

struct abt_park *
abt_park_of(const void *addr)
{
    pthread_once(&park_once, park_init);
    uintptr_t h = (uintptr_t) addr;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return &park_lot[(h >> 32) % ABT_PARK_BUCKETS];
}

int
abt_initialized(void)
{
    pthread_mutex_lock(&abt_g.lock);
    int r = abt_g.init_count > 0;
    pthread_mutex_unlock(&abt_g.lock);
    return r;
}

void
abt_park_enlist(struct abt_park *pk, struct abt_park_entry *e)
{
    memset(&e->s, 0, sizeof(e->s));
    e->next = NULL;
    struct abt_park_entry **pp = &pk->head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = e;
}

int
abt_park_wait_entry(struct abt_park *pk, struct abt_park_entry *e,
                    const struct timespec *abstime)
{
    /* The hook may take the layer above's locks: not under the bucket. */
    pthread_mutex_unlock(&pk->m);
    abt_wait_hook_before();
    pthread_mutex_lock(&pk->m);
    int armed = abt_sleep_begin(&e->s);
    if (!armed)
        abt_block_begin();
    int rc = 0;
    while (!e->done(e->ctx) && rc != ETIMEDOUT) {
        if (abstime)
            rc = pthread_cond_timedwait(&pk->cv, &pk->m, abstime);
        else
            rc = pthread_cond_wait(&pk->cv, &pk->m);
    }
    int ok = e->done(e->ctx);
    for (struct abt_park_entry **pp = &pk->head; *pp; pp = &(*pp)->next) {
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    }
    /* The token holder may need this bucket: never wait for the token
     * holding it. Unlinked and not requeued by a waker: nobody will. */
    pthread_mutex_unlock(&pk->m);
    if (armed)
        abt_sleep_end(&e->s, &(struct timespec){0, 0});
    else
        abt_block_end();
    abt_wait_hook_after();
    pthread_mutex_lock(&pk->m);
    return ok ? 0 : ETIMEDOUT;
}

int
abt_park_wait(struct abt_park *pk, int (*done)(void *), void *ctx,
              const struct timespec *abstime)
{
    if (done(ctx))
        return 0;
    struct abt_park_entry e;
    e.done = done;
    e.ctx = ctx;
    abt_park_enlist(pk, &e);
    return abt_park_wait_entry(pk, &e, abstime);
}

void
abt_park_wake(struct abt_park *pk)
{
    for (struct abt_park_entry **pp = &pk->head; *pp;) {
        struct abt_park_entry *e = *pp;
        if (e->done(e->ctx)) {
            *pp = e->next;
            abt_sleep_wake(&e->s);
        } else {
            pp = &e->next;
        }
    }
    pthread_cond_broadcast(&pk->cv);
}

struct abt_lock_wait {
    struct abt_park *pk;
    uint64_t seen;
};

static int
lock_released(void *ctx)
{
    struct abt_lock_wait *w = ctx;
    return w->pk->releases != w->seen;
}

void
abt_park_lock_wait(struct abt_park *pk)
{
    struct abt_lock_wait w = {pk, pk->releases};
    abt_park_wait(pk, lock_released, &w, NULL);
}

void
abt_park_lock_released(struct abt_park *pk)
{
    pthread_mutex_lock(&pk->m);
    pk->releases++;
    abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
}

/* ---- the worker loop ---------------------------------------------------- */

/* The next waiting ULT of xs's pools, or NULL; a user-defined pool with
 * work comes back in *user instead, to be popped without the lock. */
static ABT_thread
pop_locked(ABT_xstream xs, ABT_pool *user)
{
    ABT_sched s = xs->sched;
    *user = ABT_POOL_NULL;
    ABT_thread r = xs->ready;
    if (r) {
        /* Resume markers another stream popped: their turn has come. */
        xs->ready = r->next;
        r->next = NULL;
        r->pool->active++;
        return r;
    }
    for (int i = 0; s && i < s->num_pools; i++) {
        ABT_pool p = s->pools[i];
        if (p->user) {
            if (p->queued) {
                *user = p;
                return NULL;
            }
            continue;
        }
        ABT_thread t = abt_pool_shift_locked(p);
        if (!t)
            continue;
        p->active++;
        return t;
    }
    return NULL;
}

int
abt_xs_has_work_locked(ABT_xstream xs)
{
    ABT_sched s = xs->sched;
    if (xs->ready)
        return 1;
    for (int i = 0; s && i < s->num_pools; i++)
        if (s->pools[i]->queued)
            return 1;
    return 0;
}

bool
abt_busy_elsewhere(void)
{
    bool busy = false;

    pthread_mutex_lock(&abt_g.lock);
    for (ABT_xstream xs = abt_g.xstreams; xs != NULL && !busy; xs = xs->next) {
        if (xs->terminated || (xs == abt_self.xs && abt_self.token))
            continue;
        busy = (xs->token &&
                !__atomic_load_n(&xs->idle_waits, __ATOMIC_RELAXED)) ||
               xs->token_q != NULL || abt_xs_has_work_locked(xs);
    }
    pthread_mutex_unlock(&abt_g.lock);
    return busy;
}

void
abt_idle_enter(void)
{
    if (abt_self.token && abt_self.xs != NULL)
        __atomic_add_fetch(&abt_self.xs->idle_waits, 1, __ATOMIC_RELAXED);
}

void
abt_idle_leave(void)
{
    if (abt_self.token && abt_self.xs != NULL)
        __atomic_sub_fetch(&abt_self.xs->idle_waits, 1, __ATOMIC_RELAXED);
}

static void *
worker_main(void *arg)
{
    struct abt_worker *w = arg;
    ABT_xstream xs = w->xs;
    abt_self.xs = xs;
    abt_self.worker = w;
    abt_self.thread = NULL;
    if (w->spare)
        abt_xs_bind_self(xs);

    int idle_timeouts = 0;
    pthread_mutex_lock(&abt_g.lock);
    ABT_sched user_sched = !w->spare && xs->sched->user ? xs->sched : NULL;
    if (user_sched) {
        /* The program's scheduler loop runs first, until it stops; what
         * is left in the pools is run below. */
        pthread_mutex_unlock(&abt_g.lock);
        user_sched->def.run(user_sched);
        pthread_mutex_lock(&abt_g.lock);
    }
    for (;;) {
        if (!xs->token && abt_xs_has_work_locked(xs)) {
            xs->token = 1;
            ABT_pool user = ABT_POOL_NULL;
            ABT_thread t = pop_locked(xs, &user);
            if (!t && user) {
                pthread_mutex_unlock(&abt_g.lock);
                t = abt_user_pool_take(user);
                pthread_mutex_lock(&abt_g.lock);
            }
            if (!t) {
                /* Another stream's worker got there first. */
                abt_token_release_locked(xs);
                pthread_mutex_unlock(&abt_g.lock);
                sched_yield();
                pthread_mutex_lock(&abt_g.lock);
                continue;
            }
            if (abt_token_dispatch_locked(xs, t))
                continue;
            abt_self.token = 1;
            pthread_mutex_unlock(&abt_g.lock);
            abt_run(t);
            pthread_mutex_lock(&abt_g.lock);
            abt_self.token = 0;
            /* This worker looks at the pools next, unless a direct
             * waiter is owed the token. */
            if (xs->token_q)
                abt_token_release_locked(xs);
            else
                xs->token = 0;
            idle_timeouts = 0;
            continue;
        }
        if (xs->join_req)
            break;
        /* A spare leaves after a whole linger period without work while
         * another worker of its stream is not blocked. Lingering spares
         * keep a ULT that spins on ABT_thread_yield (a progress loop)
         * from starting a new thread for every piece of work. */
        if (w->spare && idle_timeouts > 0 && xs->workers - xs->blocked > 1)
            break;
        xs->idle++;
        if (w->spare) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += ABT_SPARE_LINGER_NS;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            if (pthread_cond_timedwait(&xs->wake, &abt_g.lock, &until) ==
                ETIMEDOUT)
                idle_timeouts++;
        } else {
            pthread_cond_wait(&xs->wake, &abt_g.lock);
        }
        xs->idle--;
    }
    xs->workers--;
    if (w->spare) {
        w->next = xs->dead;
        xs->dead = w;
    }
    abt_xs_kick_locked(xs);
    pthread_cond_broadcast(&xs->done);
    pthread_mutex_unlock(&abt_g.lock);
    return NULL;
}

static int
start_worker_locked(ABT_xstream xs, int spare)
{
    struct abt_worker *w = calloc(1, sizeof(*w));
    if (!w)
        return ABT_ERR_MEM;
    w->xs = xs;
    w->spare = spare;
    xs->workers++;
    if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
        xs->workers--;
        free(w);
        return ABT_ERR_SYS;
    }
    if (spare) {
        xs->spares_started++;
    } else {
        xs->base = w;
        xs->tid = w->tid;
    }
    return ABT_SUCCESS;
}

int
abt_xs_start(ABT_xstream xs)
{
    pthread_mutex_lock(&abt_g.lock);
    int ret = start_worker_locked(xs, 0);
    pthread_mutex_unlock(&abt_g.lock);
    return ret;
}

int
abt_xs_start_spare_locked(ABT_xstream xs)
{
    return start_worker_locked(xs, 1);
}

void
abt_xs_kick_locked(ABT_xstream xs)
{
    if (xs->token || xs->terminated || !abt_xs_has_work_locked(xs))
        return;
    if (xs->idle > 0) {
        pthread_cond_signal(&xs->wake);
        return;
    }
    if (xs->workers - xs->blocked > 0)
        return; /* an awake worker will look at the pools */
    /* On failure the work waits for a worker to unblock: nothing better
     * to do without a thread to run it. */
    (void) start_worker_locked(xs, 1);
}

/* Hands the list of exited spare workers to the caller, who joins them
 * with abt_reap_join after dropping the scheduler lock. */
void
abt_xs_reap_locked(ABT_xstream xs, struct abt_worker **out)
{
    struct abt_worker *w = xs->dead;
    xs->dead = NULL;
    while (w) {
        struct abt_worker *n = w->next;
        w->next = *out;
        *out = w;
        w = n;
    }
}

void
abt_reap_join(struct abt_worker *list)
{
    while (list) {
        struct abt_worker *n = list->next;
        pthread_join(list->tid, NULL);
        free(list);
        list = n;
    }
}

void
abt_xs_init_conds(ABT_xstream xs)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&xs->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&xs->done, NULL);
}

/* ---- init / finalize ---------------------------------------------------- */

static int
primary_create(void)
{
    ABT_pool pool = ABT_POOL_NULL;
    ABT_sched sched = ABT_SCHED_NULL;
    ABT_xstream xs = NULL;
    ABT_thread t = NULL;
    int ret = ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                    ABT_TRUE, &pool);
    if (ret != ABT_SUCCESS)
        return ret;
    ret = ABT_sched_create_basic(ABT_SCHED_DEFAULT, 1, &pool,
                                 ABT_SCHED_CONFIG_NULL, &sched);
    if (ret != ABT_SUCCESS)
        goto free_pool;
    xs = calloc(1, sizeof(*xs));
    t = abt_thread_new(NULL, NULL, ABT_THREAD_ATTR_NULL);
    if (!xs || !t) {
        ret = ABT_ERR_MEM;
        goto free_sched;
    }
    abt_xs_init_conds(xs);
    xs->rank = 0;
    xs->primary = 1;
    xs->workers = 1; /* the primary thread itself */
    xs->token = 1;   /* which runs the primary ULT */
    xs->tid = pthread_self();
    t->primary = 1;
    t->named = 1;
    t->state = ABT_THREAD_STATE_RUNNING;
    t->xs = xs;

    pthread_mutex_lock(&abt_g.lock);
    xs->sched = sched;
    sched->owner = xs;
    xs->next = abt_g.xstreams;
    abt_g.xstreams = xs;
    abt_g.primary = xs;
    abt_g.num_xstreams = 1;
    pthread_mutex_unlock(&abt_g.lock);
    abt_self.xs = xs;
    abt_self.thread = t;
    abt_self.worker = NULL;
    abt_self.token = 1;
    return ABT_SUCCESS;

free_sched:
    free(xs);
    free(t);
    ABT_sched_free(&sched);
free_pool:
    ABT_pool_free(&pool);
    return ret;
}

int
ABT_init(int argc, char **argv)
{
    (void) argc;
    (void) argv;
    pthread_mutex_lock(&abt_g.lock);
    if (abt_g.init_count++ > 0) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_SUCCESS;
    }
    pthread_mutex_unlock(&abt_g.lock);
    const char *ss = getenv("ABT_THREAD_STACKSIZE");
    if (ss && atol(ss) > 0)
        abt_g.stacksize = (size_t) atol(ss);
    int ret = primary_create();
    if (ret != ABT_SUCCESS) {
        pthread_mutex_lock(&abt_g.lock);
        abt_g.init_count = 0;
        pthread_mutex_unlock(&abt_g.lock);
    }
    return ret;
}

int
ABT_initialized(void)
{
    return abt_initialized() ? ABT_SUCCESS : ABT_ERR_UNINITIALIZED;
}

/* The primary thread waits, as a blocked worker of the primary stream,
 * until the primary pools are drained and the spares have exited. */
static void
primary_drain(ABT_xstream xs)
{
    struct abt_worker *dead = NULL;
    pthread_mutex_lock(&abt_g.lock);
    xs->join_req = 1;
    xs->blocked++;
    abt_self.token = 0;
    abt_token_release_locked(xs);
    for (;;) {
        abt_xs_kick_locked(xs);
        if (xs->workers == 1 && !abt_xs_has_work_locked(xs))
            break;
        pthread_cond_broadcast(&xs->wake);
        pthread_cond_wait(&xs->done, &abt_g.lock);
    }
    xs->blocked--;
    abt_xs_reap_locked(xs, &dead);
    pthread_mutex_unlock(&abt_g.lock);
    abt_reap_join(dead);
}

int
ABT_finalize(void)
{
    pthread_mutex_lock(&abt_g.lock);
    if (abt_g.init_count == 0) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_ERR_UNINITIALIZED;
    }
    ABT_xstream primary = abt_g.primary;
    if (abt_self.xs != primary || abt_self.worker) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_ERR_INV_XSTREAM;
    }
    if (--abt_g.init_count > 0) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_SUCCESS;
    }
    pthread_mutex_unlock(&abt_g.lock);

    /* Streams the program left running are joined and freed, newest
     * first, as Argobots' finalize does. */
    for (;;) {
        pthread_mutex_lock(&abt_g.lock);
        ABT_xstream xs = abt_g.xstreams;
        while (xs && xs->primary)
            xs = xs->next;
        pthread_mutex_unlock(&abt_g.lock);
        if (!xs)
            break;
        ABT_xstream_free(&xs);
    }
    primary_drain(primary);

    pthread_mutex_lock(&abt_g.lock);
    abt_g.xstreams = NULL;
    abt_g.primary = NULL;
    abt_g.num_xstreams = 0;
    ABT_pool to_free[64];
    int nfree = 0;
    abt_sched_release_locked(primary->sched, to_free, &nfree);
    pthread_mutex_unlock(&abt_g.lock);
    for (int i = 0; i < nfree; i++)
        ABT_pool_free(&to_free[i]);
    free(primary->sched->pools);
    free(primary->sched);
    free(primary->cpuids);
    pthread_cond_destroy(&primary->wake);
    pthread_cond_destroy(&primary->done);
    abt_thread_destroy(abt_self.thread);
    free(primary);
    abt_self.xs = NULL;
    abt_self.thread = NULL;
    abt_self.token = 0;
    return ABT_SUCCESS;
}

double
ABT_get_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

int
ABT_info_query_config(ABT_info_query_kind query_kind, void *val)
{
    if (!val)
        return ABT_ERR_INV_ARG;
    switch (query_kind) {
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_ERROR:
    case ABT_INFO_QUERY_KIND_ENABLED_EXTERNAL_THREAD:
    case ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL:
    case ABT_INFO_QUERY_KIND_ENABLED_TASK_CANCEL:
    case ABT_INFO_QUERY_KIND_ENABLED_AFFINITY:
    case ABT_INFO_QUERY_KIND_ENABLED_SCHED_SLEEP:
        *(ABT_bool *) val = ABT_TRUE;
        return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_ENABLED_DEBUG:
    case ABT_INFO_QUERY_KIND_ENABLED_PRINT_ERRNO:
    case ABT_INFO_QUERY_KIND_ENABLED_LOG:
    case ABT_INFO_QUERY_KIND_ENABLED_VALGRIND:
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_PRODUCER:
    case ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_CONSUMER:
    case ABT_INFO_QUERY_KIND_ENABLED_PRESERVE_FPU:
    case ABT_INFO_QUERY_KIND_ENABLED_MIGRATION:
    case ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED:
    case ABT_INFO_QUERY_KIND_ENABLED_PRINT_CONFIG:
    case ABT_INFO_QUERY_KIND_ENABLED_TOOL:
    case ABT_INFO_QUERY_KIND_FCONTEXT:
    case ABT_INFO_QUERY_KIND_DYNAMIC_PROMOTION:
    case ABT_INFO_QUERY_KIND_ENABLED_STACK_UNWIND:
    case ABT_INFO_QUERY_KIND_ENABLED_STACK_OVERFLOW_CHECK:
    case ABT_INFO_QUERY_KIND_ENABLED_LAZY_STACK_ALLOC:
        *(ABT_bool *) val = ABT_FALSE;
        return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_MAX_NUM_XSTREAMS:
        *(unsigned int *) val = 0x7fffffffu;
        return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE:
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_STACKSIZE:
        *(size_t *) val = abt_g.stacksize;
        return ABT_SUCCESS;
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_EVENT_FREQ:
    case ABT_INFO_QUERY_KIND_DEFAULT_SCHED_SLEEP_NSEC:
        *(uint64_t *) val = 0;
        return ABT_SUCCESS;
    default:
        return ABT_ERR_INV_QUERY_KIND;
    }
}
