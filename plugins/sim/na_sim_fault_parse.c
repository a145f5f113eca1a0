/*
 * The fault profile's text form.
 *
 *   profile := rule? ( ';' rule? )*
 *   rule    := 'world' ':' params
 *            | 'link' ':' end ( '>' | '<>' ) end ':' params
 *            | 'node' ':' name ':' params
 *            | 'partition' ':' end ( '>' | '<>' ) end [ '@' time '-' [ time ] ]
 *   end     := name | '*'
 *   params  := param ( ',' param )*
 *   param   := key '=' value | ( 'crash' | 'restart' ) '@' [ 't=' ] time
 *
 * Names are node names without ':' (which separates fields here). Times and
 * durations are a decimal number with an optional unit ns (default), us, ms
 * or s; probabilities are decimals between 0 and 1. Spaces around tokens
 * are ignored. The text comes from the environment, so every number is
 * range-checked, every count bounded, and any error names its position.
 */
#include "na_sim_fault.h"

#include <string.h>

struct na_sim_cursor_txt {
    const char *s; /* whole spec, for positions in errors */
    const char *p; /* current position                    */
    char *err;
    size_t err_size;
};

static na_return_t
na_sim_perr(struct na_sim_cursor_txt *c, const char *what)
{
    if (c->err != NULL && c->err_size > 0)
        snprintf(c->err, c->err_size, "%s at offset %zu", what,
                 (size_t) (c->p - c->s));
    return NA_INVALID_ARG;
}

static void
na_sim_skip_ws(struct na_sim_cursor_txt *c)
{
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
        c->p++;
}

static bool
na_sim_accept(struct na_sim_cursor_txt *c, const char *tok)
{
    size_t n = strlen(tok);

    na_sim_skip_ws(c);
    if (strncmp(c->p, tok, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool
na_sim_profile_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
}

/* A node name, or '*' when any_ok. */
static na_return_t
na_sim_parse_end(struct na_sim_cursor_txt *c, struct na_sim_name *name,
                 bool *any, bool any_ok)
{
    const char *start;

    na_sim_skip_ws(c);
    *any = false;
    if (*c->p == '*') {
        if (!any_ok)
            return na_sim_perr(c, "'*' not allowed here");
        c->p++;
        *any = true;
        return NA_SUCCESS;
    }
    start = c->p;
    while (na_sim_profile_name_char(*c->p))
        c->p++;
    if (!na_sim_name_parse(start, (size_t) (c->p - start), name))
        return na_sim_perr(c, "expected a node name");
    return NA_SUCCESS;
}

/* Unsigned decimal with an optional fraction, scaled by 10^frac_digits:
 * "2.5" with 3 digits gives 2500. Extra fraction digits are truncated. */
static na_return_t
na_sim_parse_fixed(struct na_sim_cursor_txt *c, unsigned int frac_digits,
                   uint64_t *out)
{
    uint64_t v = 0;
    unsigned int digits = 0, frac = 0;

    na_sim_skip_ws(c);
    while (*c->p >= '0' && *c->p <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return na_sim_perr(c, "number too large");
        v = v * 10 + (uint64_t) (*c->p++ - '0');
        digits++;
    }
    if (*c->p == '.') {
        c->p++;
        while (*c->p >= '0' && *c->p <= '9') {
            if (frac < frac_digits) {
                if (v > (UINT64_MAX - 9) / 10)
                    return na_sim_perr(c, "number too large");
                v = v * 10 + (uint64_t) (*c->p - '0');
                frac++;
            }
            c->p++;
            digits++;
        }
    }
    if (digits == 0)
        return na_sim_perr(c, "expected a number");
    for (; frac < frac_digits; frac++) {
        if (v > UINT64_MAX / 10)
            return na_sim_perr(c, "number too large");
        v *= 10;
    }
    *out = v;
    return NA_SUCCESS;
}

/* A duration or time: number and unit, in nanoseconds (three fraction
 * digits are kept, so "1.5us" is exact). */
static na_return_t
na_sim_parse_duration(struct na_sim_cursor_txt *c, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t mult;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    uint64_t milli, mult = 1;
    na_return_t ret = na_sim_parse_fixed(c, 3, &milli);

    if (ret != NA_SUCCESS)
        return ret;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].unit);

        if (strncmp(c->p, units[i].unit, n) == 0) {
            c->p += n;
            mult = units[i].mult;
            break;
        }
    }
    /* Whole milli-units times the unit, without overflow. */
    if (milli / 1000 > UINT64_MAX / mult ||
        (milli / 1000) * mult > UINT64_MAX - (milli % 1000) * mult / 1000)
        return na_sim_perr(c, "duration too large");
    *ns = (milli / 1000) * mult + (milli % 1000) * mult / 1000;
    return NA_SUCCESS;
}

