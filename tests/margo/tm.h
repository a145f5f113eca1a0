/*
 * Shared by the Margo layer's tests (tests/margo): the plugin under test
 * (QS_TEST_INFO, the simulated fabric by default), a server and a client
 * instance in this process, and a few RPCs. Every test finalizes every
 * instance it made, so an AddressSanitizer build checks that nothing
 * leaks. On the simulator, runs are deterministic for the seed
 * (QS_SIM_SEED), which tm_main() prints at the start and on failure.
 */
#ifndef TM_H
#define TM_H

#include <margo.h>

#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define assert_hg_ret(got, want)                                               \
    do {                                                                       \
        hg_return_t tm_got_ = (got), tm_want_ = (want);                        \
        if (tm_got_ != tm_want_)                                               \
            fail_msg("%s: got %s (%d), want %s (%d)", #got,                    \
                     HG_Error_to_string(tm_got_), (int) tm_got_,               \
                     HG_Error_to_string(tm_want_), (int) tm_want_);            \
    } while (0)
#define assert_hg_ok(expr) assert_hg_ret((expr), HG_SUCCESS)

MERCURY_GEN_PROC(tm_add_in_t, ((int32_t) (a))((int32_t) (b)))
MERCURY_GEN_PROC(tm_add_out_t, ((int32_t) (sum)))
MERCURY_GEN_PROC(tm_sum_in_t, ((int32_t) (n))((hg_bulk_t) (bulk)))
MERCURY_GEN_PROC(tm_sum_out_t, ((int32_t) (ret)))

/* Real (monotonic) time in nanoseconds, for bounds on real time. */
uint64_t tm_real_ns(void);

/* The plugin's info string, and whether it is the simulator. */
const char *tm_info(void);
int tm_is_sim(void);

/* An address string for a new instance: "sim://<role>-<n>" on the
 * simulator, the info string itself elsewhere. */
void tm_addr_for(char *buf, size_t size, const char *role);

/* The look-up of mid's own address from `from`. */
hg_addr_t tm_lookup_self(margo_instance_id from, margo_instance_id mid);

/* Handlers: tm_add (a + b) and tm_sum (pulls n int32 from the client's
 * bulk handle and adds them up). */
DECLARE_MARGO_RPC_HANDLER(tm_add)
DECLARE_MARGO_RPC_HANDLER(tm_sum)

/* tm_where answers with the index (margo_find_pool_by_handle) of the pool
 * its handler runs from, -1 if it is not one of the instance's. */
MERCURY_GEN_PROC(tm_where_out_t, ((int32_t) (pool_index)))
DECLARE_MARGO_RPC_HANDLER(tm_where)

/* tm_sum's body with another way to pull the n values into local (which
 * must return HG_SUCCESS once they are there). */
typedef hg_return_t (*tm_pull_fn)(margo_instance_id mid, hg_addr_t addr,
                                  hg_bulk_t remote, hg_bulk_t local,
                                  hg_size_t size);
void tm_sum_with(hg_handle_t h, tm_pull_fn pull);

/* Forward tm_add / tm_sum through `id` and return the result. */
int32_t tm_call_add(margo_instance_id client, hg_addr_t addr, hg_id_t id,
                    int32_t a, int32_t b);
/* The same bounded at timeout_ms (0: no bound, as margo_forward()). */
int32_t tm_call_add_timed(margo_instance_id client, hg_addr_t addr, hg_id_t id,
                          int32_t a, int32_t b, double timeout_ms);
int32_t tm_call_sum(margo_instance_id client, hg_addr_t addr, hg_id_t id);
/* The tutorial's ten values add up to this. */
#define TM_SUM 36

/* Wait until *flag is non-zero: for work that runs on a pool's workers in
 * real time (the test's ctest timeout bounds it). */
void tm_wait_flag(atomic_int *flag);

/* Run the group, printing the plugin and seed. */
int tm_main(const char *name, const struct CMUnitTest *tests, size_t count);

#endif /* TM_H */
