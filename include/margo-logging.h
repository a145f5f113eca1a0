/*
 * Margo logging. Messages of an instance go to its logger (by default the
 * library's log sink, as "quicksilver: margo: <level>: <text>" on stderr)
 * when their level is at or above the instance's level; calls with
 * MARGO_INSTANCE_NULL use the global logger and level. The global level
 * starts at MARGO_LOG_LEVEL from the environment ("trace", "debug",
 * "info", "warning", "error", "critical"), else "warning"; new instances
 * start with the global level and logger.
 */
#ifndef MARGO_LOGGING_H
#define MARGO_LOGGING_H

#include "qs_export.h"

#ifdef __cplusplus
extern "C" {
#endif

struct margo_instance;
typedef struct margo_instance *margo_instance_id;

/* A log function: uargs from the logger, the formatted message (no
 * trailing newline). */
typedef void (*margo_log_fn_t)(void *uargs, const char *message);

typedef enum margo_log_level {
    MARGO_LOG_EXTERNAL, /* lowest: everything passes */
    MARGO_LOG_TRACE,
    MARGO_LOG_DEBUG,
    MARGO_LOG_INFO,
    MARGO_LOG_WARNING,
    MARGO_LOG_ERROR,
    MARGO_LOG_CRITICAL
} margo_log_level;

/* One function per level; a NULL function drops that level. */
struct margo_logger {
    void *uargs;
    margo_log_fn_t trace;
    margo_log_fn_t debug;
    margo_log_fn_t info;
    margo_log_fn_t warning;
    margo_log_fn_t error;
    margo_log_fn_t critical;
};

/* Install a logger (copied; NULL restores the default). Returns 0, or -1
 * for an invalid instance. */
QS_EXPORT int margo_set_logger(margo_instance_id mid,
                               const struct margo_logger *logger);
QS_EXPORT int margo_set_global_logger(const struct margo_logger *logger);
/* Returns 0, or -1 for an unknown level. MARGO_INSTANCE_NULL sets the
 * global level. */
QS_EXPORT int margo_set_log_level(margo_instance_id mid, margo_log_level level);
QS_EXPORT int margo_set_global_log_level(margo_log_level level);

#if defined(__GNUC__)
#define MARGO_PRINTF_LIKE __attribute__((format(printf, 2, 3)))
#else
#define MARGO_PRINTF_LIKE
#endif
/* Log a printf-style message at the level the name gives, through the
 * instance's logger (the global one for MARGO_INSTANCE_NULL), when that
 * level is at or above the instance's. */
QS_EXPORT void margo_trace(margo_instance_id mid, const char *fmt,
                           ...) MARGO_PRINTF_LIKE;
QS_EXPORT void margo_debug(margo_instance_id mid, const char *fmt,
                           ...) MARGO_PRINTF_LIKE;
QS_EXPORT void margo_info(margo_instance_id mid, const char *fmt,
                          ...) MARGO_PRINTF_LIKE;
QS_EXPORT void margo_warning(margo_instance_id mid, const char *fmt,
                             ...) MARGO_PRINTF_LIKE;
QS_EXPORT void margo_error(margo_instance_id mid, const char *fmt,
                           ...) MARGO_PRINTF_LIKE;
QS_EXPORT void margo_critical(margo_instance_id mid, const char *fmt,
                              ...) MARGO_PRINTF_LIKE;

#ifdef __cplusplus
}
#endif

#endif /* MARGO_LOGGING_H */
