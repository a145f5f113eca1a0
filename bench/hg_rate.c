/*
 * hg_rate: RPC latency and rate over any Quicksilver info string, with an
 * empty RPC or with an input argument of a given size (--payload).
 *
 *   hg_rate [options] [info]                  one process: server + client
 *   hg_rate --server [options] [info]         serve until a shutdown RPC
 *   hg_rate --client ADDR [options] [info]    measure against that server
 *
 * The info string comes from the argument, else QS_BENCH_INFO, else "sim".
 * For each progress mode (busy, noblock, wait; see bench_hg.h) it measures:
 *  - the round trip of an empty RPC with one in flight (median, p99, mean);
 *  - the RPC rate with N in flight, N = 1, 4, 16, 64 by default.
 * Each measurement prints a human line and a JSON line.
 *
 * --payload sweeps the size of the RPC's input: 0 is the empty RPC (no
 * proc at all); any other size is an RPC whose input is a 4-byte length and
 * that many bytes (encoded with hg_proc_uint32_t and hg_proc_memcpy, the
 * response empty). "eager" is the largest such input that still fits in the
 * eager request (HG_Class_get_input_eager_size() of the client's class less
 * the 4-byte length), "eager+N" N bytes more, which go through the overflow
 * transfer. The server decodes every input into its own buffer and checks
 * three of its bytes; a --server prints how many inputs it saw, how many
 * came through overflow and how many were wrong when it exits.
 *
 * In one process the server class is driven by its own progress thread and
 * the client by the main thread, as a service and its user would be. On the
 * simulated fabric both are driven from the main thread instead (--driver
 * inline), because a single-threaded sim run is deterministic and lets
 * virtual time jump; its numbers are the simulator's real-time cost per RPC.
 *
 * Every loop is bounded: by its RPC count and by --max-seconds of real time.
 */
#include "bench_hg.h"
#include "bench_util.h"

#include <mercury_proc.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE_MAX_INFLIGHT 1024
#define RATE_MAX_POINTS 16
/* A rate run is also timed in this many equal windows of completions. On a
 * shared machine a window in which the process was descheduled is slow
 * while the others are not, so the median window says what the library
 * does when it has the CPU, and the overall rate what it did in fact. */
#define RATE_WINDOWS 20
#define MAX_PAYLOADS 16
/* The largest input --payload accepts, and what the length field costs. */
#define PAYLOAD_MAX (1u << 20)
#define PAYLOAD_OVERHEAD 4u

/* One --payload entry: a size, or the eager limit plus `bytes`. */
struct payload_spec {
    bool eager;
    uint64_t bytes;
    char label[24]; /* as given: "2K", "eager+1" */
};

struct opts {
    struct bh_opts common;
    unsigned modes;
    uint64_t lat_iters;
    uint64_t rate_count;
    uint64_t warmup;
    unsigned inflight[RATE_MAX_POINTS];
    unsigned ninflight;
    struct payload_spec payloads[MAX_PAYLOADS];
    unsigned npayloads;
    double max_seconds;
};

/* The input argument of the payload RPC. The decoding side presets `data`
 * and `cap` (its own buffer); the proc copies into it. */
struct payload_in {
    hg_uint32_t size;
    hg_uint32_t cap;
    void *data;
};

/* What a serving class saw of payload RPCs (its handler's thread only). */
struct payload_server {
    unsigned char *buf; /* PAYLOAD_MAX bytes */
    uint64_t received, overflowed, bad;
};

/* One RPC slot: a handle that is forwarded again as soon as it completes. */
struct slot {
    hg_handle_t handle;
    uint64_t t0;
    struct run *run;
};

/* The state of one measurement. Only the main thread touches it: forward
 * callbacks run from the client's HG_Trigger(). */
struct run {
    uint64_t target;   /* RPCs to complete                         */
    uint64_t issued;   /* HG_Forward() calls that succeeded        */
    uint64_t done;     /* successful completions                   */
    unsigned active;   /* slots with a forward in flight           */
    bool stop;         /* the time bound passed: issue nothing new */
    hg_return_t err;   /* first error seen                         */
    uint64_t last_ns;  /* time of the last completion              */
    double *samples;   /* per-RPC round trips in us, or NULL       */
    uint64_t cap;      /* room in samples                          */
    uint64_t win_size; /* completions per window, 0: no windows    */
    uint64_t win_ns[RATE_WINDOWS + 1]; /* end of each window       */
    struct payload_in *in;             /* the argument, or NULL     */
};

