/*
 * Fuzz target: the verbs plugin's decoders of wire descriptors: serialized
 * memory handles (what a peer sends to be the target of RMA), and, on the
 * same bytes, the message header and the connection private data, which
 * arrive from peers just the same.
 *
 * The decoders are hidden inside the library and need no device, so their
 * source is compiled in directly (see fuzz_verbs_addr.c).
 *
 * Invariants: nothing crashes; an accepted handle has defined flags and a
 * range that does not wrap, and re-encodes to the same bytes; an accepted
 * header has a known type.
 */
#include "../plugins/verbs/na_verbs_wire.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t again[NA_VERBS_MEM_SERIALIZE_SIZE];
    struct na_verbs_mem_desc desc;
    struct na_verbs_msg_hdr hdr;
    struct na_verbs_conn_data conn;

    if (na_verbs_mem_decode(data, size, &desc) == NA_SUCCESS) {
        if (desc.flags < NA_MEM_READ_ONLY || desc.flags > NA_MEM_READWRITE ||
            desc.addr + desc.len < desc.addr)
            __builtin_trap();
        na_verbs_mem_encode(again, &desc);
        if (memcmp(again, data, sizeof(again)) != 0)
            __builtin_trap();
    }
    if (na_verbs_msg_hdr_decode(data, size, &hdr) == NA_SUCCESS &&
        (hdr.type < NA_VERBS_MSG_UNEXPECTED || hdr.type > NA_VERBS_MSG_CREDIT))
        __builtin_trap();
    if (na_verbs_conn_data_decode(data, size, &conn) == NA_SUCCESS &&
        (conn.credits == 0 || conn.max_payload == 0))
        __builtin_trap();
    return 0;
}
