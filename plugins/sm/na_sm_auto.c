/*
 * auto_sm: the class made of a network class and a shared-memory class
 * (see na_sm_auto_internal.h): creation, contexts with their internal
 * unexpected receives, op ids, messages, progress and cancel.
 */
#include "na_sm_auto_internal.h"

#include "na/na_auto_sm.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NA_AUTO_SPIN_NS 30000u
#define NA_AUTO_CLOSE_NS (5ull * 1000000000ull)

enum { NA_AUTO_OP_IDLE, NA_AUTO_OP_POSTED, NA_AUTO_OP_COMPLETED };

/* This boot of this machine: peers with the same id share our memory. */
static void
na_auto_read_node(char *node)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    size_t n = 0;

    node[0] = '\0';
    if (f != NULL) {
        if (fgets(node, NA_AUTO_NODE_MAX, f) == NULL)
            node[0] = '\0';
        fclose(f);
    }
    n = strcspn(node, "\n");
    node[n] = '\0';
    if (n == 0 && gethostname(node, NA_AUTO_NODE_MAX - 1) != 0)
        strcpy(node, "localhost");
    node[NA_AUTO_NODE_MAX - 1] = '\0';
    for (char *p = node; *p; p++)
        if (*p == '#' || *p == '@')
            *p = '-';
}

static struct na_auto_context *
na_auto_ctx(na_context_t *context)
{
    return context->plugin_context;
}

na_return_t
na_auto_op_start(struct na_op_id *op, na_context_t *context, na_cb_type_t type,
                 na_cb_t callback, void *arg)
{
    int idle = NA_AUTO_OP_IDLE;

    if (op == NULL)
        return NA_INVALID_ARG;
    if (!atomic_compare_exchange_strong(&op->status, &idle, NA_AUTO_OP_POSTED))
        return NA_BUSY;
    op->context = context;
    op->queued = false;
    op->completion.callback = callback;
    op->completion.callback_info.arg = arg;
    op->completion.callback_info.type = type;
    op->completion.callback_info.ret = NA_SUCCESS;
    atomic_fetch_add(&na_auto_ctx(context)->pending, 1);
    return NA_SUCCESS;
}

void
na_auto_op_abort(struct na_op_id *op)
{
    atomic_store(&op->status, NA_AUTO_OP_IDLE);
    atomic_fetch_sub(&na_auto_ctx(op->context)->pending, 1);
}

void
na_auto_op_finish(struct na_op_id *op, na_return_t ret)
{
    struct na_auto_context *ac = na_auto_ctx(op->context);

    op->completion.callback_info.ret = ret;
    atomic_store(&op->status, NA_AUTO_OP_COMPLETED);
    atomic_fetch_add(&ac->completed, 1);
    atomic_fetch_add(&ac->cls->completed, 1);
    na_cb_completion_add(op->context, &op->completion);
    atomic_fetch_sub(&ac->pending, 1);
}

/* An inner operation completed (runs from our NA_Trigger of it). */
void
na_auto_inner_cb(const struct na_cb_info *info)
{
    struct na_op_id *op = info->arg;

    if (info->type == NA_CB_RECV_EXPECTED)
        op->completion.callback_info.info.recv_expected.actual_buf_size =
            info->info.recv_expected.actual_buf_size;
    na_auto_op_finish(op, info->ret);
}

