/*
 * Conformance: the bulk layer (HG_Bulk_*), written once against the public
 * API and run on every plugin through the harness.
 *
 * Most cases go through CT_RPC_XFER: the client (origin) exposes a
 * segmented buffer holding a pattern or a sentinel, and the server (target)
 * runs one HG_Bulk_transfer as the request describes, then reports what its
 * callback saw and whether its own memory holds exactly the expected image.
 * The client checks its own memory after the response. Both checks are
 * byte-exact.
 */
#include "conformance/buf.h"
#include "conformance/harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((hg_size_t) 1024)
#define MiB (KiB * 1024)

/* What one CT_RPC_XFER request asks for. */
struct xfer_spec {
    hg_bulk_op_t op;
    int origin_layout;
    hg_size_t origin_size;
    hg_uint8_t origin_flags; /* 0: READ_ONLY for PULL, WRITE_ONLY for PUSH */
    int local_layout;
    hg_size_t local_size;
    hg_size_t origin_offset, local_offset, size;
    hg_uint8_t flags; /* CT_XFER_*                                  */
    uint32_t timeout_ms;
    uint32_t seed;
    int bind;        /* bind the origin handle before sending it   */
    int origin_free; /* the origin frees its handle once forwarded */
};

/* One request in flight, then its outcome. */
struct xfer_run {
    struct xfer_spec spec;
    struct ct_buf origin;
    hg_bulk_t bulk;
    hg_handle_t handle;
    struct ct_op op;
    ct_xfer_out_t out;       /* copied from the response                  */
    uint64_t origin_bad;     /* origin bytes that differ from the expected */
    uint64_t origin_first;   /* first such offset                         */
    uint64_t origin_touched; /* PUSH: origin bytes no longer the sentinel */
};

static const char *
spec_str(const struct xfer_spec *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s origin(layout %d, %llu B) local(layout %d, %llu B) "
             "origin_offset %llu local_offset %llu size %llu flags 0x%x",
             s->op == HG_BULK_PULL ? "PULL" : "PUSH", s->origin_layout,
             (unsigned long long) s->origin_size, s->local_layout,
             (unsigned long long) s->local_size,
             (unsigned long long) s->origin_offset,
             (unsigned long long) s->local_offset, (unsigned long long) s->size,
             s->flags);
    return buf;
}

static void
xfer_start(struct ct_env *env, struct xfer_run *r, const struct xfer_spec *s,
           int *done)
{
    ct_xfer_in_t in;
    hg_uint8_t flags = s->origin_flags;

    memset(r, 0, sizeof(*r));
    r->spec = *s;
    if (flags == 0)
        flags = s->op == HG_BULK_PULL ? HG_BULK_READ_ONLY : HG_BULK_WRITE_ONLY;
    assert_int_equal(ct_buf_alloc(&r->origin, s->origin_layout, s->origin_size),
                     0);
    if (s->op == HG_BULK_PULL)
        ct_buf_fill_pattern(&r->origin, s->seed);
    else
        ct_buf_fill(&r->origin, CT_SENTINEL_ORIGIN);
    assert_hg_ok(HG_Bulk_create(env->client, r->origin.count, r->origin.ptrs,
                                r->origin.sizes, flags, &r->bulk));
    if (s->bind)
        assert_hg_ok(HG_Bulk_bind(r->bulk, env->client_ctx));

    memset(&in, 0, sizeof(in));
    in.bulk = r->bulk;
    in.op = (uint8_t) s->op;
    in.local_layout = (uint8_t) s->local_layout;
    in.flags = s->flags | (s->bind ? CT_XFER_BIND : 0);
    in.seed = s->seed;
    in.local_size = s->local_size;
    in.origin_offset = s->origin_offset;
    in.local_offset = s->local_offset;
    in.size = s->size;
    in.timeout_ms = s->timeout_ms;

    r->op.env = env;
    r->op.out = &r->out;
    r->op.out_ret = HG_OTHER_ERROR;
    r->op.done = done;
    assert_hg_ok(HG_Create(env->client_ctx, env->server_addr, env->ids.xfer,
                           &r->handle));
    assert_hg_ok(HG_Forward(r->handle, ct_op_cb, &r->op, &in));
    if (s->origin_free) {
        assert_hg_ok(HG_Bulk_free(r->bulk));
        r->bulk = HG_BULK_NULL;
    }
}

/* After the response: record the outcome and release everything. */
static void
xfer_finish(struct xfer_run *r)
{
    const struct xfer_spec *s = &r->spec;
    char desc[256];

    if (r->op.calls != 1 || r->op.ret != HG_SUCCESS ||
        r->op.out_ret != HG_SUCCESS)
        fail_msg("%s: the RPC itself failed: %d callback(s), %s, output %s",
                 spec_str(s, desc, sizeof(desc)), r->op.calls,
                 HG_Error_to_string(r->op.ret),
                 HG_Error_to_string(r->op.out_ret));
    assert_hg_ok(HG_Free_output(r->handle, &r->out)); /* scalars stay */
    assert_hg_ok(HG_Destroy(r->handle));
    if (s->op == HG_BULK_PUSH) {
        r->origin_bad = ct_buf_check_image(
            &r->origin, CT_SENTINEL_ORIGIN, s->seed, s->origin_offset,
            s->local_offset, s->size, &r->origin_first);
        r->origin_touched = ct_buf_count_not(&r->origin, CT_SENTINEL_ORIGIN);
    } else {
        /* A pull never writes the origin: all of it still the pattern. */
        r->origin_bad = ct_buf_check_image(&r->origin, 0, s->seed, 0, 0,
                                           r->origin.total, &r->origin_first);
    }
    if (r->bulk != HG_BULK_NULL)
        assert_hg_ok(HG_Bulk_free(r->bulk));
    ct_buf_free(&r->origin);
}

static void
xfer_run(struct ct_env *env, struct xfer_run *r, const struct xfer_spec *s)
{
    int done = 0;

    xfer_start(env, r, s, &done);
    harness_run_until(env, &done, CT_WAIT_MS);
    xfer_finish(r);
}

/* The transfer happened, exactly once, and both memories are exact. */
static void
expect_ok(const struct xfer_run *r)
{
    const struct xfer_spec *s = &r->spec;
    char desc[256];

    spec_str(s, desc, sizeof(desc));
    if (r->out.call_ret != HG_SUCCESS)
        fail_msg("%s: HG_Bulk_transfer returned %s", desc,
                 HG_Error_to_string((hg_return_t) r->out.call_ret));
    if (r->out.cb_count != 1 || r->out.cb_ret != HG_SUCCESS)
        fail_msg("%s: %u callback(s), ret %s", desc, r->out.cb_count,
                 HG_Error_to_string((hg_return_t) r->out.cb_ret));
    if (r->out.cb_size != s->size)
        fail_msg("%s: callback reports size %llu", desc,
                 (unsigned long long) r->out.cb_size);
    if (s->op == HG_BULK_PULL && r->out.mismatches != 0)
        fail_msg("%s: %llu target byte(s) wrong, first at local offset %llu",
                 desc, (unsigned long long) r->out.mismatches,
                 (unsigned long long) r->out.first_mismatch);
    if (r->origin_bad != 0)
        fail_msg("%s: %llu origin byte(s) wrong, first at offset %llu", desc,
                 (unsigned long long) r->origin_bad,
                 (unsigned long long) r->origin_first);
}

