/*
 * RPC-layer properties that the conformance suite does not show: handles
 * and buffers are pooled (no allocation per RPC in steady state), and
 * HG_Forward() is safe from several threads while one thread drives
 * progress. Runs on the simulated fabric.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "mercury.h"
#include "mercury_macros.h"
#include "na_sim.h"

MERCURY_GEN_PROC(add_in_t, ((int32_t) (a))((int32_t) (b)))
MERCURY_GEN_PROC(add_out_t, ((int32_t) (sum)))

static hg_return_t
add_rpc(hg_handle_t handle)
{
    add_in_t in;
    add_out_t out;

    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    out.sum = in.a + in.b;
    HG_Free_input(handle, &in);
    assert_int_equal(HG_Respond(handle, NULL, NULL, &out), HG_SUCCESS);
    return HG_Destroy(handle);
}

struct env {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    hg_addr_t addr;
    hg_id_t id;
};

static void
env_init(struct env *e, const char *name)
{
    char info[64];

    snprintf(info, sizeof(info), "sim://%s", name);
    e->server = HG_Init(info, HG_TRUE);
    e->client = HG_Init("sim", HG_FALSE);
    assert_non_null(e->server);
    assert_non_null(e->client);
    e->sctx = HG_Context_create(e->server);
    e->cctx = HG_Context_create(e->client);
    MERCURY_REGISTER(e->server, "add", add_in_t, add_out_t, add_rpc);
    e->id = MERCURY_REGISTER(e->client, "add", add_in_t, add_out_t, NULL);
    assert_int_equal(HG_Addr_lookup(e->client, info, &e->addr), HG_SUCCESS);
}

static void
env_fini(struct env *e)
{
    /* Let both sides finish what is still in flight (the last respond). */
    for (int i = 0; i < 10; i++) {
        HG_Progress(e->sctx, 0);
        HG_Trigger(e->sctx, 0, 64, NULL);
        HG_Progress(e->cctx, 0);
        HG_Trigger(e->cctx, 0, 64, NULL);
    }
    assert_int_equal(HG_Addr_free(e->client, e->addr), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->cctx), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->client), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->server), HG_SUCCESS);
}

struct call {
    atomic_int done;
    hg_return_t ret;
    int32_t sum;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static hg_return_t
add_cb(const struct hg_cb_info *info)
{
    struct call *c = info->arg;
    add_out_t out;

    c->ret = info->ret;
    if (info->ret == HG_SUCCESS &&
        HG_Get_output(info->info.forward.handle, &out) == HG_SUCCESS) {
        c->sum = out.sum;
        HG_Free_output(info->info.forward.handle, &out);
    }
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->done, 1);
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
    return HG_SUCCESS;
}

static void
drive_until(struct env *e, struct call *c)
{
    /* Stop as soon as the call is done: an idle world lets virtual time
     * run to the progress timeout, as waiting on a real fabric would. */
    for (int i = 0; i < 100000 && !atomic_load(&c->done); i++) {
        HG_Progress(e->cctx, 100);
        HG_Trigger(e->cctx, 0, 64, NULL);
        if (atomic_load(&c->done))
            break;
        HG_Progress(e->sctx, 100);
        HG_Trigger(e->sctx, 0, 64, NULL);
    }
    assert_true(atomic_load(&c->done));
}

static void
test_steady_state_no_allocation(void **state)
{
    (void) state;
    struct env e;
    struct hg_stats before, after;
    hg_handle_t handle;

    env_init(&e, "pool-server");
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            HG_Class_get_stats(e.client, &before);
        for (int i = 0; i < 500; i++) {
            struct call c = {.lock = PTHREAD_MUTEX_INITIALIZER,
                             .cond = PTHREAD_COND_INITIALIZER};
            add_in_t in = {i, 1};

            assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &handle),
                             HG_SUCCESS);
            assert_int_equal(HG_Forward(handle, add_cb, &c, &in), HG_SUCCESS);
            drive_until(&e, &c);
            assert_int_equal(c.ret, HG_SUCCESS);
            assert_int_equal(c.sum, i + 1);
            assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
        }
    }
    HG_Class_get_stats(e.client, &after);
    /* The second 500 RPCs reused pooled handles: no new allocation. */
    assert_true(after.handles_allocated == before.handles_allocated);
    assert_true(after.forwards_sent == before.forwards_sent + 500);
    env_fini(&e);
}

/*
 * An empty pool grows by request_post_incr handles at once: posting 1,000
 * request receives with an increment of 256 allocates four batches (1,024
 * handles), not one handle per receive.
 */
static void
test_pool_grows_by_increment(void **state)
{
    (void) state;
    struct hg_init_info info = HG_INIT_INFO_INITIALIZER;
    struct hg_stats stats;
    hg_class_t *hg_class;
    hg_context_t *context;

    info.request_post_init = 1000;
    info.request_post_incr = 256;
    hg_class = HG_Init_opt("sim://pool-grow", HG_TRUE, &info);
    assert_non_null(hg_class);
    context = HG_Context_create(hg_class);
    assert_non_null(context);
    assert_int_equal(HG_Class_get_stats(hg_class, &stats), HG_SUCCESS);
    assert_int_equal(stats.handles_allocated, 1024);
    assert_int_equal(HG_Context_destroy(context), HG_SUCCESS);
    assert_int_equal(HG_Finalize(hg_class), HG_SUCCESS);
}

