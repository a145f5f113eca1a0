/*
 * Fuzz target for the native TCP plugin's stream parser (na_tcp_conn.c,
 * na_tcp_rma.c): the input is what a peer writes on a connection after a
 * valid hello, read by a live class through its own progress. The class
 * has one 64 KiB region registered read-write (key 0x100000000: slot 0,
 * generation 1) inside a larger buffer whose guard bytes around it must
 * never change, whatever the frames say, and one region of three
 * segments of 100, 1 and 4000 bytes (key 0x200000001: slot 1, generation
 * 2) with guard bytes between and around them; a receive is posted for
 * every unexpected message. The input is written, the writing side shut down,
 * and the class progressed until it has closed the connection; whatever it
 * answered is read and dropped.
 *
 * Input: frames as docs/wire.md describes them (40-byte little-endian
 * headers, then payloads): messages, get requests, gets' answers and
 * acknowledgements nobody asked for, puts inside and outside the region.
 *
 * What the class answers (get answers, put acknowledgements) is parsed
 * for its statuses, and the replay fails unless some unexpected message
 * is delivered, some get or put is carried out (answered OK) and some is
 * refused by the region check (an unknown key, a range outside the
 * region, a missing permission).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../plugins/tcp/na_tcp_internal.h"
#include "na_fuzz_util.h"

#define REGION (64u * 1024u)
#define GUARD (4u * 1024u)
#define SEG_GUARD 64u

/* The segmented region: segment i at seg_at[i] of w.sbuf, seg_len[i]
 * bytes; every other byte of w.sbuf is a guard. */
static const size_t seg_len[3] = {100, 1, 4000};
static const size_t seg_at[3] = {SEG_GUARD, 2 * SEG_GUARD + 100,
                                 3 * SEG_GUARD + 101};
#define SBUF_SIZE (4 * SEG_GUARD + 4101)

static struct fuzz_world {
    na_class_t *cls;
    na_context_t *ctx;
    na_op_id_t *op;
    uint16_t port;
    bool posted;
    uint8_t msg[4096];
    uint8_t buf[GUARD + REGION + GUARD];
    uint8_t sbuf[SBUF_SIZE];
} w;

/* What the replay reached: messages delivered, RMA answered OK and RMA
 * refused by the region check. */
static unsigned long delivered, rma_ok, rma_refused;

const char *
fuzz_replay_check(void)
{
    if (getenv("QS_FUZZ_TALLY") != NULL)
        fprintf(stderr,
                "messages delivered %lu, RMA carried out %lu, RMA refused "
                "by the region check %lu\n",
                delivered, rma_ok, rma_refused);
    if (delivered == 0)
        return "no unexpected message was delivered";
    if (rma_ok == 0)
        return "no get or put was carried out";
    if (rma_refused == 0)
        return "no get or put was refused by the region check";
    return NULL;
}

/* The frames the class answers with, parsed as they are read: a header,
 * then (a get's answer) its payload, skipped. */
static struct {
    uint8_t hdr[NA_TCP_HDR_SIZE];
    size_t have;
    uint64_t skip;
} answer;

static void
answer_feed(const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t k;

        if (answer.skip > 0) {
            k = answer.skip < n ? (size_t) answer.skip : n;
            answer.skip -= k;
        } else {
            k = NA_TCP_HDR_SIZE - answer.have < n
                    ? NA_TCP_HDR_SIZE - answer.have
                    : n;
            memcpy(answer.hdr + answer.have, p, k);
            answer.have += k;
            if (answer.have == NA_TCP_HDR_SIZE) {
                uint8_t type = answer.hdr[0], status = answer.hdr[3];

                answer.have = 0;
                if (type == NA_TCP_GET_RESP && status == NA_TCP_ST_OK)
                    for (int i = 7; i >= 0; i--)
                        answer.skip = answer.skip << 8 | answer.hdr[8 + i];
                if (type == NA_TCP_GET_RESP || type == NA_TCP_PUT_ACK) {
                    if (status == NA_TCP_ST_OK)
                        rma_ok++;
                    else
                        rma_refused++;
                }
            }
        }
        p += k;
        n -= k;
    }
}

/* Reads what the class answered, without waiting. */
static void
answer_read(int s, uint8_t *sink, size_t size)
{
    ssize_t n = recv(s, sink, size, MSG_DONTWAIT);

    if (n > 0)
        answer_feed(sink, (size_t) n);
}

