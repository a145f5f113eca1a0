/*
 * margo-hg-shim.h: a plain HG program and a Margo program talk to each
 * other, both ways, in one process: an HG origin calls a Margo handler
 * through HG_Forward_to_margo / HG_Get_output_from_margo, and a Margo
 * origin calls an HG handler that uses HG_Get_input_from_margo /
 * HG_Respond_to_margo.
 */
#include "tm.h"

#include <margo-hg-shim.h>

struct ts_hg {
    hg_class_t *cls;
    hg_context_t *ctx;
};

static void
ts_hg_init(struct ts_hg *hg, const char *role, hg_bool_t listen)
{
    char addr[64];

    tm_addr_for(addr, sizeof(addr), role);
    hg->cls = HG_Init(addr, listen);
    assert_non_null(hg->cls);
    hg->ctx = HG_Context_create(hg->cls);
    assert_non_null(hg->ctx);
}

static void
ts_hg_fini(struct ts_hg *hg)
{
    assert_hg_ok(HG_Context_destroy(hg->ctx));
    assert_hg_ok(HG_Finalize(hg->cls));
}

/* One round of HG progress on the plain side, then one short Margo sleep,
 * which drives the Margo instance (virtual time on the simulator). */
static void
ts_round(struct ts_hg *hg, margo_instance_id mid)
{
    unsigned int n = 0;

    HG_Progress(hg->ctx, 0);
    HG_Trigger(hg->ctx, 0, 16, &n);
    margo_thread_sleep(mid, 1);
}

struct ts_done {
    int done;
    hg_return_t ret;
};

static hg_return_t
ts_forward_cb(const struct hg_cb_info *info)
{
    struct ts_done *d = info->arg;

    d->ret = info->ret;
    d->done = 1;
    return HG_SUCCESS;
}

static void
test_hg_origin_margo_target(void **state)
{
    char saddr[64], str[128];
    hg_size_t len = sizeof(str);
    struct ts_hg hg;
    struct ts_done d = {0, HG_OTHER_ERROR};
    tm_add_in_t in = {20, 22};
    tm_add_out_t out;
    margo_instance_id server;
    hg_addr_t self, target;
    hg_handle_t h;
    hg_id_t id;

    (void) state;
    tm_addr_for(saddr, sizeof(saddr), "shim-mserver");
    server = margo_init(saddr, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(server);
    assert_int_not_equal(
        MARGO_REGISTER(server, "ts_add", tm_add_in_t, tm_add_out_t, tm_add), 0);
    assert_hg_ok(margo_addr_self(server, &self));
    assert_hg_ok(margo_addr_to_string(server, str, &len, self));
    assert_hg_ok(margo_addr_free(server, self));

    ts_hg_init(&hg, "shim-hclient", HG_FALSE);
    id = HG_Register_name_for_margo(hg.cls, "ts_add", NULL);
    assert_int_not_equal(id, 0);
    assert_hg_ok(HG_Addr_lookup2(hg.cls, str, &target));
    assert_hg_ok(HG_Create(hg.ctx, target, id, &h));
    assert_hg_ok(
        HG_Forward_to_margo(h, ts_forward_cb, &d, hg_proc_tm_add_in_t, &in));
    for (int i = 0; i < 100000 && !d.done; i++)
        ts_round(&hg, server);
    assert_true(d.done);
    assert_hg_ok(d.ret);
    assert_hg_ok(HG_Get_output_from_margo(h, hg_proc_tm_add_out_t, &out));
    assert_int_equal(out.sum, 42);
    assert_hg_ok(HG_Free_output_from_margo(h, hg_proc_tm_add_out_t, &out));
    assert_hg_ret(HG_Get_output_from_margo(h, hg_proc_tm_add_out_t, NULL),
                  HG_INVALID_ARG);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Addr_free(hg.cls, target));
    ts_hg_fini(&hg);
    margo_finalize(server);
}

/* The HG side's handler: adds through the shim's calls; the respond
 * callback says when the response has left. */
static struct ts_done ts_responded;

static hg_return_t
ts_respond_cb(const struct hg_cb_info *info)
{
    return ts_forward_cb(info);
}

static hg_return_t
ts_hg_add(hg_handle_t h)
{
    tm_add_in_t in;
    tm_add_out_t out = {-1};

    if (HG_Get_input_from_margo(h, hg_proc_tm_add_in_t, &in) == HG_SUCCESS) {
        out.sum = in.a + in.b;
        HG_Free_input_from_margo(h, hg_proc_tm_add_in_t, &in);
    }
    HG_Respond_to_margo(h, ts_respond_cb, &ts_responded, hg_proc_tm_add_out_t,
                        &out);
    HG_Destroy(h);
    return HG_SUCCESS;
}

static void
test_margo_origin_hg_target(void **state)
{
    char caddr[64], str[128];
    hg_size_t len = sizeof(str);
    struct ts_hg hg;
    tm_add_in_t in = {5, 8};
    tm_add_out_t out;
    margo_instance_id client;
    margo_request req;
    hg_addr_t self, target;
    hg_handle_t h;
    hg_id_t id;
    int flag = 0;

    (void) state;
    ts_hg_init(&hg, "shim-hserver", HG_TRUE);
    assert_int_not_equal(
        HG_Register_name_for_margo(hg.cls, "ts_add2", ts_hg_add), 0);
    assert_hg_ok(HG_Addr_self(hg.cls, &self));
    assert_hg_ok(HG_Addr_to_string(hg.cls, str, &len, self));
    assert_hg_ok(HG_Addr_free(hg.cls, self));

    tm_addr_for(caddr, sizeof(caddr), "shim-mclient");
    client = margo_init(caddr, MARGO_CLIENT_MODE, 0, 0);
    assert_non_null(client);
    id = MARGO_REGISTER(client, "ts_add2", tm_add_in_t, tm_add_out_t, NULL);
    assert_hg_ok(margo_addr_lookup(client, str, &target));
    assert_hg_ok(margo_create(client, target, id, &h));
    assert_hg_ok(margo_iforward(h, &in, &req));
    for (int i = 0; i < 100000 && !flag; i++) {
        ts_round(&hg, client);
        assert_hg_ok(margo_test(req, &flag));
    }
    assert_true(flag);
    assert_hg_ok(margo_wait(req));
    assert_hg_ok(margo_get_output(h, &out));
    assert_int_equal(out.sum, 13);
    assert_hg_ok(margo_free_output(h, &out));
    assert_hg_ok(margo_destroy(h));
    assert_hg_ok(margo_addr_free(client, target));
    for (int i = 0; i < 100000 && !ts_responded.done; i++)
        ts_round(&hg, client);
    assert_true(ts_responded.done);
    assert_hg_ok(ts_responded.ret);
    margo_finalize(client);
    ts_hg_fini(&hg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hg_origin_margo_target),
        cmocka_unit_test(test_margo_origin_hg_target),
    };

    return tm_main("margo_hg_shim", tests, sizeof(tests) / sizeof(tests[0]));
}
