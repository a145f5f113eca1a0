/*
 * The RPC layer's operation functions shared between its files:
 * hg_rpc.c (the group of pending operations, finish, cancel, completion
 * runs),
 * hg_codec.c (wire format), hg_origin.c (forward), hg_target.c (receipt
 * and respond). Internal to lib/hg.
 */
#ifndef HG_RPC_H
#define HG_RPC_H

#include "hg/hg_internal.h"

/* A hostile peer may announce any size; overflowed arguments beyond this
 * are refused rather than allocated. */
#define HG_OVERFLOW_MAX ((uint64_t) 1 << 32)

/* How long a target keeps overflowed output exposed for an origin that
 * does not acknowledge it (NA clock). */
#define HG_RESPOND_ACK_TIMEOUT_MS 60000

/* hg_rpc.c: one sub-operation of a forward or respond finished with ret;
 * the last one queues the user callback (or releases a silent one). */
void hg_rpc_op_done(struct hg_handle *handle, hg_return_t ret);
/* Cancel the NA operations and overflow transfer outstanding. */
void hg_rpc_cancel_ops(struct hg_handle *handle);
/* Completion run function of a request: runs its handler. */
void hg_request_run(struct hg_completion *comp);
/* Completion run function of a forward or respond: runs its callback. */
void hg_rpc_complete(struct hg_completion *comp);

/* hg_codec.c */
hg_return_t hg_rpc_encode(hg_proc_t proc, hg_proc_cb_t proc_cb, void *data,
                          void *buf, hg_size_t avail, hg_size_t *len,
                          void **extra);
/* `avail` is the eager size, `offset` the reserved bytes at its start. */
hg_return_t hg_rpc_pack(struct hg_handle *handle, struct hg_header *header,
                        void *msg, hg_size_t avail, hg_size_t offset,
                        hg_size_t len, void *extra, bool loopback,
                        size_t *msg_len);
hg_return_t hg_rpc_check_crc_flags(const hg_class_t *hg_class,
                                   const struct hg_header *header);
hg_return_t hg_rpc_check_crc(const struct hg_header *header,
                             const void *payload, hg_size_t len);
/* The payload of an OVERFLOW message (either role): on success `desc`
 * points into `payload` at the descriptor to pull through, and `extra` is a
 * new buffer of the announced size (never zero bytes) that the caller owns.
 * HG_PROTOCOL_ERROR for a malformed payload, HG_MSGSIZE for a size beyond
 * HG_OVERFLOW_MAX, HG_NOMEM. */
hg_return_t hg_rpc_overflow_parse(const struct hg_header *header,
                                  const void *payload, size_t payload_len,
                                  const void **desc, size_t *desc_len,
                                  void **extra);

#endif /* HG_RPC_H */
