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

/* The initial-exec model makes each increment one %fs-relative add: in
 * the shared library the default model calls __tls_get_addr on every
 * acquisition. It and qs_hot_skipped_tls take 12 bytes of the static TLS
 * block, which glibc keeps a surplus of for libraries loaded with dlopen()
 * too. */
#define QS_LOCK_TLS_MODEL __attribute__((tls_model("initial-exec")))

extern _Thread_local uint64_t qs_lock_count_tls QS_LOCK_TLS_MODEL;

/* Acquisitions made through the wrappers by this thread so far. */
uint64_t qs_lock_count(void);

static inline void
qs_mutex_lock(pthread_mutex_t *m)
{
    qs_lock_count_tls++;
    pthread_mutex_lock(m);
}

static inline void
qs_rwlock_rdlock(pthread_rwlock_t *l)
{
    qs_lock_count_tls++;
    pthread_rwlock_rdlock(l);
}

static inline void
qs_rwlock_wrlock(pthread_rwlock_t *l)
{
    qs_lock_count_tls++;
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
 * mutex (glibc's malloc skips its arena locks the same way);
 * qs_hot_lock() still counts the acquisition. The unlock asks the same
 * question and gets the same answer, because only pthread_create()
 * changes it and no such section calls it. A per-thread count of skipped
 * acquisitions checks that in every build: an unlock that finds threads
 * while a skipped one is outstanding stops the process rather than unlock
 * a mutex nobody locked.
 */
extern _Thread_local unsigned int qs_hot_skipped_tls QS_LOCK_TLS_MODEL;

/* Says which rule was broken, and aborts. */
_Noreturn void qs_hot_lock_broken(void);

/* Whether this acquisition is skipped (and counted as skipped). */
static inline bool
qs_hot_skip_acquire(void)
{
    if (!QS_SINGLE_THREADED())
        return false;
    qs_hot_skipped_tls++;
    return true;
}

/* Whether this release is of a skipped acquisition. */
static inline bool
qs_hot_skip_release(void)
{
    if (QS_SINGLE_THREADED()) {
        qs_hot_skipped_tls--;
        return true;
    }
    if (qs_hot_skipped_tls != 0)
        qs_hot_lock_broken();
    return false;
}

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
