/*
 * Fuzz target for the shared-memory plugin's address decoders: the input
 * is fed to NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string, on one na+sm class.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to the same address.
 *
 * Seed corpus (corpus/sm_addr/): serialized addresses are
 *   u8 0x4d | u8 0x53 ("SM") | u8 name length n (1..64) | n name bytes
 * from [A-Za-z0-9._:-]; the text files are lookup strings
 * ("na+sm://<name>", "sm://<name>", "<name>").
 *
 * If the plugin is not in this build (not Linux) the target says why once
 * and accepts every input.
 *
 * The replay fails (where the plugin is built) unless some serialized
 * address is accepted and some refused for its name (magic and length
 * right), and likewise an "na+sm://" or "sm://" string.
 */
#include <string.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally bytes = {.what = "serialized sm address"},
                            strings = {.what = "sm:// lookup string"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_SM_ENABLED ? na_fuzz_tally_check2(&bytes, &strings) : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_sm_addr", "na+sm", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_count(&bytes, ok,
                  size >= 3 && data[0] == 0x4d && data[1] == 0x53 &&
                      size >= 3u + data[2]);
    ok = na_fuzz_check_addr_string(c, data, size);
    na_fuzz_count(&strings, ok,
                  (size > 8 && memcmp(data, "na+sm://", 8) == 0) ||
                      (size > 5 && memcmp(data, "sm://", 5) == 0));
    return 0;
}
