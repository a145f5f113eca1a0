/*
 * Messages: pre-posted receive buffers, credit-based flow control, and
 * unexpected / expected delivery with (source, tag) matching.
 *
 * Every message is one SEND of a 16-byte header (na_verbs_wire.h) and the
 * payload, copied into a registered slot of the connection. The receiver
 * copies the payload out of its receive slot into the user's buffer, or into
 * a heap copy when no receive is posted yet, and re-posts the slot at once.
 *
 * Flow control. Each side pre-posts NA_VERBS_RECV_CREDITS + 1 receive
 * buffers and grants the peer NA_VERBS_RECV_CREDITS credits at connection
 * time. A data message costs one credit; the receiver counts the buffers
 * it re-posted ("unreturned") and gives them back in the header of its next
 * message. When no message flows back, it sends a credit-only message once
 * half the credits are unreturned. Credit-only messages cost no credit:
 * they land in the one extra buffer, and at most one may be outstanding,
 * until the peer acknowledges it (the header's ctrl_ack counts credit-only
 * messages received and re-posted). A peer that is starved of credits has
 * sent all of them, so the receiver accumulates enough to send a credit
 * message; and every message the peer sends after receiving one carries its
 * acknowledgement, so the next one is never blocked for good. Hence at most
 * NA_VERBS_RECV_CREDITS + 1 messages are ever in flight towards a receiver
 * that has that many buffers posted: no receiver-not-ready retries.
 */
#include "na_verbs_internal.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *
na_verbs_slot(struct na_verbs_conn *conn, uint32_t slot)
{
    return conn->region + (size_t) slot * conn->slot_size;
}

static int
na_verbs_post_recv(struct na_verbs_conn *conn, uint32_t slot)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) na_verbs_slot(conn, slot),
        .length = (uint32_t) conn->slot_size,
        .lkey = conn->mr->lkey,
    };
    struct ibv_recv_wr wr =
                           {
                               .wr_id = (uintptr_t) &conn->recv_wr[slot],
                               .sg_list = &sge,
                               .num_sge = 1,
                           },
                       *bad;

    if (ibv_post_recv(conn->id->qp, &wr, &bad) != 0)
        return -1;
    conn->recv_posted++;
    return 0;
}

na_return_t
na_verbs_conn_post_recvs(struct na_verbs_conn *conn)
{
    for (uint32_t i = 0; i < NA_VERBS_RECV_CREDITS + 1; i++) {
        if (na_verbs_post_recv(conn, i) != 0) {
            NA_VERBS_LOG("ibv_post_recv failed while setting up a "
                         "connection");
            return NA_IO_ERROR;
        }
    }
    return NA_SUCCESS;
}

static int
na_verbs_post_send(struct na_verbs_conn *conn, struct na_verbs_wr *ctx,
                   uint32_t slot, size_t len)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t) na_verbs_slot(conn, slot),
        .length = (uint32_t) len,
        .lkey = conn->mr->lkey,
    };
    struct ibv_send_wr wr =
                           {
                               .wr_id = (uintptr_t) ctx,
                               .sg_list = &sge,
                               .num_sge = 1,
                               .opcode = IBV_WR_SEND,
                               .send_flags = IBV_SEND_SIGNALED,
                           },
                       *bad;

    if (ibv_post_send(conn->id->qp, &wr, &bad) != 0)
        return -1;
    conn->sq_used++;
    return 0;
}

/* Fill a header, handing back every unreturned credit with it. */
static void
na_verbs_hdr_fill(struct na_verbs_conn *conn, uint8_t type,
                  const na_op_id_t *op, uint8_t *buf)
{
    struct na_verbs_msg_hdr hdr = {
        .type = type,
        .src_ctx = op != NULL ? op->context->id : 0,
        .dst_ctx = op != NULL ? op->peer_ctx_id : 0,
        .credits = (uint16_t) conn->unreturned,
        .tag = op != NULL ? op->tag : 0,
        .ctrl_ack = conn->ctrl_received,
    };

    conn->unreturned = 0;
    na_verbs_msg_hdr_encode(buf, &hdr);
}

