/*
 * Fuzz target for the ofi+shm key table, the object in /dev/shm where a
 * class lists its registered regions and which an origin reads (any local
 * process of the user may have written it) before it issues an RMA:
 * na_ofi_shm_keys_lookup() is given tables built from the input.
 *
 * Input: a 32-byte query, then table bytes.
 *   u64 key | u64 remote | u64 len | u8 need | u8 virt_addr | u8 mode |
 *   u8 probe | u32 unused                          (native byte order)
 *   mode 0: the rest is the whole object, as long as it is (a short one
 *           must be refused without a byte of it read past its end);
 *   mode 1: the rest is laid over a zeroed full-size table: its first 16
 *           bytes are the header, the next ones the entries from slot
 *           na_ofi_shm_key_slot(key) + probe % PROBE on, so the fuzzer
 *           reaches the entry the key is looked for in.
 * Besides "no crash, no read out of bounds": the verdict is one of the
 * four, *why is set exactly for NA_PROTOCOL_ERROR, a short object is
 * refused, an access allowed by an entry never wraps the address space,
 * and a table written as a class writes it (the query's region as its
 * only entry) gives the verdict computed here from the query.
 *
 * Seed corpus: corpus/ofi_shm_keys/. Built only with the ofi plugin.
 *
 * The replay fails unless, of the tables built from its inputs that are
 * full-size with a key table's magic, some allow the access through an
 * entry (the table lists every region) and some refuse it (header values,
 * entry flags, a wrapping region, a range outside the region, missing
 * permission, no entry for the key).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/ofi/na_ofi_internal.h"
#include "na_fuzz_util.h"

#define QUERY_SIZE 32
#define HDR_SIZE 16
#define ENTRY_SIZE 40
#define KEYS_MAGIC 0x51534b59u

static struct na_fuzz_tally tables = {.what = "full-size key table"};

const char *
fuzz_replay_check(void)
{
    return na_fuzz_tally_check(&tables);
}

/* Counts the verdict on a table built from the input: allowed through an
 * entry, or refused, for a full-size table with the magic. */
static void
count_verdict(const void *tab, size_t size, na_return_t ret)
{
    uint32_t hdr[2];

    if (size < na_ofi_shm_keys_size())
        return;
    memcpy(hdr, tab, sizeof(hdr));
    if (ret == NA_SUCCESS && hdr[1] != 0)
        return; /* not every region listed: nothing was checked */
    na_fuzz_count(&tables, ret == NA_SUCCESS, hdr[0] == KEYS_MAGIC);
}

static void
check_verdict(na_return_t ret, const char *why)
{
    if (ret != NA_SUCCESS && ret != NA_ACCESS && ret != NA_PERMISSION &&
        ret != NA_PROTOCOL_ERROR)
        abort();
    if ((ret == NA_PROTOCOL_ERROR) != (why != NULL))
        abort();
}

/* A table as a class writes it: the magic, one entry at the key's slot. */
static void
check_well_formed(uint64_t *tab, size_t tab_size, uint64_t key, uint64_t remote,
                  uint64_t len, uint32_t need, bool virt)
{
    uint64_t base = virt ? remote & ~(uint64_t) 0xfff : 0;
    uint64_t rlen = (len & 0xffffff) + 0x1000;
    uint32_t flags = (uint32_t) (key % 3) + 1; /* READ, WRITE or RW */
    uint64_t *e;
    uint64_t lo;
    const char *why;
    na_return_t ret, want;

    memset(tab, 0, tab_size);
    ((uint32_t *) tab)[0] = KEYS_MAGIC;
    e = tab + (HDR_SIZE + (size_t) na_ofi_shm_key_slot(key) * ENTRY_SIZE) / 8;
    e[0] = 7;
    e[1] = key;
    e[2] = base;
    e[3] = rlen;
    e[4] = flags;
    if (virt && base + rlen < base)
        return; /* no class registers a region that wraps */
    lo = virt ? remote - base : remote;
    if ((virt && remote < base) || lo > rlen || len > rlen - lo)
        want = NA_ACCESS;
    else
        want = (flags & need) != 0 ? NA_SUCCESS : NA_PERMISSION;
    ret = na_ofi_shm_keys_lookup(tab, tab_size, key, remote, len, need, virt,
                                 &why);
    check_verdict(ret, why);
    if (ret != want)
        abort();
    /* The same table with the region not listed checks nothing. */
    ((uint32_t *) tab)[1] = 1;
    if (na_ofi_shm_keys_lookup(tab, tab_size, key ^ 1, remote, len, need, virt,
                               &why) != NA_SUCCESS)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t tab_size = na_ofi_shm_keys_size();
    uint64_t key, remote, len;
    uint32_t need;
    bool virt;
    uint8_t mode, probe;
    const char *why;
    na_return_t ret;
    uint64_t *tab;

    if (size < QUERY_SIZE)
        return 0;
    memcpy(&key, data, 8);
    memcpy(&remote, data + 8, 8);
    memcpy(&len, data + 16, 8);
    need = data[24] & 3u;
    virt = (data[25] & 1u) != 0;
    mode = data[26] & 1u;
    probe = data[27];
    data += QUERY_SIZE;
    size -= QUERY_SIZE;
    if (need == 0)
        need = 1;

    tab = aligned_alloc(8, tab_size);
    if (tab == NULL)
        return 0;
    if (mode == 0) {
        /* The object as it is, in a buffer of exactly its size. */
        size_t n = size < tab_size ? size : tab_size;
        uint64_t *obj = aligned_alloc(8, (n + 7) & ~(size_t) 7);
        if (obj != NULL) {
            memcpy(obj, data, n);
            ret = na_ofi_shm_keys_lookup(obj, n, key, remote, len, need, virt,
                                         &why);
            check_verdict(ret, why);
            count_verdict(obj, n, ret);
            if (n < tab_size && ret != NA_PROTOCOL_ERROR)
                abort(); /* a short object is never read as a table */
            free(obj);
        }
    } else {
        size_t hdr = size < HDR_SIZE ? size : HDR_SIZE;
        size_t at = HDR_SIZE + (size_t) ((na_ofi_shm_key_slot(key) +
                                          probe % NA_OFI_SHM_KEYS_PROBE) %
                                         NA_OFI_SHM_KEYS_SLOTS) *
                                   ENTRY_SIZE;
        size_t rest = size - hdr;

        memset(tab, 0, tab_size);
        memcpy(tab, data, hdr);
        if (rest > tab_size - at)
            rest = tab_size - at;
        memcpy((uint8_t *) tab + at, data + hdr, rest);
        ret = na_ofi_shm_keys_lookup(tab, tab_size, key, remote, len, need,
                                     virt, &why);
        check_verdict(ret, why);
        count_verdict(tab, tab_size, ret);
        /* Allowed by an entry (the table lists every region): the bytes
         * lie inside a region, which no address wraps around. */
        if (ret == NA_SUCCESS && ((const uint32_t *) tab)[1] == 0 &&
            remote + len < remote)
            abort();
    }
    check_well_formed(tab, tab_size, key, remote, len, need, virt);
    free(tab);
    return 0;
}
