/* The per-thread lock counter of qs_lock.h. */
#include "util/qs_lock.h"

_Thread_local uint64_t qs_lock_count_tls QS_LOCK_TLS_MODEL;

uint64_t
qs_lock_count(void)
{
    return qs_lock_count_tls;
}
