/*
 * Margo's JSON configuration written back out (margo_config_to_json(),
 * margo_get_config()): the "mercury" section as Margo writes it, then the
 * pools, the execution streams and the top-level keys. The parsing side
 * is margo_config.c.
 */
#include "margo_config.h"
#include "margo_internal.h"

#include <json-c/json.h>

#include <stdlib.h>
#include <string.h>

static json_object *
cfg_pool_ref(const struct margo_config *cfg, unsigned idx, int options)
{
    if (options & MARGO_CONFIG_USE_NAMES)
        return json_object_new_string(cfg->pools[idx].name);
    return json_object_new_int((int32_t) idx);
}

/* The "mercury" section as Margo writes it: the instance's address,
 * listening flag and eager sizes, then hg_init_info's fields. */
static json_object *
cfg_hg_to_json(const struct margo_config *cfg,
               const struct margo_config_live *live)
{
    const struct na_init_info *na = &cfg->hg.na_init_info;
    json_object *hg = json_object_new_object();

#define ADD(key, val) json_object_object_add(hg, key, val)
#define ADD_STR(key, str)                                                      \
    if ((str) != NULL)                                                         \
        ADD(key, json_object_new_string(str));
    ADD("version", json_object_new_string("2.4.0"));
    ADD("address", json_object_new_string(live->address));
    ADD("listening", json_object_new_boolean(live->listening));
    ADD("input_eager_size", json_object_new_int64(live->input_eager_size));
    ADD("output_eager_size", json_object_new_int64(live->output_eager_size));
    ADD("request_post_init", json_object_new_int64(cfg->hg.request_post_init));
    ADD("request_post_incr", json_object_new_int64(cfg->hg.request_post_incr));
    ADD("auto_sm", json_object_new_boolean(cfg->hg.auto_sm));
    ADD("no_bulk_eager", json_object_new_boolean(cfg->hg.no_bulk_eager));
    ADD("no_loopback", json_object_new_boolean(cfg->hg.no_loopback));
    ADD("stats", json_object_new_boolean(cfg->hg.stats));
    ADD("na_no_block",
        json_object_new_boolean((na->progress_mode & NA_NO_BLOCK) != 0));
    ADD("na_no_retry",
        json_object_new_boolean((na->progress_mode & NA_NO_RETRY) != 0));
    ADD("max_contexts", json_object_new_int64(na->max_contexts));
    ADD_STR("ip_subnet", na->ip_subnet)
    ADD_STR("auth_key", na->auth_key)
    ADD_STR("log_level", cfg->log_level)
    ADD_STR("log_subsys", cfg->log_subsys)
    ADD("na_max_unexpected_size",
        json_object_new_int64((int64_t) na->max_unexpected_size));
    ADD("na_max_expected_size",
        json_object_new_int64((int64_t) na->max_expected_size));
    ADD_STR("sm_info_string", cfg->hg.sm_info_string)
    ADD("na_request_mem_device",
        json_object_new_boolean(na->request_mem_device));
    ADD("checksum_level",
        json_object_new_string(
            margo_cfg_checksum_levels[cfg->hg.checksum_level <=
                                              HG_CHECKSUM_RPC_PAYLOAD
                                          ? cfg->hg.checksum_level
                                          : 0]));
    ADD("na_addr_format",
        json_object_new_string(
            margo_cfg_addr_formats[na->addr_format <= NA_ADDR_NATIVE
                                       ? na->addr_format
                                       : 0]));
    /* Quicksilver's own. */
    ADD("release_input_early",
        json_object_new_boolean(cfg->hg.release_input_early));
    ADD("no_multi_recv", json_object_new_boolean(cfg->hg.no_multi_recv));
    ADD("probe_interval_ms", json_object_new_int64(cfg->hg.probe_interval_ms));
    ADD("no_probe", json_object_new_boolean(cfg->hg.no_probe));
#undef ADD_STR
#undef ADD
    return hg;
}

/* "cpubind" and "affinity" read back from the live stream, as Margo
 * does: cpubind only when the stream is bound; affinity the bound CPUs,
 * or every CPU's index when it is not. Without a live handle, what the
 * configuration asked for. */
