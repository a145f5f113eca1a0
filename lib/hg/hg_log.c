/*
 * Mercury's logging calls, on top of the single sink (util/qs_log.h).
 */
#include "hg/hg_internal.h"

void
HG_Set_log_level(const char *level)
{
    enum qs_log_level l;

    if (!qs_log_level_parse(level, &l)) {
        qs_log("hg", QS_LOG_ERROR, "HG_Set_log_level: \"%s\" is not a level",
               level ? level : "(null)");
        return;
    }
    qs_log_set_level(l);
    qs_log_add_subsys("hg");
}

void
HG_Set_log_subsys(const char *subsys)
{
    if (subsys == NULL) {
        qs_log("hg", QS_LOG_ERROR, "HG_Set_log_subsys: NULL list");
        return;
    }
    qs_log_set_subsys(subsys);
}

void
HG_Set_log_func(int (*log_func)(FILE *stream, const char *format, ...))
{
    qs_log_set_func(log_func);
}

void
HG_Set_log_stream(const char *level, FILE *stream)
{
    enum qs_log_level l;

    if (!qs_log_level_parse(level, &l) || l == QS_LOG_NONE) {
        qs_log("hg", QS_LOG_ERROR, "HG_Set_log_stream: \"%s\" is not a level",
               level ? level : "(null)");
        return;
    }
    qs_log_set_stream(l, stream);
}
