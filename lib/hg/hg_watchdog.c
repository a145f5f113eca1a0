/*
 * The probe-answering watchdog (hg_watchdog.h): one thread per listening
 * class that drives the NA progress of contexts nobody progresses, so
 * that probes are answered while the program computes in a handler.
 */
#include "hg/hg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local bool hg_watchdog_self;

bool
hg_watchdog_on_thread(void)
{
    return hg_watchdog_self;
}

/* Drive one context's NA progress once, without blocking. Only NA
 * callbacks run (HG's own: request receives, probe answers, responses and
 * transfers queue their completions for the program's HG_Trigger). */
static void
hg_watchdog_drive(hg_context_t *context)
{
    na_class_t *na_class = context->hg_class->core.na_class;

    NA_Poll(na_class, context->core.na_context, NULL);
    NA_Trigger(context->core.na_context, UINT32_MAX, NULL);
}

/* One wake-up: drive every attached context that nobody progressed since
 * the last one. The class lock guards the array and the flags, and is not
 * held while a context is driven (its callbacks take it). */
static void
hg_watchdog_pass(hg_class_t *hg_class, struct hg_watchdog *wd)
{
    bool lent = false;

    /* Not qs_mutex_lock(), which would end the bias: the class lock is
     * never skipped, and until it drives a context this thread reads only
     * the array, its flags and the counters. */
    pthread_mutex_lock(&hg_class->lock);
    for (unsigned int id = 0; id < 256; id++) {
        hg_context_t *context = hg_class->contexts[id];
        struct hg_watch *w;
        uint_fast64_t out, in;

        if (context == NULL || context->watch.off)
            continue;
        w = &context->watch;
        /* Exits first: entries are never fewer, and equal counts mean
         * nobody was inside at some moment between the two reads. */
        out = atomic_load_explicit(&w->progress_out, memory_order_acquire);
        in = atomic_load_explicit(&w->progress_in, memory_order_acquire);
        if (in != out || in != w->seen) {
            w->seen = in;
            continue;
        }
        w->busy = true;
        pthread_mutex_unlock(&hg_class->lock);
        /* From here this thread touches what the program's thread may
         * touch without locks: borrow the bias first (util/qs_bias.h). */
        if (!lent)
            lent = qs_bias_lend();
        hg_watchdog_drive(context);
        atomic_fetch_add_explicit(&hg_class->stats.watchdog_drives, 1,
                                  memory_order_relaxed);
        pthread_mutex_lock(&hg_class->lock);
        w->busy = false;
        pthread_cond_broadcast(&wd->idle);
    }
    pthread_mutex_unlock(&hg_class->lock);
    if (lent)
        qs_bias_return();
}

static void *
hg_watchdog_main(void *arg)
{
    hg_class_t *hg_class = arg;
    struct hg_watchdog *wd = hg_class->watchdog;

    hg_watchdog_self = true;
    pthread_mutex_lock(&wd->lock);
    while (!wd->stop) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += wd->period_ms / 1000;
        ts.tv_nsec += (long) (wd->period_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        while (!wd->stop &&
               pthread_cond_timedwait(&wd->wake, &wd->lock, &ts) != ETIMEDOUT)
            ;
        if (wd->stop)
            break;
        pthread_mutex_unlock(&wd->lock);
        atomic_fetch_add_explicit(&hg_class->stats.watchdog_wakeups, 1,
                                  memory_order_relaxed);
        hg_watchdog_pass(hg_class, wd);
        pthread_mutex_lock(&wd->lock);
    }
    pthread_mutex_unlock(&wd->lock);
    return NULL;
}

/* Whether this class gets a watchdog: it listens, probes, and its fabric
 * runs in real time (the simulated fabric keeps one driver). */
static bool
hg_watchdog_wanted(hg_class_t *hg_class)
{
    na_class_t *na_class = hg_class->core.na_class;
    const char *name = NA_Get_class_name(na_class);

    return NA_Is_listening(na_class) && hg_probe_interval_ms(hg_class) > 0 &&
           !(name != NULL && strcmp(name, "sim") == 0);
}

