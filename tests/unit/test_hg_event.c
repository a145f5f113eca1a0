/*
 * The event-driven progress API (HG_Event_*), on a plugin with a
 * descriptor (the info string is argv[1]: "na+tcp://127.0.0.1:0", "na+sm",
 * "ofi+tcp://127.0.0.1:0"): the context's descriptor stays quiet while
 * nothing happens and becomes readable when a request arrives, when a
 * response arrives, when a completion is queued without the network (a
 * forward to the class itself) and when a forward's deadline passes;
 * HG_Event_progress() and HG_Event_trigger() then drive the RPC. Waits
 * are poll() calls on those descriptors, bounded, never sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <poll.h>

#include "mercury.h"
#include "mercury_macros.h"

MERCURY_GEN_PROC(ev_in_t, ((uint64_t) (x)))
MERCURY_GEN_PROC(ev_out_t, ((uint64_t) (y)))

static const char *info_string = "na+tcp://127.0.0.1:0";

/* Bounds of every wait: a broken descriptor fails the test, it does not
 * hang it (ctest's timeout is the last resort). */
#define WAIT_MS 10000
#define MAX_PASSES 10000
/* Long enough for the request to be on its way before it passes: the
 * case is about the wake-up, not about cancelling a send in flight. */
#define DEADLINE_MS 100

static struct {
    int requests;     /* handler runs                    */
    bool respond;     /* the handler answers at once     */
    hg_handle_t held; /* a request kept without answer   */
    int forwards;     /* forward callbacks               */
    int responds;     /* respond callbacks               */
    hg_return_t ret;  /* the last forward's result       */
    uint64_t y;       /* the last forward's output       */
} seen;

static hg_return_t
ev_rpc(hg_handle_t handle)
{
    ev_in_t in;
    ev_out_t out;

    seen.requests++;
    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    out.y = in.x * 3;
    HG_Free_input(handle, &in);
    if (!seen.respond) {
        seen.held = handle;
        return HG_SUCCESS;
    }
    assert_int_equal(HG_Respond(handle, NULL, NULL, &out), HG_SUCCESS);
    return HG_Destroy(handle);
}

static hg_return_t
ev_respond_cb(const struct hg_cb_info *info)
{
    (*(int *) info->arg)++;
    return HG_SUCCESS;
}

static hg_return_t
ev_forward_cb(const struct hg_cb_info *info)
{
    ev_out_t out;

    seen.forwards++;
    seen.ret = info->ret;
    if (info->ret == HG_SUCCESS) {
        assert_int_equal(HG_Get_output(info->info.forward.handle, &out),
                         HG_SUCCESS);
        seen.y = out.y;
        HG_Free_output(info->info.forward.handle, &out);
    }
    return HG_SUCCESS;
}

struct env {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    int sfd, cfd;
    hg_addr_t addr; /* the server, seen from the client */
    hg_id_t id;
};

static bool
readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* One pass of the loop the Mercury documents describe, without blocking:
 * returns the callbacks run. */
static unsigned int
pass(hg_context_t *ctx)
{
    unsigned int count = 0, actual = 0;

    assert_int_equal(HG_Event_progress(ctx, &count), HG_SUCCESS);
    assert_int_equal(HG_Event_trigger(ctx, count, &actual), HG_SUCCESS);
    assert_true(actual <= count);
    return actual;
}

/* Drive both contexts, waiting on both descriptors, until *flag reaches
 * `want`. */
static void
pump_until(struct env *e, const int *flag, int want)
{
    for (int i = 0; i < MAX_PASSES && *flag < want; i++) {
        struct pollfd p[2] = {{.fd = e->sfd, .events = POLLIN},
                              {.fd = e->cfd, .events = POLLIN}};

        if (!HG_Event_ready(e->sctx) && !HG_Event_ready(e->cctx))
            assert_true(poll(p, 2, WAIT_MS) > 0);
        pass(e->sctx);
        pass(e->cctx);
    }
    assert_int_equal(*flag, want);
}

/* Run passes until neither context has anything left and both
 * descriptors are quiet. */
