/*
 * The RPC wire header: encode/decode round trips, rejection of malformed
 * headers, and what a target does with hostile requests sent as raw NA
 * messages over the simulated fabric: a payload that fails its checksum is
 * answered with HG_CHECKSUM_ERROR, a wrong size with HG_PROTOCOL_ERROR, an
 * unknown RPC with HG_NOENTRY, and garbage is dropped and counted; no
 * handler runs for any of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hg/hg_header.h"
#include "mercury.h"
#include "mercury_macros.h"
#include "na_sim.h"
#include "util/qs_checksum.h"

static void
test_round_trip(void **state)
{
    (void) state;
    uint8_t buf[HG_HEADER_SIZE];

    for (unsigned flags = 0; flags <= HG_HEADER_FLAGS_ALL; flags++) {
        struct hg_header in = {.flags = (uint8_t) flags,
                               .ret = HG_TIMEOUT,
                               .context_id = 3,
                               .cookie = 0xabcdef01,
                               .rpc_id = 0x123456789ull,
                               .payload_size = 1ull << 40,
                               .payload_crc = 0x55aa55aa},
                         out;

        hg_header_encode(buf, &in);
        if ((flags & HG_HEADER_RESPONSE) && (flags & HG_HEADER_NO_RESPONSE)) {
            /* A response that asks for no response is nonsense. */
            assert_int_equal(hg_header_decode(buf, sizeof(buf), &out),
                             HG_PROTOCOL_ERROR);
            continue;
        }
        assert_int_equal(hg_header_decode(buf, sizeof(buf), &out), HG_SUCCESS);
        assert_int_equal(out.flags, in.flags);
        assert_int_equal(out.ret, in.ret);
        assert_int_equal(out.context_id, in.context_id);
        assert_int_equal(out.cookie, in.cookie);
        assert_true(out.rpc_id == in.rpc_id);
        assert_true(out.payload_size == in.payload_size);
        assert_int_equal(out.payload_crc, in.payload_crc);
    }
}

/* The probe and answer check (liveness): a bare header of exactly
 * HG_HEADER_SIZE bytes with the probe flag, the response flag only on an
 * answer, and no RPC fields; anything longer, shorter or with a payload is
 * refused. */
static void
test_probe_check(void **state)
{
    (void) state;
    uint8_t buf[HG_HEADER_SIZE + 8];
    struct hg_header in, out;

    for (int answer = 0; answer < 2; answer++) {
        memset(&in, 0, sizeof(in));
        in.flags =
            (uint8_t) (HG_HEADER_PROBE | (answer ? HG_HEADER_RESPONSE : 0));
        in.cookie = 77;
        memset(buf, 0, sizeof(buf));
        hg_header_encode(buf, &in);
        assert_int_equal(hg_header_decode(buf, HG_HEADER_SIZE, &out),
                         HG_SUCCESS);
        assert_int_equal(hg_header_probe_check(&out, HG_HEADER_SIZE, answer),
                         HG_SUCCESS);
        /* The other direction's check refuses it. */
        assert_int_equal(hg_header_probe_check(&out, HG_HEADER_SIZE, !answer),
                         HG_PROTOCOL_ERROR);
        /* Trailing bytes, any number: not a bare header. */
        for (size_t extra = 1; extra <= 8; extra++) {
            assert_int_equal(
                hg_header_decode(buf, HG_HEADER_SIZE + extra, &out),
                HG_SUCCESS);
            assert_int_equal(
                hg_header_probe_check(&out, HG_HEADER_SIZE + extra, answer),
                HG_MSGSIZE);
        }
        assert_int_equal(
            hg_header_probe_check(&out, HG_HEADER_SIZE - 1, answer),
            HG_MSGSIZE);
        /* RPC fields on a probe. */
        in.payload_size = 1;
        hg_header_encode(buf, &in);
        assert_int_equal(hg_header_decode(buf, HG_HEADER_SIZE, &out),
                         HG_SUCCESS);
        assert_int_equal(hg_header_probe_check(&out, HG_HEADER_SIZE, answer),
                         HG_PROTOCOL_ERROR);
    }
    assert_int_equal(hg_header_probe_check(NULL, HG_HEADER_SIZE, false),
                     HG_PROTOCOL_ERROR);
}

