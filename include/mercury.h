/*
 * Quicksilver HG: the RPC layer.
 *
 * A program registers RPCs by name on an HG class, creates handles to a
 * target address, forwards encoded input and receives encoded output. All
 * calls are non-blocking; completions are queued on an HG context and their
 * callbacks run from HG_Trigger(). Nothing progresses outside HG_Progress()
 * and HG_Trigger(); a callback never runs inside the call that started its
 * operation.
 *
 * Ownership in one sentence each:
 *  - A handle from HG_Create() is the caller's until HG_Destroy(); the
 *    library holds its own reference while an operation is in flight, so
 *    destroying a handle inside its callback is safe.
 *  - A handle passed to an RPC callback belongs to that callback, which
 *    must HG_Destroy() it (after HG_Respond(), or right away for one-way
 *    RPCs).
 *  - hg_info->addr of a handle belongs to the handle: HG_Addr_dup() it to
 *    keep it.
 */
#ifndef MERCURY_H
#define MERCURY_H

#include "qs_export.h"
#include "mercury_types.h"
#include "mercury_bulk.h"
#include "na.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Quicksilver's own release. */
#define QS_VERSION_STRING "0.1.0"

/* A long timeout (one hour, in ms) for HG_Progress()/HG_Trigger() loops
 * that mean "until something happens". */
#define HG_MAX_IDLE_TIME (3600 * 1000)

/*
 * Version of the HG API this library implements (HG_VERSION_MAJOR,
 * _MINOR, _PATCH: Mercury 2.4.1). A NULL pointer is skipped, as in
 * Mercury; always returns HG_SUCCESS.
 */
QS_EXPORT hg_return_t HG_Version_get(unsigned int *major, unsigned int *minor,
                                     unsigned int *patch);

/* Human-readable string for a return code; never NULL. */
QS_EXPORT const char *HG_Error_to_string(hg_return_t errnum);

/*
 * Logging. The library has one log sink shared by every layer; these set
 * it for all classes, as in Mercury 2.4. HG_LOG_LEVEL and HG_LOG_SUBSYS in
 * the environment give the initial settings (defaults: "error" and
 * "hg_all"). Levels: "none", "fatal", "error", "warning", "min_debug",
 * "info", "debug" (and "trace", which is more verbose than "debug" here,
 * while Mercury reads it as "min_debug"). Subsystems: "hg_all" (everything),
 * "hg", "bulk", "proc", "na", "sim", "ofi", "verbs", "sm", "margo".
 */

/* Set the log level and enable the "hg" subsystem at it. An unknown level
 * name is reported and changes nothing (Mercury falls back to "none"). */
QS_EXPORT void HG_Set_log_level(const char *level);

/* Replace the list of enabled subsystems: "subsys1,subsys2,~subsys3"; a
 * subsystem is logged at the log level when it or its parent is listed,
 * and never when listed with "~". */
QS_EXPORT void HG_Set_log_subsys(const char *subsys);

/* Function that writes each log line, called once per line as
 * log_func(stream, "%s", line) with the line ending in '\n'; NULL
 * restores fprintf. */
QS_EXPORT void HG_Set_log_func(int (*log_func)(FILE *stream, const char *format,
                                               ...));

/* Stream for one group of levels: "fatal"/"error", "warning", or
 * "min_debug"/"info"/"debug"/"trace". The default is stderr for all. */
QS_EXPORT void HG_Set_log_stream(const char *level, FILE *stream);

/* NA_Get_protocol_info() / NA_Free_protocol_info() under their HG names
 * (na.h: what the list holds and how info_string filters it). */
QS_EXPORT hg_return_t HG_Get_na_protocol_info(
    const char *info_string, struct na_protocol_info **na_protocol_info_p);
QS_EXPORT void
HG_Free_na_protocol_info(struct na_protocol_info *na_protocol_info);

/* Write the counters of every live class (those of
 * HG_Class_get_counters()) to the log at the "min_debug" level of the
 * "hg" subsystem, then NA's (NA_Diag_dump_counters()): nothing appears at
 * the default level, as in Mercury. */
QS_EXPORT void HG_Diag_dump_counters(void);

