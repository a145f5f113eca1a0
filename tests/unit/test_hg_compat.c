/*
 * Mercury 2.4 names beyond the core RPC path, each checked for what it
 * does: versions and HG_Init_opt2()'s reading of older structures,
 * no_overflow and the other 2.4 init fields, payload sizes, the handle
 * create callback, HG_Context_unpost(), HG_Addr_set_remove(),
 * HG_Bulk_create_attr(), NA_Initialize_opt2() / NA_Cleanup() and the
 * request helper. Runs on the simulated fabric.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hg/hg_internal.h"
#include "mercury.h"
#include "mercury_macros.h"
#include "mercury_proc_string.h"
#include "mercury_request.h"

MERCURY_GEN_PROC(echo_t, ((hg_const_string_t) (s)))
/* The output is the input and 8 more bytes, so the two sizes differ. */
MERCURY_GEN_PROC(echo_out_t, ((hg_const_string_t) (s))((uint64_t) (n)))

/* What the server's handler saw. */
static struct {
    int calls;
    hg_size_t in_size, out_size;
    void *data;
} seen;

static hg_return_t
echo_rpc(hg_handle_t handle)
{
    echo_t in;
    echo_out_t out;
    hg_return_t ret;

    seen.calls++;
    seen.data = HG_Get_data(handle);
    seen.in_size = HG_Get_input_payload_size(handle);
    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    out.s = in.s;
    out.n = strlen(in.s);
    ret = HG_Respond(handle, NULL, NULL, &out);
    seen.out_size = ret == HG_SUCCESS ? HG_Get_output_payload_size(handle) : 0;
    HG_Free_input(handle, &in);
    return HG_Destroy(handle);
}

struct env {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    hg_addr_t addr;
    hg_id_t id;
};

/* A server and a client class; either may get init options (2.4). */
static void
env_init(struct env *e, const struct hg_init_info *sinfo,
         const struct hg_init_info *cinfo)
{
    struct hg_init_info default_info = HG_INIT_INFO_INITIALIZER;

    memset(&seen, 0, sizeof(seen));
    e->server = HG_Init_opt2("sim://compat", HG_TRUE, HG_VERSION(2, 4),
                             sinfo ? sinfo : &default_info);
    e->client = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4),
                             cinfo ? cinfo : &default_info);
    assert_non_null(e->server);
    assert_non_null(e->client);
}

static void
env_start(struct env *e)
{
    e->sctx = HG_Context_create(e->server);
    e->cctx = HG_Context_create(e->client);
    assert_non_null(e->sctx);
    assert_non_null(e->cctx);
    MERCURY_REGISTER(e->server, "echo", echo_t, echo_out_t, echo_rpc);
    e->id = MERCURY_REGISTER(e->client, "echo", echo_t, echo_out_t, NULL);
    assert_int_equal(HG_Addr_lookup(e->client, "sim://compat", &e->addr),
                     HG_SUCCESS);
}

static void
env_fini(struct env *e)
{
    for (int i = 0; i < 10; i++) {
        HG_Progress(e->sctx, 0);
        HG_Trigger(e->sctx, 0, 64, NULL);
        HG_Progress(e->cctx, 0);
        HG_Trigger(e->cctx, 0, 64, NULL);
    }
    assert_int_equal(HG_Addr_free(e->client, e->addr), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->cctx), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->client), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->server), HG_SUCCESS);
}

struct call {
    int done;
    hg_return_t ret;
};

static hg_return_t
call_cb(const struct hg_cb_info *info)
{
    struct call *c = info->arg;

    c->ret = info->ret;
    c->done = 1;
    return HG_SUCCESS;
}

static void
drive(struct env *e, const int *done)
{
    for (int i = 0; i < 100000 && !*done; i++) {
        HG_Progress(e->cctx, 100);
        HG_Trigger(e->cctx, 0, 64, NULL);
        HG_Progress(e->sctx, 100);
        HG_Trigger(e->sctx, 0, 64, NULL);
    }
    assert_true(*done);
}

