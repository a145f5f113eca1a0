/*
 * Memory handles and one-sided RMA (RDMA write for put, RDMA read for get).
 *
 * A local handle describes the caller's buffer and, once registered, its
 * memory region. The access a peer is granted follows the handle's flags:
 * NA_MEM_READ_ONLY lets peers read (and keeps the buffer read-only locally,
 * so it can be a put source but not a get destination), NA_MEM_WRITE_ONLY
 * lets peers write, NA_MEM_READWRITE both. A serialized handle carries the
 * address, length, remote key and flags; a deserialized one is only a
 * description of a peer's memory and may only be an RMA target.
 *
 * Ranges and permissions are checked at post time against both handles, so
 * a bad request is refused before it can reach the device. What the device
 * still rejects (a stale or revoked key) comes back as an error completion
 * and, as on any reliable connection, breaks that connection.
 */
#include "na_verbs_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool
na_verbs_mem_flags_ok(unsigned long flags)
{
    return flags == NA_MEM_READ_ONLY || flags == NA_MEM_WRITE_ONLY ||
           flags == NA_MEM_READWRITE;
}

static na_return_t
na_verbs_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                           unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *mh;

    (void) na_class;
    if ((buf == NULL && buf_size > 0) || !na_verbs_mem_flags_ok(flags))
        return NA_INVALID_ARG;
    mh = calloc(1, sizeof(*mh));
    if (mh == NULL)
        return NA_NOMEM;
    mh->flags = flags;
    mh->buf = buf;
    mh->len = buf_size;
    *mem_handle = mh;
    return NA_SUCCESS;
}

static na_return_t
na_verbs_mem_register(na_class_t *na_class, na_mem_handle_t mem_handle,
                      enum na_mem_type mem_type, uint64_t device)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    int access = 0;

    (void) device;
    if (mem_handle == NULL || mem_handle->remote)
        return NA_INVALID_ARG;
    if (mem_type != NA_MEM_TYPE_HOST && mem_type != NA_MEM_TYPE_UNKNOWN)
        return NA_OPNOTSUPPORTED;
    if (mem_handle->mr != NULL)
        return NA_SUCCESS;
    /* The device refuses local writes to memory registered without
     * LOCAL_WRITE, and remote writes need it too; a read-only handle is
     * registered without it so read-only pages can be registered at all. */
    if (mem_handle->flags & NA_MEM_READ_ONLY)
        access |= IBV_ACCESS_REMOTE_READ;
    if (mem_handle->flags != NA_MEM_READ_ONLY)
        access |= IBV_ACCESS_LOCAL_WRITE;
    if (mem_handle->flags & NA_MEM_WRITE_ONLY)
        access |= IBV_ACCESS_REMOTE_WRITE;
    /* ibv_reg_mr refuses a zero-length region; register one byte so an
     * empty handle still has keys (no RMA can reach past its length). */
    mem_handle->mr = ibv_reg_mr(cls->pd, mem_handle->buf,
                                mem_handle->len ? mem_handle->len : 1, access);
    if (mem_handle->mr == NULL) {
        NA_VERBS_LOG("ibv_reg_mr(%zu bytes): %s", mem_handle->len,
                     strerror(errno));
        return errno == ENOMEM ? NA_NOMEM : NA_FAULT;
    }
    pthread_mutex_lock(&cls->lock);
    LIST_INSERT_HEAD(&cls->mem_regs, mem_handle, entry);
    pthread_mutex_unlock(&cls->lock);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_mem_deregister(na_class_t *na_class, na_mem_handle_t mem_handle)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);

    if (mem_handle == NULL || mem_handle->remote)
        return NA_INVALID_ARG;
    if (mem_handle->mr == NULL)
        return NA_SUCCESS;
    pthread_mutex_lock(&cls->lock);
    LIST_REMOVE(mem_handle, entry);
    pthread_mutex_unlock(&cls->lock);
    if (ibv_dereg_mr(mem_handle->mr) != 0) {
        NA_VERBS_LOG("ibv_dereg_mr: %s", strerror(errno));
        return NA_IO_ERROR;
    }
    mem_handle->mr = NULL;
    return NA_SUCCESS;
}

