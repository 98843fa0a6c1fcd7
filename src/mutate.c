/* mutate.c — mutants of gold regex patterns and SQL queries for the
 * checker-strength measure: a pattern read by the regex checker's own
 * parser (verifiers/rxparse.h), a query by the SQL checker's own lexer
 * (verifiers/sql/lex.h), each followed by the mutation operators of
 * mutate.h.
 * Exports vat_mutate_regex, vat_mutate_sql and vat_mutants_release. */
#include "mutate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rxparse.h"
#include "sql/lex.h"

/* ---- the mutant list ------------------------------------------------------ */

void vat_mutants_release(struct vat_mutants *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].text);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* The gold being mutated and where its mutants start in the list, so
 * dedupe never compares with mutants of another gold. */
struct edits {
    const char *gold;
    size_t len;
    struct vat_mutants *out;
    size_t first;
};

/* Adds gold with [a, b) replaced by repl, unless that text is gold itself
 * or repeats a mutant of this gold (the first one of a text is kept). */
static void add_edit(struct edits *ed, const char *kind, size_t a, size_t b, const char *repl,
                     bool equivalent)
{
    size_t rl = strlen(repl);
    size_t n = a + rl + (ed->len - b);
    if (n == ed->len && memcmp(ed->gold + a, repl, rl) == 0)
        return;
    char *text = vat_xmalloc(n + 1);
    memcpy(text, ed->gold, a);
    memcpy(text + a, repl, rl);
    memcpy(text + a + rl, ed->gold + b, ed->len - b);
    text[n] = 0;
    if (strcmp(text, ed->gold) == 0) {
        free(text);
        return;
    }
    struct vat_mutants *m = ed->out;
    for (size_t i = ed->first; i < m->n; i++)
        if (strcmp(m->v[i].text, text) == 0) {
            free(text);
            return;
        }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 32;
        m->v = vat_xrealloc(m->v, m->cap * sizeof *m->v);
    }
    m->v[m->n++] = (struct vat_mutant){kind, text, a, equivalent};
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* ==== regex ================================================================= */

/* ---- ASCII sets of classes, to spot a replacement that changes nothing ---- */

struct ascii_set {
    uint64_t w[2];
};

static void set_add(struct ascii_set *a, unsigned c)
{
    if (c < 128)
        a->w[c >> 6] |= (uint64_t)1 << (c & 63);
}

static void set_range(struct ascii_set *a, unsigned lo, unsigned hi)
{
    for (unsigned c = lo; c <= hi && c < 128; c++)
        set_add(a, c);
}

static void set_not(struct ascii_set *a)
{
    a->w[0] = ~a->w[0];
    a->w[1] = ~a->w[1];
}

static void set_or(struct ascii_set *a, const struct ascii_set *b)
{
    a->w[0] |= b->w[0];
    a->w[1] |= b->w[1];
}

/* The set of a class escape letter (d D w W s S), over ASCII. */
static struct ascii_set escape_set(char d)
{
    struct ascii_set a = {{0, 0}};
    char low = (char)(d | 0x20);
    if (low == 'd') {
        set_range(&a, '0', '9');
    } else if (low == 'w') {
        set_range(&a, '0', '9');
        set_range(&a, 'A', 'Z');
        set_range(&a, 'a', 'z');
        set_add(&a, '_');
    } else {
        set_range(&a, '\t', '\r');
        set_add(&a, ' ');
        set_range(&a, 0x1c, 0x1f); /* Python's str \s includes the separators */
    }
    if (d != low)
        set_not(&a);
    return a;
}

/* Reads one class member character at s[*i] (an escape or a plain byte);
 * returns its code, -1 for a class escape (its set added to *cls), -2 when
 * it cannot be read (non-ASCII and the like). */
