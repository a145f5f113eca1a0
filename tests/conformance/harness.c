/*
 * The conformance harness; see harness.h for what it offers and why.
 */
#include "conformance/harness.h"
#include "conformance/suite.h"
#include "conformance/server.h"

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#if defined(__has_include)
#if __has_include("na_sim.h")
#include "na_sim.h"
#define CT_HAVE_NA_SIM 1
#endif
#endif

/* Real-time guard for the simulated fabric, where the budget of a wait is
 * virtual time: a driver that spins without moving the virtual clock must
 * still end. */
#define CT_REAL_GUARD_NS (120ULL * 1000000000ULL)

/* What the replay line repeats. */
static const char *ct_argv0 = "test";
static const char *ct_group = "";

/* Every class this process creates gets a distinct name on the simulated
 * fabric. */
static unsigned ct_serial;

static const char *
ct_info(void)
{
    return ct_suite_info();
}

static int
info_is_sim(const char *info)
{
    return ct_suite_is_sim(info);
}

uint64_t
harness_sim_seed(void)
{
#ifdef CT_HAVE_NA_SIM
    return na_sim_get_seed();
#else
    const char *s = getenv("QS_SIM_SEED");

    return s != NULL ? strtoull(s, NULL, 0) : 0;
#endif
}

static uint64_t
real_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/*
 * The longest real-time pause between two progress rounds since the last
 * reset: a process that the machine did not run for a while (a loaded
 * machine, a stopped process) shows it here. A peer's liveness probes go
 * unanswered during such a pause (docs/architecture.md, "Liveness"), so
 * a failure report prints it.
 */
static uint64_t ct_last_round_ns, ct_max_pause_ns;

/* The serving loop reports a pause this long at once: the default liveness
 * probe interval. */
#define CT_PAUSE_REPORT_NS 1000000000ULL

static void
note_round(void)
{
    uint64_t now = real_now_ns();

    if (ct_last_round_ns != 0 && now - ct_last_round_ns > ct_max_pause_ns)
        ct_max_pause_ns = now - ct_last_round_ns;
    ct_last_round_ns = now;
}

static void
reset_pauses(void)
{
    ct_last_round_ns = 0;
    ct_max_pause_ns = 0;
}

/* The load average, for a report: "1-min 5-min 15-min" or "unknown". */
static void
load_average(char *buf, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");

    snprintf(buf, size, "unknown");
    if (f != NULL) {
        if (fgets(buf, (int) size, f) != NULL) {
            char *p = buf;

            for (int fields = 0; *p != '\0'; p++)
                if (*p == ' ' && ++fields == 3)
                    break;
            *p = '\0';
        }
        fclose(f);
    }
}

static void
print_replay(FILE *f)
{
    if (info_is_sim(ct_info()))
        fprintf(f, "replay: QS_SIM_SEED=%" PRIu64 " QS_TEST_INFO=%s %s\n",
                harness_sim_seed(), ct_info(), ct_argv0);
    else
        fprintf(f, "replay: QS_TEST_INFO=%s %s\n", ct_info(), ct_argv0);
}

void
harness_class_name(const struct ct_env *env, const char *role, char *buf,
                   size_t size)
{
    if (env->is_sim)
        snprintf(buf, size, "sim://%s-%u", role, ++ct_serial);
    else
        snprintf(buf, size, "%s", env->info);
}

void
harness_unreachable_name(const struct ct_env *env, char *buf, size_t size)
{
    const char *sep;

    if (env->is_sim) {
        harness_class_name(env, "nobody", buf, size);
        return;
    }
    sep = strstr(env->info, "://");
    /* ofi+shm names are fi_shm://<pid>:<d>:<e>: a pid no process has. */
    snprintf(buf, size, "%.*s://%s",
             (int) (sep != NULL ? sep - env->info : (long) strlen(env->info)),
             env->info,
             strstr(env->info, "ofi+shm") == env->info ? "2147483647:0:0"
                                                       : "127.0.0.1:1");
}

uint64_t
harness_now_ns(const struct ct_env *env)
{
    return HG_Clock_now(env->client);
}

void
harness_add_context(struct ct_env *env, hg_context_t *ctx)
{
    assert_true(env->nctx < CT_MAX_CONTEXTS);
    env->ctx[env->nctx++] = ctx;
}

void
harness_remove_context(struct ct_env *env, hg_context_t *ctx)
{
    unsigned i;

    for (i = 0; i < env->nctx; i++)
        if (env->ctx[i] == ctx) {
            env->ctx[i] = env->ctx[--env->nctx];
            return;
        }
}

/*
 * One round over every context: progress, then run what completed. Waiting
 * is allowed only in progress and only when asked (`wait_ms`), so a round
 * never sleeps on real time unless the whole env was idle.
 */
