/*
 * The RPC state machine: forward (origin), request receipt and respond
 * (target), overflow through bulk, loopback, cancel and deadlines.
 *
 * A forward or respond counts the operations it waits for in
 * handle->pending (NA sends and receives, overflow pulls, the loopback
 * reply). Each completion lowers it once; the one that reaches zero
 * finishes the operation, so the user callback is queued exactly once
 * whatever order completions, cancels and deadlines arrive in. The first
 * error recorded in handle->ret wins.
 */
#include "hg/hg_internal.h"

#include "util/qs_checksum.h"

#include <stdlib.h>
#include <string.h>

/* A hostile peer may announce any size; overflowed arguments beyond this
 * are refused rather than allocated. */
#define HG_OVERFLOW_MAX ((uint64_t) 1 << 32)

/* How long a target keeps overflowed output exposed for an origin that
 * does not acknowledge it (NA clock). */
#define HG_RESPOND_ACK_TIMEOUT_MS 60000

static void hg_rpc_finish(struct hg_handle *handle, bool silent, bool probing);

static void hg_rpc_cancel_ops(struct hg_handle *handle);

/* Record one finished sub-operation. The first failure cancels the
 * others: a request that could not be sent will get no response, so its
 * posted response receive must not wait for one. The last one finishes the
 * operation, reading what the finish needs in the same lock section. */
static void
hg_rpc_op_done(struct hg_handle *handle, hg_return_t ret)
{
    bool finished, first_error = false, silent = false, probing = false;

    qs_mutex_lock(&handle->lock);
    if (ret != HG_SUCCESS && handle->ret == HG_SUCCESS) {
        handle->ret = ret;
        first_error = true;
    }
    handle->pending--;
    finished = handle->pending == 0;
    if (finished) {
        /* A failed post already reported its error; nobody waits for a
         * callback. A respond without a callback has nobody to tell
         * either. */
        silent =
            handle->discard || (handle->is_target && handle->callback == NULL);
        if (silent)
            handle->active = false;
        probing = handle->probe.in_flight;
    }
    pthread_mutex_unlock(&handle->lock);
    if (finished)
        hg_rpc_finish(handle, silent, probing);
    else if (first_error)
        hg_rpc_cancel_ops(handle);
}

static void
hg_rpc_finish(struct hg_handle *handle, bool silent, bool probing)
{
    hg_timer_disarm(&handle->timer);
    hg_probe_stop(handle, probing);
    if (silent) {
        HG_Destroy(handle);
        return;
    }
    handle->comp.type = handle->is_target ? HG_COMP_RESPOND : HG_COMP_FORWARD;
    handle->comp.object = handle;
    hg_completion_add(handle->ctx, &handle->comp);
}

/* Runs from HG_Trigger(). */
void
hg_handle_trigger(struct hg_completion *comp)
{
    struct hg_handle *handle = comp->object;
    struct hg_cb_info info;
    hg_return_t ret;

    if (comp->type == HG_COMP_RPC) {
        const struct hg_rpc *rpc = handle->rpc;

        /* Hold a reference across the handler: it may destroy its
         * handle before returning. */
        HG_Ref_incr(handle);
        ret = rpc->rpc_cb ? rpc->rpc_cb(handle) : HG_NOENTRY;
        /* A handler that failed without answering: answer for it (an
         * answer it already gave makes this HG_BUSY, and nothing). */
        if (ret != HG_SUCCESS &&
            !(handle->req_header.flags & HG_HEADER_NO_RESPONSE))
            hg_rpc_respond_send(handle, NULL, NULL, NULL, ret);
        HG_Destroy(handle);
        return;
    }
    qs_mutex_lock(&handle->lock);
    handle->active = false;
    ret = handle->ret;
    pthread_mutex_unlock(&handle->lock);
    memset(&info, 0, sizeof(info));
    info.arg = handle->arg;
    info.ret = ret;
    if (comp->type == HG_COMP_FORWARD) {
        info.type = HG_CB_FORWARD;
        info.info.forward.handle = handle;
    } else {
        info.type = HG_CB_RESPOND;
        info.info.respond.handle = handle;
    }
    if (handle->callback != NULL)
        handle->callback(&info);
    /* The reference taken when the operation started. */
    HG_Destroy(handle);
}