/* The transfer was refused (at the post, or in its one callback) and
 * touched no memory on either side. */
static void
expect_refused(const struct xfer_run *r)
{
    const struct xfer_spec *s = &r->spec;
    char desc[256];

    spec_str(s, desc, sizeof(desc));
    if (r->out.call_ret == HG_SUCCESS) {
        if (r->out.cb_count != 1 || r->out.cb_ret == HG_SUCCESS)
            fail_msg("%s: accepted and completed with %s (%u callback(s)); "
                     "it must fail",
                     desc, HG_Error_to_string((hg_return_t) r->out.cb_ret),
                     r->out.cb_count);
    } else if (r->out.cb_count != 0) {
        fail_msg("%s: refused at the post yet its callback ran", desc);
    }
    if (s->op == HG_BULK_PULL && r->out.touched != 0)
        fail_msg("%s: refused, but %llu target byte(s) were written", desc,
                 (unsigned long long) r->out.touched);
    if (s->op == HG_BULK_PUSH && r->origin_touched != 0)
        fail_msg("%s: refused, but %llu origin byte(s) were written", desc,
                 (unsigned long long) r->origin_touched);
    if (s->op == HG_BULK_PULL && r->origin_bad != 0)
        fail_msg("%s: a pull modified the origin", desc);
}

static void
run_ok(struct ct_env *env, const struct xfer_spec *s)
{
    struct xfer_run r;

    xfer_run(env, &r, s);
    expect_ok(&r);
}

static void
run_refused(struct ct_env *env, const struct xfer_spec *s)
{
    struct xfer_run r;

    xfer_run(env, &r, s);
    expect_refused(&r);
}

static void
assert_no_server_duplicates(struct ct_env *env)
{
    ct_stats_out_t st;

    ct_server_stats(env, &st);
    assert_int_equal(st.bulk_cb_duplicates, 0);
    assert_int_equal(st.respond_errors, 0);
}

/* ---- seed 000: sum ------------------------------------------------------ */

static void
sum_case(struct ct_env *env, int32_t n, hg_uint8_t extra_flags)
{
    int32_t *values =
        (int32_t *) malloc((size_t) (n > 0 ? n : 1) * sizeof(int32_t));
    hg_size_t size = (hg_size_t) n * sizeof(int32_t);
    void *ptr = values;
    ct_sum_in_t in;
    ct_sum_out_t out;
    struct ct_op op = {0};
    hg_handle_t h;
    int64_t want = 0;
    int32_t i;

    assert_non_null(values);
    for (i = 0; i < n; i++) {
        values[i] = i * 3 - 7;
        want += values[i];
    }
    in.n = n;
    assert_hg_ok(HG_Bulk_create(env->client, 1, &ptr, &size,
                                HG_BULK_READ_ONLY | extra_flags, &in.bulk));
    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.sum, &h));
    op.out = &out;
    assert_hg_ok(ct_forward_wait(env, h, &in, &op));
    assert_hg_ok(op.out_ret);
    assert_hg_ret((hg_return_t) out.ret, HG_SUCCESS);
    assert_true(out.bulk_size == size);
    if (out.sum != want)
        fail_msg("sum of %d values: got %lld, want %lld", n,
                 (long long) out.sum, (long long) want);
    assert_hg_ok(HG_Free_output(h, &out));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    assert_hg_ok(HG_Bulk_free(in.bulk));
    free(values);
}

static void
test_sum(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;

    sum_case(env, 10, 0);     /* small enough to travel eagerly   */
    sum_case(env, 100000, 0); /* large: a real RMA pull          */
    sum_case(env, 10, HG_BULK_NO_EAGER);
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* ---- layouts, offsets, sizes -------------------------------------------- */

static void
test_contiguous(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec s = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_CONTIG,
        .origin_size = 4096,
        .local_layout = CT_LAYOUT_CONTIG,
        .local_size = 4096,
        .size = 4096,
        .seed = 1,
    };

    run_ok(env, &s);
    s.op = HG_BULK_PUSH;
    s.seed = 2;
    run_ok(env, &s);
    harness_finish(env);
}

/* Three uneven origin segments against five uneven local ones, both
 * directions, whole and partial ranges crossing segment boundaries. */
static void
test_segmented(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_size_t total = 10007;
    const hg_size_t ranges[][3] = {
        /* origin offset, local offset, size */
        {0, 0, total},     {1, 2, total - 3}, {777, 3001, 5003},
        {total - 1, 0, 1}, {0, total - 1, 1},
    };
    size_t i;
    int op;

    for (op = 0; op < 2; op++)
        for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
            struct xfer_spec s = {
                .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
                .origin_layout = CT_LAYOUT_3SEG,
                .origin_size = total,
                .local_layout = CT_LAYOUT_5SEG,
                .local_size = total,
                .origin_offset = ranges[i][0],
                .local_offset = ranges[i][1],
                .size = ranges[i][2],
                .seed = (uint32_t) (10 + i + 100 * op),
            };

            run_ok(env, &s);
            /* And the mirror layout. */
            s.origin_layout = CT_LAYOUT_5SEG;
            s.local_layout = CT_LAYOUT_3SEG;
            s.seed += 1000;
            run_ok(env, &s);
        }
    harness_finish(env);
}

/* Odd offsets and sizes, unequal buffer sizes, every layout pairing. */
static void
test_odd_offsets(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_size_t cases[][5] = {
        /* origin size, local size, origin offset, local offset, size */
        {1, 1, 0, 0, 1},
        {3, 5, 1, 3, 1},
        {97, 61, 13, 7, 47},
        {4099, 8191, 4098, 8190, 1},
        {12345, 777, 11111, 5, 771},
        {65537, 65539, 3, 5, 65531},
    };
    size_t i;
    int ol, ll, op;
    uint32_t seed = 500;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (op = 0; op < 2; op++)
            for (ol = 0; ol < CT_LAYOUT_MAX; ol++)
                for (ll = 0; ll < CT_LAYOUT_MAX; ll += 2) {
                    struct xfer_spec s = {
                        .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
                        .origin_layout = ol,
                        .origin_size = cases[i][0],
                        .local_layout = ll,
                        .local_size = cases[i][1],
                        .origin_offset = cases[i][2],
                        .local_offset = cases[i][3],
                        .size = cases[i][4],
                        .seed = seed++,
                    };

                    run_ok(env, &s);
                }
    harness_finish(env);
}

