/*
 * NA conformance: a cancel that races the post it cancels.
 *
 * A second thread cancels each operation while the test's thread posts
 * it, many times over (QS_TEST_RACE_ITERS, default 10,000 per case, 2,000
 * under ThreadSanitizer), and each time the operation must complete
 * exactly once: NA_CANCELED, or (a send, an RMA) the result that won the
 * race. A receive nothing will ever match can end only through the
 * cancel, so a lost cancel shows as a receive that never completes. The
 * core closes this race for every plugin (na_op_start() in
 * lib/na/na_plugin.h), so every plugin runs it.
 *
 * The canceller waits until the core has the op posted before it cancels
 * (it reads the op's core state: white-box, so that every iteration's
 * cancel is one the op must honour, where a cancel of an op still idle
 * would rightly do nothing), then spins a varying while, so that its
 * cancel lands before the plugin started the op, while it starts it, or
 * after the post returned. It counts the cancels issued before the post
 * returned. Runs under ThreadSanitizer in CI.
 */
#include "conformance/na_harness.h"

#include "na/na_plugin.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Under ThreadSanitizer an iteration costs several times more (ofi: about
 * 45 ms), and TSan sees a data race without the timing having to hit it:
 * fewer iterations there keep CI's TSan stage within its time. */
#if defined(__SANITIZE_THREAD__)
#define NA_RACE_ITERS_DEFAULT 2000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NA_RACE_ITERS_DEFAULT 2000
#endif
#endif
#ifndef NA_RACE_ITERS_DEFAULT
#define NA_RACE_ITERS_DEFAULT 10000
#endif
/* Budget of one iteration's completion, on the NA clock. A cancelled op
 * completes at the next progress; this much means it never will. */
#define NA_RACE_WAIT_MS 5000u

struct racer {
    pthread_t thread;
    na_class_t *cls;
    na_context_t *ctx;
    _Atomic(na_op_id_t *) op; /* what this round cancels            */
    atomic_uint round;        /* bumped by the poster to start one   */
    atomic_uint ready;        /* the canceller watches this round    */
    atomic_uint done;         /* the last round the canceller ended  */
    atomic_bool posted;       /* the post of this round returned     */
    atomic_bool stop;
    unsigned during; /* cancels issued before the post returned      */
};

static unsigned
race_iters(void)
{
    const char *s = getenv("QS_TEST_RACE_ITERS");
    long n = s != NULL ? strtol(s, NULL, 10) : 0;

    return n > 0 ? (unsigned) n : NA_RACE_ITERS_DEFAULT;
}

static void
spin(unsigned n)
{
    for (volatile unsigned i = 0; i < n; i++)
        ;
}

static void *
racer_main(void *arg)
{
    struct racer *r = arg;
    unsigned last = 0;

    for (;;) {
        unsigned round;
        na_op_id_t *op;
        bool before;

        while ((round = atomic_load(&r->round)) == last) {
            if (atomic_load(&r->stop))
                return NULL;
            sched_yield();
        }
        last = round;
        op = atomic_load(&r->op);
        atomic_store(&r->ready, round);
        /* The core claims the op before the plugin sees it: from then
         * on, a cancel must reach this post. */
        for (unsigned k = 0; na_op_state(na_op_base(op)) == NA_OP_IDLE; k++)
            if (k >= 1000)
                sched_yield(); /* the poster lost its core: let it run */
        /* Mostly short: most posts take well under a microsecond. */
        spin((round * 37u) % (round % 4 == 0 ? 256u : 24u));
        before = !atomic_load(&r->posted);
        (void) NA_Cancel(r->cls, r->ctx, op);
        if (before)
            r->during++;
        atomic_store(&r->done, round);
    }
}

static void
racer_start(struct racer *r, na_class_t *cls, na_context_t *ctx)
{
    memset(r, 0, sizeof(*r));
    r->cls = cls;
    r->ctx = ctx;
    assert_int_equal(pthread_create(&r->thread, NULL, racer_main, r), 0);
}

