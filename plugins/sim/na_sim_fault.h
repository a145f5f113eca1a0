/*
 * Private to the simulated fabric: the fault profile.
 *
 * A profile is a list of rules parsed from a compact text form (the
 * grammar is in docs/sim.md and na_sim_fault_parse.c). Each rule has a
 * scope (the whole world, a directed link, a node, or a partition between
 * two groups of one node each) and parameters: probabilities in parts per
 * billion, so that decisions compare integers drawn from the world's PRNG
 * and never depend on floating-point rounding; fixed latency; a jitter
 * distribution; backlog overrides; and scheduled actions (crash, restart,
 * partition start and end) on the virtual clock.
 *
 * The parser is a pure function over untrusted text (QS_SIM_FAULTS comes
 * from the environment) with a fuzz target of its own.
 */
#ifndef NA_SIM_FAULT_H
#define NA_SIM_FAULT_H

#include "na_sim_internal.h"

#define NA_SIM_FAULT_SPEC_MAX 8192 /* longest profile text accepted      */
#define NA_SIM_FAULT_MAX_RULES 64
#define NA_SIM_FAULT_MAX_ACTIONS 128
#define NA_SIM_PPB 1000000000U /* probability 1, in parts per billion   */

/* Probabilistic faults. Order matters only for the trace names below. */
enum na_sim_prob {
    NA_SIM_P_LOSS,     /* message vanishes; its send still succeeds      */
    NA_SIM_P_DUP,      /* message delivered twice                        */
    NA_SIM_P_TRUNC,    /* message delivered cut short                    */
    NA_SIM_P_CORRUPT,  /* one bit of the message flipped                 */
    NA_SIM_P_SEND_ERR, /* send completes with NA_IO_ERROR, not delivered */
    NA_SIM_P_RMA_ERR,  /* RMA completes with NA_IO_ERROR, nothing moved  */
    NA_SIM_P_PARTIAL,  /* RMA moves a prefix, then NA_IO_ERROR           */
    NA_SIM_P_REVOKE,   /* RMA finds the remote key revoked: NA_ACCESS    */
    NA_SIM_P_AGAIN,    /* send or RMA refused at post with NA_AGAIN      */
    NA_SIM_P_RNR,      /* unexpected message finds the receiver not ready */
    NA_SIM_P_REORDER,  /* message may overtake earlier ones on its link  */
    NA_SIM_P_COUNT
};

enum na_sim_dist {
    NA_SIM_DIST_NONE,
    NA_SIM_DIST_PARETO,    /* scale, shape alpha (default 1.5)          */
    NA_SIM_DIST_LOGNORMAL, /* median, sigma (default 1.0)               */
    NA_SIM_DIST_UNIFORM,   /* 0 .. scale                                */
};

struct na_sim_jitter {
    enum na_sim_dist dist;
    uint64_t scale_ns;
    double shape;
};

/* What one rule sets. Fields a rule does not mention stay unset. */
struct na_sim_fault_params {
    uint32_t p[NA_SIM_P_COUNT]; /* parts per billion                  */
    uint64_t latency_ns;        /* added to every trip it applies to  */
    struct na_sim_jitter jitter;
    bool has_backlog;
    size_t backlog;
    int when_full; /* -1 unset, else enum na_sim_backlog_policy          */
    bool has_detect;
    uint64_t detect_ns; /* how long a peer takes to notice a dead link */
    bool has_rnr_delay;
    uint64_t rnr_delay_ns; /* RNR retry interval under the block policy */
};

enum na_sim_scope {
    NA_SIM_SCOPE_WORLD,
    NA_SIM_SCOPE_LINK,
    NA_SIM_SCOPE_NODE,
    NA_SIM_SCOPE_PARTITION,
};

struct na_sim_fault_rule {
    enum na_sim_scope scope;
    struct na_sim_name a, b;    /* link ends, node (a), partition sides   */
    bool a_any, b_any;          /* "*" in a link or partition             */
    bool both_ways;             /* "<>" instead of ">"                    */
    uint64_t from_ns, until_ns; /* partition window [from, until)      */
    bool silent; /* partition: hold trips until it ends, fail nothing */
    struct na_sim_fault_params params;
};

