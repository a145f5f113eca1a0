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
 */
#include "../plugins/verbs/na_verbs_wire.c"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_string(const uint8_t *data, size_t size)
{
    char buf[NA_VERBS_ADDR_STRING_MAX];
    struct na_verbs_addr_parts p, q;
    char *str = malloc(size + 1);

    if (str == NULL)
        return;
    memcpy(str, data, size);
    str[size] = '\0';
    if (na_verbs_addr_parse(str, &p) == NA_SUCCESS && p.has_ip) {
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

    if (na_verbs_addr_decode(data, size, &ip, &port) != NA_SUCCESS)
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