/* Encoding with overflow into the proc's extra buffer. */
static hg_return_t
hg_rpc_encode(hg_proc_t proc, hg_proc_cb_t proc_cb, void *data, void *buf,
              hg_size_t avail, hg_size_t *len, void **extra)
{
    hg_return_t ret;

    *extra = NULL;
    *len = 0;
    if (proc_cb == NULL || data == NULL)
        return HG_SUCCESS;
    ret = hg_proc_reset(proc, buf, avail, HG_ENCODE);
    if (ret != HG_SUCCESS)
        return ret;
    ret = proc_cb(proc, data);
    if (ret != HG_SUCCESS)
        return ret;
    ret = hg_proc_flush(proc);
    if (ret != HG_SUCCESS)
        return ret;
    *len = hg_proc_get_size_used(proc);
    if (*len > avail) {
        *extra = hg_proc_get_extra_buf(proc);
        hg_proc_set_extra_buf_is_mine(proc, HG_TRUE);
    }
    return HG_SUCCESS;
}

/*
 * Fill the header's checksum fields and, when the encoded argument did not
 * fit, expose it through bulk and put the descriptor where the payload
 * would be. Returns the message length.
 */
static hg_return_t
hg_rpc_pack(struct hg_handle *handle, struct hg_header *header, void *msg,
            hg_size_t avail, hg_size_t len, void *extra, bool loopback,
            size_t *msg_len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    uint8_t *payload = (uint8_t *) msg + HG_HEADER_SIZE;
    hg_return_t ret;

    if (extra != NULL && hg_class->info.no_overflow) {
        qs_log("hg", QS_LOG_ERROR,
               "%s of %llu bytes does not fit in a message and "
               "hg_init_info.no_overflow is set",
               (header->flags & HG_HEADER_RESPONSE) ? "output" : "input",
               (unsigned long long) len);
        return HG_OVERFLOW;
    }
    header->payload_size = len;
    if (hg_class->info.checksum_level >= HG_CHECKSUM_RPC_HEADERS)
        header->flags |= HG_HEADER_CRC_HEADER;
    if (hg_class->info.checksum_level == HG_CHECKSUM_RPC_PAYLOAD) {
        header->flags |= HG_HEADER_CRC_PAYLOAD;
        header->payload_crc = qs_crc32c(0, extra ? extra : payload, len);
    }
    *msg_len = HG_HEADER_SIZE + (extra ? 0 : len);
    if (extra != NULL && !loopback) {
        hg_size_t desc_size;

        ret = hg_bulk_create_internal(hg_class, extra, len, HG_BULK_READ_ONLY,
                                      &handle->extra_bulk);
        if (ret != HG_SUCCESS)
            return ret;
        desc_size = HG_Bulk_get_serialize_size(handle->extra_bulk, HG_FALSE);
        if (desc_size + 4 > avail) {
            qs_log("hg", QS_LOG_ERROR,
                   "overflow descriptor (%llu bytes) does not fit",
                   (unsigned long long) desc_size);
            return HG_MSGSIZE;
        }
        payload[0] = (uint8_t) desc_size;
        payload[1] = (uint8_t) (desc_size >> 8);
        payload[2] = (uint8_t) (desc_size >> 16);
        payload[3] = (uint8_t) (desc_size >> 24);
        ret = HG_Bulk_serialize(payload + 4, desc_size, HG_FALSE,
                                handle->extra_bulk);
        if (ret != HG_SUCCESS)
            return ret;
        header->flags |= HG_HEADER_OVERFLOW;
        *msg_len = HG_HEADER_SIZE + 4 + desc_size;
        atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
    }
    hg_header_encode(msg, header);
    return HG_SUCCESS;
}

