/*
 * The NA plugin contract.
 *
 * A plugin is one folder under plugins/ that exports exactly one symbol: a
 * `const struct na_class_ops`, which points to its group tables (contexts,
 * addresses, messages, memory; struct na_context_ops ... na_mem_ops). The core
 * (lib/na) owns classes, contexts and their completion queues; a plugin owns
 * its addresses, memory handles and the rest of its operation ids (the core
 * owns each op's life: its state, completion entry, cancel mark and list link,
 * struct na_op_base), starts an operation that will wait with na_op_start() and
 * completes every operation it accepted exactly once with na_op_finish().
 *
 * Rules every op follows unless its comment says otherwise:
 *  - Ops never block, except poll_wait, which may sleep up to its timeout.
 *  - Ops never run user callbacks; callbacks run only from NA_Trigger().
 *  - Arguments were checked by the core (non-NULL class, context, buffers
 *    where required, op ids) before an op is called.
 *  - Ops may be called from several threads at once unless the class was
 *    initialized with NA_THREAD_MODE_SINGLE: a plugin locks what it shares.
 *  - An op marked optional may be NULL: the core then does what its
 *    comment says (the default). Every other op is required, and
 *    NA_Initialize() refuses a plugin whose tables lack one.
 */
#ifndef NA_PLUGIN_H
#define NA_PLUGIN_H

#include "na.h"

#include "util/qs_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/queue.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What NA_Initialize() parsed out of the info string. */
struct na_info {
    char class_name[64];           /* "" when the string named no class  */
    char protocol_name[64];        /* never empty                         */
    char host_name[256];           /* "" when absent; may hold ":port"    */
    struct na_init_info init_info; /* copy of the caller's options */
};

/*
 * What one message or RMA post asks for, filled by the core from the
 * NA_Msg_*, NA_Put and NA_Get arguments after checking them. Only the
 * fields of the op's kind are meaningful; the rest are zero. The plugin
 * copies what it needs: the descriptor lives only during the call.
 */
struct na_op_desc {
    na_cb_type_t type;     /* which op: NA_CB_SEND_UNEXPECTED ... NA_CB_GET  */
    na_context_t *context; /* where the completion is queued                 */
    /* Messages. Sends never write through buf. */
    void *buf;
    size_t buf_size;
    void *plugin_data; /* from msg_buf_alloc, or NULL                     */
    na_tag_t tag;      /* unused by recv_unexpected                       */
    /* The peer (send: destination; recv_expected: source; RMA: remote),
     * NA_ADDR_NULL for recv_unexpected, and its context id. */
    na_addr_t addr;
    uint8_t addr_id;
    /* RMA. */
    na_mem_handle_t local_mem_handle;
    na_offset_t local_offset;
    na_mem_handle_t remote_mem_handle;
    na_offset_t remote_offset;
    size_t data_size;
};

/* The life of an operation id, owned by the core. */
enum na_op_state {
    NA_OP_IDLE,      /* free for a new post                                */
    NA_OP_POSTED,    /* claimed by a post; the plugin has not started it   */
    NA_OP_STARTED,   /* started (na_op_start): cancel reaches the plugin   */
    NA_OP_COMPLETED, /* on its context's completion queue, not triggered   */
};

/* Set beside NA_OP_POSTED or NA_OP_STARTED in na_op_base.state once a
 * cancel of the current post arrived: at most once per post. */
#define NA_OP_CANCEL_REQUESTED 0x100
#define NA_OP_STATE_MASK 0xff

struct na_op_list;

/*
 * The core's part of every operation id. A plugin's `struct na_op_id`
 * starts with one (`struct na_op_base base;` as its first member, so the
 * core finds it from the na_op_id_t pointer) and never writes its fields
 * except `info.info`, the kind-specific results (actual sizes, source
 * address and tag of a received message), which it fills before
 * na_op_finish(), and the list link, through the na_op_list_* helpers.
 *
 * The state moves only in the core: IDLE -> POSTED before the plugin's
 * post op runs (NA_BUSY if the op is not idle), back to IDLE if that op
 * fails, POSTED -> STARTED in na_op_start(), POSTED or STARTED ->
 * COMPLETED in na_op_finish(), and COMPLETED -> IDLE in NA_Trigger() just
 * before the user callback, which may therefore repost the same op id.
 * NA_Cancel() only marks the op (NA_OP_CANCEL_REQUESTED) while it is
 * POSTED, which na_op_start() then reports; it calls the plugin's cancel
 * hook once, for a STARTED op. NA_Op_destroy() refuses (NA_BUSY) an op
 * that is not idle.
 */
