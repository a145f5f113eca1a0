/*
 * Shared driver for the fuzz targets of the NA plugins' decoders.
 *
 * A target opens one class of its plugin with na_fuzz_class() and feeds the
 * input to the checks below. Each check demands, besides "no crash, no
 * leak, no read out of bounds", that an accepted input round-trips:
 *  - na_fuzz_check_addr_bytes(): a deserialized address serializes back to
 *    the bytes it was read from;
 *  - na_fuzz_check_addr_string(): a looked-up address prints as a string
 *    that looks up to the same address;
 *  - na_fuzz_check_mem_handle(): a deserialized memory handle serializes
 *    back to the bytes it was read from.
 * A broken round trip calls abort(), which the fuzzer and the corpus
 * replay (replay.c) report as a failure. Each check returns whether the
 * decoder accepted the input.
 *
 * A replay of a corpus none of whose inputs gets past a decoder's first
 * check passes while it tests nothing, so a target also keeps a tally of
 * what its inputs reached: na_fuzz_count() after each decode, and
 * na_fuzz_tally_check() from its fuzz_replay_check() (replay.c).
 */
#ifndef QS_FUZZ_NA_FUZZ_UTIL_H
#define QS_FUZZ_NA_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "na.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One class for the whole run, opened on the first call with
 * NA_Initialize(info, listen); it stays reachable until exit. If it cannot
 * be opened and `required` is false, `target` says why once on stderr and
 * NULL is returned (the caller then accepts every input); if `required`
 * is true the run aborts.
 */
na_class_t *na_fuzz_class(const char *target, const char *info, bool listen,
                          bool required);

bool na_fuzz_check_addr_bytes(na_class_t *c, const uint8_t *data, size_t size);
bool na_fuzz_check_addr_string(na_class_t *c, const uint8_t *data, size_t size);
bool na_fuzz_check_mem_handle(na_class_t *c, const uint8_t *data, size_t size);

/*
 * What one decoder's inputs reached: those of its current form that it
 * accepted, and those of its current form that it refused, which its
 * first checks let through (the form is what the target knows of the
 * decoder's first checks: the length for the kind of input, its magic
 * and version, or a scheme the class serves). Only inputs of the current
 * form count, so a corpus left behind by a version bump fails even if
 * some stray input happens to carry the new version. `what` names the
 * inputs in the reason given, e.g. "serialized address".
 */
struct na_fuzz_tally {
    const char *what;
    unsigned long accepted, refused_deep;
};

/* Counts one decode: `accepted` is its verdict, `current` whether the
 * input has the current form. */
void na_fuzz_count(struct na_fuzz_tally *t, bool accepted, bool current);

/* NULL when the tally has an accepted input and a deeply refused one,
 * else why the replay tested too little (a static string, overwritten by
 * the next call). With QS_FUZZ_TALLY set in the environment it also
 * prints the tally on stderr. */
const char *na_fuzz_tally_check(const struct na_fuzz_tally *t);

/* The same for two tallies (an address's bytes and its lookup strings):
 * the first one's reason, else the second's. */
const char *na_fuzz_tally_check2(const struct na_fuzz_tally *a,
                                 const struct na_fuzz_tally *b);

/* The fuzz_replay_check() hook of replay.c, declared for the targets that
 * define it. */
const char *fuzz_replay_check(void);

#endif
