/*
 * Argobots' names on pthreads: the objects behind the handles and the
 * scheduler state they share.
 *
 * Argobots' execution model on pthreads: each execution stream has one
 * run token (xs->token), and only the pthread holding it runs the
 * stream's ULT code, so the ULTs of a stream run one at a time. A worker
 * takes the token to pop the next ULT of the stream's pools (in the
 * pools' order) and keeps it until the ULT ends or reaches a yield point
 * (abt_token.c): ABT_thread_yield and every blocking abt.h call hand the
 * token on. A ULT whose wait is over is pushed back to its pool's tail as
 * a resume marker (t->waiter) and gets the token back when a worker of
 * its stream pops it, as Argobots re-adds a woken ULT to its pool; its
 * own pthread, which kept its stack, then continues. Spare workers hold
 * no ULT of their own: they start when the token is free, work waits and
 * every worker of the stream is blocked.
 *
 * One process-wide scheduler lock (abt_g.lock) guards every field marked
 * (S): the pool queues and counters, the execution-stream worker counts,
 * the scheduler's pool lists and the list of execution streams. It is held
 * briefly and never while user code runs. Blocking objects (eventuals,
 * futures, thread termination) sleep in a "parking lot" of mutex and
 * condition pairs hashed by the object's address; mutexes, condition
 * variables, rwlocks and barriers carry their own pthread objects. Lock
 * order: a parking-lot bucket or a user-visible lock first, then the
 * scheduler lock, never the other way round.
 */
#ifndef QS_ABT_INTERNAL_H
#define QS_ABT_INTERNAL_H

#include "abt.h"
#include "abt/abt_block.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>

struct abt_worker;

struct ABT_pool_opaque {
    ABT_thread head, tail; /* (S) FIFO of waiting ULTs, linked by next */
    size_t queued;         /* (S) ULTs waiting                          */
    size_t active;         /* (S) ULTs popped and not yet ended         */
    int sched_refs;        /* (S) schedulers listing this pool          */
    ABT_pool_kind kind;
    ABT_pool_access access;
    ABT_bool automatic; /* freed with the last scheduler using it */
    int id;
    void *data; /* (S) ABT_pool_set_data */
    /* User-defined pools (abt_user.c): the program's callbacks, called
     * one at a time under ulock (never with the scheduler lock held).
     * queued counts the units pushed through abt.h and not yet popped. */
    int user;
    ABT_pool_def def;
    pthread_mutex_t ulock;
};

struct ABT_sched_opaque {
    ABT_sched_predef predef;
    int num_pools;     /* (S) */
    ABT_pool *pools;   /* (S) in priority order */
    ABT_xstream owner; /* (S) the stream running it, or NULL */
    /* User-defined schedulers (abt_user.c). */
    int user;
    ABT_sched_def def;
    void *data;     /* (S) ABT_sched_set_data */
    int finish_req; /* (S) ABT_sched_finish */
    int exit_req;   /* (S) ABT_sched_exit */
};

struct ABT_xstream_opaque {
    int rank;
    int primary;
    ABT_sched sched; /* (S) */
    int join_req;    /* (S) drain, then let workers exit */
    int terminated;  /* (S) joined: no worker left */
    int workers;     /* (S) live workers (the primary thread counts) */
    int blocked;     /* (S) workers blocked in a sync call or
                        waiting for the token back */
    int idle;        /* (S) workers sleeping on wake */
    int token;       /* (S) a pthread runs the stream's ULTs */
    int idle_waits;  /* atomic: the token holder waits (abt_idle_enter) */
    struct abt_waiter *token_q; /* (S) FIFO of direct token waiters */
    ABT_thread ready;           /* (S) resume markers of this stream that
                                   another stream popped (FIFO by next) */
    int spares_started;         /* (S) statistic: spare workers ever started */
    pthread_cond_t wake;        /* idle workers sleep here (scheduler lock) */
    pthread_cond_t done;        /* broadcast when a worker exits */
    struct abt_worker *base;    /* the stream's own worker (NULL: primary) */
    struct abt_worker *dead;    /* (S) exited spares not yet joined */
    ABT_xstream next;           /* (S) list of all streams */
    pthread_t tid;  /* the base worker (primary: the primary thread) */
    int bound;      /* (S) cpuids holds a binding */
    int num_cpuids; /* (S) */
    int *cpuids;    /* (S) as the user gave them */
};

