/*
 * The Margo layer, end to end: a server instance and a client instance in
 * this process, over the simulated fabric by default (QS_TEST_INFO picks
 * another plugin). Every test finalizes every instance it made, so an
 * AddressSanitizer build checks that nothing leaks.
 *
 * Tests with no progress thread and no handler threads run in this one
 * thread: the client's blocking calls also drive the server (see
 * docs/margo.md), and on the simulator they are deterministic for the seed
 * (QS_SIM_SEED), which is printed at the start and on failure. Tests with
 * threads are not deterministic, by nature. No test waits on wall-clock
 * time: deadlines are on the NA clock, virtual on the simulator.
 */
#include <margo.h>
#include <mercury_macros.h>
#include <na_sim.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

MERCURY_GEN_PROC(tm_add_in_t, ((int32_t) (a))((int32_t) (b)))
MERCURY_GEN_PROC(tm_add_out_t, ((int32_t) (sum)))
MERCURY_GEN_PROC(tm_sum_in_t, ((int32_t) (n))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(tm_sum_out_t, ((int32_t) (ret)))

#define assert_hg_ret(got, want)                                               \
    do {                                                                       \
        hg_return_t tm_got_ = (got), tm_want_ = (want);                        \
        if (tm_got_ != tm_want_)                                               \
            fail_msg("%s: got %s (%d), want %s (%d)", #got,                    \
                     HG_Error_to_string(tm_got_), (int) tm_got_,               \
                     HG_Error_to_string(tm_want_), (int) tm_want_);            \
    } while (0)
#define assert_hg_ok(expr) assert_hg_ret((expr), HG_SUCCESS)

/* The ten values of the tutorial; they add up to 36. */
static const int32_t tm_values[10] = {1, 4, 2, 5, 6, 3, 5, 3, 2, 5};
#define TM_SUM 36

/* ---- Server side ------------------------------------------------------ */

/* What the handlers saw, read by the tests. Handlers may run on several
 * threads, hence atomics and a lock for the held handles. */
static atomic_int tm_add_calls;
static atomic_int tm_notify_calls;
static atomic_int tm_notify_respond_ret;
static pthread_mutex_t tm_held_lock = PTHREAD_MUTEX_INITIALIZER;
static hg_handle_t tm_held[16];
static int tm_held_count;

static void
tm_add(hg_handle_t h)
{
    tm_add_in_t in;
    tm_add_out_t out;

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        margo_destroy(h);
        return;
    }
    out.sum = in.a + in.b;
    atomic_fetch_add(&tm_add_calls, 1);
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_add)

/* Never answers: keeps the handle for the test to destroy. */
static void
tm_hold(hg_handle_t h)
{
    pthread_mutex_lock(&tm_held_lock);
    if (tm_held_count < (int) (sizeof(tm_held) / sizeof(tm_held[0])))
        tm_held[tm_held_count++] = h;
    else
        margo_destroy(h);
    pthread_mutex_unlock(&tm_held_lock);
}
DEFINE_MARGO_RPC_HANDLER(tm_hold)

static int
tm_held_get(void)
{
    int n;

    pthread_mutex_lock(&tm_held_lock);
    n = tm_held_count;
    pthread_mutex_unlock(&tm_held_lock);
    return n;
}

static void
tm_held_release(void)
{
    pthread_mutex_lock(&tm_held_lock);
    for (int i = 0; i < tm_held_count; i++)
        assert_hg_ok(margo_destroy(tm_held[i]));
    tm_held_count = 0;
    pthread_mutex_unlock(&tm_held_lock);
}

/* The tutorial's handler: pull the client's values and add them up. With
 * `async`, the pull goes through margo_bulk_itransfer() and margo_wait(). */
static void
tm_sum_common(hg_handle_t h, int async)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    tm_sum_in_t in;
    tm_sum_out_t out = {0};
    int32_t *values;
    hg_size_t size;
    hg_bulk_t local;
    margo_request req;
    hg_return_t ret;

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        margo_destroy(h);
        return;
    }
    size = (hg_size_t) in.n * sizeof(*values);
    values = calloc((size_t) in.n, sizeof(*values));
    ret = margo_bulk_create(mid, 1, (void **) &values, &size,
                            HG_BULK_WRITE_ONLY, &local);
    if (ret == HG_SUCCESS) {
        if (async) {
            ret = margo_bulk_itransfer(mid, HG_BULK_PULL, info->addr, in.bulk,
                                       0, local, 0, size, &req);
            if (ret == HG_SUCCESS)
                ret = margo_wait(req);
        } else {
            ret = margo_bulk_transfer(mid, HG_BULK_PULL, info->addr, in.bulk, 0,
                                      local, 0, size);
        }
        margo_bulk_free(local);
    }
    for (int32_t i = 0; ret == HG_SUCCESS && i < in.n; i++)
        out.ret += values[i];
    if (ret != HG_SUCCESS)
        out.ret = -1;
    margo_respond(h, &out);
    free(values);
    margo_free_input(h, &in);
    margo_destroy(h);
}

