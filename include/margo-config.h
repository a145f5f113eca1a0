/*
 * Margo's configuration and its pools and execution streams.
 *
 * margo_get_config() returns the instance's effective configuration in
 * Margo's JSON format (see docs/margo.md), to free(). Pools and execution
 * streams are those of that configuration, in Margo's order: those the
 * JSON lists, then "__primary__" (the thread that created the instance,
 * and the caller-context handler pool) unless the JSON defines it, then
 * those margo_init()'s arguments imply ("__pool_<n>__",
 * "__xstream_<n>__").
 */
#ifndef MARGO_CONFIG_H_PUBLIC
#define MARGO_CONFIG_H_PUBLIC

#include "qs_export.h"
#include "margo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MARGO_CONFIG_PRETTY_JSON 0x1   /* human-readable output          */
#define MARGO_CONFIG_HIDE_EXTERNAL 0x2 /* leave external pools/xstreams out */
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
 * such name or handle, HG_INVALID_ARG for an index out of range (as in
 * Margo) or a null instance, name or handle. The name
 * lives until the entry is removed (or the instance finalized); indices
 * change when an entry before the last is removed. */
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

/*
 * Pools and execution streams at run time (as in Margo 0.15+).
 *
 * margo_add_pool_from_json / margo_add_xstream_from_json take one object
 * of the configuration's "argobots.pools[]" / "argobots.xstreams[]" form
 * ("name" may be left out: __pool_<n>__ / __xstream_<n>__; an xstream's
 * scheduler pools name existing pools by name or index); the new entry is
 * appended (it shows in margo_get_config) and *info (may be NULL) filled.
 * HG_INVALID_ARG for bad JSON, a taken name or an unknown pool. A new
 * xstream starts at once and runs the work of its pools.
 *
 * margo_add_pool_external / margo_add_xstream_external register the
 * program's own pool or xstream (kind / scheduler type "external"; name
 * NULL: generated); with take_ownership ABT_TRUE Margo frees it on removal
 * and at finalize, otherwise it stays the program's. An external xstream's
 * pools must be the instance's already (HG_INVALID_ARG otherwise, as in
 * Margo's implementation, whose header comment says they would be added).
 *
 * Removal is refused and changes nothing while the entry is in use: a pool
 * that is the progress or default handler pool (HG_OTHER_ERROR), that has
 * references (margo_pool_ref_incr, or RPCs registered on it), is in an
 * xstream's scheduler, or holds ULTs waiting or running (HG_PERMISSION); an
 * xstream that is __primary__, has references, or is the caller's own
 * (HG_PERMISSION). A pool or xstream not found is HG_INVALID_ARG (Margo's
 * codes; an xstream index out of range is HG_OTHER_ERROR). Removing frees
 * what Margo owns: an xstream is joined (the work left in its pools runs
 * first); the last entry takes the removed one's index.
 *
 * Reference counts: ref_incr / release / ref_count by handle, name or
 * index; HG_NOENTRY for a handle or name not found, HG_INVALID_ARG for an
 * index out of range, HG_PERMISSION to release at zero.
 */
QS_EXPORT hg_return_t margo_add_pool_from_json(margo_instance_id mid,
                                               const char *json,
                                               struct margo_pool_info *info);
QS_EXPORT hg_return_t margo_add_pool_external(margo_instance_id mid,
                                              const char *name, ABT_pool pool,
                                              ABT_bool take_ownership,
                                              struct margo_pool_info *info);
QS_EXPORT hg_return_t margo_remove_pool_by_index(margo_instance_id mid,
                                                 uint32_t index);
QS_EXPORT hg_return_t margo_remove_pool_by_name(margo_instance_id mid,
                                                const char *name);
QS_EXPORT hg_return_t margo_remove_pool_by_handle(margo_instance_id mid,
                                                  ABT_pool handle);
QS_EXPORT hg_return_t margo_pool_ref_incr_by_handle(margo_instance_id mid,
                                                    ABT_pool handle);
