/*
 * Request/response header codec. Layout (little-endian, 40 bytes):
 *   0 magic u16 | 2 version u8 | 3 flags u8 | 4 cookie u32 | 8 rpc_id u64
 *  16 payload_size u64 | 24 ret u8 | 25 context_id u8 | 26 reserved u16
 *  28 header_crc u32 | 32 payload_crc u32 | 36 reserved u32
 * header_crc is CRC-32C over the 40 bytes with header_crc zeroed.
 */
#include "hg/hg_header.h"

#include "util/qs_checksum.h"

#include <string.h>

/* Little-endian fields. On a little-endian host they are plain unaligned
 * loads and stores; elsewhere they are assembled byte by byte. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HG_HEADER_LE(bits)                                                     \
    static inline void put##bits(uint8_t *p, uint##bits##_t v)                 \
    {                                                                          \
        memcpy(p, &v, sizeof(v));                                              \
    }                                                                          \
    static inline uint##bits##_t get##bits(const uint8_t *p)                   \
    {                                                                          \
        uint##bits##_t v;                                                      \
        memcpy(&v, p, sizeof(v));                                              \
        return v;                                                              \
    }
#else
#define HG_HEADER_LE(bits)                                                     \
    static inline void put##bits(uint8_t *p, uint##bits##_t v)                 \
    {                                                                          \
        for (unsigned i = 0; i < sizeof(v); i++)                               \
            p[i] = (uint8_t) (v >> (8 * i));                                   \
    }                                                                          \
    static inline uint##bits##_t get##bits(const uint8_t *p)                   \
    {                                                                          \
        uint##bits##_t v = 0;                                                  \
        for (unsigned i = sizeof(v); i-- > 0;)                                 \
            v = (uint##bits##_t)((v << 8) | p[i]);                             \
        return v;                                                              \
    }
#endif
HG_HEADER_LE(16)
HG_HEADER_LE(32)
HG_HEADER_LE(64)
#undef HG_HEADER_LE

void
hg_header_encode(void *buf, const struct hg_header *header)
{
    uint8_t *p = buf;

    memset(p, 0, HG_HEADER_SIZE);
    put16(p, HG_HEADER_MAGIC);
    p[2] = HG_HEADER_VERSION;
    p[3] = header->flags;
    put32(p + 4, header->cookie);
    put64(p + 8, header->rpc_id);
    put64(p + 16, header->payload_size);
    p[24] = header->ret;
    p[25] = header->context_id;
    put32(p + 32, header->payload_crc);
    if (header->flags & HG_HEADER_CRC_HEADER)
        put32(p + 28, qs_crc32c(0, p, HG_HEADER_SIZE));
}

hg_return_t
hg_header_decode(const void *buf, size_t size, struct hg_header *header)
{
    const uint8_t *p = buf;

    if (buf == NULL || size < HG_HEADER_SIZE)
        return HG_MSGSIZE;
    if (get16(p) != HG_HEADER_MAGIC || p[2] != HG_HEADER_VERSION)
        return HG_PROTOCOL_ERROR;
    if ((p[3] & ~HG_HEADER_FLAGS_ALL) != 0 || p[24] >= HG_RETURN_MAX)
        return HG_PROTOCOL_ERROR;
    /* Reserved bytes are zero in this version; anything else is not a
     * header this library wrote. */
    if (p[26] | p[27] | p[36] | p[37] | p[38] | p[39])
        return HG_PROTOCOL_ERROR;
    /* A response never asks for no response. */
    if ((p[3] & HG_HEADER_RESPONSE) && (p[3] & HG_HEADER_NO_RESPONSE))
        return HG_PROTOCOL_ERROR;
    if (p[3] & HG_HEADER_CRC_HEADER) {
        uint8_t copy[HG_HEADER_SIZE];

        memcpy(copy, p, HG_HEADER_SIZE);
        memset(copy + 28, 0, 4);
        if (qs_crc32c(0, copy, HG_HEADER_SIZE) != get32(p + 28))
            return HG_CHECKSUM_ERROR;
    }
    header->flags = p[3];
    header->cookie = get32(p + 4);
    header->rpc_id = get64(p + 8);
    header->payload_size = get64(p + 16);
    header->ret = p[24];
    header->context_id = p[25];
    header->payload_crc = get32(p + 32);
    return HG_SUCCESS;
}

/* The payload of an OVERFLOW message: u32 length, then that many bytes
 * of bulk descriptor. */
hg_return_t
hg_header_overflow_desc(const void *payload, size_t payload_len,
                        const void **desc, size_t *desc_len)
{
    const uint8_t *p = payload;
    uint32_t len;

    if (payload_len < 4)
        return HG_PROTOCOL_ERROR;
    len = get32(p);
    if (len > payload_len - 4)
        return HG_PROTOCOL_ERROR;
    *desc = p + 4;
    *desc_len = len;
    return HG_SUCCESS;
}

hg_return_t
hg_header_probe_check(const struct hg_header *header, size_t msg_len,
                      bool answer)
{
    unsigned int allowed = HG_HEADER_PROBE | HG_HEADER_CRC_HEADER |
                           (answer ? HG_HEADER_RESPONSE : 0u);

    if (header == NULL || !(header->flags & HG_HEADER_PROBE))
        return HG_PROTOCOL_ERROR;
    if (msg_len != HG_HEADER_SIZE)
        return HG_MSGSIZE;
    if ((header->flags & ~allowed) != 0 ||
        answer != ((header->flags & HG_HEADER_RESPONSE) != 0))
        return HG_PROTOCOL_ERROR;
    if (header->rpc_id != 0 || header->payload_size != 0 || header->ret != 0 ||
        header->payload_crc != 0)
        return HG_PROTOCOL_ERROR;
    return HG_SUCCESS;
}
