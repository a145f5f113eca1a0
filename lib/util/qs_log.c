/*
 * The single log sink (see qs_log.h for the rules it implements).
 *
 * Subsystem names live in an append-only table: an entry's name and parent
 * are written before `qs_log_count` publishes it, so lookups read the table
 * without a lock. Each entry's threshold is an atomic recomputed, under
 * `qs_log_lock`, whenever a setting changes. The lock also guards the
 * settings themselves (level, list, pinned thresholds, function, streams).
 */
#include "util/qs_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct qs_log_subsys {
    char name[QS_LOG_SUBSYS_NAME_MAX + 1];
    int parent;           /* index of the parent, -1 for the root */
    int pinned;           /* qs_log_set_threshold() level, -1 when none */
    atomic_int threshold; /* effective threshold, read without the lock */
};

static struct qs_log_subsys qs_log_table[QS_LOG_SUBSYS_MAX];
static atomic_int qs_log_count;
static pthread_mutex_t qs_log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t qs_log_once = PTHREAD_ONCE_INIT;

/* Settings, guarded by qs_log_lock. The list entries may start with '~'. */
static enum qs_log_level qs_log_level_g = QS_LOG_ERROR;
static char qs_log_list[QS_LOG_SUBSYS_MAX][QS_LOG_SUBSYS_NAME_MAX + 2];
static int qs_log_list_len;
static qs_log_func_t qs_log_func_g;
static FILE *qs_log_streams[3]; /* errors, warnings, debug; NULL = stderr */

static const char *const qs_log_names[QS_LOG_LEVEL_COUNT] = {
    "none", "fatal", "error", "warning", "min_debug", "info", "debug", "trace",
};

static const struct {
    const char *name;
    enum qs_log_level level;
} qs_log_aliases[] = {
    {"critical", QS_LOG_FATAL},
    {"err", QS_LOG_ERROR},
    {"warn", QS_LOG_WARNING},
};

/* Built-in names, parents first. */
static const char *const qs_log_builtin[][2] = {
    {"hg_all", NULL}, {"hg", "hg_all"}, {"na", "hg_all"}, {"margo", "hg_all"},
    {"bulk", "hg"},   {"proc", "hg"},   {"sim", "na"},    {"ofi", "na"},
    {"verbs", "na"},  {"sm", "na"},
};

