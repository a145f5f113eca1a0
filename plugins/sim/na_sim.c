/*
 * The simulated fabric's ops table, and the parts of it that are about the
 * class (a node of the world), its contexts, operation ids, progress,
 * cancellation and the clock. Messages, RMA and addresses live in their
 * own files.
 */
#include "na_sim_internal.h"

#include "na/na_runtime.h"
#include "util/qs_alloc.h"
#include "util/qs_bias.h"
#include "util/qs_lock.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* Short names of return codes for trace lines: one token, no spaces. */
#define X(a) [a] = #a,
static const char *const na_sim_ret_names[] = {NA_RETURN_VALUES};
#undef X

const char *
na_sim_op_kind(na_cb_type_t type)
{
    switch (type) {
    case NA_CB_SEND_UNEXPECTED:
        return "send_unexpected";
    case NA_CB_RECV_UNEXPECTED:
        return "recv_unexpected";
    case NA_CB_SEND_EXPECTED:
        return "send_expected";
    case NA_CB_RECV_EXPECTED:
        return "recv_expected";
    case NA_CB_PUT:
        return "put";
    case NA_CB_GET:
        return "get";
    case NA_CB_MULTI_RECV_UNEXPECTED: /* never posted on sim */
    case NA_CB_MAX:
        break;
    }
    return "unknown";
}

/*
 * Nodes and contexts.
 */

struct na_sim_node *
na_sim_node_find(struct na_sim_world *world, const struct na_sim_name *name)
{
    struct na_sim_node *node;

    if (world->node_buckets == 0)
        return NULL;
    node =
        world->node_table[na_sim_name_hash(name) & (world->node_buckets - 1)];
    while (node != NULL && !na_sim_name_eq(&node->name, name))
        node = node->hash_next;
    return node;
}

na_return_t
na_sim_node_table_add(struct na_sim_world *world, struct na_sim_node *node)
{
    size_t mask;

    if (world->node_count + 1 > world->node_buckets) {
        size_t buckets = world->node_buckets ? world->node_buckets * 2 : 64;
        struct na_sim_node **table = calloc(buckets, sizeof(*table));

        if (table == NULL)
            return NA_NOMEM;
        for (size_t i = 0; i < world->node_buckets; i++) {
            struct na_sim_node *n, *next;

            for (n = world->node_table[i]; n != NULL; n = next) {
                size_t b = na_sim_name_hash(&n->name) & (buckets - 1);

                next = n->hash_next;
                n->hash_next = table[b];
                table[b] = n;
            }
        }
        free(world->node_table);
        world->node_table = table;
        world->node_buckets = buckets;
    }
    mask = world->node_buckets - 1;
    node->hash_next = world->node_table[na_sim_name_hash(&node->name) & mask];
    world->node_table[na_sim_name_hash(&node->name) & mask] = node;
    world->node_count++;
    world->node_epoch++;
    return NA_SUCCESS;
}

void
na_sim_node_table_remove(struct na_sim_world *world, struct na_sim_node *node)
{
    struct na_sim_node **p = &world->node_table[na_sim_name_hash(&node->name) &
                                                (world->node_buckets - 1)];

    while (*p != node)
        p = &(*p)->hash_next;
    *p = node->hash_next;
    world->node_count--;
    world->node_epoch++;
}

static bool
na_sim_check_protocol(const char *protocol_name)
{
    return strcmp(protocol_name, "sim") == 0;
}

/* Give the node a name nobody holds: "node<N>" in creation order. */
static void
na_sim_auto_name(struct na_sim_world *world, struct na_sim_name *name)
{
    for (;;) {
        int n = snprintf(name->str, sizeof(name->str), "node%llu",
                         (unsigned long long) world->next_auto_name++);

        name->len = (uint8_t) n;
        na_sim_name_seal(name);
        if (na_sim_node_find(world, name) == NULL)
            return;
    }
}

