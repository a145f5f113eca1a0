/*
 * Debug counters for hot-path tests: lock acquisitions and heap
 * allocations made by the calling thread between qs_count_begin() and
 * qs_count_end().
 *
 * Linking qs_count.c into a test program is the flag that compiles them
 * in: it interposes pthread_mutex_lock(), pthread_mutex_trylock(), the
 * rwlock lock calls, malloc(), calloc() and realloc() for the whole
 * process (the library is shared, so its calls and the plugins' reach the
 * test program's definitions first) and counts the calls made by a thread
 * that is counting. Nothing else changes: each call goes on to the C
 * library's own. Sanitizer runtimes interpose the same functions, so under
 * a sanitizer the counters are off and qs_count_available() says so.
 */
#ifndef QS_COUNT_H
#define QS_COUNT_H

#include <stdbool.h>
#include <stdint.h>

struct qs_count {
    uint64_t locks;  /* mutex lock and trylock, rwlock read and write lock */
    uint64_t allocs; /* malloc, calloc, realloc */
};

/* False in sanitizer builds, where the counters cannot be interposed. */
bool qs_count_available(void);

/* Start counting on this thread (from zero). */
void qs_count_begin(void);

/* Stop counting on this thread and return what was counted. */
struct qs_count qs_count_end(void);

#endif /* QS_COUNT_H */
