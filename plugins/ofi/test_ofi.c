/*
 * Tests of the ofi plugin through the public NA API, once per provider
 * (tcp, served as tcp;ofi_rxm, and sockets). Each test starts a listening
 * class and a client class in this process and drives both of them: the
 * providers progress only when their completion queue is read.
 *
 * A provider missing at run time skips its cases with the reason, and a
 * run in which a case skipped and none failed exits 77, ctest's skip
 * code, so a case that could not run is never counted as passed. The
 * arguments pick the groups (tcp, sockets, common; all without one), so
 * ctest runs each provider as its own case. Nothing sleeps on the wall
 * clock: waiting is NA_Poll_wait with a bound.
 *
 * Only what is particular to ofi is here: its address strings and
 * schemes, the peer cache bound, the strings it refuses, a missing
 * provider. What every plugin must do (exchanges, tags, context ids, RMA,
 * cancel, unreachable peers, threads, hostile bytes) is the NA conformance
 * suite, tests/conformance/na_*.c, run on ofi+tcp (with and without
 * multi-receive buffers) and ofi+sockets.
 *
 * FI_SOCKETS_PE_WAITTIME=0 is set for the sockets provider (unless the
 * environment already sets it): by default its progress thread spins for
 * 10 ms after each event and competes with the test for the CPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"
#include "na_ofi_internal.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Upper bound on any wait in these tests. */
#define TEST_TIMEOUT_NS (20ull * 1000000000ull)

/* One run of the suite: a provider, and whether multi-receive is off. */
struct config {
    const char *protocol;
    bool no_multi_recv;
    unsigned int multi_recv_op_max; /* 0: the plugin's default */
};

struct fixture {
    const struct config *config;
    const char *protocol;
    na_class_t *srv, *cli;
    na_context_t *sctx, *cctx;
    na_addr_t srv_addr; /* the server as the client looked it up */
};

/* Drive both classes until *calls reaches want, or fail after the bound. */
static bool
progress_until(struct fixture *fx, const int *calls, int want)
{
    const struct na_peer peers[] = {{fx->srv, fx->sctx}, {fx->cli, fx->cctx}};

    return na_peers_progress(peers, 2, calls, want, 1, TEST_TIMEOUT_NS);
}

/* Drain both contexts so a late duplicate completion would be seen. */
static void
progress_some(struct fixture *fx, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        NA_Poll(fx->srv, fx->sctx, NULL);
        NA_Trigger(fx->sctx, 64, NULL);
        NA_Poll(fx->cli, fx->cctx, NULL);
        NA_Trigger(fx->cctx, 64, NULL);
    }
}

static void
info_string(char *buf, size_t size, const char *protocol)
{
    snprintf(buf, size, "ofi+%s://127.0.0.1:0", protocol);
}

static int
setup(void **state)
{
    const struct config *config = *state;
    struct na_init_info init_info = NA_INIT_INFO_INITIALIZER;
    struct fixture *fx = calloc(1, sizeof(*fx));
    char info[64], addr[128];
    size_t addr_size = sizeof(addr);
    na_addr_t self;

    if (fx == NULL)
        return -1;
    fx->config = config;
    fx->protocol = config->protocol;
    init_info.no_multi_recv = config->no_multi_recv;
    init_info.multi_recv_op_max = config->multi_recv_op_max;
    info_string(info, sizeof(info), fx->protocol);
    fx->srv = NA_Initialize_opt2(info, true, NA_VERSION(6, 0), &init_info);
    if (fx->srv == NULL) {
        /* The plugin already printed why; the cases report the skip. */
        *state = fx;
        return 0;
    }
    fx->cli = NA_Initialize_opt2(info, false, NA_VERSION(6, 0), &init_info);
    fx->sctx = NA_Context_create(fx->srv);
    fx->cctx = fx->cli ? NA_Context_create(fx->cli) : NULL;
    if (fx->cli == NULL || fx->sctx == NULL || fx->cctx == NULL)
        return -1;
    if (NA_Addr_self(fx->srv, &self) != NA_SUCCESS ||
        NA_Addr_to_string(fx->srv, addr, &addr_size, self) != NA_SUCCESS ||
        NA_Addr_lookup(fx->cli, addr, &fx->srv_addr) != NA_SUCCESS)
        return -1;
    NA_Addr_free(fx->srv, self);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *fx = *state;
    int rc = 0;

    if (fx->srv_addr != NULL)
        NA_Addr_free(fx->cli, fx->srv_addr);
    if (fx->cctx != NULL && NA_Context_destroy(fx->cli, fx->cctx) != NA_SUCCESS)
        rc = -1;
    if (fx->sctx != NULL && NA_Context_destroy(fx->srv, fx->sctx) != NA_SUCCESS)
        rc = -1;
    if (fx->cli != NULL && NA_Finalize(fx->cli) != NA_SUCCESS)
        rc = -1;
    if (fx->srv != NULL && NA_Finalize(fx->srv) != NA_SUCCESS)
        rc = -1;
    *state = (void *) fx->config;
    free(fx);
    return rc;
}