QS_EXPORT hg_return_t margo_pool_ref_incr_by_name(margo_instance_id mid,
                                                  const char *name);
QS_EXPORT hg_return_t margo_pool_ref_incr_by_index(margo_instance_id mid,
                                                   uint32_t index);
QS_EXPORT hg_return_t margo_pool_ref_count_by_handle(margo_instance_id mid,
                                                     ABT_pool handle,
                                                     unsigned *refcount);
QS_EXPORT hg_return_t margo_pool_ref_count_by_name(margo_instance_id mid,
                                                   const char *name,
                                                   unsigned *refcount);
QS_EXPORT hg_return_t margo_pool_ref_count_by_index(margo_instance_id mid,
                                                    uint32_t index,
                                                    unsigned *refcount);
QS_EXPORT hg_return_t margo_pool_release_by_handle(margo_instance_id mid,
                                                   ABT_pool handle);
QS_EXPORT hg_return_t margo_pool_release_by_name(margo_instance_id mid,
                                                 const char *name);
QS_EXPORT hg_return_t margo_pool_release_by_index(margo_instance_id mid,
                                                  uint32_t index);

/* Add and start an xstream described by a JSON object (the form of an
 * "argobots.xstreams" entry); *info (may be NULL) receives its name,
 * handle and index. HG_INVALID_ARG for a NULL instance or a description
 * the configuration refuses, HG_NOMEM, HG_CANCELED once finalize began,
 * HG_OTHER_ERROR when the xstream cannot start (nothing is added). */
QS_EXPORT hg_return_t margo_add_xstream_from_json(
    margo_instance_id mid, const char *json, struct margo_xstream_info *info);
/* Register an xstream the program made; with take_ownership Margo joins
 * and frees it on removal or finalize. Its pools must be registered
 * (HG_INVALID_ARG otherwise). *info as for margo_add_xstream_from_json. */
QS_EXPORT hg_return_t margo_add_xstream_external(
    margo_instance_id mid, const char *name, ABT_xstream xstream,
    ABT_bool take_ownership, struct margo_xstream_info *info);
/* Remove the xstream at `index`: refused while in use (see above). */
QS_EXPORT hg_return_t margo_remove_xstream_by_index(margo_instance_id mid,
                                                    uint32_t index);
/* Remove the xstream named `name`: refused while in use (see above). */
QS_EXPORT hg_return_t margo_remove_xstream_by_name(margo_instance_id mid,
                                                   const char *name);
/* Remove the xstream `handle`: refused while in use (see above). */
QS_EXPORT hg_return_t margo_remove_xstream_by_handle(margo_instance_id mid,
                                                     ABT_xstream handle);
/* Take a reference on the xstream `handle`: removal is refused until it
 * is released. */
QS_EXPORT hg_return_t margo_xstream_ref_incr_by_handle(margo_instance_id mid,
                                                       ABT_xstream handle);
/* Take a reference on the xstream named `name`. */
QS_EXPORT hg_return_t margo_xstream_ref_incr_by_name(margo_instance_id mid,
                                                     const char *name);
/* Take a reference on the xstream at `index`. */
QS_EXPORT hg_return_t margo_xstream_ref_incr_by_index(margo_instance_id mid,
                                                      uint32_t index);
/* *refcount receives the references held on the xstream `handle`. */
QS_EXPORT hg_return_t margo_xstream_ref_count_by_handle(margo_instance_id mid,
                                                        ABT_xstream handle,
                                                        unsigned *refcount);
/* *refcount receives the references held on the xstream named `name`. */
QS_EXPORT hg_return_t margo_xstream_ref_count_by_name(margo_instance_id mid,
                                                      const char *name,
                                                      unsigned *refcount);
/* *refcount receives the references held on the xstream at `index`. */
QS_EXPORT hg_return_t margo_xstream_ref_count_by_index(margo_instance_id mid,
                                                       uint32_t index,
                                                       unsigned *refcount);