static void
tm_sum(hg_handle_t h)
{
    tm_sum_common(h, 0);
}
DEFINE_MARGO_RPC_HANDLER(tm_sum)

static void
tm_sum_async(hg_handle_t h)
{
    tm_sum_common(h, 1);
}
DEFINE_MARGO_RPC_HANDLER(tm_sum_async)

/* Answers, then shuts its own instance down, as the tutorial's server does
 * after its last RPC. */
static void
tm_quit(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);

    margo_respond(h, NULL);
    margo_destroy(h);
    margo_finalize(mid);
}
DEFINE_MARGO_RPC_HANDLER(tm_quit)

/* One-way: counts, and records what margo_respond() says. */
static void
tm_notify(hg_handle_t h)
{
    atomic_store(&tm_notify_respond_ret, (int) margo_respond(h, NULL));
    atomic_fetch_add(&tm_notify_calls, 1);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_notify)

/* Data registered with the RPC: a counter the handler bumps and returns. */
struct tm_data {
    int counter;
    int freed;
};

static void
tm_data_free(void *arg)
{
    ((struct tm_data *) arg)->freed = 1;
}

static void
tm_data(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    struct tm_data *data = margo_registered_data(mid, info->id);
    tm_add_out_t out = {data ? ++data->counter : -1};

    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_data)

/* A handler that makes a blocking RPC of its own, to the same server:
 * returns a + b + 1 computed by tm_add. */
static void
tm_outer(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    tm_add_in_t in;
    tm_add_out_t out = {-1}, inner;
    hg_addr_t self;
    hg_handle_t h2;
    hg_id_t add_id;
    hg_bool_t found = HG_FALSE;

    margo_get_input(h, &in);
    if (margo_registered_name(mid, "tm_add", &add_id, &found) == HG_SUCCESS &&
        found && margo_addr_self(mid, &self) == HG_SUCCESS) {
        if (margo_create(mid, self, add_id, &h2) == HG_SUCCESS) {
            if (margo_forward(h2, &in) == HG_SUCCESS &&
                margo_get_output(h2, &inner) == HG_SUCCESS) {
                out.sum = inner.sum + 1;
                margo_free_output(h2, &inner);
            }
            margo_destroy(h2);
        }
        margo_addr_free(mid, self);
    }
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_outer)

/* Forwards tm_hold, with no deadline, to the address in tm_relay_target:
 * a handler blocked on a target that never answers. Records the result. */
static const char *tm_relay_target;
static atomic_int tm_relay_ret = -1;

static void
tm_relay(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    hg_addr_t target;
    hg_handle_t h2;
    hg_id_t hold_id;
    hg_bool_t found = HG_FALSE;
    hg_return_t ret = HG_OTHER_ERROR;

    if (margo_registered_name(mid, "tm_hold", &hold_id, &found) == HG_SUCCESS &&
        found &&
        margo_addr_lookup(mid, tm_relay_target, &target) == HG_SUCCESS) {
        if (margo_create(mid, target, hold_id, &h2) == HG_SUCCESS) {
            ret = margo_forward(h2, NULL);
            margo_destroy(h2);
        }
        margo_addr_free(mid, target);
    }
    atomic_store(&tm_relay_ret, (int) ret);
    margo_respond(h, NULL);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_relay)

/* ---- The environment -------------------------------------------------- */

static const char *
tm_info(void)
{
    const char *info = getenv("QS_TEST_INFO");

    return info != NULL && info[0] != '\0' ? info : "sim";
}

static int
tm_is_sim(void)
{
    return strncmp(tm_info(), "sim", 3) == 0;
}

/* Ids are the same in both instances (a hash of the name). */
struct tm_ids {
    hg_id_t add, hold, sum, sum_async, quit, notify, data, outer, relay;
    hg_id_t missing;
};

struct tm_env {
    margo_instance_id server;
    margo_instance_id client;
    hg_addr_t server_addr; /* the client's lookup of the server */
    struct tm_ids ids;
    struct tm_data data;
};

static unsigned tm_serial;

