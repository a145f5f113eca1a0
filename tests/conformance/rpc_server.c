/*
 * The server side of the conformance suite: the handlers of every RPC in
 * rpc_types.h. The same code serves an in-process server class and a
 * separate `--server` process, so a behaviour seen by a client does not
 * depend on how the test was run.
 *
 * Handlers keep their counters in a struct ct_server attached to their
 * class with HG_Class_set_data(); clients read them with CT_RPC_STATS.
 * Handlers registered on a class without that state (the client class, for
 * forwards to self) count into a scratch object nobody reads.
 */
#include "conformance/harness.h"
#include "conformance/buf.h"
#include "conformance/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request whose handle the server keeps without answering. */
struct ct_held {
    hg_handle_t handle;
    uint32_t token;
    struct ct_held *next;
};

/* One target-side bulk transfer of CT_RPC_XFER or CT_RPC_SUM. The record
 * outlives the transfer (until the class is finalized) so that a second
 * invocation of its callback is counted instead of touching freed
 * memory. */
struct ct_xfer {
    struct ct_server *srv;
    hg_handle_t handle;
    int is_sum;
    ct_xfer_in_t in;
    ct_sum_in_t sum_in;
    int input_held; /* in / sum_in still needs HG_Free_input   */
    struct ct_buf local;
    hg_bulk_t local_bulk;
    ct_xfer_out_t out;
    int calls;
    struct ct_xfer *next;
};

struct ct_server {
    uint64_t handled;
    uint64_t add_calls;
    struct ct_held *held_head;
    struct ct_held **held_tail;
    uint32_t held;
    uint32_t oneway_received;
    int32_t oneway_respond_ret;
    uint32_t last_oneway_token;
    uint32_t bulk_cb_duplicates;
    uint32_t respond_errors;
    int responds_posted; /* HG_Respond calls that returned HG_SUCCESS */
    int responds_done;   /* ... whose callback has run                */
    struct ct_xfer *xfers;
    int shutdown_requested;
};

/* Counters for handlers that run on a class without server state. */
static struct ct_server ct_scratch = {.held_tail = &ct_scratch.held_head};

static struct ct_server *
server_of(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);
    struct ct_server *s = NULL;

    if (info != NULL)
        s = (struct ct_server *) HG_Class_get_data(info->hg_class);
    return s != NULL ? s : &ct_scratch;
}

static hg_return_t
respond_cb(const struct hg_cb_info *info)
{
    struct ct_server *s = (struct ct_server *) info->arg;

    s->responds_done++;
    if (info->ret != HG_SUCCESS) {
        const struct hg_info *hi = HG_Get_info(info->info.respond.handle);

        fprintf(stderr, "ct server: a response to RPC %llu completed with %s\n",
                hi != NULL ? (unsigned long long) hi->id : 0ull,
                HG_Error_to_string(info->ret));
        s->respond_errors++;
    }
    return HG_SUCCESS;
}

/* The stats call's reply: not a counted respond (see stats_handler). */
static hg_return_t
stats_respond_cb(const struct hg_cb_info *info)
{
    if (info->ret != HG_SUCCESS)
        fprintf(stderr,
                "ct server: the reply to a stats call completed with %s (not "
                "counted: the client may have left as soon as it held it)\n",
                HG_Error_to_string(info->ret));
    return HG_SUCCESS;
}

/* Respond and drop the handler's reference; a failed respond is counted so
 * a client can see it through CT_RPC_STATS. A respond through respond_cb
 * is counted in responds_posted until its callback runs. */
static void
respond_with_and_destroy(struct ct_server *s, hg_handle_t handle, void *out,
                         hg_cb_t cb)
{
    hg_return_t ret = HG_Respond(handle, cb, s, out);

    if (ret == HG_SUCCESS) {
        if (cb == respond_cb)
            s->responds_posted++;
    } else {
        fprintf(stderr, "ct server: HG_Respond: %s\n", HG_Error_to_string(ret));
        s->respond_errors++;
    }
    HG_Destroy(handle);
}

static void
respond_and_destroy(struct ct_server *s, hg_handle_t handle, void *out)
{
    respond_with_and_destroy(s, handle, out, respond_cb);
}

