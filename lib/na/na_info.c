/*
 * Info-string parsing and error strings: pure functions over untrusted
 * input, shared by every plugin.
 */
#include "na/na_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Mercury's names: the table's own spelling of each code. */
#define X(a) [a] = #a,
static const char *const na_return_names[] = {NA_RETURN_VALUES};
#undef X

const char *
NA_Error_to_string(na_return_t errnum)
{
    /* Mercury returns NULL here; a string keeps printf("%s") defined for
     * a code that came from a corrupted or foreign source. */
    if ((unsigned) errnum >= NA_RETURN_MAX)
        return "unknown error";
    return na_return_names[errnum];
}

/* Copy [begin, end) into out; NA_OVERFLOW when it does not fit. */
static na_return_t
na_info_copy_part(const char *begin, const char *end, char *out,
                  size_t out_size)
{
    size_t len = (size_t) (end - begin);

    if (len >= out_size)
        return NA_OVERFLOW;
    memcpy(out, begin, len);
    out[len] = '\0';
    return NA_SUCCESS;
}

/* Class and protocol names are short identifiers; anything else is a
 * typo worth reporting rather than a plugin lookup that finds nothing. */
static bool
na_info_is_name(const char *begin, const char *end, bool allow_semicolon)
{
    if (begin == end)
        return false;
    for (const char *p = begin; p < end; p++) {
        if (isalnum((unsigned char) *p) || *p == '_' || *p == '-')
            continue;
        if (allow_semicolon && *p == ';')
            continue;
        return false;
    }
    return true;
}

na_return_t
NA_Info_string_parse(const char *info_string, char *class_name,
                     char *protocol_name, char *host_name, size_t out_size)
{
    const char *str = info_string, *plus, *sep, *proto_end;
    na_return_t ret;

    if (str == NULL || class_name == NULL || protocol_name == NULL ||
        host_name == NULL || out_size == 0)
        return NA_INVALID_ARG;
    class_name[0] = protocol_name[0] = host_name[0] = '\0';

    sep = strstr(str, "://");
    proto_end = sep ? sep : str + strlen(str);

    /* The class, if any, ends at the first '+' before "://". */
    plus = memchr(str, '+', (size_t) (proto_end - str));
    if (plus != NULL) {
        if (!na_info_is_name(str, plus, false))
            return NA_INVALID_ARG;
        ret = na_info_copy_part(str, plus, class_name, out_size);
        if (ret != NA_SUCCESS)
            return ret;
        str = plus + 1;
    }
    /* Protocols such as "tcp;ofi_rxm" carry a provider stack. */
    if (!na_info_is_name(str, proto_end, true))
        return NA_INVALID_ARG;
    ret = na_info_copy_part(str, proto_end, protocol_name, out_size);
    if (ret != NA_SUCCESS)
        return ret;
    if (sep != NULL) {
        const char *host = sep + 3;
        for (const char *p = host; *p; p++)
            if (!isprint((unsigned char) *p) || *p == ' ')
                return NA_INVALID_ARG;
        ret = na_info_copy_part(host, host + strlen(host), host_name, out_size);
        if (ret != NA_SUCCESS)
            return ret;
    }
    return NA_SUCCESS;
}

void
NA_Set_log_level(const char *level)
{
    enum qs_log_level l;

    if (!qs_log_level_parse(level, &l)) {
        qs_log("na", QS_LOG_ERROR, "NA_Set_log_level: \"%s\" is not a level",
               level ? level : "(null)");
        return;
    }
    qs_log_set_level(l);
    qs_log_add_subsys("na");
}

uint64_t
na_plugin_clock_monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}
