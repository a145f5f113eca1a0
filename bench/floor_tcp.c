/*
 * floor_tcp: what plain TCP sockets do on loopback, the floor hg_rate and
 * hg_bw are compared with.
 *
 *   floor_tcp [--iters N] [--msg-size B] [--sizes LIST] [--procs 1|2] ...
 *
 * It measures, in one run:
 *  - ping-pong round trip of a small message (1 byte by default) with
 *    TCP_NODELAY, busy-polling: both sides spin on recv(MSG_DONTWAIT);
 *  - the same with blocking recv(), where each side sleeps in the kernel
 *    until its message arrives;
 *  - stream bandwidth: one side writes `size`-byte chunks back to back, the
 *    other reads them, for the sizes hg_bw uses; the clock stops when the
 *    reader's one-byte acknowledgement of the last chunk arrives. The last
 *    chunk is checked byte for byte. One chunk goes first, untimed, into
 *    a reader's buffer it has already touched, and is acknowledged: the
 *    clock starts on a warm connection, without the page faults of a
 *    fresh buffer (hg_bw measures warm buffers too). Busy (both sides spin on
 *    MSG_DONTWAIT, as busy-polling libraries do), then blocking;
 *  - fetch: what a pull is made of, busy: the peer asks for `size` bytes
 *    with an 8-byte request and this side answers with one send; the peer
 *    times each request to its last byte and reports the 10th, 50th and
 *    90th percentiles. The data goes the way it goes in hg_bw's pulls,
 *    from this side (--pin's A, the client's CPU) to the peer.
 *
 * --sndbuf B asks every connection's two ends for a B-byte send buffer
 * (SO_SNDBUF, which the kernel doubles), as the native tcp plugin does
 * with NA_TCP_SNDBUF; without it the kernel tunes the buffer and grows it
 * to megabytes under a stream. Records say which ("sndbuf", 0: tuned).
 *
 * The echo / reader side is a thread (--procs 1, the default) or a forked
 * process (--procs 2). --pin A,B puts the measuring side on CPU A and the
 * peer on CPU B, as a pinned client and server. Only 127.0.0.1 is used.
 * Every loop is bounded by its count and by --max-seconds of real time.
 */
#include "bench_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define FT_MAX_SIZES 16

struct opts {
    uint64_t iters;
    uint64_t warmup;
    uint64_t msg_size;
    uint64_t sizes[FT_MAX_SIZES];
    unsigned nsizes;
    uint64_t bytes_per_size;
    uint64_t max_reps, min_reps;
    double max_seconds;
    int procs;
    int cpu_self, cpu_peer; /* --pin A,B; -1: not pinned */
    bool do_pingpong, do_stream, do_fetch;
};

/* What the peer side is asked to do over one connection. */
enum peer_job { JOB_ECHO_BUSY, JOB_ECHO_BLOCK, JOB_STREAM, JOB_FETCH };

/* --sndbuf: the send buffer every connection asks for; 0 leaves it to the
 * kernel's tuning. Set once by main before any connection is made. */
static uint64_t ft_sndbuf;

/* A fetch request that ends the run: the peer's percentiles follow. */
#define FT_FETCH_DONE UINT64_MAX

struct peer {
    int fd;
    enum peer_job job;
    uint64_t msg_size; /* echo: message size                         */
    uint64_t chunk;    /* stream: chunk size                         */
    uint64_t chunks;   /* stream: chunks to read                     */
    uint32_t seed;     /* stream: pattern of the last chunk          */
    bool busy;         /* stream: spin on MSG_DONTWAIT               */
    int cpu;           /* --pin's B, or -1                           */
    uint64_t warm;     /* fetch: untimed requests first              */
    double deadline;   /* real-time bound of the peer's whole job    */
    int result;        /* 0, or -1 on an error or a failed check      */
};

/* ---- socket helpers ----------------------------------------------------- */

