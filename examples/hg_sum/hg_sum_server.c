/*
 * The HG-level sum server: on each "sum" request it pulls the client's
 * values with a bulk transfer, adds them up and responds. Every step is a
 * callback; nothing blocks.
 */
#include "hg_sum.h"

#include <stdio.h>
#include <stdlib.h>

/* One request in flight on the server, from input to response. */
struct hg_sum_request {
    struct hg_sum_server *server;
    hg_handle_t handle;
    hg_sum_in_t in;
    int32_t *values;
    hg_bulk_t local_bulk;
};

static void
hg_sum_request_free(struct hg_sum_request *req)
{
    if (req->local_bulk != HG_BULK_NULL)
        HG_Bulk_free(req->local_bulk);
    HG_Free_input(req->handle, &req->in);
    HG_Destroy(req->handle);
    free(req->values);
    free(req);
}

static hg_return_t
hg_sum_respond_cb(const struct hg_cb_info *info)
{
    struct hg_sum_request *req = info->arg;

    if (info->ret != HG_SUCCESS)
        fprintf(stderr, "hg_sum server: respond: %s\n",
                HG_Error_to_string(info->ret));
    req->server->served++;
    hg_sum_request_free(req);
    return HG_SUCCESS;
}

static hg_return_t
hg_sum_pull_cb(const struct hg_cb_info *info)
{
    struct hg_sum_request *req = info->arg;
    hg_sum_out_t out = {0};
    hg_return_t ret;

    if (info->ret != HG_SUCCESS) {
        fprintf(stderr, "hg_sum server: bulk pull: %s\n",
                HG_Error_to_string(info->ret));
        hg_sum_request_free(req);
        return HG_SUCCESS;
    }
    for (int32_t i = 0; i < req->in.n; i++)
        out.ret += req->values[i];
    ret = HG_Respond(req->handle, hg_sum_respond_cb, req, &out);
    if (ret != HG_SUCCESS) {
        fprintf(stderr, "hg_sum server: HG_Respond: %s\n",
                HG_Error_to_string(ret));
        hg_sum_request_free(req);
    }
    return HG_SUCCESS;
}

static hg_return_t
hg_sum_rpc_cb(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);
    struct hg_sum_request *req = calloc(1, sizeof(*req));
    hg_size_t size;
    hg_return_t ret;

    if (req == NULL) {
        HG_Destroy(handle);
        return HG_NOMEM;
    }
    req->server = HG_Class_get_data(info->hg_class);
    req->handle = handle;
    ret = HG_Get_input(handle, &req->in);
    if (ret != HG_SUCCESS) {
        HG_Destroy(handle);
        free(req);
        return ret;
    }
    if (req->in.n <= 0 || req->in.n > 1024) {
        hg_sum_request_free(req);
        return HG_INVALID_ARG;
    }
    size = (hg_size_t) req->in.n * sizeof(int32_t);
    req->values = calloc((size_t) req->in.n, sizeof(int32_t));
    ret = req->values
              ? HG_Bulk_create(info->hg_class, 1, (void **) &req->values, &size,
                               HG_BULK_WRITE_ONLY, &req->local_bulk)
              : HG_NOMEM;
    if (ret == HG_SUCCESS)
        ret = HG_Bulk_transfer(info->context, hg_sum_pull_cb, req, HG_BULK_PULL,
                               info->addr, req->in.bulk, 0, req->local_bulk, 0,
                               size, HG_OP_ID_IGNORE);
    if (ret != HG_SUCCESS) {
        /* Returning the error makes HG answer the client with it. */
        hg_sum_request_free(req);
        return ret;
    }
    return HG_SUCCESS;
}

int
hg_sum_server_start(struct hg_sum_server *server, const char *info)
{
    server->served = 0;
    server->hg_class = HG_Init(info, HG_TRUE);
    if (server->hg_class == NULL)
        return -1;
    server->context = HG_Context_create(server->hg_class);
    if (server->context == NULL) {
        HG_Finalize(server->hg_class);
        return -1;
    }
    HG_Class_set_data(server->hg_class, server, NULL);
    server->sum_id = MERCURY_REGISTER(server->hg_class, "sum", hg_sum_in_t,
                                      hg_sum_out_t, hg_sum_rpc_cb);
    return 0;
}

int
hg_sum_server_done(const struct hg_sum_server *server)
{
    return server->served >= HG_SUM_TOTAL_RPCS;
}

int
hg_sum_server_stop(struct hg_sum_server *server)
{
    int rc = 0;

    if (HG_Context_destroy(server->context) != HG_SUCCESS)
        rc = -1;
    if (HG_Finalize(server->hg_class) != HG_SUCCESS)
        rc = -1;
    return rc;
}
