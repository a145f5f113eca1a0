/*
 * The trace: one event per post, delivery, completion or fault, folded
 * into the world's trace hash and, when asked for, written out as a text
 * line (kept in memory for na_sim_trace_dump(), or sent to the file named
 * by QS_SIM_TRACE_OUT). Runs under the world lock, except the file's
 * opening and closing, which run under na_sim_global_lock with the world's
 * lifetime.
 *
 * The hash is computed from an event's fields, not from its text, so that
 * a run that wants only the hash (every test, every seed of a sweep) never
 * formats a line. The definition, which docs/sim.md repeats and test_sim
 * recomputes from dumped lines:
 *
 *   mix(x, w) = y ^ (y >> 32) where y = (x ^ w) * M   (mod 2^64,
 *               M = NA_SIM_TRACE_HASH_MUL)
 *   T(text)   = the text's bytes as 8-byte little-endian words (the last
 *               one padded with zero bytes) mixed, in order, into len(text)
 *   rotl(x, r) = x rotated left by r bits (64-bit)
 *   a line    = h = mix(mix(h, a), b) where
 *               a = time ^ rotl(seq, 32) ^ rotl(size, 16) ^ rotl(tag, 48)
 *               b = T(kind) ^ rotl(T(src), 21) ^ rotl(T(dst), 42)
 *               and kind is the whole token ("done:put:NA_SUCCESS")
 *   h starts at NA_SIM_TRACE_HASH_BASIS.
 *
 * Each field enters its word through a bijection (a rotation, then an xor
 * with the others), so a line that differs from another in any one field
 * gives other words and so another h. Packing the seven fields into two
 * words costs two multiplies per line on the running chain instead of
 * seven: hashing was about a twentieth of a simulated RPC's instructions.
 * T does not depend on h, so the three texts hash in parallel with the
 * chain. Words are assembled from bytes explicitly, so every compiler and
 * byte order gives the same value.
 */
#include "na_sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The hash.
 */

/* mix() below is na_sim_hash_word() (na_sim_internal.h). */

/* Compilers turn this into one load on little-endian machines. */
static inline uint64_t
na_sim_load_le64(const unsigned char *p)
{
    return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 |
           (uint64_t) p[3] << 24 | (uint64_t) p[4] << 32 |
           (uint64_t) p[5] << 40 | (uint64_t) p[6] << 48 |
           (uint64_t) p[7] << 56;
}

/* The last, partial word of a text: its len (< 8) bytes, little-endian,
 * assembled in a register (a copy to a stack buffer and a load back would
 * stall on store forwarding). */
static inline uint64_t
na_sim_load_tail(const unsigned char *p, size_t len)
{
    uint64_t w = 0;

    for (size_t i = 0; i < len; i++)
        w |= (uint64_t) p[i] << (8 * i);
    return w;
}

static inline uint64_t
na_sim_hash_text(const char *text, size_t len)
{
    const unsigned char *start = (const unsigned char *) text, *p = start;
    uint64_t t = len;
    size_t rest = len % 8;

    for (; len >= 8; p += 8, len -= 8)
        t = na_sim_hash_word(t, na_sim_load_le64(p));
    if (rest == 0)
        return t;
    /* The last partial word: after a whole word, from the 8 bytes that end
     * the text, shifted down (one load, within the text); else byte by
     * byte. */
    if (p != start)
        return na_sim_hash_word(t, na_sim_load_le64(p + rest - 8) >>
                                       (8 * (8 - rest)));
    return na_sim_hash_word(t, na_sim_load_tail(p, rest));
}

/* T(text) of a text given in pieces, fed byte by byte into the word being
 * assembled: the kind token "a:b:c" without building it. */
struct na_sim_text_hash {
    uint64_t t, w;
    unsigned int n; /* bytes in w */
};

static inline void
na_sim_text_feed(struct na_sim_text_hash *th, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        th->w |= (uint64_t) (unsigned char) s[i] << (8 * th->n);
        if (++th->n == 8) {
            th->t = na_sim_hash_word(th->t, th->w);
            th->w = 0;
            th->n = 0;
        }
    }
}

static inline uint64_t
na_sim_text_end(struct na_sim_text_hash *th)
{
    return th->n > 0 ? na_sim_hash_word(th->t, th->w) : th->t;
}

