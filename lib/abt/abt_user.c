/*
 * User-defined pools and schedulers (ABT_pool_def, ABT_sched_def) and the
 * calls a user-defined scheduler's loop makes.
 *
 * A user pool keeps its units itself; abt.h calls its callbacks one at a
 * time under the pool's ulock, never holding the scheduler lock (the
 * program's pool may lock an ABT_mutex, which takes it), and counts in
 * pool->queued the units it pushed and has not popped, which is what the
 * workers and ABT_xstream_check_events look at. A unit is counted before
 * it is pushed, so the count never falls below what the pool holds: a
 * worker that sees work and pops nothing only lost a race.
 *
 * A user scheduler's run() is called once by its stream's base worker
 * (abt_runtime.c), without the stream's token; ABT_xstream_run_unit
 * takes the token for the unit it runs (abt_token.c), so the ULTs it runs
 * and those a spare worker runs for the stream never overlap.
 */
#include "abt/abt_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- user pools ---------------------------------------------------------- */

int
ABT_pool_create(ABT_pool_user_def def, ABT_pool_config config,
                ABT_pool *newpool)
{
    if (!newpool || !def || !def->p_push || !def->p_pop || !def->u_get_thread ||
        !def->u_create_from_thread || !def->u_free)
        return ABT_ERR_INV_ARG;
    if ((int) def->access < ABT_POOL_ACCESS_PRIV ||
        def->access > ABT_POOL_ACCESS_MPMC)
        return ABT_ERR_INV_POOL_ACCESS;
    ABT_pool p = calloc(1, sizeof(*p));
    if (!p)
        return ABT_ERR_MEM;
    p->user = 1;
    p->def = *def;
    p->kind = ABT_POOL_FIFO;
    p->access = def->access;
    p->automatic = ABT_FALSE;
    p->id = __atomic_fetch_add(&abt_g.next_pool_id, 1, __ATOMIC_RELAXED);
    pthread_mutex_init(&p->ulock, NULL);
    if (def->p_init) {
        int ret = def->p_init(p, config);
        if (ret != ABT_SUCCESS) {
            pthread_mutex_destroy(&p->ulock);
            free(p);
            return ret;
        }
    }
    *newpool = p;
    return ABT_SUCCESS;
}

int
abt_user_pool_fini(ABT_pool pool)
{
    int ret = pool->def.p_free ? pool->def.p_free(pool) : ABT_SUCCESS;
    if (ret == ABT_SUCCESS)
        pthread_mutex_destroy(&pool->ulock);
    return ret;
}

/* The ULT behind a unit of a user pool; the unit is freed. */
static ABT_thread
unit_to_thread(ABT_pool pool, ABT_unit unit)
{
    ABT_unit_type type = pool->def.u_get_type ? pool->def.u_get_type(unit)
                                              : ABT_UNIT_TYPE_THREAD;
    ABT_thread t = type == ABT_UNIT_TYPE_TASK && pool->def.u_get_task
                       ? pool->def.u_get_task(unit)
                       : pool->def.u_get_thread(unit);
    pool->def.u_free(&unit);
    return t;
}

/* Hands a unit to the program's pool and wakes a worker for it. */
static void
user_push(ABT_pool pool, ABT_unit unit)
{
    pthread_mutex_lock(&abt_g.lock);
    pool->queued++;
    pthread_mutex_unlock(&abt_g.lock);
    pthread_mutex_lock(&pool->ulock);
    pool->def.p_push(pool, unit);
    pthread_mutex_unlock(&pool->ulock);
    pthread_mutex_lock(&abt_g.lock);
    abt_pool_wake_locked(pool);
    pthread_mutex_unlock(&abt_g.lock);
}

static ABT_unit
user_pop(ABT_pool pool)
{
    pthread_mutex_lock(&pool->ulock);
    ABT_unit u = pool->def.p_pop(pool);
    pthread_mutex_unlock(&pool->ulock);
    if (u) {
        pthread_mutex_lock(&abt_g.lock);
        pool->queued--;
        pthread_mutex_unlock(&abt_g.lock);
    }
    return u;
}

int
abt_pool_add_thread(ABT_pool pool, ABT_thread t)
{
    if (!pool->user) {
        pthread_mutex_lock(&abt_g.lock);
        abt_pool_push_locked(pool, t);
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_SUCCESS;
    }
    ABT_unit u = t->is_task && pool->def.u_create_from_task
                     ? pool->def.u_create_from_task(t)
                     : pool->def.u_create_from_thread(t);
    if (!u)
        return ABT_ERR_MEM;
    t->pool = pool;
    user_push(pool, u);
    return ABT_SUCCESS;
}

