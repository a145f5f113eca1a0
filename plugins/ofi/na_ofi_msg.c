/*
 * Messages of the ofi plugin.
 *
 * Expected messages are libfabric tagged messages: the libfabric tag holds
 * the NA tag and both context ids (na_ofi_exp_tag), and the receive names
 * its source when the provider can match on it (FI_DIRECTED_RECV), so
 * they land in the caller's buffer with no copy.
 *
 * Unexpected messages are untagged messages (a separate matching space,
 * so no tag bits are spent telling the two apart) that start with a
 * header carrying the NA tag, the sender's address and the destination
 * context id. They arrive in receive buffers the class posts for its
 * whole life: a few large FI_MULTI_RECV buffers when the provider offers
 * them, else many message-sized buffers. Each message is copied into the
 * buffer of the oldest NA_Msg_recv_unexpected posted on the destination
 * context, or kept in that context's backlog until one is posted.
 *
 * The address in the header is the one the receiver answers. When the
 * provider also reports the sender (FI_SOURCE) and already knows it, a
 * header that claims anyone else is dropped and counted.
 */
#include "na_ofi_internal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

/* Multi-receive: a few buffers, each holding many messages. */
#define NA_OFI_MULTI_RECV_COUNT 4
#define NA_OFI_MULTI_RECV_MSGS 32
/* Plain receives: one buffer per message. */
#define NA_OFI_PLAIN_RECV_COUNT 64

/* Largest message we copy to the stack for fi_inject(). */
#define NA_OFI_INJECT_MAX 512

static int
na_ofi_rx_buf_post(struct na_ofi_class *cls, struct na_ofi_rx_buf *rx)
{
    struct iovec iov = {.iov_base = rx->buf, .iov_len = rx->size};
    struct fi_msg msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = FI_ADDR_UNSPEC,
        .context = &rx->hdr.fi_ctx,
    };

    if (cls->multi_recv)
        return (int) fi_recvmsg(cls->ep, &msg, FI_MULTI_RECV);
    return (int) fi_recv(cls->ep, rx->buf, rx->size, NULL, FI_ADDR_UNSPEC,
                         &rx->hdr.fi_ctx);
}

/* Repost a buffer now, or leave it for the next poll if the provider is
 * out of resources. */
static void
na_ofi_rx_buf_repost(struct na_ofi_class *cls, struct na_ofi_rx_buf *rx)
{
    int rc = na_ofi_rx_buf_post(cls, rx);

    if (rc == 0)
        return;
    if (rc != -FI_EAGAIN)
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "reposting a receive buffer: %s", fi_strerror(-rc));
    atomic_store(&rx->needs_post, true);
    atomic_store(&cls->rx_repost, true);
}

void
na_ofi_rx_bufs_repost(struct na_ofi_class *cls)
{
    /* A plain load first: this runs on every poll, and a write would
     * bounce the cache line between polling threads. */
    if (!atomic_load(&cls->rx_repost) ||
        !atomic_exchange(&cls->rx_repost, false))
        return;
    for (size_t i = 0; i < cls->rx_buf_count; i++)
        if (atomic_exchange(&cls->rx_bufs[i].needs_post, false))
            na_ofi_rx_buf_repost(cls, &cls->rx_bufs[i]);
}

na_return_t
na_ofi_rx_bufs_post(struct na_ofi_class *cls)
{
    size_t msg_size = NA_OFI_HDR_SIZE + cls->max_unexp_size;
    size_t count = NA_OFI_PLAIN_RECV_COUNT, size = msg_size;

    if (cls->multi_recv) {
        count = cls->multi_recv_op_max ? cls->multi_recv_op_max
                                       : NA_OFI_MULTI_RECV_COUNT;
        size = msg_size * NA_OFI_MULTI_RECV_MSGS;
    }
    cls->rx_bufs = calloc(count, sizeof(*cls->rx_bufs));
    cls->rx_mem = malloc(count * size);
    if (cls->rx_bufs == NULL || cls->rx_mem == NULL)
        return NA_NOMEM;
    cls->rx_buf_count = count;
    for (size_t i = 0; i < count; i++) {
        struct na_ofi_rx_buf *rx = &cls->rx_bufs[i];
        int rc;

        rx->hdr.kind = NA_OFI_CTX_RX_BUF;
        rx->cls = cls;
        rx->buf = (uint8_t *) cls->rx_mem + i * size;
        rx->size = size;
        atomic_init(&rx->needs_post, false);
        rc = na_ofi_rx_buf_post(cls, rx);
        if (rc != 0) {
            qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
                   "posting receive buffers: %s", fi_strerror(-rc));
            return na_ofi_error_to_na(-rc);
        }
    }
    return NA_SUCCESS;
}

