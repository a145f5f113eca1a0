/*
 * A program that includes mercury_config.h and uses what Mercury's
 * programs use from it: the version and the attribute macros. Compiled
 * (-fsyntax-only, -Werror) by the ctest case compat_mercury_config.
 */
#include <mercury_config.h>

#include <mercury.h>
#include <mercury_macros.h>
#include <mercury_proc_string.h>

#if HG_VERSION_MAJOR != 2 || HG_VERSION_MINOR != 4 || HG_VERSION_PATCH != 1
#error "mercury_config.h: not Mercury 2.4.1"
#endif
#if defined(HG_HAS_XDR) || defined(HG_HAS_CHECKSUMS)
#error "mercury_config.h: claims a feature this library does not have"
#endif
#ifndef HG_BUILD_SHARED_LIBS
#error "mercury_config.h: HG_BUILD_SHARED_LIBS"
#endif

HG_PUBLIC int config_answer(void) HG_WARN_UNUSED_RESULT;
NA_PUBLIC int config_na(NA_UNUSED int unused) NA_WARN_UNUSED_RESULT;

int
config_na(int unused)
{
    (void) unused;
    return 0;
}

static HG_INLINE int
config_one(HG_UNUSED int unused)
{
    return 1;
}

int
config_answer(void)
{
    int x = config_one(0);

    switch (x) {
    case 1:
        x++;
        HG_FALLTHROUGH;
    default:
        break;
    }
    return x;
}
