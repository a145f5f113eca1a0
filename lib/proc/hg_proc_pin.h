/*
 * Objects a proc keeps alive for the operation that encoded them.
 *
 * A bulk handle encoded into an RPC's arguments is pinned to the proc
 * that encoded it (hg_proc_hg_bulk_t takes a reference): its memory stays
 * registered until the proc is reset or freed, or the RPC layer unpins
 * it when the forward or respond that carries it completes. A caller that
 * frees its handle right after an asynchronous forward therefore does not
 * take the registration from under the peer's transfer (docs/api.md).
 */
#ifndef QS_HG_PROC_PIN_H
#define QS_HG_PROC_PIN_H

#include "mercury_proc.h"

/* Keep obj until the next unpin; release(obj) then. HG_NOMEM, and
 * release(obj) at once, if it cannot be recorded. */
hg_return_t hg_proc_pin(hg_proc_t proc, void *obj, void (*release)(void *));

/* Release everything pinned to proc (also done by hg_proc_reset and
 * hg_proc_free). */
void hg_proc_unpin_all(hg_proc_t proc);

#endif
