/*
 * Private to the Margo layer (lib/margo).
 *
 * Files by concern:
 *   margo_instance.c  init, finalize, wait_for_finalize, class accessors
 *   margo_progress.c  who drives HG progress, blocking waits, handler
 *                     dispatch
 *   margo_threads.c   margo_thread_sleep(), the progress threads
 *   margo_rpc.c       registration, addresses, handles, forward, respond,
 *                     requests
 *   margo_bulk.c      bulk handles and transfers
 *   margo_log.c       logging
 *
 * Locking: one process-wide mutex, margo_lock, guards every field marked
 * "(L)" below in every instance, every request's state, and the list of
 * instances driven without a progress thread. It is held only for short
 * bookkeeping and never across HG_Progress(), HG_Trigger() or a handler;
 * the only HG calls made under it are HG_Cancel() and HG_Bulk_cancel(),
 * which queue a completion and never run callbacks. A single lock is enough
 * because the work under it is tiny next to an RPC, and it makes the
 * interplay between instances (one thread driving several of them) easy to
 * get right.
 */
#ifndef MARGO_INTERNAL_H
#define MARGO_INTERNAL_H

#include "margo.h"
#include "margo-config.h"
#include "margo_config.h"
#include "margo-timer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

/* How long an idle driver or progress thread blocks in HG_Progress(), in
 * milliseconds of the NA clock. It bounds how late a stop request is seen;
 * it costs no CPU because HG_Progress() sleeps. */
#define MARGO_BLOCK_MS 100

/* Completions HG_Trigger() runs per call, so that one busy instance cannot
 * starve the others a driver serves. */
#define MARGO_TRIGGER_BATCH 64

/* Handlers run nested inside a blocking call (caller-context handlers) at
 * most this deep; beyond it a nested wait only makes progress. */
#define MARGO_MAX_HANDLER_DEPTH 16

/* How long finalize lets running handlers finish before it cancels their
 * operations, in milliseconds of the NA clock (virtual on the simulator). */
#define MARGO_FINALIZE_GRACE_MS 10000

extern pthread_mutex_t margo_lock;

/* Work waiting to run: an RPC handler (the handle and the user function),
 * or other work (a timer's callback): work(arg), and drop(arg) instead if
 * the instance shuts down first. */
struct margo_handler_entry {
    struct margo_handler_entry *next;
    hg_handle_t handle;
    void (*fn)(hg_handle_t);
    void (*work)(void *arg);
    void (*drop)(void *arg);
    void *arg;
    ABT_pool pool; /* where it runs (margo_schedule_work) */
};

enum margo_req_kind { MARGO_REQ_FORWARD, MARGO_REQ_RESPOND, MARGO_REQ_BULK };

/*
 * One HG operation a Margo call waits for. Blocking calls keep it on their
 * stack; the i* calls allocate it and margo_wait() frees it. From post to
 * completion it sits on its instance's in-flight list, so that finalize can
 * cancel it.
 */
struct margo_request_s {
    struct margo_instance *mid;
    enum margo_req_kind kind;
    hg_handle_t handle;   /* forward and respond               */
    hg_op_id_t op_id;     /* bulk: valid while posted (L)      */
    bool heap;            /* freed by margo_wait()             */
    bool from_handler;    /* posted by a running handler       */
    bool done;            /* (L) the HG callback has run       */
    bool posted;          /* (L) the HG call returned success  */
    bool cancel_sent;     /* (L) finalize cancelled it         */
    hg_return_t ret;      /* (L) result, valid once done       */
    uint64_t deadline_ns; /* respond: NA clock deadline or 0   */
    bool timed_out;       /* (L) the deadline cancelled it     */
    /* Callback forms (margo_cforward, ...): on_complete(uargs, result) runs
     * once, after the HG callback, and the request is then freed; deadline
     * is margo_crespond_timed()'s timer (margo_cforms.c). */
    void (*on_complete)(void *uargs, hg_return_t ret);
    void *uargs;
    struct margo_deadline *deadline;     /* (L) */
    struct margo_request_s *prev, *next; /* (L) in-flight list */
};

