/*
 * Serialization of bulk handles, so an hg_bulk_t can be a field of a
 * MERCURY_GEN_PROC structure. Encoding writes the handle's descriptor;
 * decoding creates a new handle (freed by HG_FREE, i.e. HG_Free_input /
 * HG_Free_output); the descriptor bytes are untrusted and fully checked.
 */
#ifndef MERCURY_PROC_BULK_H
#define MERCURY_PROC_BULK_H

#include "qs_export.h"
#include "mercury_types.h"

#ifdef __cplusplus
extern "C" {
#endif

QS_EXPORT hg_return_t hg_proc_hg_bulk_t(hg_proc_t proc, void *data);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_PROC_BULK_H */
