/*
 * hg_sum_client <server address> [info-string]: send four "sum" RPCs and
 * print each response.
 */
#include "hg_sum.h"

#include <stdio.h>

static void
client_progress(void *arg)
{
    hg_sum_progress_one(arg, 100);
}

int
main(int argc, char **argv)
{
    struct hg_sum_client client;
    int32_t sum;
    int rc = 0;

    if (argc < 2) {
        fprintf(stderr, "Usage: %s <server address> [info-string]\n", argv[0]);
        return 1;
    }
    if (hg_sum_client_start(&client, argc > 2 ? argv[2] : "tcp", argv[1]) != 0)
        return 1;
    for (int i = 0; i < HG_SUM_RPCS_PER_CLIENT; i++) {
        if (hg_sum_client_call(&client, client_progress, client.context,
                               &sum) != 0) {
            rc = 1;
            break;
        }
        printf("Got response: %d\n", sum);
    }
    if (hg_sum_client_stop(&client) != 0)
        rc = 1;
    return rc;
}
