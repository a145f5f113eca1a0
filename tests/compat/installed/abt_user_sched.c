/*
 * An Argobots program with its own pool and scheduler, in the shape
 * Argobots' documentation gives them: a FIFO pool of units guarded by an
 * ABT_mutex, and a scheduler that reads its event frequency from an
 * ABT_sched_config, pops round-robin over its pools, and checks for
 * events every `freq` rounds. Two execution streams share two pools;
 * every ULT adds to a counter.
 */
#include <abt.h>

#include <stdio.h>
#include <stdlib.h>

#define NUM_XSTREAMS 2
#define NUM_ULTS 200

/* ---- the pool ---- */

typedef struct unit {
    struct unit *next;
    ABT_thread thread;
    ABT_unit_type type;
} unit_t;

typedef struct {
    ABT_mutex lock;
    unit_t *head, *tail;
    size_t size;
} fifo_t;

static ABT_unit_type
unit_get_type(ABT_unit u)
{
    return ((unit_t *) u)->type;
}
static ABT_thread
unit_get_thread(ABT_unit u)
{
    return ((unit_t *) u)->thread;
}
static ABT_task
unit_get_task(ABT_unit u)
{
    return ((unit_t *) u)->thread;
}
static ABT_bool
unit_is_in_pool(ABT_unit u)
{
    (void) u;
    return ABT_FALSE;
}
static ABT_unit
unit_create(ABT_thread t, ABT_unit_type type)
{
    unit_t *u = calloc(1, sizeof(*u));
    u->thread = t;
    u->type = type;
    return (ABT_unit) u;
}
static ABT_unit
unit_from_thread(ABT_thread t)
{
    return unit_create(t, ABT_UNIT_TYPE_THREAD);
}
static ABT_unit
unit_from_task(ABT_task t)
{
    return unit_create(t, ABT_UNIT_TYPE_TASK);
}
static void
unit_free(ABT_unit *u)
{
    free(*u);
    *u = ABT_UNIT_NULL;
}

static fifo_t *
fifo_of(ABT_pool pool)
{
    void *data;
    ABT_pool_get_data(pool, &data);
    return data;
}
static int
fifo_init(ABT_pool pool, ABT_pool_config config)
{
    (void) config;
    fifo_t *f = calloc(1, sizeof(*f));
    ABT_mutex_create(&f->lock);
    return ABT_pool_set_data(pool, f);
}
static size_t
fifo_size(ABT_pool pool)
{
    return fifo_of(pool)->size;
}
static void
fifo_push(ABT_pool pool, ABT_unit unit)
{
    fifo_t *f = fifo_of(pool);
    unit_t *u = (unit_t *) unit;
    ABT_mutex_lock(f->lock);
    u->next = NULL;
    if (f->tail)
        f->tail->next = u;
    else
        f->head = u;
    f->tail = u;
    f->size++;
    ABT_mutex_unlock(f->lock);
}
static ABT_unit
fifo_pop(ABT_pool pool)
{
    fifo_t *f = fifo_of(pool);
    ABT_mutex_lock(f->lock);
    unit_t *u = f->head;
    if (u) {
        f->head = u->next;
        if (!f->head)
            f->tail = NULL;
        f->size--;
    }
    ABT_mutex_unlock(f->lock);
    return u ? (ABT_unit) u : ABT_UNIT_NULL;
}
static int
fifo_remove(ABT_pool pool, ABT_unit unit)
{
    (void) pool;
    (void) unit;
    return ABT_ERR_POOL;
}
static int
fifo_free(ABT_pool pool)
{
    fifo_t *f = fifo_of(pool);
    ABT_mutex_free(&f->lock);
    free(f);
    return ABT_SUCCESS;
}

static void
fifo_def(ABT_pool_def *def)
{
    def->access = ABT_POOL_ACCESS_MPMC;
    def->u_get_type = unit_get_type;
    def->u_get_thread = unit_get_thread;
    def->u_get_task = unit_get_task;
    def->u_is_in_pool = unit_is_in_pool;
    def->u_create_from_thread = unit_from_thread;
    def->u_create_from_task = unit_from_task;
    def->u_free = unit_free;
    def->p_init = fifo_init;
    def->p_get_size = fifo_size;
    def->p_push = fifo_push;
    def->p_pop = fifo_pop;
    def->p_remove = fifo_remove;
    def->p_free = fifo_free;
    def->p_print_all = NULL;
}

