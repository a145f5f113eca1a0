/*
 * Pools (FIFO queues of ULTs) and the predefined schedulers that list
 * them. A pool counts the schedulers that use it so an automatic pool is
 * freed with the last one.
 */
#include "abt/abt_internal.h"

#include <stdlib.h>
#include <string.h>

int
ABT_pool_create_basic(ABT_pool_kind kind, ABT_pool_access access,
                      ABT_bool automatic, ABT_pool *newpool)
{
    if (!newpool)
        return ABT_ERR_INV_ARG;
    if (kind != ABT_POOL_FIFO && kind != ABT_POOL_FIFO_WAIT &&
        kind != ABT_POOL_RANDWS)
        return ABT_ERR_INV_POOL_KIND;
    if ((int) access < ABT_POOL_ACCESS_PRIV || access > ABT_POOL_ACCESS_MPMC)
        return ABT_ERR_INV_POOL_ACCESS;
    ABT_pool p = calloc(1, sizeof(*p));
    if (!p)
        return ABT_ERR_MEM;
    p->kind = kind;
    p->access = access;
    p->automatic = automatic ? ABT_TRUE : ABT_FALSE;
    p->id = __atomic_fetch_add(&abt_g.next_pool_id, 1, __ATOMIC_RELAXED);
    *newpool = p;
    return ABT_SUCCESS;
}

int
ABT_pool_free(ABT_pool *pool)
{
    if (!pool || !*pool)
        return ABT_ERR_INV_POOL;
    ABT_pool p = *pool;
    pthread_mutex_lock(&abt_g.lock);
    int busy = p->sched_refs > 0 || p->queued > 0 || p->active > 0;
    pthread_mutex_unlock(&abt_g.lock);
    if (busy)
        return ABT_ERR_POOL;
    if (p->user) {
        int ret = abt_user_pool_fini(p);
        if (ret != ABT_SUCCESS)
            return ret;
    }
    free(p);
    *pool = ABT_POOL_NULL;
    return ABT_SUCCESS;
}

int
ABT_pool_get_access(ABT_pool pool, ABT_pool_access *access)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!access)
        return ABT_ERR_INV_ARG;
    *access = pool->access;
    return ABT_SUCCESS;
}

static int
pool_sizes(ABT_pool pool, size_t *queued, size_t *total)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    pthread_mutex_lock(&abt_g.lock);
    *queued = pool->queued;
    *total = pool->queued + pool->active;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_pool_get_size(ABT_pool pool, size_t *size)
{
    size_t q, t;
    if (!size)
        return ABT_ERR_INV_ARG;
    int ret = pool_sizes(pool, &q, &t);
    if (ret == ABT_SUCCESS)
        *size = q;
    return ret;
}

int
ABT_pool_get_total_size(ABT_pool pool, size_t *size)
{
    size_t q, t;
    if (!size)
        return ABT_ERR_INV_ARG;
    int ret = pool_sizes(pool, &q, &t);
    if (ret == ABT_SUCCESS)
        *size = t;
    return ret;
}

int
ABT_pool_is_empty(ABT_pool pool, ABT_bool *is_empty)
{
    size_t q, t;
    if (!is_empty)
        return ABT_ERR_INV_ARG;
    int ret = pool_sizes(pool, &q, &t);
    if (ret == ABT_SUCCESS)
        *is_empty = q == 0 ? ABT_TRUE : ABT_FALSE;
    return ret;
}

int
ABT_pool_get_id(ABT_pool pool, int *id)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!id)
        return ABT_ERR_INV_ARG;
    *id = pool->id;
    return ABT_SUCCESS;
}

int
ABT_pool_set_data(ABT_pool pool, void *data)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    pthread_mutex_lock(&abt_g.lock);
    pool->data = data;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_pool_get_data(ABT_pool pool, void **data)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!data)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *data = pool->data;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
abt_sched_uses_pool_locked(ABT_sched s, ABT_pool pool)
{
    for (int i = 0; s && i < s->num_pools; i++)
        if (s->pools[i] == pool)
            return 1;
    return 0;
}

/* Queues t and makes sure a worker will see it (abt_pool_wake_locked). */
void
abt_pool_push_locked(ABT_pool pool, ABT_thread t)
{
    t->pool = pool;
    t->next = NULL;
    if (pool->tail)
        pool->tail->next = t;
    else
        pool->head = t;
    pool->tail = t;
    pool->queued++;
    abt_pool_wake_locked(pool);
}

ABT_thread
abt_pool_shift_locked(ABT_pool pool)
{
    ABT_thread t = pool->head;
    if (!t)
        return NULL;
    pool->head = t->next;
    if (!pool->head)
        pool->tail = NULL;
    t->next = NULL;
    pool->queued--;
    return t;
}

int
abt_pool_unlink_locked(ABT_pool pool, ABT_thread t)
{
    ABT_thread prev = NULL;
    for (ABT_thread c = pool ? pool->head : NULL; c; prev = c, c = c->next) {
        if (c != t)
            continue;
        if (prev)
            prev->next = c->next;
        else
            pool->head = c->next;
        if (pool->tail == c)
            pool->tail = prev;
        c->next = NULL;
        pool->queued--;
        return 1;
    }
    return 0;
}

/* Makes sure a stream serving the pool will see its new work: an idle
 * worker of a stream whose token is free is woken; else, if a stream has
 * an awake worker (the token holder, or one about to look), it will see
 * it; else the first serving stream is kicked (a spare starts). */