/* Called once the endpoint is closed, so no buffer is still posted. */
void
na_ofi_rx_bufs_free(struct na_ofi_class *cls)
{
    free(cls->rx_bufs);
    free(cls->rx_mem);
    cls->rx_bufs = NULL;
    cls->rx_mem = NULL;
}

void
na_ofi_backlog_destroy(struct na_ofi_context *pc)
{
    struct na_ofi_backlog_msg *m;

    while ((m = STAILQ_FIRST(&pc->backlog)) != NULL) {
        STAILQ_REMOVE_HEAD(&pc->backlog, entry);
        na_ofi_addr_unref(m->source);
        free(m);
    }
}

/*
 * Complete a posted unexpected receive with a message; the reference on
 * `source` passes to the user on success.
 */
static void
na_ofi_unexp_deliver(struct na_op_id *op, struct na_addr *source, na_tag_t tag,
                     const void *data, size_t len)
{
    struct na_cb_info_recv_unexpected *info =
        &op->base.info.info.recv_unexpected;

    if (len > op->u.msg.size) {
        na_ofi_addr_unref(source);
        info->actual_buf_size = 0;
        info->source = NA_ADDR_NULL;
        info->tag = tag;
        na_ofi_op_complete(op, NA_MSGSIZE);
        return;
    }
    memcpy(op->u.msg.buf, data, len);
    info->actual_buf_size = len;
    info->source = source;
    info->tag = tag;
    na_ofi_op_complete(op, NA_SUCCESS);
}

/* Parse a header from a peer: hostile bytes, checked before use. */
static na_return_t
na_ofi_hdr_parse(struct na_ofi_class *cls, const uint8_t *msg, size_t len,
                 na_tag_t *tag, struct na_addr **source)
{
    struct sockaddr_in sin;
    uint32_t tag_be;

    if (len < NA_OFI_HDR_SIZE || msg[4] != NA_OFI_HDR_VERSION || msg[13] != 0 ||
        msg[14] != 0 || msg[15] != 0 ||
        na_ofi_addr_from_wire(msg + 5, &sin) != NA_SUCCESS)
        return NA_PROTOCOL_ERROR;
    memcpy(&tag_be, msg, sizeof(tag_be));
    *tag = ntohl(tag_be);
    return na_ofi_addr_intern(cls, &sin, source);
}

static struct na_ofi_context *
na_ofi_context_by_id(struct na_ofi_class *cls, uint8_t id)
{
    struct na_ofi_context *pc;

    TAILQ_FOREACH(pc, &cls->contexts, entry)
    if (pc->id == id)
        return pc;
    return NULL;
}

/* Keep a message no receive was posted for. Rare: HG keeps receives
 * posted. The copy is needed because the rx buffer is reused as soon as
 * we return. */
static void
na_ofi_backlog_push(struct na_ofi_context *pc, struct na_addr *source,
                    na_tag_t tag, const uint8_t *msg, size_t len)
{
    struct na_ofi_backlog_msg *m = malloc(sizeof(*m) + len);

    if (m == NULL) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "out of memory: unexpected message dropped");
        na_ofi_addr_unref(source);
        return;
    }
    m->source = source;
    m->tag = tag;
    m->len = len;
    memcpy(m->data, msg, len);
    STAILQ_INSERT_TAIL(&pc->backlog, m, entry);
}

/*
 * Hand one arrived message to the oldest receive posted on the context it
 * is addressed to, or to that context's backlog. A message for a context
 * id we do not have is dropped: the sender's RPC layer times out.
 */
static na_context_t *
na_ofi_unexp_arrived(struct na_ofi_class *cls, const uint8_t *msg, size_t len,
                     fi_addr_t src)
{
    struct na_ofi_context *pc;
    struct na_addr *source;
    struct na_op_id *op = NULL;
    uint8_t dest_id;
    na_tag_t tag;

    if (na_ofi_hdr_parse(cls, msg, len, &tag, &source) != NA_SUCCESS) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "dropped a %zu-byte message with a bad header", len);
        return NULL;
    }
    /* A peer the provider does not know yet (FI_ADDR_NOTAVAIL: its first
     * message) cannot be checked; one it knows must be who it claims. */
    if (src != FI_ADDR_NOTAVAIL && src != FI_ADDR_UNSPEC &&
        src != source->fi_addr) {
        atomic_fetch_add(&cls->forged_dropped, 1);
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_WARNING,
               "dropped a %zu-byte message whose header claims another "
               "sender than the connection it came on",
               len);
        na_ofi_addr_unref(source);
        return NULL;
    }
    dest_id = msg[12];
    msg += NA_OFI_HDR_SIZE;
    len -= NA_OFI_HDR_SIZE;

    pthread_mutex_lock(&cls->rx_lock);
    pc = na_ofi_context_by_id(cls, dest_id);
    if (pc != NULL) {
        op = na_op_list_first(&pc->unexp_ops);
        if (op != NULL) {
            na_op_list_remove(op);
        } else {
            na_ofi_backlog_push(pc, source, tag, msg, len);
        }
    }
    pthread_mutex_unlock(&cls->rx_lock);
    if (pc == NULL) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "dropped an unexpected message for context id "
               "%u, which this class does not have",
               (unsigned) dest_id);
        na_ofi_addr_unref(source);
        return NULL;
    }
    if (op == NULL)
        return NULL;
    na_ofi_unexp_deliver(op, source, tag, msg, len);
    return pc->context;
}

