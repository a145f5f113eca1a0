/*
 * Quicksilver simulated fabric: the control API.
 *
 * The "sim" NA plugin runs every node of a fabric inside one process, on a
 * virtual clock, driven by a seeded event queue. Programs use it through
 * the ordinary NA (or HG) API with info strings "sim" or "sim://<name>";
 * tests use the functions below to pick the seed, shape the links, drive
 * virtual time and read the event trace. docs/sim.md tells the whole story.
 *
 * There is at most one world per process. It is created by the first
 * NA_Initialize() of a sim class (or by na_sim_world_hold()) and destroyed
 * when its last class is finalized and no hold remains. Functions that act
 * on "the world" return NA_NOENTRY when there is none.
 *
 * Every function here is thread-safe.
 */
#ifndef NA_SIM_H
#define NA_SIM_H

#include "qs_export.h"
#include "na_types.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Environment variable read when a world is created without an explicit
 * seed: a decimal number or 0x-prefixed hexadecimal. */
#define NA_SIM_SEED_ENV "QS_SIM_SEED"

/* Seed used when neither na_sim_set_seed() nor QS_SIM_SEED gave one. */
#define NA_SIM_DEFAULT_SEED UINT64_C(0x5153494d)

/* Link parameters, per directed pair of nodes or as the world's default.
 * A message or RMA of n bytes takes latency_ns + n * 1e9 / bandwidth ns. */
struct na_sim_link {
    uint64_t latency_ns; /* one-way latency in nanoseconds               */
    uint64_t bandwidth;  /* bytes per second; 0 means unlimited          */
};

/*
 * Seeds.
 */

/* Choose the seed of the next world. If a world exists and has no class
 * (it is only held), it is reset at once: clock 0, empty event queue and
 * trace, PRNG reseeded; its link settings stay. Returns NA_SUCCESS, or
 * NA_BUSY when a world with live classes exists (nothing changes). */
QS_EXPORT na_return_t na_sim_set_seed(uint64_t seed);

/* Forget a seed given by na_sim_set_seed(): the next world takes its seed
 * from QS_SIM_SEED, or NA_SIM_DEFAULT_SEED. Does not touch a live world. */
QS_EXPORT void na_sim_clear_seed(void);

/* The seed of the current world, or, when none exists, the seed the next
 * world will use. */
QS_EXPORT uint64_t na_sim_get_seed(void);

/* Write "QS_SIM_SEED=<seed>" (decimal) for the current or next world into
 * buf, snprintf-style: returns the length the full string needs, not
 * counting the NUL. buf may be NULL when size is 0. */
QS_EXPORT int na_sim_replay_hint(char *buf, size_t size);

/* Print "replay with QS_SIM_SEED=<seed>" and a newline on stream. */
QS_EXPORT void na_sim_print_replay_hint(FILE *stream);

/*
 * World lifetime.
 */

/* Create the world if none exists, and keep it alive until the matching
 * na_sim_world_release() even after its classes are finalized: this lets a
 * test set links and tracing before any class exists, and read the trace
 * after all of them are gone. NA_NOMEM on allocation failure. */
QS_EXPORT na_return_t na_sim_world_hold(void);

/* Drop one hold. The world is destroyed once no hold and no class remain.
 * NA_NOENTRY if there was no hold to drop. */
QS_EXPORT na_return_t na_sim_world_release(void);

/* Whether a world exists right now. */
QS_EXPORT bool na_sim_world_exists(void);

/*
 * Virtual time. Nothing here waits on real time.
 */

/* The world's virtual clock in nanoseconds (0 when there is no world).
 * NA_Clock_now() on a sim class returns the same value. */
QS_EXPORT uint64_t na_sim_clock_now(void);

/* How many times, in this process, a thread waiting in a simulated world
 * stopped waiting for work about to run elsewhere (a ULT queued or
 * running, a progress thread at work, a completion another thread has not
 * triggered) because its grace of about 250 ms of real time ran out, and
 * let the clock move on without it (docs/sim.md, "Computing takes no
 * virtual time"). A timed call that expires while such work was still
 * coming shows up here. */
