/*
 * RMA of the shared-memory plugin.
 *
 * Each class keeps a region table in a sealed memfd that its peers map
 * read-only (passed in the connection handshake). Registering a region
 * fills one entry and gives it a new non-zero generation; deregistering
 * clears the generation first. A memory handle names its entry by slot and
 * generation, so a handle that was forged, belongs to another peer or
 * outlived its registration fails the check against the target's live
 * table and completes with NA_ACCESS (or NA_PERMISSION) without touching
 * any memory. The copy itself is process_vm_readv/writev into the target
 * process (memcpy within one class).
 *
 * Serialized handle (40 bytes, native byte order: both ends share a node):
 *   u32 magic "QSMM", u32 flags, u32 slot, u32 zero, u64 generation,
 *   u64 base address, u64 length.
 */
#include "na_sm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define NA_SM_REG_BYTES (NA_SM_REG_MAX * sizeof(struct na_sm_reg_entry))

na_return_t
na_sm_regs_create(struct na_sm_class *cls)
{
    void *p;

    cls->reg_fd =
        memfd_create("quicksilver-sm-regions", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (cls->reg_fd < 0)
        return NA_NOMEM;
    if (ftruncate(cls->reg_fd, NA_SM_REG_BYTES) != 0 ||
        fcntl(cls->reg_fd, F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return NA_NOMEM;
    p = mmap(NULL, NA_SM_REG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
             cls->reg_fd, 0);
    if (p == MAP_FAILED)
        return NA_NOMEM;
    cls->regs = p;
    cls->reg_free = malloc(NA_SM_REG_MAX * sizeof(*cls->reg_free));
    if (cls->reg_free == NULL)
        return NA_NOMEM;
    for (uint32_t i = 0; i < NA_SM_REG_MAX; i++)
        cls->reg_free[i] = NA_SM_REG_MAX - 1 - i;
    cls->reg_free_count = NA_SM_REG_MAX;
    return NA_SUCCESS;
}

void
na_sm_regs_destroy(struct na_sm_class *cls)
{
    if (cls->regs != NULL)
        munmap(cls->regs, NA_SM_REG_BYTES);
    if (cls->reg_fd >= 0)
        close(cls->reg_fd);
    free(cls->reg_free);
}

static na_return_t
na_sm_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                        unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *h = calloc(1, sizeof(*h));

    (void) na_class;
    if (h == NULL)
        return NA_NOMEM;
    h->base = (uint64_t) (uintptr_t) buf;
    h->len = buf_size;
    h->flags = (uint32_t) flags;
    *mem_handle = h;
    return NA_SUCCESS;
}

static na_return_t
na_sm_mem_register(na_class_t *na_class, na_mem_handle_t h,
                   enum na_mem_type mem_type, uint64_t device)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_reg_entry *e;
    uint32_t slot;

    (void) device;
    if (mem_type != NA_MEM_TYPE_HOST && mem_type != NA_MEM_TYPE_UNKNOWN)
        return NA_OPNOTSUPPORTED;
    if (h->remote)
        return NA_INVALID_ARG;
    if (h->gen != 0)
        return NA_SUCCESS; /* already registered */
    pthread_mutex_lock(&cls->lock);
    if (cls->reg_free_count == 0) {
        pthread_mutex_unlock(&cls->lock);
        na_plugin_log_error("sm", "more than %u regions registered",
                            NA_SM_REG_MAX);
        return NA_NOMEM;
    }
    slot = cls->reg_free[--cls->reg_free_count];
    h->slot = slot;
    h->gen = ++cls->reg_gen;
    e = &cls->regs[slot];
    e->base = h->base;
    e->len = h->len;
    e->flags = h->flags;
    atomic_store_explicit(&e->gen, h->gen, memory_order_release);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_sm_mem_deregister(na_class_t *na_class, na_mem_handle_t h)
{
    struct na_sm_class *cls = na_sm_class(na_class);

    if (h->remote || h->gen == 0)
        return NA_SUCCESS;
    pthread_mutex_lock(&cls->lock);
    atomic_store_explicit(&cls->regs[h->slot].gen, 0, memory_order_release);
    cls->reg_free[cls->reg_free_count++] = h->slot;
    h->gen = 0;
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static void
na_sm_mem_handle_free(na_class_t *na_class, na_mem_handle_t h)
{
    if (h == NULL)
        return;
    (void) na_sm_mem_deregister(na_class, h);
    free(h);
}

static na_return_t
na_sm_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                           na_mem_handle_t h)
{
    uint32_t w[4] = {NA_SM_MEM_HANDLE_MAGIC, h->flags, h->slot, 0};
    uint8_t *p = buf;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_SM_MEM_HANDLE_SIZE))
        return NA_OVERFLOW;
    memcpy(p, w, sizeof(w));
    memcpy(p + 16, &h->gen, 8);
    memcpy(p + 24, &h->base, 8);
    memcpy(p + 32, &h->len, 8);
    return NA_SUCCESS;
}

