/*
 * Objects laid out by cache line: zeroed memory on a 64-byte boundary,
 * rounded up to whole lines, so that an object shares no line with
 * another and the fields it groups by line stay on those lines. free()
 * releases it.
 */
#ifndef QS_ALLOC_H
#define QS_ALLOC_H

#include <stdlib.h>
#include <string.h>

#define QS_LINE 64u

/* NULL when out of memory. */
static inline void *
qs_calloc_lines(size_t size)
{
    void *mem;

    size = (size + QS_LINE - 1) & ~(size_t) (QS_LINE - 1);
    if (size == 0 || posix_memalign(&mem, QS_LINE, size) != 0)
        return NULL;
    return memset(mem, 0, size);
}

#endif /* QS_ALLOC_H */
