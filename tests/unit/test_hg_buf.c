/*
 * Raw message buffers and reserved offsets (Mercury 2.4's
 * HG_Get_input_buf() family, HG_Class_set_input_offset() /
 * _output_offset()) on the simulated fabric: a handler reads the raw
 * encoded input; a program's own header bytes travel before the encoded
 * arguments, both ways, inside the message and beside an overflowed
 * argument; HG_Release_input_buf() lets the input go; offsets that differ
 * between the two sides are a protocol error, not garbage. Also the handle
 * a proc works for (hg_proc_get_handle()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mercury.h"
#include "mercury_macros.h"
#include "mercury_proc_string.h"

MERCURY_GEN_PROC(num_t, ((uint64_t) (x)))

/* A string argument whose proc also records the handle it works for. */
typedef struct {
    hg_const_string_t s;
} str_t;

static hg_handle_t proc_handle_seen;

static hg_return_t
hg_proc_str_t(hg_proc_t proc, void *data)
{
    str_t *str = data;

    if (hg_proc_get_op(proc) != HG_FREE)
        proc_handle_seen = hg_proc_get_handle(proc);
    return hg_proc_hg_const_string_t(proc, &str->s);
}

#define OFFSET 8
static const char req_hdr[OFFSET] = "REQHDR01";
static const char resp_hdr[OFFSET] = "RSPHDR02";

static struct {
    int calls;
    bool with_offset;   /* check and write the reserved bytes      */
    hg_return_t in_ret; /* what HG_Get_input() said                */
    char *in_s;         /* the decoded string (copy)               */
    hg_size_t extra_size;
    bool proc_handle_ok;
    bool raw_ok; /* the raw bytes were the expected ones */
} seen;

static char *big_reply;

static hg_return_t
str_rpc(hg_handle_t handle)
{
    str_t in, out;
    void *buf, *extra;
    hg_size_t size, extra_size;

    seen.calls++;
    assert_int_equal(HG_Get_input_buf(handle, &buf, &size), HG_SUCCESS);
    assert_int_equal(HG_Get_input_extra_buf(handle, &extra, &extra_size),
                     HG_SUCCESS);
    seen.extra_size = extra_size;
    assert_true((extra == NULL) == (extra_size == 0));
    if (seen.with_offset) {
        assert_true(size >= OFFSET);
        seen.raw_ok = memcmp(buf, req_hdr, OFFSET) == 0;
        /* Inside the message, the encoded input follows the reserved
         * bytes; overflowed, only its descriptor does. */
        if (extra == NULL)
            assert_int_equal(size, OFFSET + HG_Get_input_payload_size(handle));
        else
            assert_int_equal(extra_size, HG_Get_input_payload_size(handle));
    }
    proc_handle_seen = HG_HANDLE_NULL;
    seen.in_ret = HG_Get_input(handle, &in);
    seen.proc_handle_ok = proc_handle_seen == handle;
    if (seen.in_ret != HG_SUCCESS)
        return seen.in_ret; /* answered with the error for us */
    seen.in_s = strdup(in.s);
    if (extra != NULL) {
        /* Let the overflowed input go: it is gone afterwards. */
        assert_int_equal(HG_Release_input_buf(handle), HG_SUCCESS);
        assert_int_equal(HG_Get_input_extra_buf(handle, &extra, &extra_size),
                         HG_SUCCESS);
        assert_null(extra);
        assert_int_equal(extra_size, 0);
        assert_int_equal(HG_Get_input_buf(handle, &buf, NULL), HG_FAULT);
    }
    HG_Free_input(handle, &in);
    if (seen.with_offset) {
        assert_int_equal(HG_Get_output_buf(handle, &buf, &size), HG_SUCCESS);
        assert_true(size >= OFFSET);
        memcpy(buf, resp_hdr, OFFSET);
    }
    out.s = big_reply != NULL ? big_reply : "ok";
    assert_int_equal(HG_Respond(handle, NULL, NULL, &out), HG_SUCCESS);
    return HG_Destroy(handle);
}

