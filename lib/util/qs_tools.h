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
    QS_TOOL_VALGRIND = 1u << 2, /* valgrind (its vgpreload_*.so)      */
};

/* Whether any of the tools in `which` (QS_TOOL_* bits) watches the
 * program: a sanitizer the program was built with, found by its runtime's
 * entry point, even when this library was not; valgrind by the preload of
 * its helpers. */
bool qs_checked_program(unsigned int which);

#endif /* QS_TOOLS_H */