/* Decode a request's input. On failure the handle is destroyed, since the
 * handler owns it, and the error is returned for the handler to pass on. */
static hg_return_t
get_input_or_destroy(hg_handle_t handle, void *in)
{
    hg_return_t ret = HG_Get_input(handle, in);

    if (ret != HG_SUCCESS)
        HG_Destroy(handle);
    return ret;
}

static hg_return_t
null_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);

    s->handled++;
    respond_and_destroy(s, handle, NULL);
    return HG_SUCCESS;
}

static hg_return_t
types_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_types_in_t in;
    ct_types_out_t out;
    hg_return_t ret;
    char *greeting = NULL;
    size_t len;

    s->handled++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    memset(&out, 0, sizeof(out));
    len = (size_t) snprintf(NULL, 0, CT_GREETING_FMT,
                            in.name ? in.name : "(null)",
                            in.tag ? in.tag : "(null)");
    greeting = (char *) malloc(len + 1);
    if (greeting != NULL)
        snprintf(greeting, len + 1, CT_GREETING_FMT,
                 in.name ? in.name : "(null)", in.tag ? in.tag : "(null)");
    out.greeting = greeting;
    out.maybe_null = in.maybe_null; /* encoded before HG_Respond returns */
    out.name_len = in.name ? (uint32_t) strlen(in.name) : 0;
    out.signed_sum = (int64_t) in.i8 + in.i16 + in.i32 + in.i64;
    out.unsigned_xor = (uint64_t) in.u8 ^ in.u16 ^ in.u32 ^ in.u64 ^ in.size;
    out.flag = in.flag ? HG_FALSE : HG_TRUE;
    out.i8 = in.i8;
    out.u16 = in.u16;
    out.real = in.real * 2.0;
    respond_and_destroy(s, handle, &out);
    free(greeting);
    HG_Free_input(handle, &in);
    return HG_SUCCESS;
}

hg_return_t
ct_add_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    const struct hg_info *info = HG_Get_info(handle);
    ct_add_in_t in;
    ct_add_out_t out;
    hg_return_t ret;

    s->handled++;
    s->add_calls++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    out.sum = in.a + in.b;
    out.seq = in.seq;
    out.info_context_id = info->context_id;
    out.context_get_id = HG_Context_get_id(info->context);
    HG_Free_input(handle, &in);
    respond_and_destroy(s, handle, &out);
    return HG_SUCCESS;
}

/* Returns the error code the client asked for, without responding: the
 * library owes the origin that code. The handle is the handler's, so it is
 * destroyed like in every other handler. */
static hg_return_t
fail_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_fail_in_t in;
    hg_return_t ret;

    s->handled++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    HG_Free_input(handle, &in);
    HG_Destroy(handle);
    return (hg_return_t) in.code;
}

/* One-way: record the request and what HG_Respond said about it (it must
 * refuse, since no response is expected). */
static hg_return_t
oneway_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_token_t in, out = {0};
    hg_return_t ret;

    s->handled++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    s->oneway_received++;
    s->last_oneway_token = in.token;
    HG_Free_input(handle, &in);
    s->oneway_respond_ret = (int32_t) HG_Respond(handle, respond_cb, s, &out);
    if (s->oneway_respond_ret == HG_SUCCESS)
        s->responds_posted++;
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static hg_return_t
hold_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    struct ct_held *h;
    ct_token_t in;
    hg_return_t ret;

    s->handled++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    HG_Free_input(handle, &in);
    h = (struct ct_held *) calloc(1, sizeof(*h));
    if (h == NULL) {
        HG_Destroy(handle);
        return HG_NOMEM;
    }
    h->handle = handle;
    h->token = in.token;
    *s->held_tail = h;
    s->held_tail = &h->next;
    s->held++;
    return HG_SUCCESS;
}

/* Answer held requests in the order they arrived, then this one. */
static hg_return_t
release_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_release_out_t out = {0};

    s->handled++;
    while (s->held_head != NULL) {
        struct ct_held *h = s->held_head;
        ct_token_t tok = {h->token};

        s->held_head = h->next;
        respond_and_destroy(s, h->handle, &tok);
        free(h);
        s->held--;
        out.released++;
    }
    s->held_tail = &s->held_head;
    respond_and_destroy(s, handle, &out);
    return HG_SUCCESS;
}

