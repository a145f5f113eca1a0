/*
 * Random fault profiles for seed sweeps of programs we know nothing about
 * (qs-sweep --swarm). The draw is a pure function of the seed: the same
 * seed gives the same profile on every machine, so a failing seed's
 * profile is part of its replay line, and the profile always passes
 * na_sim_fault_validate().
 *
 * It mirrors the sweep in tests/sim/test_swarm.c, minus what a program
 * cannot be expected to survive without knowing it: bit corruption
 * (only payload checksums catch it) and a crash that is never followed
 * by a restart.
 */
#include "na_sim_internal.h"

#include <stdarg.h>
#include <stdio.h>

/* splitmix64, private to the draw: separate from any world's PRNG. */
static uint64_t
na_sim_draw_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned
na_sim_draw_below(uint64_t *s, unsigned n)
{
    return (unsigned) (na_sim_draw_next(s) % n);
}

struct na_sim_draw_buf {
    char *buf;
    size_t size, len;
    bool overflow;
};

static void
na_sim_draw_put(struct na_sim_draw_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(b->buf + b->len, b->len < b->size ? b->size - b->len : 0, fmt,
                  ap);
    va_end(ap);
    if (n < 0 || b->len + (size_t) n >= b->size) {
        b->overflow = true;
        b->len = b->size;
        return;
    }
    b->len += (size_t) n;
}

na_return_t
na_sim_fault_draw(uint64_t seed, unsigned int nodes, char *buf, size_t size)
{
    static const char *const rates[] = {"0.001", "0.01", "0.05", "0.2"};
    static const char *const probs[] = {
        "loss",    "dup",    "trunc", "send_err", "rma_err",
        "partial", "revoke", "again", "rnr",      "reorder"};
    static const unsigned backlogs[] = {1, 4, 16, 256};
    struct na_sim_draw_buf b = {.buf = buf, .size = size};
    uint64_t r = seed ^ 0x5153535745455021ULL;
    unsigned backlog, full_fails;

    if (buf == NULL || size == 0 || nodes == 0 || nodes > 1000)
        return NA_INVALID_ARG;
    buf[0] = '\0';
    /* A quarter of the seeds run on a perfect fabric: a sweep must also
     * show that the program passes when nothing goes wrong. */
    if (na_sim_draw_below(&r, 4) == 0)
        return NA_SUCCESS;
    /* One draw per statement: C leaves the order of the arguments'
     * evaluation open, so two draws in one call would give a gcc and a
     * clang build different profiles for one seed. (The order kept is the
     * one gcc used, so recorded profiles stay valid.) */
    full_fails = na_sim_draw_below(&r, 2);
    backlog = backlogs[na_sim_draw_below(&r, 4)];
    na_sim_draw_put(&b, "world:backlog=%u,when_full=%s", backlog,
                    full_fails ? "fail" : "block");
    for (size_t i = 0; i < sizeof(probs) / sizeof(probs[0]); i++)
        if (na_sim_draw_below(&r, 3) == 0)
            na_sim_draw_put(&b, ",%s=%s", probs[i],
                            rates[na_sim_draw_below(&r, 4)]);
    switch (na_sim_draw_below(&r, 4)) {
    case 0:
        na_sim_draw_put(&b, ",jitter=pareto:%uus",
                        1 + na_sim_draw_below(&r, 5));
        break;
    case 1:
        na_sim_draw_put(&b, ",jitter=lognormal:%uus:0.8",
                        1 + na_sim_draw_below(&r, 5));
        break;
    case 2:
        na_sim_draw_put(&b, ",jitter=uniform:%uus",
                        1 + na_sim_draw_below(&r, 20));
        break;
    default:
        break;
    }
    /* Nodes are named as "sim" names them: node0, node1, ... in creation
     * order. A rule for a node the program never makes does nothing. */
    if (nodes >= 2 && na_sim_draw_below(&r, 3) == 0) {
        unsigned a = na_sim_draw_below(&r, nodes),
                 c = na_sim_draw_below(&r, nodes),
                 t0 = na_sim_draw_below(&r, 5);

        if (a != c) {
            unsigned t1 = t0 + 1 + na_sim_draw_below(&r, 5);
            bool oneway = na_sim_draw_below(&r, 2) != 0;

            na_sim_draw_put(&b, ";partition:node%u%snode%u@%ums-%ums", a,
                            oneway ? ">" : "<>", c, t0, t1);
        }
    }
    if (na_sim_draw_below(&r, 4) == 0) {
        unsigned n = na_sim_draw_below(&r, nodes),
                 t0 = na_sim_draw_below(&r, 5000);

        na_sim_draw_put(&b, ";node:node%u:crash@%uus,restart@%uus", n, t0,
                        t0 + 1 + na_sim_draw_below(&r, 5000));
    }
    if (b.overflow) {
        buf[0] = '\0';
        return NA_OVERFLOW;
    }
    return NA_SUCCESS;
}
