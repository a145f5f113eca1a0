/*
 * Memory handles of the TCP plugin: local regions of one or several
 * segments (NA_Mem_handle_create_segments, up to NA_TCP_SEG_MAX), the
 * class's region table that gives each registered region its key (a slot
 * and a generation that changes on every deregistration, so a handle that
 * was forged, belongs to another class or outlived its registration names
 * no live region), and the handles' one wire form: a segmented region is
 * one key and one total length to its peers. na_tcp_rma.c moves the data.
 */
#include "na_tcp_internal.h"

#include <stdlib.h>
#include <string.h>

void
na_tcp_regions_destroy(struct na_tcp_class *cls)
{
    free(cls->regions);
    cls->regions = NULL;
}

static na_return_t
na_tcp_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                         unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *h = calloc(1, sizeof(*h));

    (void) na_class;
    if (h == NULL)
        return NA_NOMEM;
    h->base = buf;
    h->len = buf_size;
    h->flags = (uint32_t) flags;
    h->nseg = 1;
    *mem_handle = h;
    return NA_SUCCESS;
}

static na_return_t
na_tcp_mem_handle_create_segments(na_class_t *na_class,
                                  struct na_segment *segments,
                                  size_t segment_count, unsigned long flags,
                                  na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *h;
    uint64_t total = 0;

    if (segments == NULL || segment_count == 0 ||
        segment_count > NA_TCP_SEG_MAX)
        return NA_INVALID_ARG;
    for (size_t i = 0; i < segment_count; i++) {
        if (segments[i].len > UINT64_MAX - total)
            return NA_INVALID_ARG;
        total += segments[i].len;
    }
    if (segment_count == 1)
        return na_tcp_mem_handle_create(na_class,
                                        (void *) (uintptr_t) segments[0].base,
                                        segments[0].len, flags, mem_handle);
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NA_NOMEM;
    h->segs = malloc(segment_count * sizeof(*h->segs));
    if (h->segs == NULL) {
        free(h);
        return NA_NOMEM;
    }
    memcpy(h->segs, segments, segment_count * sizeof(*h->segs));
    h->nseg = (uint32_t) segment_count;
    h->base = (uint8_t *) (uintptr_t) segments[0].base;
    h->len = total;
    h->flags = (uint32_t) flags;
    *mem_handle = h;
    return NA_SUCCESS;
}

uint8_t *
na_tcp_seg(const struct na_mem_handle *h, uint32_t i, uint64_t *len)
{
    if (h->segs == NULL) {
        *len = h->len;
        return h->base;
    }
    *len = h->segs[i].len;
    return (uint8_t *) (uintptr_t) h->segs[i].base;
}

int
na_tcp_mem_iov(const struct na_mem_handle *h, uint64_t off, uint64_t len,
               struct iovec *iov)
{
    int n = 0;

    for (uint32_t i = 0; i < h->nseg && len != 0; i++) {
        uint64_t slen;
        uint8_t *p = na_tcp_seg(h, i, &slen);
        uint64_t k;

        if (off >= slen) {
            off -= slen;
            continue;
        }
        k = slen - off < len ? slen - off : len;
        iov[n].iov_base = p + off;
        iov[n].iov_len = (size_t) k;
        n++;
        len -= k;
        off = 0;
    }
    return n;
}

static void
na_tcp_region_release(struct na_tcp_class *cls, struct na_mem_handle *h)
{
    uint32_t slot = (uint32_t) h->key;

    cls->regions[slot].h = NULL;
    cls->region_count--;
    h->key = 0;
}

static void
na_tcp_mem_handle_free(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    if (h == NULL)
        return;
    if (!h->remote && h->key != 0) {
        pthread_mutex_lock(&cls->lock);
        na_tcp_region_release(cls, h);
        pthread_mutex_unlock(&cls->lock);
    }
    free(h->segs);
    free(h);
}

static na_return_t
na_tcp_mem_register(na_class_t *na_class, na_mem_handle_t h,
                    enum na_mem_type mem_type, uint64_t device)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    uint32_t slot;

    (void) device;
    if (h->remote || mem_type != NA_MEM_TYPE_HOST)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&cls->lock);
    if (h->key != 0) {
        pthread_mutex_unlock(&cls->lock);
        return NA_EXIST;
    }
    if (cls->region_count == cls->region_cap) {
        uint32_t cap = cls->region_cap ? cls->region_cap * 2 : 64;
        struct na_tcp_region *r = realloc(cls->regions, cap * sizeof(*r));
        if (r == NULL) {
            pthread_mutex_unlock(&cls->lock);
            return NA_NOMEM;
        }
        memset(r + cls->region_cap, 0, (cap - cls->region_cap) * sizeof(*r));
        cls->regions = r;
        cls->region_cap = cap;
    }
    for (slot = 0; cls->regions[slot].h != NULL; slot++)
        ;
    cls->regions[slot].h = h;
    cls->regions[slot].gen =
        ++cls->region_gen ? cls->region_gen : ++cls->region_gen;
    cls->region_count++;
    h->key = NA_TCP_KEY(slot, cls->regions[slot].gen);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_tcp_mem_deregister(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);

    if (h->remote)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&cls->lock);
    if (h->key != 0)
        na_tcp_region_release(cls, h);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_tcp_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                            na_mem_handle_t h)
{
    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_TCP_MEM_HANDLE_SIZE))
        return NA_OVERFLOW;
    na_tcp_mem_encode(buf, h->flags, h->key, h->len);
    return NA_SUCCESS;
}

/* Untrusted bytes: the result is only ever an RMA target, whose key the
 * target checks against its own table. */
static na_return_t
na_tcp_mem_handle_deserialize(na_class_t *na_class, na_mem_handle_t *mem_handle,
                              const void *buf, size_t buf_size)
{
    struct na_mem_handle *h;
    uint32_t flags;
    uint64_t key, len;
    na_return_t ret;

    (void) na_class;
    ret = na_tcp_mem_decode(buf, buf_size, &flags, &key, &len);
    if (ret != NA_SUCCESS)
        return ret;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NA_NOMEM;
    h->flags = flags;
    h->key = key;
    h->len = len;
    h->remote = true;
    *mem_handle = h;
    return NA_SUCCESS;
}

const struct na_mem_ops na_tcp_mem_ops = {
    .handle_create = na_tcp_mem_handle_create,
    .handle_create_segments = na_tcp_mem_handle_create_segments,
    .handle_free = na_tcp_mem_handle_free,
    .mem_register = na_tcp_mem_register,
    .mem_deregister = na_tcp_mem_deregister,
    .handle_serialize = na_tcp_mem_handle_serialize,
    .handle_deserialize = na_tcp_mem_handle_deserialize,
    .rma = na_tcp_rma,
};
