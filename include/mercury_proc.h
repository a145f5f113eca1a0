/*
 * Quicksilver serialization: the hg_proc_* API.
 *
 * A proc walks a C structure field by field and, depending on its operation,
 * writes the fields to a buffer (HG_ENCODE), reads them back from a buffer
 * (HG_DECODE), or releases what a decode allocated (HG_FREE). One function
 * per type, hg_proc_<type>(proc, void *data), does all three, so a structure's
 * proc is just the sequence of its fields' procs (see mercury_macros.h).
 *
 * Wire format: every scalar is fixed width and little-endian, with no
 * padding or alignment between fields (docs/proc.md has the full table).
 *
 * Buffers:
 * - Encoding never fails for lack of room. When the data outgrows the
 *   caller's buffer, the proc copies what it has written into an internal
 *   "extra buffer" and continues there; afterwards hg_proc_get_extra_buf()
 *   holds ALL hg_proc_get_size_used() bytes, from the first one.
 * - Decoding treats the buffer as hostile: reading past its end returns
 *   HG_OVERFLOW and never touches memory outside it.
 *
 * A proc is used by one thread at a time.
 */
#ifndef MERCURY_PROC_H
#define MERCURY_PROC_H

#include "qs_export.h"
#include "mercury_types.h"

#include <stddef.h>
#include <stdint.h>
/* As in Mercury, whose proc header brings <string.h>: programs rely on
 * it for strdup(), strcmp(), memset(). */
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Generated and hand-written procs in headers are `static HG_INLINE`. */
#ifndef HG_INLINE
#define HG_INLINE inline
#endif

/* Marks generated procs that a file may define without calling, such as the
 * procs of a types header shared by a client and a server. */
#ifndef HG_ATTR_UNUSED
#if defined(__GNUC__) || defined(__clang__)
#define HG_ATTR_UNUSED __attribute__((unused))
#else
#define HG_ATTR_UNUSED
#endif
#endif

/* Checksum applied by a proc over the bytes it encodes or decodes.
 * Quicksilver implements HG_NOHASH and HG_CRC32 (CRC-32C, Castagnoli);
 * the other two are refused by hg_proc_create() with HG_OPNOTSUPPORTED. */
typedef enum hg_proc_hash {
    HG_NOHASH,
    HG_CRC16,
    HG_CRC32,
    HG_CRC64
} hg_proc_hash_t;

/*
 * Create a proc with no buffer; hg_proc_reset() gives it one. `hg_class` may
 * be NULL for plain encoding and decoding; procs that need the class (bulk
 * handles) get it back through hg_proc_get_class(). The new proc's op is
 * HG_FREE until it is reset.
 * Returns HG_INVALID_ARG (proc NULL or unknown hash), HG_OPNOTSUPPORTED
 * (HG_CRC16, HG_CRC64) or HG_NOMEM. *proc is written only on success.
 */
QS_EXPORT hg_return_t hg_proc_create(hg_class_t *hg_class, hg_proc_hash_t hash,
                                     hg_proc_t *proc);

/* hg_proc_create() followed by hg_proc_reset(buf, buf_size, op). */
QS_EXPORT hg_return_t hg_proc_create_set(hg_class_t *hg_class, void *buf,
                                         hg_size_t buf_size, hg_proc_op_t op,
                                         hg_proc_hash_t hash, hg_proc_t *proc);

/*
 * Point the proc at a new buffer and operation and rewind it to offset 0.
 * The caller keeps ownership of `buf`, which must stay valid while the proc
 * uses it. `buf` may be NULL only with buf_size 0: encoding then goes
 * straight to the extra buffer (a way to measure or build a message of
 * unknown size), and decoding fails at the first byte. For HG_FREE the buffer
 * is ignored. An extra buffer from the previous encode is freed unless
 * hg_proc_set_extra_buf_is_mine() handed it to the caller; the checksum
 * restarts.
 * Returns HG_INVALID_ARG for a NULL proc, a NULL buf with a non-zero size or
 * an unknown op.
 */
QS_EXPORT hg_return_t hg_proc_reset(hg_proc_t proc, void *buf,
                                    hg_size_t buf_size, hg_proc_op_t op);

/* Free the proc and its extra buffer (unless the caller took the extra
 * buffer). Never touches the caller's buffer. A NULL proc is a no-op that
 * returns HG_SUCCESS. */
QS_EXPORT hg_return_t hg_proc_free(hg_proc_t proc);

/* The class given at creation (may be NULL). */
QS_EXPORT hg_class_t *hg_proc_get_class(hg_proc_t proc);

