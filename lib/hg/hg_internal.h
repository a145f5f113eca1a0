/*
 * Private structures of the HG RPC layer (lib/hg): classes, contexts,
 * handles. It stands on the ground floor (lib/core/hg_core.h) and uses
 * the bulk layer through lib/bulk/hg_bulk_rpc.h; neither includes this.
 */
#ifndef HG_INTERNAL_H
#define HG_INTERNAL_H

#include "mercury.h"
#include "mercury_proc.h"

#include "bulk/hg_bulk_rpc.h"
#include "core/hg_core.h"
#include "core/hg_opgroup.h"
#include "hg/hg_header.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

/* Errors are logged once where they start, through the single sink:
 * qs_log("hg", QS_LOG_ERROR, ...) (or "bulk", "proc"). */
#include "util/qs_atomic.h"
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

#include "hg/hg_check.h"
#include "hg/hg_liveness.h"
#include "hg/hg_watchdog.h"

struct hg_class {
    struct hg_core_class core; /* first: see hg_core_class_of() */
    bool own_na_class;
    struct hg_init_info info;
    hg_size_t in_eager_size;  /* payload bytes inside a request  */
    hg_size_t out_eager_size; /* payload bytes inside a response */
    /* Bytes reserved for the program at the start of each request /
     * response payload (HG_Class_set_input_offset(), hg_buf.c). */
    hg_size_t in_offset, out_offset;
    size_t na_unexpected_size;
    size_t na_expected_size;
    na_tag_t tag_ack_bit; /* tags with this bit acknowledge overflow */
    atomic_uint tag_next;

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

    struct {
        atomic_uint_fast64_t forwards_sent, requests_received, responses_sent,
            overflow_transfers, handles_allocated, protocol_errors,
            probes_answered, watchdog_wakeups, watchdog_drives;
    } stats;
    atomic_uint probe_ms;  /* probe interval + 1; 0 until first read */
    struct hg_heard heard; /* signs of life of the targets (hg_liveness.h) */
    /* The probe-answering thread (hg_watchdog.c); NULL until a context
     * of a class that wants one is attached. Set under lock. */
    struct hg_watchdog *watchdog;
    LIST_ENTRY(hg_class) diag_entry; /* live classes (hg_names.c) */
};

struct hg_context {
    struct hg_core core; /* first: see hg_core_of() */
    hg_class_t *hg_class;
    void *data;
    void (*free_data)(void *);

    /* The target side (hg_target_pool.c): the idle handles and the posted
     * request receives. */
    pthread_mutex_t lock;          /* guards everything below */
    LIST_HEAD(, hg_handle) pool;   /* idle handles ready for reuse     */
    LIST_HEAD(, hg_handle) posted; /* target handles with a recv posted */
    unsigned int n_posted_target;  /* how many should stay posted      */
    unsigned int n_posted;         /* how many are posted now          */
    unsigned int n_live_handles;   /* created and not yet back in pool */
    bool destroying;
    /* Forwards and responds holding their handle's reference, from their
     * start until their callback ran (or they ended silently): what
     * HG_Context_destroy() still progresses. Atomic, not under lock. */
    atomic_uint n_ops;
    /* Handles whose put the watchdog left to HG_Progress (hg_watchdog.c). */
    LIST_HEAD(, hg_handle) deferred_puts;
    struct hg_watch watch; /* the watchdog's view of this context */

    /* HG_Event_get_wait_fd()'s epoll set (hg_event.c), NULL until then. */
    struct hg_event *event;
};

/*
 * Handle states, for the origin's forward and the target's respond.
 *
 * Laid out by cache line (a handle is allocated on a line boundary,
 * hg_target_pool.c): in a large world thousands of RPCs are in flight and
 * every step of one touches its handle cold, so what a step reads sits
 * together and what few steps read sits last. Lines 0 to 3 hold all that
 * hg_handle_reset() writes; the probe's first 63 bytes, which every
 * forward and finish reads, are one line.
 */
