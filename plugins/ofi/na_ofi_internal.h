/*
 * Private state of the libfabric (ofi) NA plugin, shared by its files:
 *
 *   na_ofi.c           ops table, class and context life cycle, op ids
 *   na_ofi_addr.c      address strings, the address cache, serialization
 *   na_ofi_msg.c       unexpected and expected messages, receive buffers
 *   na_ofi_rma.c       memory handles, registration, put and get
 *   na_ofi_progress.c  completion queue, waiting, cancel, error mapping
 *
 * One class owns one FI_EP_RDM endpoint with one completion queue; every
 * NA context of the class shares them, and each operation remembers the
 * context its completion belongs to. Nothing here is exported: the only
 * public symbol of the plugin is na_ofi_class_ops.
 *
 * Lock order with the core: the plugin's locks (addr_lock, rx_lock,
 * retry_lock) come before a context's core lock, which na_op_finish()
 * takes; the core never holds a lock of its own while it calls into the
 * plugin, so the order cannot invert. The plugin reads a
 * context's completion count only through NA_Context_get_completion_count().
 */
#ifndef NA_OFI_INTERNAL_H
#define NA_OFI_INTERNAL_H

#include "na/na_plugin.h"
#include "na/na_plugin_util.h"

#include <stddef.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/queue.h>

/* Before libfabric's headers: libfabric is opened on first use. */
#include "na_ofi_dl.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define NA_OFI_CLASS_NAME "ofi"

/* The libfabric API version we program against (Debian 12 ships 1.17). */
#define NA_OFI_FI_VERSION FI_VERSION(1, 11)

/*
 * How long a post the provider keeps refusing with FI_EAGAIN is retried.
 * tcp;ofi_rxm answers FI_EAGAIN for as long as it cannot connect to the
 * peer, without ever reporting the refused connection, so this bound is
 * what turns a dead peer into NA_HOSTUNREACH instead of a hang.
 */
#define NA_OFI_RETRY_TIMEOUT_NS (5ull * 1000000000ull)

/*
 * While a post is refused with FI_EAGAIN, the plugin asks the kernel
 * whether the peer still listens (a TCP connection attempt to its
 * address), first after this long and then at most this often; a refused or
 * unreachable port fails the op with NA_HOSTUNREACH at once instead of after
 * the retry timeout. NA_OFI_PEER_CHECK_WAIT_MS bounds how long one check may
 * wait for the answer (a refusal on loopback or a LAN is back well within it).
 */
#define NA_OFI_PEER_CHECK_NS (50ull * 1000000ull)
#define NA_OFI_PEER_CHECK_WAIT_MS 2

/* Payload limits when na_init_info leaves them at zero. */
#define NA_OFI_DEFAULT_MSG_SIZE 4096

/*
 * Every unexpected message starts with a small header naming its sender,
 * because the providers we use cannot be relied on to report a source
 * address for a peer that is not yet in our address vector. The header is
 * not counted against the caller's payload limit. Buffers from
 * msg_buf_alloc reserve NA_OFI_HDR_RESERVE bytes in front of the pointer
 * they return, so a send from such a buffer needs no copy and no iovec.
 *
 * Header layout (16 bytes, integers in network byte order):
 *   0..3   NA tag     4  NA_OFI_HDR_VERSION     5..11  sender's wire address
 *   12     id of the destination context        13..15 zero
 */
#define NA_OFI_HDR_VERSION 1
#define NA_OFI_HDR_SIZE 16
#define NA_OFI_HDR_RESERVE 64

/*
 * Addresses on the wire (serialized and in headers) use a normalized form,
 * not a struct sockaddr, so peers of any byte order agree on it:
 * 1 byte family (NA_OFI_ADDR_IPV4), 4 bytes address, 2 bytes port.
 */
#define NA_OFI_ADDR_IPV4 4
#define NA_OFI_WIRE_ADDR_SIZE 7
/*
 * libfabric's shm provider names endpoints with FI_ADDR_STR strings,
 * "fi_shm://<pid>:<domain>:<endpoint>" for the names it picks itself (the
 * only ones ofi+shm uses). They travel in the same 7 bytes: family
 * NA_OFI_ADDR_SHM, the pid, then 1 + domain * 256 + endpoint; in memory
 * they are kept in the same struct sockaddr_in with sin_family AF_UNIX,
 * so the cache, the wire form and the header need no second layout.
 */
