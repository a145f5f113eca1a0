/*
 * Fault injection: what the fabric does to each operation, given the
 * world's fault profile, and the scheduled actions (crash, restart,
 * partition markers).
 *
 * Every random decision draws from the world's PRNG under the world lock,
 * in event order, and only when a rule that could fire matches: a world
 * without a profile draws nothing, so its trace is what it always was,
 * while a world with one makes decisions (and a trace) that depend on the
 * seed and replay from it. Each decision that changes an operation's fate
 * leaves a "fault:<what>" line in the trace.
 *
 * Crash and incarnations do not depend on a profile: a crashed node, or an
 * address naming an older incarnation of a node, is refused always.
 */
#include "na_sim_fault.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How long a peer takes to learn that a node is gone or cut off: the
 * retry timeout of a reliable transport. Set with "world:detect=". */
#define NA_SIM_DEFAULT_DETECT_NS 100000ULL
/* Interval between RNR retries under the blocking policy. */
#define NA_SIM_DEFAULT_RNR_DELAY_NS 10000ULL

_Static_assert(NA_SIM_C_COUNT <= 24, "fault_counts is too small");

void
na_sim_fault_trace(struct na_sim_world *world, const struct na_op_id *op,
                   const char *what, const char *src, const char *dst,
                   size_t size)
{
    na_sim_trace_op(world, na_sim_now(world), op ? op->seq : world->next_seq++,
                    "fault", what, NULL, src, dst, size, op ? op->tag : 0);
}

/*
 * Rule matching and draws.
 */

static bool
na_sim_end_is(const struct na_sim_name *end, bool any,
              const struct na_sim_name *name)
{
    return any || na_sim_name_eq(end, name);
}

static bool
na_sim_rule_link(const struct na_sim_fault_rule *r,
                 const struct na_sim_name *src, const struct na_sim_name *dst)
{
    if (na_sim_end_is(&r->a, r->a_any, src) &&
        na_sim_end_is(&r->b, r->b_any, dst))
        return true;
    return r->both_ways && na_sim_end_is(&r->a, r->a_any, dst) &&
           na_sim_end_is(&r->b, r->b_any, src);
}

static bool
na_sim_rule_matches(const struct na_sim_fault_rule *r,
                    const struct na_sim_name *src,
                    const struct na_sim_name *dst)
{
    switch (r->scope) {
    case NA_SIM_SCOPE_WORLD:
        return true;
    case NA_SIM_SCOPE_LINK:
        return na_sim_rule_link(r, src, dst);
    case NA_SIM_SCOPE_NODE:
        return na_sim_name_eq(&r->a, src) || na_sim_name_eq(&r->a, dst);
    case NA_SIM_SCOPE_PARTITION:
        break;
    }
    return false;
}

/* Whether fault k strikes a trip from src to dst: each matching rule
 * that gives it a probability draws once, until one hits. */
static bool
na_sim_fault_hit(struct na_sim_world *world, const struct na_sim_name *src,
                 const struct na_sim_name *dst, enum na_sim_prob k)
{
    const struct na_sim_profile *prof = world->profile;

    if (prof == NULL)
        return false;
    for (size_t i = 0; i < prof->nrules; i++) {
        const struct na_sim_fault_rule *r = &prof->rules[i];
        uint32_t p = r->params.p[k];

        if (p == 0 || !na_sim_rule_matches(r, src, dst))
            continue;
        if (na_sim_prng_next(world) % NA_SIM_PPB < p) {
            world->fault_counts[NA_SIM_C_PROB0 + k]++;
            return true;
        }
    }
    return false;
}

/* A uniform double in (0, 1), never exactly 0 or 1. */
static double
na_sim_unit(struct na_sim_world *world)
{
    return ((double) (na_sim_prng_next(world) >> 11) + 0.5) *
           (1.0 / 9007199254740992.0);
}

/* One draw of extra delay. Tails are capped at 1000 times the scale so a
 * single unlucky draw cannot push an event past any test's budget. */
