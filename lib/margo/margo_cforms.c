/*
 * The callback forms of forward, respond and bulk transfer
 * (margo_cforward, margo_crespond, margo_bulk_ctransfer and their provider
 * and timed variants). They start the operation like the i* forms, but
 * nobody waits: when the HG callback runs (inside HG_Trigger, on whichever
 * thread makes progress on the instance), it calls on_complete(uargs,
 * result) exactly once and frees the request. If the start fails the
 * error is returned and the callback is not called.
 *
 * margo_crespond_timed() has no waiter to notice its deadline, so a Margo
 * timer does: the deadline object below is shared between the request and
 * the timer's callback, and whoever of the two is last frees it. Every
 * decision about it is taken under margo_lock.
 */
#include "margo_internal.h"

#include <stdlib.h>

struct margo_deadline {
    struct margo_request_s *req; /* (L) NULL once the request completed */
    margo_timer_t timer;         /* (L) NULL once the callback destroyed it */
    bool timer_gone;             /* (L) the timer's callback has finished */
};

static void
margo_deadline_fire(void *arg)
{
    struct margo_deadline *d = arg;
    struct margo_request_s *req;
    margo_timer_t timer;
    bool mine;

    pthread_mutex_lock(&margo_lock);
    req = d->req;
    if (req != NULL && !req->done) {
        req->timed_out = true;
        /* Not posted yet: margo_req_posted() cancels it at once. */
        if (req->posted && !req->cancel_sent) {
            req->cancel_sent = true;
            (void) HG_Cancel(req->handle);
        }
    }
    d->timer_gone = true;
    timer = d->timer;
    d->timer = NULL;
    mine = d->req == NULL;
    pthread_mutex_unlock(&margo_lock);
    /* From its own callback, a timer is freed when the callback returns. */
    margo_timer_destroy(timer);
    if (mine)
        free(d);
}

int
margo_creq_arm_deadline(struct margo_request_s *req, unsigned int ms)
{
    struct margo_deadline *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return -1;
    d->req = req;
    if (margo_timer_create(req->mid, margo_deadline_fire, d, &d->timer) != 0) {
        free(d);
        return -1;
    }
    req->deadline = d;
    if (margo_timer_start(d->timer, (double) ms) != 0) {
        margo_timer_destroy(d->timer);
        req->deadline = NULL;
        free(d);
        return -1;
    }
    return 0;
}

void
margo_creq_detach_locked(struct margo_request_s *req)
{
    struct margo_deadline *d = req->deadline;

    if (d == NULL)
        return;
    d->req = NULL;
    if (d->timer_gone || margo_timer_disarm_locked(d->timer))
        return; /* the request's side frees d (and the timer, if any) */
    /* The timer's callback is running: it sees d->req == NULL and frees
     * everything. */
    req->deadline = NULL;
}

/* Free what the request's side owns of its deadline (after detach). */
static void
margo_creq_free_deadline(struct margo_request_s *req)
{
    struct margo_deadline *d = req->deadline;

    if (d == NULL)
        return;
    if (d->timer != NULL)
        margo_timer_destroy(d->timer);
    free(d);
    req->deadline = NULL;
}

void
margo_creq_finish(struct margo_request_s *req)
{
    hg_return_t ret = req->ret;

    if (req->timed_out && ret == HG_CANCELED)
        ret = HG_TIMEOUT;
    margo_creq_free_deadline(req);
    req->on_complete(req->uargs, ret);
    free(req);
}

void
margo_creq_abandon(struct margo_request_s *req)
{
    pthread_mutex_lock(&margo_lock);
    margo_creq_detach_locked(req);
    pthread_mutex_unlock(&margo_lock);
    margo_creq_free_deadline(req);
}

hg_return_t
margo_provider_cforward_timed(uint16_t provider_id, hg_handle_t handle,
                              void *in_struct, double timeout_ms,
                              void (*on_complete)(void *, hg_return_t),
                              void *uargs)
{
    struct margo_req_cb cb = {on_complete, uargs};
    struct margo_request_s *req = NULL;

    if (on_complete == NULL)
        return HG_INVALID_ARG;
    return margo_forward_start(provider_id, handle, in_struct, timeout_ms, &cb,
                               NULL, &req);
}

hg_return_t
margo_provider_cforward(uint16_t provider_id, hg_handle_t handle,
                        void *in_struct,
                        void (*on_complete)(void *, hg_return_t), void *uargs)
{
    return margo_provider_cforward_timed(provider_id, handle, in_struct, 0,
                                         on_complete, uargs);
}

hg_return_t
margo_cforward_timed(hg_handle_t handle, void *in_struct, double timeout_ms,
                     void (*on_complete)(void *, hg_return_t), void *uargs)
{
    return margo_provider_cforward_timed(MARGO_DEFAULT_PROVIDER_ID, handle,
                                         in_struct, timeout_ms, on_complete,
                                         uargs);
}

hg_return_t
margo_cforward(hg_handle_t handle, void *in_struct,
               void (*on_complete)(void *, hg_return_t), void *uargs)
{
    return margo_cforward_timed(handle, in_struct, 0, on_complete, uargs);
}

hg_return_t
margo_crespond_timed(hg_handle_t handle, void *out_struct, double timeout_ms,
                     void (*on_complete)(void *, hg_return_t), void *uargs)
{
    struct margo_req_cb cb = {on_complete, uargs};
    struct margo_request_s *req = NULL;

    if (on_complete == NULL)
        return HG_INVALID_ARG;
    return margo_respond_start(handle, out_struct, timeout_ms, &cb, NULL, &req);
}

hg_return_t
margo_crespond(hg_handle_t handle, void *out_struct,
               void (*on_complete)(void *, hg_return_t), void *uargs)
{
    return margo_crespond_timed(handle, out_struct, 0, on_complete, uargs);
}

hg_return_t
margo_bulk_ctransfer_timed(margo_instance_id mid, hg_bulk_op_t op,
                           hg_addr_t origin_addr, hg_bulk_t origin_handle,
                           size_t origin_offset, hg_bulk_t local_handle,
                           size_t local_offset, size_t size, double timeout_ms,
                           void (*on_complete)(void *, hg_return_t),
                           void *uargs)
{
    struct margo_req_cb cb = {on_complete, uargs};
    struct margo_request_s *req = NULL;

    if (on_complete == NULL)
        return HG_INVALID_ARG;
    return margo_bulk_start(mid, op, origin_addr, origin_handle, origin_offset,
                            local_handle, local_offset, size, timeout_ms, &cb,
                            NULL, &req);
}

hg_return_t
margo_bulk_ctransfer(margo_instance_id mid, hg_bulk_op_t op,
                     hg_addr_t origin_addr, hg_bulk_t origin_handle,
                     size_t origin_offset, hg_bulk_t local_handle,
                     size_t local_offset, size_t size,
                     void (*on_complete)(void *, hg_return_t), void *uargs)
{
    return margo_bulk_ctransfer_timed(mid, op, origin_addr, origin_handle,
                                      origin_offset, local_handle, local_offset,
                                      size, 0, on_complete, uargs);
}
