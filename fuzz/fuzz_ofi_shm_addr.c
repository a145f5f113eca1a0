/*
 * Fuzz target for the ofi plugin's shm address forms: the input is fed to
 * NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string, on one ofi+shm class (libfabric's shm
 * provider), whose decoders differ from a tcp class's: its wire family is
 * 'S', its strings are "ofi+shm://<pid>:<domain>:<endpoint>" or
 * libfabric's "fi_shm://..." names.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to the same address.
 *
 * Seed corpus (corpus/ofi_shm_addr/): serialized addresses are
 *   u8 'S' | u32 pid (network order, 1..2^31-1) |
 *   u16 1 + domain * 256 + endpoint (network order, at most 65280)
 * and the text files are lookup strings.
 *
 * If libfabric's shm provider cannot start here the target says why once
 * and accepts every input: there is no decoder to exercise without it.
 *
 * The replay fails (where the plugin is built) unless some serialized shm
 * address is accepted and some of version 1, family 'S' and full length is
 * refused (pid, endpoint bounds), and likewise an "ofi+shm://" or
 * "fi_shm://" string accepted and one refused.
 */
#include <string.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally bytes = {.what = "serialized shm address"},
                            strings = {.what = "ofi+shm:// lookup string"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_OFI_ENABLED ? na_fuzz_tally_check2(&bytes, &strings)
                                 : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = na_fuzz_class("fuzz_ofi_shm_addr", "ofi+shm", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_count(&bytes, ok, size >= 8 && data[0] == 1 && data[1] == 'S');
    ok = na_fuzz_check_addr_string(c, data, size);
    na_fuzz_count(&strings, ok,
                  (size > 10 && memcmp(data, "ofi+shm://", 10) == 0) ||
                      (size > 9 && memcmp(data, "fi_shm://", 9) == 0));
    return 0;
}
