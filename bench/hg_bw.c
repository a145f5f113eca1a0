/*
 * hg_bw: bulk pull and push bandwidth over any Quicksilver info string.
 *
 *   hg_bw [options] [info]                  one process: server + client
 *   hg_bw --server [options] [info]         serve until a shutdown RPC
 *   hg_bw --client ADDR [options] [info]    measure against that server
 *
 * The client exposes a buffer with HG_Bulk_create() and sends its handle in
 * one RPC per (operation, size). The server then moves `size` bytes
 * `reps` times, one transfer after another: HG_BULK_PULL reads the client's
 * buffer into the server's, HG_BULK_PUSH writes the server's buffer into
 * the client's. This is the RMA a service does for its clients, so the
 * server times the transfers (first post to last completion) and returns
 * that time; the client also reports the RPC's round trip, which adds one
 * RPC to the transfers.
 *
 * The last transfer of each size is checked byte for byte: for a pull the
 * server compares what it received with the pattern the client wrote, for a
 * push the client compares its buffer with the pattern the server sent.
 * Sizes go from 4 KiB to 16 MiB in powers of 4 unless --sizes says
 * otherwise. Every loop is bounded in count and in real time.
 */
#include "bench_hg.h"
#include "bench_util.h"

#include <mercury_bulk.h>
#include <mercury_proc.h>
#include <mercury_proc_bulk.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_MAX_SIZES 16
#define BW_DEFAULT_MAX_SIZE (16u * 1024u * 1024u)
#define BW_OP_PULL 0
#define BW_OP_PUSH 1

/* The request: which transfer, how big, how many times, within how long.
 * The procs are written out (not MERCURY_GEN_PROC) so that this file
 * also builds against a Mercury install without Boost
 * (bench/compare_mercury.sh). */
typedef struct {
    hg_bulk_t bulk;
    uint64_t size;
    uint32_t reps, seed, max_ms;
    uint8_t op;
} bw_in_t;

static hg_return_t
hg_proc_bw_in_t(hg_proc_t proc, void *data)
{
    bw_in_t *in = data;
    hg_return_t ret;

    ret = hg_proc_hg_bulk_t(proc, &in->bulk);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &in->size);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint32_t(proc, &in->reps);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint32_t(proc, &in->seed);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint32_t(proc, &in->max_ms);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint8_t(proc, &in->op);
    return ret;
}

/* The answer: the server's own timing and the pull check. The spread of
 * the single transfers (10th and 90th percentile, slowest) tells a path
 * that is slow throughout from one that stalls now and then. */
typedef struct {
    int32_t ret;
    uint32_t done;
    uint64_t elapsed_ns, median_ns, p10_ns, p90_ns, max_ns;
    int64_t bad_offset;
} bw_out_t;

static hg_return_t
hg_proc_bw_out_t(hg_proc_t proc, void *data)
{
    bw_out_t *out = data;
    hg_return_t ret;

    ret = hg_proc_int32_t(proc, &out->ret);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint32_t(proc, &out->done);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &out->elapsed_ns);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &out->median_ns);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &out->p10_ns);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &out->p90_ns);
    if (ret == HG_SUCCESS)
        ret = hg_proc_uint64_t(proc, &out->max_ns);
    if (ret == HG_SUCCESS)
        ret = hg_proc_int64_t(proc, &out->bad_offset);
    return ret;
}

/* Mercury has no HG_BULK_NO_EAGER: its eager mode is opt-in. */
#ifndef HG_BULK_NO_EAGER
#define HG_BULK_NO_EAGER 0
#endif

struct opts {
    struct bh_opts common;
    enum bh_mode mode;
    uint64_t sizes[BW_MAX_SIZES];
    unsigned nsizes;
    uint64_t max_size;
    uint64_t bytes_per_size; /* bytes each size moves (bounds reps)   */
    uint64_t max_reps;
    uint64_t min_reps;
    double max_seconds;
    unsigned ops; /* bit 0 pull, bit 1 push */
};

