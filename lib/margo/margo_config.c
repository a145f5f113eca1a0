/*
 * Margo's JSON configuration (margo_config.h), parsed with json-c: the
 * top-level keys and the "mercury" section here, the "argobots" section
 * (pools, execution streams, "__primary__", the progress and RPC pools)
 * in margo_config_abt.c.
 *
 * What is accepted and refused is what Margo accepts and refuses: a known
 * field of the wrong type or value, an invalid or duplicate name or a
 * reference to an unknown pool is an error. use_progress_thread and
 * rpc_thread_count imply pools and xstreams unless progress_pool /
 * rpc_pool name the pools themselves. Every key without effect here
 * (unknown, Margo's diagnostics and monitoring, a value other than the
 * default for what is only recorded, a pool kind or scheduler type that
 * runs as FIFO) is warned by name, one line each; the checks that need
 * the instance are in margo_config_report().
 */
#include "margo_config.h"
#include "margo_internal.h"

#include <stdlib.h>
#include <string.h>

#define CFG_ERR(...)                                                           \
    margo_log(NULL, MARGO_LOG_ERROR, "margo config: " __VA_ARGS__)
#define CFG_WARN(...)                                                          \
    margo_log(NULL, MARGO_LOG_WARNING, "margo config: " __VA_ARGS__)

static const char *const cfg_top_keys[] = {"version",
                                           "use_progress_thread",
                                           "rpc_thread_count",
                                           "progress_timeout_ub_msec",
                                           "handle_cache_size",
                                           "enable_abt_profiling",
                                           "progress_pool",
                                           "rpc_pool",
                                           "mercury",
                                           "argobots",
                                           "profile_sparkline_timeslice_msec",
                                           "progress_spindown_msec",
                                           "output_dir",
                                           "enable_profiling",
                                           "enable_diagnostics",
                                           "monitoring",
                                           "plumber",
                                           NULL};
/* Known top-level keys this layer does not honour (warned when present,
 * unless false). */
static const char *const cfg_top_unsupported[] = {
    "profile_sparkline_timeslice_msec",
    "output_dir",
    "enable_profiling",
    "enable_diagnostics",
    "monitoring",
    NULL};

