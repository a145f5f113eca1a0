/*
 * Line-aligned objects from chunks (lib/util/qs_alloc.h, qs_lines.c):
 * zeroed and on a line, even when reused; a freed object comes back for
 * the next object of its size and never for another size; objects never
 * overlap, across chunks and across threads; larger objects are their own
 * allocations; and past QS_LINES_HUGE_AFTER the chunks are advised to huge
 * pages where the kernel takes that advice; memory from elsewhere, and a
 * second free of one object, are refused at the free. The chunked allocator is
 * called directly, so this runs the same in sanitizer builds, where
 * qs_calloc_lines() itself uses posix_memalign().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/qs_alloc.h"
#include "util/qs_tools.h"

static bool
all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

static void
test_zeroed_and_aligned(void **state)
{
    (void) state;
    for (size_t size = 1; size <= 3 * QS_LINE + 1; size += 37) {
        unsigned char *p = qs_lines_chunked_alloc(size);

        assert_non_null(p);
        assert_int_equal((uintptr_t) p % QS_LINE, 0);
        assert_true(all_zero(p, size));
        memset(p, 0xa5, size);
        qs_lines_chunked_free(p, size);
        /* The same object again (the list of its size), zeroed again. */
        p = qs_lines_chunked_alloc(size);
        assert_true(all_zero(p, (size + QS_LINE - 1) & ~(size_t) 63));
        qs_lines_chunked_free(p, size);
    }
    assert_null(qs_lines_chunked_alloc(0));
    assert_null(qs_lines_chunked_alloc(SIZE_MAX));
    qs_lines_chunked_free(NULL, 64);
}

static void
test_reuse_by_size(void **state)
{
    void *a, *b, *c;

    (void) state;
    a = qs_lines_chunked_alloc(200); /* four lines */
    assert_non_null(a);
    qs_lines_chunked_free(a, 200);
    /* Another size does not get it... */
    b = qs_lines_chunked_alloc(100); /* two lines */
    assert_ptr_not_equal(a, b);
    /* ...the same size in lines does, whatever the exact bytes. */
    c = qs_lines_chunked_alloc(256);
    assert_ptr_equal(a, c);
    qs_lines_chunked_free(b, 100);
    qs_lines_chunked_free(c, 256);
}

/* Objects of mixed sizes, well past the first chunks, never overlap: each
 * holds its own pattern until it is freed. */
#define MANY 20000

static void
test_no_overlap_across_chunks(void **state)
{
    static unsigned char *obj[MANY];
    static size_t len[MANY];
    size_t held0 = qs_lines_chunk_bytes();

    (void) state;
    for (unsigned i = 0; i < MANY; i++) {
        len[i] = 1 + (i * 7919u) % 2000u;
        obj[i] = qs_lines_chunked_alloc(len[i]);
        assert_non_null(obj[i]);
        memset(obj[i], (int) (i & 0xff), len[i]);
    }
    assert_true(qs_lines_chunk_bytes() > held0);
    for (unsigned i = 0; i < MANY; i++)
        for (size_t k = 0; k < len[i]; k++)
            if (obj[i][k] != (unsigned char) (i & 0xff))
                fail_msg("object %u byte %zu overwritten", i, k);
    for (unsigned i = 0; i < MANY; i += 2)
        qs_lines_chunked_free(obj[i], len[i]);
    for (unsigned i = 0; i < MANY; i += 2) {
        obj[i] = qs_lines_chunked_alloc(len[i]);
        memset(obj[i], (int) (i & 0xff), len[i]);
    }
    for (unsigned i = 0; i < MANY; i++) {
        for (size_t k = 0; k < len[i]; k++)
            if (obj[i][k] != (unsigned char) (i & 0xff))
                fail_msg("object %u byte %zu overwritten after reuse", i, k);
        qs_lines_chunked_free(obj[i], len[i]);
    }
}

static void
test_large_is_own(void **state)
{
    size_t held0 = qs_lines_chunk_bytes();
    unsigned char *p = qs_lines_chunked_alloc(QS_LINES_MAX + 1);

    (void) state;
    assert_non_null(p);
    assert_int_equal((uintptr_t) p % QS_LINE, 0);
    assert_true(all_zero(p, QS_LINES_MAX + 1));
    /* Not from a chunk: the chunks did not grow for it. */
    assert_int_equal(qs_lines_chunk_bytes(), held0);
    qs_lines_chunked_free(p, QS_LINES_MAX + 1);
}

