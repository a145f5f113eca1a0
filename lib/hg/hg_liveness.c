/*
 * Liveness probes for forwards (hg_liveness.h): a forward that waits
 * longer than the probe interval probes its target, once per interval,
 * and the target's HG answers each probe below its handlers. A probe
 * left unanswered for an interval, or failed by the fabric with
 * NA_HOSTUNREACH, fails the forward with HG_HOSTUNREACH through
 * HG_Cancel, like a deadline does.
 */
#include "hg/hg_internal.h"
#include "na/na_clock.h"

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
hg_probe_fail(struct hg_handle *handle, unsigned int gen, const char *why)
{
    qs_hot_lock(&handle->lock);
    if (!handle->active || !hg_opgroup_busy(&handle->ops) ||
        handle->probe.gen != gen) {
        qs_hot_unlock(&handle->lock);
        return;
    }
    hg_opgroup_fail(&handle->ops, HG_HOSTUNREACH);
    qs_hot_unlock(&handle->lock);
    qs_log("hg", QS_LOG_DEBUG, "RPC %llu: target presumed dead (%s)",
           (unsigned long long) handle->info.id, why);
    HG_Cancel(handle);
}

static void
hg_probe_send_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    unsigned int gen;

    qs_hot_lock(&handle->lock);
    handle->probe.in_flight = false;
    gen = handle->probe.sent_gen;
    qs_hot_unlock(&handle->lock);
    /* The fabric's verdict that the peer is gone ends the forward at once;
     * a delivered probe waits for its answer, and a transient error (an
     * injected send error, a full backlog) leaves the answer's limit to
     * decide. */
    if (info->ret == NA_HOSTUNREACH)
        hg_probe_fail(handle, gen, "the fabric refused the probe");
    hg_rpc_op_unref(handle); /* the send's reference */
}

static void
hg_probe_answer_cb(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;
    struct hg_probe *probe = &handle->probe;
    const void *ans = (const char *) probe->buf + HG_HEADER_SIZE;
    struct hg_header header;
    size_t size = info->info.recv_expected.actual_buf_size;
    bool valid = false;
    unsigned int gen;

    /* An answer is a header and nothing else, echoing the cookie; anything
     * else counts as no answer (the peer's bytes are not trusted). */
    if (info->ret == NA_SUCCESS) {
        valid = hg_header_decode(ans, size, &header) == HG_SUCCESS &&
                hg_header_probe_check(&header, size, true) == HG_SUCCESS &&
                header.cookie == probe->cookie;
        if (!valid) {
            atomic_fetch_add(&handle->ctx->hg_class->stats.protocol_errors, 1);
            qs_log("hg", QS_LOG_DEBUG, "dropped a malformed probe answer");
        }
    }
    if (valid)
        hg_probe_heard(&handle->ctx->hg_class->heard,
                       handle->info.addr->na_addr);
    qs_hot_lock(&handle->lock);
    probe->ans_posted = false;
    gen = probe->sent_gen;
    if (valid)
        probe->waiting = false;
    qs_hot_unlock(&handle->lock);
    if (info->ret == NA_HOSTUNREACH)
        hg_probe_fail(handle, gen, "the fabric failed the probe's answer");
    hg_rpc_op_unref(handle); /* the receive's reference */
}

/* Post the answer's receive, then the probe: the answer cannot outrun
 * its receive. Each posted operation holds a reference to the handle.
 * Called with in_flight, ans_posted and waiting set; clears what it
 * could not post. */
static na_return_t
hg_probe_post(struct hg_handle *handle, uint32_t cookie)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    na_class_t *na_class = hg_class->core.na_class;
    na_context_t *na_context = handle->ctx->core.na_context;
    na_addr_t addr = handle->info.addr->na_addr;
    struct hg_probe *probe = &handle->probe;
    struct hg_header header;
    na_return_t ret;

    hg_rpc_op_ref(handle);
    ret = NA_Msg_recv_expected(na_class, na_context, hg_probe_answer_cb, handle,
                               (char *) probe->buf + HG_HEADER_SIZE,
                               HG_HEADER_SIZE, probe->buf_data, addr,
                               handle->target_id, cookie, probe->ans_op);
    if (ret != NA_SUCCESS) {
        qs_hot_lock(&handle->lock);
        probe->in_flight = probe->ans_posted = probe->waiting = false;
        qs_hot_unlock(&handle->lock);
        hg_rpc_op_unref(handle);
        return ret;
    }
    memset(&header, 0, sizeof(header));
    header.flags = HG_HEADER_PROBE;
    header.cookie = cookie;
    header.context_id = handle->ctx->core.id;
    hg_header_encode(probe->buf, &header);
    hg_rpc_op_ref(handle);
    ret = NA_Msg_send_unexpected(na_class, na_context, hg_probe_send_cb, handle,
                                 probe->buf, HG_HEADER_SIZE, probe->buf_data,
                                 addr, handle->target_id, cookie, probe->op);
    if (ret != NA_SUCCESS) {
        qs_hot_lock(&handle->lock);
        probe->in_flight = probe->waiting = false;
        qs_hot_unlock(&handle->lock);
        hg_rpc_op_unref(handle);
        NA_Cancel(na_class, na_context, probe->ans_op);
    }
    return ret;
}

