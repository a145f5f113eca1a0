/*
 * Tests of the verbs plugin.
 *
 * Two groups. The first needs no device: the pure decoders (address
 * strings, serialized addresses and memory handles, headers, connection
 * data) against valid and hostile input, and initialization failing fast
 * with NA_NODEV on a machine with no RDMA device. The second runs real
 * verbs traffic between two classes in this process, through the public NA
 * API; without a device each of its cases is skipped with the reason
 * printed. This file holds the first group and main; test_verbs_live.c
 * holds the second. tests/verbs-vm runs this binary inside a qemu guest
 * with Soft-RoCE, where the second group runs.
 *
 * The info string comes from QS_VERBS_INFO (default
 * "verbs://rxe0/10.11.0.1:0"); port 0 gives every class its own port.
 */
#include "test_verbs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const struct na_class_ops na_verbs_class_ops;

const char *
test_info(void)
{
    const char *s = getenv("QS_VERBS_INFO");

    return s != NULL && s[0] != '\0' ? s : "verbs://rxe0/10.11.0.1:0";
}

bool
have_rdma_device(void)
{
    DIR *d = opendir("/sys/class/infiniband");
    struct dirent *e;
    bool found = false;

    if (d == NULL)
        return false;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            found = true;
    closedir(d);
    return found;
}

uint64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* Without a device: pure decoders and the fast failure.               */
/* ------------------------------------------------------------------ */

static void
test_addr_parse_valid(void **state)
{
    struct na_verbs_addr_parts p;

    (void) state;
    assert_int_equal(na_verbs_addr_parse("verbs://rxe0/10.11.0.1:0", &p),
                     NA_SUCCESS);
    assert_string_equal(p.device, "rxe0");
    assert_true(p.has_ip && p.has_port);
    assert_int_equal(p.ip, 0x0a0b0001u);
    assert_int_equal(p.port, 0);

    assert_int_equal(na_verbs_addr_parse("10.11.0.1:18515", &p), NA_SUCCESS);
    assert_string_equal(p.device, "");
    assert_int_equal(p.port, 18515);

    assert_int_equal(na_verbs_addr_parse("verbs+verbs://mlx5_0/1.2.3.4", &p),
                     NA_SUCCESS);
    assert_string_equal(p.device, "mlx5_0");
    assert_true(p.has_ip);
    assert_false(p.has_port);

    /* Device only, and nothing at all: the class picks the address. */
    assert_int_equal(na_verbs_addr_parse("rxe0/", &p), NA_SUCCESS);
    assert_false(p.has_ip);
    assert_int_equal(na_verbs_addr_parse("", &p), NA_SUCCESS);
    assert_false(p.has_ip);
}

static void
test_addr_parse_bad(void **state)
{
    static const char *bad[] = {
        "verbs://rxe0/10.11.0.1:65536",
        "verbs://rxe0/10.11.0.1:",
        "verbs://rxe0/10.11.0.1:-1",
        "verbs://rxe0/10.11.0.1:12a",
        "verbs://rxe0/10.11.0.1:000001",
        "verbs://rxe0/10.11.0.256:1",
        "verbs://rxe0/host.example:1",
        "verbs://rxe0/10.11.0.1/x",
        "verbs:///10.11.0.1:1",
        "tcp://10.11.0.1:1",
        "verbs://rx e0/10.11.0.1:1",
        "verbs://:1",
        "verbs://10.11.0.1:1:2",
        "verbs://"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
        "1.2.3.4",
    };
    struct na_verbs_addr_parts p;

    (void) state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (na_verbs_addr_parse(bad[i], &p) != NA_INVALID_ARG)
            fail_msg("accepted bad address \"%s\"", bad[i]);
    }
    assert_int_equal(na_verbs_addr_parse(NULL, &p), NA_INVALID_ARG);
}

static void
test_addr_format_roundtrip(void **state)
{
    char buf[NA_VERBS_ADDR_STRING_MAX];
    struct na_verbs_addr_parts p;
    size_t n;

    (void) state;
    n = na_verbs_addr_format(buf, sizeof(buf), "rxe0", 0x0a0b0001u, 40000);
    assert_string_equal(buf, "verbs://rxe0/10.11.0.1:40000");
    assert_int_equal(n, strlen(buf));
    assert_int_equal(na_verbs_addr_parse(buf, &p), NA_SUCCESS);
    assert_int_equal(p.ip, 0x0a0b0001u);
    assert_int_equal(p.port, 40000);
    /* Too small a buffer: truncated, and the needed length is reported. */
    n = na_verbs_addr_format(buf, 8, NULL, 0xffffffffu, 65535);
    assert_int_equal(n, strlen("verbs://255.255.255.255:65535"));
    assert_true(n < NA_VERBS_ADDR_STRING_MAX);
}

