/*
 * Quicksilver Margo: a blocking layer over the HG RPC and bulk API.
 *
 * HG is non-blocking and callback driven; this layer turns it into plain
 * blocking calls (margo_forward() returns when the response is there,
 * margo_bulk_transfer() when the bytes have moved) and runs RPC handlers as
 * ordinary functions. It uses POSIX threads; there is no user-level
 * threading package underneath.
 *
 * Who makes progress:
 *  - With use_progress_thread, a thread owned by the instance drives HG;
 *    blocking calls sleep on a condition variable until their operation
 *    completes, so an idle process uses no CPU.
 *  - Without it, a blocking call drives progress itself. It drives every
 *    instance of the process that has no progress thread, one after the
 *    other, so a client and a server instance living in one thread (the
 *    simulated fabric's usual test set-up) both move forward. Only one
 *    thread drives at a time; other blocked threads sleep until their
 *    operation is done or the driving role is free.
 *
 * Where handlers run (rpc_thread_count):
 *  -  0: in the caller's context: inside any thread blocked in a Margo call
 *        on the instance (typically margo_wait_for_finalize()), and, without
 *        a progress thread, inside whichever thread is driving progress.
 *  - >0: on that many handler threads owned by the instance.
 *  - -1: on the progress thread (like 0 when there is none).
 *
 * Ownership: a handler owns the handle it is given and must margo_destroy()
 * it. Addresses obtained from margo_addr_lookup(), margo_addr_self() and
 * margo_addr_dup() are the caller's to margo_addr_free(); any still held at
 * margo_finalize() are released there.
 *
 * With no progress thread and no handler threads on the simulated fabric,
 * everything happens in the calling thread in a fixed order, so a run is
 * deterministic for a given simulator seed. docs/margo.md has the details.
 */
#ifndef MARGO_H
#define MARGO_H

/* As in real Margo, margo.h brings the Mercury headers a service needs:
 * MERCURY_GEN_PROC and the string and bulk proc routines. */
#include "qs_export.h"
#include "margo-version.h"
#include "mercury.h"
#include "mercury_bulk.h"
#include "mercury_macros.h"
#include "mercury_proc.h"
#include "mercury_proc_bulk.h"
#include "mercury_proc_string.h"

#include <stdbool.h>
#include <stdint.h>

/* Argobots' names (on POSIX threads, abt.h), as the real margo.h brings
 * them. */
#include "abt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An instance: one HG class, one HG context and their threads. */
typedef struct margo_instance *margo_instance_id;

