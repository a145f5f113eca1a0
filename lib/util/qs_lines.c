/*
 * Line-aligned objects carved from chunks (qs_alloc.h). Allocations are
 * made when a class, a context, a handle, an operation id, a proc or a
 * simulated node or address is created, not per RPC, so one mutex serves
 * them all.
 */
#include "util/qs_alloc.h"
#include "util/qs_log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QS_LINES_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QS_LINES_SANITIZED 1
#endif
#endif
#ifndef QS_LINES_SANITIZED
#define QS_LINES_SANITIZED 0
#endif

#define QS_LINES_CLASSES (QS_LINES_MAX / QS_LINE)
#define QS_HUGE_PAGE (2u * 1024u * 1024u)

/* A freed object, linked into the list of its size, and marked: a
 * second free of it finds the mark (a live object's bytes match it with
 * odds of one in 2^64; qs_calloc_lines() zeroes it when the object is
 * handed out again). */
struct qs_lines_free {
    struct qs_lines_free *next;
    uint64_t mark;
};

#define QS_LINES_FREED 0x71736c696e657321ULL /* "qslines!" */

/* A chunk's extent, kept sorted by address so that a free can check,
 * by binary search, that its object came from a chunk; and, per line of
 * the chunk, the size in lines of the object carved at that line (0: no
 * object starts there), so that a free can check the size it is given.
 * A line's size never changes once carved: a freed object is reused only
 * for an object of its own size. */
struct qs_lines_chunk {
    uintptr_t lo, hi;
    uint16_t *lines;
};

static struct {
    pthread_mutex_t lock;
    struct qs_lines_free *free[QS_LINES_CLASSES + 1]; /* by size in lines */
    char *cur, *end;     /* what is left of the newest chunk */
    uint16_t *cur_lines; /* the newest chunk's sizes by line     */
    uintptr_t cur_lo;    /* and its first byte                   */
    size_t held;         /* bytes of all chunks                */
    size_t huge;         /* chunks advised to huge pages       */
    struct qs_lines_chunk *chunks;
    size_t nchunks, capchunks;
} qs_lines = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t qs_lines_once = PTHREAD_ONCE_INIT;
static bool qs_lines_plain; /* every object its own posix_memalign() */

/* A child forked while another thread held the lock gets it unlocked. */
static void
qs_lines_prepare(void)
{
    pthread_mutex_lock(&qs_lines.lock);
}

static void
qs_lines_release(void)
{
    pthread_mutex_unlock(&qs_lines.lock);
}

/* Whether the program around the library checks its heap: built with
 * AddressSanitizer or ThreadSanitizer itself (a sanitized test of a
 * service linked against this unsanitized library), or run under
 * valgrind, which preloads its vgpreload_*.so. Then every object is its
 * own allocation, which those tools can follow. */
static bool
qs_lines_checked_program(void)
{
    const char *preload = getenv("LD_PRELOAD");

    return dlsym(RTLD_DEFAULT, "__asan_init") != NULL ||
           dlsym(RTLD_DEFAULT, "__tsan_init") != NULL ||
           (preload != NULL && strstr(preload, "vgpreload") != NULL);
}

static void
qs_lines_choose(void)
{
    const char *env = getenv("QS_LINES");
    const char *why = NULL; /* why each object is its own allocation */

    (void) pthread_atfork(qs_lines_prepare, qs_lines_release, qs_lines_release);
    if (QS_LINES_SANITIZED)
        why = "the library is built with a sanitizer";
    else if (env != NULL && strcmp(env, "malloc") == 0)
        why = "QS_LINES=malloc";
    else if (qs_lines_checked_program())
        why = "the program checks its heap: AddressSanitizer, "
              "ThreadSanitizer or valgrind";
    qs_lines_plain = why != NULL;
    if (why != NULL)
        qs_log("util", QS_LOG_DEBUG,
               "line-aligned objects: one allocation each (%s)", why);
    else
        qs_log("util", QS_LOG_DEBUG, "line-aligned objects: chunks");
}

