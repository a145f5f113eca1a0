/*
 * Argobots on pthreads: initialization, pools, schedulers, execution
 * streams, ULTs and the ABT_self queries. Nothing here waits on the wall
 * clock: ULTs and the test hand over through eventuals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "abt.h"
#include "abt/abt_internal.h"

static int
setup(void **state)
{
    (void) state;
    return ABT_init(0, NULL) == ABT_SUCCESS ? 0 : -1;
}

static int
teardown(void **state)
{
    (void) state;
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

static void
test_init_finalize(void **state)
{
    (void) state;
    assert_int_equal(ABT_initialized(), ABT_ERR_UNINITIALIZED);
    assert_int_equal(ABT_finalize(), ABT_ERR_UNINITIALIZED);
    ABT_pool pool;
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &pool),
                     ABT_SUCCESS);
    ABT_xstream xs;
    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_DEFAULT, 1, &pool,
                                              ABT_SCHED_CONFIG_NULL, &xs),
                     ABT_ERR_UNINITIALIZED);
    assert_int_equal(ABT_init(0, NULL), ABT_SUCCESS);
    assert_int_equal(ABT_initialized(), ABT_SUCCESS);
    assert_int_equal(ABT_init(0, NULL), ABT_SUCCESS); /* nested */
    assert_int_equal(ABT_finalize(), ABT_SUCCESS);
    assert_int_equal(ABT_initialized(), ABT_SUCCESS);
    assert_int_equal(ABT_finalize(), ABT_SUCCESS);
    assert_int_equal(ABT_initialized(), ABT_ERR_UNINITIALIZED);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
    assert_null(pool);
    /* A second life. */
    assert_int_equal(ABT_init(0, NULL), ABT_SUCCESS);
    assert_int_equal(ABT_finalize(), ABT_SUCCESS);
}

static void *
plain_thread(void *arg)
{
    int *rets = arg;
    ABT_xstream xs;
    ABT_thread t;
    int rank;
    rets[0] = ABT_xstream_self(&xs);
    rets[1] = ABT_thread_self(&t);
    rets[2] = ABT_xstream_self_rank(&rank);
    rets[3] = ABT_finalize();
    return NULL;
}