na_context_t *
na_ofi_rx_buf_complete(struct na_ofi_rx_buf *rx,
                       const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
    struct na_ofi_class *cls = rx->cls;
    na_context_t *context = NULL;

    /* A multi-receive buffer may report its release with no data. */
    if (e->len > 0) {
        const uint8_t *data = cls->multi_recv ? e->buf : rx->buf;
        context = na_ofi_unexp_arrived(cls, data, e->len, src);
    }
    if (!cls->multi_recv || (e->flags & FI_MULTI_RECV))
        na_ofi_rx_buf_repost(cls, rx);
    return context;
}

/* A failed receive into our buffer (a truncated hostile message, or the
 * endpoint closing): nothing to deliver; keep the buffer posted. */
void
na_ofi_rx_buf_error(struct na_ofi_rx_buf *rx, const struct fi_cq_err_entry *err)
{
    if (err->err == FI_ECANCELED)
        return;
    qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
           "an unexpected message was lost: %s (%zu bytes)",
           fi_strerror(err->err), err->len);
    if (!rx->cls->multi_recv || (err->flags & FI_MULTI_RECV))
        na_ofi_rx_buf_repost(rx->cls, rx);
}

bool
na_ofi_unexp_cancel(struct na_ofi_class *cls, struct na_op_id *op)
{
    bool found;

    if (op->type != NA_CB_RECV_UNEXPECTED)
        return false;
    pthread_mutex_lock(&cls->rx_lock);
    found = na_op_list_active(op);
    na_op_list_remove(op);
    pthread_mutex_unlock(&cls->rx_lock);
    if (found)
        na_ofi_op_complete(op, NA_CANCELED);
    return found;
}

static void *
na_ofi_msg_buf_alloc(na_class_t *na_class, size_t buf_size, unsigned long flags,
                     void **plugin_data)
{
    void *base = NULL;

    (void) na_class;
    (void) flags;
    if (buf_size > SIZE_MAX - NA_OFI_HDR_RESERVE ||
        posix_memalign(&base, 64, NA_OFI_HDR_RESERVE + buf_size) != 0)
        return NULL;
    *plugin_data = base;
    return (uint8_t *) base + NA_OFI_HDR_RESERVE;
}

static void
na_ofi_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data)
{
    (void) na_class;
    (void) plugin_data;
    if (buf != NULL)
        free((uint8_t *) buf - NA_OFI_HDR_RESERVE);
}

static void
na_ofi_hdr_fill(const struct na_op_id *op, uint8_t *hdr)
{
    uint32_t tag_be = htonl(op->u.msg.tag);

    memcpy(hdr, na_ofi_op_class(op)->hdr_template, NA_OFI_HDR_SIZE);
    memcpy(hdr, &tag_be, sizeof(tag_be));
    hdr[12] = op->u.msg.peer_id;
}

/*
 * Small messages are injected: the provider copies them and no completion
 * comes back, which saves a trip through the CQ. Otherwise a buffer from
 * msg_buf_alloc has room for the header in front of it; any other buffer
 * goes out as two iovecs.
 */
static int
na_ofi_post_send_unexpected(struct na_op_id *op)
{
    struct na_ofi_class *cls = na_op_plugin_class(op);
    uint8_t *buf = op->u.msg.buf;
    size_t size = op->u.msg.size, total = NA_OFI_HDR_SIZE + size;
    fi_addr_t dest = op->addr->fi_addr;

    if (total <= cls->inject_size && total <= NA_OFI_INJECT_MAX) {
        uint8_t tmp[NA_OFI_INJECT_MAX];
        int rc;

        na_ofi_hdr_fill(op, tmp);
        memcpy(tmp + NA_OFI_HDR_SIZE, buf, size);
        rc = (int) fi_inject(cls->ep, tmp, total, dest);
        op->injected = rc == 0;
        return rc;
    }
    if (op->u.msg.plugin_data == buf - NA_OFI_HDR_RESERVE) {
        na_ofi_hdr_fill(op, buf - NA_OFI_HDR_SIZE);
        return (int) fi_send(cls->ep, buf - NA_OFI_HDR_SIZE, total, NULL, dest,
                             &op->hdr.fi_ctx);
    }
    na_ofi_hdr_fill(op, op->u.msg.hdr);
    struct iovec iov[2] = {
        {.iov_base = op->u.msg.hdr, .iov_len = NA_OFI_HDR_SIZE},
        {.iov_base = buf, .iov_len = size},
    };
    return (int) fi_sendv(cls->ep, iov, NULL, size ? 2 : 1, dest,
                          &op->hdr.fi_ctx);
}

