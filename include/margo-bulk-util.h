/* Margo bulk utilities. */
#ifndef MARGO_BULK_UTIL_H
#define MARGO_BULK_UTIL_H

#include "qs_export.h"
#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * margo_bulk_transfer() split into chunks of chunk_size bytes (the last
 * may be shorter), all in flight at once; returns when every chunk has
 * completed, with the first error met (HG_INVALID_ARG for chunk_size 0).
 */
QS_EXPORT hg_return_t margo_bulk_parallel_transfer(
    margo_instance_id mid, hg_bulk_op_t op, hg_addr_t origin_addr,
    hg_bulk_t origin_handle, size_t origin_offset, hg_bulk_t local_handle,
    size_t local_offset, size_t size, size_t chunk_size);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_BULK_UTIL_H */