/* Cases that skipped, and the first one's reason: with no failure, the
 * process exits 77 and says why on its last line. */
static int skipped;
static char skip_reason[160];

#define skip_because(...)                                                      \
    do {                                                                       \
        print_message(__VA_ARGS__);                                            \
        if (skipped++ == 0)                                                    \
            snprintf(skip_reason, sizeof(skip_reason), __VA_ARGS__);           \
        skip();                                                                \
    } while (0)

/* Every case starts here: a provider that did not come up is a skip. */
static struct fixture *
fixture_or_skip(void **state)
{
    struct fixture *fx = *state;

    if (fx->srv == NULL)
        skip_because("ofi+%s is not available here (see the message above); "
                     "skipping\n",
                     fx->protocol);
    return fx;
}

static void
test_addr_roundtrip(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    char str[128], prefix[64], again[128];
    size_t size = 0, str_size = sizeof(str), again_size = sizeof(again);
    na_addr_t self, looked_up, deser;
    uint8_t ser[64];
    size_t ser_size;

    assert_int_equal(NA_Addr_self(fx->srv, &self), NA_SUCCESS);
    assert_true(NA_Addr_is_self(fx->srv, self));

    /* Size probe, then too small, then exact. */
    assert_int_equal(NA_Addr_to_string(fx->srv, NULL, &size, self), NA_SUCCESS);
    assert_true(size > 1);
    str_size = size - 1;
    assert_int_equal(NA_Addr_to_string(fx->srv, str, &str_size, self),
                     NA_OVERFLOW);
    assert_int_equal(str_size, size);
    assert_int_equal(NA_Addr_to_string(fx->srv, str, &str_size, self),
                     NA_SUCCESS);
    snprintf(prefix, sizeof(prefix), "ofi+%s://127.0.0.1:", fx->protocol);
    assert_memory_equal(str, prefix, strlen(prefix));
    assert_true(atoi(str + strlen(prefix)) > 0); /* a real port */

    /* Looking the string up on the server itself gives self back. */
    assert_int_equal(NA_Addr_lookup(fx->srv, str, &looked_up), NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->srv, looked_up, self));
    assert_true(NA_Addr_is_self(fx->srv, looked_up));
    NA_Addr_free(fx->srv, looked_up);

    /* On the client the same string is a peer, and prints the same. */
    assert_false(NA_Addr_is_self(fx->cli, fx->srv_addr));
    assert_int_equal(
        NA_Addr_to_string(fx->cli, again, &again_size, fx->srv_addr),
        NA_SUCCESS);
    assert_string_equal(again, str);

    /* Serialize / deserialize round trip. */
    ser_size = NA_Addr_get_serialize_size(fx->cli, fx->srv_addr);
    assert_true(ser_size > 0 && ser_size <= sizeof(ser));
    assert_int_equal(
        NA_Addr_serialize(fx->cli, ser, ser_size - 1, fx->srv_addr),
        NA_OVERFLOW);
    assert_int_equal(NA_Addr_serialize(fx->cli, ser, ser_size, fx->srv_addr),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_deserialize(fx->cli, &deser, ser, ser_size),
                     NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->cli, deser, fx->srv_addr));
    NA_Addr_free(fx->cli, deser);

    /* Truncated and corrupted bytes are refused. */
    assert_int_not_equal(NA_Addr_deserialize(fx->cli, &deser, ser, 3),
                         NA_SUCCESS);
    ser[0] ^= 0xff;
    assert_int_not_equal(NA_Addr_deserialize(fx->cli, &deser, ser, ser_size),
                         NA_SUCCESS);

    /* The scheme with the provider's full name is the same peer. */
    if (strcmp(fx->protocol, "tcp") == 0) {
        char rxm[160];
        snprintf(rxm, sizeof(rxm), "ofi+tcp;ofi_rxm://%s",
                 str + strlen("ofi+tcp://"));
        assert_int_equal(NA_Addr_lookup(fx->cli, rxm, &looked_up), NA_SUCCESS);
        assert_true(NA_Addr_cmp(fx->cli, looked_up, fx->srv_addr));
        NA_Addr_free(fx->cli, looked_up);
    }
    NA_Addr_free(fx->srv, self);
}

