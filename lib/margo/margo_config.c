/*
 * Margo's JSON configuration (margo_config.h), parsed with json-c.
 *
 * Accepted, as Margo documents it: top-level use_progress_thread (bool),
 * rpc_thread_count (int >= -1), progress_timeout_ub_msec,
 * handle_cache_size (unsigned), enable_abt_profiling (bool), progress_pool
 * and rpc_pool (a pool's name or index), "mercury" (every key Margo maps
 * onto hg_init_info, mapped the same way) and "argobots" ("pools": [{name,
 * kind, access}], "xstreams": [{name, cpubind, affinity, scheduler: {type,
 * pools: [name or index]}}], abt_thread_stacksize). A known field of the
 * wrong type or value, a duplicate name or a reference to an unknown pool
 * is an error. Every key without effect here (unknown, Margo's diagnostics
 * and monitoring, Argobots tuning abt.h has no use for, a pool kind or
 * scheduler type that runs as FIFO) is warned by name, one line each; the
 * checks that need the instance are in margo_config_report().
 */
#include "margo_config.h"
#include "margo_internal.h"

#include <json-c/json.h>

#include <sched.h>

#include <stdlib.h>
#include <string.h>

#define CFG_ERR(...)                                                           \
    margo_log(NULL, MARGO_LOG_ERROR, "margo config: " __VA_ARGS__)

static const char *const cfg_top_keys[] = {"use_progress_thread",
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
    "progress_spindown_msec",
    "output_dir",
    "enable_profiling",
    "enable_diagnostics",
    "monitoring",
    "plumber",
    NULL};
static const char *const cfg_abt_keys[] = {"pools",
                                           "xstreams",
                                           "abt_mem_max_num_stacks",
                                           "abt_thread_stacksize",
                                           "version",
                                           "profiling_dir",
                                           "lazy_stack_alloc",
                                           NULL};
static const char *const cfg_kinds[] = {"fifo", "fifo_wait", "prio_wait",
                                        "earliest_first", NULL};
static const char *const cfg_accesses[] = {"private", "spsc", "mpsc",
                                           "spmc",    "mpmc", NULL};
static const char *const cfg_scheds[] = {"default", "basic",      "prio",
                                         "randws",  "basic_wait", NULL};

