/*
 * The thread runtime's hooks for a simulated fabric (na_runtime.h): set
 * once by the layer above (Margo), read by the simulator around and in
 * its waits.
 */
#include "na/na_runtime.h"
#include "na/na_plugin.h"

#include <stdatomic.h>
#include <stddef.h>

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
    const uint64_t limit = (uint64_t) NA_RUNTIME_GRACE_MS * 1000000u;
    const uint64_t gap_max = (uint64_t) NA_RUNTIME_GAP_MS * 1000000u;
    uint64_t now = na_plugin_clock_monotonic_ns();

    if (grace->last != 0) {
        uint64_t gap = now - grace->last;
        bool had_left = grace->spent < limit;

        grace->spent += gap < gap_max ? gap : gap_max;
        if (had_left && grace->spent >= limit)
            atomic_fetch_add(&na_runtime_expiries, 1);
    }
    grace->last = now;
    return grace->spent < limit;
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
