/*
 * Private to the verbs plugin: its objects and the functions its source
 * files share.
 *
 * Where things live:
 *   na_verbs.c          the ops table, class and context lifecycle, limits
 *   na_verbs_addr.c     addresses (the per-class peer table)
 *   na_verbs_op.c       operation ids, completion and cancel
 *   na_verbs_conn.c     librdmacm: bind/listen, connect, accept, teardown
 *   na_verbs_msg.c      messages, receive buffers, credits, tag matching
 *   na_verbs_rma.c      memory handles, put and get
 *   na_verbs_progress.c poll, poll_wait, the completion queue and wake-ups
 *   na_verbs_wire.c     pure encoders/decoders (no device needed)
 *
 * Locking: one mutex per class (na_verbs_class.lock) guards every mutable
 * field of the class and of the objects it owns (addresses, connections,
 * operations in flight, receive lists). It is held only for short,
 * non-blocking work: no call made under it sleeps (the CM event channel and
 * the completion channel are non-blocking). poll_wait drops it to sleep.
 * Lock order with the core: the class lock comes before a context's core
 * lock, which na_op_finish() takes while the class lock is held; the core
 * never holds a lock while it calls into the plugin, and triggering an op
 * takes no plugin lock at all.
 */
#ifndef NA_VERBS_INTERNAL_H
#define NA_VERBS_INTERNAL_H

#include "na/na_plugin.h"
#include "na/na_plugin_util.h"
#include "na_verbs_wire.h"

#include <infiniband/verbs.h>
#include <stddef.h>
#include <rdma/rdma_cma.h>
#include <sys/queue.h>

#define NA_VERBS_CLASS_NAME "verbs"

/* Default payload limits; na_init_info overrides them. */
#define NA_VERBS_DEFAULT_MSG_SIZE 4096
/* Upper bound for a configured payload limit: every connection pre-posts
 * NA_VERBS_RECV_CREDITS buffers of this size, so it costs memory per peer. */
#define NA_VERBS_MAX_MSG_SIZE (1024 * 1024)

/* Receive buffers a connection grants its peer for data messages. One more
 * buffer is posted for credit-only messages (see na_verbs_msg.c). */
#define NA_VERBS_RECV_CREDITS 32
/* Send queue depth per connection: data sends are bounded by credits,
 * RMA by this depth; one slot stays free for a credit-only message. */
#define NA_VERBS_SQ_DEPTH 64
/* Completion queue size cap; it bounds the connections a class can hold. */
#define NA_VERBS_CQ_SIZE 8192

/* librdmacm timeouts (address and route resolution). */
#define NA_VERBS_RESOLVE_TIMEOUT_MS 2000
/* Local ACK timeout exponent: 4.096 us * 2^16 = 268 ms per try; with 7
 * retries a dead peer turns into an error completion within about 2 s. */
#define NA_VERBS_ACK_TIMEOUT 16
#define NA_VERBS_RETRY_COUNT 7
/* The credits make receiver-not-ready impossible in a correct peer, so a
 * few retries are enough; infinite retry (7) could hang on a faulty one. */
#define NA_VERBS_RNR_RETRY 3

struct na_verbs_class;
struct na_verbs_conn;

/* What a work request's wr_id points to, to dispatch its completion. */
enum na_verbs_wr_kind {
    NA_VERBS_WR_RECV, /* a pre-posted receive buffer of a connection */
    NA_VERBS_WR_SEND, /* a message send of an operation */
    NA_VERBS_WR_CTRL, /* a credit-only message of a connection */
    NA_VERBS_WR_RMA,  /* an RDMA read or write of an operation */
};

struct na_verbs_wr {
    enum na_verbs_wr_kind kind;
    struct na_verbs_conn *conn;
    uint32_t slot;       /* buffer slot for RECV and SEND */
    struct na_op_id *op; /* SEND and RMA */
};

/*
 * An address. Each class keeps one object per peer identity (the IPv4
 * address and port the peer's class is bound to) in its peer table, so
 * matching by source is a pointer comparison. Reference counted: users,
 * operations and connections each hold a reference.
 */
