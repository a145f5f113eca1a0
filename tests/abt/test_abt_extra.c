/*
 * Argobots on pthreads, the less common names: tasklets, cancellation,
 * suspension, the caller's unit type, ranks, CPU binding and
 * execution-stream barriers.
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
#include <sched.h>

#include "abt.h"

static ABT_xstream xs;
static ABT_pool pool; /* served by xs */

static int
setup(void **state)
{
    (void) state;
    if (ABT_init(0, NULL) != ABT_SUCCESS)
        return -1;
    if (ABT_xstream_create(ABT_SCHED_NULL, &xs) != ABT_SUCCESS)
        return -1;
    return ABT_xstream_get_main_pools(xs, 1, &pool) == ABT_SUCCESS ? 0 : -1;
}

static int
teardown(void **state)
{
    (void) state;
    if (ABT_xstream_free(&xs) != ABT_SUCCESS)
        return -1;
    return ABT_finalize() == ABT_SUCCESS ? 0 : -1;
}

struct task_rec {
    int self_ret, type_ret, type;
    ABT_task self;
    uint64_t id;
};

static void
task_fn(void *arg)
{
    struct task_rec *r = arg;
    ABT_unit_type type;
    r->self_ret = ABT_task_self(&r->self);
    ABT_task_self_id(&r->id);
    r->type_ret = ABT_self_get_type(&type);
    r->type = type;
}

static void
test_tasks(void **state)
{
    (void) state;
    struct task_rec r, u;
    ABT_task task, ult;
    memset(&r, 0, sizeof(r));
    memset(&u, 0, sizeof(u));
    assert_int_equal(ABT_task_create(pool, task_fn, &r, &task), ABT_SUCCESS);
    assert_int_equal(ABT_task_join(task), ABT_SUCCESS);
    assert_int_equal(r.self_ret, ABT_SUCCESS);
    assert_ptr_equal(r.self, task);
    assert_int_equal(r.type, ABT_UNIT_TYPE_TASK);
    uint64_t id;
    assert_int_equal(ABT_task_get_id(task, &id), ABT_SUCCESS);
    assert_true(id == r.id);
    ABT_task_state st;
    assert_int_equal(ABT_task_get_state(task, &st), ABT_SUCCESS);
    assert_int_equal(st, ABT_TASK_STATE_TERMINATED);
    ABT_xstream txs;
    assert_int_equal(ABT_task_get_xstream(task, &txs), ABT_SUCCESS);
    assert_ptr_equal(txs, xs);
    ABT_pool lp;
    int lpid, pid;
    assert_int_equal(ABT_task_get_last_pool(task, &lp), ABT_SUCCESS);
    assert_ptr_equal(lp, pool);
    assert_int_equal(ABT_task_get_last_pool_id(task, &lpid), ABT_SUCCESS);
    ABT_pool_get_id(pool, &pid);
    assert_int_equal(lpid, pid);
    ABT_bool b;
    assert_int_equal(ABT_task_is_migratable(task, &b), ABT_SUCCESS);
    assert_int_equal(b, ABT_FALSE);
    assert_int_equal(ABT_task_set_migratable(task, ABT_TRUE),
                     ABT_ERR_MIGRATION_NA);
    assert_int_equal(ABT_task_equal(task, task, &b), ABT_SUCCESS);
    assert_int_equal(b, ABT_TRUE);
    void *arg;
    assert_int_equal(ABT_task_get_arg(task, &arg), ABT_SUCCESS);
    assert_ptr_equal(arg, &r);
    memset(&r, 0, sizeof(r));
    assert_int_equal(ABT_task_revive(pool, task_fn, &r, &task), ABT_SUCCESS);
    assert_int_equal(ABT_task_free(&task), ABT_SUCCESS);
    assert_null(task);
    assert_int_equal(r.type, ABT_UNIT_TYPE_TASK);

    /* A ULT is not a tasklet. */
    assert_int_equal(
        ABT_thread_create(pool, task_fn, &u, ABT_THREAD_ATTR_NULL, &ult),
        ABT_SUCCESS);
    ABT_thread_free(&ult);
    assert_int_equal(u.self_ret, ABT_ERR_INV_TASK);
    assert_int_equal(u.type, ABT_UNIT_TYPE_THREAD);

    assert_int_equal(ABT_task_create_on_xstream(xs, task_fn, &r, &task),
                     ABT_SUCCESS);
    ABT_task_free(&task);
    /* From the primary ULT, and from a plain pthread. */
    ABT_unit_type type;
    assert_int_equal(ABT_self_get_type(&type), ABT_SUCCESS);
    assert_int_equal(type, ABT_UNIT_TYPE_THREAD);
    assert_int_equal(ABT_task_self(&task), ABT_ERR_INV_TASK);
}

static void *
ext_type(void *arg)
{
    ABT_unit_type type = ABT_UNIT_TYPE_THREAD;
    *(int *) arg = ABT_self_get_type(&type) == ABT_ERR_INV_XSTREAM &&
                   type == ABT_UNIT_TYPE_EXT;
    return NULL;
}

