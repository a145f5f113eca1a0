/*
 * Messages: unexpected sends land in a posted unexpected receive of the
 * destination context or in its bounded backlog; expected sends match a
 * posted expected receive by (source node, source context id, tag) or wait
 * among the context's early arrivals. Data moves from the sender's buffer
 * at delivery time, which is also when the send completes.
 */
#include "na_sim_fault.h"
#include "util/qs_lock.h"

#include <stdlib.h>
#include <string.h>

/* Sends reach here within the limits and with a tag the core checked.
 * The core's descriptor carries the kind: expected or not. */
static na_return_t
na_sim_msg_send(na_class_t *na_class, const struct na_op_desc *desc,
                na_op_id_t *op)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    na_addr_t dest_addr = desc->addr;
    uint64_t when;
    na_return_t ret;

    qs_hot_lock_uncounted(&world->lock);
    na_sim_op_post(node, desc->context->plugin_context, op, desc->type);
    op->buf = desc->buf; /* only ever read: it is a send */
    op->size = desc->buf_size;
    op->tag = desc->tag;
    op->peer_ctx_id = desc->addr_id;
    op->peer = na_sim_addr_ref(dest_addr);
    when =
        na_sim_add_sat(na_sim_now(world),
                       na_sim_transfer_time(world, &node->name,
                                            &dest_addr->name, desc->buf_size));
    ret = na_sim_op_schedule(world, op, &node->name, &dest_addr->name, when,
                             NA_SIM_EV_MSG);
    qs_hot_unlock(&world->lock);
    return ret;
}

/*
 * Matching.
 */

/* Whether recv expects a message from the name src. src_node, when not
 * NULL, is the node that holds that name now (the sender of a message
 * being delivered): the node recv's address leads to being that one
 * proves the names equal without comparing them. */
static bool
na_sim_expected_match(struct na_sim_world *world, const struct na_op_id *recv,
                      const struct na_sim_name *src,
                      const struct na_sim_node *src_node, uint8_t src_ctx_id,
                      na_tag_t tag)
{
    return recv->tag == tag && recv->peer_ctx_id == src_ctx_id &&
           ((src_node != NULL &&
             na_sim_node_of(world, recv->peer) == src_node) ||
            na_sim_name_eq(&recv->peer->name, src));
}

/* The first posted receive that would take a message from src, or NULL. */
static struct na_op_id *
na_sim_recv_find(struct na_sim_world *world, struct na_sim_ctx *ctx,
                 bool unexpected, const struct na_sim_name *src,
                 const struct na_sim_node *src_node, uint8_t src_ctx_id,
                 na_tag_t tag)
{
    struct na_op_id *recv;

    if (unexpected)
        return na_op_list_first(&ctx->unexpected_recvs);
    for (recv = na_op_list_first(&ctx->expected_recvs); recv != NULL;
         recv = na_op_list_next(recv))
        if (na_sim_expected_match(world, recv, src, src_node, src_ctx_id, tag))
            return recv;
    return NULL;
}

/* Complete a receive with a message's bytes: NA_MSGSIZE, and nothing
 * written, when they do not fit the posted buffer. src_node is the sender
 * when it is known to be in the world in incarnation src_incarnation (a
 * message delivered now), else NULL (a queued message: its node may have
 * gone). */
static void
na_sim_recv_fill(struct na_sim_world *world, struct na_op_id *recv,
                 struct na_sim_node *src_node, const struct na_sim_name *src,
                 uint64_t src_incarnation, na_tag_t tag, const void *data,
                 size_t size)
{
    struct na_cb_info *info = &recv->base.info;
    na_return_t ret = NA_SUCCESS;

    if (size > recv->size) {
        ret = NA_MSGSIZE;
        size = 0;
    } else if (size > 0)
        memcpy(recv->buf, data, size);
    recv->size = size;
    if (recv->type == NA_CB_RECV_UNEXPECTED) {
        info->info.recv_unexpected.actual_buf_size = size;
        info->info.recv_unexpected.tag = tag;
        recv->tag = tag;
        if (ret == NA_SUCCESS) {
            /* From a sender still in the world, its shared address. */
            na_addr_t source =
                src_node != NULL ? na_sim_node_source(src_node)
                                 : na_sim_addr_new(world, src, src_incarnation);

            if (source == NULL)
                ret = NA_NOMEM;
            else
                /* For the completion's trace line only: borrowed from
                 * the callback info, which holds it until the callback
                 * has run (na_sim_op_complete() takes no reference of
                 * an unexpected receive's peer back). */
                recv->peer = source;
            info->info.recv_unexpected.source = source;
        }
    } else
        info->info.recv_expected.actual_buf_size = size;
    na_sim_op_complete(world, recv, ret);
}