static void
na_verbs_maybe_send_credits(struct na_verbs_conn *conn)
{
    if (conn->state != NA_VERBS_CONN_CONNECTED ||
        conn->unreturned < NA_VERBS_RECV_CREDITS / 2 || conn->ctrl_inflight ||
        conn->ctrl_sent != conn->ctrl_acked ||
        conn->sq_used >= NA_VERBS_SQ_DEPTH)
        return;
    na_verbs_hdr_fill(conn, NA_VERBS_MSG_CREDIT, NULL,
                      na_verbs_slot(conn, conn->ctrl_wr.slot));
    if (na_verbs_post_send(conn, &conn->ctrl_wr, conn->ctrl_wr.slot,
                           NA_VERBS_MSG_HDR_SIZE) != 0) {
        na_verbs_conn_fail(conn, NA_IO_ERROR, "ibv_post_send failed");
        return;
    }
    conn->ctrl_sent++;
    conn->ctrl_inflight = true;
}

/* Post one queued message if credits, a send slot and the send queue allow.
 * Returns false when the queue must wait. */
static bool
na_verbs_send_one(struct na_verbs_conn *conn, na_op_id_t *op)
{
    uint8_t type = op->type == NA_CB_SEND_UNEXPECTED ? NA_VERBS_MSG_UNEXPECTED
                                                     : NA_VERBS_MSG_EXPECTED;
    uint32_t slot;
    uint8_t *buf;

    if (op->buf_size > conn->peer_max_payload) {
        na_verbs_op_complete(op, NA_MSGSIZE);
        return true;
    }
    /* One send-queue slot stays free for a credit-only message. */
    if (conn->send_credits == 0 || conn->free_send_count == 0 ||
        conn->sq_used >= NA_VERBS_SQ_DEPTH - 1)
        return false;
    slot = conn->free_send[--conn->free_send_count];
    buf = na_verbs_slot(conn, slot);
    na_verbs_hdr_fill(conn, type, op, buf);
    memcpy(buf + NA_VERBS_MSG_HDR_SIZE, op->buf, op->buf_size);
    op->wr = (struct na_verbs_wr){
        .kind = NA_VERBS_WR_SEND, .conn = conn, .slot = slot, .op = op};
    na_op_list_remove(op);
    if (na_verbs_post_send(conn, &op->wr, slot,
                           NA_VERBS_MSG_HDR_SIZE + op->buf_size) != 0) {
        conn->free_send[conn->free_send_count++] = slot;
        na_verbs_op_complete(op, NA_IO_ERROR);
        na_verbs_conn_fail(conn, NA_IO_ERROR, "ibv_post_send failed");
        return true;
    }
    op->state = NA_VERBS_OP_POSTED;
    conn->send_credits--;
    return true;
}

void
na_verbs_conn_kick(struct na_verbs_conn *conn)
{
    na_op_id_t *op;

    while (conn->state == NA_VERBS_CONN_CONNECTED &&
           (op = na_op_list_first(&conn->pending)) != NULL) {
        bool posted;

        if (op->type == NA_CB_PUT || op->type == NA_CB_GET)
            posted = na_verbs_rma_post(conn, op) == 0;
        else
            posted = na_verbs_send_one(conn, op);
        if (!posted)
            break;
    }
    na_verbs_maybe_send_credits(conn);
}

void
na_verbs_conn_wc_done(struct na_verbs_conn *conn, na_op_id_t *op,
                      const struct ibv_wc *wc)
{
    na_return_t ret = na_verbs_wc_status_to_na(wc->status);

    if (op != NULL) {
        if (ret != NA_SUCCESS && na_op_cancel_requested(&op->base))
            ret = NA_CANCELED;
        na_verbs_op_complete(op, ret);
    }
    if (wc->status != IBV_WC_SUCCESS) {
        /* A flushed request only echoes the failure that flushed it. */
        if (wc->status != IBV_WC_WR_FLUSH_ERR)
            na_verbs_conn_fail(conn, ret, ibv_wc_status_str(wc->status));
        return;
    }
    na_verbs_conn_kick(conn);
}