static size_t
qs_lines_round(size_t size)
{
    if (size > SIZE_MAX - (QS_LINE - 1))
        return 0;
    return (size + QS_LINE - 1) & ~(size_t) (QS_LINE - 1);
}

static void *
qs_lines_own(size_t size)
{
    void *mem;

    if (posix_memalign(&mem, QS_LINE, size) != 0)
        return NULL;
    return mem;
}

/* An object of its own, `size` bytes (whole lines), zeroed. */
static void *
qs_lines_own_zeroed(size_t size)
{
    void *mem = qs_lines_own(size);

    return mem != NULL ? memset(mem, 0, size) : NULL;
}

/* Record a chunk in the sorted table; its sizes by line, or NULL when
 * there is no memory for them. Called with the lock. */
static uint16_t *
qs_lines_record(char *chunk, size_t len)
{
    uintptr_t lo = (uintptr_t) chunk;
    uint16_t *lines = calloc(len / QS_LINE, sizeof(*lines));
    size_t i;

    if (lines == NULL)
        return NULL;

    if (qs_lines.nchunks == qs_lines.capchunks) {
        size_t cap = qs_lines.capchunks ? 2 * qs_lines.capchunks : 16;
        struct qs_lines_chunk *t = realloc(qs_lines.chunks, cap * sizeof(*t));

        if (t == NULL) {
            free(lines);
            return NULL;
        }
        qs_lines.chunks = t;
        qs_lines.capchunks = cap;
    }
    for (i = qs_lines.nchunks; i > 0 && qs_lines.chunks[i - 1].lo > lo; i--)
        qs_lines.chunks[i] = qs_lines.chunks[i - 1];
    qs_lines.chunks[i].lo = lo;
    qs_lines.chunks[i].hi = lo + len;
    qs_lines.chunks[i].lines = lines;
    qs_lines.nchunks++;
    return lines;
}

/* The size entry of the line p if p is a line of some chunk, else NULL.
 * Called with the lock. */
static uint16_t *
qs_lines_entry(const void *p)
{
    uintptr_t a = (uintptr_t) p;
    size_t lo = 0, hi = qs_lines.nchunks;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct qs_lines_chunk *c = &qs_lines.chunks[mid];

        if (a < c->lo)
            hi = mid;
        else if (a >= c->hi)
            lo = mid + 1;
        else
            return (a - c->lo) % QS_LINE == 0 ? &c->lines[(a - c->lo) / QS_LINE]
                                              : NULL;
    }
    return NULL;
}

/* A new chunk for an object of `size` bytes; the rest of the old one is
 * left unused (less than the largest object). Called with the lock. */
static bool
qs_lines_grow(size_t size)
{
    size_t len =
        qs_lines.held < QS_LINES_CHUNK_MIN ? QS_LINES_CHUNK_MIN : qs_lines.held;
    uint16_t *lines;
    char *chunk;

    if (len > QS_LINES_CHUNK_MAX)
        len = QS_LINES_CHUNK_MAX;
    if (len < size)
        len = size;
    chunk = qs_lines_own(len);
    if (chunk == NULL)
        return false;
    lines = qs_lines_record(chunk, len);
    if (lines == NULL) {
        free(chunk);
        return false;
    }
    if (qs_lines.held >= QS_LINES_HUGE_AFTER) {
        /* The whole huge pages inside the chunk; advice only. */
        uintptr_t lo = ((uintptr_t) chunk + QS_HUGE_PAGE - 1) &
                       ~(uintptr_t) (QS_HUGE_PAGE - 1);
        uintptr_t hi =
            ((uintptr_t) chunk + len) & ~(uintptr_t) (QS_HUGE_PAGE - 1);

        if (hi > lo && madvise((void *) lo, hi - lo, MADV_HUGEPAGE) == 0)
            qs_lines.huge++;
    }
    qs_lines.cur = chunk;
    qs_lines.end = chunk + len;
    qs_lines.cur_lines = lines;
    qs_lines.cur_lo = (uintptr_t) chunk;
    qs_lines.held += len;
    return true;
}

