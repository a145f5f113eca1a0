/*
 * Margo's own table of registered RPCs, providers and provider
 * identities.
 *
 * HG knows nothing of providers. Margo mixes the provider id into the RPC
 * id it registers with HG: the name's hash (32 bits) stays in the low half
 * and provider_id + 1 goes into the high half, except for
 * MARGO_DEFAULT_PROVIDER_ID, whose id is the bare hash (the one
 * HG_Register_name() gives, so plain HG peers agree). The id travels in
 * the request header like any other, so the target's HG layer finds the
 * handler of that provider, and answers HG_NOENTRY when no such provider
 * registered the RPC. An origin forwarding to a provider retargets its
 * handle to the muxed id (HG_Reset), registering that id locally with the
 * base RPC's proc callbacks the first time.
 */
#include "margo_internal.h"

#include <stdlib.h>
#include <string.h>

hg_id_t
margo_mux_id(hg_id_t base_id, uint16_t provider_id)
{
    base_id &= MARGO_BASE_ID_MASK;
    if (provider_id == MARGO_DEFAULT_PROVIDER_ID)
        return base_id;
    return base_id | ((hg_id_t) provider_id + 1) << 32;
}

uint16_t
margo_rpc_id_get_provider_id(hg_id_t id)
{
    hg_id_t high = id >> 32;

    return high == 0 ? MARGO_DEFAULT_PROVIDER_ID : (uint16_t) (high - 1);
}

/* The entry of id (lock held), or NULL. */
struct margo_rpc_entry *
margo_rpc_find(const struct margo_instance *mid, hg_id_t id)
{
    struct margo_rpc_entry *e;

    for (e = mid->rpcs; e; e = e->next)
        if (e->id == id)
            return e;
    return NULL;
}

/* Any entry with the same base id, whatever its provider (lock held). */
static struct margo_rpc_entry *
margo_rpc_find_base(const struct margo_instance *mid, hg_id_t id)
{
    struct margo_rpc_entry *e;

    for (e = mid->rpcs; e; e = e->next)
        if ((e->id & MARGO_BASE_ID_MASK) == (id & MARGO_BASE_ID_MASK))
            return e;
    return NULL;
}

/* Record (or update) an RPC in the table. */
static int
margo_rpc_record(struct margo_instance *mid, hg_id_t id, const char *name,
                 hg_proc_cb_t in_proc, hg_proc_cb_t out_proc, ABT_pool pool)
{
    struct margo_rpc_entry *e;

    pthread_mutex_lock(&margo_lock);
    e = margo_rpc_find(mid, id);
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        if (e == NULL || (e->name = strdup(name)) == NULL) {
            pthread_mutex_unlock(&margo_lock);
            free(e);
            return -1;
        }
        e->id = id;
        e->next = mid->rpcs;
        mid->rpcs = e;
    }
    e->in_proc = in_proc;
    e->out_proc = out_proc;
    /* An RPC holds a reference on its pool, so the pool cannot be
     * removed under it. */
    margo_pool_ref_move_locked(mid, e->pool, pool);
    e->pool = pool;
    pthread_mutex_unlock(&margo_lock);
    return 0;
}

void
margo_rpcs_free(struct margo_instance *mid)
{
    struct margo_rpc_entry *e;
    struct margo_identity *ident;

    while ((e = mid->rpcs) != NULL) {
        mid->rpcs = e->next;
        free(e->name);
        free(e);
    }
    while ((ident = mid->identities) != NULL) {
        mid->identities = ident->next;
        free(ident->identity);
        free(ident);
    }
}

/* ---- Registration ---------------------------------------------------- */

