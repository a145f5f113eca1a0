/*
 * sim_speed: how fast the simulated fabric runs an RPC + bulk workload.
 *
 *   QS_SIM_SEED=<seed> sim_speed [--nodes 2,8] [--rpcs N] [--repeat N] ...
 *
 * Every node is an HG class on "sim://" in this process, and one thread
 * drives all of them, so a run is deterministic for its seed: the same seed
 * gives the same trace hash and the same virtual time. A workload with n
 * nodes has max(1, n/4) servers and the rest clients; each client keeps
 * --inflight RPCs outstanding to its server (client i uses server i mod
 * servers). Every --bulk-every'th RPC carries a bulk handle over
 * --bulk-size bytes that the server pulls into a region it creates for the
 * request; the server answers with a value computed from what it received,
 * which the client checks.
 *
 * Reported per workload: RPC round trips per real second, simulated seconds
 * per real second, trace events per real second, the cost of creating and
 * finalizing the world's classes, and from those how many seeds of
 * --seed-rpcs RPCs one CPU-hour buys (the question a seed sweep asks).
 */
#include "bench_hg.h"
#include "bench_util.h"

#include <mercury_macros.h>
#include <na_sim.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SP_MAX_NODES 64
#define SP_MAX_INFLIGHT 64
#define SP_MAX_WORKLOADS 8
#define SP_KEY UINT64_C(0x9e3779b97f4a7c15)

MERCURY_GEN_PROC(sp_in_t,
                 ((uint64_t) (seq))((uint64_t) (bulk_size))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(sp_out_t, ((uint64_t) (value)))

/* How the driver moves virtual time when nothing is due (see drive()). */
enum advance { ADVANCE_STEP, ADVANCE_PROGRESS };

struct opts {
    enum advance advance;
    unsigned nodes[SP_MAX_WORKLOADS];
    unsigned nworkloads;
    uint64_t rpcs;
    uint64_t inflight;
    uint64_t bulk_every;
    uint64_t bulk_size;
    uint64_t repeat;
    uint64_t seed_rpcs;
    double max_seconds;
};

struct client;

struct slot {
    struct client *cl;
    hg_handle_t handle;
    void *buf;
    hg_bulk_t bulk;
    uint64_t seq;
    uint64_t expect;
};

struct client {
    struct bh_side side;
    hg_addr_t server;
    hg_id_t id;
    struct slot slots[SP_MAX_INFLIGHT];
    unsigned nslots;
    uint64_t target, issued, done, bulk_done;
    unsigned active;
    bool stop;
    uint64_t errors;
    const struct opts *o;
};

/* One pull being served. */
struct pull {
    hg_handle_t handle;
    sp_in_t in;
    hg_bulk_t local;
};

/* ---- value both sides compute ------------------------------------------ */

static uint64_t
small_value(uint64_t seq)
{
    return seq * 3u + 1u;
}

static uint64_t
bulk_value(uint64_t first, uint64_t last)
{
    return first + last;
}

/* ---- server ------------------------------------------------------------- */

static void
respond_and_free(hg_handle_t handle, sp_in_t *in, uint64_t value)
{
    sp_out_t out = {.value = value};

    if (HG_Respond(handle, NULL, NULL, &out) != HG_SUCCESS)
        fprintf(stderr, "sim_speed: HG_Respond failed\n");
    HG_Free_input(handle, in);
    HG_Destroy(handle);
}

static hg_return_t
pulled(const struct hg_cb_info *info)
{
    struct pull *p = info->arg;
    uint64_t value = 0, first, last;
    void *ptr = NULL;
    hg_size_t len = 0;
    hg_uint32_t n = 0;

    /* A failed pull answers 0, which the client reports as an error. */
    if (info->ret == HG_SUCCESS &&
        HG_Bulk_access(p->local, 0, p->in.bulk_size, HG_BULK_READWRITE, 1, &ptr,
                       &len, &n) == HG_SUCCESS &&
        n == 1 && len >= 16) {
        memcpy(&first, ptr, 8);
        memcpy(&last, (char *) ptr + len - 8, 8);
        value = bulk_value(first, last);
    }
    HG_Bulk_free(p->local);
    respond_and_free(p->handle, &p->in, value);
    free(p);
    return HG_SUCCESS;
}

static hg_return_t
sp_handler(hg_handle_t handle)
{
    const struct hg_info *hi = HG_Get_info(handle);
    struct pull *p;
    sp_in_t in;
    hg_size_t size;
    hg_return_t ret;

    ret = HG_Get_input(handle, &in);
    if (ret != HG_SUCCESS) {
        HG_Destroy(handle);
        return ret;
    }
    /* Only a pull needs state that outlives the handler. */
    if (in.bulk == HG_BULK_NULL || in.bulk_size < 16) {
        respond_and_free(handle, &in, small_value(in.seq));
        return HG_SUCCESS;
    }
    /* Answered with 0 when it cannot be served, like a failed pull. */
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        respond_and_free(handle, &in, 0);
        return HG_SUCCESS;
    }
    p->handle = handle;
    p->in = in;
    /* A region per request, allocated by the library: registration is part
     * of what a real service pays per transfer. */
    size = p->in.bulk_size;
    ret = HG_Bulk_create(hi->hg_class, 1, NULL, &size, HG_BULK_READWRITE,
                         &p->local);
    if (ret == HG_SUCCESS)
        ret =
            HG_Bulk_transfer(hi->context, pulled, p, HG_BULK_PULL, hi->addr,
                             p->in.bulk, 0, p->local, 0, size, HG_OP_ID_IGNORE);
    if (ret != HG_SUCCESS) {
        if (p->local != HG_BULK_NULL)
            HG_Bulk_free(p->local);
        respond_and_free(handle, &p->in, 0);
        free(p);
    }
    return HG_SUCCESS;
}

