/*
 * The invariant checker (include/qs_check.h), in one process on the
 * simulated fabric: a program that releases everything passes; a planted
 * leak of a handle, a bulk handle, an address or a request's handle kept
 * by its handler, a forward whose callback never ran, and a completion
 * delivered twice are each reported, with the place in this file that
 * created the object.
 *
 * Built twice: test_qs_check over the shared library (public API only,
 * so the checker tells this file's frames from the library's), and
 * test_qs_check_double with QC_DOUBLE over the static internal library,
 * whose one case plants the double completion through internal calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef QC_DOUBLE
#include "hg/hg_internal.h"
#include "hg/hg_rpc.h"
#endif
#include "mercury.h"
#include "mercury_macros.h"
#include "qs_check.h"

MERCURY_GEN_PROC(qc_in_t, ((int32_t) (a)))

static int qc_responded;           /* respond callbacks run */
static hg_handle_t qc_kept_handle; /* a handler that keeps its handle */
static int qc_keep;

static hg_return_t
qc_respond_cb(const struct hg_cb_info *info)
{
    (void) info;
    qc_responded++;
    return HG_SUCCESS;
}

static hg_return_t
qc_rpc(hg_handle_t handle)
{
    qc_in_t in;

    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    HG_Free_input(handle, &in);
    assert_int_equal(HG_Respond(handle, qc_respond_cb, NULL, &in), HG_SUCCESS);
    if (qc_keep) { /* the planted leak */
        qc_kept_handle = handle;
        return HG_SUCCESS;
    }
    return HG_Destroy(handle);
}

struct env {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    hg_addr_t addr;
    hg_id_t id;
};

static void
env_init(struct env *e)
{
    static int n;
    char name[64];

    /* A name per test, so that one test's failure leaves the next its
     * own server. */
    snprintf(name, sizeof(name), "sim://qc-server-%d", ++n);
    e->server = HG_Init(name, HG_TRUE);
    e->client = HG_Init("sim", HG_FALSE);
    assert_non_null(e->server);
    assert_non_null(e->client);
    e->sctx = HG_Context_create(e->server);
    e->cctx = HG_Context_create(e->client);
    MERCURY_REGISTER(e->server, "qc", qc_in_t, qc_in_t, qc_rpc);
    e->id = MERCURY_REGISTER(e->client, "qc", qc_in_t, qc_in_t, NULL);
    assert_int_equal(HG_Addr_lookup(e->client, name, &e->addr), HG_SUCCESS);
}

static void
drive(struct env *e, const int *done)
{
    for (int i = 0; i < 10000 && (done == NULL || !*done); i++) {
        HG_Progress(e->cctx, 10);
        HG_Trigger(e->cctx, 0, 64, NULL);
        HG_Progress(e->sctx, 0);
        HG_Trigger(e->sctx, 0, 64, NULL);
        if (done == NULL && i == 20)
            break;
    }
}

static void
env_fini(struct env *e)
{
    drive(e, NULL);
    if (e->addr != HG_ADDR_NULL)
        assert_int_equal(HG_Addr_free(e->client, e->addr), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->cctx), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->client), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->server), HG_SUCCESS);
}

static int qc_forwarded; /* forward callbacks run */

static hg_return_t
qc_forward_cb(const struct hg_cb_info *info)
{
    assert_int_equal(info->ret, HG_SUCCESS);
    qc_forwarded++;
    if (info->arg != NULL)
        *(int *) info->arg = 1;
    return HG_SUCCESS;
}

static hg_handle_t
qc_forward(struct env *e)
{
    qc_in_t in = {.a = 7};
    hg_handle_t h;
    int before = qc_forwarded, done = 0;

    assert_int_equal(HG_Create(e->cctx, e->addr, e->id, &h), HG_SUCCESS);
    assert_int_equal(HG_Forward(h, qc_forward_cb, &done, &in), HG_SUCCESS);
    drive(e, &done);
    assert_int_equal(qc_forwarded, before + 1);
    return h;
}

/* stderr of a block of code, kept in a file for the checks below. */
static char qc_err_path[] = "/tmp/qs-check-test-XXXXXX";
static int qc_saved_fd = -1;
static char qc_err[16384];

static void
err_begin(void)
{
    int fd = mkstemp(qc_err_path);

    assert_true(fd >= 0);
    fflush(stderr);
    qc_saved_fd = dup(2);
    dup2(fd, 2);
    close(fd);
}

