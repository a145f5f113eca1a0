/*
 * Fuzz target for the ofi plugin's address decoders: the input is fed to
 * NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string, on one ofi+tcp class.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to the same address.
 *
 * Seed corpus (corpus/ofi_addr/): serialized addresses are
 *   u8 version (1) | u8 family (4 = IPv4) | 4 bytes IPv4 | u16 port
 * (address and port in network byte order); the text files are lookup
 * strings.
 *
 * If libfabric's tcp provider cannot start here the target says why once
 * and accepts every input: there is no decoder to exercise without it.
 *
 * The replay fails (where the plugin is built) unless some serialized
 * address is accepted and some of version 1 and full length is refused
 * (family, port 0, the any address), and likewise an "ofi+tcp://" string
 * accepted and one refused.
 */
#include <string.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally bytes = {.what = "serialized ofi address"},
                            strings = {.what = "ofi+tcp:// lookup string"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_OFI_ENABLED ? na_fuzz_tally_check2(&bytes, &strings)
                                 : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c =
        na_fuzz_class("fuzz_ofi_addr", "ofi+tcp://127.0.0.1:0", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_count(&bytes, ok, size >= 8 && data[0] == 1);
    ok = na_fuzz_check_addr_string(c, data, size);
    na_fuzz_count(&strings, ok,
                  size > 10 && memcmp(data, "ofi+tcp://", 10) == 0);
    return 0;
}
