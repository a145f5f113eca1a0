/*
 * Argobots' one-at-a-time execution, seen from a Margo service: the ULTs
 * of one execution stream never overlap, and on the simulator a world
 * whose handlers fan out to ULTs is reproducible from its seed.
 *
 * The service: a server and a client instance in this process, no
 * progress thread, handlers in the caller's context (everything on the
 * primary execution stream, as `margo_init(addr, mode, 0, 0)` gives in
 * Margo). The client puts TD_CALLS calls in flight at once; each handler
 * starts TD_ULTS ULTs on the progress pool that pull a slice of the
 * client's buffer each, append to an unlocked log around yields, and are
 * joined (or waited for with an eventual). The log and the simulator's
 * trace hash must be the same in every run of one seed.
 */
#include "tm.h"

#include <na_sim.h>

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TD_CALLS = 6, TD_ULTS = 4, TD_RUNS = 4, TD_LOG = 4096 };

/* What the ULTs did, in the order they did it; no lock: only one ULT of
 * the stream runs at a time. `inside` catches two ULTs overlapping. */
static struct {
    uint32_t entries[TD_LOG];
    unsigned count;
    int inside;
    int overlaps;
} td_log;

static void
td_note(uint32_t what)
{
    if (td_log.inside++ != 0)
        td_log.overlaps++;
    /* Read, give the core away (not the stream), write back: a second
     * ULT running beside this one loses an entry. */
    unsigned c = td_log.count;
    sched_yield();
    if (c < TD_LOG)
        td_log.entries[c] = what;
    td_log.count = c + 1;
    td_log.inside--;
    /* A switch point of Argobots' own: the stream's next ULT runs. */
    ABT_thread_yield();
}