struct na_op_base {
    struct na_cb_info info; /* what the user callback receives           */
    na_cb_t callback;
    na_class_t *na_class;           /* the class that created the op id   */
    na_context_t *context;          /* the context of the current post    */
    atomic_int state;               /* enum na_op_state, and the flag     */
    STAILQ_ENTRY(na_op_base) entry; /* in context->overflow while queued */
    /* A plugin list the op waits on (na_op_list_*), under the lock the
     * plugin guards that list with; list is NULL when on none. */
    TAILQ_ENTRY(na_op_base) link;
    struct na_op_list *list;
    /* What the callback reads first besides info.arg (na_op_set_hints(),
     * na_hint.h): prefetched with it, never followed. */
    const void *hint[2];
};

/* The op's base, from the op id a plugin defines (base first). */
static inline struct na_op_base *
na_op_base(na_op_id_t *op_id)
{
    return (struct na_op_base *) (void *) op_id;
}

/* Current state; acquire ordering, so a plugin that reads NA_OP_IDLE or
 * NA_OP_COMPLETED also sees what the completing thread wrote. */
static inline enum na_op_state
na_op_state(const struct na_op_base *base)
{
    return (enum na_op_state)(atomic_load_explicit((atomic_int *) &base->state,
                                                   memory_order_acquire) &
                              NA_OP_STATE_MASK);
}

/*
 * The life of an operation, for plugins (the model is nng's aio). A post
 * op either finishes the op at once (na_op_finish, for instance a send
 * that went out whole) or starts it: under the lock that guards where it
 * will wait, it calls na_op_start() before it puts the op where its
 * completion or its cancel hook can find it. false means a cancel arrived
 * while the post ran: the plugin then does not queue the op but cancels
 * it itself, as its hook would (an op that waits on a plugin list simply
 * finishes with NA_CANCELED). From true on, the core calls the plugin's
 * cancel hook, at most once, for a cancel of this post; the hook takes
 * the same lock and finishes the op with NA_CANCELED if it still waits
 * (na_op_list_active), else does nothing: it completed, or completes soon
 * with its result. Thus the race between a cancel and the post that it
 * cancels is closed here, once, for every plugin.
 *
 * A second call for the same post returns true (already started). It
 * must not come after the op may have completed.
 */
bool na_op_start(na_op_id_t *op_id);

/* Whether a cancel of the current post arrived (the op is posted or
 * started). For plugins that check at a later step, such as an op that
 * was in flight when cancel came. */
static inline bool
na_op_cancel_requested(const struct na_op_base *base)
{
    return (atomic_load_explicit((atomic_int *) &base->state,
                                 memory_order_acquire) &
            NA_OP_CANCEL_REQUESTED) != 0;
}

/*
 * Plugin lists of started ops (posted receives, sends waiting for room):
 * a list is guarded by a lock of the plugin, held around every call here.
 * An op is on at most one list; na_op_list_active() tells whether it is,
 * which is how a cancel hook knows that the op is still its to finish.
 */
struct na_op_list {
    TAILQ_HEAD(, na_op_base) head;
};

static inline void
na_op_list_init(struct na_op_list *list)
{
    TAILQ_INIT(&list->head);
}

static inline bool
na_op_list_empty(const struct na_op_list *list)
{
    return TAILQ_EMPTY(&list->head);
}

static inline void
na_op_list_append(struct na_op_list *list, na_op_id_t *op_id)
{
    struct na_op_base *base = na_op_base(op_id);

    TAILQ_INSERT_TAIL(&list->head, base, link);
    base->list = list;
}

/* Put the op on list just before `next`, which is on it (an op put back
 * where it was taken from, keeping the list's order). */
