/*
 * Progress of the TCP plugin: completion, polling the sockets, sleeping
 * on the wait fd, peer death and cancel.
 *
 * The core keeps an op's state. A posted op that waits is started and sits
 * on exactly one list (a context's posted receives, a connection's rma)
 * or, a send, in its connection's txq; whoever takes it off under the
 * class lock completes it, so it completes once, and a cancel finishes it
 * only while it waits there.
 *
 * Busy polling reads each connection's socket directly (one read that
 * usually finds the answer, instead of an epoll_wait and then a read) while
 * there are few connections, and looks at the epoll fd (new connections,
 * many connections) every few passes. Waiting spins a little, then sleeps
 * in epoll_wait on the class's epoll fd, which holds the listening socket,
 * every connection and an eventfd written only when an op completes
 * outside progress while a thread sleeps: no byte is written to ourselves
 * on the busy path.
 */
#include "na_tcp_internal.h"

#include <stdlib.h>
#include <sys/epoll.h>

/* With this many connections or fewer, busy polling reads each directly. */
#define NA_TCP_DIRECT_CONNS 4u

/* The epoll fd is looked at once every this many busy passes. */
#define NA_TCP_EPOLL_EVERY 64u

static struct na_tcp_context *
na_tcp_pctx(na_context_t *context)
{
    return context->plugin_context;
}

/* The core has moved the op from idle to posted. */
void
na_tcp_op_init(struct na_op_id *op, const struct na_op_desc *desc,
               struct na_addr *addr)
{
    op->context = desc->context;
    op->type = desc->type;
    op->conn = NULL;
    op->addr = addr;
    if (addr != NULL)
        na_plugin_addr_ref(addr);
    atomic_fetch_add(&na_tcp_pctx(desc->context)->base.pending, 1);
}

/* Lock held. The op may be reused by another thread as soon as the core
 * has it, so it is not touched afterwards. */
void
na_tcp_op_complete(struct na_op_id *op, na_return_t ret)
{
    struct na_tcp_context *pc = na_tcp_pctx(op->context);

    if (op->addr != NULL)
        na_plugin_addr_unref_locked(op->addr);
    op->addr = NULL;
    na_plugin_op_done(&pc->cls->wait, &pc->base, op, ret);
}

/* Lock held. Start the op and make it wait on `list`; false when a
 * cancel came during the post, and the op is then finished as canceled. */
bool
na_tcp_op_wait(struct na_op_list *list, struct na_op_id *op)
{
    if (!na_op_start(op)) {
        op->conn = NULL;
        na_tcp_op_complete(op, NA_CANCELED);
        return false;
    }
    na_op_list_append(list, op);
    return true;
}

/* Wake a thread sleeping in poll_wait: only when there is one. */
void
na_tcp_wake_local(struct na_tcp_class *cls)
{
    na_plugin_wait_wake(&cls->wait, "tcp");
}

/*
 * A dead connection (lock held): everything that waits on it fails once,
 * sends with NA_HOSTUNREACH, RMA with NA_HOSTUNREACH if the peer was never
 * reached (a refused connect) and NA_IO_ERROR otherwise, expected receives
 * from its peer with NA_HOSTUNREACH unless another connection to that peer
 * lives; then it is freed.
 */
void
na_tcp_conn_reap(struct na_tcp_conn *c)
{
    struct na_tcp_class *cls = c->cls;
    na_return_t rma_ret = c->connecting ? NA_HOSTUNREACH : NA_IO_ERROR;
    struct na_addr *addr = c->addr;
    struct na_tcp_conn *o;
    struct na_op_id *op, *next;
    struct na_tcp_tx *tx;

    while ((tx = STAILQ_FIRST(&c->txq)) != NULL) {
        STAILQ_REMOVE_HEAD(&c->txq, entry);
        tx->queued = false;
        if (tx->heap) {
            free(tx);
        } else if (tx->msg) {
            tx->op->conn = NULL;
            na_tcp_op_complete(tx->op, NA_HOSTUNREACH);
        }
    }
    while ((op = na_op_list_first(&c->rma)) != NULL) {
        na_op_list_remove(op);
        op->conn = NULL;
        na_tcp_op_complete(op, rma_ret);
    }
    if (addr != NULL && addr->conn == c) {
        addr->conn = NULL;
        LIST_FOREACH(o, &cls->conns, entry)
        {
            if (o != c && o->addr == addr && !o->dead)
                addr->conn = o;
        }
    }
    if (addr != NULL && addr->conn == NULL) {
        addr->failed = true;
        for (int i = 0; i < 256; i++) {
            struct na_tcp_context *pc = na_tcp_ctx(cls, (uint8_t) i);
            if (pc == NULL)
                continue;
            for (op = na_op_list_first(&pc->base.exp_ops); op != NULL;
                 op = next) {
                next = na_op_list_next(op);
                if (op->addr != addr)
                    continue;
                na_op_list_remove(op);
                na_tcp_op_complete(op, NA_HOSTUNREACH);
            }
        }
    }
    na_tcp_conn_destroy(c);
}

/* Look at the epoll fd without blocking (lock held). */
static void
na_tcp_epoll(struct na_tcp_class *cls)
{
    struct epoll_event ev[64];
    int n = epoll_wait(cls->wait.epfd, ev, 64, 0);

    for (int i = 0; i < n; i++) {
        void *p = ev[i].data.ptr;
        if (p == &cls->listen_sock) {
            na_tcp_accept_all(cls);
        } else if (p == &cls->wait.wake_fd) {
            na_plugin_wait_drain(&cls->wait);
        } else {
            struct na_tcp_conn *c = p;
            if (ev[i].events & EPOLLOUT)
                na_tcp_conn_flush(c);
            if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                na_tcp_conn_readable(c);
        }
    }
}