static na_return_t
na_sim_initialize(na_class_t *na_class, const struct na_info *info, bool listen)
{
    const struct na_init_info *init = &info->init_info;
    struct na_sim_world *world;
    struct na_sim_node *node;
    struct na_sim_name name = {0};
    bool named = info->host_name[0] != '\0';
    na_return_t ret;

    (void) listen; /* every node can receive: clients need responses */
    if (named &&
        !na_sim_name_parse(info->host_name, strlen(info->host_name), &name))
        return NA_INVALID_ARG;
    /* There is no key to check and no device memory to reach; the subnet
     * is a preference that a fabric without IP honours trivially. */
    if (init->auth_key != NULL || init->request_mem_device) {
        qs_log("sim", QS_LOG_ERROR, "na_init_info.%s is not supported",
               init->auth_key != NULL ? "auth_key" : "request_mem_device");
        return NA_OPNOTSUPPORTED;
    }
    /* On a cache line, so that the fields every event reads (first in
     * struct na_sim_node, a short name included) are one line. */
    node = qs_calloc_lines(sizeof(*node));
    if (node == NULL)
        return NA_NOMEM;
    node->na_class = na_class;
    node->max_unexpected_size = init->max_unexpected_size
                                    ? init->max_unexpected_size
                                    : NA_SIM_DEFAULT_MSG_SIZE;
    node->max_expected_size = init->max_expected_size ? init->max_expected_size
                                                      : NA_SIM_DEFAULT_MSG_SIZE;
    node->no_block = (init->progress_mode & NA_NO_BLOCK) != 0;
    TAILQ_INIT(&node->contexts);
    na_op_list_init(&node->frozen);

    pthread_mutex_lock(&na_sim_global_lock);
    ret = na_sim_world_ref(&world);
    if (ret != NA_SUCCESS)
        goto unlock_global;
    pthread_mutex_lock(&world->lock);
    if (named && na_sim_node_find(world, &name) != NULL) {
        pthread_mutex_unlock(&world->lock);
        na_sim_world_unref(world);
        ret = NA_ADDRINUSE;
        goto unlock_global;
    }
    if (!named)
        na_sim_auto_name(world, &name);
    node->world = world;
    node->name = name;
    if (na_sim_node_table_add(world, node) != NA_SUCCESS) {
        pthread_mutex_unlock(&world->lock);
        na_sim_world_unref(world);
        ret = NA_NOMEM;
        goto unlock_global;
    }
    node->incarnation = world->next_incarnation++;
    TAILQ_INSERT_TAIL(&world->nodes, node, link);
    na_sim_trace(world, na_sim_now(world), world->next_seq++, "node_up",
                 node->name.str, node->name.str, 0, 0);
    pthread_mutex_unlock(&world->lock);
    na_class->plugin_class = node;
    na_plugin_set_msg_limits(na_class, node->max_unexpected_size,
                             node->max_expected_size, NA_SIM_MAX_TAG);
    na_plugin_set_max_segments(na_class, NA_SIM_MEM_MAX_SEGMENTS);
    /* Until a poll says otherwise (na_sim_set_single_driver()). */
    na_plugin_set_clock_approximate(na_class, true);

unlock_global:
    pthread_mutex_unlock(&na_sim_global_lock);
    if (ret != NA_SUCCESS)
        qs_free_lines(node, sizeof(*node));
    return ret;
}

static na_return_t
na_sim_finalize(na_class_t *na_class)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;

    pthread_mutex_lock(&na_sim_global_lock);
    pthread_mutex_lock(&world->lock);
    if (!TAILQ_EMPTY(&node->contexts)) {
        pthread_mutex_unlock(&world->lock);
        pthread_mutex_unlock(&na_sim_global_lock);
        return NA_BUSY;
    }
    /* Regions still registered die with their node, as a NIC's keys die
     * with its process; the handles stay the caller's to free. */
    na_sim_regions_drop_node(world, node);
    na_sim_node_table_remove(world, node);
    TAILQ_REMOVE(&world->nodes, node, link);
    na_sim_trace(world, na_sim_now(world), world->next_seq++, "node_down",
                 node->name.str, node->name.str, 0, 0);
    pthread_mutex_unlock(&world->lock);
    na_sim_world_unref(world);
    pthread_mutex_unlock(&na_sim_global_lock);
    na_sim_addr_unref(node->source); /* receivers may hold it still */
    qs_free_lines(node, sizeof(*node));
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

