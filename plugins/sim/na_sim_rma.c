/*
 * Memory handles and one-sided RMA.
 *
 * Registering a handle gives it a key unique in the world and enters it in
 * the world's registry; a serialized handle carries the owner's name, the
 * key and the segment lengths, never addresses. A put or get finds both
 * regions by key when it executes, as a NIC does, and checks registration,
 * permission and bounds before copying a byte. Violations complete with
 * NA_ACCESS (unknown, revoked or foreign key; missing remote permission)
 * or NA_FAULT (a range outside its region).
 */
#include "na_sim_fault.h"

#include <stdlib.h>
#include <string.h>

#define NA_SIM_MEM_VERSION 1
/* version, flags, name length | name | incarnation, key, total, count. */
#define NA_SIM_MEM_HEAD_SIZE 3
#define NA_SIM_MEM_TAIL_SIZE (8 + 8 + 8 + 4)

struct na_mem_handle {
    unsigned long flags;           /* access granted to peers             */
    bool remote;                   /* deserialized: someone else's memory */
    struct na_sim_node *owner;     /* local: the creating node            */
    uint64_t key;                  /* 0 while not registered (local)      */
    struct na_sim_name owner_name; /* remote: where the memory lives  */
    uint64_t owner_incarnation;    /* remote                          */
    size_t total_len;
    size_t seg_count;
    struct na_segment segs[]; /* remote handles: base is 0           */
};

static struct na_mem_handle *
na_sim_mem_alloc(size_t seg_count)
{
    if (seg_count >
        (SIZE_MAX - sizeof(struct na_mem_handle)) / sizeof(struct na_segment))
        return NULL;
    return calloc(1, sizeof(struct na_mem_handle) +
                         seg_count * sizeof(struct na_segment));
}

/*
 * Registry: regions sorted by key. Keys only grow, so a new region is
 * appended; lookups are binary searches.
 */

static size_t
na_sim_region_index(const struct na_sim_world *world, uint64_t key)
{
    size_t lo = 0, hi = world->region_len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (world->regions[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct na_sim_region *
na_sim_region_find(struct na_sim_world *world, uint64_t key)
{
    size_t i = na_sim_region_index(world, key);

    if (i < world->region_len && world->regions[i].key == key)
        return &world->regions[i];
    return NULL;
}

static void
na_sim_region_remove(struct na_sim_world *world, uint64_t key)
{
    size_t i = na_sim_region_index(world, key);

    if (i >= world->region_len || world->regions[i].key != key)
        return;
    memmove(&world->regions[i], &world->regions[i + 1],
            (world->region_len - i - 1) * sizeof(world->regions[0]));
    world->region_len--;
}

void
na_sim_regions_drop_node(struct na_sim_world *world, struct na_sim_node *node)
{
    size_t out = 0;

    for (size_t i = 0; i < world->region_len; i++) {
        if (world->regions[i].node == node)
            world->regions[i].handle->key = 0;
        else
            world->regions[out++] = world->regions[i];
    }
    world->region_len = out;
}

/*
 * Handle ops.
 */

static na_return_t
na_sim_mem_handle_create_segments(na_class_t *na_class,
                                  struct na_segment *segments,
                                  size_t segment_count, unsigned long flags,
                                  na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *h;
    size_t total = 0;

    if (segment_count == 0 || segment_count > NA_SIM_MEM_MAX_SEGMENTS)
        return NA_INVALID_ARG;
    for (size_t i = 0; i < segment_count; i++) {
        if (segments[i].len > SIZE_MAX - total)
            return NA_OVERFLOW;
        if (segments[i].base == 0 && segments[i].len > 0)
            return NA_INVALID_ARG;
        total += segments[i].len;
    }
    h = na_sim_mem_alloc(segment_count);
    if (h == NULL)
        return NA_NOMEM;
    h->flags = flags;
    h->owner = na_class->plugin_class;
    h->total_len = total;
    h->seg_count = segment_count;
    memcpy(h->segs, segments, segment_count * sizeof(*segments));
    *mem_handle = h;
    return NA_SUCCESS;
}

static na_return_t
na_sim_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                         unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_segment seg = {.base = (uint64_t) (uintptr_t) buf,
                             .len = buf_size};

    return na_sim_mem_handle_create_segments(na_class, &seg, 1, flags,
                                             mem_handle);
}

static void
na_sim_mem_handle_free(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_sim_node *node = na_class->plugin_class;

    /* Freeing a registered handle revokes its key first, so no later RMA
     * can reach memory its owner may already have released. */
    if (!h->remote) {
        pthread_mutex_lock(&node->world->lock);
        if (h->key != 0)
            na_sim_region_remove(node->world, h->key);
        pthread_mutex_unlock(&node->world->lock);
    }
    free(h);
}

static na_return_t
na_sim_mem_register(na_class_t *na_class, na_mem_handle_t h,
                    enum na_mem_type mem_type, uint64_t device)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    struct na_sim_region *regions;
    na_return_t ret = NA_SUCCESS;

    (void) mem_type;
    (void) device;
    if (h->remote || h->owner != node)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&world->lock);
    if (h->key != 0) {
        ret = NA_EXIST;
        goto unlock;
    }
    if (world->region_len == world->region_cap) {
        size_t cap = world->region_cap ? world->region_cap * 2 : 16;

        regions = realloc(world->regions, cap * sizeof(*regions));
        if (regions == NULL) {
            ret = NA_NOMEM;
            goto unlock;
        }
        world->regions = regions;
        world->region_cap = cap;
    }
    /* A counter keeps keys unique for the world's whole life, so a stale
     * handle never reaches a later region; the PRNG bits make keys differ
     * between seeds, as real keys differ between runs. */
    h->key = (world->next_key++ << 16) | (na_sim_prng_next(world) & 0xffff);
    world->regions[world->region_len++] =
        (struct na_sim_region){.key = h->key, .node = node, .handle = h};
    na_sim_trace(world, na_sim_now(world), world->next_seq++, "register",
                 node->name.str, node->name.str, h->total_len, 0);
unlock:
    pthread_mutex_unlock(&world->lock);
    return ret;
}

