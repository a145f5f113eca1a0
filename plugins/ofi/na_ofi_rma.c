/*
 * Memory handles and one-sided RMA of the ofi plugin.
 *
 * A local handle describes caller memory and, once registered, carries the
 * provider's key. A peer learns it through serialization: a fixed 32-byte
 * record of version, access flags, base address, length and key, in
 * little-endian byte order. Deserialization treats those bytes as hostile.
 * Put and get check both ranges and the remote access flags before posting,
 * and the provider enforces the key on the target.
 */
#include "na_ofi_internal.h"

#include <stdlib.h>
#include <string.h>

#define NA_OFI_MEM_SER_VERSION 1
#define NA_OFI_MEM_SER_SIZE 32

/* How many keys to try when the provider reports one as taken. */
#define NA_OFI_MR_KEY_TRIES 16

static na_return_t
na_ofi_mem_handle_create(na_class_t *na_class, void *buf, size_t buf_size,
                         unsigned long flags, na_mem_handle_t *mem_handle)
{
    struct na_mem_handle *mh;

    (void) na_class;
    if ((flags & ~(unsigned long) NA_MEM_READWRITE) != 0 || flags == 0 ||
        (buf == NULL && buf_size != 0))
        return NA_INVALID_ARG;
    mh = calloc(1, sizeof(*mh));
    if (mh == NULL)
        return NA_NOMEM;
    mh->base = (uint64_t) (uintptr_t) buf;
    mh->len = buf_size;
    mh->flags = (uint32_t) flags;
    *mem_handle = mh;
    return NA_SUCCESS;
}

static void
na_ofi_mem_handle_free(na_class_t *na_class, na_mem_handle_t mem_handle)
{
    if (mem_handle == NULL)
        return;
    if (mem_handle->mr != NULL) {
        na_ofi_shm_keys_remove(na_ofi_class(na_class), mem_handle);
        fi_close(&mem_handle->mr->fid);
    }
    free(mem_handle);
}

/* Local access is always granted; remote access follows the NA flags. */
static uint64_t
na_ofi_mr_access(uint32_t flags)
{
    uint64_t access = FI_READ | FI_WRITE;

    if (flags & NA_MEM_READ_ONLY)
        access |= FI_REMOTE_READ;
    if (flags & NA_MEM_WRITE_ONLY)
        access |= FI_REMOTE_WRITE;
    return access;
}

static na_return_t
na_ofi_mem_register(na_class_t *na_class, na_mem_handle_t mh,
                    enum na_mem_type mem_type, uint64_t device)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    int rc = -FI_ENOKEY;

    (void) device;
    if (mh->remote || mh->mr != NULL)
        return NA_INVALID_ARG;
    if (mem_type != NA_MEM_TYPE_HOST && mem_type != NA_MEM_TYPE_UNKNOWN)
        return NA_OPNOTSUPPORTED;
    if (mh->len == 0)
        return NA_SUCCESS; /* nothing a peer could reach */
    for (int i = 0; i < NA_OFI_MR_KEY_TRIES && rc == -FI_ENOKEY; i++) {
        uint64_t key =
            cls->mr_prov_key ? 0 : atomic_fetch_add(&cls->next_mr_key, 1);
        rc = fi_mr_reg(cls->domain, (void *) (uintptr_t) mh->base, mh->len,
                       na_ofi_mr_access(mh->flags), 0, key, 0, &mh->mr, NULL);
    }
    if (rc != 0) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR, "fi_mr_reg of %llu bytes: %s",
               (unsigned long long) mh->len, fi_strerror(-rc));
        mh->mr = NULL;
        return na_ofi_error_to_na(-rc);
    }
    mh->key = fi_mr_key(mh->mr);
    if (mh->key == FI_KEY_NOTAVAIL) {
        fi_close(&mh->mr->fid);
        mh->mr = NULL;
        mh->key = 0;
        return NA_PROTOCOL_ERROR;
    }
    if (cls->shm)
        na_ofi_shm_keys_add(cls, mh);
    return NA_SUCCESS;
}

static na_return_t
na_ofi_mem_deregister(na_class_t *na_class, na_mem_handle_t mh)
{
    int rc;

    if (mh->remote)
        return NA_INVALID_ARG;
    if (mh->mr == NULL)
        return NA_SUCCESS;
    na_ofi_shm_keys_remove(na_ofi_class(na_class), mh);
    rc = fi_close(&mh->mr->fid);
    mh->mr = NULL;
    mh->key = 0;
    return rc == 0 ? NA_SUCCESS : na_ofi_error_to_na(-rc);
}

static void
na_ofi_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t
na_ofi_get_le64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v |= (uint64_t) p[i] << (8 * i);
    return v;
}

/*
 * Layout: 0 version, 1 flags, 2..7 zero, 8..15 base, 16..23 length,
 * 24..31 key.
 */
static na_return_t
na_ofi_mem_handle_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                            na_mem_handle_t mh)
{
    uint8_t *p = buf;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, NA_OFI_MEM_SER_SIZE))
        return NA_OVERFLOW;
    memset(p, 0, NA_OFI_MEM_SER_SIZE);
    p[0] = NA_OFI_MEM_SER_VERSION;
    p[1] = (uint8_t) mh->flags;
    na_ofi_put_le64(p + 8, mh->base);
    na_ofi_put_le64(p + 16, mh->len);
    na_ofi_put_le64(p + 24, mh->key);
    return NA_SUCCESS;
}