/*
 * A peer must carry the checksums this class was configured for: otherwise
 * a flipped flag bit could silently switch verification off.
 */
static hg_return_t
hg_rpc_check_crc_flags(const hg_class_t *hg_class,
                       const struct hg_header *header)
{
    hg_checksum_level_t level = hg_class->info.checksum_level;

    if (level >= HG_CHECKSUM_RPC_HEADERS &&
        !(header->flags & HG_HEADER_CRC_HEADER))
        return HG_CHECKSUM_ERROR;
    if (level == HG_CHECKSUM_RPC_PAYLOAD &&
        !(header->flags & HG_HEADER_CRC_PAYLOAD))
        return HG_CHECKSUM_ERROR;
    return HG_SUCCESS;
}

static hg_return_t
hg_rpc_check_crc(const struct hg_header *header, const void *payload,
                 hg_size_t len)
{
    if ((header->flags & HG_HEADER_CRC_PAYLOAD) &&
        qs_crc32c(0, payload, len) != header->payload_crc)
        return HG_CHECKSUM_ERROR;
    return HG_SUCCESS;
}

/* ---- Origin ---- */

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

    qs_mutex_lock(&handle->lock);
    handle->bulk_op = NULL;
    pthread_mutex_unlock(&handle->lock);
    if (ret == HG_SUCCESS)
        ret = hg_rpc_check_crc(&handle->resp_header, handle->out_extra,
                               handle->out_extra_size);
    {
        /* Tell the target it may release the exposed output, whether the
         * pull worked, failed or was cancelled: it waits for this. */
        qs_mutex_lock(&handle->lock);
        handle->pending++;
        pthread_mutex_unlock(&handle->lock);
        handle->ack_byte = 1;
        na_ret = NA_Msg_send_expected(
            hg_class->na_class, handle->ctx->na_context, hg_forward_na_cb,
            handle, &handle->ack_byte, 1, NULL, handle->info.addr->na_addr,
            handle->target_id,
            handle->resp_header.cookie | hg_class->tag_ack_bit, handle->ack_op);
        if (na_ret != NA_SUCCESS)
            hg_rpc_op_done(handle, hg_from_na(na_ret));
    }
    hg_rpc_op_done(handle, ret);
}