/* A zero-byte transfer moves nothing: either it is refused as an invalid
 * argument at the post (no callback), or it completes once with success. */
static void
test_zero_bytes(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    int op;

    for (op = 0; op < 2; op++) {
        struct xfer_spec s = {
            .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
            .origin_layout = CT_LAYOUT_3SEG,
            .origin_size = 100,
            .local_layout = CT_LAYOUT_CONTIG,
            .local_size = 100,
            .origin_offset = 10,
            .local_offset = 20,
            .size = 0,
            .seed = 77,
        };
        struct xfer_run r;

        xfer_run(env, &r, &s);
        if (r.out.call_ret == HG_SUCCESS) {
            assert_int_equal(r.out.cb_count, 1);
            assert_hg_ret((hg_return_t) r.out.cb_ret, HG_SUCCESS);
            assert_true(r.out.cb_size == 0);
        } else {
            assert_hg_ret((hg_return_t) r.out.call_ret, HG_INVALID_ARG);
            assert_int_equal(r.out.cb_count, 0);
        }
        if (s.op == HG_BULK_PULL)
            assert_true(r.out.touched == 0);
        else
            assert_true(r.origin_touched == 0);
        assert_true(r.origin_bad == 0);
    }
    harness_finish(env);
}

/* 64 MiB each way, byte-exact: large enough to be split into pieces by
 * the library on every plugin. */
static void
test_64mib(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec s = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_CONTIG,
        .origin_size = 64 * MiB,
        .local_layout = CT_LAYOUT_3SEG,
        .local_size = 64 * MiB,
        .size = 64 * MiB,
        .seed = 0x64,
    };

    run_ok(env, &s);
    s.op = HG_BULK_PUSH;
    s.origin_layout = CT_LAYOUT_3SEG;
    s.local_layout = CT_LAYOUT_CONTIG;
    s.seed = 0x65;
    run_ok(env, &s);
    harness_finish(env);
}

/* Seed 002's sub-range: 45 bytes from remote offset 3 into local offset
 * 13, the rest of the local buffer untouched. */
static void
test_thallium_subrange(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec s = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_CONTIG,
        .origin_size = 64,
        .local_layout = CT_LAYOUT_CONTIG,
        .local_size = 64,
        .origin_offset = 3,
        .local_offset = 13,
        .size = 45,
        .seed = 2,
    };

    run_ok(env, &s);
    /* The other direction, as `local >> remote(3,45).on(ep)` would do. */
    s.op = HG_BULK_PUSH;
    s.origin_flags = HG_BULK_READWRITE;
    run_ok(env, &s);
    harness_finish(env);
}

#define CT_XFER_MANY 64

/* Many requests, hence many target transfers, in flight at once, both
 * directions and several layouts; each completes once and exactly. */
