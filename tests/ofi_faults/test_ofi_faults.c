/*
 * The fault scenarios of tests/sim/test_faults.c on a real fabric: ofi+tcp
 * on 127.0.0.1, with the server in another process so that it can really
 * die. What the simulator injects, this test does with signals:
 *
 *   kill_in_handler  the server is SIGKILLed while its handler holds an
 *                    RPC; a forward to the dead address; a new server at
 *                    the same address answers again
 *   kill_in_bulk     the server is SIGKILLed while it pulls 64 MiB that
 *                    this process exposes
 *   no_answer        the handler never answers: the timed forward ends
 *                    with HG_TIMEOUT and the late answer is dropped
 *   cancel_stages    HG_Cancel before the request leaves, while the
 *                    handler runs, after completion; the server cancels
 *                    its own pull mid-transfer
 *   origin_dies      the process a server pulls from is SIGKILLed; the
 *                    server's transfer fails and it goes on serving
 *   kill_in_handler_margo, kill_in_bulk_margo
 *                    the kills with a plain margo_forward (ofmargo.c)
 *   partition_heal   the link to the server's host goes down for half a
 *                    probe interval while its handler holds a plain
 *                    margo_forward, then returns: the call completes
 *                    (tests/netns; skipped elsewhere)
 *   partition_long   the same for four probe intervals: the call ends
 *                    with HG_HOSTUNREACH within the liveness bound while
 *                    the link is down (its probe goes unanswered)
 *
 * The expectations are the simulator's: every operation completes exactly
 * once, with success or a clean error, nothing hangs, and every surviving
 * process finalizes with nothing left (the server reports that through its
 * exit status). Waits are bounded on the NA clock and in iterations; the
 * only blocking calls are HG_Progress with a short timeout.
 *
 * Run one scenario: test_ofi_faults <name>. QS_OFI_FAULTS_INFO overrides
 * the info string (default ofi+tcp://127.0.0.1:0); tests/netns runs the
 * servers on another host (ofproc.h).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ofi_faults/ofmargo.h"
#include "ofi_faults/ofproc.h"
#include "ofi_faults/ofroles.h"
#include "ofi_faults/ofrpc.h"

/* Budget of a wait that should end quickly; reaching it means a hang. */
#define OF_WAIT_MS 20000u
/* Deadline of forwards to a server about to be killed: the response can
 * never come, so after the kill only this deadline or a broken connection
 * ends them. */
#define OF_KILL_TIMEOUT_MS 2000u
/* The "_plain" variants forward without a deadline: only the liveness
 * probe (HG, every 1000 ms by default) and the plugin's knowledge of the
 * broken connection can end the call, with HG_HOSTUNREACH, within the
 * documented bound of two probe intervals plus the fabric's verdict. */
#define OF_LIVENESS_BOUND_MS 3000u
/* A forward to an address where nothing listens fails at once. */
#define OF_REFUSED_BOUND_MS 1000u

static unsigned of_kill_timeout_ms = OF_KILL_TIMEOUT_MS;

struct of_op {
    int calls;
    hg_return_t ret;     /* of the first invocation                   */
    uint64_t at_ns;      /* NA clock when it ran                      */
    int is_pull;         /* decode of_pull_out_t rather than of_val_t */
    hg_return_t out_ret; /* HG_Get_output's result                    */
    of_val_t val;
    of_pull_out_t pull;
    hg_class_t *cls;
};

struct of_env {
    const char *info;
    uint64_t t0; /* NA clock at setup, for the phase times printed */
    hg_class_t *cls;
    hg_context_t *ctx;
    struct of_ids ids;
    struct of_child srv, origin;
};

static struct of_env of_env_storage;

static const char *
of_info(void)
{
    const char *info = getenv("QS_OFI_FAULTS_INFO");

    return info != NULL && *info != '\0' ? info : "ofi+tcp://127.0.0.1:0";
}

static int
is_clean_error(hg_return_t ret)
{
    switch (ret) {
    case HG_HOSTUNREACH:
    case HG_TIMEOUT:
    case HG_CANCELED:
    case HG_IO_ERROR:
    case HG_PROTOCOL_ERROR:
    case HG_AGAIN:
    case HG_ACCESS:
    case HG_FAULT:
    case HG_MSGSIZE:
        return 1;
    default:
        return 0;
    }
}