static na_return_t
na_sim_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                      void *plugin_context)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_ctx *ctx = plugin_context;

    ctx->node = node;
    ctx->na_context = context;
    ctx->id = id;
    na_op_list_init(&ctx->unexpected_recvs);
    na_op_list_init(&ctx->expected_recvs);
    TAILQ_INIT(&ctx->backlog);
    TAILQ_INIT(&ctx->early);
    na_op_list_init(&ctx->blocked);
    pthread_mutex_lock(&node->world->lock);
    TAILQ_INSERT_TAIL(&node->contexts, ctx, link);
    pthread_mutex_unlock(&node->world->lock);
    return NA_SUCCESS;
}

/* Refused with NA_BUSY while any operation posted on the context has not
 * completed: posted receives must be cancelled and sends must finish
 * first, so no event can outlive the context. Queued messages nobody
 * received are dropped, and senders blocked on its backlog learn that
 * their destination is gone (NA_HOSTUNREACH). */
static na_return_t
na_sim_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_ctx *ctx = plugin_context;

    pthread_mutex_lock(&node->world->lock);
    if (ctx->pending > 0) {
        pthread_mutex_unlock(&node->world->lock);
        qs_log("sim", QS_LOG_ERROR, "context destroy: %u operation(s) pending",
               ctx->pending);
        return NA_BUSY;
    }
    TAILQ_REMOVE(&node->contexts, ctx, link);
    na_sim_ctx_drain(node->world, ctx);
    if (ctx->ready)
        TAILQ_REMOVE(&node->world->ready, ctx, ready_link);
    if (ctx->queued)
        TAILQ_REMOVE(&node->world->queued, ctx, queued_link);
    pthread_mutex_unlock(&node->world->lock);
    return NA_SUCCESS;
}

/* The core has moved the op to posted after checking that it is idle and
 * belongs to this class. */
void
na_sim_op_post(struct na_sim_node *node, struct na_sim_ctx *ctx,
               struct na_op_id *op, na_cb_type_t type)
{
    struct na_sim_world *world = node->world;

    op->node = node;
    op->ctx = ctx;
    op->type = type;
    op->canceled = false;
    op->msg = NULL;
    op->peer = NULL;
    op->seq = world->next_seq++;
    op->src_incarnation = node->incarnation;
    op->fault_ret = NA_SUCCESS;
    ctx->pending++;
    world->post_gen++;
    na_sim_wake(world);
}

void
na_sim_op_abort(struct na_sim_world *world, struct na_op_id *op,
                na_return_t ret)
{
    na_sim_trace_op(world, na_sim_now(world), op->seq, "refused",
                    na_sim_op_kind(op->type), na_sim_ret_names[ret],
                    op->node->name.str, op->node->name.str, op->size, op->tag);
    na_sim_addr_unref(op->peer);
    op->peer = NULL;
    op->ctx->pending--;
}

na_return_t
na_sim_op_posted(struct na_sim_world *world, struct na_op_id *op,
                 const struct na_sim_name *src, const struct na_sim_name *dst,
                 uint64_t *when)
{
    const char *kind = na_sim_op_kind(op->type);

    /* The kind's T by the op's type (the core posts only the types below
     * NA_CB_MAX): no memo lookup per line. */
    na_sim_trace_names_mix(world, na_sim_now(world), op->seq,
                           na_sim_kind_slot(world,
                                            &world->trace_t_post[op->type],
                                            "post", kind, NULL),
                           "post", kind, NULL, src, dst, op->size, op->tag);
    return na_sim_fault_on_post(world, op, dst, when);
}

na_return_t
na_sim_op_schedule(struct na_sim_world *world, struct na_op_id *op,
                   const struct na_sim_name *src, const struct na_sim_name *dst,
                   uint64_t when, enum na_sim_event_kind kind)
{
    na_return_t ret;

    ret = na_sim_op_posted(world, op, src, dst, &when);
    if (ret == NA_SUCCESS)
        ret = na_sim_schedule(world, when, kind, op);
    if (ret != NA_SUCCESS)
        na_sim_op_abort(world, op, ret);
    else
        na_sim_op_started(world, op);
    return ret;
}

