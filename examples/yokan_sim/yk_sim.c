/*
 * yk_sim: a Yokan provider (map backend) and a Yokan client in one process,
 * driven by one execution stream, doing a seeded mix of put, get, exists,
 * erase, fetch and iter that is checked against a model of the database.
 *
 *   yk_sim [info] [ops]    info: "sim" (default); ops: 60 by default
 *
 * The seed (QS_SIM_SEED, 1 by default) chooses the operations as well as
 * the simulated fabric's decisions, so one seed is one run, event for
 * event. Built against an installed Yokan (examples/yokan_sim/build.sh);
 * docs/testing-your-service.md, "A second example: Yokan", explains it.
 *
 * What must hold, with or without injected faults:
 *
 * - Every call returns, within twice its deadline (200 ms of virtual
 *   time), as margo_provider_forward_timed does on Argobots whatever the
 *   server's handler is doing (YK_SIM_LATE_OK=1 only counts late calls:
 *   Quicksilver runs a caller-context handler on the stack of the call
 *   that waits, so a handler that blocks holds that call past its
 *   deadline). A call that fails returns one of the errors a
 *   fault can cause (YOKAN_ERR_FROM_MERCURY, YOKAN_ERR_TIMEOUT, ...); any
 *   other error is a violation.
 * - A write (put or erase) that returned YOKAN_SUCCESS is acknowledged; one
 *   that failed is in doubt: it may have been applied, may be applied
 *   later (its request may still be on its way), or never.
 * - A read (get, exists, fetch, iter) sees, for each key, either the last
 *   acknowledged write to that key or a write to that key still in doubt.
 *   So it never returns a value nobody wrote to that key, never the bytes
 *   of two writes mixed, and never an older value that a later
 *   acknowledged write replaced (a lost acknowledged write), unless that
 *   older write is itself in doubt.
 * - A settle step waits 3 s of virtual time with nothing in flight, then
 *   reads every key until a read succeeds: what it sees must be allowed,
 *   and becomes the key's known state, with nothing left in doubt. A
 *   write that lands after that is a violation too.
 * - fetch and iter call their callback once per key on success, with the
 *   key they were asked for, in order, and never after they returned.
 *   Under a profile with the dup fault a key may come twice: the fabric
 *   delivered the request twice and HG ran the handler twice, as Mercury
 *   would (neither deduplicates; a real fabric never hands HG a duplicate).
 *
 * Exit status 0 when everything held, 1 on a violation (each printed with
 * the seed and the line that replays the run).
 *
 * Environment: YK_SIM_VERBOSE=1 prints every call and its result;
 * YK_SIM_FETCH_BATCHES=1 also draws fetch batches smaller than the keys
 * asked for, which Yokan's client mishandles (its callbacks of a later
 * batch get the keys of the first); YK_SIM_LATE_OK=1, above.
 */
#define _POSIX_C_SOURCE 200809L

#include <margo.h>
#include <na_sim.h>
#include <yokan/client.h>
#include <yokan/database.h>
#include <yokan/server.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YS_KEYS 6
#define YS_MAX_WRITES 4096
#define YS_VMAX 8192
#define YS_TIMEOUT_MS 200.0
#define YS_LATE_NS 400000000ull /* twice the deadline */
#define YS_QUIET_MS 3000
#define YS_SETTLE_TRIES 40
#define YS_PROVIDER_ID 42
#define YS_ABSENT 0 /* write 0: the state before anything was written */

struct ys_write {
    int key;
    bool erase;
    size_t len;
};

struct ys_key {
    int acked;                /* the last acknowledged write */
    int doubt[YS_MAX_WRITES]; /* writes whose outcome is unknown */
    int ndoubt;
};

static struct ys_write writes[YS_MAX_WRITES] = {{.key = -1, .erase = true}};
static int nwrites = 1; /* writes[0] is YS_ABSENT */
static struct ys_key keys[YS_KEYS];

static uint64_t seed = 1;
static bool small_batches;  /* YK_SIM_FETCH_BATCHES=1 */
static bool verbose;        /* YK_SIM_VERBOSE=1: one line per call */
static bool dup_in_profile; /* the fault profile duplicates messages */
static bool late_ok;        /* YK_SIM_LATE_OK=1: late calls are counted */
static uint64_t rng_state;
static int op_index;
static int violations;
static const char *progname;