static struct na_sim_msg *
na_sim_msg_copy(const struct na_op_id *send, const void *data, size_t size)
{
    struct na_sim_msg *msg = malloc(sizeof(*msg) + size);

    if (msg == NULL)
        return NULL;
    msg->src = send->node->name;
    msg->src_incarnation = send->node->incarnation;
    msg->src_ctx_id = send->ctx->id;
    msg->tag = send->tag;
    msg->size = size;
    if (size > 0)
        memcpy(msg->data, data, size);
    return msg;
}

/* A second copy of a message (the duplication fault): it goes where a new
 * message would, except that it never blocks anyone; with no room it is
 * simply lost again. The sender is not involved. */
static void
na_sim_msg_dup(struct na_sim_world *world, struct na_op_id *send,
               struct na_sim_ctx *dctx, bool unexpected, const void *data,
               size_t size)
{
    struct na_op_id *recv =
        na_sim_recv_find(world, dctx, unexpected, &send->node->name, send->node,
                         send->ctx->id, send->tag);
    struct na_sim_msg *msg;
    size_t limit;
    bool fails;

    na_sim_fault_trace(world, send, "dup", send->node->name.str,
                       send->peer->name.str, size);
    if (recv != NULL) {
        na_op_list_remove(recv);
        na_sim_recv_fill(world, recv, send->node, &send->node->name,
                         send->node->incarnation, send->tag, data, size);
        return;
    }
    na_sim_fault_backlog(world, dctx->node, &limit, &fails);
    if (unexpected && dctx->backlog_count >= limit)
        return;
    msg = na_sim_msg_copy(send, data, size);
    if (msg == NULL)
        return;
    if (unexpected) {
        TAILQ_INSERT_TAIL(&dctx->backlog, msg, link);
        dctx->backlog_count++;
    } else
        TAILQ_INSERT_TAIL(&dctx->early, msg, link);
}

/* Apply truncation and corruption to a private copy of the bytes: the
 * sender's buffer is never touched. Returns the copy (to free) or NULL
 * when nothing was mangled or memory ran out. */
static unsigned char *
na_sim_msg_mangle(struct na_sim_world *world, const struct na_op_id *send,
                  const struct na_sim_fault *fault, size_t *size)
{
    unsigned char *copy;

    if (!(fault->trunc || fault->corrupt) || send->size == 0)
        return NULL;
    copy = malloc(send->size);
    if (copy == NULL)
        return NULL;
    memcpy(copy, send->buf, send->size);
    if (fault->trunc) {
        *size = (size_t) (fault->bits % send->size); /* strictly shorter */
        na_sim_fault_trace(world, send, "trunc", send->node->name.str,
                           send->peer->name.str, *size);
    }
    if (fault->corrupt && *size > 0) {
        uint64_t bit = (fault->bits >> 24) % ((uint64_t) *size * 8);

        copy[bit / 8] ^= (unsigned char) (1U << (bit % 8));
        na_sim_fault_trace(world, send, "corrupt", send->node->name.str,
                           send->peer->name.str, (size_t) bit);
    }
    return copy;
}

/*
 * Delivery: the EV_MSG event of a send.
 */
