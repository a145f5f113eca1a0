/*
 * sim_scale: how the simulated fabric's speed and memory grow with the
 * number of nodes.
 *
 *   sim_scale [--nodes 10,100,1000,10000] [--seed S] [--rpcs N] ...
 *
 * Every node is an HG class on "sim://sc<i>" in this process, serving one
 * RPC and calling random peers: each node keeps --inflight RPCs
 * outstanding, each to a peer drawn from its own --peers random peers (a
 * routing table, as a DHT or a metadata service keeps). One thread drives
 * every node, so a run is deterministic for its seed: the same seed gives
 * the same trace hash.
 *
 * The driver progresses only the contexts the fabric says have work
 * (na_sim_ready_next()), and moves virtual time with na_sim_step() when
 * none has: its cost per RPC does not grow with the number of nodes, so
 * what does grow is the library's.
 *
 * Randomness: the world's seed (--seed, else QS_SIM_SEED, else the
 * default) also seeds this tool's own splitmix64 generator, which is drawn
 * in a fixed order: first every node's peers (node 0's first, each peer
 * drawn until it is neither the node itself nor already chosen), then one
 * draw per RPC posted, in the order the RPCs are posted (the initial posts
 * slot by slot across the nodes, then each from the completion callback of
 * its predecessor, an order the fabric's trace fixes).
 *
 * One JSON line per world size: "nodes", "rpc_per_s" (round trips per
 * real second), "events_per_s" (trace events per real second),
 * "bytes_per_node" (heap in use after the run, less what was in use before
 * the world, over the node count, from mallinfo2()), "trace_hash", "seed",
 * and the rest of the measurement. "anon_huge_bytes" is the process's
 * anonymous memory on transparent huge pages after the run (AnonHugePages
 * of /proc/self/smaps_rollup; -1 where it cannot be read), and
 * "prefetched_events" the fabric's events that ran with its prefetching on
 * (worlds of 64 nodes or more; docs/sim.md, "Large worlds"). A large world
 * runs measurably faster when malloc's heap is on huge pages, which glibc
 * does when asked (GLIBC_TUNABLES=glibc.malloc.hugetlb=1; docs/sim.md,
 * "Large worlds"), so each record says which heap it had.
 *
 * The CPU's speed is probed before and after each timed run (a 2 KiB copy
 * in cache, bu_copy_probe_ns(): "cpu_copy_ns_before", "cpu_copy_ns_after"),
 * and after the last world one "sim_scale_growth" record per later world
 * gives its CPU per RPC over the first world's, with "same_speed" false
 * when the four probes around the two runs differ by more than 1.1x: a
 * guest's CPU that slows between two worlds would otherwise pass for the
 * library's growth with the number of nodes.
 */
#include "bench_hg.h"
#include "bench_util.h"

#include <mercury.h>
#include <mercury_macros.h>
#include <na_sim.h>

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_MAX_WORLDS 8
#define SC_MAX_NODES 100000u
#define SC_MAX_INFLIGHT 64u
#define SC_MAX_PEERS 1024u
#define SC_NAME_PREFIX "sc"

MERCURY_GEN_PROC(sc_in_t, ((uint64_t) (seq)))
MERCURY_GEN_PROC(sc_out_t, ((uint64_t) (value)))

struct opts {
    unsigned nodes[SC_MAX_WORLDS];
    unsigned nworlds;
    uint64_t seed;
    bool seed_given;
    uint64_t rpcs;
    uint64_t inflight;
    uint64_t peers;
    uint64_t post;
    uint64_t warmup;
    uint64_t callers; /* 0: every node calls */
    uint64_t repeat;
    double max_seconds;
};

struct world;
struct node;

/* One outstanding RPC of a node. */
struct slot {
    struct node *node;
    uint64_t seq;
};

struct node {
    struct world *w;
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_id_t id;
    hg_addr_t *peers;
    unsigned npeers;
    struct slot *slots;
};

struct world {
    const struct opts *o;
    struct node *nodes;
    unsigned n;
    uint64_t rng;
    uint64_t target; /* RPCs of the current phase            */
    uint64_t seq;    /* RPCs issued in every phase            */
    uint64_t issued, done, errors, active;
    bool stop;
};

struct result {
    uint64_t rpcs, errors, events, hash, seed;
    uint64_t prefetched; /* events run with the fabric prefetching */
    double real_s, cpu_s, sim_s, setup_s, teardown_s;
    double bytes_per_node, setup_bytes_per_node;
    int64_t huge_bytes; /* AnonHugePages after the run, or -1 */
    double copy_ns_before, copy_ns_after; /* bu_copy_probe_ns() */
};

