/*
 * The one errno-to-NA map of lib/na/na_plugin_util.h, which every plugin
 * uses: Mercury's codes, and the original errno kept in the log line.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "na/na_plugin_util.h"
#include "util/qs_log.h"

static char last_line[512];

static int
capture(FILE *stream, const char *format, ...)
{
    va_list ap;
    int n;

    (void) stream;
    va_start(ap, format);
    n = vsnprintf(last_line, sizeof(last_line), format, ap);
    va_end(ap);
    return n;
}

/* Mercury's codes, where plugins used to differ (EPERM was NA_ACCESS on
 * verbs and NA_PERMISSION on ofi). */
static void
test_errno_map(void **state)
{
    static const struct {
        int err;
        na_return_t ret;
    } cases[] = {
        {0, NA_SUCCESS},
        {EPERM, NA_PERMISSION},
        {EACCES, NA_ACCESS},
        {EKEYREJECTED, NA_ACCESS},
        {ENOENT, NA_NOENTRY},
        {EINTR, NA_INTERRUPT},
        {EAGAIN, NA_AGAIN},
        {ENOMEM, NA_NOMEM},
        {ENOBUFS, NA_NOMEM},
        {EFAULT, NA_FAULT},
        {EBUSY, NA_BUSY},
        {ENODEV, NA_NODEV},
        {EINVAL, NA_INVALID_ARG},
        {EBADF, NA_INVALID_ARG},
        {EOVERFLOW, NA_OVERFLOW},
        {EMSGSIZE, NA_MSGSIZE},
        {ENOSYS, NA_PROTONOSUPPORT},
        {EOPNOTSUPP, NA_OPNOTSUPPORTED},
        {EADDRINUSE, NA_ADDRINUSE},
        {EADDRNOTAVAIL, NA_ADDRNOTAVAIL},
        {ECONNREFUSED, NA_HOSTUNREACH},
        {ECONNRESET, NA_HOSTUNREACH},
        {EHOSTUNREACH, NA_HOSTUNREACH},
        {ENETDOWN, NA_HOSTUNREACH},
        {ETIMEDOUT, NA_TIMEOUT},
        {ECANCELED, NA_CANCELED},
        {EIO, NA_IO_ERROR},
        {ELOOP, NA_IO_ERROR}, /* one Mercury does not name */
    };

    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        na_return_t ret = na_plugin_errno_to_na(cases[i].err);
        if (ret != cases[i].ret)
            fail_msg("errno %d (%s): %s, expected %s", cases[i].err,
                     strerror(cases[i].err), NA_Error_to_string(ret),
                     NA_Error_to_string(cases[i].ret));
    }
}

/* The code folds EPERM and EACCES apart but ECONNREFUSED and ECONNRESET
 * together: the log line keeps which errno it was. */
static void
test_errno_logged(void **state)
{
    na_return_t ret;
    char want[128];

    (void) state;
    qs_log_reset_from_env(); /* first, or its lazy run drops our function */
    qs_log_set_func(capture);
    last_line[0] = '\0';
    ret = na_plugin_errno_error("tcp", ECONNRESET, "send to 10.0.0.1:7");
    qs_log_set_func(NULL);
    assert_int_equal(ret, NA_HOSTUNREACH);
    snprintf(want, sizeof(want), "send to 10.0.0.1:7: %s (errno %d, %s)",
             strerror(ECONNRESET), ECONNRESET, "NA_HOSTUNREACH");
    assert_non_null(strstr(last_line, want));
    assert_non_null(strstr(last_line, "tcp"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errno_map),
        cmocka_unit_test(test_errno_logged),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
