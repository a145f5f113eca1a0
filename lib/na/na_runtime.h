/*
 * What a thread runtime above NA (Margo's progress threads, abt.h's
 * execution streams) tells a simulated fabric: whether threads other than
 * the caller have work they will run soon, such as a user-level thread
 * waiting in a pool or running, or a progress thread handing a request to
 * a handler. A waiter lets virtual time jump to its own deadline only
 * once no such work is left (events due before the deadline, deliveries,
 * still run), or after NA_RUNTIME_GRACE_MS of real time: a thread that
 * never stops running must not freeze the clock. wait_enter and
 * wait_leave bracket each wait in the fabric, so that the runtime does
 * not count a thread waiting there as about to act.
 */
#ifndef NA_RUNTIME_H
#define NA_RUNTIME_H

#include <stdbool.h>

#define NA_RUNTIME_GRACE_MS 250

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

/* Around a wait in the fabric; no-ops when no hooks are installed. */
void na_runtime_wait_enter(void);
void na_runtime_wait_leave(void);

#endif /* NA_RUNTIME_H */