static uint64_t
na_sim_jitter_draw(struct na_sim_world *world, const struct na_sim_jitter *j)
{
    double x = 0, cap = (double) j->scale_ns * 1000.0;

    switch (j->dist) {
    case NA_SIM_DIST_NONE:
        return 0;
    case NA_SIM_DIST_UNIFORM:
        return na_sim_prng_next(world) % (j->scale_ns + 1);
    case NA_SIM_DIST_PARETO:
        x = (double) j->scale_ns *
            (pow(na_sim_unit(world), -1.0 / j->shape) - 1.0);
        break;
    case NA_SIM_DIST_LOGNORMAL: {
        double u1 = na_sim_unit(world), u2 = na_sim_unit(world);
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);

        x = (double) j->scale_ns * exp(j->shape * z);
        break;
    }
    }
    if (!(x >= 0))
        x = 0;
    if (x > cap)
        x = cap;
    return (uint64_t) x;
}

/* The partition rule in force on src -> dst now, or NULL. A refusing
 * partition wins over a silent one. */
static const struct na_sim_fault_rule *
na_sim_partitioned(const struct na_sim_world *world,
                   const struct na_sim_name *src, const struct na_sim_name *dst)
{
    const struct na_sim_profile *prof = world->profile;
    const struct na_sim_fault_rule *found = NULL;
    uint64_t now = na_sim_now(world);

    if (prof == NULL)
        return NULL;
    for (size_t i = 0; i < prof->nrules; i++) {
        const struct na_sim_fault_rule *r = &prof->rules[i];

        if (r->scope == NA_SIM_SCOPE_PARTITION && now >= r->from_ns &&
            now < r->until_ns && na_sim_rule_link(r, src, dst)) {
            if (!r->silent)
                return r;
            if (found == NULL || r->until_ns > found->until_ns)
                found = r;
        }
    }
    return found;
}

/* How long a trip held by a silent partition waits before it is tried
 * again: until the partition ends, or an hour of virtual time at a time
 * for one without an end. */
#define NA_SIM_SILENT_RECHECK_NS 3600000000000ull

static uint64_t
na_sim_detect_ns(const struct na_sim_world *world)
{
    const struct na_sim_profile *prof = world->profile;
    uint64_t ns = NA_SIM_DEFAULT_DETECT_NS;

    for (size_t i = 0; prof != NULL && i < prof->nrules; i++)
        if (prof->rules[i].scope == NA_SIM_SCOPE_WORLD &&
            prof->rules[i].params.has_detect)
            ns = prof->rules[i].params.detect_ns;
    return ns;
}

static uint64_t
na_sim_rnr_delay_ns(const struct na_sim_world *world,
                    const struct na_sim_name *src,
                    const struct na_sim_name *dst)
{
    const struct na_sim_profile *prof = world->profile;
    uint64_t ns = NA_SIM_DEFAULT_RNR_DELAY_NS;

    for (size_t i = 0; prof != NULL && i < prof->nrules; i++)
        if (prof->rules[i].params.has_rnr_delay &&
            na_sim_rule_matches(&prof->rules[i], src, dst))
            ns = prof->rules[i].params.rnr_delay_ns;
    return ns;
}

void
na_sim_fault_backlog_profiled(struct na_sim_world *world,
                              const struct na_sim_node *node, size_t *limit,
                              bool *fails)
{
    const struct na_sim_profile *prof = world->profile;

    *limit = world->backlog_limit;
    *fails = world->backlog_full_fails;
    for (size_t i = 0; prof != NULL && i < prof->nrules; i++) {
        const struct na_sim_fault_rule *r = &prof->rules[i];

        if (r->scope != NA_SIM_SCOPE_WORLD &&
            !(r->scope == NA_SIM_SCOPE_NODE &&
              na_sim_name_eq(&r->a, &node->name)))
            continue;
        if (r->params.has_backlog)
            *limit = r->params.backlog;
        if (r->params.when_full >= 0)
            *fails = r->params.when_full == NA_SIM_BACKLOG_FAIL;
    }
}

