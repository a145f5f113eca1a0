/*
 * The NA plugin contract.
 *
 * A plugin is one folder under plugins/ that exports exactly one symbol: a
 * `const struct na_class_ops`. The core (lib/na) owns classes, contexts and
 * their completion queues; a plugin owns its addresses, memory handles and
 * operation ids, and completes every operation it accepted exactly once by
 * calling na_cb_completion_add().
 *
 * Rules every op follows unless its comment says otherwise:
 *  - Ops never block, except poll_wait, which may sleep up to its timeout.
 *  - Ops never run user callbacks; callbacks run only from NA_Trigger().
 *  - Arguments were checked by the core (non-NULL class, context, buffers
 *    where required, op ids) before an op is called.
 *  - Ops may be called from several threads at once unless the class was
 *    initialized with NA_THREAD_MODE_SINGLE: a plugin locks what it shares.
 *  - Ops that cannot be supported point to na_plugin_opnotsupported-style
 *    stubs returning NA_OPNOTSUPPORTED; no field is ever NULL.
 */
#ifndef NA_PLUGIN_H
#define NA_PLUGIN_H

#include "na.h"

#include "util/qs_log.h"

#include <pthread.h>
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
 * A completion entry. Plugins embed one in each of their op ids and fill
 * `callback_info`, then hand it to na_cb_completion_add(). NA_Trigger()
 * dequeues it, copies callback_info and callback, then calls
 * plugin_callback(plugin_callback_args) so the plugin can mark the op id
 * reusable, and only then runs the user callback: a callback may repost
 * the same op id. Anything callback_info points to (a recv_unexpected
 * source address) must outlive plugin_callback; the source address belongs
 * to the user.
 */
struct na_cb_completion_data {
    struct na_cb_info callback_info;
    na_cb_t callback;
    void (*plugin_callback)(void *arg);
    void *plugin_callback_args;
    STAILQ_ENTRY(na_cb_completion_data) entry;
};

/* The core's class: the plugin keeps its private state in plugin_class. */
struct na_class {
    const struct na_class_ops *ops;
    void *plugin_class; /* owned by the plugin */
    char *protocol_name;
    bool listen;
    unsigned int context_count; /* guarded by lock */
    pthread_mutex_t lock;
};

/*
 * The core's context: the completion queue lives here; the plugin keeps its
 * per-context state in plugin_context.
 */
struct na_context {
    na_class_t *na_class;
    void *plugin_context; /* owned by the plugin */
    uint8_t id;
    pthread_mutex_t lock; /* guards queue and count */
    STAILQ_HEAD(, na_cb_completion_data) queue;
    unsigned int count;
};

/*
 * Queue a completion on a context. Thread-safe; never runs the callback.
 * It does not wake a thread blocked in the plugin's poll_wait: a plugin that
 * queues completions outside its own progress loop wakes its waiters itself.
 */
void na_cb_completion_add(na_context_t *context,
                          struct na_cb_completion_data *data);

struct na_class_ops {
    /* Plugin name as used before '+' in info strings: "sim", "ofi". */
    const char *class_name;

    /* Whether the plugin serves this protocol ("sim", "tcp", ...). Pure. */
    bool (*check_protocol)(const char *protocol_name);

    /* Set na_class->plugin_class. Errors: NA_INVALID_ARG (bad host),
     * NA_NOMEM, NA_NODEV / NA_PROTONOSUPPORT (fabric absent),
     * NA_ADDRINUSE, NA_OPNOTSUPPORTED (an init_info field it cannot honour).
     * On error nothing is left allocated. */
    na_return_t (*initialize)(na_class_t *na_class, const struct na_info *info,
                              bool listen);
    /* Release everything. Called only once no context remains. */
    na_return_t (*finalize)(na_class_t *na_class);

    /* Create per-context state; *plugin_context is stored by the core. */
    na_return_t (*context_create)(na_class_t *na_class, na_context_t *context,
                                  uint8_t id, void **plugin_context);
    /* Fails with NA_BUSY while operations posted on it are pending. */
    na_return_t (*context_destroy)(na_class_t *na_class, void *plugin_context);

    /* Operation ids: allocated here, reused for one op at a time. */
    na_op_id_t *(*op_create)(na_class_t *na_class, unsigned long flags);
    /* NA_BUSY if its operation has not completed and been triggered. */
    na_return_t (*op_destroy)(na_class_t *na_class, na_op_id_t *op_id);

