/*
 * Progress of the ofi plugin: posting with retry, reading the completion
 * queue, waiting without spinning on an idle context, cancel, and the
 * mapping from libfabric errors to NA codes.
 *
 * The providers we use (tcp;ofi_rxm, and sockets for its CQ) make data
 * progress only when the CQ is read, so NA_Poll drives everything. The
 * core owns an operation's life (idle, posted, completed: struct
 * na_op_base); while the core has it posted, op->status says where it is:
 * QUEUED on one of our queues, or POSTED with libfabric, and DONE once it
 * completed. Exactly one path completes it: the CQ entry for a posted op,
 * or whoever removes it from our queue under that queue's lock. An op
 * starts (na_op_start) before it reaches libfabric or a queue; a cancel
 * that came after that but before libfabric had it is passed on with
 * fi_cancel by whoever handed it over (na_ofi_op_handed).
 */
#include "na_ofi_internal.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

/* CQ entries read per fi_cq_read() call, and per poll at most. */
#define NA_OFI_CQ_BATCH 16
#define NA_OFI_CQ_MAX_PER_POLL 256

/* Bounds of the adaptive spin before sleeping, in nanoseconds. */
#define NA_OFI_SPIN_MIN_NS 2000u
#define NA_OFI_SPIN_MAX_NS 50000u

/* libfabric's own codes (256 and up), then the errnos every plugin maps
 * alike. */
na_return_t
na_ofi_error_to_na(int fi_err)
{
    switch (fi_err) {
    case FI_ETRUNC:
    case FI_ETOOSMALL:
        return NA_MSGSIZE;
    default:
        return na_plugin_errno_to_na(fi_err);
    }
}

/*
 * Errors of an operation that names a peer. Providers that connect on
 * demand report a peer they cannot reach as "no such entry" (sockets:
 * FI_ENOENT or FI_ENODATA) or as an address not available; for an op with
 * a destination that means the host is unreachable.
 */
static na_return_t
na_ofi_peer_error_to_na(const struct na_op_id *op, int fi_err)
{
    if (op->addr != NULL && (fi_err == FI_ENOENT || fi_err == FI_ENODATA ||
                             fi_err == FI_EADDRNOTAVAIL))
        return NA_HOSTUNREACH;
    /* The provider flushes the ops of a connection that broke with
     * FI_ECANCELED: nobody cancelled them, the peer went away. */
    if (op->addr != NULL && fi_err == FI_ECANCELED &&
        !na_op_cancel_requested(&op->base))
        return NA_HOSTUNREACH;
    return na_ofi_error_to_na(fi_err);
}

/* Wake threads asleep in poll_wait after queueing a completion outside
 * the progress loop (an injected send, a cancel, a backlog match). */
