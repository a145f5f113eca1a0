/*
 * The alpha server and client in one process over the simulated fabric:
 * the server instance is created from its JSON configuration, the client
 * runs against it (its blocking calls drive the server too, whose
 * handlers run on the provider's pool), shuts it down remotely, and the
 * server's margo_wait_for_finalize() completes the shutdown, which runs
 * the provider's finalize callback.
 */
#include "alpha-client.h"

#include <stdio.h>

margo_instance_id alpha_server_start(const char *address);

int
main(void)
{
    margo_instance_id server = alpha_server_start("sim://alpha-server"), client;
    int rc;

    if (server == MARGO_INSTANCE_NULL)
        return 1;
    client = margo_init("sim", MARGO_CLIENT_MODE, 0, 0);
    if (client == MARGO_INSTANCE_NULL)
        return 1;
    rc = alpha_client_run(client, "sim://alpha-server", 42);
    margo_finalize(client);
    margo_wait_for_finalize(server);
    printf("alpha server: shut down\n");
    return rc;
}
