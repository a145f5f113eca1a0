/*
 * Private state of the native TCP NA plugin ("tcp", "na+tcp",
 * "tcp://<ip>:<port>"), shared by its files:
 *
 *   na_tcp.c           ops table, class and context life cycle, op ids
 *   na_tcp_wire.c      pure decoders of untrusted bytes (frame header,
 *                      hello, address strings and bytes, memory handles)
 *   na_tcp_addr.c      the address table, lookup, printing, serialization
 *   na_tcp_conn.c      sockets: listen, connect, accept, hello, reading
 *                      frames, writing the send queue, peer death
 *   na_tcp_msg.c       messages: sends, receives, matching, backlogs
 *   na_tcp_mem.c       memory handles (one or several segments), the
 *                      region table
 *   na_tcp_rma.c       put and get
 *   na_tcp_progress.c  polling, waiting, cancel, completion
 *
 * Every class listens on a TCP socket (port 0: the kernel picks one). One
 * connection carries both directions between two classes: the first send
 * to a peer connects and writes a hello naming the port it listens on; the
 * accepting side names the peer by the connection's source IP (from the
 * kernel) and that port. Frames are a fixed 40-byte header and a payload.
 * A send is written at once when the connection's queue is empty and it is
 * the first since the last progress pass; the rest waits in the queue,
 * which progress writes with one sendmsg per connection. Reads take what the
 * socket has, in large chunks, and parse every complete frame; the payload of
 * an RMA frame goes straight into its destination. RMA is emulated on the
 * stream: a get asks the target for (key, offset, length), which the target
 * checks against its region table before it answers with the data written
 * straight from the region.
 *
 * Locks. One mutex per class (cls->lock) guards everything the plugin
 * shares, sockets included. Lock order: cls->lock, then the core's context
 * lock (taken inside na_op_finish() and NA_Context_get_completion_count()).
 * The plugin never takes a core lock itself and reads no core field.
 * Nothing here is exported but na_tcp_class_ops.
 */
#ifndef NA_TCP_INTERNAL_H
#define NA_TCP_INTERNAL_H

#include "na/na_plugin.h"
#include "na/na_plugin_util.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define NA_TCP_CLASS_NAME "na"

/* Payload limits: the default, and the largest a class may ask for. */
#define NA_TCP_DEFAULT_MSG_SIZE 4096
#define NA_TCP_MAX_MSG_SIZE (1u << 20)

/* Bytes of a connection's read buffer, at least: a class whose messages
 * are larger gets room for two of its largest frames. */
#define NA_TCP_RX_SIZE (256u * 1024u)

/* The send buffer each connection asks for (the kernel doubles it): the
 * kernel's own tuning grows it to megabytes, and a large answer (a get of
 * 1 MiB) is then written whole before the reader has taken much of it,
 * from lines long gone from the cache. Over loopback, pinned, busy, 1 MiB
 * pulls took 121 to 198 us at the median with it against 259 to 346
 * without, and 16 MiB pulls moved 2.9 to 3.8 GB/s against 1.9
 * (docs/performance.md). It bounds a connection to this much unread data
 * in flight: 1 MiB per round trip, 10 GB/s at 100 us. */
#define NA_TCP_SNDBUF (512 * 1024)

/* Entries of one sendmsg (the kernel's IOV_MAX is 1024). */
#define NA_TCP_IOV_MAX 64

/* Segments of one memory handle (NA_Mem_handle_get_max_segments): a
 * frame's payload is at most that many pieces, so a frame and its header
 * fit one sendmsg. */
#define NA_TCP_SEG_MAX 16