#define assert_hg_ret(got, want)                                               \
    do {                                                                       \
        hg_return_t of_got_ = (got), of_want_ = (want);                        \
        if (of_got_ != of_want_)                                               \
            fail_msg("%s: got %s, want %s", #got, HG_Error_to_string(of_got_), \
                     HG_Error_to_string(of_want_));                            \
    } while (0)
#define assert_hg_ok(expr) assert_hg_ret((expr), HG_SUCCESS)

static void
assert_clean_error(const struct of_op *op, const char *what)
{
    if (!is_clean_error(op->ret))
        fail_msg("%s: completed with %s, want a clean error", what,
                 HG_Error_to_string(op->ret));
}

static uint64_t
of_now(const struct of_env *e)
{
    return HG_Clock_now(e->cls);
}

/* ---- setup and teardown ---------------------------------------------- */

static int
of_setup(void **state)
{
    struct of_env *e = &of_env_storage;

    memset(e, 0, sizeof(*e));
    e->srv.fd = e->origin.fd = -1;
    e->info = of_info();
    e->cls = of_hg_init(e->info, HG_FALSE);
    if (e->cls == NULL) {
        fprintf(stderr, "HG_Init(\"%s\") failed: no usable provider?\n",
                e->info);
        return -1;
    }
    e->ctx = HG_Context_create(e->cls);
    if (e->ctx == NULL)
        return -1;
    of_register(e->cls, &e->ids, NULL, NULL, NULL, NULL, NULL);
    e->t0 = HG_Clock_now(e->cls);
    *state = e;
    return 0;
}

/* Every path ends here, failed assertions included: no child survives a
 * scenario. The HG class of a failed scenario is abandoned rather than
 * finalized, since its callbacks may point into the dead test's frame. */
static int
of_teardown(void **state)
{
    (void) state;
    of_reap_all();
    return 0;
}

/* Print when a phase was reached, so a slow or hung run shows where its
 * time went. */
static void
of_phase(const struct of_env *e, const char *what)
{
    print_message("  [%6llu ms] %s\n",
                  (unsigned long long) ((of_now(e) - e->t0) / 1000000), what);
}

/* ---- driving progress ------------------------------------------------- */

static void
of_poll_children(struct of_env *e)
{
    of_child_poll(&e->srv);
    of_child_poll(&e->origin);
}

/*
 * Progress this process and read the children's pipes until *counter >=
 * target. The condition is checked before each progress call, so the
 * caller regains control right after the event (kill_in_bulk relies on
 * this to stop serving its memory). Fails after max_ms on the NA clock.
 * Returns the milliseconds the wait took.
 */
static uint64_t
of_run_until(struct of_env *e, const int *counter, int target, unsigned max_ms,
             const char *what)
{
    uint64_t start = of_now(e), limit = (uint64_t) max_ms * 1000000;
    /* HG_Progress may return at once when completions are queued; the
     * iteration bound catches a loop that spins without time passing. */
    uint64_t max_iter = (uint64_t) max_ms * 1000 + 1000;

    for (uint64_t iter = 0; iter < max_iter; iter++) {
        unsigned n;

        of_poll_children(e);
        if (*counter >= target)
            return (of_now(e) - start) / 1000000;
        if (of_now(e) - start > limit)
            break;
        HG_Progress(e->ctx, 1);
        do {
            n = 0;
        } while (HG_Trigger(e->ctx, 0, 16, &n) == HG_SUCCESS && n > 0);
    }
    fail_msg("%s: not within %u ms (%d of %d)", what, max_ms, *counter, target);
    return 0;
}

/* Progress for `ms` more, so a duplicate or late callback would show. */
static void
of_settle(struct of_env *e, unsigned ms)
{
    uint64_t start = of_now(e), limit = (uint64_t) ms * 1000000;

    for (uint64_t iter = 0; iter < (uint64_t) ms * 1000 + 1000; iter++) {
        unsigned n;

        if (of_now(e) - start > limit)
            return;
        of_poll_children(e);
        HG_Progress(e->ctx, 1);
        do {
            n = 0;
        } while (HG_Trigger(e->ctx, 0, 16, &n) == HG_SUCCESS && n > 0);
    }
}

