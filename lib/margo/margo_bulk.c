/*
 * Bulk handles and blocking transfers over an instance's class and context.
 */
#include "margo_internal.h"

#include <stdlib.h>

hg_return_t
margo_bulk_create(margo_instance_id mid, hg_uint32_t count, void **buf_ptrs,
                  const hg_size_t *buf_sizes, hg_uint8_t flags,
                  hg_bulk_t *handle)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Bulk_create(mid->hg_class, count, buf_ptrs, buf_sizes, flags,
                          handle);
}

hg_return_t
margo_bulk_free(hg_bulk_t handle)
{
    return HG_Bulk_free(handle);
}

hg_return_t
margo_bulk_start(margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
                 hg_bulk_t origin_handle, size_t origin_offset,
                 hg_bulk_t local_handle, size_t local_offset, size_t size,
                 double timeout_ms, const struct margo_req_cb *cb,
                 struct margo_request_s *storage, struct margo_request_s **reqp)
{
    struct margo_request_s *req;
    unsigned int ms = margo_timeout_ms(timeout_ms);
    hg_op_id_t op_id = HG_OP_ID_NULL;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    req = margo_req_new(mid, MARGO_REQ_BULK, HG_HANDLE_NULL, storage);
    if (req == NULL)
        return HG_NOMEM;
    if (cb) {
        req->on_complete = cb->fn;
        req->uargs = cb->uargs;
    }
    ret = margo_req_track(req);
    if (ret == HG_SUCCESS) {
        ret =
            ms ? HG_Bulk_transfer_timed(mid->hg_context, margo_req_complete_cb,
                                        req, op, origin_addr, origin_handle,
                                        origin_offset, local_handle,
                                        local_offset, size, ms, &op_id)
               : HG_Bulk_transfer(mid->hg_context, margo_req_complete_cb, req,
                                  op, origin_addr, origin_handle, origin_offset,
                                  local_handle, local_offset, size, &op_id);
        /* The op id is only needed to cancel at finalize, which reads it
         * under the lock once the request is marked posted. */
        pthread_mutex_lock(&margo_lock);
        req->op_id = op_id;
        pthread_mutex_unlock(&margo_lock);
        margo_req_posted(req, ret);
    }
    return margo_req_handoff(req, storage, ret, reqp);
}

hg_return_t
margo_bulk_transfer_timed(margo_instance_id mid, hg_bulk_op_t op,
                          hg_addr_t origin_addr, hg_bulk_t origin_handle,
                          size_t origin_offset, hg_bulk_t local_handle,
                          size_t local_offset, size_t size, double timeout_ms)
{
    struct margo_request_s storage, *req;
    hg_return_t ret;

    ret = margo_bulk_start(mid, op, origin_addr, origin_handle, origin_offset,
                           local_handle, local_offset, size, timeout_ms, NULL,
                           &storage, &req);
    if (ret != HG_SUCCESS)
        return ret;
    return margo_req_wait(req);
}

hg_return_t
margo_bulk_transfer(margo_instance_id mid, hg_bulk_op_t op,
                    hg_addr_t origin_addr, hg_bulk_t origin_handle,
                    size_t origin_offset, hg_bulk_t local_handle,
                    size_t local_offset, size_t size)
{
    return margo_bulk_transfer_timed(mid, op, origin_addr, origin_handle,
                                     origin_offset, local_handle, local_offset,
                                     size, 0);
}

hg_return_t
margo_bulk_itransfer_timed(margo_instance_id mid, hg_bulk_op_t op,
                           hg_addr_t origin_addr, hg_bulk_t origin_handle,
                           size_t origin_offset, hg_bulk_t local_handle,
                           size_t local_offset, size_t size, double timeout_ms,
                           margo_request *req)
{
    if (req == NULL)
        return HG_INVALID_ARG;
    return margo_bulk_start(mid, op, origin_addr, origin_handle, origin_offset,
                            local_handle, local_offset, size, timeout_ms, NULL,
                            NULL, req);
}

hg_return_t
margo_bulk_itransfer(margo_instance_id mid, hg_bulk_op_t op,
                     hg_addr_t origin_addr, hg_bulk_t origin_handle,
                     size_t origin_offset, hg_bulk_t local_handle,
                     size_t local_offset, size_t size, margo_request *req)
{
    return margo_bulk_itransfer_timed(mid, op, origin_addr, origin_handle,
                                      origin_offset, local_handle, local_offset,
                                      size, 0, req);
}

hg_return_t
margo_bulk_create_attr(margo_instance_id mid, hg_uint32_t count,
                       void **buf_ptrs, const hg_size_t *buf_sizes,
                       hg_uint8_t flags, const struct hg_bulk_attr *attrs,
                       hg_bulk_t *handle)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Bulk_create_attr(mid->hg_class, count, buf_ptrs, buf_sizes, flags,
                               attrs, handle);
}

hg_return_t
margo_bulk_parallel_transfer(margo_instance_id mid, hg_bulk_op_t op,
                             hg_addr_t origin_addr, hg_bulk_t origin_handle,
                             size_t origin_offset, hg_bulk_t local_handle,
                             size_t local_offset, size_t size,
                             size_t chunk_size)
{
    margo_request *reqs;
    size_t n, i, started = 0;
    hg_return_t ret = HG_SUCCESS, r;

    if (mid == MARGO_INSTANCE_NULL || chunk_size == 0)
        return HG_INVALID_ARG;
    if (size == 0)
        return HG_SUCCESS;
    n = (size + chunk_size - 1) / chunk_size;
    reqs = calloc(n, sizeof(*reqs));
    if (reqs == NULL)
        return HG_NOMEM;
    /* Every chunk in flight at once; on a failed start, the chunks already
     * started are still waited for. */
    for (i = 0; i < n; i++) {
        size_t off = i * chunk_size;
        size_t len = size - off < chunk_size ? size - off : chunk_size;

        ret = margo_bulk_itransfer(mid, op, origin_addr, origin_handle,
                                   origin_offset + off, local_handle,
                                   local_offset + off, len, &reqs[i]);
        if (ret != HG_SUCCESS)
            break;
        started++;
    }
    for (i = 0; i < started; i++) {
        r = margo_wait(reqs[i]);
        if (ret == HG_SUCCESS)
            ret = r;
    }
    free(reqs);
    return ret;
}