/*
 * Initialize an HG class over the NA plugin that `na_info_string` selects
 * ("[class+]protocol[://host]", e.g. "sim://server", "ofi+tcp://127.0.0.1:0",
 * "tcp"). `na_listen` makes it reachable by peers. Returns NULL on error and
 * prints why on stderr.
 *
 * HG_Init_opt() / HG_Init_opt2() take options (struct hg_init_info, start
 * from HG_INIT_INFO_INITIALIZER). Every field either works or is refused
 * with a message naming it. auto_sm = HG_TRUE adds a shared-memory class
 * (sm_info_string, default "na+sm") beside the network class: peers on the
 * same node are reached over shared memory (docs/plugin-sm.md); it is
 * refused with a caller's na_class, and sm_info_string without auto_sm is
 * refused. A given na_class is used and not finalized by HG_Finalize().
 * HG_Init_opt2() reads `hg_init_info` as the version `version` of the
 * structure, as Mercury does: pass HG_VERSION(2, 4) to use every field.
 * With HG_VERSION(2, 3), traffic_class, no_overflow, multi_recv_op_max and
 * multi_recv_copy_threshold are ignored (defaults apply); below 2.3,
 * no_multi_recv and release_input_early are ignored too. HG_Init_opt() is
 * HG_Init_opt2() with HG_VERSION(2, 2). With a non-NULL hg_init_info,
 * version 0 and a major version other than 2 are refused (NULL returned,
 * the reason logged); Mercury does not check the major version.
 */
QS_EXPORT hg_class_t *HG_Init(const char *na_info_string, hg_bool_t na_listen);
QS_EXPORT hg_class_t *HG_Init_opt(const char *na_info_string,
                                  hg_bool_t na_listen,
                                  const struct hg_init_info *hg_init_info);
QS_EXPORT hg_class_t *HG_Init_opt2(const char *na_info_string,
                                   hg_bool_t na_listen, unsigned int version,
                                   const struct hg_init_info *hg_init_info);

/*
 * Finalize a class. Returns HG_BUSY (and finalizes nothing) while contexts,
 * handles, addresses or bulk handles created from it still exist; the
 * message names what is left.
 */
QS_EXPORT hg_return_t HG_Finalize(hg_class_t *hg_class);

/* Free the class-wide cleanup resources of a finalized program (no-op). */
QS_EXPORT void HG_Cleanup(void);

/* Class information. */
QS_EXPORT const char *HG_Class_get_name(const hg_class_t *hg_class); /* "sim" */
QS_EXPORT const char *
HG_Class_get_protocol(const hg_class_t *hg_class); /* "tcp" */
QS_EXPORT hg_bool_t HG_Class_is_listening(const hg_class_t *hg_class);
/* Largest encoded input / output that travels inside the RPC message;
 * larger arguments travel through bulk transparently. */
QS_EXPORT hg_size_t HG_Class_get_input_eager_size(const hg_class_t *hg_class);
QS_EXPORT hg_size_t HG_Class_get_output_eager_size(const hg_class_t *hg_class);
QS_EXPORT na_class_t *HG_Class_get_na(const hg_class_t *hg_class);
/* User data attached to the class; free_callback runs at HG_Finalize(). */
QS_EXPORT hg_return_t HG_Class_set_data(hg_class_t *hg_class, void *data,
                                        void (*free_callback)(void *));
QS_EXPORT void *HG_Class_get_data(const hg_class_t *hg_class);

/*
 * Call `callback(handle, arg)` each time a handle is handed out for a new
 * use: by HG_Create() and for every request receive a listening context
 * posts, before any RPC callback sees the handle. It may attach data with
 * HG_Set_data() (the data's free callback runs when that use ends). An
 * error it returns makes HG_Create() fail with that code, or leaves that
 * receive unposted (logged). NULL removes the callback. Set it before
 * creating contexts: it is read without a lock.
 */
QS_EXPORT hg_return_t HG_Class_set_handle_create_callback(
    hg_class_t *hg_class, hg_return_t (*callback)(hg_handle_t, void *),
    void *arg);

/*
 * Contexts: each has its own completion queue and receives the requests
 * sent to its id. HG_Context_destroy() returns HG_BUSY while handles or
 * operations created on it are alive.
 */
QS_EXPORT hg_context_t *HG_Context_create(hg_class_t *hg_class);
QS_EXPORT hg_context_t *HG_Context_create_id(hg_class_t *hg_class,
                                             hg_uint8_t id);
