/*
 * The structured mode of handler fuzzing (qs_fuzz_sequence()): the input
 * is a little program of forwards, cancels, waits, faults and restarts
 * against the service, interpreted one opcode byte at a time.
 */
#include "fuzz/qs_fuzz_internal.h"

#include "na_sim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct qs_fuzz_cursor {
    const uint8_t *p, *end;
};

static bool
qs_fuzz_more(const struct qs_fuzz_cursor *c)
{
    return c->p < c->end;
}

/* The next byte, 0 once the input is exhausted. */
static unsigned
qs_fuzz_byte(struct qs_fuzz_cursor *c)
{
    return c->p < c->end ? *c->p++ : 0;
}

static void
qs_fuzz_seq_forward(struct qs_fuzz_env *env, struct qs_fuzz_cursor *c)
{
    static const unsigned timeouts[] = {1, 5, 20, 200};
    size_t rpc = qs_fuzz_byte(c) % env->nids, len = qs_fuzz_byte(c);
    unsigned timeout = timeouts[qs_fuzz_byte(c) % 4];

    /* Lengths over 127 take a second byte: up to 32 KiB, enough to cross
     * the eager size into the overflow path. */
    if (len >= 128)
        len = (len - 128) * 256 + qs_fuzz_byte(c);
    if (len > (size_t) (c->end - c->p))
        len = (size_t) (c->end - c->p);
    qs_fuzz_forward(env, rpc, c->p, len, timeout);
    c->p += len;
}

static void
qs_fuzz_seq_fault(struct qs_fuzz_cursor *c)
{
    static const char *const faults[] = {
        "world:loss=0.2",
        "world:dup=0.2",
        "world:trunc=0.2",
        "world:again=0.2",
        "world:jitter=pareto:20us",
        "partition:" QS_FUZZ_CLIENT "<>" QS_FUZZ_SERVER,
        "partition:" QS_FUZZ_SERVER ">" QS_FUZZ_CLIENT,
        "world:rma_err=0.3,partial=0.3",
    };
    const char *spec = faults[qs_fuzz_byte(c) % 8];
    char err[128];

    if (na_sim_fault_add(spec, err, sizeof(err)) != NA_SUCCESS)
        qs_fuzz_fail("fault \"%s\": %s", spec, err);
}

static void
qs_fuzz_seq_restart(struct qs_fuzz_env *env)
{
    if (na_sim_node_crash(QS_FUZZ_SERVER) != NA_SUCCESS ||
        na_sim_node_restart(QS_FUZZ_SERVER) != NA_SUCCESS)
        qs_fuzz_fail("cannot crash and restart the server node");
    qs_fuzz_relookup(env);
}

int
qs_fuzz_sequence(const struct qs_fuzz_service *svc, const uint8_t *data,
                 size_t size)
{
    struct qs_fuzz_env *env = calloc(1, sizeof(*env));
    /* No offset is applied to a null pointer (undefined even for 0). */
    struct qs_fuzz_cursor c = {data, data != NULL ? data + size : data};
    uint64_t seed;

    if (env == NULL)
        qs_fuzz_fail("out of memory");
    if (data == NULL && size > 0)
        qs_fuzz_fail("qs_fuzz_sequence: NULL data");
    seed = qs_fuzz_byte(&c);
    seed = seed << 8 | qs_fuzz_byte(&c);
    qs_fuzz_setup(env, svc, seed + 1);
    while (qs_fuzz_more(&c) && env->ncalls < QS_FUZZ_MAX_CALLS) {
        switch (qs_fuzz_byte(&c) % 8) {
        case 0:
        case 1:
        case 2:
            qs_fuzz_seq_forward(env, &c);
            break;
        case 3:
            if (env->ncalls > 0) {
                struct qs_fuzz_call *call =
                    &env->calls[qs_fuzz_byte(&c) % env->ncalls];

                if (call->handle != HG_HANDLE_NULL &&
                    HG_Cancel(call->handle) != HG_SUCCESS)
                    qs_fuzz_fail("HG_Cancel failed");
            }
            break;
        case 4:
            qs_fuzz_progress(env, qs_fuzz_byte(&c) % 16);
            break;
        case 5:
            qs_fuzz_seq_fault(&c);
            break;
        case 6:
            if (na_sim_fault_clear() != NA_SUCCESS)
                qs_fuzz_fail("na_sim_fault_clear failed");
            break;
        default:
            qs_fuzz_seq_restart(env);
            break;
        }
    }
    if (na_sim_fault_clear() != NA_SUCCESS)
        qs_fuzz_fail("na_sim_fault_clear failed");
    qs_fuzz_wait_all(env);
    qs_fuzz_teardown(env);
    free(env);
    return 0;
}
