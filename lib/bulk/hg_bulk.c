/*
 * Bulk handles: creation over caller or library memory, registration with
 * NA (one memory handle per segment), references, access and binding.
 */
#include "bulk/hg_bulk_internal.h"
#include "util/qs_atomic.h"

#include <stdlib.h>
#include <string.h>

static unsigned long
hg_bulk_na_flags(uint8_t flags)
{
    switch (flags & HG_BULK_READWRITE) {
    case HG_BULK_READ_ONLY:
        return NA_MEM_READ_ONLY;
    case HG_BULK_WRITE_ONLY:
        return NA_MEM_WRITE_ONLY;
    default:
        return NA_MEM_READWRITE;
    }
}

/* Release NA resources and memory; used by free and by failed creates. */
static void
hg_bulk_destroy(struct hg_bulk *bulk)
{
    na_class_t *na_class = hg_core_class_of(bulk->hg_class)->na_class;

    for (uint32_t i = 0; bulk->segs != NULL && i < bulk->count; i++) {
        if (bulk->segs[i].mh == NA_MEM_HANDLE_NULL)
            continue;
        if (!bulk->remote)
            NA_Mem_deregister(na_class, bulk->segs[i].mh);
        NA_Mem_handle_free(na_class, bulk->segs[i].mh);
    }
    if (bulk->addr != HG_ADDR_NULL)
        HG_Addr_free(bulk->hg_class, bulk->addr);
    free(bulk->segs);
    free(bulk->alloc_buf);
    free(bulk->eager);
    atomic_fetch_sub(&hg_core_class_of(bulk->hg_class)->n_bulks, 1);
    HG_CORE_CHECK(obj_del, bulk);
    free(bulk);
}

struct hg_bulk *
hg_bulk_alloc(hg_class_t *hg_class, uint32_t count)
{
    struct hg_bulk *bulk = calloc(1, sizeof(*bulk));

    if (bulk == NULL)
        return NULL;
    bulk->segs = calloc(count ? count : 1, sizeof(*bulk->segs));
    if (bulk->segs == NULL) {
        free(bulk);
        return NULL;
    }
    bulk->hg_class = hg_class;
    bulk->count = count;
    atomic_init(&bulk->refcount, 1);
    atomic_fetch_add(&hg_core_class_of(hg_class)->n_bulks, 1);
    HG_CORE_CHECK(obj_add, hg_class, bulk, HG_CHECK_BULK);
    return bulk;
}

hg_return_t
HG_Bulk_create(hg_class_t *hg_class, hg_uint32_t count, void **buf_ptrs,
               const hg_size_t *buf_sizes, hg_uint8_t flags, hg_bulk_t *handle)
{
    na_class_t *na_class;
    struct hg_bulk *bulk;
    hg_size_t total = 0, alloc_size = 0;
    hg_return_t ret = HG_SUCCESS;

    qs_bias_gate();
    if (hg_class == NULL || count == 0 || buf_sizes == NULL || handle == NULL ||
        (flags & HG_BULK_READWRITE) == 0 ||
        (flags & ~(HG_BULK_READWRITE | HG_BULK_NO_EAGER)) != 0)
        return HG_INVALID_ARG;
    for (uint32_t i = 0; i < count; i++) {
        if (buf_sizes[i] > UINT64_MAX - total)
            return HG_OVERFLOW;
        total += buf_sizes[i];
        if (buf_ptrs == NULL || buf_ptrs[i] == NULL)
            alloc_size += buf_sizes[i];
    }
    na_class = hg_core_class_of(hg_class)->na_class;
    bulk = hg_bulk_alloc(hg_class, count);
    if (bulk == NULL)
        return HG_NOMEM;
    bulk->size = total;
    bulk->flags = flags & HG_BULK_READWRITE;
    bulk->no_eager = (flags & HG_BULK_NO_EAGER) != 0;
    if (alloc_size > 0) {
        bulk->alloc_buf = calloc(1, alloc_size);
        if (bulk->alloc_buf == NULL) {
            ret = HG_NOMEM;
            goto error;
        }
    }
    char *next_alloc = bulk->alloc_buf;
    for (uint32_t i = 0; i < count; i++) {
        struct hg_bulk_segment *seg = &bulk->segs[i];
        na_return_t na_ret;

        seg->len = buf_sizes[i];
        if (buf_ptrs == NULL || buf_ptrs[i] == NULL) {
            seg->base = next_alloc;
            next_alloc += seg->len;
        } else {
            seg->base = buf_ptrs[i];
        }
        if (seg->len == 0)
            continue;
        na_ret = NA_Mem_handle_create(na_class, seg->base, seg->len,
                                      hg_bulk_na_flags(flags), &seg->mh);
        if (na_ret == NA_SUCCESS) {
            na_ret = NA_Mem_register(na_class, seg->mh, NA_MEM_TYPE_HOST, 0);
            if (na_ret != NA_SUCCESS) {
                NA_Mem_handle_free(na_class, seg->mh);
                seg->mh = NA_MEM_HANDLE_NULL;
            }
        } else {
            seg->mh = NA_MEM_HANDLE_NULL;
        }
        if (na_ret != NA_SUCCESS) {
            qs_log("bulk", QS_LOG_ERROR,
                   "HG_Bulk_create: registering segment %u failed: %s", i,
                   NA_Error_to_string(na_ret));
            ret = hg_from_na(na_ret);
            goto error;
        }
    }
    *handle = bulk;
    return HG_SUCCESS;

error:
    hg_bulk_destroy(bulk);
    return ret;
}