void
na_sim_op_complete(struct na_sim_world *world, struct na_op_id *op,
                   na_return_t ret)
{
    struct na_sim_ctx *ctx = op->ctx;
    const struct na_sim_name *peer = op->peer ? &op->peer->name : NULL;
    bool inbound =
        op->type == NA_CB_RECV_UNEXPECTED || op->type == NA_CB_RECV_EXPECTED;
    const char *kind = na_sim_op_kind(op->type);
    const struct na_sim_name *src = inbound ? peer : &op->node->name;
    const struct na_sim_name *dst = inbound ? &op->node->name : peer;

    /* By type and return code, both in range (ret names its line). */
    na_sim_trace_names_mix(
        world, na_sim_now(world), op->seq,
        na_sim_kind_slot(world, &world->trace_t_done[op->type][ret], "done",
                         kind, na_sim_ret_names[ret]),
        "done", kind, na_sim_ret_names[ret], src, dst, op->size, op->tag);
    if (op->type != NA_CB_RECV_UNEXPECTED) /* its peer is borrowed */
        na_sim_addr_unref(op->peer);
    op->peer = NULL;
    ctx->pending--;
    ctx->completions++;
    world->completions++;
    ctx->last_completion = world->completions;
    if (!ctx->ready) {
        ctx->ready = true;
        ctx->hint_len = 0;
        TAILQ_INSERT_TAIL(&world->ready, ctx, ready_link);
    }
    if (ctx->hint_len < NA_SIM_CTX_HINTS && na_sim_prefetching(world)) {
        const void **h = ctx->hint[ctx->hint_len++];

        h[0] = op;
        h[1] = op->base.info.arg;
        h[2] = inbound && ret == NA_SUCCESS ? op->buf : NULL;
        h[3] = op->base.hint[0];
        h[4] = op->base.hint[1];
    }
    if (!ctx->queued) {
        ctx->queued = true;
        TAILQ_INSERT_TAIL(&world->queued, ctx, queued_link);
    }
    na_op_finish(op, ret);
}

/*
 * Cancel: mark the op; a posted receive leaves its list and completes from
 * a local event at the current time, anything in flight completes with
 * NA_CANCELED when its event comes due. Either way the callback runs from
 * NA_Trigger() after progress, exactly once. World lock held.
 */
static void
na_sim_cancel_locked(struct na_sim_world *world, struct na_op_id *op)
{
    op->canceled = true;
    na_sim_trace(world, na_sim_now(world), op->seq, "cancel",
                 op->node->name.str, op->node->name.str, op->size, op->tag);
    if (na_op_list_active(op)) {
        na_op_list_remove(op);
        if (na_sim_schedule(world, na_sim_now(world), NA_SIM_EV_LOCAL, op) !=
            NA_SUCCESS)
            na_sim_op_complete(world, op, NA_CANCELED);
    }
    world->post_gen++;
    na_sim_wake(world);
}

/* The end of a post that succeeded (world lock held, so the op is where
 * its event or its list holds it, and no cancel hook has run): start it
 * in the core, and carry out a cancel that came during the post. */
void
na_sim_op_started(struct na_sim_world *world, struct na_op_id *op)
{
    if (na_op_state(&op->base) == NA_OP_POSTED && !na_op_start(op))
        na_sim_cancel_locked(world, op);
}

/* The core calls this once per post, for a started op; it may have
 * completed meanwhile. */
static na_return_t
na_sim_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;

    (void) context;
    pthread_mutex_lock(&world->lock);
    if (na_op_state(&op->base) == NA_OP_STARTED && !op->canceled)
        na_sim_cancel_locked(world, op);
    pthread_mutex_unlock(&world->lock);
    return NA_SUCCESS;
}

/*
 * Progress.
 */

/* The world this thread has polled (its uid; 0: none). A key's
 * destructor tells that world when the thread exits. */
static __thread uint64_t na_sim_polled_uid QS_LOCK_TLS_MODEL;
static pthread_key_t na_sim_poller_key;
static pthread_once_t na_sim_poller_once = PTHREAD_ONCE_INIT;
static bool na_sim_poller_key_ok;

