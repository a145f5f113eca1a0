/*
 * Bulk transfers: virtual offsets mapped onto both sides' segments, split
 * into pieces of at most HG_BULK_PIECE_MAX and pipelined HG_BULK_PIPELINE
 * at a time as NA puts and gets straight between the user's buffers (no
 * staging copy). Eager descriptors and local-to-local transfers are plain
 * memory copies.
 *
 * Completion rule: a transfer's pieces form a group (lib/core/hg_opgroup.h)
 * under op->lock. It is open while pieces remain to be posted; each piece
 * is counted before it is posted, and the group closes once every byte is
 * posted or an error or cancel stopped the posting. The transfer finishes
 * when the group ends (closed, nothing in flight), so the callback is
 * queued exactly once, with the first error.
 */
#include "bulk/hg_bulk_internal.h"

#include <stdlib.h>
#include <string.h>

/* The pool of transfers a context keeps (struct hg_bulk_pool). */

hg_return_t
hg_bulk_pool_init(struct hg_core *core)
{
    struct hg_bulk_pool *pool = calloc(1, sizeof(*pool));

    if (pool == NULL)
        return HG_NOMEM;
    pthread_mutex_init(&pool->lock, NULL);
    STAILQ_INIT(&pool->idle);
    core->bulk_pool = pool;
    return HG_SUCCESS;
}

unsigned int
hg_bulk_pool_live(struct hg_core *core)
{
    struct hg_bulk_pool *pool = core->bulk_pool;
    unsigned int live;

    if (pool == NULL)
        return 0;
    qs_mutex_lock(&pool->lock);
    live = pool->n_live;
    pthread_mutex_unlock(&pool->lock);
    return live;
}

void
hg_bulk_pool_fini(struct hg_core *core)
{
    struct hg_bulk_pool *pool = core->bulk_pool;
    na_class_t *na_class = core->cls->na_class;
    struct hg_bulk_xfer *op;

    if (pool == NULL)
        return;
    while ((op = STAILQ_FIRST(&pool->idle)) != NULL) {
        STAILQ_REMOVE_HEAD(&pool->idle, entry);
        hg_core_timer_unlink(core, &op->timer);
        for (int i = 0; i < HG_BULK_PIPELINE; i++)
            NA_Op_destroy(na_class, op->pieces[i].na_op);
        pthread_mutex_destroy(&op->lock);
        free(op);
    }
    pthread_mutex_destroy(&pool->lock);
    free(pool);
    core->bulk_pool = NULL;
}

