/*
 * Instance lifetime: margo_init(), margo_finalize(),
 * margo_wait_for_finalize().
 *
 * Shutdown happens in one place, margo_teardown(), on a thread that is not
 * inside a handler and is not one of the instance's own threads: it must
 * join those threads and free what handlers still use. margo_finalize()
 * called anywhere else only records the request; the teardown then runs in
 * margo_wait_for_finalize() (or a later margo_finalize() from outside any
 * handler).
 */
#include "margo_internal.h"

#include <stdlib.h>
#include <string.h>

/* Broadcast when an instance's teardown has finished. */
static pthread_cond_t margo_finalized_cond = PTHREAD_COND_INITIALIZER;

struct margo_instance *
margo_instance_of_class(hg_class_t *hg_class)
{
    return hg_class ? HG_Class_get_data(hg_class) : NULL;
}

void
margo_instance_free(struct margo_instance *mid)
{
    margo_callback_stack_free(&mid->prefinalize_cbs);
    margo_callback_stack_free(&mid->finalize_cbs);
    margo_rpcs_free(mid);
    margo_config_free(&mid->config);
    free(mid->addrs);
    free(mid);
}

/* How many execution streams of the configuration serve pool `idx`,
 * "__primary__" (the callers' context) not counted. */
static int
margo_pool_xstream_count(const struct margo_config *cfg, unsigned idx)
{
    int n = 0;

    for (size_t i = 0; i < cfg->nxstreams; i++)
        for (size_t j = 0;
             j < cfg->xstreams[i].npools && i != cfg->primary_xstream; j++)
            if (cfg->xstreams[i].pools[j] == idx) {
                n++;
                break;
            }
    return n;
}

/*
 * Create an instance from a built configuration (which it takes over) and,
 * optionally, an HG class and context the caller keeps owning.
 */
