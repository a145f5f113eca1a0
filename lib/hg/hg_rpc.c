/*
 * The RPC operation state machine shared by both roles (hg_rpc.h): the
 * count of pending sub-operations, finishing exactly once, the completion
 * run functions, and cancel. The roles are in hg_origin.c (forward) and
 * hg_target.c (request receipt and respond), the wire format in
 * hg_codec.c.
 *
 * A forward or respond counts the operations it waits for in its group,
 * handle->ops (lib/core/hg_opgroup.h), under handle->lock: NA sends and
 * receives, overflow pulls and their acknowledgement, the loopback reply.
 * It arms the group with the operations it posts before posting any; one
 * that starts a follow-up from its completion (the response receive's
 * pull, the pull's acknowledgement) adds it before it ends itself. The end
 * that empties the group finishes the operation, so the user callback is
 * queued exactly once whatever order completions, cancels and deadlines
 * arrive in. The first error recorded in the group wins.
 */
#include "hg/hg_rpc.h"
#include "proc/hg_proc_pin.h"

#include <string.h>

static void hg_rpc_finish(struct hg_handle *handle, bool silent, bool probing);

/* Record one finished sub-operation. The first failure cancels the
 * others: a request that could not be sent will get no response, so its
 * posted response receive must not wait for one. The last one finishes the
 * operation, reading what the finish needs in the same lock section. */
void
hg_rpc_op_done(struct hg_handle *handle, hg_return_t ret)
{
    enum hg_opgroup_step step;
    bool silent = false, probing = false;

    qs_hot_lock(&handle->lock);
    step = hg_opgroup_end(&handle->ops, ret);
    if (step == HG_OPGROUP_DONE) {
        /* A failed post already reported its error; nobody waits for a
         * callback. A respond without a callback has nobody to tell
         * either. */
        silent =
            handle->discard || (handle->is_target && handle->callback == NULL);
        if (silent)
            handle->active = false;
        /* Only an origin probes its target: a target handle's probe
         * fields, a line of their own, stay untouched. */
        probing = !handle->is_target && hg_probe_busy(&handle->probe);
    }
    qs_hot_unlock(&handle->lock);
    if (step == HG_OPGROUP_DONE)
        hg_rpc_finish(handle, silent, probing);
    else if (step == HG_OPGROUP_FIRST_ERROR)
        hg_rpc_cancel_ops(handle);
}

static void
hg_rpc_finish(struct hg_handle *handle, bool silent, bool probing)
{
    hg_core_timer_disarm(&handle->timer);
    if (!handle->is_target)
        hg_probe_stop(handle, probing);
    /* The peer is done with the bulk handles the arguments named. */
    hg_proc_unpin_all(handle->is_target ? handle->out_proc : handle->in_proc);
    if (silent) {
        HG_CHECK(hg_check_op_end(handle));
        hg_rpc_op_unref(handle);
        return;
    }
    handle->comp.run = hg_rpc_complete;
    handle->comp.object = handle;
    hg_core_complete(&handle->ctx->core, &handle->comp);
}

/* A request is ready: run its handler (from HG_Trigger()). */
void
hg_request_run(struct hg_completion *comp)
{
    struct hg_handle *handle = comp->object;
    const struct hg_rpc *rpc = handle->rpc;
    hg_return_t ret;

    /* Hold a reference across the handler: it may destroy its handle
     * before returning. */
    HG_Ref_incr(handle);
    HG_CHECK(hg_check_target(handle));
    ret = rpc->rpc_cb ? rpc->rpc_cb(handle) : HG_NOENTRY;
    /* A handler that failed without answering: answer for it (an answer
     * it already gave makes this HG_BUSY, and nothing). */
    if (ret != HG_SUCCESS &&
        !(handle->req_header.flags & HG_HEADER_NO_RESPONSE))
        hg_rpc_respond_send(handle, NULL, NULL, NULL, ret);
    HG_Destroy(handle);
}

/* A forward or a respond finished: run the user's callback (from
 * HG_Trigger()). */
void
hg_rpc_complete(struct hg_completion *comp)
{
    struct hg_handle *handle = comp->object;
    struct hg_cb_info info;
    hg_return_t ret;

    qs_hot_lock(&handle->lock);
    handle->active = false;
    ret = hg_opgroup_result(&handle->ops);
    qs_hot_unlock(&handle->lock);
    memset(&info, 0, sizeof(info));
    info.arg = handle->arg;
    info.ret = ret;
    if (!handle->is_target) {
        info.type = HG_CB_FORWARD;
        info.info.forward.handle = handle;
    } else {
        info.type = HG_CB_RESPOND;
        info.info.respond.handle = handle;
    }
    if (handle->callback != NULL)
        handle->callback(&info);
    /* The reference taken when the operation started. */
    hg_rpc_op_unref(handle);
}

hg_return_t
HG_Cancel(hg_handle_t handle)
{
    bool loopback;

    qs_bias_gate();
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    qs_hot_lock(&handle->lock);
    if (!handle->active || !hg_opgroup_busy(&handle->ops)) {
        qs_hot_unlock(&handle->lock);
        return HG_SUCCESS;
    }
    loopback = handle->loopback_pending;
    handle->loopback_pending = false;
    if (loopback)
        hg_opgroup_fail(&handle->ops, HG_CANCELED);
    qs_hot_unlock(&handle->lock);

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
 * the request receive out of it: it completed before any respond. An
 * origin keeps its acknowledgement of an overflowed output out of it too:
 * the target holds that output until the acknowledgement comes, and the
 * origin sends it after the pull whatever the pull's outcome (a failed
 * pull is the first error, which cancels the rest); the send ends by
 * itself. A target's ack_op is the receive for it. */
void
hg_rpc_cancel_ops(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;
    na_context_t *na_context = handle->ctx->core.na_context;
    struct hg_bulk_xfer *bulk_op;

    qs_hot_lock(&handle->lock);
    bulk_op = handle->bulk_op;
    qs_hot_unlock(&handle->lock);
    if (!handle->is_target)
        NA_Cancel(na_class, na_context, handle->recv_op);
    NA_Cancel(na_class, na_context, handle->send_op);
    if (handle->is_target)
        NA_Cancel(na_class, na_context, handle->ack_op);
    if (bulk_op != NULL)
        hg_bulk_op_cancel(bulk_op);
}