/* Untrusted bytes: the result is only ever checked against a table. */
static na_return_t
na_sm_mem_handle_deserialize(na_class_t *na_class, na_mem_handle_t *mem_handle,
                             const void *buf, size_t buf_size)
{
    struct na_mem_handle *h;
    const uint8_t *p = buf;
    uint32_t w[4];

    (void) na_class;
    if (buf == NULL || buf_size < NA_SM_MEM_HANDLE_SIZE)
        return NA_MSGSIZE;
    memcpy(w, p, sizeof(w));
    if (w[0] != NA_SM_MEM_HANDLE_MAGIC || w[1] == 0 ||
        (w[1] & ~(uint32_t) NA_MEM_READWRITE) != 0 || w[3] != 0)
        return NA_PROTOCOL_ERROR;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NA_NOMEM;
    h->flags = w[1];
    h->slot = w[2];
    memcpy(&h->gen, p + 16, 8);
    memcpy(&h->base, p + 24, 8);
    memcpy(&h->len, p + 32, 8);
    h->remote = true;
    if (h->base + h->len < h->base) {
        free(h);
        return NA_PROTOCOL_ERROR;
    }
    *mem_handle = h;
    return NA_SUCCESS;
}

/* Check [lo, lo + size) against a live table entry (ours or a peer's). */
na_return_t
na_sm_region_check(const struct na_sm_reg_entry *tab, uint32_t slot,
                   uint64_t gen, uint64_t lo, uint64_t size, bool put)
{
    const struct na_sm_reg_entry *e;
    uint64_t g1, g2, base, len, flags;
    uint64_t hi = lo + size;

    if (tab == NULL || gen == 0 || slot >= NA_SM_REG_MAX)
        return NA_ACCESS;
    e = &tab[slot];
    g1 = atomic_load_explicit(&e->gen, memory_order_acquire);
    base = e->base;
    len = e->len;
    flags = e->flags;
    NA_SM_FENCE_ACQUIRE();
    g2 = atomic_load_explicit(&e->gen, memory_order_relaxed);
    if (g1 != gen || g2 != g1)
        return NA_ACCESS;
    if (hi < lo || lo < base || hi > base + len)
        return NA_ACCESS;
    if (!(flags & (put ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY)))
        return NA_PERMISSION;
    return NA_SUCCESS;
}

static na_return_t
na_sm_rma_check(const struct na_sm_reg_entry *tab, const struct na_op_id *op)
{
    return na_sm_region_check(tab, op->u.rma.rh.slot, op->u.rma.rh.gen,
                              op->u.rma.remote, op->u.rma.size, op->u.rma.put);
}

static na_return_t
na_sm_errno_to_na(struct na_sm_class *cls, int e)
{
    switch (e) {
    case ESRCH:
        return NA_HOSTUNREACH;
    case EPERM:
        if (!cls->ptrace_warned) {
            cls->ptrace_warned = true;
            na_plugin_log_error("sm", "process_vm_readv/writev refused "
                                      "(EPERM): RMA needs ptrace access to "
                                      "the peer (see "
                                      "/proc/sys/kernel/yama/ptrace_scope), "
                                      "or QS_SM_RMA=auto to copy through "
                                      "the rings instead");
        }
        return NA_PERMISSION;
    default:
        return na_plugin_errno_to_na(e);
    }
}

int
na_sm_vm_copy(pid_t pid, uint64_t local, uint64_t remote, uint64_t len,
              bool write)
{
    while (len != 0) {
        struct iovec l = {.iov_base = (void *) (uintptr_t) local,
                          .iov_len = len};
        struct iovec r = {.iov_base = (void *) (uintptr_t) remote,
                          .iov_len = len};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EFAULT;
        local += (uint64_t) n;
        remote += (uint64_t) n;
        len -= (uint64_t) n;
    }
    return 0;
}