static void
err_end(void)
{
    FILE *f;
    size_t n;

    fflush(stderr);
    dup2(qc_saved_fd, 2);
    close(qc_saved_fd);
    f = fopen(qc_err_path, "r");
    assert_non_null(f);
    n = fread(qc_err, 1, sizeof(qc_err) - 1, f);
    qc_err[n] = '\0';
    fclose(f);
    unlink(qc_err_path);
    strcpy(qc_err_path, "/tmp/qs-check-test-XXXXXX");
    fprintf(stderr, "%s", qc_err); /* keep it in the test's log */
}

#ifndef QC_DOUBLE
static hg_class_t *qc_lookup_class; /* where qc_count_cb frees a lookup */

static hg_return_t
qc_count_cb(const struct hg_cb_info *info)
{
    (*(int *) info->arg)++;
    if (info->type == HG_CB_LOOKUP)
        HG_Addr_free(qc_lookup_class, info->info.lookup.addr);
    return HG_SUCCESS;
}

static void
test_clean_program(void **state)
{
    struct env e;
    hg_bulk_t a, b;
    char buf_a[64] = "abc", buf_b[64];
    void *pa = buf_a, *pb = buf_b;
    hg_size_t sz = sizeof(buf_a);
    int transfers = 0, lookups = 0;

    (void) state;
    env_init(&e);
    HG_Destroy(qc_forward(&e));
    assert_true(qc_responded > 0);
    /* A bulk transfer and a lookup, each with a callback. */
    assert_int_equal(
        HG_Bulk_create(e.client, 1, &pa, &sz, HG_BULK_READ_ONLY, &a),
        HG_SUCCESS);
    assert_int_equal(
        HG_Bulk_create(e.client, 1, &pb, &sz, HG_BULK_WRITE_ONLY, &b),
        HG_SUCCESS);
    assert_int_equal(HG_Bulk_transfer(e.cctx, qc_count_cb, &transfers,
                                      HG_BULK_PULL, e.addr, a, 0, b, 0, sz,
                                      HG_OP_ID_IGNORE),
                     HG_SUCCESS);
    qc_lookup_class = e.client;
    assert_int_equal(HG_Addr_lookup(e.cctx, qc_count_cb, &lookups,
                                    "sim://qc-server-1", HG_OP_ID_IGNORE),
                     HG_SUCCESS);
    drive(&e, NULL);
    assert_int_equal(transfers, 1);
    assert_int_equal(lookups, 1);
    HG_Bulk_free(a);
    HG_Bulk_free(b);
    env_fini(&e);
    assert_int_equal(qs_check_violations(), 0);
}

/* Finalize with one object still held, check the report, then release
 * it and finalize for real. */
static void
test_leaked_handle(void **state)
{
    struct env e;
    hg_handle_t h;

    (void) state;
    env_init(&e);
    h = qc_forward(&e); /* the planted leak: no HG_Destroy */
    drive(&e, NULL);
    /* The handle's own reference to the address is not reported. */
    HG_Addr_free(e.client, e.addr);
    e.addr = HG_ADDR_NULL;
    err_begin();
    assert_int_equal(HG_Finalize(e.client), HG_BUSY);
    err_end();
    assert_int_equal(qs_check_violations(), 1);
    assert_non_null(strstr(qc_err, "qs-check: not released: handle of RPC "
                                   "\"qc\""));
    assert_non_null(strstr(qc_err, "created at"));
    assert_non_null(strstr(qc_err, "qc_forward"));
    assert_null(strstr(qc_err, "not released: address"));
    assert_null(strstr(qc_err, "not released: HG context"));
    HG_Destroy(h);
    env_fini(&e);
    qs_check_clear();
}