/* splitmix64, the bench's own stream (the fabric draws from its own). */
static uint64_t
sc_draw(struct world *w)
{
    return bu_splitmix64(&w->rng);
}

static uint64_t
sc_value(uint64_t seq)
{
    return seq * 0x9e3779b97f4a7c15ULL + 7u;
}

/* Heap bytes in use: arenas plus mmapped chunks. */
static double
sc_heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();

    return (double) mi.uordblks + (double) mi.hblkhd;
}

/* The process's anonymous memory on transparent huge pages, in bytes, or
 * -1 when /proc/self/smaps_rollup cannot be read. */
static int64_t
sc_huge_bytes(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long long kb = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : (int64_t) kb * 1024;
}

/* ---- server side ---------------------------------------------------------
 */

static hg_return_t
sc_handler(hg_handle_t handle)
{
    sc_in_t in;
    sc_out_t out;
    hg_return_t ret;

    ret = HG_Get_input(handle, &in);
    if (ret == HG_SUCCESS) {
        out.value = sc_value(in.seq);
        ret = HG_Respond(handle, NULL, NULL, &out);
        HG_Free_input(handle, &in);
    }
    if (ret != HG_SUCCESS)
        fprintf(stderr, "sim_scale: handler: %s\n", HG_Error_to_string(ret));
    HG_Destroy(handle);
    return HG_SUCCESS;
}

/* ---- client side ---------------------------------------------------------
 */

static int sc_post(struct slot *s);

static hg_return_t
sc_done(const struct hg_cb_info *info)
{
    struct slot *s = info->arg;
    struct world *w = s->node->w;
    hg_handle_t handle = info->info.forward.handle;
    sc_out_t out;

    if (info->ret != HG_SUCCESS || HG_Get_output(handle, &out) != HG_SUCCESS) {
        w->errors++;
    } else {
        if (out.value != sc_value(s->seq))
            w->errors++;
        HG_Free_output(handle, &out);
        w->done++;
    }
    HG_Destroy(handle);
    if (w->stop || w->errors != 0 || w->issued >= w->target || sc_post(s) != 0)
        w->active--;
    return HG_SUCCESS;
}

/* Forward the world's next RPC from slot s to a peer of its node drawn
 * now. */
static int
sc_post(struct slot *s)
{
    struct node *n = s->node;
    struct world *w = n->w;
    hg_addr_t peer = n->peers[sc_draw(w) % n->npeers];
    hg_handle_t handle;
    sc_in_t in;

    s->seq = w->seq;
    in.seq = s->seq;
    if (HG_Create(n->ctx, peer, n->id, &handle) != HG_SUCCESS) {
        w->errors++;
        return -1;
    }
    if (HG_Forward(handle, sc_done, s, &in) != HG_SUCCESS) {
        HG_Destroy(handle);
        w->errors++;
        return -1;
    }
    w->issued++;
    w->seq++;
    return 0;
}

/* ---- world ---------------------------------------------------------------
 */

static int
node_init(struct world *w, unsigned i)
{
    struct node *n = &w->nodes[i];
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    char name[32];

    n->w = w;
    /* Few request receives per node: the default (256 with their 4 KiB
     * buffers) is a megabyte per node, which a big world cannot afford;
     * requests beyond them wait in the fabric's backlog. */
    ii.request_post_init = (hg_uint32_t) w->o->post;
    ii.request_post_incr = (hg_uint32_t) w->o->post;
    snprintf(name, sizeof(name), "sim://" SC_NAME_PREFIX "%u", i);
    n->cls = HG_Init_opt2(name, true, HG_VERSION(2, 4), &ii);
    if (n->cls == NULL) {
        fprintf(stderr, "sim_scale: HG_Init_opt2(%s) failed\n", name);
        return -1;
    }
    n->ctx = HG_Context_create(n->cls);
    n->id =
        MERCURY_REGISTER(n->cls, "qs_sim_scale", sc_in_t, sc_out_t, sc_handler);
    n->slots = calloc(w->o->inflight, sizeof(*n->slots));
    if (n->ctx == NULL || n->id == 0 || n->slots == NULL ||
        na_sim_node_set_data(name, n) != NA_SUCCESS) {
        fprintf(stderr, "sim_scale: node %s: set-up failed\n", name);
        return -1;
    }
    for (unsigned k = 0; k < w->o->inflight; k++)
        n->slots[k].node = n;
    return 0;
}