/* Give a message to a user's receive (ac->lock held, op taken off). */
static void
na_auto_fill(struct na_op_id *op, struct na_addr *source, na_tag_t tag,
             const void *data, size_t len)
{
    struct na_cb_info_recv_unexpected *ru =
        &op->completion.callback_info.info.recv_unexpected;
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

static void na_auto_rx_post(struct na_auto_rx *rx);

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
        op = TAILQ_FIRST(&ac->posted);
        if (op != NULL) {
            TAILQ_REMOVE(&ac->posted, op, entry);
            op->queued = false;
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

static void
na_auto_rx_post(struct na_auto_rx *rx)
{
    struct na_auto_context *ac = rx->ac;
    struct na_auto_class *cls = ac->cls;

    if (NA_Msg_recv_unexpected(cls->inner[rx->side], ac->inner[rx->side],
                               na_auto_rx_cb, rx, rx->buf, cls->max_unexp,
                               rx->plugin_data, rx->op) == NA_SUCCESS)
        rx->live = true;
}

/* Drive both inner contexts once: their completions run our callbacks. */
static void
na_auto_progress(struct na_auto_context *ac)
{
    for (int s = 0; s < 2; s++) {
        NA_Poll(ac->cls->inner[s], ac->inner[s], NULL);
        NA_Trigger(ac->inner[s], UINT32_MAX, NULL);
    }
}

static void
na_auto_ctx_free(struct na_auto_context *ac)
{
    struct na_auto_class *cls = ac->cls;
    struct na_auto_msg *m;

    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < NA_AUTO_RX_PER_CLASS; i++) {
            struct na_auto_rx *rx = &ac->rx[s][i];
            if (rx->op != NULL)
                NA_Op_destroy(cls->inner[s], rx->op);
            if (rx->buf != NULL)
                NA_Msg_buf_free(cls->inner[s], rx->buf, rx->plugin_data);
        }
        if (ac->inner[s] != NULL)
            NA_Context_destroy(cls->inner[s], ac->inner[s]);
    }
    while ((m = TAILQ_FIRST(&ac->backlog)) != NULL) {
        TAILQ_REMOVE(&ac->backlog, m, entry);
        na_auto_addr_release(m->source);
        free(m);
    }
    pthread_mutex_destroy(&ac->lock);
    free(ac);
}

/* Withdraw the internal receives; false if some would not complete. */
static bool
na_auto_rx_close(struct na_auto_context *ac)
{
    uint64_t deadline;
    bool live = true;

    ac->closing = true;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NA_AUTO_RX_PER_CLASS; i++)
            if (ac->rx[s][i].live)
                NA_Cancel(ac->cls->inner[s], ac->inner[s], ac->rx[s][i].op);
    deadline = na_plugin_clock_monotonic_ns() + NA_AUTO_CLOSE_NS;
    while (live && na_plugin_clock_monotonic_ns() < deadline) {
        na_auto_progress(ac);
        live = false;
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < NA_AUTO_RX_PER_CLASS; i++)
                live |= ac->rx[s][i].live;
    }
    return !live;
}

static na_return_t
na_auto_context_create(na_class_t *na_class, na_context_t *context, uint8_t id,
                       void **plugin_context)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = calloc(1, sizeof(*ac));

    if (ac == NULL)
        return NA_NOMEM;
    ac->cls = cls;
    ac->context = context;
    pthread_mutex_init(&ac->lock, NULL);
    TAILQ_INIT(&ac->posted);
    TAILQ_INIT(&ac->backlog);
    for (int s = 0; s < 2; s++) {
        ac->inner[s] = NA_Context_create_id(cls->inner[s], id);
        if (ac->inner[s] == NULL)
            goto fail;
        for (int i = 0; i < NA_AUTO_RX_PER_CLASS; i++) {
            struct na_auto_rx *rx = &ac->rx[s][i];
            rx->ac = ac;
            rx->side = s;
            rx->op = NA_Op_create(cls->inner[s], 0);
            rx->buf = NA_Msg_buf_alloc(cls->inner[s], cls->max_unexp, 0,
                                       &rx->plugin_data);
            if (rx->op == NULL || rx->buf == NULL)
                goto fail;
            na_auto_rx_post(rx);
            if (!rx->live)
                goto fail;
        }
    }
    *plugin_context = ac;
    return NA_SUCCESS;

fail:
    (void) na_auto_rx_close(ac);
    na_auto_ctx_free(ac);
    return NA_NOMEM;
}

