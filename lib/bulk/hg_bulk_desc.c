/*
 * Bulk descriptors on the wire (docs/wire.md), little-endian:
 *   magic u32 "QSBK" | version u8 | flags u8 | reserved u16 | count u32
 *   total u64 | count x { len u64 | mh_size u32 | mh bytes }
 *   [bound: addr_size u32 | addr bytes | context_id u8]
 *   [eager: total bytes of data]
 * flags: access bits (HG_BULK_READ_ONLY/WRITE_ONLY), 0x40 eager,
 * 0x80 bound. Deserialization checks every count and size.
 */
#include "bulk/hg_bulk_internal.h"

#include <stdlib.h>
#include <string.h>

#define HG_BULK_MAGIC 0x4b425351u /* "QSBK" */
#define HG_BULK_VERSION 1
#define HG_BULK_DESC_EAGER 0x40
#define HG_BULK_DESC_BOUND 0x80
#define HG_BULK_DESC_FIXED 20

struct hg_bulk *hg_bulk_alloc(hg_class_t *hg_class, uint32_t count);

/* A bounded little-endian reader and writer. */
struct hg_cursor {
    uint8_t *p;
    const uint8_t *end;
};

static bool
hg_cursor_put(struct hg_cursor *c, const void *src, size_t n)
{
    if ((size_t) (c->end - c->p) < n)
        return false;
    memcpy(c->p, src, n);
    c->p += n;
    return true;
}

static bool
hg_cursor_put_uint(struct hg_cursor *c, uint64_t v, size_t n)
{
    uint8_t b[8];

    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t) (v >> (8 * i));
    return hg_cursor_put(c, b, n);
}

static bool
hg_cursor_get_uint(struct hg_cursor *c, uint64_t *v, size_t n)
{
    if ((size_t) (c->end - c->p) < n)
        return false;
    *v = 0;
    for (size_t i = n; i-- > 0;)
        *v = (*v << 8) | c->p[i];
    c->p += n;
    return true;
}

static bool
hg_bulk_wants_eager(const struct hg_bulk *bulk, hg_bool_t request_eager)
{
    return request_eager && !bulk->remote && !bulk->no_eager &&
           !hg_core_class_of(bulk->hg_class)->no_bulk_eager &&
           bulk->flags == HG_BULK_READ_ONLY && bulk->size <= HG_BULK_EAGER_MAX;
}

hg_size_t
HG_Bulk_get_serialize_size(hg_bulk_t handle, hg_bool_t request_eager)
{
    na_class_t *na_class;
    hg_size_t size = HG_BULK_DESC_FIXED;

    qs_bias_gate();
    if (handle == HG_BULK_NULL)
        return 0;
    na_class = hg_core_class_of(handle->hg_class)->na_class;
    for (uint32_t i = 0; i < handle->count; i++) {
        size += 12;
        if (handle->segs[i].mh != NA_MEM_HANDLE_NULL)
            size +=
                NA_Mem_handle_get_serialize_size(na_class, handle->segs[i].mh);
    }
    if (handle->addr != HG_ADDR_NULL)
        size += 5 + HG_Addr_get_serialize_size(handle->hg_class, handle->addr);
    if (hg_bulk_wants_eager(handle, request_eager))
        size += handle->size;
    return size;
}

hg_return_t
HG_Bulk_serialize(void *buf, hg_size_t buf_size, hg_bool_t request_eager,
                  hg_bulk_t handle)
{
    struct hg_cursor c = {buf, buf != NULL ? (uint8_t *) buf + buf_size : buf};
    na_class_t *na_class;
    bool eager;
    uint8_t flags;

    qs_bias_gate();
    if (buf == NULL || handle == HG_BULK_NULL)
        return HG_INVALID_ARG;
    /* A remote handle has no memory of its own to describe. */
    if (handle->remote)
        return HG_OPNOTSUPPORTED;
    if (buf_size < HG_Bulk_get_serialize_size(handle, request_eager))
        return HG_OVERFLOW;
    na_class = hg_core_class_of(handle->hg_class)->na_class;
    eager = hg_bulk_wants_eager(handle, request_eager);
    flags = handle->flags | (eager ? HG_BULK_DESC_EAGER : 0) |
            (handle->addr != HG_ADDR_NULL ? HG_BULK_DESC_BOUND : 0);
    hg_cursor_put_uint(&c, HG_BULK_MAGIC, 4);
    hg_cursor_put_uint(&c, HG_BULK_VERSION, 1);
    hg_cursor_put_uint(&c, flags, 1);
    hg_cursor_put_uint(&c, 0, 2);
    hg_cursor_put_uint(&c, handle->count, 4);
    hg_cursor_put_uint(&c, handle->size, 8);
    for (uint32_t i = 0; i < handle->count; i++) {
        const struct hg_bulk_segment *seg = &handle->segs[i];
        size_t mh_size =
            seg->mh ? NA_Mem_handle_get_serialize_size(na_class, seg->mh) : 0;

        hg_cursor_put_uint(&c, seg->len, 8);
        hg_cursor_put_uint(&c, mh_size, 4);
        if (mh_size > 0) {
            if (NA_Mem_handle_serialize(na_class, c.p, mh_size, seg->mh) !=
                NA_SUCCESS)
                return HG_PROTOCOL_ERROR;
            c.p += mh_size;
        }
    }
    if (handle->addr != HG_ADDR_NULL) {
        hg_size_t addr_size =
            HG_Addr_get_serialize_size(handle->hg_class, handle->addr);

        hg_cursor_put_uint(&c, addr_size, 4);
        if (HG_Addr_serialize(handle->hg_class, c.p, addr_size, handle->addr) !=
            HG_SUCCESS)
            return HG_PROTOCOL_ERROR;
        c.p += addr_size;
        hg_cursor_put_uint(&c, handle->context_id, 1);
    }
    if (eager) {
        for (uint32_t i = 0; i < handle->count; i++)
            hg_cursor_put(&c, handle->segs[i].base, handle->segs[i].len);
    }
    return HG_SUCCESS;
}