struct na_addr {
    struct na_verbs_class *cls;
    uint32_t ip;   /* host byte order */
    uint16_t port; /* host byte order, never 0 */
    bool self;
    unsigned int refcount;
    struct na_verbs_conn *conn; /* the connection sends use, or NULL */
    LIST_ENTRY(na_addr) entry;  /* cls->peers */
};

/* Where an op is, under the class lock. Its life (idle, posted, completed)
 * is the core's (struct na_op_base); this says whether it is still ours to
 * complete and whether a cancel can take it back at once. */
enum na_verbs_op_state {
    NA_VERBS_OP_IDLE,      /* never posted, or the post was refused     */
    NA_VERBS_OP_QUEUED,    /* in a software queue, cancellable at once  */
    NA_VERBS_OP_POSTED,    /* a work request is in flight               */
    NA_VERBS_OP_COMPLETED, /* handed to the core                        */
};

/* An operation id: the core's base (state and completion entry, so
 * completing never allocates) first, then what verbs needs. */
struct na_op_id {
    struct na_op_base base; /* must stay first */
    na_context_t *context;
    na_cb_type_t type;
    enum na_verbs_op_state state;
    /* Messages. */
    void *buf;
    size_t buf_size;
    na_tag_t tag;
    uint8_t peer_ctx_id;  /* dest_id of a send, source_id of a recv */
    struct na_addr *addr; /* destination or expected source; referenced */
    /* RMA. */
    uint64_t local_addr;
    uint32_t lkey;
    uint64_t remote_addr;
    uint32_t rkey;
    size_t length;
    struct na_verbs_wr wr;
    /* A QUEUED op waits on one na_op_list (the base's link): a
     * context's posted receives or a connection's pending sends and RMA. */
};

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* A memory handle: local (with its registration) or a peer's, decoded. */
struct na_mem_handle {
    LIST_ENTRY(na_mem_handle) entry; /* cls->mem_regs while registered */
    bool remote;
    unsigned long flags; /* NA_MEM_* */
    void *buf;           /* local */
    size_t len;
    struct ibv_mr *mr;             /* local, once registered */
    struct na_verbs_mem_desc desc; /* remote */
};

/* A message that arrived before a matching receive was posted. */
struct na_verbs_msg {
    struct na_addr *source; /* referenced */
    uint8_t src_ctx;        /* sender's context id */
    na_tag_t tag;
    size_t size;
    TAILQ_ENTRY(na_verbs_msg) entry;
    uint8_t data[];
};
TAILQ_HEAD(na_verbs_msg_list, na_verbs_msg);

enum na_verbs_conn_state {
    NA_VERBS_CONN_RESOLVING,  /* active: resolving address and route */
    NA_VERBS_CONN_CONNECTING, /* active: request sent */
    NA_VERBS_CONN_ACCEPTING,  /* passive: accepted, not yet established */
    NA_VERBS_CONN_CONNECTED,
    NA_VERBS_CONN_CLOSING, /* broken: draining work requests */
};

/*
 * A reliable-connected queue pair to one peer, with its buffers. One
 * registered region holds recv_count receive slots followed by send_count
 * send slots and one control slot; each slot has room for a header and the
 * class's largest payload.
 */
struct na_verbs_conn {
    struct na_verbs_class *cls;
    struct rdma_cm_id *id;
    struct na_addr *peer; /* referenced */
    enum na_verbs_conn_state state;
    bool active;      /* we sent the connection request */
    bool established; /* reached CONNECTED once */
    bool qp_created;
    bool zombie;            /* queue pair gone, receive buffers never
                               flushed: kept only as wr_id targets */
    uint64_t closing_since; /* when it entered CLOSING */

    uint8_t *region;
    size_t slot_size;
    struct ibv_mr *mr;
    struct na_verbs_wr *recv_wr; /* NA_VERBS_RECV_CREDITS + 1 */
    struct na_verbs_wr ctrl_wr;
    uint32_t *free_send; /* stack of free send slot indices */
    uint32_t free_send_count;

