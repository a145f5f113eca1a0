/*
 * The "argobots" section of Margo's configuration (margo_config.h): the
 * pools and execution streams the JSON lists, "__primary__", those that
 * use_progress_thread and rpc_thread_count imply, the progress and RPC
 * pools, the warnings about questionable layouts, and the changes made at
 * run time (margo_elastic.c).
 *
 * Every rule here is Margo's, so that a configuration means the same
 * thing (and margo_get_config() lists the same entries under the same
 * indices) whichever library runs it: the JSON's pools and xstreams keep
 * their order, "__primary__" follows unless the JSON defines it, and the
 * pools and xstreams Margo makes up are named "__pool_<n>__" and
 * "__xstream_<n>__", n being the number of entries at the time (or the
 * next number not taken).
 */
#include "margo_config.h"
#include "margo_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CFG_ERR(...)                                                           \
    margo_log(NULL, MARGO_LOG_ERROR, "margo config: " __VA_ARGS__)
#define CFG_WARN(...)                                                          \
    margo_log(NULL, MARGO_LOG_WARNING, "margo config: " __VA_ARGS__)

static const char *const cfg_kinds[] = {"fifo", "fifo_wait", "prio_wait",
                                        "earliest_first", NULL};
static const char *const cfg_accesses[] = {"private", "spsc", "mpsc",
                                           "spmc",    "mpmc", NULL};
static const char *const cfg_scheds[] = {"default", "basic",      "prio",
                                         "randws",  "basic_wait", NULL};
static const char *const cfg_abt_keys[] = {"pools",
                                           "xstreams",
                                           "abt_mem_max_num_stacks",
                                           "abt_thread_stacksize",
                                           "version",
                                           "profiling_dir",
                                           "lazy_stack_alloc",
                                           NULL};

/* Margo's rule for the names a configuration gives: not empty, a letter
 * or '_' first, then letters, digits and '_'. */
static bool
cfg_name_valid(const char *what, const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n >= MARGO_NAME_MAX) {
        CFG_ERR("%s name \"%s\" is empty or too long", what, name);
        return false;
    }
    if (isdigit((unsigned char) name[0])) {
        CFG_ERR("%s name \"%s\" starts with a digit", what, name);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char) name[i]) && name[i] != '_') {
            CFG_ERR("%s name \"%s\" has a character other than a letter, "
                    "a digit or '_'",
                    what, name);
            return false;
        }
    }
    return true;
}

int
margo_cfg_find_pool(const struct margo_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->npools; i++)
        if (strcmp(cfg->pools[i].name, name) == 0)
            return (int) i;
    return -1;
}

static int
cfg_find_xstream(const struct margo_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nxstreams; i++)
        if (strcmp(cfg->xstreams[i].name, name) == 0)
            return (int) i;
    return -1;
}

/* "<prefix><n>__" for the first n from `from` up that no entry has. */
static void
cfg_gen_name(char *buf, size_t size, const char *prefix, size_t from,
             const struct margo_config *cfg, bool pool)
{
    size_t n = from;

    do
        snprintf(buf, size, "%s%zu__", prefix, n++);
    while (pool ? margo_cfg_find_pool(cfg, buf) >= 0
                : cfg_find_xstream(cfg, buf) >= 0);
}