hg_return_t
HG_Bulk_deserialize(hg_class_t *hg_class, hg_bulk_t *handle, const void *buf,
                    hg_size_t buf_size)
{
    struct hg_cursor c;
    uint64_t magic, version, flags, reserved, count, total, sum = 0;
    struct hg_bulk *bulk;
    hg_return_t ret = HG_PROTOCOL_ERROR;

    qs_bias_gate();
    /* Checked before the cursor's end is computed: an offset applied to
     * a null pointer is undefined, even when nothing is read. */
    if (hg_class == NULL || handle == NULL || buf == NULL)
        return HG_INVALID_ARG;
    c.p = (uint8_t *) buf;
    c.end = (const uint8_t *) buf + buf_size;
    if (!hg_cursor_get_uint(&c, &magic, 4) ||
        !hg_cursor_get_uint(&c, &version, 1) ||
        !hg_cursor_get_uint(&c, &flags, 1) ||
        !hg_cursor_get_uint(&c, &reserved, 2) ||
        !hg_cursor_get_uint(&c, &count, 4) ||
        !hg_cursor_get_uint(&c, &total, 8))
        return HG_OVERFLOW;
    if (magic != HG_BULK_MAGIC || version != HG_BULK_VERSION ||
        (flags & HG_BULK_READWRITE) == 0 ||
        (flags &
         ~(HG_BULK_READWRITE | HG_BULK_DESC_EAGER | HG_BULK_DESC_BOUND)) != 0 ||
        reserved != 0 || count == 0)
        return HG_PROTOCOL_ERROR;
    /* Only read-only regions are ever embedded. */
    if ((flags & HG_BULK_DESC_EAGER) &&
        (flags & HG_BULK_READWRITE) != HG_BULK_READ_ONLY)
        return HG_PROTOCOL_ERROR;
    /* Each segment needs at least 12 bytes: a count that cannot fit is a
     * lie, refused before anything is allocated for it. */
    if (count > (uint64_t) (c.end - c.p) / 12)
        return HG_OVERFLOW;
    bulk = hg_bulk_alloc(hg_class, (uint32_t) count);
    if (bulk == NULL)
        return HG_NOMEM;
    bulk->remote = true;
    bulk->flags = (uint8_t) (flags & HG_BULK_READWRITE);
    bulk->size = total;
    for (uint32_t i = 0; i < count; i++) {
        struct hg_bulk_segment *seg = &bulk->segs[i];
        uint64_t len, mh_size;

        if (!hg_cursor_get_uint(&c, &len, 8) ||
            !hg_cursor_get_uint(&c, &mh_size, 4) ||
            mh_size > (uint64_t) (c.end - c.p)) {
            ret = HG_OVERFLOW;
            goto error;
        }
        if (len > UINT64_MAX - sum || (len > 0) != (mh_size > 0))
            goto error;
        sum += len;
        seg->len = len;
        if (mh_size > 0) {
            if (NA_Mem_handle_deserialize(hg_core_class_of(hg_class)->na_class,
                                          &seg->mh, c.p,
                                          mh_size) != NA_SUCCESS) {
                seg->mh = NA_MEM_HANDLE_NULL;
                goto error;
            }
            c.p += mh_size;
        }
    }
    if (sum != total)
        goto error;
    if (flags & HG_BULK_DESC_BOUND) {
        uint64_t addr_size, ctx_id;

        if (!hg_cursor_get_uint(&c, &addr_size, 4) ||
            addr_size > (uint64_t) (c.end - c.p)) {
            ret = HG_OVERFLOW;
            goto error;
        }
        if (HG_Addr_deserialize(hg_class, &bulk->addr, c.p, addr_size) !=
            HG_SUCCESS) {
            bulk->addr = HG_ADDR_NULL;
            goto error;
        }
        c.p += addr_size;
        if (!hg_cursor_get_uint(&c, &ctx_id, 1)) {
            ret = HG_OVERFLOW;
            goto error;
        }
        bulk->context_id = (uint8_t) ctx_id;
    }
    if (flags & HG_BULK_DESC_EAGER) {
        if (total > (uint64_t) (c.end - c.p) || total > HG_BULK_EAGER_MAX) {
            ret = HG_OVERFLOW;
            goto error;
        }
        bulk->eager = malloc(total ? total : 1);
        if (bulk->eager == NULL) {
            ret = HG_NOMEM;
            goto error;
        }
        memcpy(bulk->eager, c.p, total);
        c.p += total;
    }
    /* The caller passes the descriptor's exact size. */
    if (c.p != c.end)
        goto error;
    *handle = bulk;
    return HG_SUCCESS;

error:
    HG_Bulk_free(bulk);
    return ret;
}
