/*
 * An operation made of sub-operations, such as an RPC's NA sends and
 * receives and its overflow pull, or a transfer's RMA pieces: how many of
 * them have started and not ended, whether more may still start, and the
 * first error recorded. The group ends exactly once: when it is closed and
 * its last sub-operation has ended.
 *
 * Locking: the group has no lock of its own. Every call is made with its
 * owner's lock held (the handle's, the transfer's), so the owner can read
 * its own state in the same section as the call that ended the group. The
 * group calls nothing: the one call that returns true (or
 * HG_OPGROUP_DONE) ended it, and its caller runs the completion after
 * releasing the lock. No other call ever sees that result for the round.
 *
 * A round:
 *   hg_opgroup_open()      a new round: nothing started, open, no error
 *   hg_opgroup_add(n)      n sub-operations are about to be posted; count
 *                          them first, so that one that ends at once
 *                          cannot end the group while more are posted
 *   hg_opgroup_end(ret)    one ended (its completion, or its failed post)
 *   hg_opgroup_close()     nothing more will be posted
 * hg_opgroup_arm(n) opens, adds n and closes at once, for a count known
 * before anything is posted. After the close, a sub-operation may still
 * start a follow-up from its own completion: it adds it before it ends
 * itself, which keeps the group from ending in between.
 *
 * Errors: the first one recorded wins, whether a sub-operation ended with
 * it or the owner recorded it with hg_opgroup_fail() (a cancel, a
 * deadline); a cancel is an error like any other.
 */
#ifndef HG_OPGROUP_H
#define HG_OPGROUP_H

#include "mercury.h"

#include <stdbool.h>

struct hg_opgroup {
    unsigned int running; /* started and not yet ended         */
    bool open;            /* more may start: it cannot end yet  */
    hg_return_t ret;      /* the first error, or HG_SUCCESS     */
};

/* What hg_opgroup_end() did. */
enum hg_opgroup_step {
    HG_OPGROUP_RUNNING,     /* the group goes on                         */
    HG_OPGROUP_FIRST_ERROR, /* it goes on, and ret is its first error    */
    HG_OPGROUP_DONE         /* this ended the group (first error or not) */
};

/* An idle group: ended, nothing running, no error. */
void hg_opgroup_init(struct hg_opgroup *group);
/* Start a round, forgetting the last one's error. The last round must
 * have ended, or have been abandoned with nothing posted. */
void hg_opgroup_open(struct hg_opgroup *group);
/* Open, add n (at least 1) and close. */
void hg_opgroup_arm(struct hg_opgroup *group, unsigned int n);
/* Count n sub-operations about to be posted: only while the group is
 * open or while one of its sub-operations has not ended (never once it
 * has ended). */
void hg_opgroup_add(struct hg_opgroup *group, unsigned int n);
/* Nothing more will be posted (the group must be open). True when no
 * sub-operation is running: this call ended the group. */
bool hg_opgroup_close(struct hg_opgroup *group);
/* One sub-operation ended with ret (HG_SUCCESS, or the error it ended
 * with; a post that failed ends its sub-operation with the error). */
enum hg_opgroup_step hg_opgroup_end(struct hg_opgroup *group, hg_return_t ret);
/* Record an error without ending anything (a cancel, a deadline). True if
 * it is the first error. It is recorded whatever the group's state. */
bool hg_opgroup_fail(struct hg_opgroup *group, hg_return_t ret);

/* Whether the group has not ended: open, or a sub-operation running. */
static inline bool
hg_opgroup_busy(const struct hg_opgroup *group)
{
    return group->open || group->running > 0;
}

static inline bool
hg_opgroup_is_open(const struct hg_opgroup *group)
{
    return group->open;
}

/* Sub-operations started and not yet ended. */
static inline unsigned int
hg_opgroup_running(const struct hg_opgroup *group)
{
    return group->running;
}

/* The first error recorded, or HG_SUCCESS. */
static inline hg_return_t
hg_opgroup_result(const struct hg_opgroup *group)
{
    return group->ret;
}

#endif /* HG_OPGROUP_H */
