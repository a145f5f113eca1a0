/*
 * The public control API (include/na_sim.h). Each function takes the
 * global lock, so the world cannot disappear under it, then the world lock.
 */
#include "na_sim_internal.h"
#include "na/na_runtime.h"
#include "util/qs_lock.h"

#include <inttypes.h>
#include <string.h>

/* Run `body` with `world` locked (by lock_fn and unlock_fn), or return
 * NA_NOENTRY when none exists. */
#define NA_SIM_WITH_WORLD_BY(lock_fn, unlock_fn, world, ...)                   \
    do {                                                                       \
        struct na_sim_world *world;                                            \
        lock_fn(&na_sim_global_lock);                                          \
        world = na_sim_world_current();                                        \
        if (world == NULL) {                                                   \
            unlock_fn(&na_sim_global_lock);                                    \
            return NA_NOENTRY;                                                 \
        }                                                                      \
        lock_fn(&world->lock);                                                 \
        __VA_ARGS__;                                                           \
        unlock_fn(&world->lock);                                               \
        unlock_fn(&na_sim_global_lock);                                        \
    } while (0)

#define NA_SIM_WITH_WORLD(world, ...)                                          \
    NA_SIM_WITH_WORLD_BY(pthread_mutex_lock, pthread_mutex_unlock, world,      \
                         __VA_ARGS__)

/* The calls a single-threaded driver makes per event (na_sim_step(),
 * na_sim_ready_next()): in a process without threads the locks are
 * skipped (lib/util/qs_lock.h), as in the plugin's poll. */
#define NA_SIM_WITH_WORLD_HOT(world, ...)                                      \
    NA_SIM_WITH_WORLD_BY(qs_hot_lock_uncounted, qs_hot_unlock, world,          \
                         __VA_ARGS__)

na_return_t
na_sim_set_seed(uint64_t seed)
{
    struct na_sim_world *world;
    na_return_t ret = NA_SUCCESS;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL) {
        pthread_mutex_lock(&world->lock);
        if (TAILQ_EMPTY(&world->nodes))
            na_sim_world_reset_state(world, seed);
        else
            ret = NA_BUSY;
        pthread_mutex_unlock(&world->lock);
    }
    if (ret == NA_SUCCESS)
        na_sim_seed_set_next(seed, true);
    pthread_mutex_unlock(&na_sim_global_lock);
    return ret;
}

void
na_sim_clear_seed(void)
{
    pthread_mutex_lock(&na_sim_global_lock);
    na_sim_seed_set_next(0, false);
    pthread_mutex_unlock(&na_sim_global_lock);
}

uint64_t
na_sim_get_seed(void)
{
    struct na_sim_world *world;
    uint64_t seed;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL) {
        pthread_mutex_lock(&world->lock);
        seed = world->seed;
        pthread_mutex_unlock(&world->lock);
    } else
        seed = na_sim_seed_next();
    pthread_mutex_unlock(&na_sim_global_lock);
    return seed;
}

int
na_sim_replay_hint(char *buf, size_t size)
{
    return snprintf(buf, size, "%s=%" PRIu64, NA_SIM_SEED_ENV,
                    na_sim_get_seed());
}

void
na_sim_print_replay_hint(FILE *stream)
{
    char hint[64];

    na_sim_replay_hint(hint, sizeof(hint));
    fprintf(stream, "replay with %s\n", hint);
    fflush(stream);
}

na_return_t
na_sim_world_hold(void)
{
    struct na_sim_world *world;
    na_return_t ret;

    pthread_mutex_lock(&na_sim_global_lock);
    ret = na_sim_world_ref(&world);
    if (ret == NA_SUCCESS) {
        pthread_mutex_lock(&world->lock);
        world->holds++;
        pthread_mutex_unlock(&world->lock);
    }
    pthread_mutex_unlock(&na_sim_global_lock);
    return ret;
}

na_return_t
na_sim_world_release(void)
{
    struct na_sim_world *world;
    bool held = false;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL) {
        pthread_mutex_lock(&world->lock);
        if (world->holds > 0) {
            world->holds--;
            held = true;
        }
        pthread_mutex_unlock(&world->lock);
        if (held)
            na_sim_world_unref(world);
    }
    pthread_mutex_unlock(&na_sim_global_lock);
    return held ? NA_SUCCESS : NA_NOENTRY;
}

bool
na_sim_world_exists(void)
{
    bool exists;

    pthread_mutex_lock(&na_sim_global_lock);
    exists = na_sim_world_current() != NULL;
    pthread_mutex_unlock(&na_sim_global_lock);
    return exists;
}