static hg_return_t
of_op_cb(const struct hg_cb_info *info)
{
    struct of_op *op = info->arg;

    if (++op->calls > 1)
        return HG_SUCCESS;
    op->ret = info->ret;
    op->at_ns = HG_Clock_now(op->cls);
    if (info->ret != HG_SUCCESS)
        return HG_SUCCESS;
    if (op->is_pull) {
        of_pull_out_t out;

        op->out_ret = HG_Get_output(info->info.forward.handle, &out);
        if (op->out_ret == HG_SUCCESS) {
            op->pull = out;
            HG_Free_output(info->info.forward.handle, &out);
        }
    } else {
        of_val_t out;

        op->out_ret = HG_Get_output(info->info.forward.handle, &out);
        if (op->out_ret == HG_SUCCESS) {
            op->val = out;
            HG_Free_output(info->info.forward.handle, &out);
        }
    }
    return HG_SUCCESS;
}

/* Create a handle and forward `in` with a deadline (0: none). */
static hg_handle_t
of_forward(struct of_env *e, hg_addr_t addr, hg_id_t id, void *in,
           struct of_op *op, unsigned timeout_ms)
{
    hg_handle_t h = HG_HANDLE_NULL;

    memset(op, 0, sizeof(*op));
    op->cls = e->cls;
    op->is_pull = id == e->ids.pull;
    assert_hg_ok(HG_Create(e->ctx, addr, id, &h));
    assert_hg_ok(HG_Forward_timed(h, of_op_cb, op, in, timeout_ms));
    return h;
}

/* Assert the operation completed exactly once, after settling a while. */
static void
of_assert_once(struct of_env *e, const struct of_op *op, const char *what)
{
    of_settle(e, 100);
    if (op->calls != 1)
        fail_msg("%s: callback ran %d times, want once", what, op->calls);
}

/* Echo through the server and check the answer. */
static void
of_echo_ok(struct of_env *e, hg_addr_t addr, uint64_t value)
{
    struct of_op op;
    of_val_t in = {.value = value};
    hg_handle_t h = of_forward(e, addr, e->ids.echo, &in, &op, 0);

    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "echo");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_hg_ok(op.out_ret);
    assert_int_equal(op.val.value, value + 1);
    assert_hg_ok(HG_Destroy(h));
}

/* ---- child servers ---------------------------------------------------- */

/* Start a server process with `info` and look its address up. */
static hg_addr_t
of_start_server(struct of_env *e, const char *info)
{
    const char *args[] = {"--info",
                          info == e->info ? of_server_info(info) : info, NULL};
    hg_addr_t addr = HG_ADDR_NULL;

    if (of_spawn(&e->srv, "--server", args) != 0)
        fail_msg("cannot start a server process");
    of_run_until(e, &e->srv.listening, 1, OF_WAIT_MS, "server address");
    of_phase(e, e->srv.addr);
    assert_hg_ok(HG_Addr_lookup(e->cls, e->srv.addr, &addr));
    return addr;
}

/* Wait for a child to close its pipe and reap it; fail unless it exited
 * with status 0 (for a server: every callback once, finalize clean). */
static void
of_wait_exit(struct of_env *e, struct of_child *c, const char *what)
{
    int status;

    of_run_until(e, &c->eof, 1, OF_WAIT_MS, what);
    status = of_child_reap(c);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s: status %#x (exit code %d): its own leak check or "
                 "exactly-once check failed",
                 what, status, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Ask the server to stop, then free its address. */
static void
of_stop_server(struct of_env *e, hg_addr_t addr)
{
    struct of_op op;
    of_val_t in = {0};
    hg_handle_t h = of_forward(e, addr, e->ids.shutdown, &in, &op, 0);

    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "shutdown");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Addr_free(e->cls, addr));
    of_wait_exit(e, &e->srv, "server exit");
    of_phase(e, "server exited cleanly");
}

