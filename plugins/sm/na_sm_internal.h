/*
 * Private state of the shared-memory NA plugin ("na+sm"), shared by its
 * files:
 *
 *   na_sm.c           ops table, class and context life cycle, op ids
 *   na_sm_addr.c      names, the address table, serialization
 *   na_sm_conn.c      connections: UNIX sockets, handshake, peer death
 *   na_sm_msg.c       the shared rings, messages, matching, backlogs
 *   na_sm_rma.c       memory handles, the region table, put and get
 *   na_sm_rma_msg.c   put and get as ring records, when the kernel refuses
 *                     process_vm_readv/writev (or QS_SM_RMA=msg)
 *   na_sm_progress.c  polling, waiting, cancel, completion
 *
 * Every class listens on an abstract UNIX seqpacket socket named after its
 * address. A peer connects on first use and passes, with SCM_RIGHTS, a
 * sealed memfd holding two single-producer single-consumer byte rings (one
 * per direction) and the memfd of its region table; the listener answers
 * with its own region table. Messages travel through the rings, and the
 * socket carries only the handshake and wake-up bytes for a consumer that
 * sleeps; its end of file is how a peer's death is seen. RMA copies with
 * process_vm_readv/writev after checking the target's region table.
 *
 * One mutex per class guards everything the plugin shares; RMA copies run
 * outside it. Nothing here is exported but na_sm_class_ops.
 */
#ifndef NA_SM_INTERNAL_H
#define NA_SM_INTERNAL_H

#include "na/na_plugin.h"
#include "na/na_plugin_util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#define NA_SM_CLASS_NAME "na"

/* Fences. ThreadSanitizer does not model atomic_thread_fence (gcc refuses
 * it under -fsanitize=thread with -Werror=tsan), so a TSan build gets
 * forms it understands: a sequentially consistent read-modify-write of one
 * shared word for the full fence (every such RMW is ordered in the single
 * total order, which is what the store-then-check-the-sleeper handshake
 * needs), and a compiler barrier for the acquire fence of the region-table
 * read (its loads are already ordered on the x86 machines TSan runs on). */
#if defined(__SANITIZE_THREAD__)
#define NA_SM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NA_SM_TSAN 1
#endif
#endif
#ifdef NA_SM_TSAN
/* One word for the whole library, never exported from it. */
extern atomic_uint na_sm_fence_word __attribute__((visibility("hidden")));
#define NA_SM_FENCE_SEQ_CST()                                                  \
    ((void) atomic_fetch_add_explicit(&na_sm_fence_word, 0,                    \
                                      memory_order_seq_cst))
#define NA_SM_FENCE_ACQUIRE() atomic_signal_fence(memory_order_acquire)
#else
#define NA_SM_FENCE_SEQ_CST() atomic_thread_fence(memory_order_seq_cst)
#define NA_SM_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#endif

/* Names: [A-Za-z0-9._:-], 1..NA_SM_NAME_MAX bytes. */
#define NA_SM_NAME_MAX 64

/* Bytes of each ring (one per direction of a connection). */
#define NA_SM_RING_SIZE (1u << 20)
/* While the consumer keeps up, a producer stays in the first this many
 * bytes of the ring (na_sm_ring_push). */
#define NA_SM_RING_WINDOW (64u << 10)
/* Lines after the next record's mark that a consumer finding no record
 * prefetches: a request with up to about 250 bytes of input (24 bytes of
 * record header, 40 of HG's) then costs one wait for the other core, not
 * two (docs/plugin-sm.md). Only while the last record read fitted in
 * them (na_sm_conn.rx_spin_lines): a producer writing a larger record
 * would have its first lines taken from it again and again. */
#define NA_SM_SPIN_PREFETCH 4u
/* Most lines a producer takes for writing, after a push, where its next
 * record will go (na_sm_ring_push; docs/plugin-sm.md). */
#define NA_SM_PUSH_AHEAD_MAX 64u