static void
hg_forward_recv_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    hg_class_t *hg_class = handle->ctx->hg_class;
    struct hg_header *header = &handle->resp_header;
    size_t size = info->info.recv_expected.actual_buf_size;
    const void *desc;
    size_t desc_len;
    hg_return_t ret;

    if (info->ret != NA_SUCCESS) {
        hg_rpc_op_done(handle, hg_from_na(info->ret));
        return;
    }
    handle->out_size = size;
    ret = hg_header_decode(handle->out_buf, size, header);
    if (ret == HG_SUCCESS && (!(header->flags & HG_HEADER_RESPONSE) ||
                              header->cookie != handle->req_header.cookie))
        ret = HG_PROTOCOL_ERROR;
    if (ret == HG_SUCCESS)
        ret = hg_rpc_check_crc_flags(hg_class, header);
    if (ret != HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        handle->out_size = 0;
        hg_rpc_op_done(handle, ret);
        return;
    }
    if (header->ret != HG_SUCCESS) {
        hg_rpc_op_done(handle, (hg_return_t) header->ret);
        return;
    }
    if (!(header->flags & HG_HEADER_OVERFLOW)) {
        if (header->payload_size != size - HG_HEADER_SIZE)
            ret = HG_PROTOCOL_ERROR;
        else
            ret = hg_rpc_check_crc(header,
                                   (char *) handle->out_buf + HG_HEADER_SIZE,
                                   header->payload_size);
        hg_rpc_op_done(handle, ret);
        return;
    }
    /* The output overflowed: pull it from the target. */
    ret = hg_header_overflow_desc((char *) handle->out_buf + HG_HEADER_SIZE,
                                  size - HG_HEADER_SIZE, &desc, &desc_len);
    if (ret == HG_SUCCESS && header->payload_size > HG_OVERFLOW_MAX)
        ret = HG_MSGSIZE;
    if (ret == HG_SUCCESS) {
        handle->out_extra =
            malloc(header->payload_size ? header->payload_size : 1);
        handle->out_extra_size = header->payload_size;
        if (handle->out_extra == NULL)
            ret = HG_NOMEM;
    }
    if (ret == HG_SUCCESS) {
        qs_mutex_lock(&handle->lock);
        handle->pending++;
        pthread_mutex_unlock(&handle->lock);
        atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
        ret = hg_bulk_pull_internal(
            handle->ctx, handle->info.addr, handle->target_id, desc, desc_len,
            handle->out_extra, header->payload_size, hg_forward_pull_cb, handle,
            &handle->bulk_op);
        /* On success the pull's own completion lowers pending again. */
        if (ret != HG_SUCCESS)
            hg_rpc_op_done(handle, ret);
    }
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
    if (NA_Addr_self(hg_class->na_class, &self) != NA_SUCCESS)
        return HG_NOMEM;
    target = hg_handle_get(target_ctx);
    if (target == NULL) {
        NA_Addr_free(hg_class->na_class, self);
        return HG_NOMEM;
    }
    target->is_target = true;
    target->src_addr.na_addr = self;
    target->info.addr = &target->src_addr;
    target->req_header = handle->req_header;
    target->info.id = handle->info.id;
    target->target_id = handle->ctx->id;
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
        handle->loopback_pending = true;
        handle->pending = 1;
    }
    if (target->rpc == NULL || target->rpc->rpc_cb == NULL) {
        hg_rpc_respond_error(target, HG_NOENTRY);
    } else {
        atomic_fetch_add(&hg_class->stats.requests_received, 1);
        target->comp.type = HG_COMP_RPC;
        target->comp.object = target;
        hg_completion_add(target_ctx, &target->comp);
    }
    if (handle->req_header.flags & HG_HEADER_NO_RESPONSE) {
        /* One-way: complete as soon as the request is "sent". */
        handle->pending = 1;
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

    qs_mutex_lock(&handle->lock);
    if (!handle->active || handle->pending == 0) {
        pthread_mutex_unlock(&handle->lock);
        return;
    }
    if (handle->ret == HG_SUCCESS)
        handle->ret = HG_TIMEOUT;
    pthread_mutex_unlock(&handle->lock);
    HG_Cancel(handle);
}

