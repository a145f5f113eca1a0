/*
 * An instance's pools and execution streams on abt.h (Argobots' names on
 * POSIX threads), built from its configuration.
 *
 * "__primary__" is the primary execution stream's main pool when the
 * instance is created on an Argobots execution stream (the thread that
 * called ABT_init, which margo_init() calls when nobody did), else a pool
 * of its own. Every other pool is created with ABT_pool_create_basic and
 * every other execution stream with ABT_xstream_create_basic over its
 * pools. Margo frees what it created at finalize, after the finalize
 * callbacks.
 *
 * Where work for a pool runs (margo_schedule_work): the primary pool's
 * work is Margo's caller-context queue (any thread blocked in a Margo
 * call runs it: this is what keeps single-threaded runs on the simulator
 * deterministic); the progress pool's, when the instance has a progress
 * thread, runs on that thread; every other pool gets an Argobots ULT that
 * its execution streams' workers run.
 */
#include "margo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Before margo_init calls ABT_init(): the stack size and stack cache
 * Margo asks for, from the configuration or Margo's defaults, into the
 * environment ABT_init() reads, unless it already says something (the
 * environment wins, as in Margo; margo_cfg_check_abt_env() warned). abt.h
 * reports the stack size as the ULTs' default and keeps no stack cache;
 * margo_get_config() reads both back from the environment. */
static void
margo_abt_env_apply(const struct margo_config *cfg)
{
    char buf[24];

    if (getenv("ABT_THREAD_STACKSIZE") == NULL) {
        snprintf(buf, sizeof(buf), "%lld",
                 (long long) (cfg->abt_thread_stacksize >= 0
                                  ? cfg->abt_thread_stacksize
                                  : MARGO_ABT_STACKSIZE));
        setenv("ABT_THREAD_STACKSIZE", buf, 1);
    }
    if (getenv("ABT_MEM_MAX_NUM_STACKS") == NULL) {
        snprintf(buf, sizeof(buf), "%lld",
                 (long long) (cfg->abt_mem_max_num_stacks >= 0
                                  ? cfg->abt_mem_max_num_stacks
                                  : MARGO_ABT_MAX_NUM_STACKS));
        setenv("ABT_MEM_MAX_NUM_STACKS", buf, 1);
    }
}

/* A child instance (parent_mid) uses its parent's pools and xstreams as
 * they are, the handles copied under the lock in the order its
 * configuration copied their descriptions (which must still match). */
static int
margo_pools_inherit(struct margo_instance *mid)
{
    struct margo_instance *parent = mid->parent;
    bool same;

    pthread_mutex_lock(&margo_lock);
    same = !parent->teardown_started && parent->npools == mid->npools &&
           parent->nxstreams == mid->nxstreams;
    if (same) {
        memcpy(mid->pools, parent->pools, mid->npools * sizeof(*mid->pools));
        memcpy(mid->xstreams, parent->xstreams,
               mid->nxstreams * sizeof(*mid->xstreams));
    }
    pthread_mutex_unlock(&margo_lock);
    if (!same)
        margo_log(NULL, MARGO_LOG_ERROR,
                  "margo_init_ext: the parent instance changed its pools or "
                  "is finalizing");
    return same ? 0 : -1;
}