/* Forward "echo" with `s`; returns HG_Forward's code or the callback's. */
static hg_return_t
echo(struct env *e, const char *s, hg_handle_t *keep)
{
    echo_t in = {.s = s};
    struct call c = {0, HG_SUCCESS};
    hg_handle_t h;
    hg_return_t ret;

    assert_int_equal(HG_Create(e->cctx, e->addr, e->id, &h), HG_SUCCESS);
    ret = HG_Forward(h, call_cb, &c, &in);
    if (ret == HG_SUCCESS) {
        drive(e, &c.done);
        ret = c.ret;
    }
    if (keep != NULL)
        *keep = h;
    else
        HG_Destroy(h);
    return ret;
}

static char *
big_string(size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, 'q', n);
    s[n] = '\0';
    return s;
}

static void
test_versions(void **state)
{
    unsigned int major = 0, minor = 0, patch = 9;

    (void) state;
    assert_int_equal(HG_VERSION(2, 4), (2 << 16) | 4);
    assert_int_equal(HG_MAJOR(HG_VERSION(2, 4)), 2);
    assert_int_equal(HG_MINOR(HG_VERSION(2, 4)), 4);
    assert_true(HG_VERSION_GE(HG_VERSION(2, 4), HG_VERSION(2, 3)));
    assert_true(HG_VERSION_LT(HG_VERSION(2, 2), HG_VERSION(2, 3)));
    assert_int_equal(HG_Version_get(&major, &minor, &patch), HG_SUCCESS);
    assert_int_equal(major, 2);
    assert_int_equal(minor, 4);
    assert_int_equal(patch, HG_VERSION_PATCH);
    assert_int_equal(HG_Version_get(NULL, &minor, NULL), HG_SUCCESS);

    assert_int_equal(NA_VERSION(5, 0), 5 << 16);
    NA_Version_get(&major, &minor, &patch);
    assert_int_equal(major, NA_VERSION_MAJOR);
    assert_int_equal(minor, NA_VERSION_MINOR);
    assert_int_equal(patch, NA_VERSION_PATCH);
    NA_Version_get(NULL, NULL, NULL);
}

/* Fields newer than the version given are read as their defaults. */
static void
test_init_opt2_versions(void **state)
{
    struct hg_init_info info = HG_INIT_INFO_INITIALIZER;
    hg_class_t *cls;

    (void) state;
    /* Without a structure the version does not matter. */
    cls = HG_Init_opt2("sim", HG_FALSE, 0, NULL);
    assert_non_null(cls);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
    /* With one, 0 and other major versions are refused. */
    assert_null(HG_Init_opt2("sim", HG_FALSE, 0, &info));
    assert_null(HG_Init_opt2("sim", HG_FALSE, HG_VERSION(3, 0), &info));
    assert_null(HG_Init_opt2("sim", HG_FALSE, HG_VERSION(1, 9), &info));

    /* A bad 2.4 field is refused under 2.4 and ignored under 2.3. */
    info.traffic_class = (enum na_traffic_class) 42;
    assert_null(HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &info));
    cls = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 3), &info);
    assert_non_null(cls);
    assert_int_equal(cls->info.traffic_class, NA_TC_UNSPEC);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
    info.traffic_class = NA_TC_UNSPEC;
    info.multi_recv_op_max = 65;
    assert_null(HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &info));
    info.multi_recv_op_max = 2;
    info.multi_recv_copy_threshold = 3;
    assert_null(HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &info));
    info.multi_recv_copy_threshold = 2;
    info.traffic_class = NA_TC_BULK_DATA;
    info.no_overflow = true;
    cls = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &info);
    assert_non_null(cls);
    assert_int_equal(cls->info.multi_recv_op_max, 2);
    assert_true(cls->info.no_overflow);
    assert_int_equal(cls->info.traffic_class, NA_TC_BULK_DATA);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);

    /* A zeroed structure, as older programs pass: 0 means the defaults. */
    {
        struct hg_init_info zero;

        memset(&zero, 0, sizeof(zero));
        cls = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &zero);
        assert_non_null(cls);
        assert_int_equal(cls->info.request_post_init, 256);
        assert_int_equal(cls->info.request_post_incr, 256);
        assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
        zero.request_post_incr = (hg_uint32_t) -1;
        cls = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 4), &zero);
        assert_non_null(cls);
        assert_int_equal(cls->info.request_post_incr, 1);
        assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
    }

    /* 2.2 (and HG_Init_opt) also ignore the 2.3 fields. */
    info.release_input_early = HG_TRUE;
    info.no_multi_recv = HG_TRUE;
    cls = HG_Init_opt2("sim", HG_FALSE, HG_VERSION(2, 3), &info);
    assert_true(cls->info.release_input_early && cls->info.no_multi_recv);
    assert_false(cls->info.no_overflow);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
    cls = HG_Init_opt("sim", HG_FALSE, &info);
    assert_non_null(cls);
    assert_false(cls->info.release_input_early || cls->info.no_multi_recv);
    assert_int_equal(cls->info.multi_recv_op_max, 0);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
}

