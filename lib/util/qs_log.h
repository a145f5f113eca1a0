/*
 * The library's single log sink. Every layer (HG, bulk, proc, NA, the
 * plugins, Margo) writes its messages through these functions, so one set
 * of thresholds and one output decide what a program sees.
 *
 * Subsystems are names: "hg_all" is the root, "hg" (with "bulk" and "proc"
 * under it), "na" (with the plugins "sim", "ofi", "verbs", "sm" under it)
 * and "margo" are children of the root. Any other name is registered on
 * first use as a child of "hg_all" (at most QS_LOG_SUBSYS_MAX names; more
 * are logged as "hg_all"). Names are at most QS_LOG_SUBSYS_NAME_MAX bytes;
 * longer ones are truncated.
 *
 * Thresholds follow Mercury 2.4's rules. There is one global level (from
 * HG_LOG_LEVEL, HG_Set_log_level(), NA_Set_log_level()) and a list of
 * active subsystems (from HG_LOG_SUBSYS, HG_Set_log_subsys(), as
 * "name1,name2,~name3"). A subsystem's threshold is, in order:
 *   - the level given to qs_log_set_threshold() for it, if any;
 *   - the global level if its name is in the list;
 *   - none if "~name" is in the list;
 *   - its parent's threshold otherwise (none for the root).
 * The defaults are level "error" and list "hg_all": every error is shown.
 * (Mercury's default level is "fatal".) HG_Set_log_level(l) sets the level
 * and adds "hg" to the list, NA_Set_log_level(l) adds "na", as in Mercury.
 *
 * A message is written when its level is at or below its subsystem's
 * threshold (QS_LOG_NONE < QS_LOG_FATAL < ... < QS_LOG_TRACE). It is
 * formatted into one line, "quicksilver: <subsys>: <level>: <text>\n", and
 * handed in one call to the program's log function (HG_Set_log_func(),
 * default fprintf) with the stream for its level (HG_Set_log_stream(),
 * default stderr for every level; Mercury writes warnings and debug output
 * to stdout). Lines from several threads never interleave within a line.
 *
 * Every function here is thread-safe. The log function may itself call
 * qs_log(); it is called without any lock held.
 */
#ifndef QS_LOG_H
#define QS_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Levels, least verbose first. The first seven are Mercury 2.4's
 * (none, fatal, error, warning, min_debug, info, debug); QS_LOG_TRACE is
 * Margo's most verbose level. Margo's levels map as critical -> FATAL,
 * error -> ERROR, warning -> WARNING, info -> INFO, debug -> DEBUG,
 * trace -> TRACE.
 */
enum qs_log_level {
    QS_LOG_NONE = 0,
    QS_LOG_FATAL,
    QS_LOG_ERROR,
    QS_LOG_WARNING,
    QS_LOG_MIN_DEBUG,
    QS_LOG_INFO,
    QS_LOG_DEBUG,
    QS_LOG_TRACE,
    QS_LOG_LEVEL_COUNT
};

#define QS_LOG_SUBSYS_MAX 32
#define QS_LOG_SUBSYS_NAME_MAX 15

/* A Mercury-style log function: called as log_func(stream, "%s", line). */
typedef int (*qs_log_func_t)(FILE *stream, const char *format, ...);

/*
 * Level named by `name`, case-insensitive: "none", "fatal" (or
 * "critical"), "error" (or "err"), "warning" (or "warn"), "min_debug",
 * "info", "debug", "trace". Mercury reads "trace" as min_debug; here it is
 * the most verbose level. Returns false (and leaves *level alone) for NULL
 * or an unknown name.
 */
bool qs_log_level_parse(const char *name, enum qs_log_level *level);

/* Name of a level ("error", ...); "unknown" when out of range. */
const char *qs_log_level_name(enum qs_log_level level);

/*
 * Log one message from `subsys` at `level` if the subsystem's threshold
 * lets it through. `level` QS_LOG_NONE or out of range logs nothing.
 */
void qs_log(const char *subsys, enum qs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void qs_vlog(const char *subsys, enum qs_log_level level, const char *fmt,
             va_list ap) __attribute__((format(printf, 3, 0)));

/*
 * Write one message whatever the thresholds say, through the same
 * function and streams. For layers that filter with their own levels
 * first (Margo's per-instance level).
 */
void qs_log_emit(const char *subsys, enum qs_log_level level, const char *fmt,
                 ...) __attribute__((format(printf, 3, 4)));
void qs_vlog_emit(const char *subsys, enum qs_log_level level, const char *fmt,
                  va_list ap) __attribute__((format(printf, 3, 0)));

/* Whether qs_log(subsys, level, ...) would write: test it before building
 * an expensive message. */
bool qs_log_enabled(const char *subsys, enum qs_log_level level);

/* Current threshold of `subsys` (registering the name if new). */
enum qs_log_level qs_log_threshold(const char *subsys);

/* Global level and active-subsystem list (Mercury's two settings). */
void qs_log_set_level(enum qs_log_level level);
enum qs_log_level qs_log_get_level(void);
/* Replaces the list; "" empties it. Up to QS_LOG_SUBSYS_MAX entries. */
void qs_log_set_subsys(const char *list);
/* Adds one entry to the list (no-op when already present). */
void qs_log_add_subsys(const char *name);

/* Pin one subsystem's threshold regardless of level and list, or (with
 * QS_LOG_LEVEL_COUNT) return it to the rules above. */
void qs_log_set_threshold(const char *subsys, enum qs_log_level level);

/* Output: the function (NULL restores fprintf) and the stream for the
 * levels `level` stands for: FATAL and ERROR share one stream, WARNING has
 * one, MIN_DEBUG..TRACE share one. NULL restores stderr. */
void qs_log_set_func(qs_log_func_t func);
void qs_log_set_stream(enum qs_log_level level, FILE *stream);

/*
 * Re-read HG_LOG_LEVEL and HG_LOG_SUBSYS and forget every other setting
 * (thresholds, function, streams). The sink reads them once by itself
 * before its first use; tests call this after setenv().
 */
void qs_log_reset_from_env(void);

#ifdef __cplusplus
}
#endif

#endif /* QS_LOG_H */
