/*
 * Pure encoders and decoders of the verbs plugin (see na_verbs_wire.h).
 *
 * Multi-byte fields are written little-endian byte by byte, so the format
 * does not depend on the host's byte order or on struct padding, and a
 * decoder never casts untrusted bytes to a struct.
 */
#include "na_verbs_wire.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define NA_VERBS_WIRE_VERSION 1

static const uint8_t addr_magic[4] = {'Q', 'S', 'V', 'A'};
static const uint8_t mem_magic[4] = {'Q', 'S', 'V', 'M'};
static const uint8_t conn_magic[4] = {'Q', 'S', 'V', 'C'};

/* Write the low `size` bytes of v at p, least significant first. */
static void
put_le(uint8_t *p, uint64_t v, int size)
{
    for (int i = 0; i < size; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

/* Read `size` little-endian bytes at p. */
static uint64_t
get_le(const uint8_t *p, int size)
{
    uint64_t v = 0;

    for (int i = size - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void
put_u16(uint8_t *p, uint16_t v)
{
    put_le(p, v, 2);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
    put_le(p, v, 4);
}

static void
put_u64(uint8_t *p, uint64_t v)
{
    put_le(p, v, 8);
}

static uint16_t
get_u16(const uint8_t *p)
{
    return (uint16_t) get_le(p, 2);
}

static uint32_t
get_u32(const uint8_t *p)
{
    return (uint32_t) get_le(p, 4);
}

static uint64_t
get_u64(const uint8_t *p)
{
    return get_le(p, 8);
}

/* Device names are what the kernel allows for IB devices in practice:
 * letters, digits, '_', '-' and '.'. */
static bool
device_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* Strip "verbs://" or "<class>+verbs://"; any other scheme is an error. */
static na_return_t
skip_prefix(const char **str)
{
    const char *s = *str;
    const char *sep = strstr(s, "://");
    const char *proto;

    if (sep == NULL)
        return NA_SUCCESS;
    proto = s;
    for (const char *p = s; p < sep; p++)
        if (*p == '+')
            proto = p + 1;
    if ((size_t) (sep - proto) != 5 || strncmp(proto, "verbs", 5) != 0)
        return NA_INVALID_ARG;
    *str = sep + 3;
    return NA_SUCCESS;
}

static na_return_t
parse_port(const char *s, uint16_t *port)
{
    uint32_t v = 0;
    size_t n = 0;

    for (; s[n] != '\0'; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 5)
            return NA_INVALID_ARG;
        v = v * 10 + (uint32_t) (s[n] - '0');
    }
    if (n == 0 || v > 65535)
        return NA_INVALID_ARG;
    *port = (uint16_t) v;
    return NA_SUCCESS;
}

na_return_t
na_verbs_addr_parse(const char *str, struct na_verbs_addr_parts *parts)
{
    struct na_verbs_addr_parts out;
    char ipbuf[16];
    const char *slash, *colon, *ip_end;
    struct in_addr in;
    size_t len;

    if (str == NULL || parts == NULL)
        return NA_INVALID_ARG;
    memset(&out, 0, sizeof(out));
    if (skip_prefix(&str) != NA_SUCCESS)
        return NA_INVALID_ARG;

    slash = strchr(str, '/');
    if (slash != NULL) {
        len = (size_t) (slash - str);
        if (len == 0 || len >= sizeof(out.device))
            return NA_INVALID_ARG;
        for (size_t i = 0; i < len; i++)
            if (!device_char_ok(str[i]))
                return NA_INVALID_ARG;
        memcpy(out.device, str, len);
        out.device[len] = '\0';
        str = slash + 1;
        if (strchr(str, '/') != NULL)
            return NA_INVALID_ARG;
    }

    colon = strchr(str, ':');
    ip_end = colon != NULL ? colon : str + strlen(str);
    len = (size_t) (ip_end - str);
    if (len >= sizeof(ipbuf))
        return NA_INVALID_ARG;
    if (len > 0) {
        memcpy(ipbuf, str, len);
        ipbuf[len] = '\0';
        /* inet_pton takes only the four-part dotted form, which is the one
         * na_verbs_addr_format() writes. */
        if (inet_pton(AF_INET, ipbuf, &in) != 1)
            return NA_INVALID_ARG;
        out.ip = ntohl(in.s_addr);
        out.has_ip = true;
    }
    if (colon != NULL) {
        if (!out.has_ip || parse_port(colon + 1, &out.port) != NA_SUCCESS)
            return NA_INVALID_ARG;
        out.has_port = true;
    }
    *parts = out;
    return NA_SUCCESS;
}

size_t
na_verbs_addr_format(char *buf, size_t buf_size, const char *device,
                     uint32_t ip, uint16_t port)
{
    bool dev = device != NULL && device[0] != '\0';
    int n;

    n = snprintf(buf, buf_size, "verbs://%s%s%u.%u.%u.%u:%u", dev ? device : "",
                 dev ? "/" : "", (ip >> 24) & 0xff, (ip >> 16) & 0xff,
                 (ip >> 8) & 0xff, ip & 0xff, (unsigned) port);
    return n < 0 ? 0 : (size_t) n;
}

void
na_verbs_addr_encode(uint8_t *buf, uint32_t ip, uint16_t port)
{
    memcpy(buf, addr_magic, 4);
    buf[4] = NA_VERBS_WIRE_VERSION;
    buf[5] = 0;
    put_u16(buf + 6, port);
    put_u32(buf + 8, ip);
}

na_return_t
na_verbs_addr_decode(const uint8_t *buf, size_t size, uint32_t *ip,
                     uint16_t *port)
{
    uint16_t p;

    if (buf == NULL || size != NA_VERBS_ADDR_SERIALIZE_SIZE)
        return NA_MSGSIZE;
    if (memcmp(buf, addr_magic, 4) != 0 || buf[4] != NA_VERBS_WIRE_VERSION ||
        buf[5] != 0)
        return NA_PROTOCOL_ERROR;
    /* Every reachable address has a port: port 0 only means "pick one" at
     * bind time and never names a peer. */
    p = get_u16(buf + 6);
    if (p == 0)
        return NA_PROTOCOL_ERROR;
    *port = p;
    *ip = get_u32(buf + 8);
    return NA_SUCCESS;
}

void
na_verbs_mem_encode(uint8_t *buf, const struct na_verbs_mem_desc *desc)
{
    memcpy(buf, mem_magic, 4);
    buf[4] = NA_VERBS_WIRE_VERSION;
    buf[5] = desc->flags;
    put_u16(buf + 6, 0);
    put_u32(buf + 8, desc->rkey);
    put_u64(buf + 12, desc->addr);
    put_u64(buf + 20, desc->len);
}

na_return_t
na_verbs_mem_decode(const uint8_t *buf, size_t size,
                    struct na_verbs_mem_desc *desc)
{
    struct na_verbs_mem_desc d;

    if (buf == NULL || size != NA_VERBS_MEM_SERIALIZE_SIZE)
        return NA_MSGSIZE;
    if (memcmp(buf, mem_magic, 4) != 0 || buf[4] != NA_VERBS_WIRE_VERSION ||
        get_u16(buf + 6) != 0)
        return NA_PROTOCOL_ERROR;
    d.flags = buf[5];
    if (d.flags != NA_MEM_READ_ONLY && d.flags != NA_MEM_WRITE_ONLY &&
        d.flags != NA_MEM_READWRITE)
        return NA_PROTOCOL_ERROR;
    d.rkey = get_u32(buf + 8);
    d.addr = get_u64(buf + 12);
    d.len = get_u64(buf + 20);
    /* A region that wraps around the address space cannot exist; refusing
     * it here keeps every later "offset + size <= len" check meaningful. */
    if (d.len > UINT64_MAX - d.addr || d.len > SIZE_MAX)
        return NA_PROTOCOL_ERROR;
    *desc = d;
    return NA_SUCCESS;
}

void
na_verbs_msg_hdr_encode(uint8_t *buf, const struct na_verbs_msg_hdr *hdr)
{
    buf[0] = hdr->type;
    buf[1] = hdr->src_ctx;
    put_u16(buf + 2, hdr->credits);
    put_u32(buf + 4, hdr->tag);
    put_u32(buf + 8, hdr->ctrl_ack);
    buf[12] = hdr->dst_ctx;
    buf[13] = buf[14] = buf[15] = 0;
}

na_return_t
na_verbs_msg_hdr_decode(const uint8_t *buf, size_t size,
                        struct na_verbs_msg_hdr *hdr)
{
    struct na_verbs_msg_hdr h;

    if (buf == NULL || size < NA_VERBS_MSG_HDR_SIZE)
        return NA_MSGSIZE;
    h.type = buf[0];
    if (h.type != NA_VERBS_MSG_UNEXPECTED && h.type != NA_VERBS_MSG_EXPECTED &&
        h.type != NA_VERBS_MSG_CREDIT)
        return NA_PROTOCOL_ERROR;
    if (buf[13] != 0 || buf[14] != 0 || buf[15] != 0)
        return NA_PROTOCOL_ERROR;
    if (h.type == NA_VERBS_MSG_CREDIT && size != NA_VERBS_MSG_HDR_SIZE)
        return NA_PROTOCOL_ERROR;
    h.src_ctx = buf[1];
    h.dst_ctx = buf[12];
    h.credits = get_u16(buf + 2);
    h.tag = get_u32(buf + 4);
    h.ctrl_ack = get_u32(buf + 8);
    *hdr = h;
    return NA_SUCCESS;
}

void
na_verbs_conn_data_encode(uint8_t *buf, const struct na_verbs_conn_data *data)
{
    memcpy(buf, conn_magic, 4);
    buf[4] = NA_VERBS_WIRE_VERSION;
    buf[5] = 0;
    put_u16(buf + 6, data->port);
    put_u32(buf + 8, data->ip);
    put_u16(buf + 12, data->credits);
    put_u16(buf + 14, 0);
    put_u32(buf + 16, data->max_payload);
}

na_return_t
na_verbs_conn_data_decode(const uint8_t *buf, size_t size,
                          struct na_verbs_conn_data *data)
{
    struct na_verbs_conn_data d;

    if (buf == NULL || size < NA_VERBS_CONN_DATA_SIZE)
        return NA_MSGSIZE;
    if (memcmp(buf, conn_magic, 4) != 0 || buf[4] != NA_VERBS_WIRE_VERSION)
        return NA_PROTOCOL_ERROR;
    d.port = get_u16(buf + 6);
    d.ip = get_u32(buf + 8);
    d.credits = get_u16(buf + 12);
    d.max_payload = get_u32(buf + 16);
    if (d.credits == 0 || d.max_payload == 0)
        return NA_PROTOCOL_ERROR;
    *data = d;
    return NA_SUCCESS;
}
