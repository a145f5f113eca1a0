/*
 * Progress of the shared-memory plugin: operation ids, completion,
 * polling the rings and sockets, sleeping on the wait fd, peer failure
 * and cancel.
 *
 * The core keeps an op's state. A post that cannot finish at once starts
 * the op and puts it on exactly one list (na_sm_op_wait, under the class
 * lock); whoever takes it off that list under the lock completes it, so it
 * completes once, and a cancel finishes it only while it is on one.
 *
 * Waiting: a thread that found nothing spins a little, then announces
 * that it sleeps (the `sleeping` flag of every incoming ring), looks once
 * more, and sleeps in epoll_wait on the class's epoll fd, which holds the
 * listening socket, every connection socket and an eventfd. A producer
 * that sees the flag clears it and writes one byte to the socket; a local
 * completion writes the eventfd; a dead peer's socket reports end of file.
 */
#include "na_sm_internal.h"

#ifdef NA_SM_TSAN
atomic_uint na_sm_fence_word;
#endif

#include <poll.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

/* Sockets (new connections, handshakes, wake-up bytes, a peer's end of
 * file) are looked at before sleeping, and on a busy pass only when this
 * many passes have gone by or the coarse clock has ticked (every few
 * milliseconds; reading it costs no system call) since the last look. An
 * epoll_wait on the busy path costs far more than an idle pass and finds
 * nothing there: a spinning consumer gets no wake-up bytes, so only
 * connection set-up and a peer's death wait, by at most a tick. */
#define NA_SM_SOCK_EVERY 1024u

static struct na_sm_context *
na_sm_pctx(na_context_t *context)
{
    return context->plugin_context;
}

/* The core has moved the op from idle to posted. */
void
na_sm_op_init(struct na_op_id *op, const struct na_op_desc *desc,
              struct na_addr *addr)
{
    op->context = desc->context;
    op->type = desc->type;
    op->conn = NULL;
    op->addr = addr;
    if (addr != NULL)
        na_plugin_addr_ref(addr);
    atomic_fetch_add(&na_sm_pctx(desc->context)->base.pending, 1);
}

/* Lock held. Start the op and make it wait on `list`; false when a
 * cancel came during the post, and the op is then finished as canceled. */
bool
na_sm_op_wait(struct na_op_list *list, struct na_op_id *op)
{
    if (!na_op_start(op)) {
        op->conn = NULL;
        na_sm_op_complete(op, NA_CANCELED);
        return false;
    }
    na_op_list_append(list, op);
    return true;
}

/* Lock held. The op may be reused by another thread as soon as the core
 * has it, so it is not touched afterwards. */
void
na_sm_op_complete(struct na_op_id *op, na_return_t ret)
{
    struct na_sm_context *pc = na_sm_pctx(op->context);

    if (op->addr != NULL)
        na_plugin_addr_unref_locked(op->addr);
    op->addr = NULL;
    na_plugin_op_done(&pc->cls->wait, &pc->base, op, ret);
}

void
na_sm_wake_local(struct na_sm_class *cls)
{
    na_plugin_wait_wake(&cls->wait, "sm");
}

static void
na_sm_fail_queue(struct na_op_list *q)
{
    struct na_op_id *op;

    while ((op = na_op_list_first(q)) != NULL) {
        na_op_list_remove(op);
        op->conn = NULL;
        na_sm_op_complete(op, NA_HOSTUNREACH);
    }
}

/* The peer behind `conn` is gone (lock held): everything that waits on it
 * fails with NA_HOSTUNREACH. */
void
na_sm_peer_failed(struct na_sm_class *cls, struct na_sm_conn *conn)
{
    struct na_addr *addr = conn->addr;

    na_sm_fail_queue(&conn->tx_wait);
    na_sm_fail_queue(&conn->rma_wait);
    na_sm_rma_msg_fail(conn);
    if (addr == NULL)
        return;
    addr->failed = true;
    for (int i = 0; i < 256; i++) {
        struct na_sm_context *pc = na_sm_ctx(cls, (uint8_t) i);
        struct na_op_id *op, *next;
        if (pc == NULL)
            continue;
        for (op = na_op_list_first(&pc->base.exp_ops); op != NULL; op = next) {
            next = na_op_list_next(op);
            if (op->addr != addr)
                continue;
            na_op_list_remove(op);
            na_sm_op_complete(op, NA_HOSTUNREACH);
        }
    }
}

