/*
 * HG handles: the pool, reference counting, user data, and decoding of
 * arguments. The forward / respond state machine is in hg_rpc.c.
 */
#include "hg/hg_internal.h"

#include <stdlib.h>
#include <string.h>

static struct hg_handle *
hg_handle_alloc(hg_context_t *context)
{
    hg_class_t *hg_class = context->hg_class;
    struct hg_handle *handle = calloc(1, sizeof(*handle));

    if (handle == NULL)
        return NULL;
    handle->ctx = context;
    handle->src_addr.hg_class = hg_class;
    handle->src_addr.embedded = true;
    pthread_mutex_init(&handle->lock, NULL);
    handle->in_buf =
        NA_Msg_buf_alloc(hg_class->na_class, hg_class->na_unexpected_size, 0,
                         &handle->in_buf_data);
    handle->out_buf =
        NA_Msg_buf_alloc(hg_class->na_class, hg_class->na_expected_size, 0,
                         &handle->out_buf_data);
    handle->send_op = NA_Op_create(hg_class->na_class, 0);
    handle->recv_op = NA_Op_create(hg_class->na_class, 0);
    handle->ack_op = NA_Op_create(hg_class->na_class, 0);
    if (handle->in_buf == NULL || handle->out_buf == NULL ||
        handle->send_op == NULL || handle->recv_op == NULL ||
        handle->ack_op == NULL ||
        hg_proc_create(hg_class, HG_NOHASH, &handle->in_proc) != HG_SUCCESS ||
        hg_proc_create(hg_class, HG_NOHASH, &handle->out_proc) != HG_SUCCESS) {
        hg_handle_free(handle);
        return NULL;
    }
    atomic_fetch_add(&hg_class->stats.handles_allocated, 1);
    return handle;
}

void
hg_handle_free(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->na_class;

    if (handle->in_proc != NULL)
        hg_proc_free(handle->in_proc);
    if (handle->out_proc != NULL)
        hg_proc_free(handle->out_proc);
    NA_Op_destroy(na_class, handle->send_op);
    NA_Op_destroy(na_class, handle->recv_op);
    NA_Op_destroy(na_class, handle->ack_op);
    hg_timer_unlink(handle->ctx, &handle->timer);
    hg_timer_unlink(handle->ctx, &handle->probe.timer);
    hg_probe_free(handle);
    NA_Msg_buf_free(na_class, handle->in_buf, handle->in_buf_data);
    NA_Msg_buf_free(na_class, handle->out_buf, handle->out_buf_data);
    pthread_mutex_destroy(&handle->lock);
    free(handle);
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
    handle->info.context_id = context->id;
    handle->src_addr.na_addr = NA_ADDR_NULL;
    atomic_store_explicit(&handle->src_addr.self_state, 0,
                          memory_order_relaxed);
    handle->rpc = NULL;
    atomic_init(&handle->refcount, 1);
    handle->is_target = false;
    handle->pending = 0;
    handle->ret = HG_SUCCESS;
    handle->active = false;
    handle->discard = false;
    handle->responded = false;
    handle->loopback_pending = false;
    handle->callback = NULL;
    handle->arg = NULL;
    hg_timer_disarm(&handle->timer);
    handle->bulk_op = NULL;
    handle->target_id = 0;
    handle->in_size = handle->out_size = 0;
    handle->req_header.payload_size = handle->resp_header.payload_size = 0;
    handle->lb_origin = NULL;
    handle->user_data = NULL;
    handle->free_user_data = NULL;
}