/* Server state: one buffer and its bulk handle, shared by all requests.
 * Requests are served one at a time by construction (the client waits for
 * each answer), so one buffer suffices. */
struct server {
    struct bh_side side;
    void *buf;
    uint64_t buf_size;
    hg_bulk_t local;
    atomic_int shutdown_state;
};

/* One request being served: its transfers run one after another. */
struct xfer {
    struct server *srv;
    hg_handle_t handle;
    bw_in_t in;
    hg_addr_t origin;
    uint32_t done;
    uint64_t t0, t_end, deadline;
    uint64_t t_post;      /* when the transfer in flight was posted       */
    uint64_t excluded_ns; /* preparing the checked transfer: not timed */
    double *durs;         /* each transfer's duration in ns, or NULL      */
    bool final;           /* the transfer in flight is the checked one    */
    hg_return_t err;
};

/* ---- server side -------------------------------------------------------- */

static hg_return_t xfer_done(const struct hg_cb_info *info);

/*
 * Get the server's buffer ready for the next transfer. The last transfer
 * is the one checked, so it must be the one that moved the bytes: a pull's
 * destination is cleared before it, and a push's source gets the pattern
 * the client checks only then (earlier pushes carry another pattern). The
 * time this takes is not counted.
 */
static void
xfer_prepare(struct xfer *x, bool final)
{
    uint64_t t = bu_now_ns();

    if (x->in.op == BW_OP_PULL)
        memset(x->srv->buf, 0, x->in.size);
    else
        bu_pattern_fill(x->srv->buf, x->in.size,
                        final ? x->in.seed : x->in.seed ^ 0xffffu);
    x->final = final;
    x->excluded_ns += bu_now_ns() - t;
}

static hg_return_t
xfer_post(struct xfer *x)
{
    x->t_post = bu_now_ns();
    return HG_Bulk_transfer(
        x->srv->side.ctx, xfer_done, x,
        x->in.op == BW_OP_PULL ? HG_BULK_PULL : HG_BULK_PUSH, x->origin,
        x->in.bulk, 0, x->srv->local, 0, x->in.size, HG_OP_ID_IGNORE);
}

static void
xfer_finish(struct xfer *x)
{
    bw_out_t out = {0};
    hg_return_t ret;

    out.ret = (int32_t) x->err;
    out.done = x->done;
    out.elapsed_ns = x->t_end - x->t0 - x->excluded_ns;
    /* One transfer's median time is what the path does when nothing else
     * takes the CPU; the total is what it did. */
    if (x->durs != NULL && x->done > 0) {
        out.median_ns = (uint64_t) bu_quantile(x->durs, x->done, 0.5);
        out.p10_ns = (uint64_t) bu_quantile(x->durs, x->done, 0.1);
        out.p90_ns = (uint64_t) bu_quantile(x->durs, x->done, 0.9);
        out.max_ns = (uint64_t) bu_quantile(x->durs, x->done, 1.0);
    }
    out.bad_offset = -1;
    /* The check runs after the clock stopped: it is not part of the
     * bandwidth. */
    if (x->err == HG_SUCCESS && x->in.op == BW_OP_PULL)
        out.bad_offset = bu_pattern_check(x->srv->buf, x->in.size, x->in.seed);
    ret = HG_Respond(x->handle, NULL, NULL, &out);
    if (ret != HG_SUCCESS)
        fprintf(stderr, "hg_bw: HG_Respond: %s\n", HG_Error_to_string(ret));
    HG_Free_input(x->handle, &x->in);
    HG_Destroy(x->handle);
    free(x->durs);
    free(x);
}

static hg_return_t
xfer_done(const struct hg_cb_info *info)
{
    struct xfer *x = info->arg;

    x->t_end = bu_now_ns();
    if (info->ret != HG_SUCCESS) {
        x->err = info->ret;
        xfer_finish(x);
        return HG_SUCCESS;
    }
    if (x->durs != NULL)
        x->durs[x->done] = (double) (x->t_end - x->t_post);
    x->done++;
    if (!x->final) {
        hg_return_t ret;
        /* Past the time bound, one more (checked) transfer ends the run. */
        if (x->done + 1 >= x->in.reps || x->t_end >= x->deadline)
            xfer_prepare(x, true);
        ret = xfer_post(x);
        if (ret == HG_SUCCESS)
            return HG_SUCCESS;
        x->err = ret;
    }
    xfer_finish(x);
    return HG_SUCCESS;
}