/* HG_ENCODE, HG_DECODE or HG_FREE. A NULL proc reports HG_FREE, the
 * operation that touches no buffer. */
QS_EXPORT hg_proc_op_t hg_proc_get_op(hg_proc_t proc);

/* Size of the caller's buffer given at reset. */
QS_EXPORT hg_size_t hg_proc_get_size(hg_proc_t proc);

/* Bytes encoded or decoded since the last reset. After an encode that
 * overflowed, this exceeds hg_proc_get_size() and every byte is in the
 * extra buffer. */
QS_EXPORT hg_size_t hg_proc_get_size_used(hg_proc_t proc);

/* Bytes left before the end of the buffer in use: the caller's buffer, or the
 * extra buffer's allocated space once encoding has moved there. */
QS_EXPORT hg_size_t hg_proc_get_size_left(hg_proc_t proc);

/* The caller's buffer given at reset (its start, not the current position). */
QS_EXPORT void *hg_proc_get_buf(hg_proc_t proc);

/*
 * The extra buffer, or NULL if encoding has stayed within the caller's
 * buffer. When it exists it holds the whole encoding: bytes 0 to
 * hg_proc_get_size_used() - 1, including the part that was also written to
 * the caller's buffer. It is allocated with malloc().
 */
QS_EXPORT void *hg_proc_get_extra_buf(hg_proc_t proc);

/* Allocated size of the extra buffer (0 if none); at least
 * hg_proc_get_size_used() when the buffer exists. Only size_used bytes are
 * meaningful. */
QS_EXPORT hg_size_t hg_proc_get_extra_size(hg_proc_t proc);

/*
 * Ensure room for `buf_size` bytes in all from the start of the encoding
 * (Mercury's hg_proc_set_size()): encoding grows into the extra buffer, so
 * that hg_proc_get_size_left() is at least buf_size minus the bytes used.
 * Decoding cannot grow what was received: HG_SUCCESS when buf_size bytes
 * are there, HG_OVERFLOW otherwise. HG_FREE: no-op. HG_INVALID_ARG for a
 * NULL proc or a size below hg_proc_get_size_used().
 */
QS_EXPORT hg_return_t hg_proc_set_size(hg_proc_t proc, hg_size_t buf_size);

/*
 * The HG handle a proc works for. HG sets it on the procs of every handle,
 * so a proc callback run by HG_Forward(), HG_Get_input(), HG_Respond() or
 * HG_Get_output() finds its handle with hg_proc_get_handle() (e.g. to read
 * HG_Get_info()); HG_HANDLE_NULL for a proc made by hg_proc_create().
 */
QS_EXPORT void hg_proc_set_handle(hg_proc_t proc, hg_handle_t handle);
QS_EXPORT hg_handle_t hg_proc_get_handle(hg_proc_t proc);

/*
 * Flags of the current operation, cleared by every hg_proc_reset(), as in
 * Mercury. HG_PROC_SM and HG_PROC_BULK_EAGER are Mercury's values; HG here
 * sets neither (bulk descriptors decide eagerness from the class's
 * no_bulk_eager), so the flags carry what the program's procs put there.
 */
#define HG_PROC_SM (1 << 0)
#define HG_PROC_BULK_EAGER (1 << 1)
/* Set the flags of the current operation (a NULL proc is ignored). */
QS_EXPORT void hg_proc_set_flags(hg_proc_t proc, uint8_t flags);
/* The flags of the current operation; 0 for a NULL proc. */
QS_EXPORT uint8_t hg_proc_get_flags(hg_proc_t proc);

/*
 * With HG_TRUE, the caller takes ownership of the extra buffer (present or
 * future, until the next reset): hg_proc_reset() and hg_proc_free() will no
 * longer free it, and the caller must free() it. The flag returns to HG_FALSE
 * at every reset. Returns HG_INVALID_ARG for a NULL proc.
 */
QS_EXPORT hg_return_t hg_proc_set_extra_buf_is_mine(hg_proc_t proc,
                                                    hg_bool_t mine);

/*
 * Reserve `size` bytes at the current position, advance past them, and
 * return a pointer to them, for code that serializes a region by hand.
 * Encode: the pointer is where the caller writes the bytes (the buffer grows
 * into the extra buffer if needed); it stays valid only until the next call
 * that encodes, because growing the extra buffer moves it. Decode: the
 * pointer is where the caller reads the bytes; NULL if fewer than `size`
 * bytes remain (the position does not move). NULL also for HG_FREE, a NULL
 * proc or an allocation failure.
 */
