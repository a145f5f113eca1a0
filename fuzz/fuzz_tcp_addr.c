/*
 * Fuzz target for the native TCP plugin's address decoders: the input is
 * fed to NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string, on one tcp class listening on 127.0.0.1.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to the same address.
 *
 * Seed corpus (corpus/tcp_addr/): serialized addresses are
 *   u16 0x5354 ("TS", little-endian) | u16 port (little-endian, not 0) |
 *   4 bytes IPv4 address (network order, not 0.0.0.0), or
 *   u16 0x3654 ("T6") | u16 port | 16 bytes IPv6 address (not ::)
 * and the text files are lookup strings ("tcp://a.b.c.d:port",
 * "tcp://[v6]:port", "na+tcp://...", "ofi+tcp://...", "a.b.c.d:port",
 * "localhost:port").
 *
 * If the plugin is not in this build (not Linux) the target says why once
 * and accepts every input.
 *
 * The replay fails (where the plugin is built) unless some serialized
 * address is accepted and some with a known magic and its full length is
 * refused (port 0, the any address), and likewise a "tcp://" string
 * accepted and one refused.
 */
#include <string.h>

#include "na_config.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally bytes = {.what = "serialized tcp address"},
                            strings = {.what = "tcp:// lookup string"};

const char *
fuzz_replay_check(void)
{
    return QS_PLUGIN_TCP_ENABLED ? na_fuzz_tally_check2(&bytes, &strings)
                                 : NULL;
}

/* "TS" with 8 bytes or "T6" with 20: the decoder reads the address. */
static bool
known_form(const uint8_t *data, size_t size)
{
    if (size >= 8 && data[0] == 'T' && data[1] == 'S')
        return true;
    return size >= 20 && data[0] == 'T' && data[1] == '6';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c =
        na_fuzz_class("fuzz_tcp_addr", "tcp://127.0.0.1:0", false, false);
    bool ok;

    if (c == NULL)
        return 0;
    ok = na_fuzz_check_addr_bytes(c, data, size);
    na_fuzz_count(&bytes, ok, known_form(data, size));
    ok = na_fuzz_check_addr_string(c, data, size);
    na_fuzz_count(&strings, ok, size > 6 && memcmp(data, "tcp://", 6) == 0);
    return 0;
}