static void exchange(struct fixture *fx, size_t size, bool use_msg_buf);

/* A removed peer is forgotten: the next lookup of its name makes a new
 * address (interned addresses of one peer otherwise compare equal), and
 * messages flow through it. */
static void
test_addr_set_remove(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    char str[128];
    size_t size = sizeof(str);
    na_addr_t old = fx->srv_addr, same, fresh, self;

    assert_int_equal(NA_Addr_to_string(fx->cli, str, &size, old), NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(fx->cli, str, &same), NA_SUCCESS);
    assert_true(NA_Addr_cmp(fx->cli, same, old));
    NA_Addr_free(fx->cli, same);

    assert_int_equal(NA_Addr_set_remove(fx->cli, old), NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(fx->cli, str, &fresh), NA_SUCCESS);
    assert_false(NA_Addr_cmp(fx->cli, fresh, old));
    fx->srv_addr = fresh;
    NA_Addr_free(fx->cli, old);
    exchange(fx, 64, false);

    /* The class's own address cannot be removed; NULLs are refused. */
    assert_int_equal(NA_Addr_self(fx->srv, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_set_remove(fx->srv, self), NA_INVALID_ARG);
    NA_Addr_free(fx->srv, self);
    assert_int_equal(NA_Addr_set_remove(NULL, fresh), NA_INVALID_ARG);
    assert_int_equal(NA_Addr_set_remove(fx->cli, NA_ADDR_NULL), NA_INVALID_ARG);
}

static void
fill(uint8_t *buf, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (uint8_t) (seed + i * 7);
}

/*
 * An unexpected message carries its tag and a source the receiver can
 * answer to; the answer is an expected message matched by tag.
 */
static void
exchange(struct fixture *fx, size_t size, bool use_msg_buf)
{
    size_t max = NA_Msg_get_max_unexpected_size(fx->cli);
    void *sdata = NULL, *rdata = NULL;
    uint8_t *sbuf = malloc(max), *rbuf = malloc(max), reply[64], rreply[64];
    char src[128], cli[128];
    size_t src_size = sizeof(src), cli_size = sizeof(cli);
    struct na_result s = {0}, r = {0}, rs = {0}, rr = {0};
    na_op_id_t *s_op = NA_Op_create(fx->cli, 0);
    na_op_id_t *r_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *rs_op = NA_Op_create(fx->srv, 0);
    na_op_id_t *rr_op = NA_Op_create(fx->cli, 0);
    na_addr_t cli_self;

    if (use_msg_buf) {
        free(sbuf);
        free(rbuf);
        sbuf = NA_Msg_buf_alloc(fx->cli, max, 0, &sdata);
        rbuf = NA_Msg_buf_alloc(fx->srv, max, 0, &rdata);
    }
    assert_non_null(sbuf);
    assert_non_null(rbuf);
    fill(sbuf, size, 3);
    memset(rbuf, 0, max);

    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb, &r,
                                            rbuf, max, rdata, r_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(fx->cli, fx->cctx, na_record_cb, &rr,
                                          rreply, sizeof(rreply), NULL,
                                          fx->srv_addr, 0, 0x1234, rr_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb, &s,
                                            sbuf, size, sdata, fx->srv_addr, 0,
                                            42, s_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &r.calls, 1));
    assert_true(progress_until(fx, &s.calls, 1));
    assert_int_equal(s.ret, NA_SUCCESS);
    assert_int_equal(r.ret, NA_SUCCESS);
    assert_int_equal(r.size, size);
    assert_int_equal(r.tag, 42);
    assert_memory_equal(rbuf, sbuf, size);

    /* The source is the client, as the client prints itself. */
    assert_non_null(r.source);
    assert_int_equal(NA_Addr_to_string(fx->srv, src, &src_size, r.source),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_self(fx->cli, &cli_self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(fx->cli, cli, &cli_size, cli_self),
                     NA_SUCCESS);
    NA_Addr_free(fx->cli, cli_self);
    assert_string_equal(src, cli);

    /* Answer through the source address. */
    fill(reply, sizeof(reply), 9);
    assert_int_equal(NA_Msg_send_expected(fx->srv, fx->sctx, na_record_cb, &rs,
                                          reply, sizeof(reply), NULL, r.source,
                                          0, 0x1234, rs_op),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &rr.calls, 1));
    assert_true(progress_until(fx, &rs.calls, 1));
    assert_int_equal(rs.ret, NA_SUCCESS);
    assert_int_equal(rr.ret, NA_SUCCESS);
    assert_int_equal(rr.size, sizeof(reply));
    assert_memory_equal(rreply, reply, sizeof(reply));

    progress_some(fx, 10);
    assert_int_equal(s.calls + r.calls + rs.calls + rr.calls, 4);
    NA_Addr_free(fx->srv, r.source);
    assert_int_equal(NA_Op_destroy(fx->cli, s_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, r_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->srv, rs_op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(fx->cli, rr_op), NA_SUCCESS);
    if (use_msg_buf) {
        NA_Msg_buf_free(fx->cli, sbuf, sdata);
        NA_Msg_buf_free(fx->srv, rbuf, rdata);
    } else {
        free(sbuf);
        free(rbuf);
    }
}

/* Peers the cache holds (and the address vector with them). */
static size_t
addr_cache_count(na_class_t *na_class)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    size_t n;

    pthread_mutex_lock(&cls->addr_lock);
    n = cls->addr_count;
    pthread_mutex_unlock(&cls->addr_lock);
    return n;
}

