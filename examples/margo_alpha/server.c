/*
 * The alpha server: a Margo instance configured from JSON with a pool for
 * the provider and one execution stream serving it, provider 42 on that
 * pool, remote shutdown enabled. Prints its address, then waits until a
 * client shuts it down.
 *
 *   alpha_server [address]      (default "ofi+tcp://127.0.0.1:0")
 */
#include "alpha-server.h"

#include <stdio.h>

static const char *alpha_config =
    "{ \"use_progress_thread\": false,"
    "  \"argobots\": {"
    "    \"pools\": [ { \"name\": \"alpha_pool\", \"kind\": \"fifo_wait\","
    "                   \"access\": \"mpmc\" } ],"
    "    \"xstreams\": [ { \"name\": \"alpha_es\", \"scheduler\": {"
    "                      \"type\": \"basic_wait\","
    "                      \"pools\": [ \"alpha_pool\" ] } } ] } }";

margo_instance_id
alpha_server_start(const char *address)
{
    struct margo_init_info info = MARGO_INIT_INFO_INITIALIZER;
    struct margo_pool_info pool;
    alpha_provider_t provider;
    margo_instance_id mid;
    char addr_str[256];
    hg_size_t addr_size = sizeof(addr_str);
    hg_addr_t self;

    info.json_config = alpha_config;
    mid = margo_init_ext(address, MARGO_SERVER_MODE, &info);
    if (mid == MARGO_INSTANCE_NULL)
        return MARGO_INSTANCE_NULL;
    if (margo_find_pool_by_name(mid, "alpha_pool", &pool) != HG_SUCCESS ||
        alpha_provider_register(mid, 42, pool.pool, &provider) != 0) {
        margo_finalize(mid);
        return MARGO_INSTANCE_NULL;
    }
    margo_enable_remote_shutdown(mid);
    margo_addr_self(mid, &self);
    margo_addr_to_string(mid, addr_str, &addr_size, self);
    margo_addr_free(mid, self);
    printf("Server running at address %s\n", addr_str);
    fflush(stdout);
    return mid;
}

#ifndef ALPHA_NO_MAIN
int
main(int argc, char **argv)
{
    margo_instance_id mid =
        alpha_server_start(argc > 1 ? argv[1] : "ofi+tcp://127.0.0.1:0");

    if (mid == MARGO_INSTANCE_NULL) {
        fprintf(stderr, "alpha server: cannot start\n");
        return 1;
    }
    margo_wait_for_finalize(mid);
    printf("alpha server: shut down\n");
    return 0;
}
#endif
