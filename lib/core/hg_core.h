/*
 * The HG ground floor: what the RPC layer (lib/hg) and the bulk layer
 * (lib/bulk) both stand on, and nothing above it. Per context: the
 * completion queue, the timers on the NA clock, and the progress and
 * trigger loops. Per class: the NA class, addresses (hg_addr.c: HG_Addr_*)
 * and the counts of live addresses and bulk handles. It knows no kind of
 * completion: a completion carries the function that runs it, set by whoever
 * queued it. hg_opgroup.h counts the sub-operations of one operation (an
 * RPC's NA operations, a transfer's RMA pieces) for the layers above.
 *
 * Layering: lib/core includes only public headers and lib/util; lib/bulk
 * includes lib/core; lib/hg includes lib/core and lib/bulk
 * (scripts/check-layers.sh fails the build on a cycle).
 *
 * Locks: core->timer_lock guards the timer list and the fields of linked
 * timers; core->queue_lock guards the queue and queue_cond. Neither is
 * held while anything outside this module runs.
 */
#ifndef HG_CORE_H
#define HG_CORE_H

#include "mercury.h"

#include "util/qs_lock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

static inline hg_return_t
hg_from_na(na_return_t ret)
{
    return (unsigned) ret < NA_RETURN_MAX ? (hg_return_t) ret : HG_NA_ERROR;
}

/* One entry of a context's completion queue; `run` runs it from
 * HG_Trigger() and may reuse the entry. */
struct hg_completion {
    void (*run)(struct hg_completion *comp);
    void *object;
    STAILQ_ENTRY(hg_completion) entry;
};

/*
 * Something with a deadline on the NA clock (a forward, a transfer, a
 * probe). Disarming only clears `armed`, without a lock: a disarmed timer
 * stays on the list until the next sweep unlinks it (or its owner calls
 * hg_core_timer_unlink() before freeing it), and arming it again only
 * updates it. `linked`, `coarse`, `deadline_ns` and `expire` are guarded
 * by the timer lock.
 *
 * A coarse timer (hg_core_timer_arm_coarse(): liveness probes, a second
 * apart) may fire some passes late: while only coarse timers are linked,
 * a busy loop of zero-timeout passes reads the clock on one pass in
 * HG_CORE_COARSE_PASSES instead of twice on every pass.
 */
struct hg_timer {
    uint64_t deadline_ns;
    void (*expire)(struct hg_timer *timer);
    atomic_bool armed;
    bool linked;
    bool coarse;
    TAILQ_ENTRY(hg_timer) entry;
};

#define HG_CORE_COARSE_PASSES 16u

/* The class's ground floor: the first member of struct hg_class. */
struct hg_core_class {
    na_class_t *na_class;
    bool no_bulk_eager;  /* hg_init_info.no_bulk_eager */
    bool auto_sm;        /* hg_init_info.auto_sm */
    hg_addr_t self_addr; /* HG_Addr_self() hands out references */
    atomic_uint n_bulks; /* live bulk handles, for HG_Finalize() */
    atomic_uint n_addrs; /* live addresses, for HG_Finalize() */
};

/* A context's ground floor: the first member of struct hg_context. */
struct hg_core {
    hg_class_t *hg_class;
    struct hg_core_class *cls;
    na_context_t *na_context;
    uint8_t id;

    pthread_mutex_t timer_lock;
    TAILQ_HEAD(, hg_timer) timers;
    atomic_uint_fast64_t timer_hint; /* no linked timer is due before */
    atomic_uint n_fine; /* linked timers that are not coarse (timer lock) */
    /* While n_fine is 0: zero-timeout passes since the last clock read,
     * and that reading (any thread may update them; a race only moves
     * the next reading). */
    atomic_uint coarse_pass;
    atomic_uint_fast64_t coarse_now;

    pthread_mutex_t queue_lock;
    pthread_cond_t queue_cond;
    STAILQ_HEAD(, hg_completion) queue;
    atomic_uint n_queued;       /* entries on queue, read without the lock */
    unsigned int queue_waiters; /* threads in queue_cond's wait (queue lock) */
    /* An eventfd written for each queued completion once a program waits
     * on the context's descriptor (lib/hg/hg_event.c); -1 until then. */
    atomic_int notify_fd;

    /* Owned by lib/bulk (its pool of transfers); NULL until its first
     * transfer, released by hg_bulk_pool_fini(). */
    void *bulk_pool;
};

static inline struct hg_core_class *
hg_core_class_of(hg_class_t *hg_class)
{
    return (struct hg_core_class *) (void *) hg_class;
}

static inline struct hg_core *
hg_core_of(hg_context_t *context)
{
    return (struct hg_core *) (void *) context;
}

