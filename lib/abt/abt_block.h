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

#endif