static hg_return_t
num_rpc(hg_handle_t handle)
{
    num_t in, out;
    unsigned char *buf;
    hg_size_t size;

    seen.calls++;
    /* No offset: the raw input is the encoding of x (little-endian). */
    assert_int_equal(HG_Get_input_buf(handle, (void **) &buf, &size),
                     HG_SUCCESS);
    seen.raw_ok = size == 8 && buf[0] == 0x08 && buf[7] == 0x01;
    assert_int_equal(HG_Get_input(handle, &in), HG_SUCCESS);
    out.x = in.x + 1;
    assert_int_equal(HG_Respond(handle, NULL, NULL, &out), HG_SUCCESS);
    return HG_Destroy(handle);
}

struct env {
    hg_class_t *server, *client;
    hg_context_t *sctx, *cctx;
    hg_addr_t addr;
    hg_id_t str_id, num_id;
};

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));

    memset(&seen, 0, sizeof(seen));
    big_reply = NULL;
    e->server = HG_Init("sim://bufsrv", HG_TRUE);
    e->client = HG_Init("sim", HG_FALSE);
    assert_non_null(e->server);
    assert_non_null(e->client);
    e->sctx = HG_Context_create(e->server);
    e->cctx = HG_Context_create(e->client);
    assert_non_null(e->sctx);
    assert_non_null(e->cctx);
    e->str_id = MERCURY_REGISTER(e->server, "str", str_t, str_t, str_rpc);
    MERCURY_REGISTER(e->client, "str", str_t, str_t, NULL);
    e->num_id = MERCURY_REGISTER(e->server, "num", num_t, num_t, num_rpc);
    MERCURY_REGISTER(e->client, "num", num_t, num_t, NULL);
    assert_int_equal(HG_Addr_lookup2(e->client, "sim://bufsrv", &e->addr),
                     HG_SUCCESS);
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    for (int i = 0; i < 10; i++) {
        HG_Progress(e->sctx, 0);
        HG_Trigger(e->sctx, 0, 64, NULL);
        HG_Progress(e->cctx, 0);
        HG_Trigger(e->cctx, 0, 64, NULL);
    }
    free(seen.in_s);
    assert_int_equal(HG_Addr_free(e->client, e->addr), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->cctx), HG_SUCCESS);
    assert_int_equal(HG_Context_destroy(e->sctx), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->client), HG_SUCCESS);
    assert_int_equal(HG_Finalize(e->server), HG_SUCCESS);
    free(e);
    return 0;
}

struct call {
    int done;
    hg_return_t ret;
    bool hdr_ok;    /* the response's reserved bytes arrived    */
    char *out_s;    /* the decoded output (copy)                */
    bool out_extra; /* the output travelled through bulk        */
};

static hg_return_t
call_cb(const struct hg_cb_info *info)
{
    struct call *c = info->arg;
    hg_handle_t h = info->info.forward.handle;
    void *buf, *extra;
    hg_size_t size, extra_size;
    str_t out;

    c->ret = info->ret;
    c->done = 1;
    if (info->ret != HG_SUCCESS || !seen.with_offset)
        return HG_SUCCESS;
    assert_int_equal(HG_Get_output_buf(h, &buf, &size), HG_SUCCESS);
    c->hdr_ok = size >= OFFSET && memcmp(buf, resp_hdr, OFFSET) == 0;
    assert_int_equal(HG_Get_output_extra_buf(h, &extra, &extra_size),
                     HG_SUCCESS);
    c->out_extra = extra != NULL && extra_size > 0;
    assert_int_equal(HG_Get_output(h, &out), HG_SUCCESS);
    c->out_s = strdup(out.s);
    HG_Free_output(h, &out);
    return HG_SUCCESS;
}

static void
drive(struct env *e, const int *done)
{
    for (int i = 0; i < 100000 && !*done; i++) {
        HG_Progress(e->cctx, 100);
        HG_Trigger(e->cctx, 0, 64, NULL);
        HG_Progress(e->sctx, 100);
        HG_Trigger(e->sctx, 0, 64, NULL);
    }
    assert_true(*done);
}

