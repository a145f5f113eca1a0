/*
 * Private to the invariant checker: hg_check.c keeps the records,
 * hg_check_report.c describes them.
 */
#ifndef HG_CHECK_INTERNAL_H
#define HG_CHECK_INTERNAL_H

#include "hg/hg_check.h"
#include "hg/hg_internal.h"

#include <stdint.h>

#define HG_CHECK_BUCKETS 1024
#define HG_CHECK_FRAMES 6

/* A live object, or an operation and how often its callback ran. */
struct hg_check_rec {
    const void *key;
    hg_class_t *hg_class;
    enum hg_check_kind kind;
    unsigned int runs;
    bool reported;
    bool is_function; /* frames[0] is a function, not a return address */
    const char *what; /* Margo's objects: what it is, how it is released */
    int nframes;
    void *frames[HG_CHECK_FRAMES]; /* where it was created or started */
    struct hg_check_rec *next;
};

/* Everything below is guarded by hg_check_lock. */
struct hg_check_state {
    bool started;
    bool abort_mode;
    unsigned int violations;
    char first[512]; /* the first violation, one line */
    struct hg_check_rec *objs[HG_CHECK_BUCKETS];
    struct hg_check_rec *ops[HG_CHECK_BUCKETS];
    /* The seed of the first simulated world a class ran on. */
    bool sim_seen;
    uint64_t sim_seed;
};

extern pthread_mutex_t hg_check_lock;
extern struct hg_check_state hg_check;

static inline size_t
hg_check_hash(const void *key)
{
    uintptr_t k = (uintptr_t) key;

    k ^= k >> 17;
    k *= UINT64_C(0x9e3779b97f4a7c15);
    return (size_t) (k >> 40) % HG_CHECK_BUCKETS;
}

/* hg_check_report.c; all but the first two with the lock held. */
void hg_check_find_library(void);
bool hg_check_in_library(const void *pc);
void hg_check_report_twice(struct hg_check_rec *op);
void hg_check_report_class(hg_class_t *hg_class, const char *during);
void hg_check_report_margo(struct hg_check_rec *rec, const char *when);
void hg_check_report_summary(void);
/* Without the lock: abort() after a violation in QS_CHECK=abort mode. */
void hg_check_maybe_abort(void);

#endif /* HG_CHECK_INTERNAL_H */
