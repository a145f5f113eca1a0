/*
 * Fuzz target for the shared-memory plugin's RMA records (RMA through the
 * rings, plugins/sm/na_sm_rma_msg.c): the input is written, as one
 * NA_SM_REC_RMA record, into the ring a connected peer class writes, and
 * the target class's progress reads it. The target has one 64 KiB region
 * registered (slot 0, generation 1) inside a larger buffer whose guard
 * bytes around it must never change, whatever the record says; a record
 * the target finds malformed ends the connection, and the next input
 * starts over with new classes.
 *
 * Input (native byte order, as both ends of a ring share a node): the
 * 64-byte record header then its data:
 *   u32 type (1 get request, 2 get data, 3 put data, 4 done) | i32 status |
 *   u64 token | u32 slot | u32 zero | u64 generation | u64 base | u64 total |
 *   u64 addr | u64 len
 * base and addr are offsets from the registered region's first byte (the
 * harness adds its address), so inputs reach inside and outside it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/sm/na_sm_internal.h"
#include "na_fuzz_util.h"

#define REGION (64u * 1024u)
#define GUARD (16u * 1024u)
#define WIRE 64u

static struct fuzz_world {
    na_class_t *srv, *cli;
    na_context_t *sctx, *cctx;
    na_addr_t at_srv;
    na_mem_handle_t h;
    uint8_t buf[GUARD + REGION + GUARD];
} w;

static void
world_down(void)
{
    if (w.h != NULL) {
        NA_Mem_deregister(w.srv, w.h);
        NA_Mem_handle_free(w.srv, w.h);
    }
    if (w.at_srv != NULL)
        NA_Addr_free(w.cli, w.at_srv);
    if (w.sctx != NULL)
        NA_Context_destroy(w.srv, w.sctx);
    if (w.cctx != NULL)
        NA_Context_destroy(w.cli, w.cctx);
    if (w.srv != NULL)
        NA_Finalize(w.srv);
    if (w.cli != NULL)
        NA_Finalize(w.cli);
    memset(&w, 0, offsetof(struct fuzz_world, buf));
}

static void
progress(void)
{
    for (int i = 0; i < 4; i++) {
        NA_Poll(w.srv, w.sctx, NULL);
        NA_Trigger(w.sctx, 64, NULL);
        NA_Poll(w.cli, w.cctx, NULL);
        NA_Trigger(w.cctx, 64, NULL);
    }
}

static void
sent_cb(const struct na_cb_info *info)
{
    *(int *) info->arg = 1;
}

/* Both ends hold a live connection with its rings mapped. A record the
 * target refused ends the connection, and the client finds that out only
 * when it next looks at its sockets. */
static bool
world_connected(void)
{
    struct na_sm_conn *c = LIST_FIRST(&na_sm_class(w.cli)->conns);
    struct na_sm_conn *s = LIST_FIRST(&na_sm_class(w.srv)->conns);

    return c != NULL && s != NULL && c->tx != NULL && !c->dead &&
           s->rx != NULL && !s->dead;
}

/* Two classes, a connection between them and a registered region. */
static struct na_sm_conn *
world_up(void)
{
    char name[256];
    size_t n = sizeof(name);
    na_addr_t self;
    na_op_id_t *op;
    int sent = 0;

    if (w.srv != NULL && world_connected())
        return LIST_FIRST(&na_sm_class(w.cli)->conns);
    world_down();
    setenv("QS_SM_RMA", "msg", 1);
    w.srv = NA_Initialize("na+sm", true);
    w.cli = NA_Initialize("na+sm", false);
    if (w.srv == NULL || w.cli == NULL) {
        static int said;
        if (!said++)
            fprintf(stderr, "fuzz_sm_rma: no na+sm class here: every input "
                            "is accepted\n");
        world_down();
        return NULL;
    }
    w.sctx = NA_Context_create(w.srv);
    w.cctx = NA_Context_create(w.cli);
    memset(w.buf, 0xa5, sizeof(w.buf));
    if (NA_Addr_self(w.srv, &self) != NA_SUCCESS ||
        NA_Addr_to_string(w.srv, name, &n, self) != NA_SUCCESS ||
        NA_Addr_lookup(w.cli, name, &w.at_srv) != NA_SUCCESS ||
        NA_Mem_handle_create(w.srv, w.buf + GUARD, REGION, NA_MEM_READWRITE,
                             &w.h) != NA_SUCCESS ||
        NA_Mem_register(w.srv, w.h, NA_MEM_TYPE_HOST, 0) != NA_SUCCESS)
        abort();
    NA_Addr_free(w.srv, self);
    /* One message makes the connection. */
    op = NA_Op_create(w.cli, 0);
    if (NA_Msg_send_unexpected(w.cli, w.cctx, sent_cb, &sent, "x", 1, NULL,
                               w.at_srv, 0, 0, op) != NA_SUCCESS)
        abort();
    /* A busy pass looks at the sockets only now and then, so the
     * handshake takes many passes: wait until both ends hold it. */
    for (int i = 0;
         i < 1000000 && (!sent || LIST_EMPTY(&na_sm_class(w.srv)->conns)); i++)
        progress();
    NA_Op_destroy(w.cli, op);
    if (LIST_EMPTY(&na_sm_class(w.cli)->conns) ||
        LIST_EMPTY(&na_sm_class(w.srv)->conns))
        abort();
    return LIST_FIRST(&na_sm_class(w.cli)->conns);
}

/* What na_sm_ring_push does, for one record of kind NA_SM_REC_RMA. */
static void
ring_push(struct na_sm_conn *conn, const uint8_t *p, size_t len)
{
    struct na_sm_ring *r = conn->tx;
    uint64_t tail = atomic_load(&r->tail);
    size_t rec = sizeof(struct na_sm_rec) + ((len + 7u) & ~(size_t) 7u);
    size_t off = (size_t) (tail % NA_SM_RING_SIZE);
    struct na_sm_rec h = {.len = (uint32_t) len, .kind = NA_SM_REC_RMA};

    if (rec > NA_SM_RING_SIZE - off) {
        struct na_sm_rec wrap = {.kind = NA_SM_REC_WRAP};
        if (NA_SM_RING_SIZE - off >= sizeof(wrap))
            memcpy(r->data + off, &wrap, sizeof(wrap));
        tail += NA_SM_RING_SIZE - off;
        off = 0;
    }
    memcpy(r->data + off, &h, sizeof(h));
    memcpy(r->data + off + sizeof(h), p, len);
    atomic_store(&r->tail, tail + rec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t rec[WIRE + REGION];
    struct na_sm_conn *conn;
    uint64_t base = (uint64_t) (uintptr_t) (w.buf + GUARD), v;

    if (size > sizeof(rec) || size > NA_SM_MAX_MSG_SIZE)
        return 0;
    conn = world_up();
    if (conn == NULL)
        return 0;
    memcpy(rec, data, size);
    for (size_t f = 32; f <= 48 && f + 8 <= size; f += 16) {
        memcpy(&v, rec + f, 8); /* base, then addr: offsets from the region */
        v += base;
        memcpy(rec + f, &v, 8);
    }
    ring_push(conn, rec, size);
    progress();
    for (size_t i = 0; i < GUARD; i++)
        if (w.buf[i] != 0xa5 || w.buf[GUARD + REGION + i] != 0xa5)
            abort(); /* a record wrote outside the registered region */
    return 0;
}
