/*
 * RMA and decoder tests of the simulated fabric: put and get across single
 * and multi-segment regions, every check a NIC makes (with guard bytes to
 * prove nothing outside a region moves), cancel in flight, and hostile
 * serialized addresses and memory handles.
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

#define GUARD 0xa5
#define GUARD_LEN 16

/* A buffer with guard bytes on both sides of `len` usable bytes. */
struct guarded {
    unsigned char raw[GUARD_LEN + 256 + GUARD_LEN];
    size_t len;
};

static unsigned char *
guarded_init(struct guarded *g, size_t len, unsigned char fill)
{
    assert_true(len <= 256);
    memset(g->raw, GUARD, sizeof(g->raw));
    g->len = len;
    memset(g->raw + GUARD_LEN, fill, len);
    return g->raw + GUARD_LEN;
}

static void
guarded_check(const struct guarded *g)
{
    for (size_t i = 0; i < GUARD_LEN; i++) {
        assert_int_equal(g->raw[i], GUARD);
        assert_int_equal(g->raw[GUARD_LEN + g->len + i], GUARD);
    }
}

/* Hand a's view of one of b's handles over, as bytes. */

static na_return_t
rma(struct pair *p, bool put, na_mem_handle_t local, na_offset_t loff,
    na_mem_handle_t remote, na_offset_t roff, size_t size)
{
    struct result r = {0};
    na_op_id_t *op = NA_Op_create(p->a, 0);
    na_return_t ret;

    ret = (put ? NA_Put : NA_Get)(p->a, p->ca, record_cb, &r, local, loff,
                                  remote, roff, size, p->a_to_b, 0, op);
    if (ret == NA_SUCCESS) {
        pair_drive(p, &r.calls, 1);
        assert_int_equal(r.calls, 1);
        assert_int_equal(r.type, put ? NA_CB_PUT : NA_CB_GET);
        ret = r.ret;
    }
    assert_int_equal(NA_Op_destroy(p->a, op), NA_SUCCESS);
    return ret;
}

