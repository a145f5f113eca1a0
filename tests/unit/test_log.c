/*
 * The single log sink: thresholds per subsystem (Mercury's level + list
 * rules), the public HG_/NA_ setters, HG_LOG_LEVEL / HG_LOG_SUBSYS, the
 * program's log function and streams, one call per line, and the library
 * itself writing through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <cmocka.h>

#include "mercury.h"
#include "na.h"
#include "util/qs_log.h"

/* Every line the log function received, in order. */
#define CAPTURE_MAX 4096
static char *captured[CAPTURE_MAX];
static FILE *captured_stream[CAPTURE_MAX];
static int ncaptured;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

static int
capture(FILE *stream, const char *format, ...)
{
    va_list ap;
    char *line = NULL;
    int n;

    va_start(ap, format);
    n = vasprintf(&line, format, ap);
    va_end(ap);
    pthread_mutex_lock(&capture_lock);
    if (n >= 0 && ncaptured < CAPTURE_MAX) {
        captured_stream[ncaptured] = stream;
        captured[ncaptured++] = line;
        line = NULL;
    }
    pthread_mutex_unlock(&capture_lock);
    free(line);
    return n;
}

static void
capture_clear(void)
{
    for (int i = 0; i < ncaptured; i++)
        free(captured[i]);
    ncaptured = 0;
}

/* Fresh settings before each test: defaults, our capture function. */
static int
setup(void **state)
{
    (void) state;
    unsetenv("HG_LOG_LEVEL");
    unsetenv("HG_LOG_SUBSYS");
    qs_log_reset_from_env();
    HG_Set_log_func(capture);
    capture_clear();
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    capture_clear();
    HG_Set_log_func(NULL);
    return 0;
}

/* Logs one line per subsystem at `level` and returns how many came out. */
static int
count_logged(const char *subsys, enum qs_log_level level)
{
    int before = ncaptured;

    qs_log(subsys, level, "probe %d", 42);
    return ncaptured - before;
}

static void
test_defaults_and_format(void **state)
{
    (void) state;
    assert_int_equal(qs_log_get_level(), QS_LOG_ERROR);
    assert_int_equal(count_logged("hg", QS_LOG_ERROR), 1);
    assert_string_equal(captured[0], "quicksilver: hg: error: probe 42\n");
    assert_ptr_equal(captured_stream[0], stderr);
    assert_int_equal(count_logged("hg", QS_LOG_WARNING), 0);
    assert_int_equal(count_logged("ofi", QS_LOG_FATAL), 1);
    assert_int_equal(count_logged("ofi", QS_LOG_DEBUG), 0);
    /* A name nobody declared hangs under the root. */
    assert_int_equal(count_logged("custom", QS_LOG_ERROR), 1);
    assert_string_equal(captured[2], "quicksilver: custom: error: probe 42\n");
    /* Level none is never a message. */
    assert_int_equal(count_logged("hg", QS_LOG_NONE), 0);
    assert_true(qs_log_enabled("na", QS_LOG_ERROR));
    assert_false(qs_log_enabled("na", QS_LOG_INFO));
}

static void
test_levels_parse(void **state)
{
    static const struct {
        const char *name;
        enum qs_log_level level;
    } cases[] = {
        {"none", QS_LOG_NONE},      {"fatal", QS_LOG_FATAL},
        {"critical", QS_LOG_FATAL}, {"ERROR", QS_LOG_ERROR},
        {"err", QS_LOG_ERROR},      {"Warning", QS_LOG_WARNING},
        {"warn", QS_LOG_WARNING},   {"min_debug", QS_LOG_MIN_DEBUG},
        {"info", QS_LOG_INFO},      {"debug", QS_LOG_DEBUG},
        {"trace", QS_LOG_TRACE},
    };
    enum qs_log_level l = QS_LOG_INFO;

    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        assert_true(qs_log_level_parse(cases[i].name, &l));
        assert_int_equal(l, cases[i].level);
    }
    l = QS_LOG_INFO;
    assert_false(qs_log_level_parse("loud", &l));
    assert_false(qs_log_level_parse(NULL, &l));
    assert_int_equal(l, QS_LOG_INFO);
    assert_string_equal(qs_log_level_name(QS_LOG_MIN_DEBUG), "min_debug");
    assert_string_equal(qs_log_level_name((enum qs_log_level) 99), "unknown");
}

