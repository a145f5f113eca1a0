/*
 * RMA of the TCP plugin, emulated on the stream.
 *
 * Regions and their keys are na_tcp_mem.c's. The target trusts nothing of
 * a handle but its key: it checks the key, the range (against its own
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
 *
 * A region made of several segments (NA_Mem_handle_create_segments, up to
 * NA_TCP_SEG_MAX) is one key and one range to its peers: a frame's data
 * is gathered from, or read into, the segments the range covers, so the
 * wire forms are those of a single segment.
 */
#include "na_tcp_internal.h"

#include <stdlib.h>
#include <string.h>

/* Point conn's reading at byte `off` of local region h, `len` bytes
 * (inside it, len not 0). */
static void
na_tcp_rx_seek(struct na_tcp_conn *c, const struct na_mem_handle *h,
               uint64_t off)
{
    uint64_t slen = 0;
    uint8_t *p = NULL;
    uint32_t i;

    for (i = 0; i < h->nseg; i++) {
        p = na_tcp_seg(h, i, &slen);
        if (off < slen)
            break;
        off -= slen;
    }
    c->rx_cur.h = h;
    c->rx_cur.seg = i;
    c->rx_dst = p + off;
    c->rx_seg_left = slen - off;
}

/* The region a put writes into may be deregistered while its data
 * arrives (the caller's race): its segments are looked up again through
 * the class's table, and the rest is skipped when it is gone. */
void
na_tcp_rx_next_seg(struct na_tcp_conn *c)
{
    const struct na_mem_handle *h = c->rx_cur.h;
    uint64_t slen = 0;
    uint8_t *p;

    if (c->rx_hdr.type == NA_TCP_PUT) {
        uint32_t slot = (uint32_t) c->rx_hdr.key;
        struct na_tcp_class *cls = c->cls;
        if (slot >= cls->region_cap || cls->regions[slot].h != h ||
            NA_TCP_KEY(slot, cls->regions[slot].gen) != c->rx_hdr.key) {
            c->rx_state = NA_TCP_RX_DISCARD;
            c->rx_status = NA_TCP_ST_KEY;
            return;
        }
    }
    do {
        c->rx_cur.seg++;
        p = na_tcp_seg(h, c->rx_cur.seg, &slen);
    } while (slen == 0);
    c->rx_dst = p;
    c->rx_seg_left = slen;
}

/* The target's check of (key, offset, len) for a read or a write (lock
 * held); *region is the region on success. */
static uint8_t
na_tcp_region_check(struct na_tcp_class *cls, uint64_t key, uint64_t offset,
                    uint64_t len, bool write, struct na_mem_handle **region)
{
    uint32_t slot = (uint32_t) key;
    struct na_mem_handle *h;

    if (slot >= cls->region_cap || cls->regions[slot].h == NULL ||
        NA_TCP_KEY(slot, cls->regions[slot].gen) != key)
        return NA_TCP_ST_KEY;
    h = cls->regions[slot].h;
    if (!na_plugin_range_ok(h->len, offset, len))
        return NA_TCP_ST_RANGE;
    if (!(h->flags & (write ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY)))
        return NA_TCP_ST_PERM;
    *region = h;
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

    for (op = na_op_list_first(&c->rma); op != NULL; op = na_op_list_next(op)) {
        if (op->u.rma.token == token)
            return op->type == type ? op : NULL;
    }
    return NULL;
}

static void
na_tcp_rma_finish(struct na_op_id *op, na_return_t ret)
{
    na_op_list_remove(op);
    op->conn = NULL;
    na_tcp_op_complete(op, ret);
}

