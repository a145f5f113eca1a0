/*
 * Shared by every conformance program; see suite.h.
 */
#include "conformance/suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
ct_suite_info(void)
{
    const char *info = getenv("QS_TEST_INFO");

    return info != NULL && info[0] != '\0' ? info : "sim";
}

int
ct_suite_is_sim(const char *info)
{
    return strncmp(info, "sim", 3) == 0 && (info[3] == '\0' || info[3] == ':');
}

int
ct_suite_is_excluded(const char *name)
{
    const char *list = getenv("QS_TEST_EXCLUDE"), *p;
    size_t len = strlen(name);

    if (list == NULL)
        return 0;
    for (p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == '\0' || p[len] == ','))
            return 1;
    return 0;
}

/* Cases excluded for a plugin still show up, as skipped, with the reason
 * the registration gave. */
static void
excluded_case(void **state)
{
    const char *reason = getenv("QS_TEST_EXCLUDE_REASON");

    (void) state;
    fprintf(stderr, "skip: excluded on %s: %s\n", ct_suite_info(),
            reason != NULL ? reason : "(no reason given)");
    skip();
}

int
ct_suite_run_group(const char *group, const struct CMUnitTest *tests,
                   size_t count)
{
    const char *filter = getenv("QS_TEST_FILTER");
    struct CMUnitTest *run = calloc(count, sizeof(*run));
    int failed;

    if (run == NULL)
        return 1;
    if (filter != NULL && filter[0] != '\0')
        cmocka_set_test_filter(filter);
    for (size_t i = 0; i < count; i++) {
        run[i] = tests[i];
        if (ct_suite_is_excluded(tests[i].name)) {
            run[i].test_func = excluded_case;
            run[i].setup_func = NULL;
            run[i].teardown_func = NULL;
        }
    }
    failed = _cmocka_run_group_tests(group, run, count, NULL, NULL);
    free(run);
    return failed;
}