static void
test_hg_na_setters(void **state)
{
    (void) state;
    /* Only "hg" listed: its children follow it, NA is silent. */
    HG_Set_log_subsys("hg");
    HG_Set_log_level("warning");
    assert_int_equal(count_logged("hg", QS_LOG_WARNING), 1);
    assert_int_equal(count_logged("bulk", QS_LOG_WARNING), 1);
    assert_int_equal(count_logged("hg", QS_LOG_MIN_DEBUG), 0);
    assert_int_equal(count_logged("na", QS_LOG_FATAL), 0);
    assert_int_equal(count_logged("sim", QS_LOG_ERROR), 0);

    /* NA_Set_log_level adds "na" (and so the plugins) at the new level. */
    NA_Set_log_level("debug");
    assert_int_equal(qs_log_get_level(), QS_LOG_DEBUG);
    assert_int_equal(count_logged("sim", QS_LOG_DEBUG), 1);
    assert_int_equal(count_logged("na", QS_LOG_DEBUG), 1);
    assert_int_equal(count_logged("hg", QS_LOG_DEBUG), 1);
    assert_int_equal(count_logged("margo", QS_LOG_ERROR), 0);

    /* "~name" silences one subsystem under an enabled parent. */
    HG_Set_log_subsys("hg_all,~sim");
    assert_int_equal(count_logged("sim", QS_LOG_FATAL), 0);
    assert_int_equal(count_logged("ofi", QS_LOG_DEBUG), 1);
    assert_int_equal(count_logged("margo", QS_LOG_DEBUG), 1);

    /* An unknown level name is refused and changes nothing. */
    HG_Set_log_level("loud");
    assert_int_equal(qs_log_get_level(), QS_LOG_DEBUG);
    assert_non_null(strstr(captured[ncaptured - 1], "\"loud\" is not a level"));
    NA_Set_log_level(NULL);
    assert_int_equal(qs_log_get_level(), QS_LOG_DEBUG);

    HG_Set_log_level("none");
    assert_int_equal(count_logged("hg", QS_LOG_FATAL), 0);
}

static void
test_pinned_threshold(void **state)
{
    (void) state;
    qs_log_set_threshold("margo", QS_LOG_TRACE);
    HG_Set_log_level("none");
    assert_int_equal(count_logged("margo", QS_LOG_TRACE), 1);
    assert_int_equal(count_logged("hg", QS_LOG_FATAL), 0);
    assert_int_equal(qs_log_threshold("margo"), QS_LOG_TRACE);
    /* Emit ignores thresholds (for layers that filter themselves). */
    qs_log_emit("hg", QS_LOG_INFO, "stats %s", "x");
    assert_string_equal(captured[ncaptured - 1],
                        "quicksilver: hg: info: stats x\n");
    qs_log_set_threshold("margo", QS_LOG_LEVEL_COUNT);
    assert_int_equal(count_logged("margo", QS_LOG_FATAL), 0);
}

static void
test_environment(void **state)
{
    (void) state;
    setenv("HG_LOG_LEVEL", "min_debug", 1);
    setenv("HG_LOG_SUBSYS", "na,~ofi", 1);
    qs_log_reset_from_env();
    HG_Set_log_func(capture);
    assert_int_equal(qs_log_get_level(), QS_LOG_MIN_DEBUG);
    assert_int_equal(qs_log_threshold("na"), QS_LOG_MIN_DEBUG);
    assert_int_equal(qs_log_threshold("sim"), QS_LOG_MIN_DEBUG);
    assert_int_equal(qs_log_threshold("ofi"), QS_LOG_NONE);
    assert_int_equal(qs_log_threshold("hg"), QS_LOG_NONE);
    assert_int_equal(count_logged("verbs", QS_LOG_MIN_DEBUG), 1);
    assert_int_equal(count_logged("verbs", QS_LOG_INFO), 0);

    /* A bad HG_LOG_LEVEL is reported and the default kept. */
    setenv("HG_LOG_LEVEL", "chatty", 1);
    unsetenv("HG_LOG_SUBSYS");
    qs_log_reset_from_env();
    assert_int_equal(qs_log_get_level(), QS_LOG_ERROR);
    assert_int_equal(qs_log_threshold("hg"), QS_LOG_ERROR);
}

