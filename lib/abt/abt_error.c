/*
 * Error messages: one table, indexed by Argobots' error codes. The
 * static assertions tie each entry to the value abt.h gives its name,
 * so the table cannot drift from the header.
 */
#include "abt/abt_internal.h"

#include <string.h>

#define ABT_ERRORS(X)                                                          \
    X(ABT_SUCCESS, 0, "success")                                               \
    X(ABT_ERR_UNINITIALIZED, 1, "Argobots is not initialized")                 \
    X(ABT_ERR_MEM, 2, "out of memory")                                         \
    X(ABT_ERR_OTHER, 3, "other error")                                         \
    X(ABT_ERR_INV_XSTREAM, 4, "invalid execution stream")                      \
    X(ABT_ERR_INV_XSTREAM_RANK, 5, "invalid execution stream rank")            \
    X(ABT_ERR_INV_XSTREAM_BARRIER, 6, "invalid execution stream barrier")      \
    X(ABT_ERR_INV_SCHED, 7, "invalid scheduler")                               \
    X(ABT_ERR_INV_SCHED_KIND, 8, "invalid scheduler kind")                     \
    X(ABT_ERR_INV_SCHED_PREDEF, 9, "invalid predefined scheduler")             \
    X(ABT_ERR_INV_SCHED_TYPE, 10, "invalid scheduler type")                    \
    X(ABT_ERR_INV_SCHED_CONFIG, 11, "invalid scheduler configuration")         \
    X(ABT_ERR_INV_POOL, 12, "invalid pool")                                    \
    X(ABT_ERR_INV_POOL_KIND, 13, "invalid pool kind")                          \
    X(ABT_ERR_INV_POOL_ACCESS, 14, "invalid pool access")                      \
    X(ABT_ERR_INV_UNIT, 15, "invalid work unit for scheduling")                \
    X(ABT_ERR_INV_THREAD, 16, "invalid work unit")                             \
    X(ABT_ERR_INV_THREAD_ATTR, 17, "invalid ULT attribute")                    \
    X(ABT_ERR_INV_TASK, 18, "invalid tasklet")                                 \
    X(ABT_ERR_INV_KEY, 19, "invalid key")                                      \
    X(ABT_ERR_INV_MUTEX, 20, "invalid mutex")                                  \
    X(ABT_ERR_INV_MUTEX_ATTR, 21, "invalid mutex attribute")                   \
    X(ABT_ERR_INV_COND, 22, "invalid condition variable")                      \
    X(ABT_ERR_INV_RWLOCK, 23, "invalid readers-writer lock")                   \
    X(ABT_ERR_INV_EVENTUAL, 24, "invalid eventual")                            \
    X(ABT_ERR_INV_FUTURE, 25, "invalid future")                                \
    X(ABT_ERR_INV_BARRIER, 26, "invalid barrier")                              \
    X(ABT_ERR_INV_TIMER, 27, "invalid timer")                                  \
    X(ABT_ERR_INV_QUERY_KIND, 28, "invalid query kind")                        \
    X(ABT_ERR_XSTREAM, 29, "execution stream error")                           \
    X(ABT_ERR_XSTREAM_STATE, 30, "execution stream state error")               \
    X(ABT_ERR_XSTREAM_BARRIER, 31, "execution stream barrier error")           \
    X(ABT_ERR_SCHED, 32, "scheduler error")                                    \
    X(ABT_ERR_SCHED_CONFIG, 33, "scheduler configuration error")               \
    X(ABT_ERR_POOL, 34, "pool error")                                          \
    X(ABT_ERR_UNIT, 35, "work unit error")                                     \
    X(ABT_ERR_THREAD, 36, "ULT error")                                         \
    X(ABT_ERR_TASK, 37, "tasklet error")                                       \
    X(ABT_ERR_KEY, 38, "key error")                                            \
    X(ABT_ERR_MUTEX, 39, "mutex error")                                        \
    X(ABT_ERR_MUTEX_LOCKED, 40, "mutex is locked")                             \
    X(ABT_ERR_COND, 41, "condition variable error")                            \
    X(ABT_ERR_COND_TIMEDOUT, 42, "timed out")                                  \
    X(ABT_ERR_RWLOCK, 43, "readers-writer lock error")                         \
    X(ABT_ERR_EVENTUAL, 44, "eventual error")                                  \
    X(ABT_ERR_FUTURE, 45, "future error")                                      \
    X(ABT_ERR_BARRIER, 46, "barrier error")                                    \
    X(ABT_ERR_TIMER, 47, "timer error")                                        \
    X(ABT_ERR_MIGRATION_TARGET, 48, "invalid migration target")                \
    X(ABT_ERR_MIGRATION_NA, 49, "migration is not supported")                  \
    X(ABT_ERR_MISSING_JOIN, 50, "missing join")                                \
    X(ABT_ERR_FEATURE_NA, 51, "feature not supported")                         \
    X(ABT_ERR_INV_TOOL_CONTEXT, 52, "invalid tool context")                    \
    X(ABT_ERR_INV_ARG, 53, "invalid argument")                                 \
    X(ABT_ERR_SYS, 54, "system call failed")                                   \
    X(ABT_ERR_CPUID, 55, "CPU id error")                                       \
    X(ABT_ERR_INV_POOL_CONFIG, 56, "invalid pool configuration")               \
    X(ABT_ERR_INV_POOL_USER_DEF, 57, "invalid pool definition")

#define ABT_ERROR_CHECK(name, value, msg)                                      \
    _Static_assert(name == value, #name " matches abt.h");
ABT_ERRORS(ABT_ERROR_CHECK)

#define ABT_ERROR_MSG(name, value, msg) [value] = #name ": " msg,
static const char *const abt_errors[] = {ABT_ERRORS(ABT_ERROR_MSG)};

int
ABT_error_get_str(int err, char *str, size_t *len)
{
    if (err < 0 || (size_t) err >= sizeof(abt_errors) / sizeof(abt_errors[0]) ||
        !abt_errors[err])
        return ABT_ERR_OTHER;
    const char *s = abt_errors[err];
    if (str)
        strcpy(str, s);
    if (len)
        *len = strlen(s);
    return ABT_SUCCESS;
}
