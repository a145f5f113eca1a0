/*
 * Fuzz target for the native TCP plugin's wire decoders, called directly
 * (plugins/tcp/na_tcp_wire.c): the frame header, the hello and the
 * address string parser each read the input.
 *
 * Besides "no crash, no read out of bounds", what a decoder accepts must
 * round-trip: an accepted header or hello encodes back to the bytes it was
 * read from, and a parsed address string prints as one that parses to the
 * same address. An accepted message header never announces more payload
 * than the limits it was checked against (4096 unexpected, 8192 expected),
 * and an accepted acknowledgement or failed read answer announces none.
 *
 * Seed corpus (corpus/tcp_wire/): 40-byte frame headers (little-endian:
 * u8 type 1-6 | u8 src_id | u8 dst_id | u8 status | u32 tag | u64 len |
 * u64 token | u64 key | u64 offset), 12-byte hellos (u32 "QSTH" | u16
 * version 1 | u16 port | u32 0), address strings ("tcp://a.b.c.d:port",
 * "tcp://[v6]:port") and serialized addresses (u16 "TS" | u16 port |
 * IPv4, or u16 "T6" | u16 port | IPv6), which must also round-trip.
 *
 * The replay fails unless each decoder accepts some input of its current
 * form and refuses some: a 40-byte header of a known type, a 12-byte hello
 * with this protocol's magic and version, a "tcp://" string, serialized
 * bytes with a known magic and the length it asks for.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/tcp/na_tcp_internal.h"
#include "na_fuzz_util.h"

static struct na_fuzz_tally headers = {.what = "frame header"},
                            hellos = {.what = "hello"},
                            strings = {.what = "tcp:// address string"},
                            addrs = {.what = "serialized address"};

const char *
fuzz_replay_check(void)
{
    const struct na_fuzz_tally *all[] = {&headers, &hellos, &strings, &addrs};
    const char *why = NULL;

    for (size_t i = 0; why == NULL && i < sizeof(all) / sizeof(all[0]); i++)
        why = na_fuzz_tally_check(all[i]);
    return why;
}

static uint32_t
le32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
           (uint32_t) p[3] << 24;
}

static void
check_header(const uint8_t *data, size_t size)
{
    const struct na_tcp_limits lim = {.max_unexp = 4096, .max_exp = 8192};
    uint8_t again[NA_TCP_HDR_SIZE];
    struct na_tcp_hdr h;

    bool ok = na_tcp_hdr_decode(data, size, &lim, &h) == NA_SUCCESS;

    na_fuzz_count(&headers, ok,
                  size >= NA_TCP_HDR_SIZE && data[0] >= NA_TCP_UNEXP &&
                      data[0] <= NA_TCP_PUT_ACK);
    if (!ok)
        return;
    if ((h.type == NA_TCP_UNEXP && h.len > lim.max_unexp) ||
        (h.type == NA_TCP_EXP && h.len > lim.max_exp))
        abort();
    /* An acknowledgement, and a read answer that reports a failure, carry
     * no payload: a length there would be read as the next frame. */
    if ((h.type == NA_TCP_PUT_ACK ||
         (h.type == NA_TCP_GET_RESP && h.status != NA_TCP_ST_OK)) &&
        h.len != 0)
        abort();
    na_tcp_hdr_encode(again, &h);
    if (memcmp(again, data, NA_TCP_HDR_SIZE) != 0)
        abort();
}

static void
check_hello(const uint8_t *data, size_t size)
{
    uint8_t again[NA_TCP_HELLO_SIZE];
    uint16_t port;

    bool ok = na_tcp_hello_decode(data, size, &port) == NA_SUCCESS;

    na_fuzz_count(&hellos, ok,
                  size >= NA_TCP_HELLO_SIZE &&
                      le32(data) == NA_TCP_HELLO_MAGIC &&
                      (le32(data + 4) & 0xffff) == NA_TCP_VERSION);
    if (!ok)
        return;
    na_tcp_hello_encode(again, port);
    if (port == 0 || memcmp(again, data, NA_TCP_HELLO_SIZE) != 0)
        abort();
}

static void
check_string(const uint8_t *data, size_t size)
{
    char str[128], printed[NA_TCP_ADDR_STR_MAX];
    struct na_tcp_ip ip, ip2;
    uint16_t port, port2;

    if (size >= sizeof(str))
        size = sizeof(str) - 1;
    memcpy(str, data, size);
    str[size] = '\0';
    bool ok = na_tcp_addr_string_parse(str, &ip, &port) == NA_SUCCESS;

    na_fuzz_count(&strings, ok, strncmp(str, "tcp://", 6) == 0);
    if (!ok)
        return;
    if (na_tcp_addr_print(&ip, port, printed, sizeof(printed)) >=
            sizeof(printed) ||
        na_tcp_addr_string_parse(printed, &ip2, &port2) != NA_SUCCESS ||
        !na_tcp_ip_eq(&ip, &ip2) || port2 != port)
        abort();
}

static void
check_addr_bytes(const uint8_t *data, size_t size)
{
    uint8_t again[NA_TCP_ADDR6_SIZE];
    struct na_tcp_ip ip;
    uint16_t port;
    size_t n;

    bool ok = na_tcp_addr_decode(data, size, &ip, &port) == NA_SUCCESS;

    na_fuzz_count(
        &addrs, ok,
        (size >= NA_TCP_ADDR_SIZE && data[0] == 'T' && data[1] == 'S') ||
            (size >= NA_TCP_ADDR6_SIZE && data[0] == 'T' && data[1] == '6'));
    if (!ok)
        return;
    n = na_tcp_addr_size(&ip);
    if (n > size || port == 0 || na_tcp_ip_is_any(&ip))
        abort();
    na_tcp_addr_encode(again, &ip, port);
    if (memcmp(again, data, n) != 0)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_header(data, size);
    check_hello(data, size);
    check_string(data, size);
    check_addr_bytes(data, size);
    return 0;
}
