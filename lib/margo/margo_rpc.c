/*
 * Registration, addresses, handles, forward and respond, and the requests
 * that blocking calls wait on.
 */
#include "margo_internal.h"

#include "hg/hg_check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- Requests -------------------------------------------------------- */

static void
margo_req_unlink(struct margo_request_s *req)
{
    struct margo_instance *mid = req->mid;

    if (req->prev)
        req->prev->next = req->next;
    else if (mid->inflight == req)
        mid->inflight = req->next;
    if (req->next)
        req->next->prev = req->prev;
    req->prev = req->next = NULL;
}

hg_return_t
margo_req_track(struct margo_request_s *req)
{
    struct margo_instance *mid = req->mid;

    pthread_mutex_lock(&margo_lock);
    req->from_handler = margo_thread_in_handler_of(mid);
    /* Once shutdown has begun only the handlers it is waiting for may
     * start operations; anything else would race with the teardown. */
    if (mid->teardown_started && !req->from_handler) {
        pthread_mutex_unlock(&margo_lock);
        return HG_CANCELED;
    }
    req->prev = NULL;
    req->next = mid->inflight;
    if (mid->inflight)
        mid->inflight->prev = req;
    mid->inflight = req;
    if (mid->progress_when_needed)
        margo_wake(mid); /* the progress thread has a reason to run now */
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

void
margo_req_posted(struct margo_request_s *req, hg_return_t ret)
{
    pthread_mutex_lock(&margo_lock);
    if (ret != HG_SUCCESS) {
        /* No callback will run: the request was never in flight. */
        margo_req_unlink(req);
    } else if (!req->done) {
        req->posted = true;
        /* A callback-form deadline that passed before the post. */
        if (req->timed_out && !req->cancel_sent) {
            req->cancel_sent = true;
            (void) HG_Cancel(req->handle);
        }
        /* A finalize may be sweeping for operations to cancel. */
        if (req->mid->teardown_started)
            margo_wake(req->mid);
    }
    pthread_mutex_unlock(&margo_lock);
}

hg_return_t
margo_req_complete_cb(const struct hg_cb_info *info)
{
    struct margo_request_s *req = info->arg;
    bool has_cb;

    pthread_mutex_lock(&margo_lock);
    req->ret = info->ret;
    req->done = true;
    margo_req_unlink(req);
    margo_wake(req->mid);
    has_cb = req->on_complete != NULL;
    if (has_cb)
        margo_creq_detach_locked(req);
    /* The waiter may free req as soon as the lock is released. */
    pthread_mutex_unlock(&margo_lock);
    if (has_cb)
        margo_creq_finish(req);
    return HG_SUCCESS;
}

bool
margo_req_is_done(void *arg)
{
    return ((struct margo_request_s *) arg)->done;
}

/* A timed respond's wait ends at completion or at its deadline. */
static bool
margo_req_done_or_late(void *arg)
{
    struct margo_request_s *req = arg;

    return req->done || HG_Clock_now(req->mid->hg_class) >= req->deadline_ns;
}

hg_return_t
margo_req_wait(struct margo_request_s *req)
{
    hg_return_t ret;

    pthread_mutex_lock(&margo_lock);
    /* A completed request never touches its instance, which may already be
     * finalized. */
    if (!req->done && req->deadline_ns) {
        margo_block_until(req->mid, margo_req_done_or_late, req, true);
        if (!req->done && req->posted && !req->cancel_sent) {
            /* Safe under the lock, as in margo_cancel_inflight(). */
            req->cancel_sent = true;
            req->timed_out = true;
            (void) HG_Cancel(req->handle);
        }
    }
    if (!req->done)
        margo_block_until(req->mid, margo_req_is_done, req, true);
    ret = req->ret;
    if (req->timed_out && ret == HG_CANCELED)
        ret = HG_TIMEOUT;
    pthread_mutex_unlock(&margo_lock);
    return ret;
}

void
margo_cancel_inflight(struct margo_instance *mid, bool handler_ops_too)
{
    struct margo_request_s *req;
    hg_return_t ret;

    for (req = mid->inflight; req; req = req->next) {
        if (!req->posted || req->cancel_sent ||
            (req->from_handler && !handler_ops_too))
            continue;
        req->cancel_sent = true;
        /* Safe under the lock: the request's callback, which ends the op
         * id's and the handle's use, needs this lock first. */
        ret = req->kind == MARGO_REQ_BULK ? HG_Bulk_cancel(req->op_id)
                                          : HG_Cancel(req->handle);
        if (ret != HG_SUCCESS)
            margo_log(mid, MARGO_LOG_WARNING, "margo: cancel at finalize: %s",
                      HG_Error_to_string(ret));
    }
}

unsigned int
margo_timeout_ms(double timeout_ms)
{
    unsigned int ms;

    if (!(timeout_ms > 0))
        return 0;
    if (timeout_ms >= (double) UINT_MAX)
        return UINT_MAX;
    /* Round up so that a sub-millisecond deadline is still a deadline. */
    ms = (unsigned int) timeout_ms;
    if ((double) ms < timeout_ms)
        ms++;
    return ms;
}

struct margo_request_s *
margo_req_new(struct margo_instance *mid, enum margo_req_kind kind,
              hg_handle_t handle, struct margo_request_s *storage)
{
    struct margo_request_s *req = storage;

    if (req == NULL) {
        req = malloc(sizeof(*req));
        if (req == NULL)
            return NULL;
    }
    memset(req, 0, sizeof(*req));
    req->mid = mid;
    req->kind = kind;
    req->handle = handle;
    req->heap = storage == NULL;
    return req;
}

hg_return_t
margo_req_handoff(struct margo_request_s *req, struct margo_request_s *storage,
                  hg_return_t ret, struct margo_request_s **reqp)
{
    if (ret != HG_SUCCESS) {
        /* Nothing was posted, so no one else will free the request. The
         * test is on the pointer, not on req->heap, so that the compiler
         * sees a caller's stack storage is never freed. */
        if (req->deadline != NULL)
            margo_creq_abandon(req);
        if (req != storage)
            free(req);
        return ret;
    }
    /* A request handed to the program is its to wait for (the checker,
     * include/qs_check.h, reports one never waited for at exit). */
    if (req->heap && req->on_complete == NULL)
        HG_CHECK(hg_check_margo_add(
            req->mid->hg_class, req, HG_CHECK_MARGO_REQUEST,
            req->kind == MARGO_REQ_FORWARD
                ? "request of a forward (margo_iforward; margo_wait)"
            : req->kind == MARGO_REQ_RESPOND
                ? "request of a respond (margo_irespond; margo_wait)"
                : "request of a bulk transfer (margo_bulk_itransfer; "
                  "margo_wait)"));
    *reqp = req;
    return HG_SUCCESS;
}

hg_return_t
margo_wait(margo_request req)
{
    hg_return_t ret;

    if (req == MARGO_REQUEST_NULL)
        return HG_INVALID_ARG;
    ret = margo_req_wait(req);
    if (req->heap) {
        HG_CHECK(hg_check_obj_del(req));
        free(req);
    }
    return ret;
}

/* margo_wait_any()'s condition: one of the requests is done. */
struct margo_any {
    size_t count;
    margo_request *reqs;
};

static bool
margo_any_done(void *arg)
{
    struct margo_any *any = arg;

    for (size_t i = 0; i < any->count; i++)
        if (any->reqs[i] && any->reqs[i]->done)
            return true;
    return false;
}

hg_return_t
margo_wait_any(size_t count, margo_request *reqs, size_t *index)
{
    struct margo_any any = {count, reqs};
    struct margo_instance *mid = NULL;
    hg_return_t ret;
    size_t i;

    if (reqs == NULL || index == NULL)
        return HG_INVALID_ARG;
    for (i = 0; i < count && mid == NULL; i++)
        if (reqs[i])
            mid = reqs[i]->mid;
    if (mid == NULL)
        return HG_INVALID_ARG;

    pthread_mutex_lock(&margo_lock);
    if (!margo_any_done(&any))
        margo_block_until(mid, margo_any_done, &any, true);
    for (i = 0; i < count; i++)
        if (reqs[i] && reqs[i]->done)
            break;
    pthread_mutex_unlock(&margo_lock);
    *index = i;
    ret = margo_wait(reqs[i]);
    reqs[i] = MARGO_REQUEST_NULL;
    return ret;
}

hg_return_t
margo_test(margo_request req, int *flag)
{
    if (req == MARGO_REQUEST_NULL || flag == NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    if (!req->done)
        margo_poke_progress(req->mid);
    *flag = req->done ? 1 : 0;
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

/* ---- Forward and respond --------------------------------------------- */

hg_return_t
margo_forward_start(uint16_t provider_id, hg_handle_t handle, void *in_struct,
                    double timeout_ms, const struct margo_req_cb *cb,
                    struct margo_request_s *storage,
                    struct margo_request_s **reqp)
{
    struct margo_instance *mid = margo_hg_handle_get_instance(handle);
    struct margo_request_s *req;
    unsigned int ms = margo_timeout_ms(timeout_ms);
    hg_return_t ret;

    if (mid == NULL)
        return HG_INVALID_ARG;
    ret = margo_handle_retarget(handle, provider_id);
    if (ret != HG_SUCCESS)
        return ret;
    req = margo_req_new(mid, MARGO_REQ_FORWARD, handle, storage);
    if (req == NULL)
        return HG_NOMEM;
    if (cb) {
        req->on_complete = cb->fn;
        req->uargs = cb->uargs;
    }
    ret = margo_req_track(req);
    if (ret == HG_SUCCESS) {
        ret = ms ? HG_Forward_timed(handle, margo_req_complete_cb, req,
                                    in_struct, ms)
                 : HG_Forward(handle, margo_req_complete_cb, req, in_struct);
        margo_req_posted(req, ret);
    }
    return margo_req_handoff(req, storage, ret, reqp);
}

hg_return_t
margo_provider_forward_timed(uint16_t provider_id, hg_handle_t handle,
                             void *in_struct, double timeout_ms)
{
    struct margo_request_s storage, *req;
    hg_return_t ret;

    ret = margo_forward_start(provider_id, handle, in_struct, timeout_ms, NULL,
                              &storage, &req);
    if (ret != HG_SUCCESS)
        return ret;
    return margo_req_wait(req);
}

hg_return_t
margo_provider_forward(uint16_t provider_id, hg_handle_t handle,
                       void *in_struct)
{
    return margo_provider_forward_timed(provider_id, handle, in_struct, 0);
}

hg_return_t
margo_forward_timed(hg_handle_t handle, void *in_struct, double timeout_ms)
{
    return margo_provider_forward_timed(MARGO_DEFAULT_PROVIDER_ID, handle,
                                        in_struct, timeout_ms);
}

hg_return_t
margo_forward(hg_handle_t handle, void *in_struct)
{
    return margo_forward_timed(handle, in_struct, 0);
}

hg_return_t
margo_provider_iforward_timed(uint16_t provider_id, hg_handle_t handle,
                              void *in_struct, double timeout_ms,
                              margo_request *req)
{
    if (req == NULL)
        return HG_INVALID_ARG;
    return margo_forward_start(provider_id, handle, in_struct, timeout_ms, NULL,
                               NULL, req);
}

hg_return_t
margo_provider_iforward(uint16_t provider_id, hg_handle_t handle,
                        void *in_struct, margo_request *req)
{
    return margo_provider_iforward_timed(provider_id, handle, in_struct, 0,
                                         req);
}

hg_return_t
margo_iforward_timed(hg_handle_t handle, void *in_struct, double timeout_ms,
                     margo_request *req)
{
    return margo_provider_iforward_timed(MARGO_DEFAULT_PROVIDER_ID, handle,
                                         in_struct, timeout_ms, req);
}

hg_return_t
margo_iforward(hg_handle_t handle, void *in_struct, margo_request *req)
{
    return margo_iforward_timed(handle, in_struct, 0, req);
}

hg_return_t
margo_respond_start(hg_handle_t handle, void *out_struct, double timeout_ms,
                    const struct margo_req_cb *cb,
                    struct margo_request_s *storage,
                    struct margo_request_s **reqp)
{
    unsigned int ms = margo_timeout_ms(timeout_ms);
    struct margo_instance *mid = margo_hg_handle_get_instance(handle);
    struct margo_request_s *req;
    hg_return_t ret;

    if (mid == NULL)
        return HG_INVALID_ARG;
    req = margo_req_new(mid, MARGO_REQ_RESPOND, handle, storage);
    if (req == NULL)
        return HG_NOMEM;
    if (cb) {
        /* Nobody waits: a timer enforces the deadline. */
        req->on_complete = cb->fn;
        req->uargs = cb->uargs;
        if (ms && margo_creq_arm_deadline(req, ms) != 0) {
            free(req);
            return HG_NOMEM;
        }
    } else if (ms) {
        req->deadline_ns =
            HG_Clock_now(mid->hg_class) + (uint64_t) ms * 1000000u;
    }
    ret = margo_req_track(req);
    if (ret == HG_SUCCESS) {
        ret = HG_Respond(handle, margo_req_complete_cb, req, out_struct);
        margo_req_posted(req, ret);
    }
    return margo_req_handoff(req, storage, ret, reqp);
}

hg_return_t
margo_respond_timed(hg_handle_t handle, void *out_struct, double timeout_ms)
{
    struct margo_request_s storage, *req;
    hg_return_t ret;

    ret = margo_respond_start(handle, out_struct, timeout_ms, NULL, &storage,
                              &req);
    if (ret != HG_SUCCESS)
        return ret;
    return margo_req_wait(req);
}

hg_return_t
margo_respond(hg_handle_t handle, void *out_struct)
{
    return margo_respond_timed(handle, out_struct, 0);
}

hg_return_t
margo_irespond_timed(hg_handle_t handle, void *out_struct, double timeout_ms,
                     margo_request *req)
{
    if (req == NULL)
        return HG_INVALID_ARG;
    return margo_respond_start(handle, out_struct, timeout_ms, NULL, NULL, req);
}

hg_return_t
margo_irespond(hg_handle_t handle, void *out_struct, margo_request *req)
{
    return margo_irespond_timed(handle, out_struct, 0, req);
}

/* ---- Handles --------------------------------------------------------- */

hg_return_t
margo_create(margo_instance_id mid, hg_addr_t addr, hg_id_t id,
             hg_handle_t *handle)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Create(mid->hg_context, addr, id, handle);
}

hg_return_t
margo_destroy(hg_handle_t handle)
{
    return HG_Destroy(handle);
}

hg_return_t
margo_ref_incr(hg_handle_t handle)
{
    return HG_Ref_incr(handle);
}

const struct hg_info *
margo_get_info(hg_handle_t handle)
{
    return HG_Get_info(handle);
}

margo_instance_id
margo_hg_handle_get_instance(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);

    return info ? margo_instance_of_class(info->hg_class) : MARGO_INSTANCE_NULL;
}

hg_return_t
margo_get_input(hg_handle_t handle, void *in_struct)
{
    return HG_Get_input(handle, in_struct);
}

hg_return_t
margo_free_input(hg_handle_t handle, void *in_struct)
{
    return HG_Free_input(handle, in_struct);
}

hg_return_t
margo_get_output(hg_handle_t handle, void *out_struct)
{
    return HG_Get_output(handle, out_struct);
}

hg_return_t
margo_free_output(hg_handle_t handle, void *out_struct)
{
    return HG_Free_output(handle, out_struct);
}

/* ---- Registration ---------------------------------------------------- */

hg_return_t
margo_registered_disable_response(margo_instance_id mid, hg_id_t id,
                                  int disable_flag)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Registered_disable_response(mid->hg_class, id,
                                          disable_flag ? HG_TRUE : HG_FALSE);
}

