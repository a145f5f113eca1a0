/*
 * auto_sm: one NA class made of two, a network class (ofi, verbs) and a
 * shared-memory class (na+sm), for HG classes initialized with
 * hg_init_info.auto_sm. It is not in the plugin table: HG creates it with
 * na_sm_auto_initialize(). It drives its two inner classes through the
 * public NA API only.
 *
 *   na_sm_auto.c       class creation and finalize, ops table, op ids
 *   na_sm_auto_ctx.c   contexts, progress, poll and wait
 *   na_sm_auto_msg.c   internal unexpected receives, messages, cancel
 *   na_sm_auto_addr.c  addresses, memory handles, put and get
 *
 * An address carries both parts: "<network address>#na+sm://<name>@<node>"
 * as a string, where <node> is this boot's id (/proc/sys/kernel/random/
 * boot_id). A lookup keeps the shared-memory part only when <node> is ours,
 * and an operation goes over shared memory whenever the address has that
 * part. Memory handles carry both inner handles the same way.
 *
 * Unexpected messages can come from either class, so each context keeps
 * receives posted on both inner classes with buffers of its own and copies
 * an arrived message into the user's receive (or a backlog until one is
 * posted). Everything else maps to one inner operation.
 */
#ifndef NA_SM_AUTO_INTERNAL_H
#define NA_SM_AUTO_INTERNAL_H

#include "na/na_plugin.h"

#include <stdatomic.h>
#include <stddef.h>
#include <sys/queue.h>

#define NA_AUTO_NODE_MAX 48
#define NA_AUTO_RX_PER_CLASS 16

enum na_auto_side { NA_AUTO_NET = 0, NA_AUTO_SM = 1 };

struct na_auto_class {
    na_class_t *inner[2]; /* NA_AUTO_NET, NA_AUTO_SM */
    char node[NA_AUTO_NODE_MAX];
    struct na_class_ops ops; /* our ops, named after the network class */
    size_t max_unexp, max_exp;
    na_tag_t max_tag;
    bool no_block;
    atomic_uint completed;
};

/* Both parts; either may be NULL, not both. */
struct na_addr {
    atomic_uint refcount;
    struct na_auto_class *cls;
    na_addr_t part[2];
};

struct na_mem_handle {
    na_mem_handle_t part[2];
};

struct na_op_id {
    struct na_op_base base; /* the core's part: must stay first */
    na_context_t *context;
    na_op_id_t *inner[2];
    int side;  /* the inner op in use */
    void *buf; /* unexpected receive */
    size_t size;
};

_Static_assert(offsetof(struct na_op_id, base) == 0,
               "the core finds the op base at the start of the op id");

/* An internal unexpected receive on one inner class. */
struct na_auto_rx {
    struct na_auto_context *ac;
    int side;
    na_op_id_t *op;
    void *buf;
    void *plugin_data;
    bool live;
};

struct na_auto_msg {
    TAILQ_ENTRY(na_auto_msg) entry;
    struct na_addr *source;
    na_tag_t tag;
    size_t len;
    unsigned char data[];
};

struct na_auto_context {
    struct na_auto_class *cls;
    na_context_t *context;
    na_context_t *inner[2];
    atomic_uint pending;
    atomic_uint completed;
    pthread_mutex_t lock; /* posted receives and backlog */
    struct na_op_list posted;
    TAILQ_HEAD(, na_auto_msg) backlog;
    bool closing;
    struct na_auto_rx rx[2][NA_AUTO_RX_PER_CLASS];
};

static inline struct na_auto_class *
na_auto_class(const na_class_t *na_class)
{
    return (struct na_auto_class *) na_class->plugin_class;
}

static inline struct na_auto_context *
na_auto_ctx(na_context_t *context)
{
    return (struct na_auto_context *) context->plugin_context;
}

/* na_sm_progress.c: sleep on the sm class's wait fd and `fd`. */
void na_sm_sleep_with(na_class_t *sm_class, int fd, unsigned int timeout_ms);

/* na_sm_auto.c */
void na_auto_op_finish(struct na_op_id *op, na_return_t ret);
bool na_auto_op_start(struct na_op_id *op, const struct na_op_desc *desc,
                      int side);
na_return_t na_auto_op_handed(struct na_op_id *op, struct na_auto_class *cls,
                              struct na_auto_context *ac, int side,
                              na_return_t ret);
void na_auto_inner_cb(const struct na_cb_info *info);

/* na_sm_auto_ctx.c */

/* na_sm_auto_msg.c */
void na_auto_rx_post(struct na_auto_rx *rx);

/* na_sm_auto_addr.c */
struct na_addr *na_auto_addr_new(struct na_auto_class *cls, na_addr_t net,
                                 na_addr_t sm);
int na_auto_addr_side(const struct na_addr *addr);
void na_auto_addr_release(struct na_addr *addr);

/* The tables of ops the auto_sm class points to, each defined in the file
 * of its concern (contracts: lib/na/na_plugin.h). */
extern const struct na_context_ops na_auto_context_ops;
extern const struct na_addr_ops na_auto_addr_ops;
extern const struct na_msg_ops na_auto_msg_ops;
extern const struct na_mem_ops na_auto_mem_ops;

#endif /* NA_SM_AUTO_INTERNAL_H */
