/*
 * abt.h: the subset of Argobots' API that Mochi code (Margo, Thallium and
 * their services) uses, implemented on POSIX threads.
 *
 * Names, signatures, types, constants and return codes are Argobots' (1.x
 * API); programs written against Argobots compile unchanged against this
 * header as long as they use the names declared here. docs/abt.md lists
 * every name, the semantic differences and what is absent.
 *
 * The model, in one paragraph. As in Argobots, the ULTs (ABT_thread) of
 * one execution stream (ABT_xstream) run one at a time, taken from the
 * pools of its scheduler in pool order, first in first out, and switch
 * only at yield points: ABT_thread_yield, the waits of eventuals, futures,
 * condition variables, contended mutexes and rwlocks, barriers, joins of
 * unfinished ULTs, suspension, and Margo's blocking calls. Underneath,
 * each stream has a run token that exactly one worker pthread holds while
 * it runs the stream's ULT code. A ULT runs on the pthread that popped it
 * (there is no stack switching): at a yield point it hands the token on
 * and sleeps on that pthread, and the next ULT runs on an idle worker of
 * the stream or on a spare worker pthread started for it; when its wait
 * is over it goes back to its pool's tail and continues once a worker of
 * its stream pops it. A spare worker exits again after 20 ms without work
 * while another worker of the stream is not blocked. The thread that
 * calls ABT_init becomes the primary execution stream (rank 0) and holds
 * its token: work pushed to its main pool runs whenever the primary
 * thread reaches a yield point (a spare worker of the primary stream runs
 * it), and at the latest in ABT_finalize.
 *
 * Named pools and execution streams for a library (how Margo builds its
 * configured pools and xstreams on this header):
 *   - create each pool with ABT_pool_create_basic(ABT_POOL_FIFO_WAIT,
 *     ABT_POOL_ACCESS_MPMC, ABT_FALSE, &pool); the library keeps the
 *     name -> ABT_pool table itself (Argobots pools have no names);
 *     ABT_pool_get_id gives a process-unique integer id;
 *   - create each execution stream on a list of those pools with
 *     ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, n, pools,
 *     ABT_SCHED_CONFIG_NULL, &xstream) (or ABT_sched_create_basic and
 *     ABT_xstream_create); ABT_xstream_get_rank gives its rank,
 *     ABT_xstream_get_main_pools / ABT_xstream_get_main_sched with
 *     ABT_sched_get_num_pools / ABT_sched_get_pools give its pools back;
 *   - the primary stream's pools come from ABT_xstream_self (on the thread
 *     that called ABT_init) and ABT_xstream_get_main_pools, and
 *     ABT_xstream_set_main_sched_basic replaces them;
 *   - ABT_pool_get_size (waiting work) and ABT_pool_get_total_size (waiting
 *     plus running or blocked work) query a pool's load; ABT_xstream_get_num
 *     counts the running execution streams;
 *   - shut down with ABT_xstream_join and ABT_xstream_free for every stream
 *     the library created (join drains the stream's pools first), then
 *     ABT_pool_free for the pools created with automatic == ABT_FALSE.
 *
 * Unless stated otherwise a function returns ABT_SUCCESS, ABT_ERR_INV_* for
 * a null or invalid handle or argument, ABT_ERR_MEM when memory runs out
 * and ABT_ERR_SYS when a pthread call fails.
 */
#ifndef ABT_H_INCLUDED
#define ABT_H_INCLUDED

#include "qs_export.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The Argobots release whose API this header follows. */
#define ABT_VERSION "1.2"
#define ABT_RELEASE_TYPE_ALPHA 0
#define ABT_RELEASE_TYPE_BETA 1
#define ABT_RELEASE_TYPE_RC 2
#define ABT_RELEASE_TYPE_PATCH 3
#define ABT_CALC_VERSION(MAJOR, MINOR, REVISION, TYPE, PATCH)                  \
    (((MAJOR) *10000000) + ((MINOR) *100000) + ((REVISION) *1000) +            \
     ((TYPE) *100) + (PATCH))
#define ABT_NUMVERSION 10200300
#define ABT_API_PUBLIC
#define ABT_DEPRECATED

/* Error codes: Argobots' values. */
#define ABT_SUCCESS 0
#define ABT_ERR_UNINITIALIZED 1
#define ABT_ERR_MEM 2
#define ABT_ERR_OTHER 3
#define ABT_ERR_INV_XSTREAM 4
#define ABT_ERR_INV_XSTREAM_RANK 5
#define ABT_ERR_INV_XSTREAM_BARRIER 6
#define ABT_ERR_INV_SCHED 7
#define ABT_ERR_INV_SCHED_KIND 8
#define ABT_ERR_INV_SCHED_PREDEF 9
#define ABT_ERR_INV_SCHED_TYPE 10
#define ABT_ERR_INV_SCHED_CONFIG 11
#define ABT_ERR_INV_POOL 12
#define ABT_ERR_INV_POOL_KIND 13
#define ABT_ERR_INV_POOL_ACCESS 14
#define ABT_ERR_INV_UNIT 15
#define ABT_ERR_INV_THREAD 16
#define ABT_ERR_INV_THREAD_ATTR 17
#define ABT_ERR_INV_TASK 18
#define ABT_ERR_INV_KEY 19
#define ABT_ERR_INV_MUTEX 20
#define ABT_ERR_INV_MUTEX_ATTR 21
#define ABT_ERR_INV_COND 22
#define ABT_ERR_INV_RWLOCK 23
#define ABT_ERR_INV_EVENTUAL 24
#define ABT_ERR_INV_FUTURE 25
#define ABT_ERR_INV_BARRIER 26
#define ABT_ERR_INV_TIMER 27
#define ABT_ERR_INV_QUERY_KIND 28
#define ABT_ERR_XSTREAM 29
#define ABT_ERR_XSTREAM_STATE 30
#define ABT_ERR_XSTREAM_BARRIER 31
#define ABT_ERR_SCHED 32
#define ABT_ERR_SCHED_CONFIG 33
#define ABT_ERR_POOL 34
#define ABT_ERR_UNIT 35
#define ABT_ERR_THREAD 36
#define ABT_ERR_TASK 37
#define ABT_ERR_KEY 38
#define ABT_ERR_MUTEX 39
#define ABT_ERR_MUTEX_LOCKED 40
#define ABT_ERR_COND 41
#define ABT_ERR_COND_TIMEDOUT 42
#define ABT_ERR_RWLOCK 43
#define ABT_ERR_EVENTUAL 44
#define ABT_ERR_FUTURE 45
#define ABT_ERR_BARRIER 46
#define ABT_ERR_TIMER 47
#define ABT_ERR_MIGRATION_TARGET 48
#define ABT_ERR_MIGRATION_NA 49
#define ABT_ERR_MISSING_JOIN 50
#define ABT_ERR_FEATURE_NA 51
#define ABT_ERR_INV_TOOL_CONTEXT 52
#define ABT_ERR_INV_ARG 53
#define ABT_ERR_SYS 54
#define ABT_ERR_CPUID 55
#define ABT_ERR_INV_POOL_CONFIG 56
#define ABT_ERR_INV_POOL_USER_DEF 57

