/*
 * RMA through the rings, for hosts where the kernel refuses
 * process_vm_readv/writev between our processes (Yama ptrace_scope,
 * containers without CAP_SYS_PTRACE). QS_SM_RMA chooses at run time:
 * "auto" (the default) copies with process_vm_* and moves a connection to
 * ring records the first time the kernel answers EPERM; "msg" uses ring
 * records from the start (the tests force it this way); "vm" never does.
 *
 * The target's progress serves the copy, as on a network without RDMA:
 *
 *   get:  origin -> GET_REQ (whole range); target -> GET_DATA chunks, or
 *         DONE with an error
 *   put:  origin -> PUT_DATA chunks; target -> DONE after the last chunk,
 *         or DONE with an error
 *
 * Every record names the whole remote range (slot, generation, base,
 * total), and the target checks it against its own live region table
 * before it reads or writes a byte, so a forged, stale or too-long handle
 * touches nothing, exactly as on the process_vm path. The origin matches
 * a record to its operation by token (a number the connection gives each
 * operation, never reused, so a late record cannot reach the next use of
 * an op id); a record for an operation that is gone (cancelled, failed)
 * is dropped.
 * Records that cannot be pushed for lack of ring room wait on rma_out, in
 * order, and progress retries them. A dead peer fails rma_pending with
 * NA_HOSTUNREACH (na_sm_peer_failed), without a deadline.
 */
#include "na_sm_internal.h"

#include <stdlib.h>
#include <string.h>

/* Data bytes per record: a 1 MiB ring holds about 15 in flight. */
#define NA_SM_RMA_CHUNK (64u * 1024u)

enum na_sm_rma_type {
    NA_SM_RMA_GET_REQ = 1,
    NA_SM_RMA_GET_DATA = 2,
    NA_SM_RMA_PUT_DATA = 3,
    NA_SM_RMA_DONE = 4
};

/* The payload of an NA_SM_REC_RMA record, before its data. */
struct na_sm_rma_wire {
    uint32_t type;
    int32_t status; /* DONE */
    uint64_t token;
    uint32_t slot;
    uint32_t pad;
    uint64_t gen;
    uint64_t base; /* the whole remote range */
    uint64_t total;
    uint64_t addr; /* this record's part of it (GET_DATA, PUT_DATA) */
    uint64_t len;
};

/* A record to push: `w` as it will go, advanced chunk by chunk. */
struct na_sm_rma_out {
    TAILQ_ENTRY(na_sm_rma_out) entry;
    struct na_sm_rma_wire w;
    uint64_t left;       /* GET_DATA, PUT_DATA: bytes still to send */
    struct na_op_id *op; /* PUT_DATA: ours, whose data we send */
};

enum na_sm_rma_mode
na_sm_rma_mode_from_env(void)
{
    const char *v = getenv("QS_SM_RMA");

    if (v == NULL || v[0] == '\0' || strcmp(v, "auto") == 0)
        return NA_SM_RMA_AUTO;
    if (strcmp(v, "msg") == 0)
        return NA_SM_RMA_MSG;
    if (strcmp(v, "vm") == 0)
        return NA_SM_RMA_VM;
    na_plugin_log_error("sm", "QS_SM_RMA=\"%s\" is not auto, vm or msg: auto",
                        v);
    return NA_SM_RMA_AUTO;
}

static void
na_sm_rma_out_queue(struct na_sm_conn *conn, const struct na_sm_rma_wire *w,
                    uint64_t left, struct na_op_id *op)
{
    struct na_sm_rma_out *o = calloc(1, sizeof(*o));

    if (o == NULL) {
        /* Without the record the operation would wait forever. */
        na_plugin_log_error("sm", "out of memory: RMA connection ended");
        conn->dead = true;
        return;
    }
    o->w = *w;
    o->left = left;
    o->op = op;
    if (op != NULL)
        op->u.rma.out = o;
    TAILQ_INSERT_TAIL(&conn->rma_out, o, entry);
}

static void
na_sm_rma_done(struct na_sm_conn *conn, uint64_t token, na_return_t ret)
{
    struct na_sm_rma_wire w = {
        .type = NA_SM_RMA_DONE, .status = (int32_t) ret, .token = token};

    na_sm_rma_out_queue(conn, &w, 0, NULL);
}