QS_EXPORT uint64_t na_sim_grace_expiries(void);

/* Run the earliest queued event, advancing the clock to its time.
 * NA_SUCCESS if one ran, NA_TIMEOUT if the queue was empty, NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_step(void);

/* Run every event due at or before time_ns, in order, then set the clock
 * to time_ns (the clock never goes back). *ran (may be NULL) receives the
 * number of events run. NA_SUCCESS or NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_run_until(uint64_t time_ns, uint64_t *ran);

/* Run events until the queue is empty. Completions are queued on their
 * contexts but callbacks still run only from NA_Trigger(). *ran (may be
 * NULL) receives the number of events run. NA_SUCCESS or NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_run_until_idle(uint64_t *ran);

/*
 * Which context to progress next, for one thread driving a large world: a
 * driver that progresses every context after every event pays for every
 * node each time. The world lists, in the order of their first completion,
 * the contexts on which a completion was queued (by any progress call or
 * the calls above) since they were last returned here; a context is listed
 * once however many completions it got. This takes the first one off the
 * list, writes its node's name (without "sim://", NUL-terminated) into
 * name[size] and its context id into *id. The order is part of the run, so
 * a driver that follows it stays deterministic.
 * NA_SUCCESS; NA_NOENTRY when the list is empty or there is no world;
 * NA_OVERFLOW when the name does not fit (the context stays listed);
 * NA_INVALID_ARG for a NULL name or id.
 */
QS_EXPORT na_return_t na_sim_ready_next(char *name, size_t size, uint8_t *id);

/*
 * The same, for a driver that keeps a record of its own per node: instead
 * of the node's name, *data receives the pointer last given to the node
 * with na_sim_node_set_data() (NULL if none), so the driver finds its
 * record without copying and parsing a name on every call.
 * NA_SUCCESS; NA_NOENTRY when the list is empty or there is no world;
 * NA_INVALID_ARG for a NULL data or id.
 */
QS_EXPORT na_return_t na_sim_ready_next_data(void **data, uint8_t *id);

/* Attach a pointer of the caller's to the node of that name ("n1" or
 * "sim://n1"), for na_sim_ready_next_data(). It stays with the node across
 * crashes and restarts and goes with it when its class is finalized.
 * NA_SUCCESS; NA_NOENTRY when no such node or no world exists;
 * NA_INVALID_ARG for a NULL or malformed name. */
QS_EXPORT na_return_t na_sim_node_set_data(const char *name, void *data);

/*
 * Links and queues.
 */

/* Set the parameters of every link without its own setting, including
 * links set later. NA_INVALID_ARG if link is NULL. */
QS_EXPORT na_return_t na_sim_set_link_default(const struct na_sim_link *link);

/* Set the parameters of the directed link from node src to node dst.
 * Names are given bare ("server") or as addresses ("sim://server"); the
 * nodes need not exist yet. Operations already in flight keep the timing
 * they were given at post. NA_INVALID_ARG for a malformed name or NULL. */
QS_EXPORT na_return_t na_sim_set_link(const char *src, const char *dst,
                                      const struct na_sim_link *link);

/* Read the parameters that apply to the link from src to dst (its own or
 * the default) into *link. NA_INVALID_ARG, NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_get_link(const char *src, const char *dst,
                                      struct na_sim_link *link);

/* What an unexpected message does when it finds its destination context
 * without a posted receive and with a full backlog. */
enum na_sim_backlog_policy {
    /* The send stays in flight until a receive is posted or a backlog slot
     * frees up, then completes with NA_SUCCESS: the back-pressure of RNR
     * retry and credit flow control on real fabrics. The default. */
    NA_SIM_BACKLOG_BLOCK,
    /* The send completes at once with NA_AGAIN. */
    NA_SIM_BACKLOG_FAIL,
};

