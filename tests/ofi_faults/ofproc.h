/*
 * Child processes of the ofi fault scenarios and the pipe they report on.
 *
 * The test binary starts copies of itself (a `--server`, or an `--origin`
 * that is to be killed) with fork and exec. Each child writes one line per
 * event to a pipe inherited as OF_NOTIFY_FD: "A <address>" once it listens,
 * "H" when a held handler was entered, "P" when a pull was posted,
 * "B <ret> <calls>" when a pull's callback ran, "R <n>" when held handles
 * were answered; an origin writes "F" once it forwarded its pull and
 * "D <ret>" if that forward ever completes. The parent reads the pipe without
 * blocking between its own HG progress calls, so it never waits on wall-clock
 * time to pass.
 *
 * Every child started is recorded, so a cmocka teardown can kill and reap
 * whatever a failed scenario left behind.
 */
#ifndef OF_PROC_H
#define OF_PROC_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Servers on another host (tests/netns): with OF_SERVER_NETNS_ENV set to
 * a network namespace (a /proc/<pid>/ns/net path), every "--server" child
 * enters it before exec, and listens on OF_SERVER_INFO_ENV's info string
 * (an address of that namespace) instead of the client's.
 */
#define OF_SERVER_NETNS_ENV "QS_OFI_FAULTS_SERVER_NETNS"
#define OF_SERVER_INFO_ENV "QS_OFI_FAULTS_SERVER_INFO"

/* The info string a server should listen on: OF_SERVER_INFO_ENV's, or
 * `info` (the client's) when it is not set. */
const char *of_server_info(const char *info);

/* The descriptor a child writes its events to. */
#define OF_NOTIFY_FD 3

struct of_child {
    pid_t pid;      /* 0 once reaped                                  */
    int fd;         /* read end of the child's pipe; -1 once closed   */
    int eof;        /* the child closed its end (it is exiting)       */
    char line[512]; /* an incomplete line read so far                 */
    size_t len;
    char addr[256];  /* from "A <address>"                             */
    int listening;   /* an "A" line arrived                            */
    int held;        /* "H" lines                                      */
    int pulls;       /* "P" lines                                      */
    int bulk_done;   /* "B" lines                                      */
    int bulk_ret;    /* the ret of the last "B" line                   */
    int released;    /* the sum of "R" lines                           */
    int forwarded;   /* "F" lines                                      */
    int origin_done; /* "D" lines                                      */
    int origin_ret;  /* the ret of the last "D" line                   */
    int status;      /* waitpid status once reaped                     */
};

/*
 * Start this binary again as `role` ("--server", "--origin") with the
 * extra arguments (NULL-terminated), its notification pipe as
 * OF_NOTIFY_FD. The child is killed if this process dies. Returns 0, or -1
 * with errno set.
 */
int of_spawn(struct of_child *c, const char *role, const char *const *args);

/* Read whatever the child has written so far, without blocking. */
void of_child_poll(struct of_child *c);

/* SIGKILL the child and reap it (waitpid returns promptly after SIGKILL).
 * Returns the waitpid status, or -1 if it was already reaped. */
int of_child_kill(struct of_child *c);

/* Reap a child that closed its pipe (it is exiting); returns its status. */
int of_child_reap(struct of_child *c);

/* Kill and reap every child still alive and close every pipe: the
 * teardown of every scenario, whatever path it took. */
void of_reap_all(void);

/* Child side: write one event line to OF_NOTIFY_FD with a single write()
 * (atomic, shorter than PIPE_BUF). */
void of_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* OF_PROC_H */