static hg_return_t
bw_handler(hg_handle_t handle)
{
    const struct hg_info *hi = HG_Get_info(handle);
    struct server *srv = HG_Registered_data(hi->hg_class, hi->id);
    struct xfer *x = calloc(1, sizeof(*x));
    hg_return_t ret;

    if (x == NULL) {
        HG_Destroy(handle);
        return HG_NOMEM;
    }
    x->srv = srv;
    x->handle = handle;
    ret = HG_Get_input(handle, &x->in);
    if (ret != HG_SUCCESS) {
        free(x);
        HG_Destroy(handle);
        return ret;
    }
    if (x->in.size > srv->buf_size || x->in.reps == 0 ||
        x->in.op > BW_OP_PUSH || x->in.size > HG_Bulk_get_size(x->in.bulk)) {
        x->err = HG_INVALID_ARG;
        x->t0 = x->t_end = bu_now_ns();
        xfer_finish(x);
        return HG_SUCCESS;
    }
    xfer_prepare(x, x->in.reps == 1);
    x->excluded_ns = 0;
    x->origin = hi->addr;
    x->durs = malloc(x->in.reps * sizeof(double));
    x->t0 = bu_now_ns();
    x->deadline = x->t0 + (uint64_t) x->in.max_ms * 1000000u;
    ret = xfer_post(x);
    if (ret != HG_SUCCESS) {
        x->err = ret;
        x->t_end = bu_now_ns();
        xfer_finish(x);
    }
    return HG_SUCCESS;
}

static int
server_setup(struct server *srv, const struct opts *o)
{
    hg_size_t size;
    hg_id_t id;
    hg_return_t ret;

    if (bh_side_init(&srv->side, o->common.info, true, o->mode,
                     "sim://hg-bw-server") != 0)
        return -1;
    srv->buf_size = o->max_size;
    if (posix_memalign(&srv->buf, 4096, srv->buf_size) != 0) {
        srv->buf = NULL;
        fprintf(stderr, "hg_bw: cannot allocate %" PRIu64 " bytes\n",
                srv->buf_size);
        return -1;
    }
    /* Touch every page now so first-use faults are not timed. */
    memset(srv->buf, 0, srv->buf_size);
    size = srv->buf_size;
    ret = HG_Bulk_create(srv->side.cls, 1, &srv->buf, &size, HG_BULK_READWRITE,
                         &srv->local);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "hg_bw: HG_Bulk_create(server): %s\n",
                HG_Error_to_string(ret));
        return -1;
    }
    id = HG_Register_name(srv->side.cls, "qs_bench_bw", hg_proc_bw_in_t,
                          hg_proc_bw_out_t, bw_handler);
    if (id == 0 ||
        HG_Register_data(srv->side.cls, id, srv, NULL) != HG_SUCCESS ||
        bh_register_shutdown(srv->side.cls, true, &srv->shutdown_state) == 0) {
        fprintf(stderr, "hg_bw: RPC registration failed\n");
        return -1;
    }
    return 0;
}

static int
server_teardown(struct server *srv)
{
    int rc = 0;

    if (srv->local != HG_BULK_NULL)
        HG_Bulk_free(srv->local);
    srv->local = HG_BULK_NULL;
    if (srv->side.cls != NULL && bh_side_fini(&srv->side) != 0)
        rc = -1;
    free(srv->buf);
    srv->buf = NULL;
    return rc;
}

/* ---- client side -------------------------------------------------------- */

struct call {
    int done;
    hg_return_t ret;
    bw_out_t out;
    bool have_out;
};