#define ABT_TRUE 1
#define ABT_FALSE 0
#define ABT_XSTREAM_ANY_RANK -1

enum ABT_xstream_state {
    ABT_XSTREAM_STATE_RUNNING,
    ABT_XSTREAM_STATE_TERMINATED
};

enum ABT_thread_state {
    ABT_THREAD_STATE_READY,
    ABT_THREAD_STATE_RUNNING,
    ABT_THREAD_STATE_BLOCKED,
    ABT_THREAD_STATE_TERMINATED
};

/* Predefined schedulers. All of them run their pools in order, first in
 * first out; the ones that poll in Argobots sleep here when idle. */
enum ABT_task_state {
    ABT_TASK_STATE_READY,
    ABT_TASK_STATE_RUNNING,
    ABT_TASK_STATE_TERMINATED
};

enum ABT_sched_predef {
    ABT_SCHED_DEFAULT,
    ABT_SCHED_BASIC,
    ABT_SCHED_PRIO,
    ABT_SCHED_RANDWS,
    ABT_SCHED_BASIC_WAIT
};

enum ABT_sched_type { ABT_SCHED_TYPE_ULT, ABT_SCHED_TYPE_TASK };

/* Predefined pools: both kinds are one FIFO queue. ABT_POOL_RANDWS is
 * refused with ABT_ERR_INV_POOL_KIND. */
enum ABT_pool_kind { ABT_POOL_FIFO, ABT_POOL_FIFO_WAIT, ABT_POOL_RANDWS };

/* Access kinds are recorded and reported; every pool is safe for any
 * number of producers and consumers. */
enum ABT_pool_access {
    ABT_POOL_ACCESS_PRIV,
    ABT_POOL_ACCESS_SPSC,
    ABT_POOL_ACCESS_MPSC,
    ABT_POOL_ACCESS_SPMC,
    ABT_POOL_ACCESS_MPMC
};

enum ABT_unit_type {
    ABT_UNIT_TYPE_THREAD,
    ABT_UNIT_TYPE_TASK,
    ABT_UNIT_TYPE_XSTREAM,
    ABT_UNIT_TYPE_EXT
};

enum ABT_info_query_kind {
    ABT_INFO_QUERY_KIND_ENABLED_DEBUG,
    ABT_INFO_QUERY_KIND_ENABLED_PRINT_ERRNO,
    ABT_INFO_QUERY_KIND_ENABLED_LOG,
    ABT_INFO_QUERY_KIND_ENABLED_VALGRIND,
    ABT_INFO_QUERY_KIND_ENABLED_CHECK_ERROR,
    ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_PRODUCER,
    ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_CONSUMER,
    ABT_INFO_QUERY_KIND_ENABLED_PRESERVE_FPU,
    ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL,
    ABT_INFO_QUERY_KIND_ENABLED_TASK_CANCEL,
    ABT_INFO_QUERY_KIND_ENABLED_MIGRATION,
    ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED,
    ABT_INFO_QUERY_KIND_ENABLED_EXTERNAL_THREAD,
    ABT_INFO_QUERY_KIND_ENABLED_SCHED_SLEEP,
    ABT_INFO_QUERY_KIND_ENABLED_PRINT_CONFIG,
    ABT_INFO_QUERY_KIND_ENABLED_AFFINITY,
    ABT_INFO_QUERY_KIND_MAX_NUM_XSTREAMS,
    ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE,
    ABT_INFO_QUERY_KIND_DEFAULT_SCHED_STACKSIZE,
    ABT_INFO_QUERY_KIND_DEFAULT_SCHED_EVENT_FREQ,
    ABT_INFO_QUERY_KIND_DEFAULT_SCHED_SLEEP_NSEC,
    ABT_INFO_QUERY_KIND_ENABLED_TOOL,
    ABT_INFO_QUERY_KIND_FCONTEXT,
    ABT_INFO_QUERY_KIND_DYNAMIC_PROMOTION,
    ABT_INFO_QUERY_KIND_ENABLED_STACK_UNWIND,
    ABT_INFO_QUERY_KIND_ENABLED_STACK_OVERFLOW_CHECK,
    ABT_INFO_QUERY_KIND_WAIT_POLICY,
    ABT_INFO_QUERY_KIND_ENABLED_LAZY_STACK_ALLOC
};

struct ABT_xstream_opaque;
struct ABT_xstream_barrier_opaque;
struct ABT_sched_opaque;
struct ABT_sched_config_opaque;
struct ABT_pool_opaque;
struct ABT_pool_config_opaque;
struct ABT_unit_opaque;
struct ABT_thread_opaque;
struct ABT_thread_attr_opaque;
struct ABT_key_opaque;
struct ABT_mutex_opaque;
struct ABT_mutex_attr_opaque;
struct ABT_cond_opaque;
struct ABT_rwlock_opaque;
struct ABT_eventual_opaque;
struct ABT_future_opaque;
struct ABT_barrier_opaque;
struct ABT_timer_opaque;

typedef struct ABT_xstream_opaque *ABT_xstream;
typedef enum ABT_xstream_state ABT_xstream_state;
typedef struct ABT_xstream_barrier_opaque *ABT_xstream_barrier;
typedef struct ABT_sched_opaque *ABT_sched;
typedef struct ABT_sched_config_opaque *ABT_sched_config;
typedef enum ABT_sched_predef ABT_sched_predef;
typedef enum ABT_sched_type ABT_sched_type;
typedef struct ABT_pool_opaque *ABT_pool;
typedef struct ABT_pool_config_opaque *ABT_pool_config;
typedef enum ABT_pool_kind ABT_pool_kind;
typedef enum ABT_pool_access ABT_pool_access;
typedef struct ABT_unit_opaque *ABT_unit;
typedef enum ABT_unit_type ABT_unit_type;
typedef uint64_t ABT_unit_id;
typedef struct ABT_thread_opaque *ABT_thread;
typedef struct ABT_thread_attr_opaque *ABT_thread_attr;
typedef enum ABT_thread_state ABT_thread_state;
typedef ABT_unit_id ABT_thread_id;
typedef enum ABT_task_state ABT_task_state;
typedef struct ABT_thread_opaque *ABT_task;
typedef struct ABT_key_opaque *ABT_key;
typedef struct ABT_mutex_opaque *ABT_mutex;
typedef struct ABT_mutex_attr_opaque *ABT_mutex_attr;
typedef struct ABT_cond_opaque *ABT_cond;
typedef struct ABT_rwlock_opaque *ABT_rwlock;
typedef struct ABT_eventual_opaque *ABT_eventual;
typedef struct ABT_future_opaque *ABT_future;
typedef struct ABT_barrier_opaque *ABT_barrier;
typedef struct ABT_timer_opaque *ABT_timer;
typedef int ABT_bool;
typedef enum ABT_info_query_kind ABT_info_query_kind;