static size_t
na_sim_fifo_slot(const struct na_sim_fifo *table, size_t cap,
                 const struct na_sim_name *src, const struct na_sim_name *dst)
{
    size_t i =
        (na_sim_name_hash(src) * 31u + na_sim_name_hash(dst)) & (cap - 1);

    while (table[i].src.len != 0 && !(na_sim_name_eq(&table[i].src, src) &&
                                      na_sim_name_eq(&table[i].dst, dst)))
        i = (i + 1) & (cap - 1);
    return i;
}

/* The link's entry, made on first use; NULL when out of memory. A table
 * of the links, not a list: a large world under a profile uses thousands. */
static struct na_sim_fifo *
na_sim_fifo_find(struct na_sim_world *world, const struct na_sim_name *src,
                 const struct na_sim_name *dst)
{
    size_t i;

    if ((world->fifo_len + 1) * 2 > world->fifo_cap) {
        size_t cap = world->fifo_cap ? world->fifo_cap * 2 : 32;
        struct na_sim_fifo *table = calloc(cap, sizeof(*table));

        if (table == NULL)
            return NULL;
        for (size_t k = 0; k < world->fifo_cap; k++)
            if (world->fifo[k].src.len != 0)
                table[na_sim_fifo_slot(table, cap, &world->fifo[k].src,
                                       &world->fifo[k].dst)] = world->fifo[k];
        free(world->fifo);
        world->fifo = table;
        world->fifo_cap = cap;
    }
    i = na_sim_fifo_slot(world->fifo, world->fifo_cap, src, dst);
    if (world->fifo[i].src.len == 0) {
        world->fifo[i].src = *src;
        world->fifo[i].dst = *dst;
        world->fifo[i].last = 0;
        world->fifo_len++;
    }
    return &world->fifo[i];
}

/* Keep messages on one link in order unless a reorder fault lets this
 * one overtake: jitter alone must not reorder a link. */
static void
na_sim_fifo_clamp(struct na_sim_world *world, const struct na_sim_name *src,
                  const struct na_sim_name *dst, uint64_t *when)
{
    struct na_sim_fifo *f = na_sim_fifo_find(world, src, dst);

    if (f == NULL)
        return; /* ordering is then only as good as the timing */
    if (*when < f->last && !na_sim_fault_hit(world, src, dst, NA_SIM_P_REORDER))
        *when = f->last;
    if (*when > f->last)
        f->last = *when;
}

/*
 * Decision points.
 */

na_return_t
na_sim_fault_on_post_profiled(struct na_sim_world *world,
                              const struct na_op_id *op,
                              const struct na_sim_name *dst, uint64_t *when)
{
    const struct na_sim_profile *prof = world->profile;
    const struct na_sim_name *src = &op->node->name;
    uint64_t extra = 0;

    if (prof == NULL || when == NULL)
        return NA_SUCCESS;
    if (na_sim_fault_hit(world, src, dst, NA_SIM_P_AGAIN)) {
        na_sim_fault_trace(world, op, "again", src->str, dst->str, op->size);
        return NA_AGAIN;
    }
    for (size_t i = 0; i < prof->nrules; i++) {
        const struct na_sim_fault_rule *r = &prof->rules[i];

        if (!na_sim_rule_matches(r, src, dst))
            continue;
        extra = na_sim_add_sat(extra, r->params.latency_ns);
        if (r->params.jitter.dist != NA_SIM_DIST_NONE) {
            uint64_t j = na_sim_jitter_draw(world, &r->params.jitter);

            if (j > 0)
                world->fault_counts[NA_SIM_C_JITTER]++;
            extra = na_sim_add_sat(extra, j);
        }
    }
    *when = na_sim_add_sat(*when, extra);
    if (op->type == NA_CB_SEND_UNEXPECTED || op->type == NA_CB_SEND_EXPECTED)
        na_sim_fifo_clamp(world, src, dst, when);
    return NA_SUCCESS;
}

static struct na_sim_fault
na_sim_fault_fail(na_return_t ret, uint64_t delay)
{
    return (struct na_sim_fault){
        .verdict = NA_SIM_V_FAIL, .ret = ret, .delay = delay};
}

