/*
 * The event-driven progress API (HG_Event_*): a program that runs its own
 * poll()/epoll loop waits on one file descriptor per context and drives
 * the context with non-blocking calls.
 *
 * The descriptor is an epoll set made at the first HG_Event_get_wait_fd()
 * of a context. It holds three sources, so that it becomes readable
 * whenever HG_Event_progress() has something to do:
 *  - the NA plugin's own descriptor (network work),
 *  - an eventfd written by hg_core_complete() when a completion is queued
 *    (by another thread's progress, or a probe answered elsewhere),
 *  - a timerfd armed by HG_Event_ready() at the context's nearest timer
 *    (HG_Forward_timed() deadlines, liveness probes), measured on the NA
 *    clock, whose rate is real time on every plugin that has a descriptor.
 * A plugin without a descriptor (sim, the auto_sm pair) gives -1, as
 * Mercury does for a plugin that cannot be waited on.
 *
 * Lock: event_lock guards the creation of context->event; once made it
 * does not change until HG_Context_destroy() (hg_event_fini()).
 */
#include "hg/hg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct hg_event {
    int epfd;    /* what HG_Event_get_wait_fd() returns */
    int notify;  /* eventfd: a completion was queued     */
    int timerfd; /* the nearest timer of the context     */
};

static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;

static void
hg_event_close(struct hg_event *ev)
{
    if (ev->epfd >= 0)
        close(ev->epfd);
    if (ev->notify >= 0)
        close(ev->notify);
    if (ev->timerfd >= 0)
        close(ev->timerfd);
    free(ev);
}

static int
hg_event_add(int epfd, int fd)
{
    struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

/* Build the epoll set of a context; NULL when its plugin has no
 * descriptor or the system refused one (logged). */
static struct hg_event *
hg_event_create(hg_context_t *context)
{
    na_class_t *na_class = context->hg_class->core.na_class;
    struct hg_event *ev;
    int na_fd;

    na_fd = NA_Poll_get_fd(na_class, context->core.na_context);
    if (na_fd < 0)
        return NULL;
    ev = malloc(sizeof(*ev));
    if (ev == NULL)
        return NULL;
    ev->epfd = epoll_create1(EPOLL_CLOEXEC);
    ev->notify = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ev->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (ev->epfd < 0 || ev->notify < 0 || ev->timerfd < 0 ||
        hg_event_add(ev->epfd, na_fd) != 0 ||
        hg_event_add(ev->epfd, ev->notify) != 0 ||
        hg_event_add(ev->epfd, ev->timerfd) != 0) {
        qs_log("hg", QS_LOG_ERROR, "HG_Event_get_wait_fd: %s", strerror(errno));
        hg_event_close(ev);
        return NULL;
    }
    /* From now on every queued completion also writes the eventfd. */
    atomic_store(&context->core.notify_fd, ev->notify);
    return ev;
}

int
HG_Event_get_wait_fd(const hg_context_t *context)
{
    hg_context_t *ctx = (hg_context_t *) context;
    struct hg_event *ev;

    if (ctx == NULL)
        return -1;
    qs_mutex_lock(&event_lock);
    if (ctx->event == NULL)
        ctx->event = hg_event_create(ctx);
    ev = ctx->event;
    pthread_mutex_unlock(&event_lock);
    return ev != NULL ? ev->epfd : -1;
}

/* Arm the timerfd for the context's nearest timer, or disarm it. The
 * timer hint never lies late (no timer is due before it), so the wake-up
 * is at worst early: HG_Event_progress() then finds nothing due and the
 * next HG_Event_ready() re-arms it. */
static void
hg_event_arm_timer(struct hg_event *ev, uint64_t hint, uint64_t now)
{
    struct itimerspec its = {0};

    if (hint != UINT64_MAX) {
        uint64_t rel = hint > now ? hint - now : 1;

        its.it_value.tv_sec = (time_t) (rel / 1000000000ull);
        its.it_value.tv_nsec = (long) (rel % 1000000000ull);
    }
    timerfd_settime(ev->timerfd, 0, &its, NULL);
}

bool
HG_Event_ready(hg_context_t *context)
{
    na_class_t *na_class;
    uint64_t hint, now = 0;
    struct hg_event *ev;

    if (context == NULL)
        return false;
    na_class = context->hg_class->core.na_class;
    if (hg_core_has_completions(&context->core))
        return true;
    if (!NA_Poll_try_wait(na_class, context->core.na_context))
        return true;
    hint = atomic_load(&context->core.timer_hint);
    if (hint != UINT64_MAX) {
        now = NA_Clock_now(na_class);
        if (hint <= now)
            return true;
    }
    qs_mutex_lock(&event_lock);
    ev = context->event;
    pthread_mutex_unlock(&event_lock);
    if (ev != NULL)
        hg_event_arm_timer(ev, hint, now);
    return false;
}

/* Empty the eventfd and the timerfd: what they said is about to be
 * handled, and a level-triggered poll would otherwise spin on them. */
static void
hg_event_drain(hg_context_t *context)
{
    struct hg_event *ev;
    uint64_t value;

    qs_mutex_lock(&event_lock);
    ev = context->event;
    pthread_mutex_unlock(&event_lock);
    if (ev == NULL)
        return;
    while (read(ev->notify, &value, sizeof(value)) > 0)
        continue;
    while (read(ev->timerfd, &value, sizeof(value)) > 0)
        continue;
}

hg_return_t
HG_Event_progress(hg_context_t *context, unsigned int *count_p)
{
    hg_return_t ret;

    qs_bias_gate();
    if (context == NULL)
        return HG_INVALID_ARG;
    hg_event_drain(context);
    /* One non-blocking pass: NA callbacks, the NA poll, the timers. It goes
     * through HG_Progress() so that the probe watchdog counts the context
     * as progressed and the work it deferred to progress runs. */
    ret = HG_Progress(context, 0);
    if (ret != HG_SUCCESS && ret != HG_TIMEOUT)
        return ret;
    if (count_p != NULL)
        *count_p = atomic_load(&context->core.n_queued);
    return HG_SUCCESS;
}

hg_return_t
HG_Event_trigger(hg_context_t *context, unsigned int max_count,
                 unsigned int *actual_count_p)
{
    unsigned int done = 0;

    qs_bias_gate();
    if (context == NULL)
        return HG_INVALID_ARG;
    if (max_count > 0)
        hg_core_trigger(&context->core, 0, max_count, &done);
    if (actual_count_p != NULL)
        *actual_count_p = done;
    return HG_SUCCESS;
}

void
hg_event_fini(hg_context_t *context)
{
    struct hg_event *ev;

    qs_mutex_lock(&event_lock);
    ev = context->event;
    context->event = NULL;
    pthread_mutex_unlock(&event_lock);
    if (ev == NULL)
        return;
    atomic_store(&context->core.notify_fd, -1);
    hg_event_close(ev);
}