struct margo_instance {
    hg_class_t *hg_class;
    hg_context_t *hg_context;
    bool external_hg; /* the class came from margo_init_ext's caller */
    /* Pools and execution streams, indexed as in config (margo_pools.c). */
    ABT_pool *pools;
    ABT_xstream *xstreams;
    size_t npools, nxstreams;
    bool owned_primary_pool;
    /* parent_mid: the instance whose pools and xstreams these are; a
     * reference to it is held from init to the end of the teardown. */
    struct margo_instance *parent;
    bool abt_inited; /* this instance called ABT_init */
    pthread_t abt_init_thread;
    unsigned int abt_pending; /* (L) ULTs started and not finished */
    bool owns_context;        /* the context was created here               */
    struct margo_config config;
    bool listening;
    bool has_progress_thread;
    bool virtual_clock;         /* the NA clock is the simulator's */
    int rpc_thread_count;       /* as given to margo_init()       */
    atomic_int log_level;       /* enum margo_log_level           */
    struct margo_logger logger; /* (margo_log.c's lock)           */
    bool custom_logger;
    pthread_t progress_thread;
    bool progress_thread_started;
    /* The progress thread waits in an abt.h call (a handler it runs
     * joins ULTs, say): until it is back, a thread blocked on this
     * instance makes its progress instead, one at a time (L). */
    bool progress_lent, progress_borrowed;

    struct margo_handler_entry *queue_head, *queue_tail; /* (L) */
    unsigned int running_handlers;                       /* (L) */
    unsigned int active_calls;        /* (L) threads in blocking calls  */
    unsigned int finalize_waiters;    /* (L) */
    bool finalize_requested;          /* (L) */
    bool teardown_started;            /* (L) */
    bool stop_threads;                /* (L) */
    struct margo_request_s *inflight; /* (L) */

    /* Addresses handed out by margo_addr_* and not yet freed (L). */
    hg_addr_t *addrs;
    size_t addr_count, addr_cap;

    /* In the list of instances driven without a progress thread (L). */
    struct margo_instance *driven_next;
    bool driven;
    /* In the list of every instance (L). */
    struct margo_instance *all_next;

    /* RPCs registered through Margo and provider identities (L). */
    struct margo_rpc_entry *rpcs;
    struct margo_identity *identities;
    hg_id_t identity_id; /* the identity RPC */
    hg_id_t shutdown_id; /* the remote shutdown RPC */

    /* Lifecycle (L). refcount: one for the instance itself (dropped by
     * the teardown) plus margo_instance_ref_incr()'s; the memory is freed
     * at zero. */
    unsigned int refcount;
    bool prefinalizing;
    bool finalized;
    bool remote_shutdown;
    struct margo_callback *prefinalize_cbs, *finalize_cbs;
    struct margo_timer *timers; /* created and not yet destroyed */
    /* Threads in margo_thread_sleep() on this instance, and the earliest
     * of their deadlines (0: none) (L). */
    struct margo_sleep *sleepers;
    uint64_t sleep_deadline_min;

    /* margo_set_progress_when_needed(): the progress thread makes progress
     * only while the instance has something in flight (L). */
    bool progress_when_needed;
    /* Progress tuning and counters (margo_params.c). */
    atomic_uint progress_timeout_ub_ms;
    _Atomic uint64_t num_progress_calls, num_trigger_calls;
    /* Per-ULT current RPC id (ABT_KEY_NULL if the key could not be made). */
    ABT_key rpc_id_key;
};

/* A pushed (pre-)finalize callback; owner is the provider's, or NULL. */
struct margo_callback {
    struct margo_callback *next;
    const void *owner;
    margo_finalize_callback_t cb;
    void *uargs;
};