static void
na_tcp_progress(struct na_tcp_class *cls, bool force_epoll)
{
    struct na_tcp_conn *c, *next;
    bool direct;

    pthread_mutex_lock(&cls->lock);
    direct = cls->conn_count <= NA_TCP_DIRECT_CONNS;
    /* Frames queued since the last pass first, then what came in. */
    LIST_FOREACH(c, &cls->conns, entry)
    {
        c->wrote_early = false;
        if (!STAILQ_EMPTY(&c->txq) && (direct || !c->want_out))
            na_tcp_conn_flush(c);
        if (direct && !c->connecting)
            na_tcp_conn_readable(c);
    }
    if (!direct || force_epoll || ++cls->poll_count % NA_TCP_EPOLL_EVERY == 0)
        na_tcp_epoll(cls);
    /* Answers queued while reading go out in this pass, together. */
    for (c = LIST_FIRST(&cls->conns); c != NULL; c = next) {
        next = LIST_NEXT(c, entry);
        if (!c->dead && !STAILQ_EMPTY(&c->txq) && (direct || !c->want_out))
            na_tcp_conn_flush(c);
        if (c->dead)
            na_tcp_conn_reap(c);
    }
    pthread_mutex_unlock(&cls->lock);
}

/* From the first call on, every send is written at once: a caller that
 * sleeps on the fd itself runs no progress pass to write queued ones. */
static int
na_tcp_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    (void) context;
    atomic_store(&cls->fd_exported, true);
    return cls->wait.epfd;
}

static void
na_tcp_progress_cb(void *cls, bool force)
{
    na_tcp_progress(cls, force);
}

static void
na_tcp_sleep(void *arg, na_context_t *context, unsigned int timeout_ms)
{
    struct na_tcp_class *cls = arg;
    struct epoll_event ev;

    atomic_fetch_add(&cls->wait.sleepers, 1);
    /* Look once more after announcing it: an op completed outside
     * progress before we counted ourselves is found here. */
    na_tcp_progress(cls, true);
    if (NA_Context_get_completion_count(context) == 0)
        (void) epoll_wait(cls->wait.epfd, &ev, 1, (int) timeout_ms);
    atomic_fetch_sub(&cls->wait.sleepers, 1);
    na_tcp_progress(cls, true);
}

static const struct na_plugin_wait_ops na_tcp_wait_ops = {
    .progress = na_tcp_progress_cb, .sleep = na_tcp_sleep};

static na_return_t
na_tcp_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    return na_plugin_poll(&na_tcp_pctx(context)->base, &na_tcp_wait_ops,
                          na_tcp_class(na_class), count);
}

/* Spin, then sleep: the spin window is learned as the sm plugin's is. */
static na_return_t
na_tcp_poll_wait(na_class_t *na_class, na_context_t *context,
                 unsigned int timeout_ms, unsigned int *count)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    return na_plugin_poll_wait(&cls->wait, &na_tcp_pctx(context)->base,
                               &na_tcp_wait_ops, cls, timeout_ms, count);
}

/* Whether `op`, waiting on a connection, can still end with nothing
 * moved: its frame not yet begun, or (a get) its answer not yet begun. */
static bool
na_tcp_cancelable(const struct na_op_id *op)
{
    if (op->tx.queued && op->tx.done != 0)
        return false;
    /* A receive has no connection: no &NULL->rma to compare with. */
    if (op->conn != NULL &&
        na_op_list_of((na_op_id_t *) op) == &op->conn->rma &&
        op->u.rma.started && (op->type == NA_CB_PUT || op->conn->rx_op == op))
        return false;
    return true;
}

/* The core calls this once per post, for a started op: one that still
 * waits (on a list, or its frame in a txq) and has moved nothing is
 * finished here; any other completes with its result. */
static na_return_t
na_tcp_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    bool done;

    (void) context;
    pthread_mutex_lock(&cls->lock);
    done = (na_op_list_active(op) || op->tx.queued) && na_tcp_cancelable(op);
    if (done) {
        if (op->tx.queued) {
            STAILQ_REMOVE(&op->conn->txq, &op->tx, na_tcp_tx, entry);
            op->tx.queued = false;
        }
        na_op_list_remove(op);
        op->conn = NULL;
        na_tcp_op_complete(op, NA_CANCELED);
    }
    pthread_mutex_unlock(&cls->lock);
    if (done)
        na_tcp_wake_local(cls);
    return NA_SUCCESS;
}

static na_return_t
na_tcp_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                      void *plugin_context)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = plugin_context;

    na_plugin_context_init(&pc->base, context, id);
    pc->cls = cls;
    return na_plugin_context_add(&cls->lock, cls->contexts, &pc->base);
}

static na_return_t
na_tcp_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = plugin_context;

    return na_plugin_context_remove(&cls->lock, cls->contexts, &pc->base,
                                    na_plugin_addr_unref_locked);
}

const struct na_context_ops na_tcp_context_ops = {
    .context_size = sizeof(struct na_tcp_context),
    .create = na_tcp_context_create,
    .destroy = na_tcp_context_destroy,
    .poll_get_fd = na_tcp_poll_get_fd,
    .poll = na_tcp_poll,
    .poll_wait = na_tcp_poll_wait,
    .cancel = na_tcp_cancel,
};