#define NA_OFI_ADDR_SHM 0x53 /* 'S' */
/* How long an idle ofi+shm class naps between looks at its CQ: the
 * first nap of a wait, and the longest (each empty nap doubles). */
#define NA_OFI_SHM_NAP_NS 100000
#define NA_OFI_SHM_NAP_MAX_NS 1000000

/*
 * Expected messages match on (source, source context id, tag). libfabric
 * matches the source address; both context ids ride in the upper bits of
 * its 64-bit tag, so a reply reaches only the receive posted on the right
 * context for the right peer context.
 */
static inline uint64_t
na_ofi_exp_tag(uint8_t dest_ctx_id, uint8_t src_ctx_id, na_tag_t tag)
{
    return ((uint64_t) dest_ctx_id << 40) | ((uint64_t) src_ctx_id << 32) | tag;
}

/*
 * The first member of everything we hand to libfabric as an operation
 * context, so a completion entry can tell what it belongs to.
 */
enum na_ofi_ctx_kind {
    NA_OFI_CTX_OP,    /* a struct na_op_id (zero: a new op id is one) */
    NA_OFI_CTX_RX_BUF /* a struct na_ofi_rx_buf (unexpected rx) */
};

struct na_ofi_ctx_hdr {
    struct fi_context2 fi_ctx; /* scratch space the provider may use */
    enum na_ofi_ctx_kind kind;
};

/* A peer, or ourselves. Addresses are interned: one object per peer. */
struct na_addr {
    struct na_addr *hash_next; /* guarded by the class's addr_lock */
    atomic_uint refcount;      /* users' references; the cache's is implicit */
    fi_addr_t fi_addr;         /* FI_ADDR_NOTAVAIL for self before insert */
    uint32_t hash;
    struct sockaddr_in sin; /* canonical: sin_zero cleared */
};

/* A region: local (registered here) or described by a peer. */
struct na_mem_handle {
    uint64_t base;     /* virtual address of the first byte  */
    uint64_t len;      /* bytes                              */
    uint64_t key;      /* remote access key (0 before register) */
    uint32_t flags;    /* NA_MEM_READ_ONLY / WRITE_ONLY / READWRITE */
    bool remote;       /* deserialized from a peer's bytes   */
    struct fid_mr *mr; /* NULL unless registered         */
    uint32_t shm_slot; /* ofi+shm: its key table entry + 1, or 0 */
};

/* Where a posted op is; its life (idle, posted, completed) is the core's
 * (struct na_op_base). Transitions are atomic. */
enum na_ofi_op_status {
    NA_OFI_OP_DONE,   /* not posted, or completed (zero: new op ids) */
    NA_OFI_OP_POSTED, /* owned by libfabric                      */
    NA_OFI_OP_QUEUED, /* on one of our queues (retry, unexp)     */
};

struct na_ofi_class;
struct na_op_id;
typedef int (*na_ofi_post_fn)(struct na_op_id *op);

struct na_op_id {
    struct na_op_base base;    /* the core's part: must stay first */
    struct na_ofi_ctx_hdr hdr; /* what libfabric's context points to */
    na_context_t *context;
    atomic_int status; /* enum na_ofi_op_status */
    na_cb_type_t type;
    na_ofi_post_fn post;     /* reposts after FI_EAGAIN */
    bool injected;           /* post completed inline (fi_inject) */
    uint64_t retry_deadline; /* when a refused post gives up (ns)   */
    uint64_t peer_check_ns;  /* next check that the peer listens    */
    struct na_addr *addr;    /* reference held while posted */
    /* An op not with libfabric waits on one na_op_list (the base's link):
     * an unexpected receive on its context's unexp_ops (rx_lock), any
     * other op on the class's retry_ops (retry_lock). */
    union {
        struct {
            void *buf;
            size_t size;
            void *plugin_data;
            na_tag_t tag;
            uint64_t fi_tag; /* expected messages: na_ofi_exp_tag() */
            uint8_t peer_id; /* the peer's context id */
            uint8_t hdr[NA_OFI_HDR_SIZE]; /* for iovec sends */
        } msg;
        struct {
            void *local;     /* first local byte       */
            uint64_t remote; /* remote address or offset */
            uint64_t key;
            size_t size;
        } rma;
    } u;
};

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* The op whose libfabric context is hdr. */
static inline struct na_op_id *
na_ofi_op_of(struct na_ofi_ctx_hdr *hdr)
{
    return (struct na_op_id *) (void *) ((char *) hdr -
                                         offsetof(struct na_op_id, hdr));
}

