/*
 * Building blocks shared by the plugins that run on one class lock and an
 * epoll wait fd (see na_plugin_util.h).
 */
#include "na/na_plugin_util.h"
#include "util/qs_alloc.h"
#include "util/qs_atomic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

na_return_t
na_plugin_wait_init(struct na_plugin_wait *w, bool no_block)
{
    struct epoll_event ev = {.events = EPOLLIN};

    w->no_block = no_block;
    atomic_init(&w->sleepers, 0);
    atomic_init(&w->completed, 0);
    atomic_init(&w->spin_ns, NA_PLUGIN_SPIN_START_NS);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->epfd < 0 || w->wake_fd < 0)
        return NA_NOMEM;
    ev.data.ptr = &w->wake_fd;
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wake_fd, &ev) != 0)
        return NA_NOMEM;
    return NA_SUCCESS;
}

void
na_plugin_wait_fini(struct na_plugin_wait *w)
{
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    if (w->epfd >= 0)
        close(w->epfd);
    w->wake_fd = w->epfd = -1;
}

void
na_plugin_wait_wake(struct na_plugin_wait *w, const char *subsys)
{
    uint64_t one = 1;

    if (atomic_load(&w->sleepers) == 0)
        return;
    if (write(w->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        na_plugin_log_error(subsys, "eventfd write failed");
}

void
na_plugin_wait_drain(struct na_plugin_wait *w)
{
    uint64_t v;

    while (read(w->wake_fd, &v, sizeof(v)) > 0)
        ;
}

void
na_plugin_spin_adapt(struct na_plugin_wait *w, bool found, bool while_spinning,
                     uint64_t waited_ns)
{
    uint64_t s = atomic_load(&w->spin_ns);

    if (found && while_spinning)
        s += s / 4;
    else if (found && waited_ns <= NA_PLUGIN_SPIN_MAX_NS)
        s = waited_ns + waited_ns / 4 > s ? waited_ns + waited_ns / 4 : s;
    else
        s /= 2;
    if (s > NA_PLUGIN_SPIN_MAX_NS)
        s = NA_PLUGIN_SPIN_MAX_NS;
    if (s < NA_PLUGIN_SPIN_MIN_NS)
        s = NA_PLUGIN_SPIN_MIN_NS;
    atomic_store(&w->spin_ns, (unsigned int) s);
}

static bool
na_plugin_has_completions(na_context_t *context)
{
    return NA_Context_get_completion_count(context) != 0;
}

na_return_t
na_plugin_poll(struct na_plugin_context *pc,
               const struct na_plugin_wait_ops *ops, void *cls,
               unsigned int *count)
{
    unsigned int before = atomic_load(&pc->completed);

    ops->progress(cls, false);
    if (count != NULL)
        *count = atomic_load(&pc->completed) - before;
    return NA_SUCCESS;
}

na_return_t
na_plugin_poll_wait(struct na_plugin_wait *w, struct na_plugin_context *pc,
                    const struct na_plugin_wait_ops *ops, void *cls,
                    unsigned int timeout_ms, unsigned int *count)
{
    na_context_t *context = pc->context;
    unsigned int before = atomic_load(&pc->completed);
    unsigned int cls_before = atomic_load(&w->completed);
    uint64_t start = na_plugin_clock_monotonic_ns();
    uint64_t deadline = start + (uint64_t) timeout_ms * 1000000u;
    uint64_t spin_end =
        w->no_block ? deadline : start + atomic_load(&w->spin_ns);
    uint64_t now = start;
    unsigned int n;

    if (spin_end > deadline)
        spin_end = deadline;
    /* Spin first: waking from sleep costs more than most round trips. */
    for (;;) {
        ops->progress(cls, false);
        if (atomic_load(&pc->completed) != before ||
            na_plugin_has_completions(context)) {
            if (!w->no_block)
                na_plugin_spin_adapt(w, true, true, 0);
            goto done;
        }
        now = na_plugin_clock_monotonic_ns();
        if (now >= spin_end)
            break;
    }
    while (now < deadline) {
        ops->sleep(cls, context,
                   (unsigned int) ((deadline - now + 999999u) / 1000000u));
        if (atomic_load(&pc->completed) != before ||
            na_plugin_has_completions(context) ||
            atomic_load(&w->completed) != cls_before)
            break;
        now = na_plugin_clock_monotonic_ns();
    }
    na_plugin_spin_adapt(w,
                         atomic_load(&pc->completed) != before ||
                             na_plugin_has_completions(context),
                         false, na_plugin_clock_monotonic_ns() - start);
done:
    n = atomic_load(&pc->completed) - before;
    if (count != NULL)
        *count = n;
    return n != 0 || na_plugin_has_completions(context) ? NA_SUCCESS
                                                        : NA_TIMEOUT;
}

void
na_plugin_context_init(struct na_plugin_context *pc, na_context_t *context,
                       uint8_t id)
{
    pc->context = context;
    pc->id = id;
    atomic_init(&pc->pending, 0);
    atomic_init(&pc->completed, 0);
    TAILQ_INIT(&pc->unexp_backlog);
    TAILQ_INIT(&pc->exp_backlog);
    na_op_list_init(&pc->unexp_ops);
    na_op_list_init(&pc->exp_ops);
}

na_return_t
na_plugin_context_add(pthread_mutex_t *lock, struct na_plugin_context **table,
                      struct na_plugin_context *pc)
{
    na_return_t ret = NA_SUCCESS;

    pthread_mutex_lock(lock);
    if (table[pc->id] != NULL)
        ret = NA_INVALID_ARG;
    else
        table[pc->id] = pc;
    pthread_mutex_unlock(lock);
    return ret;
}

/* Messages still in the backlogs were never asked for: they are dropped. */
na_return_t
na_plugin_context_remove(pthread_mutex_t *lock,
                         struct na_plugin_context **table,
                         struct na_plugin_context *pc,
                         void (*unref_locked)(struct na_addr *))
{
    struct na_plugin_backlog *qs[2] = {&pc->unexp_backlog, &pc->exp_backlog};
    struct na_plugin_backlog_msg *m;

    if (atomic_load(&pc->pending) != 0)
        return NA_BUSY;
    pthread_mutex_lock(lock);
    table[pc->id] = NULL;
    for (int i = 0; i < 2; i++) {
        while ((m = TAILQ_FIRST(qs[i])) != NULL) {
            TAILQ_REMOVE(qs[i], m, entry);
            unref_locked(m->source);
            free(m);
        }
    }
    pthread_mutex_unlock(lock);
    return NA_SUCCESS;
}

bool
na_plugin_backlog_push(struct na_plugin_backlog *q, const char *subsys,
                       struct na_addr *source, uint8_t src_id, na_tag_t tag,
                       const void *data, size_t len)
{
    struct na_plugin_backlog_msg *m = malloc(sizeof(*m) + len);

    if (m == NULL) {
        na_plugin_log_error(subsys, "out of memory: a message was dropped");
        return false;
    }
    m->source = source;
    m->src_id = src_id;
    m->tag = tag;
    m->len = len;
    if (len != 0)
        memcpy(m->data, data, len);
    TAILQ_INSERT_TAIL(q, m, entry);
    return true;
}

struct na_plugin_backlog_msg *
na_plugin_backlog_take(struct na_plugin_backlog *q,
                       const struct na_addr *source, uint8_t src_id,
                       na_tag_t tag)
{
    struct na_plugin_backlog_msg *m;

    TAILQ_FOREACH(m, q, entry)
    {
        if (m->source == source && m->src_id == src_id && m->tag == tag) {
            TAILQ_REMOVE(q, m, entry);
            return m;
        }
    }
    return NULL;
}

struct na_plugin_backlog_msg *
na_plugin_backlog_take_first(struct na_plugin_backlog *q)
{
    struct na_plugin_backlog_msg *m = TAILQ_FIRST(q);

    if (m != NULL)
        TAILQ_REMOVE(q, m, entry);
    return m;
}

na_return_t
na_plugin_recv_fill(struct na_op_base *base, na_cb_type_t type, void *buf,
                    size_t size, struct na_addr *source, na_tag_t tag,
                    const void *data, size_t len)
{
    na_return_t ret = NA_SUCCESS;
    size_t n = len;

    if (len > size) {
        ret = NA_MSGSIZE;
        n = size;
    }
    if (n != 0)
        memcpy(buf, data, n);
    if (type == NA_CB_RECV_UNEXPECTED) {
        struct na_cb_info_recv_unexpected *ru =
            &base->info.info.recv_unexpected;
        ru->actual_buf_size = n;
        ru->tag = tag;
        ru->source = ret == NA_SUCCESS ? source : NULL;
    } else {
        base->info.info.recv_expected.actual_buf_size = n;
    }
    return ret;
}

/* A message buffer is carved by line (util/qs_alloc.h) after one line
 * that keeps its size, which the free needs and the API does not pass:
 * a handle's two buffers then sit in the chunks beside its other
 * objects, on huge pages once the chunks are large, instead of in 4 KiB
 * pages of the heap that a large simulated world touches one walk each. */
void *
na_plugin_msg_buf_alloc(na_class_t *na_class, size_t buf_size,
                        unsigned long flags, void **plugin_data)
{
    size_t size = buf_size ? buf_size : 1;
    size_t *head;

    (void) na_class;
    (void) flags;
    if (plugin_data != NULL)
        *plugin_data = NULL;
    if (size > SIZE_MAX - 2 * QS_LINE)
        return NULL;
    head = qs_calloc_lines(QS_LINE + size);
    if (head == NULL)
        return NULL;
    *head = size;
    return (char *) head + QS_LINE;
}

na_return_t
na_plugin_addr_string_out(const char *str, char *buf, size_t *buf_size)
{
    size_t need = strlen(str) + 1;
    bool query = buf == NULL, fits = *buf_size >= need;

    *buf_size = need;
    if (query)
        return NA_SUCCESS;
    if (!fits)
        return NA_OVERFLOW;
    memcpy(buf, str, need);
    return NA_SUCCESS;
}

void
na_plugin_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data)
{
    size_t *head;

    (void) na_class;
    (void) plugin_data;
    if (buf == NULL)
        return;
    head = (size_t *) (void *) ((char *) buf - QS_LINE);
    qs_free_lines(head, QS_LINE + *head);
}

static struct na_plugin_addr *
na_plugin_addr_head(struct na_addr *addr)
{
    return (struct na_plugin_addr *) (void *) addr;
}

void
na_plugin_addr_insert(struct na_plugin_addr_list *list, pthread_mutex_t *lock,
                      struct na_addr *addr)
{
    struct na_plugin_addr *head = na_plugin_addr_head(addr);

    atomic_init(&head->refcount, 1);
    head->lock = lock;
    LIST_INSERT_HEAD(list, head, entry);
}

void
na_plugin_addr_ref(struct na_addr *addr)
{
    qs_atomic_fetch_add(&na_plugin_addr_head(addr)->refcount, 1,
                        memory_order_relaxed);
}

void
na_plugin_addr_unref_locked(struct na_addr *addr)
{
    struct na_plugin_addr *head = na_plugin_addr_head(addr);

    if (qs_atomic_fetch_sub(&head->refcount, 1, memory_order_acq_rel) != 1)
        return;
    LIST_REMOVE(head, entry);
    free(addr);
}

void
na_plugin_addr_unref(struct na_addr *addr)
{
    struct na_plugin_addr *head = na_plugin_addr_head(addr);
    unsigned int r =
        atomic_load_explicit(&head->refcount, memory_order_relaxed);
    pthread_mutex_t *lock;

    /* A reference that is not the last goes without the lock: only the
     * last one, dropped under the lock, takes the address off its list,
     * and a lookup that finds it there holds the same lock, so the count
     * seen here can only fall to 1, never to 0. A target's handle drops
     * its request's source this way on every RPC. */
    while (r > 1)
        if (qs_atomic_cas_uint(&head->refcount, &r, r - 1, memory_order_release,
                               memory_order_relaxed))
            return;
    lock = head->lock; /* the address may be gone after the unref */
    pthread_mutex_lock(lock);
    na_plugin_addr_unref_locked(addr);
    pthread_mutex_unlock(lock);
}

void
na_plugin_addr_list_clear(struct na_plugin_addr_list *list)
{
    struct na_plugin_addr *head;

    while ((head = LIST_FIRST(list)) != NULL) {
        LIST_REMOVE(head, entry);
        free(na_plugin_addr_of(head));
    }
}

void
na_plugin_addr_free_interned(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    if (addr != NULL)
        na_plugin_addr_unref(addr);
}

na_return_t
na_plugin_addr_dup_interned(na_class_t *na_class, na_addr_t addr,
                            na_addr_t *new_addr)
{
    (void) na_class;
    na_plugin_addr_ref(addr);
    *new_addr = addr;
    return NA_SUCCESS;
}

bool
na_plugin_iface_ipv4(const char *name, struct in_addr *ip)
{
    struct ifaddrs *ifs, *i;
    bool found = false;

    if (getifaddrs(&ifs) != 0)
        return false;
    for (i = ifs; i != NULL && !found; i = i->ifa_next) {
        struct in_addr a;

        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
            continue;
        a = ((struct sockaddr_in *) (void *) i->ifa_addr)->sin_addr;
        if (name != NULL ? strcmp(i->ifa_name, name) != 0
                         : (ntohl(a.s_addr) >> 24) == 127)
            continue;
        *ip = a;
        found = true;
    }
    freeifaddrs(ifs);
    return found;
}

na_return_t
na_plugin_errno_to_na(int err)
{
    switch (err) {
    case 0:
        return NA_SUCCESS;
    case EPERM:
        return NA_PERMISSION;
    case EACCES:
    case EKEYREJECTED:
        return NA_ACCESS;
    case ENOENT:
        return NA_NOENTRY;
    case EINTR:
        return NA_INTERRUPT;
    case EAGAIN:
        return NA_AGAIN;
    case ENOMEM:
    case EMFILE:
    case ENOSPC:
    case ENOBUFS:
        return NA_NOMEM;
    case EFAULT:
        return NA_FAULT;
    case EBUSY:
        return NA_BUSY;
    case ENODEV:
        return NA_NODEV;
    case E2BIG:
    case EBADF:
    case EINVAL:
        return NA_INVALID_ARG;
    case EOVERFLOW:
        return NA_OVERFLOW;
    case EMSGSIZE:
        return NA_MSGSIZE;
    case ENOPROTOOPT:
    case ENOSYS:
        return NA_PROTONOSUPPORT;
    case EOPNOTSUPP:
        return NA_OPNOTSUPPORTED;
    case EADDRINUSE:
        return NA_ADDRINUSE;
    case EADDRNOTAVAIL:
        return NA_ADDRNOTAVAIL;
    case ENETDOWN:
    case ENETUNREACH:
    case ECONNABORTED:
    case ECONNRESET:
    case ENOTCONN:
    case ESHUTDOWN:
    case ECONNREFUSED:
    case EHOSTDOWN:
    case EHOSTUNREACH:
        return NA_HOSTUNREACH;
    case ETIMEDOUT:
        return NA_TIMEOUT;
    case ECANCELED:
        return NA_CANCELED;
    default:
        return NA_IO_ERROR;
    }
}

na_return_t
na_plugin_errno_error(const char *subsys, int err, const char *what)
{
    na_return_t ret = na_plugin_errno_to_na(err);

    qs_log(subsys, QS_LOG_ERROR, "%s: %s (errno %d, %s)", what, strerror(err),
           err, NA_Error_to_string(ret));
    return ret;
}
