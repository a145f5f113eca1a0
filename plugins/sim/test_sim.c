/*
 * Tests of the simulated fabric, through the public NA API and the sim
 * control API only. Every test builds its own world (two nodes, "alpha"
 * and "beta", unless it says otherwise) and ends with everything freed,
 * NA_Finalize() succeeding and no world left behind.
 *
 * The seed comes from QS_SIM_SEED or the default; it is printed before the
 * tests run, and again after any failure, so a failure can be replayed.
 *
 * Only what is particular to the simulator is here: virtual time, world
 * control, backlog policies, determinism, node names, the wire layout of
 * its handles. What every plugin must do (exchanges, tag matching, RMA and
 * its violations, cancel, unreachable peers, threads, hostile bytes) is
 * the NA conformance suite, tests/conformance/na_*.c, run on sim too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "na/na_plugin.h" /* the plugin's own poll_wait, past the core */

#include "test_sim.h"

static void
test_early_expected_and_backlog(void **state)
{
    struct pair p;
    struct na_result s1 = {0}, s2 = {0}, r1 = {0}, r2 = {0};
    char b1[16] = {0}, b2[16] = {0};
    unsigned int n;

    (void) state;
    pair_open(&p);
    na_op_id_t *send1 = NA_Op_create(p.a, 0), *send2 = NA_Op_create(p.a, 0);
    na_op_id_t *recv1 = NA_Op_create(p.b, 0), *recv2 = NA_Op_create(p.b, 0);

    /* Both messages arrive before any receive is posted; the sends still
     * complete, the data waits at the destination. */
    assert_int_equal(NA_Msg_send_expected(p.a, p.ca, na_record_cb, &s1, "early",
                                          6, NULL, p.a_to_b, 0, 9, send1),
                     NA_SUCCESS);
    send_unexpected(&p, send2, &s2, "backlog", 8, 3);
    pair_settle(&p);
    assert_int_equal(s1.calls, 1);
    assert_int_equal(s1.ret, NA_SUCCESS);
    assert_int_equal(s2.calls, 1);
    assert_int_equal(s2.ret, NA_SUCCESS);

    assert_int_equal(NA_Msg_recv_expected(p.b, p.cb, na_record_cb, &r1, b1,
                                          sizeof(b1), NULL, p.b_to_a, 0, 9,
                                          recv1),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r2, b2,
                                            sizeof(b2), NULL, recv2),
                     NA_SUCCESS);
    /* The matches complete during progress, without time passing. */
    assert_int_equal(r1.calls + r2.calls, 0);
    uint64_t before = na_sim_clock_now();
    assert_int_equal(NA_Poll(p.b, p.cb, &n), NA_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(na_sim_clock_now(), before);
    NA_Trigger(p.cb, 16, NULL);
    assert_int_equal(r1.calls, 1);
    assert_int_equal(r1.ret, NA_SUCCESS);
    assert_string_equal(b1, "early");
    assert_int_equal(r2.calls, 1);
    assert_int_equal(r2.ret, NA_SUCCESS);
    assert_int_equal(r2.tag, 3);
    assert_string_equal(b2, "backlog");
    NA_Addr_free(p.b, r2.source);

    NA_Op_destroy(p.a, send1);
    NA_Op_destroy(p.a, send2);
    NA_Op_destroy(p.b, recv1);
    NA_Op_destroy(p.b, recv2);
    pair_close(&p);
}

/* na_sim_ready_next() hands out the contexts with new completions, each
 * once however many it got, in the order of their first one. */
static void
test_ready_next(void **state)
{
    struct pair p;
    struct na_result s = {0}, r = {0};
    char buf[16], name[64];
    uint8_t id = 7;

    (void) state;
    pair_open(&p);
    na_op_id_t *send = NA_Op_create(p.a, 0), *recv = NA_Op_create(p.b, 0);

    assert_int_equal(na_sim_ready_next(NULL, sizeof(name), &id),
                     NA_INVALID_ARG);
    assert_int_equal(na_sim_ready_next(name, sizeof(name), NULL),
                     NA_INVALID_ARG);
    while (na_sim_ready_next(name, sizeof(name), &id) == NA_SUCCESS)
        ;
    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r, buf,
                                            sizeof(buf), NULL, recv),
                     NA_SUCCESS);
    send_unexpected(&p, send, &s, "ready", 6, 1);
    /* Posts complete nothing. */
    assert_int_equal(na_sim_ready_next(name, sizeof(name), &id), NA_NOENTRY);
    assert_int_equal(na_sim_run_until_idle(NULL), NA_SUCCESS);
    /* The delivery completes the receive, then the send. */
    assert_int_equal(na_sim_ready_next(name, 4, &id), NA_OVERFLOW);
    assert_int_equal(na_sim_ready_next(name, 5, &id), NA_SUCCESS);
    assert_string_equal(name, "beta");
    assert_int_equal(id, 0);
    assert_int_equal(na_sim_ready_next(name, sizeof(name), &id), NA_SUCCESS);
    assert_string_equal(name, "alpha");
    assert_int_equal(na_sim_ready_next(name, sizeof(name), &id), NA_NOENTRY);
    NA_Trigger(p.ca, 16, NULL);
    NA_Trigger(p.cb, 16, NULL);
    assert_int_equal(s.calls, 1);
    assert_int_equal(r.calls, 1);
    assert_string_equal(buf, "ready");
    NA_Addr_free(p.b, r.source);

    NA_Op_destroy(p.a, send);
    NA_Op_destroy(p.b, recv);
    pair_close(&p);
}