/* Whether the target at na_addr stamped its slot at or after epoch mark
 * (the stamp's epoch is its low 32 bits; the comparison survives the
 * counter's wrap). */
static bool
hg_heard_since(struct hg_heard *heard, const void *na_addr, unsigned int mark)
{
    uint64_t v = atomic_load_explicit(&heard->slot[hg_heard_slot(na_addr)],
                                      memory_order_relaxed);

    return (v & ~0xffffffffull) == hg_heard_tag(na_addr) &&
           (int32_t) ((uint32_t) v - mark) >= 0;
}

static void
hg_probe_expire(struct hg_timer *timer)
{
    struct hg_handle *handle = hg_probe_handle(timer);
    struct hg_probe *probe = &handle->probe;
    struct hg_core *core = &handle->ctx->core;
    unsigned int ms = hg_probe_interval_ms(handle->ctx->hg_class), gen;
    uint64_t due, now = hg_core_now(core);
    uint32_t cookie = 0;
    unsigned int epoch;
    bool post, silent;
    na_return_t ret;

    qs_hot_lock(&core->timer_lock);
    due = timer->deadline_ns;
    qs_hot_unlock(&core->timer_lock);
    qs_hot_lock(&handle->lock);
    if (!handle->active || !hg_opgroup_busy(&handle->ops)) {
        qs_hot_unlock(&handle->lock);
        return;
    }
    gen = probe->gen;
    /* The last probe of this forward went a whole interval unanswered.
     * A clock that can run ahead of the peer's work (the simulated fabric
     * driven by several threads) proves nothing by that; there only the
     * fabric's verdicts count. */
    silent = probe->waiting && probe->sent_gen == gen &&
             !na_clock_is_approximate(handle->ctx->hg_class->core.na_class);
    /* A target heard from during the interval (an answer to another
     * forward to this address, another probe's answer) is alive, however
     * long this probe waits behind the requests queued before it. */
    if (silent && hg_heard_since(&handle->ctx->hg_class->heard,
                                 handle->info.addr->na_addr, probe->mark))
        silent = false;
    /* The next interval begins: what comes in from now on is its
     * evidence. */
    epoch = atomic_fetch_add_explicit(&handle->ctx->hg_class->heard.epoch, 1,
                                      memory_order_relaxed);
    probe->mark = epoch + 1;
    /* A timer that fires more than half an interval late says this side
     * did not progress (a handler computing on the thread that drives
     * this context): the answer may be waiting unread. The probe gets
     * another interval, with this side listening. */
    if (silent && now > due && now - due > (uint64_t) ms * 500000ull)
        silent = false;
    /* The operations of the last probe are reused: while one of them has
     * not completed yet, this interval sends nothing. */
    post = !silent && !hg_probe_busy(probe);
    if (post) {
        cookie = (uint32_t) hg_class_next_tag(handle->ctx->hg_class);
        probe->in_flight = probe->ans_posted = probe->waiting = true;
        probe->sent_gen = gen;
        probe->cookie = cookie;
    }
    qs_hot_unlock(&handle->lock);
    if (silent) {
        hg_probe_fail(handle, gen, "no answer to a probe");
        return;
    }
    /* Armed before the post: the probe's callbacks may run at once. */
    hg_core_timer_arm_coarse(&handle->ctx->core, &probe->timer, ms,
                             hg_probe_expire);
    if (!post)
        return;
    ret = hg_probe_post(handle, cookie);
    if (ret == NA_HOSTUNREACH) {
        hg_core_timer_disarm(&probe->timer);
        hg_probe_fail(handle, gen, "the fabric refused the probe");
    }
}