static void
test_payload_sizes(void **state)
{
    struct env e;
    hg_handle_t h;
    hg_size_t small_in, big_in, eager;
    char *big;

    (void) state;
    env_init(&e, NULL, NULL);
    env_start(&e);
    assert_int_equal(HG_Get_input_payload_size(HG_HANDLE_NULL), 0);
    assert_int_equal(HG_Get_output_payload_size(HG_HANDLE_NULL), 0);
    assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_SUCCESS);
    assert_int_equal(HG_Get_input_payload_size(h), 0);
    HG_Destroy(h);

    assert_int_equal(echo(&e, "hello", &h), HG_SUCCESS);
    small_in = HG_Get_input_payload_size(h);
    assert_true(small_in > 5);
    assert_int_equal(small_in, seen.in_size);
    assert_int_equal(HG_Get_output_payload_size(h), seen.out_size);
    assert_int_equal(seen.out_size, small_in + 8);
    HG_Destroy(h);

    /* Through bulk (above the eager size) the size is the whole payload. */
    eager = HG_Class_get_input_eager_size(e.client);
    big = big_string(eager + 1000);
    assert_int_equal(echo(&e, big, &h), HG_SUCCESS);
    big_in = HG_Get_input_payload_size(h);
    assert_int_equal(big_in - small_in, strlen(big) - 5);
    assert_int_equal(seen.in_size, big_in);
    assert_int_equal(HG_Get_output_payload_size(h), big_in + 8);
    assert_int_equal(seen.out_size, big_in + 8);
    HG_Destroy(h);
    free(big);
    env_fini(&e);
}

static void
test_no_overflow(void **state)
{
    struct hg_init_info strict = HG_INIT_INFO_INITIALIZER;
    struct env e;
    char *big;

    (void) state;
    strict.no_overflow = true;
    /* Client side: the input does not leave. */
    env_init(&e, NULL, &strict);
    env_start(&e);
    big = big_string(HG_Class_get_input_eager_size(e.client) + 1);
    assert_int_equal(echo(&e, "fits", NULL), HG_SUCCESS);
    assert_int_equal(echo(&e, big, NULL), HG_OVERFLOW);
    assert_int_equal(seen.calls, 1);
    env_fini(&e);
    /* Server side: the output cannot be sent, the origin hears why. */
    env_init(&e, &strict, NULL);
    env_start(&e);
    assert_int_equal(echo(&e, big, NULL), HG_OVERFLOW);
    assert_int_equal(seen.calls, 1);
    env_fini(&e);
    free(big);
}

static int create_calls;
static int create_marker;

static hg_return_t
count_creates(hg_handle_t handle, void *arg)
{
    create_calls++;
    return HG_Set_data(handle, arg, NULL);
}