/* ---- client ------------------------------------------------------------- */

static int slot_post(struct slot *s);

static hg_return_t
sp_done(const struct hg_cb_info *info)
{
    struct slot *s = info->arg;
    struct client *cl = s->cl;
    sp_out_t out;

    if (info->ret != HG_SUCCESS ||
        HG_Get_output(info->info.forward.handle, &out) != HG_SUCCESS) {
        cl->errors++;
    } else {
        if (out.value != s->expect)
            cl->errors++;
        HG_Free_output(info->info.forward.handle, &out);
        cl->done++;
        if (s->bulk != HG_BULK_NULL && s->seq % cl->o->bulk_every == 0)
            cl->bulk_done++;
    }
    if (cl->stop || cl->errors != 0 || cl->issued >= cl->target ||
        slot_post(s) != 0)
        cl->active--;
    return HG_SUCCESS;
}

static int
slot_post(struct slot *s)
{
    struct client *cl = s->cl;
    sp_in_t in;
    bool with_bulk;

    s->seq = cl->issued;
    with_bulk = s->bulk != HG_BULK_NULL && s->seq % cl->o->bulk_every == 0;
    in.seq = s->seq;
    in.bulk = with_bulk ? s->bulk : HG_BULK_NULL;
    in.bulk_size = with_bulk ? cl->o->bulk_size : 0;
    if (with_bulk) {
        uint64_t first = s->seq, last = s->seq ^ SP_KEY;
        memcpy(s->buf, &first, 8);
        memcpy((char *) s->buf + cl->o->bulk_size - 8, &last, 8);
        s->expect = bulk_value(first, last);
    } else {
        s->expect = small_value(s->seq);
    }
    if (HG_Forward(s->handle, sp_done, s, &in) != HG_SUCCESS) {
        cl->errors++;
        return -1;
    }
    cl->issued++;
    return 0;
}

/* ---- one workload ------------------------------------------------------- */

struct world {
    struct bh_side servers[SP_MAX_NODES];
    struct client clients[SP_MAX_NODES];
    unsigned nservers, nclients;
};

