/*
 * NA conformance, the rest: addresses (strings, lookups, serialization),
 * hostile bytes for address and memory-handle deserialization, waiting
 * (NA_Poll_wait sleeps instead of spinning, ends early when a completion
 * arrives, and the poll file descriptor), and several threads posting and
 * progressing at once. See docs/conformance.md.
 */
#include "conformance/na_harness.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* At most this many sleeps in an idle 300 ms wait (one per 10 ms). */
#define NA_POLL_IDLE_SLEEPS_MAX 30

static void
test_class_and_addresses(void **state)
{
    struct na_env *env = *state;
    char str[256], again[256];
    size_t size = 0, str_size, again_size = sizeof(again);
    na_addr_t self, looked_up, dup, deser;
    unsigned char ser[256];
    size_t ser_size;

    assert_non_null(NA_Get_class_name(env->srv));
    assert_non_null(NA_Get_class_protocol(env->srv));
    assert_string_equal(NA_Get_class_name(env->srv),
                        NA_Get_class_name(env->cli));
    assert_true(NA_Is_listening(env->srv));
    assert_false(NA_Is_listening(env->cli));

    assert_na_ok(NA_Addr_self(env->srv, &self));
    assert_true(NA_Addr_is_self(env->srv, self));
    /* Size probe, then one byte short, then exact. */
    assert_na_ok(NA_Addr_to_string(env->srv, NULL, &size, self));
    assert_true(size > 1 && size <= sizeof(str));
    str_size = size - 1;
    assert_na_ret(NA_Addr_to_string(env->srv, str, &str_size, self),
                  NA_OVERFLOW);
    assert_int_equal(str_size, size);
    assert_na_ok(NA_Addr_to_string(env->srv, str, &str_size, self));
    assert_int_equal(strlen(str) + 1, size);
    /* The string looked up on the server itself is self. */
    assert_na_ok(NA_Addr_lookup(env->srv, str, &looked_up));
    assert_true(NA_Addr_cmp(env->srv, looked_up, self));
    assert_true(NA_Addr_is_self(env->srv, looked_up));
    NA_Addr_free(env->srv, looked_up);
    /* On the client the same string is a peer; what the client prints
     * for it (ofi: the same string; verbs: without the server's local
     * device name) looks up to the same peer. */
    assert_false(NA_Addr_is_self(env->cli, env->srv_addr));
    assert_na_ok(
        NA_Addr_to_string(env->cli, again, &again_size, env->srv_addr));
    assert_na_ok(NA_Addr_lookup(env->cli, again, &looked_up));
    assert_true(NA_Addr_cmp(env->cli, looked_up, env->srv_addr));
    NA_Addr_free(env->cli, looked_up);
    assert_na_ok(NA_Addr_dup(env->cli, env->srv_addr, &dup));
    assert_true(NA_Addr_cmp(env->cli, dup, env->srv_addr));
    NA_Addr_free(env->cli, dup);

    /* Serialization round trip. */
    ser_size = NA_Addr_get_serialize_size(env->cli, env->srv_addr);
    assert_true(ser_size > 0 && ser_size <= sizeof(ser));
    assert_na_ret(NA_Addr_serialize(env->cli, ser, ser_size - 1, env->srv_addr),
                  NA_OVERFLOW);
    assert_na_ok(NA_Addr_serialize(env->cli, ser, ser_size, env->srv_addr));
    assert_na_ok(NA_Addr_deserialize(env->cli, &deser, ser, ser_size));
    assert_true(NA_Addr_cmp(env->cli, deser, env->srv_addr));
    NA_Addr_free(env->cli, deser);
    /* The server's own address deserialized on the server is self. */
    ser_size = NA_Addr_get_serialize_size(env->srv, self);
    assert_na_ok(NA_Addr_serialize(env->srv, ser, ser_size, self));
    assert_na_ok(NA_Addr_deserialize(env->srv, &deser, ser, ser_size));
    assert_true(NA_Addr_is_self(env->srv, deser));
    NA_Addr_free(env->srv, deser);
    NA_Addr_free(env->srv, self);

    /* Strings that name nothing are refused. */
    assert_int_not_equal(NA_Addr_lookup(env->cli, "", &looked_up), NA_SUCCESS);
    assert_int_not_equal(
        NA_Addr_lookup(env->cli, "no such address", &looked_up), NA_SUCCESS);
    na_env_finish(env);
}