void
na_ofi_wake(struct na_ofi_class *cls)
{
    uint64_t one = 1;

    if (atomic_load(&cls->sleepers) == 0)
        return;
    if (write(cls->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "eventfd write failed");
}

static struct na_ofi_context *
na_ofi_pctx(na_context_t *context)
{
    return context->plugin_context;
}

/* The core has moved the op from idle to posted. */
void
na_ofi_op_init(struct na_op_id *op, const struct na_op_desc *desc,
               struct na_addr *addr)
{
    atomic_store(&op->status, NA_OFI_OP_QUEUED);
    op->context = desc->context;
    op->type = desc->type;
    op->injected = false;
    op->addr = addr;
    if (addr != NULL)
        na_ofi_addr_ref(addr);
    atomic_fetch_add(&na_ofi_pctx(desc->context)->pending, 1);
}

/* Undo na_ofi_op_init() for a post that failed: no completion comes. */
void
na_ofi_op_abort(struct na_op_id *op)
{
    struct na_ofi_context *pc = na_ofi_pctx(op->context);

    if (op->addr != NULL)
        na_ofi_addr_unref(op->addr);
    op->addr = NULL;
    atomic_store(&op->status, NA_OFI_OP_DONE);
    atomic_fetch_sub(&pc->pending, 1);
}

/*
 * Hand the op to the core. The op may be triggered and reused by another
 * thread as soon as na_op_finish() returns, so it is not touched
 * afterwards; the context stays valid because it cannot be destroyed
 * while `pending` counts this op.
 */
void
na_ofi_op_complete(struct na_op_id *op, na_return_t ret)
{
    struct na_ofi_context *pc = na_ofi_pctx(op->context);

    if (op->addr != NULL)
        na_ofi_addr_unref(op->addr);
    op->addr = NULL;
    atomic_store(&op->status, NA_OFI_OP_DONE);
    na_op_finish(op, ret);
    atomic_fetch_sub(&pc->pending, 1);
}

/* After libfabric accepted `op`: a cancel that came since the op started
 * may have found it with neither us nor libfabric, so it is passed on.
 * The op may have completed meanwhile; fi_cancel then finds nothing. */
static void
na_ofi_op_handed(struct na_ofi_class *cls, struct na_op_id *op)
{
    if (na_op_cancel_requested(&op->base))
        (void) fi_cancel(&cls->ep->fid, &op->hdr.fi_ctx);
}

/* Queue a refused op at the tail; its retry clock starts on first refusal
 * (here), so a post that is accepted reads no clock. */
static void
na_ofi_retry_push(struct na_ofi_class *cls, struct na_op_id *op)
{
    uint64_t now = na_plugin_clock_monotonic_ns();

    op->retry_deadline = now + NA_OFI_RETRY_TIMEOUT_NS;
    /* A connection being set up is refused for a moment too: ask the
     * kernel only once the refusal has lasted NA_OFI_PEER_CHECK_NS, so a
     * live peer's listener rarely sees the check's stray connection. */
    op->peer_check_ns = now + NA_OFI_PEER_CHECK_NS;
    pthread_mutex_lock(&cls->retry_lock);
    atomic_store(&op->status, NA_OFI_OP_QUEUED);
    na_op_list_append(&cls->retry_ops, op);
    atomic_fetch_add(&cls->retry_count, 1);
    pthread_mutex_unlock(&cls->retry_lock);
}

/* Whether an op to the same peer already waits: then a new one must wait
 * behind it, so messages to one peer keep their order. */
static bool
na_ofi_retry_has_peer(struct na_ofi_class *cls, const struct na_addr *addr)
{
    struct na_op_id *q;
    bool found = false;

    if (atomic_load(&cls->retry_count) == 0)
        return false;
    pthread_mutex_lock(&cls->retry_lock);
    for (q = na_op_list_first(&cls->retry_ops); q != NULL && !found;
         q = na_op_list_next(q))
        found = q->addr == addr;
    pthread_mutex_unlock(&cls->retry_lock);
    return found;
}

/* libfabric 1.17's shm provider answers -FI_ENOMEM when its queue of
 * commands to a peer is full: that is FI_EAGAIN (retried), not a failure. */
static inline int
na_ofi_shm_rc(const struct na_ofi_class *cls, int rc)
{
    return cls->shm && rc == -FI_ENOMEM ? -FI_EAGAIN : rc;
}

/*
 * Post a started op. FI_EAGAIN (the provider is out of credits or still
 * connecting) does not reach the caller: the op waits on the retry queue
 * and poll posts it again, for up to NA_OFI_RETRY_TIMEOUT_NS.
 */
na_return_t
na_ofi_op_submit(struct na_op_id *op, na_ofi_post_fn post)
{
    struct na_ofi_class *cls = na_op_plugin_class(op);
    na_return_t ret;
    int rc;

    if (cls->shm && na_ofi_shm_closed_here(op->addr)) {
        na_ofi_op_abort(op); /* na_ofi_shm_set_live: the provider would crash */
        return NA_HOSTUNREACH;
    }
    op->post = post;
    if (!na_op_start(op)) {
        na_ofi_op_complete(op, NA_CANCELED); /* canceled during the post */
        na_ofi_wake(cls);
        return NA_SUCCESS;
    }
    if (na_ofi_retry_has_peer(cls, op->addr)) {
        na_ofi_retry_push(cls, op);
        return NA_SUCCESS;
    }
    atomic_store(&op->status, NA_OFI_OP_POSTED);
    rc = na_ofi_shm_rc(cls, post(op));
    if (rc == 0) {
        if (op->injected) {
            na_ofi_op_complete(op, NA_SUCCESS);
            na_ofi_wake(cls);
        } else {
            na_ofi_op_handed(cls, op);
        }
        return NA_SUCCESS;
    }
    if (rc == -FI_EAGAIN) {
        na_ofi_retry_push(cls, op);
        return NA_SUCCESS;
    }
    ret = na_ofi_peer_error_to_na(op, -rc);
    na_ofi_op_abort(op);
    return ret;
}

#define NA_OFI_RETRY_BLOCKED_MAX 8

/*
 * Repost ops refused with FI_EAGAIN, oldest first. A refusal blocks only
 * the later ops to the same peer in this pass, so one dead peer does not
 * hold up the others; an op refused past its deadline fails.
 */
static void
na_ofi_retry_progress(struct na_ofi_class *cls)
{
    const struct na_addr *blocked[NA_OFI_RETRY_BLOCKED_MAX];
    size_t nblocked = 0;
    struct na_op_id *op, *next;
    struct na_op_list failed;
    uint64_t now = na_plugin_clock_monotonic_ns();

    na_op_list_init(&failed);
    pthread_mutex_lock(&cls->retry_lock);
    for (op = na_op_list_first(&cls->retry_ops); op != NULL; op = next) {
        bool skip = false;
        int rc;

        next = na_op_list_next(op);
        for (size_t i = 0; i < nblocked && !skip; i++)
            skip = blocked[i] == op->addr;
        if (skip)
            continue;
        /* Off the queue before posting: once posted, the op may complete
         * on another thread at any moment. Posting under the lock keeps
         * cancel from racing the repost. */
        na_op_list_remove(op);
        atomic_fetch_sub(&cls->retry_count, 1);
        atomic_store(&op->status, NA_OFI_OP_POSTED);
        rc = na_ofi_shm_rc(cls, op->post(op));
        if (rc == 0 && !op->injected) {
            na_ofi_op_handed(cls, op); /* with the provider now */
            continue;
        }
        if (rc == -FI_EAGAIN && op->addr != NULL && now >= op->peer_check_ns) {
            op->peer_check_ns = now + NA_OFI_PEER_CHECK_NS;
            if (na_ofi_addr_refused(op->addr))
                rc = -FI_ECONNREFUSED; /* fails below, at once */
        }
        if (rc == -FI_EAGAIN && now < op->retry_deadline &&
            !na_op_cancel_requested(&op->base)) {
            atomic_store(&op->status, NA_OFI_OP_QUEUED);
            atomic_fetch_add(&cls->retry_count, 1);
            if (next != NULL)
                na_op_list_insert_before(&cls->retry_ops, next, op);
            else
                na_op_list_append(&cls->retry_ops, op);
            if (nblocked == NA_OFI_RETRY_BLOCKED_MAX)
                break;
            blocked[nblocked++] = op->addr;
            continue;
        }
        if (rc == 0)
            op->base.info.ret = NA_SUCCESS;
        else if (rc != -FI_EAGAIN)
            op->base.info.ret = na_ofi_peer_error_to_na(op, -rc);
        else if (na_op_cancel_requested(&op->base))
            op->base.info.ret = NA_CANCELED;
        else
            op->base.info.ret = NA_HOSTUNREACH;
        na_op_list_append(&failed, op);
    }
    pthread_mutex_unlock(&cls->retry_lock);

    /* Complete outside the lock: the core's queue has its own. */
    while ((op = na_op_list_first(&failed)) != NULL) {
        na_op_list_remove(op);
        na_ofi_op_complete(op, op->base.info.ret);
    }
}

static bool
na_ofi_retry_cancel(struct na_ofi_class *cls, struct na_op_id *op)
{
    bool found;

    if (op->type == NA_CB_RECV_UNEXPECTED)
        return false; /* never on the retry queue */
    pthread_mutex_lock(&cls->retry_lock);
    found = na_op_list_active(op);
    if (found) {
        na_op_list_remove(op);
        atomic_fetch_sub(&cls->retry_count, 1);
    }
    pthread_mutex_unlock(&cls->retry_lock);
    if (found)
        na_ofi_op_complete(op, NA_CANCELED);
    return found;
}

/* Complete an op from a CQ entry (len: bytes received, for expected
 * receives); returns the context its completion went to. */
static na_context_t *
na_ofi_op_finish(struct na_op_id *op, na_return_t ret, size_t len)
{
    na_context_t *context = op->context;

    if (op->type == NA_CB_RECV_EXPECTED)
        op->base.info.info.recv_expected.actual_buf_size = len;
    na_ofi_op_complete(op, ret);
    return context;
}

/* A successful CQ entry; returns the context its completion went to. */
static na_context_t *
na_ofi_dispatch(const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
    struct na_ofi_ctx_hdr *hdr = e->op_context;

    if (hdr == NULL)
        return NULL;
    if (hdr->kind == NA_OFI_CTX_RX_BUF)
        return na_ofi_rx_buf_complete((struct na_ofi_rx_buf *) hdr, e, src);
    return na_ofi_op_finish(na_ofi_op_of(hdr), NA_SUCCESS, e->len);
}

/* An error CQ entry: the op completes with the mapped error. */
static na_context_t *
na_ofi_dispatch_error(const struct fi_cq_err_entry *err)
{
    struct na_ofi_ctx_hdr *hdr = err->op_context;
    struct na_op_id *op;

    if (hdr == NULL)
        return NULL;
    if (hdr->kind == NA_OFI_CTX_RX_BUF) {
        na_ofi_rx_buf_error((struct na_ofi_rx_buf *) hdr, err);
        return NULL;
    }
    op = na_ofi_op_of(hdr);
    /* libfabric 1.17's shm provider reports err negated (-FI_ETRUNC). */
    return na_ofi_op_finish(
        op, na_ofi_peer_error_to_na(op, err->err < 0 ? -err->err : err->err),
        0);
}

/*
 * Read the CQ until it is empty (or a bounded number of entries) and
 * count the completions queued on `context`. Completions for other
 * contexts sharing the endpoint are queued too, and their sleepers woken.
 */
static unsigned int
na_ofi_progress(struct na_ofi_class *cls, na_context_t *context)
{
    struct fi_cq_tagged_entry entries[NA_OFI_CQ_BATCH];
    fi_addr_t srcs[NA_OFI_CQ_BATCH];
    unsigned int mine = 0, others = 0, total = 0;

    if (atomic_load(&cls->retry_count) != 0)
        na_ofi_retry_progress(cls);
    na_ofi_rx_bufs_repost(cls);
    while (total < NA_OFI_CQ_MAX_PER_POLL) {
        ssize_t n =
            cls->fi_source
                ? fi_cq_readfrom(cls->cq, entries, NA_OFI_CQ_BATCH, srcs)
                : fi_cq_read(cls->cq, entries, NA_OFI_CQ_BATCH);
        na_context_t *done;

        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(cls->cq, &err, 0) != 1)
                break;
            done = na_ofi_dispatch_error(&err);
            if (done != NULL)
                *(done == context ? &mine : &others) += 1;
            total++;
            continue;
        }
        if (n < 0) {
            qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "fi_cq_read: %s",
                   fi_strerror((int) -n));
            break;
        }
        for (ssize_t i = 0; i < n; i++) {
            done = na_ofi_dispatch(&entries[i],
                                   cls->fi_source ? srcs[i] : FI_ADDR_NOTAVAIL);
            if (done != NULL)
                *(done == context ? &mine : &others) += 1;
        }
        total += (unsigned int) n;
        if (n < NA_OFI_CQ_BATCH)
            break;
    }
    if (others != 0)
        na_ofi_wake(cls);
    return mine;
}

