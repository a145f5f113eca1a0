/*
 * The thread runtime's hooks for a simulated fabric (na_runtime.h): set
 * once by the layer above (Margo), read by the simulator around and in
 * its waits.
 */
#include "na/na_runtime.h"

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
