/*
 * Private to the simulated fabric (plugins/sim).
 *
 * The plugin is split by concern:
 *   na_sim.c        the ops table: class, context, op ids, progress, cancel
 *   na_sim_world.c  the world: lifetime, clock, event heap, PRNG, links
 *   na_sim_trace.c  the trace: its hash, its lines, QS_SIM_TRACE_OUT
 *   na_sim_ctl.c    the public control API of include/na_sim.h
 *   na_sim_addr.c   addresses: names, lookup, serialization
 *   na_sim_msg.c    unexpected and expected messages
 *   na_sim_rma.c    memory handles, the key registry, put and get
 *   na_sim_fault.c  fault decisions, crash and restart, the fault control API
 *   na_sim_fault_parse.c  the fault profile's text form (untrusted input)
 *
 * Locking: one mutex per world (world->lock) guards every field of the
 * world and of everything reachable from it (nodes, contexts, queues,
 * events, registry, trace). Two things are read without it: addresses and
 * remote memory handles, which are immutable after creation apart from
 * their atomic reference count, and an op's core-owned base (its state
 * moves in the core, without the world lock).
 * A global mutex (na_sim_global_lock) guards which world exists; it is
 * always taken before a world's lock, never after.
 *
 * Lock order with the core: na_sim_global_lock, then world->lock, then a
 * core context's lock. Completing an op (na_op_finish()) and counting a
 * context's untriggered completions (NA_Context_get_completion_count())
 * take the context lock while the world lock is held; the core never holds
 * a context lock while it calls into the plugin, so the order cannot
 * invert.
 *
 * Internal helpers shared between these files carry the na_sim_ prefix;
 * like everything not marked QS_EXPORT they stay inside the library, whose
 * only sim names are the control API of include/na_sim.h.
 */
#ifndef NA_SIM_INTERNAL_H
#define NA_SIM_INTERNAL_H

#include "na/na_plugin.h"
#include "na/na_plugin_util.h"
#include "na_sim.h"

#include "util/qs_alloc.h"
#include "util/qs_atomic.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest node name, not counting the terminating NUL. */
#define NA_SIM_NAME_MAX 63
#define NA_SIM_PREFIX "sim://"
#define NA_SIM_PREFIX_LEN 6

#define NA_SIM_DEFAULT_MSG_SIZE 4096
#define NA_SIM_MAX_TAG 0x7fffffffU
#define NA_SIM_DEFAULT_LATENCY_NS 1000
#define NA_SIM_DEFAULT_BANDWIDTH 10000000000ULL /* 10 GB/s */
#define NA_SIM_DEFAULT_BACKLOG 256
#define NA_SIM_WAITING_MAX 32

/* A node name with its length, as addresses and messages carry it, and
 * two hashes of its text computed once when the name is made
 * (na_sim_name_seal()), since every event hashes two names: T(text) of the
 * trace hash (na_sim_trace.c) and the key of the plugin's tables. Every
 * function that writes a name's text seals it; copies carry the hashes.
 * The hashes and the length come first, so that with a short name
 * everything an event reads of it is in one cache line. */
struct na_sim_name {
    uint64_t trace_t;  /* T(str), as the trace hash defines it */
    size_t table_hash; /* na_sim_name_hash()                    */
    uint8_t len;
    char str[NA_SIM_NAME_MAX + 1];
};

/*
 * An address: the peer's name and the incarnation of the node that bore
 * that name when the address was made (0 when no node did). Immutable but
 * for the reference count, so it is shared between threads without a lock,
 * and for the memo of na_sim_node_of(): the node that held the name when
 * world's node table was at memo_epoch, read and written only under the
 * lock of the world whose class made the address.
 */
struct na_addr {
    atomic_uint refcount;
    uint64_t incarnation;
    struct na_sim_world *world;
    struct na_sim_node *memo_node;
    uint64_t memo_epoch; /* 0 (NULL node) is right until a node enters */
    struct na_sim_name name;
};

/* A message waiting for a receive: in the unexpected backlog or among the
 * expected messages that arrived before their receive was posted. */
struct na_sim_msg {
    TAILQ_ENTRY(na_sim_msg) link;
    struct na_sim_name src;
    uint64_t src_incarnation;
    uint8_t src_ctx_id;
    na_tag_t tag;
    size_t size;
    unsigned char data[];
};
TAILQ_HEAD(na_sim_msg_queue, na_sim_msg);

/*
 * An operation id: the core's base first, then what the simulation needs.
 * Fields after `base` are guarded by the world lock while the op is posted.
 */