static int class_member(const char *s, size_t n, size_t *i, struct ascii_set *cls)
{
    char c = s[*i];
    if ((unsigned char)c >= 0x80)
        return -2;
    if (c != '\\') {
        (*i)++;
        return (unsigned char)c;
    }
    if (*i + 1 >= n)
        return -2;
    char d = s[*i + 1];
    *i += 2;
    if (strchr("dDwWsS", d)) {
        struct ascii_set x = escape_set(d);
        set_or(cls, &x);
        return -1;
    }
    switch (d) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'a': return '\a';
    case 'b': return '\b';
    case 'x': {
        if (*i + 2 > n)
            return -2;
        char hex[3] = {s[*i], s[*i + 1], 0};
        char *end;
        long v = strtol(hex, &end, 16);
        if (*end)
            return -2;
        *i += 2;
        return (int)v;
    }
    default:
        if ((unsigned char)d >= 0x80 || (d >= '0' && d <= '9') || (d >= 'A' && d <= 'Z') ||
            (d >= 'a' && d <= 'z'))
            return -2; /* octal, \u, \N and other rare spellings */
        return (unsigned char)d;
    }
}

/* The ASCII set a class token matches; false when it cannot be told. */
static bool class_set(const char *s, size_t len, bool dotall, struct ascii_set *out)
{
    struct ascii_set a = {{0, 0}};
    if (len == 1 && s[0] == '.') {
        set_range(&a, 0, 127);
        if (!dotall)
            a.w[0] &= ~((uint64_t)1 << '\n');
        *out = a;
        return true;
    }
    if (s[0] == '\\') {
        *out = escape_set(s[1]);
        return true;
    }
    size_t i = 1, n = len - 1; /* s[0] '[' and s[len-1] ']' */
    bool neg = i < n && s[i] == '^';
    if (neg)
        i++;
    bool first = true;
    while (i < n) {
        if (s[i] == ']' && !first)
            break;
        first = false;
        int c = class_member(s, n, &i, &a);
        if (c == -2)
            return false;
        if (c == -1)
            continue;
        if (i + 1 < n && s[i] == '-' && s[i + 1] != ']') {
            size_t j = i + 1;
            struct ascii_set dummy = {{0, 0}};
            int hi = class_member(s, n, &j, &dummy);
            if (hi < 0 || hi < c)
                return false;
            set_range(&a, (unsigned)c, (unsigned)hi);
            i = j;
        } else {
            set_add(&a, (unsigned)c);
        }
    }
    if (neg)
        set_not(&a);
    *out = a;
    return true;
}

static void rx_widen(struct edits *ed, const struct vat_rx_tok *t)
{
    char buf[64];
    long lo = t->lo, hi = t->hi;
    size_t a = t->off, b = t->off + t->len;
    /* the bounded form one step wider on each side */
    if (hi >= 0) {
        if (t->braces || hi > 1) {
            snprintf(buf, sizeof buf, "{%ld,%ld}", lo > 0 ? lo - 1 : 0, hi + 1);
            add_edit(ed, "widen_quantifier", a, b, buf, false);
        } else {
            add_edit(ed, "widen_quantifier", a, b, "*", false); /* ? */
        }
    }
    /* no upper bound */
    long open_lo = hi >= 0 ? lo : (lo > 0 ? lo - 1 : -1);
    if (open_lo == 0)
        add_edit(ed, "widen_quantifier", a, b, "*", false);
    else if (open_lo == 1)
        add_edit(ed, "widen_quantifier", a, b, "+", false);
    else if (open_lo > 1) {
        snprintf(buf, sizeof buf, "{%ld,}", open_lo);
        add_edit(ed, "widen_quantifier", a, b, buf, false);
    }
}

static void rx_replace_class(struct edits *ed, const struct vat_rx_toks *ts, const struct vat_rx_tok *t)
{
    static const struct {
        const char *kind, *text;
    } to[] = {{"class_to_digit", "\\d"}, {"class_to_word", "\\w"}, {"class_to_any", "."}};
    struct ascii_set have;
    bool known = !ts->ignorecase && class_set(ed->gold + t->off, t->len, ts->dotall, &have);
    for (size_t k = 0; k < sizeof to / sizeof *to; k++) {
        struct ascii_set want;
        class_set(to[k].text, strlen(to[k].text), ts->dotall, &want);
        bool same = known && have.w[0] == want.w[0] && have.w[1] == want.w[1];
        add_edit(ed, to[k].kind, t->off, t->off + t->len, to[k].text, same);
    }
}

