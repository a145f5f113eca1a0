/*
 * Which checking tools run the program around the library: they decide
 * how the library lays out its objects (util/qs_alloc.h) and whether it
 * takes a hot-path bias (util/qs_bias.h).
 */
#ifndef QS_TOOLS_H
#define QS_TOOLS_H

#include <stdbool.h>

enum {
    QS_TOOL_ASAN = 1u << 0,     /* AddressSanitizer in the program    */
    QS_TOOL_TSAN = 1u << 1,     /* ThreadSanitizer in the program     */
    QS_TOOL_VALGRIND = 1u << 2, /* a valgrind tool that replaces malloc */
};

/* Whether any of the tools in `which` (QS_TOOL_* bits) watches the
 * program: a sanitizer the program was built with, found by its runtime's
 * entry point, even when this library was not; a valgrind tool that
 * watches the heap or the threads (memcheck, helgrind, DRD) by the preload
 * of its malloc replacement. valgrind's profilers (callgrind, cachegrind)
 * replace nothing and count as no tool: the program runs as it would
 * without them. */
bool qs_checked_program(unsigned int which);

/* Whether LD_PRELOAD's value `preload` (NULL: unset) names the malloc
 * replacement of a valgrind tool (vgpreload_<tool>-<platform>.so, other
 * than the core's, which every tool preloads). */
bool qs_valgrind_checks(const char *preload);

#endif /* QS_TOOLS_H */
