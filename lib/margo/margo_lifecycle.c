/*
 * What happens around an instance's life: finalize and pre-finalize
 * callbacks, remote shutdown, reference counting, and the state dump.
 */
#include "margo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Callback stacks ------------------------------------------------- */

static void
margo_cb_push(struct margo_instance *mid, struct margo_callback **stack,
              const void *owner, margo_finalize_callback_t cb, void *uargs)
{
    struct margo_callback *c;

    if (mid == NULL || cb == NULL)
        return;
    c = malloc(sizeof(*c));
    if (c == NULL) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo: out of memory pushing a finalize callback");
        return;
    }
    c->owner = owner;
    c->cb = cb;
    c->uargs = uargs;
    pthread_mutex_lock(&margo_lock);
    c->next = *stack;
    *stack = c;
    pthread_mutex_unlock(&margo_lock);
}

/* The topmost callback of owner (any owner when any_owner), or NULL. */
static struct margo_callback **
margo_cb_find(struct margo_callback **stack, const void *owner, bool any_owner)
{
    while (*stack && !any_owner && (*stack)->owner != owner)
        stack = &(*stack)->next;
    return *stack ? stack : NULL;
}

static int
margo_cb_pop(struct margo_instance *mid, struct margo_callback **stack,
             const void *owner, bool any_owner)
{
    struct margo_callback **slot, *c = NULL;

    if (mid == NULL)
        return 0;
    pthread_mutex_lock(&margo_lock);
    slot = margo_cb_find(stack, owner, any_owner);
    if (slot) {
        c = *slot;
        *slot = c->next;
    }
    pthread_mutex_unlock(&margo_lock);
    free(c);
    return c != NULL;
}

static int
margo_cb_top(struct margo_instance *mid, struct margo_callback **stack,
             const void *owner, bool any_owner, margo_finalize_callback_t *cb,
             void **uargs)
{
    struct margo_callback **slot;

    if (mid == NULL)
        return 0;
    pthread_mutex_lock(&margo_lock);
    slot = margo_cb_find(stack, owner, any_owner);
    if (slot) {
        if (cb)
            *cb = (*slot)->cb;
        if (uargs)
            *uargs = (*slot)->uargs;
    }
    pthread_mutex_unlock(&margo_lock);
    return slot != NULL;
}

void
margo_callbacks_run(struct margo_instance *mid, struct margo_callback **stack)
{
    struct margo_callback *c;

    margo_log(mid, MARGO_LOG_DEBUG, "margo: running %s callbacks",
              stack == &mid->finalize_cbs ? "finalize" : "pre-finalize");
    /* Last pushed, first run; each is popped before it runs, so a
     * callback may push or pop others. */
    for (;;) {
        pthread_mutex_lock(&margo_lock);
        c = *stack;
        if (c)
            *stack = c->next;
        pthread_mutex_unlock(&margo_lock);
        if (c == NULL)
            return;
        c->cb(c->uargs);
        free(c);
    }
}

void
margo_callback_stack_free(struct margo_callback **stack)
{
    struct margo_callback *c;

    while ((c = *stack) != NULL) {
        *stack = c->next;
        free(c);
    }
}

void
margo_push_finalize_callback(margo_instance_id mid,
                             margo_finalize_callback_t cb, void *uargs)
{
    margo_cb_push(mid, mid ? &mid->finalize_cbs : NULL, NULL, cb, uargs);
}

int
margo_pop_finalize_callback(margo_instance_id mid)
{
    return margo_cb_pop(mid, mid ? &mid->finalize_cbs : NULL, NULL, true);
}

int
margo_top_finalize_callback(margo_instance_id mid,
                            margo_finalize_callback_t *cb, void **uargs)
{
    return margo_cb_top(mid, mid ? &mid->finalize_cbs : NULL, NULL, true, cb,
                        uargs);
}

void
margo_provider_push_finalize_callback(margo_instance_id mid, const void *owner,
                                      margo_finalize_callback_t cb, void *uargs)
{
    margo_cb_push(mid, mid ? &mid->finalize_cbs : NULL, owner, cb, uargs);
}

int
margo_provider_pop_finalize_callback(margo_instance_id mid, const void *owner)
{
    return margo_cb_pop(mid, mid ? &mid->finalize_cbs : NULL, owner, false);
}

int
margo_provider_top_finalize_callback(margo_instance_id mid, const void *owner,
                                     margo_finalize_callback_t *cb,
                                     void **uargs)
{
    return margo_cb_top(mid, mid ? &mid->finalize_cbs : NULL, owner, false, cb,
                        uargs);
}