static int
set_nodelay(int fd)
{
    int one = 1;

    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Ask fd for the --sndbuf send buffer (nothing when it is 0). */
static int
set_sndbuf(int fd)
{
    int size = (int) ft_sndbuf;

    if (ft_sndbuf == 0)
        return 0;
    return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

/* A connected pair over 127.0.0.1 with TCP_NODELAY on both ends, and the
 * --sndbuf send buffer when one was asked for. */
static int
tcp_pair(int *a, int *b)
{
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    int lfd, cfd = -1, sfd = -1;

    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0)
        return -1;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = 0;
    if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) != 0 ||
        listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *) &sin, &len) != 0)
        goto fail;
    cfd = socket(AF_INET, SOCK_STREAM, 0);
    if (cfd < 0 || connect(cfd, (struct sockaddr *) &sin, sizeof(sin)) != 0)
        goto fail;
    sfd = accept(lfd, NULL, NULL);
    if (sfd < 0 || set_nodelay(cfd) != 0 || set_nodelay(sfd) != 0 ||
        set_sndbuf(cfd) != 0 || set_sndbuf(sfd) != 0)
        goto fail;
    close(lfd);
    *a = cfd;
    *b = sfd;
    return 0;
fail:
    perror("floor_tcp: loopback connection");
    if (sfd >= 0)
        close(sfd);
    if (cfd >= 0)
        close(cfd);
    close(lfd);
    return -1;
}

/* Send all of buf. Busy: spin on MSG_DONTWAIT, checking the deadline
 * every few thousand full-buffer polls. */
static int
send_all_mode(int fd, const void *buf, size_t len, bool busy, double deadline)
{
    const char *p = buf;
    unsigned spins = 0;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | (busy ? MSG_DONTWAIT : 0));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && busy && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (++spins % 4096 == 0 && bu_now_s() > deadline)
                return -1;
            continue;
        }
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

/* Send all of buf, blocking. */
static int
send_all(int fd, const void *buf, size_t len)
{
    return send_all_mode(fd, buf, len, false, 0.0);
}

/*
 * Receive exactly len bytes. Busy: spin on MSG_DONTWAIT, checking the
 * deadline every few thousand empty polls so the spin stays bounded.
 */
