/*
 * hg_sum_server [info-string]: serve HG_SUM_TOTAL_RPCS "sum" RPCs, then
 * exit. Prints "Server running at address <addr>" on stdout first.
 */
#include "hg_sum.h"

#include <stdio.h>

int
main(int argc, char **argv)
{
    const char *info = argc > 1 ? argv[1] : "tcp";
    struct hg_sum_server server;
    char addr_str[256];
    hg_size_t addr_size = sizeof(addr_str);
    hg_addr_t self;

    if (hg_sum_server_start(&server, info) != 0) {
        fprintf(stderr, "hg_sum_server: cannot start on %s\n", info);
        return 1;
    }
    if (HG_Addr_self(server.hg_class, &self) != HG_SUCCESS ||
        HG_Addr_to_string(server.hg_class, addr_str, &addr_size, self) !=
            HG_SUCCESS) {
        fprintf(stderr, "hg_sum_server: cannot get its own address\n");
        return 1;
    }
    HG_Addr_free(server.hg_class, self);
    printf("Server running at address %s\n", addr_str);
    fflush(stdout);

    while (!hg_sum_server_done(&server))
        hg_sum_progress_one(server.context, 100);
    /* Let the last response leave before the class goes. */
    for (int i = 0; i < 10; i++)
        hg_sum_progress_one(server.context, 10);
    return hg_sum_server_stop(&server) == 0 ? 0 : 1;
}
