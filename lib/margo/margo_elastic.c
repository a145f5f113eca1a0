/*
 * Pools and execution streams added and removed at run time
 * (margo-config.h): margo_add_pool_from_json, margo_add_pool_external,
 * margo_remove_pool_by_*, margo_pool_ref_*_by_*, margo_pool_release_by_*,
 * their xstream counterparts, and margo_transfer_pool_content.
 *
 * The instance's pools and xstreams are two arrays (mid->pools,
 * mid->xstreams) kept parallel to the configuration's specs, which carry
 * names, kinds, ownership and reference counts; every change happens under
 * margo_lock. A removed entry's slot takes the last entry, as in Margo, so
 * indices of the others may change.
 *
 * A removal that is refused changes nothing. A pool is refused while it
 * is the progress or the default handler pool (HG_OTHER_ERROR), has
 * references (margo_pool_ref_incr, or RPCs registered on it), is in an
 * xstream's scheduler, or holds work, waiting or running (HG_PERMISSION).
 * An xstream is refused while it is __primary__, has references, or is
 * the calling thread's own (HG_PERMISSION). Removing an xstream Margo owns
 * joins it outside the lock, since its work may need the lock to finish.
 */
#include "margo_internal.h"

#include <stdlib.h>
#include <string.h>

/* Which entry a call names: by name (name != NULL), else by handle
 * (by_index false), else by index. A NULL name or handle is no key. */
struct margo_key {
    const char *name;
    ABT_pool pool;
    ABT_xstream xstream;
    uint32_t index;
    bool by_index;
};

#define KEY_POOL(h) ((struct margo_key){NULL, (h), ABT_XSTREAM_NULL, 0, false})
#define KEY_XS(h) ((struct margo_key){NULL, ABT_POOL_NULL, (h), 0, false})
#define KEY_NAME(n)                                                            \
    ((struct margo_key){(n), ABT_POOL_NULL, ABT_XSTREAM_NULL, 0, false})
#define KEY_INDEX(i)                                                           \
    ((struct margo_key){NULL, ABT_POOL_NULL, ABT_XSTREAM_NULL, (i), true})

static bool
margo_key_valid(const struct margo_key *k, bool pool)
{
    if (k->by_index || k->name)
        return true;
    return pool ? k->pool != ABT_POOL_NULL : k->xstream != ABT_XSTREAM_NULL;
}

/* The entry's index, or -1 (lock held). */
static long
margo_key_pool_locked(const struct margo_instance *mid,
                      const struct margo_key *k)
{
    if (k->by_index)
        return k->index < mid->npools ? (long) k->index : -1;
    return margo_pool_index_locked(mid, k->pool, k->name);
}

static long
margo_key_xstream_locked(const struct margo_instance *mid,
                         const struct margo_key *k)
{
    if (k->by_index)
        return k->index < mid->nxstreams ? (long) k->index : -1;
    return margo_xstream_index_locked(mid, k->xstream, k->name);
}

/* ---- Reference counts -------------------------------------------------- */

enum margo_refop { MARGO_REF_INCR, MARGO_REF_RELEASE, MARGO_REF_COUNT };

static hg_return_t
margo_refop(unsigned *refcount, enum margo_refop op, unsigned *out)
{
    switch (op) {
    case MARGO_REF_INCR:
        (*refcount)++;
        break;
    case MARGO_REF_RELEASE:
        if (*refcount == 0)
            return HG_PERMISSION;
        (*refcount)--;
        break;
    case MARGO_REF_COUNT:
        if (out == NULL)
            return HG_INVALID_ARG;
        *out = *refcount;
        break;
    }
    return HG_SUCCESS;
}

/* Margo's codes: an index out of range is HG_INVALID_ARG, a name or handle
 * not found HG_NOENTRY. */
