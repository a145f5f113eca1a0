/*
 * qs_fuzz.h against a Mercury service that records what its handler saw:
 * the fuzzer's bytes reach the handler verbatim, eagerly and through the
 * overflow path; the marker becomes a bulk descriptor the handler can
 * pull from; the response reaches the client; a handler that never
 * answers, or a service that leaks a handle, makes the harness abort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <qs_fuzz.h>

/* What the last handler saw. */
static struct {
    int calls;
    uint8_t bytes[16384];
    size_t size;
    int pulled; /* bytes pulled through a decoded descriptor */
    hg_return_t pull_ret;
    int responses;
} seen;

enum { MODE_ECHO, MODE_SILENT, MODE_LEAK };
static int mode;
static hg_handle_t leaked = HG_HANDLE_NULL;

/* The server's proc: the raw bytes, and a bulk descriptor after the
 * first 4 bytes when they say "BULK". */
struct raw {
    uint8_t *data;
    size_t size;
    hg_bulk_t bulk;
};

static hg_return_t
raw_proc(hg_proc_t proc, void *arg)
{
    struct raw *r = arg;
    hg_size_t left;
    void *p;

    if (hg_proc_get_op(proc) == HG_FREE) {
        if (r->bulk != HG_BULK_NULL)
            HG_Bulk_free(r->bulk);
        r->bulk = HG_BULK_NULL;
        return HG_SUCCESS;
    }
    if (hg_proc_get_op(proc) != HG_DECODE)
        return HG_SUCCESS;
    r->bulk = HG_BULK_NULL;
    left = hg_proc_get_size_left(proc);
    if (left >= 4 && memcmp(hg_proc_get_buf(proc), "BULK", 4) == 0) {
        hg_return_t ret = hg_proc_memcpy(proc, r->data, 4);

        if (ret == HG_SUCCESS)
            ret = hg_proc_hg_bulk_t(proc, &r->bulk);
        r->size = 4;
        return ret;
    }
    r->size = left > sizeof(seen.bytes) ? sizeof(seen.bytes) : left;
    p = hg_proc_save_ptr(proc, left);
    if (p == NULL)
        return HG_OVERFLOW;
    memcpy(r->data, p, r->size);
    return hg_proc_restore_ptr(proc, p, left);
}

static uint8_t pull_buf[64];
static hg_bulk_t pull_local = HG_BULK_NULL;

static hg_return_t
pull_done(const struct hg_cb_info *info)
{
    seen.pull_ret = info->ret;
    seen.pulled = (int) sizeof(pull_buf);
    HG_Bulk_free(pull_local);
    pull_local = HG_BULK_NULL;
    return HG_SUCCESS;
}

static hg_return_t
handler(hg_handle_t h)
{
    struct raw in = {.data = seen.bytes};
    const struct hg_info *info = HG_Get_info(h);

    seen.calls++;
    if (mode == MODE_SILENT)
        return HG_SUCCESS; /* keeps the handle, never answers */
    if (HG_Get_input(h, &in) == HG_SUCCESS) {
        seen.size = in.size;
        if (in.bulk != HG_BULK_NULL) {
            void *p = pull_buf;
            hg_size_t n = sizeof(pull_buf);

            HG_Bulk_create(info->hg_class, 1, &p, &n, HG_BULK_WRITE_ONLY,
                           &pull_local);
            seen.pull_ret = HG_OTHER_ERROR;
            /* Completes during the harness's progress: pull_done. */
            HG_Bulk_transfer(info->context, pull_done, NULL, HG_BULK_PULL,
                             info->addr, in.bulk, 0, pull_local, 0, n, NULL);
        }
        HG_Free_input(h, &in);
    }
    if (mode == MODE_LEAK) {
        HG_Respond(h, NULL, NULL, &(struct raw){0});
        leaked = h;
        return HG_SUCCESS;
    }
    HG_Respond(h, NULL, NULL, &(struct raw){0});
    seen.responses++;
    HG_Destroy(h);
    return HG_SUCCESS;
}

