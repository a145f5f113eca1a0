/*
 * Liveness on the simulated fabric: a call without a deadline whose peer
 * dies ends, exactly once, with HG_HOSTUNREACH (HG_IO_ERROR allowed for
 * RMA), within the documented bound, in virtual time; a peer that is
 * alive but slow is never declared dead; with probing off, nothing but
 * the fabric's own errors ends a call (which shows the probe is what
 * ends the others). In a world declared driven by one thread
 * (na_sim_set_single_driver), probes must be answered: a silent partition
 * that outlasts the bound ends every pending call with HG_HOSTUNREACH, a
 * shorter one does not, and a handler that holds its request is no reason
 * (the answer comes from below the handlers).
 *
 * Run one scenario: test_sim_liveness <name>. Replay with another seed:
 * QS_SIM_SEED=<n> test_sim_liveness <name>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/simdrv.h"

static const struct sd_opts lv_default = {.nodes = 3};

/* Probe interval used by these tests (the library default). */
#define LV_PROBE_MS 1000u
/* The documented bound: two intervals plus the fabric's detection delay
 * (sim default 1 ms), with margin for the probe's own delivery. */
#define LV_BOUND_NS ((2u * LV_PROBE_MS + 100u) * 1000000ull)

static void
lv_seed(uint64_t seed)
{
    const char *env = getenv(NA_SIM_SEED_ENV);

    if (env != NULL && *env != '\0')
        na_sim_clear_seed();
    else
        assert_int_equal(na_sim_set_seed(seed), NA_SUCCESS);
}

static void
lv_dead(const struct sd_op *op, uint64_t since, int rma)
{
    sd_assert_once(op);
    /* One line per dead peer's call, read by scripts/liveness-trials.sh;
     * virtual time, in microseconds for the distribution. */
    if (getenv("QS_LIVENESS_TRIAL") != NULL)
        printf("  op %u (%s): %s %llu us after the kill\n", op->seq,
               op->kind == SD_BULK_PULL ? "forward whose pull was killed"
                                        : "forward held by the killed server",
               HG_Error_to_string(op->ret),
               (unsigned long long) (op->done_ns - since) / 1000);
    if (op->ret != HG_HOSTUNREACH && !(rma && op->ret == HG_IO_ERROR))
        fail_msg("op %u: got %s, want HG_HOSTUNREACH%s", op->seq,
                 HG_Error_to_string(op->ret), rma ? " or HG_IO_ERROR" : "");
    if (op->done_ns - since > LV_BOUND_NS)
        fail_msg("op %u: ended %llu ms after the crash, bound %llu ms", op->seq,
                 (unsigned long long) (op->done_ns - since) / 1000000,
                 (unsigned long long) LV_BOUND_NS / 1000000);
}

/* The target crashes while its handler holds the request: a plain
 * forward (no deadline) ends with HG_HOSTUNREACH. */
static void
test_killed_in_handler(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *held, *echo;
    uint64_t t;

    (void) state;
    lv_seed(31);
    sd_open(w, &lv_default);
    held = sd_forward(w, SD_HOLD, 0, 1, 32, 0);
    sd_run_until(w, &w->handled, 1, 1000);
    /* The seed moves the crash across one and a half probe intervals. */
    sd_run_for(w, (unsigned) (na_sim_get_seed() * 7919u % 1500u));
    t = sd_now();
    sd_crash(w, 1);
    echo = sd_forward(w, SD_ECHO, 2, 1, 32, 0);
    sd_wait(w, held, 10000);
    lv_dead(held, t, 0);
    sd_wait(w, echo, 10000);
    lv_dead(echo, t, 0);
    sd_run_for(w, 3 * LV_PROBE_MS); /* nothing calls back twice */
    sd_assert_once(held);
    sd_release_held(w);
    sd_close(w);
    free(w);
}

/* The target crashes while it pulls the origin's large input: the
 * origin's plain forward ends with HG_HOSTUNREACH. */
