/*
 * HG contexts: creation and destruction, user data, and the public
 * progress and trigger calls over the context's ground floor
 * (lib/core/hg_core.c).
 */
#include "hg/hg_internal.h"
#include "util/qs_alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>

hg_context_t *
HG_Context_create(hg_class_t *hg_class)
{
    return HG_Context_create_id(hg_class, 0);
}

hg_context_t *
hg_class_find_context(hg_class_t *hg_class, uint8_t id)
{
    hg_context_t *context;

    qs_mutex_lock(&hg_class->lock);
    context = hg_class->contexts[id];
    pthread_mutex_unlock(&hg_class->lock);
    return context;
}

/* A context with its lists, lock and bulk pool, not yet known to its
 * class or to NA. */
static hg_context_t *
hg_context_alloc(hg_class_t *hg_class, hg_uint8_t id)
{
    hg_context_t *context;

    context = qs_calloc_lines(sizeof(*context));
    if (context == NULL)
        return NULL;
    context->hg_class = hg_class;
    hg_core_init(&context->core, hg_class, &hg_class->core, id);
    LIST_INIT(&context->pool);
    LIST_INIT(&context->posted);
    LIST_INIT(&context->deferred_puts);
    context->watch.off = true; /* until hg_watchdog_attach() */
    pthread_mutex_init(&context->lock, NULL);
    if (hg_bulk_pool_init(&context->core) != HG_SUCCESS) {
        hg_core_fini(&context->core);
        pthread_mutex_destroy(&context->lock);
        qs_free_lines(context, sizeof(*context));
        return NULL;
    }
    return context;
}

hg_context_t *
HG_Context_create_id(hg_class_t *hg_class, hg_uint8_t id)
{
    hg_context_t *context;

    qs_bias_gate();
    if (hg_class == NULL)
        return NULL;
    context = hg_context_alloc(hg_class, id);
    if (context == NULL)
        return NULL;

    qs_mutex_lock(&hg_class->lock);
    if (hg_class->contexts[id] != NULL) {
        pthread_mutex_unlock(&hg_class->lock);
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_create_id: context id %u already exists", id);
        goto error;
    }
    hg_class->contexts[id] = context;
    pthread_mutex_unlock(&hg_class->lock);

    context->core.na_context =
        NA_Context_create_id(hg_class->core.na_class, id);
    if (context->core.na_context == NULL)
        goto error_unlist;
    atomic_fetch_add(&hg_class->n_contexts, 1);
    HG_CHECK(hg_check_obj_add(hg_class, context, HG_CHECK_CONTEXT));
    /* Only listening classes receive requests; others only responses
     * (and loopback requests, which need no posted receive). */
    if (NA_Is_listening(hg_class->core.na_class))
        context->n_posted_target = hg_class->info.request_post_init;
    if (hg_context_post_recvs(context) != HG_SUCCESS) {
        HG_Context_destroy(context);
        return NULL;
    }
    hg_watchdog_attach(context);
    return context;

error_unlist:
    qs_mutex_lock(&hg_class->lock);
    hg_class->contexts[id] = NULL;
    pthread_mutex_unlock(&hg_class->lock);
error:
    hg_bulk_pool_fini(&context->core);
    hg_core_fini(&context->core);
    pthread_mutex_destroy(&context->lock);
    qs_free_lines(context, sizeof(*context));
    return NULL;
}

/* Cancel the posted request receives and wait for their completions
 * (they complete silently and return their handles to the pool). */
static bool
hg_context_cancel_posted(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;
    struct hg_handle *handle;
    bool empty = false;

    qs_mutex_lock(&context->lock);
    LIST_FOREACH(handle, &context->posted, entry)
    NA_Cancel(hg_class->core.na_class, context->core.na_context,
              handle->recv_op);
    pthread_mutex_unlock(&context->lock);
    for (int spins = 0; spins < 100000 && !empty; spins++) {
        NA_Poll(hg_class->core.na_class, context->core.na_context, NULL);
        NA_Trigger(context->core.na_context, UINT32_MAX, NULL);
        qs_mutex_lock(&context->lock);
        empty = LIST_EMPTY(&context->posted);
        pthread_mutex_unlock(&context->lock);
    }
    return empty;
}

/* How long HG_Context_destroy() progresses what is still in flight, on the
 * NA clock (virtual on sim): Mercury's cleanup timeout. A peer that never
 * answers costs this much, and the context stays. */
#define HG_CONTEXT_CLEANUP_MS 5000u

/* Rounds in a row in which neither the NA clock moved nor a callback ran
 * before the drain gives up: a simulated world whose clock waits for a
 * context this thread would have to drive (a server in the same thread)
 * never reaches the deadline. Real clocks always move. */
#define HG_CONTEXT_STALL_ROUNDS 100000u

/* Progress and trigger, as Mercury's context destroy does, until every
 * handle is back in the pool and nothing is queued: forwards and responds
 * whose handles the program already destroyed run to their end, queued
 * callbacks run. Stops early when what is left can only be handles the
 * program still holds (nothing in flight, nothing queued), and at the
 * deadline. True when nothing is left; otherwise *held and *ops say what
 * was.
 *
 * Each round progresses at most 1 ms: on a simulated world driven by
 * several threads the clock moves only after a real wait of about that
 * long saw nothing new, so the 5 s deadline also lasts about 5 s of real
 * time there, however late the thread of a peer in the same process
 * runs. */
