/*
 * A provider set up the way Bedrock sets one up: the server starts from a
 * JSON configuration, then at run time adds a pool and an execution stream
 * from JSON, registers its RPC into that pool, serves a client, and at the
 * end deregisters and removes both. Written against Margo's documented API
 * only (margo.h, margo-config.h).
 *   elastic_prog ADDRESS     (e.g. "sim://elastic")
 */
#include <margo.h>
#include <margo-config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MERCURY_GEN_PROC(where_in_t, ((int32_t) (x)))
MERCURY_GEN_PROC(where_out_t, ((int32_t) (x))((int32_t) (on_dyn_es)))

static void
where_ult(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    struct margo_xstream_info info;
    where_in_t in;
    where_out_t out = {0, 0};
    ABT_xstream self;

    margo_get_input(h, &in);
    out.x = in.x + 1;
    if (ABT_xstream_self(&self) == ABT_SUCCESS &&
        margo_find_xstream_by_handle(mid, self, &info) == HG_SUCCESS)
        out.on_dyn_es = strcmp(info.name, "dyn_es") == 0;
    margo_respond(h, &out);
    margo_free_input(h, &in);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(where_ult)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "elastic_prog: %s:%d: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int
main(int argc, char **argv)
{
    const char *addr = argc > 1 ? argv[1] : "sim://elastic";
    struct margo_init_info init = MARGO_INIT_INFO_INITIALIZER;
    struct margo_pool_info pool;
    struct margo_xstream_info es;
    margo_instance_id server, client;
    hg_addr_t server_addr;
    hg_handle_t h;
    where_in_t in = {41};
    where_out_t out;
    char *config, self[256];
    hg_size_t self_size = sizeof(self);
    hg_addr_t self_addr;
    hg_id_t sid, cid;
    unsigned refs = 0;

    init.json_config = "{ \"rpc_thread_count\": 0 }";
    server = margo_init_ext(addr, MARGO_SERVER_MODE, &init);
    CHECK(server != MARGO_INSTANCE_NULL);

    CHECK(margo_add_pool_from_json(server,
                                   "{\"name\":\"dyn_pool\",\"kind\":\"fifo_"
                                   "wait\",\"access\":\"mpmc\"}",
                                   &pool) == HG_SUCCESS);
    CHECK(margo_add_xstream_from_json(
              server,
              "{\"name\":\"dyn_es\",\"scheduler\":{\"type\":\"basic_wait\","
              "\"pools\":[\"dyn_pool\"]}}",
              &es) == HG_SUCCESS);
    config = margo_get_config_opt(server, MARGO_CONFIG_USE_NAMES);
    CHECK(config != NULL && strstr(config, "\"dyn_pool\"") != NULL &&
          strstr(config, "\"dyn_es\"") != NULL);
    free(config);

    sid = MARGO_REGISTER_PROVIDER(server, "where", where_in_t, where_out_t,
                                  where_ult, 42, pool.pool);
    CHECK(sid != 0);
    CHECK(margo_pool_ref_count(server, "dyn_pool", &refs) == HG_SUCCESS &&
          refs == 1);
    /* In use: the removal is refused. */
    CHECK(margo_remove_pool(server, "dyn_pool") != HG_SUCCESS);

    client =
        margo_init(strncmp(addr, "sim", 3) == 0 ? "sim://elastic-client" : addr,
                   MARGO_CLIENT_MODE, 0, 0);
    CHECK(client != MARGO_INSTANCE_NULL);
    CHECK(margo_addr_self(server, &self_addr) == HG_SUCCESS);
    CHECK(margo_addr_to_string(server, self, &self_size, self_addr) ==
          HG_SUCCESS);
    margo_addr_free(server, self_addr);
    CHECK(margo_addr_lookup(client, self, &server_addr) == HG_SUCCESS);
    cid = MARGO_REGISTER(client, "where", where_in_t, where_out_t, NULL);
    CHECK(margo_create(client, server_addr, cid, &h) == HG_SUCCESS);
    CHECK(margo_provider_forward(42, h, &in) == HG_SUCCESS);
    CHECK(margo_get_output(h, &out) == HG_SUCCESS);
    CHECK(out.x == 42 && out.on_dyn_es == 1);
    margo_free_output(h, &out);
    margo_destroy(h);
    margo_addr_free(client, server_addr);
    margo_finalize(client);

    /* Tear the provider down the way Bedrock does. */
    CHECK(margo_deregister(server, sid) == HG_SUCCESS);
    CHECK(margo_remove_xstream(server, "dyn_es") == HG_SUCCESS);
    CHECK(margo_remove_pool(server, "dyn_pool") == HG_SUCCESS);
    CHECK(margo_find_pool_by_name(server, "dyn_pool", NULL) == HG_NOENTRY);
    margo_finalize(server);
    printf("elastic_prog: OK\n");
    return 0;
}
