/*
 * Margo timers: a callback that runs once, timeout_ms after
 * margo_timer_start(), on the fabric's clock (virtual time on the
 * simulated fabric, so a 10 s timer there takes no real time).
 *
 * The callback runs where the instance's handlers run (see margo.h), or on
 * the given pool's execution streams for margo_timer_create_with_pool().
 * Expired timers are noticed by whoever makes progress on the instance;
 * progress waits are cut short to the next deadline.
 *
 * Every function returns 0 on success and -1 on error (an invalid timer
 * or argument, or memory).
 */
#ifndef MARGO_TIMER_H
#define MARGO_TIMER_H

#include "qs_export.h"
#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*margo_timer_callback_fn)(void *);
typedef struct margo_timer *margo_timer_t;
#define MARGO_TIMER_NULL ((margo_timer_t) NULL)

/* Create a timer (not started) whose callback is cb_fn(cb_dat). */
QS_EXPORT int margo_timer_create(margo_instance_id mid,
                                 margo_timer_callback_fn cb_fn, void *cb_dat,
                                 margo_timer_t *timer);
/* The same; the callback runs on `pool` (ABT_POOL_NULL: the handler
 * pool). */
QS_EXPORT int margo_timer_create_with_pool(margo_instance_id mid,
                                           margo_timer_callback_fn cb_fn,
                                           void *cb_dat, ABT_pool pool,
                                           margo_timer_t *timer);
/* Arm the timer to fire timeout_ms from now. -1 if it is already armed. */
QS_EXPORT int margo_timer_start(margo_timer_t timer, double timeout_ms);
/* Disarm the timer. A callback already queued is dropped; one already
 * running completes before this returns (unless this is called from the
 * callback itself). The timer may be started again. */
QS_EXPORT int margo_timer_cancel(margo_timer_t timer);
QS_EXPORT int margo_timer_cancel_many(size_t n, margo_timer_t *timers);
/* Cancel and free the timer. From inside its own callback, the timer is
 * freed when the callback returns. */
QS_EXPORT int margo_timer_destroy(margo_timer_t timer);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_TIMER_H */