static inline void
na_op_list_insert_before(struct na_op_list *list, na_op_id_t *next,
                         na_op_id_t *op_id)
{
    struct na_op_base *base = na_op_base(op_id);

    TAILQ_INSERT_BEFORE(na_op_base(next), base, link);
    base->list = list;
}

/* Take the op off its list; nothing if it is on none. */
static inline void
na_op_list_remove(na_op_id_t *op_id)
{
    struct na_op_base *base = na_op_base(op_id);

    if (base->list == NULL)
        return;
    TAILQ_REMOVE(&base->list->head, base, link);
    base->list = NULL;
}

static inline bool
na_op_list_active(na_op_id_t *op_id)
{
    return na_op_base(op_id)->list != NULL;
}

/* The list the op is on, or NULL. */
static inline struct na_op_list *
na_op_list_of(na_op_id_t *op_id)
{
    return na_op_base(op_id)->list;
}

static inline na_op_id_t *
na_op_list_first(const struct na_op_list *list)
{
    return (na_op_id_t *) (void *) TAILQ_FIRST(&list->head);
}

static inline na_op_id_t *
na_op_list_next(na_op_id_t *op_id)
{
    return (na_op_id_t *) (void *) TAILQ_NEXT(na_op_base(op_id), link);
}

/* The core's class: the plugin keeps its private state in plugin_class. */
struct na_class {
    const struct na_class_ops *ops;
    void *plugin_class; /* owned by the plugin */
    char *protocol_name;
    bool listen;
    unsigned int context_count; /* guarded by lock */
    pthread_mutex_t lock;
    /* Message limits, set once by the plugin's initialize
     * (na_plugin_set_msg_limits) and read by the core's checks. */
    size_t max_unexpected_size;
    size_t max_expected_size;
    na_tag_t max_tag;
    /* Most segments one memory handle takes (NA_Mem_handle_get_max_
     * segments); 0 is read as 1. Set once by a plugin with
     * handle_create_segments (na_plugin_set_max_segments). */
    size_t max_segments;
    /* Set by a plugin whose clock can run ahead of its peers' work (the
     * simulated fabric, unless one thread is declared to drive its whole
     * world): liveness verdicts that assume a peer acts within a span of
     * this clock are not trusted. */
    atomic_bool clock_approximate;
};

/* The plugin's state of the class that created the op id (the
 * plugin_class its initialize set). */
static inline void *
na_op_plugin_class(const na_op_id_t *op_id)
{
    return ((const struct na_op_base *) (const void *) op_id)
        ->na_class->plugin_class;
}

/*
 * Called by a plugin's initialize (or whoever builds a class) before it
 * returns NA_SUCCESS: the payload bytes a caller may put in an unexpected
 * and an expected message, and the largest tag. They do not change for
 * the life of the class; NA_Msg_get_max_*() and the core's argument checks
 * read them without calling the plugin.
 */
void na_plugin_set_msg_limits(na_class_t *na_class, size_t max_unexpected_size,
                              size_t max_expected_size, na_tag_t max_tag);

/* Called by the initialize of a plugin whose handle_create_segments takes
 * several segments: the most one handle takes (the class's max_segments,
 * 1 unless set). */
void na_plugin_set_max_segments(na_class_t *na_class, size_t max_segments);

/* Say whether the class's clock is approximate (see struct na_class). */
void na_plugin_set_clock_approximate(na_class_t *na_class, bool approximate);

/* Completions a context queues in its ring before the overflow list. */
#define NA_CQ_RING 8u

/*
 * The core's context: the completion queue lives here; the plugin keeps its
 * per-context state in plugin_context and reads nothing else of it.
 */
struct na_context {
    na_class_t *na_class;
    void *plugin_context; /* owned by the plugin */
    uint8_t id;
    pthread_mutex_t lock; /* guards the queue; count changes only under it */
    /* The completion queue, oldest first: the ring (NA_CQ_RING entries,
     * ring_head to ring_tail), then `overflow`, which is used only while
     * the ring is full or the overflow not yet drained. NA_Trigger takes
     * a batch from the ring without walking the ops, so that it can fetch
     * them all at once. */
    unsigned int ring_head, ring_tail;
    struct na_op_base *ring[NA_CQ_RING];
    STAILQ_HEAD(, na_op_base) overflow;
    /* Entries on queue. Read without the lock (NA_Trigger and
     * NA_Context_get_completion_count look before they lock, so an empty
     * queue costs no lock); written only under it. */
    _Atomic unsigned int count;
    /* Callbacks NA_Trigger() ran that the process-wide diagnostic count
     * does not show yet: added to it in batches (NA_DIAG_TRIGGER_BATCH)
     * and when the context is destroyed. Guarded by lock. */
    unsigned int triggered;
};

