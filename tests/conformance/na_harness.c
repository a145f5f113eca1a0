/*
 * The NA conformance harness; see na_harness.h.
 */
#include "conformance/na_harness.h"

#include "na_sim.h"
#ifdef NA_CT_AUTO_SM
#include "na/na_auto_sm.h"
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Real-time guard on the simulated fabric, where budgets are virtual: a
 * driver that spins without moving the virtual clock must still end. */
#define NA_CT_REAL_GUARD_NS (120ULL * 1000000000ULL)

static const char *na_argv0 = "test";
static unsigned na_serial;
/* A case ended early: its classes are abandoned, so the simulated world
 * outlives the case and cannot be checked for leftovers any more. */
static int na_abandoned;

struct na_env_box {
    struct na_env env;
    int finished;
};

static uint64_t
real_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static void
print_replay(FILE *f)
{
    if (ct_suite_is_sim(ct_suite_info()))
        fprintf(f, "replay: QS_SIM_SEED=%" PRIu64 " QS_TEST_INFO=%s %s\n",
                na_sim_get_seed(), ct_suite_info(), na_argv0);
    else
        fprintf(f, "replay: QS_TEST_INFO=%s %s\n", ct_suite_info(), na_argv0);
}

na_class_t *
na_env_class(const struct na_env *env, const char *role, bool listen,
             const struct na_init_info *init)
{
    char name[64];

    if (env->is_sim)
        snprintf(name, sizeof(name), "sim://%s-%u", role, ++na_serial);
    else
        snprintf(name, sizeof(name), "%s", env->info);
#ifdef NA_CT_AUTO_SM
    /* The auto_sm build of the suite: every class is a network class and
     * a shared-memory class as one, as HG makes for hg_init_info.auto_sm;
     * both classes of a case are on this node, so they meet over shared
     * memory. */
    return na_auto_sm_initialize(name, NULL, listen, init);
#endif
    /* QS_TEST_NO_MULTI_RECV runs the suite with na_init_info's
     * no_multi_recv set (unexpected receives without multi-receive
     * buffers, on plugins that have them), QS_TEST_MULTI_RECV_OP_MAX with
     * that many multi-receive buffers. */
    if (getenv("QS_TEST_NO_MULTI_RECV") != NULL ||
        getenv("QS_TEST_MULTI_RECV_OP_MAX") != NULL) {
        struct na_init_info opt = NA_INIT_INFO_INITIALIZER;
        const char *op_max = getenv("QS_TEST_MULTI_RECV_OP_MAX");

        if (init != NULL)
            opt = *init;
        opt.no_multi_recv = getenv("QS_TEST_NO_MULTI_RECV") != NULL;
        if (op_max != NULL)
            opt.multi_recv_op_max = (unsigned int) strtoul(op_max, NULL, 0);
        return NA_Initialize_opt(name, listen, &opt);
    }
    return init != NULL ? NA_Initialize_opt(name, listen, init)
                        : NA_Initialize(name, listen);
}

void
na_env_add_context(struct na_env *env, na_class_t *cls, na_context_t *ctx)
{
    assert_true(env->nctx < NA_CT_MAX_CONTEXTS);
    env->cls[env->nctx] = cls;
    env->ctx[env->nctx++] = ctx;
}

void
na_env_remove_context(struct na_env *env, na_context_t *ctx)
{
    for (unsigned i = 0; i < env->nctx; i++)
        if (env->ctx[i] == ctx) {
            env->cls[i] = env->cls[env->nctx - 1];
            env->ctx[i] = env->ctx[env->nctx - 1];
            env->nctx--;
            return;
        }
}

/* One round over every context. On the simulated fabric each wait moves
 * the virtual clock to the next event (at most `wait_ms`); on real fabrics
 * rounds poll without waiting while work flows. */
static unsigned
drive_round(struct na_env *env, unsigned wait_ms)
{
    unsigned ran = 0;

    for (unsigned i = 0; i < env->nctx; i++) {
        unsigned n = 0;

        if (wait_ms > 0)
            (void) NA_Poll_wait(env->cls[i], env->ctx[i], wait_ms, &n);
        else
            (void) NA_Poll(env->cls[i], env->ctx[i], &n);
        (void) NA_Trigger(env->ctx[i], 4096, &n);
        ran += n;
    }
    return ran;
}

