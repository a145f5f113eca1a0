/*
 * Fuzz target for the shared-memory plugin's hello, the first message a
 * connecting peer sends on a class's listening socket (its bytes and the
 * claimed name are the peer's to choose): the input is given to
 * na_sm_hello_parse() as the message, once as if it came with the two
 * descriptors a hello carries and once with one.
 *
 * Besides "no crash, no read out of bounds", an accepted hello must name
 * a valid peer and round-trip: the hello na_sm_hello_encode() writes for
 * that name parses back to the same name and has the input's length,
 * magic, version and name bytes; and the same bytes with one descriptor
 * are refused.
 *
 * Seed corpus (corpus/sm_hello/), native byte order:
 *   u32 magic 0x51534d48 ("QSMH") | u32 version (3) | u32 name length n |
 *   64 name bytes, the first n from [A-Za-z0-9._:-]
 * (76 bytes in all; any other length is refused).
 *
 * Built only with the shared-memory plugin (Linux).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/sm/na_sm_internal.h"
#include "na_fuzz_util.h"

/* Of the inputs with this protocol's magic and version: those accepted,
 * and those refused for their name. A replayed corpus must have both, or
 * its inputs no longer reach the name checks (as when the protocol
 * version moves on and the corpus stays). */
static unsigned long accepted, name_refused;

const char *fuzz_replay_check(void);

const char *
fuzz_replay_check(void)
{
    if (accepted == 0)
        return "no hello of this protocol version was accepted";
    if (name_refused == 0)
        return "no hello of this protocol version was refused for its name";
    return NULL;
}

/* The input has this protocol's magic and version. */
static bool
current_header(const uint8_t *data, size_t size)
{
    uint32_t w[2];

    if (size < sizeof(w))
        return false;
    memcpy(w, data, sizeof(w));
    return w[0] == NA_SM_HELLO_MAGIC && w[1] == NA_SM_PROTO_VERSION;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[NA_SM_NAME_MAX + 1], again[NA_SM_NAME_MAX + 1];
    unsigned char msg[256];
    size_t n;

    if (!na_sm_hello_parse(data, size, 2, name)) {
        if (na_sm_hello_parse(data, size, 1, name))
            abort(); /* refused with two descriptors, accepted with one */
        if (current_header(data, size) && size == 76)
            name_refused++;
        return 0;
    }
    if (na_sm_hello_parse(data, size, 1, again))
        abort(); /* a hello comes with exactly two descriptors */
    if (!na_sm_name_valid(name, strlen(name)))
        abort();
    n = na_sm_hello_encode(name, msg, sizeof(msg));
    if (n == 0 || !na_sm_hello_parse(msg, n, 2, again) ||
        strcmp(name, again) != 0)
        abort();
    /* What was accepted is what a peer of ours writes: its length, magic,
     * version, name length and name (the bytes after the name are not
     * read). */
    if (n != size || memcmp(msg, data, 12) != 0 ||
        memcmp(msg + 12, data + 12, strlen(name)) != 0)
        abort();
    accepted++;
    return 0;
}