bool
qs_log_level_parse(const char *name, enum qs_log_level *level)
{
    if (name == NULL)
        return false;
    for (int l = 0; l < QS_LOG_LEVEL_COUNT; l++) {
        if (strcasecmp(name, qs_log_names[l]) == 0) {
            *level = (enum qs_log_level) l;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof(qs_log_aliases) / sizeof(*qs_log_aliases);
         i++) {
        if (strcasecmp(name, qs_log_aliases[i].name) == 0) {
            *level = qs_log_aliases[i].level;
            return true;
        }
    }
    return false;
}

const char *
qs_log_level_name(enum qs_log_level level)
{
    if ((unsigned) level >= QS_LOG_LEVEL_COUNT)
        return "unknown";
    return qs_log_names[level];
}

/* Writes one finished line; needs no initialization (the output settings
 * are valid statically). */
static void
qs_log_write_line(enum qs_log_level level, const char *line)
{
    qs_log_func_t func;
    FILE *stream;
    int slot = level <= QS_LOG_ERROR ? 0 : level == QS_LOG_WARNING ? 1 : 2;

    pthread_mutex_lock(&qs_log_lock);
    func = qs_log_func_g;
    stream = qs_log_streams[slot];
    pthread_mutex_unlock(&qs_log_lock);
    if (stream == NULL)
        stream = stderr;
    if (func == NULL)
        func = fprintf;
    func(stream, "%s", line);
}

void
qs_vlog_emit(const char *subsys, enum qs_log_level level, const char *fmt,
             va_list ap)
{
    char stack_buf[512];
    char *line = stack_buf;
    va_list ap2;
    int prefix, body;

    if (level <= QS_LOG_NONE || level >= QS_LOG_LEVEL_COUNT || fmt == NULL)
        return;
    prefix = snprintf(stack_buf, sizeof(stack_buf),
                      "quicksilver: %.*s: %s: ", QS_LOG_SUBSYS_NAME_MAX,
                      subsys ? subsys : "hg_all", qs_log_names[level]);
    va_copy(ap2, ap);
    body = vsnprintf(stack_buf + prefix, sizeof(stack_buf) - (size_t) prefix,
                     fmt, ap2);
    va_end(ap2);
    if (body < 0)
        body = 0;
    if ((size_t) prefix + (size_t) body + 2 > sizeof(stack_buf)) {
        line = malloc((size_t) prefix + (size_t) body + 2);
        if (line == NULL) {
            /* Out of memory: the truncated line is better than none. */
            line = stack_buf;
            body = (int) sizeof(stack_buf) - prefix - 2;
        } else {
            memcpy(line, stack_buf, (size_t) prefix);
            vsnprintf(line + prefix, (size_t) body + 1, fmt, ap);
        }
    }
    line[prefix + body] = '\n';
    line[prefix + body + 1] = '\0';
    qs_log_write_line(level, line);
    if (line != stack_buf)
        free(line);
}

void
qs_log_emit(const char *subsys, enum qs_log_level level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    qs_vlog_emit(subsys, level, fmt, ap);
    va_end(ap);
}

/* Under qs_log_lock: list membership of `name` (1), of "~name" (-1), or 0. */
static int
qs_log_listed(const char *name)
{
    for (int i = 0; i < qs_log_list_len; i++) {
        if (qs_log_list[i][0] == '~' && strcmp(qs_log_list[i] + 1, name) == 0)
            return -1;
        if (strcmp(qs_log_list[i], name) == 0)
            return 1;
    }
    return 0;
}

/* Under qs_log_lock: threshold of entry i from the settings; parents come
 * before their children, so theirs are already current. */
static void
qs_log_recompute_one(int i)
{
    struct qs_log_subsys *s = &qs_log_table[i];
    int listed = qs_log_listed(s->name);
    int t;

    if (s->pinned >= 0)
        t = s->pinned;
    else if (listed > 0)
        t = (int) qs_log_level_g;
    else if (listed < 0 || s->parent < 0)
        t = QS_LOG_NONE;
    else
        t = atomic_load(&qs_log_table[s->parent].threshold);
    atomic_store(&s->threshold, t);
}

static void
qs_log_recompute_all(void)
{
    int n = atomic_load(&qs_log_count);

    for (int i = 0; i < n; i++)
        qs_log_recompute_one(i);
}

/* Under qs_log_lock. */
static int
qs_log_find_locked(const char *name)
{
    int n = atomic_load(&qs_log_count);

    for (int i = 0; i < n; i++)
        if (strcmp(qs_log_table[i].name, name) == 0)
            return i;
    return -1;
}

/* Under qs_log_lock: index of `name`, added as a child of `parent` when
 * new; the root when the table is full. */
static int
qs_log_add_locked(const char *name, const char *parent)
{
    int i = qs_log_find_locked(name);
    int n;

    if (i >= 0)
        return i;
    n = atomic_load(&qs_log_count);
    if (n == QS_LOG_SUBSYS_MAX)
        return 0;
    snprintf(qs_log_table[n].name, sizeof(qs_log_table[n].name), "%s", name);
    qs_log_table[n].parent = parent ? qs_log_find_locked(parent) : -1;
    qs_log_table[n].pinned = -1;
    atomic_store(&qs_log_count, n + 1);
    qs_log_recompute_one(n);
    return n;
}

/* Under qs_log_lock: replace the list with the comma-separated `list`. */
static void
qs_log_parse_list(const char *list)
{
    const char *p = list;

    qs_log_list_len = 0;
    while (*p != '\0' && qs_log_list_len < QS_LOG_SUBSYS_MAX) {
        size_t len = strcspn(p, ",");
        char entry[QS_LOG_SUBSYS_NAME_MAX + 2];

        if (len > 0) {
            snprintf(entry, sizeof(entry), "%.*s", (int) len, p);
            if (qs_log_listed(entry[0] == '~' ? entry + 1 : entry) == 0)
                memcpy(qs_log_list[qs_log_list_len++], entry, sizeof(entry));
        }
        p += len;
        if (*p == ',')
            p++;
    }
}

/* Under qs_log_lock: back to the environment's settings. */
static void
qs_log_load_env(void)
{
    const char *level = getenv("HG_LOG_LEVEL");
    const char *list = getenv("HG_LOG_SUBSYS");
    enum qs_log_level l = QS_LOG_ERROR;
    bool bad_level = level != NULL && !qs_log_level_parse(level, &l);

    qs_log_level_g = l;
    qs_log_parse_list(list ? list : "hg_all");
    for (int i = 0; i < atomic_load(&qs_log_count); i++)
        qs_log_table[i].pinned = -1;
    qs_log_func_g = NULL;
    memset(qs_log_streams, 0, sizeof(qs_log_streams));
    if (atomic_load(&qs_log_count) == 0)
        for (size_t i = 0; i < sizeof(qs_log_builtin) / sizeof(*qs_log_builtin);
             i++)
            qs_log_add_locked(qs_log_builtin[i][0], qs_log_builtin[i][1]);
    qs_log_recompute_all();
    if (bad_level) {
        pthread_mutex_unlock(&qs_log_lock);
        qs_log_emit("hg_all", QS_LOG_ERROR,
                    "HG_LOG_LEVEL=\"%s\" is not a level (none, fatal, error, "
                    "warning, min_debug, info, debug, trace); using error",
                    level);
        pthread_mutex_lock(&qs_log_lock);
    }
}

static void
qs_log_init(void)
{
    pthread_mutex_lock(&qs_log_lock);
    qs_log_load_env();
    pthread_mutex_unlock(&qs_log_lock);
}

/* Index of `subsys`, registering it (child of the root) if new. */
static int
qs_log_index(const char *subsys)
{
    char name[QS_LOG_SUBSYS_NAME_MAX + 1];
    int n, i;

    pthread_once(&qs_log_once, qs_log_init);
    if (subsys == NULL)
        return 0;
    snprintf(name, sizeof(name), "%s", subsys);
    n = atomic_load(&qs_log_count);
    for (i = 0; i < n; i++)
        if (strcmp(qs_log_table[i].name, name) == 0)
            return i;
    pthread_mutex_lock(&qs_log_lock);
    i = qs_log_add_locked(name, "hg_all");
    pthread_mutex_unlock(&qs_log_lock);
    return i;
}

enum qs_log_level
qs_log_threshold(const char *subsys)
{
    int i = qs_log_index(subsys);

    return (enum qs_log_level) atomic_load(&qs_log_table[i].threshold);
}

bool
qs_log_enabled(const char *subsys, enum qs_log_level level)
{
    return level > QS_LOG_NONE && level < QS_LOG_LEVEL_COUNT &&
           level <= qs_log_threshold(subsys);
}

void
qs_vlog(const char *subsys, enum qs_log_level level, const char *fmt,
        va_list ap)
{
    if (qs_log_enabled(subsys, level))
        qs_vlog_emit(subsys, level, fmt, ap);
}

void
qs_log(const char *subsys, enum qs_log_level level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    qs_vlog(subsys, level, fmt, ap);
    va_end(ap);
}

void
qs_log_set_level(enum qs_log_level level)
{
    if ((unsigned) level >= QS_LOG_LEVEL_COUNT)
        return;
    pthread_once(&qs_log_once, qs_log_init);
    pthread_mutex_lock(&qs_log_lock);
    qs_log_level_g = level;
    qs_log_recompute_all();
    pthread_mutex_unlock(&qs_log_lock);
}

enum qs_log_level
qs_log_get_level(void)
{
    enum qs_log_level l;

    pthread_once(&qs_log_once, qs_log_init);
    pthread_mutex_lock(&qs_log_lock);
    l = qs_log_level_g;
    pthread_mutex_unlock(&qs_log_lock);
    return l;
}

void
qs_log_set_subsys(const char *list)
{
    if (list == NULL)
        return;
    pthread_once(&qs_log_once, qs_log_init);
    pthread_mutex_lock(&qs_log_lock);
    qs_log_parse_list(list);
    qs_log_recompute_all();
    pthread_mutex_unlock(&qs_log_lock);
}

void
qs_log_add_subsys(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return;
    pthread_once(&qs_log_once, qs_log_init);
    pthread_mutex_lock(&qs_log_lock);
    if (qs_log_listed(name[0] == '~' ? name + 1 : name) == 0 &&
        qs_log_list_len < QS_LOG_SUBSYS_MAX) {
        snprintf(qs_log_list[qs_log_list_len++], sizeof(*qs_log_list), "%s",
                 name);
        qs_log_recompute_all();
    }
    pthread_mutex_unlock(&qs_log_lock);
}

void
qs_log_set_threshold(const char *subsys, enum qs_log_level level)
{
    int i;

    if ((unsigned) level > QS_LOG_LEVEL_COUNT)
        return;
    i = qs_log_index(subsys);
    pthread_mutex_lock(&qs_log_lock);
    qs_log_table[i].pinned = level == QS_LOG_LEVEL_COUNT ? -1 : (int) level;
    qs_log_recompute_all();
    pthread_mutex_unlock(&qs_log_lock);
}

void
qs_log_set_func(qs_log_func_t func)
{
    pthread_mutex_lock(&qs_log_lock);
    qs_log_func_g = func;
    pthread_mutex_unlock(&qs_log_lock);
}

void
qs_log_set_stream(enum qs_log_level level, FILE *stream)
{
    if (level <= QS_LOG_NONE || level >= QS_LOG_LEVEL_COUNT)
        return;
    pthread_mutex_lock(&qs_log_lock);
    qs_log_streams[level <= QS_LOG_ERROR     ? 0
                   : level == QS_LOG_WARNING ? 1
                                             : 2] = stream;
    pthread_mutex_unlock(&qs_log_lock);
}

void
qs_log_reset_from_env(void)
{
    pthread_once(&qs_log_once, qs_log_init);
    pthread_mutex_lock(&qs_log_lock);
    qs_log_load_env();
    pthread_mutex_unlock(&qs_log_lock);
}
