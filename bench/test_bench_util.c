/*
 * Checks of the bench helpers whose answers decide a verdict: whether a
 * run's copy probes found the CPU at one speed (bu_one_speed, which
 * sim_scale's growth records use), and that the probe itself measures
 * something. Prints "test_bench_util: N checks passed" and exits 0, or
 * names the failed check and exits 1.
 */
#include "bench_util.h"

#include <stdio.h>

static int failed, passed;

static void
check(bool ok, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "test_bench_util: FAILED: %s\n", what);
}

static void
one_speed(const double *p, size_t n, bool want, double want_lo, double want_hi,
          const char *what)
{
    double lo = -1, hi = -1;
    bool got = bu_one_speed(p, n, &lo, &hi);

    check(got == want, what);
    check(lo == want_lo && hi == want_hi, what);
}

int
main(void)
{
    /* The spread at one speed (session 29's full-speed probes). */
    one_speed((const double[]){18.8, 20.1, 19.5, 18.9}, 4, true, 18.8, 20.1,
              "probes within 1.1x are one speed");
    /* Exactly 1.1x is still one speed; just over it is not. */
    one_speed((const double[]){20.0, 22.0}, 2, true, 20.0, 22.0,
              "probes exactly 1.1x apart are one speed");
    one_speed((const double[]){20.0, 22.1}, 2, false, 20.0, 22.1,
              "probes just over 1.1x apart are not one speed");
    /* A slowed CPU in the middle of the list, and at its end. */
    one_speed((const double[]){19.9, 22.3, 20.6, 20.0}, 4, false, 19.9, 22.3,
              "a slowed probe among four");
    one_speed((const double[]){19.9, 20.0, 20.6, 26.8}, 4, false, 19.9, 26.8,
              "a slowed last probe");
    /* A probe that measured nothing finds no speed at all. */
    one_speed((const double[]){0.0, 0.0}, 2, false, 0.0, 0.0,
              "zero probes are not one speed");
    one_speed((const double[]){19.0}, 0, false, 0.0, 0.0,
              "no probe is not one speed");
    /* The probe takes time: at least a nanosecond per 2 KiB copy. */
    check(bu_copy_probe_ns() >= 1.0, "a 2 KiB copy takes at least 1 ns");
    if (failed != 0)
        return 1;
    printf("test_bench_util: %d checks passed\n", passed);
    return 0;
}
