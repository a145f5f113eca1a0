/*
 * The wire header of requests and responses (docs/wire.md). Encoding and
 * decoding are pure functions; decoding treats its input as hostile.
 */
#ifndef HG_HEADER_H
#define HG_HEADER_H

#include "mercury_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HG_HEADER_MAGIC 0x5153u /* "QS" */
#define HG_HEADER_VERSION 1u
#define HG_HEADER_SIZE 40u

/* Header flags. */
#define HG_HEADER_RESPONSE 0x01u    /* a response, not a request          */
#define HG_HEADER_NO_RESPONSE 0x02u /* one-way request                   */
#define HG_HEADER_OVERFLOW 0x04u    /* payload is a bulk descriptor of it */
#define HG_HEADER_CRC_HEADER 0x08u  /* header_crc is set                  */
#define HG_HEADER_CRC_PAYLOAD 0x10u /* payload_crc is set                */
#define HG_HEADER_PROBE 0x20u       /* liveness probe or its answer       */
#define HG_HEADER_FLAGS_ALL 0x3fu

struct hg_header {
    uint8_t flags;
    uint8_t ret;        /* response: the target's hg_return_t       */
    uint8_t context_id; /* request: origin context for the response */
    uint32_t cookie;    /* tag that matches response to request     */
    hg_id_t rpc_id;
    uint64_t payload_size; /* encoded argument bytes (whole, even when
                              they travel through bulk)               */
    uint32_t payload_crc;  /* CRC-32C of the encoded argument bytes    */
};

/* Write HG_HEADER_SIZE bytes; computes header_crc when the flag is set. */
void hg_header_encode(void *buf, const struct hg_header *header);

/*
 * Decode and validate: size, magic, version, known flags, return code
 * range, header checksum when present. Returns HG_SUCCESS,
 * HG_PROTOCOL_ERROR (malformed), HG_MSGSIZE (too short) or
 * HG_CHECKSUM_ERROR.
 */
hg_return_t hg_header_decode(const void *buf, size_t size,
                             struct hg_header *header);

/*
 * Locate the bulk descriptor in the payload of an HG_HEADER_OVERFLOW
 * message (u32 length, then the descriptor). Pure; HG_PROTOCOL_ERROR when
 * the length does not fit the payload.
 */
hg_return_t hg_header_overflow_desc(const void *payload, size_t payload_len,
                                    const void **desc, size_t *desc_len);

/*
 * Check a decoded header flagged HG_HEADER_PROBE against the length of the
 * message it came in (docs/wire.md, "Liveness probes"): a probe
 * (answer false) or its answer (answer true) is exactly HG_HEADER_SIZE
 * bytes, with rpc_id, payload_size, ret and payload_crc zero and no flag
 * but PROBE, RESPONSE (answers only, and required there) and CRC_HEADER.
 * Pure; HG_MSGSIZE for a wrong length, HG_PROTOCOL_ERROR otherwise.
 */
hg_return_t hg_header_probe_check(const struct hg_header *header,
                                  size_t msg_len, bool answer);

#endif /* HG_HEADER_H */
