/*
 * The target side's handles: the context's pool of idle handles (each with
 * its message buffers and NA operations, allocated once), its growth by
 * request_post_incr, and keeping request_post_init request receives
 * posted. Origins take their handles from the same pool (HG_Create()).
 * Guarded by the context lock (struct hg_context).
 */
#include "hg/hg_internal.h"
#include "na/na_hint.h"
#include "util/qs_alloc.h"

#include <stdlib.h>
#include <string.h>

static struct hg_handle *
hg_handle_alloc(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;
    /* On a line boundary: the layout of struct hg_handle counts lines. */
    _Static_assert(_Alignof(struct hg_handle) <= QS_LINE,
                   "qs_calloc_lines() aligns a handle");
    struct hg_handle *handle = qs_calloc_lines(sizeof(*handle));

    if (handle == NULL)
        return NULL;
    handle->ctx = context;
    handle->src_addr.hg_class = hg_class;
    handle->src_addr.embedded = true;
    pthread_mutex_init(&handle->lock, NULL);
    handle->in_buf =
        NA_Msg_buf_alloc(hg_class->core.na_class, hg_class->na_unexpected_size,
                         0, &handle->in_buf_data);
    handle->out_buf =
        NA_Msg_buf_alloc(hg_class->core.na_class, hg_class->na_expected_size, 0,
                         &handle->out_buf_data);
    handle->send_op = NA_Op_create(hg_class->core.na_class, 0);
    handle->recv_op = NA_Op_create(hg_class->core.na_class, 0);
    handle->ack_op = NA_Op_create(hg_class->core.na_class, 0);
    if (handle->in_buf == NULL || handle->out_buf == NULL ||
        handle->send_op == NULL || handle->recv_op == NULL ||
        handle->ack_op == NULL ||
        hg_proc_create(hg_class, HG_NOHASH, &handle->in_proc) != HG_SUCCESS ||
        hg_proc_create(hg_class, HG_NOHASH, &handle->out_proc) != HG_SUCCESS) {
        hg_handle_free(handle);
        return NULL;
    }
    hg_proc_set_handle(handle->in_proc, handle);
    hg_proc_set_handle(handle->out_proc, handle);
    /* Each completion of the handle's operations reads one of its procs
     * soon after the handle itself (a respond's or a forward's end
     * releases its pins, a request is decoded from in_proc). */
    na_op_set_hints(handle->send_op, handle->in_proc, handle->out_proc);
    na_op_set_hints(handle->recv_op, handle->in_proc, handle->out_proc);
    na_op_set_hints(handle->ack_op, handle->in_proc, handle->out_proc);
    atomic_fetch_add(&hg_class->stats.handles_allocated, 1);
    return handle;
}

void
hg_handle_free(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;

    if (handle->in_proc != NULL)
        hg_proc_free(handle->in_proc);
    if (handle->out_proc != NULL)
        hg_proc_free(handle->out_proc);
    NA_Op_destroy(na_class, handle->send_op);
    NA_Op_destroy(na_class, handle->recv_op);
    NA_Op_destroy(na_class, handle->ack_op);
    hg_core_timer_unlink(&handle->ctx->core, &handle->timer);
    hg_core_timer_unlink(&handle->ctx->core, &handle->probe.timer);
    hg_probe_free(handle);
    NA_Msg_buf_free(na_class, handle->in_buf, handle->in_buf_data);
    NA_Msg_buf_free(na_class, handle->out_buf, handle->out_buf_data);
    pthread_mutex_destroy(&handle->lock);
    qs_free_lines(handle, sizeof(*handle));
}

/* Under the context lock: a pooled handle, counted live, or NULL. */
struct hg_handle *
hg_handle_pool_take(hg_context_t *context)
{
    struct hg_handle *handle = LIST_FIRST(&context->pool);

    if (handle != NULL) {
        LIST_REMOVE(handle, entry);
        context->n_live_handles++;
    }
    return handle;
}

/* Ready a handle taken from the pool for a new RPC (no lock: nobody else
 * can see it yet). */
void
hg_handle_reset(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;

    memset(&handle->info, 0, sizeof(handle->info));
    handle->info.hg_class = context->hg_class;
    handle->info.context = context;
    handle->info.context_id = context->core.id;
    handle->src_addr.na_addr = NA_ADDR_NULL;
    atomic_store_explicit(&handle->src_addr.self_state, 0,
                          memory_order_relaxed);
    handle->rpc = NULL;
    atomic_init(&handle->refcount, 1);
    handle->is_target = false;
    hg_opgroup_init(&handle->ops);
    handle->active = false;
    handle->discard = false;
    handle->responded = false;
    handle->loopback_pending = false;
    handle->callback = NULL;
    handle->arg = NULL;
    hg_core_timer_disarm(&handle->timer);
    handle->bulk_op = NULL;
    handle->target_id = 0;
    handle->in_size = handle->out_size = 0;
    handle->req_header.payload_size = handle->resp_header.payload_size = 0;
    handle->lb_origin = NULL;
    handle->user_data = NULL;
    handle->free_user_data = NULL;
}

/* Let go of an RPC's overflow: the bulk handle that exposed it, then the
 * buffers. Overflow is rare: no call into free() for none. */
