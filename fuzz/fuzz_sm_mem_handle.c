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
 */
#include "na_fuzz_util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_sm_mem_handle", "na+sm", false, false);

    if (c == NULL)
        return 0;
    na_fuzz_check_mem_handle(c, data, size);
    return 0;
}