QS_EXPORT hg_return_t HG_Context_destroy(hg_context_t *context);
/*
 * Cancel the context's posted request receives and stop reposting them:
 * no further RPC reaches this context (requests already received still
 * run). Waits for the cancelled receives to complete, so it must not be
 * called from an RPC callback. HG_SUCCESS also for a context that posts
 * nothing; HG_Context_destroy() afterwards has nothing left to cancel.
 */
QS_EXPORT hg_return_t HG_Context_unpost(hg_context_t *context);
QS_EXPORT hg_class_t *HG_Context_get_class(const hg_context_t *context);
QS_EXPORT hg_uint8_t HG_Context_get_id(const hg_context_t *context);
QS_EXPORT hg_return_t HG_Context_set_data(hg_context_t *context, void *data,
                                          void (*free_callback)(void *));
QS_EXPORT void *HG_Context_get_data(const hg_context_t *context);

/*
 * Registration. Ids are a hash of the name, so origin and target agree
 * without talking. HG_Register_name() returns 0 on error (0 is never a
 * valid id). Registering a name twice updates its callbacks and returns the
 * same id. HG_Register() registers a caller-chosen id.
 */
QS_EXPORT hg_id_t HG_Register_name(hg_class_t *hg_class, const char *func_name,
                                   hg_proc_cb_t in_proc_cb,
                                   hg_proc_cb_t out_proc_cb,
                                   hg_rpc_cb_t rpc_cb);
QS_EXPORT hg_return_t HG_Register(hg_class_t *hg_class, hg_id_t id,
                                  hg_proc_cb_t in_proc_cb,
                                  hg_proc_cb_t out_proc_cb, hg_rpc_cb_t rpc_cb);
QS_EXPORT hg_return_t HG_Deregister(hg_class_t *hg_class, hg_id_t id);
/* Whether a name / id is registered (*flag set on HG_SUCCESS). */
QS_EXPORT hg_return_t HG_Registered_name(hg_class_t *hg_class,
                                         const char *func_name, hg_id_t *id,
                                         hg_bool_t *flag);
QS_EXPORT hg_return_t HG_Registered(hg_class_t *hg_class, hg_id_t id,
                                    hg_bool_t *flag);
/* Data attached to an RPC id, freed by free_callback at deregistration. */
QS_EXPORT hg_return_t HG_Register_data(hg_class_t *hg_class, hg_id_t id,
                                       void *data,
                                       void (*free_callback)(void *));
QS_EXPORT void *HG_Registered_data(hg_class_t *hg_class, hg_id_t id);
/* One-way RPCs: the forward completes once the request is sent and
 * HG_Respond() on the target returns HG_OPNOTSUPPORTED. Set on both sides. */
QS_EXPORT hg_return_t HG_Registered_disable_response(hg_class_t *hg_class,
                                                     hg_id_t id,
                                                     hg_bool_t disable);
/* Whether `id` is registered (*flag_p) and, if so, its input and output
 * procs (each output may be NULL). HG_INVALID_ARG for a NULL class or
 * flag_p; an unregistered id gives *flag_p false and HG_SUCCESS. */
QS_EXPORT hg_return_t HG_Registered_proc_cb(hg_class_t *hg_class, hg_id_t id,
                                            hg_bool_t *flag_p,
                                            hg_proc_cb_t *in_proc_cb_p,
                                            hg_proc_cb_t *out_proc_cb_p);
QS_EXPORT hg_return_t HG_Registered_disabled_response(hg_class_t *hg_class,
                                                      hg_id_t id,
                                                      hg_bool_t *disabled);

/*
 * Addresses. Lookup is immediate: a well-formed name of an unreachable peer
 * succeeds and forwards to it fail later (HG_HOSTUNREACH or HG_TIMEOUT).
 *
 * HG_Addr_lookup2() is the immediate form. HG_Addr_lookup1() is the
 * callback form: the lookup is done at once, its callback (type
 * HG_CB_LOOKUP, info.lookup.addr to be freed with HG_Addr_free()) runs from
 * HG_Trigger(), never inside the call.
 *
 * HG_Addr_lookup is a macro that picks one of them by its number of
 * arguments, at compile time: (class, name, &addr) calls HG_Addr_lookup2()
 * and (context, callback, arg, name, op_id) calls HG_Addr_lookup1(), so
 * programs written for either compile unchanged (in Mercury 2.x it always
 * means HG_Addr_lookup1). Any other count fails to compile, naming
 * HG_Addr_lookup_wrong_argument_count. A program that defines
 * HG_Addr_lookup itself before including this header keeps its definition.
 * There is no function named HG_Addr_lookup, so its address cannot be
 * taken: use HG_Addr_lookup1 or HG_Addr_lookup2 for that.
 */