/* Deterministic junk. */
static uint64_t
next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
 * Serialized addresses are hostile bytes: every truncation and a broken
 * first byte are refused; junk of every kind never crashes, and what it
 * decodes to (if anything) is an address that can be printed and freed.
 */
static void
test_hostile_address_bytes(void **state)
{
    struct na_env *env = *state;
    unsigned char good[256], bad[256];
    size_t size = NA_Addr_get_serialize_size(env->cli, env->srv_addr);
    na_addr_t out;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int decoded = 0;

    assert_true(size > 0 && size <= sizeof(good));
    assert_na_ok(NA_Addr_serialize(env->cli, good, size, env->srv_addr));
    for (size_t cut = 0; cut < size; cut++)
        assert_int_not_equal(NA_Addr_deserialize(env->cli, &out, good, cut),
                             NA_SUCCESS);
    memcpy(bad, good, size);
    bad[0] ^= 0xff;
    assert_int_not_equal(NA_Addr_deserialize(env->cli, &out, bad, size),
                         NA_SUCCESS);
    for (int round = 0; round < 20000; round++) {
        size_t len = round < 2 ? size : 1 + next_rand(&seed) % sizeof(bad);

        if (round == 0)
            memset(bad, 0, sizeof(bad));
        else if (round == 1)
            memset(bad, 0xff, sizeof(bad));
        else if (round % 2 == 0) {
            /* A good address with a few bytes changed. */
            len = size;
            memcpy(bad, good, size);
            for (int k = 0; k < 1 + round % 3; k++) {
                /* Two statements: the order of two draws in one
                 * expression is the compiler's choice. */
                size_t at = next_rand(&seed) % size;

                bad[at] = (unsigned char) next_rand(&seed);
            }
        } else
            for (size_t i = 0; i < len; i++)
                bad[i] = (unsigned char) next_rand(&seed);
        if (NA_Addr_deserialize(env->cli, &out, bad, len) == NA_SUCCESS) {
            char str[512];
            size_t str_size = sizeof(str);

            decoded++;
            (void) NA_Addr_to_string(env->cli, str, &str_size, out);
            NA_Addr_free(env->cli, out);
        }
    }
    print_message("hostile address bytes: %d of 20000 decoded to an address\n",
                  decoded);
    na_env_finish(env);
}

/*
 * Serialized memory handles are hostile bytes too: every truncation and a
 * broken first byte are refused, junk never crashes, a handle that decodes
 * re-serializes to the same bytes, and a deserialized handle describes
 * remote memory, which cannot be registered here.
 */
