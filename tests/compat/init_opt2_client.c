/*
 * A client that initializes as Mercury 2.3+ programs do:
 * HG_Init_opt2(info, HG_FALSE, HG_VERSION(2, 4), &init_info) with
 * HG_INIT_INFO_INITIALIZER and 2.4 fields set, checks the version it runs
 * against, and looks the server up with HG_Addr_lookup2().
 *
 * usage: init_opt2_client <info string> <server address>
 */
#include <assert.h>
#include <stdio.h>

#include <mercury.h>
#include <mercury_macros.h>

#include "compat_rpc.h"

struct call {
    int done;
    hg_return_t ret;
};

static hg_return_t
forward_cb(const struct hg_cb_info *info)
{
    struct call *call = (struct call *) info->arg;

    call->ret = info->ret;
    call->done = 1;
    return HG_SUCCESS;
}

static hg_return_t
call_and_wait(hg_context_t *context, hg_handle_t handle, void *in)
{
    struct call call = {0, HG_SUCCESS};
    hg_return_t ret = HG_Forward(handle, forward_cb, &call, in);

    if (ret != HG_SUCCESS)
        return ret;
    while (!call.done) {
        unsigned int count = 0;
        HG_Progress(context, 100);
        HG_Trigger(context, 0, 1, &count);
    }
    return call.ret;
}

int
main(int argc, char **argv)
{
    struct hg_init_info init_info = HG_INIT_INFO_INITIALIZER;
    unsigned int major, minor, patch;
    hg_class_t *hg_class;
    hg_context_t *context;
    hg_addr_t server;
    hg_handle_t handle;
    hg_id_t sum_id, quit_id;
    sum_in_t in = {.x = 30, .y = 12};
    sum_out_t out;
    hg_return_t ret;
    int rc = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s <info string> <server address>\n", argv[0]);
        return 2;
    }
    HG_Version_get(&major, &minor, &patch);
    printf("Mercury API %u.%u.%u\n", major, minor, patch);
    if (HG_VERSION(major, minor) < HG_VERSION(2, 4))
        return 1;

    init_info.traffic_class = NA_TC_LOW_LATENCY;
    init_info.no_overflow = true;
    init_info.multi_recv_op_max = 2;
    init_info.request_post_init = 64;
    hg_class = HG_Init_opt2(argv[1], HG_FALSE, HG_VERSION(2, 4), &init_info);
    assert(hg_class != NULL);
    context = HG_Context_create(hg_class);
    assert(context != NULL);
    sum_id = MERCURY_REGISTER(hg_class, "sum", sum_in_t, sum_out_t, NULL);
    quit_id = MERCURY_REGISTER(hg_class, "quit", void, void, NULL);

    ret = HG_Addr_lookup2(hg_class, argv[2], &server);
    assert(ret == HG_SUCCESS);
    ret = HG_Create(context, server, sum_id, &handle);
    assert(ret == HG_SUCCESS);
    ret = call_and_wait(context, handle, &in);
    assert(ret == HG_SUCCESS);
    ret = HG_Get_output(handle, &out);
    assert(ret == HG_SUCCESS);
    printf("Got response: 30 + 12 = %d\n", out.ret);
    if (out.ret != 42)
        rc = 1;
    HG_Free_output(handle, &out);
    HG_Destroy(handle);

    ret = HG_Create(context, server, quit_id, &handle);
    assert(ret == HG_SUCCESS);
    ret = call_and_wait(context, handle, NULL);
    assert(ret == HG_SUCCESS);
    HG_Destroy(handle);

    HG_Addr_free(hg_class, server);
    ret = HG_Context_destroy(context);
    assert(ret == HG_SUCCESS);
    ret = HG_Finalize(hg_class);
    assert(ret == HG_SUCCESS);
    if (rc == 0)
        printf("init_opt2_client: OK\n");
    return rc;
}