/*
 * The stats call is also how a client in another process learns that every
 * counted respond has run its callback before it finalizes its class
 * (harness.c, settle_remote_responds). On a fabric whose send completes
 * on the peer's acknowledgement (verbs' reliable connections), the peer's
 * device posts the receive before it sends that acknowledgement, so a
 * client that leaves the moment it holds a reply can make the reply's
 * send fail on this side. The client therefore asks until nothing counted
 * is pending, and only this call's own reply is left to that race: it is
 * not counted with the others, and an error on it is printed, not failed.
 * An HG_Respond that fails at once is still counted as a failed respond.
 */
static hg_return_t
stats_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_stats_out_t out;

    s->handled++;
    out.handled = s->handled;
    out.add_calls = s->add_calls;
    out.held = s->held;
    out.oneway_received = s->oneway_received;
    out.oneway_respond_ret = s->oneway_respond_ret;
    out.last_oneway_token = s->last_oneway_token;
    out.bulk_cb_duplicates = s->bulk_cb_duplicates;
    out.respond_errors = s->respond_errors;
    out.responds_pending = (uint32_t) (s->responds_posted - s->responds_done);
    respond_with_and_destroy(s, handle, &out, stats_respond_cb);
    return HG_SUCCESS;
}

static hg_return_t
shutdown_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);

    s->handled++;
    s->shutdown_requested = 1;
    respond_and_destroy(s, handle, NULL);
    return HG_SUCCESS;
}

/* Release what a transfer record holds apart from the record itself. */
static void
xfer_release(struct ct_xfer *x)
{
    if (x->local_bulk != HG_BULK_NULL) {
        HG_Bulk_free(x->local_bulk);
        x->local_bulk = HG_BULK_NULL;
    }
    if (x->input_held) {
        if (x->is_sum)
            HG_Free_input(x->handle, &x->sum_in);
        else
            HG_Free_input(x->handle, &x->in);
        x->input_held = 0;
    }
    ct_buf_free(&x->local);
}

static struct ct_xfer *
xfer_new(struct ct_server *s, hg_handle_t handle)
{
    struct ct_xfer *x = (struct ct_xfer *) calloc(1, sizeof(*x));

    if (x == NULL)
        return NULL;
    x->srv = s;
    x->handle = handle;
    x->next = s->xfers;
    s->xfers = x;
    return x;
}

static hg_return_t
sum_done(const struct hg_cb_info *info)
{
    struct ct_xfer *x = (struct ct_xfer *) info->arg;
    ct_sum_out_t out = {0};

    if (++x->calls > 1) {
        x->srv->bulk_cb_duplicates++;
        return HG_SUCCESS;
    }
    out.ret = (int32_t) info->ret;
    out.bulk_size = x->local.total;
    if (info->ret == HG_SUCCESS) {
        const int32_t *v = (const int32_t *) x->local.ptrs[0];
        hg_size_t i;

        for (i = 0; i < x->local.total / sizeof(int32_t); i++)
            out.sum += v[i];
    }
    respond_and_destroy(x->srv, x->handle, &out);
    xfer_release(x);
    return HG_SUCCESS;
}