static void
na_ofi_msg_set(struct na_op_id *op, const void *buf, size_t size,
               void *plugin_data, uint8_t peer_id, na_tag_t tag)
{
    op->u.msg.buf = (void *) buf; /* sends only read it */
    op->u.msg.size = size;
    op->u.msg.plugin_data = plugin_data;
    op->u.msg.peer_id = peer_id;
    op->u.msg.tag = tag;
}

static na_return_t
na_ofi_msg_recv_unexpected(na_class_t *na_class, const struct na_op_desc *desc,
                           na_op_id_t *op_id)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    struct na_ofi_context *pc = desc->context->plugin_context;
    struct na_ofi_backlog_msg *m;
    bool canceled = false;

    na_ofi_op_init(op_id, desc, NULL);
    na_ofi_msg_set(op_id, desc->buf, desc->buf_size, desc->plugin_data, 0, 0);

    pthread_mutex_lock(&cls->rx_lock);
    m = STAILQ_FIRST(&pc->backlog);
    if (m != NULL) {
        STAILQ_REMOVE_HEAD(&pc->backlog, entry);
    } else if (na_op_start(op_id)) {
        na_op_list_append(&pc->unexp_ops, op_id);
    } else {
        canceled = true; /* a cancel came during the post */
    }
    pthread_mutex_unlock(&cls->rx_lock);
    if (canceled) {
        na_ofi_op_complete(op_id, NA_CANCELED);
        na_ofi_wake(cls);
    } else if (m != NULL) {
        na_ofi_unexp_deliver(op_id, m->source, m->tag, m->data, m->len);
        free(m);
        na_ofi_wake(cls);
    }
    return NA_SUCCESS;
}

static int
na_ofi_post_send_expected(struct na_op_id *op)
{
    struct na_ofi_class *cls = na_op_plugin_class(op);

    if (op->u.msg.size <= cls->inject_size) {
        int rc = (int) fi_tinject(cls->ep, op->u.msg.buf, op->u.msg.size,
                                  op->addr->fi_addr, op->u.msg.fi_tag);
        op->injected = rc == 0;
        return rc;
    }
    return (int) fi_tsend(cls->ep, op->u.msg.buf, op->u.msg.size, NULL,
                          op->addr->fi_addr, op->u.msg.fi_tag, &op->hdr.fi_ctx);
}

/* The core checked the size against our limits and the tag. */
static na_return_t
na_ofi_msg_send(na_class_t *na_class, const struct na_op_desc *desc,
                na_op_id_t *op_id)
{
    (void) na_class;
    na_ofi_op_init(op_id, desc, desc->addr);
    na_ofi_msg_set(op_id, desc->buf, desc->buf_size, desc->plugin_data,
                   desc->addr_id, desc->tag);
    if (desc->type == NA_CB_SEND_UNEXPECTED)
        return na_ofi_op_submit(op_id, na_ofi_post_send_unexpected);
    op_id->u.msg.fi_tag =
        na_ofi_exp_tag(desc->addr_id, desc->context->id, desc->tag);
    return na_ofi_op_submit(op_id, na_ofi_post_send_expected);
}

static int
na_ofi_post_recv_expected(struct na_op_id *op)
{
    struct na_ofi_class *cls = na_op_plugin_class(op);
    fi_addr_t src = cls->directed_recv ? op->addr->fi_addr : FI_ADDR_UNSPEC;

    return (int) fi_trecv(cls->ep, op->u.msg.buf, op->u.msg.size, NULL, src,
                          op->u.msg.fi_tag, 0, &op->hdr.fi_ctx);
}

static na_return_t
na_ofi_msg_recv_expected(na_class_t *na_class, const struct na_op_desc *desc,
                         na_op_id_t *op_id)
{
    (void) na_class;
    na_ofi_op_init(op_id, desc, desc->addr);
    na_ofi_msg_set(op_id, desc->buf, desc->buf_size, desc->plugin_data,
                   desc->addr_id, desc->tag);
    op_id->u.msg.fi_tag =
        na_ofi_exp_tag(desc->context->id, desc->addr_id, desc->tag);
    return na_ofi_op_submit(op_id, na_ofi_post_recv_expected);
}

const struct na_msg_ops na_ofi_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .buf_alloc = na_ofi_msg_buf_alloc,
    .buf_free = na_ofi_msg_buf_free,
    .send = na_ofi_msg_send,
    .recv_unexpected = na_ofi_msg_recv_unexpected,
    .recv_expected = na_ofi_msg_recv_expected,
};
