/*
 * Operation ids: their life cycle, exactly-once completion and cancel.
 *
 * The core owns an op's life (struct na_op_base) and its busy check; here,
 * under the class lock, a post moves it to QUEUED or POSTED and then to
 * COMPLETED. na_verbs_op_complete() is the only way out of QUEUED and
 * POSTED, and it
 * does nothing for an op in any other state, so whichever of a work
 * completion, a cancel or a connection failure comes first wins and the
 * others are no-ops.
 */
#include "na_verbs_internal.h"

#include <stdlib.h>

/* The core has moved the op to posted after checking that it is idle and
 * belongs to this class. */
void
na_verbs_op_start(na_op_id_t *op, const struct na_op_desc *desc)
{
    struct na_verbs_context *ctx = desc->context->plugin_context;

    op->context = desc->context;
    op->type = desc->type;
    op->addr = NULL;
    op->state = NA_VERBS_OP_QUEUED;
    ctx->pending++;
}

void
na_verbs_op_abort(na_op_id_t *op)
{
    struct na_verbs_context *ctx = op->context->plugin_context;

    ctx->pending--;
    na_verbs_addr_unref(op->addr);
    op->addr = NULL;
    op->state = NA_VERBS_OP_IDLE;
}

void
na_verbs_op_started(na_op_id_t *op)
{
    bool ours =
        op->state == NA_VERBS_OP_QUEUED || op->state == NA_VERBS_OP_POSTED;

    if (ours && !na_op_start(op) && op->state == NA_VERBS_OP_QUEUED)
        na_verbs_op_complete(op, NA_CANCELED);
}

void
na_verbs_op_enqueue(na_op_id_t *op, struct na_op_list *queue)
{
    op->state = NA_VERBS_OP_QUEUED;
    na_op_list_append(queue, op);
}

void
na_verbs_op_complete(na_op_id_t *op, na_return_t ret)
{
    struct na_verbs_context *ctx;
    struct na_verbs_class *cls;

    if (op->state != NA_VERBS_OP_QUEUED && op->state != NA_VERBS_OP_POSTED)
        return;
    na_op_list_remove(op);
    op->state = NA_VERBS_OP_COMPLETED;
    /* A received unexpected message hands its source reference to the
     * user through the callback info (op->addr is NULL then); others drop
     * theirs here, under the class lock, so triggering takes no lock. */
    na_verbs_addr_unref(op->addr);
    op->addr = NULL;
    ctx = op->context->plugin_context;
    ctx->pending--;
    ctx->completed++;
    cls = na_op_plugin_class(op);
    na_op_finish(op, ret);
    na_verbs_wake(cls);
}

void
na_verbs_op_list_fail(struct na_op_list *list, na_return_t ret)
{
    na_op_id_t *op;

    while ((op = na_op_list_first(list)) != NULL)
        na_verbs_op_complete(op, ret);
}

/*
 * The core calls this once per post, for a started op. A queued op has
 * reached no device yet and is ours to finish. A work request in flight
 * cannot be taken back: its completion arrives soon (the peer answers, or
 * the ACK timeout turns a silent peer into an error), and an error then
 * reads as NA_CANCELED, the core having marked the op.
 */
na_return_t
na_verbs_cancel(na_class_t *na_class, na_context_t *context, na_op_id_t *op_id)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    (void) context;
    pthread_mutex_lock(&cls->lock);
    if (op_id->state == NA_VERBS_OP_QUEUED)
        na_verbs_op_complete(op_id, NA_CANCELED);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}