struct na_op_id {
    struct na_op_base base;   /* state and completion, owned by the core */
    struct na_sim_node *node; /* the class of its current post           */
    struct na_sim_ctx *ctx;   /* context of the post                     */
    na_cb_type_t type;
    bool canceled; /* cancel requested: complete with NA_CANCELED     */
    uint64_t seq;  /* world sequence number given at post            */
    /* Messages. */
    void *buf;   /* send: the caller's data; recv: where to write */
    size_t size; /* bytes to send, or receive buffer capacity     */
    na_tag_t tag;
    uint8_t peer_ctx_id; /* dest_id of a send, source_id of a recv */
    /* Reference held while posted; on a completed unexpected receive,
     * borrowed from its callback info for the trace line. */
    na_addr_t peer;
    uint64_t src_incarnation; /* the node's incarnation at post       */
    na_return_t fault_ret;    /* what an EV_FAIL event completes with  */
    struct na_sim_msg *msg;   /* a queued message matched at post time */
    /* RMA. */
    uint64_t local_key;
    na_offset_t local_offset;
    uint64_t remote_key;
    na_offset_t remote_offset;
    /* The op waits on at most one na_op_list (the base's link): a posted
     * receive on its context's receive list, a send blocked on a full
     * backlog, or an op its crashed node froze. */
};

/* Worlds of at least this many nodes outgrow the cache: the plugin then
 * prefetches what the next events and the next ready contexts will touch
 * (na_sim_event_prefetch(), na_sim_ready_prefetch()). Smaller worlds stay
 * in the cache and skip the work. A hint never changes what runs.
 * QS_SIM_PREFETCH moves the bound (world->prefetch_from). */
#define NA_SIM_PREFETCH_NODES 64
#define NA_SIM_CTX_HINTS 4
#define NA_SIM_OP_HINTS 5 /* op, argument, bytes, the op's two hints */

/* Per-context state: receive lists and queued messages. */
struct na_sim_ctx {
    TAILQ_ENTRY(na_sim_ctx) link; /* in node->contexts, creation order */
    struct na_sim_node *node;
    na_context_t *na_context;
    uint8_t id;
    struct na_op_list unexpected_recvs; /* posted, FIFO           */
    struct na_op_list expected_recvs;   /* posted, FIFO           */
    struct na_sim_msg_queue backlog;    /* unexpected, no recv yet */
    size_t backlog_count;
    struct na_op_list blocked;     /* other nodes' sends, backlog full */
    struct na_sim_msg_queue early; /* expected, no recv yet   */
    unsigned int pending;          /* ops posted here and not yet completed */
    uint64_t completions;          /* completions queued here, ever         */
    /* What the world looked like when this context last held the clock
     * for another context's untriggered completions (na_sim_poll_wait). */
    uint64_t hold_key;
    bool hold_valid;
    /* In world->ready: a completion was queued here since the context was
     * last handed out by na_sim_ready_next(). */
    bool ready;
    TAILQ_ENTRY(na_sim_ctx) ready_link;
    /* In world->queued: completions may be waiting for NA_Trigger(), so
     * na_sim_hold_clock() must count them; it drops contexts it finds
     * empty. */
    bool queued;
    TAILQ_ENTRY(na_sim_ctx) queued_link;
    /* The thread that last polled this context (has_driver: one has):
     * the one expected to trigger its completions. */
    pthread_t driver;
    bool has_driver;
    uint64_t last_completion; /* world->completions after its last one */
    /* What the context's latest completions will have their callbacks
     * read first (the op, its callback's argument, a receive's bytes and
     * the op's hints from the layer above), noted when they completed:
     * na_sim_ready_next() prefetches them for the context after the one it
     * hands out. Addresses only, never followed: by the time they are used they
     * may be stale, and a prefetch of a stale address is harmless. */
    const void *hint[NA_SIM_CTX_HINTS][NA_SIM_OP_HINTS];
    unsigned int hint_len;
};
TAILQ_HEAD(na_sim_ctx_list, na_sim_ctx);

/*
 * A node: what one NA class is on the fabric. plugin_class points here.
 */
