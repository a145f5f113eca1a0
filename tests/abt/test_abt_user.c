/*
 * Argobots on pthreads: user-defined pools (ABT_pool_def) and schedulers
 * (ABT_sched_def), the pool calls a scheduler loop makes (ABT_pool_pop,
 * ABT_pool_push, ABT_pool_remove, ABT_xstream_run_unit,
 * ABT_xstream_check_events, ABT_sched_has_to_stop) and scheduler
 * configurations. Orders are checked by queuing work before any stream
 * serves it, so each check is deterministic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "abt.h"

/* ---- a user pool: a LIFO stack ------------------------------------------ */

struct lifo_unit {
    ABT_thread thread;
    ABT_unit_type type;
    struct lifo_unit *next;
};

struct lifo {
    pthread_mutex_t m;
    struct lifo_unit *top;
    size_t size;
    int inits, pushes, pops, removes;
    int config_value; /* read from the pool config (none: -1) */
};

static int lifo_units_live, lifo_frees;

static ABT_unit_type
u_get_type(ABT_unit u)
{
    return ((struct lifo_unit *) u)->type;
}

static ABT_thread
u_get_thread(ABT_unit u)
{
    return ((struct lifo_unit *) u)->thread;
}

static ABT_task
u_get_task(ABT_unit u)
{
    return ((struct lifo_unit *) u)->thread;
}

static ABT_unit
u_from(ABT_thread t, ABT_unit_type type)
{
    struct lifo_unit *u = calloc(1, sizeof(*u));
    u->thread = t;
    u->type = type;
    __atomic_fetch_add(&lifo_units_live, 1, __ATOMIC_RELAXED);
    return (ABT_unit) u;
}

static ABT_unit
u_create_from_thread(ABT_thread t)
{
    return u_from(t, ABT_UNIT_TYPE_THREAD);
}

static ABT_unit
u_create_from_task(ABT_task t)
{
    return u_from(t, ABT_UNIT_TYPE_TASK);
}

static void
u_free(ABT_unit *u)
{
    free(*u);
    *u = ABT_UNIT_NULL;
    __atomic_fetch_sub(&lifo_units_live, 1, __ATOMIC_RELAXED);
}

static struct lifo *
lifo_of(ABT_pool p)
{
    void *data = NULL;
    assert_int_equal(ABT_pool_get_data(p, &data), ABT_SUCCESS);
    return data;
}

static int
p_init(ABT_pool p, ABT_pool_config config)
{
    (void) config;
    struct lifo *l = calloc(1, sizeof(*l));
    pthread_mutex_init(&l->m, NULL);
    l->inits = 1;
    return ABT_pool_set_data(p, l);
}

static int
p_init_fails(ABT_pool p, ABT_pool_config config)
{
    (void) p;
    (void) config;
    return ABT_ERR_MEM;
}

static void
p_push(ABT_pool p, ABT_unit unit)
{
    struct lifo *l = lifo_of(p);
    struct lifo_unit *u = (struct lifo_unit *) unit;
    pthread_mutex_lock(&l->m);
    u->next = l->top;
    l->top = u;
    l->size++;
    l->pushes++;
    pthread_mutex_unlock(&l->m);
}

static ABT_unit
p_pop(ABT_pool p)
{
    struct lifo *l = lifo_of(p);
    pthread_mutex_lock(&l->m);
    struct lifo_unit *u = l->top;
    if (u) {
        l->top = u->next;
        l->size--;
        l->pops++;
    }
    pthread_mutex_unlock(&l->m);
    return (ABT_unit) u;
}