static int
drive_round(struct ct_env *env, unsigned wait_ms, unsigned *ran, char *err,
            size_t err_size)
{
    unsigned i;

    *ran = 0;
    note_round();
    for (i = 0; i < env->nctx; i++) {
        unsigned n = 0;
        hg_return_t ret;

        ret = HG_Progress(env->ctx[i], wait_ms);
        if (ret != HG_SUCCESS && ret != HG_TIMEOUT) {
            snprintf(err, err_size, "HG_Progress(context %u) returned %s", i,
                     HG_Error_to_string(ret));
            return -1;
        }
        ret = HG_Trigger(env->ctx[i], 0, 4096, &n);
        if (ret != HG_SUCCESS && ret != HG_TIMEOUT) {
            snprintf(err, err_size, "HG_Trigger(context %u) returned %s", i,
                     HG_Error_to_string(ret));
            return -1;
        }
        *ran += n;
    }
    return 0;
}

/*
 * Drive until *counter >= target or the budget runs out. On the simulated
 * fabric each progress call may wait a little virtual time, which is what
 * lets the clock jump to the next event. On real fabrics rounds poll
 * without waiting while work flows, and wait briefly on one context only
 * after many idle rounds, so an in-process pair does not lose a round trip
 * to a sleeping progress call.
 * Returns 0, -1 on a progress error, -2 when the budget ran out.
 */
static int
drive_until(struct ct_env *env, const int *counter, int target, unsigned max_ms,
            uint64_t *waited_ns, char *err, size_t err_size)
{
    const uint64_t start = harness_now_ns(env), real_start = real_now_ns();
    const uint64_t budget = (uint64_t) max_ms * 1000000ULL;
    unsigned idle = 0;

    for (;;) {
        unsigned ran = 0, wait_ms;
        uint64_t now;

        if (counter != NULL && *counter >= target)
            break;
        now = harness_now_ns(env);
        if (counter == NULL && now - start >= budget)
            break;
        if (now - start > budget) {
            snprintf(err, err_size,
                     "nothing completed the wait within %u ms on the %s clock "
                     "(counter %d, wanted %d)",
                     max_ms, env->is_sim ? "virtual" : "NA",
                     counter ? *counter : 0, target);
            *waited_ns = now - start;
            return -2;
        }
        if (env->is_sim && real_now_ns() - real_start > CT_REAL_GUARD_NS) {
            snprintf(err, err_size,
                     "the virtual clock advanced only %" PRIu64
                     " ns in 120 s of real time (counter %d, wanted %d)",
                     now - start, counter ? *counter : 0, target);
            *waited_ns = now - start;
            return -2;
        }
        if (env->is_sim)
            wait_ms = 1;
        else
            wait_ms = idle > 64 ? 1 : 0;
        if (drive_round(env, wait_ms, &ran, err, err_size) != 0)
            return -1;
        idle = ran == 0 ? idle + 1 : 0;
    }
    *waited_ns = harness_now_ns(env) - start;
    return 0;
}

uint64_t
harness_run_until_count(struct ct_env *env, const int *counter, int target,
                        unsigned max_ms)
{
    char err[256];
    uint64_t waited = 0;

    if (drive_until(env, counter, target, max_ms, &waited, err, sizeof(err)) !=
        0) {
        print_replay(stderr);
        fail_msg("harness_run_until: %s", err);
    }
    return waited / 1000000ULL;
}

int
harness_try_run_until_count(struct ct_env *env, const int *counter, int target,
                            unsigned max_ms)
{
    char err[256];
    uint64_t waited = 0;
    int rc =
        drive_until(env, counter, target, max_ms, &waited, err, sizeof(err));

    if (rc == -1)
        fail_msg("harness_run_until: %s", err);
    return rc == 0 ? 0 : -1;
}

uint64_t
harness_run_until(struct ct_env *env, const int *flag, unsigned max_ms)
{
    return harness_run_until_count(env, flag, 1, max_ms);
}

void
harness_settle(struct ct_env *env, unsigned ms)
{
    char err[256];
    uint64_t waited;

    if (drive_until(env, NULL, 0, ms, &waited, err, sizeof(err)) != 0)
        fail_msg("harness_settle: %s", err);
}

/* ---- classes ------------------------------------------------------------ */

/* QS_TEST_AUTO_SM=1 runs the suite with hg_init_info.auto_sm set. */
static hg_class_t *
init_class(const char *name, hg_bool_t listen, const struct hg_init_info *ii,
           char *err, size_t err_size)
{
    struct hg_init_info local = ii ? *ii : HG_INIT_INFO_INITIALIZER;
    const char *auto_sm = getenv("QS_TEST_AUTO_SM");
    hg_class_t *cls;

    if (auto_sm != NULL && auto_sm[0] != '\0' && strcmp(auto_sm, "0") != 0)
        local.auto_sm = HG_TRUE;
    cls = HG_Init_opt2(name, listen, HG_VERSION(2, 4), &local);

    if (cls == NULL)
        snprintf(err, err_size, "HG_Init_opt2(\"%s\", listen=%d) failed", name,
                 (int) listen);
    return cls;
}

/* The server's address as a string, looked up by the client: every test
 * starts with an HG_Addr_to_string / HG_Addr_lookup round trip. */