void
hg_handle_drop_extras(struct hg_handle *handle)
{
    if (handle->extra_bulk != HG_BULK_NULL) {
        HG_Bulk_free(handle->extra_bulk);
        handle->extra_bulk = HG_BULK_NULL;
    }
    if (handle->in_extra != NULL) {
        free(handle->in_extra);
        handle->in_extra = NULL;
    }
    if (handle->out_extra != NULL) {
        free(handle->out_extra);
        handle->out_extra = NULL;
    }
}

/* Take a handle from the context's pool, or allocate one. */
struct hg_handle *
hg_handle_get(hg_context_t *context)
{
    struct hg_handle *handle;

    /* The hot-lock wrappers, as in hg_handle_put(): a process with one
     * thread skips the mutex. */
    qs_hot_lock(&context->lock);
    handle = hg_handle_pool_take(context);
    qs_hot_unlock(&context->lock);
    if (handle == NULL) {
        handle = hg_handle_alloc(context);
        if (handle == NULL)
            return NULL;
        qs_hot_lock(&context->lock);
        context->n_live_handles++;
        qs_hot_unlock(&context->lock);
    }
    hg_handle_reset(handle);
    return handle;
}

/* Release what one RPC held, then return the handle to the pool. */
void
hg_handle_put(struct hg_handle *handle)
{
    hg_context_t *context = handle->ctx;
    hg_class_t *hg_class = context->hg_class;

    /* The program's free-data callback never runs on the watchdog. */
    if (hg_watchdog_defer_put(handle))
        return;
    HG_CHECK(hg_check_obj_del(handle));
    if (handle->free_user_data != NULL)
        handle->free_user_data(handle->user_data);
    if (handle->is_target) {
        if (handle->src_addr.na_addr != NA_ADDR_NULL)
            NA_Addr_free(hg_class->core.na_class, handle->src_addr.na_addr);
        handle->src_addr.na_addr = NA_ADDR_NULL;
    } else if (handle->info.addr != HG_ADDR_NULL) {
        HG_Addr_free(hg_class, handle->info.addr);
    }
    handle->info.addr = HG_ADDR_NULL;
    hg_handle_drop_extras(handle);
    if (handle->lb_origin != NULL)
        HG_Destroy(handle->lb_origin);
    handle->lb_origin = NULL;

    qs_hot_lock(&context->lock);
    context->n_live_handles--;
    LIST_INSERT_HEAD(&context->pool, handle, entry);
    qs_hot_unlock(&context->lock);
}

/*
 * When the pool of idle handles is empty, allocate request_post_incr of them
 * at once and add them to the pool in one lock section, so a burst of
 * requests pays for allocation in a few large steps rather than once per
 * request. Another thread may refill the pool meanwhile; the extra handles
 * are still useful, so they are kept.
 */
hg_return_t
hg_context_pool_grow(hg_context_t *context)
{
    unsigned int incr = context->hg_class->info.request_post_incr;
    struct hg_handle *batch[64];
    unsigned int done = 0;
    bool empty;

    qs_mutex_lock(&context->lock);
    empty = LIST_EMPTY(&context->pool);
    pthread_mutex_unlock(&context->lock);
    if (!empty)
        return HG_SUCCESS;
    if (incr == 0)
        incr = 1;
    while (done < incr) {
        unsigned int n = 0;
        bool failed = false;

        while (n < sizeof(batch) / sizeof(batch[0]) && done + n < incr) {
            batch[n] = hg_handle_alloc(context);
            if (batch[n] == NULL) {
                failed = true;
                break;
            }
            n++;
        }
        qs_mutex_lock(&context->lock);
        for (unsigned int i = 0; i < n; i++)
            LIST_INSERT_HEAD(&context->pool, batch[i], entry);
        pthread_mutex_unlock(&context->lock);
        done += n;
        if (failed)
            break;
    }
    return done > 0 ? HG_SUCCESS : HG_NOMEM;
}

/* Keep n_posted_target request receives posted. */
hg_return_t
hg_context_post_recvs(hg_context_t *context)
{
    for (;;) {
        struct hg_handle *handle;
        hg_return_t ret;

        qs_mutex_lock(&context->lock);
        bool need = !context->destroying &&
                    context->n_posted < context->n_posted_target;
        pthread_mutex_unlock(&context->lock);
        if (!need)
            return HG_SUCCESS;
        if (hg_context_pool_grow(context) != HG_SUCCESS)
            return HG_NOMEM;
        handle = hg_handle_get(context);
        if (handle == NULL)
            return HG_NOMEM;
        ret = hg_handle_target_create_cb(handle);
        if (ret != HG_SUCCESS) {
            hg_handle_put(handle);
            return ret;
        }
        ret = hg_handle_post_recv(handle);
        if (ret != HG_SUCCESS) {
            hg_handle_put(handle);
            return ret;
        }
    }
}

/* The class's handle create callback for a handle about to post a request
 * receive; a failure is logged here, once. */
hg_return_t
hg_handle_target_create_cb(struct hg_handle *handle)
{
    hg_return_t ret = hg_handle_run_create_cb(handle);

    if (ret != HG_SUCCESS)
        qs_log("hg", QS_LOG_ERROR,
               "the handle create callback failed (%s): request receive not "
               "posted",
               HG_Error_to_string(ret));
    return ret;
}