static void
test_many_transfers(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_run *r = (struct xfer_run *) calloc(CT_XFER_MANY, sizeof(*r));
    int done = 0, i;

    assert_non_null(r);
    for (i = 0; i < CT_XFER_MANY; i++) {
        struct xfer_spec s = {
            .op = i % 2 ? HG_BULK_PUSH : HG_BULK_PULL,
            .origin_layout = i % CT_LAYOUT_MAX,
            .origin_size = 64 * KiB + (hg_size_t) i,
            .local_layout = (i / 2) % CT_LAYOUT_MAX,
            .local_size = 64 * KiB + (hg_size_t) i,
            .origin_offset = (hg_size_t) i,
            .local_offset = (hg_size_t) (i / 3),
            .size = 64 * KiB - (hg_size_t) i,
            .seed = 9000 + (uint32_t) i,
        };

        xfer_start(env, &r[i], &s, &done);
    }
    if (harness_try_run_until_count(env, &done, CT_XFER_MANY, CT_WAIT_MS) !=
        0) {
        char missing[CT_XFER_MANY * 8] = "";
        size_t len = 0;

        for (i = 0; i < CT_XFER_MANY && len + 8 < sizeof(missing); i++)
            if (r[i].op.calls == 0)
                len += (size_t) snprintf(missing + len, sizeof(missing) - len,
                                         " %d%c", i, i % 2 ? 'P' : 'G');
        fail_msg("%d of %d requests completed; still waiting for (P push, G "
                 "pull):%s",
                 done, CT_XFER_MANY, missing);
    }
    harness_settle(env, 20);
    for (i = 0; i < CT_XFER_MANY; i++) {
        xfer_finish(&r[i]);
        expect_ok(&r[i]);
    }
    free(r);
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* ---- refusals ----------------------------------------------------------- */

/* Access rights are enforced on both sides, for small (eager-eligible)
 * and large regions, and a refused transfer writes nothing. */
static void
test_permission_violations(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_size_t sizes[] = {100, 256 * KiB};
    size_t i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct xfer_spec s = {
            .origin_layout = CT_LAYOUT_CONTIG,
            .origin_size = sizes[i],
            .local_layout = CT_LAYOUT_CONTIG,
            .local_size = sizes[i],
            .size = sizes[i],
            .seed = 31,
        };

        /* Push into a read-only origin. */
        s.op = HG_BULK_PUSH;
        s.origin_flags = HG_BULK_READ_ONLY;
        run_refused(env, &s);
        /* Pull from a write-only origin. */
        s.op = HG_BULK_PULL;
        s.origin_flags = HG_BULK_WRITE_ONLY;
        run_refused(env, &s);
        /* Pull into a read-only local handle. */
        s.origin_flags = HG_BULK_READ_ONLY;
        s.flags = CT_XFER_LOCAL_WRONG;
        run_refused(env, &s);
        /* Push from a write-only local handle. */
        s.op = HG_BULK_PUSH;
        s.origin_flags = HG_BULK_WRITE_ONLY;
        run_refused(env, &s);
    }
    /* The server still transfers normally afterwards. */
    {
        struct xfer_spec ok = {
            .op = HG_BULK_PULL,
            .origin_layout = CT_LAYOUT_CONTIG,
            .origin_size = 100,
            .local_layout = CT_LAYOUT_CONTIG,
            .local_size = 100,
            .size = 100,
            .seed = 32,
        };
        run_ok(env, &ok);
    }
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* Ranges past either end, including ones whose end wraps around, are
 * refused and touch no memory. */
static void
test_bounds_violations(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    const hg_size_t total = 1000;
    const hg_size_t cases[][3] = {
        /* origin offset, local offset, size */
        {1, 0, total},          /* origin end + 1        */
        {0, 1, total},          /* local end + 1         */
        {total, 0, 1},          /* origin offset at end  */
        {0, total, 1},          /* local offset at end   */
        {0, 0, total + 1},      /* larger than both      */
        {UINT64_MAX - 2, 0, 4}, /* origin range wraps   */
        {0, UINT64_MAX - 2, 4}, /* local range wraps    */
        {5, 5, UINT64_MAX},     /* size wraps            */
    };
    size_t i;
    int op;

    for (op = 0; op < 2; op++)
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            struct xfer_spec s = {
                .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
                .origin_layout = CT_LAYOUT_3SEG,
                .origin_size = total,
                .local_layout = CT_LAYOUT_5SEG,
                .local_size = total,
                .origin_offset = cases[i][0],
                .local_offset = cases[i][1],
                .size = cases[i][2],
                .seed = 40 + (uint32_t) i,
            };

            run_refused(env, &s);
        }
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* ---- cancel, free in flight, timeouts ----------------------------------- */

/* Cancel a large transfer right after the target posted it: one callback,
 * HG_CANCELED or success; if it succeeded, the bytes are exact. */
static void
test_cancel_transfer(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    int op;

    for (op = 0; op < 2; op++) {
        struct xfer_spec s = {
            .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
            .origin_layout = CT_LAYOUT_3SEG,
            .origin_size = 8 * MiB,
            .local_layout = CT_LAYOUT_5SEG,
            .local_size = 8 * MiB,
            .size = 8 * MiB,
            .flags = CT_XFER_CANCEL,
            .seed = 55,
        };
        struct xfer_run r;

        xfer_run(env, &r, &s);
        assert_hg_ret((hg_return_t) r.out.call_ret, HG_SUCCESS);
        assert_hg_ret((hg_return_t) r.out.cancel_ret, HG_SUCCESS);
        assert_int_equal(r.out.cb_count, 1);
        fprintf(stderr, "cancelled %s completed with %s\n",
                s.op == HG_BULK_PULL ? "pull" : "push",
                HG_Error_to_string((hg_return_t) r.out.cb_ret));
        if (r.out.cb_ret == HG_SUCCESS)
            expect_ok(&r);
        else
            assert_hg_ret((hg_return_t) r.out.cb_ret, HG_CANCELED);
    }
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* run_ok() with the spec as a pull, then as a push; then the checks that
 * end a case. */
static void
run_ok_pull_and_push(struct ct_env *env, struct xfer_spec s)
{
    for (int op = 0; op < 2; op++) {
        s.op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH;
        run_ok(env, &s);
    }
    assert_no_server_duplicates(env);
    harness_finish(env);
}

/* The target frees both bulk handles right after posting: the transfer
 * holds its own references and completes exactly as it would have. */
static void
test_free_in_flight(void **state)
{
    struct xfer_spec s = {
        .origin_layout = CT_LAYOUT_5SEG,
        .origin_size = 1 * MiB + 3,
        .local_layout = CT_LAYOUT_3SEG,
        .local_size = 1 * MiB + 3,
        .origin_offset = 1,
        .local_offset = 2,
        .size = 1 * MiB,
        .flags = CT_XFER_FREE_EARLY,
        .seed = 66,
    };

    run_ok_pull_and_push((struct ct_env *) *state, s);
}

/* The origin frees its handle right after HG_Forward(), as an
 * asynchronous client that forgets its handle does: the handle stays
 * registered until the RPC that carries it completes, so the target's
 * transfer still finds the memory. */
static void
test_origin_frees_after_forward(void **state)
{
    struct xfer_spec s = {
        .origin_layout = CT_LAYOUT_5SEG,
        .origin_size = 64 * KiB + 5,
        .local_layout = CT_LAYOUT_3SEG,
        .local_size = 64 * KiB + 5,
        .origin_offset = 3,
        .local_offset = 1,
        .size = 64 * KiB,
        .seed = 67,
        .origin_free = 1,
    };

    run_ok_pull_and_push((struct ct_env *) *state, s);
}

/* A transfer with a deadline that does not pass works like any other. */
static void
test_timed_transfer(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec s = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_3SEG,
        .origin_size = 300 * KiB,
        .local_layout = CT_LAYOUT_CONTIG,
        .local_size = 300 * KiB,
        .size = 300 * KiB,
        .timeout_ms = 10000,
        .seed = 88,
    };

    run_ok(env, &s);
    harness_finish(env);
}

/*
 * A transfer whose deadline passes: on the simulated fabric a slow link
 * makes a 1 MiB pull take about a second of virtual time, so a 200 ms
 * deadline must end it with HG_TIMEOUT, exactly once, and the server must
 * go on working. Real fabrics cannot be slowed down on demand: the case
 * skips there.
 */
static void
test_transfer_timeout(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec s = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_CONTIG,
        .origin_size = 1 * MiB,
        .local_layout = CT_LAYOUT_CONTIG,
        .local_size = 1 * MiB,
        .size = 1 * MiB,
        .timeout_ms = 200,
        .seed = 99,
    };
    struct xfer_run r;
    uint64_t lat, bw, unused_lat, unused_bw;

    if (harness_sim_link_default(env, 1000, 1000000, &lat, &bw) != 0) {
        harness_finish(env);
        fprintf(stderr, "skip: %s cannot slow a link down on demand\n",
                env->info);
        skip();
    }
    xfer_run(env, &r, &s);
    assert_int_equal(
        harness_sim_link_default(env, lat, bw, &unused_lat, &unused_bw), 0);
    assert_hg_ret((hg_return_t) r.out.call_ret, HG_SUCCESS);
    assert_int_equal(r.out.cb_count, 1);
    assert_hg_ret((hg_return_t) r.out.cb_ret, HG_TIMEOUT);
    assert_true(r.origin_bad == 0);
    assert_no_server_duplicates(env);
    /* A normal transfer afterwards. */
    s.size = 4096;
    s.timeout_ms = 0;
    run_ok(env, &s);
    harness_finish(env);
}

/* mem exposed read-only on class `owner` (*exposed), and the descriptor as
 * class `to` gets it from a peer (*remote). HG_BULK_NO_EAGER, so the data
 * is not embedded: a pull from embedded data needs no peer. */
static void
expose_remote(hg_class_t *owner, hg_class_t *to, struct ct_buf *mem,
              hg_bulk_t *exposed, hg_bulk_t *remote)
{
    hg_size_t ser_size;
    void *ser;

    assert_hg_ok(HG_Bulk_create(owner, 1, mem->ptrs, mem->sizes,
                                HG_BULK_READ_ONLY | HG_BULK_NO_EAGER, exposed));
    ser_size = HG_Bulk_get_serialize_size(*exposed, HG_FALSE);
    assert_true(ser_size > 0);
    ser = malloc((size_t) ser_size);
    assert_non_null(ser);
    assert_hg_ok(HG_Bulk_serialize(ser, ser_size, HG_FALSE, *exposed));
    assert_hg_ok(HG_Bulk_deserialize(to, remote, ser, ser_size));
    free(ser);
}

/* A transfer to a peer that does not exist: exactly one callback, with an
 * error or HG_TIMEOUT (or a refusal at the post), never success. */
