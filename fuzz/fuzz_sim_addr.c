/*
 * Fuzz target for the simulated fabric's address decoders: the input is
 * fed to NA_Addr_deserialize() as bytes and to NA_Addr_lookup() as a
 * NUL-terminated string.
 *
 * Besides "no crash, no leak, no read out of bounds", an accepted input
 * must round-trip: a deserialized address serializes back to the bytes it
 * was read from, and a looked-up address prints as a string that looks up
 * to an equal address.
 *
 * Seed corpus (corpus/sim_addr/): serialized addresses are
 *   u8 version (1) | u8 name length | name | u64 incarnation (little endian)
 * and the text files are lookup strings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "na.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static na_class_t *
fuzz_class(void)
{
    static na_class_t *na_class;

    /* One class for the whole run; it stays reachable until exit. */
    if (na_class == NULL)
        na_class = NA_Initialize("sim://fuzz", true);
    if (na_class == NULL)
        abort();
    return na_class;
}

static void
check_deserialize(na_class_t *c, const uint8_t *data, size_t size)
{
    na_addr_t addr;
    size_t len;
    uint8_t *again;

    if (NA_Addr_deserialize(c, &addr, data, size) != NA_SUCCESS)
        return;
    len = NA_Addr_get_serialize_size(c, addr);
    if (len == 0 || len > size)
        abort();
    again = malloc(len);
    if (again == NULL)
        abort();
    if (NA_Addr_serialize(c, again, len, addr) != NA_SUCCESS ||
        memcmp(again, data, len) != 0)
        abort();
    free(again);
    NA_Addr_free(c, addr);
}

static void
check_lookup(na_class_t *c, const uint8_t *data, size_t size)
{
    char *str = malloc(size + 1), buf[128];
    size_t buf_size = sizeof(buf);
    na_addr_t addr, back;

    if (str == NULL)
        abort();
    memcpy(str, data, size);
    str[size] = '\0';
    if (NA_Addr_lookup(c, str, &addr) == NA_SUCCESS) {
        if (NA_Addr_to_string(c, buf, &buf_size, addr) != NA_SUCCESS ||
            NA_Addr_lookup(c, buf, &back) != NA_SUCCESS)
            abort();
        if (!NA_Addr_cmp(c, addr, back))
            abort();
        NA_Addr_free(c, back);
        NA_Addr_free(c, addr);
    }
    free(str);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();

    check_deserialize(c, data, size);
    check_lookup(c, data, size);
    return 0;
}
