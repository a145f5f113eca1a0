/*
 * NA core: info-string parsing, error strings, argument checking and
 * plugin selection. Runs without any network.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "na.h"

struct parse_case {
    const char *info;
    na_return_t ret;
    const char *class_name, *protocol, *host;
};

static void
test_info_string_parse(void **state)
{
    (void) state;
    static const struct parse_case cases[] = {
        {"sim", NA_SUCCESS, "", "sim", ""},
        {"sim://server", NA_SUCCESS, "", "sim", "server"},
        {"ofi+tcp://127.0.0.1:1234", NA_SUCCESS, "ofi", "tcp",
         "127.0.0.1:1234"},
        {"ofi+tcp;ofi_rxm://10.0.0.1:0", NA_SUCCESS, "ofi", "tcp;ofi_rxm",
         "10.0.0.1:0"},
        {"na+sm", NA_SUCCESS, "na", "sm", ""},
        {"tcp", NA_SUCCESS, "", "tcp", ""},
        {"verbs://rxe0/10.11.0.1:0", NA_SUCCESS, "", "verbs",
         "rxe0/10.11.0.1:0"},
        {"", NA_INVALID_ARG, "", "", ""},
        {"+tcp", NA_INVALID_ARG, "", "", ""},
        {"ofi+", NA_INVALID_ARG, "", "", ""},
        {"://host", NA_INVALID_ARG, "", "", ""},
        {"of i+tcp", NA_INVALID_ARG, "", "", ""},
        {"sim://bad host", NA_INVALID_ARG, "", "", ""},
        {"ofi+tcp+x://h", NA_INVALID_ARG, "", "", ""},
    };
    char cls[64], proto[64], host[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        na_return_t ret =
            NA_Info_string_parse(cases[i].info, cls, proto, host, sizeof(cls));
        if (ret != cases[i].ret)
            fail_msg("\"%s\": got %s, want %s", cases[i].info,
                     NA_Error_to_string(ret), NA_Error_to_string(cases[i].ret));
        if (ret != NA_SUCCESS)
            continue;
        assert_string_equal(cls, cases[i].class_name);
        assert_string_equal(proto, cases[i].protocol);
        assert_string_equal(host, cases[i].host);
    }
}

static void
test_info_string_overflow(void **state)
{
    (void) state;
    char cls[8], proto[8], host[8];
    char longhost[300];

    assert_int_equal(
        NA_Info_string_parse("sim://0123456789", cls, proto, host, sizeof(cls)),
        NA_OVERFLOW);
    assert_int_equal(NA_Info_string_parse("verylongclass+tcp", cls, proto, host,
                                          sizeof(cls)),
                     NA_OVERFLOW);
    assert_int_equal(NA_Info_string_parse(NULL, cls, proto, host, sizeof(cls)),
                     NA_INVALID_ARG);
    memset(longhost, 'a', sizeof(longhost) - 1);
    longhost[sizeof(longhost) - 1] = '\0';
    memcpy(longhost, "sim://", 6);
    /* NA_Initialize must refuse it cleanly, not truncate it. */
    assert_null(NA_Initialize(longhost, false));
}

static void
test_error_strings(void **state)
{
    (void) state;
    assert_string_equal(NA_Error_to_string(NA_SUCCESS), "NA_SUCCESS");
    assert_string_equal(NA_Error_to_string(NA_CANCELED), "NA_CANCELED");
    assert_string_equal(NA_Error_to_string(NA_RETURN_MAX), "unknown error");
    assert_string_equal(NA_Error_to_string((na_return_t) -1), "unknown error");
    /* Every code has its own non-empty string. */
    for (int i = 0; i < NA_RETURN_MAX; i++) {
        const char *s = NA_Error_to_string((na_return_t) i);
        assert_non_null(s);
        assert_true(strlen(s) > 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(s, NA_Error_to_string((na_return_t) j));
    }
    /* The documented order. */
    assert_int_equal(NA_SUCCESS, 0);
    assert_int_equal(NA_PERMISSION, 1);
    assert_int_equal(NA_NOENTRY, 2);
    assert_int_equal(NA_INVALID_ARG, 11);
    assert_int_equal(NA_TIMEOUT, 20);
    assert_int_equal(NA_CANCELED, 21);
    assert_int_equal(NA_HOSTFIREWALL, 23);
}

static void
test_plugin_selection(void **state)
{
    (void) state;
    /* No plugin serves these: a clear error, no crash. */
    assert_null(NA_Initialize("nosuchproto", false));
    assert_null(NA_Initialize("nosuchclass+sim", false));
    assert_null(NA_Initialize("", false));
    assert_null(NA_Initialize(NULL, false));

    na_class_t *cls = NA_Initialize("sim", false);
    assert_non_null(cls);
    assert_string_equal(NA_Get_class_name(cls), "sim");
    assert_string_equal(NA_Get_class_protocol(cls), "sim");
    assert_false(NA_Is_listening(cls));
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);

    cls = NA_Initialize("sim+sim://selection", true);
    assert_non_null(cls);
    assert_true(NA_Is_listening(cls));
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
}

