/*
 * When the hot path may skip its locks and locked instructions: without
 * threads, and on the one thread a bias is held for.
 *
 * A process that has never created a thread cannot race with itself, so
 * the hot locks (util/qs_lock.h) and read-modify-writes (util/qs_atomic.h)
 * then load and store instead (glibc keeps __libc_single_threaded true
 * until the first pthread_create(), which clears it before the new thread
 * runs).
 *
 * A listening class with probing on starts the probe-answering watchdog
 * (lib/hg/hg_watchdog.h), and a one-thread Mercury program would then pay
 * for every lock and locked instruction of every RPC (about half an sm
 * server's time at 16 RPCs in flight, docs/performance.md) although the
 * watchdog only reads two counters until a handler computes for longer
 * than a quarter probe interval. So before it starts that thread, the only
 * thread of the process takes a bias (qs_bias_grant()): it, the owner,
 * keeps skipping. Any other thread of the program that comes to the hot
 * path, or to an entry of the library that leads there (qs_bias_gate()),
 * first revokes the bias, once and for the rest of the process, and from
 * then on every thread takes the locks:
 *
 *   owner, skipping a section:  skipped = 1; then reads the state;
 *                               not held: skipped = 0, take the lock
 *   revoker:                    state = revoking; membarrier(); waits
 *                               until skipped == 0; state = revoked
 *
 * The owner's store and load need no fence between them: the revoker's
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes each running thread
 * of the process pass a full barrier, so either the owner's store is
 * visible to the revoker (which waits for the section to end) or the
 * owner's load comes after the barrier and sees the state changed. A
 * section the owner is inside continues skipped (a nested acquisition
 * inside a skipped one is skipped too, so an unlock knows what its lock
 * did from the count alone); the revoker waits for it to end.
 *
 * The watchdog itself only borrows it: before it drives a context (the
 * program's thread is computing in a handler) it takes the bias the same
 * way but marks it lent, and gives it back once the drive is over, so a
 * handler that computes for a while does not cost the program its
 * lock-free hot path. Any other thread that comes meanwhile ends it for
 * good.
 *
 * No bias without membarrier (Linux 4.14), under ThreadSanitizer (which
 * cannot see the asymmetric barrier; its builds keep checking the locked
 * paths) or valgrind, or with QS_HOT_BIAS=0 in the environment.
 */
#ifndef QS_BIAS_H
#define QS_BIAS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h> /* glibc's <features.h>, for the test below */

#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#include <sys/single_threaded.h>
#define QS_SINGLE_THREADED() (__libc_single_threaded != 0)
#else
#define QS_SINGLE_THREADED() false
#endif

/* The initial-exec model makes each access one %fs-relative instruction:
 * in the shared library the default model calls __tls_get_addr on every
 * access. The per-thread variables of util/ take a few bytes of the
 * static TLS block, which glibc keeps a surplus of for libraries loaded
 * with dlopen() too. */
#define QS_LOCK_TLS_MODEL __attribute__((tls_model("initial-exec")))

enum qs_bias_state {
    QS_BIAS_NONE = 0,     /* never held: skip only without threads   */
    QS_BIAS_HELD = 1,     /* the owner skips                         */
    QS_BIAS_REVOKING = 2, /* a revoker or lender waits for the owner */
    QS_BIAS_LENT = 3,     /* the watchdog drives: all take the locks */
    QS_BIAS_REVOKED = 4,  /* every thread takes the locks, for good  */
};

extern atomic_uint qs_bias_state_g;

/* Skipped acquisitions this thread is inside while the process has one
 * thread (a plain counter: one %fs-relative add), and the owner's while
 * it holds the bias (read by a revoker). */
extern _Thread_local unsigned int qs_hot_skipped_tls QS_LOCK_TLS_MODEL;
extern atomic_uint qs_bias_depth_g;
/* Whether this thread holds the bias, or has it lent. */
extern _Thread_local bool qs_bias_owner_tls QS_LOCK_TLS_MODEL;
extern _Thread_local bool qs_bias_lender_tls QS_LOCK_TLS_MODEL;

/* By the only thread of the process, before it creates one that must not
 * race with it: take the bias. False (and nothing changes) when the
 * process has threads already, a bias was ever taken, the calling thread
 * is inside a skipped section, a race detector watches the program
 * (ThreadSanitizer, valgrind), the kernel has no private expedited
 * membarrier, or QS_HOT_BIAS=0. */
bool qs_bias_grant(void);

/* Revoke a held or lent bias for good, waiting until its owner is outside
 * every skipped section (a thread that is not the owner; the slow path of
 * the gates). */
void qs_bias_revoke(void);