void
hg_probe_start(struct hg_handle *handle)
{
    unsigned int ms = hg_probe_interval_ms(handle->ctx->hg_class);

    if (ms == 0)
        return;
    /* Created here, before any timer can use them, and kept with the
     * handle: the probe's timer and callbacks only read them. */
    if (handle->probe.op == NULL) {
        na_class_t *na_class = handle->ctx->hg_class->core.na_class;

        handle->probe.op = NA_Op_create(na_class, 0);
        handle->probe.ans_op = NA_Op_create(na_class, 0);
        handle->probe.buf = NA_Msg_buf_alloc(na_class, 2 * HG_HEADER_SIZE, 0,
                                             &handle->probe.buf_data);
        if (handle->probe.op == NULL || handle->probe.ans_op == NULL ||
            handle->probe.buf == NULL) {
            hg_probe_free(handle);
            qs_log("hg", QS_LOG_WARNING,
                   "no memory for a liveness probe: RPC %llu is not probed",
                   (unsigned long long) handle->info.id);
            return;
        }
    }
    /* The generation was advanced when the forward started; arming an
     * armed timer only moves its deadline. */
    hg_core_timer_arm_coarse(&handle->ctx->core, &handle->probe.timer, ms,
                             hg_probe_expire);
}

void
hg_probe_stop(struct hg_handle *handle, bool in_flight)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;
    na_context_t *na_context = handle->ctx->core.na_context;

    hg_core_timer_disarm(&handle->probe.timer);
    if (in_flight) {
        NA_Cancel(na_class, na_context, handle->probe.op);
        NA_Cancel(na_class, na_context, handle->probe.ans_op);
    }
}

static void
hg_probe_answer_sent(const struct na_cb_info *info)
{
    struct hg_handle *handle = info->arg;

    atomic_fetch_sub(&handle->ctx->n_ops, 1);
    hg_handle_put(handle);
}

/* Target side. The answer goes from the receive callback, so it needs
 * neither a handler nor a free handler thread: a target whose handlers
 * are all busy still answers. It reuses the receiving handle's response
 * buffer and send operation. */
void
hg_probe_answer(struct hg_handle *handle, size_t msg_len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    const struct hg_header *probe = &handle->req_header;
    struct hg_header header;
    na_return_t ret;

    if (hg_header_probe_check(probe, msg_len, false) != HG_SUCCESS) {
        atomic_fetch_add(&hg_class->stats.protocol_errors, 1);
        qs_log("hg", QS_LOG_DEBUG, "dropped a malformed probe");
        hg_handle_put(handle);
        return;
    }
    memset(&header, 0, sizeof(header));
    header.flags = HG_HEADER_PROBE | HG_HEADER_RESPONSE;
    header.cookie = probe->cookie;
    hg_header_encode(handle->out_buf, &header);
    /* In flight until sent: HG_Context_destroy() waits for it. */
    atomic_fetch_add(&handle->ctx->n_ops, 1);
    ret = NA_Msg_send_expected(
        hg_class->core.na_class, handle->ctx->core.na_context,
        hg_probe_answer_sent, handle, handle->out_buf, HG_HEADER_SIZE,
        handle->out_buf_data, handle->src_addr.na_addr, probe->context_id,
        probe->cookie, handle->send_op);
    if (ret != NA_SUCCESS) {
        qs_log("hg", QS_LOG_DEBUG, "answering a probe failed: %s",
               NA_Error_to_string(ret));
        atomic_fetch_sub(&handle->ctx->n_ops, 1);
        hg_handle_put(handle);
        return;
    }
    atomic_fetch_add(&hg_class->stats.probes_answered, 1);
}

void
hg_probe_free(struct hg_handle *handle)
{
    na_class_t *na_class = handle->ctx->hg_class->core.na_class;
    struct hg_probe *probe = &handle->probe;

    if (probe->op != NULL)
        NA_Op_destroy(na_class, probe->op);
    if (probe->ans_op != NULL)
        NA_Op_destroy(na_class, probe->ans_op);
    if (probe->buf != NULL)
        NA_Msg_buf_free(na_class, probe->buf, probe->buf_data);
    probe->op = NULL;
    probe->ans_op = NULL;
    probe->buf = NULL;
    probe->buf_data = NULL;
}
