/*
 * What qs-sweep says about a seed: the outcome, the line that replays it,
 * its log's last lines, its trace and the trace drawn as an SVG; and the
 * JUnit XML report for CI systems.
 */
#include "qs_sweep.h"

#include <na_sim.h>
#include <qs_check.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define QS_TAIL_LINES 6

void
qs_path(char *buf, size_t size, const struct qs_opts *o,
        const struct qs_seed *s, const char *what, int run)
{
    if (o->determinism)
        snprintf(buf, size, "%s/seed-%llu.%c.%s", o->out_dir,
                 (unsigned long long) s->seed, run ? 'b' : 'a', what);
    else
        snprintf(buf, size, "%s/seed-%llu.%s", o->out_dir,
                 (unsigned long long) s->seed, what);
}

/* Single quotes around anything a shell would read differently. */
static void
qs_quote(FILE *out, const char *s)
{
    if (*s != '\0' &&
        strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                  "OPQRSTUVWXYZ0123456789_-+=./:,@%") == strlen(s)) {
        fputs(s, out);
        return;
    }
    fputc('\'', out);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", out);
        else
            fputc(*s, out);
    }
    fputc('\'', out);
}

void
qs_replay_line(FILE *out, const struct qs_opts *o, const struct qs_seed *s)
{
    if (o->check)
        fprintf(out, "%s=1 ", QS_CHECK_ENV);
    if (o->vtimeout != NULL) {
        fputs(NA_SIM_HANG_ENV "=", out);
        qs_quote(out, o->vtimeout);
        fputc(' ', out);
    }
    fprintf(out, "QS_SIM_SEED=%llu", (unsigned long long) s->seed);
    if (s->profile[0] != '\0') {
        fputs(" QS_SIM_FAULTS=", out);
        qs_quote(out, s->profile);
    }
    if (o->info[0] != '\0') {
        fputs(" QS_NA_INFO=", out);
        qs_quote(out, o->info);
    }
    for (char **a = o->argv; *a != NULL; a++) {
        fputc(' ', out);
        qs_quote(out, *a);
    }
}

/* FNV-1a over a whole file, the trace hash's own function. */
uint64_t
qs_file_hash(const char *path, bool *ok)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    FILE *f = fopen(path, "rb");
    int c;

    *ok = f != NULL;
    if (f == NULL)
        return 0;
    while ((c = getc(f)) != EOF) {
        h ^= (unsigned char) c;
        h *= 0x100000001b3ULL;
    }
    fclose(f);
    return h;
}

static bool
qs_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* Draw the trace with trace2svg from qs-sweep's own directory (where both
 * are built and installed), else from PATH. */
