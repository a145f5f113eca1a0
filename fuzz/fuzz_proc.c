/*
 * Fuzz target for the proc decoders: the input is taken as an encoded RPC
 * argument structure with scalars, booleans, strings, a nested structure and
 * a raw region, followed by a CRC-32C of those bytes.
 *
 * Besides "no crash, no leak, no read out of bounds", the target checks two
 * properties the encoding promises:
 *  - it is canonical: re-encoding a successfully decoded structure gives back
 *    exactly the bytes that were consumed (this catches a decoder that
 *    accepts something the encoder cannot produce);
 *  - a decode that fails leaves nothing allocated and its string fields NULL.
 *
 * The replay fails unless some input decodes and re-encodes to its bytes
 * with a checksum that verifies, and some is refused for what it holds
 * rather than for running out (HG_PROTOCOL_ERROR: a string whose NUL is
 * not its last byte, a boolean other than 0 or 1).
 *
 * The seed corpus in corpus/proc/ was produced by this file itself: build it
 * with -DFUZZ_PROC_MAKE_CORPUS and it gets a main() that writes valid
 * encodings and truncations of them into the directory named on its command
 * line. From the top of the tree:
 *
 *   cc -std=c11 -D_GNU_SOURCE -DFUZZ_PROC_MAKE_CORPUS -Iinclude -Ilib
 *      fuzz/fuzz_proc.c lib/proc/hg_proc.c lib/proc/hg_proc_string.c
 *      lib/proc/hg_string_object.c lib/util/qs_checksum.c
 *      -pthread -o make_corpus
 *   ./make_corpus fuzz/corpus/proc
 *
 * It writes no input refused for its content; typical-name-inner-nul and
 * typical-flag-two (typical-valid with a NUL inside its name, with a
 * boolean of 2) were written by hand.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mercury_macros.h"
#include "mercury_proc.h"
#include "mercury_proc_string.h"

#ifndef FUZZ_PROC_MAKE_CORPUS
#include "na_fuzz_util.h"

static struct na_fuzz_tally structs = {.what = "argument structure"};
static unsigned long crc_ok;

const char *
fuzz_replay_check(void)
{
    const char *why = na_fuzz_tally_check(&structs);

    if (why == NULL && crc_ok == 0)
        why = "no decoded structure's checksum verified";
    return why;
}
#define FUZZ_COUNT(ok, ret)                                                    \
    na_fuzz_count(&structs, ok, (ok) || (ret) == HG_PROTOCOL_ERROR)
#else
#define FUZZ_COUNT(ok, ret) ((void) (ok), (void) (ret))
static unsigned long crc_ok;
#endif

/* A fixed-size opaque region, serialized with hg_proc_raw(). */
typedef struct {
    unsigned char bytes[12];
} blob_t;

static hg_return_t
hg_proc_blob_t(hg_proc_t proc, void *data)
{
    return hg_proc_raw(proc, ((blob_t *) data)->bytes,
                       sizeof(((blob_t *) data)->bytes));
}

MERCURY_GEN_PROC(fz_inner_t,
                 ((hg_string_t) (label))((int16_t) (dx))((hg_bool_t) (flag)))

MERCURY_GEN_PROC(
    fz_args_t,
    ((uint8_t) (kind))((int32_t) (count))((hg_string_t) (name))(
        (uint64_t) (offset))((fz_inner_t) (inner))((hg_const_string_t) (path))(
        (blob_t) (blob))((hg_size_t) (size))((hg_string_t) (tail)))

