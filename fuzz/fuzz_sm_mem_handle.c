/*
 * Fuzz target for the shared-memory plugin's memory handle decoder: the
 * input is fed to NA_Mem_handle_deserialize() on one na+sm class.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: the handle serializes back to the bytes it was read
 * from. What a decoded handle may reach is decided later, against the
 * owner's region table (plugins/sm/na_sm_rma.c), so no value is trusted
 * here.
 *
 * Seed corpus (corpus/sm_mem_handle/): 40 bytes, native byte order:
 *   u32 magic 0x51534d4d | u32 flags (1..3) | u32 slot | u32 zero |
 *   u64 generation | u64 base address | u64 length
 *
 * The replay fails (where the plugin is built) unless some handle is
 * accepted and some of 40 bytes or more with the magic is refused (for its
 * flags, its padding or a region that wraps).
 */
#include <string.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally handles = {.what = "sm memory handle"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_SM_ENABLED ? na_fuzz_tally_check(&handles) : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_sm_mem_handle", "na+sm", false, false);
    uint32_t magic = 0;
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_mem_handle(c, data, size);
    if (size >= 4)
        memcpy(&magic, data, 4);
    na_fuzz_count(&handles, ok, size >= 40 && magic == 0x51534d4du);
    return 0;
}