static uint64_t
of_kill_server(struct of_env *e)
{
    int status = of_child_kill(&e->srv);

    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("server was not killed by SIGKILL (status %#x)", status);
    of_phase(e, "server killed");
    return of_now(e);
}

/* After a kill, without a deadline: HG_HOSTUNREACH within the liveness
 * bound (with one, any clean error; the caller checks that). */
static void
of_assert_dead_peer(const struct of_op *op, uint64_t killed_ns,
                    const char *what)
{
    uint64_t ms;

    if (op->at_ns < killed_ns)
        fail_msg("%s: ended with %s %llu ms before the kill: the live "
                 "server was declared unreachable",
                 what, HG_Error_to_string(op->ret),
                 (unsigned long long) (killed_ns - op->at_ns) / 1000000);
    ms = (op->at_ns - killed_ns) / 1000000;
    print_message("  %s: %s %llu ms after the kill\n", what,
                  HG_Error_to_string(op->ret), (unsigned long long) ms);
    if (of_kill_timeout_ms != 0)
        return;
    if (op->ret != HG_HOSTUNREACH)
        fail_msg("%s: completed with %s, want HG_HOSTUNREACH", what,
                 HG_Error_to_string(op->ret));
    if (ms > OF_LIVENESS_BOUND_MS)
        fail_msg("%s: ended %llu ms after the kill, bound %u ms", what,
                 (unsigned long long) ms, OF_LIVENESS_BOUND_MS);
}

/* The leak check that ends every scenario in this process. */
static void
of_finish(struct of_env *e)
{
    of_settle(e, 50);
    assert_hg_ok(HG_Context_destroy(e->ctx));
    e->ctx = NULL;
    of_phase(e, "finalize");
    assert_hg_ok(HG_Finalize(e->cls));
    e->cls = NULL;
}

/* A buffer this process exposes for pulls, filled with the pattern. */
static uint8_t *
of_exposed(struct of_env *e, uint64_t size, hg_bulk_t *bulk)
{
    uint8_t *buf = malloc(size);
    void *ptr = buf;
    hg_size_t len = size;

    assert_non_null(buf);
    for (uint64_t i = 0; i < size; i++)
        buf[i] = of_pattern(i);
    assert_hg_ok(
        HG_Bulk_create(e->cls, 1, &ptr, &len, HG_BULK_READ_ONLY, bulk));
    return buf;
}

/* ---- the scenarios ---------------------------------------------------- */

static void
test_kill_in_handler(void **state)
{
    struct of_env *e = *state;
    struct of_op held, down;
    of_val_t in = {.value = 7};
    hg_addr_t addr = of_start_server(e, e->info);
    hg_handle_t h, d;
    char info[300];
    uint64_t t0, killed;
    hg_return_t ret;
    int posted;

    of_echo_ok(e, addr, 1);
    /* The request reaches the handler, which holds it; then the server
     * dies. Only the deadline, the liveness probe or the broken
     * connection can end it. */
    h = of_forward(e, addr, e->ids.hold, &in, &held, of_kill_timeout_ms);
    of_run_until(e, &e->srv.held, 1, OF_WAIT_MS, "handler entered");
    /* The server's own address is an info string that binds the same
     * port, for the restart below. */
    snprintf(info, sizeof(info), "%s", e->srv.addr);
    killed = of_kill_server(e);
    of_run_until(e, &held.calls, 1, OF_WAIT_MS, "forward to killed server");
    assert_clean_error(&held, "forward to killed server");
    of_assert_dead_peer(&held, killed, "forward held by the killed server");
    of_assert_once(e, &held, "forward to killed server");
    assert_hg_ok(HG_Destroy(h));

    /* A new request to the dead address: nobody listens, the plugin
     * asks the kernel and fails it with NA_HOSTUNREACH at once (within
     * OF_REFUSED_BOUND_MS; a 5 s retry timeout is the fallback). The
     * deadline here is longer, so HG_TIMEOUT would mean neither fired. */
    t0 = of_now(e);
    memset(&down, 0, sizeof(down));
    down.cls = e->cls;
    assert_hg_ok(HG_Create(e->ctx, addr, e->ids.echo, &d));
    ret = HG_Forward_timed(d, of_op_cb, &down, &in, 15000);
    posted = ret == HG_SUCCESS;
    if (posted) {
        of_run_until(e, &down.calls, 1, OF_WAIT_MS, "forward to dead address");
        ret = down.ret;
    } else {
        /* Providers that connect while posting (ofi+sockets) refuse the
         * post itself; then no callback may ever run. */
        down.at_ns = of_now(e);
    }
    print_message("  forward to the dead address: %s after %llu ms\n",
                  HG_Error_to_string(ret),
                  (unsigned long long) ((down.at_ns - t0) / 1000000));
    assert_hg_ret(ret, HG_HOSTUNREACH);
    if ((down.at_ns - t0) / 1000000 > OF_REFUSED_BOUND_MS)
        fail_msg("a refused connection took %llu ms to fail, bound %u ms",
                 (unsigned long long) ((down.at_ns - t0) / 1000000),
                 OF_REFUSED_BOUND_MS);
    of_settle(e, 100);
    assert_int_equal(down.calls, posted ? 1 : 0);
    assert_hg_ok(HG_Destroy(d));
    assert_hg_ok(HG_Addr_free(e->cls, addr));

    /* A new incarnation at the same address, looked up again, answers. */
    addr = of_start_server(e, info);
    of_echo_ok(e, addr, 41);
    of_stop_server(e, addr);
    of_finish(e);
}

