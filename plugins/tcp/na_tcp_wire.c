/*
 * The TCP plugin's decoders: pure functions over bytes that came from the
 * network or from a caller, each with a fuzz target (fuzz/fuzz_tcp_*.c).
 * Every length and count is checked against the class's limits before
 * anything is allocated or copied, and every encoder's output decodes to
 * what was encoded (the fuzz targets check the round trip).
 *
 * Wire forms are little-endian:
 *   frame header (40 bytes): see struct na_tcp_hdr;
 *   hello (12 bytes): u32 magic "QSTH" | u16 version | u16 port |
 *     u32 zero;
 *   address, IPv4 (8 bytes): u16 magic "TS" | u16 port | 4 bytes IPv4,
 *     network order;
 *   address, IPv6 (20 bytes): u16 magic "T6" | u16 port | 16 bytes IPv6,
 *     network order;
 *   memory handle (24 bytes): u32 magic "QSTM" | u32 flags | u64 key |
 *     u64 length.
 */
#include "na_tcp_internal.h"

#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
put16(uint8_t *p, uint16_t v)
{
    v = htole16(v);
    memcpy(p, &v, 2);
}

static void
put32(uint8_t *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}

static void
put64(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}

static uint16_t
get16(const uint8_t *p)
{
    uint16_t v;

    memcpy(&v, p, 2);
    return le16toh(v);
}

static uint32_t
get32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return le32toh(v);
}

static uint64_t
get64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return le64toh(v);
}

void
na_tcp_hdr_encode(uint8_t *out, const struct na_tcp_hdr *h)
{
    out[0] = h->type;
    out[1] = h->src_id;
    out[2] = h->dst_id;
    out[3] = h->status;
    put32(out + 4, h->tag);
    put64(out + 8, h->len);
    put64(out + 16, h->token);
    put64(out + 24, h->key);
    put64(out + 32, h->offset);
}

/*
 * NA_PROTOCOL_ERROR for a header no peer of ours writes, NA_MSGSIZE for a
 * message above the class's limits. The lengths of RMA payloads are
 * checked against the op they answer (or the region they name) by the
 * caller, which knows them.
 */
na_return_t
na_tcp_hdr_decode(const uint8_t *in, size_t size,
                  const struct na_tcp_limits *lim, struct na_tcp_hdr *h)
{
    struct na_tcp_hdr d;
    bool rma_fields, tag_ok;

    if (in == NULL || size < NA_TCP_HDR_SIZE)
        return NA_MSGSIZE;
    d.type = in[0];
    d.src_id = in[1];
    d.dst_id = in[2];
    d.status = in[3];
    d.tag = get32(in + 4);
    d.len = get64(in + 8);
    d.token = get64(in + 16);
    d.key = get64(in + 24);
    d.offset = get64(in + 32);
    rma_fields = d.token != 0 || d.key != 0 || d.offset != 0;
    tag_ok = d.tag == 0;
    switch (d.type) {
    case NA_TCP_UNEXP:
    case NA_TCP_EXP:
        if (rma_fields || d.status != 0)
            return NA_PROTOCOL_ERROR;
        if (d.len > (d.type == NA_TCP_UNEXP ? lim->max_unexp : lim->max_exp))
            return NA_MSGSIZE;
        break;
    case NA_TCP_GET_REQ:
    case NA_TCP_PUT:
        if (!tag_ok || d.status != 0 || d.token == 0)
            return NA_PROTOCOL_ERROR;
        break;
    case NA_TCP_GET_RESP:
    case NA_TCP_PUT_ACK:
        if (!tag_ok || d.token == 0 || d.key != 0 || d.offset != 0 ||
            d.status > NA_TCP_ST_PERM)
            return NA_PROTOCOL_ERROR;
        if ((d.type == NA_TCP_PUT_ACK || d.status != NA_TCP_ST_OK) &&
            d.len != 0)
            return NA_PROTOCOL_ERROR;
        break;
    default:
        return NA_PROTOCOL_ERROR;
    }
    *h = d;
    return NA_SUCCESS;
}

void
na_tcp_hello_encode(uint8_t *out, uint16_t port)
{
    put32(out, NA_TCP_HELLO_MAGIC);
    put16(out + 4, NA_TCP_VERSION);
    put16(out + 6, port);
    put32(out + 8, 0);
}

