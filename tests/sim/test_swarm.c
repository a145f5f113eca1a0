/*
 * The seed sweep ("swarm") and the determinism check.
 *
 * Each seed draws its own world: 2 to 8 nodes, eager sizes, posted
 * request receives, backlog bound and policy, checksum level, a fault
 * profile (none for about a quarter of the seeds) with a random subset of
 * the fault kinds at random rates, sometimes a partition window and a
 * crash and restart, and a mix of RPCs (small and overflowing echoes,
 * one-way, bulk pull and push through an RPC, direct bulk transfers,
 * handlers that hold their handle, cancels, timeouts). The driver checks
 * the shared invariants at the end (simdrv.c), and after healing every
 * node must reach every other one.
 *
 * QS_SWARM_SEEDS=<first>:<count> picks the seeds (default 1:250). A
 * failing seed prints the command that replays exactly that seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/simdrv.h"

/* The test's own draws, separate from the fabric's PRNG. */
static uint64_t
sw_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned
sw_below(uint64_t *s, unsigned n)
{
    return (unsigned) (sw_next(s) % n);
}

static const char *sw_prog = "test_sim_swarm";
/* Outcomes over the whole sweep: successes, each error, faults. */
static uint64_t sw_outcomes[64], sw_faults;
static uint64_t sw_seed_in_flight;
static int sw_running;

/* Describe the seed's world in a profile string and options. */
static void
sw_draw(uint64_t seed, uint64_t *r, struct sd_opts *o, char *spec,
        size_t spec_size, int *faulty)
{
    static const char *const rates[] = {"0.001", "0.01", "0.05", "0.2"};
    static const char *const probs[] = {
        "loss",   "dup",   "trunc", "send_err", "rma_err", "partial",
        "revoke", "again", "rnr",   "reorder",  "corrupt"};
    static const size_t sizes[] = {0, 512, 1024, 2048};
    static const uint32_t posts[] = {1, 2, 8, 64};
    static const unsigned backlogs[] = {0, 1, 4, 256};
    size_t len = 0;
    unsigned backlog;
    int fail;

    *r = seed ^ 0x5157524d53454544ULL;
    memset(o, 0, sizeof(*o));
    o->nodes = 2 + (int) sw_below(r, 7);
    o->max_msg = sizes[sw_below(r, 4)];
    o->post_init = posts[sw_below(r, 4)];
    o->checksum = (hg_checksum_level_t) sw_below(r, 3);
    spec[0] = '\0';
    *faulty = sw_below(r, 4) != 0;
    /* C leaves the order of a call's arguments unspecified: every draw is
     * its own statement, so gcc and clang replay the same seed alike. */
    backlog = backlogs[sw_below(r, 4)];
    fail = sw_below(r, 2) != 0;
    len += (size_t) snprintf(spec + len, spec_size - len,
                             "world:backlog=%u,when_full=%s", backlog,
                             fail ? "fail" : "block");
    if (!*faulty)
        return;
    for (size_t i = 0; i < sizeof(probs) / sizeof(probs[0]); i++) {
        if (sw_below(r, 3) != 0)
            continue;
        /* Flipped bits are only caught with payload checksums; without
         * them corruption would (rightly) deliver wrong bytes. */
        if (strcmp(probs[i], "corrupt") == 0)
            o->checksum = HG_CHECKSUM_RPC_PAYLOAD;
        len += (size_t) snprintf(spec + len, spec_size - len, ",%s=%s",
                                 probs[i], rates[sw_below(r, 4)]);
    }
    switch (sw_below(r, 4)) {
    case 0:
        len += (size_t) snprintf(spec + len, spec_size - len,
                                 ",jitter=pareto:%uus", 1 + sw_below(r, 5));
        break;
    case 1:
        len +=
            (size_t) snprintf(spec + len, spec_size - len,
                              ",jitter=lognormal:%uus:0.8", 1 + sw_below(r, 5));
        break;
    case 2:
        len += (size_t) snprintf(spec + len, spec_size - len,
                                 ",jitter=uniform:%uus", 1 + sw_below(r, 20));
        break;
    default:
        break;
    }
    if (sw_below(r, 3) == 0) {
        unsigned a = sw_below(r, (unsigned) o->nodes);
        unsigned b = sw_below(r, (unsigned) o->nodes);
        unsigned t0 = sw_below(r, 5);

        if (a != b) {
            int oneway = sw_below(r, 2) != 0;
            unsigned t1 = t0 + 1 + sw_below(r, 5);

            len += (size_t) snprintf(spec + len, spec_size - len,
                                     ";partition:n%u%sn%u@%ums-%ums", a,
                                     oneway ? ">" : "<>", b, t0, t1);
        }
    }
    (void) len;
}