struct result {
    uint64_t rpcs, bulk, errors, events, hash, seed;
    double real_s, sim_s, setup_s, teardown_s, cpu_s;
    double setup_cpu_s, teardown_cpu_s;
    struct na_sim_link link;
};

static int
world_setup(struct world *w, const struct opts *o, unsigned nodes)
{
    char name[64];
    hg_size_t bsize = o->bulk_size;

    w->nservers = nodes / 4 > 0 ? nodes / 4 : 1;
    w->nclients = nodes - w->nservers;
    for (unsigned i = 0; i < w->nservers; i++) {
        snprintf(name, sizeof(name), "sim://speed-s%u", i);
        if (bh_side_init(&w->servers[i], name, true, BH_MODE_WAIT, name) != 0 ||
            MERCURY_REGISTER(w->servers[i].cls, "qs_sim_speed", sp_in_t,
                             sp_out_t, sp_handler) == 0)
            return -1;
    }
    for (unsigned i = 0; i < w->nclients; i++) {
        struct client *cl = &w->clients[i];
        char server[64];

        cl->o = o;
        snprintf(name, sizeof(name), "sim://speed-c%u", i);
        snprintf(server, sizeof(server), "sim://speed-s%u", i % w->nservers);
        if (bh_side_init(&cl->side, name, false, BH_MODE_WAIT, name) != 0)
            return -1;
        cl->id = MERCURY_REGISTER(cl->side.cls, "qs_sim_speed", sp_in_t,
                                  sp_out_t, NULL);
        if (cl->id == 0 || bh_lookup(&cl->side, server, &cl->server) != 0)
            return -1;
        /* Split the RPCs evenly; the first clients take the remainder. */
        cl->target = o->rpcs / w->nclients + (i < o->rpcs % w->nclients);
        for (unsigned k = 0; k < o->inflight; k++) {
            struct slot *s = &cl->slots[k];
            s->cl = cl;
            if (HG_Create(cl->side.ctx, cl->server, cl->id, &s->handle) !=
                HG_SUCCESS)
                return -1;
            cl->nslots++;
            if (o->bulk_every == 0)
                continue;
            s->buf = calloc(1, o->bulk_size);
            if (s->buf == NULL ||
                HG_Bulk_create(cl->side.cls, 1, &s->buf, &bsize,
                               HG_BULK_READ_ONLY | HG_BULK_NO_EAGER,
                               &s->bulk) != HG_SUCCESS)
                return -1;
        }
    }
    return 0;
}

static int
world_teardown(struct world *w)
{
    int rc = 0;

    for (unsigned i = 0; i < w->nclients; i++) {
        struct client *cl = &w->clients[i];
        for (unsigned k = 0; k < cl->nslots; k++) {
            HG_Destroy(cl->slots[k].handle);
            if (cl->slots[k].bulk != HG_BULK_NULL)
                HG_Bulk_free(cl->slots[k].bulk);
            free(cl->slots[k].buf);
        }
        if (cl->server != HG_ADDR_NULL)
            HG_Addr_free(cl->side.cls, cl->server);
        if (cl->side.cls != NULL && bh_side_fini(&cl->side) != 0)
            rc = -1;
    }
    for (unsigned i = 0; i < w->nservers; i++)
        if (w->servers[i].cls != NULL && bh_side_fini(&w->servers[i]) != 0)
            rc = -1;
    return rc;
}

/*
 * One pass over every context with a zero timeout, which runs what is due
 * at the current virtual time. When nothing ran, virtual time has to move:
 *  - ADVANCE_STEP runs the earliest queued event with na_sim_step(), so the
 *    clock lands exactly on it and the next pass handles what it caused;
 *  - ADVANCE_PROGRESS calls HG_Progress() with a timeout on the first
 *    client, the way the single-threaded examples drive the simulator.
 * Both give the same callbacks in the same order; they differ in how far
 * the clock may run ahead (see docs/performance.md).
 */
