/*
 * The proc object: a cursor over one buffer, plus the extra buffer that
 * encoding spills into and the checksum state.
 *
 * The encoded bytes always sit contiguously in one buffer: the caller's, or,
 * after an overflow, the extra buffer, which receives a copy of everything
 * written so far. That invariant keeps the HG layer simple (one pointer, one
 * length to send) and lets the checksum be computed in one pass at flush time
 * over bytes [0, position) instead of being updated on every field.
 */
#include "mercury_proc.h"
#include "proc/hg_proc_pin.h"

#include "util/qs_alloc.h"
#include "util/qs_checksum.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The first extra buffer is at least this large, so that a proc encoding many
 * small fields past a tiny user buffer does not reallocate on each one. */
#define QS_PROC_EXTRA_MIN 4096

/*
 * The first cache line holds everything a reset, a scalar's encode or
 * decode and a flush read or write, so that a proc whose operation neither
 * overflows nor pins anything touches that one line (procs are allocated
 * on a line boundary, hg_proc_create()). The rest is read only on the
 * rarer paths: overflow, pins, checksums, the class and handle getters.
 */
struct hg_proc {
    /* The buffer being read or written: user_buf, or extra_buf once an
     * encode has overflowed. pos is the offset of the next byte in it,
     * which is also the number of bytes processed since the reset. */
    unsigned char *cur_buf;
    hg_size_t cur_size;
    hg_size_t pos;

    unsigned char *user_buf; /* caller's buffer (not owned)          */
    hg_size_t user_size;     /* its size                             */

    unsigned char *extra_buf; /* malloc'ed spill buffer, or NULL     */
    /* A former extra buffer that the current reset points into (decoding
     * what this proc just encoded): kept alive until the next reset or
     * free instead of being freed under the caller's feet. */
    unsigned char *held_buf;

    uint8_t op;         /* hg_proc_op_t: current direction           */
    uint8_t hash;       /* hg_proc_hash_t: HG_NOHASH or HG_CRC32     */
    uint8_t flags;      /* hg_proc_set_flags(), cleared at each reset */
    bool flushed;       /* checksum computed since the reset          */
    bool extra_is_mine; /* true: the caller frees extra_buf           */
    bool pinned;        /* npins > 0                                  */

    /* Second line and beyond: the rarer paths. */
    hg_size_t extra_size; /* extra_buf's allocated size              */
    hg_size_t held_size;
    uint32_t crc32c;      /* valid when flushed and hash == HG_CRC32 */
    hg_class_t *hg_class; /* given at creation, may be NULL         */
    hg_handle_t handle;   /* hg_proc_set_handle(), kept across resets */

    /* Objects kept alive for the encoded operation (hg_proc_pin.h). */
    struct hg_proc_pinned {
        void *obj;
        void (*release)(void *);
    } * pins;
    unsigned int npins, pins_cap;
};

_Static_assert(offsetof(struct hg_proc, extra_size) <= 64,
               "a reset's fields fit in the proc's first cache line");

static bool
proc_op_is_valid(hg_proc_op_t op)
{
    return op == HG_ENCODE || op == HG_DECODE || op == HG_FREE;
}

/* Whether `p` points into the `size` bytes at `base`. Compared as integers
 * because `p` may belong to an unrelated object. */
static bool
proc_points_into(const void *p, const unsigned char *base, hg_size_t size)
{
    uintptr_t a = (uintptr_t) p, b = (uintptr_t) base;

    return base != NULL && p != NULL && a >= b && a - b < size;
}

/*
 * Forgets the extra buffer and the held buffer before a reset to `next_buf`
 * (NULL when the proc is being freed). Buffers the proc owns are freed,
 * except one that `next_buf` points into, which becomes the held buffer.
 */
static void
proc_release_buffers(struct hg_proc *proc, const void *next_buf)
{
    unsigned char *keep = NULL;
    hg_size_t keep_size = 0;

    if (proc->extra_buf != NULL && !proc->extra_is_mine) {
        if (proc_points_into(next_buf, proc->extra_buf, proc->extra_size)) {
            keep = proc->extra_buf;
            keep_size = proc->extra_size;
        } else {
            free(proc->extra_buf);
        }
    }
    if (proc->held_buf != NULL) {
        if (keep == NULL &&
            proc_points_into(next_buf, proc->held_buf, proc->held_size)) {
            keep = proc->held_buf;
            keep_size = proc->held_size;
        } else {
            free(proc->held_buf);
        }
    }
    proc->held_buf = keep;
    proc->held_size = keep_size;
    proc->extra_buf = NULL;
    proc->extra_size = 0;
    proc->extra_is_mine = false;
}

