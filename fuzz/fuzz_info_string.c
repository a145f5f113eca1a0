/*
 * Fuzz target: the info-string parser, which reads strings from users and
 * configuration ("[class+]protocol[://host]"). Any input gives an error or
 * three NUL-terminated parts that, put back together, parse to the same
 * parts again.
 *
 * The replay fails unless some string with "://" parses and some is
 * refused although its class and protocol alone parse (refused for its
 * host, or a part too long for the output).
 */
#include "na.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally strings = {.what = "info string with a host"};

const char *
fuzz_replay_check(void)
{
    return na_fuzz_tally_check(&strings);
}

/* The string has "://" and what comes before it parses alone: the parser
 * reads past its class and protocol. */
static bool
host_reached(char *str)
{
    char cls[64], proto[64], host[64];
    char *sep = strstr(str, "://");
    bool ok;

    if (sep == NULL)
        return false;
    *sep = '\0';
    ok = NA_Info_string_parse(str, cls, proto, host, sizeof(cls)) == NA_SUCCESS;
    *sep = ':';
    return ok;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char cls[64], proto[64], host[64], cls2[64], proto2[64], host2[64];
    char *str, again[256];
    bool ok;

    str = malloc(size + 1);
    if (str == NULL)
        return 0;
    memcpy(str, data, size);
    str[size] = '\0';
    ok = NA_Info_string_parse(str, cls, proto, host, sizeof(cls)) == NA_SUCCESS;
    na_fuzz_count(&strings, ok, host_reached(str));
    if (ok) {
        if (memchr(cls, '\0', sizeof(cls)) == NULL ||
            memchr(proto, '\0', sizeof(proto)) == NULL ||
            memchr(host, '\0', sizeof(host)) == NULL || proto[0] == '\0')
            abort();
        snprintf(again, sizeof(again), "%s%s%s%s%s", cls, cls[0] ? "+" : "",
                 proto, host[0] ? "://" : "", host);
        if (NA_Info_string_parse(again, cls2, proto2, host2, sizeof(cls2)) !=
                NA_SUCCESS ||
            strcmp(cls, cls2) != 0 || strcmp(proto, proto2) != 0 ||
            strcmp(host, host2) != 0)
            abort();
    }
    free(str);
    return 0;
}
