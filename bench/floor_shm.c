/*
 * floor_shm: what shared memory itself costs on this machine, the floor
 * under the na+sm plugin.
 *
 *   floor_shm [--iters N] [--warmup N] [--sizes LIST] [--bytes B]
 *             [--max-seconds S]
 *
 * - pingpong: two processes (fork) bounce a counter through one cache line
 *   of a MAP_SHARED mapping, both busy-polling; round trip median, p99.
 * - memcpy: one process copies between two private buffers, per size.
 * - cma: the parent pulls from its child with process_vm_readv, per size
 *   (the copy na+sm's RMA makes).
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
    double max_seconds;
};

struct shared {
    _Atomic uint64_t ping;
    uint8_t pad0[56];
    _Atomic uint64_t pong;
    uint8_t pad1[56];
    _Atomic int stop;
};

static void
usage(void)
{
    fprintf(stderr, "usage: floor_shm [--iters N] [--warmup N] [--sizes "
                    "LIST] [--bytes B] [--max-seconds S]\n");
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
pingpong(const struct opts *o)
{
    struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double *samples = malloc(o->iters * sizeof(*samples));
    uint64_t total = o->warmup + o->iters, n = 0;
    double end = bu_now_s() + o->max_seconds;
    struct bu_json j;
    pid_t pid;

    if (s == MAP_FAILED || samples == NULL)
        exit(1);
    memset(s, 0, sizeof(*s));
    pid = fork();
    if (pid == 0) {
        uint64_t seen = 0;
        while (!atomic_load(&s->stop)) {
            uint64_t p = atomic_load_explicit(&s->ping, memory_order_acquire);
            if (p != seen) {
                seen = p;
                atomic_store_explicit(&s->pong, p, memory_order_release);
            }
        }
        _exit(0);
    }
    /* The warm-up and the timed part each have the time bound, so a
     * loaded machine that makes the warm-up slow still gets samples. */
    for (uint64_t i = 1; i <= total; i++) {
        uint64_t t0 = bu_now_ns();
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
    printf("floor_shm pingpong busy procs=2: round trip median %8.2f us  "
           "p99 %8.2f us  min %8.2f us  (%" PRIu64 " round trips)\n",
           bu_quantile(samples, n, 0.5), bu_quantile(samples, n, 0.99),
           bu_quantile(samples, n, 0), n);
    bu_json_begin(&j, "floor_shm");
    bu_json_str(&j, "metric", "pingpong");
    bu_json_str(&j, "mode", "busy");
    bu_json_u64(&j, "procs", 2);
    bu_json_u64(&j, "iters", n);
    bu_json_dbl(&j, "median_us", bu_quantile(samples, n, 0.5));
    bu_json_dbl(&j, "p99_us", bu_quantile(samples, n, 0.99));
    bu_json_dbl(&j, "min_us", bu_quantile(samples, n, 0));
    bu_json_end(&j);
    free(samples);
    munmap(s, sizeof(*s));
}

/* Copies of `size` bytes until o->bytes moved (at least 4 copies);
 * median MB/s of the copies. `cma`: process_vm_readv from `pid`. */
static void
copy_bw(const struct opts *o, uint64_t size, bool cma, pid_t pid, uint8_t *src)
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
        if (cma) {
            struct iovec l = {dst, size}, rv = {src, size};
            if (process_vm_readv(pid, &l, 1, &rv, 1, 0) != (ssize_t) size) {
                perror("floor_shm: process_vm_readv");
                exit(1);
            }
        } else {
            memcpy(dst, src, size);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        t = bu_now_ns() - t0;
        mbs[n++] = (double) size / (t ? (double) t : 1.0) * 1000.0;
    }
    bu_size_label(size, label, sizeof(label));
    printf("floor_shm %-6s %8s: %10.1f MB/s median of %" PRIu64 " copies\n",
           cma ? "cma" : "memcpy", label, bu_quantile(mbs, n, 0.5), n);
    bu_json_begin(&j, "floor_shm");
    bu_json_str(&j, "metric", cma ? "cma" : "memcpy");
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
    pingpong(&o);
    for (unsigned i = 0; i < o.nsizes; i++)
        max = o.sizes[i] > max ? o.sizes[i] : max;
    src = malloc(max);
    if (src == NULL)
        return 1;
    memset(src, 7, max);
    for (unsigned i = 0; i < o.nsizes; i++)
        copy_bw(&o, o.sizes[i], false, 0, src);
    /* The child keeps the same buffer at the same address (fork). */
    pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    for (unsigned i = 0; i < o.nsizes; i++)
        copy_bw(&o, o.sizes[i], true, pid, src);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    free(src);
    return 0;
}