/* The probe-answering watchdog, before it drives a context: take the
 * bias from its owner as a revoker does, but only until
 * qs_bias_return(), so that a program whose handler computed for a while
 * gets its lock-free hot path back. The calling thread's gates do not
 * revoke meanwhile; another thread's do, for good. False (and nothing to
 * return) when no bias is held or lent. */
bool qs_bias_lend(void);

/* After the drive (no lock held, nothing of the hot path touched from
 * here to the next qs_bias_lend()): give the bias back unless another
 * thread revoked it meanwhile. */
void qs_bias_return(void);

/* The state, for tests and the class's diagnostics. */
enum qs_bias_state qs_bias_state(void);

/* Says which rule was broken, and aborts. */
_Noreturn void qs_hot_lock_broken(void);

/* At an entry of the library that a thread other than the owner may take
 * first (HG's forward, respond, cancel, context, lookup, registration
 * and bulk calls, NA's contexts, addresses, memory handles, polls and
 * cancels, the lock wrappers): revoke a held bias. The entries an RPC
 * takes many times have none of their own where the first thing they
 * touch goes through a gated helper: NA's posts and NA_Trigger() (the
 * operation's state, the context's queue), HG_Progress() and HG_Trigger()
 * (the context's counters, the completion queue), HG_Create() (the RPC
 * table), HG_Destroy(), HG_Ref_incr() and HG's address references (the
 * counts); nor have HG's argument (de)serializations, which touch only
 * the caller's handle. */
static inline void
qs_bias_gate(void)
{
    unsigned int s =
        atomic_load_explicit(&qs_bias_state_g, memory_order_acquire);

    if (__builtin_expect(s - QS_BIAS_HELD <= QS_BIAS_LENT - QS_BIAS_HELD, 0) &&
        !qs_bias_owner_tls && !qs_bias_lender_tls)
        qs_bias_revoke();
}

/* The owner's side of an acquisition: skipped while the bias is held
 * (the whole section, nested ones included, once it is). */
static inline bool
qs_bias_owner_acquire(void)
{
    unsigned int d =
        atomic_load_explicit(&qs_bias_depth_g, memory_order_relaxed);
    unsigned int s;

    if (d != 0) {
        /* Nested in a skipped section: a revoker waits for its end. */
        atomic_store_explicit(&qs_bias_depth_g, d + 1, memory_order_relaxed);
        return true;
    }
    atomic_store_explicit(&qs_bias_depth_g, 1, memory_order_relaxed);
    /* Only the compiler must keep the store before the load: the
     * revoker's membarrier() orders them on the processor. */
    atomic_signal_fence(memory_order_seq_cst);
    s = atomic_load_explicit(&qs_bias_state_g, memory_order_acquire);
    if (s == QS_BIAS_HELD)
        return true;
    atomic_store_explicit(&qs_bias_depth_g, 0, memory_order_relaxed);
    /* Revoked for good: take the short way from now on. */
    if (s == QS_BIAS_REVOKED)
        qs_bias_owner_tls = false;
    return false;
}

/* The owner's side of a release: whether its acquisition was skipped. */
static inline bool
qs_bias_owner_release(void)
{
    unsigned int d =
        atomic_load_explicit(&qs_bias_depth_g, memory_order_relaxed);

    if (d == 0)
        return false;
    /* Release: a revoker that sees 0 sees the section's stores. */
    atomic_store_explicit(&qs_bias_depth_g, d - 1, memory_order_release);
    return true;
}

/* Whether this acquisition is skipped (and counted as skipped). */
static inline bool
qs_hot_skip_acquire(void)
{
    if (QS_SINGLE_THREADED()) {
        qs_hot_skipped_tls++;
        return true;
    }
    if (!qs_bias_owner_tls) {
        qs_bias_gate();
        return false;
    }
    return qs_bias_owner_acquire();
}

/* Whether this release is of a skipped acquisition. */
static inline bool
qs_hot_skip_release(void)
{
    /* Without threads every acquisition was skipped. */
    if (QS_SINGLE_THREADED()) {
        qs_hot_skipped_tls--;
        return true;
    }
    /* Skipped without threads, and threads now: one was created inside
     * the section, and may be inside it too. */
    if (qs_hot_skipped_tls != 0)
        qs_hot_lock_broken();
    return qs_bias_owner_tls && qs_bias_owner_release();
}

/* Whether this thread is inside a skipped section (a wait inside one
 * sleeps instead of waiting on a condition variable with the lock). */
static inline bool
qs_hot_skipping(void)
{
    return qs_hot_skipped_tls != 0 ||
           (qs_bias_owner_tls &&
            atomic_load_explicit(&qs_bias_depth_g, memory_order_relaxed) != 0);
}

#endif /* QS_BIAS_H */