void
na_tcp_rma_frame(struct na_tcp_conn *c, const struct na_tcp_hdr *h)
{
    struct na_tcp_hdr a = {
        .src_id = h->dst_id, .dst_id = h->src_id, .token = h->token};
    struct iovec iov[NA_TCP_SEG_MAX];
    struct na_mem_handle *region = NULL;
    struct na_op_id *op;
    int n = 0;

    c->rx_hdr = *h;
    c->rx_op = NULL;
    c->rx_left = 0;
    switch (h->type) {
    case NA_TCP_GET_REQ:
        a.type = NA_TCP_GET_RESP;
        a.status = na_tcp_region_check(c->cls, h->key, h->offset, h->len, false,
                                       &region);
        a.len = a.status == NA_TCP_ST_OK ? h->len : 0;
        if (a.len != 0)
            n = na_tcp_mem_iov(region, h->offset, h->len, iov);
        if (!na_tcp_conn_send_frame(c, &a, iov, n))
            c->dead = true;
        return;
    case NA_TCP_PUT:
        c->rx_status = na_tcp_region_check(c->cls, h->key, h->offset, h->len,
                                           true, &region);
        c->rx_state =
            c->rx_status == NA_TCP_ST_OK ? NA_TCP_RX_DIRECT : NA_TCP_RX_DISCARD;
        c->rx_left = h->len;
        if (c->rx_state == NA_TCP_RX_DIRECT && h->len != 0)
            na_tcp_rx_seek(c, region, h->offset);
        break;
    case NA_TCP_GET_RESP:
        op = na_tcp_rma_find(c, h->token, NA_CB_GET);
        if (op != NULL && h->status != NA_TCP_ST_OK) {
            na_tcp_rma_finish(op, na_tcp_status_ret(h->status));
            return;
        }
        if (op != NULL && h->len != op->u.rma.size) {
            na_plugin_log_error("tcp", "get answer of the wrong size");
            c->dead = true;
            return;
        }
        c->rx_state = op != NULL ? NA_TCP_RX_DIRECT : NA_TCP_RX_DISCARD;
        c->rx_op = op;
        if (op != NULL)
            op->u.rma.started = true;
        c->rx_left = h->len;
        if (op != NULL && h->len != 0)
            na_tcp_rx_seek(c, op->u.rma.lh, op->u.rma.loff);
        break;
    case NA_TCP_PUT_ACK:
        op = na_tcp_rma_find(c, h->token, NA_CB_PUT);
        if (op != NULL)
            na_tcp_rma_finish(op, na_tcp_status_ret(h->status));
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
        na_tcp_rma_finish(c->rx_op, NA_SUCCESS);
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

/* RMA within the class: the same checks, then a copy, piece by piece
 * (either side may be several segments). */
static na_return_t
na_tcp_rma_self(struct na_tcp_class *cls, const struct na_op_desc *desc)
{
    struct na_mem_handle *region = NULL, *lh = desc->local_mem_handle;
    struct iovec liov[NA_TCP_SEG_MAX], riov[NA_TCP_SEG_MAX];
    bool put = desc->type == NA_CB_PUT;
    uint8_t st;

    pthread_mutex_lock(&cls->lock);
    st =
        na_tcp_region_check(cls, desc->remote_mem_handle->key,
                            desc->remote_offset, desc->data_size, put, &region);
    if (st == NA_TCP_ST_OK && desc->data_size != 0) {
        int ln = na_tcp_mem_iov(lh, desc->local_offset, desc->data_size, liov);
        int rn =
            na_tcp_mem_iov(region, desc->remote_offset, desc->data_size, riov);
        int li = 0, ri = 0;
        size_t lo = 0, ro = 0;

        while (li < ln && ri < rn) {
            size_t lk = liov[li].iov_len - lo, rk = riov[ri].iov_len - ro;
            size_t k = lk < rk ? lk : rk;
            uint8_t *l = (uint8_t *) liov[li].iov_base + lo;
            uint8_t *r = (uint8_t *) riov[ri].iov_base + ro;

            if (put)
                memmove(r, l, k);
            else
                memmove(l, r, k);
            lo += k;
            ro += k;
            if (lo == liov[li].iov_len) {
                li++;
                lo = 0;
            }
            if (ro == riov[ri].iov_len) {
                ri++;
                ro = 0;
            }
        }
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
    struct iovec iov[NA_TCP_SEG_MAX];
    struct na_tcp_conn *conn;
    na_return_t ret;

    if (lh->remote)
        return NA_INVALID_ARG;
    ret = na_plugin_rma_check(desc, lh->len, rh->len, rh->flags);
    if (ret != NA_SUCCESS)
        return ret;
    na_tcp_op_init(op, desc, desc->addr);
    if (desc->addr->self) {
        ret = na_tcp_rma_self(cls, desc);
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
    op->u.rma.lh = lh;
    op->u.rma.loff = desc->local_offset;
    op->u.rma.size = size;
    op->u.rma.token = h.token = ++conn->rma_seq;
    op->u.rma.started = false;
    op->conn = conn;
    if (!na_tcp_op_wait(&conn->rma, op)) {
        pthread_mutex_unlock(&cls->lock);
        na_tcp_wake_local(cls);
        return NA_SUCCESS;
    }
    na_tcp_tx_init_iov(&op->tx, &h, iov,
                       put && size != 0
                           ? na_tcp_mem_iov(lh, desc->local_offset, size, iov)
                           : 0);
    op->tx.op = op;
    op->tx.msg = false;
    op->tx.heap = false;
    na_tcp_conn_send(conn, &op->tx);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}