hg_return_t
HG_Forward_timed(hg_handle_t handle, hg_cb_t callback, void *arg,
                 void *in_struct, unsigned int timeout_ms)
{
    hg_class_t *hg_class;
    na_class_t *na_class;
    struct hg_header *header;
    hg_size_t len;
    size_t msg_len;
    void *extra;
    bool no_response, loopback;
    na_return_t na_ret;
    hg_return_t ret;

    if (handle == HG_HANDLE_NULL || handle->is_target)
        return HG_INVALID_ARG;
    hg_class = handle->ctx->hg_class;
    na_class = hg_class->na_class;
    if (handle->rpc == NULL || handle->rpc->id != handle->info.id)
        return HG_NOENTRY;
    no_response = handle->rpc->no_response;
    /* The one lock section of a forward: the operations it will wait for
     * (the request send, and the response unless one-way) count from
     * here; a loopback forward sets its own count. */
    qs_mutex_lock(&handle->lock);
    if (handle->active) {
        pthread_mutex_unlock(&handle->lock);
        return HG_BUSY;
    }
    handle->active = true;
    handle->ret = HG_SUCCESS;
    handle->discard = false;
    handle->loopback_pending = false;
    handle->pending = no_response ? 1 : 2;
    handle->probe.gen++; /* a probe of an earlier forward no longer counts */
    pthread_mutex_unlock(&handle->lock);
    free(handle->out_extra);
    handle->out_extra = NULL;
    handle->out_size = 0;
    if (handle->extra_bulk != HG_BULK_NULL) {
        HG_Bulk_free(handle->extra_bulk);
        handle->extra_bulk = HG_BULK_NULL;
    }
    free(handle->in_extra);
    handle->in_extra = NULL;

    loopback = !hg_class->info.no_loopback &&
               HG_Addr_is_self(hg_class, handle->info.addr);
    ret = hg_rpc_encode(handle->in_proc, handle->rpc->in_proc, in_struct,
                        (char *) handle->in_buf + HG_HEADER_SIZE,
                        hg_class->in_eager_size, &len, &extra);
    if (ret != HG_SUCCESS)
        goto error;
    handle->in_extra = extra; /* freed with the handle or next forward */
    header = &handle->req_header;
    memset(header, 0, sizeof(*header));
    handle->resp_header.payload_size = 0;
    header->flags = no_response ? HG_HEADER_NO_RESPONSE : 0;
    header->cookie = hg_class_next_tag(hg_class);
    header->rpc_id = handle->info.id;
    header->context_id = handle->ctx->id;
    ret = hg_rpc_pack(handle, header, handle->in_buf, hg_class->in_eager_size,
                      len, extra, loopback, &msg_len);
    if (ret != HG_SUCCESS)
        goto error;

    handle->callback = callback;
    handle->arg = arg;
    HG_Ref_incr(handle); /* held until the callback has run */
    atomic_fetch_add(&hg_class->stats.forwards_sent, 1);
    if (timeout_ms > 0)
        hg_timer_arm(handle->ctx, &handle->timer, timeout_ms,
                     hg_forward_expire);
    if (loopback) {
        ret = hg_forward_loopback(handle, msg_len, extra, len);
        if (ret != HG_SUCCESS) {
            hg_timer_disarm(&handle->timer);
            HG_Destroy(handle);
            goto error;
        }
        return HG_SUCCESS;
    }

    /* The response receive goes first so the response cannot outrun it. */
    if (!no_response) {
        na_ret = NA_Msg_recv_expected(
            na_class, handle->ctx->na_context, hg_forward_recv_cb, handle,
            handle->out_buf, hg_class->na_expected_size, handle->out_buf_data,
            handle->info.addr->na_addr, handle->target_id, header->cookie,
            handle->recv_op);
        if (na_ret != NA_SUCCESS) {
            ret = hg_from_na(na_ret);
            hg_timer_disarm(&handle->timer);
            HG_Destroy(handle);
            goto error;
        }
    }
    na_ret = NA_Msg_send_unexpected(
        na_class, handle->ctx->na_context, hg_forward_na_cb, handle,
        handle->in_buf, msg_len, handle->in_buf_data,
        handle->info.addr->na_addr, handle->target_id, header->cookie,
        handle->send_op);
    if (na_ret != NA_SUCCESS) {
        ret = hg_from_na(na_ret);
        qs_log("hg", QS_LOG_DEBUG, "HG_Forward: posting the request failed: %s",
               HG_Error_to_string(ret));
        if (no_response) {
            hg_timer_disarm(&handle->timer);
            HG_Destroy(handle);
            goto error;
        }
        /* The receive is posted: cancel it and let its completion clean
         * up silently, since the caller gets the error now. */
        qs_mutex_lock(&handle->lock);
        handle->discard = true;
        handle->pending--;
        pthread_mutex_unlock(&handle->lock);
        NA_Cancel(na_class, handle->ctx->na_context, handle->recv_op);
        return ret;
    }
    if (!no_response)
        hg_probe_start(handle); /* a dead target fails it (hg_liveness.c) */
    return HG_SUCCESS;

error:
    qs_mutex_lock(&handle->lock);
    handle->active = false;
    pthread_mutex_unlock(&handle->lock);
    return ret;
}