static bool na_ofi_context_has_completions(na_context_t *context);
static void na_ofi_drain_wake_fd(struct na_ofi_class *cls);

/*
 * An epoll set of the CQ's descriptor and the wake eventfd, so a program
 * that waits on it also wakes for completions queued outside the CQ (an
 * injected send, a cancel). From the first call on the class counts as
 * one more sleeper for good: na_ofi_wake() writes the eventfd every
 * time. -1 where the provider has no descriptor (NA_OFI_WAIT_SREAD,
 * NA_OFI_WAIT_NONE). Blocking on it is safe only after
 * na_ofi_poll_try_wait() said so.
 */
static int
na_ofi_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    int fd;

    (void) context;
    if (cls->wait_mode != NA_OFI_WAIT_FD)
        return -1;
    pthread_mutex_lock(&cls->retry_lock);
    if (cls->poll_epfd < 0) {
        struct epoll_event cq = {.events = EPOLLIN, .data.fd = cls->cq_fd};
        struct epoll_event wake = {.events = EPOLLIN, .data.fd = cls->wake_fd};
        int epfd = epoll_create1(EPOLL_CLOEXEC);

        if (epfd >= 0 &&
            (epoll_ctl(epfd, EPOLL_CTL_ADD, cls->cq_fd, &cq) != 0 ||
             epoll_ctl(epfd, EPOLL_CTL_ADD, cls->wake_fd, &wake) != 0)) {
            close(epfd);
            epfd = -1;
        }
        if (epfd >= 0) {
            cls->poll_epfd = epfd;
            atomic_fetch_add(&cls->sleepers, 1);
        }
    }
    fd = cls->poll_epfd;
    pthread_mutex_unlock(&cls->retry_lock);
    return fd;
}

