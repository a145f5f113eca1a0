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

/* Encodes, decodes or frees a bulk handle as a field of an RPC's input or
 * output: a u64 length, then the descriptor (docs/wire.md); length 0 is
 * HG_BULK_NULL. Decoding needs a proc created with a class and makes a bulk
 * handle that refers to the sender's memory (HG_Bulk_deserialize() errors
 * for a hostile descriptor); freeing releases it and sets HG_BULK_NULL. */
QS_EXPORT hg_return_t hg_proc_hg_bulk_t(hg_proc_t proc, void *data);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_PROC_BULK_H */
