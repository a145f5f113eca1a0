/*
 * Fuzz target for the shared-memory plugin's address decoders: the input
 * is fed to NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string, on one na+sm class.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to the same address.
 *
 * Seed corpus (corpus/sm_addr/): serialized addresses are
 *   u8 0x4d | u8 0x53 ("SM") | u8 name length n (1..64) | n name bytes
 * from [A-Za-z0-9._:-]; the text files are lookup strings
 * ("na+sm://<name>", "sm://<name>", "<name>").
 *
 * If the plugin is not in this build (not Linux) the target says why once
 * and accepts every input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "na.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Longest string we pass to lookup; longer inputs are cut. */
#define FUZZ_MAX_STRING 512

static na_class_t *
fuzz_class(void)
{
    static na_class_t *na_class;
    static int tried;

    /* One class for the whole run; it stays reachable until exit. */
    if (!tried) {
        tried = 1;
        na_class = NA_Initialize("na+sm", false);
        if (na_class == NULL)
            fprintf(stderr, "fuzz_sm_addr: na+sm is not available, "
                            "inputs are not exercised\n");
    }
    return na_class;
}

static void
check_deserialize(na_class_t *c, const uint8_t *data, size_t size)
{
    na_addr_t addr;
    size_t len;
    uint8_t again[128];

    if (NA_Addr_deserialize(c, &addr, data, size) != NA_SUCCESS)
        return;
    len = NA_Addr_get_serialize_size(c, addr);
    if (len == 0 || len > size || len > sizeof(again))
        abort();
    if (NA_Addr_serialize(c, again, len, addr) != NA_SUCCESS ||
        memcmp(again, data, len) != 0)
        abort();
    NA_Addr_free(c, addr);
}

static void
check_lookup(na_class_t *c, const uint8_t *data, size_t size)
{
    char str[FUZZ_MAX_STRING + 1], printed[128];
    size_t printed_size = sizeof(printed);
    na_addr_t addr, again;

    if (size > FUZZ_MAX_STRING)
        size = FUZZ_MAX_STRING;
    memcpy(str, data, size);
    str[size] = '\0';
    if (NA_Addr_lookup(c, str, &addr) != NA_SUCCESS)
        return;
    if (NA_Addr_to_string(c, printed, &printed_size, addr) != NA_SUCCESS ||
        NA_Addr_lookup(c, printed, &again) != NA_SUCCESS)
        abort();
    if (!NA_Addr_cmp(c, addr, again))
        abort();
    NA_Addr_free(c, again);
    NA_Addr_free(c, addr);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();

    if (c == NULL)
        return 0;
    check_deserialize(c, data, size);
    check_lookup(c, data, size);
    return 0;
}
