/*
 * What the NA conformance suite and every plugin's own tests share: the
 * record of a completion as the callback saw it, and a driver that
 * progresses a few classes of this process in turn until enough
 * completions came. Only the public NA API is used, so a test linked with
 * the shared library and one linked with the internal one both compile
 * this file in (na_peer.c).
 */
#ifndef NA_CT_PEER_H
#define NA_CT_PEER_H

#include "na.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One completion as the callback saw it. */
struct na_result {
    int calls;
    na_return_t ret;
    na_cb_type_t type;
    size_t size;      /* receives: actual_buf_size                        */
    na_tag_t tag;     /* unexpected receives                              */
    na_addr_t source; /* unexpected receives: owned by the test          */
};

/* Completion callback: arg is a struct na_result. */
void na_record_cb(const struct na_cb_info *info);

/* A class of the test and the context it progresses. */
struct na_peer {
    na_class_t *cls; /* NULL: skipped by na_peers_progress */
    na_context_t *ctx;
};

/*
 * Progress each of the n peers in turn (NA_Poll_wait of at most poll_ms,
 * or NA_Poll when poll_ms is 0, then NA_Trigger) until *calls >= want. false
 * when timeout_ns pass first on the NA clock of the first peer that has a
 * class.
 */
bool na_peers_progress(const struct na_peer *peers, unsigned n,
                       const int *calls, int want, unsigned int poll_ms,
                       uint64_t timeout_ns);

/*
 * A peer process: fork a child that runs child(fd) with the write end of
 * a pipe (child must not return) and give the parent the read end in
 * *rfd. The child's pid, or -1.
 */
pid_t na_peer_fork(void (*child)(int fd), int *rfd);

/* Read exactly len bytes of fd; false at end of file or an error. */
bool na_peer_read_all(int fd, void *buf, size_t len);

#endif /* NA_CT_PEER_H */
