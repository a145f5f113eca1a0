/*
 * Lock and allocation counters for hot-path tests (see qs_count.h).
 */
#include "qs_count.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QS_COUNT_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QS_COUNT_OFF 1
#endif
#endif

static _Thread_local bool counting;
static _Thread_local struct qs_count counts;

bool
qs_count_available(void)
{
#ifdef QS_COUNT_OFF
    return false;
#else
    return true;
#endif
}

void
qs_count_begin(void)
{
    counts.locks = 0;
    counts.allocs = 0;
    counting = true;
}

struct qs_count
qs_count_end(void)
{
    counting = false;
    return counts;
}

#ifndef QS_COUNT_OFF

/* The C library's own entry points. glibc exports the allocator under
 * __libc_* names, which avoids dlsym() (which itself allocates). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);

void *
malloc(size_t size)
{
    if (counting)
        counts.allocs++;
    return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
    if (counting)
        counts.allocs++;
    return __libc_calloc(n, size);
}

void *
realloc(void *ptr, size_t size)
{
    if (counting)
        counts.allocs++;
    return __libc_realloc(ptr, size);
}

/* Resolved on first use; the first call of each comes from the test's own
 * thread before counting starts (qs_count_begin() is called after setup). */
#define QS_NEXT(type, name)                                                    \
    static type next_##name;                                                   \
    if (next_##name == NULL)                                                   \
        next_##name = (type) dlsym(RTLD_NEXT, #name);

typedef int (*mutex_fn)(pthread_mutex_t *);
typedef int (*rwlock_fn)(pthread_rwlock_t *);

int
pthread_mutex_lock(pthread_mutex_t *m)
{
    QS_NEXT(mutex_fn, pthread_mutex_lock);
    if (counting)
        counts.locks++;
    return next_pthread_mutex_lock(m);
}

int
pthread_mutex_trylock(pthread_mutex_t *m)
{
    QS_NEXT(mutex_fn, pthread_mutex_trylock);
    if (counting)
        counts.locks++;
    return next_pthread_mutex_trylock(m);
}

int
pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    QS_NEXT(rwlock_fn, pthread_rwlock_rdlock);
    if (counting)
        counts.locks++;
    return next_pthread_rwlock_rdlock(l);
}

int
pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    QS_NEXT(rwlock_fn, pthread_rwlock_wrlock);
    if (counting)
        counts.locks++;
    return next_pthread_rwlock_wrlock(l);
}

#endif /* !QS_COUNT_OFF */
