/*
 * Connections of the TCP plugin: listening, connecting, accepting, the
 * hello, reading frames and writing the send queue.
 *
 * The first send to a peer connects (non-blocking, TCP_NODELAY) and
 * queues a hello naming the port we listen on; frames follow at once, as
 * TCP keeps them in order. The accepting side names the connection's peer
 * by its source address, which the kernel reports, and the hello's port,
 * so an unexpected message's source is the connection's peer and never a
 * claim of the frame. Errors on a socket (end of file, a reset, a refused
 * connect, a malformed frame) mark the connection dead; progress then
 * fails what waits on it, once, and frees it (na_tcp_conn_reap).
 */
#include "na_tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Every connection's socket: no Nagle delay, and a send buffer of
 * NA_TCP_SNDBUF (na_tcp_internal.h). */
static void
na_tcp_sock_setup(int s)
{
    int one = 1, sndbuf = NA_TCP_SNDBUF;

    (void) setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    (void) setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
}

na_return_t
na_tcp_listen(struct na_tcp_class *cls, uint16_t port)
{
    struct sockaddr_storage ss;
    socklen_t len = na_tcp_ip_sockaddr(&cls->bind_ip, port, &ss);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cls->listen_sock};
    int one = 1;
    int s = socket(cls->bind_ip.family,
                   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (s < 0)
        return NA_PROTONOSUPPORT;
    (void) setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* An IPv6 class serves IPv6 peers only: an IPv4 peer would be named
     * by a mapped address that is not the one it serves. */
    if (cls->bind_ip.family == AF_INET6)
        (void) setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(s, (struct sockaddr *) &ss, len) != 0) {
        int e = errno;
        close(s);
        na_plugin_log_error("tcp", "cannot listen on port %u: %s",
                            (unsigned) port, strerror(e));
        return e == EADDRINUSE ? NA_ADDRINUSE : NA_INVALID_ARG;
    }
    if (listen(s, 1024) != 0 ||
        getsockname(s, (struct sockaddr *) &ss, &len) != 0 ||
        epoll_ctl(cls->wait.epfd, EPOLL_CTL_ADD, s, &ev) != 0) {
        close(s);
        return NA_PROTONOSUPPORT;
    }
    cls->listen_sock = s;
    /* sin_port and sin6_port lie at the same offset. */
    cls->listen_port = ntohs(((struct sockaddr_in *) (void *) &ss)->sin_port);
    return NA_SUCCESS;
}

/* Arm or disarm EPOLLOUT: only a queue that waits for room needs it. */
static void
na_tcp_conn_want_out(struct na_tcp_conn *c, bool out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0),
                             .data.ptr = c};

    if (c->want_out == out)
        return;
    c->want_out = out;
    (void) epoll_ctl(c->cls->wait.epfd, EPOLL_CTL_MOD, c->sock, &ev);
}

static struct na_tcp_conn *
na_tcp_conn_new(struct na_tcp_class *cls, int sock, bool connecting)
{
    struct na_tcp_conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev = {.events = EPOLLIN | (connecting ? EPOLLOUT : 0)};

    if (c == NULL)
        return NULL;
    c->rx = malloc(cls->rx_size);
    if (c->rx == NULL) {
        free(c);
        return NULL;
    }
    c->cls = cls;
    c->sock = sock;
    c->connecting = connecting;
    c->want_out = connecting;
    STAILQ_INIT(&c->txq);
    na_op_list_init(&c->rma);
    ev.data.ptr = c;
    if (epoll_ctl(cls->wait.epfd, EPOLL_CTL_ADD, sock, &ev) != 0) {
        free(c->rx);
        free(c);
        return NULL;
    }
    LIST_INSERT_HEAD(&cls->conns, c, entry);
    cls->conn_count++;
    return c;
}

