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

#endif
