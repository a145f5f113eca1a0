/*
 * The alpha provider: two RPCs, "alpha_sum" (x + y) and "alpha_stats" (how
 * many sums it served, how many times its heartbeat timer ticked),
 * registered under one provider id on one pool.
 */
#ifndef ALPHA_SERVER_H
#define ALPHA_SERVER_H

#include <margo.h>

typedef struct alpha_provider *alpha_provider_t;

/* Register a provider; it is destroyed by a finalize callback when the
 * instance shuts down. Returns 0, or -1 on error. */
int alpha_provider_register(margo_instance_id mid, uint16_t provider_id,
                            ABT_pool pool, alpha_provider_t *provider);

#endif