/* An RPC registered through Margo: its name, procs and pool. */
struct margo_rpc_entry {
    struct margo_rpc_entry *next;
    hg_id_t id; /* muxed with the provider id */
    char *name;
    hg_proc_cb_t in_proc, out_proc;
    ABT_pool pool;
};

struct margo_identity {
    struct margo_identity *next;
    uint16_t provider_id;
    char *identity;
};

/* margo_progress.c */
typedef bool (*margo_pred_t)(void *arg);
/*
 * Block the calling thread until pred(arg) holds, making whatever progress
 * this thread is responsible for meanwhile. Called and returns with
 * margo_lock held; pred is evaluated with it held. `counted` adds the
 * thread to mid->active_calls while it waits (every public blocking call;
 * not finalize's own waits).
 */
void margo_block_until(struct margo_instance *mid, margo_pred_t pred, void *arg,
                       bool counted);
/* Trigger, progress for up to timeout_ms, trigger again, on one instance
 * (lock not held). Returns 0 if nothing happened. */
unsigned int margo_progress_instance(struct margo_instance *mid,
                                     unsigned int timeout_ms);
/* One round of non-blocking progress if this thread may drive mid without
 * waiting for another thread; used by margo_test(). Lock held. */
void margo_poke_progress(struct margo_instance *mid);
/* Add to / remove from the list of every instance (lock held). */
void margo_all_add(struct margo_instance *mid);
void margo_all_remove(struct margo_instance *mid);
/* Wake every thread blocked on mid (lock held): a request completed, a
 * handler was queued or finished, finalize was requested. */
void margo_wake(struct margo_instance *mid);
/* Start / stop the instance's own threads (margo_threads.c). */
int margo_threads_start(struct margo_instance *mid);
void margo_threads_stop(struct margo_instance *mid);
/* Add to / remove from the driven list (lock held). Removal waits for the
 * driving role so no driver is using the instance. */
/* Registers margo_progress.c's abt.h wait hooks (abt_set_wait_hooks):
 * idempotent, before the instance's first thread starts. */
void margo_abt_hooks_install(void);
void margo_driven_add(struct margo_instance *mid);
void margo_driven_remove(struct margo_instance *mid);
/* Whether the calling thread is running a handler (of any instance), or is
 * one of any instance's own threads: finalize must then be deferred. */
bool margo_thread_must_defer(const struct margo_instance *mid);
/* Whether the calling thread is running a handler of mid. */
bool margo_thread_in_handler_of(const struct margo_instance *mid);

/* Queue work on mid as a handler would be queued (lock held). */
void margo_queue_work(struct margo_instance *mid,
                      struct margo_handler_entry *e);
/* Queue work for pool (ABT_POOL_NULL: the instance's handler scheduling)
 * (lock held). */
void margo_schedule_work(struct margo_instance *mid, ABT_pool pool,
                         struct margo_handler_entry *e);
/* Runs e as a ULT of its pool (lock held), whatever the pool. */
void margo_spawn_work(struct margo_instance *mid,
                      struct margo_handler_entry *e);
/* Remove a queued entry that has not started (lock held); false if it was
 * not in the queue. */
/* pthread_cond_wait (abstime NULL) or _timedwait on margo_lock, for a
 * thread that counts as idle meanwhile: a simulated fabric's clock does
 * not wait for it (na_runtime.h). */
int margo_cond_wait(pthread_cond_t *cond, const struct timespec *abstime);
bool margo_unqueue_work(struct margo_instance *mid,
                        struct margo_handler_entry *e);

/* margo_rpc.c */
/*
 * The life of a request, shared by forwards, responds and transfers (lock
 * not held): margo_req_track() puts a filled-in request on its instance's
 * in-flight list just before the HG call (HG_CANCELED, and nothing
 * tracked, once shutdown has begun, except for the handlers it waits for);
 * margo_req_posted() records what the HG call returned; the HG call's
 * callback must be margo_req_complete_cb() with the request as its arg.
 */