uint64_t
na_sim_grace_expiries(void)
{
    return na_runtime_grace_expiries();
}

uint64_t
na_sim_clock_now(void)
{
    struct na_sim_world *world;
    uint64_t now = 0;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL)
        now = na_sim_now(world);
    pthread_mutex_unlock(&na_sim_global_lock);
    return now;
}

na_return_t
na_sim_step(void)
{
    bool ran = false;

    NA_SIM_WITH_WORLD_HOT(world, {
        uint64_t before = world->completions;

        ran = na_sim_step_locked(world);
        if (world->completions != before)
            na_sim_wake(world);
    });
    return ran ? NA_SUCCESS : NA_TIMEOUT;
}

na_return_t
na_sim_run_until(uint64_t time_ns, uint64_t *ran)
{
    uint64_t n = 0;

    NA_SIM_WITH_WORLD(world, {
        uint64_t before = world->completions, next;

        while (na_sim_event_next_time(world, &next) && next <= time_ns) {
            na_sim_step_locked(world);
            n++;
        }
        na_sim_set_now(world, time_ns);
        if (world->completions != before)
            na_sim_wake(world);
    });
    if (ran != NULL)
        *ran = n;
    return NA_SUCCESS;
}

na_return_t
na_sim_run_until_idle(uint64_t *ran)
{
    uint64_t n = 0;

    NA_SIM_WITH_WORLD(world, {
        uint64_t before = world->completions;

        while (na_sim_step_locked(world))
            n++;
        if (world->completions != before)
            na_sim_wake(world);
    });
    if (ran != NULL)
        *ran = n;
    return NA_SUCCESS;
}

/* The caller progresses the context it was handed now, and `next` after
 * it. In a world too large for the cache each context's state is cold by
 * then, so the next one's noted addresses are asked for now (it was itself
 * asked for a context ago), and the one after it, whose hints come next
 * time. */
static inline void
na_sim_ready_prefetch(const struct na_sim_ctx *next)
{
    const struct na_sim_ctx *after;

    if (next == NULL)
        return;
    __builtin_prefetch(next->node);
    __builtin_prefetch(next->na_context);
    for (unsigned int i = 0; i < next->hint_len; i++)
        for (unsigned int j = 0; j < NA_SIM_OP_HINTS; j++)
            if (next->hint[i][j] != NULL) /* NULL: a walk that finds nothing */
                __builtin_prefetch(next->hint[i][j]);
    after = TAILQ_NEXT(next, ready_link);
    if (after != NULL)
        for (size_t off = 0; off < sizeof(*after); off += 64)
            __builtin_prefetch((const char *) after + off);
}

/* Take the first context off the ready list (world locked). */
static inline void
na_sim_ready_take(struct na_sim_world *world, struct na_sim_ctx *ctx)
{
    TAILQ_REMOVE(&world->ready, ctx, ready_link);
    ctx->ready = false;
    if (na_sim_prefetching(world))
        na_sim_ready_prefetch(TAILQ_FIRST(&world->ready));
}

na_return_t
na_sim_ready_next(char *name, size_t size, uint8_t *id)
{
    na_return_t ret = NA_NOENTRY;

    if (name == NULL || id == NULL)
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD_HOT(world, {
        struct na_sim_ctx *ctx = TAILQ_FIRST(&world->ready);

        if (ctx != NULL && size <= ctx->node->name.len)
            ret = NA_OVERFLOW;
        else if (ctx != NULL) {
            memcpy(name, ctx->node->name.str, ctx->node->name.len + 1u);
            *id = ctx->id;
            na_sim_ready_take(world, ctx);
            ret = NA_SUCCESS;
        }
    });
    return ret;
}

na_return_t
na_sim_ready_next_data(void **data, uint8_t *id)
{
    na_return_t ret = NA_NOENTRY;

    if (data == NULL || id == NULL)
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD_HOT(world, {
        struct na_sim_ctx *ctx = TAILQ_FIRST(&world->ready);

        if (ctx != NULL) {
            *data = ctx->node->data;
            *id = ctx->id;
            na_sim_ready_take(world, ctx);
            ret = NA_SUCCESS;
        }
    });
    return ret;
}

na_return_t
na_sim_node_set_data(const char *name, void *data)
{
    struct na_sim_name n;
    na_return_t ret = NA_NOENTRY;

    if (name == NULL || !na_sim_name_from_string(name, &n))
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, {
        struct na_sim_node *node = na_sim_node_find(world, &n);

        if (node != NULL) {
            node->data = data;
            ret = NA_SUCCESS;
        }
    });
    return ret;
}

