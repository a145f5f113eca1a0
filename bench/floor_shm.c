/*
 * floor_shm: what shared memory itself costs on this machine, the floor
 * under the na+sm plugin.
 *
 *   floor_shm [--iters N] [--warmup N] [--sizes LIST] [--bytes B]
 *             [--max-seconds S] [--payload LIST]
 *
 * - pingpong: two processes (fork) bounce a counter through one cache line
 *   of a MAP_SHARED mapping, both busy-polling; round trip median, p99.
 *   With --payload, the same with each ping carrying that many bytes: the
 *   pinger copies them from its own buffer into the shared mapping, the
 *   ponger copies them out into its own before it answers (the two copies
 *   any message over shared memory makes; the pong carries nothing, like
 *   an RPC with an empty response).
 * - msgrate (with --payload): a stream of messages of that size from one
 *   process to the other through a ring of line-aligned slots, at most 16
 *   unacknowledged, each copied in and out as above; messages per second
 *   of the median of 16 windows, after --warmup messages. The floor under
 *   "16 in flight" with that input: a 2 KiB RPC moves its 2 KiB the same
 *   way, so its rate is at most this one. To be that, the stream does
 *   what the library's ring does and nothing more: it goes round a span
 *   just large enough for the window (msg_span), the producer reads the
 *   consumer's count only when the window looks full, and it takes the
 *   next record's lines for writing after each push.
 * - memcpy: one process copies between two private buffers, per size.
 * - cma: the parent pulls from its child with process_vm_readv, per size
 *   (the copy na+sm's RMA makes).
 * - cma2: the same copy made by both processes at once, as na+sm's ASSIST
 *   record does from 512 KiB on: the parent pulls the first half while
 *   its child, busy-polling a shared word, pushes the second half with
 *   process_vm_writev; a copy ends when both halves are in.
 * - probe (--probe, alone): the one-line ping-pong's median over 5,000
 *   round trips, a few milliseconds: where the guest's two CPUs are at
 *   the moment (line_probe below); then each CPU's copy of 2 KiB in
 *   cache: whether one runs slowed (copy_probe below). msgrate runs both
 *   before and after itself and records them ("cpu_line_us_before",
 *   "_after"; "cpu_copy_ns_before", "_after", the slower CPU's), and
 *   compare_mercury.sh does the same around each pinned RPC run, so a
 *   floor is set beside RPCs only when both ran with the CPUs in one
 *   place and neither slowed.
 * --pin A,B runs the measuring process on CPU A and the forked one on CPU
 * B (as hg_rate's pinned client and server).
 * Every measurement prints a human line and a JSON line, like the other
 * tools. Loops are bounded by count and by --max-seconds.
 */
#include "bench_util.h"

#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SIZES 16

struct opts {
    uint64_t iters, warmup, bytes;
    uint64_t sizes[MAX_SIZES];
    unsigned nsizes;
    uint64_t payloads[MAX_SIZES];
    unsigned npayloads;
    double max_seconds;
    int cpu_self, cpu_peer; /* --pin A,B; -1: not pinned */
    bool probe;             /* --probe: the state probe alone     */
};

struct shared {
    _Atomic uint64_t ping;
    uint8_t pad0[56];
    _Atomic uint64_t pong;
    uint8_t pad1[56];
    _Atomic int stop;
};

/* The largest --payload, and the ring of the msgrate floor: MSG_RING
 * bytes, of which a run uses the span msg_span() gives. */
#define PAYLOAD_MAX (64u << 10)
#define MSG_RING (2u << 20)
#define MSG_SPAN_MIN (64u << 10)
#define MSG_WINDOW 16u
#define MSG_WINDOWS 16u

/* The bytes of the ring a run of `rec`-byte records goes round: room for
 * the MSG_WINDOW unacknowledged records, the one being written and the
 * end a record skips, and at least MSG_SPAN_MIN. As small as that, so
 * that the lines a record lands on are still in both caches from their
 * last round (the library's ring keeps to a window for the same reason),
 * and the floor is what the copies and the two cores cost, not memory. */