int
margo_pools_create(struct margo_instance *mid)
{
    const struct margo_config *cfg = &mid->config;
    size_t primary = cfg->primary_pool;
    ABT_xstream self;
    int rc;

    if (ABT_initialized() != ABT_SUCCESS) {
        margo_abt_env_apply(cfg);
        rc = ABT_init(0, NULL);
        if (rc != ABT_SUCCESS) {
            margo_log(NULL, MARGO_LOG_ERROR, "margo_init: ABT_init: %d", rc);
            return -1;
        }
        mid->abt_inited = true;
        mid->abt_init_thread = pthread_self();
    }
    margo_rpc_id_init(mid);
    mid->pools = calloc(cfg->npools, sizeof(*mid->pools));
    mid->xstreams = calloc(cfg->nxstreams, sizeof(*mid->xstreams));
    if (mid->pools == NULL || mid->xstreams == NULL)
        return -1;
    mid->npools = cfg->npools;
    mid->nxstreams = cfg->nxstreams;
    if (mid->parent != NULL)
        return margo_pools_inherit(mid);

    if (ABT_xstream_self(&self) == ABT_SUCCESS &&
        ABT_xstream_get_main_pools(self, 1, &mid->pools[primary]) ==
            ABT_SUCCESS) {
        mid->xstreams[cfg->primary_xstream] = self;
    } else {
        /* Not on an execution stream: the primary pool is Margo's own,
         * served only by threads blocked in Margo calls. */
        rc = ABT_pool_create_basic(ABT_POOL_FIFO_WAIT, ABT_POOL_ACCESS_MPMC,
                                   ABT_FALSE, &mid->pools[primary]);
        if (rc != ABT_SUCCESS)
            return -1;
        mid->owned_primary_pool = true;
    }
    for (size_t i = 0; i < cfg->npools; i++) {
        if (i == primary)
            continue;
        rc = ABT_pool_create_basic(ABT_POOL_FIFO_WAIT, ABT_POOL_ACCESS_MPMC,
                                   ABT_FALSE, &mid->pools[i]);
        if (rc != ABT_SUCCESS) {
            margo_log(NULL, MARGO_LOG_ERROR,
                      "margo_init: cannot create pool \"%s\": %d",
                      cfg->pools[i].name, rc);
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->nxstreams; i++)
        if (i != cfg->primary_xstream && margo_xstream_start(mid, i) != 0)
            return -1;
    return 0;
}

int
margo_xstream_start(struct margo_instance *mid, size_t i)
{
    const struct margo_xstream_spec *x = &mid->config.xstreams[i];
    ABT_pool pools[MARGO_XSTREAM_POOLS_MAX];
    int rc;

    for (size_t j = 0; j < x->npools; j++)
        pools[j] = mid->pools[x->pools[j]];
    rc = ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, (int) x->npools, pools,
                                  ABT_SCHED_CONFIG_NULL, &mid->xstreams[i]);
    if (rc != ABT_SUCCESS) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo: cannot create xstream \"%s\": %d", x->name, rc);
        return -1;
    }
    /* As Margo does: the affinity, then cpubind (which replaces it). A
     * binding the system refuses leaves the stream running unbound. */
    rc = ABT_SUCCESS;
    if (x->naffinity > 0)
        rc = ABT_xstream_set_affinity(mid->xstreams[i], x->naffinity,
                                      x->affinity);
    if (rc == ABT_SUCCESS && x->cpubind >= 0)
        rc = ABT_xstream_set_cpubind(mid->xstreams[i], x->cpubind);
    if (rc != ABT_SUCCESS)
        margo_log(mid, MARGO_LOG_WARNING,
                  "margo: xstream \"%s\" not bound to its CPUs: %d", x->name,
                  rc);
    return 0;
}

void
margo_pools_destroy(struct margo_instance *mid)
{
    /* Execution streams first (join drains their pools), then pools. */
    for (size_t i = 0; i < mid->nxstreams; i++)
        if (i != mid->config.primary_xstream &&
            mid->xstreams[i] != ABT_XSTREAM_NULL &&
            !mid->config.xstreams[i].not_owned)
            ABT_xstream_free(&mid->xstreams[i]);
    for (size_t i = 0; i < mid->npools; i++) {
        if (mid->pools[i] == ABT_POOL_NULL ||
            (i == mid->config.primary_pool ? !mid->owned_primary_pool
                                           : mid->config.pools[i].not_owned))
            continue;
        if (ABT_pool_free(&mid->pools[i]) != ABT_SUCCESS)
            margo_log(mid, MARGO_LOG_WARNING,
                      "margo_finalize: pool \"%s\" still in use; not freed",
                      mid->config.pools[i].name);
    }
    free(mid->pools);
    free(mid->xstreams);
    mid->pools = NULL;
    mid->xstreams = NULL;
    mid->npools = mid->nxstreams = 0;
    margo_rpc_id_fini(mid);
    if (mid->abt_inited && pthread_equal(mid->abt_init_thread, pthread_self()))
        ABT_finalize();
}

/* ---- Scheduling ------------------------------------------------------ */

struct margo_ult {
    struct margo_instance *mid;
    struct margo_handler_entry *e;
};

static void
margo_ult_main(void *arg)
{
    struct margo_ult *u = arg;
    struct margo_instance *mid = u->mid;

    margo_run_entry(mid, u->e, true);
    free(u);
    pthread_mutex_lock(&margo_lock);
    mid->abt_pending--;
    margo_wake(mid);
    pthread_mutex_unlock(&margo_lock);
}

/* Whether Margo's work for a pool runs in the callers' context: the
 * primary pool's, and that of a pool only the primary xstream serves (the
 * thread that created the instance, which runs it when it blocks in a
 * Margo call, as Argobots' primary execution stream would when its main
 * ULT blocks). */
static bool
margo_pool_is_callers(const struct margo_instance *mid, ABT_pool pool)
{
    const struct margo_config *cfg = &mid->config;
    long i = margo_pool_index_locked(mid, pool, NULL);
    bool primary = false, other = false;

    if (i < 0)
        return false;
    if ((unsigned) i == cfg->primary_pool)
        return true;
    for (size_t x = 0; x < cfg->nxstreams; x++)
        for (size_t j = 0; j < cfg->xstreams[x].npools; j++)
            if (cfg->xstreams[x].pools[j] == (unsigned) i) {
                if (x == cfg->primary_xstream)
                    primary = true;
                else
                    other = true;
            }
    return primary && !other;
}