/* 0, or the errno of the copy that failed. A large copy is offered to
 * the peer to help with, once the kernel has taken a first call; a
 * sleeping peer too: the record's wake-up costs a few microseconds, its
 * help far more than that from NA_SM_ASSIST_MIN on. */
static int
na_sm_rma_copy(struct na_sm_conn *conn, struct na_op_id *op)
{
    int e;

    if (conn->cls->assist_on && conn->cma_ok &&
        op->u.rma.size >= NA_SM_ASSIST_MIN)
        return na_sm_assist_copy(conn, op);
    e = na_sm_vm_copy(conn->pid, (uint64_t) (uintptr_t) op->u.rma.local,
                      op->u.rma.remote, op->u.rma.size, op->u.rma.put);
    if (e == 0)
        conn->cma_ok = true;
    return e;
}

/* Check and copy, then complete (lock held; the connection is ready). */
void
na_sm_rma_run(struct na_op_id *op)
{
    struct na_sm_class *cls = na_op_plugin_class(op);
    struct na_addr *peer = op->addr;
    na_return_t ret;

    if (peer->self) {
        ret = na_sm_rma_check(cls->regs, op);
        if (ret == NA_SUCCESS && op->u.rma.size != 0) {
            void *remote = (void *) (uintptr_t) op->u.rma.remote;
            if (op->u.rma.put)
                memmove(remote, op->u.rma.local, op->u.rma.size);
            else
                memmove(op->u.rma.local, remote, op->u.rma.size);
        }
    } else {
        struct na_sm_conn *conn = op->conn;
        if (conn->rma_msg && op->u.rma.size != 0) {
            /* The target checks the range against its own table. */
            na_sm_rma_msg_start(op);
            return;
        }
        ret = na_sm_rma_check(conn->peer_regs, op);
        if (ret == NA_SUCCESS && op->u.rma.size != 0) {
            int e = na_sm_rma_copy(conn, op);
            if (e == EPERM && cls->rma_mode == NA_SM_RMA_AUTO) {
                /* Nothing was copied: the kernel refused the first call.
                 * This peer's RMA goes through the rings from now on. */
                conn->rma_msg = true;
                na_sm_rma_msg_start(op);
                return;
            }
            ret = e == 0 ? NA_SUCCESS : na_sm_errno_to_na(cls, e);
        }
    }
    op->conn = NULL;
    na_sm_op_complete(op, ret);
}

/* Put and get: the remote context id plays no part in RMA here. */
static na_return_t
na_sm_rma(na_class_t *na_class, const struct na_op_desc *desc, na_op_id_t *op)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_mem_handle *lh = desc->local_mem_handle;
    struct na_mem_handle *rh = desc->remote_mem_handle;
    na_offset_t loff = desc->local_offset, roff = desc->remote_offset;
    size_t size = desc->data_size;
    struct na_addr *peer = desc->addr;
    bool put = desc->type == NA_CB_PUT;
    struct na_sm_conn *conn;
    na_return_t ret;

    if (lh->remote)
        return NA_INVALID_ARG;
    ret = na_plugin_rma_check(desc, lh->len, rh->len, rh->flags);
    if (ret != NA_SUCCESS)
        return ret;
    na_sm_op_init(op, desc, peer);
    op->u.rma.put = put;
    op->u.rma.local = (uint8_t *) (uintptr_t) (lh->base + loff);
    op->u.rma.remote = rh->base + roff;
    op->u.rma.size = size;
    op->u.rma.rh = *rh;
    pthread_mutex_lock(&cls->lock);
    if (peer->self) {
        na_sm_rma_run(op);
    } else if ((conn = na_sm_conn_get(cls, peer)) == NULL) {
        na_sm_op_complete(op, NA_HOSTUNREACH);
    } else if (!conn->ready) {
        op->conn = conn;
        (void) na_sm_op_wait(&conn->rma_wait, op);
    } else {
        op->conn = conn;
        na_sm_rma_run(op);
    }
    pthread_mutex_unlock(&cls->lock);
    na_sm_wake_local(cls);
    return NA_SUCCESS;
}

const struct na_mem_ops na_sm_mem_ops = {
    .handle_create = na_sm_mem_handle_create,
    .handle_free = na_sm_mem_handle_free,
    .mem_register = na_sm_mem_register,
    .mem_deregister = na_sm_mem_deregister,
    .handle_serialize = na_sm_mem_handle_serialize,
    .handle_deserialize = na_sm_mem_handle_deserialize,
    .rma = na_sm_rma,
};