QS_EXPORT void *hg_proc_save_ptr(hg_proc_t proc, hg_size_t size);

/*
 * Pair of hg_proc_save_ptr(), kept for source compatibility: the checksum
 * covers every byte up to the position at hg_proc_flush(), so a region
 * reserved with save_ptr is covered as long as it is filled before the
 * flush. Returns HG_INVALID_ARG for a NULL proc.
 */
QS_EXPORT hg_return_t hg_proc_restore_ptr(hg_proc_t proc, void *ptr,
                                          hg_size_t size);

/*
 * Finish the checksum over every byte encoded or decoded since the last reset.
 * Bytes processed after the flush are not covered, which lets the caller
 * encode (or decode) the checksum itself right after the data it covers.
 * With HG_NOHASH this does nothing and succeeds.
 */
QS_EXPORT hg_return_t hg_proc_flush(hg_proc_t proc);

/*
 * Copy the flushed checksum into `hash`. With HG_CRC32, hash_size must be 4
 * and `hash` receives a host-order uint32_t. A proc not yet flushed is
 * flushed first. Returns HG_OPNOTSUPPORTED with HG_NOHASH and
 * HG_INVALID_ARG for a bad pointer or size.
 */
QS_EXPORT hg_return_t hg_proc_checksum_get(hg_proc_t proc, void *hash,
                                           hg_size_t hash_size);

/*
 * Compare the flushed checksum with `hash` (as hg_proc_checksum_get()
 * writes it). Returns HG_SUCCESS on a match, HG_CHECKSUM_ERROR on a
 * mismatch, and otherwise the errors of hg_proc_checksum_get().
 */
QS_EXPORT hg_return_t hg_proc_checksum_verify(hg_proc_t proc, const void *hash,
                                              hg_size_t hash_size);

/*
 * Process `data_size` raw bytes at `data`: encode copies them into the
 * buffer, decode copies them out (HG_OVERFLOW if they are not all there;
 * nothing is copied then), HG_FREE does nothing. Returns HG_INVALID_ARG for a
 * NULL proc, or a NULL data with a non-zero size, HG_NOMEM if the extra buffer
 * cannot grow.
 */
QS_EXPORT hg_return_t hg_proc_memcpy(hg_proc_t proc, void *data,
                                     hg_size_t data_size);

/* Mercury 2.4's name for hg_proc_memcpy(). */
static inline hg_return_t
hg_proc_bytes(hg_proc_t proc, void *data, hg_size_t data_size)
{
    return hg_proc_memcpy(proc, data, data_size);
}

/* The same as hg_proc_memcpy(). */
static HG_INLINE hg_return_t
hg_proc_raw(hg_proc_t proc, void *data, hg_size_t data_size)
{
    return hg_proc_memcpy(proc, data, data_size);
}

/*
 * Scalars. Each is fixed width and little-endian on the wire. The typed procs
 * below only pick a width; the work happens in these two functions (qs_
 * names are Quicksilver internals, not API), which are out of line so that
 * compilers do not see an encode-side read of a field that a decode is about
 * to fill and warn about it being uninitialized.
 */

/* Encodes, decodes or frees an integer of `width` bytes (1, 2, 4 or 8) at
 * `data`; decoding writes `data` only on success. */
QS_EXPORT hg_return_t qs_proc_uint_le(hg_proc_t proc, void *data,
                                      unsigned width);

/* The same for one width each (1, 2, 4 and 8 bytes), which the typed
 * procs below call: no choice of width at run time. */
QS_EXPORT hg_return_t qs_proc_le8(hg_proc_t proc, void *data);
QS_EXPORT hg_return_t qs_proc_le16(hg_proc_t proc, void *data);
QS_EXPORT hg_return_t qs_proc_le32(hg_proc_t proc, void *data);
QS_EXPORT hg_return_t qs_proc_le64(hg_proc_t proc, void *data);

/* The same for an hg_bool_t: one byte, 0 or 1. Encoding writes any non-zero
 * value as 1; decoding rejects any other byte with HG_PROTOCOL_ERROR, so a
 * decoded hg_bool_t is always HG_TRUE or HG_FALSE. */
QS_EXPORT hg_return_t qs_proc_bool(hg_proc_t proc, void *data);

/* Signed integers travel as their two's complement bit pattern, so each
 * proc reuses the unsigned helper of the same width on the same memory. */
static HG_INLINE hg_return_t
hg_proc_int8_t(hg_proc_t proc, void *data)
{
    return qs_proc_le8(proc, data);
}