/* na_sim_ready_next_data() hands out the same list, with the pointer the
 * driver attached to each node instead of its name. */
static void
test_ready_next_data(void **state)
{
    struct pair p;
    struct na_result s = {0}, r = {0};
    char buf[16], name[64];
    int alpha_rec, beta_rec;
    void *data = &data;
    uint8_t id = 7;

    (void) state;
    pair_open(&p);
    na_op_id_t *send = NA_Op_create(p.a, 0), *recv = NA_Op_create(p.b, 0);

    assert_int_equal(na_sim_ready_next_data(NULL, &id), NA_INVALID_ARG);
    assert_int_equal(na_sim_ready_next_data(&data, NULL), NA_INVALID_ARG);
    assert_int_equal(na_sim_node_set_data(NULL, &alpha_rec), NA_INVALID_ARG);
    assert_int_equal(na_sim_node_set_data("gamma", &alpha_rec), NA_NOENTRY);
    assert_int_equal(na_sim_node_set_data("sim://alpha", &alpha_rec),
                     NA_SUCCESS);
    assert_int_equal(na_sim_node_set_data("beta", &beta_rec), NA_SUCCESS);
    while (na_sim_ready_next(name, sizeof(name), &id) == NA_SUCCESS)
        ;
    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r, buf,
                                            sizeof(buf), NULL, recv),
                     NA_SUCCESS);
    send_unexpected(&p, send, &s, "ready", 6, 1);
    assert_int_equal(na_sim_ready_next_data(&data, &id), NA_NOENTRY);
    assert_int_equal(na_sim_run_until_idle(NULL), NA_SUCCESS);
    /* The receive completes first, then the send. */
    assert_int_equal(na_sim_ready_next_data(&data, &id), NA_SUCCESS);
    assert_ptr_equal(data, &beta_rec);
    assert_int_equal(id, 0);
    assert_int_equal(na_sim_ready_next_data(&data, &id), NA_SUCCESS);
    assert_ptr_equal(data, &alpha_rec);
    assert_int_equal(na_sim_ready_next_data(&data, &id), NA_NOENTRY);
    NA_Trigger(p.ca, 16, NULL);
    NA_Trigger(p.cb, 16, NULL);
    assert_int_equal(s.calls, 1);
    assert_int_equal(r.calls, 1);
    NA_Addr_free(p.b, r.source);

    NA_Op_destroy(p.a, send);
    NA_Op_destroy(p.b, recv);
    pair_close(&p);
}

static void
test_backlog_fail(void **state)
{
    struct pair p;
    struct na_result s1 = {0}, s2 = {0};

    (void) state;
    pair_open(&p);
    assert_int_equal(na_sim_set_unexpected_backlog(1, NA_SIM_BACKLOG_FAIL),
                     NA_SUCCESS);
    assert_int_equal(na_sim_set_unexpected_backlog(1, 7), NA_INVALID_ARG);
    na_op_id_t *send1 = NA_Op_create(p.a, 0), *send2 = NA_Op_create(p.a, 0);

    send_unexpected(&p, send1, &s1, "a", 2, 0);
    send_unexpected(&p, send2, &s2, "b", 2, 0);
    pair_settle(&p);
    assert_int_equal(s1.calls, 1);
    assert_int_equal(s1.ret, NA_SUCCESS);
    assert_int_equal(s2.calls, 1);
    assert_int_equal(s2.ret, NA_AGAIN);

    NA_Op_destroy(p.a, send1);
    NA_Op_destroy(p.a, send2);
    pair_close(&p);
}

/* By default a full backlog holds the sender back: its send completes
 * only when a receive makes room, in order, and the data arrives intact. */
