/*
 * qs-sweep: run a service's test program once per seed on the simulated
 * fabric, in parallel, each run bounded in time, and report every seed
 * that failed or hung with the line that replays it.
 *
 *   qs-sweep [--seeds A:N] [--faults PROFILE | --swarm
 *            [--swarm-nodes K] [--swarm-without KIND,...]] [--jobs J]
 *            [--timeout S] [--vtimeout S] [--junit FILE] [--out DIR]
 *            [--info STR]
 *            [--determinism] [--check] [--keep] [--quiet]
 *            -- ./my_test args...
 *
 * Each run gets its seed, profile, info string and trace file through the
 * environment variables the library reads (QS_SIM_SEED, QS_SIM_FAULTS,
 * QS_NA_INFO, QS_SIM_TRACE_OUT), its own process group, and its output in
 * a log file. The sweep ends with a JUnit XML report (DIR/junit.xml unless
 * --junit names another file) and the summary line "N passed, M failed".
 * docs/testing-your-service.md is the guide.
 */
#include "qs_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <na_sim.h>
#include <qs_check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A run in flight. */
struct qs_slot {
    pid_t pid; /* 0: free */
    size_t seed_index;
    int run; /* 0, or 1 for the second run of determinism mode */
    double start;
    bool killed;
};

static double
qs_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void
qs_usage(FILE *f)
{
    fputs("usage: qs-sweep [options] -- program [args...]\n"
          "  --seeds A:N      run seeds A to A+N-1 (default 1:100)\n"
          "  --faults PROFILE the same fault profile for every seed\n"
          "  --swarm          a fault profile drawn from each seed\n"
          "  --swarm-nodes K  nodes the drawn profiles name (default 2)\n"
          "  --swarm-without KIND[,KIND...]\n"
          "                   leave these faults out of the drawn profiles\n"
          "                   (loss, dup, trunc, send_err, rma_err, partial,\n"
          "                   revoke, again, rnr, reorder, jitter, partition,\n"
          "                   crash); each seed's other faults stay as drawn\n"
          "  --jobs J         runs at once (default: the online CPUs)\n"
          "  --timeout S      seconds before a run counts as hung (60)\n"
          "  --vtimeout S     virtual seconds before a run counts as hung\n"
          "                   (QS_SIM_HANG_S; default none)\n"
          "  --junit FILE     the JUnit XML report (default DIR/junit.xml)\n"
          "  --out DIR        logs, traces and SVGs (default qs-sweep-out)\n"
          "  --info STR       QS_NA_INFO for the runs (default sim; \"\" "
          "keeps the program's own)\n"
          "  --determinism    run each seed twice, compare the traces\n"
          "  --check          the library's invariant checker in each run "
          "(QS_CHECK=1)\n"
          "  --keep           keep the files of passing runs too\n"
          "  --quiet          no progress line\n",
          f);
}

/* The faults --swarm-without may leave out of a drawn profile: the
 * world's probabilities and jitter (keys of its "world:" rule), network
 * partitions ("partition:" rules) and crashes ("node:" rules). */
static const char *const qs_fault_kinds[] = {
    "loss",  "dup", "trunc",   "send_err", "rma_err",   "partial", "revoke",
    "again", "rnr", "reorder", "jitter",   "partition", "crash"};
#define QS_FAULT_KINDS (sizeof(qs_fault_kinds) / sizeof(qs_fault_kinds[0]))

static int
qs_fault_kind(const char *name, size_t len)
{
    for (size_t k = 0; k < QS_FAULT_KINDS; k++)
        if (strlen(qs_fault_kinds[k]) == len &&
            memcmp(qs_fault_kinds[k], name, len) == 0)
            return (int) k;
    return -1;
}

