/*
 * RMA of the TCP plugin, emulated on the stream.
 *
 * Registering a region puts it in the class's slot table and gives it a
 * key: the slot and a generation that changes on every deregistration, so
 * a handle that was forged, belongs to another class or outlived its
 * registration names no live region. The target trusts nothing of a
 * handle but its key: it checks the key, the range (against its own
 * record of the region) and the permission before it touches a byte, and
 * answers a refusal with a status (NA_ACCESS, NA_FAULT, NA_PERMISSION at
 * the origin).
 *
 * A get sends (token, key, offset, length); the answer is written with
 * a gathered sendmsg straight from the region, and the origin reads it straight
 * into the destination. A put sends the data after its header; the target reads
 * it straight into the region (or skips it, refused) and answers with an
 * acknowledgement. The origin finds its op by the token; an answer whose op was
 * cancelled is skipped.
 */
#include "na_tcp_internal.h"

#include <stdlib.h>
#include <string.h>

#define NA_TCP_KEY(slot, gen) (((uint64_t) (gen) << 32) | (uint64_t) (slot))

void
na_tcp_regions_destroy(struct na_tcp_class *cls)
{
    free(cls->regions);
    cls->regions = NULL;
}

na_return_t
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
    *mem_handle = h;
    return NA_SUCCESS;
}

static void
na_tcp_region_release(struct na_tcp_class *cls, struct na_mem_handle *h)
{
    uint32_t slot = (uint32_t) h->key;

    cls->regions[slot].h = NULL;
    cls->region_count--;
    h->key = 0;
}

void
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
    free(h);
}

na_return_t
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

na_return_t
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

size_t
na_tcp_mem_handle_get_serialize_size(na_class_t *na_class, na_mem_handle_t h)
{
    (void) na_class;
    (void) h;
    return NA_TCP_MEM_HANDLE_SIZE;
}

na_return_t
na_tcp_mem_handle_serialize(na_class_t *na_class, void *buf, size_t buf_size,
                            na_mem_handle_t h)
{
    (void) na_class;
    if (buf_size < NA_TCP_MEM_HANDLE_SIZE)
        return NA_OVERFLOW;
    na_tcp_mem_encode(buf, h->flags, h->key, h->len);
    return NA_SUCCESS;
}

/* Untrusted bytes: the result is only ever an RMA target, whose key the
 * target checks against its own table. */
na_return_t
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

/* The target's check of (key, offset, len) for a read or a write (lock
 * held); *base is the first byte on success. */
static uint8_t
na_tcp_region_check(struct na_tcp_class *cls, uint64_t key, uint64_t offset,
                    uint64_t len, bool write, uint8_t **base)
{
    uint32_t slot = (uint32_t) key;
    struct na_mem_handle *h;

    if (slot >= cls->region_cap || cls->regions[slot].h == NULL ||
        NA_TCP_KEY(slot, cls->regions[slot].gen) != key)
        return NA_TCP_ST_KEY;
    h = cls->regions[slot].h;
    if (offset > h->len || len > h->len - offset)
        return NA_TCP_ST_RANGE;
    if (!(h->flags & (write ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY)))
        return NA_TCP_ST_PERM;
    *base = h->base + offset;
    return NA_TCP_ST_OK;
}

static na_return_t
na_tcp_status_ret(uint8_t status)
{
    switch (status) {
    case NA_TCP_ST_OK:
        return NA_SUCCESS;
    case NA_TCP_ST_RANGE:
        return NA_FAULT;
    case NA_TCP_ST_PERM:
        return NA_PERMISSION;
    default:
        return NA_ACCESS;
    }
}

static struct na_op_id *
na_tcp_rma_find(struct na_tcp_conn *c, uint64_t token, na_cb_type_t type)
{
    struct na_op_id *op;

    TAILQ_FOREACH(op, &c->rma, entry)
    {
        if (op->u.rma.token == token)
            return op->type == type ? op : NULL;
    }
    return NULL;
}

static void
na_tcp_rma_finish(struct na_tcp_conn *c, struct na_op_id *op, na_return_t ret)
{
    TAILQ_REMOVE(&c->rma, op, entry);
    op->conn = NULL;
    na_tcp_op_complete(op, ret);
}