static na_return_t
na_sim_mem_deregister(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    na_return_t ret = NA_SUCCESS;

    if (h->remote)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&world->lock);
    if (h->key == 0)
        ret = NA_INVALID_ARG;
    else {
        na_sim_region_remove(world, h->key);
        h->key = 0;
        na_sim_trace(world, na_sim_now(world), world->next_seq++, "deregister",
                     node->name.str, node->name.str, h->total_len, 0);
    }
    pthread_mutex_unlock(&world->lock);
    return ret;
}

/*
 * Serialization.
 */

static const struct na_sim_name *
na_sim_mem_owner(const struct na_mem_handle *h, uint64_t *incarnation)
{
    if (h->remote) {
        *incarnation = h->owner_incarnation;
        return &h->owner_name;
    }
    *incarnation = h->owner->incarnation;
    return &h->owner->name;
}

/* The bytes of a handle's serialized form. */
static size_t
na_sim_mem_wire_size(na_mem_handle_t h)
{
    uint64_t inc;

    return NA_SIM_MEM_HEAD_SIZE + na_sim_mem_owner(h, &inc)->len +
           NA_SIM_MEM_TAIL_SIZE + 8 * h->seg_count;
}

static na_return_t
na_sim_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                            na_mem_handle_t h)
{
    struct na_sim_node *node = na_class->plugin_class;
    unsigned char *p = buf;
    const struct na_sim_name *owner;
    uint64_t inc, key;

    if (!na_plugin_serialize_room(buf, buf_size, na_sim_mem_wire_size(h)))
        return NA_OVERFLOW;
    pthread_mutex_lock(&node->world->lock);
    owner = na_sim_mem_owner(h, &inc); /* a restart changes incarnations */
    key = h->key;
    pthread_mutex_unlock(&node->world->lock);
    /* An unregistered handle travels with key 0, which no region ever
     * has: RMA on it fails with NA_ACCESS, as on an unregistered NIC. */
    *p++ = NA_SIM_MEM_VERSION;
    *p++ = (unsigned char) h->flags;
    *p++ = owner->len;
    memcpy(p, owner->str, owner->len);
    p += owner->len;
    na_sim_put_u64(p, inc);
    na_sim_put_u64(p + 8, key);
    na_sim_put_u64(p + 16, h->total_len);
    for (int i = 0; i < 4; i++)
        p[24 + i] = (unsigned char) (h->seg_count >> (8 * i));
    p += NA_SIM_MEM_TAIL_SIZE;
    for (size_t i = 0; i < h->seg_count; i++, p += 8)
        na_sim_put_u64(p, h->segs[i].len);
    return NA_SUCCESS;
}

/* Untrusted bytes: every field is checked against what remains of the
 * buffer before it is read, and the lengths must add up to the total. */
