/*
 * NA conformance, RMA: put and get in both directions, byte-exact with
 * guard bytes around every region; multi-segment regions where the plugin
 * offers them; every check a NIC makes (bounds, permissions, local handles
 * that are not registered or not local, stale and forged remote handles),
 * with not a byte moved by a refused transfer; cancel in flight; RMA to
 * the class's own address. See docs/conformance.md.
 */
#include "conformance/na_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 0xa5
#define GUARD_LEN 16

/* A buffer with guard bytes on both sides of `len` usable bytes. */
struct guarded {
    unsigned char *raw;
    size_t len;
};

static unsigned char *
guarded_init(struct guarded *g, size_t len, unsigned char fill)
{
    g->raw = malloc(len + 2 * GUARD_LEN);
    assert_non_null(g->raw);
    memset(g->raw, GUARD, len + 2 * GUARD_LEN);
    g->len = len;
    memset(g->raw + GUARD_LEN, fill, len);
    return g->raw + GUARD_LEN;
}

static void
guarded_check_free(struct guarded *g)
{
    for (size_t i = 0; i < GUARD_LEN; i++) {
        assert_int_equal(g->raw[i], GUARD);
        assert_int_equal(g->raw[GUARD_LEN + g->len + i], GUARD);
    }
    free(g->raw);
    g->raw = NULL;
}

/* One transfer from `cls` (the client or the server) to `target`; returns
 * the post's error or the completion's result, checking the callback ran
 * exactly once with the right type. */
static na_return_t
rma(struct na_env *env, bool from_server, bool put, na_mem_handle_t local,
    na_offset_t loff, na_mem_handle_t remote, na_offset_t roff, size_t size,
    na_addr_t target)
{
    na_class_t *cls = from_server ? env->srv : env->cli;
    na_context_t *ctx = from_server ? env->sctx : env->cctx;
    struct na_result r = {0};
    na_op_id_t *op = NA_Op_create(cls, 0);
    na_return_t ret;

    assert_non_null(op);
    ret = (put ? NA_Put : NA_Get)(cls, ctx, na_record_cb, &r, local, loff,
                                  remote, roff, size, target, 0, op);
    if (ret == NA_SUCCESS) {
        na_drive(env, &r.calls, 1);
        na_settle(env, 2);
        assert_int_equal(r.calls, 1);
        assert_int_equal(r.type, put ? NA_CB_PUT : NA_CB_GET);
        ret = r.ret;
    } else {
        na_settle(env, 2);
        assert_int_equal(r.calls, 0);
    }
    assert_na_ok(NA_Op_destroy(cls, op));
    return ret;
}

/* From the client to the server's memory. */
#define C2S(env, put, l, lo, r, ro, n)                                         \
    rma(env, false, put, l, lo, r, ro, n, (env)->srv_addr)

static void
free_remote(na_class_t *cls, na_mem_handle_t h)
{
    NA_Mem_handle_free(cls, h);
}

static void
free_local(na_class_t *cls, na_mem_handle_t h)
{
    assert_na_ok(NA_Mem_deregister(cls, h));
    NA_Mem_handle_free(cls, h);
}

/*
 * Put and get, byte-exact, in both directions: the client on the server's
 * memory and the server on the client's (through the address it learnt
 * from the client's message), small windows at odd offsets and 1 MiB.
 */