static void
test_backlog_block(void **state)
{
    struct pair p;
    struct na_result s[4], r[4];
    char in[4][8];
    na_op_id_t *send[4], *recv[4];
    const char *msgs[4] = {"m0", "m1", "m2", "m3"};

    (void) state;
    pair_open(&p);
    memset(s, 0, sizeof(s));
    memset(r, 0, sizeof(r));
    assert_int_equal(na_sim_set_unexpected_backlog(1, NA_SIM_BACKLOG_BLOCK),
                     NA_SUCCESS);
    for (int i = 0; i < 4; i++) {
        send[i] = NA_Op_create(p.a, 0);
        recv[i] = NA_Op_create(p.b, 0);
        send_unexpected(&p, send[i], &s[i], msgs[i], 3, (na_tag_t) i);
    }
    pair_settle(&p);
    /* One message fits the backlog; the other three senders wait. */
    assert_int_equal(s[0].calls, 1);
    assert_int_equal(s[0].ret, NA_SUCCESS);
    for (int i = 1; i < 4; i++)
        assert_int_equal(s[i].calls, 0);
    /* The sender's context is busy while its sends are held. */
    assert_int_equal(NA_Context_destroy(p.a, p.ca), NA_BUSY);
    /* Cancel the last one; it completes once, canceled. */
    assert_int_equal(NA_Cancel(p.a, p.ca, send[3]), NA_SUCCESS);
    pair_settle(&p);
    assert_int_equal(s[3].calls, 1);
    assert_int_equal(s[3].ret, NA_CANCELED);
    /* Each receive takes the oldest message and admits the next sender. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[i],
                                                in[i], sizeof(in[i]), NULL,
                                                recv[i]),
                         NA_SUCCESS);
        pair_settle(&p);
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].ret, NA_SUCCESS);
        assert_int_equal(r[i].tag, i);
        assert_string_equal(in[i], msgs[i]);
        NA_Addr_free(p.b, r[i].source);
        if (i + 1 < 3) {
            assert_int_equal(s[i + 1].calls, 1);
            assert_int_equal(s[i + 1].ret, NA_SUCCESS);
        }
    }
    /* With no backlog at all, a receive takes a blocked message directly;
     * a destination that goes away releases its blocked senders. */
    assert_int_equal(na_sim_set_unexpected_backlog(0, NA_SIM_BACKLOG_BLOCK),
                     NA_SUCCESS);
    memset(s, 0, sizeof(s));
    memset(r, 0, sizeof(r));
    send_unexpected(&p, send[0], &s[0], "x", 2, 0);
    send_unexpected(&p, send[1], &s[1], "y", 2, 0);
    pair_settle(&p);
    assert_int_equal(s[0].calls + s[1].calls, 0);
    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[0],
                                            in[0], sizeof(in[0]), NULL,
                                            recv[0]),
                     NA_SUCCESS);
    pair_settle(&p);
    assert_int_equal(r[0].ret, NA_SUCCESS);
    assert_string_equal(in[0], "x");
    NA_Addr_free(p.b, r[0].source);
    assert_int_equal(s[0].ret, NA_SUCCESS);
    assert_int_equal(s[1].calls, 0);
    assert_int_equal(NA_Context_destroy(p.b, p.cb), NA_SUCCESS);
    p.cb = NA_Context_create(p.b);
    assert_non_null(p.cb);
    pair_settle(&p);
    assert_int_equal(s[1].calls, 1);
    assert_int_equal(s[1].ret, NA_HOSTUNREACH);

    for (int i = 0; i < 4; i++) {
        assert_int_equal(NA_Op_destroy(p.a, send[i]), NA_SUCCESS);
        assert_int_equal(NA_Op_destroy(p.b, recv[i]), NA_SUCCESS);
    }
    pair_close(&p);
}

/* A destination that crashes releases the senders its full backlog holds
 * back: each send completes once, with NA_HOSTUNREACH (the peer is gone),
 * not NA_CANCELED (nobody cancelled it). */
static void
test_backlog_block_crash(void **state)
{
    struct pair p;
    struct na_result s[3];
    na_op_id_t *send[3];

    (void) state;
    pair_open(&p);
    memset(s, 0, sizeof(s));
    assert_int_equal(na_sim_set_unexpected_backlog(1, NA_SIM_BACKLOG_BLOCK),
                     NA_SUCCESS);
    for (int i = 0; i < 3; i++) {
        send[i] = NA_Op_create(p.a, 0);
        send_unexpected(&p, send[i], &s[i], "m", 2, (na_tag_t) i);
    }
    pair_settle(&p);
    assert_int_equal(s[0].calls, 1);
    assert_int_equal(s[0].ret, NA_SUCCESS);
    assert_int_equal(s[1].calls + s[2].calls, 0);
    assert_int_equal(na_sim_node_crash("beta"), NA_SUCCESS);
    pair_settle(&p);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(s[i].calls, 1);
        assert_int_equal(s[i].ret, NA_HOSTUNREACH);
    }
    assert_int_equal(na_sim_node_restart("beta"), NA_SUCCESS);
    pair_settle(&p);
    for (int i = 0; i < 3; i++)
        assert_int_equal(NA_Op_destroy(p.a, send[i]), NA_SUCCESS);
    pair_close(&p);
}

/* The limits come from the init info, and a post over them is refused
 * (the size rules shared by every plugin are in the NA conformance suite,
 * tests/conformance/na_msg.c). */
static void
test_message_size_from_init_info(void **state)
{
    struct pair p;
    struct na_init_info info = NA_INIT_INFO_INITIALIZER;
    struct na_result s = {0}, r = {0};
    char big[256];

    (void) state;
    info.max_unexpected_size = 128;
    info.max_expected_size = 8192;
    pair_open_opt(&p, &info);
    assert_int_equal(NA_Msg_get_max_unexpected_size(p.a), 128);
    assert_int_equal(NA_Msg_get_max_expected_size(p.a), 8192);
    assert_true(NA_Msg_get_max_tag(p.a) >= 0x7fffffffU);
    na_op_id_t *send = NA_Op_create(p.a, 0), *recv = NA_Op_create(p.b, 0);

    memset(big, 'x', sizeof(big));
    assert_int_equal(NA_Msg_send_unexpected(p.a, p.ca, na_record_cb, &s, big,
                                            129, NULL, p.a_to_b, 0, 0, send),
                     NA_MSGSIZE);
    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r, big,
                                            129, NULL, recv),
                     NA_MSGSIZE);
    pair_settle(&p);
    assert_int_equal(s.calls + r.calls, 0);

    NA_Op_destroy(p.a, send);
    NA_Op_destroy(p.b, recv);
    pair_close(&p);
}

/* An existing node without a context of the id a message names is
 * unreachable (peers that are gone are in tests/conformance/na_msg.c). */
static void
test_unreachable_context_id(void **state)
{
    struct pair p;
    struct na_result s = {0};

    (void) state;
    pair_open(&p);
    na_op_id_t *op = NA_Op_create(p.a, 0);

    assert_int_equal(NA_Msg_send_expected(p.a, p.ca, na_record_cb, &s, "x", 2,
                                          NULL, p.a_to_b, 3, 0, op),
                     NA_SUCCESS);
    pair_drive(&p, &s.calls, 1);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.ret, NA_HOSTUNREACH);
    NA_Op_destroy(p.a, op);
    pair_close(&p);
}