static struct {
    int calls, ok, failed, settled, unsettled, repeats, late;
    uint64_t longest_ns; /* the longest call, in virtual time */
    int errors[64];
} stats;

static uint64_t call_start_ns;
static margo_instance_id server_mid, client_mid;
static char server_str[256];
static yk_client_t client;
static hg_addr_t server_addr = HG_ADDR_NULL;
static yk_database_handle_t dbh;

/* splitmix64: the program's own choices, from the seed. */
static uint64_t
ys_rand(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned
ys_below(unsigned n)
{
    return (unsigned) (ys_rand() % n);
}

static void
ys_violation(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "yk_sim: VIOLATION (seed %" PRIu64 ", op %d): ", seed,
            op_index);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    violations++;
}

static void
ys_key_name(int k, char *buf, size_t *len)
{
    *len = (size_t) snprintf(buf, 16, "key%d", k);
}

/* The value of write w: "Y<key>.<w>|" then letters that depend on w, so a
 * value read back names the write it came from and shows whether it is
 * whole. */
static void
ys_value(int w, char *buf)
{
    int n = snprintf(buf, YS_VMAX, "Y%d.%d|", writes[w].key, w);

    for (size_t i = (size_t) n; i < writes[w].len; i++)
        buf[i] = (char) ('a' + ((size_t) w * 7 + i) % 26);
}

/* Which write a value read back for key k came from, or -1 (and a
 * violation) when no write made those bytes. */
static int
ys_parse(int k, const char *val, size_t len)
{
    char tmp[32], want[YS_VMAX];
    int kk, w, n = 0;
    size_t head = len < sizeof(tmp) - 1 ? len : sizeof(tmp) - 1;

    memcpy(tmp, val, head);
    tmp[head] = '\0';
    if (sscanf(tmp, "Y%d.%d|%n", &kk, &w, &n) != 2 || n == 0 || w <= 0 ||
        w >= nwrites || writes[w].erase || writes[w].key != k ||
        writes[w].len != len) {
        ys_violation("key%d: %zu bytes that no write to this key made "
                     "(they begin \"%.16s\")",
                     k, len, tmp);
        return -1;
    }
    ys_value(w, want);
    if (memcmp(want, val, len) != 0) {
        ys_violation("key%d: write %d read back with other bytes in it", k, w);
        return -1;
    }
    return w;
}

static bool
ys_in_doubt(int k, int w)
{
    for (int i = 0; i < keys[k].ndoubt; i++)
        if (keys[k].doubt[i] == w)
            return true;
    return false;
}

/* Whether key k may hold write w (a put) now. */
static bool
ys_may_hold(int k, int w)
{
    return keys[k].acked == w || ys_in_doubt(k, w);
}

/* Whether key k may be absent now. */
static bool
ys_may_be_absent(int k)
{
    if (writes[keys[k].acked].erase)
        return true;
    for (int i = 0; i < keys[k].ndoubt; i++)
        if (writes[keys[k].doubt[i]].erase)
            return true;
    return false;
}

/* Whether key k must be present now. */
static bool
ys_must_be_present(int k)
{
    return !ys_may_be_absent(k);
}

/* Checks a value read back for key k; returns the write it came from, or
 * -1 after a violation. */
static int
ys_check_present(int k, const char *what, const char *val, size_t len)
{
    int w = ys_parse(k, val, len);

    if (w < 0)
        return -1;
    if (!ys_may_hold(k, w)) {
        ys_violation("%s key%d: write %d, but the last acknowledged write "
                     "is %d%s and %d write(s) are in doubt",
                     what, k, w, keys[k].acked,
                     writes[keys[k].acked].erase ? " (an erase)" : "",
                     keys[k].ndoubt);
        return -1;
    }
    return w;
}

static void
ys_check_absent(int k, const char *what)
{
    if (!ys_may_be_absent(k))
        ys_violation("%s key%d: not found, but write %d was acknowledged "
                     "and no erase is in doubt",
                     what, k, keys[k].acked);
}

