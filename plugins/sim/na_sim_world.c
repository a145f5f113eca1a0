/*
 * The simulated world: its lifetime, virtual clock, event heap, PRNG, link
 * model. Everything here runs under the world lock except the
 * lifetime functions, which run under na_sim_global_lock.
 */
#include "na_sim_fault.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t na_sim_global_lock = PTHREAD_MUTEX_INITIALIZER;

/* Guarded by na_sim_global_lock. */
static struct na_sim_world *na_sim_world_g;
static uint64_t na_sim_world_uid_g;
static bool na_sim_seed_explicit_g;
static uint64_t na_sim_seed_g;

/*
 * Seeds.
 */

/* QS_SIM_SEED accepts decimal or 0x-prefixed hexadecimal; anything else is
 * reported once per world and the default is used, so that a typo never
 * silently turns into some other reproducible seed. */
static uint64_t
na_sim_seed_from_env(void)
{
    const char *env = getenv(NA_SIM_SEED_ENV);
    char *end = NULL;
    unsigned long long v;

    if (env == NULL || *env == '\0')
        return NA_SIM_DEFAULT_SEED;
    errno = 0;
    if (env[0] == '0' && (env[1] == 'x' || env[1] == 'X'))
        v = strtoull(env + 2, &end, 16);
    else
        v = strtoull(env, &end, 10);
    if (errno != 0 || end == NULL || *end != '\0' || env[0] == '-' ||
        env[0] == '+' || end == env) {
        qs_log("sim", QS_LOG_ERROR, "%s=\"%s\" is not a number, using %" PRIu64,
               NA_SIM_SEED_ENV, env, (uint64_t) NA_SIM_DEFAULT_SEED);
        return NA_SIM_DEFAULT_SEED;
    }
    return (uint64_t) v;
}

uint64_t
na_sim_seed_next(void)
{
    return na_sim_seed_explicit_g ? na_sim_seed_g : na_sim_seed_from_env();
}

void
na_sim_seed_set_next(uint64_t seed, bool explicit_seed)
{
    na_sim_seed_g = seed;
    na_sim_seed_explicit_g = explicit_seed;
}

/*
 * Lifetime.
 */

struct na_sim_world *
na_sim_world_current(void)
{
    return na_sim_world_g;
}

/* Return the world to its initial state under a new seed. Configuration
 * (links, backlog bound, whether lines are kept) survives: it describes the
 * experiment, not its run. */
void
na_sim_world_reset_state(struct na_sim_world *world, uint64_t seed)
{
    world->seed = seed;
    world->prng = seed;
    atomic_store_explicit(&world->now, 0, memory_order_relaxed);
    world->next_seq = 1;
    world->next_incarnation = 1;
    world->next_auto_name = 0;
    world->next_key = 1;
    world->heap_len = 0;
    for (size_t i = 0; i < NA_SIM_LANES; i++)
        world->lanes[i].len = 0;
    world->events = 0;
    world->lane_events = 0;
    world->first_time = UINT64_MAX;
    world->trace_hash = NA_SIM_TRACE_HASH_BASIS;
    world->trace_lines = 0;
    world->trace_len = 0;
    if (world->trace_fd >= 0)
        na_sim_trace_out_header(world);
    /* The fault profile is configuration too; its scheduled actions are
     * queued again on the fresh clock. */
    na_sim_fault_reset(world);
}

/* QS_SIM_FAULTS: a profile for every world created while it is set. A
 * malformed one is an error, not a silently perfect fabric. */
static na_return_t
na_sim_faults_from_env(struct na_sim_world *world)
{
    const char *env = getenv(NA_SIM_FAULTS_ENV);
    struct na_sim_profile *prof;
    char err[128];
    na_return_t ret;

    if (env == NULL || *env == '\0')
        return NA_SUCCESS;
    prof = calloc(1, sizeof(*prof));
    if (prof == NULL)
        return NA_NOMEM;
    ret = na_sim_profile_parse(env, prof, err, sizeof(err));
    if (ret != NA_SUCCESS) {
        qs_log("sim", QS_LOG_ERROR, "%s is malformed: %s", NA_SIM_FAULTS_ENV,
               err);
        free(prof);
        return ret;
    }
    return na_sim_fault_install(world, prof);
}

/* QS_SIM_HANG_S: a bound on virtual time, in seconds. A program whose
 * world's clock passes it is taken as hung (a wait with no deadline for
 * something that never comes moves the clock in jumps of its progress
 * timeouts, thousands of virtual seconds per real second), so a sweep
 * learns of a hang in milliseconds instead of waiting out a wall-clock
 * timeout. Malformed or non-positive: reported once, and no bound. */
