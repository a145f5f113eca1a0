/*
 * qs_fuzz_driver_main(): run a libFuzzer target without libFuzzer, so any
 * compiler (gcc included) and any CI can run it: replay files and
 * directories, then run a bounded number of inputs mutated from them. An
 * input that crashes is written to a file first, with the line that
 * replays it.
 */
#include "fuzz/qs_fuzz_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QS_DRIVER_MAX_INPUT 65536
#define QS_DRIVER_MAX_CORPUS 4096

struct qs_corpus {
    uint8_t *data[QS_DRIVER_MAX_CORPUS];
    size_t size[QS_DRIVER_MAX_CORPUS];
    size_t n;
};

/* The input being run, for the crash handler. */
static const uint8_t *qs_current;
static size_t qs_current_size;
static const char *qs_argv0;

static void
qs_put(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) < 0)
        return;
}

/* Async-signal-safe: save the input as crash-<hash> and say how to
 * replay it, then die of the same signal. */
static void
qs_crash_handler(int sig)
{
    char name[32] = "crash-";
    uint64_t h = 0xcbf29ce484222325ULL;
    int fd;

    for (size_t i = 0; i < qs_current_size; i++)
        h = (h ^ qs_current[i]) * 0x100000001b3ULL;
    for (int i = 0; i < 16; i++)
        name[6 + i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
    name[22] = '\0';
    fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (qs_current_size > 0 && write(fd, qs_current, qs_current_size) < 0)
            qs_put(STDERR_FILENO, "qs_fuzz: could not save the input\n");
        close(fd);
    }
    qs_put(STDERR_FILENO, "qs_fuzz: crash; input saved as ");
    qs_put(STDERR_FILENO, name);
    qs_put(STDERR_FILENO, "\nqs_fuzz: replay: ");
    qs_put(STDERR_FILENO, qs_argv0);
    qs_put(STDERR_FILENO, " ");
    qs_put(STDERR_FILENO, name);
    qs_put(STDERR_FILENO, "\n");
    if (sig != 0) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* Sanitizers end the process with _exit() after their report, not with a
 * signal: their death callback saves the input instead. Weak, so that
 * the library needs no sanitizer runtime. */
extern void __sanitizer_set_death_callback(void (*callback)(void))
    __attribute__((weak));

static void
qs_sanitizer_death(void)
{
    if (qs_current != NULL || qs_current_size > 0)
        qs_crash_handler(0);
}

static int
qs_run(int (*target)(const uint8_t *, size_t), const uint8_t *data, size_t size)
{
    qs_current = data;
    qs_current_size = size;
    target(data, size);
    qs_current = NULL;
    qs_current_size = 0;
    return 0;
}

static int
qs_load(struct qs_corpus *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(QS_DRIVER_MAX_INPUT);
    size_t n;

    if (f == NULL || buf == NULL) {
        perror(path);
        free(buf);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    n = fread(buf, 1, QS_DRIVER_MAX_INPUT, f);
    fclose(f);
    if (c->n < QS_DRIVER_MAX_CORPUS) {
        c->data[c->n] = buf;
        c->size[c->n++] = n;
    } else
        free(buf);
    return 0;
}

static int
qs_load_path(struct qs_corpus *c, const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;

    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return qs_load(c, path);
    d = opendir(path);
    if (d == NULL) {
        perror(path);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char child[4096];

        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        if (qs_load(c, child) != 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

static uint64_t
qs_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A few edits of the kinds libFuzzer makes: flip, set, insert, erase,
 * duplicate a range, splice another input, insert the bulk marker. */
static size_t
qs_mutate(uint8_t *buf, size_t size, const struct qs_corpus *c, uint64_t *r)
{
    unsigned edits = 1 + (unsigned) (qs_rand(r) % 4);

    for (unsigned k = 0; k < edits; k++) {
        size_t pos = size ? (size_t) (qs_rand(r) % size) : 0;
        size_t len = 1 + (size_t) (qs_rand(r) % 16);

        switch (qs_rand(r) % 7) {
        case 0:
            if (size)
                buf[pos] ^= (uint8_t) (1u << (qs_rand(r) % 8));
            break;
        case 1:
            if (size)
                buf[pos] = (uint8_t) qs_rand(r);
            break;
        case 2:
            if (size + len <= QS_DRIVER_MAX_INPUT) {
                memmove(buf + pos + len, buf + pos, size - pos);
                for (size_t i = 0; i < len; i++)
                    buf[pos + i] = (uint8_t) qs_rand(r);
                size += len;
            }
            break;
        case 3:
            if (pos + len <= size) {
                memmove(buf + pos, buf + pos + len, size - pos - len);
                size -= len;
            }
            break;
        case 4:
            if (pos + len <= size && size + len <= QS_DRIVER_MAX_INPUT) {
                memmove(buf + pos + len, buf + pos, size - pos);
                size += len;
            }
            break;
        case 5: {
            size_t o = (size_t) (qs_rand(r) % c->n), take = c->size[o];

            if (take > 0 && pos <= size) {
                size_t from = (size_t) (qs_rand(r) % take);

                take -= from;
                if (pos + take > QS_DRIVER_MAX_INPUT)
                    take = QS_DRIVER_MAX_INPUT - pos;
                memcpy(buf + pos, c->data[o] + from, take);
                if (pos + take > size)
                    size = pos + take;
            }
            break;
        }
        default:
            if (size + QS_FUZZ_BULK_MARKER_LEN <= QS_DRIVER_MAX_INPUT) {
                memmove(buf + pos + QS_FUZZ_BULK_MARKER_LEN, buf + pos,
                        size - pos);
                memcpy(buf + pos, QS_FUZZ_BULK_MARKER, QS_FUZZ_BULK_MARKER_LEN);
                size += QS_FUZZ_BULK_MARKER_LEN;
            }
            break;
        }
    }
    return size;
}

int
qs_fuzz_driver_main(int argc, char **argv,
                    int (*target)(const uint8_t *data, size_t size))
{
    struct qs_corpus *c = calloc(1, sizeof(*c));
    unsigned long runs = 0;
    uint64_t seed = 1;
    uint8_t *buf = malloc(QS_DRIVER_MAX_INPUT);

    if (c == NULL || buf == NULL || target == NULL)
        return 2;
    qs_argv0 = argv[0];
    signal(SIGABRT, qs_crash_handler);
    signal(SIGSEGV, qs_crash_handler);
    signal(SIGBUS, qs_crash_handler);
    signal(SIGFPE, qs_crash_handler);
    if (__sanitizer_set_death_callback != NULL)
        __sanitizer_set_death_callback(qs_sanitizer_death);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-runs=", 6) == 0)
            runs = strtoul(argv[i] + 6, NULL, 10);
        else if (strncmp(argv[i], "-seed=", 6) == 0)
            seed = strtoull(argv[i] + 6, NULL, 0);
        else if (argv[i][0] == '-')
            fprintf(stderr, "qs_fuzz: %s ignored (libFuzzer option?)\n",
                    argv[i]);
        else if (qs_load_path(c, argv[i]) != 0)
            return 2;
    }
    for (size_t i = 0; i < c->n; i++)
        qs_run(target, c->data[i], c->size[i]);
    fprintf(stderr, "qs_fuzz: replayed %zu inputs\n", c->n);
    if (runs > 0 && c->n == 0) {
        /* Start from nothing: mutations of the empty input. */
        c->data[0] = calloc(1, 1);
        c->size[0] = 0;
        c->n = c->data[0] != NULL;
    }
    for (unsigned long k = 0; k < runs; k++) {
        size_t o = (size_t) (qs_rand(&seed) % c->n);
        size_t size = c->size[o];

        memcpy(buf, c->data[o], size);
        size = qs_mutate(buf, size, c, &seed);
        qs_run(target, buf, size);
    }
    if (runs > 0)
        fprintf(stderr, "qs_fuzz: ran %lu mutated inputs\n", runs);
    for (size_t i = 0; i < c->n; i++)
        free(c->data[i]);
    free(c);
    free(buf);
    return 0;
}