/* A thread that polled a world exits: one live poller fewer, if that
 * world still exists (the global lock, then the world's). */
static void
na_sim_poller_exit(void *arg)
{
    uint64_t uid = (uint64_t) (uintptr_t) arg;
    struct na_sim_world *world;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL && world->uid == uid) {
        pthread_mutex_lock(&world->lock);
        if (world->live_pollers > 0)
            world->live_pollers--;
        pthread_mutex_unlock(&world->lock);
    }
    pthread_mutex_unlock(&na_sim_global_lock);
}

static void
na_sim_poller_key_make(void)
{
    na_sim_poller_key_ok =
        pthread_key_create(&na_sim_poller_key, na_sim_poller_exit) == 0;
}

/* Count the calling thread among the world's live pollers, once. Without
 * a key (none left) it is counted but never uncounted: the world then
 * stays multi-threaded, as it always did. */
static void
na_sim_poller_count(struct na_sim_world *world)
{
    if (na_sim_polled_uid == world->uid)
        return;
    pthread_once(&na_sim_poller_once, na_sim_poller_key_make);
    na_sim_polled_uid = world->uid;
    world->live_pollers++;
    if (na_sim_poller_key_ok)
        (void) pthread_setspecific(na_sim_poller_key,
                                   (void *) (uintptr_t) world->uid);
}

/* Real-time waiting is only for worlds driven by several threads: one
 * thread may be about to post what another waits for. Once a second
 * thread exists, the calling thread is also noted as ctx's driver
 * (na_sim_driver_waits). A world whose other pollers have all exited
 * (helper threads a program joined) is driven by one thread again, and
 * its waits no longer wait on real time. */
static void
na_sim_note_poller(struct na_sim_world *world, struct na_sim_ctx *ctx)
{
    pthread_t self;

    /* Only one thread has ever existed: nothing to learn. */
    if (world->has_poller && QS_SINGLE_THREADED())
        return;
    self = pthread_self();
    ctx->driver = self;
    ctx->has_driver = true;
    na_sim_poller_count(world);
    if (!world->has_poller) {
        world->has_poller = true;
        world->poller = self;
    } else if (!world->multi_threaded) {
        if (!pthread_equal(world->poller, self))
            world->multi_threaded = true;
    } else if (world->live_pollers == 1) {
        world->multi_threaded = false;
        world->poller = self;
    }
}

/* List (or unlist) the calling thread among the world's waiters, with
 * the world's completion count when its wait began; a full table lists
 * nobody more. Returns whether it is listed. */
static bool
na_sim_waiting_add(struct na_sim_world *world)
{
    struct na_sim_waiter *w;

    if (!world->multi_threaded || world->waiting_count == NA_SIM_WAITING_MAX)
        return false;
    w = &world->waiting[world->waiting_count++];
    w->thread = pthread_self();
    w->since = world->completions;
    return true;
}

static void
na_sim_waiting_remove(struct na_sim_world *world)
{
    pthread_t self = pthread_self();

    for (unsigned int i = 0; i < world->waiting_count; i++)
        if (pthread_equal(world->waiting[i].thread, self)) {
            world->waiting[i] = world->waiting[--world->waiting_count];
            return;
        }
}

/* Whether ctx's completions wait for a thread that is itself waiting in
 * this world (the caller, say) and began that wait after the last of
 * them: it will not trigger them before its wait ends. (A completion
 * that came during its wait ends the wait: its driver is about to act.) */
static bool
na_sim_driver_waits(const struct na_sim_world *world,
                    const struct na_sim_ctx *ctx)
{
    if (!ctx->has_driver)
        return false;
    for (unsigned int i = 0; i < world->waiting_count; i++)
        if (pthread_equal(world->waiting[i].thread, ctx->driver))
            return world->waiting[i].since >= ctx->last_completion;
    return false;
}

/* NA_Poll never moves the clock: it runs what is due now. Time passes
 * only in poll_wait (up to its deadline) and in the control API. */