/*
 * QS_SIM_TRACE_OUT: every line goes to the file as it is made, with one
 * write(2) each, so the trace survives a run that aborts or is killed,
 * which is when it is wanted most. The first world of the process
 * truncates the file, later ones append. Guarded by na_sim_global_lock,
 * like every lifetime function.
 */
static bool na_sim_trace_out_started_g;

static void
na_sim_trace_out_put(struct na_sim_world *world, const char *line, size_t len)
{
    while (world->trace_fd >= 0 && len > 0) {
        ssize_t n = write(world->trace_fd, line, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            na_plugin_log_error("sim", "%s: write failed, trace stopped",
                                NA_SIM_TRACE_OUT_ENV);
            close(world->trace_fd);
            world->trace_fd = -1;
            return;
        }
        line += n;
        len -= (size_t) n;
    }
}

void
na_sim_trace_out_note(struct na_sim_world *world, const char *line)
{
    na_sim_trace_out_put(world, line, strlen(line));
}

void
na_sim_trace_out_header(struct na_sim_world *world)
{
    char line[96];
    int n = snprintf(line, sizeof(line),
                     "# quicksilver sim trace, %s=%" PRIu64 "\n",
                     NA_SIM_SEED_ENV, world->seed);

    na_sim_trace_out_put(world, line, (size_t) n);
}

void
na_sim_trace_out_open(struct na_sim_world *world)
{
    const char *path = getenv(NA_SIM_TRACE_OUT_ENV);

    world->trace_fd = -1;
    if (path == NULL || *path == '\0')
        return;
    world->trace_fd =
        open(path,
             O_WRONLY | O_CREAT | O_CLOEXEC |
                 (na_sim_trace_out_started_g ? O_APPEND : O_TRUNC),
             0644);
    if (world->trace_fd < 0) {
        na_plugin_log_error("sim", "%s: cannot open %s: %s",
                            NA_SIM_TRACE_OUT_ENV, path, strerror(errno));
        return;
    }
    na_sim_trace_out_started_g = true;
    na_sim_trace_out_header(world);
}

void
na_sim_trace_out_close(struct na_sim_world *world)
{
    char line[96];
    int n;

    if (world->trace_fd < 0)
        return;
    n = snprintf(line, sizeof(line),
                 "# %" PRIu64 " lines, hash 0x%016" PRIx64 "\n",
                 world->trace_lines, world->trace_hash);
    na_sim_trace_out_put(world, line, (size_t) n);
    if (world->trace_fd >= 0)
        close(world->trace_fd);
    world->trace_fd = -1;
}

/*
 * Lines.
 */

static void
na_sim_trace_keep(struct na_sim_world *world, const char *line, size_t len)
{
    if (world->trace_len + len > world->trace_cap) {
        size_t cap = world->trace_cap ? world->trace_cap : 4096;
        char *buf;

        while (cap < world->trace_len + len)
            cap *= 2;
        buf = realloc(world->trace_buf, cap);
        if (buf == NULL) {
            /* Losing lines must not go unnoticed: stop keeping them and
             * say so; the hash stays exact. */
            qs_log("sim", QS_LOG_ERROR, "out of memory, trace lines dropped");
            world->trace_keep = false;
            return;
        }
        world->trace_buf = buf;
        world->trace_cap = cap;
    }
    memcpy(world->trace_buf + world->trace_len, line, len);
    world->trace_len += len;
}

/* A line is "<time> <seq> <kind> <src> <dst> <size> <tag>\n". */
struct na_sim_line {
    char *p, *end;
};

static inline void
na_sim_line_mem(struct na_sim_line *l, const char *str, size_t len)
{
    size_t room = (size_t) (l->end - l->p);

    if (len > room)
        len = room;
    memcpy(l->p, str, len);
    l->p += len;
}

