/*
 * What the two files of the verbs plugin's test share: test_verbs.c (the
 * cases that need no device, the helpers below and main) and
 * test_verbs_live.c (the cases that run real verbs traffic between two
 * classes of this process). Both build into the one test_verbs program.
 */
#ifndef TEST_VERBS_H
#define TEST_VERBS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "na/na_plugin.h"
#include "na_verbs_wire.h"

#include <stdbool.h>

/* The info string: QS_VERBS_INFO, or "verbs://rxe0/10.11.0.1:0". */
const char *test_info(void);

/* An RDMA device exists when the kernel lists one; this is what decides
 * between "must fail with NA_NODEV" and "must work". */
bool have_rdma_device(void);

/* Monotonic real time in milliseconds. */
uint64_t now_ms(void);

#define SKIP_WITHOUT_DEVICE()                                                  \
    do {                                                                       \
        if (!have_rdma_device()) {                                             \
            print_message("skipped: no RDMA device on this machine "           \
                          "(/sys/class/infiniband is empty); the Soft-RoCE "   \
                          "VM test (ctest -R verbs_softroce_vm) runs this "    \
                          "case\n");                                           \
            skip();                                                            \
        }                                                                      \
    } while (0)

/* The cases of test_verbs_live.c; each skips without a device. */
void test_addr_roundtrip_live(void **state);
void test_peer_gone(void **state);
void test_peer_killed(void **state);

#endif /* TEST_VERBS_H */