struct na_sim_node {
    /* What every event of the node's operations reads comes first: in a
     * large world each event's first touch of its node is a cache miss,
     * and these (with a short name) share one line. */
    struct na_sim_node *hash_next; /* in world->node_table's bucket    */
    struct na_sim_world *world;
    void *data; /* the driver's (na_sim_node_set_data()), read with the
                 * name by na_sim_ready_next*() */
    uint64_t incarnation; /* unique in the world, never reused        */
    bool no_block;        /* NA_NO_BLOCK: never wait on real time      */
    bool crashed;         /* its operations are held back until restart */
    struct na_sim_name name;
    struct na_sim_ctx_list contexts;
    TAILQ_ENTRY(na_sim_node) link; /* in world->nodes, creation order */
    na_class_t *na_class;
    size_t max_unexpected_size;
    size_t max_expected_size;
    struct na_op_list frozen; /* ops held back while crashed     */
    /* The source address its messages carry to their receivers, for the
     * current incarnation, made on first use and shared (reference
     * counted) by every receive it completes: no allocation per message. */
    na_addr_t source;
};
TAILQ_HEAD(na_sim_node_list, na_sim_node);

enum na_sim_event_kind {
    NA_SIM_EV_MSG,    /* a send reaches its destination                */
    NA_SIM_EV_RMA,    /* a put or get executes                         */
    NA_SIM_EV_LOCAL,  /* a receive or cancel completes without traffic */
    NA_SIM_EV_FAIL,   /* an op completes with op->fault_ret            */
    NA_SIM_EV_ACTION, /* a scheduled fault action (op is NULL)        */
};

struct na_sim_event {
    uint64_t time;
    uint64_t seq;
    enum na_sim_event_kind kind;
    struct na_op_id *op;
    uint64_t arg; /* EV_ACTION: profile generation and action index  */
};

/* A lane of the event queue: events in (time, seq) order, appended at
 * the tail and taken from the head of a ring of cap entries (a power of
 * two). Events scheduled at the same delay from the clock arrive in time
 * order, so most events enter a lane in constant time instead of the heap
 * in logarithmic time; an event that does not fit behind a lane's tail
 * goes to the heap. */
#define NA_SIM_LANES 4
struct na_sim_lane {
    struct na_sim_event *ev;
    size_t head, len, cap;
    uint64_t delay; /* what the lane was last given */
};

struct na_sim_profile;
/* Per-link time of the latest message arrival, for FIFO under jitter. */
struct na_sim_fifo {
    struct na_sim_name src, dst;
    uint64_t last;
};

/* A registered region, found by key as a NIC finds it. */
struct na_sim_region {
    uint64_t key;
    struct na_sim_node *node;
    struct na_mem_handle *handle;
};

struct na_sim_link_entry {
    struct na_sim_name src, dst;
    struct na_sim_link params;
};

/* T(kind) of a kind token given in parts, by the parts' addresses (the
 * parts are static strings; na_sim_trace.c). Open addressing: a kind
 * lives in one of NA_SIM_KIND_MEMO_PROBES slots from its home, so two
 * kinds whose addresses hash alike (which the link's layout decides) do
 * not evict each other on every line. */
#define NA_SIM_KIND_MEMO_BITS 7
#define NA_SIM_KIND_MEMO_PROBES 4
struct na_sim_kind_memo {
    const char *part[3];
    uint64_t t;
};

