/*
 * The conformance harness: one suite, any NA plugin.
 *
 * A test gets a `struct ct_env` with a listening "server" class and a
 * "client" class, each with a context, built from the info string in
 * QS_TEST_INFO (default "sim"). The bodies never name a plugin: the same
 * binary runs on the simulated fabric, on ofi+tcp and on ofi+sockets.
 *
 * Two-process mode: when QS_TEST_SERVER_ADDR is set, the env has no server
 * class and the client looks that address up instead. The same binary,
 * started with `--server`, is that server: it registers the suite's RPCs,
 * writes its address to the file named by QS_TEST_ADDR_FILE and serves
 * until a CT_RPC_SHUTDOWN request. Tests therefore observe the server only
 * through RPCs (CT_RPC_STATS), never through its memory.
 *
 * Everything is driven from one thread by harness_run_until(), so a run on
 * the simulated fabric is deterministic for a given seed.
 */
#ifndef CT_HARNESS_H
#define CT_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "conformance/rpc_types.h"

/* Contexts the driver progresses: server ids 0 and 1, the client, and a
 * few a test may add. */
#define CT_MAX_CONTEXTS 8

/* Budget of one wait, in milliseconds on the NA clock (virtual time on the
 * simulated fabric). Generous: a wait that needs it has hung. */
#define CT_WAIT_MS 30000u

/* Ids of the suite's RPCs in the client class (equal in every class). */
struct ct_ids {
    hg_id_t null, types, add, fail, oneway, hold, release, stats, shutdown;
    hg_id_t not_on_server, sum, xfer, big;
};

/* Options a test passes to its setup through cmocka's initial state. */
struct ct_opts {
    struct hg_init_info client_init; /* used when has_client_init        */
    struct hg_init_info server_init; /* used when has_server_init        */
    int has_client_init;
    int has_server_init;
    /* The test needs server-side options, so it creates its own server in
     * this process even in two-process mode. */
    int local_server;
};

struct ct_env {
    const char *info;   /* QS_TEST_INFO                                 */
    int is_sim;         /* the simulated fabric: virtual clock, seeds   */
    int remote;         /* the server runs in another process           */
    hg_class_t *server; /* NULL when remote                             */
    hg_context_t *server_ctx[2]; /* context ids 0 and 1                 */
    hg_class_t *client;
    hg_context_t *client_ctx;
    hg_addr_t server_addr; /* the server, as the client looked it up    */
    struct ct_ids ids;
    /* Simulated fabric: this env's classes started a new world (clock 0,
     * empty trace), so its trace is comparable with another such env's. */
    int fresh_world;
    /* Every context the driver progresses, and their classes. */
    hg_context_t *ctx[CT_MAX_CONTEXTS];
    unsigned nctx;
};

/* cmocka setup / teardown. Setup reads a `struct ct_opts *` from *state
 * when one was given (cmocka_unit_test_prestate_setup_teardown) and replaces
 * it with the env. */
int harness_setup(void **state);
int harness_teardown(void **state);

/*
 * The last step of every test: the leak check. It frees the server address,
 * destroys every context and finalizes both classes, failing the test unless
 * each returns HG_SUCCESS (they return HG_BUSY while anything created from
 * them is left). Operations still in flight count as leaks. A test that
 * fails before reaching this point leaves its env abandoned (teardown never
 * progresses it again, since its callbacks may point into the dead test).
 */
void harness_finish(struct ct_env *env);

/* cmocka entry for a test with the default env, and with options. */
#define CT_TEST(f)                                                             \
    cmocka_unit_test_setup_teardown(f, harness_setup, harness_teardown)
#define CT_TEST_OPTS(f, opts)                                                  \
    cmocka_unit_test_prestate_setup_teardown(f, harness_setup,                 \
                                             harness_teardown, opts)

/*
 * Progress every context of the env (HG_Progress then HG_Trigger, in turn)
 * until *flag is non-zero; fail the test if max_ms pass first on the
 * client class's NA clock. Returns the milliseconds the wait took on that
 * clock.
 */
uint64_t harness_run_until(struct ct_env *env, const int *flag,
                           unsigned max_ms);
/* The same until *counter >= target. */
uint64_t harness_run_until_count(struct ct_env *env, const int *counter,
                                 int target, unsigned max_ms);
/* The same, but a budget that runs out returns -1 instead of failing, so
 * the caller can say what is missing before it fails. */
int harness_try_run_until_count(struct ct_env *env, const int *counter,
                                int target, unsigned max_ms);
/* Progress for `ms` more on the NA clock, so a duplicate or stray
 * completion would have the chance to show up. */
void harness_settle(struct ct_env *env, unsigned ms);

/* Add a context of any class to what the driver progresses (and what
 * teardown does not destroy: the test owns it). */
void harness_add_context(struct ct_env *env, hg_context_t *ctx);
void harness_remove_context(struct ct_env *env, hg_context_t *ctx);