/* Safe to block on the descriptor: nothing waits on our retry queue (its
 * posts are retried by polls, not announced by the CQ), the wake eventfd
 * is emptied before the last look at the context's queue, and
 * fi_trywait() agrees (it refuses while CQ entries are pending, and
 * re-arms the CQ's descriptor otherwise). */
static bool
na_ofi_poll_try_wait(na_class_t *na_class, na_context_t *context)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    struct fid *fids[1] = {&cls->cq->fid};
    int rc;

    if (cls->wait_mode != NA_OFI_WAIT_FD || atomic_load(&cls->retry_count) != 0)
        return false;
    na_ofi_drain_wake_fd(cls);
    if (na_ofi_context_has_completions(context))
        return false;
    rc = fi_trywait(cls->fabric, fids, 1);
    return rc == FI_SUCCESS || rc == -FI_ENOSYS;
}

static na_return_t
na_ofi_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    unsigned int n = na_ofi_progress(na_ofi_class(na_class), context);

    if (count != NULL)
        *count = n;
    return NA_SUCCESS;
}

static bool
na_ofi_context_has_completions(na_context_t *context)
{
    return NA_Context_get_completion_count(context) != 0;
}

static void
na_ofi_drain_wake_fd(struct na_ofi_class *cls)
{
    uint64_t v;

    while (read(cls->wake_fd, &v, sizeof(v)) > 0)
        ;
}