int vat_mutate_regex(const char *gold, struct vat_mutants *out, struct vat_err *e)
{
    struct vat_rx_toks ts = {NULL, 0, 0, false, false};
    if (vat_rx_tokens(gold, &ts, e) != 0) {
        free(ts.v);
        return -1;
    }
    struct edits ed = {gold, strlen(gold), out, out->n};
    for (size_t i = 0; i < ts.n; i++) {
        const struct vat_rx_tok *t = &ts.v[i];
        size_t end = t->off + t->len;
        switch (t->kind) {
        case VAT_RX_ANCHOR: add_edit(&ed, "drop_anchor", t->off, end, "", false); break;
        case VAT_RX_BOUND: add_edit(&ed, "drop_boundary", t->off, end, "", false); break;
        case VAT_RX_OPEN:
            if (t->look) {
                /* a repeat of the lookaround goes with it */
                size_t m = t->match, stop = ts.v[m].off + 1;
                if (m + 1 < ts.n && ts.v[m + 1].kind == VAT_RX_QUANT) {
                    stop = ts.v[m + 1].off + ts.v[m + 1].len;
                    if (m + 2 < ts.n && ts.v[m + 2].kind == VAT_RX_OTHER && ts.v[m + 2].len == 1 &&
                        ts.v[m + 2].off == stop)
                        stop++;
                }
                add_edit(&ed, "drop_lookaround", t->off, stop, "", false);
            }
            break;
        case VAT_RX_QUANT: rx_widen(&ed, t); break;
        case VAT_RX_CLASS: rx_replace_class(&ed, &ts, t); break;
        default: break;
        }
    }
    free(ts.v);
    return 0;
}

/* ==== SQL =================================================================== */

enum sq_kind {
    SQ_WORD,   /* keyword or bare identifier      */
    SQ_STRING, /* 'text'                          */
    SQ_QUOTED, /* "ident", `ident`, [ident]       */
    SQ_BLOB,   /* x'hex'                          */
    SQ_NUMBER,
    SQ_OP,     /* operators: = <= || + ...        */
    SQ_LP,
    SQ_RP,
    SQ_COMMA,
    SQ_SEMI,
    SQ_OTHER   /* . and the like                  */
};

struct sq_tok {
    enum sq_kind kind;
    size_t off, len;
    int depth;     /* parentheses open around the token ('(' and ')' count
                      as outside their own pair)                           */
    int cases;     /* CASE expressions open at this depth                  */
    size_t match;  /* SQ_LP: index of its ')'; SQ_RP: index of its '('    */
    size_t parent; /* index of the '(' around the token, SIZE_MAX at the top */
};

struct sq_toks {
    const char *s;
    struct sq_tok *v;
    size_t n, cap;
};

static bool sq_is(const struct sq_toks *ts, size_t i, const char *w)
{
    if (i >= ts->n || ts->v[i].kind != SQ_WORD || ts->v[i].len != strlen(w))
        return false;
    for (size_t k = 0; k < ts->v[i].len; k++) {
        char c = ts->s[ts->v[i].off + k];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[k])
            return false;
    }
    return true;
}

static bool sq_op(const struct sq_toks *ts, size_t i, const char *op)
{
    return i < ts->n && ts->v[i].kind == SQ_OP && ts->v[i].len == strlen(op) &&
           memcmp(ts->s + ts->v[i].off, op, ts->v[i].len) == 0;
}

static size_t sq_end(const struct sq_toks *ts, size_t i)
{
    return ts->v[i].off + ts->v[i].len;
}

/* The kind of a token of the shared lexer (verifiers/sql/lex.h) as the
 * operators below read it: parentheses, commas and operators apart (two
 * adjacent operator bytes that SQLite reads as one, such as <= or ||,
 * joined), a parameter as one byte of anything else. */
