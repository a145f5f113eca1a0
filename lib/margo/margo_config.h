/*
 * The effective configuration of an instance, from margo_init() arguments
 * or margo_init_ext()'s JSON (Margo's documented format), and its JSON
 * output for margo_get_config(). Private to lib/margo.
 */
#ifndef MARGO_CONFIG_H
#define MARGO_CONFIG_H

#include "margo.h"

#include <json-c/json.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MARGO_NAME_MAX 64
#define MARGO_XSTREAM_POOLS_MAX 16

/* A pool or xstream of the instance. Names are allocated on their own so
 * that the pointers margo_find_* hand out stay valid while the arrays
 * grow. */
struct margo_pool_spec {
    char *name;
    char kind[24];   /* fifo, fifo_wait, prio_wait, earliest_first, external */
    char access[16]; /* private, spsc, mpsc, spmc, mpmc; "" when external */
    bool not_owned;  /* external, not Margo's to free */
    unsigned refcount; /* margo_pool_ref_incr and RPCs registered on it */
};

struct margo_xstream_spec {
    char *name;
    char sched[24];    /* default, basic, prio, randws, basic_wait, external */
    bool not_owned;    /* external, not Margo's to free */
    unsigned refcount; /* margo_xstream_ref_incr */
    int cpubind;       /* -1: none; applied after affinity, as Margo does */
    int *affinity;     /* CPU ids (ABT_xstream_set_affinity), owned */
    int naffinity;     /* 0: no "affinity" given */
    size_t npools;
    unsigned pools[MARGO_XSTREAM_POOLS_MAX]; /* indices into pools */
};

struct margo_config {
    bool use_progress_thread; /* derived: progress pool is not primary */
    unsigned progress_timeout_ub_msec;
    unsigned progress_spindown_msec; /* recorded and reported only */
    unsigned handle_cache_size;      /* recorded and reported only */
    bool enable_abt_profiling;
    char *plumber_bucket_policy; /* "plumber": recorded and reported only */
    char *plumber_nic_policy;
    char *profiling_dir;    /* "argobots.profiling_dir" ("." by default) */
    struct hg_init_info hg; /* the "mercury" section          */
    char *sm_info_string;   /* owned copy of hg.sm_info_string */
    char *ip_subnet;        /* owned copy of hg.na_init_info.ip_subnet */
    char *auth_key;         /* owned copy of hg.na_init_info.auth_key  */
    char *log_level;        /* "mercury.log_level": HG_Set_log_level()  */
    char *log_subsys;       /* "mercury.log_subsys": HG_Set_log_subsys() */
    /* "argobots.abt_thread_stacksize" and "abt_mem_max_num_stacks", -1
     * when absent: exported as ABT_THREAD_STACKSIZE and
     * ABT_MEM_MAX_NUM_STACKS before margo_init calls ABT_init(). */
    int64_t abt_thread_stacksize, abt_mem_max_num_stacks;
    /* Keys of the "mercury" section that describe an instance rather
     * than configure it (margo_get_config() writes them): checked against
     * the instance once HG is up, a mismatch warned. -1 / NULL: absent. */
    uint32_t hg_given; /* bit i: cfg_hg_keys[i] was in the JSON */
    struct {
        char *address, *version;
        int listening;
        int64_t input_eager_size, output_eager_size;
    } given;
    /* In Margo's order: the JSON's pools and xstreams first, then
     * "__primary__" unless the JSON defines it, then those that
     * use_progress_thread and rpc_thread_count imply. */
    size_t npools, nxstreams;
    struct margo_pool_spec *pools;
    struct margo_xstream_spec *xstreams;
    unsigned primary_pool, primary_xstream; /* "__primary__"'s indices */
    unsigned progress_pool, rpc_pool;       /* indices into pools      */
};

/*
 * Build the configuration from a JSON document (NULL: none) and the
 * legacy arguments it may override. hg_base (may be NULL) seeds the
 * "mercury" section. Returns 0, or -1 after logging why (invalid JSON, a
 * field of the wrong type or value, a reference to an unknown pool).
 */
int margo_config_build(struct margo_config *cfg, const char *json,
                       int use_progress_thread, int rpc_thread_count,
                       const struct hg_init_info *hg_base);
/*
 * The configuration of a child instance (margo_init_ext's parent_mid): the
 * parent's pools and xstreams (parent read under margo_lock), none of them
 * the child's to free; the JSON may name the progress and RPC pools among
 * them ("__primary__" otherwise) but may not have "argobots",
 * "use_progress_thread" or "rpc_thread_count". Returns 0, or -1 after
 * logging why.
 */
int margo_config_build_child(struct margo_config *cfg, const char *json,
                             const struct margo_config *parent,
                             const struct hg_init_info *hg_base);