static int
ys_new_write(int k, bool erase)
{
    static const size_t lens[] = {16, 200, 3000, 5000};
    int w = nwrites++;

    writes[w].key = k;
    writes[w].erase = erase;
    writes[w].len = erase ? 0 : lens[ys_below(4)];
    return w;
}

static void
ys_write_done(int k, int w, bool acked)
{
    if (acked)
        keys[k].acked = w;
    else
        keys[k].doubt[keys[k].ndoubt++] = w; /* at most one per write */
}

/* Look the server up again: after a crash and restart the old address is
 * fenced, as it would be after a real server process restarted. */
static void
ys_refresh_handle(void)
{
    if (dbh)
        yk_database_handle_release(dbh);
    dbh = NULL;
    if (server_addr != HG_ADDR_NULL)
        margo_addr_free(client_mid, server_addr);
    server_addr = HG_ADDR_NULL;
    if (margo_addr_lookup(client_mid, server_str, &server_addr) != HG_SUCCESS ||
        yk_database_handle_create(client, server_addr, YS_PROVIDER_ID, false,
                                  &dbh) != YOKAN_SUCCESS) {
        fprintf(stderr, "yk_sim: cannot make a database handle for %s\n",
                server_str);
        exit(2);
    }
}

/* Counts a call's result; a failure must be one a fault can cause. */
static bool
ys_result(const char *what, yk_return_t ret, bool not_found_ok)
{
    uint64_t took = na_sim_clock_now() - call_start_ns;

    if (verbose)
        printf("yk_sim: op %d: %s returned %d after %.3f ms\n", op_index, what,
               (int) ret, (double) took / 1e6);
    if (took > stats.longest_ns)
        stats.longest_ns = took;
    /* Each call is one forward with a deadline: whatever the server does,
     * margo_provider_forward_timed returns by then (plus a timer's
     * slack), as it does on Argobots. */
    if (took > YS_LATE_NS)
        stats.late++;
    if (took > YS_LATE_NS && !late_ok)
        ys_violation("%s returned after %.3f ms of virtual time, past its "
                     "%.0f ms deadline",
                     what, (double) took / 1e6, YS_TIMEOUT_MS);
    stats.calls++;
    if (ret == YOKAN_SUCCESS ||
        (not_found_ok && ret == YOKAN_ERR_KEY_NOT_FOUND)) {
        stats.ok++;
        return true;
    }
    stats.failed++;
    stats.errors[(unsigned) ret < 64 ? (unsigned) ret : 63]++;
    switch (ret) {
    case YOKAN_ERR_FROM_MERCURY:
    case YOKAN_ERR_FROM_ARGOBOTS:
    case YOKAN_ERR_TIMEOUT:
    case YOKAN_ERR_CANCELED:
        break;
    default:
        ys_violation("%s failed with %d, which no fault explains", what,
                     (int) ret);
    }
    ys_refresh_handle();
    return false;
}

/* Called just before each yk_* call (in its argument list): the call's
 * start on the virtual clock. */
static int
ys_mode(void)
{
    call_start_ns = na_sim_clock_now();
    return (ys_below(2) ? YOKAN_MODE_NO_RDMA : 0) | YOKAN_MODE_EXTRA;
}

#define YS_EXTRA YOKAN_EXTRA_TIMEOUT_MS, YS_TIMEOUT_MS, YOKAN_EXTRA_END

static void
ys_put(int k)
{
    char key[16], val[YS_VMAX];
    size_t klen;
    int w = ys_new_write(k, false);
    yk_return_t ret;

    ys_key_name(k, key, &klen);
    ys_value(w, val);
    ret = yk_put(dbh, ys_mode(), key, klen, val, writes[w].len, YS_EXTRA);
    ys_write_done(k, w, ys_result("put", ret, false));
}

static void
ys_erase(int k)
{
    char key[16];
    size_t klen;
    int w = ys_new_write(k, true);
    yk_return_t ret;

    ys_key_name(k, key, &klen);
    ret = yk_erase(dbh, ys_mode(), key, klen, YS_EXTRA);
    ys_write_done(k, w, ys_result("erase", ret, false));
}