/* "dup,crash" to a set of bits; -1 on an unknown or empty kind. */
static int
qs_parse_without(const char *arg, unsigned *mask)
{
    const char *p = arg;

    *mask = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        int k = qs_fault_kind(p, len);

        if (k < 0) {
            fprintf(stderr,
                    "qs-sweep: --swarm-without %s: unknown fault '%.*s' (see "
                    "--help)\n",
                    arg, (int) len, p);
            return -1;
        }
        *mask |= 1u << k;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* Whether `mask` leaves out the fault named by the len bytes at name. */
static bool
qs_left_out(const char *name, size_t len, unsigned mask)
{
    int k = qs_fault_kind(name, len);

    return k >= 0 && (mask & (1u << k)) != 0;
}

/* Rewrite a profile of na_sim_fault_draw() in place without the faults
 * of `mask`: its draws are made first, so the faults kept are those the
 * seed draws without the option. The world's backlog and when_full items
 * always stay (the backlog is the fabric's, not a fault); a "partition:"
 * rule is the fault partition, a "node:" rule (a crash and its restart)
 * the fault crash. Nothing is added, so the result fits where the
 * profile was. */
static void
qs_profile_without(char *profile, unsigned mask)
{
    char out[512] = "";
    size_t n = 0;
    const char *p = profile;

    if (mask == 0 || strlen(profile) >= sizeof(out))
        return;
    while (*p != '\0') {
        size_t len = strcspn(p, ";");
        const char *sep = n > 0 ? ";" : "";

        if (strncmp(p, "world:", 6) == 0) {
            const char *q = p + 6, *end = p + len, *comma = "";

            n += (size_t) sprintf(out + n, "%sworld:", sep);
            while (q < end) {
                size_t ilen = strcspn(q, ",;");

                if (!qs_left_out(q, strcspn(q, "="), mask)) {
                    n += (size_t) sprintf(out + n, "%s%.*s", comma, (int) ilen,
                                          q);
                    comma = ",";
                }
                q += ilen + (q[ilen] == ',');
            }
        } else if (!(strncmp(p, "partition:", 10) == 0 &&
                     qs_left_out("partition", 9, mask)) &&
                   !(strncmp(p, "node:", 5) == 0 &&
                     qs_left_out("crash", 5, mask))) {
            n += (size_t) sprintf(out + n, "%s%.*s", sep, (int) len, p);
        }
        p += len + (p[len] == ';');
    }
    memcpy(profile, out, n + 1);
}

static int
qs_parse_seeds(const char *arg, struct qs_opts *o)
{
    char *end;
    unsigned long long a, n;

    errno = 0;
    a = strtoull(arg, &end, 0);
    if (errno != 0 || end == arg || *end != ':' || arg[0] == '-')
        return -1;
    arg = end + 1;
    n = strtoull(arg, &end, 0);
    if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || n == 0 ||
        n > 100000000ULL || a + n < a)
        return -1;
    o->first = a;
    o->count = n;
    return 0;
}