/* Draw node i's peers: distinct, never itself. */
static int
node_peers(struct world *w, unsigned i)
{
    struct node *n = &w->nodes[i];
    unsigned want = w->o->peers < w->n - 1 ? (unsigned) w->o->peers : w->n - 1;
    unsigned *chosen = calloc(want, sizeof(*chosen));
    char name[32];

    n->peers = calloc(want, sizeof(*n->peers));
    if (chosen == NULL || n->peers == NULL) {
        free(chosen);
        return -1;
    }
    while (n->npeers < want) {
        unsigned p = (unsigned) (sc_draw(w) % w->n), k;

        for (k = 0; k < n->npeers && chosen[k] != p; k++)
            ;
        if (p == i || k < n->npeers)
            continue;
        snprintf(name, sizeof(name), "sim://" SC_NAME_PREFIX "%u", p);
        if (HG_Addr_lookup2(n->cls, name, &n->peers[n->npeers]) != HG_SUCCESS) {
            fprintf(stderr, "sim_scale: lookup of %s failed\n", name);
            free(chosen);
            return -1;
        }
        chosen[n->npeers++] = p;
    }
    free(chosen);
    return 0;
}

static int
world_setup(struct world *w, const struct opts *o, unsigned nodes)
{
    w->o = o;
    w->n = nodes;
    w->nodes = calloc(nodes, sizeof(*w->nodes));
    if (w->nodes == NULL)
        return -1;
    for (unsigned i = 0; i < nodes; i++)
        if (node_init(w, i) != 0)
            return -1;
    for (unsigned i = 0; i < nodes; i++)
        if (node_peers(w, i) != 0)
            return -1;
    return 0;
}

/* Progress one context until it has nothing left to hand out. */
static void
node_progress(struct node *n)
{
    unsigned int count;

    do {
        HG_Progress(n->ctx, 0);
        count = 0;
        HG_Trigger(n->ctx, 0, UINT32_MAX, &count);
    } while (count > 0);
}

static int
world_teardown(struct world *w)
{
    int rc = 0;

    if (w->nodes == NULL)
        return 0;
    for (unsigned i = 0; i < w->n; i++) {
        struct node *n = &w->nodes[i];

        for (unsigned k = 0; k < n->npeers; k++)
            HG_Addr_free(n->cls, n->peers[k]);
        free(n->peers);
        free(n->slots);
    }
    /* Every RPC has completed: each node drains what is still leaving
     * (the last responses' completions) and goes. */
    for (unsigned i = 0; i < w->n; i++) {
        struct bh_side side = {
            .cls = w->nodes[i].cls, .ctx = w->nodes[i].ctx, .is_sim = true};

        if (side.cls != NULL && bh_side_fini(&side) != 0)
            rc = -1;
    }
    free(w->nodes);
    w->nodes = NULL;
    return rc;
}

/*
 * Progress the contexts with work, in the fabric's order; when none has
 * any, run the next event. With no event queued either, the RPCs still
 * outstanding can only wait on an HG timer, which progress with a timeout
 * on any context serves.
 */
static void
drive(struct world *w)
{
    void *data;
    uint8_t id;

    /* Each node's record was attached to its node (node_init()). */
    if (na_sim_ready_next_data(&data, &id) == NA_SUCCESS) {
        if (data != NULL)
            node_progress(data);
        return;
    }
    if (na_sim_step() != NA_SUCCESS)
        HG_Progress(w->nodes[0].ctx, 100);
}

/* Issue `count` RPCs, the first ones slot by slot across the nodes, and
 * drive the world until every one has completed. */
static void
run_phase(struct world *w, uint64_t count, double max_seconds, uint64_t seed)
{
    double deadline = bu_now_s() + max_seconds;

    unsigned callers = w->o->callers != 0 && w->o->callers < w->n
                           ? (unsigned) w->o->callers
                           : w->n;

    w->target = count;
    w->issued = w->done = 0;
    w->stop = false;
    for (unsigned k = 0; k < w->o->inflight; k++)
        for (unsigned i = 0; i < callers && w->issued < count; i++) {
            if (sc_post(&w->nodes[i].slots[k]) != 0)
                break;
            w->active++;
        }
    for (uint64_t pass = 0; w->active > 0; pass++) {
        drive(w);
        if ((pass & 1023) != 0 || bu_now_s() <= deadline)
            continue;
        w->stop = true;
        if (bu_now_s() > deadline + 10.0) {
            fprintf(stderr,
                    "sim_scale: %" PRIu64 " RPC(s) still in flight 10 s "
                    "after the bound: hung (replay with --seed %" PRIu64
                    " --nodes %u)\n",
                    w->active, seed, w->n);
            fflush(NULL);
            _Exit(2);
        }
    }
}