static void
racer_stop(struct racer *r)
{
    atomic_store(&r->stop, true);
    assert_int_equal(pthread_join(r->thread, NULL), 0);
}

/* Before the post of round `round` of `op`. */
static void
racer_arm(struct racer *r, na_op_id_t *op, unsigned round)
{
    atomic_store(&r->posted, false);
    atomic_store(&r->op, op);
    atomic_store(&r->round, round);
    while (atomic_load(&r->ready) != round)
        sched_yield();
}

/* After the post returned: wait until the canceller has cancelled. */
static void
racer_wait(struct racer *r, unsigned round)
{
    atomic_store(&r->posted, true);
    while (atomic_load(&r->done) != round)
        sched_yield();
}

/* Drive until the op of iteration i completed; fail if it never does. */
static void
race_drive(struct na_env *env, struct na_result *res, const char *what,
           unsigned i)
{
    if (na_try_drive(env, &res->calls, 1, NA_RACE_WAIT_MS) < 0)
        fail_msg("%s, iteration %u: no completion after a cancel (lost)", what,
                 i);
}

/* Both outcomes of a race, and the check that no completion was doubled
 * (a late second call would raise some calls above 1). */
static void
race_report(struct na_env *env, const char *what, struct na_result *res,
            unsigned n, const struct racer *r, bool success_ok)
{
    unsigned canceled = 0, succeeded = 0;

    na_settle(env, 10);
    for (unsigned i = 0; i < n; i++) {
        if (res[i].calls != 1)
            fail_msg("%s, iteration %u: %d completions", what, i, res[i].calls);
        if (res[i].ret == NA_CANCELED)
            canceled++;
        else if (res[i].ret == NA_SUCCESS && success_ok)
            succeeded++;
        else
            fail_msg("%s, iteration %u: completed with %s", what, i,
                     NA_Error_to_string(res[i].ret));
    }
    print_message("%s: %u iterations, %u canceled, %u succeeded, %u cancels "
                  "issued before the post returned\n",
                  what, n, canceled, succeeded, r->during);
}

/* A receive that nothing matches: only the cancel can end it. */
static void
recv_race(struct na_env *env, bool unexpected)
{
    const char *what = unexpected ? "recv_unexpected" : "recv_expected";
    unsigned n = race_iters();
    struct na_result *res = calloc(n, sizeof(*res));
    na_class_t *cls = unexpected ? env->srv : env->cli;
    na_context_t *ctx = unexpected ? env->sctx1 : env->cctx;
    na_op_id_t *op = NA_Op_create(cls, 0);
    unsigned char buf[64];
    struct racer r;

    assert_non_null(res);
    assert_non_null(op);
    racer_start(&r, cls, ctx);
    for (unsigned i = 0; i < n; i++) {
        racer_arm(&r, op, i + 1);
        /* Nothing is sent to the server's context 1, nor with tag 9 to
         * the client. */
        if (unexpected)
            assert_na_ok(NA_Msg_recv_unexpected(cls, ctx, na_record_cb, &res[i],
                                                buf, sizeof(buf), NULL, op));
        else
            assert_na_ok(NA_Msg_recv_expected(cls, ctx, na_record_cb, &res[i],
                                              buf, sizeof(buf), NULL,
                                              env->srv_addr, 0, 9, op));
        racer_wait(&r, i + 1);
        race_drive(env, &res[i], what, i);
    }
    racer_stop(&r);
    race_report(env, what, res, n, &r, false);
    assert_na_ok(NA_Op_destroy(cls, op));
    free(res);
    na_env_finish(env);
}

static void
test_race_recv_expected(void **state)
{
    recv_race(*state, false);
}

static void
test_race_recv_unexpected(void **state)
{
    recv_race(*state, true);
}

/*
 * A send the server waits for: it goes, or it is cancelled. The server's
 * receive completes with the message, or is cancelled in turn once the
 * send says it was (a cancelled send moved nothing, so its receive would
 * wait for ever).
 */
