/*
 * A client written as the Mochi documentation's Mercury tutorials write
 * theirs: the callback form of HG_Addr_lookup() (five arguments, the form
 * Mercury 2.x means by that name), the RPC forwarded from the lookup
 * callback, and a progress / trigger loop until the last callback ran.
 *
 * usage: lookup_callback_client <info string> <server address>
 */
#include <assert.h>
#include <stdio.h>

#include <mercury.h>
#include <mercury_macros.h>

#include "compat_rpc.h"

static hg_class_t *hg_class = NULL;
static hg_context_t *hg_context = NULL;
static hg_id_t sum_rpc_id, quit_rpc_id;
static hg_addr_t server_addr = HG_ADDR_NULL;
static int completed = 0;
static int failed = 0;

static hg_return_t quit_completed(const struct hg_cb_info *info);

static hg_return_t
sum_completed(const struct hg_cb_info *info)
{
    hg_handle_t handle = info->info.forward.handle;
    hg_handle_t quit_handle;
    sum_out_t out;
    hg_return_t ret;

    assert(info->ret == HG_SUCCESS);
    ret = HG_Get_output(handle, &out);
    assert(ret == HG_SUCCESS);
    printf("Got response: 20 + 22 = %d\n", out.ret);
    if (out.ret != 42)
        failed = 1;
    HG_Free_output(handle, &out);
    HG_Destroy(handle);

    ret = HG_Create(hg_context, server_addr, quit_rpc_id, &quit_handle);
    assert(ret == HG_SUCCESS);
    ret = HG_Forward(quit_handle, quit_completed, NULL, NULL);
    assert(ret == HG_SUCCESS);
    return HG_SUCCESS;
}

static hg_return_t
quit_completed(const struct hg_cb_info *info)
{
    assert(info->ret == HG_SUCCESS);
    HG_Destroy(info->info.forward.handle);
    completed = 1;
    return HG_SUCCESS;
}

static hg_return_t
lookup_callback(const struct hg_cb_info *callback_info)
{
    hg_handle_t handle;
    sum_in_t in;
    hg_return_t ret;

    assert(callback_info->ret == HG_SUCCESS);
    assert(callback_info->type == HG_CB_LOOKUP);
    server_addr = callback_info->info.lookup.addr;

    ret = HG_Create(hg_context, server_addr, sum_rpc_id, &handle);
    assert(ret == HG_SUCCESS);
    in.x = 20;
    in.y = 22;
    ret = HG_Forward(handle, sum_completed, NULL, &in);
    assert(ret == HG_SUCCESS);
    return HG_SUCCESS;
}

int
main(int argc, char **argv)
{
    hg_return_t ret;

    if (argc != 3) {
        fprintf(stderr, "usage: %s <info string> <server address>\n", argv[0]);
        return 2;
    }
    hg_class = HG_Init(argv[1], HG_FALSE);
    assert(hg_class);
    hg_context = HG_Context_create(hg_class);
    assert(hg_context);

    sum_rpc_id = MERCURY_REGISTER(hg_class, "sum", sum_in_t, sum_out_t, NULL);
    quit_rpc_id = MERCURY_REGISTER(hg_class, "quit", void, void, NULL);

    ret = HG_Addr_lookup(hg_context, lookup_callback, NULL, argv[2],
                         HG_OP_ID_IGNORE);
    assert(ret == HG_SUCCESS);

    do {
        unsigned int count;
        do {
            ret = HG_Trigger(hg_context, 0, 1, &count);
        } while ((ret == HG_SUCCESS) && count && !completed);
        HG_Progress(hg_context, 100);
    } while (!completed);

    HG_Addr_free(hg_class, server_addr);
    ret = HG_Context_destroy(hg_context);
    assert(ret == HG_SUCCESS);
    ret = HG_Finalize(hg_class);
    assert(ret == HG_SUCCESS);
    if (failed)
        return 1;
    printf("lookup_callback_client: OK\n");
    return 0;
}