void
margo_schedule_work(struct margo_instance *mid, ABT_pool pool,
                    struct margo_handler_entry *e)
{
    if (pool == ABT_POOL_NULL)
        pool = mid->npools ? mid->pools[mid->config.rpc_pool] : ABT_POOL_NULL;
    e->pool = pool;
    /* Timers' work on the callers' pools is a ULT of its own, as in
     * Margo: a callback that sleeps must not hold up the thread it would
     * otherwise nest in (its own wait may be over first). */
    if (pool == ABT_POOL_NULL ||
        (margo_pool_is_callers(mid, pool) && e->work == NULL) ||
        (mid->has_progress_thread &&
         pool == mid->pools[mid->config.progress_pool])) {
        margo_queue_work(mid, e);
        return;
    }
    margo_spawn_work(mid, e);
}

void
margo_spawn_work(struct margo_instance *mid, struct margo_handler_entry *e)
{
    struct margo_ult *u = malloc(sizeof(*u));
    int rc;

    if (u != NULL && e->pool != ABT_POOL_NULL) {
        u->mid = mid;
        u->e = e;
        mid->abt_pending++;
        rc = ABT_thread_create(e->pool, margo_ult_main, u, ABT_THREAD_ATTR_NULL,
                               NULL);
        if (rc == ABT_SUCCESS)
            return;
        mid->abt_pending--;
    }
    free(u);
    margo_log(mid, MARGO_LOG_ERROR,
              "margo: cannot start a ULT on a pool; dropping the work");
    if (e->work) {
        if (e->drop)
            e->drop(e->arg);
    } else {
        HG_Respond_error(e->handle, NULL, NULL, HG_NOMEM);
        HG_Destroy(e->handle);
        free(e);
    }
}

/* ---- Public calls ---------------------------------------------------- */

/* The pool the instance uses for handlers (progress: false) or progress,
 * read under the lock since pools come and go at run time. */
static int
margo_pool_of_role(margo_instance_id mid, bool progress, ABT_pool *pool)
{
    unsigned idx;
    int rc = -1;

    if (mid == MARGO_INSTANCE_NULL || pool == NULL)
        return -1;
    pthread_mutex_lock(&margo_lock);
    idx = progress ? mid->config.progress_pool : mid->config.rpc_pool;
    if (idx < mid->npools) {
        *pool = mid->pools[idx];
        rc = 0;
    }
    pthread_mutex_unlock(&margo_lock);
    return rc;
}

int
margo_get_handler_pool(margo_instance_id mid, ABT_pool *pool)
{
    return margo_pool_of_role(mid, false, pool);
}

int
margo_get_progress_pool(margo_instance_id mid, ABT_pool *pool)
{
    return margo_pool_of_role(mid, true, pool);
}

size_t
margo_get_num_pools(margo_instance_id mid)
{
    size_t n;

    if (mid == MARGO_INSTANCE_NULL)
        return 0;
    pthread_mutex_lock(&margo_lock);
    n = mid->npools;
    pthread_mutex_unlock(&margo_lock);
    return n;
}

size_t
margo_get_num_xstreams(margo_instance_id mid)
{
    size_t n;

    if (mid == MARGO_INSTANCE_NULL)
        return 0;
    pthread_mutex_lock(&margo_lock);
    n = mid->nxstreams;
    pthread_mutex_unlock(&margo_lock);
    return n;
}

long
margo_pool_index_locked(const struct margo_instance *mid, ABT_pool handle,
                        const char *name)
{
    for (size_t i = 0; i < mid->npools; i++)
        if (name ? strcmp(mid->config.pools[i].name, name) == 0
                 : mid->pools[i] == handle)
            return (long) i;
    return -1;
}

long
margo_xstream_index_locked(const struct margo_instance *mid, ABT_xstream handle,
                           const char *name)
{
    for (size_t i = 0; i < mid->nxstreams; i++)
        if (name ? strcmp(mid->config.xstreams[i].name, name) == 0
                 : mid->xstreams[i] == handle)
            return (long) i;
    return -1;
}

void
margo_pool_info_at(const struct margo_instance *mid, size_t i,
                   struct margo_pool_info *info)
{
    if (info) {
        info->pool = mid->pools[i];
        info->name = mid->config.pools[i].name;
        info->index = (uint32_t) i;
    }
}

hg_return_t
margo_find_pool_by_handle(margo_instance_id mid, ABT_pool handle,
                          struct margo_pool_info *info)
{
    long i;

