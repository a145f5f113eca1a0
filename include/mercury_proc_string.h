/*
 * Serialization of C strings, so a string can be a field of a
 * MERCURY_GEN_PROC structure.
 *
 * Wire format: a 64-bit little-endian count n, then n bytes. n = 0 encodes a
 * NULL pointer; otherwise the n bytes are the string followed by its NUL, so
 * the empty string "" is n = 1 and a single 0 byte.
 *
 * Decoding allocates a copy of the string; HG_FREE frees it and sets the
 * field to NULL. Apply HG_FREE only to structures filled by a decode: an
 * encode-side string belongs to the program. Decoding rejects a count larger
 * than the bytes left (HG_OVERFLOW) and bytes that are not exactly one string
 * and its terminating NUL (HG_PROTOCOL_ERROR); on any failure the field is set
 * to NULL and nothing stays allocated.
 */
#ifndef MERCURY_PROC_STRING_H
#define MERCURY_PROC_STRING_H

#include "qs_export.h"
#include "mercury_proc.h"
#include "mercury_string_object.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef char *hg_string_t;
typedef const char *hg_const_string_t;

/* `data` points to an hg_string_t. */
QS_EXPORT hg_return_t hg_proc_hg_string_t(hg_proc_t proc, void *data);

/* `data` points to an hg_const_string_t. Same wire format; decode still
 * allocates a copy (so the string outlives the receive buffer) and HG_FREE
 * frees it. */
QS_EXPORT hg_return_t hg_proc_hg_const_string_t(hg_proc_t proc, void *data);

/* `string` points to an hg_string_object_t. The string has the wire
 * format above (the object's flags stay local); decode makes an owned,
 * writable copy, and HG_FREE frees the data if the object owns it. */
QS_EXPORT hg_return_t hg_proc_hg_string_object_t(hg_proc_t proc, void *string);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_PROC_STRING_H */