/*
 * Sleep until the CQ or the wake eventfd is readable, or timeout_ms.
 * fi_trywait() refuses (FI_EAGAIN) when completions are already pending,
 * in which case we return at once and let the caller poll.
 */
static void
na_ofi_sleep(struct na_ofi_class *cls, na_context_t *context,
             unsigned int timeout_ms, uint64_t nap_ns)
{
    struct fid *fids[1] = {&cls->cq->fid};

    if (cls->wait_mode == NA_OFI_WAIT_FD) {
        struct pollfd pfd[2] = {{.fd = cls->cq_fd, .events = POLLIN},
                                {.fd = cls->wake_fd, .events = POLLIN}};
        int rc = fi_trywait(cls->fabric, fids, 1);
        if (rc == FI_SUCCESS || rc == -FI_ENOSYS)
            (void) poll(pfd, 2, (int) timeout_ms);
        na_ofi_drain_wake_fd(cls);
    } else if (cls->wait_mode == NA_OFI_WAIT_SREAD) {
        /* The provider blocks for us; what it returns is dispatched so no
         * entry is lost. A waiting sender is not woken early here. */
        struct fi_cq_tagged_entry e;
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        ssize_t n =
            cls->fi_source
                ? fi_cq_sreadfrom(cls->cq, &e, 1, &src, NULL, (int) timeout_ms)
                : fi_cq_sread(cls->cq, &e, 1, NULL, (int) timeout_ms);
        if (n == 1)
            (void) na_ofi_dispatch(&e, src);
        (void) context;
    } else if (cls->shm && !cls->no_block) {
        /* ofi+shm has no usable wait object (na_ofi_cq_open): nap, so an
         * idle class costs a fraction of a CPU rather than all of it; a
         * local completion (the wake eventfd) ends the nap early. */
        struct pollfd pfd = {.fd = cls->wake_fd, .events = POLLIN};
        struct timespec nap = {.tv_sec = 0, .tv_nsec = (long) nap_ns};
        if ((uint64_t) timeout_ms * 1000000u < nap_ns)
            nap.tv_nsec = (long) timeout_ms * 1000000L;
        (void) ppoll(&pfd, 1, &nap, NULL);
        na_ofi_drain_wake_fd(cls);
    } else {
        sched_yield();
    }
}