    /* Flow control (na_verbs_msg.c explains it). */
    uint32_t send_credits;    /* data messages we may still send */
    uint32_t credits_granted; /* what the peer granted at connect time:
                                 send_credits never exceeds it */
    uint32_t unreturned;      /* re-posted buffers the peer does not
                                 know about yet */
    uint32_t ctrl_sent;       /* credit-only messages sent */
    uint32_t ctrl_acked;      /* ... of which the peer re-posted */
    uint32_t ctrl_received;   /* credit-only messages we re-posted */
    bool ctrl_inflight;
    uint32_t peer_max_payload;

    /* Work requests in flight; the connection is destroyed only when both
     * are zero, so no completion can point at freed memory. */
    unsigned int recv_posted;
    unsigned int sq_used;

    struct na_op_list pending;       /* sends and RMA not yet posted */
    LIST_ENTRY(na_verbs_conn) entry; /* cls->conns */
};

/*
 * Per-context plugin state. Messages are addressed to a context id (the
 * dest_id of a send), so the receive lists and the messages waiting for a
 * receive live here.
 */
struct na_verbs_context {
    na_context_t *context;
    uint8_t id;
    unsigned int pending;             /* operations posted, not yet completed */
    unsigned long completed;          /* completions queued so far (counter) */
    struct na_op_list unexpected_ops; /* posted unexpected recvs */
    struct na_op_list expected_ops;   /* posted expected recvs */
    struct na_verbs_msg_list unexpected_msgs; /* arrived, not yet claimed */
    struct na_verbs_msg_list expected_msgs;   /* arrived early */
    LIST_ENTRY(na_verbs_context) entry;       /* cls->contexts */
};

struct na_verbs_class {
    pthread_mutex_t lock;

    /* Identity: the address the class is bound to. */
    char device[NA_VERBS_DEVICE_NAME_MAX];
    uint32_t ip;
    uint16_t port;
    bool listening;

    size_t max_unexpected;
    size_t max_expected;
    size_t max_payload; /* the larger of the two */

    /* Device objects. */
    struct rdma_event_channel *cm_channel;
    struct rdma_cm_id *bind_id; /* bound (and listening if listen) */
    struct ibv_context *verbs;
    struct ibv_device_attr dev_attr;
    struct ibv_pd *pd;
    struct ibv_comp_channel *comp_channel;
    struct ibv_cq *cq;
    int cq_size;
    unsigned int max_conns;

    /* Sleeping: an epoll set over the CM channel, the completion channel
     * and an eventfd that wakes waiters when a completion is queued
     * outside their own progress call. */
    int epoll_fd;
    int wake_fd;
    unsigned int waiters;
    bool cq_armed;
    bool fd_exported;     /* poll_get_fd was called */
    unsigned int spin_ns; /* adaptive spin before sleeping */

    struct na_addr *self;
    LIST_HEAD(, na_addr) peers;
    LIST_HEAD(, na_verbs_conn) conns;
    unsigned int conn_count;

    LIST_HEAD(, na_verbs_context) contexts;
    /* Registered local handles, to check RMA a class does on itself. */
    LIST_HEAD(, na_mem_handle) mem_regs;
};

static inline struct na_verbs_class *
na_verbs_class(const na_class_t *na_class)
{
    return (struct na_verbs_class *) na_class->plugin_class;
}

#define NA_VERBS_LOG(...) qs_log(NA_VERBS_CLASS_NAME, QS_LOG_ERROR, __VA_ARGS__)

/* na_verbs_addr.c (class lock held unless noted). */
na_return_t na_verbs_addr_get(struct na_verbs_class *cls, uint32_t ip,
                              uint16_t port, struct na_addr **addr);
void na_verbs_addr_ref(struct na_addr *addr);
void na_verbs_addr_unref(struct na_addr *addr);
void na_verbs_addr_table_clear(struct na_verbs_class *cls);

