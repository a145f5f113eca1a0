/*
 * A Mercury 2.4 program driven by its own poll() loop, the way Mercury's
 * documentation describes event-driven progress: it waits on
 * HG_Event_get_wait_fd(), asks HG_Event_ready() before each wait, and
 * drives the context with HG_Event_progress() / HG_Event_trigger(). It
 * uses only Mercury's public API (it builds unchanged against Mercury
 * 2.4.1 itself).
 *
 *   hg_event_prog server <info>            prints its address (and writes
 *                                          it to $QS_TEST_ADDR_FILE)
 *   hg_event_prog client <info> <address>  100 sums, then stops the server
 *
 * Each prints "hg_event_prog <role>: OK" on success and whether it waited
 * on a descriptor ("wait fd: yes").
 */
#include <mercury.h>
#include <mercury_proc.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Procs written by hand, as without Boost (MERCURY_GEN_PROC needs it in
 * a Mercury build). */
typedef struct {
    uint32_t a, b;
} sum_in_t;

typedef struct {
    uint32_t sum;
} sum_out_t;

static hg_return_t
proc_sum_in_t(hg_proc_t proc, void *data)
{
    sum_in_t *in = data;
    hg_return_t ret = hg_proc_uint32_t(proc, &in->a);

    return ret == HG_SUCCESS ? hg_proc_uint32_t(proc, &in->b) : ret;
}

static hg_return_t
proc_sum_out_t(hg_proc_t proc, void *data)
{
    return hg_proc_uint32_t(proc, &((sum_out_t *) data)->sum);
}

#define NSUMS 100
#define LIMIT_S 60 /* the whole run, in seconds */

static int quit_responded; /* server: the quit RPC was answered */
static int sums_done;      /* client: responses checked          */
static int quit_done;      /* client: the quit RPC completed     */
static int failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "hg_event_prog: %s:%d: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                    \
            failed = 1;                                                        \
        }                                                                      \
    } while (0)

/* Run the event loop until *value reaches want (or the time limit
 * passes). Returns whether a descriptor was used. */
static int
event_loop(hg_context_t *context, const int *value, int want)
{
    int fd = HG_Event_get_wait_fd(context);
    time_t end = time(NULL) + LIMIT_S;

    while (*value < want && !failed) {
        unsigned int count = 0, actual = 0;

        if (time(NULL) > end) {
            fprintf(stderr, "hg_event_prog: no progress in %d s\n", LIMIT_S);
            failed = 1;
            break;
        }
        if (fd < 0) {
            /* A plugin without a descriptor: block in HG_Progress. */
            hg_return_t ret = HG_Progress(context, 100);
            CHECK(ret == HG_SUCCESS || ret == HG_TIMEOUT);
        } else if (!HG_Event_ready(context)) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};

            CHECK(poll(&pfd, 1, 1000) >= 0);
        }
        CHECK(HG_Event_progress(context, &count) == HG_SUCCESS);
        CHECK(HG_Event_trigger(context, count, &actual) == HG_SUCCESS);
        CHECK(actual <= count);
    }
    return fd >= 0;
}