/*
 * Learn how long to spin from how long waits really last. An event found
 * while spinning grows the window a little. An event that came soon after
 * we went to sleep means the window was too short: it grows to cover that
 * wait, since waking from sleep costs more than the spin would have. A
 * long or empty wait means the context is idle: the window shrinks.
 * (Growing only on events found while spinning could never learn a round
 * trip longer than the current window, and sticks at the minimum.)
 */
static void
na_ofi_spin_adapt(struct na_ofi_class *cls, bool found, bool while_spinning,
                  uint64_t waited_ns)
{
    uint64_t s = atomic_load(&cls->spin_ns);

    if (found && while_spinning)
        s += s / 4;
    else if (found && waited_ns <= NA_OFI_SPIN_MAX_NS)
        s = waited_ns + waited_ns / 4 > s ? waited_ns + waited_ns / 4 : s;
    else
        s /= 2;
    if (s > NA_OFI_SPIN_MAX_NS)
        s = NA_OFI_SPIN_MAX_NS;
    if (s < NA_OFI_SPIN_MIN_NS)
        s = NA_OFI_SPIN_MIN_NS;
    atomic_store(&cls->spin_ns, (unsigned int) s);
}

static na_return_t
na_ofi_poll_wait(na_class_t *na_class, na_context_t *context,
                 unsigned int timeout_ms, unsigned int *count)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    uint64_t start = na_plugin_clock_monotonic_ns();
    uint64_t deadline = start + (uint64_t) timeout_ms * 1000000u;
    uint64_t spin_end = start + atomic_load(&cls->spin_ns);
    unsigned int n = 0;
    uint64_t now;

    if (cls->no_block || spin_end > deadline)
        spin_end = deadline;

    /* Spin first: a wake-up from sleep costs more than most round trips. */
    for (;;) {
        n = na_ofi_progress(cls, context);
        if (n != 0 || na_ofi_context_has_completions(context)) {
            if (!cls->no_block)
                na_ofi_spin_adapt(cls, true, true, 0);
            goto done;
        }
        now = na_plugin_clock_monotonic_ns();
        if (now >= spin_end)
            break;
    }
    if (now >= deadline)
        goto done;

    /* A wake-up that brought nothing for this context (a receive buffer
     * released, another context's completion, a stale wake) sleeps again
     * until the deadline: an idle wait returned early makes its caller
     * spin. On ofi+shm each empty nap doubles the next one, from
     * NA_OFI_SHM_NAP_NS up to NA_OFI_SHM_NAP_MAX_NS: an idle class wakes
     * a thousand times a second, not ten thousand, and a message to a
     * class idle for a while waits at most that much longer. */
    for (uint64_t nap_ns = NA_OFI_SHM_NAP_NS;;
         nap_ns = nap_ns * 2 > NA_OFI_SHM_NAP_MAX_NS ? NA_OFI_SHM_NAP_MAX_NS
                                                     : nap_ns * 2) {
        /* Publish that we sleep before the last look at the queue, so a
         * thread that queues a completion after that look wakes us. */
        atomic_fetch_add(&cls->sleepers, 1);
        if (!na_ofi_context_has_completions(context)) {
            uint64_t left_ms = (deadline - now + 999999u) / 1000000u;
            na_ofi_sleep(cls, context, (unsigned int) left_ms, nap_ns);
        }
        atomic_fetch_sub(&cls->sleepers, 1);
        n = na_ofi_progress(cls, context);
        now = na_plugin_clock_monotonic_ns();
        if (n != 0 || na_ofi_context_has_completions(context) ||
            now >= deadline)
            break;
    }
    na_ofi_spin_adapt(cls, n != 0 || na_ofi_context_has_completions(context),
                      false, now - start);