static enum sq_kind sq_kind_of(const char *s, size_t n, const struct vat_sql_tok *t, size_t *len)
{
    static const char *const two[] = {"<=", ">=", "<>", "!=", "==", "||", "<<", ">>", "->"};
    switch (t->kind) {
    case VAT_SQL_TOK_WORD:
        return SQ_WORD;
    case VAT_SQL_TOK_STRING:
        return SQ_STRING;
    case VAT_SQL_TOK_QUOTED:
        return SQ_QUOTED;
    case VAT_SQL_TOK_BLOB:
        return SQ_BLOB;
    case VAT_SQL_TOK_NUMBER:
        return SQ_NUMBER;
    case VAT_SQL_TOK_SEMI:
        return SQ_SEMI;
    default:
        break;
    }
    size_t i = t->off;
    char c = s[i];
    if (t->kind != VAT_SQL_TOK_OTHER || t->len != 1)
        return SQ_OTHER;
    if (c == '(')
        return SQ_LP;
    if (c == ')')
        return SQ_RP;
    if (c == ',')
        return SQ_COMMA;
    if (!strchr("<>=!|-+*/%&~", (int)c))
        return SQ_OTHER;
    bool pair = false;
    for (size_t k = 0; k < sizeof two / sizeof *two && !pair; k++)
        pair = i + 1 < n && s[i] == two[k][0] && s[i + 1] == two[k][1];
    if (pair)
        *len = 2;
    if (pair && s[i] == '-' && i + 2 < n && s[i + 2] == '>')
        *len = 3; /* ->> */
    return SQ_OP;
}

static int sq_tokenise(const char *s, struct sq_toks *ts, struct vat_err *e)
{
    size_t n = strlen(s);
    ts->s = s;
    size_t *stack = vat_xmalloc((n + 1) * sizeof *stack);
    int *cases = vat_xcalloc(n + 2, sizeof *cases);
    int depth = 0;
    size_t pos = 0;
    for (;;) {
        struct vat_sql_tok lt = vat_sql_next_tok(s, n, &pos);
        if (lt.kind == VAT_SQL_TOK_END)
            break;
        size_t i = lt.off, len = lt.len;
        enum sq_kind k = sq_kind_of(s, n, &lt, &len);
        pos = i + len;
        if (lt.unclosed) {
            free(stack);
            free(cases);
            return vat_err_set(e, "query has an unclosed quote at %zu", i);
        }
        if (ts->n == ts->cap) {
            ts->cap = ts->cap ? 2 * ts->cap : 64;
            ts->v = vat_xrealloc(ts->v, ts->cap * sizeof *ts->v);
        }
        struct sq_tok *t = &ts->v[ts->n];
        memset(t, 0, sizeof *t);
        t->kind = k;
        t->off = i;
        t->len = len;
        if (k == SQ_RP) {
            if (depth == 0) {
                free(stack);
                free(cases);
                return vat_err_set(e, "query has an unbalanced ')' at %zu", i);
            }
            depth--;
            t->match = stack[depth];
            ts->v[stack[depth]].match = ts->n;
        }
        t->depth = depth;
        t->parent = depth ? stack[depth - 1] : SIZE_MAX;
        ts->n++;
        if (k == SQ_WORD && sq_is(ts, ts->n - 1, "case"))
            cases[depth]++;
        t->cases = cases[depth];
        if (k == SQ_WORD && sq_is(ts, ts->n - 1, "end") && cases[depth] > 0)
            t->cases = --cases[depth];
        if (k == SQ_LP) {
            stack[depth++] = ts->n - 1;
            cases[depth] = 0;
        }
    }
    free(stack);
    free(cases);
    if (depth)
        return vat_err_set(e, "query has an unclosed '('");
    return 0;
}

