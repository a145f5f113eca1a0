/*
 * CPU binding of execution streams, and ranks.
 *
 * As in Argobots, a CPU id names an entry of the CPU set the process
 * started with, modulo its size, so ids stay valid inside a restricted
 * cpuset. A binding applies to the stream's own worker (the primary
 * thread for rank 0) at once and to spare workers when they start.
 */
#include "abt/abt_internal.h"

#include <sched.h>
#include <stdlib.h>

static int initial_cpus[CPU_SETSIZE];
static int num_initial_cpus;
static pthread_once_t initial_once = PTHREAD_ONCE_INIT;

static void
read_initial_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            initial_cpus[num_initial_cpus++] = c;
}

/* The set for xs's binding (all initial CPUs when unbound); scheduler
 * lock held. Returns 0 if the CPU list is unknown. */
static int
binding_set_locked(ABT_xstream xs, cpu_set_t *set)
{
    pthread_once(&initial_once, read_initial_cpus);
    if (num_initial_cpus == 0)
        return 0;
    CPU_ZERO(set);
    if (!xs->bound) {
        for (int i = 0; i < num_initial_cpus; i++)
            CPU_SET(initial_cpus[i], set);
        return 1;
    }
    for (int i = 0; i < xs->num_cpuids; i++) {
        int id = xs->cpuids[i] % num_initial_cpus;
        if (id < 0)
            id += num_initial_cpus;
        CPU_SET(initial_cpus[id], set);
    }
    return 1;
}

void
abt_xs_bind_self(ABT_xstream xs)
{
    cpu_set_t set;
    pthread_mutex_lock(&abt_g.lock);
    int apply = xs->bound && binding_set_locked(xs, &set);
    pthread_mutex_unlock(&abt_g.lock);
    if (apply)
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int
ABT_xstream_set_affinity(ABT_xstream xstream, int num_cpuids, int *cpuids)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (num_cpuids < 0 || (num_cpuids > 0 && !cpuids))
        return ABT_ERR_INV_ARG;
    int *copy = NULL;
    if (num_cpuids > 0) {
        copy = malloc((size_t) num_cpuids * sizeof(*copy));
        if (!copy)
            return ABT_ERR_MEM;
        for (int i = 0; i < num_cpuids; i++)
            copy[i] = cpuids[i];
    }
    cpu_set_t set;
    pthread_mutex_lock(&abt_g.lock);
    free(xstream->cpuids);
    xstream->cpuids = copy;
    xstream->num_cpuids = num_cpuids;
    xstream->bound = num_cpuids > 0;
    int known = binding_set_locked(xstream, &set);
    int running = !xstream->terminated && (xstream->primary || xstream->base);
    pthread_t tid = xstream->tid;
    pthread_mutex_unlock(&abt_g.lock);
    if (!known)
        return ABT_ERR_FEATURE_NA;
    if (running && pthread_setaffinity_np(tid, sizeof(set), &set) != 0)
        return ABT_ERR_SYS;
    return ABT_SUCCESS;
}

int
ABT_xstream_set_cpubind(ABT_xstream xstream, int cpuid)
{
    return ABT_xstream_set_affinity(xstream, 1, &cpuid);
}

int
ABT_xstream_get_cpubind(ABT_xstream xstream, int *cpuid)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (!cpuid)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    int bound = xstream->bound;
    if (bound)
        *cpuid = xstream->cpuids[0];
    pthread_mutex_unlock(&abt_g.lock);
    return bound ? ABT_SUCCESS : ABT_ERR_FEATURE_NA;
}

int
ABT_xstream_get_affinity(ABT_xstream xstream, int max_cpuids, int *cpuids,
                         int *num_cpuids)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (max_cpuids < 0 || (max_cpuids > 0 && !cpuids))
        return ABT_ERR_INV_ARG;
    pthread_once(&initial_once, read_initial_cpus);
    pthread_mutex_lock(&abt_g.lock);
    int n = xstream->bound ? xstream->num_cpuids : num_initial_cpus;
    for (int i = 0; i < n && i < max_cpuids; i++)
        cpuids[i] = xstream->bound ? xstream->cpuids[i] : i;
    pthread_mutex_unlock(&abt_g.lock);
    if (num_cpuids)
        *num_cpuids = n;
    return ABT_SUCCESS;
}

int
ABT_xstream_set_rank(ABT_xstream xstream, int rank)
{
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    if (rank < 0)
        return ABT_ERR_INV_XSTREAM_RANK;
    int ret = ABT_SUCCESS;
    pthread_mutex_lock(&abt_g.lock);
    for (ABT_xstream x = abt_g.xstreams; x; x = x->next)
        if (x != xstream && x->rank == rank)
            ret = ABT_ERR_INV_XSTREAM_RANK;
    if (xstream->primary && rank != 0)
        ret = ABT_ERR_INV_XSTREAM;
    if (ret == ABT_SUCCESS)
        __atomic_store_n(&xstream->rank, rank, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&abt_g.lock);
    return ret;
}
