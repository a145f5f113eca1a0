/*
 * Segmented test buffers and the byte pattern; see buf.h.
 */
#include "conformance/buf.h"

#include <stdlib.h>
#include <string.h>

/* Fractions (in sixteenths) of the total given to every segment but the
 * last, which takes the rest. Each size is forced odd so that no segment
 * boundary falls on an aligned offset. */
static const unsigned layout_frac[CT_LAYOUT_MAX][CT_BUF_MAX_SEGMENTS] = {
    [CT_LAYOUT_CONTIG] = {0},
    [CT_LAYOUT_3SEG] = {3, 5},
    [CT_LAYOUT_5SEG] = {1, 3, 2, 5},
};
static const hg_uint32_t layout_count[CT_LAYOUT_MAX] = {
    [CT_LAYOUT_CONTIG] = 1,
    [CT_LAYOUT_3SEG] = 3,
    [CT_LAYOUT_5SEG] = 5,
};

hg_uint32_t
ct_layout_split(int layout, hg_size_t total, hg_size_t *sizes)
{
    hg_size_t left = total;
    hg_uint32_t n, i;

    if (layout < 0 || layout >= CT_LAYOUT_MAX)
        return 0;
    n = layout_count[layout];
    for (i = 0; i + 1 < n; i++) {
        hg_size_t s = (total * layout_frac[layout][i] / 16) | 1;

        if (s > left)
            s = left;
        sizes[i] = s;
        left -= s;
    }
    sizes[n - 1] = left;
    return n;
}

int
ct_buf_alloc(struct ct_buf *b, int layout, hg_size_t total)
{
    hg_uint32_t i;

    memset(b, 0, sizeof(*b));
    b->count = ct_layout_split(layout, total, b->sizes);
    if (b->count == 0)
        return -1;
    b->total = total;
    for (i = 0; i < b->count; i++) {
        /* One spare byte keeps zero-length segments at distinct, valid
         * addresses. */
        b->ptrs[i] = malloc((size_t) b->sizes[i] + 1);
        if (b->ptrs[i] == NULL) {
            ct_buf_free(b);
            return -1;
        }
    }
    return 0;
}

void
ct_buf_free(struct ct_buf *b)
{
    hg_uint32_t i;

    for (i = 0; i < b->count; i++)
        free(b->ptrs[i]);
    memset(b, 0, sizeof(*b));
}

/* Eight bytes of the pattern, those at offsets 8 * block to 8 * block + 7,
 * as the word's bytes lie in memory. One hash and one store per eight bytes
 * rather than per byte: the suite fills and checks 64 MiB buffers several
 * times per transfer, and in the coverage (-O0) and ThreadSanitizer builds
 * a hash per byte made the pattern, not the library, most of the suite's
 * time. */
static uint64_t
pattern_word(uint32_t seed, uint64_t block)
{
    uint64_t x = (block + 1) * 0x9e3779b97f4a7c15ULL;

    x ^= ((uint64_t) seed << 32) | seed;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 32;
    return x;
}

uint8_t
ct_pattern(uint32_t seed, uint64_t offset)
{
    uint64_t w = pattern_word(seed, offset / 8);
    uint8_t bytes[8];

    memcpy(bytes, &w, sizeof(bytes));
    return bytes[offset % 8];
}

/* The pattern's bytes at offsets off to off + n - 1, into dst. */
static void
pattern_span(uint32_t seed, uint64_t off, uint8_t *dst, size_t n)
{
    size_t k = 0;

    for (; k < n && (off + k) % 8 != 0; k++)
        dst[k] = ct_pattern(seed, off + k);
    for (; n - k >= 8; k += 8) {
        uint64_t w = pattern_word(seed, (off + k) / 8);

        memcpy(dst + k, &w, sizeof(w));
    }
    for (; k < n; k++)
        dst[k] = ct_pattern(seed, off + k);
}

void
ct_buf_fill(struct ct_buf *b, uint8_t byte)
{
    hg_uint32_t i;

    for (i = 0; i < b->count; i++)
        memset(b->ptrs[i], byte, (size_t) b->sizes[i]);
}