/*
 * Finish a posted or started operation with `ret`: the op moves to
 * NA_OP_COMPLETED and is queued on the context of its post. Call it
 * exactly once per accepted post (a second call is a plugin bug, caught
 * by an assertion), off every na_op_list, after the last access to the
 * op: another thread may trigger and repost it as soon as this returns.
 * Never runs the callback.
 * It does not wake a thread blocked in the plugin's poll_wait: a plugin that
 * completes operations outside its own progress loop wakes its waiters.
 *
 * Lock order. The core never holds a context's lock (or any core lock)
 * while it calls a plugin op or a user callback, so a plugin may call
 * na_op_finish() and NA_Context_get_completion_count() while holding its
 * own locks: plugin locks always come before the core's context lock, never
 * after. A plugin never takes core locks itself.
 */
void na_op_finish(na_op_id_t *op_id, na_return_t ret);

/*
 * The signature of the four post ops (send, recv_unexpected, recv_expected,
 * rma; desc->type tells which kind of post it is). The core has checked the
 * arguments (class, context and op id belong together; buffers, addresses
 * and handles present where the kind needs them; message sizes within the
 * plugin's limits; tags at most the class's max_tag) and moved the op to
 * NA_OP_POSTED. On NA_SUCCESS the plugin owns desc->buf (a message) and
 * the op until the op completes, exactly once, through na_op_finish(); an
 * op that does not finish inside the post is started first (na_op_start).
 * On error nothing was posted, no completion will come and the core
 * returns the op to NA_OP_IDLE.
 */
typedef na_return_t (*na_plugin_post_t)(na_class_t *na_class,
                                        const struct na_op_desc *desc,
                                        na_op_id_t *op_id);

/*
 * Contexts and progress on them (NA_Context_*, NA_Poll*, NA_Cancel,
 * NA_Clock_now). Required unless marked optional.
 */
struct na_context_ops {
    /* Bytes of the plugin's per-context state. The core allocates it zeroed
     * (aligned for any type), stores it in context->plugin_context, hands
     * it to create and frees it after destroy succeeded or create failed.
     * 0: the plugin keeps no per-context state. */
    size_t context_size;
    /* Set up the per-context state in plugin_context (context_size zeroed
     * bytes). Errors: NA_NOMEM, NA_EXIST (a context with that id exists).
     * On error the plugin releases what it acquired; the core frees the
     * memory. */
    na_return_t (*create)(na_class_t *na_class, na_context_t *context,
                          uint8_t id, void *plugin_context);
    /* Fails with NA_BUSY while operations posted on it are pending; on
     * success releases what create acquired (not the memory). */
    na_return_t (*destroy)(na_class_t *na_class, void *plugin_context);

    /* A file descriptor to sleep on, or -1 if the plugin has none. */
    int (*poll_get_fd)(na_class_t *na_class, na_context_t *context);
    /* Optional (NULL: the descriptor tells). Whether blocking on
     * poll_get_fd's descriptor is safe now, for a plugin whose descriptor
     * alone does not tell (ofi: fi_trywait() must be asked first, and work
     * it holds on its own queues needs a poll). Called by
     * NA_Poll_try_wait() once no completion waits for NA_Trigger().
     * Non-blocking. */
    bool (*poll_try_wait)(na_class_t *na_class, na_context_t *context);
    /* Non-blocking progress; *count = completions queued on `context`. */
    na_return_t (*poll)(na_class_t *na_class, na_context_t *context,
                        unsigned int *count);
    /* Blocking progress, up to timeout_ms on the plugin's clock. Returns
     * NA_SUCCESS once at least one completion was queued on `context`, or
     * NA_TIMEOUT. May return early with NA_TIMEOUT and *count 0 (spurious
     * wake-up); callers loop. */
    na_return_t (*poll_wait)(na_class_t *na_class, na_context_t *context,
                             unsigned int timeout_ms, unsigned int *count);