static uint64_t
na_sim_hang_from_env(void)
{
    const char *env = getenv(NA_SIM_HANG_ENV);
    char *end = NULL;
    double s;

    if (env == NULL || *env == '\0')
        return 0;
    errno = 0;
    s = strtod(env, &end);
    if (errno != 0 || end == env || *end != '\0' || !(s > 0) || s > 1e9) {
        qs_log("sim", QS_LOG_ERROR,
               "%s=\"%s\" is not a number of seconds in (0, 1e9]: no bound",
               NA_SIM_HANG_ENV, env);
        return 0;
    }
    return (uint64_t) (s * 1e9) + 1;
}

/* QS_SIM_PREFETCH: "1" prefetches in every world, "0" in none; unset or
 * empty, from NA_SIM_PREFETCH_NODES nodes. Anything else is reported once
 * and left at the default. */
static size_t
na_sim_prefetch_from_env(void)
{
    const char *env = getenv(NA_SIM_PREFETCH_ENV);

    if (env == NULL || *env == '\0')
        return NA_SIM_PREFETCH_NODES;
    if (strcmp(env, "1") == 0)
        return 0;
    if (strcmp(env, "0") == 0)
        return SIZE_MAX;
    qs_log("sim", QS_LOG_ERROR,
           "%s=\"%s\" is neither 0 nor 1: prefetching from %d nodes",
           NA_SIM_PREFETCH_ENV, env, NA_SIM_PREFETCH_NODES);
    return NA_SIM_PREFETCH_NODES;
}

/* The clock passed QS_SIM_HANG_S: say so on stderr and in the trace, and
 * end the process with NA_SIM_HANG_EXIT (qs-sweep counts it as a hang).
 * Called with the world lock held; nothing is cleaned up, as for a run
 * killed at a wall-clock timeout. */
_Noreturn void
na_sim_hang_exit(struct na_sim_world *world, uint64_t t)
{
    char line[200];

    snprintf(line, sizeof(line),
             "# hung: virtual time %.3f s passed %s=%.3f s, seed %" PRIu64 "\n",
             (double) t * 1e-9, NA_SIM_HANG_ENV,
             (double) (world->hang_after_ns - 1) * 1e-9, world->seed);
    na_sim_trace_out_note(world, line);
    qs_log("sim", QS_LOG_ERROR,
           "virtual time %.3f s passed %s: the program is taken as hung "
           "(seed %" PRIu64 "); exit status %d",
           (double) t * 1e-9, NA_SIM_HANG_ENV, world->seed, NA_SIM_HANG_EXIT);
    fflush(NULL);
    _exit(NA_SIM_HANG_EXIT);
}

static void na_sim_world_destroy(struct na_sim_world *world);

static na_return_t
na_sim_world_create(struct na_sim_world **out)
{
    struct na_sim_world *world = calloc(1, sizeof(*world));
    pthread_condattr_t attr;
    na_return_t ret;

    if (world == NULL)
        return NA_NOMEM;
    pthread_mutex_init(&world->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&world->cond, &attr);
    pthread_condattr_destroy(&attr);
    TAILQ_INIT(&world->nodes);
    TAILQ_INIT(&world->ready);
    TAILQ_INIT(&world->queued);
    world->link_default.latency_ns = NA_SIM_DEFAULT_LATENCY_NS;
    world->link_default.bandwidth = NA_SIM_DEFAULT_BANDWIDTH;
    world->backlog_limit = NA_SIM_DEFAULT_BACKLOG;
    world->trace_fd = -1;
    world->uid = ++na_sim_world_uid_g;
    world->hang_after_ns = na_sim_hang_from_env();
    world->prefetch_from = na_sim_prefetch_from_env();
    na_sim_world_reset_state(world, na_sim_seed_next());
    na_sim_trace_out_open(world);
    ret = na_sim_faults_from_env(world);
    if (ret != NA_SUCCESS) {
        na_sim_world_destroy(world);
        return ret;
    }
    *out = world;
    return NA_SUCCESS;
}

static void
na_sim_world_destroy(struct na_sim_world *world)
{
    /* Classes are gone, so no context, op or region remains: the heap
     * holds no event (pending ops block context_destroy). */
    na_sim_trace_out_close(world);
    free(world->node_table);
    free(world->heap);
    for (size_t i = 0; i < NA_SIM_LANES; i++)
        free(world->lanes[i].ev);
    free(world->regions);
    free(world->links);
    free(world->trace_buf);
    na_sim_fault_free(world);
    pthread_cond_destroy(&world->cond);
    pthread_mutex_destroy(&world->lock);
    free(world);
}

