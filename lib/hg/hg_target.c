/*
 * The target of an RPC: the request receive posted by each pooled handle,
 * a request's receipt (and the pull of an overflowed input), queueing its
 * handler, and HG_Respond().
 */
#include "hg/hg_rpc.h"

#include <stdlib.h>
#include <string.h>

static void hg_request_recv_cb(const struct na_cb_info *info);

/* Take a handle whose receive will not be posted off the posted list. */
static void
hg_handle_unpost(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;

    qs_mutex_lock(&context->lock);
    LIST_REMOVE(handle, entry);
    context->n_posted--;
    pthread_mutex_unlock(&context->lock);
}
static hg_return_t hg_handle_post_listed(struct hg_handle *handle);

hg_return_t
hg_handle_post_recv(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;

    handle->is_target = true;
    qs_mutex_lock(&context->lock);
    LIST_INSERT_HEAD(&context->posted, handle, entry);
    context->n_posted++;
    pthread_mutex_unlock(&context->lock);
    return hg_handle_post_listed(handle);
}

/* Post the request receive of a handle already on the posted list. */
static hg_return_t
hg_handle_post_listed(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;
    hg_class_t *hg_class = context->hg_class;
    na_return_t na_ret;

    na_ret = NA_Msg_recv_unexpected(
        hg_class->core.na_class, context->core.na_context, hg_request_recv_cb,
        handle, handle->in_buf, hg_class->na_unexpected_size,
        handle->in_buf_data, handle->recv_op);
    if (na_ret != NA_SUCCESS) {
        hg_handle_unpost(handle);
        qs_log("hg", QS_LOG_ERROR, "posting a request receive failed: %s",
               NA_Error_to_string(na_ret));
        return hg_from_na(na_ret);
    }
    return HG_SUCCESS;
}

/* Post the receive of a pooled handle already on the posted list. */
static void
hg_handle_repost(struct hg_handle *handle)
{
    hg_return_t ret;

    hg_handle_reset(handle);
    handle->is_target = true;
    ret = hg_handle_target_create_cb(handle);
    if (ret != HG_SUCCESS)
        hg_handle_unpost(handle);
    /* A failed post took it off the list already. */
    if (ret != HG_SUCCESS || hg_handle_post_listed(handle) != HG_SUCCESS)
        hg_handle_put(handle);
}

/* The request is complete: verify it and queue its handler. */
static void
hg_request_ready(struct hg_handle *handle)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    hg_return_t ret;

    if (handle->in_extra != NULL)
        ret = hg_rpc_check_crc(&handle->req_header, handle->in_extra,
                               handle->in_extra_size);
    else
        ret = hg_rpc_check_crc(
            &handle->req_header,
            (char *) handle->in_buf + HG_HEADER_SIZE + hg_class->in_offset,
            handle->in_size - HG_HEADER_SIZE - hg_class->in_offset);
    if (ret != HG_SUCCESS) {
        qs_log("hg", QS_LOG_DEBUG, "request for RPC %llu failed its checksum",
               (unsigned long long) handle->info.id);
        hg_rpc_respond_error(handle, ret);
        return;
    }
    qs_atomic_fetch_add(&hg_class->stats.requests_received, 1,
                        memory_order_relaxed);
    handle->comp.run = hg_request_run;
    handle->comp.object = handle;
    hg_core_complete(&handle->ctx->core, &handle->comp);
}

static void
hg_request_pull_cb(void *arg, hg_return_t ret)
{
    struct hg_handle *handle = arg;

    qs_hot_lock(&handle->lock);
    handle->bulk_op = NULL;
    qs_hot_unlock(&handle->lock);
    if (ret != HG_SUCCESS) {
        hg_rpc_respond_error(handle, ret);
        return;
    }
    hg_request_ready(handle);
}

/* A request receive completed: take its handle off the posted list and,
 * in the same lock section (which keeps the receive count steady), put its
 * replacement from the pool on. A cancelled receive is not replaced. */
static void
hg_request_replace(struct hg_handle *handle, na_return_t recv_ret)
{
    hg_context_t *context = handle->ctx;
    struct hg_handle *next = NULL;
    bool repost;

    qs_hot_lock(&context->lock);
    LIST_REMOVE(handle, entry);
    context->n_posted--;
    repost = !context->destroying && recv_ret != NA_CANCELED &&
             context->n_posted < context->n_posted_target;
    /* Posting runs the class's handle create callback: never on the
     * watchdog, which leaves it to the program's next HG_Progress(). */
    if (repost && context->hg_class->handle_create_cb != NULL &&
        hg_watchdog_on_thread()) {
        repost = false;
        hg_watchdog_defer_repost(context);
    }
    if (repost) {
        next = hg_handle_pool_take(context);
        if (next != NULL) {
            LIST_INSERT_HEAD(&context->posted, next, entry);
            context->n_posted++;
        }
    }
    qs_hot_unlock(&context->lock);
    if (next != NULL)
        hg_handle_repost(next);
    else if (repost)
        hg_context_post_recvs(context); /* the pool is empty: grow it */
}