static bool
cfg_in(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

/* Field `key` of obj with the given type: 1 present, 0 absent, -1 wrong
 * type (logged). */
static int
cfg_get(json_object *obj, const char *ctx, const char *key, json_type type,
        json_object **out)
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

static int
cfg_bool(json_object *obj, const char *ctx, const char *key, bool *dst)
{
    json_object *v;
    int rc = cfg_get(obj, ctx, key, json_type_boolean, &v);

    if (rc > 0)
        *dst = json_object_get_boolean(v);
    return rc < 0 ? -1 : 0;
}

static int
cfg_int(json_object *obj, const char *ctx, const char *key, int64_t min,
        int64_t max, int64_t *dst)
{
    json_object *v;
    int rc = cfg_get(obj, ctx, key, json_type_int, &v);
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
cfg_pool_index(const struct margo_config *cfg, json_object *ref,
               const char *what, unsigned *idx)
{
    if (json_object_is_type(ref, json_type_int)) {
        int64_t i = json_object_get_int64(ref);

        if (i >= 0 && (size_t) i < cfg->npools) {
            *idx = (unsigned) i;
            return 0;
        }
        CFG_ERR("%s: no pool with index %lld", what, (long long) i);
        return -1;
    }
    if (json_object_is_type(ref, json_type_string)) {
        const char *name = json_object_get_string(ref);

        for (size_t i = 0; i < cfg->npools; i++) {
            if (strcmp(cfg->pools[i].name, name) == 0) {
                *idx = (unsigned) i;
                return 0;
            }
        }
        CFG_ERR("%s: no pool named \"%s\"", what, name);
        return -1;
    }
    CFG_ERR("%s must be a pool name or index", what);
    return -1;
}

static int
cfg_add_pool(struct margo_config *cfg, const char *name, const char *kind,
             const char *access)
{
    struct margo_pool_spec *p;

    if (strlen(name) == 0 || strlen(name) >= MARGO_NAME_MAX) {
        CFG_ERR("pool name \"%s\" is empty or too long", name);
        return -1;
    }
    for (size_t i = 0; i < cfg->npools; i++) {
        if (strcmp(cfg->pools[i].name, name) == 0) {
            CFG_ERR("two pools are named \"%s\"", name);
            return -1;
        }
    }
    p = realloc(cfg->pools, (cfg->npools + 1) * sizeof(*p));
    if (p == NULL)
        return -1;
    cfg->pools = p;
    p = &cfg->pools[cfg->npools];
    memset(p, 0, sizeof(*p));
    if ((p->name = strdup(name)) == NULL)
        return -1;
    cfg->npools++;
    snprintf(p->kind, sizeof(p->kind), "%s", kind);
    snprintf(p->access, sizeof(p->access), "%s", access);
    return 0;
}

static int
cfg_add_xstream(struct margo_config *cfg, const char *name, const char *sched,
                int cpubind, const unsigned *pools, size_t npools)
{
    struct margo_xstream_spec *x;

    if (strlen(name) == 0 || strlen(name) >= MARGO_NAME_MAX) {
        CFG_ERR("xstream name \"%s\" is empty or too long", name);
        return -1;
    }
    for (size_t i = 0; i < cfg->nxstreams; i++) {
        if (strcmp(cfg->xstreams[i].name, name) == 0) {
            CFG_ERR("two xstreams are named \"%s\"", name);
            return -1;
        }
    }
    if (npools == 0 || npools > MARGO_XSTREAM_POOLS_MAX) {
        CFG_ERR("xstream \"%s\" needs 1 to %d pools", name,
                MARGO_XSTREAM_POOLS_MAX);
        return -1;
    }
    x = realloc(cfg->xstreams, (cfg->nxstreams + 1) * sizeof(*x));
    if (x == NULL)
        return -1;
    cfg->xstreams = x;
    x = &cfg->xstreams[cfg->nxstreams];
    memset(x, 0, sizeof(*x));
    if ((x->name = strdup(name)) == NULL)
        return -1;
    cfg->nxstreams++;
    snprintf(x->sched, sizeof(x->sched), "%s", sched);
    x->cpubind = cpubind;
    x->npools = npools;
    memcpy(x->pools, pools, npools * sizeof(*pools));
    return 0;
}

/* A string field into an owned copy (*dst replaced). */
static int
cfg_string(json_object *obj, const char *ctx, const char *key, char **dst)
{
    json_object *v;
    int rc = cfg_get(obj, ctx, key, json_type_string, &v);
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
    int rc = cfg_get(obj, "mercury.", key, json_type_string, &v);

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
    if ((rc = cfg_bool(hg, "mercury.", "listening", &b)) < 0)
        return -1;
    if (json_object_object_get_ex(hg, "listening", NULL))
        cfg->given.listening = b;
    v = -1;
    if (cfg_int(hg, "mercury.", "input_eager_size", 0, INT64_MAX, &v) < 0)
        return -1;
    cfg->given.input_eager_size = v;
    v = -1;
    if (cfg_int(hg, "mercury.", "output_eager_size", 0, INT64_MAX, &v) < 0)
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
        if (!cfg_in(key, cfg_hg_keys))
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
    rc |= cfg_bool(hg, "mercury.", #name, &b);                                 \
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
    rc |= cfg_bool(hg, "mercury.", key, &b);                                   \
    na->progress_mode = b ? (na->progress_mode | (flag))                       \
                          : (na->progress_mode & ~(uint32_t) (flag));
    CFG_NA_FLAG("na_no_block", NA_NO_BLOCK)
    CFG_NA_FLAG("na_no_retry", NA_NO_RETRY)
#undef CFG_NA_FLAG
    b = na->request_mem_device;
    rc |= cfg_bool(hg, "mercury.", "na_request_mem_device", &b);
    na->request_mem_device = b;
#define CFG_HG_INT(field, key, max)                                            \
    v = (int64_t) (field);                                                     \
    if (cfg_int(hg, "mercury.", key, 0, max, &v) < 0)                          \
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

/* Pools and xstreams of the "argobots" section (npools/nxstreams already
 * hold "__primary__"). */
/* One "argobots.pools[]" object. The name may be left out only when
 * gen_name is given (a pool added at run time). */
static int
cfg_parse_pool(struct margo_config *cfg, json_object *p, size_t i,
               const char *gen_name)
{
    const char *name = gen_name, *kind = "fifo_wait", *access = "mpmc";
    json_object *v;
    int rc;

    if (!json_object_is_type(p, json_type_object) ||
        (rc = cfg_get(p, "pool.", "name", json_type_string, &v)) < 0 ||
        (rc == 0 && gen_name == NULL)) {
        CFG_ERR("argobots.pools[%zu] must be an object with a \"name\"", i);
        return -1;
    }
    if (rc > 0)
        name = json_object_get_string(v);
    if ((rc = cfg_get(p, "pool.", "kind", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0)
        kind = json_object_get_string(v);
    if ((rc = cfg_get(p, "pool.", "access", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0)
        access = json_object_get_string(v);
    if (!cfg_in(kind, cfg_kinds) || !cfg_in(access, cfg_accesses)) {
        CFG_ERR("pool \"%s\": unknown kind \"%s\" or access \"%s\"", name, kind,
                access);
        return -1;
    }
    if (strcmp(name, "__primary__") == 0 && gen_name == NULL)
        return 0; /* always there */
    if (strcmp(kind, "prio_wait") == 0 || strcmp(kind, "earliest_first") == 0)
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: pool \"%s\": kind \"%s\" runs as "
                  "fifo_wait here",
                  name, kind);
    return cfg_add_pool(cfg, name, kind, access);
}

/* Whether an "affinity" list names every CPU the process started with
 * (what margo_get_config() writes for an unbound stream), so that binding
 * to it is no binding at all. */
static bool
cfg_affinity_is_all(json_object *aff)
{
    cpu_set_t set;
    size_t n = json_object_array_length(aff);
    bool seen[CPU_SETSIZE] = {false};

    if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
        n != (size_t) CPU_COUNT(&set))
        return false;
    for (size_t k = 0; k < n; k++) {
        int64_t c = json_object_get_int64(json_object_array_get_idx(aff, k));

        if (c < 0 || c >= (int64_t) n || seen[c])
            return false;
        seen[c] = true;
    }
    return true;
}

/* One "argobots.xstreams[]" object; gen_name as for cfg_parse_pool. */
static int
cfg_parse_xstream(struct margo_config *cfg, json_object *x, size_t i,
                  const char *gen_name)
{
    json_object *sched = NULL, *plist = NULL, *aff = NULL, *v;
    const char *name = gen_name, *type = "basic_wait";
    size_t naff;
    unsigned idx[MARGO_XSTREAM_POOLS_MAX];
    size_t n = 0;
    int64_t cpubind = -1;
    int rc;

    if (!json_object_is_type(x, json_type_object) ||
        (rc = cfg_get(x, "xstream.", "name", json_type_string, &v)) < 0 ||
        (rc == 0 && gen_name == NULL)) {
        CFG_ERR("argobots.xstreams[%zu] must be an object with a \"name\"", i);
        return -1;
    }
    if (rc > 0)
        name = json_object_get_string(v);
    if (cfg_int(x, "xstream.", "cpubind", -1, 1 << 20, &cpubind) < 0 ||
        cfg_get(x, "xstream.", "affinity", json_type_array, &aff) < 0 ||
        cfg_get(x, "xstream.", "scheduler", json_type_object, &sched) < 0)
        return -1;
    for (size_t k = 0; aff && k < json_object_array_length(aff); k++) {
        json_object *c = json_object_array_get_idx(aff, k);

        if (!json_object_is_type(c, json_type_int) ||
            json_object_get_int64(c) < 0 ||
            json_object_get_int64(c) > (1 << 20)) {
            CFG_ERR("xstream \"%s\": \"affinity\" must list CPU ids", name);
            return -1;
        }
    }
    if (sched) {
        if ((rc = cfg_get(sched, "scheduler.", "type", json_type_string, &v)) <
            0)
            return -1;
        if (rc > 0)
            type = json_object_get_string(v);
        if (cfg_get(sched, "scheduler.", "pools", json_type_array, &plist) < 0)
            return -1;
    }
    if (!cfg_in(type, cfg_scheds)) {
        CFG_ERR("xstream \"%s\": unknown scheduler type \"%s\"", name, type);
        return -1;
    }
    if (plist == NULL || json_object_array_length(plist) == 0 ||
        json_object_array_length(plist) > MARGO_XSTREAM_POOLS_MAX) {
        CFG_ERR("xstream \"%s\": \"scheduler.pools\" must list 1 to %d "
                "pools",
                name, MARGO_XSTREAM_POOLS_MAX);
        return -1;
    }
    for (n = 0; n < json_object_array_length(plist); n++)
        if (cfg_pool_index(cfg, json_object_array_get_idx(plist, n),
                           "xstream scheduler pool", &idx[n]))
            return -1;
    if (strcmp(name, "__primary__") == 0 && gen_name == NULL) {
        /* The calling thread; it serves the primary pool. Margo would bind
         * it; here the program's own thread is left where it is. */
        if (cpubind >= 0 || (aff != NULL && !cfg_affinity_is_all(aff)))
            margo_log(NULL, MARGO_LOG_WARNING,
                      "margo config: \"%s\" of xstream \"__primary__\" "
                      "ignored: the calling thread is not bound",
                      cpubind >= 0 ? "cpubind" : "affinity");
        return 0;
    }
    if (strcmp(type, "prio") == 0 || strcmp(type, "randws") == 0)
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: xstream \"%s\": scheduler type \"%s\" "
                  "runs as basic_wait here (pools in order, FIFO)",
                  name, type);
    if (cfg_add_xstream(cfg, name, type, (int) cpubind, idx, n))
        return -1;
    naff = aff ? json_object_array_length(aff) : 0;
    if (naff > 0) {
        struct margo_xstream_spec *xs = &cfg->xstreams[cfg->nxstreams - 1];

        if ((xs->affinity = malloc(naff * sizeof(int))) == NULL) {
            margo_config_remove_xstream(cfg, cfg->nxstreams - 1);
            return -1;
        }
        for (size_t k = 0; k < naff; k++)
            xs->affinity[k] =
                (int) json_object_get_int64(json_object_array_get_idx(aff, k));
        xs->naffinity = (int) naff;
    }
    return 0;
}

static int
cfg_parse_argobots(struct margo_config *cfg, json_object *abt)
{
    json_object *pools = NULL, *xstreams = NULL;

    int64_t v = 0;
    bool lazy = false;

    json_object_object_foreach(abt, key, val)
    {
        (void) val;
        if (!cfg_in(key, cfg_abt_keys))
            margo_log(NULL, MARGO_LOG_WARNING,
                      "margo config: unknown key \"argobots.%s\" ignored", key);
    }
    if (cfg_int(abt, "argobots.", "abt_thread_stacksize", 1, UINT32_MAX, &v) <
        0)
        return -1;
    cfg->abt_thread_stacksize = (unsigned) v;
    if (cfg_bool(abt, "argobots.", "lazy_stack_alloc", &lazy) < 0)
        return -1;
    /* abt.h keeps no cache of stacks, always allocates them when a ULT
     * is created, and has no profiler to write files. */
    if (json_object_object_get_ex(abt, "abt_mem_max_num_stacks", NULL))
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: \"argobots.abt_mem_max_num_stacks\" "
                  "ignored: abt.h keeps no stack cache");
    if (lazy)
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: \"argobots.lazy_stack_alloc\" ignored: "
                  "stacks are allocated when a ULT is created");
    if (json_object_object_get_ex(abt, "profiling_dir", NULL))
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: \"argobots.profiling_dir\" ignored: "
                  "Argobots profiling is not supported");
    if (json_object_object_get_ex(abt, "version", NULL))
        margo_log(NULL, MARGO_LOG_WARNING,
                  "margo config: \"argobots.version\" ignored: it "
                  "describes a library, it does not configure one");
    if (cfg_get(abt, "argobots.", "pools", json_type_array, &pools) < 0 ||
        cfg_get(abt, "argobots.", "xstreams", json_type_array, &xstreams) < 0)
        return -1;
    for (size_t i = 0; pools && i < json_object_array_length(pools); i++)
        if (cfg_parse_pool(cfg, json_object_array_get_idx(pools, i), i, NULL))
            return -1;
    for (size_t i = 0; xstreams && i < json_object_array_length(xstreams); i++)
        if (cfg_parse_xstream(cfg, json_object_array_get_idx(xstreams, i), i,
                              NULL))
            return -1;
    return 0;
}

/* Pools and xstreams implied by the legacy arguments. */
static int
cfg_legacy_pools(struct margo_config *cfg, bool pt, int rpc_threads)
{
    char name[MARGO_NAME_MAX];
    unsigned idx;

    if (pt) {
        idx = (unsigned) cfg->npools;
        if (cfg_add_pool(cfg, "__progress__", "fifo_wait", "mpmc") ||
            cfg_add_xstream(cfg, "__progress__", "basic_wait", -1, &idx, 1))
            return -1;
    }
    if (rpc_threads > 0) {
        idx = (unsigned) cfg->npools;
        if (cfg_add_pool(cfg, "__rpc__", "fifo_wait", "mpmc"))
            return -1;
        for (int i = 0; i < rpc_threads; i++) {
            snprintf(name, sizeof(name), "__rpc_%d__", i);
            if (cfg_add_xstream(cfg, name, "basic_wait", -1, &idx, 1))
                return -1;
        }
    }
    return 0;
}

static int
cfg_find_pool(const struct margo_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->npools; i++)
        if (strcmp(cfg->pools[i].name, name) == 0)
            return (int) i;
    return -1;
}

/* The JSON object in text (the whole text), or NULL after logging why. */
static json_object *
cfg_parse_text(const char *json, const char *what)
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

int
margo_config_build(struct margo_config *cfg, const char *json, int pt,
                   int rpc_threads, const struct hg_init_info *hg_base)
{
    json_object *root = NULL, *v = NULL, *ppool = NULL, *rpool = NULL;
    bool use_pt = pt != 0, profiling = false;
    int64_t x;
    unsigned primary = 0;
    unsigned idx;

    memset(cfg, 0, sizeof(*cfg));
    cfg->hg = hg_base ? *hg_base : HG_INIT_INFO_INITIALIZER;
    cfg->given.listening = -1;
    cfg->given.input_eager_size = cfg->given.output_eager_size = -1;
    /* The caller's strings: keep copies for the instance's lifetime. */
    if ((cfg->hg.sm_info_string != NULL &&
         (cfg->sm_info_string = strdup(cfg->hg.sm_info_string)) == NULL) ||
        (cfg->hg.na_init_info.ip_subnet != NULL &&
         (cfg->ip_subnet = strdup(cfg->hg.na_init_info.ip_subnet)) == NULL) ||
        (cfg->hg.na_init_info.auth_key != NULL &&
         (cfg->auth_key = strdup(cfg->hg.na_init_info.auth_key)) == NULL))
        goto error;
    cfg->hg.sm_info_string = cfg->sm_info_string;
    cfg->hg.na_init_info.ip_subnet = cfg->ip_subnet;
    cfg->hg.na_init_info.auth_key = cfg->auth_key;
    cfg->progress_timeout_ub_msec = 100;
    cfg->handle_cache_size = 32;
    if (cfg_add_pool(cfg, "__primary__", "fifo_wait", "mpmc") ||
        cfg_add_xstream(cfg, "__primary__", "basic_wait", -1, &primary, 1))
        goto error;

    if (json != NULL && json[0] != '\0') {
        if ((root = cfg_parse_text(json, "the configuration")) == NULL)
            goto error;
        json_object_object_foreach(root, key, val)
        {
            if (!cfg_in(key, cfg_top_keys))
                margo_log(NULL, MARGO_LOG_WARNING,
                          "margo config: unknown key \"%s\" ignored", key);
            else if (cfg_in(key, cfg_top_unsupported) &&
                     !(json_object_is_type(val, json_type_boolean) &&
                       !json_object_get_boolean(val)))
                margo_log(NULL, MARGO_LOG_WARNING,
                          "margo config: \"%s\" ignored: Margo's "
                          "diagnostics, monitoring and spin-down are not "
                          "provided",
                          key);
        }
        if (cfg_bool(root, "", "use_progress_thread", &use_pt) ||
            cfg_bool(root, "", "enable_abt_profiling", &profiling))
            goto error;
        if ((x = rpc_threads,
             cfg_int(root, "", "rpc_thread_count", -1, 4096, &x)) < 0)
            goto error;
        rpc_threads = (int) x;
        x = cfg->progress_timeout_ub_msec;
        if (cfg_int(root, "", "progress_timeout_ub_msec", 0, 1000000, &x) < 0)
            goto error;
        cfg->progress_timeout_ub_msec = (unsigned) x;
        x = cfg->handle_cache_size;
        if (cfg_int(root, "", "handle_cache_size", 0, 1 << 20, &x) < 0)
            goto error;
        if ((unsigned) x != cfg->handle_cache_size)
            margo_log(NULL, MARGO_LOG_WARNING,
                      "margo config: \"handle_cache_size\" %lld recorded "
                      "only: there is no handle cache to size (HG reuses "
                      "its handles itself)",
                      (long long) x);
        cfg->handle_cache_size = (unsigned) x;
        if (cfg_get(root, "", "mercury", json_type_object, &v) < 0)
            goto error;
        if (v != NULL && json_object_object_get_ex(root, "mercury", NULL) &&
            cfg_parse_mercury(cfg, v))
            goto error;
        v = NULL;
        if (cfg_get(root, "", "argobots", json_type_object, &v) < 0)
            goto error;
        if (v && cfg_parse_argobots(cfg, v))
            goto error;
        json_object_object_get_ex(root, "progress_pool", &ppool);
        json_object_object_get_ex(root, "rpc_pool", &rpool);
    }
    cfg->enable_abt_profiling = profiling;
    cfg->rpc_thread_count = rpc_threads;
    /* The legacy fields imply the pools they need, unless the JSON names
     * the progress or RPC pool itself or defines one of that name. */
    if (cfg_legacy_pools(
            cfg,
            use_pt && ppool == NULL && cfg_find_pool(cfg, "__progress__") < 0,
            rpool == NULL && cfg_find_pool(cfg, "__rpc__") < 0 ? rpc_threads
                                                               : 0))
        goto error;
    if (ppool) {
        if (cfg_pool_index(cfg, ppool, "progress_pool", &idx))
            goto error;
        cfg->progress_pool = idx;
    } else {
        int i = use_pt ? cfg_find_pool(cfg, "__progress__") : 0;
        cfg->progress_pool = i < 0 ? 0 : (unsigned) i;
    }
    if (rpool) {
        if (cfg_pool_index(cfg, rpool, "rpc_pool", &idx))
            goto error;
        cfg->rpc_pool = idx;
    } else if (rpc_threads > 0 && cfg_find_pool(cfg, "__rpc__") >= 0) {
        cfg->rpc_pool = (unsigned) cfg_find_pool(cfg, "__rpc__");
    } else if (rpc_threads < 0) {
        cfg->rpc_pool = cfg->progress_pool;
    } else {
        cfg->rpc_pool = 0;
    }
    cfg->use_progress_thread = cfg->progress_pool != 0;
    /* Handlers on a pool nobody runs would never run. */
    if (cfg->rpc_pool != 0 && cfg->rpc_pool != cfg->progress_pool) {
        bool served = false;

        for (size_t i = 0; i < cfg->nxstreams && !served; i++)
            for (size_t j = 0; j < cfg->xstreams[i].npools; j++)
                served = served || cfg->xstreams[i].pools[j] == cfg->rpc_pool;
        if (!served) {
            CFG_ERR("rpc_pool \"%s\" is not in any xstream's scheduler",
                    cfg->pools[cfg->rpc_pool].name);
            goto error;
        }
    }
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
    cfg->sm_info_string = cfg->ip_subnet = cfg->auth_key = NULL;
    cfg->log_level = cfg->log_subsys = NULL;
    cfg->given.address = cfg->given.version = NULL;
    cfg->pools = NULL;
    cfg->xstreams = NULL;
    cfg->npools = cfg->nxstreams = 0;
}

/* ---- Changes at run time (margo_elastic.c) ---------------------------- */

/* A name "<prefix><n>__" that no entry has, n from count up. */
static void
cfg_gen_name(char *buf, size_t size, const char *prefix, size_t n,
             bool (*taken)(const struct margo_config *, const char *),
             const struct margo_config *cfg)
{
    do
        snprintf(buf, size, "%s%zu__", prefix, n++);
    while (taken(cfg, buf));
}

static bool
cfg_pool_taken(const struct margo_config *cfg, const char *name)
{
    return cfg_find_pool(cfg, name) >= 0;
}

static bool
cfg_xstream_taken(const struct margo_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nxstreams; i++)
        if (strcmp(cfg->xstreams[i].name, name) == 0)
            return true;
    return false;
}

