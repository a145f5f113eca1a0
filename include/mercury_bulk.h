/*
 * Quicksilver HG bulk layer: exposing memory and moving it with RMA.
 *
 * An origin exposes memory with HG_Bulk_create(), sends the handle inside
 * an RPC (hg_proc_hg_bulk_t), and the target pulls from it or pushes into
 * it with HG_Bulk_transfer(). Offsets are virtual: both sides are addressed
 * as one contiguous range over their segments.
 */
#ifndef MERCURY_BULK_H
#define MERCURY_BULK_H

#include "qs_export.h"
#include "mercury_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Create a handle over `count` segments. flags: HG_BULK_READ_ONLY (peers
 * may only pull), HG_BULK_WRITE_ONLY (peers may only push),
 * HG_BULK_READWRITE, optionally | HG_BULK_NO_EAGER. buf_ptrs NULL (or a NULL
 * entry) makes the library allocate zeroed memory for those segments,
 * freed with the handle. The memory stays the caller's otherwise and must
 * outlive the handle. Zero-length segments are allowed.
 */
QS_EXPORT hg_return_t HG_Bulk_create(hg_class_t *hg_class, hg_uint32_t count,
                                     void **buf_ptrs,
                                     const hg_size_t *buf_sizes,
                                     hg_uint8_t flags, hg_bulk_t *handle);

/*
 * HG_Bulk_create() for memory described by `attrs`. HG_MEM_TYPE_HOST (and
 * HG_MEM_TYPE_UNKNOWN, taken as host) behave as HG_Bulk_create(), whatever
 * attrs->device says. Device memory (HG_MEM_TYPE_CUDA, _ROCM, _ZE) is
 * refused with HG_OPNOTSUPPORTED, as Mercury built without GPU support
 * does; other values and a NULL attrs give HG_INVALID_ARG.
 */
QS_EXPORT hg_return_t HG_Bulk_create_attr(hg_class_t *hg_class,
                                          hg_uint32_t count, void **buf_ptrs,
                                          const hg_size_t *buf_sizes,
                                          hg_uint8_t flags,
                                          const struct hg_bulk_attr *attrs,
                                          hg_bulk_t *handle);

/* Drop a reference; the handle (and its registration) goes at zero. A
 * transfer in flight holds its own reference, so freeing is always safe. */
QS_EXPORT hg_return_t HG_Bulk_free(hg_bulk_t handle);
QS_EXPORT hg_return_t HG_Bulk_ref_incr(hg_bulk_t handle);

/*
 * Segments covering [offset, offset+size) of a local handle: up to
 * max_count pointers and sizes; *actual_count gets how many. flags must be
 * allowed by the handle's own flags. With size 0 or max_count 0 it returns
 * HG_SUCCESS at once and writes no output, as Mercury does (so
 * *actual_count is not set to 0).
 */
QS_EXPORT hg_return_t HG_Bulk_access(hg_bulk_t handle, hg_size_t offset,
                                     hg_size_t size, hg_uint8_t flags,
                                     hg_uint32_t max_count, void **buf_ptrs,
                                     hg_size_t *buf_sizes,
                                     hg_uint32_t *actual_count);

/* Bind the creator's address (and context id) into the handle so a
 * receiver can transfer without knowing the origin separately. */
QS_EXPORT hg_return_t HG_Bulk_bind(hg_bulk_t handle, hg_context_t *context);
/* The bound address (owned by the handle), or HG_ADDR_NULL. */
QS_EXPORT hg_addr_t HG_Bulk_get_addr(hg_bulk_t handle);
QS_EXPORT hg_uint8_t HG_Bulk_get_context_id(hg_bulk_t handle);

/* Total size in bytes of the handle's segments (0 for HG_BULK_NULL). */
QS_EXPORT hg_size_t HG_Bulk_get_size(hg_bulk_t handle);
/* Number of segments (0 for HG_BULK_NULL). */
QS_EXPORT hg_uint32_t HG_Bulk_get_segment_count(hg_bulk_t handle);
/* The permission and option flags the handle was created with
 * (HG_BULK_READ_ONLY, ...; 0 for HG_BULK_NULL). */