/* Many distinct peers looked up, or decoded from bytes a peer sent, and
 * freed: the cache drops unreferenced peers past its bound, so it never
 * holds more than NA_OFI_ADDR_CACHE_MAX, and never drops a held one. */
static void
test_addr_cache_bound(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    uint8_t buf[64];
    char name[64];
    na_addr_t a;
    size_t n;

    for (unsigned i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "ofi+%s://10.%u.%u.1:%u", fx->protocol,
                 i / 250, i % 250, 1000 + i);
        assert_int_equal(NA_Addr_lookup(fx->cli, name, &a), NA_SUCCESS);
        NA_Addr_free(fx->cli, a);
    }
    assert_true(addr_cache_count(fx->cli) <= NA_OFI_ADDR_CACHE_MAX);
    /* The same through NA_Addr_deserialize, from one serialized peer with
     * its address bytes rewritten. */
    snprintf(name, sizeof(name), "ofi+%s://10.200.0.1:1000", fx->protocol);
    assert_int_equal(NA_Addr_lookup(fx->cli, name, &a), NA_SUCCESS);
    n = NA_Addr_get_serialize_size(fx->cli, a);
    assert_true(n >= 1 + NA_OFI_WIRE_ADDR_SIZE && n <= sizeof(buf));
    assert_int_equal(NA_Addr_serialize(fx->cli, buf, n, a), NA_SUCCESS);
    NA_Addr_free(fx->cli, a);
    for (unsigned i = 0; i < 3000; i++) {
        buf[3] = (uint8_t) (201 + i / 250); /* 10.<201..212>.<i%250>.1 */
        buf[4] = (uint8_t) (i % 250);
        assert_int_equal(NA_Addr_deserialize(fx->cli, &a, buf, n), NA_SUCCESS);
        NA_Addr_free(fx->cli, a);
    }
    assert_true(addr_cache_count(fx->cli) <= NA_OFI_ADDR_CACHE_MAX);
    exchange(fx, 8, false); /* the held server address still works */
}