    /* The cancel hook. The core calls it at most once per post, and only
     * for an op the plugin started (na_op_start); a cancel that comes
     * earlier is reported by na_op_start() instead. The op may complete
     * concurrently, so the hook takes the lock its lists are under and
     * finishes the op with NA_CANCELED only if it still waits
     * (na_op_list_active); otherwise it does nothing and the op completes
     * once, with its result. Asynchronous, never blocks; returns
     * NA_SUCCESS. */
    na_return_t (*cancel)(na_class_t *na_class, na_context_t *context,
                          na_op_id_t *op_id);

    /* Optional (NULL: real monotonic time, na_plugin_clock_monotonic_ns).
     * The class's clock in nanoseconds, never going back; virtual on the
     * simulated fabric. Non-blocking, cannot fail. */
    uint64_t (*clock_now)(na_class_t *na_class);
};

/*
 * An address's forms as text and bytes (NA_Addr_to_string,
 * NA_Addr_*serialize*), and back. Required; none blocks.
 */
struct na_addr_codec_ops {
    /* Same contract as NA_Addr_to_string(). */
    na_return_t (*to_string)(na_class_t *na_class, char *buf, size_t *buf_size,
                             na_addr_t addr);
    /* The address's bytes for a peer. *buf_size: on entry the room in buf
     * (buf NULL and 0 to ask), on return the bytes the address takes,
     * which the core reports as NA_Addr_get_serialize_size(). NA_OVERFLOW
     * when buf is NULL or too small (nothing written): start with
     * na_plugin_serialize_room(). The address stays the caller's. */
    na_return_t (*serialize)(na_class_t *na_class, void *buf, size_t *buf_size,
                             na_addr_t addr);
    /* Untrusted bytes: NA_PROTOCOL_ERROR / NA_MSGSIZE on malformed input,
     * never a crash or an out-of-bounds read. On success the caller owns
     * one reference to *addr. */
    na_return_t (*deserialize)(na_class_t *na_class, na_addr_t *addr,
                               const void *buf, size_t buf_size);
};

/*
 * Addresses (NA_Addr_*): the plugin allocates them; the caller frees each
 * with free. Required unless marked optional; none blocks.
 */
struct na_addr_ops {
    /* Resolve a name ("host:port", a node name...). Errors: NA_INVALID_ARG
     * (malformed), NA_NOMEM, NA_HOSTUNREACH. On success the caller owns
     * one reference to *addr. */
    na_return_t (*lookup)(na_class_t *na_class, const char *name,
                          na_addr_t *addr);
    /* Drop the caller's reference; the address dies with its last. */
    void (*free)(na_class_t *na_class, na_addr_t addr);
    /* The class's own address, a new reference. Errors: NA_NOMEM. */
    na_return_t (*self)(na_class_t *na_class, na_addr_t *addr);
    /* Another reference to addr (a new one the caller frees). */
    na_return_t (*dup)(na_class_t *na_class, na_addr_t addr,
                       na_addr_t *new_addr);
    /* Optional (NULL: addresses are interned, one object per peer, and two
     * are equal when they are the same pointer). Whether two addresses
     * name the same peer. Pure. */
    bool (*cmp)(na_class_t *na_class, na_addr_t addr1, na_addr_t addr2);
    /* Optional (NULL: the plugin keeps nothing per peer, nothing to do).
     * Forget what the plugin keeps about the peer of `addr` so a later
     * lookup starts afresh; `addr` stays valid until its references are
     * freed. Never called with the class's own address. */
    na_return_t (*set_remove)(na_class_t *na_class, na_addr_t addr);
    /* Whether addr is the class's own address. Pure. */
    bool (*is_self)(na_class_t *na_class, na_addr_t addr);
    /* The addresses' forms as text and bytes, and back. */
    const struct na_addr_codec_ops *codec;
};