static void
fz_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_proc: property violated: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hg_proc_t dec = HG_PROC_NULL, enc = HG_PROC_NULL, fr = HG_PROC_NULL;
    unsigned char small[16];
    fz_args_t args;
    hg_size_t used;
    hg_return_t ret;
    uint32_t crc;

    /* The decoder gets a pointer it must treat as read-only input; the API
     * takes void * because the same call sets up encoding. */
    if (hg_proc_create_set(NULL, (void *) (uintptr_t) data, size, HG_DECODE,
                           HG_CRC32, &dec) != HG_SUCCESS)
        return 0;
    memset(&args, 0, sizeof(args));
    ret = hg_proc_fz_args_t(dec, &args);
    if (ret != HG_SUCCESS) {
        FUZZ_COUNT(false, ret);
        fz_check(args.name == NULL && args.inner.label == NULL &&
                     args.path == NULL && args.tail == NULL,
                 "failed decode left string fields set");
        goto out;
    }
    used = hg_proc_get_size_used(dec);
    fz_check(used <= size, "decoder consumed more than its input");

    /* The trailing checksum, when present, covers the structure's bytes. */
    if (hg_proc_flush(dec) == HG_SUCCESS &&
        hg_proc_uint32_t(dec, &crc) == HG_SUCCESS) {
        ret = hg_proc_checksum_verify(dec, &crc, sizeof(crc));
        fz_check(ret == HG_SUCCESS || ret == HG_CHECKSUM_ERROR,
                 "checksum verify returned an unexpected error");
        if (ret == HG_SUCCESS)
            crc_ok++;
    }

    /* Canonical: encoding the decoded values (through the overflow path,
     * since `small` is too short for most inputs) gives the same bytes. */
    if (hg_proc_create_set(NULL, small, sizeof(small), HG_ENCODE, HG_NOHASH,
                           &enc) == HG_SUCCESS) {
        if (hg_proc_fz_args_t(enc, &args) == HG_SUCCESS) {
            const void *out = hg_proc_get_extra_buf(enc);
            if (out == NULL)
                out = small;
            fz_check(hg_proc_get_size_used(enc) == used,
                     "re-encoded size differs");
            fz_check(memcmp(out, data, (size_t) used) == 0,
                     "re-encoded bytes differ");
            FUZZ_COUNT(true, HG_SUCCESS);
        }
        hg_proc_free(enc);
    }

    if (hg_proc_create_set(NULL, NULL, 0, HG_FREE, HG_NOHASH, &fr) ==
        HG_SUCCESS) {
        hg_proc_fz_args_t(fr, &args);
        hg_proc_free(fr);
    }
    fz_check(args.name == NULL && args.tail == NULL,
             "HG_FREE left string fields set");

out:
    hg_proc_free(dec);
    return 0;
}

#ifdef FUZZ_PROC_MAKE_CORPUS
/* Writes `len` bytes to dir/name. */
static void
write_file(const char *dir, const char *name, const void *buf, size_t len)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* Encodes `a` followed by its checksum; writes the encoding and `ntrunc`
 * truncations of it spread over its length. */
static void
emit(const char *dir, const char *stem, fz_args_t *a, int ntrunc)
{
    hg_proc_t proc;
    uint32_t crc;
    const unsigned char *buf;
    size_t len;
    char name[256];

    if (hg_proc_create_set(NULL, NULL, 0, HG_ENCODE, HG_CRC32, &proc) !=
            HG_SUCCESS ||
        hg_proc_fz_args_t(proc, a) != HG_SUCCESS ||
        hg_proc_flush(proc) != HG_SUCCESS ||
        hg_proc_checksum_get(proc, &crc, sizeof(crc)) != HG_SUCCESS ||
        hg_proc_uint32_t(proc, &crc) != HG_SUCCESS) {
        fprintf(stderr, "encoding %s failed\n", stem);
        exit(1);
    }
    buf = hg_proc_get_extra_buf(proc);
    len = (size_t) hg_proc_get_size_used(proc);
    snprintf(name, sizeof(name), "%s-valid", stem);
    write_file(dir, name, buf, len);
    for (int i = 1; i <= ntrunc; i++) {
        size_t cut = len * (size_t) i / (size_t) (ntrunc + 1);
        snprintf(name, sizeof(name), "%s-trunc%zu", stem, cut);
        write_file(dir, name, buf, cut);
    }
    hg_proc_free(proc);
}

int
main(int argc, char **argv)
{
    fz_args_t a;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 1;
    }
    memset(&a, 0, sizeof(a));
    emit(argv[1], "all-null", &a, 2);

    a.kind = 7;
    a.count = -42;
    a.name = (hg_string_t) "alpha";
    a.offset = 0x0123456789abcdefull;
    a.inner.label = (hg_string_t) "";
    a.inner.dx = -300;
    a.inner.flag = HG_TRUE;
    a.path = "/tmp/quicksilver/object";
    memcpy(a.blob.bytes, "0123456789ab", 12);
    a.size = 4096;
    a.tail = (hg_string_t) "omega";
    emit(argv[1], "typical", &a, 4);

    static char longer[600];
    memset(longer, 'x', sizeof(longer) - 1);
    a.name = longer;
    a.tail = NULL;
    a.count = INT32_MIN;
    a.size = UINT64_MAX;
    emit(argv[1], "long-name", &a, 3);
    return 0;
}
#endif /* FUZZ_PROC_MAKE_CORPUS */
