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
na_return_t na_auto_context_create(na_class_t *na_class, na_context_t *context,
                                   uint8_t id, void *plugin_context);
na_return_t na_auto_context_destroy(na_class_t *na_class, void *plugin_context);
int na_auto_poll_get_fd(na_class_t *na_class, na_context_t *context);
na_return_t na_auto_poll(na_class_t *na_class, na_context_t *context,
                         unsigned int *count);
na_return_t na_auto_poll_wait(na_class_t *na_class, na_context_t *context,
                              unsigned int timeout_ms, unsigned int *count);

/* na_sm_auto_msg.c */
void na_auto_rx_post(struct na_auto_rx *rx);
void *na_auto_msg_buf_alloc(na_class_t *na_class, size_t size,
                            unsigned long flags, void **plugin_data);
void na_auto_msg_buf_free(na_class_t *na_class, void *buf, void *plugin_data);
na_return_t na_auto_msg_forward(na_class_t *na_class,
                                const struct na_op_desc *desc, na_op_id_t *op);
na_return_t na_auto_recv_unexpected(na_class_t *na_class,
                                    const struct na_op_desc *desc,
                                    na_op_id_t *op);
na_return_t na_auto_cancel(na_class_t *na_class, na_context_t *context,
                           na_op_id_t *op);

/* na_sm_auto_addr.c */
struct na_addr *na_auto_addr_new(struct na_auto_class *cls, na_addr_t net,
                                 na_addr_t sm);
int na_auto_addr_side(const struct na_addr *addr);
void na_auto_addr_release(struct na_addr *addr);
na_return_t na_auto_addr_lookup(na_class_t *na_class, const char *name,
                                na_addr_t *addr);
void na_auto_addr_free(na_class_t *na_class, na_addr_t addr);
na_return_t na_auto_addr_self(na_class_t *na_class, na_addr_t *addr);
na_return_t na_auto_addr_dup(na_class_t *na_class, na_addr_t addr,
                             na_addr_t *new_addr);
bool na_auto_addr_cmp(na_class_t *na_class, na_addr_t a, na_addr_t b);
bool na_auto_addr_is_self(na_class_t *na_class, na_addr_t addr);
na_return_t na_auto_addr_to_string(na_class_t *na_class, char *buf,
                                   size_t *buf_size, na_addr_t addr);
size_t na_auto_addr_get_serialize_size(na_class_t *na_class, na_addr_t addr);
na_return_t na_auto_addr_serialize(na_class_t *na_class, void *buf,
                                   size_t buf_size, na_addr_t addr);
na_return_t na_auto_addr_deserialize(na_class_t *na_class, na_addr_t *addr,
                                     const void *buf, size_t buf_size);
na_return_t na_auto_mem_handle_create(na_class_t *na_class, void *buf,
                                      size_t buf_size, unsigned long flags,
                                      na_mem_handle_t *mem_handle);
void na_auto_mem_handle_free(na_class_t *na_class, na_mem_handle_t h);
na_return_t na_auto_mem_register(na_class_t *na_class, na_mem_handle_t h,
                                 enum na_mem_type mem_type, uint64_t device);
na_return_t na_auto_mem_deregister(na_class_t *na_class, na_mem_handle_t h);
size_t na_auto_mem_handle_get_serialize_size(na_class_t *na_class,
                                             na_mem_handle_t h);
na_return_t na_auto_mem_handle_serialize(na_class_t *na_class, void *buf,
                                         size_t buf_size, na_mem_handle_t h);
na_return_t na_auto_mem_handle_deserialize(na_class_t *na_class,
                                           na_mem_handle_t *mem_handle,
                                           const void *buf, size_t buf_size);
na_return_t na_auto_rma(na_class_t *na_class, const struct na_op_desc *desc,
                        na_op_id_t *op);

#endif /* NA_SM_AUTO_INTERNAL_H */
