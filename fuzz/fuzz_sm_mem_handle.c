/*
 * Fuzz target for the shared-memory plugin's memory handle decoder: the
 * input is fed to NA_Mem_handle_deserialize() on one na+sm class.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: the handle serializes back to the bytes it was read
 * from. What a decoded handle may reach is decided later, against the
 * owner's region table (plugins/sm/na_sm_rma.c), so no value is trusted
 * here.
 *
 * Seed corpus (corpus/sm_mem_handle/): 40 bytes, native byte order:
 *   u32 magic 0x51534d4d | u32 flags (1..3) | u32 slot | u32 zero |
 *   u64 generation | u64 base address | u64 length
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static na_class_t *
fuzz_class(void)
{
    static na_class_t *na_class;
    static int tried;

    if (!tried) {
        tried = 1;
        na_class = NA_Initialize("na+sm", false);
        if (na_class == NULL)
            fprintf(stderr, "fuzz_sm_mem_handle: na+sm is not available, "
                            "inputs are not exercised\n");
    }
    return na_class;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();
    na_mem_handle_t h;
    uint8_t again[64];
    size_t len;

    if (c == NULL)
        return 0;
    if (NA_Mem_handle_deserialize(c, &h, data, size) != NA_SUCCESS)
        return 0;
    len = NA_Mem_handle_get_serialize_size(c, h);
    if (len == 0 || len > size || len > sizeof(again))
        abort();
    if (NA_Mem_handle_serialize(c, again, len, h) != NA_SUCCESS ||
        memcmp(again, data, len) != 0)
        abort();
    NA_Mem_handle_free(c, h);
    return 0;
}