static int
recv_all(int fd, void *buf, size_t len, bool busy, double deadline)
{
    char *p = buf;
    unsigned spins = 0;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, busy ? MSG_DONTWAIT : 0);
        if (n > 0) {
            p += n;
            len -= (size_t) n;
            continue;
        }
        if (n == 0)
            return -1; /* the peer closed */
        if (errno == EINTR)
            continue;
        if (busy && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (++spins % 4096 == 0 && bu_now_s() > deadline)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

/* ---- the peer ----------------------------------------------------------- */

static void
peer_echo(struct peer *p)
{
    bool busy = p->job == JOB_ECHO_BUSY;
    char *buf = malloc(p->msg_size);

    p->result = -1;
    if (buf == NULL)
        return;
    /* Echo until the other side closes (recv returns 0) or time runs out. */
    for (;;) {
        if (recv_all(p->fd, buf, p->msg_size, busy, p->deadline) != 0)
            break;
        if (send_all(p->fd, buf, p->msg_size) != 0)
            break;
    }
    p->result = 0;
    free(buf);
}

static void
peer_stream(struct peer *p)
{
    char *buf = malloc(p->chunk);
    char ack = 'k', warm = 'w';

    p->result = -1;
    if (buf == NULL)
        return;
    memset(buf, 0, p->chunk);
    if (recv_all(p->fd, buf, p->chunk, p->busy, p->deadline) != 0 ||
        send_all(p->fd, &warm, 1) != 0)
        goto out;
    for (uint64_t i = 0; i < p->chunks; i++)
        if (recv_all(p->fd, buf, p->chunk, p->busy, p->deadline) != 0)
            goto out;
    if (bu_pattern_check(buf, p->chunk, p->seed) >= 0) {
        fprintf(stderr,
                "floor_tcp: stream of %" PRIu64 "-byte chunks: the "
                "last chunk is corrupt\n",
                p->chunk);
        ack = 'x';
    }
    if (send_all(p->fd, &ack, 1) == 0 && ack == 'k')
        p->result = 0;
out:
    free(buf);
}

/* The puller of a fetch: time each request to the last byte of its
 * answer, then send FT_FETCH_DONE and the 10th, 50th and 90th percentiles
 * in microseconds, or a negative median if it failed. */
static void
peer_fetch(struct peer *p)
{
    char *buf = malloc(p->chunk);
    double *us = calloc(p->chunks, sizeof(*us));
    double q[3] = {-1.0, -1.0, -1.0};
    uint64_t req, n = 0;

    p->result = -1;
    if (buf == NULL || us == NULL)
        goto out;
    memset(buf, 0, p->chunk);
    for (uint64_t i = 0; i < p->warm + p->chunks; i++) {
        uint64_t t0 = bu_now_ns();

        req = i;
        if (send_all(p->fd, &req, sizeof(req)) != 0 ||
            recv_all(p->fd, buf, p->chunk, true, p->deadline) != 0)
            goto out;
        if (i >= p->warm)
            us[n++] = (double) (bu_now_ns() - t0) / 1e3;
        if (bu_now_s() > p->deadline - 10.0)
            break; /* the run's own bound */
    }
    if (bu_pattern_check(buf, p->chunk, p->seed) >= 0) {
        fprintf(stderr,
                "floor_tcp: fetch of %" PRIu64 " bytes: the last answer is "
                "corrupt\n",
                p->chunk);
        n = 0;
    }
    if (n > 0) {
        q[0] = bu_quantile(us, n, 0.1);
        q[1] = bu_quantile(us, n, 0.5);
        q[2] = bu_quantile(us, n, 0.9);
        p->result = 0;
    }
out:
    req = FT_FETCH_DONE;
    if (send_all(p->fd, &req, sizeof(req)) != 0 ||
        send_all(p->fd, q, sizeof(q)) != 0)
        p->result = -1;
    free(us);
    free(buf);
}

static void *
peer_main(void *arg)
{
    struct peer *p = arg;

    if (bu_pin_self(p->cpu, "floor_tcp") != 0) {
        p->result = -1;
        return NULL;
    }
    if (p->job == JOB_STREAM)
        peer_stream(p);
    else if (p->job == JOB_FETCH)
        peer_fetch(p);
    else
        peer_echo(p);
    return NULL;
}

/* Run the peer on a thread or in a child process; peer_join() waits. */
struct peer_run {
    struct peer peer;
    int other_fd; /* our end, which a forked child must not keep open */
    pthread_t tid;
    pid_t pid;
};

static int
peer_start(struct peer_run *r, int procs)
{
    if (procs == 2) {
        r->pid = fork();
        if (r->pid < 0)
            return -1;
        if (r->pid == 0) {
            /* The child holds a copy of our end too; closing it here is
             * what lets it see end-of-file when we close ours. It also
             * exits on its own deadline if the parent dies. */
            close(r->other_fd);
            alarm((unsigned) (r->peer.deadline - bu_now_s()) + 5u);
            peer_main(&r->peer);
            _exit(r->peer.result == 0 ? 0 : 1);
        }
        close(r->peer.fd);
        return 0;
    }
    r->pid = 0;
    return pthread_create(&r->tid, NULL, peer_main, &r->peer) == 0 ? 0 : -1;
}

static int
peer_join(struct peer_run *r)
{
    int status;

    if (r->pid > 0) {
        if (waitpid(r->pid, &status, 0) != r->pid)
            return -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
    }
    pthread_join(r->tid, NULL);
    close(r->peer.fd);
    return r->peer.result;
}

/* ---- measurements ------------------------------------------------------- */

static int
pingpong(const struct opts *o, bool busy)
{
    struct peer_run r;
    int fd;
    char *buf;
    double *samples, deadline;
    uint64_t n = 0;
    int rc = 0;
    struct bu_json j;

    memset(&r, 0, sizeof(r));
    buf = calloc(1, o->msg_size);
    samples = calloc(o->iters, sizeof(*samples));
    if (buf == NULL || samples == NULL || tcp_pair(&fd, &r.peer.fd) != 0) {
        free(buf);
        free(samples);
        return -1;
    }
    deadline = bu_now_s() + o->max_seconds;
    r.other_fd = fd;
    r.peer.job = busy ? JOB_ECHO_BUSY : JOB_ECHO_BLOCK;
    r.peer.cpu = o->cpu_peer;
    r.peer.msg_size = o->msg_size;
    r.peer.deadline = deadline + 5.0;
    if (peer_start(&r, o->procs) != 0) {
        close(fd);
        close(r.peer.fd);
        free(buf);
        free(samples);
        return -1;
    }
    for (uint64_t i = 0; i < o->warmup + o->iters; i++) {
        uint64_t t0 = bu_now_ns();
        if (send_all(fd, buf, o->msg_size) != 0 ||
            recv_all(fd, buf, o->msg_size, busy, deadline + 5.0) != 0) {
            fprintf(stderr,
                    "floor_tcp: ping-pong failed after %" PRIu64
                    " round trips\n",
                    i);
            rc = -1;
            break;
        }
        if (i >= o->warmup)
            samples[n++] = (double) (bu_now_ns() - t0) / 1e3;
        if (bu_now_s() > deadline)
            break;
    }
    /* Closing our end is how the echo side learns to stop. */
    close(fd);
    if (peer_join(&r) != 0) {
        fprintf(stderr, "floor_tcp: the %s echo side failed\n",
                busy ? "busy" : "blocking");
        rc = -1;
    }
    /* Two spinning sides and one more runnable process on two cores can
     * make every round trip wait for a scheduler tick; a run that timed
     * nothing says so instead of reporting zeros. */
    if (rc == 0 && n == 0) {
        fprintf(stderr,
                "floor_tcp: %s ping-pong: the warm-up alone used "
                "the %.0f s bound; nothing timed\n",
                busy ? "busy" : "blocking", o->max_seconds);
        rc = -1;
    }
    if (rc == 0) {
        double med = bu_quantile(samples, n, 0.5);
        double p99 = bu_quantile(samples, n, 0.99);
        double lo = bu_quantile(samples, n, 0.0);
        printf("floor_tcp pingpong %-8s %" PRIu64 " B procs=%d: round trip "
               "median %8.2f us  p99 %8.2f us  min %7.2f us  (%" PRIu64
               " round trips%s)\n",
               busy ? "busy" : "blocking", o->msg_size, o->procs, med, p99, lo,
               n, n < o->iters ? ", cut short by the time bound" : "");
        bu_json_begin(&j, "floor_tcp");
        bu_json_str(&j, "metric", "pingpong");
        bu_json_str(&j, "mode", busy ? "busy" : "blocking");
        bu_json_u64(&j, "procs", (uint64_t) o->procs);
        bu_json_u64(&j, "msg_size", o->msg_size);
        bu_json_u64(&j, "iters", n);
        bu_json_bool(&j, "truncated", n < o->iters);
        bu_json_dbl(&j, "median_us", med);
        bu_json_dbl(&j, "p99_us", p99);
        bu_json_dbl(&j, "min_us", lo);
        bu_json_dbl(&j, "mean_us", bu_mean(samples, n));
        bu_json_end(&j);
    }
    free(buf);
    free(samples);
    return rc;
}

/* What a stream and a fetch start with: the repetitions --bytes gives
 * `size` (within --min-reps and --max-reps), a buffer of the seeded
 * pattern, a connection, and the peer's job, its deadline
 * (--max-seconds from now, plus 10 s) and its chunk count. The caller
 * adds what its job needs and calls peer_start(). */
static int
bulk_setup(const struct opts *o, uint64_t size, uint32_t seed,
           enum peer_job job, struct peer_run *r, int *fd, char **buf)
{
    uint64_t reps = o->bytes_per_size / size;

    if (reps < o->min_reps)
        reps = o->min_reps;
    if (reps > o->max_reps)
        reps = o->max_reps;
    memset(r, 0, sizeof(*r));
    *buf = malloc(size);
    if (*buf == NULL || tcp_pair(fd, &r->peer.fd) != 0) {
        free(*buf);
        return -1;
    }
    bu_pattern_fill(*buf, size, seed);
    r->other_fd = *fd;
    r->peer.job = job;
    r->peer.cpu = o->cpu_peer;
    r->peer.chunk = size;
    r->peer.chunks = reps;
    r->peer.seed = seed;
    r->peer.deadline = bu_now_s() + o->max_seconds + 10.0;
    return 0;
}

static int
stream(const struct opts *o, uint64_t size, uint32_t seed, bool busy)
{
    struct peer_run r;
    uint64_t reps;
    char *buf, ack = 0;
    double t0, secs, mbps, deadline;
    uint64_t sent = 0;
    int fd, rc = 0;
    char label[32];
    struct bu_json j;

    if (bulk_setup(o, size, seed, JOB_STREAM, &r, &fd, &buf) != 0)
        return -1;
    reps = r.peer.chunks;
    deadline = r.peer.deadline - 10.0;
    r.peer.busy = busy;
    if (peer_start(&r, o->procs) != 0) {
        close(fd);
        close(r.peer.fd);
        free(buf);
        return -1;
    }
    if (send_all_mode(fd, buf, size, busy, deadline + 10.0) != 0 ||
        recv_all(fd, &ack, 1, false, deadline + 10.0) != 0 || ack != 'w')
        rc = -1;
    t0 = bu_now_s();
    for (sent = 0; rc == 0 && sent < reps; sent++)
        if (send_all_mode(fd, buf, size, busy, deadline + 10.0) != 0) {
            rc = -1;
            break;
        }
    if (rc == 0 &&
        (recv_all(fd, &ack, 1, false, deadline + 10.0) != 0 || ack != 'k'))
        rc = -1;
    secs = bu_now_s() - t0;
    close(fd);
    if (peer_join(&r) != 0)
        rc = -1;
    mbps = secs > 0 ? (double) size * (double) sent / secs / 1e6 : 0.0;
    printf("floor_tcp stream   %8s %-8s procs=%d: %9.1f MB/s  (%" PRIu64
           " x in %.4f s)  check %s\n",
           bu_size_label(size, label, sizeof(label)),
           busy ? "busy" : "blocking", o->procs, mbps, sent, secs,
           rc == 0 ? "ok" : "FAILED");
    bu_json_begin(&j, "floor_tcp");
    bu_json_str(&j, "metric", "stream");
    bu_json_str(&j, "mode", busy ? "busy" : "blocking");
    bu_json_u64(&j, "procs", (uint64_t) o->procs);
    bu_json_u64(&j, "size", size);
    bu_json_u64(&j, "sndbuf", ft_sndbuf);
    bu_json_u64(&j, "reps", sent);
    bu_json_dbl(&j, "seconds", secs);
    bu_json_dbl(&j, "MBps", mbps);
    bu_json_bool(&j, "check_ok", rc == 0);
    bu_json_end(&j);
    free(buf);
    return rc;
}

static int
fetch(const struct opts *o, uint64_t size, uint32_t seed)
{
    struct peer_run r;
    uint64_t req, served = 0;
    double q[3] = {-1.0, -1.0, -1.0}, deadline;
    char *buf, label[32];
    int fd, rc = 0;
    struct bu_json j;

    if (bulk_setup(o, size, seed, JOB_FETCH, &r, &fd, &buf) != 0)
        return -1;
    deadline = r.peer.deadline - 10.0;
    r.peer.warm = 2;
    if (peer_start(&r, o->procs) != 0) {
        close(fd);
        close(r.peer.fd);
        free(buf);
        return -1;
    }
    for (;;) {
        if (recv_all(fd, &req, sizeof(req), true, deadline + 20.0) != 0) {
            rc = -1;
            break;
        }
        if (req == FT_FETCH_DONE) {
            if (recv_all(fd, q, sizeof(q), true, deadline + 20.0) != 0 ||
                !(q[1] > 0.0))
                rc = -1;
            break;
        }
        if (send_all_mode(fd, buf, size, true, deadline + 20.0) != 0) {
            rc = -1;
            break;
        }
        served++;
    }
    close(fd);
    if (peer_join(&r) != 0)
        rc = -1;
    free(buf);
    if (rc != 0) {
        fprintf(stderr, "floor_tcp: fetch of %" PRIu64 " bytes failed\n", size);
        return rc;
    }
    printf("floor_tcp fetch    %8s busy     procs=%d: one request to its "
           "last byte p10 %8.1f  median %8.1f  p90 %8.1f us  (%9.1f MB/s at "
           "the median; %" PRIu64 " answers)\n",
           bu_size_label(size, label, sizeof(label)), o->procs, q[0], q[1],
           q[2], (double) size / q[1], served);
    bu_json_begin(&j, "floor_tcp");
    bu_json_str(&j, "metric", "fetch");
    bu_json_str(&j, "mode", "busy");
    bu_json_u64(&j, "procs", (uint64_t) o->procs);
    bu_json_u64(&j, "size", size);
    bu_json_u64(&j, "sndbuf", ft_sndbuf);
    bu_json_u64(&j, "answers", served);
    bu_json_dbl(&j, "us_p10", q[0]);
    bu_json_dbl(&j, "us_median", q[1]);
    bu_json_dbl(&j, "us_p90", q[2]);
    bu_json_dbl(&j, "MBps_median", (double) size / q[1]);
    bu_json_end(&j);
    return 0;
}

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: floor_tcp [options]\n"
            "  --iters N          ping-pong round trips per mode (default "
            "10000)\n"
            "  --warmup N         round trips before timing (default 1000)\n"
            "  --msg-size B       ping-pong message size (default 1)\n"
            "  --sizes LIST       stream chunk sizes (default 4K..16M, x4)\n"
            "  --bytes N          bytes streamed per size (default 256M)\n"
            "  --min-reps N / --max-reps N  (defaults 4 / 20000)\n"
            "  --max-seconds S    bound of each measurement (default 5)\n"
            "  --procs 1|2        peer on a thread (1) or in a child process "
            "(2)\n"
            "  --pin A,B          this side on CPU A, the peer on CPU B\n"
            "  --sndbuf B         every connection's send buffer (default: "
            "the kernel's tuning)\n"
            "  --only pingpong|stream|fetch\n");
}

