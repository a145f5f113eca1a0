/* The alpha client, written against Margo's documented API. */
#include "alpha-client.h"
#include "alpha-common.h"

#include <stdio.h>
#include <string.h>

static hg_id_t alpha_sum_id, alpha_stats_id;

void
alpha_client_register(margo_instance_id mid)
{
    alpha_sum_id =
        MARGO_REGISTER(mid, "alpha_sum", alpha_sum_in_t, alpha_sum_out_t, NULL);
    alpha_stats_id =
        MARGO_REGISTER(mid, "alpha_stats", void, alpha_stats_out_t, NULL);
}

hg_return_t
alpha_sum(margo_instance_id mid, hg_addr_t addr, uint16_t provider_id,
          int32_t x, int32_t y, int32_t *result)
{
    alpha_sum_in_t in = {x, y};
    alpha_sum_out_t out;
    hg_handle_t h;
    hg_return_t ret;

    ret = margo_create(mid, addr, alpha_sum_id, &h);
    if (ret != HG_SUCCESS)
        return ret;
    ret = margo_provider_forward(provider_id, h, &in);
    if (ret == HG_SUCCESS && (ret = margo_get_output(h, &out)) == HG_SUCCESS) {
        *result = out.result;
        margo_free_output(h, &out);
    }
    margo_destroy(h);
    return ret;
}

hg_return_t
alpha_stats(margo_instance_id mid, hg_addr_t addr, uint16_t provider_id,
            uint32_t *calls, uint32_t *ticks)
{
    alpha_stats_out_t out;
    hg_handle_t h;
    hg_return_t ret;

    ret = margo_create(mid, addr, alpha_stats_id, &h);
    if (ret != HG_SUCCESS)
        return ret;
    ret = margo_provider_forward_timed(provider_id, h, NULL, 10000);
    if (ret == HG_SUCCESS && (ret = margo_get_output(h, &out)) == HG_SUCCESS) {
        *calls = out.calls;
        *ticks = out.ticks;
        margo_free_output(h, &out);
    }
    margo_destroy(h);
    return ret;
}

int
alpha_client_run(margo_instance_id mid, const char *addr_str,
                 uint16_t provider_id)
{
    char identity[32];
    size_t size = sizeof(identity);
    uint32_t calls = 0, ticks = 0;
    int32_t result;
    hg_addr_t addr;
    int failures = 0;

    alpha_client_register(mid);
    if (margo_addr_lookup(mid, addr_str, &addr) != HG_SUCCESS) {
        fprintf(stderr, "alpha client: cannot look up %s\n", addr_str);
        return 1;
    }
    if (margo_provider_get_identity(mid, addr, provider_id, identity, &size) !=
            HG_SUCCESS ||
        strcmp(identity, "alpha") != 0) {
        fprintf(stderr, "alpha client: provider %u is not an alpha provider\n",
                (unsigned) provider_id);
        failures++;
    }
    for (int32_t i = 0; i < 4; i++) {
        if (alpha_sum(mid, addr, provider_id, i, 10 * i, &result) !=
                HG_SUCCESS ||
            result != 11 * i) {
            fprintf(stderr, "alpha client: sum %d failed\n", i);
            failures++;
            continue;
        }
        printf("alpha: %d + %d = %d\n", i, 10 * i, result);
    }
    /* A provider id nobody registered. */
    if (alpha_sum(mid, addr, provider_id + 1, 1, 1, &result) != HG_NOENTRY) {
        fprintf(stderr, "alpha client: unknown provider did not fail\n");
        failures++;
    }
    /* Let the heartbeat tick a few times (virtual time on the simulator). */
    margo_thread_sleep(mid, 500);
    if (alpha_stats(mid, addr, provider_id, &calls, &ticks) != HG_SUCCESS ||
        calls != 4) {
        fprintf(stderr, "alpha client: stats failed (calls %u)\n", calls);
        failures++;
    } else {
        printf("alpha: provider served %u sums, heartbeat ticked %s\n", calls,
               ticks > 0 ? "yes" : "no");
        if (ticks == 0)
            failures++;
    }
    if (margo_shutdown_remote_instance(mid, addr) != 0) {
        fprintf(stderr, "alpha client: remote shutdown refused\n");
        failures++;
    }
    margo_addr_free(mid, addr);
    if (failures == 0)
        printf("alpha client: done\n");
    return failures ? 1 : 0;
}