struct bench {
    struct opts *o;
    enum bh_mode mode;
    struct bh_side server, client;
    struct bh_driver driver;
    struct bh_pump pump;
    hg_addr_t target;
    hg_id_t null_id, payload_id, shutdown_id;
    struct payload_in in; /* the client's argument, NULL data: empty  */
    const char *payload_label;
    hg_size_t eager_size; /* HG_Class_get_input_eager_size(), client */
    struct payload_server srv;
    atomic_int shutdown_state;
    struct slot slots[RATE_MAX_INFLIGHT];
    unsigned nslots;
    int procs;
};

/* ---- the payload argument ---------------------------------------------- */

/* What every client input is copied from (PAYLOAD_MAX bytes, the pattern
 * the server checks), filled once in main(). */
static unsigned char *payload_src;

static hg_return_t
proc_payload_in(hg_proc_t proc, void *arg)
{
    struct payload_in *in = arg;
    hg_return_t ret = hg_proc_uint32_t(proc, &in->size);

    if (ret != HG_SUCCESS || in->size == 0)
        return ret;
    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        return hg_proc_memcpy(proc, in->data, in->size);
    case HG_DECODE:
        if (in->size > in->cap || in->data == NULL)
            return HG_OVERFLOW;
        return hg_proc_memcpy(proc, in->data, in->size);
    default:
        return HG_SUCCESS; /* nothing was allocated */
    }
}

static uint8_t
payload_byte(uint64_t i)
{
    return bu_pattern_byte(i, 0x5eed);
}

/* ---- server side -------------------------------------------------------- */

/* What a serving class saw; a wrong input fails the run. */
static int
payload_report(const struct payload_server *srv)
{
    if (srv->received == 0 && srv->bad == 0)
        return 0;
    fprintf(stderr,
            "hg_rate: server decoded %" PRIu64 " payload inputs, %" PRIu64
            " of them through overflow, %" PRIu64 " wrong\n",
            srv->received, srv->overflowed, srv->bad);
    return srv->bad == 0 ? 0 : -1;
}

static hg_return_t
null_handler(hg_handle_t handle)
{
    hg_return_t ret = HG_Respond(handle, NULL, NULL, NULL);

    HG_Destroy(handle);
    return ret;
}

static hg_return_t
payload_handler(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);
    struct payload_server *srv = HG_Registered_data(info->hg_class, info->id);
    struct payload_in in = {.cap = PAYLOAD_MAX, .data = srv->buf};
    void *extra = NULL;
    hg_return_t ret;

    ret = HG_Get_input(handle, &in);
    if (ret == HG_SUCCESS) {
        const unsigned char *d = srv->buf;
        uint32_t n = in.size;

        srv->received++;
        if (HG_Get_input_extra_buf(handle, &extra, NULL) == HG_SUCCESS &&
            extra != NULL)
            srv->overflowed++;
        if (n > 0 &&
            (d[0] != payload_byte(0) || d[n / 2] != payload_byte(n / 2) ||
             d[n - 1] != payload_byte(n - 1)))
            srv->bad++;
        HG_Free_input(handle, &in);
    } else {
        srv->bad++;
    }
    ret = HG_Respond(handle, NULL, NULL, NULL);
    HG_Destroy(handle);
    return ret;
}

static int
server_setup(struct bench *b, struct bh_side *side)
{
    if (bh_side_init(side, b->o->common.info, true, b->mode,
                     "sim://hg-rate-server") != 0)
        return -1;
    b->srv.buf = malloc(PAYLOAD_MAX);
    if (b->srv.buf == NULL)
        return -1;
    b->payload_id = HG_Register_name(side->cls, "qs_bench_payload",
                                     proc_payload_in, NULL, payload_handler);
    if (HG_Register_name(side->cls, "qs_bench_null", NULL, NULL,
                         null_handler) == 0 ||
        b->payload_id == 0 ||
        HG_Register_data(side->cls, b->payload_id, &b->srv, NULL) !=
            HG_SUCCESS ||
        bh_register_shutdown(side->cls, true, &b->shutdown_state) == 0) {
        fprintf(stderr, "hg_rate: RPC registration failed\n");
        return -1;
    }
    return 0;
}

