/*
 * Fuzz target for the auto_sm class's decoders: the input is fed to
 * NA_Addr_deserialize(), NA_Mem_handle_deserialize() and, as a string, to
 * NA_Addr_lookup() of one auto_sm class over ofi+tcp. An accepted input
 * must serialize again without error (it may differ: a shared-memory part
 * naming another node is dropped on input).
 *
 * Seed corpus (corpus/sm_auto/): the network part's bytes, the
 * shared-memory part's bytes, the node id, then a 9-byte trailer: u16
 * network length, u16 shared-memory length, u8 node length, u32 magic
 * "QSAS" (see plugins/sm/na_sm_auto_addr.c); text files are lookup
 * strings "<ofi address>#na+sm://<name>@<node>".
 *
 * Without ofi+tcp here the target says so once and accepts every input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na.h"
#include "na/na_auto_sm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static na_class_t *
fuzz_class(void)
{
    static na_class_t *na_class;
    static int tried;

    if (!tried) {
        tried = 1;
        na_class =
            na_auto_sm_initialize("ofi+tcp://127.0.0.1:0", NULL, false, NULL);
        if (na_class == NULL)
            fprintf(stderr, "fuzz_sm_auto: auto_sm over ofi+tcp is not "
                            "available, inputs are not exercised\n");
    }
    return na_class;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();
    uint8_t again[1024];
    char str[513];
    na_mem_handle_t h;
    na_addr_t a;
    size_t n;

    if (c == NULL)
        return 0;
    if (NA_Addr_deserialize(c, &a, data, size) == NA_SUCCESS) {
        n = NA_Addr_get_serialize_size(c, a);
        if (n > sizeof(again) ||
            NA_Addr_serialize(c, again, n, a) != NA_SUCCESS)
            abort();
        NA_Addr_free(c, a);
    }
    if (NA_Mem_handle_deserialize(c, &h, data, size) == NA_SUCCESS) {
        n = NA_Mem_handle_get_serialize_size(c, h);
        if (n > sizeof(again) ||
            NA_Mem_handle_serialize(c, again, n, h) != NA_SUCCESS)
            abort();
        NA_Mem_handle_free(c, h);
    }
    n = size < sizeof(str) - 1 ? size : sizeof(str) - 1;
    memcpy(str, data, n);
    str[n] = '\0';
    if (NA_Addr_lookup(c, str, &a) == NA_SUCCESS)
        NA_Addr_free(c, a);
    return 0;
}
