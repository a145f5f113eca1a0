/*
 * Mercury 2.4 names around the RPC path, each checked for what it does:
 * NA_Get_protocol_info() / HG_Get_na_protocol_info() and their filter,
 * NA_Poll_try_wait() and NA_Progress(), HG_Diag_dump_counters() /
 * NA_Diag_dump_counters() (through the log function), the proc calls
 * hg_proc_set_size(), hg_proc_set_flags() / _get_flags() and
 * hg_proc_set_handle() / _get_handle(), na_init_info.addr_format, and the
 * event descriptor's absence on the simulated fabric, and the return
 * codes' names: HG_Error_to_string() / NA_Error_to_string() and the
 * one-argument HG_RETURN_VALUES / NA_RETURN_VALUES tables a program
 * expands with its own X.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mercury.h"
#include "mercury_proc.h"
#include "mercury_proc_string.h"
#include "na_config.h"

/* Whether the list holds class+protocol. */
static bool
listed(const struct na_protocol_info *list, const char *cls, const char *proto)
{
    for (; list != NULL; list = list->next)
        if (strcmp(list->class_name, cls) == 0 &&
            strcmp(list->protocol_name, proto) == 0)
            return true;
    return false;
}

static size_t
length(const struct na_protocol_info *list)
{
    size_t n = 0;

    for (; list != NULL; list = list->next) {
        assert_non_null(list->class_name);
        assert_non_null(list->protocol_name);
        assert_null(list->device_name);
        n++;
    }
    return n;
}

static void
test_protocol_info_all(void **state)
{
    struct na_protocol_info *list = NULL;

    (void) state;
    assert_int_equal(NA_Get_protocol_info(NULL, &list), NA_SUCCESS);
    assert_true(listed(list, "sim", "sim"));
#if QS_PLUGIN_SM_ENABLED
    assert_true(listed(list, "na", "sm"));
#endif
#if QS_PLUGIN_TCP_ENABLED
    assert_true(listed(list, "na", "tcp"));
#endif
#if QS_PLUGIN_OFI_ENABLED
    assert_true(listed(list, "ofi", "tcp"));
    assert_true(listed(list, "ofi", "sockets"));
    assert_true(listed(list, "ofi", "shm"));
#else
    assert_false(listed(list, "ofi", "tcp"));
#endif
#if QS_PLUGIN_VERBS_ENABLED
    assert_true(listed(list, "verbs", "verbs"));
#else
    assert_false(listed(list, "verbs", "verbs"));
#endif
    assert_false(listed(list, "sim", "tcp"));
    assert_int_equal(length(list),
                     1 + QS_PLUGIN_SM_ENABLED + QS_PLUGIN_TCP_ENABLED +
                         3 * QS_PLUGIN_OFI_ENABLED + QS_PLUGIN_VERBS_ENABLED);
    NA_Free_protocol_info(list);
}

/* "<protocol>" keeps every class serving it, "<class+protocol>" one. */
static void
test_protocol_info_filter(void **state)
{
    struct na_protocol_info *list = NULL;

    (void) state;
    assert_int_equal(NA_Get_protocol_info("tcp", &list), NA_SUCCESS);
    assert_int_equal(length(list),
                     QS_PLUGIN_TCP_ENABLED + QS_PLUGIN_OFI_ENABLED);
    assert_false(listed(list, "sim", "sim"));
    NA_Free_protocol_info(list);

    list = NULL;
    assert_int_equal(HG_Get_na_protocol_info("sim", &list), HG_SUCCESS);
    assert_int_equal(length(list), 1);
    assert_true(listed(list, "sim", "sim"));
    HG_Free_na_protocol_info(list);

    list = NULL;
    assert_int_equal(NA_Get_protocol_info("ofi+tcp://127.0.0.1:0", &list),
                     NA_SUCCESS);
    assert_int_equal(length(list), QS_PLUGIN_OFI_ENABLED);
    NA_Free_protocol_info(list);

    /* Nothing serves it: an empty list, not an error. */
    list = (struct na_protocol_info *) &list;
    assert_int_equal(NA_Get_protocol_info("bmi+tcp", &list), NA_SUCCESS);
    assert_null(list);
    list = (struct na_protocol_info *) &list;
    assert_int_equal(NA_Get_protocol_info("psm2", &list), NA_SUCCESS);
    assert_null(list);

    assert_int_equal(NA_Get_protocol_info("bad name!", &list), NA_INVALID_ARG);
    assert_int_equal(NA_Get_protocol_info(NULL, NULL), NA_INVALID_ARG);
    assert_int_equal(HG_Get_na_protocol_info("a b", &list), HG_INVALID_ARG);
    NA_Free_protocol_info(NULL);
}

