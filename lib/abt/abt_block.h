/*
 * For the other layers of the library: a ULT that waits on something
 * abt.h does not see (a layer's own pthread condition variable) must say
 * so, or it keeps its execution stream's run token and the stream's other
 * ULTs, which may be what ends the wait, never run. Bracketing the wait
 * makes it a yield point, as Argobots' blocking calls are:
 *
 *     abt_block_begin();
 *     while (!done)
 *         pthread_cond_wait(&cond, &lock);
 *     abt_block_end();
 *
 * Both are no-ops on a thread that does not hold a stream's token (not a
 * running ULT or the primary thread), and nest. abt_block_begin may be
 * called holding your own locks. abt_block_end waits until the ULT's turn
 * comes again, which may take the current ULT of the stream to finish or
 * yield: call it holding no lock that ULT may take without a yield point
 * (drop the lock, call it, take the lock again). Never call them from
 * inside abt.h callbacks.
 */
#ifndef QS_ABT_BLOCK_H
#define QS_ABT_BLOCK_H

#include "abt.h"

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

void abt_block_begin(void);
void abt_block_end(void);

/*
 * What a layer above must do when one of its threads waits in an abt.h
 * blocking call (a join, an eventual or future wait, a contended mutex or
 * rwlock, a condition variable, a barrier, an execution stream's join).
 * `before` runs just before the thread waits, `after` once the wait is
 * over and the thread has its stream back; neither runs when the call
 * does not wait. Margo registers them: a thread that holds Margo's
 * driving role gives it up while it waits, since the ULTs it waits for
 * may need progress to finish, as in Argobots, where the wait switches
 * to the other ULTs of the stream, Margo's progress loop among them.
 * Both are called holding no abt.h internal lock (the caller's own ABT
 * mutex, in a condition wait, is held). Set once, before any thread
 * waits; NULL clears them.
 */
void abt_set_wait_hooks(void (*before)(void), void (*after)(void));

/* A pthread waiting for its stream's token (abt_token.c): a blocked ULT
 * resuming, or a user scheduler's ABT_xstream_run_unit. Lives on the
 * waiter's stack. Fields are abt.h's own. */
struct abt_waiter {
    pthread_cond_t cv;       /* signalled when granted (scheduler lock) */
    int granted;             /* (S) the token is the waiter's now       */
    ABT_xstream xs;          /* the stream whose token it waits for    */
    struct abt_waiter *next; /* (S) xs->token_q                          */
};

/*
 * A wait whose waker puts the waiting ULT back in its pool, as Argobots'
 * wake does: ULTs woken together resume in the order their waker woke
 * them, not in the order the kernel schedules their pthreads, so a run
 * of one stream is the same every time. The layer that owns the event
 * keeps a list of its waiters, in the order they came, under its own
 * lock:
 *
 *     lock(own);
 *     add s to the list;
 *     armed = abt_sleep_begin(&s);   // gives the stream up
 *     unlock(own);
 *     if (armed) abt_sleep_end(&s, NULL);   // back in pool order
 *     else ... wait as a plain pthread would ...
 *     lock(own); remove s; ...
 *
 * and the waker, holding `own`, calls abt_sleep_wake(&s) for each waiter
 * whose event came, in list order. abt_sleep_begin arms only on a thread
 * that holds its stream's token (a running ULT or the primary thread) and
 * is not inside abt_block_begin; elsewhere it returns 0 and the other
 * calls do nothing. Fields are abt.h's own.
 */
struct abt_sleep {
    struct abt_waiter w;
    ABT_thread thread;
    int armed;  /* gave the token up in abt_sleep_begin */
    int queued; /* (S) back in its pool, or waiting for the token */
};

int abt_sleep_begin(struct abt_sleep *s);
/* Any thread; a no-op unless s is armed and not yet queued. */
void abt_sleep_wake(struct abt_sleep *s);
/* Waits until s's ULT has its stream again. If abstime (CLOCK_REALTIME)
 * passes before a waker queued it, it queues itself. Returns 1 if a
 * waker queued it. Call it holding no lock the stream's ULTs may need. */
int abt_sleep_end(struct abt_sleep *s, const struct timespec *abstime);

/* Whether the calling thread holds its stream's token outside
 * abt_block_begin: a running ULT or the primary thread. */
int abt_stream_held(void);

/* For a thread holding its stream's token: whether other ULTs of the
 * stream wait to run (0 elsewhere), and a yield to them that is not a
 * cancellation point (a no-op when none waits or elsewhere). */
int abt_stream_busy(void);
void abt_stream_yield(void);

/* Whether a stream other than the caller's has work that will run soon:
 * ULTs waiting in its pools or for its token, or a ULT running on it and
 * not waiting (na_runtime.h's probe, which Margo installs). A thread that
 * holds its stream's token while it waits outside abt.h (in the fabric,
 * on one of Margo's conditions) brackets the wait with abt_idle_enter /
 * abt_idle_leave (no-ops on other threads). */
bool abt_busy_elsewhere(void);
void abt_idle_enter(void);
void abt_idle_leave(void);

#endif
