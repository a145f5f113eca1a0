/*
 * The probe-answering watchdog (docs/architecture.md, "Liveness"). A
 * listening class whose probing is on, on a real fabric, keeps one thread
 * of the library's own. It wakes every quarter probe interval and, for
 * each context that no thread has progressed since its last wake-up,
 * drives that context's NA progress once without blocking (NA_Poll, then
 * NA_Trigger), so that a probe reaching a program busy in a handler on its
 * only thread is still answered (hg_probe_answer() runs from the request
 * receive's NA callback). It runs no HG timer and no HG completion: RPC
 * handlers and callbacks still run only in the program's HG_Trigger().
 * The two places where an NA callback could reach the program's code (a
 * handle create callback when a request receive is posted again, a
 * handle's free-data callback when its last reference goes) are deferred
 * to the program's next HG_Progress() when they happen on this thread.
 *
 * Not on the simulated fabric, which stays deterministic with one driver.
 * Included by hg_internal.h.
 */
#ifndef HG_WATCHDOG_H
#define HG_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct hg_class;
struct hg_context;
struct hg_handle;

/* Per class, made when its first context is attached. */
struct hg_watchdog {
    pthread_t thread;
    pthread_mutex_t lock; /* guards stop and the sleep */
    pthread_cond_t wake;  /* signalled to stop          */
    pthread_cond_t idle;  /* with class->lock: a context was let go */
    bool stop;
    unsigned int period_ms;
};

/* Per context (embedded in struct hg_context). */
struct hg_watch {
    /* HG_Progress() entries and exits: nobody is inside when they are
     * equal, and nobody came since the last wake-up when the entries did
     * not move. Relaxed atomics: two adds per HG_Progress(). */
    atomic_uint_fast64_t progress_in, progress_out;
    uint64_t seen;        /* progress_in at the last wake-up (the thread's) */
    bool busy;            /* guarded by class->lock: being driven now       */
    bool off;             /* guarded by class->lock: not to be driven       */
    atomic_bool deferred; /* work left for the program's HG_Progress  */
};

/* Whether the calling thread is a watchdog. */
bool hg_watchdog_on_thread(void);

/* A context is complete (HG_Context_create_id): let the watchdog drive it,
 * starting the class's thread on first use when the class qualifies. */
void hg_watchdog_attach(struct hg_context *context);

/* Before a context is destroyed: the watchdog lets it go and will not
 * drive it again until attached again. Waits while it is being driven. */
void hg_watchdog_detach(struct hg_context *context);

/* HG_Finalize(): stop and join the class's thread. */
void hg_watchdog_fini(struct hg_class *hg_class);

/* Defer a handle put that would run the program's free-data callback on
 * the watchdog thread; returns false when the put may run here. */
bool hg_watchdog_defer_put(struct hg_handle *handle);

/* Ask the program's next HG_Progress() to post the request receives the
 * watchdog did not (the class has a handle create callback). */
void hg_watchdog_defer_repost(struct hg_context *context);

/* Run the deferred work (the program's thread, from HG_Progress() and
 * before a context is destroyed). */
void hg_watchdog_run_deferred(struct hg_context *context);

#endif /* HG_WATCHDOG_H */
