/* The alpha provider, written against Margo's documented API. */
#include "alpha-server.h"
#include "alpha-common.h"

#include <margo-timer.h>

#include <stdio.h>
#include <stdlib.h>

struct alpha_provider {
    margo_instance_id mid;
    uint16_t provider_id;
    hg_id_t sum_id, stats_id;
    ABT_mutex lock; /* guards the counters */
    uint32_t calls, ticks;
    margo_timer_t heartbeat;
};

#define ALPHA_HEARTBEAT_MS 50.0

static void
alpha_heartbeat(void *arg)
{
    alpha_provider_t p = arg;

    ABT_mutex_lock(p->lock);
    p->ticks++;
    ABT_mutex_unlock(p->lock);
    margo_timer_start(p->heartbeat, ALPHA_HEARTBEAT_MS);
}

static void
alpha_sum_ult(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    alpha_provider_t p = margo_registered_data(mid, info->id);
    alpha_sum_in_t in;
    alpha_sum_out_t out = {0};

    if (margo_get_input(h, &in) == HG_SUCCESS) {
        out.result = in.x + in.y;
        margo_free_input(h, &in);
        ABT_mutex_lock(p->lock);
        p->calls++;
        ABT_mutex_unlock(p->lock);
    }
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(alpha_sum_ult)

static void
alpha_stats_ult(hg_handle_t h)
{
    margo_instance_id mid = margo_hg_handle_get_instance(h);
    const struct hg_info *info = margo_get_info(h);
    alpha_provider_t p = margo_registered_data(mid, info->id);
    alpha_stats_out_t out;

    ABT_mutex_lock(p->lock);
    out.calls = p->calls;
    out.ticks = p->ticks;
    ABT_mutex_unlock(p->lock);
    margo_respond(h, &out);
    margo_destroy(h);
}
DEFINE_MARGO_RPC_HANDLER(alpha_stats_ult)

static void
alpha_finalize_provider(void *arg)
{
    alpha_provider_t p = arg;

    margo_timer_destroy(p->heartbeat);
    margo_deregister(p->mid, p->sum_id);
    margo_deregister(p->mid, p->stats_id);
    ABT_mutex_free(&p->lock);
    printf("alpha provider %u: finalized after %u sums\n",
           (unsigned) p->provider_id, (unsigned) p->calls);
    fflush(stdout);
    free(p);
}

int
alpha_provider_register(margo_instance_id mid, uint16_t provider_id,
                        ABT_pool pool, alpha_provider_t *provider)
{
    alpha_provider_t p;
    hg_bool_t flag;

    margo_provider_registered_name(mid, "alpha_sum", provider_id, NULL, &flag);
    if (flag) {
        margo_error(mid, "alpha: provider %u already exists", provider_id);
        return -1;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        return -1;
    p->mid = mid;
    p->provider_id = provider_id;
    ABT_mutex_create(&p->lock);
    p->sum_id = MARGO_REGISTER_PROVIDER(mid, "alpha_sum", alpha_sum_in_t,
                                        alpha_sum_out_t, alpha_sum_ult,
                                        provider_id, pool);
    margo_register_data(mid, p->sum_id, p, NULL);
    p->stats_id =
        MARGO_REGISTER_PROVIDER(mid, "alpha_stats", void, alpha_stats_out_t,
                                alpha_stats_ult, provider_id, pool);
    margo_register_data(mid, p->stats_id, p, NULL);
    margo_provider_register_identity(mid, provider_id, "alpha");
    margo_timer_create_with_pool(mid, alpha_heartbeat, p, pool, &p->heartbeat);
    margo_timer_start(p->heartbeat, ALPHA_HEARTBEAT_MS);
    margo_provider_push_finalize_callback(mid, p, alpha_finalize_provider, p);
    *provider = p;
    return 0;
}
