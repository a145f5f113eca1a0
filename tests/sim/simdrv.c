/*
 * The fault scenarios' driver (see simdrv.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/simdrv.h"

#include "mercury_macros.h"
#include "mercury_proc_bulk.h"

/* A counted byte array; a hostile length is refused before allocation. */
typedef struct {
    uint64_t len;
    uint8_t *data;
} sd_blob_t;

#define SD_BLOB_MAX ((uint64_t) 16 << 20)

uint64_t sd_last_hash;
uint64_t sd_last_prefetched;

static hg_return_t
hg_proc_sd_blob_t(hg_proc_t proc, void *arg)
{
    sd_blob_t *b = arg;
    hg_return_t ret;

    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        ret = hg_proc_uint64_t(proc, &b->len);
        if (ret != HG_SUCCESS || b->len == 0)
            return ret;
        return hg_proc_memcpy(proc, b->data, b->len);
    case HG_DECODE:
        b->data = NULL;
        ret = hg_proc_uint64_t(proc, &b->len);
        if (ret != HG_SUCCESS || b->len == 0)
            return ret;
        if (b->len > SD_BLOB_MAX)
            return HG_OVERFLOW;
        b->data = malloc((size_t) b->len);
        if (b->data == NULL)
            return HG_NOMEM;
        ret = hg_proc_memcpy(proc, b->data, b->len);
        if (ret != HG_SUCCESS) {
            free(b->data);
            b->data = NULL;
        }
        return ret;
    case HG_FREE:
    default:
        free(b->data);
        b->data = NULL;
        return HG_SUCCESS;
    }
}

MERCURY_GEN_PROC(sd_echo_t, ((uint32_t) (seq))((sd_blob_t) (data)))
MERCURY_GEN_PROC(sd_seq_t, ((uint32_t) (seq)))
MERCURY_GEN_PROC(sd_bulk_in_t, ((uint32_t) (seq))((uint32_t) (push))(
                                   (uint64_t) (len))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(sd_bulk_out_t, ((int32_t) (ret)))

/* The world a handler belongs to: one driver per test at a time. */
static struct sd_world *sd_current;

uint64_t
sd_now(void)
{
    return na_sim_clock_now();
}

static int
sd_check(uint32_t seq, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (data[i] != sd_pattern(seq, i))
            return 0;
    return 1;
}

static void
sd_fill(uint32_t seq, uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++)
        data[i] = sd_pattern(seq, i);
}

/* ---- target side ------------------------------------------------------ */

static hg_return_t
sd_respond_cb(const struct hg_cb_info *info)
{
    struct sd_world *w = info->arg;

    w->respond_cbs++;
    return HG_SUCCESS;
}

static void
sd_respond_echo(struct sd_world *w, hg_handle_t h, uint32_t seq, size_t len)
{
    sd_echo_t out = {.seq = seq, .data = {.len = len, .data = NULL}};

    if (len > 0) {
        out.data.data = malloc(len);
        assert_non_null(out.data.data);
        sd_fill(seq, out.data.data, len);
    }
    if (HG_Respond(h, sd_respond_cb, w, &out) == HG_SUCCESS)
        w->responds++;
    free(out.data.data);
}

static hg_return_t
sd_echo_handler(hg_handle_t h)
{
    struct sd_world *w = sd_current;
    sd_echo_t in;
    hg_return_t ret = HG_Get_input(h, &in);

    w->handled++;
    if (ret != HG_SUCCESS) {
        /* A request that does not decode: the library answers the error. */
        HG_Destroy(h);
        return ret;
    }
    if (!sd_check(in.seq, in.data.data, (size_t) in.data.len))
        w->bad_input++;
    sd_respond_echo(w, h, in.seq, (size_t) in.data.len);
    HG_Free_input(h, &in);
    HG_Destroy(h);
    return HG_SUCCESS;
}

static hg_return_t
sd_hold_handler(hg_handle_t h)
{
    struct sd_world *w = sd_current;
    sd_echo_t in;
    hg_return_t ret = HG_Get_input(h, &in);

    w->handled++;
    if (ret != HG_SUCCESS) {
        HG_Destroy(h);
        return ret;
    }
    if (!sd_check(in.seq, in.data.data, (size_t) in.data.len))
        w->bad_input++;
    HG_Free_input(h, &in);
    assert_true(w->nheld < 64);
    w->held[w->nheld++] = h; /* answered by sd_release_held */
    return HG_SUCCESS;
}

void
sd_release_held(struct sd_world *w)
{
    for (int i = 0; i < w->nheld; i++) {
        sd_respond_echo(w, w->held[i], 0, 0);
        HG_Destroy(w->held[i]);
    }
    w->nheld = 0;
}