hg_return_t
hg_proc_create(hg_class_t *hg_class, hg_proc_hash_t hash, hg_proc_t *proc)
{
    struct hg_proc *p;

    if (proc == NULL)
        return HG_INVALID_ARG;
    switch (hash) {
    case HG_NOHASH:
    case HG_CRC32:
        break;
    case HG_CRC16:
    case HG_CRC64:
        return HG_OPNOTSUPPORTED;
    default:
        return HG_INVALID_ARG;
    }
    p = qs_calloc_lines(sizeof(*p));
    if (p == NULL)
        return HG_NOMEM;
    p->hg_class = hg_class;
    p->hash = (uint8_t) hash;
    p->op = HG_FREE;
    *proc = p;
    return HG_SUCCESS;
}

hg_return_t
hg_proc_create_set(hg_class_t *hg_class, void *buf, hg_size_t buf_size,
                   hg_proc_op_t op, hg_proc_hash_t hash, hg_proc_t *proc)
{
    hg_proc_t p;
    hg_return_t ret;

    if (proc == NULL)
        return HG_INVALID_ARG;
    ret = hg_proc_create(hg_class, hash, &p);
    if (ret != HG_SUCCESS)
        return ret;
    ret = hg_proc_reset(p, buf, buf_size, op);
    if (ret != HG_SUCCESS)
        goto free_proc;
    *proc = p;
    return HG_SUCCESS;

free_proc:
    hg_proc_free(p);
    return ret;
}

/* The fields a reset sets, for buf (NULL for HG_FREE). */
static inline void
proc_reset_fields(struct hg_proc *proc, void *buf, hg_size_t buf_size,
                  hg_proc_op_t op)
{
    proc->extra_is_mine = false;
    proc->op = (uint8_t) op;
    proc->user_buf = buf;
    proc->user_size = buf_size;
    proc->cur_buf = buf;
    proc->cur_size = buf_size;
    proc->pos = 0;
    proc->flushed = false; /* crc32c is stale from here */
    proc->flags = 0;
}

/* A reset that has something to let go of first: the spill and held
 * buffers (but one that buf points into) and the pins. Out of line, so
 * that the common reset saves no registers. */
static __attribute__((noinline)) hg_return_t
proc_reset_release(struct hg_proc *proc, void *buf, hg_size_t buf_size,
                   hg_proc_op_t op)
{
    proc_release_buffers(proc, buf);
    hg_proc_unpin_all(proc);
    proc_reset_fields(proc, buf, buf_size, op);
    return HG_SUCCESS;
}

hg_return_t
hg_proc_reset(hg_proc_t proc, void *buf, hg_size_t buf_size, hg_proc_op_t op)
{
    if (proc == HG_PROC_NULL || !proc_op_is_valid(op))
        return HG_INVALID_ARG;
    if (buf == NULL && buf_size != 0 && op != HG_FREE)
        return HG_INVALID_ARG;

    if (op == HG_FREE) {
        /* Freeing reads no bytes; keeping no buffer makes any stray read
         * fail instead of touching memory the caller may have released. */
        buf = NULL;
        buf_size = 0;
    }
    /* Most resets find nothing to let go, and see it in the first line. */
    if (proc->extra_buf != NULL || proc->held_buf != NULL || proc->pinned)
        return proc_reset_release(proc, buf, buf_size, op);
    proc_reset_fields(proc, buf, buf_size, op);
    return HG_SUCCESS;
}

hg_return_t
hg_proc_free(hg_proc_t proc)
{
    if (proc == HG_PROC_NULL)
        return HG_SUCCESS;
    proc_release_buffers(proc, NULL);
    hg_proc_unpin_all(proc);
    free(proc->pins);
    qs_free_lines(proc, sizeof(*proc));
    return HG_SUCCESS;
}

hg_return_t
hg_proc_pin(hg_proc_t proc, void *obj, void (*release)(void *))
{
    if (proc == HG_PROC_NULL || obj == NULL || release == NULL)
        return HG_INVALID_ARG;
    if (proc->npins == proc->pins_cap) {
        unsigned int cap = proc->pins_cap ? 2 * proc->pins_cap : 4;
        struct hg_proc_pinned *pins = realloc(proc->pins, cap * sizeof(*pins));

        if (pins == NULL) {
            release(obj);
            return HG_NOMEM;
        }
        proc->pins = pins;
        proc->pins_cap = cap;
    }
    proc->pins[proc->npins].obj = obj;
    proc->pins[proc->npins].release = release;
    proc->npins++;
    proc->pinned = true;
    return HG_SUCCESS;
}

