/*
 * The guards a hostile peer or an off-by-one would get past, each checked
 * by its exact result on the simulated fabric (docs/conformance.md,
 * "Planted bugs"): a descriptor whose segments do not add up to its total,
 * multi-segment copies at every offset, a transfer past a remote region,
 * a request without the configured payload checksum, an overflowed request
 * whose pulled bytes fail their checksum, a forged overflowed response
 * that announces too much or more than it exposes, expected messages
 * matched by the sender's context id, and liveness probes and answers
 * that are malformed or carry another cookie.
 *
 * The peers that misbehave are raw NA classes speaking the wire format
 * (docs/wire.md) by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bulk/hg_bulk_internal.h"
#include "hg/hg_header.h"
#include "mercury.h"
#include "mercury_bulk.h"
#include "mercury_macros.h"
#include "na_sim.h"
#include "util/qs_checksum.h"

MERCURY_GEN_PROC(gd_val_t, ((int32_t) (value)))

static int gd_handled;

static hg_return_t
gd_echo(hg_handle_t handle)
{
    gd_val_t in;

    gd_handled++;
    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    HG_Respond(handle, NULL, NULL, &in);
    HG_Free_input(handle, &in);
    return HG_Destroy(handle);
}

/* An HG class and a raw NA class, both on one simulated world. */
struct gd_env {
    hg_class_t *hg;
    hg_context_t *ctx;
    hg_id_t id;
    na_class_t *na;
    na_context_t *nctx;
    na_addr_t peer; /* the HG class, as the raw class sees it */
    na_op_id_t *op[2];
    int done[2];
    na_return_t ret[2];
    size_t got;
    na_addr_t source;
    na_tag_t tag;
};

static void
gd_cb(const struct na_cb_info *info)
{
    struct gd_env *e = info->arg;
    int k =
        info->type == NA_CB_SEND_UNEXPECTED || info->type == NA_CB_SEND_EXPECTED
            ? 0
            : 1;

    e->done[k]++;
    e->ret[k] = info->ret;
    if (info->ret != NA_SUCCESS)
        return;
    if (info->type == NA_CB_RECV_EXPECTED)
        e->got = info->info.recv_expected.actual_buf_size;
    if (info->type == NA_CB_RECV_UNEXPECTED) {
        e->got = info->info.recv_unexpected.actual_buf_size;
        e->source = info->info.recv_unexpected.source;
        e->tag = info->info.recv_unexpected.tag;
    }
}

static void
gd_open_probe(struct gd_env *e, hg_checksum_level_t level, unsigned probe_ms)
{
    struct hg_init_info info = HG_INIT_INFO_INITIALIZER;

    memset(e, 0, sizeof(*e));
    assert_int_equal(na_sim_set_seed(17), NA_SUCCESS);
    info.checksum_level = level;
    info.probe_interval_ms = probe_ms;
    e->hg = HG_Init_opt("sim://gd-hg", HG_TRUE, &info);
    assert_non_null(e->hg);
    e->ctx = HG_Context_create(e->hg);
    assert_non_null(e->ctx);
    e->id = MERCURY_REGISTER(e->hg, "gd_echo", gd_val_t, gd_val_t, gd_echo);
    e->na = NA_Initialize("sim://gd-raw", true);
    assert_non_null(e->na);
    e->nctx = NA_Context_create(e->na);
    assert_non_null(e->nctx);
    assert_int_equal(NA_Addr_lookup(e->na, "sim://gd-hg", &e->peer),
                     NA_SUCCESS);
    e->op[0] = NA_Op_create(e->na, 0);
    e->op[1] = NA_Op_create(e->na, 0);
    gd_handled = 0;
}

static void
gd_open(struct gd_env *e, hg_checksum_level_t level)
{
    gd_open_probe(e, level, 0);
}

static void
gd_close(struct gd_env *e)
{
    NA_Op_destroy(e->na, e->op[0]);
    NA_Op_destroy(e->na, e->op[1]);
    if (e->source != NA_ADDR_NULL)
        NA_Addr_free(e->na, e->source);
    NA_Addr_free(e->na, e->peer);
    assert_int_equal(NA_Context_destroy(e->na, e->nctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(e->na), NA_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->ctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->hg), HG_SUCCESS);
}

/* Progress both classes until *flag >= want (bounded). */
static void
gd_run(struct gd_env *e, const int *flag, int want)
{
    for (int i = 0; i < 2000 && *flag < want; i++) {
        NA_Poll(e->na, e->nctx, NULL);
        NA_Trigger(e->nctx, 16, NULL);
        HG_Progress(e->ctx, 1);
        HG_Trigger(e->ctx, 0, 16, NULL);
    }
    if (*flag < want)
        fail_msg("no completion after 2000 rounds");
}

/* A descriptor (docs/wire.md) of one region the raw class registered:
 * count 1, not bound (the peer pulls from the message's source). */
