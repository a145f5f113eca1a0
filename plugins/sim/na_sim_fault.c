/*
 * Where faults will be injected.
 *
 * Every operation passes through two decision points: when it is posted
 * and when its event executes (a message reaching its destination, an RMA
 * reaching the remote region). The fault model of a later change (crash
 * and restart, partitions, receiver-not-ready, error completions, partial
 * RMA, revoked keys, post-time NA_AGAIN, latency tails, loss and
 * corruption) will make its decisions here, drawing from the world's PRNG
 * so that a seed replays them. Until then the fabric is perfect.
 */
#include "na_sim_internal.h"

static const struct na_sim_fault na_sim_no_fault = {
    .ret = NA_SUCCESS,
    .extra_delay = 0,
};

/* At post: a non-success ret refuses the post with that code (no
 * completion follows); extra_delay lengthens the trip to the peer. */
struct na_sim_fault
na_sim_fault_on_post(struct na_sim_world *world, const struct na_op_id *op)
{
    (void) world;
    (void) op;
    return na_sim_no_fault;
}

/* At delivery: a non-success ret completes the operation with that code
 * instead of delivering it; extra_delay is ignored. */
struct na_sim_fault
na_sim_fault_on_deliver(struct na_sim_world *world, const struct na_op_id *op)
{
    (void) world;
    (void) op;
    return na_sim_no_fault;
}