na_return_t
na_sim_world_ref(struct na_sim_world **world)
{
    if (na_sim_world_g == NULL) {
        na_return_t ret = na_sim_world_create(&na_sim_world_g);

        if (ret != NA_SUCCESS)
            return ret;
    }
    pthread_mutex_lock(&na_sim_world_g->lock);
    na_sim_world_g->refs++;
    pthread_mutex_unlock(&na_sim_world_g->lock);
    *world = na_sim_world_g;
    return NA_SUCCESS;
}

void
na_sim_world_unref(struct na_sim_world *world)
{
    unsigned int refs;

    pthread_mutex_lock(&world->lock);
    refs = --world->refs;
    pthread_mutex_unlock(&world->lock);
    if (refs == 0) {
        if (na_sim_world_g == world)
            na_sim_world_g = NULL;
        na_sim_world_destroy(world);
    }
}

/*
 * Clock and PRNG.
 */

/* splitmix64: tiny, fast, and good enough to draw keys and, later, fault
 * decisions. Its output depends only on the seed and the draw count. */
uint64_t
na_sim_prng_next(struct na_sim_world *world)
{
    uint64_t z = (world->prng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/*
 * Events, in (time, seq) order. Sequence numbers are unique, so the order
 * is total and never depends on insertion details: the next event is the
 * least of the heap's top and the lanes' heads, whichever structure holds
 * it.
 *
 * Most events come due a fixed delay after they are scheduled (a message
 * of one size on one link), and the clock only moves forward, so events of
 * one delay are scheduled in time order. Each such event goes to the tail
 * of the lane of its delay in constant time, where a heap of the 4,000
 * events of a 1,000-node world took a dozen levels each way. An event whose
 * delay has no lane takes a free one, else joins the lane with the latest
 * tail it does not come before (na_sim_lane_for()); one that would come
 * before its lane's tail (an equal time with a smaller sequence number),
 * or that no lane takes, goes to the heap. So does every event while fewer than
 * NA_SIM_LANE_FROM are queued: a heap that small costs less than a look at the
 * lanes.
 */
#define NA_SIM_LANE_FROM 32

static inline bool
na_sim_event_before(const struct na_sim_event *a, const struct na_sim_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static inline struct na_sim_event *
na_sim_lane_at(const struct na_sim_lane *lane, size_t i)
{
    return &lane->ev[(lane->head + i) & (lane->cap - 1)];
}

/* Room for one more event at the lane's tail. */
static na_return_t
na_sim_lane_reserve(struct na_sim_lane *lane)
{
    struct na_sim_event *ev;
    size_t cap, i;

    if (lane->len < lane->cap)
        return NA_SUCCESS;
    cap = lane->cap ? lane->cap * 2 : 64;
    ev = malloc(cap * sizeof(*ev));
    if (ev == NULL)
        return NA_NOMEM;
    for (i = 0; i < lane->len; i++)
        ev[i] = *na_sim_lane_at(lane, i);
    free(lane->ev);
    lane->ev = ev;
    lane->cap = cap;
    lane->head = 0;
    return NA_SUCCESS;
}

/* The lane an event of this delay may join at the tail, or NULL: the lane
 * of its delay if the event does not come before its tail; else an empty
 * lane, which takes the delay; else, when no lane has the delay, the lane
 * with the latest tail the event does not come before (delays that vary,
 * as under jitter, then still find a lane for most events). */
static struct na_sim_lane *
na_sim_lane_for(struct na_sim_world *world, const struct na_sim_event *ev,
                uint64_t delay)
{
    struct na_sim_lane *empty = NULL, *fit = NULL;
    const struct na_sim_event *fit_tail = NULL;
    size_t i;

    for (i = 0; i < NA_SIM_LANES; i++) {
        struct na_sim_lane *lane = &world->lanes[i];
        const struct na_sim_event *tail;

        if (lane->len == 0) {
            if (empty == NULL)
                empty = lane;
            continue;
        }
        tail = na_sim_lane_at(lane, lane->len - 1);
        if (lane->delay == delay)
            return na_sim_event_before(ev, tail) ? NULL : lane;
        if (!na_sim_event_before(ev, tail) &&
            (fit_tail == NULL || na_sim_event_before(fit_tail, tail))) {
            fit = lane;
            fit_tail = tail;
        }
    }
    if (empty != NULL) {
        empty->delay = delay;
        return empty;
    }
    return fit;
}

static na_return_t
na_sim_heap_push(struct na_sim_world *world, const struct na_sim_event *ev)
{
    struct na_sim_event *heap = world->heap;
    size_t i;

    if (world->heap_len == world->heap_cap) {
        size_t cap = world->heap_cap ? world->heap_cap * 2 : 64;

        heap = realloc(world->heap, cap * sizeof(*heap));
        if (heap == NULL)
            return NA_NOMEM;
        world->heap = heap;
        world->heap_cap = cap;
    }
    i = world->heap_len++;
    heap[i] = *ev;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        struct na_sim_event tmp;

        if (!na_sim_event_before(&heap[i], &heap[parent]))
            break;
        tmp = heap[i];
        heap[i] = heap[parent];
        heap[parent] = tmp;
        i = parent;
    }
    return NA_SUCCESS;
}

na_return_t
na_sim_schedule_arg(struct na_sim_world *world, uint64_t time,
                    enum na_sim_event_kind kind, struct na_op_id *op,
                    uint64_t arg)
{
    struct na_sim_event ev = {.time = time,
                              .seq = op ? op->seq : world->next_seq++,
                              .kind = kind,
                              .op = op,
                              .arg = arg};
    uint64_t now = na_sim_now(world);
    struct na_sim_lane *lane =
        world->events < NA_SIM_LANE_FROM
            ? NULL
            : na_sim_lane_for(world, &ev, time > now ? time - now : 0);
    unsigned int from = NA_SIM_LANES;
    na_return_t ret;

    if (lane != NULL && na_sim_lane_reserve(lane) == NA_SUCCESS) {
        *na_sim_lane_at(lane, lane->len++) = ev;
        world->lane_events++;
        from = (unsigned int) (lane - world->lanes);
        ret = NA_SUCCESS;
    } else {
        ret = na_sim_heap_push(world, &ev);
    }
    if (ret != NA_SUCCESS)
        return ret;
    /* The noted next event stays where it was unless this one comes
     * first: a later event joins a lane behind its head, or the heap below
     * its top. */
    if (world->events++ == 0 || ev.time < world->first_time ||
        (ev.time == world->first_time && ev.seq < world->first_seq)) {
        world->first_time = ev.time;
        world->first_seq = ev.seq;
        world->first_from = from;
    }
    return NA_SUCCESS;
}

/* Scheduled fault actions are events too, so the clock stops at them and
 * they take their place in the (time, seq) order. */
na_return_t
na_sim_schedule_action(struct na_sim_world *world, uint64_t time, uint64_t arg)
{
    return na_sim_schedule_arg(world, time, NA_SIM_EV_ACTION, NULL, arg);
}

static struct na_sim_event
na_sim_heap_pop(struct na_sim_world *world)
{
    struct na_sim_event *heap = world->heap;
    struct na_sim_event top = heap[0];
    size_t len = --world->heap_len, i = 0;

    heap[0] = heap[len];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct na_sim_event tmp;

        if (l < len && na_sim_event_before(&heap[l], &heap[m]))
            m = l;
        if (r < len && na_sim_event_before(&heap[r], &heap[m]))
            m = r;
        if (m == i)
            break;
        tmp = heap[i];
        heap[i] = heap[m];
        heap[m] = tmp;
        i = m;
    }
    return top;
}

/* Find the next event (world->events > 0), the least of the heap's top
 * and the lanes' heads, and note it: its time and sequence number, and
 * where it is (a lane's index, or NA_SIM_LANES for the heap). */
static void
na_sim_event_find_next(struct na_sim_world *world)
{
    const struct na_sim_event *best =
        world->heap_len > 0 ? &world->heap[0] : NULL;
    unsigned int from = NA_SIM_LANES;

    if (world->lane_events > 0) {
        for (unsigned int i = 0; i < NA_SIM_LANES; i++) {
            const struct na_sim_lane *lane = &world->lanes[i];

            if (lane->len > 0) {
                const struct na_sim_event *head = na_sim_lane_at(lane, 0);

                if (best == NULL || na_sim_event_before(head, best)) {
                    best = head;
                    from = i;
                }
            }
        }
    }
    world->first_time = best->time;
    world->first_seq = best->seq;
    world->first_from = from;
}

/* Take the next event (world->events > 0) and find the one after it. */
static struct na_sim_event
na_sim_event_take(struct na_sim_world *world)
{
    struct na_sim_event ev;

    world->events--;
    if (world->first_from == NA_SIM_LANES) {
        ev = na_sim_heap_pop(world);
    } else {
        struct na_sim_lane *lane = &world->lanes[world->first_from];

        ev = *na_sim_lane_at(lane, 0);
        lane->head = (lane->head + 1) & (lane->cap - 1);
        lane->len--;
        world->lane_events--;
    }
    if (world->events > 0)
        na_sim_event_find_next(world);
    else
        world->first_time = UINT64_MAX;
    return ev;
}

bool
na_sim_event_next_time(const struct na_sim_world *world, uint64_t *time)
{
    if (world->events == 0)
        return false;
    *time = world->first_time;
    return true;
}

static void
na_sim_dispatch(struct na_sim_world *world, const struct na_sim_event *ev)
{
    if (ev->kind == NA_SIM_EV_ACTION) {
        na_sim_fault_action_run(world, ev->arg);
        return;
    }
    /* Crashed nodes and old incarnations are dealt with before any
     * operation runs. */
    if (na_sim_fault_intercept(world, ev->op))
        return;
    switch (ev->kind) {
    case NA_SIM_EV_MSG:
        na_sim_msg_deliver(world, ev->op);
        break;
    case NA_SIM_EV_RMA:
        na_sim_rma_execute(world, ev->op);
        break;
    case NA_SIM_EV_LOCAL:
        na_sim_msg_local(world, ev->op);
        break;
    case NA_SIM_EV_FAIL:
        na_sim_fault_fail_execute(world, ev->op);
        break;
    case NA_SIM_EV_ACTION:
        break;
    }
}

/* The event k places after the next one in the next one's lane, or NULL:
 * a guess at what runs soon, for prefetching only. */
static inline const struct na_sim_event *
na_sim_event_peek(const struct na_sim_world *world, size_t k)
{
    const struct na_sim_lane *lane;

    if (world->events == 0)
        return NULL;
    if (world->first_from == NA_SIM_LANES)
        return k == 0 ? &world->heap[0] : NULL;
    lane = &world->lanes[world->first_from];
    return k < lane->len ? na_sim_lane_at(lane, k) : NULL;
}

static inline void
na_sim_prefetch_lines(const void *p, size_t lines)
{
    for (size_t i = 0; i < lines; i++)
        __builtin_prefetch((const char *) p + 64 * i);
}

/* The node a message event is for, while its address's memo is current
 * (otherwise NULL: only a search would tell, and a hint does not search). */
static inline const struct na_sim_node *
na_sim_event_dst(const struct na_sim_world *world, const struct na_sim_event *e)
{
    const struct na_addr *peer;

    if (e == NULL || e->op == NULL || e->kind != NA_SIM_EV_MSG)
        return NULL;
    peer = e->op->peer;
    return peer->world == world && peer->memo_epoch == world->node_epoch
               ? peer->memo_node
               : NULL;
}

/* The posted receive a message event would look at first, or NULL. */
static inline const struct na_op_id *
na_sim_event_recv(const struct na_sim_world *world,
                  const struct na_sim_event *e)
{
    const struct na_sim_node *dst = na_sim_event_dst(world, e);
    const struct na_sim_ctx *ctx = dst ? TAILQ_FIRST(&dst->contexts) : NULL;

    if (ctx == NULL)
        return NULL;
    return e->op->type == NA_CB_SEND_UNEXPECTED
               ? na_op_list_first(&ctx->unexpected_recvs)
               : na_op_list_first(&ctx->expected_recvs);
}

/*
 * In a world too large for the cache, every event's first touches of its
 * op, its destination and their contexts miss. The events soon to run are
 * known, so their chains are fetched a level per event ahead: the op five
 * events ahead; its address, node, context and buffer four ahead; the
 * destination node three ahead; its first context two ahead; the posted
 * receive the message will meet first one ahead; and for the event about
 * to run, that receive's buffer and the link of the receive after it,
 * which the delivery rewrites. Only pointers of live objects are followed (an
 * op in the queue holds its peer; a memo is read only while its epoch is
 * current; nodes, contexts and posted receives are the world's, under its
 * lock); everything else is a hint, never a load.
 */
static inline __attribute__((always_inline)) void
na_sim_event_prefetch(struct na_sim_world *world, const struct na_sim_event *ev)
{
    const struct na_sim_event *e;
    const struct na_sim_node *dst;
    const struct na_op_id *op;

    if ((e = na_sim_event_peek(world, 4)) != NULL && e->op != NULL)
        na_sim_prefetch_lines(e->op, (sizeof(*e->op) + 63) / 64);
    if ((e = na_sim_event_peek(world, 3)) != NULL && (op = e->op) != NULL) {
        __builtin_prefetch(op->node);
        __builtin_prefetch(op->ctx);
        if (e->kind == NA_SIM_EV_MSG) {
            __builtin_prefetch(op->peer);
            if (op->buf != NULL) /* NULL: a page walk that finds nothing */
                __builtin_prefetch(op->buf);
        }
    }
    if ((dst = na_sim_event_dst(world, na_sim_event_peek(world, 2))) != NULL)
        __builtin_prefetch(dst);
    if ((dst = na_sim_event_dst(world, na_sim_event_peek(world, 1))) != NULL &&
        TAILQ_FIRST(&dst->contexts) != NULL)
        na_sim_prefetch_lines(TAILQ_FIRST(&dst->contexts),
                              (sizeof(struct na_sim_ctx) + 63) / 64);
    if ((op = na_sim_event_recv(world, na_sim_event_peek(world, 0))) != NULL)
        na_sim_prefetch_lines(op, (sizeof(*op) + 63) / 64);
    if ((op = na_sim_event_recv(world, ev)) != NULL) {
        const struct na_op_id *next = na_op_list_next((na_op_id_t *) op);

        if (op->buf != NULL)
            __builtin_prefetch(op->buf);
        if (next != NULL)
            __builtin_prefetch(&next->base.link);
    }
}

/* Take the next event (world->events > 0), advance the clock to it and
 * run it. */
static void
na_sim_event_run(struct na_sim_world *world)
{
    struct na_sim_event ev = na_sim_event_take(world);

    if (na_sim_prefetching(world)) {
        na_sim_event_prefetch(world, &ev);
        world->prefetched++;
    }
    na_sim_set_now(world, ev.time);
    na_sim_dispatch(world, &ev);
}

bool
na_sim_step_locked(struct na_sim_world *world)
{
    if (world->events == 0)
        return false;
    na_sim_event_run(world);
    return true;
}

unsigned int
na_sim_run_due(struct na_sim_world *world)
{
    uint64_t before = world->completions;
    unsigned int ran = 0;

    while (world->events > 0 && world->first_time <= na_sim_now(world)) {
        na_sim_event_run(world);
        ran++;
    }
    if (world->completions != before)
        na_sim_wake(world);
    return ran;
}

/*
 * Links.
 */

struct na_sim_link *
na_sim_link_find(struct na_sim_world *world, const struct na_sim_name *src,
                 const struct na_sim_name *dst, bool create)
{
    struct na_sim_link_entry *e;

    for (size_t i = 0; i < world->link_len; i++) {
        e = &world->links[i];
        if (na_sim_name_eq(&e->src, src) && na_sim_name_eq(&e->dst, dst))
            return &e->params;
    }
    if (!create)
        return NULL;
    if (world->link_len == world->link_cap) {
        size_t cap = world->link_cap ? world->link_cap * 2 : 8;

        e = realloc(world->links, cap * sizeof(*e));
        if (e == NULL)
            return NULL;
        world->links = e;
        world->link_cap = cap;
    }
    e = &world->links[world->link_len++];
    e->src = *src;
    e->dst = *dst;
    e->params = world->link_default;
    return &e->params;
}

/* latency + size / bandwidth, in ns, saturating rather than wrapping. */
uint64_t
na_sim_transfer_time(struct na_sim_world *world, const struct na_sim_name *src,
                     const struct na_sim_name *dst, size_t size)
{
    const struct na_sim_link *link = na_sim_link_find(world, src, dst, false);
    unsigned __int128 ns;

    if (link == NULL)
        link = &world->link_default;
    ns = link->latency_ns;
    if (link->bandwidth != 0 && size <= UINT32_MAX &&
        link->bandwidth <= INT64_MAX)
        /* The same quotient in 64 bits, which cannot overflow here (size *
         * 10^9 < 2^62, bandwidth < 2^63): no 128-bit division per message. */
        ns += ((uint64_t) size * 1000000000U + link->bandwidth - 1) /
              link->bandwidth;
    else if (link->bandwidth != 0)
        ns += ((unsigned __int128) size * 1000000000U + link->bandwidth - 1) /
              link->bandwidth;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t) ns;
}