static void
settle(hg_context_t *ctx, int fd)
{
    for (int i = 0; i < MAX_PASSES; i++) {
        if (!HG_Event_ready(ctx) && !readable(fd, 0))
            return;
        pass(ctx);
    }
    fail_msg("context %p never settled", (void *) ctx);
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    char buf[256];
    hg_size_t size = sizeof(buf);
    hg_addr_t self;

    memset(&seen, 0, sizeof(seen));
    seen.respond = true;
    e->server = HG_Init(info_string, HG_TRUE);
    e->client = HG_Init(info_string, HG_FALSE);
    assert_non_null(e->server);
    assert_non_null(e->client);
    e->sctx = HG_Context_create(e->server);
    e->cctx = HG_Context_create(e->client);
    assert_non_null(e->sctx);
    assert_non_null(e->cctx);
    e->id = MERCURY_REGISTER(e->server, "ev", ev_in_t, ev_out_t, ev_rpc);
    assert_int_equal(MERCURY_REGISTER(e->client, "ev", ev_in_t, ev_out_t, NULL),
                     e->id);
    assert_int_equal(HG_Addr_self(e->server, &self), HG_SUCCESS);
    assert_int_equal(HG_Addr_to_string(e->server, buf, &size, self),
                     HG_SUCCESS);
    HG_Addr_free(e->server, self);
    assert_int_equal(HG_Addr_lookup2(e->client, buf, &e->addr), HG_SUCCESS);
    e->sfd = HG_Event_get_wait_fd(e->sctx);
    e->cfd = HG_Event_get_wait_fd(e->cctx);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    HG_Addr_free(e->client, e->addr);
    for (int i = 0; i < 100; i++) {
        pass(e->sctx);
        pass(e->cctx);
    }
    assert_int_equal(HG_Context_destroy(e->cctx), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->client), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->server), HG_SUCCESS);
    free(e);
    return 0;
}

/* A descriptor per context, the same one each time, and the NULL cases. */
static void
test_wait_fd(void **state)
{
    struct env *e = *state;

    assert_true(e->sfd >= 0);
    assert_true(e->cfd >= 0);
    assert_int_not_equal(e->sfd, e->cfd);
    assert_int_equal(HG_Event_get_wait_fd(e->sctx), e->sfd);
    assert_int_equal(HG_Event_get_wait_fd(NULL), -1);
    assert_false(HG_Event_ready(NULL));
    assert_int_equal(HG_Event_progress(NULL, NULL), HG_INVALID_ARG);
    assert_int_equal(HG_Event_trigger(NULL, 1, NULL), HG_INVALID_ARG);
    /* Nothing to do: both calls succeed and report nothing. */
    settle(e->sctx, e->sfd);
    assert_int_equal(pass(e->sctx), 0);
}

/* Forward x on a new handle and wait for the server's descriptor to turn
 * readable while only the client is driven: the server makes no call
 * until its descriptor says there is work. Then finish the RPC. */
static void
rpc_strict(struct env *e, uint64_t x)
{
    ev_in_t in = {.x = x};
    int requests = seen.requests, forwards = seen.forwards;
    hg_handle_t handle;
    int i;

    settle(e->sctx, e->sfd);
    settle(e->cctx, e->cfd);
    assert_false(HG_Event_ready(e->sctx));
    assert_false(readable(e->sfd, 0));

    assert_int_equal(HG_Create(e->cctx, e->addr, e->id, &handle), HG_SUCCESS);
    assert_int_equal(HG_Forward(handle, ev_forward_cb, NULL, &in), HG_SUCCESS);
    for (i = 0; i < MAX_PASSES; i++) {
        struct pollfd p[2] = {{.fd = e->sfd, .events = POLLIN},
                              {.fd = e->cfd, .events = POLLIN}};

        assert_true(poll(p, 2, HG_Event_ready(e->cctx) ? 0 : WAIT_MS) >= 0);
        if (p[0].revents & POLLIN)
            break;
        pass(e->cctx);
    }
    assert_true(i < MAX_PASSES);
    assert_int_equal(seen.requests, requests);
    pump_until(e, &seen.requests, requests + 1);
    pump_until(e, &seen.forwards, forwards + 1);
    assert_int_equal(seen.ret, HG_SUCCESS);
    assert_int_equal(seen.y, 3 * x);
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
}

/* RPCs driven only by the event calls: the server's descriptor is quiet
 * until a request arrives (the first one also sets up the connection),
 * the client's until the response does. */
static void
test_rpc(void **state)
{
    struct env *e = *state;

    for (uint64_t x = 14; x <= 17; x++)
        rpc_strict(e, x);
}

/* A forward to the class's own address completes without the network:
 * the completion alone makes the descriptor readable. */
