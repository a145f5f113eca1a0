/*
 * What the layers above NA may tell it about an operation's completion
 * ahead of time. Internal: not part of the public NA API.
 */
#ifndef NA_HINT_H
#define NA_HINT_H

#include "na_types.h"

/* Two objects the op's callback reads first besides its argument (HG: the
 * handle's procs), kept in the op until set again. They are addresses
 * only, never followed: the core's NA_Trigger() and the simulated fabric
 * prefetch them with the argument, in a large world where each completion
 * finds its objects cold. NULL leaves a slot empty. */
void na_op_set_hints(na_op_id_t *op_id, const void *a, const void *b);

#endif /* NA_HINT_H */