static int
p_remove(ABT_pool p, ABT_unit unit)
{
    struct lifo *l = lifo_of(p);
    int ret = ABT_ERR_POOL;
    pthread_mutex_lock(&l->m);
    for (struct lifo_unit **pp = &l->top; *pp; pp = &(*pp)->next) {
        if (*pp == (struct lifo_unit *) unit) {
            *pp = (*pp)->next;
            l->size--;
            l->removes++;
            ret = ABT_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&l->m);
    return ret;
}

static int
p_free(ABT_pool p)
{
    struct lifo *l = lifo_of(p);
    pthread_mutex_destroy(&l->m);
    free(l);
    lifo_frees++;
    return ABT_SUCCESS;
}

static ABT_pool_def
lifo_def(void)
{
    ABT_pool_def def;
    /* Like Thallium's, the fields abt.h never calls stay unset. */
    memset(&def, 0xa5, sizeof(def));
    def.access = ABT_POOL_ACCESS_MPMC;
    def.u_get_type = u_get_type;
    def.u_get_thread = u_get_thread;
    def.u_get_task = u_get_task;
    def.u_is_in_pool = NULL;
    def.u_create_from_thread = u_create_from_thread;
    def.u_create_from_task = u_create_from_task;
    def.u_free = u_free;
    def.p_init = p_init;
    def.p_get_size = NULL;
    def.p_push = p_push;
    def.p_pop = p_pop;
    def.p_remove = p_remove;
    def.p_free = p_free;
    return def;
}

/* ---- work that records the order it ran in ------------------------------ */

static pthread_mutex_t order_m = PTHREAD_MUTEX_INITIALIZER;
static int order[64], norder;

static void
record(void *arg)
{
    pthread_mutex_lock(&order_m);
    order[norder++] = (int) (intptr_t) arg;
    pthread_mutex_unlock(&order_m);
}

static int
setup(void **state)
{
    (void) state;
    norder = 0;
    lifo_frees = 0;
    return ABT_init(0, NULL) == ABT_SUCCESS ? 0 : -1;
}

static int
teardown(void **state)
{
    (void) state;
    assert_int_equal(lifo_units_live, 0);
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

/* A predefined scheduler serves a user pool through its callbacks: ULTs
 * queued before the stream starts run last-in first-out. */
static void
test_user_pool_predefined_sched(void **state)
{
    (void) state;
    ABT_pool_def def = lifo_def();
    ABT_pool pool;
    ABT_xstream xs;
    ABT_thread t[5];
    ABT_task task;
    size_t size = 0;

    assert_int_equal(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_SUCCESS);
    assert_int_equal(lifo_of(pool)->inits, 1);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ABT_thread_create(pool, record, (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, &t[i]),
                         ABT_SUCCESS);
    assert_int_equal(
        ABT_task_create(pool, record, (void *) (intptr_t) 5, &task),
        ABT_SUCCESS);
    assert_int_equal(lifo_of(pool)->pushes, 6);
    assert_int_equal(lifo_units_live, 6);
    assert_int_equal(ABT_pool_get_size(pool, &size), ABT_SUCCESS);
    assert_int_equal(size, 6);

    assert_int_equal(ABT_xstream_create_basic(ABT_SCHED_BASIC, 1, &pool,
                                              ABT_SCHED_CONFIG_NULL, &xs),
                     ABT_SUCCESS);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ABT_thread_free(&t[i]), ABT_SUCCESS);
    assert_int_equal(ABT_task_free(&task), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    assert_int_equal(norder, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[i], 5 - i);
    assert_int_equal(lifo_of(pool)->pops, 6);
    assert_int_equal(lifo_units_live, 0);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
    assert_int_equal(lifo_frees, 1);
    assert_null(pool);
}

/* ---- a user scheduler: lowest-priority pool first ------------------------ */

struct rsched {
    int cfg_int;
    double cfg_double;
    void *cfg_ptr;
    int runs, events, frees;
};
static struct rsched *rs_last; /* for the checks after free */
static struct rsched rs_done;

static int
rs_init(ABT_sched s, ABT_sched_config config)
{
    struct rsched *r = calloc(1, sizeof(*r));
    r->cfg_int = -1;
    if (config != ABT_SCHED_CONFIG_NULL)
        ABT_sched_config_read(config, 3, &r->cfg_int, &r->cfg_double,
                              &r->cfg_ptr);
    rs_last = r;
    return ABT_sched_set_data(s, r);
}

static void
rs_run(ABT_sched s)
{
    struct rsched *r;
    int n = 0;
    assert_int_equal(ABT_sched_get_data(s, (void **) &r), ABT_SUCCESS);
    r->runs++;
    assert_int_equal(ABT_sched_get_num_pools(s, &n), ABT_SUCCESS);
    ABT_pool pools[4];
    assert_int_equal(ABT_sched_get_pools(s, n, 0, pools), ABT_SUCCESS);
    for (;;) {
        /* The last pool first: the opposite of the predefined order. */
        for (int i = n - 1; i >= 0; i--) {
            ABT_unit u;
            assert_int_equal(ABT_pool_pop(pools[i], &u), ABT_SUCCESS);
            if (u != ABT_UNIT_NULL) {
                assert_int_equal(ABT_xstream_run_unit(u, pools[i]),
                                 ABT_SUCCESS);
                break;
            }
        }
        ABT_bool stop = ABT_FALSE;
        assert_int_equal(ABT_sched_has_to_stop(s, &stop), ABT_SUCCESS);
        if (stop)
            break;
        r->events++;
        assert_int_equal(ABT_xstream_check_events(s), ABT_SUCCESS);
    }
}

static int
rs_free(ABT_sched s)
{
    struct rsched *r;
    assert_int_equal(ABT_sched_get_data(s, (void **) &r), ABT_SUCCESS);
    rs_done = *r;
    rs_done.frees = 1;
    free(r);
    return ABT_SUCCESS;
}

static ABT_sched_def
rs_def(void)
{
    ABT_sched_def def = {ABT_SCHED_TYPE_ULT, rs_init, rs_run, rs_free, NULL};
    return def;
}

static void
test_user_sched_runs_its_policy(void **state)
{
    (void) state;
    ABT_pool_def pdef = lifo_def();
    ABT_sched_def sdef = rs_def();
    ABT_pool pools[2];
    ABT_sched sched;
    ABT_sched_config config;
    ABT_xstream xs;
    int x = 0;

    memset(&rs_done, 0, sizeof(rs_done));
    /* Pool 0 built in (FIFO), pool 1 user-defined (LIFO). */
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &pools[0]),
                     ABT_SUCCESS);
    assert_int_equal(ABT_pool_create(&pdef, ABT_POOL_CONFIG_NULL, &pools[1]),
                     ABT_SUCCESS);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ABT_thread_create(pools[0], record,
                                           (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, NULL),
                         ABT_SUCCESS);
        assert_int_equal(ABT_thread_create(pools[1], record,
                                           (void *) (intptr_t) (10 + i),
                                           ABT_THREAD_ATTR_NULL, NULL),
                         ABT_SUCCESS);
    }
    ABT_sched_config_var vi = {0, ABT_SCHED_CONFIG_INT};
    ABT_sched_config_var vd = {1, ABT_SCHED_CONFIG_DOUBLE};
    ABT_sched_config_var vp = {2, ABT_SCHED_CONFIG_PTR};
    assert_int_equal(ABT_sched_config_create(&config, vi, 42, vd, 2.5, vp,
                                             (void *) &x,
                                             ABT_sched_config_automatic, 1,
                                             ABT_sched_config_var_end),
                     ABT_SUCCESS);
    assert_int_equal(ABT_sched_create(&sdef, 2, pools, config, &sched),
                     ABT_SUCCESS);
    assert_int_equal(ABT_sched_config_free(&config), ABT_SUCCESS);
    assert_int_equal(rs_last->cfg_int, 42);
    assert_true(rs_last->cfg_double == 2.5);
    assert_ptr_equal(rs_last->cfg_ptr, &x);
    /* Not swappable: its loop is its stream's. */
    assert_int_equal(ABT_xstream_create(sched, &xs), ABT_SUCCESS);
    assert_int_equal(
        ABT_xstream_set_main_sched_basic(xs, ABT_SCHED_BASIC, 1, &pools[0]),
        ABT_ERR_FEATURE_NA);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);

    assert_int_equal(rs_done.frees, 1);
    assert_int_equal(rs_done.runs, 1);
    assert_int_equal(norder, 6);
    /* The user pool first (LIFO), then the built-in one (FIFO). */
    int want[6] = {12, 11, 10, 0, 1, 2};
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[i], want[i]);
    assert_int_equal(ABT_pool_free(&pools[0]), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&pools[1]), ABT_SUCCESS);
}