/* ---- client side -------------------------------------------------------- */

static int slot_post(struct slot *s);

static hg_return_t
null_done(const struct hg_cb_info *info)
{
    struct slot *s = info->arg;
    struct run *r = s->run;
    uint64_t next = r->done + 1;
    bool window_end = r->win_size != 0 && next % r->win_size == 0 &&
                      next / r->win_size <= RATE_WINDOWS;
    /* The clock is read only where a figure needs it: every completion of
     * a latency run, the ends of the windows and the last completion of a
     * rate run. A clock read costs 25 ns to over 100 ns on the VMs this
     * runs on, which is a tenth of an RPC or more; a per-completion read
     * on the client would be counted against every library measured. */
    uint64_t now =
        r->samples != NULL || window_end || next >= r->target || r->stop
            ? bu_now_ns()
            : 0;

    if (info->ret != HG_SUCCESS) {
        if (r->err == HG_SUCCESS)
            r->err = info->ret;
        r->active--;
        return HG_SUCCESS;
    }
    if (r->samples != NULL && r->done < r->cap)
        r->samples[r->done] = (double) (now - s->t0) / 1e3;
    r->done++;
    if (now != 0)
        r->last_ns = now;
    if (window_end)
        r->win_ns[r->done / r->win_size] = now;
    if (r->stop || r->err != HG_SUCCESS || r->issued >= r->target ||
        slot_post(s) != 0)
        r->active--;
    return HG_SUCCESS;
}

static int
slot_post(struct slot *s)
{
    struct run *r = s->run;
    hg_return_t ret;

    if (r->samples != NULL)
        s->t0 = bu_now_ns();
    ret = HG_Forward(s->handle, null_done, s,
                     r->in != NULL && r->in->size > 0 ? r->in : NULL);
    if (ret != HG_SUCCESS) {
        if (r->err == HG_SUCCESS)
            r->err = ret;
        return -1;
    }
    r->issued++;
    return 0;
}

/*
 * Complete `count` RPCs with `inflight` of them outstanding. Returns 0 when
 * the run ended (possibly cut short by the time bound: r->done says how
 * many completed), -1 on an RPC error, -2 when RPCs stayed in flight past
 * every bound (a hang: the caller must not finalize).
 */
static int
run_rpcs(struct bench *b, struct run *r, unsigned inflight, uint64_t count,
         uint64_t *start_ns)
{
    double deadline = bu_now_s() + b->o->max_seconds;
    /* Past the time bound, RPCs in flight get this long to come back
     * before they are cancelled and the run is declared hung. */
    double grace = 10.0;
    unsigned pumps = 0;

    r->target = count;
    r->issued = r->done = 0;
    r->active = 0;
    r->stop = false;
    r->err = HG_SUCCESS;
    *start_ns = r->last_ns = bu_now_ns();
    r->win_ns[0] = *start_ns;
    for (unsigned i = 0; i < inflight && r->issued < count; i++) {
        b->slots[i].run = r;
        if (slot_post(&b->slots[i]) != 0)
            break;
        r->active++;
    }
    while (r->active > 0) {
        double now;

        bh_pump(&b->pump);
        /* A busy pump is short: the time bound is checked on one in 64. */
        if (b->mode == BH_MODE_BUSY && ++pumps % 64 != 0)
            continue;
        now = bu_now_s();
        if (now > deadline)
            r->stop = true;
        if (now > deadline + grace) {
            fprintf(stderr,
                    "hg_rate: %u RPC(s) still in flight %.0f s after the "
                    "time bound (%s, %s mode, %u in flight, %" PRIu64
                    " done): cancelling\n",
                    r->active, grace, b->o->common.info, bh_mode_name(b->mode),
                    inflight, r->done);
            for (unsigned i = 0; i < inflight; i++)
                HG_Cancel(b->slots[i].handle);
            double cancel_deadline = bu_now_s() + 5.0;
            while (r->active > 0 && bu_now_s() < cancel_deadline)
                bh_pump(&b->pump);
            if (r->active > 0) {
                fprintf(stderr,
                        "hg_rate: %u RPC(s) did not complete after "
                        "HG_Cancel: hung\n",
                        r->active);
                return -2;
            }
            return -1;
        }
    }
    if (r->err != HG_SUCCESS) {
        fprintf(stderr, "hg_rate: RPC failed (%s, %s mode, %u in flight): %s\n",
                b->o->common.info, bh_mode_name(b->mode), inflight,
                HG_Error_to_string(r->err));
        return -1;
    }
    return 0;
}

