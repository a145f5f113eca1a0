/*
 * A large RMA copied by both processes (QS_SM_ASSIST, on by default).
 *
 * An RMA through process_vm_readv/writev is a copy one core makes while
 * the peer that owns the other buffer usually spins in its own progress
 * loop, waiting for the reply that follows the transfer. Above
 * NA_SM_ASSIST_MIN bytes the initiator (here: the requester) cuts the
 * copy into at most 64 chunks and writes an ASSIST record into its ring
 * to the peer (the helper) before it starts on them. Both take chunks
 * from one claim word in that ring's shared header; the helper copies its
 * chunks with the opposite call (process_vm_writev into the requester for
 * a get, process_vm_readv from it for a put) and sets each chunk's bit in
 * `done`, or in `failed`. The requester never depends on the helper: a
 * helper that does not progress claims nothing, and the requester takes
 * every chunk itself. Before the op completes, the requester closes the
 * claim word and waits for the chunks the helper has claimed (a copy in
 * progress, one chunk at most per claim), then copies again whatever
 * failed; a helper process that is gone counts as failed.
 *
 * Claim word: sequence number << 32 | next chunk. The requester gives
 * each transfer a new sequence number, so a helper that reads a record
 * late claims nothing of a later transfer (its compare-and-swap names
 * the record's sequence number); closing sets the chunk to 0xffffffff.
 *
 * The helper checks the record against its own region table (slot,
 * generation, range and permission, as for any RMA on it): a requester
 * can make it copy only what a peer may read or write anyway.
 */
#include "na_sm_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The payload of an NA_SM_REC_ASSIST record (native byte order). */
struct na_sm_assist_wire {
    uint32_t seq;
    uint32_t nchunks; /* 2..NA_SM_ASSIST_CHUNKS_MAX */
    uint64_t chunk;   /* bytes per chunk, the last one shorter */
    uint64_t size;
    uint64_t remote; /* the helper's address (its registered region) */
    uint64_t local;  /* the requester's address */
    uint64_t gen;    /* the helper's region: generation and slot */
    uint32_t slot;
    uint32_t put; /* 1: the requester writes the helper's region */
};

#define NA_SM_ASSIST_CLOSED 0xffffffffu

bool
na_sm_assist_enabled_from_env(void)
{
    const char *v = getenv("QS_SM_ASSIST");

    return v == NULL || strcmp(v, "0") != 0;
}

/* Test hooks (test_sm_assist.c), QS_SM_ASSIST_TEST: "hold" makes a
 * requester wait (up to about a second) for its helper's first claim
 * before it claims anything, so the helper's paths run every time;
 * "fail" makes a helper fail every chunk it claims without copying it;
 * "die" makes a helper process exit (status 3) right after its first
 * claim. */
enum na_sm_assist_test
na_sm_assist_test_from_env(void)
{
    const char *v = getenv("QS_SM_ASSIST_TEST");

    if (v == NULL)
        return NA_SM_ASSIST_TEST_NONE;
    if (strcmp(v, "hold") == 0)
        return NA_SM_ASSIST_TEST_HOLD;
    if (strcmp(v, "fail") == 0)
        return NA_SM_ASSIST_TEST_FAIL;
    if (strcmp(v, "die") == 0)
        return NA_SM_ASSIST_TEST_DIE;
    return NA_SM_ASSIST_TEST_NONE;
}

static uint64_t
na_sm_assist_len(const struct na_sm_assist_wire *w, uint32_t i)
{
    uint64_t off = (uint64_t) i * w->chunk;

    return w->size - off < w->chunk ? w->size - off : w->chunk;
}

/* The requester's copy of chunk i. */
static int
na_sm_assist_own(struct na_sm_conn *conn, const struct na_sm_assist_wire *w,
                 uint32_t i)
{
    uint64_t off = (uint64_t) i * w->chunk;

    return na_sm_vm_copy(conn->pid, w->local + off, w->remote + off,
                         na_sm_assist_len(w, i), w->put != 0);
}

/* The helper's process has ended: its socket reports the hang-up (also
 * for a zombie, which kill() still finds), or the process is gone. */
static bool
na_sm_assist_peer_gone(struct na_sm_conn *conn)
{
    struct pollfd p = {.fd = conn->sock, .events = POLLRDHUP};

    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)))
        return true;
    return kill(conn->pid, 0) != 0 && errno == ESRCH;
}

/* Wait until the chunks in `want` are done or failed, or the helper is
 * gone; returns the ones done. */
static uint64_t
na_sm_assist_wait(struct na_sm_conn *conn, struct na_sm_assist *a,
                  uint64_t want)
{
    uint64_t done = 0;

    for (unsigned int spin = 1;; spin++) {
        done = atomic_load_explicit(&a->done, memory_order_acquire);
        if (((done | atomic_load_explicit(&a->failed, memory_order_relaxed)) &
             want) == want)
            break;
        /* A claimed chunk is a copy in progress; only a helper that died
         * during it leaves it unfinished. */
        if (spin % 4096 == 0 && na_sm_assist_peer_gone(conn))
            break;
    }
    return done & want;
}

