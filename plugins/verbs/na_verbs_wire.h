/*
 * The verbs plugin's pure encoders and decoders: address strings, serialized
 * addresses and memory handles, the message header and the connection
 * private data.
 *
 * Nothing here touches a device, a lock or the heap, and nothing here
 * includes rdma-core headers, so the fuzz targets and the device-less unit
 * tests compile this file on its own. Every decoder treats its input as
 * hostile: it checks lengths, magic numbers, versions and ranges, and
 * returns an error instead of asserting.
 */
#ifndef NA_VERBS_WIRE_H
#define NA_VERBS_WIRE_H

#include "na_types.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest device name we accept ("rxe0", "mlx5_0", ...). IB device names
 * are at most 63 characters in the kernel. */
#define NA_VERBS_DEVICE_NAME_MAX 64

/* Longest string na_verbs_addr_format() writes, NUL included:
 * "verbs://" + device + "/" + "255.255.255.255" + ":65535". */
#define NA_VERBS_ADDR_STRING_MAX (8 + NA_VERBS_DEVICE_NAME_MAX + 1 + 15 + 6 + 1)

/*
 * The parts of "[class+]verbs://[device/]ip[:port]", or of the bare
 * "[device/]ip[:port]" that NA_Initialize() hands the plugin as host name.
 * ip and port are in host byte order.
 */
struct na_verbs_addr_parts {
    char device[NA_VERBS_DEVICE_NAME_MAX]; /* "" when absent */
    uint32_t ip;                           /* valid when has_ip */
    uint16_t port;                         /* valid when has_port */
    bool has_ip;
    bool has_port;
};

/*
 * Parse an address string. Accepts an optional "verbs://" prefix (itself
 * optionally preceded by "<class>+"), an optional device name followed by
 * '/', an optional dotted IPv4 address and an optional ":port" (decimal,
 * 0-65535). Host names are not resolved: this function never blocks.
 * Returns NA_SUCCESS, or NA_INVALID_ARG for anything malformed.
 */
na_return_t na_verbs_addr_parse(const char *str,
                                struct na_verbs_addr_parts *parts);

/*
 * Write "verbs://[device/]ip:port" into buf (buf_size bytes). device may be
 * NULL or "" to leave it out. Returns the length the full string needs,
 * NUL excluded, like snprintf; the string was written whole only when that
 * length is below buf_size.
 */
size_t na_verbs_addr_format(char *buf, size_t buf_size, const char *device,
                            uint32_t ip, uint16_t port);

/* Serialized address: "QSVA", version, reserved, port, IPv4 address. */
#define NA_VERBS_ADDR_SERIALIZE_SIZE 12

void na_verbs_addr_encode(uint8_t *buf, uint32_t ip, uint16_t port);
/* NA_MSGSIZE when size is not exactly NA_VERBS_ADDR_SERIALIZE_SIZE,
 * NA_PROTOCOL_ERROR for a bad magic, version, reserved field or port 0. */
na_return_t na_verbs_addr_decode(const uint8_t *buf, size_t size, uint32_t *ip,
                                 uint16_t *port);

/* What a peer needs to reach a registered region with RDMA. */
struct na_verbs_mem_desc {
    uint64_t addr; /* remote virtual address of the first byte */
    uint64_t len;  /* bytes, addr + len does not wrap */
    uint32_t rkey; /* remote key of the region */
    uint8_t flags; /* NA_MEM_READ_ONLY / NA_MEM_WRITE_ONLY / NA_MEM_READWRITE */
};

/* Serialized memory handle: "QSVM", version, flags, reserved, rkey, addr,
 * len. */
#define NA_VERBS_MEM_SERIALIZE_SIZE 28

void na_verbs_mem_encode(uint8_t *buf, const struct na_verbs_mem_desc *desc);
/* NA_MSGSIZE on a wrong size, NA_PROTOCOL_ERROR on a bad magic, version,
 * flags, reserved field or a range that wraps around. */
na_return_t na_verbs_mem_decode(const uint8_t *buf, size_t size,
                                struct na_verbs_mem_desc *desc);

/*
 * Every message on a connection starts with this header. `credits` returns
 * receive buffers to the peer (see na_verbs_msg.c for the flow control), and
 * `ctrl_ack` counts the credit-only messages the sender has received and
 * re-posted, so the peer knows when it may send the next one.
 */
enum na_verbs_msg_type {
    NA_VERBS_MSG_UNEXPECTED = 1,
    NA_VERBS_MSG_EXPECTED = 2,
    NA_VERBS_MSG_CREDIT = 3, /* no payload: returns credits only */
};

struct na_verbs_msg_hdr {
    uint8_t type;      /* enum na_verbs_msg_type */
    uint8_t src_ctx;   /* sender's context id (expected matching) */
    uint8_t dst_ctx;   /* receiver's context id the message is for */
    uint16_t credits;  /* receive buffers returned to the peer */
    uint32_t tag;      /* NA tag of an unexpected or expected message */
    uint32_t ctrl_ack; /* credit-only messages received so far (wraps) */
};

#define NA_VERBS_MSG_HDR_SIZE 16

void na_verbs_msg_hdr_encode(uint8_t *buf, const struct na_verbs_msg_hdr *hdr);
/* size is the byte count of the whole received message. NA_MSGSIZE when it
 * cannot hold a header, NA_PROTOCOL_ERROR for an unknown type, non-zero
 * reserved bytes, or a credit-only message that carries a payload. */
na_return_t na_verbs_msg_hdr_decode(const uint8_t *buf, size_t size,
                                    struct na_verbs_msg_hdr *hdr);

/*
 * Connection private data. The active side sends its identity (the address
 * its class is bound to, which is how the passive side names the source of
 * what arrives on the connection), how many messages it can receive before
 * returning credits, and its largest receivable payload. The passive side
 * answers with its own credits and payload limit.
 */
struct na_verbs_conn_data {
    uint32_t ip;          /* requester's bound address (host order) */
    uint16_t port;        /* requester's bound port (host order) */
    uint16_t credits;     /* receive buffers posted for the peer */
    uint32_t max_payload; /* largest payload the sender can receive */
};

#define NA_VERBS_CONN_DATA_SIZE 20

void na_verbs_conn_data_encode(uint8_t *buf,
                               const struct na_verbs_conn_data *data);
/* Private data arrives padded by the CM, so size may exceed the encoded
 * size. NA_MSGSIZE when too short, NA_PROTOCOL_ERROR for a bad magic,
 * version, zero credits or a zero payload limit. */
na_return_t na_verbs_conn_data_decode(const uint8_t *buf, size_t size,
                                      struct na_verbs_conn_data *data);

#ifdef __cplusplus
}
#endif

#endif /* NA_VERBS_WIRE_H */
