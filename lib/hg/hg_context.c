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

    qs_mutex_lock(&hg_class->lock);
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
    atomic_init(&context->timer_hint, UINT64_MAX);
    atomic_init(&context->n_queued, 0);
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

    qs_mutex_lock(&hg_class->lock);
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
    qs_mutex_lock(&hg_class->lock);
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

        qs_mutex_lock(&context->lock);
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
    qs_mutex_lock(&context->lock);
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
        qs_mutex_lock(&context->lock);
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
    qs_mutex_lock(&hg_class->lock);
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

    qs_mutex_lock(&context->lock);
    LIST_FOREACH(handle, &context->posted, entry)
    NA_Cancel(hg_class->na_class, context->na_context, handle->recv_op);
    pthread_mutex_unlock(&context->lock);
    for (int spins = 0; spins < 100000 && !empty; spins++) {
        NA_Poll(hg_class->na_class, context->na_context, NULL);
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        qs_mutex_lock(&context->lock);
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
    qs_mutex_lock(&context->queue_lock);
    STAILQ_INSERT_TAIL(&context->queue, comp, entry);
    atomic_fetch_add_explicit(&context->n_queued, 1, memory_order_release);
    pthread_cond_signal(&context->queue_cond);
    pthread_mutex_unlock(&context->queue_lock);
}

hg_bool_t
HG_Context_has_completions(hg_context_t *context)
{
    if (context == NULL)
        return HG_FALSE;
    return atomic_load_explicit(&context->n_queued, memory_order_acquire) > 0;
}

/* Deadlines. */

void
hg_timer_arm(hg_context_t *context, struct hg_timer *timer,
             unsigned int timeout_ms, void (*expire)(struct hg_timer *))
{
    uint64_t deadline =
        HG_Clock_now(context->hg_class) + (uint64_t) timeout_ms * 1000000ull;

    qs_mutex_lock(&context->lock);
    timer->deadline_ns = deadline;
    timer->expire = expire;
    atomic_store(&timer->armed, true);
    if (!timer->linked) {
        TAILQ_INSERT_TAIL(&context->timers, timer, entry);
        timer->linked = true;
    }
    if (deadline < atomic_load(&context->timer_hint))
        atomic_store(&context->timer_hint, deadline);
    pthread_mutex_unlock(&context->lock);
}

/* No lock: the next sweep unlinks it (hg_context_sweep_timers). */
void
hg_timer_disarm(struct hg_timer *timer)
{
    atomic_store(&timer->armed, false);
}

/* Before the memory of a timer is freed or reused for something else. */
void
hg_timer_unlink(hg_context_t *context, struct hg_timer *timer)
{
    atomic_store(&timer->armed, false);
    qs_mutex_lock(&context->lock);
    if (timer->linked) {
        TAILQ_REMOVE(&context->timers, timer, entry);
        timer->linked = false;
    }
    pthread_mutex_unlock(&context->lock);
}

/*
 * Walk the timers under the lock: unlink the disarmed ones, take the first
 * that is due at `now` (disarming it), and refresh the hint. Returns the
 * due timer or NULL; *next gets the nearest deadline still armed.
 */
static struct hg_timer *
hg_context_sweep_timers(hg_context_t *context, uint64_t now, uint64_t *next)
{
    struct hg_timer *timer, *tmp, *expired = NULL;
    uint64_t nearest = UINT64_MAX;

    qs_mutex_lock(&context->lock);
    for (timer = TAILQ_FIRST(&context->timers); timer != NULL; timer = tmp) {
        tmp = TAILQ_NEXT(timer, entry);
        if (!atomic_load(&timer->armed)) {
            TAILQ_REMOVE(&context->timers, timer, entry);
            timer->linked = false;
        } else if (expired == NULL && timer->deadline_ns <= now &&
                   atomic_exchange(&timer->armed, false)) {
            TAILQ_REMOVE(&context->timers, timer, entry);
            timer->linked = false;
            expired = timer;
        } else if (timer->deadline_ns < nearest) {
            nearest = timer->deadline_ns;
        }
    }
    /* With a timer fired, the hint stays low so the next pass looks
     * again: several may be due at once. */
    atomic_store(&context->timer_hint, expired != NULL ? now : nearest);
    pthread_mutex_unlock(&context->lock);
    *next = nearest;
    return expired;
}