static void
test_bad_strings(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    static const char *bad_init[] = {
        "ofi+tcp://256.1.1.1:x",
        "ofi+nosuchprov://",
        "",
        "ofi+tcp://1.2.3",
        "ofi+tcp://127.0.0.1:65536",
        "ofi+tcp://127.0.0.1:-1",
        "ofi+sockets://example.invalid:1",
        "ofi+tcp://198.51.100.7:0", /* TEST-NET-2: not an address of ours */
    };
    static const char *bad_lookup[] = {
        "",
        "ofi+tcp://",
        "ofi+tcp://256.1.1.1:1",
        "ofi+tcp://1.2.3.4:x",
        "ofi+tcp://1.2.3.4:0",
        "ofi+tcp://1.2.3.4",
        "ofi+tcp://1.2.3.4:99999",
        "ofi+verbs://1.2.3.4:5",
        "ofi+tcp://0.0.0.0:5",
        "1.2.3.4:",
        "ofi+tcp://[::1]:5",
        "ofi+tcp://1.2.3.4:5:6",
    };
    na_addr_t addr;

    for (size_t i = 0; i < sizeof(bad_init) / sizeof(bad_init[0]); i++) {
        na_class_t *c = NA_Initialize(bad_init[i], false);
        if (c != NULL)
            fail_msg("NA_Initialize(\"%s\") succeeded", bad_init[i]);
    }
    for (size_t i = 0; i < sizeof(bad_lookup) / sizeof(bad_lookup[0]); i++) {
        na_return_t ret = NA_Addr_lookup(fx->cli, bad_lookup[i], &addr);
        if (ret == NA_SUCCESS)
            fail_msg("NA_Addr_lookup(\"%s\") succeeded", bad_lookup[i]);
    }
}

/*
 * With no provider of that name in the process, initialization fails and
 * says which provider it wanted. libfabric reads FI_PROVIDER once per
 * process, so this runs in a child started with FI_PROVIDER=shm.
 */
static int
child_missing_provider(void)
{
    na_class_t *c = NA_Initialize("ofi+tcp://127.0.0.1:0", true);
    return c == NULL ? 0 : 1;
}

/* Run this program with `arg` and `envp`; its stderr into `out`. Returns
 * its exit status (or -1 when it did not exit). */