QS_EXPORT hg_return_t HG_Addr_lookup2(hg_class_t *hg_class, const char *name,
                                      hg_addr_t *addr);
QS_EXPORT hg_return_t HG_Addr_lookup1(hg_context_t *context, hg_cb_t callback,
                                      void *arg, const char *name,
                                      hg_op_id_t *op_id);
#ifndef HG_Addr_lookup
/* A type, so that "calling" it with a wrong argument count is a hard error
 * in C and C++ that names the mistake. */
typedef struct hg_addr_lookup_takes_3_or_5_arguments
    *HG_Addr_lookup_wrong_argument_count;
#define HG_ADDR_LOOKUP_PICK_(a1, a2, a3, a4, a5, name, ...) name
#define HG_Addr_lookup(...)                                                    \
    HG_ADDR_LOOKUP_PICK_(__VA_ARGS__, HG_Addr_lookup1,                         \
                         HG_Addr_lookup_wrong_argument_count, HG_Addr_lookup2, \
                         HG_Addr_lookup_wrong_argument_count,                  \
                         HG_Addr_lookup_wrong_argument_count)                  \
    (__VA_ARGS__)
#endif
/* Drop a reference to an address from a lookup, HG_Addr_self() or
 * HG_Addr_dup(); the last one frees it. HG_ADDR_NULL, and the address a
 * handle's hg_info carries (owned by the handle), are no-ops. HG_INVALID_ARG
 * for a NULL class. */
QS_EXPORT hg_return_t HG_Addr_free(hg_class_t *hg_class, hg_addr_t addr);
/*
 * Hint that the peer behind `addr` is gone (it stopped responding): the
 * plugin forgets what it keeps about it, so a later lookup of the same
 * name starts afresh (ofi: the next lookup makes a new address-vector
 * entry and connection; sim keeps nothing). `addr` itself must still be
 * freed with HG_Addr_free(). HG_INVALID_ARG for NULL arguments or the
 * class's own address.
 */
QS_EXPORT hg_return_t HG_Addr_set_remove(hg_class_t *hg_class, hg_addr_t addr);
QS_EXPORT hg_return_t HG_Addr_self(hg_class_t *hg_class, hg_addr_t *addr);
QS_EXPORT hg_return_t HG_Addr_dup(hg_class_t *hg_class, hg_addr_t addr,
                                  hg_addr_t *new_addr);
QS_EXPORT hg_bool_t HG_Addr_cmp(hg_class_t *hg_class, hg_addr_t addr1,
                                hg_addr_t addr2);
QS_EXPORT hg_bool_t HG_Addr_is_self(hg_class_t *hg_class, hg_addr_t addr);
/* NUL-terminated; buf NULL gives the size needed in *buf_size (with NUL);
 * a too-small *buf_size returns HG_OVERFLOW and the size needed. */
QS_EXPORT hg_return_t HG_Addr_to_string(hg_class_t *hg_class, char *buf,
                                        hg_size_t *buf_size, hg_addr_t addr);
QS_EXPORT hg_size_t HG_Addr_get_serialize_size(hg_class_t *hg_class,
                                               hg_addr_t addr);
QS_EXPORT hg_return_t HG_Addr_serialize(hg_class_t *hg_class, void *buf,
                                        hg_size_t buf_size, hg_addr_t addr);
QS_EXPORT hg_return_t HG_Addr_deserialize(hg_class_t *hg_class, hg_addr_t *addr,
                                          const void *buf, hg_size_t buf_size);

/*
 * Handles. HG_Create() takes a handle from the context's pool (no
 * allocation in steady state). HG_Destroy() drops a reference; the handle
 * returns to the pool at zero. HG_Reset() retargets an idle handle
 * (HG_BUSY while an operation is in flight).
 */
QS_EXPORT hg_return_t HG_Create(hg_context_t *context, hg_addr_t addr,
                                hg_id_t id, hg_handle_t *handle);
