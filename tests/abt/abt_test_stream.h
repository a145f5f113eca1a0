/*
 * The fixture of the abt tests that need one execution stream besides the
 * primary: ABT_init, then a FIFO_WAIT pool served by one new stream.
 */
#ifndef QS_ABT_TEST_STREAM_H
#define QS_ABT_TEST_STREAM_H

#include "abt.h"

/* 0 on success, -1 (cmocka's failed setup) otherwise. */
static inline int
abt_test_stream_setup(ABT_pool *pool, ABT_xstream *xs)
{
    if (ABT_init(0, NULL) != ABT_SUCCESS)
        return -1;
    if (ABT_pool_create_basic(ABT_POOL_FIFO_WAIT, ABT_POOL_ACCESS_MPMC,
                              ABT_FALSE, pool) != ABT_SUCCESS)
        return -1;
    return ABT_xstream_create_basic(ABT_SCHED_BASIC_WAIT, 1, pool,
                                    ABT_SCHED_CONFIG_NULL, xs) == ABT_SUCCESS
               ? 0
               : -1;
}

#endif /* QS_ABT_TEST_STREAM_H */
