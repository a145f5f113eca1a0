/*
 * Pools of registered bulk buffers (margo-bulk-pool.h). A pool is one
 * allocation of count * size bytes, one bulk handle per buffer, and a
 * stack of the free ones under a mutex; get waits on a condition variable.
 */
#include "margo_internal.h"

#include "abt/abt_block.h"
#include "margo-bulk-pool.h"

#include <stdlib.h>
#include <string.h>

struct margo_bulk_pool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    hg_size_t count, size;
    char *mem;
    hg_bulk_t *bulks;
    hg_size_t *free_stack; /* indices of free buffers */
    hg_size_t nfree;
    bool *is_free;
};

struct margo_bulk_poolset {
    hg_size_t npools;
    margo_bulk_pool_t *pools; /* by increasing buffer size */
};

static void
margo_bulk_pool_free_all(margo_bulk_pool_t p)
{
    for (hg_size_t i = 0; p->bulks && i < p->count; i++)
        if (p->bulks[i] != HG_BULK_NULL)
            HG_Bulk_free(p->bulks[i]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->bulks);
    free(p->free_stack);
    free(p->is_free);
    free(p->mem);
    free(p);
}

hg_return_t
margo_bulk_pool_create(margo_instance_id mid, hg_size_t count, hg_size_t size,
                       hg_uint8_t flag, margo_bulk_pool_t *pool)
{
    margo_bulk_pool_t p;
    hg_return_t ret = HG_SUCCESS;

    if (mid == MARGO_INSTANCE_NULL || pool == NULL || count == 0 || size == 0 ||
        count > SIZE_MAX / size)
        return HG_INVALID_ARG;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return HG_NOMEM;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->count = count;
    p->size = size;
    p->mem = malloc(count * size);
    p->bulks = calloc(count, sizeof(*p->bulks));
    p->free_stack = calloc(count, sizeof(*p->free_stack));
    p->is_free = calloc(count, sizeof(*p->is_free));
    if (!p->mem || !p->bulks || !p->free_stack || !p->is_free) {
        margo_bulk_pool_free_all(p);
        return HG_NOMEM;
    }
    for (hg_size_t i = 0; i < count && ret == HG_SUCCESS; i++) {
        void *ptr = p->mem + i * size;

        ret = margo_bulk_create(mid, 1, &ptr, &size, flag, &p->bulks[i]);
        /* Handed out in increasing order. */
        p->free_stack[count - 1 - i] = i;
        p->is_free[i] = true;
    }
    if (ret != HG_SUCCESS) {
        margo_bulk_pool_free_all(p);
        return ret;
    }
    p->nfree = count;
    *pool = p;
    return HG_SUCCESS;
}

int
margo_bulk_pool_destroy(margo_bulk_pool_t pool)
{
    hg_size_t nfree;

    if (pool == MARGO_BULK_POOL_NULL)
        return -1;
    pthread_mutex_lock(&pool->lock);
    nfree = pool->nfree;
    pthread_mutex_unlock(&pool->lock);
    if (nfree != pool->count)
        return -1;
    margo_bulk_pool_free_all(pool);
    return 0;
}

/* Take a free buffer (lock held); HG_BULK_NULL if none. */
static hg_bulk_t
margo_bulk_pool_take(margo_bulk_pool_t p)
{
    hg_size_t i;

    if (p->nfree == 0)
        return HG_BULK_NULL;
    i = p->free_stack[--p->nfree];
    p->is_free[i] = false;
    return p->bulks[i];
}

int
margo_bulk_pool_get(margo_bulk_pool_t pool, hg_bulk_t *bulk)
{
    if (pool == MARGO_BULK_POOL_NULL || bulk == NULL)
        return -1;
    pthread_mutex_lock(&pool->lock);
    if (pool->nfree > 0) {
        *bulk = margo_bulk_pool_take(pool);
        pthread_mutex_unlock(&pool->lock);
        return 0;
    }
    /* A wait like Argobots' cond wait: the ULT that releases a buffer
     * may be on this execution stream. */
    abt_block_begin();
    while (pool->nfree == 0)
        pthread_cond_wait(&pool->cond, &pool->lock);
    *bulk = margo_bulk_pool_take(pool);
    pthread_mutex_unlock(&pool->lock);
    abt_block_end();
    return 0;
}