/* Bound the unexpected backlog of every context: at most `limit` messages
 * that arrived before a receive was posted wait for one (0: none wait);
 * `when_full` says what a message that finds no room does. The default is
 * 256 messages and NA_SIM_BACKLOG_BLOCK. The new setting applies at once
 * to senders already blocked. A context destroyed while senders are
 * blocked on it completes them with NA_HOSTUNREACH. NA_INVALID_ARG for an
 * unknown policy, NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_set_unexpected_backlog(
    size_t limit, enum na_sim_backlog_policy when_full);

/* Declare that one thread drives every class of the world (true), or not
 * (false, the default). Only then does HG treat a liveness probe left
 * unanswered for a probe interval of virtual time as a dead peer: where
 * several threads drive the world, or may, virtual time jumps while they
 * work in real time, and a live peer would look silent (docs/sim.md,
 * "Time"). A world that sees a second polling thread ignores the
 * declaration. NA_NOENTRY without a world. */
QS_EXPORT na_return_t na_sim_set_single_driver(bool single);

/*
 * Faults. A fault profile is a list of rules in a compact text form, for
 * example
 *     world:loss=0.01;link:a>b:latency=5us,jitter=pareto:2us;
 *     node:srv:crash@3ms,restart@8ms;partition:a>b@1ms-4ms
 * (docs/sim.md has the grammar and the catalogue of faults). Every random
 * decision draws from the world's seeded PRNG, so a seed replays them; each
 * fault that strikes appends a "fault:<what>" line to the trace. A world
 * created while QS_SIM_FAULTS is set starts with that profile (a malformed
 * one makes NA_Initialize fail, with the reason on stderr). Scheduled times
 * are absolute virtual times; those already past act at once.
 */
#define NA_SIM_FAULTS_ENV "QS_SIM_FAULTS"

/* Draw a random fault profile from `seed` into buf (size bytes, NUL
 * included), as qs-sweep --swarm does: a quarter of the seeds get none
 * (""), the others a random subset of loss, dup, trunc, send_err, rma_err,
 * partial, revoke, again, rnr and reorder at random rates, a backlog
 * bound, sometimes jitter, a partition window between two of the first
 * `nodes` automatically named nodes (node0, node1, ...) and a crash
 * followed by a restart. Never corruption, which only payload checksums
 * catch. A pure function of (seed, nodes); the result always validates.
 * NA_SUCCESS, NA_INVALID_ARG (NULL buf, size 0, nodes 0 or over 1000),
 * NA_OVERFLOW (buf too small: 512 bytes always suffice; buf is then ""). */
QS_EXPORT na_return_t na_sim_fault_draw(uint64_t seed, unsigned int nodes,
                                        char *buf, size_t size);

/* Check a profile without applying it: a pure function that needs no
 * world. err (may be NULL) receives a one-line reason on failure.
 * NA_SUCCESS, NA_INVALID_ARG (malformed), NA_OVERFLOW (too long or too many
 * rules), NA_NOMEM. */
QS_EXPORT na_return_t na_sim_fault_validate(const char *spec, char *err,
                                            size_t err_size);

/* Replace the world's profile with `spec` (NULL or "" for none). Pending
 * scheduled actions of the old profile are dropped; nodes already crashed
 * stay crashed until restarted. On error nothing changes. NA_NOENTRY
 * without a world, else as na_sim_fault_validate(). */
QS_EXPORT na_return_t na_sim_fault_set(const char *spec, char *err,
                                       size_t err_size);

/* Append the rules of `spec` to the world's profile (its scheduled actions
 * are queued again, so add actions in one call with their rules). */
QS_EXPORT na_return_t na_sim_fault_add(const char *spec, char *err,
                                       size_t err_size);

/* Heal: no rule remains (crashed nodes stay down until restarted). */
QS_EXPORT na_return_t na_sim_fault_clear(void);

/* Crash node `name` now: its operations are held back and never complete
 * while it is down (cancel still completes them), what was queued for it
 * is lost, and peers' sends and RMA to it fail with NA_HOSTUNREACH after
 * the detection delay ("world:detect=", 100 us by default). NA_NOENTRY
 * when no such node, NA_INVALID_ARG for a malformed name. */
QS_EXPORT na_return_t na_sim_node_crash(const char *name);

/* Restart node `name` now, crashed or not: it takes a new incarnation at
 * the same address. Addresses looked up for an older incarnation are
 * fenced off (NA_HOSTUNREACH) and must be looked up again; its operations
 * held back since the crash complete with NA_HOSTUNREACH. */