static na_return_t
na_sim_mem_handle_deserialize(na_class_t *na_class, na_mem_handle_t *mem_handle,
                              const void *buf, size_t buf_size)
{
    const unsigned char *p = buf;
    struct na_sim_name owner;
    struct na_mem_handle *h;
    uint64_t total, sum = 0;
    size_t left, count = 0;
    unsigned long flags;

    (void) na_class;
    if (buf_size < NA_SIM_MEM_HEAD_SIZE)
        return NA_MSGSIZE;
    flags = p[1];
    if (p[0] != NA_SIM_MEM_VERSION)
        return NA_PROTOCOL_ERROR;
    if (p[1] != NA_MEM_READ_ONLY && p[1] != NA_MEM_WRITE_ONLY &&
        p[1] != NA_MEM_READWRITE)
        return NA_PROTOCOL_ERROR;
    left = buf_size - NA_SIM_MEM_HEAD_SIZE;
    if (left < (size_t) p[2] + NA_SIM_MEM_TAIL_SIZE)
        return NA_MSGSIZE;
    if (!na_sim_name_parse((const char *) p + 3, p[2], &owner))
        return NA_PROTOCOL_ERROR;
    left -= owner.len + NA_SIM_MEM_TAIL_SIZE;
    p += NA_SIM_MEM_HEAD_SIZE + owner.len;
    total = na_sim_get_u64(p + 16);
    for (int i = 3; i >= 0; i--)
        count = (count << 8) | p[24 + i];
    if (count == 0 || count > NA_SIM_MEM_MAX_SEGMENTS)
        return NA_PROTOCOL_ERROR;
    if (left / 8 < count)
        return NA_MSGSIZE;
    if (total > SIZE_MAX)
        return NA_OVERFLOW;
    for (size_t i = 0; i < count; i++) {
        uint64_t len = na_sim_get_u64(p + NA_SIM_MEM_TAIL_SIZE + 8 * i);

        if (len > total - sum)
            return NA_PROTOCOL_ERROR;
        sum += len;
    }
    if (sum != total)
        return NA_PROTOCOL_ERROR;
    h = na_sim_mem_alloc(count);
    if (h == NULL)
        return NA_NOMEM;
    h->flags = flags;
    h->remote = true;
    h->owner_name = owner;
    h->owner_incarnation = na_sim_get_u64(p);
    h->key = na_sim_get_u64(p + 8);
    h->total_len = (size_t) total;
    h->seg_count = count;
    for (size_t i = 0; i < count; i++)
        h->segs[i].len =
            (size_t) na_sim_get_u64(p + NA_SIM_MEM_TAIL_SIZE + 8 * i);
    *mem_handle = h;
    return NA_SUCCESS;
}

/*
 * Put and get.
 */

static na_return_t
na_sim_rma_post(na_class_t *na_class, const struct na_op_desc *desc,
                na_op_id_t *op)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    na_mem_handle_t local = desc->local_mem_handle;
    na_addr_t remote_addr = desc->addr;
    size_t data_size = desc->data_size;
    uint64_t when;
    na_return_t ret;

    /* The local side must be this node's own registered memory: a NIC
     * cannot DMA from or into memory it was never given. */
    if (local->remote || local->owner != node)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&world->lock);
    if (local->key == 0) {
        ret = NA_INVALID_ARG;
        goto unlock;
    }
    na_sim_op_post(node, desc->context->plugin_context, op, desc->type);
    op->size = data_size;
    op->tag = 0;
    op->peer_ctx_id = desc->addr_id;
    op->peer = na_sim_addr_ref(remote_addr);
    op->local_key = local->key;
    op->local_offset = desc->local_offset;
    op->remote_key = desc->remote_mem_handle->key;
    op->remote_offset = desc->remote_offset;
    /* A put carries its data out; a get sends a request and waits for the
     * data to come back. No transfer moves more than the local region
     * holds, so an over-long request is charged for that much and fails
     * its bounds check then, rather than at the end of time. */
    if (data_size > local->total_len)
        data_size = local->total_len;
    if (desc->type == NA_CB_PUT)
        when = na_sim_transfer_time(world, &node->name, &remote_addr->name,
                                    data_size);
    else
        when = na_sim_add_sat(
            na_sim_transfer_time(world, &node->name, &remote_addr->name, 0),
            na_sim_transfer_time(world, &remote_addr->name, &node->name,
                                 data_size));
    when = na_sim_add_sat(na_sim_now(world), when);
    ret = na_sim_op_schedule(world, op, &node->name, &remote_addr->name, when,
                             NA_SIM_EV_RMA);
unlock:
    pthread_mutex_unlock(&world->lock);
    return ret;
}

/* A position inside a handle: segment index and offset in it. */
struct na_sim_cursor {
    const struct na_mem_handle *h;
    size_t seg;
    size_t off;
};

static struct na_sim_cursor
na_sim_cursor_at(const struct na_mem_handle *h, uint64_t offset)
{
    struct na_sim_cursor c = {.h = h, .seg = 0, .off = (size_t) offset};

    while (c.seg < h->seg_count && c.off >= h->segs[c.seg].len) {
        c.off -= h->segs[c.seg].len;
        c.seg++;
    }
    return c;
}