/* Payload limits: the default, and the largest a class may ask for. */
#define NA_SM_DEFAULT_MSG_SIZE 4096
#define NA_SM_MAX_MSG_SIZE (NA_SM_RING_SIZE / 8)

/* Regions a class may have registered at once. */
#define NA_SM_REG_MAX 16384u

/* Serialized sizes. */
#define NA_SM_MEM_HANDLE_SIZE 40
#define NA_SM_MEM_HANDLE_MAGIC 0x51534d4du /* "QSMM" */
#define NA_SM_ADDR_WIRE_MAGIC 0x4d53u      /* "SM" */
/* The hello a connecting peer sends starts with these two words. */
#define NA_SM_HELLO_MAGIC 0x51534d48u /* "QSMH" */
/* 2: marked, line-aligned records; 3: the ASSIST record and block. */
#define NA_SM_PROTO_VERSION 3u

/*
 * A ring record: this header, then `len` payload bytes, the whole padded
 * to a cache line, so a record starts a line and a small message travels
 * in the line that announces it. A record never wraps: a producer that
 * reaches the end writes a WRAP record and starts over.
 *
 * The producer writes `mark` last (release): the bitwise complement of
 * the record's ring position. The consumer looks for that mark at its
 * position instead of reading the producer's tail, so a message costs the
 * consumer one cache line from the producer, not two (the tail's line,
 * then the record's). Stale bytes from an earlier lap carry another
 * position, and zeroed memory never matches.
 */
enum na_sm_rec_kind {
    NA_SM_REC_UNEXP = 1,
    NA_SM_REC_EXP = 2,
    NA_SM_REC_WRAP = 3,
    NA_SM_REC_RMA = 4,   /* payload: struct na_sm_rma_wire, then data */
    NA_SM_REC_ASSIST = 5 /* payload: struct na_sm_assist_wire */
};

/* Test hooks of na_sm_assist.c (QS_SM_ASSIST_TEST). */
enum na_sm_assist_test {
    NA_SM_ASSIST_TEST_NONE,
    NA_SM_ASSIST_TEST_HOLD,
    NA_SM_ASSIST_TEST_FAIL,
    NA_SM_ASSIST_TEST_DIE
};

/* How RMA copies: QS_SM_RMA=auto (the default), vm or msg. */
enum na_sm_rma_mode {
    NA_SM_RMA_AUTO, /* process_vm_*, and ring records where refused */
    NA_SM_RMA_VM,   /* process_vm_* only: refused is NA_PERMISSION */
    NA_SM_RMA_MSG   /* ring records only */
};

struct na_sm_rec {
    uint32_t len;
    uint32_t tag;
    uint8_t kind;
    uint8_t src_id; /* sender's context id */
    uint8_t dst_id; /* receiver's context id */
    uint8_t pad[5];
    uint64_t mark; /* ~position, written last */
};

#define NA_SM_REC_ALIGN 64u

/* An RMA of the ring's producer that its consumer may help copy
 * (na_sm_assist.c): the claim word and the chunks the consumer copied or
 * failed to copy, one bit each. */
struct na_sm_assist {
    _Atomic uint64_t claim; /* sequence << 32 | next chunk */
    _Atomic uint64_t done;
    _Atomic uint64_t failed;
    uint8_t pad[40];
};

/* An RMA of at least this many bytes is offered to the peer to help
 * with, in chunks of at least NA_SM_ASSIST_CHUNK bytes, at most
 * NA_SM_ASSIST_CHUNKS_MAX of them. */
#define NA_SM_ASSIST_MIN (512u << 10)
#define NA_SM_ASSIST_CHUNK (256u << 10)
#define NA_SM_ASSIST_CHUNKS_MAX 64u

/* A ring in shared memory; positions count bytes and only grow. The
 * consumer publishes `head` lazily (at its next pass, or before it
 * sleeps): a store that has to take the line from the producer, and the
 * fence after it, are then off the path of the message just read. */

