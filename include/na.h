/*
 * Quicksilver NA: the network abstraction under the RPC layer.
 *
 * NA moves three kinds of things between peers: unexpected messages (the
 * receiver does not know the sender in advance), expected messages (matched
 * by source and tag), and one-sided RMA (put/get) on registered memory.
 * Every operation is non-blocking and completes exactly once, by a callback
 * that NA_Trigger() runs: with NA_SUCCESS, an error, or NA_CANCELED.
 *
 * Nothing progresses except inside NA_Poll(), NA_Poll_wait() and
 * NA_Trigger(); callbacks never run inside the call that posted the
 * operation.
 */
#ifndef NA_H
#define NA_H

#include "qs_export.h"
#include "na_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Initialize a plugin from an info string "[class+]protocol[://host[:port]]",
 * e.g. "sim", "sim://server", "ofi+tcp://127.0.0.1:0", "tcp".
 * With no class, the first registered plugin that accepts the protocol is
 * used. `listen` makes the class reachable by peers.
 * Returns NULL on error (bad string, no plugin, plugin failure); the reason
 * is printed on stderr once.
 * When the environment variable QS_NA_INFO (NA_INFO_ENV) holds an info
 * string, it replaces `info_string` unless both name the same protocol:
 * QS_NA_INFO=sim runs a program written for "tcp" on the simulated fabric,
 * and leaves "sim://server" as it is.
 */
#define NA_INFO_ENV "QS_NA_INFO"
/* Create an NA class as described above; NA_Initialize_opt() also takes
 * init options, read as Mercury 4.0's struct na_init_info (NULL for the
 * defaults). NULL on error. */
QS_EXPORT na_class_t *NA_Initialize(const char *info_string, bool listen);
QS_EXPORT na_class_t *
NA_Initialize_opt(const char *info_string, bool listen,
                  const struct na_init_info *na_init_info);

/*
 * NA_Initialize_opt() with the version of struct na_init_info the caller
 * was written for, as in Mercury: NA_VERSION(5, 0) and later read every
 * field; earlier versions (NA_Initialize_opt() passes NA_VERSION(4, 0))
 * ignore traffic_class and multi_recv_op_max. With a non-NULL
 * na_init_info, version 0 or a major version above NA_VERSION_MAJOR is
 * refused (NULL, the reason logged). A traffic_class outside enum
 * na_traffic_class is refused; a valid one is accepted by every plugin,
 * none of which distinguishes classes yet.
 */
QS_EXPORT na_class_t *
NA_Initialize_opt2(const char *info_string, bool listen, unsigned int version,
                   const struct na_init_info *na_init_info);

/* Remove what earlier processes left behind when they ended without
 * finalizing (each plugin's temporary files). Classes that exist in this
 * process are not affected. No plugin of this build keeps such files
 * except the shared-memory one, when built. */
QS_EXPORT void NA_Cleanup(void);

/* Version of the NA API implemented (NA_VERSION_MAJOR, _MINOR, _PATCH). A
 * NULL pointer is skipped. */
QS_EXPORT void NA_Version_get(unsigned int *major, unsigned int *minor,
                              unsigned int *patch);

/* Finalize a class. Fails with NA_BUSY while contexts still exist. */
QS_EXPORT na_return_t NA_Finalize(na_class_t *na_class);

/* Names of the plugin ("sim", "ofi", ...) and of the protocol in use. */
QS_EXPORT const char *NA_Get_class_name(const na_class_t *na_class);
QS_EXPORT const char *NA_Get_class_protocol(const na_class_t *na_class);
QS_EXPORT bool NA_Is_listening(const na_class_t *na_class);

/* Create / destroy a context (a completion queue). Destroy fails with
 * NA_BUSY while completions are still queued on it. */
QS_EXPORT na_context_t *NA_Context_create(na_class_t *na_class);
QS_EXPORT na_context_t *NA_Context_create_id(na_class_t *na_class, uint8_t id);
QS_EXPORT na_return_t NA_Context_destroy(na_class_t *na_class,
                                         na_context_t *context);

/* Operation ids are created once and reused for many operations, one at a
 * time. Destroying an op id whose operation is still pending is an error
 * (NA_BUSY is returned through the log; the id is leaked, not freed). */
QS_EXPORT na_op_id_t *NA_Op_create(na_class_t *na_class, unsigned long flags);
QS_EXPORT na_return_t NA_Op_destroy(na_class_t *na_class, na_op_id_t *op_id);

