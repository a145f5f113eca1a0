/*
 * Fuzz target: the simulated fabric's fault-profile parser. Profiles come
 * from the QS_SIM_FAULTS environment variable, so the text is hostile:
 * the parser must bound every number, count and length and fail with an
 * error, never crash or read past the string.
 *
 * The replay fails unless some profile with a rule is accepted and some
 * is refused past its first rule's scope (at a number, a count, a
 * probability, a later rule: the error names the offset).
 */
#include "na_sim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally profiles = {.what = "fault profile"};

const char *
fuzz_replay_check(void)
{
    return na_fuzz_tally_check(&profiles);
}

/* Where the parser stopped, from its error ("... at offset N"). */
static size_t
error_offset(const char *err)
{
    const char *at = strstr(err, "at offset ");
    size_t off = 0;

    if (at == NULL || sscanf(at, "at offset %zu", &off) != 1)
        return 0;
    return off;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    char err[128];
    char *colon;
    bool ok;

    if (spec == NULL)
        return 0;
    /* The parser reads a C string: embedded NULs just end it early. */
    memcpy(spec, data, size);
    spec[size] = '\0';
    ok = na_sim_fault_validate(spec, err, sizeof(err)) == NA_SUCCESS;
    colon = strchr(spec, ':');
    /* Accepted with a rule; or refused after the first rule's scope. */
    na_fuzz_count(&profiles, ok,
                  colon != NULL &&
                      (ok || error_offset(err) > (size_t) (colon - spec)));
    /* A tiny error buffer must be honoured too. */
    (void) na_sim_fault_validate(spec, err, 1);
    (void) na_sim_fault_validate(spec, NULL, 0);
    free(spec);
    return 0;
}