static bool
qs_draw(const struct qs_opts *o, const char *trace, const char *svg)
{
    char tool[PATH_MAX + 16];
    pid_t pid;
    int status;

    snprintf(tool, sizeof(tool), "%s/trace2svg", o->self_dir);
    if (!qs_exists(tool))
        snprintf(tool, sizeof(tool), "trace2svg");
    pid = fork();
    if (pid == 0) {
        sigset_t none;

        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execlp(tool, tool, trace, svg, (char *) NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The sanitizer runtimes' report headers. A run that printed one failed
 * even if its exit status says otherwise (a sanitizer set not to halt, a
 * report from a child that the run ignored). */
static const char *const qs_sanitizer_marks[] = {
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "WARNING: ThreadSanitizer",
    "ERROR: ThreadSanitizer",
    "runtime error: ",
    "ERROR: MemorySanitizer",
    "ERROR: UndefinedBehaviorSanitizer",
};

bool
qs_log_has_sanitizer_report(const char *path, char *line, size_t size)
{
    char buf[512];
    FILE *in = fopen(path, "r");
    bool found = false;

    if (in == NULL)
        return false;
    while (!found && fgets(buf, sizeof(buf), in) != NULL) {
        for (size_t i = 0;
             i < sizeof(qs_sanitizer_marks) / sizeof(qs_sanitizer_marks[0]);
             i++) {
            if (strstr(buf, qs_sanitizer_marks[i]) != NULL) {
                buf[strcspn(buf, "\n")] = '\0';
                snprintf(line, size, "%s", buf);
                found = true;
                break;
            }
        }
    }
    fclose(in);
    return found;
}

static void
qs_print_status(FILE *out, int status)
{
    if (WIFEXITED(status))
        fprintf(out, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        fprintf(out, "killed by signal %d (%s)", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
}

static void
qs_print_tail(const char *path)
{
    char lines[QS_TAIL_LINES][256];
    size_t n = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return;
    while (fgets(lines[n % QS_TAIL_LINES], sizeof(lines[0]), f) != NULL)
        n++;
    fclose(f);
    for (size_t i = n > QS_TAIL_LINES ? n - QS_TAIL_LINES : 0; i < n; i++) {
        const char *l = lines[i % QS_TAIL_LINES];

        printf("  | %s%s", l, l[strlen(l) - 1] == '\n' ? "" : "\n");
    }
}

/* A seed's outcome from its runs; determinism mode compares the traces. */
static void
qs_judge(const struct qs_opts *o, struct qs_seed *s)
{
    s->outcome = s->run[0];
    if (!o->determinism)
        return;
    if (s->run[0] == QS_PASS)
        s->outcome = s->run[1];
    if (s->outcome == QS_PASS) {
        char a[PATH_MAX], b[PATH_MAX];
        bool ok_a, ok_b;
        uint64_t ha, hb;

        qs_path(a, sizeof(a), o, s, "trace", 0);
        qs_path(b, sizeof(b), o, s, "trace", 1);
        ha = qs_file_hash(a, &ok_a);
        hb = qs_file_hash(b, &ok_b);
        if (ok_a != ok_b || ha != hb)
            s->outcome = QS_NONDET;
    }
}

static void
qs_remove_files(const struct qs_opts *o, const struct qs_seed *s)
{
    static const char *const what[] = {"log", "trace", "svg"};
    char path[PATH_MAX];

    for (int run = 0; run < (o->determinism ? 2 : 1); run++)
        for (size_t i = 0; i < 3; i++) {
            qs_path(path, sizeof(path), o, s, what[i], run);
            unlink(path);
        }
}

void
qs_report_seed(const struct qs_opts *o, struct qs_seed *s)
{
    char trace[PATH_MAX], svg[PATH_MAX], log[PATH_MAX];
    int bad = 0;

    qs_judge(o, s);
    if (s->outcome == QS_PASS) {
        if (!o->keep)
            qs_remove_files(o, s);
        return;
    }
    if (o->determinism && s->run[0] == QS_PASS && s->outcome != QS_NONDET)
        bad = 1;
    qs_path(trace, sizeof(trace), o, s, "trace", bad);
    qs_path(svg, sizeof(svg), o, s, "svg", bad);
    qs_path(log, sizeof(log), o, s, "log", bad);
    switch (s->outcome) {
    case QS_HANG:
        if (s->vhung[bad])
            printf("HANG seed %llu: its virtual clock passed %s s "
                   "(--vtimeout)\n",
                   (unsigned long long) s->seed, o->vtimeout);
        else
            printf("HANG seed %llu: still running after %g s, its process "
                   "group was killed\n",
                   (unsigned long long) s->seed, o->timeout_s);
        break;
    case QS_NONDET: {
        char b[PATH_MAX];
        bool ok;

        qs_path(b, sizeof(b), o, s, "trace", 1);
        printf("NONDETERMINISTIC seed %llu: two runs, two traces "
               "(file hashes 0x%016llx and 0x%016llx)\n",
               (unsigned long long) s->seed,
               (unsigned long long) qs_file_hash(trace, &ok),
               (unsigned long long) qs_file_hash(b, &ok));
        printf("  traces: %s %s\n", trace, b);
        break;
    }
    case QS_NOSTART:
        printf("FAIL seed %llu: the program could not be started\n",
               (unsigned long long) s->seed);
        break;
    default:
        printf("FAIL seed %llu: ", (unsigned long long) s->seed);
        qs_print_status(stdout, s->status[bad]);
        if (s->sanitized[bad]) {
            char line[256];

            qs_log_has_sanitizer_report(log, line, sizeof(line));
            printf(", sanitizer report: %s", line);
        }
        if (o->check && WIFEXITED(s->status[bad]) &&
            WEXITSTATUS(s->status[bad]) == QS_CHECK_EXIT_STATUS)
            printf(": the invariant checker found a violation (qs-check "
                   "lines in the log)");
        putchar('\n');
        break;
    }
    printf("  replay: ");
    qs_replay_line(stdout, o, s);
    putchar('\n');
    if (!qs_exists(trace))
        printf("  no trace: the run made no simulated world\n");
    else if (s->outcome != QS_NONDET) {
        if (qs_draw(o, trace, svg))
            printf("  trace: %s\n  svg: %s\n", trace, svg);
        else
            printf("  trace: %s (trace2svg could not draw it)\n", trace);
    }
    printf("  log: %s\n", log);
    qs_print_tail(log);
    fflush(stdout);
}

/* XML text: markup escaped, control bytes (not allowed in XML 1.0)
 * dropped. */
static void
qs_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;

        if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '&')
            fputs("&amp;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c >= 0x20 || c == '\n' || c == '\t')
            fputc(c, f);
    }
}

static void
qs_xml_file(FILE *f, const char *path)
{
    char line[512];
    FILE *in = fopen(path, "r");
    size_t bytes = 0;

    if (in == NULL)
        return;
    /* Logs can be long: the first 64 KiB is what a CI page shows. */
    while (bytes < 65536 && fgets(line, sizeof(line), in) != NULL) {
        qs_xml(f, line);
        bytes += strlen(line);
    }
    fclose(in);
}

int
qs_write_junit(const struct qs_opts *o, const struct qs_seed *seeds, size_t n,
               double total_s)
{
    FILE *f = fopen(o->junit, "w");
    size_t tests = 0, failures = 0;
    const char *prog = strrchr(o->argv[0], '/');

    if (f == NULL) {
        fprintf(stderr, "qs-sweep: cannot write %s: %s\n", o->junit,
                strerror(errno));
        return -1;
    }
    prog = prog ? prog + 1 : o->argv[0];
    for (size_t i = 0; i < n; i++) {
        tests += seeds[i].outcome != QS_PENDING;
        failures +=
            seeds[i].outcome != QS_PENDING && seeds[i].outcome != QS_PASS;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites tests=\"%zu\" failures=\"%zu\" time=\"%.3f\">\n",
            tests, failures, total_s);
    fprintf(f, "<testsuite name=\"qs-sweep ");
    qs_xml(f, prog);
    fprintf(f,
            "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "time=\"%.3f\">\n",
            tests, failures, total_s);
    for (size_t i = 0; i < n; i++) {
        const struct qs_seed *s = &seeds[i];
        const char *kind = s->outcome == QS_HANG     ? "hang"
                           : s->outcome == QS_NONDET ? "nondeterministic"
                                                     : "failure";
        char log[PATH_MAX];

        if (s->outcome == QS_PENDING)
            continue;
        fprintf(f, "  <testcase classname=\"qs-sweep.");
        qs_xml(f, prog);
        fprintf(f, "\" name=\"seed %llu\" time=\"%.3f\"",
                (unsigned long long) s->seed, s->seconds);
        if (s->outcome == QS_PASS) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n    <failure type=\"%s\" message=\"", kind);
        {
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);

            if (m != NULL) {
                qs_replay_line(m, o, s);
                fclose(m);
                qs_xml(f, buf);
                free(buf);
            }
        }
        fprintf(f, "\">");
        qs_path(log, sizeof(log), o, s, "log",
                o->determinism && s->run[0] == QS_PASS);
        qs_xml_file(f, log);
        fprintf(f, "</failure>\n  </testcase>\n");
    }
    fprintf(f, "</testsuite>\n</testsuites>\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "qs-sweep: error writing %s\n", o->junit);
        return -1;
    }
    return 0;
}