static unsigned
drive(struct world *w, enum advance advance)
{
    unsigned n = 0;

    for (unsigned i = 0; i < w->nservers; i++)
        n += bh_progress(w->servers[i].ctx, BH_MODE_BUSY);
    for (unsigned i = 0; i < w->nclients; i++)
        n += bh_progress(w->clients[i].side.ctx, BH_MODE_BUSY);
    if (n != 0)
        return n;
    /* An empty event queue with RPCs outstanding can only be waiting on an
     * HG timer, which the progress call serves. */
    if (advance == ADVANCE_PROGRESS || na_sim_step() != NA_SUCCESS)
        n += bh_progress(w->clients[0].side.ctx, BH_MODE_WAIT);
    return n;
}

static int
run_workload(const struct opts *o, unsigned nodes, struct result *res)
{
    struct world *w = calloc(1, sizeof(*w));
    double t0, t1, t2, cpu0, cpu_setup0, cpu_teardown0, deadline;
    uint64_t v0, ev0;
    unsigned active = 0;
    int rc = 0;

    if (w == NULL)
        return -1;
    memset(res, 0, sizeof(*res));
    t0 = bu_now_s();
    cpu_setup0 = bu_cpu_s();
    if (world_setup(w, o, nodes) != 0) {
        fprintf(stderr, "sim_speed: setting up %u nodes failed\n", nodes);
        rc = -1;
        goto out;
    }
    res->seed = na_sim_get_seed();
    na_sim_get_link("speed-c0", "speed-s0", &res->link);
    t1 = bu_now_s();
    res->setup_s = t1 - t0;
    cpu0 = bu_cpu_s();
    res->setup_cpu_s = cpu0 - cpu_setup0;
    v0 = na_sim_clock_now();
    ev0 = na_sim_trace_count();
    deadline = t1 + o->max_seconds;

    for (unsigned i = 0; i < w->nclients; i++) {
        struct client *cl = &w->clients[i];
        for (unsigned k = 0; k < cl->nslots && cl->issued < cl->target; k++) {
            if (slot_post(&cl->slots[k]) != 0)
                break;
            cl->active++;
        }
    }
    for (uint64_t pass = 0;; pass++) {
        active = 0;
        for (unsigned i = 0; i < w->nclients; i++)
            active += w->clients[i].active;
        if (active == 0)
            break;
        drive(w, o->advance);
        /* A clock read per pass was a few percent of a 2-node run. */
        if ((pass & 255) == 0 && bu_now_s() > deadline) {
            for (unsigned i = 0; i < w->nclients; i++)
                w->clients[i].stop = true;
            if (bu_now_s() > deadline + 10.0) {
                fprintf(stderr,
                        "sim_speed: %u RPC(s) still in flight 10 s "
                        "after the bound: hung (replay with "
                        "QS_SIM_SEED=%" PRIu64 ")\n",
                        active, na_sim_get_seed());
                fflush(NULL);
                _Exit(2);
            }
        }
    }
    res->real_s = bu_now_s() - t1;
    res->cpu_s = bu_cpu_s() - cpu0;
    res->sim_s = (double) (na_sim_clock_now() - v0) / 1e9;
    res->events = na_sim_trace_count() - ev0;
    for (unsigned i = 0; i < w->nclients; i++) {
        res->rpcs += w->clients[i].done;
        res->bulk += w->clients[i].bulk_done;
        res->errors += w->clients[i].errors;
    }
    res->hash = na_sim_trace_hash();
out:
    t2 = bu_now_s();
    cpu_teardown0 = bu_cpu_s();
    if (world_teardown(w) != 0)
        rc = -1;
    res->teardown_s = bu_now_s() - t2;
    res->teardown_cpu_s = bu_cpu_s() - cpu_teardown0;
    free(w);
    if (rc == 0 && res->errors != 0) {
        fprintf(stderr,
                "sim_speed: %" PRIu64 " RPC(s) failed or answered "
                "wrongly (replay with QS_SIM_SEED=%" PRIu64 ")\n",
                res->errors, res->seed);
        rc = -1;
    }
    return rc;
}