/* Drop a reference on the xstream `handle` (HG_PERMISSION at zero). */
QS_EXPORT hg_return_t margo_xstream_release_by_handle(margo_instance_id mid,
                                                      ABT_xstream handle);
/* Drop a reference on the xstream named `name` (HG_PERMISSION at zero). */
QS_EXPORT hg_return_t margo_xstream_release_by_name(margo_instance_id mid,
                                                    const char *name);
/* Drop a reference on the xstream at `index` (HG_PERMISSION at zero). */
QS_EXPORT hg_return_t margo_xstream_release_by_index(margo_instance_id mid,
                                                     uint32_t index);

/* Move the ULTs waiting in origin_pool to target_pool (running or blocked
 * ones stay). HG_INVALID_ARG for a null pool. */
QS_EXPORT hg_return_t margo_transfer_pool_content(ABT_pool origin_pool,
                                                  ABT_pool target_pool);

#ifndef __cplusplus
#define margo_remove_pool(mid, args)                                           \
    _Generic((args),                                                           \
        ABT_pool: margo_remove_pool_by_handle,                                 \
        const char *: margo_remove_pool_by_name,                               \
        char *: margo_remove_pool_by_name,                                     \
        default: margo_remove_pool_by_index)(mid, args)
#define margo_pool_ref_incr(mid, args)                                         \
    _Generic((args),                                                           \
        ABT_pool: margo_pool_ref_incr_by_handle,                               \
        const char *: margo_pool_ref_incr_by_name,                             \
        char *: margo_pool_ref_incr_by_name,                                   \
        default: margo_pool_ref_incr_by_index)(mid, args)
#define margo_pool_ref_count(mid, args, refcount)                              \
    _Generic((args),                                                           \
        ABT_pool: margo_pool_ref_count_by_handle,                              \
        const char *: margo_pool_ref_count_by_name,                            \
        char *: margo_pool_ref_count_by_name,                                  \
        default: margo_pool_ref_count_by_index)(mid, args, refcount)
#define margo_pool_release(mid, args)                                          \
    _Generic((args),                                                           \
        ABT_pool: margo_pool_release_by_handle,                                \
        const char *: margo_pool_release_by_name,                              \
        char *: margo_pool_release_by_name,                                    \
        default: margo_pool_release_by_index)(mid, args)
#define margo_remove_xstream(mid, args)                                        \
    _Generic((args),                                                           \
        ABT_xstream: margo_remove_xstream_by_handle,                           \
        const char *: margo_remove_xstream_by_name,                            \
        char *: margo_remove_xstream_by_name,                                  \
        default: margo_remove_xstream_by_index)(mid, args)
#define margo_xstream_ref_incr(mid, args)                                      \
    _Generic((args),                                                           \
        ABT_xstream: margo_xstream_ref_incr_by_handle,                         \
        const char *: margo_xstream_ref_incr_by_name,                          \
        char *: margo_xstream_ref_incr_by_name,                                \
        default: margo_xstream_ref_incr_by_index)(mid, args)
#define margo_xstream_ref_count(mid, args, refcount)                           \
    _Generic((args),                                                           \
        ABT_xstream: margo_xstream_ref_count_by_handle,                        \
        const char *: margo_xstream_ref_count_by_name,                         \
        char *: margo_xstream_ref_count_by_name,                               \
        default: margo_xstream_ref_count_by_index)(mid, args, refcount)
#define margo_xstream_release(mid, args)                                       \
    _Generic((args),                                                           \
        ABT_xstream: margo_xstream_release_by_handle,                          \
        const char *: margo_xstream_release_by_name,                           \
        char *: margo_xstream_release_by_name,                                 \
        default: margo_xstream_release_by_index)(mid, args)
#endif

#ifdef __cplusplus
}
#endif

#endif /* MARGO_CONFIG_H_PUBLIC */
