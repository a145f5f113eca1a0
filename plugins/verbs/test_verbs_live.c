/*
 * Tests of the verbs plugin that need a device: real verbs traffic between
 * two classes in this process (and a child process for a peer that is
 * killed), through the public NA API. Without a device each case is
 * skipped with the reason printed; main is in test_verbs.c.
 *
 * Only what is particular to verbs is here: its address strings and
 * peers that go away (connection teardown). What every plugin must do
 * (exchanges, tags with more messages than credits, RMA, cancel, RMA to
 * self, poll_wait sleeping, threads, hostile bytes) is the NA conformance
 * suite, tests/conformance/na_*.c, which the Soft-RoCE VM runs on verbs.
 */
#include "test_verbs.h"
#include "conformance/na_peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_TIMEOUT_MS 20000

static void
peer_open(struct na_peer *p, bool listen)
{
    p->cls = NA_Initialize(test_info(), listen);
    if (p->cls == NULL)
        fail_msg("NA_Initialize(\"%s\") failed with a device present",
                 test_info());
    assert_string_equal(NA_Get_class_name(p->cls), "verbs");
    assert_string_equal(NA_Get_class_protocol(p->cls), "verbs");
    p->ctx = NA_Context_create(p->cls);
    assert_non_null(p->ctx);
}

static void
peer_close(struct na_peer *p)
{
    assert_int_equal(NA_Context_destroy(p->cls, p->ctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p->cls), NA_SUCCESS);
}

/* Progress both peers until *calls reaches want, or fail on timeout. */
static void
progress_until(struct na_peer *a, struct na_peer *b, const int *calls, int want)
{
    const struct na_peer peers[] = {*a, b != NULL ? *b : (struct na_peer){0}};

    if (!na_peers_progress(peers, 2, calls, want, 0,
                           TEST_TIMEOUT_MS * 1000000ull))
        fail_msg("timed out waiting for %d completion(s), have %d", want,
                 *calls);
}

static na_addr_t
lookup_peer(struct na_peer *from, struct na_peer *to)
{
    char name[128];
    size_t size = sizeof(name);
    na_addr_t self, addr;

    assert_int_equal(NA_Addr_self(to->cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Addr_to_string(to->cls, name, &size, self), NA_SUCCESS);
    NA_Addr_free(to->cls, self);
    assert_int_equal(NA_Addr_lookup(from->cls, name, &addr), NA_SUCCESS);
    return addr;
}

void
test_addr_roundtrip_live(void **state)
{
    struct na_peer s;
    char name[128], name2[128];
    size_t size = sizeof(name), size2 = sizeof(name2);
    uint8_t ser[64];
    na_addr_t self, looked, deser;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    assert_int_equal(NA_Addr_self(s.cls, &self), NA_SUCCESS);
    assert_true(NA_Addr_is_self(s.cls, self));
    assert_int_equal(NA_Addr_to_string(s.cls, name, &size, self), NA_SUCCESS);
    print_message("self address: %s\n", name);
    /* Port 0 was replaced by the port actually bound. */
    {
        struct na_verbs_addr_parts parts;

        assert_int_equal(na_verbs_addr_parse(name, &parts), NA_SUCCESS);
        assert_true(parts.has_port && parts.port != 0);
    }
    assert_int_equal(NA_Addr_lookup(s.cls, name, &looked), NA_SUCCESS);
    assert_true(NA_Addr_cmp(s.cls, self, looked));
    assert_int_equal(NA_Addr_to_string(s.cls, name2, &size2, looked),
                     NA_SUCCESS);
    assert_string_equal(name, name2);
    size = 4;
    assert_int_equal(NA_Addr_to_string(s.cls, name2, &size, self), NA_OVERFLOW);
    assert_int_equal(size, strlen(name) + 1);

    assert_true(NA_Addr_get_serialize_size(s.cls, self) <= sizeof(ser));
    assert_int_equal(NA_Addr_serialize(s.cls, ser, sizeof(ser), self),
                     NA_SUCCESS);
    assert_int_equal(
        NA_Addr_deserialize(s.cls, &deser, ser,
                            NA_Addr_get_serialize_size(s.cls, self)),
        NA_SUCCESS);
    assert_true(NA_Addr_cmp(s.cls, self, deser));
    assert_int_not_equal(NA_Addr_deserialize(s.cls, &deser, ser, 3),
                         NA_SUCCESS);
    NA_Addr_free(s.cls, deser);
    NA_Addr_free(s.cls, looked);
    NA_Addr_free(s.cls, self);
    peer_close(&s);
}

/* A peer that goes away turns into error completions, never a hang: a
 * send to an address with no listener fails, and a receive waiting on a
 * peer whose class is finalized fails. */
void
test_peer_gone(void **state)
{
    struct na_peer s, c;
    struct na_result r_send = {0}, r_recv = {0}, r_first = {0}, r_srv = {0};
    char buf[64] = "hello", rbuf[64];
    na_op_id_t *op_send, *op_recv, *s_op;
    na_addr_t srv, nobody;
    char name[128];
    size_t size = sizeof(name);
    uint64_t t0;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    peer_open(&s, true);
    peer_open(&c, false);
    op_send = NA_Op_create(c.cls, 0);
    op_recv = NA_Op_create(c.cls, 0);
    s_op = NA_Op_create(s.cls, 0);

    /* Nobody listens on the client's port (it is not listening). */
    nobody = lookup_peer(&s, &c);
    assert_int_equal(NA_Addr_to_string(s.cls, name, &size, nobody), NA_SUCCESS);
    t0 = now_ms();
    assert_int_equal(NA_Msg_send_unexpected(s.cls, s.ctx, na_record_cb, &r_send,
                                            buf, 6, NULL, nobody, 0, 1, s_op),
                     NA_SUCCESS);
    progress_until(&s, NULL, &r_send.calls, 1);
    print_message("send to %s (no listener): %s after %llu ms\n", name,
                  NA_Error_to_string(r_send.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_send.ret, NA_HOSTUNREACH);
    NA_Addr_free(s.cls, nobody);

    /* Connect, then let the server vanish while the client waits. */
    srv = lookup_peer(&c, &s);
    assert_int_equal(NA_Msg_recv_unexpected(s.cls, s.ctx, na_record_cb, &r_srv,
                                            rbuf, sizeof(rbuf), NULL, s_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, na_record_cb,
                                            &r_first, buf, 6, NULL, srv, 0, 1,
                                            op_send),
                     NA_SUCCESS);
    progress_until(&s, &c, &r_srv.calls, 1);
    progress_until(&s, &c, &r_first.calls, 1);
    assert_int_equal(r_first.ret, NA_SUCCESS);
    NA_Addr_free(s.cls, r_srv.source);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, na_record_cb, &r_recv,
                                          rbuf, sizeof(rbuf), NULL, srv, 0, 5,
                                          op_recv),
                     NA_SUCCESS);
    NA_Op_destroy(s.cls, s_op);
    peer_close(&s);
    t0 = now_ms();
    progress_until(&c, NULL, &r_recv.calls, 1);
    print_message("receive from a finalized peer: %s after %llu ms\n",
                  NA_Error_to_string(r_recv.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_recv.ret, NA_HOSTUNREACH);

    /* Sending again reconnects, which now fails cleanly. */
    r_send.calls = 0;
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, na_record_cb, &r_send,
                                            buf, 6, NULL, srv, 0, 1, op_send),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_send.calls, 1);
    assert_int_equal(r_send.ret, NA_HOSTUNREACH);

    NA_Addr_free(c.cls, srv);
    NA_Op_destroy(c.cls, op_send);
    NA_Op_destroy(c.cls, op_recv);
    peer_close(&c);
}

