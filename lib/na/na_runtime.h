/*
 * What a thread runtime above NA (Margo's progress threads, abt.h's
 * execution streams) tells a simulated fabric: whether threads other than
 * the caller have work they will run soon, such as a user-level thread
 * waiting in a pool or running, or a progress thread handing a request to
 * a handler. A waiter lets virtual time jump to its own deadline only
 * once no such work is left (events due before the deadline, deliveries,
 * still run), or once its grace runs out (na_runtime_grace_left): a
 * thread that never stops running must not freeze the clock. wait_enter and
 * wait_leave bracket each wait in the fabric, so that the runtime does
 * not count a thread waiting there as about to act. The fabric calls them
 * with its lock held, once it knows the thread polls it and before it
 * unlists it, so that no waiter sees the thread idle and unknown; like
 * busy, they must not block or call into the fabric.
 */
#ifndef NA_RUNTIME_H
#define NA_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

/* The grace is real time as the waiter sees it between two of its looks,
 * each look counting at most NA_RUNTIME_GAP_MS (a waiter looks about
 * once a millisecond): a pause of the whole process (a loaded machine
 * leaving it unscheduled, a sanitizer's pause, SIGSTOP) uses up no more
 * than one gap, while a thread that spins, or blocks outside any wait the
 * runtime knows of, uses it up at the speed of real time. */
#define NA_RUNTIME_GRACE_MS 250
#define NA_RUNTIME_GAP_MS 10

/* One wait's grace; zero-initialize before the wait. */
struct na_runtime_grace {
    uint64_t last;  /* CLOCK_MONOTONIC at the last look; 0: none yet */
    uint64_t spent; /* grace used so far, ns */
};

struct na_runtime_hooks {
    bool (*busy)(void);
    void (*wait_enter)(void);
    void (*wait_leave)(void);
};

/* Install the hooks (NULL: none); they must stay valid. Margo installs
 * its own at margo_init(). */
void na_runtime_set_hooks(const struct na_runtime_hooks *hooks);

/* The busy hook's answer; false when none is installed. */
bool na_runtime_busy(void);

/* Called each time a wait sees work about to run elsewhere: true while
 * the wait may still hold the clock for it (the first call starts the
 * grace). Counts each grace that runs out (na_runtime_grace_expiries). */
bool na_runtime_grace_left(struct na_runtime_grace *grace);

/* How many graces have run out in this process. */
uint64_t na_runtime_grace_expiries(void);

/* Around a wait in the fabric; no-ops when no hooks are installed. */
void na_runtime_wait_enter(void);
void na_runtime_wait_leave(void);

#endif /* NA_RUNTIME_H */