na_return_t
na_sim_set_link_default(const struct na_sim_link *link)
{
    if (link == NULL)
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, world->link_default = *link);
    return NA_SUCCESS;
}

na_return_t
na_sim_set_link(const char *src, const char *dst,
                const struct na_sim_link *link)
{
    struct na_sim_name s, d;
    na_return_t ret = NA_SUCCESS;

    if (src == NULL || dst == NULL || link == NULL ||
        !na_sim_name_from_string(src, &s) || !na_sim_name_from_string(dst, &d))
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, {
        struct na_sim_link *l = na_sim_link_find(world, &s, &d, true);

        if (l != NULL)
            *l = *link;
        else
            ret = NA_NOMEM;
    });
    return ret;
}

na_return_t
na_sim_get_link(const char *src, const char *dst, struct na_sim_link *link)
{
    struct na_sim_name s, d;

    if (src == NULL || dst == NULL || link == NULL ||
        !na_sim_name_from_string(src, &s) || !na_sim_name_from_string(dst, &d))
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, {
        const struct na_sim_link *l = na_sim_link_find(world, &s, &d, false);

        *link = l != NULL ? *l : world->link_default;
    });
    return NA_SUCCESS;
}

na_return_t
na_sim_set_unexpected_backlog(size_t limit,
                              enum na_sim_backlog_policy when_full)
{
    if (when_full != NA_SIM_BACKLOG_BLOCK && when_full != NA_SIM_BACKLOG_FAIL)
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, {
        uint64_t before = world->completions;
        struct na_sim_node *node;
        struct na_sim_ctx *ctx;

        world->backlog_limit = limit;
        world->backlog_full_fails = when_full == NA_SIM_BACKLOG_FAIL;
        TAILQ_FOREACH(node, &world->nodes, link)
        TAILQ_FOREACH(ctx, &node->contexts, link)
        na_sim_backlog_reconsider(world, ctx);
        if (world->completions != before)
            na_sim_wake(world);
    });
    return NA_SUCCESS;
}

na_return_t
na_sim_set_single_driver(bool single)
{
    NA_SIM_WITH_WORLD(world, world->single_driver = single);
    return NA_SUCCESS;
}

na_return_t
na_sim_trace_enable(bool enable)
{
    NA_SIM_WITH_WORLD(world, world->trace_keep = enable);
    return NA_SUCCESS;
}

/* A count of the current world (its trace lines, its trace hash, its
 * events run with prefetching); 0 without a world. */
enum na_sim_stat {
    NA_SIM_STAT_LINES,
    NA_SIM_STAT_HASH,
    NA_SIM_STAT_PREFETCHED
};

static uint64_t
na_sim_world_stat(enum na_sim_stat which)
{
    struct na_sim_world *world;
    uint64_t value = 0;

    pthread_mutex_lock(&na_sim_global_lock);
    world = na_sim_world_current();
    if (world != NULL) {
        pthread_mutex_lock(&world->lock);
        value = which == NA_SIM_STAT_LINES  ? world->trace_lines
                : which == NA_SIM_STAT_HASH ? world->trace_hash
                                            : world->prefetched;
        pthread_mutex_unlock(&world->lock);
    }
    pthread_mutex_unlock(&na_sim_global_lock);
    return value;
}

uint64_t
na_sim_trace_hash(void)
{
    return na_sim_world_stat(NA_SIM_STAT_HASH);
}

uint64_t
na_sim_trace_count(void)
{
    return na_sim_world_stat(NA_SIM_STAT_LINES);
}

uint64_t
na_sim_prefetched_events(void)
{
    return na_sim_world_stat(NA_SIM_STAT_PREFETCHED);
}

na_return_t
na_sim_trace_dump(FILE *stream)
{
    na_return_t ret = NA_SUCCESS;

    if (stream == NULL)
        return NA_INVALID_ARG;
    NA_SIM_WITH_WORLD(world, {
        fprintf(stream, "# quicksilver sim trace, %s=%" PRIu64 "\n",
                NA_SIM_SEED_ENV, world->seed);
        if (world->trace_len > 0 &&
            fwrite(world->trace_buf, 1, world->trace_len, stream) !=
                world->trace_len)
            ret = NA_IO_ERROR;
        fprintf(stream, "# %" PRIu64 " lines, hash 0x%016" PRIx64 "\n",
                world->trace_lines, world->trace_hash);
        if (fflush(stream) != 0)
            ret = NA_IO_ERROR;
    });
    return ret;
}