static void
tm_register(margo_instance_id mid, int serve, struct tm_ids *ids)
{
    if (serve) {
        ids->add =
            MARGO_REGISTER(mid, "tm_add", tm_add_in_t, tm_add_out_t, tm_add);
        ids->hold = MARGO_REGISTER(mid, "tm_hold", void, void, tm_hold);
        ids->sum =
            MARGO_REGISTER(mid, "tm_sum", tm_sum_in_t, tm_sum_out_t, tm_sum);
        ids->sum_async = MARGO_REGISTER(mid, "tm_sum_async", tm_sum_in_t,
                                        tm_sum_out_t, tm_sum_async);
        ids->quit = MARGO_REGISTER(mid, "tm_quit", void, void, tm_quit);
        ids->notify = MARGO_REGISTER(mid, "tm_notify", void, void, tm_notify);
        ids->data = MARGO_REGISTER(mid, "tm_data", void, tm_add_out_t, tm_data);
        ids->outer = MARGO_REGISTER(mid, "tm_outer", tm_add_in_t, tm_add_out_t,
                                    tm_outer);
        ids->relay = MARGO_REGISTER(mid, "tm_relay", void, void, tm_relay);
    } else {
        ids->add =
            MARGO_REGISTER(mid, "tm_add", tm_add_in_t, tm_add_out_t, NULL);
        ids->hold = MARGO_REGISTER(mid, "tm_hold", void, void, NULL);
        ids->sum =
            MARGO_REGISTER(mid, "tm_sum", tm_sum_in_t, tm_sum_out_t, NULL);
        ids->sum_async = MARGO_REGISTER(mid, "tm_sum_async", tm_sum_in_t,
                                        tm_sum_out_t, NULL);
        ids->quit = MARGO_REGISTER(mid, "tm_quit", void, void, NULL);
        ids->notify = MARGO_REGISTER(mid, "tm_notify", void, void, NULL);
        ids->data = MARGO_REGISTER(mid, "tm_data", void, tm_add_out_t, NULL);
        ids->outer =
            MARGO_REGISTER(mid, "tm_outer", tm_add_in_t, tm_add_out_t, NULL);
        ids->relay = MARGO_REGISTER(mid, "tm_relay", void, void, NULL);
        /* Registered only here: the server answers HG_NOENTRY. */
        ids->missing =
            MARGO_REGISTER(mid, "tm_missing", tm_add_in_t, tm_add_out_t, NULL);
    }
}

/*
 * Start a server (server_pt: progress thread, server_rt: rpc_thread_count)
 * and a client (client_pt), and look the server up from the client.
 * `names`, if not NULL, fixes the simulated node names (for replays).
 */
static void
tm_start_named(struct tm_env *env, int server_pt, int server_rt, int client_pt,
               const char *server_name, const char *client_name)
{
    char server_info[64], client_info[64], addr_str[256];
    hg_size_t addr_size = sizeof(addr_str);
    struct tm_ids client_ids;
    hg_addr_t self;
    unsigned n = ++tm_serial;

    memset(env, 0, sizeof(*env));
    atomic_store(&tm_add_calls, 0);
    atomic_store(&tm_notify_calls, 0);
    if (tm_is_sim()) {
        if (server_name)
            snprintf(server_info, sizeof(server_info), "%s", server_name);
        else
            snprintf(server_info, sizeof(server_info), "sim://margo-server-%u",
                     n);
        if (client_name)
            snprintf(client_info, sizeof(client_info), "%s", client_name);
        else
            snprintf(client_info, sizeof(client_info), "sim://margo-client-%u",
                     n);
    } else {
        snprintf(server_info, sizeof(server_info), "%s", tm_info());
        snprintf(client_info, sizeof(client_info), "%s", tm_info());
    }

    env->server =
        margo_init(server_info, MARGO_SERVER_MODE, server_pt, server_rt);
    assert_non_null(env->server);
    assert_true(margo_is_listening(env->server));
    tm_register(env->server, 1, &env->ids);

    env->client = margo_init(client_info, MARGO_CLIENT_MODE, client_pt, 0);
    assert_non_null(env->client);
    assert_false(margo_is_listening(env->client));
    tm_register(env->client, 0, &client_ids);
    assert_int_equal(client_ids.add, env->ids.add);
    assert_int_equal(client_ids.sum, env->ids.sum);
    env->ids.missing = client_ids.missing;

    assert_hg_ok(margo_addr_self(env->server, &self));
    assert_hg_ok(margo_addr_to_string(env->server, addr_str, &addr_size, self));
    assert_hg_ok(margo_addr_free(env->server, self));
    assert_hg_ok(margo_addr_lookup(env->client, addr_str, &env->server_addr));
}

static void
tm_start(struct tm_env *env, int server_pt, int server_rt, int client_pt)
{
    tm_start_named(env, server_pt, server_rt, client_pt, NULL, NULL);
}