/* Start the class's thread (class lock held). */
static void
hg_watchdog_start(hg_class_t *hg_class)
{
    struct hg_watchdog *wd = calloc(1, sizeof(*wd));
    pthread_condattr_t attr;
    unsigned int ms = hg_probe_interval_ms(hg_class);

    if (wd == NULL) {
        qs_log("hg", QS_LOG_WARNING,
               "no memory for the probe-answering thread: probes are "
               "answered only while the program progresses");
        return;
    }
    /* A quarter interval: a context left alone is driven within half an
     * interval, then every quarter, so a probe is answered well before
     * its origin's limit (one interval after it was sent). */
    wd->period_ms = ms / 4 > 0 ? ms / 4 : 1;
    pthread_mutex_init(&wd->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wd->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&wd->idle, NULL);
    hg_class->watchdog = wd;
    /* A program with one thread keeps its hot path free of locks while
     * this thread only watches (util/qs_bias.h). */
    (void) qs_bias_grant();
    if (pthread_create(&wd->thread, NULL, hg_watchdog_main, hg_class) != 0) {
        qs_log("hg", QS_LOG_WARNING,
               "could not start the probe-answering thread: probes are "
               "answered only while the program progresses");
        hg_class->watchdog = NULL;
        pthread_cond_destroy(&wd->idle);
        pthread_cond_destroy(&wd->wake);
        pthread_mutex_destroy(&wd->lock);
        free(wd);
    }
}

void
hg_watchdog_attach(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;
    bool wanted = hg_watchdog_wanted(hg_class);

    qs_mutex_lock(&hg_class->lock);
    if (wanted && hg_class->watchdog == NULL)
        hg_watchdog_start(hg_class);
    context->watch.off = hg_class->watchdog == NULL;
    pthread_mutex_unlock(&hg_class->lock);
}

void
hg_watchdog_detach(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;

    qs_mutex_lock(&hg_class->lock);
    context->watch.off = true;
    while (context->watch.busy)
        pthread_cond_wait(&hg_class->watchdog->idle, &hg_class->lock);
    pthread_mutex_unlock(&hg_class->lock);
}

void
hg_watchdog_fini(hg_class_t *hg_class)
{
    struct hg_watchdog *wd = hg_class->watchdog;

    if (wd == NULL)
        return;
    qs_mutex_lock(&wd->lock);
    wd->stop = true;
    pthread_cond_signal(&wd->wake);
    pthread_mutex_unlock(&wd->lock);
    pthread_join(wd->thread, NULL);
    hg_class->watchdog = NULL;
    pthread_cond_destroy(&wd->idle);
    pthread_cond_destroy(&wd->wake);
    pthread_mutex_destroy(&wd->lock);
    free(wd);
}

bool
hg_watchdog_defer_put(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;

    if (!hg_watchdog_self || handle->free_user_data == NULL)
        return false;
    qs_mutex_lock(&context->lock);
    LIST_INSERT_HEAD(&context->deferred_puts, handle, entry);
    pthread_mutex_unlock(&context->lock);
    atomic_store_explicit(&context->watch.deferred, true, memory_order_release);
    return true;
}

void
hg_watchdog_defer_repost(hg_context_t *context)
{
    atomic_store_explicit(&context->watch.deferred, true, memory_order_release);
}

void
hg_watchdog_run_deferred(hg_context_t *context)
{
    struct hg_handle *handle;

    if (!atomic_exchange_explicit(&context->watch.deferred, false,
                                  memory_order_acq_rel))
        return;
    for (;;) {
        qs_mutex_lock(&context->lock);
        handle = LIST_FIRST(&context->deferred_puts);
        if (handle != NULL)
            LIST_REMOVE(handle, entry);
        pthread_mutex_unlock(&context->lock);
        if (handle == NULL)
            break;
        hg_handle_put(handle);
    }
    hg_context_post_recvs(context);
}
