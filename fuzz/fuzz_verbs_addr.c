/*
 * Fuzz target: the verbs plugin's address decoders, the address-string
 * parser (lookup and info strings) and the serialized-address decoder.
 *
 * The decoders are hidden inside the library (the plugin exports only its
 * ops table) and need no device, so their source is compiled into this
 * target directly; that also keeps the target building when the verbs
 * plugin itself is not built.
 *
 * Invariants checked: nothing crashes or reads out of bounds; a string
 * that parses formats back to a string that parses to the same address;
 * serialized bytes that decode re-encode to the same bytes.
 *
 * The replay fails unless some "verbs://" string with an address parses
 * and some is refused, and some serialized address of the right size,
 * magic and version is accepted and some refused (port 0).
 */
#include "../plugins/verbs/na_verbs_wire.c"

#include <stdlib.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally strings = {.what = "verbs:// address string"},
                            bytes = {.what = "serialized verbs address"};

const char *
fuzz_replay_check(void)
{
    return na_fuzz_tally_check2(&strings, &bytes);
}

static void
check_string(const uint8_t *data, size_t size)
{
    char buf[NA_VERBS_ADDR_STRING_MAX];
    struct na_verbs_addr_parts p, q;
    char *str = malloc(size + 1);
    bool ok;

    if (str == NULL)
        return;
    memcpy(str, data, size);
    str[size] = '\0';
    ok = na_verbs_addr_parse(str, &p) == NA_SUCCESS;
    na_fuzz_count(&strings, ok && p.has_ip,
                  strncmp(str, "verbs://", 8) == 0 && strchr(str, ':') != NULL);
    if (ok && p.has_ip) {
        size_t n =
            na_verbs_addr_format(buf, sizeof(buf), p.device, p.ip, p.port);

        if (n >= sizeof(buf) || na_verbs_addr_parse(buf, &q) != NA_SUCCESS ||
            q.ip != p.ip || q.port != p.port || strcmp(q.device, p.device))
            __builtin_trap();
    }
    free(str);
}

static void
check_bytes(const uint8_t *data, size_t size)
{
    uint8_t again[NA_VERBS_ADDR_SERIALIZE_SIZE];
    uint32_t ip;
    uint16_t port;
    bool ok;

    ok = na_verbs_addr_decode(data, size, &ip, &port) == NA_SUCCESS;
    na_fuzz_count(&bytes, ok,
                  size == NA_VERBS_ADDR_SERIALIZE_SIZE &&
                      memcmp(data, "QSVA", 4) == 0 && data[4] == 1 &&
                      data[5] == 0);
    if (!ok)
        return;
    na_verbs_addr_encode(again, ip, port);
    if (memcmp(again, data, sizeof(again)) != 0)
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_string(data, size);
    check_bytes(data, size);
    return 0;
}
