/*
 * Liveness of the peer a forward waits on (docs/architecture.md,
 * "Liveness"). A forward whose response has not come within the probe
 * interval sends the target a probe: a header-only message flagged
 * HG_HEADER_PROBE that the target's HG drops without running anything.
 * A probe the fabric fails with NA_HOSTUNREACH (the peer is gone, its
 * connection refused or unreachable) fails the forward with
 * HG_HOSTUNREACH, exactly once, through the same path as a timeout. The
 * plugins turn what their fabric knows into that verdict.
 * Everything is timed on the NA clock, so the sim runs it in virtual time.
 *
 * Included by hg_internal.h once struct hg_timer is defined.
 */
#ifndef HG_LIVENESS_H
#define HG_LIVENESS_H

#include "na.h"

#include <stdbool.h>
#include <stdint.h>

struct hg_handle;
struct hg_class;

/* Default probe interval: a dead peer fails its forwards within about
 * two intervals plus the time the fabric takes to refuse the probe. */
#define HG_PROBE_DEFAULT_MS 1000u

/* Environment variable overriding the interval (0 turns probing off). */
#define HG_PROBE_ENV "QS_HG_PROBE_MS"

/* Per-handle probe state (embedded in struct hg_handle). */
struct hg_probe {
    struct hg_timer timer; /* the next probe, or the probe's limit */
    na_op_id_t *op;        /* created on the first probe          */
    void *buf, *buf_data;  /* the probe message, HG_HEADER_SIZE   */
    unsigned int gen;      /* forward generation being watched    */
    unsigned int sent_gen;
    bool in_flight; /* a probe send is posted              */
};

/* The interval in ms for this class (0: probing is off). */
unsigned int hg_probe_interval_ms(struct hg_class *hg_class);

/* Watch a forward that was just posted (no-op when probing is off). The
 * forward advanced handle->probe.gen under the handle lock when it began. */
void hg_probe_start(struct hg_handle *handle);

/* The forward finished: stop watching, cancel the probe in flight
 * (in_flight: handle->probe.in_flight, read under the handle lock). */
void hg_probe_stop(struct hg_handle *handle, bool in_flight);

/* Release the probe's NA resources with the handle. */
void hg_probe_free(struct hg_handle *handle);

#endif /* HG_LIVENESS_H */
