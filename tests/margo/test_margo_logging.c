/*
 * Logging (margo-logging.h): custom loggers per instance and global,
 * levels, the default logger writing through the library's log sink
 * (HG_Set_log_func sees its lines), and MARGO_LOG_LEVEL from the
 * environment (this program sets it to "info" before the first Margo
 * call; see main()).
 */
#include "tm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tg_capture {
    char last[256];
    int count[7];
};

#define TG_FN(lvl)                                                             \
    static void tg_##lvl(void *uargs, const char *msg)                         \
    {                                                                          \
        struct tg_capture *c = uargs;                                          \
        snprintf(c->last, sizeof(c->last), "%s:%s", #lvl, msg);                \
        c->count[MARGO_LOG_##lvl]++;                                           \
    }
TG_FN(TRACE)
TG_FN(DEBUG)
TG_FN(INFO)
TG_FN(WARNING)
TG_FN(ERROR)
TG_FN(CRITICAL)

static struct margo_logger
tg_logger(struct tg_capture *c)
{
    struct margo_logger l = {c,          tg_TRACE, tg_DEBUG,   tg_INFO,
                             tg_WARNING, tg_ERROR, tg_CRITICAL};
    return l;
}

/* What the default logger hands the sink's log function. */
static char tg_sink_last[512];
static int tg_sink_count;
static int
tg_sink(FILE *stream, const char *format, ...)
{
    va_list ap;

    (void) stream;
    va_start(ap, format);
    vsnprintf(tg_sink_last, sizeof(tg_sink_last), format, ap);
    va_end(ap);
    tg_sink_count++;
    return 0;
}

static margo_instance_id
tg_init(void)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), "log");
    mid = margo_init(addr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(mid);
    return mid;
}

static void
test_custom_logger_and_levels(void **state)
{
    margo_instance_id mid = tg_init();
    struct tg_capture c = {0};
    struct margo_logger l = tg_logger(&c);

    (void) state;
    assert_int_equal(margo_set_logger(mid, &l), 0);
    assert_int_equal(margo_set_logger(MARGO_INSTANCE_NULL, &l), -1);
    /* MARGO_LOG_LEVEL=info from the environment: debug is filtered. */
    margo_debug(mid, "hidden %d", 1);
    assert_int_equal(c.count[MARGO_LOG_DEBUG], 0);
    margo_info(mid, "shown %d\n", 2);
    assert_string_equal(c.last, "INFO:shown 2");
    assert_int_equal(margo_set_log_level(mid, MARGO_LOG_TRACE), 0);
    margo_trace(mid, "t");
    margo_debug(mid, "d");
    margo_warning(mid, "w");
    margo_error(mid, "e");
    margo_critical(mid, "c");
    assert_int_equal(c.count[MARGO_LOG_TRACE], 1);
    assert_int_equal(c.count[MARGO_LOG_DEBUG], 1);
    assert_int_equal(c.count[MARGO_LOG_WARNING], 1);
    assert_int_equal(c.count[MARGO_LOG_ERROR], 1);
    assert_int_equal(c.count[MARGO_LOG_CRITICAL], 1);
    assert_string_equal(c.last, "CRITICAL:c");
    assert_int_equal(margo_set_log_level(mid, MARGO_LOG_ERROR), 0);
    margo_warning(mid, "w2");
    assert_int_equal(c.count[MARGO_LOG_WARNING], 1);
    assert_int_equal(margo_set_log_level(mid, (margo_log_level) 99), -1);
    /* A logger with a NULL function drops that level. */
    l.error = NULL;
    assert_int_equal(margo_set_logger(mid, &l), 0);
    margo_error(mid, "dropped");
    assert_int_equal(c.count[MARGO_LOG_ERROR], 1);
    margo_finalize(mid);
}

static void
test_global_logger(void **state)
{
    struct tg_capture c = {0};
    struct margo_logger l = tg_logger(&c);
    margo_instance_id mid;

    (void) state;
    assert_int_equal(margo_set_global_logger(&l), 0);
    margo_warning(MARGO_INSTANCE_NULL, "global %s", "w");
    assert_string_equal(c.last, "WARNING:global w");
    assert_int_equal(margo_set_global_log_level(MARGO_LOG_ERROR), 0);
    margo_warning(MARGO_INSTANCE_NULL, "filtered");
    assert_int_equal(c.count[MARGO_LOG_WARNING], 1);
    /* New instances inherit the global logger and level. */
    mid = tg_init();
    margo_error(mid, "from instance");
    assert_string_equal(c.last, "ERROR:from instance");
    margo_warning(mid, "filtered too");
    assert_int_equal(c.count[MARGO_LOG_WARNING], 1);
    margo_finalize(mid);
    assert_int_equal(margo_set_global_logger(NULL), 0);
    assert_int_equal(margo_set_global_log_level(MARGO_LOG_INFO), 0);
}

static void
test_default_logger_uses_sink(void **state)
{
    margo_instance_id mid = tg_init();

    (void) state;
    HG_Set_log_func(tg_sink);
    tg_sink_count = 0;
    margo_info(mid, "Server running at address %s\n", "sim://x");
    assert_int_equal(tg_sink_count, 1);
    assert_non_null(strstr(tg_sink_last, "margo"));
    assert_non_null(strstr(tg_sink_last, "Server running at address sim://x"));
    margo_debug(mid, "below the level");
    assert_int_equal(tg_sink_count, 1);
    HG_Set_log_func(NULL);
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_custom_logger_and_levels),
        cmocka_unit_test(test_global_logger),
        cmocka_unit_test(test_default_logger_uses_sink),
    };

    setenv("MARGO_LOG_LEVEL", "info", 1);
    return tm_main("margo_logging", tests, sizeof(tests) / sizeof(tests[0]));
}
