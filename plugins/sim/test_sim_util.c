/*
 * Helpers shared by the simulated fabric's tests: see test_sim.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_sim.h"

void
pair_open_opt(struct pair *p, const struct na_init_info *info)
{
    memset(p, 0, sizeof(*p));
    p->a = NA_Initialize_opt("sim://alpha", true, info);
    assert_non_null(p->a);
    p->b = NA_Initialize_opt("sim://beta", true, info);
    assert_non_null(p->b);
    p->ca = NA_Context_create(p->a);
    assert_non_null(p->ca);
    p->cb = NA_Context_create(p->b);
    assert_non_null(p->cb);
    assert_int_equal(NA_Addr_lookup(p->a, "sim://beta", &p->a_to_b),
                     NA_SUCCESS);
    assert_int_equal(NA_Addr_lookup(p->b, "sim://alpha", &p->b_to_a),
                     NA_SUCCESS);
}

void
pair_open(struct pair *p)
{
    pair_open_opt(p, NULL);
}

void
pair_close(struct pair *p)
{
    NA_Addr_free(p->a, p->a_to_b);
    NA_Addr_free(p->b, p->b_to_a);
    assert_int_equal(NA_Context_destroy(p->a, p->ca), NA_SUCCESS);
    assert_int_equal(NA_Context_destroy(p->b, p->cb), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p->a), NA_SUCCESS);
    assert_int_equal(NA_Finalize(p->b), NA_SUCCESS);
    assert_false(na_sim_world_exists());
}

/* Drive the pair the way HG does from one thread: poll_wait on each
 * context in turn and trigger what completed, until `done` holds or the
 * virtual-time budget runs out. */
void
pair_drive(struct pair *p, const int *calls, int want)
{
    for (int i = 0; i < 1000 && *calls < want; i++) {
        unsigned int n;

        NA_Poll_wait(p->a, p->ca, 100, &n);
        NA_Trigger(p->ca, 64, NULL);
        NA_Poll_wait(p->b, p->cb, 100, &n);
        NA_Trigger(p->cb, 64, NULL);
    }
}

/* Run the world dry and trigger everything, on both contexts. */
void
pair_settle(struct pair *p)
{
    uint64_t ran;
    unsigned int ta, tb;

    do {
        assert_int_equal(na_sim_run_until_idle(&ran), NA_SUCCESS);
        NA_Trigger(p->ca, 1024, &ta);
        NA_Trigger(p->cb, 1024, &tb);
    } while (ran > 0 || ta > 0 || tb > 0);
}

void
send_unexpected(struct pair *p, na_op_id_t *op, struct na_result *r,
                const void *buf, size_t size, na_tag_t tag)
{
    assert_int_equal(NA_Msg_send_unexpected(p->a, p->ca, na_record_cb, r, buf,
                                            size, NULL, p->a_to_b, 0, tag, op),
                     NA_SUCCESS);
}

na_mem_handle_t
ship_handle(struct pair *p, na_mem_handle_t h)
{
    size_t size = NA_Mem_handle_get_serialize_size(p->b, h);
    unsigned char *buf = malloc(size);
    na_mem_handle_t remote;

    assert_non_null(buf);
    assert_int_equal(NA_Mem_handle_serialize(p->b, buf, size - 1, h),
                     NA_OVERFLOW);
    assert_int_equal(NA_Mem_handle_serialize(p->b, buf, size, h), NA_SUCCESS);
    assert_int_equal(NA_Mem_handle_deserialize(p->a, &remote, buf, size),
                     NA_SUCCESS);
    free(buf);
    return remote;
}

na_mem_handle_t
registered(na_class_t *na_class, void *buf, size_t len, unsigned long flags)
{
    na_mem_handle_t h;

    assert_int_equal(NA_Mem_handle_create(na_class, buf, len, flags, &h),
                     NA_SUCCESS);
    assert_int_equal(NA_Mem_register(na_class, h, NA_MEM_TYPE_HOST, 0),
                     NA_SUCCESS);
    return h;
}

/*
 * The trace hash recomputed from dumped lines, written from its definition
 * in docs/sim.md rather than from the plugin's code: per line, the words
 * time ^ rotl(seq, 32) ^ rotl(size, 16) ^ rotl(tag, 48) and
 * T(kind) ^ rotl(T(src), 21) ^ rotl(T(dst), 42) are mixed into h, where
 * T(text) mixes the text's zero-padded 8-byte little-endian words into its
 * length and mixing a word w into x is y = (x ^ w) * M, x = y ^ (y >> 32).
 */
static uint64_t
rehash_rotl(uint64_t x, unsigned int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t
rehash_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 32);
}

static uint64_t
rehash_text(const char *s, size_t len)
{
    uint64_t h = len;

    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;

        for (size_t j = 0; j < 8 && i + j < len; j++)
            w |= (uint64_t) (unsigned char) s[i + j] << (8 * j);
        h = rehash_word(h, w);
    }
    return h;
}

uint64_t
trace_rehash(const char *dump, size_t len, uint64_t *lines)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const char *p = dump, *end = dump + len;

    *lines = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t) (end - p));
        const char *field[7];
        size_t flen[7];
        const char *q = p;

        assert_non_null(eol);
        if (*p == '#') {
            p = eol + 1;
            continue;
        }
        for (int i = 0; i < 7; i++) {
            const char *sp = i < 6 ? memchr(q, ' ', (size_t) (eol - q)) : eol;

            assert_non_null(sp);
            field[i] = q;
            flen[i] = (size_t) (sp - q);
            q = sp + 1;
        }
        h = rehash_word(h, strtoull(field[0], NULL, 10) ^
                               rehash_rotl(strtoull(field[1], NULL, 10), 32) ^
                               rehash_rotl(strtoull(field[5], NULL, 10), 16) ^
                               rehash_rotl(strtoull(field[6], NULL, 10), 48));
        h = rehash_word(h, rehash_text(field[2], flen[2]) ^
                               rehash_rotl(rehash_text(field[3], flen[3]), 21) ^
                               rehash_rotl(rehash_text(field[4], flen[4]), 42));
        (*lines)++;
        p = eol + 1;
    }
    return h;
}
