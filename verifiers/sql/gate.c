/* gate.c — the static gate: a tokeniser that reads SQL as SQLite does
 * (one statement, read-only, its tables and functions known), and the cost
 * of common table expressions, the one exponential step of preparing.
 * Part of the SQL checker: what it rests on is verifiers/sql/README.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "sql_internal.h"

/* ---- the static gate: a tokeniser that reads SQL as SQLite does ------------- */

static bool word_is(const char *s, const struct vat_sql_tok *t, const char *w)
{
    size_t n = strlen(w);
    if (t->kind != VAT_SQL_TOK_WORD || t->len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[t->off + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[i])
            return false;
    }
    return true;
}

/* A string literal whose value is 'now' in any case, as SQLite's date
 * functions read it. */
static bool string_is_now(const char *s, const struct vat_sql_tok *t)
{
    if (t->kind != VAT_SQL_TOK_STRING || t->len != 5 || s[t->off + 4] != '\'')
        return false;
    const char *p = s + t->off + 1;
    return (p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'o' && (p[2] | 0x20) == 'w';
}

/* ---- common table expressions: the one exponential step of preparing ---- */

/* SQLite copies a CTE's body into every place that names it, and the copy's
 * own references are expanded in turn, while preparing, where neither the
 * step budget nor the authorizer can see it: ten CTEs that each name the
 * previous one twice make a thousand copies, twenty a million.  So the
 * number of copies is estimated from the text before SQLite sees it. */
#define SQL_MAX_CTES 64
#define SQL_MAX_CTE_COPIES 1000
/* Copies of long bodies cost in proportion: at most this many tokens. */
#define SQL_MAX_CTE_TOKENS 100000

struct cte_def {
    char name[64]; /* case-folded, unquoted; longer names are cut (only
                    * makes more tokens count as references) */
    size_t body_lo, body_hi; /* token range of the body */
    size_t name_tok;
};

/* The identifier a word or quoted token names, unquoted and ASCII
 * case-folded (as SQLite compares names), cut to cap - 1 bytes. */
static void tok_name(const char *s, const struct vat_sql_tok *t, char *out, size_t cap)
{
    size_t i = t->off, end = t->off + t->len, k = 0;
    char q = 0;
    if (t->kind == VAT_SQL_TOK_QUOTED) {
        q = s[i] == '[' ? ']' : s[i];
        i++;
        if (end > i && s[end - 1] == q)
            end--;
    }
    for (; i < end && k + 1 < cap; i++) {
        char c = s[i];
        if (q && q != ']' && c == q && i + 1 < end && s[i + 1] == q)
            i++; /* a doubled quote stands for one */
        out[k++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[k] = 0;
}

static bool tok_is(const char *s, const struct vat_sql_tok *t, char c)
{
    return t->kind == VAT_SQL_TOK_OTHER && t->len == 1 && s[t->off] == c;
}

/* Index of the ')' matching the '(' at tokens[i], or n. */
static size_t tok_close(const char *s, const struct vat_sql_tok *tk, size_t n, size_t i)
{
    size_t depth = 0;
    for (; i < n; i++) {
        if (tok_is(s, &tk[i], '('))
            depth++;
        else if (tok_is(s, &tk[i], ')') && --depth == 0)
            return i;
    }
    return n;
}

static int cte_find(const struct cte_def *d, size_t nd, const char *name)
{
    for (size_t i = 0; i < nd; i++)
        if (strcmp(d[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The weight of one expansion of CTE k: its own weight plus that of every
 * CTE its body names, as often as it names it (a CTE naming itself is
 * recursive, which SQLite runs as a queue; a cycle, which SQLite refuses,
 * weighs nothing).  Weights of 1 count copies; body lengths count tokens. */
static double cte_weight(size_t k, size_t nd, const unsigned *refs, const double *own,
                         double *memo, unsigned char *state)
{
    if (state[k] == 2)
        return memo[k];
    if (state[k] == 1)
        return 0;
    state[k] = 1;
    double c = own[k];
    for (size_t j = 0; j < nd && c <= 1e12; j++)
        if (j != k && refs[k * nd + j])
            c += refs[k * nd + j] * cte_weight(j, nd, refs, own, memo, state);
    state[k] = 2;
    memo[k] = c;
    return c;
}

/* Estimates from above the CTE body copies preparing q makes, and their
 * tokens: every token that names a CTE (outside its definition) counts one
 * expansion of it.  Returns true when both stay within the limits and q
 * defines at most SQL_MAX_CTES CTEs. */
static bool cte_within_limits(const char *q, size_t n)
{
    size_t nt = 0, cap = 64;
    struct vat_sql_tok *tk = vat_xmalloc(cap * sizeof *tk);
    for (size_t pos = 0;;) {
        struct vat_sql_tok t = vat_sql_next_tok(q, n, &pos);
        if (t.kind == VAT_SQL_TOK_END)
            break;
        if (nt == cap) {
            cap *= 2;
            tk = vat_xrealloc(tk, cap * sizeof *tk);
        }
        tk[nt++] = t;
    }
    struct cte_def *d = vat_xcalloc(SQL_MAX_CTES + 1, sizeof *d);
    size_t nd = 0;
    bool ok = true;
    /* NAME [(cols)] AS [NOT] [MATERIALIZED] ( SELECT|WITH|VALUES ... ) */
    for (size_t i = 0; i < nt; i++) {
        if (tk[i].kind != VAT_SQL_TOK_WORD && tk[i].kind != VAT_SQL_TOK_QUOTED)
            continue;
        size_t j = i + 1;
        if (j < nt && tok_is(q, &tk[j], '('))
            j = tok_close(q, tk, nt, j) + 1;
        if (j >= nt || !word_is(q, &tk[j], "as"))
            continue;
        j++;
        if (j < nt && word_is(q, &tk[j], "not"))
            j++;
        if (j < nt && word_is(q, &tk[j], "materialized"))
            j++;
        if (j + 1 >= nt || !tok_is(q, &tk[j], '(') ||
            !(word_is(q, &tk[j + 1], "select") || word_is(q, &tk[j + 1], "with") ||
              word_is(q, &tk[j + 1], "values")))
            continue;
        if (nd == SQL_MAX_CTES) {
            ok = false;
            goto done;
        }
        tok_name(q, &tk[i], d[nd].name, sizeof d[nd].name);
        d[nd].name_tok = i;
        d[nd].body_lo = j + 1;
        d[nd].body_hi = tok_close(q, tk, nt, j);
        nd++;
    }
    if (nd == 0)
        goto done;
    /* Several definitions of one name (in different scopes) pool their
     * references under the first: an estimate from above. */
    unsigned *refs = vat_xcalloc(nd * nd, sizeof *refs);
    double *one = vat_xcalloc(nd, sizeof *one), *len = vat_xcalloc(nd, sizeof *len);
    double *memo_c = vat_xcalloc(nd, sizeof *memo_c), *memo_t = vat_xcalloc(nd, sizeof *memo_t);
    unsigned char *state_c = vat_xcalloc(nd, 1), *state_t = vat_xcalloc(nd, 1);
    bool *is_def = vat_xcalloc(nt, sizeof *is_def);
    for (size_t k = 0; k < nd; k++)
        is_def[d[k].name_tok] = true;
    for (size_t k = 0; k < nd; k++) {
        int owner = cte_find(d, nd, d[k].name);
        one[owner] = 1;
        len[owner] += (double)(d[k].body_hi - d[k].body_lo);
        for (size_t i = d[k].body_lo; i < d[k].body_hi && i < nt; i++) {
            char name[64];
            if (is_def[i] || (tk[i].kind != VAT_SQL_TOK_WORD && tk[i].kind != VAT_SQL_TOK_QUOTED))
                continue;
            tok_name(q, &tk[i], name, sizeof name);
            int r = cte_find(d, nd, name);
            if (r >= 0 && refs[(size_t)owner * nd + (size_t)r] < 1000000)
                refs[(size_t)owner * nd + (size_t)r]++;
        }
    }
    double copies = 0, tokens = 0;
    for (size_t i = 0; i < nt && ok; i++) {
        char name[64];
        if (is_def[i] || (tk[i].kind != VAT_SQL_TOK_WORD && tk[i].kind != VAT_SQL_TOK_QUOTED))
            continue;
        tok_name(q, &tk[i], name, sizeof name);
        int r = cte_find(d, nd, name);
        if (r < 0)
            continue;
        copies += cte_weight((size_t)r, nd, refs, one, memo_c, state_c);
        tokens += cte_weight((size_t)r, nd, refs, len, memo_t, state_t);
        ok = copies <= SQL_MAX_CTE_COPIES && tokens <= SQL_MAX_CTE_TOKENS;
    }
    free(refs);
    free(one);
    free(len);
    free(memo_c);
    free(memo_t);
    free(state_c);
    free(state_t);
    free(is_def);
done:
    free(d);
    free(tk);
    return ok;
}

/* The checks that need no database: size, bytes, one statement that starts
 * as a query, no parameters.  Returns true, or false with *v set (gate not
 * passed). */
bool query_gate(const char *q, size_t n, struct query_facts *qf, struct vat_verdict *v)
{
    memset(qf, 0, sizeof *qf);
    if (n > VAT_MAX_ANSWER_BYTES) {
        *v = vat_reason_verdictf(false, VAT_TOO_LARGE,
                                 "the query is %zu bytes, over the %d-byte cap", n,
                                 VAT_MAX_ANSWER_BYTES);
        return false;
    }
    if (memchr(q, 0, n)) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "the query contains a NUL byte");
        return false;
    }
    if (vat_utf8_prefix(q, n) != n) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "the query is not valid UTF-8");
        return false;
    }
    size_t pos = 0;
    struct vat_sql_tok first;
    do
        first = vat_sql_next_tok(q, n, &pos);
    while (first.kind == VAT_SQL_TOK_SEMI);
    if (first.kind == VAT_SQL_TOK_END) {
        *v = vat_reason_verdictf(false, VAT_PARSE, "the answer holds no SQL statement");
        return false;
    }
    if (word_is(q, &first, "explain")) {
        *v = vat_reason_verdictf(false, VAT_SQL_DENIED, "the sandbox denies EXPLAIN");
        return false;
    }
    if (!word_is(q, &first, "select") && !word_is(q, &first, "with") &&
        !word_is(q, &first, "values")) {
        struct vat_reason r = {{0}, 0};
        vat_reason_esc_puts(&r, "the answer must be one SELECT statement; it starts with '");
        vat_reason_esc(&r, q + first.off, first.len, 24);
        vat_reason_esc_puts(&r, "'");
        *v = vat_reason_verdict(false, 0, VAT_SQL_NOT_SELECT, &r);
        return false;
    }
    /* A CTE's definition (cte_within_limits) has its body's '(' right
     * after AS, NOT or MATERIALIZED; a query with no such '(' has none, and
     * is not tokenized a second time to find that out. */
    bool maybe_cte = false;
    struct vat_sql_tok prev = {0};
    for (pos = 0;;) {
        struct vat_sql_tok t = vat_sql_next_tok(q, n, &pos);
        if (t.kind == VAT_SQL_TOK_END)
            break;
        if (!maybe_cte && tok_is(q, &t, '(') &&
            (word_is(q, &prev, "as") || word_is(q, &prev, "not") ||
             word_is(q, &prev, "materialized")))
            maybe_cte = true;
        prev = t;
        if (t.kind == VAT_SQL_TOK_PARAM) {
            struct vat_reason r = {{0}, 0};
            vat_reason_esc_puts(&r, "the sandbox denies query parameters ('");
                                vat_reason_esc(&r, q + t.off, t.len, 24);
                                vat_reason_esc_puts(&r, "')");
            *v = vat_reason_verdict(false, 0, VAT_SQL_DENIED, &r);
            return false;
        }
        /* by length first: most tokens are no keyword asked about */
        if (t.kind == VAT_SQL_TOK_WORD) {
            if (t.len == 5 && word_is(q, &t, "limit"))
                qf->has_limit = true;
            else if ((t.len == 12 && (word_is(q, &t, "current_date") ||
                                      word_is(q, &t, "current_time"))) ||
                     (t.len == 17 && word_is(q, &t, "current_timestamp")))
                qf->mentions_now = true;
        } else if (string_is_now(q, &t)) {
            qf->mentions_now = true;
        }
    }
    if (maybe_cte && !cte_within_limits(q, n)) {
        *v =
            vat_reason_verdictf(true, VAT_SQL_BUDGET,
                                "the query's common table expressions would be copied more than %d "
                                "times or %d tokens (or it defines more than %d)",
                                SQL_MAX_CTE_COPIES, SQL_MAX_CTE_TOKENS, SQL_MAX_CTES);
        return false;
    }
    return true;
}