na_return_t
na_tcp_hello_decode(const uint8_t *in, size_t size, uint16_t *port)
{
    if (in == NULL || size < NA_TCP_HELLO_SIZE)
        return NA_MSGSIZE;
    if (get32(in) != NA_TCP_HELLO_MAGIC || get16(in + 4) != NA_TCP_VERSION ||
        get32(in + 8) != 0 || get16(in + 6) == 0)
        return NA_PROTOCOL_ERROR;
    *port = get16(in + 6);
    return NA_SUCCESS;
}

bool
na_tcp_ip_eq(const struct na_tcp_ip *a, const struct na_tcp_ip *b)
{
    if (a->family != b->family)
        return false;
    if (a->family == AF_INET)
        return a->u.v4.s_addr == b->u.v4.s_addr;
    return memcmp(&a->u.v6, &b->u.v6, sizeof(a->u.v6)) == 0;
}

bool
na_tcp_ip_is_any(const struct na_tcp_ip *ip)
{
    if (ip->family == AF_INET)
        return ip->u.v4.s_addr == htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&ip->u.v6);
}

bool
na_tcp_ip_is_loopback(const struct na_tcp_ip *ip)
{
    if (ip->family == AF_INET)
        return (ntohl(ip->u.v4.s_addr) >> 24) == 127;
    return IN6_IS_ADDR_LOOPBACK(&ip->u.v6);
}

socklen_t
na_tcp_ip_sockaddr(const struct na_tcp_ip *ip, uint16_t port,
                   struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (ip->family == AF_INET6) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) (void *) ss;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(port);
        sin6->sin6_addr = ip->u.v6;
        return sizeof(*sin6);
    } else {
        struct sockaddr_in *sin = (struct sockaddr_in *) (void *) ss;
        sin->sin_family = AF_INET;
        sin->sin_port = htons(port);
        sin->sin_addr = ip->u.v4;
        return sizeof(*sin);
    }
}

bool
na_tcp_ip_from_sockaddr(const struct sockaddr_storage *ss, struct na_tcp_ip *ip)
{
    memset(ip, 0, sizeof(*ip));
    if (ss->ss_family == AF_INET) {
        ip->family = AF_INET;
        ip->u.v4 = ((const struct sockaddr_in *) (const void *) ss)->sin_addr;
        return true;
    }
    if (ss->ss_family == AF_INET6) {
        ip->family = AF_INET6;
        ip->u.v6 = ((const struct sockaddr_in6 *) (const void *) ss)->sin6_addr;
        return true;
    }
    return false;
}

/* ":port", 1 to 65535 digits-wise up to 65535, into *port. */
static na_return_t
na_tcp_port_parse(const char *p, uint16_t *port)
{
    const char *start = p + 1;
    unsigned long v = 0;

    if (*p != ':' || *start == '\0')
        return NA_INVALID_ARG;
    for (p = start; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || p - start >= 5)
            return NA_INVALID_ARG;
        v = v * 10 + (unsigned long) (*p - '0');
    }
    if (v > 65535)
        return NA_INVALID_ARG;
    *port = (uint16_t) v;
    return NA_SUCCESS;
}

/* Every spelling of TCP names this plugin's addresses (the core refuses
 * other protocols before a lookup gets here): skip it. */
const char *
na_tcp_strip_scheme(const char *str)
{
    static const char *const schemes[] = {
        "tcp://",         "na+tcp://",          "ofi+tcp://",
        "tcp;ofi_rxm://", "ofi+tcp;ofi_rxm://", "na+tcp;ofi_rxm://",
    };

    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        size_t n = strlen(schemes[i]);

        if (strncmp(str, schemes[i], n) == 0)
            return str + n;
    }
    return str;
}

/*
 * "tcp://a.b.c.d:port", "tcp://[v6]:port", "na+tcp://...", "ofi+tcp://..."
 * (the same peers, see docs/plugin-tcp.md) or a bare "a.b.c.d:port" or
 * "[v6]:port". The address is numeric; names are resolved by the caller
 * first. An IPv6 address is always in brackets.
 */