static inline void
na_sim_line_u64(struct na_sim_line *l, uint64_t v)
{
    char digits[20];
    size_t n = 0;

    do {
        digits[n++] = (char) ('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0 && l->p < l->end)
        *l->p++ = digits[--n];
}

static inline void
na_sim_line_chr(struct na_sim_line *l, char c)
{
    if (l->p < l->end)
        *l->p++ = c;
}

static void
na_sim_trace_write(struct na_sim_world *world, uint64_t time, uint64_t seq,
                   const char *kind, size_t kind_len, const char *src,
                   size_t src_len, const char *dst, size_t dst_len, size_t size,
                   na_tag_t tag)
{
    char line[512];
    struct na_sim_line l = {line, line + sizeof(line)};
    size_t len;

    na_sim_line_u64(&l, time);
    na_sim_line_chr(&l, ' ');
    na_sim_line_u64(&l, seq);
    na_sim_line_chr(&l, ' ');
    na_sim_line_mem(&l, kind, kind_len);
    na_sim_line_chr(&l, ' ');
    na_sim_line_mem(&l, src, src_len);
    na_sim_line_chr(&l, ' ');
    na_sim_line_mem(&l, dst, dst_len);
    na_sim_line_chr(&l, ' ');
    na_sim_line_u64(&l, size);
    na_sim_line_chr(&l, ' ');
    na_sim_line_u64(&l, tag);
    na_sim_line_chr(&l, '\n');
    len = (size_t) (l.p - line);
    if (world->trace_fd >= 0)
        na_sim_trace_out_put(world, line, len);
    if (world->trace_keep)
        na_sim_trace_keep(world, line, len);
}

/* Kinds are short table strings; the bound only keeps a mistake from
 * writing past the buffer. */
static inline size_t
na_sim_kind_put(char *buf, size_t cap, size_t at, const char *s, size_t len)
{
    if (len > cap - at)
        len = cap - at;
    memcpy(buf + at, s, len);
    return at + len;
}

/*
 * T(kind) of a kind given in parts. Every part is a string literal or an
 * entry of a constant table (all callers pass such), so its text is fixed
 * by its address, and the value is remembered by the parts' addresses in
 * a small direct-mapped memo of the world: most events cost no kind
 * hashing at all.
 */
static __attribute__((noinline)) void
na_sim_kind_memo_fill(struct na_sim_kind_memo *m, const char *kind,
                      const char *kind2, const char *kind3)
{
    struct na_sim_text_hash th = {0, 0, 0};
    size_t klen[3] = {0, 0, 0};

    klen[0] = strlen(kind);
    if (kind2 != NULL)
        klen[1] = strlen(kind2);
    if (kind3 != NULL)
        klen[2] = strlen(kind3);
    th.t = klen[0] + (kind2 != NULL ? 1 + klen[1] : 0) +
           (kind3 != NULL ? 1 + klen[2] : 0);
    na_sim_text_feed(&th, kind, klen[0]);
    if (kind2 != NULL) {
        na_sim_text_feed(&th, ":", 1);
        na_sim_text_feed(&th, kind2, klen[1]);
        if (kind3 != NULL) {
            na_sim_text_feed(&th, ":", 1);
            na_sim_text_feed(&th, kind3, klen[2]);
        }
    }
    m->part[0] = kind;
    m->part[1] = kind2;
    m->part[2] = kind3;
    m->t = na_sim_text_end(&th);
}

/* T(kind) from the memo: the kind is in one of the probes from its home,
 * before the first free one, where a kind not yet seen is filled in; with
 * no probe free the home slot is refilled (the kind there is hashed again
 * when next used). */
uint64_t
na_sim_kind_lookup(struct na_sim_world *world, const char *kind,
                   const char *kind2, const char *kind3)
{
    size_t home = na_sim_kind_home(kind, kind2, kind3);
    struct na_sim_kind_memo *m = NULL;

    for (size_t p = 0; p < NA_SIM_KIND_MEMO_PROBES; p++) {
        m = na_sim_kind_probe(world, home, p);
        if (m->part[0] == kind && m->part[1] == kind2 && m->part[2] == kind3)
            return m->t;
        if (m->part[0] == NULL)
            break;
    }
    if (m->part[0] != NULL)
        m = na_sim_kind_probe(world, home, 0);
    na_sim_kind_memo_fill(m, kind, kind2, kind3);
    return m->t;
}

/* The token "kind[:kind2[:kind3]]" written into buf; its length. */
static size_t
na_sim_kind_text(char *buf, size_t cap, const char *kind, const char *kind2,
                 const char *kind3)
{
    size_t kl = na_sim_kind_put(buf, cap, 0, kind, strlen(kind));

    if (kind2 != NULL) {
        kl = na_sim_kind_put(buf, cap, kl, ":", 1);
        kl = na_sim_kind_put(buf, cap, kl, kind2, strlen(kind2));
        if (kind3 != NULL) {
            kl = na_sim_kind_put(buf, cap, kl, ":", 1);
            kl = na_sim_kind_put(buf, cap, kl, kind3, strlen(kind3));
        }
    }
    return kl;
}

uint64_t
na_sim_trace_text_hash(const char *text, size_t len)
{
    return na_sim_hash_text(text, len);
}

/* Format and write a line (QS_SIM_TRACE_OUT or na_sim_trace_enable()):
 * out of line, so that the hashing, which every event does, keeps a small
 * frame. */
static __attribute__((noinline)) void
na_sim_trace_emit(struct na_sim_world *world, uint64_t time, uint64_t seq,
                  const char *kind, const char *kind2, const char *kind3,
                  const char *src, size_t slen, const char *dst, size_t dlen,
                  size_t size, na_tag_t tag)
{
    char kbuf[3 * NA_SIM_NAME_MAX];
    size_t klen = na_sim_kind_text(kbuf, sizeof(kbuf), kind, kind2, kind3);

    na_sim_trace_write(world, time, seq, kbuf, klen, src, slen, dst, dlen, size,
                       tag);
}

/* One line whose ends' T values are known (s, d): hash it, and write it
 * when asked to. */
static inline void
na_sim_trace_line(struct na_sim_world *world, uint64_t time, uint64_t seq,
                  const char *kind, const char *kind2, const char *kind3,
                  const char *src, size_t slen, uint64_t s, const char *dst,
                  size_t dlen, uint64_t d, size_t size, na_tag_t tag)
{
    if (kind == NULL)
        kind = "(null)";
    if (kind2 == NULL)
        kind3 = NULL;
    na_sim_trace_fold(world, time, seq,
                      na_sim_kind_lookup(world, kind, kind2, kind3), s, d, size,
                      tag);
    if (world->trace_fd >= 0 || world->trace_keep)
        na_sim_trace_emit(world, time, seq, kind, kind2, kind3, src, slen, dst,
                          dlen, size, tag);
}

void
na_sim_trace_op(struct na_sim_world *world, uint64_t time, uint64_t seq,
                const char *kind, const char *kind2, const char *kind3,
                const char *src, const char *dst, size_t size, na_tag_t tag)
{
    size_t slen, dlen;

    if (src == NULL)
        src = "(null)";
    if (dst == NULL)
        dst = "(null)";
    slen = strlen(src);
    dlen = strlen(dst);
    na_sim_trace_line(world, time, seq, kind, kind2, kind3, src, slen,
                      na_sim_hash_text(src, slen), dst, dlen,
                      na_sim_hash_text(dst, dlen), size, tag);
}

/* "*", the source of an unexpected receive's line before it matched. */
#define NA_SIM_TRACE_ANY "*"

/* The out-of-line halves of na_sim_trace_names() (na_sim_internal.h). */
void
na_sim_trace_names_miss(struct na_sim_world *world, uint64_t time, uint64_t seq,
                        const char *kind, const char *kind2, const char *kind3,
                        const struct na_sim_name *src,
                        const struct na_sim_name *dst, size_t size,
                        na_tag_t tag)
{
    na_sim_trace_names_mix(world, time, seq,
                           na_sim_kind_lookup(world, kind, kind2, kind3), kind,
                           kind2, kind3, src, dst, size, tag);
}

void
na_sim_trace_names_emit(struct na_sim_world *world, uint64_t time, uint64_t seq,
                        const char *kind, const char *kind2, const char *kind3,
                        const struct na_sim_name *src,
                        const struct na_sim_name *dst, size_t size,
                        na_tag_t tag)
{
    na_sim_trace_emit(world, time, seq, kind, kind2, kind3,
                      src ? src->str : NA_SIM_TRACE_ANY, src ? src->len : 1,
                      dst ? dst->str : NA_SIM_TRACE_ANY, dst ? dst->len : 1,
                      size, tag);
}

void
na_sim_trace(struct na_sim_world *world, uint64_t time, uint64_t seq,
             const char *kind, const char *src, const char *dst, size_t size,
             na_tag_t tag)
{
    na_sim_trace_op(world, time, seq, kind, NULL, NULL, src, dst, size, tag);
}