int
margo_bulk_pool_tryget(margo_bulk_pool_t pool, hg_bulk_t *bulk)
{
    if (pool == MARGO_BULK_POOL_NULL || bulk == NULL)
        return -1;
    pthread_mutex_lock(&pool->lock);
    *bulk = margo_bulk_pool_take(pool);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

/* The buffer index of bulk in pool, or count if it is not the pool's. */
static hg_size_t
margo_bulk_pool_index(margo_bulk_pool_t p, hg_bulk_t bulk)
{
    hg_size_t i;

    for (i = 0; i < p->count; i++)
        if (p->bulks[i] == bulk)
            break;
    return i;
}

int
margo_bulk_pool_release(margo_bulk_pool_t pool, hg_bulk_t bulk)
{
    hg_size_t i;

    if (pool == MARGO_BULK_POOL_NULL || bulk == HG_BULK_NULL)
        return -1;
    i = margo_bulk_pool_index(pool, bulk);
    pthread_mutex_lock(&pool->lock);
    if (i == pool->count || pool->is_free[i]) {
        pthread_mutex_unlock(&pool->lock);
        return -1;
    }
    pool->is_free[i] = true;
    pool->free_stack[pool->nfree++] = i;
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

/* ---- Pool sets ------------------------------------------------------- */

hg_return_t
margo_bulk_poolset_create(margo_instance_id mid, hg_size_t npools,
                          hg_size_t nbufs, hg_size_t first_size,
                          hg_size_t size_multiple, hg_uint8_t flag,
                          margo_bulk_poolset_t *poolset)
{
    margo_bulk_poolset_t s;
    hg_size_t size = first_size;
    hg_return_t ret = HG_SUCCESS;

    if (mid == MARGO_INSTANCE_NULL || poolset == NULL || npools == 0 ||
        nbufs == 0 || first_size == 0 || size_multiple < 2)
        return HG_INVALID_ARG;
    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->pools = calloc(npools, sizeof(*s->pools))) == NULL) {
        free(s);
        return HG_NOMEM;
    }
    for (hg_size_t i = 0; i < npools; i++) {
        ret = margo_bulk_pool_create(mid, nbufs, size, flag, &s->pools[i]);
        if (ret != HG_SUCCESS)
            break;
        s->npools++;
        if (size > SIZE_MAX / size_multiple && i + 1 < npools) {
            ret = HG_INVALID_ARG;
            break;
        }
        size *= size_multiple;
    }
    if (ret != HG_SUCCESS) {
        margo_bulk_poolset_destroy(s);
        return ret;
    }
    *poolset = s;
    return HG_SUCCESS;
}

int
margo_bulk_poolset_destroy(margo_bulk_poolset_t poolset)
{
    if (poolset == MARGO_BULK_POOLSET_NULL)
        return -1;
    /* All or nothing: refuse while any buffer of any pool is out. */
    for (hg_size_t i = 0; i < poolset->npools; i++) {
        margo_bulk_pool_t p = poolset->pools[i];
        hg_size_t nfree;

        pthread_mutex_lock(&p->lock);
        nfree = p->nfree;
        pthread_mutex_unlock(&p->lock);
        if (nfree != p->count)
            return -1;
    }
    for (hg_size_t i = 0; i < poolset->npools; i++)
        margo_bulk_pool_free_all(poolset->pools[i]);
    free(poolset->pools);
    free(poolset);
    return 0;
}

void
margo_bulk_poolset_get_max(margo_bulk_poolset_t poolset, hg_size_t *max_size)
{
    if (poolset == MARGO_BULK_POOLSET_NULL || max_size == NULL)
        return;
    *max_size = poolset->pools[poolset->npools - 1]->size;
}

/* The first pool whose buffers hold size, or npools. */
static hg_size_t
margo_poolset_first_fit(margo_bulk_poolset_t s, hg_size_t size)
{
    hg_size_t i = 0;

    while (i < s->npools && s->pools[i]->size < size)
        i++;
    return i;
}

int
margo_bulk_poolset_get(margo_bulk_poolset_t poolset, hg_size_t size,
                       hg_bulk_t *bulk)
{
    hg_size_t i;

    if (poolset == MARGO_BULK_POOLSET_NULL || bulk == NULL)
        return -1;
    i = margo_poolset_first_fit(poolset, size);
    if (i == poolset->npools)
        return -1;
    return margo_bulk_pool_get(poolset->pools[i], bulk);
}

int
margo_bulk_poolset_tryget(margo_bulk_poolset_t poolset, hg_size_t size,
                          hg_bool_t any_flag, hg_bulk_t *bulk)
{
    hg_size_t i;

    if (poolset == MARGO_BULK_POOLSET_NULL || bulk == NULL)
        return -1;
    i = margo_poolset_first_fit(poolset, size);
    if (i == poolset->npools)
        return -1;
    *bulk = HG_BULK_NULL;
    do {
        if (margo_bulk_pool_tryget(poolset->pools[i], bulk) != 0)
            return -1;
        i++;
    } while (*bulk == HG_BULK_NULL && any_flag && i < poolset->npools);
    return 0;
}

int
margo_bulk_poolset_release(margo_bulk_poolset_t poolset, hg_bulk_t bulk)
{
    hg_size_t size;

    if (poolset == MARGO_BULK_POOLSET_NULL || bulk == HG_BULK_NULL)
        return -1;
    size = HG_Bulk_get_size(bulk);
    for (hg_size_t i = 0; i < poolset->npools; i++)
        if (poolset->pools[i]->size == size)
            return margo_bulk_pool_release(poolset->pools[i], bulk);
    return -1;
}