int
margo_config_add_pool_json(struct margo_config *cfg, const char *json)
{
    char gen[MARGO_NAME_MAX];
    json_object *root;
    int rc;

    cfg_gen_name(gen, sizeof(gen), "__pool_", cfg->npools, cfg_pool_taken, cfg);
    root = cfg_parse_text(json && json[0] ? json : "{}", "a pool");
    if (root == NULL)
        return -1;
    rc = cfg_parse_pool(cfg, root, 0, gen);
    json_object_put(root);
    return rc;
}

int
margo_config_add_xstream_json(struct margo_config *cfg, const char *json)
{
    char gen[MARGO_NAME_MAX];
    json_object *root;
    int rc;

    cfg_gen_name(gen, sizeof(gen), "__xstream_", cfg->nxstreams,
                 cfg_xstream_taken, cfg);
    root = cfg_parse_text(json && json[0] ? json : "{}", "an xstream");
    if (root == NULL)
        return -1;
    rc = cfg_parse_xstream(cfg, root, 0, gen);
    json_object_put(root);
    return rc;
}

int
margo_config_add_external_pool(struct margo_config *cfg, const char *name)
{
    char gen[MARGO_NAME_MAX];

    if (name == NULL) {
        cfg_gen_name(gen, sizeof(gen), "__pool_", cfg->npools, cfg_pool_taken,
                     cfg);
        name = gen;
    }
    return cfg_add_pool(cfg, name, "external", "mpmc");
}

