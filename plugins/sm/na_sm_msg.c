/*
 * Messages of the shared-memory plugin: the single-producer
 * single-consumer byte rings, sends, receives and their matching.
 *
 * A send copies its record into the connection's ring and completes at
 * once; when the ring is full it waits on the connection (in order) and is
 * retried by progress, woken by the consumer through the socket. A record
 * read from a ring is delivered to the first posted receive that matches
 * (unexpected: any; expected: same source, source context and tag), or is
 * copied to the context's backlog until one is posted.
 *
 * The ring lives in memory the peer can write: every header is copied
 * before it is checked, and a record that does not fit its ring ends the
 * connection as a protocol error.
 */
#include "na_sm_internal.h"

#include <stdlib.h>
#include <string.h>

#define NA_SM_DRAIN_MAX 256

static size_t
na_sm_rec_size(size_t len)
{
    return (sizeof(struct na_sm_rec) + len + NA_SM_REC_ALIGN - 1) &
           ~(size_t) (NA_SM_REC_ALIGN - 1);
}

/* The mark of the record at ring position `pos`, where it lies. */
static _Atomic uint64_t *
na_sm_rec_mark(struct na_sm_ring *r, uint64_t pos)
{
    return (_Atomic uint64_t *) (void *) (r->data + pos % NA_SM_RING_SIZE +
                                          offsetof(struct na_sm_rec, mark));
}

/* Write a record's header, its mark last: the consumer may read the
 * record as soon as it sees the mark. */
static void
na_sm_rec_publish(struct na_sm_ring *r, uint64_t pos, struct na_sm_rec *h)
{
    memcpy(r->data + pos % NA_SM_RING_SIZE, h,
           offsetof(struct na_sm_rec, mark));
    atomic_store_explicit(na_sm_rec_mark(r, pos), ~pos, memory_order_release);
}

/* Ask for the line at p for writing (a hint: nothing changes if it is
 * not taken). */