/* Finalize whatever is left of the env. */
static void
tm_stop(struct tm_env *env)
{
    if (env->client) {
        if (env->server_addr)
            assert_hg_ok(margo_addr_free(env->client, env->server_addr));
        margo_finalize(env->client);
        env->client = MARGO_INSTANCE_NULL;
    }
    if (env->server) {
        margo_finalize(env->server);
        env->server = MARGO_INSTANCE_NULL;
    }
}

/* Forward tm_add(a, b) from the client and return the sum (or fail). */
static int32_t
tm_call_add(struct tm_env *env, int32_t a, int32_t b)
{
    tm_add_in_t in = {a, b};
    tm_add_out_t out;
    hg_handle_t h;
    int32_t sum;

    assert_hg_ok(margo_create(env->client, env->server_addr, env->ids.add, &h));
    assert_hg_ok(margo_forward(h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    sum = out.sum;
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    return sum;
}

/* Forward tm_sum (or tm_sum_async) over the tutorial's values. */
static int32_t
tm_call_sum(struct tm_env *env, hg_id_t id)
{
    int32_t values[10];
    hg_size_t size = sizeof(values);
    void *ptr = values;
    tm_sum_in_t in;
    tm_sum_out_t out;
    hg_handle_t h;
    int32_t sum;

    memcpy(values, tm_values, sizeof(values));
    assert_hg_ok(margo_bulk_create(env->client, 1, &ptr, &size,
                                   HG_BULK_READ_ONLY, &in.bulk));
    in.n = 10;
    assert_hg_ok(margo_create(env->client, env->server_addr, id, &h));
    assert_hg_ok(margo_forward(h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    sum = out.ret;
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_bulk_free(in.bulk));
    return sum;
}

static uint64_t
tm_real_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* ---- Tests ------------------------------------------------------------ */

static void
test_forward_blocking(void **state)
{
    struct tm_env env;
    hg_addr_t dup;
    tm_add_in_t in = {1, 2};
    hg_handle_t h;

    (void) state;
    tm_start(&env, 0, 0, 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(tm_call_add(&env, i, 100), i + 100);
    assert_int_equal(atomic_load(&tm_add_calls), 10);

    /* An RPC the server never registered. */
    assert_hg_ok(
        margo_create(env.client, env.server_addr, env.ids.missing, &h));
    assert_hg_ret(margo_forward(h, &in), HG_NOENTRY);
    assert_hg_ok(margo_destroy(h));

    /* Addresses, accessors, logging levels. */
    assert_hg_ok(margo_addr_dup(env.client, env.server_addr, &dup));
    assert_true(margo_addr_cmp(env.client, dup, env.server_addr));
    assert_hg_ok(margo_addr_free(env.client, dup));
    assert_non_null(margo_get_class(env.client));
    assert_non_null(margo_get_context(env.client));
    assert_int_equal(margo_set_log_level(env.client, MARGO_LOG_ERROR), 0);
    assert_int_equal(margo_set_log_level(env.client, (margo_log_level) 42), -1);
    tm_stop(&env);
}

static void
test_forward_timed_silent_target(void **state)
{
    struct tm_env env;
    hg_handle_t h;
    uint64_t v0, v1, r0, r1;

    (void) state;
    tm_start(&env, 0, 0, 0);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.hold, &h));
    v0 = HG_Clock_now(margo_get_class(env.client));
    r0 = tm_real_ns();
    assert_hg_ret(margo_forward_timed(h, NULL, 500.0), HG_TIMEOUT);
    v1 = HG_Clock_now(margo_get_class(env.client));
    r1 = tm_real_ns();
    /* The deadline passed on the NA clock... */
    assert_true(v1 - v0 >= 500ull * 1000000ull);
    /* ...and on the simulator that costs no real time. */
    if (tm_is_sim())
        assert_true(r1 - r0 < 5ull * 1000000000ull);
    assert_hg_ok(margo_destroy(h));

    /* The target got the request and is still there for others. */
    assert_int_equal(tm_held_get(), 1);
    assert_int_equal(tm_call_add(&env, 20, 22), 42);

    /* A deadline under a millisecond is still a deadline (Margo rounds it
     * up for HG, which takes whole milliseconds, 0 meaning none). */
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.hold, &h));
    v0 = HG_Clock_now(margo_get_class(env.client));
    assert_hg_ret(margo_forward_timed(h, NULL, 0.5), HG_TIMEOUT);
    v1 = HG_Clock_now(margo_get_class(env.client));
    assert_true(v1 - v0 >= 500000ull);
    assert_hg_ok(margo_destroy(h));

    /* A deadline that is not reached changes nothing. */
    {
        tm_add_in_t in = {3, 4};
        tm_add_out_t out;

        assert_hg_ok(
            margo_create(env.client, env.server_addr, env.ids.add, &h));
        assert_hg_ok(margo_forward_timed(h, &in, 10000.0));
        assert_hg_ok(margo_get_output(h, &out));
        assert_int_equal(out.sum, 7);
        assert_hg_ok(margo_free_output(h, &out));
        assert_hg_ok(margo_destroy(h));
    }
    tm_held_release();
    tm_stop(&env);
}