static void
test_long_line_one_call(void **state)
{
    char big[3000];

    (void) state;
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    qs_log("proc", QS_LOG_ERROR, "%s|end", big);
    assert_int_equal(ncaptured, 1);
    assert_int_equal(strlen(captured[0]), strlen("quicksilver: proc: error: ") +
                                              strlen(big) + strlen("|end\n"));
    assert_string_equal(captured[0] + strlen(captured[0]) - 5, "|end\n");
}

static void *
log_many(void *arg)
{
    for (int i = 0; i < 200; i++)
        qs_log("hg", QS_LOG_ERROR, "thread %d line %d", (int) (intptr_t) arg,
               i);
    return NULL;
}

static void
test_threads_whole_lines(void **state)
{
    pthread_t threads[4];

    (void) state;
    for (intptr_t i = 0; i < 4; i++)
        assert_int_equal(
            pthread_create(&threads[i], NULL, log_many, (void *) i), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(ncaptured, 800);
    for (int i = 0; i < ncaptured; i++) {
        int t, l;
        assert_int_equal(sscanf(captured[i],
                                "quicksilver: hg: error: thread %d line %d", &t,
                                &l),
                         2);
        assert_non_null(strchr(captured[i], '\n'));
        assert_ptr_equal(strchr(captured[i], '\n'),
                         captured[i] + strlen(captured[i]) - 1);
    }
}

static void
test_streams(void **state)
{
    FILE *warn = tmpfile(), *err = tmpfile();
    char buf[256];

    (void) state;
    assert_non_null(warn);
    assert_non_null(err);
    HG_Set_log_func(NULL); /* default fprintf into the streams */
    HG_Set_log_level("warning");
    HG_Set_log_stream("warning", warn);
    HG_Set_log_stream("error", err);
    HG_Set_log_stream("bogus", stdout); /* refused, no change */
    qs_log("hg", QS_LOG_WARNING, "to the warning stream");
    qs_log("na", QS_LOG_FATAL, "to the error stream");
    rewind(warn);
    rewind(err);
    assert_non_null(fgets(buf, sizeof(buf), warn));
    assert_string_equal(buf,
                        "quicksilver: hg: warning: to the warning stream\n");
    assert_null(fgets(buf, sizeof(buf), warn));
    /* The refusal of "bogus" is itself an error line. */
    assert_non_null(fgets(buf, sizeof(buf), err));
    assert_non_null(strstr(buf, "\"bogus\" is not a level"));
    assert_non_null(fgets(buf, sizeof(buf), err));
    assert_string_equal(buf, "quicksilver: na: fatal: to the error stream\n");
    HG_Set_log_stream("warning", NULL);
    HG_Set_log_stream("fatal", NULL);
    fclose(warn);
    fclose(err);
}

/* The library's own errors go through the sink and obey its settings. */
static void
test_library_uses_sink(void **state)
{
    (void) state;
    assert_null(HG_Init("nosuchproto://host", false));
    assert_true(ncaptured >= 1);
    assert_non_null(strstr(captured[0], "quicksilver: na: error: "));
    capture_clear();

    HG_Set_log_subsys("hg_all,~na");
    assert_null(HG_Init("nosuchproto://host", false));
    for (int i = 0; i < ncaptured; i++)
        assert_null(strstr(captured[i], "quicksilver: na: "));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults_and_format, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_levels_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hg_na_setters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_threshold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line_one_call, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_threads_whole_lines, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_library_uses_sink, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