static na_return_t
na_auto_context_destroy(na_class_t *na_class, void *plugin_context)
{
    struct na_auto_context *ac = plugin_context;

    (void) na_class;
    if (atomic_load(&ac->pending) != 0)
        return NA_BUSY;
    if (!na_auto_rx_close(ac))
        return NA_BUSY;
    na_auto_ctx_free(ac);
    return NA_SUCCESS;
}

static void
na_auto_op_release(void *arg)
{
    struct na_op_id *op = arg;

    atomic_store(&op->status, NA_AUTO_OP_IDLE);
}

static na_op_id_t *
na_auto_op_create(na_class_t *na_class, unsigned long flags)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_op_id *op = calloc(1, sizeof(*op));

    if (op == NULL)
        return NULL;
    op->cls = cls;
    for (int s = 0; s < 2; s++) {
        op->inner[s] = NA_Op_create(cls->inner[s], flags);
        if (op->inner[s] == NULL) {
            if (s == 1)
                NA_Op_destroy(cls->inner[0], op->inner[0]);
            free(op);
            return NULL;
        }
    }
    op->completion.plugin_callback = na_auto_op_release;
    op->completion.plugin_callback_args = op;
    return op;
}

static na_return_t
na_auto_op_destroy(na_class_t *na_class, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);

    if (op == NULL)
        return NA_SUCCESS;
    if (atomic_load(&op->status) != NA_AUTO_OP_IDLE)
        return NA_BUSY;
    for (int s = 0; s < 2; s++)
        NA_Op_destroy(cls->inner[s], op->inner[s]);
    free(op);
    return NA_SUCCESS;
}

static size_t
na_auto_max_unexp(const na_class_t *na_class)
{
    return na_auto_class(na_class)->max_unexp;
}

static size_t
na_auto_max_exp(const na_class_t *na_class)
{
    return na_auto_class(na_class)->max_exp;
}

static na_tag_t
na_auto_max_tag(const na_class_t *na_class)
{
    return na_auto_class(na_class)->max_tag;
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

static na_return_t
na_auto_send(na_class_t *na_class, na_context_t *context, na_cb_t callback,
             void *arg, const void *buf, size_t size, void *plugin_data,
             na_addr_t dest, uint8_t dest_id, na_tag_t tag, na_op_id_t *op,
             bool expected)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = na_auto_ctx(context);
    int s = na_auto_addr_side(dest);
    na_return_t ret;

    ret = na_auto_op_start(
        op, context, expected ? NA_CB_SEND_EXPECTED : NA_CB_SEND_UNEXPECTED,
        callback, arg);
    if (ret != NA_SUCCESS)
        return ret;
    op->side = s;
    ret = (expected ? NA_Msg_send_expected : NA_Msg_send_unexpected)(
        cls->inner[s], ac->inner[s], na_auto_inner_cb, op, buf, size,
        s == NA_AUTO_NET ? plugin_data : NULL, dest->part[s], dest_id, tag,
        op->inner[s]);
    if (ret != NA_SUCCESS)
        na_auto_op_abort(op);
    return ret;
}

static na_return_t
na_auto_send_unexpected(na_class_t *na_class, na_context_t *context,
                        na_cb_t callback, void *arg, const void *buf,
                        size_t size, void *plugin_data, na_addr_t dest,
                        uint8_t dest_id, na_tag_t tag, na_op_id_t *op)
{
    return na_auto_send(na_class, context, callback, arg, buf, size,
                        plugin_data, dest, dest_id, tag, op, false);
}

static na_return_t
na_auto_send_expected(na_class_t *na_class, na_context_t *context,
                      na_cb_t callback, void *arg, const void *buf, size_t size,
                      void *plugin_data, na_addr_t dest, uint8_t dest_id,
                      na_tag_t tag, na_op_id_t *op)
{
    return na_auto_send(na_class, context, callback, arg, buf, size,
                        plugin_data, dest, dest_id, tag, op, true);
}