static na_return_t
na_sim_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    struct na_sim_ctx *ctx = context->plugin_context;
    uint64_t start;

    qs_hot_lock_uncounted(&world->lock);
    na_sim_note_poller(world, ctx);
    na_plugin_set_clock_approximate(na_class, !world->single_driver ||
                                                  world->multi_threaded);
    start = ctx->completions;
    na_sim_run_due(world);
    *count = (unsigned int) (ctx->completions - start);
    qs_hot_unlock(&world->lock);
    return NA_SUCCESS;
}

/*
 * Whether `self` should hold the clock because another context has
 * completions nobody has triggered yet: in a single-threaded world their
 * owner runs only after this wait returns. The hold lasts only while the
 * world changes between two waits of `self`: a context that nobody drives
 * (an abandoned class, say) must not freeze time for everyone. Called with
 * the world lock held.
 */
/* Completions queued on contexts other than `self` that nobody has
 * triggered yet (skip_waiting: less those whose driver waits in this
 * world, na_sim_driver_waits). Only contexts that got a completion since
 * they were last seen empty can hold one: the sum is that of every
 * context of the world, at a cost that does not grow with the world.
 * World lock held. */
static uint64_t
na_sim_pending_elsewhere(struct na_sim_world *world, struct na_sim_ctx *self,
                         bool skip_waiting)
{
    struct na_sim_ctx *ctx, *next;
    uint64_t pending = 0;

    for (ctx = TAILQ_FIRST(&world->queued); ctx != NULL; ctx = next) {
        unsigned int n = NA_Context_get_completion_count(ctx->na_context);

        next = TAILQ_NEXT(ctx, queued_link);
        if (n == 0) {
            TAILQ_REMOVE(&world->queued, ctx, queued_link);
            ctx->queued = false;
        } else if (ctx != self &&
                   !(skip_waiting && na_sim_driver_waits(world, ctx)))
            pending += n;
    }
    return pending;
}

static bool
na_sim_hold_clock(struct na_sim_world *world, struct na_sim_ctx *self)
{
    uint64_t pending = na_sim_pending_elsewhere(world, self, false), key;

    if (pending == 0) {
        self->hold_valid = false;
        return false;
    }
    key = pending ^ (world->completions * 0x9e3779b97f4a7c15ull) ^
          (world->post_gen * 0xc2b2ae3d27d4eb4full);
    if (self->hold_valid && self->hold_key == key) {
        /* Nothing moved since the last hold: the owners are not coming. */
        self->hold_valid = false;
        return false;
    }
    self->hold_key = key;
    self->hold_valid = true;
    return true;
}

/* Block on the condition variable for up to 1 ms of real time. */
static void
na_sim_wait_real(struct na_sim_world *world)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    /* na_sim_poll_wait() skipped the world lock (without threads, or on
     * the thread that holds the hot path's bias, util/qs_bias.h): nobody
     * signals, and the wait is its timeout. */
    if (qs_hot_skipping()) {
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        return;
    }
    world->waiters++;
    pthread_cond_timedwait(&world->cond, &world->lock, &ts);
    world->waiters--;
}

/*
 * Whether the clock must wait for work about to run elsewhere: what the
 * thread runtime says is queued or running (na_runtime.h) and, in a world
 * polled by several threads, completions that another context's thread
 * has not yet triggered, unless that thread waits here too (a
 * single-threaded world returns to its driver for those:
 * na_sim_hold_clock). True while there is such work and the
 * wait's grace lasts (na_runtime_grace_left).
 */
static bool
na_sim_others_hold(struct na_sim_world *world, struct na_sim_ctx *self,
                   struct na_runtime_grace *grace)
{
    if ((!world->multi_threaded ||
         na_sim_pending_elsewhere(world, self, true) == 0) &&
        !na_runtime_busy())
        return false;
    return na_runtime_grace_left(grace);
}

/*
 * Run due events until one completes on `context`; when nothing is due,
 * move the clock to the next event or the deadline, whichever is first.
 * Returns early (NA_TIMEOUT, *count 0) when a completion lands on another
 * context, so a single thread alternating between a client and a server
 * context lets each of them handle its own.
 */