static void
na_verbs_mem_handle_free(na_class_t *na_class, na_mem_handle_t mem_handle)
{
    if (mem_handle == NULL)
        return;
    if (!mem_handle->remote && mem_handle->mr != NULL)
        (void) na_verbs_mem_deregister(na_class, mem_handle);
    free(mem_handle);
}

static na_return_t
na_verbs_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                              na_mem_handle_t mem_handle)
{
    struct na_verbs_mem_desc desc;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_VERBS_MEM_SERIALIZE_SIZE))
        return NA_OVERFLOW;
    if (mem_handle->remote) {
        desc = mem_handle->desc;
    } else {
        /* Without a registration there is no key a peer could use. */
        if (mem_handle->mr == NULL) {
            NA_VERBS_LOG("cannot serialize a memory handle that is not "
                         "registered");
            return NA_INVALID_ARG;
        }
        desc.addr = (uintptr_t) mem_handle->buf;
        desc.len = mem_handle->len;
        desc.rkey = mem_handle->mr->rkey;
        desc.flags = (uint8_t) mem_handle->flags;
    }
    na_verbs_mem_encode(buf, &desc);
    return NA_SUCCESS;
}

static na_return_t
na_verbs_mem_handle_deserialize(na_class_t *na_class,
                                na_mem_handle_t *mem_handle, const void *buf,
                                size_t buf_size)
{
    struct na_verbs_mem_desc desc;
    struct na_mem_handle *mh;
    na_return_t ret;

    (void) na_class;
    ret = na_verbs_mem_decode(buf, buf_size, &desc);
    if (ret != NA_SUCCESS)
        return ret;
    mh = calloc(1, sizeof(*mh));
    if (mh == NULL)
        return NA_NOMEM;
    mh->remote = true;
    mh->flags = desc.flags;
    mh->len = (size_t) desc.len;
    mh->desc = desc;
    *mem_handle = mh;
    return NA_SUCCESS;
}

/* offset + size inside a region of len bytes, without overflow. */
/* Check both sides of an RMA and fill the op's addresses and keys. */
static na_return_t
na_verbs_rma_prepare(na_op_id_t *op, const struct na_op_desc *desc,
                     const struct ibv_device_attr *attr)
{
    bool is_put = desc->type == NA_CB_PUT;
    struct na_mem_handle *local = desc->local_mem_handle;
    struct na_mem_handle *remote = desc->remote_mem_handle;
    na_offset_t local_offset = desc->local_offset;
    na_offset_t remote_offset = desc->remote_offset;
    size_t size = desc->data_size;
    na_return_t ret;

    if (local->remote)
        return NA_INVALID_ARG;
    if (local->mr == NULL) {
        NA_VERBS_LOG("RMA on a local memory handle that is not registered");
        return NA_INVALID_ARG;
    }
    ret = na_plugin_rma_check(desc, local->len, remote->len, remote->flags);
    if (ret != NA_SUCCESS)
        return ret;
    /* A get also writes into the local buffer, which a read-only handle
     * does not allow. */
    if (!is_put && local->flags == NA_MEM_READ_ONLY)
        return NA_PERMISSION;
    if (size > attr->max_mr_size || size > UINT32_MAX)
        return NA_MSGSIZE;
    op->local_addr = (uintptr_t) local->buf + local_offset;
    op->lkey = local->mr->lkey;
    if (remote->remote) {
        op->remote_addr = remote->desc.addr + remote_offset;
        op->rkey = remote->desc.rkey;
    } else {
        if (remote->mr == NULL)
            return NA_INVALID_ARG;
        op->remote_addr = (uintptr_t) remote->buf + remote_offset;
        op->rkey = remote->mr->rkey;
    }
    op->length = size;
    return NA_SUCCESS;
}

/*
 * RMA on our own address is a copy, checked as the device would check it:
 * the remote key must name a region this class registered, the range must
 * lie inside it and the region must grant the access. A class that does
 * not listen could not connect to itself to let the device do it.
 */