static void
json_common(struct bu_json *j, const struct bench *b, const char *metric)
{
    bu_json_begin(j, "hg_rate");
    bu_json_str(j, "metric", metric);
    bu_json_str(j, "info", b->o->common.info);
    bu_json_str(j, "mode", bh_mode_name(b->mode));
    bu_json_u64(j, "procs", (uint64_t) b->procs);
    bu_json_str(j, "driver",
                b->pump.inline_server != NULL ? "inline"
                : b->procs == 1               ? "thread"
                                              : "process");
    bu_json_u64(j, "payload", b->in.size);
    bu_json_str(j, "payload_spec", b->payload_label ? b->payload_label : "0");
    bu_json_u64(j, "eager_size", b->eager_size);
}

static int
measure_latency(struct bench *b)
{
    struct run r = {.in = &b->in};
    uint64_t start;
    double med, p99, mean, lo;
    struct bu_json j;
    int rc;

    if (b->o->warmup > 0) {
        rc = run_rpcs(b, &r, 1, b->o->warmup, &start);
        if (rc != 0)
            return rc;
    }
    r.cap = b->o->lat_iters;
    r.samples = calloc(r.cap, sizeof(double));
    if (r.samples == NULL)
        return -1;
    rc = run_rpcs(b, &r, 1, b->o->lat_iters, &start);
    if (rc == 0 && r.done == 0) {
        fprintf(stderr,
                "hg_rate: no RPC completed within the %.0f s bound "
                "(%s, %s mode)\n",
                b->o->max_seconds, b->o->common.info, bh_mode_name(b->mode));
        rc = -1;
    }
    if (rc == 0) {
        uint64_t n = r.done < r.cap ? r.done : r.cap;
        med = bu_quantile(r.samples, n, 0.5);
        p99 = bu_quantile(r.samples, n, 0.99);
        lo = bu_quantile(r.samples, n, 0.0);
        mean = bu_mean(r.samples, n);
        printf("hg_rate %-26s %-7s procs=%d payload=%-6u latency: median "
               "%8.2f us  p99 %8.2f us  min %7.2f us  mean %8.2f us  (%" PRIu64
               " RPCs%s)\n",
               b->o->common.info, bh_mode_name(b->mode), b->procs,
               (unsigned) b->in.size, med, p99, lo, mean, n,
               n < b->o->lat_iters ? ", cut short by the time bound" : "");
        json_common(&j, b, "latency");
        bu_json_u64(&j, "iters", n);
        bu_json_bool(&j, "truncated", n < b->o->lat_iters);
        bu_json_dbl(&j, "median_us", med);
        bu_json_dbl(&j, "p99_us", p99);
        bu_json_dbl(&j, "min_us", lo);
        bu_json_dbl(&j, "mean_us", mean);
        bu_json_end(&j);
    }
    free(r.samples);
    return rc;
}