/* The measured phase, a function of its own so that a profiler can count
 * it alone, without set-up and warm-up:
 * valgrind --tool=callgrind --toggle-collect=run_timed sim_scale ... */
static __attribute__((noinline)) void
run_timed(struct world *w, uint64_t count, double max_seconds, uint64_t seed)
{
    run_phase(w, count, max_seconds, seed);
}

static int
run_world(const struct opts *o, unsigned nodes, struct result *res)
{
    struct world w = {0};
    double heap0, t0, t1, cpu0;
    uint64_t v0, ev0, pf0;
    int rc = 0;

    memset(res, 0, sizeof(*res));
    if (o->seed_given && na_sim_set_seed(o->seed) != NA_SUCCESS) {
        fprintf(stderr, "sim_scale: na_sim_set_seed failed\n");
        return -1;
    }
    res->seed = na_sim_get_seed();
    w.rng = res->seed ^ 0x5343414c45ULL; /* "SCALE" */
    heap0 = sc_heap_bytes();
    t0 = bu_now_s();
    if (world_setup(&w, o, nodes) != 0) {
        fprintf(stderr, "sim_scale: setting up %u nodes failed\n", nodes);
        rc = -1;
        goto out;
    }
    res->setup_s = bu_now_s() - t0;
    res->setup_bytes_per_node = (sc_heap_bytes() - heap0) / nodes;
    /* Untimed: the nodes' handle pools grow to what the load needs, and
     * the memory is touched once, before the measurement. */
    run_phase(&w, o->warmup * nodes, o->max_seconds, res->seed);
    v0 = na_sim_clock_now();
    ev0 = na_sim_trace_count();
    pf0 = na_sim_prefetched_events();
    res->copy_ns_before = bu_copy_probe_ns();
    t1 = bu_now_s();
    cpu0 = bu_cpu_s();
    run_timed(&w, o->rpcs, o->max_seconds, res->seed);
    res->real_s = bu_now_s() - t1;
    res->cpu_s = bu_cpu_s() - cpu0;
    res->copy_ns_after = bu_copy_probe_ns();
    res->sim_s = (double) (na_sim_clock_now() - v0) / 1e9;
    res->events = na_sim_trace_count() - ev0;
    res->prefetched = na_sim_prefetched_events() - pf0;
    res->rpcs = w.done;
    res->errors = w.errors;
    res->hash = na_sim_trace_hash();
    res->bytes_per_node = (sc_heap_bytes() - heap0) / nodes;
    res->huge_bytes = sc_huge_bytes();
out:
    t1 = bu_now_s();
    if (world_teardown(&w) != 0)
        rc = -1;
    res->teardown_s = bu_now_s() - t1;
    if (rc == 0 && res->errors != 0) {
        fprintf(stderr,
                "sim_scale: %" PRIu64 " RPC(s) failed or answered wrongly "
                "(replay with --seed %" PRIu64 " --nodes %u)\n",
                res->errors, res->seed, nodes);
        rc = -1;
    }
    if (rc == 0 && na_sim_world_exists()) {
        fprintf(stderr, "sim_scale: the world outlived its classes\n");
        rc = -1;
    }
    return rc;
}

/* A world's CPU time per round trip, in ns (0 with none). */
static double
cpu_ns_per_rpc(const struct result *r)
{
    return r->rpcs > 0 ? r->cpu_s * 1e9 / (double) r->rpcs : 0.0;
}

