/*
 * ULTs: creation on a pool, the run of a popped ULT on a worker, join,
 * free, exit, yield and the queries about the caller. A ULT's termination
 * is published under the parking-lot bucket of its address, where joiners
 * sleep.
 */
#include "abt/abt_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

ABT_thread
abt_thread_new(void (*func)(void *), void *arg, ABT_thread_attr attr)
{
    ABT_thread t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->func = func;
    t->arg = arg;
    t->id = __atomic_fetch_add(&abt_g.next_thread_id, 1, __ATOMIC_RELAXED);
    t->stacksize = attr ? attr->stacksize : abt_g.stacksize;
    t->state = ABT_THREAD_STATE_READY;
    return t;
}

int
abt_thread_push(ABT_pool pool, void (*func)(void *), void *arg,
                ABT_thread_attr attr, ABT_thread *newthread, int is_task)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!func)
        return ABT_ERR_INV_ARG;
    if (!abt_initialized())
        return ABT_ERR_UNINITIALIZED;
    ABT_thread t = abt_thread_new(func, arg, attr);
    if (!t)
        return ABT_ERR_MEM;
    t->named = newthread != NULL;
    t->is_task = is_task;
    if (newthread)
        *newthread = t;
    /* An unnamed ULT may run and be freed as soon as it is queued. */
    int ret = abt_pool_add_thread(pool, t);
    if (ret != ABT_SUCCESS) {
        if (newthread)
            *newthread = ABT_THREAD_NULL;
        abt_thread_destroy(t);
    }
    return ret;
}

int
ABT_thread_create(ABT_pool pool, void (*thread_func)(void *), void *arg,
                  ABT_thread_attr attr, ABT_thread *newthread)
{
    return abt_thread_push(pool, thread_func, arg, attr, newthread, 0);
}

int
ABT_thread_create_to(ABT_pool pool, void (*thread_func)(void *), void *arg,
                     ABT_thread_attr attr, ABT_thread *newthread)
{
    return abt_thread_push(pool, thread_func, arg, attr, newthread, 0);
}

int
ABT_thread_create_on_xstream(ABT_xstream xstream, void (*thread_func)(void *),
                             void *arg, ABT_thread_attr attr,
                             ABT_thread *newthread)
{
    ABT_pool pool = ABT_POOL_NULL;
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    int ret = ABT_xstream_get_main_pools(xstream, 1, &pool);
    if (ret != ABT_SUCCESS)
        return ret;
    return abt_thread_push(pool, thread_func, arg, attr, newthread, 0);
}

int
ABT_thread_create_many(int num_threads, ABT_pool *pool_list,
                       void (**thread_func_list)(void *), void **arg_list,
                       ABT_thread_attr attr, ABT_thread *newthread_list)
{
    if (num_threads < 0 ||
        (num_threads > 0 && (!pool_list || !thread_func_list)))
        return ABT_ERR_INV_ARG;
    for (int i = 0; i < num_threads; i++) {
        int ret = abt_thread_push(
            pool_list[i], thread_func_list[i], arg_list ? arg_list[i] : NULL,
            attr, newthread_list ? &newthread_list[i] : NULL, 0);
        if (ret != ABT_SUCCESS)
            return ret;
    }
    return ABT_SUCCESS;
}

static int
thread_ended(void *ctx)
{
    ABT_thread t = ctx;
    return __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) ==
           ABT_THREAD_STATE_TERMINATED;
}

int
ABT_thread_revive(ABT_pool pool, void (*thread_func)(void *), void *arg,
                  ABT_thread *thread)
{
    if (!thread || !*thread)
        return ABT_ERR_INV_THREAD;
    if (!pool)
        return ABT_ERR_INV_POOL;
    ABT_thread t = *thread;
    if (!thread_func || t->primary || !thread_ended(t))
        return ABT_ERR_INV_THREAD;
    t->func = thread_func;
    t->arg = arg;
    __atomic_store_n(&t->cancel, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->state, ABT_THREAD_STATE_READY, __ATOMIC_RELAXED);
    return abt_pool_add_thread(pool, t);
}

/* Kept apart so that nothing but t lives across the setjmp. */
static void
call_ult(ABT_thread t)
{
    if (setjmp(t->exit_env) == 0)
        t->func(t->arg);
}

void
abt_run(ABT_thread t)
{
    ABT_thread prev = abt_self.thread;
    abt_self.thread = t;
    __atomic_store_n(&t->xs, abt_self.xs, __ATOMIC_RELAXED);
    __atomic_store_n(&t->state, ABT_THREAD_STATE_RUNNING, __ATOMIC_RELAXED);
    t->in_run = 1;
    /* Cancelled while it waited in a pool that could not give it back
     * (a user-defined one): it ends without running. */
    if (!__atomic_load_n(&t->cancel, __ATOMIC_RELAXED))
        call_ult(t);
    t->in_run = 0;
    abt_self.thread = prev;

    pthread_mutex_lock(&abt_g.lock);
    t->pool->active--;
    pthread_mutex_unlock(&abt_g.lock);
    if (!t->named) {
        abt_thread_destroy(t);
        return;
    }
    abt_thread_mark_ended(t);
}

