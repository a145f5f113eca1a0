/*
 * trace2svg: draw a simulated-fabric trace (na_sim_trace_dump(), or
 * QS_SIM_TRACE_OUT of the fault scenarios) as an SVG sequence diagram.
 *
 *   trace2svg [-n max_lines] [trace [out.svg]]      (default stdin, stdout)
 *
 * Nodes are vertical lanes, virtual time runs downward. Every distinct
 * event time gets its own row (the axis on the left gives the time in
 * microseconds), so bursts stay readable next to long timeouts. A message
 * is an arrow from its post to its arrival (or to its completion when it
 * never arrived); RMA is an arrow in the direction the data moves; an
 * operation that failed is drawn dashed in red with its error; faults are
 * red marks on the lane where they struck, with their name; crashes and
 * restarts are labelled bars across the lane.
 *
 * The input is only ever read, and a malformed line is skipped, so any
 * file gives a well-formed picture.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T2S_NAME 64
#define T2S_KIND 64
#define T2S_LANES 64
#define T2S_LANE_W 160
#define T2S_ROW_H 14
#define T2S_LEFT 110
#define T2S_TOP 70

struct t2s_ev {
    uint64_t time, seq;
    char kind[T2S_KIND];
    char src[T2S_NAME], dst[T2S_NAME];
    unsigned long long size;
    unsigned row;
};

struct t2s {
    struct t2s_ev *ev;
    size_t n, cap;
    char lanes[T2S_LANES][T2S_NAME];
    int nlanes;
    char seed[64], hash[64];
};

static int
t2s_lane(struct t2s *t, const char *name)
{
    if (strcmp(name, "*") == 0)
        return -1;
    for (int i = 0; i < t->nlanes; i++)
        if (strcmp(t->lanes[i], name) == 0)
            return i;
    if (t->nlanes == T2S_LANES)
        return -1;
    snprintf(t->lanes[t->nlanes], T2S_NAME, "%s", name);
    return t->nlanes++;
}

/* Text for XML: names and kinds are plain tokens, but a hostile file may
 * hold anything, so everything markup-like is escaped. */
static void
t2s_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            if ((unsigned char) *s >= 0x20 && (unsigned char) *s < 0x7f)
                fputc(*s, out);
            else
                fputc('?', out);
        }
    }
}

static void
t2s_read(struct t2s *t, FILE *in, size_t max)
{
    char line[512];
    uint64_t last_time = UINT64_MAX;
    unsigned row = 0;

    while (fgets(line, sizeof(line), in) != NULL) {
        struct t2s_ev e;
        char *p;

        if (line[0] == '#') {
            if ((p = strstr(line, "QS_SIM_SEED=")) != NULL)
                sscanf(p + 12, "%63s", t->seed);
            if ((p = strstr(line, "hash ")) != NULL)
                sscanf(p + 5, "%63s", t->hash);
            continue;
        }
        memset(&e, 0, sizeof(e));
        if (sscanf(line, "%" SCNu64 " %" SCNu64 " %63s %63s %63s %llu", &e.time,
                   &e.seq, e.kind, e.src, e.dst, &e.size) != 6)
            continue;
        if (t->n == max)
            break;
        if (e.time != last_time) {
            if (last_time != UINT64_MAX)
                row++;
            last_time = e.time;
        }
        e.row = row;
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 1024;
            struct t2s_ev *n = realloc(t->ev, cap * sizeof(*n));

            if (n == NULL)
                break;
            t->ev = n;
            t->cap = cap;
        }
        t->ev[t->n++] = e;
        t2s_lane(t, e.src);
        t2s_lane(t, e.dst);
    }
}

static double
t2s_x(int lane)
{
    return T2S_LEFT + lane * T2S_LANE_W + T2S_LANE_W / 2.0;
}

static double
t2s_y(unsigned row)
{
    return T2S_TOP + row * T2S_ROW_H + T2S_ROW_H / 2.0;
}