done:
    if (count != NULL)
        *count = n;
    return n != 0 || na_ofi_context_has_completions(context) ? NA_SUCCESS
                                                             : NA_TIMEOUT;
}

/*
 * The core calls this once per post, for a started op. One on our queues
 * is finished here; one with libfabric is withdrawn there and completes
 * once, with FI_ECANCELED or its real result. One between the two is
 * passed on by whoever hands it to libfabric (na_ofi_op_handed).
 */
static na_return_t
na_ofi_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);

    (void) context;
    if (na_ofi_unexp_cancel(cls, op) || na_ofi_retry_cancel(cls, op))
        na_ofi_wake(cls);
    else if (atomic_load(&op->status) == NA_OFI_OP_POSTED)
        (void) fi_cancel(&cls->ep->fid, &op->hdr.fi_ctx);
    return NA_SUCCESS;
}

static na_return_t
na_ofi_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                      void *plugin_context)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    struct na_ofi_context *pc = plugin_context;

    pc->cls = cls;
    pc->context = context;
    pc->id = id;
    atomic_init(&pc->pending, 0);
    na_op_list_init(&pc->unexp_ops);
    STAILQ_INIT(&pc->backlog);
    pthread_mutex_lock(&cls->rx_lock);
    TAILQ_INSERT_TAIL(&cls->contexts, pc, entry);
    pthread_mutex_unlock(&cls->rx_lock);
    return NA_SUCCESS;
}

/* Messages still in the backlog were never asked for: they are dropped. */
static na_return_t
na_ofi_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    struct na_ofi_context *pc = plugin_context;

    if (atomic_load(&pc->pending) != 0)
        return NA_BUSY;
    pthread_mutex_lock(&cls->rx_lock);
    TAILQ_REMOVE(&cls->contexts, pc, entry);
    pthread_mutex_unlock(&cls->rx_lock);
    na_ofi_backlog_destroy(pc);
    return NA_SUCCESS;
}

const struct na_context_ops na_ofi_context_ops = {
    .context_size = sizeof(struct na_ofi_context),
    .create = na_ofi_context_create,
    .destroy = na_ofi_context_destroy,
    .poll_get_fd = na_ofi_poll_get_fd,
    .poll_try_wait = na_ofi_poll_try_wait,
    .poll = na_ofi_poll,
    .poll_wait = na_ofi_poll_wait,
    .cancel = na_ofi_cancel,
};