/* Look at the sockets without blocking (lock held). */
static bool
na_sm_sockets(struct na_sm_class *cls)
{
    struct epoll_event ev[32];
    int n = epoll_wait(cls->wait.epfd, ev, 32, 0);

    for (int i = 0; i < n; i++) {
        void *p = ev[i].data.ptr;
        if (p == &cls->listen_sock)
            na_sm_conn_accept_all(cls);
        else if (p == &cls->wait.wake_fd)
            na_plugin_wait_drain(&cls->wait);
        else
            na_sm_conn_sock_event(p);
    }
    return n > 0;
}

/* One pass over every connection (lock held). `publish`: show every
 * producer at once how far we read (before sleeping, or when someone may
 * sleep on the exported fd), rather than at the next pass. */
static bool
na_sm_rings(struct na_sm_class *cls, bool publish)
{
    struct na_sm_conn *c, *next;
    bool any = false;

    for (c = LIST_FIRST(&cls->conns); c != NULL; c = next) {
        next = LIST_NEXT(c, entry);
        if (c->rx != NULL && na_sm_ring_drain(c, publish))
            any = true;
        if (!na_op_list_empty(&c->tx_wait))
            na_sm_tx_progress(c);
        if (!TAILQ_EMPTY(&c->rma_out))
            na_sm_rma_msg_progress(c);
        if (c->dead) {
            na_sm_peer_failed(cls, c);
            na_sm_conn_destroy(c);
        }
    }
    return any;
}

/* With the fd exported: set again the sleeping flags that producers
 * cleared, then look at the rings once more, so that a record written
 * before a producer could see the flag is found here and every later one
 * writes a wake-up byte (lock held). */
static void
na_sm_rearm(struct na_sm_class *cls)
{
    struct na_sm_conn *c;
    bool rearmed = false;

    LIST_FOREACH(c, &cls->conns, entry)
    {
        if (c->rx != NULL &&
            atomic_load_explicit(&c->rx->sleeping, memory_order_relaxed) == 0) {
            atomic_store(&c->rx->sleeping, 1);
            rearmed = true;
        }
    }
    if (rearmed) {
        NA_SM_FENCE_SEQ_CST();
        (void) na_sm_rings(cls, true);
    }
}

/* A busy pass looks at the sockets (lock held)? */
static bool
na_sm_sockets_due(struct na_sm_class *cls)
{
    struct timespec ts;

    if (++cls->poll_count % NA_SM_SOCK_EVERY == 0)
        return true;
    (void) clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    if (ts.tv_nsec == cls->sock_tick && ts.tv_sec == cls->sock_tick_sec)
        return false;
    cls->sock_tick = ts.tv_nsec;
    cls->sock_tick_sec = ts.tv_sec;
    return true;
}

/* force: about to sleep, or just woken; look at the sockets too. */
static void
na_sm_progress(struct na_sm_class *cls, bool force)
{
    bool publish =
        force || atomic_load_explicit(&cls->fd_exported, memory_order_relaxed);

    pthread_mutex_lock(&cls->lock);
    (void) na_sm_rings(cls, publish);
    if (force || na_sm_sockets_due(cls)) {
        if (na_sm_sockets(cls))
            (void) na_sm_rings(cls, publish); /* new connections, wake-ups */
    }
    if (atomic_load_explicit(&cls->fd_exported, memory_order_relaxed))
        na_sm_rearm(cls);
    pthread_mutex_unlock(&cls->lock);
}

static void na_sm_set_sleeping(struct na_sm_class *cls, uint32_t v);

/* The epoll fd. From the first call on, the class counts as one more
 * sleeper for good: its producers write a wake-up byte for every message,
 * as the fd's contract (readable when progress is needed) requires of a
 * caller that polls it instead of calling NA_Poll_wait. */
static int
na_sm_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    struct na_sm_class *cls = na_sm_class(na_class);

    (void) context;
    pthread_mutex_lock(&cls->lock);
    if (!atomic_load(&cls->fd_exported)) {
        atomic_store(&cls->fd_exported, true);
        if (atomic_fetch_add(&cls->wait.sleepers, 1) == 0)
            na_sm_set_sleeping(cls, 1);
    }
    pthread_mutex_unlock(&cls->lock);
    return cls->wait.epfd;
}

/* Set or clear the sleeping flag of every incoming ring (lock held). */
static void
na_sm_set_sleeping(struct na_sm_class *cls, uint32_t v)
{
    struct na_sm_conn *c;

    LIST_FOREACH(c, &cls->conns, entry)
    {
        if (c->rx != NULL)
            atomic_store(&c->rx->sleeping, v);
    }
}