/* A zeroed request of mid in storage, or on the heap when storage is NULL
 * (NULL if that allocation fails). */
struct margo_request_s *margo_req_new(struct margo_instance *mid,
                                      enum margo_req_kind kind,
                                      hg_handle_t handle,
                                      struct margo_request_s *storage);
hg_return_t margo_req_track(struct margo_request_s *req);
void margo_req_posted(struct margo_request_s *req, hg_return_t ret);
/* Finish starting a request whose track-and-post returned ret: on success
 * *reqp gets it; on failure it is freed unless it is the caller's storage
 * (the storage given to margo_req_new) and ret is returned. */
hg_return_t margo_req_handoff(struct margo_request_s *req,
                              struct margo_request_s *storage, hg_return_t ret,
                              struct margo_request_s **reqp);
hg_return_t margo_req_complete_cb(const struct hg_cb_info *info);
/* The callback of a request: NULL for the blocking and i* forms. */
struct margo_req_cb {
    void (*fn)(void *uargs, hg_return_t ret);
    void *uargs;
};
/* Start a forward, respond or transfer (blocking, i* and callback forms
 * share them): storage as for margo_req_new; cb NULL but for the callback
 * forms; on success *reqp is the request. */
hg_return_t margo_forward_start(uint16_t provider_id, hg_handle_t handle,
                                void *in_struct, double timeout_ms,
                                const struct margo_req_cb *cb,
                                struct margo_request_s *storage,
                                struct margo_request_s **reqp);
hg_return_t margo_respond_start(hg_handle_t handle, void *out_struct,
                                double timeout_ms,
                                const struct margo_req_cb *cb,
                                struct margo_request_s *storage,
                                struct margo_request_s **reqp);
hg_return_t margo_bulk_start(margo_instance_id mid, hg_bulk_op_t op,
                             hg_addr_t origin_addr, hg_bulk_t origin_handle,
                             size_t origin_offset, hg_bulk_t local_handle,
                             size_t local_offset, size_t size,
                             double timeout_ms, const struct margo_req_cb *cb,
                             struct margo_request_s *storage,
                             struct margo_request_s **reqp);
/* margo_cforms.c: arm a callback-form respond's deadline (before it is
 * tracked; -1 if no timer could be made); at completion, with the lock
 * held, detach the deadline; then, without the lock, run the callback
 * and free the request. */
int margo_creq_arm_deadline(struct margo_request_s *req, unsigned int ms);
void margo_creq_detach_locked(struct margo_request_s *req);
void margo_creq_finish(struct margo_request_s *req);
/* A callback-form start failed: drop its deadline (no callback runs). */
void margo_creq_abandon(struct margo_request_s *req);
/* Wait for a tracked request and return its result (lock not held). */
hg_return_t margo_req_wait(struct margo_request_s *req);
bool margo_req_is_done(void *req);
/* Cancel every posted request of mid not yet cancelled (lock held).
 * handler_ops_too: also those posted by running handlers. */
void margo_cancel_inflight(struct margo_instance *mid, bool handler_ops_too);
/* Milliseconds as HG takes them: <= 0 gives 0 (no deadline). */
unsigned int margo_timeout_ms(double timeout_ms);
/* Release addresses the program did not free (lock not held). */
void margo_addrs_release(struct margo_instance *mid);

/* margo_provider.c */
#define MARGO_BASE_ID_MASK ((hg_id_t) 0xffffffffu)
hg_id_t margo_mux_id(hg_id_t base_id, uint16_t provider_id);
struct margo_rpc_entry *margo_rpc_find(const struct margo_instance *mid,
                                       hg_id_t id);
ABT_pool margo_rpc_pool_of(struct margo_instance *mid, hg_id_t id);
/* Point an idle handle at its RPC's id for provider_id. */
hg_return_t margo_handle_retarget(hg_handle_t handle, uint16_t provider_id);
/* Register the identity RPC on a new instance (its id, 0 on error). */
hg_id_t margo_identity_register(struct margo_instance *mid);
/* Free the RPC table and identities (at finalize). */
void margo_rpcs_free(struct margo_instance *mid);