/* Connect to addr's listener. NULL: refused at once, or no resources. */
static struct na_tcp_conn *
na_tcp_connect(struct na_tcp_class *cls, struct na_addr *addr)
{
    struct sockaddr_storage ss;
    socklen_t len = na_tcp_ip_sockaddr(&addr->ip, addr->port, &ss);
    struct na_tcp_conn *c;
    struct na_tcp_tx *hello;
    bool connecting = false;
    int s =
        socket(addr->ip.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (s < 0)
        return NULL;
    na_tcp_sock_setup(s);
    if (!na_tcp_ip_is_any(&cls->bind_ip) &&
        cls->bind_ip.family == addr->ip.family) {
        /* Leave from the address we serve, which is how peers name us. */
        struct sockaddr_storage me;
        socklen_t me_len = na_tcp_ip_sockaddr(&cls->bind_ip, 0, &me);
        (void) bind(s, (struct sockaddr *) &me, me_len);
    }
    if (connect(s, (struct sockaddr *) &ss, len) != 0) {
        if (errno != EINPROGRESS) {
            close(s);
            return NULL;
        }
        connecting = true;
    }
    hello = calloc(1, sizeof(*hello));
    c = hello ? na_tcp_conn_new(cls, s, connecting) : NULL;
    if (c == NULL) {
        free(hello);
        close(s);
        return NULL;
    }
    c->peer_ip = addr->ip;
    c->addr = addr;
    na_plugin_addr_ref(addr);
    addr->failed = false;
    na_tcp_hello_encode(hello->hdr, cls->self->port);
    hello->iov[0].iov_base = hello->hdr;
    hello->iov[0].iov_len = NA_TCP_HELLO_SIZE;
    hello->iovcnt = 1;
    hello->left = NA_TCP_HELLO_SIZE;
    hello->heap = true;
    na_tcp_conn_send(c, hello);
    return c;
}

struct na_tcp_conn *
na_tcp_conn_get(struct na_tcp_class *cls, struct na_addr *addr)
{
    if (addr->conn != NULL)
        return addr->conn->dead ? NULL : addr->conn;
    addr->conn = na_tcp_connect(cls, addr);
    return addr->conn;
}

void
na_tcp_accept_all(struct na_tcp_class *cls)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        struct na_tcp_ip ip;
        struct na_tcp_conn *c;
        int s = accept4(cls->listen_sock, (struct sockaddr *) &ss, &len,
                        SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (s < 0)
            return;
        if (!na_tcp_ip_from_sockaddr(&ss, &ip)) {
            close(s);
            continue;
        }
        na_tcp_sock_setup(s);
        c = na_tcp_conn_new(cls, s, false);
        if (c == NULL) {
            close(s);
            continue;
        }
        c->accepted = true;
        c->peer_ip = ip;
        cls->accepted++;
    }
}

void
na_tcp_tx_init(struct na_tcp_tx *tx, const struct na_tcp_hdr *h,
               const void *payload, size_t len)
{
    na_tcp_hdr_encode(tx->hdr, h);
    tx->iov[0].iov_base = tx->hdr;
    tx->iov[0].iov_len = NA_TCP_HDR_SIZE;
    tx->iov[1].iov_base = (void *) payload;
    tx->iov[1].iov_len = len;
    tx->iovcnt = len != 0 ? 2 : 1;
    tx->left = NA_TCP_HDR_SIZE + len;
    tx->done = 0;
}

void
na_tcp_tx_init_iov(struct na_tcp_tx *tx, const struct na_tcp_hdr *h,
                   const struct iovec *iov, int n)
{
    size_t len = 0;

    na_tcp_hdr_encode(tx->hdr, h);
    tx->iov[0].iov_base = tx->hdr;
    tx->iov[0].iov_len = NA_TCP_HDR_SIZE;
    tx->iovcnt = 1;
    for (int i = 0; i < n; i++) {
        if (iov[i].iov_len == 0)
            continue;
        tx->iov[tx->iovcnt++] = iov[i];
        len += iov[i].iov_len;
    }
    tx->left = NA_TCP_HDR_SIZE + len;
    tx->done = 0;
}

/* The part of `tx` not yet written, as iovecs; returns how many. */
static int
na_tcp_tx_iov(const struct na_tcp_tx *tx, struct iovec *iov)
{
    size_t skip = tx->done;
    int n = 0;

    for (int i = 0; i < tx->iovcnt; i++) {
        if (skip >= tx->iov[i].iov_len) {
            skip -= tx->iov[i].iov_len;
            continue;
        }
        iov[n].iov_base = (uint8_t *) tx->iov[i].iov_base + skip;
        iov[n].iov_len = tx->iov[i].iov_len - skip;
        skip = 0;
        n++;
    }
    return n;
}

/* `tx` is written whole. */
static void
na_tcp_tx_done(struct na_tcp_tx *tx)
{
    struct na_op_id *op = tx->op;

    tx->queued = false;
    if (tx->heap) {
        free(tx);
        return;
    }
    if (op != NULL && tx->msg) { /* a send; RMA waits for its answer */
        op->conn = NULL;
        na_tcp_op_complete(op, NA_SUCCESS);
    }
}

