/*
 * Handler fuzzing internals: qs_fuzz.c builds and tears down the world,
 * starts forwards and drives progress; qs_fuzz_seq.c interprets the
 * structured mode's bytes.
 */
#ifndef QS_FUZZ_INTERNAL_H
#define QS_FUZZ_INTERNAL_H

#include "qs_fuzz.h"

#include <stdbool.h>

#define QS_FUZZ_MAX_RPCS 32
#define QS_FUZZ_MAX_CALLS 32

/* The input of one forward, as the client's raw proc encodes it. */
struct qs_fuzz_bytes {
    const uint8_t *data;
    size_t size;
    hg_bulk_t bulk; /* put in place of each QS_FUZZ_BULK_MARKER */
};

struct qs_fuzz_call {
    hg_handle_t handle;
    margo_request req; /* Margo services */
    int callbacks;     /* Mercury: times the forward callback ran */
    bool done;         /* completed, or refused at post */
    hg_return_t ret;
};

struct qs_fuzz_env {
    const struct qs_fuzz_service *svc;
    /* A Mercury service's server side. */
    hg_class_t *srv_cls;
    hg_context_t *srv_ctx;
    /* A Margo service's two instances. */
    margo_instance_id srv_mid, cli_mid;
    /* The client: its own class for Mercury, the instance's for Margo. */
    hg_class_t *cli_cls;
    hg_context_t *cli_ctx;
    hg_addr_t srv_addr;
    hg_id_t ids[QS_FUZZ_MAX_RPCS];
    size_t nids;
    uint8_t *region;
    hg_bulk_t bulk;
    struct qs_fuzz_call calls[QS_FUZZ_MAX_CALLS];
    size_t ncalls;
};

/* Report a broken invariant and abort: the fuzzer keeps the input. */
void qs_fuzz_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void qs_fuzz_setup(struct qs_fuzz_env *env, const struct qs_fuzz_service *svc,
                   uint64_t seed);
void qs_fuzz_teardown(struct qs_fuzz_env *env);
/* Start a forward of rpc index `rpc` with `in`; deadline in ms. */
struct qs_fuzz_call *qs_fuzz_forward(struct qs_fuzz_env *env, size_t rpc,
                                     const uint8_t *data, size_t size,
                                     unsigned int timeout_ms);
/* Let virtual time pass, at most `ms`, or until every call is done. */
void qs_fuzz_progress(struct qs_fuzz_env *env, unsigned int ms);
/* Wait for every call, within a budget of virtual time. */
void qs_fuzz_wait_all(struct qs_fuzz_env *env);
void qs_fuzz_relookup(struct qs_fuzz_env *env);

#endif
