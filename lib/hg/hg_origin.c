/*
 * The origin of an RPC: HG_Forward() and its timed form, the response's
 * receipt and the pull of an overflowed output, loopback to a context of
 * the same class, and the deadline.
 */
#include "hg/hg_rpc.h"

#include <stdlib.h>
#include <string.h>

static void
hg_forward_na_cb(const struct na_cb_info *info)
{
    hg_rpc_op_done(info->arg, hg_from_na(info->ret));
}

static void
hg_forward_pull_cb(void *arg, hg_return_t ret)
{
    struct hg_handle *handle = arg;
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_return_t na_ret;

    qs_hot_lock(&handle->lock);
    handle->bulk_op = NULL;
    qs_hot_unlock(&handle->lock);
    if (ret == HG_SUCCESS)
        ret = hg_rpc_check_crc(&handle->resp_header, handle->out_extra,
                               handle->out_extra_size);
    {
        /* Tell the target it may release the exposed output, whether the
         * pull worked, failed or was cancelled: it waits for this. */
        qs_hot_lock(&handle->lock);
        hg_opgroup_add(&handle->ops, 1); /* before the pull ends, below */
        qs_hot_unlock(&handle->lock);
        handle->ack_byte = 1;
        na_ret = NA_Msg_send_expected(
            hg_class->core.na_class, handle->ctx->core.na_context,
            hg_forward_na_cb, handle, &handle->ack_byte, 1, NULL,
            handle->info.addr->na_addr, handle->target_id,
            handle->resp_header.cookie | hg_class->tag_ack_bit, handle->ack_op);
        if (na_ret != NA_SUCCESS)
            hg_rpc_op_done(handle, hg_from_na(na_ret));
    }
    hg_rpc_op_done(handle, ret);
}

/* Whether a received message is the response to this forward, carrying
 * the checksums this class requires. */
static hg_return_t
hg_forward_check_response(struct hg_handle *handle, size_t size)
{
    struct hg_header *header = &handle->resp_header;
    hg_return_t ret;

    ret = hg_header_decode(handle->out_buf, size, header);
    if (ret == HG_SUCCESS && (!(header->flags & HG_HEADER_RESPONSE) ||
                              header->cookie != handle->req_header.cookie))
        ret = HG_PROTOCOL_ERROR;
    if (ret == HG_SUCCESS)
        ret = hg_rpc_check_crc_flags(handle->ctx->hg_class, header);
    return ret;
}

/* The output overflowed: pull it from the target, counted in the group
 * (before the response receive that starts it ends) until
 * hg_forward_pull_cb() (which acknowledges it) has run. */
static hg_return_t
hg_forward_pull_output(struct hg_handle *handle, const void *payload,
                       size_t payload_len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->resp_header;
    const void *desc;
    size_t desc_len;
    void *extra;
    hg_return_t ret;

    ret = hg_rpc_overflow_parse(header, payload, payload_len, &desc, &desc_len,
                                &extra);
    if (ret != HG_SUCCESS)
        return ret;
    handle->out_extra = extra;
    handle->out_extra_size = header->payload_size;
    qs_hot_lock(&handle->lock);
    hg_opgroup_add(&handle->ops, 1);
    qs_hot_unlock(&handle->lock);
    atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
    ret =
        hg_bulk_pull_internal(handle->ctx, handle->info.addr, handle->target_id,
                              desc, desc_len, extra, header->payload_size,
                              hg_forward_pull_cb, handle, &handle->bulk_op);
    /* On success the pull's own completion ends it in the group. */
    if (ret != HG_SUCCESS)
        hg_rpc_op_done(handle, ret);
    return ret;
}