hg_return_t
HG_Forward(hg_handle_t handle, hg_cb_t callback, void *arg, void *in_struct)
{
    return HG_Forward_timed(handle, callback, arg, in_struct, 0);
}

hg_return_t
HG_Cancel(hg_handle_t handle)
{
    bool loopback;

    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    qs_mutex_lock(&handle->lock);
    if (!handle->active || handle->pending == 0) {
        pthread_mutex_unlock(&handle->lock);
        return HG_SUCCESS;
    }
    loopback = handle->loopback_pending;
    handle->loopback_pending = false;
    if (loopback && handle->ret == HG_SUCCESS)
        handle->ret = HG_CANCELED;
    pthread_mutex_unlock(&handle->lock);

    if (loopback) {
        /* Nothing is on the wire: the target's late reply is dropped. */
        hg_rpc_op_done(handle, HG_CANCELED);
        return HG_SUCCESS;
    }
    hg_rpc_cancel_ops(handle);
    return HG_SUCCESS;
}

/* Cancel whatever NA operations and overflow transfer are outstanding;
 * cancelling one that already completed is a no-op. Target handles keep
 * the request receive out of it: it completed before any respond. */
static void
hg_rpc_cancel_ops(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->na_class;
    na_context_t *na_context = handle->ctx->na_context;
    struct hg_bulk_xfer *bulk_op;

    qs_mutex_lock(&handle->lock);
    bulk_op = handle->bulk_op;
    pthread_mutex_unlock(&handle->lock);
    if (!handle->is_target)
        NA_Cancel(na_class, na_context, handle->recv_op);
    NA_Cancel(na_class, na_context, handle->send_op);
    NA_Cancel(na_class, na_context, handle->ack_op);
    if (bulk_op != NULL)
        hg_bulk_op_cancel(bulk_op);
}

/* ---- Target ---- */

static void hg_request_recv_cb(const struct na_cb_info *info);
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

    na_ret = NA_Msg_recv_unexpected(hg_class->na_class, context->na_context,
                                    hg_request_recv_cb, handle, handle->in_buf,
                                    hg_class->na_unexpected_size,
                                    handle->in_buf_data, handle->recv_op);
    if (na_ret != NA_SUCCESS) {
        qs_mutex_lock(&context->lock);
        LIST_REMOVE(handle, entry);
        context->n_posted--;
        pthread_mutex_unlock(&context->lock);
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
    hg_context_t *context = handle->ctx;
    hg_return_t ret;

    hg_handle_reset(handle);
    handle->is_target = true;
    ret = hg_handle_run_create_cb(handle);
    if (ret != HG_SUCCESS) {
        qs_log("hg", QS_LOG_ERROR,
               "the handle create callback failed (%s): request receive not "
               "posted",
               HG_Error_to_string(ret));
        qs_mutex_lock(&context->lock);
        LIST_REMOVE(handle, entry);
        context->n_posted--;
        pthread_mutex_unlock(&context->lock);
    }
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
        ret = hg_rpc_check_crc(&handle->req_header,
                               (char *) handle->in_buf + HG_HEADER_SIZE,
                               handle->in_size - HG_HEADER_SIZE);
    if (ret != HG_SUCCESS) {
        qs_log("hg", QS_LOG_DEBUG, "request for RPC %llu failed its checksum",
               (unsigned long long) handle->info.id);
        hg_rpc_respond_error(handle, ret);
        return;
    }
    atomic_fetch_add(&hg_class->stats.requests_received, 1);
    handle->comp.type = HG_COMP_RPC;
    handle->comp.object = handle;
    hg_completion_add(handle->ctx, &handle->comp);
}

static void
hg_request_pull_cb(void *arg, hg_return_t ret)
{
    struct hg_handle *handle = arg;

    qs_mutex_lock(&handle->lock);
    handle->bulk_op = NULL;
    pthread_mutex_unlock(&handle->lock);
    if (ret != HG_SUCCESS) {
        hg_rpc_respond_error(handle, ret);
        return;
    }
    hg_request_ready(handle);
}

