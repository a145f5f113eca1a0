/*
 * margo-hg-shim.h: HG calls for a program written against plain Mercury
 * that talks to Margo programs, with the names and signatures Margo gives
 * them (Margo ships them as libmargo-hg-shim; here they are in
 * libquicksilver, and margo-hg-shim.pc names it).
 *
 * Real Margo adds a header of its own to every RPC's input and output and
 * derives RPC ids from names its own way, so a plain Mercury peer has to
 * go through these functions. Quicksilver's Margo adds no header and gives
 * MARGO_DEFAULT_PROVIDER_ID's RPCs the id HG_Register_name() gives, so the
 * two sides agree on the wire either way; what the shim changes is where
 * the proc callbacks come from: an RPC registered with
 * HG_Register_name_for_margo() has none of its own, and each call below
 * names the proc callback of the structure it encodes or decodes.
 *
 * As in Margo, provider ids other than MARGO_DEFAULT_PROVIDER_ID are not
 * supported, and HG_Register() has no shim form. Return codes are those of
 * the HG call each one wraps (HG_INVALID_ARG for a NULL handle, struct or
 * proc callback where HG needs one).
 */
#ifndef MARGO_HG_SHIM_H
#define MARGO_HG_SHIM_H

#include "mercury.h"
#include "mercury_proc.h"
#include "qs_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Register func_name with the id Margo's MARGO_DEFAULT_PROVIDER_ID gives
 * it (0 on error). rpc_cb may be NULL on a pure origin. */
QS_EXPORT hg_id_t HG_Register_name_for_margo(hg_class_t *hg_class,
                                             const char *func_name,
                                             hg_rpc_cb_t rpc_cb);

/* HG_Forward / HG_Respond, encoding *in_struct / *out_struct with
 * proc_in / proc_out (NULL: the RPC carries no data that way). */
QS_EXPORT hg_return_t HG_Forward_to_margo(hg_handle_t handle, hg_cb_t cb,
                                          void *args, hg_proc_cb_t proc_in,
                                          void *in_struct);
QS_EXPORT hg_return_t HG_Respond_to_margo(hg_handle_t handle, hg_cb_t cb,
                                          void *args, hg_proc_cb_t proc_out,
                                          void *out_struct);

/* HG_Get_input / HG_Free_input / HG_Get_output / HG_Free_output through
 * the given proc callback. */
QS_EXPORT hg_return_t HG_Get_input_from_margo(hg_handle_t handle,
                                              hg_proc_cb_t proc_in,
                                              void *in_struct);
QS_EXPORT hg_return_t HG_Free_input_from_margo(hg_handle_t handle,
                                               hg_proc_cb_t proc_in,
                                               void *in_struct);
QS_EXPORT hg_return_t HG_Get_output_from_margo(hg_handle_t handle,
                                               hg_proc_cb_t proc_out,
                                               void *out_struct);
QS_EXPORT hg_return_t HG_Free_output_from_margo(hg_handle_t handle,
                                                hg_proc_cb_t proc_out,
                                                void *out_struct);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_HG_SHIM_H */