void
abt_pool_wake_locked(ABT_pool pool)
{
    ABT_xstream candidate = NULL;
    int awake = 0;
    for (ABT_xstream xs = abt_g.xstreams; xs; xs = xs->next) {
        if (xs->terminated || !abt_sched_uses_pool_locked(xs->sched, pool))
            continue;
        if (!xs->token && xs->idle > 0) {
            pthread_cond_signal(&xs->wake);
            return;
        }
        if (xs->workers - xs->blocked - xs->idle > 0)
            awake = 1;
        else if (!candidate)
            candidate = xs;
    }
    if (!awake && candidate)
        abt_xs_kick_locked(candidate);
}

/* Drops the scheduler's references to its pools; the automatic pools no
 * scheduler uses any more are returned in to_free (room for 64). */
void
abt_sched_release_locked(ABT_sched s, ABT_pool *to_free, int *nfree)
{
    for (int i = 0; i < s->num_pools; i++) {
        ABT_pool p = s->pools[i];
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= s->pools[j] == p;
        if (dup)
            continue;
        if (--p->sched_refs == 0 && p->automatic && *nfree < 64)
            to_free[(*nfree)++] = p;
    }
    s->num_pools = 0;
}

int
ABT_sched_create_basic(ABT_sched_predef predef, int num_pools, ABT_pool *pools,
                       ABT_sched_config config, ABT_sched *newsched)
{
    (void) config;
    if (!newsched)
        return ABT_ERR_INV_ARG;
    if ((int) predef < ABT_SCHED_DEFAULT || predef > ABT_SCHED_BASIC_WAIT)
        return ABT_ERR_INV_SCHED_PREDEF;
    if (pools == NULL && num_pools <= 0)
        num_pools = 1;
    if (num_pools <= 0 || num_pools > 64)
        return ABT_ERR_INV_ARG;
    for (int i = 0; pools && i < num_pools; i++)
        if (!pools[i])
            return ABT_ERR_INV_POOL;
    ABT_sched s = calloc(1, sizeof(*s));
    ABT_pool *list = calloc((size_t) num_pools, sizeof(*list));
    if (!s || !list) {
        free(s);
        free(list);
        return ABT_ERR_MEM;
    }
    for (int i = 0; i < num_pools; i++) {
        if (pools) {
            list[i] = pools[i];
            continue;
        }
        int ret = ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                        ABT_TRUE, &list[i]);
        if (ret != ABT_SUCCESS) {
            while (i-- > 0)
                free(list[i]);
            free(list);
            free(s);
            return ret;
        }
    }
    s->predef = predef;
    s->pools = list;
    pthread_mutex_lock(&abt_g.lock);
    s->num_pools = num_pools;
    for (int i = 0; i < num_pools; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= list[j] == list[i];
        if (!dup)
            list[i]->sched_refs++;
    }
    pthread_mutex_unlock(&abt_g.lock);
    *newsched = s;
    return ABT_SUCCESS;
}

/* Frees a scheduler that no stream owns, or (owned = 1) the one of a
 * stream being freed. */
int
abt_sched_destroy(ABT_sched s, int owned)
{
    ABT_pool to_free[64];
    int nfree = 0;
    pthread_mutex_lock(&abt_g.lock);
    if (s->owner && !owned) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_ERR_SCHED;
    }
    pthread_mutex_unlock(&abt_g.lock);
    /* The program's free runs while the pools are still there. */
    if (s->user)
        abt_user_sched_fini(s);
    pthread_mutex_lock(&abt_g.lock);
    abt_sched_release_locked(s, to_free, &nfree);
    pthread_mutex_unlock(&abt_g.lock);
    for (int i = 0; i < nfree; i++)
        ABT_pool_free(&to_free[i]);
    free(s->pools);
    free(s);
    return ABT_SUCCESS;
}

int
ABT_sched_free(ABT_sched *sched)
{
    if (!sched || !*sched)
        return ABT_ERR_INV_SCHED;
    int ret = abt_sched_destroy(*sched, 0);
    if (ret == ABT_SUCCESS)
        *sched = ABT_SCHED_NULL;
    return ret;
}

int
ABT_sched_get_num_pools(ABT_sched sched, int *num_pools)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    if (!num_pools)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *num_pools = sched->num_pools;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_sched_get_pools(ABT_sched sched, int max_pools, int idx, ABT_pool *pools)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    if (max_pools < 0 || idx < 0 || (max_pools > 0 && !pools))
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    if (idx + max_pools > sched->num_pools) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_ERR_SCHED;
    }
    for (int i = 0; i < max_pools; i++)
        pools[i] = sched->pools[idx + i];
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

static int
sched_sizes(ABT_sched sched, size_t *size, int total)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    if (!size)
        return ABT_ERR_INV_ARG;
    size_t n = 0;
    pthread_mutex_lock(&abt_g.lock);
    for (int i = 0; i < sched->num_pools; i++)
        n += sched->pools[i]->queued + (total ? sched->pools[i]->active : 0);
    pthread_mutex_unlock(&abt_g.lock);
    *size = n;
    return ABT_SUCCESS;
}

int
ABT_sched_get_size(ABT_sched sched, size_t *size)
{
    return sched_sizes(sched, size, 0);
}

int
ABT_sched_get_total_size(ABT_sched sched, size_t *size)
{
    return sched_sizes(sched, size, 1);
}