static margo_instance_id
margo_init_cfg(const char *addr_str, int mode, struct margo_config *cfg,
               hg_class_t *hg_class, hg_context_t *hg_context,
               const struct margo_logger *logger, struct margo_instance *parent)
{
    struct margo_instance *mid;
    hg_bool_t listen = mode == MARGO_SERVER_MODE ? HG_TRUE : HG_FALSE;
    const char *name;
    hg_return_t ret;

    mid = calloc(1, sizeof(*mid));
    if (mid == NULL) {
        margo_config_free(cfg);
        return MARGO_INSTANCE_NULL;
    }
    mid->config = *cfg;
    mid->parent = parent;
    atomic_init(&mid->log_level, margo_log_default_level());
    atomic_init(&mid->progress_timeout_ub_ms, cfg->progress_timeout_ub_msec);
    margo_log_inherit(mid);
    if (logger)
        margo_set_logger(mid, logger);
    mid->listening = listen;
    mid->has_progress_thread = cfg->use_progress_thread;
    /* Where handlers run, in the terms of margo.h's rpc_thread_count: the
     * primary pool is the callers' context, the progress pool the progress
     * thread, any other pool that many handler threads as execution
     * streams serve it. */
    if (cfg->rpc_pool == cfg->primary_pool)
        mid->rpc_thread_count = 0;
    else if (cfg->rpc_pool == cfg->progress_pool)
        mid->rpc_thread_count = -1;
    else
        mid->rpc_thread_count = margo_pool_xstream_count(cfg, cfg->rpc_pool);

    /* HG's log settings are process-wide, as in Margo. */
    if (cfg->log_level != NULL)
        HG_Set_log_level(cfg->log_level);
    if (cfg->log_subsys != NULL)
        HG_Set_log_subsys(cfg->log_subsys);
    if (hg_class) {
        mid->hg_class = hg_class;
        mid->hg_context = hg_context;
        mid->external_hg = true;
        mid->listening = HG_Class_is_listening(hg_class);
    } else {
        /* The configuration's hg_init_info is this version's layout. */
        mid->hg_class =
            HG_Init_opt2(addr_str, listen, HG_VERSION(2, 4), &cfg->hg);
        if (mid->hg_class == NULL) {
            margo_log(NULL, MARGO_LOG_ERROR,
                      "margo_init: cannot initialize HG with \"%s\"", addr_str);
            goto error_free;
        }
    }
    if (mid->hg_context == NULL) {
        mid->hg_context = HG_Context_create(mid->hg_class);
        if (mid->hg_context == NULL) {
            margo_log(NULL, MARGO_LOG_ERROR,
                      "margo_init: cannot create an HG context");
            goto error_finalize;
        }
        mid->owns_context = true;
    }
    /* The simulated fabric's clock is virtual: waiting on it costs no real
     * time, which margo_test() uses to let time move. */
    name = HG_Class_get_name(mid->hg_class);
    mid->virtual_clock = name != NULL && strcmp(name, "sim") == 0;
    ret = HG_Class_set_data(mid->hg_class, mid, NULL);
    if (ret != HG_SUCCESS) {
        margo_log(NULL, MARGO_LOG_ERROR, "margo_init: HG_Class_set_data: %s",
                  HG_Error_to_string(ret));
        goto error_context;
    }

    margo_config_report(&mid->config, mid->hg_class, addr_str,
                        mid->external_hg);

    margo_abt_hooks_install();
    pthread_mutex_lock(&margo_lock);
    margo_all_add(mid);
    if (!mid->has_progress_thread)
        margo_driven_add(mid);
    pthread_mutex_unlock(&margo_lock);
    mid->refcount = 1;
    mid->identity_id = margo_identity_register(mid);
    mid->shutdown_id = margo_shutdown_register(mid);
    if (mid->identity_id == 0 || mid->shutdown_id == 0)
        goto error_unlist;
    if (margo_pools_create(mid) != 0 || margo_threads_start(mid) != 0)
        goto error_unlist;
    if (mid->config.enable_abt_profiling)
        margo_log(mid, MARGO_LOG_WARNING,
                  "margo: \"enable_abt_profiling\" is not supported (no "
                  "Argobots tool interface): no profile is recorded");
    if (parent != NULL)
        margo_instance_ref_incr(parent);
    margo_log(mid, MARGO_LOG_DEBUG,
              "margo: initialized \"%s\" (%s, progress thread %s, "
              "rpc_thread_count %d)",
              addr_str ? addr_str : "(existing class)",
              mid->listening ? "server" : "client",
              mid->has_progress_thread ? "yes" : "no", mid->rpc_thread_count);
    return mid;

error_unlist:
    pthread_mutex_lock(&margo_lock);
    margo_driven_remove(mid);
    margo_all_remove(mid);
    pthread_mutex_unlock(&margo_lock);
    margo_pools_destroy(mid);
error_context:
    if (mid->owns_context)
        HG_Context_destroy(mid->hg_context);
error_finalize:
    if (!mid->external_hg)
        HG_Finalize(mid->hg_class);
error_free:
    margo_instance_free(mid);
    return MARGO_INSTANCE_NULL;
}

static bool
margo_mode_valid(const char *addr_str, int mode)
{
    if (addr_str == NULL ||
        (mode != MARGO_CLIENT_MODE && mode != MARGO_SERVER_MODE)) {
        margo_log(NULL, MARGO_LOG_ERROR,
                  "margo_init: invalid argument (addr %s, mode %d)",
                  addr_str ? addr_str : "NULL", mode);
        return false;
    }
    return true;
}

margo_instance_id
margo_init_opt(const char *addr_str, int mode,
               const struct hg_init_info *hg_init_info, int use_progress_thread,
               int rpc_thread_count)
{
    struct margo_config cfg;

    if (!margo_mode_valid(addr_str, mode))
        return MARGO_INSTANCE_NULL;
    if (rpc_thread_count < -1) {
        margo_log(NULL, MARGO_LOG_ERROR,
                  "margo_init: invalid rpc_thread_count %d", rpc_thread_count);
        return MARGO_INSTANCE_NULL;
    }
    if (margo_config_build(&cfg, NULL, use_progress_thread, rpc_thread_count,
                           hg_init_info) != 0)
        return MARGO_INSTANCE_NULL;
    return margo_init_cfg(addr_str, mode, &cfg, NULL, NULL, NULL, NULL);
}

