/*
 * Line-aligned objects carved from chunks (qs_alloc.h). Allocations are
 * made when a class, a context, a handle, an operation id, a proc or a
 * simulated node or address is created, not per RPC, so one mutex serves
 * them all.
 */
#include "util/qs_alloc.h"
#include "util/qs_log.h"
#include "util/qs_tools.h"

#include <malloc.h>
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
 * handed out again). The list is doubly linked so that a chunk being
 * released can take its objects off in place. */
struct qs_lines_free {
    struct qs_lines_free *next, *prev;
    uint64_t mark;
};

#define QS_LINES_FREED 0x71736c696e657321ULL /* "qslines!" */

/* A chunk: its extent; how many of its objects are handed out; whether it
 * was advised to huge pages; and, per line, the size in lines of the
 * object carved at that line (0: no object starts there), so that a free
 * can check the size it is given. A line's size never changes once
 * carved: a freed object is reused only for an object of its own size. */
struct qs_lines_chunk {
    uintptr_t lo, hi;
    size_t live;
    bool huge;
    uint16_t lines[];
};

static struct {
    pthread_mutex_t lock;
    struct qs_lines_free *free[QS_LINES_CLASSES + 1]; /* by size in lines */
    char *cur, *end; /* what is left of the newest chunk */
    struct qs_lines_chunk *newest;
    size_t held;                    /* bytes of the chunks held         */
    size_t huge;                    /* of them advised to huge pages    */
    struct qs_lines_chunk **chunks; /* sorted by address             */
    size_t nchunks, capchunks;
} qs_lines = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t qs_lines_once = PTHREAD_ONCE_INIT;
static bool qs_lines_plain; /* every object its own posix_memalign() */
/* ... from an allocator that reports each object's size exactly (a
 * sanitizer's or valgrind's memcheck, not glibc's, which gives more). */
static bool qs_lines_exact;

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

/* Whether the allocator reports the size of an aligned object as asked,
 * asked once: a sanitizer's and memcheck's do; glibc's adds its header's
 * spare word, so an object of 3 lines reads as 200 bytes there. */