static int
lookup_server(struct ct_env *env, const char *remote_addr, char *err,
              size_t err_size)
{
    char buf[256];
    hg_size_t size = sizeof(buf);
    hg_addr_t self = HG_ADDR_NULL;
    hg_return_t ret;

    if (remote_addr == NULL) {
        ret = HG_Addr_self(env->server, &self);
        if (ret == HG_SUCCESS)
            ret = HG_Addr_to_string(env->server, buf, &size, self);
        if (self != HG_ADDR_NULL)
            HG_Addr_free(env->server, self);
        if (ret != HG_SUCCESS) {
            snprintf(err, err_size, "server address to string: %s",
                     HG_Error_to_string(ret));
            return -1;
        }
        remote_addr = buf;
    }
    ret = HG_Addr_lookup(env->client, remote_addr, &env->server_addr);
    if (ret != HG_SUCCESS) {
        snprintf(err, err_size, "HG_Addr_lookup(\"%.200s\"): %s", remote_addr,
                 HG_Error_to_string(ret));
        return -1;
    }
    return 0;
}

/* Build an env. `serve_ids` receives the server class's ids (in-process
 * only). Returns 0 or -1 with a message; on failure what was built stays
 * in env for env_destroy(). */
static int
env_create(struct ct_env *env, const struct ct_opts *opts, char *err,
           size_t err_size)
{
    struct hg_init_info ii;
    struct ct_ids server_ids;
    const char *remote_addr = getenv("QS_TEST_SERVER_ADDR");
    char name[128];

    memset(env, 0, sizeof(*env));
    env->info = ct_info();
    env->is_sim = info_is_sim(env->info);
#ifdef CT_HAVE_NA_SIM
    /* A test that starts a new world (the previous one ended with its
     * classes) gets the same names as every other such test, so its event
     * trace depends on nothing but the seed and what the test does. */
    env->fresh_world = env->is_sim && !na_sim_world_exists();
    if (env->fresh_world)
        ct_serial = 0;
    else if (env->is_sim)
        /* A world left over from a case that ended early may carry that
         * case's backlog setting: start from the default again. */
        (void) na_sim_set_unexpected_backlog(256, NA_SIM_BACKLOG_BLOCK);
#endif
    if (remote_addr != NULL && remote_addr[0] == '\0')
        remote_addr = NULL;
    if (opts != NULL && opts->local_server)
        remote_addr = NULL;
    env->remote = remote_addr != NULL;

    if (!env->remote) {
        ii = opts != NULL && opts->has_server_init ? opts->server_init
                                                   : HG_INIT_INFO_INITIALIZER;
        if (ii.na_init_info.max_contexts < 2)
            ii.na_init_info.max_contexts = 2;
        harness_class_name(env, "server", name, sizeof(name));
        env->server = init_class(name, HG_TRUE, &ii, err, err_size);
        if (env->server == NULL)
            return -1;
        env->server_ctx[0] = HG_Context_create_id(env->server, 0);
        env->server_ctx[1] = HG_Context_create_id(env->server, 1);
        if (env->server_ctx[0] == NULL || env->server_ctx[1] == NULL) {
            snprintf(err, err_size, "HG_Context_create_id(server, 0 and 1)");
            return -1;
        }
        env->ctx[env->nctx++] = env->server_ctx[0];
        env->ctx[env->nctx++] = env->server_ctx[1];
        ct_register_rpcs(env->server, 1, &server_ids);
    }

    ii = opts != NULL && opts->has_client_init ? opts->client_init
                                               : HG_INIT_INFO_INITIALIZER;
    harness_class_name(env, "client", name, sizeof(name));
    env->client = init_class(name, HG_FALSE, &ii, err, err_size);
    if (env->client == NULL)
        return -1;
    env->client_ctx = HG_Context_create(env->client);
    if (env->client_ctx == NULL) {
        snprintf(err, err_size, "HG_Context_create(client)");
        return -1;
    }
    env->ctx[env->nctx++] = env->client_ctx;
    ct_register_rpcs(env->client, 0, &env->ids);
    return lookup_server(env, remote_addr, err, err_size);
}

/*
 * Destroy a context, driving the others while it reports HG_BUSY: a
 * response that is still leaving the server is not a leak, a handle nobody
 * destroyed is, and stays busy until the budget runs out.
 */
static int
destroy_context(struct ct_env *env, hg_context_t *ctx, const char *what,
                char *err, size_t err_size)
{
    const uint64_t start = harness_now_ns(env), real_start = real_now_ns();
    hg_return_t ret;

    for (;;) {
        unsigned ran;

        ret = HG_Context_destroy(ctx);
        if (ret == HG_SUCCESS) {
            harness_remove_context(env, ctx);
            return 0;
        }
        if (ret != HG_BUSY) {
            snprintf(err, err_size, "HG_Context_destroy(%s): %s", what,
                     HG_Error_to_string(ret));
            return -1;
        }
        if (harness_now_ns(env) - start > 2000ULL * 1000000ULL ||
            real_now_ns() - real_start > CT_REAL_GUARD_NS) {
            snprintf(err, err_size,
                     "leak: HG_Context_destroy(%s) still returns HG_BUSY: a "
                     "handle, bulk operation or completion created on it was "
                     "never released",
                     what);
            return -1;
        }
        if (drive_round(env, env->is_sim ? 1 : 0, &ran, err, err_size) != 0)
            return -1;
    }
}