static na_return_t
na_sim_poll_wait(na_class_t *na_class, na_context_t *context,
                 unsigned int timeout_ms, unsigned int *count)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    struct na_sim_ctx *ctx = context->plugin_context;
    uint64_t ctx_start, world_start, deadline, next;
    struct na_runtime_grace grace = {0, 0};
    na_return_t ret;
    bool may_jump, listed;

    qs_hot_lock_uncounted(&world->lock);
    na_sim_note_poller(world, ctx);
    /* This thread waits in the fabric: not work about to run elsewhere
     * for the other waiters (na_sim_others_hold). Said only once the
     * world knows this thread polls, under its lock: a thread seen idle
     * before it was noted left a world not yet multi-threaded to a
     * waiter that holds the clock for nobody, and the clock jumped to
     * that waiter's deadline while this thread was about to trigger what
     * the waiter waited for (a progress thread's first wait). */
    na_runtime_wait_enter();
    listed = na_sim_waiting_add(world);
    na_plugin_set_clock_approximate(na_class, !world->single_driver ||
                                                  world->multi_threaded);
    ctx_start = ctx->completions;
    world_start = world->completions;
    deadline =
        na_sim_add_sat(na_sim_now(world), (uint64_t) timeout_ms * 1000000U);
    may_jump = !world->multi_threaded || node->no_block;
    /* NA_Poll_wait() found this context's queue empty, but another thread
     * may have completed an op here since: waiting now would leave it
     * untriggered (and hold the others' clock for it) until this wait
     * ends. */
    if (NA_Context_get_completion_count(context) > 0) {
        na_sim_run_due(world);
        ret = NA_SUCCESS;
        goto out;
    }
    for (;;) {
        na_sim_run_due(world);
        if (ctx->completions != ctx_start) {
            ret = NA_SUCCESS;
            break;
        }
        if (world->completions != world_start ||
            na_sim_now(world) >= deadline) {
            ret = NA_TIMEOUT;
            break;
        }
        if (!may_jump) {
            uint64_t gen = world->post_gen;

            na_sim_wait_real(world);
            /* Time may pass only once a wait saw nothing new posted. */
            may_jump = world->post_gen == gen;
            continue;
        }
        /* Time may not pass while another context still holds completions
         * nobody has triggered: in a single-threaded world its owner runs
         * only after this call returns, and the clock must wait for it as
         * a real peer would not stand still. */
        if (!world->multi_threaded && na_sim_hold_clock(world, ctx)) {
            ret = NA_TIMEOUT;
            break;
        }
        if (!na_sim_event_next_time(world, &next) || next > deadline) {
            /* Nothing is due before the deadline: a jump to it would
             * expire timers that ULTs about to run may still meet, so it
             * waits for them (events due earlier still run). */
            if (!node->no_block && na_sim_others_hold(world, ctx, &grace)) {
                na_sim_wait_real(world);
                continue;
            }
            next = deadline;
        }
        na_sim_set_now(world, next);
        may_jump = !world->multi_threaded || node->no_block;
    }
out:
    *count = (unsigned int) (ctx->completions - ctx_start);
    if (listed)
        na_sim_waiting_remove(world);
    /* Back at work before another waiter can see this thread unlisted. */
    na_runtime_wait_leave();
    qs_hot_unlock(&world->lock);
    return ret;
}

static int
na_sim_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    (void) na_class;
    (void) context;
    return -1;
}

static uint64_t
na_sim_clock_now_op(na_class_t *na_class)
{
    struct na_sim_node *node = na_class->plugin_class;

    return na_sim_now(node->world);
}

static const struct na_context_ops na_sim_context_ops = {
    .context_size = sizeof(struct na_sim_ctx),
    .create = na_sim_context_create,
    .destroy = na_sim_context_destroy,
    .poll_get_fd = na_sim_poll_get_fd,
    .poll = na_sim_poll,
    .poll_wait = na_sim_poll_wait,
    .cancel = na_sim_cancel,
    .clock_now = na_sim_clock_now_op,
};

const struct na_class_ops na_sim_class_ops = {
    .class_name = "sim",
    .check_protocol = na_sim_check_protocol,
    .initialize = na_sim_initialize,
    .finalize = na_sim_finalize,
    .context = &na_sim_context_ops,
    .addr = &na_sim_addr_ops,
    .msg = &na_sim_msg_ops,
    .mem = &na_sim_mem_ops,
};
