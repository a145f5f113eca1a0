/*
 * The kill scenarios with a Margo client: a plain margo_forward (no
 * deadline, as Margo services call) to a server process that is
 * SIGKILLed while its handler holds the request, or while it pulls the
 * client's 64 MiB. The forward runs in its own thread, so the test thread
 * is free to watch the server's pipe and kill it; margo_forward must then
 * return HG_HOSTUNREACH within the liveness bound, once.
 *
 * The server is the same `--server` role as the HG scenarios: Margo
 * registers the RPCs by the same names, hence the same ids.
 */
#include "ofi_faults/ofmargo.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <margo.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "ofi_faults/ofproc.h"
#include "ofi_faults/ofrpc.h"

/* Waits for the server's events are bounded by this many 100 ms polls of
 * its pipe (an event ends a poll at once). */
#define OM_POLLS 200

struct om_call {
    hg_handle_t h;
    void *in;
    hg_return_t ret;
    _Atomic uint64_t at_ns; /* set last, once the call returned */
};

static uint64_t
om_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void *
om_forward(void *arg)
{
    struct om_call *c = arg;

    c->ret = margo_forward(c->h, c->in);
    atomic_store(&c->at_ns, om_now());
    return NULL;
}

/* Wait until *counter (a field the child's pipe fills) reaches 1. */
static void
om_wait_event(struct of_child *c, const int *counter, const char *what)
{
    for (int i = 0; i < OM_POLLS; i++) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};

        of_child_poll(c);
        if (*counter > 0)
            return;
        if (c->eof)
            fail_msg("%s: the server exited first", what);
        (void) poll(&p, 1, 100);
    }
    fail_msg("%s: no event from the server in %d s", what, OM_POLLS / 10);
}

/* Start a server process (on the other host in tests/netns) and a Margo
 * client instance; returns the instance once the server listens. */
static margo_instance_id
om_start(const char *info, struct of_child *srv)
{
    const char *args[] = {"--info", of_server_info(info), NULL};
    margo_instance_id mid;

    if (of_spawn(srv, "--server", args) != 0)
        fail_msg("cannot start a server process");
    om_wait_event(srv, &srv->listening, "server address");
    mid = margo_init(info, MARGO_CLIENT_MODE, 1, 0);
    assert_non_null(mid);
    return mid;
}

static void
om_run(const char *info, int bulk, unsigned bound_ms)
{
    static struct of_child srv; /* of_reap_all reads it after a failure */
    margo_instance_id mid;
    hg_addr_t addr = HG_ADDR_NULL;
    hg_id_t id;
    struct om_call call = {0};
    of_val_t val = {.value = 7};
    of_pull_in_t pull = {.size = OF_BIG_PULL, .cancel = 0};
    uint8_t *buf = NULL;
    pthread_t thread;
    uint64_t killed, ms;
    int status;

    mid = om_start(info, &srv);
    if (bulk) {
        void *ptr;
        hg_size_t len = OF_BIG_PULL;

        id = MARGO_REGISTER(mid, "of_pull", of_pull_in_t, of_pull_out_t, NULL);
        buf = malloc(OF_BIG_PULL);
        assert_non_null(buf);
        for (uint64_t i = 0; i < OF_BIG_PULL; i++)
            buf[i] = of_pattern(i);
        ptr = buf;
        assert_int_equal(margo_bulk_create(mid, 1, &ptr, &len,
                                           HG_BULK_READ_ONLY, &pull.bulk),
                         HG_SUCCESS);
        call.in = &pull;
    } else {
        id = MARGO_REGISTER(mid, "of_hold", of_val_t, of_val_t, NULL);
        call.in = &val;
    }
    assert_int_equal(margo_addr_lookup(mid, srv.addr, &addr), HG_SUCCESS);
    assert_int_equal(margo_create(mid, addr, id, &call.h), HG_SUCCESS);
    assert_int_equal(pthread_create(&thread, NULL, om_forward, &call), 0);
    om_wait_event(&srv, bulk ? &srv.pulls : &srv.held,
                  bulk ? "pull started" : "handler entered");
    killed = om_now();
    status = of_child_kill(&srv);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("server was not killed by SIGKILL (status %#x)", status);
    if (bulk && srv.bulk_done != 0)
        fail_msg("the server's pull completed before the kill: the scenario "
                 "did not test a kill mid-transfer");
    /* No deadline anywhere: a hang here is the bug (ctest's limit). */
    pthread_join(thread, NULL);
    if (atomic_load(&call.at_ns) < killed)
        fail_msg("margo_forward ended with %s %llu ms before the kill: the "
                 "live server was declared unreachable",
                 HG_Error_to_string(call.ret),
                 (unsigned long long) (killed - atomic_load(&call.at_ns)) /
                     1000000);
    ms = (atomic_load(&call.at_ns) - killed) / 1000000;
    print_message("  %s: %s %llu ms after the kill\n",
                  bulk ? "forward whose pull was killed"
                       : "forward held by the killed server",
                  HG_Error_to_string(call.ret), (unsigned long long) ms);
    if (call.ret != HG_HOSTUNREACH)
        fail_msg("margo_forward returned %s, want HG_HOSTUNREACH",
                 HG_Error_to_string(call.ret));
    if (ms > bound_ms)
        fail_msg("margo_forward returned %llu ms after the kill, bound %u ms",
                 (unsigned long long) ms, bound_ms);
    assert_int_equal(margo_destroy(call.h), HG_SUCCESS);
    if (bulk) {
        assert_int_equal(margo_bulk_free(pull.bulk), HG_SUCCESS);
        free(buf);
    }
    assert_int_equal(margo_addr_free(mid, addr), HG_SUCCESS);
    margo_finalize(mid);
}