static void
report(const struct opts *o, unsigned nodes, const struct result *r,
       unsigned run, bool same_as_first)
{
    double rps = r->real_s > 0 ? (double) r->rpcs / r->real_s : 0.0;
    double rpc_cpu = r->cpu_s > 0 ? (double) r->rpcs / r->cpu_s : 0.0;
    double eps = r->real_s > 0 ? (double) r->events / r->real_s : 0.0;
    double ns_per_rpc = cpu_ns_per_rpc(r);
    unsigned peers = o->peers < nodes - 1 ? (unsigned) o->peers : nodes - 1;
    struct bu_json j;
    char hex[20];

    snprintf(hex, sizeof(hex), "%016" PRIx64, r->hash);
    printf("sim_scale %u nodes: %9.0f RPC/s real (%.0f per CPU s, %.0f ns "
           "CPU per RPC), %9.0f events/s, %.0f bytes/node  (%" PRIu64
           " RPCs, %.3f real s, %.6f sim s, setup %.1f ms, teardown %.1f ms; "
           "seed %" PRIu64 " hash %s%s; %.1f MiB on huge pages; a 2 KiB copy "
           "in cache %.1f ns before, %.1f ns after)\n",
           nodes, rps, rpc_cpu, ns_per_rpc, eps, r->bytes_per_node, r->rpcs,
           r->real_s, r->sim_s, r->setup_s * 1e3, r->teardown_s * 1e3, r->seed,
           hex,
           run == 0        ? ""
           : same_as_first ? ", same as run 1"
                           : ", DIFFERS",
           (double) r->huge_bytes / (1024.0 * 1024.0), r->copy_ns_before,
           r->copy_ns_after);
    bu_json_begin(&j, "sim_scale");
    bu_json_u64(&j, "nodes", nodes);
    bu_json_u64(&j, "run", run + 1);
    bu_json_u64(&j, "seed", r->seed);
    bu_json_str(&j, "trace_hash", hex);
    bu_json_u64(&j, "rpcs", r->rpcs);
    bu_json_u64(&j, "inflight_per_node", o->inflight);
    bu_json_u64(&j, "peers_per_node", peers);
    bu_json_u64(&j, "request_post", o->post);
    bu_json_u64(&j, "warmup_per_node", o->warmup);
    bu_json_u64(&j, "callers",
                o->callers != 0 && o->callers < nodes ? o->callers : nodes);
    bu_json_u64(&j, "events", r->events);
    bu_json_u64(&j, "prefetched_events", r->prefetched);
    bu_json_dbl(&j, "real_s", r->real_s);
    bu_json_dbl(&j, "cpu_s", r->cpu_s);
    bu_json_dbl(&j, "sim_s", r->sim_s);
    bu_json_dbl(&j, "rpc_per_s", rps);
    bu_json_dbl(&j, "rpc_per_cpu_s", rpc_cpu);
    bu_json_dbl(&j, "cpu_ns_per_rpc", ns_per_rpc);
    bu_json_dbl(&j, "events_per_s", eps);
    bu_json_dbl(&j, "bytes_per_node", r->bytes_per_node);
    bu_json_dbl(&j, "setup_bytes_per_node", r->setup_bytes_per_node);
    bu_json_i64(&j, "anon_huge_bytes", r->huge_bytes);
    bu_json_dbl(&j, "setup_ms", r->setup_s * 1e3);
    bu_json_dbl(&j, "teardown_ms", r->teardown_s * 1e3);
    bu_json_dbl(&j, "cpu_copy_ns_before", r->copy_ns_before);
    bu_json_dbl(&j, "cpu_copy_ns_after", r->copy_ns_after);
    bu_json_bool(&j, "deterministic", run == 0 || same_as_first);
    bu_json_end(&j);
}

/* After the worlds: each one's CPU per RPC against the first world's, and
 * whether the CPU ran at one speed around both (their four probes). A
 * ratio of two runs at different speeds is not the library's growth, and
 * the line says so instead of letting the ratio pass for it. */