QS_EXPORT hg_return_t HG_Destroy(hg_handle_t handle);
QS_EXPORT hg_return_t HG_Reset(hg_handle_t handle, hg_addr_t addr, hg_id_t id);
QS_EXPORT hg_return_t HG_Ref_incr(hg_handle_t handle);
QS_EXPORT hg_uint32_t HG_Ref_get(hg_handle_t handle);
/* NULL for an invalid handle. */
QS_EXPORT const struct hg_info *HG_Get_info(hg_handle_t handle);
QS_EXPORT hg_return_t HG_Set_data(hg_handle_t handle, void *data,
                                  void (*free_callback)(void *));
QS_EXPORT void *HG_Get_data(hg_handle_t handle);
/* Target context id for forwards (default 0). */
QS_EXPORT hg_return_t HG_Set_target_id(hg_handle_t handle, hg_uint8_t id);

/*
 * Decode the input (target) / output (origin) with the registered proc.
 * Decoding may allocate (strings, bulk handles): release with
 * HG_Free_input() / HG_Free_output(). Malformed bytes from the peer give
 * HG_PROTOCOL_ERROR or HG_OVERFLOW, never a crash.
 */
QS_EXPORT hg_return_t HG_Get_input(hg_handle_t handle, void *in_struct);
QS_EXPORT hg_return_t HG_Free_input(hg_handle_t handle, void *in_struct);
QS_EXPORT hg_return_t HG_Get_output(hg_handle_t handle, void *out_struct);
QS_EXPORT hg_return_t HG_Free_output(hg_handle_t handle, void *out_struct);
/*
 * Bytes of the encoded input / output of the handle's current RPC (what
 * the proc produced, whether it travelled inside the message or through
 * bulk): the input on the origin after HG_Forward() and on the target
 * once the request arrived; the output on the target after HG_Respond()
 * and on the origin once the response arrived. 0 before that, for an
 * RPC without input / output, or for HG_HANDLE_NULL.
 */
QS_EXPORT hg_size_t HG_Get_input_payload_size(hg_handle_t handle);
QS_EXPORT hg_size_t HG_Get_output_payload_size(hg_handle_t handle);

/*
 * Raw message buffers, for a layer that writes its own bytes beside the
 * encoded arguments (Mercury 2.4's HG_Get_input_buf() family).
 *
 * HG_Get_input_buf() gives the request's bytes after HG's own header: on
 * the origin, the buffer HG_Forward() will send (its whole eager capacity,
 * HG_Class_get_input_eager_size()), to write the reserved bytes into
 * before forwarding; on the target, the bytes received (reserved bytes,
 * then the encoded input or, when it overflowed, its transfer
 * descriptor). HG_Get_output_buf() is the same for the response (target:
 * before HG_Respond(); origin: once it arrived). The size pointer may be
 * NULL. HG_FAULT where nothing was received (yet) or the input was
 * released.
 *
 * HG_Get_input_extra_buf() / HG_Get_output_extra_buf() give the encoded
 * arguments that travelled through bulk because they did not fit the
 * eager message (only the arguments: the reserved bytes stay in the
 * message), or NULL and size 0 when they fitted.
 *
 * HG_Release_input_buf() lets go of a received request's input early: the
 * overflowed copy is freed and HG_Get_input() / HG_Get_input_buf() give
 * HG_FAULT afterwards (the handle's eager buffer is reused only with the
 * handle). A no-op on an origin handle or a second time.
 *
 * HG_Class_set_input_offset() / _output_offset() reserve `offset` bytes at
 * the start of every request / response payload of the class for the
 * program: HG_Forward() / HG_Respond() encode the arguments after them and
 * HG_Get_input() / HG_Get_output() decode from there, and the reserved
 * bytes travel in the message as the program wrote them (not covered by
 * the payload checksum). Origin and target must set the same offsets; a
 * message shorter than its reserved bytes is refused (HG_PROTOCOL_ERROR).
 * The eager size is unchanged, so larger offsets leave less room before
 * arguments overflow into bulk. HG_INVALID_ARG when offset exceeds the
 * eager size. Set them before traffic starts (read without a lock).
 */
QS_EXPORT hg_return_t HG_Get_input_buf(hg_handle_t handle, void **in_buf_p,
                                       hg_size_t *in_buf_size_p);
QS_EXPORT hg_return_t HG_Release_input_buf(hg_handle_t handle);
QS_EXPORT hg_return_t HG_Get_output_buf(hg_handle_t handle, void **out_buf_p,
                                        hg_size_t *out_buf_size_p);
QS_EXPORT hg_return_t HG_Get_input_extra_buf(hg_handle_t handle,
                                             void **in_buf_p,
                                             hg_size_t *in_buf_size_p);
