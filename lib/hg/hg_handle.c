/*
 * HG handles: creation, reference counting, user data, and decoding of
 * arguments. The pool is in hg_target_pool.c; the forward / respond state
 * machine in hg_rpc.c, hg_origin.c and hg_target.c.
 */
#include "hg/hg_internal.h"

#include <stdlib.h>
#include <string.h>

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
    if (qs_atomic_fetch_sub(&handle->refcount, 1, memory_order_acq_rel) == 1)
        hg_handle_put(handle);
    return HG_SUCCESS;
}

hg_return_t
HG_Ref_incr(hg_handle_t handle)
{
    if (handle == HG_HANDLE_NULL)
        return HG_INVALID_ARG;
    qs_atomic_fetch_add(&handle->refcount, 1, memory_order_relaxed);
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

    qs_bias_gate();
    if (handle == HG_HANDLE_NULL || handle->is_target)
        return HG_INVALID_ARG;
    hg_class = handle->ctx->hg_class;
    if (id != 0) {
        rpc = hg_rpc_lookup(hg_class, id);
        if (rpc == NULL)
            return HG_NOENTRY;
    }
    qs_hot_lock(&handle->lock);
    if (handle->active) {
        qs_hot_unlock(&handle->lock);
        return HG_BUSY;
    }
    qs_hot_unlock(&handle->lock);
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
    ret = hg_buf_input_args(handle, &buf, &size);
    if (ret != HG_SUCCESS)
        return ret;
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
    if (hg_buf_output_args(handle, &buf, &size) != HG_SUCCESS)
        return HG_PROTOCOL_ERROR; /* no response was received */
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