static int
measure_rate(struct bench *b, unsigned inflight)
{
    struct run r = {.in = &b->in};
    uint64_t start;
    double secs, rate, cpu0, cpu, win_rates[RATE_WINDOWS], win_med = 0.0;
    unsigned nwin = 0;
    struct bu_json j;
    int rc;

    r.win_size = b->o->rate_count / RATE_WINDOWS;
    cpu0 = bu_cpu_s();
    rc = run_rpcs(b, &r, inflight, b->o->rate_count, &start);
    if (rc != 0)
        return rc;
    cpu = bu_cpu_s() - cpu0;
    secs = (double) (r.last_ns - start) / 1e9;
    rate = secs > 0 ? (double) r.done / secs : 0.0;
    for (uint64_t w = 1;
         r.win_size != 0 && w <= RATE_WINDOWS && w * r.win_size <= r.done;
         w++) {
        uint64_t ns = r.win_ns[w] - r.win_ns[w - 1];
        win_rates[nwin++] =
            ns > 0 ? (double) r.win_size * 1e9 / (double) ns : 0.0;
    }
    if (nwin > 0)
        win_med = bu_quantile(win_rates, nwin, 0.5);
    printf("hg_rate %-26s %-7s procs=%d payload=%-6u rate: %3u in flight "
           "%10.0f RPC/s  (%" PRIu64 " RPCs in %.3f s, %.2f CPU s%s; median of "
           "%u windows %.0f RPC/s)\n",
           b->o->common.info, bh_mode_name(b->mode), b->procs,
           (unsigned) b->in.size, inflight, rate, r.done, secs, cpu,
           r.done < b->o->rate_count ? ", cut short" : "", nwin, win_med);
    json_common(&j, b, "rate");
    bu_json_u64(&j, "inflight", inflight);
    bu_json_u64(&j, "count", r.done);
    bu_json_bool(&j, "truncated", r.done < b->o->rate_count);
    bu_json_dbl(&j, "seconds", secs);
    bu_json_dbl(&j, "rpc_per_s", rate);
    bu_json_u64(&j, "windows", nwin);
    bu_json_dbl(&j, "rpc_per_s_window_median", win_med);
    bu_json_dbl(&j, "cpu_s", cpu);
    bu_json_end(&j);
    return 0;
}

/* Set up the client (and, in one process, the server), measure, tear
 * down. Returns 0, 1 when a measurement failed, 2 on a hang. */
static int
run_mode(struct opts *o, enum bh_mode mode, bool last_mode)
{
    struct bench *b = calloc(1, sizeof(*b));
    char addr[256];
    int rc = 0, hang = 0;
    unsigned max_inflight = 1;

    if (b == NULL)
        return 1;
    b->o = o;
    b->mode = mode;
    b->procs = o->common.role == BH_ROLE_SELF ? 1 : 2;
    for (unsigned i = 0; i < o->ninflight; i++)
        if (o->inflight[i] > max_inflight)
            max_inflight = o->inflight[i];

    if (o->common.role == BH_ROLE_SELF) {
        if (server_setup(b, &b->server) != 0 ||
            bh_self_string(&b->server, addr, sizeof(addr)) != 0) {
            rc = 1;
            goto out_server;
        }
    } else {
        snprintf(addr, sizeof(addr), "%s", o->common.server_addr);
    }
    if (bh_side_init(&b->client, o->common.info, false, mode, NULL) != 0) {
        rc = 1;
        goto out_server;
    }
    b->null_id =
        HG_Register_name(b->client.cls, "qs_bench_null", NULL, NULL, NULL);
    b->payload_id = HG_Register_name(b->client.cls, "qs_bench_payload",
                                     proc_payload_in, NULL, NULL);
    b->shutdown_id = bh_register_shutdown(b->client.cls, false, NULL);
    b->eager_size = HG_Class_get_input_eager_size(b->client.cls);
    b->in.data = payload_src;
    if (b->null_id == 0 || b->payload_id == 0 || b->shutdown_id == 0 ||
        bh_lookup(&b->client, addr, &b->target) != 0) {
        rc = 1;
        goto out_client;
    }
    b->pump.client = &b->client;
    if (o->common.role == BH_ROLE_SELF) {
        if (o->common.inline_driver)
            b->pump.inline_server = &b->server;
        else if (bh_driver_start(&b->driver, &b->server) != 0) {
            rc = 1;
            goto out_addr;
        }
    }
    for (unsigned i = 0; i < max_inflight; i++) {
        hg_return_t ret = HG_Create(b->client.ctx, b->target, b->null_id,
                                    &b->slots[i].handle);
        if (ret != HG_SUCCESS) {
            fprintf(stderr, "hg_rate: HG_Create: %s\n",
                    HG_Error_to_string(ret));
            rc = 1;
            goto out_handles;
        }
        b->nslots++;
    }

    for (unsigned p = 0; p < o->npayloads && rc == 0; p++) {
        uint64_t size = o->payloads[p].bytes;

        if (o->payloads[p].eager)
            size += b->eager_size > PAYLOAD_OVERHEAD
                        ? b->eager_size - PAYLOAD_OVERHEAD
                        : 0;
        if (size > PAYLOAD_MAX) {
            fprintf(stderr,
                    "hg_rate: payload of %" PRIu64 " bytes is past "
                    "the %u-byte bound\n",
                    size, PAYLOAD_MAX);
            rc = -1;
            break;
        }
        b->in.size = (hg_uint32_t) size;
        b->payload_label = o->payloads[p].label;
        for (unsigned i = 0; i < b->nslots && rc == 0; i++)
            if (HG_Reset(b->slots[i].handle, b->target,
                         size > 0 ? b->payload_id : b->null_id) != HG_SUCCESS)
                rc = -1;
        if (rc == 0)
            rc = measure_latency(b);
        for (unsigned i = 0; i < o->ninflight && rc == 0; i++)
            rc = measure_rate(b, o->inflight[i]);
    }
    if (rc == -2)
        hang = 1;
    if (o->common.role == BH_ROLE_CLIENT && last_mode && o->common.shutdown &&
        !hang &&
        bh_send_shutdown(&b->pump, b->target, b->shutdown_id, 10.0) != 0 &&
        rc == 0)
        rc = -1;

out_handles:
    if (hang) {
        /* Handles with forwards in flight cannot be destroyed, and a
         * context with live handles cannot be; leave everything to exit. */
        fprintf(stderr, "hg_rate: exiting without finalizing after a hang\n");
        fflush(NULL);
        _Exit(2);
    }
    for (unsigned i = 0; i < b->nslots; i++)
        HG_Destroy(b->slots[i].handle);
    bh_driver_stop(&b->driver);
out_addr:
    HG_Addr_free(b->client.cls, b->target);
out_client:
    if (bh_side_fini(&b->client) != 0 && rc == 0)
        rc = 1;
out_server:
    if (o->common.role == BH_ROLE_SELF && b->server.cls != NULL &&
        bh_side_fini(&b->server) != 0 && rc == 0)
        rc = 1;
    if (payload_report(&b->srv) != 0 && rc == 0)
        rc = 1;
    free(b->srv.buf);
    free(b);
    return rc == 0 ? 0 : 1;
}