QS_EXPORT hg_return_t HG_Get_output_extra_buf(hg_handle_t handle,
                                              void **out_buf_p,
                                              hg_size_t *out_buf_size_p);
QS_EXPORT hg_return_t HG_Class_set_input_offset(hg_class_t *hg_class,
                                                hg_size_t offset);
QS_EXPORT hg_return_t HG_Class_set_output_offset(hg_class_t *hg_class,
                                                 hg_size_t offset);

/*
 * Forward an RPC. The input is encoded before this returns (in_struct may
 * be reused at once). The callback (type HG_CB_FORWARD) runs once: when the
 * response arrived (or, for one-way RPCs, when the request was sent), or
 * with an error: HG_NOENTRY (target has no such RPC), the handler's error,
 * HG_HOSTUNREACH, HG_CANCELED, HG_TIMEOUT, HG_CHECKSUM_ERROR, ...
 * Returns HG_BUSY if the handle has an operation in flight; on any error
 * return, no callback will run.
 */
QS_EXPORT hg_return_t HG_Forward(hg_handle_t handle, hg_cb_t callback,
                                 void *arg, void *in_struct);

/*
 * Extension: HG_Forward() with a deadline of timeout_ms on the NA clock
 * (virtual time on the simulated fabric). When it passes, the forward is
 * cancelled and completes with HG_TIMEOUT; a response arriving later is
 * dropped. The deadline is judged in progress, after NA has been polled:
 * a response already waiting when it passes still completes the forward.
 * timeout_ms 0 means no deadline.
 */
QS_EXPORT hg_return_t HG_Forward_timed(hg_handle_t handle, hg_cb_t callback,
                                       void *arg, void *in_struct,
                                       unsigned int timeout_ms);

/*
 * Send the response (target). The callback (HG_CB_RESPOND) runs once the
 * response left (or failed). HG_OPNOTSUPPORTED for one-way RPCs.
 */
QS_EXPORT hg_return_t HG_Respond(hg_handle_t handle, hg_cb_t callback,
                                 void *arg, void *out_struct);

/*
 * Extension: answer a request with an error code instead of output; the
 * origin's forward completes with `ret`. For a target that accepted a
 * request it will not serve (shutting down, say). `ret` must not be
 * HG_SUCCESS. Returns HG_OPNOTSUPPORTED for one-way RPCs and HG_BUSY when
 * the request was already answered; the callback (HG_CB_RESPOND) runs once.
 */
QS_EXPORT hg_return_t HG_Respond_error(hg_handle_t handle, hg_cb_t callback,
                                       void *arg, hg_return_t ret);

/*
 * Cancel the forward or respond in flight on a handle. Asynchronous: the
 * callback still runs exactly once, with HG_CANCELED or with the result
 * that won the race. No-op (HG_SUCCESS) when nothing is in flight.
 */
QS_EXPORT hg_return_t HG_Cancel(hg_handle_t handle);

/*
 * Make progress on a context for up to timeout_ms (on the NA clock):
 * returns HG_SUCCESS once completions are queued for HG_Trigger(), or
 * HG_TIMEOUT. It may return HG_TIMEOUT early; callers loop.
 */
QS_EXPORT hg_return_t HG_Progress(hg_context_t *context,
                                  unsigned int timeout_ms);

/*
 * Run up to max_count queued callbacks. Waits up to timeout_ms (real
 * time, on the monotonic clock) for one to be queued by another thread's
 * progress; HG_TIMEOUT if none ran. *actual_count (may be NULL) gets the
 * number run.
 */
QS_EXPORT hg_return_t HG_Trigger(hg_context_t *context, unsigned int timeout_ms,
                                 unsigned int max_count,
                                 unsigned int *actual_count);

