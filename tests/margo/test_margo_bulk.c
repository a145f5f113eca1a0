/*
 * Margo bulk additions: margo_bulk_create_attr, margo_bulk_parallel_transfer
 * (in chunks, all in flight) and pools / pool sets of registered buffers.
 */
#include "tm.h"

#include <margo-bulk-pool.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static margo_instance_id
tb_init(void)
{
    char addr[64];
    margo_instance_id mid;

    tm_addr_for(addr, sizeof(addr), "bulk");
    mid = margo_init(addr, MARGO_SERVER_MODE, 0, 0);
    assert_non_null(mid);
    return mid;
}

static void
test_create_attr_and_parallel_transfer(void **state)
{
    enum { SIZE = 300000 };
    margo_instance_id mid = tb_init();
    struct hg_bulk_attr attr = {0};
    unsigned char *src = malloc(SIZE), *dst = calloc(1, SIZE);
    void *sp = src, *dp = dst;
    hg_size_t size = SIZE;
    hg_bulk_t a, b;
    hg_addr_t self;

    (void) state;
    for (size_t i = 0; i < SIZE; i++)
        src[i] = (unsigned char) (i * 7 + 3);
    attr.mem_type = HG_MEM_TYPE_HOST;
    assert_hg_ok(margo_bulk_create_attr(mid, 1, &sp, &size, HG_BULK_READ_ONLY,
                                        &attr, &a));
    assert_hg_ok(margo_bulk_create(mid, 1, &dp, &size, HG_BULK_WRITE_ONLY, &b));
    assert_int_equal(HG_Bulk_get_size(a), SIZE);
    attr.mem_type = HG_MEM_TYPE_CUDA;
    assert_hg_ret(margo_bulk_create_attr(mid, 1, &sp, &size, HG_BULK_READ_ONLY,
                                         &attr, &b),
                  HG_OPNOTSUPPORTED);
    assert_hg_ret(margo_bulk_create_attr(MARGO_INSTANCE_NULL, 1, &sp, &size,
                                         HG_BULK_READ_ONLY, &attr, &b),
                  HG_INVALID_ARG);

    assert_hg_ok(margo_addr_self(mid, &self));
    /* 300000 bytes in chunks of 32 KiB (the last one shorter). */
    assert_hg_ok(margo_bulk_parallel_transfer(mid, HG_BULK_PULL, self, a, 0, b,
                                              0, SIZE, 32768));
    assert_memory_equal(src, dst, SIZE);
    /* Offsets on both sides. */
    memset(dst, 0, SIZE);
    assert_hg_ok(margo_bulk_parallel_transfer(mid, HG_BULK_PULL, self, a, 100,
                                              b, 200, 5000, 999));
    assert_memory_equal(src + 100, dst + 200, 5000);
    assert_hg_ret(margo_bulk_parallel_transfer(mid, HG_BULK_PULL, self, a, 0, b,
                                               0, SIZE, 0),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_addr_free(mid, self));
    assert_hg_ok(margo_bulk_free(a));
    assert_hg_ok(margo_bulk_free(b));
    free(src);
    free(dst);
    margo_finalize(mid);
}

struct tb_waiter {
    margo_bulk_pool_t pool;
    hg_bulk_t got;
};

static void *
tb_get_main(void *arg)
{
    struct tb_waiter *w = arg;

    margo_bulk_pool_get(w->pool, &w->got);
    return NULL;
}

static void
test_bulk_pool(void **state)
{
    margo_instance_id mid = tb_init();
    margo_bulk_pool_t pool, other;
    hg_bulk_t got[3], extra;
    struct tb_waiter w;
    pthread_t t;

    (void) state;
    assert_hg_ok(
        margo_bulk_pool_create(mid, 3, 1024, HG_BULK_READWRITE, &pool));
    assert_hg_ok(margo_bulk_pool_create(mid, 1, 64, HG_BULK_READWRITE, &other));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(margo_bulk_pool_get(pool, &got[i]), 0);
        assert_non_null(got[i]);
        assert_int_equal(HG_Bulk_get_size(got[i]), 1024);
    }
    assert_int_equal(margo_bulk_pool_tryget(pool, &extra), 0);
    assert_null(extra);
    assert_int_equal(margo_bulk_pool_destroy(pool), -1); /* buffers out */
    /* A getter blocks until a buffer comes back. */
    w.pool = pool;
    w.got = HG_BULK_NULL;
    assert_int_equal(pthread_create(&t, NULL, tb_get_main, &w), 0);
    assert_int_equal(margo_bulk_pool_release(pool, got[1]), 0);
    pthread_join(t, NULL);
    assert_ptr_equal(w.got, got[1]);
    assert_int_equal(margo_bulk_pool_release(pool, w.got), 0);
    assert_int_equal(margo_bulk_pool_release(pool, w.got), -1); /* twice */
    assert_int_equal(margo_bulk_pool_tryget(other, &extra), 0);
    assert_int_equal(margo_bulk_pool_release(pool, extra), -1); /* foreign */
    assert_int_equal(margo_bulk_pool_release(other, extra), 0);
    assert_int_equal(margo_bulk_pool_release(pool, got[0]), 0);
    assert_int_equal(margo_bulk_pool_release(pool, got[2]), 0);
    assert_int_equal(margo_bulk_pool_destroy(pool), 0);
    assert_int_equal(margo_bulk_pool_destroy(other), 0);
    assert_hg_ret(margo_bulk_pool_create(mid, 0, 10, HG_BULK_READWRITE, &pool),
                  HG_INVALID_ARG);
    margo_finalize(mid);
}

