/*
 * The HG-level sum client: exposes ten values read-only, forwards "sum" with
 * the bulk handle, and reads the sum from the response.
 */
#include "hg_sum.h"

#include <stdio.h>

int
hg_sum_client_start(struct hg_sum_client *client, const char *info,
                    const char *server_addr)
{
    client->hg_class = HG_Init(info, HG_FALSE);
    if (client->hg_class == NULL)
        return -1;
    client->context = HG_Context_create(client->hg_class);
    if (client->context == NULL)
        goto error_finalize;
    client->sum_id = MERCURY_REGISTER(client->hg_class, "sum", hg_sum_in_t,
                                      hg_sum_out_t, NULL);
    if (HG_Addr_lookup(client->hg_class, server_addr, &client->server) !=
        HG_SUCCESS) {
        fprintf(stderr, "hg_sum client: cannot look up %s\n", server_addr);
        goto error_context;
    }
    return 0;

error_context:
    HG_Context_destroy(client->context);
error_finalize:
    HG_Finalize(client->hg_class);
    return -1;
}

int
hg_sum_client_stop(struct hg_sum_client *client)
{
    int rc = 0;

    HG_Addr_free(client->hg_class, client->server);
    if (HG_Context_destroy(client->context) != HG_SUCCESS)
        rc = -1;
    if (HG_Finalize(client->hg_class) != HG_SUCCESS)
        rc = -1;
    return rc;
}

/* What the forward callback reports back to hg_sum_client_call(). */
struct hg_sum_call {
    int done;
    hg_return_t ret;
};

static hg_return_t
hg_sum_forward_cb(const struct hg_cb_info *info)
{
    struct hg_sum_call *call = info->arg;

    call->ret = info->ret;
    call->done = 1;
    return HG_SUCCESS;
}

int
hg_sum_client_call(struct hg_sum_client *client, void (*progress)(void *),
                   void *progress_arg, int32_t *result)
{
    int32_t values[10] = {1, 4, 2, 5, 6, 3, 5, 3, 2, 5};
    hg_size_t size = sizeof(values);
    void *ptr = values;
    struct hg_sum_call call = {0, HG_SUCCESS};
    hg_sum_in_t in;
    hg_sum_out_t out;
    hg_handle_t handle;
    hg_bulk_t bulk;
    hg_return_t ret;
    int rc = -1;

    ret = HG_Bulk_create(client->hg_class, 1, &ptr, &size, HG_BULK_READ_ONLY,
                         &bulk);
    if (ret != HG_SUCCESS)
        return -1;
    ret = HG_Create(client->context, client->server, client->sum_id, &handle);
    if (ret != HG_SUCCESS)
        goto out_bulk;
    in.n = 10;
    in.bulk = bulk;
    ret = HG_Forward(handle, hg_sum_forward_cb, &call, &in);
    if (ret != HG_SUCCESS)
        goto out_handle;
    /* The values must stay exposed until the response is in: the server
     * reads them while it handles the RPC. */
    while (!call.done)
        progress(progress_arg);
    ret = call.ret;
    if (ret == HG_SUCCESS)
        ret = HG_Get_output(handle, &out);
    if (ret == HG_SUCCESS) {
        *result = out.ret;
        HG_Free_output(handle, &out);
        rc = 0;
    } else {
        fprintf(stderr, "hg_sum client: sum RPC: %s\n",
                HG_Error_to_string(ret));
    }
out_handle:
    HG_Destroy(handle);
out_bulk:
    HG_Bulk_free(bulk);
    return rc;
}