int
margo_config_add_external_xstream(struct margo_config *cfg, const char *name,
                                  const unsigned *pools, size_t npools)
{
    char gen[MARGO_NAME_MAX];

    if (name == NULL) {
        cfg_gen_name(gen, sizeof(gen), "__xstream_", cfg->nxstreams,
                     cfg_xstream_taken, cfg);
        name = gen;
    }
    return cfg_add_xstream(cfg, name, "external", -1, pools, npools);
}

void
margo_config_remove_pool(struct margo_config *cfg, size_t i)
{
    unsigned last = (unsigned) cfg->npools - 1;

    free(cfg->pools[i].name);
    cfg->pools[i] = cfg->pools[last];
    cfg->npools--;
    /* Whatever referred to the last pool now refers to slot i. */
    for (size_t x = 0; x < cfg->nxstreams; x++)
        for (size_t j = 0; j < cfg->xstreams[x].npools; j++)
            if (cfg->xstreams[x].pools[j] == last)
                cfg->xstreams[x].pools[j] = (unsigned) i;
    if (cfg->progress_pool == last)
        cfg->progress_pool = (unsigned) i;
    if (cfg->rpc_pool == last)
        cfg->rpc_pool = (unsigned) i;
}

void
margo_config_remove_xstream(struct margo_config *cfg, size_t i)
{
    free(cfg->xstreams[i].name);
    free(cfg->xstreams[i].affinity);
    cfg->xstreams[i] = cfg->xstreams[cfg->nxstreams - 1];
    cfg->nxstreams--;
}

/* ---- What the instance does not honour -------------------------------- */

#define CFG_WARN(...)                                                          \
    margo_log(NULL, MARGO_LOG_WARNING, "margo config: " __VA_ARGS__)

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
