/*
 * Margo logging: one line per message on stderr, "[level] text".
 */
#include "margo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Level of messages logged with MARGO_INSTANCE_NULL, and the level a new
 * instance starts with. */
static atomic_int margo_global_level = MARGO_LOG_WARNING;

static const char *const margo_level_names[] = {
    [MARGO_LOG_EXTERNAL] = "external", [MARGO_LOG_TRACE] = "trace",
    [MARGO_LOG_DEBUG] = "debug",       [MARGO_LOG_INFO] = "info",
    [MARGO_LOG_WARNING] = "warning",   [MARGO_LOG_ERROR] = "error",
    [MARGO_LOG_CRITICAL] = "critical",
};

static bool
margo_level_valid(margo_log_level level)
{
    return (int) level >= (int) MARGO_LOG_EXTERNAL &&
           (int) level <= (int) MARGO_LOG_CRITICAL;
}

int
margo_set_log_level(margo_instance_id mid, margo_log_level level)
{
    if (!margo_level_valid(level))
        return -1;
    if (mid == MARGO_INSTANCE_NULL)
        atomic_store(&margo_global_level, (int) level);
    else
        atomic_store(&mid->log_level, (int) level);
    return 0;
}

int
margo_set_global_log_level(margo_log_level level)
{
    return margo_set_log_level(MARGO_INSTANCE_NULL, level);
}

int
margo_log_default_level(void)
{
    return atomic_load(&margo_global_level);
}

static void
margo_vlog(const struct margo_instance *mid, margo_log_level level,
           const char *fmt, va_list ap)
{
    int threshold =
        mid ? atomic_load(&mid->log_level) : atomic_load(&margo_global_level);
    char stack_buf[512];
    char *buf = stack_buf;
    size_t prefix, len;
    va_list ap2;
    int n;

    if ((int) level < threshold || fmt == NULL)
        return;

    /* Build the whole line first and write it with one call, so that lines
     * from different threads never interleave. */
    prefix = (size_t) snprintf(stack_buf, sizeof(stack_buf), "[%s] ",
                               margo_level_names[level]);
    va_copy(ap2, ap);
    n = vsnprintf(stack_buf + prefix, sizeof(stack_buf) - prefix, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    len = prefix + (size_t) n;
    if (len + 2 > sizeof(stack_buf)) {
        buf = malloc(len + 2);
        if (buf == NULL)
            return;
        memcpy(buf, stack_buf, prefix);
        vsnprintf(buf + prefix, (size_t) n + 1, fmt, ap);
    }
    /* Messages that already end in a newline (the tutorial's do) get no
     * second one. */
    if (len == prefix || buf[len - 1] != '\n')
        buf[len++] = '\n';
    buf[len] = '\0';
    fputs(buf, stderr);
    if (buf != stack_buf)
        free(buf);
}

void
margo_log(const struct margo_instance *mid, margo_log_level level,
          const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    margo_vlog(mid, level, fmt, ap);
    va_end(ap);
}

#define MARGO_DEFINE_LOG_FN(name, level)                                       \
    void name(margo_instance_id mid, const char *fmt, ...)                     \
    {                                                                          \
        va_list ap;                                                            \
        va_start(ap, fmt);                                                     \
        margo_vlog(mid, level, fmt, ap);                                       \
        va_end(ap);                                                            \
    }

MARGO_DEFINE_LOG_FN(margo_trace, MARGO_LOG_TRACE)
MARGO_DEFINE_LOG_FN(margo_debug, MARGO_LOG_DEBUG)
MARGO_DEFINE_LOG_FN(margo_info, MARGO_LOG_INFO)
MARGO_DEFINE_LOG_FN(margo_warning, MARGO_LOG_WARNING)
MARGO_DEFINE_LOG_FN(margo_error, MARGO_LOG_ERROR)
MARGO_DEFINE_LOG_FN(margo_critical, MARGO_LOG_CRITICAL)