/* Take a handle from the context's pool, or allocate one. */
struct hg_handle *
hg_handle_get(hg_context_t *context)
{
    struct hg_handle *handle;

    qs_mutex_lock(&context->lock);
    handle = hg_handle_pool_take(context);
    pthread_mutex_unlock(&context->lock);
    if (handle == NULL) {
        handle = hg_handle_alloc(context);
        if (handle == NULL)
            return NULL;
        qs_mutex_lock(&context->lock);
        context->n_live_handles++;
        pthread_mutex_unlock(&context->lock);
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

    HG_CHECK(hg_check_obj_del(handle));
    if (handle->free_user_data != NULL)
        handle->free_user_data(handle->user_data);
    if (handle->is_target) {
        if (handle->src_addr.na_addr != NA_ADDR_NULL)
            NA_Addr_free(hg_class->na_class, handle->src_addr.na_addr);
        handle->src_addr.na_addr = NA_ADDR_NULL;
    } else if (handle->info.addr != HG_ADDR_NULL) {
        HG_Addr_free(hg_class, handle->info.addr);
    }
    handle->info.addr = HG_ADDR_NULL;
    free(handle->in_extra);
    handle->in_extra = NULL;
    free(handle->out_extra);
    handle->out_extra = NULL;
    if (handle->extra_bulk != HG_BULK_NULL)
        HG_Bulk_free(handle->extra_bulk);
    handle->extra_bulk = HG_BULK_NULL;
    if (handle->lb_origin != NULL)
        HG_Destroy(handle->lb_origin);
    handle->lb_origin = NULL;

    qs_mutex_lock(&context->lock);
    context->n_live_handles--;
    LIST_INSERT_HEAD(&context->pool, handle, entry);
    pthread_mutex_unlock(&context->lock);
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

hg_return_t
HG_Create(hg_context_t *context, hg_addr_t addr, hg_id_t id,
          hg_handle_t *handle_p)
{
    const struct hg_rpc *rpc;
    struct hg_handle *handle;
    hg_return_t ret;

    if (context == NULL || addr == HG_ADDR_NULL || handle_p == NULL)
        return HG_INVALID_ARG;
    rpc = hg_rpc_lookup(context->hg_class, id);
    if (rpc == NULL) {
        qs_log("hg", QS_LOG_ERROR, "HG_Create: RPC id %llu is not registered",
               (unsigned long long) id);
        return HG_NOENTRY;
    }
    handle = hg_handle_get(context);
    if (handle == NULL)
        return HG_NOMEM;
    ret = HG_Addr_dup(context->hg_class, addr, &handle->info.addr);
    if (ret != HG_SUCCESS) {
        handle->info.addr = HG_ADDR_NULL;
        hg_handle_put(handle);
        return ret;
    }
    handle->info.id = id;
    handle->rpc = rpc;
    ret = hg_handle_run_create_cb(handle);
    if (ret != HG_SUCCESS) {
        HG_Destroy(handle);
        return ret;
    }
    HG_CHECK(hg_check_obj_add(context->hg_class, handle, HG_CHECK_HANDLE));
    *handle_p = handle;
    return HG_SUCCESS;
}

hg_return_t
hg_handle_run_create_cb(struct hg_handle *handle)
{
    hg_class_t *hg_class = handle->ctx->hg_class;

    if (hg_class->handle_create_cb == NULL)
        return HG_SUCCESS;
    return hg_class->handle_create_cb(handle, hg_class->handle_create_arg);
}

hg_size_t
HG_Get_input_payload_size(hg_handle_t handle)
{
    return handle ? handle->req_header.payload_size : 0;
}

hg_size_t
HG_Get_output_payload_size(hg_handle_t handle)
{
    return handle ? handle->resp_header.payload_size : 0;
}

hg_return_t
HG_Destroy(hg_handle_t handle)
{
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    if (atomic_fetch_sub(&handle->refcount, 1) == 1)
        hg_handle_put(handle);
    return HG_SUCCESS;
}

hg_return_t
HG_Ref_incr(hg_handle_t handle)
{
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    atomic_fetch_add(&handle->refcount, 1);
    return HG_SUCCESS;
}

hg_uint32_t
HG_Ref_get(hg_handle_t handle)
{
    return handle ? atomic_load(&handle->refcount) : 0;
}

hg_return_t
HG_Reset(hg_handle_t handle, hg_addr_t addr, hg_id_t id)
{
    hg_class_t *hg_class;
    const struct hg_rpc *rpc = NULL;
    hg_addr_t new_addr = HG_ADDR_NULL;
    hg_return_t ret;

    if (handle == HG_HANDLE_NULL || handle->is_target)
        return HG_INVALID_ARG;
    hg_class = handle->ctx->hg_class;
    if (id != 0) {
        rpc = hg_rpc_lookup(hg_class, id);
        if (rpc == NULL)
            return HG_NOENTRY;
    }
    qs_mutex_lock(&handle->lock);
    if (handle->active) {
        pthread_mutex_unlock(&handle->lock);
        return HG_BUSY;
    }
    pthread_mutex_unlock(&handle->lock);
    if (addr != HG_ADDR_NULL) {
        ret = HG_Addr_dup(hg_class, addr, &new_addr);
        if (ret != HG_SUCCESS)
            return ret;
        HG_Addr_free(hg_class, handle->info.addr);
        handle->info.addr = new_addr;
    }
    if (rpc != NULL) {
        handle->info.id = id;
        handle->rpc = rpc;
    }
    free(handle->out_extra);
    handle->out_extra = NULL;
    if (handle->extra_bulk != HG_BULK_NULL)
        HG_Bulk_free(handle->extra_bulk);
    handle->extra_bulk = HG_BULK_NULL;
    free(handle->in_extra);
    handle->in_extra = NULL;
    return HG_SUCCESS;
}

const struct hg_info *
HG_Get_info(hg_handle_t handle)
{
    return handle ? &handle->info : NULL;
}

hg_return_t
HG_Set_data(hg_handle_t handle, void *data, void (*free_callback)(void *))
{
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    if (handle->free_user_data != NULL && handle->user_data != data)
        handle->free_user_data(handle->user_data);
    handle->user_data = data;
    handle->free_user_data = free_callback;
    return HG_SUCCESS;
}

void *
HG_Get_data(hg_handle_t handle)
{
    return handle ? handle->user_data : NULL;
}

hg_return_t
HG_Set_target_id(hg_handle_t handle, hg_uint8_t id)
{
    if (handle == HG_HANDLE_NULL || handle->is_target)
        return HG_INVALID_ARG;
    handle->target_id = id;
    return HG_SUCCESS;
}

/* Decode or free with a registered proc over the given bytes. */
static hg_return_t
hg_proc_run(hg_proc_t proc, hg_proc_cb_t proc_cb, hg_proc_op_t op, void *buf,
            hg_size_t size, void *data)
{
    hg_return_t ret;

    if (proc_cb == NULL || data == NULL)
        return HG_SUCCESS;
    ret = hg_proc_reset(proc, buf, size, op);
    if (ret != HG_SUCCESS)
        return ret;
    ret = proc_cb(proc, data);
    if (ret != HG_SUCCESS && op == HG_DECODE)
        qs_log("hg", QS_LOG_ERROR, "decoding RPC arguments failed: %s",
               HG_Error_to_string(ret));
    return ret;
}

hg_return_t
HG_Get_input(hg_handle_t handle, void *in_struct)
{
    hg_return_t ret;
    void *buf;
    hg_size_t size;

    if (handle == HG_HANDLE_NULL || in_struct == NULL || !handle->is_target)
        return HG_INVALID_ARG;
    if (handle->rpc == NULL)
        return HG_NOENTRY;
    if (handle->in_extra != NULL) {
        buf = handle->in_extra;
        size = handle->in_extra_size;
    } else {
        buf = (char *) handle->in_buf + HG_HEADER_SIZE;
        size = handle->in_size - HG_HEADER_SIZE;
    }
    ret = hg_proc_run(handle->in_proc, handle->rpc->in_proc, HG_DECODE, buf,
                      size, in_struct);
    if (ret == HG_SUCCESS && handle->ctx->hg_class->info.release_input_early &&
        handle->in_extra != NULL) {
        free(handle->in_extra);
        handle->in_extra = NULL;
        handle->in_extra_size = 0;
    }
    return ret;
}

hg_return_t
HG_Free_input(hg_handle_t handle, void *in_struct)
{
    if (handle == HG_HANDLE_NULL || in_struct == NULL || !handle->is_target)
        return HG_INVALID_ARG;
    if (handle->rpc == NULL)
        return HG_NOENTRY;
    return hg_proc_run(handle->in_proc, handle->rpc->in_proc, HG_FREE, NULL, 0,
                       in_struct);
}

hg_return_t
HG_Get_output(hg_handle_t handle, void *out_struct)
{
    void *buf;
    hg_size_t size;

    if (handle == HG_HANDLE_NULL || out_struct == NULL || handle->is_target)
        return HG_INVALID_ARG;
    if (handle->rpc == NULL)
        return HG_NOENTRY;
    if (handle->out_size < HG_HEADER_SIZE && handle->out_extra == NULL)
        return HG_PROTOCOL_ERROR; /* no response was received */
    if (handle->out_extra != NULL) {
        buf = handle->out_extra;
        size = handle->out_extra_size;
    } else {
        buf = (char *) handle->out_buf + HG_HEADER_SIZE;
        size = handle->out_size - HG_HEADER_SIZE;
    }
    return hg_proc_run(handle->out_proc, handle->rpc->out_proc, HG_DECODE, buf,
                       size, out_struct);
}

hg_return_t
HG_Free_output(hg_handle_t handle, void *out_struct)
{
    if (handle == HG_HANDLE_NULL || out_struct == NULL || handle->is_target)
        return HG_INVALID_ARG;
    if (handle->rpc == NULL)
        return HG_NOENTRY;
    return hg_proc_run(handle->out_proc, handle->rpc->out_proc, HG_FREE, NULL,
                       0, out_struct);
}