struct hg_handle {
    /* Line 0. */
    struct hg_info info;
    struct hg_addr src_addr; /* target side: the request's source */
    /* Line 1. */
    hg_context_t *ctx;
    const struct hg_rpc *rpc; /* resolved at create / receipt */
    atomic_uint refcount;
    bool is_target;
    /* Per-operation state, guarded by lock. */
    bool active;           /* a forward/respond is in flight        */
    bool discard;          /* post failed: complete silently         */
    bool responded;        /* HG_Respond() was called                */
    bool loopback_pending; /* loopback: origin waits for the target  */
    uint8_t target_id;     /* origin: context id of the target      */
    /* The NA operations, overflow pull and loopback reply the forward
     * or respond waits for, and its first error (hg_rpc.c). */
    struct hg_opgroup ops;
    hg_cb_t callback;
    void *arg;
    struct hg_bulk_xfer *bulk_op; /* overflow transfer in flight */
    /* Line 2. */
    size_t in_size;              /* bytes of the request message     */
    size_t out_size;             /* bytes of the response message    */
    void *in_extra;              /* overflowed input (owned)         */
    void *out_extra;             /* overflowed output (owned)        */
    hg_bulk_t extra_bulk;        /* exposes in_extra/out_extra to the peer */
    struct hg_handle *lb_origin; /* loopback: the origin handle */
    void *user_data;
    void (*free_user_data)(void *);
    /* Line 3: request / response as received. */
    struct hg_header req_header;
    struct hg_header resp_header;
    /* Line 4. */
    pthread_mutex_t lock; /* guards the per-operation state */
    struct hg_completion comp;
    /* Line 5: message buffers and NA operations, allocated once per
     * handle. */
    void *in_buf, *out_buf;
    na_op_id_t *send_op, *recv_op, *ack_op;
    hg_proc_t in_proc, out_proc;
    uint8_t ack_byte;
    /* Line 6. */
    struct hg_timer timer;
    LIST_ENTRY(hg_handle) entry; /* pool or posted list */
    /* Line 7, and the probe's tail in line 8 with the rest. */
    _Alignas(64) struct hg_probe probe; /* liveness of the target
                                           (hg_liveness.c) */
    void *in_buf_data, *out_buf_data;
    hg_size_t in_extra_size;
    hg_size_t out_extra_size;
};
#if UINTPTR_MAX == UINT64_MAX /* the lines are counted for 64-bit hosts */
_Static_assert(offsetof(struct hg_handle, ctx) == 64 &&
                   offsetof(struct hg_handle, in_size) == 128 &&
                   offsetof(struct hg_handle, req_header) == 192 &&
                   offsetof(struct hg_handle, lock) == 256,
               "what hg_handle_reset() writes is in the handle's lines 0-3");
#endif

/* A reference an operation in flight holds on its handle (a forward or
 * respond until its callback has run, a liveness probe's send or answer
 * until its NA completion), counted on the context for
 * HG_Context_destroy(). */
static inline void
hg_rpc_op_ref(struct hg_handle *handle)
{
    qs_atomic_fetch_add(&handle->ctx->n_ops, 1, memory_order_seq_cst);
    HG_Ref_incr(handle);
}

static inline void
hg_rpc_op_unref(struct hg_handle *handle)
{
    qs_atomic_fetch_sub(&handle->ctx->n_ops, 1, memory_order_seq_cst);
    HG_Destroy(handle);
}

/* lib/hg/hg_context.c */
hg_return_t hg_context_post_recvs(hg_context_t *context);
hg_return_t hg_context_pool_grow(hg_context_t *context);
hg_context_t *hg_class_find_context(hg_class_t *hg_class, uint8_t id);

/* lib/hg/hg_handle.c */
hg_return_t hg_handle_run_create_cb(struct hg_handle *handle);
hg_return_t hg_handle_target_create_cb(struct hg_handle *handle);
struct hg_handle *hg_handle_get(hg_context_t *context);
struct hg_handle *hg_handle_pool_take(hg_context_t *context);
void hg_handle_reset(struct hg_handle *handle);
/* Free the overflow buffers and their bulk handle, if any. */
void hg_handle_drop_extras(struct hg_handle *handle);
void hg_handle_put(struct hg_handle *handle);
hg_return_t hg_handle_post_recv(struct hg_handle *handle);
void hg_handle_free(struct hg_handle *handle);

/* lib/hg/hg_target.c */
hg_return_t hg_rpc_respond_send(struct hg_handle *handle, hg_cb_t callback,
                                void *arg, void *out_struct,
                                hg_return_t ret_code);
void hg_rpc_respond_error(struct hg_handle *handle, hg_return_t ret);

/* lib/hg/hg_buf.c: where the encoded input / output of a handle starts
 * (after the reserved offset, or the overflow buffer) and how long it is;
 * HG_FAULT when there is none (released, or nothing received). */
hg_return_t hg_buf_input_args(struct hg_handle *handle, void **buf,
                              hg_size_t *size);
hg_return_t hg_buf_output_args(struct hg_handle *handle, void **buf,
                               hg_size_t *size);

/* lib/hg/hg_names.c: the live classes HG_Diag_dump_counters() reports. */
void hg_diag_class_add(hg_class_t *hg_class);
void hg_diag_class_del(hg_class_t *hg_class);

/* lib/hg/hg_event.c: close the context's event descriptors. */
void hg_event_fini(hg_context_t *context);

/* lib/hg/hg_class.c */
const struct hg_rpc *hg_rpc_lookup(hg_class_t *hg_class, hg_id_t id);
na_tag_t hg_class_next_tag(hg_class_t *hg_class);

#endif /* HG_INTERNAL_H */
