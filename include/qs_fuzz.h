/*
 * Quicksilver handler fuzzing: feed arbitrary bytes to a service's own
 * RPC handlers through the path a real request takes, on the simulated
 * fabric.
 *
 * A libFuzzer target for a Margo service is a few lines:
 *
 *     #include <qs_fuzz.h>
 *     #include "kv_service.h"
 *
 *     static const char *const rpcs[] = {"kv_put", "kv_get", NULL};
 *     static const struct qs_fuzz_service svc = {
 *         .margo_register = kv_fuzz_register, .rpc_names = rpcs};
 *
 *     int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *     {
 *         return qs_fuzz_rpc(&svc, "kv_put", data, size);
 *     }
 *
 * Every input runs in a fresh simulated world with two nodes: the service
 * (sim://qs-fuzz-server, its RPCs registered by the callback) and a client
 * (sim://qs-fuzz-client) that registers the same RPC names with procs that
 * encode the fuzzer's bytes verbatim as the serialized input. So the
 * service's HG layer checks the request header, the bytes arrive eagerly
 * or, past the eager size, through the overflow bulk path, and the
 * service's own proc decodes them in HG_Get_input()/margo_get_input();
 * its response is received and decoded by the client. Wherever the bytes
 * hold QS_FUZZ_BULK_MARKER, the client encodes instead a real bulk
 * descriptor (hg_proc_hg_bulk_t) of a QS_FUZZ_BULK_SIZE byte read-write
 * region it exposes, so handlers that pull or push find memory to move.
 *
 * After the input the harness checks, and abort()s with a message on
 * stderr when one fails (libFuzzer then keeps the input as a crash):
 *  - every forward completed exactly once (or was refused at post);
 *  - every call ended within its budget (virtual time: a hang is a
 *    handler that never responds to a timed-out request);
 *  - both sides tear down cleanly: HG_Context_destroy() and
 *    HG_Finalize() succeed (margo_finalize() for Margo services), which
 *    fails when the service kept a handle, bulk handle or address;
 *  - no simulated world is left afterwards.
 * Crashes, sanitizer reports and leaks inside the handlers are reported by
 * the fuzzer's own runtime.
 *
 * A handler runs in the fuzzing process, so a service with global state
 * should reset it in `reset` for inputs to stay independent.
 * docs/testing-your-service.md shows how to build and run a target with
 * clang, and how to replay its corpus in an ordinary (gcc) build.
 */
#ifndef QS_FUZZ_H
#define QS_FUZZ_H

#include "qs_export.h"
#include <stddef.h>
#include <stdint.h>

#include "margo.h"
#include "mercury.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of input replaced by the client's exposed bulk descriptor. */
#define QS_FUZZ_BULK_MARKER "QSBULK"
#define QS_FUZZ_BULK_MARKER_LEN 6
/* Size of the client region behind that descriptor. */
#define QS_FUZZ_BULK_SIZE 65536
/* Node names of the two sides, for fault profiles (QS_SIM_FAULTS). */
#define QS_FUZZ_SERVER "qs-fuzz-server"
#define QS_FUZZ_CLIENT "qs-fuzz-client"

/* The service under test. Set exactly one of hg_register and
 * margo_register. */
struct qs_fuzz_service {
    /* A Mercury service: register its RPCs (HG_Register_name(),
     * MERCURY_REGISTER()) on the server class. Return HG_SUCCESS. */
    hg_return_t (*hg_register)(hg_class_t *hg_class, hg_context_t *context,
                               void *arg);
    /* A Margo service: register its RPCs (MARGO_REGISTER()) on the server
     * instance, created with no progress thread and rpc_thread_count 0 so
     * that the run is deterministic. Return 0. */
    int (*margo_register)(margo_instance_id mid, void *arg);
    /* Optional: called after each input's teardown, to drop the
     * service's global state. */
    void (*reset)(void *arg);
    void *arg;
    /* The RPC names the fuzzer may call, NULL-terminated (at most 32). */
    const char *const *rpc_names;
};

/*
 * Send data[0..size) as the serialized input of `rpc_name` (one of
 * svc->rpc_names), wait for its response (or its 1 s virtual deadline),
 * tear down, check. Returns 0, as libFuzzer expects; aborts on a broken
 * invariant or bad arguments.
 */
QS_EXPORT int qs_fuzz_rpc(const struct qs_fuzz_service *svc,
                          const char *rpc_name, const uint8_t *data,
                          size_t size);

/*
 * Structured mode: the bytes are a program against the service. The
 * first two choose the simulator's seed; then each step is one byte of
 * opcode and its operands:
 *   forward   an RPC (chosen by a byte among rpc_names) with the next
 *             bytes as its input (length from one or two bytes) and a
 *             deadline of 1, 5, 20 or 200 ms
 *   cancel    an earlier forward (HG_Cancel(); after completion a no-op)
 *   progress  let up to 15 ms of virtual time pass
 *   fault     add a fault: loss, duplication, truncation, post-time
 *             NA_AGAIN, jitter, or a partition between client and server
 *   heal      drop every fault
 *   restart   crash the server node and restart it at once; the client
 *             looks its address up again
 * At most 32 forwards per input. At the end faults are healed, every
 * forward is waited for, and the checks of qs_fuzz_rpc() apply.
 * Returns 0; aborts on a broken invariant.
 */
QS_EXPORT int qs_fuzz_sequence(const struct qs_fuzz_service *svc,
                               const uint8_t *data, size_t size);

/*
 * A main() for builds without libFuzzer (gcc, or clang without
 * -fsanitize=fuzzer): `return qs_fuzz_driver_main(argc, argv,
 * LLVMFuzzerTestOneInput);`. Arguments: files and directories of inputs,
 * each replayed once; -runs=N then runs N inputs mutated from them
 * (from the empty input when none was given); -seed=S picks the
 * mutations. An input that crashes the target is saved as
 * crash-<hash> and the line replaying it is printed. Returns 0 when every
 * input ran, 2 on a bad argument.
 */
QS_EXPORT int qs_fuzz_driver_main(int argc, char **argv,
                                  int (*target)(const uint8_t *data,
                                                size_t size));

#ifdef __cplusplus
}
#endif

#endif