static hg_return_t
refuse_creates(hg_handle_t handle, void *arg)
{
    (void) handle;
    (void) arg;
    return HG_PERMISSION;
}

static void
test_handle_create_callback(void **state)
{
    struct hg_init_info sinfo = HG_INIT_INFO_INITIALIZER;
    struct env e;
    hg_handle_t h;

    (void) state;
    assert_int_equal(
        HG_Class_set_handle_create_callback(NULL, count_creates, NULL),
        HG_INVALID_ARG);
    sinfo.request_post_init = 8;
    env_init(&e, &sinfo, NULL);
    create_calls = 0;
    assert_int_equal(HG_Class_set_handle_create_callback(
                         e.server, count_creates, &create_marker),
                     HG_SUCCESS);
    env_start(&e);
    /* Every posted receive's handle went through it. */
    assert_int_equal(create_calls, 8);
    assert_int_equal(echo(&e, "x", NULL), HG_SUCCESS);
    assert_ptr_equal(seen.data, &create_marker);
    assert_int_equal(create_calls, 9); /* the receive was reposted */

    /* HG_Create runs it; its error fails HG_Create. */
    assert_int_equal(HG_Class_set_handle_create_callback(
                         e.client, count_creates, &create_marker),
                     HG_SUCCESS);
    assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_SUCCESS);
    assert_int_equal(create_calls, 10);
    assert_ptr_equal(HG_Get_data(h), &create_marker);
    HG_Destroy(h);
    assert_int_equal(
        HG_Class_set_handle_create_callback(e.client, refuse_creates, NULL),
        HG_SUCCESS);
    h = HG_HANDLE_NULL;
    assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_PERMISSION);
    assert_null(h);
    assert_int_equal(HG_Class_set_handle_create_callback(e.client, NULL, NULL),
                     HG_SUCCESS);
    assert_int_equal(echo(&e, "y", NULL), HG_SUCCESS);
    env_fini(&e);
}

static void
test_context_unpost(void **state)
{
    struct env e;
    echo_t in = {.s = "late"};
    struct call c = {0, HG_SUCCESS};
    hg_handle_t h;

    (void) state;
    assert_int_equal(HG_Context_unpost(NULL), HG_INVALID_ARG);
    env_init(&e, NULL, NULL);
    env_start(&e);
    assert_int_equal(echo(&e, "before", NULL), HG_SUCCESS);
    assert_true(e.sctx->n_posted > 0);
    assert_int_equal(HG_Context_unpost(e.sctx), HG_SUCCESS);
    assert_int_equal(e.sctx->n_posted, 0);
    /* Nothing receives any more: the forward runs into its deadline. */
    assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_SUCCESS);
    assert_int_equal(HG_Forward_timed(h, call_cb, &c, &in, 500), HG_SUCCESS);
    drive(&e, &c.done);
    assert_int_equal(c.ret, HG_TIMEOUT);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(e.sctx->n_posted, 0);
    HG_Destroy(h);
    /* Twice is harmless, and so is a context that posts nothing. */
    assert_int_equal(HG_Context_unpost(e.sctx), HG_SUCCESS);
    assert_int_equal(HG_Context_unpost(e.cctx), HG_SUCCESS);
    env_fini(&e);
}

static void
test_addr_set_remove(void **state)
{
    struct env e;
    hg_addr_t self;

    (void) state;
    env_init(&e, NULL, NULL);
    env_start(&e);
    assert_int_equal(HG_Addr_set_remove(NULL, e.addr), HG_INVALID_ARG);
    assert_int_equal(HG_Addr_set_remove(e.client, HG_ADDR_NULL),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Addr_self(e.server, &self), HG_SUCCESS);
    assert_int_equal(HG_Addr_set_remove(e.server, self), HG_INVALID_ARG);
    HG_Addr_free(e.server, self);
    /* The simulated fabric keeps nothing per peer: the address still
     * works until freed. */
    assert_int_equal(HG_Addr_set_remove(e.client, e.addr), HG_SUCCESS);
    assert_int_equal(echo(&e, "still", NULL), HG_SUCCESS);
    env_fini(&e);
}