static na_return_t
na_sim_parse_prob(struct na_sim_cursor_txt *c, uint32_t *ppb)
{
    uint64_t v;
    na_return_t ret = na_sim_parse_fixed(c, 9, &v);

    if (ret != NA_SUCCESS)
        return ret;
    if (v > NA_SIM_PPB)
        return na_sim_perr(c, "probability above 1");
    *ppb = (uint32_t) v;
    return NA_SUCCESS;
}

static na_return_t
na_sim_parse_jitter(struct na_sim_cursor_txt *c, struct na_sim_jitter *j)
{
    uint64_t shape;
    na_return_t ret;

    if (na_sim_accept(c, "pareto:")) {
        j->dist = NA_SIM_DIST_PARETO;
        j->shape = 1.5;
    } else if (na_sim_accept(c, "lognormal:")) {
        j->dist = NA_SIM_DIST_LOGNORMAL;
        j->shape = 1.0;
    } else if (na_sim_accept(c, "uniform:")) {
        j->dist = NA_SIM_DIST_UNIFORM;
        j->shape = 0;
    } else
        return na_sim_perr(c, "expected pareto:, lognormal: or uniform:");
    ret = na_sim_parse_duration(c, &j->scale_ns);
    if (ret != NA_SUCCESS)
        return ret;
    if (j->scale_ns > 1000000000ULL)
        return na_sim_perr(c, "jitter scale above 1s");
    if (j->dist != NA_SIM_DIST_UNIFORM && na_sim_accept(c, ":")) {
        ret = na_sim_parse_fixed(c, 3, &shape);
        if (ret != NA_SUCCESS)
            return ret;
        /* Pareto needs alpha > 0; a lognormal sigma above 10 only makes
         * overflowing tails. Both are kept in a sane band. */
        if (shape < 100 || shape > 10000)
            return na_sim_perr(c, "shape must lie in [0.1, 10]");
        j->shape = (double) shape / 1000.0;
    }
    return NA_SUCCESS;
}

static const char *const na_sim_prob_names[NA_SIM_P_COUNT] = {
    [NA_SIM_P_LOSS] = "loss",         [NA_SIM_P_DUP] = "dup",
    [NA_SIM_P_TRUNC] = "trunc",       [NA_SIM_P_CORRUPT] = "corrupt",
    [NA_SIM_P_SEND_ERR] = "send_err", [NA_SIM_P_RMA_ERR] = "rma_err",
    [NA_SIM_P_PARTIAL] = "partial",   [NA_SIM_P_REVOKE] = "revoke",
    [NA_SIM_P_AGAIN] = "again",       [NA_SIM_P_RNR] = "rnr",
    [NA_SIM_P_REORDER] = "reorder",
};

const char *
na_sim_prob_name(enum na_sim_prob p)
{
    return (unsigned) p < NA_SIM_P_COUNT ? na_sim_prob_names[p] : "?";
}

static na_return_t
na_sim_add_action(struct na_sim_cursor_txt *c, struct na_sim_profile *out,
                  enum na_sim_action_kind kind, uint64_t t, unsigned int rule)
{
    if (out->nactions >= NA_SIM_FAULT_MAX_ACTIONS) {
        na_sim_perr(c, "too many scheduled actions");
        return NA_OVERFLOW;
    }
    out->actions[out->nactions++] =
        (struct na_sim_fault_action){.kind = kind, .time_ns = t, .rule = rule};
    return NA_SUCCESS;
}