static na_return_t
na_verbs_rma_self(struct na_verbs_class *cls, na_op_id_t *op, bool is_put)
{
    struct na_mem_handle *mh;

    LIST_FOREACH(mh, &cls->mem_regs, entry)
    {
        uintptr_t base = (uintptr_t) mh->buf;

        if (mh->mr->rkey != op->rkey)
            continue;
        if (op->remote_addr < base ||
            !na_plugin_range_ok(mh->len, op->remote_addr - base, op->length))
            return NA_ACCESS;
        if ((mh->flags & (is_put ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY)) == 0)
            return NA_ACCESS;
        if (op->length == 0)
            return NA_SUCCESS;
        if (is_put)
            memmove((void *) (uintptr_t) op->remote_addr,
                    (const void *) (uintptr_t) op->local_addr, op->length);
        else
            memmove((void *) (uintptr_t) op->local_addr,
                    (const void *) (uintptr_t) op->remote_addr, op->length);
        return NA_SUCCESS;
    }
    return NA_ACCESS;
}

int
na_verbs_rma_post(struct na_verbs_conn *conn, na_op_id_t *op)
{
    struct ibv_sge sge = {
        .addr = op->local_addr,
        .length = (uint32_t) op->length,
        .lkey = op->lkey,
    };
    struct ibv_send_wr wr =
                           {
                               .wr_id = (uintptr_t) &op->wr,
                               .sg_list = &sge,
                               .num_sge = op->length > 0 ? 1 : 0,
                               .opcode = op->type == NA_CB_PUT
                                             ? IBV_WR_RDMA_WRITE
                                             : IBV_WR_RDMA_READ,
                               .send_flags = IBV_SEND_SIGNALED,
                               .wr.rdma = {.remote_addr = op->remote_addr,
                                           .rkey = op->rkey},
                           },
                       *bad;

    /* One send-queue slot stays free for a credit-only message. */
    if (conn->sq_used >= NA_VERBS_SQ_DEPTH - 1)
        return -1;
    op->wr =
        (struct na_verbs_wr){.kind = NA_VERBS_WR_RMA, .conn = conn, .op = op};
    na_op_list_remove(op);
    if (ibv_post_send(conn->id->qp, &wr, &bad) != 0) {
        na_verbs_op_complete(op, NA_IO_ERROR);
        na_verbs_conn_fail(conn, NA_IO_ERROR, "ibv_post_send failed");
        return 0;
    }
    op->state = NA_VERBS_OP_POSTED;
    conn->sq_used++;
    return 0;
}

void
na_verbs_rma_done(struct na_verbs_conn *conn, struct na_verbs_wr *wr,
                  const struct ibv_wc *wc)
{
    na_verbs_conn_wc_done(conn, wr->op, wc);
}

/* Put and get: the remote context id plays no part in RMA here. */
static na_return_t
na_verbs_rma(na_class_t *na_class, const struct na_op_desc *desc,
             na_op_id_t *op)
{
    struct na_verbs_class *cls = na_verbs_class(na_class);
    bool is_put = desc->type == NA_CB_PUT;
    na_addr_t remote_addr = desc->addr;
    na_return_t ret;

    pthread_mutex_lock(&cls->lock);
    na_verbs_op_start(op, desc);
    ret = na_verbs_rma_prepare(op, desc, &cls->dev_attr);
    if (ret != NA_SUCCESS) {
        na_verbs_op_abort(op);
        goto unlock;
    }
    na_verbs_addr_ref(remote_addr);
    op->addr = remote_addr;
    if (remote_addr->self)
        na_verbs_op_complete(op, na_verbs_rma_self(cls, op, is_put));
    else
        ret = na_verbs_conn_submit(cls, op);
    if (ret == NA_SUCCESS)
        na_verbs_op_started(op);
unlock:
    pthread_mutex_unlock(&cls->lock);
    return ret;
}

const struct na_mem_ops na_verbs_mem_ops = {
    .handle_create = na_verbs_mem_handle_create,
    .handle_free = na_verbs_mem_handle_free,
    .mem_register = na_verbs_mem_register,
    .mem_deregister = na_verbs_mem_deregister,
    .handle_serialize = na_verbs_mem_handle_serialize,
    .handle_deserialize = na_verbs_mem_handle_deserialize,
    .rma = na_verbs_rma,
};
