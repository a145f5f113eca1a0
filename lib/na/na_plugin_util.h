/*
 * Building blocks for plugins that run on one class lock, an epoll wait fd
 * and per-context receive queues (plugins/sm and plugins/tcp use them):
 *
 *  - the wait state of a class (struct na_plugin_wait): its epoll fd, the
 *    eventfd that wakes a sleeper when an op completes outside progress,
 *    the count of sleepers, the completion count and the adaptive spin of
 *    poll_wait, with the spin-then-sleep loop itself
 *    (na_plugin_poll_wait);
 *  - the plugin-independent part of a context (struct na_plugin_context):
 *    its id, its pending and completed counts, the receives posted on it
 *    and the backlogs of messages that arrived before a matching receive
 *    was posted, with the class's table of contexts;
 *  - receive completion (na_plugin_recv_fill) and op completion
 *    (na_plugin_op_done);
 *  - ops that are the same in every such plugin (the message buffers the
 *    core uses by default, free and dup of interned addresses).
 *
 * Nothing here takes the class lock unless its comment says so; "lock
 * held" means the caller holds the plugin's class lock. docs/
 * writing-a-plugin.md says when a plugin should use these.
 */
#ifndef NA_PLUGIN_UTIL_H
#define NA_PLUGIN_UTIL_H

#include "na/na_plugin.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds and start of the adaptive spin of poll_wait before it sleeps. */
#define NA_PLUGIN_SPIN_MIN_NS 2000u
#define NA_PLUGIN_SPIN_MAX_NS 100000u
#define NA_PLUGIN_SPIN_START_NS 20000u

/* The wait state of a class. `epfd` and `wake_fd` are immutable after
 * na_plugin_wait_init; the rest are atomics, read without the lock. */
struct na_plugin_wait {
    int epfd;              /* the class's wait fd (NA_Poll_get_fd)        */
    int wake_fd;           /* eventfd in epfd; its epoll data is &wake_fd */
    bool no_block;         /* NA_NO_BLOCK: poll_wait never sleeps         */
    atomic_uint sleepers;  /* threads about to sleep or asleep            */
    atomic_uint completed; /* completions queued on any context, ever     */
    atomic_uint spin_ns;   /* how long poll_wait spins before sleeping    */
};

/* Create the epoll fd and the eventfd (added to it with &w->wake_fd as
 * its data). NA_NOMEM on failure; na_plugin_wait_fini undoes either way. */
na_return_t na_plugin_wait_init(struct na_plugin_wait *w, bool no_block);
void na_plugin_wait_fini(struct na_plugin_wait *w);

/* Wake a thread sleeping on the wait fd, only when there is one (a
 * completion queued outside progress). Errors are logged under subsys. */
void na_plugin_wait_wake(struct na_plugin_wait *w, const char *subsys);

/* Read the eventfd empty (when epoll reported it). */
void na_plugin_wait_drain(struct na_plugin_wait *w);

/* The plugin-independent part of a context, first in the plugin's. */
struct na_plugin_backlog_msg;
TAILQ_HEAD(na_plugin_backlog, na_plugin_backlog_msg);

struct na_plugin_context {
    na_context_t *context;
    uint8_t id;
    atomic_uint pending;   /* operations posted and not yet completed */
    atomic_uint completed; /* completions queued, ever (poll counts)  */
    /* Messages nobody asked for yet, oldest first (lock held). */
    struct na_plugin_backlog unexp_backlog, exp_backlog;
    /* Receives posted and waiting for a message, oldest first (lock
     * held): what a message that arrives matches before the backlogs. */
    struct na_op_list unexp_ops, exp_ops;
};

/* What a plugin does in poll_wait: one progress pass (`force`: also look
 * at what it looks at only now and then, as before sleeping), and one
 * sleep on the wait fd of at most timeout_ms. */
struct na_plugin_wait_ops {
    void (*progress)(void *cls, bool force);
    void (*sleep)(void *cls, na_context_t *context, unsigned int timeout_ms);
};

/*
 * The poll_wait op: spin (progress passes) for the learned spin window,
 * then sleep until something of this context completed or the deadline.
 * A completion on another context of the class returns early (NA_TIMEOUT,
 * so a thread driving several contexts moves on); a wake-up with no
 * completion at all sleeps again. The spin window grows when the wait
 * ended while spinning or soon after falling asleep (a wake-up costs more
 * than the spin would have), and shrinks otherwise.
 */
na_return_t na_plugin_poll_wait(struct na_plugin_wait *w,
                                struct na_plugin_context *pc,
                                const struct na_plugin_wait_ops *ops, void *cls,
                                unsigned int timeout_ms, unsigned int *count);

/* The poll op: one progress pass, and how many ops of pc it completed. */
na_return_t na_plugin_poll(struct na_plugin_context *pc,
                           const struct na_plugin_wait_ops *ops, void *cls,
                           unsigned int *count);