static int
qs_parse(int argc, char **argv, struct qs_opts *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int i;

    *o = (struct qs_opts){.first = 1,
                          .count = 100,
                          .swarm_nodes = 2,
                          .jobs = cpus > 0 ? (unsigned) cpus : 1,
                          .timeout_s = 60,
                          .out_dir = "qs-sweep-out",
                          .info = "sim",
                          .quiet = !isatty(STDERR_FILENO)};
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (strcmp(a, "--") == 0)
            break;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            qs_usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--swarm") == 0)
            o->swarm = true;
        else if (strcmp(a, "--determinism") == 0)
            o->determinism = true;
        else if (strcmp(a, "--check") == 0)
            o->check = true;
        else if (strcmp(a, "--keep") == 0)
            o->keep = true;
        else if (strcmp(a, "--quiet") == 0)
            o->quiet = true;
        else if (v == NULL) {
            fprintf(stderr, "qs-sweep: %s: unknown option or missing value\n",
                    a);
            return -1;
        } else {
            i++;
            if (strcmp(a, "--seeds") == 0) {
                if (qs_parse_seeds(v, o) != 0) {
                    fprintf(stderr, "qs-sweep: --seeds %s: want A:N, N>0\n", v);
                    return -1;
                }
            } else if (strcmp(a, "--faults") == 0)
                o->faults = v;
            else if (strcmp(a, "--swarm-without") == 0) {
                if (qs_parse_without(v, &o->swarm_without) != 0)
                    return -1;
            } else if (strcmp(a, "--jobs") == 0 ||
                       strcmp(a, "--swarm-nodes") == 0) {
                unsigned long n = strtoul(v, &end, 10);

                if (*end != '\0' || n == 0 || n > 1000 || v[0] == '-') {
                    fprintf(stderr, "qs-sweep: %s %s: want 1 to 1000\n", a, v);
                    return -1;
                }
                if (a[2] == 'j')
                    o->jobs = (unsigned) n;
                else
                    o->swarm_nodes = (unsigned) n;
            } else if (strcmp(a, "--timeout") == 0) {
                o->timeout_s = strtod(v, &end);
                if (*end != '\0' || !(o->timeout_s > 0)) {
                    fprintf(stderr, "qs-sweep: --timeout %s: want seconds\n",
                            v);
                    return -1;
                }
            } else if (strcmp(a, "--vtimeout") == 0) {
                double vt = strtod(v, &end);

                if (*end != '\0' || end == v || !(vt > 0) || vt > 1e9) {
                    fprintf(stderr,
                            "qs-sweep: --vtimeout %s: want virtual seconds\n",
                            v);
                    return -1;
                }
                o->vtimeout = v;
            } else if (strcmp(a, "--junit") == 0)
                o->junit = v;
            else if (strcmp(a, "--out") == 0)
                o->out_dir = v;
            else if (strcmp(a, "--info") == 0)
                o->info = v;
            else {
                fprintf(stderr, "qs-sweep: unknown option %s\n", a);
                return -1;
            }
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "qs-sweep: no program: give it after --\n");
        return -1;
    }
    o->argv = argv + i + 1;
    if (o->swarm && o->faults != NULL) {
        fprintf(stderr, "qs-sweep: --faults and --swarm exclude each other\n");
        return -1;
    }
    if (o->swarm_without != 0 && !o->swarm) {
        fprintf(stderr, "qs-sweep: --swarm-without needs --swarm\n");
        return -1;
    }
    if (o->faults != NULL) {
        char err[160];

        if (na_sim_fault_validate(o->faults, err, sizeof(err)) != NA_SUCCESS) {
            fprintf(stderr, "qs-sweep: --faults: %s\n", err);
            return -1;
        }
    }
    return 0;
}

/* The directory qs-sweep runs from: trace2svg is installed beside it. */
static void
qs_find_self(struct qs_opts *o)
{
    ssize_t n =
        readlink("/proc/self/exe", o->self_dir, sizeof(o->self_dir) - 1);
    char *slash;

    o->self_dir[n > 0 ? n : 0] = '\0';
    slash = strrchr(o->self_dir, '/');
    if (slash != NULL)
        *slash = '\0';
}

static void
qs_setenv(const char *name, const char *value)
{
    if (value == NULL || *value == '\0')
        unsetenv(name);
    else
        setenv(name, value, 1);
}

/* In the child: own process group, environment, output to the log. */
static void
qs_child(const struct qs_opts *o, const struct qs_seed *s, int run,
         const sigset_t *old_mask)
{
    char path[PATH_MAX], seed[32];
    int fd;

    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long) s->seed);
    qs_setenv(NA_SIM_SEED_ENV, seed);
    qs_setenv(NA_SIM_FAULTS_ENV, s->profile);
    if (o->info[0] != '\0')
        qs_setenv("QS_NA_INFO", o->info);
    if (o->check)
        qs_setenv(QS_CHECK_ENV, "1");
    if (o->vtimeout != NULL)
        qs_setenv(NA_SIM_HANG_ENV, o->vtimeout);
    qs_path(path, sizeof(path), o, s, "trace", run);
    qs_setenv(NA_SIM_TRACE_OUT_ENV, path);
    qs_path(path, sizeof(path), o, s, "log", run);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    fd = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        close(fd);
    }
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "qs-sweep: cannot run %s: %s\n", o->argv[0],
            strerror(errno));
    _exit(127);
}

/* Returns false when the run could not start (it then counts as done). */
static bool
qs_start(const struct qs_opts *o, struct qs_seed *seeds, struct qs_slot *slot,
         size_t index, int run, const sigset_t *old_mask)
{
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0)
        qs_child(o, &seeds[index], run, old_mask);
    if (pid < 0) {
        seeds[index].run[run] = QS_NOSTART;
        seeds[index].runs_done++;
        return false;
    }
    setpgid(pid, pid); /* also in the child: whichever runs first */
    *slot = (struct qs_slot){
        .pid = pid, .seed_index = index, .run = run, .start = qs_now()};
    return true;
}