void
sd_release_first(struct sd_world *w)
{
    if (w->nheld == 0)
        return;
    sd_respond_echo(w, w->held[0], 0, 0);
    HG_Destroy(w->held[0]);
    memmove(&w->held[0], &w->held[1],
            (size_t) (w->nheld - 1) * sizeof(w->held[0]));
    w->nheld--;
}

static hg_return_t
sd_oneway_handler(hg_handle_t h)
{
    struct sd_world *w = sd_current;
    sd_seq_t in;

    w->handled++;
    if (HG_Get_input(h, &in) == HG_SUCCESS) {
        w->oneways++;
        HG_Free_input(h, &in);
    }
    HG_Destroy(h);
    return HG_SUCCESS;
}

struct sd_target_xfer {
    struct sd_world *w;
    hg_handle_t h;
    sd_bulk_in_t in;
    void *buf;
    hg_bulk_t local;
};

static void
sd_target_xfer_end(struct sd_target_xfer *t, hg_return_t ret)
{
    struct sd_world *w = t->w;
    sd_bulk_out_t out = {.ret = (int32_t) ret};

    if (ret == HG_SUCCESS && !t->in.push &&
        !sd_check(t->in.seq, t->buf, (size_t) t->in.len))
        w->bad_input++;
    if (HG_Respond(t->h, sd_respond_cb, w, &out) == HG_SUCCESS)
        w->responds++;
    HG_Bulk_free(t->local);
    free(t->buf);
    HG_Free_input(t->h, &t->in);
    HG_Destroy(t->h);
    w->bulk_live--;
    free(t);
}

static hg_return_t
sd_target_xfer_cb(const struct hg_cb_info *info)
{
    struct sd_target_xfer *t = info->arg;

    t->w->bulk_cbs++;
    sd_target_xfer_end(t, info->ret);
    return HG_SUCCESS;
}

static hg_return_t
sd_bulk_handler(hg_handle_t h)
{
    struct sd_world *w = sd_current;
    struct sd_target_xfer *t = calloc(1, sizeof(*t));
    const struct hg_info *hinfo = HG_Get_info(h);
    hg_size_t len;
    hg_return_t ret;

    assert_non_null(t);
    w->handled++;
    t->w = w;
    t->h = h;
    ret = HG_Get_input(h, &t->in);
    if (ret != HG_SUCCESS) {
        free(t);
        HG_Destroy(h);
        return ret;
    }
    w->bulk_live++;
    len = t->in.len;
    t->buf = calloc(1, len ? (size_t) len : 1);
    assert_non_null(t->buf);
    if (t->in.push)
        sd_fill(t->in.seq, t->buf, (size_t) len);
    ret = HG_Bulk_create(hinfo->hg_class, 1, &t->buf, &len,
                         t->in.push ? HG_BULK_READ_ONLY : HG_BULK_WRITE_ONLY,
                         &t->local);
    if (ret != HG_SUCCESS) {
        t->local = HG_BULK_NULL;
        sd_target_xfer_end(t, ret);
        return HG_SUCCESS;
    }
    ret = HG_Bulk_transfer_timed(hinfo->context, sd_target_xfer_cb, t,
                                 t->in.push ? HG_BULK_PUSH : HG_BULK_PULL,
                                 hinfo->addr, t->in.bulk, 0, t->local, 0, len,
                                 2000, HG_OP_ID_IGNORE);
    if (ret != HG_SUCCESS)
        sd_target_xfer_end(t, ret);
    return HG_SUCCESS;
}

/* ---- origin side ------------------------------------------------------ */

static hg_return_t
sd_forward_cb(const struct hg_cb_info *info)
{
    struct sd_op *op = info->arg;
    struct sd_world *w = op->w;

    op->calls++;
    w->completed++;
    op->done_ns = sd_now();
    if (op->calls > 1)
        return HG_SUCCESS; /* sd_assert_once reports it */
    op->ret = info->ret;
    if (op->ret != HG_SUCCESS || op->kind == SD_ONEWAY)
        return HG_SUCCESS;
    if (op->kind == SD_ECHO || op->kind == SD_HOLD) {
        sd_echo_t out;

        op->ret = HG_Get_output(op->handle, &out);
        if (op->ret != HG_SUCCESS)
            return HG_SUCCESS;
        if (op->kind == SD_ECHO &&
            (out.seq != op->seq || out.data.len != op->len ||
             !sd_check(op->seq, out.data.data, op->len)))
            op->bad_data++;
        HG_Free_output(op->handle, &out);
    } else {
        sd_bulk_out_t out;

        op->ret = HG_Get_output(op->handle, &out);
        if (op->ret != HG_SUCCESS)
            return HG_SUCCESS;
        op->ret = (hg_return_t) out.ret; /* the target's transfer result */
        HG_Free_output(op->handle, &out);
        if (op->ret == HG_SUCCESS && op->kind == SD_BULK_PUSH &&
            !sd_check(op->seq, op->buf, op->len))
            op->bad_data++;
    }
    return HG_SUCCESS;
}

