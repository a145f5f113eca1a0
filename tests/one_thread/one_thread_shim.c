/*
 * Preloaded into the ctest cases listed in tests/one_thread.txt (builds
 * without a sanitizer only; cmake/QsOneThread.cmake): a program of this
 * build that starts a thread while its case is listed as one that runs a
 * single thread is recorded, so that one_thread_check fails and the list
 * cannot keep a threaded case out of CI's ThreadSanitizer stage.
 *
 * QS_ONE_THREAD_LOG  file the record is appended to (one line a process)
 * QS_ONE_THREAD_ROOT only programs under this directory are recorded (the
 *                    build tree; the shells and tools a script runs are
 *                    not the library's code)
 *
 * The thread is started as asked: the case runs as it would without the
 * shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*qs_create_fn)(pthread_t *, const pthread_attr_t *,
                            void *(*) (void *), void *);

static atomic_int recorded;

/* A program of the build whose thread cannot be recorded ends here: a
 * record lost in silence would let one_thread_check pass. */
static void
record_failed(const char *what, const char *path)
{
    fprintf(stderr, "one_thread: a thread started and %s %s failed\n", what,
            path);
    abort();
}

static void
record_thread(void)
{
    const char *log = getenv("QS_ONE_THREAD_LOG");
    const char *root = getenv("QS_ONE_THREAD_ROOT");
    char exe[PATH_MAX], rroot[PATH_MAX], line[PATH_MAX + 64];
    size_t rlen;
    ssize_t n;
    int fd, len;

    if (log == NULL || root == NULL || atomic_exchange(&recorded, 1) != 0)
        return;
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        record_failed("reading", "/proc/self/exe");
    exe[n] = '\0';
    /* /proc/self/exe is resolved: compare it with the resolved root. A
     * root that does not exist holds no program. */
    if (realpath(root, rroot) == NULL)
        return;
    rlen = strlen(rroot);
    if (strncmp(exe, rroot, rlen) != 0 || exe[rlen] != '/')
        return;
    len = snprintf(line, sizeof(line), "%s (pid %ld) started a thread\n", exe,
                   (long) getpid());
    fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        record_failed("opening", log);
    if (len <= 0 || write(fd, line, (size_t) len) != len)
        record_failed("writing", log);
    close(fd);
}

int
pthread_create(pthread_t *thread, const pthread_attr_t *attr,
               void *(*start)(void *), void *arg)
{
    qs_create_fn real = (qs_create_fn) dlsym(RTLD_NEXT, "pthread_create");

    if (real == NULL)
        abort();
    record_thread();
    return real(thread, attr, start, arg);
}