static void
hg_forward_recv_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->resp_header;
    size_t size = info->info.recv_expected.actual_buf_size;
    hg_size_t offset = hg_class->out_offset;
    const char *payload;
    hg_return_t ret;

    if (info->ret != NA_SUCCESS) {
        hg_rpc_op_done(handle, hg_from_na(info->ret));
        return;
    }
    handle->out_size = size;
    ret = hg_forward_check_response(handle, size);
    if (ret != HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        handle->out_size = 0;
        hg_rpc_op_done(handle, ret);
        return;
    }
    /* The target answered: alive, for every forward to this address. */
    hg_probe_heard(&hg_class->heard, handle->info.addr->na_addr);
    if (header->ret != HG_SUCCESS) {
        hg_rpc_op_done(handle, (hg_return_t) header->ret);
        return;
    }
    /* The reserved bytes of HG_Class_set_output_offset() come first. */
    if (size < HG_HEADER_SIZE + offset) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        hg_rpc_op_done(handle, HG_PROTOCOL_ERROR);
        return;
    }
    payload = (const char *) handle->out_buf + HG_HEADER_SIZE + offset;
    if (!(header->flags & HG_HEADER_OVERFLOW)) {
        if (header->payload_size != size - HG_HEADER_SIZE - offset)
            ret = HG_PROTOCOL_ERROR;
        else
            ret = hg_rpc_check_crc(header, payload, header->payload_size);
        hg_rpc_op_done(handle, ret);
        return;
    }
    ret =
        hg_forward_pull_output(handle, payload, size - HG_HEADER_SIZE - offset);
    if (ret != HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        hg_rpc_op_done(handle, ret);
        return;
    }
    hg_rpc_op_done(handle, HG_SUCCESS);
}

/* Forward to a context of this very class, without the network. */
static hg_return_t
hg_forward_loopback(struct hg_handle *handle, size_t msg_len, void *extra,
                    hg_size_t len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    hg_context_t *target_ctx;
    struct hg_handle *target;
    na_addr_t self;

    target_ctx = hg_class_find_context(hg_class, handle->target_id);
    if (target_ctx == NULL)
        return HG_NOENTRY;
    if (NA_Addr_self(hg_class->core.na_class, &self) != NA_SUCCESS)
        return HG_NOMEM;
    target = hg_handle_get(target_ctx);
    if (target == NULL) {
        NA_Addr_free(hg_class->core.na_class, self);
        return HG_NOMEM;
    }
    target->is_target = true;
    target->src_addr.na_addr = self;
    target->info.addr = &target->src_addr;
    target->req_header = handle->req_header;
    target->info.id = handle->info.id;
    target->target_id = handle->ctx->core.id;
    target->in_size = msg_len;
    memcpy(target->in_buf, handle->in_buf, msg_len);
    if (extra != NULL) {
        target->in_extra = malloc(len ? len : 1);
        if (target->in_extra == NULL) {
            hg_handle_put(target);
            return HG_NOMEM;
        }
        memcpy(target->in_extra, extra, len);
        target->in_extra_size = len;
    }
    target->rpc = hg_rpc_lookup(hg_class, handle->info.id);
    if (!(handle->req_header.flags & HG_HEADER_NO_RESPONSE)) {
        HG_Ref_incr(handle);
        target->lb_origin = handle;
        /* Nothing goes on the wire: the request's send, counted by the
         * claim, ends here, and the group waits for the reply alone. */
        qs_hot_lock(&handle->lock);
        handle->loopback_pending = true;
        (void) hg_opgroup_end(&handle->ops, HG_SUCCESS);
        qs_hot_unlock(&handle->lock);
    }
    if (target->rpc == NULL || target->rpc->rpc_cb == NULL) {
        hg_rpc_respond_error(target, HG_NOENTRY);
    } else {
        qs_atomic_fetch_add(&hg_class->stats.requests_received, 1,
                            memory_order_relaxed);
        target->comp.run = hg_request_run;
        target->comp.object = target;
        hg_core_complete(&target_ctx->core, &target->comp);
    }
    if (handle->req_header.flags & HG_HEADER_NO_RESPONSE) {
        /* One-way: complete as soon as the request is "sent" (the one
         * operation the claim counted). */
        hg_rpc_op_done(handle, HG_SUCCESS);
    }
    return HG_SUCCESS;
}