/* Wire sizes and magics. */
#define NA_TCP_HDR_SIZE 40
#define NA_TCP_HELLO_SIZE 12
#define NA_TCP_HELLO_MAGIC 0x48545351u /* "QSTH" little-endian */
#define NA_TCP_VERSION 1u
#define NA_TCP_ADDR_SIZE 8         /* an IPv4 address */
#define NA_TCP_ADDR_MAGIC 0x5354u  /* "TS" */
#define NA_TCP_ADDR6_SIZE 20       /* an IPv6 address */
#define NA_TCP_ADDR6_MAGIC 0x3654u /* "T6" */
/* Longest printed address: "tcp://[" IPv6 "]:" port. */
#define NA_TCP_ADDR_STR_MAX 64
#define NA_TCP_MEM_HANDLE_SIZE 24
#define NA_TCP_MEM_MAGIC 0x4d545351u /* "QSTM" */

/* Frame types. */
enum na_tcp_type {
    NA_TCP_UNEXP = 1,    /* unexpected message: tag, payload          */
    NA_TCP_EXP = 2,      /* expected message: tag, payload            */
    NA_TCP_GET_REQ = 3,  /* token, key, offset, len; no payload       */
    NA_TCP_GET_RESP = 4, /* token, status; payload: the data          */
    NA_TCP_PUT = 5,      /* token, key, offset; payload: the data     */
    NA_TCP_PUT_ACK = 6   /* token, status                             */
};

/* RMA status codes on the wire (the target's verdict). */
enum na_tcp_status {
    NA_TCP_ST_OK = 0,
    NA_TCP_ST_KEY = 1,   /* no such region: forged, stale or freed   */
    NA_TCP_ST_RANGE = 2, /* outside the region                       */
    NA_TCP_ST_PERM = 3   /* the region does not grant the access     */
};

/*
 * A frame header, decoded (the wire form is little-endian, 40 bytes):
 *   u8 type | u8 src_id | u8 dst_id | u8 status | u32 tag |
 *   u64 len | u64 token | u64 key | u64 offset
 * `len` is the payload bytes that follow, except for a get request, which
 * has none and asks for `len` bytes at `offset` of region `key`; fields a
 * type does not use are zero.
 */
struct na_tcp_hdr {
    uint8_t type;
    uint8_t src_id;
    uint8_t dst_id;
    uint8_t status;
    uint32_t tag;
    uint64_t len;
    uint64_t token;
    uint64_t key;
    uint64_t offset;
};

/* What the decoders check a header against: the class's limits. */
struct na_tcp_limits {
    size_t max_unexp;
    size_t max_exp;
};

/* An IPv4 or IPv6 address, network order. */
struct na_tcp_ip {
    sa_family_t family; /* AF_INET or AF_INET6 */
    union {
        struct in_addr v4;
        struct in6_addr v6;
    } u;
};

/* A peer, or ourselves: one object per (IP address, port), shared by
 * references; comparing two addresses is comparing pointers. */
struct na_addr {
    struct na_plugin_addr base; /* must stay first: references, list */
    struct na_tcp_class *cls;
    struct na_tcp_conn *conn; /* used to send; under the class lock */
    struct na_tcp_ip ip;
    uint16_t port; /* host order */
    bool self;
    bool failed; /* its last connection ended: the peer is gone */
};

_Static_assert(offsetof(struct na_addr, base) == 0,
               "na_plugin_addr_* find the head at the start of the address");

struct na_op_id;

/* A frame waiting to be written: header bytes, then the payload in up to
 * NA_TCP_SEG_MAX pieces (a message, or RMA data straight from the
 * segments of its region). */
struct na_tcp_tx {
    STAILQ_ENTRY(na_tcp_tx) entry;
    struct na_op_id *op; /* the op whose frame this is, or NULL */
    bool msg;            /* op is a send: it completes once written */
    uint8_t hdr[NA_TCP_HDR_SIZE];
    struct iovec iov[1 + NA_TCP_SEG_MAX]; /* the header, then the payload */
    int iovcnt;
    size_t left; /* bytes not yet written */
    size_t done; /* bytes written */
    bool queued; /* in a connection's txq */
    bool heap;   /* freed once written (frames of no op: hello, answers) */
};
STAILQ_HEAD(na_tcp_tx_queue, na_tcp_tx);

/* A position in a local region: its handle and the segment. */
struct na_tcp_cursor {
    const struct na_mem_handle *h;
    uint32_t seg;
};

