/*
 * Eventuals, futures and timers. Eventuals and futures keep their state
 * under the parking-lot bucket of their address (abt_park_of), where their
 * waiters sleep; an eventual therefore fits Argobots' 64-byte
 * ABT_eventual_memory and zeroed memory is a 0-byte eventual not yet set.
 */
#include "abt/abt_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ABT_eventual_opaque {
    int ready;  /* park */
    int nbytes; /* capacity of value */
    void *value;
    int dynamic;
};
_Static_assert(sizeof(struct ABT_eventual_opaque) <=
                   sizeof(ABT_eventual_memory),
               "ABT_eventual must fit ABT_eventual_memory");

struct ABT_future_opaque {
    uint32_t num;   /* compartments */
    uint32_t count; /* park: compartments set */
    int ready;      /* park: set after the callback has run */
    void **values;
    void (*cb)(void **);
};

struct ABT_timer_opaque {
    double start, stop;
};

/* ---- eventuals ----------------------------------------------------------- */

int
ABT_eventual_create(int nbytes, ABT_eventual *neweventual)
{
    if (!neweventual || nbytes < 0)
        return ABT_ERR_INV_ARG;
    ABT_eventual e = calloc(1, sizeof(*e));
    if (!e)
        return ABT_ERR_MEM;
    if (nbytes > 0 && !(e->value = malloc((size_t) nbytes))) {
        free(e);
        return ABT_ERR_MEM;
    }
    e->nbytes = nbytes;
    e->dynamic = 1;
    *neweventual = e;
    return ABT_SUCCESS;
}

int
ABT_eventual_free(ABT_eventual *eventual)
{
    if (!eventual || !*eventual || !(*eventual)->dynamic)
        return ABT_ERR_INV_EVENTUAL;
    free((*eventual)->value);
    free(*eventual);
    *eventual = ABT_EVENTUAL_NULL;
    return ABT_SUCCESS;
}

static int
eventual_ready(void *ctx)
{
    return ((ABT_eventual) ctx)->ready;
}

static int
eventual_wait(ABT_eventual e, void **value, const struct timespec *abstime)
{
    if (!e)
        return ABT_ERR_INV_EVENTUAL;
    struct abt_park *pk = abt_park_of(e);
    pthread_mutex_lock(&pk->m);
    int rc = abt_park_wait(pk, eventual_ready, e, abstime);
    pthread_mutex_unlock(&pk->m);
    if (rc == ETIMEDOUT)
        return ABT_ERR_COND_TIMEDOUT;
    if (value)
        *value = e->value;
    return ABT_SUCCESS;
}

int
ABT_eventual_wait(ABT_eventual eventual, void **value)
{
    return eventual_wait(eventual, value, NULL);
}

int
ABT_eventual_timedwait(ABT_eventual eventual, void **value,
                       const struct timespec *abstime)
{
    if (!abstime)
        return ABT_ERR_INV_ARG;
    return eventual_wait(eventual, value, abstime);
}