static void
na_sm_sleep(void *arg, na_context_t *context, unsigned int timeout_ms)
{
    struct na_sm_class *cls = arg;
    struct epoll_event ev;

    pthread_mutex_lock(&cls->lock);
    if (atomic_fetch_add(&cls->wait.sleepers, 1) == 0)
        na_sm_set_sleeping(cls, 1);
    pthread_mutex_unlock(&cls->lock);
    /* Look once more after announcing it: a producer that wrote before
     * seeing the flag has its record found here. */
    na_sm_progress(cls, true);
    if (NA_Context_get_completion_count(context) == 0)
        (void) epoll_wait(cls->wait.epfd, &ev, 1, (int) timeout_ms);
    pthread_mutex_lock(&cls->lock);
    if (atomic_fetch_sub(&cls->wait.sleepers, 1) == 1)
        na_sm_set_sleeping(cls, 0);
    pthread_mutex_unlock(&cls->lock);
    na_sm_progress(cls, true);
}

static void
na_sm_progress_cb(void *cls, bool force)
{
    na_sm_progress(cls, force);
}

static const struct na_plugin_wait_ops na_sm_wait_ops = {
    .progress = na_sm_progress_cb, .sleep = na_sm_sleep};

static na_return_t
na_sm_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    return na_plugin_poll(&na_sm_pctx(context)->base, &na_sm_wait_ops,
                          na_sm_class(na_class), count);
}

/* Spin first, then sleep (na_plugin_poll_wait); a sleeper is announced to
 * every producer through the `sleeping` flag of its incoming rings. */
static na_return_t
na_sm_poll_wait(na_class_t *na_class, na_context_t *context,
                unsigned int timeout_ms, unsigned int *count)
{
    struct na_sm_class *cls = na_sm_class(na_class);

    return na_plugin_poll_wait(&cls->wait, &na_sm_pctx(context)->base,
                               &na_sm_wait_ops, cls, timeout_ms, count);
}

/* The core calls this once per post, for a started op. An op on a list
 * is still ours to finish, unless it is an RMA through the rings that has
 * begun to move data: that one completes with its result. */
static na_return_t
na_sm_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_op_list *list;
    bool done;

    (void) context;
    pthread_mutex_lock(&cls->lock);
    list = na_op_list_of(op);
    done =
        list != NULL && (op->conn == NULL || list != &op->conn->rma_pending ||
                         na_sm_rma_msg_cancelable(op));
    if (done) {
        if (op->conn != NULL && list == &op->conn->rma_pending)
            na_sm_rma_msg_cancel(op); /* its unsent data too */
        else
            na_op_list_remove(op);
        op->conn = NULL;
        na_sm_op_complete(op, NA_CANCELED);
    }
    pthread_mutex_unlock(&cls->lock);
    if (done)
        na_sm_wake_local(cls);
    return NA_SUCCESS;
}

/* For auto_sm: sleep as poll_wait does, until this class has work, `fd`
 * (the network class's wait fd, or -1) is readable, or timeout_ms. */
void
na_sm_sleep_with(na_class_t *na_class, int fd, unsigned int timeout_ms)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    unsigned int before = atomic_load(&cls->wait.completed);
    struct pollfd p[2] = {{.fd = cls->wait.epfd, .events = POLLIN},
                          {.fd = fd, .events = POLLIN}};

    pthread_mutex_lock(&cls->lock);
    if (atomic_fetch_add(&cls->wait.sleepers, 1) == 0)
        na_sm_set_sleeping(cls, 1);
    pthread_mutex_unlock(&cls->lock);
    na_sm_progress(cls, true);
    if (atomic_load(&cls->wait.completed) == before)
        (void) poll(p, fd >= 0 ? 2 : 1, (int) timeout_ms);
    pthread_mutex_lock(&cls->lock);
    if (atomic_fetch_sub(&cls->wait.sleepers, 1) == 1)
        na_sm_set_sleeping(cls, 0);
    pthread_mutex_unlock(&cls->lock);
}

static na_return_t
na_sm_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                     void *plugin_context)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_context *pc = plugin_context;

    na_plugin_context_init(&pc->base, context, id);
    pc->cls = cls;
    return na_plugin_context_add(&cls->lock, cls->contexts, &pc->base);
}

static na_return_t
na_sm_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_context *pc = plugin_context;

    return na_plugin_context_remove(&cls->lock, cls->contexts, &pc->base,
                                    na_plugin_addr_unref_locked);
}

const struct na_context_ops na_sm_context_ops = {
    .context_size = sizeof(struct na_sm_context),
    .create = na_sm_context_create,
    .destroy = na_sm_context_destroy,
    .poll_get_fd = na_sm_poll_get_fd,
    .poll = na_sm_poll,
    .poll_wait = na_sm_poll_wait,
    .cancel = na_sm_cancel,
};