static na_return_t
na_auto_recv_unexpected(na_class_t *na_class, na_context_t *context,
                        na_cb_t callback, void *arg, void *buf, size_t size,
                        void *plugin_data, na_op_id_t *op)
{
    struct na_auto_context *ac = na_auto_ctx(context);
    struct na_auto_msg *m;
    na_return_t ret;

    (void) na_class;
    (void) plugin_data;
    ret = na_auto_op_start(op, context, NA_CB_RECV_UNEXPECTED, callback, arg);
    if (ret != NA_SUCCESS)
        return ret;
    op->buf = buf;
    op->size = size;
    op->side = -1;
    pthread_mutex_lock(&ac->lock);
    m = TAILQ_FIRST(&ac->backlog);
    if (m != NULL) {
        TAILQ_REMOVE(&ac->backlog, m, entry);
        na_auto_fill(op, m->source, m->tag, m->data, m->len);
        free(m);
    } else {
        op->queued = true;
        TAILQ_INSERT_TAIL(&ac->posted, op, entry);
    }
    pthread_mutex_unlock(&ac->lock);
    return NA_SUCCESS;
}

static na_return_t
na_auto_recv_expected(na_class_t *na_class, na_context_t *context,
                      na_cb_t callback, void *arg, void *buf, size_t size,
                      void *plugin_data, na_addr_t source, uint8_t source_id,
                      na_tag_t tag, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = na_auto_ctx(context);
    int s = na_auto_addr_side(source);
    na_return_t ret;

    ret = na_auto_op_start(op, context, NA_CB_RECV_EXPECTED, callback, arg);
    if (ret != NA_SUCCESS)
        return ret;
    op->side = s;
    ret =
        NA_Msg_recv_expected(cls->inner[s], ac->inner[s], na_auto_inner_cb, op,
                             buf, size, s == NA_AUTO_NET ? plugin_data : NULL,
                             source->part[s], source_id, tag, op->inner[s]);
    if (ret != NA_SUCCESS)
        na_auto_op_abort(op);
    return ret;
}

static int
na_auto_poll_get_fd(na_class_t *na_class, na_context_t *context)
{
    (void) na_class;
    (void) context;
    return -1; /* two classes, two fds: waiting is poll_wait's */
}

static na_return_t
na_auto_poll(na_class_t *na_class, na_context_t *context, unsigned int *count)
{
    struct na_auto_context *ac = na_auto_ctx(context);
    unsigned int before = atomic_load(&ac->completed);

    (void) na_class;
    na_auto_progress(ac);
    if (count != NULL)
        *count = atomic_load(&ac->completed) - before;
    return NA_SUCCESS;
}

/*
 * Spin over both classes, then sleep in the shared-memory class's wait
 * (woken by its peers) with the network class's fd beside it; without
 * such an fd the sleep is cut into 1 ms slices.
 */
static na_return_t
na_auto_poll_wait(na_class_t *na_class, na_context_t *context,
                  unsigned int timeout_ms, unsigned int *count)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = na_auto_ctx(context);
    unsigned int before = atomic_load(&ac->completed);
    unsigned int cls_before = atomic_load(&cls->completed);
    uint64_t now = na_plugin_clock_monotonic_ns();
    uint64_t deadline = now + (uint64_t) timeout_ms * 1000000u;
    uint64_t spin_end = cls->no_block ? deadline : now + NA_AUTO_SPIN_NS;
    int net_fd =
        NA_Poll_get_fd(cls->inner[NA_AUTO_NET], ac->inner[NA_AUTO_NET]);
    unsigned int n;

    if (spin_end > deadline)
        spin_end = deadline;
    for (;;) {
        na_auto_progress(ac);
        if (atomic_load(&ac->completed) != before)
            goto done;
        now = na_plugin_clock_monotonic_ns();
        if (now >= spin_end)
            break;
    }
    while (now < deadline) {
        unsigned int left =
            (unsigned int) ((deadline - now + 999999u) / 1000000u);
        na_sm_sleep_with(cls->inner[NA_AUTO_SM], net_fd,
                         net_fd >= 0 ? left : 1);
        na_auto_progress(ac);
        if (atomic_load(&ac->completed) != before ||
            atomic_load(&cls->completed) != cls_before)
            break;
        now = na_plugin_clock_monotonic_ns();
    }