void
om_kill_in_handler(const char *info, unsigned bound_ms)
{
    om_run(info, 0, bound_ms);
}

void
om_kill_in_bulk(const char *info, unsigned bound_ms)
{
    om_run(info, 1, bound_ms);
}

/* ---- a partition: the link between the hosts goes down, then up -------- */

/* Run `ip link set dev <link> <state>`; fails the test unless it worked. */
static void
om_link(const char *link, const char *state)
{
    char *argv[] = {"ip",          "link",         "set", "dev",
                    (char *) link, (char *) state, NULL};
    pid_t pid;
    int status;

    if (posix_spawnp(&pid, "ip", NULL, NULL, argv, NULL) != 0 ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        fail_msg("ip link set dev %s %s failed", link, state);
}

/* One plain call that must answer `want`. */
static void
om_call_val(margo_instance_id mid, hg_addr_t addr, hg_id_t id, of_val_t *in,
            uint64_t want)
{
    hg_handle_t h;
    of_val_t out;

    assert_int_equal(margo_create(mid, addr, id, &h), HG_SUCCESS);
    assert_int_equal(margo_forward(h, in), HG_SUCCESS);
    assert_int_equal(margo_get_output(h, &out), HG_SUCCESS);
    assert_int_equal(out.value, want);
    margo_free_output(h, &out);
    margo_destroy(h);
}

void
om_partition(const char *info, const char *link, unsigned down_ms,
             unsigned heal_bound_ms, unsigned dead_bound_ms)
{
    static struct of_child srv; /* of_reap_all reads it after a failure */
    margo_instance_id mid;
    hg_addr_t addr = HG_ADDR_NULL;
    hg_id_t hold, release, echo, shutdown;
    hg_handle_t h;
    struct om_call call = {0};
    of_val_t val = {.value = 7}, zero = {.value = 0}, out;
    pthread_t thread;
    uint64_t down, up, ms;
    int status;

    mid = om_start(info, &srv);
    hold = MARGO_REGISTER(mid, "of_hold", of_val_t, of_val_t, NULL);
    release = MARGO_REGISTER(mid, "of_release", of_val_t, of_val_t, NULL);
    echo = MARGO_REGISTER(mid, "of_echo", of_val_t, of_val_t, NULL);
    shutdown = MARGO_REGISTER(mid, "of_shutdown", of_val_t, of_val_t, NULL);
    assert_int_equal(margo_addr_lookup(mid, srv.addr, &addr), HG_SUCCESS);
    /* Connected before the partition. */
    om_call_val(mid, addr, echo, &val, 8);

    /* A plain forward that the server's handler holds; then the link
     * goes down for down_ms, long enough for the liveness probe to run
     * into the partition. */
    assert_int_equal(margo_create(mid, addr, hold, &call.h), HG_SUCCESS);
    call.in = &val;
    assert_int_equal(pthread_create(&thread, NULL, om_forward, &call), 0);
    om_wait_event(&srv, &srv.held, "handler entered");
    if (dead_bound_ms == 0) {
        /* First a busy handler: held for 2.5 s (over a probe interval) with the
         * link up, the call is probed, answered from below the handler, and
         * must not end. */
        uint64_t busy = om_now();

        while (om_now() - busy < 2500ull * 1000000) {
            struct pollfd p = {.fd = srv.fd, .events = POLLIN};

            of_child_poll(&srv);
            (void) poll(&p, 1, 100);
        }
        if (atomic_load(&call.at_ns) != 0)
            fail_msg("the call held by a busy handler ended with %s after "
                     "2.5 s: its probes were not answered",
                     HG_Error_to_string(call.ret));
    }
    om_link(link, "down");
    down = om_now();
    while (om_now() - down < (uint64_t) down_ms * 1000000) {
        struct pollfd p = {.fd = srv.fd, .events = POLLIN};

        of_child_poll(&srv);
        if (srv.eof)
            fail_msg("the server exited during the partition");
        (void) poll(&p, 1, 100);
    }
    if (dead_bound_ms != 0) {
        /* tcp says nothing, but the probes go unanswered: the call ended
         * while the link was still down. */
        uint64_t at = atomic_load(&call.at_ns);

        om_link(link, "up");
        if (at == 0)
            fail_msg("the held call outlived a %u ms partition: an "
                     "unanswered probe did not end it",
                     down_ms);
        pthread_join(thread, NULL);
        ms = (at - down) / 1000000;
        print_message("  call held across a %u ms partition: %s %llu ms "
                      "after the link went down\n",
                      down_ms, HG_Error_to_string(call.ret),
                      (unsigned long long) ms);
        if (call.ret != HG_HOSTUNREACH)
            fail_msg("the held call ended with %s, want HG_HOSTUNREACH",
                     HG_Error_to_string(call.ret));
        if (ms > dead_bound_ms)
            fail_msg("the held call ended %llu ms after the link went down, "
                     "bound %u ms",
                     (unsigned long long) ms, dead_bound_ms);
        margo_destroy(call.h);
        /* The server still holds the request: release it (its answer is
         * dropped here) and see the link work again. */
        om_call_val(mid, addr, release, &zero, 1);
        goto stop;
    }
    /* tcp says nothing during a silent partition (the probes sit in the
     * socket's send queue), so a live peer must not have been failed. */
    if (atomic_load(&call.at_ns) != 0) {
        om_link(link, "up");
        fail_msg("the held call ended during a %u ms partition with %s: a "
                 "live peer was declared dead",
                 down_ms, HG_Error_to_string(call.ret));
    }
    om_link(link, "up");
    up = om_now();

    /* The link returned first: the release goes through, the held call
     * completes with the server's answer once tcp retransmits. */
    /* Not `val`: the held call's thread read it, and nothing orders that
     * read before a write here. */
    om_call_val(mid, addr, release, &zero, 1);
    pthread_join(thread, NULL);
    ms = (atomic_load(&call.at_ns) - up) / 1000000;
    print_message("  call held across a %u ms partition: %s %llu ms after "
                  "the link returned\n",
                  down_ms, HG_Error_to_string(call.ret),
                  (unsigned long long) ms);
    if (call.ret != HG_SUCCESS)
        fail_msg("the held call ended with %s, want HG_SUCCESS (the link "
                 "returned before any verdict)",
                 HG_Error_to_string(call.ret));
    assert_int_equal(margo_get_output(call.h, &out), HG_SUCCESS);
    assert_int_equal(out.value, 1000);
    margo_free_output(call.h, &out);
    if (ms > heal_bound_ms)
        fail_msg("the held call completed %llu ms after the link returned, "
                 "bound %u ms",
                 (unsigned long long) ms, heal_bound_ms);
    margo_destroy(call.h);

stop:
    /* The server saw nothing wrong: it stops, and its exit status is its
     * own leak and exactly-once check. */
    assert_int_equal(margo_create(mid, addr, shutdown, &h), HG_SUCCESS);
    assert_int_equal(margo_forward(h, &val), HG_SUCCESS);
    margo_destroy(h);
    assert_int_equal(margo_addr_free(mid, addr), HG_SUCCESS);
    for (int i = 0; i < OM_POLLS && !srv.eof; i++) {
        struct pollfd p = {.fd = srv.fd, .events = POLLIN};

        of_child_poll(&srv);
        if (!srv.eof)
            (void) poll(&p, 1, 100);
    }
    status = of_child_reap(&srv);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("server exit status %#x: its own checks failed", status);
    margo_finalize(mid);
}