hg_id_t
margo_provider_register_name(margo_instance_id mid, const char *func_name,
                             hg_proc_cb_t in_proc_cb, hg_proc_cb_t out_proc_cb,
                             hg_rpc_cb_t rpc_cb, uint16_t provider_id,
                             ABT_pool pool)
{
    hg_id_t base, id;
    hg_bool_t unused;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || func_name == NULL)
        return 0;
    if (HG_Registered_name(mid->hg_class, func_name, &base, &unused) !=
        HG_SUCCESS)
        return 0;
    id = margo_mux_id(base, provider_id);
    if (provider_id == MARGO_DEFAULT_PROVIDER_ID) {
        id = HG_Register_name(mid->hg_class, func_name, in_proc_cb, out_proc_cb,
                              rpc_cb);
        ret = id ? HG_SUCCESS : HG_OTHER_ERROR;
    } else {
        ret = HG_Register(mid->hg_class, id, in_proc_cb, out_proc_cb, rpc_cb);
    }
    if (ret != HG_SUCCESS ||
        margo_rpc_record(mid, id, func_name, in_proc_cb, out_proc_cb, pool)) {
        margo_log(mid, MARGO_LOG_ERROR,
                  "margo: cannot register RPC \"%s\" (provider %u)", func_name,
                  (unsigned) provider_id);
        if (ret == HG_SUCCESS)
            HG_Deregister(mid->hg_class, id);
        return 0;
    }
    margo_log(mid, MARGO_LOG_DEBUG,
              "margo: registered RPC \"%s\" (provider %u) as id %llu",
              func_name, (unsigned) provider_id, (unsigned long long) id);
    return id;
}

hg_id_t
margo_register_name(margo_instance_id mid, const char *func_name,
                    hg_proc_cb_t in_proc_cb, hg_proc_cb_t out_proc_cb,
                    hg_rpc_cb_t rpc_cb)
{
    return margo_provider_register_name(mid, func_name, in_proc_cb, out_proc_cb,
                                        rpc_cb, MARGO_DEFAULT_PROVIDER_ID,
                                        ABT_POOL_NULL);
}

hg_return_t
margo_provider_registered_name(margo_instance_id mid, const char *func_name,
                               uint16_t provider_id, hg_id_t *id,
                               hg_bool_t *flag)
{
    hg_id_t base, muxed;
    hg_bool_t unused;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL || func_name == NULL || flag == NULL)
        return HG_INVALID_ARG;
    ret = HG_Registered_name(mid->hg_class, func_name, &base, &unused);
    if (ret != HG_SUCCESS)
        return ret;
    muxed = margo_mux_id(base, provider_id);
    ret = HG_Registered(mid->hg_class, muxed, flag);
    if (ret == HG_SUCCESS && id != NULL)
        *id = muxed;
    return ret;
}

hg_return_t
margo_registered_name(margo_instance_id mid, const char *func_name, hg_id_t *id,
                      hg_bool_t *flag)
{
    return margo_provider_registered_name(mid, func_name,
                                          MARGO_DEFAULT_PROVIDER_ID, id, flag);
}

hg_return_t
margo_deregister(margo_instance_id mid, hg_id_t id)
{
    struct margo_rpc_entry **p, *e = NULL;
    hg_return_t ret;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    ret = HG_Deregister(mid->hg_class, id);
    pthread_mutex_lock(&margo_lock);
    for (p = &mid->rpcs; *p; p = &(*p)->next) {
        if ((*p)->id == id) {
            e = *p;
            *p = e->next;
            margo_pool_ref_move_locked(mid, e->pool, ABT_POOL_NULL);
            break;
        }
    }
    pthread_mutex_unlock(&margo_lock);
    if (e) {
        free(e->name);
        free(e);
    }
    return ret;
}

const char *
margo_rpc_get_name(margo_instance_id mid, hg_id_t id)
{
    struct margo_rpc_entry *e;
    const char *name;

    if (mid == MARGO_INSTANCE_NULL)
        return NULL;
    pthread_mutex_lock(&margo_lock);
    e = margo_rpc_find(mid, id);
    /* The entry lives until deregistration or finalize, like the name
     * real Margo returns. */
    name = e ? e->name : NULL;
    pthread_mutex_unlock(&margo_lock);
    return name;
}

const char *
margo_handle_get_name(hg_handle_t handle)
{
    const struct hg_info *info = HG_Get_info(handle);

    if (info == NULL)
        return NULL;
    return margo_rpc_get_name(margo_instance_of_class(info->hg_class),
                              info->id);
}

