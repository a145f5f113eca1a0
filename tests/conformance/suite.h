/*
 * What the HG and NA conformance programs share: the info string of the
 * run, whether it names the simulated fabric, and running a cmocka group
 * with the cases excluded for this plugin (QS_TEST_EXCLUDE) shown as
 * skipped with their reason (QS_TEST_EXCLUDE_REASON).
 */
#ifndef CT_SUITE_H
#define CT_SUITE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* QS_TEST_INFO, or "sim" when it is unset or empty. */
const char *ct_suite_info(void);

/* Whether an info string names the simulated fabric ("sim", "sim://..."). */
int ct_suite_is_sim(const char *info);

/* Whether `name` is in the comma-separated QS_TEST_EXCLUDE list. */
int ct_suite_is_excluded(const char *name);

/* Apply QS_TEST_FILTER, replace excluded cases by a skip that prints the
 * reason, and run the group; returns the number of failed cases. */
int ct_suite_run_group(const char *group, const struct CMUnitTest *tests,
                       size_t count);

#endif /* CT_SUITE_H */
