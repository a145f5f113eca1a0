/*
 * RMA on na+sm when the kernel refuses process_vm_readv/writev: a forked
 * peer makes itself undumpable and this process gives up CAP_SYS_PTRACE
 * for the test, which is what Yama's ptrace_scope or a container does to
 * unrelated processes. A class with QS_SM_RMA=vm must then fail a get
 * with NA_PERMISSION (this proves the kernel refuses here; if it does not,
 * the test is skipped), and a class with the default (auto) must move the
 * connection to RMA through the rings and get and put the right bytes.
 * Waits are NA_Poll_wait with a bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"

#include <linux/capability.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REGION (1u << 20)
#define PUT_SIZE (64u * 1024u)
#define WAIT_NS (20ull * 1000000000ull)

static uint8_t
pattern(size_t i, int salt)
{
    return (uint8_t) ((i * 131u + (size_t) salt) >> 3);
}

/* The effective capability sets; false where the syscall is refused. */
static bool
caps(struct __user_cap_data_struct d[2], bool set)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3,
                                         .pid = 0};

    return syscall(set ? SYS_capset : SYS_capget, &h, d) == 0;
}

/* The peer: serve a registered region until the parent closes `done`,
 * then exit 0 if the parent's put landed. */
static void
peer_main(int out, int done)
{
    static uint8_t region[REGION];
    na_class_t *cls;
    na_context_t *ctx;
    na_mem_handle_t h;
    na_addr_t self;
    char msg[512];
    size_t n = 256, hs;
    uint64_t deadline;
    int rc = 0;

    if (prctl(PR_SET_DUMPABLE, 0) != 0)
        _exit(10);
    for (size_t i = 0; i < REGION; i++)
        region[i] = pattern(i, 1);
    cls = NA_Initialize("na+sm", true);
    if (cls == NULL || (ctx = NA_Context_create(cls)) == NULL ||
        NA_Addr_self(cls, &self) != NA_SUCCESS ||
        NA_Addr_to_string(cls, msg, &n, self) != NA_SUCCESS ||
        NA_Mem_handle_create(cls, region, REGION, NA_MEM_READWRITE, &h) !=
            NA_SUCCESS ||
        NA_Mem_register(cls, h, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS)
        _exit(11);
    hs = NA_Mem_handle_get_serialize_size(cls, h);
    if (hs > sizeof(msg) - 256 ||
        NA_Mem_handle_serialize(cls, msg + 256, hs, h) != NA_SUCCESS ||
        write(out, msg, 256 + hs) != (ssize_t) (256 + hs))
        _exit(12);
    deadline = NA_Clock_now(cls) + WAIT_NS;
    for (;;) {
        struct pollfd p = {.fd = done, .events = POLLIN};
        NA_Poll_wait(cls, ctx, 1, NULL);
        NA_Trigger(ctx, 64, NULL);
        if (poll(&p, 1, 0) > 0)
            break; /* end of file: the parent is done */
        if (NA_Clock_now(cls) > deadline)
            _exit(13);
    }
    for (size_t i = 0; i < PUT_SIZE; i++)
        if (region[i] != pattern(i, 2))
            rc = 14;
    NA_Mem_deregister(cls, h);
    NA_Mem_handle_free(cls, h);
    NA_Addr_free(cls, self);
    NA_Context_destroy(cls, ctx);
    NA_Finalize(cls);
    _exit(rc);
}

/* One get or put of `size` bytes at offset 0; its completion status. */
static na_return_t
rma(const char *mode, const char *peer, const uint8_t *hbytes, size_t hs,
    bool put, uint8_t *buf, size_t size)
{
    na_class_t *cls;
    na_context_t *ctx;
    na_addr_t addr;
    na_mem_handle_t lh, rh;
    na_op_id_t *op;
    struct na_result r = {0};
    uint64_t deadline;

    setenv("QS_SM_RMA", mode, 1);
    cls = NA_Initialize("na+sm", false);
    unsetenv("QS_SM_RMA");
    assert_non_null(cls);
    ctx = NA_Context_create(cls);
    op = NA_Op_create(cls, 0);
    assert_int_equal(NA_Addr_lookup(cls, peer, &addr), NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(cls, &rh, hbytes, hs),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Mem_handle_create(cls, buf, size, NA_MEM_READWRITE, &lh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(cls, lh, NA_MEM_TYPE_HOST, 0), NA_SUCCESS);
    assert_int_equal((put ? NA_Put : NA_Get)(cls, ctx, na_record_cb, &r, lh, 0,
                                             rh, 0, size, addr, 0, op),
                     NA_SUCCESS);
    deadline = NA_Clock_now(cls) + WAIT_NS;
    while (r.calls == 0 && NA_Clock_now(cls) < deadline) {
        NA_Poll_wait(cls, ctx, 1, NULL);
        NA_Trigger(ctx, 64, NULL);
    }
    assert_int_equal(r.calls, 1);
    NA_Mem_deregister(cls, lh);
    NA_Mem_handle_free(cls, lh);
    NA_Mem_handle_free(cls, rh);
    NA_Addr_free(cls, addr);
    NA_Op_destroy(cls, op);
    assert_int_equal(NA_Context_destroy(cls, ctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    return r.ret;
}

static void
test_rma_refused(void **state)
{
    int out[2], done[2], status = 0;
    struct __user_cap_data_struct saved[2], dropped[2];
    bool had_caps;
    uint8_t msg[512], *buf = malloc(REGION);
    ssize_t n;
    pid_t pid;

    (void) state;
    assert_non_null(buf);
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(done), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(out[0]);
        close(done[1]);
        peer_main(out[1], done[0]);
    }
    close(out[1]);
    close(done[0]);
    n = read(out[0], msg, sizeof(msg));
    assert_true(n > 256);
    msg[255] = '\0';

    /* Without CAP_SYS_PTRACE, an undumpable peer's memory is closed. */
    had_caps = caps(saved, false);
    if (had_caps) {
        memcpy(dropped, saved, sizeof(saved));
        dropped[CAP_SYS_PTRACE / 32].effective &=
            ~(1u << (CAP_SYS_PTRACE % 32));
        assert_true(caps(dropped, true));
    }
    if (rma("vm", (char *) msg, msg + 256, (size_t) n - 256, false, buf,
            PUT_SIZE) == NA_SUCCESS) {
        if (had_caps)
            caps(saved, true);
        close(done[1]);
        waitpid(pid, &status, 0);
        free(buf);
        skip(); /* this kernel lets us read the peer: nothing to fall back */
    }
    memset(buf, 0, REGION);
    assert_int_equal(rma("auto", (char *) msg, msg + 256, (size_t) n - 256,
                         false, buf, REGION),
                     NA_SUCCESS);
    for (size_t i = 0; i < REGION; i++)
        if (buf[i] != pattern(i, 1))
            fail_msg("byte %zu of the get is %u, want %u", i, buf[i],
                     pattern(i, 1));
    for (size_t i = 0; i < PUT_SIZE; i++)
        buf[i] = pattern(i, 2);
    assert_int_equal(rma("auto", (char *) msg, msg + 256, (size_t) n - 256,
                         true, buf, PUT_SIZE),
                     NA_SUCCESS);
    if (had_caps)
        assert_true(caps(saved, true));
    close(done[1]);
    close(out[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* the put landed */
    free(buf);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rma_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
