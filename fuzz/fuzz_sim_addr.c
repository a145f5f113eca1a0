/*
 * Fuzz target for the simulated fabric's address decoders: the input is
 * fed to NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to an equal address.
 *
 * Seed corpus (corpus/sim_addr/): serialized addresses are
 *   u8 version (1) | u8 name length | name | u64 incarnation (little endian)
 * and the text files are lookup strings.
 */
#include "na_fuzz_util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_sim_addr", "sim://fuzz", true, true);

    if (c == NULL)
        return 0;
    na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_check_addr_string(c, data, size);
    return 0;
}