/* A ULT of a user scheduler's stream waits for one queued behind it: the
 * stream starts a spare worker that pops the user pool. */
static void
waiter(void *arg)
{
    ABT_eventual ev = arg;
    assert_int_equal(ABT_eventual_wait(ev, NULL), ABT_SUCCESS);
    record((void *) (intptr_t) 1);
}

static void
setter(void *arg)
{
    record((void *) (intptr_t) 2);
    assert_int_equal(ABT_eventual_set(arg, NULL, 0), ABT_SUCCESS);
}

static void
test_user_sched_blocked_ult(void **state)
{
    (void) state;
    ABT_pool_def pdef = lifo_def();
    ABT_sched_def sdef = rs_def();
    ABT_pool pool;
    ABT_sched sched;
    ABT_xstream xs;
    ABT_eventual ev;

    assert_int_equal(ABT_eventual_create(0, &ev), ABT_SUCCESS);
    assert_int_equal(ABT_pool_create(&pdef, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_SUCCESS);
    /* LIFO: the waiter (pushed last) runs first. */
    assert_int_equal(
        ABT_thread_create(pool, setter, ev, ABT_THREAD_ATTR_NULL, NULL),
        ABT_SUCCESS);
    assert_int_equal(
        ABT_thread_create(pool, waiter, ev, ABT_THREAD_ATTR_NULL, NULL),
        ABT_SUCCESS);
    assert_int_equal(
        ABT_sched_create(&sdef, 1, &pool, ABT_SCHED_CONFIG_NULL, &sched),
        ABT_SUCCESS);
    assert_int_equal(ABT_xstream_create(sched, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    assert_int_equal(norder, 2);
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 1);
    assert_int_equal(ABT_eventual_free(&ev), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
}

/* ABT_sched_finish stops the loop once the pools are empty; ABT_sched_exit
 * at once. */
static void
test_sched_finish_and_exit(void **state)
{
    (void) state;
    ABT_sched_def sdef = rs_def();
    ABT_pool pool;
    ABT_sched sched;
    ABT_bool stop = ABT_TRUE;

    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &pool),
                     ABT_SUCCESS);
    assert_int_equal(
        ABT_sched_create(&sdef, 1, &pool, ABT_SCHED_CONFIG_NULL, &sched),
        ABT_SUCCESS);
    assert_int_equal(rs_last->cfg_int, -1);
    assert_int_equal(ABT_sched_has_to_stop(sched, &stop), ABT_SUCCESS);
    assert_int_equal(stop, ABT_FALSE);
    assert_int_equal(
        ABT_thread_create(pool, record, NULL, ABT_THREAD_ATTR_NULL, NULL),
        ABT_SUCCESS);
    assert_int_equal(ABT_sched_finish(sched), ABT_SUCCESS);
    assert_int_equal(ABT_sched_has_to_stop(sched, &stop), ABT_SUCCESS);
    assert_int_equal(stop, ABT_FALSE); /* work is still waiting */
    assert_int_equal(ABT_sched_exit(sched), ABT_SUCCESS);
    assert_int_equal(ABT_sched_has_to_stop(sched, &stop), ABT_SUCCESS);
    assert_int_equal(stop, ABT_TRUE);
    /* The stream still runs what its loop left when it ends. */
    ABT_xstream xs;
    assert_int_equal(ABT_xstream_create(sched, &xs), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_free(&xs), ABT_SUCCESS);
    assert_int_equal(norder, 1);
    assert_int_equal(rs_done.frees, 1);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
}

/* The pool calls on a built-in pool, run on the primary stream. */
static void
test_pool_calls_builtin(void **state)
{
    (void) state;
    ABT_pool pool;
    ABT_unit u, u2;
    size_t size;

    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &pool),
                     ABT_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ABT_thread_create(pool, record, (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, NULL),
                         ABT_SUCCESS);
    assert_int_equal(ABT_pool_pop(pool, &u), ABT_SUCCESS);
    assert_non_null(u);
    assert_int_equal(ABT_pool_get_size(pool, &size), ABT_SUCCESS);
    assert_int_equal(size, 2);
    assert_int_equal(ABT_pool_pop(pool, &u2), ABT_SUCCESS);
    assert_int_equal(ABT_pool_remove(pool, u2), ABT_ERR_POOL); /* not there */
    assert_int_equal(ABT_pool_push(pool, u2), ABT_SUCCESS);
    assert_int_equal(ABT_pool_remove(pool, u2), ABT_SUCCESS);
    assert_int_equal(ABT_pool_push(pool, u2), ABT_SUCCESS);
    /* 0 runs now; then 2, then 1 (pushed back last). */
    assert_int_equal(ABT_xstream_run_unit(u, pool), ABT_SUCCESS);
    while (ABT_pool_pop(pool, &u) == ABT_SUCCESS && u != ABT_UNIT_NULL)
        assert_int_equal(ABT_xstream_run_unit(u, pool), ABT_SUCCESS);
    assert_int_equal(norder, 3);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 1);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
}

