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

uint8_t
ct_pattern(uint32_t seed, uint64_t offset)
{
    uint64_t x = (offset + 1) * 0x9e3779b97f4a7c15ULL;

    x ^= ((uint64_t) seed << 32) | seed;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return (uint8_t) (x >> 24);
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
    hg_size_t k;

    for (i = 0; i < b->count; i++) {
        uint8_t *p = (uint8_t *) b->ptrs[i];

        for (k = 0; k < b->sizes[i]; k++)
            p[k] = ct_pattern(seed, off++);
    }
}

uint64_t
ct_buf_check_image(const struct ct_buf *b, uint8_t sentinel, uint32_t seed,
                   hg_size_t dst_off, hg_size_t src_off, hg_size_t size,
                   uint64_t *first)
{
    uint64_t off = 0, bad = 0, first_bad = UINT64_MAX;
    hg_uint32_t i;
    hg_size_t k;

    for (i = 0; i < b->count; i++) {
        const uint8_t *p = (const uint8_t *) b->ptrs[i];

        for (k = 0; k < b->sizes[i]; k++, off++) {
            uint8_t want = sentinel;

            if (off >= dst_off && off - dst_off < size)
                want = ct_pattern(seed, src_off + (off - dst_off));
            if (p[k] != want) {
                if (bad == 0)
                    first_bad = off;
                bad++;
            }
        }
    }
    if (first != NULL)
        *first = first_bad;
    return bad;
}

uint64_t
ct_buf_count_not(const struct ct_buf *b, uint8_t sentinel)
{
    uint64_t n = 0;
    hg_uint32_t i;
    hg_size_t k;

    for (i = 0; i < b->count; i++) {
        const uint8_t *p = (const uint8_t *) b->ptrs[i];

        for (k = 0; k < b->sizes[i]; k++)
            n += p[k] != sentinel;
    }
    return n;
}