void
na_sim_msg_deliver(struct na_sim_world *world, struct na_op_id *send)
{
    bool unexpected = send->type == NA_CB_SEND_UNEXPECTED;
    const char *src = send->node->name.str, *dst = send->peer->name.str;
    uint64_t now = na_sim_now(world);
    struct na_sim_fault fault;
    struct na_sim_node *node;
    struct na_sim_ctx *dctx = NULL;
    struct na_op_id *recv;
    struct na_sim_msg *msg;
    unsigned char *mangled;
    const void *data;
    size_t size, limit;
    bool fails;

    if (send->canceled) {
        na_sim_op_complete(world, send, NA_CANCELED);
        return;
    }
    /* One lookup serves the fault model's checks and the delivery. */
    node = na_sim_node_of(world, send->peer);
    fault = na_sim_fault_on_deliver(world, send, node);
    switch (fault.verdict) {
    case NA_SIM_V_FAIL:
        na_sim_fault_fail_later(world, send, fault.ret, fault.delay);
        return;
    case NA_SIM_V_DROP:
        /* Lost on the wire: the sender's NIC saw nothing wrong. */
        na_sim_op_complete(world, send, NA_SUCCESS);
        return;
    case NA_SIM_V_RETRY:
        if (na_sim_schedule(world, na_sim_add_sat(now, fault.delay),
                            NA_SIM_EV_MSG, send) != NA_SUCCESS)
            na_sim_op_complete(world, send, NA_NOMEM);
        return;
    case NA_SIM_V_DELIVER:
        break;
    }
    if (node != NULL)
        dctx = na_sim_ctx_find(node, send->peer_ctx_id);
    if (dctx == NULL) {
        na_sim_trace(world, now, send->seq, "unreachable", src, dst, send->size,
                     send->tag);
        na_sim_op_complete(world, send, NA_HOSTUNREACH);
        return;
    }
    size = send->size;
    mangled = na_sim_msg_mangle(world, send, &fault, &size);
    data = mangled != NULL ? (const void *) mangled : send->buf;
    if (fault.dup)
        na_sim_msg_dup(world, send, dctx, unexpected, data, size);
    recv = na_sim_recv_find(world, dctx, unexpected, &send->node->name,
                            send->node, send->ctx->id, send->tag);
    if (recv != NULL) {
        na_sim_trace_names(world, now, send->seq, "arrive:matched", NULL, NULL,
                           &send->node->name, &send->peer->name, size,
                           send->tag);
        na_op_list_remove(recv);
        na_sim_recv_fill(world, recv, send->node, &send->node->name,
                         send->node->incarnation, send->tag, data, size);
        na_sim_op_complete(world, send, NA_SUCCESS);
        goto out;
    }
    na_sim_fault_backlog(world, node, &limit, &fails);
    if (unexpected && dctx->backlog_count >= limit) {
        /* Receiver not ready and no room to buffer. By default the
         * sender's NIC holds the message and retries until room appears,
         * as RNR retry and credit flow control do on real fabrics; the
         * other policy (per world or, in a fault profile, per node)
         * reports NA_AGAIN. A held message is taken from the sender's
         * buffer when admitted, unmangled. */
        if (fails) {
            na_sim_trace(world, now, send->seq, "arrive:backlog_full", src, dst,
                         send->size, send->tag);
            na_sim_op_complete(world, send, NA_AGAIN);
            goto out;
        }
        na_sim_trace(world, now, send->seq, "arrive:blocked", src, dst,
                     send->size, send->tag);
        na_op_list_append(&dctx->blocked, send);
        goto out;
    }
    msg = na_sim_msg_copy(send, data, size);
    if (msg == NULL) {
        na_sim_op_complete(world, send, NA_NOMEM);
        goto out;
    }
    if (unexpected) {
        TAILQ_INSERT_TAIL(&dctx->backlog, msg, link);
        dctx->backlog_count++;
    } else
        TAILQ_INSERT_TAIL(&dctx->early, msg, link);
    na_sim_trace_names(
        world, now, send->seq, unexpected ? "arrive:backlog" : "arrive:early",
        NULL, NULL, &send->node->name, &send->peer->name, size, send->tag);
    na_sim_op_complete(world, send, NA_SUCCESS);
out:
    if (mangled != NULL)
        free(mangled);
}

/*
 * Receives.
 */

/* Accept a blocked sender's message at the current time: copy it out of
 * the sender's buffer and complete the send. NULL if memory ran out (the
 * send then fails with NA_NOMEM). */
static struct na_sim_msg *
na_sim_blocked_accept(struct na_sim_world *world, struct na_op_id *send,
                      const char *kind)
{
    struct na_sim_msg *msg;

    na_op_list_remove(send);
    msg = na_sim_msg_copy(send, send->buf, send->size);
    if (msg != NULL)
        na_sim_trace(world, na_sim_now(world), send->seq, kind,
                     send->node->name.str, send->peer->name.str, send->size,
                     send->tag);
    na_sim_op_complete(world, send, msg != NULL ? NA_SUCCESS : NA_NOMEM);
    return msg;
}