/* Null handles (Argobots' default build: NULL). */
#define ABT_XSTREAM_NULL ((ABT_xstream) NULL)
#define ABT_XSTREAM_BARRIER_NULL ((ABT_xstream_barrier) NULL)
#define ABT_SCHED_NULL ((ABT_sched) NULL)
#define ABT_SCHED_CONFIG_NULL ((ABT_sched_config) NULL)
#define ABT_POOL_NULL ((ABT_pool) NULL)
#define ABT_POOL_CONFIG_NULL ((ABT_pool_config) NULL)
#define ABT_UNIT_NULL ((ABT_unit) NULL)
#define ABT_THREAD_NULL ((ABT_thread) NULL)
#define ABT_THREAD_ATTR_NULL ((ABT_thread_attr) NULL)
#define ABT_TASK_NULL ((ABT_task) NULL)
#define ABT_KEY_NULL ((ABT_key) NULL)
#define ABT_MUTEX_NULL ((ABT_mutex) NULL)
#define ABT_MUTEX_ATTR_NULL ((ABT_mutex_attr) NULL)
#define ABT_COND_NULL ((ABT_cond) NULL)
#define ABT_RWLOCK_NULL ((ABT_rwlock) NULL)
#define ABT_EVENTUAL_NULL ((ABT_eventual) NULL)
#define ABT_FUTURE_NULL ((ABT_future) NULL)
#define ABT_BARRIER_NULL ((ABT_barrier) NULL)
#define ABT_TIMER_NULL ((ABT_timer) NULL)

/* Statically initialized synchronization objects: zeroed memory is an
 * unlocked mutex, a condition variable with no waiter, an eventual of 0
 * bytes that is not ready. They are never freed. */
typedef struct {
    int dummy[16];
} ABT_mutex_memory;
#define ABT_MUTEX_INITIALIZER                                                  \
    {                                                                          \
        {                                                                      \
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0                     \
        }                                                                      \
    }
#define ABT_RECURSIVE_MUTEX_INITIALIZER                                        \
    {                                                                          \
        {                                                                      \
            1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0                     \
        }                                                                      \
    }
#define ABT_MUTEX_MEMORY_GET_HANDLE(p_mutex_memory) ((ABT_mutex) p_mutex_memory)
typedef struct {
    int dummy[16];
} ABT_cond_memory;
#define ABT_COND_INITIALIZER ABT_MUTEX_INITIALIZER
#define ABT_COND_MEMORY_GET_HANDLE(p_cond_memory) ((ABT_cond) p_cond_memory)
typedef struct {
    int dummy[16];
} ABT_eventual_memory;
#define ABT_EVENTUAL_INITIALIZER ABT_MUTEX_INITIALIZER
#define ABT_EVENTUAL_MEMORY_GET_HANDLE(p_eventual_memory)                      \
    ((ABT_eventual) p_eventual_memory)

/* ---- Initialization ---------------------------------------------------- */

/* Initializes the runtime (nested calls count); the calling thread becomes
 * the primary execution stream, rank 0, with one FIFO MPMC main pool.
 * argc/argv are ignored. */
QS_EXPORT int ABT_init(int argc, char **argv);
/* Undoes one ABT_init; the last one, called on the primary thread, runs the
 * work left in the primary pools, joins and frees the execution streams
 * still running and releases everything. ABT_ERR_UNINITIALIZED if not
 * initialized, ABT_ERR_INV_XSTREAM from another thread. */
QS_EXPORT int ABT_finalize(void);
/* ABT_SUCCESS if initialized, ABT_ERR_UNINITIALIZED otherwise. */
QS_EXPORT int ABT_initialized(void);
/* Seconds from an arbitrary origin, on a monotonic clock. */
QS_EXPORT double ABT_get_wtime(void);
/* Writes the message of error code err into str (if not NULL) and its
 * length into *len (if not NULL). */
QS_EXPORT int ABT_error_get_str(int err, char *str, size_t *len);
/* Answers a configuration query: ABT_bool for the ENABLED_* kinds,
 * size_t for the stack sizes, unsigned int for MAX_NUM_XSTREAMS, uint64_t
 * for the scheduler frequency and sleep time. */
QS_EXPORT int ABT_info_query_config(ABT_info_query_kind query_kind, void *val);
/* Human-readable descriptions (a format of this layer's own): the
 * configuration; every execution stream with its workers and pools
 * (ABT_ERR_UNINITIALIZED before ABT_init); one stream; one pool.
 * ABT_ERR_INV_ARG for a NULL fp. */
QS_EXPORT int ABT_info_print_config(FILE *fp);
QS_EXPORT int ABT_info_print_all_xstreams(FILE *fp);
QS_EXPORT int ABT_info_print_xstream(FILE *fp, ABT_xstream xstream);
QS_EXPORT int ABT_info_print_pool(FILE *fp, ABT_pool pool);

/* ---- Pools ------------------------------------------------------------- */

/* Creates a FIFO pool. automatic == ABT_TRUE frees the pool with the last
 * scheduler that uses it; otherwise ABT_pool_free does. */
QS_EXPORT int ABT_pool_create_basic(ABT_pool_kind kind, ABT_pool_access access,
                                    ABT_bool automatic, ABT_pool *newpool);
/* Frees an empty pool no scheduler uses (ABT_ERR_POOL otherwise) and sets
 * *pool to ABT_POOL_NULL. */
QS_EXPORT int ABT_pool_free(ABT_pool *pool);
QS_EXPORT int ABT_pool_get_access(ABT_pool pool, ABT_pool_access *access);
/* Number of work units waiting in the pool. */
QS_EXPORT int ABT_pool_get_size(ABT_pool pool, size_t *size);
/* Waiting plus running or blocked work units that belong to the pool. */
QS_EXPORT int ABT_pool_get_total_size(ABT_pool pool, size_t *size);
QS_EXPORT int ABT_pool_is_empty(ABT_pool pool, ABT_bool *is_empty);
/* A process-unique, non-negative id. */
QS_EXPORT int ABT_pool_get_id(ABT_pool pool, int *id);
/* A pointer the user attaches to the pool. */
QS_EXPORT int ABT_pool_set_data(ABT_pool pool, void *data);
QS_EXPORT int ABT_pool_get_data(ABT_pool pool, void **data);