/* Whether a request whose header decoded may reach a handler: it carries
 * the checksums this class requires, names a registered RPC, and its
 * eager input is as long as announced. */
static hg_return_t
hg_request_admit(struct hg_handle *handle, size_t size)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->req_header;
    hg_size_t offset = hg_class->in_offset;
    hg_return_t ret;

    ret = hg_rpc_check_crc_flags(hg_class, header);
    if (ret != HG_SUCCESS) {
        /* The origin is told (its call ends with this error), and a
         * corrupted flag word on a faulted fabric lands here too: not
         * something this side's user must act on. */
        qs_log("hg", QS_LOG_DEBUG,
               "request without the configured checksums refused");
        return ret;
    }
    handle->rpc = hg_rpc_lookup(hg_class, header->rpc_id);
    if (handle->rpc == NULL || handle->rpc->rpc_cb == NULL)
        return HG_NOENTRY;
    /* The reserved bytes of HG_Class_set_input_offset() come first. */
    if (size < HG_HEADER_SIZE + offset ||
        (!(header->flags & HG_HEADER_OVERFLOW) &&
         header->payload_size != size - HG_HEADER_SIZE - offset)) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        return HG_PROTOCOL_ERROR;
    }
    return HG_SUCCESS;
}

/* The input overflowed: pull it from the origin before the handler runs
 * (hg_request_pull_cb()). */
static hg_return_t
hg_request_pull_input(struct hg_handle *handle, size_t size)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->req_header;
    hg_size_t skip = HG_HEADER_SIZE + hg_class->in_offset;
    const void *desc;
    size_t desc_len;
    void *extra;
    hg_return_t ret;

    ret = hg_rpc_overflow_parse(header, (char *) handle->in_buf + skip,
                                size - skip, &desc, &desc_len, &extra);
    if (ret != HG_SUCCESS)
        return ret;
    handle->in_extra = extra;
    handle->in_extra_size = header->payload_size;
    atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
    return hg_bulk_pull_internal(handle->ctx, &handle->src_addr,
                                 header->context_id, desc, desc_len, extra,
                                 header->payload_size, hg_request_pull_cb,
                                 handle, &handle->bulk_op);
}

static void
hg_request_recv_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->req_header;
    size_t size;
    hg_return_t ret;

    hg_request_replace(handle, info->ret);
    if (info->ret != NA_SUCCESS) {
        hg_handle_put(handle);
        return;
    }
    size = info->info.recv_unexpected.actual_buf_size;
    handle->src_addr.na_addr = info->info.recv_unexpected.source;
    handle->info.addr = &handle->src_addr;
    handle->in_size = size;
    ret = hg_header_decode(handle->in_buf, size, header);
    if (ret == HG_SUCCESS && (header->flags & HG_HEADER_PROBE)) {
        /* A liveness probe: answered here, below the handlers. */
        hg_probe_answer(handle, size);
        return;
    }
    if (ret == HG_SUCCESS && (header->flags & HG_HEADER_RESPONSE))
        ret = HG_PROTOCOL_ERROR;
    if (ret != HG_SUCCESS) {
        /* Without a trustworthy header there is nobody to answer. */
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        qs_log("hg", QS_LOG_DEBUG, "dropped a malformed request: %s",
               HG_Error_to_string(ret));
        hg_handle_put(handle);
        return;
    }
    handle->info.id = header->rpc_id;
    handle->target_id = header->context_id;
    handle->active = true;
    handle->responded = false;
    ret = hg_request_admit(handle, size);
    if (ret != HG_SUCCESS) {
        hg_rpc_respond_error(handle, ret);
        return;
    }
    if (!(header->flags & HG_HEADER_OVERFLOW)) {
        hg_request_ready(handle);
        return;
    }
    ret = hg_request_pull_input(handle, size);
    if (ret != HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        hg_rpc_respond_error(handle, ret);
    }
}

/* Answer a request that will not reach its handler, then let go of the
 * handle that no handler will own. */