/* The spin window's update, exposed for plugins with their own loop. */
void na_plugin_spin_adapt(struct na_plugin_wait *w, bool found,
                          bool while_spinning, uint64_t waited_ns);

/*
 * Contexts. A class keeps `struct na_plugin_context *table[256]`, indexed
 * by context id, under its lock. na_plugin_context_add inserts pc (set up
 * with na_plugin_context_init) and fails with NA_INVALID_ARG when the id
 * is taken. na_plugin_context_remove refuses with NA_BUSY while ops are
 * pending, else takes pc out of the table and drops its backlogs, calling
 * unref_locked on each message's source; the caller frees pc. Both take
 * `lock` (the class lock).
 */
void na_plugin_context_init(struct na_plugin_context *pc, na_context_t *context,
                            uint8_t id);
na_return_t na_plugin_context_add(pthread_mutex_t *lock,
                                  struct na_plugin_context **table,
                                  struct na_plugin_context *pc);
na_return_t na_plugin_context_remove(pthread_mutex_t *lock,
                                     struct na_plugin_context **table,
                                     struct na_plugin_context *pc,
                                     void (*unref_locked)(struct na_addr *));

/* A message that arrived before a matching receive was posted. */
struct na_plugin_backlog_msg {
    TAILQ_ENTRY(na_plugin_backlog_msg) entry;
    struct na_addr *source; /* the plugin holds a reference */
    na_tag_t tag;
    uint8_t src_id;
    size_t len;
    uint8_t data[];
};

/* Copy a message to the tail of q (lock held). true: queued, and the
 * caller takes a reference on source for it; false: out of memory, the
 * message is dropped and that is logged under subsys. */
bool na_plugin_backlog_push(struct na_plugin_backlog *q, const char *subsys,
                            struct na_addr *source, uint8_t src_id,
                            na_tag_t tag, const void *data, size_t len);

/* The oldest message of q from (source, src_id, tag), taken off q; NULL
 * if none (lock held). The caller frees it and drops its reference. */
struct na_plugin_backlog_msg *
na_plugin_backlog_take(struct na_plugin_backlog *q,
                       const struct na_addr *source, uint8_t src_id,
                       na_tag_t tag);

/* The oldest message of q, taken off q; NULL if none (lock held). */
struct na_plugin_backlog_msg *
na_plugin_backlog_take_first(struct na_plugin_backlog *q);

/*
 * Fill the results of a receive of kind `type` from a message of `len`
 * bytes: copy what fits in (buf, size), set the actual size and, for an
 * unexpected receive, the tag and source. Returns NA_MSGSIZE when the
 * message was cut (the source is then NULL), else NA_SUCCESS, in which
 * case an unexpected receive's info holds `source` and the caller takes a
 * reference for it before completing the op.
 */
na_return_t na_plugin_recv_fill(struct na_op_base *base, na_cb_type_t type,
                                void *buf, size_t size, struct na_addr *source,
                                na_tag_t tag, const void *data, size_t len);

/* Complete an op of context pc (lock held): count it on pc and on the
 * class, hand it to the core, and count it no longer pending. The op may
 * be reused by another thread as soon as the core has it. */
static inline void
na_plugin_op_done(struct na_plugin_wait *w, struct na_plugin_context *pc,
                  na_op_id_t *op, na_return_t ret)
{
    atomic_fetch_add(&pc->completed, 1);
    atomic_fetch_add(&w->completed, 1);
    na_op_finish(op, ret);
    atomic_fetch_sub(&pc->pending, 1);
}

/* Whether [offset, offset + size) lies inside a region of len bytes
 * (written so that no sum can wrap: the offset comes from a peer). */
static inline bool
na_plugin_range_ok(uint64_t len, uint64_t offset, uint64_t size)
{
    return offset <= len && size <= len - offset;
}

/*
 * The post-time checks of a put or get (desc) that every plugin makes, in
 * this order: both ranges inside their handles, of local_len and
 * remote_len bytes (NA_INVALID_ARG), and the remote handle's NA_MEM_*
 * flags granting the access, write for a put and read for a get
 * (NA_PERMISSION). Whether the local handle is local and registered is
 * the plugin's to check.
 */
static inline na_return_t
na_plugin_rma_check(const struct na_op_desc *desc, uint64_t local_len,
                    uint64_t remote_len, unsigned long remote_flags)
{
    unsigned long need =
        desc->type == NA_CB_PUT ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY;

    if (!na_plugin_range_ok(local_len, desc->local_offset, desc->data_size) ||
        !na_plugin_range_ok(remote_len, desc->remote_offset, desc->data_size))
        return NA_INVALID_ARG;
    return (remote_flags & need) != 0 ? NA_SUCCESS : NA_PERMISSION;
}