_Static_assert((MSG_WINDOW + 2) * (64 + PAYLOAD_MAX) <= MSG_RING,
               "the ring holds the span of the largest --payload");

static size_t
msg_span(size_t rec)
{
    size_t span = (MSG_WINDOW + 2) * rec;

    return span < MSG_SPAN_MIN ? MSG_SPAN_MIN : span;
}

/* Ask for the line at p for writing: prefetchw on x86, which the
 * compiler emits for __builtin_prefetch(p, 1) only when told the
 * processor has it. */
static inline void
prefetch_write(const uint8_t *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw %0" : : "m"(*p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* The offset of the next record of `rec` bytes at stream position *pos in
 * a ring of `span` bytes, which skips the ring's end when the record would
 * not fit before it. */
static size_t
msg_ring_off(uint64_t *pos, size_t rec, size_t span)
{
    size_t off = *pos % span;

    if (off + rec > span) {
        *pos += span - off;
        off = 0;
    }
    return off;
}

static uint64_t
max_payload(const struct opts *o)
{
    uint64_t m = 0;

    for (unsigned i = 0; i < o->npayloads; i++)
        m = o->payloads[i] > m ? o->payloads[i] : m;
    return m;
}

static void
usage(void)
{
    fprintf(stderr, "usage: floor_shm [--iters N] [--warmup N] [--sizes "
                    "LIST] [--bytes B] [--max-seconds S] [--payload LIST] "
                    "[--pin A,B] [--probe]\n");
    exit(2);
}

static void
parse(int argc, char **argv, struct opts *o)
{
    o->iters = 100000;
    o->warmup = 10000;
    o->bytes = 256ull << 20;
    o->max_seconds = 5;
    o->nsizes = 0;
    o->cpu_self = -1;
    o->cpu_peer = -1;
    o->probe = false;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (strcmp(a, "--probe") == 0) {
            o->probe = true;
            i--; /* takes no value */
            continue;
        }
        if (strcmp(a, "--iters") == 0 && ok)
            ok = bu_parse_u64(v, &o->iters) && o->iters > 0;
        else if (strcmp(a, "--warmup") == 0 && ok)
            ok = bu_parse_u64(v, &o->warmup);
        else if (strcmp(a, "--bytes") == 0 && ok)
            ok = bu_parse_size(v, &o->bytes);
        else if (strcmp(a, "--pin") == 0 && ok)
            ok = bu_parse_pin(v, &o->cpu_self, &o->cpu_peer);
        else if (strcmp(a, "--max-seconds") == 0 && ok)
            ok = bu_parse_double(v, &o->max_seconds);
        else if (strcmp(a, "--sizes") == 0 && ok)
            ok = bu_parse_size_list(v, o->sizes, MAX_SIZES, &o->nsizes);
        else if (strcmp(a, "--payload") == 0 && ok)
            ok = bu_parse_size_list(v, o->payloads, MAX_SIZES, &o->npayloads) &&
                 max_payload(o) <= PAYLOAD_MAX;
        else
            ok = false;
        if (!ok)
            usage();
    }
    if (o->nsizes == 0) {
        static const uint64_t def[] = {4096, 65536, 1 << 20, 16 << 20};
        for (unsigned i = 0; i < 4; i++)
            o->sizes[i] = def[i];
        o->nsizes = 4;
    }
}

/* The head of a record of two busy processes: tool, metric, mode, procs. */
static void
json_two_busy(struct bu_json *j, const char *metric)
{
    bu_json_begin(j, "floor_shm");
    bu_json_str(j, "metric", metric);
    bu_json_str(j, "mode", "busy");
    bu_json_u64(j, "procs", 2);
}

/*
 * The ping-pong: `iters` timed round trips after `warmup` untimed ones;
 * returns the median round trip in us. Prints its lines as `metric`
 * ("pingpong", or "probe" for --probe), or nothing when metric is NULL.
 */