static void
test_put_get(void **state)
{
    struct na_env *env = *state;
    const size_t big = 1 << 20;
    struct guarded lg, rg, bl, br;
    unsigned char *local = guarded_init(&lg, 64, 0);
    unsigned char *remote = guarded_init(&rg, 64, 0);
    unsigned char *bigl = guarded_init(&bl, big, 0);
    unsigned char *bigr = guarded_init(&br, big, 0);
    na_mem_handle_t lh, rh, rh_r, blh, brh, brh_r, ch_r;

    for (int i = 0; i < 64; i++)
        local[i] = (unsigned char) i;
    lh = na_registered(env->cli, local, 64, NA_MEM_READWRITE);
    rh = na_registered(env->srv, remote, 64, NA_MEM_READWRITE);
    rh_r = na_ship_handle(env->srv, rh, env->cli);

    /* Put 32 bytes from local[8] to remote[16]. */
    assert_na_ok(C2S(env, true, lh, 8, rh_r, 16, 32));
    for (int i = 0; i < 64; i++)
        assert_int_equal(remote[i], i >= 16 && i < 48 ? i - 8 : 0);
    /* Get 24 of them back into local[40..63]. */
    memset(local, 0, 64);
    assert_na_ok(C2S(env, false, lh, 40, rh_r, 16, 24));
    for (int i = 0; i < 64; i++)
        assert_int_equal(local[i], i >= 40 ? i - 32 : 0);

    /* The server on the client's memory. */
    ch_r = na_ship_handle(env->cli, lh, env->srv);
    memset(remote, 0x77, 64);
    assert_na_ok(rma(env, true, true, rh, 1, ch_r, 2, 61, env->cli_addr));
    for (int i = 0; i < 64; i++)
        assert_int_equal(local[i],
                         i >= 2 && i < 63 ? 0x77 : (i >= 40 ? i - 32 : 0));
    memset(local, 0x55, 64);
    assert_na_ok(rma(env, true, false, rh, 0, ch_r, 63, 1, env->cli_addr));
    assert_int_equal(remote[0], 0x55);
    assert_int_equal(remote[1], 0x77);

    /* 1 MiB each way. */
    for (size_t i = 0; i < big; i++)
        bigl[i] = (unsigned char) (i * 7 + 1);
    blh = na_registered(env->cli, bigl, big, NA_MEM_READWRITE);
    brh = na_registered(env->srv, bigr, big, NA_MEM_READWRITE);
    brh_r = na_ship_handle(env->srv, brh, env->cli);
    assert_na_ok(C2S(env, true, blh, 0, brh_r, 0, big));
    assert_memory_equal(bigr, bigl, big);
    memset(bigl, 0, big);
    assert_na_ok(C2S(env, false, blh, 100, brh_r, 4096, 65536));
    assert_memory_equal(bigl + 100, bigr + 4096, 65536);
    assert_int_equal(bigl[99], 0);
    assert_int_equal(bigl[100 + 65536], 0);

    free_remote(env->srv, ch_r);
    free_remote(env->cli, rh_r);
    free_remote(env->cli, brh_r);
    free_local(env->srv, rh);
    free_local(env->srv, brh);
    free_local(env->cli, lh);
    free_local(env->cli, blh);
    guarded_check_free(&lg);
    guarded_check_free(&rg);
    guarded_check_free(&bl);
    guarded_check_free(&br);
    na_env_finish(env);
}

/* Multi-segment remote region: three 20-byte segments; a 50-byte put at
 * offset 5 spans all of them, and a get reads the 60 bytes back. */
static void
test_segments(void **state)
{
    struct na_env *env = *state;
    struct guarded lg, seg[3];
    struct na_segment segs[3];
    unsigned char *local = guarded_init(&lg, 64, 0);
    na_mem_handle_t lh, mh, mh_r;
    na_return_t ret;

    for (int i = 0; i < 3; i++) {
        segs[i].base = (uint64_t) (uintptr_t) guarded_init(&seg[i], 20, 0);
        segs[i].len = 20;
    }
    ret =
        NA_Mem_handle_create_segments(env->srv, segs, 3, NA_MEM_READWRITE, &mh);
    if (ret == NA_OPNOTSUPPORTED) {
        for (int i = 0; i < 3; i++)
            guarded_check_free(&seg[i]);
        guarded_check_free(&lg);
        na_env_finish(env);
        print_message("skip: %s offers no multi-segment memory handles "
                      "(NA_Mem_handle_create_segments: NA_OPNOTSUPPORTED)\n",
                      env->info);
        skip();
    }
    assert_na_ok(ret);
    assert_na_ret(
        NA_Mem_handle_create_segments(env->srv, segs, 0, NA_MEM_READWRITE, &lh),
        NA_INVALID_ARG);
    assert_na_ok(NA_Mem_register(env->srv, mh, NA_MEM_TYPE_HOST, 0));
    mh_r = na_ship_handle(env->srv, mh, env->cli);
    lh = na_registered(env->cli, local, 64, NA_MEM_READWRITE);
    for (int i = 0; i < 64; i++)
        local[i] = (unsigned char) (100 + i);
    assert_na_ok(C2S(env, true, lh, 0, mh_r, 5, 50));
    for (int s = 0; s < 3; s++) {
        const unsigned char *b =
            (const unsigned char *) (uintptr_t) segs[s].base;

        for (int i = 0; i < 20; i++) {
            int off = s * 20 + i;

            assert_int_equal(b[i], off >= 5 && off < 55 ? 100 + off - 5 : 0);
        }
    }
    memset(local, 0, 64);
    assert_na_ok(C2S(env, false, lh, 4, mh_r, 0, 60));
    for (int i = 0; i < 60; i++)
        assert_int_equal(local[4 + i], i >= 5 && i < 55 ? 100 + i - 5 : 0);
    /* Past the end of the last segment. */
    assert_int_not_equal(C2S(env, false, lh, 0, mh_r, 50, 11), NA_SUCCESS);

    free_remote(env->cli, mh_r);
    free_local(env->srv, mh);
    free_local(env->cli, lh);
    for (int i = 0; i < 3; i++)
        guarded_check_free(&seg[i]);
    guarded_check_free(&lg);
    na_env_finish(env);
}