static int
serve(struct opts *o, enum bh_mode mode)
{
    struct bench *b = calloc(1, sizeof(*b));
    int rc = 0;

    if (b == NULL)
        return 1;
    b->o = o;
    b->mode = mode;
    if (server_setup(b, &b->server) != 0 ||
        bh_publish_address("hg_rate", &b->server, o->common.addr_file) != 0) {
        rc = 1;
    } else if (bh_serve(&b->server, &b->shutdown_state,
                        o->common.server_seconds) != 0) {
        rc = 1;
    }
    if (b->server.cls != NULL && bh_side_fini(&b->server) != 0)
        rc = 1;
    if (payload_report(&b->srv) != 0)
        rc = 1;
    free(b->srv.buf);
    free(b);
    return rc;
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: hg_rate [--server | --client ADDR] [options] [info]\n"
               "  info                 Quicksilver info string (default: "
               "$QS_BENCH_INFO, else sim)\n"
               "  --server             serve; print the address (and write it "
               "to --addr-file)\n"
               "  --client ADDR        measure against a server started with "
               "--server\n"
               "  --addr-file PATH     where --server writes its address\n"
               "  --mode LIST          busy,noblock,wait or all (default all; "
               "wait on sim)\n"
               "  --iters N            latency samples (default 10000)\n"
               "  --rate-count N       RPCs per rate point (default 20000)\n"
               "  --warmup N           RPCs before the latency run (default "
               "1000)\n"
               "  --inflight LIST      rate points (default 1,4,16,64)\n"
               "  --payload LIST       input sizes: bytes (K, M suffixes), "
               "eager, eager+N\n"
               "                       (default 0, the empty RPC)\n"
               "  --max-seconds S      bound of each measurement (default 5)\n"
               "  --server-seconds S   lifetime bound of --server (default "
               "600)\n"
               "  --driver thread|inline  one process: server on its own "
               "thread, or both\n"
               "                       contexts from the main thread (default: "
               "inline on sim)\n"
               "  --no-shutdown        --client leaves the server running\n");
}

