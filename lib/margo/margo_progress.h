/*
 * What margo_progress.c (driving, handlers, blocking waits) shares with
 * margo_threads.c (sleeps and progress threads). Private to lib/margo.
 */
#ifndef MARGO_PROGRESS_H
#define MARGO_PROGRESS_H

#include "margo_internal.h"

#include <stdatomic.h>

/*
 * What the calling thread is doing, for the decisions that depend on it:
 * whether it already holds the driving role (a handler it runs made a
 * nested blocking call), which handlers it is inside, and whether it is
 * one of an instance's own threads.
 */
struct margo_tls {
    int drive_depth;
    /* drive_depth while the role is lent out for an abt.h wait. */
    int lent_depth;
    int handler_depth;
    const struct margo_instance *handler_of[MARGO_MAX_HANDLER_DEPTH];
    const struct margo_instance *own_instance;
    bool is_progress_thread;
    /* A progress thread counted in margo_pt_outside, and whether it was
     * when its current wait in the fabric began. */
    bool pt_counted, pt_counted_before_wait;
    /* The instance whose progress thread this is, and the same while its
     * progress is lent out. */
    struct margo_instance *progress_of, *lent_progress;
    /* margo_thread_sleep()'s deadline on the NA clock, 0 when not
     * sleeping: progress waits are cut short to it. */
    uint64_t deadline_ns;
};
extern _Thread_local struct margo_tls margo_tls;

/* Threads waiting for the driving role or for an operation on a driven
 * instance sleep here (margo_lock). */
extern pthread_cond_t margo_driver_cond;
/* Progress threads at work in their loop (margo_runtime_busy). */
extern atomic_int margo_pt_outside;

/* Count the calling progress thread in margo_pt_outside, or not. */
void margo_pt_count(bool on);
/* Margo waits that count as idle for the simulated clock. */
void margo_idle_enter(void);
void margo_idle_leave(void);
/* Run mid's first queued handler here, or hand it to a ULT of its pool
 * when this thread may not nest it (margo_lock held); false if none. */
bool margo_run_one_handler(struct margo_instance *mid);
/* How long an idle loop of mid blocks in HG_Progress(). */
unsigned int margo_idle_ms(struct margo_instance *mid);
/* The earliest deadline of mid's sleepers that may wake before this
 * thread returns (margo_threads.c; lock held). 0 if none. */
uint64_t margo_sleepers_next(const struct margo_instance *mid);

#endif /* MARGO_PROGRESS_H */