/* Two threads allocate, fill, check and free at once. */
#define PER_THREAD 50000

static void *
hammer(void *arg)
{
    unsigned char tag = (unsigned char) (uintptr_t) arg;
    unsigned char *keep[64] = {0};
    size_t keep_n[64] = {0};

    for (unsigned i = 0; i < PER_THREAD; i++) {
        unsigned slot = i % 64;
        size_t n = 64 + (i % 5) * 64;

        if (keep[slot] != NULL) {
            for (size_t k = 0; k < keep_n[slot]; k++)
                if (keep[slot][k] != tag)
                    return (void *) 1;
            qs_lines_chunked_free(keep[slot], keep_n[slot]);
        }
        keep[slot] = qs_lines_chunked_alloc(n);
        keep_n[slot] = n;
        if (keep[slot] == NULL || !all_zero(keep[slot], n))
            return (void *) 1;
        memset(keep[slot], tag, n);
    }
    for (unsigned slot = 0; slot < 64; slot++)
        qs_lines_chunked_free(keep[slot], keep_n[slot]);
    return NULL;
}

static void
test_threads(void **state)
{
    pthread_t t[2];
    void *ret[2];

    (void) state;
    for (uintptr_t i = 0; i < 2; i++)
        assert_int_equal(
            pthread_create(&t[i], NULL, hammer, (void *) (0x11 + i)), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], &ret[i]), 0);
        assert_null(ret[i]);
    }
}

/* Whether this kernel takes MADV_HUGEPAGE at all. */
static bool
kernel_takes_huge_advice(void)
{
    size_t len = 4u << 20;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t lo;
    bool ok;

    if (m == MAP_FAILED)
        return false;
    lo = ((uintptr_t) m + (2u << 20) - 1) & ~(uintptr_t) ((2u << 20) - 1);
    ok = madvise((void *) lo, 2u << 20, MADV_HUGEPAGE) == 0;
    munmap(m, len);
    return ok;
}

static void
test_huge_after_threshold(void **state)
{
    size_t n = 0;
    void **objs;

    (void) state;
    /* Enough objects of 4 KiB to hold twice the threshold. */
    objs = calloc(2 * QS_LINES_HUGE_AFTER / 4096 + 1, sizeof(*objs));
    assert_non_null(objs);
    while (qs_lines_chunk_bytes() < 2 * QS_LINES_HUGE_AFTER) {
        objs[n] = qs_lines_chunked_alloc(4096);
        assert_non_null(objs[n]);
        n++;
    }
    if (kernel_takes_huge_advice())
        assert_true(qs_lines_huge_chunks() > 0);
    else
        print_message("kernel refuses MADV_HUGEPAGE: huge chunks not "
                      "checked\n");
    for (size_t i = 0; i < n; i++)
        qs_lines_chunked_free(objs[i], 4096);
    free(objs);
}

/* A chunk none of whose objects is handed out goes back to malloc, except
 * the one being carved: after a burst is freed, at most that one is held
 * beyond what was held before it (each chunk is at most as large as all
 * before it together, so it is at most half the peak). */
static void
test_empty_chunks_returned(void **state)
{
    size_t held0 = qs_lines_chunk_bytes(), target = 4 * held0 + (4u << 20);
    size_t n = 0, peak;
    void **objs, *p;

    (void) state;
    objs = calloc(target / 4096 + 1, sizeof(*objs));
    assert_non_null(objs);
    while (qs_lines_chunk_bytes() < target) {
        objs[n] = qs_lines_chunked_alloc(4096);
        assert_non_null(objs[n]);
        memset(objs[n], 0x5a, 4096);
        n++;
    }
    peak = qs_lines_chunk_bytes();
    for (size_t i = 0; i < n; i++)
        qs_lines_chunked_free(objs[i], 4096);
    free(objs);
    assert_true(qs_lines_chunk_bytes() <= held0 + peak / 2);
    /* The lists hold nothing of the chunks returned: objects handed out
     * now are whole and zeroed. */
    p = qs_lines_chunked_alloc(4096);
    assert_non_null(p);
    assert_true(all_zero(p, 4096));
    qs_lines_chunked_free(p, 4096);
}