/* One get of key k; *seen is the write read back (YS_ABSENT when not
 * found). Returns whether the call succeeded. */
static bool
ys_get(int k, int *seen)
{
    static char val[YS_VMAX];
    char key[16];
    size_t klen, vsize = sizeof(val);
    yk_return_t ret;

    ys_key_name(k, key, &klen);
    ret = yk_get(dbh, ys_mode(), key, klen, val, &vsize, YS_EXTRA);
    if (!ys_result("get", ret, true))
        return false;
    if (ret == YOKAN_ERR_KEY_NOT_FOUND || vsize == YOKAN_KEY_NOT_FOUND) {
        ys_check_absent(k, "get");
        *seen = YS_ABSENT;
    } else {
        *seen = ys_check_present(k, "get", val, vsize);
    }
    return true;
}

static void
ys_exists(int k)
{
    char key[16];
    size_t klen;
    uint8_t flag = 2;
    yk_return_t ret;

    ys_key_name(k, key, &klen);
    ret = yk_exists(dbh, ys_mode() & ~YOKAN_MODE_NO_RDMA, key, klen, &flag,
                    YS_EXTRA);
    if (!ys_result("exists", ret, false))
        return;
    if (flag == 0)
        ys_check_absent(k, "exists");
    else if (flag == 1) {
        bool some = false;

        for (int w = 1; w < nwrites; w++)
            if (!writes[w].erase && writes[w].key == k && ys_may_hold(k, w))
                some = true;
        if (!some)
            ys_violation("exists key%d: 1, but no write to it may be there", k);
    } else {
        ys_violation("exists key%d: flag %u", k, flag);
    }
}

/* What fetch and iter callbacks check their calls against. */
struct ys_listing {
    const char *what;
    bool active;
    int want[YS_KEYS]; /* fetch: the keys asked for, in order */
    int nwant;
    int calls[YS_KEYS];
    int last_key;
    bool iter;
};

static int
ys_key_of(const void *key, size_t ksize)
{
    int k = -1, n = 0;
    char tmp[16];

    if (ksize == 0 || ksize >= sizeof(tmp))
        return -1;
    memcpy(tmp, key, ksize);
    tmp[ksize] = '\0';
    if (sscanf(tmp, "key%d%n", &k, &n) != 1 || (size_t) n != ksize || k < 0 ||
        k >= YS_KEYS)
        return -1;
    return k;
}

static yk_return_t
ys_listing_cb(void *uargs, size_t index, const void *key, size_t ksize,
              const void *val, size_t vsize)
{
    struct ys_listing *l = uargs;
    int k = ys_key_of(key, ksize);

    if (!l->active) {
        ys_violation("%s: callback for index %zu after the call returned",
                     l->what, index);
        return YOKAN_SUCCESS;
    }
    if (k < 0) {
        ys_violation("%s: callback %zu with a key nobody wrote (%zu bytes)",
                     l->what, index, ksize);
        return YOKAN_SUCCESS;
    }
    if (!l->iter) {
        if (index >= (size_t) l->nwant) {
            ys_violation("%s: callback index %zu of %d keys", l->what, index,
                         l->nwant);
            return YOKAN_SUCCESS;
        }
        if (l->want[index] != k)
            ys_violation("%s: callback %zu gives key%d, key%d was asked",
                         l->what, index, k, l->want[index]);
    }
    if (l->calls[k] > 0 && dup_in_profile) {
        /* A duplicated request ran the server's handler twice, and each
         * run calls back into this listing: at-least-once delivery, which
         * only the dup fault produces (see above). The value must still
         * be one the key may hold. */
        stats.repeats++;
    } else if (l->calls[k] > 0) {
        ys_violation("%s: key%d given %d times", l->what, k, l->calls[k] + 1);
    } else if (l->iter && k <= l->last_key) {
        ys_violation("%s: key%d after key%d", l->what, k, l->last_key);
    }
    l->last_key = k;
    l->calls[k]++;
    if (vsize == YOKAN_KEY_NOT_FOUND)
        ys_check_absent(k, l->what);
    else
        ys_check_present(k, l->what, val, vsize);
    return YOKAN_SUCCESS;
}