static bool
na_tcp_again(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/* Write the queue with one sendmsg (lock held). */
void
na_tcp_conn_flush(struct na_tcp_conn *c)
{
    struct iovec iov[NA_TCP_IOV_MAX];
    struct msghdr mh = {0};
    struct na_tcp_tx *tx;
    int n = 0;
    ssize_t w;
    size_t left;

    if (c->dead || STAILQ_EMPTY(&c->txq))
        return;
    STAILQ_FOREACH(tx, &c->txq, entry)
    {
        if (n + tx->iovcnt > NA_TCP_IOV_MAX)
            break; /* the first always fits: 1 + NA_TCP_SEG_MAX pieces */
        n += na_tcp_tx_iov(tx, iov + n);
    }
    /* sendmsg, not writev: MSG_NOSIGNAL, a dead peer is no SIGPIPE. */
    mh.msg_iov = iov;
    mh.msg_iovlen = (size_t) n;
    w = sendmsg(c->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
        if (!na_tcp_again(errno))
            c->dead = true;
        else
            na_tcp_conn_want_out(c, true);
        return;
    }
    c->connecting = false;
    left = (size_t) w;
    while (left > 0 && (tx = STAILQ_FIRST(&c->txq)) != NULL) {
        size_t take = left < tx->left ? left : tx->left;

        tx->done += take;
        tx->left -= take;
        left -= take;
        if (tx->op != NULL && !tx->msg)
            tx->op->u.rma.started = true; /* cancel can no longer undo it */
        if (tx->left != 0)
            break;
        STAILQ_REMOVE_HEAD(&c->txq, entry);
        na_tcp_tx_done(tx);
    }
    na_tcp_conn_want_out(c, !STAILQ_EMPTY(&c->txq));
}

/* Queue a frame, and write it at once if nothing waits before it. */
void
na_tcp_conn_send(struct na_tcp_conn *c, struct na_tcp_tx *tx)
{
    struct na_tcp_class *cls = c->cls;
    bool first = STAILQ_EMPTY(&c->txq);

    tx->queued = true;
    STAILQ_INSERT_TAIL(&c->txq, tx, entry);
    if (!first || c->connecting)
        return;
    /* The first frame since the last progress pass is written at once, so
     * one message in flight costs no wait; the next ones queue behind it
     * and the next pass writes them together (a burst of responses is one
     * sendmsg). A thread asleep on the wait fd, or a caller polling the fd
     * itself, would not run that pass: then every frame goes at once. */
    if (c->wrote_early && atomic_load(&cls->wait.sleepers) == 0 &&
        !atomic_load(&cls->fd_exported))
        return;
    c->wrote_early = true;
    na_tcp_conn_flush(c);
}

bool
na_tcp_conn_send_frame(struct na_tcp_conn *c, const struct na_tcp_hdr *h,
                       const struct iovec *iov, int n)
{
    struct na_tcp_tx *tx = calloc(1, sizeof(*tx));

    if (tx == NULL)
        return false;
    na_tcp_tx_init_iov(tx, h, iov, n);
    tx->heap = true;
    na_tcp_conn_send(c, tx);
    return true;
}

/* The hello of an accepted connection: name its peer. */
static bool
na_tcp_conn_hello(struct na_tcp_conn *c, const uint8_t *p, size_t n)
{
    struct na_addr *a;
    uint16_t port;

    if (na_tcp_hello_decode(p, n, &port) != NA_SUCCESS)
        return false;
    a = na_tcp_addr_intern(c->cls, &c->peer_ip, port);
    if (a == NULL)
        return false;
    c->addr = a;
    c->hello_seen = true;
    if (a->conn == NULL || a->conn->dead)
        a->conn = c;
    a->failed = false;
    return true;
}

/* Consume the payload bytes of an RMA frame found in the read buffer. */
static void
na_tcp_conn_rx_payload(struct na_tcp_conn *c)
{
    size_t have = c->rx_end - c->rx_start;
    size_t n = have < c->rx_left ? have : (size_t) c->rx_left;

    /* Segment by segment: the destination may be several. */
    while (c->rx_state == NA_TCP_RX_DIRECT && n != 0) {
        size_t k = n < c->rx_seg_left ? n : (size_t) c->rx_seg_left;

        memcpy(c->rx_dst, c->rx + c->rx_start, k);
        c->rx_dst += k;
        c->rx_seg_left -= k;
        c->rx_start += k;
        c->rx_left -= k;
        n -= k;
        if (c->rx_seg_left == 0 && c->rx_left != 0)
            na_tcp_rx_next_seg(c);
    }
    c->rx_start += n; /* skipped */
    c->rx_left -= n;
    if (c->rx_left == 0)
        na_tcp_rma_data_done(c);
}

/* Parse every complete frame in the read buffer (lock held). */
static void
na_tcp_conn_parse(struct na_tcp_conn *c)
{
    const struct na_tcp_limits *lim = &c->cls->limits;
    struct na_tcp_hdr h;

    while (!c->dead) {
        const uint8_t *p = c->rx + c->rx_start;
        size_t have = c->rx_end - c->rx_start;

        if (c->rx_state != NA_TCP_RX_HDR) {
            if (have == 0)
                break;
            na_tcp_conn_rx_payload(c);
            continue;
        }
        if (c->accepted && !c->hello_seen) {
            if (have < NA_TCP_HELLO_SIZE)
                break;
            if (!na_tcp_conn_hello(c, p, have)) {
                c->dead = true;
                break;
            }
            c->rx_start += NA_TCP_HELLO_SIZE;
            continue;
        }
        if (have < NA_TCP_HDR_SIZE)
            break;
        if (na_tcp_hdr_decode(p, have, lim, &h) != NA_SUCCESS) {
            na_plugin_log_error("tcp", "malformed frame: connection closed");
            c->dead = true;
            break;
        }
        if (h.type == NA_TCP_UNEXP || h.type == NA_TCP_EXP) {
            if (have < NA_TCP_HDR_SIZE + h.len)
                break;
            c->rx_start += NA_TCP_HDR_SIZE + (size_t) h.len;
            na_tcp_deliver(c->cls, c->addr, &h, p + NA_TCP_HDR_SIZE);
            continue;
        }
        c->rx_start += NA_TCP_HDR_SIZE;
        na_tcp_rma_frame(c, &h);
    }
    if (c->rx_start == c->rx_end)
        c->rx_start = c->rx_end = 0;
}

/* Read what the socket has (lock held): frames into the buffer, RMA data
 * straight to its destination. */
void
na_tcp_conn_readable(struct na_tcp_conn *c)
{
    for (int round = 0; round < 64 && !c->dead; round++) {
        ssize_t n;

        if (c->rx_state == NA_TCP_RX_DIRECT && c->rx_start == c->rx_end) {
            /* Never past this frame: the next one follows at once. */
            size_t want = (size_t) (c->rx_seg_left < c->rx_left ? c->rx_seg_left
                                                                : c->rx_left);

            n = read(c->sock, c->rx_dst, want);
            if (n > 0) {
                c->rx_dst += n;
                c->rx_seg_left -= (uint64_t) n;
                c->rx_left -= (uint64_t) n;
                if (c->rx_left == 0) {
                    na_tcp_rma_data_done(c);
                    na_tcp_conn_parse(c);
                } else if (c->rx_seg_left == 0) {
                    na_tcp_rx_next_seg(c);
                }
                if ((size_t) n < want)
                    return; /* drained */
                continue;
            }
        } else {
            if (c->rx_start != 0 &&
                c->cls->rx_size - c->rx_end < c->cls->rx_size / 2) {
                memmove(c->rx, c->rx + c->rx_start, c->rx_end - c->rx_start);
                c->rx_end -= c->rx_start;
                c->rx_start = 0;
            }
            size_t want = c->cls->rx_size - c->rx_end;

            n = read(c->sock, c->rx + c->rx_end, want);
            if (n > 0) {
                c->rx_end += (size_t) n;
                na_tcp_conn_parse(c);
                /* A short read drained the socket: another read now would
                 * only say so, one system call later on every message. */
                if ((size_t) n < want)
                    return;
                continue;
            }
        }
        if (n == 0 || !na_tcp_again(errno))
            c->dead = true;
        return;
    }
}

/* Unlink and free a connection whose waiting ops were failed (lock
 * held). */
void
na_tcp_conn_destroy(struct na_tcp_conn *c)
{
    struct na_tcp_class *cls = c->cls;
    struct na_tcp_tx *tx;

    while ((tx = STAILQ_FIRST(&c->txq)) != NULL) {
        STAILQ_REMOVE_HEAD(&c->txq, entry);
        tx->queued = false;
        if (tx->heap)
            free(tx);
    }
    (void) epoll_ctl(cls->wait.epfd, EPOLL_CTL_DEL, c->sock, NULL);
    close(c->sock);
    LIST_REMOVE(c, entry);
    cls->conn_count--;
    if (c->addr != NULL) {
        if (c->addr->conn == c)
            c->addr->conn = NULL;
        na_plugin_addr_unref_locked(c->addr);
    }
    free(c->rx);
    free(c);
}
