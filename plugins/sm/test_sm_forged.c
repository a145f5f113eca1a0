/*
 * A forged source on na+sm: a peer process whose hello claims the name of
 * a class that another process serves. The fabric knows the real peer
 * (SO_PEERCRED of the connection, and of the claimed name's listener), so
 * the connection is refused and counted, its message is never delivered,
 * and the next honest message is the one a receive gets, with the real
 * sender as its source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na.h"
#include "conformance/na_peer.h"
#include "na_sm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Progress `c` until *calls >= want, at most `rounds` 100 ms waits. */
static bool
progress_until(na_class_t *c, na_context_t *ctx, const int *calls, int want,
               int rounds)
{
    for (int i = 0; i < rounds && *calls < want; i++) {
        unsigned n = 0;

        NA_Poll_wait(c, ctx, 100, NULL);
        NA_Trigger(ctx, 64, &n);
    }
    return *calls >= want;
}

/* The forger: its own class, whose name it then overwrites with the
 * victim's, so its hello claims to be the victim. Exits 0 once its send
 * completed, whatever the result. */
static void
forger_main(const char *victim, const char *target)
{
    na_class_t *c = NA_Initialize("na+sm", false);
    na_context_t *ctx = c != NULL ? NA_Context_create(c) : NULL;
    na_op_id_t *op = c != NULL ? NA_Op_create(c, 0) : NULL;
    struct na_result r = {0};
    na_addr_t addr;

    if (ctx == NULL || op == NULL || NA_Addr_lookup(c, target, &addr) != 0)
        _exit(2);
    snprintf(na_sm_class(c)->name, sizeof(na_sm_class(c)->name), "%s", victim);
    if (NA_Msg_send_unexpected(c, ctx, na_record_cb, &r, "forged", 7, NULL,
                               addr, 0, 1, op) != NA_SUCCESS)
        _exit(0);
    progress_until(c, ctx, &r.calls, 1, 100);
    _exit(r.calls == 1 ? 0 : 3);
}

static void
test_forged_source(void **state)
{
    char srv_info[64], vic_info[64], buf[64];
    na_class_t *srv, *vic;
    na_context_t *sctx, *vctx;
    na_op_id_t *rop, *sop;
    na_addr_t vic_self, to_srv;
    struct na_result recv = {0}, sent = {0};
    int status;
    pid_t pid;

    (void) state;
    snprintf(srv_info, sizeof(srv_info), "na+sm://qs-fsrv-%ld",
             (long) getpid());
    snprintf(vic_info, sizeof(vic_info), "na+sm://qs-fvic-%ld",
             (long) getpid());
    srv = NA_Initialize(srv_info, true);
    vic = NA_Initialize(vic_info, true);
    assert_non_null(srv);
    assert_non_null(vic);
    sctx = NA_Context_create(srv);
    vctx = NA_Context_create(vic);
    rop = NA_Op_create(srv, 0);
    sop = NA_Op_create(vic, 0);
    assert_int_equal(NA_Msg_recv_unexpected(srv, sctx, na_record_cb, &recv, buf,
                                            sizeof(buf), NULL, rop),
                     NA_SUCCESS);

    /* Another process claims to be the victim. */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        forger_main(vic_info + strlen("na+sm://"), srv_info);
    /* The victim progresses too: it sees the server's check connect. */
    for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; i++) {
        progress_until(srv, sctx, &recv.calls, 1, 1);
        progress_until(vic, vctx, &sent.calls, 1, 1);
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    progress_until(srv, sctx, &recv.calls, 1, 3);
    if (recv.calls != 0)
        fail_msg("the server delivered \"%s\" from a forged source", buf);
    assert_int_equal(atomic_load(&na_sm_class(srv)->forged_dropped), 1);

    /* The victim itself, honestly: delivered, with the victim as source. */
    assert_int_equal(NA_Addr_lookup(vic, srv_info, &to_srv), NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(vic, vctx, na_record_cb, &sent,
                                            "honest", 7, NULL, to_srv, 0, 1,
                                            sop),
                     NA_SUCCESS);
    for (int i = 0; i < 100 && (recv.calls == 0 || sent.calls == 0); i++) {
        progress_until(vic, vctx, &sent.calls, 1, 1);
        progress_until(srv, sctx, &recv.calls, 1, 1);
    }
    assert_int_equal(sent.calls, 1);
    assert_int_equal(recv.calls, 1);
    assert_int_equal(recv.ret, NA_SUCCESS);
    assert_string_equal(buf, "honest");
    assert_int_equal(NA_Addr_self(vic, &vic_self), NA_SUCCESS);
    {
        char a[64], b[64];
        size_t na = sizeof(a), nb = sizeof(b);

        assert_int_equal(NA_Addr_to_string(srv, a, &na, recv.source),
                         NA_SUCCESS);
        assert_int_equal(NA_Addr_to_string(vic, b, &nb, vic_self), NA_SUCCESS);
        assert_string_equal(a, b);
    }
    assert_int_equal(atomic_load(&na_sm_class(srv)->forged_dropped), 1);

    NA_Addr_free(vic, vic_self);
    NA_Addr_free(srv, recv.source);
    NA_Addr_free(vic, to_srv);
    NA_Op_destroy(srv, rop);
    NA_Op_destroy(vic, sop);
    assert_int_equal(NA_Context_destroy(srv, sctx), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(vic, vctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(srv), NA_SUCCESS);
    assert_int_equal(NA_Finalize(vic), NA_SUCCESS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_forged_source)};

    return cmocka_run_group_tests_name("sm_forged", tests, NULL, NULL);
}