/* Push one record of `o`; true when `o` has nothing more to send. */
static bool
na_sm_rma_push_one(struct na_sm_conn *conn, struct na_sm_rma_out *o, bool *full)
{
    struct na_sm_rma_wire w = o->w;
    const void *data = NULL;
    na_return_t ret;

    *full = false;
    if (w.type == NA_SM_RMA_GET_REQ || w.type == NA_SM_RMA_DONE) {
        *full = !na_sm_ring_push(conn, NA_SM_REC_RMA, 0, 0, 0, &w, sizeof(w),
                                 NULL, 0);
        return !*full;
    }
    w.len = o->left < NA_SM_RMA_CHUNK ? o->left : NA_SM_RMA_CHUNK;
    if (w.type == NA_SM_RMA_GET_DATA) {
        /* Our memory: the region may have been deregistered since. */
        ret = na_sm_region_check(conn->cls->regs, w.slot, w.gen, w.base,
                                 w.total, false);
        if (ret != NA_SUCCESS) {
            o->w = (struct na_sm_rma_wire){.type = NA_SM_RMA_DONE,
                                           .status = (int32_t) ret,
                                           .token = w.token};
            return na_sm_rma_push_one(conn, o, full);
        }
        data = (const void *) (uintptr_t) w.addr;
    } else {
        data = o->op->u.rma.local + (w.addr - w.base);
    }
    if (!na_sm_ring_push(conn, NA_SM_REC_RMA, 0, 0, 0, &w, sizeof(w), data,
                         (size_t) w.len)) {
        *full = true;
        return false;
    }
    o->w.addr += w.len;
    o->left -= w.len;
    return o->left == 0;
}

void
na_sm_rma_msg_progress(struct na_sm_conn *conn)
{
    struct na_sm_rma_out *o;
    bool full = false;

    while (!conn->dead && (o = TAILQ_FIRST(&conn->rma_out)) != NULL) {
        if (!na_sm_rma_push_one(conn, o, &full)) {
            if (full) {
                atomic_store(&conn->tx->tx_blocked, 1);
                return;
            }
            continue;
        }
        TAILQ_REMOVE(&conn->rma_out, o, entry);
        if (o->op != NULL)
            o->op->u.rma.out = NULL;
        free(o);
    }
}

void
na_sm_rma_msg_start(struct na_op_id *op)
{
    struct na_sm_conn *conn = op->conn;
    struct na_sm_rma_wire w = {.token = ++conn->rma_seq,
                               .slot = op->u.rma.rh.slot,
                               .gen = op->u.rma.rh.gen,
                               .base = op->u.rma.remote,
                               .total = op->u.rma.size,
                               .addr = op->u.rma.remote};

    op->u.rma.done = 0;
    op->u.rma.token = w.token;
    op->u.rma.out = NULL;
    /* From rma_wait the op is started already; from a post it starts
     * here, unless a cancel came first. */
    if (!na_sm_op_wait(&conn->rma_pending, op))
        return;
    if (op->u.rma.put) {
        w.type = NA_SM_RMA_PUT_DATA;
        na_sm_rma_out_queue(conn, &w, op->u.rma.size, op);
    } else {
        w.type = NA_SM_RMA_GET_REQ;
        na_sm_rma_out_queue(conn, &w, 0, NULL);
    }
    na_sm_rma_msg_progress(conn);
}

bool
na_sm_rma_msg_cancelable(const struct na_op_id *op)
{
    if (op->u.rma.put)
        return op->u.rma.out != NULL &&
               op->u.rma.out->w.addr == op->u.rma.out->w.base;
    return op->u.rma.done == 0;
}

/* Take `op` off the connection: its pending entry and unsent data. */
void
na_sm_rma_msg_cancel(struct na_op_id *op)
{
    struct na_sm_conn *conn = op->conn;

    na_op_list_remove(op);
    if (op->u.rma.out != NULL) {
        TAILQ_REMOVE(&conn->rma_out, op->u.rma.out, entry);
        free(op->u.rma.out);
        op->u.rma.out = NULL;
    }
}

static void
na_sm_rma_msg_finish(struct na_op_id *op, na_return_t ret)
{
    na_sm_rma_msg_cancel(op);
    op->conn = NULL;
    na_sm_op_complete(op, ret);
}

void
na_sm_rma_msg_fail(struct na_sm_conn *conn)
{
    struct na_op_id *op;

    while ((op = na_op_list_first(&conn->rma_pending)) != NULL)
        na_sm_rma_msg_finish(op, NA_HOSTUNREACH);
}

