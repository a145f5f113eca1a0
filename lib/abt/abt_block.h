/*
 * For the other layers of the library: a ULT that waits on something
 * abt.h does not see (a layer's own pthread condition variable) must say
 * so, or its execution stream cannot start a spare worker and the work
 * that would end the wait may never run. Bracket the wait:
 *
 *     abt_block_begin();
 *     while (!done)
 *         pthread_cond_wait(&cond, &lock);
 *     abt_block_end();
 *
 * Both are no-ops on a thread that is not an execution stream's worker or
 * the primary thread. They take the scheduler lock briefly: call them
 * holding your own locks if you like, never from inside abt.h callbacks.
 */
#ifndef QS_ABT_BLOCK_H
#define QS_ABT_BLOCK_H

void abt_block_begin(void);
void abt_block_end(void);

#endif