static void
hg_request_recv_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    hg_context_t *context = handle->ctx;
    hg_class_t *hg_class = context->hg_class;
    struct hg_header *header = &handle->req_header;
    const void *desc;
    size_t desc_len, size;
    hg_return_t ret;
    struct hg_handle *next = NULL;
    bool repost;

    /* One lock section keeps the receive count steady: this handle leaves
     * the posted list and, when the pool has one, its replacement joins
     * it (a cancelled receive is not replaced). */
    qs_mutex_lock(&context->lock);
    LIST_REMOVE(handle, entry);
    context->n_posted--;
    repost = !context->destroying && info->ret != NA_CANCELED &&
             context->n_posted < context->n_posted_target;
    if (repost) {
        next = hg_handle_pool_take(context);
        if (next != NULL) {
            LIST_INSERT_HEAD(&context->posted, next, entry);
            context->n_posted++;
        }
    }
    pthread_mutex_unlock(&context->lock);
    if (next != NULL)
        hg_handle_repost(next);
    else if (repost)
        hg_context_post_recvs(context); /* the pool is empty: grow it */
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
        /* A liveness probe: its delivery was the answer. */
        hg_handle_put(handle);
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
    ret = hg_rpc_check_crc_flags(hg_class, header);
    if (ret != HG_SUCCESS) {
        qs_log("hg", QS_LOG_ERROR,
               "request without the configured checksums refused");
        hg_rpc_respond_error(handle, ret);
        return;
    }
    handle->rpc = hg_rpc_lookup(hg_class, header->rpc_id);
    if (handle->rpc == NULL || handle->rpc->rpc_cb == NULL) {
        hg_rpc_respond_error(handle, HG_NOENTRY);
        return;
    }
    if (!(header->flags & HG_HEADER_OVERFLOW)) {
        if (header->payload_size != size - HG_HEADER_SIZE) {
            atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
            hg_rpc_respond_error(handle, HG_PROTOCOL_ERROR);
            return;
        }
        hg_request_ready(handle);
        return;
    }
    /* The input overflowed: pull it from the origin first. */
    ret = hg_header_overflow_desc((char *) handle->in_buf + HG_HEADER_SIZE,
                                  size - HG_HEADER_SIZE, &desc, &desc_len);
    if (ret == HG_SUCCESS && header->payload_size > HG_OVERFLOW_MAX)
        ret = HG_MSGSIZE;
    if (ret == HG_SUCCESS) {
        handle->in_extra =
            malloc(header->payload_size ? header->payload_size : 1);
        handle->in_extra_size = header->payload_size;
        if (handle->in_extra == NULL)
            ret = HG_NOMEM;
    }
    if (ret == HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
        ret = hg_bulk_pull_internal(
            context, &handle->src_addr, header->context_id, desc, desc_len,
            handle->in_extra, header->payload_size, hg_request_pull_cb, handle,
            &handle->bulk_op);
    }
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

    qs_mutex_lock(&handle->lock);
    if (handle->ret == HG_SUCCESS)
        handle->ret = HG_TIMEOUT;
    pthread_mutex_unlock(&handle->lock);
    NA_Cancel(handle->ctx->hg_class->na_class, handle->ctx->na_context,
              handle->ack_op);
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

