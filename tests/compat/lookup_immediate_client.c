/*
 * A client in the style of Quicksilver's own examples and Mercury's unit
 * tests: the immediate three-argument HG_Addr_lookup(), and Mercury's
 * request helper (mercury_request.h) to wait for each completion.
 *
 * usage: lookup_immediate_client <info string> <server address>
 */
#include <assert.h>
#include <stdbool.h>
#include <stdio.h>

#include <mercury.h>
#include <mercury_macros.h>
#include <mercury_request.h>

#include "compat_rpc.h"

static int
request_progress(unsigned int timeout, void *arg)
{
    if (HG_Progress((hg_context_t *) arg, timeout) != HG_SUCCESS)
        return HG_UTIL_FAIL;
    return HG_UTIL_SUCCESS;
}

static int
request_trigger(unsigned int timeout, unsigned int *flag, void *arg)
{
    unsigned int count = 0;

    if (HG_Trigger((hg_context_t *) arg, timeout, 1, &count) != HG_SUCCESS)
        return HG_UTIL_FAIL;
    if (flag)
        *flag = (count > 0) ? true : false;
    return HG_UTIL_SUCCESS;
}

static hg_return_t
forward_completed(const struct hg_cb_info *info)
{
    hg_request_t *request = (hg_request_t *) info->arg;

    assert(info->ret == HG_SUCCESS);
    hg_request_complete(request);
    return HG_SUCCESS;
}

int
main(int argc, char **argv)
{
    hg_class_t *hg_class;
    hg_context_t *context;
    hg_request_class_t *request_class;
    hg_request_t *request;
    hg_addr_t server;
    hg_handle_t handle;
    hg_id_t sum_id, quit_id;
    sum_in_t in = {.x = 40, .y = 2};
    sum_out_t out;
    unsigned int flag = 0;
    void *arg = NULL;
    hg_return_t ret;
    int rc = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s <info string> <server address>\n", argv[0]);
        return 2;
    }
    hg_class = HG_Init(argv[1], HG_FALSE);
    assert(hg_class != NULL);
    context = HG_Context_create(hg_class);
    assert(context != NULL);
    request_class = hg_request_init(request_progress, request_trigger, context);
    assert(request_class != NULL);
    sum_id = MERCURY_REGISTER(hg_class, "sum", sum_in_t, sum_out_t, NULL);
    quit_id = MERCURY_REGISTER(hg_class, "quit", void, void, NULL);

    ret = HG_Addr_lookup(hg_class, argv[2], &server);
    assert(ret == HG_SUCCESS);

    request = hg_request_create(request_class);
    ret = HG_Create(context, server, sum_id, &handle);
    assert(ret == HG_SUCCESS);
    ret = HG_Forward(handle, forward_completed, request, &in);
    assert(ret == HG_SUCCESS);
    hg_request_wait(request, HG_MAX_IDLE_TIME, &flag);
    assert(flag);
    ret = HG_Get_output(handle, &out);
    assert(ret == HG_SUCCESS);
    printf("Got response: 40 + 2 = %d (output payload %llu bytes)\n", out.ret,
           (unsigned long long) HG_Get_output_payload_size(handle));
    if (out.ret != 42 || HG_Get_output_payload_size(handle) == 0)
        rc = 1;
    HG_Free_output(handle, &out);
    HG_Destroy(handle);

    /* The same request, reset, waits for the second RPC. */
    hg_request_reset(request);
    ret = HG_Create(context, server, quit_id, &handle);
    assert(ret == HG_SUCCESS);
    ret = HG_Forward(handle, forward_completed, request, NULL);
    assert(ret == HG_SUCCESS);
    flag = 0;
    hg_request_wait(request, HG_MAX_IDLE_TIME, &flag);
    assert(flag);
    HG_Destroy(handle);
    hg_request_destroy(request);

    hg_request_finalize(request_class, &arg);
    assert(arg == context);
    HG_Addr_free(hg_class, server);
    ret = HG_Context_destroy(context);
    assert(ret == HG_SUCCESS);
    ret = HG_Finalize(hg_class);
    assert(ret == HG_SUCCESS);
    if (rc == 0)
        printf("lookup_immediate_client: OK\n");
    return rc;
}