static void
hg_forward_expire(struct hg_timer *timer)
{
    struct hg_handle *handle =
        (struct hg_handle *) ((char *) timer -
                              offsetof(struct hg_handle, timer));

    qs_hot_lock(&handle->lock);
    if (!handle->active || !hg_opgroup_busy(&handle->ops)) {
        qs_hot_unlock(&handle->lock);
        return;
    }
    hg_opgroup_fail(&handle->ops, HG_TIMEOUT);
    qs_hot_unlock(&handle->lock);
    HG_Cancel(handle);
}

/* The one lock section of a forward: claim the handle, and arm its group
 * with the operations it will wait for (the request send, and the
 * response unless one-way) before any is posted. A loopback forward ends
 * the send at once (hg_forward_loopback()). */
static hg_return_t
hg_forward_claim(struct hg_handle *handle, bool no_response)
{
    qs_hot_lock(&handle->lock);
    if (handle->active) {
        qs_hot_unlock(&handle->lock);
        return HG_BUSY;
    }
    handle->active = true;
    handle->discard = false;
    handle->loopback_pending = false;
    hg_opgroup_arm(&handle->ops, no_response ? 1 : 2);
    handle->probe.gen++; /* a probe of an earlier forward no longer counts */
    qs_hot_unlock(&handle->lock);
    return HG_SUCCESS;
}

/* Undo hg_forward_claim() for a forward that will not run. */
static void
hg_forward_unclaim(struct hg_handle *handle)
{
    HG_CHECK(hg_check_op_end(handle));
    qs_hot_lock(&handle->lock);
    handle->active = false;
    hg_opgroup_init(&handle->ops); /* nothing it counted was posted */
    qs_hot_unlock(&handle->lock);
}

/* Drop what the previous forward left: its output and overflowed input. */
static void
hg_forward_clear(struct hg_handle *handle)
{
    hg_handle_drop_extras(handle);
    handle->out_size = 0;
}

/* Encode the input and write the request message around it: the input
 * itself, or the descriptor of its overflow. */
static hg_return_t
hg_forward_pack(struct hg_handle *handle, void *in_struct, bool loopback,
                size_t *msg_len, void **extra, hg_size_t *len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->req_header;
    hg_return_t ret;

    ret = hg_rpc_encode(
        handle->in_proc, handle->rpc->in_proc, in_struct,
        (char *) handle->in_buf + HG_HEADER_SIZE + hg_class->in_offset,
        hg_class->in_eager_size - hg_class->in_offset, len, extra);
    if (ret != HG_SUCCESS)
        return ret;
    handle->in_extra = *extra; /* freed with the handle or next forward */
    memset(header, 0, sizeof(*header));
    handle->resp_header.payload_size = 0;
    header->flags = handle->rpc->no_response ? HG_HEADER_NO_RESPONSE : 0;
    header->cookie = hg_class_next_tag(hg_class);
    header->rpc_id = handle->info.id;
    header->context_id = handle->ctx->core.id;
    return hg_rpc_pack(handle, header, handle->in_buf, hg_class->in_eager_size,
                       hg_class->in_offset, *len, *extra, loopback, msg_len);
}

/* From here the forward ends in its callback: hold the handle until it
 * has run, and arm the deadline. */
static void
hg_forward_start(struct hg_handle *handle, hg_cb_t callback, void *arg,
                 unsigned int timeout_ms)
{
    hg_class_t *hg_class = handle->ctx->hg_class;

    handle->callback = callback;
    handle->arg = arg;
    HG_CHECK(hg_check_op_begin(hg_class, handle, HG_CHECK_FORWARD));
    hg_rpc_op_ref(handle); /* held until the callback has run */
    qs_atomic_fetch_add(&hg_class->stats.forwards_sent, 1,
                        memory_order_relaxed);
    if (timeout_ms > 0)
        hg_core_timer_arm(&handle->ctx->core, &handle->timer, timeout_ms,
                          hg_forward_expire);
}