struct na_sim_fault
na_sim_fault_on_deliver_checked(struct na_sim_world *world,
                                const struct na_op_id *op,
                                const struct na_sim_node *target)
{
    struct na_sim_fault f = {.verdict = NA_SIM_V_DELIVER, .ret = NA_SUCCESS};
    const struct na_sim_name *src = &op->node->name, *dst = &op->peer->name;
    const struct na_sim_fault_rule *part;
    bool send =
        op->type == NA_CB_SEND_UNEXPECTED || op->type == NA_CB_SEND_EXPECTED;

    if (target != NULL && target->crashed) {
        world->fault_counts[NA_SIM_C_CRASHED_PEER]++;
        na_sim_fault_trace(world, op, "crashed_peer", src->str, dst->str,
                           op->size);
        return na_sim_fault_fail(NA_HOSTUNREACH, na_sim_detect_ns(world));
    }
    /* An address remembers which incarnation it was looked up for; the
     * node that now holds the name is someone else. */
    if (target != NULL && op->peer->incarnation != 0 &&
        op->peer->incarnation != target->incarnation) {
        world->fault_counts[NA_SIM_C_FENCED]++;
        na_sim_fault_trace(world, op, "fenced", src->str, dst->str, op->size);
        return na_sim_fault_fail(NA_HOSTUNREACH, 0);
    }
    if (world->profile == NULL)
        return f;
    part = na_sim_partitioned(world, src, dst);
    if (part == NULL && op->type == NA_CB_GET)
        part = na_sim_partitioned(world, dst, src);
    if (part != NULL && part->silent) {
        /* Nothing is refused or lost: the trip waits for the link, as tcp
         * retransmits until the path returns. */
        uint64_t now = na_sim_now(world);

        world->fault_counts[NA_SIM_C_PARTITION]++;
        na_sim_fault_trace(world, op, "partition_silent", src->str, dst->str,
                           op->size);
        f.verdict = NA_SIM_V_RETRY;
        f.delay = part->until_ns != UINT64_MAX && part->until_ns > now
                      ? part->until_ns - now
                      : NA_SIM_SILENT_RECHECK_NS;
        return f;
    }
    if (part != NULL) {
        world->fault_counts[NA_SIM_C_PARTITION]++;
        na_sim_fault_trace(world, op, "partition", src->str, dst->str,
                           op->size);
        return na_sim_fault_fail(NA_HOSTUNREACH, na_sim_detect_ns(world));
    }
    if (send) {
        if (na_sim_fault_hit(world, src, dst, NA_SIM_P_SEND_ERR)) {
            na_sim_fault_trace(world, op, "send_err", src->str, dst->str,
                               op->size);
            return na_sim_fault_fail(NA_IO_ERROR, 0);
        }
        if (na_sim_fault_hit(world, src, dst, NA_SIM_P_LOSS)) {
            na_sim_fault_trace(world, op, "loss", src->str, dst->str, op->size);
            f.verdict = NA_SIM_V_DROP;
            return f;
        }
        if (op->type == NA_CB_SEND_UNEXPECTED && target != NULL &&
            na_sim_fault_hit(world, src, dst, NA_SIM_P_RNR)) {
            size_t limit;
            bool fails;

            na_sim_fault_backlog(world, target, &limit, &fails);
            na_sim_fault_trace(world, op, "rnr", src->str, dst->str, op->size);
            if (fails)
                return na_sim_fault_fail(NA_AGAIN, 0);
            f.verdict = NA_SIM_V_RETRY;
            f.delay = na_sim_rnr_delay_ns(world, src, dst);
            return f;
        }
        f.dup = na_sim_fault_hit(world, src, dst, NA_SIM_P_DUP);
        f.trunc =
            op->size > 0 && na_sim_fault_hit(world, src, dst, NA_SIM_P_TRUNC);
        f.corrupt =
            op->size > 0 && na_sim_fault_hit(world, src, dst, NA_SIM_P_CORRUPT);
    } else {
        if (na_sim_fault_hit(world, src, dst, NA_SIM_P_RMA_ERR)) {
            na_sim_fault_trace(world, op, "rma_err", src->str, dst->str,
                               op->size);
            return na_sim_fault_fail(NA_IO_ERROR, 0);
        }
        if (na_sim_fault_hit(world, src, dst, NA_SIM_P_REVOKE)) {
            na_sim_fault_trace(world, op, "revoke", src->str, dst->str,
                               op->size);
            return na_sim_fault_fail(NA_ACCESS, 0);
        }
        f.partial =
            op->size > 0 && na_sim_fault_hit(world, src, dst, NA_SIM_P_PARTIAL);
    }
    if (f.dup || f.trunc || f.corrupt || f.partial)
        f.bits = na_sim_prng_next(world);
    return f;
}

