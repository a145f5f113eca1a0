/*
 * HG contexts: the completion queue, posted request receives, deadlines,
 * and the progress and trigger loops.
 */
#include "hg/hg_internal.h"

#include <errno.h>
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

    pthread_mutex_lock(&hg_class->lock);
    context = hg_class->contexts[id];
    pthread_mutex_unlock(&hg_class->lock);
    return context;
}

hg_context_t *
HG_Context_create_id(hg_class_t *hg_class, hg_uint8_t id)
{
    hg_context_t *context;

    if (hg_class == NULL)
        return NULL;
    context = calloc(1, sizeof(*context));
    if (context == NULL)
        return NULL;
    context->hg_class = hg_class;
    context->id = id;
    LIST_INIT(&context->pool);
    LIST_INIT(&context->posted);
    TAILQ_INIT(&context->timers);
    STAILQ_INIT(&context->bulk_op_pool);
    STAILQ_INIT(&context->queue);
    pthread_mutex_init(&context->lock, NULL);
    pthread_mutex_init(&context->queue_lock, NULL);
    {
        /* HG_Trigger()'s wait must not stretch when the wall clock is
         * set: time it on the monotonic clock. */
        pthread_condattr_t attr;

        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&context->queue_cond, &attr);
        pthread_condattr_destroy(&attr);
    }

    pthread_mutex_lock(&hg_class->lock);
    if (hg_class->contexts[id] != NULL) {
        pthread_mutex_unlock(&hg_class->lock);
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_create_id: context id %u already exists", id);
        goto error;
    }
    hg_class->contexts[id] = context;
    pthread_mutex_unlock(&hg_class->lock);

    context->na_context = NA_Context_create_id(hg_class->na_class, id);
    if (context->na_context == NULL)
        goto error_unlist;
    atomic_fetch_add(&hg_class->n_contexts, 1);
    HG_CHECK(hg_check_obj_add(hg_class, context, HG_CHECK_CONTEXT));
    /* Only listening classes receive requests; others only responses
     * (and loopback requests, which need no posted receive). */
    if (NA_Is_listening(hg_class->na_class))
        context->n_posted_target = hg_class->info.request_post_init;
    if (hg_context_post_recvs(context) != HG_SUCCESS) {
        HG_Context_destroy(context);
        return NULL;
    }
    return context;

error_unlist:
    pthread_mutex_lock(&hg_class->lock);
    hg_class->contexts[id] = NULL;
    pthread_mutex_unlock(&hg_class->lock);
error:
    pthread_cond_destroy(&context->queue_cond);
    pthread_mutex_destroy(&context->queue_lock);
    pthread_mutex_destroy(&context->lock);
    free(context);
    return NULL;
}

/* Keep n_posted_target request receives posted. */
hg_return_t
hg_context_post_recvs(hg_context_t *context)
{
    for (;;) {
        struct hg_handle *handle;
        hg_return_t ret;

        pthread_mutex_lock(&context->lock);
        bool need = !context->destroying &&
                    context->n_posted < context->n_posted_target;
        pthread_mutex_unlock(&context->lock);
        if (!need)
            return HG_SUCCESS;
        if (hg_context_pool_grow(context) != HG_SUCCESS)
            return HG_NOMEM;
        handle = hg_handle_get(context);
        if (handle == NULL)
            return HG_NOMEM;
        ret = hg_handle_run_create_cb(handle);
        if (ret != HG_SUCCESS) {
            qs_log("hg", QS_LOG_ERROR,
                   "the handle create callback failed (%s): request "
                   "receive not posted",
                   HG_Error_to_string(ret));
            hg_handle_put(handle);
            return ret;
        }
        ret = hg_handle_post_recv(handle);
        if (ret != HG_SUCCESS) {
            hg_handle_put(handle);
            return ret;
        }
    }
}

