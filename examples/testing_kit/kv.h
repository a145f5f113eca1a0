/*
 * kv: a small key-value service over Margo, the example of
 * docs/testing-your-service.md. put and get carry values inline (large
 * ones cross the eager size and travel by the overflow path); read pushes
 * a value into a bulk region the client exposes.
 */
#ifndef KV_H
#define KV_H

#include <margo.h>
#include <mercury_macros.h>
#include <mercury_proc_bulk.h>
#include <mercury_proc_string.h>

#define KV_MAX_KEY 64
#define KV_MAX_ENTRIES 64

/* Status codes in every response. */
enum { KV_OK = 0, KV_ENOENT = 1, KV_EINVAL = 2, KV_ENOSPC = 3, KV_EIO = 4 };

MERCURY_GEN_PROC(kv_put_in_t, ((hg_string_t) (key))((hg_string_t) (value)))
MERCURY_GEN_PROC(kv_status_t, ((int32_t) (ret)))
MERCURY_GEN_PROC(kv_key_t, ((hg_string_t) (key)))
MERCURY_GEN_PROC(kv_get_out_t, ((int32_t) (ret))((hg_string_t) (value)))
MERCURY_GEN_PROC(kv_read_in_t, ((hg_string_t) (key))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(kv_read_out_t, ((int32_t) (ret))((hg_uint64_t) (size)))

/* Server side: register kv_put, kv_get and kv_read on an instance; drop
 * every entry. */
int kv_register(margo_instance_id mid);
void kv_reset(void);

/* Client side: the RPC ids, and one blocking call per RPC. Each returns
 * KV_* from the server, or -1 with *hret set when the RPC itself failed
 * (timeout, unreachable server...). */
struct kv_client {
    margo_instance_id mid;
    hg_addr_t server;
    hg_id_t put, get, read;
    double timeout_ms;
};
int kv_client_init(struct kv_client *c, margo_instance_id mid,
                   const char *server);
void kv_client_fini(struct kv_client *c);
int kv_put(struct kv_client *c, const char *key, const char *value,
           hg_return_t *hret);
/* *value is malloc'd on KV_OK. */
int kv_get(struct kv_client *c, const char *key, char **value,
           hg_return_t *hret);
/* Reads the value into buf (size bytes); *len is its length. */
int kv_read(struct kv_client *c, const char *key, void *buf, size_t size,
            size_t *len, hg_return_t *hret);

#endif
