/*
 * What the layers above NA may ask about a class's clock (NA_Clock_now's
 * source) beyond its value. Internal: not part of the public NA API.
 */
#ifndef NA_CLOCK_H
#define NA_CLOCK_H

#include "na_types.h"

#include <stdbool.h>

/* Whether the class's clock may run ahead of what its peers do in the
 * same span: true on the simulated fabric unless the world was declared
 * driven by one thread (na_sim_set_single_driver(); docs/sim.md): its
 * virtual clock jumps while other threads work in real time. HG then
 * trusts only the fabric's verdicts on a peer's liveness, not the absence
 * of an answer within an interval. */
bool na_clock_is_approximate(na_class_t *na_class);

/* Whether the class's clock is the system's monotonic clock (its plugin
 * has no clock of its own): time then passes whether or not anyone polls,
 * so a message can be waiting unread when a deadline comes. On a virtual
 * clock (the simulated fabric) an arrival is an event, run in its place in
 * time before any later deadline. */
bool na_clock_is_real(na_class_t *na_class);

#endif /* NA_CLOCK_H */
