/*
 * Private structures of the HG RPC layer (lib/hg) and the bulk layer
 * (lib/bulk), which share handles, contexts and the completion queue.
 */
#ifndef HG_INTERNAL_H
#define HG_INTERNAL_H

#include "mercury.h"
#include "mercury_proc.h"

#include "hg/hg_header.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/queue.h>

/* Errors are logged once where they start, through the single sink:
 * qs_log("hg", QS_LOG_ERROR, ...) (or "bulk", "proc"). */
#include "util/qs_lock.h"
#include "util/qs_log.h"

/* NA codes share HG's first NA_RETURN_MAX values, name for name; the
 * assertions below keep the two tables from drifting apart. */
#define HG_SAME_AS_NA(code)                                                    \
    _Static_assert((int) HG_##code == (int) NA_##code,                         \
                   "HG_" #code " must equal NA_" #code)
HG_SAME_AS_NA(SUCCESS);
HG_SAME_AS_NA(PERMISSION);
HG_SAME_AS_NA(NOENTRY);
HG_SAME_AS_NA(INTERRUPT);
HG_SAME_AS_NA(AGAIN);
HG_SAME_AS_NA(NOMEM);
HG_SAME_AS_NA(ACCESS);
HG_SAME_AS_NA(FAULT);
HG_SAME_AS_NA(BUSY);
HG_SAME_AS_NA(EXIST);
HG_SAME_AS_NA(NODEV);
HG_SAME_AS_NA(INVALID_ARG);
HG_SAME_AS_NA(PROTOCOL_ERROR);
HG_SAME_AS_NA(OVERFLOW);
HG_SAME_AS_NA(MSGSIZE);
HG_SAME_AS_NA(PROTONOSUPPORT);
HG_SAME_AS_NA(OPNOTSUPPORTED);
HG_SAME_AS_NA(ADDRINUSE);
HG_SAME_AS_NA(ADDRNOTAVAIL);
HG_SAME_AS_NA(HOSTUNREACH);
HG_SAME_AS_NA(TIMEOUT);
HG_SAME_AS_NA(CANCELED);
HG_SAME_AS_NA(IO_ERROR);
HG_SAME_AS_NA(HOSTFIREWALL);
_Static_assert((int) NA_RETURN_MAX == (int) HG_HOSTFIREWALL + 1,
               "every NA code must have its HG twin above");
#undef HG_SAME_AS_NA

static inline hg_return_t
hg_from_na(na_return_t ret)
{
    return (unsigned) ret < NA_RETURN_MAX ? (hg_return_t) ret : HG_NA_ERROR;
}

/* One registered RPC. */
struct hg_rpc {
    hg_id_t id;
    char *name; /* NULL when registered by id */
    hg_proc_cb_t in_proc;
    hg_proc_cb_t out_proc;
    hg_rpc_cb_t rpc_cb;
    void *data;
    void (*free_data)(void *);
    bool no_response;
    struct hg_rpc *next; /* hash chain */
};

#define HG_RPC_BUCKETS 64

struct hg_addr {
    hg_class_t *hg_class;
    na_addr_t na_addr;
    atomic_uint refcount;
    bool embedded; /* lives inside a handle; never freed on its own */
    /* HG_Addr_is_self(), asked of NA once: 0 not yet, 1 no, 2 yes. */
    atomic_uchar self_state;
};

/* Kinds of entries on an HG context's completion queue. */
enum hg_completion_type {
    HG_COMP_FORWARD,
    HG_COMP_RESPOND,
    HG_COMP_RPC, /* a request is ready for its handler */
    HG_COMP_BULK,
    HG_COMP_LOOKUP,
};

struct hg_completion {
    enum hg_completion_type type;
    void *object;
    STAILQ_ENTRY(hg_completion) entry;
};

/*
 * Something with a deadline on the NA clock (a forward or a transfer).
 * Disarming only clears `armed`, without the context lock: a disarmed timer
 * stays on the context's list until the next sweep of the list unlinks it
 * (or its handle is freed), and arming it again only updates it. `linked`,
 * `deadline_ns` and `expire` are guarded by the context lock.
 */
struct hg_timer {
    uint64_t deadline_ns;
    void (*expire)(struct hg_timer *timer);
    atomic_bool armed;
    bool linked;
    TAILQ_ENTRY(hg_timer) entry;
};

#include "hg/hg_check.h"
#include "hg/hg_liveness.h"

struct hg_class {
    na_class_t *na_class;
    bool own_na_class;
    struct hg_init_info info;
    hg_size_t in_eager_size;  /* payload bytes inside a request  */
    hg_size_t out_eager_size; /* payload bytes inside a response */
    size_t na_unexpected_size;
    size_t na_expected_size;
    na_tag_t tag_ack_bit; /* tags with this bit acknowledge overflow */
    atomic_uint tag_next;
    hg_addr_t self_addr;

    pthread_rwlock_t rpc_lock; /* guards rpc_table */
    struct hg_rpc *rpc_table[HG_RPC_BUCKETS];

    void *data;
    void (*free_data)(void *);

    /* HG_Class_set_handle_create_callback(); set before contexts exist. */
    hg_return_t (*handle_create_cb)(hg_handle_t, void *);
    void *handle_create_arg;

    pthread_mutex_t lock; /* guards contexts */
    hg_context_t *contexts[256];

    /* Live objects, for HG_Finalize()'s leak check. */
    atomic_uint n_contexts;
    atomic_uint n_addrs;
    atomic_uint n_bulks;

    struct {
        atomic_uint_fast64_t forwards_sent, requests_received, responses_sent,
            overflow_transfers, handles_allocated, protocol_errors;
    } stats;
    atomic_uint probe_ms; /* probe interval + 1; 0 until first read */
};

struct hg_bulk_xfer;

struct hg_context {
    hg_class_t *hg_class;
    na_context_t *na_context;
    uint8_t id;
    void *data;
    void (*free_data)(void *);

    pthread_mutex_t lock;          /* guards everything below up to the queue */
    LIST_HEAD(, hg_handle) pool;   /* idle handles ready for reuse     */
    LIST_HEAD(, hg_handle) posted; /* target handles with a recv posted */
    unsigned int n_posted_target;  /* how many should stay posted      */
    unsigned int n_posted;         /* how many are posted now          */
    unsigned int n_live_handles;   /* created and not yet back in pool */
    TAILQ_HEAD(, hg_timer) timers;
    /* No linked timer is due before this (read without the lock). */
    atomic_uint_fast64_t timer_hint;
    STAILQ_HEAD(, hg_bulk_xfer) bulk_op_pool;
    unsigned int n_live_bulk_ops;
    bool destroying;

    pthread_mutex_t queue_lock; /* guards queue and queue_cond */
    pthread_cond_t queue_cond;
    STAILQ_HEAD(, hg_completion) queue;
    atomic_uint n_queued; /* entries on queue, read without the lock */
};

/* Handle states, for the origin's forward and the target's respond. */
struct hg_handle {
    struct hg_info info;
    struct hg_addr src_addr; /* target side: the request's source */
    hg_context_t *ctx;
    const struct hg_rpc *rpc; /* resolved at create / receipt */
    atomic_uint refcount;
    bool is_target;

    /* Message buffers and NA operations, allocated once per handle. */
    void *in_buf, *in_buf_data;
    void *out_buf, *out_buf_data;
    na_op_id_t *send_op, *recv_op, *ack_op;
    uint8_t ack_byte;
    hg_proc_t in_proc, out_proc;

    /* Per-operation state, guarded by lock. */
    pthread_mutex_t lock;
    unsigned int pending; /* NA/bulk operations still outstanding */
    hg_return_t ret;      /* first error wins                      */
    bool active;          /* a forward/respond is in flight        */
    bool discard;         /* post failed: complete silently         */
    bool responded;
    bool loopback_pending; /* loopback: origin waits for the target  */
    hg_cb_t callback;
    void *arg;
    struct hg_timer timer;
    struct hg_probe probe; /* liveness of the target (hg_liveness.c) */
    struct hg_completion comp;
    struct hg_bulk_xfer *bulk_op; /* overflow transfer in flight */

    /* Request / response as received. */
    struct hg_header req_header;
    struct hg_header resp_header;
    uint8_t target_id; /* origin: context id of the target */
    size_t in_size;    /* bytes of the request message     */
    size_t out_size;   /* bytes of the response message    */
    void *in_extra;    /* overflowed input (owned)         */
    hg_size_t in_extra_size;
    void *out_extra; /* overflowed output (owned)        */
    hg_size_t out_extra_size;
    hg_bulk_t extra_bulk;        /* exposes in_extra/out_extra to the peer */
    struct hg_handle *lb_origin; /* loopback: the origin handle */

    void *user_data;
    void (*free_user_data)(void *);

    LIST_ENTRY(hg_handle) entry; /* pool or posted list */
};

/* lib/hg/hg_context.c */
void hg_completion_add(hg_context_t *context, struct hg_completion *comp);
void hg_timer_arm(hg_context_t *context, struct hg_timer *timer,
                  unsigned int timeout_ms, void (*expire)(struct hg_timer *));
void hg_timer_disarm(struct hg_timer *timer);
void hg_timer_unlink(hg_context_t *context, struct hg_timer *timer);
hg_return_t hg_context_post_recvs(hg_context_t *context);
hg_return_t hg_context_pool_grow(hg_context_t *context);
hg_context_t *hg_class_find_context(hg_class_t *hg_class, uint8_t id);

/* lib/hg/hg_handle.c */
hg_return_t hg_handle_run_create_cb(struct hg_handle *handle);
struct hg_handle *hg_handle_get(hg_context_t *context);
struct hg_handle *hg_handle_pool_take(hg_context_t *context);
void hg_handle_reset(struct hg_handle *handle);
void hg_handle_put(struct hg_handle *handle);
hg_return_t hg_handle_post_recv(struct hg_handle *handle);
void hg_handle_free(struct hg_handle *handle);
void hg_handle_trigger(struct hg_completion *comp);
void hg_addr_lookup_trigger(struct hg_completion *comp);

/* lib/hg/hg_rpc.c */
hg_return_t hg_rpc_respond_send(struct hg_handle *handle, hg_cb_t callback,
                                void *arg, void *out_struct,
                                hg_return_t ret_code);
void hg_rpc_respond_error(struct hg_handle *handle, hg_return_t ret);

/* lib/hg/hg_class.c */
const struct hg_rpc *hg_rpc_lookup(hg_class_t *hg_class, hg_id_t id);
na_tag_t hg_class_next_tag(hg_class_t *hg_class);

/* lib/hg/hg_addr.c */
hg_return_t hg_addr_create(hg_class_t *hg_class, na_addr_t na_addr,
                           hg_addr_t *addr);

/* lib/bulk: internal transfers used by the RPC layer for overflow. */
hg_return_t hg_bulk_create_internal(hg_class_t *hg_class, void *buf,
                                    hg_size_t size, hg_uint8_t flags,
                                    hg_bulk_t *bulk);
typedef void (*hg_bulk_internal_cb_t)(void *arg, hg_return_t ret);
hg_return_t hg_bulk_pull_internal(hg_context_t *context, hg_addr_t origin,
                                  uint8_t origin_id, const void *desc,
                                  size_t desc_size, void *dst, hg_size_t size,
                                  hg_bulk_internal_cb_t cb, void *arg,
                                  struct hg_bulk_xfer **op);
void hg_bulk_op_cancel(struct hg_bulk_xfer *op);
void hg_bulk_trigger(struct hg_completion *comp);
void hg_context_free_bulk_ops(hg_context_t *context);

#endif /* HG_INTERNAL_H */