/* ---- Predefined schedulers --------------------------------------------- */

/* Creates a basic scheduler over pools[0..num_pools-1] (in priority
 * order); with pools == NULL it creates num_pools automatic FIFO pools.
 * config is accepted and not read. */
QS_EXPORT int ABT_sched_create_basic(ABT_sched_predef predef, int num_pools,
                                     ABT_pool *pools, ABT_sched_config config,
                                     ABT_sched *newsched);
/* Frees a scheduler no execution stream uses (ABT_ERR_SCHED otherwise). */
QS_EXPORT int ABT_sched_free(ABT_sched *sched);
QS_EXPORT int ABT_sched_get_num_pools(ABT_sched sched, int *num_pools);
/* Copies up to max_pools pools, starting at index idx. */
QS_EXPORT int ABT_sched_get_pools(ABT_sched sched, int max_pools, int idx,
                                  ABT_pool *pools);
/* Total sizes of the scheduler's pools, waiting / waiting plus running. */
QS_EXPORT int ABT_sched_get_size(ABT_sched sched, size_t *size);
QS_EXPORT int ABT_sched_get_total_size(ABT_sched sched, size_t *size);

/* ---- User-defined pools and schedulers ---------------------------------- */

/*
 * A pool whose queue is the program's: abt.h hands it work units through
 * the callbacks of an ABT_pool_def (Argobots 1.x's "old" pool definition,
 * the one Thallium's custom pools fill in). A unit is the program's
 * wrapper of a ULT or tasklet, made by u_create_from_thread /
 * u_create_from_task when a ULT is created on the pool and freed by
 * u_free once it is popped to run. abt.h calls u_get_type, u_get_thread,
 * u_get_task, u_create_from_thread, u_create_from_task, u_free, p_init,
 * p_push, p_pop, p_remove and p_free (those that are not NULL), one call
 * at a time per pool, never holding a lock of its own; u_is_in_pool,
 * p_get_size, p_pop_wait, p_pop_timedwait and p_print_all are never
 * called and may be left unset.
 */
typedef ABT_unit_type (*ABT_unit_get_type_fn)(ABT_unit);
typedef ABT_thread (*ABT_unit_get_thread_fn)(ABT_unit);
typedef ABT_task (*ABT_unit_get_task_fn)(ABT_unit);
typedef ABT_bool (*ABT_unit_is_in_pool_fn)(ABT_unit);
typedef ABT_unit (*ABT_unit_create_from_thread_fn)(ABT_thread);
typedef ABT_unit (*ABT_unit_create_from_task_fn)(ABT_task);
typedef void (*ABT_unit_free_fn)(ABT_unit *);
typedef int (*ABT_pool_init_fn)(ABT_pool, ABT_pool_config);
typedef size_t (*ABT_pool_get_size_fn)(ABT_pool);
typedef void (*ABT_pool_push_fn)(ABT_pool, ABT_unit);
typedef ABT_unit (*ABT_pool_pop_fn)(ABT_pool);
typedef ABT_unit (*ABT_pool_pop_wait_fn)(ABT_pool, double);
typedef ABT_unit (*ABT_pool_pop_timedwait_fn)(ABT_pool, double);
typedef int (*ABT_pool_remove_fn)(ABT_pool, ABT_unit);
typedef int (*ABT_pool_free_fn)(ABT_pool);
typedef int (*ABT_pool_print_all_fn)(ABT_pool, void *arg,
                                     void (*)(void *, ABT_unit));

struct ABT_pool_def {
    ABT_pool_access access;
    ABT_unit_get_type_fn u_get_type;
    ABT_unit_get_thread_fn u_get_thread;
    ABT_unit_get_task_fn u_get_task;
    ABT_unit_is_in_pool_fn u_is_in_pool;
    ABT_unit_create_from_thread_fn u_create_from_thread;
    ABT_unit_create_from_task_fn u_create_from_task;
    ABT_unit_free_fn u_free;
    ABT_pool_init_fn p_init;
    ABT_pool_get_size_fn p_get_size;
    ABT_pool_push_fn p_push;
    ABT_pool_pop_fn p_pop;
    ABT_pool_pop_timedwait_fn p_pop_timedwait;
    ABT_pool_remove_fn p_remove;
    ABT_pool_free_fn p_free;
    ABT_pool_print_all_fn p_print_all;
};
typedef struct ABT_pool_def ABT_pool_def;
typedef struct ABT_pool_def *ABT_pool_user_def;

/* Creates a pool from def (copied; p_push, p_pop, u_get_thread,
 * u_create_from_thread and u_free are required, else ABT_ERR_INV_ARG) and
 * runs def->p_init(pool, config); its error is returned and nothing is
 * kept. Free it with ABT_pool_free, which runs def->p_free. */
QS_EXPORT int ABT_pool_create(ABT_pool_user_def def, ABT_pool_config config,
                              ABT_pool *newpool);
/* Takes the next waiting unit out of the pool (ABT_UNIT_NULL when none):
 * the caller runs it with ABT_xstream_run_unit or gives it back with
 * ABT_pool_push. */
QS_EXPORT int ABT_pool_pop(ABT_pool pool, ABT_unit *unit);
/* Puts a unit popped from a pool of the same kind back into pool. */
QS_EXPORT int ABT_pool_push(ABT_pool pool, ABT_unit unit);
/* The same in ULTs, for pools of any kind (Argobots 1.1): pop gives
 * ABT_THREAD_NULL (or *num 0) when nothing waits; push queues a ULT popped
 * from any pool, and a worker of a stream serving the pool runs it. */
QS_EXPORT int ABT_pool_pop_thread(ABT_pool pool, ABT_thread *thread);
QS_EXPORT int ABT_pool_pop_threads(ABT_pool pool, ABT_thread *threads,
                                   size_t len, size_t *num);
QS_EXPORT int ABT_pool_push_thread(ABT_pool pool, ABT_thread thread);
QS_EXPORT int ABT_pool_push_threads(ABT_pool pool, const ABT_thread *threads,
                                    size_t num);
/* Takes a waiting unit out of the pool (ABT_ERR_POOL if it is not there). */
QS_EXPORT int ABT_pool_remove(ABT_pool pool, ABT_unit unit);
/* Stacked schedulers are not provided: ABT_ERR_FEATURE_NA. */
QS_EXPORT int ABT_pool_add_sched(ABT_pool pool, ABT_sched sched);

/* Scheduler configurations: (variable, value) pairs, ended by
 * ABT_sched_config_var_end. A value is an int, a double or a void *, as
 * the variable's type says. */