/*
 * Event-driven progress, for a program that runs its own poll()/epoll
 * loop (Mercury 2.4's HG_Event_* calls):
 *
 *     int fd = HG_Event_get_wait_fd(context);
 *     for (;;) {
 *         unsigned int count = 0, actual;
 *         if (!HG_Event_ready(context))
 *             poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, ms);
 *         HG_Event_progress(context, &count);
 *         HG_Event_trigger(context, count, &actual);
 *     }
 *
 * HG_Event_get_wait_fd() returns a descriptor of the context that becomes
 * readable when there is work for HG_Event_progress(): network activity
 * of the NA plugin, a completion queued by another thread, or the
 * nearest deadline of the context (HG_Forward_timed(), liveness probes)
 * once HG_Event_ready() armed it. It belongs to the context (closed by
 * HG_Context_destroy()). -1 where the plugin has no descriptor (sim, and
 * a class with auto_sm): use HG_Progress() there, as with a Mercury plugin
 * that cannot be waited on.
 *
 * HG_Event_ready() must be called before each wait: true when there is
 * already work (completions to trigger, NA callbacks to run, a deadline
 * passed), so the program must not block; false means blocking on the
 * descriptor is safe. HG_Event_progress() makes one non-blocking pass
 * (NA callbacks, network, deadlines) and sets *count_p (may be NULL) to
 * the completions now queued; HG_Event_trigger() runs at most max_count
 * of them without waiting. Both return HG_SUCCESS (HG_INVALID_ARG for a
 * NULL context) whether or not anything happened, as in Mercury.
 */
QS_EXPORT int HG_Event_get_wait_fd(const hg_context_t *context);
QS_EXPORT bool HG_Event_ready(hg_context_t *context);
QS_EXPORT hg_return_t HG_Event_progress(hg_context_t *context,
                                        unsigned int *count_p);
QS_EXPORT hg_return_t HG_Event_trigger(hg_context_t *context,
                                       unsigned int max_count,
                                       unsigned int *actual_count_p);

/* Whether completions are waiting for HG_Trigger(). */
QS_EXPORT hg_bool_t HG_Context_has_completions(hg_context_t *context);

/* The class's NA clock in nanoseconds (virtual time on the simulator). */
QS_EXPORT uint64_t HG_Clock_now(const hg_class_t *hg_class);

/* Counters for tests and HG_init_info.stats (all since HG_Init). */
struct hg_stats {
    uint64_t forwards_sent;     /* HG_Forward() calls that posted       */
    uint64_t requests_received; /* requests that reached a handler      */
    uint64_t responses_sent;
    uint64_t overflow_transfers; /* arguments moved through bulk         */
    uint64_t handles_allocated;  /* handle allocations (pool misses)     */
    uint64_t protocol_errors;    /* malformed messages dropped           */
    uint64_t probes_answered;    /* liveness probes answered             */
    uint64_t watchdog_wakeups;   /* wake-ups of the probe-answering thread */
    uint64_t watchdog_drives;    /* contexts it progressed (none was)    */
    /* The process's hot-path bias (docs/architecture.md, "Liveness"):
     * 0 never held, 1 held by the one thread that started the watchdog,
     * 2 being taken from it, 3 lent to the watchdog while it drives a
     * context, 4 revoked for good (another thread came to the hot path). */
    uint64_t hot_path_bias;
};
/* Copy the class's counters into *stats. HG_INVALID_ARG for NULL
 * arguments. */
QS_EXPORT hg_return_t HG_Class_get_stats(const hg_class_t *hg_class,
                                         struct hg_stats *stats);

/* Mercury's diagnostic counters of a class (Mercury fills them only when
 * built with HG_ENABLE_DIAG; here they are always kept). */
struct hg_diag_counters {
    uint64_t rpc_req_sent_count;        /* RPC requests sent */
    uint64_t rpc_req_recv_count;        /* RPC requests received */
    uint64_t rpc_resp_sent_count;       /* RPC responses sent */
    uint64_t rpc_resp_recv_count;       /* RPC responses received */
    uint64_t rpc_req_extra_count;       /* requests that went through bulk */
    uint64_t rpc_resp_extra_count;      /* responses that went through bulk */
    uint64_t rpc_req_recv_active_count; /* requests being handled now */
    uint64_t rpc_multi_recv_copy_count; /* copies out of multi-receive
                                           buffers (always 0 here) */
    uint64_t bulk_count;                /* bulk transfers started */
};
/* Copy a class's counters. rpc_req_extra_count and rpc_resp_extra_count
 * are reported together in rpc_req_extra_count (this library counts
 * overflow transfers without telling the direction; rpc_resp_extra_count
 * is 0), and rpc_req_recv_active_count, rpc_resp_recv_count and
 * bulk_count are 0 (not counted). HG_INVALID_ARG for NULL arguments. */
QS_EXPORT hg_return_t HG_Class_get_counters(
    const hg_class_t *hg_class, struct hg_diag_counters *diag_counters);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_H */