/* Where the payload of the frame being read goes. */
enum na_tcp_rx_state {
    NA_TCP_RX_HDR,     /* between frames                           */
    NA_TCP_RX_DIRECT,  /* RMA data straight into rx_dst             */
    NA_TCP_RX_DISCARD, /* payload nobody wants: skipped             */
};

/* A connection to a peer (possibly another class of this process). */
struct na_tcp_conn {
    struct na_tcp_class *cls;
    struct na_addr *addr; /* holds a reference; NULL until the hello */
    int sock;
    bool connecting;  /* non-blocking connect not finished          */
    bool dead;        /* end of file or error: no more traffic       */
    bool want_out;    /* EPOLLOUT is armed                           */
    bool wrote_early; /* a frame went out at once since the last pass:
                         the next ones wait for the pass */
    struct na_tcp_ip peer_ip;
    struct na_tcp_tx_queue txq;    /* frames not yet fully written    */
    struct na_op_list rma;         /* our RMA waiting for the answer  */
    uint64_t rma_seq;              /* the last token given            */
    uint8_t *rx;                   /* read buffer, NA_TCP_RX_SIZE      */
    size_t rx_start, rx_end;       /* unparsed bytes: [start, end)    */
    enum na_tcp_rx_state rx_state; /* for the frame being read        */
    uint8_t *rx_dst;               /* NA_TCP_RX_DIRECT: next byte     */
    uint64_t rx_left;              /* payload bytes still to come     */
    uint64_t rx_seg_left;          /* of them, in rx_dst's segment    */
    struct na_tcp_cursor rx_cur;   /* rx_dst's region and segment     */
    struct na_op_id *rx_op;        /* the op rx_dst belongs to         */
    struct na_tcp_hdr rx_hdr;      /* the frame being read            */
    uint8_t rx_status;             /* a put's verdict, sent when read */
    bool hello_seen;               /* accepted side: the hello arrived */
    bool accepted;                 /* the peer connected to us        */
    LIST_ENTRY(na_tcp_conn) entry;
};

/* A region: local (registered here) or described by a peer. A local
 * region is one segment (base, len) or, made by
 * NA_Mem_handle_create_segments, `nseg` segments whose lengths add up to
 * len; a peer sees only its key and total length (one wire form). */
struct na_mem_handle {
    uint8_t *base;           /* local handles only: the first segment */
    uint64_t len;            /* all segments */
    uint32_t flags;          /* NA_MEM_READ_ONLY / WRITE_ONLY / READWRITE */
    uint64_t key;            /* 0: not registered */
    bool remote;             /* deserialized from a peer's bytes */
    uint32_t nseg;           /* local: 1, or the entries of segs */
    struct na_segment *segs; /* nseg > 1 only */
};

/* An operation id: the core's base first (with the link of the one list
 * a waiting op is on: a context's posted receives or a connection's rma),
 * then ours, under the class lock while posted. A send that waits is on no
 * list: its frame sits in its connection's txq (tx.queued). */
