/*
 * ABT_info_print_*: human-readable descriptions of the configuration, the
 * execution streams and the pools, in a format of this layer's own (the
 * programs that call them print them for people, not parsers). The
 * execution-stream and pool lines read scheduler-lock fields, so they are
 * written under abt_g.lock into a memory buffer first and only then to
 * the caller's stream, which may block.
 */
#include "abt_internal.h"

#include <stdio.h>
#include <stdlib.h>

static const char *
abt_pool_kind_name(ABT_pool_kind kind)
{
    switch (kind) {
    case ABT_POOL_FIFO:
        return "fifo";
    case ABT_POOL_FIFO_WAIT:
        return "fifo_wait";
    case ABT_POOL_RANDWS:
        return "randws";
    }
    return "other";
}

/* One pool's line (scheduler lock held). */
static void
abt_print_pool_locked(FILE *out, ABT_pool pool)
{
    fprintf(out,
            "  pool %d: kind %s, access %d, %zu waiting, %zu running, "
            "%d scheduler(s)\n",
            pool->id, abt_pool_kind_name(pool->kind), (int) pool->access,
            pool->queued, pool->active, pool->sched_refs);
}

/* One stream and its pools (scheduler lock held). */
static void
abt_print_xstream_locked(FILE *out, ABT_xstream xs)
{
    fprintf(out,
            "xstream rank %d%s: %d worker(s), %d blocked, %d idle, "
            "%d spare(s) started%s\n",
            xs->rank, xs->primary ? " (primary)" : "", xs->workers, xs->blocked,
            xs->idle, xs->spares_started, xs->join_req ? ", joining" : "");
    if (xs->sched == NULL)
        return;
    for (int i = 0; i < xs->sched->num_pools; i++)
        abt_print_pool_locked(out, xs->sched->pools[i]);
}

/* Run print(arg) under the scheduler lock into memory, then copy the text
 * to fp. */
static int
abt_print_locked(FILE *fp, void (*print)(FILE *, void *), void *arg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);

    if (mem == NULL)
        return ABT_ERR_MEM;
    pthread_mutex_lock(&abt_g.lock);
    print(mem, arg);
    pthread_mutex_unlock(&abt_g.lock);
    fclose(mem);
    fwrite(text, 1, len, fp);
    free(text);
    return ABT_SUCCESS;
}

int
ABT_info_print_config(FILE *fp)
{
    if (fp == NULL)
        return ABT_ERR_INV_ARG;
    fprintf(fp,
            "Argobots configuration (Quicksilver abt.h, on POSIX threads)\n"
            "  version: %s\n"
            "  initialized: %s\n"
            "  user-level threads: no (each ULT runs on a worker pthread; "
            "one runs per stream at a time)\n"
            "  default ULT stack size: %zu bytes (reported only)\n"
            "  blocked ULTs: a spare worker serves a stream whose "
            "workers are all blocked\n",
            ABT_VERSION, ABT_initialized() == ABT_SUCCESS ? "yes" : "no",
            abt_g.stacksize);
    return ABT_SUCCESS;
}

static void
abt_print_all(FILE *out, void *arg)
{
    (void) arg;
    fprintf(out, "%d execution stream(s)\n", abt_g.num_xstreams);
    for (ABT_xstream xs = abt_g.xstreams; xs; xs = xs->next)
        if (!xs->terminated)
            abt_print_xstream_locked(out, xs);
}

int
ABT_info_print_all_xstreams(FILE *fp)
{
    if (fp == NULL)
        return ABT_ERR_INV_ARG;
    if (ABT_initialized() != ABT_SUCCESS)
        return ABT_ERR_UNINITIALIZED;
    return abt_print_locked(fp, abt_print_all, NULL);
}

static void
abt_print_one_xstream(FILE *out, void *arg)
{
    abt_print_xstream_locked(out, arg);
}

int
ABT_info_print_xstream(FILE *fp, ABT_xstream xstream)
{
    if (fp == NULL)
        return ABT_ERR_INV_ARG;
    if (xstream == ABT_XSTREAM_NULL)
        return ABT_ERR_INV_XSTREAM;
    return abt_print_locked(fp, abt_print_one_xstream, xstream);
}

static void
abt_print_one_pool(FILE *out, void *arg)
{
    abt_print_pool_locked(out, arg);
}

int
ABT_info_print_pool(FILE *fp, ABT_pool pool)
{
    if (fp == NULL)
        return ABT_ERR_INV_ARG;
    if (pool == ABT_POOL_NULL)
        return ABT_ERR_INV_POOL;
    return abt_print_locked(fp, abt_print_one_pool, pool);
}