void
margo_push_prefinalize_callback(margo_instance_id mid,
                                margo_finalize_callback_t cb, void *uargs)
{
    margo_cb_push(mid, mid ? &mid->prefinalize_cbs : NULL, NULL, cb, uargs);
}

int
margo_pop_prefinalize_callback(margo_instance_id mid)
{
    return margo_cb_pop(mid, mid ? &mid->prefinalize_cbs : NULL, NULL, true);
}

int
margo_top_prefinalize_callback(margo_instance_id mid,
                               margo_finalize_callback_t *cb, void **uargs)
{
    return margo_cb_top(mid, mid ? &mid->prefinalize_cbs : NULL, NULL, true, cb,
                        uargs);
}

void
margo_provider_push_prefinalize_callback(margo_instance_id mid,
                                         const void *owner,
                                         margo_finalize_callback_t cb,
                                         void *uargs)
{
    margo_cb_push(mid, mid ? &mid->prefinalize_cbs : NULL, owner, cb, uargs);
}

int
margo_provider_pop_prefinalize_callback(margo_instance_id mid,
                                        const void *owner)
{
    return margo_cb_pop(mid, mid ? &mid->prefinalize_cbs : NULL, owner, false);
}

int
margo_provider_top_prefinalize_callback(margo_instance_id mid,
                                        const void *owner,
                                        margo_finalize_callback_t *cb,
                                        void **uargs)
{
    return margo_cb_top(mid, mid ? &mid->prefinalize_cbs : NULL, owner, false,
                        cb, uargs);
}

/* ---- Remote shutdown ------------------------------------------------- */

MERCURY_GEN_PROC(margo_shutdown_out_t, ((int32_t) (ret)))

static void
margo_shutdown_handler(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    margo_shutdown_out_t out = {-1};
    bool enabled;

    pthread_mutex_lock(&margo_lock);
    enabled = mid->remote_shutdown;
    /* Refuse every RPC that arrives from here on, before the origin can
     * learn that the request was accepted: its next call to this instance
     * fails (HG_CANCELED) instead of racing the finalize below. */
    if (enabled)
        mid->finalize_requested = true;
    pthread_mutex_unlock(&margo_lock);
    if (enabled)
        out.ret = 0;
    else
        margo_log(mid, MARGO_LOG_WARNING,
                  "margo: remote shutdown request refused (not enabled)");
    margo_respond(h, &out);
    margo_destroy(h);
    if (enabled)
        margo_finalize(mid);
}
DEFINE_MARGO_RPC_HANDLER(margo_shutdown_handler)

hg_id_t
margo_shutdown_register(struct margo_instance *mid)
{
    return MARGO_REGISTER(mid, "__shutdown__", void, margo_shutdown_out_t,
                          margo_shutdown_handler);
}

void
margo_enable_remote_shutdown(margo_instance_id mid)
{
    if (mid == MARGO_INSTANCE_NULL)
        return;
    pthread_mutex_lock(&margo_lock);
    mid->remote_shutdown = true;
    pthread_mutex_unlock(&margo_lock);
}

int
margo_shutdown_remote_instance(margo_instance_id mid, hg_addr_t remote_addr)
{
    margo_shutdown_out_t out;
    hg_handle_t h;
    hg_return_t ret;
    int result = -1;

    if (mid == MARGO_INSTANCE_NULL)
        return -1;
    ret = margo_create(mid, remote_addr, mid->shutdown_id, &h);
    if (ret != HG_SUCCESS)
        return -1;
    ret = margo_forward(h, NULL);
    if (ret == HG_SUCCESS && margo_get_output(h, &out) == HG_SUCCESS) {
        result = out.ret == 0 ? 0 : -1;
        margo_free_output(h, &out);
    }
    if (ret != HG_SUCCESS)
        margo_log(mid, MARGO_LOG_ERROR, "margo_shutdown_remote_instance: %s",
                  HG_Error_to_string(ret));
    margo_destroy(h);
    return result;
}

/* ---- Reference counting ---------------------------------------------- */

hg_return_t
margo_instance_ref_incr(margo_instance_id mid)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    mid->refcount++;
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