ABT_thread
abt_user_pool_take(ABT_pool pool)
{
    ABT_unit u = user_pop(pool);
    if (!u)
        return NULL;
    ABT_thread t = unit_to_thread(pool, u);
    pthread_mutex_lock(&abt_g.lock);
    t->pool = pool;
    pool->active++;
    pthread_mutex_unlock(&abt_g.lock);
    return t;
}

int
ABT_pool_pop(ABT_pool pool, ABT_unit *unit)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!unit)
        return ABT_ERR_INV_ARG;
    if (pool->user) {
        *unit = user_pop(pool);
        return ABT_SUCCESS;
    }
    /* A built-in pool's unit is the ULT itself. */
    pthread_mutex_lock(&abt_g.lock);
    ABT_thread t = abt_pool_shift_locked(pool);
    pthread_mutex_unlock(&abt_g.lock);
    *unit = (ABT_unit) t;
    return ABT_SUCCESS;
}

int
ABT_pool_push(ABT_pool pool, ABT_unit unit)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!unit)
        return ABT_ERR_INV_UNIT;
    if (pool->user) {
        user_push(pool, unit);
        return ABT_SUCCESS;
    }
    pthread_mutex_lock(&abt_g.lock);
    abt_pool_push_locked(pool, (ABT_thread) unit);
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_pool_pop_thread(ABT_pool pool, ABT_thread *thread)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!thread)
        return ABT_ERR_INV_ARG;
    if (pool->user) {
        ABT_unit u = user_pop(pool);
        *thread = u ? unit_to_thread(pool, u) : ABT_THREAD_NULL;
        return ABT_SUCCESS;
    }
    pthread_mutex_lock(&abt_g.lock);
    *thread = abt_pool_shift_locked(pool);
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_pool_pop_threads(ABT_pool pool, ABT_thread *threads, size_t len,
                     size_t *num)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if ((!threads && len > 0) || !num)
        return ABT_ERR_INV_ARG;
    *num = 0;
    while (*num < len) {
        ABT_thread t;
        int ret = ABT_pool_pop_thread(pool, &t);
        if (ret != ABT_SUCCESS)
            return ret;
        if (t == ABT_THREAD_NULL)
            break;
        threads[(*num)++] = t;
    }
    return ABT_SUCCESS;
}

int
ABT_pool_push_thread(ABT_pool pool, ABT_thread thread)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!thread)
        return ABT_ERR_INV_THREAD;
    return abt_pool_add_thread(pool, thread);
}

int
ABT_pool_push_threads(ABT_pool pool, const ABT_thread *threads, size_t num)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!threads && num > 0)
        return ABT_ERR_INV_ARG;
    for (size_t i = 0; i < num; i++) {
        int ret = ABT_pool_push_thread(pool, threads[i]);
        if (ret != ABT_SUCCESS)
            return ret;
    }
    return ABT_SUCCESS;
}

int
ABT_pool_remove(ABT_pool pool, ABT_unit unit)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!unit)
        return ABT_ERR_INV_UNIT;
    if (pool->user) {
        if (!pool->def.p_remove)
            return ABT_ERR_FEATURE_NA;
        pthread_mutex_lock(&pool->ulock);
        int ret = pool->def.p_remove(pool, unit);
        pthread_mutex_unlock(&pool->ulock);
        if (ret == ABT_SUCCESS) {
            pthread_mutex_lock(&abt_g.lock);
            pool->queued--;
            pthread_mutex_unlock(&abt_g.lock);
        }
        return ret;
    }
    pthread_mutex_lock(&abt_g.lock);
    int found = abt_pool_unlink_locked(pool, (ABT_thread) unit);
    pthread_mutex_unlock(&abt_g.lock);
    return found ? ABT_SUCCESS : ABT_ERR_POOL;
}

int
ABT_pool_add_sched(ABT_pool pool, ABT_sched sched)
{
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!sched)
        return ABT_ERR_INV_SCHED;
    return ABT_ERR_FEATURE_NA;
}

/* ---- running units --------------------------------------------------------
 */