hg_return_t
margo_registered_disabled_response(margo_instance_id mid, hg_id_t id,
                                   int *disabled_flag)
{
    hg_bool_t disabled = HG_FALSE;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || disabled_flag == NULL)
        return HG_INVALID_ARG;
    ret = HG_Registered_disabled_response(mid->hg_class, id, &disabled);
    if (ret == HG_SUCCESS)
        *disabled_flag = disabled ? 1 : 0;
    return ret;
}

hg_return_t
margo_register_data(margo_instance_id mid, hg_id_t id, void *data,
                    void (*free_callback)(void *))
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Register_data(mid->hg_class, id, data, free_callback);
}

void *
margo_registered_data(margo_instance_id mid, hg_id_t id)
{
    if (mid == MARGO_INSTANCE_NULL)
        return NULL;
    return HG_Registered_data(mid->hg_class, id);
}

/* ---- Addresses ------------------------------------------------------- */

/*
 * Margo remembers the addresses it hands out so that finalize can release
 * those a program kept to the end (the tutorial's server never frees its
 * own address); an HG class will not finalize while addresses are alive.
 * An address that cannot be remembered is simply not released later.
 */
static void
margo_addr_track(struct margo_instance *mid, hg_addr_t addr)
{
    pthread_mutex_lock(&margo_lock);
    if (mid->addr_count == mid->addr_cap) {
        size_t cap = mid->addr_cap ? 2 * mid->addr_cap : 8;
        hg_addr_t *bigger = realloc(mid->addrs, cap * sizeof(*bigger));

        if (bigger == NULL) {
            pthread_mutex_unlock(&margo_lock);
            return;
        }
        mid->addrs = bigger;
        mid->addr_cap = cap;
    }
    mid->addrs[mid->addr_count++] = addr;
    pthread_mutex_unlock(&margo_lock);
}