/* Seed 000's server: pull the whole int32 array and return its sum. */
static hg_return_t
sum_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    const struct hg_info *info = HG_Get_info(handle);
    struct ct_xfer *x;
    ct_sum_out_t out = {0};
    hg_return_t ret;
    hg_size_t size;

    s->handled++;
    x = xfer_new(s, handle);
    if (x == NULL) {
        HG_Destroy(handle);
        return HG_NOMEM;
    }
    x->is_sum = 1;
    ret = get_input_or_destroy(handle, &x->sum_in);
    if (ret != HG_SUCCESS)
        return ret;
    x->input_held = 1;
    size = HG_Bulk_get_size(x->sum_in.bulk);
    if (x->sum_in.n < 0 || size != (hg_size_t) x->sum_in.n * sizeof(int32_t)) {
        ret = HG_INVALID_ARG;
        goto respond_error;
    }
    if (ct_buf_alloc(&x->local, CT_LAYOUT_CONTIG, size) != 0) {
        ret = HG_NOMEM;
        goto respond_error;
    }
    ret = HG_Bulk_create(info->hg_class, 1, x->local.ptrs, x->local.sizes,
                         HG_BULK_WRITE_ONLY, &x->local_bulk);
    if (ret != HG_SUCCESS)
        goto respond_error;
    ret = HG_Bulk_transfer(info->context, sum_done, x, HG_BULK_PULL, info->addr,
                           x->sum_in.bulk, 0, x->local_bulk, 0, size,
                           HG_OP_ID_IGNORE);
    if (ret != HG_SUCCESS)
        goto respond_error;
    return HG_SUCCESS;

respond_error:
    out.ret = (int32_t) ret;
    x->calls = 1;
    respond_and_destroy(s, handle, &out);
    xfer_release(x);
    return HG_SUCCESS;
}

static hg_return_t
xfer_done(const struct hg_cb_info *info)
{
    struct ct_xfer *x = (struct ct_xfer *) info->arg;

    if (++x->calls > 1) {
        x->srv->bulk_cb_duplicates++;
        return HG_SUCCESS;
    }
    x->out.cb_ret = (int32_t) info->ret;
    x->out.cb_count = 1;
    x->out.cb_size = info->info.bulk.size;
    if (x->in.op == HG_BULK_PULL)
        x->out.mismatches = ct_buf_check_image(
            &x->local, CT_SENTINEL_TARGET, x->in.seed, x->in.local_offset,
            x->in.origin_offset, x->in.size, &x->out.first_mismatch);
    x->out.touched = ct_buf_count_not(&x->local, CT_SENTINEL_TARGET);
    respond_and_destroy(x->srv, x->handle, &x->out);
    xfer_release(x);
    return HG_SUCCESS;
}

/*
 * One bulk transfer as the client describes it. The local buffer has the
 * requested layout; for a PUSH it holds the pattern (so the client can
 * check its origin memory), for a PULL the target sentinel (so the handler
 * can check the image the pull left).
 */
static hg_return_t
xfer_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    const struct hg_info *info = HG_Get_info(handle);
    struct ct_xfer *x;
    hg_op_id_t op_id = HG_OP_ID_NULL;
    hg_uint8_t flags;
    hg_return_t ret;
    ct_xfer_in_t *in;

    s->handled++;
    x = xfer_new(s, handle);
    if (x == NULL) {
        HG_Destroy(handle);
        return HG_NOMEM;
    }
    in = &x->in;
    x->out.first_mismatch = UINT64_MAX;
    ret = get_input_or_destroy(handle, in);
    if (ret != HG_SUCCESS)
        return ret;
    x->input_held = 1;
    if (ct_buf_alloc(&x->local, in->local_layout, in->local_size) != 0) {
        x->out.call_ret = HG_NOMEM;
        goto respond_now;
    }
    if (in->op == HG_BULK_PUSH) {
        ct_buf_fill_pattern(&x->local, in->seed);
        flags = HG_BULK_READ_ONLY;
    } else {
        ct_buf_fill(&x->local, CT_SENTINEL_TARGET);
        flags = HG_BULK_WRITE_ONLY;
    }
    if (in->flags & CT_XFER_LOCAL_WRONG)
        flags =
            flags == HG_BULK_READ_ONLY ? HG_BULK_WRITE_ONLY : HG_BULK_READ_ONLY;
    ret = HG_Bulk_create(info->hg_class, x->local.count, x->local.ptrs,
                         x->local.sizes, flags, &x->local_bulk);
    if (ret != HG_SUCCESS) {
        x->out.call_ret = (int32_t) ret;
        goto respond_now;
    }

    if (in->flags & CT_XFER_BIND)
        ret = HG_Bulk_bind_transfer(info->context, xfer_done, x,
                                    (hg_bulk_op_t) in->op, in->bulk,
                                    in->origin_offset, x->local_bulk,
                                    in->local_offset, in->size, &op_id);
    else if (in->timeout_ms != 0)
        ret = HG_Bulk_transfer_timed(
            info->context, xfer_done, x, (hg_bulk_op_t) in->op, info->addr,
            in->bulk, in->origin_offset, x->local_bulk, in->local_offset,
            in->size, in->timeout_ms, &op_id);
    else
        ret =
            HG_Bulk_transfer(info->context, xfer_done, x, (hg_bulk_op_t) in->op,
                             info->addr, in->bulk, in->origin_offset,
                             x->local_bulk, in->local_offset, in->size, &op_id);
    x->out.call_ret = (int32_t) ret;
    if (ret != HG_SUCCESS)
        goto respond_now;

    if (in->flags & CT_XFER_CANCEL)
        x->out.cancel_ret = (int32_t) HG_Bulk_cancel(op_id);
    if (in->flags & CT_XFER_FREE_EARLY) {
        /* The transfer holds its own references: dropping ours must be
         * safe and must not change the outcome. */
        HG_Bulk_free(x->local_bulk);
        x->local_bulk = HG_BULK_NULL;
        HG_Free_input(handle, in);
        x->input_held = 0;
    }
    return HG_SUCCESS;

