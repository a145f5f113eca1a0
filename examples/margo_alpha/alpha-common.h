/* The "alpha" service's RPC types, shared by its provider and client. */
#ifndef ALPHA_COMMON_H
#define ALPHA_COMMON_H

#include <margo.h>

MERCURY_GEN_PROC(alpha_sum_in_t, ((int32_t) (x))((int32_t) (y)))
MERCURY_GEN_PROC(alpha_sum_out_t, ((int32_t) (result)))
MERCURY_GEN_PROC(alpha_stats_out_t, ((uint32_t) (calls))((uint32_t) (ticks)))

#endif