    /* Addresses: the plugin allocates; the caller frees with addr_free. */
    na_return_t (*addr_lookup)(na_class_t *na_class, const char *name,
                               na_addr_t *addr);
    void (*addr_free)(na_class_t *na_class, na_addr_t addr);
    na_return_t (*addr_self)(na_class_t *na_class, na_addr_t *addr);
    na_return_t (*addr_dup)(na_class_t *na_class, na_addr_t addr,
                            na_addr_t *new_addr);
    bool (*addr_cmp)(na_class_t *na_class, na_addr_t addr1, na_addr_t addr2);
    /* Optional (NULL: the plugin keeps nothing per peer). Forget what the
     * plugin keeps about the peer of `addr` so a later lookup starts
     * afresh; `addr` stays valid until its references are freed. Never
     * called with the class's own address. */
    na_return_t (*addr_set_remove)(na_class_t *na_class, na_addr_t addr);
    bool (*addr_is_self)(na_class_t *na_class, na_addr_t addr);
    /* Same contract as NA_Addr_to_string(). */
    na_return_t (*addr_to_string)(na_class_t *na_class, char *buf,
                                  size_t *buf_size, na_addr_t addr);
    size_t (*addr_get_serialize_size)(na_class_t *na_class, na_addr_t addr);
    /* NA_OVERFLOW if buf_size is too small. */
    na_return_t (*addr_serialize)(na_class_t *na_class, void *buf,
                                  size_t buf_size, na_addr_t addr);
    /* Untrusted bytes: NA_PROTOCOL_ERROR / NA_MSGSIZE on malformed input,
     * never a crash or an out-of-bounds read. */
    na_return_t (*addr_deserialize)(na_class_t *na_class, na_addr_t *addr,
                                    const void *buf, size_t buf_size);

    /* Message limits (payload bytes the caller may use). */
    size_t (*msg_get_max_unexpected_size)(const na_class_t *na_class);
    size_t (*msg_get_max_expected_size)(const na_class_t *na_class);
    na_tag_t (*msg_get_max_tag)(const na_class_t *na_class);

    /* Message buffers; plugin_data travels with the buffer to the send and
     * recv ops. */
    void *(*msg_buf_alloc)(na_class_t *na_class, size_t buf_size,
                           unsigned long flags, void **plugin_data);
    void (*msg_buf_free)(na_class_t *na_class, void *buf, void *plugin_data);

    /*
     * Messages. On NA_SUCCESS the plugin owns buf and op_id until the
     * completion's plugin_callback runs, and the op completes exactly once.
     * On error nothing was posted and no completion will come.
     * Errors at post time: NA_MSGSIZE (buf_size over the limit), NA_AGAIN
     * (resources exhausted, retry), NA_BUSY (op_id still in use).
     * Errors at completion: NA_HOSTUNREACH, NA_CANCELED, NA_IO_ERROR, ...
     * recv_unexpected reports source (a new address the callee frees) and
     * tag; a message longer than buf_size completes with NA_MSGSIZE.
     */
    na_return_t (*msg_send_unexpected)(na_class_t *na_class,
                                       na_context_t *context, na_cb_t callback,
                                       void *arg, const void *buf,
                                       size_t buf_size, void *plugin_data,
                                       na_addr_t dest_addr, uint8_t dest_id,
                                       na_tag_t tag, na_op_id_t *op_id);
    na_return_t (*msg_recv_unexpected)(na_class_t *na_class,
                                       na_context_t *context, na_cb_t callback,
                                       void *arg, void *buf, size_t buf_size,
                                       void *plugin_data, na_op_id_t *op_id);
    na_return_t (*msg_send_expected)(na_class_t *na_class,
                                     na_context_t *context, na_cb_t callback,
                                     void *arg, const void *buf,
                                     size_t buf_size, void *plugin_data,
                                     na_addr_t dest_addr, uint8_t dest_id,
                                     na_tag_t tag, na_op_id_t *op_id);
    /* Matches the first expected message from (source_addr, source_id)
     * with this tag. */
    na_return_t (*msg_recv_expected)(na_class_t *na_class,
                                     na_context_t *context, na_cb_t callback,
                                     void *arg, void *buf, size_t buf_size,
                                     void *plugin_data, na_addr_t source_addr,
                                     uint8_t source_id, na_tag_t tag,
                                     na_op_id_t *op_id);