/* A refused transfer: at post time or in its completion, with one of the
 * codes a NIC gives for that kind of fault. */
static void
refused(na_return_t got, na_return_t a, na_return_t b, const char *what)
{
    if (got != a && got != b)
        fail_msg("%s: got %s, want %s or %s", what, NA_Error_to_string(got),
                 NA_Error_to_string(a), NA_Error_to_string(b));
}

/*
 * Bounds and permissions: out-of-bounds windows on either side (including
 * offsets that overflow) fail with NA_FAULT or NA_INVALID_ARG, a put to a
 * read-only region or a get from a write-only one with NA_ACCESS or
 * NA_PERMISSION, a local handle that is not registered, or is another
 * class's, with NA_INVALID_ARG; the allowed directions work; not a byte
 * moves otherwise.
 */
static void
test_rma_violations(void **state)
{
    struct na_env *env = *state;
    struct guarded lg, rg, rog, wog;
    unsigned char *local = guarded_init(&lg, 32, 0x11);
    unsigned char *remote = guarded_init(&rg, 32, 0x22);
    unsigned char *ronly = guarded_init(&rog, 32, 0x33);
    unsigned char *wonly = guarded_init(&wog, 32, 0x44);
    na_mem_handle_t lh, unreg, rh, ro, wo, rh_r, ro_r, wo_r;

    lh = na_registered(env->cli, local, 32, NA_MEM_READWRITE);
    assert_na_ok(
        NA_Mem_handle_create(env->cli, local, 32, NA_MEM_READWRITE, &unreg));
    rh = na_registered(env->srv, remote, 32, NA_MEM_READWRITE);
    ro = na_registered(env->srv, ronly, 32, NA_MEM_READ_ONLY);
    wo = na_registered(env->srv, wonly, 32, NA_MEM_WRITE_ONLY);
    /* Registering twice: refused (NA_EXIST on the simulator,
     * NA_INVALID_ARG on ofi) or a no-op (verbs); the handle stays
     * registered once either way. */
    {
        na_return_t again = NA_Mem_register(env->srv, rh, NA_MEM_TYPE_HOST, 0);

        print_message("registering a handle twice: %s\n",
                      NA_Error_to_string(again));
        assert_true(again == NA_EXIST || again == NA_INVALID_ARG ||
                    again == NA_SUCCESS);
    }
    rh_r = na_ship_handle(env->srv, rh, env->cli);
    ro_r = na_ship_handle(env->srv, ro, env->cli);
    wo_r = na_ship_handle(env->srv, wo, env->cli);

    refused(C2S(env, true, lh, 0, rh_r, 16, 17), NA_FAULT, NA_INVALID_ARG,
            "put past the remote end");
    refused(C2S(env, true, lh, 0, rh_r, 33, 1), NA_FAULT, NA_INVALID_ARG,
            "put starting past the remote end");
    refused(C2S(env, true, lh, 0, rh_r, UINT64_MAX, 2), NA_FAULT,
            NA_INVALID_ARG, "put at an offset that overflows");
    refused(C2S(env, false, lh, 20, rh_r, 0, 13), NA_FAULT, NA_INVALID_ARG,
            "get past the local end");
    refused(C2S(env, false, lh, 0, rh_r, 0, SIZE_MAX), NA_FAULT, NA_INVALID_ARG,
            "get of SIZE_MAX bytes");
    refused(C2S(env, true, lh, 0, ro_r, 0, 8), NA_ACCESS, NA_PERMISSION,
            "put to a read-only region");
    refused(C2S(env, false, lh, 0, wo_r, 0, 8), NA_ACCESS, NA_PERMISSION,
            "get from a write-only region");
    /* The allowed directions work. */
    assert_na_ok(C2S(env, false, lh, 0, ro_r, 0, 4));
    assert_na_ok(C2S(env, true, lh, 0, wo_r, 0, 4));
    assert_memory_equal(local, "\x33\x33\x33\x33", 4);
    assert_memory_equal(wonly, "\x33\x33\x33\x33", 4);
    memset(local, 0x11, 4);
    memset(wonly, 0x44, 4);
    /* The local side must be this class's. */
    assert_na_ret(C2S(env, true, rh_r, 0, rh_r, 0, 4), NA_INVALID_ARG);

    /* Not a byte moved by any refused transfer. */
    for (int i = 0; i < 32; i++) {
        assert_int_equal(local[i], 0x11);
        assert_int_equal(remote[i], 0x22);
        assert_int_equal(ronly[i], 0x33);
        assert_int_equal(wonly[i], 0x44);
    }
    /* A local handle that was never registered: refused with
     * NA_INVALID_ARG (the simulator, which checks like a NIC that needs
     * local registration), or, on a provider that needs none (ofi's tcp
     * and sockets), the transfer moves exactly the right bytes. */
    {
        na_return_t ret = C2S(env, true, unreg, 0, rh_r, 4, 4);

        print_message("put from an unregistered local handle: %s\n",
                      NA_Error_to_string(ret));
        if (ret == NA_SUCCESS)
            assert_memory_equal(remote + 4, "\x11\x11\x11\x11", 4);
        else
            assert_na_ret(ret, NA_INVALID_ARG);
        assert_memory_equal(remote, "\x22\x22\x22\x22", 4);
        assert_int_equal(remote[8], 0x22);
    }
    free_remote(env->cli, rh_r);
    free_remote(env->cli, ro_r);
    free_remote(env->cli, wo_r);
    /* Freeing a registered handle deregisters it. */
    NA_Mem_handle_free(env->srv, rh);
    NA_Mem_handle_free(env->srv, ro);
    NA_Mem_handle_free(env->srv, wo);
    NA_Mem_handle_free(env->cli, unreg);
    free_local(env->cli, lh);
    guarded_check_free(&lg);
    guarded_check_free(&rg);
    guarded_check_free(&rog);
    guarded_check_free(&wog);
    na_env_finish(env);
}

