/*
 * Connections of the shared-memory plugin.
 *
 * Every class listens on the abstract UNIX seqpacket socket
 * "\0quicksilver-sm/<name>" (abstract: nothing to clean up after a crash).
 * The first send to a peer connects and sends a hello carrying our name
 * and, with SCM_RIGHTS, two sealed memfds: the connection's rings and our
 * region table. The listener maps both and answers with its own region
 * table. Afterwards the socket carries one-byte wake-ups only, and its end
 * of file, which the kernel delivers when the peer process exits or is
 * killed, is how the peer's death is seen.
 *
 * Everything a peer sends on the socket is hostile: sizes, names, the
 * number of descriptors and the seals and sizes of the memfds are checked
 * before anything is mapped, and unused descriptors are closed.
 */
#include "na_sm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define NA_SM_REPLY_MAGIC 0x51534d52u /* "QSMR" */

struct na_sm_hello {
    uint32_t magic;
    uint32_t version;
    uint32_t name_len;
    char name[NA_SM_NAME_MAX];
};

struct na_sm_reply {
    uint32_t magic;
    uint32_t version;
};

static socklen_t
na_sm_sockaddr(const char *name, struct sockaddr_un *sun)
{
    int n;

    memset(sun, 0, sizeof(*sun));
    sun->sun_family = AF_UNIX;
    /* sun_path[0] stays '\0': the abstract namespace. */
    n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
                 "quicksilver-sm/%s", name);
    return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 +
                        (size_t) n);
}

static void
na_sm_epoll_add(struct na_sm_class *cls, int fd, void *ptr)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = ptr};

    (void) epoll_ctl(cls->wait.epfd, EPOLL_CTL_ADD, fd, &ev);
}

na_return_t
na_sm_listen(struct na_sm_class *cls)
{
    struct sockaddr_un sun;
    socklen_t len = na_sm_sockaddr(cls->name, &sun);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (s < 0)
        return NA_NOMEM;
    if (bind(s, (struct sockaddr *) &sun, len) != 0) {
        int e = errno;
        close(s);
        if (e == EADDRINUSE) {
            na_plugin_log_error(NA_SM_CLASS_NAME,
                                "the name \"%s\" is already served", cls->name);
            return NA_ADDRINUSE;
        }
        return NA_PROTONOSUPPORT;
    }
    if (listen(s, 256) != 0) {
        close(s);
        return NA_PROTONOSUPPORT;
    }
    cls->listen_sock = s;
    na_sm_epoll_add(cls, s, &cls->listen_sock);
    return NA_SUCCESS;
}

/* A memfd from a peer is mapped only if it cannot shrink under us. */
static void *
na_sm_map_peer_fd(int fd, size_t size, int prot)
{
    int seals = fcntl(fd, F_GET_SEALS);
    off_t end;
    void *p;

    if (seals < 0 || !(seals & F_SEAL_SHRINK))
        return NULL;
    end = lseek(fd, 0, SEEK_END);
    if (end < 0 || (size_t) end < size)
        return NULL;
    p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

static struct na_sm_conn *
na_sm_conn_new(struct na_sm_class *cls, int sock, bool connector)
{
    struct na_sm_conn *c = calloc(1, sizeof(*c));
    struct ucred cred;
    socklen_t clen = sizeof(cred);

    if (c == NULL)
        return NULL;
    c->cls = cls;
    c->sock = sock;
    c->connector = connector;
    c->rx_spin_lines = NA_SM_SPIN_PREFETCH;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
        c->pid = cred.pid;
    na_op_list_init(&c->tx_wait);
    na_op_list_init(&c->rma_wait);
    na_op_list_init(&c->rma_pending);
    TAILQ_INIT(&c->rma_out);
    c->rma_msg = cls->rma_mode == NA_SM_RMA_MSG;
    LIST_INSERT_HEAD(&cls->conns, c, entry);
    na_sm_epoll_add(cls, sock, c);
    return c;
}

/* Send one message with descriptors; seqpacket keeps it whole. */
static int
na_sm_send_fds(int sock, const void *msg, size_t len, const int *fds,
               size_t nfds)
{
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = (void *) msg, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    struct cmsghdr *cm;

    memset(&u, 0, sizeof(u));
    mh.msg_control = u.buf;
    mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t) len
               ? 0
               : -1;
}

size_t
na_sm_hello_encode(const char *name, void *msg, size_t size)
{
    struct na_sm_hello h = {.magic = NA_SM_HELLO_MAGIC,
                            .version = NA_SM_PROTO_VERSION};
    size_t n = strlen(name);

    if (size < sizeof(h) || n > NA_SM_NAME_MAX)
        return 0;
    h.name_len = (uint32_t) n;
    memcpy(h.name, name, n);
    memcpy(msg, &h, sizeof(h));
    return sizeof(h);
}