static void
test_iforward_wait_test(void **state)
{
    enum { N = 8 };
    struct tm_env env;
    hg_handle_t h[N];
    margo_request req[N];
    tm_add_in_t in;
    tm_add_out_t out;
    int flag = 0, spins = 0;
    size_t index;

    (void) state;
    tm_start(&env, 0, 0, 0);
    for (int i = 0; i < N; i++) {
        assert_hg_ok(
            margo_create(env.client, env.server_addr, env.ids.add, &h[i]));
        in.a = i;
        in.b = i;
        assert_hg_ok(margo_iforward(h[i], &in, &req[i]));
    }
    /* margo_test() makes progress by itself when no thread does. */
    while (!flag) {
        assert_hg_ok(margo_test(req[0], &flag));
        assert_true(++spins < 1000000);
    }
    assert_hg_ok(margo_wait(req[0]));
    req[0] = MARGO_REQUEST_NULL;
    /* wait_any hands back each of the rest exactly once. */
    for (int k = 1; k < N; k++) {
        assert_hg_ok(margo_wait_any(N, req, &index));
        assert_true(index >= 1 && index < N);
        assert_null(req[index]);
    }
    assert_hg_ret(margo_wait_any(N, req, &index), HG_INVALID_ARG);
    for (int i = 0; i < N; i++) {
        assert_hg_ok(margo_get_output(h[i], &out));
        assert_int_equal(out.sum, 2 * i);
        assert_hg_ok(margo_free_output(h[i], &out));
        assert_hg_ok(margo_destroy(h[i]));
    }
    tm_stop(&env);
}

static void
test_bulk_pull_in_handler(void **state)
{
    struct tm_env env;

    (void) state;
    tm_start(&env, 0, 0, 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tm_call_sum(&env, env.ids.sum), TM_SUM);
        assert_int_equal(tm_call_sum(&env, env.ids.sum_async), TM_SUM);
    }
    tm_stop(&env);
}

static void
test_nested_forward_in_handler(void **state)
{
    struct tm_env env;
    tm_add_in_t in = {2, 3};
    tm_add_out_t out;
    hg_handle_t h;

    (void) state;
    tm_start(&env, 0, 0, 0);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.outer, &h));
    assert_hg_ok(margo_forward(h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 6);
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    tm_stop(&env);
}

static void
test_finalize_from_handler(void **state)
{
    struct tm_env env;
    tm_add_in_t in = {1, 1};
    hg_handle_t h;

    (void) state;
    tm_start(&env, 0, 0, 0);
    assert_int_equal(tm_call_add(&env, 1, 2), 3);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.quit, &h));
    assert_hg_ok(margo_forward(h, NULL));
    assert_hg_ok(margo_destroy(h));

    /* Shutdown was requested: a later RPC is refused, not left hanging. */
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.add, &h));
    assert_hg_ret(margo_forward(h, &in), HG_CANCELED);
    assert_hg_ok(margo_destroy(h));

    /* The deferred shutdown completes here. */
    margo_wait_for_finalize(env.server);
    env.server = MARGO_INSTANCE_NULL;
    tm_stop(&env);
}

static void
test_finalize_from_handler_thread(void **state)
{
    struct tm_env env;
    hg_handle_t h;

    (void) state;
    tm_start(&env, 1, 2, 0);
    assert_int_equal(tm_call_add(&env, 5, 6), 11);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.quit, &h));
    assert_hg_ok(margo_forward(h, NULL));
    assert_hg_ok(margo_destroy(h));
    /* Joins the handler threads, one of which asked for it. */
    margo_wait_for_finalize(env.server);
    env.server = MARGO_INSTANCE_NULL;
    tm_stop(&env);
}

static void
test_finalize_with_rpc_in_flight(void **state)
{
    struct tm_env env;
    margo_request req;
    hg_handle_t h;

    (void) state;
    tm_start(&env, 0, 0, 0);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.hold, &h));
    assert_hg_ok(margo_iforward(h, NULL, &req));
    /* HG keeps its own reference while the forward is in flight. */
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_addr_free(env.client, env.server_addr));
    env.server_addr = HG_ADDR_NULL;
    margo_finalize(env.client);
    env.client = MARGO_INSTANCE_NULL;
    /* Finalize cancelled it; the request outlives the instance. */
    assert_hg_ret(margo_wait(req), HG_CANCELED);

    tm_held_release();
    tm_stop(&env);
}

