/*
 * hg_sum_sim: the HG-level server and four clients in one process and one
 * thread over the simulated fabric. While a client waits for its response
 * the loop below progresses both contexts in turn, which is all it takes
 * for the server to handle the RPC: the run is deterministic for the
 * simulator's seed.
 */
#include "hg_sum.h"

#include <stdio.h>

/* The contexts the single thread drives. */
struct hg_sum_sim {
    hg_context_t *server;
    hg_context_t *client;
};

static void
sim_progress(void *arg)
{
    struct hg_sum_sim *sim = arg;

    /* The simulator's wait returns as soon as a completion lands on any
     * context, so neither side waits on the other. */
    hg_sum_progress_one(sim->client, 100);
    hg_sum_progress_one(sim->server, 0);
}

int
main(void)
{
    struct hg_sum_server server;
    struct hg_sum_client client;
    struct hg_sum_sim sim;
    int32_t sum;
    int rc = 0;

    if (hg_sum_server_start(&server, "sim://hg-sum-server") != 0)
        return 1;
    printf("Server running at address sim://hg-sum-server\n");
    for (int run = 0;
         run < HG_SUM_TOTAL_RPCS / HG_SUM_RPCS_PER_CLIENT && rc == 0; run++) {
        if (hg_sum_client_start(&client, "sim", "sim://hg-sum-server") != 0) {
            rc = 1;
            break;
        }
        sim.server = server.context;
        sim.client = client.context;
        for (int i = 0; i < HG_SUM_RPCS_PER_CLIENT; i++) {
            if (hg_sum_client_call(&client, sim_progress, &sim, &sum) != 0) {
                rc = 1;
                break;
            }
            printf("Got response: %d\n", sum);
        }
        /* The client's last response has arrived; drain the server's
         * respond completion before the client goes. */
        for (int i = 0; i < 10; i++)
            hg_sum_progress_one(server.context, 1);
        if (hg_sum_client_stop(&client) != 0)
            rc = 1;
    }
    if (rc == 0 && !hg_sum_server_done(&server)) {
        fprintf(stderr, "hg_sum_sim: server answered %d RPCs, want %d\n",
                server.served, HG_SUM_TOTAL_RPCS);
        rc = 1;
    }
    if (hg_sum_server_stop(&server) != 0)
        rc = 1;
    printf("hg_sum_sim: %s\n", rc == 0 ? "OK" : "FAILED");
    return rc;
}
