/*
 * floor_mem: how long this machine waits for one cache line, by how much
 * memory is in use: the floor under sim_scale's large worlds, where every
 * step of an RPC finds its lines evicted by the RPCs in flight since its
 * last step.
 *
 *   floor_mem [--sizes LIST] [--stride B] [--loads N] [--ahead LIST]
 *             [--max-seconds S]
 *
 * For each working-set size, one 64-byte line per slot, linked into a
 * single random cycle (a fixed splitmix64 stream shuffles the slots, so a
 * run is the same on every machine). The chase loads one line, reads the
 * next slot's index from it and loads that: no load can start before the
 * one before it ends, so the time per load is the latency of the cache
 * level the working set fits in (or of memory, with its TLB misses, on
 * 4 KiB pages).
 *
 * With --stride B (a power of two from 64 to 1 MiB; default 64), the slots
 * are B bytes apart and the chase touches one line per slot, so a size
 * holds size/B lines: --stride 4096 touches one line per 4 KiB page, and
 * shows what a page costs when the lines themselves would fit in a cache
 * (the TLB's reach, and the page walks past it). Within its slot, slot i's
 * line is at (i mod B/64) lines, so the lines spread over the cache's sets.
 *
 * With --ahead K (K > 0), the same cycle is walked with the slot K steps
 * ahead prefetched (__builtin_prefetch) at each step, its index read from
 * a side array: the cost of a miss when software knows K steps early
 * where it will load. 0 is the plain chase.
 *
 * One human line and one JSON line per size and K: "bytes", "stride",
 * "lines", "ahead", "ns_per_load", "loads".
 */
#include "bench_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FM_LINE 64u
#define FM_MAX_SIZES 32u
#define FM_MAX_AHEAD 8u

/* Where each walk leaves its last index, so that no compiler drops the
 * chase. */
static volatile uint64_t fm_sink;

/* The word of slot i, in a region of slots `stride` bytes apart. */
static inline uint64_t *
fm_at(unsigned char *base, uint64_t stride, uint64_t i)
{
    return (uint64_t *) (void *) (base + i * stride +
                                  (i & (stride / FM_LINE - 1)) * FM_LINE);
}

static void
usage(void)
{
    fprintf(stderr, "usage: floor_mem [--sizes LIST] [--stride B] [--loads N] "
                    "[--ahead LIST] [--max-seconds S]\n");
}

/* Link n slots into one random cycle; order[i] is the i-th slot visited. */
static void
fm_link(unsigned char *base, uint64_t stride, uint64_t *order, uint64_t n)
{
    uint64_t rng = 20271;

    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = bu_splitmix64(&rng) % (i + 1), t = order[i];

        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < n; i++)
        *fm_at(base, stride, order[i]) = order[(i + 1) % n];
}

/* Walk `loads` steps from slot order[0]; returns ns per load. */
static double
fm_walk(unsigned char *base, uint64_t stride, const uint64_t *order, uint64_t n,
        uint64_t loads, unsigned ahead, double max_seconds, uint64_t *done)
{
    uint64_t p = order[0], i, pos = 0;
    double start = bu_now_s(), deadline = start + max_seconds;

    /* A distance past the cycle's length wraps round it. */
    ahead = (unsigned) (ahead % n);
    for (i = 0; i < loads; i++) {
        if (ahead != 0) {
            uint64_t q = pos + ahead;

            __builtin_prefetch(fm_at(base, stride, order[q < n ? q : q - n]));
            pos = pos + 1 < n ? pos + 1 : 0;
        }
        p = *fm_at(base, stride, p);
        if ((i & 0xffff) == 0xffff && bu_now_s() > deadline) {
            i++;
            break;
        }
    }
    *done = i;
    fm_sink = p;
    return i == 0 ? 0.0 : (bu_now_s() - start) * 1e9 / (double) i;
}

int
main(int argc, char **argv)
{
    uint64_t sizes[FM_MAX_SIZES] = {32768,   262144,   1048576,  4194304,
                                    8388608, 16777216, 67108864, 268435456};
    unsigned nsizes = 8, aheads[FM_MAX_AHEAD] = {0}, naheads = 1;
    uint64_t loads = 20000000, stride = FM_LINE;
    double max_seconds = 10.0;

    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;

        if (strcmp(a, "--sizes") == 0 && ok)
            ok = bu_parse_size_list(v, sizes, FM_MAX_SIZES, &nsizes);
        else if (strcmp(a, "--stride") == 0 && ok)
            ok = bu_parse_size(v, &stride) && stride >= FM_LINE &&
                 stride <= (1u << 20) && (stride & (stride - 1)) == 0;
        else if (strcmp(a, "--loads") == 0 && ok)
            ok = bu_parse_u64(v, &loads) && loads > 0;
        else if (strcmp(a, "--ahead") == 0 && ok)
            ok =
                bu_parse_count_list(v, 0, 1024, aheads, FM_MAX_AHEAD, &naheads);
        else if (strcmp(a, "--max-seconds") == 0 && ok)
            ok = bu_parse_double(v, &max_seconds) && max_seconds > 0;
        else
            ok = false;
        if (!ok) {
            usage();
            return 2;
        }
    }
    for (unsigned s = 0; s < nsizes; s++) {
        uint64_t n = sizes[s] / stride;
        unsigned char *slots;
        uint64_t *order;
        void *mem;
        char label[32];

        if (n < 2) {
            fprintf(stderr,
                    "floor_mem: size %" PRIu64 " holds under two slots\n",
                    sizes[s]);
            return 2;
        }
        /* On a page boundary, so that --stride 4K puts one line per page
         * (posix_memalign: aligned_alloc wants a multiple of 4096). */
        if (posix_memalign(&mem, 4096, n * stride) != 0)
            mem = NULL;
        slots = mem;
        order = malloc(n * sizeof(*order));
        if (slots == NULL || order == NULL) {
            fprintf(stderr, "floor_mem: no memory for %" PRIu64 " bytes\n",
                    sizes[s]);
            free(slots);
            free(order);
            return 1;
        }
        memset(slots, 0, n * stride);
        fm_link(slots, stride, order, n);
        /* One pass touches every page and line before the clock starts. */
        {
            uint64_t warm;

            fm_walk(slots, stride, order, n, n, 0, max_seconds, &warm);
        }
        for (unsigned k = 0; k < naheads; k++) {
            uint64_t done;
            double ns = fm_walk(slots, stride, order, n, loads, aheads[k],
                                max_seconds, &done);
            struct bu_json j;

            printf("floor_mem %8s stride %7" PRIu64 " (%8" PRIu64
                   " lines) ahead %2u: %7.1f ns per load (%" PRIu64 " loads)\n",
                   bu_size_label(sizes[s], label, sizeof(label)), stride, n,
                   aheads[k], ns, done);
            bu_json_begin(&j, "floor_mem");
            bu_json_u64(&j, "bytes", sizes[s]);
            bu_json_u64(&j, "stride", stride);
            bu_json_u64(&j, "lines", n);
            bu_json_u64(&j, "ahead", aheads[k]);
            bu_json_dbl(&j, "ns_per_load", ns);
            bu_json_u64(&j, "loads", done);
            bu_json_end(&j);
        }
        free(slots);
        free(order);
    }
    return 0;
}
