/*
 * Liveness of the peer a forward waits on (docs/architecture.md,
 * "Liveness"). A forward whose response has not come within the probe
 * interval sends the target a probe: a header-only message flagged
 * HG_HEADER_PROBE that the target's HG answers from its receive callback,
 * below the RPC handlers (hg_probe_answer(), on the target side), with a
 * header-only expected message flagged HG_HEADER_PROBE | RESPONSE that
 * echoes the probe's cookie. The origin sends one probe per interval
 * while the forward waits; a probe still unanswered when the next
 * interval ends, unless the target was heard from meanwhile (a response
 * to another forward, another probe's answer: hg_probe_heard()), or one
 * the fabric fails with NA_HOSTUNREACH, fails the forward with
 * HG_HOSTUNREACH, exactly once, through the same path as a timeout. Everything
 * is timed on the NA clock, so the sim runs it in virtual time. A target whose
 * program does not progress (a handler computing on its only thread) answers
 * through its class's watchdog thread (hg_watchdog.h).
 *
 * Included by hg_internal.h once struct hg_timer is defined.
 */
#ifndef HG_LIVENESS_H
#define HG_LIVENESS_H

#include "na.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hg_handle;
struct hg_class;

/* Default probe interval: a target that stops answering fails the
 * forwards waiting on it within two intervals of its last sign of life. */
#define HG_PROBE_DEFAULT_MS 1000u

/* Environment variable overriding the interval (0 turns probing off). */
#define HG_PROBE_ENV "QS_HG_PROBE_MS"

/* Per-handle probe state (embedded in struct hg_handle). */
struct hg_probe {
    /* What every forward reads or writes comes first (63 bytes: one
     * cache line where the handle places it); the rest only once a probe
     * is sent. */
    struct hg_timer timer; /* the next probe, and the last one's limit */
    na_op_id_t *op;        /* the probe send, created on first use     */
    unsigned int gen;      /* forward generation being watched         */
    unsigned int sent_gen; /* generation of the last probe sent        */
    uint32_t cookie;       /* the last probe's cookie, echoed back     */
    bool in_flight;        /* the probe send is posted                 */
    bool ans_posted;       /* the answer's receive is posted           */
    bool waiting;          /* the last probe has no answer yet         */
    na_op_id_t *ans_op;    /* the answer's receive                     */
    void *buf, *buf_data;  /* probe, then answer: 2 * HG_HEADER_SIZE   */
    unsigned int mark;     /* class probe epoch when this interval began */
};
_Static_assert(offsetof(struct hg_probe, ans_op) <= 64,
               "a probe's hot fields fit in one cache line");

/* The interval in ms for this class (0: probing is off). */
unsigned int hg_probe_interval_ms(struct hg_class *hg_class);

/* Watch a forward that was just posted (no-op when probing is off). The
 * forward advanced handle->probe.gen under the handle lock when it began. */
void hg_probe_start(struct hg_handle *handle);

/* The forward finished: stop watching, cancel the probe's operations
 * (in_flight: hg_probe_busy(), read under the handle lock). */
void hg_probe_stop(struct hg_handle *handle, bool in_flight);

/* Whether a probe operation is posted (call with the handle lock held). */
static inline bool
hg_probe_busy(const struct hg_probe *probe)
{
    return probe->in_flight || probe->ans_posted;
}

/* A class's signs of life of its targets. The epoch advances once per
 * probe interval of each forward that waits; a message from a target
 * stamps the target's slot with it, one 64-bit word holding the target's
 * tag and the epoch, so that a reader never pairs one target's tag with
 * another's epoch. A stamp at least a forward's probe.mark says its target
 * was heard from since its last interval began. Two targets that share a
 * slot only lose each other's evidence: their probes then decide alone, as
 * without the table. */
#define HG_HEARD_SLOTS 32u

struct hg_heard {
    atomic_uint epoch;
    _Atomic uint64_t slot[HG_HEARD_SLOTS];
};

static inline unsigned int
hg_heard_slot(const void *na_addr)
{
    return (unsigned int) (((uint64_t) (uintptr_t) na_addr *
                            0x9e3779b97f4a7c15ull) >>
                           59); /* the top 5 bits: 32 slots */
}

/* The tag: distinct for the NA addresses of one process (heap objects of
 * at least 16 bytes less than 64 GiB apart). */
static inline uint64_t
hg_heard_tag(const void *na_addr)
{
    return (uint64_t) (uint32_t) ((uintptr_t) na_addr >> 4) << 32;
}

/* A message from the target at na_addr came in (a response, a probe's
 * answer): stamp its slot with the epoch. Two loads, and a store only when
 * the epoch or the target changed since the slot's last stamp. */
static inline void
hg_probe_heard(struct hg_heard *heard, const void *na_addr)
{
    uint64_t v = hg_heard_tag(na_addr) |
                 atomic_load_explicit(&heard->epoch, memory_order_relaxed);
    _Atomic uint64_t *slot = &heard->slot[hg_heard_slot(na_addr)];

    if (atomic_load_explicit(slot, memory_order_relaxed) != v)
        atomic_store_explicit(slot, v, memory_order_relaxed);
}

/* Target side: a request receive brought a probe (header decoded into
 * handle->req_header, msg_len bytes). Answers it from this callback, or
 * drops a malformed one; either way the handle goes back to its pool. */
void hg_probe_answer(struct hg_handle *handle, size_t msg_len);

/* Release the probe's NA resources with the handle. */
void hg_probe_free(struct hg_handle *handle);

#endif /* HG_LIVENESS_H */