/*
 * On the simulated fabric, a single thread alternating HG_Progress() with a
 * generous timeout between client and server must not let virtual time run
 * ahead while the other side has work queued: 200 sequential RPCs over 1 us
 * links take microseconds of virtual time, not the progress timeouts.
 */
static void
test_virtual_time_not_inflated(void **state)
{
    (void) state;
    struct env e;
    hg_handle_t handle;
    uint64_t start;

    env_init(&e, "clock-server");
    start = HG_Clock_now(e.client);
    for (int i = 0; i < 200; i++) {
        struct call c = {.lock = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER};
        add_in_t in = {i, 2};

        assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &handle), HG_SUCCESS);
        assert_int_equal(HG_Forward(handle, add_cb, &c, &in), HG_SUCCESS);
        drive_until(&e, &c);
        assert_int_equal(c.sum, i + 2);
        assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
    }
    /* Each round trip is two 1 us hops; allow 10x for everything else. */
    assert_true(HG_Clock_now(e.client) - start < 200ull * 20000ull);
    env_fini(&e);
}

/* A handler that accepted a request but will not serve it answers with an
 * error code: the origin gets exactly that code, and answering twice is
 * refused. */
static hg_return_t
refuse_rpc(hg_handle_t handle)
{
    assert_int_equal(HG_Respond_error(handle, NULL, NULL, HG_SUCCESS),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Respond_error(handle, NULL, NULL, HG_PERMISSION),
                     HG_SUCCESS);
    assert_int_equal(HG_Respond(handle, NULL, NULL, NULL), HG_BUSY);
    assert_int_equal(HG_Respond_error(handle, NULL, NULL, HG_CANCELED),
                     HG_BUSY);
    return HG_Destroy(handle);
}

static void
test_respond_error(void **state)
{
    (void) state;
    struct env e;
    hg_handle_t handle;
    struct call c = {.lock = PTHREAD_MUTEX_INITIALIZER,
                     .cond = PTHREAD_COND_INITIALIZER};
    add_in_t in = {1, 2};
    hg_id_t id;

    env_init(&e, "refuse-server");
    MERCURY_REGISTER(e.server, "refuse", add_in_t, add_out_t, refuse_rpc);
    id = MERCURY_REGISTER(e.client, "refuse", add_in_t, add_out_t, NULL);
    assert_int_equal(HG_Create(e.cctx, e.addr, id, &handle), HG_SUCCESS);
    assert_int_equal(HG_Forward(handle, add_cb, &c, &in), HG_SUCCESS);
    drive_until(&e, &c);
    assert_int_equal(c.ret, HG_PERMISSION);
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
    env_fini(&e);
}

/* Several threads forward while one thread drives progress. */

#define SENDERS 4
#define PER_SENDER 200

struct shared {
    struct env e;
    atomic_int stop;
    atomic_int failures;
};

static void *
progress_main(void *arg)
{
    struct shared *s = arg;

    while (!atomic_load(&s->stop)) {
        HG_Progress(s->e.cctx, 1);
        HG_Trigger(s->e.cctx, 0, 64, NULL);
        HG_Progress(s->e.sctx, 1);
        HG_Trigger(s->e.sctx, 0, 64, NULL);
    }
    return NULL;
}

static void *
sender_main(void *arg)
{
    struct shared *s = arg;
    hg_handle_t handle;

    if (HG_Create(s->e.cctx, s->e.addr, s->e.id, &handle) != HG_SUCCESS) {
        atomic_fetch_add(&s->failures, 1);
        return NULL;
    }
    for (int i = 0; i < PER_SENDER; i++) {
        struct call c = {.lock = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER};
        add_in_t in = {i, 1000};

        if (HG_Forward(handle, add_cb, &c, &in) != HG_SUCCESS) {
            atomic_fetch_add(&s->failures, 1);
            break;
        }
        pthread_mutex_lock(&c.lock);
        while (!atomic_load(&c.done))
            pthread_cond_wait(&c.cond, &c.lock);
        pthread_mutex_unlock(&c.lock);
        if (c.ret != HG_SUCCESS || c.sum != i + 1000)
            atomic_fetch_add(&s->failures, 1);
    }
    HG_Destroy(handle);
    return NULL;
}

static void
test_forward_from_threads(void **state)
{
    (void) state;
    static struct shared s;
    pthread_t progress, senders[SENDERS];

    memset(&s, 0, sizeof(s));
    env_init(&s.e, "thread-server");
    pthread_create(&progress, NULL, progress_main, &s);
    for (int i = 0; i < SENDERS; i++)
        pthread_create(&senders[i], NULL, sender_main, &s);
    for (int i = 0; i < SENDERS; i++)
        pthread_join(senders[i], NULL);
    atomic_store(&s.stop, 1);
    pthread_join(progress, NULL);
    assert_int_equal(atomic_load(&s.failures), 0);
    env_fini(&s.e);
}