/* An unexpected message that arrived before any receive was posted. */
struct na_ofi_backlog_msg {
    STAILQ_ENTRY(na_ofi_backlog_msg) entry;
    struct na_addr *source; /* holds a reference */
    na_tag_t tag;
    size_t len;
    uint8_t data[];
};

STAILQ_HEAD(na_ofi_backlog, na_ofi_backlog_msg);

/* A receive buffer for unexpected messages, posted to the endpoint. */
struct na_ofi_rx_buf {
    struct na_ofi_ctx_hdr hdr; /* must stay first */
    struct na_ofi_class *cls;
    void *buf;
    size_t size;
    atomic_bool needs_post; /* a repost failed: poll tries again */
};

/*
 * Per-context state. Unexpected messages are addressed to a context id,
 * so each context has its own posted receives and backlog, guarded by the
 * class's rx_lock like the class's list of contexts.
 */
struct na_ofi_context {
    struct na_ofi_class *cls;
    na_context_t *context;
    uint8_t id;
    atomic_uint pending; /* operations posted and not yet completed */
    struct na_op_list unexp_ops;
    struct na_ofi_backlog backlog;
    TAILQ_ENTRY(na_ofi_context) entry;
};

TAILQ_HEAD(na_ofi_context_list, na_ofi_context);

#define NA_OFI_ADDR_HASH_SIZE 256

/*
 * Peers stay cached (and in the address vector) after their last reference
 * goes, because a peer we talked to is likely to come back; past this many
 * entries, adding a peer drops an unreferenced one, so names from hostile
 * bytes cannot grow the cache without bound.
 */
#define NA_OFI_ADDR_CACHE_MAX 1024

/* How poll_wait sleeps once spinning found nothing. */
enum na_ofi_wait_mode {
    NA_OFI_WAIT_FD,    /* poll(2) on the CQ's fd after fi_trywait      */
    NA_OFI_WAIT_SREAD, /* fi_cq_sread with a timeout                    */
    NA_OFI_WAIT_NONE   /* the provider offers no wait object: yield    */
};

struct na_ofi_class {
    /* Immutable after initialize. */
    char protocol[16];     /* "tcp", "sockets" or "shm", as in addresses */
    bool shm;              /* FI_ADDR_STR names of the shm provider    */
    const char *prov_name; /* "tcp;ofi_rxm" or "sockets"               */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct na_addr *self;
    size_t max_unexp_size; /* payload bytes the user may send        */
    size_t max_exp_size;
    size_t inject_size; /* largest fi_inject the provider takes   */
    bool multi_recv;    /* unexpected rx uses FI_MULTI_RECV       */
    bool directed_recv; /* expected rx can name its source        */
    bool fi_source;     /* the CQ says who sent a message         */
    bool mr_virt_addr;  /* RMA addresses are virtual, not offsets */
    bool mr_prov_key;   /* the provider chooses MR keys           */
    bool no_block;      /* NA_NO_BLOCK: poll_wait busy-polls      */
    enum na_ofi_wait_mode wait_mode;
    int cq_fd;   /* FI_WAIT_FD descriptor, or -1           */
    int wake_fd; /* eventfd that interrupts poll_wait      */
    /* poll_get_fd's epoll set of cq_fd and wake_fd, made at its first
     * call (under retry_lock), or -1. */
    int poll_epfd;