static int
t2s_is_outbound(const char *op)
{
    return strncmp(op, "send_", 5) == 0 || strcmp(op, "put") == 0 ||
           strcmp(op, "get") == 0;
}

/* The arrow of one outbound operation posted at event i. */
static void
t2s_arrow(struct t2s *t, FILE *out, size_t i)
{
    const struct t2s_ev *post = &t->ev[i], *end = NULL, *arrive = NULL;
    const char *op = post->kind + 5;
    const char *color = strncmp(op, "send_unexpected", 15) == 0 ? "#1f5fbf"
                        : strncmp(op, "send_expected", 13) == 0 ? "#2a8a3a"
                                                                : "#c77800";
    char done_prefix[T2S_KIND + 8];
    const char *ret = NULL;
    int a = t2s_lane(t, post->src), b = t2s_lane(t, post->dst), failed;

    if (a < 0 || b < 0)
        return;
    snprintf(done_prefix, sizeof(done_prefix), "done:%s:", op);
    for (size_t j = i + 1; j < t->n; j++) {
        if (t->ev[j].seq != post->seq)
            continue;
        if (strncmp(t->ev[j].kind, "arrive:", 7) == 0 && arrive == NULL)
            arrive = &t->ev[j];
        if (strncmp(t->ev[j].kind, done_prefix, strlen(done_prefix)) == 0) {
            end = &t->ev[j];
            ret = end->kind + strlen(done_prefix);
            break;
        }
    }
    if (end == NULL && arrive == NULL)
        return; /* still in flight at the end of the trace */
    failed = ret != NULL && strcmp(ret, "NA_SUCCESS") != 0;
    {
        unsigned r0 = post->row, r1 = arrive ? arrive->row : end->row;
        double x0 = t2s_x(a), x1 = t2s_x(b);

        if (strcmp(op, "get") == 0) { /* data flows back to the poster */
            double tmp = x0;

            x0 = x1;
            x1 = tmp;
        }
        if (a == b)
            x1 += 30; /* to itself: a short hook */
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"1.2\"%s marker-end=\"url(#%s)\">"
                "<title>",
                x0, t2s_y(r0), x1, t2s_y(r1), failed ? "#d01010" : color,
                failed ? " stroke-dasharray=\"4,3\"" : "",
                failed ? "ahead-bad" : "ahead");
        t2s_text(out, op);
        fprintf(out, " seq %" PRIu64 " %llu bytes ", post->seq, post->size);
        if (ret != NULL)
            t2s_text(out, ret);
        fputs("</title></line>\n", out);
        if (failed) {
            fprintf(out,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                    "fill=\"#d01010\">",
                    (x0 + x1) / 2, t2s_y(r1) - 2);
            t2s_text(out, ret);
            fputs("</text>\n", out);
        }
    }
}

static void
t2s_fault(struct t2s *t, FILE *out, const struct t2s_ev *e)
{
    const char *what = e->kind + 6;
    int lane = t2s_lane(t, e->src);
    double y = t2s_y(e->row);

    if (lane < 0)
        lane = 0;
    if (strcmp(what, "crash") == 0 || strcmp(what, "restart") == 0) {
        int crash = what[0] == 'c';

        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"6\" "
                "fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                "font-weight=\"bold\" fill=\"%s\">%s</text>\n",
                t2s_x(lane) - 40, y - 3, 80, crash ? "#d01010" : "#2a8a3a",
                t2s_x(lane) + 44, y + 4, crash ? "#d01010" : "#2a8a3a",
                crash ? "CRASH" : "RESTART");
        return;
    }
    fprintf(out,
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d01010\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#d01010\">",
            t2s_x(lane), y, t2s_x(lane) + 6, y - 3);
    t2s_text(out, what);
    if (strncmp(what, "partition", 9) == 0) {
        fputs(" ", out);
        t2s_text(out, e->src);
        fputs("&gt;", out);
        t2s_text(out, e->dst);
    }
    fputs("</text>\n", out);
}