/*
 * Virtual time.
 */

static void
test_virtual_time(void **state)
{
    struct pair p;
    struct na_result s = {0}, r = {0};
    struct na_sim_link link = {.latency_ns = 2000000, /* 2 ms */
                               .bandwidth = 1000000}; /* 1 MB/s */
    struct na_sim_link got;
    char buf[1000];
    unsigned int n;
    uint64_t t0, t1;

    (void) state;
    pair_open(&p);
    /* Idle: a 5 s wait returns NA_TIMEOUT at exactly +5 s virtual. */
    t0 = NA_Clock_now(p.a);
    assert_int_equal(na_sim_clock_now(), t0);
    assert_int_equal(NA_Poll_wait(p.a, p.ca, 5000, &n), NA_TIMEOUT);
    assert_int_equal(n, 0);
    assert_int_equal(NA_Clock_now(p.a) - t0, UINT64_C(5000000000));
    assert_int_equal(NA_Poll_get_fd(p.a, p.ca), -1);

    /* A 1000-byte message over 2 ms + 1 MB/s arrives 3 ms after post. */
    assert_int_equal(na_sim_set_link("alpha", "sim://beta", &link), NA_SUCCESS);
    assert_int_equal(na_sim_get_link("sim://alpha", "beta", &got), NA_SUCCESS);
    assert_int_equal(got.latency_ns, link.latency_ns);
    assert_int_equal(na_sim_get_link("beta", "alpha", &got), NA_SUCCESS);
    assert_int_equal(got.latency_ns, 1000);
    assert_int_equal(na_sim_set_link("bad name", "beta", &link),
                     NA_INVALID_ARG);
    na_op_id_t *send = NA_Op_create(p.a, 0), *recv = NA_Op_create(p.b, 0);

    assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r, buf,
                                            sizeof(buf), NULL, recv),
                     NA_SUCCESS);
    memset(buf, 'z', sizeof(buf));
    t0 = na_sim_clock_now();
    send_unexpected(&p, send, &s, buf, sizeof(buf), 0);
    /* The receiver's wait ends at delivery, not at its deadline. */
    assert_int_equal(NA_Poll_wait(p.b, p.cb, 10000, &n), NA_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(na_sim_clock_now() - t0, UINT64_C(3000000));
    /* The plugin's own wait, entered with that completion still queued
     * (another thread may complete an op between NA_Poll_wait()'s check
     * of the queue and the plugin's wait), returns at once: it neither
     * sleeps on it nor moves the clock. */
    t1 = na_sim_clock_now();
    assert_int_equal(p.b->ops->context->poll_wait(p.b, p.cb, 10000, &n),
                     NA_SUCCESS);
    assert_int_equal(na_sim_clock_now(), t1);
    /* The sender's completion is already queued at that time. */
    assert_int_equal(NA_Poll_wait(p.a, p.ca, 0, &n), NA_SUCCESS);
    NA_Trigger(p.ca, 16, NULL);
    NA_Trigger(p.cb, 16, NULL);
    assert_int_equal(s.ret, NA_SUCCESS);
    assert_int_equal(r.ret, NA_SUCCESS);
    NA_Addr_free(p.b, r.source);

    /* Stepping and running by hand. */
    assert_int_equal(na_sim_step(), NA_TIMEOUT);
    assert_int_equal(na_sim_run_until(na_sim_clock_now() + 42, NULL),
                     NA_SUCCESS);
    assert_int_equal(na_sim_clock_now() - t0, UINT64_C(3000042));

    NA_Op_destroy(p.a, send);
    NA_Op_destroy(p.b, recv);
    pair_close(&p);
}

/*
 * The event order. Events run in (time, sequence) order whichever of the
 * world's structures holds them (most enter a lane of their delay, the
 * rest the heap).
 */

struct order_log {
    int seen[64];
    int n;
};

struct order_arg {
    struct order_log *log;
    int index;
    na_return_t ret;
};

static void
order_cb(const struct na_cb_info *info)
{
    struct order_arg *a = info->arg;

    a->ret = info->ret;
    if (a->log->n < 64)
        a->log->seen[a->log->n++] = a->index;
}

/* Post n expected receives on b, tags 0 to n-1, each of buf_size bytes at
 * bufs + i * buf_size, logging into `log` with index i. */
static void
post_order_recvs(struct pair *p, struct order_log *log, struct order_arg *args,
                 na_op_id_t **ops, char *bufs, size_t buf_size, int n)
{
    for (int i = 0; i < n; i++) {
        args[i] = (struct order_arg){.log = log, .index = i};
        ops[i] = NA_Op_create(p->b, 0);
        assert_int_equal(NA_Msg_recv_expected(p->b, p->cb, order_cb, &args[i],
                                              bufs + (size_t) i * buf_size,
                                              buf_size, NULL, p->b_to_a, 0,
                                              (na_tag_t) i, ops[i]),
                         NA_SUCCESS);
    }
}

/* Receives posted in one order and canceled in the other at one virtual
 * time complete in the order they were posted. There are more of them
 * than the world queues in its heap alone, so the last cancels meet the
 * lanes: each has the delay of the one before it but an earlier sequence
 * number, so it cannot join that lane behind it. */