QS_EXPORT hg_uint8_t HG_Bulk_get_flags(hg_bulk_t handle);

/*
 * Descriptors. request_eager asks for small read-only data to be embedded
 * (ignored when the class has no_bulk_eager or the handle HG_BULK_NO_EAGER).
 * Deserialization treats the bytes as hostile: every count, size and
 * nested handle is checked; a bad descriptor gives HG_PROTOCOL_ERROR or
 * HG_OVERFLOW and allocates nothing.
 */
QS_EXPORT hg_size_t HG_Bulk_get_serialize_size(hg_bulk_t handle,
                                               hg_bool_t request_eager);
QS_EXPORT hg_return_t HG_Bulk_serialize(void *buf, hg_size_t buf_size,
                                        hg_bool_t request_eager,
                                        hg_bulk_t handle);
QS_EXPORT hg_return_t HG_Bulk_deserialize(hg_class_t *hg_class,
                                          hg_bulk_t *handle, const void *buf,
                                          hg_size_t buf_size);

/*
 * Transfer `size` bytes between a remote handle (origin_handle, at
 * origin_addr) and a local one. HG_BULK_PULL reads the origin into local
 * memory (origin must allow reads, local writes); HG_BULK_PUSH writes local
 * memory into the origin (origin must allow writes). Ranges past either
 * end, or missing permissions, fail with HG_INVALID_ARG / HG_PERMISSION
 * before anything moves. The callback (type HG_CB_BULK) runs once from
 * HG_Trigger(). op_id may be NULL or HG_OP_ID_IGNORE.
 */
QS_EXPORT hg_return_t HG_Bulk_transfer(
    hg_context_t *context, hg_bulk_cb_t callback, void *arg, hg_bulk_op_t op,
    hg_addr_t origin_addr, hg_bulk_t origin_handle, hg_size_t origin_offset,
    hg_bulk_t local_handle, hg_size_t local_offset, hg_size_t size,
    hg_op_id_t *op_id);
/* Same, with the origin address and context id bound in origin_handle. */
QS_EXPORT hg_return_t HG_Bulk_bind_transfer(
    hg_context_t *context, hg_bulk_cb_t callback, void *arg, hg_bulk_op_t op,
    hg_bulk_t origin_handle, hg_size_t origin_offset, hg_bulk_t local_handle,
    hg_size_t local_offset, hg_size_t size, hg_op_id_t *op_id);
/* Same as HG_Bulk_transfer() with a target context id. */
QS_EXPORT hg_return_t HG_Bulk_transfer_id(
    hg_context_t *context, hg_bulk_cb_t callback, void *arg, hg_bulk_op_t op,
    hg_addr_t origin_addr, hg_uint8_t origin_id, hg_bulk_t origin_handle,
    hg_size_t origin_offset, hg_bulk_t local_handle, hg_size_t local_offset,
    hg_size_t size, hg_op_id_t *op_id);

/*
 * Extension: a transfer with a deadline of timeout_ms on the NA clock;
 * when it passes, the transfer is cancelled and completes with HG_TIMEOUT.
 */
QS_EXPORT hg_return_t HG_Bulk_transfer_timed(
    hg_context_t *context, hg_bulk_cb_t callback, void *arg, hg_bulk_op_t op,
    hg_addr_t origin_addr, hg_bulk_t origin_handle, hg_size_t origin_offset,
    hg_bulk_t local_handle, hg_size_t local_offset, hg_size_t size,
    unsigned int timeout_ms, hg_op_id_t *op_id);

/*
 * Cancel a transfer: its callback still runs once, with HG_CANCELED or the
 * result that won the race. The op id is valid until that callback has
 * run; cancelling after completion is a no-op.
 */
QS_EXPORT hg_return_t HG_Bulk_cancel(hg_op_id_t op_id);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_BULK_H */
