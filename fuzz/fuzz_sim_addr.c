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
 *
 * The replay fails unless some serialized address is accepted and some is
 * refused for its name (its version and lengths right), and likewise a
 * "sim://" string accepted and one refused.
 */
#include <string.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally bytes = {.what = "serialized sim address"},
                            strings = {.what = "sim:// lookup string"};

const char *
fuzz_replay_check(void)
{
    return na_fuzz_tally_check2(&bytes, &strings);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_sim_addr", "sim://fuzz", true, true);
    bool ok;

    if (c == NULL)
        return 0;
    /* Version 1 and a name length the input holds: what is refused then
     * is refused for the name. */
    ok = na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_count(&bytes, ok,
                  size >= 10 && data[0] == 1 && size - 10 >= data[1]);
    ok = na_fuzz_check_addr_string(c, data, size);
    na_fuzz_count(&strings, ok, size > 6 && memcmp(data, "sim://", 6) == 0);
    return 0;
}