/*
 * Drive until every respond the server class posted has run its callback.
 * A respond whose reply the peer already holds can still wait for its
 * send completion: on ofi+sockets that comes from the provider's progress
 * thread, which a loaded machine may not run for seconds, so the leak
 * check below must not start the clock on it. Each respond completes
 * (success, or an error once liveness gives up on its peer), so this wait
 * ends without a deadline of its own; CT_WAIT_MS only guards against a bug.
 */
static int
settle_responds(struct ct_env *env, char *err, size_t err_size)
{
    const int *done;
    int posted = 0;
    uint64_t waited;

    if (env->server == NULL)
        return 0;
    done = ct_server_responds(env->server, &posted);
    if (done == NULL || *done >= posted)
        return 0;
    if (drive_until(env, done, posted, CT_WAIT_MS, &waited, err, err_size) !=
        0) {
        size_t len = strlen(err);

        snprintf(err + len, err_size - len, " (server responds: %d of %d done)",
                 *done, posted);
        return -1;
    }
    return 0;
}

/* One call of the server's stats RPC, without asserting (env_destroy
 * reports through err). -1 on any failure, with err set. */
static int
stats_call(struct ct_env *env, ct_stats_out_t *stats, char *err,
           size_t err_size)
{
    struct ct_op op = {0};
    ct_stats_out_t out;
    uint64_t waited;
    hg_handle_t h;
    hg_return_t ret;

    op.out = &out;
    op.env = env;
    op.out_ret = HG_OTHER_ERROR;
    ret = HG_Create(env->client_ctx, env->server_addr, env->ids.stats, &h);
    if (ret == HG_SUCCESS) {
        ret = HG_Forward(h, ct_op_cb, &op, NULL);
        if (ret == HG_SUCCESS) {
            /* A forward that never completes leaves the env abandoned,
             * with its handle: its callback points into this frame. */
            if (drive_until(env, &op.calls, 1, CT_WAIT_MS, &waited, err,
                            err_size) != 0)
                return -1;
            ret = op.ret != HG_SUCCESS ? op.ret : op.out_ret;
            if (ret == HG_SUCCESS) {
                *stats = out; /* scalars only */
                ret = HG_Free_output(h, &out);
            }
        }
        (void) HG_Destroy(h);
    }
    if (ret != HG_SUCCESS) {
        snprintf(err, err_size, "the stats call to the server: %s",
                 HG_Error_to_string(ret));
        return -1;
    }
    return 0;
}

/*
 * Two processes: ask the server, before this class goes, until every
 * respond it counts has run its callback (rpc_server.c, stats_handler:
 * the stats call's own reply is not counted). A client that leaves the
 * moment it holds its last reply can otherwise fail that reply's send on
 * the server, on a fabric whose send completes on the peer's
 * acknowledgement (verbs: the peer's device posts the receive before it
 * sends the acknowledgement). As in settle_responds(), each respond
 * completes, so CT_WAIT_MS only guards against a bug.
 */
static int
settle_remote_responds(struct ct_env *env, char *err, size_t err_size)
{
    const uint64_t start = harness_now_ns(env);
    ct_stats_out_t st;
    unsigned ran;

    if (!env->remote || env->server_addr == HG_ADDR_NULL ||
        env->client_ctx == NULL)
        return 0;
    for (;;) {
        if (stats_call(env, &st, err, err_size) != 0)
            return -1;
        if (st.responds_pending == 0)
            return 0;
        if (harness_now_ns(env) - start > (uint64_t) CT_WAIT_MS * 1000000ULL) {
            snprintf(err, err_size,
                     "the server still has %u respond(s) without a callback "
                     "after %u ms",
                     st.responds_pending, CT_WAIT_MS);
            return -1;
        }
        if (drive_round(env, 1, &ran, err, err_size) != 0)
            return -1;
    }
}

/* Leak check: everything the env created must go, each step returning
 * HG_SUCCESS. */