/* One seed: returns the final trace hash. */
static uint64_t
sw_run(uint64_t seed, int *nops_out)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_opts o;
    char spec[512];
    uint64_t r;
    int faulty, nops, crash_node = -1, crash_at = -1, restart_at = -1;
    struct sd_op *cancel_later[SD_MAX_OPS];
    int ncancel = 0;

    assert_non_null(w);
    sw_draw(seed, &r, &o, spec, sizeof(spec), &faulty);
    assert_int_equal(na_sim_set_seed(seed), NA_SUCCESS);
    sd_open(w, &o);
    w->progress_ms = 2;
    sd_faults(spec);
    nops = 10 + (int) sw_below(&r, 50);
    if (faulty && sw_below(&r, 3) == 0) {
        crash_node = (int) sw_below(&r, (unsigned) o.nodes);
        crash_at = (int) sw_below(&r, (unsigned) nops);
        restart_at = crash_at + 1 + (int) sw_below(&r, 10);
    }
    for (int i = 0; i < nops; i++) {
        int from = (int) sw_below(&r, (unsigned) o.nodes);
        int to = sw_below(&r, 10) == 0 ? from
                                       : (int) sw_below(&r, (unsigned) o.nodes);
        unsigned kind = sw_below(&r, 12);
        size_t len =
            sw_below(&r, 2) ? sw_below(&r, 200) : 1000 + sw_below(&r, 100000);
        /* With faults, a forward could wait forever for a lost message:
         * every one gets a deadline then. */
        unsigned timeout =
            faulty || sw_below(&r, 4) == 0 ? 5 + sw_below(&r, 50) : 0;
        struct sd_op *op;

        if (i == crash_at && !w->node[crash_node].crashed)
            sd_crash(w, crash_node);
        if (i == restart_at && w->node[crash_node].crashed)
            sd_restart(w, crash_node);
        if (kind < 4)
            op = sd_forward(w, SD_ECHO, from, to, len, timeout);
        else if (kind < 5)
            op = sd_forward(w, SD_ONEWAY, from, to, 0, 0);
        else if (kind < 7)
            op = sd_forward(w, SD_BULK_PULL, from, to, len, timeout);
        else if (kind < 9)
            op = sd_forward(w, SD_BULK_PUSH, from, to, len, timeout);
        else if (kind < 11) {
            int push = (int) sw_below(&r, 2);
            unsigned deadline = faulty ? 20 + sw_below(&r, 50) : 0;

            if (from == to)
                to = (to + 1) % o.nodes;
            op = sd_transfer(w, from, to, len, push, deadline);
        } else
            op = sd_forward(w, SD_HOLD, from, to, len % 300,
                            5 + sw_below(&r, 50));
        if (sw_below(&r, 8) == 0)
            cancel_later[ncancel++] = op;
        for (unsigned k = sw_below(&r, 4); k > 0; k--)
            sd_run_for(w, 0 + sw_below(&r, 2));
        if (ncancel > 0 && sw_below(&r, 3) == 0) {
            struct sd_op *c = cancel_later[--ncancel];

            if (c->kind == SD_XFER)
                HG_Bulk_cancel(c->xfer_id);
            else
                HG_Cancel(c->handle);
        }
        if (w->nheld > 0 && sw_below(&r, 4) == 0)
            sd_release_held(w);
    }
    while (ncancel > 0) {
        struct sd_op *c = cancel_later[--ncancel];

        if (c->kind == SD_XFER)
            HG_Bulk_cancel(c->xfer_id);
        else
            HG_Cancel(c->handle);
    }
    /* Heal, then every node must reach every other one. */
    sd_release_held(w);
    assert_int_equal(na_sim_fault_clear(), NA_SUCCESS);
    for (int i = 0; i < w->n; i++)
        if (w->node[i].crashed)
            sd_restart(w, i);
    sd_drain(w, 300000);
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n; j++) {
            struct sd_op *op = sd_forward(w, SD_ECHO, i, j, 100, 0);

            sd_wait(w, op, 10000);
            if (op->ret != HG_SUCCESS)
                fail_msg("after healing, n%d -> n%d: %s", i, j,
                         HG_Error_to_string(op->ret));
        }
    /* Faults are counted before the heal clears them. */
    sd_close(w);
    sw_faults += w->final_faults;
    for (int i = 0; i < w->nops; i++)
        sw_outcomes[(unsigned) w->ops[i].ret & 63]++;
    *nops_out = nops;
    {
        uint64_t h = w->final_hash;

        free(w);
        return h;
    }
}

