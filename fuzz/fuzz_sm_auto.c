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
 * A node id left empty (node length 0 in the trailer; nothing after the
 * last '@' of a string) stands for this node's, which the harness puts in
 * before decoding: the node id is the boot's (kernel boot_id), so a seed
 * that spelled one out would reach the shared-memory part only on the
 * boot that wrote it, and the fuzzer would never guess it.
 *
 * Without ofi+tcp here the target says so once and accepts every input.
 *
 * The replay fails (where auto_sm is built) unless some address and some
 * memory handle with a trailer are accepted with their shared-memory part
 * and some are refused, and some lookup string with a "#" is accepted
 * with its shared-memory part and some refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/sm/na_sm_auto_internal.h"
#include "na.h"
#include "na/na_auto_sm.h"
#include "na_config.h"
#include "na_fuzz_util.h"

#define TRAILER 9

static struct na_fuzz_tally addrs = {.what = "auto_sm address with both parts"},
                            handles = {.what = "auto_sm memory handle with "
                                               "both parts"},
                            strings = {.what = "auto_sm lookup string with "
                                               "both parts"};

const char *
fuzz_replay_check(void)
{
    const struct na_fuzz_tally *all[] = {&addrs, &handles, &strings};
    const char *why = NULL;

    if (!QS_PLUGIN_SM_ENABLED || !QS_PLUGIN_OFI_ENABLED)
        return NULL;
    for (size_t i = 0; why == NULL && i < sizeof(all) / sizeof(all[0]); i++)
        why = na_fuzz_tally_check(all[i]);
    return why;
}

static na_class_t *
fuzz_class(void)
{
    static na_class_t *na_class;
    static int tried;

    if (!tried) {
        tried = 1;
        /* Over the ofi plugin, which the seeds' network parts are of:
         * "ofi+tcp" alone is the native tcp plugin (as in
         * na_fuzz_class()). */
        setenv("QS_OFI_TCP", "libfabric", 1);
        na_class =
            na_auto_sm_initialize("ofi+tcp://127.0.0.1:0", NULL, false, NULL);
        if (na_class == NULL)
            fprintf(stderr, "fuzz_sm_auto: auto_sm over ofi+tcp is not "
                            "available, inputs are not exercised\n");
    }
    return na_class;
}

/* The input has the trailer: both parts' lengths, the node's, "QSAS". */
static bool
has_trailer(const uint8_t *data, size_t size)
{
    return size >= TRAILER && memcmp(data + size - 4, "QSAS", 4) == 0;
}

/* The input, with this node's id where its trailer has an empty one; a
 * buffer of exactly the result's size, to be freed. */
static uint8_t *
localize_bytes(const char *node, const uint8_t *data, size_t *size)
{
    size_t n = *size, node_len = strlen(node);
    bool empty_node = has_trailer(data, n) && data[n - TRAILER + 4] == 0;
    size_t total = empty_node ? n + node_len : n;
    uint8_t *out = malloc(total > 0 ? total : 1);

    if (out == NULL)
        abort();
    if (!empty_node) {
        memcpy(out, data, n);
        return out;
    }
    memcpy(out, data, n - TRAILER);
    memcpy(out + n - TRAILER, node, node_len);
    memcpy(out + n - TRAILER + node_len, data + n - TRAILER, TRAILER);
    out[n + node_len - TRAILER + 4] = (uint8_t) node_len;
    *size = n + node_len;
    return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c = fuzz_class();
    uint8_t again[1024], *in;
    char str[513 + NA_AUTO_NODE_MAX];
    na_mem_handle_t h;
    na_addr_t a;
    size_t n;
    bool ok, current;

    if (c == NULL)
        return 0;
    current = has_trailer(data, size);
    n = size;
    in = localize_bytes(na_auto_class(c)->node, data, &n);
    ok = NA_Addr_deserialize(c, &a, in, n) == NA_SUCCESS;
    if (!ok || a->part[NA_AUTO_SM] != NULL) /* not a network part alone */
        na_fuzz_count(&addrs, ok, current);
    if (ok) {
        n = NA_Addr_get_serialize_size(c, a);
        if (n > sizeof(again) ||
            NA_Addr_serialize(c, again, n, a) != NA_SUCCESS)
            abort();
        NA_Addr_free(c, a);
    }
    n = size;
    free(in);
    in = localize_bytes(na_auto_class(c)->node, data, &n);
    ok = NA_Mem_handle_deserialize(c, &h, in, n) == NA_SUCCESS;
    if (!ok || h->part[NA_AUTO_SM] != NULL) /* not a network part alone */
        na_fuzz_count(&handles, ok, current);
    if (ok) {
        n = NA_Mem_handle_get_serialize_size(c, h);
        if (n > sizeof(again) ||
            NA_Mem_handle_serialize(c, again, n, h) != NA_SUCCESS)
            abort();
        NA_Mem_handle_free(c, h);
    }
    free(in);
    n = size < 512 ? size : 512;
    memcpy(str, data, n);
    str[n] = '\0';
    current = strchr(str, '#') != NULL;
    if (n > 0 && str[n - 1] == '@')
        strcat(str, na_auto_class(c)->node);
    ok = NA_Addr_lookup(c, str, &a) == NA_SUCCESS;
    if (!ok || a->part[NA_AUTO_SM] != NULL) /* not a network part alone */
        na_fuzz_count(&strings, ok, current);
    if (ok)
        NA_Addr_free(c, a);
    return 0;
}