/* margo_pools.c */
int margo_pools_create(struct margo_instance *mid);
void margo_pools_destroy(struct margo_instance *mid);
void margo_pools_dump(struct margo_instance *mid, FILE *f);
/* Start the ABT xstream of config.xstreams[i] into mid->xstreams[i]. */
int margo_xstream_start(struct margo_instance *mid, size_t i);
/* Index of the pool / xstream with this name (if name is not NULL) or
 * handle, -1 if none (lock held). */
long margo_pool_index_locked(const struct margo_instance *mid, ABT_pool handle,
                             const char *name);
long margo_xstream_index_locked(const struct margo_instance *mid,
                                ABT_xstream handle, const char *name);
/* Fill info (may be NULL) for entry i (lock held). */
void margo_pool_info_at(const struct margo_instance *mid, size_t i,
                        struct margo_pool_info *info);
void margo_xstream_info_at(const struct margo_instance *mid, size_t i,
                           struct margo_xstream_info *info);
/* margo_elastic.c: an RPC's pool changes from old to new (either may be
 * ABT_POOL_NULL): move one reference (lock held). */
void margo_pool_ref_move_locked(struct margo_instance *mid, ABT_pool old_pool,
                                ABT_pool new_pool);
/* Run a queued entry on this thread (lock not held); as_ult: on a pool's
 * worker, counted in running_handlers here. */
void margo_run_entry(struct margo_instance *mid, struct margo_handler_entry *e,
                     bool as_ult);

/* margo_lifecycle.c */
/* Pop and run every callback of a stack, last pushed first. */
void margo_callbacks_run(struct margo_instance *mid,
                         struct margo_callback **stack);
void margo_callback_stack_free(struct margo_callback **stack);
hg_id_t margo_shutdown_register(struct margo_instance *mid);
/* Free the instance's memory (after the teardown, at refcount 0). */
void margo_instance_free(struct margo_instance *mid);

/* margo_timer.c: disarm a timer without waiting (lock held): true if its
 * callback will not run from now on, false if it is running. */
bool margo_timer_disarm_locked(margo_timer_t timer);
/* Cancel and forget the timers left at finalize. */
void margo_timers_release(struct margo_instance *mid);
/* Queue the callbacks of expired timers (lock not held). */
void margo_timers_check(struct margo_instance *mid);
/* Nanoseconds of the NA clock until the next armed timer of mid expires,
 * UINT64_MAX if none (lock not held). */
uint64_t margo_timers_next_ns(struct margo_instance *mid);

/* margo_log.c */
void margo_log(const struct margo_instance *mid, margo_log_level level,
               const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The global level, which new instances start with (reads
 * MARGO_LOG_LEVEL once). */
int margo_log_default_level(void);
/* Give a new instance the global logger. */
void margo_log_inherit(struct margo_instance *mid);
/* "trace", ... -> level; 0, or -1 if unknown. */
int margo_log_level_parse(const char *name, margo_log_level *level);
const char *margo_log_level_name(margo_log_level level);

/* margo_params.c */
/* Make / free the instance's current-RPC-id key (after ABT_init, before
 * ABT_finalize). */
void margo_rpc_id_init(struct margo_instance *mid);
void margo_rpc_id_fini(struct margo_instance *mid);
/* Around a handler: make id the caller's current RPC id, returning the one
 * to give back to margo_rpc_id_leave() afterwards. */
hg_id_t margo_rpc_id_enter(struct margo_instance *mid, hg_id_t id);
void margo_rpc_id_leave(struct margo_instance *mid, hg_id_t saved);

/* The instance of an HG class created by margo_init(), or NULL. */
struct margo_instance *margo_instance_of_class(hg_class_t *hg_class);

#endif /* MARGO_INTERNAL_H */
