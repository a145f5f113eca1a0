/*
 * Margo's configuration and its pools and execution streams.
 *
 * margo_get_config() returns the instance's effective configuration in
 * Margo's JSON format (see docs/margo.md), to free(). Pools and execution
 * streams are those of that configuration: "__primary__" (the thread that
 * created the instance, and the caller-context handler pool), plus those
 * named in the JSON or implied by margo_init()'s arguments ("__progress__",
 * "__rpc__", "__rpc_<i>__").
 */
#ifndef MARGO_CONFIG_H_PUBLIC
#define MARGO_CONFIG_H_PUBLIC

#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MARGO_CONFIG_PRETTY_JSON 0x1   /* human-readable output          */
#define MARGO_CONFIG_HIDE_EXTERNAL 0x2 /* accepted; nothing is external */
#define MARGO_CONFIG_USE_NAMES 0x4     /* pools by name, not index      */

char *margo_get_config(margo_instance_id mid);
char *margo_get_config_opt(margo_instance_id mid, int options);

#ifdef __cplusplus
}
#endif

#endif /* MARGO_CONFIG_H_PUBLIC */