    /* Unexpected receive buffers, posted for the class's lifetime. */
    struct na_ofi_rx_buf *rx_bufs;
    size_t rx_buf_count;
    size_t multi_recv_op_max; /* multi-receive buffers to post; 0: default */
    void *rx_mem;
    atomic_bool rx_repost; /* some rx buffer has needs_post set */
    uint8_t hdr_template[NA_OFI_HDR_SIZE]; /* our header, tag left 0 */
    /* Unexpected messages dropped because their header claimed another
     * sender than the one the provider reported (FI_SOURCE). */
    atomic_uint_fast64_t forged_dropped;

    /* Address cache, guarded by addr_lock. */
    pthread_mutex_t addr_lock;
    struct na_addr *addr_hash[NA_OFI_ADDR_HASH_SIZE];
    size_t addr_count;
    /* Peers given to NA_Addr_set_remove(), out of the hash, linked by
     * hash_next; freed (and removed from the AV) at zero references. */
    struct na_addr *addr_removed;

    /* The class's contexts (and their unexpected queues), under rx_lock. */
    pthread_mutex_t rx_lock;
    struct na_ofi_context_list contexts;

    /* Operations refused with FI_EAGAIN, guarded by retry_lock. */
    pthread_mutex_t retry_lock;
    struct na_op_list retry_ops;
    atomic_uint retry_count; /* lets poll skip the lock when empty */

    /* Keys we choose when the provider does not (FI_MR_PROV_KEY off). */
    atomic_uint_fast64_t next_mr_key;

    /* ofi+shm: the keys of our registered regions, which peers check
     * before an RMA (na_ofi_shm_keys.c); NULL when it could not be made. */
    struct na_ofi_shm_keys *shm_keys;

    /* Waiting: threads asleep in poll_wait, and the adaptive spin. */
    atomic_uint sleepers;
    atomic_uint spin_ns;
};

static inline struct na_ofi_class *
na_ofi_class(const na_class_t *na_class)
{
    return (struct na_ofi_class *) na_class->plugin_class;
}

static inline struct na_ofi_class *
na_ofi_op_class(const struct na_op_id *op)
{
    return (struct na_ofi_class *) na_op_plugin_class(op);
}

/*
 * Everything below is shared between the plugin's files only; like all that
 * is not marked QS_EXPORT, it stays inside the library.
 */

/* na_ofi_addr.c */
na_return_t na_ofi_addr_parse_host(const char *host, struct sockaddr_in *sin,
                                   bool require_port);
na_return_t na_ofi_addr_intern(struct na_ofi_class *cls,
                               const struct sockaddr_in *sin,
                               struct na_addr **addr);
void na_ofi_addr_to_wire(const struct na_addr *addr, uint8_t *wire);
na_return_t na_ofi_addr_from_wire(const uint8_t *wire, struct sockaddr_in *sin);
void na_ofi_addr_ref(struct na_addr *addr);
void na_ofi_addr_unref(struct na_addr *addr);
/* True when the kernel says nobody listens at the peer's address any
 * more (connection refused, host or network unreachable). */
bool na_ofi_addr_refused(const struct na_addr *addr);
/* "fi_shm://<pid>:<d>:<e>" (or without the scheme) to its packed form. */
na_return_t na_ofi_shm_parse(const char *name, struct sockaddr_in *sin);
/* The ofi+shm endpoints open in this process: libfabric 1.17's shm
 * provider crashes on a send to an endpoint of its own process that was
 * closed, so such sends are failed before they reach it. */
void na_ofi_shm_set_live(const struct na_addr *self, bool live);
bool na_ofi_shm_closed_here(const struct na_addr *addr);
void na_ofi_addr_cache_destroy(struct na_ofi_class *cls);

/* Before this process's first shm endpoint: remove the provider's regions
 * named after our pid, left by a killed process that had it before us
 * (na_ofi_shm_keys.c). */
void na_ofi_shm_own_stale_sweep(void);
/* na_ofi_shm_keys.c: libfabric 1.17's shm provider never completes an RMA
 * with a key its target does not have, so ofi+shm classes publish their
 * keys and origins check them before posting. */