static void
test_bulk_create_attr(void **state)
{
    struct hg_bulk_attr attr = {.mem_type = HG_MEM_TYPE_HOST, .device = 7};
    char buf[100];
    void *ptrs[1] = {buf};
    hg_size_t sizes[1] = {sizeof(buf)};
    hg_bulk_t bulk = HG_BULK_NULL;
    hg_class_t *cls = HG_Init("sim", HG_FALSE);

    (void) state;
    assert_non_null(cls);
    assert_int_equal(HG_Bulk_create_attr(cls, 1, ptrs, sizes, HG_BULK_READWRITE,
                                         &attr, &bulk),
                     HG_SUCCESS);
    assert_int_equal(HG_Bulk_get_size(bulk), sizeof(buf));
    assert_int_equal(HG_Bulk_free(bulk), HG_SUCCESS);
    attr.mem_type = HG_MEM_TYPE_UNKNOWN;
    assert_int_equal(HG_Bulk_create_attr(cls, 1, ptrs, sizes, HG_BULK_READ_ONLY,
                                         &attr, &bulk),
                     HG_SUCCESS);
    assert_int_equal(HG_Bulk_free(bulk), HG_SUCCESS);
    bulk = HG_BULK_NULL;
    attr.mem_type = HG_MEM_TYPE_CUDA;
    assert_int_equal(HG_Bulk_create_attr(cls, 1, ptrs, sizes, HG_BULK_READWRITE,
                                         &attr, &bulk),
                     HG_OPNOTSUPPORTED);
    attr.mem_type = (hg_mem_type_t) 99;
    assert_int_equal(HG_Bulk_create_attr(cls, 1, ptrs, sizes, HG_BULK_READWRITE,
                                         &attr, &bulk),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Bulk_create_attr(cls, 1, ptrs, sizes, HG_BULK_READWRITE,
                                         NULL, &bulk),
                     HG_INVALID_ARG);
    attr.mem_type = HG_MEM_TYPE_HOST;
    assert_int_not_equal(
        HG_Bulk_create_attr(cls, 1, ptrs, sizes, 0x77, &attr, &bulk),
        HG_SUCCESS);
    assert_null(bulk);
    assert_int_equal(HG_Finalize(cls), HG_SUCCESS);
}

static void
test_na_init_opt2_cleanup(void **state)
{
    struct na_init_info info = NA_INIT_INFO_INITIALIZER;
    na_class_t *na;

    (void) state;
    info.traffic_class = NA_TC_LOW_LATENCY;
    na = NA_Initialize_opt2("sim", false, NA_VERSION(6, 0), &info);
    assert_non_null(na);
    /* Cleanup leaves this process's classes alone. */
    NA_Cleanup();
    assert_int_equal(NA_Finalize(na), NA_SUCCESS);

    info.traffic_class = (enum na_traffic_class) 42;
    assert_null(NA_Initialize_opt2("sim", false, NA_VERSION(5, 0), &info));
    /* Before 5.0 the field is not read; NA_Initialize_opt is 4.0. */
    na = NA_Initialize_opt2("sim", false, NA_VERSION(4, 0), &info);
    assert_non_null(na);
    assert_int_equal(NA_Finalize(na), NA_SUCCESS);
    na = NA_Initialize_opt("sim", false, &info);
    assert_non_null(na);
    assert_int_equal(NA_Finalize(na), NA_SUCCESS);
    assert_null(NA_Initialize_opt2("sim", false, 0, &info));
    assert_null(NA_Initialize_opt2("sim", false, NA_VERSION(7, 0), &info));
    assert_null(NA_Initialize_opt2(NULL, false, NA_VERSION(6, 0), NULL));
}