struct na_sm_ring {
    _Atomic uint64_t head; /* consumer */
    uint8_t pad0[56];
    _Atomic uint64_t tail; /* producer */
    uint8_t pad1[56];
    _Atomic uint32_t sleeping;   /* consumer asleep: producer must wake it */
    _Atomic uint32_t tx_blocked; /* producer waits for room: consumer wakes */
    uint8_t pad2[56];
    struct na_sm_assist assist; /* the producer's RMA the consumer helps */
    uint8_t data[NA_SM_RING_SIZE];
};

/* The shared memory of one connection: ring 0 carries connector ->
 * listener, ring 1 listener -> connector. */
struct na_sm_shared {
    struct na_sm_ring ring[2];
};

/*
 * One entry of a class's region table, mapped read-only by its peers. An
 * entry is valid while gen is non-zero; the owner clears gen before it
 * changes the other fields, and readers check gen before and after.
 */
struct na_sm_reg_entry {
    _Atomic uint64_t gen;
    uint64_t base;
    uint64_t len;
    uint64_t flags;
};

/* A peer, or ourselves: one object per name, shared by references. */
struct na_addr {
    struct na_plugin_addr base; /* must stay first: references, list */
    struct na_sm_class *cls;
    struct na_sm_conn *conn; /* used to send; under the class lock */
    bool self;
    bool failed; /* its last connection ended: the peer is gone */
    char name[NA_SM_NAME_MAX + 1];
};

_Static_assert(offsetof(struct na_addr, base) == 0,
               "na_plugin_addr_* find the head at the start of the address");

struct na_sm_rma_out;
TAILQ_HEAD(na_sm_rma_out_queue, na_sm_rma_out);

/* A connection to a peer (possibly ourselves, in another class). */
struct na_sm_conn {
    struct na_sm_class *cls;
    struct na_addr *addr; /* holds a reference */
    int sock;
    bool connector; /* we connected (we write ring 0) */
    bool ready;     /* the peer's region table is mapped */
    bool dead;      /* end of file seen: no more sends */
    pid_t pid;      /* the peer's process, from SO_PEERCRED */
    struct na_sm_shared *shm;
    struct na_sm_ring *tx, *rx;
    uint64_t rx_head;      /* consumed up to here (lock held) */
    uint64_t rx_published; /* the head the producer has been shown */
    /* Lines after the mark a consumer finding no record prefetches:
     * NA_SM_SPIN_PREFETCH while the last record read fitted in them, else
     * none (na_sm_ring_drain). */
    uint8_t rx_spin_lines;
    const struct na_sm_reg_entry *peer_regs; /* NA_SM_REG_MAX entries */
    struct na_op_list tx_wait;               /* sends waiting for ring room */
    struct na_op_list rma_wait;              /* RMA waiting for the handshake */
    bool rma_msg;        /* RMA through ring records (na_sm_rma_msg.c) */
    uint64_t rma_seq;    /* the last token given to one of our RMA */
    uint32_t assist_seq; /* the last sequence number of an ASSIST record */
    bool cma_ok;         /* the kernel has taken a process_vm_* call */
    struct na_op_list rma_pending;      /* our RMA waiting for the peer */
    struct na_sm_rma_out_queue rma_out; /* RMA records waiting for room */
    LIST_ENTRY(na_sm_conn) entry;
};

/* A region: local (registered here) or described by a peer. */
struct na_mem_handle {
    uint64_t base;
    uint64_t len;
    uint32_t flags; /* NA_MEM_READ_ONLY / WRITE_ONLY / READWRITE */
    uint32_t slot;  /* region table index, valid when gen != 0 */
    uint64_t gen;   /* 0: not registered */
    bool remote;    /* deserialized from a peer's bytes */
};

/* An operation id: the core's base (its state, completion entry and the
 * link of the one list it waits on: a context's posted receives or a
 * connection's tx_wait, rma_wait or rma_pending) first, then what shared
 * memory needs, under the class lock while posted. */