/*
 * Stale and forged remote handles. A deregistered region is gone: both
 * directions are refused. A forged handle (the serialized bytes of a good
 * one with one byte changed, at every position) is refused when it is
 * deserialized, or the transfer fails, or the byte did not matter and the
 * transfer moves exactly the right bytes: it never reads or writes
 * anything else. A put through any forgery of a read-only region's handle
 * (one bit flipped, at every bit) never lands: the target refuses what
 * the origin's checks let through.
 */
static void
test_stale_and_forged(void **state)
{
    struct na_env *env = *state;
    struct guarded lg, rg, sg;
    unsigned char *local = guarded_init(&lg, 64, 0);
    unsigned char *remote = guarded_init(&rg, 64, 0);
    unsigned char *stale = guarded_init(&sg, 64, 0x5c);
    unsigned char ser[512];
    size_t size;
    na_mem_handle_t lh, rh, sh, sh_r, forged;
    int refused_decode = 0, refused_rma = 0, harmless = 0;
    na_return_t ret;

    for (int i = 0; i < 64; i++)
        remote[i] = (unsigned char) (i + 1);
    lh = na_registered(env->cli, local, 64, NA_MEM_READWRITE);
    rh = na_registered(env->srv, remote, 64, NA_MEM_READ_ONLY);
    sh = na_registered(env->srv, stale, 64, NA_MEM_READWRITE);
    sh_r = na_ship_handle(env->srv, sh, env->cli);

    assert_na_ok(C2S(env, false, lh, 0, sh_r, 0, 8));
    assert_na_ok(NA_Mem_deregister(env->srv, sh));
    /* Deregistering twice: NA_INVALID_ARG on the simulator, a no-op on
     * ofi; either way the region stays gone. */
    ret = NA_Mem_deregister(env->srv, sh);
    assert_true(ret == NA_SUCCESS || ret == NA_INVALID_ARG);
    memset(local, 0x99, 64);
    ret = C2S(env, true, lh, 0, sh_r, 0, 8);
    print_message("put to a deregistered region: %s\n",
                  NA_Error_to_string(ret));
    assert_int_not_equal(ret, NA_SUCCESS);
    ret = C2S(env, false, lh, 0, sh_r, 0, 8);
    print_message("get from a deregistered region: %s\n",
                  NA_Error_to_string(ret));
    assert_int_not_equal(ret, NA_SUCCESS);
    for (int i = 0; i < 64; i++) {
        assert_int_equal(stale[i], 0x5c);
        assert_int_equal(local[i], 0x99);
    }
    free_remote(env->cli, sh_r);
    NA_Mem_handle_free(env->srv, sh);

    size = NA_Mem_handle_get_serialize_size(env->srv, rh);
    assert_true(size > 0 && size <= sizeof(ser));
    assert_na_ok(NA_Mem_handle_serialize(env->srv, ser, size, rh));
    for (size_t at = 0; at < size; at++) {
        ser[at] ^= 0x5a;
        ret = NA_Mem_handle_deserialize(env->cli, &forged, ser, size);
        ser[at] ^= 0x5a;
        if (ret != NA_SUCCESS) {
            refused_decode++;
            continue;
        }
        memset(local, 0, 64);
        ret = C2S(env, false, lh, 0, forged, 0, 64);
        NA_Mem_handle_free(env->cli, forged);
        if (ret != NA_SUCCESS) {
            refused_rma++;
            for (int i = 0; i < 64; i++)
                assert_int_equal(local[i], 0);
        } else {
            harmless++;
            for (int i = 0; i < 64; i++)
                assert_int_equal(local[i], i + 1);
        }
    }
    print_message("forged handles (%zu byte positions): %d refused when "
                  "deserialized, %d refused by the transfer, %d harmless\n",
                  size, refused_decode, refused_rma, harmless);
    assert_true(refused_decode + refused_rma > 0);
    for (int i = 0; i < 64; i++)
        assert_int_equal(remote[i], i + 1);

    /* Puts through forged handles of the read-only region: every bit of
     * the serialized form flipped in turn, so some forgeries claim write
     * access and the origin's own check lets them through. The target
     * holds the truth: no put may land, whatever the handle says. */
    refused_decode = refused_rma = 0;
    memset(local, 0xee, 64);
    for (size_t at = 0; at < size * 8; at++) {
        ser[at / 8] ^= (unsigned char) (1u << (at % 8));
        ret = NA_Mem_handle_deserialize(env->cli, &forged, ser, size);
        ser[at / 8] ^= (unsigned char) (1u << (at % 8));
        if (ret != NA_SUCCESS) {
            refused_decode++;
            continue;
        }
        ret = C2S(env, true, lh, 0, forged, 0, 64);
        NA_Mem_handle_free(env->cli, forged);
        if (ret == NA_SUCCESS)
            fail_msg("a put through a handle forged at bit %zu landed in a "
                     "read-only region",
                     at);
        refused_rma++;
        for (int i = 0; i < 64; i++)
            assert_int_equal(remote[i], i + 1);
    }
    print_message("forged puts to a read-only region (%zu bits): %d refused "
                  "when deserialized, %d refused by the transfer\n",
                  size * 8, refused_decode, refused_rma);
    /* The target survived: a get through the genuine handle still works. */
    {
        na_mem_handle_t good;

        assert_na_ok(NA_Mem_handle_deserialize(env->cli, &good, ser, size));
        memset(local, 0, 64);
        assert_na_ok(C2S(env, false, lh, 0, good, 0, 64));
        NA_Mem_handle_free(env->cli, good);
        for (int i = 0; i < 64; i++)
            assert_int_equal(local[i], i + 1);
    }

    free_local(env->srv, rh);
    free_local(env->cli, lh);
    guarded_check_free(&lg);
    guarded_check_free(&rg);
    guarded_check_free(&sg);
    na_env_finish(env);
}