static void
qs_finish(const struct qs_opts *o, struct qs_seed *s, struct qs_slot *slot,
          int status)
{
    double t = qs_now() - slot->start;

    char log[PATH_MAX], line[256];

    s->status[slot->run] = status;
    qs_path(log, sizeof(log), o, s, "log", slot->run);
    s->sanitized[slot->run] =
        !slot->killed && qs_log_has_sanitizer_report(log, line, sizeof(line));
    if (slot->killed)
        s->run[slot->run] = QS_HANG;
    else if (o->vtimeout != NULL && WIFEXITED(status) &&
             WEXITSTATUS(status) == NA_SIM_HANG_EXIT) {
        s->run[slot->run] = QS_HANG;
        s->vhung[slot->run] = true;
    } else if (s->sanitized[slot->run])
        s->run[slot->run] = QS_FAIL; /* even when it exited 0 */
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        s->run[slot->run] = QS_PASS;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        s->run[slot->run] = QS_NOSTART;
    else
        s->run[slot->run] = QS_FAIL;
    if (slot->run == 0)
        s->seconds = t;
    s->runs_done++;
    slot->pid = 0;
}

struct qs_tally {
    size_t done, failed, total;
    double t0;
};

static void qs_progress(const struct qs_opts *o, const struct qs_tally *t,
                        bool final);

/* Report a seed once all of its runs are done. */
static void
qs_seed_done(const struct qs_opts *o, struct qs_seed *s, struct qs_tally *t)
{
    if (s->runs_done < (o->determinism ? 2 : 1))
        return;
    qs_progress(o, t, true);
    qs_report_seed(o, s);
    t->done++;
    t->failed += s->outcome != QS_PASS;
}

static void
qs_progress(const struct qs_opts *o, const struct qs_tally *t, bool final)
{
    double dt = qs_now() - t->t0;

    if (o->quiet)
        return;
    if (final) {
        fputs("\r\033[K", stderr);
        return;
    }
    fprintf(stderr, "\r\033[K[%zu/%zu seeds] %zu failed, %.1f seeds/s", t->done,
            t->total, t->failed, dt > 0 ? (double) t->done / dt : 0.0);
}