/* A thread blocked in margo_forward() when another finalizes the
 * instance: the forward fails with HG_CANCELED and the thread goes on. */
struct tm_blocked {
    struct tm_env *env;
    hg_return_t ret;
};

static void *
tm_blocked_main(void *arg)
{
    struct tm_blocked *b = arg;
    hg_handle_t h;

    b->ret =
        margo_create(b->env->client, b->env->server_addr, b->env->ids.hold, &h);
    if (b->ret != HG_SUCCESS)
        return NULL;
    b->ret = margo_forward(h, NULL);
    margo_destroy(h);
    return NULL;
}

static void
test_finalize_with_thread_blocked(void **state)
{
    struct tm_env env;
    struct tm_blocked b;
    pthread_t thread;

    (void) state;
    tm_start(&env, 0, 0, 0);
    b.env = &env;
    b.ret = HG_SUCCESS;
    assert_int_equal(pthread_create(&thread, NULL, tm_blocked_main, &b), 0);
    /* The blocked thread drives the server too: wait until the request
     * is held there, so the forward is certainly in flight. */
    while (tm_held_get() == 0)
        sched_yield();
    assert_hg_ok(margo_addr_free(env.client, env.server_addr));
    env.server_addr = HG_ADDR_NULL;
    margo_finalize(env.client);
    env.client = MARGO_INSTANCE_NULL;
    pthread_join(thread, NULL);
    assert_hg_ret(b.ret, HG_CANCELED);
    tm_held_release();
    tm_stop(&env);
}

/* A handler blocked on a target that never answers does not hold finalize
 * forever: after the grace period its forward is cancelled. */
static void
test_finalize_with_handler_blocked(void **state)
{
    struct tm_env env;
    struct tm_ids silent_ids;
    margo_instance_id silent;
    margo_request req;
    hg_handle_t h;
    hg_return_t ret;
    char silent_name[64];
    int flag = 0;
    uint64_t expiries;

    (void) state;
    if (!tm_is_sim())
        skip(); /* the grace period is 10 s of real time elsewhere */
    /* The server runs the relay on a handler thread. */
    tm_start(&env, 1, 1, 0);
    /* A server that holds every tm_hold request without answering. */
    snprintf(silent_name, sizeof(silent_name), "sim://margo-silent-%u",
             ++tm_serial);
    silent = margo_init(silent_name, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(silent);
    tm_register(silent, 1, &silent_ids);
    tm_relay_target = silent_name;
    atomic_store(&tm_relay_ret, -1);

    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.relay, &h));
    /* No deadline on the client's request: in a world driven by several
     * threads, virtual time moves while a thread computes outside the
     * simulator (docs/sim.md), so a deadline could pass before the request
     * is even sent, and the relay would never start. */
    assert_hg_ok(margo_iforward(h, NULL, &req));
    /* This thread drives the client and the silent server: once the
     * relayed request is held there, the relay handler is blocked. */
    while (tm_held_get() == 0) {
        assert_hg_ok(margo_test(req, &flag));
        if (flag)
            fail_msg("the relay ended before its target held it: %d",
                     atomic_load(&tm_relay_ret));
        margo_thread_sleep(env.client, 1.0);
    }
    /* The silent server's untriggered completion waits for this thread,
     * which waits in the fabric meanwhile: it must not hold the clock
     * through finalize's 10 s of virtual grace (docs/sim.md). */
    expiries = na_sim_grace_expiries();
    margo_finalize(env.server);
    env.server = MARGO_INSTANCE_NULL;
    assert_int_equal(na_sim_grace_expiries(), expiries);
    assert_int_equal(atomic_load(&tm_relay_ret), HG_CANCELED);
    /* The client's request ends one way or another, without hanging: the
     * relay's response may have left before the server closed. */
    (void) HG_Cancel(h);
    ret = margo_wait(req);
    assert_true(ret == HG_SUCCESS || ret == HG_CANCELED);
    assert_hg_ok(margo_destroy(h));
    tm_held_release();
    margo_finalize(silent);
    tm_stop(&env);
}

/* Forwards from several threads at once, each blocking in margo_forward().
 */
struct tm_worker {
    struct tm_env *env;
    int failures;
};

static void *
tm_worker_main(void *arg)
{
    struct tm_worker *w = arg;

    for (int i = 0; i < 8; i++) {
        int32_t values[10];
        hg_size_t size = sizeof(values);
        void *ptr = values;
        tm_sum_in_t in;
        tm_sum_out_t out;
        hg_handle_t h;

        memcpy(values, tm_values, sizeof(values));
        in.n = 10;
        if (margo_bulk_create(w->env->client, 1, &ptr, &size, HG_BULK_READ_ONLY,
                              &in.bulk) != HG_SUCCESS) {
            w->failures++;
            continue;
        }
        if (margo_create(w->env->client, w->env->server_addr, w->env->ids.sum,
                         &h) == HG_SUCCESS) {
            if (margo_forward(h, &in) == HG_SUCCESS &&
                margo_get_output(h, &out) == HG_SUCCESS) {
                if (out.ret != TM_SUM)
                    w->failures++;
                margo_free_output(h, &out);
            } else {
                w->failures++;
            }
            margo_destroy(h);
        } else {
            w->failures++;
        }
        margo_bulk_free(in.bulk);
    }
    return NULL;
}