static void
test_transfer_unreachable(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf mem, local;
    hg_bulk_t exposed, remote, lbulk;
    hg_addr_t nobody;
    struct ct_op op = {0};
    hg_return_t ret;
    char name[128];

    harness_unreachable_name(env, name, sizeof(name));
    assert_hg_ok(HG_Addr_lookup(env->client, name, &nobody));

    assert_int_equal(ct_buf_alloc(&mem, CT_LAYOUT_CONTIG, 4096), 0);
    ct_buf_fill_pattern(&mem, 3);
    expose_remote(env->client, env->client, &mem, &exposed, &remote);

    assert_int_equal(ct_buf_alloc(&local, CT_LAYOUT_CONTIG, 4096), 0);
    ct_buf_fill(&local, CT_SENTINEL_TARGET);
    assert_hg_ok(HG_Bulk_create(env->client, 1, local.ptrs, local.sizes,
                                HG_BULK_WRITE_ONLY, &lbulk));
    op.env = env;
    ret = HG_Bulk_transfer_timed(env->client_ctx, ct_op_cb, &op, HG_BULK_PULL,
                                 nobody, remote, 0, lbulk, 0, 4096, 200,
                                 HG_OP_ID_IGNORE);
    if (ret == HG_SUCCESS) {
        harness_run_until(env, &op.calls, CT_WAIT_MS);
        if (op.ret == HG_SUCCESS)
            fail_msg("a pull from %s, where nothing listens, succeeded", name);
        assert_int_equal(op.type, HG_CB_BULK);
        ct_assert_once(env, &op);
    } else {
        assert_int_equal(op.calls, 0);
    }
    assert_true(ct_buf_count_not(&local, CT_SENTINEL_TARGET) == 0);

    assert_hg_ok(HG_Bulk_free(lbulk));
    assert_hg_ok(HG_Bulk_free(remote));
    assert_hg_ok(HG_Bulk_free(exposed));
    assert_hg_ok(HG_Addr_free(env->client, nobody));
    ct_buf_free(&local);
    ct_buf_free(&mem);
    harness_finish(env);
}

/*
 * A pull from a peer that is alive but never progresses, with a deadline.
 * Where the transport needs the target's progress to serve it (native tcp
 * emulates RMA on the stream; na+sm and libfabric's tcp and shm providers
 * first need the target to take the connection), nothing but the deadline
 * ends the transfer: it must call back once with HG_TIMEOUT, soon after
 * the deadline, and leave the local buffer untouched. Where it is served
 * without the target (the simulated fabric's one-sided RMA, libfabric's
 * sockets provider and its own progress thread) it may instead succeed;
 * then every byte must have arrived. The case prints which it was.
 */
static void
test_transfer_deadline_silent_peer(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf mem, local;
    hg_class_t *silent;
    hg_context_t *silent_ctx;
    hg_bulk_t exposed, remote, lbulk;
    hg_addr_t self, peer;
    struct ct_op op = {0};
    hg_size_t str_size = 0;
    uint64_t waited_ms;
    char name[128], *str;

    harness_class_name(env, "silent", name, sizeof(name));
    silent = HG_Init(name, HG_TRUE);
    assert_non_null(silent);
    silent_ctx = HG_Context_create(silent); /* never progressed */
    assert_non_null(silent_ctx);
    assert_hg_ok(HG_Addr_self(silent, &self));
    assert_hg_ok(HG_Addr_to_string(silent, NULL, &str_size, self));
    str = malloc((size_t) str_size);
    assert_non_null(str);
    assert_hg_ok(HG_Addr_to_string(silent, str, &str_size, self));
    assert_hg_ok(HG_Addr_lookup(env->client, str, &peer));
    free(str);

    assert_int_equal(ct_buf_alloc(&mem, CT_LAYOUT_CONTIG, 64 * KiB), 0);
    ct_buf_fill_pattern(&mem, 5);
    expose_remote(silent, env->client, &mem, &exposed, &remote);

    assert_int_equal(ct_buf_alloc(&local, CT_LAYOUT_CONTIG, 64 * KiB), 0);
    ct_buf_fill(&local, CT_SENTINEL_TARGET);
    assert_hg_ok(HG_Bulk_create(env->client, 1, local.ptrs, local.sizes,
                                HG_BULK_WRITE_ONLY, &lbulk));
    op.env = env;
    assert_hg_ok(HG_Bulk_transfer_timed(env->client_ctx, ct_op_cb, &op,
                                        HG_BULK_PULL, peer, remote, 0, lbulk, 0,
                                        64 * KiB, 200, HG_OP_ID_IGNORE));
    waited_ms = harness_run_until(env, &op.calls, CT_WAIT_MS);
    assert_int_equal(op.type, HG_CB_BULK);
    ct_assert_once(env, &op);
    if (op.ret == HG_SUCCESS) {
        assert_true(ct_buf_check_image(&local, CT_SENTINEL_TARGET, 5, 0, 0,
                                       64 * KiB, NULL) == 0);
    } else {
        assert_hg_ret(op.ret, HG_TIMEOUT);
        /* The deadline ended it, not a failure of the link or a bound of
         * the transport's own. */
        if (waited_ms < 100 || waited_ms > 10000)
            fail_msg("the 200 ms pull ended with HG_TIMEOUT after %" PRIu64
                     " ms",
                     waited_ms);
        assert_true(ct_buf_count_not(&local, CT_SENTINEL_TARGET) == 0);
    }
    fprintf(stderr,
            "silent peer: the pull ended with %s after %" PRIu64 " ms\n",
            HG_Error_to_string(op.ret), waited_ms);

    assert_hg_ok(HG_Bulk_free(lbulk));
    assert_hg_ok(HG_Bulk_free(remote));
    assert_hg_ok(HG_Bulk_free(exposed));
    assert_hg_ok(HG_Addr_free(env->client, peer));
    assert_hg_ok(HG_Addr_free(silent, self));
    assert_hg_ok(HG_Context_destroy(silent_ctx));
    assert_hg_ok(HG_Finalize(silent));
    ct_buf_free(&local);
    ct_buf_free(&mem);
    harness_finish(env);
}

/* ---- large RPC arguments (overflow through bulk) ------------------------ */