static void
test_killed_mid_bulk(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct na_sim_link slow = {.latency_ns = 1000, .bandwidth = 100000000};
    struct sd_op *op;
    uint64_t t;

    (void) state;
    lv_seed(32);
    sd_open(w, &lv_default);
    assert_int_equal(na_sim_set_link("n0", "n1", &slow), NA_SUCCESS);
    assert_int_equal(na_sim_set_link("n1", "n0", &slow), NA_SUCCESS);
    op = sd_forward(w, SD_BULK_PULL, 0, 1, 4 << 20, 0);
    sd_run_until(w, &w->bulk_live, 1, 1000);
    /* The seed moves the crash within the 42 ms pull. */
    sd_run_for(w, (unsigned) (na_sim_get_seed() * 7919u % 40u));
    assert_int_equal(w->bulk_live, 1);
    t = sd_now();
    sd_crash(w, 1);
    sd_wait(w, op, 10000);
    lv_dead(op, t, 0);
    sd_close(w);
    free(w);
}

/* The origin pulls from a peer that crashes mid-transfer: the transfer
 * (no deadline) ends with an error that is not HG_CANCELED. */
static void
test_pull_from_dead_peer(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct na_sim_link slow = {.latency_ns = 1000, .bandwidth = 100000000};
    struct sd_op *op;
    uint64_t t;

    (void) state;
    lv_seed(33);
    sd_open(w, &lv_default);
    assert_int_equal(na_sim_set_link("n1", "n0", &slow), NA_SUCCESS);
    op = sd_transfer(w, 0, 1, 4 << 20, 0, 0);
    sd_run_for(w, 1);
    assert_int_equal(op->calls, 0);
    t = sd_now();
    sd_crash(w, 1);
    sd_wait(w, op, 10000);
    lv_dead(op, t, 1);
    sd_close(w);
    free(w);
}

/* A target that is alive but slow (its handler holds the request for
 * five probe intervals) is probed, answers from below the handler, and
 * the call succeeds: with the answers required (single driver) and
 * without. */
static void
lv_slow_peer_alive(int single)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *held;
    struct hg_stats tgt0, tgt1, org0, org1;

    lv_seed(34);
    sd_open(w, &lv_default);
    assert_int_equal(na_sim_set_single_driver(single), NA_SUCCESS);
    held = sd_forward(w, SD_HOLD, 0, 1, 32, 0);
    sd_run_until(w, &w->handled, 1, 1000);
    assert_int_equal(HG_Class_get_stats(w->node[1].cls, &tgt0), HG_SUCCESS);
    assert_int_equal(HG_Class_get_stats(w->node[0].cls, &org0), HG_SUCCESS);
    sd_run_for(w, 5 * LV_PROBE_MS);
    assert_int_equal(held->calls, 0);
    /* The probes reached the target and ran nothing there: no request, no
     * answer (an error response to a probe would be a message the origin
     * cannot match). */
    assert_int_equal(HG_Class_get_stats(w->node[1].cls, &tgt1), HG_SUCCESS);
    assert_int_equal(HG_Class_get_stats(w->node[0].cls, &org1), HG_SUCCESS);
    assert_int_equal(tgt1.requests_received, tgt0.requests_received);
    assert_int_equal(tgt1.responses_sent, tgt0.responses_sent);
    assert_int_equal(tgt1.protocol_errors, tgt0.protocol_errors);
    assert_int_equal(org1.protocol_errors, org0.protocol_errors);
    sd_release_held(w);
    sd_wait(w, held, 1000);
    sd_assert_once(held);
    assert_int_equal(held->ret, HG_SUCCESS);
    sd_close(w);
    free(w);
}

static void
test_slow_peer_alive(void **state)
{
    (void) state;
    lv_slow_peer_alive(1);
    lv_slow_peer_alive(0);
}

/* Calls held by n1's handlers while a silent partition (nothing refused,
 * nothing lost: trips wait for the link) cuts n0 <> n1 for `len_ms`. */