static void
tm_run_workers(struct tm_env *env, int count)
{
    pthread_t threads[8];
    struct tm_worker workers[8];

    assert_true(count <= 8);
    for (int i = 0; i < count; i++) {
        workers[i].env = env;
        workers[i].failures = 0;
        assert_int_equal(
            pthread_create(&threads[i], NULL, tm_worker_main, &workers[i]), 0);
    }
    for (int i = 0; i < count; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(workers[i].failures, 0);
    }
}

static void
test_handler_threads(void **state)
{
    enum { N = 16 };
    struct tm_env env;
    int32_t values[N][10];
    hg_size_t size = sizeof(values[0]);
    tm_sum_in_t in[N];
    tm_sum_out_t out;
    hg_handle_t h[N];
    margo_request req[N];

    (void) state;
    tm_start(&env, 1, 4, 1);
    /* Many RPCs in flight at once, each pulling in its own handler. */
    for (int i = 0; i < N; i++) {
        void *ptr = values[i];

        memcpy(values[i], tm_values, sizeof(values[i]));
        in[i].n = 10;
        assert_hg_ok(margo_bulk_create(env.client, 1, &ptr, &size,
                                       HG_BULK_READ_ONLY, &in[i].bulk));
        assert_hg_ok(margo_create(env.client, env.server_addr,
                                  i % 2 ? env.ids.sum : env.ids.sum_async,
                                  &h[i]));
        assert_hg_ok(margo_iforward(h[i], &in[i], &req[i]));
    }
    for (int i = 0; i < N; i++) {
        assert_hg_ok(margo_wait(req[i]));
        assert_hg_ok(margo_get_output(h[i], &out));
        assert_int_equal(out.ret, TM_SUM);
        assert_hg_ok(margo_free_output(h[i], &out));
        assert_hg_ok(margo_destroy(h[i]));
        assert_hg_ok(margo_bulk_free(in[i].bulk));
    }
    /* And several client threads blocking at once. */
    tm_run_workers(&env, 4);
    tm_stop(&env);
}

static void
test_handler_threads_no_progress_thread(void **state)
{
    struct tm_env env;

    (void) state;
    /* Handler threads, but progress driven by whoever blocks. */
    tm_start(&env, 0, 3, 0);
    tm_run_workers(&env, 3);
    assert_int_equal(tm_call_sum(&env, env.ids.sum), TM_SUM);
    tm_stop(&env);
}

/* rpc_thread_count 0 with a progress thread: handlers run in a thread
 * blocked in a Margo call on the server, here margo_wait_for_finalize(). */
static void *
tm_wait_for_finalize_main(void *arg)
{
    margo_wait_for_finalize(arg);
    return NULL;
}

static void
test_progress_thread_caller_handlers(void **state)
{
    struct tm_env env;
    pthread_t waiter;

    (void) state;
    tm_start(&env, 1, 0, 0);
    assert_int_equal(
        pthread_create(&waiter, NULL, tm_wait_for_finalize_main, env.server),
        0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tm_call_add(&env, i, i), 2 * i);
    assert_int_equal(tm_call_sum(&env, env.ids.sum), TM_SUM);
    /* The waiter finishes the shutdown. */
    margo_finalize(env.server);
    pthread_join(waiter, NULL);
    env.server = MARGO_INSTANCE_NULL;
    tm_stop(&env);
}

/* rpc_thread_count -1: handlers on the progress thread, whose blocking
 * calls (the bulk pull) must then make progress themselves. */
static void
test_handlers_on_progress_thread(void **state)
{
    struct tm_env env;

    (void) state;
    tm_start(&env, 1, -1, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tm_call_add(&env, i, 1), i + 1);
        assert_int_equal(tm_call_sum(&env, env.ids.sum), TM_SUM);
    }
    tm_stop(&env);
}

