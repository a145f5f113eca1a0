/* The bias of util/qs_bias.h: granted once, revoked once. */
#include "util/qs_bias.h"
#include "util/qs_tools.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/qs_log.h"

#if defined(__SANITIZE_THREAD__)
#define QS_BIAS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QS_BIAS_TSAN 1
#endif
#endif

atomic_uint qs_bias_state_g;
_Thread_local unsigned int qs_hot_skipped_tls QS_LOCK_TLS_MODEL;
atomic_uint qs_bias_depth_g;
_Thread_local bool qs_bias_owner_tls QS_LOCK_TLS_MODEL;
_Thread_local bool qs_bias_lender_tls QS_LOCK_TLS_MODEL;

/* The lock that makes revokers and lenders one at a time, and the
 * threads the bias is lent to (watchdogs of several classes). */
static pthread_mutex_t qs_bias_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int qs_bias_lenders;

static int
qs_membarrier(int cmd)
{
#ifdef SYS_membarrier
    return (int) syscall(SYS_membarrier, cmd, 0, 0);
#else
    (void) cmd;
    return -1;
#endif
}

bool
qs_bias_grant(void)
{
#ifdef QS_BIAS_TSAN
    return false;
#else
    const char *env = getenv("QS_HOT_BIAS");

    if (!QS_SINGLE_THREADED() ||
        atomic_load_explicit(&qs_bias_state_g, memory_order_relaxed) !=
            QS_BIAS_NONE ||
        qs_hot_skipping())
        return false;
    if (env != NULL && strcmp(env, "0") == 0)
        return false;
    /* A race detector around the library (a ThreadSanitizer program, or
     * valgrind's helgrind and DRD, which preload vgpreload_*.so) cannot
     * see the asymmetric barrier either: it would report the owner's
     * plain accesses against the locked ones after a revocation. */
    if (qs_checked_program(QS_TOOL_TSAN | QS_TOOL_VALGRIND)) {
        qs_log("util", QS_LOG_DEBUG,
               "no hot-path bias: a race detector watches the program");
        return false;
    }
    if (qs_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
        qs_log("util", QS_LOG_DEBUG,
               "no private expedited membarrier: the hot path takes its "
               "locks once the process has threads");
        return false;
    }
    qs_bias_owner_tls = true;
    /* No thread but this one yet: pthread_create() orders the rest. */
    atomic_store_explicit(&qs_bias_state_g, QS_BIAS_HELD, memory_order_relaxed);
    return true;
#endif
}

/* Take a held bias from its owner: mark it revoking, make every running
 * thread pass a barrier, and wait until the owner is outside its skipped
 * sections (qs_bias_lock held). */
static void
qs_bias_take(void)
{
    atomic_store_explicit(&qs_bias_state_g, QS_BIAS_REVOKING,
                          memory_order_seq_cst);
    /* Registered in qs_bias_grant(), so this cannot fail short of a
     * kernel that lost the command: then no order holds. */
    if (qs_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        fprintf(stderr, "quicksilver: membarrier() failed while revoking "
                        "the hot path's bias; stopping\n");
        abort();
    }
    /* The owner's sections are short and never wait on this thread. */
    while (atomic_load_explicit(&qs_bias_depth_g, memory_order_acquire) != 0)
        sched_yield();
}

void
qs_bias_revoke(void)
{
    unsigned int s;

    pthread_mutex_lock(&qs_bias_lock);
    s = atomic_load_explicit(&qs_bias_state_g, memory_order_acquire);
    /* A lent bias: its owner takes the locks already. */
    if (s == QS_BIAS_HELD)
        qs_bias_take();
    if (s == QS_BIAS_HELD || s == QS_BIAS_LENT)
        atomic_store_explicit(&qs_bias_state_g, QS_BIAS_REVOKED,
                              memory_order_release);
    pthread_mutex_unlock(&qs_bias_lock);
}

bool
qs_bias_lend(void)
{
    unsigned int s;
    bool lent = false;

    pthread_mutex_lock(&qs_bias_lock);
    s = atomic_load_explicit(&qs_bias_state_g, memory_order_acquire);
    if (s == QS_BIAS_HELD) {
        qs_bias_take();
        atomic_store_explicit(&qs_bias_state_g, QS_BIAS_LENT,
                              memory_order_release);
    }
    if (s == QS_BIAS_HELD || s == QS_BIAS_LENT) {
        qs_bias_lenders++;
        qs_bias_lender_tls = true;
        lent = true;
    }
    pthread_mutex_unlock(&qs_bias_lock);
    return lent;
}

void
qs_bias_return(void)
{
    pthread_mutex_lock(&qs_bias_lock);
    qs_bias_lender_tls = false;
    /* Release: the owner's next skipped section sees what the drive did. */
    if (--qs_bias_lenders == 0 &&
        atomic_load_explicit(&qs_bias_state_g, memory_order_relaxed) ==
            QS_BIAS_LENT)
        atomic_store_explicit(&qs_bias_state_g, QS_BIAS_HELD,
                              memory_order_release);
    pthread_mutex_unlock(&qs_bias_lock);
}

enum qs_bias_state
qs_bias_state(void)
{
    return (enum qs_bias_state) atomic_load_explicit(&qs_bias_state_g,
                                                     memory_order_acquire);
}