/* The request helper over both sides of an env. */
static int
env_progress(unsigned int timeout, void *arg)
{
    struct env *e = arg;

    HG_Progress(e->sctx, 0);
    HG_Trigger(e->sctx, 0, 64, NULL);
    return HG_Progress(e->cctx, timeout) == HG_SUCCESS ? HG_UTIL_SUCCESS
                                                       : HG_UTIL_FAIL;
}

static int
env_trigger(unsigned int timeout, unsigned int *flag, void *arg)
{
    struct env *e = arg;
    unsigned int count = 0;

    if (HG_Trigger(e->cctx, timeout, 1, &count) != HG_SUCCESS)
        return HG_UTIL_FAIL;
    *flag = count > 0;
    return HG_UTIL_SUCCESS;
}

static hg_return_t
complete_request(const struct hg_cb_info *info)
{
    hg_request_complete((hg_request_t *) info->arg);
    return HG_SUCCESS;
}

static void
test_request_helper(void **state)
{
    struct env e;
    hg_request_class_t *rc;
    hg_request_t *req[2];
    hg_handle_t h[2];
    echo_t in = {.s = "req"};
    unsigned int flag = 7;
    void *arg = NULL;

    (void) state;
    assert_null(hg_request_init(NULL, env_trigger, NULL));
    assert_int_equal(hg_request_wait(NULL, 0, &flag), HG_UTIL_FAIL);
    env_init(&e, NULL, NULL);
    env_start(&e);
    rc = hg_request_init(env_progress, env_trigger, &e);
    assert_non_null(rc);
    for (int i = 0; i < 2; i++) {
        req[i] = hg_request_create(rc);
        assert_non_null(req[i]);
        assert_null(hg_request_get_data(req[i]));
        hg_request_set_data(req[i], &h[i]);
        assert_ptr_equal(hg_request_get_data(req[i]), &h[i]);
        assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h[i]), HG_SUCCESS);
    }
    /* Nothing started: a zero timeout returns at once, not completed. */
    assert_int_equal(hg_request_wait(req[0], 0, &flag), HG_UTIL_SUCCESS);
    assert_int_equal(flag, 0);

    assert_int_equal(HG_Forward(h[0], complete_request, req[0], &in),
                     HG_SUCCESS);
    assert_int_equal(hg_request_wait(req[0], HG_MAX_IDLE_TIME, &flag),
                     HG_UTIL_SUCCESS);
    assert_int_equal(flag, 1);
    assert_int_equal(seen.calls, 1);
    /* Completed stays completed until reset. */
    assert_int_equal(hg_request_wait(req[0], 0, &flag), HG_UTIL_SUCCESS);
    assert_int_equal(flag, 1);
    hg_request_reset(req[0]);
    assert_int_equal(hg_request_wait(req[0], 0, &flag), HG_UTIL_SUCCESS);
    assert_int_equal(flag, 0);

    for (int i = 0; i < 2; i++)
        assert_int_equal(HG_Forward(h[i], complete_request, req[i], &in),
                         HG_SUCCESS);
    assert_int_equal(hg_request_waitall(2, req, HG_MAX_IDLE_TIME, &flag),
                     HG_UTIL_SUCCESS);
    assert_int_equal(flag, 1);
    assert_int_equal(seen.calls, 3);
    for (int i = 0; i < 2; i++) {
        HG_Destroy(h[i]);
        hg_request_destroy(req[i]);
    }
    hg_request_destroy(NULL);
    hg_request_finalize(rc, &arg);
    assert_ptr_equal(arg, &e);
    hg_request_finalize(NULL, NULL);
    env_fini(&e);
}

/* Smaller 2.4 names: registered procs, counters, hg_proc_bytes, NA's
 * optional features, header sizes and segment limits. */