static bool
hg_context_drain(hg_context_t *context, unsigned int *held, unsigned int *ops)
{
    uint64_t last = hg_core_now(&context->core);
    uint64_t deadline = last + HG_CONTEXT_CLEANUP_MS * 1000000ull;
    unsigned int stalled = 0;

    for (;;) {
        unsigned int ran = 0;
        uint64_t now;
        bool queued;

        hg_watchdog_run_deferred(context);
        HG_Trigger(context, 0, UINT_MAX, &ran);
        queued = HG_Context_has_completions(context);
        *ops = atomic_load(&context->n_ops) + hg_bulk_pool_live(&context->core);
        qs_mutex_lock(&context->lock);
        *held = context->n_live_handles - context->n_posted;
        pthread_mutex_unlock(&context->lock);
        if (*held == 0 && *ops == 0 && !queued)
            return true;
        if (*ops == 0 && !queued)
            return false;
        now = hg_core_now(&context->core);
        if (now >= deadline)
            return false;
        stalled = (now != last || ran > 0) ? 0 : stalled + 1;
        if (stalled >= HG_CONTEXT_STALL_ROUNDS)
            return false;
        last = now;
        HG_Progress(context, 1);
    }
}

/* Stop receiving requests and let everything in flight end: true when
 * nothing is left, otherwise what is left has been logged. */
static bool
hg_context_quiesce(hg_context_t *context)
{
    unsigned int held, ops;

    /* No new requests, as in Mercury: the posted receives go first. */
    qs_mutex_lock(&context->lock);
    context->destroying = true;
    pthread_mutex_unlock(&context->lock);
    if (!hg_context_cancel_posted(context)) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: posted receives did not cancel");
        return false;
    }
    if (hg_context_drain(context, &held, &ops))
        return true;
    if (ops > 0)
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: %u operation(s) still in flight "
               "(%u ms on the NA clock, or no progress possible)",
               ops, HG_CONTEXT_CLEANUP_MS);
    else
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: %u handle(s) not destroyed", held);
    return false;
}

hg_return_t
HG_Context_destroy(hg_context_t *context)
{
    hg_class_t *hg_class;
    struct hg_handle *handle;

    qs_bias_gate();
    if (context == NULL)
        return HG_INVALID_ARG;
    hg_class = context->hg_class;
    /* The watchdog lets the context go first; what it left to the
     * program's progress is done now. */
    hg_watchdog_detach(context);
    hg_watchdog_run_deferred(context);
    if (!hg_context_quiesce(context))
        goto busy;
    /* Cancelled receives complete silently but may leave nothing queued. */
    while ((handle = LIST_FIRST(&context->pool)) != NULL) {
        LIST_REMOVE(handle, entry);
        hg_handle_free(handle);
    }
    hg_bulk_pool_fini(&context->core);
    if (NA_Context_destroy(hg_class->core.na_class, context->core.na_context) !=
        NA_SUCCESS) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: NA context is still busy");
        context->destroying = false;
        return HG_BUSY;
    }
    qs_mutex_lock(&hg_class->lock);
    hg_class->contexts[context->core.id] = NULL;
    pthread_mutex_unlock(&hg_class->lock);
    if (context->free_data != NULL)
        context->free_data(context->data);
    atomic_fetch_sub(&hg_class->n_contexts, 1);
    HG_CHECK(hg_check_obj_del(context));
    hg_event_fini(context);
    hg_core_fini(&context->core);
    pthread_mutex_destroy(&context->lock);
    qs_free_lines(context, sizeof(*context));
    return HG_SUCCESS;

busy:
    /* The context stays usable: its receives are posted again. */
    qs_mutex_lock(&context->lock);
    context->destroying = false;
    pthread_mutex_unlock(&context->lock);
    hg_context_post_recvs(context);
    hg_watchdog_attach(context);
    return HG_BUSY;
}

hg_return_t
HG_Context_unpost(hg_context_t *context)
{
    if (context == NULL)
        return HG_INVALID_ARG;
    qs_mutex_lock(&context->lock);
    context->n_posted_target = 0;
    pthread_mutex_unlock(&context->lock);
    if (!hg_context_cancel_posted(context)) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_unpost: posted receives did not cancel");
        return HG_BUSY;
    }
    return HG_SUCCESS;
}

hg_class_t *
HG_Context_get_class(const hg_context_t *context)
{
    return context ? context->hg_class : NULL;
}

hg_uint8_t
HG_Context_get_id(const hg_context_t *context)
{
    return context ? context->core.id : 0;
}

hg_return_t
HG_Context_set_data(hg_context_t *context, void *data,
                    void (*free_callback)(void *))
{
    if (context == NULL)
        return HG_INVALID_ARG;
    context->data = data;
    context->free_data = free_callback;
    return HG_SUCCESS;
}

void *
HG_Context_get_data(const hg_context_t *context)
{
    return context ? context->data : NULL;
}

hg_bool_t
HG_Context_has_completions(hg_context_t *context)
{
    return context != NULL && hg_core_has_completions(&context->core);
}

hg_return_t
HG_Progress(hg_context_t *context, unsigned int timeout_ms)
{
    struct hg_watch *w;
    hg_return_t ret;

    if (context == NULL)
        return HG_INVALID_ARG;
    /* The watchdog leaves alone a context someone progresses. */
    w = &context->watch;
    qs_atomic_fetch_add(&w->progress_in, 1, memory_order_relaxed);
    if (atomic_load_explicit(&w->deferred, memory_order_relaxed))
        hg_watchdog_run_deferred(context);
    ret = hg_core_progress(&context->core, timeout_ms);
    qs_atomic_fetch_add(&w->progress_out, 1, memory_order_release);
    return ret;
}

hg_return_t
HG_Trigger(hg_context_t *context, unsigned int timeout_ms,
           unsigned int max_count, unsigned int *actual_count)
{
    if (context == NULL)
        return HG_INVALID_ARG;
    return hg_core_trigger(&context->core, timeout_ms, max_count, actual_count);
}