static void
cfg_xstream_binding_to_json(json_object *o, const struct margo_xstream_spec *x,
                            ABT_xstream xs)
{
    json_object *aff = json_object_new_array();
    int cpu, n = 0;

    if (xs != ABT_XSTREAM_NULL && xs != NULL) {
        /* cpubind only for a stream on one CPU: a stream bound to
         * several, given back its cpubind, would end up on the first. */
        if (ABT_xstream_get_affinity(xs, 0, NULL, &n) == ABT_SUCCESS &&
            n == 1 && ABT_xstream_get_cpubind(xs, &cpu) == ABT_SUCCESS)
            json_object_object_add(o, "cpubind", json_object_new_int(cpu));
        if (ABT_xstream_get_affinity(xs, 0, NULL, &n) == ABT_SUCCESS && n > 0) {
            int *ids = malloc((size_t) n * sizeof(*ids));

            if (ids && ABT_xstream_get_affinity(xs, n, ids, &n) == ABT_SUCCESS)
                for (int i = 0; i < n; i++)
                    json_object_array_add(aff, json_object_new_int(ids[i]));
            free(ids);
        }
    } else {
        if (x->cpubind >= 0)
            json_object_object_add(o, "cpubind",
                                   json_object_new_int(x->cpubind));
        for (int i = 0; i < x->naffinity; i++)
            json_object_array_add(aff, json_object_new_int(x->affinity[i]));
    }
    json_object_object_add(o, "affinity", aff);
}

char *
margo_config_to_json(const struct margo_config *cfg,
                     const struct margo_config_live *live, int options)
{
    json_object *root = json_object_new_object(), *hg, *abt, *pools, *xss;
    const char *text;
    char *out;

    if (root == NULL)
        return NULL;
    hg = cfg_hg_to_json(cfg, live);
    json_object_object_add(root, "mercury", hg);

    abt = json_object_new_object();
    pools = json_object_new_array();
    for (size_t i = 0; i < cfg->npools; i++) {
        json_object *p;

        if ((options & MARGO_CONFIG_HIDE_EXTERNAL) &&
            strcmp(cfg->pools[i].kind, "external") == 0)
            continue;
        p = json_object_new_object();

        json_object_object_add(p, "name",
                               json_object_new_string(cfg->pools[i].name));
        json_object_object_add(p, "kind",
                               json_object_new_string(cfg->pools[i].kind));
        json_object_object_add(p, "access",
                               json_object_new_string(cfg->pools[i].access));
        json_object_array_add(pools, p);
    }
    xss = json_object_new_array();
    for (size_t i = 0; i < cfg->nxstreams; i++) {
        const struct margo_xstream_spec *x = &cfg->xstreams[i];
        json_object *o, *s, *pl;

        if ((options & MARGO_CONFIG_HIDE_EXTERNAL) &&
            strcmp(x->sched, "external") == 0)
            continue;
        o = json_object_new_object();
        s = json_object_new_object();
        pl = json_object_new_array();

        json_object_object_add(o, "name", json_object_new_string(x->name));
        cfg_xstream_binding_to_json(o, x,
                                    live->xstreams && i < live->nxstreams
                                        ? live->xstreams[i]
                                        : ABT_XSTREAM_NULL);
        json_object_object_add(s, "type", json_object_new_string(x->sched));
        for (size_t j = 0; j < x->npools; j++)
            json_object_array_add(pl, cfg_pool_ref(cfg, x->pools[j], options));
        json_object_object_add(s, "pools", pl);
        json_object_object_add(o, "scheduler", s);
        json_object_array_add(xss, o);
    }
    json_object_object_add(abt, "pools", pools);
    json_object_object_add(abt, "xstreams", xss);
    json_object_object_add(root, "argobots", abt);
    json_object_object_add(root, "progress_pool",
                           cfg_pool_ref(cfg, cfg->progress_pool, options));
    json_object_object_add(root, "rpc_pool",
                           cfg_pool_ref(cfg, cfg->rpc_pool, options));
    json_object_object_add(root, "use_progress_thread",
                           json_object_new_boolean(cfg->use_progress_thread));
    json_object_object_add(root, "rpc_thread_count",
                           json_object_new_int(cfg->rpc_thread_count));
    json_object_object_add(
        root, "progress_timeout_ub_msec",
        json_object_new_int64(cfg->progress_timeout_ub_msec));
    json_object_object_add(root, "handle_cache_size",
                           json_object_new_int64(cfg->handle_cache_size));
    json_object_object_add(root, "enable_abt_profiling",
                           json_object_new_boolean(cfg->enable_abt_profiling));

    text = json_object_to_json_string_ext(
        root, (options & MARGO_CONFIG_PRETTY_JSON) ? JSON_C_TO_STRING_PRETTY
                                                   : JSON_C_TO_STRING_PLAIN);
    out = text ? strdup(text) : NULL;
    json_object_put(root);
    return out;
}