static hg_return_t
bw_forwarded(const struct hg_cb_info *info)
{
    struct call *c = info->arg;

    c->ret = info->ret;
    if (info->ret == HG_SUCCESS) {
        c->ret = HG_Get_output(info->info.forward.handle, &c->out);
        c->have_out = c->ret == HG_SUCCESS;
        if (c->have_out)
            HG_Free_output(info->info.forward.handle, &c->out);
    }
    c->done = 1;
    return HG_SUCCESS;
}

struct client {
    const struct opts *o;
    struct bh_side side;
    struct bh_pump pump;
    hg_addr_t server;
    hg_id_t bw_id, shutdown_id;
    void *buf;
    hg_bulk_t bulk;
    int procs;
    bool hung;
};

/* Reps for one size: enough bytes to time well, within the bounds. */
static uint32_t
reps_for(const struct opts *o, uint64_t size)
{
    uint64_t reps = o->bytes_per_size / size;

    if (reps < o->min_reps)
        reps = o->min_reps;
    if (reps > o->max_reps)
        reps = o->max_reps;
    return (uint32_t) reps;
}

/*
 * One RPC: the server moves `size` bytes `reps` times. Returns 0 and fills
 * *c, or -1 (error printed), or -2 on a hang.
 */
static int
call_bw(struct client *cl, int op, uint64_t size, uint32_t reps, uint32_t seed,
        double *rtt_s, struct call *c)
{
    bw_in_t in;
    hg_handle_t h;
    hg_return_t ret;
    double t0;

    memset(c, 0, sizeof(*c));
    in.bulk = cl->bulk;
    in.size = size;
    in.reps = reps;
    in.seed = seed;
    in.max_ms = (uint32_t) (cl->o->max_seconds * 1000.0);
    in.op = (uint8_t) op;
    ret = HG_Create(cl->side.ctx, cl->server, cl->bw_id, &h);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "hg_bw: HG_Create: %s\n", HG_Error_to_string(ret));
        return -1;
    }
    t0 = bu_now_s();
    ret = HG_Forward(h, bw_forwarded, c, &in);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "hg_bw: HG_Forward: %s\n", HG_Error_to_string(ret));
        HG_Destroy(h);
        return -1;
    }
    /* The server stops issuing transfers at max_seconds; the rest is
     * slack for the transfer in flight and the response. */
    if (bh_pump_until(&cl->pump, &c->done, 1, cl->o->max_seconds + 20.0) != 0) {
        fprintf(stderr,
                "hg_bw: no answer %.0f s after the bound (%s, %s, "
                "%" PRIu64 " bytes): cancelling\n",
                20.0, cl->o->common.info, op == BW_OP_PULL ? "pull" : "push",
                size);
        HG_Cancel(h);
        if (bh_pump_until(&cl->pump, &c->done, 1, 5.0) != 0) {
            fprintf(stderr, "hg_bw: the forward did not complete after "
                            "HG_Cancel: hung\n");
            return -2;
        }
    }
    *rtt_s = bu_now_s() - t0;
    HG_Destroy(h);
    if (c->ret != HG_SUCCESS) {
        fprintf(stderr, "hg_bw: RPC failed (%s, %" PRIu64 " bytes): %s\n",
                op == BW_OP_PULL ? "pull" : "push", size,
                HG_Error_to_string(c->ret));
        return -1;
    }
    if (c->out.ret != HG_SUCCESS) {
        fprintf(stderr,
                "hg_bw: server-side transfer failed (%s, %" PRIu64
                " bytes, after %" PRIu32 " of %" PRIu32 "): %s\n",
                op == BW_OP_PULL ? "pull" : "push", size, c->out.done, reps,
                HG_Error_to_string((hg_return_t) c->out.ret));
        return -1;
    }
    return 0;
}