ABT_pool
margo_rpc_pool_of(struct margo_instance *mid, hg_id_t id)
{
    struct margo_rpc_entry *e;
    ABT_pool pool;

    pthread_mutex_lock(&margo_lock);
    e = margo_rpc_find(mid, id);
    pool = e ? e->pool : ABT_POOL_NULL;
    pthread_mutex_unlock(&margo_lock);
    return pool;
}

/* ---- Forwarding to a provider ---------------------------------------- */

/* Give `to` the response flag of `from` (both registered). */
static hg_return_t
margo_copy_disabled_response(struct margo_instance *mid, hg_id_t from,
                             hg_id_t to)
{
    hg_bool_t disabled = HG_FALSE;
    hg_return_t ret;

    ret = HG_Registered_disabled_response(mid->hg_class, from, &disabled);
    if (ret == HG_SUCCESS && disabled)
        ret = HG_Registered_disable_response(mid->hg_class, to, HG_TRUE);
    return ret;
}

hg_return_t
margo_handle_retarget(hg_handle_t handle, uint16_t provider_id)
{
    const struct hg_info *info = HG_Get_info(handle);
    struct margo_instance *mid;
    struct margo_rpc_entry *e;
    hg_proc_cb_t in_proc = NULL, out_proc = NULL;
    char *name = NULL;
    hg_bool_t registered = HG_FALSE;
    hg_id_t target;
    hg_return_t ret;

    if (info == NULL)
        return HG_INVALID_ARG;
    mid = margo_instance_of_class(info->hg_class);
    if (mid == NULL)
        return HG_INVALID_ARG;
    target = margo_mux_id(info->id, provider_id);
    if (target == info->id)
        return HG_SUCCESS;
    ret = HG_Registered(mid->hg_class, target, &registered);
    if (ret != HG_SUCCESS)
        return ret;
    if (!registered) {
        /* First forward to this provider from here: register its id for
         * encoding, with the base RPC's procs and no handler. */
        pthread_mutex_lock(&margo_lock);
        e = margo_rpc_find_base(mid, info->id);
        if (e) {
            in_proc = e->in_proc;
            out_proc = e->out_proc;
            name = strdup(e->name);
        }
        pthread_mutex_unlock(&margo_lock);
        if (name == NULL) {
            margo_log(mid, MARGO_LOG_ERROR,
                      "margo: RPC id %llu was not registered through Margo; "
                      "cannot forward it to provider %u",
                      (unsigned long long) info->id, (unsigned) provider_id);
            return HG_NOENTRY;
        }
        ret = HG_Register(mid->hg_class, target, in_proc, out_proc, NULL);
        if (ret == HG_SUCCESS && margo_rpc_record(mid, target, name, in_proc,
                                                  out_proc, ABT_POOL_NULL) != 0)
            ret = HG_NOMEM;
        /* The provider's id is the base RPC under another number: a
         * one-way RPC stays one-way (or the forward would wait for a
         * response the target never sends). */
        if (ret == HG_SUCCESS)
            ret = margo_copy_disabled_response(mid, info->id, target);
        free(name);
        if (ret != HG_SUCCESS)
            return ret;
    }
    return HG_Reset(handle, HG_ADDR_NULL, target);
}

/* ---- Identities ------------------------------------------------------ */

static struct margo_identity **
margo_identity_slot(struct margo_instance *mid, uint16_t provider_id)
{
    struct margo_identity **p = &mid->identities;

    while (*p && (*p)->provider_id != provider_id)
        p = &(*p)->next;
    return p;
}

hg_return_t
margo_provider_register_identity(margo_instance_id mid, uint16_t provider_id,
                                 const char *identity)
{
    struct margo_identity **slot, *ident;
    char *copy;

    if (mid == MARGO_INSTANCE_NULL || identity == NULL)
        return HG_INVALID_ARG;
    copy = strdup(identity);
    if (copy == NULL)
        return HG_NOMEM;
    pthread_mutex_lock(&margo_lock);
    slot = margo_identity_slot(mid, provider_id);
    if (*slot != NULL) {
        pthread_mutex_unlock(&margo_lock);
        free(copy);
        return HG_EXIST;
    }
    ident = calloc(1, sizeof(*ident));
    if (ident == NULL) {
        pthread_mutex_unlock(&margo_lock);
        free(copy);
        return HG_NOMEM;
    }
    ident->provider_id = provider_id;
    ident->identity = copy;
    *slot = ident;
    pthread_mutex_unlock(&margo_lock);
    return HG_SUCCESS;
}