static void
test_kill_in_bulk(void **state)
{
    struct of_env *e = *state;
    struct of_op op;
    hg_addr_t addr = of_start_server(e, e->info);
    of_pull_in_t in = {.size = OF_BIG_PULL, .cancel = 0};
    uint8_t *buf = of_exposed(e, OF_BIG_PULL, &in.bulk);
    hg_handle_t h;
    uint64_t killed;

    h = of_forward(e, addr, e->ids.pull, &in, &op, of_kill_timeout_ms);
    /* of_run_until returns as soon as the marker is read, before this
     * process progresses again: the tcp provider serves the exposed
     * memory only from this process's progress, so the pull is stuck
     * part-way when the kill lands. */
    of_run_until(e, &e->srv.pulls, 1, OF_WAIT_MS, "pull started");
    killed = of_kill_server(e);
    if (e->srv.bulk_done != 0)
        fail_msg("the server's pull completed (%s) before the kill: the "
                 "scenario did not test a kill mid-transfer",
                 HG_Error_to_string((hg_return_t) e->srv.bulk_ret));
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "forward of killed pull");
    assert_clean_error(&op, "forward of killed pull");
    of_assert_dead_peer(&op, killed, "forward whose pull was killed");
    of_assert_once(e, &op, "forward of killed pull");
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Bulk_free(in.bulk));
    free(buf);
    assert_hg_ok(HG_Addr_free(e->cls, addr));
    of_finish(e);
}

static void
test_no_answer(void **state)
{
    struct of_env *e = *state;
    struct of_op op, rel;
    of_val_t in = {.value = 3};
    hg_addr_t addr = of_start_server(e, e->info);
    hg_handle_t h, r;
    uint64_t t0, took;

    of_echo_ok(e, addr, 1);
    t0 = of_now(e);
    h = of_forward(e, addr, e->ids.hold, &in, &op, 200);
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "timed forward");
    assert_hg_ret(op.ret, HG_TIMEOUT);
    took = (op.at_ns - t0) / 1000000;
    print_message("  timed out after %llu ms (deadline 200 ms)\n",
                  (unsigned long long) took);
    /* Never early. How late depends on scheduling: quiet runs see 202 to
     * 204 ms, but with this 2-core machine loaded (several copies of this
     * test at once) the report came 1.3 s after the deadline, so the upper
     * bound only separates "the deadline fired" from "something else (the
     * 5 s connection bound, a hang) ended it". */
    assert_true(took >= 200);
    assert_true(took < 4000);
    /* The handler did run and still holds the request. */
    of_run_until(e, &e->srv.held, 1, OF_WAIT_MS, "handler entered");

    /* The handle is reused for another RPC before the late answer is
     * sent: a late answer must not complete the new forward. */
    assert_hg_ok(HG_Reset(h, addr, e->ids.echo));
    r = of_forward(e, addr, e->ids.release, &in, &rel, 0);
    of_run_until(e, &rel.calls, 1, OF_WAIT_MS, "release");
    assert_hg_ret(rel.ret, HG_SUCCESS);
    assert_int_equal(rel.val.value, 1);
    of_assert_once(e, &op, "timed-out forward after the late answer");
    assert_hg_ok(HG_Destroy(r));

    memset(&op, 0, sizeof(op));
    op.cls = e->cls;
    in.value = 41;
    assert_hg_ok(HG_Forward(h, of_op_cb, &op, &in));
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "forward on the reused handle");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_int_equal(op.val.value, 42);
    of_assert_once(e, &op, "forward on the reused handle");
    assert_hg_ok(HG_Destroy(h));

    of_stop_server(e, addr);
    of_finish(e);
}