/* Undo hg_forward_start() and the claim for a forward that posted
 * nothing: the caller gets the error, not a callback. */
static void
hg_forward_unstart(struct hg_handle *handle)
{
    hg_core_timer_disarm(&handle->timer);
    hg_rpc_op_unref(handle);
    hg_forward_unclaim(handle);
}

/* Post the response receive and the request send over the network. */
static hg_return_t
hg_forward_post(struct hg_handle *handle, size_t msg_len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_class_t *na_class = hg_class->core.na_class;
    bool no_response = handle->rpc->no_response;
    na_return_t na_ret;
    hg_return_t ret;

    /* The response receive goes first so the response cannot outrun it. */
    if (!no_response) {
        na_ret = NA_Msg_recv_expected(
            na_class, handle->ctx->core.na_context, hg_forward_recv_cb, handle,
            handle->out_buf, hg_class->na_expected_size, handle->out_buf_data,
            handle->info.addr->na_addr, handle->target_id,
            handle->req_header.cookie, handle->recv_op);
        if (na_ret != NA_SUCCESS) {
            hg_forward_unstart(handle);
            return hg_from_na(na_ret);
        }
    }
    na_ret = NA_Msg_send_unexpected(
        na_class, handle->ctx->core.na_context, hg_forward_na_cb, handle,
        handle->in_buf, msg_len, handle->in_buf_data,
        handle->info.addr->na_addr, handle->target_id,
        handle->req_header.cookie, handle->send_op);
    if (na_ret != NA_SUCCESS) {
        ret = hg_from_na(na_ret);
        qs_log("hg", QS_LOG_DEBUG, "HG_Forward: posting the request failed: %s",
               HG_Error_to_string(ret));
        if (no_response) {
            hg_forward_unstart(handle);
            return ret;
        }
        /* The receive is posted: end the send that never started, cancel
         * the receive and let its completion clean up silently, since the
         * caller gets the error now. */
        qs_hot_lock(&handle->lock);
        handle->discard = true;
        qs_hot_unlock(&handle->lock);
        hg_rpc_op_done(handle, HG_SUCCESS);
        NA_Cancel(na_class, handle->ctx->core.na_context, handle->recv_op);
        return ret;
    }
    if (!no_response)
        hg_probe_start(handle); /* a dead target fails it (hg_liveness.c) */
    return HG_SUCCESS;
}

hg_return_t
HG_Forward_timed(hg_handle_t handle, hg_cb_t callback, void *arg,
                 void *in_struct, unsigned int timeout_ms)
{
    hg_class_t *hg_class;
    hg_size_t len;
    size_t msg_len;
    void *extra;
    bool loopback;
    hg_return_t ret;

    qs_bias_gate();
    if (handle == HG_HANDLE_NULL || handle->is_target)
        return HG_INVALID_ARG;
    hg_class = handle->ctx->hg_class;
    if (handle->rpc == NULL || handle->rpc->id != handle->info.id)
        return HG_NOENTRY;
    ret = hg_forward_claim(handle, handle->rpc->no_response);
    if (ret != HG_SUCCESS)
        return ret;
    hg_forward_clear(handle);
    loopback = !hg_class->info.no_loopback &&
               HG_Addr_is_self(hg_class, handle->info.addr);
    ret = hg_forward_pack(handle, in_struct, loopback, &msg_len, &extra, &len);
    if (ret != HG_SUCCESS) {
        hg_forward_unclaim(handle);
        return ret;
    }
    hg_forward_start(handle, callback, arg, timeout_ms);
    if (!loopback)
        return hg_forward_post(handle, msg_len);
    ret = hg_forward_loopback(handle, msg_len, extra, len);
    if (ret != HG_SUCCESS)
        hg_forward_unstart(handle);
    return ret;
}

hg_return_t
HG_Forward(hg_handle_t handle, hg_cb_t callback, void *arg, void *in_struct)
{
    return HG_Forward_timed(handle, callback, arg, in_struct, 0);
}