/* The pool for callbacks: none (run inline), or the client's handler pool,
 * where Yokan starts one thread per item and joins them. */
static ABT_pool
ys_callback_pool(void)
{
    ABT_pool pool = ABT_POOL_NULL;

    if (ys_below(2))
        margo_get_handler_pool(client_mid, &pool);
    return pool;
}

static void
ys_fetch(void)
{
    static struct ys_listing l;
    char kbuf[YS_KEYS * 16];
    size_t ksizes[YS_KEYS], off = 0;
    yk_fetch_options_t opt = {.pool = ys_callback_pool()};
    yk_return_t ret;

    memset(&l, 0, sizeof(l));
    l.what = "fetch";
    l.nwant = 1 + (int) ys_below(3);
    for (int i = 0; i < l.nwant; i++) {
        l.want[i] = (int) ys_below(YS_KEYS);
        for (int j = 0; j < i; j++)
            if (l.want[j] == l.want[i])
                l.want[i] = (l.want[i] + 1) % YS_KEYS, j = -1;
        ys_key_name(l.want[i], kbuf + off, &ksizes[i]);
        off += ksizes[i];
    }
    /* Batches: 0 (all at once) or a whole batch by default. Yokan's
     * client gives the callbacks of a second batch the keys of the first
     * (yk_fetch_back_ult indexes its keys from 0 in each batch), so
     * smaller batches are drawn only with YK_SIM_FETCH_BATCHES=1. */
    opt.batch_size = ys_below(2) ? 0 : (unsigned) l.nwant;
    if (small_batches)
        opt.batch_size = ys_below(4);
    l.active = true;
    ret = yk_fetch_packed(dbh, ys_mode(), (size_t) l.nwant, kbuf, ksizes,
                          ys_listing_cb, &l, &opt, YS_EXTRA);
    l.active = false;
    if (!ys_result("fetch", ret, false))
        return;
    for (int i = 0; i < l.nwant; i++)
        if (l.calls[l.want[i]] == 0)
            ys_violation("fetch: succeeded, key%d given %d times", l.want[i],
                         l.calls[l.want[i]]);
}

static void
ys_iter(void)
{
    static struct ys_listing l;
    yk_iter_options_t opt = {.batch_size = ys_below(4),
                             .pool = ys_callback_pool(),
                             .ignore_values = false};
    yk_return_t ret;

    memset(&l, 0, sizeof(l));
    l.what = "iter";
    l.iter = true;
    l.last_key = -1;
    l.active = true;
    ret = yk_iter(dbh, ys_mode(), "", 0, "", 0, 0, ys_listing_cb, &l, &opt,
                  YS_EXTRA);
    l.active = false;
    if (!ys_result("iter", ret, false))
        return;
    for (int k = 0; k < YS_KEYS; k++)
        if (l.calls[k] == 0 && ys_must_be_present(k))
            ys_violation("iter: succeeded without key%d, whose write %d was "
                         "acknowledged",
                         k, keys[k].acked);
}

/* Wait until nothing is in flight, then read every key until a read
 * succeeds; what it sees becomes the key's known state. */
static void
ys_settle(void)
{
    margo_thread_sleep(client_mid, YS_QUIET_MS);
    for (int k = 0; k < YS_KEYS; k++) {
        int seen = -1, tries;

        for (tries = 0; tries < YS_SETTLE_TRIES; tries++)
            if (ys_get(k, &seen))
                break;
        if (tries == YS_SETTLE_TRIES) {
            stats.unsettled++;
            continue;
        }
        stats.settled++;
        if (seen < 0)
            continue; /* a violation already */
        keys[k].acked = seen;
        keys[k].ndoubt = 0;
    }
}

static void
ys_step(void)
{
    unsigned r = ys_below(100);
    int k = (int) ys_below(YS_KEYS);

    if (verbose) {
        printf("yk_sim: op %d: draw %u, key%d\n", op_index, r, k);
        fflush(stdout);
    }

    if (r < 30)
        ys_put(k);
    else if (r < 50) {
        int seen;
        ys_get(k, &seen);
    } else if (r < 60)
        ys_exists(k);
    else if (r < 70)
        ys_erase(k);
    else if (r < 82)
        ys_fetch();
    else if (r < 94)
        ys_iter();
    else
        ys_settle();
}