static void
margo_addr_untrack(struct margo_instance *mid, hg_addr_t addr)
{
    pthread_mutex_lock(&margo_lock);
    for (size_t i = mid->addr_count; i-- > 0;) {
        if (mid->addrs[i] == addr) {
            mid->addrs[i] = mid->addrs[--mid->addr_count];
            break;
        }
    }
    pthread_mutex_unlock(&margo_lock);
}

void
margo_addrs_release(struct margo_instance *mid)
{
    hg_addr_t *addrs;
    size_t count;

    pthread_mutex_lock(&margo_lock);
    addrs = mid->addrs;
    count = mid->addr_count;
    mid->addrs = NULL;
    mid->addr_count = mid->addr_cap = 0;
    pthread_mutex_unlock(&margo_lock);

    if (count > 0)
        margo_log(mid, MARGO_LOG_DEBUG,
                  "margo: finalize releases %zu address(es) not freed", count);
    for (size_t i = 0; i < count; i++) {
        HG_CHECK(hg_check_margo_addr_kept(addrs[i]));
        HG_Addr_free(mid->hg_class, addrs[i]);
    }
    free(addrs);
}

/* Hand out an address an HG call returned with ret, tracking it so that
 * finalize frees it if the program does not. */
static hg_return_t
margo_addr_handoff(struct margo_instance *mid, hg_return_t ret, hg_addr_t a,
                   hg_addr_t *out)
{
    if (ret == HG_SUCCESS) {
        margo_addr_track(mid, a);
        *out = a;
    }
    return ret;
}

