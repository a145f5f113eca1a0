/*
 * Thin calls of Margo's API that forward to HG on the instance's class, and
 * request accessors.
 */
#include "margo_internal.h"

hg_return_t
margo_bulk_ref_incr(hg_bulk_t bulk)
{
    return HG_Bulk_ref_incr(bulk);
}

hg_return_t
margo_bulk_access(hg_bulk_t handle, hg_size_t offset, hg_size_t size,
                  hg_uint8_t flags, hg_uint32_t max_count, void **buf_ptrs,
                  hg_size_t *buf_sizes, hg_uint32_t *actual_count)
{
    return HG_Bulk_access(handle, offset, size, flags, max_count, buf_ptrs,
                          buf_sizes, actual_count);
}

hg_size_t
margo_bulk_get_size(hg_bulk_t bulk)
{
    return HG_Bulk_get_size(bulk);
}

hg_uint32_t
margo_bulk_get_segment_count(hg_bulk_t bulk)
{
    return HG_Bulk_get_segment_count(bulk);
}

hg_size_t
margo_bulk_get_serialize_size(hg_bulk_t bulk, unsigned long flags)
{
    return HG_Bulk_get_serialize_size(bulk, flags);
}

hg_return_t
margo_bulk_serialize(void *buf, hg_size_t buf_size, unsigned long flags,
                     hg_bulk_t handle)
{
    return HG_Bulk_serialize(buf, buf_size, flags, handle);
}

hg_return_t
margo_bulk_deserialize(margo_instance_id mid, hg_bulk_t *handle,
                       const void *buf, hg_size_t buf_size)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Bulk_deserialize(mid->hg_class, handle, buf, buf_size);
}

hg_return_t
margo_addr_set_remove(margo_instance_id mid, hg_addr_t addr)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Addr_set_remove(mid->hg_class, addr);
}

margo_instance_id
margo_hg_info_get_instance(const struct hg_info *info)
{
    return info ? margo_instance_of_class(info->hg_class) : MARGO_INSTANCE_NULL;
}

void *
margo_get_data(hg_handle_t h)
{
    return HG_Get_data(h);
}

hg_return_t
margo_set_data(hg_handle_t h, void *data, void (*free_callback)(void *))
{
    return HG_Set_data(h, data, free_callback);
}

ABT_pool
margo_hg_handle_get_handler_pool(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = HG_Get_info(h);
    ABT_pool pool = ABT_POOL_NULL;

    if (mid == MARGO_INSTANCE_NULL ||
        margo_rpc_get_pool(mid, info->id, &pool) != HG_SUCCESS)
        margo_get_handler_pool(mid, &pool);
    return pool;
}

hg_handle_t
margo_request_get_handle(margo_request req)
{
    return req ? req->handle : HG_HANDLE_NULL;
}

margo_instance_id
margo_request_get_instance(margo_request req)
{
    return req ? req->mid : MARGO_INSTANCE_NULL;
}

margo_request_type
margo_request_get_type(margo_request req)
{
    if (req == MARGO_REQUEST_NULL)
        return MARGO_INVALID_REQUEST;
    switch (req->kind) {
    case MARGO_REQ_FORWARD:
        return MARGO_FORWARD_REQUEST;
    case MARGO_REQ_RESPOND:
        return MARGO_RESPONSE_REQUEST;
    default:
        return MARGO_BULK_REQUEST;
    }
}

void
__margo_respond_with_error(hg_handle_t handle, hg_return_t ret)
{
    const struct hg_info *info = HG_Get_info(handle);
    hg_bool_t disabled = HG_FALSE;

    if (info == NULL || ret == HG_SUCCESS ||
        HG_Registered_disabled_response(info->hg_class, info->id, &disabled) !=
            HG_SUCCESS ||
        disabled)
        return;
    (void) HG_Respond_error(handle, NULL, NULL, ret);
}

int
margo_start_abt_profiling(margo_instance_id mid, bool detailed)
{
    (void) detailed;
    margo_log(mid, MARGO_LOG_ERROR,
              "margo_start_abt_profiling: not supported: Argobots profiling "
              "needs Argobots' tool interface, which this Argobots (abt.h on "
              "POSIX threads) does not have");
    return -1;
}

int
margo_stop_abt_profiling(margo_instance_id mid)
{
    margo_log(mid, MARGO_LOG_ERROR,
              "margo_stop_abt_profiling: not supported (no Argobots tool "
              "interface); profiling was never started");
    return -1;
}

int
margo_dump_abt_profiling(margo_instance_id mid, const char *file, int uniquify,
                         char **resolved_file_name)
{
    (void) file;
    (void) uniquify;
    if (resolved_file_name)
        *resolved_file_name = NULL;
    margo_log(mid, MARGO_LOG_ERROR,
              "margo_dump_abt_profiling: not supported (no Argobots tool "
              "interface): nothing to dump");
    return -1;
}
