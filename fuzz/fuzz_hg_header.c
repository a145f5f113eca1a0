/*
 * Fuzz target: the RPC request/response header decoder and, for overflow
 * messages, the framing of the bulk descriptor that follows it, and for
 * liveness probes the probe/answer check. Any input must decode to an
 * error or to a header that re-encodes to the same validated fields, a
 * located descriptor lies inside the input, and an accepted probe or
 * answer is a bare header.
 */
#include "hg/hg_header.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hg_header header, again;
    uint8_t buf[HG_HEADER_SIZE];

    if (hg_header_decode(data, size, &header) != HG_SUCCESS)
        return 0;
    /* A decoded header re-encodes and decodes to the same fields. */
    hg_header_encode(buf, &header);
    if (hg_header_decode(buf, sizeof(buf), &again) != HG_SUCCESS ||
        again.flags != header.flags || again.cookie != header.cookie ||
        again.rpc_id != header.rpc_id ||
        again.payload_size != header.payload_size || again.ret != header.ret ||
        again.context_id != header.context_id)
        abort();
    if (header.flags & HG_HEADER_PROBE) {
        for (int answer = 0; answer < 2; answer++)
            if (hg_header_probe_check(&header, size, answer) == HG_SUCCESS &&
                (size != HG_HEADER_SIZE || header.payload_size != 0 ||
                 header.rpc_id != 0 ||
                 ((header.flags & HG_HEADER_RESPONSE) != 0) != answer))
                abort();
    }
    if (header.flags & HG_HEADER_OVERFLOW) {
        const void *desc;
        size_t desc_len;
        const uint8_t *payload = data + HG_HEADER_SIZE;
        size_t payload_len = size - HG_HEADER_SIZE;

        if (hg_header_overflow_desc(payload, payload_len, &desc, &desc_len) ==
                HG_SUCCESS &&
            ((const uint8_t *) desc < payload + 4 ||
             (const uint8_t *) desc + desc_len > payload + payload_len))
            abort();
    }
    return 0;
}
