/* Private to the bulk layer (lib/bulk). */
#ifndef HG_BULK_INTERNAL_H
#define HG_BULK_INTERNAL_H

#include "bulk/hg_bulk_rpc.h"
#include "core/hg_core.h"
#include "core/hg_opgroup.h"
#include "util/qs_log.h"

#include <stdlib.h>

/* Read-only regions up to this size travel inside the descriptor. */
#define HG_BULK_EAGER_MAX 512
/* Largest single RMA a transfer posts, and how many it keeps in flight. */
#define HG_BULK_PIECE_MAX ((hg_size_t) 4 << 20)
#define HG_BULK_PIPELINE 16

struct hg_bulk_segment {
    void *base; /* local memory; NULL for remote handles   */
    hg_size_t len;
    na_mem_handle_t mh; /* NULL for zero-length segments           */
};

struct hg_bulk {
    hg_class_t *hg_class;
    atomic_uint refcount;
    uint32_t count;
    hg_size_t size;
    uint8_t flags; /* HG_BULK_READ_ONLY/WRITE_ONLY/READWRITE   */
    bool no_eager;
    bool remote;        /* from HG_Bulk_deserialize()               */
    void *alloc_buf;    /* memory the library allocated             */
    void *eager;        /* remote: the embedded copy of the data    */
    hg_addr_t addr;     /* bound address, or NULL                   */
    uint8_t context_id; /* bound context id                         */
    struct hg_bulk_segment *segs;
};

/* A transfer. One NA op id per pipeline slot; reused from a pool. */
struct hg_bulk_piece {
    struct hg_bulk_xfer *op;
    na_op_id_t *na_op;
    bool busy;
};

struct hg_bulk_xfer {
    hg_context_t *ctx;
    struct hg_core *core; /* the ground floor of ctx */
    struct hg_completion comp;
    struct hg_timer timer;
    pthread_mutex_t lock; /* guards everything below */
    bool active;
    hg_bulk_t origin, local;
    hg_bulk_op_t op;
    hg_size_t size;
    hg_addr_t addr;
    uint8_t origin_id;
    hg_bulk_cb_t callback;
    void *arg;
    hg_bulk_internal_cb_t internal_cb;
    void *internal_arg;
    /* The pieces in flight and the first error; open while pieces are
     * still to be posted (idle for a copy). */
    struct hg_opgroup ops;
    hg_size_t origin_off, local_off, remaining; /* what is not posted yet */
    struct hg_bulk_piece pieces[HG_BULK_PIPELINE];
    STAILQ_ENTRY(hg_bulk_xfer) entry;
};

/* A context's idle transfers (hg_core.bulk_pool), owned by lib/bulk. */
struct hg_bulk_pool {
    pthread_mutex_t lock; /* guards everything below */
    STAILQ_HEAD(, hg_bulk_xfer) idle;
    unsigned int n_live; /* taken and not yet back */
};

/* The segment holding virtual offset `off`, and the offset inside it. */
static inline uint32_t
hg_bulk_seek(const struct hg_bulk *bulk, hg_size_t off, hg_size_t *seg_off)
{
    uint32_t i = 0;

    while (i < bulk->count && off >= bulk->segs[i].len) {
        off -= bulk->segs[i].len;
        i++;
    }
    *seg_off = off;
    return i;
}

#endif /* HG_BULK_INTERNAL_H */
