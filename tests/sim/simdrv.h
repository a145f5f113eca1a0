/*
 * The fault scenarios' driver: a small world of HG classes on the
 * simulated fabric, each one node with one context, all driven from one
 * thread (HG_Progress then HG_Trigger on each context in turn), so a run
 * is a function of its seed.
 *
 * Every node registers the same RPCs with handlers, so any node can call
 * any other. Every operation a scenario starts is tracked in a struct
 * sd_op that counts its callbacks; the driver checks payloads byte for
 * byte (they are a function of the op's sequence number) and counts what
 * it finds on both sides, so a scenario asserts against ground truth:
 * exactly one callback, correct bytes or a clean error, and at the end
 * every context destroyed and every class finalized with HG_SUCCESS.
 */
#ifndef SIMDRV_H
#define SIMDRV_H

#include "mercury.h"
#include "mercury_bulk.h"
#include "na_sim.h"

#include <stdint.h>

#define SD_MAX_NODES 8
#define SD_MAX_OPS 1024

enum sd_kind {
    SD_ECHO,      /* bytes out, the same bytes back                     */
    SD_ONEWAY,    /* no response                                        */
    SD_BULK_PULL, /* the target pulls the origin's buffer and checks it */
    SD_BULK_PUSH, /* the target pushes a pattern into the origin's buffer */
    SD_HOLD,      /* the handler keeps the handle until sd_release_held */
    SD_XFER,      /* a bulk transfer started by the driver itself        */
};

/* One operation: a forward (any kind but SD_XFER) or a bulk transfer. */
struct sd_op {
    struct sd_world *w;
    enum sd_kind kind;
    uint32_t seq;
    int from, to;
    size_t len;
    int calls;       /* callbacks seen: must end at exactly 1         */
    hg_return_t ret; /* what the callback reported                    */
    int bad_data;    /* success with wrong bytes: never acceptable    */
    hg_handle_t handle;
    hg_op_id_t xfer_id;
    void *buf;        /* bulk: the origin's buffer               */
    hg_bulk_t bulk;   /* bulk: over buf                          */
    int xfer_push;    /* SD_XFER: push instead of pull           */
    void *rbuf;       /* SD_XFER: the buffer node `to` exposes   */
    hg_bulk_t rbulk;  /* SD_XFER: over rbuf, in `to`'s class     */
    hg_bulk_t remote; /* SD_XFER: rbulk as `from` sees it        */
    uint64_t done_ns; /* virtual time of the callback            */
};

struct sd_node {
    char name[32];
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_addr_t addr[SD_MAX_NODES]; /* this node's lookups of the others */
    int crashed;
};

struct sd_opts {
    int nodes;      /* 2 .. SD_MAX_NODES               */
    size_t max_msg; /* eager size for both kinds, 0: default */
    hg_checksum_level_t checksum;
    uint32_t post_init; /* request_post_init, 0: default    */
    uint32_t probe_ms;  /* probe_interval_ms, 0: default    */
    int no_probe;       /* hg_init_info.no_probe            */
};

struct sd_world {
    int n;
    struct sd_node node[SD_MAX_NODES];
    hg_id_t id_echo, id_oneway, id_bulk, id_hold;
    struct sd_op ops[SD_MAX_OPS];
    int nops;
    int completed; /* callbacks of all ops, duplicates included */
    /* Target side, counted over all nodes. */
    int handled;     /* handlers run                                 */
    int bad_input;   /* handler saw wrong bytes after a clean decode */
    int responds;    /* HG_Respond calls that returned HG_SUCCESS    */
    int respond_cbs; /* respond callbacks                            */
    int bulk_live;   /* target-side transfers not yet finished       */
    int bulk_cbs;
    int oneways;
    hg_handle_t held[64];
    int nheld;
    unsigned progress_ms; /* HG_Progress timeout per context and round  */
    uint64_t final_hash;  /* trace hash and line count at sd_close      */
    uint64_t final_lines;
    uint64_t final_faults; /* faults that struck, all kinds          */
};

/* Fail with the error's name unless expr returns HG_SUCCESS. */
#define assert_hg_ok_sd(expr)                                                  \
    do {                                                                       \
        hg_return_t sd_ret_ = (expr);                                          \
        if (sd_ret_ != HG_SUCCESS)                                             \
            fail_msg("%s: %s", #expr, HG_Error_to_string(sd_ret_));            \
    } while (0)

/* Pattern byte i of operation seq; both sides can check it. */
static inline uint8_t
sd_pattern(uint32_t seq, size_t i)
{
    return (uint8_t) (seq * 131u + (uint32_t) i * 7u + (uint32_t) (i >> 8));
}

/* Create the nodes "n0".."n<k-1>" (world held, seed set by the caller or
 * QS_SIM_SEED), register the RPCs and look every node up from every
 * other. Fails the test on any error. */
void sd_open(struct sd_world *w, const struct sd_opts *opts);

/* Restart crashed nodes, drain everything (bounded in virtual time),
 * check the invariants (every op called back exactly once, no bad data,
 * every respond completed once, nothing held) and tear down: every
 * HG_Addr_free, HG_Context_destroy and HG_Finalize must succeed and the
 * world must be gone. */
void sd_close(struct sd_world *w);

/* The trace hash of the world the last sd_close() tore down. */
extern uint64_t sd_last_hash;
/* The events that world ran with prefetching on (na_sim_prefetched_events). */
extern uint64_t sd_last_prefetched;

/* Start operations. Each returns the op (its calls stay 0 if the start
 * itself failed; then ret holds the synchronous error and calls is set to
 * 1 with no callback expected). timeout_ms 0 means none. */
struct sd_op *sd_forward(struct sd_world *w, enum sd_kind kind, int from,
                         int to, size_t len, unsigned timeout_ms);
/* Node `from` pulls (or pushes) len bytes from a buffer it exposes on
 * node `to`, with HG_Bulk_transfer_timed. */
struct sd_op *sd_transfer(struct sd_world *w, int from, int to, size_t len,
                          int push, unsigned timeout_ms);

/* Progress every node until op->calls > 0 (or *counter reaches target),
 * failing the test after budget_ms of virtual time. */
void sd_wait(struct sd_world *w, struct sd_op *op, unsigned budget_ms);
void sd_run_until(struct sd_world *w, const int *counter, int target,
                  unsigned budget_ms);
/* Progress for ms of virtual time. */
void sd_run_for(struct sd_world *w, unsigned ms);
/* Progress until every started op has called back. */
void sd_drain(struct sd_world *w, unsigned budget_ms);

/* Answer every handle SD_HOLD handlers kept. */
void sd_release_held(struct sd_world *w);
/* Answer the oldest one only (none held: nothing). */
void sd_release_first(struct sd_world *w);

/* Crash / restart node i through na_sim.h; a restart makes every other
 * node look i up again (the old addresses are fenced off). */
void sd_crash(struct sd_world *w, int i);
void sd_restart(struct sd_world *w, int i);
void sd_relookup(struct sd_world *w, int i);

/* Apply a fault profile, failing the test with the parser's reason. */
void sd_faults(const char *spec);

/* Op invariants: exactly one callback, and no wrong bytes. */
void sd_assert_once(const struct sd_op *op);

/* Virtual ns now. */
uint64_t sd_now(void);

/* Print the replay line for the current seed, and the trace when
 * QS_SIM_TRACE_OUT names a file. */
void sd_report(const char *test_name);

#endif /* SIMDRV_H */