/*
 * Interned addresses (sm, tcp): one object per peer, shared by
 * references, kept on the class's list under the class lock and freed
 * with its last reference. The plugin's struct na_addr starts with this
 * head; the helpers below take the plugin's address and find the head at
 * its start.
 */
struct na_plugin_addr {
    atomic_uint refcount;
    pthread_mutex_t *lock;            /* the class lock, which guards list */
    LIST_ENTRY(na_plugin_addr) entry; /* on the class's list (lock held) */
};
LIST_HEAD(na_plugin_addr_list, na_plugin_addr);

/* The plugin's address of a list entry (its head). */
static inline struct na_addr *
na_plugin_addr_of(struct na_plugin_addr *head)
{
    return (struct na_addr *) (void *) head;
}

/* A new address (allocated zeroed by the plugin) gets its one reference
 * and goes on `list`, guarded by `lock` (held). */
void na_plugin_addr_insert(struct na_plugin_addr_list *list,
                           pthread_mutex_t *lock, struct na_addr *addr);
void na_plugin_addr_ref(struct na_addr *addr);
/* Drop a reference; the last one takes the address off its list and
 * frees it. The first with the class lock held; the second takes it only
 * for the last reference. */
void na_plugin_addr_unref_locked(struct na_addr *addr);
void na_plugin_addr_unref(struct na_addr *addr);
/* Free what is left on list, whatever its references (the class goes
 * away: addresses the user did not free die with it). */
void na_plugin_addr_list_clear(struct na_plugin_addr_list *list);

/* Message buffers that need no registration: what the core uses when a
 * plugin leaves buf_alloc and buf_free NULL (64-byte-aligned memory,
 * zeroed, plugin_data NULL). They are carved by line (util/qs_alloc.h)
 * after a line that keeps their size, for the free. */
void *na_plugin_msg_buf_alloc(na_class_t *na_class, size_t buf_size,
                              unsigned long flags, void **plugin_data);
void na_plugin_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data);

/* The end of every to_string op (the NA_Addr_to_string contract), once
 * the address is formatted in str: *buf_size becomes strlen(str) + 1;
 * buf NULL asks for that size (NA_SUCCESS), a smaller buf is NA_OVERFLOW
 * with nothing written, else str is copied with its terminating NUL. */
na_return_t na_plugin_addr_string_out(const char *str, char *buf,
                                      size_t *buf_size);

/* The free and dup ops of a plugin whose addresses are interned (one
 * object per peer, starting with the struct na_plugin_addr head). */
void na_plugin_addr_free_interned(na_class_t *na_class, na_addr_t addr);
na_return_t na_plugin_addr_dup_interned(na_class_t *na_class, na_addr_t addr,
                                        na_addr_t *new_addr);

/*
 * The NA code of a positive errno from the system or a fabric library
 * (libfabric's FI_E* codes below 256 are errnos), the one map every plugin
 * uses, Mercury's: EPERM is NA_PERMISSION and EACCES (or a rejected key)
 * NA_ACCESS; a connection refused, reset, aborted or never made, and a
 * host or network down or unreachable, NA_HOSTUNREACH; EAGAIN NA_AGAIN;
 * ENOMEM, EMFILE, ENOSPC and ENOBUFS NA_NOMEM; EINVAL, E2BIG and EBADF
 * NA_INVALID_ARG; ENOSYS and ENOPROTOOPT NA_PROTONOSUPPORT; and EINTR,
 * ENOENT, EFAULT, EBUSY, ENODEV, EOVERFLOW, EMSGSIZE, EOPNOTSUPP,
 * EADDRINUSE, EADDRNOTAVAIL, ETIMEDOUT and ECANCELED their namesakes. An
 * errno Mercury does not name is NA_IO_ERROR here (Mercury:
 * NA_PROTOCOL_ERROR, which Quicksilver keeps for malformed bytes). A
 * plugin maps its own codes first (ofi: FI_ETRUNC) and what an errno means
 * in one place of its own (verbs: ENODEV for a missing device), then
 * calls this for the rest.
 */
na_return_t na_plugin_errno_to_na(int err);

/*
 * The same, for an error that starts here: logs it once at error level
 * under subsys with the errno the NA code folds away,
 * "<what>: <strerror> (errno <n>, <NA name>)", and returns the code.
 */
na_return_t na_plugin_errno_error(const char *subsys, int err,
                                  const char *what);

/* The IPv4 address of interface `name`, or of the first interface that is
 * not loopback when name is NULL; false when there is none. Host names and
 * interface names in info strings ("tcp://lo") and FI_TCP_IFACE go
 * through it. */
bool na_plugin_iface_ipv4(const char *name, struct in_addr *ip);

#ifdef __cplusplus
}
#endif

#endif /* NA_PLUGIN_UTIL_H */