static bool
qs_lines_sizes_exact(void)
{
    void *mem;
    bool exact;

    if (posix_memalign(&mem, QS_LINE, 3 * QS_LINE) != 0)
        return false;
    exact = malloc_usable_size(mem) == 3 * QS_LINE;
    free(mem);
    return exact;
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
    /* The program checks its heap (a sanitized test of a service linked
     * against this unsanitized library, or valgrind's memcheck, helgrind
     * or DRD): every object is its own allocation, which those tools can
     * follow. Under callgrind or cachegrind the chunks stay, as a
     * profile should see them. */
    else if (qs_checked_program(QS_TOOL_ASAN | QS_TOOL_TSAN | QS_TOOL_VALGRIND))
        why = "the program checks its heap: AddressSanitizer, "
              "ThreadSanitizer or valgrind";
    qs_lines_plain = why != NULL;
    qs_lines_exact = why != NULL && qs_lines_sizes_exact();
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

/* The index of the first chunk in the sorted table that ends above a:
 * the chunk holding a if there is one, else where a chunk starting at a
 * belongs. Binary search, called with the lock. */
static size_t
qs_lines_index(uintptr_t a)
{
    size_t lo = 0, hi = qs_lines.nchunks;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (a >= qs_lines.chunks[mid]->hi)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The chunk holding p, or NULL. Called with the lock. */
static struct qs_lines_chunk *
qs_lines_chunk_of(const void *p)
{
    uintptr_t a = (uintptr_t) p;
    size_t i = qs_lines_index(a);

    return i < qs_lines.nchunks && a >= qs_lines.chunks[i]->lo
               ? qs_lines.chunks[i]
               : NULL;
}

/* Record a chunk of len bytes at mem in the sorted table: its
 * description, or NULL when there is no memory for it. Called with the
 * lock. */
static struct qs_lines_chunk *
qs_lines_record(char *mem, size_t len)
{
    struct qs_lines_chunk *c =
        calloc(1, sizeof(*c) + len / QS_LINE * sizeof(c->lines[0]));
    size_t i;

    if (c == NULL)
        return NULL;
    if (qs_lines.nchunks == qs_lines.capchunks) {
        size_t cap = qs_lines.capchunks ? 2 * qs_lines.capchunks : 16;
        struct qs_lines_chunk **t = realloc(qs_lines.chunks, cap * sizeof(*t));

        if (t == NULL) {
            free(c);
            return NULL;
        }
        qs_lines.chunks = t;
        qs_lines.capchunks = cap;
    }
    c->lo = (uintptr_t) mem;
    c->hi = c->lo + len;
    i = qs_lines_index(c->lo);
    memmove(&qs_lines.chunks[i + 1], &qs_lines.chunks[i],
            (qs_lines.nchunks - i) * sizeof(qs_lines.chunks[0]));
    qs_lines.chunks[i] = c;
    qs_lines.nchunks++;
    return c;
}

static void
qs_lines_unlink(struct qs_lines_free *obj, size_t cls)
{
    if (obj->prev != NULL)
        obj->prev->next = obj->next;
    else
        qs_lines.free[cls] = obj->next;
    if (obj->next != NULL)
        obj->next->prev = obj->prev;
}

/* A chunk none of whose objects is handed out, and that is not the one
 * being carved, goes back to malloc: its objects leave their lists first.
 * Called with the lock. */
static void
qs_lines_drop(struct qs_lines_chunk *c)
{
    size_t n = (c->hi - c->lo) / QS_LINE, i = qs_lines_index(c->lo);

    for (size_t l = 0; l < n; l += c->lines[l] ? c->lines[l] : 1)
        if (c->lines[l] != 0)
            qs_lines_unlink(
                (struct qs_lines_free *) (void *) (c->lo + l * QS_LINE),
                c->lines[l]);
    memmove(&qs_lines.chunks[i], &qs_lines.chunks[i + 1],
            (qs_lines.nchunks - i - 1) * sizeof(qs_lines.chunks[0]));
    qs_lines.nchunks--;
    qs_lines.held -= c->hi - c->lo;
    qs_lines.huge -= c->huge;
    free((void *) c->lo);
    free(c);
}

/* A new chunk for an object of `size` bytes; the rest of the old one is
 * left unused (less than the largest object), and the old one goes if
 * nothing in it is handed out. Called with the lock. */
static bool
qs_lines_grow(size_t size)
{
    size_t len =
        qs_lines.held < QS_LINES_CHUNK_MIN ? QS_LINES_CHUNK_MIN : qs_lines.held;
    struct qs_lines_chunk *c, *old = qs_lines.newest;
    char *mem;

    if (len > QS_LINES_CHUNK_MAX)
        len = QS_LINES_CHUNK_MAX;
    if (len < size)
        len = size;
    mem = qs_lines_own(len);
    if (mem == NULL)
        return false;
    c = qs_lines_record(mem, len);
    if (c == NULL) {
        free(mem);
        return false;
    }
    if (qs_lines.held >= QS_LINES_HUGE_AFTER) {
        /* The whole huge pages inside the chunk; advice only. */
        uintptr_t lo =
            (c->lo + QS_HUGE_PAGE - 1) & ~(uintptr_t) (QS_HUGE_PAGE - 1);
        uintptr_t hi = c->hi & ~(uintptr_t) (QS_HUGE_PAGE - 1);

        c->huge = hi > lo && madvise((void *) lo, hi - lo, MADV_HUGEPAGE) == 0;
        qs_lines.huge += c->huge;
    }
    qs_lines.cur = mem;
    qs_lines.end = mem + len;
    qs_lines.newest = c;
    qs_lines.held += len;
    if (old != NULL && old->live == 0)
        qs_lines_drop(old);
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
        qs_lines_unlink(obj, cls);
        qs_lines_chunk_of(obj)->live++;
    } else if ((size_t) (qs_lines.end - qs_lines.cur) >= size ||
               qs_lines_grow(size)) {
        struct qs_lines_chunk *c = qs_lines.newest;

        obj = (struct qs_lines_free *) (void *) qs_lines.cur;
        c->lines[((uintptr_t) obj - c->lo) / QS_LINE] = (uint16_t) cls;
        c->live++;
        qs_lines.cur += size;
    }
    pthread_mutex_unlock(&qs_lines.lock);
    return obj != NULL ? memset(obj, 0, size) : NULL;
}

void
qs_lines_chunked_free(void *p, size_t size)
{
    struct qs_lines_free *obj = p;
    struct qs_lines_chunk *c;
    const uint16_t *entry = NULL;
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
    c = qs_lines_chunk_of(p);
    if (c != NULL && ((uintptr_t) p - c->lo) % QS_LINE == 0)
        entry = &c->lines[((uintptr_t) p - c->lo) / QS_LINE];
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
    obj->prev = NULL;
    obj->next = qs_lines.free[cls];
    if (obj->next != NULL)
        obj->next->prev = obj;
    qs_lines.free[cls] = obj;
    if (--c->live == 0 && c != qs_lines.newest)
        qs_lines_drop(c);
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

/* An object of its own freed as another size than it was allocated: the
 * chunks stop the process for that (qs_lines_chunked_free()), and so does
 * this mode, which is the one sanitized builds and checked programs run.
 * Their allocators report the size they gave exactly; glibc's reports
 * more (qs_lines_sizes_exact()), so there only a size larger than the
 * object is caught. */
static void
qs_lines_plain_check(void *p, size_t size)
{
    size_t rounded = qs_lines_round(size), usable = malloc_usable_size(p);

    if (rounded != 0 && usable >= rounded &&
        (!qs_lines_exact || usable == rounded))
        return;
    qs_log("util", QS_LOG_ERROR,
           "qs_free_lines: %p freed as %zu bytes, allocated as %zu", p, rounded,
           usable);
    abort();
}

void
qs_free_lines(void *p, size_t size)
{
    if (p == NULL)
        return;
    /* Only an object of qs_calloc_lines() comes here, so the choice has
     * been made. */
    if (qs_lines_plain) {
        qs_lines_plain_check(p, size);
        free(p);
    } else
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