static void
test_hostile_mem_handle_bytes(void **state)
{
    struct na_env *env = *state;
    unsigned char mem[64], good[512], bad[512], again[512];
    na_mem_handle_t h, out;
    size_t size;
    uint64_t seed = 0x2545f4914f6cdd1dULL;
    int decoded = 0;

    h = na_registered(env->srv, mem, sizeof(mem), NA_MEM_READ_ONLY);
    size = NA_Mem_handle_get_serialize_size(env->srv, h);
    assert_true(size > 0 && size <= sizeof(good));
    assert_na_ok(NA_Mem_handle_serialize(env->srv, good, size, h));
    assert_na_ok(NA_Mem_handle_deserialize(env->cli, &out, good, size));
    assert_int_equal(NA_Mem_handle_get_serialize_size(env->cli, out), size);
    assert_na_ok(NA_Mem_handle_serialize(env->cli, again, size, out));
    assert_memory_equal(again, good, size);
    assert_int_not_equal(NA_Mem_register(env->cli, out, NA_MEM_TYPE_HOST, 0),
                         NA_SUCCESS);
    NA_Mem_handle_free(env->cli, out);

    for (size_t cut = 0; cut < size; cut++)
        assert_int_not_equal(
            NA_Mem_handle_deserialize(env->cli, &out, good, cut), NA_SUCCESS);
    assert_int_not_equal(NA_Mem_handle_deserialize(env->cli, &out, NULL, size),
                         NA_SUCCESS);
    memcpy(bad, good, size);
    bad[0] ^= 0xff;
    assert_int_not_equal(NA_Mem_handle_deserialize(env->cli, &out, bad, size),
                         NA_SUCCESS);
    for (int round = 0; round < 20000; round++) {
        size_t len = round < 2 ? size : 1 + next_rand(&seed) % sizeof(bad);

        if (round == 0)
            memset(bad, 0, sizeof(bad));
        else if (round == 1)
            memset(bad, 0xff, sizeof(bad));
        else if (round % 2 == 0) {
            len = size;
            memcpy(bad, good, size);
            for (int k = 0; k < 1 + round % 3; k++) {
                /* Two statements: the order of two draws in one
                 * expression is the compiler's choice. */
                size_t at = next_rand(&seed) % size;

                bad[at] = (unsigned char) next_rand(&seed);
            }
        } else
            for (size_t i = 0; i < len; i++)
                bad[i] = (unsigned char) next_rand(&seed);
        if (NA_Mem_handle_deserialize(env->cli, &out, bad, len) == NA_SUCCESS) {
            size_t n = NA_Mem_handle_get_serialize_size(env->cli, out);

            decoded++;
            assert_true(n > 0 && n <= len);
            assert_na_ok(NA_Mem_handle_serialize(env->cli, again, n, out));
            NA_Mem_handle_free(env->cli, out);
        }
    }
    print_message("hostile memory-handle bytes: %d of 20000 decoded\n",
                  decoded);
    assert_na_ok(NA_Mem_deregister(env->srv, h));
    NA_Mem_handle_free(env->srv, h);
    na_env_finish(env);
}

/*
 * How often the calling thread gave up the CPU by itself (went to sleep).
 * This does not depend on the machine's load: a wait that sleeps once
 * counts one, a wait that wakes every millisecond counts hundreds, and a
 * wait that spins counts none however long it is descheduled (being
 * preempted is an involuntary switch).
 */