/* ---- the scheduler ---- */

typedef struct {
    int freq;
    int runs;
} sched_data_t;

static int freq_seen, runs_total;

static int
sched_init(ABT_sched sched, ABT_sched_config config)
{
    sched_data_t *d = calloc(1, sizeof(*d));
    d->freq = 1;
    ABT_sched_config_read(config, 1, &d->freq);
    return ABT_sched_set_data(sched, d);
}

static void
sched_run(ABT_sched sched)
{
    sched_data_t *d;
    int n, i = 0;
    ABT_pool pools[NUM_XSTREAMS];

    ABT_sched_get_data(sched, (void **) &d);
    d->runs++;
    ABT_sched_get_num_pools(sched, &n);
    ABT_sched_get_pools(sched, n, 0, pools);
    for (unsigned round = 1;; round++) {
        ABT_unit unit;
        ABT_pool_pop(pools[i], &unit);
        if (unit != ABT_UNIT_NULL)
            ABT_xstream_run_unit(unit, pools[i]);
        i = (i + 1) % n;
        if (round % (unsigned) d->freq == 0) {
            ABT_bool stop;
            ABT_sched_has_to_stop(sched, &stop);
            if (stop == ABT_TRUE)
                break;
            ABT_xstream_check_events(sched);
        }
    }
}

static int
sched_free(ABT_sched sched)
{
    sched_data_t *d;
    ABT_sched_get_data(sched, (void **) &d);
    __atomic_fetch_add(&runs_total, d->runs, __ATOMIC_RELAXED);
    freq_seen = d->freq;
    free(d);
    return ABT_SUCCESS;
}

static int counter;

static void
add_one(void *arg)
{
    (void) arg;
    __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}

int
main(void)
{
    ABT_pool_def pdef;
    ABT_sched_def sdef = {ABT_SCHED_TYPE_ULT, sched_init, sched_run, sched_free,
                          NULL};
    ABT_sched_config_var freq_var = {0, ABT_SCHED_CONFIG_INT};
    ABT_sched_config config;
    ABT_pool pools[NUM_XSTREAMS];
    ABT_sched scheds[NUM_XSTREAMS];
    ABT_xstream xstreams[NUM_XSTREAMS];
    ABT_thread ults[NUM_ULTS];

    ABT_init(0, NULL);
    fifo_def(&pdef);
    for (int i = 0; i < NUM_XSTREAMS; i++)
        ABT_pool_create(&pdef, ABT_POOL_CONFIG_NULL, &pools[i]);
    ABT_sched_config_create(&config, freq_var, 8, ABT_sched_config_var_end);
    for (int i = 0; i < NUM_XSTREAMS; i++) {
        /* Each scheduler starts with its own pool, then the other. */
        ABT_pool mine[NUM_XSTREAMS];
        for (int k = 0; k < NUM_XSTREAMS; k++)
            mine[k] = pools[(i + k) % NUM_XSTREAMS];
        ABT_sched_create(&sdef, NUM_XSTREAMS, mine, config, &scheds[i]);
        ABT_xstream_create(scheds[i], &xstreams[i]);
    }
    ABT_sched_config_free(&config);

    for (int i = 0; i < NUM_ULTS; i++)
        ABT_thread_create(pools[i % NUM_XSTREAMS], add_one, NULL,
                          ABT_THREAD_ATTR_NULL, &ults[i]);
    for (int i = 0; i < NUM_ULTS; i++)
        ABT_thread_free(&ults[i]);
    for (int i = 0; i < NUM_XSTREAMS; i++) {
        ABT_xstream_join(xstreams[i]);
        ABT_xstream_free(&xstreams[i]);
    }
    for (int i = 0; i < NUM_XSTREAMS; i++)
        ABT_pool_free(&pools[i]);
    ABT_finalize();

    int ok =
        counter == NUM_ULTS && freq_seen == 8 && runs_total == NUM_XSTREAMS;
    printf("abt_user_sched: counter %d, freq %d, runs %d: %s\n", counter,
           freq_seen, runs_total, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
