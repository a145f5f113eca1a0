/*
 * The check NA_Initialize() makes of a plugin's tables of ops
 * (na_plugin_ops_missing, lib/na/na_plugin.h): every plugin of this build
 * passes it, and a table without a required op is named, not called.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "na/na_internal.h"

static void
test_built_plugins_complete(void **state)
{
    (void) state;
    for (size_t i = 0; na_plugin_table[i] != NULL; i++) {
        const char *missing = na_plugin_ops_missing(na_plugin_table[i]);

        if (missing != NULL)
            fail_msg("plugin %s lacks %s", na_plugin_table[i]->class_name,
                     missing);
    }
}

/* A copy of the sim plugin's tables with one field changed at a time. */
struct tables {
    struct na_class_ops top;
    struct na_context_ops context;
    struct na_addr_ops addr;
    struct na_addr_codec_ops codec;
    struct na_msg_ops msg;
    struct na_mem_ops mem;
};

static void
tables_copy(struct tables *t)
{
    const struct na_class_ops *sim = na_plugin_table[0];

    t->top = *sim;
    t->context = *sim->context;
    t->addr = *sim->addr;
    t->codec = *sim->addr->codec;
    t->msg = *sim->msg;
    t->mem = *sim->mem;
    t->top.context = &t->context;
    t->top.addr = &t->addr;
    t->addr.codec = &t->codec;
    t->top.msg = &t->msg;
    t->top.mem = &t->mem;
}

static void
test_missing_op_named(void **state)
{
    struct tables t;

    (void) state;
    tables_copy(&t);
    assert_null(na_plugin_ops_missing(&t.top));

    t.addr.lookup = NULL;
    assert_string_equal(na_plugin_ops_missing(&t.top), "addr->lookup");
    tables_copy(&t);
    t.codec.serialize = NULL;
    assert_string_equal(na_plugin_ops_missing(&t.top),
                        "addr->codec->serialize");
    tables_copy(&t);
    t.mem.rma = NULL;
    assert_string_equal(na_plugin_ops_missing(&t.top), "mem->rma");
    tables_copy(&t);
    t.top.msg = NULL;
    assert_string_equal(na_plugin_ops_missing(&t.top), "msg table");
    tables_copy(&t);
    t.msg.op_size = 0;
    assert_string_equal(na_plugin_ops_missing(&t.top), "msg->op_size");
}

static void *
buf_alloc_alone(na_class_t *na_class, size_t buf_size, unsigned long flags,
                void **plugin_data)
{
    (void) na_class;
    (void) buf_size;
    (void) flags;
    (void) plugin_data;
    return NULL;
}

/* Optional ops may be NULL; message buffers come in pairs. */
static void
test_optional_ops(void **state)
{
    struct tables t;

    (void) state;
    tables_copy(&t);
    t.context.clock_now = NULL;
    t.context.poll_try_wait = NULL;
    t.addr.cmp = NULL;
    t.addr.set_remove = NULL;
    t.msg.op_init = NULL;
    t.msg.op_fini = NULL;
    t.mem.handle_create_segments = NULL;
    t.top.auto_initialize = NULL;
    t.top.cleanup = NULL;
    assert_null(na_plugin_ops_missing(&t.top));

    t.msg.buf_alloc = buf_alloc_alone;
    t.msg.buf_free = NULL;
    assert_string_equal(na_plugin_ops_missing(&t.top),
                        "msg->buf_free (set with buf_alloc)");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_built_plugins_complete),
        cmocka_unit_test(test_missing_op_named),
        cmocka_unit_test(test_optional_ops),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
