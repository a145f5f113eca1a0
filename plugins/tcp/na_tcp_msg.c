/*
 * Messages of the TCP plugin: sends, receives and their matching.
 *
 * A send is one frame, the header and the caller's buffer written with
 * one sendmsg (a gathered write), at once when nothing waits before it on the
 * connection; it completes when the kernel has all of it (the buffer is the
 * caller's again). A frame read from a connection goes to the first posted
 * receive that matches (unexpected: any; expected: same source, source context
 * and tag), or is copied to the context's backlog until one is posted. The
 * source of a message is the connection it came on.
 */
#include "na_tcp_internal.h"

#include <stdlib.h>
#include <string.h>

/* Complete a receive with a message (lock held). */
static void
na_tcp_recv_fill(struct na_op_id *op, struct na_addr *source, na_tag_t tag,
                 const void *data, size_t len)
{
    na_return_t ret =
        na_plugin_recv_fill(&op->base, op->type, op->u.msg.buf, op->u.msg.size,
                            source, tag, data, len);

    if (ret == NA_SUCCESS && op->type == NA_CB_RECV_UNEXPECTED)
        na_plugin_addr_ref(source);
    na_tcp_op_complete(op, ret);
}

static void
na_tcp_backlog_push(struct na_plugin_backlog *q, struct na_addr *source,
                    uint8_t src_id, na_tag_t tag, const void *data, size_t len)
{
    if (na_plugin_backlog_push(q, "tcp", source, src_id, tag, data, len))
        na_plugin_addr_ref(source);
}

/* A receive takes a message from the backlog (lock held). */
static void
na_tcp_recv_backlogged(struct na_op_id *op, struct na_plugin_backlog_msg *m)
{
    na_tcp_recv_fill(op, m->source, m->tag, m->data, m->len);
    na_plugin_addr_unref_locked(m->source);
    free(m);
}

/* Hand a message to its receive or backlog (lock held). */
void
na_tcp_deliver(struct na_tcp_class *cls, struct na_addr *source,
               const struct na_tcp_hdr *h, const void *data)
{
    struct na_tcp_context *pc = na_tcp_ctx(cls, h->dst_id);
    size_t len = (size_t) h->len;
    struct na_op_id *op;

    if (pc == NULL)
        return; /* no such context: nobody can ever receive it */
    if (h->type == NA_TCP_UNEXP) {
        op = na_op_list_first(&pc->base.unexp_ops);
        if (op == NULL) {
            na_tcp_backlog_push(&pc->base.unexp_backlog, source, h->src_id,
                                h->tag, data, len);
            return;
        }
    } else {
        for (op = na_op_list_first(&pc->base.exp_ops); op != NULL;
             op = na_op_list_next(op)) {
            if (op->addr == source && op->u.msg.peer_id == h->src_id &&
                op->u.msg.tag == h->tag)
                break;
        }
        if (op == NULL) {
            na_tcp_backlog_push(&pc->base.exp_backlog, source, h->src_id,
                                h->tag, data, len);
            return;
        }
    }
    na_op_list_remove(op);
    na_tcp_recv_fill(op, source, h->tag, data, len);
}

/* The core checked the size against our limits and the tag. */
static na_return_t
na_tcp_msg_send(na_class_t *na_class, const struct na_op_desc *desc,
                na_op_id_t *op)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = desc->context->plugin_context;
    struct na_tcp_hdr h = {
        .type = desc->type == NA_CB_SEND_EXPECTED ? NA_TCP_EXP : NA_TCP_UNEXP,
        .src_id = pc->base.id,
        .dst_id = desc->addr_id,
        .tag = desc->tag,
        .len = desc->buf_size};
    struct na_addr *dest = desc->addr;
    struct na_tcp_conn *conn;

    na_tcp_op_init(op, desc, dest);
    pthread_mutex_lock(&cls->lock);
    if (dest->self) {
        na_tcp_deliver(cls, dest, &h, desc->buf);
        na_tcp_op_complete(op, NA_SUCCESS);
        goto done;
    }
    conn = na_tcp_conn_get(cls, dest);
    if (conn == NULL) {
        na_tcp_op_complete(op, NA_HOSTUNREACH);
        goto done;
    }
    na_tcp_tx_init(&op->tx, &h, desc->buf, desc->buf_size);
    op->tx.op = op;
    op->tx.msg = true;
    op->tx.heap = false;
    if (!na_op_start(op)) {
        na_tcp_op_complete(op, NA_CANCELED); /* canceled during the post */
        goto done;
    }
    op->conn = conn;
    /* Written at once when the queue was empty: completed in there. */
    na_tcp_conn_send(conn, &op->tx);
done:
    pthread_mutex_unlock(&cls->lock);
    na_tcp_wake_local(cls);
    return NA_SUCCESS;
}

static na_return_t
na_tcp_msg_recv_unexpected(na_class_t *na_class, const struct na_op_desc *desc,
                           na_op_id_t *op_id)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = desc->context->plugin_context;
    struct na_plugin_backlog_msg *m;

    na_tcp_op_init(op_id, desc, NULL);
    op_id->u.msg.buf = desc->buf;
    op_id->u.msg.size = desc->buf_size;
    pthread_mutex_lock(&cls->lock);
    m = na_plugin_backlog_take_first(&pc->base.unexp_backlog);
    if (m != NULL)
        na_tcp_recv_backlogged(op_id, m);
    else if (!na_tcp_op_wait(&pc->base.unexp_ops, op_id))
        m = (void *) 1; /* canceled during the post: wake below */
    pthread_mutex_unlock(&cls->lock);
    if (m != NULL)
        na_tcp_wake_local(cls);
    return NA_SUCCESS;
}

static na_return_t
na_tcp_msg_recv_expected(na_class_t *na_class, const struct na_op_desc *desc,
                         na_op_id_t *op_id)
{
    struct na_tcp_class *cls = na_tcp_class(na_class);
    struct na_tcp_context *pc = desc->context->plugin_context;
    struct na_addr *source = desc->addr;
    struct na_plugin_backlog_msg *m;
    bool wake = false;

    na_tcp_op_init(op_id, desc, source);
    op_id->u.msg.buf = desc->buf;
    op_id->u.msg.size = desc->buf_size;
    op_id->u.msg.tag = desc->tag;
    op_id->u.msg.peer_id = desc->addr_id;
    pthread_mutex_lock(&cls->lock);
    m = na_plugin_backlog_take(&pc->base.exp_backlog, source, desc->addr_id,
                               desc->tag);
    if (m != NULL) {
        na_tcp_recv_backlogged(op_id, m);
        wake = true;
    } else if (source->failed && source->conn == NULL) {
        /* Its connection ended: nothing will come. */
        na_tcp_op_complete(op_id, NA_HOSTUNREACH);
        wake = true;
    } else if (!na_tcp_op_wait(&pc->base.exp_ops, op_id)) {
        wake = true; /* canceled during the post */
    }
    pthread_mutex_unlock(&cls->lock);
    if (wake)
        na_tcp_wake_local(cls);
    return NA_SUCCESS;
}

const struct na_msg_ops na_tcp_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .send = na_tcp_msg_send,
    .recv_unexpected = na_tcp_msg_recv_unexpected,
    .recv_expected = na_tcp_msg_recv_expected,
};