static struct hg_bulk_xfer *
hg_bulk_op_get(hg_context_t *context)
{
    struct hg_core *core = hg_core_of(context);
    struct hg_bulk_pool *pool = core->bulk_pool;
    na_class_t *na_class = core->cls->na_class;
    struct hg_bulk_xfer *op;

    qs_mutex_lock(&pool->lock);
    op = STAILQ_FIRST(&pool->idle);
    if (op != NULL)
        STAILQ_REMOVE_HEAD(&pool->idle, entry);
    pool->n_live++;
    pthread_mutex_unlock(&pool->lock);
    if (op != NULL)
        return op;
    op = calloc(1, sizeof(*op));
    if (op == NULL)
        goto error;
    op->ctx = context;
    op->core = core;
    pthread_mutex_init(&op->lock, NULL);
    for (int i = 0; i < HG_BULK_PIPELINE; i++) {
        op->pieces[i].op = op;
        op->pieces[i].na_op = NA_Op_create(na_class, 0);
        if (op->pieces[i].na_op == NULL) {
            for (int j = 0; j < i; j++)
                NA_Op_destroy(na_class, op->pieces[j].na_op);
            pthread_mutex_destroy(&op->lock);
            free(op);
            goto error;
        }
    }
    return op;

error:
    qs_mutex_lock(&pool->lock);
    pool->n_live--;
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static void
hg_bulk_op_put(struct hg_bulk_xfer *op)
{
    struct hg_bulk_pool *pool = op->core->bulk_pool;

    HG_Bulk_free(op->origin);
    HG_Bulk_free(op->local);
    if (op->addr != HG_ADDR_NULL)
        HG_Addr_free(op->core->hg_class, op->addr);
    op->origin = op->local = HG_BULK_NULL;
    op->addr = HG_ADDR_NULL;
    qs_mutex_lock(&op->lock);
    op->active = false;
    pthread_mutex_unlock(&op->lock);
    qs_mutex_lock(&pool->lock);
    pool->n_live--;
    STAILQ_INSERT_HEAD(&pool->idle, op, entry);
    pthread_mutex_unlock(&pool->lock);
}

static void hg_bulk_trigger(struct hg_completion *comp);

static void
hg_bulk_op_finish(struct hg_bulk_xfer *op)
{
    hg_core_timer_disarm(&op->timer);
    if (op->internal_cb != NULL) {
        /* The RPC layer's overflow pull: no user callback to queue. */
        hg_bulk_internal_cb_t cb = op->internal_cb;
        void *arg = op->internal_arg;
        hg_return_t ret = hg_opgroup_result(&op->ops);

        hg_bulk_op_put(op);
        cb(arg, ret);
        return;
    }
    op->comp.run = hg_bulk_trigger;
    op->comp.object = op;
    hg_core_complete(op->core, &op->comp);
}

static void
hg_bulk_trigger(struct hg_completion *comp)
{
    struct hg_bulk_xfer *op = comp->object;
    struct hg_cb_info info = {
        .arg = op->arg, .type = HG_CB_BULK, .ret = hg_opgroup_result(&op->ops)};

    info.info.bulk.origin_handle = op->origin;
    info.info.bulk.local_handle = op->local;
    info.info.bulk.op = op->op;
    info.info.bulk.size = op->size;
    if (op->callback != NULL)
        op->callback(&info);
    hg_bulk_op_put(op);
}

static void hg_bulk_na_cb(const struct na_cb_info *info);

/* Post the next piece (op->lock held, a pipeline slot free): at most
 * HG_BULK_PIECE_MAX bytes, within one segment on each side. It is counted
 * before the post; a post that fails ends it with its error. */
static void
hg_bulk_post_piece(struct hg_bulk_xfer *op)
{
    na_class_t *na_class = op->core->cls->na_class;
    struct hg_bulk_piece *piece = NULL;
    hg_size_t o_off, l_off, len;
    uint32_t oi, li;
    na_return_t na_ret;

    for (int i = 0; i < HG_BULK_PIPELINE; i++)
        if (!op->pieces[i].busy) {
            piece = &op->pieces[i];
            break;
        }
    oi = hg_bulk_seek(op->origin, op->origin_off, &o_off);
    li = hg_bulk_seek(op->local, op->local_off, &l_off);
    len = op->remaining;
    if (op->origin->segs[oi].len - o_off < len)
        len = op->origin->segs[oi].len - o_off;
    if (op->local->segs[li].len - l_off < len)
        len = op->local->segs[li].len - l_off;
    if (len > HG_BULK_PIECE_MAX)
        len = HG_BULK_PIECE_MAX;
    piece->busy = true;
    hg_opgroup_add(&op->ops, 1);
    op->origin_off += len;
    op->local_off += len;
    op->remaining -= len;
    na_ret = (op->op == HG_BULK_PULL ? NA_Get : NA_Put)(
        na_class, op->core->na_context, hg_bulk_na_cb, piece,
        op->local->segs[li].mh, l_off, op->origin->segs[oi].mh, o_off, len,
        op->addr->na_addr, op->origin_id, piece->na_op);
    if (na_ret != NA_SUCCESS) {
        piece->busy = false;
        /* The group is open: this cannot end it. */
        (void) hg_opgroup_end(&op->ops, hg_from_na(na_ret));
    }
}

/* Post pieces until the pipeline is full or the range is covered, and
 * close the group once nothing more will be posted: every byte is, or an
 * error or cancel stopped it. op->lock held and the group open; true when
 * the close ended the transfer (nothing was in flight). */
static bool
hg_bulk_post_locked(struct hg_bulk_xfer *op)
{
    while (hg_opgroup_result(&op->ops) == HG_SUCCESS && op->remaining > 0 &&
           hg_opgroup_running(&op->ops) < HG_BULK_PIPELINE)
        hg_bulk_post_piece(op);
    if (hg_opgroup_result(&op->ops) == HG_SUCCESS && op->remaining > 0)
        return false; /* the pipeline is full: completions post the rest */
    return hg_opgroup_close(&op->ops);
}

/* A piece ended: record it and, while the group is open, post the next
 * ones in the same lock section. */
static void
hg_bulk_na_cb(const struct na_cb_info *info)
{
    struct hg_bulk_piece *piece = info->arg;
    struct hg_bulk_xfer *op = piece->op;
    bool finished;

    qs_mutex_lock(&op->lock);
    piece->busy = false;
    finished =
        hg_opgroup_end(&op->ops, hg_from_na(info->ret)) == HG_OPGROUP_DONE;
    if (hg_opgroup_is_open(&op->ops))
        finished = hg_bulk_post_locked(op);
    pthread_mutex_unlock(&op->lock);
    if (finished)
        hg_bulk_op_finish(op);
}

/* Start posting a transfer's pieces (its group is open). */
static void
hg_bulk_post_first(struct hg_bulk_xfer *op)
{
    bool finished;

    qs_mutex_lock(&op->lock);
    finished = hg_bulk_post_locked(op);
    pthread_mutex_unlock(&op->lock);
    if (finished)
        hg_bulk_op_finish(op);
}

void
hg_bulk_op_cancel(struct hg_bulk_xfer *op)
{
    na_class_t *na_class = op->core->cls->na_class;

    qs_mutex_lock(&op->lock);
    if (!op->active || !hg_opgroup_busy(&op->ops)) {
        pthread_mutex_unlock(&op->lock);
        return;
    }
    /* The error stops the posting; the pieces in flight end cancelled. */
    hg_opgroup_fail(&op->ops, HG_CANCELED);
    for (int i = 0; i < HG_BULK_PIPELINE; i++)
        if (op->pieces[i].busy)
            NA_Cancel(na_class, op->core->na_context, op->pieces[i].na_op);
    pthread_mutex_unlock(&op->lock);
}

hg_return_t
HG_Bulk_cancel(hg_op_id_t op_id)
{
    qs_bias_gate();
    if (op_id == HG_OP_ID_NULL || (hg_op_id_t *) op_id == HG_OP_ID_IGNORE)
        return HG_INVALID_ARG;
    hg_bulk_op_cancel((struct hg_bulk_xfer *) op_id);
    return HG_SUCCESS;
}

static void
hg_bulk_expire(struct hg_timer *timer)
{
    struct hg_bulk_xfer *op =
        (struct hg_bulk_xfer *) ((char *) timer -
                                 offsetof(struct hg_bulk_xfer, timer));

    qs_mutex_lock(&op->lock);
    hg_opgroup_fail(&op->ops, HG_TIMEOUT);
    pthread_mutex_unlock(&op->lock);
    hg_bulk_op_cancel(op);
}

/* Copy between two memory-backed views over virtual offsets. */
static void
hg_bulk_copy(const struct hg_bulk *dst, hg_size_t dst_off,
             const struct hg_bulk *src, const void *src_flat, hg_size_t src_off,
             hg_size_t size)
{
    hg_size_t d_off, s_off = src_off;
    uint32_t di = hg_bulk_seek(dst, dst_off, &d_off), si = 0;

    if (src_flat == NULL)
        si = hg_bulk_seek(src, src_off, &s_off);
    while (size > 0) {
        hg_size_t len = size, s_left;
        const char *s;

        if (dst->segs[di].len - d_off < len)
            len = dst->segs[di].len - d_off;
        if (src_flat != NULL) {
            s = (const char *) src_flat + s_off;
        } else {
            s_left = src->segs[si].len - s_off;
            if (s_left < len)
                len = s_left;
            s = (const char *) src->segs[si].base + s_off;
        }
        if (len > 0)
            memcpy((char *) dst->segs[di].base + d_off, s, len);
        size -= len;
        d_off += len;
        s_off += len;
        if (d_off == dst->segs[di].len) {
            di++;
            d_off = 0;
        }
        if (src_flat == NULL && s_off == src->segs[si].len) {
            si++;
            s_off = 0;
        }
    }
}

/* Whether a transfer may run: HG_INVALID_ARG for a bad handle, context or
 * range, HG_PERMISSION for a handle without the access it needs (both
 * logged). */
static hg_return_t
hg_bulk_transfer_check(hg_context_t *context, hg_bulk_op_t op_type,
                       hg_bulk_t origin, hg_size_t origin_offset,
                       hg_bulk_t local, hg_size_t local_offset, hg_size_t size)
{
    uint8_t need_origin, need_local;

    if (context == NULL || origin == HG_BULK_NULL || local == HG_BULK_NULL ||
        (op_type != HG_BULK_PULL && op_type != HG_BULK_PUSH) || local->remote ||
        origin->hg_class != hg_core_of(context)->hg_class ||
        local->hg_class != hg_core_of(context)->hg_class)
        return HG_INVALID_ARG;
    if (origin_offset > origin->size || size > origin->size - origin_offset ||
        local_offset > local->size || size > local->size - local_offset) {
        qs_log("bulk", QS_LOG_ERROR,
               "HG_Bulk_transfer: range [%llu+%llu] / [%llu+%llu] "
               "past the end of a %llu / %llu byte handle",
               (unsigned long long) origin_offset, (unsigned long long) size,
               (unsigned long long) local_offset, (unsigned long long) size,
               (unsigned long long) origin->size,
               (unsigned long long) local->size);
        return HG_INVALID_ARG;
    }
    need_origin =
        op_type == HG_BULK_PULL ? HG_BULK_READ_ONLY : HG_BULK_WRITE_ONLY;
    need_local =
        op_type == HG_BULK_PULL ? HG_BULK_WRITE_ONLY : HG_BULK_READ_ONLY;
    if (!(origin->flags & need_origin) || !(local->flags & need_local)) {
        qs_log("bulk", QS_LOG_ERROR,
               "HG_Bulk_transfer: %s needs %s access to the origin "
               "and %s access to the local handle",
               op_type == HG_BULK_PULL ? "pull" : "push",
               need_origin == HG_BULK_READ_ONLY ? "read" : "write",
               need_local == HG_BULK_READ_ONLY ? "read" : "write");
        return HG_PERMISSION;
    }
    return HG_SUCCESS;
}

/* Eager data or local memory: copy at once (the op's group stays idle). A
 * user's callback is still deferred to HG_Trigger(): callbacks never run
 * inside the call that started the operation. The RPC layer's internal
 * continuation runs at once. */
static void
hg_bulk_transfer_copy(struct hg_bulk_xfer *op, hg_size_t origin_offset,
                      hg_size_t local_offset)
{
    if (op->op == HG_BULK_PULL)
        hg_bulk_copy(op->local, local_offset, op->origin, op->origin->eager,
                     origin_offset, op->size);
    else
        hg_bulk_copy(op->origin, origin_offset, op->local, NULL, local_offset,
                     op->size);
    op->remaining = 0;
    if (op->internal_cb != NULL) {
        op->internal_cb(op->internal_arg, HG_SUCCESS);
        hg_bulk_op_put(op);
        return;
    }
    hg_bulk_op_finish(op);
}

static hg_return_t
hg_bulk_transfer_start(hg_context_t *context, hg_bulk_cb_t callback, void *arg,
                       hg_bulk_internal_cb_t internal_cb, void *internal_arg,
                       hg_bulk_op_t op_type, hg_addr_t origin_addr,
                       uint8_t origin_id, hg_bulk_t origin,
                       hg_size_t origin_offset, hg_bulk_t local,
                       hg_size_t local_offset, hg_size_t size,
                       unsigned int timeout_ms, struct hg_bulk_xfer **op_p)
{
    struct hg_bulk_xfer *op;
    hg_return_t ret;
    bool copy;

    ret = hg_bulk_transfer_check(context, op_type, origin, origin_offset, local,
                                 local_offset, size);
    if (ret != HG_SUCCESS)
        return ret;
    /* RMA needs a peer; eager data and local memory need none. */
    copy = size == 0 || !origin->remote ||
           (origin->eager != NULL && op_type == HG_BULK_PULL);
    if (!copy && origin_addr == HG_ADDR_NULL)
        return HG_INVALID_ARG;

    op = hg_bulk_op_get(context);
    if (op == NULL)
        return HG_NOMEM;
    HG_Bulk_ref_incr(origin);
    HG_Bulk_ref_incr(local);
    op->origin = origin;
    op->local = local;
    op->op = op_type;
    op->size = size;
    op->addr = HG_ADDR_NULL;
    if (!copy && HG_Addr_dup(hg_core_of(context)->hg_class, origin_addr,
                             &op->addr) != HG_SUCCESS) {
        hg_bulk_op_put(op);
        return HG_NOMEM;
    }
    op->origin_id = origin_id;
    op->callback = callback;
    op->arg = arg;
    op->internal_cb = internal_cb;
    op->internal_arg = internal_arg;
    /* Open before the op can be seen: a cancel from here on stops it. */
    if (copy)
        hg_opgroup_init(&op->ops);
    else
        hg_opgroup_open(&op->ops);
    op->origin_off = origin_offset;
    op->local_off = local_offset;
    op->remaining = size;
    op->timer.armed = false;
    op->active = true;
    if (internal_cb == NULL)
        HG_CORE_CHECK(op_begin, hg_core_of(context)->hg_class, op,
                      HG_CHECK_TRANSFER);
    if (op_p != NULL)
        *op_p = op;
    if (copy) {
        hg_bulk_transfer_copy(op, origin_offset, local_offset);
        return HG_SUCCESS;
    }
    if (timeout_ms > 0)
        hg_core_timer_arm(op->core, &op->timer, timeout_ms, hg_bulk_expire);
    hg_bulk_post_first(op);
    return HG_SUCCESS;
}

hg_return_t
HG_Bulk_transfer_timed(hg_context_t *context, hg_bulk_cb_t callback, void *arg,
                       hg_bulk_op_t op, hg_addr_t origin_addr,
                       hg_bulk_t origin_handle, hg_size_t origin_offset,
                       hg_bulk_t local_handle, hg_size_t local_offset,
                       hg_size_t size, unsigned int timeout_ms,
                       hg_op_id_t *op_id)
{
    struct hg_bulk_xfer *bulk_op = NULL;
    hg_return_t ret;

    qs_bias_gate();
    ret = hg_bulk_transfer_start(
        context, callback, arg, NULL, NULL, op, origin_addr,
        origin_handle ? origin_handle->context_id : 0, origin_handle,
        origin_offset, local_handle, local_offset, size, timeout_ms, &bulk_op);
    if (ret == HG_SUCCESS && op_id != NULL && op_id != HG_OP_ID_IGNORE)
        *op_id = (hg_op_id_t) bulk_op;
    return ret;
}

hg_return_t
HG_Bulk_transfer(hg_context_t *context, hg_bulk_cb_t callback, void *arg,
                 hg_bulk_op_t op, hg_addr_t origin_addr,
                 hg_bulk_t origin_handle, hg_size_t origin_offset,
                 hg_bulk_t local_handle, hg_size_t local_offset, hg_size_t size,
                 hg_op_id_t *op_id)
{
    return HG_Bulk_transfer_timed(context, callback, arg, op, origin_addr,
                                  origin_handle, origin_offset, local_handle,
                                  local_offset, size, 0, op_id);
}

hg_return_t
HG_Bulk_transfer_id(hg_context_t *context, hg_bulk_cb_t callback, void *arg,
                    hg_bulk_op_t op, hg_addr_t origin_addr,
                    hg_uint8_t origin_id, hg_bulk_t origin_handle,
                    hg_size_t origin_offset, hg_bulk_t local_handle,
                    hg_size_t local_offset, hg_size_t size, hg_op_id_t *op_id)
{
    struct hg_bulk_xfer *bulk_op = NULL;
    hg_return_t ret;

    qs_bias_gate();
    ret = hg_bulk_transfer_start(context, callback, arg, NULL, NULL, op,
                                 origin_addr, origin_id, origin_handle,
                                 origin_offset, local_handle, local_offset,
                                 size, 0, &bulk_op);
    if (ret == HG_SUCCESS && op_id != NULL && op_id != HG_OP_ID_IGNORE)
        *op_id = (hg_op_id_t) bulk_op;
    return ret;
}

hg_return_t
HG_Bulk_bind_transfer(hg_context_t *context, hg_bulk_cb_t callback, void *arg,
                      hg_bulk_op_t op, hg_bulk_t origin_handle,
                      hg_size_t origin_offset, hg_bulk_t local_handle,
                      hg_size_t local_offset, hg_size_t size, hg_op_id_t *op_id)
{
    qs_bias_gate();
    if (origin_handle == HG_BULK_NULL || origin_handle->addr == HG_ADDR_NULL)
        return HG_INVALID_ARG;
    return HG_Bulk_transfer_id(context, callback, arg, op, origin_handle->addr,
                               origin_handle->context_id, origin_handle,
                               origin_offset, local_handle, local_offset, size,
                               op_id);
}

/* The RPC layer's overflow: pull `size` bytes described by `desc` into
 * dst. A descriptor smaller than the announced size is refused. */
hg_return_t
hg_bulk_pull_internal(hg_context_t *context, hg_addr_t origin,
                      uint8_t origin_id, const void *desc, size_t desc_size,
                      void *dst, hg_size_t size, hg_bulk_internal_cb_t cb,
                      void *arg, struct hg_bulk_xfer **op)
{
    hg_bulk_t remote = HG_BULK_NULL, local = HG_BULK_NULL;
    hg_return_t ret;

    ret = HG_Bulk_deserialize(hg_core_of(context)->hg_class, &remote, desc,
                              desc_size);
    if (ret != HG_SUCCESS)
        return ret;
    if (remote->size < size) {
        qs_log("bulk", QS_LOG_ERROR,
               "peer announced %llu bytes but exposes %llu",
               (unsigned long long) size, (unsigned long long) remote->size);
        HG_Bulk_free(remote);
        return HG_OVERFLOW;
    }
    ret = hg_bulk_create_internal(hg_core_of(context)->hg_class, dst, size,
                                  HG_BULK_WRITE_ONLY, &local);
    if (ret == HG_SUCCESS)
        ret = hg_bulk_transfer_start(context, NULL, NULL, cb, arg, HG_BULK_PULL,
                                     origin, origin_id, remote, 0, local, 0,
                                     size, 0, op);
    /* The transfer holds its own references. */
    HG_Bulk_free(remote);
    HG_Bulk_free(local);
    return ret;
}