/* Append a pool; name NULL: made up. */
static int
cfg_add_pool(struct margo_config *cfg, const char *name, const char *kind,
             const char *access)
{
    char gen[MARGO_NAME_MAX];
    struct margo_pool_spec *p;

    if (name == NULL) {
        cfg_gen_name(gen, sizeof(gen), "__pool_", cfg->npools, cfg, true);
        name = gen;
    }
    if (strlen(name) == 0 || strlen(name) >= MARGO_NAME_MAX) {
        CFG_ERR("pool name \"%s\" is empty or too long", name);
        return -1;
    }
    if (margo_cfg_find_pool(cfg, name) >= 0) {
        CFG_ERR("two pools are named \"%s\"", name);
        return -1;
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

/* Append an xstream over pools[]; name NULL: made up. */
static int
cfg_add_xstream(struct margo_config *cfg, const char *name, const char *sched,
                int cpubind, const unsigned *pools, size_t npools)
{
    char gen[MARGO_NAME_MAX];
    struct margo_xstream_spec *x;

    if (name == NULL) {
        cfg_gen_name(gen, sizeof(gen), "__xstream_", cfg->nxstreams, cfg,
                     false);
        name = gen;
    }
    if (strlen(name) == 0 || strlen(name) >= MARGO_NAME_MAX) {
        CFG_ERR("xstream name \"%s\" is empty or too long", name);
        return -1;
    }
    if (cfg_find_xstream(cfg, name) >= 0) {
        CFG_ERR("two xstreams are named \"%s\"", name);
        return -1;
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

/* A reference to a pool by index or name among the first n pools. */
static int
cfg_pool_ref(const struct margo_config *cfg, json_object *ref, size_t n,
             const char *what, unsigned *idx)
{
    if (json_object_is_type(ref, json_type_int)) {
        int64_t i = json_object_get_int64(ref);

        if (i >= 0 && (size_t) i < n) {
            *idx = (unsigned) i;
            return 0;
        }
        CFG_ERR("%s: no pool with index %lld", what, (long long) i);
        return -1;
    }
    if (json_object_is_type(ref, json_type_string)) {
        int i = margo_cfg_find_pool(cfg, json_object_get_string(ref));

        if (i >= 0 && (size_t) i < n) {
            *idx = (unsigned) i;
            return 0;
        }
        CFG_ERR("%s: no pool named \"%s\"", what, json_object_get_string(ref));
        return -1;
    }
    CFG_ERR("%s must be a pool name or index", what);
    return -1;
}

/* One "argobots.pools[]" object, as margo_add_pool_from_json() takes it
 * too. abt_up: Argobots already runs, so "__primary__" is taken. */
static int
cfg_parse_pool(struct margo_config *cfg, json_object *p, bool abt_up)
{
    const char *name = NULL, *kind = "fifo_wait", *access = "mpmc";
    json_object *v;
    int rc;

    if (!json_object_is_type(p, json_type_object)) {
        CFG_ERR("a pool must be a JSON object");
        return -1;
    }
    if ((rc = margo_cfg_get(p, "pool.", "kind", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0)
        kind = json_object_get_string(v);
    if ((rc = margo_cfg_get(p, "pool.", "access", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0)
        access = json_object_get_string(v);
    if (!margo_cfg_in(kind, cfg_kinds) || !margo_cfg_in(access, cfg_accesses)) {
        /* "external" included: such a pool is the program's to create. */
        CFG_ERR("pool: kind \"%s\" or access \"%s\" is not one a "
                "configuration may ask for",
                kind, access);
        return -1;
    }
    if ((rc = margo_cfg_get(p, "pool.", "name", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0) {
        name = json_object_get_string(v);
        if (!cfg_name_valid("pool", name))
            return -1;
        if (abt_up && strcmp(name, "__primary__") == 0) {
            CFG_ERR("pool \"__primary__\" cannot be defined once Argobots "
                    "is initialized: it is the running program's");
            return -1;
        }
    }
    if (strcmp(kind, "prio_wait") == 0 || strcmp(kind, "earliest_first") == 0)
        CFG_WARN("pool \"%s\": kind \"%s\" runs as fifo_wait here",
                 name ? name : "(unnamed)", kind);
    return cfg_add_pool(cfg, name, kind, access);
}

/* An xstream's "cpubind" and "affinity" (a list of CPU ids), checked. */
static int
cfg_parse_binding(json_object *x, int64_t *cpubind, json_object **aff)
{
    *cpubind = -1;
    *aff = NULL;
    if (margo_cfg_int(x, "xstream.", "cpubind", INT32_MIN, INT32_MAX, cpubind) <
            0 ||
        margo_cfg_get(x, "xstream.", "affinity", json_type_array, aff) < 0)
        return -1;
    for (size_t k = 0; *aff && k < json_object_array_length(*aff); k++) {
        json_object *c = json_object_array_get_idx(*aff, k);

        if (!json_object_is_type(c, json_type_int) ||
            json_object_get_int64(c) < 0 ||
            json_object_get_int64(c) > INT32_MAX) {
            CFG_ERR("xstream: \"affinity\" must list CPU ids");
            return -1;
        }
    }
    return 0;
}

static int
cfg_set_affinity(struct margo_xstream_spec *xs, json_object *aff)
{
    size_t naff = aff ? json_object_array_length(aff) : 0;

    if (naff == 0)
        return 0;
    if ((xs->affinity = malloc(naff * sizeof(int))) == NULL)
        return -1;
    for (size_t k = 0; k < naff; k++)
        xs->affinity[k] =
            (int) json_object_get_int64(json_object_array_get_idx(aff, k));
    xs->naffinity = (int) naff;
    return 0;
}

/* One "argobots.xstreams[]" object, as margo_add_xstream_from_json()
 * takes it too; its scheduler's pools are named or indexed among the
 * pools defined so far. */
static int
cfg_parse_xstream(struct margo_config *cfg, json_object *x, bool abt_up)
{
    json_object *sched = NULL, *plist = NULL, *aff = NULL, *v;
    const char *name = NULL, *type = "basic_wait";
    unsigned idx[MARGO_XSTREAM_POOLS_MAX];
    int64_t cpubind;
    size_t n;
    int rc;

    if (!json_object_is_type(x, json_type_object)) {
        CFG_ERR("an xstream must be a JSON object");
        return -1;
    }
    if ((rc = margo_cfg_get(x, "xstream.", "name", json_type_string, &v)) < 0)
        return -1;
    if (rc > 0) {
        name = json_object_get_string(v);
        if (!cfg_name_valid("xstream", name))
            return -1;
        if (abt_up && strcmp(name, "__primary__") == 0) {
            CFG_ERR("xstream \"__primary__\" cannot be defined once "
                    "Argobots is initialized: it is the running program's");
            return -1;
        }
    }
    if (cfg_parse_binding(x, &cpubind, &aff) < 0 ||
        margo_cfg_get(x, "xstream.", "scheduler", json_type_object, &sched) < 0)
        return -1;
    if (sched) {
        if ((rc = margo_cfg_get(sched, "scheduler.", "type", json_type_string,
                                &v)) < 0)
            return -1;
        if (rc > 0)
            type = json_object_get_string(v);
        if (margo_cfg_get(sched, "scheduler.", "pools", json_type_array,
                          &plist) < 0)
            return -1;
    }
    if (!margo_cfg_in(type, cfg_scheds)) {
        CFG_ERR("xstream: unknown scheduler type \"%s\"", type);
        return -1;
    }
    /* Argobots 1.x needs a pool in every scheduler; so does abt.h. */
    if (plist == NULL || json_object_array_length(plist) == 0 ||
        json_object_array_length(plist) > MARGO_XSTREAM_POOLS_MAX) {
        CFG_ERR("xstream \"%s\": \"scheduler.pools\" must list 1 to %d "
                "pools",
                name ? name : "(unnamed)", MARGO_XSTREAM_POOLS_MAX);
        return -1;
    }
    for (n = 0; n < json_object_array_length(plist); n++)
        if (cfg_pool_ref(cfg, json_object_array_get_idx(plist, n), cfg->npools,
                         "xstream scheduler pool", &idx[n]))
            return -1;
    if (name && strcmp(name, "__primary__") == 0) {
        /* The thread that creates the instance; it is left where it is. */
        if (cpubind >= 0 || aff != NULL)
            CFG_WARN("\"cpubind\" and \"affinity\" of xstream "
                     "\"__primary__\" ignored: the calling thread is not "
                     "bound");
        cpubind = -1;
        aff = NULL;
    }
    if (strcmp(type, "prio") == 0 || strcmp(type, "randws") == 0)
        CFG_WARN("xstream \"%s\": scheduler type \"%s\" runs as basic_wait "
                 "here (pools in order, FIFO)",
                 name ? name : "(unnamed)", type);
    if (cfg_add_xstream(cfg, name, type, cpubind < 0 ? -1 : (int) cpubind, idx,
                        n))
        return -1;
    if (cfg_set_affinity(&cfg->xstreams[cfg->nxstreams - 1], aff)) {
        margo_config_remove_xstream(cfg, cfg->nxstreams - 1);
        return -1;
    }
    return 0;
}

int
margo_cfg_parse_argobots(struct margo_config *cfg, json_object *abt,
                         bool abt_up)
{
    json_object *pools = NULL, *xstreams = NULL, *v = NULL;
    int64_t x;
    bool lazy = false;

    json_object_object_foreach(abt, key, val)
    {
        (void) val;
        if (!margo_cfg_in(key, cfg_abt_keys))
            CFG_WARN("unknown key \"argobots.%s\" ignored", key);
    }
    x = -1;
    if (margo_cfg_int(abt, "argobots.", "abt_thread_stacksize", 0, UINT32_MAX,
                      &x) < 0)
        return -1;
    cfg->abt_thread_stacksize = x;
    x = -1;
    if (margo_cfg_int(abt, "argobots.", "abt_mem_max_num_stacks", 0, UINT32_MAX,
                      &x) < 0)
        return -1;
    cfg->abt_mem_max_num_stacks = x;
    if (margo_cfg_get(abt, "argobots.", "profiling_dir", json_type_string, &v) <
            0 ||
        margo_cfg_bool(abt, "argobots.", "lazy_stack_alloc", &lazy) < 0)
        return -1;
    if (v != NULL) {
        free(cfg->profiling_dir);
        if ((cfg->profiling_dir = strdup(json_object_get_string(v))) == NULL)
            return -1;
    }
    if (lazy)
        CFG_WARN("\"argobots.lazy_stack_alloc\" ignored: stacks are "
                 "allocated when a ULT is created");
    if (json_object_object_get_ex(abt, "version", NULL))
        CFG_WARN("\"argobots.version\" ignored: it describes a library, it "
                 "does not configure one");
    if (margo_cfg_get(abt, "argobots.", "pools", json_type_array, &pools) < 0 ||
        margo_cfg_get(abt, "argobots.", "xstreams", json_type_array,
                      &xstreams) < 0)
        return -1;
    for (size_t i = 0; pools && i < json_object_array_length(pools); i++)
        if (cfg_parse_pool(cfg, json_object_array_get_idx(pools, i), abt_up))
            return -1;
    for (size_t i = 0; xstreams && i < json_object_array_length(xstreams); i++)
        if (cfg_parse_xstream(cfg, json_object_array_get_idx(xstreams, i),
                              abt_up))
            return -1;
    return 0;
}

/* The ULT stack size (and stack cache) Margo asks Argobots for reach it
 * through ABT_THREAD_STACKSIZE and ABT_MEM_MAX_NUM_STACKS, set before
 * margo_init calls ABT_init() (margo_pools.c). Warned, as Margo warns:
 * when the environment already says otherwise, or when Argobots was
 * initialized before, so that the stack size is not the one Margo would
 * set (unless the program called margo_set_environment() first). */
void
margo_cfg_check_abt_env(const struct margo_config *cfg, bool abt_up)
{
    const char *env = getenv("ABT_MEM_MAX_NUM_STACKS");
    int64_t size = cfg->abt_thread_stacksize >= 0 ? cfg->abt_thread_stacksize
                                                  : MARGO_ABT_STACKSIZE;

    if (cfg->abt_mem_max_num_stacks >= 0) {
        if (env != NULL && atoll(env) != cfg->abt_mem_max_num_stacks)
            CFG_WARN("\"argobots.abt_mem_max_num_stacks\" ignored: "
                     "ABT_MEM_MAX_NUM_STACKS=%s is set",
                     env);
        else if (env == NULL && abt_up)
            CFG_WARN("\"argobots.abt_mem_max_num_stacks\" ignored: Argobots "
                     "was initialized before margo_init");
    }
    env = getenv("ABT_THREAD_STACKSIZE");
    if (env != NULL && atoll(env) != size)
        CFG_WARN("ULT stack size %lld not applied: ABT_THREAD_STACKSIZE=%s "
                 "is set",
                 (long long) size, env);
    else if (env == NULL && abt_up)
        CFG_WARN("ULT stack size %lld not applied: Argobots was initialized "
                 "before margo_init (margo_set_environment() before "
                 "ABT_init() sets it)",
                 (long long) size);
}

/* "__primary__": the JSON may define its pool, or its pool and its
 * xstream (the pool must then be the xstream's first); what it leaves out
 * is added after the JSON's entries. When Argobots was initialized before
 * this instance, both are the running program's ("external"). */
static int
cfg_setup_primary(struct margo_config *cfg, bool abt_up)
{
    int xs = cfg_find_xstream(cfg, "__primary__");
    int p = margo_cfg_find_pool(cfg, "__primary__");
    unsigned idx;

    if (xs >= 0) {
        if (p < 0 || cfg->xstreams[xs].pools[0] != (unsigned) p) {
            CFG_ERR("xstream \"__primary__\" must have the pool named "
                    "\"__primary__\" first");
            return -1;
        }
    } else {
        if (p < 0) {
            if (cfg_add_pool(cfg, "__primary__",
                             abt_up ? "external" : "fifo_wait",
                             abt_up ? "" : "mpmc"))
                return -1;
            p = (int) cfg->npools - 1;
            cfg->pools[p].not_owned = abt_up;
        }
        idx = (unsigned) p;
        if (cfg_add_xstream(cfg, "__primary__",
                            abt_up ? "external" : "basic_wait", -1, &idx, 1))
            return -1;
        xs = (int) cfg->nxstreams - 1;
        cfg->xstreams[xs].not_owned = abt_up;
    }
    cfg->primary_pool = (unsigned) p;
    cfg->primary_xstream = (unsigned) xs;
    return 0;
}

/* A new pool served by n new xstreams (use_progress_thread,
 * rpc_thread_count), named as Margo names them. */
static int
cfg_add_served_pool(struct margo_config *cfg, int n, unsigned *idx)
{
    if (cfg_add_pool(cfg, NULL, "fifo_wait", "mpmc"))
        return -1;
    *idx = (unsigned) cfg->npools - 1;
    for (int i = 0; i < n; i++)
        if (cfg_add_xstream(cfg, NULL, "basic_wait", -1, idx, 1))
            return -1;
    return 0;
}

/* Margo's warnings about a layout whose ULTs may not run, or run late:
 * a pool no xstream serves, one that is no xstream's first, and pools
 * that share an xstream with the progress pool. They are warnings only:
 * xstreams may still be added, and some schedulers do not keep to the
 * order of their pools. The text is Margo's, word for word (programs and
 * tests compare it). */
static void
cfg_layout_warnings(const struct margo_config *cfg)
{
    enum { FIRST = 1, WITH_PROGRESS = 2, AFTER_PROGRESS = 4, BEFORE = 8 };
    unsigned char *flags = calloc(cfg->npools ? cfg->npools : 1, 1);
    unsigned prog = cfg->progress_pool;

    if (flags == NULL)
        return;
    for (size_t i = 0; i < cfg->nxstreams; i++) {
        const struct margo_xstream_spec *x = &cfg->xstreams[i];
        bool has_progress = false;

        for (size_t j = 0; j < x->npools; j++) {
            unsigned p = x->pools[j];

            has_progress = has_progress || p == prog;
            if (j == 0)
                flags[p] |= FIRST;
            if (p != prog)
                flags[p] |= has_progress ? AFTER_PROGRESS : BEFORE;
        }
        for (size_t j = 0; j < x->npools && has_progress; j++)
            flags[x->pools[j]] |= WITH_PROGRESS;
    }
    for (size_t i = 0; i < cfg->npools; i++) {
        const char *name = cfg->pools[i].name;

        if (flags[i] == 0) {
            margo_log(NULL, MARGO_LOG_WARNING,
                      "Pool \"%s\" at index %zu is not currently associated "
                      "with any ES. ULT pushed into that pool will not get "
                      "executed.",
                      name, i);
            continue;
        }
        if (!(flags[i] & FIRST))
            margo_log(NULL, MARGO_LOG_WARNING,
                      "Pool \"%s\" at index %zu is not the first pool of any "
                      "ES. This could cause starvation for ULTs pushed in "
                      "that pool.",
                      name, i);
        if (i == prog)
            continue;
        if (!(flags[i] & BEFORE))
            margo_log(NULL, MARGO_LOG_WARNING,
                      "Pool \"%s\" at index %zu does not appear before the "
                      "progress pool in any ES. Depending on the type of "
                      "scheduler used, this may cause ULTs pushed in that "
                      "pool to never execute because the progress pool will "
                      "keep the ES busy.",
                      name, i);
        if (flags[i] & AFTER_PROGRESS)
            margo_log(NULL, MARGO_LOG_WARNING,
                      "Pool \"%s\" at index %zu appears after the progress "
                      "pool in at least one ES. Depending on the type of "
                      "scheduler used, this ES may never pull ULTs from that "
                      "pool because the progress pool will keep the ES busy.",
                      name, i);
        if (flags[i] & WITH_PROGRESS)
            margo_log(NULL, MARGO_LOG_WARNING,
                      "Pool \"%s\" at index %zu is used by an ES that is also "
                      "associated with the progress pool. This may cause "
                      "ULTs pushed into that pool to get unnecessarily "
                      "delayed.",
                      name, i);
    }
    free(flags);
}

int
margo_cfg_finish_pools(struct margo_config *cfg, bool abt_up,
                       json_object *ppool, json_object *rpool, bool use_pt,
                       int rpc_threads)
{
    /* progress_pool and rpc_pool name or index the JSON's own pools (or
     * name "__primary__"), which come first whatever is added below. */
    size_t njson = cfg->npools;
    unsigned idx;

    if (ppool && !(json_object_is_type(ppool, json_type_string) &&
                   strcmp(json_object_get_string(ppool), "__primary__") == 0))
        if (cfg_pool_ref(cfg, ppool, njson, "progress_pool", &idx))
            return -1;
    if (rpool && !(json_object_is_type(rpool, json_type_string) &&
                   strcmp(json_object_get_string(rpool), "__primary__") == 0))
        if (cfg_pool_ref(cfg, rpool, njson, "rpc_pool", &idx))
            return -1;
    if (cfg_setup_primary(cfg, abt_up))
        return -1;

    if (ppool) {
        if (use_pt)
            CFG_WARN("\"use_progress_thread\" ignored: \"progress_pool\" "
                     "names the progress pool");
        if (cfg_pool_ref(cfg, ppool, cfg->npools, "progress_pool",
                         &cfg->progress_pool))
            return -1;
    } else if (use_pt) {
        if (cfg_add_served_pool(cfg, 1, &cfg->progress_pool))
            return -1;
    } else {
        cfg->progress_pool = cfg->primary_pool;
    }

    if (rpool) {
        if (rpc_threads != 0)
            CFG_WARN("\"rpc_thread_count\" ignored: \"rpc_pool\" names the "
                     "pool of RPC handlers");
        if (cfg_pool_ref(cfg, rpool, cfg->npools, "rpc_pool", &cfg->rpc_pool))
            return -1;
    } else if (rpc_threads < 0) {
        cfg->rpc_pool = cfg->progress_pool;
    } else if (rpc_threads > 0) {
        if (cfg_add_served_pool(cfg, rpc_threads, &cfg->rpc_pool))
            return -1;
    } else {
        cfg->rpc_pool = cfg->primary_pool;
    }
    cfg->use_progress_thread = cfg->progress_pool != cfg->primary_pool;
    cfg_layout_warnings(cfg);
    return 0;
}

/* ---- A child instance (margo_init_ext's parent_mid) ------------------- */

int
margo_cfg_inherit_pools(struct margo_config *cfg,
                        const struct margo_config *parent, json_object *ppool,
                        json_object *rpool)
{
    /* The parent's pools and xstreams under the same names and indices;
     * none is the child's to free. */
    for (size_t i = 0; i < parent->npools; i++) {
        const struct margo_pool_spec *p = &parent->pools[i];

        if (cfg_add_pool(cfg, p->name, p->kind, p->access))
            return -1;
        cfg->pools[i].not_owned = true;
    }
    for (size_t i = 0; i < parent->nxstreams; i++) {
        const struct margo_xstream_spec *x = &parent->xstreams[i];

        if (cfg_add_xstream(cfg, x->name, x->sched, -1, x->pools, x->npools))
            return -1;
        cfg->xstreams[i].not_owned = true;
    }
    cfg->primary_pool = parent->primary_pool;
    cfg->primary_xstream = parent->primary_xstream;
    /* Without a reference, the parent's "__primary__", as in Margo. */
    cfg->progress_pool = cfg->rpc_pool = cfg->primary_pool;
    if (ppool && cfg_pool_ref(cfg, ppool, cfg->npools, "progress_pool",
                              &cfg->progress_pool))
        return -1;
    if (rpool &&
        cfg_pool_ref(cfg, rpool, cfg->npools, "rpc_pool", &cfg->rpc_pool))
        return -1;
    cfg->use_progress_thread = cfg->progress_pool != cfg->primary_pool;
    return 0;
}

/* ---- Changes at run time (margo_elastic.c) ---------------------------- */

int
margo_config_add_pool_json(struct margo_config *cfg, const char *json)
{
    json_object *root;
    int rc;

    root = margo_cfg_parse_text(json && json[0] ? json : "{}", "a pool");
    if (root == NULL)
        return -1;
    rc = cfg_parse_pool(cfg, root, true);
    json_object_put(root);
    return rc;
}

int
margo_config_add_xstream_json(struct margo_config *cfg, const char *json)
{
    json_object *root;
    int rc;

    root = margo_cfg_parse_text(json && json[0] ? json : "{}", "an xstream");
    if (root == NULL)
        return -1;
    rc = cfg_parse_xstream(cfg, root, true);
    json_object_put(root);
    return rc;
}

int
margo_config_add_external_pool(struct margo_config *cfg, const char *name)
{
    return cfg_add_pool(cfg, name, "external", "");
}

int
margo_config_add_external_xstream(struct margo_config *cfg, const char *name,
                                  const unsigned *pools, size_t npools)
{
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
    if (cfg->primary_pool == last)
        cfg->primary_pool = (unsigned) i;
}

void
margo_config_remove_xstream(struct margo_config *cfg, size_t i)
{
    free(cfg->xstreams[i].name);
    free(cfg->xstreams[i].affinity);
    cfg->xstreams[i] = cfg->xstreams[cfg->nxstreams - 1];
    cfg->nxstreams--;
    if (cfg->primary_xstream == cfg->nxstreams)
        cfg->primary_xstream = (unsigned) i;
}