/* The pins' release, out of line: most resets have nothing pinned, and
 * see that in the proc's first line. */
static __attribute__((noinline)) void
proc_unpin(struct hg_proc *proc)
{
    /* A release may free what pinned it (a bulk handle's last reference
     * frees its registration): take the list first. */
    while (proc->npins > 0) {
        struct hg_proc_pinned pin = proc->pins[--proc->npins];

        pin.release(pin.obj);
    }
    proc->pinned = false;
}

void
hg_proc_unpin_all(hg_proc_t proc)
{
    if (proc != HG_PROC_NULL && proc->pinned)
        proc_unpin(proc);
}

hg_class_t *
hg_proc_get_class(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? NULL : proc->hg_class;
}

hg_proc_op_t
hg_proc_get_op(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? HG_FREE : proc->op;
}

hg_proc_op_t
qs_proc_swap_op(hg_proc_t proc, hg_proc_op_t op)
{
    hg_proc_op_t old;

    if (proc == HG_PROC_NULL)
        return HG_FREE;
    old = proc->op;
    if (proc_op_is_valid(op))
        proc->op = (uint8_t) op;
    return old;
}

hg_size_t
hg_proc_get_size(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? 0 : proc->user_size;
}

hg_size_t
hg_proc_get_size_used(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? 0 : proc->pos;
}

hg_size_t
hg_proc_get_size_left(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? 0 : proc->cur_size - proc->pos;
}

void *
hg_proc_get_buf(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? NULL : proc->user_buf;
}

void *
hg_proc_get_extra_buf(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? NULL : proc->extra_buf;
}

hg_size_t
hg_proc_get_extra_size(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? 0 : proc->extra_size;
}

void
hg_proc_set_handle(hg_proc_t proc, hg_handle_t handle)
{
    if (proc != HG_PROC_NULL)
        proc->handle = handle;
}

hg_handle_t
hg_proc_get_handle(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? HG_HANDLE_NULL : proc->handle;
}

void
hg_proc_set_flags(hg_proc_t proc, uint8_t flags)
{
    if (proc != HG_PROC_NULL)
        proc->flags = flags;
}

uint8_t
hg_proc_get_flags(hg_proc_t proc)
{
    return proc == HG_PROC_NULL ? 0 : proc->flags;
}

hg_return_t
hg_proc_set_extra_buf_is_mine(hg_proc_t proc, hg_bool_t mine)
{
    if (proc == HG_PROC_NULL)
        return HG_INVALID_ARG;
    proc->extra_is_mine = mine != HG_FALSE;
    return HG_SUCCESS;
}

/*
 * Makes room for `size` more bytes at the current encode position, moving
 * the data into a larger extra buffer when the current one is too small.
 * Capacity at least doubles on each move, so encoding n bytes in small
 * pieces costs O(n) copying in total.
 */
static hg_return_t
proc_encode_reserve(struct hg_proc *proc, hg_size_t size)
{
    hg_size_t need, cap;
    unsigned char *nbuf;

    if (size > proc->cur_size - proc->pos) {
        if (size > (hg_size_t) SIZE_MAX - proc->pos)
            return HG_NOMEM;
        need = proc->pos + size;
        cap = proc->extra_size > proc->user_size ? proc->extra_size
                                                 : proc->user_size;
        if (cap < QS_PROC_EXTRA_MIN)
            cap = QS_PROC_EXTRA_MIN;
        while (cap < need)
            cap = cap > (hg_size_t) SIZE_MAX / 2 ? need : cap * 2;

        if (proc->extra_buf == NULL) {
            nbuf = malloc((size_t) cap);
            if (nbuf == NULL)
                return HG_NOMEM;
            if (proc->pos > 0)
                memcpy(nbuf, proc->user_buf, (size_t) proc->pos);
        } else {
            nbuf = realloc(proc->extra_buf, (size_t) cap);
            if (nbuf == NULL)
                return HG_NOMEM;
        }
        proc->extra_buf = nbuf;
        proc->extra_size = cap;
        proc->cur_buf = nbuf;
        proc->cur_size = cap;
    }
    return HG_SUCCESS;
}

