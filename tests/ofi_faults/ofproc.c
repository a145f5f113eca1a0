/*
 * Child processes and their notification pipes (see ofproc.h).
 */
#include "ofi_faults/ofproc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every child started and not yet reaped, for of_reap_all(). */
#define OF_MAX_CHILDREN 16
static struct of_child *of_children[OF_MAX_CHILDREN];

static void
of_track(struct of_child *c)
{
    for (int i = 0; i < OF_MAX_CHILDREN; i++) {
        if (of_children[i] == NULL || of_children[i] == c) {
            of_children[i] = c;
            return;
        }
    }
    /* More children than any scenario starts: a bug in the test. */
    abort();
}

static void
of_untrack(struct of_child *c)
{
    for (int i = 0; i < OF_MAX_CHILDREN; i++)
        if (of_children[i] == c)
            of_children[i] = NULL;
}

int
of_spawn(struct of_child *c, const char *role, const char *const *args)
{
    const char *argv[16];
    int fds[2];
    size_t n = 0;
    pid_t pid;

    /* Read before fork: the child only makes system calls. */
    const char *ns = getenv(OF_SERVER_NETNS_ENV);
    int ns_fd = -1;

    memset(c, 0, sizeof(*c));
    c->fd = -1;
    if (strcmp(role, "--server") == 0 && ns != NULL && *ns != '\0') {
        ns_fd = open(ns, O_RDONLY | O_CLOEXEC);
        if (ns_fd < 0)
            return -1;
    }
    argv[n++] = "test_ofi_faults";
    argv[n++] = role;
    while (args != NULL && *args != NULL && n < 15)
        argv[n++] = *args++;
    argv[n] = NULL;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        if (ns_fd >= 0)
            close(ns_fd);
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (ns_fd >= 0)
            close(ns_fd);
        return -1;
    }
    if (pid == 0) {
        /* A child must not outlive a test that crashed or was killed by
         * ctest's timeout: the kernel kills it when its parent goes. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(120);
        /* dup2 clears close-on-exec on the copy, so only the write end
         * crosses exec. */
        /* A server on the other "host" of a netns test (first: ns_fd
         * may be the descriptor the pipe is about to take). */
        if (ns_fd >= 0 && setns(ns_fd, CLONE_NEWNET) != 0)
            _exit(123);
        if (dup2(fds[1], OF_NOTIFY_FD) < 0)
            _exit(121);
        /* The parent's fabric sockets must not live on in the child: a
         * killed child would otherwise keep the parent's connections
         * open, and the parent's peers would never see them break. */
        close_range(OF_NOTIFY_FD + 1, ~0u, 0);
        execv("/proc/self/exe", (char *const *) argv);
        _exit(122);
    }
    close(fds[1]);
    if (ns_fd >= 0)
        close(ns_fd);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    c->pid = pid;
    c->fd = fds[0];
    of_track(c);
    return 0;
}

static void
of_child_line(struct of_child *c, const char *line)
{
    int ret = 0, calls = 0, n = 0;

    switch (line[0]) {
    case 'A':
        snprintf(c->addr, sizeof(c->addr), "%s", line + 2);
        c->listening = 1;
        break;
    case 'H':
        c->held++;
        break;
    case 'P':
        c->pulls++;
        break;
    case 'B':
        if (sscanf(line + 1, "%d %d", &ret, &calls) == 2) {
            c->bulk_ret = ret;
            c->bulk_done++;
        }
        break;
    case 'F':
        c->forwarded++;
        break;
    case 'D':
        if (sscanf(line + 1, "%d", &ret) == 1)
            c->origin_ret = ret;
        c->origin_done++;
        break;
    case 'R':
        if (sscanf(line + 1, "%d", &n) == 1)
            c->released += n;
        break;
    default:
        fprintf(stderr, "test_ofi_faults: child %d wrote \"%s\"\n",
                (int) c->pid, line);
        break;
    }
}

void
of_child_poll(struct of_child *c)
{
    char buf[512];
    ssize_t got;

    while (c->fd >= 0) {
        got = read(c->fd, buf, sizeof(buf));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return; /* EAGAIN: nothing more for now */
        if (got == 0) {
            c->eof = 1;
            close(c->fd);
            c->fd = -1;
            return;
        }
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                c->line[c->len] = '\0';
                of_child_line(c, c->line);
                c->len = 0;
            } else if (c->len + 1 < sizeof(c->line)) {
                c->line[c->len++] = buf[i];
            }
        }
    }
}

int
of_child_kill(struct of_child *c)
{
    int status = -1;

    if (c->pid <= 0)
        return -1;
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    c->pid = 0;
    c->status = status;
    /* Events written before the kill are still in the pipe: read them, so
     * a scenario can tell what the child did before it died. */
    of_child_poll(c);
    of_untrack(c);
    return status;
}

int
of_child_reap(struct of_child *c)
{
    int status = -1;

    if (c->pid <= 0)
        return -1;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    c->pid = 0;
    c->status = status;
    of_untrack(c);
    return status;
}

void
of_reap_all(void)
{
    for (int i = 0; i < OF_MAX_CHILDREN; i++) {
        struct of_child *c = of_children[i];

        if (c == NULL)
            continue;
        of_child_kill(c);
        if (c->fd >= 0) {
            close(c->fd);
            c->fd = -1;
        }
        of_children[i] = NULL;
    }
}

void
of_notify(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t) n > sizeof(buf) - 2)
        n = (int) sizeof(buf) - 2;
    buf[n++] = '\n';
    /* A parent that died closed the read end; the write then fails with
     * EPIPE, which the child ignores (it is killed by PDEATHSIG anyway). */
    if (write(OF_NOTIFY_FD, buf, (size_t) n) < 0)
        return;
}

const char *
of_server_info(const char *info)
{
    const char *env = getenv(OF_SERVER_INFO_ENV);

    return env != NULL && *env != '\0' ? env : info;
}