static void
sw_seeds(uint64_t *first, uint64_t *count)
{
    const char *env = getenv("QS_SWARM_SEEDS");
    const char *one = getenv(NA_SIM_SEED_ENV);

    *first = 1;
    *count = 250;
    if (one != NULL && *one != '\0') {
        /* Replaying one seed: the world takes it from the environment
         * too, which is the same number. */
        *first = strtoull(one, NULL, 0);
        *count = 1;
        return;
    }
    if (env != NULL) {
        unsigned long long f, c;

        if (sscanf(env, "%llu:%llu", &f, &c) == 2) {
            *first = f;
            *count = c;
        } else
            fprintf(stderr, "QS_SWARM_SEEDS=%s: want <first>:<count>\n", env);
    }
}

static void
test_swarm(void **state)
{
    uint64_t first, count, total_ops = 0, hash;
    const char *env = getenv("QS_SWARM_HASHES");
    int show = env != NULL && *env != '\0' && *env != '0';

    (void) state;
    sw_seeds(&first, &count);
    for (uint64_t s = first; s < first + count; s++) {
        int nops = 0;

        sw_seed_in_flight = s;
        sw_running = 1;
        hash = sw_run(s, &nops);
        sw_running = 0;
        if (show)
            printf("seed %llu: trace hash 0x%016llx\n", (unsigned long long) s,
                   (unsigned long long) hash);
        total_ops += (uint64_t) nops;
    }
    printf("[   INFO   ] swarm: %llu seeds from %llu, %llu operations\n",
           (unsigned long long) count, (unsigned long long) first,
           (unsigned long long) total_ops);
    printf("[   INFO   ] faults injected: %llu; outcomes:",
           (unsigned long long) sw_faults);
    for (int i = 0; i < 64; i++)
        if (sw_outcomes[i] > 0)
            printf(" %s=%llu", HG_Error_to_string((hg_return_t) i),
                   (unsigned long long) sw_outcomes[i]);
    printf("\n");
}

/* The same seed twice gives the same trace; seeds whose faults draw from
 * the PRNG give different traces. */
static void
test_determinism(void **state)
{
    uint64_t seeds[] = {7, 8, 9, 10, 11, 12};
    uint64_t h[6];
    int n;

    (void) state;
    for (int i = 0; i < 6; i++) {
        uint64_t again;

        sw_seed_in_flight = seeds[i];
        sw_running = 1;
        h[i] = sw_run(seeds[i], &n);
        again = sw_run(seeds[i], &n);
        sw_running = 0;
        if (again != h[i])
            fail_msg("seed %llu: trace hash 0x%016llx then 0x%016llx",
                     (unsigned long long) seeds[i], (unsigned long long) h[i],
                     (unsigned long long) again);
        printf("[   INFO   ] seed %llu: trace hash 0x%016llx\n",
               (unsigned long long) seeds[i], (unsigned long long) h[i]);
    }
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            assert_true(h[i] != h[j]);
}

/* The same world and workload under two seeds: only the fault draws
 * differ, so the hashes differ because the PRNG now shapes the run. */
static void
test_seed_changes_faults(void **state)
{
    struct sd_world *w = malloc(sizeof(*w));
    struct sd_opts o = {.nodes = 2};
    uint64_t hash[2];

    (void) state;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(na_sim_set_seed(1000 + (uint64_t) k), NA_SUCCESS);
        sd_open(w, &o);
        sd_faults("world:jitter=pareto:3us,loss=0.2");
        for (int i = 0; i < 20; i++)
            sd_forward(w, SD_ECHO, 0, 1, 64, 10);
        sd_close(w);
        hash[k] = w->final_hash;
    }
    assert_true(hash[0] != hash[1]);
    free(w);
}

/* Trace hashes recorded in the repository (swarm_hashes.txt, "<seed>
 * 0x<hash>" per line): every compiler and build type must replay a seed
 * to the same trace. After a deliberate change of the fabric's or the
 * RPC layer's behaviour, regenerate the file with
 * QS_SWARM_HASHES=1 QS_SWARM_SEEDS=1:8 test_sim_swarm swarm. A line
 * "profiles <n> 0x<hash>" checks the fault profiles drawn for seeds 0 to
 * n - 1 (sw_profiles_hash). */