static long
thread_sleeps(void)
{
    struct rusage ru;

    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

/*
 * Waiting. An idle NA_Poll_wait returns NA_TIMEOUT after its timeout on
 * the NA clock, asleep rather than spinning: the thread went to sleep at
 * least once and at most a few times (NA_POLL_IDLE_SLEEPS_MAX in 300 ms; a
 * spinning wait sleeps never, one that wakes every millisecond hundreds of
 * times, whatever the load); a wait ends early, with NA_SUCCESS, when a
 * completion is already queued (a cancel) or a message arrives. A plugin that
 * offers a poll file descriptor makes it readable when a message arrives.
 */
static void
test_poll_wait(void **state)
{
    struct na_env *env = *state;
    struct na_result r = {0}, s = {0};
    unsigned char buf[64];
    na_op_id_t *r_op = NA_Op_create(env->srv, 0);
    na_op_id_t *s_op = NA_Op_create(env->cli, 0);
    unsigned int n = 99;
    uint64_t t0, elapsed_ms;
    long s0, sleeps;
    int fd;

    t0 = NA_Clock_now(env->srv);
    s0 = thread_sleeps();
    assert_na_ret(NA_Poll_wait(env->srv, env->sctx, 300, &n), NA_TIMEOUT);
    elapsed_ms = (NA_Clock_now(env->srv) - t0) / 1000000u;
    sleeps = thread_sleeps() - s0;
    print_message("idle NA_Poll_wait(300 ms): %llu ms on the NA clock, "
                  "asleep %ld time(s)\n",
                  (unsigned long long) elapsed_ms, sleeps);
    assert_int_equal(n, 0);
    assert_true(elapsed_ms >= 290);
    /* A class with no poll file descriptor may have nothing to sleep on
     * (libfabric's shm provider has no wait object): its wait may yield
     * the CPU instead, often or (on an idle machine) not at all. */
    fd = NA_Poll_get_fd(env->srv, env->sctx);
    if (!env->is_sim && fd >= 0 && sleeps < 1)
        fail_msg("an idle NA_Poll_wait(300 ms) never went to sleep");
    if (!env->is_sim && sleeps > NA_POLL_IDLE_SLEEPS_MAX) {
        if (fd >= 0)
            fail_msg("an idle NA_Poll_wait(300 ms) went to sleep %ld "
                     "time(s), want 1 to %d",
                     sleeps, NA_POLL_IDLE_SLEEPS_MAX);
        print_message("note: %s has no poll fd; its idle wait yielded %ld "
                      "times instead of sleeping\n",
                      env->info, sleeps);
    }

    /* A cancelled receive is queued at once: the wait does not sleep. */
    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &r,
                                        buf, sizeof(buf), NULL, r_op));
    assert_na_ok(NA_Cancel(env->srv, env->sctx, r_op));
    t0 = NA_Clock_now(env->srv);
    assert_na_ok(NA_Poll_wait(env->srv, env->sctx, 10000, &n));
    assert_true(NA_Clock_now(env->srv) - t0 < 5000000000ULL);
    assert_na_ok(NA_Trigger(env->sctx, 16, NULL));
    assert_int_equal(r.calls, 1);
    assert_na_ret(r.ret, NA_CANCELED);

    /* A message ends a long wait long before its timeout. */
    memset(&r, 0, sizeof(r));
    assert_na_ok(NA_Msg_recv_unexpected(env->srv, env->sctx, na_record_cb, &r,
                                        buf, sizeof(buf), NULL, r_op));
    fd = NA_Poll_get_fd(env->srv, env->sctx);
    print_message("poll fd of %s: %d\n", env->info, fd);
    assert_na_ok(NA_Msg_send_unexpected(env->cli, env->cctx, na_record_cb, &s,
                                        "wake", 5, NULL, env->srv_addr, 0, 1,
                                        s_op));
    t0 = NA_Clock_now(env->srv);
    while (s.calls == 0) {
        assert_true(NA_Clock_now(env->srv) - t0 < 30000000000ULL);
        (void) NA_Poll_wait(env->cli, env->cctx, 1, NULL);
        (void) NA_Trigger(env->cctx, 16, NULL);
    }
    assert_na_ok(s.ret);
    if (fd >= 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};

        assert_true(poll(&pfd, 1, 30000) == 1);
        assert_true((pfd.revents & POLLIN) != 0);
    }
    t0 = NA_Clock_now(env->srv);
    while (r.calls == 0) {
        na_return_t ret = NA_Poll_wait(env->srv, env->sctx, 10000, &n);

        assert_true(ret == NA_SUCCESS || ret == NA_TIMEOUT);
        (void) NA_Trigger(env->sctx, 16, NULL);
        assert_true(NA_Clock_now(env->srv) - t0 < 10000000000ULL);
    }
    assert_na_ok(r.ret);
    assert_string_equal((char *) buf, "wake");
    NA_Addr_free(env->srv, r.source);
    assert_na_ok(NA_Op_destroy(env->srv, r_op));
    assert_na_ok(NA_Op_destroy(env->cli, s_op));
    na_env_finish(env);
}

/*
 * Several threads: the server has a progress thread asleep in
 * NA_Poll_wait and echoes every unexpected message back as an expected one
 * with the same tag, from its callbacks; two client threads post
 * request/reply exchanges at once and both progress the one client
 * context while they wait, so either may run the other's callbacks.
 */
#define MT_SLOTS 8
#define MT_SENDERS 2
#define MT_ROUNDS 200
#define MT_BUDGET_NS (120ULL * 1000000000ULL)

struct mt_server;

