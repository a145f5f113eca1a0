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
#include <stdint.h>

/* The initial-exec model makes each increment one %fs-relative add: in
 * the shared library the default model calls __tls_get_addr on every
 * acquisition. It takes 8 bytes of the static TLS block, which glibc keeps
 * a surplus of for libraries loaded with dlopen() too. */
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

#endif /* QS_LOCK_H */