void
na_sim_fault_fail_later(struct na_sim_world *world, struct na_op_id *op,
                        na_return_t ret, uint64_t delay)
{
    op->fault_ret = ret;
    if (delay == 0 ||
        na_sim_schedule(world, na_sim_add_sat(na_sim_now(world), delay),
                        NA_SIM_EV_FAIL, op) != NA_SUCCESS)
        na_sim_op_complete(world, op, ret);
}

void
na_sim_fault_fail_execute(struct na_sim_world *world, struct na_op_id *op)
{
    na_sim_op_complete(world, op, op->canceled ? NA_CANCELED : op->fault_ret);
}

/*
 * Crash, restart, fencing.
 */

static void
na_sim_freeze(struct na_sim_world *world, struct na_op_id *op)
{
    world->fault_counts[NA_SIM_C_FROZEN]++;
    na_sim_fault_trace(world, op, "frozen", op->node->name.str,
                       op->peer ? op->peer->name.str : "*", op->size);
    na_op_list_append(&op->node->frozen, op);
}

bool
na_sim_fault_intercept_checked(struct na_sim_world *world, struct na_op_id *op)
{
    bool outbound = op->type == NA_CB_SEND_UNEXPECTED ||
                    op->type == NA_CB_SEND_EXPECTED || op->type == NA_CB_PUT ||
                    op->type == NA_CB_GET;

    if (op->canceled)
        return false;
    if (op->node->crashed) {
        na_sim_freeze(world, op);
        return true;
    }
    if (outbound && op->src_incarnation != op->node->incarnation) {
        world->fault_counts[NA_SIM_C_FENCED]++;
        na_sim_fault_trace(world, op, "fenced", op->node->name.str,
                           op->peer ? op->peer->name.str : "*", op->size);
        na_sim_op_complete(world, op, NA_HOSTUNREACH);
        return true;
    }
    return false;
}

static void
na_sim_node_crash_locked(struct na_sim_world *world, struct na_sim_node *node)
{
    uint64_t detect = na_sim_detect_ns(world);
    struct na_sim_node *other;
    struct na_sim_ctx *ctx;
    struct na_op_id *op, *next;

    world->fault_counts[NA_SIM_C_CRASH]++;
    na_sim_fault_trace(world, NULL, "crash", node->name.str, node->name.str, 0);
    node->crashed = true;
    TAILQ_FOREACH(ctx, &node->contexts, link)
    {
        /* Messages queued in the dead process's memory are gone. */
        na_sim_ctx_free_msgs(ctx);
        /* Senders held back by its full backlog learn it died. */
        while ((op = na_op_list_first(&ctx->blocked)) != NULL) {
            na_op_list_remove(op);
            na_sim_fault_fail_later(world, op, NA_HOSTUNREACH, detect);
        }
    }
    /* Its own sends held back by others' backlogs never complete. */
    TAILQ_FOREACH(other, &world->nodes, link)
    TAILQ_FOREACH(ctx, &other->contexts, link)
    for (op = na_op_list_first(&ctx->blocked); op != NULL; op = next) {
        next = na_op_list_next(op);
        if (op->node != node)
            continue;
        na_op_list_remove(op);
        na_sim_freeze(world, op);
    }
}