static void
t2s_write(struct t2s *t, FILE *out)
{
    unsigned rows = t->n ? t->ev[t->n - 1].row + 1 : 1;
    double width = T2S_LEFT + t->nlanes * T2S_LANE_W + 40;
    double height = T2S_TOP + rows * T2S_ROW_H + 30;
    unsigned last_label = 0;

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" font-family=\"monospace\">\n",
            width, height);
    fputs(
        "<defs>\n"
        "<marker id=\"ahead\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" "
        "refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" "
        "fill=\"#444\"/></marker>\n"
        "<marker id=\"ahead-bad\" markerWidth=\"8\" markerHeight=\"8\" "
        "refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" "
        "fill=\"#d01010\"/></marker>\n</defs>\n",
        out);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                 "<text x=\"10\" y=\"20\" font-size=\"13\">quicksilver sim "
                 "trace: QS_SIM_SEED=");
    t2s_text(out, t->seed[0] ? t->seed : "?");
    fputs(" hash ", out);
    t2s_text(out, t->hash[0] ? t->hash : "?");
    fprintf(out, " (%zu events)</text>\n", t->n);
    for (int i = 0; i < t->nlanes; i++) {
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" "
                "stroke=\"#bbb\"/>\n<text x=\"%.1f\" y=\"%d\" font-size=\"12\" "
                "text-anchor=\"middle\" font-weight=\"bold\">",
                t2s_x(i), T2S_TOP - 10, t2s_x(i), height - 20, t2s_x(i),
                T2S_TOP - 16);
        t2s_text(out, t->lanes[i]);
        fputs("</text>\n", out);
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct t2s_ev *e = &t->ev[i];

        /* Time axis: a label every few rows, in microseconds. */
        if (i == 0 ||
            (e->row != t->ev[i - 1].row && e->row >= last_label + 4)) {
            fprintf(out,
                    "<text x=\"4\" y=\"%.1f\" font-size=\"9\" fill=\"#666\">"
                    "%.3f us</text>\n",
                    t2s_y(e->row) + 3, (double) e->time / 1000.0);
            last_label = e->row;
        }
        if (strncmp(e->kind, "post:", 5) == 0 && t2s_is_outbound(e->kind + 5))
            t2s_arrow(t, out, i);
        else if (strncmp(e->kind, "fault:", 6) == 0)
            t2s_fault(t, out, e);
        else if (strcmp(e->kind, "node_up") == 0 ||
                 strcmp(e->kind, "node_down") == 0) {
            int lane = t2s_lane(t, e->src);

            if (lane >= 0)
                fprintf(out,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                        "fill=\"#666\">%s</text>\n",
                        t2s_x(lane) + 4, t2s_y(e->row) + 3,
                        e->kind[5] == 'u' ? "up" : "down");
        }
    }
    fputs("</svg>\n", out);
}

int
main(int argc, char **argv)
{
    struct t2s t;
    size_t max = 5000;
    FILE *in = stdin, *out = stdout;
    int arg = 1;

    memset(&t, 0, sizeof(t));
    if (arg + 1 < argc && strcmp(argv[arg], "-n") == 0) {
        max = strtoul(argv[arg + 1], NULL, 10);
        arg += 2;
    }
    if (arg < argc && strcmp(argv[arg], "-h") == 0) {
        fprintf(stderr, "usage: %s [-n max_lines] [trace [out.svg]]\n",
                argv[0]);
        return 2;
    }
    if (arg < argc && (in = fopen(argv[arg], "r")) == NULL) {
        perror(argv[arg]);
        return 1;
    }
    if (arg + 1 < argc && (out = fopen(argv[arg + 1], "w")) == NULL) {
        perror(argv[arg + 1]);
        return 1;
    }
    t2s_read(&t, in, max);
    t2s_write(&t, out);
    free(t.ev);
    if (in != stdin)
        fclose(in);
    if (out != stdout && fclose(out) != 0) {
        perror("write");
        return 1;
    }
    return 0;
}