void
test_rma_put_get(void **state)
{
    struct pair p;
    struct guarded lg, rg, seg[3];
    na_mem_handle_t lh, rh, rh_remote, mh, mh_remote;
    struct na_segment segs[3];

    (void) state;
    pair_open(&p);
    unsigned char *local = guarded_init(&lg, 64, 0);
    unsigned char *remote = guarded_init(&rg, 64, 0);

    for (int i = 0; i < 64; i++)
        local[i] = (unsigned char) i;
    lh = registered(p.a, local, 64, NA_MEM_READWRITE);
    rh = registered(p.b, remote, 64, NA_MEM_READWRITE);
    rh_remote = ship_handle(&p, rh);

    /* Put 32 bytes from local[8] to remote[16]. */
    assert_int_equal(rma(&p, true, lh, 8, rh_remote, 16, 32), NA_SUCCESS);
    for (int i = 0; i < 64; i++)
        assert_int_equal(remote[i], i >= 16 && i < 48 ? i - 8 : 0);
    guarded_check(&rg);
    /* Get it back into local[40..63] (24 bytes). */
    memset(local, 0, 64);
    assert_int_equal(rma(&p, false, lh, 40, rh_remote, 16, 24), NA_SUCCESS);
    for (int i = 0; i < 64; i++)
        assert_int_equal(local[i], i >= 40 ? i - 32 : 0);
    guarded_check(&lg);

    /* Multi-segment remote: three 20-byte segments; a 50-byte put at
     * offset 5 spans all of them. */
    for (int i = 0; i < 3; i++) {
        segs[i].base = (uint64_t) (uintptr_t) guarded_init(&seg[i], 20, 0);
        segs[i].len = 20;
    }
    assert_int_equal(
        NA_Mem_handle_create_segments(p.b, segs, 3, NA_MEM_READWRITE, &mh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(p.b, mh, NA_MEM_TYPE_HOST, 0), NA_SUCCESS);
    mh_remote = ship_handle(&p, mh);
    for (int i = 0; i < 64; i++)
        local[i] = (unsigned char) (100 + i);
    assert_int_equal(rma(&p, true, lh, 0, mh_remote, 5, 50), NA_SUCCESS);
    for (int s = 0; s < 3; s++) {
        const unsigned char *b =
            (const unsigned char *) (uintptr_t) segs[s].base;

        for (int i = 0; i < 20; i++) {
            int off = s * 20 + i;

            assert_int_equal(b[i], off >= 5 && off < 55 ? 100 + off - 5 : 0);
        }
        guarded_check(&seg[s]);
    }
    /* And read the whole 60 bytes back into local. */
    memset(local, 0, 64);
    assert_int_equal(rma(&p, false, lh, 4, mh_remote, 0, 60), NA_SUCCESS);
    for (int i = 0; i < 60; i++)
        assert_int_equal(local[4 + i], i >= 5 && i < 55 ? 100 + i - 5 : 0);
    guarded_check(&lg);

    NA_Mem_handle_free(p.a, mh_remote);
    NA_Mem_handle_free(p.a, rh_remote);
    assert_int_equal(NA_Mem_deregister(p.b, mh), NA_SUCCESS);
    NA_Mem_handle_free(p.b, mh);
    assert_int_equal(NA_Mem_deregister(p.b, rh), NA_SUCCESS);
    NA_Mem_handle_free(p.b, rh);
    assert_int_equal(NA_Mem_deregister(p.a, lh), NA_SUCCESS);
    NA_Mem_handle_free(p.a, lh);
    pair_close(&p);
}

void
test_rma_violations(void **state)
{
    struct pair p;
    struct guarded lg, rg, rog, wog;
    na_mem_handle_t lh, unreg, rh, ro, wo, rh_r, ro_r, wo_r;
    unsigned char *local, *remote, *ronly, *wonly;

    (void) state;
    pair_open(&p);
    local = guarded_init(&lg, 32, 0x11);
    remote = guarded_init(&rg, 32, 0x22);
    ronly = guarded_init(&rog, 32, 0x33);
    wonly = guarded_init(&wog, 32, 0x44);
    lh = registered(p.a, local, 32, NA_MEM_READWRITE);
    assert_int_equal(
        NA_Mem_handle_create(p.a, local, 32, NA_MEM_READWRITE, &unreg),
        NA_SUCCESS);
    rh = registered(p.b, remote, 32, NA_MEM_READWRITE);
    ro = registered(p.b, ronly, 32, NA_MEM_READ_ONLY);
    wo = registered(p.b, wonly, 32, NA_MEM_WRITE_ONLY);
    rh_r = ship_handle(&p, rh);
    ro_r = ship_handle(&p, ro);
    wo_r = ship_handle(&p, wo);

    /* Bounds: NA_FAULT, on either side, including offset overflow. */
    assert_int_equal(rma(&p, true, lh, 0, rh_r, 16, 17), NA_FAULT);
    assert_int_equal(rma(&p, true, lh, 0, rh_r, 33, 0), NA_FAULT);
    assert_int_equal(rma(&p, true, lh, 0, rh_r, UINT64_MAX, 2), NA_FAULT);
    assert_int_equal(rma(&p, false, lh, 20, rh_r, 0, 13), NA_FAULT);
    assert_int_equal(rma(&p, false, lh, 0, rh_r, 0, SIZE_MAX), NA_FAULT);
    /* Permissions: the remote must grant write for put, read for get. */
    assert_int_equal(rma(&p, true, lh, 0, ro_r, 0, 8), NA_ACCESS);
    assert_int_equal(rma(&p, false, lh, 0, wo_r, 0, 8), NA_ACCESS);
    /* The allowed directions do work. */
    assert_int_equal(rma(&p, false, lh, 0, ro_r, 0, 4), NA_SUCCESS);
    assert_int_equal(rma(&p, true, lh, 0, wo_r, 0, 4), NA_SUCCESS);
    assert_memory_equal(local, "\x33\x33\x33\x33", 4);
    assert_memory_equal(wonly, "\x33\x33\x33\x33", 4);
    local[0] = local[1] = local[2] = local[3] = 0x11;
    wonly[0] = wonly[1] = wonly[2] = wonly[3] = 0x44;
    /* The local side must be registered, and be this node's. */
    assert_int_equal(rma(&p, true, unreg, 0, rh_r, 0, 4), NA_INVALID_ARG);
    assert_int_equal(rma(&p, true, rh_r, 0, rh_r, 0, 4), NA_INVALID_ARG);
    /* A deregistered remote region is gone: NA_ACCESS. */
    assert_int_equal(NA_Mem_deregister(p.b, rh), NA_SUCCESS);
    assert_int_equal(NA_Mem_deregister(p.b, rh), NA_INVALID_ARG);
    assert_int_equal(rma(&p, true, lh, 0, rh_r, 0, 4), NA_ACCESS);
    assert_int_equal(rma(&p, false, lh, 0, rh_r, 0, 4), NA_ACCESS);
    /* A region of another node at the right key is still refused. */
    assert_int_equal(NA_Mem_register(p.b, rh, NA_MEM_TYPE_HOST, 0), NA_SUCCESS);
    {
        struct result r = {0};
        na_op_id_t *op = NA_Op_create(p.a, 0);
        na_addr_t self;

        assert_int_equal(NA_Addr_self(p.a, &self), NA_SUCCESS);
        na_mem_handle_t fresh = ship_handle(&p, rh);
        assert_int_equal(
            NA_Put(p.a, p.ca, record_cb, &r, lh, 0, fresh, 0, 4, self, 0, op),
            NA_SUCCESS);
        pair_drive(&p, &r.calls, 1);
        assert_int_equal(r.ret, NA_ACCESS);
        NA_Mem_handle_free(p.a, fresh);
        NA_Addr_free(p.a, self);
        NA_Op_destroy(p.a, op);
    }

    /* Not a byte moved by any refused transfer. */
    for (int i = 0; i < 32; i++) {
        assert_int_equal(local[i], 0x11);
        assert_int_equal(remote[i], 0x22);
        assert_int_equal(ronly[i], 0x33);
        assert_int_equal(wonly[i], 0x44);
    }
    guarded_check(&lg);
    guarded_check(&rg);
    guarded_check(&rog);
    guarded_check(&wog);

    NA_Mem_handle_free(p.a, rh_r);
    NA_Mem_handle_free(p.a, ro_r);
    NA_Mem_handle_free(p.a, wo_r);
    /* Freeing registered handles deregisters them. */
    NA_Mem_handle_free(p.b, rh);
    NA_Mem_handle_free(p.b, ro);
    NA_Mem_handle_free(p.b, wo);
    NA_Mem_handle_free(p.a, unreg);
    NA_Mem_handle_free(p.a, lh);
    pair_close(&p);
}

void
test_cancel_rma_in_flight(void **state)
{
    struct pair p;
    struct result r = {0};
    unsigned char local[8] = "abcdefg", remote[8] = {0};
    na_mem_handle_t lh, rh, rh_r;

    (void) state;
    pair_open(&p);
    lh = registered(p.a, local, 8, NA_MEM_READWRITE);
    rh = registered(p.b, remote, 8, NA_MEM_READWRITE);
    rh_r = ship_handle(&p, rh);
    na_op_id_t *op = NA_Op_create(p.a, 0);

    assert_int_equal(
        NA_Put(p.a, p.ca, record_cb, &r, lh, 0, rh_r, 0, 8, p.a_to_b, 0, op),
        NA_SUCCESS);
    assert_int_equal(NA_Op_destroy(p.a, op), NA_BUSY);
    assert_int_equal(NA_Cancel(p.a, p.ca, op), NA_SUCCESS);
    pair_settle(&p);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.ret, NA_CANCELED);
    for (int i = 0; i < 8; i++)
        assert_int_equal(remote[i], 0);

    NA_Op_destroy(p.a, op);
    NA_Mem_handle_free(p.a, rh_r);
    NA_Mem_handle_free(p.b, rh);
    NA_Mem_handle_free(p.a, lh);
    pair_close(&p);
}

void
test_bad_serialized_input(void **state)
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