/* The in-process stand-in for a restarted process: the node takes a new
 * incarnation, so addresses of the old one are fenced off, and the
 * operations held back since the crash complete with NA_HOSTUNREACH, which
 * lets the library above release what they held. Receives that were
 * posted and never matched stay posted, as a new process would post them
 * again. */
static void
na_sim_node_restart_locked(struct na_sim_world *world, struct na_sim_node *node)
{
    struct na_op_id *op;

    world->fault_counts[NA_SIM_C_RESTART]++;
    na_sim_fault_trace(world, NULL, "restart", node->name.str, node->name.str,
                       0);
    node->crashed = false;
    node->incarnation = world->next_incarnation++;
    while ((op = na_op_list_first(&node->frozen)) != NULL) {
        na_op_list_remove(op);
        free(op->msg);
        op->msg = NULL;
        na_sim_op_complete(world, op, NA_HOSTUNREACH);
    }
}

void
na_sim_fault_action_run(struct na_sim_world *world, uint64_t arg)
{
    const struct na_sim_profile *prof = world->profile;
    const struct na_sim_fault_action *act;
    const struct na_sim_fault_rule *r;
    struct na_sim_node *node;

    if (prof == NULL || (arg >> 16) != world->profile_gen ||
        (arg & 0xffff) >= prof->nactions)
        return; /* from a profile that was replaced since */
    act = &prof->actions[arg & 0xffff];
    r = &prof->rules[act->rule];
    switch (act->kind) {
    case NA_SIM_ACT_CRASH:
    case NA_SIM_ACT_RESTART:
        node = na_sim_node_find(world, &r->a);
        if (node == NULL) {
            na_sim_fault_trace(world, NULL, "absent", r->a.str, r->a.str, 0);
            return;
        }
        if (act->kind == NA_SIM_ACT_RESTART)
            na_sim_node_restart_locked(world, node);
        else if (!node->crashed)
            na_sim_node_crash_locked(world, node);
        return;
    case NA_SIM_ACT_PARTITION_ON:
    case NA_SIM_ACT_PARTITION_OFF:
        na_sim_fault_trace(
            world, NULL,
            act->kind == NA_SIM_ACT_PARTITION_ON
                ? (r->both_ways ? "partition_on:both" : "partition_on")
                : "partition_off",
            r->a_any ? "*" : r->a.str, r->b_any ? "*" : r->b.str, 0);
        return;
    }
}

/* Queue the profile's actions; those already in the past run now. */
static na_return_t
na_sim_fault_arm(struct na_sim_world *world)
{
    const struct na_sim_profile *prof = world->profile;
    uint64_t now = na_sim_now(world);

    for (size_t i = 0; prof != NULL && i < prof->nactions; i++) {
        uint64_t t = prof->actions[i].time_ns;
        na_return_t ret = na_sim_schedule_action(
            world, t > now ? t : now, (world->profile_gen << 16) | i);

        if (ret != NA_SUCCESS)
            return ret;
    }
    return NA_SUCCESS;
}

void
na_sim_fault_reset(struct na_sim_world *world)
{
    memset(world->fault_counts, 0, sizeof(world->fault_counts));
    if (world->fifo != NULL)
        memset(world->fifo, 0, world->fifo_cap * sizeof(*world->fifo));
    world->fifo_len = 0;
    world->profile_gen++;
    (void) na_sim_fault_arm(world);
}

void
na_sim_fault_free(struct na_sim_world *world)
{
    free(world->profile);
    world->profile = NULL;
    free(world->fifo);
    world->fifo = NULL;
    world->fifo_len = world->fifo_cap = 0;
}

/* Take ownership of profile (NULL: no faults) and arm its actions. */
na_return_t
na_sim_fault_install(struct na_sim_world *world, struct na_sim_profile *profile)
{
    free(world->profile);
    world->profile = profile;
    world->profile_gen++;
    return na_sim_fault_arm(world);
}

/*
 * The control API (include/na_sim.h).
 */