void
abt_thread_mark_ended(ABT_thread t)
{
    /* After the broadcast a joiner may free t: touch it no more. */
    struct abt_park *pk = abt_park_of(t);
    pthread_mutex_lock(&pk->m);
    __atomic_store_n(&t->state, ABT_THREAD_STATE_TERMINATED, __ATOMIC_RELEASE);
    abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
}

int
ABT_thread_join(ABT_thread thread)
{
    if (!thread || thread->primary || thread == abt_self.thread)
        return ABT_ERR_INV_THREAD;
    struct abt_park *pk = abt_park_of(thread);
    pthread_mutex_lock(&pk->m);
    abt_park_wait(pk, thread_ended, thread, NULL);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_thread_join_many(int num_threads, ABT_thread *thread_list)
{
    if (num_threads < 0 || (num_threads > 0 && !thread_list))
        return ABT_ERR_INV_ARG;
    for (int i = 0; i < num_threads; i++) {
        int ret = ABT_thread_join(thread_list[i]);
        if (ret != ABT_SUCCESS)
            return ret;
    }
    return ABT_SUCCESS;
}

int
ABT_thread_free(ABT_thread *thread)
{
    if (!thread || !*thread)
        return ABT_ERR_INV_THREAD;
    int ret = ABT_thread_join(*thread);
    if (ret != ABT_SUCCESS)
        return ret;
    abt_thread_destroy(*thread);
    *thread = ABT_THREAD_NULL;
    return ABT_SUCCESS;
}

int
ABT_thread_free_many(int num_threads, ABT_thread *thread_list)
{
    if (num_threads < 0 || (num_threads > 0 && !thread_list))
        return ABT_ERR_INV_ARG;
    for (int i = 0; i < num_threads; i++) {
        int ret = ABT_thread_free(&thread_list[i]);
        if (ret != ABT_SUCCESS)
            return ret;
    }
    return ABT_SUCCESS;
}

int
ABT_thread_exit(void)
{
    ABT_thread t = abt_self.thread;
    if (!t)
        return ABT_ERR_INV_XSTREAM;
    if (!t->in_run)
        return ABT_ERR_INV_THREAD;
    longjmp(t->exit_env, 1);
}

int
ABT_self_exit(void)
{
    return ABT_thread_exit();
}

int
ABT_thread_yield(void)
{
    ABT_xstream xs = abt_self.xs;
    if (!xs)
        return ABT_ERR_INV_XSTREAM;
    /* A cancellation takes effect here, as at Argobots' context switch. */
    ABT_thread self = abt_self.thread;
    if (self && self->in_run &&
        __atomic_load_n(&self->cancel, __ATOMIC_RELAXED))
        longjmp(self->exit_env, 1);
    /* The token holder goes back to its pool's tail if work waits. */
    if (abt_self.token && abt_self.block_depth == 0)
        abt_token_yield();
    else
        sched_yield();
    return ABT_SUCCESS;
}

int
ABT_thread_yield_to(ABT_thread thread)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    return ABT_thread_yield();
}

int
ABT_self_yield(void)
{
    return ABT_thread_yield();
}

int
ABT_thread_self(ABT_thread *thread)
{
    if (!thread)
        return ABT_ERR_INV_ARG;
    *thread = abt_self.thread;
    if (!abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    return abt_self.thread ? ABT_SUCCESS : ABT_ERR_INV_THREAD;
}

int
ABT_self_get_thread(ABT_thread *thread)
{
    return ABT_thread_self(thread);
}

int
ABT_thread_self_id(ABT_unit_id *id)
{
    ABT_thread t;
    if (!id)
        return ABT_ERR_INV_ARG;
    int ret = ABT_thread_self(&t);
    if (ret == ABT_SUCCESS)
        *id = t->id;
    return ret;
}

int
ABT_self_get_thread_id(ABT_unit_id *id)
{
    return ABT_thread_self_id(id);
}

int
ABT_thread_get_id(ABT_thread thread, ABT_unit_id *thread_id)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!thread_id)
        return ABT_ERR_INV_ARG;
    *thread_id = thread->id;
    return ABT_SUCCESS;
}

int
ABT_thread_get_state(ABT_thread thread, ABT_thread_state *state)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!state)
        return ABT_ERR_INV_ARG;
    *state =
        (ABT_thread_state) __atomic_load_n(&thread->state, __ATOMIC_ACQUIRE);
    return ABT_SUCCESS;
}