static void
test_self_get_type_external(void **state)
{
    (void) state;
    int ok = 0;
    pthread_t tid;
    pthread_create(&tid, NULL, ext_type, &ok);
    pthread_join(tid, NULL);
    assert_int_equal(ok, 1);
}

static int ran;

static void
mark_ran(void *arg)
{
    (void) arg;
    __atomic_store_n(&ran, 1, __ATOMIC_RELAXED);
}

static void
spin_until_cancelled(void *arg)
{
    ABT_eventual_set((ABT_eventual) arg, NULL, 0);
    for (;;)
        ABT_thread_yield();
}

static void
test_cancel(void **state)
{
    (void) state;
    /* Still waiting: removed from the pool, never runs. */
    ABT_pool idle;
    ABT_thread t;
    size_t sz;
    ran = 0;
    ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                          &idle);
    ABT_thread_create(idle, mark_ran, NULL, ABT_THREAD_ATTR_NULL, &t);
    ABT_pool_get_size(idle, &sz);
    assert_int_equal(sz, 1);
    assert_int_equal(ABT_thread_cancel(t), ABT_SUCCESS);
    ABT_pool_get_size(idle, &sz);
    assert_int_equal(sz, 0);
    ABT_thread_state st;
    ABT_thread_get_state(t, &st);
    assert_int_equal(st, ABT_THREAD_STATE_TERMINATED);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    assert_int_equal(ran, 0);
    assert_int_equal(ABT_pool_free(&idle), ABT_SUCCESS);

    /* Running: ends at its next yield. */
    ABT_eventual started;
    ABT_eventual_create(0, &started);
    ABT_thread_create(pool, spin_until_cancelled, started, ABT_THREAD_ATTR_NULL,
                      &t);
    ABT_eventual_wait(started, NULL);
    assert_int_equal(ABT_thread_cancel(t), ABT_SUCCESS);
    assert_int_equal(ABT_thread_free(&t), ABT_SUCCESS);
    ABT_eventual_free(&started);

    /* A tasklet the same way. */
    ABT_task task;
    ABT_pool_create_basic(ABT_POOL_FIFO, ABT_POOL_ACCESS_MPMC, ABT_FALSE,
                          &idle);
    ABT_task_create(idle, mark_ran, NULL, &task);
    assert_int_equal(ABT_task_cancel(task), ABT_SUCCESS);
    ABT_task_free(&task);
    assert_int_equal(ran, 0);
    ABT_pool_free(&idle);
    assert_int_equal(ABT_thread_cancel(ABT_THREAD_NULL), ABT_ERR_INV_THREAD);
}

static void
suspender(void *arg)
{
    ABT_self_suspend();
    __atomic_store_n((int *) arg, 1, __ATOMIC_RELAXED);
}

static void
test_suspend_resume(void **state)
{
    (void) state;
    int after = 0;
    ABT_thread t;
    ABT_thread_state st;
    ABT_thread_create(pool, suspender, &after, ABT_THREAD_ATTR_NULL, &t);
    do {
        ABT_thread_get_state(t, &st);
    } while (st != ABT_THREAD_STATE_BLOCKED);
    assert_int_equal(__atomic_load_n(&after, __ATOMIC_RELAXED), 0);
    assert_int_equal(ABT_thread_resume(t), ABT_SUCCESS);
    ABT_thread_join(t);
    assert_int_equal(after, 1);
    /* Not suspended (any more). */
    assert_int_equal(ABT_thread_resume(t), ABT_ERR_THREAD);
    ABT_thread_attr attr;
    size_t ss = 0;
    assert_int_equal(ABT_thread_get_attr(t, &attr), ABT_SUCCESS);
    ABT_thread_attr_get_stacksize(attr, &ss);
    assert_true(ss > 0);
    ABT_thread_attr_free(&attr);
    ABT_thread_free(&t);
}

static void
test_rank(void **state)
{
    (void) state;
    int rank = -1;
    assert_int_equal(ABT_xstream_set_rank(xs, 42), ABT_SUCCESS);
    ABT_xstream_get_rank(xs, &rank);
    assert_int_equal(rank, 42);
    assert_int_equal(ABT_xstream_set_rank(xs, 0), ABT_ERR_INV_XSTREAM_RANK);
    assert_int_equal(ABT_xstream_set_rank(xs, -1), ABT_ERR_INV_XSTREAM_RANK);
    ABT_xstream other;
    assert_int_equal(ABT_xstream_create_with_rank(ABT_SCHED_NULL, 42, &other),
                     ABT_ERR_INV_XSTREAM_RANK);
}

static void
count_cpus(void *arg)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    *(int *) arg = CPU_COUNT(&set);
}

