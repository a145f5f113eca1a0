/*
 * Lock acquisitions that count. Every mutex and rwlock acquisition in the
 * RPC layers (lib/hg, lib/bulk) goes through these wrappers, which add one
 * to a per-thread counter before locking. The counter costs one
 * thread-local increment and is always compiled in; tests read it to hold
 * the hot path to its lock budget (tests/unit/test_hg_hotpath.c), so a new
 * lock on the path of an RPC cannot creep in silently.
 */
#ifndef QS_LOCK_H
#define QS_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/qs_atomic.h"
#include "util/qs_bias.h"

extern _Thread_local uint64_t qs_lock_count_tls QS_LOCK_TLS_MODEL;

/* Acquisitions made through the wrappers by this thread so far. */
uint64_t qs_lock_count(void);

/* A thread that is not the bias's owner revokes it first (util/qs_bias.h):
 * the mutex may guard what the owner's skipped sections touch. */
static inline void
qs_mutex_lock(pthread_mutex_t *m)
{
    qs_lock_count_tls++;
    qs_bias_gate();
    pthread_mutex_lock(m);
}

static inline void
qs_rwlock_rdlock(pthread_rwlock_t *l)
{
    qs_lock_count_tls++;
    qs_bias_gate();
    pthread_rwlock_rdlock(l);
}

static inline void
qs_rwlock_wrlock(pthread_rwlock_t *l)
{
    qs_lock_count_tls++;
    qs_bias_gate();
    pthread_rwlock_wrlock(l);
}

/*
 * The locks an RPC takes most often (a handle's, an NA context's
 * completion queue, the HG completion queue when nobody waits on it, the
 * timer list, the target's pool and posted list when a handle returns or
 * a receive is replaced, the RPC table's lookup, the simulated fabric's
 * posts and polls) guard a few fields each, and the code between their
 * lock and unlock neither creates a thread nor calls the program, nor,
 * while the lock is skipped, waits on a condition variable with it (the
 * fabric's poll sleeps instead). While the process has never created a
 * thread nobody can contend for them, so these wrappers then skip the
 * mutex (glibc's malloc skips its arena locks the same way), and so does
 * the one thread that holds the bias of util/qs_bias.h until another
 * thread comes to the hot path; qs_hot_lock() still counts the
 * acquisition. The unlock learns from the count of skipped acquisitions
 * (per thread without threads, the owner's with the bias) whether its
 * lock was skipped. That count also checks the rule in every build: an
 * unlock that finds threads while an acquisition skipped without them is
 * outstanding stops the process rather than unlock a mutex nobody
 * locked.
 */
/* For NA and the plugins, whose acquisitions the RPC layers' counter
 * leaves out. */
static inline void
qs_hot_lock_uncounted(pthread_mutex_t *m)
{
    if (!qs_hot_skip_acquire())
        pthread_mutex_lock(m);
}

static inline void
qs_hot_lock(pthread_mutex_t *m)
{
    qs_lock_count_tls++;
    qs_hot_lock_uncounted(m);
}

static inline void
qs_hot_unlock(pthread_mutex_t *m)
{
    if (!qs_hot_skip_release())
        pthread_mutex_unlock(m);
}

/* The read side of a hot rwlock (the RPC table's lookup), by the same
 * rule. */
static inline void
qs_hot_rdlock(pthread_rwlock_t *l)
{
    qs_lock_count_tls++;
    if (!qs_hot_skip_acquire())
        pthread_rwlock_rdlock(l);
}

static inline void
qs_hot_rwunlock(pthread_rwlock_t *l)
{
    if (!qs_hot_skip_release())
        pthread_rwlock_unlock(l);
}

#endif /* QS_LOCK_H */