/* Drive until *calls >= want (calls NULL: until ms pass). */
static int
drive_until(struct na_env *env, const int *calls, int want, unsigned max_ms)
{
    const uint64_t start = NA_Clock_now(env->cli), real_start = real_now_ns();
    const uint64_t budget = (uint64_t) max_ms * 1000000ULL;
    unsigned idle = 0;

    for (;;) {
        uint64_t now = NA_Clock_now(env->cli);

        if (calls != NULL && *calls >= want)
            return 0;
        if (now - start >= budget)
            return calls == NULL ? 0 : -1;
        if (env->is_sim && real_now_ns() - real_start > NA_CT_REAL_GUARD_NS)
            return -1;
        if (drive_round(env, env->is_sim || idle > 64 ? 1 : 0) == 0)
            idle++;
        else
            idle = 0;
    }
}

void
na_drive(struct na_env *env, const int *calls, int want)
{
    if (drive_until(env, calls, want, NA_CT_WAIT_MS) != 0) {
        print_replay(stderr);
        fail_msg("na_drive: nothing completed the wait within %u ms on the "
                 "%s clock (have %d, want %d)",
                 NA_CT_WAIT_MS, env->is_sim ? "virtual" : "NA", *calls, want);
    }
}

int
na_try_drive(struct na_env *env, const int *calls, int want, unsigned max_ms)
{
    return drive_until(env, calls, want, max_ms);
}

void
na_settle(struct na_env *env, unsigned ms)
{
    (void) drive_until(env, NULL, 0, ms);
}

void
na_env_gone_address(const struct na_env *env, char *buf, size_t size)
{
    na_class_t *gone = na_env_class(env, "gone", true, NULL);
    na_context_t *ctx;
    na_addr_t self;

    assert_non_null(gone);
    ctx = NA_Context_create(gone);
    assert_non_null(ctx);
    assert_na_ok(NA_Addr_self(gone, &self));
    assert_na_ok(NA_Addr_to_string(gone, buf, &size, self));
    NA_Addr_free(gone, self);
    assert_na_ok(NA_Context_destroy(gone, ctx));
    assert_na_ok(NA_Finalize(gone));
}

na_mem_handle_t
na_registered(na_class_t *cls, void *buf, size_t len, unsigned long flags)
{
    na_mem_handle_t h;

    assert_na_ok(NA_Mem_handle_create(cls, buf, len, flags, &h));
    assert_na_ok(NA_Mem_register(cls, h, NA_MEM_TYPE_HOST, 0));
    return h;
}

na_mem_handle_t
na_ship_handle(na_class_t *owner, na_mem_handle_t h, na_class_t *to)
{
    size_t size = NA_Mem_handle_get_serialize_size(owner, h);
    unsigned char *buf = malloc(size);
    na_mem_handle_t remote;

    assert_true(size > 0);
    assert_non_null(buf);
    assert_na_ret(NA_Mem_handle_serialize(owner, buf, size - 1, h),
                  NA_OVERFLOW);
    assert_na_ok(NA_Mem_handle_serialize(owner, buf, size, h));
    assert_na_ok(NA_Mem_handle_deserialize(to, &remote, buf, size));
    free(buf);
    return remote;
}

/* The server learns the client as the source of a first message. */
static void
hello(struct na_env *env)
{
    struct na_result s = {0}, r = {0};
    char buf[16] = {0};
    na_op_id_t *send = NA_Op_create(env->cli, 0);
    na_op_id_t *recv = NA_Op_create(env->srv, 0);

    assert_non_null(send);
    assert_non_null(recv);
    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &r,
                                        buf, sizeof(buf), NULL, recv));
    assert_na_ok(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &s,
                                        "hello", 6, NULL, env->srv_addr, 0, 0,
                                        send));
    na_drive(env, &r.calls, 1);
    na_drive(env, &s.calls, 1);
    assert_na_ok(r.ret);
    assert_na_ok(s.ret);
    assert_string_equal(buf, "hello");
    env->cli_addr = r.source;
    assert_na_ok(NA_Op_destroy(env->cli, send));
    assert_na_ok(NA_Op_destroy(env->srv, recv));
}