int
ABT_thread_get_last_pool(ABT_thread thread, ABT_pool *pool)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!pool)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    ABT_pool p = thread->pool;
    /* The primary ULT is never queued; as in Argobots, it belongs to the
     * first pool of its stream's current main scheduler (which follows
     * ABT_xstream_set_main_sched, as Margo's init uses it). */
    if (thread->primary && thread->xs && thread->xs->sched &&
        thread->xs->sched->num_pools > 0)
        p = thread->xs->sched->pools[0];
    pthread_mutex_unlock(&abt_g.lock);
    if (!p)
        return ABT_ERR_INV_POOL;
    *pool = p;
    return ABT_SUCCESS;
}

int
ABT_thread_get_last_pool_id(ABT_thread thread, int *id)
{
    ABT_pool pool;
    if (!id)
        return ABT_ERR_INV_ARG;
    int ret = ABT_thread_get_last_pool(thread, &pool);
    if (ret != ABT_SUCCESS)
        return ret;
    *id = pool->id;
    return ABT_SUCCESS;
}

int
ABT_thread_get_last_xstream(ABT_thread thread, ABT_xstream *xstream)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!xstream)
        return ABT_ERR_INV_ARG;
    *xstream = __atomic_load_n(&thread->xs, __ATOMIC_RELAXED);
    return ABT_SUCCESS;
}

int
ABT_thread_is_primary(ABT_thread thread, ABT_bool *is_primary)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!is_primary)
        return ABT_ERR_INV_ARG;
    *is_primary = thread->primary ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_thread_equal(ABT_thread thread1, ABT_thread thread2, ABT_bool *result)
{
    if (!result)
        return ABT_ERR_INV_ARG;
    *result = thread1 == thread2 ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_thread_get_arg(ABT_thread thread, void **arg)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!arg)
        return ABT_ERR_INV_ARG;
    *arg = thread->arg;
    return ABT_SUCCESS;
}

int
ABT_thread_set_arg(ABT_thread thread, void *arg)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    thread->arg = arg;
    return ABT_SUCCESS;
}

int
ABT_thread_get_thread_func(ABT_thread thread, void (**thread_func)(void *))
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!thread_func)
        return ABT_ERR_INV_ARG;
    *thread_func = thread->func;
    return ABT_SUCCESS;
}

int
ABT_thread_get_stacksize(ABT_thread thread, size_t *stacksize)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!stacksize)
        return ABT_ERR_INV_ARG;
    *stacksize = thread->stacksize;
    return ABT_SUCCESS;
}

int
ABT_thread_set_migratable(ABT_thread thread, ABT_bool migratable)
{
    (void) migratable;
    return thread ? ABT_ERR_MIGRATION_NA : ABT_ERR_INV_THREAD;
}

int
ABT_thread_is_migratable(ABT_thread thread, ABT_bool *migratable)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!migratable)
        return ABT_ERR_INV_ARG;
    *migratable = ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_thread_migrate_to_pool(ABT_thread thread, ABT_pool pool)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    return pool ? ABT_ERR_MIGRATION_NA : ABT_ERR_INV_POOL;
}

/* ---- attributes ---------------------------------------------------------- */

int
ABT_thread_attr_create(ABT_thread_attr *newattr)
{
    if (!newattr)
        return ABT_ERR_INV_ARG;
    ABT_thread_attr a = calloc(1, sizeof(*a));
    if (!a)
        return ABT_ERR_MEM;
    a->stacksize = abt_g.stacksize;
    *newattr = a;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_free(ABT_thread_attr *attr)
{
    if (!attr || !*attr)
        return ABT_ERR_INV_THREAD_ATTR;
    free(*attr);
    *attr = ABT_THREAD_ATTR_NULL;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_set_stacksize(ABT_thread_attr attr, size_t stacksize)
{
    if (!attr)
        return ABT_ERR_INV_THREAD_ATTR;
    attr->stacksize = stacksize;
    attr->stackaddr = NULL;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_get_stacksize(ABT_thread_attr attr, size_t *stacksize)
{
    if (!attr)
        return ABT_ERR_INV_THREAD_ATTR;
    if (!stacksize)
        return ABT_ERR_INV_ARG;
    *stacksize = attr->stacksize;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_set_stack(ABT_thread_attr attr, void *stackaddr,
                          size_t stacksize)
{
    if (!attr)
        return ABT_ERR_INV_THREAD_ATTR;
    attr->stackaddr = stackaddr;
    attr->stacksize = stacksize;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_get_stack(ABT_thread_attr attr, void **stackaddr,
                          size_t *stacksize)
{
    if (!attr)
        return ABT_ERR_INV_THREAD_ATTR;
    if (!stackaddr || !stacksize)
        return ABT_ERR_INV_ARG;
    *stackaddr = attr->stackaddr;
    *stacksize = attr->stacksize;
    return ABT_SUCCESS;
}

int
ABT_thread_attr_set_migratable(ABT_thread_attr attr, ABT_bool migratable)
{
    if (!attr)
        return ABT_ERR_INV_THREAD_ATTR;
    return migratable ? ABT_ERR_FEATURE_NA : ABT_SUCCESS;
}