struct na_op_id {
    struct na_op_base base; /* must stay first */
    na_context_t *context;
    na_cb_type_t type;
    struct na_tcp_conn *conn; /* a waiting send's or RMA's connection */
    struct na_addr *addr;     /* reference held while posted */
    struct na_tcp_tx tx;      /* the frame of a send or RMA request */
    union {
        struct {
            void *buf;
            size_t size;
            na_tag_t tag;
            uint8_t peer_id;
        } msg;
        struct {
            struct na_mem_handle *lh; /* local region and offset in it */
            uint64_t loff;
            size_t size;
            uint64_t token;
            bool started; /* data began to move: cancel cannot undo it */
        } rma;
    } u;
};

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* A context: the shared part first (the class's table holds it), then
 * the posted receives, under the class lock. */
struct na_tcp_context {
    struct na_plugin_context base; /* must stay first */
    struct na_tcp_class *cls;
};

/* A region's key: its slot in the class's table and that slot's
 * generation. */
#define NA_TCP_KEY(slot, gen) (((uint64_t) (gen) << 32) | (uint64_t) (slot))

/* One registered region of the class, found by its key's slot. */
struct na_tcp_region {
    struct na_mem_handle *h; /* NULL: free slot */
    uint32_t gen;
};

LIST_HEAD(na_tcp_conn_list, na_tcp_conn);

struct na_tcp_class {
    /* Immutable after initialize. */
    struct na_tcp_limits limits;
    struct na_tcp_ip bind_ip; /* the wildcard or the one asked for */
    size_t rx_size;           /* of each connection's read buffer */
    int listen_sock;
    uint16_t listen_port;
    /* The wait fd (epfd: sockets and the eventfd), the sleepers, the
     * completion count and the spin window. */
    struct na_plugin_wait wait;
    struct na_addr *self;

    pthread_mutex_t lock; /* guards everything below */
    struct na_plugin_addr_list addrs;
    struct na_tcp_conn_list conns;
    unsigned int conn_count;
    unsigned int accepted;                   /* connections accepted, ever */
    struct na_plugin_context *contexts[256]; /* struct na_tcp_context */
    struct na_tcp_region *regions;           /* slot table, grows */
    uint32_t region_count, region_cap;
    uint32_t region_gen;
    unsigned int poll_count;
    atomic_bool fd_exported; /* NA_Poll_get_fd was called */
};

static inline struct na_tcp_class *
na_tcp_class(const na_class_t *na_class)
{
    return (struct na_tcp_class *) na_class->plugin_class;
}

/* The context of id `id`, or NULL (lock held). */
static inline struct na_tcp_context *
na_tcp_ctx(const struct na_tcp_class *cls, uint8_t id)
{
    return (struct na_tcp_context *) (void *) cls->contexts[id];
}

/* str past any TCP spelling's "<scheme>://" prefix. */
const char *na_tcp_strip_scheme(const char *str);

/* na_tcp_wire.c: pure functions over untrusted bytes. */
void na_tcp_hdr_encode(uint8_t *out, const struct na_tcp_hdr *h);
na_return_t na_tcp_hdr_decode(const uint8_t *in, size_t size,
                              const struct na_tcp_limits *lim,
                              struct na_tcp_hdr *h);
void na_tcp_hello_encode(uint8_t *out, uint16_t port);
na_return_t na_tcp_hello_decode(const uint8_t *in, size_t size, uint16_t *port);
na_return_t na_tcp_addr_string_parse(const char *str, struct na_tcp_ip *ip,
                                     uint16_t *port);
/* "tcp://a.b.c.d:port" or "tcp://[v6]:port" into buf (at least
 * NA_TCP_ADDR_STR_MAX bytes); its length. */
size_t na_tcp_addr_print(const struct na_tcp_ip *ip, uint16_t port, char *buf,
                         size_t size);
/* Serialized size of an address of ip's family. */
size_t na_tcp_addr_size(const struct na_tcp_ip *ip);
void na_tcp_addr_encode(uint8_t *out, const struct na_tcp_ip *ip,
                        uint16_t port);
na_return_t na_tcp_addr_decode(const uint8_t *in, size_t size,
                               struct na_tcp_ip *ip, uint16_t *port);
bool na_tcp_ip_eq(const struct na_tcp_ip *a, const struct na_tcp_ip *b);
bool na_tcp_ip_is_any(const struct na_tcp_ip *ip);
bool na_tcp_ip_is_loopback(const struct na_tcp_ip *ip);
/* The socket address of (ip, port) and its length. */
socklen_t na_tcp_ip_sockaddr(const struct na_tcp_ip *ip, uint16_t port,
                             struct sockaddr_storage *ss);
/* The IP of a socket address of either family; false for another. */
bool na_tcp_ip_from_sockaddr(const struct sockaddr_storage *ss,
                             struct na_tcp_ip *ip);
void na_tcp_mem_encode(uint8_t *out, uint32_t flags, uint64_t key,
                       uint64_t len);
na_return_t na_tcp_mem_decode(const uint8_t *in, size_t size, uint32_t *flags,
                              uint64_t *key, uint64_t *len);

/* na_tcp_addr.c */
struct na_addr *na_tcp_addr_intern(struct na_tcp_class *cls,
                                   const struct na_tcp_ip *ip, uint16_t port);

/* na_tcp_conn.c (class lock held unless said otherwise) */
na_return_t na_tcp_listen(struct na_tcp_class *cls, uint16_t port);
struct na_tcp_conn *na_tcp_conn_get(struct na_tcp_class *cls,
                                    struct na_addr *addr);
void na_tcp_accept_all(struct na_tcp_class *cls);
void na_tcp_conn_readable(struct na_tcp_conn *conn);
void na_tcp_conn_flush(struct na_tcp_conn *conn);
void na_tcp_conn_send(struct na_tcp_conn *conn, struct na_tcp_tx *tx);
void na_tcp_tx_init(struct na_tcp_tx *tx, const struct na_tcp_hdr *h,
                    const void *payload, size_t len);
/* The same with the payload in `n` pieces (at most NA_TCP_SEG_MAX). */
void na_tcp_tx_init_iov(struct na_tcp_tx *tx, const struct na_tcp_hdr *h,
                        const struct iovec *iov, int n);
/* Send a frame of no op (an RMA answer): false if out of memory. */
bool na_tcp_conn_send_frame(struct na_tcp_conn *conn,
                            const struct na_tcp_hdr *h, const struct iovec *iov,
                            int n);
/* Fail what waits on a dead connection and free it. */
void na_tcp_conn_reap(struct na_tcp_conn *conn);
void na_tcp_conn_destroy(struct na_tcp_conn *conn);

/* na_tcp_msg.c */
void na_tcp_deliver(struct na_tcp_class *cls, struct na_addr *source,
                    const struct na_tcp_hdr *h, const void *data);

/* na_tcp_mem.c */
void na_tcp_regions_destroy(struct na_tcp_class *cls);
/* Segment i of a local region, and its length. */
uint8_t *na_tcp_seg(const struct na_mem_handle *h, uint32_t i, uint64_t *len);
/* The pieces of [off, off + len) of a local region (inside it): how many
 * (at most NA_TCP_SEG_MAX). */
int na_tcp_mem_iov(const struct na_mem_handle *h, uint64_t off, uint64_t len,
                   struct iovec *iov);

/* na_tcp_rma.c */
na_return_t na_tcp_rma(na_class_t *na_class, const struct na_op_desc *desc,
                       na_op_id_t *op_id);
/* A frame of an RMA type arrived on `conn` (header only; the payload, if
 * any, is still to be read): set conn's rx state for it. */
void na_tcp_rma_frame(struct na_tcp_conn *conn, const struct na_tcp_hdr *h);
/* The payload read for NA_TCP_RX_DIRECT is complete. */
void na_tcp_rma_data_done(struct na_tcp_conn *conn);
/* rx_dst's segment is full and rx_left is not 0: move to the next one. */
void na_tcp_rx_next_seg(struct na_tcp_conn *conn);
void na_tcp_rma_conn_failed(struct na_tcp_conn *conn);

/* na_tcp_progress.c */
void na_tcp_op_init(struct na_op_id *op, const struct na_op_desc *desc,
                    struct na_addr *addr);
bool na_tcp_op_wait(struct na_op_list *list, struct na_op_id *op);
void na_tcp_op_complete(struct na_op_id *op, na_return_t ret);
void na_tcp_wake_local(struct na_tcp_class *cls);

/* The tables of ops na_tcp_class_ops points to, each defined in the file
 * of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_context_ops na_tcp_context_ops;
extern const struct na_addr_ops na_tcp_addr_ops;
extern const struct na_msg_ops na_tcp_msg_ops;
extern const struct na_mem_ops na_tcp_mem_ops;

#endif /* NA_TCP_INTERNAL_H */