static struct sd_op *
sd_op_new(struct sd_world *w, enum sd_kind kind, int from, int to, size_t len)
{
    struct sd_op *op;

    assert_true(w->nops < SD_MAX_OPS);
    op = &w->ops[w->nops];
    memset(op, 0, sizeof(*op));
    op->w = w;
    op->kind = kind;
    op->seq = (uint32_t) w->nops + 1;
    op->from = from;
    op->to = to;
    op->len = len;
    w->nops++;
    return op;
}

struct sd_op *
sd_forward(struct sd_world *w, enum sd_kind kind, int from, int to, size_t len,
           unsigned timeout_ms)
{
    struct sd_op *op = sd_op_new(w, kind, from, to, len);
    struct sd_node *n = &w->node[from];
    hg_id_t id = kind == SD_ONEWAY ? w->id_oneway
                 : kind == SD_HOLD ? w->id_hold
                 : kind == SD_ECHO ? w->id_echo
                                   : w->id_bulk;
    sd_echo_t echo;
    sd_seq_t seq;
    sd_bulk_in_t bin;
    void *in = &echo;
    hg_return_t ret;

    assert_hg_ok_sd(HG_Create(n->ctx, n->addr[to], id, &op->handle));
    if (kind == SD_ECHO || kind == SD_HOLD) {
        echo.seq = op->seq;
        echo.data.len = len;
        echo.data.data = len ? malloc(len) : NULL;
        if (len)
            sd_fill(op->seq, echo.data.data, len);
    } else if (kind == SD_ONEWAY) {
        seq.seq = op->seq;
        in = &seq;
    } else {
        hg_size_t blen = len;
        int push = kind == SD_BULK_PUSH;

        op->buf = calloc(1, len ? len : 1);
        assert_non_null(op->buf);
        if (!push)
            sd_fill(op->seq, op->buf, len);
        assert_hg_ok_sd(HG_Bulk_create(
            n->cls, 1, &op->buf, &blen,
            (push ? HG_BULK_WRITE_ONLY : HG_BULK_READ_ONLY) | HG_BULK_NO_EAGER,
            &op->bulk));
        bin.seq = op->seq;
        bin.push = (uint32_t) push;
        bin.len = len;
        bin.bulk = op->bulk;
        in = &bin;
    }
    ret = HG_Forward_timed(op->handle, sd_forward_cb, op, in, timeout_ms);
    if (kind == SD_ECHO || kind == SD_HOLD)
        free(echo.data.data);
    if (ret != HG_SUCCESS) {
        /* Refused at once: no callback may follow. */
        op->calls = 1;
        op->ret = ret;
    }
    return op;
}

static hg_return_t
sd_xfer_cb(const struct hg_cb_info *info)
{
    struct sd_op *op = info->arg;

    op->calls++;
    op->w->completed++;
    op->done_ns = sd_now();
    if (op->calls > 1)
        return HG_SUCCESS;
    op->ret = info->ret;
    if (op->ret == HG_SUCCESS &&
        !sd_check(op->seq,
                  op->kind == SD_XFER && op->rbuf && op->xfer_push ? op->rbuf
                                                                   : op->buf,
                  op->len))
        op->bad_data++;
    return HG_SUCCESS;
}