static int
run_child(const char *arg, char *const envp[], char *out, size_t size)
{
    char *argv[] = {"test_ofi", (char *) arg, NULL};
    int pipefd[2], status;
    posix_spawn_file_actions_t fa;
    pid_t pid;
    size_t len = 0;
    ssize_t n;

    assert_int_equal(pipe(pipefd), 0);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, envp),
                     0);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    while (len < size - 1 &&
           (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
        len += (size_t) n;
    out[len] = '\0';
    close(pipefd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    print_message("child said: %s", out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
test_missing_provider(void **state)
{
    char *envp[] = {"FI_PROVIDER=shm", "QS_OFI_TCP=libfabric", NULL};
    char out[4096];

    (void) state;
    assert_int_equal(run_child("--missing-provider", envp, out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "tcp;ofi_rxm"));
}

/*
 * ofi+shm: the provider names the endpoint (FI_ADDR_STR), printed as
 * "ofi+shm://<pid>:<d>:<e>" for this process; that string and the
 * serialized address come back to the same address, a name of our own
 * choosing is refused with the reason, and so are names that are not of
 * the provider's form.
 */
#define assert_ok(expr) assert_int_equal((expr), NA_SUCCESS)

static void
test_shm_addresses(void **state)
{
    na_class_t *c = NA_Initialize("ofi+shm", true);
    char str[128], want[64];
    size_t size = sizeof(str);
    uint8_t ser[64];
    na_addr_t self, back;
    static const char *const bad[] = {
        "ofi+shm://",        "ofi+shm://1",
        "ofi+shm://0:0:0",   "ofi+shm://1:0",
        "ofi+shm://1:255:0", "ofi+shm://1:0:256",
        "ofi+shm://x:0:0",   "ofi+shm://1:0:0:0",
        "ofi+tcp://1:0:0",   "ofi+shm://99999999999:0:0"};

    (void) state;
    if (c == NULL)
        skip_because("ofi+shm is not available here; skipping\n");
    assert_ok(NA_Addr_self(c, &self));
    assert_ok(NA_Addr_to_string(c, str, &size, self));
    snprintf(want, sizeof(want), "ofi+shm://%d:", (int) getpid());
    print_message("ofi+shm self: %s\n", str);
    assert_true(strncmp(str, want, strlen(want)) == 0);
    assert_ok(NA_Addr_lookup(c, str, &back));
    assert_ptr_equal(back, self);
    NA_Addr_free(c, back);
    size = NA_Addr_get_serialize_size(c, self);
    assert_true(size <= sizeof(ser));
    assert_ok(NA_Addr_serialize(c, ser, size, self));
    assert_ok(NA_Addr_deserialize(c, &back, ser, size));
    assert_ptr_equal(back, self);
    NA_Addr_free(c, back);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_not_equal(NA_Addr_lookup(c, bad[i], &back), NA_SUCCESS);
    NA_Addr_free(c, self);
    assert_ok(NA_Finalize(c));
    assert_null(NA_Initialize("ofi+shm://myname", true));
}

/*
 * A killed process leaves its shm regions in /dev/shm ("<pid>:<d>:<e>");
 * when its pid is recycled, the new owner finds its own endpoint names
 * taken by a region whose pid (its own) is alive, and libfabric refuses to
 * open the endpoint (FI_EBUSY). The child plants such leftovers under its
 * own pid before its first ofi+shm class, which must open all the same.
 */
static int
child_stale_shm(void)
{
    char path[64];
    na_class_t *c;
    int rc;

    for (int e = 0; e < 4; e++) {
        static const char zeros[4096];
        FILE *f;

        snprintf(path, sizeof(path), "/dev/shm/%d:0:%d", (int) getpid(), e);
        f = fopen(path, "w");
        if (f == NULL || fwrite(zeros, sizeof(zeros), 1, f) != 1)
            return 3;
        fclose(f);
    }
    c = NA_Initialize("ofi+shm", true);
    rc = c != NULL && NA_Finalize(c) == NA_SUCCESS ? 0 : 1;
    for (int e = 0; e < 4; e++) { /* what is left of the plant */
        snprintf(path, sizeof(path), "/dev/shm/%d:0:%d", (int) getpid(), e);
        unlink(path);
    }
    return rc;
}

static void
test_shm_stale_region(void **state)
{
    char *envp[] = {NULL};
    char out[4096];
    na_class_t *c;
    int rc;

    (void) state;
    c = NA_Initialize("ofi+shm", true);
    if (c == NULL)
        skip_because("ofi+shm is not available here; skipping\n");
    assert_int_equal(NA_Finalize(c), NA_SUCCESS);
    rc = run_child("--stale-shm", envp, out, sizeof(out));
    assert_int_equal(rc, 0);
}

#define OFI_TESTS                                                              \
    cmocka_unit_test_setup_teardown(test_addr_roundtrip, setup, teardown),     \
        cmocka_unit_test_setup_teardown(test_addr_cache_bound, setup,          \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_bad_strings, setup, teardown),    \
        cmocka_unit_test_setup_teardown(test_addr_set_remove, setup,           \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(test_forged_source, setup, teardown)

/* Send `text` from the client to the server as an unexpected message and
 * wait for the send to complete. */
static void
send_one(struct fixture *fx, const char *text)
{
    size_t len = strlen(text) + 1;
    void *sdata, *sbuf = NA_Msg_buf_alloc(fx->cli, len, 0, &sdata);
    na_op_id_t *sop = NA_Op_create(fx->cli, 0);
    struct na_result sent = {0};

    assert_non_null(sbuf);
    memcpy(sbuf, text, len);
    assert_int_equal(NA_Msg_send_unexpected(fx->cli, fx->cctx, na_record_cb,
                                            &sent, sbuf, len, sdata,
                                            fx->srv_addr, 0, 9, sop),
                     NA_SUCCESS);
    assert_true(progress_until(fx, &sent.calls, 1));
    assert_int_equal(sent.ret, NA_SUCCESS);
    NA_Op_destroy(fx->cli, sop);
    NA_Msg_buf_free(fx->cli, sbuf, sdata);
}

/*
 * A peer whose header claims another peer's address: the provider says
 * (FI_SOURCE) which peer the message came from, so once the server knows
 * the real sender, a header naming anyone else is dropped and counted,
 * and the next honest message is the one delivered.
 */
static void
test_forged_source(void **state)
{
    struct fixture *fx = fixture_or_skip(state);
    struct na_ofi_class *scls = na_ofi_class(fx->srv);
    struct na_ofi_class *ccls = na_ofi_class(fx->cli);
    size_t max = NA_Msg_get_max_unexpected_size(fx->srv);
    void *rdata, *rbuf = NA_Msg_buf_alloc(fx->srv, max, 0, &rdata);
    na_op_id_t *rop = NA_Op_create(fx->srv, 0);
    uint8_t saved[NA_OFI_HDR_SIZE];
    struct na_result recv = {0};
    char info[64];
    na_class_t *other;

    if (!scls->fi_source) {
        NA_Op_destroy(fx->srv, rop);
        NA_Msg_buf_free(fx->srv, rbuf, rdata);
        skip_because("ofi+%s does not report message sources "
                     "(FI_SOURCE); skipping\n",
                     fx->protocol);
    }
    /* The peer to impersonate: another class of this process. */
    info_string(info, sizeof(info), fx->protocol);
    other = NA_Initialize(info, true);
    assert_non_null(other);

    /* An honest first message makes the client known to the server. */
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb,
                                            &recv, rbuf, max, rdata, rop),
                     NA_SUCCESS);
    send_one(fx, "honest 1");
    assert_true(progress_until(fx, &recv.calls, 1));
    assert_int_equal(recv.ret, NA_SUCCESS);
    assert_string_equal((char *) rbuf, "honest 1");
    NA_Addr_free(fx->srv, recv.source);

    /* The same client claims to be `other`, then sends honestly again. */
    memset(&recv, 0, sizeof(recv));
    assert_int_equal(NA_Msg_recv_unexpected(fx->srv, fx->sctx, na_record_cb,
                                            &recv, rbuf, max, rdata, rop),
                     NA_SUCCESS);
    memcpy(saved, ccls->hdr_template, sizeof(saved));
    memcpy(ccls->hdr_template + 5, na_ofi_class(other)->hdr_template + 5,
           NA_OFI_HDR_SIZE - 5 - 4);
    send_one(fx, "forged");
    memcpy(ccls->hdr_template, saved, sizeof(saved));
    send_one(fx, "honest 2");
    assert_true(progress_until(fx, &recv.calls, 1));
    assert_int_equal(recv.ret, NA_SUCCESS);
    if (strcmp((char *) rbuf, "honest 2") != 0)
        fail_msg("the server delivered \"%s\": a forged source was accepted",
                 (char *) rbuf);
    assert_int_equal(atomic_load(&scls->forged_dropped), 1);
    NA_Addr_free(fx->srv, recv.source);
    progress_some(fx, 10);
    assert_int_equal(recv.calls, 1);
    NA_Op_destroy(fx->srv, rop);
    NA_Msg_buf_free(fx->srv, rbuf, rdata);
    assert_int_equal(NA_Finalize(other), NA_SUCCESS);
}

/* Whether the command line names group `name`. */
static bool
wanted(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return false;
}

static int
run_provider(const struct config *config)
{
    struct CMUnitTest tests[] = {OFI_TESTS};
    char name[64];

    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        tests[i].initial_state = (void *) config;
    snprintf(name, sizeof(name), "ofi+%s%s%s", config->protocol,
             config->no_multi_recv ? " (no_multi_recv)" : "",
             config->multi_recv_op_max == 1 ? " (multi_recv_op_max 1)" : "");
    return _cmocka_run_group_tests(
        name, tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest common[] = {
        cmocka_unit_test(test_missing_provider),
        cmocka_unit_test(test_shm_addresses),
        cmocka_unit_test(test_shm_stale_region),
    };
    int failed = 0, groups = 0;
    bool all = argc < 2;

    if (argc > 1 && strcmp(argv[1], "--missing-provider") == 0)
        return child_missing_provider();
    if (argc > 1 && strcmp(argv[1], "--stale-shm") == 0)
        return child_stale_shm();
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
    /* The cases every plugin must pass (also with no_multi_recv and with
     * one multi-receive buffer) are the NA conformance suite. */
    static const struct config configs[] = {{"tcp", false, 0},
                                            {"sockets", false, 0}};
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
        if (all || wanted(argc, argv, configs[i].protocol)) {
            failed += run_provider(&configs[i]);
            groups++;
        }
    }
    if (all || wanted(argc, argv, "common")) {
        failed += cmocka_run_group_tests_name("ofi", common, NULL, NULL);
        groups++;
    }
    if (groups == 0) {
        fprintf(stderr, "test_ofi: no group named (tcp, sockets, common)\n");
        return 2;
    }
    if (failed == 0 && skipped > 0) {
        skip_reason[strcspn(skip_reason, "\n")] = '\0';
        fprintf(stderr, "test_ofi: %d case(s) skipped, the first because: %s\n",
                skipped, skip_reason);
        return 77;
    }
    return failed;
}
