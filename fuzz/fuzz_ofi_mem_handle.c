/*
 * Fuzz target for the ofi plugin's memory-handle decoder: the input is fed
 * to NA_Mem_handle_deserialize() on one ofi+tcp class.
 *
 * An accepted input must round-trip: the handle serializes back to the
 * bytes it was read from. A handle from a peer is never dereferenced
 * locally, so accepting any well-formed base, length and key is safe; the
 * decoder must refuse bad versions, unknown flags, non-zero padding and
 * regions that wrap around the address space.
 *
 * Seed corpus (corpus/ofi_mem_handle/): serialized handles are 32 bytes:
 *   u8 version (1) | u8 flags (1 read, 2 write, 3 both) | 6 zero bytes |
 *   u64 base | u64 length | u64 key   (little endian)
 *
 * If libfabric's tcp provider cannot start here the target says why once
 * and accepts every input.
 *
 * The replay fails (where the plugin is built) unless some handle is
 * accepted and some of version 1 and full length is refused.
 */
#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally handles = {.what = "ofi memory handle"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_OFI_ENABLED ? na_fuzz_tally_check(&handles) : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_ofi_mem_handle",
                                  "ofi+tcp://127.0.0.1:0", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_mem_handle(c, data, size);
    na_fuzz_count(&handles, ok, size >= 32 && data[0] == 1);
    return 0;
}
