/*
 * Helpers shared by the benchmark tools: clocks, order statistics, option
 * parsing and the one-line JSON records every tool prints.
 *
 * Nothing here touches Quicksilver; bench_hg.h holds the HG helpers. Every
 * tool prints, for each measurement, one human-readable line and then one
 * JSON object on a line of its own, so scripts can grep for lines that start
 * with '{' and parse them without knowing the human format.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Monotonic real time. */
uint64_t bu_now_ns(void);
double bu_now_s(void);

/* CPU time used by the whole process (all threads, user + system), in
 * seconds. */
double bu_cpu_s(void);

/* The 1-minute load average, or -1 when /proc/loadavg cannot be read. It
 * goes into every JSON record because the machine is shared and a number
 * taken under load must be recognisable as such. */
double bu_load1(void);

/*
 * The q-quantile (0 <= q <= 1) of n samples, by the nearest-rank rule on a
 * sorted copy: q = 0.5 gives the median, 0.99 the 99th percentile. The
 * input is left untouched. Returns 0 for n == 0.
 */
double bu_quantile(const double *v, size_t n, double q);
double bu_mean(const double *v, size_t n);

/*
 * The speed probe: ns per copy of 2 KiB between two buffers that stay in
 * the first-level cache, on the CPU the calling thread runs on: the median
 * of 15 timings of 512 copies (about 0.2 ms). A guest's CPU also slows
 * down while the host runs something else on its core's other thread (or
 * lowers its clock), with no change of place: a copy then costs more, and
 * a run's rates follow. Tools record it before and after a run, so that a
 * reader (or a summary) can tell a slowed CPU from a slower library.
 */
double bu_copy_probe_ns(void);

/* Two copy probes this far apart or less find a CPU at one speed (the
 * spread at one speed is a few percent; a slowed CPU's copy takes 1.2x to
 * 2x as long). compare_summary.py's SAME_SPEED is the same factor. */
#define BU_SAME_SPEED 1.1

/* Whether the n copy probes p[] (ns) found the CPU at one speed: all
 * positive and the largest at most BU_SAME_SPEED times the smallest.
 * *lo and *hi get the smallest and the largest (0 for n == 0). */
bool bu_one_speed(const double *p, size_t n, double *lo, double *hi);

/* --pin's "A,B": two CPU numbers, each below CPU_SETSIZE; false otherwise. */
bool bu_parse_pin(const char *s, int *a, int *b);

/* Pin the calling thread to `cpu` (nothing when cpu < 0); 0, or -1 after
 * printing "TOOL: cannot pin to CPU N" to stderr. */
int bu_pin_self(int cpu, const char *tool);

/* Strict decimal (or 0x hexadecimal) parsing; false on junk or overflow. */
bool bu_parse_u64(const char *s, uint64_t *out);
bool bu_parse_double(const char *s, double *out);

/* Parse a size with an optional K, M or G suffix (powers of 1024). */
bool bu_parse_size(const char *s, uint64_t *out);

/* Parse a comma-separated list of non-zero sizes (bu_parse_size each) into
 * vals[0..max-1]. Returns false on junk, a zero, more than max entries or
 * an empty list; *n is written only on success. */
bool bu_parse_size_list(const char *s, uint64_t *vals, unsigned max,
                        unsigned *n);
/* The same for decimal counts in [lo, hi] (at most 64 of them), such as
 * the node counts of the simulator tools. */
bool bu_parse_count_list(const char *s, unsigned lo, unsigned hi,
                         unsigned *vals, unsigned max, unsigned *n);

/* "4 KiB", "16 MiB": a short label for a power-of-two size. */
const char *bu_size_label(uint64_t size, char *buf, size_t buf_size);

/*
 * The byte pattern the bandwidth tools write and check. It depends on the
 * offset and on a per-transfer seed, so a transfer that moved nothing, or
 * moved a stale buffer from an earlier size, fails the check.
 */
static inline uint8_t
bu_pattern_byte(uint64_t i, uint32_t seed)
{
    return (uint8_t) ((i * 131u) ^ (i >> 11) ^ seed ^ (seed >> 8));
}
void bu_pattern_fill(void *buf, uint64_t size, uint32_t seed);
/* Offset of the first byte that differs from the pattern, or -1. */
int64_t bu_pattern_check(const void *buf, uint64_t size, uint32_t seed);

/* splitmix64: the next draw of the stream whose state is *state. The
 * tools' own seeded streams (never the fabric's). */
static inline uint64_t
bu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/*
 * A JSON object on one line. Keys are written in the order given. Strings
 * are escaped; doubles use %.6g unless a field wants more digits. The
 * object is printed on stdout with a newline by bu_json_end(), which also
 * flushes stdout so that a script reading a pipe sees the line at once.
 */
struct bu_json {
    char buf[4096];
    size_t len;
    bool first;
};

void bu_json_begin(struct bu_json *j, const char *tool);
void bu_json_str(struct bu_json *j, const char *key, const char *value);
void bu_json_u64(struct bu_json *j, const char *key, uint64_t value);
void bu_json_i64(struct bu_json *j, const char *key, int64_t value);
void bu_json_dbl(struct bu_json *j, const char *key, double value);
void bu_json_bool(struct bu_json *j, const char *key, bool value);
void bu_json_end(struct bu_json *j);

/* Write `text` and a newline to `path` atomically (write a temporary file,
 * then rename), so a reader polling for the file never sees half of it. A
 * FIFO is written directly. Returns 0 or -1 with errno set. */
int bu_write_line_file(const char *path, const char *text);

#endif /* BENCH_UTIL_H */