void
na_sm_rma_msg_conn_free(struct na_sm_conn *conn)
{
    struct na_sm_rma_out *o;

    na_sm_rma_msg_fail(conn);
    while ((o = TAILQ_FIRST(&conn->rma_out)) != NULL) {
        TAILQ_REMOVE(&conn->rma_out, o, entry);
        free(o);
    }
}

static struct na_op_id *
na_sm_rma_find(struct na_sm_conn *conn, uint64_t token)
{
    struct na_op_id *op;

    for (op = na_op_list_first(&conn->rma_pending); op != NULL;
         op = na_op_list_next(op)) {
        if (op->u.rma.token == token)
            return op;
    }
    return NULL;
}

/* The statuses a target may answer; anything else is a protocol error. */
static bool
na_sm_rma_status_valid(int32_t s)
{
    return s == NA_SUCCESS || s == NA_ACCESS || s == NA_PERMISSION ||
           s == NA_FAULT || s == NA_NOMEM;
}

/* The origin's side of GET_DATA and DONE. */
static bool
na_sm_rma_origin_recv(struct na_sm_conn *conn, const struct na_sm_rma_wire *w,
                      const uint8_t *data, size_t dlen)
{
    struct na_op_id *op = na_sm_rma_find(conn, w->token);
    uint64_t off;

    if (w->type == NA_SM_RMA_DONE) {
        if (!na_sm_rma_status_valid(w->status) || dlen != 0)
            return false;
        /* A get ends with its last byte, never with a DONE that says
         * success. */
        if (op != NULL && !op->u.rma.put && w->status == NA_SUCCESS)
            return false;
        if (op != NULL)
            na_sm_rma_msg_finish(op, (na_return_t) w->status);
        return true;
    }
    if (dlen != w->len)
        return false;
    if (op == NULL)
        return true; /* cancelled or failed: the data goes nowhere */
    off = w->addr - op->u.rma.remote;
    if (op->u.rma.put || w->addr < op->u.rma.remote || off > op->u.rma.size ||
        w->len > op->u.rma.size - off ||
        w->len > op->u.rma.size - op->u.rma.done)
        return false;
    memcpy(op->u.rma.local + off, data, dlen);
    op->u.rma.done += dlen;
    if (op->u.rma.done == op->u.rma.size)
        na_sm_rma_msg_finish(op, NA_SUCCESS);
    return true;
}

/* The target's side of GET_REQ and PUT_DATA: check, then serve. */
static bool
na_sm_rma_target_recv(struct na_sm_conn *conn, const struct na_sm_rma_wire *w,
                      const uint8_t *data, size_t dlen)
{
    bool put = w->type == NA_SM_RMA_PUT_DATA;
    na_return_t ret;

    if (w->total == 0 || w->base + w->total < w->base)
        return false;
    if (put && (dlen != w->len || w->len == 0 || w->addr < w->base ||
                w->addr - w->base > w->total ||
                w->len > w->total - (w->addr - w->base)))
        return false;
    if (!put && dlen != 0)
        return false;
    ret = na_sm_region_check(conn->cls->regs, w->slot, w->gen, w->base,
                             w->total, put);
    if (ret != NA_SUCCESS) {
        na_sm_rma_done(conn, w->token, ret);
    } else if (put) {
        memmove((void *) (uintptr_t) w->addr, data, dlen);
        if (w->addr + w->len == w->base + w->total)
            na_sm_rma_done(conn, w->token, NA_SUCCESS);
    } else {
        struct na_sm_rma_wire d = *w;
        d.type = NA_SM_RMA_GET_DATA;
        d.addr = w->base;
        na_sm_rma_out_queue(conn, &d, w->total, NULL);
    }
    na_sm_rma_msg_progress(conn);
    return true;
}

/* One NA_SM_REC_RMA record from the ring (bytes the peer wrote: copied
 * before they are checked). false: malformed, end the connection. */
bool
na_sm_rma_msg_recv(struct na_sm_conn *conn, const uint8_t *rec, size_t len)
{
    struct na_sm_rma_wire w;

    if (len < sizeof(w))
        return false;
    memcpy(&w, rec, sizeof(w));
    switch (w.type) {
    case NA_SM_RMA_GET_REQ:
    case NA_SM_RMA_PUT_DATA:
        return na_sm_rma_target_recv(conn, &w, rec + sizeof(w),
                                     len - sizeof(w));
    case NA_SM_RMA_GET_DATA:
    case NA_SM_RMA_DONE:
        return na_sm_rma_origin_recv(conn, &w, rec + sizeof(w),
                                     len - sizeof(w));
    default:
        return false;
    }
}