static hg_return_t
margo_pool_refop(margo_instance_id mid, struct margo_key k, enum margo_refop op,
                 unsigned *out)
{
    hg_return_t ret;
    long i;

    if (mid == MARGO_INSTANCE_NULL || !margo_key_valid(&k, true))
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_key_pool_locked(mid, &k);
    if (i < 0)
        ret = k.by_index ? HG_INVALID_ARG : HG_NOENTRY;
    else
        ret = margo_refop(&mid->config.pools[i].refcount, op, out);
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

static hg_return_t
margo_xstream_refop(margo_instance_id mid, struct margo_key k,
                    enum margo_refop op, unsigned *out)
{
    hg_return_t ret;
    long i;

    if (mid == MARGO_INSTANCE_NULL || !margo_key_valid(&k, false))
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_key_xstream_locked(mid, &k);
    if (i < 0)
        ret = k.by_index ? HG_INVALID_ARG : HG_NOENTRY;
    else
        ret = margo_refop(&mid->config.xstreams[i].refcount, op, out);
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

void
margo_pool_ref_move_locked(struct margo_instance *mid, ABT_pool old_pool,
                           ABT_pool new_pool)
{
    long i;

    if (old_pool == new_pool)
        return;
    if (old_pool != ABT_POOL_NULL &&
        (i = margo_pool_index_locked(mid, old_pool, NULL)) >= 0 &&
        mid->config.pools[i].refcount > 0)
        mid->config.pools[i].refcount--;
    if (new_pool != ABT_POOL_NULL &&
        (i = margo_pool_index_locked(mid, new_pool, NULL)) >= 0)
        mid->config.pools[i].refcount++;
}

hg_return_t
margo_pool_ref_incr_by_handle(margo_instance_id mid, ABT_pool handle)
{
    return margo_pool_refop(mid, KEY_POOL(handle), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_pool_ref_incr_by_name(margo_instance_id mid, const char *name)
{
    return margo_pool_refop(mid, KEY_NAME(name), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_pool_ref_incr_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_pool_refop(mid, KEY_INDEX(index), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_pool_ref_count_by_handle(margo_instance_id mid, ABT_pool handle,
                               unsigned *refcount)
{
    return margo_pool_refop(mid, KEY_POOL(handle), MARGO_REF_COUNT, refcount);
}

hg_return_t
margo_pool_ref_count_by_name(margo_instance_id mid, const char *name,
                             unsigned *refcount)
{
    return margo_pool_refop(mid, KEY_NAME(name), MARGO_REF_COUNT, refcount);
}

hg_return_t
margo_pool_ref_count_by_index(margo_instance_id mid, uint32_t index,
                              unsigned *refcount)
{
    return margo_pool_refop(mid, KEY_INDEX(index), MARGO_REF_COUNT, refcount);
}

hg_return_t
margo_pool_release_by_handle(margo_instance_id mid, ABT_pool handle)
{
    return margo_pool_refop(mid, KEY_POOL(handle), MARGO_REF_RELEASE, NULL);
}

hg_return_t
margo_pool_release_by_name(margo_instance_id mid, const char *name)
{
    return margo_pool_refop(mid, KEY_NAME(name), MARGO_REF_RELEASE, NULL);
}

hg_return_t
margo_pool_release_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_pool_refop(mid, KEY_INDEX(index), MARGO_REF_RELEASE, NULL);
}

hg_return_t
margo_xstream_ref_incr_by_handle(margo_instance_id mid, ABT_xstream handle)
{
    return margo_xstream_refop(mid, KEY_XS(handle), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_xstream_ref_incr_by_name(margo_instance_id mid, const char *name)
{
    return margo_xstream_refop(mid, KEY_NAME(name), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_xstream_ref_incr_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_xstream_refop(mid, KEY_INDEX(index), MARGO_REF_INCR, NULL);
}

hg_return_t
margo_xstream_ref_count_by_handle(margo_instance_id mid, ABT_xstream handle,
                                  unsigned *refcount)
{
    return margo_xstream_refop(mid, KEY_XS(handle), MARGO_REF_COUNT, refcount);
}

hg_return_t
margo_xstream_ref_count_by_name(margo_instance_id mid, const char *name,
                                unsigned *refcount)
{
    return margo_xstream_refop(mid, KEY_NAME(name), MARGO_REF_COUNT, refcount);
}

hg_return_t
margo_xstream_ref_count_by_index(margo_instance_id mid, uint32_t index,
                                 unsigned *refcount)
{
    return margo_xstream_refop(mid, KEY_INDEX(index), MARGO_REF_COUNT,
                               refcount);
}

hg_return_t
margo_xstream_release_by_handle(margo_instance_id mid, ABT_xstream handle)
{
    return margo_xstream_refop(mid, KEY_XS(handle), MARGO_REF_RELEASE, NULL);
}

hg_return_t
margo_xstream_release_by_name(margo_instance_id mid, const char *name)
{
    return margo_xstream_refop(mid, KEY_NAME(name), MARGO_REF_RELEASE, NULL);
}

hg_return_t
margo_xstream_release_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_xstream_refop(mid, KEY_INDEX(index), MARGO_REF_RELEASE, NULL);
}

/* ---- Adding ------------------------------------------------------------ */

/* Room for one more pool / xstream handle (lock held). */
static bool
margo_pools_grow_locked(struct margo_instance *mid)
{
    ABT_pool *p = realloc(mid->pools, (mid->npools + 1) * sizeof(*p));

    if (p != NULL)
        mid->pools = p;
    return p != NULL;
}

static bool
margo_xstreams_grow_locked(struct margo_instance *mid)
{
    ABT_xstream *x = realloc(mid->xstreams, (mid->nxstreams + 1) * sizeof(*x));

    if (x != NULL)
        mid->xstreams = x;
    return x != NULL;
}

hg_return_t
margo_add_pool_from_json(margo_instance_id mid, const char *json,
                         struct margo_pool_info *info)
{
    hg_return_t ret = HG_SUCCESS;
    size_t i;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = mid->npools;
    if (mid->teardown_started || !margo_pools_grow_locked(mid)) {
        ret = mid->teardown_started ? HG_CANCELED : HG_NOMEM;
    } else if (margo_config_add_pool_json(&mid->config, json) != 0) {
        ret = HG_INVALID_ARG;
    } else if (ABT_pool_create_basic(ABT_POOL_FIFO_WAIT, ABT_POOL_ACCESS_MPMC,
                                     ABT_FALSE,
                                     &mid->pools[i]) != ABT_SUCCESS) {
        margo_config_remove_pool(&mid->config, i);
        ret = HG_OTHER_ERROR;
    } else {
        mid->npools++;
        margo_pool_info_at(mid, i, info);
    }
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

hg_return_t
margo_add_pool_external(margo_instance_id mid, const char *name, ABT_pool pool,
                        ABT_bool take_ownership, struct margo_pool_info *info)
{
    hg_return_t ret = HG_SUCCESS;
    size_t i;

    if (mid == MARGO_INSTANCE_NULL || pool == ABT_POOL_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = mid->npools;
    if (margo_pool_index_locked(mid, pool, NULL) >= 0) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_add_pool_external: pool already registered");
        ret = HG_INVALID_ARG;
    } else if (!margo_pools_grow_locked(mid)) {
        ret = HG_NOMEM;
    } else if (margo_config_add_external_pool(&mid->config, name) != 0) {
        ret = HG_INVALID_ARG;
    } else {
        mid->pools[i] = pool;
        mid->config.pools[i].not_owned = take_ownership != ABT_TRUE;
        mid->npools++;
        margo_pool_info_at(mid, i, info);
    }
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

hg_return_t
margo_add_xstream_from_json(margo_instance_id mid, const char *json,
                            struct margo_xstream_info *info)
{
    hg_return_t ret = HG_SUCCESS;
    size_t i;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = mid->nxstreams;
    if (mid->teardown_started || !margo_xstreams_grow_locked(mid)) {
        ret = mid->teardown_started ? HG_CANCELED : HG_NOMEM;
    } else if (margo_config_add_xstream_json(&mid->config, json) != 0) {
        ret = HG_INVALID_ARG;
    } else if (margo_xstream_start(mid, i) != 0) {
        margo_config_remove_xstream(&mid->config, i);
        ret = HG_OTHER_ERROR;
    } else {
        mid->nxstreams++;
        margo_xstream_info_at(mid, i, info);
    }
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

/* The pools of xstream's scheduler as indices into mid's pools (lock
 * held). Returns the count, or -1 if one of them is not the instance's
 * (Margo refuses such an xstream). */
static int
margo_xstream_pools_locked(struct margo_instance *mid, ABT_xstream xstream,
                           unsigned *idx)
{
    ABT_pool pools[MARGO_XSTREAM_POOLS_MAX];
    ABT_sched sched;
    int n;

    if (ABT_xstream_get_main_sched(xstream, &sched) != ABT_SUCCESS ||
        ABT_sched_get_num_pools(sched, &n) != ABT_SUCCESS || n <= 0 ||
        n > MARGO_XSTREAM_POOLS_MAX ||
        ABT_sched_get_pools(sched, n, 0, pools) != ABT_SUCCESS)
        return -1;
    for (int j = 0; j < n; j++) {
        long i = margo_pool_index_locked(mid, pools[j], NULL);

        if (i < 0) {
            margo_log(mid, MARGO_LOG_ERROR,
                      "margo_add_xstream_external: a pool of this xstream is "
                      "not registered (margo_add_pool_external first)");
            return -1;
        }
        idx[j] = (unsigned) i;
    }
    return n;
}

hg_return_t
margo_add_xstream_external(margo_instance_id mid, const char *name,
                           ABT_xstream xstream, ABT_bool take_ownership,
                           struct margo_xstream_info *info)
{
    unsigned idx[MARGO_XSTREAM_POOLS_MAX];
    hg_return_t ret = HG_SUCCESS;
    size_t i;
    int n;

    if (mid == MARGO_INSTANCE_NULL || xstream == ABT_XSTREAM_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = mid->nxstreams;
    if (margo_xstream_index_locked(mid, xstream, NULL) >= 0 ||
        (name &&
         margo_xstream_index_locked(mid, ABT_XSTREAM_NULL, name) >= 0)) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_add_xstream_external: xstream or name already "
                  "registered");
        ret = HG_INVALID_ARG;
    } else if (!margo_xstreams_grow_locked(mid)) {
        ret = HG_NOMEM;
    } else if ((n = margo_xstream_pools_locked(mid, xstream, idx)) < 0 ||
               margo_config_add_external_xstream(&mid->config, name, idx,
                                                 (size_t) n) != 0) {
        ret = HG_INVALID_ARG;
    } else {
        mid->xstreams[i] = xstream;
        mid->config.xstreams[i].not_owned = take_ownership != ABT_TRUE;
        mid->nxstreams++;
        margo_xstream_info_at(mid, i, info);
    }
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

/* ---- Removing ---------------------------------------------------------- */

static hg_return_t
margo_pool_remove_key(margo_instance_id mid, struct margo_key k)
{
    struct margo_pool_spec *spec;
    hg_return_t ret = HG_SUCCESS;
    size_t total = 0;
    long i;

    if (mid == MARGO_INSTANCE_NULL || !margo_key_valid(&k, true))
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    i = margo_key_pool_locked(mid, &k);
    if (i < 0) {
        ret = HG_INVALID_ARG;
        goto out;
    }
    spec = &mid->config.pools[i];
    if ((unsigned) i == mid->config.progress_pool ||
        (unsigned) i == mid->config.rpc_pool) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo: removing the %s pool \"%s\" is not allowed",
                  (unsigned) i == mid->config.progress_pool ? "progress"
                                                            : "default handler",
                  spec->name);
        ret = HG_OTHER_ERROR;
        goto out;
    }
    for (size_t x = 0; x < mid->config.nxstreams && ret == HG_SUCCESS; x++)
        for (size_t j = 0; j < mid->config.xstreams[x].npools; j++)
            if (mid->config.xstreams[x].pools[j] == (unsigned) i)
                ret = HG_PERMISSION;
    if (ret == HG_SUCCESS && spec->refcount > 0)
        ret = HG_PERMISSION;
    if (ret == HG_SUCCESS &&
        (ABT_pool_get_total_size(mid->pools[i], &total) != ABT_SUCCESS ||
         total > 0))
        ret = HG_PERMISSION;
    /* Free it before forgetting it, so that a refusal changes nothing. */
    if (ret == HG_SUCCESS && !spec->not_owned &&
        !((unsigned) i == mid->config.primary_pool &&
          !mid->owned_primary_pool) &&
        ABT_pool_free(&mid->pools[i]) != ABT_SUCCESS)
        ret = HG_PERMISSION;
    if (ret != HG_SUCCESS) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo: pool \"%s\" is in use (%u references, %zu ULTs, or "
                  "an xstream's scheduler): not removed",
                  spec->name, spec->refcount, total);
        goto out;
    }
    mid->pools[i] = mid->pools[mid->npools - 1];
    margo_config_remove_pool(&mid->config, (size_t) i);
    mid->npools--;
out:
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

hg_return_t
margo_remove_pool_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_pool_remove_key(mid, KEY_INDEX(index));
}

hg_return_t
margo_remove_pool_by_name(margo_instance_id mid, const char *name)
{
    return margo_pool_remove_key(mid, KEY_NAME(name));
}

hg_return_t
margo_remove_pool_by_handle(margo_instance_id mid, ABT_pool handle)
{
    return margo_pool_remove_key(mid, KEY_POOL(handle));
}

static hg_return_t
margo_xstream_remove_key(margo_instance_id mid, struct margo_key k)
{
    ABT_xstream xs = ABT_XSTREAM_NULL, self = ABT_XSTREAM_NULL;
    hg_return_t ret = HG_SUCCESS;
    bool owned = false;
    long i;

    if (mid == MARGO_INSTANCE_NULL || !margo_key_valid(&k, false))
        return HG_INVALID_ARG;
    (void) ABT_xstream_self(&self);
    pthread_mutex_lock(&margo_lock);
    i = margo_key_xstream_locked(mid, &k);
    if (i < 0) {
        /* Margo's codes: HG_OTHER_ERROR for an index out of range. */
        ret = k.by_index ? HG_OTHER_ERROR : HG_INVALID_ARG;
    } else if ((unsigned) i == mid->config.primary_xstream ||
               mid->config.xstreams[i].refcount > 0 ||
               mid->xstreams[i] == self) {
        margo_log(
            mid, MARGO_LOG_ERROR, "margo: xstream \"%s\" is %s: not removed",
            mid->config.xstreams[i].name,
            (unsigned) i == mid->config.primary_xstream ? "the primary xstream"
            : mid->xstreams[i] == self                  ? "the caller's own"
                                                        : "referenced");
        ret = HG_PERMISSION;
    } else {
        xs = mid->xstreams[i];
        owned = !mid->config.xstreams[i].not_owned;
        mid->xstreams[i] = mid->xstreams[mid->nxstreams - 1];
        margo_config_remove_xstream(&mid->config, (size_t) i);
        mid->nxstreams--;
    }
    pthread_mutex_unlock(&margo_lock);
    /* Joining runs the work left in its pools, which may need the lock. */
    if (owned)
        ABT_xstream_free(&xs);
    return ret;
}

hg_return_t
margo_remove_xstream_by_index(margo_instance_id mid, uint32_t index)
{
    return margo_xstream_remove_key(mid, KEY_INDEX(index));
}

hg_return_t
margo_remove_xstream_by_name(margo_instance_id mid, const char *name)
{
    return margo_xstream_remove_key(mid, KEY_NAME(name));
}

hg_return_t
margo_remove_xstream_by_handle(margo_instance_id mid, ABT_xstream handle)
{
    return margo_xstream_remove_key(mid, KEY_XS(handle));
}

hg_return_t
margo_transfer_pool_content(ABT_pool origin_pool, ABT_pool target_pool)
{
    ABT_thread t;

    if (origin_pool == ABT_POOL_NULL || target_pool == ABT_POOL_NULL)
        return HG_INVALID_ARG;
    /* Waiting ULTs only: running or blocked ones stay counted in the
     * origin's total size. */
    while (ABT_pool_pop_thread(origin_pool, &t) == ABT_SUCCESS &&
           t != ABT_THREAD_NULL)
        if (ABT_pool_push_thread(target_pool, t) != ABT_SUCCESS)
            return HG_OTHER_ERROR;
    return HG_SUCCESS;
}

int
margo_migrate_progress_loop(margo_instance_id mid, unsigned pool_idx)
{
    int rc = ABT_SUCCESS;

    if (mid == MARGO_INSTANCE_NULL)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&margo_lock);
    if (pool_idx >= mid->npools)
        rc = ABT_ERR_INV_ARG;
    else
        mid->config.progress_pool = pool_idx;
    pthread_mutex_unlock(&margo_lock);
    return rc;
}
