/*
 * The kv service's client calls: one blocking Margo call each, with a
 * deadline, so a lost message or a dead server ends in an error rather
 * than a hang.
 *
 * Built with -DKV_BUG_IGNORE_TIMEOUT it carries a planted bug for the
 * guide: kv_get forgets its deadline, and waits forever for a response
 * that a fault has lost. Built with -DKV_BUG_LEAK_ON_ERROR, kv_read
 * forgets to free its bulk handle when the call fails: nothing shows
 * until the invariant checker (QS_CHECK=1) looks at finalize.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "kv.h"

#include <stdlib.h>
#include <string.h>

int
kv_client_init(struct kv_client *c, margo_instance_id mid, const char *server)
{
    memset(c, 0, sizeof(*c));
    c->mid = mid;
    c->timeout_ms = 100;
    c->put = MARGO_REGISTER(mid, "kv_put", kv_put_in_t, kv_status_t, NULL);
    c->get = MARGO_REGISTER(mid, "kv_get", kv_key_t, kv_get_out_t, NULL);
    c->read = MARGO_REGISTER(mid, "kv_read", kv_read_in_t, kv_read_out_t, NULL);
    return margo_addr_lookup(mid, server, &c->server) == HG_SUCCESS ? 0 : -1;
}

void
kv_client_fini(struct kv_client *c)
{
    margo_addr_free(c->mid, c->server);
}

/* Forward with the client's deadline; on success decode into out. */
static hg_return_t
kv_call(struct kv_client *c, hg_id_t id, void *in, hg_handle_t *h,
        double timeout_ms)
{
    hg_return_t ret = margo_create(c->mid, c->server, id, h);

    if (ret != HG_SUCCESS)
        return ret;
    ret = timeout_ms > 0 ? margo_forward_timed(*h, in, timeout_ms)
                         : margo_forward(*h, in);
    if (ret != HG_SUCCESS) {
        margo_destroy(*h);
        *h = HG_HANDLE_NULL;
    }
    return ret;
}

int
kv_put(struct kv_client *c, const char *key, const char *value,
       hg_return_t *hret)
{
    kv_put_in_t in = {.key = (char *) key, .value = (char *) value};
    kv_status_t out;
    hg_handle_t h;
    int rc = -1;

    *hret = kv_call(c, c->put, &in, &h, c->timeout_ms);
    if (*hret != HG_SUCCESS)
        return -1;
    *hret = margo_get_output(h, &out);
    if (*hret == HG_SUCCESS) {
        rc = out.ret;
        margo_free_output(h, &out);
    }
    margo_destroy(h);
    return rc;
}

int
kv_get(struct kv_client *c, const char *key, char **value, hg_return_t *hret)
{
    kv_key_t in = {.key = (char *) key};
    kv_get_out_t out;
    hg_handle_t h;
    int rc = -1;

#ifdef KV_BUG_IGNORE_TIMEOUT
    *hret = kv_call(c, c->get, &in, &h, 0); /* the planted bug */
#else
    *hret = kv_call(c, c->get, &in, &h, c->timeout_ms);
#endif
    *value = NULL;
    if (*hret != HG_SUCCESS)
        return -1;
    *hret = margo_get_output(h, &out);
    if (*hret == HG_SUCCESS) {
        rc = out.ret;
        if (rc == KV_OK && out.value != NULL)
            *value = strdup(out.value);
        margo_free_output(h, &out);
    }
    margo_destroy(h);
    return rc;
}

int
kv_read(struct kv_client *c, const char *key, void *buf, size_t size,
        size_t *len, hg_return_t *hret)
{
    kv_read_in_t in = {.key = (char *) key};
    kv_read_out_t out;
    hg_size_t bsize = size;
    hg_handle_t h;
    int rc = -1;

    *len = 0;
    *hret = margo_bulk_create(c->mid, 1, &buf, &bsize, HG_BULK_WRITE_ONLY,
                              &in.bulk);
    if (*hret != HG_SUCCESS)
        return -1;
    *hret = kv_call(c, c->read, &in, &h, c->timeout_ms);
#ifdef KV_BUG_LEAK_ON_ERROR
    if (*hret != HG_SUCCESS)
        return -1; /* the planted bug: in.bulk is never freed */
#endif
    if (*hret == HG_SUCCESS) {
        *hret = margo_get_output(h, &out);
        if (*hret == HG_SUCCESS) {
            rc = out.ret;
            *len = (size_t) out.size;
            margo_free_output(h, &out);
        }
        margo_destroy(h);
    }
    margo_bulk_free(in.bulk);
    return rc;
}
