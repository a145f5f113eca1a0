/*
 * Creates and finalizes one simulated NA class, whose objects are
 * line-aligned (lib/util/qs_alloc.h), and returns 0. Run with
 * HG_LOG_LEVEL=debug, the library says how it laid them out: the ctest
 * cases lines_mode_* expect "chunks" from a plain program and "one
 * allocation each" from one built with AddressSanitizer, or from any
 * program run with QS_LINES=malloc.
 */
#include <stdio.h>

#include <na.h>

int
main(void)
{
    na_class_t *cls = NA_Initialize("sim://lines-mode", false);

    if (cls == NULL) {
        fprintf(stderr, "lines_mode: NA_Initialize failed\n");
        return 1;
    }
    if (NA_Finalize(cls) != NA_SUCCESS) {
        fprintf(stderr, "lines_mode: NA_Finalize failed\n");
        return 1;
    }
    return 0;
}
