/*
 * The program qs-sweep's own tests sweep: an HG echo service and its
 * client in one process and one thread. It asks for "tcp", as a program
 * written for a real fabric would; qs-sweep's QS_NA_INFO=sim puts it on
 * the simulated fabric. The mode decides how it misbehaves:
 *
 *   pass      ten echoes with a deadline each; errors from injected
 *             faults are fine, wrong bytes or a missing callback are not
 *   fail      as pass, then exits 1 for seeds that are 2 modulo 5 (a
 *             stand-in for a bug only some schedules reach)
 *   hang      as pass, but seed 3 waits forever for a reply never sent
 *   nondet    as pass, with a number of echoes taken from the process id,
 *             so two runs of one seed give different traces
 *   busy      as pass with 200,000 echoes: a run that keeps a core busy,
 *             for measuring qs-sweep's throughput (bench/sweep_busy.sh)
 *   crash     as pass, then seeds that are 3 modulo 5 die by SIGABRT
 *   leak      as pass, but seeds that are 4 modulo 5 never destroy their
 *             last handle (the invariant checker reports it under
 *             --check; the exit status alone is 0)
 *   sanreport as pass, then seeds that are 1 modulo 5 print a sanitizer
 *             report's first line and still exit 0 (a sanitizer told not
 *             to halt)
 */
#include <mercury.h>
#include <mercury_macros.h>
#include <na_sim.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

MERCURY_GEN_PROC(sp_echo_t, ((hg_uint64_t) (value)))

struct sp_call {
    int done;
    hg_return_t ret;
    hg_uint64_t value;
};

static hg_context_t *sp_ctx[2];
static int sp_hold; /* the handler keeps the request and never answers */
static hg_handle_t sp_held = HG_HANDLE_NULL;

static hg_return_t
sp_echo_handler(hg_handle_t handle)
{
    sp_echo_t in;

    if (sp_hold) {
        sp_held = handle;
        return HG_SUCCESS;
    }
    if (HG_Get_input(handle, &in) != HG_SUCCESS) {
        HG_Destroy(handle);
        return HG_SUCCESS;
    }
    HG_Respond(handle, NULL, NULL, &in);
    HG_Free_input(handle, &in);
    HG_Destroy(handle);
    return HG_SUCCESS;
}

static hg_return_t
sp_forward_cb(const struct hg_cb_info *info)
{
    struct sp_call *call = info->arg;
    sp_echo_t out;

    call->done++;
    call->ret = info->ret;
    if (info->ret == HG_SUCCESS &&
        HG_Get_output(info->info.forward.handle, &out) == HG_SUCCESS) {
        call->value = out.value;
        HG_Free_output(info->info.forward.handle, &out);
    }
    return HG_SUCCESS;
}

static void
sp_progress(void)
{
    unsigned int n;

    for (int i = 0; i < 2; i++) {
        HG_Progress(sp_ctx[i], i == 0 ? 10 : 0);
        HG_Trigger(sp_ctx[i], 0, 64, &n);
    }
}

int
main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pass";
    uint64_t seed = na_sim_get_seed();
    hg_class_t *cls[2];
    hg_addr_t server;
    hg_id_t id;
    int calls = 10, rc = 0;

    if (strcmp(mode, "nondet") == 0)
        calls = 1 + (int) (getpid() % 7);
    if (strcmp(mode, "busy") == 0)
        calls = 200000;
    sp_hold = strcmp(mode, "hang") == 0 && seed == 3;
    cls[0] = HG_Init("tcp", HG_TRUE);
    cls[1] = HG_Init("tcp", HG_FALSE);
    if (cls[0] == NULL || cls[1] == NULL)
        return 2;
    for (int i = 0; i < 2; i++) {
        sp_ctx[i] = HG_Context_create(cls[i]);
        id = MERCURY_REGISTER(cls[i], "sp_echo", sp_echo_t, sp_echo_t,
                              i == 0 ? sp_echo_handler : NULL);
    }
    {
        char name[128];
        hg_size_t size = sizeof(name);
        hg_addr_t self;

        HG_Addr_self(cls[0], &self);
        HG_Addr_to_string(cls[0], name, &size, self);
        HG_Addr_free(cls[0], self);
        if (HG_Addr_lookup2(cls[1], name, &server) != HG_SUCCESS)
            return 2;
    }
    for (int i = 0; i < calls; i++) {
        struct sp_call call = {0};
        sp_echo_t in = {.value = seed * 1000 + (hg_uint64_t) i};
        hg_handle_t h;

        hg_return_t ret;

        HG_Create(sp_ctx[1], server, id, &h);
        if (sp_hold)
            ret = HG_Forward(h, sp_forward_cb, &call, &in); /* no deadline */
        else
            ret = HG_Forward_timed(h, sp_forward_cb, &call, &in, 50);
        /* A forward that could not be posted (NA_AGAIN under a fault)
         * never calls back. */
        if (ret != HG_SUCCESS)
            call = (struct sp_call){.done = 1, .ret = ret};
        while (call.done == 0)
            sp_progress();
        if (!(strcmp(mode, "leak") == 0 && seed % 5 == 4 && i == calls - 1))
            HG_Destroy(h);
        if (call.done != 1 ||
            (call.ret == HG_SUCCESS && call.value != in.value)) {
            fprintf(stderr, "echo %d: %d callbacks, value %llu\n", i, call.done,
                    (unsigned long long) call.value);
            rc = 1;
        }
    }
    HG_Addr_free(cls[1], server);
    for (int i = 0; i < 20; i++)
        sp_progress();
    for (int i = 0; i < 2; i++) {
        HG_Context_destroy(sp_ctx[i]);
        HG_Finalize(cls[i]);
    }
    if (strcmp(mode, "crash") == 0 && seed % 5 == 3) {
        fflush(NULL);
        signal(SIGABRT, SIG_DFL);
        raise(SIGABRT);
    }
    if (strcmp(mode, "sanreport") == 0 && seed % 5 == 1)
        fprintf(stderr,
                "==%d==ERROR: AddressSanitizer: heap-use-after-free "
                "(planted by sweep_prog)\n",
                (int) getpid());
    if (strcmp(mode, "fail") == 0 && seed % 5 == 2) {
        fprintf(stderr, "planted failure: seed %llu\n",
                (unsigned long long) seed);
        rc = 1;
    }
    return rc;
}