static void
report(const struct opts *o, unsigned nodes, const struct result *r,
       unsigned run, bool same_as_first)
{
    double rps = r->real_s > 0 ? (double) r->rpcs / r->real_s : 0.0;
    double sps = r->real_s > 0 ? r->sim_s / r->real_s : 0.0;
    double eps = r->real_s > 0 ? (double) r->events / r->real_s : 0.0;
    /* A sweep seed pays the world's set-up and teardown, then its RPCs,
     * all on one core: CPU time is what a sweep buys by the hour. */
    double rpc_cpu = r->rpcs > 0 ? r->cpu_s / (double) r->rpcs : 0.0;
    double per_seed =
        r->setup_cpu_s + r->teardown_cpu_s + (double) o->seed_rpcs * rpc_cpu;
    double seeds_per_hour = per_seed > 0 ? 3600.0 / per_seed : 0.0;
    unsigned servers = nodes / 4 > 0 ? nodes / 4 : 1;
    struct bu_json j;

    printf("sim_speed %u nodes (%u server%s): %9.0f RPC/s real, %8.4f sim s "
           "per real s, %9.0f events/s  (%" PRIu64 " RPCs, %" PRIu64
           " bulk pulls, %.3f real s, %.6f sim s, setup %.1f ms, teardown "
           "%.1f ms; %.0f seeds of %" PRIu64 " RPCs per CPU-hour; seed %" PRIu64
           " hash %016" PRIx64 "%s)\n",
           nodes, servers, servers == 1 ? "" : "s", rps, sps, eps, r->rpcs,
           r->bulk, r->real_s, r->sim_s, r->setup_s * 1e3, r->teardown_s * 1e3,
           seeds_per_hour, o->seed_rpcs, r->seed, r->hash,
           run == 0        ? ""
           : same_as_first ? ", same as run 1"
                           : ", DIFFERS");
    bu_json_begin(&j, "sim_speed");
    bu_json_u64(&j, "nodes", nodes);
    bu_json_u64(&j, "servers", servers);
    bu_json_u64(&j, "run", run + 1);
    bu_json_str(&j, "advance",
                o->advance == ADVANCE_STEP ? "step" : "progress");
    bu_json_u64(&j, "seed", r->seed);
    bu_json_u64(&j, "rpcs", r->rpcs);
    bu_json_u64(&j, "bulk_pulls", r->bulk);
    bu_json_u64(&j, "bulk_size", o->bulk_every ? o->bulk_size : 0);
    bu_json_u64(&j, "inflight_per_client", o->inflight);
    bu_json_u64(&j, "events", r->events);
    bu_json_dbl(&j, "real_s", r->real_s);
    bu_json_dbl(&j, "cpu_s", r->cpu_s);
    bu_json_dbl(&j, "sim_s", r->sim_s);
    bu_json_dbl(&j, "rpc_per_real_s", rps);
    bu_json_dbl(&j, "sim_s_per_real_s", sps);
    bu_json_dbl(&j, "events_per_real_s", eps);
    bu_json_dbl(&j, "setup_ms", r->setup_s * 1e3);
    bu_json_dbl(&j, "teardown_ms", r->teardown_s * 1e3);
    bu_json_dbl(&j, "setup_cpu_ms", r->setup_cpu_s * 1e3);
    bu_json_dbl(&j, "teardown_cpu_ms", r->teardown_cpu_s * 1e3);
    bu_json_dbl(&j, "rpc_per_cpu_s", rpc_cpu > 0 ? 1.0 / rpc_cpu : 0.0);
    bu_json_u64(&j, "seed_rpcs", o->seed_rpcs);
    bu_json_dbl(&j, "seeds_per_cpu_hour", seeds_per_hour);
    bu_json_u64(&j, "link_latency_ns", r->link.latency_ns);
    bu_json_u64(&j, "link_bandwidth", r->link.bandwidth);
    {
        char hex[20];
        snprintf(hex, sizeof(hex), "%016" PRIx64, r->hash);
        bu_json_str(&j, "trace_hash", hex);
    }
    bu_json_bool(&j, "deterministic", run == 0 || same_as_first);
    bu_json_end(&j);
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: [QS_SIM_SEED=n] sim_speed [options]\n"
            "  --nodes LIST       workloads by node count (default 2,8; a "
            "quarter are servers)\n"
            "  --rpcs N           RPCs per workload (default 100000)\n"
            "  --inflight N       RPCs outstanding per client (default 4)\n"
            "  --bulk-every N     every Nth RPC carries a bulk pull (default "
            "4; 0: none)\n"
            "  --bulk-size N      bytes per pull (default 64K)\n"
            "  --repeat N         run each workload N times and check the "
            "trace hash repeats\n"
            "  --seed-rpcs N      RPCs per sweep seed for the seeds/hour "
            "figure (default 1000)\n"
            "  --max-seconds S    real-time bound per workload (default "
            "60)\n"
            "  --advance step|progress  how idle passes move virtual time: "
            "na_sim_step()\n"
            "                     (default) or HG_Progress() with a timeout\n");
}