void
hg_rpc_respond_error(struct hg_handle *handle, hg_return_t ret)
{
    if (!(handle->req_header.flags & HG_HEADER_NO_RESPONSE))
        hg_rpc_respond_send(handle, NULL, NULL, NULL, ret);
    else
        handle->responded = true;
    HG_Destroy(handle);
}

static void
hg_respond_na_cb(const struct na_cb_info *info)
{
    hg_rpc_op_done(info->arg, hg_from_na(info->ret));
}

/* An origin that vanished never acknowledges its overflowed output: stop
 * waiting and release it. */
static void
hg_respond_expire(struct hg_timer *timer)
{
    struct hg_handle *handle =
        (struct hg_handle *) ((char *) timer -
                              offsetof(struct hg_handle, timer));

    qs_hot_lock(&handle->lock);
    hg_opgroup_fail(&handle->ops, HG_TIMEOUT);
    qs_hot_unlock(&handle->lock);
    NA_Cancel(handle->ctx->hg_class->core.na_class,
              handle->ctx->core.na_context, handle->ack_op);
}

/* Deliver a loopback response straight into the origin handle. */
static void
hg_respond_loopback(struct hg_handle *target, size_t msg_len, void *extra,
                    hg_size_t len)
{
    struct hg_handle *origin = target->lb_origin;
    bool deliver;

    qs_mutex_lock(&origin->lock);
    deliver = origin->loopback_pending;
    origin->loopback_pending = false;
    pthread_mutex_unlock(&origin->lock);
    if (deliver) {
        hg_header_decode(target->out_buf, msg_len, &origin->resp_header);
        memcpy(origin->out_buf, target->out_buf, msg_len);
        origin->out_size = msg_len;
        if (extra != NULL) {
            origin->out_extra = extra;
            origin->out_extra_size = len;
        }
        hg_rpc_op_done(origin, (hg_return_t) origin->resp_header.ret);
    } else {
        free(extra);
    }
}

/* The one lock section of a respond: claim the handle's only answer and
 * count the response send. */
static hg_return_t
hg_respond_claim(struct hg_handle *handle, hg_cb_t callback, void *arg)
{
    qs_hot_lock(&handle->lock);
    if (handle->responded) {
        qs_hot_unlock(&handle->lock);
        return HG_BUSY;
    }
    handle->responded = true;
    handle->callback = callback;
    handle->arg = arg;
    handle->active = true;
    hg_opgroup_arm(&handle->ops, 1);
    qs_hot_unlock(&handle->lock);
    return HG_SUCCESS;
}

/* Encode the output and write the response message around it. An output
 * that cannot be encoded or shipped is answered with its error instead,
 * rather than leave the origin waiting. */
static void
hg_respond_pack(struct hg_handle *handle, void *out_struct,
                hg_return_t ret_code, struct hg_header *header, size_t *msg_len,
                void **extra, hg_size_t *len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    bool loopback = handle->lb_origin != NULL;
    hg_return_t ret = HG_SUCCESS;

    *len = 0;
    *extra = NULL;
    if (ret_code == HG_SUCCESS && handle->rpc != NULL)
        ret = hg_rpc_encode(
            handle->out_proc, handle->rpc->out_proc, out_struct,
            (char *) handle->out_buf + HG_HEADER_SIZE + hg_class->out_offset,
            hg_class->out_eager_size - hg_class->out_offset, len, extra);
    if (ret != HG_SUCCESS) {
        ret_code = ret;
        *len = 0;
        *extra = NULL;
    }
    memset(header, 0, sizeof(*header));
    header->flags = HG_HEADER_RESPONSE;
    header->cookie = handle->req_header.cookie;
    header->rpc_id = handle->req_header.rpc_id;
    header->ret = (uint8_t) ret_code;
    handle->out_extra = *extra;
    ret = hg_rpc_pack(handle, header, handle->out_buf, hg_class->out_eager_size,
                      hg_class->out_offset, *len, *extra, loopback, msg_len);
    /* The target's own record of what it sent, for
     * HG_Get_output_payload_size(). */
    handle->resp_header.payload_size = ret == HG_SUCCESS ? *len : 0;
    if (ret != HG_SUCCESS) {
        header->flags = HG_HEADER_RESPONSE;
        header->ret = (uint8_t) ret;
        hg_rpc_pack(handle, header, handle->out_buf, hg_class->out_eager_size,
                    hg_class->out_offset, 0, NULL, loopback, msg_len);
    }
}

/* Keep an overflowed output exposed until the origin says it pulled it,
 * or until HG_RESPOND_ACK_TIMEOUT_MS have passed. */