hg_return_t
hg_bulk_create_internal(hg_class_t *hg_class, void *buf, hg_size_t size,
                        hg_uint8_t flags, hg_bulk_t *bulk)
{
    return HG_Bulk_create(hg_class, 1, &buf, &size, flags | HG_BULK_NO_EAGER,
                          bulk);
}

hg_return_t
HG_Bulk_free(hg_bulk_t handle)
{
    qs_bias_gate();
    if (handle == HG_BULK_NULL)
        return HG_SUCCESS;
    if (qs_atomic_fetch_sub(&handle->refcount, 1, memory_order_acq_rel) == 1)
        hg_bulk_destroy(handle);
    return HG_SUCCESS;
}

hg_return_t
HG_Bulk_ref_incr(hg_bulk_t handle)
{
    qs_bias_gate();
    if (handle == HG_BULK_NULL)
        return HG_INVALID_ARG;
    qs_atomic_fetch_add(&handle->refcount, 1, memory_order_relaxed);
    return HG_SUCCESS;
}

hg_return_t
HG_Bulk_access(hg_bulk_t handle, hg_size_t offset, hg_size_t size,
               hg_uint8_t flags, hg_uint32_t max_count, void **buf_ptrs,
               hg_size_t *buf_sizes, hg_uint32_t *actual_count)
{
    hg_uint32_t n = 0;
    hg_size_t seg_off;
    uint32_t i;

    qs_bias_gate();
    if (handle == HG_BULK_NULL)
        return HG_INVALID_ARG;
    /* Nothing asked for: Mercury returns here, before writing any output
     * (buf_ptrs, buf_sizes and *actual_count keep what they held). */
    if (size == 0 || max_count == 0)
        return HG_SUCCESS;
    if (handle->remote || (flags & ~handle->flags & HG_BULK_READWRITE) != 0 ||
        offset > handle->size || size > handle->size - offset)
        return HG_INVALID_ARG;
    i = hg_bulk_seek(handle, offset, &seg_off);
    while (size > 0 && i < handle->count && n < max_count) {
        hg_size_t len = handle->segs[i].len - seg_off;

        if (len > size)
            len = size;
        if (len > 0) {
            if (buf_ptrs != NULL)
                buf_ptrs[n] = (char *) handle->segs[i].base + seg_off;
            if (buf_sizes != NULL)
                buf_sizes[n] = len;
            n++;
            size -= len;
        }
        seg_off = 0;
        i++;
    }
    if (actual_count != NULL)
        *actual_count = n;
    return HG_SUCCESS;
}

hg_return_t
HG_Bulk_bind(hg_bulk_t handle, hg_context_t *context)
{
    hg_return_t ret;

    qs_bias_gate();
    if (handle == HG_BULK_NULL || context == NULL || handle->remote ||
        hg_core_of(context)->hg_class != handle->hg_class)
        return HG_INVALID_ARG;
    if (handle->addr != HG_ADDR_NULL)
        return HG_SUCCESS;
    ret = HG_Addr_self(handle->hg_class, &handle->addr);
    if (ret == HG_SUCCESS)
        handle->context_id = hg_core_of(context)->id;
    return ret;
}

hg_addr_t
HG_Bulk_get_addr(hg_bulk_t handle)
{
    return handle ? handle->addr : HG_ADDR_NULL;
}

hg_uint8_t
HG_Bulk_get_context_id(hg_bulk_t handle)
{
    return handle ? handle->context_id : 0;
}

hg_size_t
HG_Bulk_get_size(hg_bulk_t handle)
{
    return handle ? handle->size : 0;
}

hg_uint32_t
HG_Bulk_get_segment_count(hg_bulk_t handle)
{
    return handle ? handle->count : 0;
}

hg_uint8_t
HG_Bulk_get_flags(hg_bulk_t handle)
{
    return handle ? handle->flags : 0;
}

hg_return_t
HG_Bulk_create_attr(hg_class_t *hg_class, hg_uint32_t count, void **buf_ptrs,
                    const hg_size_t *buf_sizes, hg_uint8_t flags,
                    const struct hg_bulk_attr *attrs, hg_bulk_t *handle)
{
    qs_bias_gate();
    if (attrs == NULL) {
        qs_log("bulk", QS_LOG_ERROR, "HG_Bulk_create_attr: NULL attrs");
        return HG_INVALID_ARG;
    }
    switch (attrs->mem_type) {
    case HG_MEM_TYPE_HOST:
    case HG_MEM_TYPE_UNKNOWN:
        return HG_Bulk_create(hg_class, count, buf_ptrs, buf_sizes, flags,
                              handle);
    case HG_MEM_TYPE_CUDA:
    case HG_MEM_TYPE_ROCM:
    case HG_MEM_TYPE_ZE:
        qs_log("bulk", QS_LOG_ERROR,
               "HG_Bulk_create_attr: memory type %d is device memory, which "
               "this library does not register",
               (int) attrs->mem_type);
        return HG_OPNOTSUPPORTED;
    default:
        qs_log("bulk", QS_LOG_ERROR,
               "HG_Bulk_create_attr: %d is not an hg_mem_type_t",
               (int) attrs->mem_type);
        return HG_INVALID_ARG;
    }
}
