/*
 * Fuzz target: bulk descriptor deserialization (HG_Bulk_deserialize) and
 * its framing as an RPC argument field (hg_proc_hg_bulk_t). A sim class is
 * created once; every accepted descriptor is freed again so leaks show up.
 */
#include "mercury.h"
#include "mercury_proc.h"
#include "mercury_proc_bulk.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hg_class_t *hg_class;
    hg_bulk_t bulk = HG_BULK_NULL;

    if (hg_class == NULL) {
        hg_class = HG_Init("sim://fuzz-bulk", HG_TRUE);
        if (hg_class == NULL) {
            fprintf(stderr, "fuzz_bulk_desc: cannot create a sim class\n");
            return 0;
        }
    }
    if (HG_Bulk_deserialize(hg_class, &bulk, size ? data : (const void *) "",
                            size) == HG_SUCCESS) {
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
        if (hg_proc_hg_bulk_t(proc, &bulk) == HG_SUCCESS &&
            bulk != HG_BULK_NULL)
            HG_Bulk_free(bulk);
        hg_proc_free(proc);
    }
    return 0;
}
