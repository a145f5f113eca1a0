/* The per-thread lock counter of qs_lock.h. */
#include "util/qs_lock.h"

#include <stdio.h>
#include <stdlib.h>

_Thread_local uint64_t qs_lock_count_tls QS_LOCK_TLS_MODEL;

uint64_t
qs_lock_count(void)
{
    return qs_lock_count_tls;
}

void
qs_hot_lock_broken(void)
{
    fprintf(stderr, "quicksilver: a thread was created while a lock of the "
                    "RPC path was held without threads (lib/util/qs_lock.h); "
                    "stopping\n");
    abort();
}