static void
lv_silent_partition(uint64_t seed, unsigned int len_ms, bool outlasts)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *op[4];
    char spec[128];
    uint64_t t;

    lv_seed(seed);
    sd_open(w, &lv_default);
    assert_int_equal(na_sim_set_single_driver(true), NA_SUCCESS);
    for (int i = 0; i < 4; i++)
        op[i] = sd_forward(w, i == 3 ? SD_ECHO : SD_HOLD, 0, 1, 32 + i, 0);
    sd_run_until(w, &w->handled, 3, 1000);
    /* The seed moves the partition's start across one probe interval. */
    sd_run_for(w, (unsigned) (na_sim_get_seed() * 7919u % LV_PROBE_MS));
    t = sd_now();
    snprintf(spec, sizeof(spec), "partition:n0<>n1@%llu-%llu:silent",
             (unsigned long long) t,
             (unsigned long long) (t + len_ms * 1000000ull));
    sd_faults(spec);
    sd_run_for(w, len_ms + 10);
    /* The link is back: whatever is held completes (3 ms of answers). */
    sd_release_held(w);
    sd_drain(w, 10000);
    assert_true(na_sim_fault_count("partition") > 0);
    for (int i = 0; i < 4; i++) {
        sd_assert_once(op[i]);
        if (i == 3)
            assert_int_equal(op[i]->ret, HG_SUCCESS); /* done before */
        else if (outlasts)
            lv_dead(op[i], t, 0);
        else if (op[i]->ret != HG_SUCCESS)
            fail_msg("op %u: a %u ms partition ended it with %s", op[i]->seq,
                     len_ms, HG_Error_to_string(op[i]->ret));
    }
    sd_close(w);
    free(w);
}

static void
test_silent_partition(void **state)
{
    (void) state;
    /* Longer than the bound (two intervals): every held call ends. */
    lv_silent_partition(38, 3 * LV_PROBE_MS, true);
    /* Shorter than one interval: the probe sent into it is answered
     * within its interval once the link is back. */
    lv_silent_partition(39, LV_PROBE_MS / 2, false);
}

/* A target that keeps answering other calls is alive, however long one
 * call's probe waits. Here the path from n0 to n1 is cut silently (n0's
 * probes wait on the link) while n1 answers n0's held calls one at a
 * time, half an interval apart, for four intervals: twice the bound.
 * Every call succeeds, because each answer is a sign of life for the
 * calls still waiting. Before answers counted, the calls still held two
 * intervals into the cut ended with HG_HOSTUNREACH (a server working
 * through a deep queue under a loaded ThreadSanitizer run did the same
 * to conformance_rpc's test_many_in_flight). */
static void
test_answers_are_signs_of_life(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *op[8];
    char spec[128];
    uint64_t t;

    (void) state;
    lv_seed(40);
    sd_open(w, &lv_default);
    assert_int_equal(na_sim_set_single_driver(true), NA_SUCCESS);
    for (int i = 0; i < 8; i++)
        op[i] = sd_forward(w, SD_HOLD, 0, 1, 32 + i, 0);
    sd_run_until(w, &w->handled, 8, 1000);
    t = sd_now();
    snprintf(spec, sizeof(spec), "partition:n0>n1@%llu-%llu:silent",
             (unsigned long long) t,
             (unsigned long long) (t + 5ull * LV_PROBE_MS * 1000000ull));
    sd_faults(spec);
    for (int i = 0; i < 8; i++) {
        sd_run_for(w, LV_PROBE_MS / 2);
        sd_release_first(w);
    }
    sd_drain(w, 10000);
    assert_true(na_sim_fault_count("partition") > 0);
    for (int i = 0; i < 8; i++) {
        sd_assert_once(op[i]);
        if (op[i]->ret != HG_SUCCESS)
            fail_msg("op %u: ended with %s %llu ms into the cut, while its "
                     "target answered every half interval",
                     op[i]->seq, HG_Error_to_string(op[i]->ret),
                     (unsigned long long) (op[i]->done_ns - t) / 1000000);
    }
    sd_close(w);
    free(w);
}

/* With probing off (hg_init_info.no_probe, or QS_HG_PROBE_MS=0), the
 * crashed target's forward waits: it ends only by an explicit cancel. */
static void
lv_probe_off(const struct sd_opts *o, const char *env)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *held;

    if (env != NULL)
        setenv("QS_HG_PROBE_MS", env, 1);
    sd_open(w, o);
    unsetenv("QS_HG_PROBE_MS");
    held = sd_forward(w, SD_HOLD, 0, 1, 32, 0);
    sd_run_until(w, &w->handled, 1, 1000);
    sd_crash(w, 1);
    sd_run_for(w, 10 * LV_PROBE_MS);
    if (held->calls != 0)
        fail_msg("ended with %s although probing is off",
                 HG_Error_to_string(held->ret));
    assert_int_equal(HG_Cancel(held->handle), HG_SUCCESS);
    sd_wait(w, held, 1000);
    sd_assert_once(held);
    assert_int_equal(held->ret, HG_CANCELED);
    sd_release_held(w);
    sd_close(w);
    free(w);
}