static double
pingpong(const struct opts *o, uint64_t payload, uint64_t iters,
         uint64_t warmup, const char *metric)
{
    size_t map = sizeof(struct shared) + PAYLOAD_MAX;
    struct shared *s = mmap(NULL, map, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint8_t *slot = (uint8_t *) (s + 1);
    uint8_t *mine = calloc(1, PAYLOAD_MAX);
    double *samples = malloc(iters * sizeof(*samples));
    uint64_t total = warmup + iters, n = 0;
    double median;
    double end = bu_now_s() + o->max_seconds;
    struct bu_json j;
    pid_t pid;

    if (s == MAP_FAILED || samples == NULL || mine == NULL)
        exit(1);
    memset(s, 0, map);
    pid = fork();
    if (pid < 0) {
        perror("floor_shm: fork");
        exit(1);
    }
    if (pid == 0) {
        uint64_t seen = 0;

        (void) bu_pin_self(o->cpu_peer, "floor_shm"); /* checked in main */
        while (!atomic_load(&s->stop)) {
            uint64_t p = atomic_load_explicit(&s->ping, memory_order_acquire);
            if (p != seen) {
                seen = p;
                if (payload != 0)
                    memcpy(mine, slot, payload);
                atomic_store_explicit(&s->pong, p, memory_order_release);
            }
        }
        _exit(mine[0] == 0xff);
    }
    memset(mine, 7, PAYLOAD_MAX);
    /* The warm-up and the timed part each have the time bound, so a
     * loaded machine that makes the warm-up slow still gets samples. */
    for (uint64_t i = 1; i <= total; i++) {
        uint64_t t0 = bu_now_ns();
        if (payload != 0)
            memcpy(slot, mine, payload);
        atomic_store_explicit(&s->ping, i, memory_order_release);
        while (atomic_load_explicit(&s->pong, memory_order_acquire) != i)
            ;
        if (i > warmup)
            samples[n++] = (double) (bu_now_ns() - t0) / 1000.0;
        if (i == warmup || (i < warmup && bu_now_s() > end)) {
            end = bu_now_s() + o->max_seconds;
            i = warmup;
        } else if ((i & 1023) == 0 && bu_now_s() > end) {
            break;
        }
    }
    atomic_store(&s->stop, 1);
    waitpid(pid, NULL, 0);
    median = bu_quantile(samples, n, 0.5);
    if (metric != NULL) {
        printf("floor_shm %s busy procs=2 payload=%-6" PRIu64
               ": round trip median %8.2f us  p99 %8.2f us  min %8.2f us  "
               "(%" PRIu64 " round trips)\n",
               metric, payload, median, bu_quantile(samples, n, 0.99),
               bu_quantile(samples, n, 0), n);
        json_two_busy(&j, metric);
        bu_json_u64(&j, "payload", payload);
        bu_json_u64(&j, "iters", n);
        bu_json_dbl(&j, "median_us", median);
        bu_json_dbl(&j, "p99_us", bu_quantile(samples, n, 0.99));
        bu_json_dbl(&j, "min_us", bu_quantile(samples, n, 0));
        bu_json_end(&j);
    }
    free(samples);
    free(mine);
    munmap(s, map);
    return median;
}

/* The state probe: a short ping-pong of one line between the two
 * processes. A guest's two CPUs move between the host's cores while it
 * runs, and this round trip tells where they are (here: 0.09 us on one
 * core's two threads, 0.14 us on two cores that share a cache, 0.5 us
 * apart); copying between them costs accordingly. */
#define PROBE_ITERS 5000u
#define PROBE_WARMUP 1000u

static double
line_probe(const struct opts *o, const char *metric)
{
    return pingpong(o, 0, PROBE_ITERS, PROBE_WARMUP, metric);
}

/* The speed probe (bu_copy_probe_ns) on CPU `cpu` (-1: where this
 * process runs); the process is put back on o->cpu_self afterwards. */
static double
copy_probe(const struct opts *o, int cpu)
{
    double ns;

    (void) bu_pin_self(cpu, "floor_shm"); /* both checked in main */
    ns = bu_copy_probe_ns();
    (void) bu_pin_self(o->cpu_self, "floor_shm");
    return ns;
}

/* copy_probe on this process's CPU and on the peer's; unpinned, the one
 * CPU this process runs on gives both. Returns the slower. */
static double
copy_probes(const struct opts *o, double *self, double *peer)
{
    *self = copy_probe(o, o->cpu_self);
    *peer = o->cpu_peer >= 0 ? copy_probe(o, o->cpu_peer) : *self;
    return *self > *peer ? *self : *peer;
}

/* The slower of the two CPUs by copy_probe. */
static double
copy_probe_slowest(const struct opts *o)
{
    double self, peer;

    return copy_probes(o, &self, &peer);
}

/* --probe: the line's round trip, then each CPU's copy, in one record. */
static void
state_probe(const struct opts *o)
{
    double line = line_probe(o, NULL);
    double self, peer;
    double slowest = copy_probes(o, &self, &peer);
    struct bu_json j;

    if (o->cpu_peer >= 0)
        printf("floor_shm probe busy procs=2: line round trip median %.3f "
               "us; a 2 KiB copy in cache %.1f ns on CPU %d, %.1f ns on CPU "
               "%d\n",
               line, self, o->cpu_self, peer, o->cpu_peer);
    else
        printf("floor_shm probe busy procs=2: line round trip median %.3f "
               "us; a 2 KiB copy in cache %.1f ns (unpinned)\n",
               line, self);
    json_two_busy(&j, "probe");
    bu_json_u64(&j, "iters", PROBE_ITERS);
    bu_json_dbl(&j, "median_us", line);
    bu_json_dbl(&j, "copy_ns_self", self);
    bu_json_dbl(&j, "copy_ns_peer", peer);
    bu_json_dbl(&j, "copy_ns", slowest);
    bu_json_end(&j);
}

/* The ring of the msgrate floor: the consumer's count of messages read,
 * then the slots, each a header line whose `mark` is written last. */
struct msg_ring {
    _Atomic uint64_t head;
    _Atomic uint64_t total; /* lowered when the time bound cuts the run */
    _Atomic int ready;      /* the consumer runs (on its CPU)          */
    uint8_t pad[44];
    uint8_t data[MSG_RING];
};

/* The consumer of msgrate: takes r->total messages (or fewer, when the
 * producer lowers it) and exits. */
static void
msgrate_consumer(const struct opts *o, struct msg_ring *r, size_t rec,
                 uint64_t payload, uint8_t *mine)
{
    uint64_t pos = 0;
    size_t span = msg_span(rec);

    (void) bu_pin_self(o->cpu_peer, "floor_shm"); /* checked in main */
    atomic_store(&r->ready, 1);
    for (uint64_t i = 0; i < atomic_load(&r->total); i++) {
        size_t off = msg_ring_off(&pos, rec, span);
        _Atomic uint64_t *mark = (_Atomic uint64_t *) (void *) (r->data + off);

        while (atomic_load_explicit(mark, memory_order_acquire) != pos)
            if (i >= atomic_load(&r->total))
                _exit(0);
        memcpy(mine, r->data + off + 64, payload);
        pos += rec;
        atomic_store_explicit(&r->head, i + 1, memory_order_release);
    }
    _exit(0);
}

/*
 * The msgrate floor. The consumer is forked and the producer waits until it
 * runs, then sends o->warmup messages untimed, so that neither the fork nor
 * a cold ring is in the timed part. The timed messages are cut in
 * MSG_WINDOWS equal windows; the rate is the median window's, as hg_rate's
 * is, with the whole run's beside it. What the rate mostly follows is where
 * the two CPUs are, which the probes before and after record.
 */
static void
msgrate(const struct opts *o, uint64_t payload)
{
    size_t rec = (64 + payload + 63) & ~(size_t) 63;
    struct msg_ring *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint8_t *mine = malloc(payload);
    uint64_t count = o->iters, total = o->warmup + o->iters, tail = 0;
    uint64_t acked = 0; /* the consumer's count when last read */
    size_t span = msg_span(rec);
    uint64_t win = o->iters / MSG_WINDOWS, t[MSG_WINDOWS + 1] = {0};
    uint64_t first = UINT64_MAX, tend;
    double rates[MSG_WINDOWS], secs, end, line_before, line_after;
    double copy_before, copy_after;
    unsigned nwin = 0;
    bool cut = false;
    struct bu_json j;
    pid_t pid;

    if (r == MAP_FAILED || mine == NULL)
        exit(1);
    line_before = line_probe(o, NULL);
    copy_before = copy_probe_slowest(o);
    memset(r, 0xff, sizeof(*r));
    atomic_store(&r->head, 0);
    atomic_store(&r->total, total);
    atomic_store(&r->ready, 0);
    pid = fork();
    if (pid < 0) {
        perror("floor_shm: fork");
        exit(1);
    }
    if (pid == 0)
        msgrate_consumer(o, r, rec, payload, mine);
    memset(mine, 7, payload);
    while (!atomic_load(&r->ready))
        ;
    end = bu_now_s() + o->max_seconds;
    for (uint64_t i = 0; i < total; i++) {
        size_t off;

        if (first == UINT64_MAX &&
            (i == o->warmup || ((i & 1023) == 1023 && bu_now_s() > end))) {
            /* The timed part starts here (the warm-up is time-bounded too). */
            first = i;
            total = i + count;
            atomic_store(&r->total, total);
            t[0] = bu_now_ns();
            end = bu_now_s() + o->max_seconds;
        } else if (first != UINT64_MAX && win != 0 && (i - first) % win == 0 &&
                   nwin + 1 < MSG_WINDOWS) {
            t[++nwin] = bu_now_ns();
        } else if (first != UINT64_MAX && (i & 1023) == 1023 &&
                   bu_now_s() > end) {
            /* The time bound: the messages sent so far are the run, and
             * the windows that ended before it. */
            count = i - first;
            total = i;
            atomic_store(&r->total, total);
            cut = true;
            break;
        }
        /* The consumer's count is read only when the window looks full:
         * each read takes its line from the other core. */
        while (i - acked >= MSG_WINDOW)
            acked = atomic_load_explicit(&r->head, memory_order_acquire);
        off = msg_ring_off(&tail, rec, span);
        memcpy(r->data + off + 64, mine, payload);
        atomic_store_explicit((_Atomic uint64_t *) (void *) (r->data + off),
                              tail, memory_order_release);
        tail += rec;
        /* Take the next record's lines for writing now, while the
         * consumer reads this one, as the library's producer does. */
        {
            uint64_t next = tail;
            size_t noff = msg_ring_off(&next, rec, span);

            for (size_t l = 0; l < rec; l += 64)
                prefetch_write(r->data + noff + l);
        }
    }
    while (atomic_load_explicit(&r->head, memory_order_acquire) < total)
        ;
    tend = bu_now_ns();
    if (!cut && win != 0)
        t[++nwin] = tend;
    secs = (double) (tend - t[0]) / 1e9;
    waitpid(pid, NULL, 0);
    line_after = line_probe(o, NULL);
    copy_after = copy_probe_slowest(o);
    for (unsigned k = 0; k < nwin; k++) {
        /* The last window of a whole run also has the remainder. */
        uint64_t msgs =
            !cut && k + 1 == nwin ? count - (uint64_t) k * win : win;

        rates[k] = (double) msgs / ((double) (t[k + 1] - t[k] + 1) / 1e9);
    }
    {
        double rate =
            nwin > 0 ? bu_quantile(rates, nwin, 0.5) : (double) count / secs;

        printf("floor_shm msgrate busy procs=2 payload=%-6" PRIu64
               ": %10.0f messages/s, %u unacknowledged at most (median of %u "
               "windows; %" PRIu64 " messages in %.3f s: %.0f/s)\n",
               payload, rate, MSG_WINDOW, nwin, count, secs,
               (double) count / secs);
        json_two_busy(&j, "msgrate");
        bu_json_u64(&j, "payload", payload);
        bu_json_u64(&j, "window", MSG_WINDOW);
        bu_json_u64(&j, "count", count);
        bu_json_u64(&j, "windows", nwin);
        bu_json_dbl(&j, "msg_per_s", rate);
        bu_json_dbl(&j, "msg_per_s_whole", (double) count / secs);
        bu_json_dbl(&j, "cpu_line_us_before", line_before);
        bu_json_dbl(&j, "cpu_line_us_after", line_after);
        bu_json_dbl(&j, "cpu_copy_ns_before", copy_before);
        bu_json_dbl(&j, "cpu_copy_ns_after", copy_after);
        bu_json_end(&j);
    }
    free(mine);
    munmap(r, sizeof(*r));
}

/* The shared word of cma2: the parent posts (seq, dst, size), the child
 * answers with seq once its half is in. */
struct split_cmd {
    _Atomic uint64_t seq;
    uint64_t dst;
    uint64_t size;
    _Atomic uint64_t ack;
};

static void
split_child(struct split_cmd *c, const uint8_t *src)
{
    uint64_t seen = 0;

    for (;;) {
        uint64_t s = atomic_load(&c->seq);
        if (s == seen)
            continue;
        seen = s;
        if (c->size == 0)
            _exit(0);
        {
            uint64_t half = c->size / 2;
            struct iovec l = {(void *) (src + half), c->size - half};
            struct iovec r = {(void *) (uintptr_t) (c->dst + half),
                              c->size - half};
            if (process_vm_writev(getppid(), &l, 1, &r, 1, 0) !=
                (ssize_t) (c->size - half))
                _exit(1);
        }
        atomic_store(&c->ack, s);
    }
}

enum copy_kind { COPY_MEMCPY, COPY_CMA, COPY_CMA2 };

static const char *const copy_names[] = {"memcpy", "cma", "cma2"};

/* One copy of `size` bytes from src to dst: memcpy, process_vm_readv from
 * `pid`, or half of it read from `pid` while that child pushes the other
 * half (cma2, through `c`). */
static void
copy_once(enum copy_kind kind, uint8_t *dst, uint8_t *src, uint64_t size,
          pid_t pid, struct split_cmd *c)
{
    uint64_t part = kind == COPY_CMA2 ? size / 2 : size, seq = 0;
    struct iovec l = {dst, part}, rv = {src, part};

    if (kind == COPY_MEMCPY) {
        memcpy(dst, src, size);
        __asm__ volatile("" : : "r"(dst) : "memory");
        return;
    }
    if (kind == COPY_CMA2) {
        seq = atomic_load(&c->seq) + 1;
        c->dst = (uint64_t) (uintptr_t) dst;
        c->size = size;
        atomic_store(&c->seq, seq);
    }
    if (process_vm_readv(pid, &l, 1, &rv, 1, 0) != (ssize_t) part) {
        perror("floor_shm: process_vm_readv");
        exit(1);
    }
    if (kind == COPY_CMA2)
        while (atomic_load(&c->ack) != seq)
            ;
}

/* Copies of `size` bytes until o->bytes moved (at least 4 copies);
 * median MB/s of the copies. */
static void
copy_bw(const struct opts *o, uint64_t size, enum copy_kind kind, pid_t pid,
        struct split_cmd *c, uint8_t *src)
{
    uint64_t reps = o->bytes / size < 4 ? 4 : o->bytes / size;
    double *mbs = malloc(reps * sizeof(*mbs));
    uint8_t *dst = malloc(size);
    double end = bu_now_s() + o->max_seconds;
    char label[32];
    struct bu_json j;
    uint64_t n = 0;

    if (mbs == NULL || dst == NULL)
        exit(1);
    memset(dst, 1, size);
    for (uint64_t r = 0; r < reps && bu_now_s() < end; r++) {
        uint64_t t0 = bu_now_ns(), t;
        copy_once(kind, dst, src, size, pid, c);
        t = bu_now_ns() - t0;
        mbs[n++] = (double) size / (t ? (double) t : 1.0) * 1000.0;
    }
    if (memcmp(dst, src, size) != 0) {
        fprintf(stderr, "floor_shm: %s copied the wrong bytes\n",
                copy_names[kind]);
        exit(1);
    }
    bu_size_label(size, label, sizeof(label));
    printf("floor_shm %-6s %8s: %10.1f MB/s median of %" PRIu64 " copies\n",
           copy_names[kind], label, bu_quantile(mbs, n, 0.5), n);
    bu_json_begin(&j, "floor_shm");
    bu_json_str(&j, "metric", copy_names[kind]);
    bu_json_u64(&j, "size", size);
    bu_json_u64(&j, "copies", n);
    bu_json_dbl(&j, "median_mbs", bu_quantile(mbs, n, 0.5));
    bu_json_end(&j);
    free(dst);
    free(mbs);
}

int
main(int argc, char **argv)
{
    struct opts o;
    uint64_t max = 0;
    uint8_t *src;
    pid_t pid;

    parse(argc, argv, &o);
    /* Both CPUs are tried here, the peer's first, so that a forked
     * process's own pinning cannot fail. */
    if (bu_pin_self(o.cpu_peer, "floor_shm") != 0 ||
        bu_pin_self(o.cpu_self, "floor_shm") != 0)
        return 1;
    if (o.probe) {
        state_probe(&o);
        return 0;
    }
    pingpong(&o, 0, o.iters, o.warmup, "pingpong");
    for (unsigned i = 0; i < o.npayloads; i++) {
        pingpong(&o, o.payloads[i], o.iters, o.warmup, "pingpong");
        msgrate(&o, o.payloads[i]);
    }
    for (unsigned i = 0; i < o.nsizes; i++)
        max = o.sizes[i] > max ? o.sizes[i] : max;
    src = malloc(max);
    if (src == NULL)
        return 1;
    memset(src, 7, max);
    for (unsigned i = 0; i < o.nsizes; i++)
        copy_bw(&o, o.sizes[i], COPY_MEMCPY, 0, NULL, src);
    /* The child keeps the same buffer at the same address (fork). */
    pid = fork();
    if (pid < 0) {
        perror("floor_shm: fork");
        return 1;
    }
    if (pid == 0) {
        (void) bu_pin_self(o.cpu_peer, "floor_shm"); /* checked above */
        pause();
        _exit(0);
    }
    for (unsigned i = 0; i < o.nsizes; i++)
        copy_bw(&o, o.sizes[i], COPY_CMA, pid, NULL, src);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    {
        struct split_cmd *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (c == MAP_FAILED)
            return 1;
        atomic_init(&c->seq, 0);
        atomic_init(&c->ack, 0);
        pid = fork();
        if (pid < 0) {
            perror("floor_shm: fork");
            return 1;
        }
        if (pid == 0) {
            (void) bu_pin_self(o.cpu_peer, "floor_shm"); /* checked above */
            split_child(c, src);
        }
        for (unsigned i = 0; i < o.nsizes; i++)
            copy_bw(&o, o.sizes[i], COPY_CMA2, pid, c, src);
        c->size = 0;
        atomic_store(&c->seq, atomic_load(&c->seq) + 1);
        waitpid(pid, NULL, 0);
        munmap(c, sizeof(*c));
    }
    free(src);
    return 0;
}