/*
 * Cancel of a transfer right after its post: the op is busy until its
 * callback ran; it completes exactly once, with NA_SUCCESS (the data
 * moved) or NA_CANCELED (nothing did).
 */
static void
test_cancel_rma(void **state)
{
    struct na_env *env = *state;
    unsigned char local[8] = "abcdefg", remote[8] = {0};
    struct na_result r = {0};
    na_mem_handle_t lh, rh, rh_r;
    na_op_id_t *op = NA_Op_create(env->cli, 0);

    lh = na_registered(env->cli, local, 8, NA_MEM_READWRITE);
    rh = na_registered(env->srv, remote, 8, NA_MEM_READWRITE);
    rh_r = na_ship_handle(env->srv, rh, env->cli);
    assert_na_ok(NA_Put(env->cli, env->cctx, na_record_cb, &r, lh, 0, rh_r, 0,
                        8, env->srv_addr, 0, op));
    assert_na_ret(NA_Op_destroy(env->cli, op), NA_BUSY);
    assert_na_ok(NA_Cancel(env->cli, env->cctx, op));
    na_drive(env, &r.calls, 1);
    print_message("put cancelled right after its post: %s\n",
                  NA_Error_to_string(r.ret));
    assert_true(r.ret == NA_SUCCESS || r.ret == NA_CANCELED);
    assert_int_equal(r.type, NA_CB_PUT);
    na_settle(env, 20);
    assert_int_equal(r.calls, 1);
    if (r.ret == NA_SUCCESS)
        assert_memory_equal(remote, local, 8);
    else
        for (int i = 0; i < 8; i++)
            assert_int_equal(remote[i], 0);
    assert_na_ok(NA_Cancel(env->cli, env->cctx, op));
    assert_na_ok(NA_Op_destroy(env->cli, op));
    free_remote(env->cli, rh_r);
    free_local(env->srv, rh);
    free_local(env->cli, lh);
    na_env_finish(env);
}

