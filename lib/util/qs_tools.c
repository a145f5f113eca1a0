/* The checking tools of util/qs_tools.h. */
#include "util/qs_tools.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

bool
qs_checked_program(unsigned int which)
{
    const char *preload = getenv("LD_PRELOAD");

    return ((which & QS_TOOL_ASAN) &&
            dlsym(RTLD_DEFAULT, "__asan_init") != NULL) ||
           ((which & QS_TOOL_TSAN) &&
            dlsym(RTLD_DEFAULT, "__tsan_init") != NULL) ||
           ((which & QS_TOOL_VALGRIND) && preload != NULL &&
            strstr(preload, "vgpreload") != NULL);
}