struct abt_worker {
    pthread_t tid;
    ABT_xstream xs;
    int spare;
    struct abt_worker *next; /* (S) dead list */
};

struct abt_key_val {
    int key; /* the key's id */
    void *value;
};

struct ABT_thread_opaque {
    ABT_thread next; /* (S) pool queue link */
    void (*func)(void *);
    void *arg;
    ABT_pool pool;  /* (S) pool it was pushed to */
    ABT_xstream xs; /* atomic: last stream that ran it */
    ABT_unit_id id;
    struct abt_waiter *waiter; /* (S) queued as a resume marker */
    int state; /* atomic ABT_thread_state; TERMINATED set under its park */
    int named; /* the user holds the handle and frees it */
    int primary;
    int in_run;    /* running under abt_run: ABT_thread_exit may leave */
    int is_task;   /* created as a tasklet (ABT_task_create)       */
    int suspended; /* park: in ABT_self_suspend until resumed      */
    int cancel;    /* atomic: ABT_thread_cancel asked, honoured at yield */
    size_t stacksize;
    jmp_buf exit_env;
    struct abt_key_val *keys; /* abt_g.key_lock */
    int nkeys;
};

struct ABT_thread_attr_opaque {
    size_t stacksize;
    void *stackaddr;
};

struct ABT_key_opaque {
    int id; /* index in the key registry (abt_self.c) */
};

/* What the calling pthread is: a worker of xs running thread, the primary
 * thread (xs = primary stream, thread = primary ULT), or nothing. */
struct abt_self {
    ABT_xstream xs;
    ABT_thread thread;
    struct abt_worker *worker;
    int token;       /* this pthread holds xs's token */
    int block_depth; /* nesting of abt_block_begin */
    int released;    /* the outermost abt_block_begin gave the token up */
};
extern _Thread_local struct abt_self abt_self;

struct abt_global {
    pthread_mutex_t lock; /* the scheduler lock */
    pthread_mutex_t key_lock;
    int init_count;          /* (S) */
    ABT_xstream primary;     /* (S) */
    ABT_xstream xstreams;    /* (S) */
    int num_xstreams;        /* (S) not yet joined */
    uint64_t next_thread_id; /* atomic */
    int next_pool_id;        /* atomic */
    size_t stacksize;        /* default ULT stack size reported */
};
extern struct abt_global abt_g;

/* Parking lot. Each bucket lists the ULTs parked there in the order they
 * came, so that a wake puts them back in their pools in that order. */
struct abt_park_entry {
    int (*done)(void *);
    void *ctx;
    struct abt_sleep s;
    struct abt_park_entry *next; /* pk->m */
};
struct abt_park {
    pthread_mutex_t m;
    pthread_cond_t cv;
    struct abt_park_entry *head; /* pk->m */
    uint64_t releases; /* pk->m: locks hashed here released with waiters */
};
struct abt_park *abt_park_of(const void *addr);
/* With pk->m held: returns 0 once done(ctx) holds, ETIMEDOUT if abstime
 * (realtime clock, may be NULL) passes first; counts as blocking. */
int abt_park_wait(struct abt_park *pk, int (*done)(void *), void *ctx,
                  const struct timespec *abstime);
/* The two halves of abt_park_wait, for a waiter that must be listed
 * before it lets go of something (a condition variable's mutex): with
 * pk->m held, list e (done and ctx set), then wait until e->done(e->ctx)
 * holds or abstime passes. */
void abt_park_enlist(struct abt_park *pk, struct abt_park_entry *e);
int abt_park_wait_entry(struct abt_park *pk, struct abt_park_entry *e,
                        const struct timespec *abstime);
/* With pk->m held, after making some waiter's done() true: requeues the
 * parked ULTs whose wait is over, in the order they parked, and wakes
 * every pthread parked on pk. */
void abt_park_wake(struct abt_park *pk);
/* A contended lock (abt_sync.c). The locker, holding pk->m: counts itself
 * in the lock's waiters, tries the lock, and if it is still taken calls
 * abt_park_lock_wait, which returns (pk->m held) once a lock hashed to pk
 * was released since. The unlocker, after releasing, calls
 * abt_park_lock_released(pk) (pk->m not held) if the lock has waiters:
 * they are requeued in the order they parked and try again. */
