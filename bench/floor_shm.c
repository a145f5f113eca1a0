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
 *   unacknowledged, each copied in and out as above; messages per second.
 *   The floor under "16 in flight" with that input.
 * - memcpy: one process copies between two private buffers, per size.
 * - cma: the parent pulls from its child with process_vm_readv, per size
 *   (the copy na+sm's RMA makes).
 * - cma2: the same copy made by both processes at once, as na+sm's ASSIST
 *   record does from 512 KiB on: the parent pulls the first half while
 *   its child, busy-polling a shared word, pushes the second half with
 *   process_vm_writev; a copy ends when both halves are in.
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
};

struct shared {
    _Atomic uint64_t ping;
    uint8_t pad0[56];
    _Atomic uint64_t pong;
    uint8_t pad1[56];
    _Atomic int stop;
};

/* The largest --payload, and the ring of the msgrate floor. */
#define PAYLOAD_MAX (64u << 10)
#define MSG_RING (1u << 20)
#define MSG_WINDOW 16u

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
                    "LIST] [--bytes B] [--max-seconds S] [--payload LIST]\n");
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
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (strcmp(a, "--iters") == 0 && ok)
            ok = bu_parse_u64(v, &o->iters);
        else if (strcmp(a, "--warmup") == 0 && ok)
            ok = bu_parse_u64(v, &o->warmup);
        else if (strcmp(a, "--bytes") == 0 && ok)
            ok = bu_parse_size(v, &o->bytes);
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

static void
pingpong(const struct opts *o, uint64_t payload)
{
    size_t map = sizeof(struct shared) + PAYLOAD_MAX;
    struct shared *s = mmap(NULL, map, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint8_t *slot = (uint8_t *) (s + 1);
    uint8_t *mine = calloc(1, PAYLOAD_MAX);
    double *samples = malloc(o->iters * sizeof(*samples));
    uint64_t total = o->warmup + o->iters, n = 0;
    double end = bu_now_s() + o->max_seconds;
    struct bu_json j;
    pid_t pid;

    if (s == MAP_FAILED || samples == NULL || mine == NULL)
        exit(1);
    memset(s, 0, map);
    pid = fork();
    if (pid == 0) {
        uint64_t seen = 0;
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
        if (i > o->warmup)
            samples[n++] = (double) (bu_now_ns() - t0) / 1000.0;
        if (i == o->warmup || (i < o->warmup && bu_now_s() > end)) {
            end = bu_now_s() + o->max_seconds;
            i = o->warmup;
        } else if ((i & 1023) == 0 && bu_now_s() > end) {
            break;
        }
    }
    atomic_store(&s->stop, 1);
    waitpid(pid, NULL, 0);
    printf("floor_shm pingpong busy procs=2 payload=%-6" PRIu64
           ": round trip median %8.2f us  p99 %8.2f us  min %8.2f us  (%" PRIu64
           " round trips)\n",
           payload, bu_quantile(samples, n, 0.5), bu_quantile(samples, n, 0.99),
           bu_quantile(samples, n, 0), n);
    bu_json_begin(&j, "floor_shm");
    bu_json_str(&j, "metric", "pingpong");
    bu_json_str(&j, "mode", "busy");
    bu_json_u64(&j, "procs", 2);
    bu_json_u64(&j, "payload", payload);
    bu_json_u64(&j, "iters", n);
    bu_json_dbl(&j, "median_us", bu_quantile(samples, n, 0.5));
    bu_json_dbl(&j, "p99_us", bu_quantile(samples, n, 0.99));
    bu_json_dbl(&j, "min_us", bu_quantile(samples, n, 0));
    bu_json_end(&j);
    free(samples);
    free(mine);
    munmap(s, map);
}

/* The ring of the msgrate floor: the consumer's count of messages read,
 * then the slots, each a header line whose `mark` is written last. */
struct msg_ring {
    _Atomic uint64_t head;
    _Atomic uint64_t total; /* lowered when the time bound cuts the run */
    uint8_t pad[48];
    uint8_t data[MSG_RING];
};

static void
msgrate(const struct opts *o, uint64_t payload)
{
    size_t rec = (64 + payload + 63) & ~(size_t) 63;
    struct msg_ring *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint8_t *mine = malloc(payload);
    uint64_t count = o->iters, tail = 0, t0, t1;
    double secs;
    struct bu_json j;
    pid_t pid;

    if (r == MAP_FAILED || mine == NULL)
        exit(1);
    memset(r, 0xff, sizeof(*r));
    atomic_store(&r->head, 0);
    atomic_store(&r->total, count);
    pid = fork();
    if (pid == 0) {
        uint64_t pos = 0;
        for (uint64_t i = 0; i < atomic_load(&r->total); i++) {
            size_t off = pos % MSG_RING;
            _Atomic uint64_t *mark;

            if (off + rec > MSG_RING) {
                pos += MSG_RING - off;
                off = 0;
            }
            mark = (_Atomic uint64_t *) (void *) (r->data + off);
            while (atomic_load_explicit(mark, memory_order_acquire) != pos)
                if (i >= atomic_load(&r->total))
                    _exit(0);
            memcpy(mine, r->data + off + 64, payload);
            pos += rec;
            atomic_store_explicit(&r->head, i + 1, memory_order_release);
        }
        _exit(0);
    }
    memset(mine, 7, payload);
    t0 = bu_now_ns();
    for (uint64_t i = 0; i < count; i++) {
        size_t off = tail % MSG_RING;

        if ((i & 1023) == 1023 &&
            (double) (bu_now_ns() - t0) / 1e9 > o->max_seconds) {
            count = i;
            atomic_store(&r->total, count);
            break;
        }
        while (i - atomic_load_explicit(&r->head, memory_order_acquire) >=
               MSG_WINDOW)
            ;
        if (off + rec > MSG_RING) {
            tail += MSG_RING - off;
            off = 0;
        }
        memcpy(r->data + off + 64, mine, payload);
        atomic_store_explicit((_Atomic uint64_t *) (void *) (r->data + off),
                              tail, memory_order_release);
        tail += rec;
    }
    while (atomic_load_explicit(&r->head, memory_order_acquire) < count)
        ;
    t1 = bu_now_ns();
    waitpid(pid, NULL, 0);
    secs = (double) (t1 - t0) / 1e9;
    printf("floor_shm msgrate busy procs=2 payload=%-6" PRIu64
           ": %10.0f messages/s, %u unacknowledged at most (%" PRIu64
           " messages in %.3f s)\n",
           payload, (double) count / secs, MSG_WINDOW, count, secs);
    bu_json_begin(&j, "floor_shm");
    bu_json_str(&j, "metric", "msgrate");
    bu_json_str(&j, "mode", "busy");
    bu_json_u64(&j, "procs", 2);
    bu_json_u64(&j, "payload", payload);
    bu_json_u64(&j, "window", MSG_WINDOW);
    bu_json_u64(&j, "count", count);
    bu_json_dbl(&j, "msg_per_s", (double) count / secs);
    bu_json_end(&j);
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
    pingpong(&o, 0);
    for (unsigned i = 0; i < o.npayloads; i++) {
        pingpong(&o, o.payloads[i]);
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
    if (pid == 0) {
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
        if (pid == 0)
            split_child(c, src);
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