static hg_return_t
sum_rpc(hg_handle_t handle)
{
    sum_in_t in;
    sum_out_t out;

    CHECK(HG_Get_input(handle, &in) == HG_SUCCESS);
    out.sum = in.a + in.b;
    CHECK(HG_Respond(handle, NULL, NULL, &out) == HG_SUCCESS);
    HG_Free_input(handle, &in);
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static hg_return_t
quit_respond_cb(const struct hg_cb_info *info)
{
    CHECK(info->ret == HG_SUCCESS);
    quit_responded = 1;
    return HG_SUCCESS;
}

static hg_return_t
quit_rpc(hg_handle_t handle)
{
    CHECK(HG_Respond(handle, quit_respond_cb, NULL, NULL) == HG_SUCCESS);
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static int
server(const char *info)
{
    hg_class_t *cls = HG_Init(info, HG_TRUE);
    hg_context_t *context;
    hg_addr_t self;
    char buf[256];
    hg_size_t size = sizeof(buf);
    const char *addr_file = getenv("QS_TEST_ADDR_FILE");
    int used_fd;

    if (cls == NULL)
        return 1;
    context = HG_Context_create(cls);
    CHECK(context != NULL);
    CHECK(HG_Register_name(cls, "event_sum", proc_sum_in_t, proc_sum_out_t,
                           sum_rpc) != 0);
    CHECK(HG_Register_name(cls, "event_quit", NULL, NULL, quit_rpc) != 0);
    CHECK(HG_Addr_self(cls, &self) == HG_SUCCESS);
    CHECK(HG_Addr_to_string(cls, buf, &size, self) == HG_SUCCESS);
    HG_Addr_free(cls, self);
    printf("hg_event_prog server address: %s\n", buf);
    fflush(stdout);
    if (addr_file != NULL) {
        FILE *f = fopen(addr_file, "w");

        CHECK(f != NULL);
        if (f != NULL) {
            fprintf(f, "%s\n", buf);
            fclose(f);
        }
    }
    used_fd = event_loop(context, &quit_responded, 1);
    printf("hg_event_prog server: wait fd: %s\n", used_fd ? "yes" : "no");
    CHECK(HG_Context_destroy(context) == HG_SUCCESS);
    CHECK(HG_Finalize(cls) == HG_SUCCESS);
    if (failed)
        return 1;
    printf("hg_event_prog server: OK\n");
    return 0;
}

struct sum_call {
    hg_handle_t handle;
    uint32_t expect;
};

static hg_return_t
sum_forward_cb(const struct hg_cb_info *info)
{
    struct sum_call *call = info->arg;
    sum_out_t out;

    CHECK(info->ret == HG_SUCCESS);
    if (info->ret == HG_SUCCESS) {
        CHECK(HG_Get_output(call->handle, &out) == HG_SUCCESS);
        CHECK(out.sum == call->expect);
        HG_Free_output(call->handle, &out);
    }
    sums_done++;
    return HG_SUCCESS;
}

static hg_return_t
quit_forward_cb(const struct hg_cb_info *info)
{
    CHECK(info->ret == HG_SUCCESS);
    quit_done = 1;
    return HG_SUCCESS;
}

static int
client(const char *info, const char *server_addr)
{
    hg_class_t *cls = HG_Init(info, HG_FALSE);
    hg_context_t *context;
    hg_addr_t addr;
    hg_id_t sum_id, quit_id;
    hg_handle_t handle;
    int used_fd = 0;

    if (cls == NULL)
        return 1;
    context = HG_Context_create(cls);
    CHECK(context != NULL);
    sum_id =
        HG_Register_name(cls, "event_sum", proc_sum_in_t, proc_sum_out_t, NULL);
    quit_id = HG_Register_name(cls, "event_quit", NULL, NULL, NULL);
    CHECK(HG_Addr_lookup2(cls, server_addr, &addr) == HG_SUCCESS);
    for (uint32_t i = 0; i < NSUMS && !failed; i++) {
        struct sum_call call = {.expect = 2 * i + 1};
        sum_in_t in = {.a = i, .b = i + 1};
        int want = sums_done + 1;

        CHECK(HG_Create(context, addr, sum_id, &call.handle) == HG_SUCCESS);
        CHECK(HG_Forward(call.handle, sum_forward_cb, &call, &in) ==
              HG_SUCCESS);
        used_fd = event_loop(context, &sums_done, want);
        HG_Destroy(call.handle);
    }
    CHECK(sums_done == NSUMS);
    CHECK(HG_Create(context, addr, quit_id, &handle) == HG_SUCCESS);
    CHECK(HG_Forward(handle, quit_forward_cb, NULL, NULL) == HG_SUCCESS);
    event_loop(context, &quit_done, 1);
    HG_Destroy(handle);
    HG_Addr_free(cls, addr);
    printf("hg_event_prog client: wait fd: %s\n", used_fd ? "yes" : "no");
    CHECK(HG_Context_destroy(context) == HG_SUCCESS);
    CHECK(HG_Finalize(cls) == HG_SUCCESS);
    if (failed)
        return 1;
    printf("hg_event_prog client: %d sums: OK\n", NSUMS);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return server(argv[2]);
    if (argc == 4 && strcmp(argv[1], "client") == 0)
        return client(argv[2], argv[3]);
    fprintf(stderr, "usage: %s server <info> | client <info> <address>\n",
            argv[0]);
    return 2;
}
