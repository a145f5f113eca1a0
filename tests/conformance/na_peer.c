/*
 * Completion records and the test driver; see na_peer.h.
 */
#include "conformance/na_peer.h"

#include <stddef.h>
#include <unistd.h>

void
na_record_cb(const struct na_cb_info *info)
{
    struct na_result *r = info->arg;

    r->calls++;
    r->ret = info->ret;
    r->type = info->type;
    if (info->type == NA_CB_RECV_UNEXPECTED) {
        r->size = info->info.recv_unexpected.actual_buf_size;
        r->tag = info->info.recv_unexpected.tag;
        r->source = info->info.recv_unexpected.source;
    } else if (info->type == NA_CB_RECV_EXPECTED) {
        r->size = info->info.recv_expected.actual_buf_size;
    }
}

bool
na_peers_progress(const struct na_peer *peers, unsigned n, const int *calls,
                  int want, unsigned int poll_ms, uint64_t timeout_ns)
{
    na_class_t *clock = NULL;
    uint64_t deadline;

    for (unsigned i = 0; i < n && clock == NULL; i++)
        clock = peers[i].cls;
    if (clock == NULL)
        return *calls >= want;
    deadline = NA_Clock_now(clock) + timeout_ns;
    while (*calls < want) {
        if (NA_Clock_now(clock) > deadline)
            return false;
        for (unsigned i = 0; i < n; i++) {
            if (peers[i].cls == NULL)
                continue;
            if (poll_ms == 0)
                NA_Poll(peers[i].cls, peers[i].ctx, NULL);
            else
                NA_Poll_wait(peers[i].cls, peers[i].ctx, poll_ms, NULL);
            NA_Trigger(peers[i].ctx, 64, NULL);
        }
    }
    return true;
}

pid_t
na_peer_fork(void (*child)(int fd), int *rfd)
{
    int fds[2];
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    *rfd = fds[0];
    return pid;
}

bool
na_peer_read_all(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(fd, (char *) buf + got, len - got);
        if (r <= 0)
            return false;
        got += (size_t) r;
    }
    return true;
}
