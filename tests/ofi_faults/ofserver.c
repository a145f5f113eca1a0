/*
 * The child roles of the ofi fault scenarios: `--server` serves the RPCs of
 * ofrpc.h and reports its events on the notification pipe; `--origin`
 * exposes a large buffer and asks a server to pull it, so the parent can
 * kill it while the server's pull is in flight.
 *
 * The server checks itself: at shutdown it destroys what is left, and its
 * exit status says whether HG_Finalize succeeded and whether any callback
 * ran twice. The parent asserts on that status, which is how a scenario
 * observes leaks in the surviving server process.
 */
#include "ofi_faults/ofproc.h"
#include "ofi_faults/ofrpc.h"
#include "ofi_faults/ofroles.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A child gives up after this long on the NA clock even if nobody stops
 * it, so a broken parent can never leave a server running. */
#define OF_CHILD_LIFETIME_MS 90000u

/* Exit statuses, read by the parent. */
enum {
    OF_EXIT_OK = 0,
    OF_EXIT_INIT = 2,     /* HG_Init, registration or lookup failed      */
    OF_EXIT_FINALIZE = 3, /* something was left: HG_Finalize refused     */
    OF_EXIT_TWICE = 4,    /* a callback ran more than once               */
    OF_EXIT_LIFETIME = 5, /* nobody stopped the child                    */
    OF_EXIT_ORIGIN = 6,   /* the origin's forward completed (see below)  */
};

#define OF_MAX_HELD 64
#define OF_MAX_PULLS 64

/* One pull the server made. Records stay allocated until exit, so a
 * callback that ran twice finds live memory and is counted, not a crash. */
struct of_pull {
    hg_handle_t handle;
    of_pull_in_t in;
    hg_bulk_t local;
    hg_op_id_t op;
    int calls;
    hg_return_t ret;
    int cancel_armed; /* cancel after the next progress round           */
};

static struct {
    hg_class_t *cls;
    hg_context_t *ctx;
    struct of_ids ids;
    hg_handle_t held[OF_MAX_HELD];
    unsigned nheld;
    struct of_pull *pulls[OF_MAX_PULLS];
    unsigned npulls;
    int outstanding; /* responds and transfers not yet completed          */
    int twice;       /* callbacks that ran again                          */
    int done;        /* of_shutdown arrived                               */
} srv;

static hg_return_t
of_respond_done(const struct hg_cb_info *info)
{
    srv.outstanding--;
    HG_Destroy(info->info.respond.handle);
    return HG_SUCCESS;
}

/* Respond and hand the handle to of_respond_done; a respond refused at
 * once has no callback, so the handle is destroyed here. */
static void
of_respond(hg_handle_t handle, void *out)
{
    srv.outstanding++;
    if (HG_Respond(handle, of_respond_done, NULL, out) != HG_SUCCESS) {
        srv.outstanding--;
        HG_Destroy(handle);
    }
}

static hg_return_t
of_echo_cb(hg_handle_t handle)
{
    of_val_t v = {0};

    if (HG_Get_input(handle, &v) == HG_SUCCESS)
        HG_Free_input(handle, &v);
    v.value++;
    of_respond(handle, &v);
    return HG_SUCCESS;
}

static hg_return_t
of_hold_cb(hg_handle_t handle)
{
    if (srv.nheld == OF_MAX_HELD) {
        HG_Destroy(handle);
        return HG_SUCCESS;
    }
    srv.held[srv.nheld++] = handle;
    of_notify("H");
    return HG_SUCCESS;
}

/* Answer every held handle (their origins have usually given up, so these
 * are the late responses a scenario wants), then the release itself with
 * how many there were. */
static hg_return_t
of_release_cb(hg_handle_t handle)
{
    of_val_t v = {0};
    unsigned n = srv.nheld;

    for (unsigned i = 0; i < n; i++) {
        v.value = 1000 + i;
        of_respond(srv.held[i], &v);
    }
    srv.nheld = 0;
    of_notify("R %u", n);
    v.value = n;
    of_respond(handle, &v);
    return HG_SUCCESS;
}

