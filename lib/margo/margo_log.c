/*
 * Margo logging (margo-logging.h). Each instance has a level and a logger;
 * the global ones serve MARGO_INSTANCE_NULL and seed new instances. The
 * default logger writes through the library's single log sink (qs_log),
 * after Margo's own level has filtered.
 *
 * Loggers are copied under margo_log_lock and called without it; the lock
 * is separate from margo_lock because Margo logs while holding that one.
 */
#include "margo_internal.h"
#include "util/qs_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_mutex_t margo_log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t margo_log_once = PTHREAD_ONCE_INIT;
static atomic_int margo_global_level = MARGO_LOG_WARNING;
static struct margo_logger margo_global_logger; /* (margo_log_lock) */
static bool margo_global_custom;                /* (margo_log_lock) */

static const struct {
    const char *name;
    margo_log_level level;
} margo_level_names[] = {
    {"external", MARGO_LOG_EXTERNAL}, {"trace", MARGO_LOG_TRACE},
    {"debug", MARGO_LOG_DEBUG},       {"info", MARGO_LOG_INFO},
    {"warning", MARGO_LOG_WARNING},   {"error", MARGO_LOG_ERROR},
    {"critical", MARGO_LOG_CRITICAL},
};

static bool
margo_level_valid(margo_log_level level)
{
    return (int) level >= (int) MARGO_LOG_EXTERNAL &&
           (int) level <= (int) MARGO_LOG_CRITICAL;
}

int
margo_log_level_parse(const char *name, margo_log_level *level)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0;
         i < sizeof(margo_level_names) / sizeof(*margo_level_names); i++) {
        if (strcasecmp(name, margo_level_names[i].name) == 0) {
            *level = margo_level_names[i].level;
            return 0;
        }
    }
    return -1;
}

const char *
margo_log_level_name(margo_log_level level)
{
    return margo_level_valid(level) ? margo_level_names[level].name : "unknown";
}

static void
margo_log_init_env(void)
{
    const char *env = getenv("MARGO_LOG_LEVEL");
    margo_log_level level;

    if (env == NULL || env[0] == '\0')
        return;
    if (margo_log_level_parse(env, &level) == 0)
        atomic_store(&margo_global_level, (int) level);
    else
        qs_log_emit("margo", QS_LOG_WARNING,
                    "MARGO_LOG_LEVEL=\"%s\" is not a level (trace, debug, "
                    "info, warning, error, critical); ignored",
                    env);
}

int
margo_log_default_level(void)
{
    pthread_once(&margo_log_once, margo_log_init_env);
    return atomic_load(&margo_global_level);
}

int
margo_set_log_level(margo_instance_id mid, margo_log_level level)
{
    if (!margo_level_valid(level))
        return -1;
    pthread_once(&margo_log_once, margo_log_init_env);
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
margo_set_logger(margo_instance_id mid, const struct margo_logger *logger)
{
    if (mid == MARGO_INSTANCE_NULL)
        return -1;
    pthread_mutex_lock(&margo_log_lock);
    if (logger) {
        mid->logger = *logger;
        mid->custom_logger = true;
    } else {
        mid->custom_logger = false;
    }
    pthread_mutex_unlock(&margo_log_lock);
    return 0;
}

int
margo_set_global_logger(const struct margo_logger *logger)
{
    pthread_mutex_lock(&margo_log_lock);
    if (logger) {
        margo_global_logger = *logger;
        margo_global_custom = true;
    } else {
        margo_global_custom = false;
    }
    pthread_mutex_unlock(&margo_log_lock);
    return 0;
}

void
margo_log_inherit(struct margo_instance *mid)
{
    pthread_mutex_lock(&margo_log_lock);
    mid->logger = margo_global_logger;
    mid->custom_logger = margo_global_custom;
    pthread_mutex_unlock(&margo_log_lock);
}

static margo_log_fn_t
margo_logger_fn(const struct margo_logger *l, margo_log_level level)
{
    switch (level) {
    case MARGO_LOG_TRACE:
        return l->trace;
    case MARGO_LOG_DEBUG:
        return l->debug;
    case MARGO_LOG_INFO:
        return l->info;
    case MARGO_LOG_WARNING:
        return l->warning;
    case MARGO_LOG_ERROR:
        return l->error;
    case MARGO_LOG_CRITICAL:
        return l->critical;
    default:
        return NULL;
    }
}

static enum qs_log_level
margo_to_qs_level(margo_log_level level)
{
    switch (level) {
    case MARGO_LOG_CRITICAL:
        return QS_LOG_FATAL;
    case MARGO_LOG_ERROR:
        return QS_LOG_ERROR;
    case MARGO_LOG_WARNING:
        return QS_LOG_WARNING;
    case MARGO_LOG_INFO:
        return QS_LOG_INFO;
    case MARGO_LOG_DEBUG:
        return QS_LOG_DEBUG;
    default:
        return QS_LOG_TRACE;
    }
}

static void
margo_vlog(const struct margo_instance *mid, margo_log_level level,
           const char *fmt, va_list ap)
{
    struct margo_logger logger;
    bool custom;
    int threshold;
    char stack_buf[512], *buf = stack_buf;
    size_t len;
    va_list ap2;
    int n;

    if (fmt == NULL || !margo_level_valid(level) || level == MARGO_LOG_EXTERNAL)
        return;
    threshold = mid ? atomic_load(&mid->log_level) : margo_log_default_level();
    if ((int) level < threshold)
        return;
    pthread_mutex_lock(&margo_log_lock);
    if (mid) {
        logger = mid->logger;
        custom = mid->custom_logger;
    } else {
        logger = margo_global_logger;
        custom = margo_global_custom;
    }
    pthread_mutex_unlock(&margo_log_lock);

    va_copy(ap2, ap);
    n = vsnprintf(stack_buf, sizeof(stack_buf), fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    len = (size_t) n;
    if (len + 1 > sizeof(stack_buf)) {
        buf = malloc(len + 1);
        if (buf == NULL)
            return;
        vsnprintf(buf, len + 1, fmt, ap);
    }
    /* Messages that end in a newline (the tutorial's do) lose it: the
     * logger gets one line of text. */
    if (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
    if (custom) {
        margo_log_fn_t fn = margo_logger_fn(&logger, level);

        if (fn)
            fn(logger.uargs, buf);
    } else {
        qs_log_emit("margo", margo_to_qs_level(level), "%s", buf);
    }
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