bool
na_sm_hello_parse(const void *msg, size_t len, size_t nfds,
                  char name[NA_SM_NAME_MAX + 1])
{
    struct na_sm_hello h;

    if (len != sizeof(h) || nfds != 2)
        return false;
    memcpy(&h, msg, sizeof(h));
    if (h.magic != NA_SM_HELLO_MAGIC || h.version != NA_SM_PROTO_VERSION ||
        !na_sm_name_valid(h.name, h.name_len))
        return false;
    memcpy(name, h.name, h.name_len);
    name[h.name_len] = '\0';
    return true;
}

/* Connect to addr's listener, with the lock held. NULL: unreachable. */
static struct na_sm_conn *
na_sm_connect(struct na_sm_class *cls, struct na_addr *addr)
{
    struct sockaddr_un sun;
    socklen_t len = na_sm_sockaddr(addr->name, &sun);
    struct na_sm_hello hello;
    size_t hello_len;
    struct na_sm_conn *c;
    void *shm;
    int fds[2];
    int s, mfd;

    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return NULL;
    if (connect(s, (struct sockaddr *) &sun, len) != 0) {
        close(s);
        return NULL;
    }
    mfd = memfd_create("quicksilver-sm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (mfd < 0 || ftruncate(mfd, sizeof(struct na_sm_shared)) != 0 ||
        fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        goto fail;
    shm = mmap(NULL, sizeof(struct na_sm_shared), PROT_READ | PROT_WRITE,
               MAP_SHARED, mfd, 0);
    if (shm == MAP_FAILED)
        goto fail;
    hello_len = na_sm_hello_encode(cls->name, &hello, sizeof(hello));
    fds[0] = mfd;
    fds[1] = cls->reg_fd;
    if (na_sm_send_fds(s, &hello, hello_len, fds, 2) != 0) {
        munmap(shm, sizeof(struct na_sm_shared));
        goto fail;
    }
    close(mfd);
    c = na_sm_conn_new(cls, s, true);
    if (c == NULL) {
        munmap(shm, sizeof(struct na_sm_shared));
        close(s);
        return NULL;
    }
    c->shm = shm;
    c->tx = &c->shm->ring[0];
    c->rx = &c->shm->ring[1];
    atomic_store(&c->rx->sleeping, cls->wait.sleepers > 0);
    c->addr = addr;
    na_plugin_addr_ref(addr);
    addr->failed = false;
    return c;

fail:
    if (mfd >= 0)
        close(mfd);
    close(s);
    return NULL;
}

struct na_sm_conn *
na_sm_conn_get(struct na_sm_class *cls, struct na_addr *addr)
{
    if (addr->conn != NULL && !addr->conn->dead)
        return addr->conn;
    if (addr->conn != NULL)
        return NULL; /* dead, not yet reaped: its peer is gone */
    addr->conn = na_sm_connect(cls, addr);
    return addr->conn;
}

void
na_sm_conn_accept_all(struct na_sm_class *cls)
{
    for (;;) {
        int s =
            accept4(cls->listen_sock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s < 0)
            return;
        if (na_sm_conn_new(cls, s, false) == NULL)
            close(s);
    }
}

/* Map the peer's region table from a received descriptor. */
static bool
na_sm_conn_map_regs(struct na_sm_conn *c, int fd)
{
    void *p =
        na_sm_map_peer_fd(fd, NA_SM_REG_MAX * sizeof(*c->peer_regs), PROT_READ);

    if (p == NULL)
        return false;
    c->peer_regs = p;
    return true;
}

/* Whether `name` is the one the plugin gives a class of process `pid`
 * that chose none ("<pid>-<n>", na_sm.c). */
static bool
na_sm_name_is_pids(const char *name, pid_t pid)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof(prefix), "%ld-", (long) pid);

    if (n <= 0 || strncmp(name, prefix, (size_t) n) != 0 || name[n] == '\0')
        return false;
    for (const char *p = name + n; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/*
 * Whether the peer process of `c` (SO_PEERCRED, from the kernel) is the
 * one that serves `name` (the listener of its socket, also from the
 * kernel): the hello's name is only a claim. A connection made and closed
 * at once; the listener sees it end before any hello, which it ignores.
 * When nobody listens on `name` any more, the peer may already have
 * finalized after a send completed (Mercury's tutorial clients exit right
 * after a one-way forward): its own default name ("<its pid>-<n>") is
 * still accepted, so what it wrote is delivered; any other claim is not.
 */
static bool
na_sm_conn_claim_ok(const struct na_sm_conn *c, const char *name)
{
    struct sockaddr_un sun;
    socklen_t len = na_sm_sockaddr(name, &sun);
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    int s;
    bool ok;

    if (c->pid <= 0)
        return false;
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    if (connect(s, (struct sockaddr *) &sun, len) != 0)
        ok = (errno == ECONNREFUSED || errno == ENOENT) &&
             na_sm_name_is_pids(name, c->pid);
    else
        ok = getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 &&
             cred.pid == c->pid;
    close(s);
    return ok;
}

/* The listener's side of the handshake. false: protocol violation. */
static bool
na_sm_conn_hello(struct na_sm_conn *c, const void *msg, size_t len,
                 const int *fds, size_t nfds)
{
    struct na_sm_class *cls = c->cls;
    struct na_sm_reply r = {NA_SM_REPLY_MAGIC, NA_SM_PROTO_VERSION};
    char name[NA_SM_NAME_MAX + 1];
    void *shm;

    if (!na_sm_hello_parse(msg, len, nfds, name))
        return false;
    if (!na_sm_conn_claim_ok(c, name)) {
        atomic_fetch_add(&cls->forged_dropped, 1);
        qs_log(NA_SM_CLASS_NAME, QS_LOG_WARNING,
               "refused a connection from process %d, which claims the "
               "name \"%s\" that another process serves",
               (int) c->pid, name);
        return false;
    }
    shm = na_sm_map_peer_fd(fds[0], sizeof(struct na_sm_shared),
                            PROT_READ | PROT_WRITE);
    if (shm == NULL)
        return false;
    c->shm = shm;
    if (!na_sm_conn_map_regs(c, fds[1]))
        return false;
    c->tx = &c->shm->ring[1];
    c->rx = &c->shm->ring[0];
    atomic_store(&c->rx->sleeping, cls->wait.sleepers > 0);
    c->addr = na_sm_addr_intern(cls, name);
    if (c->addr == NULL)
        return false;
    if (c->addr->conn == NULL)
        c->addr->conn = c;
    c->addr->failed = false;
    c->ready = true;
    return na_sm_send_fds(c->sock, &r, sizeof(r), &cls->reg_fd, 1) == 0;
}

/* The connector's side: the listener's region table arrived. */
static bool
na_sm_conn_reply(struct na_sm_conn *c, const void *msg, size_t len,
                 const int *fds, size_t nfds)
{
    struct na_sm_reply r;
    struct na_op_id *op;

    if (len != sizeof(r) || nfds != 1)
        return false;
    memcpy(&r, msg, sizeof(r));
    if (r.magic != NA_SM_REPLY_MAGIC || r.version != NA_SM_PROTO_VERSION ||
        !na_sm_conn_map_regs(c, fds[0]))
        return false;
    c->ready = true;
    while ((op = na_op_list_first(&c->rma_wait)) != NULL) {
        na_op_list_remove(op);
        na_sm_rma_run(op);
    }
    return true;
}

/* Read one socket message; returns false when the connection is over. */
static bool
na_sm_conn_recv_one(struct na_sm_conn *c, bool *more)
{
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } u;
    uint8_t msg[sizeof(struct na_sm_hello) + 8];
    struct iovec iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = u.buf,
                        .msg_controllen = sizeof(u.buf)};
    int fds[4];
    size_t nfds = 0;
    bool ok = true;
    ssize_t n;

    *more = false;
    n = recvmsg(c->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL;
         cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (nfds < 4)
                fds[nfds++] = fd;
            else
                close(fd);
        }
    }
    if (n == 0 && nfds == 0)
        return false; /* end of file: the peer is gone */
    *more = true;
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
        ok = false;
    else if (n == 1 && nfds == 0)
        ok = true; /* a wake-up */
    else if (!c->connector && c->shm == NULL)
        ok = na_sm_conn_hello(c, msg, (size_t) n, fds, nfds);
    else if (c->connector && !c->ready)
        ok = na_sm_conn_reply(c, msg, (size_t) n, fds, nfds);
    else
        ok = false;
    for (size_t i = 0; i < nfds; i++)
        close(fds[i]);
    return ok;
}

