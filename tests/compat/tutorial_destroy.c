/*
 * The client pattern of Mercury's tutorials (hello, local): forward an RPC,
 * destroy the handle at once, then destroy the context and finalize. In
 * Mercury, HG_Context_destroy() progresses the forward of the destroyed
 * handle to its end, so the program succeeds and the server sees the RPC.
 *
 * usage:
 *   tutorial_destroy server <info>
 *       serve until one "hello" (one-way) and one "twice" (two-way) RPC
 *       arrived; prints its address on QS_TEST_ADDR_FILE (or stdout) and
 *       one line per RPC seen
 *   tutorial_destroy client <info> <server address> oneway|twoway
 *       oneway: "hello" with no callback, disable_response on both sides;
 *       twoway: "twice" with a callback, the handle destroyed before the
 *       response; both then destroy the context and finalize, and exit 0
 *       only if every call returned HG_SUCCESS (and, two-way, the callback
 *       ran once with the right output)
 *   tutorial_destroy sim
 *       both, over the simulated fabric: the server on a thread of this
 *       process, the one-way client, then the two-way one
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mercury.h>
#include <mercury_proc.h>

#define HELLO_VALUE 42u
#define TWICE_VALUE 7u

static hg_return_t
proc_u32(hg_proc_t proc, void *data)
{
    return hg_proc_uint32_t(proc, data);
}

/* Both sides register the same way, as the tutorials do. */
static void
register_rpcs(hg_class_t *cls, hg_id_t *hello, hg_id_t *twice,
              hg_rpc_cb_t hello_cb, hg_rpc_cb_t twice_cb)
{
    *hello = HG_Register_name(cls, "tut_hello", proc_u32, NULL, hello_cb);
    HG_Registered_disable_response(cls, *hello, HG_TRUE);
    *twice = HG_Register_name(cls, "tut_twice", proc_u32, proc_u32, twice_cb);
}

/* The server. */
static int seen_hello, seen_twice;

static hg_return_t
hello_handler(hg_handle_t handle)
{
    uint32_t in = 0;

    if (HG_Get_input(handle, &in) == HG_SUCCESS) {
        printf("server: one-way hello %u\n", in);
        fflush(stdout);
        HG_Free_input(handle, &in);
        __atomic_store_n(&seen_hello, 1, __ATOMIC_RELEASE);
    }
    return HG_Destroy(handle);
}

static hg_return_t
twice_handler(hg_handle_t handle)
{
    uint32_t in = 0, out;
    hg_return_t ret;

    ret = HG_Get_input(handle, &in);
    if (ret != HG_SUCCESS) {
        HG_Destroy(handle);
        return ret;
    }
    printf("server: two-way twice %u\n", in);
    fflush(stdout);
    HG_Free_input(handle, &in);
    out = 2 * in;
    ret = HG_Respond(handle, NULL, NULL, &out);
    HG_Destroy(handle);
    __atomic_store_n(&seen_twice, 1, __ATOMIC_RELEASE);
    return ret;
}

/* Over sim, the client starts once the server thread has polled: the
 * simulated world then knows two threads drive it, and lets its virtual
 * clock pass only when neither has anything new (a world it believes
 * single-threaded would jump the clock past the client's deadlines while
 * the server thread has not run yet). */
static pthread_mutex_t polled_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t polled_cond = PTHREAD_COND_INITIALIZER;
static int polled;

static int
serve(hg_class_t *cls, hg_context_t *ctx)
{
    hg_return_t ret;

    HG_Progress(ctx, 0);
    pthread_mutex_lock(&polled_lock);
    polled = 1;
    pthread_cond_signal(&polled_cond);
    pthread_mutex_unlock(&polled_lock);

    while (!__atomic_load_n(&seen_hello, __ATOMIC_ACQUIRE) ||
           !__atomic_load_n(&seen_twice, __ATOMIC_ACQUIRE)) {
        unsigned int count;

        do {
            count = 0;
        } while (HG_Trigger(ctx, 0, 1, &count) == HG_SUCCESS && count);
        HG_Progress(ctx, 100);
    }
    /* The response to "twice" may still be on its way out: the context
     * destroy finishes it. */
    ret = HG_Context_destroy(ctx);
    printf("server: HG_Context_destroy %s\n", HG_Error_to_string(ret));
    if (ret != HG_SUCCESS)
        return 1;
    ret = HG_Finalize(cls);
    printf("server: HG_Finalize %s\n", HG_Error_to_string(ret));
    return ret == HG_SUCCESS ? 0 : 1;
}

static hg_class_t *
server_init(const char *info, hg_context_t **ctx)
{
    hg_class_t *cls = HG_Init(info, HG_TRUE);
    hg_id_t hello, twice;

    if (cls == NULL)
        return NULL;
    *ctx = HG_Context_create(cls);
    if (*ctx == NULL)
        return NULL;
    register_rpcs(cls, &hello, &twice, hello_handler, twice_handler);
    return cls;
}