void *
qs_lines_chunked_alloc(size_t size)
{
    struct qs_lines_free *obj;
    size_t cls;

    size = qs_lines_round(size);
    if (size == 0)
        return NULL;
    if (size > QS_LINES_MAX)
        return qs_lines_own_zeroed(size);
    cls = size / QS_LINE;
    pthread_mutex_lock(&qs_lines.lock);
    obj = qs_lines.free[cls];
    if (obj != NULL) {
        qs_lines.free[cls] = obj->next;
    } else if ((size_t) (qs_lines.end - qs_lines.cur) >= size ||
               qs_lines_grow(size)) {
        obj = (struct qs_lines_free *) (void *) qs_lines.cur;
        qs_lines.cur_lines[((uintptr_t) obj - qs_lines.cur_lo) / QS_LINE] =
            (uint16_t) cls;
        qs_lines.cur += size;
    }
    pthread_mutex_unlock(&qs_lines.lock);
    return obj != NULL ? memset(obj, 0, size) : NULL;
}

void
qs_lines_chunked_free(void *p, size_t size)
{
    struct qs_lines_free *obj = p;
    const uint16_t *entry;
    size_t cls;

    if (p == NULL)
        return;
    size = qs_lines_round(size);
    if (size == 0 || size > QS_LINES_MAX) {
        free(p);
        return;
    }
    cls = size / QS_LINE;
    pthread_mutex_lock(&qs_lines.lock);
    entry = qs_lines_entry(p);
    if (entry == NULL || *entry == 0) {
        /* Memory from elsewhere (or the inside of an object) on a free
         * list would be handed out as an object later and corrupt
         * whatever owns it: stop here instead. */
        qs_log("util", QS_LOG_ERROR,
               entry == NULL
                   ? "qs_free_lines: %p did not come from qs_calloc_lines()"
                   : "qs_free_lines: %p is inside an object, not its start",
               p);
        abort();
    }
    if (*entry != cls) {
        /* On the list of another size it would be handed out larger
         * than it is, over its neighbour, or leave lines unused. */
        qs_log("util", QS_LOG_ERROR,
               "qs_free_lines: %p freed as %zu bytes, allocated as %zu", p,
               size, (size_t) *entry * QS_LINE);
        abort();
    }
    if (obj->mark == QS_LINES_FREED) {
        /* On a list twice, it would be handed out to two owners. */
        qs_log("util", QS_LOG_ERROR, "qs_free_lines: %p freed twice", p);
        abort();
    }
    obj->mark = QS_LINES_FREED;
    obj->next = qs_lines.free[cls];
    qs_lines.free[cls] = obj;
    pthread_mutex_unlock(&qs_lines.lock);
}

void *
qs_calloc_lines(size_t size)
{
    pthread_once(&qs_lines_once, qs_lines_choose);
    if (!qs_lines_plain)
        return qs_lines_chunked_alloc(size);
    size = qs_lines_round(size);
    return size != 0 ? qs_lines_own_zeroed(size) : NULL;
}

void
qs_free_lines(void *p, size_t size)
{
    if (p == NULL)
        return;
    /* Only an object of qs_calloc_lines() comes here, so the choice has
     * been made. */
    if (qs_lines_plain)
        free(p);
    else
        qs_lines_chunked_free(p, size);
}

/* One of the counters, read under the lock. */
static size_t
qs_lines_read(const size_t *counter)
{
    size_t n;

    pthread_mutex_lock(&qs_lines.lock);
    n = *counter;
    pthread_mutex_unlock(&qs_lines.lock);
    return n;
}

size_t
qs_lines_chunk_bytes(void)
{
    return qs_lines_read(&qs_lines.held);
}

size_t
qs_lines_huge_chunks(void)
{
    return qs_lines_read(&qs_lines.huge);
}