/* Forward `s` on `ctx` to `addr`, with the request's reserved bytes
 * written first when offsets are on. */
static void
forward_str(struct env *e, hg_context_t *ctx, hg_addr_t addr, const char *s,
            struct call *c)
{
    str_t in = {.s = s};
    hg_handle_t h;
    void *buf;
    hg_size_t size;

    memset(c, 0, sizeof(*c));
    assert_int_equal(HG_Create(ctx, addr, e->str_id, &h), HG_SUCCESS);
    /* Nothing received yet on this origin handle. */
    assert_int_equal(HG_Get_output_buf(h, &buf, &size), HG_FAULT);
    if (seen.with_offset) {
        assert_int_equal(HG_Get_input_buf(h, &buf, &size), HG_SUCCESS);
        assert_int_equal(
            size, HG_Class_get_input_eager_size(HG_Context_get_class(ctx)));
        memcpy(buf, req_hdr, OFFSET);
    }
    assert_int_equal(HG_Forward(h, call_cb, c, &in), HG_SUCCESS);
    drive(e, &c->done);
    assert_int_equal(HG_Destroy(h), HG_SUCCESS);
}

static void
set_offsets(struct env *e, hg_size_t in, hg_size_t out)
{
    assert_int_equal(HG_Class_set_input_offset(e->server, in), HG_SUCCESS);
    assert_int_equal(HG_Class_set_output_offset(e->server, out), HG_SUCCESS);
    assert_int_equal(HG_Class_set_input_offset(e->client, in), HG_SUCCESS);
    assert_int_equal(HG_Class_set_output_offset(e->client, out), HG_SUCCESS);
}

static char *
big_string(size_t n, char ch)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, ch, n);
    s[n] = '\0';
    return s;
}

/* Without offsets a handler reads the raw encoding of its input. */
static void
test_raw_input(void **state)
{
    struct env *e = *state;
    num_t in = {.x = 0x0102030405060708ull}, out;
    struct call c = {0};
    hg_handle_t h;

    assert_int_equal(HG_Create(e->cctx, e->addr, e->num_id, &h), HG_SUCCESS);
    assert_int_equal(HG_Forward(h, call_cb, &c, &in), HG_SUCCESS);
    drive(e, &c.done);
    assert_int_equal(c.ret, HG_SUCCESS);
    assert_true(seen.raw_ok);
    assert_int_equal(HG_Get_output(h, &out), HG_SUCCESS);
    assert_int_equal(out.x, in.x + 1);
    HG_Free_output(h, &out);
    assert_int_equal(HG_Destroy(h), HG_SUCCESS);
}

/* Reserved bytes both ways, arguments inside the messages. */
static void
test_offsets(void **state)
{
    struct env *e = *state;
    struct call c;

    seen.with_offset = true;
    set_offsets(e, OFFSET, OFFSET);
    forward_str(e, e->cctx, e->addr, "hello", &c);
    assert_int_equal(c.ret, HG_SUCCESS);
    assert_int_equal(seen.in_ret, HG_SUCCESS);
    assert_true(seen.raw_ok);
    assert_true(seen.proc_handle_ok);
    assert_string_equal(seen.in_s, "hello");
    assert_int_equal(seen.extra_size, 0);
    assert_true(c.hdr_ok);
    assert_false(c.out_extra);
    assert_string_equal(c.out_s, "ok");
    free(c.out_s);
}

/* Arguments larger than a message travel through bulk; the reserved bytes
 * still arrive in the message, and the input can be released early. */
static void
test_offsets_overflow(void **state)
{
    struct env *e = *state;
    size_t n = 3 * HG_Class_get_input_eager_size(e->client);
    char *s = big_string(n, 'a');
    struct call c;

    seen.with_offset = true;
    big_reply = big_string(2 * HG_Class_get_output_eager_size(e->server), 'b');
    set_offsets(e, OFFSET, OFFSET);
    forward_str(e, e->cctx, e->addr, s, &c);
    assert_int_equal(c.ret, HG_SUCCESS);
    assert_true(seen.raw_ok);
    assert_true(seen.extra_size > n);
    assert_string_equal(seen.in_s, s);
    assert_true(c.hdr_ok);
    assert_true(c.out_extra);
    assert_string_equal(c.out_s, big_reply);
    free(c.out_s);
    free(big_reply);
    big_reply = NULL;
    free(s);
}