static int
env_destroy(struct ct_env *env, char *err, size_t err_size)
{
    hg_return_t ret;

    if (settle_responds(env, err, err_size) != 0)
        return -1;
    if (settle_remote_responds(env, err, err_size) != 0)
        return -1;
    if (env->server != NULL && ct_server_problems(env->server, err, err_size))
        return -1;
    if (env->server_addr != HG_ADDR_NULL) {
        ret = HG_Addr_free(env->client, env->server_addr);
        env->server_addr = HG_ADDR_NULL;
        if (ret != HG_SUCCESS) {
            snprintf(err, err_size, "HG_Addr_free(server address): %s",
                     HG_Error_to_string(ret));
            return -1;
        }
    }
    /* Let what is already due finish first (a response's send completion
     * that releases the server's handle, say): HG_Context_destroy is then
     * called on quiet contexts, and its HG_BUSY (logged as an error) is
     * left for real leaks. */
    for (int quiet = 0, round = 0; quiet < 2 && round < 64; round++) {
        unsigned ran;

        if (drive_round(env, 0, &ran, err, err_size) != 0)
            return -1;
        quiet = ran == 0 ? quiet + 1 : 0;
    }
    if (env->client_ctx != NULL &&
        destroy_context(env, env->client_ctx, "client", err, err_size) != 0)
        return -1;
    env->client_ctx = NULL;
    if (env->server_ctx[1] != NULL &&
        destroy_context(env, env->server_ctx[1], "server id 1", err,
                        err_size) != 0)
        return -1;
    env->server_ctx[1] = NULL;
    if (env->server_ctx[0] != NULL &&
        destroy_context(env, env->server_ctx[0], "server id 0", err,
                        err_size) != 0)
        return -1;
    env->server_ctx[0] = NULL;
    if (env->nctx != 0) {
        snprintf(err, err_size,
                 "%u context(s) added by the test are still alive", env->nctx);
        return -1;
    }
    if (env->client != NULL) {
        ret = HG_Finalize(env->client);
        if (ret != HG_SUCCESS) {
            snprintf(err, err_size, "leak: HG_Finalize(client): %s",
                     HG_Error_to_string(ret));
            return -1;
        }
        env->client = NULL;
    }
    if (env->server != NULL) {
        ret = HG_Finalize(env->server);
        if (ret != HG_SUCCESS) {
            snprintf(err, err_size, "leak: HG_Finalize(server): %s",
                     HG_Error_to_string(ret));
            return -1;
        }
        env->server = NULL;
    }
    return 0;
}

/* The env of the running test, so teardown knows whether it finished. */
struct ct_env_box {
    struct ct_env env;
    int finished;
    uint64_t real_start_ns; /* when setup began, on the real clock */
    struct ct_env_box *next_abandoned;
};

/* Envs of tests that ended early stay reachable from here, so a leak
 * checker reports the failure that matters, not its consequence. */
static struct ct_env_box *ct_abandoned;

int
harness_setup(void **state)
{
    const struct ct_opts *opts = (const struct ct_opts *) *state;
    struct ct_env_box *box = (struct ct_env_box *) calloc(1, sizeof(*box));
    char err[256];

    assert_non_null(box);
    box->real_start_ns = real_now_ns();
    reset_pauses();
    if (env_create(&box->env, opts, err, sizeof(err)) != 0) {
        print_replay(stderr);
        fail_msg("harness setup (info \"%s\"): %s", ct_info(), err);
    }
    *state = &box->env;
    return 0;
}

void
harness_finish(struct ct_env *env)
{
    struct ct_env_box *box = (struct ct_env_box *) env;
    char err[256];

    if (env_destroy(env, err, sizeof(err)) != 0) {
        print_replay(stderr);
        fail_msg("%s", err);
    }
    box->finished = 1;
}

int
harness_teardown(void **state)
{
    struct ct_env_box *box = (struct ct_env_box *) *state;

    if (box == NULL)
        return 0;
    /* A test that failed or skipped part way may have left operations in
     * flight whose callbacks point into its stack frame, which no longer
     * exists: its env is abandoned, never progressed again. */
    if (!box->finished) {
        char load[64];

        load_average(load, sizeof(load));
        fprintf(stderr,
                "note: test ended early after %.3f s of real time (longest "
                "pause between progress rounds %.3f s, load average %s); "
                "its HG classes are abandoned without the leak check\n",
                (double) (real_now_ns() - box->real_start_ns) / 1e9,
                (double) ct_max_pause_ns / 1e9, load);
        box->next_abandoned = ct_abandoned;
        ct_abandoned = box;
    } else {
        free(box);
    }
    *state = NULL;
    return 0;
}

int
harness_sim_trace(const struct ct_env *env, uint64_t *hash, uint64_t *count)
{
#ifdef CT_HAVE_NA_SIM
    if (env->is_sim) {
        *hash = na_sim_trace_hash();
        *count = na_sim_trace_count();
        return 0;
    }
#endif
    (void) env;
    (void) hash;
    (void) count;
    return -1;
}

int
harness_sim_backlog(struct ct_env *env, size_t limit, int fail_when_full)
{
#ifdef CT_HAVE_NA_SIM
    if (env->is_sim)
        return na_sim_set_unexpected_backlog(
                   limit, fail_when_full ? NA_SIM_BACKLOG_FAIL
                                         : NA_SIM_BACKLOG_BLOCK) == NA_SUCCESS
                   ? 0
                   : -1;
#endif
    (void) env;
    (void) limit;
    (void) fail_when_full;
    return -1;
}