done:
    n = atomic_load(&ac->completed) - before;
    if (count != NULL)
        *count = n;
    return n != 0 ? NA_SUCCESS : NA_TIMEOUT;
}

static na_return_t
na_auto_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac;
    bool mine = false;

    (void) context;
    if (atomic_load(&op->status) != NA_AUTO_OP_POSTED)
        return NA_SUCCESS;
    ac = na_auto_ctx(op->context);
    pthread_mutex_lock(&ac->lock);
    if (op->queued) {
        TAILQ_REMOVE(&ac->posted, op, entry);
        op->queued = false;
        mine = true;
    }
    pthread_mutex_unlock(&ac->lock);
    if (mine) {
        na_auto_op_finish(op, NA_CANCELED);
        return NA_SUCCESS;
    }
    if (op->side >= 0)
        return NA_Cancel(cls->inner[op->side], ac->inner[op->side],
                         op->inner[op->side]);
    return NA_SUCCESS;
}

static uint64_t
na_auto_clock_now(na_class_t *na_class)
{
    (void) na_class;
    return na_plugin_clock_monotonic_ns();
}

static bool
na_auto_check_protocol(const char *protocol_name)
{
    (void) protocol_name;
    return false; /* never chosen by an info string */
}

static na_return_t
na_auto_initialize_op(na_class_t *na_class, const struct na_info *info,
                      bool listen)
{
    (void) na_class;
    (void) info;
    (void) listen;
    return NA_OPNOTSUPPORTED;
}

static na_return_t
na_auto_finalize(na_class_t *na_class)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    na_return_t ret;

    if (cls == NULL)
        return NA_SUCCESS;
    ret = NA_Finalize(cls->inner[NA_AUTO_SM]);
    if (ret != NA_SUCCESS)
        return ret;
    cls->inner[NA_AUTO_SM] = NULL;
    ret = NA_Finalize(cls->inner[NA_AUTO_NET]);
    if (ret != NA_SUCCESS)
        return ret;
    free(cls);
    na_class->plugin_class = NULL;
    return NA_SUCCESS;
}

static const struct na_class_ops na_auto_class_ops = {
    .class_name = "auto_sm",
    .check_protocol = na_auto_check_protocol,
    .initialize = na_auto_initialize_op,
    .finalize = na_auto_finalize,
    .context_create = na_auto_context_create,
    .context_destroy = na_auto_context_destroy,
    .op_create = na_auto_op_create,
    .op_destroy = na_auto_op_destroy,
    .addr_lookup = na_auto_addr_lookup,
    .addr_free = na_auto_addr_free,
    .addr_self = na_auto_addr_self,
    .addr_dup = na_auto_addr_dup,
    .addr_cmp = na_auto_addr_cmp,
    .addr_is_self = na_auto_addr_is_self,
    .addr_to_string = na_auto_addr_to_string,
    .addr_get_serialize_size = na_auto_addr_get_serialize_size,
    .addr_serialize = na_auto_addr_serialize,
    .addr_deserialize = na_auto_addr_deserialize,
    .msg_get_max_unexpected_size = na_auto_max_unexp,
    .msg_get_max_expected_size = na_auto_max_exp,
    .msg_get_max_tag = na_auto_max_tag,
    .msg_buf_alloc = na_auto_msg_buf_alloc,
    .msg_buf_free = na_auto_msg_buf_free,
    .msg_send_unexpected = na_auto_send_unexpected,
    .msg_recv_unexpected = na_auto_recv_unexpected,
    .msg_send_expected = na_auto_send_expected,
    .msg_recv_expected = na_auto_recv_expected,
    .mem_handle_create = na_auto_mem_handle_create,
    .mem_handle_create_segments =
        na_plugin_mem_handle_create_segments_opnotsupported,
    .mem_handle_free = na_auto_mem_handle_free,
    .mem_register = na_auto_mem_register,
    .mem_deregister = na_auto_mem_deregister,
    .mem_handle_get_serialize_size = na_auto_mem_handle_get_serialize_size,
    .mem_handle_serialize = na_auto_mem_handle_serialize,
    .mem_handle_deserialize = na_auto_mem_handle_deserialize,
    .put = na_auto_put,
    .get = na_auto_get,
    .poll_get_fd = na_auto_poll_get_fd,
    .poll = na_auto_poll,
    .poll_wait = na_auto_poll_wait,
    .cancel = na_auto_cancel,
    .clock_now = na_auto_clock_now,
};

