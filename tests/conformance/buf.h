/*
 * Test buffers made of several separately allocated segments, addressed by
 * one virtual offset the way a bulk handle addresses them, and the byte
 * pattern the suite writes into them.
 *
 * The pattern depends on the virtual offset and a seed, so a byte that lands
 * one position off, in the wrong segment or from the wrong transfer is
 * caught by an exact comparison.
 */
#ifndef CT_BUF_H
#define CT_BUF_H

#include "mercury_types.h"

#include <stdint.h>

#define CT_BUF_MAX_SEGMENTS 8

/* Segment layouts, shared by origin and target through ct_xfer_in_t. */
enum ct_layout {
    CT_LAYOUT_CONTIG = 0, /* one segment                          */
    CT_LAYOUT_3SEG = 1,   /* three segments of uneven, odd sizes  */
    CT_LAYOUT_5SEG = 2,   /* five segments of uneven, odd sizes   */
    CT_LAYOUT_MAX
};

/* Bytes that mark memory nobody should have written. */
#define CT_SENTINEL_ORIGIN 0x5a
#define CT_SENTINEL_TARGET 0xa5

struct ct_buf {
    hg_uint32_t count;
    void *ptrs[CT_BUF_MAX_SEGMENTS];
    hg_size_t sizes[CT_BUF_MAX_SEGMENTS];
    hg_size_t total;
};

/* Segment sizes of `layout` for `total` bytes; returns the count (0 for an
 * unknown layout). */
hg_uint32_t ct_layout_split(int layout, hg_size_t total, hg_size_t *sizes);

/* 0 on success, -1 on an unknown layout or out of memory. */
int ct_buf_alloc(struct ct_buf *b, int layout, hg_size_t total);
void ct_buf_free(struct ct_buf *b);

uint8_t ct_pattern(uint32_t seed, uint64_t offset);
void ct_buf_fill(struct ct_buf *b, uint8_t byte);
void ct_buf_fill_pattern(struct ct_buf *b, uint32_t seed);

/*
 * Compare the buffer with the image a correct transfer leaves: `size` bytes
 * at dst_off hold ct_pattern(seed, src_off + k), every other byte is
 * `sentinel`. Returns the number of differing bytes; *first (if not NULL)
 * gets the first differing virtual offset, or UINT64_MAX.
 */
uint64_t ct_buf_check_image(const struct ct_buf *b, uint8_t sentinel,
                            uint32_t seed, hg_size_t dst_off, hg_size_t src_off,
                            hg_size_t size, uint64_t *first);

/* Bytes that are not `sentinel`. */
uint64_t ct_buf_count_not(const struct ct_buf *b, uint8_t sentinel);

#endif /* CT_BUF_H */
