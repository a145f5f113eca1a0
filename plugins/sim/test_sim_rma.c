/*
 * What is particular to the simulator's RMA and memory handles: a handle
 * of one node used against another node at the right key is refused, and
 * the handle's wire layout, field by field, against hostile bytes. The
 * RMA cases every plugin must pass are in tests/conformance/na_rma.c and
 * the hostile-bytes cases in tests/conformance/na_misc.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_sim.h"

/* A region of another node at the right key is refused: the key names a
 * region only together with its owner. */
void
test_rma_wrong_node(void **state)
{
    struct pair p;
    struct na_result r = {0};
    unsigned char local[8] = "abcdefg", remote[8] = {0};
    na_mem_handle_t lh, rh, rh_r;
    na_addr_t self;

    (void) state;
    pair_open(&p);
    lh = registered(p.a, local, 8, NA_MEM_READWRITE);
    rh = registered(p.b, remote, 8, NA_MEM_READWRITE);
    rh_r = ship_handle(&p, rh);
    na_op_id_t *op = NA_Op_create(p.a, 0);

    assert_int_equal(NA_Addr_self(p.a, &self), NA_SUCCESS);
    assert_int_equal(
        NA_Put(p.a, p.ca, na_record_cb, &r, lh, 0, rh_r, 0, 4, self, 0, op),
        NA_SUCCESS);
    pair_drive(&p, &r.calls, 1);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.ret, NA_ACCESS);
    for (int i = 0; i < 8; i++)
        assert_int_equal(remote[i], 0);

    NA_Addr_free(p.a, self);
    NA_Op_destroy(p.a, op);
    NA_Mem_handle_free(p.a, rh_r);
    NA_Mem_handle_free(p.b, rh);
    NA_Mem_handle_free(p.a, lh);
    pair_close(&p);
}

/* The wire layout of addresses and memory handles, field by field. */
void
test_wire_layout(void **state)
{
    na_class_t *c;
    na_addr_t addr, back;
    na_mem_handle_t h, back_h;
    unsigned char buf[256], mem[16];
    size_t size;

    (void) state;
    c = NA_Initialize("sim://decoder", true);
    assert_non_null(c);

    /* Address: a good round trip, then every way to break it. */
    assert_int_equal(NA_Addr_self(c, &addr), NA_SUCCESS);
    size = NA_Addr_get_serialize_size(c, addr);
    assert_true(size > 0 && size < sizeof(buf));
    assert_int_equal(NA_Addr_serialize(c, buf, size - 1, addr), NA_OVERFLOW);
    assert_int_equal(NA_Addr_serialize(c, buf, size, addr), NA_SUCCESS);
    assert_int_equal(NA_Addr_deserialize(c, &back, buf, size), NA_SUCCESS);
    assert_true(NA_Addr_cmp(c, addr, back));
    assert_true(NA_Addr_is_self(c, back));
    NA_Addr_free(c, back);
    for (size_t cut = 0; cut < size; cut++)
        assert_int_not_equal(NA_Addr_deserialize(c, &back, buf, cut),
                             NA_SUCCESS);
    buf[0] = 99;
    assert_int_equal(NA_Addr_deserialize(c, &back, buf, size),
                     NA_PROTOCOL_ERROR);
    buf[0] = 1;
    buf[1] = 200; /* name longer than the buffer */
    assert_int_not_equal(NA_Addr_deserialize(c, &back, buf, size), NA_SUCCESS);
    buf[1] = 0; /* empty name */
    assert_int_not_equal(NA_Addr_deserialize(c, &back, buf, size), NA_SUCCESS);
    buf[1] = 7;
    buf[2] = '/';
    assert_int_equal(NA_Addr_deserialize(c, &back, buf, size),
                     NA_PROTOCOL_ERROR);
    NA_Addr_free(c, addr);

    /* Memory handle. */
    struct na_segment segs[2] = {{(uint64_t) (uintptr_t) mem, 10},
                                 {(uint64_t) (uintptr_t) (mem + 10), 6}};
    assert_int_equal(
        NA_Mem_handle_create_segments(c, segs, 2, NA_MEM_READ_ONLY, &h),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c, h, NA_MEM_TYPE_HOST, 0), NA_SUCCESS);
    assert_int_equal(NA_Mem_register(c, h, NA_MEM_TYPE_HOST, 0), NA_EXIST);
    size = NA_Mem_handle_get_serialize_size(c, h);
    assert_true(size > 0 && size < sizeof(buf));
    assert_int_equal(NA_Mem_handle_serialize(c, buf, size, h), NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(c, &back_h, buf, size),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_get_serialize_size(c, back_h), size);
    /* A deserialized handle re-serializes to the same bytes. */
    {
        unsigned char again[256];

        assert_int_equal(NA_Mem_handle_serialize(c, again, size, back_h),
                         NA_SUCCESS);
        assert_memory_equal(again, buf, size);
    }
    /* It describes remote memory: it cannot be registered. */
    assert_int_equal(NA_Mem_register(c, back_h, NA_MEM_TYPE_HOST, 0),
                     NA_INVALID_ARG);
    NA_Mem_handle_free(c, back_h);
    for (size_t cut = 0; cut < size; cut++)
        assert_int_not_equal(NA_Mem_handle_deserialize(c, &back_h, buf, cut),
                             NA_SUCCESS);
    /* Layout: ver, flags, nlen, name[7], inc, key, total, count, lens. */
    size_t name_len = buf[2], tail = 3 + name_len;
    unsigned char bad[256];
    struct {
        size_t at;
        unsigned char val;
    } flips[] = {
        {0, 2},            /* version                  */
        {1, 0},            /* no access flags          */
        {1, 4},            /* unknown access flags     */
        {2, 0},            /* empty owner name         */
        {2, 255},          /* name past the end        */
        {3, ' '},          /* bad name character       */
        {tail + 16, 17},   /* total != sum of lengths  */
        {tail + 24, 0},    /* zero segments            */
        {tail + 24, 3},    /* more segments than bytes */
        {tail + 27, 0x80}, /* absurd segment count     */
        {tail + 28, 11},   /* lengths do not add up    */
        {tail + 35, 0xff}, /* a huge segment length    */
    };
    for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
        memcpy(bad, buf, size);
        bad[flips[i].at] = flips[i].val;
        assert_int_not_equal(NA_Mem_handle_deserialize(c, &back_h, bad, size),
                             NA_SUCCESS);
    }
    assert_int_equal(NA_Mem_deregister(c, h), NA_SUCCESS);
    NA_Mem_handle_free(c, h);
    assert_int_equal(
        NA_Mem_handle_create_segments(c, segs, 0, NA_MEM_READ_ONLY, &h),
        NA_INVALID_ARG);
    assert_int_equal(NA_Finalize(c), NA_SUCCESS);
}