/*
 * Fire the timers due at `now`; returns whether one fired. A pass with
 * nothing due reads only the hint and takes no lock. A timer is disarmed
 * before its expire function runs.
 */
static bool
hg_context_check_timers(hg_context_t *context, uint64_t now)
{
    uint64_t next = atomic_load(&context->timer_hint);
    bool fired = false;

    while (next <= now) {
        struct hg_timer *expired = hg_context_sweep_timers(context, now, &next);

        if (expired == NULL)
            break;
        expired->expire(expired);
        fired = true;
        next = atomic_load(&context->timer_hint);
    }
    return fired;
}

/* The exact nearest deadline of an armed timer if it may come before
 * `limit` (*exact set); otherwise the hint, which is at least `limit`. */
static uint64_t
hg_context_next_timer(hg_context_t *context, uint64_t limit, bool *exact)
{
    uint64_t next = atomic_load(&context->timer_hint);

    *exact = next < limit;
    if (*exact)
        hg_context_sweep_timers(context, 0, &next);
    return next;
}

/* Progress and trigger. */

/*
 * Each pass reads the NA clock once and hands that time to the timer
 * check: NA callbacks, timers, then either return (completions are
 * queued or the time is up) or wait in NA until the nearer of the
 * caller's deadline and the next timer.
 */
hg_return_t
HG_Progress(hg_context_t *context, unsigned int timeout_ms)
{
    hg_class_t *hg_class;
    uint64_t now, deadline;

    if (context == NULL)
        return HG_INVALID_ARG;
    hg_class = context->hg_class;
    now = HG_Clock_now(hg_class);
    deadline = now + (uint64_t) timeout_ms * 1000000ull;
    for (;;) {
        uint64_t next_timer, wait_ns;
        unsigned int wait_ms;
        bool exact, fired;
        na_return_t na_ret;

        /* NA callbacks turn network completions into HG completions. */
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        hg_context_check_timers(context, now);
        if (HG_Context_has_completions(context))
            return HG_SUCCESS;
        if (now >= deadline) {
            /* A zero timeout still polls once without blocking. */
            NA_Poll(hg_class->na_class, context->na_context, NULL);
            NA_Trigger(context->na_context, UINT32_MAX, NULL);
            hg_context_check_timers(context, HG_Clock_now(hg_class));
            return HG_Context_has_completions(context) ? HG_SUCCESS
                                                       : HG_TIMEOUT;
        }
        wait_ns = deadline - now;
        next_timer = hg_context_next_timer(context, deadline, &exact);
        if (next_timer != UINT64_MAX && next_timer - now < wait_ns)
            wait_ns = next_timer > now ? next_timer - now : 0;
        /* Round up so a deadline is reached, not approached forever. */
        wait_ms = (unsigned int) ((wait_ns + 999999ull) / 1000000ull);
        na_ret = NA_Poll_wait(hg_class->na_class, context->na_context, wait_ms,
                              NULL);
        if (na_ret != NA_SUCCESS && na_ret != NA_TIMEOUT)
            return hg_from_na(na_ret);
        now = HG_Clock_now(hg_class);
        NA_Trigger(context->na_context, UINT32_MAX, NULL);
        fired = hg_context_check_timers(context, now);
        if (HG_Context_has_completions(context))
            return HG_SUCCESS;
        /* NA_TIMEOUT can be early: work may be due elsewhere (another
         * context of the simulated fabric, or a spurious wake-up). The
         * caller loops; returning lets a single thread drive several
         * contexts. Without an exact next deadline (none was near), a
         * timer that just fired says one was due. */
        if (na_ret == NA_TIMEOUT &&
            !(exact ? next_timer != UINT64_MAX && now >= next_timer : fired))
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
        bool wait = done == 0 && timeout_ms > 0;

        /* An empty queue is seen without the lock unless we wait. */
        if (!wait && !HG_Context_has_completions(context))
            break;
        qs_mutex_lock(&context->queue_lock);
        if (STAILQ_EMPTY(&context->queue) && wait) {
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
        if (comp != NULL) {
            STAILQ_REMOVE_HEAD(&context->queue, entry);
            atomic_fetch_sub_explicit(&context->n_queued, 1,
                                      memory_order_relaxed);
        }
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