/*
 * Operation ids and messages (NA_Op_*, NA_Msg_*). Message posts follow
 * na_plugin_post_t. Errors at post time: NA_AGAIN (resources exhausted,
 * retry), NA_HOSTUNREACH, NA_NOMEM. Errors at completion: NA_HOSTUNREACH,
 * NA_CANCELED, NA_IO_ERROR, ...
 */
struct na_msg_ops {
    /* Bytes of the plugin's struct na_op_id, whose first member is a
     * struct na_op_base. The core allocates op ids (zeroed, on a 64-byte
     * cache line boundary and rounded up to whole lines), initializes the
     * base and frees them; one is reused for one operation at a time. */
    size_t op_size;
    /* Optional (NULL: nothing to set up). Set up an op id just allocated
     * (the base is initialized); on error the core frees it. */
    na_return_t (*op_init)(na_class_t *na_class, na_op_id_t *op_id,
                           unsigned long flags);
    /* Optional (NULL: nothing to release). Release what op_init acquired;
     * called only for an idle op (the core checks), before it is freed. */
    void (*op_fini)(na_class_t *na_class, na_op_id_t *op_id);

    /* Optional, both or neither (NULL: na_plugin_msg_buf_alloc/free,
     * plain 64-byte-aligned memory and plugin_data NULL). A message buffer of
     * buf_size bytes, or NULL; plugin_data travels with the buffer to the
     * send and recv ops. The caller owns the buffer until buf_free. */
    void *(*buf_alloc)(na_class_t *na_class, size_t buf_size,
                       unsigned long flags, void **plugin_data);
    void (*buf_free)(na_class_t *na_class, void *buf, void *plugin_data);

    /* Both sends: NA_CB_SEND_UNEXPECTED or NA_CB_SEND_EXPECTED in
     * desc->type; an expected send matches the peer's recv_expected. */
    na_plugin_post_t send;
    /* Reports the source (a new address the callee frees) and the tag in
     * info.info.recv_unexpected; a message longer than buf_size completes
     * with NA_MSGSIZE. */
    na_plugin_post_t recv_unexpected;
    /* Matches the first expected message from (addr, addr_id) with this
     * tag. */
    na_plugin_post_t recv_expected;
};

/*
 * Memory handles and RMA (NA_Mem_*, NA_Put, NA_Get). The plugin allocates
 * handles; handle_free releases them. The memory itself stays the
 * caller's. Required unless marked optional; only mem_register may block
 * (pinning memory).
 */
struct na_mem_ops {
    /* One contiguous region. Errors: NA_NOMEM, NA_INVALID_ARG (flags). */
    na_return_t (*handle_create)(na_class_t *na_class, void *buf,
                                 size_t buf_size, unsigned long flags,
                                 na_mem_handle_t *mem_handle);
    /* Optional (NULL: NA_OPNOTSUPPORTED, and the bulk layer uses one
     * handle per segment). Several segments in one handle, at most the
     * class's max_segments (na_plugin_set_max_segments). */
    na_return_t (*handle_create_segments)(na_class_t *na_class,
                                          struct na_segment *segments,
                                          size_t segment_count,
                                          unsigned long flags,
                                          na_mem_handle_t *mem_handle);
    void (*handle_free)(na_class_t *na_class, na_mem_handle_t mem_handle);
    /* Make the region reachable by peers' RMA (pin and key it). */
    na_return_t (*mem_register)(na_class_t *na_class,
                                na_mem_handle_t mem_handle,
                                enum na_mem_type mem_type, uint64_t device);
    /* After this, peers' RMA on the region fails with NA_ACCESS/NA_FAULT. */
    na_return_t (*mem_deregister)(na_class_t *na_class,
                                  na_mem_handle_t mem_handle);
    /* Same contract as the address's serialize (na_addr_codec_ops), for a
     * handle: NA_Mem_handle_get_serialize_size() asks it with buf NULL. */
    na_return_t (*handle_serialize)(na_class_t *na_class, void *buf,
                                    size_t *buf_size,
                                    na_mem_handle_t mem_handle);
    /* Untrusted bytes: same rule as the address's
     * deserialize. The
     * resulting handle describes remote memory and may only be used as an
     * RMA target. */
    na_return_t (*handle_deserialize)(na_class_t *na_class,
                                      na_mem_handle_t *mem_handle,
                                      const void *buf, size_t buf_size);