struct mt_slot {
    struct mt_server *srv;
    na_op_id_t *recv_op, *send_op;
    unsigned char buf[256], reply[256];
    na_addr_t source;
    atomic_int idle; /* no receive posted any more (cancelled, or the
                      * last reply done after the stop) */
};

struct mt_server {
    na_class_t *c;
    na_context_t *ctx;
    struct mt_slot slots[MT_SLOTS];
    atomic_int errors, stop, served;
};

struct mt_sender {
    struct na_env *env;
    int id;
    atomic_int done, errors;
};

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static void mt_post_recv(struct mt_slot *slot);

static void
mt_reply_cb(const struct na_cb_info *info)
{
    struct mt_slot *slot = info->arg;

    if (info->ret != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
    NA_Addr_free(slot->srv->c, slot->source);
    atomic_fetch_add(&slot->srv->served, 1);
    if (!atomic_load(&slot->srv->stop))
        mt_post_recv(slot);
    else
        atomic_store(&slot->idle, 1);
}

static void
mt_recv_cb(const struct na_cb_info *info)
{
    struct mt_slot *slot = info->arg;
    const struct na_cb_info_recv_unexpected *u = &info->info.recv_unexpected;

    if (info->ret == NA_CANCELED) {
        atomic_store(&slot->idle, 1);
        return;
    }
    if (info->ret != NA_SUCCESS) {
        atomic_fetch_add(&slot->srv->errors, 1);
        return;
    }
    slot->source = u->source;
    memcpy(slot->reply, slot->buf, u->actual_buf_size);
    if (NA_Msg_send_expected(slot->srv->c, slot->srv->ctx, mt_reply_cb, slot,
                             slot->reply, u->actual_buf_size, NULL, u->source,
                             0, u->tag, slot->send_op) != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
}

static void
mt_post_recv(struct mt_slot *slot)
{
    if (NA_Msg_recv_unexpected(slot->srv->c, slot->srv->ctx, mt_recv_cb, slot,
                               slot->buf, sizeof(slot->buf), NULL,
                               slot->recv_op) != NA_SUCCESS)
        atomic_fetch_add(&slot->srv->errors, 1);
}

static void *
mt_progress_main(void *arg)
{
    struct mt_server *srv = arg;

    while (atomic_load(&srv->stop) < 2) {
        (void) NA_Poll_wait(srv->c, srv->ctx, 10, NULL);
        (void) NA_Trigger(srv->ctx, 64, NULL);
    }
    return NULL;
}

static void
mt_count_cb(const struct na_cb_info *info)
{
    struct mt_sender *s = info->arg;

    if (info->ret != NA_SUCCESS)
        atomic_fetch_add(&s->errors, 1);
    atomic_fetch_add(&s->done, 1);
}

static void *
mt_sender_main(void *arg)
{
    struct mt_sender *s = arg;
    struct na_env *env = s->env;
    na_op_id_t *send_op = NA_Op_create(env->cli, 0);
    na_op_id_t *recv_op = NA_Op_create(env->cli, 0);
    uint64_t deadline = mono_ns() + MT_BUDGET_NS;
    unsigned char out[64], in[64];

    for (int i = 0; i < MT_ROUNDS; i++) {
        na_tag_t tag = (na_tag_t) (s->id * 100000 + i);
        int want = atomic_load(&s->done) + 2;
        size_t len = (size_t) 1 + (size_t) i % sizeof(out);

        for (size_t k = 0; k < sizeof(out); k++)
            out[k] = (unsigned char) (tag + k);
        memset(in, 0, sizeof(in));
        if (NA_Msg_recv_expected(env->cli, env->cctx, mt_count_cb, s, in,
                                 sizeof(in), NULL, env->srv_addr, 0, tag,
                                 recv_op) != NA_SUCCESS ||
            NA_Msg_send_unexpected(env->cli, env->cctx, mt_count_cb, s, out,
                                   len, NULL, env->srv_addr, 0, tag,
                                   send_op) != NA_SUCCESS) {
            atomic_fetch_add(&s->errors, 1);
            break;
        }
        while (atomic_load(&s->done) < want && mono_ns() < deadline) {
            (void) NA_Poll_wait(env->cli, env->cctx, 10, NULL);
            (void) NA_Trigger(env->cctx, 16, NULL);
        }
        if (atomic_load(&s->done) < want || memcmp(in, out, len) != 0) {
            atomic_fetch_add(&s->errors, 1);
            break;
        }
    }
    while (NA_Op_destroy(env->cli, send_op) == NA_BUSY && mono_ns() < deadline)
        (void) NA_Trigger(env->cctx, 16, NULL);
    while (NA_Op_destroy(env->cli, recv_op) == NA_BUSY && mono_ns() < deadline)
        (void) NA_Trigger(env->cctx, 16, NULL);
    return NULL;
}

static void
test_threads(void **state)
{
    struct na_env *env = *state;
    struct mt_server srv = {.c = env->srv, .ctx = env->sctx};
    struct mt_sender senders[MT_SENDERS];
    pthread_t progress, threads[MT_SENDERS];
    uint64_t deadline;

    atomic_init(&srv.errors, 0);
    atomic_init(&srv.stop, 0);
    atomic_init(&srv.served, 0);
    for (int i = 0; i < MT_SLOTS; i++) {
        srv.slots[i].srv = &srv;
        atomic_init(&srv.slots[i].idle, 0);
        srv.slots[i].recv_op = NA_Op_create(env->srv, 0);
        srv.slots[i].send_op = NA_Op_create(env->srv, 0);
        mt_post_recv(&srv.slots[i]);
    }
    assert_int_equal(pthread_create(&progress, NULL, mt_progress_main, &srv),
                     0);
    for (int i = 0; i < MT_SENDERS; i++) {
        senders[i].env = env;
        senders[i].id = i + 1;
        atomic_init(&senders[i].done, 0);
        atomic_init(&senders[i].errors, 0);
        assert_int_equal(
            pthread_create(&threads[i], NULL, mt_sender_main, &senders[i]), 0);
    }
    for (int i = 0; i < MT_SENDERS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);

    /* Stop reposting, cancel the receives while the progress thread still
     * runs, then stop it once every slot is idle. */
    atomic_store(&srv.stop, 1);
    deadline = mono_ns() + MT_BUDGET_NS;
    for (int i = 0; i < MT_SLOTS; i++) {
        /* Cancel whatever receive the slot has posted until the slot is
         * idle: a reply that finished before the stop reposted one. */
        while (!atomic_load(&srv.slots[i].idle)) {
            assert_true(mono_ns() < deadline);
            (void) NA_Cancel(env->srv, env->sctx, srv.slots[i].recv_op);
            sched_yield();
        }
        while (NA_Op_destroy(env->srv, srv.slots[i].recv_op) == NA_BUSY) {
            assert_true(mono_ns() < deadline);
            sched_yield();
        }
        while (NA_Op_destroy(env->srv, srv.slots[i].send_op) == NA_BUSY) {
            assert_true(mono_ns() < deadline);
            sched_yield();
        }
    }
    atomic_store(&srv.stop, 2);
    assert_int_equal(pthread_join(progress, NULL), 0);

    print_message("threads: %d echo(es) served\n", atomic_load(&srv.served));
    for (int i = 0; i < MT_SENDERS; i++) {
        assert_int_equal(atomic_load(&senders[i].errors), 0);
        assert_int_equal(atomic_load(&senders[i].done), 2 * MT_ROUNDS);
    }
    assert_int_equal(atomic_load(&srv.errors), 0);
    assert_int_equal(atomic_load(&srv.served), MT_SENDERS * MT_ROUNDS);
    na_env_finish(env);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        NA_TEST(test_class_and_addresses),
        NA_TEST(test_hostile_address_bytes),
        NA_TEST(test_hostile_mem_handle_bytes),
        NA_TEST(test_poll_wait),
        NA_TEST(test_threads),
    };

    return na_main(argc, argv, "na_misc", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