/* ABT_pool_pop_thread(s) / push_thread(s) move waiting ULTs between pools
 * of either kind: from the LIFO user pool (2, 1, 0) into a built-in FIFO
 * one, which then runs them in that order; and one back the other way. */
static void
test_pool_threads_across_kinds(void **state)
{
    (void) state;
    ABT_pool_def def = lifo_def();
    ABT_pool user, fifo;
    ABT_thread threads[8], t;
    ABT_unit u;
    size_t num = 99, size = 99;

    assert_int_equal(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &user),
                     ABT_SUCCESS);
    assert_int_equal(ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC,
                                           ABT_FALSE, &fifo),
                     ABT_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ABT_thread_create(user, record, (void *) (intptr_t) i,
                                           ABT_THREAD_ATTR_NULL, NULL),
                         ABT_SUCCESS);
    assert_int_equal(ABT_pool_pop_threads(user, threads, 8, &num), ABT_SUCCESS);
    assert_int_equal(num, 3);
    assert_int_equal(ABT_pool_get_size(user, &size), ABT_SUCCESS);
    assert_int_equal(size, 0);
    assert_int_equal(ABT_pool_pop_thread(user, &t), ABT_SUCCESS);
    assert_null(t);
    assert_int_equal(ABT_pool_push_threads(fifo, threads, num), ABT_SUCCESS);
    assert_int_equal(ABT_pool_get_size(fifo, &size), ABT_SUCCESS);
    assert_int_equal(size, 3);
    /* One goes back to the user pool and runs from there. */
    assert_int_equal(ABT_pool_pop_thread(fifo, &t), ABT_SUCCESS);
    assert_non_null(t);
    assert_int_equal(ABT_pool_push_thread(user, t), ABT_SUCCESS);
    assert_int_equal(ABT_pool_pop(user, &u), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_run_unit(u, user), ABT_SUCCESS);
    while (ABT_pool_pop(fifo, &u) == ABT_SUCCESS && u != ABT_UNIT_NULL)
        assert_int_equal(ABT_xstream_run_unit(u, fifo), ABT_SUCCESS);
    assert_int_equal(norder, 3);
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 0);
    assert_int_equal(ABT_pool_push_thread(fifo, ABT_THREAD_NULL),
                     ABT_ERR_INV_THREAD);
    assert_int_equal(ABT_pool_pop_thread(ABT_POOL_NULL, &t), ABT_ERR_INV_POOL);
    assert_int_equal(ABT_pool_pop_threads(fifo, NULL, 1, &num),
                     ABT_ERR_INV_ARG);
    assert_int_equal(ABT_pool_free(&user), ABT_SUCCESS);
    assert_int_equal(ABT_pool_free(&fifo), ABT_SUCCESS);
    assert_int_equal(lifo_units_live, 0);
}