static void
test_small_names(void **state)
{
    struct env e;
    struct hg_diag_counters cs, cc;
    hg_bool_t flag = HG_FALSE;
    hg_proc_cb_t in_cb = NULL, out_cb = NULL;
    char buf[64], word[6] = "bytes", back[6] = "";
    hg_proc_t proc;
    char *big;
    na_class_t *na = HG_Class_get_na(NULL);

    (void) state;
    assert_null(na);
    env_init(&e, NULL, NULL);
    env_start(&e);
    assert_int_equal(
        HG_Registered_proc_cb(e.client, e.id, &flag, &in_cb, &out_cb),
        HG_SUCCESS);
    assert_true(flag);
    assert_ptr_equal(in_cb, hg_proc_echo_t);
    assert_ptr_equal(out_cb, hg_proc_echo_out_t);
    assert_int_equal(HG_Registered_proc_cb(e.client, 12345, &flag, NULL, NULL),
                     HG_SUCCESS);
    assert_false(flag);
    assert_int_equal(HG_Registered_proc_cb(NULL, e.id, &flag, NULL, NULL),
                     HG_INVALID_ARG);

    big = big_string(HG_Class_get_input_eager_size(e.client) + 10);
    assert_int_equal(echo(&e, "one", NULL), HG_SUCCESS);
    assert_int_equal(echo(&e, big, NULL), HG_SUCCESS);
    free(big);
    assert_int_equal(HG_Class_get_counters(e.client, &cc), HG_SUCCESS);
    assert_int_equal(HG_Class_get_counters(e.server, &cs), HG_SUCCESS);
    assert_int_equal(cc.rpc_req_sent_count, 2);
    assert_int_equal(cs.rpc_req_recv_count, 2);
    assert_int_equal(cs.rpc_resp_sent_count, 2);
    assert_true(cc.rpc_req_extra_count >= 1);
    assert_int_equal(HG_Class_get_counters(e.client, NULL), HG_INVALID_ARG);

    assert_int_equal(hg_proc_create_set(e.client, buf, sizeof(buf), HG_ENCODE,
                                        HG_NOHASH, &proc),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_bytes(proc, word, sizeof(word)), HG_SUCCESS);
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_DECODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_bytes(proc, back, sizeof(back)), HG_SUCCESS);
    assert_string_equal(back, "bytes");
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);

    na = HG_Class_get_na(e.client);
    assert_false(NA_Has_opt_feature(na, NA_OPT_MULTI_RECV));
    assert_false(NA_Has_opt_feature(na, NA_OPT_FIREWALL_ADDR));
    assert_int_equal(NA_Msg_get_unexpected_header_size(na), 0);
    assert_int_equal(NA_Msg_get_expected_header_size(na), 0);
    assert_int_equal(NA_Msg_init_unexpected(na, buf, sizeof(buf)), NA_SUCCESS);
    assert_int_equal(NA_Msg_init_expected(na, buf, sizeof(buf)), NA_SUCCESS);
    assert_int_equal(NA_Msg_init_expected(na, NULL, sizeof(buf)),
                     NA_INVALID_ARG);
    assert_int_equal(NA_Msg_init_unexpected(NULL, buf, 1), NA_INVALID_ARG);
    assert_true(NA_Mem_handle_get_max_segments(na) > 1);
    assert_int_equal(NA_Mem_handle_get_max_segments(NULL), 1);
    assert_int_equal(NA_THREAD_MODE_SINGLE,
                     NA_THREAD_MODE_SINGLE_CLS | NA_THREAD_MODE_SINGLE_CTX);
    assert_true(HG_SIZE_MAX == UINT64_MAX && NA_TAG_MAX == UINT32_MAX);
    assert_int_equal(NA_MAX_IDLE_TIME, HG_MAX_IDLE_TIME);
    env_fini(&e);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_init_opt2_versions),
        cmocka_unit_test(test_payload_sizes),
        cmocka_unit_test(test_no_overflow),
        cmocka_unit_test(test_handle_create_callback),
        cmocka_unit_test(test_context_unpost),
        cmocka_unit_test(test_addr_set_remove),
        cmocka_unit_test(test_bulk_create_attr),
        cmocka_unit_test(test_na_init_opt2_cleanup),
        cmocka_unit_test(test_request_helper),
        cmocka_unit_test(test_small_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