static hg_return_t
reg(hg_class_t *cls, hg_context_t *ctx, void *arg)
{
    (void) ctx;
    (void) arg;
    return HG_Register_name(cls, "raw", raw_proc, raw_proc, handler) != 0
               ? HG_SUCCESS
               : HG_OTHER_ERROR;
}

static const char *const rpcs[] = {"raw", NULL};
static const struct qs_fuzz_service svc = {.hg_register = reg,
                                           .rpc_names = rpcs};

static void
test_bytes_verbatim(void **state)
{
    uint8_t big[10000];

    (void) state;
    memset(&seen, 0, sizeof(seen));
    mode = MODE_ECHO;
    assert_int_equal(qs_fuzz_rpc(&svc, "raw", (const uint8_t *) "hello", 5), 0);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.size, 5);
    assert_memory_equal(seen.bytes, "hello", 5);
    assert_int_equal(seen.responses, 1);
    /* Past the eager size: the overflow path. */
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t) (i * 7);
    memset(&seen, 0, sizeof(seen));
    qs_fuzz_rpc(&svc, "raw", big, sizeof(big));
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.size, sizeof(big));
    assert_memory_equal(seen.bytes, big, sizeof(big));
    /* Nothing at all is an input too. */
    memset(&seen, 0, sizeof(seen));
    qs_fuzz_rpc(&svc, "raw", NULL, 0);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.size, 0);
}

static void
test_bulk_marker(void **state)
{
    const char in[] = "BULK" QS_FUZZ_BULK_MARKER;

    (void) state;
    memset(&seen, 0, sizeof(seen));
    mode = MODE_ECHO;
    qs_fuzz_rpc(&svc, "raw", (const uint8_t *) in, sizeof(in) - 1);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.pulled, 64);
    if (seen.pull_ret != HG_SUCCESS)
        fail_msg("pull: %s", HG_Error_to_string(seen.pull_ret));
    /* The client region's pattern: byte i is i * 31 + 7. */
    assert_int_equal(pull_buf[0], 7);
    assert_int_equal(pull_buf[1], 38);
    assert_int_equal(pull_buf[63], (uint8_t) (63 * 31 + 7));
}

static void
test_sequence(void **state)
{
    /* seed, then: forward raw "abc" (deadline 20 ms), progress 5 ms,
     * loss fault, forward, cancel it, heal, restart the server, forward. */
    static const uint8_t prog[] = {0, 3, 0, 0, 3, 2, 'a', 'b', 'c', 4,
                                   5, 5, 0, 1, 0, 2, 2,   'x', 'y', 3,
                                   1, 6, 7, 2, 0, 1, 3,   'z'};

    (void) state;
    memset(&seen, 0, sizeof(seen));
    mode = MODE_ECHO;
    assert_int_equal(qs_fuzz_sequence(&svc, prog, sizeof(prog)), 0);
    assert_true(seen.calls >= 2);
    assert_int_equal(qs_fuzz_sequence(&svc, NULL, 0), 0);
}

/* Run fn in a child; it must abort with a qs_fuzz message. */
static void
expect_abort(void (*fn)(void))
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL); /* cmocka's handler would catch it */
        fn();
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void
run_silent(void)
{
    mode = MODE_SILENT;
    qs_fuzz_rpc(&svc, "raw", (const uint8_t *) "x", 1);
}

static void
run_leak(void)
{
    mode = MODE_LEAK;
    qs_fuzz_rpc(&svc, "raw", (const uint8_t *) "x", 1);
}

static void
run_unknown_rpc(void)
{
    mode = MODE_ECHO;
    qs_fuzz_rpc(&svc, "nope", (const uint8_t *) "x", 1);
}

static void
test_violations_abort(void **state)
{
    (void) state;
    expect_abort(run_silent);
    expect_abort(run_leak);
    expect_abort(run_unknown_rpc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_verbatim),
        cmocka_unit_test(test_bulk_marker),
        cmocka_unit_test(test_sequence),
        cmocka_unit_test(test_violations_abort),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