static na_return_t
na_ofi_mem_handle_deserialize(na_class_t *na_class, na_mem_handle_t *mem_handle,
                              const void *buf, size_t buf_size)
{
    const uint8_t *p = buf;
    struct na_mem_handle *mh;
    uint64_t base, len;

    (void) na_class;
    if (buf_size < NA_OFI_MEM_SER_SIZE)
        return NA_MSGSIZE;
    if (p[0] != NA_OFI_MEM_SER_VERSION || p[1] == 0 ||
        (p[1] & ~NA_MEM_READWRITE) != 0)
        return NA_PROTOCOL_ERROR;
    for (int i = 2; i < 8; i++)
        if (p[i] != 0)
            return NA_PROTOCOL_ERROR;
    base = na_ofi_get_le64(p + 8);
    len = na_ofi_get_le64(p + 16);
    if (len > UINT64_MAX - base)
        return NA_PROTOCOL_ERROR; /* the region would wrap around */
    mh = calloc(1, sizeof(*mh));
    if (mh == NULL)
        return NA_NOMEM;
    mh->base = base;
    mh->len = len;
    mh->key = na_ofi_get_le64(p + 24);
    mh->flags = p[1];
    mh->remote = true;
    *mem_handle = mh;
    return NA_SUCCESS;
}

/*
 * Checks shared by put and get, then the op is filled in. `need` is the
 * NA access the remote handle must grant.
 */
static na_return_t
na_ofi_rma_start(struct na_ofi_class *cls, struct na_op_id *op,
                 const struct na_op_desc *desc, uint32_t need)
{
    const struct na_mem_handle *local = desc->local_mem_handle;
    const struct na_mem_handle *remote = desc->remote_mem_handle;
    size_t size = desc->data_size;
    na_return_t ret;

    if (local->remote)
        return NA_INVALID_ARG;
    ret = na_plugin_rma_check(desc, local->len, remote->len, remote->flags);
    if (ret != NA_SUCCESS)
        return ret;
    if (!remote->remote && remote->mr == NULL && size != 0)
        return NA_INVALID_ARG; /* our own region, never registered */
    if (cls->shm && size != 0) {
        /* libfabric's shm would never complete it: refuse it here. */
        ret = na_ofi_shm_keys_check(cls, desc->addr, remote->key,
                                    (cls->mr_virt_addr ? remote->base : 0) +
                                        desc->remote_offset,
                                    size, need);
        if (ret != NA_SUCCESS)
            return ret;
    }
    na_ofi_op_init(op, desc, desc->addr);
    op->u.rma.local = (void *) (uintptr_t) (local->base + desc->local_offset);
    op->u.rma.remote =
        (cls->mr_virt_addr ? remote->base : 0) + desc->remote_offset;
    op->u.rma.key = remote->key;
    op->u.rma.size = size;
    return NA_SUCCESS;
}

/* Put completes once the data is placed at the target, not merely sent,
 * so a message the caller sends afterwards can announce it. */
static int
na_ofi_post_put(struct na_op_id *op)
{
    struct iovec iov = {.iov_base = op->u.rma.local, .iov_len = op->u.rma.size};
    struct fi_rma_iov riov = {
        .addr = op->u.rma.remote, .len = op->u.rma.size, .key = op->u.rma.key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = op->addr->fi_addr,
        .rma_iov = &riov,
        .rma_iov_count = 1,
        .context = &op->hdr.fi_ctx,
    };

    return (int) fi_writemsg(na_ofi_op_class(op)->ep, &msg,
                             FI_COMPLETION | FI_DELIVERY_COMPLETE);
}

static int
na_ofi_post_get(struct na_op_id *op)
{
    return (int) fi_read(na_ofi_op_class(op)->ep, op->u.rma.local,
                         op->u.rma.size, NULL, op->addr->fi_addr,
                         op->u.rma.remote, op->u.rma.key, &op->hdr.fi_ctx);
}

/* Put and get: the remote context id plays no part in RMA here. */
static na_return_t
na_ofi_rma(na_class_t *na_class, const struct na_op_desc *desc, na_op_id_t *op)
{
    struct na_ofi_class *cls = na_ofi_class(na_class);
    bool put = desc->type == NA_CB_PUT;
    na_return_t ret;

    ret = na_ofi_rma_start(cls, op, desc,
                           put ? NA_MEM_WRITE_ONLY : NA_MEM_READ_ONLY);
    if (ret != NA_SUCCESS)
        return ret;
    if (desc->data_size == 0) {
        /* Nothing to move; still complete through the queue. */
        na_ofi_op_complete(op, NA_SUCCESS);
        na_ofi_wake(cls);
        return NA_SUCCESS;
    }
    return na_ofi_op_submit(op, put ? na_ofi_post_put : na_ofi_post_get);
}

const struct na_mem_ops na_ofi_mem_ops = {
    .handle_create = na_ofi_mem_handle_create,
    .handle_free = na_ofi_mem_handle_free,
    .mem_register = na_ofi_mem_register,
    .mem_deregister = na_ofi_mem_deregister,
    .handle_serialize = na_ofi_mem_handle_serialize,
    .handle_deserialize = na_ofi_mem_handle_deserialize,
    .rma = na_ofi_rma,
};