hg_return_t
hg_rpc_respond_send(struct hg_handle *handle, hg_cb_t callback, void *arg,
                    void *out_struct, hg_return_t ret_code)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_class_t *na_class = hg_class->na_class;
    struct hg_header header;
    hg_size_t len = 0;
    size_t msg_len;
    void *extra = NULL;
    na_return_t na_ret;
    hg_return_t ret = HG_SUCCESS;

    /* The one lock section of a respond: claim the handle's only answer
     * and count the response send. */
    qs_mutex_lock(&handle->lock);
    if (handle->responded) {
        pthread_mutex_unlock(&handle->lock);
        return HG_BUSY;
    }
    handle->responded = true;
    handle->callback = callback;
    handle->arg = arg;
    handle->ret = HG_SUCCESS;
    handle->active = true;
    handle->pending = 1;
    pthread_mutex_unlock(&handle->lock);

    if (ret_code == HG_SUCCESS && handle->rpc != NULL)
        ret = hg_rpc_encode(handle->out_proc, handle->rpc->out_proc, out_struct,
                            (char *) handle->out_buf + HG_HEADER_SIZE,
                            hg_class->out_eager_size, &len, &extra);
    if (ret != HG_SUCCESS) {
        /* Tell the origin its RPC failed rather than leave it waiting. */
        ret_code = ret;
        len = 0;
        extra = NULL;
    }
    memset(&header, 0, sizeof(header));
    header.flags = HG_HEADER_RESPONSE;
    header.cookie = handle->req_header.cookie;
    header.rpc_id = handle->req_header.rpc_id;
    header.ret = (uint8_t) ret_code;
    handle->out_extra = extra;
    ret =
        hg_rpc_pack(handle, &header, handle->out_buf, hg_class->out_eager_size,
                    len, extra, handle->lb_origin != NULL, &msg_len);
    /* The target's own record of what it sent, for
     * HG_Get_output_payload_size(). */
    handle->resp_header.payload_size = ret == HG_SUCCESS ? len : 0;
    if (ret != HG_SUCCESS) {
        /* The output cannot be shipped: send the error instead. */
        header.flags = HG_HEADER_RESPONSE;
        header.ret = (uint8_t) ret;
        hg_rpc_pack(handle, &header, handle->out_buf, hg_class->out_eager_size,
                    0, NULL, handle->lb_origin != NULL, &msg_len);
    }

    HG_Ref_incr(handle); /* held until the respond completes */
    atomic_fetch_add(&hg_class->stats.responses_sent, 1);

    if (handle->lb_origin != NULL) {
        /* The origin takes the overflowed output; the target keeps none. */
        handle->out_extra = NULL;
        hg_respond_loopback(handle, msg_len, extra, len);
        hg_rpc_op_done(handle, HG_SUCCESS);
        return HG_SUCCESS;
    }
    if (header.flags & HG_HEADER_OVERFLOW) {
        /* Keep the output exposed until the origin says it pulled it. */
        qs_mutex_lock(&handle->lock);
        handle->pending++;
        pthread_mutex_unlock(&handle->lock);
        na_ret = NA_Msg_recv_expected(
            na_class, handle->ctx->na_context, hg_respond_na_cb, handle,
            &handle->ack_byte, 1, NULL, handle->src_addr.na_addr,
            handle->target_id, header.cookie | hg_class->tag_ack_bit,
            handle->ack_op);
        if (na_ret != NA_SUCCESS)
            hg_rpc_op_done(handle, hg_from_na(na_ret));
        else
            hg_timer_arm(handle->ctx, &handle->timer, HG_RESPOND_ACK_TIMEOUT_MS,
                         hg_respond_expire);
    }
    na_ret =
        NA_Msg_send_expected(na_class, handle->ctx->na_context,
                             hg_respond_na_cb, handle, handle->out_buf, msg_len,
                             handle->out_buf_data, handle->src_addr.na_addr,
                             handle->target_id, header.cookie, handle->send_op);
    if (na_ret != NA_SUCCESS) {
        qs_log("hg", QS_LOG_DEBUG,
               "HG_Respond: posting the response failed: %s",
               NA_Error_to_string(na_ret));
        if (header.flags & HG_HEADER_OVERFLOW)
            NA_Cancel(na_class, handle->ctx->na_context, handle->ack_op);
        hg_rpc_op_done(handle, hg_from_na(na_ret));
    }
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