static void
test_loopback_notify(void **state)
{
    struct env *e = *state;
    ev_in_t in = {.x = 5};
    hg_handle_t handle;
    hg_addr_t self;
    unsigned int count = 0, actual = 0;

    settle(e->sctx, e->sfd);
    assert_int_equal(HG_Addr_self(e->server, &self), HG_SUCCESS);
    assert_int_equal(HG_Create(e->sctx, self, e->id, &handle), HG_SUCCESS);
    assert_false(readable(e->sfd, 0));
    assert_int_equal(HG_Forward(handle, ev_forward_cb, NULL, &in), HG_SUCCESS);
    assert_true(readable(e->sfd, WAIT_MS));
    assert_true(HG_Event_ready(e->sctx));
    assert_int_equal(HG_Event_progress(e->sctx, &count), HG_SUCCESS);
    assert_true(count >= 1);
    /* max_count bounds the callbacks run. */
    assert_int_equal(HG_Event_trigger(e->sctx, 0, &actual), HG_SUCCESS);
    assert_int_equal(actual, 0);
    assert_int_equal(seen.requests, 0);
    pump_until(e, &seen.forwards, 1);
    assert_int_equal(seen.requests, 1);
    assert_int_equal(seen.y, 15);
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
    HG_Addr_free(e->server, self);
}

/* A forward's deadline wakes the poll: the server holds the request
 * without answering, the client's descriptor turns readable when the
 * deadline passes, and the forward completes with HG_TIMEOUT. */
static void
test_deadline_wakes(void **state)
{
    struct env *e = *state;
    ev_in_t in = {.x = 1};
    hg_handle_t handle;
    int i;

    seen.respond = false;
    settle(e->cctx, e->cfd);
    assert_int_equal(HG_Create(e->cctx, e->addr, e->id, &handle), HG_SUCCESS);
    assert_int_equal(
        HG_Forward_timed(handle, ev_forward_cb, NULL, &in, DEADLINE_MS),
        HG_SUCCESS);
    pump_until(e, &seen.requests, 1);
    for (i = 0; i < MAX_PASSES && seen.forwards == 0; i++) {
        if (!HG_Event_ready(e->cctx))
            assert_true(readable(e->cfd, WAIT_MS));
        pass(e->cctx);
    }
    assert_int_equal(seen.forwards, 1);
    assert_int_equal(seen.ret, HG_TIMEOUT);
    /* The late answer is dropped by the client. */
    {
        ev_out_t out = {.y = 0};

        assert_int_equal(
            HG_Respond(seen.held, ev_respond_cb, &seen.responds, &out),
            HG_SUCCESS);
        assert_int_equal(HG_Destroy(seen.held), HG_SUCCESS);
    }
    pump_until(e, &seen.responds, 1);
    assert_int_equal(seen.forwards, 1);
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
}

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* A response that waits unread when its forward's deadline passes is read
 * before the deadline is judged, and the forward succeeds: the client does
 * not progress between the answer's arrival and the deadline. (The test
 * waits for the deadline by reading the clock: what it checks does not
 * depend on how late it looks, only on looking after the deadline.) */
static void
test_answer_read_before_deadline(void **state)
{
    struct env *e = *state;
    ev_in_t in = {.x = 4};
    hg_handle_t handle;
    uint64_t start;
    int i;

    rpc_strict(e, 2); /* connected: the request goes out in HG_Forward */
    settle(e->cctx, e->cfd);
    assert_int_equal(HG_Create(e->cctx, e->addr, e->id, &handle), HG_SUCCESS);
    start = mono_ns();
    assert_int_equal(
        HG_Forward_timed(handle, ev_forward_cb, NULL, &in, DEADLINE_MS),
        HG_SUCCESS);
    for (i = 0; i < MAX_PASSES && seen.requests < 2; i++) {
        if (!HG_Event_ready(e->sctx))
            assert_true(readable(e->sfd, WAIT_MS));
        pass(e->sctx);
    }
    assert_int_equal(seen.requests, 2);
    /* The answer has arrived; the client has not looked. */
    assert_true(readable(e->cfd, WAIT_MS));
    while (mono_ns() - start < (DEADLINE_MS + 20) * 1000000ull)
        ;
    for (i = 0; i < MAX_PASSES && seen.forwards < 2; i++)
        pass(e->cctx);
    assert_int_equal(seen.forwards, 2);
    assert_int_equal(seen.ret, HG_SUCCESS);
    assert_int_equal(seen.y, 12);
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wait_fd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rpc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loopback_notify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_wakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_read_before_deadline, setup,
                                        teardown),
    };

    if (argc > 1)
        info_string = argv[1];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
