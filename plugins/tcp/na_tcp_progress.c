/*
 * Progress of the TCP plugin: completion, polling the sockets, sleeping
 * on the wait fd, peer death and cancel.
 *
 * A posted op that waits sits on exactly one list, named by op->queue;
 * whoever takes it off that list under the class lock completes it, so it
 * completes once.
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

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Bounds of the adaptive spin of poll_wait before it sleeps. */
#define NA_TCP_SPIN_MIN_NS 2000u
#define NA_TCP_SPIN_MAX_NS 100000u

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
na_tcp_op_start(struct na_op_id *op, const struct na_op_desc *desc,
                struct na_addr *addr)
{
    op->context = desc->context;
    op->type = desc->type;
    op->queue = NA_TCP_Q_NONE;
    op->conn = NULL;
    op->addr = addr;
    if (addr != NULL)
        na_tcp_addr_ref(addr);
    atomic_fetch_add(&na_tcp_pctx(desc->context)->pending, 1);
}

/* Lock held. The op may be reused by another thread as soon as the core
 * has it, so it is not touched afterwards. */
void
na_tcp_op_complete(struct na_op_id *op, na_return_t ret)
{
    struct na_tcp_context *pc = na_tcp_pctx(op->context);

    if (op->addr != NULL)
        na_tcp_addr_unref_locked(op->addr);
    op->addr = NULL;
    op->queue = NA_TCP_Q_NONE;
    atomic_fetch_add(&pc->completed, 1);
    atomic_fetch_add(&pc->cls->completed, 1);
    na_op_complete(op, ret);
    atomic_fetch_sub(&pc->pending, 1);
}