static hg_return_t
of_pull_done(const struct hg_cb_info *info)
{
    struct of_pull *x = info->arg;
    of_pull_out_t out = {0};
    void *ptr = NULL;
    hg_size_t len = 0;
    hg_uint32_t count = 0;

    x->calls++;
    of_notify("B %d %d", (int) info->ret, x->calls);
    if (x->calls > 1) {
        srv.twice++;
        return HG_SUCCESS;
    }
    srv.outstanding--;
    x->ret = info->ret;
    out.ret = (int32_t) info->ret;
    out.calls = (uint32_t) x->calls;
    if (info->ret == HG_SUCCESS &&
        HG_Bulk_access(x->local, 0, x->in.size, HG_BULK_READ_ONLY, 1, &ptr,
                       &len, &count) == HG_SUCCESS &&
        count == 1)
        out.hash = of_hash(ptr, len);
    HG_Bulk_free(x->local);
    x->local = HG_BULK_NULL;
    HG_Free_input(x->handle, &x->in);
    of_respond(x->handle, &out);
    return HG_SUCCESS;
}

static hg_return_t
of_pull_cb(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);
    struct of_pull *x = calloc(1, sizeof(*x));
    of_pull_out_t out = {0};
    hg_size_t size;
    hg_return_t ret;

    if (x == NULL || srv.npulls == OF_MAX_PULLS) {
        free(x);
        out.ret = HG_NOMEM;
        of_respond(handle, &out);
        return HG_SUCCESS;
    }
    srv.pulls[srv.npulls++] = x;
    x->handle = handle;
    ret = HG_Get_input(handle, &x->in);
    if (ret != HG_SUCCESS) {
        out.ret = ret;
        of_respond(handle, &out);
        return HG_SUCCESS;
    }
    size = x->in.size;
    ret = HG_Bulk_create(info->hg_class, 1, NULL, &size, HG_BULK_READWRITE,
                         &x->local);
    if (ret == HG_SUCCESS) {
        ret = HG_Bulk_transfer(info->context, of_pull_done, x, HG_BULK_PULL,
                               info->addr, x->in.bulk, 0, x->local, 0, size,
                               &x->op);
        if (ret != HG_SUCCESS)
            HG_Bulk_free(x->local);
    }
    if (ret != HG_SUCCESS) {
        HG_Free_input(handle, &x->in);
        out.ret = ret;
        of_respond(handle, &out);
        return HG_SUCCESS;
    }
    srv.outstanding++;
    x->cancel_armed = x->in.cancel != 0;
    of_notify("P");
    return HG_SUCCESS;
}

static hg_return_t
of_shutdown_cb(hg_handle_t handle)
{
    of_val_t v = {0};

    srv.done = 1;
    of_respond(handle, &v);
    return HG_SUCCESS;
}

static void
of_trigger_all(hg_context_t *ctx)
{
    unsigned n = 0;

    do {
        n = 0;
        if (HG_Trigger(ctx, 0, 64, &n) != HG_SUCCESS)
            break;
    } while (n > 0);
}

/* Parse the options every role takes: --info <string>, and --target
 * <address> and --size <bytes> for the origin. */
static void
of_args(int argc, char **argv, const char **info, const char **target,
        uint64_t *size)
{
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--info") == 0)
            *info = argv[i + 1];
        else if (strcmp(argv[i], "--target") == 0)
            *target = argv[i + 1];
        else if (strcmp(argv[i], "--size") == 0)
            *size = strtoull(argv[i + 1], NULL, 0);
    }
}

