/*
 * Mutexes and readers-writer locks on their pthread counterparts,
 * condition variables and barriers in the parking lot. Every call that
 * may sleep first tries without sleeping, and only a real wait is a yield
 * point: the caller's stream runs its next ULT meanwhile. A locker that
 * finds a mutex or rwlock taken parks under its address; the unlocker
 * requeues the parked lockers in the order they came, and they try again
 * (abt_park_lock_wait), so who gets a contended lock on one stream is the
 * same every run, as a condition variable's signal wakes its first
 * waiter and a barrier's last arrival wakes the others in the order they
 * came.
 *
 * A mutex and a condition variable fit in Argobots' 64-byte static
 * memory (ABT_mutex_memory, ABT_cond_memory) and all-zero memory is a
 * valid unlocked mutex / idle condition variable (glibc's static
 * initializers are zero). The recursive flag is the first int, as in
 * ABT_RECURSIVE_MUTEX_INITIALIZER. Recursion is tracked here rather than
 * by pthreads so a statically initialized mutex can be recursive; its
 * owner is the calling pthread, which is the calling ULT since a ULT runs
 * to completion on one pthread. A waiter gets its stream's token back
 * (abt_block_end) only after dropping the internal pthread mutexes that
 * the token holder may take without a yield point (a parking bucket's).
 */
#include "abt/abt_internal.h"

#include <errno.h>
#include <stdlib.h>

struct ABT_mutex_opaque {
    int recursive;   /* first int of ABT_RECURSIVE_MUTEX_INITIALIZER */
    int dynamic;     /* from ABT_mutex_create: ABT_mutex_free releases it */
    unsigned count;  /* recursion depth (owner only) */
    int waiters;     /* atomic: lockers parked or about to park */
    uintptr_t owner; /* atomic: &abt_self of the holder, recursive only */
    pthread_mutex_t m;
};
_Static_assert(sizeof(struct ABT_mutex_opaque) <= sizeof(ABT_mutex_memory),
               "ABT_mutex must fit ABT_mutex_memory");

struct ABT_mutex_attr_opaque {
    ABT_bool recursive;
};

/* A condition variable is its waiters in the parking lot (abt_runtime.c)
 * under its address, in the order they came: a signal wakes the first. */
struct ABT_cond_opaque {
    int dynamic;
};
_Static_assert(sizeof(struct ABT_cond_opaque) <= sizeof(ABT_cond_memory),
               "ABT_cond must fit ABT_cond_memory");

struct ABT_rwlock_opaque {
    pthread_rwlock_t rw;
    int waiters; /* atomic: lockers parked or about to park */
};

/* A barrier's waiters park under its address; the last arrival requeues
 * them in the order they came. Its fields are under that bucket's lock. */
struct ABT_barrier_opaque {
    uint32_t num_waiters;
    uint32_t arrived;
    uint64_t generation;
};

struct ABT_xstream_barrier_opaque {
    pthread_barrier_t b;
    uint32_t num_waiters;
};

static uintptr_t
me(void)
{
    return (uintptr_t) &abt_self;
}

/* ---- mutexes ------------------------------------------------------------- */

int
ABT_mutex_create_with_attr(ABT_mutex_attr attr, ABT_mutex *newmutex)
{
    if (!newmutex)
        return ABT_ERR_INV_ARG;
    ABT_mutex m = calloc(1, sizeof(*m));
    if (!m)
        return ABT_ERR_MEM;
    if (pthread_mutex_init(&m->m, NULL) != 0) {
        free(m);
        return ABT_ERR_SYS;
    }
    m->dynamic = 1;
    m->recursive = attr && attr->recursive;
    *newmutex = m;
    return ABT_SUCCESS;
}

int
ABT_mutex_create(ABT_mutex *newmutex)
{
    return ABT_mutex_create_with_attr(ABT_MUTEX_ATTR_NULL, newmutex);
}

int
ABT_mutex_free(ABT_mutex *mutex)
{
    if (!mutex || !*mutex || !(*mutex)->dynamic)
        return ABT_ERR_INV_MUTEX;
    pthread_mutex_destroy(&(*mutex)->m);
    free(*mutex);
    *mutex = ABT_MUTEX_NULL;
    return ABT_SUCCESS;
}

