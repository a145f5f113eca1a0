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
 *
 * The replay fails unless some handle of the right size, magic and version
 * is accepted and some refused (flags, a wrapping range), and some message
 * header and some connection data are accepted.
 */
#include "../plugins/verbs/na_verbs_wire.c"

#include "na_fuzz_util.h"

static struct na_fuzz_tally handles = {.what = "verbs memory handle"};
static unsigned long headers, conns;

const char *
fuzz_replay_check(void)
{
    const char *why = na_fuzz_tally_check(&handles);

    if (why == NULL && headers == 0)
        why = "no message header was accepted";
    if (why == NULL && conns == 0)
        why = "no connection data was accepted";
    return why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t again[NA_VERBS_MEM_SERIALIZE_SIZE];
    struct na_verbs_mem_desc desc;
    struct na_verbs_msg_hdr hdr;
    struct na_verbs_conn_data conn;
    bool ok;

    ok = na_verbs_mem_decode(data, size, &desc) == NA_SUCCESS;
    na_fuzz_count(&handles, ok,
                  size == NA_VERBS_MEM_SERIALIZE_SIZE &&
                      memcmp(data, "QSVM", 4) == 0 && data[4] == 1 &&
                      data[6] == 0 && data[7] == 0);
    if (ok) {
        if (desc.flags < NA_MEM_READ_ONLY || desc.flags > NA_MEM_READWRITE ||
            desc.addr + desc.len < desc.addr)
            __builtin_trap();
        na_verbs_mem_encode(again, &desc);
        if (memcmp(again, data, sizeof(again)) != 0)
            __builtin_trap();
    }
    if (na_verbs_msg_hdr_decode(data, size, &hdr) == NA_SUCCESS) {
        if (hdr.type < NA_VERBS_MSG_UNEXPECTED ||
            hdr.type > NA_VERBS_MSG_CREDIT)
            __builtin_trap();
        headers++;
    }
    if (na_verbs_conn_data_decode(data, size, &conn) == NA_SUCCESS) {
        if (conn.credits == 0 || conn.max_payload == 0)
            __builtin_trap();
        if (memcmp(data, "QSVC", 4) == 0)
            conns++;
    }
    return 0;
}
