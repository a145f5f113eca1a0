/*
 * margo-hg-shim.h: an RPC registered through the shim has one proc
 * callback for both directions, margo_shim_proc(), which runs the proc
 * callback the caller names in each call. The structure handed to HG is a
 * pair (callback, user structure) on the caller's stack: HG encodes the
 * input before HG_Forward() returns and the output before HG_Respond()
 * returns, and decodes or frees within the Get / Free calls, so the pair
 * never outlives the call.
 */
#include "margo-hg-shim.h"

#include <stddef.h>

struct margo_shim_args {
    hg_proc_cb_t proc;
    void *data;
};

static hg_return_t
margo_shim_proc(hg_proc_t proc, void *arg)
{
    struct margo_shim_args *a = arg;

    if (a == NULL || a->proc == NULL)
        return HG_SUCCESS;
    return a->proc(proc, a->data);
}

hg_id_t
HG_Register_name_for_margo(hg_class_t *hg_class, const char *func_name,
                           hg_rpc_cb_t rpc_cb)
{
    return HG_Register_name(hg_class, func_name, margo_shim_proc,
                            margo_shim_proc, rpc_cb);
}

hg_return_t
HG_Forward_to_margo(hg_handle_t handle, hg_cb_t cb, void *args,
                    hg_proc_cb_t proc_in, void *in_struct)
{
    struct margo_shim_args a = {proc_in, in_struct};

    return HG_Forward(handle, cb, args, &a);
}

hg_return_t
HG_Respond_to_margo(hg_handle_t handle, hg_cb_t cb, void *args,
                    hg_proc_cb_t proc_out, void *out_struct)
{
    struct margo_shim_args a = {proc_out, out_struct};

    return HG_Respond(handle, cb, args, &a);
}

hg_return_t
HG_Get_input_from_margo(hg_handle_t handle, hg_proc_cb_t proc_in,
                        void *in_struct)
{
    struct margo_shim_args a = {proc_in, in_struct};

    if (in_struct == NULL)
        return HG_INVALID_ARG;
    return HG_Get_input(handle, &a);
}

hg_return_t
HG_Free_input_from_margo(hg_handle_t handle, hg_proc_cb_t proc_in,
                         void *in_struct)
{
    struct margo_shim_args a = {proc_in, in_struct};

    if (in_struct == NULL)
        return HG_INVALID_ARG;
    return HG_Free_input(handle, &a);
}

hg_return_t
HG_Get_output_from_margo(hg_handle_t handle, hg_proc_cb_t proc_out,
                         void *out_struct)
{
    struct margo_shim_args a = {proc_out, out_struct};

    if (out_struct == NULL)
        return HG_INVALID_ARG;
    return HG_Get_output(handle, &a);
}

hg_return_t
HG_Free_output_from_margo(hg_handle_t handle, hg_proc_cb_t proc_out,
                          void *out_struct)
{
    struct margo_shim_args a = {proc_out, out_struct};

    if (out_struct == NULL)
        return HG_INVALID_ARG;
    return HG_Free_output(handle, &a);
}