void abt_park_lock_wait(struct abt_park *pk);
void abt_park_lock_released(struct abt_park *pk);

/* The hooks of abt_set_wait_hooks, run around each blocking call's wait
 * (abt_token.c); no-ops when none is set. */
void abt_wait_hook_before(void);
void abt_wait_hook_after(void);

/* abt_block_begin / abt_block_end (abt_block.h, abt_token.c): on the
 * pthread holding its stream's token they hand the token on and get it
 * back in pool order; elsewhere they do nothing. */

/* Scheduler-lock helpers. */
int abt_initialized(void);
void abt_pool_push_locked(ABT_pool pool, ABT_thread t);
/* A built-in pool's queue: take the first ULT (NULL if none), or take t
 * out of it (1 if it was queued there); both count it out of `queued`. */
ABT_thread abt_pool_shift_locked(ABT_pool pool);
int abt_pool_unlink_locked(ABT_pool pool, ABT_thread t);
int abt_xs_has_work_locked(ABT_xstream xs);
/* If xs's token is free while its pools hold work and no worker of xs is
 * awake to see it: wake an idle worker, else start a spare. */
void abt_xs_kick_locked(ABT_xstream xs);
int abt_xs_start_spare_locked(ABT_xstream xs);

/* abt_token.c. The caller holds xs's token and gives it up: to the first
 * direct waiter, else it is freed and xs kicked. */
void abt_token_release_locked(ABT_xstream xs);
/* Waits for xs's token as a direct waiter (lock held). */
void abt_token_acquire_locked(ABT_xstream xs);
/* t was popped by a pthread holding xs's token. 0: an ordinary ULT, run
 * it. 1: t was a resume marker; the token went to its pthread (or, if it
 * belongs to another stream, t was handed there and xs's token released). */
int abt_token_dispatch_locked(ABT_xstream xs, ABT_thread t);
/* ABT_thread_yield for a token holder: back to the pool's tail. */
void abt_token_yield(void);
void abt_xs_reap_locked(ABT_xstream xs, struct abt_worker **out);
void abt_reap_join(struct abt_worker *list);
int abt_sched_uses_pool_locked(ABT_sched s, ABT_pool pool);
void abt_sched_release_locked(ABT_sched s, ABT_pool *to_free, int *nfree);
int abt_xs_start(ABT_xstream xs);
/* wake runs on CLOCK_MONOTONIC (spares linger with a timed wait). */
void abt_xs_init_conds(ABT_xstream xs);
int abt_sched_destroy(ABT_sched s, int owned);

/* abt_user.c. Queues t on pool, built-in or user-defined (lock not
 * held); ABT_ERR_MEM if a user pool made no unit for it. */
int abt_pool_add_thread(ABT_pool pool, ABT_thread t);
/* Wakes a worker for newly queued work of pool (lock held). */
void abt_pool_wake_locked(ABT_pool pool);
/* Pops a ULT from a user pool for a worker (lock not held): NULL when the
 * pool gave nothing. The ULT is counted active. */
ABT_thread abt_user_pool_take(ABT_pool pool);
/* A user pool's p_free and a user scheduler's free (lock not held). */
int abt_user_pool_fini(ABT_pool pool);
void abt_user_sched_fini(ABT_sched sched);

/* Creates a ULT (a tasklet if is_task) and pushes it to pool. */
int abt_thread_push(ABT_pool pool, void (*func)(void *), void *arg,
                    ABT_thread_attr attr, ABT_thread *newthread, int is_task);
/* Binds the calling worker to xs's CPUs if xs has a binding. */
void abt_xs_bind_self(ABT_xstream xs);
/* Marks t terminated and wakes its joiners (t must be named). */
void abt_thread_mark_ended(ABT_thread t);

/* Runs a popped ULT on the calling worker and ends it. */
void abt_run(ABT_thread t);
/* Frees a ULT's key values (calling destructors) and the ULT. */
void abt_thread_destroy(ABT_thread t);
ABT_thread abt_thread_new(void (*func)(void *), void *arg,
                          ABT_thread_attr attr);

#endif