typedef enum {
    ABT_SCHED_CONFIG_INT = 0,
    ABT_SCHED_CONFIG_DOUBLE = 1,
    ABT_SCHED_CONFIG_PTR = 2,
} ABT_sched_config_type;
typedef struct {
    int idx;
    ABT_sched_config_type type;
} ABT_sched_config_var;
/* Argobots' predefined variables (objects there; constants here, so that
 * the library exports functions only): the list's end, and the predefined
 * schedulers' settings, which this layer accepts and does not read. */
static const ABT_sched_config_var ABT_sched_config_var_end = {
    -1, ABT_SCHED_CONFIG_INT};
static const ABT_sched_config_var ABT_sched_config_access = {
    -2, ABT_SCHED_CONFIG_INT};
static const ABT_sched_config_var ABT_sched_config_automatic = {
    -3, ABT_SCHED_CONFIG_INT};
static const ABT_sched_config_var ABT_sched_basic_freq = {-4,
                                                          ABT_SCHED_CONFIG_INT};
QS_EXPORT int ABT_sched_config_create(ABT_sched_config *config, ...);
/* Stores the value of variable i (i = 0 .. num_vars-1) through the i-th
 * pointer argument; a NULL pointer or a variable never set is skipped. */
QS_EXPORT int ABT_sched_config_read(ABT_sched_config config, int num_vars, ...);
QS_EXPORT int ABT_sched_config_set(ABT_sched_config config, int idx,
                                   ABT_sched_config_type type, const void *val);
/* ABT_ERR_INV_ARG when idx was never set. */
QS_EXPORT int ABT_sched_config_get(ABT_sched_config config, int idx,
                                   ABT_sched_config_type *type, void *val);
QS_EXPORT int ABT_sched_config_free(ABT_sched_config *config);

/*
 * A scheduler whose loop is the program's. The execution stream created
 * on it calls def->run(sched) on its worker pthread once; run pops units
 * from the scheduler's pools (ABT_pool_pop), runs them with
 * ABT_xstream_run_unit, calls ABT_xstream_check_events now and then, and
 * returns when ABT_sched_has_to_stop says so. Work left in the pools when
 * run returns is run by the stream before it ends.
 */
typedef int (*ABT_sched_init_fn)(ABT_sched, ABT_sched_config);
typedef void (*ABT_sched_run_fn)(ABT_sched);
typedef int (*ABT_sched_free_fn)(ABT_sched);
typedef ABT_pool (*ABT_sched_get_migr_pool_fn)(ABT_sched);
typedef struct {
    ABT_sched_type type;
    ABT_sched_init_fn init;
    ABT_sched_run_fn run;
    ABT_sched_free_fn free;
    ABT_sched_get_migr_pool_fn get_migr_pool;
} ABT_sched_def;

/* Creates a scheduler from def (run is required) over the pools (NULL:
 * num_pools automatic FIFO pools), then runs def->init(sched, config)
 * (its error is returned and nothing is kept). ABT_sched_free (or the
 * stream's) runs def->free. get_migr_pool is never called. */
QS_EXPORT int ABT_sched_create(ABT_sched_def *def, int num_pools,
                               ABT_pool *pools, ABT_sched_config config,
                               ABT_sched *newsched);
QS_EXPORT int ABT_sched_set_data(ABT_sched sched, void *data);
QS_EXPORT int ABT_sched_get_data(ABT_sched sched, void **data);
/* ABT_TRUE after ABT_sched_exit, and after ABT_sched_finish or a join of
 * the stream once none of the scheduler's pools has waiting work. */
QS_EXPORT int ABT_sched_has_to_stop(ABT_sched sched, ABT_bool *stop);
QS_EXPORT int ABT_sched_finish(ABT_sched sched);
QS_EXPORT int ABT_sched_exit(ABT_sched sched);
/* Runs a popped unit of pool to completion on the calling worker. */
QS_EXPORT int ABT_xstream_run_unit(ABT_unit unit, ABT_pool pool);
/* Called by a user-defined scheduler's loop: when none of its pools has
 * work and no stop is asked for, it sleeps up to 1 ms or until work
 * arrives, so that an idle loop does not spin a core. */
QS_EXPORT int ABT_xstream_check_events(ABT_sched sched);

/* ---- Execution streams ------------------------------------------------- */

/* Starts an execution stream (one worker pthread) running sched; the
 * stream owns sched from now on. sched == ABT_SCHED_NULL gives it a
 * default scheduler with one new automatic pool. */
QS_EXPORT int ABT_xstream_create(ABT_sched sched, ABT_xstream *newxstream);
QS_EXPORT int ABT_xstream_create_with_rank(ABT_sched sched, int rank,
                                           ABT_xstream *newxstream);
/* ABT_sched_create_basic + ABT_xstream_create. */
QS_EXPORT int ABT_xstream_create_basic(ABT_sched_predef predef, int num_pools,
                                       ABT_pool *pools, ABT_sched_config config,
                                       ABT_xstream *newxstream);
/* Waits until the stream's pools are empty and every work unit it runs has
 * finished, then stops its workers. Refused (ABT_ERR_INV_XSTREAM) for the
 * primary stream and for the caller's own stream. */
QS_EXPORT int ABT_xstream_join(ABT_xstream xstream);
/* Joins if needed, frees the stream, its scheduler and the automatic pools
 * no other scheduler uses, and sets *xstream to ABT_XSTREAM_NULL. */
QS_EXPORT int ABT_xstream_free(ABT_xstream *xstream);
/* The caller's execution stream; ABT_ERR_INV_XSTREAM from a thread that is
 * not one (a plain pthread). */
QS_EXPORT int ABT_xstream_self(ABT_xstream *xstream);
QS_EXPORT int ABT_xstream_self_rank(int *rank);
QS_EXPORT int ABT_xstream_get_rank(ABT_xstream xstream, int *rank);
QS_EXPORT int ABT_xstream_get_main_sched(ABT_xstream xstream, ABT_sched *sched);
/* Copies up to max_pools of the stream's pools, in priority order. */
QS_EXPORT int ABT_xstream_get_main_pools(ABT_xstream xstream, int max_pools,
                                         ABT_pool *pools);
/* Replaces the pools of the stream's scheduler (the caller's own stream or
 * the primary one); the pools it stops using keep their work units. */
QS_EXPORT int ABT_xstream_set_main_sched_basic(ABT_xstream xstream,
                                               ABT_sched_predef predef,
                                               int num_pools, ABT_pool *pools);
QS_EXPORT int ABT_xstream_set_main_sched(ABT_xstream xstream, ABT_sched sched);
QS_EXPORT int ABT_xstream_get_state(ABT_xstream xstream,
                                    ABT_xstream_state *state);