static uint64_t
td_log_hash(void)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (unsigned i = 0; i < td_log.count && i < TD_LOG; i++) {
        h ^= td_log.entries[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Held across each slice's transfer, for writing by even slices and
 * reading by odd ones, as a service holds its lock across the calls an
 * operation makes: lockers of one stream queue up behind it. */
static ABT_rwlock td_rwlock;

/* The third way to wait for the slices: a count under a mutex and a
 * condition variable. */
struct td_count {
    ABT_mutex mutex;
    ABT_cond cond;
    int left;
};

struct td_slice {
    margo_instance_id mid;
    hg_addr_t addr;
    hg_bulk_t remote, local;
    hg_size_t offset, size;
    hg_return_t ret;
    uint32_t tag; /* call << 8 | slice */
    ABT_eventual done;
    struct td_count *count;
};

static void
td_slice_ult(void *arg)
{
    struct td_slice *s = arg;

    td_note(s->tag << 4 | 1);
    if (s->tag & 1)
        ABT_rwlock_rdlock(td_rwlock);
    else
        ABT_rwlock_wrlock(td_rwlock);
    td_note(s->tag << 4 | 3);
    s->ret = margo_bulk_transfer(s->mid, HG_BULK_PULL, s->addr, s->remote,
                                 s->offset, s->local, s->offset, s->size);
    ABT_rwlock_unlock(td_rwlock);
    td_note(s->tag << 4 | 2);
    if (s->done != ABT_EVENTUAL_NULL)
        ABT_eventual_set(s->done, NULL, 0);
    if (s->count != NULL) {
        ABT_mutex_lock(s->count->mutex);
        if (--s->count->left == 0)
            ABT_cond_broadcast(s->count->cond);
        ABT_mutex_unlock(s->count->mutex);
    }
}

/* way: 0 joins the slices, 1 waits on an eventual each, 2 on a count
 * under a mutex and a condition variable. */
static hg_return_t
td_pull_fanned(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
               hg_bulk_t local, hg_size_t size, uint32_t call, int way)
{
    struct td_slice s[TD_ULTS];
    ABT_thread t[TD_ULTS];
    ABT_pool pool;
    hg_size_t per = size / TD_ULTS;
    hg_return_t ret = HG_SUCCESS;
    struct td_count count = {ABT_MUTEX_NULL, ABT_COND_NULL, TD_ULTS};
    int i;

    if (margo_get_progress_pool(mid, &pool) != 0)
        return HG_OTHER_ERROR;
    if (way == 2 && (ABT_mutex_create(&count.mutex) != ABT_SUCCESS ||
                     ABT_cond_create(&count.cond) != ABT_SUCCESS))
        return HG_NOMEM;
    for (i = 0; i < TD_ULTS; i++) {
        s[i] = (struct td_slice){
            .mid = mid,
            .addr = addr,
            .remote = remote,
            .local = local,
            .offset = per * (hg_size_t) i,
            .size = i == TD_ULTS - 1 ? size - per * (hg_size_t) i : per,
            .ret = HG_OTHER_ERROR,
            .tag = call << 8 | (uint32_t) i,
            .done = ABT_EVENTUAL_NULL,
            .count = way == 2 ? &count : NULL,
        };
        if (way == 1 && ABT_eventual_create(0, &s[i].done) != ABT_SUCCESS)
            return HG_NOMEM;
        if (ABT_thread_create(pool, td_slice_ult, &s[i], ABT_THREAD_ATTR_NULL,
                              &t[i]) != ABT_SUCCESS)
            return HG_NOMEM;
    }
    if (way == 2) {
        ABT_mutex_lock(count.mutex);
        while (count.left > 0)
            ABT_cond_wait(count.cond, count.mutex);
        ABT_mutex_unlock(count.mutex);
    }
    for (i = 0; i < TD_ULTS; i++) {
        if (way == 1) {
            ABT_eventual_wait(s[i].done, NULL);
            ABT_eventual_free(&s[i].done);
        }
        ABT_thread_join(t[i]);
        ABT_thread_free(&t[i]);
        if (s[i].ret != HG_SUCCESS)
            ret = s[i].ret;
    }
    if (way == 2) {
        ABT_cond_free(&count.cond);
        ABT_mutex_free(&count.mutex);
    }
    return ret;
}

/* The handler: which call it serves is the first value of the buffer. */
static uint32_t td_next_call;

static hg_return_t
td_pull(margo_instance_id mid, hg_addr_t addr, hg_bulk_t remote,
        hg_bulk_t local, hg_size_t size)
{
    uint32_t call = td_next_call++;

    td_note(call << 12 | 0xff0);
    return td_pull_fanned(mid, addr, remote, local, size, call,
                          (int) (call % 3));
}

static void
td_sum(hg_handle_t h)
{
    tm_sum_with(h, td_pull);
}
DEFINE_MARGO_RPC_HANDLER(td_sum)

struct td_result {
    uint64_t trace, log;
    unsigned entries;
    int overlaps;
};

static void
td_run_once(uint64_t seed, struct td_result *r)
{
    char saddr[64], caddr[64];
    margo_instance_id server, client;
    hg_id_t id;
    hg_addr_t addr;
    int32_t values[10] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0};
    hg_bulk_t bulk[TD_CALLS];
    hg_handle_t h[TD_CALLS];
    margo_request req[TD_CALLS];
    tm_sum_in_t in;
    tm_sum_out_t out;
    void *buf = values;
    hg_size_t size = sizeof(values);

    memset(&td_log, 0, sizeof(td_log));
    td_next_call = 0;
    assert_int_equal(na_sim_set_seed(seed), NA_SUCCESS);
    snprintf(saddr, sizeof(saddr), "sim://det-server");
    snprintf(caddr, sizeof(caddr), "sim://det-client");
    server = margo_init(saddr, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(server);
    client = margo_init(caddr, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(client);
    assert_int_equal(ABT_rwlock_create(&td_rwlock), ABT_SUCCESS);
    id = MARGO_REGISTER(server, "td_sum", tm_sum_in_t, tm_sum_out_t, td_sum);
    id = MARGO_REGISTER(client, "td_sum", tm_sum_in_t, tm_sum_out_t, NULL);
    addr = tm_lookup_self(client, server);

    for (int i = 0; i < TD_CALLS; i++) {
        assert_hg_ok(margo_bulk_create(client, 1, &buf, &size,
                                       HG_BULK_READ_ONLY, &bulk[i]));
        assert_hg_ok(margo_create(client, addr, id, &h[i]));
        in.n = 10;
        in.bulk = bulk[i];
        assert_hg_ok(margo_iforward(h[i], &in, &req[i]));
    }
    /* Waited for out of order, as a client with many calls may. */
    for (int i = TD_CALLS - 1; i >= 0; i--) {
        assert_hg_ok(margo_wait(req[i]));
        assert_hg_ok(margo_get_output(h[i], &out));
        assert_int_equal(out.ret, TM_SUM);
        assert_hg_ok(margo_free_output(h[i], &out));
        assert_hg_ok(margo_destroy(h[i]));
        assert_hg_ok(margo_bulk_free(bulk[i]));
    }
    assert_hg_ok(margo_addr_free(client, addr));
    ABT_rwlock_free(&td_rwlock);
    margo_finalize(client);
    margo_finalize(server);
    r->trace = na_sim_trace_hash();
    r->log = td_log_hash();
    r->entries = td_log.count;
    r->overlaps = td_log.overlaps;
}

static void
test_same_seed_same_schedule(void **state)
{
    struct td_result first, again;
    uint64_t seed;

    (void) state;
    if (!tm_is_sim())
        skip();
    seed = na_sim_get_seed();
    assert_int_equal(na_sim_world_hold(), NA_SUCCESS);
    td_run_once(seed, &first);
    /* Every ULT noted three times, every handler once, none lost. */
    assert_int_equal(first.entries, TD_CALLS * (3 * TD_ULTS + 1));
    assert_int_equal(first.overlaps, 0);
    /* For check_replay.sh: the same line from another process. */
    printf("td: seed %" PRIu64 " trace %016" PRIx64 " log %016" PRIx64 "\n",
           seed, first.trace, first.log);
    fflush(stdout);
    for (int run = 1; run < TD_RUNS; run++) {
        td_run_once(seed, &again);
        if (again.trace != first.trace || again.log != first.log)
            fail_msg("seed %" PRIu64 ", run %d: trace %016" PRIx64
                     " log %016" PRIx64 ", run 0: trace %016" PRIx64
                     " log %016" PRIx64,
                     seed, run, again.trace, again.log, first.trace, first.log);
        assert_int_equal(again.entries, first.entries);
        assert_int_equal(again.overlaps, 0);
    }
    na_sim_clear_seed();
    assert_int_equal(na_sim_world_release(), NA_SUCCESS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_schedule),
    };

    return tm_main("test_margo_determinism", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