static void
test_cancel_stages(void **state)
{
    struct of_env *e = *state;
    struct of_op op, rel;
    of_val_t in = {.value = 5};
    hg_addr_t addr = of_start_server(e, e->info);
    hg_handle_t h, r;
    of_pull_in_t pin = {.size = OF_BIG_PULL, .cancel = 1};
    uint8_t *buf;

    of_echo_ok(e, addr, 1);

    /* Before the request leaves: no progress between the two calls. */
    memset(&op, 0, sizeof(op));
    op.cls = e->cls;
    assert_hg_ok(HG_Create(e->ctx, addr, e->ids.echo, &h));
    assert_hg_ok(HG_Forward(h, of_op_cb, &op, &in));
    assert_hg_ok(HG_Cancel(h));
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "cancel before sending");
    /* With tcp;ofi_rxm nothing moves outside this process's progress, so
     * the cancel must win. The sockets provider moves data from its own
     * thread and the whole round trip can finish between the two calls:
     * then a correct answer is the result that won the race. */
    if (strstr(e->info, "sockets") != NULL && op.ret == HG_SUCCESS)
        assert_int_equal(op.val.value, in.value + 1);
    else
        assert_hg_ret(op.ret, HG_CANCELED);
    of_assert_once(e, &op, "cancel before sending");
    assert_hg_ok(HG_Destroy(h));

    /* While the handler runs; its late answer comes with the release. */
    h = of_forward(e, addr, e->ids.hold, &in, &op, 0);
    of_run_until(e, &e->srv.held, 1, OF_WAIT_MS, "handler entered");
    assert_int_equal(op.calls, 0);
    assert_hg_ok(HG_Cancel(h));
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "cancel in handler");
    assert_hg_ret(op.ret, HG_CANCELED);
    r = of_forward(e, addr, e->ids.release, &in, &rel, 0);
    of_run_until(e, &rel.calls, 1, OF_WAIT_MS, "release");
    assert_hg_ret(rel.ret, HG_SUCCESS);
    assert_int_equal(rel.val.value, 1);
    of_assert_once(e, &op, "cancel in handler");
    assert_hg_ok(HG_Destroy(r));
    assert_hg_ok(HG_Destroy(h));

    /* After completion: a no-op, no second callback. */
    h = of_forward(e, addr, e->ids.echo, &in, &op, 0);
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "echo");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_hg_ok(HG_Cancel(h));
    of_assert_once(e, &op, "cancel after completion");
    assert_hg_ok(HG_Destroy(h));

    /* Bulk: the server cancels its own 64 MiB pull one progress round
     * after posting it. Either the cancel or the transfer wins; the
     * callback runs once either way, and a success must be byte-exact. */
    buf = of_exposed(e, OF_BIG_PULL, &pin.bulk);
    h = of_forward(e, addr, e->ids.pull, &pin, &op, 0);
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "cancelled pull");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_hg_ok(op.out_ret);
    print_message("  server's own pull after HG_Bulk_cancel: %s\n",
                  HG_Error_to_string((hg_return_t) op.pull.ret));
    assert_int_equal(op.pull.calls, 1);
    if (op.pull.ret == HG_SUCCESS)
        assert_true(op.pull.hash == of_hash(buf, OF_BIG_PULL));
    else
        assert_hg_ret((hg_return_t) op.pull.ret, HG_CANCELED);
    of_assert_once(e, &op, "cancelled pull");
    assert_int_equal(e->srv.bulk_done, 1);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Bulk_free(pin.bulk));
    free(buf);

    of_stop_server(e, addr);
    of_finish(e);
}