QS_EXPORT int ABT_xstream_equal(ABT_xstream xstream1, ABT_xstream xstream2,
                                ABT_bool *result);
/* Number of execution streams not yet joined, the primary included. */
QS_EXPORT int ABT_xstream_get_num(int *num_xstreams);
QS_EXPORT int ABT_xstream_is_primary(ABT_xstream xstream, ABT_bool *is_primary);
/* Changes the rank (ABT_ERR_INV_XSTREAM_RANK if another stream has it). */
QS_EXPORT int ABT_xstream_set_rank(ABT_xstream xstream, int rank);
/* Binds the stream's worker (and the spare workers it starts later) to a
 * CPU: cpuid indexes the CPUs the process started with, modulo their
 * number. num_cpuids == 0 removes the binding. */
QS_EXPORT int ABT_xstream_set_cpubind(ABT_xstream xstream, int cpuid);
/* ABT_ERR_FEATURE_NA when the stream is not bound. */
QS_EXPORT int ABT_xstream_get_cpubind(ABT_xstream xstream, int *cpuid);
QS_EXPORT int ABT_xstream_set_affinity(ABT_xstream xstream, int num_cpuids,
                                       int *cpuids);
/* The CPU ids of the binding (unbound: every CPU of the process);
 * *num_cpuids is their number, at most max_cpuids are copied. */
QS_EXPORT int ABT_xstream_get_affinity(ABT_xstream xstream, int max_cpuids,
                                       int *cpuids, int *num_cpuids);

/* num_waiters (> 0) execution streams (not ULTs: the wait blocks the
 * caller's worker and is not counted as a blocked ULT) release each other. */
QS_EXPORT int ABT_xstream_barrier_create(uint32_t num_waiters,
                                         ABT_xstream_barrier *newbarrier);
QS_EXPORT int ABT_xstream_barrier_free(ABT_xstream_barrier *barrier);
QS_EXPORT int ABT_xstream_barrier_wait(ABT_xstream_barrier barrier);

/* ---- Threads (ULTs) ---------------------------------------------------- */

/* Pushes a ULT running thread_func(arg) to pool. With newthread == NULL
 * the ULT is freed when it ends; otherwise the caller frees it with
 * ABT_thread_free. attr may be ABT_THREAD_ATTR_NULL. */
QS_EXPORT int ABT_thread_create(ABT_pool pool, void (*thread_func)(void *),
                                void *arg, ABT_thread_attr attr,
                                ABT_thread *newthread);
/* As ABT_thread_create; the caller is not switched to the new ULT. */
QS_EXPORT int ABT_thread_create_to(ABT_pool pool, void (*thread_func)(void *),
                                   void *arg, ABT_thread_attr attr,
                                   ABT_thread *newthread);
/* Pushes to the first pool of xstream's scheduler. */
QS_EXPORT int ABT_thread_create_on_xstream(ABT_xstream xstream,
                                           void (*thread_func)(void *),
                                           void *arg, ABT_thread_attr attr,
                                           ABT_thread *newthread);
QS_EXPORT int ABT_thread_create_many(int num_threads, ABT_pool *pool_list,
                                     void (**thread_func_list)(void *),
                                     void **arg_list, ABT_thread_attr attr,
                                     ABT_thread *newthread_list);
/* Reuses a terminated ULT for a new function in pool. */
QS_EXPORT int ABT_thread_revive(ABT_pool pool, void (*thread_func)(void *),
                                void *arg, ABT_thread *thread);
/* Waits until the ULT has ended (ABT_ERR_INV_THREAD on itself or on the
 * primary ULT). */
QS_EXPORT int ABT_thread_join(ABT_thread thread);
QS_EXPORT int ABT_thread_join_many(int num_threads, ABT_thread *thread_list);
/* Joins, calls the key destructors, frees, sets *thread to
 * ABT_THREAD_NULL. */
QS_EXPORT int ABT_thread_free(ABT_thread *thread);
QS_EXPORT int ABT_thread_free_many(int num_threads, ABT_thread *thread_list);
/* Ends the calling ULT now (its stack is not unwound: C++ destructors of
 * the frames it leaves do not run, as in Argobots). */
QS_EXPORT int ABT_thread_exit(void);
/* Pushes the calling ULT to its pool's tail and lets the stream run the
 * work that waits before it (returns at once when none waits). */
QS_EXPORT int ABT_thread_yield(void);
QS_EXPORT int ABT_thread_yield_to(ABT_thread thread);
/* The calling ULT (on the primary thread: the primary ULT);
 * ABT_ERR_INV_XSTREAM from a plain pthread. */
QS_EXPORT int ABT_thread_self(ABT_thread *thread);
QS_EXPORT int ABT_thread_self_id(ABT_unit_id *id);
QS_EXPORT int ABT_thread_get_id(ABT_thread thread, ABT_unit_id *thread_id);
QS_EXPORT int ABT_thread_get_state(ABT_thread thread, ABT_thread_state *state);
/* The pool the ULT was last pushed to (a handler: the pool its RPC was
 * dispatched to); for the primary ULT, which is never queued, the first pool
 * of the primary stream's current main scheduler. Never ABT_POOL_NULL:
 * ABT_ERR_INV_POOL if there is none. _id gives that pool's ABT_pool_get_id. */
QS_EXPORT int ABT_thread_get_last_pool(ABT_thread thread, ABT_pool *pool);
QS_EXPORT int ABT_thread_get_last_pool_id(ABT_thread thread, int *id);
QS_EXPORT int ABT_thread_get_last_xstream(ABT_thread thread,
                                          ABT_xstream *xstream);
QS_EXPORT int ABT_thread_is_primary(ABT_thread thread, ABT_bool *is_primary);
QS_EXPORT int ABT_thread_equal(ABT_thread thread1, ABT_thread thread2,
                               ABT_bool *result);
QS_EXPORT int ABT_thread_get_arg(ABT_thread thread, void **arg);
QS_EXPORT int ABT_thread_set_arg(ABT_thread thread, void *arg);
QS_EXPORT int ABT_thread_get_thread_func(ABT_thread thread,
                                         void (**thread_func)(void *));
QS_EXPORT int ABT_thread_set_specific(ABT_thread thread, ABT_key key,
                                      void *value);
QS_EXPORT int ABT_thread_get_specific(ABT_thread thread, ABT_key key,
                                      void **value);
