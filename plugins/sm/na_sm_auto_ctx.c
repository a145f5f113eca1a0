/*
 * auto_sm contexts and progress (see na_sm_auto_internal.h): a context
 * owns one inner context per class with its internal unexpected receives;
 * progress drives both inner classes, and waiting spins over both before
 * sleeping in the shared-memory class's wait.
 */
#include "na_sm_auto_internal.h"

#include <stdlib.h>

#define NA_AUTO_SPIN_NS 30000u
#define NA_AUTO_CLOSE_NS (5ull * 1000000000ull)

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
                       void *plugin_context)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = plugin_context;

    ac->cls = cls;
    ac->context = context;
    pthread_mutex_init(&ac->lock, NULL);
    na_op_list_init(&ac->posted);
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

/* The core calls this once per post, for a started op: a receive on our
 * posted list is ours to finish; any other op is its inner op's. */
static na_return_t
na_auto_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op)
{
    struct na_auto_class *cls = na_auto_class(na_class);
    struct na_auto_context *ac = na_auto_ctx(op->context);
    bool mine;

    (void) context;
    pthread_mutex_lock(&ac->lock);
    mine = na_op_list_active(op);
    na_op_list_remove(op);
    pthread_mutex_unlock(&ac->lock);
    if (mine)
        na_auto_op_finish(op, NA_CANCELED);
    else if (op->side >= 0)
        return NA_Cancel(cls->inner[op->side], ac->inner[op->side],
                         op->inner[op->side]);
    return NA_SUCCESS;
}

const struct na_context_ops na_auto_context_ops = {
    .context_size = sizeof(struct na_auto_context),
    .create = na_auto_context_create,
    .destroy = na_auto_context_destroy,
    .poll_get_fd = na_auto_poll_get_fd,
    .poll = na_auto_poll,
    .poll_wait = na_auto_poll_wait,
    .cancel = na_auto_cancel,
};