static na_class_t *try_cls;

static void
recv_cb(const struct na_cb_info *info)
{
    int *n = info->arg;

    if (info->type == NA_CB_RECV_UNEXPECTED && info->ret == NA_SUCCESS)
        NA_Addr_free(try_cls, info->info.recv_unexpected.source);
    (*n)++;
}

/* NA_Poll_try_wait() is false exactly while completions wait for
 * NA_Trigger(); NA_Progress() reports whether one arrived. */
static void
test_poll_try_wait(void **state)
{
    na_class_t *cls = NA_Initialize("sim://trywait", true);
    na_context_t *ctx;
    na_op_id_t *send_op, *recv_op;
    na_addr_t self;
    char sbuf[8] = "ping", rbuf[64];
    int done = 0;
    unsigned int count = 0;

    (void) state;
    assert_non_null(cls);
    try_cls = cls;
    ctx = NA_Context_create(cls);
    assert_non_null(ctx);
    assert_false(NA_Poll_try_wait(NULL, ctx));
    assert_false(NA_Poll_try_wait(cls, NULL));
    assert_true(NA_Poll_try_wait(cls, ctx));
    assert_int_equal(NA_Progress(cls, ctx, 0), NA_TIMEOUT);
    assert_int_equal(NA_Progress(NULL, ctx, 0), NA_INVALID_ARG);
    /* No multi-receive through NA: refused, nothing posted. */
    {
        na_op_id_t *op = NA_Op_create(cls, NA_OP_MULTI);

        assert_false(NA_Has_opt_feature(cls, NA_OPT_MULTI_RECV));
        assert_int_equal(NA_Msg_multi_recv_unexpected(cls, ctx, recv_cb, &done,
                                                      rbuf, sizeof(rbuf), NULL,
                                                      op),
                         NA_OPNOTSUPPORTED);
        assert_int_equal(NA_Msg_multi_recv_unexpected(cls, ctx, recv_cb, &done,
                                                      NULL, 0, NULL, op),
                         NA_INVALID_ARG);
        assert_int_equal(NA_Context_get_completion_count(ctx), 0);
        NA_Op_destroy(cls, op);
    }

    send_op = NA_Op_create(cls, 0);
    recv_op = NA_Op_create(cls, 0);
    assert_int_equal(NA_Addr_self(cls, &self), NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_unexpected(cls, ctx, recv_cb, &done, rbuf,
                                            sizeof(rbuf), NULL, recv_op),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(cls, ctx, recv_cb, &done, sbuf,
                                            sizeof(sbuf), NULL, self, 0, 1,
                                            send_op),
                     NA_SUCCESS);
    for (int i = 0; i < 1000 && NA_Context_get_completion_count(ctx) < 2; i++)
        assert_true(NA_Progress(cls, ctx, 100) == NA_SUCCESS ||
                    NA_Context_get_completion_count(ctx) < 2);
    assert_int_equal(NA_Context_get_completion_count(ctx), 2);
    assert_false(NA_Poll_try_wait(cls, ctx));
    assert_int_equal(NA_Trigger(ctx, 2, &count), NA_SUCCESS);
    assert_int_equal(count, 2);
    assert_int_equal(done, 2);
    assert_true(NA_Poll_try_wait(cls, ctx));

    NA_Addr_free(cls, self);
    NA_Op_destroy(cls, send_op);
    NA_Op_destroy(cls, recv_op);
    assert_int_equal(NA_Context_destroy(cls, ctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
}

/* What the log function received. */
static char logged[8192];

static int
capture(FILE *stream, const char *format, ...)
{
    va_list ap;
    size_t len = strlen(logged);
    int n;

    (void) stream;
    va_start(ap, format);
    n = vsnprintf(logged + len, sizeof(logged) - len, format, ap);
    va_end(ap);
    return n;
}

static void
test_diag_dump(void **state)
{
    hg_class_t *cls = HG_Init("sim://diag", HG_TRUE);
    char want[128];

    (void) state;
    assert_non_null(cls);
    HG_Set_log_func(capture);
    /* At the default level nothing is written, as in Mercury. */
    logged[0] = '\0';
    HG_Set_log_level("error");
    HG_Diag_dump_counters();
    assert_string_equal(logged, "");

    HG_Set_log_level("min_debug");
    NA_Set_log_level("min_debug");
    HG_Diag_dump_counters();
    snprintf(want, sizeof(want), "diag: class %p (sim+sim): ", (void *) cls);
    assert_non_null(strstr(logged, want));
    assert_non_null(strstr(logged, "rpc_req_sent_count 0"));
    /* NA's line, with at least this class's NA class. */
    assert_non_null(strstr(logged, "diag: classes "));
    assert_null(strstr(logged, "diag: classes 0,"));

    logged[0] = '\0';
    NA_Diag_dump_counters();
    assert_null(strstr(logged, "diag: class 0x"));
    assert_non_null(strstr(logged, "diag: classes "));

    /* A finalized class is no longer reported. */
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
    logged[0] = '\0';
    HG_Diag_dump_counters();
    assert_null(strstr(logged, want));
    HG_Set_log_level("error");
    NA_Set_log_level("error");
    HG_Set_log_func(NULL);
}

static void
test_proc_set_size(void **state)
{
    hg_proc_t proc;
    char buf[8], small[4] = "abc";

    (void) state;
    assert_int_equal(hg_proc_create(NULL, HG_NOHASH, &proc), HG_SUCCESS);
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_ENCODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_set_size(proc, 4), HG_SUCCESS);
    assert_int_equal(hg_proc_get_size_left(proc), sizeof(buf));
    /* Growing moves the encoding into the extra buffer. */
    assert_int_equal(hg_proc_set_size(proc, 1000), HG_SUCCESS);
    assert_non_null(hg_proc_get_extra_buf(proc));
    assert_true(hg_proc_get_size_left(proc) >= 1000);
    assert_int_equal(hg_proc_memcpy(proc, small, 4), HG_SUCCESS);
    assert_int_equal(hg_proc_set_size(proc, 2), HG_INVALID_ARG);
    /* Decoding cannot ask for more than arrived. */
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_DECODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_set_size(proc, sizeof(buf)), HG_SUCCESS);
    assert_int_equal(hg_proc_set_size(proc, sizeof(buf) + 1), HG_OVERFLOW);
    assert_int_equal(hg_proc_set_size(HG_PROC_NULL, 1), HG_INVALID_ARG);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

static void
test_proc_flags_handle(void **state)
{
    hg_proc_t proc;
    char buf[8];
    int token;

    (void) state;
    assert_int_equal(hg_proc_create(NULL, HG_NOHASH, &proc), HG_SUCCESS);
    assert_int_equal(hg_proc_get_flags(proc), 0);
    hg_proc_set_flags(proc, HG_PROC_SM | HG_PROC_BULK_EAGER);
    assert_int_equal(hg_proc_get_flags(proc), 3);
    assert_null(hg_proc_get_handle(proc));
    hg_proc_set_handle(proc, (hg_handle_t) &token);
    assert_ptr_equal(hg_proc_get_handle(proc), &token);
    /* A reset clears the flags and keeps the handle. */
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_ENCODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_get_flags(proc), 0);
    assert_ptr_equal(hg_proc_get_handle(proc), &token);
    assert_int_equal(hg_proc_get_flags(HG_PROC_NULL), 0);
    assert_null(hg_proc_get_handle(HG_PROC_NULL));
    hg_proc_set_flags(HG_PROC_NULL, 1);
    hg_proc_set_handle(HG_PROC_NULL, NULL);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* IPv4 and "unspecified" are accepted; the other formats refused. */
static void
test_addr_format(void **state)
{
    struct na_init_info info = NA_INIT_INFO_INITIALIZER;
    na_class_t *cls;

    (void) state;
    assert_int_equal(info.addr_format, NA_ADDR_UNSPEC);
    info.addr_format = NA_ADDR_IPV4;
    cls = NA_Initialize_opt("sim", false, &info);
    assert_non_null(cls);
    assert_int_equal(NA_Finalize(cls), NA_SUCCESS);
    info.addr_format = NA_ADDR_IPV6;
    assert_null(NA_Initialize_opt("sim", false, &info));
    info.addr_format = NA_ADDR_NATIVE;
    assert_null(NA_Initialize_opt("sim", false, &info));
    assert_int_equal(NA_ADDR_FIREWALL, 1);
}

/* The simulated fabric has no descriptor: -1, and the other event calls
 * still drive the context. */
static void
test_event_sim(void **state)
{
    hg_class_t *cls = HG_Init("sim", HG_FALSE);
    hg_context_t *ctx;
    unsigned int count = 9, actual = 9;

    (void) state;
    assert_non_null(cls);
    ctx = HG_Context_create(cls);
    assert_non_null(ctx);
    assert_int_equal(HG_Event_get_wait_fd(ctx), -1);
    assert_false(HG_Event_ready(ctx));
    assert_int_equal(HG_Event_progress(ctx, &count), HG_SUCCESS);
    assert_int_equal(count, 0);
    assert_int_equal(HG_Event_trigger(ctx, 4, &actual), HG_SUCCESS);
    assert_int_equal(actual, 0);
    assert_int_equal(HG_Context_destroy(ctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
}

static void
test_string_object(void **state)
{
    hg_string_object_t a, b;
    char *owned = strdup("mine"), *old;

    (void) state;
    assert_int_equal(hg_string_object_init(&a), HG_SUCCESS);
    assert_null(a.data);
    assert_false(a.is_owned);
    assert_int_equal(hg_string_object_init_const_char(&a, "const", 0),
                     HG_SUCCESS);
    assert_true(a.is_const);
    assert_false(a.is_owned);
    /* Not owned: free leaves it. */
    assert_int_equal(hg_string_object_free(&a), HG_SUCCESS);
    assert_string_equal(a.data, "const");
    assert_int_equal(hg_string_object_dup(a, &b), HG_SUCCESS);
    assert_ptr_not_equal(b.data, a.data);
    assert_string_equal(b.data, "const");
    assert_true(b.is_owned);
    assert_false(b.is_const);
    assert_int_equal(hg_string_object_free(&b), HG_SUCCESS);
    assert_null(b.data);
    assert_int_equal(hg_string_object_init_char(&a, owned, 1), HG_SUCCESS);
    assert_false(a.is_const);
    /* Swap hands the old data (and its ownership) to the caller. */
    old = hg_string_object_swap(&a, "other");
    assert_ptr_equal(old, owned);
    assert_false(a.is_owned);
    assert_string_equal(a.data, "other");
    free(old);
    assert_int_equal(hg_string_object_init(NULL), HG_INVALID_ARG);
    assert_int_equal(hg_string_object_free(NULL), HG_INVALID_ARG);
    assert_int_equal(hg_string_object_dup(a, NULL), HG_INVALID_ARG);
    assert_null(hg_string_object_swap(NULL, NULL));
}

/* Round trip through the proc; hostile counts are refused. */
static void
test_string_object_proc(void **state)
{
    hg_string_object_t in, out;
    unsigned char buf[64];
    hg_proc_t proc;
    hg_size_t used;
    uint64_t huge = 1000;

    (void) state;
    assert_int_equal(hg_proc_create(NULL, HG_NOHASH, &proc), HG_SUCCESS);
    hg_string_object_init_const_char(&in, "hello", 0);
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_ENCODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_object_t(proc, &in), HG_SUCCESS);
    assert_int_equal(hg_proc_flush(proc), HG_SUCCESS);
    used = hg_proc_get_size_used(proc);
    assert_int_equal(used, 8 + 6);
    assert_int_equal(hg_proc_reset(proc, buf, used, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_object_t(proc, &out), HG_SUCCESS);
    assert_string_equal(out.data, "hello");
    assert_ptr_not_equal(out.data, in.data);
    assert_true(out.is_owned);
    assert_false(out.is_const);
    assert_int_equal(hg_proc_reset(proc, NULL, 0, HG_FREE), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_object_t(proc, &out), HG_SUCCESS);
    assert_null(out.data);
    /* A count beyond the bytes received. */
    memcpy(buf, &huge, sizeof(huge));
    assert_int_equal(hg_proc_reset(proc, buf, 16, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_object_t(proc, &out), HG_OVERFLOW);
    assert_null(out.data);
    assert_int_equal(hg_proc_hg_string_object_t(proc, NULL), HG_INVALID_ARG);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* The callback types in Mercury's order, named through NA_CB_TYPES. */
static void
test_cb_types(void **state)
{
#define X(a) #a,
    static const char *const names[] = {NA_CB_TYPES};
#undef X
    struct na_cb_info info;

    (void) state;
    assert_int_equal(sizeof(names) / sizeof(names[0]), NA_CB_MAX + 1);
    assert_string_equal(names[NA_CB_RECV_UNEXPECTED], "NA_CB_RECV_UNEXPECTED");
    assert_string_equal(names[NA_CB_MULTI_RECV_UNEXPECTED],
                        "NA_CB_MULTI_RECV_UNEXPECTED");
    assert_string_equal(names[NA_CB_GET], "NA_CB_GET");
    assert_int_equal(NA_CB_MULTI_RECV_UNEXPECTED, 2);
    assert_int_equal(NA_CB_MAX, 7);
    memset(&info, 0, sizeof(info));
    info.info.multi_recv_unexpected.last = true;
    assert_null(info.info.multi_recv_unexpected.actual_buf);
}

/* A program's own expansion of the table, as Bedrock's to_string writes
 * it: one argument per entry, a case per code. */
static const char *
user_hg_name(hg_return_t ret)
{
#define X(a)                                                                   \
    case a:                                                                    \
        return #a;
    switch (ret) {
        HG_RETURN_VALUES
    default:
        return "<unknown>";
    }
#undef X
}

/* Counted with an array, as a program sizing a table would. */
#define X(a) #a,
static const char *const user_na_names[] = {NA_RETURN_VALUES};
#undef X

/* Mercury's names, never prose, and a string for any value. */
static void
test_error_names(void **state)
{
    (void) state;
    assert_string_equal(HG_Error_to_string(HG_SUCCESS), "HG_SUCCESS");
    assert_string_equal(HG_Error_to_string(HG_TIMEOUT), "HG_TIMEOUT");
    assert_string_equal(HG_Error_to_string(HG_CANCELED), "HG_CANCELED");
    assert_string_equal(HG_Error_to_string(HG_BUSY), "HG_BUSY");
    assert_string_equal(HG_Error_to_string(HG_OTHER_ERROR), "HG_OTHER_ERROR");
    assert_string_equal(NA_Error_to_string(NA_TIMEOUT), "NA_TIMEOUT");
    assert_string_equal(NA_Error_to_string(NA_SUCCESS), "NA_SUCCESS");
    assert_string_equal(NA_Error_to_string(NA_HOSTFIREWALL), "NA_HOSTFIREWALL");
    /* Out of range: Mercury returns NULL, Quicksilver a fixed string. */
    assert_string_equal(HG_Error_to_string(HG_RETURN_MAX), "unknown error");
    assert_string_equal(HG_Error_to_string((hg_return_t) 1000),
                        "unknown error");
    assert_string_equal(HG_Error_to_string((hg_return_t) -1), "unknown error");
    assert_string_equal(NA_Error_to_string(NA_RETURN_MAX), "unknown error");
    assert_string_equal(NA_Error_to_string((na_return_t) -1), "unknown error");
    /* Every code in range is named by the table's own spelling. */
    for (int i = 0; i < HG_RETURN_MAX; i++)
        assert_string_equal(HG_Error_to_string((hg_return_t) i),
                            user_hg_name((hg_return_t) i));
    for (int i = 0; i < NA_RETURN_MAX; i++)
        assert_string_equal(NA_Error_to_string((na_return_t) i),
                            user_na_names[i]);
}

/* The tables have Mercury's shape: one argument per entry, the MAX code
 * last, and Mercury's values. */
static void
test_return_tables(void **state)
{
    (void) state;
    assert_string_equal(user_hg_name(HG_TIMEOUT), "HG_TIMEOUT");
    assert_string_equal(user_hg_name(HG_RETURN_MAX), "HG_RETURN_MAX");
    assert_string_equal(user_hg_name((hg_return_t) 1000), "<unknown>");
    assert_int_equal(sizeof(user_na_names) / sizeof(user_na_names[0]),
                     NA_RETURN_MAX + 1);
    assert_string_equal(user_na_names[NA_RETURN_MAX], "NA_RETURN_MAX");
    assert_int_equal(HG_TIMEOUT, 20);
    assert_int_equal(HG_CANCELED, 21);
    assert_int_equal(HG_RETURN_MAX, 27);
    assert_int_equal(NA_TIMEOUT, 20);
    assert_int_equal(NA_RETURN_MAX, 24);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_protocol_info_all),
        cmocka_unit_test(test_protocol_info_filter),
        cmocka_unit_test(test_poll_try_wait),
        cmocka_unit_test(test_diag_dump),
        cmocka_unit_test(test_proc_set_size),
        cmocka_unit_test(test_proc_flags_handle),
        cmocka_unit_test(test_addr_format),
        cmocka_unit_test(test_event_sim),
        cmocka_unit_test(test_string_object),
        cmocka_unit_test(test_string_object_proc),
        cmocka_unit_test(test_cb_types),
        cmocka_unit_test(test_error_names),
        cmocka_unit_test(test_return_tables),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
