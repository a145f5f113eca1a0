/*
 * Progress: draining the CM event channel and the completion queue, and
 * sleeping without spinning.
 *
 * poll() does one bounded round of work. poll_wait() repeats it for a
 * short, adaptive spin (completions on a busy connection arrive within
 * microseconds), then arms the CQ notification and sleeps in epoll on the
 * class's wait set: the completion channel, the CM event channel and an
 * eventfd. The eventfd is how a thread that queues a completion outside
 * the sleeper's own progress call (another thread's poll, a cancel, a
 * receive that matched a queued message) wakes it: the core's completion
 * queue does not wake anyone by itself.
 */
#include "na_verbs_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define NA_VERBS_WC_BATCH 16
/* Bound one round so a flood of completions cannot starve the caller. */
#define NA_VERBS_WC_ROUND_MAX 256
#define NA_VERBS_SPIN_MIN_NS 2000u
#define NA_VERBS_SPIN_MAX_NS 100000u

na_return_t
na_verbs_progress_init(struct na_verbs_class *cls)
{
    struct epoll_event ev = {.events = EPOLLIN};

    cls->spin_ns = NA_VERBS_SPIN_MIN_NS * 4;
    cls->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    cls->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cls->epoll_fd < 0 || cls->wake_fd < 0)
        goto error;
    ev.data.fd = cls->wake_fd;
    if (epoll_ctl(cls->epoll_fd, EPOLL_CTL_ADD, cls->wake_fd, &ev) != 0)
        goto error;
    ev.data.fd = cls->comp_channel->fd;
    if (epoll_ctl(cls->epoll_fd, EPOLL_CTL_ADD, cls->comp_channel->fd, &ev) !=
        0)
        goto error;
    ev.data.fd = cls->cm_channel->fd;
    if (epoll_ctl(cls->epoll_fd, EPOLL_CTL_ADD, cls->cm_channel->fd, &ev) != 0)
        goto error;
    return NA_SUCCESS;

error:
    NA_VERBS_LOG("cannot set up the wait set: %s", strerror(errno));
    na_verbs_progress_fini(cls);
    return NA_IO_ERROR;
}

void
na_verbs_progress_fini(struct na_verbs_class *cls)
{
    if (cls->epoll_fd >= 0)
        close(cls->epoll_fd);
    if (cls->wake_fd >= 0)
        close(cls->wake_fd);
    cls->epoll_fd = -1;
    cls->wake_fd = -1;
}

void
na_verbs_wake(struct na_verbs_class *cls)
{
    uint64_t one = 1;

    if (cls->waiters > 0 && write(cls->wake_fd, &one, sizeof(one)) < 0 &&
        errno != EAGAIN)
        NA_VERBS_LOG("eventfd write: %s", strerror(errno));
}

static void
na_verbs_wc_dispatch(const struct ibv_wc *wc)
{
    struct na_verbs_wr *wr = (struct na_verbs_wr *) (uintptr_t) wc->wr_id;
    struct na_verbs_conn *conn = wr->conn;

    switch (wr->kind) {
    case NA_VERBS_WR_RECV:
        conn->recv_posted--;
        na_verbs_msg_recv_done(conn, wr, wc);
        break;
    case NA_VERBS_WR_SEND:
    case NA_VERBS_WR_CTRL:
        conn->sq_used--;
        na_verbs_msg_send_done(conn, wr, wc);
        break;
    case NA_VERBS_WR_RMA:
        conn->sq_used--;
        na_verbs_rma_done(conn, wr, wc);
        break;
    }
}

/* Drain the CQ, up to a bound (class lock held). Returns the number of
 * completions seen. */
int
na_verbs_cq_progress(struct na_verbs_class *cls)
{
    struct ibv_wc wc[NA_VERBS_WC_BATCH];
    int total = 0, n;

    do {
        n = ibv_poll_cq(cls->cq, NA_VERBS_WC_BATCH, wc);
        if (n < 0) {
            NA_VERBS_LOG("ibv_poll_cq failed");
            break;
        }
        for (int i = 0; i < n; i++)
            na_verbs_wc_dispatch(&wc[i]);
        total += n;
    } while (n == NA_VERBS_WC_BATCH && total < NA_VERBS_WC_ROUND_MAX);
    return total;
}

/* Consume pending completion-channel events so the fd stops being
 * readable; the CQ itself is drained by na_verbs_cq_progress(). */
static void
na_verbs_comp_channel_drain(struct na_verbs_class *cls)
{
    struct ibv_cq *cq;
    void *cq_ctx;

    while (ibv_get_cq_event(cls->comp_channel, &cq, &cq_ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        cls->cq_armed = false;
    }
}

static void
na_verbs_wake_drain(struct na_verbs_class *cls)
{
    uint64_t v;

    while (read(cls->wake_fd, &v, sizeof(v)) > 0)
        ;
}

/* One round of progress; returns completions queued on `ctx` so far. */
static unsigned long
na_verbs_progress(struct na_verbs_class *cls, struct na_verbs_context *ctx)
{
    unsigned long completed;

    pthread_mutex_lock(&cls->lock);
    na_verbs_comp_channel_drain(cls);
    na_verbs_cm_progress(cls);
    na_verbs_cq_progress(cls);
    na_verbs_conn_reap(cls);
    completed = ctx->completed;
    pthread_mutex_unlock(&cls->lock);
    return completed;
}

/* Ask for a completion event, then look once more: a completion that
 * arrived before arming raises no event and would otherwise be slept on. */
static unsigned long
na_verbs_arm(struct na_verbs_class *cls, struct na_verbs_context *ctx)
{
    pthread_mutex_lock(&cls->lock);
    if (!cls->cq_armed && ibv_req_notify_cq(cls->cq, 0) == 0)
        cls->cq_armed = true;
    pthread_mutex_unlock(&cls->lock);
    return na_verbs_progress(cls, ctx);
}

static int
na_verbs_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    /* The fd only becomes readable for CQ completions if notification is
     * armed, so arm it now; poll() re-arms it after each event. */
    pthread_mutex_lock(&cls->lock);
    cls->fd_exported = true;
    pthread_mutex_unlock(&cls->lock);
    (void) na_verbs_arm(cls, context->plugin_context);
    return cls->epoll_fd;
}