struct na_sim_world {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* broadcast on posts and on completions     */
    unsigned int refs;   /* classes plus na_sim_world_hold() calls     */
    unsigned int holds;
    uint64_t seed;
    uint64_t prng;            /* splitmix64 state                        */
    atomic_uint_fast64_t now; /* virtual ns; written under lock        */
    uint64_t next_seq;
    uint64_t next_incarnation;
    uint64_t next_auto_name;
    uint64_t next_key;
    uint64_t post_gen;    /* bumped on every post and cancel          */
    uint64_t completions; /* completions queued anywhere, ever        */
    unsigned int waiters; /* threads blocked on cond                  */
    bool has_poller;
    bool multi_threaded;       /* more than one live thread has polled     */
    unsigned int live_pollers; /* threads that polled and have not exited */
    uint64_t uid;       /* unique in the process: the world a thread polled */
    bool single_driver; /* na_sim_set_single_driver(true)            */
    pthread_t poller;
    /* Threads in na_sim_poll_wait() of a multi-threaded world (up to
     * NA_SIM_WAITING_MAX; one that finds the table full is not listed):
     * completions their contexts hold cannot be triggered before those
     * waits end, so no other waiter holds the clock for them. */
    struct na_sim_waiter {
        pthread_t thread;
        uint64_t since; /* world->completions when the wait began */
    } waiting[NA_SIM_WAITING_MAX];
    unsigned int waiting_count;
    struct na_sim_node_list nodes;
    /* The same nodes by name: a table of node_buckets chains (a power of
     * two, at least node_count), so that a delivery finds its destination
     * in constant time however large the world. Only ever searched, never
     * iterated, so its order cannot leak into a run. */
    struct na_sim_node **node_table;
    size_t node_buckets, node_count;
    /* Moves on whenever a node enters or leaves the table, so that an
     * address's memo of its node (na_sim_node_of) is trusted only while
     * the table is as it was. */
    uint64_t node_epoch;
    /* Contexts with completions since na_sim_ready_next() last returned
     * them, in the order of their first one; and contexts that may hold
     * untriggered completions (see na_sim_ctx). */
    struct na_sim_ctx_list ready, queued;
    /* Events, in (time, seq) order: a binary heap, and lanes for the
     * common case (na_sim_world.c); the next event is the least of the
     * heap's top and the lanes' heads. */
    struct na_sim_event *heap;
    size_t heap_len, heap_cap;
    struct na_sim_lane lanes[NA_SIM_LANES];
    size_t events;      /* in the heap and the lanes */
    size_t lane_events; /* in the lanes */
    /* The next event: its time (UINT64_MAX when none), its sequence
     * number, and where it is (a lane's index, NA_SIM_LANES: the heap). */
    uint64_t first_time, first_seq;
    unsigned int first_from;
    /* Registry of regions, sorted by key. */
    struct na_sim_region *regions;
    size_t region_len, region_cap;
    /* Links. */
    struct na_sim_link link_default;
    struct na_sim_link_entry *links;
    size_t link_len, link_cap;
    size_t backlog_limit;
    bool backlog_full_fails; /* NA_AGAIN instead of blocking the sender */
    /* Faults (na_sim_fault.c). */
    struct na_sim_profile *profile; /* NULL: a perfect fabric          */
    uint64_t profile_gen;           /* stale EV_ACTIONs are ignored    */
    uint64_t fault_counts[24];      /* enum na_sim_fault_counter       */
    /* Open addressing on (src, dst), fifo_cap slots (a power of two, at
     * least twice fifo_len); a free slot has an empty src name. Only
     * searched, never iterated. */
    struct na_sim_fifo *fifo;
    size_t fifo_len, fifo_cap;
    /* Trace. */
    uint64_t trace_hash;
    uint64_t trace_lines;
    bool trace_keep;
    char *trace_buf;
    size_t trace_len, trace_cap;
    int trace_fd;           /* QS_SIM_TRACE_OUT, written line by line, or -1 */
    uint64_t hang_after_ns; /* QS_SIM_HANG_S; 0: no bound            */
    /* Prefetch while node_count is at least this (QS_SIM_PREFETCH: 0
     * always, SIZE_MAX never, else NA_SIM_PREFETCH_NODES). */
    size_t prefetch_from;
    uint64_t prefetched; /* events run with prefetching */
    struct na_sim_kind_memo trace_kinds[1 << NA_SIM_KIND_MEMO_BITS];
    /* T(kind) of the per-operation lines, by operation type ("post:<op>")
     * and by type and return code ("done:<op>:<ret>"); 0 until a line
     * first needs it (na_sim_kind_slot()). */
    uint64_t trace_t_post[NA_CB_MAX];
    uint64_t trace_t_done[NA_CB_MAX][NA_RETURN_MAX];
};

extern pthread_mutex_t na_sim_global_lock;

/* World lifetime (na_sim_world.c). Callers hold na_sim_global_lock. */
struct na_sim_world *na_sim_world_current(void);
na_return_t na_sim_world_ref(struct na_sim_world **world);
void na_sim_world_unref(struct na_sim_world *world);
void na_sim_world_reset_state(struct na_sim_world *world, uint64_t seed);
uint64_t na_sim_seed_next(void);
void na_sim_seed_set_next(uint64_t seed, bool explicit_seed);

/* Clock, events and PRNG (na_sim_world.c). Callers hold world->lock. */
static inline uint64_t
na_sim_now(const struct na_sim_world *world)
{
    return atomic_load_explicit(&world->now, memory_order_relaxed);
}
/* Virtual times saturate: an absurd link setting must not wrap around
 * into the past. */
static inline uint64_t
na_sim_add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}
/* Past the hang bound (QS_SIM_HANG_AFTER): report and exit. */
_Noreturn void na_sim_hang_exit(struct na_sim_world *world, uint64_t t);
static inline void
na_sim_set_now(struct na_sim_world *world, uint64_t t)
{
    if (t > na_sim_now(world)) {
        if (world->hang_after_ns != 0 && t >= world->hang_after_ns)
            na_sim_hang_exit(world, t);
        atomic_store_explicit(&world->now, t, memory_order_relaxed);
    }
}
/* Append a comment line ("# ...\n" included in `line`) to the
 * QS_SIM_TRACE_OUT file, if any. */
