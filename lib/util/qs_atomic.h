/*
 * Read-modify-writes on the hot path of an RPC (references, counters, an
 * operation's state) that a process with one thread makes without the
 * bus lock.
 *
 * On x86 every atomic read-modify-write is a locked instruction, about
 * 6 ns here against 1 ns for a load and a store, and an RPC makes about
 * fifty of them across the layers. A process that has never created a
 * thread (a test driving the simulated fabric, a single-threaded Mercury
 * program) cannot race with itself, so these helpers then load and store
 * instead. glibc 2.32 and later keeps __libc_single_threaded true until
 * the process creates its first thread, and pthread_create() clears it
 * before the new thread runs: a plain load and store made while it is
 * true happen before anything the new thread does. The thread that holds
 * the bias of util/qs_bias.h does the same inside a skipped section, so
 * that a revoker waits for it. Elsewhere the helpers always make the
 * locked instruction. The same test of __libc_single_threaded guards
 * libstdc++'s shared_ptr counts.
 *
 * Every access still goes through atomic_load_explicit() and
 * atomic_store_explicit(), so the objects stay _Atomic and ThreadSanitizer
 * sees atomic accesses on both paths.
 */
#ifndef QS_ATOMIC_H
#define QS_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/qs_bias.h"

/* How a read-modify-write is made: QS_PLAIN without threads, QS_PLAIN_BIASED
 * by the bias's owner inside a skipped section opened for it (closed by
 * qs_atomic_plain_end()), QS_LOCKED otherwise. */
enum { QS_LOCKED = 0, QS_PLAIN = 1, QS_PLAIN_BIASED = 2 };

/* Always inlined, like the helpers below: out of line, a call per
 * read-modify-write costs a one-thread program more than it saves. */
#define QS_ATOMIC_INLINE static inline __attribute__((always_inline))

QS_ATOMIC_INLINE int
qs_atomic_plain_begin(void)
{
    if (QS_SINGLE_THREADED())
        return QS_PLAIN;
    if (!qs_bias_owner_tls) {
        qs_bias_gate();
        return QS_LOCKED;
    }
    return qs_bias_owner_acquire() ? QS_PLAIN_BIASED : QS_LOCKED;
}

QS_ATOMIC_INLINE void
qs_atomic_plain_end(int how)
{
    if (how == QS_PLAIN_BIASED)
        (void) qs_bias_owner_release();
}

#define QS_ATOMIC_RMW_DEFINE(name, atype, vtype)                               \
    QS_ATOMIC_INLINE vtype qs_atomic_add_##name(atype *p, vtype v,             \
                                                memory_order order)            \
    {                                                                          \
        int how = qs_atomic_plain_begin();                                     \
                                                                               \
        if (how != QS_LOCKED) {                                                \
            vtype old = atomic_load_explicit(p, memory_order_relaxed);         \
            atomic_store_explicit(p, (vtype) (old + v), memory_order_relaxed); \
            qs_atomic_plain_end(how);                                          \
            return old;                                                        \
        }                                                                      \
        return atomic_fetch_add_explicit(p, v, order);                         \
    }                                                                          \
    QS_ATOMIC_INLINE vtype qs_atomic_sub_##name(atype *p, vtype v,             \
                                                memory_order order)            \
    {                                                                          \
        int how = qs_atomic_plain_begin();                                     \
                                                                               \
        if (how != QS_LOCKED) {                                                \
            vtype old = atomic_load_explicit(p, memory_order_relaxed);         \
            atomic_store_explicit(p, (vtype) (old - v), memory_order_relaxed); \
            qs_atomic_plain_end(how);                                          \
            return old;                                                        \
        }                                                                      \
        return atomic_fetch_sub_explicit(p, v, order);                         \
    }

QS_ATOMIC_RMW_DEFINE(uint, atomic_uint, unsigned int)
QS_ATOMIC_RMW_DEFINE(ulong, atomic_ulong, unsigned long)
QS_ATOMIC_RMW_DEFINE(ullong, atomic_ullong, unsigned long long)

#undef QS_ATOMIC_RMW_DEFINE

/* atomic_fetch_add_explicit() and atomic_fetch_sub_explicit() for the
 * unsigned counters of the hot path. */
#define qs_atomic_fetch_add(obj, arg, order)                                   \
    _Generic((obj), atomic_uint *                                              \
             : qs_atomic_add_uint, atomic_ulong *                              \
             : qs_atomic_add_ulong, atomic_ullong *                            \
             : qs_atomic_add_ullong)(obj, arg, order)
#define qs_atomic_fetch_sub(obj, arg, order)                                   \
    _Generic((obj), atomic_uint *                                              \
             : qs_atomic_sub_uint, atomic_ulong *                              \
             : qs_atomic_sub_ulong, atomic_ullong *                            \
             : qs_atomic_sub_ullong)(obj, arg, order)

/* atomic_compare_exchange_strong_explicit() on an int (qs_atomic_cas_int)
 * and on an unsigned int (qs_atomic_cas_uint). */
#define QS_ATOMIC_CAS_DEFINE(name, atype, vtype)                               \
    QS_ATOMIC_INLINE bool qs_atomic_cas_##name(                                \
        atype *p, vtype *expected, vtype desired, memory_order success,        \
        memory_order failure)                                                  \
    {                                                                          \
        int how = qs_atomic_plain_begin();                                     \
                                                                               \
        if (how != QS_LOCKED) {                                                \
            vtype cur = atomic_load_explicit(p, memory_order_relaxed);         \
            bool same = cur == *expected;                                      \
                                                                               \
            if (same)                                                          \
                atomic_store_explicit(p, desired, memory_order_relaxed);       \
            else                                                               \
                *expected = cur;                                               \
            qs_atomic_plain_end(how);                                          \
            return same;                                                       \
        }                                                                      \
        return atomic_compare_exchange_strong_explicit(p, expected, desired,   \
                                                       success, failure);      \
    }

QS_ATOMIC_CAS_DEFINE(int, atomic_int, int)
QS_ATOMIC_CAS_DEFINE(uint, atomic_uint, unsigned int)

#undef QS_ATOMIC_CAS_DEFINE

#endif /* QS_ATOMIC_H */