void
na_tcp_rma_frame(struct na_tcp_conn *c, const struct na_tcp_hdr *h)
{
    struct na_tcp_hdr a = {
        .src_id = h->dst_id, .dst_id = h->src_id, .token = h->token};
    struct na_op_id *op;
    uint8_t *base = NULL;

    c->rx_hdr = *h;
    c->rx_op = NULL;
    c->rx_left = 0;
    switch (h->type) {
    case NA_TCP_GET_REQ:
        a.type = NA_TCP_GET_RESP;
        a.status = na_tcp_region_check(c->cls, h->key, h->offset, h->len, false,
                                       &base);
        a.len = a.status == NA_TCP_ST_OK ? h->len : 0;
        if (!na_tcp_conn_send_frame(c, &a, base, (size_t) a.len))
            c->dead = true;
        return;
    case NA_TCP_PUT:
        c->rx_status =
            na_tcp_region_check(c->cls, h->key, h->offset, h->len, true, &base);
        c->rx_state =
            c->rx_status == NA_TCP_ST_OK ? NA_TCP_RX_DIRECT : NA_TCP_RX_DISCARD;
        c->rx_dst = base;
        c->rx_left = h->len;
        break;
    case NA_TCP_GET_RESP:
        op = na_tcp_rma_find(c, h->token, NA_CB_GET);
        if (op != NULL && h->status != NA_TCP_ST_OK) {
            na_tcp_rma_finish(c, op, na_tcp_status_ret(h->status));
            return;
        }
        if (op != NULL && h->len != op->u.rma.size) {
            na_plugin_log_error("tcp", "get answer of the wrong size");
            c->dead = true;
            return;
        }
        c->rx_state = op != NULL ? NA_TCP_RX_DIRECT : NA_TCP_RX_DISCARD;
        c->rx_dst = op != NULL ? op->u.rma.local : NULL;
        c->rx_op = op;
        if (op != NULL)
            op->u.rma.started = true;
        c->rx_left = h->len;
        break;
    case NA_TCP_PUT_ACK:
        op = na_tcp_rma_find(c, h->token, NA_CB_PUT);
        if (op != NULL)
            na_tcp_rma_finish(c, op, na_tcp_status_ret(h->status));
        return;
    default:
        return;
    }
    if (c->rx_left == 0)
        na_tcp_rma_data_done(c);
}

void
na_tcp_rma_data_done(struct na_tcp_conn *c)
{
    const struct na_tcp_hdr *h = &c->rx_hdr;

    c->rx_state = NA_TCP_RX_HDR;
    if (h->type == NA_TCP_GET_RESP && c->rx_op != NULL) {
        na_tcp_rma_finish(c, c->rx_op, NA_SUCCESS);
    } else if (h->type == NA_TCP_PUT) {
        struct na_tcp_hdr a = {.type = NA_TCP_PUT_ACK,
                               .src_id = h->dst_id,
                               .dst_id = h->src_id,
                               .status = c->rx_status,
                               .token = h->token};
        if (!na_tcp_conn_send_frame(c, &a, NULL, 0))
            c->dead = true;
    }
    c->rx_op = NULL;
}

/* RMA within the class: the same checks, then a copy. */
static na_return_t
na_tcp_rma_self(struct na_tcp_class *cls, const struct na_op_desc *desc,
                uint8_t *local)
{
    uint8_t *base = NULL;
    uint8_t st;

    pthread_mutex_lock(&cls->lock);
    st = na_tcp_region_check(cls, desc->remote_mem_handle->key,
                             desc->remote_offset, desc->data_size,
                             desc->type == NA_CB_PUT, &base);
    if (st == NA_TCP_ST_OK && desc->data_size != 0) {
        if (desc->type == NA_CB_PUT)
            memmove(base, local, desc->data_size);
        else
            memmove(local, base, desc->data_size);
    }
    pthread_mutex_unlock(&cls->lock);
    return na_tcp_status_ret(st);
}

na_return_t
na_tcp_rma(na_class_t *na_class, const struct na_op_desc *desc, na_op_id_t *op)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = desc->context->plugin_context;
    struct na_mem_handle *lh = desc->local_mem_handle;
    struct na_mem_handle *rh = desc->remote_mem_handle;
    bool put = desc->type == NA_CB_PUT;
    size_t size = desc->data_size;
    struct na_tcp_hdr h = {.type = put ? NA_TCP_PUT : NA_TCP_GET_REQ,
                           .src_id = pc->base.id,
                           .dst_id = desc->addr_id,
                           .key = rh->key,
                           .offset = desc->remote_offset,
                           .len = size};
    struct na_tcp_conn *conn;
    uint8_t *local;

    if (lh->remote)
        return NA_INVALID_ARG;
    if (desc->local_offset > lh->len || size > lh->len - desc->local_offset ||
        desc->remote_offset > rh->len || size > rh->len - desc->remote_offset)
        return NA_INVALID_ARG;
    if (!(rh->flags & (put ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY)))
        return NA_PERMISSION;
    local = lh->base + desc->local_offset;
    na_tcp_op_start(op, desc, desc->addr);
    if (desc->addr->self) {
        na_return_t ret = na_tcp_rma_self(cls, desc, local);
        pthread_mutex_lock(&cls->lock);
        na_tcp_op_complete(op, ret);
        pthread_mutex_unlock(&cls->lock);
        na_tcp_wake_local(cls);
        return NA_SUCCESS;
    }
    pthread_mutex_lock(&cls->lock);
    conn = na_tcp_conn_get(cls, desc->addr);
    if (conn == NULL) {
        na_tcp_op_complete(op, NA_HOSTUNREACH);
        pthread_mutex_unlock(&cls->lock);
        na_tcp_wake_local(cls);
        return NA_SUCCESS;
    }
    op->u.rma.local = local;
    op->u.rma.size = size;
    op->u.rma.token = h.token = ++conn->rma_seq;
    op->u.rma.started = false;
    op->conn = conn;
    op->queue = NA_TCP_Q_RMA;
    TAILQ_INSERT_TAIL(&conn->rma, op, entry);
    na_tcp_tx_init(&op->tx, &h, put ? local : NULL, put ? size : 0);
    op->tx.op = op;
    op->tx.msg = false;
    op->tx.heap = false;
    na_tcp_conn_send(conn, &op->tx);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}
