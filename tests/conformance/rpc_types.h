/*
 * RPC argument types and names shared by the conformance clients and the
 * server side (in-process or a separate `--server` process).
 *
 * Every RPC of the suite is declared here once, so a client and a server
 * built from different test binaries still agree on names (hence ids) and
 * wire layouts.
 */
#ifndef CT_RPC_TYPES_H
#define CT_RPC_TYPES_H

#include "mercury.h"
#include "mercury_macros.h"
#include "mercury_proc_string.h"

#include <stdint.h>
#include <stdlib.h>

/*
 * A counted byte array. It exists to check that a structure holding a raw
 * array of a user-defined type travels like any other field, including
 * through the overflow path when it is large.
 */
typedef struct {
    uint64_t len;
    uint8_t *data;
} ct_blob_t;

/* Upper bound the decoder accepts, so a hostile length cannot make the
 * test allocate without limit. */
#define CT_BLOB_MAX ((uint64_t) 256 << 20)

static HG_INLINE hg_return_t
hg_proc_ct_blob_t(hg_proc_t proc, void *data)
{
    ct_blob_t *b = (ct_blob_t *) data;
    hg_return_t ret;
    uint64_t len;

    switch (hg_proc_get_op(proc)) {
    case HG_ENCODE:
        ret = hg_proc_uint64_t(proc, &b->len);
        if (ret != HG_SUCCESS || b->len == 0)
            return ret;
        return hg_proc_memcpy(proc, b->data, b->len);
    case HG_DECODE:
        b->len = 0;
        b->data = NULL;
        ret = hg_proc_uint64_t(proc, &len);
        if (ret != HG_SUCCESS)
            return ret;
        if (len == 0)
            return HG_SUCCESS;
        if (len > CT_BLOB_MAX)
            return HG_OVERFLOW;
        b->data = (uint8_t *) malloc((size_t) len);
        if (b->data == NULL)
            return HG_NOMEM;
        ret = hg_proc_memcpy(proc, b->data, len);
        if (ret != HG_SUCCESS) {
            free(b->data);
            b->data = NULL;
            return ret;
        }
        b->len = len;
        return HG_SUCCESS;
    case HG_FREE:
    default:
        free(b->data);
        b->data = NULL;
        b->len = 0;
        return HG_SUCCESS;
    }
}

/* RPC names. Ids are hashes of these, identical in every process. */
#define CT_RPC_NULL "ct_null"         /* void -> void                      */
#define CT_RPC_TYPES "ct_types"       /* every scalar and strings          */
#define CT_RPC_ADD "ct_add"           /* a + b, echoes seq and context id  */
#define CT_RPC_FAIL "ct_fail"         /* handler returns in.code, no reply */
#define CT_RPC_ONEWAY "ct_oneway"     /* response disabled on both sides   */
#define CT_RPC_HOLD "ct_hold"         /* handler keeps the handle          */
#define CT_RPC_RELEASE "ct_release"   /* answers every held handle         */
#define CT_RPC_STATS "ct_stats"       /* server-side counters              */
#define CT_RPC_SHUTDOWN "ct_shutdown" /* ends a --server process           */
#define CT_RPC_NOT_ON_SERVER "ct_unregistered_on_target"
#define CT_RPC_SUM "ct_sum"        /* seed 000: pull an int32 array     */
#define CT_RPC_XFER "ct_bulk_xfer" /* one configurable bulk transfer    */
#define CT_RPC_BIG "ct_big"        /* large input and output            */

MERCURY_GEN_PROC(ct_types_in_t,
                 ((hg_string_t) (name))((hg_const_string_t) (tag))(
                     (hg_string_t) (maybe_null))((int8_t) (i8))((uint8_t) (u8))(
                     (int16_t) (i16))((uint16_t) (u16))((int32_t) (i32))(
                     (uint32_t) (u32))((int64_t) (i64))((uint64_t) (u64))(
                     (hg_size_t) (size))((hg_bool_t) (flag))((double) (real)))