int
na_env_setup(void **state)
{
    struct na_env_box *box = calloc(1, sizeof(*box));
    struct na_env *env = &box->env;
    char name[256];
    size_t size = sizeof(name);
    na_addr_t self;

    assert_non_null(box);
    *state = env;
    env->info = ct_suite_info();
    env->is_sim = ct_suite_is_sim(env->info);
    if (env->is_sim) {
        na_sim_clear_seed();
        if (na_sim_world_exists() && !na_abandoned)
            fail_msg("an earlier case left its simulated world behind");
    }
    env->srv = na_env_class(env, "server", true, NULL);
    if (env->srv == NULL) {
        print_replay(stderr);
        fail_msg("NA_Initialize(\"%s\", listen) failed", env->info);
    }
    env->cli = na_env_class(env, "client", false, NULL);
    assert_non_null(env->cli);
    env->sctx = NA_Context_create_id(env->srv, 0);
    env->sctx1 = NA_Context_create_id(env->srv, 1);
    env->cctx = NA_Context_create(env->cli);
    assert_non_null(env->sctx);
    assert_non_null(env->sctx1);
    assert_non_null(env->cctx);
    na_env_add_context(env, env->srv, env->sctx);
    na_env_add_context(env, env->srv, env->sctx1);
    na_env_add_context(env, env->cli, env->cctx);
    assert_na_ok(NA_Addr_self(env->srv, &self));
    assert_na_ok(NA_Addr_to_string(env->srv, name, &size, self));
    NA_Addr_free(env->srv, self);
    assert_na_ok(NA_Addr_lookup(env->cli, name, &env->srv_addr));
    hello(env);
    return 0;
}

void
na_env_finish(struct na_env *env)
{
    struct na_env_box *box = (struct na_env_box *) env;

    NA_Addr_free(env->cli, env->srv_addr);
    NA_Addr_free(env->srv, env->cli_addr);
    /* A send whose completion is queued but whose bytes are still leaving
     * keeps a context busy for a moment on real fabrics. */
    na_settle(env, env->is_sim ? 1 : 5);
    assert_na_ok(NA_Context_destroy(env->cli, env->cctx));
    assert_na_ok(NA_Context_destroy(env->srv, env->sctx1));
    assert_na_ok(NA_Context_destroy(env->srv, env->sctx));
    assert_na_ok(NA_Finalize(env->cli));
    assert_na_ok(NA_Finalize(env->srv));
    if (env->is_sim && !na_abandoned && na_sim_world_exists())
        fail_msg("the simulated world outlived its classes");
    box->finished = 1;
}

int
na_env_teardown(void **state)
{
    struct na_env_box *box = *state;

    if (box == NULL)
        return 0;
    if (!box->finished) {
        /* Operations of the case may still point into its stack frame:
         * its classes are never progressed again. */
        fprintf(stderr, "note: case ended early; its NA classes are "
                        "abandoned without the leak check\n");
        print_replay(stderr);
        na_abandoned = 1;
    } else {
        free(box);
    }
    *state = NULL;
    return 0;
}

int
na_main(int argc, char **argv, const char *group,
        const struct CMUnitTest *tests, size_t count)
{
    int failed;

    (void) argc;
    na_argv0 = argv[0];
    fprintf(stderr, "NA conformance group %s: info %s, one process", group,
            ct_suite_info());
    if (ct_suite_is_sim(ct_suite_info()))
        fprintf(stderr, ", QS_SIM_SEED=%" PRIu64, na_sim_get_seed());
    fprintf(stderr, "\n");
    failed = ct_suite_run_group(group, tests, count);
    if (failed != 0) {
        fprintf(stderr, "%d NA conformance case(s) failed in group %s\n",
                failed, group);
        print_replay(stderr);
        if (getenv("QS_TEST_FILTER") == NULL)
            fprintf(stderr, "(add QS_TEST_FILTER=<case name> to run one "
                            "case)\n");
    }
    return failed != 0;
}