static na_return_t
na_sim_parse_param(struct na_sim_cursor_txt *c, struct na_sim_profile *out,
                   struct na_sim_fault_rule *r, unsigned int rule_index)
{
    struct na_sim_fault_params *pp = &r->params;
    uint64_t v;
    na_return_t ret;

    if (na_sim_accept(c, "crash@") || na_sim_accept(c, "restart@")) {
        bool crash = c->p[-2] == 'h';

        if (r->scope != NA_SIM_SCOPE_NODE)
            return na_sim_perr(c, "crash and restart belong to a node rule");
        (void) na_sim_accept(c, "t=");
        ret = na_sim_parse_duration(c, &v);
        if (ret != NA_SUCCESS)
            return ret;
        return na_sim_add_action(c, out,
                                 crash ? NA_SIM_ACT_CRASH : NA_SIM_ACT_RESTART,
                                 v, rule_index);
    }
    for (int i = 0; i < NA_SIM_P_COUNT; i++) {
        char key[16];

        snprintf(key, sizeof(key), "%s=", na_sim_prob_names[i]);
        if (na_sim_accept(c, key))
            return na_sim_parse_prob(c, &pp->p[i]);
    }
    if (na_sim_accept(c, "latency="))
        return na_sim_parse_duration(c, &pp->latency_ns);
    if (na_sim_accept(c, "jitter="))
        return na_sim_parse_jitter(c, &pp->jitter);
    if (na_sim_accept(c, "detect=")) {
        if (r->scope != NA_SIM_SCOPE_WORLD)
            return na_sim_perr(c, "detect belongs to the world rule");
        pp->has_detect = true;
        return na_sim_parse_duration(c, &pp->detect_ns);
    }
    if (na_sim_accept(c, "rnr_delay=")) {
        pp->has_rnr_delay = true;
        return na_sim_parse_duration(c, &pp->rnr_delay_ns);
    }
    if (r->scope == NA_SIM_SCOPE_LINK && (strncmp(c->p, "backlog=", 8) == 0 ||
                                          strncmp(c->p, "when_full=", 10) == 0))
        return na_sim_perr(c, "backlog settings belong to a node or the world");
    if (na_sim_accept(c, "backlog=")) {
        ret = na_sim_parse_fixed(c, 0, &v);
        if (ret != NA_SUCCESS)
            return ret;
        if (v > (1U << 20))
            return na_sim_perr(c, "backlog above 1048576");
        pp->has_backlog = true;
        pp->backlog = (size_t) v;
        return NA_SUCCESS;
    }
    if (na_sim_accept(c, "when_full=")) {
        if (na_sim_accept(c, "block"))
            pp->when_full = NA_SIM_BACKLOG_BLOCK;
        else if (na_sim_accept(c, "fail"))
            pp->when_full = NA_SIM_BACKLOG_FAIL;
        else
            return na_sim_perr(c, "when_full is block or fail");
        return NA_SUCCESS;
    }
    return na_sim_perr(c, "unknown parameter");
}

static na_return_t
na_sim_parse_params(struct na_sim_cursor_txt *c, struct na_sim_profile *out,
                    struct na_sim_fault_rule *r, unsigned int rule_index)
{
    na_return_t ret;

    do {
        ret = na_sim_parse_param(c, out, r, rule_index);
        if (ret != NA_SUCCESS)
            return ret;
    } while (na_sim_accept(c, ","));
    return NA_SUCCESS;
}

/* "a>b" or "a<>b", with '*' allowed on either side. */
static na_return_t
na_sim_parse_pair(struct na_sim_cursor_txt *c, struct na_sim_fault_rule *r)
{
    na_return_t ret = na_sim_parse_end(c, &r->a, &r->a_any, true);

    if (ret != NA_SUCCESS)
        return ret;
    if (na_sim_accept(c, "<>"))
        r->both_ways = true;
    else if (!na_sim_accept(c, ">"))
        return na_sim_perr(c, "expected '>' or '<>'");
    return na_sim_parse_end(c, &r->b, &r->b_any, true);
}