na_return_t
na_sim_fault_validate(const char *spec, char *err, size_t err_size)
{
    struct na_sim_profile *prof = calloc(1, sizeof(*prof));
    na_return_t ret;

    if (prof == NULL)
        return NA_NOMEM;
    ret = na_sim_profile_parse(spec, prof, err, err_size);
    free(prof);
    return ret;
}

static na_return_t
na_sim_fault_apply(const char *spec, bool append, char *err, size_t err_size)
{
    struct na_sim_profile *prof = calloc(1, sizeof(*prof));
    struct na_sim_world *world;
    na_return_t ret;

    if (prof == NULL)
        return NA_NOMEM;
    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world == NULL) {
        ret = NA_NOENTRY;
        goto out;
    }
    pthread_mutex_lock(&world->lock);
    if (append && world->profile != NULL)
        memcpy(prof, world->profile, sizeof(*prof));
    ret = na_sim_profile_parse(spec, prof, err, err_size);
    if (ret == NA_SUCCESS) {
        if (prof->nrules == 0) { /* nothing left: a perfect fabric */
            free(prof);
            prof = NULL;
        }
        ret = na_sim_fault_install(world, prof);
        prof = NULL;
    }
    pthread_mutex_unlock(&world->lock);
out:
    pthread_mutex_unlock(&na_sim_global_lock);
    free(prof);
    return ret;
}

na_return_t
na_sim_fault_set(const char *spec, char *err, size_t err_size)
{
    return na_sim_fault_apply(spec, false, err, err_size);
}

na_return_t
na_sim_fault_add(const char *spec, char *err, size_t err_size)
{
    return na_sim_fault_apply(spec, true, err, err_size);
}

na_return_t
na_sim_fault_clear(void)
{
    return na_sim_fault_apply(NULL, false, NULL, 0);
}

static na_return_t
na_sim_node_act(const char *name, bool crash)
{
    struct na_sim_name n;
    struct na_sim_world *world;
    struct na_sim_node *node;
    na_return_t ret = NA_SUCCESS;

    if (name == NULL || !na_sim_name_from_string(name, &n))
        return NA_INVALID_ARG;
    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world == NULL) {
        pthread_mutex_unlock(&na_sim_global_lock);
        return NA_NOENTRY;
    }
    pthread_mutex_lock(&world->lock);
    node = na_sim_node_find(world, &n);
    if (node == NULL)
        ret = NA_NOENTRY;
    else {
        uint64_t before = world->completions;

        if (!crash)
            na_sim_node_restart_locked(world, node);
        else if (!node->crashed)
            na_sim_node_crash_locked(world, node);
        if (world->completions != before)
            na_sim_wake(world);
    }
    pthread_mutex_unlock(&world->lock);
    pthread_mutex_unlock(&na_sim_global_lock);
    return ret;
}

na_return_t
na_sim_node_crash(const char *name)
{
    return na_sim_node_act(name, true);
}

na_return_t
na_sim_node_restart(const char *name)
{
    return na_sim_node_act(name, false);
}

static const char *const na_sim_counter_names[NA_SIM_C_COUNT - NA_SIM_P_COUNT] =
    {"crash",  "restart", "partition", "crashed_peer",
     "fenced", "frozen",  "jitter"};

uint64_t
na_sim_fault_count(const char *kind)
{
    struct na_sim_world *world;
    uint64_t n = 0;
    bool all = kind == NULL || kind[0] == '\0' || strcmp(kind, "*") == 0;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL) {
        pthread_mutex_lock(&world->lock);
        for (int i = 0; i < NA_SIM_C_COUNT; i++) {
            const char *name = i < NA_SIM_P_COUNT
                                   ? na_sim_prob_name((enum na_sim_prob) i)
                                   : na_sim_counter_names[i - NA_SIM_P_COUNT];

            if (all || strcmp(kind, name) == 0)
                n += world->fault_counts[i];
        }
        pthread_mutex_unlock(&world->lock);
    }
    pthread_mutex_unlock(&na_sim_global_lock);
    return n;
}