    /* Memory handles: the plugin allocates; mem_handle_free releases. The
     * memory itself stays the caller's. */
    na_return_t (*mem_handle_create)(na_class_t *na_class, void *buf,
                                     size_t buf_size, unsigned long flags,
                                     na_mem_handle_t *mem_handle);
    /* NA_OPNOTSUPPORTED if the plugin cannot describe several segments in
     * one handle (the bulk layer then uses one handle per segment). */
    na_return_t (*mem_handle_create_segments)(na_class_t *na_class,
                                              struct na_segment *segments,
                                              size_t segment_count,
                                              unsigned long flags,
                                              na_mem_handle_t *mem_handle);
    void (*mem_handle_free)(na_class_t *na_class, na_mem_handle_t mem_handle);
    /* Make the region reachable by peers' RMA (pin and key it). */
    na_return_t (*mem_register)(na_class_t *na_class,
                                na_mem_handle_t mem_handle,
                                enum na_mem_type mem_type, uint64_t device);
    /* After this, peers' RMA on the region fails with NA_ACCESS/NA_FAULT. */
    na_return_t (*mem_deregister)(na_class_t *na_class,
                                  na_mem_handle_t mem_handle);
    size_t (*mem_handle_get_serialize_size)(na_class_t *na_class,
                                            na_mem_handle_t mem_handle);
    na_return_t (*mem_handle_serialize)(na_class_t *na_class, void *buf,
                                        size_t buf_size,
                                        na_mem_handle_t mem_handle);
    /* Untrusted bytes: same rule as addr_deserialize. The resulting handle
     * describes remote memory and may only be used as an RMA target. */
    na_return_t (*mem_handle_deserialize)(na_class_t *na_class,
                                          na_mem_handle_t *mem_handle,
                                          const void *buf, size_t buf_size);

    /*
     * RMA. Local and remote ranges must lie inside their handles and the
     * handles must grant the access (remote write for put, remote read for
     * get): a violation is either refused at post time (NA_INVALID_ARG,
     * NA_PERMISSION) or completes with NA_ACCESS / NA_PERMISSION / NA_FAULT,
     * and never touches memory outside the regions.
     */
    na_return_t (*put)(na_class_t *na_class, na_context_t *context,
                       na_cb_t callback, void *arg,
                       na_mem_handle_t local_mem_handle,
                       na_offset_t local_offset,
                       na_mem_handle_t remote_mem_handle,
                       na_offset_t remote_offset, size_t data_size,
                       na_addr_t remote_addr, uint8_t remote_id,
                       na_op_id_t *op_id);
    na_return_t (*get)(na_class_t *na_class, na_context_t *context,
                       na_cb_t callback, void *arg,
                       na_mem_handle_t local_mem_handle,
                       na_offset_t local_offset,
                       na_mem_handle_t remote_mem_handle,
                       na_offset_t remote_offset, size_t data_size,
                       na_addr_t remote_addr, uint8_t remote_id,
                       na_op_id_t *op_id);

    /* A file descriptor to sleep on, or -1 if the plugin has none. */
    int (*poll_get_fd)(na_class_t *na_class, na_context_t *context);
    /* Non-blocking progress; *count = completions queued on `context`. */
    na_return_t (*poll)(na_class_t *na_class, na_context_t *context,
                        unsigned int *count);
    /* Blocking progress, up to timeout_ms on the plugin's clock. Returns
     * NA_SUCCESS once at least one completion was queued on `context`, or
     * NA_TIMEOUT. May return early with NA_TIMEOUT and *count 0 (spurious
     * wake-up); callers loop. */
    na_return_t (*poll_wait)(na_class_t *na_class, na_context_t *context,
                             unsigned int timeout_ms, unsigned int *count);

    /* Asynchronous cancel: the op still completes once (NA_CANCELED or
     * its real result). Unknown or completed op: NA_SUCCESS, no effect. */
    na_return_t (*cancel)(na_class_t *na_class, na_context_t *context,
                          na_op_id_t *op_id);

    /* Monotonic clock in nanoseconds; virtual on the simulated fabric. */
    uint64_t (*clock_now)(na_class_t *na_class);

    /* Optional (NULL: nothing to do). Remove what earlier processes of this
     * plugin left behind when they ended without finalizing (files in
     * /dev/shm, sockets). Called by NA_Cleanup(), which may run while
     * classes of this process exist: it must not touch those. */
    void (*cleanup)(void);

    /* Optional (NULL: 1). Most segments mem_handle_create_segments takes. */
    size_t (*mem_handle_get_max_segments)(const na_class_t *na_class);
};

/* Shared helpers for plugins. */

/* Real monotonic time in nanoseconds (CLOCK_MONOTONIC). */
uint64_t na_plugin_clock_monotonic_ns(void);

/* Stub for ops a plugin cannot support. */
na_return_t na_plugin_mem_handle_create_segments_opnotsupported(
    na_class_t *na_class, struct na_segment *segments, size_t segment_count,
    unsigned long flags, na_mem_handle_t *mem_handle);

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