/* Addresses. Lookup is immediate; a well-formed name for an unknown peer
 * succeeds and later operations to it fail with NA_HOSTUNREACH. */
/*
 * Hint that the peer behind `addr` is gone: the plugin forgets what it
 * keeps about it, so a later lookup starts afresh; `addr` must still be
 * freed. NA_INVALID_ARG for NULL arguments or the class's own address.
 * (Mercury's takes a na_addr_t *, its na_addr_t being a structure.)
 */
QS_EXPORT na_return_t NA_Addr_set_remove(na_class_t *na_class, na_addr_t addr);
QS_EXPORT na_return_t NA_Addr_lookup(na_class_t *na_class, const char *name,
                                     na_addr_t *addr);
QS_EXPORT void NA_Addr_free(na_class_t *na_class, na_addr_t addr);
QS_EXPORT na_return_t NA_Addr_self(na_class_t *na_class, na_addr_t *addr);
QS_EXPORT na_return_t NA_Addr_dup(na_class_t *na_class, na_addr_t addr,
                                  na_addr_t *new_addr);
QS_EXPORT bool NA_Addr_cmp(na_class_t *na_class, na_addr_t addr1,
                           na_addr_t addr2);
QS_EXPORT bool NA_Addr_is_self(na_class_t *na_class, na_addr_t addr);
/* Writes a NUL-terminated string. If buf is NULL, only *buf_size is set
 * (including the NUL). If *buf_size is too small, returns NA_OVERFLOW and
 * sets *buf_size to the size needed. */
QS_EXPORT na_return_t NA_Addr_to_string(na_class_t *na_class, char *buf,
                                        size_t *buf_size, na_addr_t addr);
QS_EXPORT size_t NA_Addr_get_serialize_size(na_class_t *na_class,
                                            na_addr_t addr);
QS_EXPORT na_return_t NA_Addr_serialize(na_class_t *na_class, void *buf,
                                        size_t buf_size, na_addr_t addr);
/* buf holds untrusted bytes: any malformed input returns an error. */
QS_EXPORT na_return_t NA_Addr_deserialize(na_class_t *na_class, na_addr_t *addr,
                                          const void *buf, size_t buf_size);

/* Message size limits. */
QS_EXPORT size_t NA_Msg_get_max_unexpected_size(const na_class_t *na_class);
QS_EXPORT size_t NA_Msg_get_max_expected_size(const na_class_t *na_class);
QS_EXPORT na_tag_t NA_Msg_get_max_tag(const na_class_t *na_class);

/* Message buffers suited to the plugin (registered where that matters). */
QS_EXPORT void *NA_Msg_buf_alloc(na_class_t *na_class, size_t buf_size,
                                 unsigned long flags, void **plugin_data);
QS_EXPORT na_return_t NA_Msg_buf_free(na_class_t *na_class, void *buf,
                                      void *plugin_data);

/*
 * Messages. The buffer belongs to the plugin from a successful post until
 * the operation's callback runs; on a failed post it stays the caller's
 * and no callback runs.
 */
QS_EXPORT na_return_t NA_Msg_send_unexpected(
    na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
    const void *buf, size_t buf_size, void *plugin_data, na_addr_t dest_addr,
    uint8_t dest_id, na_tag_t tag, na_op_id_t *op_id);
QS_EXPORT na_return_t NA_Msg_recv_unexpected(
    na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
    void *buf, size_t buf_size, void *plugin_data, na_op_id_t *op_id);
/* Receive several unexpected messages into one buffer (Mercury 2.4): no
 * plugin here exposes multi-receive buffers through NA, so after the
 * argument checks (NA_INVALID_ARG) it returns NA_OPNOTSUPPORTED and no
 * callback runs, as Mercury's plugins without the feature do; check
 * NA_Has_opt_feature(NA_OPT_MULTI_RECV) first, as Mercury's HG does. */
QS_EXPORT na_return_t NA_Msg_multi_recv_unexpected(
    na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
    void *buf, size_t buf_size, void *plugin_data, na_op_id_t *op_id);
QS_EXPORT na_return_t NA_Msg_send_expected(
    na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
    const void *buf, size_t buf_size, void *plugin_data, na_addr_t dest_addr,
    uint8_t dest_id, na_tag_t tag, na_op_id_t *op_id);