static int
measure(struct client *cl, int op, uint64_t size, uint32_t seed)
{
    const struct opts *o = cl->o;
    const char *opname = op == BW_OP_PULL ? "pull" : "push";
    uint32_t reps = reps_for(o, size);
    struct call c;
    double rtt, secs, mbps, mbps_rpc, mbps_med;
    int64_t bad;
    char label[32];
    struct bu_json j;
    int rc;

    /* A short warm-up of the same size: first-touch of registrations and
     * connection set-up belong to no measurement. */
    bu_pattern_fill(cl->buf, size, seed ^ 0xa5a5u);
    rc = call_bw(cl, op, size, reps < 4 ? reps : 4, seed ^ 0xa5a5u, &rtt, &c);
    if (rc != 0)
        return rc;

    if (op == BW_OP_PULL)
        bu_pattern_fill(cl->buf, size, seed);
    else
        memset(cl->buf, 0, size);
    rc = call_bw(cl, op, size, reps, seed, &rtt, &c);
    if (rc != 0)
        return rc;
    bad = op == BW_OP_PULL ? c.out.bad_offset
                           : bu_pattern_check(cl->buf, size, seed);
    secs = (double) c.out.elapsed_ns / 1e9;
    mbps = secs > 0 ? (double) size * c.out.done / secs / 1e6 : 0.0;
    mbps_rpc = rtt > 0 ? (double) size * c.out.done / rtt / 1e6 : 0.0;
    mbps_med = c.out.median_ns > 0
                   ? (double) size / ((double) c.out.median_ns / 1e9) / 1e6
                   : 0.0;
    printf("hg_bw %-26s %-7s procs=%d %s %8s: %9.1f MB/s  (%" PRIu32
           " x in %.4f s; median transfer %9.1f MB/s; with the RPC %9.1f "
           "MB/s)  check %s\n",
           o->common.info, bh_mode_name(o->mode), cl->procs, opname,
           bu_size_label(size, label, sizeof(label)), mbps, c.out.done, secs,
           mbps_med, mbps_rpc, bad < 0 ? "ok" : "FAILED");
    if (bad >= 0)
        fprintf(stderr,
                "hg_bw: %s of %" PRIu64 " bytes: first wrong byte at "
                "offset %" PRId64 "\n",
                opname, size, bad);
    bu_json_begin(&j, "hg_bw");
    bu_json_str(&j, "metric", opname);
    bu_json_str(&j, "info", o->common.info);
    bu_json_str(&j, "mode", bh_mode_name(o->mode));
    bu_json_u64(&j, "procs", (uint64_t) cl->procs);
    bu_json_u64(&j, "size", size);
    bu_json_u64(&j, "reps", c.out.done);
    bu_json_bool(&j, "truncated", c.out.done < reps);
    bu_json_dbl(&j, "seconds", secs);
    bu_json_dbl(&j, "MBps", mbps);
    bu_json_dbl(&j, "MBps_median_transfer", mbps_med);
    bu_json_dbl(&j, "MBps_with_rpc", mbps_rpc);
    bu_json_dbl(&j, "us_p10", (double) c.out.p10_ns / 1e3);
    bu_json_dbl(&j, "us_median", (double) c.out.median_ns / 1e3);
    bu_json_dbl(&j, "us_p90", (double) c.out.p90_ns / 1e3);
    bu_json_dbl(&j, "us_max", (double) c.out.max_ns / 1e3);
    bu_json_bool(&j, "check_ok", bad < 0);
    bu_json_end(&j);
    return bad < 0 ? 0 : -1;
}