MERCURY_GEN_PROC(ct_types_out_t,
                 ((hg_string_t) (greeting))((hg_string_t) (maybe_null))(
                     (uint32_t) (name_len))((int64_t) (signed_sum))(
                     (uint64_t) (unsigned_xor))((hg_bool_t) (flag))(
                     (int8_t) (i8))((uint16_t) (u16))((double) (real)))

MERCURY_GEN_PROC(ct_add_in_t, ((int32_t) (a))((int32_t) (b))((uint32_t) (seq)))

MERCURY_GEN_PROC(ct_add_out_t,
                 ((int32_t) (sum))((uint32_t) (seq))(
                     (uint8_t) (info_context_id))((uint8_t) (context_get_id)))

MERCURY_GEN_PROC(ct_fail_in_t, ((int32_t) (code)))

MERCURY_GEN_PROC(ct_token_t, ((uint32_t) (token)))

MERCURY_GEN_PROC(ct_release_out_t, ((uint32_t) (released)))

MERCURY_GEN_PROC(
    ct_stats_out_t,
    ((uint64_t) (handled))((uint64_t) (add_calls))((uint32_t) (held))(
        (uint32_t) (oneway_received))((int32_t) (oneway_respond_ret))(
        (uint32_t) (last_oneway_token))((uint32_t) (bulk_cb_duplicates))(
        (uint32_t) (respond_errors))((uint32_t) (responds_pending)))

MERCURY_GEN_PROC(ct_sum_in_t, ((int32_t) (n))((hg_bulk_t) (bulk)))

MERCURY_GEN_PROC(ct_sum_out_t,
                 ((int64_t) (sum))((int32_t) (ret))((hg_size_t) (bulk_size)))

/* Flags of ct_xfer_in_t.flags: what the target does around the transfer. */
#define CT_XFER_CANCEL 0x01      /* HG_Bulk_cancel right after posting      */
#define CT_XFER_FREE_EARLY 0x02  /* free both bulk handles while in flight  */
#define CT_XFER_BIND 0x04        /* HG_Bulk_bind_transfer (origin is bound) */
#define CT_XFER_LOCAL_WRONG 0x08 /* local handle lacks the needed access    */

MERCURY_GEN_PROC(
    ct_xfer_in_t,
    ((hg_bulk_t) (bulk))((uint8_t) (op))((uint8_t) (local_layout))(
        (uint8_t) (flags))((uint32_t) (seed))((hg_size_t) (local_size))(
        (hg_size_t) (origin_offset))((hg_size_t) (local_offset))(
        (hg_size_t) (size))((uint32_t) (timeout_ms)))

/*
 * call_ret: what the post returned (no callback follows a failed post).
 * cb_ret, cb_count, cb_size: what the target's transfer callback saw.
 * mismatches / first_mismatch: PULL only, bytes of the target's local
 * buffer that differ from the expected image (sentinel outside the
 * transferred range, the origin's pattern inside it).
 * touched: bytes of the local buffer that are no longer the sentinel.
 */
MERCURY_GEN_PROC(ct_xfer_out_t,
                 ((int32_t) (call_ret))((int32_t) (cb_ret))(
                     (uint32_t) (cb_count))((hg_size_t) (cb_size))(
                     (uint64_t) (mismatches))((uint64_t) (first_mismatch))(
                     (uint64_t) (touched))((int32_t) (cancel_ret)))

MERCURY_GEN_PROC(ct_big_in_t, ((hg_string_t) (text))((ct_blob_t) (blob)))

/* text: every character of the input text moved one letter on; blob: every
 * input byte XOR CT_BIG_XOR; in_len: strlen of the text the target saw. */
MERCURY_GEN_PROC(ct_big_out_t, ((ct_blob_t) (blob))((hg_string_t) (text))(
                                   (uint64_t) (in_len)))

#define CT_BIG_XOR 0x5c

/* The greeting the ct_types handler builds, so both sides agree. */
#define CT_GREETING_FMT "hello, %s/%s"

#endif /* CT_RPC_TYPES_H */