#define ORDER_RECVS 40
static void
test_event_order_same_time(void **state)
{
    struct pair p;
    struct order_log log = {.n = 0};
    struct order_arg args[ORDER_RECVS];
    na_op_id_t *ops[ORDER_RECVS];
    char bufs[ORDER_RECVS][16];

    (void) state;
    pair_open(&p);
    post_order_recvs(&p, &log, args, ops, &bufs[0][0], sizeof(bufs[0]),
                     ORDER_RECVS);
    for (int i = ORDER_RECVS - 1; i >= 0; i--)
        assert_int_equal(NA_Cancel(p.b, p.cb, ops[i]), NA_SUCCESS);
    pair_settle(&p);
    assert_int_equal(log.n, ORDER_RECVS);
    for (int i = 0; i < ORDER_RECVS; i++) {
        assert_int_equal(log.seen[i], i);
        assert_int_equal(args[i].ret, NA_CANCELED);
        NA_Op_destroy(p.b, ops[i]);
    }
    pair_close(&p);
}

/* An event due now, scheduled while a later one is the next: a cancel of
 * a posted receive while a message is on the wire. A poll at the same
 * virtual time runs it; the message arrives later. */
static void
test_event_order_due_now(void **state)
{
    struct na_sim_link link = {.latency_ns = 1000, .bandwidth = 1000000000};
    struct pair p;
    struct order_log log = {.n = 0}, none = {.n = 0};
    struct order_arg rarg[2], sarg;
    na_op_id_t *rops[2], *sop;
    char rbufs[2][600], sbuf[600];
    unsigned int n;
    uint64_t t0;

    (void) state;
    pair_open(&p);
    assert_int_equal(na_sim_set_link_default(&link), NA_SUCCESS);
    memset(sbuf, 0x3c, sizeof(sbuf));
    post_order_recvs(&p, &log, rarg, rops, &rbufs[0][0], sizeof(rbufs[0]), 2);
    sarg = (struct order_arg){.log = &none, .index = 9};
    sop = NA_Op_create(p.a, 0);
    t0 = na_sim_clock_now();
    assert_int_equal(NA_Msg_send_expected(p.a, p.ca, order_cb, &sarg, sbuf,
                                          sizeof(sbuf), NULL, p.a_to_b, 0, 0,
                                          sop),
                     NA_SUCCESS);
    assert_int_equal(NA_Cancel(p.b, p.cb, rops[1]), NA_SUCCESS);
    assert_int_equal(NA_Poll(p.b, p.cb, NULL), NA_SUCCESS);
    NA_Trigger(p.cb, 16, &n);
    assert_int_equal(na_sim_clock_now(), t0);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.seen[0], 1);
    assert_int_equal(rarg[1].ret, NA_CANCELED);
    pair_settle(&p);
    assert_int_equal(log.n, 2);
    assert_int_equal(log.seen[1], 0);
    assert_int_equal(rarg[0].ret, NA_SUCCESS);
    assert_true(na_sim_clock_now() >= t0 + 1000 + sizeof(sbuf));
    for (int i = 0; i < 2; i++)
        NA_Op_destroy(p.b, rops[i]);
    NA_Op_destroy(p.a, sop);
    pair_close(&p);
}

/* Messages of six sizes, so six delays (more than there are lanes), sent
 * in eight groups 150 ns apart, sizes shuffled: they arrive in the order
 * of their arrival times (ties, none here, by sequence). The first
 * messages' events wait in the heap, the later ones' in lanes, and their
 * arrivals interleave. */
#define ORDER_SENDS 48
static void
test_event_order_many_delays(void **state)
{
    static const size_t sizes[6] = {600, 100, 500, 200, 400, 300};
    struct na_sim_link link = {.latency_ns = 1000, .bandwidth = 1000000000};
    struct pair p;
    struct order_log log = {.n = 0}, none = {.n = 0};
    struct order_arg rargs[ORDER_SENDS], sargs[ORDER_SENDS];
    na_op_id_t *rops[ORDER_SENDS], *sops[ORDER_SENDS];
    static char rbufs[ORDER_SENDS][600];
    char sbuf[600];
    uint64_t t0, when[ORDER_SENDS];

    (void) state;
    pair_open(&p);
    assert_int_equal(na_sim_set_link_default(&link), NA_SUCCESS);
    memset(sbuf, 0x5a, sizeof(sbuf));
    post_order_recvs(&p, &log, rargs, rops, &rbufs[0][0], sizeof(rbufs[0]),
                     ORDER_SENDS);
    for (int i = 0; i < ORDER_SENDS; i++) {
        sargs[i] = (struct order_arg){.log = &none, .index = i};
        sops[i] = NA_Op_create(p.a, 0);
    }
    t0 = na_sim_clock_now();
    for (int i = 0; i < ORDER_SENDS; i++) {
        if (i > 0 && i % 6 == 0)
            assert_int_equal(
                na_sim_run_until(t0 + 150 * (uint64_t) (i / 6), NULL),
                NA_SUCCESS);
        when[i] = na_sim_clock_now() + 1000 + sizes[i % 6];
        assert_int_equal(NA_Msg_send_expected(
                             p.a, p.ca, order_cb, &sargs[i], sbuf, sizes[i % 6],
                             NULL, p.a_to_b, 0, (na_tag_t) i, sops[i]),
                         NA_SUCCESS);
    }
    pair_settle(&p);
    assert_int_equal(log.n, ORDER_SENDS);
    for (int k = 1; k < ORDER_SENDS; k++) {
        int prev = log.seen[k - 1], cur = log.seen[k];

        assert_true(when[prev] < when[cur] ||
                    (when[prev] == when[cur] && prev < cur));
    }
    for (int i = 0; i < ORDER_SENDS; i++) {
        assert_int_equal(rargs[i].ret, NA_SUCCESS);
        NA_Op_destroy(p.b, rops[i]);
        NA_Op_destroy(p.a, sops[i]);
    }
    pair_close(&p);
}

