/*
 * CRC-32C in software by "slicing": eight lookup tables let the loop fold
 * eight input bytes per iteration instead of one, which is several times
 * faster than the byte-at-a-time loop and needs no CPU-specific instructions.
 *
 * The tables are computed once, on first use, under pthread_once(), so the
 * function is safe to call from any thread without explicit initialization.
 */
#include "util/qs_checksum.h"

#include <pthread.h>

/* The Castagnoli polynomial 0x1EDC6F41, bit-reversed because the CRC is
 * computed least-significant bit first. */
#define QS_CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t crc32c_table[8][256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static void
crc32c_init_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = (c & 1u) ? (c >> 1) ^ QS_CRC32C_POLY_REFLECTED : c >> 1;
        crc32c_table[0][i] = c;
    }
    /* Table k gives the contribution of a byte followed by k zero bytes,
     * which is what lets one iteration fold eight bytes at once. */
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc32c_table[0][i];
        for (int k = 1; k < 8; k++) {
            c = (c >> 8) ^ crc32c_table[0][c & 0xffu];
            crc32c_table[k][i] = c;
        }
    }
}

/* Reads 4 bytes as a little-endian integer whatever the host's byte order or
 * the pointer's alignment, because the slicing step folds input bytes in
 * address order. Compilers turn this into one load on little-endian hosts. */
static inline uint32_t
load_le32(const unsigned char *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
           (uint32_t) p[3] << 24;
}

uint32_t
qs_crc32c(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;

    if (len == 0)
        return crc;
    pthread_once(&crc32c_once, crc32c_init_tables);

    crc = ~crc;
    while (len >= 8) {
        uint32_t lo = load_le32(p) ^ crc;
        uint32_t hi = load_le32(p + 4);
        crc = crc32c_table[7][lo & 0xffu] ^ crc32c_table[6][(lo >> 8) & 0xffu] ^
              crc32c_table[5][(lo >> 16) & 0xffu] ^ crc32c_table[4][lo >> 24] ^
              crc32c_table[3][hi & 0xffu] ^ crc32c_table[2][(hi >> 8) & 0xffu] ^
              crc32c_table[1][(hi >> 16) & 0xffu] ^ crc32c_table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len > 0) {
        crc = (crc >> 8) ^ crc32c_table[0][(crc ^ *p++) & 0xffu];
        len--;
    }
    return ~crc;
}
