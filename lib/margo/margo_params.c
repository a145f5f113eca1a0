/*
 * Run-time parameters, progress counters, the Argobots environment and the
 * current RPC id of a ULT (margo.h, margo-util.h).
 *
 * The current RPC id lives in an Argobots key of the instance when the
 * caller is a ULT (every thread abt.h runs work on, and the thread that
 * called ABT_init), so that it ends with the ULT; on any other thread it
 * lives in a thread-local variable. 0 means "not set" in both places.
 */
#include "margo_internal.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An RPC id travels in an Argobots key's void * value. */
_Static_assert(sizeof(void *) >= sizeof(hg_id_t),
               "an hg_id_t must fit in a pointer");

static _Thread_local hg_id_t margo_thread_rpc_id;

int
margo_set_progress_timeout_ub_msec(margo_instance_id mid, unsigned timeout)
{
    if (mid == MARGO_INSTANCE_NULL)
        return -1;
    atomic_store(&mid->progress_timeout_ub_ms, timeout);
    return 0;
}

int
margo_get_progress_timeout_ub_msec(margo_instance_id mid, unsigned *timeout)
{
    if (mid == MARGO_INSTANCE_NULL)
        return -1;
    if (timeout)
        *timeout = atomic_load(&mid->progress_timeout_ub_ms);
    return 0;
}

int
margo_set_param(margo_instance_id mid, const char *key, const char *value)
{
    char *end;
    unsigned long ms;

    if (mid == MARGO_INSTANCE_NULL || key == NULL || value == NULL)
        return -1;
    if (strcmp(key, "progress_timeout_ub_msecs") != 0) {
        margo_log(mid, MARGO_LOG_WARNING,
                  "margo_set_param: \"%s\" is unknown or cannot change at "
                  "run time",
                  key);
        return -1;
    }
    ms = strtoul(value, &end, 10);
    if (end == value || *end != '\0' || ms > UINT32_MAX) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo_set_param: bad value \"%s\" for \"%s\"", value, key);
        return -1;
    }
    return margo_set_progress_timeout_ub_msec(mid, (unsigned) ms);
}

uint64_t
margo_get_num_progress_calls(margo_instance_id mid)
{
    return mid ? atomic_load(&mid->num_progress_calls) : 0;
}

uint64_t
margo_get_num_trigger_calls(margo_instance_id mid)
{
    return mid ? atomic_load(&mid->num_trigger_calls) : 0;
}

/* ---- The Argobots environment ---------------------------------------- */

static int
margo_setenv_unsigned(const char *name, unsigned value)
{
    char buf[16];

    if (ABT_initialized() == ABT_SUCCESS)
        return -1;
    snprintf(buf, sizeof(buf), "%u", value);
    return setenv(name, buf, 1) == 0 ? 0 : -1;
}

int
margo_set_abt_mem_max_num_stacks(unsigned max_num_stacks)
{
    return margo_setenv_unsigned("ABT_MEM_MAX_NUM_STACKS", max_num_stacks);
}

int
margo_set_abt_thread_stacksize(unsigned stacksize)
{
    return margo_setenv_unsigned("ABT_THREAD_STACKSIZE", stacksize);
}

/* The unsigned value of "argobots".key in root, or dflt. */
static unsigned
margo_env_param(json_object *root, const char *key, unsigned dflt)
{
    json_object *abt, *v;
    int64_t x;

    if (root == NULL || !json_object_object_get_ex(root, "argobots", &abt) ||
        !json_object_object_get_ex(abt, key, &v))
        return dflt;
    x = json_object_get_int64(v);
    return x > 0 && x <= UINT32_MAX ? (unsigned) x : dflt;
}

int
margo_set_environment(const char *optional_json_config)
{
    json_object *root = NULL;

    if (optional_json_config && optional_json_config[0]) {
        root = json_tokener_parse(optional_json_config);
        if (root == NULL) {
            margo_log(NULL, MARGO_LOG_ERROR,
                      "margo_set_environment: the JSON does not parse");
            return -1;
        }
    }
    (void) margo_set_abt_mem_max_num_stacks(margo_env_param(
        root, "abt_mem_max_num_stacks", MARGO_ABT_MAX_NUM_STACKS));
    (void) margo_set_abt_thread_stacksize(
        margo_env_param(root, "abt_thread_stacksize", MARGO_ABT_STACKSIZE));
    json_object_put(root);
    return 0;
}

/* ---- The current RPC id ---------------------------------------------- */

void
margo_rpc_id_init(struct margo_instance *mid)
{
    if (ABT_key_create(NULL, &mid->rpc_id_key) != ABT_SUCCESS)
        mid->rpc_id_key = ABT_KEY_NULL;
}

void
margo_rpc_id_fini(struct margo_instance *mid)
{
    if (mid->rpc_id_key != ABT_KEY_NULL)
        ABT_key_free(&mid->rpc_id_key);
    mid->rpc_id_key = ABT_KEY_NULL;
}

/* The raw value: 0 when not set. */
static hg_id_t
margo_rpc_id_get_raw(struct margo_instance *mid)
{
    void *v = NULL;

    if (mid->rpc_id_key != ABT_KEY_NULL &&
        ABT_key_get(mid->rpc_id_key, &v) == ABT_SUCCESS)
        return (hg_id_t) (uintptr_t) v;
    return margo_thread_rpc_id;
}

static void
margo_rpc_id_set_raw(struct margo_instance *mid, hg_id_t id)
{
    if (mid->rpc_id_key != ABT_KEY_NULL &&
        ABT_key_set(mid->rpc_id_key, (void *) (uintptr_t) id) == ABT_SUCCESS)
        return;
    margo_thread_rpc_id = id;
}

hg_id_t
margo_rpc_id_enter(struct margo_instance *mid, hg_id_t id)
{
    hg_id_t saved = margo_rpc_id_get_raw(mid);

    margo_rpc_id_set_raw(mid, id);
    return saved;
}

void
margo_rpc_id_leave(struct margo_instance *mid, hg_id_t saved)
{
    margo_rpc_id_set_raw(mid, saved);
}

hg_return_t
margo_set_current_rpc_id(margo_instance_id mid, hg_id_t id)
{
    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    if (id == 0)
        id = margo_mux_id(0, MARGO_DEFAULT_PROVIDER_ID);
    margo_rpc_id_set_raw(mid, id);
    return HG_SUCCESS;
}

hg_return_t
margo_get_current_rpc_id(margo_instance_id mid, hg_id_t *id)
{
    hg_id_t v;

    if (mid == MARGO_INSTANCE_NULL || id == NULL)
        return HG_INVALID_ARG;
    v = margo_rpc_id_get_raw(mid);
    *id = v ? v : margo_mux_id(0, MARGO_DEFAULT_PROVIDER_ID);
    return HG_SUCCESS;
}