/*
 * Determinism.
 */

/* A little of everything: messages both ways, a backlog, RMA, a cancel. */
static uint64_t
scenario(uint64_t seed, char **dump, size_t *dump_len)
{
    struct pair p;
    struct na_result r[8];
    char in[4][32];
    unsigned char lbuf[64], rbuf[64];
    na_mem_handle_t lh, rh, rh_r;
    na_op_id_t *ops[8];
    uint64_t hash;
    FILE *f;

    memset(r, 0, sizeof(r));
    assert_int_equal(na_sim_set_seed(seed), NA_SUCCESS);
    assert_int_equal(na_sim_world_hold(), NA_SUCCESS);
    assert_int_equal(na_sim_trace_enable(true), NA_SUCCESS);
    pair_open(&p);
    for (int i = 0; i < 8; i++)
        ops[i] = NA_Op_create(i < 4 ? p.a : p.b, 0);
    memset(lbuf, 7, sizeof(lbuf));
    memset(rbuf, 0, sizeof(rbuf));
    lh = registered(p.a, lbuf, 64, NA_MEM_READWRITE);
    rh = registered(p.b, rbuf, 64, NA_MEM_READWRITE);
    rh_r = ship_handle(&p, rh);

    NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[4], in[0], 32, NULL,
                           ops[4]);
    send_unexpected(&p, ops[0], &r[0], "one", 4, 1);
    send_unexpected(&p, ops[1], &r[1], "two", 4, 2); /* to the backlog */
    NA_Msg_recv_expected(p.a, p.ca, na_record_cb, &r[2], in[1], 32, NULL,
                         p.a_to_b, 0, 5, ops[2]);
    NA_Put(p.a, p.ca, na_record_cb, &r[3], lh, 0, rh_r, 0, 64, p.a_to_b, 0,
           ops[3]);
    pair_drive(&p, &r[4].calls, 1);
    NA_Msg_send_expected(p.b, p.cb, na_record_cb, &r[5], "reply", 6, NULL,
                         p.b_to_a, 0, 5, ops[5]);
    NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[6], in[2], 32, NULL,
                           ops[6]);
    NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[7], in[3], 32, NULL,
                           ops[7]);
    pair_drive(&p, &r[2].calls, 1);
    NA_Cancel(p.b, p.cb, ops[7]);
    pair_settle(&p);
    for (int i = 0; i < 8; i++)
        assert_int_equal(r[i].calls, 1);
    assert_int_equal(r[7].ret, NA_CANCELED);
    assert_memory_equal(rbuf, lbuf, 64);

    NA_Addr_free(p.b, r[4].source);
    NA_Addr_free(p.b, r[6].source);
    NA_Mem_handle_free(p.a, rh_r);
    NA_Mem_handle_free(p.b, rh);
    NA_Mem_handle_free(p.a, lh);
    for (int i = 0; i < 8; i++)
        NA_Op_destroy(i < 4 ? p.a : p.b, ops[i]);
    NA_Addr_free(p.a, p.a_to_b);
    NA_Addr_free(p.b, p.b_to_a);
    assert_int_equal(NA_Context_destroy(p.a, p.ca), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(p.b, p.cb), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p.a), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p.b), NA_SUCCESS);

    /* The held world outlives its classes, so the trace is complete. */
    assert_true(na_sim_trace_count() > 20);
    hash = na_sim_trace_hash();
    f = open_memstream(dump, dump_len);
    assert_non_null(f);
    assert_int_equal(na_sim_trace_dump(f), NA_SUCCESS);
    fclose(f);
    assert_int_equal(na_sim_world_release(), NA_SUCCESS);
    assert_false(na_sim_world_exists());
    na_sim_clear_seed();
    return hash;
}

static void
test_determinism(void **state)
{
    uint64_t seed = na_sim_get_seed();
    char *d1 = NULL, *d2 = NULL, *d3 = NULL;
    size_t l1, l2, l3;
    uint64_t h1, h2, h3, lines;

    (void) state;
    h1 = scenario(seed, &d1, &l1);
    h2 = scenario(seed, &d2, &l2);
    assert_int_equal(h1, h2);
    assert_int_equal(l1, l2);
    assert_memory_equal(d1, d2, l1);
    /* The hash is the documented function of the lines, so a trace file
     * is enough to check it. */
    assert_int_equal(trace_rehash(d1, l1, &lines), h1);
    assert_true(lines > 20);
    if (getenv("QS_SIM_TEST_VERBOSE") != NULL)
        fwrite(d1, 1, l1, stdout);
    /* Another seed may differ; it must be just as clean. */
    h3 = scenario(seed ^ 0x9e3779b97f4a7c15ULL, &d3, &l3);
    printf("[   INFO   ] trace hash 0x%016llx (seed %llu), 0x%016llx "
           "(other seed)\n",
           (unsigned long long) h1, (unsigned long long) seed,
           (unsigned long long) h3);
    free(d1);
    free(d2);
    free(d3);
}

/*
 * The source address of an unexpected message is shared by every receive
 * of that sender's messages (one per incarnation, no allocation per
 * message): each receiver owns its own reference, which outlives both the
 * other references and the sender's class.
 */