hg_return_t
hg_proc_set_size(hg_proc_t proc, hg_size_t buf_size)
{
    if (proc == HG_PROC_NULL || buf_size < proc->pos)
        return HG_INVALID_ARG;
    switch (proc->op) {
    case HG_ENCODE:
        return proc_encode_reserve(proc, buf_size - proc->pos);
    case HG_DECODE:
        /* Received bytes cannot grow: a decoder asking for more than
         * arrived is reading past the message. */
        return buf_size <= proc->cur_size ? HG_SUCCESS : HG_OVERFLOW;
    default:
        return HG_SUCCESS;
    }
}

void *
hg_proc_save_ptr(hg_proc_t proc, hg_size_t size)
{
    void *ptr;

    if (proc == HG_PROC_NULL)
        return NULL;
    switch (proc->op) {
    case HG_ENCODE:
        if (proc_encode_reserve(proc, size) != HG_SUCCESS)
            return NULL;
        break;
    case HG_DECODE:
        if (size > proc->cur_size - proc->pos)
            return NULL;
        break;
    case HG_FREE:
    default:
        return NULL;
    }
    /* A zero-byte reservation over a NULL buffer has no address to give. */
    if (proc->cur_buf == NULL)
        return NULL;
    ptr = proc->cur_buf + proc->pos;
    proc->pos += size;
    return ptr;
}

hg_return_t
hg_proc_restore_ptr(hg_proc_t proc, void *ptr, hg_size_t size)
{
    (void) ptr;
    (void) size;
    return proc == HG_PROC_NULL ? HG_INVALID_ARG : HG_SUCCESS;
}

hg_return_t
hg_proc_memcpy(hg_proc_t proc, void *data, hg_size_t data_size)
{
    hg_return_t ret;

    if (proc == HG_PROC_NULL || (data == NULL && data_size != 0))
        return HG_INVALID_ARG;
    if (data_size == 0)
        return HG_SUCCESS;
    switch (proc->op) {
    case HG_ENCODE:
        ret = proc_encode_reserve(proc, data_size);
        if (ret != HG_SUCCESS)
            return ret;
        memcpy(proc->cur_buf + proc->pos, data, (size_t) data_size);
        proc->pos += data_size;
        return HG_SUCCESS;
    case HG_DECODE:
        if (data_size > proc->cur_size - proc->pos)
            return HG_OVERFLOW;
        memcpy(data, proc->cur_buf + proc->pos, (size_t) data_size);
        proc->pos += data_size;
        return HG_SUCCESS;
    case HG_FREE:
    default:
        return HG_SUCCESS;
    }
}

/* A native integer of `width` bytes at `data` and its little-endian wire
 * form at `wire`, both ways. On a little-endian host the bytes are already
 * in wire order; elsewhere the value goes through a variable of the
 * field's own width, so it is right on hosts of either byte order. */
static inline void
proc_le_put(unsigned char *wire, const void *data, unsigned width)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(wire, data, width);
#else
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v;

    switch (width) {
    case 1:
        memcpy(&v8, data, 1);
        v = v8;
        break;
    case 2:
        memcpy(&v16, data, 2);
        v = v16;
        break;
    case 4:
        memcpy(&v32, data, 4);
        v = v32;
        break;
    default:
        memcpy(&v, data, 8);
        break;
    }
    for (unsigned i = 0; i < width; i++)
        wire[i] = (unsigned char) (v >> (8 * i));
#endif
}

static inline void
proc_le_get(void *data, const unsigned char *wire, unsigned width)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(data, wire, width);
#else
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v = 0;

    for (unsigned i = 0; i < width; i++)
        v |= (uint64_t) wire[i] << (8 * i);
    switch (width) {
    case 1:
        v8 = (uint8_t) v;
        memcpy(data, &v8, 1);
        break;
    case 2:
        v16 = (uint16_t) v;
        memcpy(data, &v16, 2);
        break;
    case 4:
        v32 = (uint32_t) v;
        memcpy(data, &v32, 4);
        break;
    default:
        memcpy(data, &v, 8);
        break;
    }
#endif
}

/* An encode of `width` bytes past the buffer: room first, then the bytes. */
static __attribute__((noinline)) hg_return_t
proc_uint_le_grow(hg_proc_t proc, const void *data, unsigned width)
{
    hg_return_t ret = proc_encode_reserve(proc, width);

    if (ret != HG_SUCCESS)
        return ret;
    proc_le_put(proc->cur_buf + proc->pos, data, width);
    proc->pos += width;
    return HG_SUCCESS;
}

/* One integer of a width known at compile time: every caller below passes
 * a constant, so the copies become single loads and stores. */