static void
test_register_data(void **state)
{
    struct tm_env env;
    tm_add_out_t out;
    hg_handle_t h;

    (void) state;
    tm_start(&env, 0, 0, 0);
    env.data.counter = 0;
    env.data.freed = 0;
    assert_hg_ok(
        margo_register_data(env.server, env.ids.data, &env.data, tm_data_free));
    assert_ptr_equal(margo_registered_data(env.server, env.ids.data),
                     &env.data);
    assert_null(margo_registered_data(env.client, env.ids.data));
    for (int i = 1; i <= 3; i++) {
        assert_hg_ok(
            margo_create(env.client, env.server_addr, env.ids.data, &h));
        assert_hg_ok(margo_forward(h, NULL));
        assert_hg_ok(margo_get_output(h, &out));
        assert_int_equal(out.sum, i);
        assert_hg_ok(margo_free_output(h, &out));
        assert_hg_ok(margo_destroy(h));
    }
    assert_int_equal(env.data.freed, 0);
    tm_stop(&env);
    /* The free callback ran when the server's class went. */
    assert_int_equal(env.data.freed, 1);
}

static void
test_disable_response(void **state)
{
    struct tm_env env;
    hg_handle_t h;
    int disabled = 0;

    (void) state;
    tm_start(&env, 0, 0, 0);
    assert_hg_ok(
        margo_registered_disable_response(env.server, env.ids.notify, 1));
    assert_hg_ok(
        margo_registered_disable_response(env.client, env.ids.notify, 1));
    assert_hg_ok(margo_registered_disabled_response(env.client, env.ids.notify,
                                                    &disabled));
    assert_int_equal(disabled, 1);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.notify, &h));
    /* Returns once sent; nothing comes back. */
    assert_hg_ok(margo_forward(h, NULL));
    assert_hg_ok(margo_destroy(h));
    /* An RPC sent after it is handled after it. */
    assert_int_equal(tm_call_add(&env, 1, 1), 2);
    assert_int_equal(atomic_load(&tm_notify_calls), 1);
    assert_int_not_equal(atomic_load(&tm_notify_respond_ret), HG_SUCCESS);
    tm_stop(&env);
}

/* One single-threaded run over fixed node names; returns the trace hash. */
static uint64_t
tm_replay_once(uint64_t seed)
{
    struct tm_env env;
    uint64_t hash;
    hg_handle_t h;

    assert_int_equal(na_sim_set_seed(seed), NA_SUCCESS);
    tm_start_named(&env, 0, 0, 0, "sim://replay-server", "sim://replay-client");
    assert_int_equal(tm_call_add(&env, 1, 2), 3);
    assert_int_equal(tm_call_sum(&env, env.ids.sum), TM_SUM);
    assert_hg_ok(margo_create(env.client, env.server_addr, env.ids.hold, &h));
    assert_hg_ret(margo_forward_timed(h, NULL, 50.0), HG_TIMEOUT);
    assert_hg_ok(margo_destroy(h));
    tm_held_release();
    tm_stop(&env);
    hash = na_sim_trace_hash();
    return hash;
}

static void
test_deterministic_replay(void **state)
{
    uint64_t seed, first, second;

    (void) state;
    if (!tm_is_sim())
        skip();
    seed = na_sim_get_seed();
    assert_int_equal(na_sim_world_hold(), NA_SUCCESS);
    first = tm_replay_once(seed);
    second = tm_replay_once(seed);
    na_sim_clear_seed();
    assert_int_equal(na_sim_world_release(), NA_SUCCESS);
    assert_true(first == second);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_blocking),
        cmocka_unit_test(test_forward_timed_silent_target),
        cmocka_unit_test(test_iforward_wait_test),
        cmocka_unit_test(test_bulk_pull_in_handler),
        cmocka_unit_test(test_nested_forward_in_handler),
        cmocka_unit_test(test_finalize_from_handler),
        cmocka_unit_test(test_finalize_from_handler_thread),
        cmocka_unit_test(test_finalize_with_rpc_in_flight),
        cmocka_unit_test(test_finalize_with_thread_blocked),
        cmocka_unit_test(test_finalize_with_handler_blocked),
        cmocka_unit_test(test_register_data),
        cmocka_unit_test(test_disable_response),
        cmocka_unit_test(test_deterministic_replay),
        cmocka_unit_test(test_handler_threads),
        cmocka_unit_test(test_handler_threads_no_progress_thread),
        cmocka_unit_test(test_progress_thread_caller_handlers),
        cmocka_unit_test(test_handlers_on_progress_thread),
    };
    int failed;

    if (tm_is_sim())
        fprintf(stderr, "test_margo: QS_TEST_INFO=%s, seed %" PRIu64 "\n",
                tm_info(), na_sim_get_seed());
    else
        fprintf(stderr, "test_margo: QS_TEST_INFO=%s\n", tm_info());
    failed = cmocka_run_group_tests_name("margo", tests, NULL, NULL);
    if (failed && tm_is_sim())
        na_sim_print_replay_hint(stderr);
    return failed ? 1 : 0;
}