margo_instance_id
margo_init_ext(const char *address, int mode,
               const struct margo_init_info *info)
{
    struct margo_config cfg;
    const char *json = info ? info->json_config : NULL;

    if (info && info->hg_context && !info->hg_class) {
        margo_log(NULL, MARGO_LOG_ERROR,
                  "margo_init_ext: hg_context given without its hg_class");
        return MARGO_INSTANCE_NULL;
    }
    if (!(info && info->hg_class) && !margo_mode_valid(address, mode))
        return MARGO_INSTANCE_NULL;
    if (info && (info->progress_pool != ABT_POOL_NULL ||
                 info->rpc_pool != ABT_POOL_NULL)) {
        margo_log(NULL, MARGO_LOG_ERROR,
                  "margo_init_ext: external progress_pool / rpc_pool are not "
                  "supported; name the pools in the JSON configuration");
        return MARGO_INSTANCE_NULL;
    }
    /* A child instance (Margo 0.23's parent_mid) runs on its parent's
     * pools and execution streams and holds a reference to it. */
    if (info && info->parent_mid != MARGO_INSTANCE_NULL) {
        struct margo_instance *parent = info->parent_mid;
        int rc = -1;

        pthread_mutex_lock(&margo_lock);
        if (!parent->teardown_started)
            rc = margo_config_build_child(&cfg, json, &parent->config,
                                          info->hg_init_info);
        pthread_mutex_unlock(&margo_lock);
        if (rc != 0) {
            margo_log(NULL, MARGO_LOG_ERROR,
                      "margo_init_ext: cannot make an instance on parent_mid's "
                      "pools and xstreams");
            return MARGO_INSTANCE_NULL;
        }
        return margo_init_cfg(address, mode, &cfg, info->hg_class,
                              info->hg_context, info->logger, parent);
    }
    if (margo_config_build(&cfg, json, 0, 0, info ? info->hg_init_info : NULL))
        return MARGO_INSTANCE_NULL;
    return margo_init_cfg(address, mode, &cfg, info ? info->hg_class : NULL,
                          info ? info->hg_context : NULL,
                          info ? info->logger : NULL, NULL);
}

char *
margo_get_config_opt(margo_instance_id mid, int options)
{
    char addr[256] = "", *json;
    hg_size_t size = sizeof(addr);
    hg_addr_t self;
    struct margo_config_live live;

    if (mid == MARGO_INSTANCE_NULL || mid->hg_class == NULL)
        return NULL;
    if (HG_Addr_self(mid->hg_class, &self) == HG_SUCCESS) {
        if (HG_Addr_to_string(mid->hg_class, addr, &size, self) != HG_SUCCESS)
            addr[0] = '\0';
        HG_Addr_free(mid->hg_class, self);
    }
    /* Pools and xstreams may be added or removed meanwhile. */
    live.address = addr;
    live.listening = mid->listening;
    live.input_eager_size = HG_Class_get_input_eager_size(mid->hg_class);
    live.output_eager_size = HG_Class_get_output_eager_size(mid->hg_class);
    pthread_mutex_lock(&margo_lock);
    json = margo_config_to_json(&mid->config, &live, options);
    pthread_mutex_unlock(&margo_lock);
    return json;
}

char *
margo_get_config(margo_instance_id mid)
{
    return margo_get_config_opt(mid, 0);
}

margo_instance_id
margo_init(const char *addr_str, int mode, int use_progress_thread,
           int rpc_thread_count)
{
    return margo_init_opt(addr_str, mode, NULL, use_progress_thread,
                          rpc_thread_count);
}

/* Finalize's wait: first let running handlers finish (cancelling only
 * operations that are not theirs), then, once they have or the grace
 * period has passed, cancel everything still in flight. */
struct margo_quiesce {
    struct margo_instance *mid;
    uint64_t grace_deadline_ns;
    bool cancel_all;
};

