/*
 * The effective configuration of an instance, from margo_init() arguments
 * or margo_init_ext()'s JSON (Margo's documented format), and its JSON
 * output for margo_get_config(). Private to lib/margo.
 */
#ifndef MARGO_CONFIG_H
#define MARGO_CONFIG_H

#include "margo.h"

#include <stdbool.h>
#include <stddef.h>

#define MARGO_NAME_MAX 64
#define MARGO_XSTREAM_POOLS_MAX 16

struct margo_pool_spec {
    char name[MARGO_NAME_MAX];
    char kind[24];   /* fifo, fifo_wait, prio_wait, earliest_first */
    char access[16]; /* private, spsc, mpsc, spmc, mpmc */
};

struct margo_xstream_spec {
    char name[MARGO_NAME_MAX];
    char sched[24]; /* default, basic, prio, randws, basic_wait */
    int cpubind;
    size_t npools;
    unsigned pools[MARGO_XSTREAM_POOLS_MAX]; /* indices into pools */
};

struct margo_config {
    bool use_progress_thread; /* derived: progress pool is not primary */
    int rpc_thread_count;     /* as given (legacy meaning)             */
    unsigned progress_timeout_ub_msec;
    unsigned handle_cache_size;
    bool enable_abt_profiling;
    struct hg_init_info hg; /* the "mercury" section          */
    char *sm_info_string;   /* owned copy of hg.sm_info_string */
    size_t npools, nxstreams;
    struct margo_pool_spec *pools;       /* [0] is "__primary__"    */
    struct margo_xstream_spec *xstreams; /* [0] is "__primary__"    */
    unsigned progress_pool, rpc_pool;    /* indices into pools      */
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
void margo_config_free(struct margo_config *cfg);

/* The configuration as JSON (malloc'd), with the instance's address and
 * listening flag; options are MARGO_CONFIG_* flags. NULL on error. */
char *margo_config_to_json(const struct margo_config *cfg, const char *address,
                           bool listening, int options);

#endif /* MARGO_CONFIG_H */