/* Run `bad` in a child process, which must die of SIGABRT. */
static void
expect_abort(void (*bad)(void))
{
    pid_t pid;
    int status;

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        bad();
        _exit(0); /* not reached when the check holds */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void
free_foreign(void)
{
    void *foreign = NULL;

    if (posix_memalign(&foreign, QS_LINE, 128) != 0)
        _exit(3);
    qs_lines_chunked_free(foreign, 128);
}

static void
free_twice(void)
{
    void *p = qs_lines_chunked_alloc(128);

    if (p == NULL)
        _exit(3);
    qs_lines_chunked_free(p, 128);
    qs_lines_chunked_free(p, 128);
}

static void
free_wrong_size(void)
{
    void *p = qs_lines_chunked_alloc(128);

    if (p == NULL)
        _exit(3);
    qs_lines_chunked_free(p, 192);
}

static void
free_inside(void)
{
    unsigned char *p = qs_lines_chunked_alloc(256);

    if (p == NULL)
        _exit(3);
    qs_lines_chunked_free(p + QS_LINE, 128);
}

/* Memory that did not come from a chunk is refused at its free, with a
 * message and an abort, rather than put on a list and handed out later
 * as somebody's object; so is a second free of the same object, which on
 * its list twice would be handed out to two owners, a free with another
 * size than the object's, which would put it on another size's list, and
 * a free of a line inside an object. */
static void
test_foreign_free_stops(void **state)
{
    (void) state;
    expect_abort(free_foreign);
}

static void
test_double_free_stops(void **state)
{
    (void) state;
    expect_abort(free_twice);
}

static void
test_wrong_size_free_stops(void **state)
{
    (void) state;
    expect_abort(free_wrong_size);
}

static void
test_inside_free_stops(void **state)
{
    (void) state;
    expect_abort(free_inside);
}

static void
routed_free_smaller(void)
{
    void *p = qs_calloc_lines(192);

    if (p == NULL)
        _exit(3);
    qs_free_lines(p, 128); /* without a size line, as a header would be */
}

static void
routed_free_larger(void)
{
    void *p = qs_calloc_lines(128);

    if (p == NULL)
        _exit(3);
    qs_free_lines(p, 192);
}

/* Whichever way the build went (chunks, or each object its own allocation
 * under a sanitizer), an object freed as a size other than its own stops
 * the process: smaller and larger, by one line. */
static void
test_routed_wrong_size_stops(void **state)
{
    (void) state;
    expect_abort(routed_free_smaller);
    expect_abort(routed_free_larger);
}

/* The routed entry points: whichever way the build went, an object is
 * zeroed, aligned and freed by its size. */
static void
test_routed(void **state)
{
    unsigned char *p = qs_calloc_lines(100);

    (void) state;
    assert_non_null(p);
    assert_int_equal((uintptr_t) p % QS_LINE, 0);
    assert_true(all_zero(p, 128));
    qs_free_lines(p, 100);
    qs_free_lines(NULL, 100);
    assert_null(qs_calloc_lines(0));
}

/* Which valgrind tools lay the objects out one allocation each: those
 * that replace malloc to watch the heap or threads, not the profilers,
 * which preload valgrind's core only (and under which the exact size check
 * of a glibc heap once stopped every program at its first free). */
static void
test_valgrind_tools(void **state)
{
    (void) state;
    assert_false(qs_valgrind_checks(NULL));
    assert_false(qs_valgrind_checks(""));
    assert_false(qs_valgrind_checks("/usr/lib/libfoo.so"));
    /* callgrind, cachegrind */
    assert_false(qs_valgrind_checks(
        "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so"));
    /* memcheck, helgrind, DRD: the tool's own after the core's */
    assert_true(qs_valgrind_checks(
        "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so:"
        "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"));
    assert_true(qs_valgrind_checks(
        "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so:"
        "/usr/libexec/valgrind/vgpreload_helgrind-amd64-linux.so"));
    assert_true(qs_valgrind_checks("/opt/vg/vgpreload_drd-arm64-linux.so:/opt/"
                                   "vg/vgpreload_core-arm64-linux.so"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zeroed_and_aligned),
        cmocka_unit_test(test_reuse_by_size),
        cmocka_unit_test(test_no_overlap_across_chunks),
        cmocka_unit_test(test_large_is_own),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_huge_after_threshold),
        cmocka_unit_test(test_empty_chunks_returned),
        cmocka_unit_test(test_foreign_free_stops),
        cmocka_unit_test(test_double_free_stops),
        cmocka_unit_test(test_wrong_size_free_stops),
        cmocka_unit_test(test_inside_free_stops),
        cmocka_unit_test(test_routed),
        cmocka_unit_test(test_routed_wrong_size_stops),
        cmocka_unit_test(test_valgrind_tools),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