static void
test_source_address_shared(void **state)
{
    struct pair p;
    struct na_result s[2] = {{0}}, r[2] = {{0}};
    char in[2][16];
    na_op_id_t *ops[4];
    char str[64];
    size_t size = sizeof(str);

    (void) state;
    pair_open(&p);
    for (int i = 0; i < 4; i++)
        ops[i] = NA_Op_create(i < 2 ? p.a : p.b, 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(NA_Msg_recv_unexpected(p.b, p.cb, na_record_cb, &r[i],
                                                in[i], sizeof(in[i]), NULL,
                                                ops[2 + i]),
                         NA_SUCCESS);
    send_unexpected(&p, ops[0], &s[0], "one", 4, 1);
    send_unexpected(&p, ops[1], &s[1], "two", 4, 2);
    pair_settle(&p);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_int_equal(r[i].ret, NA_SUCCESS);
        assert_non_null(r[i].source);
    }
    assert_true(NA_Addr_cmp(p.b, r[0].source, r[1].source));
    assert_true(NA_Addr_cmp(p.b, r[0].source, p.b_to_a));
    /* Freeing one reference leaves the other whole (ASan watches). */
    NA_Addr_free(p.b, r[0].source);
    assert_int_equal(NA_Addr_to_string(p.b, str, &size, r[1].source),
                     NA_SUCCESS);
    assert_string_equal(str, "sim://alpha");

    /* The sender goes away; the receiver's reference stays valid. */
    NA_Op_destroy(p.a, ops[0]);
    NA_Op_destroy(p.a, ops[1]);
    NA_Addr_free(p.a, p.a_to_b);
    assert_int_equal(NA_Context_destroy(p.a, p.ca), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p.a), NA_SUCCESS);
    size = sizeof(str);
    assert_int_equal(NA_Addr_to_string(p.b, str, &size, r[1].source),
                     NA_SUCCESS);
    assert_string_equal(str, "sim://alpha");
    assert_true(NA_Addr_cmp(p.b, r[1].source, p.b_to_a));
    NA_Addr_free(p.b, r[1].source);
    NA_Op_destroy(p.b, ops[2]);
    NA_Op_destroy(p.b, ops[3]);
    NA_Addr_free(p.b, p.b_to_a);
    assert_int_equal(NA_Context_destroy(p.b, p.cb), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p.b), NA_SUCCESS);
    assert_false(na_sim_world_exists());
}

/*
 * Names, bad input, world control.
 */

static void
test_names_and_info_strings(void **state)
{
    na_class_t *c1, *c2, *c3;
    na_addr_t addr;
    char buf[64];
    size_t size;
    char longname[80];

    (void) state;
    c1 = NA_Initialize("sim", false);
    assert_non_null(c1);
    c2 = NA_Initialize("sim", true);
    assert_non_null(c2);
    assert_int_equal(NA_Addr_self(c2, &addr), NA_SUCCESS);
    size = 0;
    assert_int_equal(NA_Addr_to_string(c2, NULL, &size, addr), NA_SUCCESS);
    assert_int_equal(size, strlen("sim://node1") + 1);
    size = 4;
    assert_int_equal(NA_Addr_to_string(c2, buf, &size, addr), NA_OVERFLOW);
    size = sizeof(buf);
    assert_int_equal(NA_Addr_to_string(c2, buf, &size, addr), NA_SUCCESS);
    assert_string_equal(buf, "sim://node1");
    NA_Addr_free(c2, addr);
    /* The string round-trips through lookup. */
    assert_int_equal(NA_Addr_lookup(c1, buf, &addr), NA_SUCCESS);
    assert_true(NA_Addr_cmp(c1, addr, addr));
    NA_Addr_free(c1, addr);

    /* Names are unique; an auto name is taken like any other. */
    assert_null(NA_Initialize("sim://node0", true));
    c3 = NA_Initialize("sim+sim://srv-1.a_b:2", true);
    assert_non_null(c3);
    assert_null(NA_Initialize("sim://srv-1.a_b:2", false));
    assert_null(NA_Initialize("sim://bad!name", true));
    /* 63 bytes is the longest name. */
    memset(longname, 'n', sizeof(longname));
    memcpy(longname, "sim://", 6);
    longname[6 + 63] = '\0';
    na_class_t *c4 = NA_Initialize(longname, true);
    assert_non_null(c4);
    assert_int_equal(NA_Finalize(c4), NA_SUCCESS);
    longname[6 + 63] = 'n';
    longname[6 + 64] = '\0';
    assert_null(NA_Initialize(longname, true));

    /* Malformed lookups. */
    const char *bad[] = {"",          "sim://", "node0", "sim://a b",
                         "sim://a/b", "sim:/x", longname};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(NA_Addr_lookup(c1, bad[i], &addr), NA_INVALID_ARG);
    /* Another protocol's address is refused as such. */
    assert_int_equal(NA_Addr_lookup(c1, "tcp://x", &addr), NA_PROTONOSUPPORT);
    assert_int_equal(NA_Addr_lookup(c1, "ofi+sim://x", &addr),
                     NA_PROTONOSUPPORT);
    assert_int_equal(NA_Addr_lookup(c1, "sim+sim://x", &addr), NA_SUCCESS);
    NA_Addr_free(c1, addr);

    assert_int_equal(NA_Finalize(c3), NA_SUCCESS);
    assert_int_equal(NA_Finalize(c2), NA_SUCCESS);
    assert_int_equal(NA_Finalize(c1), NA_SUCCESS);
    assert_false(na_sim_world_exists());

    /* Unsupported options are refused, not ignored. */
    struct na_init_info info = NA_INIT_INFO_INITIALIZER;
    info.auth_key = "secret";
    assert_null(NA_Initialize_opt("sim", true, &info));
    assert_false(na_sim_world_exists());
}