int
harness_sim_link_default(struct ct_env *env, uint64_t latency_ns,
                         uint64_t bandwidth, uint64_t *old_latency_ns,
                         uint64_t *old_bandwidth)
{
#ifdef CT_HAVE_NA_SIM
    struct na_sim_link link;

    /* Two names no node has: their link is the default one. */
    if (env->is_sim &&
        na_sim_get_link("ct-none-a", "ct-none-b", &link) == NA_SUCCESS) {
        *old_latency_ns = link.latency_ns;
        *old_bandwidth = link.bandwidth;
        link.latency_ns = latency_ns;
        link.bandwidth = bandwidth;
        return na_sim_set_link_default(&link) == NA_SUCCESS ? 0 : -1;
    }
#endif
    (void) env;
    (void) latency_ns;
    (void) bandwidth;
    (void) old_latency_ns;
    (void) old_bandwidth;
    return -1;
}

/* The node name of a sim address ("sim://name" -> "name"). */
static int
harness_sim_name(struct ct_env *env, hg_class_t *cls, hg_addr_t addr,
                 char *name, size_t size)
{
    char buf[256];
    hg_size_t len = sizeof(buf);

    if (HG_Addr_to_string(cls, buf, &len, addr) != HG_SUCCESS ||
        strncmp(buf, "sim://", 6) != 0)
        return -1;
    (void) env;
    snprintf(name, size, "%s", buf + 6);
    return 0;
}

int
harness_sim_corrupt_next(struct ct_env *env)
{
    char client[256], server[256], spec[600], err[256];
    hg_addr_t self = HG_ADDR_NULL;
    int rc = -1;

    if (!env->is_sim || env->remote)
        return -1;
    if (HG_Addr_self(env->client, &self) != HG_SUCCESS)
        return -1;
    if (harness_sim_name(env, env->client, self, client, sizeof(client)) == 0 &&
        harness_sim_name(env, env->client, env->server_addr, server,
                         sizeof(server)) == 0) {
        /* Every message from the client to the server gets one flipped
         * bit until harness_sim_faults_clear(). */
        snprintf(spec, sizeof(spec), "link:%s>%s:corrupt=1", client, server);
        if (na_sim_fault_add(spec, err, sizeof(err)) == NA_SUCCESS)
            rc = 0;
        else
            fprintf(stderr, "harness: fault \"%s\" refused: %s\n", spec, err);
    }
    HG_Addr_free(env->client, self);
    return rc;
}

void
harness_sim_faults_clear(struct ct_env *env)
{
    if (env->is_sim && !env->remote)
        na_sim_fault_clear();
}

/* ---- operations --------------------------------------------------------- */

hg_return_t
ct_op_cb(const struct hg_cb_info *info)
{
    struct ct_op *op = (struct ct_op *) info->arg;

    op->calls++;
    if (op->calls == 1) {
        op->ret = info->ret;
        op->type = info->type;
        if (op->env != NULL)
            op->at_ns = harness_now_ns(op->env);
        if (info->type == HG_CB_FORWARD && info->ret == HG_SUCCESS &&
            op->out != NULL)
            op->out_ret = HG_Get_output(info->info.forward.handle, op->out);
    }
    if (op->done != NULL)
        (*op->done)++;
    return HG_SUCCESS;
}

hg_return_t
ct_forward_wait(struct ct_env *env, hg_handle_t handle, void *in,
                struct ct_op *op)
{
    hg_return_t ret;

    op->calls = 0;
    op->env = env;
    op->out_ret = HG_OTHER_ERROR;
    ret = HG_Forward(handle, ct_op_cb, op, in);
    if (ret != HG_SUCCESS)
        return ret;
    harness_run_until(env, &op->calls, CT_WAIT_MS);
    return op->ret;
}

void
ct_assert_once(struct ct_env *env, const struct ct_op *op)
{
    harness_settle(env, 20);
    if (op->calls != 1)
        fail_msg("callback ran %d times, want exactly once", op->calls);
}

void
ct_forward_null_ok(struct ct_env *env)
{
    hg_handle_t h;
    struct ct_op op = {0};

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.null, &h));
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));
    ct_assert_once(env, &op);
    assert_int_equal(op.type, HG_CB_FORWARD);
    assert_hg_ok(HG_Destroy(h));
}