static size_t
na_auto_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

na_class_t *
na_sm_auto_initialize(const char *info_string, const char *sm_info_string,
                      bool listen, const struct na_init_info *na_init_info)
{
    struct na_init_info ii =
        na_init_info ? *na_init_info : NA_INIT_INFO_INITIALIZER;
    struct na_init_info sm_ii = ii;
    struct na_auto_class *cls;
    na_class_t *net, *sm, *outer;

    net = NA_Initialize_opt2(info_string, listen,
                             NA_VERSION(NA_VERSION_MAJOR, 0), &ii);
    if (net == NULL)
        return NULL;
    if (strcmp(NA_Get_class_protocol(net), "sm") == 0)
        return net; /* already shared memory: nothing to add */
    /* Network-only options stay with the network class. */
    sm_ii.ip_subnet = NULL;
    sm_ii.auth_key = NULL;
    sm_ii.multi_recv_op_max = 0;
    sm = NA_Initialize_opt2(sm_info_string ? sm_info_string : "na+sm", listen,
                            NA_VERSION(NA_VERSION_MAJOR, 0), &sm_ii);
    if (sm == NULL) {
        na_plugin_log_error("auto_sm", "no shared-memory class (\"%s\")",
                            sm_info_string ? sm_info_string : "na+sm");
        NA_Finalize(net);
        return NULL;
    }
    cls = calloc(1, sizeof(*cls));
    outer = calloc(1, sizeof(*outer));
    if (cls == NULL || outer == NULL ||
        (outer->protocol_name = strdup(NA_Get_class_protocol(net))) == NULL) {
        free(cls);
        free(outer);
        NA_Finalize(sm);
        NA_Finalize(net);
        return NULL;
    }
    cls->inner[NA_AUTO_NET] = net;
    cls->inner[NA_AUTO_SM] = sm;
    na_auto_read_node(cls->node);
    cls->ops = na_auto_class_ops;
    cls->ops.class_name = NA_Get_class_name(net);
    cls->max_unexp = na_auto_min(NA_Msg_get_max_unexpected_size(net),
                                 NA_Msg_get_max_unexpected_size(sm));
    cls->max_exp = na_auto_min(NA_Msg_get_max_expected_size(net),
                               NA_Msg_get_max_expected_size(sm));
    cls->max_tag = NA_Msg_get_max_tag(net) < NA_Msg_get_max_tag(sm)
                       ? NA_Msg_get_max_tag(net)
                       : NA_Msg_get_max_tag(sm);
    cls->no_block = (ii.progress_mode & NA_NO_BLOCK) != 0;
    outer->ops = &cls->ops;
    outer->plugin_class = cls;
    outer->listen = listen;
    pthread_mutex_init(&outer->lock, NULL);
    return outer;
}