static bool
parse_payloads(const char *s, struct opts *o)
{
    char buf[256], *tok, *save = NULL;

    if (strlen(s) >= sizeof(buf))
        return false;
    strcpy(buf, s);
    o->npayloads = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        struct payload_spec p = {0};

        if (o->npayloads == MAX_PAYLOADS || strlen(tok) >= sizeof(p.label))
            return false;
        strcpy(p.label, tok);
        if (strncmp(tok, "eager", 5) == 0) {
            p.eager = true;
            if (tok[5] == '+' && !bu_parse_size(tok + 6, &p.bytes))
                return false;
            if (tok[5] != '+' && tok[5] != '\0')
                return false;
        } else if (strcmp(tok, "0") != 0 && !bu_parse_size(tok, &p.bytes)) {
            return false;
        }
        o->payloads[o->npayloads++] = p;
    }
    return o->npayloads > 0;
}

static bool
parse_inflight(const char *s, struct opts *o)
{
    char buf[256], *tok, *save = NULL;

    if (strlen(s) >= sizeof(buf))
        return false;
    strcpy(buf, s);
    o->ninflight = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (!bu_parse_u64(tok, &v) || v == 0 || v > RATE_MAX_INFLIGHT ||
            o->ninflight == RATE_MAX_POINTS)
            return false;
        o->inflight[o->ninflight++] = (unsigned) v;
    }
    return o->ninflight > 0;
}

int
main(int argc, char **argv)
{
    struct opts o = {
        .common = BH_OPTS_INITIALIZER,
        .lat_iters = 10000,
        .rate_count = 20000,
        .warmup = 1000,
        .inflight = {1, 4, 16, 64},
        .ninflight = 4,
        .payloads = {{.label = "0"}},
        .npayloads = 1,
        .max_seconds = 5.0,
    };
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true, used = true;
        int common = bh_opts_parse(&o.common, a, v, &used);

        if (common != 0) {
            ok = common > 0;
        } else if (strcmp(a, "--iters") == 0 && v != NULL) {
            ok = bu_parse_u64(v, &o.lat_iters) && o.lat_iters > 0;
        } else if (strcmp(a, "--rate-count") == 0 && v != NULL) {
            ok = bu_parse_u64(v, &o.rate_count) && o.rate_count > 0;
        } else if (strcmp(a, "--warmup") == 0 && v != NULL) {
            ok = bu_parse_u64(v, &o.warmup);
        } else if (strcmp(a, "--inflight") == 0 && v != NULL) {
            ok = parse_inflight(v, &o);
        } else if (strcmp(a, "--payload") == 0 && v != NULL) {
            ok = parse_payloads(v, &o);
        } else if (strcmp(a, "--max-seconds") == 0 && v != NULL) {
            ok = bu_parse_double(v, &o.max_seconds);
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "hg_rate: bad argument near '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (used)
            i++;
    }
    if (bh_opts_finish(&o.common, "hg_rate") != 0)
        return 2;
    if (o.common.mode == NULL)
        o.common.mode = bh_info_is_sim(o.common.info) ? "wait" : "all";
    if (!bh_mode_parse_list(o.common.mode, &o.modes)) {
        fprintf(stderr, "hg_rate: bad --mode '%s'\n", o.common.mode);
        return 2;
    }
    /* On sim a zero-timeout progress loop never moves virtual time, so a
     * busy-polling run would spin forever at time zero. */
    if (bh_info_is_sim(o.common.info) &&
        (o.modes & ~(1u << BH_MODE_WAIT)) != 0) {
        fprintf(stderr, "hg_rate: on sim only --mode wait advances virtual "
                        "time; using it\n");
        o.modes = 1u << BH_MODE_WAIT;
    }

    payload_src = malloc(PAYLOAD_MAX);
    if (payload_src == NULL)
        return 1;
    for (uint64_t i = 0; i < PAYLOAD_MAX; i++)
        payload_src[i] = payload_byte(i);

    if (o.common.role == BH_ROLE_SERVER) {
        for (int m = 0; m < BH_MODE_COUNT; m++)
            if (o.modes & (1u << m))
                return serve(&o, (enum bh_mode) m);
    }
    for (int m = 0; m < BH_MODE_COUNT; m++) {
        unsigned later = o.modes & ~((2u << m) - 1);
        if (!(o.modes & (1u << m)))
            continue;
        if (run_mode(&o, (enum bh_mode) m, later == 0) != 0)
            rc = 1;
    }
    return rc;
}