void
ct_buf_fill_pattern(struct ct_buf *b, uint32_t seed)
{
    uint64_t off = 0;
    hg_uint32_t i;

    for (i = 0; i < b->count; i++) {
        pattern_span(seed, off, (uint8_t *) b->ptrs[i], (size_t) b->sizes[i]);
        off += b->sizes[i];
    }
}

/* The checks compare a chunk at a time with memcmp against the image they
 * expect, and count byte by byte only a chunk that differs. */
#define CHECK_CHUNK 4096

/* The differing bytes of a and b (n of them); *first_bad gets the offset
 * base + k of the first if it is still UINT64_MAX. A write that was
 * expected (a transfer's target counted by ct_buf_count_not) differs in
 * every byte, so the count goes eight bytes at a time. */
static uint64_t
count_diff(const uint8_t *a, const uint8_t *b, size_t n, uint64_t base,
           uint64_t *first_bad)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
    uint64_t bad = 0;
    size_t k = 0, j;

    if (memcmp(a, b, n) == 0)
        return 0;
    for (; n - k >= 8; k += 8) {
        uint64_t wa, wb, x;

        memcpy(&wa, a + k, 8);
        memcpy(&wb, b + k, 8);
        x = wa ^ wb;
        if (x == 0)
            continue;
        /* The top bit of each byte of x that is not zero. */
        bad +=
            (uint64_t) __builtin_popcountll((((x & low7) + low7) | x) & ~low7);
        if (*first_bad == UINT64_MAX)
            for (j = 0; j < 8; j++)
                if (a[k + j] != b[k + j]) {
                    *first_bad = base + k + j;
                    break;
                }
    }
    for (; k < n; k++) {
        if (a[k] != b[k]) {
            if (*first_bad == UINT64_MAX)
                *first_bad = base + k;
            bad++;
        }
    }
    return bad;
}

uint64_t
ct_buf_check_image(const struct ct_buf *b, uint8_t sentinel, uint32_t seed,
                   hg_size_t dst_off, hg_size_t src_off, hg_size_t size,
                   uint64_t *first)
{
    uint8_t want[CHECK_CHUNK];
    uint64_t off = 0, bad = 0, first_bad = UINT64_MAX;
    hg_uint32_t i;

    for (i = 0; i < b->count; i++) {
        const uint8_t *p = (const uint8_t *) b->ptrs[i];
        hg_size_t k = 0;

        while (k < b->sizes[i]) {
            /* A chunk lies wholly before, inside or after the image. */
            uint64_t end = off + (b->sizes[i] - k), stop;
            size_t n;

            if (off < dst_off)
                stop = dst_off;
            else if (off - dst_off < size)
                stop =
                    size > UINT64_MAX - dst_off ? UINT64_MAX : dst_off + size;
            else
                stop = UINT64_MAX;
            if (end > stop)
                end = stop;
            n = end - off < CHECK_CHUNK ? (size_t) (end - off) : CHECK_CHUNK;
            if (off >= dst_off && off - dst_off < size)
                pattern_span(seed, src_off + (off - dst_off), want, n);
            else
                memset(want, sentinel, n);
            bad += count_diff(p + k, want, n, off, &first_bad);
            k += n;
            off += n;
        }
    }
    if (first != NULL)
        *first = first_bad;
    return bad;
}

uint64_t
ct_buf_count_not(const struct ct_buf *b, uint8_t sentinel)
{
    uint8_t want[CHECK_CHUNK];
    uint64_t n = 0, unused = UINT64_MAX;
    hg_uint32_t i;
    hg_size_t k;

    memset(want, sentinel, sizeof(want));
    for (i = 0; i < b->count; i++) {
        const uint8_t *p = (const uint8_t *) b->ptrs[i];

        for (k = 0; k < b->sizes[i]; k += CHECK_CHUNK) {
            size_t len = b->sizes[i] - k < CHECK_CHUNK
                             ? (size_t) (b->sizes[i] - k)
                             : CHECK_CHUNK;

            n += count_diff(p + k, want, len, 0, &unused);
        }
    }
    return n;
}