int
na_sm_assist_copy(struct na_sm_conn *conn, struct na_op_id *op)
{
    struct na_sm_assist *a = &conn->tx->assist;
    struct na_sm_assist_wire w = {0};
    uint64_t size = op->u.rma.size, mine = 0, claimed, done;
    uint32_t n, i;
    int err = 0;

    n = (uint32_t) ((size + NA_SM_ASSIST_CHUNK - 1) / NA_SM_ASSIST_CHUNK);
    if (n > NA_SM_ASSIST_CHUNKS_MAX)
        n = NA_SM_ASSIST_CHUNKS_MAX;
    w.chunk = ((size + n - 1) / n + 4095u) & ~(uint64_t) 4095u;
    w.nchunks = (uint32_t) ((size + w.chunk - 1) / w.chunk);
    w.seq = ++conn->assist_seq;
    w.size = size;
    w.remote = op->u.rma.remote;
    w.local = (uint64_t) (uintptr_t) op->u.rma.local;
    w.gen = op->u.rma.rh.gen;
    w.slot = op->u.rma.rh.slot;
    w.put = op->u.rma.put;
    /* The fences around the chunks order the two processes' copies with
     * the caller's use of its buffers; the atomics on the header already
     * do, but ThreadSanitizer cannot see them when both classes live in
     * one process, since each maps the header at its own address. */
    NA_SM_FENCE_SEQ_CST();
    atomic_store_explicit(&a->done, 0, memory_order_relaxed);
    atomic_store_explicit(&a->failed, 0, memory_order_relaxed);
    atomic_store_explicit(&a->claim, (uint64_t) w.seq << 32,
                          memory_order_release);
    if (!na_sm_ring_push(conn, NA_SM_REC_ASSIST, 0, 0, 0, &w, sizeof(w), NULL,
                         0)) {
        /* No room for the record: copy alone, as without the option. */
        atomic_store(&a->claim, (uint64_t) w.seq << 32 | NA_SM_ASSIST_CLOSED);
        return na_sm_vm_copy(conn->pid, w.local, w.remote, w.size, w.put);
    }
    if (conn->cls->assist_test == NA_SM_ASSIST_TEST_HOLD) {
        struct timespec t0, t;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((uint32_t) atomic_load(&a->claim) == 0 &&
               t.tv_sec - t0.tv_sec < 2);
    }
    for (;;) {
        i = (uint32_t) atomic_fetch_add(&a->claim, 1);
        if (i >= w.nchunks)
            break;
        mine |= UINT64_C(1) << i;
        err = na_sm_assist_own(conn, &w, i);
        if (err != 0)
            break;
    }
    claimed = atomic_exchange(&a->claim,
                              (uint64_t) w.seq << 32 | NA_SM_ASSIST_CLOSED);
    claimed &= 0xffffffffu;
    if (claimed > w.nchunks)
        claimed = w.nchunks;
    claimed = claimed >= 64 ? UINT64_MAX : (UINT64_C(1) << claimed) - 1;
    done = na_sm_assist_wait(conn, a, claimed & ~mine);
    NA_SM_FENCE_SEQ_CST();
    atomic_fetch_add_explicit(&conn->cls->assist_chunks,
                              (uint64_t) __builtin_popcountll(done),
                              memory_order_relaxed);
    /* What the helper claimed and did not copy, copy now. */
    for (i = 0; i < w.nchunks && err == 0; i++) {
        uint64_t bit = UINT64_C(1) << i;
        if ((claimed & ~mine & ~done & bit) != 0)
            err = na_sm_assist_own(conn, &w, i);
    }
    return err;
}

bool
na_sm_assist_recv(struct na_sm_conn *conn, const uint8_t *rec, size_t len)
{
    struct na_sm_class *cls = conn->cls;
    struct na_sm_assist *a = &conn->rx->assist;
    struct na_sm_assist_wire w;
    uint64_t c, prefix;

    if (len != sizeof(w))
        return false;
    memcpy(&w, rec, sizeof(w));
    /* Sizes under 2^48 (an address space), so the products below do not
     * overflow; the last chunk is not empty. */
    if (w.put > 1 || w.nchunks < 2 || w.nchunks > NA_SM_ASSIST_CHUNKS_MAX ||
        w.size > (UINT64_C(1) << 48) || w.chunk == 0 || w.chunk >= w.size ||
        w.chunk * (w.nchunks - 1) >= w.size || w.chunk * w.nchunks < w.size)
        return false;
    if (!cls->assist_on ||
        na_sm_region_check(cls->regs, w.slot, w.gen, w.remote, w.size,
                           w.put != 0) != NA_SUCCESS)
        return true;       /* well formed; not ours to help with */
    NA_SM_FENCE_SEQ_CST(); /* see na_sm_assist_copy */
    prefix = (uint64_t) w.seq << 32;
    c = atomic_load_explicit(&a->claim, memory_order_acquire);
    for (;;) {
        uint32_t i = (uint32_t) c;
        uint64_t off, bit;
        int e;

        if ((c & ~(uint64_t) 0xffffffffu) != prefix || i >= w.nchunks)
            break;
        if (!atomic_compare_exchange_weak(&a->claim, &c, c + 1))
            continue;
        off = (uint64_t) i * w.chunk;
        bit = UINT64_C(1) << i;
        if (cls->assist_test == NA_SM_ASSIST_TEST_DIE)
            _exit(3);
        if (cls->assist_test == NA_SM_ASSIST_TEST_FAIL) {
            atomic_fetch_or_explicit(&a->failed, bit, memory_order_release);
            break;
        }
        /* A get: our region into the requester; a put: the other way. */
        e = na_sm_vm_copy(conn->pid, w.remote + off, w.local + off,
                          na_sm_assist_len(&w, i), w.put == 0);
        if (e != 0) {
            atomic_fetch_or_explicit(&a->failed, bit, memory_order_release);
            break;
        }
        NA_SM_FENCE_SEQ_CST();
        atomic_fetch_or_explicit(&a->done, bit, memory_order_release);
        c = atomic_load_explicit(&a->claim, memory_order_acquire);
    }
    return true;
}
