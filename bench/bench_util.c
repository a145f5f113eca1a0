/*
 * Helpers shared by the benchmark tools; see bench_util.h.
 */
#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t
bu_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

double
bu_now_s(void)
{
    return (double) bu_now_ns() / 1e9;
}

double
bu_cpu_s(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

double
bu_load1(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1.0;

    if (f == NULL)
        return -1.0;
    if (fscanf(f, "%lf", &load) != 1)
        load = -1.0;
    fclose(f);
    return load;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

double
bu_quantile(const double *v, size_t n, double q)
{
    double *copy, result;
    size_t rank;

    if (n == 0)
        return 0.0;
    copy = malloc(n * sizeof(*copy));
    if (copy == NULL)
        return 0.0;
    memcpy(copy, v, n * sizeof(*copy));
    qsort(copy, n, sizeof(*copy), cmp_double);
    /* Nearest rank: the smallest sample with at least q*n samples at or
     * below it, so the 99th percentile of 100 samples is the 99th. */
    rank = (size_t) ceil(q * (double) n);
    if (rank == 0)
        rank = 1;
    if (rank > n)
        rank = n;
    result = copy[rank - 1];
    free(copy);
    return result;
}

#define COPY_PROBE_BYTES 2048u
#define COPY_PROBE_COPIES 512u
#define COPY_PROBE_REPS 15u

double
bu_copy_probe_ns(void)
{
    static _Alignas(64) uint8_t a[COPY_PROBE_BYTES], b[COPY_PROBE_BYTES];
    double t[COPY_PROBE_REPS];

    memset(a, 7, sizeof(a));
    for (unsigned r = 0; r < COPY_PROBE_REPS; r++) {
        uint64_t t0 = bu_now_ns();

        for (unsigned i = 0; i < COPY_PROBE_COPIES; i++) {
            memcpy(i & 1 ? a : b, i & 1 ? b : a, COPY_PROBE_BYTES);
            /* The copies are used: none may be left out. */
            __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
        }
        t[r] = (double) (bu_now_ns() - t0) / COPY_PROBE_COPIES;
    }
    return bu_quantile(t, COPY_PROBE_REPS, 0.5);
}

bool
bu_one_speed(const double *p, size_t n, double *lo, double *hi)
{
    *lo = *hi = n > 0 ? p[0] : 0.0;
    for (size_t i = 1; i < n; i++) {
        *lo = p[i] < *lo ? p[i] : *lo;
        *hi = p[i] > *hi ? p[i] : *hi;
    }
    return n > 0 && *lo > 0 && *hi <= BU_SAME_SPEED * *lo;
}

double
bu_mean(const double *v, size_t n)
{
    double sum = 0.0;

    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return n != 0 ? sum / (double) n : 0.0;
}

bool
bu_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (s == NULL || *s == '\0' || *s == '-')
        return false;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

bool
bu_parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0.0))
        return false;
    *out = v;
    return true;
}

bool
bu_parse_size(const char *s, uint64_t *out)
{
    char num[32];
    size_t len;
    uint64_t v, mult = 1;

    if (s == NULL)
        return false;
    len = strlen(s);
    if (len == 0 || len >= sizeof(num))
        return false;
    memcpy(num, s, len + 1);
    switch (num[len - 1]) {
    case 'k':
    case 'K':
        mult = 1024u;
        break;
    case 'm':
    case 'M':
        mult = 1024u * 1024u;
        break;
    case 'g':
    case 'G':
        mult = 1024u * 1024u * 1024u;
        break;
    default:
        break;
    }
    if (mult != 1)
        num[len - 1] = '\0';
    if (!bu_parse_u64(num, &v) || v > UINT64_MAX / mult)
        return false;
    *out = v * mult;
    return true;
}

/* Split s at commas and parse every piece as a size (sizes) or a plain
 * number, each in [lo, hi]. */
static bool
bu_parse_list(const char *s, bool sizes, uint64_t lo, uint64_t hi,
              uint64_t *vals, unsigned max, unsigned *n)
{
    char buf[512], *tok, *save = NULL;
    unsigned count = 0;

    if (strlen(s) >= sizeof(buf))
        return false;
    strcpy(buf, s);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        bool ok = sizes ? bu_parse_size(tok, &v) : bu_parse_u64(tok, &v);

        if (!ok || v < lo || v > hi || count == max)
            return false;
        vals[count++] = v;
    }
    if (count == 0)
        return false;
    *n = count;
    return true;
}

bool
bu_parse_size_list(const char *s, uint64_t *vals, unsigned max, unsigned *n)
{
    return bu_parse_list(s, true, 1, UINT64_MAX, vals, max, n);
}