void
ct_server_stats(struct ct_env *env, ct_stats_out_t *stats)
{
    char err[256];

    if (stats_call(env, stats, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

uint32_t
ct_release_held(struct ct_env *env)
{
    hg_handle_t h;
    struct ct_op op = {0};
    ct_release_out_t out;

    op.out = &out;
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.release, &h));
    assert_hg_ok(ct_forward_wait(env, h, NULL, &op));
    assert_hg_ok(op.out_ret);
    assert_hg_ok(HG_Free_output(h, &out));
    assert_hg_ok(HG_Destroy(h));
    return out.released;
}

void
ct_wait_held(struct ct_env *env, uint32_t n)
{
    const uint64_t start = harness_now_ns(env);
    ct_stats_out_t st;

    for (;;) {
        ct_server_stats(env, &st);
        if (st.held >= n)
            return;
        if (harness_now_ns(env) - start > (uint64_t) CT_WAIT_MS * 1000000ULL)
            fail_msg("the server holds %u request(s), want %u", st.held, n);
    }
}

/* ---- two-process mode --------------------------------------------------- */

/* Set by SIGUSR1: the serving loop prints its state once (a way to look
 * into a server whose client reports a stall). */
static volatile sig_atomic_t ct_describe_requested;

static void
on_sigusr1(int sig)
{
    (void) sig;
    ct_describe_requested = 1;
}

/* Publish the server's address: atomically for a regular file (write and
 * rename), directly for a FIFO the runner script reads from. */
static int
publish_address(const char *path, const char *addr)
{
    struct stat st;
    char tmp[4096];
    FILE *f;

    if (path == NULL) {
        printf("%s\n", addr);
        fflush(stdout);
        return 0;
    }
    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
        f = fopen(path, "w");
        if (f == NULL)
            return -1;
        fprintf(f, "%s\n", addr);
        return fclose(f) == 0 ? 0 : -1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%s\n", addr);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path) == 0 ? 0 : -1;
}

/*
 * `--server`: serve the suite's RPCs on a listening class until a client
 * sends CT_RPC_SHUTDOWN, then tear down with the same leak checks as a
 * test. The exit status reports a leak or a server-side invariant failure.
 */
static int
serve(void)
{
    struct ct_env env;
    struct ct_ids ids;
    struct hg_init_info ii = HG_INIT_INFO_INITIALIZER;
    char addr[256], err[256];
    hg_size_t size = sizeof(addr);
    hg_addr_t self = HG_ADDR_NULL;
    hg_return_t ret;
    unsigned idle = 0;
    uint64_t reported_pause = 0;
    const char *linger;
    uint64_t waited;

    memset(&env, 0, sizeof(env));
    env.info = ct_info();
    env.is_sim = info_is_sim(env.info);
    if (env.is_sim) {
        fprintf(stderr, "--server needs a real fabric: the simulated fabric "
                        "lives inside one process\n");
        return 2;
    }
    ii.na_init_info.max_contexts = 2;
    env.server = init_class(env.info, HG_TRUE, &ii, err, sizeof(err));
    if (env.server == NULL) {
        fprintf(stderr, "server: %s\n", err);
        return 1;
    }
    /* The driver reads the clock of env.client; the server has no client
     * class, so it stands in. */
    env.client = env.server;
    env.server_ctx[0] = HG_Context_create_id(env.server, 0);
    env.server_ctx[1] = HG_Context_create_id(env.server, 1);
    if (env.server_ctx[0] == NULL || env.server_ctx[1] == NULL) {
        fprintf(stderr, "server: HG_Context_create_id failed\n");
        return 1;
    }
    env.ctx[env.nctx++] = env.server_ctx[0];
    env.ctx[env.nctx++] = env.server_ctx[1];
    ct_register_rpcs(env.server, 1, &ids);
    ret = HG_Addr_self(env.server, &self);
    if (ret == HG_SUCCESS)
        ret = HG_Addr_to_string(env.server, addr, &size, self);
    if (self != HG_ADDR_NULL)
        HG_Addr_free(env.server, self);
    if (ret != HG_SUCCESS ||
        publish_address(getenv("QS_TEST_ADDR_FILE"), addr) != 0) {
        fprintf(stderr, "server: cannot publish address: %s\n",
                HG_Error_to_string(ret));
        return 1;
    }
    fprintf(stderr, "server: listening at %s (info %s)\n", addr, env.info);
    signal(SIGUSR1, on_sigusr1);

    while (!ct_server_shutdown_requested(env.server)) {
        unsigned ran;

        if (drive_round(&env, idle > 64 ? 10 : 0, &ran, err, sizeof(err)) !=
            0) {
            fprintf(stderr, "server: %s\n", err);
            return 1;
        }
        idle = ran == 0 ? idle + 1 : 0;
        if (ct_max_pause_ns >= CT_PAUSE_REPORT_NS &&
            ct_max_pause_ns > reported_pause) {
            reported_pause = ct_max_pause_ns;
            fprintf(stderr,
                    "server: no progress round for %.3f s (its clients' "
                    "liveness probes went unanswered meanwhile)\n",
                    (double) reported_pause / 1e9);
        }
        if (ct_describe_requested) {
            ct_describe_requested = 0;
            ct_server_describe(env.server, err, sizeof(err));
            fprintf(stderr,
                    "server: %s; longest pause between progress rounds "
                    "%.3f s\n",
                    err, (double) ct_max_pause_ns / 1e9);
        }
    }
    /*
     * Keep serving a little before tearing down. On ofi+sockets a response
     * whose send has completed can still be lost if its sender finalizes
     * right away (4 of 20 two-process bulk runs lost the reply to the
     * shutdown request without this), and the client would wait for it in
     * vain. QS_TEST_SERVER_LINGER_MS=0 turns this off to reproduce that.
     */
    linger = getenv("QS_TEST_SERVER_LINGER_MS");
    if (drive_until(&env, NULL, 0,
                    linger != NULL ? (unsigned) strtoul(linger, NULL, 10)
                                   : 500u,
                    &waited, err, sizeof(err)) != 0) {
        fprintf(stderr, "server: %s\n", err);
        return 1;
    }
    if (settle_responds(&env, err, sizeof(err)) != 0) {
        fprintf(stderr, "server: %s\n", err);
        return 1;
    }
    if (ct_server_problems(env.server, err, sizeof(err))) {
        fprintf(stderr, "server: %s\n", err);
        return 1;
    }
    if (destroy_context(&env, env.server_ctx[1], "server id 1", err,
                        sizeof(err)) != 0 ||
        destroy_context(&env, env.server_ctx[0], "server id 0", err,
                        sizeof(err)) != 0) {
        fprintf(stderr, "server: %s\n", err);
        return 1;
    }
    ret = HG_Finalize(env.server);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "server: leak: HG_Finalize: %s\n",
                HG_Error_to_string(ret));
        return 1;
    }
    fprintf(stderr,
            "server: clean shutdown (longest pause between progress rounds "
            "%.3f s)\n",
            (double) ct_max_pause_ns / 1e9);
    return 0;
}