bool
margo_cfg_in(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

/* Field `key` of obj with the given type: 1 present, 0 absent, -1 wrong
 * type (logged). */
int
margo_cfg_get(json_object *obj, const char *ctx, const char *key,
              json_type type, json_object **out)
{
    json_object *v;

    if (!json_object_object_get_ex(obj, key, &v) || v == NULL)
        return 0;
    if (!json_object_is_type(v, type) &&
        !(type == json_type_double && json_object_is_type(v, json_type_int))) {
        CFG_ERR("\"%s%s\" must be of JSON type %s", ctx, key,
                json_type_to_name(type));
        return -1;
    }
    *out = v;
    return 1;
}

int
margo_cfg_bool(json_object *obj, const char *ctx, const char *key, bool *dst)
{
    json_object *v;
    int rc = margo_cfg_get(obj, ctx, key, json_type_boolean, &v);

    if (rc > 0)
        *dst = json_object_get_boolean(v);
    return rc < 0 ? -1 : 0;
}

int
margo_cfg_int(json_object *obj, const char *ctx, const char *key, int64_t min,
              int64_t max, int64_t *dst)
{
    json_object *v;
    int rc = margo_cfg_get(obj, ctx, key, json_type_int, &v);
    int64_t x;

    if (rc <= 0)
        return rc;
    x = json_object_get_int64(v);
    if (x < min || x > max) {
        CFG_ERR("\"%s%s\" is %lld, outside [%lld, %lld]", ctx, key,
                (long long) x, (long long) min, (long long) max);
        return -1;
    }
    *dst = x;
    return 1;
}

static int
cfg_string(json_object *obj, const char *ctx, const char *key, char **dst)
{
    json_object *v;
    int rc = margo_cfg_get(obj, ctx, key, json_type_string, &v);
    char *copy;

    if (rc <= 0)
        return rc;
    if ((copy = strdup(json_object_get_string(v))) == NULL)
        return -1;
    free(*dst);
    *dst = copy;
    return 1;
}

/* A string field that must be one of names[]: its index, or -1 absent,
 * -2 wrong (logged). */
static int
cfg_enum(json_object *obj, const char *key, const char *const *names)
{
    json_object *v;
    int rc = margo_cfg_get(obj, "mercury.", key, json_type_string, &v);

    if (rc <= 0)
        return rc < 0 ? -2 : -1;
    for (int i = 0; names[i]; i++)
        if (strcmp(json_object_get_string(v), names[i]) == 0)
            return i;
    CFG_ERR("\"mercury.%s\" is \"%s\", not one of Margo's values", key,
            json_object_get_string(v));
    return -2;
}

const char *const margo_cfg_checksum_levels[] = {"none", "rpc_headers",
                                                 "rpc_payload", NULL};
const char *const margo_cfg_addr_formats[] = {"unspec", "ipv4", "ipv6",
                                              "native", NULL};

/* Keys of the "mercury" section, all mapped onto hg_init_info (or HG's
 * log settings) as Margo maps them, or, for the five that describe an
 * instance, checked against it by margo_config_report(). */
static const char *const cfg_hg_keys[] = {"address",
                                          "listening",
                                          "version",
                                          "input_eager_size",
                                          "output_eager_size",
                                          "auto_sm",
                                          "sm_info_string",
                                          "no_bulk_eager",
                                          "no_loopback",
                                          "stats",
                                          "release_input_early",
                                          "no_multi_recv",
                                          "request_post_init",
                                          "request_post_incr",
                                          "probe_interval_ms",
                                          "no_probe",
                                          "na_no_block",
                                          "na_no_retry",
                                          "max_contexts",
                                          "ip_subnet",
                                          "auth_key",
                                          "na_max_expected_size",
                                          "na_max_unexpected_size",
                                          "na_request_mem_device",
                                          "checksum_level",
                                          "na_addr_format",
                                          "log_level",
                                          "log_subsys",
                                          NULL};

static int
cfg_parse_mercury_given(struct margo_config *cfg, json_object *hg)
{
    bool b = false;
    int64_t v;
    int rc;

    if (cfg_string(hg, "mercury.", "address", &cfg->given.address) < 0 ||
        cfg_string(hg, "mercury.", "version", &cfg->given.version) < 0)
        return -1;
    if ((rc = margo_cfg_bool(hg, "mercury.", "listening", &b)) < 0)
        return -1;
    if (json_object_object_get_ex(hg, "listening", NULL))
        cfg->given.listening = b;
    v = -1;
    if (margo_cfg_int(hg, "mercury.", "input_eager_size", 0, INT64_MAX, &v) < 0)
        return -1;
    cfg->given.input_eager_size = v;
    v = -1;
    if (margo_cfg_int(hg, "mercury.", "output_eager_size", 0, INT64_MAX, &v) <
        0)
        return -1;
    cfg->given.output_eager_size = v;
    return 0;
}

static int
cfg_parse_mercury(struct margo_config *cfg, json_object *hg)
{
    struct na_init_info *na = &cfg->hg.na_init_info;
    bool b;
    int64_t v;
    int rc = 0, e;

    json_object_object_foreach(hg, key, val)
    {
        (void) val;
        if (!margo_cfg_in(key, cfg_hg_keys))
            margo_log(NULL, MARGO_LOG_WARNING,
                      "margo config: unknown key \"mercury.%s\" ignored", key);
        for (int i = 0; cfg_hg_keys[i]; i++)
            if (strcmp(key, cfg_hg_keys[i]) == 0)
                cfg->hg_given |= UINT32_C(1) << i;
    }
    if (cfg_parse_mercury_given(cfg, hg))
        return -1;
#define CFG_HG_BOOL(name)                                                      \
    b = cfg->hg.name;                                                          \
    rc |= margo_cfg_bool(hg, "mercury.", #name, &b);                           \
    cfg->hg.name = b ? HG_TRUE : HG_FALSE;
    CFG_HG_BOOL(auto_sm)
    CFG_HG_BOOL(no_bulk_eager)
    CFG_HG_BOOL(no_loopback)
    CFG_HG_BOOL(stats)
    CFG_HG_BOOL(release_input_early)
    CFG_HG_BOOL(no_multi_recv)
    CFG_HG_BOOL(no_probe)
#undef CFG_HG_BOOL
    /* Margo's na_no_block and na_no_retry are the two progress_mode
     * flags. */
#define CFG_NA_FLAG(key, flag)                                                 \
    b = (na->progress_mode & (flag)) != 0;                                     \
    rc |= margo_cfg_bool(hg, "mercury.", key, &b);                             \
    na->progress_mode = b ? (na->progress_mode | (flag))                       \
                          : (na->progress_mode & ~(uint32_t) (flag));
    CFG_NA_FLAG("na_no_block", NA_NO_BLOCK)
    CFG_NA_FLAG("na_no_retry", NA_NO_RETRY)
#undef CFG_NA_FLAG
    b = na->request_mem_device;
    rc |= margo_cfg_bool(hg, "mercury.", "na_request_mem_device", &b);
    na->request_mem_device = b;
#define CFG_HG_INT(field, key, max)                                            \
    v = (int64_t) (field);                                                     \
    if (margo_cfg_int(hg, "mercury.", key, 0, max, &v) < 0)                    \
        rc = -1;                                                               \
    else                                                                       \
        (field) = v;
    CFG_HG_INT(cfg->hg.request_post_init, "request_post_init", UINT32_MAX)
    CFG_HG_INT(cfg->hg.request_post_incr, "request_post_incr", UINT32_MAX)
    /* The liveness probe (docs/architecture.md, "Liveness"): 0 is HG's
     * default interval. */
    CFG_HG_INT(cfg->hg.probe_interval_ms, "probe_interval_ms", 3600000)
    CFG_HG_INT(na->max_contexts, "max_contexts", UINT8_MAX)
    /* 0 is the plugin's default; the plugin refuses what it cannot do. */
    CFG_HG_INT(na->max_unexpected_size, "na_max_unexpected_size", INT64_MAX)
    CFG_HG_INT(na->max_expected_size, "na_max_expected_size", INT64_MAX)
#undef CFG_HG_INT
    if ((e = cfg_enum(hg, "checksum_level", margo_cfg_checksum_levels)) < -1)
        rc = -1;
    else if (e >= 0)
        cfg->hg.checksum_level = (hg_checksum_level_t) e;
    /* NA refuses the formats no plugin here produces (ipv6, native). */
    if ((e = cfg_enum(hg, "na_addr_format", margo_cfg_addr_formats)) < -1)
        rc = -1;
    else if (e >= 0)
        na->addr_format = (enum na_addr_format) e;
    /* Strings go to HG and NA as they are: HG refuses sm_info_string
     * without auto_sm, the plugins refuse auth_key (and ofi, sm and verbs
     * ip_subnet). */
    if (cfg_string(hg, "mercury.", "sm_info_string", &cfg->sm_info_string) <
            0 ||
        cfg_string(hg, "mercury.", "ip_subnet", &cfg->ip_subnet) < 0 ||
        cfg_string(hg, "mercury.", "auth_key", &cfg->auth_key) < 0 ||
        cfg_string(hg, "mercury.", "log_level", &cfg->log_level) < 0 ||
        cfg_string(hg, "mercury.", "log_subsys", &cfg->log_subsys) < 0)
        return -1;
    cfg->hg.sm_info_string = cfg->sm_info_string;
    na->ip_subnet = cfg->ip_subnet;
    na->auth_key = cfg->auth_key;
    return rc ? -1 : 0;
}

/* The JSON object in text (the whole text), or NULL after logging why. */
json_object *
margo_cfg_parse_text(const char *json, const char *what)
{
    struct json_tokener *tok = json_tokener_new();
    json_object *root;
    enum json_tokener_error jerr;

    if (tok == NULL)
        return NULL;
    root = json_tokener_parse_ex(tok, json, (int) strlen(json));
    jerr = json_tokener_get_error(tok);
    if (root == NULL || jerr != json_tokener_success ||
        tok->char_offset < (int) strlen(json)) {
        CFG_ERR("invalid JSON near offset %d: %s", tok->char_offset,
                jerr == json_tokener_success ? "trailing characters"
                : jerr == json_tokener_continue
                    ? "unexpected end of input"
                    : json_tokener_error_desc(jerr));
        json_object_put(root);
        root = NULL;
    } else if (!json_object_is_type(root, json_type_object)) {
        CFG_ERR("%s must be a JSON object", what);
        json_object_put(root);
        root = NULL;
    }
    json_tokener_free(tok);
    return root;
}

/* The top-level keys that only record a value (margo_get_config() gives it
 * back): warned when they ask for something other than Margo's default,
 * which is what this layer does anyway. */
static int
cfg_parse_recorded(struct margo_config *cfg, json_object *root)
{
    json_object *plumber = NULL;
    int64_t x;

    x = cfg->progress_timeout_ub_msec;
    if (margo_cfg_int(root, "", "progress_timeout_ub_msec", 0, 1000000, &x) < 0)
        return -1;
    cfg->progress_timeout_ub_msec = (unsigned) x;
    x = cfg->progress_spindown_msec;
    if (margo_cfg_int(root, "", "progress_spindown_msec", 0, 1000000, &x) < 0)
        return -1;
    if ((unsigned) x != cfg->progress_spindown_msec)
        CFG_WARN("\"progress_spindown_msec\" %lld recorded only: progress "
                 "does not spin here, it sleeps in the plugin's wait",
                 (long long) x);
    cfg->progress_spindown_msec = (unsigned) x;
    x = cfg->handle_cache_size;
    if (margo_cfg_int(root, "", "handle_cache_size", 0, 1 << 20, &x) < 0)
        return -1;
    if ((unsigned) x != cfg->handle_cache_size)
        CFG_WARN("\"handle_cache_size\" %lld recorded only: there is no "
                 "handle cache to size (HG reuses its handles itself)",
                 (long long) x);
    cfg->handle_cache_size = (unsigned) x;
    /* NIC selection has nothing to choose from here; the default
     * policies are accepted silently so that an instance's own output
     * round-trips. */
    if (margo_cfg_get(root, "", "plumber", json_type_object, &plumber) < 0 ||
        (plumber && (cfg_string(plumber, "plumber.", "bucket_policy",
                                &cfg->plumber_bucket_policy) < 0 ||
                     cfg_string(plumber, "plumber.", "nic_policy",
                                &cfg->plumber_nic_policy) < 0)))
        return -1;
    if (strcmp(cfg->plumber_bucket_policy, "package") != 0 ||
        strcmp(cfg->plumber_nic_policy, "roundrobin") != 0)
        CFG_WARN("\"plumber\" policies recorded only: NICs are not "
                 "selected here");
    return 0;
}

/* The top-level keys; *ppool and *rpool point to the progress_pool and
 * rpc_pool references, if any. */
static int
cfg_parse_root(struct margo_config *cfg, json_object *root, bool abt_up,
               bool *use_pt, int *rpc_threads, json_object **ppool,
               json_object **rpool)
{
    json_object *v = NULL;
    int64_t x;

    json_object_object_foreach(root, key, val)
    {
        if (!margo_cfg_in(key, cfg_top_keys))
            CFG_WARN("unknown key \"%s\" ignored", key);
        else if (margo_cfg_in(key, cfg_top_unsupported) &&
                 !(json_object_is_type(val, json_type_boolean) &&
                   !json_object_get_boolean(val)))
            CFG_WARN("\"%s\" ignored: Margo's diagnostics and monitoring "
                     "are not provided",
                     key);
    }
    if (margo_cfg_bool(root, "", "use_progress_thread", use_pt) ||
        margo_cfg_bool(root, "", "enable_abt_profiling",
                       &cfg->enable_abt_profiling))
        return -1;
    /* Any negative count means "on the progress pool", as in Margo. */
    x = *rpc_threads;
    if (margo_cfg_int(root, "", "rpc_thread_count", INT32_MIN, 4096, &x) < 0)
        return -1;
    *rpc_threads = (int) x;
    if (cfg_parse_recorded(cfg, root))
        return -1;
    json_object_object_get_ex(root, "progress_pool", ppool);
    json_object_object_get_ex(root, "rpc_pool", rpool);
    if ((*ppool && !json_object_is_type(*ppool, json_type_int) &&
         !json_object_is_type(*ppool, json_type_string)) ||
        (*rpool && !json_object_is_type(*rpool, json_type_int) &&
         !json_object_is_type(*rpool, json_type_string))) {
        CFG_ERR("\"progress_pool\" and \"rpc_pool\" must be a pool's name "
                "or index");
        return -1;
    }
    if (margo_cfg_get(root, "", "mercury", json_type_object, &v) < 0)
        return -1;
    if (v != NULL && cfg_parse_mercury(cfg, v))
        return -1;
    v = NULL;
    if (margo_cfg_get(root, "", "argobots", json_type_object, &v) < 0)
        return -1;
    return v ? margo_cfg_parse_argobots(cfg, v, abt_up) : 0;
}

/* The caller's strings in hg_init_info: copies for the instance's
 * lifetime. */
static int
cfg_copy_hg_strings(struct margo_config *cfg)
{
    if ((cfg->hg.sm_info_string != NULL &&
         (cfg->sm_info_string = strdup(cfg->hg.sm_info_string)) == NULL) ||
        (cfg->hg.na_init_info.ip_subnet != NULL &&
         (cfg->ip_subnet = strdup(cfg->hg.na_init_info.ip_subnet)) == NULL) ||
        (cfg->hg.na_init_info.auth_key != NULL &&
         (cfg->auth_key = strdup(cfg->hg.na_init_info.auth_key)) == NULL))
        return -1;
    cfg->hg.sm_info_string = cfg->sm_info_string;
    cfg->hg.na_init_info.ip_subnet = cfg->ip_subnet;
    cfg->hg.na_init_info.auth_key = cfg->auth_key;
    return 0;
}

/* Margo's defaults, and hg_base (may be NULL) as the "mercury" section;
 * -1 when out of memory (cfg then needs margo_config_free). */
static int
cfg_init(struct margo_config *cfg, const struct hg_init_info *hg_base)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->hg = hg_base ? *hg_base : HG_INIT_INFO_INITIALIZER;
    cfg->given.listening = -1;
    cfg->given.input_eager_size = cfg->given.output_eager_size = -1;
    cfg->abt_thread_stacksize = cfg->abt_mem_max_num_stacks = -1;
    /* Margo's defaults. */
    cfg->progress_timeout_ub_msec = 100;
    cfg->progress_spindown_msec = 10;
    cfg->handle_cache_size = 256;
    cfg->profiling_dir = strdup(".");
    cfg->plumber_bucket_policy = strdup("package");
    cfg->plumber_nic_policy = strdup("roundrobin");
    if (cfg->profiling_dir == NULL || cfg->plumber_bucket_policy == NULL ||
        cfg->plumber_nic_policy == NULL || cfg_copy_hg_strings(cfg))
        return -1;
    return 0;
}

int
margo_config_build(struct margo_config *cfg, const char *json, int pt,
                   int rpc_threads, const struct hg_init_info *hg_base)
{
    json_object *root = NULL, *ppool = NULL, *rpool = NULL;
    bool use_pt = pt != 0;
    /* Argobots already running (the program's ABT_init(), or an earlier
     * instance's): "__primary__" is then the program's. */
    bool abt_up = ABT_initialized() == ABT_SUCCESS;

    if (cfg_init(cfg, hg_base))
        goto error;
    if (json != NULL && json[0] != '\0') {
        if ((root = margo_cfg_parse_text(json, "the configuration")) == NULL)
            goto error;
        if (cfg_parse_root(cfg, root, abt_up, &use_pt, &rpc_threads, &ppool,
                           &rpool))
            goto error;
    }
    margo_cfg_check_abt_env(cfg, abt_up);
    if (margo_cfg_finish_pools(cfg, abt_up, ppool, rpool, use_pt, rpc_threads))
        goto error;
    if (root)
        json_object_put(root);
    return 0;

error:
    if (root)
        json_object_put(root);
    margo_config_free(cfg);
    return -1;
}

int
margo_config_build_child(struct margo_config *cfg, const char *json,
                         const struct margo_config *parent,
                         const struct hg_init_info *hg_base)
{
    static const char *const parents[] = {"argobots", "use_progress_thread",
                                          "rpc_thread_count", NULL};
    json_object *root = NULL, *ppool = NULL, *rpool = NULL;
    bool use_pt = false;
    int rpc_threads = 0;

    if (cfg_init(cfg, hg_base))
        goto error;
    if (json != NULL && json[0] != '\0') {
        if ((root = margo_cfg_parse_text(json, "the configuration")) == NULL)
            goto error;
        for (int i = 0; parents[i]; i++) {
            if (json_object_object_get_ex(root, parents[i], NULL)) {
                CFG_ERR("\"%s\" is not allowed with parent_mid: the "
                        "instance uses its parent's pools and xstreams",
                        parents[i]);
                goto error;
            }
        }
        if (cfg_parse_root(cfg, root, true, &use_pt, &rpc_threads, &ppool,
                           &rpool))
            goto error;
    }
    free(cfg->profiling_dir);
    if ((cfg->profiling_dir = strdup(parent->profiling_dir)) == NULL ||
        margo_cfg_inherit_pools(cfg, parent, ppool, rpool))
        goto error;
    if (root)
        json_object_put(root);
    return 0;

error:
    if (root)
        json_object_put(root);
    margo_config_free(cfg);
    return -1;
}

void
margo_config_free(struct margo_config *cfg)
{
    for (size_t i = 0; i < cfg->npools; i++)
        free(cfg->pools[i].name);
    for (size_t i = 0; i < cfg->nxstreams; i++) {
        free(cfg->xstreams[i].name);
        free(cfg->xstreams[i].affinity);
    }
    free(cfg->pools);
    free(cfg->xstreams);
    free(cfg->sm_info_string);
    free(cfg->ip_subnet);
    free(cfg->auth_key);
    free(cfg->log_level);
    free(cfg->log_subsys);
    free(cfg->given.address);
    free(cfg->given.version);
    free(cfg->profiling_dir);
    free(cfg->plumber_bucket_policy);
    free(cfg->plumber_nic_policy);
    memset(cfg, 0, sizeof(*cfg));
}

/* ---- What the instance does not honour -------------------------------- */

void
margo_config_report(const struct margo_config *cfg, hg_class_t *hg_class,
                    const char *addr_arg, bool external_hg)
{
    const struct na_init_info *na = &cfg->hg.na_init_info;
    char self[256] = "";
    hg_size_t size = sizeof(self), eager;
    hg_addr_t addr;

    if (external_hg) {
        /* The first five describe the instance and are checked below;
         * the log settings are HG's, applied whatever the class. */
        for (int i = 5; cfg_hg_keys[i]; i++)
            if (((cfg->hg_given >> i) & 1) &&
                strcmp(cfg_hg_keys[i], "log_level") != 0 &&
                strcmp(cfg_hg_keys[i], "log_subsys") != 0)
                CFG_WARN("\"mercury.%s\" ignored: the instance runs over "
                         "the caller's HG class",
                         cfg_hg_keys[i]);
    } else {
        if (na->ip_subnet != NULL) /* ofi, sm and verbs refuse it */
            CFG_WARN("\"mercury.ip_subnet\" ignored: the %s plugin does not "
                     "choose interfaces by subnet",
                     HG_Class_get_name(hg_class));
        if (na->max_contexts > 1)
            CFG_WARN("\"mercury.max_contexts\" %u has no effect: every "
                     "plugin here serves any number of contexts over one "
                     "endpoint",
                     (unsigned) na->max_contexts);
    }
    if (cfg->given.address != NULL &&
        (addr_arg == NULL || strcmp(cfg->given.address, addr_arg) != 0)) {
        if (HG_Addr_self(hg_class, &addr) == HG_SUCCESS) {
            if (HG_Addr_to_string(hg_class, self, &size, addr) != HG_SUCCESS)
                self[0] = '\0';
            HG_Addr_free(hg_class, addr);
        }
        if (strcmp(cfg->given.address, self) != 0)
            CFG_WARN("\"mercury.address\" \"%s\" ignored: the instance's "
                     "address is \"%s\" (margo_init_ext's argument)",
                     cfg->given.address, self);
    }
    if (cfg->given.listening >= 0 &&
        (cfg->given.listening != 0) != (HG_Class_is_listening(hg_class) != 0))
        CFG_WARN("\"mercury.listening\" ignored: the mode argument decides");
    if (cfg->given.version != NULL && strcmp(cfg->given.version, "2.4.0") != 0)
        CFG_WARN("\"mercury.version\" \"%s\" ignored: this is 2.4.0",
                 cfg->given.version);
    eager = HG_Class_get_input_eager_size(hg_class);
    if (cfg->given.input_eager_size >= 0 &&
        (hg_size_t) cfg->given.input_eager_size != eager)
        CFG_WARN("\"mercury.input_eager_size\" %lld ignored: it follows "
                 "from na_max_unexpected_size (%llu here)",
                 (long long) cfg->given.input_eager_size,
                 (unsigned long long) eager);
    eager = HG_Class_get_output_eager_size(hg_class);
    if (cfg->given.output_eager_size >= 0 &&
        (hg_size_t) cfg->given.output_eager_size != eager)
        CFG_WARN("\"mercury.output_eager_size\" %lld ignored: it follows "
                 "from na_max_expected_size (%llu here)",
                 (long long) cfg->given.output_eager_size,
                 (unsigned long long) eager);
}