int
ABT_xstream_run_unit(ABT_unit unit, ABT_pool pool)
{
    if (!unit)
        return ABT_ERR_INV_UNIT;
    if (!pool)
        return ABT_ERR_INV_POOL;
    if (!abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    ABT_thread t = pool->user ? unit_to_thread(pool, unit) : (ABT_thread) unit;
    if (!t)
        return ABT_ERR_INV_UNIT;
    ABT_xstream xs = abt_self.xs;
    pthread_mutex_lock(&abt_g.lock);
    t->pool = pool;
    pool->active++;
    /* The unit runs as the stream's ULT: with the stream's token, which
     * a caller that is itself a ULT (the primary one) already holds. */
    int had = abt_self.token;
    if (!had)
        abt_token_acquire_locked(xs);
    if (abt_token_dispatch_locked(xs, t)) {
        /* A resume marker: its ULT has the token now; a ULT caller
         * queues to get it back. */
        if (had)
            abt_token_acquire_locked(xs);
        pthread_mutex_unlock(&abt_g.lock);
        return ABT_SUCCESS;
    }
    pthread_mutex_unlock(&abt_g.lock);
    abt_self.token = 1;
    abt_run(t);
    if (had)
        return ABT_SUCCESS;
    pthread_mutex_lock(&abt_g.lock);
    abt_self.token = 0;
    abt_token_release_locked(xs);
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

static int
sched_has_work_locked(ABT_sched s)
{
    for (int i = 0; i < s->num_pools; i++)
        if (s->pools[i]->queued)
            return 1;
    return 0;
}

static int
sched_stop_locked(ABT_sched s)
{
    if (s->exit_req)
        return 1;
    int asked = s->finish_req || (s->owner && s->owner->join_req);
    return asked && !sched_has_work_locked(s);
}

int
ABT_xstream_check_events(ABT_sched sched)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    ABT_xstream xs = abt_self.xs;
    if (!xs)
        return ABT_ERR_INV_XSTREAM;
    pthread_mutex_lock(&abt_g.lock);
    if (!sched_stop_locked(sched) && !sched_has_work_locked(sched) &&
        !sched->finish_req && !xs->join_req) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        xs->idle++;
        (void) pthread_cond_timedwait(&xs->wake, &abt_g.lock, &until);
        xs->idle--;
    }
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

/* ---- user schedulers ----------------------------------------------------- */

int
ABT_sched_create(ABT_sched_def *def, int num_pools, ABT_pool *pools,
                 ABT_sched_config config, ABT_sched *newsched)
{
    if (!newsched || !def || !def->run)
        return ABT_ERR_INV_ARG;
    ABT_sched s;
    int ret = ABT_sched_create_basic(ABT_SCHED_BASIC, num_pools, pools,
                                     ABT_SCHED_CONFIG_NULL, &s);
    if (ret != ABT_SUCCESS)
        return ret;
    s->user = 1;
    s->def = *def;
    if (def->init) {
        ret = def->init(s, config);
        if (ret != ABT_SUCCESS) {
            s->def.free = NULL; /* init failed: nothing to free */
            ABT_sched_free(&s);
            return ret;
        }
    }
    *newsched = s;
    return ABT_SUCCESS;
}

void
abt_user_sched_fini(ABT_sched sched)
{
    if (sched->def.free)
        (void) sched->def.free(sched);
}

int
ABT_sched_set_data(ABT_sched sched, void *data)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    pthread_mutex_lock(&abt_g.lock);
    sched->data = data;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_sched_get_data(ABT_sched sched, void **data)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    if (!data)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *data = sched->data;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_sched_has_to_stop(ABT_sched sched, ABT_bool *stop)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    if (!stop)
        return ABT_ERR_INV_ARG;
    pthread_mutex_lock(&abt_g.lock);
    *stop = sched_stop_locked(sched) ? ABT_TRUE : ABT_FALSE;
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

static int
sched_request(ABT_sched sched, int exit)
{
    if (!sched)
        return ABT_ERR_INV_SCHED;
    pthread_mutex_lock(&abt_g.lock);
    if (exit)
        sched->exit_req = 1;
    else
        sched->finish_req = 1;
    if (sched->owner)
        pthread_cond_broadcast(&sched->owner->wake);
    pthread_mutex_unlock(&abt_g.lock);
    return ABT_SUCCESS;
}

int
ABT_sched_finish(ABT_sched sched)
{
    return sched_request(sched, 0);
}

int
ABT_sched_exit(ABT_sched sched)
{
    return sched_request(sched, 1);
}

/* ---- scheduler configurations --------------------------------------------
 */

struct abt_config_entry {
    int idx;
    ABT_sched_config_type type;
    union {
        int i;
        double d;
        void *p;
    } v;
};

struct ABT_sched_config_opaque {
    int n, cap;
    struct abt_config_entry *e;
};

static struct abt_config_entry *
config_find(ABT_sched_config c, int idx)
{
    for (int i = 0; i < c->n; i++)
        if (c->e[i].idx == idx)
            return &c->e[i];
    return NULL;
}

static int
config_put(ABT_sched_config c, int idx, ABT_sched_config_type type,
           const void *val)
{
    struct abt_config_entry *e = config_find(c, idx);
    if (!e) {
        if (c->n == c->cap) {
            int cap = c->cap ? 2 * c->cap : 4;
            struct abt_config_entry *ne =
                realloc(c->e, (size_t) cap * sizeof(*ne));
            if (!ne)
                return ABT_ERR_MEM;
            c->e = ne;
            c->cap = cap;
        }
        e = &c->e[c->n++];
        e->idx = idx;
    }
    e->type = type;
    switch (type) {
    case ABT_SCHED_CONFIG_INT:
        memcpy(&e->v.i, val, sizeof(int));
        break;
    case ABT_SCHED_CONFIG_DOUBLE:
        memcpy(&e->v.d, val, sizeof(double));
        break;
    default:
        memcpy(&e->v.p, val, sizeof(void *));
        break;
    }
    return ABT_SUCCESS;
}

int
ABT_sched_config_create(ABT_sched_config *config, ...)
{
    if (!config)
        return ABT_ERR_INV_ARG;
    ABT_sched_config c = calloc(1, sizeof(*c));
    if (!c)
        return ABT_ERR_MEM;
    int ret = ABT_SUCCESS;
    va_list ap;
    va_start(ap, config);
    for (;;) {
        ABT_sched_config_var var = va_arg(ap, ABT_sched_config_var);
        if (var.idx == ABT_sched_config_var_end.idx)
            break;
        int i;
        double d;
        void *p;
        switch (var.type) {
        case ABT_SCHED_CONFIG_INT:
            i = va_arg(ap, int);
            ret = config_put(c, var.idx, var.type, &i);
            break;
        case ABT_SCHED_CONFIG_DOUBLE:
            d = va_arg(ap, double);
            ret = config_put(c, var.idx, var.type, &d);
            break;
        case ABT_SCHED_CONFIG_PTR:
            p = va_arg(ap, void *);
            ret = config_put(c, var.idx, var.type, &p);
            break;
        default:
            ret = ABT_ERR_INV_ARG;
            break;
        }
        if (ret != ABT_SUCCESS)
            break;
    }
    va_end(ap);
    if (ret != ABT_SUCCESS) {
        free(c->e);
        free(c);
        return ret;
    }
    *config = c;
    return ABT_SUCCESS;
}

static void
config_store(const struct abt_config_entry *e, void *out)
{
    switch (e->type) {
    case ABT_SCHED_CONFIG_INT:
        memcpy(out, &e->v.i, sizeof(int));
        break;
    case ABT_SCHED_CONFIG_DOUBLE:
        memcpy(out, &e->v.d, sizeof(double));
        break;
    default:
        memcpy(out, &e->v.p, sizeof(void *));
        break;
    }
}

int
ABT_sched_config_read(ABT_sched_config config, int num_vars, ...)
{
    if (!config)
        return ABT_ERR_INV_SCHED_CONFIG;
    if (num_vars < 0)
        return ABT_ERR_INV_ARG;
    va_list ap;
    va_start(ap, num_vars);
    for (int i = 0; i < num_vars; i++) {
        void *out = va_arg(ap, void *);
        const struct abt_config_entry *e = config_find(config, i);
        if (out && e)
            config_store(e, out);
    }
    va_end(ap);
    return ABT_SUCCESS;
}

int
ABT_sched_config_set(ABT_sched_config config, int idx,
                     ABT_sched_config_type type, const void *val)
{
    if (!config)
        return ABT_ERR_INV_SCHED_CONFIG;
    if (idx < 0 || !val || (int) type < ABT_SCHED_CONFIG_INT ||
        type > ABT_SCHED_CONFIG_PTR)
        return ABT_ERR_INV_ARG;
    return config_put(config, idx, type, val);
}

int
ABT_sched_config_get(ABT_sched_config config, int idx,
                     ABT_sched_config_type *type, void *val)
{
    if (!config)
        return ABT_ERR_INV_SCHED_CONFIG;
    const struct abt_config_entry *e = config_find(config, idx);
    if (idx < 0 || !e)
        return ABT_ERR_INV_ARG;
    if (type)
        *type = e->type;
    if (val)
        config_store(e, val);
    return ABT_SUCCESS;
}

int
ABT_sched_config_free(ABT_sched_config *config)
{
    if (!config || !*config)
        return ABT_ERR_INV_SCHED_CONFIG;
    free((*config)->e);
    free(*config);
    *config = ABT_SCHED_CONFIG_NULL;
    return ABT_SUCCESS;
}
