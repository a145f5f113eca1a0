/* The Margo tests' shared harness (tm.h). */
#include "tm.h"

#include <na_sim.h>

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int32_t tm_values[10] = {1, 4, 2, 5, 6, 3, 5, 3, 2, 5};
static unsigned tm_serial;

uint64_t
tm_real_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

const char *
tm_info(void)
{
    const char *info = getenv("QS_TEST_INFO");

    return info != NULL && info[0] != '\0' ? info : "sim";
}

int
tm_is_sim(void)
{
    return strncmp(tm_info(), "sim", 3) == 0;
}

void
tm_addr_for(char *buf, size_t size, const char *role)
{
    if (tm_is_sim())
        snprintf(buf, size, "sim://%s-%u", role, ++tm_serial);
    else
        snprintf(buf, size, "%s", tm_info());
}

hg_addr_t
tm_lookup_self(margo_instance_id from, margo_instance_id mid)
{
    char str[256];
    hg_size_t size = sizeof(str);
    hg_addr_t self, addr = HG_ADDR_NULL;

    assert_hg_ok(margo_addr_self(mid, &self));
    assert_hg_ok(margo_addr_to_string(mid, str, &size, self));
    assert_hg_ok(margo_addr_free(mid, self));
    assert_hg_ok(margo_addr_lookup(from, str, &addr));
    return addr;
}

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
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_add)

void
tm_sum_with(hg_handle_t h, tm_pull_fn pull)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    tm_sum_in_t in;
    tm_sum_out_t out = {-1};
    int32_t values[10] = {0};
    void *ptr = values;
    hg_size_t size = sizeof(values);
    hg_bulk_t local;

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        margo_destroy(h);
        return;
    }
    if (in.n == 10 && margo_bulk_create(mid, 1, &ptr, &size, HG_BULK_WRITE_ONLY,
                                        &local) == HG_SUCCESS) {
        if (pull(mid, info->addr, in.bulk, local, size) == HG_SUCCESS) {
            out.ret = 0;
            for (int i = 0; i < 10; i++)
                out.ret += values[i];
        }
        margo_bulk_free(local);
    }
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}

static hg_return_t
tm_pull_blocking(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
                 hg_bulk_t local, hg_size_t size)
{
    return margo_bulk_transfer(mid, HG_BULK_PULL, addr, remote, 0, local, 0,
                               size);
}

static void
tm_sum(hg_handle_t h)
{
    tm_sum_with(h, tm_pull_blocking);
}
DEFINE_MARGO_RPC_HANDLER(tm_sum)

static void
tm_where(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    struct margo_pool_info info;
    tm_where_out_t out = {-1};
    ABT_pool pool, by_handle = ABT_POOL_NULL;
    ABT_thread self;

    if (ABT_self_get_last_pool(&pool) == ABT_SUCCESS &&
        margo_find_pool_by_handle(mid, pool, &info) == HG_SUCCESS)
        out.pool_index = (int32_t) info.index;
    /* Asked through the ULT's handle (tl::thread::self().get_last_pool()),
     * the answer must be the same pool. */
    if (ABT_thread_self(&self) != ABT_SUCCESS ||
        ABT_thread_get_last_pool(self, &by_handle) != ABT_SUCCESS ||
        by_handle != pool)
        out.pool_index = -2;
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(tm_where)

int32_t
tm_call_add(margo_instance_id client, hg_addr_t addr, hg_id_t id, int32_t a,
            int32_t b)
{
    return tm_call_add_timed(client, addr, id, a, b, 0);
}

int32_t
tm_call_add_timed(margo_instance_id client, hg_addr_t addr, hg_id_t id,
                  int32_t a, int32_t b, double timeout_ms)
{
    tm_add_in_t in = {a, b};
    tm_add_out_t out;
    hg_handle_t h;
    int32_t sum;

    assert_hg_ok(margo_create(client, addr, id, &h));
    assert_hg_ok(margo_forward_timed(h, &in, timeout_ms));
    assert_hg_ok(margo_get_output(h, &out));
    sum = out.sum;
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    return sum;
}

int32_t
tm_call_sum(margo_instance_id client, hg_addr_t addr, hg_id_t id)
{
    int32_t values[10];
    hg_size_t size = sizeof(values);
    void *ptr = values;
    tm_sum_in_t in;
    tm_sum_out_t out;
    hg_handle_t h;
    int32_t sum;

    memcpy(values, tm_values, sizeof(values));
    assert_hg_ok(
        margo_bulk_create(client, 1, &ptr, &size, HG_BULK_READ_ONLY, &in.bulk));
    in.n = 10;
    assert_hg_ok(margo_create(client, addr, id, &h));
    assert_hg_ok(margo_forward(h, &in));
    assert_hg_ok(margo_get_output(h, &out));
    sum = out.ret;
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_bulk_free(in.bulk));
    return sum;
}

void
tm_wait_flag(atomic_int *flag)
{
    while (!atomic_load(flag))
        sched_yield();
}

int
tm_main(const char *name, const struct CMUnitTest *tests, size_t count)
{
    int failed;

    if (tm_is_sim())
        fprintf(stderr, "%s: QS_TEST_INFO=%s, seed %" PRIu64 "\n", name,
                tm_info(), na_sim_get_seed());
    else
        fprintf(stderr, "%s: QS_TEST_INFO=%s\n", name, tm_info());
    failed = _cmocka_run_group_tests(name, tests, count, NULL, NULL);
    if (failed && tm_is_sim())
        na_sim_print_replay_hint(stderr);
    return failed ? 1 : 0;
}