static void
big_case(struct ct_env *env, size_t len)
{
    ct_big_in_t in;
    ct_big_out_t out;
    struct ct_op op = {0};
    hg_handle_t h;
    size_t i;

    in.text = (char *) malloc(len + 1);
    in.blob.len = len;
    in.blob.data = (uint8_t *) malloc(len + 1);
    assert_non_null(in.text);
    assert_non_null(in.blob.data);
    for (i = 0; i < len; i++) {
        in.text[i] = (char) ('a' + (i * 7 + i / 26) % 26);
        in.blob.data[i] = ct_pattern(1234, i);
    }
    in.text[len] = '\0';

    assert_hg_ok(
        HG_Create(env->client_ctx, env->server_addr, env->ids.big, &h));
    memset(&out, 0, sizeof(out));
    op.out = &out;
    assert_hg_ok(ct_forward_wait(env, h, &in, &op));
    assert_hg_ok(op.out_ret);
    assert_true(out.in_len == len);
    assert_true(out.blob.len == len);
    assert_non_null(out.text);
    assert_int_equal(strlen(out.text), len);
    for (i = 0; i < len; i++) {
        char want = (char) (in.text[i] == 'z' ? 'a' : in.text[i] + 1);

        if (out.text[i] != want)
            fail_msg("%zu-byte text: output byte %zu is wrong", len, i);
        if (out.blob.data[i] != (uint8_t) (in.blob.data[i] ^ CT_BIG_XOR))
            fail_msg("%zu-byte blob: output byte %zu is wrong", len, i);
    }
    assert_hg_ok(HG_Free_output(h, &out));
    ct_assert_once(env, &op);
    assert_hg_ok(HG_Destroy(h));
    free(in.text);
    free(in.blob.data);
}

/* 1 MiB of input and of output, far above the eager size: the user code
 * is the same as for ten bytes. */
static void
test_overflow_1mib(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;

    assert_true(HG_Class_get_input_eager_size(env->client) < MiB);
    assert_true(HG_Class_get_output_eager_size(env->client) < MiB);
    big_case(env, 10);
    big_case(env, (size_t) MiB);
    /* Just around the eager limit, where the two paths meet. */
    big_case(env, (size_t) HG_Class_get_input_eager_size(env->client) - 40);
    big_case(env, (size_t) HG_Class_get_input_eager_size(env->client));
    big_case(env, (size_t) MiB);
    harness_finish(env);
}

/* ---- eager on and off --------------------------------------------------- */

/* Run in two envs (default, and a client with no_bulk_eager): the results
 * must be identical. */
static void
test_eager_mode(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct xfer_spec small = {
        .op = HG_BULK_PULL,
        .origin_layout = CT_LAYOUT_3SEG,
        .origin_size = 100,
        .local_layout = CT_LAYOUT_CONTIG,
        .local_size = 100,
        .origin_offset = 7,
        .local_offset = 11,
        .size = 80,
        .seed = 123,
    };

    sum_case(env, 16, 0);
    run_ok(env, &small);
    small.origin_flags = HG_BULK_READ_ONLY | HG_BULK_NO_EAGER;
    run_ok(env, &small);
    /* Push into a small read-only origin: refused even when its bytes
     * travel inside the descriptor. */
    small.op = HG_BULK_PUSH;
    small.origin_flags = HG_BULK_READ_ONLY;
    run_refused(env, &small);
    big_case(env, 64 * 1024);
    harness_finish(env);
}

/* The same body with a client that never embeds bulk data. */
static void
test_eager_off(void **state)
{
    test_eager_mode(state);
}

/* ---- local API: access, serialize, bind --------------------------------- */

static void
test_bulk_access(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf b;
    hg_bulk_t bulk, mine;
    void *ptrs[8];
    hg_size_t sizes[8], len = 333;
    hg_uint32_t n = 0, i;

    assert_int_equal(ct_buf_alloc(&b, CT_LAYOUT_3SEG, 1000), 0);
    assert_hg_ok(HG_Bulk_create(env->client, b.count, b.ptrs, b.sizes,
                                HG_BULK_READWRITE, &bulk));
    assert_true(HG_Bulk_get_size(bulk) == 1000);
    assert_int_equal(HG_Bulk_get_segment_count(bulk), 3);
    assert_int_equal(HG_Bulk_get_flags(bulk) & HG_BULK_READWRITE,
                     HG_BULK_READWRITE);

    /* The whole range: the segments as given. */
    assert_hg_ok(
        HG_Bulk_access(bulk, 0, 1000, HG_BULK_READWRITE, 8, ptrs, sizes, &n));
    assert_int_equal(n, 3);
    for (i = 0; i < 3; i++) {
        assert_ptr_equal(ptrs[i], b.ptrs[i]);
        assert_true(sizes[i] == b.sizes[i]);
    }
    /* A range from inside the first segment to inside the second. */
    assert_hg_ok(HG_Bulk_access(bulk, b.sizes[0] - 5, 10, HG_BULK_READ_ONLY, 8,
                                ptrs, sizes, &n));
    assert_int_equal(n, 2);
    assert_ptr_equal(ptrs[0], (char *) b.ptrs[0] + b.sizes[0] - 5);
    assert_true(sizes[0] == 5);
    assert_ptr_equal(ptrs[1], b.ptrs[1]);
    assert_true(sizes[1] == 5);
    /* Fewer slots than segments: only as many are filled. */
    assert_hg_ok(
        HG_Bulk_access(bulk, 0, 1000, HG_BULK_READ_ONLY, 1, ptrs, sizes, &n));
    assert_int_equal(n, 1);
    assert_ptr_equal(ptrs[0], b.ptrs[0]);
    /* Size 0 or no slot: success, as in Mercury, with every output left
     * as it was (Mercury returns before writing any). */
    n = 77;
    ptrs[0] = &n;
    sizes[0] = 12345;
    assert_hg_ok(
        HG_Bulk_access(bulk, 0, 0, HG_BULK_READ_ONLY, 8, ptrs, sizes, &n));
    assert_int_equal(n, 77);
    assert_ptr_equal(ptrs[0], &n);
    assert_true(sizes[0] == 12345);
    assert_hg_ok(
        HG_Bulk_access(bulk, 0, 10, HG_BULK_READ_ONLY, 0, ptrs, sizes, &n));
    assert_int_equal(n, 77);
    assert_ptr_equal(ptrs[0], &n);
    assert_true(sizes[0] == 12345);
    /* Past the end. */
    assert_true(HG_Bulk_access(bulk, 990, 11, HG_BULK_READ_ONLY, 8, ptrs, sizes,
                               &n) != HG_SUCCESS);
    assert_hg_ok(HG_Bulk_free(bulk));

    /* Rights the handle does not have. */
    assert_hg_ok(HG_Bulk_create(env->client, b.count, b.ptrs, b.sizes,
                                HG_BULK_READ_ONLY, &bulk));
    assert_true(HG_Bulk_access(bulk, 0, 10, HG_BULK_READWRITE, 8, ptrs, sizes,
                               &n) != HG_SUCCESS);
    assert_hg_ok(HG_Bulk_free(bulk));

    /* Library-allocated memory: zeroed, writable, one segment. */
    assert_hg_ok(
        HG_Bulk_create(env->client, 1, NULL, &len, HG_BULK_READWRITE, &mine));
    assert_hg_ok(
        HG_Bulk_access(mine, 0, len, HG_BULK_READWRITE, 8, ptrs, sizes, &n));
    assert_int_equal(n, 1);
    assert_true(sizes[0] == len);
    for (i = 0; i < len; i++)
        assert_int_equal(((unsigned char *) ptrs[0])[i], 0);
    memset(ptrs[0], 0x42, (size_t) len);
    assert_hg_ok(HG_Bulk_ref_incr(mine));
    assert_hg_ok(HG_Bulk_free(mine));
    assert_true(HG_Bulk_get_size(mine) == len); /* one reference left */
    assert_hg_ok(HG_Bulk_free(mine));
    ct_buf_free(&b);
    harness_finish(env);
}