static inline void
na_sm_prefetch_write(const uint8_t *p)
{
#if defined(__x86_64__) || defined(__i386__)
    /* prefetchw, which the compiler emits for __builtin_prefetch(p, 1)
     * only when told the processor has it; it is a no-op where not. */
    __asm__ volatile("prefetchw %0" : : "m"(*p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* What na_sm_push_ahead() asks for, from inside the window, lies in the
 * ring. */
_Static_assert(NA_SM_RING_WINDOW + NA_SM_PUSH_AHEAD_MAX * NA_SM_REC_ALIGN <=
                   NA_SM_RING_SIZE,
               "the lines asked for ahead, from inside the window, are in "
               "the ring");

/* After a push of `rec` bytes at tail: take for writing the lines a
 * record of the same size would take next (at the window's start once
 * past it, where the next push most likely wraps). The consumer read
 * them a window ago; owning them before the next push saves that push a
 * wait for each line from the consumer's cache. Nothing is asked while
 * the ring is short of room, where those lines may hold records the
 * consumer has yet to read. */
static void
na_sm_push_ahead(struct na_sm_ring *r, uint64_t tail, uint64_t head, size_t rec)
{
    size_t off = (size_t) (tail % NA_SM_RING_SIZE);
    size_t lines = rec / NA_SM_REC_ALIGN;

    if (tail - head + 2 * rec > NA_SM_RING_SIZE)
        return;
    if (off >= NA_SM_RING_WINDOW)
        off = 0;
    if (lines > NA_SM_PUSH_AHEAD_MAX)
        lines = NA_SM_PUSH_AHEAD_MAX;
    for (size_t l = 0; l < lines; l++)
        na_sm_prefetch_write(r->data + off + l * NA_SM_REC_ALIGN);
}

/* Producer side, lock held: one record whose payload is buf then buf2.
 * false: not enough room now. */
bool
na_sm_ring_push(struct na_sm_conn *conn, uint8_t kind, uint8_t src_id,
                uint8_t dst_id, na_tag_t tag, const void *buf, size_t len1,
                const void *buf2, size_t len2)
{
    struct na_sm_ring *r = conn->tx;
    size_t len = len1 + len2;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t rec = na_sm_rec_size(len);
    size_t off = (size_t) (tail % NA_SM_RING_SIZE);
    size_t to_end = NA_SM_RING_SIZE - off;
    size_t need = rec > to_end ? to_end + rec : rec;
    bool rec_wraps = false;
    struct na_sm_rec h = {.len = (uint32_t) len,
                          .tag = tag,
                          .kind = kind,
                          .src_id = src_id,
                          .dst_id = dst_id};

    if (tail - head > NA_SM_RING_SIZE || NA_SM_RING_SIZE - (tail - head) < need)
        return false;
    /* Past the window, start over at the ring's beginning as soon as the
     * consumer has shown that it read past the window too: while it keeps
     * up, records then land on the same NA_SM_RING_WINDOW bytes (and the
     * few past it that its lag covers), still in both caches, instead of
     * a line last written a megabyte ago. Further on only while it lags.
     * The room after the wrap is then the whole window, not only what the
     * unread records leave of it: with the head shown one pass late, a
     * wrap taken as soon as the unread bytes fit would leave so little
     * room that 16 records of 2 KiB in flight fill it, and the sender
     * would wait for a wake-up through the socket. */
    if (off >= NA_SM_RING_WINDOW && tail - head <= off - NA_SM_RING_WINDOW &&
        rec <= off - (tail - head))
        rec_wraps = true; /* the unread bytes lie past [0, rec) */
    if (rec > to_end || rec_wraps) {
        /* Positions are line-aligned: a whole header always fits. */
        struct na_sm_rec w = {.kind = NA_SM_REC_WRAP};
        na_sm_rec_publish(r, tail, &w);
        tail += to_end;
        off = 0;
    }
    if (len1 != 0)
        memcpy(r->data + off + sizeof(h), buf, len1);
    if (len2 != 0)
        memcpy(r->data + off + sizeof(h) + len1, buf2, len2);
    na_sm_rec_publish(r, tail, &h);
    atomic_store_explicit(&r->tail, tail + rec, memory_order_relaxed);
    NA_SM_FENCE_SEQ_CST();
    if (atomic_load_explicit(&r->sleeping, memory_order_relaxed) &&
        atomic_exchange(&r->sleeping, 0))
        na_sm_conn_wake_peer(conn);
    na_sm_push_ahead(r, tail + rec, head, rec);
    return true;
}

/* Complete a receive with a message (lock held). */
static void
na_sm_recv_fill(struct na_op_id *op, struct na_addr *source, na_tag_t tag,
                const void *data, size_t len)
{
    na_return_t ret =
        na_plugin_recv_fill(&op->base, op->type, op->u.msg.buf, op->u.msg.size,
                            source, tag, data, len);

    if (ret == NA_SUCCESS && op->type == NA_CB_RECV_UNEXPECTED)
        na_plugin_addr_ref(source);
    na_sm_op_complete(op, ret);
}

static void
na_sm_backlog_push(struct na_plugin_backlog *q, struct na_addr *source,
                   uint8_t src_id, na_tag_t tag, const void *data, size_t len)
{
    if (na_plugin_backlog_push(q, "sm", source, src_id, tag, data, len))
        na_plugin_addr_ref(source);
}

/* A receive takes a message from the backlog (lock held). */
static void
na_sm_recv_backlogged(struct na_op_id *op, struct na_plugin_backlog_msg *m)
{
    na_sm_recv_fill(op, m->source, m->tag, m->data, m->len);
    na_plugin_addr_unref_locked(m->source);
    free(m);
}

/* Hand a message to its receive or backlog (lock held). */
static void
na_sm_deliver(struct na_sm_class *cls, struct na_addr *source, uint8_t kind,
              uint8_t src_id, uint8_t dst_id, na_tag_t tag, const void *data,
              size_t len)
{
    struct na_sm_context *pc = na_sm_ctx(cls, dst_id);
    struct na_op_id *op;

    if (pc == NULL)
        return; /* no such context: nobody can ever receive it */
    if (kind == NA_SM_REC_UNEXP) {
        op = na_op_list_first(&pc->base.unexp_ops);
        if (op == NULL) {
            na_sm_backlog_push(&pc->base.unexp_backlog, source, src_id, tag,
                               data, len);
            return;
        }
    } else {
        for (op = na_op_list_first(&pc->base.exp_ops); op != NULL;
             op = na_op_list_next(op)) {
            if (op->addr == source && op->u.msg.peer_id == src_id &&
                op->u.msg.tag == tag)
                break;
        }
        if (op == NULL) {
            na_sm_backlog_push(&pc->base.exp_backlog, source, src_id, tag, data,
                               len);
            return;
        }
    }
    na_op_list_remove(op);
    na_sm_recv_fill(op, source, tag, data, len);
}

/* Whether a record waits at the consumer's position (lock held). */
bool
na_sm_ring_ready(const struct na_sm_conn *conn)
{
    return atomic_load_explicit(na_sm_rec_mark(conn->rx, conn->rx_head),
                                memory_order_acquire) == ~conn->rx_head;
}

/* Show the producer how far we have read, and wake it if it waits for
 * that room (lock held). */
void
na_sm_ring_publish(struct na_sm_conn *conn)
{
    struct na_sm_ring *r = conn->rx;

    if (r == NULL || conn->rx_published == conn->rx_head)
        return;
    conn->rx_published = conn->rx_head;
    atomic_store_explicit(&r->head, conn->rx_head, memory_order_release);
    NA_SM_FENCE_SEQ_CST();
    if (atomic_load_explicit(&r->tx_blocked, memory_order_relaxed) &&
        atomic_exchange(&r->tx_blocked, 0))
        na_sm_conn_wake_peer(conn);
}

/* Consumer side, lock held: deliver what the peer wrote. Returns whether
 * anything was read; a malformed record marks the connection dead. The
 * room read is shown to the producer now when `publish` (before sleeping)
 * or when it is a large part of the ring, else at the next call. */
bool
na_sm_ring_drain(struct na_sm_conn *conn, bool publish)
{
    struct na_sm_ring *r = conn->rx;
    uint64_t head = conn->rx_head;
    bool any = false;

    na_sm_ring_publish(conn); /* what the last call read */
    for (int i = 0; i < NA_SM_DRAIN_MAX; i++) {
        size_t off = (size_t) (head % NA_SM_RING_SIZE);
        size_t to_end = NA_SM_RING_SIZE - off;
        struct na_sm_rec h;
        size_t rec;

        if (atomic_load_explicit(na_sm_rec_mark(r, head),
                                 memory_order_acquire) != ~head) {
            /* Nothing yet: ask for the lines after the mark's now, so
             * that a small record's payload is not a second wait after
             * the mark is seen (NA_SM_SPIN_PREFETCH). */
            if (off + NA_SM_REC_ALIGN * (NA_SM_SPIN_PREFETCH + 1) <=
                NA_SM_RING_SIZE)
                for (size_t l = 1; l <= conn->rx_spin_lines; l++)
                    __builtin_prefetch(r->data + off + NA_SM_REC_ALIGN * l, 0,
                                       3);
            break;
        }
        memcpy(&h, r->data + off, offsetof(struct na_sm_rec, mark));
        if (h.kind == NA_SM_REC_WRAP) {
            head += to_end;
            continue;
        }
        rec = na_sm_rec_size(h.len);
        if ((h.kind != NA_SM_REC_UNEXP && h.kind != NA_SM_REC_EXP &&
             h.kind != NA_SM_REC_RMA && h.kind != NA_SM_REC_ASSIST) ||
            h.len > NA_SM_MAX_MSG_SIZE || rec > to_end) {
            na_plugin_log_error("sm", "peer %s: malformed ring record",
                                conn->addr ? conn->addr->name : "?");
            conn->dead = true;
            break;
        }
        if (h.kind == NA_SM_REC_RMA) {
            if (!na_sm_rma_msg_recv(conn, r->data + off + sizeof(h), h.len)) {
                na_plugin_log_error("sm", "peer %s: malformed RMA record",
                                    conn->addr ? conn->addr->name : "?");
                conn->dead = true;
                break;
            }
        } else if (h.kind == NA_SM_REC_ASSIST) {
            if (!na_sm_assist_recv(conn, r->data + off + sizeof(h), h.len)) {
                na_plugin_log_error("sm", "peer %s: malformed ASSIST record",
                                    conn->addr ? conn->addr->name : "?");
                conn->dead = true;
                break;
            }
        } else {
            na_sm_deliver(conn->cls, conn->addr, h.kind, h.src_id, h.dst_id,
                          h.tag, r->data + off + sizeof(h), h.len);
        }
        head += rec;
        any = true;
        conn->rx_spin_lines = rec <= NA_SM_REC_ALIGN * (NA_SM_SPIN_PREFETCH + 1)
                                  ? NA_SM_SPIN_PREFETCH
                                  : 0;
    }
    conn->rx_head = head;
    if (publish || head - conn->rx_published > NA_SM_RING_SIZE / 4)
        na_sm_ring_publish(conn);
    return any;
}

/* Retry the sends waiting for room, in order (lock held). */
void
na_sm_tx_progress(struct na_sm_conn *conn)
{
    struct na_op_id *op;

    while ((op = na_op_list_first(&conn->tx_wait)) != NULL) {
        uint8_t kind =
            op->type == NA_CB_SEND_UNEXPECTED ? NA_SM_REC_UNEXP : NA_SM_REC_EXP;
        if (!na_sm_ring_push(
                conn, kind,
                ((struct na_sm_context *) op->context->plugin_context)->base.id,
                op->u.msg.peer_id, op->u.msg.tag, op->u.msg.buf, op->u.msg.size,
                NULL, 0)) {
            atomic_store(&conn->tx->tx_blocked, 1);
            return;
        }
        na_op_list_remove(op);
        op->conn = NULL;
        na_sm_op_complete(op, NA_SUCCESS);
    }
}

/* The core checked the size against our limits and the tag. */
static na_return_t
na_sm_msg_send(na_class_t *na_class, const struct na_op_desc *desc,
               na_op_id_t *op)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_context *pc = desc->context->plugin_context;
    uint8_t kind =
        desc->type == NA_CB_SEND_EXPECTED ? NA_SM_REC_EXP : NA_SM_REC_UNEXP;
    struct na_addr *dest = desc->addr;
    uint8_t dest_id = desc->addr_id;
    na_tag_t tag = desc->tag;
    const void *buf = desc->buf;
    size_t buf_size = desc->buf_size;
    struct na_sm_conn *conn;

    na_sm_op_init(op, desc, dest);
    pthread_mutex_lock(&cls->lock);
    if (dest->self) {
        na_sm_deliver(cls, dest, kind, pc->base.id, dest_id, tag, buf,
                      buf_size);
        na_sm_op_complete(op, NA_SUCCESS);
        goto done;
    }
    conn = na_sm_conn_get(cls, dest);
    if (conn == NULL) {
        na_sm_op_complete(op, NA_HOSTUNREACH);
        goto done;
    }
    if (na_op_list_empty(&conn->tx_wait) &&
        na_sm_ring_push(conn, kind, pc->base.id, dest_id, tag, buf, buf_size,
                        NULL, 0)) {
        na_sm_op_complete(op, NA_SUCCESS);
        goto done;
    }
    op->u.msg.buf = (void *) buf;
    op->u.msg.size = buf_size;
    op->u.msg.tag = tag;
    op->u.msg.peer_id = dest_id;
    op->conn = conn;
    if (!na_sm_op_wait(&conn->tx_wait, op))
        goto done;
    atomic_store(&conn->tx->tx_blocked, 1);
    na_sm_tx_progress(conn); /* room may have appeared meanwhile */
done:
    pthread_mutex_unlock(&cls->lock);
    na_sm_wake_local(cls);
    return NA_SUCCESS;
}

static na_return_t
na_sm_msg_recv_unexpected(na_class_t *na_class, const struct na_op_desc *desc,
                          na_op_id_t *op_id)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_context *pc = desc->context->plugin_context;
    struct na_plugin_backlog_msg *m;

    na_sm_op_init(op_id, desc, NULL);
    op_id->u.msg.buf = desc->buf;
    op_id->u.msg.size = desc->buf_size;
    pthread_mutex_lock(&cls->lock);
    m = na_plugin_backlog_take_first(&pc->base.unexp_backlog);
    if (m != NULL)
        na_sm_recv_backlogged(op_id, m);
    else if (!na_sm_op_wait(&pc->base.unexp_ops, op_id))
        m = (void *) 1; /* canceled during the post: wake below */
    pthread_mutex_unlock(&cls->lock);
    if (m != NULL)
        na_sm_wake_local(cls);
    return NA_SUCCESS;
}

static na_return_t
na_sm_msg_recv_expected(na_class_t *na_class, const struct na_op_desc *desc,
                        na_op_id_t *op_id)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    struct na_sm_context *pc = desc->context->plugin_context;
    struct na_addr *source_addr = desc->addr;
    uint8_t source_id = desc->addr_id;
    na_tag_t tag = desc->tag;
    struct na_plugin_backlog_msg *m;

    na_sm_op_init(op_id, desc, source_addr);
    op_id->u.msg.buf = desc->buf;
    op_id->u.msg.size = desc->buf_size;
    op_id->u.msg.tag = tag;
    op_id->u.msg.peer_id = source_id;
    pthread_mutex_lock(&cls->lock);
    m = na_plugin_backlog_take(&pc->base.exp_backlog, source_addr, source_id,
                               tag);
    if (m != NULL) {
        na_sm_recv_backlogged(op_id, m);
    } else if (source_addr->failed && source_addr->conn == NULL &&
               na_sm_conn_get(cls, source_addr) == NULL) {
        /* Its peer is gone and nobody serves its name again: nothing
         * will come. */
        na_sm_op_complete(op_id, NA_HOSTUNREACH);
        m = (void *) 1; /* wake below */
    } else if (!na_sm_op_wait(&pc->base.exp_ops, op_id)) {
        m = (void *) 1; /* canceled during the post: wake below */
    }
    pthread_mutex_unlock(&cls->lock);
    if (m != NULL)
        na_sm_wake_local(cls);
    return NA_SUCCESS;
}

const struct na_msg_ops na_sm_msg_ops = {
    .op_size = sizeof(struct na_op_id),
    .send = na_sm_msg_send,
    .recv_unexpected = na_sm_msg_recv_unexpected,
    .recv_expected = na_sm_msg_recv_expected,
};