/* A ULT cancelled while it waits in a user pool never runs. */
static void
test_cancel_in_user_pool(void **state)
{
    (void) state;
    ABT_pool_def def = lifo_def();
    ABT_pool pool;
    ABT_thread t;
    ABT_unit u;

    assert_int_equal(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_SUCCESS);
    assert_int_equal(
        ABT_thread_create(pool, record, NULL, ABT_THREAD_ATTR_NULL, &t),
        ABT_SUCCESS);
    assert_int_equal(ABT_thread_cancel(t), ABT_SUCCESS);
    assert_int_equal(ABT_pool_pop(pool, &u), ABT_SUCCESS);
    assert_non_null(u);
    assert_int_equal(ABT_xstream_run_unit(u, pool), ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_int_equal(norder, 0);
    assert_int_equal(ABT_pool_free(&pool), ABT_SUCCESS);
}

static void
test_bad_input(void **state)
{
    (void) state;
    ABT_pool_def def = lifo_def();
    ABT_sched_def sdef = rs_def();
    ABT_pool pool = ABT_POOL_NULL;
    ABT_sched sched;
    ABT_sched_config config;
    int v = 7;

    assert_int_equal(ABT_pool_create(NULL, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_ERR_INV_ARG);
    def.p_pop = NULL;
    assert_int_equal(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_ERR_INV_ARG);
    def = lifo_def();
    def.p_init = p_init_fails;
    assert_int_equal(ABT_pool_create(&def, ABT_POOL_CONFIG_NULL, &pool),
                     ABT_ERR_MEM);
    assert_null(pool);
    sdef.run = NULL;
    assert_int_equal(
        ABT_sched_create(&sdef, 0, NULL, ABT_SCHED_CONFIG_NULL, &sched),
        ABT_ERR_INV_ARG);
    assert_int_equal(ABT_xstream_run_unit(ABT_UNIT_NULL, ABT_POOL_NULL),
                     ABT_ERR_INV_UNIT);
    assert_int_equal(ABT_pool_pop(ABT_POOL_NULL, NULL), ABT_ERR_INV_POOL);
    assert_int_equal(ABT_sched_has_to_stop(ABT_SCHED_NULL, NULL),
                     ABT_ERR_INV_SCHED);
    assert_int_equal(ABT_xstream_check_events(ABT_SCHED_NULL),
                     ABT_ERR_INV_SCHED);

    /* A user scheduler with automatic pools; stacked schedulers refused. */
    sdef = rs_def();
    assert_int_equal(
        ABT_sched_create(&sdef, 2, NULL, ABT_SCHED_CONFIG_NULL, &sched),
        ABT_SUCCESS);
    ABT_pool p2[2];
    assert_int_equal(ABT_sched_get_pools(sched, 2, 0, p2), ABT_SUCCESS);
    assert_int_equal(ABT_pool_add_sched(p2[0], sched), ABT_ERR_FEATURE_NA);
    assert_int_equal(ABT_sched_free(&sched), ABT_SUCCESS);
    assert_int_equal(rs_done.frees, 1);

    /* Configurations. */
    assert_int_equal(ABT_sched_config_create(&config, ABT_sched_basic_freq, 5,
                                             ABT_sched_config_var_end),
                     ABT_SUCCESS);
    int got = 0;
    ABT_sched_config_type type;
    assert_int_equal(ABT_sched_config_get(config, 3, &type, &got),
                     ABT_ERR_INV_ARG);
    assert_int_equal(ABT_sched_config_set(config, 3, ABT_SCHED_CONFIG_INT, &v),
                     ABT_SUCCESS);
    assert_int_equal(ABT_sched_config_get(config, 3, &type, &got), ABT_SUCCESS);
    assert_int_equal(type, ABT_SCHED_CONFIG_INT);
    assert_int_equal(got, 7);
    got = 0;
    assert_int_equal(ABT_sched_config_read(config, 4, NULL, NULL, NULL, &got),
                     ABT_SUCCESS);
    assert_int_equal(got, 7);
    assert_int_equal(ABT_sched_config_read(config, -1), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_sched_config_free(&config), ABT_SUCCESS);
    assert_null(config);
    assert_int_equal(ABT_sched_config_free(&config), ABT_ERR_INV_SCHED_CONFIG);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_user_pool_predefined_sched), T(test_user_sched_runs_its_policy),
        T(test_user_sched_blocked_ult),     T(test_sched_finish_and_exit),
        T(test_pool_calls_builtin),         T(test_pool_threads_across_kinds),
        T(test_cancel_in_user_pool),        T(test_bad_input),
    };
    return cmocka_run_group_tests_name("abt_user", tests, NULL, NULL);
}