static void
test_primary(void **state)
{
    (void) state;
    ABT_xstream xs;
    ABT_bool b;
    int rank = -1, n = 0;
    assert_int_equal(ABT_xstream_self(&xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_self_rank(&rank), ABT_SUCCESS);
    assert_int_equal(rank, 0);
    assert_int_equal(ABT_xstream_is_primary(xs, &b), ABT_SUCCESS);
    assert_int_equal(b, ABT_TRUE);
    assert_int_equal(ABT_xstream_get_num(&n), ABT_SUCCESS);
    assert_int_equal(n, 1);
    ABT_pool pools[2] = {NULL, NULL};
    assert_int_equal(ABT_xstream_get_main_pools(xs, 2, pools), ABT_SUCCESS);
    assert_non_null(pools[0]);
    assert_null(pools[1]);
    ABT_thread self;
    assert_int_equal(ABT_thread_self(&self), ABT_SUCCESS);
    assert_int_equal(ABT_thread_is_primary(self, &b), ABT_SUCCESS);
    assert_int_equal(b, ABT_TRUE);
    assert_int_equal(ABT_self_is_primary(&b), ABT_SUCCESS);
    assert_int_equal(b, ABT_TRUE);
    assert_int_equal(ABT_self_on_primary_xstream(&b), ABT_SUCCESS);
    assert_int_equal(b, ABT_TRUE);
    ABT_pool last;
    assert_int_equal(ABT_self_get_last_pool(&last), ABT_SUCCESS);
    assert_ptr_equal(last, pools[0]);
    /* The primary ULT asked by handle, as tl::thread::self() does. */
    last = ABT_POOL_NULL;
    assert_int_equal(ABT_thread_get_last_pool(self, &last), ABT_SUCCESS);
    assert_ptr_equal(last, pools[0]);
    int last_id = -1, main_id = -2;
    assert_int_equal(ABT_thread_get_last_pool_id(self, &last_id), ABT_SUCCESS);
    assert_int_equal(ABT_pool_get_id(pools[0], &main_id), ABT_SUCCESS);
    assert_int_equal(last_id, main_id);
    assert_int_equal(ABT_self_get_last_pool_id(&last_id), ABT_SUCCESS);
    assert_int_equal(last_id, main_id);
    assert_int_equal(ABT_thread_join(self), ABT_ERR_INV_THREAD);
    assert_int_equal(ABT_thread_exit(), ABT_ERR_INV_THREAD);
    assert_int_equal(ABT_xstream_join(xs), ABT_ERR_INV_XSTREAM);
    assert_int_equal(ABT_xstream_free(&xs), ABT_ERR_INV_XSTREAM);
    assert_int_equal(ABT_pool_free(&pools[0]), ABT_ERR_POOL);

    /* A plain pthread is no execution stream and may not finalize. */
    int rets[4];
    pthread_t tid;
    pthread_create(&tid, NULL, plain_thread, rets);
    pthread_join(tid, NULL);
    assert_int_equal(rets[0], ABT_ERR_INV_XSTREAM);
    assert_int_equal(rets[1], ABT_ERR_INV_XSTREAM);
    assert_int_equal(rets[2], ABT_ERR_INV_XSTREAM);
    assert_int_equal(rets[3], ABT_ERR_INV_XSTREAM);
}

static void
test_pool_basic(void **state)
{
    (void) state;
    ABT_pool a, b;
    assert_int_equal(ABT_pool_create_basic((ABT_pool_kind) 42,
                                           ABT_POOL_ACCESS_MPMC, ABT_FALSE, &a),
                     ABT_ERR_INV_POOL_KIND);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, (ABT_pool_access) 42,
                                           ABT_FALSE, &a),
                     ABT_ERR_INV_POOL_ACCESS);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_SPSC,
                                           ABT_FALSE, NULL),
                     ABT_ERR_INV_ARG);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
                                           ABT_POOL_ACCESS_SPSC, ABT_FALSE, &a),
                     ABT_SUCCESS);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &b),
                     ABT_SUCCESS);
    ABT_pool_access acc;
    assert_int_equal(ABT_pool_get_access(a, &acc), ABT_SUCCESS);
    assert_int_equal(acc, ABT_POOL_ACCESS_SPSC);
    int ida = -1, idb = -1;
    assert_int_equal(ABT_pool_get_id(a, &ida), ABT_SUCCESS);
    assert_int_equal(ABT_pool_get_id(b, &idb), ABT_SUCCESS);
    assert_true(ida >= 0 && idb >= 0 && ida != idb);
    size_t sz = 99;
    assert_int_equal(ABT_pool_get_size(a, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 0);
    assert_int_equal(ABT_pool_get_total_size(a, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 0);
    ABT_bool empty;
    assert_int_equal(ABT_pool_is_empty(a, &empty), ABT_SUCCESS);
    assert_int_equal(empty, ABT_TRUE);
    void *data = NULL;
    assert_int_equal(ABT_pool_set_data(a, &ida), ABT_SUCCESS);
    assert_int_equal(ABT_pool_get_data(a, &data), ABT_SUCCESS);
    assert_ptr_equal(data, &ida);
    assert_int_equal(ABT_pool_get_size(ABT_POOL_NULL, &sz), ABT_ERR_INV_POOL);
    assert_int_equal(ABT_pool_free(&a), ABT_SUCCESS);
    assert_null(a);
    assert_int_equal(ABT_pool_free(&a), ABT_ERR_INV_POOL);
    assert_int_equal(ABT_pool_free(&b), ABT_SUCCESS);
}

struct ult_rec {
    int ran;
    int rank;
    ABT_xstream xs;
    ABT_unit_id id;
    void *arg;
    ABT_pool last_pool;
};

static void
record_ult(void *arg)
{
    struct ult_rec *r = arg;
    ABT_xstream_self(&r->xs);
    ABT_xstream_self_rank(&r->rank);
    ABT_thread_self_id(&r->id);
    ABT_self_get_arg(&r->arg);
    ABT_self_get_last_pool(&r->last_pool);
    __atomic_store_n(&r->ran, 1, __ATOMIC_RELEASE);
}

static void
test_threads_on_xstream(void **state)
{
    (void) state;
    enum { N = 16 };
    ABT_pool pool;
    ABT_xstream xs;
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
                                           ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                                           &pool),
                     ABT_SUCCESS);
    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, 1, &pool,
                                              ABT_SCHED_CONFIG_NULL, &xs),
                     ABT_SUCCESS);
    int rank = -1;
    assert_int_equal(ABT_xstream_get_rank(xs, &rank), ABT_SUCCESS);
    assert_true(rank > 0);
    struct ult_rec rec[N];
    ABT_thread t[N];
    memset(rec, 0, sizeof(rec));
    for (int i = 0; i < N; i++)
        assert_int_equal(ABT_thread_create(pool, record_ult, &rec[i],
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    for (int i = 0; i < N; i++) {
        assert_int_equal(ABT_thread_join(t[i]), ABT_SUCCESS);
        ABT_thread_state st;
        assert_int_equal(ABT_thread_get_state(t[i], &st), ABT_SUCCESS);
        assert_int_equal(st, ABT_THREAD_STATE_TERMINATED);
        ABT_unit_id id;
        assert_int_equal(ABT_thread_get_id(t[i], &id), ABT_SUCCESS);
        assert_true(id == rec[i].id);
        ABT_pool lp;
        assert_int_equal(ABT_thread_get_last_pool(t[i], &lp), ABT_SUCCESS);
        assert_ptr_equal(lp, pool);
        int lpid, pid;
        assert_int_equal(ABT_thread_get_last_pool_id(t[i], &lpid), ABT_SUCCESS);
        ABT_pool_get_id(pool, &pid);
        assert_int_equal(lpid, pid);
        ABT_xstream lx;
        assert_int_equal(ABT_thread_get_last_xstream(t[i], &lx), ABT_SUCCESS);
        assert_ptr_equal(lx, xs);
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
        assert_null(t[i]);
        assert_int_equal(rec[i].ran, 1);
        assert_ptr_equal(rec[i].xs, xs);
        assert_int_equal(rec[i].rank, rank);
        assert_ptr_equal(rec[i].arg, &rec[i]);
        assert_ptr_equal(rec[i].last_pool, pool);
        for (int j = 0; j < i; j++)
            assert_true(rec[j].id != rec[i].id);
    }
    assert_int_equal(ABT_thread_create(ABT_POOL_NULL, record_ult, NULL,
                                       ABT_THREAD_ATTR_NULL, NULL),
                     ABT_ERR_INV_POOL);
    assert_int_equal(ABT_thread_join(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
    assert_int_equal(ABT_thread_free(NULL), ABT_ERR_INV_THREAD);
    assert_int_equal(ABT_xstream_join(xs), ABT_SUCCESS);
    ABT_xstream_state st;
    assert_int_equal(ABT_xstream_get_state(xs, &st), ABT_SUCCESS);
    assert_int_equal(st, ABT_XSTREAM_STATE_TERMINATED);
    assert_int_equal(ABT_pool_free(&pool), ABT_ERR_POOL); /* still listed */
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    assert_null(xs);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
}

static void
set_eventual_ult(void *arg)
{
    ABT_eventual_set((ABT_eventual) arg, NULL, 0);
}

static void
wait_eventual_ult(void *arg)
{
    ABT_eventual_wait((ABT_eventual) arg, NULL);
}

static void
test_pool_sizes(void **state)
{
    (void) state;
    ABT_pool pool;
    ABT_eventual started, release;
    ABT_thread t;
    size_t sz;
    ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_TRUE, &pool);
    ABT_eventual_create(0, &started);
    ABT_eventual_create(0, &release);
    /* Work waits in a pool no stream serves yet. */
    ABT_thread_create(pool, set_eventual_ult, started, ABT_THREAD_ATTR_NULL,
                      NULL);
    ABT_thread_create(pool, wait_eventual_ult, release, ABT_THREAD_ATTR_NULL,
                      &t);
    assert_int_equal(ABT_pool_get_size(pool, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 2);
    assert_int_equal(ABT_pool_get_total_size(pool, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 2);
    ABT_sched sched;
    assert_int_equal(ABT_sched_create_basic(ABT_SCHED_BASIC, 1, &pool,
                                            ABT_SCHED_CONFIG_NULL, &sched),
                     ABT_SUCCESS);
    assert_int_equal(ABT_sched_get_size(sched, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 2);
    ABT_xstream xs;
    assert_int_equal(ABT_xstream_create(sched, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_create(sched, &xs), ABT_ERR_INV_SCHED);
    assert_int_equal(ABT_sched_free(&sched), ABT_ERR_SCHED);
    ABT_eventual_wait(started, NULL);
    /* The second ULT is running (blocked): waiting 0, total 1, once the
     * worker has popped it; ABT_thread_get_state says when. */
    ABT_thread_state st;
    do {
        ABT_thread_get_state(t, &st);
    } while (st == ABT_THREAD_STATE_READY);
    assert_int_equal(ABT_pool_get_size(pool, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 0);
    assert_int_equal(ABT_pool_get_total_size(pool, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 1);
    assert_int_equal(ABT_sched_get_total_size(sched, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 1);
    ABT_eventual_set(release, NULL, 0);
    ABT_thread_free(&t);
    assert_int_equal(ABT_pool_get_total_size(pool, &sz), ABT_SUCCESS);
    assert_int_equal(sz, 0);
    /* The automatic pool goes with the stream. */
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    ABT_eventual_free(&started);
    ABT_eventual_free(&release);
}

static void
count_ult(void *arg)
{
    __atomic_fetch_add((int *) arg, 1, __ATOMIC_RELAXED);
}

static void
test_join_drains(void **state)
{
    (void) state;
    int count = 0;
    ABT_xstream xs;
    ABT_pool pool;
    /* Default scheduler with its own pool. */
    assert_int_equal(ABT_xstream_create(ABT_SCHED_NULL, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_get_main_pools(xs, 1, &pool), ABT_SUCCESS);
    for (int i = 0; i < 100; i++)
        assert_int_equal(ABT_thread_create(pool, count_ult, &count,
                                           ABT_THREAD_ATTR_NULL, NULL),
                         ABT_SUCCESS);
    assert_int_equal(ABT_xstream_join(xs), ABT_SUCCESS);
    assert_int_equal(count, 100);
    assert_int_equal(ABT_xstream_join(xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
}

static void
test_primary_pool(void **state)
{
    (void) state;
    ABT_xstream self;
    ABT_pool pool;
    ABT_xstream_self(&self);
    ABT_xstream_get_main_pools(self, 1, &pool);
    int count = 0;
    ABT_eventual ev;
    ABT_eventual_create(0, &ev);
    /* Queued work waits while the primary thread runs its own code... */
    ABT_thread_create(pool, count_ult, &count, ABT_THREAD_ATTR_NULL, NULL);
    size_t sz;
    ABT_pool_get_size(pool, &sz);
    assert_int_equal(sz, 1);
    assert_int_equal(__atomic_load_n(&count, __ATOMIC_RELAXED), 0);
    /* ...and runs once it blocks. */
    ABT_thread_create(pool, set_eventual_ult, ev, ABT_THREAD_ATTR_NULL, NULL);
    assert_int_equal(ABT_eventual_wait(ev, NULL), ABT_SUCCESS);
    ABT_eventual_free(&ev);
    /* Yield also lets it run. */
    ABT_thread t;
    ABT_thread_create(pool, count_ult, &count, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_state st;
    do {
        assert_int_equal(ABT_thread_yield(), ABT_SUCCESS);
        ABT_thread_get_state(t, &st);
    } while (st != ABT_THREAD_STATE_TERMINATED);
    ABT_thread_free(&t);
    assert_int_equal(__atomic_load_n(&count, __ATOMIC_RELAXED), 2);
}

static int finalize_count;

static void
test_finalize_drains(void **state)
{
    (void) state;
    ABT_xstream self, xs;
    ABT_pool pool;
    assert_int_equal(ABT_init(0, NULL), ABT_SUCCESS);
    ABT_xstream_self(&self);
    ABT_xstream_get_main_pools(self, 1, &pool);
    for (int i = 0; i < 10; i++)
        ABT_thread_create(pool, count_ult, &finalize_count,
                          ABT_THREAD_ATTR_NULL, NULL);
    /* A stream left running is joined and freed by finalize. */
    assert_int_equal(ABT_xstream_create(ABT_SCHED_NULL, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_finalize(), ABT_SUCCESS);
    assert_int_equal(finalize_count, 10);
}

static void
exit_ult(void *arg)
{
    int *p = arg;
    __atomic_store_n(&p[0], 1, __ATOMIC_RELAXED);
    ABT_thread_exit();
    __atomic_store_n(&p[1], 1, __ATOMIC_RELAXED);
}

static void
test_thread_exit(void **state)
{
    (void) state;
    int flags[2] = {0, 0};
    ABT_xstream xs;
    ABT_pool pool;
    ABT_thread t;
    ABT_xstream_create(ABT_SCHED_NULL, &xs);
    ABT_xstream_get_main_pools(xs, 1, &pool);
    ABT_thread_create(pool, exit_ult, flags, ABT_THREAD_ATTR_NULL, &t);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_int_equal(flags[0], 1);
    assert_int_equal(flags[1], 0);
    ABT_xstream_free(&xs);
}

struct self_rets {
    int join_self, join_own_xs, free_own_xs, on_primary, is_primary, rank;
    int yield;
};

static void
self_ult(void *arg)
{
    struct self_rets *r = arg;
    ABT_thread self;
    ABT_xstream xs;
    ABT_bool b;
    ABT_thread_self(&self);
    ABT_xstream_self(&xs);
    r->join_self = ABT_thread_join(self);
    r->join_own_xs = ABT_xstream_join(xs);
    r->free_own_xs = ABT_xstream_free(&xs);
    ABT_self_on_primary_xstream(&b);
    r->on_primary = b;
    ABT_self_is_primary(&b);
    r->is_primary = b;
    ABT_self_get_xstream_rank(&r->rank);
    r->yield = ABT_self_yield();
}

static void
test_self_queries(void **state)
{
    (void) state;
    struct self_rets r;
    ABT_xstream xs;
    ABT_thread t;
    memset(&r, 0xff, sizeof(r));
    assert_int_equal(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 7, &xs),
                     ABT_SUCCESS);
    ABT_xstream other;
    assert_int_equal(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 7, &other),
                     ABT_ERR_INV_XSTREAM_RANK);
    assert_int_equal(ABT_xstream_create_with_rank(ABT_SCHED_NULL, -2, &other),
                     ABT_ERR_INV_XSTREAM_RANK);
    int n;
    ABT_xstream_get_num(&n);
    assert_int_equal(n, 2);
    assert_int_equal(ABT_thread_create_on_xstream(xs, self_ult, &r,
                                                  ABT_THREAD_ATTR_NULL, &t),
                     ABT_SUCCESS);
    ABT_thread_free(&t);
    assert_int_equal(r.join_self, ABT_ERR_INV_THREAD);
    assert_int_equal(r.join_own_xs, ABT_ERR_INV_XSTREAM);
    assert_int_equal(r.free_own_xs, ABT_ERR_INV_XSTREAM);
    assert_int_equal(r.on_primary, ABT_FALSE);
    assert_int_equal(r.is_primary, ABT_FALSE);
    assert_int_equal(r.rank, 7);
    assert_int_equal(r.yield, ABT_SUCCESS);
    ABT_bool eq;
    ABT_xstream self;
    ABT_xstream_self(&self);
    ABT_xstream_equal(self, xs, &eq);
    assert_int_equal(eq, ABT_FALSE);
    ABT_xstream_equal(xs, xs, &eq);
    assert_int_equal(eq, ABT_TRUE);
    ABT_xstream_free(&xs);
    ABT_xstream_get_num(&n);
    assert_int_equal(n, 1);
}

static void
test_sched_and_main_sched(void **state)
{
    (void) state;
    ABT_pool p[2];
    ABT_sched sched;
    for (int i = 0; i < 2; i++)
        ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                              &p[i]);
    assert_int_equal(ABT_sched_create_basic((ABT_sched_predef) 99, 2, p,
                                            ABT_SCHED_CONFIG_NULL, &sched),
                     ABT_ERR_INV_SCHED_PREDEF);
    assert_int_equal(ABT_sched_create_basic(ABT_SCHED_PRIO, 2, p,
                                            ABT_SCHED_CONFIG_NULL, &sched),
                     ABT_SUCCESS);
    int n = 0;
    ABT_pool got[2];
    assert_int_equal(ABT_sched_get_num_pools(sched, &n), ABT_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(ABT_sched_get_pools(sched, 2, 0, got), ABT_SUCCESS);
    assert_ptr_equal(got[0], p[0]);
    assert_ptr_equal(got[1], p[1]);
    assert_int_equal(ABT_sched_get_pools(sched, 1, 1, got), ABT_SUCCESS);
    assert_ptr_equal(got[0], p[1]);
    assert_int_equal(ABT_sched_get_pools(sched, 2, 1, got), ABT_ERR_SCHED);
    assert_int_equal(ABT_pool_free(&p[0]), ABT_ERR_POOL); /* in use */
    assert_int_equal(ABT_sched_free(&sched), ABT_SUCCESS);
    assert_null(sched);

    /* The primary stream's pools can be replaced; its old automatic pool
     * goes away, and work in the new pools runs when it blocks. */
    ABT_xstream self;
    ABT_xstream_self(&self);
    assert_int_equal(
        ABT_xstream_set_main_sched_basic(self, ABT_SCHED_BASIC, 2, p),
        ABT_SUCCESS);
    ABT_xstream_get_main_sched(self, &sched);
    ABT_sched_get_num_pools(sched, &n);
    assert_int_equal(n, 2);
    assert_int_equal(ABT_xstream_get_main_pools(self, 2, got), ABT_SUCCESS);
    assert_ptr_equal(got[0], p[0]);
    assert_ptr_equal(got[1], p[1]);
    ABT_eventual ev;
    ABT_thread t;
    ABT_eventual_create(0, &ev);
    ABT_thread_create(p[1], set_eventual_ult, ev, ABT_THREAD_ATTR_NULL, &t);
    assert_int_equal(ABT_eventual_wait(ev, NULL), ABT_SUCCESS);
    /* Freed (joined) before its pool is: the ULT may still be returning. */
    ABT_thread_free(&t);
    ABT_eventual_free(&ev);

    /* Put an automatic pool back so the two test pools can be freed. */
    assert_int_equal(
        ABT_xstream_set_main_sched_basic(self, ABT_SCHED_DEFAULT, 1, NULL),
        ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&p[0]), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&p[1]), ABT_SUCCESS);
}

static void
test_thread_misc(void **state)
{
    (void) state;
    ABT_xstream xs;
    ABT_pool pool;
    ABT_thread_attr attr;
    ABT_thread t;
    ABT_xstream_create(ABT_SCHED_NULL, &xs);
    ABT_xstream_get_main_pools(xs, 1, &pool);
    size_t ss = 0;
    void *addr = &ss;
    assert_int_equal(ABT_thread_attr_create(&attr), ABT_SUCCESS);
    assert_int_equal(ABT_thread_attr_set_stacksize(attr, 1 << 20), ABT_SUCCESS);
    assert_int_equal(ABT_thread_attr_get_stacksize(attr, &ss), ABT_SUCCESS);
    assert_int_equal(ss, 1 << 20);
    assert_int_equal(ABT_thread_attr_get_stack(attr, &addr, &ss), ABT_SUCCESS);
    assert_null(addr);
    assert_int_equal(ABT_thread_attr_set_migratable(attr, ABT_FALSE),
                     ABT_SUCCESS);
    int count = 0;
    assert_int_equal(ABT_thread_create_to(pool, count_ult, &count, attr, &t),
                     ABT_SUCCESS);
    assert_int_equal(ABT_thread_attr_free(&attr), ABT_SUCCESS);
    assert_null(attr);
    assert_int_equal(ABT_thread_join(t), ABT_SUCCESS);
    assert_int_equal(ABT_thread_get_stacksize(t, &ss), ABT_SUCCESS);
    assert_int_equal(ss, 1 << 20);
    void *arg;
    void (*fn)(void *);
    ABT_thread_get_arg(t, &arg);
    assert_ptr_equal(arg, &count);
    ABT_thread_get_thread_func(t, &fn);
    assert_ptr_equal(fn, count_ult);
    ABT_bool b;
    assert_int_equal(ABT_thread_is_migratable(t, &b), ABT_SUCCESS);
    assert_int_equal(b, ABT_FALSE);
    assert_int_equal(ABT_thread_set_migratable(t, ABT_TRUE),
                     ABT_ERR_MIGRATION_NA);
    assert_int_equal(ABT_thread_migrate_to_pool(t, pool), ABT_ERR_MIGRATION_NA);
    ABT_thread_equal(t, t, &b);
    assert_int_equal(b, ABT_TRUE);
    /* Revive: run again with a new argument. */
    int count2 = 0;
    assert_int_equal(ABT_thread_set_arg(t, &count2), ABT_SUCCESS);
    assert_int_equal(ABT_thread_revive(pool, count_ult, &count2, &t),
                     ABT_SUCCESS);
    ABT_thread_join(t);
    assert_int_equal(count2, 1);
    ABT_thread_free(&t);

    /* Many at once. */
    enum { M = 5 };
    ABT_pool pools[M];
    void (*fns[M])(void *);
    void *args[M];
    ABT_thread ts[M];
    for (int i = 0; i < M; i++) {
        pools[i] = pool;
        fns[i] = count_ult;
        args[i] = &count;
    }
    assert_int_equal(
        ABT_thread_create_many(M, pools, fns, args, ABT_THREAD_ATTR_NULL, ts),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_join_many(M, ts), ABT_SUCCESS);
    assert_int_equal(ABT_thread_free_many(M, ts), ABT_SUCCESS);
    assert_int_equal(count, 1 + M);
    assert_int_equal(ABT_thread_yield_to(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
    ABT_xstream_free(&xs);
}

static void
test_misc(void **state)
{
    (void) state;
    double a = ABT_get_wtime(), b = ABT_get_wtime();
    assert_true(a > 0 && b >= a);
    ABT_bool en = 7;
    assert_int_equal(
        ABT_info_query_config(ABT_INFO_QUERY_KIND_ENABLED_TOOL, &en),
        ABT_SUCCESS);
    assert_int_equal(en, ABT_FALSE);
    size_t ss = 0;
    assert_int_equal(ABT_info_query_config(
                         ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, &ss),
                     ABT_SUCCESS);
    assert_true(ss > 0);
    assert_int_equal(ABT_info_query_config((ABT_info_query_kind) 999, &ss),
                     ABT_ERR_INV_QUERY_KIND);
    char buf[128];
    size_t len = 0;
    assert_int_equal(ABT_error_get_str(ABT_ERR_INV_POOL, buf, &len),
                     ABT_SUCCESS);
    assert_int_equal(len, strlen(buf));
    assert_non_null(strstr(buf, "ABT_ERR_INV_POOL"));
    assert_int_equal(ABT_error_get_str(ABT_ERR_COND_TIMEDOUT, NULL, &len),
                     ABT_SUCCESS);
    assert_int_equal(ABT_error_get_str(1000, buf, &len), ABT_ERR_OTHER);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_finalize),
        cmocka_unit_test(test_finalize_drains),
        cmocka_unit_test_setup_teardown(test_primary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_on_xstream, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pool_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_drains, setup, teardown),
        cmocka_unit_test_setup_teardown(test_primary_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sched_and_main_sched, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_thread_misc, setup, teardown),
        cmocka_unit_test(test_misc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
