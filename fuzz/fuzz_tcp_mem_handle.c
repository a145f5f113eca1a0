/*
 * Fuzz target for the native TCP plugin's memory-handle decoder: the
 * input is fed to NA_Mem_handle_deserialize() on one tcp class.
 *
 * Besides "no crash, no leak, no read out of bounds", a deserialized
 * handle must serialize back to the bytes it was read from, and an
 * accepted input grants some access and no unknown one (flags 1 to 3:
 * a round trip cannot tell a decoder that forgot to look).
 *
 * Seed corpus (corpus/tcp_mem_handle/), 24 bytes, little-endian:
 *   u32 magic 0x4d545351 ("QSTM") | u32 flags (1 read, 2 write, 3 both) |
 *   u64 key (generation << 32 | slot) | u64 length
 *
 * If the plugin is not in this build (not Linux) the target says why once
 * and accepts every input.
 *
 * The replay fails (where the plugin is built) unless some handle is
 * accepted and some of 24 bytes or more with the magic is refused.
 */
#include <stdlib.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally handles = {.what = "tcp memory handle"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_TCP_ENABLED ? na_fuzz_tally_check(&handles) : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c =
        na_fuzz_class("fuzz_tcp_mem_handle", "tcp://127.0.0.1:0", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_mem_handle(c, data, size);
    na_fuzz_count(&handles, ok,
                  size >= 24 && data[0] == 'Q' && data[1] == 'S' &&
                      data[2] == 'T' && data[3] == 'M');
    if (size >= 8) {
        na_mem_handle_t mh;
        uint32_t flags = (uint32_t) data[4] | (uint32_t) data[5] << 8 |
                         (uint32_t) data[6] << 16 | (uint32_t) data[7] << 24;

        if (NA_Mem_handle_deserialize(c, &mh, data, size) == NA_SUCCESS) {
            if (flags == 0 || flags > NA_MEM_READWRITE)
                abort();
            NA_Mem_handle_free(c, mh);
        }
    }
    return 0;
}