static void
recv_cb(const struct na_cb_info *info)
{
    w.posted = false;
    if (info->ret == NA_SUCCESS) {
        delivered++;
        NA_Addr_free(w.cls, info->info.recv_unexpected.source);
    }
}

static void
world_up(void)
{
    na_mem_handle_t h, sh;
    struct na_segment segs[3];
    na_addr_t self;
    char name[64];
    size_t size = sizeof(name);

    w.cls = NA_Initialize("tcp://127.0.0.1:0", true);
    if (w.cls == NULL)
        abort();
    w.ctx = NA_Context_create(w.cls);
    w.op = NA_Op_create(w.cls, 0);
    memset(w.buf, 0xaa, sizeof(w.buf));
    memset(w.sbuf, 0xaa, sizeof(w.sbuf));
    for (int i = 0; i < 3; i++) {
        segs[i].base = (uint64_t) (uintptr_t) (w.sbuf + seg_at[i]);
        segs[i].len = seg_len[i];
    }
    if (NA_Mem_handle_create(w.cls, w.buf + GUARD, REGION, NA_MEM_READWRITE,
                             &h) != NA_SUCCESS ||
        NA_Mem_register(w.cls, h, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS ||
        NA_Mem_handle_create_segments(w.cls, segs, 3, NA_MEM_READWRITE, &sh) !=
            NA_SUCCESS ||
        NA_Mem_register(w.cls, sh, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS ||
        NA_Addr_self(w.cls, &self) != NA_SUCCESS ||
        NA_Addr_to_string(w.cls, name, &size, self) != NA_SUCCESS)
        abort();
    NA_Addr_free(w.cls, self);
    w.port = (uint16_t) atoi(strrchr(name, ':') + 1);
}

static void
progress(void)
{
    if (!w.posted) {
        w.posted =
            NA_Msg_recv_unexpected(w.cls, w.ctx, recv_cb, NULL, w.msg,
                                   sizeof(w.msg), NULL, w.op) == NA_SUCCESS;
    }
    NA_Poll(w.cls, w.ctx, NULL);
    NA_Trigger(w.ctx, 16, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    uint8_t hello[NA_TCP_HELLO_SIZE], sink[65536];
    int s, i;

    unsigned int accepted;

    if (w.cls == NULL)
        world_up();
    memset(&answer, 0, sizeof(answer));
    accepted = na_tcp_class(w.cls)->accepted;
    if (size > 256 * 1024)
        size = 256 * 1024;
    sin.sin_port = htons(w.port);
    s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || connect(s, (struct sockaddr *) &sin, sizeof(sin)) != 0)
        abort();
    na_tcp_hello_encode(hello, 9);
    if (send(s, hello, sizeof(hello), MSG_NOSIGNAL) != sizeof(hello))
        abort();
    /* Write the input while the class reads it; drop what it answers. */
    for (size_t off = 0; off < size;) {
        ssize_t n =
            send(s, data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            off += (size_t) n;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            break; /* the class closed it: a malformed frame */
        progress();
        answer_read(s, sink, sizeof(sink));
    }
    shutdown(s, SHUT_WR);
    /* Until the class has accepted the connection, then until it closed
     * it, having read everything before the end of the stream. */
    for (i = 0; i < 100000 && na_tcp_class(w.cls)->accepted == accepted; i++)
        progress();
    for (i = 0; i < 100000 && na_tcp_class(w.cls)->conn_count != 0; i++) {
        progress();
        answer_read(s, sink, sizeof(sink));
    }
    /* What the class wrote before it closed. */
    for (i = 0; i < 64; i++)
        answer_read(s, sink, sizeof(sink));
    close(s);
    if (na_tcp_class(w.cls)->conn_count != 0)
        abort(); /* the class never saw the end of the stream */
    for (size_t k = 0; k < GUARD; k++)
        if (w.buf[k] != 0xaa || w.buf[GUARD + REGION + k] != 0xaa)
            abort();
    for (size_t k = 0, i = 0; k < SBUF_SIZE; k++) {
        if (i < 3 && k == seg_at[i]) {
            k += seg_len[i++] - 1;
            continue;
        }
        if (w.sbuf[k] != 0xaa)
            abort();
    }
    return 0;
}