static void
test_race_send(void **state)
{
    struct na_env *env = *state;
    unsigned n = race_iters();
    struct na_result *res = calloc(n, sizeof(*res));
    struct na_result rr;
    na_op_id_t *op = NA_Op_create(env->cli, 0);
    na_op_id_t *rop = NA_Op_create(env->srv, 0);
    uint32_t out, in;
    struct racer r;

    assert_non_null(res);
    racer_start(&r, env->cli, env->cctx);
    for (unsigned i = 0; i < n; i++) {
        na_tag_t tag = 10 + i % 1000;

        memset(&rr, 0, sizeof(rr));
        assert_na_ok(NA_Msg_recv_expected(env->srv, env->sctx, na_record_cb,
                                          &rr, &in, sizeof(in), NULL,
                                          env->cli_addr, 0, tag, rop));
        out = i;
        racer_arm(&r, op, i + 1);
        assert_na_ok(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb,
                                          &res[i], &out, sizeof(out), NULL,
                                          env->srv_addr, 0, tag, op));
        racer_wait(&r, i + 1);
        race_drive(env, &res[i], "send_expected", i);
        if (res[i].ret == NA_CANCELED)
            assert_na_ok(NA_Cancel(env->srv, env->sctx, rop));
        if (na_try_drive(env, &rr.calls, 1, NA_RACE_WAIT_MS) < 0)
            fail_msg("send_expected, iteration %u: the receive never "
                     "completed after its send ended with %s",
                     i, NA_Error_to_string(res[i].ret));
        if (res[i].ret == NA_SUCCESS) {
            assert_na_ok(rr.ret);
            assert_int_equal(in, i);
        }
    }
    racer_stop(&r);
    race_report(env, "send_expected", res, n, &r, true);
    assert_na_ok(NA_Op_destroy(env->cli, op));
    assert_na_ok(NA_Op_destroy(env->srv, rop));
    free(res);
    na_env_finish(env);
}

/* A get from the server's memory: it moves the bytes, or is cancelled. */
static void
test_race_get(void **state)
{
    struct na_env *env = *state;
    unsigned n = race_iters();
    struct na_result *res = calloc(n, sizeof(*res));
    static unsigned char src[4096], dst[4096];
    na_mem_handle_t sh, dh, remote;
    na_op_id_t *op = NA_Op_create(env->cli, 0);
    struct racer r;

    assert_non_null(res);
    memset(src, 0x5a, sizeof(src));
    sh = na_registered(env->srv, src, sizeof(src), NA_MEM_READ_ONLY);
    dh = na_registered(env->cli, dst, sizeof(dst), NA_MEM_READWRITE);
    remote = na_ship_handle(env->srv, sh, env->cli);
    racer_start(&r, env->cli, env->cctx);
    for (unsigned i = 0; i < n; i++) {
        racer_arm(&r, op, i + 1);
        assert_na_ok(NA_Get(env->cli, env->cctx, na_record_cb, &res[i], dh, 0,
                            remote, 0, sizeof(src), env->srv_addr, 0, op));
        racer_wait(&r, i + 1);
        race_drive(env, &res[i], "get", i);
    }
    racer_stop(&r);
    race_report(env, "get", res, n, &r, true);
    assert_na_ok(NA_Op_destroy(env->cli, op));
    NA_Mem_handle_free(env->cli, remote);
    assert_na_ok(NA_Mem_deregister(env->cli, dh));
    NA_Mem_handle_free(env->cli, dh);
    assert_na_ok(NA_Mem_deregister(env->srv, sh));
    NA_Mem_handle_free(env->srv, sh);
    free(res);
    na_env_finish(env);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        NA_TEST(test_race_recv_expected),
        NA_TEST(test_race_recv_unexpected),
        NA_TEST(test_race_send),
        NA_TEST(test_race_get),
    };

    return na_main(argc, argv, "na_race", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
