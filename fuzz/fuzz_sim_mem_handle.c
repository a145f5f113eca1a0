/*
 * Fuzz target for the simulated fabric's memory-handle decoder:
 * NA_Mem_handle_deserialize() on the input bytes (and NA_Addr_lookup() on
 * them as a string, which costs nothing and widens the net).
 *
 * An accepted handle must serialize back to exactly the bytes it was read
 * from, and a put through it must complete exactly once, with success only
 * when the bytes happen to name the target's one registered region (then
 * the region's bounds check decides), never touching anything else.
 *
 * Seed corpus (corpus/sim_mem_handle/): serialized handles are
 *   u8 version (1) | u8 flags (1 read, 2 write, 3 both) | u8 name length |
 *   name | u64 owner incarnation | u64 key | u64 total length |
 *   u32 segment count | u64 length of each segment
 * all little endian. The put_region_* seeds name the target's region (in
 * the world of the default seed: the key is drawn from it).
 *
 * The replay fails unless some handle of version 1, with valid flags and
 * a name and tail the input holds, is accepted and some such one refused
 * (its name, segment count, or lengths that do not add up), and unless
 * some put through an accepted handle succeeds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "na.h"
#include "na_fuzz_util.h"
#include "na_sim.h"

static struct na_fuzz_tally handles = {.what = "sim memory handle"};
static unsigned long puts_done;

const char *
fuzz_replay_check(void)
{
    const char *why = na_fuzz_tally_check(&handles);

    if (why == NULL && puts_done == 0)
        why = "no put through an accepted handle succeeded";
    return why;
}

/* Built once for the whole run; all of it stays reachable until exit. */
static struct {
    na_class_t *na_class;
    na_context_t *context;
    na_op_id_t *op;
    na_addr_t self;
    na_mem_handle_t local;
    unsigned char buf[64];
} fuzz;

static void
fuzz_init(void)
{
    if (fuzz.na_class != NULL)
        return;
    /* The world of the default seed, whose one region the corpus's
     * put_region_* seeds name (its key comes from the seed). */
    unsetenv("QS_SIM_SEED");
    fuzz.na_class = NA_Initialize("sim://fuzz", true);
    if (fuzz.na_class == NULL)
        abort();
    fuzz.context = NA_Context_create(fuzz.na_class);
    fuzz.op = NA_Op_create(fuzz.na_class, 0);
    if (fuzz.context == NULL || fuzz.op == NULL ||
        NA_Addr_self(fuzz.na_class, &fuzz.self) != NA_SUCCESS ||
        NA_Mem_handle_create(fuzz.na_class, fuzz.buf, sizeof(fuzz.buf),
                             NA_MEM_READWRITE, &fuzz.local) != NA_SUCCESS ||
        NA_Mem_register(fuzz.na_class, fuzz.local, NA_MEM_TYPE_HOST, 0) !=
            NA_SUCCESS)
        abort();
}

static na_return_t put_ret;

static void
put_done(const struct na_cb_info *info)
{
    (*(int *) info->arg)++;
    put_ret = info->ret;
}

/* Put 16 bytes of our own region into whatever the handle names, on this
 * node; the callback must run exactly once. */
static void
fuzz_put(na_mem_handle_t remote)
{
    int calls = 0;

    if (NA_Put(fuzz.na_class, fuzz.context, put_done, &calls, fuzz.local, 0,
               remote, 0, 16, fuzz.self, 0, fuzz.op) != NA_SUCCESS)
        return;
    if (na_sim_run_until_idle(NULL) != NA_SUCCESS)
        abort();
    NA_Trigger(fuzz.context, 16, NULL);
    if (calls != 1)
        abort();
    if (put_ret == NA_SUCCESS)
        puts_done++;
}

static uint64_t
get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* An accepted handle's segment lengths add up to its total: a round trip
 * cannot tell a decoder that forgot to compare them. Called only for an
 * accepted input, whose every byte the decoder has checked is there. */
static void
check_segment_sum(const uint8_t *data)
{
    const uint8_t *tail = data + 3 + data[2];
    uint64_t total = get_le(tail + 16, 8), sum = 0;
    uint64_t count = get_le(tail + 24, 4);

    for (uint64_t i = 0; i < count; i++)
        sum += get_le(tail + 28 + 8 * i, 8);
    if (sum != total)
        abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    na_class_t *c;
    na_mem_handle_t h;
    char *str;
    na_addr_t addr;
    bool ok;

    fuzz_init();
    c = fuzz.na_class;
    ok = NA_Mem_handle_deserialize(c, &h, data, size) == NA_SUCCESS;
    na_fuzz_count(&handles, ok,
                  size >= 3 && data[0] == 1 && data[1] >= 1 && data[1] <= 3 &&
                      size - 3 >= (size_t) data[2] + 28);
    if (ok) {
        size_t len = NA_Mem_handle_get_serialize_size(c, h);
        uint8_t *again = malloc(len ? len : 1);

        if (again == NULL || len == 0 || len > size ||
            NA_Mem_handle_serialize(c, again, len, h) != NA_SUCCESS ||
            memcmp(again, data, len) != 0)
            abort();
        free(again);
        check_segment_sum(data);
        fuzz_put(h);
        NA_Mem_handle_free(c, h);
    }
    str = malloc(size + 1);
    if (str == NULL)
        abort();
    memcpy(str, data, size);
    str[size] = '\0';
    if (NA_Addr_lookup(c, str, &addr) == NA_SUCCESS)
        NA_Addr_free(c, addr);
    free(str);
    return 0;
}