/* Move blocked senders' messages into free backlog slots, oldest first. */
static void
na_sim_backlog_admit(struct na_sim_world *world, struct na_sim_ctx *ctx)
{
    struct na_op_id *send;
    size_t limit;
    bool fails;

    na_sim_fault_backlog(world, ctx->node, &limit, &fails);
    while (ctx->backlog_count < limit &&
           (send = na_op_list_first(&ctx->blocked)) != NULL) {
        struct na_sim_msg *msg =
            na_sim_blocked_accept(world, send, "arrive:backlog");

        if (msg != NULL) {
            TAILQ_INSERT_TAIL(&ctx->backlog, msg, link);
            ctx->backlog_count++;
        }
    }
}

void
na_sim_backlog_reconsider(struct na_sim_world *world, struct na_sim_ctx *ctx)
{
    struct na_op_id *send;
    size_t limit;
    bool fails;

    na_sim_fault_backlog(world, ctx->node, &limit, &fails);
    while (fails && (send = na_op_list_first(&ctx->blocked)) != NULL) {
        na_op_list_remove(send);
        na_sim_trace(world, na_sim_now(world), send->seq, "arrive:backlog_full",
                     send->node->name.str, send->peer->name.str, send->size,
                     send->tag);
        na_sim_op_complete(world, send, NA_AGAIN);
    }
    na_sim_backlog_admit(world, ctx);
}

/* Take the first queued message a new receive matches, if any. For an
 * unexpected receive that is the backlog's head, or, with no backlog at
 * all, the oldest blocked sender's message; either way a freed slot goes
 * to the next blocked sender. */
static struct na_sim_msg *
na_sim_msg_take(struct na_sim_world *world, struct na_sim_ctx *ctx,
                const struct na_op_id *recv)
{
    struct na_sim_msg *msg;

    if (recv->type == NA_CB_RECV_UNEXPECTED) {
        msg = TAILQ_FIRST(&ctx->backlog);
        if (msg != NULL) {
            TAILQ_REMOVE(&ctx->backlog, msg, link);
            ctx->backlog_count--;
        } else if (!na_op_list_empty(&ctx->blocked))
            msg = na_sim_blocked_accept(world, na_op_list_first(&ctx->blocked),
                                        "arrive:matched");
        na_sim_backlog_admit(world, ctx);
        return msg;
    }
    TAILQ_FOREACH(msg, &ctx->early, link)
    {
        if (na_sim_expected_match(world, recv, &msg->src, NULL, msg->src_ctx_id,
                                  msg->tag)) {
            TAILQ_REMOVE(&ctx->early, msg, link);
            return msg;
        }
    }
    return NULL;
}

/* A receive that finds its message already queued completes from a local
 * event at the current time, so that completions still only appear during
 * progress; otherwise it waits in its list. */
static na_return_t
na_sim_recv_post(struct na_sim_world *world, struct na_op_id *recv)
{
    struct na_sim_ctx *ctx = recv->ctx;
    struct na_sim_msg *msg = na_sim_msg_take(world, ctx, recv);

    if (msg != NULL) {
        recv->msg = msg;
        if (na_sim_schedule(world, na_sim_now(world), NA_SIM_EV_LOCAL, recv) ==
            NA_SUCCESS)
            return NA_SUCCESS;
        recv->msg = NULL;
        na_sim_msg_requeue(world, ctx, recv->type == NA_CB_RECV_UNEXPECTED,
                           msg);
        return NA_NOMEM;
    }
    na_op_list_append(recv->type == NA_CB_RECV_UNEXPECTED
                          ? &ctx->unexpected_recvs
                          : &ctx->expected_recvs,
                      recv);
    return NA_SUCCESS;
}

/* A receive buffer larger than the class's limit is refused (NA_MSGSIZE):
 * no message could need it, so it is a caller's mistake. */
