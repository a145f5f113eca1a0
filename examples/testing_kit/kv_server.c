/*
 * The kv service's handlers. The store is a fixed table: this is an
 * example, and its bounds are what the fuzzer pushes against.
 *
 * Built with -DKV_BUG_DOUBLE_FREE it carries a planted bug for the guide:
 * the rejection of an over-long key frees the input's key itself, and
 * margo_free_input() frees it again.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "kv.h"

#include <stdlib.h>
#include <string.h>

struct kv_entry {
    char key[KV_MAX_KEY + 1];
    char *value;
    size_t len;
};

static struct kv_entry kv_store[KV_MAX_ENTRIES];
static size_t kv_count;

static struct kv_entry *
kv_find(const char *key)
{
    for (size_t i = 0; i < kv_count; i++)
        if (strcmp(kv_store[i].key, key) == 0)
            return &kv_store[i];
    return NULL;
}

void
kv_reset(void)
{
    for (size_t i = 0; i < kv_count; i++)
        free(kv_store[i].value);
    kv_count = 0;
}

static int
kv_store_put(const char *key, const char *value)
{
    struct kv_entry *e = kv_find(key);
    char *copy = strdup(value);

    if (copy == NULL)
        return KV_ENOSPC;
    if (e == NULL) {
        if (kv_count == KV_MAX_ENTRIES) {
            free(copy);
            return KV_ENOSPC;
        }
        e = &kv_store[kv_count++];
        strcpy(e->key, key);
    } else
        free(e->value);
    e->value = copy;
    e->len = strlen(copy);
    return KV_OK;
}

static void
kv_put_ult(hg_handle_t h)
{
    kv_put_in_t in;
    kv_status_t out = {.ret = KV_EINVAL};

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        margo_respond(h, &out);
        margo_destroy(h);
        return;
    }
    if (in.key == NULL || in.value == NULL)
        out.ret = KV_EINVAL;
    else if (strlen(in.key) > KV_MAX_KEY) {
#ifdef KV_BUG_DOUBLE_FREE
        free(in.key); /* the planted bug: margo_free_input() owns it */
#endif
        out.ret = KV_EINVAL;
    } else
        out.ret = kv_store_put(in.key, in.value);
    margo_free_input(h, &in);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(kv_put_ult)

static void
kv_get_ult(hg_handle_t h)
{
    kv_key_t in;
    kv_get_out_t out = {.ret = KV_EINVAL, .value = NULL};
    struct kv_entry *e;

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        e = in.key ? kv_find(in.key) : NULL;
        out.ret = e ? KV_OK : KV_ENOENT;
        out.value = e ? e->value : NULL;
        margo_free_input(h, &in);
    }
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(kv_get_ult)

/* Push the value into the client's region, which must be large enough. */
static void
kv_read_ult(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    kv_read_in_t in;
    kv_read_out_t out = {.ret = KV_EINVAL, .size = 0};
    struct kv_entry *e;

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        margo_respond(h, &out);
        margo_destroy(h);
        return;
    }
    e = in.key ? kv_find(in.key) : NULL;
    if (e == NULL)
        out.ret = in.key ? KV_ENOENT : KV_EINVAL;
    else if (in.bulk == HG_BULK_NULL || HG_Bulk_get_size(in.bulk) < e->len)
        out.ret = KV_EINVAL;
    else if (e->len > 0) {
        void *ptr = e->value;
        hg_size_t len = e->len;
        hg_bulk_t local;

        out.ret = KV_EIO;
        if (margo_bulk_create(mid, 1, &ptr, &len, HG_BULK_READ_ONLY, &local) ==
            HG_SUCCESS) {
            if (margo_bulk_transfer(mid, HG_BULK_PUSH, info->addr, in.bulk, 0,
                                    local, 0, len) == HG_SUCCESS) {
                out.ret = KV_OK;
                out.size = len;
            }
            margo_bulk_free(local);
        }
    } else
        out.ret = KV_OK;
    margo_free_input(h, &in);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(kv_read_ult)

int
kv_register(margo_instance_id mid)
{
    if (MARGO_REGISTER(mid, "kv_put", kv_put_in_t, kv_status_t, kv_put_ult) ==
            0 ||
        MARGO_REGISTER(mid, "kv_get", kv_key_t, kv_get_out_t, kv_get_ult) ==
            0 ||
        MARGO_REGISTER(mid, "kv_read", kv_read_in_t, kv_read_out_t,
                       kv_read_ult) == 0)
        return -1;
    return 0;
}
