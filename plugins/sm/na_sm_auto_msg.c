/*
 * auto_sm messages (see na_sm_auto_internal.h): the internal unexpected
 * receives on both inner classes, the user's receives they fill (or the
 * backlog), sends and expected receives mapped to one inner class, and
 * cancel.
 */
#include "na_sm_auto_internal.h"

#include <stdlib.h>
#include <string.h>

/* Give a message to a user's receive (ac->lock held, op taken off). */
static void
na_auto_fill(struct na_op_id *op, struct na_addr *source, na_tag_t tag,
             const void *data, size_t len)
{
    struct na_cb_info_recv_unexpected *ru = &op->base.info.info.recv_unexpected;
    na_return_t ret = NA_SUCCESS;

    if (len > op->size) {
        ret = NA_MSGSIZE;
        len = op->size;
        na_auto_addr_release(source);
        source = NULL;
    }
    if (len != 0)
        memcpy(op->buf, data, len);
    ru->actual_buf_size = len;
    ru->tag = tag;
    ru->source = source;
    na_auto_op_finish(op, ret);
}

static void
na_auto_rx_cb(const struct na_cb_info *info)
{
    struct na_auto_rx *rx = info->arg;
    struct na_auto_context *ac = rx->ac;
    struct na_auto_class *cls = ac->cls;
    const struct na_cb_info_recv_unexpected *ru = &info->info.recv_unexpected;
    struct na_op_id *op;

    rx->live = false;
    if (info->ret == NA_SUCCESS) {
        struct na_addr *src =
            na_auto_addr_new(cls, rx->side == NA_AUTO_NET ? ru->source : NULL,
                             rx->side == NA_AUTO_SM ? ru->source : NULL);
        pthread_mutex_lock(&ac->lock);
        op = na_op_list_first(&ac->posted);
        if (op != NULL) {
            na_op_list_remove(op);
            na_auto_fill(op, src, ru->tag, rx->buf, ru->actual_buf_size);
        } else if (src != NULL) {
            struct na_auto_msg *m = malloc(sizeof(*m) + ru->actual_buf_size);
            if (m != NULL) {
                m->source = src;
                m->tag = ru->tag;
                m->len = ru->actual_buf_size;
                memcpy(m->data, rx->buf, m->len);
                TAILQ_INSERT_TAIL(&ac->backlog, m, entry);
            } else {
                na_auto_addr_release(src);
            }
        }
        pthread_mutex_unlock(&ac->lock);
    }
    if (!ac->closing && info->ret != NA_CANCELED)
        na_auto_rx_post(rx);
}

void
na_auto_rx_post(struct na_auto_rx *rx)
{
    struct na_auto_context *ac = rx->ac;
    struct na_auto_class *cls = ac->cls;

    if (NA_Msg_recv_unexpected(cls->inner[rx->side], ac->inner[rx->side],
                               na_auto_rx_cb, rx, rx->buf, cls->max_unexp,
                               rx->plugin_data, rx->op) == NA_SUCCESS)
        rx->live = true;
}

/* Buffers come from the network class; shared memory needs nothing. */
static void *
na_auto_msg_buf_alloc(na_class_t *na_class, size_t size, unsigned long flags,
                      void **plugin_data)
{
    return NA_Msg_buf_alloc(na_auto_class(na_class)->inner[NA_AUTO_NET], size,
                            flags, plugin_data);
}

static void
na_auto_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data)
{
    NA_Msg_buf_free(na_auto_class(na_class)->inner[NA_AUTO_NET], buf,
                    plugin_data);
}

/* Sends of both kinds and expected receives go to the inner class of the
 * peer's side with the same arguments (an unexpected receive, which may
 * match a message from either side, is na_auto_recv_unexpected). The core
 * checked the size against our limits (the smaller of both classes') and
 * the tag. */
static na_return_t
na_auto_msg_forward(na_class_t *na_class, const struct na_op_desc *desc,
                    na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = na_auto_ctx(desc->context);
    na_addr_t peer = desc->addr;
    int s = na_auto_addr_side(peer);
    void *plugin_data = s == NA_AUTO_NET ? desc->plugin_data : NULL;
    na_return_t ret;

    if (!na_auto_op_start(op, desc, s))
        return NA_SUCCESS;
    if (desc->type == NA_CB_RECV_EXPECTED)
        ret = NA_Msg_recv_expected(cls->inner[s], ac->inner[s],
                                   na_auto_inner_cb, op, desc->buf,
                                   desc->buf_size, plugin_data, peer->part[s],
                                   desc->addr_id, desc->tag, op->inner[s]);
    else
        ret = (desc->type == NA_CB_SEND_EXPECTED ? NA_Msg_send_expected
                                                 : NA_Msg_send_unexpected)(
            cls->inner[s], ac->inner[s], na_auto_inner_cb, op, desc->buf,
            desc->buf_size, plugin_data, peer->part[s], desc->addr_id,
            desc->tag, op->inner[s]);
    return na_auto_op_handed(op, cls, ac, s, ret);
}

static na_return_t
na_auto_recv_unexpected(na_class_t *na_class, const struct na_op_desc *desc,
                        na_op_id_t *op)
{
    struct na_auto_context *ac = na_auto_ctx(desc->context);
    struct na_auto_msg *m;

    (void) na_class;
    (void) na_auto_op_start(op, desc, -1);
    op->buf = desc->buf;
    op->size = desc->buf_size;
    pthread_mutex_lock(&ac->lock);
    m = TAILQ_FIRST(&ac->backlog);
    if (m != NULL) {
        TAILQ_REMOVE(&ac->backlog, m, entry);
        na_auto_fill(op, m->source, m->tag, m->data, m->len);
        free(m);
    } else if (na_op_start(op)) {
        na_op_list_append(&ac->posted, op);
    } else {
        na_auto_op_finish(op, NA_CANCELED); /* canceled during the post */
    }
    pthread_mutex_unlock(&ac->lock);
    return NA_SUCCESS;
}

static na_return_t
na_auto_op_init(na_class_t *na_class, na_op_id_t *op, unsigned long flags)
{
    struct na_auto_class *cls = na_auto_class(na_class);

    for (int s = 0; s < 2; s++) {
        op->inner[s] = NA_Op_create(cls->inner[s], flags);
        if (op->inner[s] == NULL) {
            if (s == 1)
                NA_Op_destroy(cls->inner[0], op->inner[0]);
            return NA_NOMEM;
        }
    }
    return NA_SUCCESS;
}

static void
na_auto_op_fini(na_class_t *na_class, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);

    /* The core has checked that the op is idle. */
    for (int s = 0; s < 2; s++)
        NA_Op_destroy(cls->inner[s], op->inner[s]);
}

const struct na_msg_ops na_auto_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .op_init = na_auto_op_init,
    .op_fini = na_auto_op_fini,
    .buf_alloc = na_auto_msg_buf_alloc,
    .buf_free = na_auto_msg_buf_free,
    .send = na_auto_msg_forward,
    .recv_unexpected = na_auto_recv_unexpected,
    .recv_expected = na_auto_msg_forward,
};