/* The server is another process, killed with SIGKILL while the client
 * waits for its answer: the kernel tears its connection down, and the
 * client's receive completes with an error instead of hanging. */
static void
crash_child(int fd)
{
    char addr[128], buf[64];
    size_t size = sizeof(addr);
    na_class_t *cls = NA_Initialize(test_info(), true);
    na_context_t *ctx = cls ? NA_Context_create(cls) : NULL;
    na_op_id_t *op = cls ? NA_Op_create(cls, 0) : NULL;
    struct na_result r = {0};
    na_addr_t self;

    if (ctx == NULL || op == NULL || NA_Addr_self(cls, &self) != NA_SUCCESS ||
        NA_Addr_to_string(cls, addr, &size, self) != NA_SUCCESS ||
        NA_Msg_recv_unexpected(cls, ctx, na_record_cb, &r, buf, sizeof(buf),
                               NULL, op) != NA_SUCCESS)
        _exit(2);
    if (write(fd, addr, size) != (ssize_t) size)
        _exit(2);
    while (r.calls == 0) {
        unsigned int n;

        (void) NA_Poll_wait(cls, ctx, 100, &n);
        (void) NA_Trigger(ctx, 16, NULL);
    }
    raise(SIGKILL);
    _exit(3);
}

void
test_peer_killed(void **state)
{
    struct na_peer c;
    struct na_result r_send = {0}, r_recv = {0};
    char addr[128] = {0}, buf[16] = "ping", rbuf[16];
    na_op_id_t *op_send, *op_recv;
    na_addr_t srv;
    int fds[2], status;
    pid_t pid;
    uint64_t t0;

    (void) state;
    SKIP_WITHOUT_DEVICE();
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_child(fds[1]);
    }
    close(fds[1]);
    assert_true(read(fds[0], addr, sizeof(addr) - 1) > 0);
    close(fds[0]);
    peer_open(&c, false);
    assert_int_equal(NA_Addr_lookup(c.cls, addr, &srv), NA_SUCCESS);
    op_send = NA_Op_create(c.cls, 0);
    op_recv = NA_Op_create(c.cls, 0);
    assert_int_equal(NA_Msg_recv_expected(c.cls, c.ctx, na_record_cb, &r_recv,
                                          rbuf, sizeof(rbuf), NULL, srv, 0, 3,
                                          op_recv),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(c.cls, c.ctx, na_record_cb, &r_send,
                                            buf, sizeof(buf), NULL, srv, 0, 1,
                                            op_send),
                     NA_SUCCESS);
    progress_until(&c, NULL, &r_send.calls, 1);
    assert_int_equal(r_send.ret, NA_SUCCESS);
    t0 = now_ms();
    progress_until(&c, NULL, &r_recv.calls, 1);
    print_message("receive from a killed peer: %s after %llu ms\n",
                  NA_Error_to_string(r_recv.ret),
                  (unsigned long long) (now_ms() - t0));
    assert_int_equal(r_recv.ret, NA_HOSTUNREACH);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    NA_Addr_free(c.cls, srv);
    NA_Op_destroy(c.cls, op_send);
    NA_Op_destroy(c.cls, op_recv);
    peer_close(&c);
}