void margo_config_free(struct margo_config *cfg);

/*
 * Append one pool or xstream to a live configuration, from a JSON object
 * of the "argobots.pools[]" / "argobots.xstreams[]" form (a missing name
 * is generated: __pool_<n>__, __xstream_<n>__), or an external one by
 * name (NULL: generated) for margo_add_*_external. Returns 0, or -1 after
 * logging why; the configuration is unchanged on error.
 */
int margo_config_add_pool_json(struct margo_config *cfg, const char *json);
int margo_config_add_xstream_json(struct margo_config *cfg, const char *json);
int margo_config_add_external_pool(struct margo_config *cfg, const char *name);
int margo_config_add_external_xstream(struct margo_config *cfg,
                                      const char *name, const unsigned *pools,
                                      size_t npools);
/* Remove entry i, moving the last one into its place (pool references
 * are renumbered). */
void margo_config_remove_pool(struct margo_config *cfg, size_t i);
void margo_config_remove_xstream(struct margo_config *cfg, size_t i);

/* What the instance reports of itself in margo_get_config(), beside its
 * configuration. */
struct margo_config_live {
    const char *address;
    bool listening;
    hg_size_t input_eager_size, output_eager_size;
};

/* Margo's names for hg_init_info's checksum levels and NA address
 * formats, NULL-terminated (read by the parser, written back out). */
extern const char *const margo_cfg_checksum_levels[];
extern const char *const margo_cfg_addr_formats[];

/* The configuration as JSON (malloc'd); options are MARGO_CONFIG_* flags.
 * NULL on error (margo_config_json.c). */
char *margo_config_to_json(const struct margo_config *cfg,
                           const struct margo_config_live *live, int options);

/*
 * Once HG is up (hg_class the instance's, addr_arg the address it was
 * given): warn, one line per key, about the configuration keys this
 * instance does not honour, and apply the HG log settings. Keys whose
 * value only describes the instance (mercury.address, listening, version,
 * input_eager_size, output_eager_size) are warned when they disagree with
 * it.
 */
void margo_config_report(const struct margo_config *cfg, hg_class_t *hg_class,
                         const char *addr_arg, bool external_hg);

/* ---- Shared by the parser's two files (margo_config.c, the top level
 * and "mercury"; margo_config_abt.c, "argobots") ---------------------- */

/* Whether s is one of the NULL-terminated set. */
bool margo_cfg_in(const char *s, const char *const *set);
/* Field key of obj with the given type: 1 present (*out set), 0 absent,
 * -1 wrong type (logged; ctx prefixes the key in the message). */
int margo_cfg_get(json_object *obj, const char *ctx, const char *key,
                  json_type type, json_object **out);
/* A boolean field into *dst: 0 (absent or set) or -1 (logged). */
int margo_cfg_bool(json_object *obj, const char *ctx, const char *key,
                   bool *dst);
/* An integer field in [min, max] into *dst: 1 set, 0 absent, -1 logged. */
int margo_cfg_int(json_object *obj, const char *ctx, const char *key,
                  int64_t min, int64_t max, int64_t *dst);
/* The JSON object that is the whole text, or NULL after logging why. */
json_object *margo_cfg_parse_text(const char *json, const char *what);
int margo_cfg_find_pool(const struct margo_config *cfg, const char *name);
/* The "argobots" object's pools and xstreams, appended in order, and its
 * other keys. abt_up: Argobots was initialized before this instance. */
int margo_cfg_parse_argobots(struct margo_config *cfg, json_object *abt,
                             bool abt_up);
/* Warn when the ULT stack settings cannot be applied (margo_config_abt.c). */
void margo_cfg_check_abt_env(const struct margo_config *cfg, bool abt_up);
/* Margo's defaults for the two Argobots environment variables. */
#define MARGO_ABT_STACKSIZE (2 * 1024 * 1024)
#define MARGO_ABT_MAX_NUM_STACKS 8
/* Once the JSON's pools and xstreams are in: "__primary__", the progress
 * and RPC pools (ppool / rpool the JSON's references, or NULL; use_pt and
 * rpc_threads the legacy fields, ignored where a reference is given), and
 * the warnings about the layout. */
int margo_cfg_finish_pools(struct margo_config *cfg, bool abt_up,
                           json_object *ppool, json_object *rpool, bool use_pt,
                           int rpc_threads);

/* A child's pools: the parent's layout, then the references resolved in
 * it. */
int margo_cfg_inherit_pools(struct margo_config *cfg,
                            const struct margo_config *parent,
                            json_object *ppool, json_object *rpool);

#endif /* MARGO_CONFIG_H */