na_return_t
na_tcp_addr_string_parse(const char *str, struct na_tcp_ip *ip, uint16_t *port)
{
    char host[INET6_ADDRSTRLEN];
    const char *end;
    struct na_tcp_ip d;
    uint16_t v;

    if (str == NULL)
        return NA_INVALID_ARG;
    str = na_tcp_strip_scheme(str);
    memset(&d, 0, sizeof(d));
    if (str[0] == '[') {
        str++;
        end = strchr(str, ']');
        if (end == NULL || end == str || (size_t) (end - str) >= sizeof(host))
            return NA_INVALID_ARG;
        memcpy(host, str, (size_t) (end - str));
        host[end - str] = '\0';
        d.family = AF_INET6;
        if (na_tcp_port_parse(end + 1, &v) != NA_SUCCESS ||
            inet_pton(AF_INET6, host, &d.u.v6) != 1)
            return NA_INVALID_ARG;
    } else {
        end = strchr(str, ':');
        if (end == NULL || end == str ||
            (size_t) (end - str) >= INET_ADDRSTRLEN)
            return NA_INVALID_ARG;
        memcpy(host, str, (size_t) (end - str));
        host[end - str] = '\0';
        d.family = AF_INET;
        if (na_tcp_port_parse(end, &v) != NA_SUCCESS ||
            inet_pton(AF_INET, host, &d.u.v4) != 1)
            return NA_INVALID_ARG;
    }
    *ip = d;
    *port = v;
    return NA_SUCCESS;
}

size_t
na_tcp_addr_print(const struct na_tcp_ip *ip, uint16_t port, char *buf,
                  size_t size)
{
    char host[INET6_ADDRSTRLEN];
    int n;

    inet_ntop(ip->family, &ip->u, host, sizeof(host));
    n = snprintf(buf, size,
                 ip->family == AF_INET6 ? "tcp://[%s]:%u" : "tcp://%s:%u", host,
                 (unsigned) port);
    return n < 0 ? 0 : (size_t) n;
}

size_t
na_tcp_addr_size(const struct na_tcp_ip *ip)
{
    return ip->family == AF_INET6 ? NA_TCP_ADDR6_SIZE : NA_TCP_ADDR_SIZE;
}

void
na_tcp_addr_encode(uint8_t *out, const struct na_tcp_ip *ip, uint16_t port)
{
    if (ip->family == AF_INET6) {
        put16(out, NA_TCP_ADDR6_MAGIC);
        put16(out + 2, port);
        memcpy(out + 4, &ip->u.v6, 16);
        return;
    }
    put16(out, NA_TCP_ADDR_MAGIC);
    put16(out + 2, port);
    memcpy(out + 4, &ip->u.v4.s_addr, 4);
}

na_return_t
na_tcp_addr_decode(const uint8_t *in, size_t size, struct na_tcp_ip *ip,
                   uint16_t *port)
{
    struct na_tcp_ip d;

    if (in == NULL || size < NA_TCP_ADDR_SIZE)
        return NA_MSGSIZE;
    memset(&d, 0, sizeof(d));
    if (get16(in) == NA_TCP_ADDR6_MAGIC) {
        if (size < NA_TCP_ADDR6_SIZE)
            return NA_MSGSIZE;
        d.family = AF_INET6;
        memcpy(&d.u.v6, in + 4, 16);
    } else if (get16(in) == NA_TCP_ADDR_MAGIC) {
        d.family = AF_INET;
        memcpy(&d.u.v4.s_addr, in + 4, 4);
    } else {
        return NA_PROTOCOL_ERROR;
    }
    if (get16(in + 2) == 0 || na_tcp_ip_is_any(&d))
        return NA_PROTOCOL_ERROR;
    *ip = d;
    *port = get16(in + 2);
    return NA_SUCCESS;
}

void
na_tcp_mem_encode(uint8_t *out, uint32_t flags, uint64_t key, uint64_t len)
{
    put32(out, NA_TCP_MEM_MAGIC);
    put32(out + 4, flags);
    put64(out + 8, key);
    put64(out + 16, len);
}

na_return_t
na_tcp_mem_decode(const uint8_t *in, size_t size, uint32_t *flags,
                  uint64_t *key, uint64_t *len)
{
    uint32_t f;

    if (in == NULL || size < NA_TCP_MEM_HANDLE_SIZE)
        return NA_MSGSIZE;
    f = get32(in + 4);
    if (get32(in) != NA_TCP_MEM_MAGIC || f == 0 ||
        (f & ~(uint32_t) NA_MEM_READWRITE) != 0)
        return NA_PROTOCOL_ERROR;
    *flags = f;
    *key = get64(in + 8);
    *len = get64(in + 16);
    return NA_SUCCESS;
}
