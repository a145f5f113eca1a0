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
 * replay (replay.c) report as a failure.
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

void na_fuzz_check_addr_bytes(na_class_t *c, const uint8_t *data, size_t size);
void na_fuzz_check_addr_string(na_class_t *c, const uint8_t *data, size_t size);
void na_fuzz_check_mem_handle(na_class_t *c, const uint8_t *data, size_t size);

#endif