hg_return_t
HG_Context_destroy(hg_context_t *context)
{
    hg_class_t *hg_class;
    struct hg_handle *handle;
    unsigned int live;
    hg_bool_t queued;

    if (context == NULL)
        return HG_INVALID_ARG;
    hg_class = context->hg_class;
    queued = HG_Context_has_completions(context);
    pthread_mutex_lock(&context->lock);
    live =
        context->n_live_handles + context->n_live_bulk_ops - context->n_posted;
    if (live > 0 || queued) {
        pthread_mutex_unlock(&context->lock);
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: %u handle(s)/transfer(s) alive%s", live,
               queued ? ", completions not triggered" : "");
        return HG_BUSY;
    }
    context->destroying = true;
    /* Cancel the posted request receives and let their completions drain
     * through NA before NA's context goes. */
    LIST_FOREACH(handle, &context->posted, entry)
    NA_Cancel(hg_class->na_class, context->na_context, handle->recv_op);
    pthread_mutex_unlock(&context->lock);
    for (int spins = 0; spins < 100000; spins++) {
        bool empty;

        NA_Poll(hg_class->na_class, context->na_context, NULL);
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        pthread_mutex_lock(&context->lock);
        empty = LIST_EMPTY(&context->posted);
        pthread_mutex_unlock(&context->lock);
        if (empty)
            break;
    }
    if (!LIST_EMPTY(&context->posted)) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: posted receives did not cancel");
        context->destroying = false;
        return HG_BUSY;
    }
    /* Cancelled receives complete silently but may leave nothing queued. */
    while ((handle = LIST_FIRST(&context->pool)) != NULL) {
        LIST_REMOVE(handle, entry);
        hg_handle_free(handle);
    }
    hg_context_free_bulk_ops(context);
    if (NA_Context_destroy(hg_class->na_class, context->na_context) !=
        NA_SUCCESS) {
        qs_log("hg", QS_LOG_ERROR,
               "HG_Context_destroy: NA context is still busy");
        context->destroying = false;
        return HG_BUSY;
    }
    pthread_mutex_lock(&hg_class->lock);
    hg_class->contexts[context->id] = NULL;
    pthread_mutex_unlock(&hg_class->lock);
    if (context->free_data != NULL)
        context->free_data(context->data);
    atomic_fetch_sub(&hg_class->n_contexts, 1);
    HG_CHECK(hg_check_obj_del(context));
    pthread_cond_destroy(&context->queue_cond);
    pthread_mutex_destroy(&context->queue_lock);
    pthread_mutex_destroy(&context->lock);
    free(context);
    return HG_SUCCESS;
}

/* Cancel the posted request receives and wait for their completions
 * (they complete silently and return their handles to the pool). */
static bool
hg_context_cancel_posted(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;
    struct hg_handle *handle;
    bool empty = false;

    pthread_mutex_lock(&context->lock);
    LIST_FOREACH(handle, &context->posted, entry)
    NA_Cancel(hg_class->na_class, context->na_context, handle->recv_op);
    pthread_mutex_unlock(&context->lock);
    for (int spins = 0; spins < 100000 && !empty; spins++) {
        NA_Poll(hg_class->na_class, context->na_context, NULL);
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        pthread_mutex_lock(&context->lock);
        empty = LIST_EMPTY(&context->posted);
        pthread_mutex_unlock(&context->lock);
    }
    return empty;
}