void na_sim_trace_out_note(struct na_sim_world *world, const char *line);
uint64_t na_sim_prng_next(struct na_sim_world *world);
na_return_t na_sim_schedule_arg(struct na_sim_world *world, uint64_t time,
                                enum na_sim_event_kind kind,
                                struct na_op_id *op, uint64_t arg);
static inline na_return_t
na_sim_schedule(struct na_sim_world *world, uint64_t time,
                enum na_sim_event_kind kind, struct na_op_id *op)
{
    return na_sim_schedule_arg(world, time, kind, op, 0);
}
na_return_t na_sim_schedule_action(struct na_sim_world *world, uint64_t time,
                                   uint64_t arg);
bool na_sim_event_next_time(const struct na_sim_world *world, uint64_t *time);
/* Run one event, advancing the clock to it. False if none is queued. */
bool na_sim_step_locked(struct na_sim_world *world);
/* Run every event due at the current time; returns how many ran. */
unsigned int na_sim_run_due(struct na_sim_world *world);
/* Wake threads blocked in poll_wait: a post may make work due, and a
 * completion may be the one they wait for. */
static inline void
na_sim_wake(struct na_sim_world *world)
{
    if (world->waiters > 0)
        pthread_cond_broadcast(&world->cond);
}
uint64_t na_sim_transfer_time(struct na_sim_world *world,
                              const struct na_sim_name *src,
                              const struct na_sim_name *dst, size_t size);
struct na_sim_link *na_sim_link_find(struct na_sim_world *world,
                                     const struct na_sim_name *src,
                                     const struct na_sim_name *dst,
                                     bool create);
/* Trace (na_sim_trace.c). The hash's definition is written there. */
#define NA_SIM_TRACE_HASH_BASIS 0xcbf29ce484222325ULL
#define NA_SIM_TRACE_HASH_MUL 0x9e3779b97f4a7c15ULL
/* QS_SIM_TRACE_OUT: open the file (world creation), write the header line
 * (creation and reset), write the footer and close (destruction). */
void na_sim_trace_out_open(struct na_sim_world *world);
void na_sim_trace_out_header(struct na_sim_world *world);
void na_sim_trace_out_close(struct na_sim_world *world);
void na_sim_trace(struct na_sim_world *world, uint64_t time, uint64_t seq,
                  const char *kind, const char *src, const char *dst,
                  size_t size, na_tag_t tag);
/* The same line with kind "kind[:kind2[:kind3]]" (NULL parts left out),
 * without formatting the kind first. The kind parts of both functions must
 * be string literals or constant table entries: their hash is remembered
 * by address. */
void na_sim_trace_op(struct na_sim_world *world, uint64_t time, uint64_t seq,
                     const char *kind, const char *kind2, const char *kind3,
                     const char *src, const char *dst, size_t size,
                     na_tag_t tag);
/* rotl(x, r) of the trace hash's line words, 0 < r < 64. */
static inline uint64_t
na_sim_rotl(uint64_t x, unsigned int r)
{
    return x << r | x >> (64 - r);
}

/* mix(h, w) of the trace hash (na_sim_trace.c gives the definition). */
static inline uint64_t
na_sim_hash_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * NA_SIM_TRACE_HASH_MUL;
    return h ^ (h >> 32);
}

/* The home slot of a kind in the memo, by the addresses of its parts, and
 * its p-th probe. */
static inline size_t
na_sim_kind_home(const char *kind, const char *kind2, const char *kind3)
{
    uintptr_t key =
        (uintptr_t) kind * 3 + (uintptr_t) kind2 * 5 + (uintptr_t) kind3 * 7;

    return (size_t) ((key * 0x9e3779b97f4a7c15ULL) >>
                     (64 - NA_SIM_KIND_MEMO_BITS));
}

static inline struct na_sim_kind_memo *
na_sim_kind_probe(struct na_sim_world *world, size_t home, size_t p)
{
    return &world
                ->trace_kinds[(home + p) & ((1u << NA_SIM_KIND_MEMO_BITS) - 1)];
}

/* The out-of-line halves of na_sim_trace_names(): a kind not in its home
 * slot of the memo, and a line to format and write. */
void na_sim_trace_names_miss(struct na_sim_world *world, uint64_t time,
                             uint64_t seq, const char *kind, const char *kind2,
                             const char *kind3, const struct na_sim_name *src,
                             const struct na_sim_name *dst, size_t size,
                             na_tag_t tag);