na_return_t
na_verbs_conn_submit(struct na_verbs_class *cls, na_op_id_t *op)
{
    struct na_verbs_conn *conn;
    na_return_t ret;

    ret = na_verbs_conn_get(cls, op->addr, &conn);
    if (ret == NA_AGAIN || ret == NA_NOMEM) {
        na_verbs_op_abort(op);
        return ret;
    }
    if (ret != NA_SUCCESS) {
        /* Accepted, then failed: the error is the op's completion. */
        na_verbs_op_complete(op, ret);
        return NA_SUCCESS;
    }
    na_verbs_op_enqueue(op, &conn->pending);
    na_verbs_conn_kick(conn);
    return NA_SUCCESS;
}

static void
na_verbs_fill_unexpected(na_op_id_t *op, struct na_addr *source, na_tag_t tag,
                         const void *data, size_t len)
{
    struct na_cb_info_recv_unexpected *info =
        &op->base.info.info.recv_unexpected;

    if (len > op->buf_size) {
        info->actual_buf_size = 0;
        info->source = NULL;
        info->tag = tag;
        na_verbs_op_complete(op, NA_MSGSIZE);
        return;
    }
    memcpy(op->buf, data, len);
    info->actual_buf_size = len;
    na_verbs_addr_ref(source); /* the user frees it */
    info->source = source;
    info->tag = tag;
    na_verbs_op_complete(op, NA_SUCCESS);
}

static void
na_verbs_fill_expected(na_op_id_t *op, const void *data, size_t len)
{
    struct na_cb_info_recv_expected *info = &op->base.info.info.recv_expected;

    if (len > op->buf_size) {
        info->actual_buf_size = 0;
        na_verbs_op_complete(op, NA_MSGSIZE);
        return;
    }
    memcpy(op->buf, data, len);
    info->actual_buf_size = len;
    na_verbs_op_complete(op, NA_SUCCESS);
}

static void
na_verbs_msg_free(struct na_verbs_msg *msg)
{
    na_verbs_addr_unref(msg->source);
    free(msg);
}

/* Keep a message no receive was posted for. Returns false when out of
 * memory: the message is dropped, as a full backlog would drop it. */
static bool
na_verbs_msg_keep(struct na_verbs_msg_list *list, struct na_addr *source,
                  uint8_t src_ctx, na_tag_t tag, const void *data, size_t len)
{
    struct na_verbs_msg *msg = malloc(sizeof(*msg) + len);

    if (msg == NULL)
        return false;
    na_verbs_addr_ref(source);
    msg->source = source;
    msg->src_ctx = src_ctx;
    msg->tag = tag;
    msg->size = len;
    memcpy(msg->data, data, len);
    TAILQ_INSERT_TAIL(list, msg, entry);
    return true;
}

static struct na_verbs_context *
na_verbs_context_find(struct na_verbs_class *cls, uint8_t id)
{
    struct na_verbs_context *ctx;

    LIST_FOREACH(ctx, &cls->contexts, entry)
    {
        if (ctx->id == id)
            return ctx;
    }
    return NULL;
}

static bool
na_verbs_expected_match(const na_op_id_t *op, const struct na_addr *source,
                        uint8_t src_ctx, na_tag_t tag)
{
    return op->addr == source && op->peer_ctx_id == src_ctx && op->tag == tag;
}

/* Hand a message to a posted receive of its context, or keep it there. */
static void
na_verbs_deliver(struct na_verbs_class *cls, struct na_addr *source,
                 const struct na_verbs_msg_hdr *hdr, const uint8_t *data,
                 size_t len)
{
    struct na_verbs_context *ctx = na_verbs_context_find(cls, hdr->dst_ctx);
    na_op_id_t *op;

    if (ctx == NULL) {
        /* The sender's send already succeeded: all that can be done is
         * to say so here; the sender's timeout reports it there. */
        NA_VERBS_LOG("dropped a message for context id %u, which this class "
                     "does not have",
                     (unsigned) hdr->dst_ctx);
        return;
    }
    if (hdr->type == NA_VERBS_MSG_UNEXPECTED) {
        op = na_op_list_first(&ctx->unexpected_ops);
        if (op != NULL)
            na_verbs_fill_unexpected(op, source, hdr->tag, data, len);
        else if (!na_verbs_msg_keep(&ctx->unexpected_msgs, source, hdr->src_ctx,
                                    hdr->tag, data, len))
            NA_VERBS_LOG("out of memory: dropped an unexpected message");
        return;
    }
    for (op = na_op_list_first(&ctx->expected_ops); op != NULL;
         op = na_op_list_next(op)) {
        if (na_verbs_expected_match(op, source, hdr->src_ctx, hdr->tag)) {
            na_verbs_fill_expected(op, data, len);
            return;
        }
    }
    if (!na_verbs_msg_keep(&ctx->expected_msgs, source, hdr->src_ctx, hdr->tag,
                           data, len))
        NA_VERBS_LOG("out of memory: dropped an early expected message");
}

