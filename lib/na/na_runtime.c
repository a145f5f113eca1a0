/*
 * The thread runtime's hooks for a simulated fabric (na_runtime.h): set
 * once by the layer above (Margo), read by the simulator around and in
 * its waits.
 */
#include "na/na_runtime.h"

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

static _Atomic(const struct na_runtime_hooks *) na_runtime_hooks_set;

void
na_runtime_set_hooks(const struct na_runtime_hooks *hooks)
{
    atomic_store(&na_runtime_hooks_set, hooks);
}

bool
na_runtime_busy(void)
{
    const struct na_runtime_hooks *h = atomic_load(&na_runtime_hooks_set);

    return h != NULL && h->busy != NULL && h->busy();
}

static atomic_uint_fast64_t na_runtime_expiries;

bool
na_runtime_grace_left(struct na_runtime_grace *grace)
{
    struct timespec ts;
    uint64_t now;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    if (grace->last != 0) {
        uint64_t gap = now - grace->last;

        if (gap > (uint64_t) NA_RUNTIME_GAP_MS * 1000000u)
            gap = (uint64_t) NA_RUNTIME_GAP_MS * 1000000u;
        if (grace->spent < (uint64_t) NA_RUNTIME_GRACE_MS * 1000000u &&
            grace->spent + gap >= (uint64_t) NA_RUNTIME_GRACE_MS * 1000000u)
            atomic_fetch_add(&na_runtime_expiries, 1);
        grace->spent += gap;
    }
    grace->last = now;
    return grace->spent < (uint64_t) NA_RUNTIME_GRACE_MS * 1000000u;
}

uint64_t
na_runtime_grace_expiries(void)
{
    return atomic_load(&na_runtime_expiries);
}

void
na_runtime_wait_enter(void)
{
    const struct na_runtime_hooks *h = atomic_load(&na_runtime_hooks_set);

    if (h != NULL && h->wait_enter != NULL)
        h->wait_enter();
}

void
na_runtime_wait_leave(void)
{
    const struct na_runtime_hooks *h = atomic_load(&na_runtime_hooks_set);

    if (h != NULL && h->wait_leave != NULL)
        h->wait_leave();
}
