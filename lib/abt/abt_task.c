/*
 * Tasklets, cancellation, suspension and the caller's unit type.
 *
 * A tasklet is a ULT that may not block; since every ULT here runs to
 * completion on a worker anyway, ABT_task_* are the ULT calls under
 * Argobots' tasklet names. A cancelled ULT that has not started is taken
 * out of its pool and never runs; one that runs ends at its next
 * ABT_thread_yield, as at Argobots' context switches.
 */
#include "abt/abt_internal.h"

#include <stdlib.h>

/* ---- cancellation -------------------------------------------------------- */

int
ABT_thread_cancel(ABT_thread thread)
{
    if (!thread || thread->primary || thread == abt_self.thread)
        return ABT_ERR_INV_THREAD;
    pthread_mutex_lock(&abt_g.lock);
    /* A resume marker is a ULT that has run: it ends at its next yield. */
    int removed =
        !thread->waiter && abt_pool_unlink_locked(thread->pool, thread);
    if (!removed)
        __atomic_store_n(&thread->cancel, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&abt_g.lock);
    if (removed)
        abt_thread_mark_ended(thread);
    return ABT_SUCCESS;
}

/* ---- suspension ---------------------------------------------------------- */

static int
resumed(void *ctx)
{
    return !((ABT_thread) ctx)->suspended;
}

int
ABT_self_suspend(void)
{
    ABT_thread t = abt_self.thread;
    if (!abt_self.xs || !t)
        return ABT_ERR_INV_XSTREAM;
    struct abt_park *pk = abt_park_of(t);
    pthread_mutex_lock(&pk->m);
    t->suspended = 1;
    abt_park_wait(pk, resumed, t, NULL);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_thread_resume(ABT_thread thread)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    struct abt_park *pk = abt_park_of(thread);
    pthread_mutex_lock(&pk->m);
    int was = thread->suspended;
    thread->suspended = 0;
    if (was)
        abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
    return was ? ABT_SUCCESS : ABT_ERR_THREAD;
}

int
ABT_self_get_type(ABT_unit_type *type)
{
    if (!type)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs || !abt_self.thread) {
        *type = ABT_UNIT_TYPE_EXT;
        return ABT_ERR_INV_XSTREAM;
    }
    *type =
        abt_self.thread->is_task ? ABT_UNIT_TYPE_TASK : ABT_UNIT_TYPE_THREAD;
    return ABT_SUCCESS;
}

int
ABT_thread_get_attr(ABT_thread thread, ABT_thread_attr *attr)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    int ret = ABT_thread_attr_create(attr);
    if (ret == ABT_SUCCESS)
        (*attr)->stacksize = thread->stacksize;
    return ret;
}

/* ---- tasklets ------------------------------------------------------------ */

int
ABT_task_create(ABT_pool pool, void (*task_func)(void *), void *arg,
                ABT_task *newtask)
{
    return abt_thread_push(pool, task_func, arg, ABT_THREAD_ATTR_NULL, newtask,
                           1);
}

int
ABT_task_create_on_xstream(ABT_xstream xstream, void (*task_func)(void *),
                           void *arg, ABT_task *newtask)
{
    ABT_pool pool = ABT_POOL_NULL;
    if (!xstream)
        return ABT_ERR_INV_XSTREAM;
    int ret = ABT_xstream_get_main_pools(xstream, 1, &pool);
    if (ret != ABT_SUCCESS)
        return ret;
    return abt_thread_push(pool, task_func, arg, ABT_THREAD_ATTR_NULL, newtask,
                           1);
}

int
ABT_task_revive(ABT_pool pool, void (*task_func)(void *), void *arg,
                ABT_task *task)
{
    return ABT_thread_revive(pool, task_func, arg, task);
}

int
ABT_task_free(ABT_task *task)
{
    return ABT_thread_free(task);
}

int
ABT_task_join(ABT_task task)
{
    return ABT_thread_join(task);
}

int
ABT_task_cancel(ABT_task task)
{
    return ABT_thread_cancel(task);
}

int
ABT_task_self(ABT_task *task)
{
    if (!task)
        return ABT_ERR_INV_ARG;
    *task = ABT_TASK_NULL;
    if (!abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    if (!abt_self.thread || !abt_self.thread->is_task)
        return ABT_ERR_INV_TASK;
    *task = abt_self.thread;
    return ABT_SUCCESS;
}

int
ABT_task_self_id(uint64_t *id)
{
    ABT_task t;
    if (!id)
        return ABT_ERR_INV_ARG;
    int ret = ABT_task_self(&t);
    if (ret == ABT_SUCCESS)
        *id = t->id;
    return ret;
}

int
ABT_task_get_xstream(ABT_task task, ABT_xstream *xstream)
{
    return ABT_thread_get_last_xstream(task, xstream);
}

int
ABT_task_get_state(ABT_task task, ABT_task_state *state)
{
    ABT_thread_state st;
    if (!state)
        return ABT_ERR_INV_ARG;
    int ret = ABT_thread_get_state(task, &st);
    if (ret != ABT_SUCCESS)
        return ret;
    *state = st == ABT_THREAD_STATE_READY        ? ABT_TASK_STATE_READY
             : st == ABT_THREAD_STATE_TERMINATED ? ABT_TASK_STATE_TERMINATED
                                                 : ABT_TASK_STATE_RUNNING;
    return ABT_SUCCESS;
}

int
ABT_task_get_last_pool(ABT_task task, ABT_pool *pool)
{
    return ABT_thread_get_last_pool(task, pool);
}

int
ABT_task_get_last_pool_id(ABT_task task, int *id)
{
    return ABT_thread_get_last_pool_id(task, id);
}

int
ABT_task_set_migratable(ABT_task task, ABT_bool flag)
{
    return ABT_thread_set_migratable(task, flag);
}

int
ABT_task_is_migratable(ABT_task task, ABT_bool *flag)
{
    return ABT_thread_is_migratable(task, flag);
}

int
ABT_task_equal(ABT_task task1, ABT_task task2, ABT_bool *result)
{
    return ABT_thread_equal(task1, task2, result);
}

int
ABT_task_get_id(ABT_task task, uint64_t *task_id)
{
    return ABT_thread_get_id(task, task_id);
}

int
ABT_task_get_arg(ABT_task task, void **arg)
{
    return ABT_thread_get_arg(task, arg);
}