void na_sim_trace_names_emit(struct na_sim_world *world, uint64_t time,
                             uint64_t seq, const char *kind, const char *kind2,
                             const char *kind3, const struct na_sim_name *src,
                             const struct na_sim_name *dst, size_t size,
                             na_tag_t tag);

/* One line into the world's trace hash: its two words, each mixed in
 * (the definition is in na_sim_trace.c), over T(kind), T(src) and T(dst)
 * already computed. */
static inline void
na_sim_trace_fold(struct na_sim_world *world, uint64_t time, uint64_t seq,
                  uint64_t t_kind, uint64_t t_src, uint64_t t_dst, size_t size,
                  na_tag_t tag)
{
    uint64_t a = time ^ na_sim_rotl(seq, 32) ^ na_sim_rotl(size, 16) ^
                 na_sim_rotl(tag, 48);
    uint64_t b = t_kind ^ na_sim_rotl(t_src, 21) ^ na_sim_rotl(t_dst, 42);

    world->trace_hash =
        na_sim_hash_word(na_sim_hash_word(world->trace_hash, a), b);
    world->trace_lines++;
}

/* A line of sealed names whose kind hashes to t, and its text when lines
 * are kept or written. */
static inline void
na_sim_trace_names_mix(struct na_sim_world *world, uint64_t time, uint64_t seq,
                       uint64_t t, const char *kind, const char *kind2,
                       const char *kind3, const struct na_sim_name *src,
                       const struct na_sim_name *dst, size_t size, na_tag_t tag)
{
    /* T("*"): one word, the byte '*', mixed into the length 1. */
    const uint64_t any = na_sim_hash_word(1, (unsigned char) '*');

    na_sim_trace_fold(world, time, seq, t, src ? src->trace_t : any,
                      dst ? dst->trace_t : any, size, tag);
    if (world->trace_fd >= 0 || world->trace_keep)
        na_sim_trace_names_emit(world, time, seq, kind, kind2, kind3, src, dst,
                                size, tag);
}

/* The same line with the ends given as sealed names (NULL: "*"), whose
 * hashes are not computed again: the form of the per-operation events.
 * Inline, as three of them run per message: a kind in its home slot of the
 * memo and no line to keep cost two mixes and no call. */
static inline void
na_sim_trace_names(struct na_sim_world *world, uint64_t time, uint64_t seq,
                   const char *kind, const char *kind2, const char *kind3,
                   const struct na_sim_name *src, const struct na_sim_name *dst,
                   size_t size, na_tag_t tag)
{
    const struct na_sim_kind_memo *m;

    if (kind == NULL)
        kind = "(null)";
    if (kind2 == NULL)
        kind3 = NULL;
    m = na_sim_kind_probe(world, na_sim_kind_home(kind, kind2, kind3), 0);
    if (m->part[0] != kind || m->part[1] != kind2 || m->part[2] != kind3) {
        na_sim_trace_names_miss(world, time, seq, kind, kind2, kind3, src, dst,
                                size, tag);
        return;
    }
    na_sim_trace_names_mix(world, time, seq, m->t, kind, kind2, kind3, src, dst,
                           size, tag);
}

/* T(kind) of a kind given in parts (the memo's lookup, na_sim_trace.c). */
uint64_t na_sim_kind_lookup(struct na_sim_world *world, const char *kind,
                            const char *kind2, const char *kind3);

/* T(kind) kept in `slot` of the world, looked up the first time. A T that
 * happens to be 0 is looked up every time, which is still right. */
static inline uint64_t
na_sim_kind_slot(struct na_sim_world *world, uint64_t *slot, const char *kind,
                 const char *kind2, const char *kind3)
{
    if (*slot == 0)
        *slot = na_sim_kind_lookup(world, kind, kind2, kind3);
    return *slot;
}

/* T(text) of the trace hash, for na_sim_name_seal(). */
uint64_t na_sim_trace_text_hash(const char *text, size_t len);

/* Operations (na_sim.c). Callers hold world->lock. */
void na_sim_op_post(struct na_sim_node *node, struct na_sim_ctx *ctx,
                    struct na_op_id *op, na_cb_type_t type);
/* The end of a post that succeeded: na_op_start(), and the cancel that
 * came during the post, if one did. */
void na_sim_op_started(struct na_sim_world *world, struct na_op_id *op);
/* Undo a post that failed after na_sim_op_post(): no completion comes. */
void na_sim_op_abort(struct na_sim_world *world, struct na_op_id *op,
                     na_return_t ret);