/* Bytes left in the cursor's segment, skipping empty segments. */
static size_t
na_sim_cursor_span(struct na_sim_cursor *c)
{
    while (c->seg < c->h->seg_count && c->off >= c->h->segs[c->seg].len) {
        c->off = 0;
        c->seg++;
    }
    return c->seg < c->h->seg_count ? c->h->segs[c->seg].len - c->off : 0;
}

static unsigned char *
na_sim_cursor_ptr(const struct na_sim_cursor *c)
{
    return (unsigned char *) (uintptr_t) c->h->segs[c->seg].base + c->off;
}

/* Copy segment by segment; memmove because a node may target itself. */
static void
na_sim_rma_copy(const struct na_mem_handle *dst, uint64_t dst_offset,
                const struct na_mem_handle *src, uint64_t src_offset,
                size_t size)
{
    struct na_sim_cursor d = na_sim_cursor_at(dst, dst_offset);
    struct na_sim_cursor s = na_sim_cursor_at(src, src_offset);

    while (size > 0) {
        size_t n = size, ds = na_sim_cursor_span(&d),
               ss = na_sim_cursor_span(&s);

        if (ds < n)
            n = ds;
        if (ss < n)
            n = ss;
        memmove(na_sim_cursor_ptr(&d), na_sim_cursor_ptr(&s), n);
        d.off += n;
        s.off += n;
        size -= n;
    }
}

/* The checks a NIC makes, in its order: keys, permission, bounds. Then
 * `land` bytes move (all of them unless a partial-RMA fault cut it). */
static na_return_t
na_sim_rma_transfer(struct na_sim_world *world, const struct na_op_id *op,
                    size_t land)
{
    const struct na_sim_region *local, *remote;
    struct na_sim_node *target;
    unsigned long need =
        op->type == NA_CB_PUT ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY;

    local = na_sim_region_find(world, op->local_key);
    if (local == NULL || local->node != op->node)
        return NA_ACCESS;
    target = na_sim_node_of(world, op->peer);
    if (target == NULL)
        return NA_HOSTUNREACH;
    remote = na_sim_region_find(world, op->remote_key);
    if (remote == NULL || remote->node != target)
        return NA_ACCESS;
    if ((remote->handle->flags & need) == 0)
        return NA_ACCESS;
    if (!na_plugin_range_ok(local->handle->total_len, op->local_offset,
                            op->size) ||
        !na_plugin_range_ok(remote->handle->total_len, op->remote_offset,
                            op->size))
        return NA_FAULT;
    if (land > op->size)
        land = op->size;
    if (op->type == NA_CB_PUT)
        na_sim_rma_copy(remote->handle, op->remote_offset, local->handle,
                        op->local_offset, land);
    else
        na_sim_rma_copy(local->handle, op->local_offset, remote->handle,
                        op->remote_offset, land);
    return NA_SUCCESS;
}

void
na_sim_rma_execute(struct na_sim_world *world, struct na_op_id *op)
{
    struct na_sim_fault fault;

    if (op->canceled) {
        na_sim_op_complete(world, op, NA_CANCELED);
        return;
    }
    fault = na_sim_fault_on_deliver(world, op, na_sim_node_of(world, op->peer));
    if (fault.verdict == NA_SIM_V_RETRY) {
        /* Held by a silent partition until it ends. */
        if (na_sim_schedule(world,
                            na_sim_add_sat(na_sim_now(world), fault.delay),
                            NA_SIM_EV_RMA, op) != NA_SUCCESS)
            na_sim_op_complete(world, op, NA_NOMEM);
        return;
    }
    if (fault.verdict != NA_SIM_V_DELIVER) {
        /* RMA is never dropped: only failures reach here. */
        na_sim_fault_fail_later(world, op, fault.ret, fault.delay);
        return;
    }
    if (fault.partial) {
        /* The link died mid-transfer: a prefix landed, then the error. */
        size_t land = (size_t) (fault.bits % op->size);
        na_return_t ret = na_sim_rma_transfer(world, op, land);

        na_sim_fault_trace(world, op, "partial", op->node->name.str,
                           op->peer->name.str, land);
        na_sim_op_complete(world, op, ret == NA_SUCCESS ? NA_IO_ERROR : ret);
        return;
    }
    na_sim_op_complete(world, op, na_sim_rma_transfer(world, op, op->size));
}

const struct na_mem_ops na_sim_mem_ops = {
    .handle_create = na_sim_mem_handle_create,
    .handle_create_segments = na_sim_mem_handle_create_segments,
    .handle_free = na_sim_mem_handle_free,
    .mem_register = na_sim_mem_register,
    .mem_deregister = na_sim_mem_deregister,
    .handle_serialize = na_sim_mem_handle_serialize,
    .handle_deserialize = na_sim_mem_handle_deserialize,
    .rma = na_sim_rma_post,
};