/*
 * A class that does not listen still talks to itself: messages and RMA to
 * its own address, with the same checks as to a peer.
 */
static void
test_self(void **state)
{
    struct na_env *env = *state;
    struct na_result rr = {0}, rs = {0};
    unsigned char src[512], dst[512], msg[32] = "to myself", in[32];
    na_mem_handle_t hs, hd, remote;
    na_op_id_t *op1 = NA_Op_create(env->cli, 0),
               *op2 = NA_Op_create(env->cli, 0);
    na_addr_t self;

    assert_na_ok(NA_Addr_self(env->cli, &self));
    assert_true(NA_Addr_is_self(env->cli, self));
    assert_na_ok(NA_Msg_recv_expected(env->cli, env->cctx, na_record_cb, &rr,
                                      in, sizeof(in), NULL, self, 0, 9, op1));
    assert_na_ok(NA_Msg_send_expected(env->cli, env->cctx, na_record_cb, &rs,
                                      msg, sizeof(msg), NULL, self, 0, 9, op2));
    assert_int_equal(rr.calls + rs.calls, 0);
    na_drive(env, &rr.calls, 1);
    na_drive(env, &rs.calls, 1);
    assert_na_ok(rr.ret);
    assert_na_ok(rs.ret);
    assert_memory_equal(in, msg, sizeof(msg));

    for (size_t i = 0; i < sizeof(src); i++) {
        src[i] = (unsigned char) (i ^ 0x3c);
        dst[i] = 0;
    }
    hs = na_registered(env->cli, src, sizeof(src), NA_MEM_READ_ONLY);
    hd = na_registered(env->cli, dst, sizeof(dst), NA_MEM_READWRITE);
    remote = na_ship_handle(env->cli, hd, env->cli);
    assert_na_ok(rma(env, false, true, hs, 10, remote, 20, 100, self));
    assert_memory_equal(dst + 20, src + 10, 100);
    assert_int_equal(dst[19], 0);
    assert_int_equal(dst[120], 0);
    /* After deregistration the region is gone, for the class too. */
    assert_na_ok(NA_Mem_deregister(env->cli, hd));
    assert_int_not_equal(rma(env, false, true, hs, 0, remote, 0, 8, self),
                         NA_SUCCESS);
    assert_int_equal(dst[0], 0);

    NA_Mem_handle_free(env->cli, remote);
    NA_Mem_handle_free(env->cli, hd);
    free_local(env->cli, hs);
    assert_na_ok(NA_Op_destroy(env->cli, op1));
    assert_na_ok(NA_Op_destroy(env->cli, op2));
    NA_Addr_free(env->cli, self);
    na_env_finish(env);
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        NA_TEST(test_put_get),        NA_TEST(test_segments),
        NA_TEST(test_rma_violations), NA_TEST(test_stale_and_forged),
        NA_TEST(test_cancel_rma),     NA_TEST(test_self),
    };

    return na_main(argc, argv, "na_rma", tests,
                   sizeof(tests) / sizeof(tests[0]));
}