struct sd_op *
sd_transfer(struct sd_world *w, int from, int to, size_t len, int push,
            unsigned timeout_ms)
{
    struct sd_op *op = sd_op_new(w, SD_XFER, from, to, len);
    hg_size_t blen = len;
    char desc[512];
    hg_size_t dsize;
    hg_return_t ret;

    op->xfer_push = push;
    op->buf = calloc(1, len ? len : 1);  /* local, on `from` */
    op->rbuf = calloc(1, len ? len : 1); /* exposed, on `to` */
    assert_non_null(op->buf);
    assert_non_null(op->rbuf);
    if (push)
        sd_fill(op->seq, op->buf, len);
    else
        sd_fill(op->seq, op->rbuf, len);
    assert_hg_ok_sd(HG_Bulk_create(w->node[to].cls, 1, &op->rbuf, &blen,
                                   HG_BULK_READWRITE | HG_BULK_NO_EAGER,
                                   &op->rbulk));
    assert_hg_ok_sd(HG_Bulk_create(w->node[from].cls, 1, &op->buf, &blen,
                                   HG_BULK_READWRITE, &op->bulk));
    dsize = HG_Bulk_get_serialize_size(op->rbulk, HG_FALSE);
    assert_true(dsize <= sizeof(desc));
    assert_hg_ok_sd(HG_Bulk_serialize(desc, dsize, HG_FALSE, op->rbulk));
    assert_hg_ok_sd(
        HG_Bulk_deserialize(w->node[from].cls, &op->remote, desc, dsize));
    ret = HG_Bulk_transfer_timed(w->node[from].ctx, sd_xfer_cb, op,
                                 push ? HG_BULK_PUSH : HG_BULK_PULL,
                                 w->node[from].addr[to], op->remote, 0,
                                 op->bulk, 0, len, timeout_ms, &op->xfer_id);
    if (ret != HG_SUCCESS) {
        op->calls = 1;
        op->ret = ret;
    }
    return op;
}

/* ---- progress --------------------------------------------------------- */

static void
sd_round(struct sd_world *w)
{
    for (int i = 0; i < w->n; i++) {
        unsigned int count;

        HG_Progress(w->node[i].ctx, w->progress_ms);
        while (HG_Trigger(w->node[i].ctx, 0, 64, &count) == HG_SUCCESS &&
               count > 0)
            ;
    }
}

static void
sd_hang(struct sd_world *w, const char *what, unsigned budget_ms)
{
    char hint[64];

    (void) w;
    na_sim_replay_hint(hint, sizeof(hint));
    fail_msg("%s did not happen within %u ms of virtual time (now %llu ns); "
             "replay with %s",
             what, budget_ms, (unsigned long long) sd_now(), hint);
}

void
sd_run_until(struct sd_world *w, const int *counter, int target,
             unsigned budget_ms)
{
    uint64_t end = sd_now() + (uint64_t) budget_ms * 1000000u;

    while (*counter < target) {
        if (sd_now() > end)
            sd_hang(w, "the awaited completion", budget_ms);
        sd_round(w);
    }
}

void
sd_wait(struct sd_world *w, struct sd_op *op, unsigned budget_ms)
{
    sd_run_until(w, &op->calls, 1, budget_ms);
}

void
sd_run_for(struct sd_world *w, unsigned ms)
{
    uint64_t end = sd_now() + (uint64_t) ms * 1000000u;

    while (sd_now() < end)
        sd_round(w);
}

static int
sd_quiet(const struct sd_world *w)
{
    for (int i = 0; i < w->nops; i++)
        if (w->ops[i].calls == 0)
            return 0;
    return w->bulk_live == 0 && w->respond_cbs >= w->responds;
}

void
sd_drain(struct sd_world *w, unsigned budget_ms)
{
    uint64_t end = sd_now() + (uint64_t) budget_ms * 1000000u;

    while (!sd_quiet(w)) {
        if (sd_now() > end)
            sd_hang(w, "draining every operation", budget_ms);
        sd_round(w);
    }
    /* A little longer, so a second callback would have time to show. */
    sd_run_for(w, 2);
}

/* ---- setup and teardown ----------------------------------------------- */

static void
sd_lookup(struct sd_world *w, int from, int to)
{
    char name[48];

    snprintf(name, sizeof(name), "sim://%s", w->node[to].name);
    assert_hg_ok_sd(
        HG_Addr_lookup2(w->node[from].cls, name, &w->node[from].addr[to]));
}

void
sd_open(struct sd_world *w, const struct sd_opts *opts)
{
    memset(w, 0, sizeof(*w));
    assert_true(opts->nodes >= 1 && opts->nodes <= SD_MAX_NODES);
    assert_int_equal(na_sim_world_hold(), NA_SUCCESS);
    sd_current = w;
    w->n = opts->nodes;
    w->progress_ms = 1;
    for (int i = 0; i < w->n; i++) {
        struct hg_init_info info = HG_INIT_INFO_INITIALIZER;
        struct sd_node *n = &w->node[i];
        char str[48];

        snprintf(n->name, sizeof(n->name), "n%d", i);
        snprintf(str, sizeof(str), "sim://%s", n->name);
        info.checksum_level = opts->checksum;
        info.na_init_info.max_unexpected_size = opts->max_msg;
        info.na_init_info.max_expected_size = opts->max_msg;
        if (opts->post_init)
            info.request_post_init = opts->post_init;
        info.probe_interval_ms = opts->probe_ms;
        info.no_probe = opts->no_probe ? HG_TRUE : HG_FALSE;
        n->cls = HG_Init_opt(str, HG_TRUE, &info);
        assert_non_null(n->cls);
        n->ctx = HG_Context_create(n->cls);
        assert_non_null(n->ctx);
        w->id_echo = MERCURY_REGISTER(n->cls, "sd_echo", sd_echo_t, sd_echo_t,
                                      sd_echo_handler);
        w->id_hold = MERCURY_REGISTER(n->cls, "sd_hold", sd_echo_t, sd_echo_t,
                                      sd_hold_handler);
        w->id_bulk = MERCURY_REGISTER(n->cls, "sd_bulk", sd_bulk_in_t,
                                      sd_bulk_out_t, sd_bulk_handler);
        w->id_oneway = MERCURY_REGISTER(n->cls, "sd_oneway", sd_seq_t, void,
                                        sd_oneway_handler);
        assert_hg_ok_sd(
            HG_Registered_disable_response(n->cls, w->id_oneway, HG_TRUE));
    }
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n; j++)
            sd_lookup(w, i, j);
}

