/*
 * Fuzz target: bulk descriptor deserialization (HG_Bulk_deserialize) and
 * its framing as an RPC argument field (hg_proc_hg_bulk_t). A sim class is
 * created once; every accepted descriptor is freed again so leaks show up.
 *
 * The replay fails unless some descriptor with the magic "QSBK" and
 * version 1 in its 20-byte head is accepted and some such one refused
 * (flags, counts, segment lengths, an embedded handle or address), and
 * likewise some argument field whose length frames such a descriptor.
 */
#include "mercury.h"
#include "mercury_proc.h"
#include "mercury_proc_bulk.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "na_fuzz_util.h"

static struct na_fuzz_tally descs = {.what = "bulk descriptor"},
                            fields = {.what = "bulk argument field"};

const char *
fuzz_replay_check(void)
{
    const char *why = na_fuzz_tally_check(&descs);

    return why != NULL ? why : na_fuzz_tally_check(&fields);
}

/* The head of a descriptor of this version: magic, version. */
static bool
current_desc(const uint8_t *data, size_t size)
{
    return size >= 20 && memcmp(data, "QSBK", 4) == 0 && data[4] == 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hg_class_t *hg_class;
    hg_bulk_t bulk = HG_BULK_NULL;
    uint64_t len = 0;
    bool ok;

    if (hg_class == NULL) {
        hg_class = HG_Init("sim://fuzz-bulk", HG_TRUE);
        if (hg_class == NULL) {
            fprintf(stderr, "fuzz_bulk_desc: cannot create a sim class\n");
            return 0;
        }
    }
    ok = HG_Bulk_deserialize(hg_class, &bulk, size ? data : (const void *) "",
                             size) == HG_SUCCESS;
    na_fuzz_count(&descs, ok, current_desc(data, size));
    if (ok) {
        /* Accepted descriptors are self-consistent. */
        if (HG_Bulk_get_segment_count(bulk) == 0)
            __builtin_trap();
        HG_Bulk_free(bulk);
    }
    /* The same bytes as an RPC argument field: a length, then the
     * descriptor (hg_proc_hg_bulk_t). */
    hg_proc_t proc = HG_PROC_NULL;
    if (hg_proc_create_set(hg_class, (void *) data, size, HG_DECODE, HG_NOHASH,
                           &proc) == HG_SUCCESS) {
        bulk = HG_BULK_NULL;
        ok = hg_proc_hg_bulk_t(proc, &bulk) == HG_SUCCESS &&
             bulk != HG_BULK_NULL;
        /* A u64 length, then that many bytes of a current descriptor. */
        for (size_t i = size >= 8 ? 8 : 0; i-- > 0;)
            len = len << 8 | data[i];
        na_fuzz_count(&fields, ok,
                      size >= 8 && len <= size - 8 &&
                          current_desc(data + 8, (size_t) len));
        if (ok)
            HG_Bulk_free(bulk);
        hg_proc_free(proc);
    }
    return 0;
}
