/* The checking tools of util/qs_tools.h. */
#include "util/qs_tools.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* valgrind preloads vgpreload_core-<platform>.so under every tool, and
 * vgpreload_<tool>-<platform>.so besides under the tools that replace
 * malloc to watch the heap or the threads (memcheck, helgrind, DRD,
 * massif, DHAT). Its profilers (callgrind, cachegrind) preload the core
 * only: they watch neither, and see the layout of a plain run. */
bool
qs_valgrind_checks(const char *preload)
{
    static const char tag[] = "vgpreload_";
    const char *at = preload;

    while (at != NULL && (at = strstr(at, tag)) != NULL) {
        at += sizeof(tag) - 1;
        if (strncmp(at, "core-", 5) != 0)
            return true;
    }
    return false;
}

bool
qs_checked_program(unsigned int which)
{
    return ((which & QS_TOOL_ASAN) &&
            dlsym(RTLD_DEFAULT, "__asan_init") != NULL) ||
           ((which & QS_TOOL_TSAN) &&
            dlsym(RTLD_DEFAULT, "__tsan_init") != NULL) ||
           ((which & QS_TOOL_VALGRIND) &&
            qs_valgrind_checks(getenv("LD_PRELOAD")));
}