/* A forward to the class itself copies the reserved bytes too. */
static void
test_offsets_loopback(void **state)
{
    struct env *e = *state;
    struct call c;
    hg_addr_t self;

    seen.with_offset = true;
    set_offsets(e, OFFSET, OFFSET);
    assert_int_equal(HG_Addr_self(e->server, &self), HG_SUCCESS);
    forward_str(e, e->sctx, self, "self", &c);
    assert_int_equal(c.ret, HG_SUCCESS);
    assert_true(seen.raw_ok);
    assert_string_equal(seen.in_s, "self");
    assert_true(c.hdr_ok);
    free(c.out_s);
    HG_Addr_free(e->server, self);
}

/* The two sides disagree on the input offset: the target refuses the
 * request instead of decoding the wrong bytes. */
static void
test_offset_mismatch(void **state)
{
    struct env *e = *state;
    str_t in = {.s = "x"};
    struct call c = {0};
    hg_handle_t h;

    assert_int_equal(HG_Class_set_input_offset(e->server, 64), HG_SUCCESS);
    assert_int_equal(HG_Create(e->cctx, e->addr, e->str_id, &h), HG_SUCCESS);
    assert_int_equal(HG_Forward(h, call_cb, &c, &in), HG_SUCCESS);
    drive(e, &c.done);
    assert_int_equal(c.ret, HG_PROTOCOL_ERROR);
    assert_int_equal(seen.calls, 0);
    assert_int_equal(HG_Destroy(h), HG_SUCCESS);
}

static void
test_bad_args(void **state)
{
    struct env *e = *state;
    void *buf;
    hg_size_t size;
    hg_handle_t h;

    assert_int_equal(HG_Class_set_input_offset(NULL, 0), HG_INVALID_ARG);
    assert_int_equal(HG_Class_set_output_offset(NULL, 0), HG_INVALID_ARG);
    assert_int_equal(
        HG_Class_set_input_offset(e->client,
                                  HG_Class_get_input_eager_size(e->client) + 1),
        HG_INVALID_ARG);
    assert_int_equal(
        HG_Class_set_output_offset(
            e->client, HG_Class_get_output_eager_size(e->client) + 1),
        HG_INVALID_ARG);
    assert_int_equal(HG_Get_input_buf(HG_HANDLE_NULL, &buf, &size),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Get_output_buf(HG_HANDLE_NULL, &buf, &size),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Get_input_extra_buf(HG_HANDLE_NULL, &buf, &size),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Get_output_extra_buf(HG_HANDLE_NULL, &buf, &size),
                     HG_INVALID_ARG);
    assert_int_equal(HG_Release_input_buf(HG_HANDLE_NULL), HG_INVALID_ARG);
    assert_int_equal(HG_Create(e->cctx, e->addr, e->str_id, &h), HG_SUCCESS);
    assert_int_equal(HG_Get_input_buf(h, NULL, &size), HG_INVALID_ARG);
    assert_int_equal(HG_Get_output_buf(h, NULL, &size), HG_INVALID_ARG);
    /* The size pointer may be NULL; an origin handle has no extra input
     * before forwarding, and releasing its input changes nothing. */
    assert_int_equal(HG_Get_input_buf(h, &buf, NULL), HG_SUCCESS);
    assert_int_equal(HG_Get_input_extra_buf(h, &buf, NULL), HG_SUCCESS);
    assert_null(buf);
    assert_int_equal(HG_Release_input_buf(h), HG_SUCCESS);
    assert_int_equal(HG_Destroy(h), HG_SUCCESS);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_raw_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offsets_overflow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offsets_loopback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offset_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