#ifdef __cplusplus
}
#endif
#include "margo-logging.h"
#ifdef __cplusplus
extern "C" {
#endif
#define MARGO_INSTANCE_NULL ((margo_instance_id) NULL)

/* The `mode` argument of margo_init(): whether the instance listens. */
#define MARGO_CLIENT_MODE 0
#define MARGO_SERVER_MODE 1

/* An operation started by margo_iforward(), margo_irespond() or
 * margo_bulk_itransfer(), finished by margo_wait(). */
typedef struct margo_request_s *margo_request;
#define MARGO_REQUEST_NULL ((margo_request) NULL)

/*
 * Create an instance over the NA plugin that addr_str selects ("tcp",
 * "ofi+tcp://127.0.0.1:0", "sim://server", ...). mode is MARGO_CLIENT_MODE
 * or MARGO_SERVER_MODE. use_progress_thread non-zero starts a progress
 * thread. rpc_thread_count is -1, 0 or a positive count of handler threads
 * (see the top of this file). Returns MARGO_INSTANCE_NULL on error, after
 * logging why.
 *
 * margo_init_opt() also takes HG options (NULL for the defaults).
 */
QS_EXPORT margo_instance_id margo_init(const char *addr_str, int mode,
                                       int use_progress_thread,
                                       int rpc_thread_count);
QS_EXPORT margo_instance_id margo_init_opt(
    const char *addr_str, int mode, const struct hg_init_info *hg_init_info,
    int use_progress_thread, int rpc_thread_count);

/*
 * margo_init_ext(): create an instance from Margo's JSON configuration
 * (docs/margo.md lists the fields; use_progress_thread, rpc_thread_count,
 * the "mercury" section mapping onto hg_init_info, the "argobots" pools and
 * xstreams, progress_pool and rpc_pool). info may be NULL (defaults: no
 * progress thread, handlers in the callers' context). With info->hg_class
 * (and optionally info->hg_context) the instance runs over that existing
 * class, which stays the caller's: address and mode are then ignored.
 * info->hg_init_info seeds the "mercury" section; info->logger is
 * installed as the instance's logger. Invalid JSON, a field of the wrong
 * type or value, or a reference to an unknown pool is logged and gives
 * MARGO_INSTANCE_NULL. External progress_pool / rpc_pool handles and
 * monitors are not supported (MARGO_INSTANCE_NULL, resp. ignored).
 */
struct margo_monitor;
struct margo_init_info {
    const char *json_config;           /* JSON configuration, or NULL */
    ABT_pool progress_pool;            /* must be ABT_POOL_NULL        */
    ABT_pool rpc_pool;                 /* must be ABT_POOL_NULL        */
    hg_class_t *hg_class;              /* existing HG class, or NULL   */
    hg_context_t *hg_context;          /* existing HG context, or NULL */
    struct hg_init_info *hg_init_info; /* HG options, or NULL          */
    struct margo_logger *logger;       /* logger, or NULL              */
    struct margo_monitor *monitor;     /* ignored                      */
    margo_instance_id parent_mid;      /* must be MARGO_INSTANCE_NULL  */
};
/* Every field spelled out, so that neither C nor C++ warns about missing
 * field initializers (-Wextra); usable as `struct margo_init_info info =
 * MARGO_INIT_INFO_INITIALIZER;` in both, and as a compound literal in C. */
#define MARGO_INIT_INFO_INITIALIZER                                            \
    {                                                                          \
        NULL, ABT_POOL_NULL, ABT_POOL_NULL, NULL, NULL, NULL, NULL, NULL,      \
            MARGO_INSTANCE_NULL                                                \
    }
/* Create an instance from a JSON configuration, as described above. */
QS_EXPORT margo_instance_id margo_init_ext(const char *address, int mode,
                                           const struct margo_init_info *info);

/*
 * Shut an instance down. From the call on, new requests are answered with
 * HG_CANCELED. Handlers queued but not started are dropped (their origins
 * get no response), running handlers are given time to finish (10 s on the
 * NA clock), and every operation still in flight is cancelled, so the
 * calls waiting on it return HG_CANCELED. Then the threads stop, addresses
 * from margo_addr_* not yet freed are released, and HG is finalized; the
 * instance id is invalid afterwards.
 *
 * Called from inside a handler, from one of the instance's own threads, or
 * while another thread sits in margo_wait_for_finalize(), it only records
 * the request and returns: the thread in margo_wait_for_finalize() (or a
 * later margo_finalize() call from outside any handler) does the work.
 */
QS_EXPORT void margo_finalize(margo_instance_id mid);

/*
 * Block until margo_finalize() is called for this instance (usually by a
 * handler), then finish the shutdown in this thread. Without a progress
 * thread the caller drives progress meanwhile; with rpc_thread_count 0 it
 * also runs the handlers. One thread at a time may wait here.
 */
QS_EXPORT void margo_wait_for_finalize(margo_instance_id mid);

/*
 * margo_finalize(), then wait until the instance is completely shut down,
 * whichever thread does the teardown. Not from inside a handler (there it
 * only requests finalize, like margo_finalize()).
 */
QS_EXPORT void margo_finalize_and_wait(margo_instance_id mid);

/*
 * Reference counting. An instance starts with one reference, which its
 * teardown drops; margo_instance_ref_incr() adds one, so the memory stays
 * valid after finalize (margo_instance_is_finalized() can then be asked)
 * until margo_instance_release(). Releasing the last reference of an
 * instance not yet finalized finalizes it. HG_INVALID_ARG for
 * MARGO_INSTANCE_NULL or a release with no reference left.
 */
QS_EXPORT hg_return_t margo_instance_ref_incr(margo_instance_id mid);
QS_EXPORT hg_return_t margo_instance_release(margo_instance_id mid);
QS_EXPORT hg_return_t margo_instance_is_finalized(margo_instance_id mid,
                                                  bool *flag);
QS_EXPORT hg_return_t margo_instance_ref_count(margo_instance_id mid,
                                               unsigned *refcount);

/*
 * Finalize callbacks. Pushed callbacks run last pushed first, each once:
 * pre-finalize callbacks at the start of the shutdown, while the instance
 * still works (they may send RPCs); finalize callbacks once no handler
 * runs any more, while the HG class is still alive (they must not send
 * RPCs). Both run in the thread that does the teardown (see
 * margo_finalize()). pop removes the topmost callback and returns 1, or 0
 * if there is none; top reads it without removing it. The provider forms
 * only consider the callbacks pushed with that owner (any pointer that
 * identifies the provider).
 */
typedef void (*margo_finalize_callback_t)(void *);
QS_EXPORT void margo_push_finalize_callback(margo_instance_id mid,
                                            margo_finalize_callback_t cb,
                                            void *uargs);
QS_EXPORT int margo_pop_finalize_callback(margo_instance_id mid);
QS_EXPORT int margo_top_finalize_callback(margo_instance_id mid,
                                          margo_finalize_callback_t *cb,
                                          void **uargs);
QS_EXPORT void
margo_provider_push_finalize_callback(margo_instance_id mid, const void *owner,
                                      margo_finalize_callback_t cb,
                                      void *uargs);
QS_EXPORT int margo_provider_pop_finalize_callback(margo_instance_id mid,
                                                   const void *owner);
QS_EXPORT int
margo_provider_top_finalize_callback(margo_instance_id mid, const void *owner,
                                     margo_finalize_callback_t *cb,
                                     void **uargs);
QS_EXPORT void margo_push_prefinalize_callback(margo_instance_id mid,
                                               margo_finalize_callback_t cb,
                                               void *uargs);
QS_EXPORT int margo_pop_prefinalize_callback(margo_instance_id mid);
QS_EXPORT int margo_top_prefinalize_callback(margo_instance_id mid,
                                             margo_finalize_callback_t *cb,
                                             void **uargs);
QS_EXPORT void margo_provider_push_prefinalize_callback(
    margo_instance_id mid, const void *owner, margo_finalize_callback_t cb,
    void *uargs);
QS_EXPORT int margo_provider_pop_prefinalize_callback(margo_instance_id mid,
                                                      const void *owner);
QS_EXPORT int margo_provider_top_prefinalize_callback(
    margo_instance_id mid, const void *owner, margo_finalize_callback_t *cb,
    void **uargs);

/*
 * Remote shutdown: after margo_enable_remote_shutdown(), a peer's
 * margo_shutdown_remote_instance() makes this instance finalize (as
 * margo_finalize() from a handler: a thread in margo_wait_for_finalize()
 * completes it). margo_shutdown_remote_instance() returns 0 once the
 * target accepted, -1 if it refused (not enabled) or could not be reached.
 * The target refuses (HG_CANCELED) every RPC that reaches it after it
 * accepted, so a call made once this returns 0 fails rather than racing
 * the target's finalize.
 */
QS_EXPORT void margo_enable_remote_shutdown(margo_instance_id mid);
QS_EXPORT int margo_shutdown_remote_instance(margo_instance_id mid,
                                             hg_addr_t remote_addr);

/*
 * Sleep timeout_ms on the fabric's clock (virtual time on the simulated
 * fabric: a 10 s sleep there takes no real time). Like a blocking call,
 * the sleeping thread keeps making the progress and running the handlers
 * it is responsible for. Returns early if the instance shuts down.
 */
QS_EXPORT void margo_thread_sleep(margo_instance_id mid, double timeout_ms);

/*
 * Write a description of the instance (address, threads, queued and
 * running handlers, operations in flight, registered RPCs, pools) to
 * `file` ("-": standard output). uniquify non-zero appends
 * ".<hostname>.<pid>" to the name. *resolved_file_name (if not NULL) gets
 * the name used, to free(). Returns 0, or -1 on error.
 */
QS_EXPORT int margo_state_dump(margo_instance_id mid, const char *file,
                               int uniquify, char **resolved_file_name);

/* Whether the instance was created in MARGO_SERVER_MODE. */
QS_EXPORT hg_bool_t margo_is_listening(margo_instance_id mid);

/*
 * Pools (see margo-config.h for the whole list). The handler pool is where
 * handlers of RPCs registered without a pool run; the progress pool is the
 * progress thread's ("__primary__" without one). Return 0, or -1 for an
 * invalid argument. Work pushed with ABT_thread_create() onto a pool runs
 * on its execution streams' workers; on "__primary__" it runs as abt.h
 * runs the primary stream's work (docs/abt.md).
 */
QS_EXPORT int margo_get_handler_pool(margo_instance_id mid, ABT_pool *pool);
QS_EXPORT int margo_get_progress_pool(margo_instance_id mid, ABT_pool *pool);
/* The pool an RPC's handlers run on (set: HG_NOENTRY for an RPC not
 * registered through Margo; ABT_POOL_NULL means the handler pool). */
QS_EXPORT hg_return_t margo_rpc_set_pool(margo_instance_id mid, hg_id_t id,
                                         ABT_pool pool);
QS_EXPORT hg_return_t margo_rpc_get_pool(margo_instance_id mid, hg_id_t id,
                                         ABT_pool *pool);

/* The HG objects under an instance (owned by it). Margo keeps the instance
 * in the class's data (HG_Class_set_data()): do not replace it. */
QS_EXPORT hg_class_t *margo_get_class(margo_instance_id mid);
QS_EXPORT hg_context_t *margo_get_context(margo_instance_id mid);

/*
 * RPC handlers.
 *
 *   static void sum(hg_handle_t h);          the handler: owns h
 *   DECLARE_MARGO_RPC_HANDLER(sum)           declares sum_handler
 *   ...
 *   MARGO_REGISTER(mid, "sum", sum_in_t, sum_out_t, sum);
 *   ...
 *   DEFINE_MARGO_RPC_HANDLER(sum)            defines sum_handler
 *
 * DEFINE_MARGO_RPC_HANDLER(fn) defines fn##_handler, the HG RPC callback
 * that hands `fn` to the instance's handler scheduling. MARGO_REGISTER
 * passes fn##_handler to margo_register_name(); a client passes NULL,
 * which pastes to NULL_handler, defined below as NULL, so no callback is
 * registered.
 */
#define DECLARE_MARGO_RPC_HANDLER(fn)                                          \
    hg_return_t fn##_handler(hg_handle_t handle);
#define DEFINE_MARGO_RPC_HANDLER(fn)                                           \
    hg_return_t fn##_handler(hg_handle_t handle)                               \
    {                                                                          \
        return margo_rpc_dispatch(handle, fn);                                 \
    }
#define NULL_handler NULL

#define MARGO_REGISTER(mid, func_name, in_t, out_t, fn)                        \
    margo_register_name(mid, func_name, hg_proc_##in_t, hg_proc_##out_t,       \
                        fn##_handler)

/*
 * Used by DEFINE_MARGO_RPC_HANDLER: queue `fn` to run on `handle` according
 * to the instance's rpc_thread_count and return HG_SUCCESS. Once finalize
 * has been requested the handle is released instead and HG_CANCELED is
 * returned, which HG sends back to the origin as the RPC's result.
 */
QS_EXPORT hg_return_t margo_rpc_dispatch(hg_handle_t handle,
                                         void (*fn)(hg_handle_t));

/*
 * Register an RPC by name (the id is a hash of the name, the same in every
 * process). rpc_cb is a handler from DEFINE_MARGO_RPC_HANDLER, any other
 * HG RPC callback, or NULL for an RPC this instance only sends. Returns 0
 * on error.
 */
QS_EXPORT hg_id_t margo_register_name(margo_instance_id mid,
                                      const char *func_name,
                                      hg_proc_cb_t in_proc_cb,
                                      hg_proc_cb_t out_proc_cb,
                                      hg_rpc_cb_t rpc_cb);
QS_EXPORT hg_return_t margo_registered_name(margo_instance_id mid,
                                            const char *func_name, hg_id_t *id,
                                            hg_bool_t *flag);
QS_EXPORT hg_return_t margo_deregister(margo_instance_id mid, hg_id_t id);

/*
 * Providers. A provider is a set of RPCs registered under one provider id
 * (0 to MARGO_MAX_PROVIDER_ID - 1); several providers of the same RPC
 * names can live in one instance. The provider id is mixed into the RPC
 * id (the name's 32-bit hash in the low half, provider_id + 1 in the high
 * half; MARGO_DEFAULT_PROVIDER_ID keeps the bare hash, which is what
 * margo_register_name() and margo_forward() use), so it travels with the
 * request and selects the handler on the target. Forwarding to a provider
 * the target does not have fails at the origin with HG_NOENTRY.
 *
 * `pool` is the pool the provider's handlers run on (ABT_POOL_NULL: the
 * instance's handler pool). Returns the RPC id, or 0 on error.
 */
#define MARGO_DEFAULT_PROVIDER_ID 0xFFFF
#define MARGO_MAX_PROVIDER_ID 0xFFFF
/* Register func_name for provider_id, its handlers on `pool`, as described
 * above. */
QS_EXPORT hg_id_t margo_provider_register_name(
    margo_instance_id mid, const char *func_name, hg_proc_cb_t in_proc_cb,
    hg_proc_cb_t out_proc_cb, hg_rpc_cb_t rpc_cb, uint16_t provider_id,
    ABT_pool pool);
#define MARGO_REGISTER_PROVIDER(mid, func_name, in_t, out_t, fn, provider_id,  \
                                pool)                                          \
    margo_provider_register_name(mid, func_name, hg_proc_##in_t,               \
                                 hg_proc_##out_t, fn##_handler, provider_id,   \
                                 pool)
/* *flag: whether func_name is registered for provider_id here; *id (may
 * be NULL) gets its id either way. */
QS_EXPORT hg_return_t margo_provider_registered_name(margo_instance_id mid,
                                                     const char *func_name,
                                                     uint16_t provider_id,
                                                     hg_id_t *id,
                                                     hg_bool_t *flag);

/*
 * The provider an RPC id belongs to (MARGO_DEFAULT_PROVIDER_ID for an id
 * from margo_register_name()), for instance info->id in a handler.
 * Quicksilver's own: Margo keeps its demultiplexing internal.
 */
QS_EXPORT uint16_t margo_rpc_id_get_provider_id(hg_id_t id);

/* The name an RPC id was registered with (through Margo), or NULL. The
 * string lives until the RPC is deregistered or the instance finalized. */
QS_EXPORT const char *margo_rpc_get_name(margo_instance_id mid, hg_id_t id);
/* margo_rpc_get_name() of the handle's RPC. */
QS_EXPORT const char *margo_handle_get_name(hg_handle_t handle);

/*
 * Provider identities: a string (a provider's type, say "kv") that a
 * client can ask for remotely. register: HG_EXIST if the provider has one
 * already; deregister: HG_NOENTRY if it has none. registered_identity
 * returns the local string or NULL. get_identity asks the instance at
 * `address`: HG_NOENTRY when that provider has no identity; *bufsize is
 * the buffer's capacity in and the identity's size (with its NUL) out;
 * HG_NOMEM when the buffer is too small.
 */
QS_EXPORT hg_return_t margo_provider_register_identity(margo_instance_id mid,
                                                       uint16_t provider_id,
                                                       const char *identity);
QS_EXPORT hg_return_t margo_provider_deregister_identity(margo_instance_id mid,
                                                         uint16_t provider_id);
QS_EXPORT const char *margo_provider_registered_identity(margo_instance_id mid,
                                                         uint16_t provider_id);
QS_EXPORT hg_return_t margo_provider_get_identity(margo_instance_id mid,
                                                  hg_addr_t address,
                                                  uint16_t provider_id,
                                                  char *buffer,
                                                  size_t *bufsize);

/* One-way RPCs (set on both sides): a forward returns once the request is
 * sent, and the handler must not respond. */
QS_EXPORT hg_return_t margo_registered_disable_response(margo_instance_id mid,
                                                        hg_id_t id,
                                                        int disable_flag);
QS_EXPORT hg_return_t margo_registered_disabled_response(margo_instance_id mid,
                                                         hg_id_t id,
                                                         int *disabled_flag);

/* Data attached to a registered RPC; free_callback (may be NULL) runs when
 * the RPC is deregistered or the instance finalized. */
QS_EXPORT hg_return_t margo_register_data(margo_instance_id mid, hg_id_t id,
                                          void *data,
                                          void (*free_callback)(void *));
QS_EXPORT void *margo_registered_data(margo_instance_id mid, hg_id_t id);

/* Addresses. */
QS_EXPORT hg_return_t margo_addr_lookup(margo_instance_id mid, const char *name,
                                        hg_addr_t *addr);
QS_EXPORT hg_return_t margo_addr_free(margo_instance_id mid, hg_addr_t addr);
/* HG_Addr_set_remove(): forget a peer (it restarted, say). */
QS_EXPORT hg_return_t margo_addr_set_remove(margo_instance_id mid,
                                            hg_addr_t addr);
QS_EXPORT hg_return_t margo_addr_self(margo_instance_id mid, hg_addr_t *addr);
QS_EXPORT hg_return_t margo_addr_dup(margo_instance_id mid, hg_addr_t addr,
                                     hg_addr_t *new_addr);
QS_EXPORT hg_bool_t margo_addr_cmp(margo_instance_id mid, hg_addr_t addr1,
                                   hg_addr_t addr2);
/* NUL-terminated; buf NULL gives the size needed; too small a *buf_size
 * gives HG_OVERFLOW and the size needed. */
QS_EXPORT hg_return_t margo_addr_to_string(margo_instance_id mid, char *buf,
                                           hg_size_t *buf_size, hg_addr_t addr);

/* Handles. */
QS_EXPORT hg_return_t margo_create(margo_instance_id mid, hg_addr_t addr,
                                   hg_id_t id, hg_handle_t *handle);
QS_EXPORT hg_return_t margo_destroy(hg_handle_t handle);
QS_EXPORT hg_return_t margo_ref_incr(hg_handle_t handle);
/* NULL for an invalid handle. */
QS_EXPORT const struct hg_info *margo_get_info(hg_handle_t handle);
/* The instance a handle was created on (or received by). */
QS_EXPORT margo_instance_id margo_hg_handle_get_instance(hg_handle_t handle);
/* The same from an hg_info (deprecated in Margo). */
QS_EXPORT margo_instance_id
margo_hg_info_get_instance(const struct hg_info *info);
/* The pool the handle's RPC runs its handlers on. */
QS_EXPORT ABT_pool margo_hg_handle_get_handler_pool(hg_handle_t handle);
/* Data attached to a handle (HG_Set_data / HG_Get_data). */
QS_EXPORT void *margo_get_data(hg_handle_t handle);
QS_EXPORT hg_return_t margo_set_data(hg_handle_t handle, void *data,
                                     void (*free_callback)(void *));

/* Decode a request's input or a response's output into the caller's
 * structure, and free what decoding allocated in it: HG_Get_input(),
 * HG_Free_input(), HG_Get_output() and HG_Free_output() on the handle. */
QS_EXPORT hg_return_t margo_get_input(hg_handle_t handle, void *in_struct);
QS_EXPORT hg_return_t margo_free_input(hg_handle_t handle, void *in_struct);
QS_EXPORT hg_return_t margo_get_output(hg_handle_t handle, void *out_struct);
QS_EXPORT hg_return_t margo_free_output(hg_handle_t handle, void *out_struct);

/*
 * Send an RPC and wait for its response (or, for one-way RPCs, until it is
 * sent). Returns the forward's result: HG_SUCCESS, HG_NOENTRY (the target
 * has no such RPC), HG_HOSTUNREACH, HG_CANCELED (instance finalized),
 * HG_TIMEOUT, ...
 *
 * margo_forward_timed() gives up after timeout_ms on the NA clock (virtual
 * time on the simulated fabric) and returns HG_TIMEOUT; the handle is then
 * idle and may be destroyed or reused. timeout_ms <= 0 means no deadline.
 */
QS_EXPORT hg_return_t margo_forward(hg_handle_t handle, void *in_struct);
QS_EXPORT hg_return_t margo_forward_timed(hg_handle_t handle, void *in_struct,
                                          double timeout_ms);

/* The same, to one provider of the target (MARGO_DEFAULT_PROVIDER_ID is
 * what the calls above use). The handle is retargeted to the provider's
 * RPC id, and stays so. */
QS_EXPORT hg_return_t margo_provider_forward(uint16_t provider_id,
                                             hg_handle_t handle,
                                             void *in_struct);
QS_EXPORT hg_return_t margo_provider_forward_timed(uint16_t provider_id,
                                                   hg_handle_t handle,
                                                   void *in_struct,
                                                   double timeout_ms);
QS_EXPORT hg_return_t margo_provider_iforward(uint16_t provider_id,
                                              hg_handle_t handle,
                                              void *in_struct,
                                              margo_request *req);
QS_EXPORT hg_return_t margo_provider_iforward_timed(uint16_t provider_id,
                                                    hg_handle_t handle,
                                                    void *in_struct,
                                                    double timeout_ms,
                                                    margo_request *req);

/* What a request is, and its handle (forward and respond) and instance. */
typedef enum {
    MARGO_RESPONSE_REQUEST = 2,
    MARGO_FORWARD_REQUEST = 4,
    MARGO_BULK_REQUEST = 6,
    MARGO_INVALID_REQUEST = 8
} margo_request_type;
QS_EXPORT margo_request_type margo_request_get_type(margo_request req);
QS_EXPORT hg_handle_t margo_request_get_handle(margo_request req);
QS_EXPORT margo_instance_id margo_request_get_instance(margo_request req);

/* Start a forward; margo_wait() or margo_test() finishes it. On error no
 * request is created. */
QS_EXPORT hg_return_t margo_iforward(hg_handle_t handle, void *in_struct,
                                     margo_request *req);
QS_EXPORT hg_return_t margo_iforward_timed(hg_handle_t handle, void *in_struct,
                                           double timeout_ms,
                                           margo_request *req);

/*
 * Wait for a request, return its result and free it. Every request must
 * be waited on exactly once (after margo_test() said it completed, too).
 */
QS_EXPORT hg_return_t margo_wait(margo_request req);
/* Wait for one of `count` requests of one instance: *index gets which, and
 * that request is freed (set to MARGO_REQUEST_NULL in the array) and its
 * result returned; NULL entries are skipped. HG_INVALID_ARG if every entry
 * is NULL. */
QS_EXPORT hg_return_t margo_wait_any(size_t count, margo_request *reqs,
                                     size_t *index);
/*
 * *flag = 1 if the request has completed (then margo_wait() returns at
 * once), 0 otherwise. Without a progress thread this makes one round of
 * non-blocking progress first, so a margo_test() loop completes.
 */
QS_EXPORT hg_return_t margo_test(margo_request req, int *flag);

/* Send a handler's response and wait until it has left. */
QS_EXPORT hg_return_t margo_respond(hg_handle_t handle, void *out_struct);
QS_EXPORT hg_return_t margo_irespond(hg_handle_t handle, void *out_struct,
                                     margo_request *req);
/* The same with a deadline of timeout_ms on the NA clock (<= 0: none):
 * the response is cancelled and HG_TIMEOUT returned if it has not left by
 * then. */
QS_EXPORT hg_return_t margo_respond_timed(hg_handle_t handle, void *out_struct,
                                          double timeout_ms);
QS_EXPORT hg_return_t margo_irespond_timed(hg_handle_t handle, void *out_struct,
                                           double timeout_ms,
                                           margo_request *req);

/* Bulk handles over the instance's class (see HG_Bulk_create()). */
QS_EXPORT hg_return_t margo_bulk_create(margo_instance_id mid,
                                        hg_uint32_t count, void **buf_ptrs,
                                        const hg_size_t *buf_sizes,
                                        hg_uint8_t flags, hg_bulk_t *handle);
QS_EXPORT hg_return_t margo_bulk_free(hg_bulk_t handle);
/* HG_Bulk_* on Margo's names. */
QS_EXPORT hg_return_t margo_bulk_ref_incr(hg_bulk_t bulk);
QS_EXPORT hg_return_t margo_bulk_access(hg_bulk_t handle, hg_size_t offset,
                                        hg_size_t size, hg_uint8_t flags,
                                        hg_uint32_t max_count, void **buf_ptrs,
                                        hg_size_t *buf_sizes,
                                        hg_uint32_t *actual_count);
QS_EXPORT hg_size_t margo_bulk_get_size(hg_bulk_t bulk);
QS_EXPORT hg_uint32_t margo_bulk_get_segment_count(hg_bulk_t bulk);
QS_EXPORT hg_size_t margo_bulk_get_serialize_size(hg_bulk_t bulk,
                                                  unsigned long flags);
QS_EXPORT hg_return_t margo_bulk_serialize(void *buf, hg_size_t buf_size,
                                           unsigned long flags,
                                           hg_bulk_t handle);
QS_EXPORT hg_return_t margo_bulk_deserialize(margo_instance_id mid,
                                             hg_bulk_t *handle, const void *buf,
                                             hg_size_t buf_size);
/* margo_bulk_create() for memory described by attrs (HG_Bulk_create_attr:
 * host memory only). */
QS_EXPORT hg_return_t margo_bulk_create_attr(margo_instance_id mid,
                                             hg_uint32_t count, void **buf_ptrs,
                                             const hg_size_t *buf_sizes,
                                             hg_uint8_t flags,
                                             const struct hg_bulk_attr *attrs,
                                             hg_bulk_t *handle);

/*
 * Move `size` bytes between a remote bulk handle at origin_addr and a
 * local one and wait for completion (HG_BULK_PULL reads the remote memory
 * into the local one, HG_BULK_PUSH writes it). The timed form returns
 * HG_TIMEOUT after timeout_ms on the NA clock (<= 0: no deadline).
 */
QS_EXPORT hg_return_t margo_bulk_transfer(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size);
QS_EXPORT hg_return_t margo_bulk_transfer_timed(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, double timeout_ms);
/* Start a transfer; margo_wait() finishes it. */
QS_EXPORT hg_return_t margo_bulk_itransfer(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, margo_request *req);
QS_EXPORT hg_return_t margo_bulk_itransfer_timed(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, double timeout_ms, margo_request *req);

/*
 * Callback forms: start the forward, respond or transfer like the i* forms,
 * and instead of a request to wait for, call on_complete(uargs, result)
 * exactly once when it completes (HG_TIMEOUT when the deadline of a timed
 * form passed first, HG_CANCELED if finalize cancelled it). The callback
 * runs inside the HG completion callback, on whichever thread makes
 * progress on the instance: it must not block. If the start fails, the
 * error is returned and on_complete is not called (HG_INVALID_ARG when it
 * is NULL).
 */
QS_EXPORT hg_return_t margo_cforward(hg_handle_t handle, void *in_struct,
                                     void (*on_complete)(void *, hg_return_t),
                                     void *uargs);
QS_EXPORT hg_return_t
margo_cforward_timed(hg_handle_t handle, void *in_struct, double timeout_ms,
                     void (*on_complete)(void *, hg_return_t), void *uargs);
QS_EXPORT hg_return_t margo_provider_cforward(
    uint16_t provider_id, hg_handle_t handle, void *in_struct,
    void (*on_complete)(void *, hg_return_t), void *uargs);
QS_EXPORT hg_return_t margo_provider_cforward_timed(
    uint16_t provider_id, hg_handle_t handle, void *in_struct,
    double timeout_ms, void (*on_complete)(void *, hg_return_t), void *uargs);
QS_EXPORT hg_return_t margo_crespond(hg_handle_t handle, void *out_struct,
                                     void (*on_complete)(void *, hg_return_t),
                                     void *uargs);
/* The deadline is a Margo timer of the handle's instance: it is noticed
 * where the instance's handlers run. */
QS_EXPORT hg_return_t
margo_crespond_timed(hg_handle_t handle, void *out_struct, double timeout_ms,
                     void (*on_complete)(void *, hg_return_t), void *uargs);
QS_EXPORT hg_return_t margo_bulk_ctransfer(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, void (*on_complete)(void *, hg_return_t),
    void *uargs);
QS_EXPORT hg_return_t margo_bulk_ctransfer_timed(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, double timeout_ms,
    void (*on_complete)(void *, hg_return_t), void *uargs);

/*
 * Progress tuning. The upper bound is how long an idle progress loop (the
 * progress thread, or a thread driving instances without one) blocks in
 * HG_Progress(), in milliseconds of the NA clock; it starts as the
 * configuration's "progress_timeout_ub_msec" (100). Timers and
 * margo_thread_sleep() deadlines still cut a wait short. Both return 0, or
 * -1 for MARGO_INSTANCE_NULL.
 */
QS_EXPORT int margo_set_progress_timeout_ub_msec(margo_instance_id mid,
                                                 unsigned timeout);
QS_EXPORT int margo_get_progress_timeout_ub_msec(margo_instance_id mid,
                                                 unsigned *timeout);
/*
 * With when_needed true the progress thread calls HG_Progress() only while
 * the instance has something to progress (an operation in flight, a timer,
 * a thread in margo_thread_sleep(), handlers queued for it); otherwise it
 * waits, costing no progress calls. As in Margo this is for clients: a
 * server's incoming requests are not received meanwhile. Instances without
 * a progress thread are driven by their callers and are not affected.
 * Returns 0, or -1 for MARGO_INSTANCE_NULL.
 */
QS_EXPORT int margo_set_progress_when_needed(margo_instance_id mid,
                                             bool when_needed);
/*
 * Make the pool at pool_idx the instance's progress pool. The progress
 * loop itself stays where it runs (its own thread, or the threads blocked
 * in Margo calls; it is not an Argobots ULT here): what moves is what the
 * progress pool is, for margo_get_progress_pool(), the configuration's
 * "progress_pool", which pool may not be removed, and, with a progress
 * thread, which pool's Margo work that thread runs. Returns 0 (also when it
 * already is), or ABT_ERR_INV_ARG for a null instance or an index out of
 * range.
 */
QS_EXPORT int margo_migrate_progress_loop(margo_instance_id mid,
                                          unsigned pool_idx);
/*
 * Argobots profiling needs Argobots' tool interface, which abt.h does not
 * have: start and stop log an error and return -1, as Margo does with an
 * Argobots built without tools; dump returns -1 (nothing was recorded).
 */
QS_EXPORT int margo_start_abt_profiling(margo_instance_id mid, bool detailed);
QS_EXPORT int margo_stop_abt_profiling(margo_instance_id mid);
QS_EXPORT int margo_dump_abt_profiling(margo_instance_id mid, const char *file,
                                       int uniquify, char **resolved_file_name);
/*
 * Answer a request with an error instead of output: the origin's forward
 * returns `ret`. Nothing is sent for an RPC registered without a response.
 * Margo declares it (for its DEFINE_MARGO_RPC_HANDLER) as private; it is
 * provided for programs that call it anyway. The handle stays the
 * caller's to destroy.
 */
QS_EXPORT void __margo_respond_with_error(hg_handle_t handle, hg_return_t ret);
/*
 * Set a parameter by name at run time. Known key: "progress_timeout_ub_msecs"
 * (a decimal number of milliseconds, as margo_set_progress_timeout_ub_msec).
 * Returns 0, or -1 for an unknown key, a bad value or a NULL argument.
 */
QS_EXPORT int margo_set_param(margo_instance_id mid, const char *key,
                              const char *value);
/*
 * Set the Argobots environment variables Margo prefers (ABT_THREAD_STACKSIZE,
 * ABT_MEM_MAX_NUM_STACKS), from the "argobots" section of the optional
 * JSON configuration ("abt_thread_stacksize", "abt_mem_max_num_stacks") or
 * Margo's defaults (2 MiB, 8), before ABT_init() runs. Returns 0, or -1
 * when the JSON does not parse. Once Argobots runs it changes nothing and
 * still returns 0.
 */
QS_EXPORT int margo_set_environment(const char *optional_json_config);
/*
 * The RPC the calling ULT works for. Inside a handler it is the handler's
 * RPC id (with its provider id); margo_set_current_rpc_id() sets it for
 * the calling ULT (or, outside any ULT, the calling thread) until the ULT
 * ends; elsewhere it is the id of base 0 and MARGO_DEFAULT_PROVIDER_ID.
 * Setting 0 sets that default. Both return HG_SUCCESS, or HG_INVALID_ARG
 * for a null instance or output.
 */
QS_EXPORT hg_return_t margo_set_current_rpc_id(margo_instance_id mid,
                                               hg_id_t id);
QS_EXPORT hg_return_t margo_get_current_rpc_id(margo_instance_id mid,
                                               hg_id_t *id);

#ifdef __cplusplus
}
#endif

#include "margo-bulk-util.h"
#include "margo-config.h"
#include "margo-util.h"

#endif /* MARGO_H */