/* Credits and acknowledgements the peer sent in a header. */
static bool
na_verbs_apply_hdr(struct na_verbs_conn *conn,
                   const struct na_verbs_msg_hdr *hdr)
{
    if ((uint32_t) hdr->credits + conn->send_credits > conn->credits_granted)
        return false;
    conn->send_credits += hdr->credits;
    conn->ctrl_acked = hdr->ctrl_ack;
    return true;
}

void
na_verbs_msg_recv_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                       const struct ibv_wc *wc)
{
    uint8_t *buf = na_verbs_slot(conn, wr->slot);
    struct na_verbs_msg_hdr hdr;

    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status != IBV_WC_WR_FLUSH_ERR)
            na_verbs_conn_fail(conn, NA_IO_ERROR,
                               ibv_wc_status_str(wc->status));
        return;
    }
    if (conn->zombie)
        return;
    if (na_verbs_msg_hdr_decode(buf, wc->byte_len, &hdr) != NA_SUCCESS ||
        !na_verbs_apply_hdr(conn, &hdr)) {
        na_verbs_conn_fail(conn, NA_PROTOCOL_ERROR, "malformed message");
        return;
    }
    if (hdr.type == NA_VERBS_MSG_CREDIT) {
        conn->ctrl_received++;
    } else {
        na_verbs_deliver(conn->cls, conn->peer, &hdr,
                         buf + NA_VERBS_MSG_HDR_SIZE,
                         wc->byte_len - NA_VERBS_MSG_HDR_SIZE);
        conn->unreturned++;
    }
    /* A message that arrived just before the connection broke is still
     * delivered above; its buffer is simply not posted again. */
    if (conn->state == NA_VERBS_CONN_CLOSING)
        return;
    if (na_verbs_post_recv(conn, wr->slot) != 0) {
        na_verbs_conn_fail(conn, NA_IO_ERROR, "ibv_post_recv failed");
        return;
    }
    na_verbs_conn_kick(conn);
}

void
na_verbs_msg_send_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                       const struct ibv_wc *wc)
{
    if (wr->kind == NA_VERBS_WR_CTRL) {
        conn->ctrl_inflight = false;
        na_verbs_conn_wc_done(conn, NULL, wc);
    } else {
        conn->free_send[conn->free_send_count++] = wr->slot;
        na_verbs_conn_wc_done(conn, wr->op, wc);
    }
}

void
na_verbs_msg_peer_lost(struct na_verbs_class *cls, struct na_addr *peer)
{
    struct na_verbs_context *ctx;
    na_op_id_t *op, *next;

    /* Nothing more can arrive from a peer with no connection left; a
     * receive waiting for it would never complete. */
    LIST_FOREACH(ctx, &cls->contexts, entry)
    {
        for (op = na_op_list_first(&ctx->expected_ops); op != NULL; op = next) {
            next = na_op_list_next(op);
            if (op->addr == peer)
                na_verbs_op_complete(op, NA_HOSTUNREACH);
        }
    }
}

void
na_verbs_msg_lists_clear(struct na_verbs_context *ctx)
{
    struct na_verbs_msg *msg;

    while ((msg = TAILQ_FIRST(&ctx->unexpected_msgs)) != NULL) {
        TAILQ_REMOVE(&ctx->unexpected_msgs, msg, entry);
        na_verbs_msg_free(msg);
    }
    while ((msg = TAILQ_FIRST(&ctx->expected_msgs)) != NULL) {
        TAILQ_REMOVE(&ctx->expected_msgs, msg, entry);
        na_verbs_msg_free(msg);
    }
}