static bool
margo_quiescent(void *arg)
{
    struct margo_quiesce *q = arg;
    struct margo_instance *mid = q->mid;

    if (!q->cancel_all &&
        (mid->running_handlers == 0 ||
         HG_Clock_now(mid->hg_class) >= q->grace_deadline_ns)) {
        if (mid->running_handlers > 0)
            margo_log(mid, MARGO_LOG_WARNING,
                      "margo_finalize: %u handler(s) still running after "
                      "%d ms; cancelling their operations",
                      mid->running_handlers, MARGO_FINALIZE_GRACE_MS);
        q->cancel_all = true;
    }
    margo_cancel_inflight(mid, q->cancel_all);
    return q->cancel_all && mid->running_handlers == 0 &&
           mid->abt_pending == 0 && mid->inflight == NULL &&
           mid->active_calls == 0;
}

/*
 * Destroy the context and the class. Completions can still be on their way
 * (the send of the last response), so a busy context gets a few more rounds
 * of progress. Returns false if HG would not let go, in which case the
 * instance is leaked rather than freed under objects that still point to
 * it.
 */
static bool
margo_hg_release(struct margo_instance *mid)
{
    hg_return_t ret = HG_BUSY;

    if (mid->external_hg) {
        /* The class (and a given context) stay the caller's. */
        HG_Class_set_data(mid->hg_class, NULL, NULL);
        if (!mid->owns_context)
            return true;
    }
    for (int i = 0; i < 100 && ret == HG_BUSY; i++) {
        ret = HG_Context_destroy(mid->hg_context);
        if (ret == HG_BUSY)
            (void) margo_progress_instance(mid, 10);
    }
    if (ret != HG_SUCCESS) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_finalize: HG_Context_destroy: %s (handles, bulk "
                  "handles or operations still alive); leaking the instance",
                  HG_Error_to_string(ret));
        return false;
    }
    if (mid->external_hg)
        return true;
    ret = HG_Finalize(mid->hg_class);
    if (ret != HG_SUCCESS) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_finalize: HG_Finalize: %s; leaking the instance",
                  HG_Error_to_string(ret));
        return false;
    }
    return true;
}

static void
margo_teardown(struct margo_instance *mid)
{
    struct margo_handler_entry *dropped, *e;
    struct margo_quiesce q = {mid, 0, false};
    struct margo_instance *parent;
    bool released, free_it;

    pthread_mutex_lock(&margo_lock);
    if (mid->teardown_started || mid->prefinalizing) {
        pthread_mutex_unlock(&margo_lock);
        return;
    }
    mid->prefinalizing = true;
    mid->finalize_requested = true;
    pthread_mutex_unlock(&margo_lock);

    /* Pre-finalize callbacks run while the instance still works: they may
     * send RPCs (to tell peers, say). */
    margo_callbacks_run(mid, &mid->prefinalize_cbs);

    pthread_mutex_lock(&margo_lock);
    mid->teardown_started = true;
    dropped = mid->queue_head;
    mid->queue_head = mid->queue_tail = NULL;
    pthread_mutex_unlock(&margo_lock);

    /* Handlers that never started will not run: their origins are told
     * at once (HG_CANCELED) rather than left to wait for a timeout. The
     * quiescence wait below lets those answers leave. */
    while ((e = dropped) != NULL) {
        dropped = e->next;
        if (e->work) {
            if (e->drop)
                e->drop(e->arg);
            continue;
        }
        margo_log(mid, MARGO_LOG_DEBUG,
                  "margo_finalize: cancelling a queued handler");
        HG_Respond_error(e->handle, NULL, NULL, HG_CANCELED);
        HG_Destroy(e->handle);
        free(e);
    }

    q.grace_deadline_ns = HG_Clock_now(mid->hg_class) +
                          (uint64_t) MARGO_FINALIZE_GRACE_MS * 1000000u;
    pthread_mutex_lock(&margo_lock);
    margo_block_until(mid, margo_quiescent, &q, false);
    margo_driven_remove(mid);
    margo_all_remove(mid);
    pthread_mutex_unlock(&margo_lock);

    margo_threads_stop(mid);
    /* Finalize callbacks run once no handler runs any more, while the HG
     * class is still there (a provider deregisters its RPCs, frees its
     * addresses, ...); they must not send RPCs. */
    margo_callbacks_run(mid, &mid->finalize_cbs);
    margo_pools_destroy(mid);
    margo_timers_release(mid);
    margo_addrs_release(mid);
    released = margo_hg_release(mid);

    parent = mid->parent;
    pthread_mutex_lock(&margo_lock);
    mid->finalized = true;
    mid->hg_class = NULL;
    mid->hg_context = NULL;
    free_it = released && --mid->refcount == 0;
    pthread_cond_broadcast(&margo_finalized_cond);
    pthread_mutex_unlock(&margo_lock);
    if (free_it)
        margo_instance_free(mid);
    /* Its pools and xstreams were the parent's: released last. */
    if (parent != NULL)
        margo_instance_release(parent);
}

