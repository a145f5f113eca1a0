/*
 * The alpha client: calls provider 42 of the server at the given address,
 * then shuts the server down.
 *
 *   alpha_client <server address>
 */
#include "alpha-client.h"

#include <stdio.h>
#include <string.h>

int
main(int argc, char **argv)
{
    char proto[64];
    const char *sep;
    margo_instance_id mid;
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <server address>\n", argv[0]);
        return 2;
    }
    /* The client speaks the server's protocol: "ofi+tcp" of
     * "ofi+tcp://127.0.0.1:1234". */
    sep = strstr(argv[1], "://");
    snprintf(proto, sizeof(proto), "%.*s",
             sep ? (int) (sep - argv[1]) : (int) strlen(argv[1]), argv[1]);
    mid = margo_init(proto, MARGO_CLIENT_MODE, 0, 0);
    if (mid == MARGO_INSTANCE_NULL)
        return 1;
    rc = alpha_client_run(mid, argv[1], 42);
    margo_finalize(mid);
    return rc;
}