static void
test_origin_dies(void **state)
{
    struct of_env *e = *state;
    hg_addr_t addr = of_start_server(e, e->info);
    const char *args[] = {"--info", e->info, "--target", e->srv.addr, NULL};
    struct of_op op;
    of_pull_in_t in = {.size = 1 << 20, .cancel = 0};
    uint8_t *buf;
    hg_handle_t h;
    int status;

    if (of_spawn(&e->origin, "--origin", args) != 0)
        fail_msg("cannot start the origin process");
    of_run_until(e, &e->srv.pulls, 1, OF_WAIT_MS, "pull started");
    status = of_child_kill(&e->origin);
    of_phase(e, "origin killed");
    if (!WIFSIGNALED(status))
        fail_msg("the origin exited (status %#x) before the kill: its pull "
                 "completed or it failed to start",
                 status);
    of_run_until(e, &e->srv.bulk_done, 1, OF_WAIT_MS,
                 "server's pull from the killed origin");
    print_message("  server's pull from the killed origin: %s\n",
                  HG_Error_to_string((hg_return_t) e->srv.bulk_ret));
    if (e->srv.bulk_ret == HG_SUCCESS)
        fail_msg("the pull succeeded: it finished before the kill landed");
    /* Nobody cancelled it: a dead peer is a network error. */
    if (e->srv.bulk_ret != HG_HOSTUNREACH && e->srv.bulk_ret != HG_IO_ERROR)
        fail_msg("the pull failed with %s, want HG_HOSTUNREACH or "
                 "HG_IO_ERROR",
                 HG_Error_to_string((hg_return_t) e->srv.bulk_ret));
    if (!is_clean_error((hg_return_t) e->srv.bulk_ret))
        fail_msg("the pull failed with %s, not a clean error",
                 HG_Error_to_string((hg_return_t) e->srv.bulk_ret));

    /* Another client (this process) is served: RPC and bulk. */
    of_echo_ok(e, addr, 9);
    buf = of_exposed(e, in.size, &in.bulk);
    h = of_forward(e, addr, e->ids.pull, &in, &op, 0);
    of_run_until(e, &op.calls, 1, OF_WAIT_MS, "pull by a second client");
    assert_hg_ret(op.ret, HG_SUCCESS);
    assert_hg_ret((hg_return_t) op.pull.ret, HG_SUCCESS);
    assert_true(op.pull.hash == of_hash(buf, in.size));
    of_assert_once(e, &op, "pull by a second client");
    assert_int_equal(e->srv.bulk_done, 2);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Bulk_free(in.bulk));
    free(buf);

    /* The server's exit status covers its side: the failed transfer and
     * the answer to the dead origin were cleaned up. */
    of_stop_server(e, addr);
    of_finish(e);
}

/* The kill scenarios with a plain margo_forward (ofmargo.c). */
static void
test_kill_in_handler_margo(void **state)
{
    (void) state;
    om_kill_in_handler(of_info(), OF_LIVENESS_BOUND_MS);
}

static void
test_kill_in_bulk_margo(void **state)
{
    (void) state;
    om_kill_in_bulk(of_info(), OF_LIVENESS_BOUND_MS);
}

/* Partitions between the hosts of tests/netns: QS_OFI_FAULTS_LINK names
 * the link this host takes down and then restores. A short one (half a
 * probe interval: no probe can go a whole interval unanswered) must not
 * fail the held call; a long one (four intervals) must, within the
 * liveness bound of two intervals (OF_LIVENESS_BOUND_MS with margin). */