static bool
margo_finalize_requested(void *arg)
{
    return ((struct margo_instance *) arg)->finalize_requested;
}

void
margo_finalize(margo_instance_id mid)
{
    bool defer;

    if (mid == MARGO_INSTANCE_NULL)
        return;
    pthread_mutex_lock(&margo_lock);
    if (mid->teardown_started) {
        pthread_mutex_unlock(&margo_lock);
        return;
    }
    mid->finalize_requested = true;
    margo_wake(mid);
    defer = margo_thread_must_defer(mid) || mid->finalize_waiters > 0;
    if (defer)
        /* Logged under the lock: once it is released, the thread in
         * margo_wait_for_finalize() may free the instance. */
        margo_log(mid, MARGO_LOG_DEBUG,
                  "margo_finalize: requested; completes in "
                  "margo_wait_for_finalize()");
    pthread_mutex_unlock(&margo_lock);
    if (defer)
        return;
    margo_teardown(mid);
}

void
margo_wait_for_finalize(margo_instance_id mid)
{
    if (mid == MARGO_INSTANCE_NULL)
        return;
    if (margo_thread_must_defer(mid)) {
        /* The teardown would have to join or free the very thread or
         * handler it runs in. */
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_wait_for_finalize: called from a handler or a "
                  "Margo thread; ignored");
        return;
    }
    /* Each waiter holds a reference: with two waiters, or a waiter and a
     * finalize_and_wait, the thread that tears down may otherwise free
     * the instance while another is still reading it. */
    pthread_mutex_lock(&margo_lock);
    mid->refcount++;
    mid->finalize_waiters++;
    margo_block_until(mid, margo_finalize_requested, mid, true);
    mid->finalize_waiters--;
    pthread_mutex_unlock(&margo_lock);
    margo_teardown(mid);
    /* Another thread may be the one tearing down: return after it. */
    pthread_mutex_lock(&margo_lock);
    while (!mid->finalized)
        margo_cond_wait(&margo_finalized_cond, NULL);
    pthread_mutex_unlock(&margo_lock);
    margo_instance_release(mid);
}

void
margo_finalize_and_wait(margo_instance_id mid)
{
    if (mid == MARGO_INSTANCE_NULL)
        return;
    if (margo_thread_must_defer(mid)) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_finalize_and_wait: called from a handler or a Margo "
                  "thread; only requesting finalize");
        margo_finalize(mid);
        return;
    }
    /* Hold the memory so that the flag can be read after the teardown,
     * which may happen in another thread (one in margo_wait_for_finalize). */
    margo_instance_ref_incr(mid);
    margo_finalize(mid);
    pthread_mutex_lock(&margo_lock);
    while (!mid->finalized)
        margo_cond_wait(&margo_finalized_cond, NULL);
    pthread_mutex_unlock(&margo_lock);
    margo_instance_release(mid);
}

hg_bool_t
margo_is_listening(margo_instance_id mid)
{
    return mid ? mid->listening : HG_FALSE;
}

hg_class_t *
margo_get_class(margo_instance_id mid)
{
    return mid ? mid->hg_class : NULL;
}

hg_context_t *
margo_get_context(margo_instance_id mid)
{
    return mid ? mid->hg_context : NULL;
}
