/*
 * The server of the compat programs, written as Mercury's tutorial servers
 * are: HG_Init() listening, MERCURY_REGISTER(), then a progress / trigger
 * loop until a "quit" RPC arrives.
 *
 * Built two ways. As its own program (COMPAT_SERVER_MAIN) it takes the
 * info string, prints its address on the file QS_TEST_ADDR_FILE names (or
 * stdout) and serves. Linked into a client, it serves on a thread of the
 * client's process when QS_COMPAT_SIM_SERVER gives an address, because the
 * simulated fabric lives inside one process.
 */
#include "compat_rpc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int compat_quit;

static hg_return_t
sum_cb(hg_handle_t handle)
{
    sum_in_t in;
    sum_out_t out;
    hg_return_t ret;

    ret = HG_Get_input(handle, &in);
    if (ret != HG_SUCCESS)
        return ret;
    out.ret = in.x + in.y;
    HG_Free_input(handle, &in);
    ret = HG_Respond(handle, NULL, NULL, &out);
    HG_Destroy(handle);
    return ret;
}

static hg_return_t
quit_cb(hg_handle_t handle)
{
    hg_return_t ret = HG_Respond(handle, NULL, NULL, NULL);

    HG_Destroy(handle);
    __atomic_store_n(&compat_quit, 1, __ATOMIC_RELEASE);
    return ret;
}

void
compat_server_register(hg_class_t *hg_class)
{
    MERCURY_REGISTER(hg_class, "sum", sum_in_t, sum_out_t, sum_cb);
    MERCURY_REGISTER(hg_class, "quit", void, void, quit_cb);
}

/* Serve until "quit", then let its response go out and finalize. */
static int
compat_serve(hg_class_t *hg_class, hg_context_t *context)
{
    int rc = 0;

    while (!__atomic_load_n(&compat_quit, __ATOMIC_ACQUIRE)) {
        unsigned int count;

        do {
            count = 0;
        } while (HG_Trigger(context, 0, 1, &count) == HG_SUCCESS && count);
        HG_Progress(context, 100);
    }
    for (int i = 0; i < 100; i++) {
        unsigned int count = 0;
        HG_Progress(context, 0);
        HG_Trigger(context, 0, 16, &count);
    }
    if (HG_Context_destroy(context) != HG_SUCCESS ||
        HG_Finalize(hg_class) != HG_SUCCESS)
        rc = 1;
    return rc;
}

#ifdef COMPAT_SERVER_MAIN
int
main(int argc, char **argv)
{
    hg_class_t *hg_class;
    hg_context_t *context;
    hg_addr_t self;
    char addr[256];
    hg_size_t size = sizeof(addr);
    const char *addr_file = getenv("QS_TEST_ADDR_FILE");
    FILE *out = stdout;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <info string>\n", argv[0]);
        return 2;
    }
    hg_class = HG_Init(argv[1], HG_TRUE);
    if (hg_class == NULL)
        return 1;
    context = HG_Context_create(hg_class);
    if (context == NULL)
        return 1;
    compat_server_register(hg_class);
    if (HG_Addr_self(hg_class, &self) != HG_SUCCESS ||
        HG_Addr_to_string(hg_class, addr, &size, self) != HG_SUCCESS)
        return 1;
    HG_Addr_free(hg_class, self);
    if (addr_file != NULL && (out = fopen(addr_file, "w")) == NULL)
        return 1;
    fprintf(out, "%s\n", addr);
    fflush(out);
    if (out != stdout)
        fclose(out);
    return compat_serve(hg_class, context);
}
#else
static pthread_t compat_thread;
static hg_class_t *compat_class;
static hg_context_t *compat_context;
static int compat_rc;

static void *
compat_thread_main(void *arg)
{
    (void) arg;
    compat_rc = compat_serve(compat_class, compat_context);
    return NULL;
}

/* The client's process ends with the server's verdict. */
static void
compat_sim_server_join(void)
{
    struct timespec limit;

    /* A client that failed before sending "quit" leaves the server
     * running: bound the wait on that failure path only. */
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += 30;
    if (pthread_timedjoin_np(compat_thread, NULL, &limit) != 0) {
        fprintf(stderr, "compat server: never asked to quit\n");
        _Exit(1);
    }
    if (compat_rc != 0) {
        fprintf(stderr, "compat server: finalize failed\n");
        _Exit(1);
    }
}

__attribute__((constructor)) static void
compat_sim_server_start(void)
{
    const char *addr = getenv("QS_COMPAT_SIM_SERVER");

    if (addr == NULL)
        return;
    compat_class = HG_Init(addr, HG_TRUE);
    compat_context = compat_class ? HG_Context_create(compat_class) : NULL;
    if (compat_context == NULL) {
        fprintf(stderr, "compat server: cannot listen on %s\n", addr);
        _Exit(1);
    }
    compat_server_register(compat_class);
    if (pthread_create(&compat_thread, NULL, compat_thread_main, NULL) != 0)
        _Exit(1);
    atexit(compat_sim_server_join);
}
#endif