static void
test_addr_serialize_junk(void **state)
{
    uint8_t buf[NA_VERBS_ADDR_SERIALIZE_SIZE + 1];
    uint32_t ip;
    uint16_t port;

    (void) state;
    na_verbs_addr_encode(buf, 0x0a0b0001u, 1234);
    assert_int_equal(
        na_verbs_addr_decode(buf, NA_VERBS_ADDR_SERIALIZE_SIZE, &ip, &port),
        NA_SUCCESS);
    assert_int_equal(ip, 0x0a0b0001u);
    assert_int_equal(port, 1234);
    assert_int_equal(na_verbs_addr_decode(buf, 3, &ip, &port), NA_MSGSIZE);
    assert_int_equal(na_verbs_addr_decode(buf, sizeof(buf), &ip, &port),
                     NA_MSGSIZE);
    buf[0] ^= 1;
    assert_int_equal(
        na_verbs_addr_decode(buf, NA_VERBS_ADDR_SERIALIZE_SIZE, &ip, &port),
        NA_PROTOCOL_ERROR);
    na_verbs_addr_encode(buf, 1, 0); /* port 0 names nobody */
    assert_int_equal(
        na_verbs_addr_decode(buf, NA_VERBS_ADDR_SERIALIZE_SIZE, &ip, &port),
        NA_PROTOCOL_ERROR);
}

static void
test_mem_handle_junk(void **state)
{
    struct na_verbs_mem_desc in = {.addr = 0x7f0000001000ull,
                                   .len = 65536,
                                   .rkey = 0x1234,
                                   .flags = NA_MEM_READWRITE},
                             out;
    uint8_t buf[NA_VERBS_MEM_SERIALIZE_SIZE];
    uint8_t junk[NA_VERBS_MEM_SERIALIZE_SIZE];

    (void) state;
    na_verbs_mem_encode(buf, &in);
    assert_int_equal(na_verbs_mem_decode(buf, sizeof(buf), &out), NA_SUCCESS);
    assert_int_equal(out.addr, in.addr);
    assert_int_equal(out.len, in.len);
    assert_int_equal(out.rkey, in.rkey);
    assert_int_equal(out.flags, in.flags);

    for (size_t n = 0; n < sizeof(buf); n++)
        assert_int_equal(na_verbs_mem_decode(buf, n, &out), NA_MSGSIZE);
    assert_int_equal(na_verbs_mem_decode(NULL, sizeof(buf), &out), NA_MSGSIZE);

    /* Flags outside the three defined values. */
    memcpy(junk, buf, sizeof(buf));
    junk[5] = 0x07;
    assert_int_equal(na_verbs_mem_decode(junk, sizeof(junk), &out),
                     NA_PROTOCOL_ERROR);
    junk[5] = 0;
    assert_int_equal(na_verbs_mem_decode(junk, sizeof(junk), &out),
                     NA_PROTOCOL_ERROR);
    /* A region that wraps around the address space. */
    in.addr = UINT64_MAX - 10;
    in.len = 11;
    na_verbs_mem_encode(junk, &in);
    assert_int_equal(na_verbs_mem_decode(junk, sizeof(junk), &out),
                     NA_PROTOCOL_ERROR);
    /* Every single-byte corruption of the header is refused. */
    for (size_t i = 0; i < 8; i++) {
        if (i == 5)
            continue; /* flags: covered above */
        memcpy(junk, buf, sizeof(buf));
        junk[i] ^= 0x5a;
        assert_int_equal(na_verbs_mem_decode(junk, sizeof(junk), &out),
                         NA_PROTOCOL_ERROR);
    }
    /* Pseudo-random junk never crashes and is almost always refused. */
    srand(7);
    for (int round = 0; round < 10000; round++) {
        for (size_t i = 0; i < sizeof(junk); i++)
            junk[i] = (uint8_t) rand();
        assert_int_not_equal(na_verbs_mem_decode(junk, sizeof(junk), &out),
                             NA_SUCCESS);
    }
}