static void
test_bulk_poolset(void **state)
{
    margo_instance_id mid = tb_init();
    margo_bulk_poolset_t set;
    hg_bulk_t b1, b2, b3, none;
    hg_size_t max = 0;

    (void) state;
    /* Buffer sizes 1024, 4096, 16384, two of each. */
    assert_hg_ok(
        margo_bulk_poolset_create(mid, 3, 2, 1024, 4, HG_BULK_READWRITE, &set));
    margo_bulk_poolset_get_max(set, &max);
    assert_int_equal(max, 16384);
    assert_int_equal(margo_bulk_poolset_get(set, 2000, &b1), 0);
    assert_int_equal(HG_Bulk_get_size(b1), 4096);
    assert_int_equal(margo_bulk_poolset_get(set, 4096, &b2), 0);
    assert_int_equal(HG_Bulk_get_size(b2), 4096);
    /* The 4096 pool is empty: only any_flag looks further. */
    assert_int_equal(margo_bulk_poolset_tryget(set, 3000, HG_FALSE, &none), 0);
    assert_null(none);
    assert_int_equal(margo_bulk_poolset_tryget(set, 3000, HG_TRUE, &b3), 0);
    assert_int_equal(HG_Bulk_get_size(b3), 16384);
    assert_int_equal(margo_bulk_poolset_get(set, 20000, &none), -1);
    assert_int_equal(margo_bulk_poolset_destroy(set), -1);
    assert_int_equal(margo_bulk_poolset_release(set, b1), 0);
    assert_int_equal(margo_bulk_poolset_release(set, b2), 0);
    assert_int_equal(margo_bulk_poolset_release(set, b3), 0);
    assert_int_equal(margo_bulk_poolset_destroy(set), 0);
    margo_finalize(mid);
}

static int tb_freed;
static void
tb_free(void *arg)
{
    (void) arg;
    tb_freed++;
}

/* The thin HG forwards and the request accessors. */
static void
test_wrappers_and_requests(void **state)
{
    margo_instance_id mid = tb_init();
    char data[64] = "payload", copy[64] = {0}, wire[256];
    void *ptr = data, *cptr = copy, *seg = NULL;
    hg_size_t size = sizeof(data), seg_size = 0;
    hg_uint32_t nseg = 0;
    hg_size_t wire_size;
    hg_bulk_t a, b, c;
    hg_addr_t self;
    hg_handle_t h;
    margo_request req;
    hg_id_t id;

    (void) state;
    assert_hg_ok(margo_bulk_create(mid, 1, &ptr, &size, HG_BULK_READWRITE, &a));
    assert_int_equal(margo_bulk_get_size(a), sizeof(data));
    assert_int_equal(margo_bulk_get_segment_count(a), 1);
    assert_hg_ok(margo_bulk_access(a, 0, size, HG_BULK_READWRITE, 1, &seg,
                                   &seg_size, &nseg));
    assert_ptr_equal(seg, data);
    assert_int_equal(nseg, 1);
    wire_size = margo_bulk_get_serialize_size(a, 0);
    assert_true(wire_size > 0 && wire_size <= sizeof(wire));
    assert_hg_ok(margo_bulk_serialize(wire, wire_size, 0, a));
    assert_hg_ok(margo_bulk_deserialize(mid, &b, wire, wire_size));
    assert_int_equal(margo_bulk_get_size(b), sizeof(data));
    assert_hg_ok(margo_bulk_ref_incr(a));
    assert_hg_ok(margo_bulk_free(a)); /* one reference left */
    assert_hg_ok(
        margo_bulk_create(mid, 1, &cptr, &size, HG_BULK_WRITE_ONLY, &c));
    assert_hg_ok(margo_addr_self(mid, &self));
    assert_hg_ok(
        margo_bulk_itransfer(mid, HG_BULK_PULL, self, b, 0, c, 0, size, &req));
    assert_int_equal(margo_request_get_type(req), MARGO_BULK_REQUEST);
    assert_ptr_equal(margo_request_get_instance(req), mid);
    assert_null(margo_request_get_handle(req));
    assert_hg_ok(margo_wait(req));
    assert_string_equal(copy, "payload");
    assert_int_equal(margo_request_get_type(MARGO_REQUEST_NULL),
                     MARGO_INVALID_REQUEST);

    /* Handle data, the handle's handler pool, the instance of an hg_info. */
    id = MARGO_REGISTER(mid, "tb_nothing", void, void, NULL);
    assert_hg_ok(margo_create(mid, self, id, &h));
    assert_hg_ok(margo_set_data(h, data, tb_free));
    assert_ptr_equal(margo_get_data(h), data);
    assert_ptr_equal(margo_hg_info_get_instance(margo_get_info(h)), mid);
    assert_non_null(margo_hg_handle_get_handler_pool(h));
    tb_freed = 0;
    assert_hg_ok(margo_destroy(h));
    assert_int_equal(tb_freed, 1);
    assert_null(margo_hg_info_get_instance(NULL));

    assert_hg_ok(margo_bulk_free(a));
    assert_hg_ok(margo_bulk_free(b));
    assert_hg_ok(margo_bulk_free(c));
    assert_hg_ret(margo_addr_set_remove(MARGO_INSTANCE_NULL, self),
                  HG_INVALID_ARG);
    assert_hg_ok(margo_addr_free(mid, self));
    margo_finalize(mid);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_attr_and_parallel_transfer),
        cmocka_unit_test(test_bulk_pool),
        cmocka_unit_test(test_bulk_poolset),
        cmocka_unit_test(test_wrappers_and_requests),
    };

    return tm_main("margo_bulk", tests, sizeof(tests) / sizeof(tests[0]));
}