static void
test_world_control(void **state)
{
    char hint[64];
    uint64_t basis;

    (void) state;
    assert_false(na_sim_world_exists());
    assert_int_equal(na_sim_world_release(), NA_NOENTRY);
    assert_int_equal(na_sim_step(), NA_NOENTRY);
    assert_int_equal(na_sim_trace_enable(true), NA_NOENTRY);
    assert_int_equal(na_sim_clock_now(), 0);

    assert_int_equal(na_sim_set_seed(1234), NA_SUCCESS);
    assert_int_equal(na_sim_get_seed(), 1234);
    assert_int_equal(na_sim_replay_hint(hint, sizeof(hint)),
                     (int) strlen("QS_SIM_SEED=1234"));
    assert_string_equal(hint, "QS_SIM_SEED=1234");
    assert_int_equal(na_sim_world_hold(), NA_SUCCESS);
    assert_int_equal(na_sim_get_seed(), 1234);
    basis = na_sim_trace_hash();
    assert_int_equal(na_sim_trace_count(), 0);
    assert_int_equal(na_sim_run_until(1000, NULL), NA_SUCCESS);
    assert_int_equal(na_sim_clock_now(), 1000);

    na_class_t *c = NA_Initialize("sim", false);
    assert_non_null(c);
    assert_int_equal(NA_Clock_now(c), 1000);
    /* A world with classes cannot be reseeded. */
    assert_int_equal(na_sim_set_seed(99), NA_BUSY);
    assert_int_equal(na_sim_get_seed(), 1234);
    assert_int_not_equal(na_sim_trace_hash(), basis);
    assert_int_equal(NA_Finalize(c), NA_SUCCESS);
    assert_true(na_sim_world_exists());
    /* A held world without classes is reset by a new seed. */
    assert_int_equal(na_sim_set_seed(99), NA_SUCCESS);
    assert_int_equal(na_sim_get_seed(), 99);
    assert_int_equal(na_sim_clock_now(), 0);
    assert_int_equal(na_sim_trace_hash(), basis);
    assert_int_equal(na_sim_world_release(), NA_SUCCESS);
    assert_false(na_sim_world_exists());
    na_sim_clear_seed();
}

/*
 * QS_SIM_HANG_S: a world whose virtual clock passes the bound ends its
 * process with NA_SIM_HANG_EXIT and says why; below the bound, or with a
 * malformed bound (reported), nothing happens. Each case runs in a child
 * that waits `wait_ms` of virtual time with nothing to do; the child's
 * stderr comes back in `err`.
 */
static int
hang_child(const char *bound, unsigned int wait_ms, char *err, size_t size)
{
    int fds[2], status = -1;
    ssize_t n, got = 0;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct pair p;
        unsigned int count;

        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        setenv(NA_SIM_HANG_ENV, bound, 1);
        pair_open(&p);
        (void) NA_Poll_wait(p.a, p.ca, wait_ms, &count);
        pair_close(&p);
        _exit(0);
    }
    close(fds[1]);
    while ((n = read(fds[0], err + got, size - 1 - (size_t) got)) > 0)
        got += n;
    err[got] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void
test_hang_bound(void **state)
{
    char err[1024];

    (void) state;
    assert_int_equal(hang_child("2", 5000, err, sizeof(err)), NA_SIM_HANG_EXIT);
    assert_non_null(strstr(err, "taken as hung"));
    assert_non_null(strstr(err, NA_SIM_HANG_ENV));
    assert_int_equal(hang_child("10.5", 5000, err, sizeof(err)), 0);
    assert_null(strstr(err, "hung"));
    assert_int_equal(hang_child("two", 5000, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "not a number of seconds"));
    assert_false(na_sim_world_exists());
}

/*
 * Every test starts from no world and the environment's seed, and a
 * failure names the seed that replays it.
 */
static int
test_setup(void **state)
{
    (void) state;
    na_sim_clear_seed();
    if (na_sim_world_exists()) {
        fprintf(stderr, "an earlier failed test left its world behind\n");
        return -1;
    }
    return 0;
}

static int
test_teardown(void **state)
{
    (void) state;
    /* A failed assertion leaves classes behind; their world then still
     * exists and is the sign to print the replay hint. */
    if (na_sim_world_exists())
        na_sim_print_replay_hint(stderr);
    return 0;
}

static int
group_setup(void **state)
{
    (void) state;
    printf("[   SEED   ] sim seed %llu: on failure, replay with ",
           (unsigned long long) na_sim_get_seed());
    na_sim_print_replay_hint(stdout);
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_early_expected_and_backlog,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_ready_next, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_ready_next_data, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_backlog_fail, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_backlog_block, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_backlog_block_crash, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_message_size_from_init_info,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_rma_wrong_node, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_context_id, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_virtual_time, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_determinism, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_event_order_same_time, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_event_order_due_now, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_event_order_many_delays,
                                        test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_source_address_shared, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_names_and_info_strings, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_wire_layout, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_world_control, test_setup,
                                        test_teardown),
        cmocka_unit_test_setup_teardown(test_hang_bound, test_setup,
                                        test_teardown),
    };

    return cmocka_run_group_tests_name("sim", tests, group_setup, NULL);
}