QS_EXPORT na_return_t NA_Msg_recv_expected(
    na_class_t *na_class, na_context_t *context, na_cb_t callback, void *arg,
    void *buf, size_t buf_size, void *plugin_data, na_addr_t source_addr,
    uint8_t source_id, na_tag_t tag, na_op_id_t *op_id);

/* Memory handles. flags: NA_MEM_READ_ONLY, NA_MEM_WRITE_ONLY,
 * NA_MEM_READWRITE, the access a remote peer is granted. */
QS_EXPORT na_return_t NA_Mem_handle_create(na_class_t *na_class, void *buf,
                                           size_t buf_size, unsigned long flags,
                                           na_mem_handle_t *mem_handle);
QS_EXPORT na_return_t NA_Mem_handle_create_segments(
    na_class_t *na_class, struct na_segment *segments, size_t segment_count,
    unsigned long flags, na_mem_handle_t *mem_handle);
QS_EXPORT void NA_Mem_handle_free(na_class_t *na_class,
                                  na_mem_handle_t mem_handle);
QS_EXPORT na_return_t NA_Mem_register(na_class_t *na_class,
                                      na_mem_handle_t mem_handle,
                                      enum na_mem_type mem_type,
                                      uint64_t device);
QS_EXPORT na_return_t NA_Mem_deregister(na_class_t *na_class,
                                        na_mem_handle_t mem_handle);
QS_EXPORT size_t NA_Mem_handle_get_serialize_size(na_class_t *na_class,
                                                  na_mem_handle_t mem_handle);
QS_EXPORT na_return_t NA_Mem_handle_serialize(na_class_t *na_class, void *buf,
                                              size_t buf_size,
                                              na_mem_handle_t mem_handle);
/* buf holds untrusted bytes: any malformed input returns an error. */
QS_EXPORT na_return_t NA_Mem_handle_deserialize(na_class_t *na_class,
                                                na_mem_handle_t *mem_handle,
                                                const void *buf,
                                                size_t buf_size);

/* One-sided RMA between a local registered handle and a remote one. */
QS_EXPORT na_return_t NA_Put(na_class_t *na_class, na_context_t *context,
                             na_cb_t callback, void *arg,
                             na_mem_handle_t local_mem_handle,
                             na_offset_t local_offset,
                             na_mem_handle_t remote_mem_handle,
                             na_offset_t remote_offset, size_t data_size,
                             na_addr_t remote_addr, uint8_t remote_id,
                             na_op_id_t *op_id);
QS_EXPORT na_return_t NA_Get(na_class_t *na_class, na_context_t *context,
                             na_cb_t callback, void *arg,
                             na_mem_handle_t local_mem_handle,
                             na_offset_t local_offset,
                             na_mem_handle_t remote_mem_handle,
                             na_offset_t remote_offset, size_t data_size,
                             na_addr_t remote_addr, uint8_t remote_id,
                             na_op_id_t *op_id);

/*
 * Progress. NA_Poll() makes non-blocking progress and reports in *count the
 * number of completions it queued. NA_Poll_wait() blocks up to timeout_ms
 * (virtual time on the simulated fabric) until at least one completion is
 * queued on the context; it returns NA_TIMEOUT when none was.
 */
QS_EXPORT na_return_t NA_Poll(na_class_t *na_class, na_context_t *context,
                              unsigned int *count);
QS_EXPORT na_return_t NA_Poll_wait(na_class_t *na_class, na_context_t *context,
                                   unsigned int timeout_ms,
                                   unsigned int *count);
/* A file descriptor that becomes readable when progress is needed, or -1. */
QS_EXPORT int NA_Poll_get_fd(na_class_t *na_class, na_context_t *context);

/*
 * Whether it is safe to block on NA_Poll_get_fd() now: false while
 * completions wait for NA_Trigger() (they are work to do at once). NULL
 * or mismatched arguments: false.
 */
QS_EXPORT bool NA_Poll_try_wait(na_class_t *na_class, na_context_t *context);

/* Deprecated in Mercury in favour of NA_Poll_wait(), which it calls:
 * NA_SUCCESS once a completion is queued, NA_TIMEOUT otherwise. */
QS_EXPORT na_return_t NA_Progress(na_class_t *na_class, na_context_t *context,
                                  unsigned int timeout_ms);

/* Run up to max_count queued callbacks; *actual_count (if not NULL) gets
 * the number run. Returns NA_TIMEOUT when nothing was queued. */
QS_EXPORT na_return_t NA_Trigger(na_context_t *context, unsigned int max_count,
                                 unsigned int *actual_count);