static void
test_malformed(void **state)
{
    (void) state;
    struct hg_header h = {.flags = HG_HEADER_CRC_HEADER, .rpc_id = 9}, out;
    uint8_t buf[HG_HEADER_SIZE], bad[HG_HEADER_SIZE];

    hg_header_encode(buf, &h);
    for (size_t len = 0; len < HG_HEADER_SIZE; len++)
        assert_int_equal(hg_header_decode(buf, len, &out), HG_MSGSIZE);
    assert_int_equal(hg_header_decode(NULL, 100, &out), HG_MSGSIZE);
    /* Any single flipped bit is caught: by the checksum, or as a bad
     * magic/version/flag/return code. The one exception is the bit that
     * announces the checksum: the codec cannot tell its absence from a
     * sender that never set it, so receivers configured for checksums
     * require it (test_target_answers_hostile_requests). */
    for (size_t bit = 0; bit < HG_HEADER_SIZE * 8; bit++) {
        if (bit == 3 * 8 + 3)
            continue;
        memcpy(bad, buf, sizeof(bad));
        bad[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        assert_int_not_equal(hg_header_decode(bad, sizeof(bad), &out),
                             HG_SUCCESS);
    }
    /* Without the checksum flag, structural checks still apply. */
    h.flags = 0;
    hg_header_encode(buf, &h);
    memcpy(bad, buf, sizeof(bad));
    bad[0] ^= 1; /* magic */
    assert_int_equal(hg_header_decode(bad, sizeof(bad), &out),
                     HG_PROTOCOL_ERROR);
    memcpy(bad, buf, sizeof(bad));
    bad[2] = 99; /* version */
    assert_int_equal(hg_header_decode(bad, sizeof(bad), &out),
                     HG_PROTOCOL_ERROR);
    memcpy(bad, buf, sizeof(bad));
    bad[3] = 0x80; /* unknown flag */
    assert_int_equal(hg_header_decode(bad, sizeof(bad), &out),
                     HG_PROTOCOL_ERROR);
    memcpy(bad, buf, sizeof(bad));
    bad[24] = HG_RETURN_MAX; /* return code out of range */
    assert_int_equal(hg_header_decode(bad, sizeof(bad), &out),
                     HG_PROTOCOL_ERROR);
}

/* A raw NA peer against a real HG target. */

MERCURY_GEN_PROC(echo_t, ((int32_t) (value)))

static int handler_calls;

static hg_return_t
echo_rpc(hg_handle_t handle)
{
    echo_t in;

    handler_calls++;
    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    HG_Respond(handle, NULL, NULL, &in);
    HG_Free_input(handle, &in);
    return HG_Destroy(handle);
}

struct raw_peer {
    hg_class_t *server;
    hg_context_t *sctx;
    hg_id_t id;
    na_class_t *na;
    na_context_t *nctx;
    na_addr_t server_addr;
    na_op_id_t *send_op, *recv_op;
    int done;
    size_t resp_size;
};

static void
raw_cb(const struct na_cb_info *info)
{
    struct raw_peer *p = info->arg;

    if (info->type == NA_CB_RECV_EXPECTED) {
        assert_int_equal(info->ret, NA_SUCCESS);
        p->resp_size = info->info.recv_expected.actual_buf_size;
    }
    p->done++;
}

static int
raw_setup(void **state)
{
    static struct raw_peer p;
    struct hg_init_info info = HG_INIT_INFO_INITIALIZER;

    memset(&p, 0, sizeof(p));
    info.checksum_level = HG_CHECKSUM_RPC_PAYLOAD;
    p.server = HG_Init_opt("sim://raw-target", HG_TRUE, &info);
    assert_non_null(p.server);
    p.sctx = HG_Context_create(p.server);
    p.id = MERCURY_REGISTER(p.server, "echo", echo_t, echo_t, echo_rpc);
    p.na = NA_Initialize("sim://raw-origin", true);
    assert_non_null(p.na);
    p.nctx = NA_Context_create(p.na);
    assert_int_equal(NA_Addr_lookup(p.na, "sim://raw-target", &p.server_addr),
                     NA_SUCCESS);
    p.send_op = NA_Op_create(p.na, 0);
    p.recv_op = NA_Op_create(p.na, 0);
    handler_calls = 0;
    *state = &p;
    return 0;
}

static int
raw_teardown(void **state)
{
    struct raw_peer *p = *state;

    NA_Op_destroy(p->na, p->send_op);
    NA_Op_destroy(p->na, p->recv_op);
    NA_Addr_free(p->na, p->server_addr);
    assert_int_equal(NA_Context_destroy(p->na, p->nctx), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p->na), NA_SUCCESS);
    assert_int_equal(HG_Context_destroy(p->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(p->server), HG_SUCCESS);
    return 0;
}

/* Send msg as a request and return the decoded response header (or fail
 * when expect_response and none came). */
static int
raw_exchange(struct raw_peer *p, const uint8_t *msg, size_t len,
             uint32_t cookie, bool expect_response, struct hg_header *resp)
{
    static uint8_t resp_buf[4096];
    int want = expect_response ? 2 : 1;

    p->done = 0;
    p->resp_size = 0;
    if (expect_response)
        assert_int_equal(NA_Msg_recv_expected(p->na, p->nctx, raw_cb, p,
                                              resp_buf, sizeof(resp_buf), NULL,
                                              p->server_addr, 0, cookie,
                                              p->recv_op),
                         NA_SUCCESS);
    assert_int_equal(NA_Msg_send_unexpected(p->na, p->nctx, raw_cb, p, msg, len,
                                            NULL, p->server_addr, 0, cookie,
                                            p->send_op),
                     NA_SUCCESS);
    for (int i = 0; i < 1000 && p->done < want; i++) {
        NA_Poll_wait(p->na, p->nctx, 10, NULL);
        NA_Trigger(p->nctx, 16, NULL);
        HG_Progress(p->sctx, 10);
        HG_Trigger(p->sctx, 0, 16, NULL);
    }
    /* Let the target finish whatever it does with a dropped request. */
    for (int i = 0; i < 10; i++) {
        HG_Progress(p->sctx, 0);
        HG_Trigger(p->sctx, 0, 16, NULL);
    }
    if (p->done < want)
        return -1;
    if (expect_response)
        assert_int_equal(hg_header_decode(resp_buf, p->resp_size, resp),
                         HG_SUCCESS);
    return 0;
}

static size_t
make_request(uint8_t *msg, hg_id_t id, uint32_t cookie, int32_t value,
             uint32_t crc_delta, uint64_t size_delta)
{
    struct hg_header h = {.flags = HG_HEADER_CRC_HEADER | HG_HEADER_CRC_PAYLOAD,
                          .cookie = cookie,
                          .rpc_id = id,
                          .payload_size = 4 + size_delta};
    uint8_t *payload = msg + HG_HEADER_SIZE;

    for (int i = 0; i < 4; i++)
        payload[i] = (uint8_t) ((uint32_t) value >> (8 * i));
    h.payload_crc = qs_crc32c(0, payload, 4) + crc_delta;
    hg_header_encode(msg, &h);
    return HG_HEADER_SIZE + 4;
}

static void
test_target_answers_hostile_requests(void **state)
{
    struct raw_peer *p = *state;
    struct hg_header resp;
    struct hg_stats stats;
    uint8_t msg[64];
    size_t len;

    /* A well-formed request is served. */
    len = make_request(msg, p->id, 11, 42, 0, 0);
    assert_int_equal(raw_exchange(p, msg, len, 11, true, &resp), 0);
    assert_int_equal(resp.ret, HG_SUCCESS);
    assert_true(resp.flags & HG_HEADER_RESPONSE);
    assert_int_equal(handler_calls, 1);

    /* A corrupted payload fails its checksum. */
    len = make_request(msg, p->id, 12, 42, 1, 0);
    assert_int_equal(raw_exchange(p, msg, len, 12, true, &resp), 0);
    assert_int_equal(resp.ret, HG_CHECKSUM_ERROR);

    /* A size that disagrees with the message. */
    len = make_request(msg, p->id, 13, 42, 0, 1000);
    assert_int_equal(raw_exchange(p, msg, len, 13, true, &resp), 0);
    assert_int_equal(resp.ret, HG_PROTOCOL_ERROR);

    /* An RPC the target never registered. */
    len = make_request(msg, p->id + 1, 14, 42, 0, 0);
    assert_int_equal(raw_exchange(p, msg, len, 14, true, &resp), 0);
    assert_int_equal(resp.ret, HG_NOENTRY);

    /* A target configured for checksums refuses a request without. */
    {
        struct hg_header h = {.cookie = 16, .rpc_id = p->id, .payload_size = 4};
        memset(msg, 0, sizeof(msg));
        hg_header_encode(msg, &h);
        assert_int_equal(
            raw_exchange(p, msg, HG_HEADER_SIZE + 4, 16, true, &resp), 0);
        assert_int_equal(resp.ret, HG_CHECKSUM_ERROR);
    }

    /* Garbage is dropped without an answer, and counted. */
    memset(msg, 0xee, sizeof(msg));
    assert_int_equal(raw_exchange(p, msg, sizeof(msg), 15, false, &resp), 0);
    assert_int_equal(HG_Class_get_stats(p->server, &stats), HG_SUCCESS);
    assert_true(stats.protocol_errors >= 2);

    /* Only the well-formed request reached the handler. */
    assert_int_equal(handler_calls, 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_probe_check),
        cmocka_unit_test_setup_teardown(test_target_answers_hostile_requests,
                                        raw_setup, raw_teardown),
    };
    return cmocka_run_group_tests_name("hg_header", tests, NULL, NULL);
}