static na_return_t
na_sim_parse_rule(struct na_sim_cursor_txt *c, struct na_sim_profile *out)
{
    unsigned int index = (unsigned int) out->nrules;
    struct na_sim_fault_rule *r;
    bool any;
    na_return_t ret;

    if (out->nrules >= NA_SIM_FAULT_MAX_RULES) {
        na_sim_perr(c, "too many rules");
        return NA_OVERFLOW;
    }
    r = &out->rules[out->nrules];
    memset(r, 0, sizeof(*r));
    r->params.when_full = -1;
    r->until_ns = UINT64_MAX;
    if (na_sim_accept(c, "world:")) {
        r->scope = NA_SIM_SCOPE_WORLD;
    } else if (na_sim_accept(c, "link:")) {
        r->scope = NA_SIM_SCOPE_LINK;
        ret = na_sim_parse_pair(c, r);
        if (ret != NA_SUCCESS)
            return ret;
        if (!na_sim_accept(c, ":"))
            return na_sim_perr(c, "expected ':' after the link");
    } else if (na_sim_accept(c, "node:")) {
        r->scope = NA_SIM_SCOPE_NODE;
        ret = na_sim_parse_end(c, &r->a, &any, false);
        if (ret != NA_SUCCESS)
            return ret;
        if (!na_sim_accept(c, ":"))
            return na_sim_perr(c, "expected ':' after the node");
    } else if (na_sim_accept(c, "partition:")) {
        r->scope = NA_SIM_SCOPE_PARTITION;
        ret = na_sim_parse_pair(c, r);
        if (ret != NA_SUCCESS)
            return ret;
        if (na_sim_accept(c, "@")) {
            (void) na_sim_accept(c, "t=");
            ret = na_sim_parse_duration(c, &r->from_ns);
            if (ret != NA_SUCCESS)
                return ret;
            if (!na_sim_accept(c, "-"))
                return na_sim_perr(c, "expected '-' in the window");
            na_sim_skip_ws(c);
            if (*c->p >= '0' && *c->p <= '9') {
                ret = na_sim_parse_duration(c, &r->until_ns);
                if (ret != NA_SUCCESS)
                    return ret;
                if (r->until_ns <= r->from_ns)
                    return na_sim_perr(c, "window ends before it starts");
            }
        }
        if (na_sim_accept(c, ":")) {
            if (!na_sim_accept(c, "silent"))
                return na_sim_perr(c, "expected 'silent' after the window");
            r->silent = true;
        }
        out->nrules++;
        ret = na_sim_add_action(c, out, NA_SIM_ACT_PARTITION_ON, r->from_ns,
                                index);
        if (ret == NA_SUCCESS && r->until_ns != UINT64_MAX)
            ret = na_sim_add_action(c, out, NA_SIM_ACT_PARTITION_OFF,
                                    r->until_ns, index);
        return ret;
    } else
        return na_sim_perr(c, "expected world:, link:, node: or partition:");
    out->nrules++;
    return na_sim_parse_params(c, out, r, index);
}

na_return_t
na_sim_profile_parse(const char *spec, struct na_sim_profile *out, char *err,
                     size_t err_size)
{
    struct na_sim_cursor_txt c = {
        .s = spec, .p = spec, .err = err, .err_size = err_size};
    na_return_t ret;

    if (err != NULL && err_size > 0)
        err[0] = '\0';
    if (spec == NULL)
        return NA_SUCCESS;
    if (strnlen(spec, NA_SIM_FAULT_SPEC_MAX + 1) > NA_SIM_FAULT_SPEC_MAX) {
        na_sim_perr(&c, "profile longer than 8192 bytes");
        return NA_OVERFLOW;
    }
    for (;;) {
        na_sim_skip_ws(&c);
        if (*c.p == '\0')
            return NA_SUCCESS;
        if (*c.p != ';') {
            ret = na_sim_parse_rule(&c, out);
            if (ret != NA_SUCCESS)
                return ret;
            na_sim_skip_ws(&c);
        }
        if (*c.p == '\0')
            return NA_SUCCESS;
        if (*c.p != ';')
            return na_sim_perr(&c, "expected ';' between rules");
        c.p++;
    }
}