static int
mutex_reenter(ABT_mutex m)
{
    if (m->recursive && __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == me()) {
        m->count++;
        return 1;
    }
    return 0;
}

static void
mutex_acquired(ABT_mutex m)
{
    if (m->recursive) {
        __atomic_store_n(&m->owner, me(), __ATOMIC_RELAXED);
        m->count = 1;
    }
}

/*
 * A contended lock: try(obj) until it does not say EBUSY, parked under
 * obj's address between tries (abt_park_lock_wait). *waiters counts the
 * lockers parked or about to park, before each try: an unlocker that
 * sees none released before that try, which then succeeds.
 */
static int
park_take(void *obj, int *waiters, int (*try)(void *))
{
    int rc = try(obj);
    if (rc != EBUSY)
        return rc;
    struct abt_park *pk = abt_park_of(obj);
    pthread_mutex_lock(&pk->m);
    for (;;) {
        __atomic_add_fetch(waiters, 1, __ATOMIC_SEQ_CST);
        rc = try(obj);
        if (rc != EBUSY) {
            __atomic_sub_fetch(waiters, 1, __ATOMIC_SEQ_CST);
            break;
        }
        abt_park_lock_wait(pk);
        __atomic_sub_fetch(waiters, 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&pk->m);
    return rc;
}

/* After releasing obj: requeues its parked lockers, if any. The count
 * is read with a read-modify-write, ordered after the release like the
 * locker's count before its try. */
static void
park_give(void *obj, int *waiters)
{
    if (__atomic_fetch_add(waiters, 0, __ATOMIC_SEQ_CST) > 0)
        abt_park_lock_released(abt_park_of(obj));
}

static int
mutex_try(void *obj)
{
    return pthread_mutex_trylock(&((ABT_mutex) obj)->m);
}

/* Takes m->m, parking while it is taken. */
static int
mutex_take(ABT_mutex mutex)
{
    return park_take(mutex, &mutex->waiters, mutex_try);
}

/* Releases m->m and requeues the parked lockers. */
static int
mutex_give(ABT_mutex mutex)
{
    int rc = pthread_mutex_unlock(&mutex->m);
    park_give(mutex, &mutex->waiters);
    return rc;
}

int
ABT_mutex_lock(ABT_mutex mutex)
{
    if (!mutex)
        return ABT_ERR_INV_MUTEX;
    if (mutex_reenter(mutex))
        return ABT_SUCCESS;
    if (mutex_take(mutex) != 0)
        return ABT_ERR_MUTEX;
    mutex_acquired(mutex);
    return ABT_SUCCESS;
}

int
ABT_mutex_lock_high(ABT_mutex mutex)
{
    return ABT_mutex_lock(mutex);
}

int
ABT_mutex_lock_low(ABT_mutex mutex)
{
    return ABT_mutex_lock(mutex);
}

int
ABT_mutex_spinlock(ABT_mutex mutex)
{
    return ABT_mutex_lock(mutex);
}

int
ABT_mutex_trylock(ABT_mutex mutex)
{
    if (!mutex)
        return ABT_ERR_INV_MUTEX;
    if (mutex_reenter(mutex))
        return ABT_SUCCESS;
    int rc = pthread_mutex_trylock(&mutex->m);
    if (rc == EBUSY)
        return ABT_ERR_MUTEX_LOCKED;
    if (rc != 0)
        return ABT_ERR_MUTEX;
    mutex_acquired(mutex);
    return ABT_SUCCESS;
}

int
ABT_mutex_unlock(ABT_mutex mutex)
{
    if (!mutex)
        return ABT_ERR_INV_MUTEX;
    if (mutex->recursive) {
        if (__atomic_load_n(&mutex->owner, __ATOMIC_RELAXED) != me())
            return ABT_ERR_MUTEX;
        if (--mutex->count > 0)
            return ABT_SUCCESS;
        __atomic_store_n(&mutex->owner, 0, __ATOMIC_RELAXED);
    }
    return mutex_give(mutex) == 0 ? ABT_SUCCESS : ABT_ERR_MUTEX;
}

int
ABT_mutex_unlock_se(ABT_mutex mutex)
{
    return ABT_mutex_unlock(mutex);
}

int
ABT_mutex_unlock_de(ABT_mutex mutex)
{
    return ABT_mutex_unlock(mutex);
}

int
ABT_mutex_equal(ABT_mutex mutex1, ABT_mutex mutex2, ABT_bool *result)
{
    if (!result)
        return ABT_ERR_INV_ARG;
    *result = mutex1 == mutex2 ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_mutex_attr_create(ABT_mutex_attr *newattr)
{
    if (!newattr)
        return ABT_ERR_INV_ARG;
    ABT_mutex_attr a = calloc(1, sizeof(*a));
    if (!a)
        return ABT_ERR_MEM;
    *newattr = a;
    return ABT_SUCCESS;
}

int
ABT_mutex_attr_free(ABT_mutex_attr *attr)
{
    if (!attr || !*attr)
        return ABT_ERR_INV_MUTEX_ATTR;
    free(*attr);
    *attr = ABT_MUTEX_ATTR_NULL;
    return ABT_SUCCESS;
}

int
ABT_mutex_attr_set_recursive(ABT_mutex_attr attr, ABT_bool recursive)
{
    if (!attr)
        return ABT_ERR_INV_MUTEX_ATTR;
    attr->recursive = recursive ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_mutex_attr_get_recursive(ABT_mutex_attr attr, ABT_bool *recursive)
{
    if (!attr)
        return ABT_ERR_INV_MUTEX_ATTR;
    if (!recursive)
        return ABT_ERR_INV_ARG;
    *recursive = attr->recursive;
    return ABT_SUCCESS;
}

int
ABT_mutex_get_attr(ABT_mutex mutex, ABT_mutex_attr *attr)
{
    if (!mutex)
        return ABT_ERR_INV_MUTEX;
    int ret = ABT_mutex_attr_create(attr);
    if (ret == ABT_SUCCESS)
        (*attr)->recursive = mutex->recursive ? ABT_TRUE : ABT_FALSE;
    return ret;
}

/* ---- condition variables ------------------------------------------------- */

int
ABT_cond_create(ABT_cond *newcond)
{
    if (!newcond)
        return ABT_ERR_INV_ARG;
    ABT_cond c = calloc(1, sizeof(*c));
    if (!c)
        return ABT_ERR_MEM;
    c->dynamic = 1;
    *newcond = c;
    return ABT_SUCCESS;
}

int
ABT_cond_free(ABT_cond *cond)
{
    if (!cond || !*cond || !(*cond)->dynamic)
        return ABT_ERR_INV_COND;
    free(*cond);
    *cond = ABT_COND_NULL;
    return ABT_SUCCESS;
}

struct cond_waiter {
    ABT_cond cond;
    int woken; /* the bucket's lock */
};

static int
cond_woken(void *ctx)
{
    return ((struct cond_waiter *) ctx)->woken;
}

static int
cond_wait(ABT_cond cond, ABT_mutex mutex, const struct timespec *abstime)
{
    if (!cond)
        return ABT_ERR_INV_COND;
    if (!mutex)
        return ABT_ERR_INV_MUTEX;
    unsigned count = mutex->count;
    if (mutex->recursive) {
        if (__atomic_load_n(&mutex->owner, __ATOMIC_RELAXED) != me())
            return ABT_ERR_MUTEX;
        __atomic_store_n(&mutex->owner, 0, __ATOMIC_RELAXED);
    }
    /* Listed before the mutex goes, so a signal made under the mutex
     * after this call began finds it. */
    struct abt_park *pk = abt_park_of(cond);
    struct cond_waiter cw = {cond, 0};
    struct abt_park_entry e;
    e.done = cond_woken;
    e.ctx = &cw;
    pthread_mutex_lock(&pk->m);
    abt_park_enlist(pk, &e);
    pthread_mutex_unlock(&pk->m);
    int rc = mutex_give(mutex);
    if (rc == 0) {
        pthread_mutex_lock(&pk->m);
        rc = abt_park_wait_entry(pk, &e, abstime);
        pthread_mutex_unlock(&pk->m);
    } else {
        pthread_mutex_lock(&pk->m);
        for (struct abt_park_entry **pp = &pk->head; *pp; pp = &(*pp)->next)
            if (*pp == &e) {
                *pp = e.next;
                break;
            }
        pthread_mutex_unlock(&pk->m);
        return ABT_ERR_MUTEX;
    }
    int lrc = mutex_take(mutex);
    if (mutex->recursive) {
        __atomic_store_n(&mutex->owner, me(), __ATOMIC_RELAXED);
        mutex->count = count;
    }
    if (lrc != 0)
        return ABT_ERR_MUTEX;
    return rc == ETIMEDOUT ? ABT_ERR_COND_TIMEDOUT : ABT_SUCCESS;
}

/* Wakes the first waiter of cond (all of them if all), in the order they
 * came. */
static void
cond_wake(ABT_cond cond, int all)
{
    struct abt_park *pk = abt_park_of(cond);
    pthread_mutex_lock(&pk->m);
    for (struct abt_park_entry *e = pk->head; e; e = e->next) {
        struct cond_waiter *cw = e->ctx;
        if (e->done != cond_woken || cw->cond != cond || cw->woken)
            continue;
        cw->woken = 1;
        if (!all)
            break;
    }
    abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
}

int
ABT_cond_wait(ABT_cond cond, ABT_mutex mutex)
{
    return cond_wait(cond, mutex, NULL);
}

int
ABT_cond_timedwait(ABT_cond cond, ABT_mutex mutex,
                   const struct timespec *abstime)
{
    if (!abstime)
        return ABT_ERR_INV_ARG;
    return cond_wait(cond, mutex, abstime);
}

int
ABT_cond_signal(ABT_cond cond)
{
    if (!cond)
        return ABT_ERR_INV_COND;
    cond_wake(cond, 0);
    return ABT_SUCCESS;
}

int
ABT_cond_broadcast(ABT_cond cond)
{
    if (!cond)
        return ABT_ERR_INV_COND;
    cond_wake(cond, 1);
    return ABT_SUCCESS;
}

/* ---- readers-writer locks ------------------------------------------------ */

int
ABT_rwlock_create(ABT_rwlock *newrwlock)
{
    if (!newrwlock)
        return ABT_ERR_INV_ARG;
    ABT_rwlock rw = calloc(1, sizeof(*rw));
    if (!rw)
        return ABT_ERR_MEM;
    if (pthread_rwlock_init(&rw->rw, NULL) != 0) {
        free(rw);
        return ABT_ERR_SYS;
    }
    *newrwlock = rw;
    return ABT_SUCCESS;
}

int
ABT_rwlock_free(ABT_rwlock *rwlock)
{
    if (!rwlock || !*rwlock)
        return ABT_ERR_INV_RWLOCK;
    pthread_rwlock_destroy(&(*rwlock)->rw);
    free(*rwlock);
    *rwlock = ABT_RWLOCK_NULL;
    return ABT_SUCCESS;
}

static int
rwlock_try_rd(void *obj)
{
    return pthread_rwlock_tryrdlock(&((ABT_rwlock) obj)->rw);
}

static int
rwlock_try_wr(void *obj)
{
    return pthread_rwlock_trywrlock(&((ABT_rwlock) obj)->rw);
}

/* Takes rwlock for reading or writing, parking while it cannot. */
static int
rwlock_take(ABT_rwlock rwlock, int write)
{
    return park_take(rwlock, &rwlock->waiters,
                     write ? rwlock_try_wr : rwlock_try_rd);
}

int
ABT_rwlock_rdlock(ABT_rwlock rwlock)
{
    if (!rwlock)
        return ABT_ERR_INV_RWLOCK;
    return rwlock_take(rwlock, 0) == 0 ? ABT_SUCCESS : ABT_ERR_RWLOCK;
}

int
ABT_rwlock_wrlock(ABT_rwlock rwlock)
{
    if (!rwlock)
        return ABT_ERR_INV_RWLOCK;
    return rwlock_take(rwlock, 1) == 0 ? ABT_SUCCESS : ABT_ERR_RWLOCK;
}

int
ABT_rwlock_unlock(ABT_rwlock rwlock)
{
    if (!rwlock)
        return ABT_ERR_INV_RWLOCK;
    int rc = pthread_rwlock_unlock(&rwlock->rw);
    park_give(rwlock, &rwlock->waiters);
    return rc == 0 ? ABT_SUCCESS : ABT_ERR_RWLOCK;
}

/* ---- barriers ------------------------------------------------------------ */

int
ABT_barrier_create(uint32_t num_waiters, ABT_barrier *newbarrier)
{
    if (!newbarrier || num_waiters == 0)
        return ABT_ERR_INV_ARG;
    ABT_barrier b = calloc(1, sizeof(*b));
    if (!b)
        return ABT_ERR_MEM;
    b->num_waiters = num_waiters;
    *newbarrier = b;
    return ABT_SUCCESS;
}

int
ABT_barrier_reinit(ABT_barrier barrier, uint32_t num_waiters)
{
    if (!barrier)
        return ABT_ERR_INV_BARRIER;
    if (num_waiters == 0)
        return ABT_ERR_INV_ARG;
    struct abt_park *pk = abt_park_of(barrier);
    pthread_mutex_lock(&pk->m);
    int busy = barrier->arrived > 0;
    if (!busy)
        barrier->num_waiters = num_waiters;
    pthread_mutex_unlock(&pk->m);
    return busy ? ABT_ERR_BARRIER : ABT_SUCCESS;
}

int
ABT_barrier_free(ABT_barrier *barrier)
{
    if (!barrier || !*barrier)
        return ABT_ERR_INV_BARRIER;
    free(*barrier);
    *barrier = ABT_BARRIER_NULL;
    return ABT_SUCCESS;
}

struct barrier_waiter {
    ABT_barrier b;
    uint64_t generation;
};

static int
barrier_passed(void *ctx)
{
    struct barrier_waiter *w = ctx;
    return w->b->generation != w->generation;
}

int
ABT_barrier_wait(ABT_barrier barrier)
{
    if (!barrier)
        return ABT_ERR_INV_BARRIER;
    struct abt_park *pk = abt_park_of(barrier);
    pthread_mutex_lock(&pk->m);
    if (++barrier->arrived == barrier->num_waiters) {
        barrier->arrived = 0;
        barrier->generation++;
        abt_park_wake(pk);
        pthread_mutex_unlock(&pk->m);
        return ABT_SUCCESS;
    }
    struct barrier_waiter w = {barrier, barrier->generation};
    (void) abt_park_wait(pk, barrier_passed, &w, NULL);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_barrier_get_num_waiters(ABT_barrier barrier, uint32_t *num_waiters)
{
    if (!barrier)
        return ABT_ERR_INV_BARRIER;
    if (!num_waiters)
        return ABT_ERR_INV_ARG;
    struct abt_park *pk = abt_park_of(barrier);
    pthread_mutex_lock(&pk->m);
    *num_waiters = barrier->num_waiters;
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

/* ---- execution-stream barriers --------------------------------------------
 */

/* Waiting blocks the whole execution stream, as in Argobots: it is not
 * counted as a blocked ULT. */
int
ABT_xstream_barrier_create(uint32_t num_waiters,
                           ABT_xstream_barrier *newbarrier)
{
    if (!newbarrier || num_waiters == 0)
        return ABT_ERR_INV_ARG;
    ABT_xstream_barrier b = calloc(1, sizeof(*b));
    if (!b)
        return ABT_ERR_MEM;
    if (pthread_barrier_init(&b->b, NULL, num_waiters) != 0) {
        free(b);
        return ABT_ERR_SYS;
    }
    b->num_waiters = num_waiters;
    *newbarrier = b;
    return ABT_SUCCESS;
}

int
ABT_xstream_barrier_free(ABT_xstream_barrier *barrier)
{
    if (!barrier || !*barrier)
        return ABT_ERR_INV_XSTREAM_BARRIER;
    pthread_barrier_destroy(&(*barrier)->b);
    free(*barrier);
    *barrier = ABT_XSTREAM_BARRIER_NULL;
    return ABT_SUCCESS;
}

int
ABT_xstream_barrier_wait(ABT_xstream_barrier barrier)
{
    if (!barrier)
        return ABT_ERR_INV_XSTREAM_BARRIER;
    int rc = pthread_barrier_wait(&barrier->b);
    return rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD ? ABT_SUCCESS
                                                          : ABT_ERR_SYS;
}