/* Writes w in the case style of the gold word at token i. */
static void styled_word(const struct sq_toks *ts, size_t i, const char *w, char *out, size_t cap)
{
    bool lower = ts->s[ts->v[i].off] >= 'a' && ts->s[ts->v[i].off] <= 'z';
    size_t k = 0;
    for (; w[k] && k + 1 < cap; k++) {
        char c = w[k];
        out[k] = lower ? (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c)
                       : (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    out[k] = 0;
}

static void sq_aggregates(struct edits *ed, const struct sq_toks *ts)
{
    static const char *const aggs[] = {"sum", "count", "avg", "max", "min", "total"};
    for (size_t i = 0; i + 1 < ts->n; i++) {
        size_t a = SIZE_MAX;
        for (size_t k = 0; k < sizeof aggs / sizeof *aggs; k++)
            if (sq_is(ts, i, aggs[k]))
                a = k;
        if (a == SIZE_MAX || ts->v[i + 1].kind != SQ_LP)
            continue;
        size_t lp = i + 1, rp = ts->v[lp].match;
        bool star = rp == lp + 2 && sq_op(ts, lp + 1, "*");
        int commas = 0;
        for (size_t k = lp + 1; k < rp; k++)
            commas += ts->v[k].kind == SQ_COMMA && ts->v[k].depth == ts->v[lp].depth + 1;
        if (rp == lp + 1 || star)
            continue; /* COUNT(*) and empty calls have no sound swap */
        char w[16];
        if (commas > 0) {
            /* the scalar max(a, b) / min(a, b) */
            if (a == 3 || a == 4) {
                styled_word(ts, i, a == 3 ? "MIN" : "MAX", w, sizeof w);
                add_edit(ed, "swap_aggregate", ts->v[i].off, sq_end(ts, i), w, false);
            }
            continue;
        }
        /* SUM and TOTAL differ only where SUM is NULL (TOTAL gives 0.0)
         * and in type, which rows compared numerically do not see: inside
         * COALESCE(.., 0) or IFNULL(.., 0) they are the same answer. */
        bool zero_default = i >= 2 && ts->v[i - 1].kind == SQ_LP &&
                            (sq_is(ts, i - 2, "coalesce") || sq_is(ts, i - 2, "ifnull")) &&
                            rp + 3 < ts->n && ts->v[rp + 1].kind == SQ_COMMA &&
                            ts->v[rp + 2].kind == SQ_NUMBER && strtod(ts->s + ts->v[rp + 2].off,
                                                                      NULL) == 0.0 &&
                            ts->v[rp + 3].kind == SQ_RP && ts->v[rp + 3].match == i - 1;
        for (size_t k = 0; k < sizeof aggs / sizeof *aggs; k++) {
            if (k == a)
                continue;
            bool same = zero_default && ((a == 0 && k == 5) || (a == 5 && k == 0));
            styled_word(ts, i, aggs[k], w, sizeof w);
            add_edit(ed, "swap_aggregate", ts->v[i].off, sq_end(ts, i), w, same);
        }
        if (a == 1)
            add_edit(ed, "count_star", ts->v[lp].off + 1, ts->v[rp].off, "*", false);
    }
}

static void sq_comparisons(struct edits *ed, const struct sq_toks *ts)
{
    static const struct {
        const char *op, *to[3];
    } flips[] = {
        {">=", {">", "=", "<"}},  {">", {">=", "<>", "<="}}, {"<=", {"<", "=", ">"}},
        {"<", {"<=", "<>", ">="}}, {"=", {">=", "<=", "<>"}}, {"==", {">=", "<=", "<>"}},
        {"<>", {"<", ">", "="}},  {"!=", {"<", ">", "="}},
    };
    for (size_t i = 0; i < ts->n; i++) {
        const struct sq_tok *t = &ts->v[i];
        if (t->kind == SQ_OP) {
            for (size_t f = 0; f < sizeof flips / sizeof *flips; f++)
                if (sq_op(ts, i, flips[f].op))
                    for (int k = 0; k < 3; k++)
                        add_edit(ed, "flip_comparison", t->off, sq_end(ts, i), flips[f].to[k],
                                 false);
            continue;
        }
        char w[16];
        if (sq_is(ts, i, "is")) {
            if (sq_is(ts, i + 1, "not"))
                add_edit(ed, "flip_comparison", sq_end(ts, i), sq_end(ts, i + 1), "", false);
            else {
                styled_word(ts, i, " NOT", w, sizeof w);
                add_edit(ed, "flip_comparison", sq_end(ts, i), sq_end(ts, i), w, false);
            }
        } else if (sq_is(ts, i, "in") && i + 1 < ts->n && ts->v[i + 1].kind == SQ_LP) {
            if (i > 0 && sq_is(ts, i - 1, "not"))
                add_edit(ed, "flip_comparison", ts->v[i - 1].off, ts->v[i].off, "", false);
            else {
                styled_word(ts, i, "NOT ", w, sizeof w);
                add_edit(ed, "flip_comparison", t->off, t->off, w, false);
            }
        }
    }
}

/* Days since 1970-01-01 of a civil date, and back (proleptic Gregorian;
 * H. Hinnant's algorithms), for shifting date literals by one day. */
static long days_from_civil(long y, long m, long d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(long z, long *y, long *m, long *d)
{
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* Parses 'YYYY-MM-DD' at p (10 bytes) into days; false if not a date. */
static bool parse_date(const char *p, long *days)
{
    for (int k = 0; k < 10; k++)
        if (k == 4 || k == 7 ? p[k] != '-' : !is_digit(p[k]))
            return false;
    long y = strtol(p, NULL, 10), m = (p[5] - '0') * 10 + (p[6] - '0'),
         d = (p[8] - '0') * 10 + (p[9] - '0');
    if (m < 1 || m > 12 || d < 1 || d > 31)
        return false;
    *days = days_from_civil(y, m, d);
    long yy, mm, dd;
    civil_from_days(*days, &yy, &mm, &dd);
    return yy == y && mm == m && dd == d;
}

static void sq_constants(struct edits *ed, const struct sq_toks *ts)
{
    char buf[64];
    for (size_t i = 0; i < ts->n; i++) {
        const struct sq_tok *t = &ts->v[i];
        const char *p = ts->s + t->off;
        if (t->kind == SQ_NUMBER) {
            size_t ndig = 0, ndot = 0, nfrac = 0;
            for (size_t k = 0; k < t->len; k++) {
                if (is_digit(p[k]))
                    ndig++, nfrac += ndot > 0;
                else if (p[k] == '.')
                    ndot++;
            }
            if (ndig + ndot != t->len || ndot > 1 || ndig > 15)
                continue; /* hex, exponents, huge numbers */
            double v = strtod(p, NULL);
            for (int step = -1; step <= 1; step += 2) {
                double x = v + step;
                if (x < 0)
                    snprintf(buf, sizeof buf, "(%.*f)", (int)nfrac, x);
                else
                    snprintf(buf, sizeof buf, "%.*f", (int)nfrac, x);
                if (ndot && !nfrac)
                    strncat(buf, ".", sizeof buf - strlen(buf) - 1);
                add_edit(ed, "shift_constant", t->off, sq_end(ts, i), buf, false);
            }
            continue;
        }
        if (t->kind != SQ_STRING)
            continue;
        size_t body = t->len - 2;
        const char *q = p + 1;
        bool digits = body > 0 && body <= 9;
        for (size_t k = 0; k < body && digits; k++)
            digits = is_digit(q[k]);
        if (digits) {
            long v = strtol(q, NULL, 10);
            for (int step = -1; step <= 1; step += 2) {
                if (v + step < 0)
                    continue;
                snprintf(buf, sizeof buf, "'%0*ld'", (int)body, v + step);
                add_edit(ed, "shift_constant", t->off, sq_end(ts, i), buf, false);
            }
            continue;
        }
        long days;
        if ((body == 10 || (body == 19 && q[10] == ' ')) && parse_date(q, &days)) {
            for (int step = -1; step <= 1; step += 2) {
                long y, m, d;
                civil_from_days(days + step, &y, &m, &d);
                snprintf(buf, sizeof buf, "'%04ld-%02ld-%02ld%.*s'", y, m, d, (int)(body - 10),
                         q + 10);
                add_edit(ed, "shift_date", t->off, sq_end(ts, i), buf, false);
            }
        }
    }
}

/* Index of the first token after the clause that starts at token i and
 * stays at depth d, stopping at any of the words in stops (NULL-ended), a
 * ')' that closes d, ';', and a ',' when comma_stops. */
static size_t clause_end(const struct sq_toks *ts, size_t i, int d, const char *const *stops,
                         bool comma_stops)
{
    for (; i < ts->n; i++) {
        const struct sq_tok *t = &ts->v[i];
        if (t->depth < d || t->kind == SQ_SEMI)
            return i;
        if (t->depth != d)
            continue;
        if (comma_stops && t->kind == SQ_COMMA)
            return i;
        for (size_t k = 0; stops[k]; k++)
            if (sq_is(ts, i, stops[k]))
                return i;
    }
    return ts->n;
}

static void sq_conjuncts(struct edits *ed, const struct sq_toks *ts)
{
    static const char *const where_stops[] = {"group", "order", "having", "limit", "window",
                                              "union", "intersect", "except", NULL};
    static const char *const having_stops[] = {"order", "limit", "window", "union", "intersect",
                                               "except", NULL};
    static const char *const on_stops[] = {"join", "left",   "right",  "full",   "inner",
                                           "cross", "natural", "where", "group", "order",
                                           "having", "limit", "window", "union", "intersect",
                                           "except", NULL};
    for (size_t i = 0; i < ts->n; i++) {
        bool on = sq_is(ts, i, "on");
        const char *const *stops = on ? on_stops
                                      : sq_is(ts, i, "where") ? where_stops
                                      : sq_is(ts, i, "having") ? having_stops
                                      : NULL;
        if (!stops || i + 1 >= ts->n)
            continue;
        int d = ts->v[i].depth, cs = ts->v[i].cases;
        size_t start = i + 1, end = clause_end(ts, start, d, stops, on);
        if (end <= start)
            continue;
        /* top-level AND tokens, unless an OR makes the condition one disjunction */
        size_t *ands = vat_xmalloc((end - start + 1) * sizeof *ands);
        size_t nand = 0;
        bool between = false, disjunction = false;
        for (size_t k = start; k < end; k++) {
            if (ts->v[k].depth != d || ts->v[k].cases != cs)
                continue;
            if (sq_is(ts, k, "between"))
                between = true;
            else if (sq_is(ts, k, "or"))
                disjunction = true;
            else if (sq_is(ts, k, "and")) {
                if (between)
                    between = false;
                else
                    ands[nand++] = k;
            }
        }
        if (disjunction)
            nand = 0;
        size_t last_end = sq_end(ts, end - 1);
        if (nand == 0) {
            if (on)
                add_edit(ed, "drop_conjunct", ts->v[start].off, last_end, "1", false);
            else
                add_edit(ed, "drop_conjunct", ts->v[i].off, last_end, "", false);
        }
        for (size_t c = 0; c < nand + 1 && nand > 0; c++) {
            size_t cs0 = c == 0 ? start : ands[c - 1] + 1;
            if (c < nand && ands[c] + 1 < ts->n) /* the conjunct and the AND after it */
                add_edit(ed, "drop_conjunct", ts->v[cs0].off, ts->v[ands[c] + 1].off, "", false);
            else /* the last: the AND before it and the conjunct */
                add_edit(ed, "drop_conjunct", sq_end(ts, ands[c - 1] - 1), last_end, "", false);
        }
        free(ands);
    }
}

static void sq_order(struct edits *ed, const struct sq_toks *ts, bool ordered)
{
    static const char *const stops[] = {"limit", "rows", "range", "groups", "union", "intersect",
                                        "except", NULL};
    for (size_t i = 0; i + 1 < ts->n; i++) {
        if (!sq_is(ts, i, "order") || !sq_is(ts, i + 1, "by"))
            continue;
        int d = ts->v[i].depth;
        size_t start = i + 2, end = clause_end(ts, start, d, stops, false);
        if (end <= start)
            continue;
        /* Does the order show?  At the top only when rows are compared in
         * order; in a subquery only with a LIMIT; in a window or a call
         * always. */
        bool shows;
        if (d == 0) {
            shows = ordered;
        } else {
            size_t lp = ts->v[i].parent;
            bool subquery = sq_is(ts, lp + 1, "select") || sq_is(ts, lp + 1, "with") ||
                            sq_is(ts, lp + 1, "values");
            shows = !subquery || (end < ts->n && sq_is(ts, end, "limit"));
        }
        size_t a = start;
        while (a < end) {
            size_t b = a;
            while (b < end && !(ts->v[b].kind == SQ_COMMA && ts->v[b].depth == d))
                b++;
            size_t core = b; /* the item without NULLS FIRST/LAST */
            if (core - a >= 3 && sq_is(ts, core - 2, "nulls"))
                core -= 2;
            char w[16];
            if (core > a && sq_is(ts, core - 1, "asc")) {
                styled_word(ts, core - 1, "DESC", w, sizeof w);
                add_edit(ed, "swap_order", ts->v[core - 1].off, sq_end(ts, core - 1), w, !shows);
            } else if (core > a && sq_is(ts, core - 1, "desc")) {
                styled_word(ts, core - 1, "ASC", w, sizeof w);
                add_edit(ed, "swap_order", ts->v[core - 1].off, sq_end(ts, core - 1), w, !shows);
            } else if (core > a) {
                styled_word(ts, i, " DESC", w, sizeof w);
                add_edit(ed, "swap_order", sq_end(ts, core - 1), sq_end(ts, core - 1), w, !shows);
            }
            a = b + 1;
        }
    }
}

/* True when tokens [a, b) form one operand that needs no parentheses: a
 * single token, a dotted name, or a call. */
static bool sq_simple(const struct sq_toks *ts, size_t a, size_t b)
{
    if (b - a == 1)
        return true;
    if (ts->v[a].kind == SQ_WORD && ts->v[a + 1].kind == SQ_LP && ts->v[a + 1].match == b - 1)
        return true;
    for (size_t k = a; k < b; k++) {
        bool name = ts->v[k].kind == SQ_WORD || ts->v[k].kind == SQ_QUOTED;
        bool dot = ts->v[k].kind == SQ_OTHER && ts->s[ts->v[k].off] == '.';
        if ((k - a) % 2 == 0 ? !name : !dot)
            return false;
    }
    return true;
}

static void sq_misc(struct edits *ed, const struct sq_toks *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        const struct sq_tok *t = &ts->v[i];
        if (sq_is(ts, i, "distinct") && !(i > 0 && (sq_is(ts, i - 1, "is") ||
                                                    sq_is(ts, i - 1, "not")))) {
            size_t stop = i + 1 < ts->n ? ts->v[i + 1].off : sq_end(ts, i);
            add_edit(ed, "drop_distinct", t->off, stop, "", false);
        } else if (sq_is(ts, i, "left")) {
            size_t j = i + 1;
            if (sq_is(ts, j, "outer"))
                j++;
            if (sq_is(ts, j, "join"))
                add_edit(ed, "left_to_inner", t->off, ts->v[j].off, "", false);
        } else if ((sq_is(ts, i, "coalesce") || sq_is(ts, i, "ifnull")) && i + 1 < ts->n &&
                   ts->v[i + 1].kind == SQ_LP) {
            size_t lp = i + 1, rp = ts->v[lp].match, c = lp + 1;
            while (c < rp && !(ts->v[c].kind == SQ_COMMA && ts->v[c].depth == ts->v[lp].depth + 1))
                c++;
            if (c == rp || c == lp + 1)
                continue;
            size_t a0 = ts->v[lp + 1].off, a1 = sq_end(ts, c - 1);
            char *arg = sq_simple(ts, lp + 1, c)
                            ? vat_xstrndup(ts->s + a0, a1 - a0)
                            : vat_xasprintf("(%.*s)", (int)(a1 - a0), ts->s + a0);
            /* TOTAL() and COUNT() are never NULL: a default cannot show */
            bool never_null = (sq_is(ts, lp + 1, "total") || sq_is(ts, lp + 1, "count")) &&
                              ts->v[lp + 2].kind == SQ_LP && ts->v[lp + 2].match == c - 1;
            add_edit(ed, "drop_coalesce", t->off, sq_end(ts, rp), arg, never_null);
            free(arg);
        }
    }
}

int vat_mutate_sql(const char *gold, bool ordered, struct vat_mutants *out, struct vat_err *e)
{
    struct sq_toks ts = {NULL, NULL, 0, 0};
    if (sq_tokenise(gold, &ts, e) != 0) {
        free(ts.v);
        return -1;
    }
    struct edits ed = {gold, strlen(gold), out, out->n};
    sq_aggregates(&ed, &ts);
    sq_comparisons(&ed, &ts);
    sq_constants(&ed, &ts);
    sq_conjuncts(&ed, &ts);
    sq_order(&ed, &ts, ordered);
    sq_misc(&ed, &ts);
    free(ts.v);
    return 0;
}