int
main(int argc, char **argv)
{
    struct opts o = {
        .iters = 10000,
        .warmup = 1000,
        .msg_size = 1,
        .bytes_per_size = 256u * 1024u * 1024u,
        .max_reps = 20000,
        .min_reps = 4,
        .max_seconds = 5.0,
        .procs = 1,
        .cpu_self = -1,
        .cpu_peer = -1,
        .do_pingpong = true,
        .do_stream = true,
        .do_fetch = true,
    };
    int rc = 0;

    for (uint64_t s = 4096; s <= 16u * 1024u * 1024u; s *= 4)
        o.sizes[o.nsizes++] = s;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t procs;
        bool ok = v != NULL;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (!ok) {
        } else if (strcmp(a, "--iters") == 0) {
            ok = bu_parse_u64(v, &o.iters) && o.iters > 0;
        } else if (strcmp(a, "--warmup") == 0) {
            ok = bu_parse_u64(v, &o.warmup);
        } else if (strcmp(a, "--msg-size") == 0) {
            ok = bu_parse_size(v, &o.msg_size) && o.msg_size > 0 &&
                 o.msg_size <= (1u << 20);
        } else if (strcmp(a, "--sizes") == 0) {
            ok = bu_parse_size_list(v, o.sizes, FT_MAX_SIZES, &o.nsizes);
        } else if (strcmp(a, "--bytes") == 0) {
            ok = bu_parse_size(v, &o.bytes_per_size) && o.bytes_per_size > 0;
        } else if (strcmp(a, "--min-reps") == 0) {
            ok = bu_parse_u64(v, &o.min_reps) && o.min_reps > 0;
        } else if (strcmp(a, "--max-reps") == 0) {
            ok = bu_parse_u64(v, &o.max_reps) && o.max_reps > 0;
        } else if (strcmp(a, "--max-seconds") == 0) {
            ok = bu_parse_double(v, &o.max_seconds) && o.max_seconds < 3600;
        } else if (strcmp(a, "--procs") == 0) {
            ok = bu_parse_u64(v, &procs) && (procs == 1 || procs == 2);
            o.procs = (int) procs;
        } else if (strcmp(a, "--pin") == 0) {
            ok = bu_parse_pin(v, &o.cpu_self, &o.cpu_peer);
        } else if (strcmp(a, "--sndbuf") == 0) {
            ok = bu_parse_size(v, &ft_sndbuf) && ft_sndbuf > 0 &&
                 ft_sndbuf <= (64u << 20);
        } else if (strcmp(a, "--only") == 0) {
            o.do_pingpong = strcmp(v, "pingpong") == 0;
            o.do_stream = strcmp(v, "stream") == 0;
            o.do_fetch = strcmp(v, "fetch") == 0;
            ok = o.do_pingpong || o.do_stream || o.do_fetch;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "floor_tcp: bad argument near '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o.min_reps > o.max_reps)
        o.min_reps = o.max_reps;
    /* A peer that dies must not kill us with SIGPIPE; send() reports it. */
    signal(SIGPIPE, SIG_IGN);
    if (bu_pin_self(o.cpu_self, "floor_tcp") != 0)
        return 1;

    if (o.do_pingpong) {
        if (pingpong(&o, true) != 0)
            rc = 1;
        if (pingpong(&o, false) != 0)
            rc = 1;
    }
    if (o.do_stream)
        for (int busy = 1; busy >= 0; busy--)
            for (unsigned i = 0; i < o.nsizes; i++)
                if (stream(&o, o.sizes[i], 0x7a11u + 131u * i, busy) != 0)
                    rc = 1;
    if (o.do_fetch)
        for (unsigned i = 0; i < o.nsizes; i++)
            if (fetch(&o, o.sizes[i], 0xfe7cu + 131u * i) != 0)
                rc = 1;
    return rc;
}