/* na_verbs_op.c (class lock held). */
void na_verbs_op_start(na_op_id_t *op, const struct na_op_desc *desc);
/* Undo na_verbs_op_start() when the post fails after it. */
void na_verbs_op_abort(na_op_id_t *op);
/* The end of a post the plugin accepted (lock held): start the op in the
 * core, and carry out a cancel that came during the post. */
void na_verbs_op_started(na_op_id_t *op);
/* Put a started op on a software queue (state QUEUED). */
void na_verbs_op_enqueue(na_op_id_t *op, struct na_op_list *queue);
/* Take a QUEUED op off its queue (before posting or completing it). */
/* Complete once: no-op if the op is not in flight. */
void na_verbs_op_complete(na_op_id_t *op, na_return_t ret);
void na_verbs_op_list_fail(struct na_op_list *list, na_return_t ret);

/* na_verbs_conn.c (class lock held unless noted). */
na_return_t na_verbs_device_open(struct na_verbs_class *cls, const char *device,
                                 bool has_ip, uint32_t ip, uint16_t port,
                                 bool listen);
void na_verbs_device_close(struct na_verbs_class *cls);
na_return_t na_verbs_conn_get(struct na_verbs_class *cls, struct na_addr *peer,
                              struct na_verbs_conn **conn);
void na_verbs_conn_fail(struct na_verbs_conn *conn, na_return_t ret,
                        const char *why);
void na_verbs_conn_reap(struct na_verbs_class *cls);
void na_verbs_cm_progress(struct na_verbs_class *cls);
na_return_t na_verbs_wc_status_to_na(enum ibv_wc_status s);

/* na_verbs_msg.c (class lock held). */
na_return_t na_verbs_conn_post_recvs(struct na_verbs_conn *conn);
void na_verbs_conn_kick(struct na_verbs_conn *conn);
/* Finish a send-queue completion of conn: complete op (NULL for a control
 * message) with the work completion's status, NA_CANCELED for a failed op
 * that was being cancelled; then fail the connection on an error, or post
 * what is queued on it now that the send queue has room. */
void na_verbs_conn_wc_done(struct na_verbs_conn *conn, na_op_id_t *op,
                           const struct ibv_wc *wc);
/* Queue a started op whose addr is set on the connection to that peer,
 * opening one if needed. NA_AGAIN and NA_NOMEM abort the op and are returned
 * to the caller; any other connection error is accepted and becomes the op's
 * completion, so the post returns NA_SUCCESS. */
na_return_t na_verbs_conn_submit(struct na_verbs_class *cls, na_op_id_t *op);
void na_verbs_msg_recv_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                            const struct ibv_wc *wc);
void na_verbs_msg_send_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                            const struct ibv_wc *wc);
void na_verbs_msg_peer_lost(struct na_verbs_class *cls, struct na_addr *peer);
void na_verbs_msg_lists_clear(struct na_verbs_context *ctx);

/* na_verbs_rma.c (class lock held). */
int na_verbs_rma_post(struct na_verbs_conn *conn, na_op_id_t *op);
void na_verbs_rma_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                       const struct ibv_wc *wc);

/* na_verbs_progress.c. */
na_return_t na_verbs_progress_init(struct na_verbs_class *cls);
void na_verbs_progress_fini(struct na_verbs_class *cls);
/* Drain the completion queue once, up to a bound (class lock held). */
int na_verbs_cq_progress(struct na_verbs_class *cls);
/* Wake threads sleeping in poll_wait (class lock held). */
void na_verbs_wake(struct na_verbs_class *cls);

/* na_verbs_op.c: the cancel hook of na_verbs_context_ops. */
na_return_t na_verbs_cancel(na_class_t *na_class, na_context_t *context,
                            na_op_id_t *op_id);

/* The tables of ops na_verbs_class_ops points to, each defined in the file
 * of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_context_ops na_verbs_context_ops;
extern const struct na_addr_ops na_verbs_addr_ops;
extern const struct na_msg_ops na_verbs_msg_ops;
extern const struct na_mem_ops na_verbs_mem_ops;

#endif /* NA_VERBS_INTERNAL_H */