int
ABT_eventual_test(ABT_eventual eventual, void **value, ABT_bool *is_ready)
{
    if (!eventual)
        return ABT_ERR_INV_EVENTUAL;
    struct abt_park *pk = abt_park_of(eventual);
    pthread_mutex_lock(&pk->m);
    int ready = eventual->ready;
    pthread_mutex_unlock(&pk->m);
    if (ready && value)
        *value = eventual->value;
    if (is_ready)
        *is_ready = ready ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_eventual_set(ABT_eventual eventual, void *value, int nbytes)
{
    if (!eventual)
        return ABT_ERR_INV_EVENTUAL;
    if (nbytes < 0 || (nbytes > 0 && !value))
        return ABT_ERR_INV_ARG;
    if (nbytes > eventual->nbytes)
        return ABT_ERR_INV_EVENTUAL;
    struct abt_park *pk = abt_park_of(eventual);
    pthread_mutex_lock(&pk->m);
    if (eventual->ready) {
        pthread_mutex_unlock(&pk->m);
        return ABT_ERR_EVENTUAL;
    }
    if (nbytes > 0)
        memcpy(eventual->value, value, (size_t) nbytes);
    eventual->ready = 1;
    abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_eventual_reset(ABT_eventual eventual)
{
    if (!eventual)
        return ABT_ERR_INV_EVENTUAL;
    struct abt_park *pk = abt_park_of(eventual);
    pthread_mutex_lock(&pk->m);
    eventual->ready = 0;
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

/* ---- futures ------------------------------------------------------------- */

int
ABT_future_create(uint32_t num_compartments, void (*cb_func)(void **arg),
                  ABT_future *newfuture)
{
    if (!newfuture)
        return ABT_ERR_INV_ARG;
    ABT_future f = calloc(1, sizeof(*f));
    if (!f)
        return ABT_ERR_MEM;
    if (num_compartments &&
        !(f->values = calloc(num_compartments, sizeof(void *)))) {
        free(f);
        return ABT_ERR_MEM;
    }
    f->num = num_compartments;
    f->cb = cb_func;
    f->ready = num_compartments == 0;
    *newfuture = f;
    return ABT_SUCCESS;
}

int
ABT_future_free(ABT_future *future)
{
    if (!future || !*future)
        return ABT_ERR_INV_FUTURE;
    free((*future)->values);
    free(*future);
    *future = ABT_FUTURE_NULL;
    return ABT_SUCCESS;
}

static int
future_ready(void *ctx)
{
    return ((ABT_future) ctx)->ready;
}

int
ABT_future_wait(ABT_future future)
{
    if (!future)
        return ABT_ERR_INV_FUTURE;
    struct abt_park *pk = abt_park_of(future);
    pthread_mutex_lock(&pk->m);
    abt_park_wait(pk, future_ready, future, NULL);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_future_test(ABT_future future, ABT_bool *is_ready)
{
    if (!future)
        return ABT_ERR_INV_FUTURE;
    if (!is_ready)
        return ABT_ERR_INV_ARG;
    struct abt_park *pk = abt_park_of(future);
    pthread_mutex_lock(&pk->m);
    *is_ready = future->ready ? ABT_TRUE : ABT_FALSE;
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_future_set(ABT_future future, void *value)
{
    if (!future)
        return ABT_ERR_INV_FUTURE;
    struct abt_park *pk = abt_park_of(future);
    pthread_mutex_lock(&pk->m);
    if (future->count >= future->num) {
        pthread_mutex_unlock(&pk->m);
        return ABT_ERR_FUTURE;
    }
    future->values[future->count++] = value;
    int last = future->count == future->num;
    pthread_mutex_unlock(&pk->m);
    if (!last)
        return ABT_SUCCESS;
    /* Only the caller that set the last compartment gets here. */
    if (future->cb)
        future->cb(future->values);
    pthread_mutex_lock(&pk->m);
    future->ready = 1;
    abt_park_wake(pk);
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

int
ABT_future_reset(ABT_future future)
{
    if (!future)
        return ABT_ERR_INV_FUTURE;
    struct abt_park *pk = abt_park_of(future);
    pthread_mutex_lock(&pk->m);
    future->count = 0;
    future->ready = future->num == 0;
    pthread_mutex_unlock(&pk->m);
    return ABT_SUCCESS;
}

/* ---- timers -------------------------------------------------------------- */

int
ABT_timer_create(ABT_timer *newtimer)
{
    if (!newtimer)
        return ABT_ERR_INV_ARG;
    ABT_timer t = calloc(1, sizeof(*t));
    if (!t)
        return ABT_ERR_MEM;
    *newtimer = t;
    return ABT_SUCCESS;
}

int
ABT_timer_dup(ABT_timer timer, ABT_timer *newtimer)
{
    if (!timer)
        return ABT_ERR_INV_TIMER;
    int ret = ABT_timer_create(newtimer);
    if (ret == ABT_SUCCESS)
        **newtimer = *timer;
    return ret;
}

int
ABT_timer_free(ABT_timer *timer)
{
    if (!timer || !*timer)
        return ABT_ERR_INV_TIMER;
    free(*timer);
    *timer = ABT_TIMER_NULL;
    return ABT_SUCCESS;
}

int
ABT_timer_start(ABT_timer timer)
{
    if (!timer)
        return ABT_ERR_INV_TIMER;
    timer->start = ABT_get_wtime();
    return ABT_SUCCESS;
}

int
ABT_timer_stop(ABT_timer timer)
{
    if (!timer)
        return ABT_ERR_INV_TIMER;
    timer->stop = ABT_get_wtime();
    return ABT_SUCCESS;
}

int
ABT_timer_read(ABT_timer timer, double *secs)
{
    if (!timer)
        return ABT_ERR_INV_TIMER;
    if (!secs)
        return ABT_ERR_INV_ARG;
    *secs = timer->stop - timer->start;
    return ABT_SUCCESS;
}

int
ABT_timer_stop_and_read(ABT_timer timer, double *secs)
{
    int ret = ABT_timer_stop(timer);
    return ret == ABT_SUCCESS ? ABT_timer_read(timer, secs) : ret;
}

int
ABT_timer_stop_and_add(ABT_timer timer, double *secs)
{
    double d;
    if (!secs)
        return ABT_ERR_INV_ARG;
    int ret = ABT_timer_stop_and_read(timer, &d);
    if (ret == ABT_SUCCESS)
        *secs += d;
    return ret;
}

int
ABT_timer_get_overhead(double *overhead)
{
    if (!overhead)
        return ABT_ERR_INV_ARG;
    double a = ABT_get_wtime();
    double b = ABT_get_wtime();
    *overhead = b - a;
    return ABT_SUCCESS;
}
