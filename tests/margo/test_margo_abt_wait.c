/*
 * A handler that blocks in an Argobots wait (ABT_thread_join, an
 * eventual) for ULTs that themselves make blocking Margo calls: the
 * pattern of services that fan a request out to ULTs on the progress
 * pool and join them. Whatever thread runs the handler (the caller's own
 * thread driving progress, or the progress thread) must let the joined
 * ULTs' transfers complete while it waits.
 */
#include "tm.h"

#include <stdlib.h>
#include <string.h>

enum { TW_ULTS = 4 };

/* One slice of the pull, run as a ULT on the instance's progress pool. */
struct tw_slice {
    margo_instance_id mid;
    hg_addr_t addr;
    hg_bulk_t remote, local;
    hg_size_t offset, size;
    hg_return_t ret;
    ABT_eventual done; /* set when the slice is in, if not NULL */
};

static void
tw_slice_ult(void *arg)
{
    struct tw_slice *s = arg;

    s->ret = margo_bulk_transfer(s->mid, HG_BULK_PULL, s->addr, s->remote,
                                 s->offset, s->local, s->offset, s->size);
    if (s->done != ABT_EVENTUAL_NULL)
        ABT_eventual_set(s->done, NULL, 0);
}

/* The n values in TW_ULTS slices, each by its own ULT, waited for with
 * ABT_thread_join (use_eventual 0) or with an eventual each (1). */
static hg_return_t
tw_pull_fanned(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
               hg_bulk_t local, hg_size_t size, int use_eventual)
{
    struct tw_slice s[TW_ULTS];
    ABT_thread t[TW_ULTS];
    ABT_pool pool;
    hg_size_t per = size / TW_ULTS;
    hg_return_t ret = HG_SUCCESS;
    int i;

    if (margo_get_progress_pool(mid, &pool) != 0)
        return HG_OTHER_ERROR;
    for (i = 0; i < TW_ULTS; i++) {
        s[i].mid = mid;
        s[i].addr = addr;
        s[i].remote = remote;
        s[i].local = local;
        s[i].offset = per * (hg_size_t) i;
        s[i].size = i == TW_ULTS - 1 ? size - s[i].offset : per;
        s[i].ret = HG_OTHER_ERROR;
        s[i].done = ABT_EVENTUAL_NULL;
        if (use_eventual && ABT_eventual_create(0, &s[i].done) != ABT_SUCCESS)
            return HG_NOMEM;
        if (ABT_thread_create(pool, tw_slice_ult, &s[i], ABT_THREAD_ATTR_NULL,
                              &t[i]) != ABT_SUCCESS)
            return HG_NOMEM;
    }
    for (i = 0; i < TW_ULTS; i++) {
        if (use_eventual) {
            ABT_eventual_wait(s[i].done, NULL);
            ABT_eventual_free(&s[i].done);
        }
        ABT_thread_join(t[i]);
        ABT_thread_free(&t[i]);
        if (s[i].ret != HG_SUCCESS)
            ret = s[i].ret;
    }
    return ret;
}

static hg_return_t
tw_pull_join(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
             hg_bulk_t local, hg_size_t size)
{
    return tw_pull_fanned(mid, addr, remote, local, size, 0);
}

static hg_return_t
tw_pull_eventual(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
                 hg_bulk_t local, hg_size_t size)
{
    return tw_pull_fanned(mid, addr, remote, local, size, 1);
}

static void
tw_sum_join(hg_handle_t h)
{
    tm_sum_with(h, tw_pull_join);
}
DEFINE_MARGO_RPC_HANDLER(tw_sum_join)

static void
tw_sum_eventual(hg_handle_t h)
{
    tm_sum_with(h, tw_pull_eventual);
}
DEFINE_MARGO_RPC_HANDLER(tw_sum_eventual)

/* One instance that calls itself, with the given progress thread and
 * handler threads, twice through each fanned-out handler. */
static void
tw_run(int use_progress_thread, int rpc_thread_count)
{
    char addr_str[64];
    margo_instance_id mid;
    hg_id_t join_id, ev_id;
    hg_addr_t self;

    tm_addr_for(addr_str, sizeof(addr_str), "abtwait");
    mid = margo_init(addr_str, MARGO_SERVER_MODE, use_progress_thread,
                     rpc_thread_count);
    assert_non_null(mid);
    join_id = MARGO_REGISTER(mid, "tw_sum_join", tm_sum_in_t, tm_sum_out_t,
                             tw_sum_join);
    ev_id = MARGO_REGISTER(mid, "tw_sum_eventual", tm_sum_in_t, tm_sum_out_t,
                           tw_sum_eventual);
    assert_hg_ok(margo_addr_self(mid, &self));
    for (int round = 0; round < 2; round++) {
        assert_int_equal(tm_call_sum(mid, self, join_id), TM_SUM);
        assert_int_equal(tm_call_sum(mid, self, ev_id), TM_SUM);
    }
    assert_hg_ok(margo_addr_free(mid, self));
    margo_finalize(mid);
}

/* No progress thread, handlers in the caller's thread: the thread blocked
 * in margo_forward() drives progress and runs the handler, which joins. */
static void
test_caller_context(void **state)
{
    (void) state;
    tw_run(0, 0);
}

/* Handlers on the progress thread, which joins. */
static void
test_progress_thread(void **state)
{
    (void) state;
    tw_run(1, -1);
}

/* Handlers on a handler thread, with a progress thread (the common
 * server layout; it worked before and must keep working). */
static void
test_handler_thread(void **state)
{
    (void) state;
    tw_run(1, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caller_context),
        cmocka_unit_test(test_progress_thread),
        cmocka_unit_test(test_handler_thread),
    };

    return tm_main("test_margo_abt_wait", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