int
main(int argc, char **argv)
{
    const char *info = argc > 1 ? argv[1] : "sim";
    int nops = argc > 2 ? atoi(argv[2]) : 60;
    const char *s = getenv("QS_SIM_SEED");
    struct yk_provider_args args = YOKAN_PROVIDER_ARGS_INIT;
    hg_addr_t self;
    hg_size_t len = sizeof(server_str);

    progname = argv[0];
    s = getenv("YK_SIM_FETCH_BATCHES");
    small_batches = s && strcmp(s, "1") == 0;
    s = getenv("YK_SIM_VERBOSE");
    verbose = s && strcmp(s, "1") == 0;
    s = getenv("YK_SIM_LATE_OK");
    late_ok = s && strcmp(s, "1") == 0;
    s = getenv("QS_SIM_FAULTS");
    dup_in_profile = s && strstr(s, "dup=") != NULL;
    s = getenv("QS_SIM_SEED");
    if (s && *s)
        seed = strtoull(s, NULL, 0);
    rng_state = seed;
    if (nops <= 0 || nops > YS_MAX_WRITES / 2) {
        fprintf(stderr, "usage: yk_sim [info] [ops (1 to %d)]\n",
                YS_MAX_WRITES / 2);
        return 2;
    }

    /* One execution stream drives both: no progress thread, handlers in
     * the caller's context, so the run follows the seed. */
    server_mid = margo_init(info, MARGO_SERVER_MODE, 0, 0);
    if (server_mid == MARGO_INSTANCE_NULL ||
        yk_provider_register(server_mid, YS_PROVIDER_ID,
                             "{\"database\":{\"type\":\"map\"}}", &args,
                             YOKAN_PROVIDER_IGNORE) != YOKAN_SUCCESS)
        return 2;
    margo_addr_self(server_mid, &self);
    margo_addr_to_string(server_mid, server_str, &len, self);
    margo_addr_free(server_mid, self);

    /* One thread drives the world, so a liveness probe left unanswered
     * for an interval of virtual time means a dead peer (docs/sim.md). */
    if (strncmp(info, "sim", 3) == 0)
        na_sim_set_single_driver(true);

    /* The client listens: fetch and iter answer with RPCs back to it. */
    client_mid = margo_init(info, MARGO_SERVER_MODE, 0, 0);
    if (client_mid == MARGO_INSTANCE_NULL ||
        yk_client_init(client_mid, &client) != YOKAN_SUCCESS)
        return 2;
    ys_refresh_handle();

    for (op_index = 0; op_index < nops; op_index++)
        ys_step();
    op_index = nops;
    ys_settle();

    yk_database_handle_release(dbh);
    margo_addr_free(client_mid, server_addr);
    yk_client_finalize(client);
    margo_finalize(client_mid);
    margo_finalize(server_mid);

    printf("yk_sim: seed %" PRIu64 ": %d calls, %d succeeded, %d failed "
           "(Mercury %d, timeout %d, other %d), %d keys settled, %d not, "
           "%d repeated callback(s), %d late call(s) (longest %.1f ms), "
           "%d violation(s)\n",
           seed, stats.calls, stats.ok, stats.failed,
           stats.errors[YOKAN_ERR_FROM_MERCURY],
           stats.errors[YOKAN_ERR_TIMEOUT],
           stats.failed - stats.errors[YOKAN_ERR_FROM_MERCURY] -
               stats.errors[YOKAN_ERR_TIMEOUT],
           stats.settled, stats.unsettled, stats.repeats, stats.late,
           (double) stats.longest_ns / 1e6, violations);
    if (violations) {
        const char *f = getenv("QS_SIM_FAULTS");

        fprintf(stderr,
                "yk_sim: replay: QS_SIM_SEED=%" PRIu64 "%s%s%s %s%s%s\n", seed,
                f ? " QS_SIM_FAULTS='" : "", f ? f : "", f ? "'" : "", progname,
                argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
        return 1;
    }
    return 0;
}