hg_return_t
margo_addr_lookup(margo_instance_id mid, const char *name, hg_addr_t *addr)
{
    hg_addr_t a = HG_ADDR_NULL;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || addr == NULL)
        return HG_INVALID_ARG;
    ret = HG_Addr_lookup(mid->hg_class, name, &a);
    return margo_addr_handoff(mid, ret, a, addr);
}

hg_return_t
margo_addr_free(margo_instance_id mid, hg_addr_t addr)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    if (addr == HG_ADDR_NULL)
        return HG_SUCCESS;
    margo_addr_untrack(mid, addr);
    return HG_Addr_free(mid->hg_class, addr);
}

hg_return_t
margo_addr_self(margo_instance_id mid, hg_addr_t *addr)
{
    hg_addr_t a = HG_ADDR_NULL;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || addr == NULL)
        return HG_INVALID_ARG;
    ret = HG_Addr_self(mid->hg_class, &a);
    return margo_addr_handoff(mid, ret, a, addr);
}

hg_return_t
margo_addr_dup(margo_instance_id mid, hg_addr_t addr, hg_addr_t *new_addr)
{
    hg_addr_t a = HG_ADDR_NULL;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || new_addr == NULL)
        return HG_INVALID_ARG;
    ret = HG_Addr_dup(mid->hg_class, addr, &a);
    return margo_addr_handoff(mid, ret, a, new_addr);
}

hg_bool_t
margo_addr_cmp(margo_instance_id mid, hg_addr_t addr1, hg_addr_t addr2)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_FALSE;
    return HG_Addr_cmp(mid->hg_class, addr1, addr2);
}

hg_return_t
margo_addr_to_string(margo_instance_id mid, char *buf, hg_size_t *buf_size,
                     hg_addr_t addr)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    return HG_Addr_to_string(mid->hg_class, buf, buf_size, addr);
}