int
of_server_main(int argc, char **argv)
{
    const char *info = "ofi+tcp://127.0.0.1:0", *target = NULL;
    uint64_t size = 0, deadline;
    char addr[256];
    hg_size_t addr_size = sizeof(addr);
    hg_addr_t self = HG_ADDR_NULL;
    int status = OF_EXIT_OK;

    signal(SIGPIPE, SIG_IGN);
    of_args(argc, argv, &info, &target, &size);
    srv.cls = of_hg_init(info, HG_TRUE);
    if (srv.cls == NULL)
        return OF_EXIT_INIT;
    srv.ctx = HG_Context_create(srv.cls);
    of_register(srv.cls, &srv.ids, of_echo_cb, of_hold_cb, of_release_cb,
                of_pull_cb, of_shutdown_cb);
    if (srv.ctx == NULL || srv.ids.pull == 0 ||
        HG_Addr_self(srv.cls, &self) != HG_SUCCESS ||
        HG_Addr_to_string(srv.cls, addr, &addr_size, self) != HG_SUCCESS)
        return OF_EXIT_INIT;
    HG_Addr_free(srv.cls, self);
    of_notify("A %s", addr);

    deadline =
        HG_Clock_now(srv.cls) + (uint64_t) OF_CHILD_LIFETIME_MS * 1000000;
    /* After of_shutdown, keep going until every respond and transfer has
     * completed, so finalize sees only what really leaked. */
    while (!srv.done || srv.outstanding > 0) {
        HG_Progress(srv.ctx, 10);
        of_trigger_all(srv.ctx);
        for (unsigned i = 0; i < srv.npulls; i++) {
            struct of_pull *x = srv.pulls[i];

            /* The cancel comes one progress round after the post, so the
             * transfer is under way with the fabric when it is cancelled. */
            if (x->cancel_armed && x->calls == 0) {
                hg_return_t ret = HG_Bulk_cancel(x->op);

                if (ret != HG_SUCCESS)
                    fprintf(stderr, "server: HG_Bulk_cancel: %s\n",
                            HG_Error_to_string(ret));
            }
            x->cancel_armed = 0;
        }
        if (HG_Clock_now(srv.cls) > deadline) {
            fprintf(stderr, "server: nobody stopped me, giving up\n");
            return OF_EXIT_LIFETIME;
        }
    }
    /* A handle still held at shutdown is the parent's business: destroy it
     * without an answer. */
    for (unsigned i = 0; i < srv.nheld; i++)
        HG_Destroy(srv.held[i]);
    /* Give a duplicate callback the chance to show up before checking. */
    for (int i = 0; i < 5; i++) {
        HG_Progress(srv.ctx, 1);
        of_trigger_all(srv.ctx);
    }
    if (srv.twice > 0) {
        fprintf(stderr, "server: %d callbacks ran more than once\n", srv.twice);
        status = OF_EXIT_TWICE;
    }
    if (HG_Context_destroy(srv.ctx) != HG_SUCCESS ||
        HG_Finalize(srv.cls) != HG_SUCCESS) {
        fprintf(stderr, "server: leak check failed (see above)\n");
        return OF_EXIT_FINALIZE;
    }
    for (unsigned i = 0; i < srv.npulls; i++)
        free(srv.pulls[i]);
    return status;
}

static hg_return_t
of_origin_forward_done(const struct hg_cb_info *info)
{
    of_notify("D %d", (int) info->ret);
    *(int *) info->arg = 1;
    return HG_SUCCESS;
}

/*
 * The origin exposes `size` bytes and asks the target to pull them, then
 * keeps progressing (the tcp provider moves RMA data only while the
 * exposing process polls) until the parent kills it. Its forward is never
 * meant to complete: if it does, the pull finished before the kill.
 */
int
of_origin_main(int argc, char **argv)
{
    const char *info = "ofi+tcp://127.0.0.1:0", *target = NULL;
    uint64_t size = OF_BIG_PULL, deadline;
    hg_class_t *cls;
    hg_context_t *ctx;
    struct of_ids ids;
    hg_addr_t addr = HG_ADDR_NULL;
    hg_handle_t handle = HG_HANDLE_NULL;
    of_pull_in_t in = {0};
    uint8_t *buf;
    void *ptr;
    hg_size_t len;
    int done = 0;

    signal(SIGPIPE, SIG_IGN);
    of_args(argc, argv, &info, &target, &size);
    buf = malloc(size);
    cls = of_hg_init(info, HG_FALSE);
    if (buf == NULL || target == NULL || cls == NULL)
        return OF_EXIT_INIT;
    for (uint64_t i = 0; i < size; i++)
        buf[i] = of_pattern(i);
    ptr = buf;
    len = size;
    ctx = HG_Context_create(cls);
    of_register(cls, &ids, NULL, NULL, NULL, NULL, NULL);
    if (ctx == NULL || HG_Addr_lookup(cls, target, &addr) != HG_SUCCESS ||
        HG_Bulk_create(cls, 1, &ptr, &len, HG_BULK_READ_ONLY, &in.bulk) !=
            HG_SUCCESS ||
        HG_Create(ctx, addr, ids.pull, &handle) != HG_SUCCESS)
        return OF_EXIT_INIT;
    in.size = size;
    if (HG_Forward(handle, of_origin_forward_done, &done, &in) != HG_SUCCESS)
        return OF_EXIT_INIT;
    of_notify("F");
    deadline = HG_Clock_now(cls) + (uint64_t) OF_CHILD_LIFETIME_MS * 1000000;
    while (!done && HG_Clock_now(cls) < deadline) {
        HG_Progress(ctx, 10);
        of_trigger_all(ctx);
    }
    /* Reaching here means the parent did not kill this process in time.
     * Nothing is cleaned up: the exit status is the report. */
    return done ? OF_EXIT_ORIGIN : OF_EXIT_LIFETIME;
}