static na_return_t
na_sim_msg_recv(na_class_t *na_class, const struct na_op_desc *desc,
                na_op_id_t *op)
{
    struct na_sim_node *node = na_class->plugin_class;
    struct na_sim_world *world = node->world;
    bool unexpected = desc->type == NA_CB_RECV_UNEXPECTED;
    na_addr_t source_addr = desc->addr;
    na_return_t ret;

    if (desc->buf_size >
        (unexpected ? node->max_unexpected_size : node->max_expected_size))
        return NA_MSGSIZE;
    qs_hot_lock_uncounted(&world->lock);
    na_sim_op_post(node, desc->context->plugin_context, op, desc->type);
    op->buf = desc->buf;
    op->size = desc->buf_size;
    op->tag = desc->tag;
    /* An unexpected receive takes a message from any source, so it has no
     * peer to name. */
    if (!unexpected) {
        op->peer_ctx_id = desc->addr_id;
        op->peer = na_sim_addr_ref(source_addr);
    }
    ret = na_sim_op_posted(world, op, unexpected ? NULL : &source_addr->name,
                           &node->name, NULL);
    if (ret == NA_SUCCESS)
        ret = na_sim_recv_post(world, op);
    if (ret != NA_SUCCESS)
        na_sim_op_abort(world, op, ret);
    else
        na_sim_op_started(world, op);
    qs_hot_unlock(&world->lock);
    return ret;
}

/*
 * Local events: a receive that matched a queued message, or a cancelled
 * receive leaving its list.
 */
void
na_sim_msg_local(struct na_sim_world *world, struct na_op_id *recv)
{
    struct na_sim_msg *msg = recv->msg;

    recv->msg = NULL;
    if (msg == NULL) { /* only a cancel schedules an op without one */
        na_sim_op_complete(world, recv, NA_CANCELED);
        return;
    }
    if (recv->canceled) {
        /* The message was only promised to this receive: hand it on. */
        na_sim_msg_requeue(world, recv->ctx,
                           recv->type == NA_CB_RECV_UNEXPECTED, msg);
        na_sim_op_complete(world, recv, NA_CANCELED);
        return;
    }
    na_sim_recv_fill(world, recv, NULL, &msg->src, msg->src_incarnation,
                     msg->tag, msg->data, msg->size);
    free(msg);
}

/* Give a message back: to the first waiting receive that takes it, else to
 * the head of its queue, where it was before. */
void
na_sim_msg_requeue(struct na_sim_world *world, struct na_sim_ctx *ctx,
                   bool unexpected, struct na_sim_msg *msg)
{
    struct na_op_id *recv = na_sim_recv_find(world, ctx, unexpected, &msg->src,
                                             NULL, msg->src_ctx_id, msg->tag);

    if (recv != NULL) {
        na_op_list_remove(recv);
        recv->msg = msg;
        if (na_sim_schedule(world, na_sim_now(world), NA_SIM_EV_LOCAL, recv) ==
            NA_SUCCESS)
            return;
        /* No memory for the event: complete the receive right here. */
        recv->msg = NULL;
        na_sim_recv_fill(world, recv, NULL, &msg->src, msg->src_incarnation,
                         msg->tag, msg->data, msg->size);
        free(msg);
        return;
    }
    if (unexpected) {
        TAILQ_INSERT_HEAD(&ctx->backlog, msg, link);
        ctx->backlog_count++;
    } else
        TAILQ_INSERT_HEAD(&ctx->early, msg, link);
}

void
na_sim_ctx_free_msgs(struct na_sim_ctx *ctx)
{
    struct na_sim_msg *msg;

    while ((msg = TAILQ_FIRST(&ctx->backlog)) != NULL) {
        TAILQ_REMOVE(&ctx->backlog, msg, link);
        free(msg);
    }
    ctx->backlog_count = 0;
    while ((msg = TAILQ_FIRST(&ctx->early)) != NULL) {
        TAILQ_REMOVE(&ctx->early, msg, link);
        free(msg);
    }
}

void
na_sim_ctx_drain(struct na_sim_world *world, struct na_sim_ctx *ctx)
{
    struct na_op_id *send;

    while ((send = na_op_list_first(&ctx->blocked)) != NULL) {
        na_op_list_remove(send);
        na_sim_trace(world, na_sim_now(world), send->seq, "unreachable",
                     send->node->name.str, send->peer->name.str, send->size,
                     send->tag);
        na_sim_op_complete(world, send, NA_HOSTUNREACH);
    }
    na_sim_ctx_free_msgs(ctx);
}

const struct na_msg_ops na_sim_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .send = na_sim_msg_send,
    .recv_unexpected = na_sim_msg_recv,
    .recv_expected = na_sim_msg_recv,
};
