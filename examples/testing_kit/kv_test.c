/*
 * kv_test: the kv service and a client in one process, as a service's own
 * test would be written.
 *
 *   kv_test [info]     info: "sim" (default), or "ofi+tcp://127.0.0.1:0"
 *
 * Without faults every call must succeed and read back what was written.
 * Under a fault profile (QS_SIM_FAULTS, qs-sweep --swarm) calls may fail,
 * each with a clean error, but a value read back must still be one that
 * was written for that key, whole. Exit status 0 when all holds.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "kv.h"

#include <na_sim.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KV_KEYS 8
#define KV_ROUNDS 5

static int kv_failures;

#define KV_CHECK(cond, ...)                                                    \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "kv_test: " __VA_ARGS__);                          \
            fputc('\n', stderr);                                               \
            kv_failures++;                                                     \
        }                                                                      \
    } while (0)

/* Value of key k at version v: "k<k>:v<v>:" then a filler letter. Key 7
 * is larger than an eager message, so it crosses the overflow path. */
static char *
kv_value(int k, int v)
{
    size_t len = k == 7 ? 6000 : 10 + (size_t) k * 50;
    char *s = malloc(len + 1);
    int n = snprintf(s, len + 1, "k%d:v%d:", k, v);

    memset(s + n, 'a' + (k + v) % 26, len - (size_t) n);
    s[len] = '\0';
    return s;
}

/* Whether the len bytes at s are a whole value written for key k (any
 * version). They need not end in a NUL: the header is parsed from a copy
 * that does. */
static bool
kv_plausible(const char *s, size_t len, int k)
{
    int kk, v, n = 0, fields;
    char *head = strndup(s, len < 32 ? len : 32), *want;
    bool ok;

    if (head == NULL)
        return false;
    fields = sscanf(head, "k%d:v%d:%n", &kk, &v, &n);
    free(head);
    if (fields != 2 || kk != k || n == 0)
        return false;
    want = kv_value(k, v);
    ok = strlen(want) == len && memcmp(want, s, len) == 0;
    free(want);
    return ok;
}

int
main(int argc, char **argv)
{
    const char *info = argc > 1 ? argv[1] : "sim";
    const char *faults = getenv("QS_SIM_FAULTS");
    bool strict = faults == NULL || *faults == '\0';
    margo_instance_id srv, cli;
    struct kv_client c;
    char addr[256], key[16], *buf = malloc(8192);
    hg_size_t addr_size = sizeof(addr);
    hg_addr_t self;
    hg_return_t hret;

    srv = margo_init(info, MARGO_SERVER_MODE, 0, 0);
    if (srv == MARGO_INSTANCE_NULL || kv_register(srv) != 0)
        return 2;
    margo_addr_self(srv, &self);
    margo_addr_to_string(srv, addr, &addr_size, self);
    margo_addr_free(srv, self);
    /* Both instances share the thread: the client's blocking calls drive
     * the server too (no progress thread, handlers in the caller). */
    cli = margo_init(strncmp(info, "sim", 3) == 0 ? "sim" : info,
                     MARGO_CLIENT_MODE, 0, 0);
    if (cli == MARGO_INSTANCE_NULL || kv_client_init(&c, cli, addr) != 0)
        return 2;
    /* 100 ms of virtual time is plenty on the simulator; a real network
     * on a loaded machine gets a deadline that a working service meets. */
    if (strncmp(info, "sim", 3) != 0)
        c.timeout_ms = 10000;
    for (int v = 0; v < KV_ROUNDS; v++)
        for (int k = 0; k < KV_KEYS; k++) {
            char *value = kv_value(k, v), *got = NULL;
            size_t len = 0;
            int rc;

            snprintf(key, sizeof(key), "key%d", k);
            rc = kv_put(&c, key, value, &hret);
            KV_CHECK(!strict || rc == KV_OK, "put %s: %d (%s)", key, rc,
                     HG_Error_to_string(hret));
            rc = kv_get(&c, key, &got, &hret);
            KV_CHECK(!strict || rc == KV_OK, "get %s: %d (%s)", key, rc,
                     HG_Error_to_string(hret));
            if (rc == KV_OK)
                KV_CHECK(got != NULL && kv_plausible(got, strlen(got), k) &&
                             (!strict || strcmp(got, value) == 0),
                         "get %s: wrong value", key);
            free(got);
            rc = kv_read(&c, key, buf, 8192, &len, &hret);
            KV_CHECK(!strict || rc == KV_OK, "read %s: %d (%s)", key, rc,
                     HG_Error_to_string(hret));
            if (rc == KV_OK)
                KV_CHECK(kv_plausible(buf, len, k) &&
                             (!strict || (len == strlen(value) &&
                                          memcmp(buf, value, len) == 0)),
                         "read %s: wrong bytes", key);
            free(value);
        }
    /* A key that does not exist, and one that is too long. */
    {
        char *none = NULL, long_key[KV_MAX_KEY + 8];
        int rc = kv_get(&c, "nope", &none, &hret);

        KV_CHECK(rc != KV_OK, "get of a missing key succeeded");
        free(none);
        memset(long_key, 'x', sizeof(long_key) - 1);
        long_key[sizeof(long_key) - 1] = '\0';
        rc = kv_put(&c, long_key, "v", &hret);
        KV_CHECK(!strict || rc == KV_EINVAL, "put of a long key: %d", rc);
    }
    kv_client_fini(&c);
    margo_finalize(cli);
    margo_finalize(srv);
    kv_reset();
    free(buf);
    if (kv_failures > 0) {
        char hint[64];

        na_sim_replay_hint(hint, sizeof(hint));
        fprintf(stderr, "kv_test: %d check(s) failed (%s)\n", kv_failures,
                hint);
        return 1;
    }
    printf("kv_test: OK\n");
    return 0;
}