static void
test_affinity(void **state)
{
    (void) state;
    int n = 0, ids[4], cpu = -1, cpus = 0;
    ABT_thread t;
    assert_int_equal(ABT_xstream_get_cpubind(xs, &cpu), ABT_ERR_FEATURE_NA);
    assert_int_equal(ABT_xstream_get_affinity(xs, 0, NULL, &n), ABT_SUCCESS);
    assert_true(n >= 1);
    int all = n;
    assert_int_equal(ABT_xstream_set_cpubind(xs, 0), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_get_cpubind(xs, &cpu), ABT_SUCCESS);
    assert_int_equal(cpu, 0);
    assert_int_equal(ABT_xstream_get_affinity(xs, 4, ids, &n), ABT_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 0);
    ABT_thread_create(pool, count_cpus, &cpus, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_free(&t);
    assert_int_equal(cpus, 1);
    /* Reset: every CPU again. */
    assert_int_equal(ABT_xstream_set_affinity(xs, 0, NULL), ABT_SUCCESS);
    assert_int_equal(ABT_xstream_get_cpubind(xs, &cpu), ABT_ERR_FEATURE_NA);
    ABT_thread_create(pool, count_cpus, &cpus, ABT_THREAD_ATTR_NULL, &t);
    ABT_thread_free(&t);
    assert_int_equal(cpus, all);
    assert_int_equal(ABT_xstream_set_affinity(xs, -1, NULL), ABT_ERR_INV_ARG);
}

static void
xbarrier_ult(void *arg)
{
    ABT_xstream_barrier_wait((ABT_xstream_barrier) arg);
}

static void
test_xstream_barrier(void **state)
{
    (void) state;
    ABT_xstream_barrier b;
    ABT_xstream other;
    ABT_thread t[2];
    assert_int_equal(ABT_xstream_barrier_create(0, &b), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_xstream_barrier_create(2, &b), ABT_SUCCESS);
    ABT_xstream_create(ABT_SCHED_NULL, &other);
    ABT_thread_create_on_xstream(xs, xbarrier_ult, b, ABT_THREAD_ATTR_NULL,
                                 &t[0]);
    ABT_thread_create_on_xstream(other, xbarrier_ult, b, ABT_THREAD_ATTR_NULL,
                                 &t[1]);
    ABT_thread_free_many(2, t);
    ABT_xstream_free(&other);
    assert_int_equal(ABT_xstream_barrier_free(&b), ABT_SUCCESS);
    assert_null(b);
    assert_int_equal(ABT_xstream_barrier_wait(ABT_XSTREAM_BARRIER_NULL),
                     ABT_ERR_INV_XSTREAM_BARRIER);
}

/* The ABT_info_print_* text: written to a memory stream and checked for
 * what it must say. */
static char *
info_text(int (*print)(FILE *, void *), void *arg, int *ret)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);

    assert_non_null(mem);
    *ret = print(mem, arg);
    fclose(mem);
    return text;
}

static int
print_config(FILE *fp, void *arg)
{
    (void) arg;
    return ABT_info_print_config(fp);
}

static int
print_all(FILE *fp, void *arg)
{
    (void) arg;
    return ABT_info_print_all_xstreams(fp);
}

static int
print_xstream(FILE *fp, void *arg)
{
    return ABT_info_print_xstream(fp, arg);
}

static int
print_pool(FILE *fp, void *arg)
{
    return ABT_info_print_pool(fp, arg);
}

static void
test_info_print(void **state)
{
    int ret, rank;
    char *t, want[64];

    (void) state;
    t = info_text(print_config, NULL, &ret);
    assert_int_equal(ret, ABT_SUCCESS);
    assert_non_null(strstr(t, ABT_VERSION));
    assert_non_null(strstr(t, "initialized: yes"));
    free(t);

    t = info_text(print_all, NULL, &ret);
    assert_int_equal(ret, ABT_SUCCESS);
    assert_non_null(strstr(t, "(primary)"));
    ABT_xstream_get_rank(xs, &rank);
    snprintf(want, sizeof(want), "xstream rank %d:", rank);
    assert_non_null(strstr(t, want));
    free(t);

    t = info_text(print_xstream, xs, &ret);
    assert_int_equal(ret, ABT_SUCCESS);
    assert_non_null(strstr(t, want));
    assert_non_null(strstr(t, "pool "));
    free(t);

    t = info_text(print_pool, pool, &ret);
    assert_int_equal(ret, ABT_SUCCESS);
    assert_non_null(strstr(t, "waiting"));
    free(t);

    assert_int_equal(ABT_info_print_config(NULL), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_info_print_all_xstreams(NULL), ABT_ERR_INV_ARG);
    assert_int_equal(ABT_info_print_xstream(stdout, ABT_XSTREAM_NULL),
                     ABT_ERR_INV_XSTREAM);
    assert_int_equal(ABT_info_print_pool(stdout, ABT_POOL_NULL),
                     ABT_ERR_INV_POOL);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_tasks),
        T(test_self_get_type_external),
        T(test_cancel),
        T(test_suspend_resume),
        T(test_rank),
        T(test_affinity),
        T(test_xstream_barrier),
        T(test_info_print),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