bool
bu_parse_count_list(const char *s, unsigned lo, unsigned hi, unsigned *vals,
                    unsigned max, unsigned *n)
{
    uint64_t v[64];
    unsigned count;

    if (max > 64 || !bu_parse_list(s, false, lo, hi, v, max, &count))
        return false;
    for (unsigned i = 0; i < count; i++)
        vals[i] = (unsigned) v[i];
    *n = count;
    return true;
}

const char *
bu_size_label(uint64_t size, char *buf, size_t buf_size)
{
    if (size >= 1024u * 1024u && size % (1024u * 1024u) == 0)
        snprintf(buf, buf_size, "%" PRIu64 " MiB", size / (1024u * 1024u));
    else if (size >= 1024u && size % 1024u == 0)
        snprintf(buf, buf_size, "%" PRIu64 " KiB", size / 1024u);
    else
        snprintf(buf, buf_size, "%" PRIu64 " B", size);
    return buf;
}

void
bu_pattern_fill(void *buf, uint64_t size, uint32_t seed)
{
    uint8_t *p = buf;

    for (uint64_t i = 0; i < size; i++)
        p[i] = bu_pattern_byte(i, seed);
}

int64_t
bu_pattern_check(const void *buf, uint64_t size, uint32_t seed)
{
    const uint8_t *p = buf;

    for (uint64_t i = 0; i < size; i++)
        if (p[i] != bu_pattern_byte(i, seed))
            return (int64_t) i;
    return -1;
}

/* Append formatted text; a record that does not fit is cut short rather
 * than overflowing, and the cut is visible as invalid JSON. */
static void
json_append(struct bu_json *j, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (j->len >= sizeof(j->buf))
        return;
    va_start(ap, fmt);
    n = vsnprintf(j->buf + j->len, sizeof(j->buf) - j->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        j->len += (size_t) n;
    if (j->len > sizeof(j->buf))
        j->len = sizeof(j->buf);
}

static void
json_key(struct bu_json *j, const char *key)
{
    json_append(j, "%s\"%s\":", j->first ? "" : ",", key);
    j->first = false;
}

static void
json_string(struct bu_json *j, const char *s)
{
    json_append(j, "\"");
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char) *s;
        if (c == '"' || c == '\\')
            json_append(j, "\\%c", c);
        else if (c < 0x20)
            json_append(j, "\\u%04x", c);
        else
            json_append(j, "%c", c);
    }
    json_append(j, "\"");
}

void
bu_json_begin(struct bu_json *j, const char *tool)
{
    j->len = 0;
    j->first = true;
    json_append(j, "{");
    bu_json_str(j, "tool", tool);
}

void
bu_json_str(struct bu_json *j, const char *key, const char *value)
{
    json_key(j, key);
    json_string(j, value);
}

void
bu_json_u64(struct bu_json *j, const char *key, uint64_t value)
{
    json_key(j, key);
    json_append(j, "%" PRIu64, value);
}

void
bu_json_i64(struct bu_json *j, const char *key, int64_t value)
{
    json_key(j, key);
    json_append(j, "%" PRId64, value);
}

void
bu_json_dbl(struct bu_json *j, const char *key, double value)
{
    json_key(j, key);
    /* JSON has no NaN or infinity; a measurement that produced one is
     * reported as null so the record still parses. */
    if (isfinite(value))
        json_append(j, "%.6g", value);
    else
        json_append(j, "null");
}

void
bu_json_bool(struct bu_json *j, const char *key, bool value)
{
    json_key(j, key);
    json_append(j, "%s", value ? "true" : "false");
}

void
bu_json_end(struct bu_json *j)
{
    bu_json_dbl(j, "load1", bu_load1());
    json_append(j, "}");
    fwrite(j->buf, 1, j->len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

int
bu_write_line_file(const char *path, const char *text)
{
    char tmp[4096];
    struct stat st;
    FILE *f;

    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
        f = fopen(path, "w");
        if (f == NULL)
            return -1;
        fprintf(f, "%s\n", text);
        return fclose(f) == 0 ? 0 : -1;
    }
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid()) >=
        (int) sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%s\n", text);
    if (fclose(f) != 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

bool
bu_parse_pin(const char *s, int *a, int *b)
{
    unsigned x, y;
    char end;

    if (sscanf(s, "%u,%u%c", &x, &y, &end) != 2 || x >= CPU_SETSIZE ||
        y >= CPU_SETSIZE)
        return false;
    *a = (int) x;
    *b = (int) y;
    return true;
}

int
bu_pin_self(int cpu, const char *tool)
{
    cpu_set_t set;

    if (cpu < 0)
        return 0;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "%s: cannot pin to CPU %d\n", tool, cpu);
        return -1;
    }
    return 0;
}