na_return_t na_ofi_shm_keys_create(struct na_ofi_class *cls);
void na_ofi_shm_keys_destroy(struct na_ofi_class *cls);
void na_ofi_shm_keys_add(struct na_ofi_class *cls, struct na_mem_handle *mh);
void na_ofi_shm_keys_remove(struct na_ofi_class *cls, struct na_mem_handle *mh);
void na_ofi_shm_keys_forget(const struct na_addr *addr);
/* The check of one RMA against a peer's table, `size` bytes that the peer
 * may have written anything into (a pure function, fuzzed by
 * fuzz/fuzz_ofi_shm_keys.c; reads nothing past `size`): NA_SUCCESS when
 * the entry of `key` allows `len` bytes at `remote` with access `need`
 * (`remote` a virtual address when virt_addr, else an offset), or when
 * the table says some region is not listed; NA_ACCESS (no such key or
 * range); NA_PERMISSION; NA_PROTOCOL_ERROR with *why saying what is
 * impossible in the table. A table of na_ofi_shm_keys_size() bytes,
 * 8-byte aligned, is what a class publishes. */
na_return_t na_ofi_shm_keys_lookup(const void *table, size_t size, uint64_t key,
                                   uint64_t remote, uint64_t len, uint32_t need,
                                   bool virt_addr, const char **why);
size_t na_ofi_shm_keys_size(void);
/* Where a key's entry is looked for: slots s .. s + PROBE - 1 (mod
 * SLOTS) from s = na_ofi_shm_key_slot(key). A table is a 16-byte header
 * (u32 magic "QSKY", u32 unchecked, u32 closed, u32 pad), then SLOTS
 * entries of five u64: gen (0: free), key, base, len, flags. */
#define NA_OFI_SHM_KEYS_SLOTS 4096u
#define NA_OFI_SHM_KEYS_PROBE 32u
uint32_t na_ofi_shm_key_slot(uint64_t key);
/* NA_SUCCESS when the target's table allows `size` bytes at `remote`
 * (a virtual address or an offset, as the class's RMA uses) under `key`
 * with access `need`, or when there is no table to check; else
 * NA_ACCESS (no such key or range), NA_PERMISSION, or NA_PROTOCOL_ERROR
 * (the table is corrupt; logged once). */
na_return_t na_ofi_shm_keys_check(const struct na_ofi_class *cls,
                                  const struct na_addr *target, uint64_t key,
                                  uint64_t remote, size_t size, uint32_t need);

/* na_ofi_msg.c */
na_return_t na_ofi_rx_bufs_post(struct na_ofi_class *cls);
void na_ofi_rx_bufs_free(struct na_ofi_class *cls);
na_context_t *na_ofi_rx_buf_complete(struct na_ofi_rx_buf *rx,
                                     const struct fi_cq_tagged_entry *e,
                                     fi_addr_t src);
void na_ofi_rx_buf_error(struct na_ofi_rx_buf *rx,
                         const struct fi_cq_err_entry *err);
void na_ofi_rx_bufs_repost(struct na_ofi_class *cls);
void na_ofi_backlog_destroy(struct na_ofi_context *pc);
bool na_ofi_unexp_cancel(struct na_ofi_class *cls, struct na_op_id *op);

/* na_ofi_rma.c */

/* na_ofi_progress.c */
void na_ofi_op_init(struct na_op_id *op, const struct na_op_desc *desc,
                    struct na_addr *addr);
void na_ofi_op_abort(struct na_op_id *op);
na_return_t na_ofi_op_submit(struct na_op_id *op, na_ofi_post_fn post);
void na_ofi_op_complete(struct na_op_id *op, na_return_t ret);
void na_ofi_wake(struct na_ofi_class *cls);
na_return_t na_ofi_error_to_na(int fi_err);

/* The tables of ops na_ofi_class_ops points to, each defined in the file
 * of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_context_ops na_ofi_context_ops;
extern const struct na_addr_ops na_ofi_addr_ops;
extern const struct na_msg_ops na_ofi_msg_ops;
extern const struct na_mem_ops na_ofi_mem_ops;

#endif /* NA_OFI_INTERNAL_H */