struct na_op_id {
    struct na_op_base base; /* must stay first */
    na_context_t *context;
    na_cb_type_t type;
    struct na_sm_conn *conn; /* while on one of its lists, or copying */
    struct na_addr *addr;    /* reference held while posted */
    union {
        struct {
            void *buf;
            size_t size;
            na_tag_t tag;
            uint8_t peer_id;
        } msg;
        struct {
            bool put;
            uint8_t *local;
            uint64_t remote; /* remote virtual address */
            size_t size;
            struct na_mem_handle rh;   /* copy of the remote handle */
            size_t done;               /* ring records: bytes received */
            uint64_t token;            /* ring records: names this op */
            struct na_sm_rma_out *out; /* ring records: put data to send */
        } rma;
    } u;
};

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* A context: the shared part first (the class's table holds it), then
 * the posted receives, under the class lock. */
struct na_sm_context {
    struct na_plugin_context base; /* must stay first */
    struct na_sm_class *cls;
};

LIST_HEAD(na_sm_conn_list, na_sm_conn);

struct na_sm_class {
    /* Immutable after initialize. */
    char name[NA_SM_NAME_MAX + 1];
    size_t max_unexp_size;
    size_t max_exp_size;
    int listen_sock;
    /* The wait fd (epfd: sockets and the eventfd), the sleepers, the
     * completion count and the spin window. */
    struct na_plugin_wait wait;
    int reg_fd; /* memfd of the region table */
    struct na_sm_reg_entry *regs;
    struct na_addr *self;

    pthread_mutex_t lock; /* guards everything below */
    struct na_plugin_addr_list addrs;
    struct na_sm_conn_list conns;
    struct na_plugin_context *contexts[256]; /* struct na_sm_context */
    uint32_t *reg_free;                      /* stack of free slots */
    uint32_t reg_free_count;
    uint64_t reg_gen;
    unsigned int poll_count;
    long sock_tick; /* coarse clock at the last look at the sockets */
    time_t sock_tick_sec;
    /* NA_Poll_get_fd was called: someone may sleep on the fd without
     * NA_Poll_wait, so the sleeping flags stay set (re-armed after each
     * progress) and every message to us makes the fd readable. */
    atomic_bool fd_exported;
    bool ptrace_warned;
    enum na_sm_rma_mode rma_mode; /* immutable after initialize */
    bool assist_on; /* QS_SM_ASSIST: large RMA copied by both peers */
    enum na_sm_assist_test assist_test; /* QS_SM_ASSIST_TEST */
    /* Chunks of our RMA that peers copied for us (na_sm_assist.c). */
    _Atomic uint64_t assist_chunks;
    /* Hellos refused because the peer process is not the one that serves
     * the name it claims (na_sm_conn.c). */
    atomic_uint forged_dropped;
};

static inline struct na_sm_class *
na_sm_class(const na_class_t *na_class)
{
    return (struct na_sm_class *) na_class->plugin_class;
}

/* The context of id `id`, or NULL (lock held). */
static inline struct na_sm_context *
na_sm_ctx(const struct na_sm_class *cls, uint8_t id)
{
    return (struct na_sm_context *) (void *) cls->contexts[id];
}

/* na_sm_addr.c */
bool na_sm_name_valid(const char *name, size_t len);
na_return_t na_sm_name_parse(const char *str, char *name);
struct na_addr *na_sm_addr_intern(struct na_sm_class *cls, const char *name);

/* na_sm_conn.c */
na_return_t na_sm_listen(struct na_sm_class *cls);
struct na_sm_conn *na_sm_conn_get(struct na_sm_class *cls,
                                  struct na_addr *addr);
void na_sm_conn_accept_all(struct na_sm_class *cls);
void na_sm_conn_sock_event(struct na_sm_conn *conn);
void na_sm_conn_destroy(struct na_sm_conn *conn);
void na_sm_conn_wake_peer(struct na_sm_conn *conn);
/* The listener's check of a hello's bytes (from a peer: hostile): true
 * when `msg` is a well-formed hello of this protocol version that came
 * with two descriptors and names a valid peer; its name goes to `name`.
 * A pure function, so that fuzz/fuzz_sm_hello.c can feed it anything. */
bool na_sm_hello_parse(const void *msg, size_t len, size_t nfds,
                       char name[NA_SM_NAME_MAX + 1]);
/* The hello a connector sends: its size, written into `msg`. */
size_t na_sm_hello_encode(const char *name, void *msg, size_t size);

/* na_sm_msg.c */
bool na_sm_ring_drain(struct na_sm_conn *conn, bool publish);
bool na_sm_ring_ready(const struct na_sm_conn *conn);
void na_sm_ring_publish(struct na_sm_conn *conn);
bool na_sm_ring_push(struct na_sm_conn *conn, uint8_t kind, uint8_t src_id,
                     uint8_t dst_id, na_tag_t tag, const void *buf, size_t len,
                     const void *buf2, size_t len2);
void na_sm_tx_progress(struct na_sm_conn *conn);

/* na_sm_rma.c */
na_return_t na_sm_regs_create(struct na_sm_class *cls);
void na_sm_regs_destroy(struct na_sm_class *cls);
void na_sm_rma_run(struct na_op_id *op); /* called with the lock held */
/* len bytes between our `local` and `remote` in process `pid`, with
 * process_vm_writev (`write`) or process_vm_readv: 0 or an errno. */
int na_sm_vm_copy(pid_t pid, uint64_t local, uint64_t remote, uint64_t len,
                  bool write);
na_return_t na_sm_region_check(const struct na_sm_reg_entry *tab, uint32_t slot,
                               uint64_t gen, uint64_t lo, uint64_t size,
                               bool put);

/* na_sm_rma_msg.c (lock held) */
enum na_sm_rma_mode na_sm_rma_mode_from_env(void);
void na_sm_rma_msg_start(struct na_op_id *op);
bool na_sm_rma_msg_recv(struct na_sm_conn *conn, const uint8_t *rec,
                        size_t len);
void na_sm_rma_msg_progress(struct na_sm_conn *conn);
void na_sm_rma_msg_fail(struct na_sm_conn *conn);
void na_sm_rma_msg_cancel(struct na_op_id *op);
/* Whether cancel may still end `op` with nothing moved: a put none of
 * whose data was pushed, a get none of whose data arrived. */
bool na_sm_rma_msg_cancelable(const struct na_op_id *op);
void na_sm_rma_msg_conn_free(struct na_sm_conn *conn);

/* na_sm_assist.c (lock held) */
bool na_sm_assist_enabled_from_env(void);
enum na_sm_assist_test na_sm_assist_test_from_env(void);
/* Copy the RMA `op` (checked, on a ready connection) with the peer's help:
 * 0 or an errno, as na_sm_rma_copy. */
int na_sm_assist_copy(struct na_sm_conn *conn, struct na_op_id *op);
/* An NA_SM_REC_ASSIST record from the ring (hostile bytes). false:
 * malformed, end the connection. */
bool na_sm_assist_recv(struct na_sm_conn *conn, const uint8_t *rec, size_t len);

/* na_sm_progress.c */
void na_sm_op_init(struct na_op_id *op, const struct na_op_desc *desc,
                   struct na_addr *addr);
bool na_sm_op_wait(struct na_op_list *list, struct na_op_id *op);
void na_sm_op_complete(struct na_op_id *op, na_return_t ret);
void na_sm_wake_local(struct na_sm_class *cls);
void na_sm_peer_failed(struct na_sm_class *cls, struct na_sm_conn *conn);
void na_sm_sleep_with(na_class_t *na_class, int fd, unsigned int timeout_ms);

/* The tables of ops na_sm_class_ops points to, each defined in the file
 * of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_context_ops na_sm_context_ops;
extern const struct na_addr_ops na_sm_addr_ops;
extern const struct na_msg_ops na_sm_msg_ops;
extern const struct na_mem_ops na_sm_mem_ops;

#endif /* NA_SM_INTERNAL_H */