/* A message to our own address never touches the device: a class that
 * does not listen could not even connect to itself. */
static void
na_verbs_send_self(struct na_verbs_class *cls, na_op_id_t *op)
{
    struct na_verbs_msg_hdr hdr = {
        .type = op->type == NA_CB_SEND_UNEXPECTED ? NA_VERBS_MSG_UNEXPECTED
                                                  : NA_VERBS_MSG_EXPECTED,
        .src_ctx = op->context->id,
        .dst_ctx = op->peer_ctx_id,
        .tag = op->tag,
    };

    na_verbs_deliver(cls, cls->self, &hdr, op->buf, op->buf_size);
    na_verbs_op_complete(op, NA_SUCCESS);
}

/* The core checked the size against our limits and the tag. */
static na_return_t
na_verbs_msg_send(na_class_t *na_class, const struct na_op_desc *desc,
                  na_op_id_t *op)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    na_addr_t dest = desc->addr;
    na_return_t ret = NA_SUCCESS;

    pthread_mutex_lock(&cls->lock);
    na_verbs_op_start(op, desc);
    op->buf = desc->buf;
    op->buf_size = desc->buf_size;
    op->tag = desc->tag;
    op->peer_ctx_id = desc->addr_id;
    na_verbs_addr_ref(dest);
    op->addr = dest;
    if (dest->self)
        na_verbs_send_self(cls, op);
    else
        ret = na_verbs_conn_submit(cls, op);
    if (ret == NA_SUCCESS)
        na_verbs_op_started(op);
    pthread_mutex_unlock(&cls->lock);
    return ret;
}

static na_return_t
na_verbs_msg_recv_unexpected(na_class_t *na_class,
                             const struct na_op_desc *desc, na_op_id_t *op_id)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = desc->context->plugin_context;
    struct na_verbs_msg *msg;

    pthread_mutex_lock(&cls->lock);
    na_verbs_op_start(op_id, desc);
    op_id->buf = desc->buf;
    op_id->buf_size = desc->buf_size;
    msg = TAILQ_FIRST(&ctx->unexpected_msgs);
    if (msg != NULL) {
        TAILQ_REMOVE(&ctx->unexpected_msgs, msg, entry);
        na_verbs_fill_unexpected(op_id, msg->source, msg->tag, msg->data,
                                 msg->size);
        na_verbs_msg_free(msg);
    } else {
        na_verbs_op_enqueue(op_id, &ctx->unexpected_ops);
    }
    na_verbs_op_started(op_id);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_msg_recv_expected(na_class_t *na_class, const struct na_op_desc *desc,
                           na_op_id_t *op_id)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    struct na_verbs_context *ctx = desc->context->plugin_context;
    struct na_verbs_msg *msg;

    pthread_mutex_lock(&cls->lock);
    na_verbs_op_start(op_id, desc);
    op_id->buf = desc->buf;
    op_id->buf_size = desc->buf_size;
    op_id->tag = desc->tag;
    op_id->peer_ctx_id = desc->addr_id;
    na_verbs_addr_ref(desc->addr);
    op_id->addr = desc->addr;
    TAILQ_FOREACH(msg, &ctx->expected_msgs, entry)
    {
        if (na_verbs_expected_match(op_id, msg->source, msg->src_ctx, msg->tag))
            break;
    }
    if (msg != NULL) {
        TAILQ_REMOVE(&ctx->expected_msgs, msg, entry);
        na_verbs_fill_expected(op_id, msg->data, msg->size);
        na_verbs_msg_free(msg);
    } else {
        na_verbs_op_enqueue(op_id, &ctx->expected_ops);
    }
    na_verbs_op_started(op_id);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

const struct na_msg_ops na_verbs_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .send = na_verbs_msg_send,
    .recv_unexpected = na_verbs_msg_recv_unexpected,
    .recv_expected = na_verbs_msg_recv_expected,
};