static inline __attribute__((always_inline)) hg_return_t
proc_uint_le(hg_proc_t proc, void *data, unsigned width)
{
    switch (proc->op) {
    case HG_ENCODE:
        /* Past the buffer: grow it out of line (a tail call, so that the
         * common case saves no registers). */
        if (width > proc->cur_size - proc->pos)
            return proc_uint_le_grow(proc, data, width);
        proc_le_put(proc->cur_buf + proc->pos, data, width);
        proc->pos += width;
        return HG_SUCCESS;
    case HG_DECODE:
        if (width > proc->cur_size - proc->pos)
            return HG_OVERFLOW;
        proc_le_get(data, proc->cur_buf + proc->pos, width);
        proc->pos += width;
        return HG_SUCCESS;
    case HG_FREE:
    default:
        return HG_SUCCESS;
    }
}

hg_return_t
qs_proc_uint_le(hg_proc_t proc, void *data, unsigned width)
{
    if (proc == HG_PROC_NULL || data == NULL)
        return HG_INVALID_ARG;
    switch (width) {
    case 8:
        return proc_uint_le(proc, data, 8);
    case 4:
        return proc_uint_le(proc, data, 4);
    case 2:
        return proc_uint_le(proc, data, 2);
    case 1:
        return proc_uint_le(proc, data, 1);
    default:
        return HG_INVALID_ARG;
    }
}

#define QS_PROC_LE(name, width)                                                \
    hg_return_t name(hg_proc_t proc, void *data)                               \
    {                                                                          \
        if (proc == HG_PROC_NULL || data == NULL)                              \
            return HG_INVALID_ARG;                                             \
        return proc_uint_le(proc, data, width);                                \
    }

QS_PROC_LE(qs_proc_le8, 1)
QS_PROC_LE(qs_proc_le16, 2)
QS_PROC_LE(qs_proc_le32, 4)
QS_PROC_LE(qs_proc_le64, 8)

_Static_assert(sizeof(float) == 4 && sizeof(double) == 8,
               "hg_proc_float and hg_proc_double use the 4- and 8-byte procs");

hg_return_t
qs_proc_bool(hg_proc_t proc, void *data)
{
    hg_bool_t v;
    hg_return_t ret;

    if (proc == HG_PROC_NULL || data == NULL)
        return HG_INVALID_ARG;
    switch (proc->op) {
    case HG_ENCODE:
        v = *(hg_bool_t *) data ? 1 : 0;
        return hg_proc_memcpy(proc, &v, 1);
    case HG_DECODE:
        ret = hg_proc_memcpy(proc, &v, 1);
        if (ret != HG_SUCCESS)
            return ret;
        if (v > 1)
            return HG_PROTOCOL_ERROR;
        *(hg_bool_t *) data = v;
        return HG_SUCCESS;
    case HG_FREE:
    default:
        return HG_SUCCESS;
    }
}

hg_return_t
hg_proc_flush(hg_proc_t proc)
{
    if (proc == HG_PROC_NULL)
        return HG_INVALID_ARG;
    if (proc->hash == HG_CRC32)
        proc->crc32c = qs_crc32c(0, proc->cur_buf, (size_t) proc->pos);
    proc->flushed = true;
    return HG_SUCCESS;
}

/* Checks the arguments shared by checksum_get and checksum_verify and
 * flushes the proc if that has not happened yet. */
static hg_return_t
proc_checksum_prepare(struct hg_proc *proc, const void *hash,
                      hg_size_t hash_size)
{
    if (proc == NULL || hash == NULL)
        return HG_INVALID_ARG;
    if (proc->hash == HG_NOHASH)
        return HG_OPNOTSUPPORTED;
    if (hash_size != sizeof(uint32_t))
        return HG_INVALID_ARG;
    if (!proc->flushed)
        return hg_proc_flush(proc);
    return HG_SUCCESS;
}

hg_return_t
hg_proc_checksum_get(hg_proc_t proc, void *hash, hg_size_t hash_size)
{
    hg_return_t ret = proc_checksum_prepare(proc, hash, hash_size);

    if (ret != HG_SUCCESS)
        return ret;
    memcpy(hash, &proc->crc32c, sizeof(proc->crc32c));
    return HG_SUCCESS;
}

hg_return_t
hg_proc_checksum_verify(hg_proc_t proc, const void *hash, hg_size_t hash_size)
{
    uint32_t expected;
    hg_return_t ret = proc_checksum_prepare(proc, hash, hash_size);

    if (ret != HG_SUCCESS)
        return ret;
    memcpy(&expected, hash, sizeof(expected));
    return expected == proc->crc32c ? HG_SUCCESS : HG_CHECKSUM_ERROR;
}