void
sd_relookup(struct sd_world *w, int i)
{
    for (int j = 0; j < w->n; j++) {
        assert_hg_ok_sd(HG_Addr_free(w->node[j].cls, w->node[j].addr[i]));
        sd_lookup(w, j, i);
    }
}

void
sd_crash(struct sd_world *w, int i)
{
    assert_int_equal(na_sim_node_crash(w->node[i].name), NA_SUCCESS);
    w->node[i].crashed = 1;
}

void
sd_restart(struct sd_world *w, int i)
{
    assert_int_equal(na_sim_node_restart(w->node[i].name), NA_SUCCESS);
    w->node[i].crashed = 0;
    sd_relookup(w, i);
}

void
sd_faults(const char *spec)
{
    char err[128];
    na_return_t ret = na_sim_fault_set(spec, err, sizeof(err));

    if (ret != NA_SUCCESS)
        fail_msg("fault profile \"%s\" refused: %s", spec, err);
}

void
sd_assert_once(const struct sd_op *op)
{
    if (op->calls != 1)
        fail_msg("op %u (kind %d, %d->%d): %d callbacks", op->seq,
                 (int) op->kind, op->from, op->to, op->calls);
    if (op->bad_data)
        fail_msg("op %u (kind %d, %d->%d): succeeded with wrong bytes", op->seq,
                 (int) op->kind, op->from, op->to);
}

/* The library writes the trace itself when QS_SIM_TRACE_OUT is set. */
void
sd_report(const char *test_name)
{
    (void) test_name;
}

void
sd_close(struct sd_world *w)
{
    for (int i = 0; i < w->n; i++)
        if (w->node[i].crashed)
            sd_restart(w, i);
    sd_release_held(w);
    sd_drain(w, 300000);
    for (int i = 0; i < w->nops; i++)
        sd_assert_once(&w->ops[i]);
    assert_int_equal(w->bad_input, 0);
    assert_int_equal(w->respond_cbs, w->responds);
    assert_int_equal(w->nheld, 0);
    sd_report(NULL);
    w->final_faults = na_sim_fault_count(NULL);
    assert_int_equal(na_sim_fault_clear(), NA_SUCCESS);
    for (int i = 0; i < w->nops; i++) {
        struct sd_op *op = &w->ops[i];

        if (op->handle != HG_HANDLE_NULL)
            assert_hg_ok_sd(HG_Destroy(op->handle));
        if (op->bulk != HG_BULK_NULL)
            assert_hg_ok_sd(HG_Bulk_free(op->bulk));
        if (op->rbulk != HG_BULK_NULL)
            assert_hg_ok_sd(HG_Bulk_free(op->rbulk));
        if (op->remote != HG_BULK_NULL)
            assert_hg_ok_sd(HG_Bulk_free(op->remote));
        free(op->buf);
        free(op->rbuf);
    }
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n; j++)
            assert_hg_ok_sd(HG_Addr_free(w->node[i].cls, w->node[i].addr[j]));
    for (int i = 0; i < w->n; i++)
        assert_hg_ok_sd(HG_Context_destroy(w->node[i].ctx));
    for (int i = 0; i < w->n; i++)
        assert_hg_ok_sd(HG_Finalize(w->node[i].cls));
    sd_current = NULL;
    w->final_hash = na_sim_trace_hash();
    w->final_lines = na_sim_trace_count();
    sd_last_hash = w->final_hash;
    sd_last_prefetched = na_sim_prefetched_events();
    assert_int_equal(na_sim_world_release(), NA_SUCCESS);
    assert_false(na_sim_world_exists());
}