enum na_sim_action_kind {
    NA_SIM_ACT_CRASH,
    NA_SIM_ACT_RESTART,
    NA_SIM_ACT_PARTITION_ON,  /* trace marker only: rules decide      */
    NA_SIM_ACT_PARTITION_OFF, /* trace marker only                    */
};

struct na_sim_fault_action {
    enum na_sim_action_kind kind;
    uint64_t time_ns;
    unsigned int rule; /* the node rule or partition rule it came from */
};

struct na_sim_profile {
    size_t nrules, nactions;
    struct na_sim_fault_rule rules[NA_SIM_FAULT_MAX_RULES];
    struct na_sim_fault_action actions[NA_SIM_FAULT_MAX_ACTIONS];
};

/* Parse `spec` (at most NA_SIM_FAULT_SPEC_MAX bytes, NUL-terminated) into
 * *out, which the caller zeroes or fills with earlier rules to append to.
 * On failure *out may hold part of the new rules; err receives a short
 * reason naming the offending position. NA_SUCCESS, NA_INVALID_ARG,
 * NA_OVERFLOW (too many rules or actions, spec too long). Pure: no world,
 * no global state. */
na_return_t na_sim_profile_parse(const char *spec, struct na_sim_profile *out,
                                 char *err, size_t err_size);

/* Trace names of the probabilistic faults ("loss", "dup", ...). */
const char *na_sim_prob_name(enum na_sim_prob p);

/* Fault counters, indexed like this enum, for na_sim_fault_count(). */
enum na_sim_fault_counter {
    NA_SIM_C_PROB0 = 0, /* + enum na_sim_prob                          */
    NA_SIM_C_CRASH = NA_SIM_P_COUNT,
    NA_SIM_C_RESTART,
    NA_SIM_C_PARTITION,    /* a trip refused by a partition               */
    NA_SIM_C_CRASHED_PEER, /* a trip to a crashed node                 */
    NA_SIM_C_FENCED,       /* traffic of or to an old incarnation          */
    NA_SIM_C_FROZEN,       /* an op of a crashed node held back           */
    NA_SIM_C_JITTER,       /* a trip lengthened by jitter                 */
    NA_SIM_C_COUNT
};

/* World-side fault state (na_sim_fault.c). Callers hold world->lock. */
void na_sim_fault_reset(struct na_sim_world *world);
void na_sim_fault_free(struct na_sim_world *world);
void na_sim_fault_action_run(struct na_sim_world *world, uint64_t arg);
/* An op event came due on a crashed node (true: held back) or for an
 * op of an older incarnation (true: completed as fenced). */
bool na_sim_fault_intercept_checked(struct na_sim_world *world,
                                    struct na_op_id *op);
void na_sim_fault_fail_execute(struct na_sim_world *world, struct na_op_id *op);
/* Backlog bound and policy for a context of `node` under a fault profile. */
void na_sim_fault_backlog_profiled(struct na_sim_world *world,
                                   const struct na_sim_node *node,
                                   size_t *limit, bool *fails);

/* The common cases inline (the functions they call decide every case):
 * an op that is not canceled, of a live node in the incarnation it was
 * posted in, is neither held back nor fenced. */
static inline bool
na_sim_fault_intercept(struct na_sim_world *world, struct na_op_id *op)
{
    if (op->canceled ||
        (!op->node->crashed && op->src_incarnation == op->node->incarnation))
        return false;
    return na_sim_fault_intercept_checked(world, op);
}

/* Backlog bound and policy for a context of `node`: the world's, unless a
 * fault profile's rule sets them. */
static inline void
na_sim_fault_backlog(struct na_sim_world *world, const struct na_sim_node *node,
                     size_t *limit, bool *fails)
{
    if (world->profile != NULL) {
        na_sim_fault_backlog_profiled(world, node, limit, fails);
        return;
    }
    *limit = world->backlog_limit;
    *fails = world->backlog_full_fails;
}
na_return_t na_sim_fault_install(struct na_sim_world *world,
                                 struct na_sim_profile *profile);

#endif /* NA_SIM_FAULT_H */