respond_now:
    x->calls = 1;
    x->out.touched = ct_buf_count_not(&x->local, CT_SENTINEL_TARGET);
    respond_and_destroy(s, handle, &x->out);
    xfer_release(x);
    return HG_SUCCESS;
}

static hg_return_t
big_handler(hg_handle_t handle)
{
    struct ct_server *s = server_of(handle);
    ct_big_in_t in;
    ct_big_out_t out;
    hg_return_t ret;
    uint64_t i;

    s->handled++;
    ret = get_input_or_destroy(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    memset(&out, 0, sizeof(out));
    out.in_len = in.text ? strlen(in.text) : 0;
    if (in.text != NULL) {
        out.text = strdup(in.text);
        for (i = 0; out.text != NULL && out.text[i] != '\0'; i++)
            out.text[i] = (char) (out.text[i] == 'z' ? 'a' : out.text[i] + 1);
    }
    if (in.blob.len > 0) {
        out.blob.data = (uint8_t *) malloc((size_t) in.blob.len);
        if (out.blob.data != NULL) {
            out.blob.len = in.blob.len;
            for (i = 0; i < in.blob.len; i++)
                out.blob.data[i] = in.blob.data[i] ^ CT_BIG_XOR;
        }
    }
    HG_Free_input(handle, &in);
    respond_and_destroy(s, handle, &out);
    free(out.text);
    free(out.blob.data);
    return HG_SUCCESS;
}

static void
server_free(void *data)
{
    struct ct_server *s = (struct ct_server *) data;

    while (s->xfers != NULL) {
        struct ct_xfer *x = s->xfers;

        s->xfers = x->next;
        free(x);
    }
    while (s->held_head != NULL) {
        struct ct_held *h = s->held_head;

        s->held_head = h->next;
        free(h);
    }
    free(s);
}

void
ct_register_rpcs(hg_class_t *cls, int serve, struct ct_ids *ids)
{
    struct ct_server *s = NULL;

#define CT_HANDLER(fn) (serve ? (fn) : NULL)
    if (serve) {
        s = (struct ct_server *) calloc(1, sizeof(*s));
        assert_non_null(s);
        s->held_tail = &s->held_head;
        assert_hg_ok(HG_Class_set_data(cls, s, server_free));
    }
    ids->null = MERCURY_REGISTER(cls, CT_RPC_NULL, void, void,
                                 CT_HANDLER(null_handler));
    ids->types = MERCURY_REGISTER(cls, CT_RPC_TYPES, ct_types_in_t,
                                  ct_types_out_t, CT_HANDLER(types_handler));
    ids->add = MERCURY_REGISTER(cls, CT_RPC_ADD, ct_add_in_t, ct_add_out_t,
                                CT_HANDLER(ct_add_handler));
    ids->fail = MERCURY_REGISTER(cls, CT_RPC_FAIL, ct_fail_in_t, void,
                                 CT_HANDLER(fail_handler));
    ids->oneway = MERCURY_REGISTER(cls, CT_RPC_ONEWAY, ct_token_t, void,
                                   CT_HANDLER(oneway_handler));
    ids->hold = MERCURY_REGISTER(cls, CT_RPC_HOLD, ct_token_t, ct_token_t,
                                 CT_HANDLER(hold_handler));
    ids->release = MERCURY_REGISTER(cls, CT_RPC_RELEASE, void, ct_release_out_t,
                                    CT_HANDLER(release_handler));
    ids->stats = MERCURY_REGISTER(cls, CT_RPC_STATS, void, ct_stats_out_t,
                                  CT_HANDLER(stats_handler));
    ids->shutdown = MERCURY_REGISTER(cls, CT_RPC_SHUTDOWN, void, void,
                                     CT_HANDLER(shutdown_handler));
    ids->sum = MERCURY_REGISTER(cls, CT_RPC_SUM, ct_sum_in_t, ct_sum_out_t,
                                CT_HANDLER(sum_handler));
    ids->xfer = MERCURY_REGISTER(cls, CT_RPC_XFER, ct_xfer_in_t, ct_xfer_out_t,
                                 CT_HANDLER(xfer_handler));
    ids->big = MERCURY_REGISTER(cls, CT_RPC_BIG, ct_big_in_t, ct_big_out_t,
                                CT_HANDLER(big_handler));
#undef CT_HANDLER
    /* The target never registers this one: forwards to it must fail with
     * HG_NOENTRY. */
    ids->not_on_server =
        serve ? 0
              : MERCURY_REGISTER(cls, CT_RPC_NOT_ON_SERVER, void, void, NULL);
    assert_true(ids->null != 0 && ids->types != 0 && ids->add != 0 &&
                ids->fail != 0 && ids->oneway != 0 && ids->hold != 0 &&
                ids->release != 0 && ids->stats != 0 && ids->shutdown != 0 &&
                ids->sum != 0 && ids->xfer != 0 && ids->big != 0);
    assert_true(serve || ids->not_on_server != 0);
    assert_hg_ok(HG_Registered_disable_response(cls, ids->oneway, HG_TRUE));
}

int
ct_server_shutdown_requested(hg_class_t *cls)
{
    struct ct_server *s = (struct ct_server *) HG_Class_get_data(cls);

    return s != NULL && s->shutdown_requested;
}

const int *
ct_server_responds(hg_class_t *cls, int *posted)
{
    struct ct_server *s = (struct ct_server *) HG_Class_get_data(cls);

    if (s == NULL)
        return NULL;
    *posted = s->responds_posted;
    return &s->responds_done;
}

void
ct_server_describe(hg_class_t *cls, char *msg, size_t size)
{
    struct ct_server *s = (struct ct_server *) HG_Class_get_data(cls);
    const struct ct_xfer *x;
    unsigned started = 0, pending = 0;

    if (s == NULL) {
        snprintf(msg, size, "no server state");
        return;
    }
    for (x = s->xfers; x != NULL; x = x->next) {
        started++;
        pending += x->calls == 0;
    }
    snprintf(msg, size,
             "%llu request(s) handled, %u held, %u transfer(s) started, %u "
             "still waiting for their callback, %u failed respond(s)",
             (unsigned long long) s->handled, s->held, started, pending,
             s->respond_errors);
}

int
ct_server_problems(hg_class_t *cls, char *msg, size_t size)
{
    struct ct_server *s = (struct ct_server *) HG_Class_get_data(cls);
    const struct ct_xfer *x;
    unsigned pending = 0;

    if (s == NULL)
        return 0;
    for (x = s->xfers; x != NULL; x = x->next)
        pending += x->calls == 0;
    if (s->held != 0 || s->bulk_cb_duplicates != 0 || pending != 0 ||
        s->respond_errors != 0) {
        snprintf(msg, size,
                 "server state not clean: %u held handle(s), %u duplicate "
                 "bulk callback(s), %u transfer(s) without a callback, %u "
                 "failed respond(s)",
                 s->held, s->bulk_cb_duplicates, pending, s->respond_errors);
        return 1;
    }
    return 0;
}