static void
hg_respond_await_ack(struct hg_handle *handle, uint32_t cookie)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_return_t na_ret;

    /* Counted while the response send, not posted yet, holds the group. */
    qs_hot_lock(&handle->lock);
    hg_opgroup_add(&handle->ops, 1);
    qs_hot_unlock(&handle->lock);
    na_ret = NA_Msg_recv_expected(
        hg_class->core.na_class, handle->ctx->core.na_context, hg_respond_na_cb,
        handle, &handle->ack_byte, 1, NULL, handle->src_addr.na_addr,
        handle->target_id, cookie | hg_class->tag_ack_bit, handle->ack_op);
    if (na_ret != NA_SUCCESS)
        hg_rpc_op_done(handle, hg_from_na(na_ret));
    else
        hg_core_timer_arm(&handle->ctx->core, &handle->timer,
                          HG_RESPOND_ACK_TIMEOUT_MS, hg_respond_expire);
}

/* Post the response send, after the acknowledgement receive an overflowed
 * output needs. A failure is the respond's outcome, not the caller's. */
static void
hg_respond_post(struct hg_handle *handle, const struct hg_header *header,
                size_t msg_len)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;
    na_return_t na_ret;

    if (header->flags & HG_HEADER_OVERFLOW)
        hg_respond_await_ack(handle, header->cookie);
    na_ret = NA_Msg_send_expected(na_class, handle->ctx->core.na_context,
                                  hg_respond_na_cb, handle, handle->out_buf,
                                  msg_len, handle->out_buf_data,
                                  handle->src_addr.na_addr, handle->target_id,
                                  header->cookie, handle->send_op);
    if (na_ret != NA_SUCCESS) {
        qs_log("hg", QS_LOG_DEBUG,
               "HG_Respond: posting the response failed: %s",
               NA_Error_to_string(na_ret));
        if (header->flags & HG_HEADER_OVERFLOW)
            NA_Cancel(na_class, handle->ctx->core.na_context, handle->ack_op);
        hg_rpc_op_done(handle, hg_from_na(na_ret));
    }
}

hg_return_t
hg_rpc_respond_send(struct hg_handle *handle, hg_cb_t callback, void *arg,
                    void *out_struct, hg_return_t ret_code)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header header;
    hg_size_t len;
    size_t msg_len;
    void *extra;
    hg_return_t ret;

    ret = hg_respond_claim(handle, callback, arg);
    if (ret != HG_SUCCESS)
        return ret;
    hg_respond_pack(handle, out_struct, ret_code, &header, &msg_len, &extra,
                    &len);
    if (callback != NULL)
        HG_CHECK(hg_check_op_begin(hg_class, handle, HG_CHECK_RESPOND));
    hg_rpc_op_ref(handle); /* held until the respond completes */
    qs_atomic_fetch_add(&hg_class->stats.responses_sent, 1,
                        memory_order_relaxed);
    if (handle->lb_origin != NULL) {
        /* The origin takes the overflowed output; the target keeps none. */
        handle->out_extra = NULL;
        hg_respond_loopback(handle, msg_len, extra, len);
        hg_rpc_op_done(handle, HG_SUCCESS);
        return HG_SUCCESS;
    }
    hg_respond_post(handle, &header, msg_len);
    return HG_SUCCESS;
}

/* HG_Respond() and HG_Respond_error(): answer once, success or not. */
static hg_return_t
hg_rpc_respond(hg_handle_t handle, hg_cb_t callback, void *arg,
               void *out_struct, hg_return_t ret_code)
{
    if (handle == HG_HANDLE_NULL || !handle->is_target)
        return HG_INVALID_ARG;
    if (handle->req_header.flags & HG_HEADER_NO_RESPONSE)
        return HG_OPNOTSUPPORTED;
    return hg_rpc_respond_send(handle, callback, arg, out_struct, ret_code);
}

hg_return_t
HG_Respond(hg_handle_t handle, hg_cb_t callback, void *arg, void *out_struct)
{
    qs_bias_gate();
    return hg_rpc_respond(handle, callback, arg, out_struct, HG_SUCCESS);
}

hg_return_t
HG_Respond_error(hg_handle_t handle, hg_cb_t callback, void *arg,
                 hg_return_t ret)
{
    if (ret == HG_SUCCESS || (unsigned) ret >= HG_RETURN_MAX)
        return HG_INVALID_ARG;
    return hg_rpc_respond(handle, callback, arg, NULL, ret);
}