static void
test_leaked_bulk_and_addr(void **state)
{
    struct env e;
    hg_bulk_t b;
    hg_addr_t dup;
    char buf[256];
    void *p = buf;
    hg_size_t sz = sizeof(buf);

    (void) state;
    env_init(&e);
    assert_int_equal(
        HG_Bulk_create(e.client, 1, &p, &sz, HG_BULK_READWRITE, &b),
        HG_SUCCESS);
    assert_int_equal(HG_Addr_dup(e.client, e.addr, &dup), HG_SUCCESS);
    drive(&e, NULL);
    assert_int_equal(HG_Context_destroy(e.cctx), HG_SUCCESS);
    err_begin();
    assert_int_equal(HG_Finalize(e.client), HG_BUSY);
    err_end();
    /* The address has two references (lookup and dup): one record. */
    assert_int_equal(qs_check_violations(), 2);
    assert_non_null(strstr(qc_err, "not released: bulk handle of 256 bytes"));
    assert_non_null(strstr(qc_err, "not released: address sim://qc-server-"));
    assert_non_null(strstr(qc_err, "test_leaked_bulk_and_addr"));
    HG_Bulk_free(b);
    HG_Addr_free(e.client, dup);
    e.cctx = HG_Context_create(e.client);
    env_fini(&e);
    qs_check_clear();
}

/* A handler that answers but never destroys its request's handle. */
static void
test_leaked_target_handle(void **state)
{
    struct env e;

    (void) state;
    env_init(&e);
    qc_keep = 1;
    HG_Destroy(qc_forward(&e));
    qc_keep = 0;
    drive(&e, NULL);
    err_begin();
    assert_int_equal(HG_Finalize(e.server), HG_BUSY);
    err_end();
    assert_int_equal(qs_check_violations(), 1);
    assert_non_null(strstr(qc_err, "not released: handle of a request for "
                                   "RPC \"qc\", given to its handler"));
    assert_non_null(strstr(qc_err, "handled by qc_rpc"));
    HG_Destroy(qc_kept_handle);
    env_fini(&e);
    qs_check_clear();
}

/* A forward whose completion is queued but never triggered. */
static void
test_callback_never_ran(void **state)
{
    struct env e;
    qc_in_t in = {.a = 1};
    hg_handle_t h;

    (void) state;
    env_init(&e);
    assert_int_equal(HG_Create(e.cctx, e.addr, e.id, &h), HG_SUCCESS);
    assert_int_equal(HG_Forward(h, qc_forward_cb, NULL, &in), HG_SUCCESS);
    HG_Destroy(h);
    HG_Addr_free(e.client, e.addr);
    e.addr = HG_ADDR_NULL;
    err_begin();
    assert_int_equal(HG_Finalize(e.client), HG_BUSY);
    err_end();
    assert_int_equal(qs_check_violations(), 1);
    assert_non_null(
        strstr(qc_err, "callback never ran: forward of RPC \"qc\""));
    assert_non_null(strstr(qc_err, "started at"));
    assert_null(strstr(qc_err, "not released: handle"));
    env_fini(&e);
    qs_check_clear();
}

#else
/* The planted double completion: the forward's completion entry is
 * queued a second time (holding the reference a completion holds), as a
 * library bug that completed an operation twice would. */
static void
test_double_completion(void **state)
{
    struct env e;
    hg_handle_t h;
    int before;

    (void) state;
    env_init(&e);
    h = qc_forward(&e);
    before = qc_forwarded;
    hg_rpc_op_ref(h);
    h->arg = NULL; /* the first run's flag is gone with its frame */
    h->comp.run = hg_rpc_complete;
    h->comp.object = h;
    hg_core_complete(&e.cctx->core, &h->comp);
    err_begin();
    HG_Trigger(e.cctx, 0, 1, NULL);
    err_end();
    assert_int_equal(qc_forwarded, before + 1); /* it did run twice */
    assert_int_equal(qs_check_violations(), 1);
    assert_non_null(strstr(qc_err, "callback ran twice: forward of RPC "
                                   "\"qc\""));
    assert_non_null(strstr(qc_err, "and run again from"));
    HG_Destroy(h);
    env_fini(&e);
    qs_check_clear();
}
#endif

/* Each test counts its own violations. */
static int
qc_setup(void **state)
{
    (void) state;
    qs_check_clear();
    return 0;
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef QC_DOUBLE
        cmocka_unit_test_setup(test_double_completion, qc_setup),
#else
        cmocka_unit_test_setup(test_clean_program, qc_setup),
        cmocka_unit_test_setup(test_leaked_handle, qc_setup),
        cmocka_unit_test_setup(test_leaked_bulk_and_addr, qc_setup),
        cmocka_unit_test_setup(test_leaked_target_handle, qc_setup),
        cmocka_unit_test_setup(test_callback_never_ran, qc_setup),
#endif
    };

    qs_check_enable();
    assert_true(qs_check_enabled());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