/* Trace the post of op and ask the fault model about it: it may refuse a
 * send (NA_AGAIN) or move its arrival (*when; NULL for a receive). src is
 * NULL for an unexpected receive ("*": any source). */
na_return_t na_sim_op_posted(struct na_sim_world *world, struct na_op_id *op,
                             const struct na_sim_name *src,
                             const struct na_sim_name *dst, uint64_t *when);
/* Finish posting a send or an RMA op from src to dst that would arrive at
 * when: trace it, let the fault model refuse or delay it, and schedule its
 * event. On failure the post is undone with na_sim_op_abort() and the error
 * is returned. */
na_return_t na_sim_op_schedule(struct na_sim_world *world, struct na_op_id *op,
                               const struct na_sim_name *src,
                               const struct na_sim_name *dst, uint64_t when,
                               enum na_sim_event_kind kind);
void na_sim_op_complete(struct na_sim_world *world, struct na_op_id *op,
                        na_return_t ret);
const char *na_sim_op_kind(na_cb_type_t type);
struct na_sim_node *na_sim_node_find(struct na_sim_world *world,
                                     const struct na_sim_name *name);
/* Enter a node in world->node_table (NA_NOMEM when the table cannot grow)
 * or take it out. */
na_return_t na_sim_node_table_add(struct na_sim_world *world,
                                  struct na_sim_node *node);
void na_sim_node_table_remove(struct na_sim_world *world,
                              struct na_sim_node *node);
/* The node's context of that id, or NULL. Several contexts may share an id
 * (HG_Context_create() always asks for 0); traffic for that id goes to the
 * oldest of them. */
static inline struct na_sim_ctx *
na_sim_ctx_find(struct na_sim_node *node, uint8_t id)
{
    struct na_sim_ctx *ctx;

    TAILQ_FOREACH(ctx, &node->contexts, link)
    if (ctx->id == id)
        return ctx;
    return NULL;
}

/* Addresses (na_sim_addr.c). */
bool na_sim_name_parse(const char *str, size_t len, struct na_sim_name *name);
bool na_sim_name_from_string(const char *str, struct na_sim_name *name);
/* Compute the hashes a name carries, after its text and length were
 * written. */
void na_sim_name_seal(struct na_sim_name *name);
/* Sealed names with different hashes differ: most unequal names are told
 * apart without reading their text. */
static inline bool
na_sim_name_eq(const struct na_sim_name *a, const struct na_sim_name *b)
{
    return a->table_hash == b->table_hash && a->len == b->len &&
           memcmp(a->str, b->str, a->len) == 0;
}
/* A hash of the name for the plugin's tables (FNV-1a, computed when the
 * name was sealed); never part of a trace or of any order. */
static inline size_t
na_sim_name_hash(const struct na_sim_name *name)
{
    return name->table_hash;
}
na_addr_t na_sim_addr_new(struct na_sim_world *world,
                          const struct na_sim_name *name, uint64_t incarnation);
/* The node that now holds addr's name, or NULL: na_sim_node_find() without
 * the search while the table has not changed since the last one for the
 * same address. World lock held. */
static inline struct na_sim_node *
na_sim_node_of(struct na_sim_world *world, struct na_addr *addr)
{
    if (addr->world != world)
        return na_sim_node_find(world, &addr->name);
    if (addr->memo_epoch != world->node_epoch) {
        addr->memo_node = na_sim_node_find(world, &addr->name);
        addr->memo_epoch = world->node_epoch;
    }
    return addr->memo_node;
}
static inline na_addr_t
na_sim_addr_ref(na_addr_t addr)
{
    qs_atomic_fetch_add(&addr->refcount, 1, memory_order_relaxed);
    return addr;
}
/* A new reference to node's source address (node->source), made again
 * when the node's incarnation moved on; NULL when out of memory. Called
 * with the world lock held. */
na_addr_t na_sim_node_source(struct na_sim_node *node);
static inline void
na_sim_addr_unref(na_addr_t addr)
{
    if (addr != NULL &&
        qs_atomic_fetch_sub(&addr->refcount, 1, memory_order_acq_rel) == 1)
        qs_free_lines(addr, sizeof(*addr));
}

/* Messages (na_sim_msg.c). */
void na_sim_msg_deliver(struct na_sim_world *world, struct na_op_id *op);
void na_sim_msg_local(struct na_sim_world *world, struct na_op_id *op);
void na_sim_msg_requeue(struct na_sim_world *world, struct na_sim_ctx *ctx,
                        bool unexpected, struct na_sim_msg *msg);