static void
report_growth(const struct opts *o, const struct result *first)
{
    double base = cpu_ns_per_rpc(&first[0]);

    for (unsigned k = 1; k < o->nworlds; k++) {
        const struct result *r = &first[k];
        double ns = cpu_ns_per_rpc(r);
        double p[4] = {first[0].copy_ns_before, first[0].copy_ns_after,
                       r->copy_ns_before, r->copy_ns_after};
        double lo, hi, ratio = base > 0 ? ns / base : 0.0;
        bool same = bu_one_speed(p, 4, &lo, &hi);
        struct bu_json j;

        printf("sim_scale growth: %u nodes cost %.2fx the CPU per RPC of %u "
               "nodes (a 2 KiB copy in cache took %.1f to %.1f ns around "
               "the two runs: %s)\n",
               o->nodes[k], ratio, o->nodes[0], lo, hi,
               same ? "one speed"
                    : "the CPU's speed changed, so the ratio mixes two "
                      "speeds and is not the library's growth");
        bu_json_begin(&j, "sim_scale_growth");
        bu_json_u64(&j, "from_nodes", o->nodes[0]);
        bu_json_u64(&j, "to_nodes", o->nodes[k]);
        bu_json_dbl(&j, "cost_ratio", ratio);
        bu_json_dbl(&j, "copy_ns_min", lo);
        bu_json_dbl(&j, "copy_ns_max", hi);
        bu_json_bool(&j, "same_speed", same);
        bu_json_end(&j);
    }
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: sim_scale [options]\n"
            "  --nodes LIST       world sizes (default 10,100,1000,10000)\n"
            "  --seed S           seed of every world (default: QS_SIM_SEED "
            "or the sim's default)\n"
            "  --rpcs N           RPCs per world (default 200000)\n"
            "  --inflight N       RPCs outstanding per node (default 2)\n"
            "  --peers N          peers per node, drawn at random (default "
            "16)\n"
            "  --post N           request receives each node keeps posted "
            "(default 8)\n"
            "  --callers N        only the first N nodes call (all serve; "
            "default: all)\n"
            "  --warmup N         untimed RPCs per node before the "
            "measurement (default 8)\n"
            "  --repeat N         run each world N times; the trace hash "
            "must repeat\n"
            "  --max-seconds S    real-time bound per world (default 120)\n");
}

int
main(int argc, char **argv)
{
    struct opts o = {
        .nodes = {10, 100, 1000, 10000},
        .nworlds = 4,
        .rpcs = 200000,
        .inflight = 2,
        .peers = 16,
        .post = 8,
        .warmup = 8,
        .repeat = 1,
        .max_seconds = 120.0,
    };
    int rc = 0;

    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (!ok) {
        } else if (strcmp(a, "--nodes") == 0) {
            ok = bu_parse_count_list(v, 2, SC_MAX_NODES, o.nodes, SC_MAX_WORLDS,
                                     &o.nworlds);
        } else if (strcmp(a, "--seed") == 0) {
            ok = o.seed_given = bu_parse_u64(v, &o.seed);
        } else if (strcmp(a, "--rpcs") == 0) {
            ok = bu_parse_u64(v, &o.rpcs) && o.rpcs > 0;
        } else if (strcmp(a, "--inflight") == 0) {
            ok = bu_parse_u64(v, &o.inflight) && o.inflight > 0 &&
                 o.inflight <= SC_MAX_INFLIGHT;
        } else if (strcmp(a, "--peers") == 0) {
            ok = bu_parse_u64(v, &o.peers) && o.peers > 0 &&
                 o.peers <= SC_MAX_PEERS;
        } else if (strcmp(a, "--post") == 0) {
            ok = bu_parse_u64(v, &o.post) && o.post > 0 && o.post <= 4096;
        } else if (strcmp(a, "--callers") == 0) {
            ok = bu_parse_u64(v, &o.callers);
        } else if (strcmp(a, "--warmup") == 0) {
            ok = bu_parse_u64(v, &o.warmup) && o.warmup <= 1000000;
        } else if (strcmp(a, "--repeat") == 0) {
            ok = bu_parse_u64(v, &o.repeat) && o.repeat > 0 && o.repeat < 100;
        } else if (strcmp(a, "--max-seconds") == 0) {
            ok = bu_parse_double(v, &o.max_seconds) && o.max_seconds > 0 &&
                 o.max_seconds < 3600;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "sim_scale: bad argument near '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (na_sim_world_exists()) {
        fprintf(stderr, "sim_scale: a simulated world already exists\n");
        return 1;
    }
    struct result first[SC_MAX_WORLDS];

    for (unsigned k = 0; k < o.nworlds && rc == 0; k++) {
        uint64_t first_hash = 0;

        for (unsigned run = 0; run < o.repeat; run++) {
            struct result r;
            bool same;

            if (run_world(&o, o.nodes[k], &r) != 0) {
                rc = 1;
                break;
            }
            if (run == 0) {
                first_hash = r.hash;
                first[k] = r;
            }
            same = r.hash == first_hash;
            report(&o, o.nodes[k], &r, run, same);
            if (!same) {
                fprintf(stderr,
                        "sim_scale: %u nodes, seed %" PRIu64 ": trace hash "
                        "%016" PRIx64 " differs from run 1's %016" PRIx64 "\n",
                        o.nodes[k], r.seed, r.hash, first_hash);
                rc = 1;
            }
        }
    }
    if (rc == 0)
        report_growth(&o, first);
    return rc;
}
