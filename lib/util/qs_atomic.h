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
 * true happen before anything the new thread does. Elsewhere the helpers
 * always make the locked instruction. The same test guards libstdc++'s
 * shared_ptr counts.
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

#if defined(__GLIBC__) &&                                                      \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#include <sys/single_threaded.h>
#define QS_SINGLE_THREADED() (__libc_single_threaded != 0)
#else
#define QS_SINGLE_THREADED() false
#endif

#define QS_ATOMIC_RMW_DEFINE(name, atype, vtype)                               \
    static inline vtype qs_atomic_add_##name(atype *p, vtype v,                \
                                             memory_order order)               \
    {                                                                          \
        if (QS_SINGLE_THREADED()) {                                            \
            vtype old = atomic_load_explicit(p, memory_order_relaxed);         \
            atomic_store_explicit(p, (vtype) (old + v), memory_order_relaxed); \
            return old;                                                        \
        }                                                                      \
        return atomic_fetch_add_explicit(p, v, order);                         \
    }                                                                          \
    static inline vtype qs_atomic_sub_##name(atype *p, vtype v,                \
                                             memory_order order)               \
    {                                                                          \
        if (QS_SINGLE_THREADED()) {                                            \
            vtype old = atomic_load_explicit(p, memory_order_relaxed);         \
            atomic_store_explicit(p, (vtype) (old - v), memory_order_relaxed); \
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
    static inline bool qs_atomic_cas_##name(                                   \
        atype *p, vtype *expected, vtype desired, memory_order success,        \
        memory_order failure)                                                  \
    {                                                                          \
        if (QS_SINGLE_THREADED()) {                                            \
            vtype cur = atomic_load_explicit(p, memory_order_relaxed);         \
                                                                               \
            if (cur != *expected) {                                            \
                *expected = cur;                                               \
                return false;                                                  \
            }                                                                  \
            atomic_store_explicit(p, desired, memory_order_relaxed);           \
            return true;                                                       \
        }                                                                      \
        return atomic_compare_exchange_strong_explicit(p, expected, desired,   \
                                                       success, failure);      \
    }

QS_ATOMIC_CAS_DEFINE(int, atomic_int, int)
QS_ATOMIC_CAS_DEFINE(uint, atomic_uint, unsigned int)

#undef QS_ATOMIC_CAS_DEFINE

#endif /* QS_ATOMIC_H */