static void
test_bad_arguments(void **state)
{
    (void) state;
    na_class_t *cls = NA_Initialize("sim://badargs", true);
    assert_non_null(cls);
    na_context_t *ctx = NA_Context_create(cls);
    assert_non_null(ctx);
    na_addr_t addr = NA_ADDR_NULL;
    char buf[16];
    size_t size = sizeof(buf);

    assert_int_equal(NA_Addr_lookup(NULL, "sim://x", &addr), NA_INVALID_ARG);
    assert_int_equal(NA_Addr_lookup(cls, NULL, &addr), NA_INVALID_ARG);
    assert_int_equal(NA_Addr_lookup(cls, "sim://x", NULL), NA_INVALID_ARG);
    assert_int_equal(NA_Addr_to_string(cls, buf, &size, NA_ADDR_NULL),
                     NA_INVALID_ARG);
    assert_int_equal(NA_Msg_send_unexpected(cls, ctx, NULL, NULL, buf, 4, NULL,
                                            NA_ADDR_NULL, 0, 0, NULL),
                     NA_INVALID_ARG);
    assert_int_equal(
        NA_Msg_recv_unexpected(cls, ctx, NULL, NULL, NULL, 4, NULL, NULL),
        NA_INVALID_ARG);
    assert_int_equal(NA_Mem_handle_create(cls, buf, sizeof(buf), 0x7, NULL),
                     NA_INVALID_ARG);
    na_mem_handle_t mh;
    assert_int_equal(NA_Mem_handle_create(cls, buf, sizeof(buf), 0x7, &mh),
                     NA_INVALID_ARG);
    assert_int_equal(NA_Trigger(NULL, 1, NULL), NA_INVALID_ARG);
    assert_int_equal(NA_Trigger(ctx, 1, NULL), NA_TIMEOUT);
    assert_int_equal(NA_Poll(cls, NULL, NULL), NA_INVALID_ARG);

    /* Finalizing with a live context is refused, and loses nothing. */
    assert_int_equal(NA_Finalize(cls), NA_BUSY);
    assert_int_equal(NA_Context_destroy(cls, ctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    assert_int_equal(NA_Finalize(NULL), NA_SUCCESS);
}

/* What the op-lifecycle test's callback saw, and a repost from inside. */
struct op_probe {
    int calls;
    na_return_t ret;
    na_class_t *cls;
    na_context_t *ctx;
    na_op_id_t *op;
    char *buf;
    na_return_t repost;
};

static void
probe_cb(const struct na_cb_info *info)
{
    struct op_probe *p = info->arg;

    p->calls++;
    p->ret = info->ret;
    /* The core makes the op id idle before the callback runs. */
    if (p->calls == 1)
        p->repost = NA_Msg_recv_unexpected(p->cls, p->ctx, probe_cb, p, p->buf,
                                           16, NULL, p->op);
}

/*
 * The core owns an op id's life: it refuses a busy op (post and destroy),
 * an op id of another class, and sizes and tags over the plugin's limits,
 * before any plugin code runs; cancel of an idle op does nothing; and the
 * op is reusable from inside its own callback.
 */
static void
test_op_lifecycle(void **state)
{
    (void) state;
    na_class_t *a = NA_Initialize("sim://oplife_a", true);
    na_class_t *b = NA_Initialize("sim://oplife_b", true);
    assert_non_null(a);
    assert_non_null(b);
    na_context_t *ca = NA_Context_create(a), *cb = NA_Context_create(b);
    na_op_id_t *op = NA_Op_create(a, 0), *op_b = NA_Op_create(b, 0);
    char buf[16], big[8192];
    na_addr_t to_b = NA_ADDR_NULL;
    struct op_probe p = {.cls = a, .ctx = ca, .op = op, .buf = buf};

    assert_non_null(op);
    assert_int_equal(NA_Addr_lookup(a, "sim://oplife_b", &to_b), NA_SUCCESS);
    memset(big, 0, sizeof(big));

    /* Idle: cancel is a no-op, destroy of another class's op is refused. */
    assert_int_equal(NA_Cancel(a, ca, op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(b, op), NA_INVALID_ARG);
    assert_int_equal(
        NA_Msg_recv_unexpected(b, cb, probe_cb, &p, buf, sizeof(buf), NULL, op),
        NA_INVALID_ARG);
    assert_int_equal(NA_Msg_send_unexpected(a, ca, probe_cb, &p, big,
                                            sizeof(big), NULL, to_b, 0, 0, op),
                     NA_MSGSIZE);
    assert_int_equal(NA_Msg_send_expected(a, ca, probe_cb, &p, buf, 4, NULL,
                                          to_b, 0, NA_Msg_get_max_tag(a) + 1u,
                                          op),
                     NA_INVALID_ARG);

    /* Posted: a second post and a destroy are refused. */
    assert_int_equal(
        NA_Msg_recv_unexpected(a, ca, probe_cb, &p, buf, sizeof(buf), NULL, op),
        NA_SUCCESS);
    assert_int_equal(
        NA_Msg_recv_unexpected(a, ca, probe_cb, &p, buf, sizeof(buf), NULL, op),
        NA_BUSY);
    assert_int_equal(NA_Op_destroy(a, op), NA_BUSY);

    /* Completed but not triggered: still busy. */
    assert_int_equal(NA_Cancel(a, ca, op), NA_SUCCESS);
    for (int i = 0; i < 100 && NA_Context_get_completion_count(ca) == 0; i++)
        (void) NA_Poll(a, ca, NULL);
    assert_int_equal(NA_Context_get_completion_count(ca), 1);
    assert_int_equal(NA_Op_destroy(a, op), NA_BUSY);
    assert_int_equal(p.calls, 0);

    /* Triggered: the callback reposts the same op id. */
    assert_int_equal(NA_Trigger(ca, 1, NULL), NA_SUCCESS);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.ret, NA_CANCELED);
    assert_int_equal(p.repost, NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(a, op), NA_BUSY);
    assert_int_equal(NA_Cancel(a, ca, op), NA_SUCCESS);
    for (int i = 0; i < 100 && p.calls < 2; i++) {
        (void) NA_Poll(a, ca, NULL);
        (void) NA_Trigger(ca, 1, NULL);
    }
    assert_int_equal(p.calls, 2);
    assert_int_equal(NA_Op_destroy(a, op), NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(b, op_b), NA_SUCCESS);

    NA_Addr_free(a, to_b);
    assert_int_equal(NA_Context_destroy(a, ca), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(b, cb), NA_SUCCESS);
    assert_int_equal(NA_Finalize(a), NA_SUCCESS);
    assert_int_equal(NA_Finalize(b), NA_SUCCESS);
}

/* Completion order: each callback writes its op's number here. */
#define ORDER_OPS 28
static int order_seen[ORDER_OPS];
static int order_n;

static void
order_cb(const struct na_cb_info *info)
{
    assert_int_equal(info->ret, NA_CANCELED);
    if (order_n < ORDER_OPS)
        order_seen[order_n] = (int) (intptr_t) info->arg;
    order_n++;
}

/* Complete ops first..last-1 in that order (a cancel each, polled until
 * its completion is queued), none triggered. */
static void
order_complete(na_class_t *a, na_context_t *ca, na_op_id_t **ops, int first,
               int last)
{
    for (int i = first; i < last; i++) {
        unsigned int before = NA_Context_get_completion_count(ca);

        assert_int_equal(NA_Cancel(a, ca, ops[i]), NA_SUCCESS);
        for (int k = 0;
             k < 1000 && NA_Context_get_completion_count(ca) == before; k++)
            (void) NA_Poll(a, ca, NULL);
        assert_int_equal(NA_Context_get_completion_count(ca), before + 1);
    }
}

/*
 * The completion queue is first in, first out across its ring and its
 * overflow list: 20 completions fill the ring (NA_CQ_RING, 8) and spill
 * over; 5 more queued after three were triggered must still come after
 * the rest; and once drained, the ring is used again.
 */
static void
test_completion_order(void **state)
{
    (void) state;
    na_class_t *a = NA_Initialize("sim://order_a", true);
    assert_non_null(a);
    na_context_t *ca = NA_Context_create(a);
    na_op_id_t *ops[ORDER_OPS];
    static char bufs[ORDER_OPS][16];
    unsigned int n = 0;

    assert_non_null(ca);
    order_n = 0;
    for (int i = 0; i < ORDER_OPS; i++) {
        ops[i] = NA_Op_create(a, 0);
        assert_non_null(ops[i]);
        assert_int_equal(NA_Msg_recv_unexpected(a, ca, order_cb,
                                                (void *) (intptr_t) i, bufs[i],
                                                sizeof(bufs[i]), NULL, ops[i]),
                         NA_SUCCESS);
    }
    order_complete(a, ca, ops, 0, 20);
    assert_int_equal(NA_Trigger(ca, 3, &n), NA_SUCCESS);
    assert_int_equal(n, 3);
    order_complete(a, ca, ops, 20, 25);
    assert_int_equal(NA_Context_get_completion_count(ca), 22);
    assert_int_equal(NA_Trigger(ca, 100, &n), NA_SUCCESS);
    assert_int_equal(n, 22);
    assert_int_equal(NA_Context_get_completion_count(ca), 0);
    order_complete(a, ca, ops, 25, ORDER_OPS);
    assert_int_equal(NA_Trigger(ca, 100, &n), NA_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(order_n, ORDER_OPS);
    for (int i = 0; i < ORDER_OPS; i++)
        assert_int_equal(order_seen[i], i);
    assert_int_equal(NA_Trigger(ca, 1, NULL), NA_TIMEOUT);

    for (int i = 0; i < ORDER_OPS; i++)
        assert_int_equal(NA_Op_destroy(a, ops[i]), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(a, ca), NA_SUCCESS);
    assert_int_equal(NA_Finalize(a), NA_SUCCESS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_string_parse),
        cmocka_unit_test(test_info_string_overflow),
        cmocka_unit_test(test_error_strings),
        cmocka_unit_test(test_plugin_selection),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_op_lifecycle),
        cmocka_unit_test(test_completion_order),
    };
    return cmocka_run_group_tests_name("na", tests, NULL, NULL);
}
