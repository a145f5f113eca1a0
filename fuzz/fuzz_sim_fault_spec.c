/*
 * Fuzz target: the simulated fabric's fault-profile parser. Profiles come
 * from the QS_SIM_FAULTS environment variable, so the text is hostile:
 * the parser must bound every number, count and length and fail with an
 * error, never crash or read past the string.
 */
#include "na_sim.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    char err[128];

    if (spec == NULL)
        return 0;
    /* The parser reads a C string: embedded NULs just end it early. */
    memcpy(spec, data, size);
    spec[size] = '\0';
    (void) na_sim_fault_validate(spec, err, sizeof(err));
    /* A tiny error buffer must be honoured too. */
    (void) na_sim_fault_validate(spec, err, 1);
    (void) na_sim_fault_validate(spec, NULL, 0);
    free(spec);
    return 0;
}