/* Migration is not supported: always ABT_FALSE / ABT_ERR_MIGRATION_NA. */
QS_EXPORT int ABT_thread_set_migratable(ABT_thread thread, ABT_bool migratable);
QS_EXPORT int ABT_thread_is_migratable(ABT_thread thread, ABT_bool *migratable);
QS_EXPORT int ABT_thread_migrate_to_pool(ABT_thread thread, ABT_pool pool);
/* The stack size is recorded: a ULT runs on its worker's stack. */
QS_EXPORT int ABT_thread_get_stacksize(ABT_thread thread, size_t *stacksize);
QS_EXPORT int ABT_thread_attr_create(ABT_thread_attr *newattr);
QS_EXPORT int ABT_thread_attr_free(ABT_thread_attr *attr);
QS_EXPORT int ABT_thread_attr_set_stacksize(ABT_thread_attr attr,
                                            size_t stacksize);
QS_EXPORT int ABT_thread_attr_get_stacksize(ABT_thread_attr attr,
                                            size_t *stacksize);
QS_EXPORT int ABT_thread_attr_set_stack(ABT_thread_attr attr, void *stackaddr,
                                        size_t stacksize);
QS_EXPORT int ABT_thread_attr_get_stack(ABT_thread_attr attr, void **stackaddr,
                                        size_t *stacksize);
QS_EXPORT int ABT_thread_attr_set_migratable(ABT_thread_attr attr,
                                             ABT_bool migratable);

/* Cancels a ULT: one still waiting in its pool is removed and ends
 * without running; a running one ends at its next ABT_thread_yield. */
QS_EXPORT int ABT_thread_cancel(ABT_thread thread);
/* Blocks the calling ULT until ABT_thread_resume; resuming a ULT that is
 * not suspended gives ABT_ERR_THREAD. */
QS_EXPORT int ABT_self_suspend(void);
QS_EXPORT int ABT_thread_resume(ABT_thread thread);
/* A new attribute (freed by the caller) with the ULT's stack size. */
QS_EXPORT int ABT_thread_get_attr(ABT_thread thread, ABT_thread_attr *attr);

/* Tasklets: ULTs under Argobots' tasklet names (a tasklet must not block;
 * here nothing breaks if it does). */
QS_EXPORT int ABT_task_create(ABT_pool pool, void (*task_func)(void *),
                              void *arg, ABT_task *newtask);
QS_EXPORT int ABT_task_create_on_xstream(ABT_xstream xstream,
                                         void (*task_func)(void *), void *arg,
                                         ABT_task *newtask);
QS_EXPORT int ABT_task_revive(ABT_pool pool, void (*task_func)(void *),
                              void *arg, ABT_task *task);
QS_EXPORT int ABT_task_free(ABT_task *task);
QS_EXPORT int ABT_task_join(ABT_task task);
QS_EXPORT int ABT_task_cancel(ABT_task task);
/* ABT_ERR_INV_TASK when the caller is a ULT, not a tasklet. */
QS_EXPORT int ABT_task_self(ABT_task *task);
QS_EXPORT int ABT_task_self_id(uint64_t *id);
QS_EXPORT int ABT_task_get_xstream(ABT_task task, ABT_xstream *xstream);
QS_EXPORT int ABT_task_get_state(ABT_task task, ABT_task_state *state);
QS_EXPORT int ABT_task_get_last_pool(ABT_task task, ABT_pool *pool);
QS_EXPORT int ABT_task_get_last_pool_id(ABT_task task, int *id);
QS_EXPORT int ABT_task_set_migratable(ABT_task task, ABT_bool flag);
QS_EXPORT int ABT_task_is_migratable(ABT_task task, ABT_bool *flag);
QS_EXPORT int ABT_task_equal(ABT_task task1, ABT_task task2, ABT_bool *result);
QS_EXPORT int ABT_task_get_id(ABT_task task, uint64_t *task_id);
QS_EXPORT int ABT_task_get_arg(ABT_task task, void **arg);

/* The caller as a work unit. */
QS_EXPORT int ABT_self_get_xstream(ABT_xstream *xstream);
QS_EXPORT int ABT_self_get_xstream_rank(int *rank);
QS_EXPORT int ABT_self_get_thread(ABT_thread *thread);
QS_EXPORT int ABT_self_get_thread_id(ABT_unit_id *id);
QS_EXPORT int ABT_self_is_primary(ABT_bool *is_primary);
QS_EXPORT int ABT_self_on_primary_xstream(ABT_bool *on_primary);
/* ABT_thread_get_last_pool() of the caller (the main thread: the primary
 * stream's first main pool); ABT_ERR_INV_XSTREAM from a plain pthread. */
QS_EXPORT int ABT_self_get_last_pool(ABT_pool *pool);
QS_EXPORT int ABT_self_get_last_pool_id(int *pool_id);
QS_EXPORT int ABT_self_set_specific(ABT_key key, void *value);
QS_EXPORT int ABT_self_get_specific(ABT_key key, void **value);
QS_EXPORT int ABT_self_get_arg(void **arg);
QS_EXPORT int ABT_self_yield(void);
QS_EXPORT int ABT_self_exit(void);
/* ABT_UNIT_TYPE_THREAD or _TASK; ABT_UNIT_TYPE_EXT and ABT_ERR_INV_XSTREAM
 * from a plain pthread. */
QS_EXPORT int ABT_self_get_type(ABT_unit_type *type);

/* ---- Work-unit-specific data ------------------------------------------- */

/* A key names one value per ULT; destructor (may be NULL) runs on a
 * non-NULL value when its ULT is freed. */
QS_EXPORT int ABT_key_create(void (*destructor)(void *value), ABT_key *newkey);
QS_EXPORT int ABT_key_free(ABT_key *key);
/* Set / get the calling ULT's value (NULL if never set). */
QS_EXPORT int ABT_key_set(ABT_key key, void *value);
QS_EXPORT int ABT_key_get(ABT_key key, void **value);

/* ---- Mutexes ----------------------------------------------------------- */

/* Create a mutex (recursive when its attribute says so) and free it
 * (*mutex becomes ABT_MUTEX_NULL). Locking blocks the worker, as the model
 * above says; the _high, _low and spin variants lock the same way. */
QS_EXPORT int ABT_mutex_create(ABT_mutex *newmutex);
QS_EXPORT int ABT_mutex_create_with_attr(ABT_mutex_attr attr,
                                         ABT_mutex *newmutex);