hg_return_t
HG_Context_unpost(hg_context_t *context)
{
    if (context == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&context->lock);
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
    return context ? context->id : 0;
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

/* Completion queue. */

void
hg_completion_add(hg_context_t *context, struct hg_completion *comp)
{
    pthread_mutex_lock(&context->queue_lock);
    STAILQ_INSERT_TAIL(&context->queue, comp, entry);
    pthread_cond_signal(&context->queue_cond);
    pthread_mutex_unlock(&context->queue_lock);
}

hg_bool_t
HG_Context_has_completions(hg_context_t *context)
{
    hg_bool_t ret;

    if (context == NULL)
        return HG_FALSE;
    pthread_mutex_lock(&context->queue_lock);
    ret = !STAILQ_EMPTY(&context->queue);
    pthread_mutex_unlock(&context->queue_lock);
    return ret;
}

/* Deadlines. */

void
hg_timer_arm(hg_context_t *context, struct hg_timer *timer,
             unsigned int timeout_ms, void (*expire)(struct hg_timer *))
{
    timer->deadline_ns =
        HG_Clock_now(context->hg_class) + (uint64_t) timeout_ms * 1000000ull;
    timer->expire = expire;
    pthread_mutex_lock(&context->lock);
    timer->armed = true;
    TAILQ_INSERT_TAIL(&context->timers, timer, entry);
    pthread_mutex_unlock(&context->lock);
}

void
hg_timer_disarm(hg_context_t *context, struct hg_timer *timer)
{
    pthread_mutex_lock(&context->lock);
    if (timer->armed) {
        TAILQ_REMOVE(&context->timers, timer, entry);
        timer->armed = false;
    }
    pthread_mutex_unlock(&context->lock);
}

/* Fire expired timers; returns the nearest remaining deadline (or
 * UINT64_MAX). A timer is disarmed before its expire function runs. */
static uint64_t
hg_context_check_timers(hg_context_t *context)
{
    uint64_t now = HG_Clock_now(context->hg_class), next = UINT64_MAX;

    for (;;) {
        struct hg_timer *timer, *expired = NULL;

        pthread_mutex_lock(&context->lock);
        next = UINT64_MAX;
        TAILQ_FOREACH(timer, &context->timers, entry)
        {
            if (timer->deadline_ns <= now) {
                expired = timer;
                break;
            }
            if (timer->deadline_ns < next)
                next = timer->deadline_ns;
        }
        if (expired != NULL) {
            TAILQ_REMOVE(&context->timers, expired, entry);
            expired->armed = false;
        }
        pthread_mutex_unlock(&context->lock);
        if (expired == NULL)
            return next;
        expired->expire(expired);
    }
}

/* Progress and trigger. */

hg_return_t
HG_Progress(hg_context_t *context, unsigned int timeout_ms)
{
    hg_class_t *hg_class;
    uint64_t start, deadline;

    if (context == NULL)
        return HG_INVALID_ARG;
    hg_class = context->hg_class;
    start = HG_Clock_now(hg_class);
    deadline = start + (uint64_t) timeout_ms * 1000000ull;
    for (;;) {
        uint64_t next_timer, now, wait_ns;
        unsigned int wait_ms;
        na_return_t na_ret;

        /* NA callbacks turn network completions into HG completions. */
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        next_timer = hg_context_check_timers(context);
        if (HG_Context_has_completions(context))
            return HG_SUCCESS;
        now = HG_Clock_now(hg_class);
        if (now >= deadline) {
            /* A zero timeout still polls once without blocking. */
            NA_Poll(hg_class->na_class, context->na_context, NULL);
            NA_Trigger(context->na_context, UINT32_MAX, NULL);
            hg_context_check_timers(context);
            return HG_Context_has_completions(context) ? HG_SUCCESS
                                                       : HG_TIMEOUT;
        }
        wait_ns = deadline - now;
        if (next_timer != UINT64_MAX && next_timer - now < wait_ns)
            wait_ns = next_timer > now ? next_timer - now : 0;
        /* Round up so a deadline is reached, not approached forever. */
        wait_ms = (unsigned int) ((wait_ns + 999999ull) / 1000000ull);
        na_ret = NA_Poll_wait(hg_class->na_class, context->na_context, wait_ms,
                              NULL);
        if (na_ret != NA_SUCCESS && na_ret != NA_TIMEOUT)
            return hg_from_na(na_ret);
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        hg_context_check_timers(context);
        if (HG_Context_has_completions(context))
            return HG_SUCCESS;
        /* NA_TIMEOUT can be early: work may be due elsewhere (another
         * context of the simulated fabric, or a spurious wake-up). The
         * caller loops; returning lets a single thread drive several
         * contexts. */
        if (na_ret == NA_TIMEOUT &&
            !(next_timer != UINT64_MAX && HG_Clock_now(hg_class) >= next_timer))
            return HG_TIMEOUT;
    }
}

static void
hg_completion_run(struct hg_completion *comp)
{
    HG_CHECK(hg_check_op_ran(comp));
    switch (comp->type) {
    case HG_COMP_FORWARD:
    case HG_COMP_RESPOND:
    case HG_COMP_RPC:
        hg_handle_trigger(comp);
        break;
    case HG_COMP_BULK:
        hg_bulk_trigger(comp);
        break;
    case HG_COMP_LOOKUP:
        hg_addr_lookup_trigger(comp);
        break;
    }
}

hg_return_t
HG_Trigger(hg_context_t *context, unsigned int timeout_ms,
           unsigned int max_count, unsigned int *actual_count)
{
    unsigned int done = 0;

    if (context == NULL)
        return HG_INVALID_ARG;
    while (done < max_count) {
        struct hg_completion *comp;

        pthread_mutex_lock(&context->queue_lock);
        if (STAILQ_EMPTY(&context->queue) && done == 0 && timeout_ms > 0) {
            struct timespec ts;

            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += timeout_ms / 1000;
            ts.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            while (STAILQ_EMPTY(&context->queue)) {
                if (pthread_cond_timedwait(&context->queue_cond,
                                           &context->queue_lock,
                                           &ts) == ETIMEDOUT)
                    break;
            }
        }
        comp = STAILQ_FIRST(&context->queue);
        if (comp != NULL)
            STAILQ_REMOVE_HEAD(&context->queue, entry);
        pthread_mutex_unlock(&context->queue_lock);
        if (comp == NULL)
            break;
        hg_completion_run(comp);
        done++;
    }
    if (actual_count != NULL)
        *actual_count = done;
    return done > 0 ? HG_SUCCESS : HG_TIMEOUT;
}