/* A descriptor survives serialization (with and without eager data), and
 * a local pull through the deserialized copy reads the original memory. */
static void
test_bulk_serialize(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf b, dst;
    hg_bulk_t bulk, copy, lbulk;
    hg_addr_t self;
    struct ct_op op = {0};
    hg_bool_t eager;
    void *ser;

    assert_int_equal(ct_buf_alloc(&b, CT_LAYOUT_5SEG, 777), 0);
    ct_buf_fill_pattern(&b, 17);
    assert_hg_ok(HG_Bulk_create(env->client, b.count, b.ptrs, b.sizes,
                                HG_BULK_READ_ONLY, &bulk));
    assert_hg_ok(HG_Addr_self(env->client, &self));

    for (eager = 0; eager < 2; eager++) {
        hg_size_t size = HG_Bulk_get_serialize_size(bulk, eager);
        uint64_t first;

        assert_true(size > 0);
        ser = malloc((size_t) size);
        assert_non_null(ser);
        /* Too small a buffer is refused. */
        assert_true(HG_Bulk_serialize(ser, size - 1, eager, bulk) !=
                    HG_SUCCESS);
        assert_hg_ok(HG_Bulk_serialize(ser, size, eager, bulk));
        assert_hg_ok(HG_Bulk_deserialize(env->client, &copy, ser, size));
        free(ser);
        assert_true(HG_Bulk_get_size(copy) == 777);
        assert_int_equal(HG_Bulk_get_segment_count(copy), b.count);
        assert_int_equal(HG_Bulk_get_flags(copy) & HG_BULK_READWRITE,
                         HG_BULK_READ_ONLY);

        assert_int_equal(ct_buf_alloc(&dst, CT_LAYOUT_CONTIG, 777), 0);
        ct_buf_fill(&dst, CT_SENTINEL_TARGET);
        assert_hg_ok(HG_Bulk_create(env->client, 1, dst.ptrs, dst.sizes,
                                    HG_BULK_WRITE_ONLY, &lbulk));
        op.calls = 0;
        op.env = env;
        assert_hg_ok(HG_Bulk_transfer(env->client_ctx, ct_op_cb, &op,
                                      HG_BULK_PULL, self, copy, 5, lbulk, 9,
                                      700, HG_OP_ID_IGNORE));
        harness_run_until(env, &op.calls, CT_WAIT_MS);
        assert_hg_ok(op.ret);
        ct_assert_once(env, &op);
        if (ct_buf_check_image(&dst, CT_SENTINEL_TARGET, 17, 9, 5, 700,
                               &first) != 0)
            fail_msg("pull through a deserialized descriptor (eager %d): "
                     "first wrong byte at %llu",
                     eager, (unsigned long long) first);
        assert_hg_ok(HG_Bulk_free(lbulk));
        ct_buf_free(&dst);
        assert_hg_ok(HG_Bulk_free(copy));
    }
    assert_hg_ok(HG_Addr_free(env->client, self));
    assert_hg_ok(HG_Bulk_free(bulk));
    ct_buf_free(&b);
    harness_finish(env);
}

/* Descriptors from the network are hostile: truncated, random and absurd
 * bytes are refused, and nothing is allocated (the leak check says so). */
static void
test_bulk_deserialize_junk(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf b;
    hg_bulk_t bulk, out;
    hg_size_t size, cut;
    unsigned char junk[512];
    uint64_t rng = 0x1234567887654321ULL;
    unsigned char *ser;
    int round;
    size_t i;

    assert_int_equal(ct_buf_alloc(&b, CT_LAYOUT_3SEG, 4000), 0);
    assert_hg_ok(HG_Bulk_create(env->client, b.count, b.ptrs, b.sizes,
                                HG_BULK_READWRITE, &bulk));
    size = HG_Bulk_get_serialize_size(bulk, HG_FALSE);
    ser = (unsigned char *) malloc((size_t) size);
    assert_non_null(ser);
    assert_hg_ok(HG_Bulk_serialize(ser, size, HG_FALSE, bulk));

    assert_hg_ret(HG_Bulk_deserialize(env->client, &out, NULL, size),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_deserialize(NULL, &out, ser, size), HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_deserialize(env->client, NULL, ser, size),
                  HG_INVALID_ARG);
    /* Every strict prefix of a valid descriptor. */
    for (cut = 0; cut < size; cut++) {
        out = HG_BULK_NULL;
        if (HG_Bulk_deserialize(env->client, &out, ser, cut) == HG_SUCCESS)
            fail_msg("a %llu-byte prefix of a %llu-byte descriptor was "
                     "accepted",
                     (unsigned long long) cut, (unsigned long long) size);
    }
    /* Random bytes, all zeros, all ones, and the valid descriptor with one
     * byte changed at a time: any answer but a crash or a leak is fine. */
    for (round = 0; round < 200; round++) {
        for (i = 0; i < sizeof(junk); i++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            junk[i] = (unsigned char) rng;
        }
        if (round == 0)
            memset(junk, 0, sizeof(junk));
        if (round == 1)
            memset(junk, 0xff, sizeof(junk));
        if (HG_Bulk_deserialize(env->client, &out, junk,
                                1 + rng % sizeof(junk)) == HG_SUCCESS)
            assert_hg_ok(HG_Bulk_free(out));
    }
    for (i = 0; i < (size_t) size; i++) {
        unsigned char saved = ser[i];

        ser[i] ^= 0xff;
        if (HG_Bulk_deserialize(env->client, &out, ser, size) == HG_SUCCESS)
            assert_hg_ok(HG_Bulk_free(out));
        ser[i] = saved;
    }
    free(ser);
    assert_hg_ok(HG_Bulk_free(bulk));
    ct_buf_free(&b);
    harness_finish(env);
}

/* A bound descriptor carries its address: the target uses
 * HG_Bulk_bind_transfer without naming the origin. */