/* Encodes, decodes or frees a uint8_t: one byte. */
static HG_INLINE hg_return_t
hg_proc_uint8_t(hg_proc_t proc, void *data)
{
    return qs_proc_le8(proc, data);
}

/* An int16_t: two bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_int16_t(hg_proc_t proc, void *data)
{
    return qs_proc_le16(proc, data);
}

/* A uint16_t: two bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_uint16_t(hg_proc_t proc, void *data)
{
    return qs_proc_le16(proc, data);
}

/* An int32_t: four bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_int32_t(hg_proc_t proc, void *data)
{
    return qs_proc_le32(proc, data);
}

/* A uint32_t: four bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_uint32_t(hg_proc_t proc, void *data)
{
    return qs_proc_le32(proc, data);
}

/* An int64_t: eight bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_int64_t(hg_proc_t proc, void *data)
{
    return qs_proc_le64(proc, data);
}

/* A uint64_t: eight bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_uint64_t(hg_proc_t proc, void *data)
{
    return qs_proc_le64(proc, data);
}

/* hg_size_t and hg_id_t are 64-bit on every host, so they are 8 bytes on the
 * wire as well. */
static HG_INLINE hg_return_t
hg_proc_hg_size_t(hg_proc_t proc, void *data)
{
    return qs_proc_le64(proc, data);
}

/* An hg_id_t (an RPC id): eight bytes, little-endian. */
static HG_INLINE hg_return_t
hg_proc_hg_id_t(hg_proc_t proc, void *data)
{
    return qs_proc_le64(proc, data);
}

/* An hg_bool_t: one byte, as qs_proc_bool() checks it. */
static HG_INLINE hg_return_t
hg_proc_hg_bool_t(hg_proc_t proc, void *data)
{
    return qs_proc_bool(proc, data);
}

/* The hg_-prefixed integer typedefs of mercury_types.h, so they can be used
 * as MERCURY_GEN_PROC field types too. */
static HG_INLINE hg_return_t
hg_proc_hg_int8_t(hg_proc_t proc, void *data)
{
    return hg_proc_int8_t(proc, data);
}

/* An hg_uint8_t, as hg_proc_uint8_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_uint8_t(hg_proc_t proc, void *data)
{
    return hg_proc_uint8_t(proc, data);
}

/* An hg_int16_t, as hg_proc_int16_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_int16_t(hg_proc_t proc, void *data)
{
    return hg_proc_int16_t(proc, data);
}

/* An hg_uint16_t, as hg_proc_uint16_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_uint16_t(hg_proc_t proc, void *data)
{
    return hg_proc_uint16_t(proc, data);
}

/* An hg_int32_t, as hg_proc_int32_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_int32_t(hg_proc_t proc, void *data)
{
    return hg_proc_int32_t(proc, data);
}

/* An hg_uint32_t, as hg_proc_uint32_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_uint32_t(hg_proc_t proc, void *data)
{
    return hg_proc_uint32_t(proc, data);
}

/* An hg_int64_t, as hg_proc_int64_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_int64_t(hg_proc_t proc, void *data)
{
    return hg_proc_int64_t(proc, data);
}

/* An hg_uint64_t, as hg_proc_uint64_t(). */
static HG_INLINE hg_return_t
hg_proc_hg_uint64_t(hg_proc_t proc, void *data)
{
    return hg_proc_uint64_t(proc, data);
}

/* IEEE-754 floating point travels as its bit pattern, little-endian. */
static HG_INLINE hg_return_t
hg_proc_float(hg_proc_t proc, void *data)
{
    return qs_proc_le32(proc, data);
}

/* A double: its eight-byte bit pattern, little-endian. */
static HG_INLINE hg_return_t
hg_proc_double(hg_proc_t proc, void *data)
{
    return qs_proc_le64(proc, data);
}

/* A structure type of "void" has no proc: MERCURY_REGISTER(..., void, ...)
 * pastes hg_proc_void, which registers no serializer. */
#define hg_proc_void NULL

/*
 * Used by the procs that MERCURY_GEN_PROC generates to release the fields
 * already decoded when a later field fails, so a failed decode leaves nothing
 * allocated. Sets the proc's op and returns the previous one; the buffer and
 * position are untouched. Programs should not need it.
 */
QS_EXPORT hg_proc_op_t qs_proc_swap_op(hg_proc_t proc, hg_proc_op_t op);

#ifdef __cplusplus
}
#endif

#endif /* MERCURY_PROC_H */