static int
run_client(const struct opts *o, const char *addr, struct server *inline_srv)
{
    struct client cl;
    hg_size_t size = o->max_size;
    hg_return_t ret;
    int rc = 0;

    memset(&cl, 0, sizeof(cl));
    cl.o = o;
    cl.procs = o->common.role == BH_ROLE_SELF ? 1 : 2;
    if (bh_side_init(&cl.side, o->common.info, false, o->mode, NULL) != 0)
        return -1;
    cl.pump.client = &cl.side;
    cl.pump.inline_server = inline_srv != NULL ? &inline_srv->side : NULL;
    cl.bw_id = HG_Register_name(cl.side.cls, "qs_bench_bw", hg_proc_bw_in_t,
                                hg_proc_bw_out_t, NULL);
    cl.shutdown_id = bh_register_shutdown(cl.side.cls, false, NULL);
    if (cl.bw_id == 0 || cl.shutdown_id == 0 ||
        bh_lookup(&cl.side, addr, &cl.server) != 0) {
        rc = -1;
        goto out_side;
    }
    if (posix_memalign(&cl.buf, 4096, o->max_size) != 0) {
        cl.buf = NULL;
        rc = -1;
        goto out_addr;
    }
    memset(cl.buf, 0, o->max_size);
    /* Read-write so one handle serves pulls and pushes, which also keeps
     * the library from embedding small regions in the descriptor: every
     * size goes over RMA. */
    ret = HG_Bulk_create(cl.side.cls, 1, &cl.buf, &size,
                         HG_BULK_READWRITE | HG_BULK_NO_EAGER, &cl.bulk);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "hg_bw: HG_Bulk_create(client): %s\n",
                HG_Error_to_string(ret));
        rc = -1;
        goto out_buf;
    }
    for (int op = BW_OP_PULL; op <= BW_OP_PUSH && rc == 0; op++) {
        if (!(o->ops & (1u << op)))
            continue;
        for (unsigned i = 0; i < o->nsizes && rc == 0; i++)
            rc = measure(&cl, op, o->sizes[i],
                         (uint32_t) (0x5157u + 977u * i + 31u * op));
    }
    if (rc == -2) {
        fprintf(stderr, "hg_bw: exiting without finalizing after a hang\n");
        fflush(NULL);
        _Exit(2);
    }
    if (o->common.role == BH_ROLE_CLIENT && o->common.shutdown &&
        bh_send_shutdown(&cl.pump, cl.server, cl.shutdown_id, 10.0) != 0 &&
        rc == 0)
        rc = -1;
    HG_Bulk_free(cl.bulk);
out_buf:
    free(cl.buf);
out_addr:
    HG_Addr_free(cl.side.cls, cl.server);
out_side:
    if (bh_side_fini(&cl.side) != 0 && rc == 0)
        rc = -1;
    return rc;
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: hg_bw [--server | --client ADDR] [options] [info]\n"
            "  info                 Quicksilver info string (default: "
            "$QS_BENCH_INFO, else sim)\n"
            "  --server             serve; print the address (and write it "
            "to --addr-file)\n"
            "  --client ADDR        measure against a server started with "
            "--server\n"
            "  --addr-file PATH     where --server writes its address\n"
            "  --mode M             busy, noblock or wait (default busy; wait "
            "on sim)\n"
            "  --sizes LIST         transfer sizes, K/M suffixes allowed "
            "(default 4K..16M, x4)\n"
            "  --ops pull,push      which operations (default both)\n"
            "  --bytes N            bytes moved per size, bounds the reps "
            "(default 256M)\n"
            "  --min-reps N / --max-reps N  (defaults 4 / 2000)\n"
            "  --max-seconds S      bound of each size's transfers (default "
            "5)\n"
            "  --server-seconds S   lifetime bound of --server (default "
            "600)\n"
            "  --max-size N         server buffer for --server (default "
            "16M)\n"
            "  --driver thread|inline  (default: inline on sim)\n"
            "  --no-shutdown        --client leaves the server running\n");
}

