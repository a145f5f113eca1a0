/*
 * Execution streams: a rank, a scheduler (its list of pools) and the
 * worker pthreads that run them (abt_runtime.c).
 */
#include "abt/abt_internal.h"

#include <stdlib.h>

static int
rank_used_locked(int rank)
{
    for (ABT_xstream xs = abt_g.xstreams; xs; xs = xs->next)
        if (xs->rank == rank)
            return 1;
    return 0;
}

static int
xstream_create(ABT_sched sched, int rank, ABT_xstream *newxstream)
{
    if (!newxstream)
        return ABT_ERR_INV_ARG;
    if (!abt_initialized())
        return ABT_ERR_UNINITIALIZED;
    int own_sched = 0;
    if (!sched) {
        int ret = ABT_sched_create_basic(ABT_SCHED_DEFAULT, 1, NULL,
                                         ABT_SCHED_CONFIG_NULL, &sched);
        if (ret != ABT_SUCCESS)
            return ret;
        own_sched = 1;
    }
    ABT_xstream xs = calloc(1, sizeof(*xs));
    if (!xs) {
        if (own_sched)
            ABT_sched_free(&sched);
        return ABT_ERR_MEM;
    }
    abt_xs_init_conds(xs);

    int ret = ABT_SUCCESS;
    pthread_mutex_lock(&abt_g.lock);
    if (sched->owner) {
        ret = ABT_ERR_INV_SCHED;
    } else if (rank >= 0 && rank_used_locked(rank)) {
        ret = ABT_ERR_INV_XSTREAM_RANK;
    } else {
        if (rank < 0)
            for (rank = 1; rank_used_locked(rank); rank++)
                ;
        xs->rank = rank;
        xs->sched = sched;
        sched->owner = xs;
        xs->next = abt_g.xstreams;
        abt_g.xstreams = xs;
        abt_g.num_xstreams++;
    }
    pthread_mutex_unlock(&abt_g.lock);
    if (ret == ABT_SUCCESS)
        ret = abt_xs_start(xs);
    if (ret != ABT_SUCCESS) {
        if (xs->sched) {
            ABT_xstream *pp;
            pthread_mutex_lock(&abt_g.lock);
            for (pp = &abt_g.xstreams; *pp != xs; pp = &(*pp)->next)
                ;
            *pp = xs->next;
            abt_g.num_xstreams--;
            sched->owner = NULL;
            pthread_mutex_unlock(&abt_g.lock);
        }
        if (own_sched)
            ABT_sched_free(&sched);
        pthread_cond_destroy(&xs->wake);
        pthread_cond_destroy(&xs->done);
        free(xs);
        return ret;
    }
    *newxstream = xs;
    return ABT_SUCCESS;
}

int
ABT_xstream_create(ABT_sched sched, ABT_xstream *newxstream)
{
    return xstream_create(sched, -1, newxstream);
}

int
ABT_xstream_create_with_rank(ABT_sched sched, int rank, ABT_xstream *newxstream)
{
    if (rank < 0)
        return ABT_ERR_INV_XSTREAM_RANK;
    return xstream_create(sched, rank, newxstream);
}

int
ABT_xstream_create_basic(ABT_sched_predef predef, int num_pools,
                         ABT_pool *pools, ABT_sched_config config,
                         ABT_xstream *newxstream)
{
    ABT_sched sched;
    if (!newxstream)
        return ABT_ERR_INV_ARG;
    int ret = ABT_sched_create_basic(predef, num_pools, pools, config, &sched);
    if (ret != ABT_SUCCESS)
        return ret;
    ret = xstream_create(sched, -1, newxstream);
    if (ret != ABT_SUCCESS)
        ABT_sched_free(&sched);
    return ret;
}