int
main(int argc, char **argv)
{
    struct qs_opts o;
    struct qs_seed *seeds;
    struct qs_slot *slots;
    sigset_t mask, old_mask;
    size_t total, next_run = 0, runs_per_seed;
    struct qs_tally t = {.t0 = qs_now()};
    double last_progress = 0;
    bool interrupted = false, junit_ok = false;

    if (qs_parse(argc, argv, &o) != 0) {
        qs_usage(stderr);
        return 2;
    }
    qs_find_self(&o);
    if (mkdir(o.out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "qs-sweep: cannot create %s: %s\n", o.out_dir,
                strerror(errno));
        return 2;
    }
    if (o.junit == NULL) {
        size_t n = strlen(o.out_dir) + sizeof("/junit.xml");

        o.junit_buf = malloc(n);
        if (o.junit_buf == NULL) {
            fprintf(stderr, "qs-sweep: out of memory\n");
            return 2;
        }
        snprintf(o.junit_buf, n, "%s/junit.xml", o.out_dir);
        o.junit = o.junit_buf;
    }
    total = t.total = (size_t) o.count;
    runs_per_seed = o.determinism ? 2 : 1;
    seeds = calloc(total, sizeof(*seeds));
    slots = calloc(o.jobs, sizeof(*slots));
    if (seeds == NULL || slots == NULL) {
        fprintf(stderr, "qs-sweep: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < total; i++) {
        char buf[512] = "";

        seeds[i].seed = o.first + i;
        if (o.swarm) {
            na_sim_fault_draw(seeds[i].seed, o.swarm_nodes, buf, sizeof(buf));
            qs_profile_without(buf, o.swarm_without);
        }
        seeds[i].profile = strdup(o.faults != NULL ? o.faults : buf);
        if (seeds[i].profile == NULL) {
            fprintf(stderr, "qs-sweep: out of memory\n");
            return 2;
        }
    }

    /* Children are waited for with sigtimedwait: no handler races, and
     * an interrupt stops the sweep after killing what runs. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, &old_mask);

    while (t.done < total && !interrupted) {
        size_t running = 0;
        double now, wait_s = 0.2;
        struct timespec ts;
        int sig, status;
        pid_t pid;

        for (unsigned j = 0; j < o.jobs; j++) {
            while (slots[j].pid == 0 && next_run < total * runs_per_seed) {
                size_t index = next_run / runs_per_seed;

                if (qs_start(&o, seeds, &slots[j], index,
                             (int) (next_run++ % runs_per_seed), &old_mask))
                    break;
                qs_seed_done(&o, &seeds[index], &t);
            }
            running += slots[j].pid != 0;
        }
        now = qs_now();
        for (unsigned j = 0; j < o.jobs; j++)
            if (slots[j].pid != 0 && !slots[j].killed) {
                double left = slots[j].start + o.timeout_s - now;

                if (left <= 0) {
                    kill(-slots[j].pid, SIGKILL);
                    slots[j].killed = true;
                } else if (left < wait_s)
                    wait_s = left;
            }
        if (running > 0) {
            ts.tv_sec = (time_t) wait_s;
            ts.tv_nsec = (long) ((wait_s - (double) ts.tv_sec) * 1e9);
            sig = sigtimedwait(&mask, NULL, &ts);
            if (sig == SIGINT || sig == SIGTERM)
                interrupted = true;
        }
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
            for (unsigned j = 0; j < o.jobs; j++)
                if (slots[j].pid == pid) {
                    struct qs_seed *s = &seeds[slots[j].seed_index];

                    /* The leader is gone; make sure its group is too. */
                    kill(-pid, SIGKILL);
                    qs_finish(&o, s, &slots[j], status);
                    qs_seed_done(&o, s, &t);
                    break;
                }
        if (qs_now() - last_progress > 0.25) {
            qs_progress(&o, &t, false);
            last_progress = qs_now();
        }
    }
    qs_progress(&o, &t, true);
    if (interrupted) {
        for (unsigned j = 0; j < o.jobs; j++)
            if (slots[j].pid != 0) {
                kill(-slots[j].pid, SIGKILL);
                waitpid(slots[j].pid, NULL, 0);
            }
        printf("interrupted after %zu of %zu seeds\n", t.done, total);
    }
    {
        double dt = qs_now() - t.t0, cpu;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        struct rusage ru;

        /* CPU time of every run (and trace2svg), against what the
         * machine's cores could have given over the sweep. */
        getrusage(RUSAGE_CHILDREN, &ru);
        cpu = (double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec +
              ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) *
                  1e-6;
        char without[160] = "";

        for (size_t k = 0, n = 0; k < QS_FAULT_KINDS && n < sizeof(without);
             k++)
            if (o.swarm_without & (1u << k))
                n += (size_t) snprintf(without + n, sizeof(without) - n, "%s%s",
                                       n > 0 ? "," : " without ",
                                       qs_fault_kinds[k]);
        printf("seeds %llu to %llu%s%s%s, %u jobs, %.2f s (%.1f seeds/s), "
               "runs used %.1f%% of %ld cores\n",
               (unsigned long long) o.first,
               (unsigned long long) (o.first + o.count - 1),
               o.swarm ? ", swarm profiles" : "", without,
               o.determinism ? ", each run twice" : "", o.jobs, dt,
               dt > 0 ? (double) t.done / dt : 0.0,
               dt > 0 && cores > 0 ? 100.0 * cpu / (dt * (double) cores) : 0.0,
               cores);
        /* The report first, so that the summary is the last line. */
        junit_ok = qs_write_junit(&o, seeds, total, dt) == 0;
        if (junit_ok)
            printf("JUnit XML: %s\n", o.junit);
        printf("%zu passed, %zu failed\n", t.done - t.failed, t.failed);
    }
    for (size_t i = 0; i < total; i++)
        free(seeds[i].profile);
    free(seeds);
    free(slots);
    free(o.junit_buf);
    return interrupted ? 130 : t.failed > 0 || !junit_ok ? 1 : 0;
}