/* Wake a thread sleeping in poll_wait: only when there is one. */
void
na_tcp_wake_local(struct na_tcp_class *cls)
{
    uint64_t one = 1;

    if (atomic_load(&cls->sleepers) == 0)
        return;
    if (write(cls->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        na_plugin_log_error("tcp", "eventfd write failed");
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
    while ((op = TAILQ_FIRST(&c->rma)) != NULL) {
        TAILQ_REMOVE(&c->rma, op, entry);
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
            struct na_tcp_context *pc = cls->contexts[i];
            if (pc == NULL)
                continue;
            for (op = TAILQ_FIRST(&pc->exp_ops); op != NULL; op = next) {
                next = TAILQ_NEXT(op, entry);
                if (op->addr != addr)
                    continue;
                TAILQ_REMOVE(&pc->exp_ops, op, entry);
                na_tcp_op_complete(op, NA_HOSTUNREACH);
            }
        }
    }
    na_tcp_conn_destroy(c);
}

static void
na_tcp_drain_wake_fd(struct na_tcp_class *cls)
{
    uint64_t v;

    while (read(cls->wake_fd, &v, sizeof(v)) > 0)
        ;
}

/* Look at the epoll fd without blocking (lock held). */
static void
na_tcp_epoll(struct na_tcp_class *cls)
{
    struct epoll_event ev[64];
    int n = epoll_wait(cls->epfd, ev, 64, 0);

    for (int i = 0; i < n; i++) {
        void *p = ev[i].data.ptr;
        if (p == &cls->listen_sock) {
            na_tcp_accept_all(cls);
        } else if (p == &cls->wake_fd) {
            na_tcp_drain_wake_fd(cls);
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
int
na_tcp_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    (void) context;
    atomic_store(&cls->fd_exported, true);
    return cls->epfd;
}

na_return_t
na_tcp_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    struct na_tcp_context *pc = na_tcp_pctx(context);
    unsigned int before = atomic_load(&pc->completed);

    na_tcp_progress(na_tcp_class(na_class), false);
    if (count != NULL)
        *count = atomic_load(&pc->completed) - before;
    return NA_SUCCESS;
}

static bool
na_tcp_has_completions(na_context_t *context)
{
    return NA_Context_get_completion_count(context) != 0;
}

static void
na_tcp_sleep(struct na_tcp_class *cls, na_context_t *context,
             unsigned int timeout_ms)
{
    struct epoll_event ev;

    atomic_fetch_add(&cls->sleepers, 1);
    /* Look once more after announcing it: an op completed outside
     * progress before we counted ourselves is found here. */
    na_tcp_progress(cls, true);
    if (!na_tcp_has_completions(context))
        (void) epoll_wait(cls->epfd, &ev, 1, (int) timeout_ms);
    atomic_fetch_sub(&cls->sleepers, 1);
    na_tcp_progress(cls, true);
}

/* Learn how long to spin from how long waits last (as the sm plugin
 * does): found while spinning grows the window a little, found soon
 * after falling asleep grows it to cover that wait, anything else
 * shrinks it. */
static void
na_tcp_spin_adapt(struct na_tcp_class *cls, bool found, bool while_spinning,
                  uint64_t waited_ns)
{
    uint64_t s = atomic_load(&cls->spin_ns);

    if (found && while_spinning)
        s += s / 4;
    else if (found && waited_ns <= NA_TCP_SPIN_MAX_NS)
        s = waited_ns + waited_ns / 4 > s ? waited_ns + waited_ns / 4 : s;
    else
        s /= 2;
    if (s > NA_TCP_SPIN_MAX_NS)
        s = NA_TCP_SPIN_MAX_NS;
    if (s < NA_TCP_SPIN_MIN_NS)
        s = NA_TCP_SPIN_MIN_NS;
    atomic_store(&cls->spin_ns, (unsigned int) s);
}

na_return_t
na_tcp_poll_wait(na_class_t *na_class, na_context_t *context,
                 unsigned int timeout_ms, unsigned int *count)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = na_tcp_pctx(context);
    unsigned int before = atomic_load(&pc->completed);
    unsigned int cls_before = atomic_load(&cls->completed);
    uint64_t start = na_plugin_clock_monotonic_ns();
    uint64_t deadline = start + (uint64_t) timeout_ms * 1000000u;
    uint64_t spin_end =
        cls->no_block ? deadline : start + atomic_load(&cls->spin_ns);
    uint64_t now = start;
    unsigned int n;

    if (spin_end > deadline)
        spin_end = deadline;
    for (;;) {
        na_tcp_progress(cls, false);
        if (atomic_load(&pc->completed) != before ||
            na_tcp_has_completions(context)) {
            if (!cls->no_block)
                na_tcp_spin_adapt(cls, true, true, 0);
            goto done;
        }
        now = na_plugin_clock_monotonic_ns();
        if (now >= spin_end)
            break;
    }
    while (now < deadline) {
        na_tcp_sleep(cls, context,
                     (unsigned int) ((deadline - now + 999999u) / 1000000u));
        if (atomic_load(&pc->completed) != before ||
            na_tcp_has_completions(context) ||
            atomic_load(&cls->completed) != cls_before)
            break;
        now = na_plugin_clock_monotonic_ns();
    }
    na_tcp_spin_adapt(cls,
                      atomic_load(&pc->completed) != before ||
                          na_tcp_has_completions(context),
                      false, na_plugin_clock_monotonic_ns() - start);
done:
    n = atomic_load(&pc->completed) - before;
    if (count != NULL)
        *count = n;
    return n != 0 || na_tcp_has_completions(context) ? NA_SUCCESS : NA_TIMEOUT;
}

/* Whether `op`, waiting on a connection, can still end with nothing
 * moved: its frame not yet begun, or (a get) its answer not yet begun. */
static bool
na_tcp_cancelable(const struct na_op_id *op)
{
    if (op->tx.queued && op->tx.done != 0)
        return false;
    if (op->queue == NA_TCP_Q_RMA && op->u.rma.started &&
        (op->type == NA_CB_PUT || op->conn->rx_op == op))
        return false;
    return true;
}

na_return_t
na_tcp_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc;
    bool done = true;

    (void) context;
    pthread_mutex_lock(&cls->lock);
    /* Completion happens under the lock: posted here means ours still. */
    if (na_op_state(&op->base) == NA_OP_POSTED) {
        pc = na_tcp_pctx(op->context);
        switch (op->queue) {
        case NA_TCP_Q_UNEXP:
            TAILQ_REMOVE(&pc->unexp_ops, op, entry);
            break;
        case NA_TCP_Q_EXP:
            TAILQ_REMOVE(&pc->exp_ops, op, entry);
            break;
        case NA_TCP_Q_TX:
        case NA_TCP_Q_RMA:
            if (!na_tcp_cancelable(op)) {
                done = false;
                break;
            }
            if (op->tx.queued) {
                STAILQ_REMOVE(&op->conn->txq, &op->tx, na_tcp_tx, entry);
                op->tx.queued = false;
            }
            if (op->queue == NA_TCP_Q_RMA)
                TAILQ_REMOVE(&op->conn->rma, op, entry);
            op->conn = NULL;
            break;
        default:
            done = false; /* being posted: it completes with its result */
            break;
        }
        if (done)
            na_tcp_op_complete(op, NA_CANCELED);
    }
    pthread_mutex_unlock(&cls->lock);
    if (done)
        na_tcp_wake_local(cls);
    return NA_SUCCESS;
}
