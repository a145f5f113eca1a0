/*
 * The RPC wire format around the arguments: encoding with overflow into
 * bulk, the header's checksum fields, their verification on receipt, and
 * the parsing of an overflowed message that both roles receive.
 */
#include "hg/hg_rpc.h"

#include "util/qs_checksum.h"

#include <stdlib.h>

/* Encoding with overflow into the proc's extra buffer. */
hg_return_t
hg_rpc_encode(hg_proc_t proc, hg_proc_cb_t proc_cb, void *data, void *buf,
              hg_size_t avail, hg_size_t *len, void **extra)
{
    hg_return_t ret;

    *extra = NULL;
    *len = 0;
    if (proc_cb == NULL || data == NULL)
        return HG_SUCCESS;
    ret = hg_proc_reset(proc, buf, avail, HG_ENCODE);
    if (ret != HG_SUCCESS)
        return ret;
    ret = proc_cb(proc, data);
    if (ret != HG_SUCCESS)
        return ret;
    ret = hg_proc_flush(proc);
    if (ret != HG_SUCCESS)
        return ret;
    *len = hg_proc_get_size_used(proc);
    if (*len > avail) {
        *extra = hg_proc_get_extra_buf(proc);
        hg_proc_set_extra_buf_is_mine(proc, HG_TRUE);
    }
    return HG_SUCCESS;
}

/*
 * Fill the header's checksum fields and, when the encoded argument did not
 * fit, expose it through bulk and put the descriptor where the payload
 * would be. Returns the message length.
 */
hg_return_t
hg_rpc_pack(struct hg_handle *handle, struct hg_header *header, void *msg,
            hg_size_t avail, hg_size_t offset, hg_size_t len, void *extra,
            bool loopback, size_t *msg_len)
{
    hg_class_t *hg_class = handle->ctx->hg_class;
    /* The first `offset` bytes after the header are the program's
     * (HG_Class_set_input_offset()); they travel in the message as they
     * are, and the encoded arguments or the overflow descriptor follow. */
    uint8_t *payload = (uint8_t *) msg + HG_HEADER_SIZE + offset;
    hg_return_t ret;

    avail -= offset;

    if (extra != NULL && hg_class->info.no_overflow) {
        qs_log("hg", QS_LOG_ERROR,
               "%s of %llu bytes does not fit in a message and "
               "hg_init_info.no_overflow is set",
               (header->flags & HG_HEADER_RESPONSE) ? "output" : "input",
               (unsigned long long) len);
        return HG_OVERFLOW;
    }
    header->payload_size = len;
    if (hg_class->info.checksum_level >= HG_CHECKSUM_RPC_HEADERS)
        header->flags |= HG_HEADER_CRC_HEADER;
    if (hg_class->info.checksum_level == HG_CHECKSUM_RPC_PAYLOAD) {
        header->flags |= HG_HEADER_CRC_PAYLOAD;
        header->payload_crc = qs_crc32c(0, extra ? extra : payload, len);
    }
    *msg_len = HG_HEADER_SIZE + offset + (extra ? 0 : len);
    if (extra != NULL && !loopback) {
        hg_size_t desc_size;

        ret = hg_bulk_create_internal(hg_class, extra, len, HG_BULK_READ_ONLY,
                                      &handle->extra_bulk);
        if (ret != HG_SUCCESS)
            return ret;
        desc_size = HG_Bulk_get_serialize_size(handle->extra_bulk, HG_FALSE);
        if (desc_size + 4 > avail) {
            qs_log("hg", QS_LOG_ERROR,
                   "overflow descriptor (%llu bytes) does not fit",
                   (unsigned long long) desc_size);
            return HG_MSGSIZE;
        }
        payload[0] = (uint8_t) desc_size;
        payload[1] = (uint8_t) (desc_size >> 8);
        payload[2] = (uint8_t) (desc_size >> 16);
        payload[3] = (uint8_t) (desc_size >> 24);
        ret = HG_Bulk_serialize(payload + 4, desc_size, HG_FALSE,
                                handle->extra_bulk);
        if (ret != HG_SUCCESS)
            return ret;
        header->flags |= HG_HEADER_OVERFLOW;
        *msg_len = HG_HEADER_SIZE + offset + 4 + desc_size;
        atomic_fetch_add(&hg_class->stats.overflow_transfers, 1);
    }
    hg_header_encode(msg, header);
    return HG_SUCCESS;
}

/*
 * A peer must carry the checksums this class was configured for: otherwise
 * a flipped flag bit could silently switch verification off.
 */
hg_return_t
hg_rpc_check_crc_flags(const hg_class_t *hg_class,
                       const struct hg_header *header)
{
    hg_checksum_level_t level = hg_class->info.checksum_level;

    if (level >= HG_CHECKSUM_RPC_HEADERS &&
        !(header->flags & HG_HEADER_CRC_HEADER))
        return HG_CHECKSUM_ERROR;
    if (level == HG_CHECKSUM_RPC_PAYLOAD &&
        !(header->flags & HG_HEADER_CRC_PAYLOAD))
        return HG_CHECKSUM_ERROR;
    return HG_SUCCESS;
}

hg_return_t
hg_rpc_check_crc(const struct hg_header *header, const void *payload,
                 hg_size_t len)
{
    if ((header->flags & HG_HEADER_CRC_PAYLOAD) &&
        qs_crc32c(0, payload, len) != header->payload_crc)
        return HG_CHECKSUM_ERROR;
    return HG_SUCCESS;
}

/*
 * An overflowed input and an overflowed output arrive the same way: the
 * payload names the peer's exposed buffer with a bulk descriptor and the
 * header announces its size. A hostile peer may announce any size, so one
 * beyond HG_OVERFLOW_MAX is refused before anything is allocated.
 */
hg_return_t
hg_rpc_overflow_parse(const struct hg_header *header, const void *payload,
                      size_t payload_len, const void **desc, size_t *desc_len,
                      void **extra)
{
    hg_return_t ret;
    void *buf;

    ret = hg_header_overflow_desc(payload, payload_len, desc, desc_len);
    if (ret == HG_SUCCESS && header->payload_size > HG_OVERFLOW_MAX)
        ret = HG_MSGSIZE;
    if (ret != HG_SUCCESS)
        return ret;
    buf = malloc(header->payload_size ? header->payload_size : 1);
    if (buf == NULL)
        return HG_NOMEM;
    *extra = buf;
    return HG_SUCCESS;
}
