/* Shared driver for the NA plugins' fuzz targets (see na_fuzz_util.h). */
#include "na_fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest string passed to lookup; longer inputs are cut. */
#define NA_FUZZ_MAX_STRING 512

na_class_t *
na_fuzz_class(const char *target, const char *info, bool listen, bool required)
{
    static na_class_t *na_class;
    static bool tried;

    if (!tried) {
        tried = true;
        /* The ofi targets fuzz the ofi plugin's decoders: every TCP
         * spelling is the native plugin unless libfabric is asked for
         * (docs/architecture.md, "Transport names"). */
        if (strncmp(info, "ofi+", 4) == 0)
            setenv("QS_OFI_TCP", "libfabric", 1);
        na_class = NA_Initialize(info, listen);
        if (na_class == NULL && required)
            abort();
        if (na_class == NULL)
            fprintf(stderr,
                    "%s: %s is not available, inputs are not "
                    "exercised\n",
                    target, info);
    }
    return na_class;
}

bool
na_fuzz_check_addr_bytes(na_class_t *c, const uint8_t *data, size_t size)
{
    na_addr_t addr;
    uint8_t *again;
    size_t len;

    if (NA_Addr_deserialize(c, &addr, data, size) != NA_SUCCESS)
        return false;
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
    return true;
}

bool
na_fuzz_check_addr_string(na_class_t *c, const uint8_t *data, size_t size)
{
    char str[NA_FUZZ_MAX_STRING + 1], printed[256];
    size_t printed_size = sizeof(printed);
    na_addr_t addr, again;

    if (size > NA_FUZZ_MAX_STRING)
        size = NA_FUZZ_MAX_STRING;
    memcpy(str, data, size);
    str[size] = '\0';
    if (NA_Addr_lookup(c, str, &addr) != NA_SUCCESS)
        return false;
    if (NA_Addr_to_string(c, printed, &printed_size, addr) != NA_SUCCESS ||
        NA_Addr_lookup(c, printed, &again) != NA_SUCCESS)
        abort();
    if (!NA_Addr_cmp(c, addr, again))
        abort();
    NA_Addr_free(c, again);
    NA_Addr_free(c, addr);
    return true;
}

bool
na_fuzz_check_mem_handle(na_class_t *c, const uint8_t *data, size_t size)
{
    na_mem_handle_t mh;
    uint8_t *again;
    size_t len;

    if (NA_Mem_handle_deserialize(c, &mh, data, size) != NA_SUCCESS)
        return false;
    len = NA_Mem_handle_get_serialize_size(c, mh);
    if (len == 0 || len > size)
        abort();
    again = malloc(len);
    if (again == NULL)
        abort();
    if (NA_Mem_handle_serialize(c, again, len, mh) != NA_SUCCESS ||
        memcmp(again, data, len) != 0)
        abort();
    free(again);
    NA_Mem_handle_free(c, mh);
    return true;
}

void
na_fuzz_count(struct na_fuzz_tally *t, bool accepted, bool current)
{
    if (current && accepted)
        t->accepted++;
    else if (current)
        t->refused_deep++;
}

const char *
na_fuzz_tally_check(const struct na_fuzz_tally *t)
{
    static char why[160];

    if (getenv("QS_FUZZ_TALLY") != NULL)
        fprintf(stderr, "%s: %lu accepted, %lu refused past the first checks\n",
                t->what, t->accepted, t->refused_deep);

    if (t->accepted == 0)
        snprintf(why, sizeof(why), "no %s of the current form was accepted",
                 t->what);
    else if (t->refused_deep == 0)
        snprintf(why, sizeof(why),
                 "no %s of the current form was refused (past the "
                 "decoder's first checks)",
                 t->what);
    else
        return NULL;
    return why;
}

const char *
na_fuzz_tally_check2(const struct na_fuzz_tally *a,
                     const struct na_fuzz_tally *b)
{
    const char *why = na_fuzz_tally_check(a);

    return why != NULL ? why : na_fuzz_tally_check(b);
}
