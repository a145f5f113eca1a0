/*
 * Handler fuzzing (include/qs_fuzz.h): a fresh simulated world per input,
 * the service on one node and a client that sends the fuzzer's bytes as
 * serialized RPC inputs from another, then the checks at teardown.
 */
#include "fuzz/qs_fuzz_internal.h"

#include "mercury_proc_bulk.h"
#include "na_sim.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Progress rounds one input may take before it counts as a hang. */
#define QS_FUZZ_MAX_ROUNDS 200000
/* The deadline of qs_fuzz_rpc()'s single forward, in virtual ms. */
#define QS_FUZZ_RPC_TIMEOUT_MS 1000

void
qs_fuzz_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("qs_fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* The client's input proc: the bytes verbatim, with a real bulk
 * descriptor wherever the marker appears. It never decodes. */
static hg_return_t
qs_fuzz_proc_in(hg_proc_t proc, void *arg)
{
    struct qs_fuzz_bytes *b = arg;
    const uint8_t *p = b->data, *end;

    if (hg_proc_get_op(proc) != HG_ENCODE || b->size == 0)
        return HG_SUCCESS; /* no bytes: data may be null, no offset taken */
    end = p + b->size;
    while (p < end) {
        const uint8_t *m = memmem(p, (size_t) (end - p), QS_FUZZ_BULK_MARKER,
                                  QS_FUZZ_BULK_MARKER_LEN);
        size_t chunk = (size_t) ((m != NULL ? m : end) - p);
        hg_return_t ret;

        if (chunk > 0) {
            ret = hg_proc_memcpy(proc, (void *) (uintptr_t) p, chunk);
            if (ret != HG_SUCCESS)
                return ret;
        }
        if (m == NULL)
            break;
        ret = hg_proc_hg_bulk_t(proc, &b->bulk);
        if (ret != HG_SUCCESS)
            return ret;
        p = m + QS_FUZZ_BULK_MARKER_LEN;
    }
    return HG_SUCCESS;
}

/* The client's output proc: reads whatever the service answered. */
static hg_return_t
qs_fuzz_proc_out(hg_proc_t proc, void *arg)
{
    hg_size_t left;
    void *p;

    (void) arg;
    if (hg_proc_get_op(proc) != HG_DECODE)
        return HG_SUCCESS;
    left = hg_proc_get_size_left(proc);
    if (left == 0)
        return HG_SUCCESS;
    p = hg_proc_save_ptr(proc, left);
    if (p == NULL)
        return HG_OVERFLOW;
    return hg_proc_restore_ptr(proc, p, left);
}

static hg_return_t
qs_fuzz_forward_cb(const struct hg_cb_info *info)
{
    struct qs_fuzz_call *call = info->arg;
    char out;

    call->callbacks++;
    call->ret = info->ret;
    if (call->callbacks > 1)
        qs_fuzz_fail("a forward completed %d times", call->callbacks);
    call->done = true;
    if (info->ret == HG_SUCCESS &&
        HG_Get_output(info->info.forward.handle, &out) == HG_SUCCESS)
        HG_Free_output(info->info.forward.handle, &out);
    return HG_SUCCESS;
}

static void
qs_fuzz_register_client(struct qs_fuzz_env *env)
{
    const char *const *names = env->svc->rpc_names;

    if (names == NULL || names[0] == NULL)
        qs_fuzz_fail("the service names no RPC (rpc_names)");
    for (env->nids = 0; names[env->nids] != NULL; env->nids++) {
        if (env->nids == QS_FUZZ_MAX_RPCS)
            qs_fuzz_fail("more than %d RPC names", QS_FUZZ_MAX_RPCS);
        env->ids[env->nids] =
            HG_Register_name(env->cli_cls, names[env->nids], qs_fuzz_proc_in,
                             qs_fuzz_proc_out, NULL);
        if (env->ids[env->nids] == 0)
            qs_fuzz_fail("cannot register \"%s\" on the client",
                         names[env->nids]);
    }
}

void
qs_fuzz_relookup(struct qs_fuzz_env *env)
{
    const char *name = "sim://" QS_FUZZ_SERVER;
    hg_return_t ret;

    if (env->srv_addr != HG_ADDR_NULL)
        HG_Addr_free(env->cli_cls, env->srv_addr);
    env->srv_addr = HG_ADDR_NULL;
    ret = HG_Addr_lookup2(env->cli_cls, name, &env->srv_addr);
    if (ret != HG_SUCCESS)
        qs_fuzz_fail("lookup of %s: %s", name, HG_Error_to_string(ret));
}

/* Hostile inputs make the library log an error for nearly every input;
 * a fuzzing run keeps its terminal for findings. The user's own
 * HG_LOG_LEVEL and MARGO_LOG_LEVEL still win. */
static void
qs_fuzz_quiet_logs(void)
{
    if (getenv("HG_LOG_LEVEL") == NULL)
        HG_Set_log_level("fatal");
    if (getenv("MARGO_LOG_LEVEL") == NULL)
        margo_set_global_log_level(MARGO_LOG_CRITICAL);
}

void
qs_fuzz_setup(struct qs_fuzz_env *env, const struct qs_fuzz_service *svc,
              uint64_t seed)
{
    static pthread_once_t quiet = PTHREAD_ONCE_INIT;

    const char *srv = "sim://" QS_FUZZ_SERVER, *cli = "sim://" QS_FUZZ_CLIENT;
    hg_size_t size = QS_FUZZ_BULK_SIZE;
    void *ptr;

    pthread_once(&quiet, qs_fuzz_quiet_logs);
    memset(env, 0, sizeof(*env));
    env->svc = svc;
    if (svc == NULL ||
        (svc->hg_register == NULL) == (svc->margo_register == NULL))
        qs_fuzz_fail("set exactly one of hg_register and margo_register");
    if (na_sim_world_exists())
        qs_fuzz_fail("a simulated world outlived the previous input");
    if (na_sim_set_seed(seed) != NA_SUCCESS)
        qs_fuzz_fail("cannot set the seed");
    if (svc->hg_register != NULL) {
        env->srv_cls = HG_Init(srv, HG_TRUE);
        env->srv_ctx = env->srv_cls ? HG_Context_create(env->srv_cls) : NULL;
        if (env->srv_ctx == NULL)
            qs_fuzz_fail("cannot create the server (%s)", srv);
        if (svc->hg_register(env->srv_cls, env->srv_ctx, svc->arg) !=
            HG_SUCCESS)
            qs_fuzz_fail("the service's hg_register failed");
        env->cli_cls = HG_Init(cli, HG_FALSE);
        env->cli_ctx = env->cli_cls ? HG_Context_create(env->cli_cls) : NULL;
    } else {
        env->srv_mid = margo_init(srv, MARGO_SERVER_MODE, 0, 0);
        if (env->srv_mid == MARGO_INSTANCE_NULL)
            qs_fuzz_fail("cannot create the server (%s)", srv);
        if (svc->margo_register(env->srv_mid, svc->arg) != 0)
            qs_fuzz_fail("the service's margo_register failed");
        env->cli_mid = margo_init(cli, MARGO_CLIENT_MODE, 0, 0);
        if (env->cli_mid != MARGO_INSTANCE_NULL) {
            env->cli_cls = margo_get_class(env->cli_mid);
            env->cli_ctx = margo_get_context(env->cli_mid);
        }
    }
    if (env->cli_ctx == NULL)
        qs_fuzz_fail("cannot create the client (%s)", cli);
    qs_fuzz_register_client(env);
    qs_fuzz_relookup(env);
    env->region = malloc(QS_FUZZ_BULK_SIZE);
    if (env->region == NULL)
        qs_fuzz_fail("out of memory");
    for (size_t i = 0; i < QS_FUZZ_BULK_SIZE; i++)
        env->region[i] = (uint8_t) (i * 31 + 7);
    ptr = env->region;
    if (HG_Bulk_create(env->cli_cls, 1, &ptr, &size, HG_BULK_READWRITE,
                       &env->bulk) != HG_SUCCESS)
        qs_fuzz_fail("cannot expose the client region");
}

struct qs_fuzz_call *
qs_fuzz_forward(struct qs_fuzz_env *env, size_t rpc, const uint8_t *data,
                size_t size, unsigned int timeout_ms)
{
    struct qs_fuzz_call *call = &env->calls[env->ncalls++];
    struct qs_fuzz_bytes in = {.data = data, .size = size, .bulk = env->bulk};
    hg_return_t ret;

    *call = (struct qs_fuzz_call){.ret = HG_SUCCESS};
    if (env->cli_mid != MARGO_INSTANCE_NULL) {
        ret = margo_create(env->cli_mid, env->srv_addr, env->ids[rpc],
                           &call->handle);
        if (ret == HG_SUCCESS)
            ret = margo_iforward_timed(call->handle, &in, (double) timeout_ms,
                                       &call->req);
    } else {
        ret = HG_Create(env->cli_ctx, env->srv_addr, env->ids[rpc],
                        &call->handle);
        if (ret == HG_SUCCESS)
            ret = HG_Forward_timed(call->handle, qs_fuzz_forward_cb, call, &in,
                                   timeout_ms);
    }
    /* Refused at post (NA_AGAIN under a fault, input too large for the
     * overflow path...): no completion will come. */
    if (ret != HG_SUCCESS) {
        call->done = true;
        call->ret = ret;
        call->req = MARGO_REQUEST_NULL;
    }
    return call;
}

/* A Margo call: test it once (which drives both instances one round and
 * lets virtual time pass), collect it when done. */
static void
qs_fuzz_margo_poke(struct qs_fuzz_call *call)
{
    int flag = 0;
    char out;

    if (margo_test(call->req, &flag) != HG_SUCCESS)
        qs_fuzz_fail("margo_test failed");
    if (!flag)
        return;
    call->ret = margo_wait(call->req);
    call->req = MARGO_REQUEST_NULL;
    call->done = true;
    call->callbacks = 1;
    if (call->ret == HG_SUCCESS &&
        margo_get_output(call->handle, &out) == HG_SUCCESS)
        margo_free_output(call->handle, &out);
}

static bool
qs_fuzz_all_done(const struct qs_fuzz_env *env)
{
    for (size_t i = 0; i < env->ncalls; i++)
        if (!env->calls[i].done)
            return false;
    return true;
}

static void
qs_fuzz_round(struct qs_fuzz_env *env, unsigned int ms)
{
    unsigned int n;

    if (env->cli_mid != MARGO_INSTANCE_NULL) {
        for (size_t i = 0; i < env->ncalls; i++)
            if (!env->calls[i].done) {
                qs_fuzz_margo_poke(&env->calls[i]);
                return;
            }
        return;
    }
    HG_Progress(env->cli_ctx, ms);
    HG_Trigger(env->cli_ctx, 0, 64, &n);
    HG_Progress(env->srv_ctx, 0);
    HG_Trigger(env->srv_ctx, 0, 64, &n);
}

void
qs_fuzz_progress(struct qs_fuzz_env *env, unsigned int ms)
{
    uint64_t until = na_sim_clock_now() + (uint64_t) ms * 1000000;

    for (int i = 0; i < QS_FUZZ_MAX_ROUNDS; i++) {
        qs_fuzz_round(env, 1);
        if (na_sim_clock_now() >= until || qs_fuzz_all_done(env))
            return;
    }
    qs_fuzz_fail("no progress in %d rounds", QS_FUZZ_MAX_ROUNDS);
}

void
qs_fuzz_wait_all(struct qs_fuzz_env *env)
{
    for (int i = 0; i < QS_FUZZ_MAX_ROUNDS; i++) {
        if (qs_fuzz_all_done(env))
            return;
        qs_fuzz_round(env, 1);
    }
    qs_fuzz_fail("a forward never completed, past its deadline "
                 "(seed %llu)",
                 (unsigned long long) na_sim_get_seed());
}

/* Mercury: let the server finish what it sends (responses, transfers),
 * then both sides must shut down cleanly. */
static void
qs_fuzz_teardown_hg(struct qs_fuzz_env *env)
{
    hg_return_t ret = HG_SUCCESS;

    HG_Addr_free(env->cli_cls, env->srv_addr);
    ret = HG_Context_destroy(env->cli_ctx);
    if (ret == HG_SUCCESS)
        ret = HG_Finalize(env->cli_cls);
    if (ret != HG_SUCCESS)
        qs_fuzz_fail("the client could not finalize: %s",
                     HG_Error_to_string(ret));
    ret = HG_Context_destroy(env->srv_ctx);
    if (ret != HG_SUCCESS)
        qs_fuzz_fail("the service's context could not be destroyed (%s): a "
                     "handle never destroyed or a response never completed",
                     HG_Error_to_string(ret));
    ret = HG_Finalize(env->srv_cls);
    if (ret != HG_SUCCESS)
        qs_fuzz_fail("the service's class could not finalize (%s): a handle, "
                     "bulk handle or address was never freed",
                     HG_Error_to_string(ret));
}

void
qs_fuzz_teardown(struct qs_fuzz_env *env)
{
    unsigned int n;

    /* A Mercury handler may still be moving data or answering after the
     * client saw its response: let it finish while the client region is
     * still exposed. (Margo's finalize does the same for its handlers.) */
    for (int i = 0; env->cli_mid == MARGO_INSTANCE_NULL && i < 1000; i++) {
        HG_Progress(env->srv_ctx, 1);
        HG_Trigger(env->srv_ctx, 0, 64, &n);
        HG_Progress(env->cli_ctx, 0);
        HG_Trigger(env->cli_ctx, 0, 64, &n);
    }
    for (size_t i = 0; i < env->ncalls; i++) {
        struct qs_fuzz_call *call = &env->calls[i];

        if (call->callbacks > 1)
            qs_fuzz_fail("forward %zu completed %d times", i, call->callbacks);
        if (call->handle == HG_HANDLE_NULL)
            continue;
        if ((env->cli_mid != MARGO_INSTANCE_NULL
                 ? margo_destroy(call->handle)
                 : HG_Destroy(call->handle)) != HG_SUCCESS)
            qs_fuzz_fail("destroying forward %zu failed", i);
    }
    if (HG_Bulk_free(env->bulk) != HG_SUCCESS)
        qs_fuzz_fail("HG_Bulk_free of the client region failed");
    if (env->cli_mid != MARGO_INSTANCE_NULL) {
        margo_addr_free(env->cli_mid, env->srv_addr);
        margo_finalize(env->cli_mid);
        margo_finalize(env->srv_mid);
    } else
        qs_fuzz_teardown_hg(env);
    free(env->region);
    if (na_sim_world_exists())
        qs_fuzz_fail("the simulated world survived the teardown: the service "
                     "kept a class, context or operation");
    if (env->svc->reset != NULL)
        env->svc->reset(env->svc->arg);
}

int
qs_fuzz_rpc(const struct qs_fuzz_service *svc, const char *rpc_name,
            const uint8_t *data, size_t size)
{
    struct qs_fuzz_env *env = calloc(1, sizeof(*env));
    size_t rpc;

    if (env == NULL)
        qs_fuzz_fail("out of memory");
    if (rpc_name == NULL || (data == NULL && size > 0))
        qs_fuzz_fail("qs_fuzz_rpc: NULL argument");
    qs_fuzz_setup(env, svc, 1);
    for (rpc = 0; rpc < env->nids; rpc++)
        if (strcmp(svc->rpc_names[rpc], rpc_name) == 0)
            break;
    if (rpc == env->nids)
        qs_fuzz_fail("\"%s\" is not among rpc_names", rpc_name);
    qs_fuzz_forward(env, rpc, data, size, QS_FUZZ_RPC_TIMEOUT_MS);
    qs_fuzz_wait_all(env);
    qs_fuzz_teardown(env);
    free(env);
    return 0;
}
