/*
 * Pools of registered bulk buffers: `count` buffers of `size` bytes with
 * the same access flag, registered once and handed out and back.
 *
 * get blocks the calling thread until a buffer is free; tryget does not
 * (*bulk = HG_BULK_NULL when none is). A pool set holds npools pools whose
 * buffer sizes are first_size, first_size * size_multiple, ...; get and
 * tryget pick the smallest pool whose buffers hold `size` (tryget with
 * any_flag also tries the larger ones). The int functions return 0, or -1
 * for an invalid argument (a size larger than any pool's, a handle that
 * is not the pool's).
 */
#ifndef MARGO_BULK_POOL_H
#define MARGO_BULK_POOL_H

#include "qs_export.h"
#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct margo_bulk_pool *margo_bulk_pool_t;
#define MARGO_BULK_POOL_NULL ((margo_bulk_pool_t) NULL)
typedef struct margo_bulk_poolset *margo_bulk_poolset_t;
#define MARGO_BULK_POOLSET_NULL ((margo_bulk_poolset_t) NULL)

/* A pool of `count` buffers of `size` bytes, each registered once as a bulk
 * handle with `flag` (HG_BULK_READ_ONLY, ...). HG_INVALID_ARG for a NULL
 * instance or pool, or a zero count or size. */
QS_EXPORT hg_return_t margo_bulk_pool_create(margo_instance_id mid,
                                             hg_size_t count, hg_size_t size,
                                             hg_uint8_t flag,
                                             margo_bulk_pool_t *pool);
/* -1 while buffers are out. */
QS_EXPORT int margo_bulk_pool_destroy(margo_bulk_pool_t pool);
/* Take a free buffer's handle: get waits until one is released, tryget
 * gives HG_BULK_NULL when none is free. 0, or -1 for NULL arguments. */
QS_EXPORT int margo_bulk_pool_get(margo_bulk_pool_t pool, hg_bulk_t *bulk);
QS_EXPORT int margo_bulk_pool_tryget(margo_bulk_pool_t pool, hg_bulk_t *bulk);
/* Give a buffer back (waking one waiting get). -1 when the handle is not
 * one of the pool's or is already free. */
QS_EXPORT int margo_bulk_pool_release(margo_bulk_pool_t pool, hg_bulk_t bulk);

/* `npools` pools of `nbufs` buffers each, the first of `first_size` bytes
 * and each next one `size_multiple` (at least 2) times larger. */
QS_EXPORT hg_return_t margo_bulk_poolset_create(
    margo_instance_id mid, hg_size_t npools, hg_size_t nbufs,
    hg_size_t first_size, hg_size_t size_multiple, hg_uint8_t flag,
    margo_bulk_poolset_t *poolset);
/* Destroy every pool; -1, destroying none, while any buffer is out. */
QS_EXPORT int margo_bulk_poolset_destroy(margo_bulk_poolset_t poolset);
/* The buffer size of the largest pool. */
QS_EXPORT void margo_bulk_poolset_get_max(margo_bulk_poolset_t poolset,
                                          hg_size_t *max_size);
/* A buffer from the smallest pool whose buffers hold `size` bytes (-1 when
 * none does): get waits for one; tryget gives HG_BULK_NULL when that pool
 * has none free, unless any_flag lets it try the larger pools too. */
QS_EXPORT int margo_bulk_poolset_get(margo_bulk_poolset_t poolset,
                                     hg_size_t size, hg_bulk_t *bulk);
QS_EXPORT int margo_bulk_poolset_tryget(margo_bulk_poolset_t poolset,
                                        hg_size_t size, hg_bool_t any_flag,
                                        hg_bulk_t *bulk);
/* Give a buffer back to the pool of its size; -1 when no pool owns it. */
QS_EXPORT int margo_bulk_poolset_release(margo_bulk_poolset_t poolset,
                                         hg_bulk_t bulk);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_BULK_POOL_H */
