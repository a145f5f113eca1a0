/* The alpha service's client side. */
#ifndef ALPHA_CLIENT_H
#define ALPHA_CLIENT_H

#include <margo.h>

/* Register the client side of the RPCs on mid. */
void alpha_client_register(margo_instance_id mid);
/* x + y, computed by provider `provider_id` at `addr`. */
hg_return_t alpha_sum(margo_instance_id mid, hg_addr_t addr,
                      uint16_t provider_id, int32_t x, int32_t y,
                      int32_t *result);
/* The provider's counters. */
hg_return_t alpha_stats(margo_instance_id mid, hg_addr_t addr,
                        uint16_t provider_id, uint32_t *calls, uint32_t *ticks);
/* Register, then run the demo against the server at addr_str: sums,
 * stats, the provider's identity, and remote shutdown. Returns 0 on
 * success. */
int alpha_client_run(margo_instance_id mid, const char *addr_str,
                     uint16_t provider_id);

#endif