/*
 * HG_Trigger() with nothing to run answers HG_TIMEOUT and sets
 * *actual_count to 0 (Mercury's trigger loops stop on either), and never
 * runs more callbacks than max_count.
 */
static void
test_trigger_counts(void **state)
{
    struct env e;
    struct call c[3];
    hg_handle_t h[3];
    unsigned int n = 77;
    int ran = 0;

    (void) state;
    env_init(&e, "trigger-server");
    assert_int_equal(HG_Trigger(e.cctx, 0, 1, &n), HG_TIMEOUT);
    assert_int_equal(n, 0);
    for (int i = 0; i < 3; i++) {
        add_in_t in = {i, 1};

        memset(&c[i], 0, sizeof(c[i]));
        pthread_mutex_init(&c[i].lock, NULL);
        pthread_cond_init(&c[i].cond, NULL);
        assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h[i]), HG_SUCCESS);
        assert_int_equal(HG_Forward(h[i], add_cb, &c[i], &in), HG_SUCCESS);
    }
    /* The server answers all three; the client only makes progress, so
     * its three completions wait in its queue. */
    for (int i = 0; i < 200; i++) {
        HG_Progress(e.sctx, 10);
        HG_Trigger(e.sctx, 0, 64, NULL);
        HG_Progress(e.cctx, 10);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&c[i].done), 0);
    assert_int_equal(HG_Trigger(e.cctx, 0, 1, &n), HG_SUCCESS);
    assert_int_equal(n, 1);
    for (int i = 0; i < 3; i++)
        ran += atomic_load(&c[i].done);
    assert_int_equal(ran, 1);
    assert_int_equal(HG_Trigger(e.cctx, 0, 64, &n), HG_SUCCESS);
    assert_int_equal(n, 2);
    n = 77;
    assert_int_equal(HG_Trigger(e.cctx, 0, 64, &n), HG_TIMEOUT);
    assert_int_equal(n, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].ret, HG_SUCCESS);
        assert_int_equal(c[i].sum, i + 1);
        assert_int_equal(HG_Destroy(h[i]), HG_SUCCESS);
        pthread_mutex_destroy(&c[i].lock);
        pthread_cond_destroy(&c[i].cond);
    }
    env_fini(&e);
}

/*
 * A thread blocked in HG_Trigger() with a long timeout wakes when a
 * completion arrives on its context from another thread's progress: the
 * completion signals the waiter. If it did not, the trigger would sleep
 * out its hour and the case would fail on its ctest timeout.
 */
struct waiter {
    struct env *e;
    atomic_int started, returned;
    hg_return_t ret;
    unsigned int n;
};

static void *
waiter_main(void *arg)
{
    struct waiter *w = arg;

    atomic_store(&w->started, 1);
    w->ret = HG_Trigger(w->e->cctx, 3600 * 1000, 1, &w->n);
    atomic_store(&w->returned, 1);
    return NULL;
}

static void
test_trigger_wait_wakes(void **state)
{
    struct env e;

    (void) state;
    env_init(&e, "wake-server");
    /* Several rounds: in each, the waiter is very likely inside its wait
     * when the answer lands (the server's work comes first). */
    for (int round = 0; round < 8; round++) {
        struct call c = {.lock = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER};
        struct waiter w = {.e = &e};
        add_in_t in = {round, 7};
        hg_handle_t h;
        pthread_t t;

        assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_SUCCESS);
        assert_int_equal(HG_Forward(h, add_cb, &c, &in), HG_SUCCESS);
        assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
        while (!atomic_load(&w.started))
            sched_yield();
        /* A progress with a timeout lets virtual time move on to the
         * message's arrival; this thread never triggers the client. */
        while (!atomic_load(&w.returned)) {
            HG_Progress(e.sctx, 10);
            HG_Trigger(e.sctx, 0, 64, NULL);
            HG_Progress(e.cctx, 10);
        }
        pthread_join(t, NULL);
        assert_int_equal(w.ret, HG_SUCCESS);
        assert_int_equal(w.n, 1);
        assert_int_equal(atomic_load(&c.done), 1);
        assert_int_equal(c.ret, HG_SUCCESS);
        assert_int_equal(c.sum, round + 7);
        assert_int_equal(HG_Destroy(h), HG_SUCCESS);
    }
    env_fini(&e);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_state_no_allocation),
        cmocka_unit_test(test_pool_grows_by_increment),
        cmocka_unit_test(test_virtual_time_not_inflated),
        cmocka_unit_test(test_respond_error),
        cmocka_unit_test(test_forward_from_threads),
        cmocka_unit_test(test_trigger_counts),
        cmocka_unit_test(test_trigger_wait_wakes),
    };
    printf("sim seed %llu (replay with QS_SIM_SEED)\n",
           (unsigned long long) na_sim_get_seed());
    return cmocka_run_group_tests_name("hg_core", tests, NULL, NULL);
}
