/*
 * A Margo service in the shape of the tutorial (a "sum" RPC whose values
 * the server pulls from the client's memory), written to run as two
 * processes over shared memory: na+sm, or ofi+tcp with Margo's JSON switch
 * {"mercury": {"auto_sm": true}}.
 *
 *   sm_margo_sum server <address> <route> [json]
 *       serves SUMS sum RPCs, then finalizes; <route> is what every request
 *       must have come over: "sm" (the source address is a shared-memory
 *       one), "net" (it is not) or "any". Prints "listening at <address>"
 *       first and "server OK" last.
 *   sm_margo_sum client <server address> <address> [json]
 *       sends SUMS sums of growing size (the larger ones pull megabytes)
 *       and checks each answer; prints "client OK".
 *
 * Exit status 0 only if every call succeeded and every answer was right.
 */
#include <margo.h>
#include <mercury_macros.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUMS 6

MERCURY_GEN_PROC(sm_sum_in_t, ((int32_t) (n))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(sm_sum_out_t, ((int64_t) (total)))

static const int32_t sm_sizes[SUMS] = {1, 10, 1000, 16384, 262144, 1 << 21};
static int sm_served, sm_wrong_route, sm_errors;
static const char *sm_route = "any";

static void
sm_sum(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    sm_sum_in_t in;
    sm_sum_out_t out = {.total = -1};
    char src[512];
    hg_size_t src_size = sizeof(src);
    hg_size_t size;
    hg_bulk_t local = HG_BULK_NULL;
    int32_t *values = NULL;

    if (margo_get_input(h, &in) != HG_SUCCESS) {
        sm_errors++;
        goto respond;
    }
    /* A request that came over shared memory has a shared-memory source. */
    if (margo_addr_to_string(mid, src, &src_size, info->addr) != HG_SUCCESS) {
        sm_errors++;
    } else {
        int sm = strncmp(src, "na+sm://", 8) == 0;

        if ((strcmp(sm_route, "sm") == 0 && !sm) ||
            (strcmp(sm_route, "net") == 0 && sm)) {
            fprintf(stderr, "server: request from %s, want route %s\n", src,
                    sm_route);
            sm_wrong_route++;
        }
    }
    size = (hg_size_t) in.n * sizeof(*values);
    values = malloc(size);
    if (values == NULL || in.n <= 0 ||
        margo_bulk_create(mid, 1, (void **) &values, &size, HG_BULK_WRITE_ONLY,
                          &local) != HG_SUCCESS ||
        margo_bulk_transfer(mid, HG_BULK_PULL, info->addr, in.bulk, 0, local, 0,
                            size) != HG_SUCCESS) {
        sm_errors++;
    } else {
        out.total = 0;
        for (int32_t i = 0; i < in.n; i++)
            out.total += values[i];
    }
    if (local != HG_BULK_NULL)
        margo_bulk_free(local);
    free(values);
    margo_free_input(h, &in);
respond:
    if (margo_respond(h, &out) != HG_SUCCESS)
        sm_errors++;
    margo_destroy(h);
    if (++sm_served == SUMS)
        margo_finalize(mid);
}
DEFINE_MARGO_RPC_HANDLER(sm_sum)

static margo_instance_id
sm_init(const char *address, int mode, const char *json)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;

    info.json_config = json;
    return margo_init_ext(address, mode, &info);
}

static int
sm_server(const char *address, const char *json)
{
    margo_instance_id mid = sm_init(address, MARGO_SERVER_MODE, json);
    hg_addr_t self;
    char buf[512];
    hg_size_t size = sizeof(buf);

    if (mid == MARGO_INSTANCE_NULL) {
        fprintf(stderr, "server: margo_init_ext(\"%s\") failed\n", address);
        return 1;
    }
    MARGO_REGISTER(mid, "sm_sum", sm_sum_in_t, sm_sum_out_t, sm_sum);
    if (margo_addr_self(mid, &self) != HG_SUCCESS ||
        margo_addr_to_string(mid, buf, &size, self) != HG_SUCCESS) {
        margo_finalize(mid);
        return 1;
    }
    margo_addr_free(mid, self);
    printf("listening at %s\n", buf);
    fflush(stdout);
    margo_wait_for_finalize(mid);
    if (sm_errors != 0 || sm_wrong_route != 0) {
        fprintf(stderr, "server: %d errors, %d requests on the wrong route\n",
                sm_errors, sm_wrong_route);
        return 1;
    }
    printf("server OK (%d sums, route %s)\n", sm_served, sm_route);
    return 0;
}

static int
sm_call(margo_instance_id mid, hg_id_t id, hg_addr_t server, int32_t n)
{
    hg_size_t size = (hg_size_t) n * sizeof(int32_t);
    int32_t *values = malloc(size);
    sm_sum_in_t in = {.n = n, .bulk = HG_BULK_NULL};
    sm_sum_out_t out;
    hg_handle_t h = HG_HANDLE_NULL;
    int64_t want = 0;
    int rc = 1;

    if (values == NULL)
        return 1;
    for (int32_t i = 0; i < n; i++) {
        values[i] = i % 1000 - 300;
        want += values[i];
    }
    if (margo_bulk_create(mid, 1, (void **) &values, &size, HG_BULK_READ_ONLY,
                          &in.bulk) != HG_SUCCESS ||
        margo_create(mid, server, id, &h) != HG_SUCCESS ||
        margo_forward(h, &in) != HG_SUCCESS ||
        margo_get_output(h, &out) != HG_SUCCESS) {
        fprintf(stderr, "client: sum of %d: a call failed\n", (int) n);
        goto out;
    }
    if (out.total == want) {
        printf("client: sum of %d values = %lld\n", (int) n,
               (long long) out.total);
        rc = 0;
    } else {
        fprintf(stderr, "client: sum of %d values = %lld, want %lld\n", (int) n,
                (long long) out.total, (long long) want);
    }
    margo_free_output(h, &out);
out:
    if (h != HG_HANDLE_NULL)
        margo_destroy(h);
    if (in.bulk != HG_BULK_NULL)
        margo_bulk_free(in.bulk);
    free(values);
    return rc;
}

static int
sm_client(const char *server_addr, const char *address, const char *json)
{
    margo_instance_id mid = sm_init(address, MARGO_CLIENT_MODE, json);
    hg_addr_t server;
    hg_id_t id;
    int rc = 0;

    if (mid == MARGO_INSTANCE_NULL) {
        fprintf(stderr, "client: margo_init_ext(\"%s\") failed\n", address);
        return 1;
    }
    id = MARGO_REGISTER(mid, "sm_sum", sm_sum_in_t, sm_sum_out_t, NULL);
    if (margo_addr_lookup(mid, server_addr, &server) != HG_SUCCESS) {
        fprintf(stderr, "client: cannot look up %s\n", server_addr);
        margo_finalize(mid);
        return 1;
    }
    for (int i = 0; i < SUMS; i++)
        rc |= sm_call(mid, id, server, sm_sizes[i]);
    margo_addr_free(mid, server);
    margo_finalize(mid);
    if (rc == 0)
        printf("client OK\n");
    return rc;
}

int
main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "server") == 0) {
        sm_route = argv[3];
        return sm_server(argv[2], argc > 4 ? argv[4] : NULL);
    }
    if (argc >= 4 && strcmp(argv[1], "client") == 0)
        return sm_client(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    fprintf(stderr,
            "usage: %s server <address> <sm|net|any> [json]\n"
            "       %s client <server address> <address> [json]\n",
            argv[0], argv[0]);
    return 2;
}