/* Number of completions waiting for NA_Trigger(). */
QS_EXPORT unsigned int NA_Context_get_completion_count(na_context_t *context);

/*
 * Cancel a posted operation. Asynchronous: the callback still runs once,
 * with NA_CANCELED or with the result that won the race. Cancelling an
 * operation that already completed is a no-op returning NA_SUCCESS.
 */
QS_EXPORT na_return_t NA_Cancel(na_class_t *na_class, na_context_t *context,
                                na_op_id_t *op_id);

/*
 * The class's clock in nanoseconds: monotonic real time on real fabrics,
 * virtual time on the simulated fabric. Every timeout above NA reads it.
 */
QS_EXPORT uint64_t NA_Clock_now(na_class_t *na_class);

/* Human-readable string for a return code; never NULL. */
QS_EXPORT const char *NA_Error_to_string(na_return_t errnum);

/* Whether the class supports the optional features in `flags`
 * (NA_OPT_MULTI_RECV, NA_OPT_FIREWALL_ADDR). No plugin here offers them
 * through the NA API (ofi uses multi-receive buffers internally), so the
 * answer is false for any non-zero flags; NULL class: false. */
QS_EXPORT bool NA_Has_opt_feature(na_class_t *na_class, unsigned long flags);

/* Bytes the plugin reserves at the start of message buffers: 0 for every
 * plugin here (they frame messages themselves), so a whole buffer carries
 * payload. */
QS_EXPORT size_t NA_Msg_get_unexpected_header_size(const na_class_t *na_class);
QS_EXPORT size_t NA_Msg_get_expected_header_size(const na_class_t *na_class);
/* Prepare a buffer's reserved header: with no reserved bytes there is
 * nothing to write. NA_INVALID_ARG for a NULL class or buffer or size 0. */
QS_EXPORT na_return_t NA_Msg_init_unexpected(na_class_t *na_class, void *buf,
                                             size_t buf_size);
QS_EXPORT na_return_t NA_Msg_init_expected(na_class_t *na_class, void *buf,
                                           size_t buf_size);
/* Most segments NA_Mem_handle_create_segments() takes on this class: 1 on
 * plugins without multi-segment handles (ofi, verbs, sm), more on sim. */
QS_EXPORT size_t NA_Mem_handle_get_max_segments(const na_class_t *na_class);

/*
 * The protocols this build serves, as a list of class+protocol pairs
 * (struct na_protocol_info) to free with NA_Free_protocol_info().
 * info_string NULL lists them all; "<protocol>" ("tcp") or
 * "<class+protocol>" ("ofi+tcp") keeps the matching ones (an address
 * part is ignored). Each entry is a pair one of the built plugins accepts
 * (sim+sim; na+sm and na+tcp; ofi+tcp, ofi+sockets and ofi+shm when built
 * with libfabric; verbs+verbs when built with rdma-core); the fabric is
 * not probed, so a listed pair may still fail to initialize where its
 * provider or device is missing. No match: NA_SUCCESS and an empty (NULL)
 * list, as in Mercury. A malformed string: NA_INVALID_ARG.
 */
QS_EXPORT na_return_t NA_Get_protocol_info(
    const char *info_string, struct na_protocol_info **na_protocol_info_p);
QS_EXPORT void NA_Free_protocol_info(struct na_protocol_info *na_protocol_info);

/* Write NA's process-wide counts (live classes and contexts, callbacks
 * triggered) to the log at the "min_debug" level of the "na" subsystem:
 * nothing appears at the default level, as in Mercury. The callback count
 * may lag by up to 1,023 per live context: each context adds its own in
 * batches, and all of them when it is destroyed. */
QS_EXPORT void NA_Diag_dump_counters(void);

/* Set the log level (same names as HG_Set_log_level()) and enable the "na"
 * subsystem, which covers the plugins, at it. Shares one sink with HG. */
QS_EXPORT void NA_Set_log_level(const char *level);

/*
 * Parse "[class+]protocol[://host]" into its parts. Pure function on
 * untrusted input; each output buffer has out_size bytes and receives ""
 * for an absent part. Returns NA_INVALID_ARG for a malformed string and
 * NA_OVERFLOW when a part does not fit.
 */
QS_EXPORT na_return_t NA_Info_string_parse(const char *info_string,
                                           char *class_name,
                                           char *protocol_name, char *host_name,
                                           size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* NA_H */
