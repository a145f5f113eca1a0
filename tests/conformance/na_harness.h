/*
 * The NA conformance harness: one suite of NA-level cases, any plugin.
 *
 * A case gets a `struct na_env`: a listening "server" class with contexts
 * of id 0 and 1 and a "client" class with one context, both built from the
 * info string in QS_TEST_INFO (default "sim"). The client knows the server
 * through the string the server prints for itself (NA_Addr_to_string, then
 * NA_Addr_lookup); the server knows the client as the source of a first
 * unexpected message, the way a server learns its clients. The bodies never
 * name a plugin: what differs between plugins is asked of the plugin (its
 * size limits, whether it offers multi-segment handles), and a case that
 * needs what a plugin does not offer skips and says why.
 *
 * Everything is driven from the test's thread (na_drive), on the NA clock
 * of the client class: virtual time on the simulated fabric, so a run
 * there is deterministic for its seed, which is printed with the line that
 * replays a failure.
 */
#ifndef NA_CT_HARNESS_H
#define NA_CT_HARNESS_H

#include "conformance/na_peer.h"
#include "conformance/suite.h"

#include "na.h"

#include <stdbool.h>

/* Budget of one wait, in milliseconds on the NA clock. Generous: a wait
 * that needs it has hung. */
#define NA_CT_WAIT_MS 30000u

#define NA_CT_MAX_CONTEXTS 8

struct na_env {
    const char *info; /* QS_TEST_INFO                                 */
    int is_sim;       /* the simulated fabric                         */
    na_class_t *srv;
    na_context_t *sctx, *sctx1; /* server context ids 0 and 1       */
    na_class_t *cli;
    na_context_t *cctx;
    na_addr_t srv_addr; /* the server, as the client looked it up     */
    na_addr_t cli_addr; /* the client, as the server learnt it        */
    /* Every context the driver progresses, and its class. */
    na_class_t *cls[NA_CT_MAX_CONTEXTS];
    na_context_t *ctx[NA_CT_MAX_CONTEXTS];
    unsigned nctx;
};

/* cmocka setup / teardown, and the entry of a case. */
int na_env_setup(void **state);
int na_env_teardown(void **state);
#define NA_TEST(f)                                                             \
    cmocka_unit_test_setup_teardown(f, na_env_setup, na_env_teardown)

/* The last step of every case, the leak check: free both addresses,
 * destroy every context and finalize both classes, failing unless each
 * returns NA_SUCCESS (NA_BUSY means something was left). On the simulated
 * fabric it also checks that no world is left. A case that fails before
 * this leaves its classes abandoned: never progressed again. */
void na_env_finish(struct na_env *env);

/* Progress every context (poll, then trigger) until *calls >= want; fail
 * the case when NA_CT_WAIT_MS pass first on the NA clock. */
void na_drive(struct na_env *env, const int *calls, int want);
/* The same, returning -1 instead of failing when the budget runs out. */
int na_try_drive(struct na_env *env, const int *calls, int want,
                 unsigned max_ms);
/* Progress for `ms` more on the NA clock, so a late or duplicate
 * completion would show up. */
void na_settle(struct na_env *env, unsigned ms);

/* Add or remove a context the driver progresses (the case owns it). */
void na_env_add_context(struct na_env *env, na_class_t *cls, na_context_t *ctx);
void na_env_remove_context(struct na_env *env, na_context_t *ctx);

/* A new class of this run: "sim://<role>-<n>" on the simulated fabric,
 * the info string itself otherwise. */
na_class_t *na_env_class(const struct na_env *env, const char *role,
                         bool listen, const struct na_init_info *init);

/* The address string of a listening class that has since been finalized:
 * a peer that is gone. */
void na_env_gone_address(const struct na_env *env, char *buf, size_t size);

/* A handle for len bytes at buf, created and registered. */
na_mem_handle_t na_registered(na_class_t *cls, void *buf, size_t len,
                              unsigned long flags);
/* Serialize `h` on `owner` (checking the size probe and NA_OVERFLOW one
 * byte short) and deserialize it on `to`. */
na_mem_handle_t na_ship_handle(na_class_t *owner, na_mem_handle_t h,
                               na_class_t *to);

/* Fail with both codes spelled out. */
#define assert_na_ret(got, want)                                               \
    do {                                                                       \
        na_return_t na_got_ = (got), na_want_ = (want);                        \
        if (na_got_ != na_want_)                                               \
            fail_msg("%s: got %s (%d), want %s (%d)", #got,                    \
                     NA_Error_to_string(na_got_), (int) na_got_,               \
                     NA_Error_to_string(na_want_), (int) na_want_);            \
    } while (0)
#define assert_na_ok(expr) assert_na_ret((expr), NA_SUCCESS)

/* A program's main: prints the run's parameters, runs the group, and on
 * failure prints the line that replays it. */
int na_main(int argc, char **argv, const char *group,
            const struct CMUnitTest *tests, size_t count);

#endif /* NA_CT_HARNESS_H */