#define OF_PARTITION_SHORT_MS 500u
#define OF_PARTITION_LONG_MS 4000u
/* tcp retransmits with exponential backoff: after a short outage its next
 * attempt comes within about a second of the link's return. */
#define OF_HEAL_BOUND_MS 10000u

static const char *
of_partition_link(void)
{
    const char *link = getenv("QS_OFI_FAULTS_LINK");

    if (link == NULL || *link == '\0') {
        print_message("  QS_OFI_FAULTS_LINK is not set: this scenario needs "
                      "a link it may take down (tests/netns); skipping\n");
        skip();
    }
    return link;
}

static void
test_partition_heal(void **state)
{
    (void) state;
    /* A 2 s interval: tcp's retransmission backoff can hold a probe sent
     * into even a short outage for over a second after the link returns,
     * so with 1 s a probe may go unanswered for its interval (measured
     * once at load 20). The 2.5 s busy stretch still spans a probe. */
    setenv("QS_HG_PROBE_MS", "2000", 1);
    om_partition(of_info(), of_partition_link(), OF_PARTITION_SHORT_MS,
                 OF_HEAL_BOUND_MS, 0);
}

static void
test_partition_long(void **state)
{
    (void) state;
    om_partition(of_info(), of_partition_link(), OF_PARTITION_LONG_MS,
                 OF_HEAL_BOUND_MS, OF_LIVENESS_BOUND_MS);
}

/* ---- main ------------------------------------------------------------- */

#define OF_TEST(f) cmocka_unit_test_setup_teardown(f, of_setup, of_teardown)

int
main(int argc, char **argv)
{
    static const struct {
        const char *name;
        struct CMUnitTest test;
    } all[] = {
        {"kill_in_handler", OF_TEST(test_kill_in_handler)},
        {"kill_in_bulk", OF_TEST(test_kill_in_bulk)},
        {"kill_in_handler_plain", OF_TEST(test_kill_in_handler)},
        {"kill_in_bulk_plain", OF_TEST(test_kill_in_bulk)},
        {"no_answer", OF_TEST(test_no_answer)},
        {"cancel_stages", OF_TEST(test_cancel_stages)},
        {"origin_dies", OF_TEST(test_origin_dies)},
        {"kill_in_handler_margo",
         cmocka_unit_test_teardown(test_kill_in_handler_margo, of_teardown)},
        {"kill_in_bulk_margo",
         cmocka_unit_test_teardown(test_kill_in_bulk_margo, of_teardown)},
        {"partition_heal",
         cmocka_unit_test_teardown(test_partition_heal, of_teardown)},
        {"partition_long",
         cmocka_unit_test_teardown(test_partition_long, of_teardown)},
    };
    struct CMUnitTest run[sizeof(all) / sizeof(all[0])];
    size_t n = 0;

    if (argc > 1 && strcmp(argv[1], "--server") == 0)
        return of_server_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--origin") == 0)
        return of_origin_main(argc, argv);
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (argc < 2 || strcmp(argv[1], all[i].name) == 0)
            run[n++] = all[i].test;
    /* cancel_stages: cancellation is the subject, so probing is off, in
     * this process and in the servers it starts. The 64 MiB that the
     * server's cancelled pull asked for still leaves this process, and on
     * ofi+tcp (one socket per pair of peers) a probe waits behind it:
     * under ThreadSanitizer on a loaded 2-core machine it waited longer
     * than the 1 s interval, and the call ended with HG_HOSTUNREACH
     * (docs/architecture.md, "Limits of the probe"). A hang still ends at
     * OF_WAIT_MS. */
    if (argc > 1 && strcmp(argv[1], "cancel_stages") == 0)
        setenv("QS_HG_PROBE_MS", "0", 1);
    /* The plain variants run the same scenario without a deadline. */
    if (argc > 1 && strstr(argv[1], "_plain") != NULL)
        of_kill_timeout_ms = 0;
    if (n == 0) {
        fprintf(stderr, "test_ofi_faults: no scenario \"%s\"\n", argv[1]);
        return 2;
    }
    fprintf(stderr, "test_ofi_faults: info %s\n", of_info());
    return _cmocka_run_group_tests("ofi_faults", run, n, NULL, NULL);
}
