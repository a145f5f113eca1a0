/*
 * hg_proc_hg_bulk_t: a bulk handle as a field of an RPC argument. The
 * descriptor travels as a u64 length then its bytes (length 0 encodes
 * HG_BULK_NULL); small read-only regions are embedded (eager). An
 * encoded handle is pinned to the proc (proc/hg_proc_pin.h).
 */
#include "bulk/hg_bulk_internal.h"

#include "mercury_proc.h"

#include "mercury_proc_bulk.h"
#include "proc/hg_proc_pin.h"

static void
hg_proc_bulk_release(void *bulk)
{
    (void) HG_Bulk_free(bulk);
}

hg_return_t
hg_proc_hg_bulk_t(hg_proc_t proc, void *data)
{
    hg_bulk_t *bulk = data;
    hg_size_t size = 0;
    hg_return_t ret;
    void *buf;

    if (proc == HG_PROC_NULL || bulk == NULL)
        return HG_INVALID_ARG;
    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        if (*bulk != HG_BULK_NULL)
            size = HG_Bulk_get_serialize_size(*bulk, HG_TRUE);
        ret = hg_proc_hg_size_t(proc, &size);
        if (ret != HG_SUCCESS || size == 0)
            return ret;
        buf = hg_proc_save_ptr(proc, size);
        if (buf == NULL)
            return HG_OVERFLOW;
        ret = HG_Bulk_serialize(buf, size, HG_TRUE, *bulk);
        if (ret != HG_SUCCESS)
            return ret;
        /* Registered until the operation that carries it completes, even
         * if its owner frees it first (hg_proc_pin.h). */
        HG_Bulk_ref_incr(*bulk);
        ret = hg_proc_pin(proc, *bulk, hg_proc_bulk_release);
        if (ret != HG_SUCCESS)
            return ret;
        return hg_proc_restore_ptr(proc, buf, size);
    case HG_DECODE:
        *bulk = HG_BULK_NULL;
        ret = hg_proc_hg_size_t(proc, &size);
        if (ret != HG_SUCCESS || size == 0)
            return ret;
        if (hg_proc_get_class(proc) == NULL)
            return HG_INVALID_ARG;
        buf = hg_proc_save_ptr(proc, size);
        if (buf == NULL)
            return HG_OVERFLOW;
        ret = HG_Bulk_deserialize(hg_proc_get_class(proc), bulk, buf, size);
        if (ret != HG_SUCCESS)
            return ret;
        return hg_proc_restore_ptr(proc, buf, size);
    case HG_FREE:
        if (*bulk != HG_BULK_NULL)
            HG_Bulk_free(*bulk);
        *bulk = HG_BULK_NULL;
        return HG_SUCCESS;
    }
    return HG_INVALID_ARG;
}