/* The NA clock of the client class, in nanoseconds. */
uint64_t harness_now_ns(const struct ct_env *env);

/* Register every RPC of the suite on a class; with handlers when `serve`
 * (and then the class carries the server state), without otherwise. */
void ct_register_rpcs(hg_class_t *cls, int serve, struct ct_ids *ids);

/* Name for a new class of this run: "sim://<role>-<n>" on the simulated
 * fabric, the info string itself otherwise. */
void harness_class_name(const struct ct_env *env, const char *role, char *buf,
                        size_t size);

/* Name of an address where nobody listens: a fresh "sim://nobody-<n>" on
 * the simulated fabric, port 1 of 127.0.0.1 with the info string's
 * protocol otherwise. */
void harness_unreachable_name(const struct ct_env *env, char *buf, size_t size);

/*
 * Per-operation record: every callback of the suite counts its invocations
 * on one of these, so each test can assert that an operation completed
 * exactly once.
 */
struct ct_op {
    int calls;       /* callback invocations                      */
    hg_return_t ret; /* hg_cb_info->ret of the first invocation   */
    hg_cb_type_t type;
    void *out;           /* forward: decode the output here on success */
    hg_return_t out_ret; /* HG_Get_output's result                    */
    int *done;           /* incremented on each invocation (optional) */
    uint64_t at_ns;      /* NA clock when the callback ran            */
    const struct ct_env *env;
};

/* Callback for HG_Forward / HG_Respond / HG_Bulk_transfer: arg is a struct
 * ct_op. For forwards with op->out set, it calls HG_Get_output. */
hg_return_t ct_op_cb(const struct hg_cb_info *info);

/* Forward and wait for the callback; returns op->ret. The handle's output
 * (if op->out) must be released with HG_Free_output by the caller when
 * op->out_ret is HG_SUCCESS. */
hg_return_t ct_forward_wait(struct ct_env *env, hg_handle_t handle, void *in,
                            struct ct_op *op);

/* Assert op completed exactly once, after settling a little longer. */
void ct_assert_once(struct ct_env *env, const struct ct_op *op);

/* Forward CT_RPC_NULL and assert it succeeded, exactly once: the server
 * still works after whatever a case did to it. */
void ct_forward_null_ok(struct ct_env *env);

/* Query the server's counters with CT_RPC_STATS. */
void ct_server_stats(struct ct_env *env, ct_stats_out_t *stats);

/* Forward CT_RPC_RELEASE and return how many held handles it answered. */
uint32_t ct_release_held(struct ct_env *env);

/* Wait until the server has at least `n` held handles. */
void ct_wait_held(struct ct_env *env, uint32_t n);

/* Fail with both codes spelled out. */
#define assert_hg_ret(got, want)                                               \
    do {                                                                       \
        hg_return_t ct_got_ = (got), ct_want_ = (want);                        \
        if (ct_got_ != ct_want_)                                               \
            fail_msg("%s: got %s (%d), want %s (%d)", #got,                    \
                     HG_Error_to_string(ct_got_), (int) ct_got_,               \
                     HG_Error_to_string(ct_want_), (int) ct_want_);            \
    } while (0)

#define assert_hg_ok(expr) assert_hg_ret((expr), HG_SUCCESS)

/*
 * A test binary's main: `--server` serves (two-process mode); otherwise it
 * prints the run's parameters (info string, sim seed), runs the group, and
 * on failure prints the line that replays it.
 */
int harness_main(int argc, char **argv, const char *group,
                 const struct CMUnitTest *tests, size_t count);

/* The simulated fabric's event trace so far: its hash and line count.
 * Returns -1 (and sets nothing) on other plugins. */
int harness_sim_trace(const struct ct_env *env, uint64_t *hash,
                      uint64_t *count);

/* Simulated fabric: bound every context's unexpected backlog to `limit`
 * messages; a message that finds it full waits (fail_when_full 0, the
 * default, like credit flow control) or fails its send with NA_AGAIN.
 * Returns -1 on other plugins. */
int harness_sim_backlog(struct ct_env *env, size_t limit, int fail_when_full);

/* Simulated fabric: set the default link (latency, bytes per second) and
 * return the previous one, for cases that need a transfer to take a known
 * amount of virtual time. Returns -1 on other plugins. */
int harness_sim_link_default(struct ct_env *env, uint64_t latency_ns,
                             uint64_t bandwidth, uint64_t *old_latency_ns,
                             uint64_t *old_bandwidth);

/* Hook for checksum tests: arrange for one payload byte of the next
 * message from the client to the server to be flipped in flight. Returns
 * 0 when armed, -1 when the plugin offers no such fault. */
int harness_sim_corrupt_next(struct ct_env *env);
/* Remove every fault armed by harness_sim_corrupt_next(). */
void harness_sim_faults_clear(struct ct_env *env);

/* The simulated fabric's seed for this run (0 on other plugins). */
uint64_t harness_sim_seed(void);

#endif /* CT_HARNESS_H */