static na_return_t
na_verbs_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = context->plugin_context;
    unsigned long before, after;
    bool rearm;

    pthread_mutex_lock(&cls->lock);
    before = ctx->completed;
    pthread_mutex_unlock(&cls->lock);
    after = na_verbs_progress(cls, ctx);
    /* A caller sleeping on the exported fd needs the CQ armed again;
     * arming costs a system call on some providers, so only then. */
    pthread_mutex_lock(&cls->lock);
    rearm = cls->fd_exported && !cls->cq_armed;
    pthread_mutex_unlock(&cls->lock);
    if (rearm)
        after = na_verbs_arm(cls, ctx);
    *count = (unsigned int) (after - before);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_poll_wait(na_class_t *na_class, na_context_t *context,
                   unsigned int timeout_ms, unsigned int *count)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = context->plugin_context;
    uint64_t start = na_plugin_clock_monotonic_ns();
    uint64_t deadline = start + (uint64_t) timeout_ms * 1000000u;
    uint64_t spin_end;
    unsigned long before, now_done;
    bool slept = false;

    pthread_mutex_lock(&cls->lock);
    before = ctx->completed;
    spin_end = start + cls->spin_ns;
    pthread_mutex_unlock(&cls->lock);

    for (;;) {
        struct epoll_event events[4];
        uint64_t now;
        int wait_ms;

        now_done = na_verbs_progress(cls, ctx);
        if (now_done != before)
            break;
        now = na_plugin_clock_monotonic_ns();
        if (now >= deadline)
            break;
        if (now < spin_end)
            continue;
        now_done = na_verbs_arm(cls, ctx);
        if (now_done != before)
            break;
        wait_ms = (int) ((deadline - now + 999999u) / 1000000u);
        pthread_mutex_lock(&cls->lock);
        cls->waiters++;
        pthread_mutex_unlock(&cls->lock);
        slept = true;
        (void) epoll_wait(cls->epoll_fd, events, 4, wait_ms);
        pthread_mutex_lock(&cls->lock);
        cls->waiters--;
        na_verbs_wake_drain(cls);
        pthread_mutex_unlock(&cls->lock);
    }

    /* Adapt the spin: work that shows up while spinning earns a longer
     * spin next time; having to sleep anyway halves it. */
    pthread_mutex_lock(&cls->lock);
    if (slept)
        cls->spin_ns = cls->spin_ns / 2 > NA_VERBS_SPIN_MIN_NS
                           ? cls->spin_ns / 2
                           : NA_VERBS_SPIN_MIN_NS;
    else if (now_done != before)
        cls->spin_ns = cls->spin_ns * 2 < NA_VERBS_SPIN_MAX_NS
                           ? cls->spin_ns * 2
                           : NA_VERBS_SPIN_MAX_NS;
    pthread_mutex_unlock(&cls->lock);

    *count = (unsigned int) (now_done - before);
    return now_done != before ? NA_SUCCESS : NA_TIMEOUT;
}

static na_return_t
na_verbs_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                        void *plugin_context)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = plugin_context, *other;
    na_return_t ret = NA_SUCCESS;

    ctx->context = context;
    ctx->id = id;
    na_op_list_init(&ctx->unexpected_ops);
    na_op_list_init(&ctx->expected_ops);
    TAILQ_INIT(&ctx->unexpected_msgs);
    TAILQ_INIT(&ctx->expected_msgs);
    pthread_mutex_lock(&cls->lock);
    /* Peers address contexts by id, so two with one id are ambiguous. */
    LIST_FOREACH(other, &cls->contexts, entry)
    {
        if (other->id == id)
            ret = NA_EXIST;
    }
    if (ret == NA_SUCCESS)
        LIST_INSERT_HEAD(&cls->contexts, ctx, entry);
    pthread_mutex_unlock(&cls->lock);
    if (ret != NA_SUCCESS) {
        NA_VERBS_LOG("a context with id %u already exists", (unsigned) id);
        return ret;
    }
    return NA_SUCCESS;
}

static na_return_t
na_verbs_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = plugin_context;
    unsigned int pending;

    pthread_mutex_lock(&cls->lock);
    pending = ctx->pending;
    if (pending == 0) {
        /* Messages no receive claimed die with their context. */
        LIST_REMOVE(ctx, entry);
        na_verbs_msg_lists_clear(ctx);
    }
    pthread_mutex_unlock(&cls->lock);
    if (pending > 0) {
        NA_VERBS_LOG("context still has %u operation(s) pending", pending);
        return NA_BUSY;
    }
    return NA_SUCCESS;
}

const struct na_context_ops na_verbs_context_ops = {
    .context_size = sizeof(struct na_verbs_context),
    .create = na_verbs_context_create,
    .destroy = na_verbs_context_destroy,
    .poll_get_fd = na_verbs_poll_get_fd,
    .poll = na_verbs_poll,
    .poll_wait = na_verbs_poll_wait,
    .cancel = na_verbs_cancel,
};
