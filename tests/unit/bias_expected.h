/*
 * Whether a one-thread program can hold the hot-path bias here, decided
 * the way lib/util/qs_bias.c decides it: not under ThreadSanitizer or
 * valgrind, with the kernel's private expedited membarrier, and not
 * turned off with QS_HOT_BIAS=0. For the tests that check the bias
 * through struct hg_stats (test_hg_bias, test_busy_server).
 */
#ifndef QS_TEST_BIAS_EXPECTED_H
#define QS_TEST_BIAS_EXPECTED_H

#include <linux/membarrier.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline bool
bias_expected(void)
{
    const char *env = getenv("QS_HOT_BIAS");
    const char *preload = getenv("LD_PRELOAD"); /* valgrind's */
    long cmds;

#if defined(__SANITIZE_THREAD__)
    return false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return false;
#endif
#endif
    cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
           !(env != NULL && strcmp(env, "0") == 0) &&
           !(preload != NULL && strstr(preload, "vgpreload") != NULL);
}

#endif /* QS_TEST_BIAS_EXPECTED_H */
