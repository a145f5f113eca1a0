/*
 * Margo's utility calls: Argobots environment settings made before
 * Argobots starts, and progress counters.
 */
#ifndef MARGO_UTIL_H
#define MARGO_UTIL_H

#include "qs_export.h"
#include "margo.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Set ABT_MEM_MAX_NUM_STACKS (resp. ABT_THREAD_STACKSIZE) in the
 * environment for abt.h to read at ABT_init(). Returns 0, or -1 when
 * Argobots is already initialized (the setting would be too late).
 * abt.h reads ABT_THREAD_STACKSIZE as the default ULT stack size that
 * ABT_thread_get_stacksize() reports; it keeps no stack cache, so the
 * stack count is recorded in the environment only.
 */
QS_EXPORT int margo_set_abt_mem_max_num_stacks(unsigned max_num_stacks);
QS_EXPORT int margo_set_abt_thread_stacksize(unsigned stacksize);

/* How many times the instance has called HG_Progress() (resp.
 * HG_Trigger()) since it was created; 0 for MARGO_INSTANCE_NULL. */
QS_EXPORT uint64_t margo_get_num_progress_calls(margo_instance_id mid);
QS_EXPORT uint64_t margo_get_num_trigger_calls(margo_instance_id mid);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_UTIL_H */