static void
test_probe_off(void **state)
{
    struct sd_opts off = {.nodes = 3, .no_probe = 1};

    (void) state;
    lv_seed(35);
    lv_probe_off(&off, NULL);
    lv_seed(35);
    lv_probe_off(&lv_default, "0");
}

/* hg_init_info.probe_interval_ms sets the interval (and the environment
 * overrides it): a shorter one finds the dead target sooner. */
static void
test_probe_interval(void **state)
{
    struct sd_opts fast = {.nodes = 2, .probe_ms = 100};
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_op *held;
    uint64_t t;

    (void) state;
    for (int k = 0; k < 2; k++) {
        lv_seed(37);
        if (k == 1)
            setenv("QS_HG_PROBE_MS", "3000", 1);
        sd_open(w, &fast);
        unsetenv("QS_HG_PROBE_MS");
        held = sd_forward(w, SD_HOLD, 0, 1, 32, 0);
        sd_run_until(w, &w->handled, 1, 1000);
        t = sd_now();
        sd_crash(w, 1);
        sd_wait(w, held, 10000);
        sd_assert_once(held);
        assert_int_equal(held->ret, HG_HOSTUNREACH);
        if (k == 0 && held->done_ns - t > 300000000ull)
            fail_msg("100 ms interval: ended %llu ms after the crash",
                     (unsigned long long) (held->done_ns - t) / 1000000);
        if (k == 1 && held->done_ns - t < 2000000000ull)
            fail_msg("QS_HG_PROBE_MS=3000: ended %llu ms after the crash",
                     (unsigned long long) (held->done_ns - t) / 1000000);
        sd_release_held(w);
        sd_close(w);
    }
    free(w);
}

/* Many calls to a node that crashes, while others stay up: every call
 * to the dead node ends (once), every call to the live ones succeeds. */
static void
test_many_pending(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_opts o = {.nodes = 4};
    struct sd_op *op[24];
    uint64_t t;

    (void) state;
    lv_seed(36);
    sd_open(w, &o);
    for (int i = 0; i < 24; i++)
        op[i] =
            sd_forward(w, i % 3 == 0 ? SD_HOLD : SD_BULK_PULL, i % 2 ? 3 : 0,
                       i % 3 == 0 ? 1 : 2, 5000 + 100 * i, 0);
    sd_run_for(w, 1);
    t = sd_now();
    sd_crash(w, 1);
    sd_run_for(w, 3 * LV_PROBE_MS);
    sd_release_held(w); /* frozen with the node until it restarts */
    sd_restart(w, 1);
    sd_drain(w, 10000);
    for (int i = 0; i < 24; i++) {
        sd_assert_once(op[i]);
        if (op[i]->to == 1)
            lv_dead(op[i], t, 0);
        else
            assert_int_equal(op[i]->ret, HG_SUCCESS);
    }
    sd_close(w);
    free(w);
}

int
main(int argc, char **argv)
{
    static const struct CMUnitTest all[] = {
        cmocka_unit_test(test_killed_in_handler),
        cmocka_unit_test(test_killed_mid_bulk),
        cmocka_unit_test(test_pull_from_dead_peer),
        cmocka_unit_test(test_slow_peer_alive),
        cmocka_unit_test(test_silent_partition),
        cmocka_unit_test(test_probe_off),
        cmocka_unit_test(test_probe_interval),
        cmocka_unit_test(test_many_pending),
        cmocka_unit_test(test_answers_are_signs_of_life),
    };
    struct CMUnitTest pick[sizeof(all) / sizeof(all[0])];
    size_t n = 0;

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (argc < 2 || strcmp(argv[1], all[i].name + 5) == 0)
            pick[n++] = all[i];
    if (n == 0) {
        fprintf(stderr, "no scenario named %s\n", argv[1]);
        return 2;
    }
    return _cmocka_run_group_tests("sim_liveness", pick, n, NULL, NULL);
}
