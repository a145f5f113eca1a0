/*
 * A single-threaded HG server that computes in its handler is still
 * alive to its callers (docs/architecture.md, "Liveness"): the server is
 * written the way Mercury programs are (one thread, a plain
 * HG_Progress/HG_Trigger loop), probes every 200 ms, and its handler
 * computes, without calling HG, until its class has answered five probes
 * (so for about five probe intervals, a period set by the probes
 * themselves, not by a sleep). The client's plain HG_Forward (no
 * deadline, probing every 200 ms) must complete with HG_SUCCESS: the
 * probes were answered by the library's own thread while nobody
 * progressed the server's context. Before that, while the server's loop
 * progresses its context, that thread wakes and drives nothing.
 *
 * Run: test_busy_server <info> (ofi+tcp://127.0.0.1:0, tcp://127.0.0.1:0,
 * na+sm). The server is a forked child; every wait is bounded on the NA
 * clock, and the child gives up on its own after OB_CHILD_MS.
 */
#include "mercury.h"
#include "mercury_macros.h"
#include "unit/bias_expected.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 200 ms: with 100 ms, one run in 200 of the ofi+tcp case ended with
 * HG_HOSTUNREACH on a 2-core machine at load 18 with two busy processes
 * added (scripts/flaky-check.py), where an answer's round trip can wait
 * that long for a CPU. */
#define OB_PROBE_MS 200u
#define OB_PROBES 5u         /* probes the handler waits to be answered */
#define OB_IDLE_WAKEUPS 12u  /* watchdog wake-ups watched while idle    */
#define OB_HANDLER_MS 10000u /* the handler gives up (a failure bound)  */
#define OB_CHILD_MS 60000u   /* the child gives up                      */
#define OB_WAIT_MS 30000u    /* the client gives up on a call           */

/* What the busy handler saw: probes answered during its computation,
 * the watchdog's drives during it, and the idle phase's figures. */
MERCURY_GEN_PROC(
    ob_out_t,
    ((uint64_t) (probes))((uint64_t) (drives))((uint64_t) (idle_wakeups))(
        (uint64_t) (idle_drives))((uint64_t) (work))((uint64_t) (foreign))(
        (uint64_t) (idle_bias))((uint64_t) (bias)))
MERCURY_GEN_PROC(ob_in_t, ((uint64_t) (value)))

static struct {
    hg_class_t *cls;
    hg_context_t *ctx;
    pthread_t main;
    uint64_t idle_wakeups, idle_drives, idle_bias;
    atomic_uint foreign; /* program callbacks run on another thread */
    atomic_uint creates, frees;
    int done;
} srv;

/* The program's handle callbacks (a create callback that attaches data,
 * and the data's free callback) must run on the server's only thread:
 * the library's thread leaves them to it. */
static void
ob_check_thread(atomic_uint *count)
{
    atomic_fetch_add(count, 1);
    if (!pthread_equal(pthread_self(), srv.main))
        atomic_fetch_add(&srv.foreign, 1);
}

static void
ob_free_data(void *data)
{
    (void) data;
    ob_check_thread(&srv.frees);
}

static hg_return_t
ob_create_cb(hg_handle_t handle, void *arg)
{
    (void) arg;
    ob_check_thread(&srv.creates);
    return HG_Set_data(handle, &srv, ob_free_data);
}

static int
ob_fail(const char *what)
{
    fprintf(stderr, "test_busy_server: FAILED: %s\n", what);
    return 1;
}

static struct hg_stats
ob_stats(hg_class_t *cls)
{
    struct hg_stats st;

    memset(&st, 0, sizeof(st));
    HG_Class_get_stats(cls, &st);
    return st;
}

/* Compute until the class has answered OB_PROBES more probes. Nothing in
 * here calls HG progress: this thread is the server's only one. A call
 * with value 0 is the warm-up: it is answered at once. */