    if (mid == MARGO_INSTANCE_NULL || handle == ABT_POOL_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_pool_index_locked(mid, handle, NULL);
    if (i >= 0)
        margo_pool_info_at(mid, (size_t) i, info);
    pthread_mutex_unlock(&margo_lock);
    return i >= 0 ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
margo_find_pool_by_name(margo_instance_id mid, const char *name,
                        struct margo_pool_info *info)
{
    long i;

    if (mid == MARGO_INSTANCE_NULL || name == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_pool_index_locked(mid, ABT_POOL_NULL, name);
    if (i >= 0)
        margo_pool_info_at(mid, (size_t) i, info);
    pthread_mutex_unlock(&margo_lock);
    return i >= 0 ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
margo_find_pool_by_index(margo_instance_id mid, uint32_t index,
                         struct margo_pool_info *info)
{
    bool found;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    found = index < mid->npools;
    if (found)
        margo_pool_info_at(mid, index, info);
    pthread_mutex_unlock(&margo_lock);
    /* Margo's code for an index out of range. */
    return found ? HG_SUCCESS : HG_INVALID_ARG;
}

void
margo_xstream_info_at(const struct margo_instance *mid, size_t i,
                      struct margo_xstream_info *info)
{
    if (info) {
        info->xstream = mid->xstreams[i];
        info->name = mid->config.xstreams[i].name;
        info->index = (uint32_t) i;
    }
}

hg_return_t
margo_find_xstream_by_handle(margo_instance_id mid, ABT_xstream handle,
                             struct margo_xstream_info *info)
{
    long i;

    if (mid == MARGO_INSTANCE_NULL || handle == ABT_XSTREAM_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_xstream_index_locked(mid, handle, NULL);
    if (i >= 0)
        margo_xstream_info_at(mid, (size_t) i, info);
    pthread_mutex_unlock(&margo_lock);
    return i >= 0 ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
margo_find_xstream_by_name(margo_instance_id mid, const char *name,
                           struct margo_xstream_info *info)
{
    long i;

    if (mid == MARGO_INSTANCE_NULL || name == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_xstream_index_locked(mid, ABT_XSTREAM_NULL, name);
    if (i >= 0)
        margo_xstream_info_at(mid, (size_t) i, info);
    pthread_mutex_unlock(&margo_lock);
    return i >= 0 ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
margo_find_xstream_by_index(margo_instance_id mid, uint32_t index,
                            struct margo_xstream_info *info)
{
    bool found;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    found = index < mid->nxstreams;
    if (found)
        margo_xstream_info_at(mid, index, info);
    pthread_mutex_unlock(&margo_lock);
    /* Margo's code for an index out of range. */
    return found ? HG_SUCCESS : HG_INVALID_ARG;
}

hg_return_t
margo_rpc_set_pool(margo_instance_id mid, hg_id_t id, ABT_pool pool)
{
    struct margo_rpc_entry *e;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    e = margo_rpc_find(mid, id);
    if (e) {
        margo_pool_ref_move_locked(mid, e->pool, pool);
        e->pool = pool;
    }
    pthread_mutex_unlock(&margo_lock);
    return e ? HG_SUCCESS : HG_NOENTRY;
}

hg_return_t
margo_rpc_get_pool(margo_instance_id mid, hg_id_t id, ABT_pool *pool)
{
    struct margo_rpc_entry *e;

    if (mid == MARGO_INSTANCE_NULL || pool == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    e = margo_rpc_find(mid, id);
    if (e)
        *pool = e->pool != ABT_POOL_NULL ? e->pool
                                         : mid->pools[mid->config.rpc_pool];
    pthread_mutex_unlock(&margo_lock);
    return e ? HG_SUCCESS : HG_NOENTRY;
}

void
margo_pools_dump(struct margo_instance *mid, FILE *f)
{
    pthread_mutex_lock(&margo_lock);
    fprintf(f, "# pools (index, name, waiting, total)\n");
    for (size_t i = 0; i < mid->npools; i++) {
        size_t size = 0, total = 0;

        ABT_pool_get_size(mid->pools[i], &size);
        ABT_pool_get_total_size(mid->pools[i], &total);
        fprintf(f, "pool: %zu %s %zu %zu%s%s\n", i, mid->config.pools[i].name,
                size, total, i == mid->config.rpc_pool ? " rpc" : "",
                i == mid->config.progress_pool ? " progress" : "");
    }
    fprintf(f, "# xstreams (index, name)\n");
    for (size_t i = 0; i < mid->nxstreams; i++)
        fprintf(f, "xstream: %zu %s\n", i, mid->config.xstreams[i].name);
    pthread_mutex_unlock(&margo_lock);
}
