/*
 * Unit tests for the serialization layer: scalar, raw and string procs, the
 * generated structure procs, the overflow into the extra buffer, hostile
 * decode input and checksums. No network is involved.
 *
 * Leaks are checked by running under LeakSanitizer (the QS_SANITIZE=address
 * build): a decoded string that HG_FREE or a failed decode did not release
 * fails the run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mercury_macros.h"
#include "mercury_proc.h"
#include "mercury_proc_string.h"
#include "proc/hg_proc_pin.h"
#include "util/qs_checksum.h"

/* ---- helpers ---------------------------------------------------------- */

/* Encodes `data` with `fn` into a fresh heap buffer of exactly the encoded
 * size and returns it, so that decoders read from memory whose end the
 * sanitizer knows. */
static unsigned char *
encode_exact(hg_proc_cb_t fn, void *data, hg_size_t *size)
{
    hg_proc_t proc;
    unsigned char *copy;
    const void *src;

    assert_int_equal(
        hg_proc_create_set(NULL, NULL, 0, HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(fn(proc, data), HG_SUCCESS);
    *size = hg_proc_get_size_used(proc);
    src = hg_proc_get_extra_buf(proc);
    copy = malloc(*size ? (size_t) *size : 1);
    assert_non_null(copy);
    if (*size > 0) {
        assert_non_null(src);
        memcpy(copy, src, (size_t) *size);
    }
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
    return copy;
}

/* Decodes `size` bytes at `buf` into `data`; returns the proc's result and
 * the number of bytes consumed. */
static hg_return_t
decode(hg_proc_cb_t fn, void *buf, hg_size_t size, void *data, hg_size_t *used)
{
    hg_proc_t proc;
    hg_return_t ret;

    assert_int_equal(
        hg_proc_create_set(NULL, buf, size, HG_DECODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    ret = fn(proc, data);
    if (used != NULL)
        *used = hg_proc_get_size_used(proc);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
    return ret;
}

static void
free_struct(hg_proc_cb_t fn, void *data)
{
    hg_proc_t proc;

    assert_int_equal(
        hg_proc_create_set(NULL, NULL, 0, HG_FREE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(fn(proc, data), HG_SUCCESS);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* ---- CRC-32C ---------------------------------------------------------- */

static void
test_crc32c_vectors(void **state)
{
    static const unsigned char zeros[32];
    unsigned char ones[32];
    unsigned char buf[64 + 9];
    (void) state;

    assert_int_equal(qs_crc32c(0, "123456789", 9), 0xE3069283u);
    /* iSCSI (RFC 3720, B.4) vectors: 32 bytes of zeros and of 0xFF. */
    assert_int_equal(qs_crc32c(0, zeros, sizeof(zeros)), 0x8A9136AAu);
    memset(ones, 0xff, sizeof(ones));
    assert_int_equal(qs_crc32c(0, ones, sizeof(ones)), 0x62A8AB43u);
    assert_int_equal(qs_crc32c(0, NULL, 0), 0u);
    /* Chaining and misaligned starts give the same value. */
    for (size_t off = 0; off < 8; off++) {
        memcpy(buf + off, "123456789", 9);
        uint32_t c = qs_crc32c(0, buf + off, 4);
        assert_int_equal(qs_crc32c(c, buf + off + 4, 5), 0xE3069283u);
    }
}

/* ---- scalars ---------------------------------------------------------- */

/* The fixed-width little-endian layout, byte by byte. */
static void
test_scalar_wire_layout(void **state)
{
    unsigned char buf[32];
    hg_proc_t proc;
    uint16_t u16 = 0x0102;
    uint32_t u32 = 0x01020304u;
    uint64_t u64 = 0x0102030405060708ull;
    int8_t i8 = -2;
    hg_bool_t b = 7;
    static const unsigned char expect[] = {
        0x02, 0x01, 0x04, 0x03, 0x02, 0x01, 0x08, 0x07,
        0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0xfe, 0x01,
    };
    (void) state;

    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_uint16_t(proc, &u16), HG_SUCCESS);
    assert_int_equal(hg_proc_uint32_t(proc, &u32), HG_SUCCESS);
    assert_int_equal(hg_proc_uint64_t(proc, &u64), HG_SUCCESS);
    assert_int_equal(hg_proc_int8_t(proc, &i8), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_bool_t(proc, &b), HG_SUCCESS);
    assert_int_equal(hg_proc_get_size_used(proc), sizeof(expect));
    assert_memory_equal(buf, expect, sizeof(expect));
    assert_null(hg_proc_get_extra_buf(proc));
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

#define ROUND_TRIP(type, value)                                                \
    do {                                                                       \
        type in_ = (value), out_;                                              \
        memset(&out_, 0xa5, sizeof(out_));                                     \
        assert_int_equal(hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, \
                                            HG_NOHASH, &proc),                 \
                         HG_SUCCESS);                                          \
        assert_int_equal(hg_proc_##type(proc, &in_), HG_SUCCESS);              \
        assert_int_equal(hg_proc_get_size_used(proc), sizeof(type));           \
        assert_int_equal(hg_proc_reset(proc, buf, sizeof(type), HG_DECODE),    \
                         HG_SUCCESS);                                          \
        assert_int_equal(hg_proc_##type(proc, &out_), HG_SUCCESS);             \
        assert_memory_equal(&in_, &out_, sizeof(type));                        \
        /* One byte short must fail and leave the output alone. */             \
        memset(&out_, 0xa5, sizeof(out_));                                     \
        assert_int_equal(                                                      \
            hg_proc_reset(proc, buf, sizeof(type) - 1, HG_DECODE),             \
            HG_SUCCESS);                                                       \
        assert_int_equal(hg_proc_##type(proc, &out_), HG_OVERFLOW);            \
        assert_int_equal(hg_proc_get_size_used(proc), 0);                      \
        assert_int_equal(((unsigned char *) &out_)[0], 0xa5);                  \
        assert_int_equal(hg_proc_reset(proc, NULL, 0, HG_FREE), HG_SUCCESS);   \
        assert_int_equal(hg_proc_##type(proc, &in_), HG_SUCCESS);              \
        assert_int_equal(hg_proc_free(proc), HG_SUCCESS);                      \
    } while (0)

static void
test_scalar_round_trips(void **state)
{
    unsigned char buf[16];
    hg_proc_t proc;
    (void) state;

    ROUND_TRIP(int8_t, INT8_MIN);
    ROUND_TRIP(int8_t, INT8_MAX);
    ROUND_TRIP(int8_t, -1);
    ROUND_TRIP(uint8_t, 0);
    ROUND_TRIP(uint8_t, UINT8_MAX);
    ROUND_TRIP(int16_t, INT16_MIN);
    ROUND_TRIP(int16_t, INT16_MAX);
    ROUND_TRIP(uint16_t, UINT16_MAX);
    ROUND_TRIP(int32_t, INT32_MIN);
    ROUND_TRIP(int32_t, INT32_MAX);
    ROUND_TRIP(int32_t, -123456789);
    ROUND_TRIP(uint32_t, UINT32_MAX);
    ROUND_TRIP(uint32_t, 0xdeadbeefu);
    ROUND_TRIP(int64_t, INT64_MIN);
    ROUND_TRIP(int64_t, INT64_MAX);
    ROUND_TRIP(uint64_t, UINT64_MAX);
    ROUND_TRIP(uint64_t, 0x8000000000000001ull);
    ROUND_TRIP(hg_size_t, UINT64_MAX);
    ROUND_TRIP(hg_size_t, 0);
    ROUND_TRIP(hg_id_t, 0xfedcba9876543210ull);
    ROUND_TRIP(hg_bool_t, HG_TRUE);
    ROUND_TRIP(hg_bool_t, HG_FALSE);
    ROUND_TRIP(hg_int8_t, INT8_MIN);
    ROUND_TRIP(hg_uint8_t, UINT8_MAX);
    ROUND_TRIP(hg_int16_t, INT16_MIN);
    ROUND_TRIP(hg_uint16_t, UINT16_MAX);
    ROUND_TRIP(hg_int32_t, INT32_MIN);
    ROUND_TRIP(hg_uint32_t, UINT32_MAX);
    ROUND_TRIP(hg_int64_t, INT64_MIN);
    ROUND_TRIP(hg_uint64_t, UINT64_MAX);
    ROUND_TRIP(float, -1.5e-30f);
    ROUND_TRIP(double, 6.02214076e23);
}

static void
test_bool_rejects_other_bytes(void **state)
{
    unsigned char buf[1];
    hg_bool_t b = 42;
    hg_proc_t proc;
    (void) state;

    assert_int_equal(
        hg_proc_create_set(NULL, buf, 1, HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_hg_bool_t(proc, &b), HG_SUCCESS);
    assert_int_equal(buf[0], 1);
    buf[0] = 2;
    assert_int_equal(hg_proc_reset(proc, buf, 1, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_bool_t(proc, &b), HG_PROTOCOL_ERROR);
    assert_int_equal(b, 42);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* ---- raw bytes -------------------------------------------------------- */

static void
test_raw_and_memcpy(void **state)
{
    unsigned char buf[64], in[40], out[40];
    hg_proc_t proc;
    (void) state;

    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (unsigned char) (i * 7 + 1);
    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, in, 20), HG_SUCCESS);
    assert_int_equal(hg_proc_memcpy(proc, in + 20, 20), HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, NULL, 0), HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, NULL, 1), HG_INVALID_ARG);
    assert_int_equal(hg_proc_get_size_used(proc), 40);
    assert_int_equal(hg_proc_get_size_left(proc), 24);
    assert_memory_equal(buf, in, 40);

    assert_int_equal(hg_proc_reset(proc, buf, 40, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_memcpy(proc, out, 25), HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, out + 25, 16), HG_OVERFLOW);
    assert_int_equal(hg_proc_get_size_used(proc), 25);
    assert_int_equal(hg_proc_raw(proc, out + 25, 15), HG_SUCCESS);
    assert_memory_equal(out, in, 40);
    assert_int_equal(hg_proc_get_size_left(proc), 0);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* ---- strings ---------------------------------------------------------- */

static void
string_round_trip(const char *s)
{
    hg_string_t in = (hg_string_t) (uintptr_t) s, out = (hg_string_t) "junk";
    hg_const_string_t cin = s, cout = "junk";
    hg_size_t size, used;
    unsigned char *wire;

    wire = encode_exact(hg_proc_hg_string_t, &in, &size);
    assert_int_equal(size, 8 + (s ? strlen(s) + 1 : 0));
    assert_int_equal(decode(hg_proc_hg_string_t, wire, size, &out, &used),
                     HG_SUCCESS);
    assert_int_equal(used, size);
    if (s == NULL) {
        assert_null(out);
    } else {
        assert_non_null(out);
        assert_ptr_not_equal(out, s);
        assert_string_equal(out, s);
    }
    free_struct(hg_proc_hg_string_t, &out);
    assert_null(out);
    free(wire);

    /* The const flavour shares the wire format and also allocates. */
    wire = encode_exact(hg_proc_hg_const_string_t, &cin, &size);
    assert_int_equal(decode(hg_proc_hg_const_string_t, wire, size, &cout, NULL),
                     HG_SUCCESS);
    if (s == NULL)
        assert_null(cout);
    else
        assert_string_equal(cout, s);
    free_struct(hg_proc_hg_const_string_t, &cout);
    assert_null(cout);
    free(wire);
}

static void
test_string_round_trips(void **state)
{
    char *long_str;
    (void) state;

    string_round_trip(NULL);
    string_round_trip("");
    string_round_trip("hello, world");
    long_str = malloc(300000);
    assert_non_null(long_str);
    for (size_t i = 0; i < 299999; i++)
        long_str[i] = (char) ('a' + i % 26);
    long_str[299999] = '\0';
    string_round_trip(long_str);
    free(long_str);
}

static void
test_string_wire_layout(void **state)
{
    hg_string_t null_str = NULL, empty = (hg_string_t) "",
                ab = (hg_string_t) "ab";
    unsigned char buf[64];
    hg_proc_t proc;
    static const unsigned char expect[] = {
        0, 0, 0, 0, 0, 0, 0, 0,             /* NULL      */
        1, 0, 0, 0, 0, 0, 0, 0, 0,          /* ""        */
        3, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 0 /* "ab" */
    };
    (void) state;

    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_t(proc, &null_str), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_t(proc, &empty), HG_SUCCESS);
    assert_int_equal(hg_proc_hg_string_t(proc, &ab), HG_SUCCESS);
    assert_int_equal(hg_proc_get_size_used(proc), sizeof(expect));
    assert_memory_equal(buf, expect, sizeof(expect));
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* Decodes hostile bytes as a string and expects `want`; the field must be
 * NULL afterwards and nothing may stay allocated. */
static void
expect_bad_string(const unsigned char *bytes, size_t len, hg_return_t want)
{
    unsigned char *copy = malloc(len ? len : 1);
    hg_string_t out = (hg_string_t) "junk";

    assert_non_null(copy);
    memcpy(copy, bytes, len);
    assert_int_equal(decode(hg_proc_hg_string_t, copy, len, &out, NULL), want);
    assert_null(out);
    free(copy);
}

static void
test_string_hostile(void **state)
{
    /* Count larger than the bytes that follow. */
    static const unsigned char too_long[] = {4, 0, 0, 0, 0, 0, 0, 0, 'a', 0};
    /* Absurd counts: 2^63 and 2^64 - 1. */
    static const unsigned char huge[] = {0, 0, 0, 0, 0, 0, 0, 0x80, 'a', 0};
    static const unsigned char max[] = {0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0};
    /* Right count, no terminating NUL. */
    static const unsigned char no_nul[] = {3, 0, 0,   0,   0,  0,
                                           0, 0, 'a', 'b', 'c'};
    /* A NUL inside the string. */
    static const unsigned char inner_nul[] = {3, 0, 0,   0, 0, 0,
                                              0, 0, 'a', 0, 0};
    /* Truncated count. */
    static const unsigned char short_count[] = {1, 0, 0};
    (void) state;

    expect_bad_string(too_long, sizeof(too_long), HG_OVERFLOW);
    expect_bad_string(huge, sizeof(huge), HG_OVERFLOW);
    expect_bad_string(max, sizeof(max), HG_OVERFLOW);
    expect_bad_string(no_nul, sizeof(no_nul), HG_PROTOCOL_ERROR);
    expect_bad_string(inner_nul, sizeof(inner_nul), HG_PROTOCOL_ERROR);
    expect_bad_string(short_count, sizeof(short_count), HG_OVERFLOW);
    expect_bad_string(short_count, 0, HG_OVERFLOW);
}

/* ---- generated structures ------------------------------------------- */

MERCURY_GEN_PROC(point_t, ((int32_t) (x))((int32_t) (y))((hg_string_t) (label)))

MERCURY_GEN_PROC(shape_t,
                 ((uint8_t) (kind))((point_t) (origin))((point_t) (corner))(
                     (hg_const_string_t) (name))((hg_bool_t) (filled)))

/* Forty fields, well past the 32 the API promises. */
MERCURY_GEN_PROC(
    wide_t,
    ((int8_t) (f00))((uint8_t) (f01))((int16_t) (f02))((uint16_t) (f03))(
        (int32_t) (f04))((uint32_t) (f05))((int64_t) (f06))((uint64_t) (f07))(
        (hg_size_t) (f08))((hg_bool_t) (f09))((hg_string_t) (f10))(
        (hg_id_t) (f11))((int8_t) (f12))((uint8_t) (f13))((int16_t) (f14))(
        (uint16_t) (f15))((int32_t) (f16))((uint32_t) (f17))((int64_t) (f18))(
        (uint64_t) (f19))((hg_string_t) (f20))((hg_const_string_t) (f21))(
        (double) (f22))((float) (f23))((int32_t) (f24))((int32_t) (f25))(
        (int32_t) (f26))((int32_t) (f27))((int32_t) (f28))((int32_t) (f29))(
        (int32_t) (f30))((int32_t) (f31))((int32_t) (f32))((int32_t) (f33))(
        (point_t) (f34))((int32_t) (f35))((int32_t) (f36))((int32_t) (f37))(
        (hg_string_t) (f38))((uint64_t) (f39)))

/* A proc for a structure the program declared itself. */
struct pair {
    uint16_t a;
    hg_string_t b;
};
typedef struct pair pair_t;
MERCURY_GEN_STRUCT_PROC(pair_t, ((uint16_t) (a))((hg_string_t) (b)))

static void
fill_wide(wide_t *w)
{
    memset(w, 0, sizeof(*w));
    w->f00 = INT8_MIN;
    w->f01 = UINT8_MAX;
    w->f02 = INT16_MIN;
    w->f03 = UINT16_MAX;
    w->f04 = INT32_MIN;
    w->f05 = UINT32_MAX;
    w->f06 = INT64_MIN;
    w->f07 = UINT64_MAX;
    w->f08 = 1234567890123ull;
    w->f09 = HG_TRUE;
    w->f10 = (hg_string_t) "ten";
    w->f11 = 11;
    w->f12 = -12;
    w->f13 = 13;
    w->f14 = -14;
    w->f15 = 15;
    w->f16 = -16;
    w->f17 = 17;
    w->f18 = -18;
    w->f19 = 19;
    w->f20 = NULL;
    w->f21 = "";
    w->f22 = -2.5;
    w->f23 = 3.25f;
    w->f24 = 24;
    w->f25 = 25;
    w->f26 = 26;
    w->f27 = 27;
    w->f28 = 28;
    w->f29 = 29;
    w->f30 = 30;
    w->f31 = 31;
    w->f32 = 32;
    w->f33 = 33;
    w->f34.x = 340;
    w->f34.y = -341;
    w->f34.label = (hg_string_t) "thirty-four";
    w->f35 = 35;
    w->f36 = 36;
    w->f37 = 37;
    w->f38 = (hg_string_t) "thirty-eight";
    w->f39 = 39;
}

static void
test_gen_proc_40_fields(void **state)
{
    wide_t in, out;
    hg_size_t size, used;
    unsigned char *wire;
    (void) state;

    fill_wide(&in);
    wire = encode_exact(hg_proc_wide_t, &in, &size);
    memset(&out, 0x5a, sizeof(out));
    assert_int_equal(decode(hg_proc_wide_t, wire, size, &out, &used),
                     HG_SUCCESS);
    assert_int_equal(used, size);
    assert_int_equal(out.f00, INT8_MIN);
    assert_int_equal(out.f01, UINT8_MAX);
    assert_int_equal(out.f02, INT16_MIN);
    assert_int_equal(out.f03, UINT16_MAX);
    assert_true(out.f04 == INT32_MIN);
    assert_true(out.f05 == UINT32_MAX);
    assert_true(out.f06 == INT64_MIN);
    assert_true(out.f07 == UINT64_MAX);
    assert_true(out.f08 == 1234567890123ull);
    assert_int_equal(out.f09, HG_TRUE);
    assert_string_equal(out.f10, "ten");
    assert_int_equal(out.f11, 11);
    assert_int_equal(out.f12, -12);
    assert_int_equal(out.f13, 13);
    assert_int_equal(out.f14, -14);
    assert_int_equal(out.f15, 15);
    assert_int_equal(out.f16, -16);
    assert_int_equal(out.f17, 17);
    assert_int_equal(out.f18, -18);
    assert_int_equal(out.f19, 19);
    assert_null(out.f20);
    assert_string_equal(out.f21, "");
    assert_true(out.f22 == -2.5);
    assert_true(out.f23 == 3.25f);
    assert_int_equal(out.f24, 24);
    assert_int_equal(out.f33, 33);
    assert_int_equal(out.f34.x, 340);
    assert_int_equal(out.f34.y, -341);
    assert_string_equal(out.f34.label, "thirty-four");
    assert_int_equal(out.f37, 37);
    assert_string_equal(out.f38, "thirty-eight");
    assert_int_equal(out.f39, 39);

    free_struct(hg_proc_wide_t, &out);
    assert_null(out.f10);
    assert_null(out.f21);
    assert_null(out.f34.label);
    assert_null(out.f38);
    free(wire);
}

static void
test_gen_proc_nested(void **state)
{
    shape_t in, out;
    pair_t pin = {7, (hg_string_t) "seven"}, pout;
    hg_size_t size;
    unsigned char *wire;
    (void) state;

    memset(&in, 0, sizeof(in));
    in.kind = 3;
    in.origin.x = -1;
    in.origin.y = 2;
    in.origin.label = (hg_string_t) "o";
    in.corner.x = 100;
    in.corner.y = -200;
    in.corner.label = NULL;
    in.name = "box";
    in.filled = HG_TRUE;

    wire = encode_exact(hg_proc_shape_t, &in, &size);
    /* kind 1 + origin (4 + 4 + 8 + 2) + corner (4 + 4 + 8) + name (8 + 4)
     * + filled 1 */
    assert_int_equal(size, 1 + 18 + 16 + 12 + 1);
    assert_int_equal(decode(hg_proc_shape_t, wire, size, &out, NULL),
                     HG_SUCCESS);
    assert_int_equal(out.kind, 3);
    assert_int_equal(out.origin.x, -1);
    assert_int_equal(out.origin.y, 2);
    assert_string_equal(out.origin.label, "o");
    assert_int_equal(out.corner.x, 100);
    assert_int_equal(out.corner.y, -200);
    assert_null(out.corner.label);
    assert_string_equal(out.name, "box");
    assert_int_equal(out.filled, HG_TRUE);
    free_struct(hg_proc_shape_t, &out);
    free(wire);

    wire = encode_exact(hg_proc_pair_t, &pin, &size);
    assert_int_equal(decode(hg_proc_pair_t, wire, size, &pout, NULL),
                     HG_SUCCESS);
    assert_int_equal(pout.a, 7);
    assert_string_equal(pout.b, "seven");
    free_struct(hg_proc_pair_t, &pout);
    free(wire);
}

/*
 * Every truncation of a valid encoding must fail with HG_OVERFLOW, read
 * nothing past the end (the copy is exactly `len` bytes of heap) and free
 * whatever the fields decoded before the cut (LeakSanitizer checks).
 */
static void
test_truncated_decode(void **state)
{
    wide_t in, out;
    shape_t sin, sout;
    hg_size_t size, used;
    unsigned char *wire;
    (void) state;

    fill_wide(&in);
    wire = encode_exact(hg_proc_wide_t, &in, &size);
    for (hg_size_t len = 0; len < size; len++) {
        unsigned char *copy = malloc(len ? (size_t) len : 1);
        assert_non_null(copy);
        memcpy(copy, wire, (size_t) len);
        assert_int_equal(decode(hg_proc_wide_t, copy, len, &out, &used),
                         HG_OVERFLOW);
        assert_true(used <= len);
        free(copy);
    }
    free(wire);

    memset(&sin, 0, sizeof(sin));
    sin.origin.label = (hg_string_t) "left";
    sin.corner.label = (hg_string_t) "right";
    sin.name = "name";
    wire = encode_exact(hg_proc_shape_t, &sin, &size);
    for (hg_size_t len = 0; len < size; len++) {
        unsigned char *copy = malloc(len ? (size_t) len : 1);
        assert_non_null(copy);
        memcpy(copy, wire, (size_t) len);
        assert_int_equal(decode(hg_proc_shape_t, copy, len, &sout, NULL),
                         HG_OVERFLOW);
        free(copy);
    }
    free(wire);
}

/* A decode that fails on a late field releases the strings of the earlier
 * ones and clears them. */
static void
test_failed_decode_releases_fields(void **state)
{
    shape_t in, out;
    hg_size_t size;
    unsigned char *wire;
    (void) state;

    memset(&in, 0, sizeof(in));
    in.origin.label = (hg_string_t) "first";
    in.corner.label = (hg_string_t) "second";
    in.name = "third";
    in.filled = HG_TRUE;
    wire = encode_exact(hg_proc_shape_t, &in, &size);
    /* The last byte is the boolean: make it invalid. */
    wire[size - 1] = 9;
    memset(&out, 0, sizeof(out));
    assert_int_equal(decode(hg_proc_shape_t, wire, size, &out, NULL),
                     HG_PROTOCOL_ERROR);
    assert_null(out.origin.label);
    assert_null(out.corner.label);
    assert_null(out.name);
    free(wire);
}

/* ---- overflow into the extra buffer ---------------------------------- */

static void
test_encode_overflow(void **state)
{
    const size_t big = 1u << 20;
    unsigned char user[64], *in, *out;
    uint32_t head = 0xa1b2c3d4u, head_out;
    hg_proc_t proc;
    unsigned char *extra;
    hg_size_t used;
    (void) state;

    in = malloc(big);
    out = malloc(big);
    assert_non_null(in);
    assert_non_null(out);
    for (size_t i = 0; i < big; i++)
        in[i] = (unsigned char) (i * 131 + (i >> 9));

    assert_int_equal(hg_proc_create_set(NULL, user, sizeof(user), HG_ENCODE,
                                        HG_NOHASH, &proc),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_uint32_t(proc, &head), HG_SUCCESS);
    assert_null(hg_proc_get_extra_buf(proc));
    assert_int_equal(hg_proc_raw(proc, in, big), HG_SUCCESS);
    used = hg_proc_get_size_used(proc);
    assert_int_equal(used, 4 + big);
    assert_int_equal(hg_proc_get_size(proc), sizeof(user));
    assert_ptr_equal(hg_proc_get_buf(proc), user);
    extra = hg_proc_get_extra_buf(proc);
    assert_non_null(extra);
    assert_true(hg_proc_get_extra_size(proc) >= used);
    /* The extra buffer holds everything, from the first byte. */
    assert_memory_equal(extra, user, 4);
    assert_memory_equal(extra + 4, in, big);

    /* Decoding from the proc's own extra buffer: the reset keeps it alive
     * (ASan would report a use after free otherwise). */
    assert_int_equal(hg_proc_reset(proc, extra, used, HG_DECODE), HG_SUCCESS);
    assert_null(hg_proc_get_extra_buf(proc));
    assert_int_equal(hg_proc_uint32_t(proc, &head_out), HG_SUCCESS);
    assert_int_equal(head_out, head);
    assert_int_equal(hg_proc_raw(proc, out, big), HG_SUCCESS);
    assert_memory_equal(out, in, big);
    /* A second reset into the same memory keeps it too; a reset elsewhere
     * frees it (LeakSanitizer checks). */
    assert_int_equal(hg_proc_reset(proc, extra + 4, 4, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, out, 4), HG_SUCCESS);
    assert_memory_equal(out, in, 4);
    assert_int_equal(hg_proc_reset(proc, user, sizeof(user), HG_DECODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);

    /* Take ownership of the extra buffer, then decode from it. */
    assert_int_equal(hg_proc_create_set(NULL, user, sizeof(user), HG_ENCODE,
                                        HG_NOHASH, &proc),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_uint32_t(proc, &head), HG_SUCCESS);
    assert_int_equal(hg_proc_raw(proc, in, big), HG_SUCCESS);
    extra = hg_proc_get_extra_buf(proc);
    used = hg_proc_get_size_used(proc);
    assert_int_equal(hg_proc_set_extra_buf_is_mine(proc, HG_TRUE), HG_SUCCESS);
    assert_int_equal(hg_proc_reset(proc, extra, used, HG_DECODE), HG_SUCCESS);
    assert_null(hg_proc_get_extra_buf(proc));
    assert_int_equal(hg_proc_uint32_t(proc, &head_out), HG_SUCCESS);
    assert_int_equal(head_out, head);
    assert_int_equal(hg_proc_raw(proc, out, big), HG_SUCCESS);
    assert_memory_equal(out, in, big);
    assert_int_equal(hg_proc_get_size_used(proc), used);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
    free(extra);
    free(in);
    free(out);
}

/* Many small fields past a tiny buffer: the buffer grows as needed and the
 * result is identical to encoding into a buffer that was big enough. */
static void
test_encode_overflow_small_fields(void **state)
{
    unsigned char small[3];
    unsigned char *big;
    hg_proc_t a, b;
    const uint32_t count = 100000;
    (void) state;

    big = malloc(count * 4);
    assert_non_null(big);
    assert_int_equal(hg_proc_create_set(NULL, small, sizeof(small), HG_ENCODE,
                                        HG_NOHASH, &a),
                     HG_SUCCESS);
    assert_int_equal(
        hg_proc_create_set(NULL, big, count * 4, HG_ENCODE, HG_NOHASH, &b),
        HG_SUCCESS);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v = i * 2654435761u;
        assert_int_equal(hg_proc_uint32_t(a, &v), HG_SUCCESS);
        assert_int_equal(hg_proc_uint32_t(b, &v), HG_SUCCESS);
    }
    assert_int_equal(hg_proc_get_size_used(a), count * 4);
    assert_null(hg_proc_get_extra_buf(b));
    assert_memory_equal(hg_proc_get_extra_buf(a), big, count * 4);
    /* hg_proc_free() must release the extra buffer (LeakSanitizer). */
    assert_int_equal(hg_proc_free(a), HG_SUCCESS);
    assert_int_equal(hg_proc_free(b), HG_SUCCESS);
    free(big);
}

/* ---- save_ptr / restore_ptr ----------------------------------------- */

static void
test_save_restore_ptr(void **state)
{
    unsigned char buf[16];
    hg_proc_t proc;
    unsigned char *p;
    uint32_t v = 77, vout;
    (void) state;

    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    p = hg_proc_save_ptr(proc, 4);
    assert_ptr_equal(p, buf);
    assert_int_equal(hg_proc_uint32_t(proc, &v), HG_SUCCESS);
    memcpy(p, "abcd", 4);
    assert_int_equal(hg_proc_restore_ptr(proc, p, 4), HG_SUCCESS);
    /* Reserving past the end moves to the extra buffer. */
    p = hg_proc_save_ptr(proc, 100);
    assert_non_null(p);
    assert_ptr_equal(p, (unsigned char *) hg_proc_get_extra_buf(proc) + 8);
    memset(p, 'z', 100);
    assert_int_equal(hg_proc_get_size_used(proc), 108);
    assert_memory_equal(hg_proc_get_extra_buf(proc), "abcd", 4);

    assert_int_equal(hg_proc_reset(proc, buf, 8, HG_DECODE), HG_SUCCESS);
    p = hg_proc_save_ptr(proc, 4);
    assert_ptr_equal(p, buf);
    assert_null(hg_proc_save_ptr(proc, 5));
    assert_int_equal(hg_proc_get_size_used(proc), 4);
    assert_int_equal(hg_proc_uint32_t(proc, &vout), HG_SUCCESS);
    assert_int_equal(vout, 77);

    assert_int_equal(hg_proc_reset(proc, NULL, 0, HG_FREE), HG_SUCCESS);
    assert_null(hg_proc_save_ptr(proc, 1));
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* ---- checksums -------------------------------------------------------- */

static void
test_checksum(void **state)
{
    unsigned char buf[256], data[200], out[200];
    hg_proc_t enc, dec;
    uint32_t crc, crc2;
    (void) state;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char) (i ^ 0x5c);
    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_CRC32, &enc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_raw(enc, data, sizeof(data)), HG_SUCCESS);
    assert_int_equal(hg_proc_flush(enc), HG_SUCCESS);
    assert_int_equal(hg_proc_checksum_get(enc, &crc, sizeof(crc)), HG_SUCCESS);
    assert_int_equal(crc, qs_crc32c(0, data, sizeof(data)));
    /* The checksum can follow the data it covers in the same buffer. */
    assert_int_equal(hg_proc_uint32_t(enc, &crc), HG_SUCCESS);
    assert_int_equal(hg_proc_checksum_get(enc, &crc2, sizeof(crc2)),
                     HG_SUCCESS);
    assert_int_equal(crc2, crc);
    assert_int_equal(hg_proc_checksum_get(enc, &crc2, 8), HG_INVALID_ARG);
    assert_int_equal(hg_proc_checksum_get(enc, NULL, 4), HG_INVALID_ARG);

    assert_int_equal(hg_proc_create_set(NULL, buf, sizeof(data) + 4, HG_DECODE,
                                        HG_CRC32, &dec),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_raw(dec, out, sizeof(out)), HG_SUCCESS);
    assert_int_equal(hg_proc_flush(dec), HG_SUCCESS);
    assert_int_equal(hg_proc_uint32_t(dec, &crc2), HG_SUCCESS);
    assert_int_equal(hg_proc_checksum_verify(dec, &crc2, sizeof(crc2)),
                     HG_SUCCESS);

    /* Every single flipped bit of the data is detected. */
    for (size_t bit = 0; bit < sizeof(data) * 8; bit++) {
        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
        assert_int_equal(hg_proc_reset(dec, buf, sizeof(data) + 4, HG_DECODE),
                         HG_SUCCESS);
        assert_int_equal(hg_proc_raw(dec, out, sizeof(out)), HG_SUCCESS);
        assert_int_equal(hg_proc_flush(dec), HG_SUCCESS);
        assert_int_equal(hg_proc_checksum_verify(dec, &crc, sizeof(crc)),
                         HG_CHECKSUM_ERROR);
        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
    }
    assert_int_equal(hg_proc_free(enc), HG_SUCCESS);
    assert_int_equal(hg_proc_free(dec), HG_SUCCESS);
}

/* The checksum covers the whole encoding after an overflow too, and a proc
 * checksums whatever was reached without an explicit flush. */
static void
test_checksum_overflow_and_implicit_flush(void **state)
{
    unsigned char small[8];
    hg_proc_t proc;
    wide_t w;
    uint32_t crc;
    (void) state;

    fill_wide(&w);
    assert_int_equal(hg_proc_create_set(NULL, small, sizeof(small), HG_ENCODE,
                                        HG_CRC32, &proc),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_wide_t(proc, &w), HG_SUCCESS);
    assert_non_null(hg_proc_get_extra_buf(proc));
    assert_int_equal(hg_proc_checksum_get(proc, &crc, sizeof(crc)), HG_SUCCESS);
    assert_int_equal(crc, qs_crc32c(0, hg_proc_get_extra_buf(proc),
                                    hg_proc_get_size_used(proc)));
    /* A reset restarts the checksum. */
    assert_int_equal(hg_proc_reset(proc, small, sizeof(small), HG_ENCODE),
                     HG_SUCCESS);
    assert_int_equal(hg_proc_checksum_get(proc, &crc, sizeof(crc)), HG_SUCCESS);
    assert_int_equal(crc, 0);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

static void
test_hash_kinds(void **state)
{
    hg_proc_t proc = HG_PROC_NULL;
    uint32_t crc = 0;
    (void) state;

    assert_int_equal(hg_proc_create(NULL, HG_CRC16, &proc), HG_OPNOTSUPPORTED);
    assert_int_equal(hg_proc_create(NULL, HG_CRC64, &proc), HG_OPNOTSUPPORTED);
    assert_int_equal(hg_proc_create(NULL, (hg_proc_hash_t) 99, &proc),
                     HG_INVALID_ARG);
    assert_null(proc);
    assert_int_equal(hg_proc_create(NULL, HG_NOHASH, &proc), HG_SUCCESS);
    assert_int_equal(hg_proc_flush(proc), HG_SUCCESS);
    assert_int_equal(hg_proc_checksum_get(proc, &crc, sizeof(crc)),
                     HG_OPNOTSUPPORTED);
    assert_int_equal(hg_proc_checksum_verify(proc, &crc, sizeof(crc)),
                     HG_OPNOTSUPPORTED);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
}

/* ---- arguments and accessors ---------------------------------------- */

static void
test_arguments(void **state)
{
    hg_proc_t proc;
    unsigned char buf[4];
    int32_t v = 0;
    hg_class_t *fake_class = (hg_class_t *) (uintptr_t) 0x1000;
    (void) state;

    assert_int_equal(hg_proc_create(NULL, HG_NOHASH, NULL), HG_INVALID_ARG);
    assert_int_equal(
        hg_proc_create_set(NULL, buf, 4, HG_ENCODE, HG_NOHASH, NULL),
        HG_INVALID_ARG);
    assert_int_equal(hg_proc_reset(HG_PROC_NULL, buf, 4, HG_ENCODE),
                     HG_INVALID_ARG);
    assert_int_equal(hg_proc_free(HG_PROC_NULL), HG_SUCCESS);
    assert_int_equal(hg_proc_int32_t(HG_PROC_NULL, &v), HG_INVALID_ARG);
    assert_int_equal(hg_proc_get_op(HG_PROC_NULL), HG_FREE);
    assert_null(hg_proc_get_class(HG_PROC_NULL));

    assert_int_equal(hg_proc_create(fake_class, HG_CRC32, &proc), HG_SUCCESS);
    assert_ptr_equal(hg_proc_get_class(proc), fake_class);
    assert_int_equal(hg_proc_get_op(proc), HG_FREE);
    assert_int_equal(hg_proc_reset(proc, NULL, 4, HG_DECODE), HG_INVALID_ARG);
    assert_int_equal(hg_proc_reset(proc, buf, 4, (hg_proc_op_t) 7),
                     HG_INVALID_ARG);
    assert_int_equal(hg_proc_reset(proc, buf, 4, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_get_op(proc), HG_DECODE);
    assert_int_equal(hg_proc_get_size(proc), 4);
    assert_int_equal(hg_proc_int32_t(proc, NULL), HG_INVALID_ARG);
    assert_int_equal(hg_proc_hg_string_t(proc, NULL), HG_INVALID_ARG);
    assert_int_equal(hg_proc_point_t(proc, NULL), HG_INVALID_ARG);
    /* Decoding from no buffer fails cleanly. */
    assert_int_equal(hg_proc_reset(proc, NULL, 0, HG_DECODE), HG_SUCCESS);
    assert_int_equal(hg_proc_int32_t(proc, &v), HG_OVERFLOW);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);

    /* hg_proc_void is the "no structure" proc that MERCURY_REGISTER uses. */
    hg_proc_cb_t none = hg_proc_void;
    assert_null(none);
}

/* MERCURY_REGISTER must expand to an HG_Register_name() call that compiles
 * with generated types and with void. sizeof does not evaluate the call, so
 * this test checks the expansion without needing an HG class. */
static void
test_register_macro(void **state)
{
    (void) state;

    assert_int_equal(
        sizeof(MERCURY_REGISTER(NULL, "shape", shape_t, point_t, NULL)),
        sizeof(hg_id_t));
    assert_int_equal(sizeof(MERCURY_REGISTER(NULL, "none", void, void, NULL)),
                     sizeof(hg_id_t));
}

/* Objects pinned for an encoded operation are let go at the next reset,
 * whatever its direction, and at the proc's free; a reset with nothing
 * pinned releases nothing. */
static int released;

static void
count_release(void *obj)
{
    (void) obj;
    released++;
}

static void
test_reset_releases_pins(void **state)
{
    unsigned char buf[16];
    int a, b, c, d;
    hg_proc_t proc;
    (void) state;

    released = 0;
    assert_int_equal(
        hg_proc_create_set(NULL, buf, sizeof(buf), HG_ENCODE, HG_NOHASH, &proc),
        HG_SUCCESS);
    assert_int_equal(hg_proc_pin(proc, &a, count_release), HG_SUCCESS);
    assert_int_equal(hg_proc_pin(proc, &b, count_release), HG_SUCCESS);
    assert_int_equal(released, 0);
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_DECODE),
                     HG_SUCCESS);
    assert_int_equal(released, 2);
    assert_int_equal(hg_proc_reset(proc, buf, sizeof(buf), HG_ENCODE),
                     HG_SUCCESS);
    assert_int_equal(released, 2);
    assert_int_equal(hg_proc_pin(proc, &c, count_release), HG_SUCCESS);
    assert_int_equal(hg_proc_reset(proc, NULL, 0, HG_FREE), HG_SUCCESS);
    assert_int_equal(released, 3);
    assert_int_equal(hg_proc_pin(proc, &d, count_release), HG_SUCCESS);
    assert_int_equal(hg_proc_free(proc), HG_SUCCESS);
    assert_int_equal(released, 4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_vectors),
        cmocka_unit_test(test_scalar_wire_layout),
        cmocka_unit_test(test_scalar_round_trips),
        cmocka_unit_test(test_bool_rejects_other_bytes),
        cmocka_unit_test(test_raw_and_memcpy),
        cmocka_unit_test(test_string_round_trips),
        cmocka_unit_test(test_string_wire_layout),
        cmocka_unit_test(test_string_hostile),
        cmocka_unit_test(test_gen_proc_40_fields),
        cmocka_unit_test(test_gen_proc_nested),
        cmocka_unit_test(test_truncated_decode),
        cmocka_unit_test(test_failed_decode_releases_fields),
        cmocka_unit_test(test_encode_overflow),
        cmocka_unit_test(test_encode_overflow_small_fields),
        cmocka_unit_test(test_save_restore_ptr),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_checksum_overflow_and_implicit_flush),
        cmocka_unit_test(test_hash_kinds),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_register_macro),
        cmocka_unit_test(test_reset_releases_pins),
    };

    return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