QS_EXPORT int ABT_mutex_free(ABT_mutex *mutex);
QS_EXPORT int ABT_mutex_lock(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_lock_high(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_lock_low(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_spinlock(ABT_mutex mutex);
/* ABT_ERR_MUTEX_LOCKED if another holder has it. */
QS_EXPORT int ABT_mutex_trylock(ABT_mutex mutex);
/* Unlock (the _se and _de variants are the same); ABT_ERR_MUTEX when a
 * recursive mutex is unlocked by a ULT that does not hold it. Equality
 * compares handles. The attribute is created and freed like the mutex;
 * ABT_mutex_get_attr creates one that the caller frees. */
QS_EXPORT int ABT_mutex_unlock(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_unlock_se(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_unlock_de(ABT_mutex mutex);
QS_EXPORT int ABT_mutex_equal(ABT_mutex mutex1, ABT_mutex mutex2,
                              ABT_bool *result);
QS_EXPORT int ABT_mutex_get_attr(ABT_mutex mutex, ABT_mutex_attr *attr);
QS_EXPORT int ABT_mutex_attr_create(ABT_mutex_attr *newattr);
QS_EXPORT int ABT_mutex_attr_free(ABT_mutex_attr *attr);
/* A recursive mutex may be locked again by its holder. */
QS_EXPORT int ABT_mutex_attr_set_recursive(ABT_mutex_attr attr,
                                           ABT_bool recursive);
QS_EXPORT int ABT_mutex_attr_get_recursive(ABT_mutex_attr attr,
                                           ABT_bool *recursive);

/* ---- Condition variables ----------------------------------------------- */

/* Create a condition variable and free it (*cond becomes ABT_COND_NULL). */
QS_EXPORT int ABT_cond_create(ABT_cond *newcond);
QS_EXPORT int ABT_cond_free(ABT_cond *cond);
/* mutex must be held by the caller (and locked once). */
QS_EXPORT int ABT_cond_wait(ABT_cond cond, ABT_mutex mutex);
/* abstime is on the realtime clock (gettimeofday / CLOCK_REALTIME);
 * ABT_ERR_COND_TIMEDOUT when it passes. */
QS_EXPORT int ABT_cond_timedwait(ABT_cond cond, ABT_mutex mutex,
                                 const struct timespec *abstime);
/* Wake one waiter, or every waiter. */
QS_EXPORT int ABT_cond_signal(ABT_cond cond);
QS_EXPORT int ABT_cond_broadcast(ABT_cond cond);

/* ---- Readers-writer locks ---------------------------------------------- */

/* A readers-writer lock: create, free (*rwlock becomes ABT_RWLOCK_NULL),
 * lock for reading or writing (blocking the worker), unlock. */
QS_EXPORT int ABT_rwlock_create(ABT_rwlock *newrwlock);
QS_EXPORT int ABT_rwlock_free(ABT_rwlock *rwlock);
QS_EXPORT int ABT_rwlock_rdlock(ABT_rwlock rwlock);
QS_EXPORT int ABT_rwlock_wrlock(ABT_rwlock rwlock);
QS_EXPORT int ABT_rwlock_unlock(ABT_rwlock rwlock);

/* ---- Eventuals --------------------------------------------------------- */

/* An eventual carries nbytes (>= 0) of value, copied in by
 * ABT_eventual_set. */
QS_EXPORT int ABT_eventual_create(int nbytes, ABT_eventual *neweventual);
QS_EXPORT int ABT_eventual_free(ABT_eventual *eventual);
/* Waits until set; *value (if value is not NULL) points to the eventual's
 * copy of the value (NULL for a 0-byte eventual). */
QS_EXPORT int ABT_eventual_wait(ABT_eventual eventual, void **value);
/* As wait, until abstime on the realtime clock: ABT_ERR_COND_TIMEDOUT. */
QS_EXPORT int ABT_eventual_timedwait(ABT_eventual eventual, void **value,
                                     const struct timespec *abstime);
/* Never blocks: *is_ready, and *value when ready. */
QS_EXPORT int ABT_eventual_test(ABT_eventual eventual, void **value,
                                ABT_bool *is_ready);
/* Copies nbytes of value and wakes every waiter. ABT_ERR_INV_EVENTUAL if
 * nbytes exceeds the eventual's size, ABT_ERR_EVENTUAL if already set. */
QS_EXPORT int ABT_eventual_set(ABT_eventual eventual, void *value, int nbytes);
/* Makes the eventual not ready again. */
QS_EXPORT int ABT_eventual_reset(ABT_eventual eventual);

/* ---- Futures ----------------------------------------------------------- */

/* Ready once ABT_future_set has been called num_compartments times; then
 * cb_func (may be NULL) receives the array of the values set, in order. */
QS_EXPORT int ABT_future_create(uint32_t num_compartments,
                                void (*cb_func)(void **arg),
                                ABT_future *newfuture);
QS_EXPORT int ABT_future_free(ABT_future *future);
QS_EXPORT int ABT_future_wait(ABT_future future);
QS_EXPORT int ABT_future_test(ABT_future future, ABT_bool *is_ready);
/* ABT_ERR_FUTURE if every compartment is already set. */
QS_EXPORT int ABT_future_set(ABT_future future, void *value);
QS_EXPORT int ABT_future_reset(ABT_future future);

/* ---- Barriers ---------------------------------------------------------- */

/* num_waiters (> 0) callers of ABT_barrier_wait release each other. */
QS_EXPORT int ABT_barrier_create(uint32_t num_waiters, ABT_barrier *newbarrier);
/* Changes the number of waiters of a barrier nobody waits on. */
QS_EXPORT int ABT_barrier_reinit(ABT_barrier barrier, uint32_t num_waiters);
QS_EXPORT int ABT_barrier_free(ABT_barrier *barrier);
QS_EXPORT int ABT_barrier_wait(ABT_barrier barrier);
QS_EXPORT int ABT_barrier_get_num_waiters(ABT_barrier barrier,
                                          uint32_t *num_waiters);

/* ---- Timers ------------------------------------------------------------ */

/* Timers on ABT_get_wtime(): create, duplicate (start and stop times
 * included), free (*timer becomes ABT_TIMER_NULL), record the start or the
 * stop time. */
QS_EXPORT int ABT_timer_create(ABT_timer *newtimer);
QS_EXPORT int ABT_timer_dup(ABT_timer timer, ABT_timer *newtimer);
QS_EXPORT int ABT_timer_free(ABT_timer *timer);
QS_EXPORT int ABT_timer_start(ABT_timer timer);
QS_EXPORT int ABT_timer_stop(ABT_timer timer);
/* Seconds between the last start and the last stop. */
QS_EXPORT int ABT_timer_read(ABT_timer timer, double *secs);
/* ABT_timer_stop, then ABT_timer_read. */
QS_EXPORT int ABT_timer_stop_and_read(ABT_timer timer, double *secs);
/* Stops and adds the elapsed seconds to *secs. */
QS_EXPORT int ABT_timer_stop_and_add(ABT_timer timer, double *secs);
/* The time one ABT_get_wtime() call takes, measured once. */
QS_EXPORT int ABT_timer_get_overhead(double *overhead);

#ifdef __cplusplus
}
#endif

#endif /* ABT_H_INCLUDED */