QS_EXPORT na_return_t na_sim_node_restart(const char *name);

/* How many times fault `kind` struck in this world since its last reset:
 * "loss", "dup", "trunc", "corrupt", "send_err", "rma_err", "partial",
 * "revoke", "again", "rnr", "reorder", "crash", "restart", "partition",
 * "crashed_peer", "fenced", "frozen", "jitter"; NULL, "" or "*" for all.
 * 0 without a world. */
QS_EXPORT uint64_t na_sim_fault_count(const char *kind);

/*
 * Trace. Every post, delivery and completion appends one canonical line
 *     <time_ns> <seq> <kind> <src> <dst> <size> <tag>\n
 * to the world's trace; a 64-bit hash of the lines' fields, in order, is
 * always kept (its definition is in docs/sim.md: word-wise, so a run that
 * wants only the hash never formats a line), the lines themselves only
 * when enabled or written out (QS_SIM_TRACE_OUT).
 */

/* Keep (true) or stop keeping (false) the trace lines in memory, for
 * na_sim_trace_dump(). The hash is kept either way. NA_NOENTRY. */
QS_EXPORT na_return_t na_sim_trace_enable(bool enable);

/* The hash of every trace line so far (0xcbf29ce484222325 when nothing
 * happened yet). 0 when there is no world. */
QS_EXPORT uint64_t na_sim_trace_hash(void);

/* Number of trace lines so far (kept or not). 0 when there is no world. */
QS_EXPORT uint64_t na_sim_trace_count(void);

/* Number of events the world ran with prefetching on (NA_SIM_PREFETCH_ENV):
 * 0 in a world of fewer than 64 nodes, unless QS_SIM_PREFETCH=1, and when
 * there is no world. */
QS_EXPORT uint64_t na_sim_prefetched_events(void);

/* Write the kept trace lines to stream, preceded by a comment line with
 * the seed and followed by one with the hash. NA_NOENTRY, NA_IO_ERROR. */
QS_EXPORT na_return_t na_sim_trace_dump(FILE *stream);

/* When QS_SIM_TRACE_OUT names a file, every world writes its trace there
 * in na_sim_trace_dump()'s format, each line as it is made (so a run that
 * aborts or is killed leaves its trace up to that point; the footer with
 * the count and hash comes when the world is freed). The first world of
 * the process truncates the file and later ones append, so a program
 * that makes several worlds leaves all of their traces, in order.
 * qs-sweep sets it for every run. */
#define NA_SIM_TRACE_OUT_ENV "QS_SIM_TRACE_OUT"

/* When QS_SIM_HANG_S is a number of seconds, a world whose virtual clock
 * passes it ends the process with exit status NA_SIM_HANG_EXIT, after a
 * line on stderr and a "# hung: ..." line in the QS_SIM_TRACE_OUT trace.
 * A program waiting with no deadline for something that never comes
 * still moves the clock by its progress timeouts (thousands of virtual
 * seconds per real second), so the bound finds a hang in milliseconds
 * where a wall-clock timeout takes its full length. Choose it well above
 * the virtual time the program normally needs, including the library's own
 * waits (a respond holds unacknowledged overflowed output for 60 s): a
 * world driven by several threads also moves its clock while one of them
 * computes (docs/sim.md).
 * qs-sweep --vtimeout S sets it for every run. Unset: no bound. */
#define NA_SIM_HANG_ENV "QS_SIM_HANG_S"
#define NA_SIM_HANG_EXIT 124

/* In a world of 64 nodes or more, the fabric prefetches what its next
 * events and its next ready contexts will touch: such a world outgrows
 * the cache, and its state would otherwise be fetched one miss at a time.
 * A prefetch never changes what runs, nor the trace. QS_SIM_PREFETCH=1
 * prefetches in every world and 0 in none (read when the world is
 * created); a test forces it on to check that it changes nothing. */
#define NA_SIM_PREFETCH_ENV "QS_SIM_PREFETCH"

#ifdef __cplusplus
}
#endif

#endif /* NA_SIM_H */