static size_t
gd_desc(struct gd_env *e, void *buf, size_t len, na_mem_handle_t *mh,
        uint8_t *out)
{
    size_t mh_size, n = 0;

    assert_int_equal(
        NA_Mem_handle_create(e->na, buf, len, NA_MEM_READ_ONLY, mh),
        NA_SUCCESS);
    assert_int_equal(NA_Mem_register(e->na, *mh, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    mh_size = NA_Mem_handle_get_serialize_size(e->na, *mh);
    memcpy(out, "QSBK", 4);
    out[4] = 1;                 /* version            */
    out[5] = HG_BULK_READ_ONLY; /* flags              */
    out[6] = out[7] = 0;        /* reserved           */
    n = 8;
    for (int i = 0; i < 4; i++)
        out[n++] = (uint8_t) (i == 0); /* count 1 */
    for (int i = 0; i < 8; i++)
        out[n++] = (uint8_t) ((uint64_t) len >> (8 * i)); /* total */
    for (int i = 0; i < 8; i++)
        out[n++] = (uint8_t) ((uint64_t) len >> (8 * i)); /* segment */
    for (int i = 0; i < 4; i++)
        out[n++] = (uint8_t) (mh_size >> (8 * i));
    assert_int_equal(NA_Mem_handle_serialize(e->na, out + n, mh_size, *mh),
                     NA_SUCCESS);
    return n + mh_size;
}

static void
gd_free_mh(struct gd_env *e, na_mem_handle_t mh)
{
    NA_Mem_deregister(e->na, mh);
    NA_Mem_handle_free(e->na, mh);
}

/* ---- bulk descriptors and copies ------------------------------------ */

/* Segment lengths must add up to the total exactly: more or less is a
 * malformed descriptor; so is one followed by bytes that are not its own. */
static void
test_desc_total(void **state)
{
    struct gd_env e;
    char a[5], b[7];
    void *bufs[2] = {a, b};
    hg_size_t sizes[2] = {sizeof(a), sizeof(b)};
    hg_bulk_t bulk, back;
    uint8_t desc[512];
    hg_size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    assert_int_equal(
        HG_Bulk_create(e.hg, 2, bufs, sizes, HG_BULK_READ_ONLY, &bulk),
        HG_SUCCESS);
    n = HG_Bulk_get_serialize_size(bulk, HG_FALSE);
    assert_true(n < sizeof(desc));
    assert_int_equal(HG_Bulk_serialize(desc, n, HG_FALSE, bulk), HG_SUCCESS);
    assert_int_equal(HG_Bulk_deserialize(e.hg, &back, desc, n), HG_SUCCESS);
    assert_int_equal(HG_Bulk_get_size(back), 12);
    HG_Bulk_free(back);
    /* Every strict prefix is refused as too short (HG_OVERFLOW), with the
     * rest of the descriptor still in memory behind it: a decoder reading
     * one byte past its input (the last memory handle) would accept the
     * prefix, or refuse it for another reason. */
    for (hg_size_t cut = 0; cut < n; cut++) {
        hg_return_t ret = HG_Bulk_deserialize(e.hg, &back, desc, cut);

        if (ret == HG_SUCCESS)
            HG_Bulk_free(back);
        if (ret != HG_OVERFLOW)
            fail_msg("a %llu-byte prefix of a %llu-byte descriptor gave %s, "
                     "want HG_OVERFLOW",
                     (unsigned long long) cut, (unsigned long long) n,
                     HG_Error_to_string(ret));
    }
    /* The caller passes the descriptor's exact size: a byte more is not
     * part of it and is refused, not ignored. */
    desc[n] = 0;
    back = HG_BULK_NULL;
    if (HG_Bulk_deserialize(e.hg, &back, desc, n + 1) == HG_SUCCESS) {
        HG_Bulk_free(back);
        fail_msg("a descriptor followed by one more byte was accepted");
    }
    for (int d = -1; d <= 1; d += 2) {
        desc[12] = (uint8_t) (12 + d); /* total, low byte */
        back = HG_BULK_NULL;
        if (HG_Bulk_deserialize(e.hg, &back, desc, n) == HG_SUCCESS) {
            HG_Bulk_free(back);
            fail_msg("a total of %d over segments of 12 bytes was accepted",
                     12 + d);
        }
    }
    HG_Bulk_free(bulk);
    gd_close(&e);
}

/* An embedded (eager) descriptor carries at most HG_BULK_EAGER_MAX bytes:
 * a valid one at the limit, then the same grown by one byte (total,
 * segment length and data), which must be refused even though every byte
 * it announces is there. */
static void
test_desc_eager_cap(void **state)
{
    struct gd_env e;
    static uint8_t data[HG_BULK_EAGER_MAX], desc[2 * HG_BULK_EAGER_MAX];
    void *bufs[1] = {data};
    hg_size_t sizes[1] = {sizeof(data)};
    hg_bulk_t bulk, back;
    hg_size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    memset(data, 0x5a, sizeof(data));
    assert_int_equal(
        HG_Bulk_create(e.hg, 1, bufs, sizes, HG_BULK_READ_ONLY, &bulk),
        HG_SUCCESS);
    n = HG_Bulk_get_serialize_size(bulk, HG_TRUE);
    assert_true(n + 1 <= sizeof(desc));
    assert_int_equal(HG_Bulk_serialize(desc, n, HG_TRUE, bulk), HG_SUCCESS);
    /* The data is embedded: the flags byte (offset 5) says so, and the
     * descriptor is that much longer than without it. */
    assert_true((desc[5] & 0x40) != 0);
    assert_int_equal(n, HG_Bulk_get_serialize_size(bulk, HG_FALSE) +
                            HG_BULK_EAGER_MAX);
    assert_int_equal(HG_Bulk_deserialize(e.hg, &back, desc, n), HG_SUCCESS);
    HG_Bulk_free(back);
    /* total (offset 12) and the one segment's length (offset 20), both
     * little-endian 64-bit, grow by one, as does the embedded data. */
    assert_int_equal(desc[12] | desc[13] << 8, HG_BULK_EAGER_MAX);
    assert_int_equal(desc[20] | desc[21] << 8, HG_BULK_EAGER_MAX);
    desc[12] = (uint8_t) ((HG_BULK_EAGER_MAX + 1) & 0xff);
    desc[13] = (uint8_t) ((HG_BULK_EAGER_MAX + 1) >> 8);
    desc[20] = desc[12];
    desc[21] = desc[13];
    desc[n] = 0x5a;
    back = HG_BULK_NULL;
    if (HG_Bulk_deserialize(e.hg, &back, desc, n + 1) == HG_SUCCESS) {
        HG_Bulk_free(back);
        fail_msg("an embedded descriptor of %d bytes was accepted (limit %d)",
                 HG_BULK_EAGER_MAX + 1, HG_BULK_EAGER_MAX);
    }
    HG_Bulk_free(bulk);
    gd_close(&e);
}

static int gd_xfer_done;
static hg_return_t gd_xfer_ret;

static hg_return_t
gd_xfer_cb(const struct hg_cb_info *info)
{
    gd_xfer_done++;
    gd_xfer_ret = info->ret;
    return HG_SUCCESS;
}

/* Copy size bytes from src+so to dst+do through HG_Bulk_transfer and
 * compare with the same copy on flat arrays. */
static void
gd_copy_case(struct gd_env *e, hg_bulk_t src, const uint8_t *src_flat,
             hg_bulk_t dst, uint8_t *dst_segs[], const hg_size_t *dst_len,
             uint32_t ndst, hg_size_t so, hg_size_t dof, hg_size_t size)
{
    uint8_t want[64], got[64];
    hg_size_t off = 0;

    for (uint32_t i = 0; i < ndst; i++)
        memset(dst_segs[i], 0, dst_len[i]);
    gd_xfer_done = 0;
    assert_int_equal(HG_Bulk_transfer(e->ctx, gd_xfer_cb, NULL, HG_BULK_PULL,
                                      HG_ADDR_NULL, src, so, dst, dof, size,
                                      HG_OP_ID_IGNORE),
                     HG_SUCCESS);
    gd_run(e, &gd_xfer_done, 1);
    assert_int_equal(gd_xfer_ret, HG_SUCCESS);
    memset(want, 0, sizeof(want));
    memcpy(want + dof, src_flat + so, size);
    for (uint32_t i = 0; i < ndst; i++) {
        memcpy(got + off, dst_segs[i], dst_len[i]);
        off += dst_len[i];
    }
    if (memcmp(want, got, off) != 0)
        fail_msg("copy of %llu bytes from offset %llu to offset %llu is wrong",
                 (unsigned long long) size, (unsigned long long) so,
                 (unsigned long long) dof);
}

/* Local copies between multi-segment handles, and from an embedded
 * (eager) descriptor, at every source and destination offset. */
static void
test_segment_copies(void **state)
{
    struct gd_env e;
    uint8_t s0[5], s1[7], s2[11], flat[23], d0[10], d1[13];
    void *sb[3] = {s0, s1, s2}, *db[2] = {d0, d1};
    hg_size_t sl[3] = {5, 7, 11}, dl[2] = {10, 13};
    uint8_t *dsegs[2] = {d0, d1};
    hg_bulk_t src, dst, eager;
    uint8_t desc[512];
    hg_size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    for (int i = 0; i < 23; i++)
        flat[i] = (uint8_t) (i * 7 + 3);
    memcpy(s0, flat, 5);
    memcpy(s1, flat + 5, 7);
    memcpy(s2, flat + 12, 11);
    assert_int_equal(HG_Bulk_create(e.hg, 3, sb, sl, HG_BULK_READ_ONLY, &src),
                     HG_SUCCESS);
    assert_int_equal(HG_Bulk_create(e.hg, 2, db, dl, HG_BULK_READWRITE, &dst),
                     HG_SUCCESS);
    n = HG_Bulk_get_serialize_size(src, HG_TRUE);
    assert_int_equal(HG_Bulk_serialize(desc, n, HG_TRUE, src), HG_SUCCESS);
    assert_int_equal(HG_Bulk_deserialize(e.hg, &eager, desc, n), HG_SUCCESS);
    for (hg_size_t so = 0; so < 23; so += 2)
        for (hg_size_t dof = 0; dof < 23; dof += 3) {
            hg_size_t size = 23 - (so > dof ? so : dof);

            gd_copy_case(&e, src, flat, dst, dsegs, dl, 2, so, dof, size);
            gd_copy_case(&e, eager, flat, dst, dsegs, dl, 2, so, dof, size);
        }
    HG_Bulk_free(eager);
    HG_Bulk_free(src);
    HG_Bulk_free(dst);
    gd_close(&e);
}

/* A transfer that reaches past a remote region is refused before any
 * byte moves. */
static void
test_transfer_bounds(void **state)
{
    struct gd_env e;
    uint8_t a[16], b[32];
    void *pa = a, *pb = b;
    hg_size_t la = sizeof(a), lb = sizeof(b);
    hg_bulk_t local, remote, exposed;
    uint8_t desc[512];
    hg_size_t n;
    hg_addr_t self;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    assert_int_equal(HG_Addr_self(e.hg, &self), HG_SUCCESS);
    assert_int_equal(
        HG_Bulk_create(e.hg, 1, &pa, &la, HG_BULK_READWRITE, &exposed),
        HG_SUCCESS);
    assert_int_equal(
        HG_Bulk_create(e.hg, 1, &pb, &lb, HG_BULK_READWRITE, &local),
        HG_SUCCESS);
    n = HG_Bulk_get_serialize_size(exposed, HG_FALSE);
    assert_int_equal(HG_Bulk_serialize(desc, n, HG_FALSE, exposed), HG_SUCCESS);
    assert_int_equal(HG_Bulk_deserialize(e.hg, &remote, desc, n), HG_SUCCESS);
    assert_int_equal(HG_Bulk_transfer(e.ctx, gd_xfer_cb, NULL, HG_BULK_PULL,
                                      self, remote, 0, local, 0, 17,
                                      HG_OP_ID_IGNORE),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Bulk_transfer(e.ctx, gd_xfer_cb, NULL, HG_BULK_PULL,
                                      self, remote, 8, local, 0, 9,
                                      HG_OP_ID_IGNORE),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Bulk_transfer(e.ctx, gd_xfer_cb, NULL, HG_BULK_PUSH,
                                      self, remote, 1, local, 0, 16,
                                      HG_OP_ID_IGNORE),
                     HG_INVALID_ARG);
    HG_Bulk_free(remote);
    HG_Bulk_free(exposed);
    HG_Bulk_free(local);
    HG_Addr_free(e.hg, self);
    gd_close(&e);
}

/* ---- requests from a raw peer ------------------------------------------ */

/* Send a request to the HG class and return the response's code. */
static hg_return_t
gd_request(struct gd_env *e, const struct hg_header *h, const uint8_t *payload,
           size_t len)
{
    static uint8_t msg[512], resp[512];
    struct hg_header r;

    assert_true(HG_HEADER_SIZE + len <= sizeof(msg));
    hg_header_encode(msg, h);
    if (len > 0)
        memcpy(msg + HG_HEADER_SIZE, payload, len);
    e->done[0] = e->done[1] = 0;
    assert_int_equal(NA_Msg_recv_expected(e->na, e->nctx, gd_cb, e, resp,
                                          sizeof(resp), NULL, e->peer, 0,
                                          h->cookie, e->op[1]),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(e->na, e->nctx, gd_cb, e, msg,
                                            HG_HEADER_SIZE + len, NULL, e->peer,
                                            0, h->cookie, e->op[0]),
                     NA_SUCCESS);
    gd_run(e, &e->done[1], 1);
    gd_run(e, &e->done[0], 1);
    assert_int_equal(e->ret[1], NA_SUCCESS);
    assert_int_equal(hg_header_decode(resp, e->got, &r), HG_SUCCESS);
    assert_true(r.flags & HG_HEADER_RESPONSE);
    return (hg_return_t) r.ret;
}

static void
gd_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

/* A target configured for payload checksums refuses a request that
 * carries only the header checksum. */
static void
test_payload_crc_required(void **state)
{
    struct gd_env e;
    uint8_t val[4];
    struct hg_header h = {.cookie = 5, .payload_size = 4};

    (void) state;
    gd_open(&e, HG_CHECKSUM_RPC_PAYLOAD);
    gd_le32(val, 42);
    h.rpc_id = e.id;
    h.flags = HG_HEADER_CRC_HEADER | HG_HEADER_CRC_PAYLOAD;
    h.payload_crc = qs_crc32c(0, val, 4);
    assert_int_equal(gd_request(&e, &h, val, 4), HG_SUCCESS);
    h.cookie = 6;
    h.flags = HG_HEADER_CRC_HEADER;
    assert_int_equal(gd_request(&e, &h, val, 4), HG_CHECKSUM_ERROR);
    h.cookie = 7;
    h.flags = HG_HEADER_CRC_PAYLOAD;
    assert_int_equal(gd_request(&e, &h, val, 4), HG_CHECKSUM_ERROR);
    assert_int_equal(gd_handled, 1);
    gd_close(&e);
}

/* An overflowed request: the target pulls the arguments from the raw
 * peer's memory, and verifies their checksum before the handler runs. */
static void
test_overflow_request_crc(void **state)
{
    struct gd_env e;
    uint8_t val[4], payload[256];
    na_mem_handle_t mh;
    struct hg_header h = {.payload_size = 4};
    size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_RPC_PAYLOAD);
    gd_le32(val, 42);
    n = gd_desc(&e, val, sizeof(val), &mh, payload + 4);
    gd_le32(payload, (uint32_t) n);
    h.rpc_id = e.id;
    h.flags = HG_HEADER_CRC_HEADER | HG_HEADER_CRC_PAYLOAD | HG_HEADER_OVERFLOW;
    h.payload_crc = qs_crc32c(0, val, 4);
    h.cookie = 8;
    assert_int_equal(gd_request(&e, &h, payload, n + 4), HG_SUCCESS);
    assert_int_equal(gd_handled, 1);
    h.cookie = 9;
    h.payload_crc ^= 1;
    assert_int_equal(gd_request(&e, &h, payload, n + 4), HG_CHECKSUM_ERROR);
    assert_int_equal(gd_handled, 1);
    gd_free_mh(&e, mh);
    gd_close(&e);
}

/* The target caps the size an overflowed request announces before it
 * allocates anything for it. */
static void
test_overflow_request_cap(void **state)
{
    struct gd_env e;
    uint8_t val[4], payload[256];
    na_mem_handle_t mh;
    struct hg_header h = {.payload_size = ((uint64_t) 1 << 32) + 1};
    size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    n = gd_desc(&e, val, sizeof(val), &mh, payload + 4);
    gd_le32(payload, (uint32_t) n);
    h.rpc_id = e.id;
    h.flags = HG_HEADER_OVERFLOW;
    h.cookie = 10;
    assert_int_equal(gd_request(&e, &h, payload, n + 4), HG_MSGSIZE);
    assert_int_equal(gd_handled, 0);
    gd_free_mh(&e, mh);
    gd_close(&e);
}

/* An output too large for the response message, answered to a raw peer
 * that never pulls it nor acknowledges: the respond ends with HG_TIMEOUT
 * (after the target's ack deadline, in virtual time). */
#define GD_BIG 8000

static int gd_respond_done;
static hg_return_t gd_respond_ret;

static hg_return_t
gd_big_proc(hg_proc_t proc, void *data)
{
    return hg_proc_memcpy(proc, data, GD_BIG);
}

static hg_return_t
gd_respond_cb(const struct hg_cb_info *info)
{
    gd_respond_done++;
    gd_respond_ret = info->ret;
    return HG_SUCCESS;
}

static hg_return_t
gd_big(hg_handle_t handle)
{
    static uint8_t out[GD_BIG];

    memset(out, 0x5a, sizeof(out));
    assert_int_equal(HG_Respond(handle, gd_respond_cb, NULL, out), HG_SUCCESS);
    return HG_Destroy(handle);
}

static void
test_respond_never_acknowledged(void **state)
{
    struct gd_env e;
    struct hg_header h = {.cookie = 11};
    hg_id_t big;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    big = HG_Register_name(e.hg, "gd_big", NULL, gd_big_proc, gd_big);
    h.rpc_id = big;
    gd_respond_done = 0;
    assert_int_equal(gd_request(&e, &h, NULL, 0), HG_SUCCESS);
    for (int i = 0; i < 200 && gd_respond_done == 0; i++) {
        HG_Progress(e.ctx, 1000);
        HG_Trigger(e.ctx, 0, 16, NULL);
    }
    assert_int_equal(gd_respond_done, 1);
    assert_int_equal(gd_respond_ret, HG_TIMEOUT);
    gd_close(&e);
}

/* ---- responses from a raw peer ----------------------------------------- */

static int gd_fwd_done;
static hg_return_t gd_fwd_ret;

static hg_return_t
gd_fwd_cb(const struct hg_cb_info *info)
{
    gd_fwd_done++;
    gd_fwd_ret = info->ret;
    return HG_SUCCESS;
}

/* Forward to the raw peer, which answers with an overflowed response
 * announcing `announced` bytes and carrying desc; return the forward's
 * result. */
static hg_return_t
gd_forged_response(struct gd_env *e, uint64_t announced, const uint8_t *desc,
                   size_t desc_len)
{
    static uint8_t req[4096], msg[512];
    struct hg_header rh, h;
    gd_val_t in = {.value = 3};
    hg_addr_t raw;
    hg_handle_t handle;

    assert_int_equal(HG_Addr_lookup2(e->hg, "sim://gd-raw", &raw), HG_SUCCESS);
    assert_int_equal(HG_Create(e->ctx, raw, e->id, &handle), HG_SUCCESS);
    e->done[1] = 0;
    assert_int_equal(NA_Msg_recv_unexpected(e->na, e->nctx, gd_cb, e, req,
                                            sizeof(req), NULL, e->op[1]),
                     NA_SUCCESS);
    gd_fwd_done = 0;
    assert_int_equal(HG_Forward(handle, gd_fwd_cb, NULL, &in), HG_SUCCESS);
    gd_run(e, &e->done[1], 1);
    assert_int_equal(hg_header_decode(req, e->got, &rh), HG_SUCCESS);
    memset(&h, 0, sizeof(h));
    h.flags = HG_HEADER_RESPONSE | HG_HEADER_OVERFLOW;
    h.cookie = rh.cookie;
    h.rpc_id = rh.rpc_id;
    h.payload_size = announced;
    hg_header_encode(msg, &h);
    gd_le32(msg + HG_HEADER_SIZE, (uint32_t) desc_len);
    memcpy(msg + HG_HEADER_SIZE + 4, desc, desc_len);
    e->done[0] = 0;
    assert_int_equal(NA_Msg_send_expected(e->na, e->nctx, gd_cb, e, msg,
                                          HG_HEADER_SIZE + 4 + desc_len, NULL,
                                          e->source, rh.context_id, rh.cookie,
                                          e->op[0]),
                     NA_SUCCESS);
    gd_run(e, &gd_fwd_done, 1);
    gd_run(e, &e->done[0], 1);
    NA_Addr_free(e->na, e->source);
    e->source = NA_ADDR_NULL;
    assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
    assert_int_equal(HG_Addr_free(e->hg, raw), HG_SUCCESS);
    return gd_fwd_ret;
}

/* The origin caps what an overflowed response may announce, and refuses
 * one that announces more than its descriptor exposes. */
static void
test_forged_overflow_response(void **state)
{
    struct gd_env e;
    uint8_t small[10], desc[256];
    na_mem_handle_t mh;
    size_t n;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    n = gd_desc(&e, small, sizeof(small), &mh, desc);
    assert_int_equal(gd_forged_response(&e, ((uint64_t) 1 << 32) + 1, desc, n),
                     HG_MSGSIZE);
    assert_int_equal(gd_forged_response(&e, 1000, desc, n), HG_OVERFLOW);
    gd_free_mh(&e, mh);
    gd_close(&e);
}

/* ---- liveness probes to and from a raw peer --------------------------- */

/* The target answers a probe below its handlers: a well-formed probe gets
 * a header-only answer echoing its cookie; a probe with bytes after the
 * header, or one flagged as an answer, gets none, and no handler runs. */
static void
test_probe_target(void **state)
{
    static uint8_t msg[HG_HEADER_SIZE + 8], ans[256];
    struct gd_env e;
    struct hg_header h, r;

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    for (int k = 0; k < 3; k++) {
        size_t len = k == 1 ? HG_HEADER_SIZE + 8 : HG_HEADER_SIZE;

        memset(&h, 0, sizeof(h));
        h.flags = HG_HEADER_PROBE | (k == 2 ? HG_HEADER_RESPONSE : 0u);
        h.cookie = 40u + (uint32_t) k;
        memset(msg, 0, sizeof(msg));
        hg_header_encode(msg, &h);
        e.done[0] = e.done[1] = 0;
        assert_int_equal(NA_Msg_recv_expected(e.na, e.nctx, gd_cb, &e, ans,
                                              sizeof(ans), NULL, e.peer, 0,
                                              h.cookie, e.op[1]),
                         NA_SUCCESS);
        assert_int_equal(NA_Msg_send_unexpected(e.na, e.nctx, gd_cb, &e, msg,
                                                len, NULL, e.peer, 0, h.cookie,
                                                e.op[0]),
                         NA_SUCCESS);
        gd_run(&e, &e.done[0], 1);
        if (k == 0) {
            gd_run(&e, &e.done[1], 1);
            assert_int_equal(e.ret[1], NA_SUCCESS);
            assert_int_equal(e.got, HG_HEADER_SIZE);
            assert_int_equal(hg_header_decode(ans, e.got, &r), HG_SUCCESS);
            assert_int_equal(r.flags, HG_HEADER_PROBE | HG_HEADER_RESPONSE);
            assert_int_equal(r.cookie, h.cookie);
            continue;
        }
        /* Give a wrong answer every chance to arrive, then take the
         * receive back. */
        for (int i = 0; i < 200; i++) {
            NA_Poll(e.na, e.nctx, NULL);
            NA_Trigger(e.nctx, 16, NULL);
            HG_Progress(e.ctx, 1);
            HG_Trigger(e.ctx, 0, 16, NULL);
        }
        if (e.done[1] != 0)
            fail_msg("malformed probe %d was answered", k);
        assert_int_equal(NA_Cancel(e.na, e.nctx, e.op[1]), NA_SUCCESS);
        gd_run(&e, &e.done[1], 1);
        assert_int_equal(e.ret[1], NA_CANCELED);
    }
    assert_int_equal(gd_handled, 0);
    gd_close(&e);
}

/* Progress both classes until *a or *b is non-zero (bounded). */
static void
gd_run_either(struct gd_env *e, const int *a, const int *b)
{
    for (int i = 0; i < 2000 && *a == 0 && *b == 0; i++) {
        NA_Poll(e->na, e->nctx, NULL);
        NA_Trigger(e->nctx, 16, NULL);
        HG_Progress(e->ctx, 1);
        HG_Trigger(e->ctx, 0, 16, NULL);
    }
    if (*a == 0 && *b == 0)
        fail_msg("no completion after 2000 rounds");
}

/* The origin takes as the answer to its probe only a header-only answer
 * flagged as one and echoing the probe's cookie. A raw target holds the
 * request and answers every probe with another cookie (bad 0) or without
 * the answer flag (bad 1): it is silent, and the forward ends with
 * HG_HOSTUNREACH at the second probe interval (100 ms here, virtual). */
static void
test_probe_origin_answers(void **state)
{
    static uint8_t req[4096], probe[256], msg[HG_HEADER_SIZE];

    (void) state;
    for (int bad = 0; bad < 2; bad++) {
        struct gd_env e;
        struct hg_header ph, h;
        gd_val_t in = {.value = 3};
        hg_addr_t raw;
        hg_handle_t handle;
        int probes = 0;

        gd_open_probe(&e, HG_CHECKSUM_NONE, 100);
        assert_int_equal(na_sim_set_single_driver(true), NA_SUCCESS);
        assert_int_equal(HG_Addr_lookup2(e.hg, "sim://gd-raw", &raw),
                         HG_SUCCESS);
        assert_int_equal(HG_Create(e.ctx, raw, e.id, &handle), HG_SUCCESS);
        e.done[1] = 0;
        assert_int_equal(NA_Msg_recv_unexpected(e.na, e.nctx, gd_cb, &e, req,
                                                sizeof(req), NULL, e.op[1]),
                         NA_SUCCESS);
        gd_fwd_done = 0;
        assert_int_equal(HG_Forward(handle, gd_fwd_cb, NULL, &in), HG_SUCCESS);
        gd_run(&e, &e.done[1], 1); /* the request, never answered */
        NA_Addr_free(e.na, e.source);
        e.source = NA_ADDR_NULL;
        while (gd_fwd_done == 0 && probes < 5) {
            e.done[1] = 0;
            assert_int_equal(NA_Msg_recv_unexpected(e.na, e.nctx, gd_cb, &e,
                                                    probe, sizeof(probe), NULL,
                                                    e.op[1]),
                             NA_SUCCESS);
            gd_run_either(&e, &e.done[1], &gd_fwd_done);
            if (e.done[1] == 0) { /* the forward ended: take it back */
                assert_int_equal(NA_Cancel(e.na, e.nctx, e.op[1]), NA_SUCCESS);
                gd_run(&e, &e.done[1], 1);
                break;
            }
            probes++;
            assert_int_equal(hg_header_decode(probe, e.got, &ph), HG_SUCCESS);
            assert_true(ph.flags & HG_HEADER_PROBE);
            memset(&h, 0, sizeof(h));
            h.flags = HG_HEADER_PROBE | (bad == 1 ? 0u : HG_HEADER_RESPONSE);
            h.cookie = bad == 0 ? ph.cookie + 1 : ph.cookie;
            hg_header_encode(msg, &h);
            e.done[0] = 0;
            assert_int_equal(NA_Msg_send_expected(
                                 e.na, e.nctx, gd_cb, &e, msg, HG_HEADER_SIZE,
                                 NULL, e.source, ph.context_id, e.tag, e.op[0]),
                             NA_SUCCESS);
            gd_run(&e, &e.done[0], 1);
            NA_Addr_free(e.na, e.source);
            e.source = NA_ADDR_NULL;
        }
        if (gd_fwd_done != 1)
            fail_msg("answers %s: the forward still waits after %d probes",
                     bad == 0 ? "with another cookie" : "without the flag",
                     probes);
        assert_int_equal(gd_fwd_ret, HG_HOSTUNREACH);
        assert_int_equal(probes, 1);
        assert_int_equal(HG_Destroy(handle), HG_SUCCESS);
        assert_int_equal(HG_Addr_free(e.hg, raw), HG_SUCCESS);
        assert_int_equal(na_sim_set_single_driver(false), NA_SUCCESS);
        gd_close(&e);
    }
}

/* The overflow framing: a u32 length, then that many descriptor bytes,
 * which must fit the payload exactly or less. */
static void
test_overflow_framing(void **state)
{
    uint8_t payload[12] = {0};
    const void *desc;
    size_t len;

    (void) state;
    for (uint32_t n = 0; n <= 12; n++) {
        hg_return_t want = n <= 8 ? HG_SUCCESS : HG_PROTOCOL_ERROR;

        gd_le32(payload, n);
        if (hg_header_overflow_desc(payload, sizeof(payload), &desc, &len) !=
            want)
            fail_msg("a descriptor length of %u in 12 bytes: want %s", n,
                     HG_Error_to_string(want));
        if (want == HG_SUCCESS)
            assert_true(len == n && desc == payload + 4);
    }
    assert_int_equal(hg_header_overflow_desc(payload, 3, &desc, &len),
                     HG_PROTOCOL_ERROR);
}

/* ---- expected messages match the sender's context -------------------- */

static void
test_expected_source_context(void **state)
{
    struct gd_env e;
    na_class_t *c;
    na_context_t *cctx, *b1;
    na_addr_t c_addr, b_addr;
    na_op_id_t *r0, *r1, *s;
    char buf0[16], buf1[16];

    (void) state;
    gd_open(&e, HG_CHECKSUM_NONE);
    c = NA_Initialize("sim://gd-c", true);
    assert_non_null(c);
    cctx = NA_Context_create(c);
    b1 = NA_Context_create_id(e.na, 1);
    assert_non_null(b1);
    assert_int_equal(NA_Addr_lookup(e.na, "sim://gd-c", &c_addr), NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(c, "sim://gd-raw", &b_addr), NA_SUCCESS);
    r0 = NA_Op_create(c, 0);
    r1 = NA_Op_create(c, 0);
    s = NA_Op_create(e.na, 0);
    memset(buf0, 0, sizeof(buf0));
    memset(buf1, 0, sizeof(buf1));
    /* The same source and tag, from context 0 and from context 1. */
    e.done[0] = e.done[1] = 0;
    assert_int_equal(NA_Msg_recv_expected(c, cctx, gd_cb, &e, buf0,
                                          sizeof(buf0), NULL, b_addr, 0, 77,
                                          r0),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_recv_expected(c, cctx, gd_cb, &e, buf1,
                                          sizeof(buf1), NULL, b_addr, 1, 77,
                                          r1),
                     NA_SUCCESS);
    assert_int_equal(NA_Msg_send_expected(e.na, b1, gd_cb, &e, "from-1", 7,
                                          NULL, c_addr, 0, 77, s),
                     NA_SUCCESS);
    for (int i = 0; i < 200 && (e.done[0] < 1 || e.done[1] < 1); i++) {
        NA_Poll_wait(e.na, b1, 1, NULL);
        NA_Trigger(b1, 16, NULL);
        NA_Poll_wait(c, cctx, 1, NULL);
        NA_Trigger(cctx, 16, NULL);
    }
    assert_int_equal(e.done[0], 1);
    assert_int_equal(e.done[1], 1);
    assert_string_equal(buf1, "from-1");
    assert_int_equal(buf0[0], 0);
    /* The receive from context 0 is still posted: cancel it. */
    assert_int_equal(NA_Cancel(c, cctx, r0), NA_SUCCESS);
    for (int i = 0; i < 100 && e.done[1] < 2; i++) {
        NA_Poll_wait(c, cctx, 1, NULL);
        NA_Trigger(cctx, 16, NULL);
    }
    assert_int_equal(e.done[1], 2);
    assert_int_equal(e.ret[1], NA_CANCELED);
    NA_Op_destroy(c, r0);
    NA_Op_destroy(c, r1);
    NA_Op_destroy(e.na, s);
    NA_Addr_free(e.na, c_addr);
    NA_Addr_free(c, b_addr);
    assert_int_equal(NA_Context_destroy(e.na, b1), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(c, cctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(c), NA_SUCCESS);
    gd_close(&e);
}

int
main(int argc, char **argv)
{
    static const struct CMUnitTest all[] = {
        cmocka_unit_test(test_desc_total),
        cmocka_unit_test(test_desc_eager_cap),
        cmocka_unit_test(test_segment_copies),
        cmocka_unit_test(test_transfer_bounds),
        cmocka_unit_test(test_payload_crc_required),
        cmocka_unit_test(test_overflow_request_crc),
        cmocka_unit_test(test_overflow_request_cap),
        cmocka_unit_test(test_respond_never_acknowledged),
        cmocka_unit_test(test_forged_overflow_response),
        cmocka_unit_test(test_overflow_framing),
        cmocka_unit_test(test_expected_source_context),
        cmocka_unit_test(test_probe_target),
        cmocka_unit_test(test_probe_origin_answers),
    };
    struct CMUnitTest pick[sizeof(all) / sizeof(all[0])];
    size_t n = 0;

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (argc < 2 || strcmp(argv[1], all[i].name + 5) == 0)
            pick[n++] = all[i];
    if (n == 0)
        return 2;
    return _cmocka_run_group_tests("sim_guards", pick, n, NULL, NULL);
}
