/*
 * Fuzz target for the ofi plugin's memory-handle decoder: the input is fed
 * to NA_Mem_handle_deserialize() on one ofi+tcp class.
 *
 * An accepted input must round-trip: the handle serializes back to the
 * bytes it was read from. A handle from a peer is never dereferenced
 * locally, so accepting any well-formed base, length and key is safe; the
 * decoder must refuse bad versions, unknown flags, non-zero padding and
 * regions that wrap around the address space.
 *
 * Seed corpus (corpus/ofi_mem_handle/): serialized handles are 32 bytes:
 *   u8 version (1) | u8 flags (1 read, 2 write, 3 both) | 6 zero bytes |
 *   u64 base | u64 length | u64 key   (little endian)
 *
 * If libfabric's tcp provider cannot start here the target says why once
 * and accepts every input.
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
        na_class = NA_Initialize("ofi+tcp://127.0.0.1:0", false);
        if (na_class == NULL)
            fprintf(stderr, "fuzz_ofi_mem_handle: ofi+tcp is not available, "
                            "inputs are not exercised\n");
    }
    return na_class;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();
    na_mem_handle_t mh;
    uint8_t again[64];
    size_t len;

    if (c == NULL)
        return 0;
    if (NA_Mem_handle_deserialize(c, &mh, data, size) != NA_SUCCESS)
        return 0;
    len = NA_Mem_handle_get_serialize_size(c, mh);
    if (len == 0 || len > size || len > sizeof(again))
        abort();
    if (NA_Mem_handle_serialize(c, again, len, mh) != NA_SUCCESS ||
        memcmp(again, data, len) != 0)
        abort();
    NA_Mem_handle_free(c, mh);
    return 0;
}