/* After a failed case: print the server's counters, so a report shows
 * what the other process saw (held requests, failed responds). */
static void
print_server_stats(struct ct_env *env)
{
    struct ct_op op = {0};
    ct_stats_out_t st;
    hg_handle_t h;
    char err[256];
    uint64_t waited;

    op.out = &st;
    if (HG_Create(env->client_ctx, env->server_addr, env->ids.stats, &h) !=
        HG_SUCCESS)
        return;
    if (HG_Forward(h, ct_op_cb, &op, NULL) == HG_SUCCESS &&
        drive_until(env, &op.calls, 1, CT_WAIT_MS, &waited, err, sizeof(err)) ==
            0 &&
        op.ret == HG_SUCCESS && op.out_ret == HG_SUCCESS) {
        fprintf(stderr,
                "server after the failure: %" PRIu64 " request(s) handled, %u "
                "held, %u failed respond(s)\n",
                st.handled, st.held, st.respond_errors);
        HG_Free_output(h, &st);
    } else {
        fprintf(stderr,
                "server after the failure: no answer to a stats "
                "request (%s)\n",
                op.calls != 0 ? HG_Error_to_string(op.ret) : "no callback");
    }
    HG_Destroy(h);
}

/* Ask the server process to stop, from a fresh client class. */
static int
send_shutdown(int failed)
{
    struct ct_env env;
    struct ct_op op = {0};
    hg_handle_t h = HG_HANDLE_NULL;
    char err[256];
    uint64_t waited;
    int rc = -1;

    if (env_create(&env, NULL, err, sizeof(err)) != 0)
        goto out;
    if (failed)
        print_server_stats(&env);
    if (HG_Create(env.client_ctx, env.server_addr, env.ids.shutdown, &h) !=
            HG_SUCCESS ||
        HG_Forward(h, ct_op_cb, &op, NULL) != HG_SUCCESS) {
        snprintf(err, sizeof(err), "cannot forward the shutdown request");
        goto out;
    }
    if (drive_until(&env, &op.calls, 1, CT_WAIT_MS, &waited, err,
                    sizeof(err)) != 0)
        goto out;
    if (op.ret != HG_SUCCESS) {
        snprintf(err, sizeof(err), "shutdown request: %s",
                 HG_Error_to_string(op.ret));
        goto out;
    }
    HG_Destroy(h);
    h = HG_HANDLE_NULL;
    rc = env_destroy(&env, err, sizeof(err));
out:
    if (h != HG_HANDLE_NULL)
        HG_Destroy(h);
    if (rc != 0)
        fprintf(stderr, "shutdown: %s\n", err);
    return rc;
}

int
harness_main(int argc, char **argv, const char *group,
             const struct CMUnitTest *tests, size_t count)
{
    const char *filter = getenv("QS_TEST_FILTER");
    const char *remote = getenv("QS_TEST_SERVER_ADDR");
    int failed;

    ct_argv0 = argv[0];
    ct_group = group;
    if (argc > 1 && strcmp(argv[1], "--server") == 0)
        return serve();

    fprintf(stderr, "conformance group %s: info %s, %s", ct_group, ct_info(),
            remote != NULL && remote[0] != '\0' ? "two processes"
                                                : "one process");
    if (info_is_sim(ct_info()))
        fprintf(stderr, ", QS_SIM_SEED=%" PRIu64, harness_sim_seed());
    fprintf(stderr, "\n");

    failed = ct_suite_run_group(group, tests, count);
    if (remote != NULL && remote[0] != '\0' &&
        getenv("QS_TEST_NO_SHUTDOWN") == NULL && send_shutdown(failed) != 0)
        failed++;
    if (failed != 0) {
        fprintf(stderr, "%d conformance case(s) failed in group %s\n", failed,
                group);
        print_replay(stderr);
        if (filter == NULL)
            fprintf(stderr, "(add QS_TEST_FILTER=<case name> to run one "
                            "case)\n");
    }
    return failed != 0;
}
