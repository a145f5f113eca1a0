/*
 * What the RPC layer (lib/hg) uses of the bulk layer: internal transfers
 * for overflowed arguments, and the per-context pool of transfers, which
 * bulk owns and HG_Context_destroy() checks and releases. The bulk layer
 * stands on lib/core only; it never includes lib/hg.
 */
#ifndef HG_BULK_RPC_H
#define HG_BULK_RPC_H

#include "core/hg_core.h"

struct hg_bulk_xfer;

/* A bulk handle over library memory (overflowed arguments). */
hg_return_t hg_bulk_create_internal(hg_class_t *hg_class, void *buf,
                                    hg_size_t size, hg_uint8_t flags,
                                    hg_bulk_t *bulk);

/* Pull `size` bytes described by a serialized descriptor into dst; cb runs
 * once, from progress (not from the trigger queue), with the result. On
 * success *op is the transfer, for hg_bulk_op_cancel(). */
typedef void (*hg_bulk_internal_cb_t)(void *arg, hg_return_t ret);
hg_return_t hg_bulk_pull_internal(hg_context_t *context, hg_addr_t origin,
                                  uint8_t origin_id, const void *desc,
                                  size_t desc_size, void *dst, hg_size_t size,
                                  hg_bulk_internal_cb_t cb, void *arg,
                                  struct hg_bulk_xfer **op);
void hg_bulk_op_cancel(struct hg_bulk_xfer *op);

/* The pool of a new context (HG_Context_create()). */
hg_return_t hg_bulk_pool_init(struct hg_core *core);
/* Transfers of this context not yet back in the pool. */
unsigned int hg_bulk_pool_live(struct hg_core *core);
/* Free the pool (no transfer may be live). */
void hg_bulk_pool_fini(struct hg_core *core);

#endif /* HG_BULK_RPC_H */