/* The socket of `conn` is readable: handshake, wake-ups or end of file.
 * Called with the lock held; may destroy the connection. */
void
na_sm_conn_sock_event(struct na_sm_conn *conn)
{
    bool more = true;

    for (int i = 0; i < 64 && more; i++) {
        if (!na_sm_conn_recv_one(conn, &more)) {
            /* Deliver what the peer wrote before it went. */
            if (conn->rx != NULL)
                (void) na_sm_ring_drain(conn, false);
            conn->dead = true;
            na_sm_peer_failed(conn->cls, conn);
            na_sm_conn_destroy(conn);
            return;
        }
    }
}

void
na_sm_conn_wake_peer(struct na_sm_conn *conn)
{
    static const char w = 'w';

    (void) send(conn->sock, &w, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Unlink and release a connection (lock held). Its waiting ops must have
 * been completed already. */
void
na_sm_conn_destroy(struct na_sm_conn *conn)
{
    struct na_sm_class *cls = conn->cls;

    (void) epoll_ctl(cls->wait.epfd, EPOLL_CTL_DEL, conn->sock, NULL);
    close(conn->sock);
    LIST_REMOVE(conn, entry);
    na_sm_rma_msg_conn_free(conn);
    if (conn->shm != NULL)
        munmap(conn->shm, sizeof(struct na_sm_shared));
    if (conn->peer_regs != NULL)
        munmap((void *) conn->peer_regs,
               NA_SM_REG_MAX * sizeof(*conn->peer_regs));
    if (conn->addr != NULL) {
        if (conn->addr->conn == conn)
            conn->addr->conn = NULL;
        na_plugin_addr_unref_locked(conn->addr);
    }
    free(conn);
}