int
main(int argc, char **argv)
{
    struct opts o = {
        .nodes = {2, 8},
        .nworkloads = 2,
        .rpcs = 100000,
        .inflight = 4,
        .bulk_every = 4,
        .bulk_size = 64u * 1024u,
        .repeat = 1,
        .seed_rpcs = 1000,
        .max_seconds = 60.0,
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
        } else if (strcmp(a, "--advance") == 0) {
            ok = strcmp(v, "step") == 0 || strcmp(v, "progress") == 0;
            o.advance =
                strcmp(v, "step") == 0 ? ADVANCE_STEP : ADVANCE_PROGRESS;
        } else if (strcmp(a, "--nodes") == 0) {
            ok = bu_parse_count_list(v, 2, SP_MAX_NODES, o.nodes,
                                     SP_MAX_WORKLOADS, &o.nworkloads);
        } else if (strcmp(a, "--rpcs") == 0) {
            ok = bu_parse_u64(v, &o.rpcs) && o.rpcs > 0;
        } else if (strcmp(a, "--inflight") == 0) {
            ok = bu_parse_u64(v, &o.inflight) && o.inflight > 0 &&
                 o.inflight <= SP_MAX_INFLIGHT;
        } else if (strcmp(a, "--bulk-every") == 0) {
            ok = bu_parse_u64(v, &o.bulk_every);
        } else if (strcmp(a, "--bulk-size") == 0) {
            ok = bu_parse_size(v, &o.bulk_size) && o.bulk_size >= 16;
        } else if (strcmp(a, "--repeat") == 0) {
            ok = bu_parse_u64(v, &o.repeat) && o.repeat > 0 && o.repeat < 100;
        } else if (strcmp(a, "--seed-rpcs") == 0) {
            ok = bu_parse_u64(v, &o.seed_rpcs);
        } else if (strcmp(a, "--max-seconds") == 0) {
            ok = bu_parse_double(v, &o.max_seconds) && o.max_seconds < 3600;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "sim_speed: bad argument near '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (na_sim_world_exists()) {
        fprintf(stderr, "sim_speed: a simulated world already exists\n");
        return 1;
    }
    for (unsigned k = 0; k < o.nworkloads; k++) {
        uint64_t first_hash = 0;
        double first_sim = 0.0;
        for (unsigned run = 0; run < o.repeat; run++) {
            struct result r;
            bool same;
            if (run_workload(&o, o.nodes[k], &r) != 0) {
                rc = 1;
                break;
            }
            if (run == 0) {
                first_hash = r.hash;
                first_sim = r.sim_s;
            }
            same = r.hash == first_hash && r.sim_s == first_sim;
            report(&o, o.nodes[k], &r, run, same);
            if (!same)
                rc = 1;
        }
    }
    return rc;
}