    /*
     * Put (NA_CB_PUT: local_mem_handle -> remote_mem_handle) and get
     * (NA_CB_GET: the other way), told apart by desc->type. Local and
     * remote ranges must lie inside their handles and the handles must
     * grant the access (remote write for put, remote read for get): a
     * violation is either refused at post time (NA_INVALID_ARG,
     * NA_PERMISSION; na_plugin_rma_check) or completes with NA_ACCESS /
     * NA_PERMISSION / NA_FAULT, and never touches memory outside the
     * regions.
     */
    na_plugin_post_t rma;
};

/*
 * A plugin's table: what identifies it, its class's life, and one table
 * per concern, each defined in the plugin file that implements it
 * (na_X_addr.c defines na_X_addr_ops, ...). NA_Initialize() refuses a
 * plugin whose tables lack a required op (na_plugin_ops_missing).
 */
struct na_class_ops {
    /* Plugin name as used before '+' in info strings: "sim", "ofi". */
    const char *class_name;

    /* Whether the plugin serves this protocol ("sim", "tcp", ...). Pure. */
    bool (*check_protocol)(const char *protocol_name);

    /* Set na_class->plugin_class. Errors: NA_INVALID_ARG (bad host),
     * NA_NOMEM, NA_NODEV / NA_PROTONOSUPPORT (fabric absent),
     * NA_ADDRINUSE, NA_OPNOTSUPPORTED (an init_info field it cannot honour).
     * On error nothing is left allocated. May block (opening devices). */
    na_return_t (*initialize)(na_class_t *na_class, const struct na_info *info,
                              bool listen);
    /* Release everything. Called only once no context remains. */
    na_return_t (*finalize)(na_class_t *na_class);
    /* Optional (NULL for most): a class of this plugin paired with the
     * network class named by info_string, reaching peers on this node
     * through this plugin and the others through the network class
     * (auto_sm, na_auto_sm.h). Returns a whole class, or NULL after
     * logging why. */
    na_class_t *(*auto_initialize)(const char *info_string,
                                   const char *sm_info_string, bool listen,
                                   const struct na_init_info *na_init_info);
    /* Optional (NULL: nothing to do). Remove what earlier processes of this
     * plugin left behind when they ended without finalizing (files in
     * /dev/shm, sockets). Called by NA_Cleanup(), which may run while
     * classes of this process exist: it must not touch those. */
    void (*cleanup)(void);

    /* The group tables, all required; each is defined in the plugin file
     * of its concern and lives as long as the program. */
    const struct na_context_ops *context; /* contexts, progress, cancel   */
    const struct na_addr_ops *addr;       /* addresses and their forms    */
    const struct na_msg_ops *msg;         /* op ids and messages          */
    const struct na_mem_ops *mem;         /* memory handles and RMA       */
};

/*
 * The start of every serialize op: `need` is the bytes the object takes.
 * Sets *buf_size to need; false (the op returns NA_OVERFLOW and writes
 * nothing) when buf is NULL or has less room than that.
 */
static inline bool
na_plugin_serialize_room(const void *buf, size_t *buf_size, size_t need)
{
    bool fits = buf != NULL && *buf_size >= need;

    *buf_size = need;
    return fits;
}

/* Shared helpers for plugins. */

/* Real monotonic time in nanoseconds (CLOCK_MONOTONIC). */
uint64_t na_plugin_clock_monotonic_ns(void);

/*
 * Plugins log through the library's single sink (util/qs_log.h) under
 * their own subsystem name, e.g. qs_log("ofi", QS_LOG_ERROR, "...") for an
 * error logged once where it starts; "sim", "ofi", "verbs" and "sm" are
 * children of "na", so NA_Set_log_level() and HG_LOG_SUBSYS=na reach them.
 * na_plugin_log_error() is the older spelling of an error-level qs_log().
 */
#define na_plugin_log_error(plugin, ...)                                       \
    qs_log((plugin), QS_LOG_ERROR, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* NA_PLUGIN_H */
