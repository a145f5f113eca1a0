/*
 * Liveness probes for forwards (hg_liveness.h): a forward that waits
 * longer than the probe interval probes its target, once per interval;
 * a probe the fabric fails with NA_HOSTUNREACH fails the forward with
 * HG_HOSTUNREACH through HG_Cancel, like a deadline does.
 */
#include "hg/hg_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

unsigned int
hg_probe_interval_ms(struct hg_class *hg_class)
{
    unsigned int v = atomic_load(&hg_class->probe_ms);

    if (v == 0) {
        const char *env = getenv(HG_PROBE_ENV);
        unsigned long ms = hg_class->info.no_probe ? 0
                           : hg_class->info.probe_interval_ms != 0
                               ? hg_class->info.probe_interval_ms
                               : HG_PROBE_DEFAULT_MS;

        if (env != NULL && *env != '\0') {
            char *end;
            unsigned long e = strtoul(env, &end, 10);

            if (*end == '\0' && e <= 3600000ul)
                ms = e;
            else
                qs_log("hg", QS_LOG_WARNING,
                       "%s=%s: want milliseconds (0 turns probing off)",
                       HG_PROBE_ENV, env);
        }
        v = (unsigned int) ms + 1;
        atomic_store(&hg_class->probe_ms, v);
    }
    return v - 1;
}

static struct hg_handle *
hg_probe_handle(struct hg_timer *timer)
{
    return (struct hg_handle *) ((char *) timer -
                                 offsetof(struct hg_handle, probe.timer));
}

/* The target is presumed dead: fail the forward once (the first error
 * wins, so a response or a deadline that got there first stands). */
static void
hg_probe_fail(struct hg_handle *handle, unsigned int gen)
{
    qs_mutex_lock(&handle->lock);
    if (!handle->active || handle->pending == 0 || handle->probe.gen != gen) {
        pthread_mutex_unlock(&handle->lock);
        return;
    }
    if (handle->ret == HG_SUCCESS)
        handle->ret = HG_HOSTUNREACH;
    pthread_mutex_unlock(&handle->lock);
    qs_log("hg", QS_LOG_DEBUG, "RPC %llu: target presumed dead, failing it",
           (unsigned long long) handle->info.id);
    HG_Cancel(handle);
}

static void
hg_probe_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    unsigned int gen;

    qs_mutex_lock(&handle->lock);
    handle->probe.in_flight = false;
    gen = handle->probe.sent_gen;
    pthread_mutex_unlock(&handle->lock);
    /* Only the fabric's verdict that the peer is gone ends the forward;
     * a delivered probe, a cancelled one (the forward finished) or a
     * transient error (an injected send error, a full backlog) leaves
     * the next interval to decide. */
    if (info->ret == NA_HOSTUNREACH)
        hg_probe_fail(handle, gen);
    HG_Destroy(handle); /* the probe's reference */
}

static na_return_t
hg_probe_post(struct hg_handle *handle)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_class_t *na_class = hg_class->core.na_class;
    struct hg_probe *probe = &handle->probe;
    struct hg_header header;
    na_return_t ret;

    memset(&header, 0, sizeof(header));
    header.flags = HG_HEADER_PROBE;
    header.context_id = handle->ctx->core.id;
    hg_header_encode(probe->buf, &header);
    HG_Ref_incr(handle);
    ret = NA_Msg_send_unexpected(
        na_class, handle->ctx->core.na_context, hg_probe_cb, handle, probe->buf,
        HG_HEADER_SIZE, probe->buf_data, handle->info.addr->na_addr,
        handle->target_id, 0, probe->op);
    if (ret != NA_SUCCESS) {
        qs_mutex_lock(&handle->lock);
        probe->in_flight = false;
        pthread_mutex_unlock(&handle->lock);
        HG_Destroy(handle);
    }
    return ret;
}

static void
hg_probe_expire(struct hg_timer *timer)
{
    struct hg_handle *handle = hg_probe_handle(timer);
    struct hg_probe *probe = &handle->probe;
    unsigned int ms = hg_probe_interval_ms(handle->ctx->hg_class), gen;
    bool post;
    na_return_t ret;

    qs_mutex_lock(&handle->lock);
    if (!handle->active || handle->pending == 0) {
        pthread_mutex_unlock(&handle->lock);
        return;
    }
    gen = probe->gen;
    post = !probe->in_flight;
    if (post) {
        probe->in_flight = true;
        probe->sent_gen = gen;
    }
    pthread_mutex_unlock(&handle->lock);
    /* Armed before the post: the probe's callback may run at once. A
     * probe still without a verdict is waited for, not declared lost:
     * on the simulated fabric, threads that work in real time while the
     * virtual clock jumps would otherwise see a live peer as dead. */
    hg_core_timer_arm(&handle->ctx->core, &probe->timer, ms, hg_probe_expire);
    if (!post)
        return;
    ret = hg_probe_post(handle);
    if (ret == NA_HOSTUNREACH) {
        hg_core_timer_disarm(&probe->timer);
        hg_probe_fail(handle, gen);
    }
}

void
hg_probe_start(struct hg_handle *handle)
{
    unsigned int ms = hg_probe_interval_ms(handle->ctx->hg_class);

    if (ms == 0)
        return;
    /* Created here, before any timer can use them, and kept with the
     * handle: the probe's timer and callback only read them. */
    if (handle->probe.op == NULL) {
        na_class_t *na_class = handle->ctx->hg_class->core.na_class;

        handle->probe.op = NA_Op_create(na_class, 0);
        handle->probe.buf = NA_Msg_buf_alloc(na_class, HG_HEADER_SIZE, 0,
                                             &handle->probe.buf_data);
        if (handle->probe.op == NULL || handle->probe.buf == NULL) {
            hg_probe_free(handle);
            qs_log("hg", QS_LOG_WARNING,
                   "no memory for a liveness probe: RPC %llu is not probed",
                   (unsigned long long) handle->info.id);
            return;
        }
    }
    /* The generation was advanced when the forward started; arming an
     * armed timer only moves its deadline. */
    hg_core_timer_arm(&handle->ctx->core, &handle->probe.timer, ms,
                      hg_probe_expire);
}

void
hg_probe_stop(struct hg_handle *handle, bool in_flight)
{
    hg_core_timer_disarm(&handle->probe.timer);
    if (in_flight)
        NA_Cancel(handle->ctx->hg_class->core.na_class,
                  handle->ctx->core.na_context, handle->probe.op);
}

void
hg_probe_free(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;
    struct hg_probe *probe = &handle->probe;

    if (probe->op != NULL)
        NA_Op_destroy(na_class, probe->op);
    if (probe->buf != NULL)
        NA_Msg_buf_free(na_class, probe->buf, probe->buf_data);
    probe->op = NULL;
    probe->buf = NULL;
    probe->buf_data = NULL;
}