static void
test_msg_hdr_and_conn_data(void **state)
{
    struct na_verbs_msg_hdr h = {.type = NA_VERBS_MSG_EXPECTED,
                                 .src_ctx = 2,
                                 .dst_ctx = 5,
                                 .credits = 17,
                                 .tag = 0xdeadbeef,
                                 .ctrl_ack = 3},
                            o;
    struct na_verbs_conn_data c = {.ip = 0x0a0b0001u,
                                   .port = 7,
                                   .credits = 32,
                                   .max_payload = 4096},
                              co;
    uint8_t buf[64] = {0};

    (void) state;
    na_verbs_msg_hdr_encode(buf, &h);
    assert_int_equal(na_verbs_msg_hdr_decode(buf, 100, &o), NA_SUCCESS);
    assert_int_equal(o.type, h.type);
    assert_int_equal(o.credits, 17);
    assert_int_equal(o.tag, 0xdeadbeefu);
    assert_int_equal(o.ctrl_ack, 3);
    assert_int_equal(o.src_ctx, 2);
    assert_int_equal(o.dst_ctx, 5);
    assert_int_equal(na_verbs_msg_hdr_decode(buf, 15, &o), NA_MSGSIZE);
    buf[14] = 1; /* reserved */
    assert_int_equal(na_verbs_msg_hdr_decode(buf, 16, &o), NA_PROTOCOL_ERROR);
    buf[14] = 0;
    h.type = NA_VERBS_MSG_CREDIT;
    na_verbs_msg_hdr_encode(buf, &h);
    /* A credit-only message with a payload is malformed. */
    assert_int_equal(na_verbs_msg_hdr_decode(buf, 17, &o), NA_PROTOCOL_ERROR);
    buf[0] = 9;
    assert_int_equal(na_verbs_msg_hdr_decode(buf, 16, &o), NA_PROTOCOL_ERROR);

    na_verbs_conn_data_encode(buf, &c);
    /* The CM pads private data, so longer input is fine. */
    assert_int_equal(na_verbs_conn_data_decode(buf, 56, &co), NA_SUCCESS);
    assert_int_equal(co.ip, c.ip);
    assert_int_equal(co.port, 7);
    assert_int_equal(co.credits, 32);
    assert_int_equal(co.max_payload, 4096);
    assert_int_equal(na_verbs_conn_data_decode(buf, 19, &co), NA_MSGSIZE);
    c.credits = 0;
    na_verbs_conn_data_encode(buf, &c);
    assert_int_equal(na_verbs_conn_data_decode(buf, 20, &co),
                     NA_PROTOCOL_ERROR);
}

/* The plugin's own initialize, called directly so the exact code is
 * checked (NA_Initialize only returns NULL). */
static void
test_init_nodev(void **state)
{
    struct na_info info;
    na_class_t cls;
    uint64_t t0;
    na_return_t ret;

    (void) state;
    if (have_rdma_device()) {
        print_message("skipped: an RDMA device exists here, so "
                      "initialization cannot fail with NA_NODEV\n");
        skip();
    }
    memset(&info, 0, sizeof(info));
    memset(&cls, 0, sizeof(cls));
    info.init_info = NA_INIT_INFO_INITIALIZER;
    snprintf(info.protocol_name, sizeof(info.protocol_name), "verbs");
    snprintf(info.host_name, sizeof(info.host_name), "rxe0/10.11.0.1:0");
    t0 = now_ms();
    ret = na_verbs_class_ops.initialize(&cls, &info, true);
    assert_int_equal(ret, NA_NODEV);
    assert_null(cls.plugin_class);
    assert_true(now_ms() - t0 < 2000);

    /* Through the public API: NULL, quickly, and nothing crashes. */
    t0 = now_ms();
    assert_null(NA_Initialize(test_info(), true));
    assert_null(NA_Initialize("verbs", false));
    assert_true(now_ms() - t0 < 2000);
}

static void
test_init_bad_strings(void **state)
{
    (void) state;
    /* Malformed hosts are refused before any device is touched. */
    assert_null(NA_Initialize("verbs://rxe0/not-an-ip:1", true));
    assert_null(NA_Initialize("verbs://10.0.0.1:99999", true));
    assert_null(NA_Initialize("verbs://a/b/c", true));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addr_parse_valid),
        cmocka_unit_test(test_addr_parse_bad),
        cmocka_unit_test(test_addr_format_roundtrip),
        cmocka_unit_test(test_addr_serialize_junk),
        cmocka_unit_test(test_mem_handle_junk),
        cmocka_unit_test(test_msg_hdr_and_conn_data),
        cmocka_unit_test(test_init_nodev),
        cmocka_unit_test(test_init_bad_strings),
        cmocka_unit_test(test_addr_roundtrip_live),
        cmocka_unit_test(test_peer_gone),
        cmocka_unit_test(test_peer_killed),
    };

    print_message("verbs info string: %s (%s)\n", test_info(),
                  have_rdma_device() ? "RDMA device present"
                                     : "no RDMA device: device cases skip");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
