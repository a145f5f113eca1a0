/*
 * Fuzz target: the RPC request/response header decoder and, for overflow
 * messages, the framing of the bulk descriptor that follows it, and for
 * liveness probes the probe/answer check. Any input must decode to an
 * error or to a header that re-encodes to the same validated fields, a
 * located descriptor lies inside the input, and an accepted probe or
 * answer is a bare header.
 *
 * The replay fails unless some header of this magic and version is
 * accepted and some refused (flags, reserved bytes, return code, header
 * checksum), an overflow message's descriptor is located in some input
 * and refused for its length in another, and some probe or answer passes
 * its check.
 */
#include "hg/hg_header.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally headers = {.what = "header"},
                            overflows = {.what = "overflow descriptor frame"};
static unsigned long probes;

const char *
fuzz_replay_check(void)
{
    const char *why = na_fuzz_tally_check(&headers);

    if (why == NULL)
        why = na_fuzz_tally_check(&overflows);
    if (why == NULL && probes == 0)
        why = "no probe or probe answer passed its check";
    return why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hg_header header, again;
    uint8_t buf[HG_HEADER_SIZE];
    bool ok;

    ok = hg_header_decode(data, size, &header) == HG_SUCCESS;
    na_fuzz_count(&headers, ok,
                  size >= HG_HEADER_SIZE &&
                      (data[0] | data[1] << 8) == HG_HEADER_MAGIC &&
                      data[2] == HG_HEADER_VERSION);
    if (!ok)
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
        for (int answer = 0; answer < 2; answer++) {
            if (hg_header_probe_check(&header, size, answer) != HG_SUCCESS)
                continue;
            if (size != HG_HEADER_SIZE || header.payload_size != 0 ||
                header.rpc_id != 0 ||
                ((header.flags & HG_HEADER_RESPONSE) != 0) != answer)
                abort();
            probes++;
        }
    }
    if (header.flags & HG_HEADER_OVERFLOW) {
        const void *desc;
        size_t desc_len;
        const uint8_t *payload = data + HG_HEADER_SIZE;
        size_t payload_len = size - HG_HEADER_SIZE;

        ok = hg_header_overflow_desc(payload, payload_len, &desc, &desc_len) ==
             HG_SUCCESS;
        if (ok && ((const uint8_t *) desc < payload + 4 ||
                   (const uint8_t *) desc + desc_len > payload + payload_len))
            abort();
        /* Its u32 length is there: what is refused is refused for it. */
        na_fuzz_count(&overflows, ok, payload_len >= 4);
    }
    return 0;
}
