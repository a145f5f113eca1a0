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

#include "qs_export.h"
#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MARGO_CONFIG_PRETTY_JSON 0x1   /* human-readable output          */
#define MARGO_CONFIG_HIDE_EXTERNAL 0x2 /* accepted; nothing is external */
#define MARGO_CONFIG_USE_NAMES 0x4     /* pools by name, not index      */

/* The instance's current configuration as a JSON string the caller frees
 * with free(); margo_get_config_opt() takes MARGO_CONFIG_* flags. NULL for
 * a NULL instance. */
QS_EXPORT char *margo_get_config(margo_instance_id mid);
QS_EXPORT char *margo_get_config_opt(margo_instance_id mid, int options);

/* Counts of the instance's pools and execution streams. */
QS_EXPORT size_t margo_get_num_pools(margo_instance_id mid);
QS_EXPORT size_t margo_get_num_xstreams(margo_instance_id mid);

/* A pool or execution stream of the instance, by handle, name or index:
 * HG_SUCCESS and *info filled (info may be NULL), HG_NOENTRY if there is no
 * such one, HG_INVALID_ARG for a null instance, name or handle. The name
 * lives as long as the instance. */
struct margo_pool_info {
    ABT_pool pool;
    const char *name;
    uint32_t index;
};
/* Find a pool by handle, name or index, as described above. */
QS_EXPORT hg_return_t margo_find_pool_by_handle(margo_instance_id mid,
                                                ABT_pool handle,
                                                struct margo_pool_info *info);
QS_EXPORT hg_return_t margo_find_pool_by_name(margo_instance_id mid,
                                              const char *name,
                                              struct margo_pool_info *info);
QS_EXPORT hg_return_t margo_find_pool_by_index(margo_instance_id mid,
                                               uint32_t index,
                                               struct margo_pool_info *info);
struct margo_xstream_info {
    ABT_xstream xstream;
    const char *name;
    uint32_t index;
};
/* Find an execution stream by handle, name or index, as described above. */
QS_EXPORT hg_return_t margo_find_xstream_by_handle(
    margo_instance_id mid, ABT_xstream handle, struct margo_xstream_info *info);
QS_EXPORT hg_return_t margo_find_xstream_by_name(
    margo_instance_id mid, const char *name, struct margo_xstream_info *info);
QS_EXPORT hg_return_t margo_find_xstream_by_index(
    margo_instance_id mid, uint32_t index, struct margo_xstream_info *info);

/* The generic forms, as in Margo (C11 _Generic; C only). */
#ifndef __cplusplus
#define margo_find_pool(mid, args, info)                                       \
    _Generic((args),                                                           \
        ABT_pool: margo_find_pool_by_handle,                                   \
        const char *: margo_find_pool_by_name,                                 \
        char *: margo_find_pool_by_name,                                       \
        default: margo_find_pool_by_index)(mid, args, info)
#define margo_find_xstream(mid, args, info)                                    \
    _Generic((args),                                                           \
        ABT_xstream: margo_find_xstream_by_handle,                             \
        const char *: margo_find_xstream_by_name,                              \
        char *: margo_find_xstream_by_name,                                    \
        default: margo_find_xstream_by_index)(mid, args, info)
#endif

#ifdef __cplusplus
}
#endif

#endif /* MARGO_CONFIG_H_PUBLIC */