static const char *sw_hash_file;

/* FNV-1a over the profiles na_sim_fault_draw() gives seeds 0 to n - 1 for
 * three nodes (what qs-sweep's swarm runs): a line "profiles <n> 0x<hash>"
 * of the file. */
static uint64_t
sw_profiles_hash(unsigned long long n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    char buf[1024];

    for (unsigned long long seed = 0; seed < n; seed++) {
        assert_int_equal(na_sim_fault_draw(seed, 3, buf, sizeof(buf)),
                         NA_SUCCESS);
        for (const char *p = buf;; p++) {
            h = (h ^ (unsigned char) *p) * 0x100000001b3ULL;
            if (*p == '\0')
                break;
        }
    }
    return h;
}

static void
test_recorded(void **state)
{
    FILE *f;
    char line[128];
    int checked = 0, wrong = 0;
    const char *prefetch = getenv(NA_SIM_PREFETCH_ENV);
    unsigned long long prefetched = 0;

    (void) state;
    if (sw_hash_file == NULL)
        fail_msg("usage: %s recorded <hash file>", sw_prog);
    f = fopen(sw_hash_file, "r");
    if (f == NULL)
        fail_msg("cannot open %s", sw_hash_file);
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long seed, want;
        uint64_t got;
        int n;

        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "profiles %llu %llx", &seed, &want) == 2) {
            got = sw_profiles_hash(seed);
            checked++;
            if (got != want) {
                wrong++;
                printf("[  ERROR   ] the fault profiles drawn for seeds 0 to "
                       "%llu hash to 0x%016llx, recorded 0x%016llx\n",
                       seed - 1, (unsigned long long) got, want);
            }
            continue;
        }
        if (sscanf(line, "%llu %llx", &seed, &want) != 2) {
            fclose(f);
            fail_msg("%s: bad line '%s'", sw_hash_file, line);
        }
        sw_seed_in_flight = seed;
        sw_running = 1;
        got = sw_run(seed, &n);
        sw_running = 0;
        prefetched += sd_last_prefetched;
        checked++;
        if (got != want) {
            wrong++;
            printf("[  ERROR   ] seed %llu: trace hash 0x%016llx, recorded "
                   "0x%016llx\n",
                   seed, (unsigned long long) got, want);
        }
    }
    fclose(f);
    printf("[   INFO   ] %d recorded seeds checked, %d differ, %llu events "
           "prefetched\n",
           checked, wrong, prefetched);
    assert_true(checked > 0);
    /* Forced on (QS_SIM_PREFETCH=1), prefetching must have run, and
     * changed no hash. */
    if (prefetch != NULL && strcmp(prefetch, "1") == 0 && prefetched == 0)
        fail_msg("%s=1, yet no event ran with prefetching",
                 NA_SIM_PREFETCH_ENV);
    if (wrong > 0)
        fail_msg("%d recorded hash(es) differ: a draw happens in a "
                 "different order, or the behaviour changed (then "
                 "regenerate %s)",
                 wrong, sw_hash_file);
}

static int
sw_teardown(void **state)
{
    (void) state;
    if (sw_running) {
        printf("[  REPLAY  ] QS_SIM_SEED=%llu %s swarm\n",
               (unsigned long long) sw_seed_in_flight, sw_prog);
        sw_running = 0;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_teardown(test_swarm, sw_teardown),
        cmocka_unit_test_teardown(test_determinism, sw_teardown),
        cmocka_unit_test(test_seed_changes_faults),
        cmocka_unit_test_teardown(test_recorded, sw_teardown),
    };
    struct CMUnitTest pick[4];
    size_t n = 0;

    sw_prog = argv[0];
    if (argc > 2)
        sw_hash_file = argv[2];
    for (size_t i = 0; i < 4; i++) {
        /* The recorded hashes need their file: run on request only. */
        if (argc < 2 && strcmp(all[i].name, "test_recorded") == 0)
            continue;
        if (argc < 2 || strcmp(argv[1], all[i].name + 5) == 0)
            pick[n++] = all[i];
    }
    if (n == 0) {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return _cmocka_run_group_tests("sim_swarm", pick, n, NULL, NULL);
}