/*
 * Hooks of the invariant checker (include/qs_check.h). lib/core and lib/bulk
 * call the checker only through this table, which lib/hg fills in: when the
 * checker is off the pointer is NULL and a hook costs one predicted branch.
 */
enum hg_check_kind {
    HG_CHECK_CLASS,
    HG_CHECK_CONTEXT,
    HG_CHECK_HANDLE, /* created by HG_Create() */
    HG_CHECK_TARGET, /* a request's handle, given to its handler */
    HG_CHECK_ADDR,
    HG_CHECK_BULK,
    /* Operations whose callback must run exactly once. */
    HG_CHECK_FORWARD,
    HG_CHECK_RESPOND,
    HG_CHECK_TRANSFER,
    HG_CHECK_LOOKUP,
    /* Margo's own objects (lib/margo): the program's to release, before
     * or after margo_finalize(), so they are checked at exit. */
    HG_CHECK_MARGO_REQUEST,
    HG_CHECK_MARGO_TIMER,
};

struct hg_core_check_hooks {
    void (*obj_add)(hg_class_t *hg_class, const void *obj,
                    enum hg_check_kind kind);
    void (*obj_del)(const void *obj);
    void (*op_begin)(hg_class_t *hg_class, const void *op,
                     enum hg_check_kind kind);
    void (*op_end)(const void *op);
    void (*op_ran)(const struct hg_completion *comp);
};

/* NULL unless the checker is on (set once, before it records anything). */
extern const struct hg_core_check_hooks *_Atomic hg_core_check_hooks;

#define HG_CORE_CHECK(hook, ...)                                               \
    do {                                                                       \
        const struct hg_core_check_hooks *hg_core_check_h_ =                   \
            atomic_load_explicit(&hg_core_check_hooks, memory_order_relaxed);  \
        if (__builtin_expect(hg_core_check_h_ != NULL, 0))                     \
            hg_core_check_h_->hook(__VA_ARGS__);                               \
    } while (0)

/* A reference-counted wrapper of an NA address (hg_addr_t). */
struct hg_addr {
    hg_class_t *hg_class;
    na_addr_t na_addr;
    atomic_uint refcount;
    bool embedded; /* lives inside a handle; never freed on its own */
    /* HG_Addr_is_self(), asked of NA once: 0 not yet, 1 no, 2 yes. */
    atomic_uchar self_state;
};

/* Wrap an NA address (hg_addr.c); the wrapper owns it. */
hg_return_t hg_addr_create(hg_class_t *hg_class, na_addr_t na_addr,
                           hg_addr_t *addr);

void hg_core_init(struct hg_core *core, hg_class_t *hg_class,
                  struct hg_core_class *cls, uint8_t id);
void hg_core_fini(struct hg_core *core);

/* The NA clock, in nanoseconds (virtual on the simulated fabric). */
uint64_t hg_core_now(const struct hg_core *core);

/* Queue a completion; HG_Trigger() runs comp->run(comp). */
void hg_core_complete(struct hg_core *core, struct hg_completion *comp);
bool hg_core_has_completions(struct hg_core *core);

/* Arm (or re-arm) a timer timeout_ms after now on the NA clock. */
void hg_core_timer_arm(struct hg_core *core, struct hg_timer *timer,
                       unsigned int timeout_ms,
                       void (*expire)(struct hg_timer *));
/* The same for a deadline that may be met a few progress passes late. */
void hg_core_timer_arm_coarse(struct hg_core *core, struct hg_timer *timer,
                              unsigned int timeout_ms,
                              void (*expire)(struct hg_timer *));
/* Lock-free; the expire function will not be called after it returns
 * unless it is already running. No lock: the next sweep unlinks it
 * (hg_core_sweep_timers). Most RPCs never arm their deadline, so a timer
 * that is not armed is only read; an armed one is cleared with a release
 * store, not a full barrier. Either way the sweep's exchange sees the flag
 * in one order: it claims the timer before the store (the expire function
 * is then already running, which the contract allows) or finds it
 * disarmed after. */
static inline void
hg_core_timer_disarm(struct hg_timer *timer)
{
    if (atomic_load_explicit(&timer->armed, memory_order_relaxed))
        atomic_store_explicit(&timer->armed, false, memory_order_release);
}
/* Before the timer's memory is freed. */
void hg_core_timer_unlink(struct hg_core *core, struct hg_timer *timer);

/* HG_Progress() and HG_Trigger() of the context this core belongs to. */
hg_return_t hg_core_progress(struct hg_core *core, unsigned int timeout_ms);
hg_return_t hg_core_trigger(struct hg_core *core, unsigned int timeout_ms,
                            unsigned int max_count, unsigned int *actual_count);

#endif /* HG_CORE_H */