static void
test_bulk_bind(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    struct ct_buf b;
    hg_bulk_t bulk;
    hg_addr_t self;
    int op;

    assert_int_equal(ct_buf_alloc(&b, CT_LAYOUT_CONTIG, 64), 0);
    assert_hg_ok(HG_Bulk_create(env->client, 1, b.ptrs, b.sizes,
                                HG_BULK_READ_ONLY, &bulk));
    assert_null(HG_Bulk_get_addr(bulk));
    assert_hg_ok(HG_Bulk_bind(bulk, env->client_ctx));
    assert_non_null(HG_Bulk_get_addr(bulk));
    assert_hg_ok(HG_Addr_self(env->client, &self));
    assert_true(HG_Addr_cmp(env->client, HG_Bulk_get_addr(bulk), self));
    assert_int_equal(HG_Bulk_get_context_id(bulk), 0);
    assert_hg_ok(HG_Addr_free(env->client, self));
    assert_hg_ok(HG_Bulk_free(bulk));
    ct_buf_free(&b);

    for (op = 0; op < 2; op++) {
        struct xfer_spec s = {
            .op = op == 0 ? HG_BULK_PULL : HG_BULK_PUSH,
            .origin_layout = CT_LAYOUT_3SEG,
            .origin_size = 50001,
            .local_layout = CT_LAYOUT_5SEG,
            .local_size = 50001,
            .origin_offset = 7,
            .local_offset = 1,
            .size = 49990,
            .seed = 202,
            .bind = 1,
        };

        run_ok(env, &s);
    }
    harness_finish(env);
}

static hg_return_t
never_called_cb(const struct hg_cb_info *info)
{
    (void) info;
    fail_msg("a refused bulk call ran its callback");
    return HG_SUCCESS;
}

static void
test_bulk_bad_args(void **state)
{
    struct ct_env *env = (struct ct_env *) *state;
    char mem[64];
    void *ptr = mem;
    hg_size_t len = sizeof(mem);
    hg_bulk_t a, b;
    hg_addr_t self;
    hg_return_t ret;

    assert_hg_ret(HG_Bulk_create(NULL, 1, &ptr, &len, HG_BULK_READ_ONLY, &a),
                  HG_INVALID_ARG);
    assert_hg_ret(
        HG_Bulk_create(env->client, 0, &ptr, &len, HG_BULK_READ_ONLY, &a),
        HG_INVALID_ARG);
    assert_hg_ret(
        HG_Bulk_create(env->client, 1, &ptr, NULL, HG_BULK_READ_ONLY, &a),
        HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_create(env->client, 1, &ptr, &len, 0, &a),
                  HG_INVALID_ARG);
    assert_hg_ret(
        HG_Bulk_create(env->client, 1, &ptr, &len, HG_BULK_READ_ONLY, NULL),
        HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_cancel(HG_OP_ID_NULL), HG_INVALID_ARG);
    ret = HG_Bulk_free(HG_BULK_NULL);
    assert_true(ret == HG_SUCCESS || ret == HG_INVALID_ARG);

    assert_hg_ok(
        HG_Bulk_create(env->client, 1, &ptr, &len, HG_BULK_READWRITE, &a));
    assert_hg_ok(
        HG_Bulk_create(env->client, 1, &ptr, &len, HG_BULK_READWRITE, &b));
    assert_hg_ok(HG_Addr_self(env->client, &self));
    assert_hg_ret(HG_Bulk_transfer(NULL, never_called_cb, NULL, HG_BULK_PULL,
                                   self, a, 0, b, 0, 8, HG_OP_ID_IGNORE),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_transfer(env->client_ctx, never_called_cb, NULL,
                                   HG_BULK_PULL, self, HG_BULK_NULL, 0, b, 0, 8,
                                   HG_OP_ID_IGNORE),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_transfer(env->client_ctx, never_called_cb, NULL,
                                   HG_BULK_PULL, self, a, 0, HG_BULK_NULL, 0, 8,
                                   HG_OP_ID_IGNORE),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_transfer(env->client_ctx, never_called_cb, NULL,
                                   (hg_bulk_op_t) 7, self, a, 0, b, 0, 8,
                                   HG_OP_ID_IGNORE),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_transfer(env->client_ctx, never_called_cb, NULL,
                                   HG_BULK_PULL, self, a, 60, b, 0, 8,
                                   HG_OP_ID_IGNORE),
                  HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_bind(HG_BULK_NULL, env->client_ctx), HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_bind(a, NULL), HG_INVALID_ARG);
    assert_hg_ret(HG_Bulk_access(HG_BULK_NULL, 0, 1, HG_BULK_READ_ONLY, 1, &ptr,
                                 &len, NULL),
                  HG_INVALID_ARG);
    /* Unbound origin in a bind transfer: nothing says where it lives. */
    assert_true(HG_Bulk_bind_transfer(env->client_ctx, never_called_cb, NULL,
                                      HG_BULK_PULL, a, 0, b, 0, 8,
                                      HG_OP_ID_IGNORE) != HG_SUCCESS);
    harness_settle(env, 5);
    assert_hg_ok(HG_Addr_free(env->client, self));
    assert_hg_ok(HG_Bulk_free(a));
    assert_hg_ok(HG_Bulk_free(b));
    harness_finish(env);
}

static struct ct_opts no_eager_opts;
/* test_64mib fills and checks 64 MiB inside its handler. In the coverage
 * build inside the Soft-RoCE guest, in one process, its thread stalled for
 * 10 s and the client ended the call with HG_HOSTUNREACH even with the
 * probe-answering thread and the late-timer rule (docs/architecture.md,
 * "Liveness"); the cause is not yet found, so the client probes every 60 s
 * here. The busy-server verdicts are tested by tests/ofi_faults
 * (busy_server_*) with the default rules. */
static struct ct_opts long_handler_opts;

int
main(int argc, char **argv)
{
    no_eager_opts.client_init = HG_INIT_INFO_INITIALIZER;
    no_eager_opts.client_init.no_bulk_eager = HG_TRUE;
    no_eager_opts.has_client_init = 1;
    long_handler_opts.client_init = HG_INIT_INFO_INITIALIZER;
    long_handler_opts.client_init.probe_interval_ms = 60000;
    long_handler_opts.has_client_init = 1;

    const struct CMUnitTest tests[] = {
        CT_TEST(test_sum),
        CT_TEST(test_contiguous),
        CT_TEST(test_segmented),
        CT_TEST(test_odd_offsets),
        CT_TEST(test_zero_bytes),
        CT_TEST_OPTS(test_64mib, &long_handler_opts),
        CT_TEST(test_thallium_subrange),
        CT_TEST(test_many_transfers),
        CT_TEST(test_permission_violations),
        CT_TEST(test_bounds_violations),
        CT_TEST(test_cancel_transfer),
        CT_TEST(test_free_in_flight),
        CT_TEST(test_origin_frees_after_forward),
        CT_TEST(test_timed_transfer),
        CT_TEST(test_transfer_timeout),
        CT_TEST(test_transfer_unreachable),
        CT_TEST(test_transfer_deadline_silent_peer),
        CT_TEST(test_overflow_1mib),
        CT_TEST(test_eager_mode),
        CT_TEST_OPTS(test_eager_off, &no_eager_opts),
        CT_TEST(test_bulk_access),
        CT_TEST(test_bulk_serialize),
        CT_TEST(test_bulk_deserialize_junk),
        CT_TEST(test_bulk_bind),
        CT_TEST(test_bulk_bad_args),
    };

    return harness_main(argc, argv, "bulk", tests,
                        sizeof(tests) / sizeof(tests[0]));
}