hg_return_t
margo_instance_release(margo_instance_id mid)
{
    bool finalize = false, free_it = false;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    if (mid->refcount == 0) {
        pthread_mutex_unlock(&margo_lock);
        return HG_INVALID_ARG;
    }
    if (mid->refcount == 1 && !mid->finalized) {
        /* The last reference finalizes; the teardown drops it. */
        finalize = true;
    } else {
        mid->refcount--;
        free_it = mid->refcount == 0;
    }
    pthread_mutex_unlock(&margo_lock);
    if (finalize)
        margo_finalize(mid);
    else if (free_it)
        margo_instance_free(mid);
    return HG_SUCCESS;
}

hg_return_t
margo_instance_is_finalized(margo_instance_id mid, bool *flag)
{
    if (mid == MARGO_INSTANCE_NULL || flag == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    *flag = mid->finalized;
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

hg_return_t
margo_instance_ref_count(margo_instance_id mid, unsigned *refcount)
{
    if (mid == MARGO_INSTANCE_NULL || refcount == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    *refcount = mid->refcount;
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

/* ---- State dump ------------------------------------------------------ */

static void
margo_dump_to(struct margo_instance *mid, FILE *f)
{
    struct margo_rpc_entry *e;
    struct margo_handler_entry *q;
    struct margo_request_s *r;
    unsigned queued = 0, inflight = 0;
    char addr[256] = "?";
    hg_size_t addr_size = sizeof(addr);
    hg_addr_t self;

    if (HG_Addr_self(mid->hg_class, &self) == HG_SUCCESS) {
        if (HG_Addr_to_string(mid->hg_class, addr, &addr_size, self) !=
            HG_SUCCESS)
            snprintf(addr, sizeof(addr), "?");
        HG_Addr_free(mid->hg_class, self);
    }
    pthread_mutex_lock(&margo_lock);
    for (q = mid->queue_head; q; q = q->next)
        queued++;
    for (r = mid->inflight; r; r = r->next)
        inflight++;
    fprintf(f, "# Margo state dump\n");
    fprintf(f, "address: %s\n", addr);
    fprintf(f, "mode: %s\n", mid->listening ? "server" : "client");
    fprintf(f, "progress thread: %s\n",
            mid->has_progress_thread ? "yes" : "no");
    fprintf(f, "rpc_thread_count: %d\n", mid->rpc_thread_count);
    fprintf(f, "finalize requested: %s\n",
            mid->finalize_requested ? "yes" : "no");
    fprintf(f, "handlers queued: %u\n", queued);
    fprintf(f, "handlers running: %u\n", mid->running_handlers);
    fprintf(f, "threads in blocking calls: %u\n", mid->active_calls);
    fprintf(f, "operations in flight: %u\n", inflight);
    fprintf(f, "refcount: %u\n", mid->refcount);
    fprintf(f, "# registered RPCs (id, provider, name)\n");
    for (e = mid->rpcs; e; e = e->next) {
        uint16_t pid = margo_rpc_id_get_provider_id(e->id);

        if (pid == MARGO_DEFAULT_PROVIDER_ID)
            fprintf(f, "rpc: %llu default %s\n", (unsigned long long) e->id,
                    e->name);
        else
            fprintf(f, "rpc: %llu %u %s\n", (unsigned long long) e->id,
                    (unsigned) pid, e->name);
    }
    pthread_mutex_unlock(&margo_lock);
    margo_pools_dump(mid, f);
}

int
margo_state_dump(margo_instance_id mid, const char *file, int uniquify,
                 char **resolved_file_name)
{
    char *path = NULL;
    FILE *f;
    bool to_stdout;

    if (mid == MARGO_INSTANCE_NULL || file == NULL)
        return -1;
    to_stdout = strcmp(file, "-") == 0;
    if (to_stdout) {
        path = strdup(file);
    } else if (uniquify) {
        char host[128] = "host";
        size_t len;

        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        len = strlen(file) + strlen(host) + 32;
        path = malloc(len);
        if (path)
            snprintf(path, len, "%s.%s.%ld", file, host, (long) getpid());
    } else {
        path = strdup(file);
    }
    if (path == NULL)
        return -1;
    f = to_stdout ? stdout : fopen(path, "w");
    if (f == NULL) {
        margo_log(mid, MARGO_LOG_ERROR, "margo_state_dump: cannot open %s",
                  path);
        free(path);
        return -1;
    }
    margo_dump_to(mid, f);
    if (to_stdout)
        fflush(f);
    else
        fclose(f);
    if (resolved_file_name)
        *resolved_file_name = path;
    else
        free(path);
    return 0;
}