int
main(int argc, char **argv)
{
    struct opts o = {
        .common = BH_OPTS_INITIALIZER,
        .mode = BH_MODE_BUSY,
        .max_size = 0,
        .bytes_per_size = 256u * 1024u * 1024u,
        .max_reps = 2000,
        .min_reps = 4,
        .max_seconds = 5.0,
        .ops = 3,
    };
    uint64_t max_size_opt = 0;
    struct server *srv = NULL;
    char addr[256];
    int rc = 0;

    for (uint64_t s = 4096; s <= BW_DEFAULT_MAX_SIZE; s *= 4)
        o.sizes[o.nsizes++] = s;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true, used = true;
        int common = bh_opts_parse(&o.common, a, v, &used);

        if (common != 0) {
            ok = common > 0;
        } else if (strcmp(a, "--sizes") == 0 && v != NULL) {
            ok = bu_parse_size_list(v, o.sizes, BW_MAX_SIZES, &o.nsizes);
        } else if (strcmp(a, "--ops") == 0 && v != NULL) {
            o.ops =
                (strstr(v, "pull") ? 1u : 0u) | (strstr(v, "push") ? 2u : 0u);
            ok = o.ops != 0;
        } else if (strcmp(a, "--bytes") == 0 && v != NULL) {
            ok = bu_parse_size(v, &o.bytes_per_size) && o.bytes_per_size > 0;
        } else if (strcmp(a, "--min-reps") == 0 && v != NULL) {
            ok = bu_parse_u64(v, &o.min_reps) && o.min_reps > 0 &&
                 o.min_reps <= UINT32_MAX;
        } else if (strcmp(a, "--max-reps") == 0 && v != NULL) {
            ok = bu_parse_u64(v, &o.max_reps) && o.max_reps > 0 &&
                 o.max_reps <= UINT32_MAX;
        } else if (strcmp(a, "--max-seconds") == 0 && v != NULL) {
            ok = bu_parse_double(v, &o.max_seconds) && o.max_seconds < 3600;
        } else if (strcmp(a, "--max-size") == 0 && v != NULL) {
            ok = bu_parse_size(v, &max_size_opt) && max_size_opt > 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "hg_bw: bad argument near '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (used)
            i++;
    }
    if (o.min_reps > o.max_reps)
        o.min_reps = o.max_reps;
    if (bh_opts_finish(&o.common, "hg_bw") != 0)
        return 2;
    if (o.common.mode == NULL)
        o.common.mode = bh_info_is_sim(o.common.info) ? "wait" : "busy";
    {
        unsigned mask = 0;
        int found = -1;
        if (!bh_mode_parse_list(o.common.mode, &mask)) {
            fprintf(stderr, "hg_bw: bad --mode '%s'\n", o.common.mode);
            return 2;
        }
        for (int m = 0; m < BH_MODE_COUNT; m++)
            if (mask & (1u << m))
                found = found < 0 ? m : found;
        o.mode = (enum bh_mode) found;
    }
    if (bh_info_is_sim(o.common.info) && o.mode != BH_MODE_WAIT) {
        fprintf(stderr, "hg_bw: on sim only --mode wait advances virtual "
                        "time; using it\n");
        o.mode = BH_MODE_WAIT;
    }
    /* The buffers are as large as the largest size measured (a server
     * serves whatever its --max-size allows). */
    for (unsigned i = 0; i < o.nsizes; i++)
        if (o.sizes[i] > o.max_size)
            o.max_size = o.sizes[i];
    if (o.common.role == BH_ROLE_SERVER)
        o.max_size = max_size_opt != 0 ? max_size_opt : BW_DEFAULT_MAX_SIZE;

    if (o.common.role != BH_ROLE_CLIENT) {
        srv = calloc(1, sizeof(*srv));
        if (srv == NULL || server_setup(srv, &o) != 0) {
            rc = 1;
            goto out;
        }
    }
    if (o.common.role == BH_ROLE_SERVER) {
        if (bh_publish_address("hg_bw", &srv->side, o.common.addr_file) != 0 ||
            bh_serve(&srv->side, &srv->shutdown_state,
                     o.common.server_seconds) != 0)
            rc = 1;
        goto out;
    }
    if (o.common.role == BH_ROLE_SELF) {
        struct bh_driver driver_thread = {0};
        if (bh_self_string(&srv->side, addr, sizeof(addr)) != 0) {
            rc = 1;
            goto out;
        }
        if (!o.common.inline_driver &&
            bh_driver_start(&driver_thread, &srv->side) != 0) {
            rc = 1;
            goto out;
        }
        if (run_client(&o, addr, o.common.inline_driver ? srv : NULL) != 0)
            rc = 1;
        bh_driver_stop(&driver_thread);
    } else if (run_client(&o, o.common.server_addr, NULL) != 0) {
        rc = 1;
    }
out:
    if (srv != NULL) {
        if (server_teardown(srv) != 0)
            rc = 1;
        free(srv);
    }
    return rc;
}