static int
server_main(const char *info)
{
    hg_context_t *ctx;
    hg_class_t *cls = server_init(info, &ctx);
    const char *addr_file = getenv("QS_TEST_ADDR_FILE");
    char addr[256];
    hg_size_t size = sizeof(addr);
    hg_addr_t self;
    FILE *out = stdout;

    if (cls == NULL) {
        fprintf(stderr, "server: cannot listen on %s\n", info);
        return 1;
    }
    if (HG_Addr_self(cls, &self) != HG_SUCCESS ||
        HG_Addr_to_string(cls, addr, &size, self) != HG_SUCCESS)
        return 1;
    HG_Addr_free(cls, self);
    if (addr_file != NULL && (out = fopen(addr_file, "w")) == NULL)
        return 1;
    fprintf(out, "%s\n", addr);
    fflush(out);
    if (out != stdout)
        fclose(out);
    return serve(cls, ctx);
}

/* The client. */
static int cb_runs;
static hg_return_t cb_ret = HG_OTHER_ERROR;
static uint32_t cb_out;

static hg_return_t
twice_done(const struct hg_cb_info *info)
{
    cb_runs++;
    cb_ret = info->ret;
    if (info->ret == HG_SUCCESS &&
        HG_Get_output(info->info.forward.handle, &cb_out) == HG_SUCCESS)
        HG_Free_output(info->info.forward.handle, &cb_out);
    return HG_SUCCESS;
}

/* Print the call and its result; false unless HG_SUCCESS. */
static int
check(const char *what, hg_return_t ret)
{
    printf("client: %s %s\n", what, HG_Error_to_string(ret));
    fflush(stdout);
    return ret == HG_SUCCESS;
}

static int
client_main(const char *info, const char *server, int twoway)
{
    hg_class_t *cls = HG_Init(info, HG_FALSE);
    hg_context_t *ctx = cls ? HG_Context_create(cls) : NULL;
    hg_id_t hello, twice;
    hg_addr_t addr;
    hg_handle_t handle;
    uint32_t in = twoway ? TWICE_VALUE : HELLO_VALUE;

    if (ctx == NULL) {
        fprintf(stderr, "client: cannot initialize %s\n", info);
        return 1;
    }
    register_rpcs(cls, &hello, &twice, NULL, NULL);
    if (!check("HG_Addr_lookup2", HG_Addr_lookup2(cls, server, &addr)) ||
        !check("HG_Create",
               HG_Create(ctx, addr, twoway ? twice : hello, &handle)))
        return 1;
    if (!check("HG_Forward",
               HG_Forward(handle, twoway ? twice_done : NULL, NULL, &in)))
        return 1;
    /* The tutorials' order: nothing waits for the forward. */
    if (!check("HG_Destroy", HG_Destroy(handle)) ||
        !check("HG_Addr_free", HG_Addr_free(cls, addr)) ||
        !check("HG_Context_destroy", HG_Context_destroy(ctx)) ||
        !check("HG_Finalize", HG_Finalize(cls)))
        return 1;
    if (twoway) {
        printf("client: callback ran %d time(s), %s, output %u\n", cb_runs,
               HG_Error_to_string(cb_ret), cb_out);
        if (cb_runs != 1 || cb_ret != HG_SUCCESS || cb_out != 2 * TWICE_VALUE)
            return 1;
    }
    printf("client: %s done\n", twoway ? "two-way" : "one-way");
    return 0;
}

/* Both in one process over the simulated fabric. */
static hg_class_t *sim_cls;
static hg_context_t *sim_ctx;
static int sim_rc = 1;

static void *
sim_server_thread(void *arg)
{
    (void) arg;
    sim_rc = serve(sim_cls, sim_ctx);
    return NULL;
}

static int
sim_main(void)
{
    static const char server[] = "sim://tutorial-server";
    struct timespec limit;
    pthread_t thread;

    sim_cls = server_init(server, &sim_ctx);
    if (sim_cls == NULL ||
        pthread_create(&thread, NULL, sim_server_thread, NULL) != 0)
        return 1;
    pthread_mutex_lock(&polled_lock);
    while (!polled)
        pthread_cond_wait(&polled_cond, &polled_lock);
    pthread_mutex_unlock(&polled_lock);
    if (client_main("sim", server, 0) != 0 || client_main("sim", server, 1))
        _Exit(1); /* the server thread would wait for RPCs forever */
    /* Both RPCs were sent and the two-way one answered: the server ends
     * by itself; the bound only catches a broken build. */
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += 30;
    if (pthread_timedjoin_np(thread, NULL, &limit) != 0) {
        fprintf(stderr, "server: did not finish\n");
        _Exit(1);
    }
    return sim_rc;
}

int
main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && strcmp(argv[1], "sim") == 0)
        return sim_main();
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return server_main(argv[2]);
    if (argc == 5 && strcmp(argv[1], "client") == 0 &&
        (strcmp(argv[4], "oneway") == 0 || strcmp(argv[4], "twoway") == 0))
        return client_main(argv[2], argv[3], strcmp(argv[4], "twoway") == 0);
    fprintf(stderr,
            "usage: %s server <info> | client <info> <addr> oneway|twoway | "
            "sim\n",
            argv[0]);
    return 2;
}