int
ABT_xstream_join(ABT_xstream xstream)
{
    if (!xstream || xstream->primary || xstream == abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    struct abt_worker *dead = NULL;
    abt_wait_hook_before();
    abt_block_begin();
    pthread_mutex_lock(&abt_g.lock);
    if (!xstream->terminated) {
        xstream->join_req = 1;
        pthread_cond_broadcast(&xstream->wake);
        abt_xs_kick_locked(xstream);
        while (xstream->workers > 0)
            pthread_cond_wait(&xstream->done, &abt_g.lock);
        xstream->terminated = 1;
        abt_g.num_xstreams--;
        abt_xs_reap_locked(xstream, &dead);
        if (xstream->base) {
            xstream->base->next = dead;
            dead = xstream->base;
            xstream->base = NULL;
        }
    }
    pthread_mutex_unlock(&abt_g.lock);
    abt_reap_join(dead);
    abt_block_end();
    abt_wait_hook_after();
    return ABT_SUCCESS;
}

int
ABT_xstream_free(ABT_xstream *xstream)
{
    if (!xstream || !*xstream)
        return ABT_ERR_INV_XSTREAM;
    ABT_xstream xs = *xstream;
    int ret = ABT_xstream_join(xs);
    if (ret != ABT_SUCCESS)
        return ret;
    pthread_mutex_lock(&abt_g.lock);
    ABT_xstream *pp = &abt_g.xstreams;
    while (*pp && *pp != xs)
        pp = &(*pp)->next;
    if (*pp)
        *pp = xs->next;
    ABT_sched s = xs->sched;
    xs->sched = NULL;
    pthread_mutex_unlock(&abt_g.lock);
    abt_sched_destroy(s, 1);
    pthread_cond_destroy(&xs->wake);
    pthread_cond_destroy(&xs->done);
    free(xs->cpuids);
    free(xs);
    *xstream = ABT_XSTREAM_NULL;
    return ABT_SUCCESS;
}

int
ABT_xstream_self(ABT_xstream *xstream)
{
    if (!xstream)
        return ABT_ERR_INV_ARG;
    *xstream = abt_self.xs;
    return abt_self.xs ? ABT_SUCCESS : ABT_ERR_INV_XSTREAM;
}

int
ABT_xstream_self_rank(int *rank)
{
    if (!rank)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    *rank = __atomic_load_n(&abt_self.xs->rank, __ATOMIC_RELAXED);
    return ABT_SUCCESS;
}

int
ABT_xstream_get_rank(ABT_xstream xstream, int *rank)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!rank)
        return ABT_ERR_INV_ARG;
    *rank = __atomic_load_n(&xstream->rank, __ATOMIC_RELAXED);
    return ABT_SUCCESS;
}

int
ABT_xstream_get_main_sched(ABT_xstream xstream, ABT_sched *sched)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!sched)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *sched = xstream->sched;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_xstream_get_main_pools(ABT_xstream xstream, int max_pools, ABT_pool *pools)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (max_pools < 0 || (max_pools > 0 && !pools))
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    ABT_sched s = xstream->sched;
    int n = s ? s->num_pools : 0;
    for (int i = 0; i < max_pools && i < n; i++)
        pools[i] = s->pools[i];
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

/* Swaps in a scheduler; the old one is destroyed (its automatic pools go
 * with it when nobody else uses them and they are empty). */
int
ABT_xstream_set_main_sched(ABT_xstream xstream, ABT_sched sched)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!sched)
        return ABT_ERR_INV_SCHED;
    pthread_mutex_lock(&abt_g.lock);
    if (sched->owner || xstream->terminated) {
        pthread_mutex_unlock(&abt_g.lock);
        return sched->owner ? ABT_ERR_INV_SCHED : ABT_ERR_INV_XSTREAM;
    }
    /* A user-defined scheduler's loop is the stream's base worker from
     * its creation to its end: it can be neither swapped in nor out. */
    if (sched->user || xstream->sched->user) {
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_ERR_FEATURE_NA;
    }
    ABT_sched old = xstream->sched;
    xstream->sched = sched;
    sched->owner = xstream;
    old->owner = NULL;
    pthread_cond_broadcast(&xstream->wake);
    abt_xs_kick_locked(xstream);
    pthread_mutex_unlock(&abt_g.lock);
    abt_sched_destroy(old, 0);
    return ABT_SUCCESS;
}

int
ABT_xstream_set_main_sched_basic(ABT_xstream xstream, ABT_sched_predef predef,
                                 int num_pools, ABT_pool *pools)
{
    ABT_sched sched;
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    int ret = ABT_sched_create_basic(predef, num_pools, pools,
                                     ABT_SCHED_CONFIG_NULL, &sched);
    if (ret != ABT_SUCCESS)
        return ret;
    ret = ABT_xstream_set_main_sched(xstream, sched);
    if (ret != ABT_SUCCESS)
        ABT_sched_free(&sched);
    return ret;
}

int
ABT_xstream_get_state(ABT_xstream xstream, ABT_xstream_state *state)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!state)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *state = xstream->terminated ? ABT_XSTREAM_STATE_TERMINATED
                                 : ABT_XSTREAM_STATE_RUNNING;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_xstream_equal(ABT_xstream xstream1, ABT_xstream xstream2, ABT_bool *result)
{
    if (!result)
        return ABT_ERR_INV_ARG;
    *result = xstream1 == xstream2 ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_xstream_get_num(int *num_xstreams)
{
    if (!num_xstreams)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    int n = abt_g.num_xstreams;
    int init = abt_g.init_count > 0;
    pthread_mutex_unlock(&abt_g.lock);
    if (!init)
        return ABT_ERR_UNINITIALIZED;
    *num_xstreams = n;
    return ABT_SUCCESS;
}

int
ABT_xstream_is_primary(ABT_xstream xstream, ABT_bool *is_primary)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!is_primary)
        return ABT_ERR_INV_ARG;
    *is_primary = xstream->primary ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}