hg_return_t
margo_provider_deregister_identity(margo_instance_id mid, uint16_t provider_id)
{
    struct margo_identity **slot, *ident;

    if (mid == MARGO_INSTANCE_NULL)
        return HG_INVALID_ARG;
    pthread_mutex_lock(&margo_lock);
    slot = margo_identity_slot(mid, provider_id);
    ident = *slot;
    if (ident)
        *slot = ident->next;
    pthread_mutex_unlock(&margo_lock);
    if (ident == NULL)
        return HG_NOENTRY;
    free(ident->identity);
    free(ident);
    return HG_SUCCESS;
}

const char *
margo_provider_registered_identity(margo_instance_id mid, uint16_t provider_id)
{
    struct margo_identity *ident;
    const char *s;

    if (mid == MARGO_INSTANCE_NULL)
        return NULL;
    pthread_mutex_lock(&margo_lock);
    ident = *margo_identity_slot(mid, provider_id);
    s = ident ? ident->identity : NULL;
    pthread_mutex_unlock(&margo_lock);
    return s;
}

/*
 * The identity RPC: every instance serves "__margo_identity" so that
 * margo_provider_get_identity() can ask a remote provider for its
 * identity. Input: the provider id; output: a return code and the string.
 */
MERCURY_GEN_PROC(margo_identity_in_t, ((uint16_t) (provider_id)))
MERCURY_GEN_PROC(margo_identity_out_t,
                 ((int32_t) (ret))((hg_const_string_t) (identity)))

static void
margo_identity_handler(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    margo_identity_in_t in;
    margo_identity_out_t out = {HG_NOENTRY, ""};
    char *copy = NULL;

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        pthread_mutex_lock(&margo_lock);
        struct margo_identity *ident =
            *margo_identity_slot(mid, in.provider_id);
        if (ident)
            copy = strdup(ident->identity);
        pthread_mutex_unlock(&margo_lock);
        if (copy) {
            out.ret = HG_SUCCESS;
            out.identity = copy;
        }
        margo_free_input(h, &in);
    } else {
        out.ret = HG_INVALID_ARG;
    }
    margo_respond(h, &out);
    free(copy);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(margo_identity_handler)

hg_id_t
margo_identity_register(struct margo_instance *mid)
{
    return MARGO_REGISTER(mid, "__margo_identity", margo_identity_in_t,
                          margo_identity_out_t, margo_identity_handler);
}

hg_return_t
margo_provider_get_identity(margo_instance_id mid, hg_addr_t address,
                            uint16_t provider_id, char *buffer, size_t *bufsize)
{
    margo_identity_in_t in = {provider_id};
    margo_identity_out_t out;
    hg_handle_t h;
    hg_return_t ret;
    size_t len;

    if (mid == MARGO_INSTANCE_NULL || bufsize == NULL ||
        (buffer == NULL && *bufsize > 0))
        return HG_INVALID_ARG;
    ret = margo_create(mid, address, mid->identity_id, &h);
    if (ret != HG_SUCCESS)
        return ret;
    ret = margo_forward(h, &in);
    if (ret == HG_SUCCESS)
        ret = margo_get_output(h, &out);
    if (ret == HG_SUCCESS) {
        ret = (hg_return_t) out.ret;
        if (ret == HG_SUCCESS) {
            len = strlen(out.identity) + 1;
            if (len > *bufsize)
                ret = HG_NOMEM;
            else
                memcpy(buffer, out.identity, len);
            *bufsize = len;
        }
        margo_free_output(h, &out);
    }
    margo_destroy(h);
    return ret;
}
