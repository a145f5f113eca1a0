/*
 * HG helpers shared by hg_rate and hg_bw: progress modes, the thread that
 * drives a server context in one-process runs, the server loop of
 * two-process runs and the shutdown RPC that ends it.
 *
 * Everything here uses the public API only (mercury.h), so the tools
 * measure what an application would see.
 */
#ifndef BENCH_HG_H
#define BENCH_HG_H

#include <mercury.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/*
 * How a side drives progress.
 *  - BUSY: HG_Progress() with a zero timeout in a loop. The thread never
 *    sleeps; this is the lowest latency an application gets by spinning.
 *  - NOBLOCK: the class is initialized with NA_NO_BLOCK, and HG_Progress()
 *    is given a timeout; the plugin spins inside the call instead of
 *    sleeping on a file descriptor.
 *  - WAIT: the default class and HG_Progress() with a timeout; the plugin
 *    may sleep when nothing arrives (after its own short adaptive spin).
 */
enum bh_mode { BH_MODE_BUSY, BH_MODE_NOBLOCK, BH_MODE_WAIT, BH_MODE_COUNT };

/* Timeout given to HG_Progress() in the NOBLOCK and WAIT modes. */
#define BH_PROGRESS_TIMEOUT_MS 100u

const char *bh_mode_name(enum bh_mode mode);
/* Parse a comma-separated list of mode names, or "all", into a bit mask
 * (bit n for mode n). Returns false on an unknown name. */
bool bh_mode_parse_list(const char *s, unsigned *mask);

/* Whether the info string selects the simulated fabric. */
bool bh_info_is_sim(const char *info);

/* Where a tool runs: both sides in this process, or one side of a
 * two-process run. */
enum bh_role { BH_ROLE_SELF, BH_ROLE_SERVER, BH_ROLE_CLIENT };

/*
 * The command-line options hg_rate and hg_bw share: the info string, the
 * role with its addresses, --mode and --driver as given (each tool reads
 * --mode its own way), the lifetime bound of --server and --no-shutdown.
 */
struct bh_opts {
    const char *info;
    enum bh_role role;
    const char *server_addr; /* --client ADDR                          */
    const char *addr_file;
    const char *mode;   /* --mode as given, NULL when absent      */
    const char *driver; /* --driver as given, NULL when absent    */
    double server_seconds;
    bool shutdown;      /* a client stops its server when done     */
    bool inline_driver; /* set by bh_opts_finish()                 */
};

#define BH_OPTS_INITIALIZER                                                    \
    {                                                                          \
        .role = BH_ROLE_SELF, .server_seconds = 600.0, .shutdown = true        \
    }

/*
 * Take argument `a` (with `v`, the next one or NULL) when it is a shared
 * option or the info string. Returns 1 when taken, 0 when `a` is none of
 * them, -1 when it is one with a bad value. *used_value says whether `v`
 * was consumed (true when `a` is none of them, so that the caller's own
 * options take their value by default).
 */
int bh_opts_parse(struct bh_opts *o, const char *a, const char *v,
                  bool *used_value);

/*
 * After the command line: the info string defaults to $QS_BENCH_INFO, else
 * "sim"; a two-process role on the simulated fabric is refused; the
 * driver is inline unless --driver says otherwise, by default on sim only.
 * Returns 0, or -1 after printing why (prefixed with `tool`).
 */
int bh_opts_finish(struct bh_opts *o, const char *tool);

/* One HG class with one context. */
struct bh_side {
    hg_class_t *cls;
    hg_context_t *ctx;
    enum bh_mode mode;
    bool is_sim;
};

/*
 * Initialize a side. On the simulated fabric a listening side without a
 * node name gets `sim_name`, and a client gets an automatic name. Returns 0,
 * or -1 after printing why.
 */
int bh_side_init(struct bh_side *side, const char *info, bool listen,
                 enum bh_mode mode, const char *sim_name);
/* Drain the context (responses still leaving), destroy it and finalize the
 * class. Returns 0, or -1 after printing what refused to go. */
int bh_side_fini(struct bh_side *side);

/* The side's own address as a string a peer can look up. */
int bh_self_string(const struct bh_side *side, char *buf, size_t size);

/* One round of progress on a context in the given mode, then run every
 * queued callback. Returns the number of callbacks run. */
unsigned bh_progress(hg_context_t *ctx, enum bh_mode mode);

/*
 * The client's progress loop body. With `inline_server` set (single-thread
 * runs, which the simulated fabric needs to stay deterministic and to let
 * virtual time advance), the server context is progressed right after the
 * client's, from the same thread.
 */
struct bh_pump {
    struct bh_side *client;
    struct bh_side *inline_server; /* NULL when a thread or a process serves */
};
unsigned bh_pump(const struct bh_pump *pump);

/*
 * Drive the pump until *counter reaches target or max_seconds of real time
 * pass. Returns 0, or -1 on timeout.
 */
int bh_pump_until(const struct bh_pump *pump, const volatile int *counter,
                  int target, double max_seconds);

/* A thread that drives a server context until stopped. */
struct bh_driver {
    pthread_t tid;
    struct bh_side *side;
    atomic_int stop;
    bool started;
};
int bh_driver_start(struct bh_driver *d, struct bh_side *side);
void bh_driver_stop(struct bh_driver *d);

/*
 * The shutdown RPC. A serving class registers it with `serve` (its handler
 * sets *state to 1 when the request arrives and to 2 once the response has
 * left); a client registers it without handler and calls
 * bh_send_shutdown().
 */
hg_id_t bh_register_shutdown(hg_class_t *cls, bool serve, atomic_int *state);
int bh_send_shutdown(const struct bh_pump *pump, hg_addr_t server, hg_id_t id,
                     double max_seconds);

/*
 * Serve in the calling thread until the shutdown RPC has been answered or
 * max_seconds of real time pass (a client that died must not leave a
 * server behind forever). Returns 0 after a shutdown, 1 on the time bound.
 */
int bh_serve(struct bh_side *side, atomic_int *shutdown_state,
             double max_seconds);

/*
 * Publish a server's address: one human line on stdout and, when path is
 * not NULL, the bare address in that file. Returns 0 or -1.
 */
int bh_publish_address(const char *tool, const struct bh_side *side,
                       const char *path);

/* The address of a one-process server, looked up by the client. */
int bh_lookup(struct bh_side *client, const char *addr_string, hg_addr_t *addr);

#endif /* BENCH_HG_H */