static hg_return_t
ob_busy_cb(hg_handle_t handle)
{
    struct hg_stats st0 = ob_stats(srv.cls), st = st0;
    uint64_t limit = HG_Clock_now(srv.cls) + OB_HANDLER_MS * 1000000ull;
    volatile uint64_t work = 0;
    ob_in_t in;
    ob_out_t out;

    HG_Get_input(handle, &in);
    HG_Free_input(handle, &in);
    while (in.value != 0 &&
           st.probes_answered - st0.probes_answered < OB_PROBES &&
           HG_Clock_now(srv.cls) < limit) {
        for (int i = 0; i < 100000; i++)
            work = work * 6364136223846793005ull + 1442695040888963407ull;
        st = ob_stats(srv.cls);
    }
    out.probes = st.probes_answered - st0.probes_answered;
    out.drives = st.watchdog_drives - st0.watchdog_drives;
    out.idle_wakeups = srv.idle_wakeups;
    out.idle_drives = srv.idle_drives;
    out.idle_bias = srv.idle_bias;
    out.bias = st.hot_path_bias;
    out.work = work;
    out.foreign = atomic_load(&srv.foreign);
    HG_Respond(handle, NULL, NULL, &out);
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static hg_return_t
ob_stop_cb(hg_handle_t handle)
{
    uint64_t limit = HG_Clock_now(srv.cls) + OB_HANDLER_MS * 1000000ull;
    ob_out_t out;

    memset(&out, 0, sizeof(out));
    /* The watchdog gave the bias back after its last drive: wait out a
     * drive still under way (the watchdog thread may be off the CPU). */
    do
        out.bias = ob_stats(srv.cls).hot_path_bias;
    while (out.bias == 3 && HG_Clock_now(srv.cls) < limit);
    srv.done = 1;
    HG_Respond(handle, NULL, NULL, &out);
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static void
ob_register(hg_class_t *cls, hg_id_t *busy, hg_id_t *stop, int server)
{
    *busy = MERCURY_REGISTER(cls, "ob_busy", ob_in_t, ob_out_t,
                             server ? ob_busy_cb : NULL);
    *stop = MERCURY_REGISTER(cls, "ob_stop", ob_in_t, ob_out_t,
                             server ? ob_stop_cb : NULL);
}

static struct hg_init_info
ob_init_info(void)
{
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;

    ii.probe_interval_ms = OB_PROBE_MS;
    return ii;
}

/* Destroy a context once the last call's operations are done (a send
 * completion that comes after its response, the cancelled receive of a
 * probe's answer): progress until nothing is left to run, then destroy,
 * a bounded number of rounds. */
static hg_return_t
ob_destroy(hg_context_t *ctx)
{
    hg_return_t ret = HG_BUSY;

    for (int round = 0; round < 1000 && ret == HG_BUSY; round++) {
        for (int i = 0; i < 100; i++) {
            unsigned int n = 0;

            if (HG_Progress(ctx, round > 0 ? 1 : 0) == HG_TIMEOUT)
                break;
            while (HG_Trigger(ctx, 0, 1, &n) == HG_SUCCESS && n > 0)
                ;
        }
        ret = HG_Context_destroy(ctx);
    }
    return ret;
}

/* The server: one thread, the plain Mercury loop. Writes its address to
 * `fd`; exits 0 when it finalized cleanly. */
static int
ob_server(const char *info, int fd)
{
    struct hg_init_info ii = ob_init_info();
    char addr_str[256];
    hg_size_t len = sizeof(addr_str);
    hg_addr_t self;
    hg_id_t busy, stop;
    uint64_t limit;

    srv.main = pthread_self();
    srv.cls = HG_Init_opt(info, HG_TRUE, &ii);
    if (srv.cls == NULL || HG_Class_set_handle_create_callback(
                               srv.cls, ob_create_cb, NULL) != HG_SUCCESS)
        return 2;
    srv.ctx = HG_Context_create(srv.cls);
    ob_register(srv.cls, &busy, &stop, 1);
    if (srv.ctx == NULL || HG_Addr_self(srv.cls, &self) != HG_SUCCESS ||
        HG_Addr_to_string(srv.cls, addr_str, &len, self) != HG_SUCCESS)
        return 2;
    HG_Addr_free(srv.cls, self);
    limit = HG_Clock_now(srv.cls) + OB_HANDLER_MS * 1000000ull;
    /* Idle, progressing: the watchdog wakes and finds nothing to do.
     * Counted in its own wake-ups, not in time. Each HG_Progress waits
     * longer than a wake-up period (50 ms), so this thread is inside it at
     * every wake-up but in the instants between two calls: with 50 ms
     * waits, a loaded machine that kept this thread off the CPU between
     * two calls for a whole period made the watchdog drive (rightly: the
     * context had not been progressed), once in 12 runs under
     * ThreadSanitizer. */
    while (ob_stats(srv.cls).watchdog_wakeups < OB_IDLE_WAKEUPS &&
           HG_Clock_now(srv.cls) < limit) {
        unsigned int n;

        HG_Progress(srv.ctx, 1000);
        while (HG_Trigger(srv.ctx, 0, 1, &n) == HG_SUCCESS && n > 0)
            ;
    }
    srv.idle_wakeups = ob_stats(srv.cls).watchdog_wakeups;
    srv.idle_drives = ob_stats(srv.cls).watchdog_drives;
    srv.idle_bias = ob_stats(srv.cls).hot_path_bias;
    if (write(fd, addr_str, strlen(addr_str) + 1) < 0)
        return 2;
    close(fd);
    limit = HG_Clock_now(srv.cls) + OB_CHILD_MS * 1000000ull;
    while (!srv.done && HG_Clock_now(srv.cls) < limit) {
        unsigned int n;

        while (HG_Trigger(srv.ctx, 0, 1, &n) == HG_SUCCESS && n > 0)
            ;
        if (!srv.done)
            HG_Progress(srv.ctx, 100);
    }
    if (ob_destroy(srv.ctx) != HG_SUCCESS || HG_Finalize(srv.cls) != HG_SUCCESS)
        return 3;
    /* Every handle that got data gave it back, on this thread. */
    if (atomic_load(&srv.foreign) != 0 ||
        atomic_load(&srv.frees) != atomic_load(&srv.creates))
        return 5;
    return srv.done ? 0 : 4;
}

struct ob_call {
    int calls;
    hg_return_t ret;
    ob_out_t out;
};

static hg_return_t
ob_forward_cb(const struct hg_cb_info *info)
{
    struct ob_call *call = info->arg;

    call->ret = info->ret;
    if (info->ret == HG_SUCCESS &&
        HG_Get_output(info->info.forward.handle, &call->out) == HG_SUCCESS)
        HG_Free_output(info->info.forward.handle, &call->out);
    call->calls++;
    return HG_SUCCESS;
}

/* A plain forward (no deadline), driven until its callback ran. */
static void
ob_call(hg_class_t *cls, hg_context_t *ctx, hg_addr_t addr, hg_id_t id,
        uint64_t value, struct ob_call *call)
{
    uint64_t limit = HG_Clock_now(cls) + OB_WAIT_MS * 1000000ull;
    ob_in_t in = {.value = value};
    hg_handle_t h;

    memset(call, 0, sizeof(*call));
    call->ret = HG_OTHER_ERROR;
    if (HG_Create(ctx, addr, id, &h) != HG_SUCCESS)
        return;
    if (HG_Forward(h, ob_forward_cb, call, &in) != HG_SUCCESS) {
        HG_Destroy(h);
        return;
    }
    while (call->calls == 0 && HG_Clock_now(cls) < limit) {
        unsigned int n;

        HG_Progress(ctx, 100);
        while (HG_Trigger(ctx, 0, 1, &n) == HG_SUCCESS && n > 0)
            ;
    }
    HG_Destroy(h);
}

/* The warm-up, from a class of its own that does not probe: the server's
 * first response of this size is its fabric's first eager send, and
 * libfabric's rxm sets up its bounce buffers there (a 17 MB pool: 50 ms,
 * and 600 ms under ThreadSanitizer on a loaded machine). Its lock is held
 * meanwhile, so no thread of the server answers a probe, for longer than
 * this test's 200 ms interval allows. The watchdog is what is checked
 * here, so that one-time stall happens before the probed calls. */
static int
ob_warm_up(const char *info, const char *addr_str)
{
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    hg_class_t *cls;
    hg_context_t *ctx;
    hg_addr_t addr;
    hg_id_t busy, stop;
    struct ob_call call;
    int failed = 1;

    ii.no_probe = HG_TRUE;
    cls = HG_Init_opt(info, HG_FALSE, &ii);
    ctx = cls ? HG_Context_create(cls) : NULL;
    if (ctx == NULL)
        return 1;
    ob_register(cls, &busy, &stop, 0);
    if (HG_Addr_lookup2(cls, addr_str, &addr) == HG_SUCCESS) {
        ob_call(cls, ctx, addr, busy, 0, &call);
        failed = call.calls != 1 || call.ret != HG_SUCCESS;
        HG_Addr_free(cls, addr);
    }
    if (ob_destroy(ctx) != HG_SUCCESS || HG_Finalize(cls) != HG_SUCCESS)
        failed = 1;
    return failed;
}

static int
ob_client(const char *info, const char *addr_str)
{
    struct hg_init_info ii = ob_init_info();
    hg_class_t *cls = HG_Init_opt(info, HG_FALSE, &ii);
    hg_context_t *ctx = cls ? HG_Context_create(cls) : NULL;
    hg_addr_t addr;
    hg_id_t busy, stop;
    struct ob_call call, end;
    int failed = 0;

    if (ctx == NULL)
        return ob_fail("client init");
    ob_register(cls, &busy, &stop, 0);
    if (HG_Addr_lookup2(cls, addr_str, &addr) != HG_SUCCESS)
        return ob_fail("lookup");
    if (ob_warm_up(info, addr_str) != 0)
        return ob_fail("the warm-up call did not succeed");
    ob_call(cls, ctx, addr, busy, 1, &call);
    printf("busy handler: ret %s, %d call(s), %llu probes answered, %llu "
           "watchdog drives, %llu program callbacks on another thread; "
           "idle: %llu wake-ups, %llu drives; hot-path bias %llu idle, "
           "%llu after the drives\n",
           HG_Error_to_string(call.ret), call.calls,
           (unsigned long long) call.out.probes,
           (unsigned long long) call.out.drives,
           (unsigned long long) call.out.foreign,
           (unsigned long long) call.out.idle_wakeups,
           (unsigned long long) call.out.idle_drives,
           (unsigned long long) call.out.idle_bias,
           (unsigned long long) call.out.bias);
    if (!bias_expected())
        printf("no hot-path bias in this build or kernel "
               "(docs/architecture.md)\n");
    if (call.calls != 1 || call.ret != HG_SUCCESS)
        failed |= ob_fail("the busy server's plain forward did not succeed");
    else if (call.out.probes < OB_PROBES || call.out.drives == 0)
        failed |= ob_fail("the handler was not probed through the watchdog");
    else if (call.out.foreign != 0)
        failed |= ob_fail("a program callback ran on the library's thread");
    else if (call.out.idle_wakeups < OB_IDLE_WAKEUPS ||
             call.out.idle_drives != 0)
        failed |= ob_fail("the watchdog drove a context that progressed");
    /* The server's one thread held the bias while the watchdog only
     * watched; the watchdog borrowed it to drive (held or lent when the
     * handler looked, never revoked for good). */
    else if (bias_expected() && (call.out.idle_bias != 1 ||
                                 (call.out.bias != 1 && call.out.bias != 3)))
        failed |= ob_fail("the bias was not held while the watchdog watched, "
                          "or was revoked for good when it drove");
    ob_call(cls, ctx, addr, stop, 1, &end);
    if (end.calls != 1 || end.ret != HG_SUCCESS)
        failed |= ob_fail("stop");
    else {
        printf("hot-path bias after the busy handler: %llu\n",
               (unsigned long long) end.out.bias);
        /* ... and gave it back. */
        if (bias_expected() && end.out.bias != 1)
            failed |= ob_fail("the watchdog did not give the bias back");
    }
    HG_Addr_free(cls, addr);
    if (ob_destroy(ctx) != HG_SUCCESS)
        failed |= ob_fail("client context destroy");
    if (HG_Finalize(cls) != HG_SUCCESS)
        failed |= ob_fail("client finalize");
    return failed;
}

int
main(int argc, char **argv)
{
    const char *info = argc > 1 ? argv[1] : "ofi+tcp://127.0.0.1:0";
    char addr_str[256];
    size_t got = 0;
    int fds[2], status, failed;
    pid_t pid;

    if (pipe(fds) != 0)
        return ob_fail("pipe");
    pid = fork();
    if (pid < 0)
        return ob_fail("fork");
    if (pid == 0) {
        close(fds[0]);
        _exit(ob_server(info, fds[1]));
    }
    close(fds[1]);
    /* The address, or end of file if the server could not start. */
    while (got < sizeof(addr_str)) {
        ssize_t n = read(fds[0], addr_str + got, sizeof(addr_str) - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
        if (addr_str[got - 1] == '\0')
            break;
    }
    close(fds[0]);
    if (got == 0 || addr_str[got - 1] != '\0') {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return ob_fail("the server did not start");
    }
    failed = ob_client(info, addr_str);
    if (failed)
        kill(pid, SIGKILL);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "server status %d\n", status);
        failed |= ob_fail("the server did not finalize cleanly");
    }
    if (!failed)
        printf("test_busy_server: OK\n");
    return failed;
}