/* Free the messages queued on ctx that no receive has taken yet. */
void na_sim_ctx_free_msgs(struct na_sim_ctx *ctx);
void na_sim_ctx_drain(struct na_sim_world *world, struct na_sim_ctx *ctx);
/* Apply the backlog setting to senders blocked on ctx: admit them into
 * free slots, or fail them with NA_AGAIN under the failing policy. */
void na_sim_backlog_reconsider(struct na_sim_world *world,
                               struct na_sim_ctx *ctx);

/* RMA (na_sim_rma.c). */
void na_sim_rma_execute(struct na_sim_world *world, struct na_op_id *op);
void na_sim_regions_drop_node(struct na_sim_world *world,
                              struct na_sim_node *node);

/*
 * Fault decision points (na_sim_fault.c).
 *
 * At post: a non-success return refuses the post with that code (no
 * completion follows); *when (the arrival time of a send or RMA, NULL for
 * a receive) may be moved later by latency and jitter.
 *
 * At delivery, the verdict on one send or RMA event.
 */
enum na_sim_verdict {
    NA_SIM_V_DELIVER, /* go ahead (possibly mangled, see the flags)     */
    NA_SIM_V_FAIL,    /* complete with ret after delay, deliver nothing */
    NA_SIM_V_DROP,    /* lost on the wire: the send still succeeds      */
    NA_SIM_V_RETRY,   /* receiver not ready: try again after delay      */
};
struct na_sim_fault {
    enum na_sim_verdict verdict;
    na_return_t ret;
    uint64_t delay;
    bool dup, trunc, corrupt, partial; /* message or RMA mangling   */
    uint64_t bits;                     /* randomness for the mangling */
};
na_return_t na_sim_fault_on_post_profiled(struct na_sim_world *world,
                                          const struct na_op_id *op,
                                          const struct na_sim_name *dst,
                                          uint64_t *when);
/* target: the node that now holds the name op->peer names, or NULL (the
 * caller has looked it up already). */
struct na_sim_fault
na_sim_fault_on_deliver_checked(struct na_sim_world *world,
                                const struct na_op_id *op,
                                const struct na_sim_node *target);

/* The decisions above, with their common case inline: a world without a
 * fault profile refuses and delays nothing at post, and delivers to a
 * live node of the incarnation the address was made for. The functions
 * they call decide every case, the common one included. */
static inline na_return_t
na_sim_fault_on_post(struct na_sim_world *world, const struct na_op_id *op,
                     const struct na_sim_name *dst, uint64_t *when)
{
    if (world->profile == NULL || when == NULL)
        return NA_SUCCESS;
    return na_sim_fault_on_post_profiled(world, op, dst, when);
}

static inline struct na_sim_fault
na_sim_fault_on_deliver(struct na_sim_world *world, const struct na_op_id *op,
                        const struct na_sim_node *target)
{
    if (world->profile == NULL && target != NULL && !target->crashed &&
        (op->peer->incarnation == 0 ||
         op->peer->incarnation == target->incarnation))
        return (struct na_sim_fault){.verdict = NA_SIM_V_DELIVER,
                                     .ret = NA_SUCCESS};
    return na_sim_fault_on_deliver_checked(world, op, target);
}
/* Complete op with ret after delay ns (through an EV_FAIL event). */
void na_sim_fault_fail_later(struct na_sim_world *world, struct na_op_id *op,
                             na_return_t ret, uint64_t delay);
/* Trace one fault decision about op (or about nothing, op NULL). */
void na_sim_fault_trace(struct na_sim_world *world, const struct na_op_id *op,
                        const char *what, const char *src, const char *dst,
                        size_t size);

/* More segments than any bulk descriptor sensibly holds: a bound on what a
 * hostile buffer can make us allocate. */
#define NA_SIM_MEM_MAX_SEGMENTS (1U << 20)

/* The tables of ops na_sim_class_ops points to, each defined in the
 * file of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_addr_ops na_sim_addr_ops;
extern const struct na_msg_ops na_sim_msg_ops;
extern const struct na_mem_ops na_sim_mem_ops;

/* Little-endian integers in serialized forms (na_sim_addr.c). */
void na_sim_put_u64(unsigned char *p, uint64_t v);
uint64_t na_sim_get_u64(const unsigned char *p);

#endif /* NA_SIM_INTERNAL_H */

/* Whether the world prefetches for its next events and contexts. */
static inline bool
na_sim_prefetching(const struct na_sim_world *world)
{
    return world->node_count >= world->prefetch_from;
}
