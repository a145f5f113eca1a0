/*
 * qs-sweep: run a test program once per seed on the simulated fabric.
 * qs_sweep.c starts and bounds the runs; qs_sweep_report.c says what
 * happened (replay lines, SVGs, the summary, JUnit XML).
 */
#ifndef QS_SWEEP_H
#define QS_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum qs_outcome {
    QS_PENDING = 0,
    QS_PASS,
    QS_FAIL,    /* non-zero exit status, a signal, or a sanitizer report
                   in the log whatever the exit status */
    QS_HANG,    /* still running at the timeout: process group killed, or
                   past --vtimeout (exit status NA_SIM_HANG_EXIT) */
    QS_NONDET,  /* determinism mode: two runs, two different traces */
    QS_NOSTART, /* fork or exec failed */
};

/* One seed: its profile and, in determinism mode, two runs. */
struct qs_seed {
    uint64_t seed;
    char *profile;           /* "" for none */
    enum qs_outcome outcome; /* of the seed as a whole */
    int status[2];           /* wait status of each run */
    bool vhung[2];           /* the run ended past --vtimeout */
    bool sanitized[2];       /* a sanitizer report is in the run's log */
    enum qs_outcome run[2];  /* each run's own outcome */
    double seconds;          /* wall time of the (first) run */
    int runs_done;
};

struct qs_opts {
    uint64_t first, count;
    const char *faults; /* NULL: none */
    bool swarm;
    unsigned swarm_nodes;
    unsigned swarm_without; /* bits of qs_fault_kinds[] dropped from draws */
    unsigned jobs;
    double timeout_s;
    const char *vtimeout; /* QS_SIM_HANG_S for the runs; NULL: none */
    const char *junit;    /* the JUnit XML report; --junit or DIR/junit.xml */
    char *junit_buf;      /* DIR/junit.xml, allocated */
    const char *out_dir;
    const char *info; /* QS_NA_INFO for the runs; "" leaves it unset */
    bool determinism;
    bool check; /* QS_CHECK=1 in each run (include/qs_check.h) */
    bool keep;
    bool quiet;
    char **argv; /* the program and its arguments */
    char self_dir[4096];
};

/* qs_sweep_report.c */
void qs_path(char *buf, size_t size, const struct qs_opts *o,
             const struct qs_seed *s, const char *what, int run);
void qs_replay_line(FILE *out, const struct qs_opts *o,
                    const struct qs_seed *s);
void qs_report_seed(const struct qs_opts *o, struct qs_seed *s);
int qs_write_junit(const struct qs_opts *o, const struct qs_seed *seeds,
                   size_t n, double total_s);
uint64_t qs_file_hash(const char *path, bool *ok);
bool qs_log_has_sanitizer_report(const char *path, char *line, size_t size);

#endif
