/* sql.c — the SQL checker and its sandbox.  An untrusted answer must be one
 * SQLite SELECT (WITH … SELECT and VALUES are fine).  For every fixture of
 * the task it runs, beside the spec's reference query, on a fresh in-memory
 * copy of the fixture under an authorizer allow-list and step, row, byte
 * and length budgets, and its rows must equal the reference's: as a
 * multiset, or as a list for ordered tasks.  Exports vat_check_sql,
 * vat_sql_run, vat_sql_checker_version and vat_sql_gold_admissible.
 *
 * What the sandbox rests on, so a change here keeps it whole:
 *  - The fixture is read into memory by this file and handed to SQLite
 *    with sqlite3_deserialize(READONLY): SQLite never opens the file, so
 *    no answer can change it, and a fresh copy serves every single query.
 *    Besides the authorizer, the statement must be read-only and be the
 *    only one in the text.
 *  - Connections use the "vat-sql-sandbox" VFS, which refuses every file
 *    open (so temporary storage cannot spill to disk and a query that
 *    needs more than the page caches is stopped) and has no clock (so
 *    'now' and date() with no argument read as NULL, whatever the text).
 *  - Memory: SQLite has no per-connection cap, and sqlite3_hard_heap_limit64
 *    is process-wide (one answer would fail another thread's check), so
 *    vat gives SQLite a counting allocator (see "counted memory"): what a
 *    query holds while it prepares and runs, and what preparing requests in
 *    all, are capped per thread, in bytes SQLite asks for, the same on
 *    every machine and build.  Values and rows are also capped by
 *    SQLITE_LIMIT_LENGTH, sorters and ephemeral tables by their page caches
 *    (their spill is refused), results by max_rows and max_bytes.  The
 *    optimisations that copy expressions (flattener, push-down, constant
 *    propagation) are off, so preparing does not multiply them.
 *  - Time: the step budget is the deterministic limit, one per check (an
 *    answer's statement on all the task's fixtures together), counted as
 *    the statement's own VM steps plus the bounded built-ins' charges, so
 *    a reused statement, a warm connection or another thread count the
 *    same.  SQLite checks it only at loop jumps, so the cost of one step
 *    is bounded too: LENGTH is small (a step's conversions and copies are
 *    linear in it), printf/format refuse widths and precisions past it
 *    (their one call once looped 2^31 times), instr, replace, LIKE, GLOB
 *    and json_patch charge the step budget by the product of their
 *    lengths, trim/ltrim/rtrim with a character set are replaced by an
 *    equivalent that is linear in the input, and the number of function
 *    calls per statement is capped.  A
 *    ceiling on the thread's CPU time, far above what the counted budgets
 *    allow, is a last net only (verdict checker_limit): CPU time rather
 *    than wall time, so a loaded machine does not trip it.
 *  Every limit and its verdict code: docs/limits.md.
 */
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

#include "sqlfile.h"
#include "verifiers.h"

/* One budget per check: an answer's work on all of the task's fixtures
 * together, in steps (a VM step of its statement, or a unit a bounded
 * built-in charges; see sandbox_query).  SQLite checks it only between
 * opcodes, so what one step can cost is bounded instead, by the length
 * limit below: on the longest values a query can make, the dearest step
 * measured (tests/test_sql_bounds.c, every operator and built-in the
 * sandbox allows) costs about 0.4 us of CPU, so a whole budget stays
 * under half a second.  A spec may lower the budget, never raise it. */
#define SQL_DEFAULT_STEP_BUDGET 1000000
#define SQL_DEFAULT_MAX_ROWS 10000
#define SQL_DEFAULT_MAX_BYTES (8 * 1024 * 1024)
#define SQL_DEFAULT_REL_TOL 1e-9
#define SQL_DEFAULT_ABS_TOL 1e-6
#define SQL_MAX_STEP_BUDGET SQL_DEFAULT_STEP_BUDGET
/* The progress handler runs every this many VM steps; the step budget is
 * counted in these units. */
#define SQL_PROGRESS_OPS 100
/* The CPU-time net per statement (see the file comment), checked every
 * SQL_CPU_CHECK_EVERY progress calls (100,000 VM steps, well under a
 * millisecond) since reading the thread's CPU clock is a real syscall, a
 * measurable share of a short query when read every 1,000 steps.
 * A last resort only, far above what the counted budgets allow (they stop
 * every known attack in well under a second): a query it stops scores 0
 * with code checker_limit, which says the checker, not the answer, ran
 * out, and which admission and strength treat as fatal. */
#define SQL_CPU_MS 20000
#define SQL_CPU_CHECK_EVERY 1000
#define SQL_MAX_FIXTURE_BYTES ((size_t)64 << 20)
/* The longest string, blob or row a query may build (SQLITE_LIMIT_LENGTH),
 * and so the cost of one step: `+` on two 10,000-digit texts converts
 * each inside one opcode (a check once burnt 29 s that way within its
 * budget).  Fixtures' values are at most 42 bytes and their rows 110
 * (every template at its largest), so 1,000 leaves room for joined and
 * concatenated rows. */
#define SQL_MAX_VALUE_BYTES 1000
#define SQL_MAX_FUNCTION_CALLS 256
#define SQL_MAX_LIKE_PATTERN 100
/* SQLITE_TESTCTRL_OPTIMIZATIONS bits (sqliteInt.h) turned off in the
 * sandbox: QueryFlattener 0x1, Transitive 0x80, CountOfView 0x200,
 * PushDown 0x1000, PropagateConst 0x8000, FlttnUnionAll 0x800000. */
#define SQL_OFF_OPTIMIZATIONS 0x00809281
#define SANDBOX_VFS_NAME "vat-sql-sandbox"

/* ---- bounded reasons ------------------------------------------------------ */

/* A reason being built: always valid UTF-8, cut at a character boundary,
 * so jansson can always emit it. */
struct reason {
    char s[256];
    size_t n;
};

/* Appends untrusted bytes: valid UTF-8 is kept, control bytes and invalid
 * bytes are escaped, and at most max bytes of s are shown ("..." after). */
static void reason_text(struct reason *r, const char *s, size_t n, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t shown = 0;
    for (size_t i = 0; i < n;) {
        char esc[8];
        const char *piece;
        size_t plen, k = vat_utf8_seq(u + i, n - i);
        if (shown >= max) {
            piece = "...";
            plen = 3;
            if (r->n + plen < sizeof r->s) {
                memcpy(r->s + r->n, piece, plen);
                r->n += plen;
            }
            break;
        }
        if (k == 1 && (u[i] < 0x20 || u[i] == 0x7f)) {
            snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            piece = esc;
            plen = 4;
        } else if (k == 0) {
            snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            piece = esc;
            plen = 4;
            k = 1;
        } else {
            piece = s + i;
            plen = k;
        }
        if (r->n + plen >= sizeof r->s)
            break;
        memcpy(r->s + r->n, piece, plen);
        r->n += plen;
        r->s[r->n] = 0;
        shown += k;
        i += k;
    }
    r->s[r->n] = 0;
}

static void reason_puts(struct reason *r, const char *s)
{
    reason_text(r, s, strlen(s), sizeof r->s);
}

static void reason_printf(struct reason *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason_printf(struct reason *r, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    reason_puts(r, tmp);
}

static struct vat_verdict reason_verdict(bool gate, double score, const char *code,
                                         const struct reason *r)
{
    return vat_verdict_make(gate, score, code, "%s", r->s);
}

/* A verdict whose whole reason is printf-formatted (trusted text only). */
static struct vat_verdict verdictf(bool gate, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static struct vat_verdict verdictf(bool gate, const char *code, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    struct reason r = {{0}, 0};
    reason_puts(&r, tmp);
    return reason_verdict(gate, 0, code, &r);
}

/* ---- the spec --------------------------------------------------------------- */

struct sql_spec {
    const json_t *fixtures; /* NULL when the caller names the fixture */
    size_t n_fixtures;
    const json_t *tables;
    const json_t *load;     /* CSV fixtures: how they load (sqlload.c); else NULL */
    /* "fixture_sha256" (in memory, never in a table): the digest each
     * fixture must have, given by a reader that knows it (the manifest);
     * a fixture with a digest may be a symbolic link (fixture_load) */
    const json_t *fixture_sha;
    const char *reference;  /* NULL when not needed */
    size_t reference_len;
    bool ordered, allow_empty_variants;
    double rel_tol, abs_tol;
    long long step_budget;
    size_t max_rows, max_bytes;
};

static int spec_bad(struct vat_verdict *v, const char *what)
{
    *v = verdictf(false, VAT_INTERNAL, "sql spec: %s", what);
    return -1;
}

static int spec_unsafe_path(struct vat_verdict *v, const char *rel)
{
    struct reason r = {{0}, 0};
    reason_puts(&r, "unsafe fixture path '");
    reason_text(&r, rel, strlen(rel), 80);
    reason_puts(&r, "'");
    *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

static int spec_bool(const json_t *spec, const char *key, bool *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    if (!json_is_boolean(j))
        return spec_bad(v, key[0] == 'o' ? "'ordered' must be a boolean"
                                         : "'allow_empty_variants' must be a boolean");
    *out = json_is_true(j);
    return 0;
}

static int spec_tol(const json_t *spec, const char *key, double *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    double d = json_number_value(j);
    if (!json_is_number(j) || !isfinite(d) || d < 0)
        return spec_bad(v, key[0] == 'r' ? "'rel_tol' must be a number >= 0"
                                         : "'abs_tol' must be a number >= 0");
    *out = d;
    return 0;
}

static int spec_count(const json_t *spec, const char *key, long long max, long long *out,
                      struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, key);
    if (!j)
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < 1 || json_integer_value(j) > max) {
        *v = verdictf(false, VAT_INTERNAL, "sql spec: '%s' must be an integer from 1 to %lld",
                      key, max);
        return -1;
    }
    *out = (long long)json_integer_value(j);
    return 0;
}

/* Reads the sql members of spec.  need_fixtures demands "fixtures" (and
 * refuses any unsafe path in it); need_reference demands "reference_sql".
 * Returns 0, or -1 with *v an internal verdict. */
static int spec_read(const json_t *spec, bool need_fixtures, bool need_reference,
                     struct sql_spec *s, struct vat_verdict *v)
{
    memset(s, 0, sizeof *s);
    s->rel_tol = SQL_DEFAULT_REL_TOL;
    s->abs_tol = SQL_DEFAULT_ABS_TOL;
    s->step_budget = SQL_DEFAULT_STEP_BUDGET;
    s->max_rows = SQL_DEFAULT_MAX_ROWS;
    s->max_bytes = SQL_DEFAULT_MAX_BYTES;
    if (!json_is_object(spec))
        return spec_bad(v, "not an object");
    const json_t *dialect = json_object_get(spec, "dialect");
    if (dialect && (!json_is_string(dialect) || strcmp(json_string_value(dialect), "sqlite") != 0))
        return spec_bad(v, "'dialect' must be \"sqlite\"");
    if (need_fixtures) {
        const json_t *fx = json_object_get(spec, "fixtures");
        if (!json_is_array(fx) || json_array_size(fx) == 0 ||
            json_array_size(fx) > VAT_MAX_FIXTURES)
            return spec_bad(v, "'fixtures' must be an array of 1 to 8 paths");
        for (size_t i = 0; i < json_array_size(fx); i++) {
            const char *rel = json_string_value(json_array_get(fx, i));
            if (!rel)
                return spec_bad(v, "'fixtures' must hold strings");
            if (!vat_path_is_safe(rel))
                return spec_unsafe_path(v, rel);
        }
        s->fixtures = fx;
        s->n_fixtures = json_array_size(fx);
    }
    const json_t *sha = json_object_get(spec, "fixture_sha256");
    if (sha) {
        if (!json_is_array(sha))
            return spec_bad(v, "'fixture_sha256' must be an array");
        s->fixture_sha = sha;
    }
    const json_t *tables = json_object_get(spec, "tables");
    if (!json_is_array(tables))
        return spec_bad(v, "'tables' must be an array of table names");
    for (size_t i = 0; i < json_array_size(tables); i++)
        if (!json_is_string(json_array_get(tables, i)))
            return spec_bad(v, "'tables' must hold strings");
    s->tables = tables;
    const json_t *load = json_object_get(spec, "load");
    if (load) {
        char why[160];
        if (!vat_sql_load_valid(load, why, sizeof why))
            return spec_bad(v, why);
        s->load = load;
    }
    if (need_reference) {
        const json_t *ref = json_object_get(spec, "reference_sql");
        if (!json_is_string(ref))
            return spec_bad(v, "'reference_sql' must be a string");
        s->reference = json_string_value(ref);
        s->reference_len = json_string_length(ref);
    }
    long long rows = (long long)s->max_rows, bytes = (long long)s->max_bytes;
    if (spec_bool(spec, "ordered", &s->ordered, v) != 0 ||
        spec_bool(spec, "allow_empty_variants", &s->allow_empty_variants, v) != 0 ||
        spec_tol(spec, "rel_tol", &s->rel_tol, v) != 0 ||
        spec_tol(spec, "abs_tol", &s->abs_tol, v) != 0 ||
        spec_count(spec, "step_budget", SQL_MAX_STEP_BUDGET, &s->step_budget, v) != 0 ||
        spec_count(spec, "max_rows", 10000000, &rows, v) != 0 ||
        spec_count(spec, "max_bytes", (long long)1 << 31, &bytes, v) != 0)
        return -1;
    s->max_rows = (size_t)rows;
    s->max_bytes = (size_t)bytes;
    return 0;
}

/* ---- the static gate: a tokeniser that reads SQL as SQLite does ------------- */

enum tok_kind {
    TOK_END,
    TOK_WORD,   /* keyword or bare identifier  */
    TOK_STRING, /* 'text'                      */
    TOK_QUOTED, /* "ident", `ident`, [ident]   */
    TOK_BLOB,   /* x'hex'                      */
    TOK_NUMBER,
    TOK_PARAM,  /* ?, ?7, :name, @name, $name  */
    TOK_SEMI,
    TOK_OTHER
};

struct tok {
    enum tok_kind kind;
    size_t off, len;
};

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_id_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_id_char(unsigned char c)
{
    return is_id_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* Skips whitespace and comments (an unterminated block comment runs to the
 * end, as in SQLite); returns the offset of the next token. */
static size_t skip_blank(const char *s, size_t n, size_t i)
{
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (is_space(c)) {
            i++;
        } else if (c == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'))
                i++;
            i = i < n ? i + 2 : n;
        } else {
            break;
        }
    }
    return i;
}

/* Scans a quoted run that ends at the closing quote q (doubled quotes
 * escape it unless q is ']'); returns the offset after it, or n. */
static size_t scan_quoted(const char *s, size_t n, size_t i, char q)
{
    for (i++; i < n; i++) {
        if (s[i] != q)
            continue;
        if (q != ']' && i + 1 < n && s[i + 1] == q) {
            i++;
            continue;
        }
        return i + 1;
    }
    return n;
}

static struct tok next_tok(const char *s, size_t n, size_t *pos)
{
    size_t i = skip_blank(s, n, *pos);
    struct tok t = {TOK_END, i, 0};
    if (i >= n) {
        *pos = n;
        return t;
    }
    unsigned char c = (unsigned char)s[i];
    size_t j = i + 1;
    if ((c == 'x' || c == 'X') && j < n && s[j] == '\'') {
        t.kind = TOK_BLOB;
        j = scan_quoted(s, n, j, '\'');
    } else if (is_id_start(c)) {
        t.kind = TOK_WORD;
        while (j < n && is_id_char((unsigned char)s[j]))
            j++;
    } else if (c == '\'') {
        t.kind = TOK_STRING;
        j = scan_quoted(s, n, i, '\'');
    } else if (c == '"' || c == '`' || c == '[') {
        t.kind = TOK_QUOTED;
        j = scan_quoted(s, n, i, c == '[' ? ']' : (char)c);
    } else if ((c >= '0' && c <= '9') || (c == '.' && j < n && s[j] >= '0' && s[j] <= '9')) {
        t.kind = TOK_NUMBER;
        while (j < n) {
            unsigned char d = (unsigned char)s[j];
            if ((d == '+' || d == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))
                j++;
            else if (is_id_char(d) || d == '.')
                j++;
            else
                break;
        }
    } else if (c == '?') {
        t.kind = TOK_PARAM;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
    } else if ((c == ':' || c == '@' || c == '$' || c == '#') && j < n &&
               is_id_char((unsigned char)s[j])) {
        t.kind = TOK_PARAM;
        while (j < n && is_id_char((unsigned char)s[j]))
            j++;
    } else if (c == ';') {
        t.kind = TOK_SEMI;
    } else {
        t.kind = TOK_OTHER;
        if (c >= 0x80) /* one whole character; our input is valid UTF-8 */
            while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80)
                j++;
    }
    t.len = j - i;
    *pos = j;
    return t;
}

static bool word_is(const char *s, const struct tok *t, const char *w)
{
    size_t n = strlen(w);
    if (t->kind != TOK_WORD || t->len != n)
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
static bool string_is_now(const char *s, const struct tok *t)
{
    if (t->kind != TOK_STRING || t->len != 5 || s[t->off + 4] != '\'')
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
static void tok_name(const char *s, const struct tok *t, char *out, size_t cap)
{
    size_t i = t->off, end = t->off + t->len, k = 0;
    char q = 0;
    if (t->kind == TOK_QUOTED) {
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

static bool tok_is(const char *s, const struct tok *t, char c)
{
    return t->kind == TOK_OTHER && t->len == 1 && s[t->off] == c;
}

/* Index of the ')' matching the '(' at tokens[i], or n. */
static size_t tok_close(const char *s, const struct tok *tk, size_t n, size_t i)
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
    struct tok *tk = vat_xmalloc(cap * sizeof *tk);
    for (size_t pos = 0;;) {
        struct tok t = next_tok(q, n, &pos);
        if (t.kind == TOK_END)
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
        if (tk[i].kind != TOK_WORD && tk[i].kind != TOK_QUOTED)
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
            if (is_def[i] || (tk[i].kind != TOK_WORD && tk[i].kind != TOK_QUOTED))
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
        if (is_def[i] || (tk[i].kind != TOK_WORD && tk[i].kind != TOK_QUOTED))
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

/* What the gate learns from reading the text. */
struct query_facts {
    bool mentions_now; /* a 'now' literal or CURRENT_DATE/TIME/TIMESTAMP */
    bool has_limit;    /* the LIMIT keyword, outside strings and comments */
};

/* The checks that need no database: size, bytes, one statement that starts
 * as a query, no parameters.  Returns true, or false with *v set (gate not
 * passed). */
static bool query_gate(const char *q, size_t n, struct query_facts *qf, struct vat_verdict *v)
{
    memset(qf, 0, sizeof *qf);
    if (n > VAT_MAX_ANSWER_BYTES) {
        *v = verdictf(false, VAT_TOO_LARGE, "the query is %zu bytes, over the %d-byte cap", n,
                      VAT_MAX_ANSWER_BYTES);
        return false;
    }
    if (memchr(q, 0, n)) {
        *v = verdictf(false, VAT_PARSE, "the query contains a NUL byte");
        return false;
    }
    if (vat_utf8_prefix(q, n) != n) {
        *v = verdictf(false, VAT_PARSE, "the query is not valid UTF-8");
        return false;
    }
    size_t pos = 0;
    struct tok first;
    do
        first = next_tok(q, n, &pos);
    while (first.kind == TOK_SEMI);
    if (first.kind == TOK_END) {
        *v = verdictf(false, VAT_PARSE, "the answer holds no SQL statement");
        return false;
    }
    if (word_is(q, &first, "explain")) {
        *v = verdictf(false, VAT_SQL_DENIED, "the sandbox denies EXPLAIN");
        return false;
    }
    if (!word_is(q, &first, "select") && !word_is(q, &first, "with") &&
        !word_is(q, &first, "values")) {
        struct reason r = {{0}, 0};
        reason_puts(&r, "the answer must be one SELECT statement; it starts with '");
        reason_text(&r, q + first.off, first.len, 24);
        reason_puts(&r, "'");
        *v = reason_verdict(false, 0, VAT_SQL_NOT_SELECT, &r);
        return false;
    }
    /* A CTE's definition (cte_within_limits) has its body's '(' right
     * after AS, NOT or MATERIALIZED; a query with no such '(' has none, and
     * is not tokenized a second time to find that out. */
    bool maybe_cte = false;
    struct tok prev = {0};
    for (pos = 0;;) {
        struct tok t = next_tok(q, n, &pos);
        if (t.kind == TOK_END)
            break;
        if (!maybe_cte && tok_is(q, &t, '(') &&
            (word_is(q, &prev, "as") || word_is(q, &prev, "not") ||
             word_is(q, &prev, "materialized")))
            maybe_cte = true;
        prev = t;
        if (t.kind == TOK_PARAM) {
            struct reason r = {{0}, 0};
            reason_puts(&r, "the sandbox denies query parameters ('");
            reason_text(&r, q + t.off, t.len, 24);
            reason_puts(&r, "')");
            *v = reason_verdict(false, 0, VAT_SQL_DENIED, &r);
            return false;
        }
        /* by length first: most tokens are no keyword asked about */
        if (t.kind == TOK_WORD) {
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
        *v = verdictf(true, VAT_SQL_BUDGET,
                      "the query's common table expressions would be copied more than %d "
                      "times or %d tokens (or it defines more than %d)",
                      SQL_MAX_CTE_COPIES, SQL_MAX_CTE_TOKENS, SQL_MAX_CTES);
        return false;
    }
    return true;
}

/* ---- a fixture set: one connection, its fixtures in turn -------------------- *
 * A prepared check runs the answer on every fixture of the task.  Their
 * databases share one schema (variants of the same tables), so instead of
 * preparing the text on one connection per fixture, a sandbox can open the
 * set (switch_set_make decides when it may) and prepare once: the file
 * the sandbox VFS hands SQLite serves the pages of fixture `cur`, and the
 * runner moves cur between runs.  SQLite notices the move as it notices a
 * file another process changed: each private copy carries its own change
 * counter (header bytes 24-27, and 92-95 so the header's page count stays
 * valid), the pager re-reads it when a read transaction starts (the
 * connection keeps normal locking) and drops its page cache when it
 * differs.  The schema cookie is the same in all, so a prepared statement
 * stays valid, compiled against a schema that is byte for byte the same in
 * every fixture, with no statistics tables (switch_set_make checks): the
 * plan is the one a fresh connection on that fixture would choose. */
struct switch_set {
    size_t n;
    unsigned char **img; /* private copies, change counters patched */
    size_t *len;
};

struct switch_state {
    const struct switch_set *set;
    size_t cur;
};

struct switch_file {
    sqlite3_file base;
    struct switch_state *st;
};

/* The state the next main-database open on this thread serves (set by
 * sandbox_open_switch around its sqlite3_open_v2). */
static _Thread_local struct switch_state *switch_opening;

/* The state a main-database open serves, handed over once. */
static struct switch_state *switch_take(int flags)
{
    struct switch_state *st = (flags & SQLITE_OPEN_MAIN_DB) ? switch_opening : NULL;
    if (st)
        switch_opening = NULL;
    return st;
}

static int switch_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    const struct switch_state *st = ((struct switch_file *)f)->st;
    return vat_sqlfile_read(st->set->img[st->cur], st->set->len[st->cur], buf, n, off);
}

static int switch_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    (void)f;
    (void)buf;
    (void)n;
    (void)off;
    return SQLITE_READONLY;
}

static int switch_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    (void)f;
    (void)size;
    return SQLITE_READONLY;
}

static int switch_size(sqlite3_file *f, sqlite3_int64 *size)
{
    const struct switch_state *st = ((struct switch_file *)f)->st;
    *size = (sqlite3_int64)st->set->len[st->cur];
    return SQLITE_OK;
}

static int switch_sector(sqlite3_file *f)
{
    (void)f;
    return 512;
}

static int switch_device(sqlite3_file *f)
{
    (void)f;
    return 0; /* not SQLITE_IOCAP_IMMUTABLE: the pager must check the header */
}

static const sqlite3_io_methods switch_methods = {
    .iVersion = 1,
    .xClose = vat_sqlfile_close,
    .xRead = switch_read,
    .xWrite = switch_write,
    .xTruncate = switch_truncate,
    .xSync = vat_sqlfile_ok,
    .xFileSize = switch_size,
    .xLock = vat_sqlfile_ok,
    .xUnlock = vat_sqlfile_ok,
    .xCheckReservedLock = vat_sqlfile_unreserved,
    .xFileControl = vat_sqlfile_no_control,
    .xSectorSize = switch_sector,
    .xDeviceCharacteristics = switch_device,
};

/* ---- the sandbox VFS: no files, no clock ------------------------------------ */

static sqlite3_vfs sandbox_vfs;
static int sandbox_vfs_rc = SQLITE_ERROR;
static pthread_once_t sandbox_vfs_once = PTHREAD_ONCE_INIT;

/* Every file SQLite would open here, but a fixture set's main database
 * (below), is temporary storage for a sort, an ephemeral table or a
 * journal: refusing it caps memory at the page caches and keeps answers
 * off the disk.  SQLITE_FULL tells the runner why. */
static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    (void)name;
    struct switch_state *st = switch_take(flags);
    if (st) {
        ((struct switch_file *)f)->st = st;
        f->pMethods = &switch_methods;
        if (out)
            *out = SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB;
        return SQLITE_OK;
    }
    f->pMethods = NULL;
    return SQLITE_FULL;
}

static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
    (void)vfs;
    (void)name;
    (void)sync;
    return SQLITE_IOERR_DELETE;
}

static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    (void)name;
    (void)flags;
    *out = 0;
    return SQLITE_OK;
}

static void *vfs_dlopen(sqlite3_vfs *vfs, const char *name)
{
    (void)vfs;
    (void)name;
    return NULL;
}

static void vfs_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
    (void)vfs;
    if (n > 0)
        snprintf(msg, (size_t)n, "extensions are disabled in the sandbox");
}

static void (*vfs_dlsym(sqlite3_vfs *vfs, void *lib, const char *sym))(void)
{
    (void)vfs;
    (void)lib;
    (void)sym;
    return NULL;
}

static void vfs_dlclose(sqlite3_vfs *vfs, void *lib)
{
    (void)vfs;
    (void)lib;
}

/* No clock: date('now') and date() then yield NULL on every run, so even a
 * 'now' the text check cannot see (built by concatenation, read from a
 * column) cannot make a result depend on the time. */
static int vfs_time(sqlite3_vfs *vfs, double *out)
{
    (void)vfs;
    (void)out;
    return SQLITE_ERROR;
}

static int vfs_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
    (void)vfs;
    (void)out;
    return SQLITE_ERROR;
}

static void sandbox_vfs_init(void)
{
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (!base)
        return;
    sandbox_vfs = *base; /* keeps szOsFile, mxPathname and the path helpers */
    sandbox_vfs.pNext = NULL;
    sandbox_vfs.zName = SANDBOX_VFS_NAME;
    if ((size_t)sandbox_vfs.szOsFile < sizeof(struct switch_file))
        sandbox_vfs.szOsFile = (int)sizeof(struct switch_file);
    sandbox_vfs.xOpen = vfs_open;
    sandbox_vfs.xFullPathname = vat_sqlfile_name_as_is; /* the fixture set's, as it is */
    sandbox_vfs.xDelete = vfs_delete;
    sandbox_vfs.xAccess = vfs_access;
    sandbox_vfs.xDlOpen = vfs_dlopen;
    sandbox_vfs.xDlError = vfs_dlerror;
    sandbox_vfs.xDlSym = vfs_dlsym;
    sandbox_vfs.xDlClose = vfs_dlclose;
    sandbox_vfs.xCurrentTime = vfs_time;
    if (sandbox_vfs.iVersion >= 2)
        sandbox_vfs.xCurrentTimeInt64 = vfs_time64;
    sandbox_vfs_rc = sqlite3_vfs_register(&sandbox_vfs, 0);
}

/* ---- counted memory: the deterministic bound on what one query holds -------- */

/* SQLite has no per-connection memory cap, and sqlite3_hard_heap_limit64 is
 * process-wide.  So vat gives SQLite its own allocator (installed before
 * SQLite starts, by the constructor below) that counts, per thread, the
 * bytes requested while a sandboxed query prepares or runs, and refuses
 * the request that would pass the cap: SQLite then fails the query with
 * SQLITE_NOMEM, which the runner reports as sql_budget.  The counts are the
 * sizes SQLite asks for, with a size prefix of our own (xSize never asks
 * the C library), so they are the same in the release and sanitizer
 * builds and on every machine: a function of the query, the fixture and
 * the SQLite version.  This is what bounds preparing (the query
 * flattener, alias and push-down copies of expressions can grow a short
 * query exponentially before a single VM step runs). */
#define SQL_MAX_QUERY_HEAP ((sqlite3_int64)32 << 20)
/* Bytes requested in all while preparing one query (allocations freed
 * again count too): the work of preparing, counted. */
#define SQL_MAX_PREPARE_ALLOC ((sqlite3_int64)128 << 20)
/* When the counting allocator could not be installed (a host process
 * started SQLite before loading vat), this process-wide net takes its
 * place; a query that hits it gets checker_limit, not a verdict. */
#define SQL_HARD_HEAP_NET ((sqlite3_int64)2 << 30)

struct mem_hdr {
    int32_t size;  /* what SQLite asked for */
    uint32_t cls;  /* the block's size class (MEM_CLASSES: a plain heap block) */
    union {
        uint64_t gen;          /* the counting run that holds it, or 0 */
        struct mem_hdr *next;  /* in a thread's cache of free blocks */
    };
};

/* SQLite allocates and frees some ten thousand blocks per task (parsing,
 * schemas, statements, page caches), more than the C library's per-thread
 * cache holds, so most of its calls reached the library's slow paths
 * (bins, consolidation).  Freed blocks are kept instead, per thread, in
 * size classes and handed out again: 16-byte steps up to 1 KiB, then four
 * steps per doubling up to 256 KiB (a page cache's 4.4 KB entry takes a
 * 5 KiB block, not an 8 KiB one), at most MEM_CACHE_BYTES per thread (the
 * rest goes back to the C library).  Only where the bytes come from
 * changes: the counts above are of the sizes SQLite asks for, as before.
 * Under AddressSanitizer a kept block's bytes are poisoned, so a use after
 * SQLite freed it is still caught. */
#define MEM_SMALL_STEP 16
#define MEM_SMALL_MAX 1024
#define MEM_N_SMALL (MEM_SMALL_MAX / MEM_SMALL_STEP)
#define MEM_LARGE_MAX ((size_t)256 << 10)
#define MEM_N_LARGE 32 /* 1.25 KiB .. 256 KiB: 8 doublings of 1 KiB, 4 steps each */
#define MEM_CLASSES (MEM_N_SMALL + MEM_N_LARGE)
/* A build may set it (0 keeps nothing) to compare with the C library alone. */
#ifndef MEM_CACHE_BYTES
#define MEM_CACHE_BYTES ((size_t)1 << 20)
#endif

#if defined(__SANITIZE_ADDRESS__)
#define MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_ASAN 1
#endif
#endif
#ifdef MEM_ASAN
#include <sanitizer/asan_interface.h>
#define MEM_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MEM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MEM_POISON(p, n) ((void)(p), (void)(n))
#define MEM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct mem_cache {
    struct mem_hdr *free[MEM_CLASSES];
    size_t bytes; /* held in free[] */
    bool armed;   /* the thread's exit hands them back (mem_cache_key) */
    bool closed;  /* the thread is ending: blocks go straight back */
};

static _Thread_local struct mem_cache mem_cache;
/* The allocator's own steps run on every one of SQLite's allocations
 * (thousands a task): kept inside its entry points, not called. */
#define MEM_INLINE static inline __attribute__((always_inline))
static pthread_key_t mem_cache_key;
static pthread_once_t mem_cache_once = PTHREAD_ONCE_INIT;
static bool mem_cache_keyed;

/* The bytes a block of class c holds, its header included. */
MEM_INLINE size_t mem_class_bytes(uint32_t c)
{
    if (c < MEM_N_SMALL)
        return (size_t)(c + 1) * MEM_SMALL_STEP;
    uint32_t doubling = (c - MEM_N_SMALL) / 4, step = (c - MEM_N_SMALL) % 4;
    return ((size_t)MEM_SMALL_MAX << doubling) + (step + 1) * ((size_t)MEM_SMALL_MAX / 4 << doubling);
}

/* The class of a block of total bytes, or MEM_CLASSES when too large. */
MEM_INLINE uint32_t mem_class_of(size_t total)
{
    if (total <= MEM_SMALL_MAX)
        return (uint32_t)((total + MEM_SMALL_STEP - 1) / MEM_SMALL_STEP) - 1;
    if (total > MEM_LARGE_MAX)
        return MEM_CLASSES;
    uint32_t doubling = 0;
    while (((size_t)2 * MEM_SMALL_MAX << doubling) < total)
        doubling++;
    size_t base = (size_t)MEM_SMALL_MAX << doubling, step = (size_t)MEM_SMALL_MAX / 4 << doubling;
    return MEM_N_SMALL + 4 * doubling + (uint32_t)((total - base + step - 1) / step) - 1;
}

static void mem_cache_drain(void)
{
    for (uint32_t c = 0; c < MEM_CLASSES; c++)
        while (mem_cache.free[c]) {
            struct mem_hdr *h = mem_cache.free[c];
            MEM_UNPOISON(h + 1, mem_class_bytes(c) - sizeof *h);
            mem_cache.free[c] = h->next;
            free(h);
        }
    mem_cache.bytes = 0;
}

/* Other keys' destructors may still free SQLite blocks after this one
 * ran; those go straight back. */
static void mem_cache_exit(void *arg)
{
    (void)arg;
    mem_cache.closed = true;
    mem_cache_drain();
}

static void mem_cache_key_make(void)
{
    mem_cache_keyed = pthread_key_create(&mem_cache_key, mem_cache_exit) == 0;
}

/* A block of class c holding total bytes (its header not yet filled): a
 * kept one when there is, else from the C library; NULL when out. */
MEM_INLINE struct mem_hdr *mem_block_get(uint32_t c, size_t total)
{
    if (c == MEM_CLASSES)
        return malloc(total);
    struct mem_hdr *h = mem_cache.free[c];
    if (h) {
        /* Reading a kept block's link is a cache miss more often than
         * not (a profile put most of this function's time there); the
         * next block's link is fetched now, so the next take of this
         * class finds it ready.  A prefetch never faults, NULL included. */
        mem_cache.free[c] = h->next;
        __builtin_prefetch(h->next);
        mem_cache.bytes -= mem_class_bytes(c);
        MEM_UNPOISON(h + 1, mem_class_bytes(c) - sizeof *h);
    } else {
        h = malloc(mem_class_bytes(c));
    }
    return h;
}

/* Has the thread's exit hand its kept blocks back (once a thread, so out
 * of the allocator's inlined path).  Whether it will. */
static __attribute__((noinline, cold)) bool mem_cache_arm(void)
{
    pthread_once(&mem_cache_once, mem_cache_key_make);
    if (!mem_cache_keyed || pthread_setspecific(mem_cache_key, &mem_cache) != 0)
        return false;
    mem_cache.armed = true;
    return true;
}

/* Keeps block h, or gives it back when the cache is full or the thread
 * cannot have it handed back at its exit. */
MEM_INLINE void mem_block_put(struct mem_hdr *h)
{
    uint32_t c = h->cls;
    if (c == MEM_CLASSES || mem_cache.closed ||
        mem_cache.bytes + mem_class_bytes(c) > MEM_CACHE_BYTES) {
        free(h);
        return;
    }
    if (!mem_cache.armed && !mem_cache_arm()) {
        free(h);
        return;
    }
    h->next = mem_cache.free[c];
    mem_cache.free[c] = h;
    mem_cache.bytes += mem_class_bytes(c);
    MEM_POISON(h + 1, mem_class_bytes(c) - sizeof *h);
}

struct mem_count {
    uint64_t gen;                /* 0: not counting on this thread */
    sqlite3_int64 used, cap;     /* bytes held now, and their cap */
    sqlite3_int64 total, total_cap; /* bytes requested since the last reset */
    bool hit;
};

static _Thread_local struct mem_count mem_tls;
static _Atomic uint64_t mem_gen_next = 1;
static bool mem_counted;
static pthread_once_t mem_net_once = PTHREAD_ONCE_INIT;

MEM_INLINE bool mem_take(sqlite3_int64 delta)
{
    if (!mem_tls.gen)
        return true;
    if (delta > 0 && (mem_tls.used + delta > mem_tls.cap ||
                      mem_tls.total + delta > mem_tls.total_cap)) {
        mem_tls.hit = true;
        return false;
    }
    return true;
}

static void *mem_malloc(int n)
{
    if (n < 0 || n > INT32_MAX - (int)sizeof(struct mem_hdr) || !mem_take(n))
        return NULL;
    size_t total = sizeof(struct mem_hdr) + (size_t)n;
    uint32_t c = mem_class_of(total);
    struct mem_hdr *h = mem_block_get(c, total);
    if (!h)
        return NULL;
    h->size = n;
    h->cls = c;
    h->gen = mem_tls.gen;
    if (mem_tls.gen) {
        mem_tls.used += n;
        mem_tls.total += n;
    }
    return h + 1;
}

static void mem_free(void *p)
{
    if (!p)
        return;
    struct mem_hdr *h = (struct mem_hdr *)p - 1;
    if (mem_tls.gen && h->gen == mem_tls.gen)
        mem_tls.used -= h->size;
    mem_block_put(h);
}

static void *mem_realloc(void *p, int n)
{
    if (n < 0 || n > INT32_MAX - (int)sizeof(struct mem_hdr))
        return NULL;
    struct mem_hdr *h = (struct mem_hdr *)p - 1;
    bool mine = mem_tls.gen && h->gen == mem_tls.gen;
    sqlite3_int64 delta = mine ? (sqlite3_int64)n - h->size : n;
    if (!mem_take(delta))
        return NULL;
    size_t total = sizeof(struct mem_hdr) + (size_t)n;
    uint32_t c = mem_class_of(total);
    struct mem_hdr *g;
    if (c == h->cls && c == MEM_CLASSES) {
        g = realloc(h, total);
        if (!g)
            return NULL;
    } else if (c == h->cls) {
        g = h;
    } else {
        g = mem_block_get(c, total);
        if (!g)
            return NULL;
        memcpy(g + 1, h + 1, (size_t)(n < h->size ? n : h->size));
        g->cls = c;
        g->gen = h->gen;
        mem_block_put(h);
    }
    if (mem_tls.gen) {
        mem_tls.used += delta;
        if (delta > 0)
            mem_tls.total += delta;
        g->gen = mem_tls.gen;
    }
    g->size = n;
    return g + 1;
}

static int mem_size(void *p)
{
    return p ? (int)((struct mem_hdr *)p - 1)->size : 0;
}

static int mem_roundup(int n)
{
    return n > 0x7ffffff0 ? n : (n + 7) & ~7;
}

static int mem_init(void *arg)
{
    (void)arg;
    return SQLITE_OK;
}

static void mem_shutdown(void *arg)
{
    (void)arg;
    mem_cache_drain();
}

/* Runs before main (and when a host loads vat), before anything starts
 * SQLite; sqlite3_config refuses once SQLite has started. */
__attribute__((constructor)) static void mem_install(void)
{
    static const sqlite3_mem_methods methods = {
        mem_malloc, mem_free, mem_realloc, mem_size, mem_roundup, mem_init, mem_shutdown, NULL,
    };
    mem_counted = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
    /* SQLite's own statistics of its heap take a process-wide mutex on
     * every allocation; with the counting allocator nothing reads them
     * (the hard heap limit, which needs them, is the net only without
     * it). */
    if (mem_counted)
        sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static void mem_net_init(void)
{
    if (!mem_counted)
        sqlite3_hard_heap_limit64(SQL_HARD_HEAP_NET);
}

/* Starts counting this thread's SQLite allocations afresh. */
static void mem_count_start(sqlite3_int64 total_cap)
{
    mem_tls.gen = atomic_fetch_add(&mem_gen_next, 1);
    mem_tls.used = 0;
    mem_tls.total = 0;
    mem_tls.cap = SQL_MAX_QUERY_HEAP;
    mem_tls.total_cap = total_cap;
    mem_tls.hit = false;
}

static void mem_count_stop(void)
{
    mem_tls.gen = 0;
}

/* ---- built-ins whose one call is not bounded by the length limit ------------ */

/* printf('%.*c', 2147483647, 'x') loops two billion times inside one VM
 * step (SQLite appends the character once per unit of precision, long
 * after the length limit stopped the output), and instr, replace, LIKE,
 * GLOB and json_patch (each key of one object looked up in the other)
 * cost up to the product of their arguments' lengths per call.  These
 * are replaced, in the sandbox, by wrappers that first check or charge the
 * call and then hand it to SQLite's own function, run on a second, empty
 * connection of the sandbox (so results are SQLite's, byte for byte):
 *  - printf/format refuse a width above the length limit, and a precision
 *    above it on every conversion but the string ones (where it only cuts),
 *    as "too big", which is the verdict SQLite's own function reaches for
 *    the same call when it ends;
 *  - instr, replace, like, glob and json_patch charge the step budget one
 *    step per SQL_CHARGE_BYTES of the product of their lengths. */
#define SQL_CHARGE_BYTES 64
#define SQL_AUX_MAX_ARGS 16

enum aux_fn {
    AUX_PRINTF,
    AUX_INSTR,
    AUX_REPLACE,
    AUX_LIKE,
    AUX_GLOB,
    AUX_JSON_PATCH,
    AUX_STRFTIME,
    AUX_DATE,
    AUX_N
};

static const char *const aux_names[AUX_N] = {"printf", "instr",      "replace",  "like",
                                             "glob",   "json_patch", "strftime", "date"};

struct sandbox;
struct aux_slot {
    struct sandbox *sb;
    enum aux_fn fn;
};

/* The width or precision a printf conversion reads from its digits, as
 * SQLite reads them: 32-bit unsigned arithmetic that wraps, then the top
 * bit dropped. */
static long long printf_digits(const unsigned char **z)
{
    uint32_t v = 0;
    while (**z >= '0' && **z <= '9') {
        v = v * 10u + (uint32_t)(**z - '0');
        ++*z;
    }
    return (long long)(v & 0x7fffffffu);
}

/* The width or precision SQLite's printf reads for a '*': the argument as
 * a 64-bit integer cast to int, negated when negative (INT_MIN reads as
 * nothing); a missing argument reads as 0. */
static long long printf_star(sqlite3_value **argv, int argc, int *next)
{
    if (*next >= argc)
        return 0;
    uint32_t low = (uint32_t)(sqlite3_value_int64(argv[(*next)++]) & 0xffffffff);
    int64_t v = low >= 0x80000000u ? (int64_t)low - 0x100000000LL : (int64_t)low;
    if (v == INT32_MIN)
        return 0;
    return v < 0 ? -v : v;
}

/* Whether every width and precision of the format stays within max, read
 * as SQLite 3.40's printf reads them (flags, width or '*', '.' and
 * precision or '*', length modifiers, the conversion). */
static bool printf_bounded(const unsigned char *f, sqlite3_value **argv, int argc, long long max)
{
    int next = 1; /* argv[0] is the format */
    while (f && *f) {
        if (*f++ != '%')
            continue;
        while (*f && strchr("-+ #!0,", *f))
            f++;
        long long width = 0, precision = -1;
        if (*f == '*') {
            width = printf_star(argv, argc, &next);
            f++;
        } else {
            width = printf_digits(&f);
        }
        if (*f == '.') {
            f++;
            if (*f == '*') {
                precision = printf_star(argv, argc, &next);
                f++;
            } else {
                precision = printf_digits(&f);
            }
        }
        while (*f == 'l')
            f++;
        unsigned char conv = *f;
        if (!conv)
            break;
        f++;
        bool string_conv = conv && strchr("sqQwz", conv);
        if (width > max || (!string_conv && precision > max))
            return false;
        if (conv != '%' && conv != 'n')
            next++;
    }
    return true;
}

/* Charges n VM steps to the query; false (budget spent) stops it. */
static bool sandbox_charge(struct sandbox *sb, long long n);

static void aux_call(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- trim with a character set, linear in its input ------------------------- */

/* SQLite's trim(X,Y) tries every character of Y at every position of X,
 * which is quadratic in the length limit.  This is the same function
 * (same splitting of Y, same first-match order, same result) with Y's
 * characters deduplicated and sorted for lookup.  A character longer than
 * four bytes cannot come from valid UTF-8; sets holding one fall back to
 * SQLite's loop under a cost cap. */
struct trim_char {
    unsigned char b[4];
    unsigned len;
    size_t idx;
};

static int trim_char_cmp(const void *pa, const void *pb)
{
    const struct trim_char *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    int c = memcmp(a->b, b->b, a->len);
    if (c)
        return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The lowest set index of a character equal to s[0..len), or SIZE_MAX. */
static size_t trim_find(const struct trim_char *set, size_t n, const unsigned char *s,
                        unsigned len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = set[mid].len != len ? (set[mid].len < len ? -1 : 1)
                                    : memcmp(set[mid].b, s, len);
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else
            return set[mid].idx;
    }
    return SIZE_MAX;
}

/* The set, sorted, with the lowest index of each one-byte character at
 * hand and which lengths it holds: a character of the input is then one
 * table lookup, plus a search per other length the set has. */
struct trim_set {
    const struct trim_char *set;
    size_t m;
    size_t one[256];
    bool has[5];
};

/* How many bytes the first matching character of the set covers at the
 * front (back=false) or back of in[0..n), or 0 when none matches. */
static unsigned trim_match(const struct trim_set *ts, const unsigned char *in, size_t n,
                           bool back)
{
    size_t best = ts->one[back ? in[n - 1] : in[0]];
    unsigned best_len = best == SIZE_MAX ? 0 : 1;
    for (unsigned k = 2; k <= 4 && k <= n; k++) {
        if (!ts->has[k])
            continue;
        size_t idx = trim_find(ts->set, ts->m, back ? in + n - k : in, k);
        if (idx < best) {
            best = idx;
            best_len = k;
        }
    }
    return best_len;
}

static void sandbox_trim(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int flags = (int)(intptr_t)sqlite3_user_data(ctx); /* 1 left, 2 right, 3 both */
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
        return;
    const unsigned char *in = sqlite3_value_text(argv[0]);
    if (!in)
        return;
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    const unsigned char *cs = sqlite3_value_text(argv[1]);
    if (!cs)
        return;
    size_t nchar = 0;
    bool long_char = false;
    for (const unsigned char *z = cs; *z; nchar++) { /* SQLITE_SKIP_UTF8 */
        const unsigned char *start = z;
        if (*(z++) >= 0xc0)
            while ((*z & 0xc0) == 0x80)
                z++;
        if (z - start > 4)
            long_char = true;
    }
    if (nchar > 0 && long_char) {
        if ((double)n * (double)nchar > 2e6) {
            sqlite3_result_error_toobig(ctx);
            return;
        }
        const unsigned char **ch = vat_xcalloc(nchar, sizeof *ch);
        size_t *len = vat_xcalloc(nchar, sizeof *len);
        const unsigned char *z = cs;
        for (size_t i = 0; i < nchar; i++) {
            ch[i] = z;
            if (*(z++) >= 0xc0)
                while ((*z & 0xc0) == 0x80)
                    z++;
            len[i] = (size_t)(z - ch[i]);
        }
        for (int side = 1; side <= 2; side++) {
            while ((flags & side) && n > 0) {
                size_t i;
                for (i = 0; i < nchar; i++)
                    if (len[i] <= n &&
                        memcmp(side == 1 ? in : in + n - len[i], ch[i], len[i]) == 0)
                        break;
                if (i >= nchar)
                    break;
                if (side == 1)
                    in += len[i];
                n -= len[i];
            }
        }
        free(ch);
        free(len);
    } else if (nchar > 0) {
        struct trim_char *set = vat_xcalloc(nchar, sizeof *set);
        const unsigned char *z = cs;
        for (size_t i = 0; i < nchar; i++) {
            const unsigned char *start = z;
            if (*(z++) >= 0xc0)
                while ((*z & 0xc0) == 0x80)
                    z++;
            set[i].len = (unsigned)(z - start);
            memcpy(set[i].b, start, set[i].len);
            set[i].idx = i;
        }
        qsort(set, nchar, sizeof *set, trim_char_cmp);
        size_t m = 0; /* keep the first (lowest index) of equal characters */
        for (size_t i = 0; i < nchar; i++)
            if (m == 0 || set[m - 1].len != set[i].len ||
                memcmp(set[m - 1].b, set[i].b, set[i].len) != 0)
                set[m++] = set[i];
        struct trim_set tset, *ts = &tset;
        ts->set = set;
        ts->m = m;
        memset(ts->has, 0, sizeof ts->has);
        for (size_t c = 0; c < 256; c++)
            ts->one[c] = SIZE_MAX;
        for (size_t i = 0; i < m; i++) {
            ts->has[set[i].len] = true;
            if (set[i].len == 1)
                ts->one[set[i].b[0]] = set[i].idx;
        }
        unsigned k;
        if (flags & 1)
            while (n > 0 && (k = trim_match(ts, in, n, false)) > 0) {
                in += k;
                n -= k;
            }
        if (flags & 2)
            while (n > 0 && (k = trim_match(ts, in, n, true)) > 0)
                n -= k;
        free(set);
    }
    sqlite3_result_text(ctx, (const char *)in, (int)n, SQLITE_TRANSIENT);
}

/* ---- one sandboxed connection ----------------------------------------------- */

enum stop_why { STOP_NONE, STOP_STEPS, STOP_TIME };

struct stmt_cache;
static bool stmt_cache_take(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt **out);
static void stmt_cache_put(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt *stmt);

struct sandbox_name {
    char *name;
    bool module; /* a virtual table module, usable as a table-valued function */
};

/* The virtual table modules of a connection: SQLite's own, registered
 * alike on every connection this process opens (vat adds none), so they
 * are listed once, from the first sandbox, instead of once per sandbox. */
static struct sandbox_name *module_names;
static size_t n_module_names;
static _Atomic bool modules_listed;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;


struct sandbox {
    sqlite3 *db;
    const json_t *tables;
    struct sandbox_name *names; /* tables, views and modules of the connection */
    size_t n_names;
    bool mentions_now;
    int function_calls;
    bool too_many_functions;
    char denied[160];   /* the first action of the query the authorizer refused */
    char denied_2nd[160]; /* one SQLite takes on the query's behalf (a module's
                           * schema update), reported only when alone */
    /* The check's work so far, in steps: the work of its earlier runs
     * (base), plus what the built-ins charged in this run (charged), plus
     * SQL_PROGRESS_OPS per progress call of this run.  The exact count of
     * a run that ends is its statement's own VM-step count plus charged
     * (sandbox_query). */
    long long steps, step_budget, base, charged;
    struct timespec cpu_deadline; /* of this thread's CPU clock */
    bool cpu_armed;               /* cpu_deadline is set (see budget_reset) */
    unsigned progress_calls;
    enum stop_why stop;
    struct stmt_cache *cache; /* pooled sandboxes only (prepared checks) */
    /* A plain sandbox opened during a draw on a resizeable copy, so the
     * admission's rows-reversed run happens inside it, in a transaction
     * rolled back after the query (sandbox_query_rows_reversed). */
    bool writable;
    /* Our own statements run (sandbox_step_aside): the authorizer lets
     * them be.  A flag, not the authorizer removed and put back: putting
     * it back expires every prepared statement of the connection, and
     * each would be prepared again at its next run. */
    bool aside;
    struct switch_state sw;   /* a fixture set's sandbox: which fixture it sees */
    size_t img_bytes;         /* its private copy of a fixture image (0 on a set) */
    size_t schema_bytes;      /* its connections' schemas, once measured (sandbox_bytes) */
    size_t pooled_bytes;      /* what its pool counts it as (sandbox_bytes) */
    /* The second connection the wrappers of the bounded built-ins run
     * SQLite's own functions on, opened on first use. */
    sqlite3 *aux;
    sqlite3_stmt *aux_stmt[AUX_N][SQL_AUX_MAX_ARGS + 1];
    struct aux_slot slots[AUX_N];
};

static bool sandbox_charge(struct sandbox *sb, long long n)
{
    sb->steps += n;
    sb->charged += n;
    if (sb->steps > sb->step_budget) {
        sb->stop = STOP_STEPS;
        return false;
    }
    return true;
}

static int aux_open(struct sandbox *sb)
{
    if (sqlite3_open_v2(":memory:", &sb->aux,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        SANDBOX_VFS_NAME) != SQLITE_OK)
        return -1;
    sqlite3_limit(sb->aux, SQLITE_LIMIT_LENGTH, SQL_MAX_VALUE_BYTES);
    sqlite3_limit(sb->aux, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, SQL_MAX_LIKE_PATTERN);
    sqlite3_limit(sb->aux, SQLITE_LIMIT_FUNCTION_ARG, SQL_AUX_MAX_ARGS);
    return 0;
}

/* Runs SQLite's own function of slot on the sandbox's second connection. */
static void aux_run(struct sandbox *sb, const struct aux_slot *slot, sqlite3_context *ctx,
                    int argc, sqlite3_value **argv);

static void aux_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct aux_slot *slot = sqlite3_user_data(ctx);
    struct sandbox *sb = slot->sb;
    if (argc < 1 || argc > SQL_AUX_MAX_ARGS)
        return; /* printf() is NULL; the others have fixed arities */
    switch (slot->fn) {
    case AUX_PRINTF:
        if (!printf_bounded(sqlite3_value_text(argv[0]), argv, argc, SQL_MAX_VALUE_BYTES)) {
            sqlite3_result_error_toobig(ctx);
            return;
        }
        break;
    case AUX_INSTR:
    case AUX_REPLACE:
    case AUX_LIKE:
    case AUX_GLOB:
    case AUX_JSON_PATCH: {
        long long a = sqlite3_value_bytes(argv[0]);
        long long b = argc > 1 ? sqlite3_value_bytes(argv[1]) : 0;
        if (!sandbox_charge(sb, a * b / SQL_CHARGE_BYTES)) {
            sqlite3_result_error(ctx, "the step budget is spent", -1);
            return;
        }
        break;
    }
    default: /* date and strftime: linear in their arguments, as SQLite's */
        break;
    }
    aux_run(sb, slot, ctx, argc, argv);
}

static void aux_run(struct sandbox *sb, const struct aux_slot *slot, sqlite3_context *ctx,
                    int argc, sqlite3_value **argv)
{
    /* The second connection, opened on a query's first call of a
     * built-in, and its statements, kept between calls, are the sandbox's
     * own: what the calls on it allocate is not counted as the query's
     * (opening and preparing would make a first call count more than a
     * later one).  What they make is at most the length limit, and its
     * copy into the query's result is counted. */
    uint64_t gen = mem_tls.gen;
    mem_tls.gen = 0;
    if (!sb->aux && aux_open(sb) != 0) {
        mem_tls.gen = gen;
        sqlite3_result_error(ctx, "the sandbox cannot run the function", -1);
        return;
    }
    sqlite3_stmt **st = &sb->aux_stmt[slot->fn][argc];
    if (!*st) {
        char sql[160];
        int k = snprintf(sql, sizeof sql, "SELECT %s(", aux_names[slot->fn]);
        for (int i = 1; i <= argc; i++)
            k += snprintf(sql + k, sizeof sql - (size_t)k, "%s?%d", i > 1 ? "," : "", i);
        snprintf(sql + k, sizeof sql - (size_t)k, ")");
        if (sqlite3_prepare_v2(sb->aux, sql, -1, st, NULL) != SQLITE_OK) {
            mem_tls.gen = gen;
            sqlite3_result_error(ctx, sqlite3_errmsg(sb->aux), -1);
            return;
        }
    }
    for (int i = 0; i < argc; i++)
        sqlite3_bind_value(*st, i + 1, argv[i]);
    int rc = sqlite3_step(*st);
    mem_tls.gen = gen;
    if (rc == SQLITE_ROW)
        sqlite3_result_value(ctx, sqlite3_column_value(*st, 0));
    else if ((rc & 0xff) == SQLITE_TOOBIG)
        sqlite3_result_error_toobig(ctx);
    else if ((rc & 0xff) == SQLITE_NOMEM)
        sqlite3_result_error_nomem(ctx);
    else
        sqlite3_result_error(ctx, sqlite3_errmsg(sb->aux), -1);
    mem_tls.gen = 0;
    sqlite3_reset(*st);
    sqlite3_clear_bindings(*st);
    mem_tls.gen = gen;
}

/* ---- date() and strftime() on the dates fixtures hold ---------------------------- *
 * SQLite's strftime and date parse their time value into a Julian day and
 * format it back, about 1,600 instructions a call; the gold queries and
 * their mutants call them on every row (a tenth of a SQL task's build).
 * The sandbox answers the one case fixtures hold, a text value that is
 * exactly 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS' naming a real day (year
 * 1000 to 9999, the month's own days, leap years Gregorian) and time
 * (hours 00 to 23, minutes and seconds 00 to 59), by copying its fields
 * (the real-day rule is stricter than SQLite 3.40 needs, which writes
 * '2023-02-31' back as given, so the case holds whichever way a SQLite
 * treats an impossible day):
 * date(T), and strftime(F, T) when F holds only literal characters and
 * %Y %m %d %H %M %S %% (at most 64 bytes).  On such a value SQLite's
 * parse and format give back those very fields, so the result is SQLite's
 * byte for byte; every other call (other arguments, formats or values: a
 * day SQLite would roll over, a 'T', a fraction, a modifier, 'now') is
 * SQLite's own function run on the sandbox's second connection, as the
 * bounded built-ins are (aux_call).  test_dates_match_sqlite compares
 * both with SQLite's on every day of 14 years and the days around them,
 * with times and formats in and out of the case. */
static int two(const char *s)
{
    return (s[0] - '0') * 10 + (s[1] - '0');
}

/* The 8 bytes at s as a little-endian word (one load where the machine
 * is little-endian). */
static uint64_t le64(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
           (uint64_t)u[7] << 56;
}

/* Whether the 8 bytes at s have a shape, eight bytes at once: pat holds
 * '0' where a digit goes and the character itself elsewhere, add 0x76
 * where a digit goes and 0x7f elsewhere.  A byte xor its pattern is 0-9
 * exactly for a digit and 0 exactly for the character; adding add sets
 * its high bit past that (no carry: a byte with its own high bit set
 * fails first). */
static bool shape8(const char *s, uint64_t pat, uint64_t add)
{
    uint64_t w = le64(s) ^ pat;
    return (((w + add) | w) & 0x8080808080808080u) == 0;
}

static bool digit(char c)
{
    return (unsigned char)(c - '0') <= 9;
}

/* The text of v when it is a plain date (10 bytes) or date and time (19)
 * naming a real day and time, its length in *n; NULL when not.  Called
 * per row by date() and strftime(): the shape is checked a word at a
 * time. */
static const char *plain_datetime(sqlite3_value *v, int *n)
{
    if (sqlite3_value_type(v) != SQLITE_TEXT)
        return NULL;
    const char *s = (const char *)sqlite3_value_text(v);
    int len = sqlite3_value_bytes(v);
    /* "YYYY-MM-" and " HH:MM:S" as pattern and addend, byte 0 lowest */
    if (!s || (len != 10 && len != 19) ||
        !shape8(s, 0x2D30302D30303030u, 0x7F76767F76767676u) || !digit(s[8]) || !digit(s[9]))
        return NULL;
    if (len == 19 && (!shape8(s + 10, 0x303A30303A303020u, 0x767F76767F76767Fu) ||
                      !digit(s[18])))
        return NULL;
    int m = two(s + 5), d = two(s + 8);
    if (s[0] == '0' || m < 1 || m > 12 || d < 1) /* the year from 1000 */
        return NULL;
    if (d > 28) {
        static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int y = two(s) * 100 + two(s + 2);
        bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        if (d > mdays[m - 1] + (m == 2 && leap))
            return NULL;
    }
    if (len == 19 && (two(s + 11) > 23 || two(s + 14) > 59 || two(s + 17) > 59))
        return NULL;
    *n = len;
    return s;
}

/* A strftime format read once per statement, kept as the call's auxiliary
 * data while the format is the same constant: the output with its literal
 * characters in place, and for each conversion where its digits go in the
 * output and where they come from in the value (the value's own bytes:
 * 'YYYY-MM-DD HH:MM:SS' holds each field where strftime would write it
 * from the parsed time; the year, at 0, is the one four digits wide).
 * fast is false for a format outside the case. */
#define FMT_MAX 64
struct fmt_plan {
    bool fast;
    uint8_t n, nconv;
    uint8_t at[FMT_MAX / 2], from[FMT_MAX / 2];
    char out[2 * FMT_MAX];
};

/* Reads the format value fmt into *p: fast only for text of at most
 * FMT_MAX bytes holding literal characters and %Y %m %d %H %M %S %%. */
static void fmt_plan_make(sqlite3_value *fmt, struct fmt_plan *p)
{
    static const char conv[] = "YmdHMS";
    static const uint8_t from[6] = {0, 5, 8, 11, 14, 17};
    p->fast = false;
    p->n = p->nconv = 0;
    const char *f = sqlite3_value_type(fmt) == SQLITE_TEXT && sqlite3_value_bytes(fmt) <= FMT_MAX
                        ? (const char *)sqlite3_value_text(fmt)
                        : NULL;
    if (!f)
        return;
    for (; *f; f++) {
        if (*f != '%') {
            p->out[p->n++] = *f;
            continue;
        }
        const char *c = *++f ? strchr(conv, *f) : NULL;
        if (*f == '%') {
            p->out[p->n++] = '%';
        } else if (c) {
            size_t i = (size_t)(c - conv);
            p->at[p->nconv] = p->n;
            p->from[p->nconv++] = from[i];
            p->n += i == 0 ? 4 : 2;
        } else {
            return; /* another conversion, or a lone '%' at the end */
        }
    }
    p->fast = true;
}

static void date_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    int n;
    const char *s = argc == 1 ? plain_datetime(argv[0], &n) : NULL;
    if (s)
        sqlite3_result_text(ctx, s, 10, SQLITE_TRANSIENT); /* its %Y-%m-%d */
    else
        aux_call(ctx, argc, argv);
}

static void strftime_call(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    if (argc != 2) {
        aux_call(ctx, argc, argv);
        return;
    }
    struct fmt_plan *kept = sqlite3_get_auxdata(ctx, 0), made;
    const struct fmt_plan *p = kept;
    if (!p) {
        fmt_plan_make(argv[0], &made);
        p = &made;
    }
    int n = 0;
    const char *s = p->fast ? plain_datetime(argv[1], &n) : NULL;
    if (s) {
        char out[2 * FMT_MAX];
        memcpy(out, p->out, p->n);
        for (uint8_t i = 0; i < p->nconv; i++) {
            if (p->from[i] >= 10 && n == 10)
                memcpy(out + p->at[i], "00", 2); /* a date alone is at midnight */
            else
                memcpy(out + p->at[i], s + p->from[i], p->from[i] ? 2 : 4);
        }
        sqlite3_result_text(ctx, out, p->n, SQLITE_TRANSIENT);
    } else {
        aux_call(ctx, argc, argv);
    }
    /* Kept for the next row (SQLite keeps it only while the format is a
     * constant; it may free it at once, so it is handed over last). */
    if (!kept) {
        struct fmt_plan *keep = sqlite3_malloc(sizeof *keep);
        if (keep) {
            *keep = made;
            sqlite3_set_auxdata(ctx, 0, keep, sqlite3_free);
        }
    }
}

/* Installs the wrappers of the bounded built-ins on sb's connection. */
static int aux_install(struct sandbox *sb)
{
    static const struct {
        const char *name;
        int nargs;
        enum aux_fn fn;
        void (*call)(sqlite3_context *, int, sqlite3_value **);
    } fns[] = {{"printf", -1, AUX_PRINTF, aux_call},     {"format", -1, AUX_PRINTF, aux_call},
               {"instr", 2, AUX_INSTR, aux_call},        {"replace", 3, AUX_REPLACE, aux_call},
               {"like", 2, AUX_LIKE, aux_call},          {"like", 3, AUX_LIKE, aux_call},
               {"glob", 2, AUX_GLOB, aux_call},          {"json_patch", 2, AUX_JSON_PATCH, aux_call},
               {"strftime", -1, AUX_STRFTIME, strftime_call},
               {"date", -1, AUX_DATE, date_call}};
    for (size_t i = 0; i < AUX_N; i++) {
        sb->slots[i].sb = sb;
        sb->slots[i].fn = (enum aux_fn)i;
    }
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (sqlite3_create_function_v2(sb->db, fns[i].name, fns[i].nargs,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                       &sb->slots[fns[i].fn], fns[i].call, NULL, NULL,
                                       NULL) != SQLITE_OK)
            return -1;
    return 0;
}

static const char *const denied_functions[] = {
    "random", "randomblob", "changes", "total_changes", "last_insert_rowid",
    "load_extension", "current_date", "current_time", "current_timestamp",
    "fts3_tokenizer", "fts5", "fts5_source_id", "rtreenode", "rtreedepth", "rtreecheck",
    NULL,
};

/* Date and time functions read the clock when given 'now' (or nothing). */
static const char *const clock_functions[] = {
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff", NULL,
};

static bool in_list(const char *const *list, const char *name)
{
    for (size_t i = 0; list[i]; i++)
        if (sqlite3_stricmp(list[i], name) == 0)
            return true;
    return false;
}

static bool table_allowed(const json_t *tables, const char *name)
{
    if (!name || sqlite3_strnicmp(name, "sqlite_", 7) == 0)
        return false;
    for (size_t i = 0; i < json_array_size(tables); i++)
        if (sqlite3_stricmp(json_string_value(json_array_get(tables, i)), name) == 0)
            return true;
    return false;
}

/* A FROM item whose columns are not read reaches the authorizer by the
 * name written in the query, so a CTE looks like a table there.  It is a
 * CTE when no table, view or module of the connection has that name. */
static bool is_cte_name(const struct sandbox *sb, const char *name)
{
    if (!name || sqlite3_strnicmp(name, "sqlite_", 7) == 0 ||
        sqlite3_strnicmp(name, "pragma_", 7) == 0)
        return false;
    for (size_t i = 0; i < sb->n_names; i++)
        if (sqlite3_stricmp(sb->names[i].name, name) == 0)
            return false;
    for (size_t i = 0; i < n_module_names; i++)
        if (sqlite3_stricmp(module_names[i].name, name) == 0)
            return false;
    return true;
}

static const char *action_name(int action)
{
    switch (action) {
    case SQLITE_CREATE_INDEX: return "create index";
    case SQLITE_CREATE_TABLE: return "create table";
    case SQLITE_CREATE_TEMP_INDEX: return "create temp index";
    case SQLITE_CREATE_TEMP_TABLE: return "create temp table";
    case SQLITE_CREATE_TEMP_TRIGGER: return "create temp trigger";
    case SQLITE_CREATE_TEMP_VIEW: return "create temp view";
    case SQLITE_CREATE_TRIGGER: return "create trigger";
    case SQLITE_CREATE_VIEW: return "create view";
    case SQLITE_DELETE: return "delete from";
    case SQLITE_DROP_INDEX: return "drop index";
    case SQLITE_DROP_TABLE: return "drop table";
    case SQLITE_DROP_TEMP_INDEX: return "drop temp index";
    case SQLITE_DROP_TEMP_TABLE: return "drop temp table";
    case SQLITE_DROP_TEMP_TRIGGER: return "drop temp trigger";
    case SQLITE_DROP_TEMP_VIEW: return "drop temp view";
    case SQLITE_DROP_TRIGGER: return "drop trigger";
    case SQLITE_DROP_VIEW: return "drop view";
    case SQLITE_INSERT: return "insert into";
    case SQLITE_PRAGMA: return "pragma";
    case SQLITE_TRANSACTION: return "transaction";
    case SQLITE_UPDATE: return "update of";
    case SQLITE_ATTACH: return "attach";
    case SQLITE_DETACH: return "detach";
    case SQLITE_ALTER_TABLE: return "alter table";
    case SQLITE_REINDEX: return "reindex";
    case SQLITE_ANALYZE: return "analyze";
    case SQLITE_CREATE_VTABLE: return "create virtual table";
    case SQLITE_DROP_VTABLE: return "drop virtual table";
    case SQLITE_SAVEPOINT: return "savepoint";
    default: return "statement";
    }
}

static int deny(struct sandbox *sb, const char *what, const char *name)
{
    bool implied = name && sqlite3_strnicmp(name, "sqlite_", 7) == 0 &&
                   strcmp(what, "reading table") != 0;
    char *slot = implied ? sb->denied_2nd : sb->denied;
    if (!slot[0])
        snprintf(slot, sizeof sb->denied, name ? "%s '%s'" : "%s", what, name);
    return SQLITE_DENY;
}

/* Connecting a table-valued function (json_each, pragma_table_info, …)
 * makes SQLite update its schema table, and that is the action denied
 * before the function itself is seen: name the function instead. */
static void implied_module(struct sandbox *sb, const char *q, size_t n)
{
    for (size_t pos = 0;;) {
        struct tok t = next_tok(q, n, &pos);
        if (t.kind == TOK_END)
            return;
        if (t.kind != TOK_WORD)
            continue;
        bool module = t.len > 7 && sqlite3_strnicmp(q + t.off, "pragma_", 7) == 0;
        for (size_t i = 0; i < n_module_names && !module; i++)
            module = strlen(module_names[i].name) == t.len &&
                     sqlite3_strnicmp(module_names[i].name, q + t.off, (int)t.len) == 0;
        if (module) {
            snprintf(sb->denied, sizeof sb->denied, "the table-valued function '%.*s'",
                     (int)(t.len < 64 ? t.len : 64), q + t.off);
            return;
        }
    }
}

static const char *denied_text(const struct sandbox *sb)
{
    return sb->denied[0] ? sb->denied : sb->denied_2nd[0] ? sb->denied_2nd : NULL;
}

/* The allow-list: SELECT, RECURSIVE, READ of the task's tables in the main
 * schema, and functions other than the nondeterministic ones. */
static int sandbox_authorize(void *arg, int action, const char *a3, const char *a4,
                             const char *dbname, const char *inner)
{
    struct sandbox *sb = arg;
    (void)inner;
    if (sb->aside)
        return SQLITE_OK;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_READ:
        if (table_allowed(sb->tables, a3) && (!dbname || strcmp(dbname, "main") == 0))
            return SQLITE_OK;
        if (a4 && !a4[0] && !dbname && is_cte_name(sb, a3))
            return SQLITE_OK;
        return deny(sb, "reading table", a3 ? a3 : "?");
    case SQLITE_FUNCTION:
        if (!a4)
            return deny(sb, "an unnamed function", NULL);
        if (++sb->function_calls > SQL_MAX_FUNCTION_CALLS) {
            sb->too_many_functions = true;
            return SQLITE_DENY;
        }
        if (in_list(denied_functions, a4) || sqlite3_strnicmp(a4, "sqlite_", 7) == 0)
            return deny(sb, "the nondeterministic or unsafe function", a4);
        if (sb->mentions_now && in_list(clock_functions, a4))
            return deny(sb, "reading the clock ('now' or CURRENT_*) with", a4);
        return SQLITE_OK;
    default:
        return deny(sb, action_name(action), a3);
    }
}

static int sandbox_progress(void *arg)
{
    struct sandbox *sb = arg;
    sb->steps += SQL_PROGRESS_OPS;
    if (sb->steps > sb->step_budget) {
        sb->stop = STOP_STEPS;
        return 1;
    }
    if (++sb->progress_calls % SQL_CPU_CHECK_EVERY != 0)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    if (!sb->cpu_armed) {
        /* the first reading starts the net: SQL_CPU_MS from here */
        sb->cpu_deadline = now;
        sb->cpu_deadline.tv_sec += SQL_CPU_MS / 1000;
        sb->cpu_deadline.tv_nsec += (long)(SQL_CPU_MS % 1000) * 1000000L;
        if (sb->cpu_deadline.tv_nsec >= 1000000000L) {
            sb->cpu_deadline.tv_sec++;
            sb->cpu_deadline.tv_nsec -= 1000000000L;
        }
        sb->cpu_armed = true;
        return 0;
    }
    if (now.tv_sec > sb->cpu_deadline.tv_sec ||
        (now.tv_sec == sb->cpu_deadline.tv_sec && now.tv_nsec >= sb->cpu_deadline.tv_nsec)) {
        sb->stop = STOP_TIME;
        return 1;
    }
    return 0;
}

static const struct {
    int id, value;
} sandbox_limits[] = {
    {SQLITE_LIMIT_LENGTH, SQL_MAX_VALUE_BYTES},
    {SQLITE_LIMIT_SQL_LENGTH, VAT_MAX_ANSWER_BYTES},
    {SQLITE_LIMIT_COLUMN, 100},
    {SQLITE_LIMIT_EXPR_DEPTH, 200},
    {SQLITE_LIMIT_COMPOUND_SELECT, 20},
    {SQLITE_LIMIT_VDBE_OP, 25000},
    {SQLITE_LIMIT_FUNCTION_ARG, 16},
    {SQLITE_LIMIT_ATTACHED, 0},
    {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, SQL_MAX_LIKE_PATTERN},
    {SQLITE_LIMIT_VARIABLE_NUMBER, 0},
    {SQLITE_LIMIT_TRIGGER_DEPTH, 0},
    {SQLITE_LIMIT_WORKER_THREADS, 0},
};

static const struct {
    int op, value;
} sandbox_config[] = {
    {SQLITE_DBCONFIG_DEFENSIVE, 1},
    {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
    {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
    {SQLITE_DBCONFIG_ENABLE_TRIGGER, 0},
    {SQLITE_DBCONFIG_ENABLE_VIEW, 0},
    {SQLITE_DBCONFIG_DQS_DML, 0},
    {SQLITE_DBCONFIG_DQS_DDL, 0},
    {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},
    {SQLITE_DBCONFIG_WRITABLE_SCHEMA, 0},
};

/* How a run sees the fixture.  Admission runs the gold query in all three
 * ways: rows that only an unspecified order puts in place (ties in ORDER
 * BY, group_concat without an order, a bare column of an aggregate) then
 * come out differently. */
enum run_mode {
    RUN_PLAIN,
    RUN_REVERSE_SCAN, /* reverse_unordered_selects: scans and indexes backwards */
    RUN_REVERSE_ROWS  /* the task's tables stored in reverse row order */
};

static void sandbox_names_free(struct sandbox *sb)
{
    for (size_t i = 0; i < sb->n_names; i++)
        free(sb->names[i].name);
    free(sb->names);
    sb->names = NULL;
    sb->n_names = 0;
}

static void sandbox_close(struct sandbox *sb)
{
    for (size_t f = 0; f < AUX_N; f++)
        for (size_t k = 0; k <= SQL_AUX_MAX_ARGS; k++) {
            sqlite3_finalize(sb->aux_stmt[f][k]);
            sb->aux_stmt[f][k] = NULL;
        }
    if (sb->aux)
        sqlite3_close_v2(sb->aux);
    sb->aux = NULL;
    if (sb->db)
        sqlite3_close_v2(sb->db);
    sb->db = NULL;
    sandbox_names_free(sb);
}

/* Appends the first column of every row of sql to *names (each marked
 * module or not).  0, or -1 (what was read stays). */
static int read_names(sqlite3 *db, const char *sql, bool module, struct sandbox_name **names,
                      size_t *n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = *n;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *names = vat_xrealloc(*names, cap * sizeof **names);
        }
        (*names)[*n].name = vat_xstrdup(name);
        (*names)[(*n)++].module = module;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int list_modules(sqlite3 *db)
{
    if (modules_listed)
        return 0;
    pthread_mutex_lock(&modules_lock);
    int rc = 0;
    if (!modules_listed) {
        rc = read_names(db, "SELECT name FROM pragma_module_list", true, &module_names,
                        &n_module_names);
        if (rc == 0) {
            modules_listed = true;
        } else { /* a partial list is not kept: the next sandbox tries again */
            for (size_t i = 0; i < n_module_names; i++)
                free(module_names[i].name);
            free(module_names);
            module_names = NULL;
            n_module_names = 0;
        }
    }
    pthread_mutex_unlock(&modules_lock);
    return rc;
}

/* Collects the names is_cte_name() must not take for CTEs: the fixture's
 * tables and views (the modules are in module_names). */
static int sandbox_names(struct sandbox *sb)
{
    if (list_modules(sb->db) != 0)
        return -1;
    return read_names(sb->db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')",
                      false, &sb->names, &sb->n_names);
}

/* A row value copied out of a statement (text and blob bytes in a block
 * of the caller's, by offset). */
struct copied_val {
    int type;
    sqlite3_int64 i;
    double d;
    size_t off, n;
};

/* Rewrites each of the task's rowid tables with its rows in reverse order
 * (new rowids, same values): the rows are read out, the table emptied and
 * the rows put back last first, with no schema change (which would make
 * SQLite parse the whole schema again).  Tables without a rowid, or whose
 * rowid is their INTEGER PRIMARY KEY, keep their order: it is their key's.
 * Returns 0, or -1 when the copy is left in an unknown state. */
static int sandbox_reverse_rows(struct sandbox *sb)
{
    for (size_t i = 0; i < json_array_size(sb->tables); i++) {
        const char *t = json_string_value(json_array_get(sb->tables, i));
        char *sel = sqlite3_mprintf("SELECT * FROM main.\"%w\" ORDER BY rowid DESC", t);
        sqlite3_stmt *st = NULL;
        int rc = sel ? sqlite3_prepare_v2(sb->db, sel, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_free(sel);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(st);
            continue; /* no such table (the query will say so) or no rowid */
        }
        /* The rows are copied as typed values, their bytes into one block
         * bound in place (SQLITE_STATIC): no value is allocated, copied
         * again by a bind and freed one by one. */
        int ncol = sqlite3_column_count(st);
        size_t nval = 0, cap = 0;
        struct copied_val *val = NULL;
        struct vat_buf bytes = VAT_BUF_INIT;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            for (int c = 0; c < ncol; c++) {
                if (nval == cap) {
                    cap = cap ? 2 * cap : 256;
                    val = vat_xrealloc(val, cap * sizeof *val);
                }
                struct copied_val *x = &val[nval++];
                *x = (struct copied_val){.type = sqlite3_column_type(st, c)};
                switch (x->type) {
                case SQLITE_INTEGER: x->i = sqlite3_column_int64(st, c); break;
                case SQLITE_FLOAT: x->d = sqlite3_column_double(st, c); break;
                case SQLITE_TEXT:
                case SQLITE_BLOB: {
                    const void *p = x->type == SQLITE_TEXT
                                        ? (const void *)sqlite3_column_text(st, c)
                                        : sqlite3_column_blob(st, c);
                    x->n = (size_t)sqlite3_column_bytes(st, c);
                    x->off = bytes.len;
                    if (x->n)
                        vat_buf_putn(&bytes, p, x->n);
                    break;
                }
                default: break;
                }
            }
        sqlite3_finalize(st);
        bool copied = rc == SQLITE_DONE && ncol > 0;
        sqlite3_stmt *ins = NULL;
        if (copied) {
            struct vat_buf q = VAT_BUF_INIT;
            char *head = sqlite3_mprintf("INSERT INTO main.\"%w\" VALUES (", t);
            vat_buf_puts(&q, head ? head : "");
            sqlite3_free(head);
            for (int c = 0; c < ncol; c++)
                vat_buf_puts(&q, c ? ", ?" : "?");
            vat_buf_putc(&q, ')');
            char *del = sqlite3_mprintf("SAVEPOINT vat_reverse; DELETE FROM main.\"%w\"", t);
            copied = del && sqlite3_exec(sb->db, del, NULL, NULL, NULL) == SQLITE_OK;
            sqlite3_free(del);
            copied = copied && sqlite3_prepare_v2(sb->db, q.data, -1, &ins, NULL) == SQLITE_OK;
            vat_buf_release(&q);
            static const char empty[1] = "";
            for (size_t r = 0; copied && r < nval; r += (size_t)ncol) {
                for (int c = 0; c < ncol && copied; c++) {
                    const struct copied_val *x = &val[r + (size_t)c];
                    int brc;
                    switch (x->type) {
                    case SQLITE_INTEGER: brc = sqlite3_bind_int64(ins, c + 1, x->i); break;
                    case SQLITE_FLOAT: brc = sqlite3_bind_double(ins, c + 1, x->d); break;
                    case SQLITE_TEXT:
                        brc = sqlite3_bind_text64(ins, c + 1, x->n ? bytes.data + x->off : empty,
                                                  x->n, SQLITE_STATIC, SQLITE_UTF8);
                        break;
                    case SQLITE_BLOB:
                        /* a NULL pointer would bind NULL, not an empty blob */
                        brc = sqlite3_bind_blob64(ins, c + 1, x->n ? bytes.data + x->off : empty,
                                                  x->n, SQLITE_STATIC);
                        break;
                    default: brc = sqlite3_bind_null(ins, c + 1); break;
                    }
                    copied = brc == SQLITE_OK;
                }
                copied = copied && sqlite3_step(ins) == SQLITE_DONE &&
                         sqlite3_reset(ins) == SQLITE_OK;
            }
            sqlite3_finalize(ins);
            /* A table this cannot copy (generated columns, say) keeps its
             * order. */
            if (copied)
                copied = sqlite3_exec(sb->db, "RELEASE vat_reverse", NULL, NULL, NULL) ==
                         SQLITE_OK;
            else if (sqlite3_get_autocommit(sb->db) == 0 &&
                     sqlite3_exec(sb->db, "ROLLBACK TO vat_reverse; RELEASE vat_reverse", NULL,
                                  NULL, NULL) != SQLITE_OK)
                rc = -1;
        }
        free(val);
        vat_buf_release(&bytes);
        if (rc == -1)
            return -1;
    }
    return 0;
}

static int sandbox_fail(struct sandbox *sb, struct vat_verdict *v, const char *what)
{
    struct reason r = {{0}, 0};
    reason_printf(&r, "cannot set up the sql sandbox: %s", what);
    if (sb->db) {
        reason_puts(&r, ": ");
        reason_puts(&r, sqlite3_errmsg(sb->db));
    }
    sandbox_close(sb);
    *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

/* Opens a fresh connection on its own copy of the fixture image, hardened
 * and with the authorizer installed, seeing the fixture as mode says.
 * Returns 0, or -1 with *v internal (and sb closed). */
static int sandbox_harden(struct sandbox *sb, enum run_mode mode, struct vat_verdict *v);

/* A sandbox cannot run a WAL-mode image in memory; header bytes 18 and 19
 * read 1 for 2 make it read in rollback mode (the pages are the same). */
static unsigned char rollback_byte(unsigned char b)
{
    return b == 2 ? 1 : b;
}

static void rollback_mode(unsigned char *img)
{
    img[18] = rollback_byte(img[18]);
    img[19] = rollback_byte(img[19]);
}

static _Thread_local unsigned long sql_sandbox_opens, sql_sandbox_reimages;

/* Loads the schema (before the limits and the authorizer apply to it). */
static const char sandbox_schema_sql[] = "SELECT count(*) FROM sqlite_schema";
/* A sandbox on a fixture image is its copy's only user: it keeps its page
 * cache across statements instead of re-reading the image each time. */
static const char sandbox_exclusive_sql[] = "PRAGMA locking_mode=EXCLUSIVE";

/* Puts a private copy of the n bytes at img under sb's main database, read
 * in rollback mode; flags adds SQLITE_DESERIALIZE_RESIZEABLE or _READONLY.
 * SQLITE_OK, SQLITE_NOMEM, or SQLite's failure. */
static int sandbox_deserialize(struct sandbox *sb, const unsigned char *img, size_t n,
                               unsigned flags)
{
    unsigned char *copy = sqlite3_malloc64(n);
    if (!copy)
        return SQLITE_NOMEM;
    memcpy(copy, img, n);
    sb->img_bytes = n;
    rollback_mode(copy);
    return sqlite3_deserialize(sb->db, "main", copy, (sqlite3_int64)n, (sqlite3_int64)n,
                               SQLITE_DESERIALIZE_FREEONCLOSE | flags);
}

static int sandbox_open(struct sandbox *sb, const unsigned char *img, size_t n,
                        enum run_mode mode, struct vat_verdict *v)
{
    pthread_once(&sandbox_vfs_once, sandbox_vfs_init);
    if (sandbox_vfs_rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot register its vfs");
    sql_sandbox_opens++;
    if (sqlite3_open_v2(":memory:", &sb->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        SANDBOX_VFS_NAME) != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot open a connection");
    /* Only the admission's reversed copy is written, by us, before the
     * authorizer is installed. */
    int rc = sandbox_deserialize(sb, img, n,
                                 mode == RUN_REVERSE_ROWS || sb->writable
                                     ? SQLITE_DESERIALIZE_RESIZEABLE
                                     : SQLITE_DESERIALIZE_READONLY);
    if (rc == SQLITE_NOMEM)
        return sandbox_fail(sb, v, "out of memory");
    if (rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot load the fixture");
    return sandbox_harden(sb, mode, v);
}

/* Opens a sandbox on a fixture set (switch_set_make): one connection, read
 * only, that sees fixture sb->sw.cur of the set, and is as hardened as
 * sandbox_open's.  Returns 0, or -1 with *v internal (and sb closed). */
static int sandbox_open_switch(struct sandbox *sb, const struct switch_set *set,
                               struct vat_verdict *v)
{
    pthread_once(&sandbox_vfs_once, sandbox_vfs_init);
    if (sandbox_vfs_rc != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot register its vfs");
    sb->sw.set = set;
    sb->sw.cur = 0;
    switch_opening = &sb->sw;
    int rc = sqlite3_open_v2("vat-fixture-set", &sb->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                             SANDBOX_VFS_NAME);
    bool taken = switch_opening == NULL;
    switch_opening = NULL;
    if (rc != SQLITE_OK || !taken)
        return sandbox_fail(sb, v, "cannot open the fixture set");
    return sandbox_harden(sb, RUN_PLAIN, v);
}

/* Sets up a connection just opened on the fixture: options, limits, the
 * bounded built-ins, the authorizer and the progress handler (and, for
 * RUN_REVERSE_ROWS, the rows reversed first).  0, or -1 with *v internal
 * (and sb closed). */
static int sandbox_harden(struct sandbox *sb, enum run_mode mode, struct vat_verdict *v)
{
    for (size_t i = 0; i < sizeof sandbox_config / sizeof sandbox_config[0]; i++)
        if (sqlite3_db_config(sb->db, sandbox_config[i].op, sandbox_config[i].value, NULL) !=
            SQLITE_OK)
            return sandbox_fail(sb, v, "a connection option was refused");
    /* File temp storage sends spills to the VFS, which refuses them;
     * in-memory temp storage would let a sort grow without bound.  (A
     * backwards scan turns the second pragma on per query: sandbox_run.) */
    const char *setup = "PRAGMA temp_store=FILE; PRAGMA reverse_unordered_selects=OFF";
    if (sqlite3_exec(sb->db, setup, NULL, NULL, NULL) != SQLITE_OK)
        return sandbox_fail(sb, v, "a pragma failed");
    if (sqlite3_exec(sb->db, sandbox_schema_sql, NULL, NULL, NULL) !=
        SQLITE_OK)
        return sandbox_fail(sb, v, "the fixture is not a readable sqlite database");
    if (mode == RUN_REVERSE_ROWS && sandbox_reverse_rows(sb) != 0)
        return sandbox_fail(sb, v, "cannot reverse the fixture's rows");
    if (sandbox_names(sb) != 0)
        return sandbox_fail(sb, v, "cannot list the fixture's tables");
    for (size_t i = 0; i < sizeof sandbox_limits / sizeof sandbox_limits[0]; i++)
        sqlite3_limit(sb->db, sandbox_limits[i].id, sandbox_limits[i].value);
    static const struct {
        const char *name;
        intptr_t flags;
    } trims[] = {{"ltrim", 1}, {"rtrim", 2}, {"trim", 3}};
    for (size_t i = 0; i < 3; i++)
        if (sqlite3_create_function_v2(sb->db, trims[i].name, 2,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                       (void *)trims[i].flags, sandbox_trim, NULL, NULL,
                                       NULL) != SQLITE_OK)
            return sandbox_fail(sb, v, "cannot install trim");
    if (aux_install(sb) != 0)
        return sandbox_fail(sb, v, "cannot install the bounded built-ins");
    /* The optimisations that copy an expression into every place that
     * reads it (flattening a subquery into its parent, pushing a WHERE term
     * down into one, propagating constants) are off: through nested
     * subqueries their copies multiply.  Results are the same; only the
     * plan differs. */
    sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, sb->db, SQL_OFF_OPTIMIZATIONS);
    if (sqlite3_set_authorizer(sb->db, sandbox_authorize, sb) != SQLITE_OK)
        return sandbox_fail(sb, v, "cannot install the authorizer");
    sqlite3_progress_handler(sb->db, SQL_PROGRESS_OPS, sandbox_progress, sb);
    return 0;
}

/* ---- result rows -------------------------------------------------------------- */

struct sql_val {
    int type; /* SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL */
    sqlite3_int64 i;
    double d;
    unsigned char *p;
    size_t n;
};

/* Text and blob bytes of a result live in blocks that never move (a value
 * points into one), so taking a row allocates only when a block fills. */
#define SQL_ROWS_BLOCK 4096
struct rows_block {
    struct rows_block *next;
    size_t used, cap;
    unsigned char data[];
};

struct sql_rows {
    size_t nrow, ncol, cap; /* cap counts values */
    struct sql_val *v;      /* row-major: row r is v[r*ncol .. r*ncol+ncol) */
    struct rows_block *blocks; /* newest first */
};

static void rows_release(struct sql_rows *r)
{
    for (struct rows_block *b = r->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* n bytes for a value of r, in its newest block or a new one. */
/* The bytes rows r holds: its values and their text blocks. */
static size_t rows_held(const struct sql_rows *r)
{
    size_t n = r->cap * sizeof *r->v;
    for (const struct rows_block *b = r->blocks; b; b = b->next)
        n += sizeof *b + b->cap;
    return n;
}

static unsigned char *rows_bytes(struct sql_rows *r, size_t n)
{
    struct rows_block *b = r->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > SQL_ROWS_BLOCK ? n : SQL_ROWS_BLOCK;
        b = vat_xmalloc(sizeof *b + cap);
        b->next = r->blocks;
        b->used = 0;
        b->cap = cap;
        r->blocks = b;
    }
    unsigned char *p = b->data + b->used;
    b->used += n;
    return p;
}

static const struct sql_val *row_at(const struct sql_rows *r, size_t row)
{
    return r->v + row * r->ncol;
}

/* Appends the current row of stmt; returns the bytes it adds. */
static size_t rows_take(struct sql_rows *r, sqlite3_stmt *stmt)
{
    if ((r->nrow + 1) * r->ncol > r->cap) {
        r->cap = r->cap ? r->cap * 2 : r->ncol * 16;
        r->v = vat_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    struct sql_val *row = r->v + r->nrow * r->ncol;
    size_t bytes = 0;
    for (size_t c = 0; c < r->ncol; c++) {
        struct sql_val *x = &row[c];
        memset(x, 0, sizeof *x);
        x->type = sqlite3_column_type(stmt, (int)c);
        switch (x->type) {
        case SQLITE_INTEGER:
            x->i = sqlite3_column_int64(stmt, (int)c);
            bytes += 8;
            break;
        case SQLITE_FLOAT:
            x->d = sqlite3_column_double(stmt, (int)c);
            bytes += 8;
            break;
        case SQLITE_TEXT:
        case SQLITE_BLOB: {
            const void *src = x->type == SQLITE_TEXT
                                  ? (const void *)sqlite3_column_text(stmt, (int)c)
                                  : sqlite3_column_blob(stmt, (int)c);
            x->n = (size_t)sqlite3_column_bytes(stmt, (int)c);
            x->p = rows_bytes(r, x->n + 1);
            if (x->n)
                memcpy(x->p, src, x->n);
            x->p[x->n] = 0;
            bytes += x->n;
            break;
        }
        default:
            x->type = SQLITE_NULL;
            bytes += 1;
        }
    }
    r->nrow++;
    return bytes;
}

/* Starts the step count and the CPU-time net afresh.  The net's clock is
 * first read at the first CPU check (SQL_CPU_CHECK_EVERY progress calls
 * in), not here: most statements end long before it, and reading the
 * thread's CPU clock is a syscall per statement otherwise.  The net so
 * starts at most 100,000 VM steps late, nothing beside SQL_CPU_MS. */
static void budget_reset(struct sandbox *sb, long long base)
{
    sb->steps = base;
    sb->base = base;
    sb->charged = 0;
    sb->stop = STOP_NONE;
    sb->progress_calls = 0;
    sb->cpu_armed = false;
}

static _Thread_local unsigned long sql_runs, sql_compiles;
/* The work of this thread's last check of an answer (vat_sql_last_work). */
static _Thread_local long long sql_last_work;

long long vat_sql_last_work(void)
{
    return sql_last_work;
}

unsigned long vat_sql_runs(void)
{
    return sql_runs;
}

unsigned long vat_sql_compiles(void)
{
    return sql_compiles;
}

unsigned long vat_sql_sandbox_opens(void)
{
    return sql_sandbox_opens;
}

unsigned long vat_sql_sandbox_reimages(void)
{
    return sql_sandbox_reimages;
}

/* The verdict of a check whose work passed its budget. */
static struct vat_verdict budget_verdict(const struct sql_spec *s, const char *label)
{
    return verdictf(true, VAT_SQL_BUDGET,
                    "fixture %s: the check ran past its budget of %lld steps (all fixtures "
                    "together)",
                    label, s->step_budget);
}

/* Runs one query on an open sandbox into *out, as part of a check whose
 * work so far is *work (steps: see struct sandbox); *work comes back with
 * this run's work added, exactly: the statement's VM steps and what the
 * built-ins charged, counted the same whether the statement was prepared
 * now or reused, however warm the connection.  A check whose work passes
 * s->step_budget, at a progress call or when the run ends, gets
 * sql_budget, and *work comes back as the budget plus one.  Gate failures
 * (parse, denied, more than one statement, not a query) come back with no
 * label; runtime failures (budget, error) name the fixture by label.
 * Returns 0, or -1 with *v set. */
static int sandbox_query(struct sandbox *sb, const struct sql_spec *s, const char *label,
                         const char *q, size_t qlen, struct sql_rows *out,
                         struct vat_verdict *v, long long *work)
{
    sqlite3_stmt *stmt = NULL;
    const char *tail = NULL;
    struct reason r = {{0}, 0};
    memset(out, 0, sizeof *out);
    if (*work > s->step_budget) {
        *v = budget_verdict(s, label);
        return -1;
    }
    budget_reset(sb, *work); /* preparing can run VM code too (a module's setup) */
    int rc;
    /* A pooled sandbox keeps the statements of queries that ran to the
     * end: the same text runs the same program, already through the gate
     * below (prepared checks only; see stmt_cache). */
    if (sb->cache && stmt_cache_take(sb->cache, q, qlen, &stmt))
        goto run;
    mem_count_start(SQL_MAX_PREPARE_ALLOC);
    rc = sqlite3_prepare_v3(sb->db, q, (int)qlen, 0, &stmt, &tail);
    if (rc != SQLITE_OK) {
        mem_count_stop();
        if (mem_tls.hit) {
            *v = verdictf(true, VAT_SQL_BUDGET,
                          "preparing the query needs more than the sandbox's %lld MiB of "
                          "memory or %lld MiB of allocations",
                          (long long)(SQL_MAX_QUERY_HEAP >> 20),
                          (long long)(SQL_MAX_PREPARE_ALLOC >> 20));
        } else if ((rc & 0xff) == SQLITE_NOMEM) {
            *v = verdictf(true, VAT_CHECKER_LIMIT,
                          "the checker ran out of memory preparing the query (process-wide "
                          "SQLite heap net)");
        } else if (sb->too_many_functions) {
            *v = verdictf(true, VAT_SQL_BUDGET, "the query makes more than %d function calls",
                          SQL_MAX_FUNCTION_CALLS);
        } else if (denied_text(sb)) {
            if (!sb->denied[0])
                implied_module(sb, q, qlen);
            reason_puts(&r, "the sandbox denies ");
            reason_text(&r, denied_text(sb), strlen(denied_text(sb)), 120);
            *v = reason_verdict(false, 0, VAT_SQL_DENIED, &r);
        } else {
            reason_puts(&r, "sqlite cannot prepare the query: ");
            reason_puts(&r, sqlite3_errmsg(sb->db));
            *v = reason_verdict(false, 0, VAT_PARSE, &r);
        }
        sqlite3_finalize(stmt);
        return -1;
    }
    mem_count_stop();
    sql_compiles++;
    if (!stmt) {
        *v = verdictf(false, VAT_PARSE, "the answer holds no SQL statement");
        return -1;
    }
    size_t pos = (size_t)(tail - q);
    struct tok t;
    do
        t = next_tok(q, qlen, &pos);
    while (t.kind == TOK_SEMI);
    if (t.kind != TOK_END) {
        reason_puts(&r, "the answer holds more than one statement: '");
        reason_text(&r, q + t.off, qlen - t.off, 40);
        reason_puts(&r, "' follows the first");
        *v = reason_verdict(false, 0, VAT_SQL_MULTI, &r);
        sqlite3_finalize(stmt);
        return -1;
    }
    if (sqlite3_stmt_isexplain(stmt)) {
        *v = verdictf(false, VAT_SQL_DENIED, "the sandbox denies EXPLAIN");
        sqlite3_finalize(stmt);
        return -1;
    }
    if (!sqlite3_stmt_readonly(stmt) || sqlite3_column_count(stmt) == 0) {
        *v = verdictf(false, VAT_SQL_NOT_SELECT, "the answer must be one SELECT statement");
        sqlite3_finalize(stmt);
        return -1;
    }
    if (sqlite3_bind_parameter_count(stmt) > 0) {
        *v = verdictf(false, VAT_SQL_DENIED, "the sandbox denies query parameters");
        sqlite3_finalize(stmt);
        return -1;
    }
run:
    sql_runs++;
    out->ncol = (size_t)sqlite3_column_count(stmt);
    size_t bytes = 0;
    budget_reset(sb, *work);
    /* The statement's own count of VM steps, from zero: a reused one keeps
     * counting from its earlier runs, and SQLite times the progress calls
     * from that count, so the calls fall where a fresh statement's do. */
    sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 1);
    /* Running counts what the query holds. */
    mem_count_start(INT64_MAX);
    bool cut = false; /* stopped by the row or byte cap */
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (out->nrow >= s->max_rows) {
            *v = verdictf(true, VAT_SQL_BUDGET, "fixture %s: the query returns more than %zu rows",
                          label, s->max_rows);
            cut = true;
            break;
        }
        bytes += rows_take(out, stmt);
        if (bytes > s->max_bytes) {
            *v = verdictf(true, VAT_SQL_BUDGET,
                          "fixture %s: the query returns more than %zu bytes", label,
                          s->max_bytes);
            cut = true;
            break;
        }
    }
    mem_count_stop();
    *work = sb->base + sb->charged + sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
    if (sb->stop == STOP_STEPS || (*work > s->step_budget && sb->stop != STOP_TIME)) {
        *work = s->step_budget + 1;
        *v = budget_verdict(s, label);
        goto fail;
    }
    if (cut)
        goto fail;
    sql_compiles += (unsigned long)sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_REPREPARE, 1);
    if (rc == SQLITE_DONE) {
        if (sb->cache)
            stmt_cache_put(sb->cache, q, qlen, stmt);
        else
            sqlite3_finalize(stmt);
        return 0;
    }
    if (mem_tls.hit) {
        *v = verdictf(true, VAT_SQL_BUDGET,
                      "fixture %s: the query needs more than the sandbox's %lld MiB of memory",
                      label, (long long)(SQL_MAX_QUERY_HEAP >> 20));
        goto fail;
    }
    switch (rc & 0xff) {
    case SQLITE_INTERRUPT:
        /* Only the CPU net interrupts without stop == STOP_STEPS. */
        *v = verdictf(true, VAT_CHECKER_LIMIT,
                      "fixture %s: the checker's last-resort net of %d ms of CPU time stopped "
                      "the query",
                      label, SQL_CPU_MS);
        break;
    case SQLITE_TOOBIG:
        *v = verdictf(true, VAT_SQL_BUDGET,
                      "fixture %s: a value or row exceeds the sandbox's %d-byte length limit",
                      label, SQL_MAX_VALUE_BYTES);
        break;
    case SQLITE_FULL:
        *v = verdictf(true, VAT_SQL_BUDGET,
                      "fixture %s: the query needs more temporary storage than the sandbox "
                      "allows",
                      label);
        break;
    case SQLITE_NOMEM:
        /* Not the counted cap (mem_tls.hit is false): the process-wide net
         * or the machine itself. */
        *v = verdictf(true, VAT_CHECKER_LIMIT,
                      "fixture %s: the checker ran out of memory running the query", label);
        break;
    case SQLITE_AUTH:
        reason_puts(&r, "the sandbox denies ");
        reason_puts(&r, denied_text(sb) ? denied_text(sb) : "an action of the query");
        *v = reason_verdict(false, 0, VAT_SQL_DENIED, &r);
        break;
    default:
        reason_printf(&r, "fixture %s: the query fails: ", label);
        reason_puts(&r, sqlite3_errmsg(sb->db));
        *v = reason_verdict(true, 0, VAT_SQL_ERROR, &r);
    }
fail:
    sqlite3_finalize(stmt);
    rows_release(out);
    return -1;
}

/* ---- fixtures ------------------------------------------------------------------ */

/* data is own, or, when own is NULL, borrowed from the draw's file memo
 * (fixture_load with borrow: for a use that ends before anything is
 * written). */
struct fixture_img {
    const unsigned char *data;
    size_t n;
    unsigned char *own;
};

static int fixture_fail(struct vat_verdict *v, const char *rel, const char *what,
                        const char *detail)
{
    struct reason r = {{0}, 0};
    reason_puts(&r, "fixture '");
    reason_text(&r, rel, strlen(rel), 100);
    reason_puts(&r, "' ");
    reason_puts(&r, what);
    if (detail) {
        reason_puts(&r, ": ");
        reason_puts(&r, detail);
    }
    *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
    return -1;
}

/* Whether the n bytes at p start as an SQLite database does. */
static bool is_sqlite_image(const void *p, size_t n)
{
    return n >= 512 && memcmp(p, "SQLite format 3", 16) == 0;
}

/* A CSV fixture (spec "load") is turned into a database image by the
 * loader of sqlload.c; raw_sha (if not NULL) receives the sha256 of the
 * file's bytes as read, which is what the tables record. */
static int fixture_take(const char *root, const char *rel, const json_t *load,
                        unsigned char *buf, size_t n, char *tag, struct fixture_img *img,
                        char raw_sha[65], struct vat_verdict *v);

/* The digest s gives fixture rel ("fixture_sha256" at rel's index in
 * "fixtures"), or NULL. */
static const char *spec_fixture_sha(const struct sql_spec *s, const char *rel)
{
    for (size_t i = 0; s->fixture_sha && rel && i < json_array_size(s->fixtures); i++)
        if (strcmp(json_string_value(json_array_get(s->fixtures, i)), rel) == 0)
            return json_string_value(json_array_get(s->fixture_sha, i));
    return NULL;
}

/* Reads root/rel whole into memory (the only time the file is touched).
 * Refuses an unsafe path without opening anything.  With borrow, an image
 * the draw's file memo holds is lent (img->own NULL) rather than copied.
 * With want (a digest the corpus records for rel), rel may be a symbolic
 * link to a regular file (a Hugging Face cache snapshot), and the bytes
 * read must have that SHA-256, whatever rel is (else tampered).
 * Returns 0, or -1 with *v internal (tampered for a digest mismatch). */
static int fixture_load(const char *root, const char *rel, const json_t *load, bool borrow,
                        const char *want, struct fixture_img *img, char raw_sha[65],
                        struct vat_verdict *v)
{
    img->data = img->own = NULL;
    img->n = 0;
    if (!rel || !vat_path_is_safe(rel))
        return spec_unsafe_path(v, rel ? rel : "");
    /* A CSV fixture's image for this load spec, made earlier in the same
     * task's draw (the build's file memo; off everywhere else). */
    char *tag = NULL;
    size_t mn;
    const char *m;
    if (load && vat_file_memo_on()) {
        char *spec_text = json_dumps(load, JSON_COMPACT | JSON_SORT_KEYS);
        tag = vat_xasprintf("csv-image %s", spec_text ? spec_text : "");
        free(spec_text);
        size_t rn;
        const char *raw = vat_file_memo_get(root, rel, NULL, &rn);
        if (raw && (m = vat_file_memo_get(root, rel, tag, &mn)) != NULL) {
            if (raw_sha)
                vat_file_sha256(root, rel, raw, rn, raw_sha, NULL);
            free(tag);
            img->n = mn;
            if (borrow) {
                img->data = (const unsigned char *)m;
                return 0;
            }
            img->data = img->own = vat_xmalloc(mn ? mn : 1);
            memcpy(img->own, m, mn);
            return 0;
        }
    }
    if ((m = vat_file_memo_get(root, rel, NULL, &mn)) != NULL) {
        if (borrow && !load) {
            free(tag);
            if (raw_sha)
                vat_file_sha256(root, rel, m, mn, raw_sha, NULL);
            if (!is_sqlite_image(m, mn))
                return fixture_fail(v, rel, "is not an sqlite database", NULL);
            img->data = (const unsigned char *)m;
            img->n = mn;
            return 0;
        }
        unsigned char *buf = vat_xmalloc(mn ? mn : 1);
        memcpy(buf, m, mn);
        return fixture_take(root, rel, load, buf, mn, tag, img, raw_sha, v);
    }
    /* Beneath root, no symbolic link followed (but rel itself, when its
     * digest is known); O_NONBLOCK: a FIFO placed there must not hang the
     * checker. */
    bool linked = false;
    struct vat_err le = {{0}};
    int fd = want ? vat_open_beneath_linked(root, rel, O_RDONLY, &linked, &le)
                  : vat_open_beneath(root, rel, O_RDONLY | O_NONBLOCK, NULL);
    int open_errno = errno;
    if (fd < 0) {
        free(tag);
        return fixture_fail(v, rel, "cannot be opened",
                            le.msg[0] ? le.msg + (strncmp(le.msg, "vat: ", 5) == 0 ? 5 : 0)
                                      : strerror(open_errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        free(tag);
        return fixture_fail(v, rel, "is not a regular file", NULL);
    }
    if ((uintmax_t)st.st_size > SQL_MAX_FIXTURE_BYTES) {
        close(fd);
        free(tag);
        return fixture_fail(v, rel, "is larger than 64 MiB", NULL);
    }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *buf = vat_xmalloc(n ? n : 1);
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int err = k < 0 ? errno : 0;
            close(fd);
            free(buf);
            free(tag);
            return fixture_fail(v, rel, "cannot be read", err ? strerror(err) : "short read");
        }
        got += (size_t)k;
    }
    close(fd);
    if (want) {
        /* trust by content: the bytes just read, nothing read again */
        char hex[65];
        vat_sha256_hex(buf, n, hex);
        if (strcmp(hex, want) != 0) {
            const char *lfs = vat_lfs_pointer(buf, n);
            struct reason r = {{0}, 0};
            reason_puts(&r, "fixture '");
            reason_text(&r, rel, strlen(rel), 100);
            reason_puts(&r, lfs ? "' is a " : linked ? "' is a symbolic link to a file whose "
                                                       "sha256 is not the one the corpus records"
                                                     : "' does not match the sha256 the corpus "
                                                       "records");
            if (lfs)
                reason_puts(&r, lfs);
            *v = reason_verdict(false, 0, VAT_TAMPERED, &r);
            free(buf);
            free(tag);
            return -1;
        }
    }
    vat_file_memo_put(root, rel, NULL, (const char *)buf, n);
    return fixture_take(root, rel, load, buf, n, tag, img, raw_sha, v);
}

/* Makes img of the n bytes of rel read into buf (taken): as they are, or
 * loaded as CSV by load (the image memoised under tag when given). */
static int fixture_take(const char *root, const char *rel, const json_t *load,
                        unsigned char *buf, size_t n, char *tag, struct fixture_img *img,
                        char raw_sha[65], struct vat_verdict *v)
{
    if (raw_sha)
        vat_file_sha256(root, rel, buf, n, raw_sha, NULL);
    if (vat_is_lfs_pointer(buf, n)) {
        /* a checkout without its LFS objects: the corpus, not the task */
        free(buf);
        free(tag);
        struct reason r = {{0}, 0};
        reason_puts(&r, "fixture '");
        reason_text(&r, rel, strlen(rel), 100);
        reason_puts(&r, "' is a " VAT_LFS_POINTER);
        *v = reason_verdict(false, 0, VAT_TAMPERED, &r);
        return -1;
    }
    if (load) {
        char why[200];
        unsigned char *db = NULL;
        size_t dn = 0;
        int lrc = vat_sql_csv_image(buf, n, load, &db, &dn, why, sizeof why);
        free(buf);
        if (lrc != 0) {
            free(tag);
            return fixture_fail(v, rel, "cannot be loaded as CSV", why);
        }
        if (tag)
            vat_file_memo_put(root, rel, tag, (const char *)db, dn);
        free(tag);
        img->data = img->own = db;
        img->n = dn;
        return 0;
    }
    free(tag);
    if (!is_sqlite_image(buf, n)) {
        free(buf);
        return fixture_fail(v, rel, "is not an sqlite database", NULL);
    }
    img->data = img->own = buf;
    img->n = n;
    return 0;
}

/* Runs q on a fresh sandbox over img.  Returns 0, or -1 with *v set. */
static void sandbox_rearm(struct sandbox *sb, const struct query_facts *qf);
static void sandbox_destroy(struct sandbox *sb);
static void sandbox_stmt_cache_reset(struct sandbox *sb);
static int sandbox_pool_setup(struct sandbox *sb, bool exclusive, struct vat_verdict *v);

/* A new sandbox for spec s, set up to join a pool: open on img as mode
 * sees it, or, with img NULL, on the fixture set (which keeps normal
 * locking).  NULL with *v internal. */
static struct sandbox *sandbox_new(const struct sql_spec *s, const struct query_facts *qf,
                                   const struct fixture_img *img, enum run_mode mode,
                                   const struct switch_set *set, struct vat_verdict *v)
{
    struct sandbox *sb = vat_xcalloc(1, sizeof *sb);
    sb->tables = s->tables;
    sb->step_budget = s->step_budget;
    sb->mentions_now = qf->mentions_now;
    sb->writable = img && mode == RUN_PLAIN && vat_file_memo_on();
    int rc = img ? sandbox_open(sb, img->data, img->n, mode, v) : sandbox_open_switch(sb, set, v);
    if (rc != 0) { /* closed by sandbox_fail */
        free(sb);
        return NULL;
    }
    if (sandbox_pool_setup(sb, img != NULL, v) != 0)
        return NULL; /* destroyed */
    return sb;
}

/* Each thread keeps its last few sandboxes, by fixture bytes, run mode,
 * step budget and allowed tables: a task's reference, confirmation and
 * admission runs (and the builder's next draw on the same bytes) then
 * open and parse a fixture once instead of once per query.  Sixteen
 * holds a task's admission of its gold query (three run modes on each of
 * up to five fixtures) with room to spare, so the plain runs that follow
 * it, and the pool of the task's prepared check (sb_cache_take), find
 * their sandboxes still open.  A sandbox
 * goes back only after a query that ran to completion and is rearmed
 * before each query, as the prepared checks' pools are (see
 * vat_sql_prepare below), so a reused connection is as strict as a new
 * one.  Freed when the thread exits. */
#define SB_CACHE_SIZE 16
/* During a task's draw (the build's file memo is on) the same query runs
 * on the same fixture several times: the gold query by the admission, the
 * runs on every fixture, the confirmation, the trap's arming and the
 * prepared check.  A sandbox keeps the rows of the last few queries that
 * ran to completion on it, by query text, scan order and row limits, and
 * hands a copy to the next run of the same query; the rows are a function
 * of those and the fixture's bytes, which the sandbox is keyed by. */
#define SB_ROWS_MEMO 8
struct rows_memo {
    char *q;
    size_t qlen;
    enum run_mode how; /* the order the rows were computed in */
    size_t max_rows, max_bytes;
    struct sql_rows rows;
    long long work; /* what the run that made the rows cost, in steps */
};

struct sb_cache_entry {
    unsigned char *img;
    size_t n;
    enum run_mode mode;
    long long step_budget;
    json_t *tables; /* own copy: the spec it came from may be gone */
    struct sandbox *sb;
    struct rows_memo memo[SB_ROWS_MEMO];
    size_t nmemo;
};

static void rows_copy(struct sql_rows *dst, const struct sql_rows *src)
{
    memset(dst, 0, sizeof *dst);
    dst->nrow = src->nrow;
    dst->ncol = src->ncol;
    dst->cap = src->nrow * src->ncol;
    dst->v = vat_xmalloc((dst->cap ? dst->cap : 1) * sizeof *dst->v);
    for (size_t k = 0; k < dst->cap; k++) {
        dst->v[k] = src->v[k];
        if (src->v[k].p) {
            dst->v[k].p = rows_bytes(dst, src->v[k].n + 1);
            memcpy(dst->v[k].p, src->v[k].p, src->v[k].n + 1);
        }
    }
}

static void memo_release(struct sb_cache_entry *x)
{
    for (size_t i = 0; i < x->nmemo; i++) {
        free(x->memo[i].q);
        rows_release(&x->memo[i].rows);
    }
    x->nmemo = 0;
}

static struct rows_memo *memo_find_rows(struct sb_cache_entry *x, const struct sql_spec *s,
                                        const char *q, size_t qlen, enum run_mode how)
{
    for (size_t i = 0; i < x->nmemo; i++) {
        struct rows_memo *m = &x->memo[i];
        if (m->qlen == qlen && m->how == how && m->max_rows == s->max_rows &&
            m->max_bytes == s->max_bytes && memcmp(m->q, q, qlen) == 0)
            return m;
    }
    return NULL;
}

static void memo_keep_rows(struct sb_cache_entry *x, const struct sql_spec *s, const char *q,
                           size_t qlen, enum run_mode how, const struct sql_rows *rows,
                           long long work)
{
    if (x->nmemo == SB_ROWS_MEMO) { /* the oldest goes */
        free(x->memo[0].q);
        rows_release(&x->memo[0].rows);
        memmove(&x->memo[0], &x->memo[1], (SB_ROWS_MEMO - 1) * sizeof x->memo[0]);
        x->nmemo--;
    }
    struct rows_memo *m = &x->memo[x->nmemo++];
    m->q = vat_xmalloc(qlen ? qlen : 1);
    memcpy(m->q, q, qlen);
    m->qlen = qlen;
    m->how = how;
    m->max_rows = s->max_rows;
    m->max_bytes = s->max_bytes;
    m->work = work;
    rows_copy(&m->rows, rows);
}

/* A writable plain sandbox let go of (by a task's prepared check when it
 * is freed, or by the cache when a new one comes in) is kept as a spare
 * instead of closed, and the next fixture that needs a writable plain
 * sandbox gets it with the new image put under the same connection
 * (sandbox_reimage): the connection's opening and hardening (options,
 * pragmas, limits, functions, authorizer, progress handler) are done once
 * per spare, not once per fixture. */
#define SB_SPARES 4
struct sb_cache {
    /* most recent first; moved by pointer, an entry being large (its
     * memo) */
    struct sb_cache_entry *e[SB_CACHE_SIZE];
    size_t used;
    struct sandbox *spare[SB_SPARES];
    size_t nspare;
};
static pthread_key_t sb_cache_key;
static pthread_once_t sb_cache_once = PTHREAD_ONCE_INIT;

static void sb_entry_free(struct sb_cache_entry *x)
{
    memo_release(x);
    sandbox_destroy(x->sb);
    free(x->img);
    json_decref(x->tables);
}

static void sb_cache_free(void *arg)
{
    struct sb_cache *c = arg;
    for (size_t i = 0; i < c->used; i++) {
        sb_entry_free(c->e[i]);
        free(c->e[i]);
    }
    for (size_t i = 0; i < c->nspare; i++)
        sandbox_destroy(c->spare[i]);
    free(c);
}

static struct sb_cache *sb_cache_get(void);

/* Keeps sb as one of this thread's spares when it is a writable plain
 * sandbox on a fixture image at rest (no transaction open, nothing set
 * aside) and there is room; destroys it otherwise. */
static void sandbox_retire(struct sandbox *sb)
{
    struct sb_cache *c = sb_cache_get();
    if (sb->writable && !sb->sw.set && !sb->aside && c->nspare < SB_SPARES &&
        sqlite3_get_autocommit(sb->db))
        c->spare[c->nspare++] = sb;
    else
        sandbox_destroy(sb);
}

/* Frees cache entry x, its sandbox retired (sandbox_retire). */
static void sb_entry_retire(struct sb_cache_entry *x)
{
    memo_release(x);
    free(x->img);
    json_decref(x->tables);
    sandbox_retire(x->sb);
}

static void sb_cache_init(void)
{
    pthread_key_create(&sb_cache_key, sb_cache_free);
}

static struct sb_cache *sb_cache_get(void)
{
    pthread_once(&sb_cache_once, sb_cache_init);
    struct sb_cache *c = pthread_getspecific(sb_cache_key);
    if (!c) {
        c = vat_xcalloc(1, sizeof *c);
        pthread_setspecific(sb_cache_key, c);
    }
    return c;
}

static bool tables_same(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* This thread's cached sandbox of those fixture bytes, mode and limits, or
 * NULL (left in the cache). */
static struct sb_cache_entry *sb_cache_find(const struct sql_spec *s,
                                            const struct fixture_img *img, enum run_mode mode)
{
    struct sb_cache *c = sb_cache_get();
    for (size_t i = 0; i < c->used; i++) {
        struct sb_cache_entry *e = c->e[i];
        if (e->mode == mode && e->n == img->n && e->step_budget == s->step_budget &&
            memcmp(e->img, img->data, img->n) == 0 && tables_same(e->tables, s->tables))
            return e;
    }
    return NULL;
}

/* Moves this thread's cached sandbox for img in mode with s's budget and
 * tables out of the cache into *out; false (and *out zeroed) when none. */
static bool sb_cache_pull(const struct sql_spec *s, const struct fixture_img *img,
                          enum run_mode mode, struct sb_cache_entry *out)
{
    memset(out, 0, sizeof *out);
    struct sb_cache *c = sb_cache_get();
    struct sb_cache_entry *e = sb_cache_find(s, img, mode);
    if (!e)
        return false;
    *out = *e;
    size_t i = 0;
    while (c->e[i] != e)
        i++;
    free(e);
    memmove(&c->e[i], &c->e[i + 1], (c->used - i - 1) * sizeof c->e[0]);
    c->used--;
    return true;
}

/* Takes out of this thread's cache the sandbox for img in mode with s's
 * budget and tables, or returns NULL; the caller owns it (its tables
 * pointer is left for the caller to set). */
static struct sandbox *sb_cache_take(const struct sql_spec *s, const struct fixture_img *img,
                                     enum run_mode mode)
{
    struct sb_cache_entry x;
    if (!sb_cache_pull(s, img, mode, &x))
        return NULL;
    memo_release(&x);
    free(x.img);
    json_decref(x.tables);
    return x.sb;
}

/* Sets the connection's limits, authorizer and progress handler aside
 * (aside true: as they are before sandbox_harden installs them, so our own
 * statements run as on a connection just opened), or puts them back. */
static void sandbox_step_aside(struct sandbox *sb, bool aside)
{
    for (size_t i = 0; i < sizeof sandbox_limits / sizeof sandbox_limits[0]; i++)
        if (sandbox_limits[i].id != SQLITE_LIMIT_WORKER_THREADS)
            sqlite3_limit(sb->db, sandbox_limits[i].id, aside ? INT_MAX : sandbox_limits[i].value);
    sqlite3_progress_handler(sb->db, aside ? 0 : SQL_PROGRESS_OPS, aside ? NULL : sandbox_progress,
                             aside ? NULL : sb);
    sb->aside = aside;
}

/* Runs our own statement sql (a pragma, a rollback) on sb with its
 * limits, authorizer and progress handler stepped aside for it.
 * SQLITE_OK, or the failure. */
static int sandbox_exec_aside(struct sandbox *sb, const char *sql)
{
    sandbox_step_aside(sb, true);
    int rc = sqlite3_exec(sb->db, sql, NULL, NULL, NULL);
    sandbox_step_aside(sb, false);
    return rc;
}

/* Turns reverse_unordered_selects on or off on sb's connection.  0, or -1
 * with *v internal (v may be NULL). */
static int sandbox_scan_order(struct sandbox *sb, bool reverse, struct vat_verdict *v)
{
    if (sandbox_exec_aside(sb, reverse ? "PRAGMA reverse_unordered_selects=ON"
                                       : "PRAGMA reverse_unordered_selects=OFF") != SQLITE_OK) {
        if (v)
            *v = verdictf(false, VAT_INTERNAL, "the sandbox cannot set its scan order");
        return -1;
    }
    return 0;
}

/* Whether the n bytes at now are img as a sandbox holds it (a WAL image
 * read in rollback mode). */
static bool image_same(const unsigned char *now, size_t nn, const unsigned char *img, size_t n)
{
    return now && nn == n && n >= 100 && memcmp(now, img, 18) == 0 &&
           now[18] == rollback_byte(img[18]) && now[19] == rollback_byte(img[19]) &&
           memcmp(now + 20, img + 20, n - 20) == 0;
}

/* Runs q on the writable plain sandbox sb of fixture image img with the
 * task's rows stored in reverse order: the copy is made inside a
 * transaction by sandbox_reverse_rows, with limits, authorizer and
 * progress handler aside as when a separate sandbox makes it, the query
 * runs under them as always, and the transaction is rolled back.  Returns 0 (rows in
 * *out), -1 with *v (the query failed), or 1 when the copy could not be
 * made (nothing run).  *restored says whether sb's image is afterwards
 * byte for byte what it was; when not, the caller closes sb. */
static int sandbox_query_rows_reversed(struct sandbox *sb, const struct fixture_img *img,
                                       const struct sql_spec *s, const char *label,
                                       const char *q, size_t qlen, const struct query_facts *qf,
                                       struct sql_rows *out, struct vat_verdict *v,
                                       bool *restored, long long *work)
{
    *restored = false;
    sandbox_step_aside(sb, true);
    int rc = sqlite3_exec(sb->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
                     sandbox_reverse_rows(sb) == 0
                 ? 0
                 : 1;
    sandbox_step_aside(sb, false);
    if (rc == 0) {
        sandbox_rearm(sb, qf);
        rc = sandbox_query(sb, s, label, q, qlen, out, v, work);
    }
    /* A rollback, not a savepoint released: releasing would commit the
     * emptied transaction, and a commit bumps the header's change
     * counter. */
    bool back = sqlite3_get_autocommit(sb->db) == 0 &&
                sandbox_exec_aside(sb, "ROLLBACK") == SQLITE_OK;
    if (back && sqlite3_get_autocommit(sb->db)) {
        sqlite3_int64 nn = 0;
        const unsigned char *now =
            sqlite3_serialize(sb->db, "main", &nn, SQLITE_SERIALIZE_NOCOPY);
        *restored = image_same(now, (size_t)nn, img->data, img->n);
    }
    return rc;
}

static void sb_cache_push(struct sb_cache *c, struct sb_cache_entry *x)
{
    struct sb_cache_entry *kept;
    if (c->used == SB_CACHE_SIZE) {
        kept = c->e[--c->used];
        sb_entry_retire(kept);
    } else {
        kept = vat_xmalloc(sizeof *kept);
    }
    *kept = *x;
    memmove(&c->e[1], &c->e[0], c->used * sizeof c->e[0]);
    c->e[0] = kept;
    c->used++;
}

/* Puts fixture image img under the spare sandbox sb as sandbox_open puts
 * one under a new connection: a private resizeable copy read in rollback
 * mode, the schema read (by listing the fixture's tables again) with the
 * limits, authorizer and progress handler aside (as on a connection not
 * yet hardened) and exclusive locking set on the new pager; the statement
 * cache starts empty and the hardening stays as sandbox_harden left it.
 * 0, or -1 (sb then is the caller's to destroy). */
static int sandbox_reimage(struct sandbox *sb, const struct sql_spec *s,
                           const struct query_facts *qf, const struct fixture_img *img)
{
    if (img->n < 100)
        return -1; /* sandbox_new says what is wrong with it */
    sb->tables = s->tables;
    sb->step_budget = s->step_budget;
    sb->mentions_now = qf->mentions_now;
    sandbox_stmt_cache_reset(sb);
    sandbox_names_free(sb);
    sql_sandbox_opens++;
    sql_sandbox_reimages++;
    sandbox_step_aside(sb, true);
    int rc = sandbox_deserialize(sb, img->data, img->n, SQLITE_DESERIALIZE_RESIZEABLE);
    /* Listing the tables is the first statement on the new image, so it
     * reads the schema (sandbox_harden reads it by a statement of its own
     * to tell an unreadable fixture from an unlistable one; a spare that
     * fails here is destroyed and sandbox_new says which it was). */
    if (rc == SQLITE_OK && sandbox_names(sb) != 0)
        rc = SQLITE_ERROR;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(sb->db, sandbox_exclusive_sql, NULL, NULL, NULL);
    sandbox_step_aside(sb, false);
    return rc == SQLITE_OK ? 0 : -1;
}

/* A spare sandbox of this thread's cache with img put under it, or NULL
 * (none, or it would not take the image: destroyed). */
static struct sandbox *sb_spare_take(struct sb_cache *c, const struct sql_spec *s,
                                     const struct query_facts *qf,
                                     const struct fixture_img *img)
{
    if (c->nspare == 0)
        return NULL;
    struct sandbox *sb = c->spare[--c->nspare];
    if (sandbox_reimage(sb, s, qf, img) != 0) {
        sandbox_destroy(sb);
        return NULL;
    }
    return sb;
}

/* sandbox_run; allow_inside false keeps the rows-reversed run out of the
 * plain sandbox. */
static int sandbox_run_in(const struct sql_spec *s, const struct fixture_img *img,
                          const char *label, const char *q, size_t qlen,
                          const struct query_facts *qf, enum run_mode mode, struct sql_rows *out,
                          struct vat_verdict *v, bool allow_inside, long long *work)
{
    memset(out, 0, sizeof *out);
    if (*work > s->step_budget) {
        *v = budget_verdict(s, label);
        return -1;
    }
    const long long base = *work;
    pthread_once(&mem_net_once, mem_net_init);
    const enum run_mode how = mode; /* the order the rows are computed in */
    /* A backwards scan is the plain connection with the pragma turned on
     * for this one query (it expires the connection's compiled statements,
     * so nothing prepared in one order runs in the other). */
    bool backwards = mode == RUN_REVERSE_SCAN;
    if (backwards)
        mode = RUN_PLAIN;
    struct sb_cache *c = sb_cache_get();
    struct sb_cache_entry x;
    bool memo = vat_file_memo_on();
    /* During a draw, rows stored in reverse order are made inside the
     * fixture's writable plain sandbox, when it is open, and rolled back
     * (no second connection, schema parse and copy of the image);
     * otherwise in a sandbox of their own. */
    bool inside = false;
    if (mode == RUN_REVERSE_ROWS && memo && allow_inside) {
        sb_cache_pull(s, img, RUN_PLAIN, &x);
        if (x.sb && x.sb->writable) {
            inside = true;
            mode = RUN_PLAIN;
        } else {
            if (x.sb)
                sb_cache_push(c, &x);
            sb_cache_pull(s, img, RUN_REVERSE_ROWS, &x);
        }
    } else {
        sb_cache_pull(s, img, mode, &x);
    }
    struct rows_memo *m = memo && x.sb ? memo_find_rows(&x, s, q, qlen, how) : NULL;
    if (m) {
        sb_cache_push(c, &x);
        /* what running it would count (sandbox_query) */
        if (base + m->work > s->step_budget) {
            *work = s->step_budget + 1;
            *v = budget_verdict(s, label);
            return -1;
        }
        *work = base + m->work;
        rows_copy(out, &m->rows);
        return 0;
    }
    if (!x.sb) {
        if (mode == RUN_PLAIN && memo)
            x.sb = sb_spare_take(c, s, qf, img);
        if (!x.sb && !(x.sb = sandbox_new(s, qf, img, mode, NULL, v)))
            return -1;
        x.img = vat_xmalloc(img->n ? img->n : 1);
        memcpy(x.img, img->data, img->n);
        x.n = img->n;
        x.mode = mode;
        x.step_budget = s->step_budget;
        x.tables = s->tables ? json_deep_copy(s->tables) : NULL;
    }
    x.sb->tables = s->tables;
    int rc;
    bool restored = true;
    if (inside) {
        rc = sandbox_query_rows_reversed(x.sb, img, s, label, q, qlen, qf, out, v, &restored,
                                         work);
        if (rc == 1) { /* no copy made: the rows reversed in a sandbox of their own */
            x.sb->tables = x.tables;
            if (restored)
                sb_cache_push(c, &x);
            else
                sb_entry_free(&x);
            return sandbox_run_in(s, img, label, q, qlen, qf, RUN_REVERSE_ROWS, out, v, false,
                                  work);
        }
    } else {
        rc = backwards ? sandbox_scan_order(x.sb, true, v) : 0;
        sandbox_rearm(x.sb, qf);
        if (rc == 0)
            rc = sandbox_query(x.sb, s, label, q, qlen, out, v, work);
        if (backwards && sandbox_scan_order(x.sb, false, rc == 0 ? v : NULL) != 0 && rc == 0) {
            rows_release(out);
            rc = -1;
        }
    }
    x.sb->tables = x.tables;
    if (rc != 0 || !restored) {
        sb_entry_free(&x);
        return rc;
    }
    if (memo)
        memo_keep_rows(&x, s, q, qlen, how, out, *work - base);
    sb_cache_push(c, &x);
    return 0;
}

/* Runs q on img as mode says, in a sandbox of this thread's cache or a
 * new one, as part of a check whose work so far is *work (sandbox_query).
 * 0, or -1 with *v set. */
static int sandbox_run(const struct sql_spec *s, const struct fixture_img *img,
                       const char *label, const char *q, size_t qlen,
                       const struct query_facts *qf, enum run_mode mode, struct sql_rows *out,
                       struct vat_verdict *v, long long *work)
{
    return sandbox_run_in(s, img, label, q, qlen, qf, mode, out, v, true, work);
}

/* ---- comparing rows -------------------------------------------------------------- */

static int type_rank(int type)
{
    switch (type) {
    case SQLITE_NULL: return 0;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT: return 1;
    case SQLITE_TEXT: return 2;
    default: return 3;
    }
}

/* A total order over typed values: NULL < numbers (by value) < TEXT <
 * BLOB (bytes), as SQLite sorts them. */
static int val_order(const struct sql_val *a, const struct sql_val *b)
{
    int ra = type_rank(a->type), rb = type_rank(b->type);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra == 0)
        return 0;
    if (ra == 1) {
        if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER)
            return a->i < b->i ? -1 : a->i > b->i;
        /* long double holds every int64 exactly, so mixed pairs order
         * consistently. */
        long double x = a->type == SQLITE_INTEGER ? (long double)a->i : (long double)a->d;
        long double y = b->type == SQLITE_INTEGER ? (long double)b->i : (long double)b->d;
        if (isnan(x) || isnan(y))
            return isnan(x) ? (isnan(y) ? 0 : -1) : 1;
        return x < y ? -1 : x > y;
    }
    size_t m = a->n < b->n ? a->n : b->n;
    int c = m ? memcmp(a->p, b->p, m) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return a->n < b->n ? -1 : a->n > b->n;
}

static double val_num(const struct sql_val *x)
{
    return x->type == SQLITE_INTEGER ? (double)x->i : x->d;
}

/* INTEGER and REAL agree within tolerance, TEXT and BLOB byte for byte,
 * NULL with NULL; a number never equals text. */
static bool val_equal(const struct sql_val *a, const struct sql_val *b, double rel, double abs)
{
    int ra = type_rank(a->type);
    if (ra != type_rank(b->type))
        return false;
    if (ra == 0)
        return true;
    if (ra == 1) {
        if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER && a->i == b->i)
            return true;
        double x = val_num(a), y = val_num(b);
        if (!isfinite(x) || !isfinite(y))
            return x == y; /* the same infinity */
        return vat_close(x, y, rel, abs);
    }
    if (a->type != b->type || a->n != b->n)
        return false;
    return a->n == 0 || memcmp(a->p, b->p, a->n) == 0;
}

static int row_order(const struct sql_rows *x, size_t a, const struct sql_rows *y, size_t b)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++) {
        int o = val_order(&ra[c], &rb[c]);
        if (o)
            return o;
    }
    return 0;
}

static bool row_equal(const struct sql_rows *x, size_t a, const struct sql_rows *y, size_t b,
                      double rel, double abs)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++)
        if (!val_equal(&ra[c], &rb[c], rel, abs))
            return false;
    return true;
}

/* Merge sort of row indices (qsort has no context argument in C11). */
static void sort_rows(const struct sql_rows *r, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_rows(r, idx, tmp, h);
    sort_rows(r, idx + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = row_order(r, idx[j], r, idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

static size_t *sorted_index(const struct sql_rows *r)
{
    size_t *idx = vat_xcalloc(r->nrow, sizeof *idx);
    size_t *tmp = vat_xcalloc(r->nrow, sizeof *tmp);
    for (size_t i = 0; i < r->nrow; i++)
        idx[i] = i;
    sort_rows(r, idx, tmp, r->nrow);
    free(tmp);
    return idx;
}

/* Shortest text that reads back as the same double, with ".0" on whole
 * numbers so a reason shows a REAL apart from an INTEGER. */
static void fmt_real(char *buf, size_t cap, double d)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    if (isfinite(d) && !strpbrk(buf, ".eE"))
        strncat(buf, ".0", cap - strlen(buf) - 1);
}

static void reason_row(struct reason *r, const struct sql_rows *rows, size_t row)
{
    const struct sql_val *v = row_at(rows, row);
    size_t start = r->n;
    reason_puts(r, "[");
    for (size_t c = 0; c < rows->ncol; c++) {
        char num[40];
        if (c)
            reason_puts(r, ", ");
        if (r->n - start > 72) {
            reason_puts(r, "...");
            break;
        }
        switch (v[c].type) {
        case SQLITE_INTEGER:
            snprintf(num, sizeof num, "%lld", (long long)v[c].i);
            reason_puts(r, num);
            break;
        case SQLITE_FLOAT:
            fmt_real(num, sizeof num, v[c].d);
            reason_puts(r, num);
            break;
        case SQLITE_TEXT:
            reason_puts(r, "'");
            reason_text(r, (const char *)v[c].p, v[c].n, 24);
            reason_puts(r, "'");
            break;
        case SQLITE_BLOB:
            reason_puts(r, "x'");
            for (size_t i = 0; i < v[c].n && i < 8; i++) {
                snprintf(num, sizeof num, "%02x", v[c].p[i]);
                reason_puts(r, num);
            }
            reason_puts(r, v[c].n > 8 ? "...'" : "'");
            break;
        default:
            reason_puts(r, "NULL");
        }
    }
    reason_puts(r, "]");
}

/* The code of rows that differ, by their shape: the column count, then
 * the row count (an ordered comparison tells a wrong order from wrong
 * rows only by sorting both sides, which rows_agree does for its reason). */
static const char *rows_differ_code(const struct sql_rows *got, const struct sql_rows *exp)
{
    if (got->ncol != exp->ncol)
        return VAT_COLUMN_COUNT;
    return got->nrow < exp->nrow   ? VAT_MISSING_ROWS
           : got->nrow > exp->nrow ? VAT_EXTRA_ROWS
                                   : VAT_WRONG_ROWS;
}

/* Compares an answer's rows with the expected rows on one fixture.
 * Returns true when they agree; else false with *v (gate passed, score 0)
 * naming the fixture by label and the first difference, or with nothing
 * more when v is NULL (whether the answer is the trap: no reason wanted). */
static bool rows_agree(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                       double rel, double abs, const char *label, struct vat_verdict *v)
{
    struct reason r = {{0}, 0};
    if (!v && got->ncol != exp->ncol)
        return false;
    if (got->ncol != exp->ncol) {
        *v = verdictf(true, VAT_COLUMN_COUNT,
                      "fixture %s: the query returns %zu column%s, expected %zu", label,
                      got->ncol, got->ncol == 1 ? "" : "s", exp->ncol);
        return false;
    }
    size_t ng = got->nrow, ne = exp->nrow;
    const char *code = rows_differ_code(got, exp);
    if (ordered) {
        size_t i = 0, m = ng < ne ? ng : ne;
        while (i < m && row_equal(got, i, exp, i, rel, abs))
            i++;
        if (i == m && ng == ne)
            return true;
        if (!v)
            return false;
        if (ng != ne) {
            reason_printf(&r, "fixture %s: %zu rows, expected %zu; ", label, ng, ne);
            if (i < m) {
                reason_printf(&r, "row %zu is ", i + 1);
                reason_row(&r, got, i);
                reason_puts(&r, ", expected ");
                reason_row(&r, exp, i);
            } else if (ng < ne) {
                reason_puts(&r, "missing ");
                reason_row(&r, exp, i);
            } else {
                reason_puts(&r, "unexpected ");
                reason_row(&r, got, i);
            }
            *v = reason_verdict(true, 0, code, &r);
            return false;
        }
        /* Same count: right rows in the wrong order, or wrong rows? */
        size_t *gi = sorted_index(got), *ei = sorted_index(exp);
        bool same_set = true;
        for (size_t k = 0; k < ng && same_set; k++)
            same_set = row_equal(got, gi[k], exp, ei[k], rel, abs);
        free(gi);
        free(ei);
        reason_printf(&r, "fixture %s: %s; row %zu is ", label,
                      same_set ? "the right rows in the wrong order" : "wrong rows", i + 1);
        reason_row(&r, got, i);
        reason_puts(&r, ", expected ");
        reason_row(&r, exp, i);
        *v = reason_verdict(true, 0, same_set ? VAT_WRONG_ORDER : VAT_WRONG_ROWS, &r);
        return false;
    }
    /* Multiset: sort both by the total order, then walk them together,
     * pairing rows that agree within tolerance.  Caveat: numbers that agree
     * only within tolerance can sort on either side of a neighbour, so a
     * pairing can fail that a perfect matching would find; it takes rows
     * whose values differ by less than the tolerance and are otherwise
     * interleaved, which real results do not produce. */
    size_t *gi = sorted_index(got), *ei = sorted_index(exp);
    size_t i = 0, j = 0, miss = SIZE_MAX, extra = SIZE_MAX;
    while (i < ne && j < ng) {
        if (row_equal(exp, ei[i], got, gi[j], rel, abs)) {
            i++;
            j++;
        } else if (row_order(exp, ei[i], got, gi[j]) < 0) {
            if (miss == SIZE_MAX)
                miss = ei[i];
            i++;
        } else {
            if (extra == SIZE_MAX)
                extra = gi[j];
            j++;
        }
    }
    if (i < ne && miss == SIZE_MAX)
        miss = ei[i];
    if (j < ng && extra == SIZE_MAX)
        extra = gi[j];
    free(gi);
    free(ei);
    if (miss == SIZE_MAX && extra == SIZE_MAX)
        return true;
    if (!v)
        return false;
    reason_printf(&r, "fixture %s: %zu rows, expected %zu", label, ng, ne);
    if (extra != SIZE_MAX) {
        reason_puts(&r, "; unexpected ");
        reason_row(&r, got, extra);
    }
    if (miss != SIZE_MAX) {
        reason_puts(&r, "; missing ");
        reason_row(&r, exp, miss);
    }
    *v = reason_verdict(true, 0, code, &r);
    return false;
}

/* ---- reasons that keep a held-out fixture hidden ----------------------------------- */

/* A value's kind, in words that hold none of it. */
static const char *val_kind(const struct sql_val *x)
{
    static const char *const kinds[] = {"NULL", "a number", "text", "a blob"};
    return kinds[type_rank(x->type)];
}

/* Where row a of x first differs from row b of y: its column and how,
 * without a value ("column 2: text, expected a number", "column 3:
 * another number"). */
static void reason_cell(struct reason *r, const struct sql_rows *x, size_t a,
                        const struct sql_rows *y, size_t b, double rel, double abs)
{
    const struct sql_val *ra = row_at(x, a), *rb = row_at(y, b);
    for (size_t c = 0; c < x->ncol; c++) {
        if (val_equal(&ra[c], &rb[c], rel, abs))
            continue;
        int kx = type_rank(ra[c].type), ky = type_rank(rb[c].type);
        static const char *const other[] = {"", "another number", "other text", "another blob"};
        if (kx != ky)
            reason_printf(r, "column %zu: %s, expected %s", c + 1, val_kind(&ra[c]),
                          val_kind(&rb[c]));
        else
            reason_printf(r, "column %zu: %s", c + 1, other[kx]);
        return;
    }
}

/* The verdict of rows that differ on a held-out fixture (rows_agree has
 * said they do): the counts, the first row and column that differ, an
 * order; never a value of the fixture or of the answer's rows on it. */
static struct vat_verdict rows_hidden_verdict(const struct sql_rows *got,
                                              const struct sql_rows *exp, bool ordered,
                                              double rel, double abs, const char *label)
{
    struct reason r = {{0}, 0};
    size_t ng = got->nrow, ne = exp->nrow;
    const char *code = rows_differ_code(got, exp);
    reason_printf(&r, "fixture %s (held out): ", label);
    if (got->ncol != exp->ncol) {
        reason_printf(&r, "the query returns %zu column%s, expected %zu", got->ncol,
                      got->ncol == 1 ? "" : "s", exp->ncol);
        return reason_verdict(true, 0, code, &r);
    }
    reason_printf(&r, "%zu row%s, expected %zu", ng, ng == 1 ? "" : "s", ne);
    if (ordered) {
        size_t i = 0, m = ng < ne ? ng : ne;
        while (i < m && row_equal(got, i, exp, i, rel, abs))
            i++;
        bool same_set = false;
        if (ng == ne) {
            size_t *gi = sorted_index(got), *ei = sorted_index(exp);
            same_set = true;
            for (size_t k = 0; k < ng && same_set; k++)
                same_set = row_equal(got, gi[k], exp, ei[k], rel, abs);
            free(gi);
            free(ei);
        }
        if (same_set) {
            reason_printf(&r, "; the right rows in the wrong order: row %zu is out of place",
                          i + 1);
            return reason_verdict(true, 0, VAT_WRONG_ORDER, &r);
        }
        if (i < m) {
            reason_printf(&r, "; row %zu differs at ", i + 1);
            reason_cell(&r, got, i, exp, i, rel, abs);
        } else if (ng < ne) {
            reason_printf(&r, "; the %zu given agree, row %zu is missing", ng, ng + 1);
        } else {
            reason_printf(&r, "; the %zu expected agree, row %zu is unexpected", ne, ne + 1);
        }
        return reason_verdict(true, 0, code, &r);
    }
    /* as rows_agree pairs them: the first unexpected and missing rows in
     * the total order, the answer's row named by its position */
    size_t *gi = sorted_index(got), *ei = sorted_index(exp);
    size_t i = 0, j = 0, miss = SIZE_MAX, extra = SIZE_MAX;
    while (i < ne && j < ng) {
        if (row_equal(exp, ei[i], got, gi[j], rel, abs)) {
            i++;
            j++;
        } else if (row_order(exp, ei[i], got, gi[j]) < 0) {
            if (miss == SIZE_MAX)
                miss = ei[i];
            i++;
        } else {
            if (extra == SIZE_MAX)
                extra = gi[j];
            j++;
        }
    }
    if (i < ne && miss == SIZE_MAX)
        miss = ei[i];
    if (j < ng && extra == SIZE_MAX)
        extra = gi[j];
    free(gi);
    free(ei);
    if (extra != SIZE_MAX)
        reason_printf(&r, "; row %zu of the answer is not expected", extra + 1);
    if (miss != SIZE_MAX)
        reason_puts(&r, "; an expected row is missing");
    if (extra != SIZE_MAX && miss != SIZE_MAX) {
        reason_puts(&r, "; they first differ at ");
        reason_cell(&r, got, extra, exp, miss, rel, abs);
    }
    return reason_verdict(true, 0, code, &r);
}

/* rows_agree, with the hidden reason when hide is set. */
static bool rows_agree_as(const struct sql_rows *got, const struct sql_rows *exp, bool ordered,
                          double rel, double abs, const char *label, bool hide,
                          struct vat_verdict *v)
{
    if (!hide || !v)
        return rows_agree(got, exp, ordered, rel, abs, label, v);
    if (rows_agree(got, exp, ordered, rel, abs, label, NULL))
        return true;
    *v = rows_hidden_verdict(got, exp, ordered, rel, abs, label);
    return false;
}

/* A run that failed on a held-out fixture: SQLite's message of a run-time
 * error can quote a value the query read (a JSON path taken from a row),
 * so it is withheld; the other failures (budgets, caps) hold no value. */
static void hide_run_failure(struct vat_verdict *v, const char *label, bool hide)
{
    if (hide && strcmp(v->code, VAT_SQL_ERROR) == 0)
        *v = verdictf(true, VAT_SQL_ERROR,
                      "fixture %s (held out): the query fails with a run-time error there",
                      label);
}

/* ---- rows as JSON ------------------------------------------------------------------ */

static json_t *text_json(const unsigned char *p, size_t n)
{
    if (vat_utf8_prefix((const char *)p, n) == n)
        return json_stringn((const char *)p, n);
    /* TEXT built from bytes (CAST(x'ff' AS TEXT)) need not be UTF-8; JSON
     * must be, so invalid bytes become U+FFFD. */
    struct vat_buf b = VAT_BUF_INIT;
    for (size_t i = 0; i < n;) {
        size_t k = vat_utf8_seq(p + i, n - i);
        if (k) {
            vat_buf_putn(&b, (const char *)p + i, k);
            i += k;
        } else {
            vat_buf_puts(&b, "\xEF\xBF\xBD");
            i++;
        }
    }
    json_t *j = json_stringn(b.data ? b.data : "", b.len);
    vat_buf_release(&b);
    return j;
}

static json_t *rows_json(const struct sql_rows *r)
{
    json_t *out = json_array();
    for (size_t row = 0; row < r->nrow; row++) {
        json_t *a = json_array();
        const struct sql_val *v = row_at(r, row);
        for (size_t c = 0; c < r->ncol; c++) {
            json_t *x;
            switch (v[c].type) {
            case SQLITE_INTEGER:
                x = json_integer((json_int_t)v[c].i);
                break;
            case SQLITE_FLOAT:
                /* JSON has no infinities; SQLite can make them (1e999). */
                x = isfinite(v[c].d) ? json_real(v[c].d)
                                     : json_string(v[c].d > 0 ? "Infinity" : "-Infinity");
                break;
            case SQLITE_TEXT:
                x = text_json(v[c].p, v[c].n);
                break;
            case SQLITE_BLOB: {
                char *hex = vat_xmalloc(v[c].n * 2 + 1);
                for (size_t i = 0; i < v[c].n; i++)
                    snprintf(hex + 2 * i, 3, "%02x", v[c].p[i]);
                hex[v[c].n * 2] = 0;
                x = json_string(hex);
                free(hex);
                break;
            }
            default:
                x = json_null();
            }
            json_array_append_new(a, x);
        }
        json_array_append_new(out, a);
    }
    return out;
}

/* ---- the public functions -------------------------------------------------------- */

static void fixture_label(char *buf, size_t cap, size_t i)
{
    /* the common ones without formatting: a check labels every fixture */
    static const char *const few[] = {"main",      "variant 1", "variant 2", "variant 3",
                                      "variant 4", "variant 5", "variant 6", "variant 7"};
    if (i < sizeof few / sizeof few[0] && cap > strlen(few[i]))
        memcpy(buf, few[i], strlen(few[i]) + 1);
    else if (i == 0)
        snprintf(buf, cap, "main");
    else
        snprintf(buf, cap, "variant %zu", i);
}

struct vat_verdict vat_check_sql(const json_t *spec, const char *root, const char *answer,
                                 size_t len)
{
    return vat_check_sql_as(spec, root, answer, len, false);
}

/* Checks the answer on fixture i of s: 0 when its rows agree with the
 * reference's, else -1 with *v the verdict (an internal one when the
 * reference fails there). */
static int check_fixture(const struct sql_spec *s, const char *root, size_t i, const char *answer,
                         size_t len, const struct query_facts *qf, const struct query_facts *rf,
                         bool reveal, long long *work, long long *ref_work, struct vat_verdict *v)
{
    char label[32];
    fixture_label(label, sizeof label, i);
    struct fixture_img img;
    const char *rel = json_string_value(json_array_get(s->fixtures, i));
    if (fixture_load(root, rel, s->load, true, spec_fixture_sha(s, rel), &img, NULL, v) != 0)
        return -1;
    struct sql_rows exp, got;
    int rc = sandbox_run(s, &img, label, s->reference, s->reference_len, rf, RUN_PLAIN, &exp, v,
                         ref_work);
    if (rc != 0) {
        struct reason r = {{0}, 0};
        reason_printf(&r, "the reference query fails on fixture %s (%s): ", label, v->code);
        reason_puts(&r, v->reason);
        free(img.own);
        *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
        return -1;
    }
    bool hide = !reveal && i > 0; /* the variants are held out */
    rc = sandbox_run(s, &img, label, answer, len, qf, RUN_PLAIN, &got, v, work);
    sql_last_work = *work;
    free(img.own);
    if (rc != 0) {
        rows_release(&exp);
        hide_run_failure(v, label, hide);
        return -1;
    }
    bool same = rows_agree_as(&got, &exp, s->ordered, s->rel_tol, s->abs_tol, label, hide, v);
    rows_release(&exp);
    rows_release(&got);
    return same ? 0 : -1;
}

/* The spec read and both queries gated, for a check; false with *v set. */
static bool check_begin(const json_t *spec, const char *answer, size_t len, struct sql_spec *s,
                        struct query_facts *qf, struct query_facts *rf, struct vat_verdict *v)
{
    if (spec_read(spec, true, true, s, v) != 0)
        return false;
    if (!answer) {
        *v = verdictf(false, VAT_PARSE, "no answer given");
        return false;
    }
    if (!query_gate(answer, len, qf, v))
        return false;
    if (!query_gate(s->reference, s->reference_len, rf, v)) {
        struct reason r = {{0}, 0};
        reason_printf(&r, "the reference query fails the gate (%s): ", v->code);
        reason_puts(&r, v->reason);
        *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
        return false;
    }
    return true;
}

struct vat_verdict vat_check_sql_as(const json_t *spec, const char *root, const char *answer,
                                    size_t len, bool reveal)
{
    struct vat_verdict v;
    struct sql_spec s;
    struct query_facts qf, rf;
    sql_last_work = 0;
    if (!check_begin(spec, answer, len, &s, &qf, &rf, &v))
        return v;
    /* one budget for the answer on all fixtures, one for the reference */
    long long work = 0, ref_work = 0;
    for (size_t i = 0; i < s.n_fixtures; i++)
        if (check_fixture(&s, root, i, answer, len, &qf, &rf, reveal, &work, &ref_work, &v) != 0)
            return v;
    return vat_verdict_make(true, 1, VAT_OK, "rows match on all %zu fixtures", s.n_fixtures);
}

struct vat_verdict vat_check_sql_fixture_as(const json_t *spec, const char *root, size_t i,
                                            const char *answer, size_t len, bool reveal,
                                            long long *work)
{
    struct vat_verdict v;
    struct sql_spec s;
    struct query_facts qf, rf;
    long long ref_work = 0;
    if (!check_begin(spec, answer, len, &s, &qf, &rf, &v))
        return v;
    if (i >= s.n_fixtures)
        return verdictf(false, VAT_INTERNAL, "the spec has no fixture %zu", i);
    if (check_fixture(&s, root, i, answer, len, &qf, &rf, reveal, work, &ref_work, &v) != 0)
        return v;
    char label[32];
    fixture_label(label, sizeof label, i);
    return vat_verdict_make(true, 1, VAT_OK, "rows match on fixture %s", label);
}

json_t *vat_sql_run(const json_t *spec, const char *root, const char *fixture_rel,
                    const char *query, size_t len, struct vat_verdict *v)
{
    long long work = 0;
    return vat_sql_run_counted(spec, root, fixture_rel, query, len, &work, v);
}

json_t *vat_sql_run_counted(const json_t *spec, const char *root, const char *fixture_rel,
                            const char *query, size_t len, long long *work,
                            struct vat_verdict *v)
{
    struct vat_verdict local;
    if (!v)
        v = &local;
    struct sql_spec s;
    if (spec_read(spec, false, false, &s, v) != 0)
        return NULL;
    if (!query) {
        *v = verdictf(false, VAT_PARSE, "no query given");
        return NULL;
    }
    struct query_facts qf;
    if (!query_gate(query, len, &qf, v))
        return NULL;
    struct fixture_img img;
    if (fixture_load(root, fixture_rel, s.load, true, spec_fixture_sha(&s, fixture_rel), &img,
                     NULL, v) != 0)
        return NULL;
    struct sql_rows rows;
    int rc = sandbox_run(&s, &img, fixture_rel, query, len, &qf, RUN_PLAIN, &rows, v, work);
    free(img.own);
    if (rc != 0)
        return NULL;
    json_t *out = rows_json(&rows);
    rows_release(&rows);
    *v = vat_verdict_make(true, 1, VAT_OK, "%zu rows", json_array_size(out));
    return out;
}

bool vat_sql_budget_spent(const json_t *spec, long long work)
{
    struct sql_spec s;
    struct vat_verdict v;
    return spec_read(spec, false, false, &s, &v) == 0 && work > s.step_budget;
}

static char checker_version[64];
static pthread_once_t checker_version_once = PTHREAD_ONCE_INIT;

static void checker_version_init(void)
{
    snprintf(checker_version, sizeof checker_version, "vat-sql/3 sqlite/%s",
             sqlite3_libversion());
}

const char *vat_sql_checker_version(void)
{
    pthread_once(&checker_version_once, checker_version_init);
    return checker_version;
}

int vat_sql_gold_admissible(const json_t *spec, const char *root, struct vat_err *e)
{
    struct vat_verdict v;
    struct sql_spec s;
    if (spec_read(spec, true, true, &s, &v) != 0)
        return vat_err_set(e, "gold query not admissible: %s", v.reason);
    struct query_facts qf;
    if (!query_gate(s.reference, s.reference_len, &qf, &v))
        return vat_err_set(e, "gold query not admissible (%s): %s", v.code, v.reason);
    if (qf.has_limit)
        return vat_err_set(e, "gold query not admissible: it uses LIMIT, which can cut a tie");
    for (size_t i = 0; i < s.n_fixtures; i++) {
        char label[32];
        fixture_label(label, sizeof label, i);
        struct fixture_img img;
        if (fixture_load(root, json_string_value(json_array_get(s.fixtures, i)), s.load, true,
                         NULL, &img, NULL, &v) != 0)
            return vat_err_set(e, "gold query not admissible: %s", v.reason);
        struct sql_rows runs[3];
        static const enum run_mode modes[3] = {RUN_PLAIN, RUN_REVERSE_SCAN, RUN_REVERSE_ROWS};
        static const char *const mode_text[3] = {"", "with tables scanned backwards",
                                                 "with rows stored in reverse order"};
        /* Run backwards first: during a draw the three share the plain
         * sandbox, and turning the backwards scan off expires what was
         * compiled under it, so in this order the gold is compiled twice
         * (backwards, then plain, which the rows-reversed run and the
         * checks after it reuse) rather than three times.  A failure is
         * reported as the listed order finds it: the first mode that
         * fails, later ones not run. */
        static const int run_order[3] = {1, 0, 2};
        bool ran[3] = {false, false, false};
        int failed = 3;
        for (int o = 0; o < 3; o++) {
            int k = run_order[o];
            if (k > failed)
                continue;
            struct vat_verdict kv;
            long long work = 0; /* the checks themselves count the gold's work */
            if (sandbox_run(&s, &img, label, s.reference, s.reference_len, &qf, modes[k],
                            &runs[k], &kv, &work) == 0) {
                ran[k] = true;
            } else {
                failed = k;
                v = kv;
            }
        }
        free(img.own);
        if (failed < 3) {
            for (int k = 0; k < 3; k++)
                if (ran[k])
                    rows_release(&runs[k]);
            return vat_err_set(e, "gold query not admissible (%s): %s", v.code, v.reason);
        }
        int differs = 0;
        for (int k = 1; k < 3 && !differs; k++)
            if (!rows_agree(&runs[k], &runs[0], s.ordered, s.rel_tol, s.abs_tol, label, &v))
                differs = k;
        size_t nrow = runs[0].nrow;
        for (int k = 0; k < 3; k++)
            rows_release(&runs[k]);
        if (differs)
            return vat_err_set(e,
                               "gold query not admissible: it gives different rows on fixture "
                               "%s %s (%s)",
                               label, mode_text[differs], v.reason);
        if (nrow == 0 && (i == 0 || !s.allow_empty_variants))
            return vat_err_set(e, "gold query not admissible: it returns no rows on fixture %s",
                               label);
    }
    return 0;
}

/* ---- prepared checks: fixtures and gold rows cached (libvat) ------------------ */

/* A task's fixtures held in memory for the life of the prepared check, the
 * gold (and trap) rows on each computed once, and a pool of sandboxes per
 * fixture so a check runs only the candidate's query.  A pooled sandbox is
 * reused only after a query that ran to completion (a failed query closes
 * it), and every query starts from a fresh per-query state (sandbox_rearm),
 * so a reused connection is exactly as strict as a fresh one: the fixture
 * is deserialized read-only, the authorizer and limits stay installed, and
 * the statement must still be one read-only SELECT. */
static uint32_t be32_at(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Reads the SQLite varint at b (at most 9 bytes, n available) into *out;
 * its length, or 0 when it runs past n. */
static size_t varint_at(const unsigned char *b, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    for (size_t i = 0; i < 9 && i < n; i++) {
        if (i == 8) {
            *out = x << 8 | b[i];
            return 9;
        }
        x = x << 7 | (b[i] & 0x7f);
        if (!(b[i] & 0x80)) {
            *out = x;
            return i + 1;
        }
    }
    return 0;
}

/* Whether the task's fixture images may be served as one set (see struct
 * switch_set): two or more SQLite images whose headers agree on everything
 * a compiled statement depends on (page size, format, reserved bytes,
 * schema cookie and format, encoding, versions of the user and the
 * application) and whose page 1, which holds the whole schema as a single
 * leaf of sqlite_schema with no row overflowing it, is the same bytes in
 * all; no statistics table (its rows would steer the planner); each
 * header's page count valid (92 = 24) and the image that many pages long.
 * VAT_SQL_FIXTURE_SET=0 turns sets off.  The set, or NULL. */
static struct switch_set *switch_set_make(const struct fixture_img *img, size_t n)
{
    const char *env = getenv("VAT_SQL_FIXTURE_SET");
    if (n < 2 || (env && strcmp(env, "0") == 0))
        return NULL;
    const unsigned char *a = img[0].data;
    if (img[0].n < 100)
        return NULL;
    size_t page = (size_t)a[16] << 8 | a[17];
    if (page == 1)
        page = 65536;
    if (page < 512 || (page & (page - 1)) || a[20] >= page - 480)
        return NULL;
    size_t usable = page - a[20];
    for (size_t i = 0; i < n; i++) {
        const unsigned char *b = img[i].data;
        if (img[i].n < page || img[i].n % page || memcmp(b + 24, b + 92, 4) != 0 ||
            (size_t)be32_at(b + 28) * page != img[i].n || memcmp(a + 16, b + 16, 2) != 0 ||
            memcmp(a + 20, b + 20, 4) != 0 || memcmp(a + 40, b + 40, 32) != 0 ||
            rollback_byte(a[18]) != rollback_byte(b[18]) ||
            rollback_byte(a[19]) != rollback_byte(b[19]) ||
            memcmp(a + 100, b + 100, page - 100) != 0)
            return NULL;
    }
    /* page 1 (the same in all): one leaf of sqlite_schema, no overflow, no
     * statistics table */
    if (a[100] != 13)
        return NULL;
    for (size_t k = 100; k + 11 <= page; k++)
        if (a[k] == 's' && memcmp(a + k, "sqlite_stat", 11) == 0)
            return NULL;
    size_t cells = (size_t)a[103] << 8 | a[104];
    for (size_t c = 0; c < cells; c++) {
        size_t at = 108 + 2 * c;
        if (at + 2 > page)
            return NULL;
        size_t off = (size_t)a[at] << 8 | a[at + 1];
        uint64_t payload;
        if (off >= page || !varint_at(a + off, page - off, &payload) || payload > usable - 35)
            return NULL;
    }
    struct switch_set *set = vat_xcalloc(1, sizeof *set);
    set->n = n;
    set->img = vat_xcalloc(n, sizeof *set->img);
    set->len = vat_xcalloc(n, sizeof *set->len);
    for (size_t i = 0; i < n; i++) {
        unsigned char *c = vat_xmalloc(img[i].n);
        memcpy(c, img[i].data, img[i].n);
        /* read in rollback mode, as sandbox_open does; a change counter of
         * its own (and the page count kept valid) */
        rollback_mode(c);
        uint32_t k = (uint32_t)i + 1;
        unsigned char ctr[4] = {(unsigned char)(k >> 24), (unsigned char)(k >> 16),
                                (unsigned char)(k >> 8), (unsigned char)k};
        memcpy(c + 24, ctr, 4);
        memcpy(c + 92, ctr, 4);
        set->img[i] = c;
        set->len[i] = img[i].n;
    }
    return set;
}

static void switch_set_free(struct switch_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        free(set->img[i]);
    free(set->img);
    free(set->len);
    free(set);
}

struct sql_pool {
    pthread_mutex_t lock;
    struct sandbox **free_sb;
    size_t n_free, cap;
    _Atomic size_t bytes; /* the pooled sandboxes' sandbox_bytes */
};

struct vat_sql_prep {
    json_t *spec; /* own reference: s points into it */
    struct sql_spec s;
    size_t n;
    struct fixture_img *img;
    struct sql_rows *gold, *trap; /* trap NULL when no trap was given */
    struct sql_pool *pool;
    struct switch_set *sw;   /* the fixtures as one set, or NULL (switch_set_make) */
    struct sql_pool sw_pool; /* sandboxes open on sw */
    struct vat_verdict ok; /* an answer's verdict when its rows match on all */
    size_t fixed_bytes;    /* images, the set's copies, gold and trap rows */
    /* During a draw, per fixture: the plain rows the admission's runs left
     * in the fixture's cached sandbox (the reference's, the trap's), so a
     * check of the same query compares them instead of running it again.
     * Only the memo of each entry is used.  NULL outside a draw. */
    struct sb_cache_entry *seen;
};

/* The statements a pooled sandbox keeps, by exact query text, most
 * recent first.  A statement is kept only after it ran to SQLITE_DONE
 * (every gate passed, every budget held) and is reset before it runs
 * again; the budgets are counted afresh on every run. */
#define STMT_CACHE_SIZE 8
struct stmt_cache {
    struct {
        char *q;
        size_t n;
        sqlite3_stmt *stmt;
        size_t bytes; /* the statement's SQLITE_STMTSTATUS_MEMUSED and q's */
    } e[STMT_CACHE_SIZE];
    size_t used;
    size_t bytes; /* of the statements kept (sandbox_bytes) */
};

static bool stmt_cache_take(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt **out)
{
    for (size_t i = 0; i < c->used; i++)
        if (c->e[i].n == n && memcmp(c->e[i].q, q, n) == 0) {
            *out = c->e[i].stmt;
            free(c->e[i].q);
            c->bytes -= c->e[i].bytes;
            memmove(&c->e[i], &c->e[i + 1], (c->used - i - 1) * sizeof c->e[0]);
            c->used--;
            return true;
        }
    return false;
}

static void stmt_cache_put(struct stmt_cache *c, const char *q, size_t n, sqlite3_stmt *stmt)
{
    sqlite3_reset(stmt);
    if (c->used == STMT_CACHE_SIZE) {
        c->used--;
        sqlite3_finalize(c->e[c->used].stmt);
        free(c->e[c->used].q);
        c->bytes -= c->e[c->used].bytes;
    }
    memmove(&c->e[1], &c->e[0], c->used * sizeof c->e[0]);
    c->e[0].q = vat_xstrndup(q, n);
    c->e[0].n = n;
    c->e[0].stmt = stmt;
    /* measured as it comes in, once, rather than every statement at every
     * count (sqlite3_db_status walks them all) */
    c->e[0].bytes = n + 1 + (size_t)sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_MEMUSED, 0);
    c->bytes += c->e[0].bytes;
    c->used++;
}

static void stmt_cache_free(struct stmt_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->used; i++) {
        sqlite3_finalize(c->e[i].stmt);
        free(c->e[i].q);
    }
    free(c);
}

/* Resets what one query may have left on a pooled sandbox. */
static void sandbox_rearm(struct sandbox *sb, const struct query_facts *qf)
{
    sb->mentions_now = qf->mentions_now;
    sb->function_calls = 0;
    sb->too_many_functions = false;
    sb->denied[0] = 0;
    sb->denied_2nd[0] = 0;
    budget_reset(sb, 0);
}

/* Empties sb's statement cache (its statements were compiled against the
 * image it had). */
static void sandbox_stmt_cache_reset(struct sandbox *sb)
{
    stmt_cache_free(sb->cache);
    sb->cache = vat_xcalloc(1, sizeof *sb->cache);
}

static void sandbox_destroy(struct sandbox *sb)
{
    stmt_cache_free(sb->cache); /* its statements go before the connection */
    sb->cache = NULL;
    sandbox_close(sb);
    free(sb);
}

/* Makes a freshly opened sandbox poolable: a statement cache, and
 * exclusive locking (the pooled connection is the only user of its
 * private copy: it keeps its page cache across statements instead of
 * re-reading the image for every read transaction), set by us with the
 * authorizer lifted for that one pragma.  0, or -1 with *v set and sb
 * destroyed. */
static int sandbox_pool_setup(struct sandbox *sb, bool exclusive, struct vat_verdict *v)
{
    sb->cache = vat_xcalloc(1, sizeof *sb->cache);
    /* A fixture set's sandbox keeps normal locking: the pager must read the
     * header at every read transaction to see the fixture move. */
    if (!exclusive)
        return 0;
    if (sandbox_exec_aside(sb, sandbox_exclusive_sql) != SQLITE_OK) {
        *v = verdictf(false, VAT_INTERNAL, "the sandbox cannot set its locking mode");
        sandbox_destroy(sb);
        return -1;
    }
    return 0;
}

/* Whether a failed query's verdict is a pure function of the query text
 * and the fixtures, so a memo may keep it (lib/corpus.c): not when a net of
 * the checker stopped it (the CPU-time net, the process-wide heap, the
 * counted memory cap), nor an internal failure.  The step budget is: its
 * count is the statement's own VM steps and the built-ins' charges. */
static bool failure_is_pure(const struct sandbox *sb, const struct vat_verdict *v)
{
    return sb->stop != STOP_TIME && !mem_tls.hit && strcmp(v->code, VAT_CHECKER_LIMIT) != 0 &&
           strcmp(v->code, VAT_INTERNAL) != 0;
}

/* Runs q on fixture i through the pool.  Returns 0, or -1 with *v set and
 * *pure (may be NULL) cleared when that verdict is not a pure function of
 * q and the fixture (failure_is_pure). */
static struct sandbox *pool_take(struct sql_pool *pl)
{
    struct sandbox *sb = NULL;
    pthread_mutex_lock(&pl->lock);
    if (pl->n_free) {
        sb = pl->free_sb[--pl->n_free];
        atomic_fetch_sub_explicit(&pl->bytes, sb->pooled_bytes, memory_order_relaxed);
    }
    pthread_mutex_unlock(&pl->lock);
    return sb;
}

/* What a pooled sandbox holds, for the byte budget of libvat's caches:
 * its connections' page caches, schemas and statements as SQLite counts
 * them (the kept statements as each was measured coming in), its copy of
 * the fixture image, and SANDBOX_BASE_BYTES per connection for what
 * SQLite does not count (the connection itself, the page cache's first
 * bulk allocation, the functions registered). */
#define SANDBOX_BASE_BYTES ((size_t)104 << 10)
static size_t db_status(sqlite3 *db, int op)
{
    int cur = 0, hi = 0;
    return db && sqlite3_db_status(db, op, &cur, &hi, 0) == SQLITE_OK && cur > 0 ? (size_t)cur : 0;
}

static size_t sandbox_bytes(struct sandbox *sb)
{
    /* a schema does not change once read; the aux connection, opened on
     * first use, has none of note */
    if (!sb->schema_bytes)
        sb->schema_bytes = db_status(sb->db, SQLITE_DBSTATUS_SCHEMA_USED) + 1;
    size_t n = sizeof *sb + sb->img_bytes + sb->schema_bytes + SANDBOX_BASE_BYTES +
               db_status(sb->db, SQLITE_DBSTATUS_CACHE_USED) + (sb->cache ? sb->cache->bytes : 0);
    if (sb->aux)
        n += SANDBOX_BASE_BYTES + db_status(sb->aux, SQLITE_DBSTATUS_CACHE_USED) +
             db_status(sb->aux, SQLITE_DBSTATUS_STMT_USED);
    return n;
}

static void pool_give(struct sql_pool *pl, struct sandbox *sb)
{
    sb->pooled_bytes = sandbox_bytes(sb);
    pthread_mutex_lock(&pl->lock);
    if (pl->n_free == pl->cap) {
        pl->cap = pl->cap ? 2 * pl->cap : 4;
        pl->free_sb = vat_xrealloc(pl->free_sb, pl->cap * sizeof *pl->free_sb);
    }
    pl->free_sb[pl->n_free++] = sb;
    atomic_fetch_add_explicit(&pl->bytes, sb->pooled_bytes, memory_order_relaxed);
    pthread_mutex_unlock(&pl->lock);
}

/* Retires every pooled sandbox; the pool stays usable (and empty). */
static void pool_empty(struct sql_pool *pl)
{
    pthread_mutex_lock(&pl->lock);
    for (size_t k = 0; k < pl->n_free; k++)
        sandbox_retire(pl->free_sb[k]);
    pl->n_free = 0;
    atomic_store_explicit(&pl->bytes, 0, memory_order_relaxed);
    pthread_mutex_unlock(&pl->lock);
}

static void pool_release(struct sql_pool *pl)
{
    pool_empty(pl);
    free(pl->free_sb);
    pthread_mutex_destroy(&pl->lock);
}

/* A sandbox open on the task's fixture set, from its pool or new.  NULL
 * with *v internal (and *pure cleared) when none can be opened. */
static struct sandbox *set_sandbox_take(struct vat_sql_prep *p, const struct query_facts *qf,
                                        struct vat_verdict *v, bool *pure)
{
    struct sandbox *sb = pool_take(&p->sw_pool);
    if (!sb)
        sb = sandbox_new(&p->s, qf, NULL, RUN_PLAIN, p->sw, v);
    if (!sb && pure)
        *pure = false;
    return sb;
}

/* Runs q on fixture i: on *held when given (a sandbox open on the fixture
 * set, moved to fixture i; destroyed, and *held cleared, when the query
 * fails), else through fixture i's pool.  Returns 0, or -1 with *v set and
 * *pure (may be NULL) cleared when that verdict is not a pure function of
 * q and the fixture (failure_is_pure). */
static int prep_run(struct vat_sql_prep *p, size_t i, struct sandbox **held, const char *label,
                    const char *q, size_t qlen, const struct query_facts *qf,
                    struct sql_rows *out, struct vat_verdict *v, bool *pure, long long *work)
{
    struct sql_pool *pl = &p->pool[i];
    struct sandbox *sb = held ? *held : pool_take(pl);
    if (held)
        sb->sw.cur = i;
    memset(out, 0, sizeof *out);
    /* The build has usually just run the reference on this very fixture
     * (vat_sql_gold_admissible, vat_sql_run): that sandbox, opened and
     * set up exactly as a pooled one, joins the pool instead of a new
     * one being opened. */
    if (!sb && (sb = sb_cache_take(&p->s, &p->img[i], RUN_PLAIN)) != NULL)
        sb->tables = p->s.tables;
    if (!sb && !(sb = sandbox_new(&p->s, qf, &p->img[i], RUN_PLAIN, NULL, v))) {
        if (pure)
            *pure = false;
        return -1;
    }
    sandbox_rearm(sb, qf);
    int rc = sandbox_query(sb, &p->s, label, q, qlen, out, v, work);
    if (rc != 0) {
        if (pure && !failure_is_pure(sb, v))
            *pure = false;
        sandbox_destroy(sb);
        if (held)
            *held = NULL;
        return rc;
    }
    if (!held)
        pool_give(pl, sb);
    return 0;
}

void vat_sql_prep_free(struct vat_sql_prep *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        if (p->seen)
            memo_release(&p->seen[i]);
        free(p->img[i].own);
        rows_release(&p->gold[i]);
        if (p->trap)
            rows_release(&p->trap[i]);
        pool_release(&p->pool[i]);
    }
    pool_release(&p->sw_pool);
    switch_set_free(p->sw);
    free(p->seen);
    free(p->img);
    free(p->gold);
    free(p->trap);
    free(p->pool);
    json_decref(p->spec);
    free(p);
}

/* Copies into seen the rows this thread's cached plain sandbox for img
 * (s's budget and tables) keeps, by query. */
static void seen_keep(struct sb_cache_entry *seen, const struct sql_spec *s,
                      const struct fixture_img *img)
{
    struct sb_cache_entry *e = sb_cache_find(s, img, RUN_PLAIN);
    for (size_t k = 0; e && k < e->nmemo; k++)
        if (e->memo[k].how == RUN_PLAIN)
            memo_keep_rows(seen, s, e->memo[k].q, e->memo[k].qlen, RUN_PLAIN, &e->memo[k].rows,
                           e->memo[k].work);
}

struct vat_sql_prep *vat_sql_prepare(const json_t *spec, const char *root,
                                     const char *const *sha256, const char *trap,
                                     size_t trap_len, struct vat_verdict *v)
{
    struct vat_sql_prep *p = vat_xcalloc(1, sizeof *p);
    p->spec = json_incref((json_t *)spec);
    if (spec_read(p->spec, true, true, &p->s, v) != 0)
        goto fail;
    struct query_facts rf, tf;
    if (!query_gate(p->s.reference, p->s.reference_len, &rf, v)) {
        struct reason r = {{0}, 0};
        reason_printf(&r, "the reference query fails the gate (%s): ", v->code);
        reason_puts(&r, v->reason);
        *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
        goto fail;
    }
    /* A trap that fails the gate cannot be matched by any answer's rows. */
    bool with_trap = trap && query_gate(trap, trap_len, &tf, v);
    p->n = p->s.n_fixtures;
    p->img = vat_xcalloc(p->n, sizeof *p->img);
    p->gold = vat_xcalloc(p->n, sizeof *p->gold);
    p->trap = with_trap ? vat_xcalloc(p->n, sizeof *p->trap) : NULL;
    p->pool = vat_xcalloc(p->n, sizeof *p->pool);
    p->seen = vat_file_memo_on() ? vat_xcalloc(p->n, sizeof *p->seen) : NULL;
    for (size_t i = 0; i < p->n; i++)
        pthread_mutex_init(&p->pool[i].lock, NULL);
    pthread_mutex_init(&p->sw_pool.lock, NULL);
    /* the reference and the trap are checks too: one budget each */
    long long ref_work = 0, trap_work = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *rel = json_string_value(json_array_get(p->s.fixtures, i));
        char hex[65] = "";
        /* the prepared check outlives the draw's memo: its own copy */
        /* a fixture whose digest is given may be a symbolic link: its
         * bytes as read are checked against the digest below */
        int loaded = fixture_load(root, rel, p->s.load, false,
                                  sha256 ? sha256[i] : spec_fixture_sha(&p->s, rel), &p->img[i],
                                  hex, v);
        /* bytes that fail to load as a fixture and are not the ones the
         * tables record were changed: tampered, not internal */
        if (loaded != 0 && (!sha256 || !hex[0] || strcmp(v->code, VAT_TAMPERED) == 0 ||
                            (sha256[i] && strcmp(hex, sha256[i]) == 0)))
            goto fail;
        if (sha256) {
            if (!sha256[i] || strcmp(hex, sha256[i]) != 0) {
                struct reason r = {{0}, 0};
                reason_puts(&r, "fixture '");
                reason_text(&r, rel, strlen(rel), 100);
                reason_puts(&r, sha256[i] ? "' does not match the sha256 the tables record"
                                          : "' has no sha256 recorded in the tables");
                *v = reason_verdict(false, 0, VAT_TAMPERED, &r);
                goto fail;
            }
        }
        char label[32];
        fixture_label(label, sizeof label, i);
        /* In a draw the admission has just run the reference on this very
         * fixture, in a sandbox set up as a pooled one: its rows serve, and
         * those of every other query it ran there in plain order are kept
         * for the checks (taken before anything here moves that sandbox). */
        if (p->seen)
            seen_keep(&p->seen[i], &p->s, &p->img[i]);
        struct rows_memo *ref =
            p->seen ? memo_find_rows(&p->seen[i], &p->s, p->s.reference, p->s.reference_len,
                                     RUN_PLAIN)
                    : NULL;
        int rc = 0;
        if (ref) {
            ref_work += ref->work;
            rows_copy(&p->gold[i], &ref->rows);
            if (ref_work > p->s.step_budget) {
                *v = budget_verdict(&p->s, label);
                rc = -1;
            }
        } else {
            rc = prep_run(p, i, NULL, label, p->s.reference, p->s.reference_len, &rf,
                          &p->gold[i], v, NULL, &ref_work);
        }
        if (rc != 0) {
            struct reason r = {{0}, 0};
            reason_printf(&r, "the reference query fails on fixture %s (%s): ", label, v->code);
            reason_puts(&r, v->reason);
            *v = reason_verdict(false, 0, VAT_INTERNAL, &r);
            goto fail;
        }
        if (p->trap &&
            prep_run(p, i, NULL, label, trap, trap_len, &tf, &p->trap[i], v, NULL, &trap_work) !=
                0) {
            /* A trap that fails on a fixture matches no answer's rows. */
            for (size_t k = 0; k < i; k++)
                rows_release(&p->trap[k]);
            free(p->trap);
            p->trap = NULL;
        }
    }
    /* During a task's draw the per-fixture sandboxes come ready from the
     * admission (sb_cache_take) and most mutants stop at the first
     * fixture: opening a set would cost more than it saves there. */
    p->sw = vat_file_memo_on() ? NULL : switch_set_make(p->img, p->n);
    if (p->sw) {
        /* Checks run on the set alone from here: the sandboxes the
         * reference and the trap ran in, and the images they were opened
         * on, would only be held (the set keeps copies of its own). */
        for (size_t i = 0; i < p->n; i++) {
            pool_empty(&p->pool[i]);
            free(p->img[i].own);
            p->img[i].data = p->img[i].own = NULL;
        }
    }
    p->fixed_bytes = sizeof *p + p->n * (sizeof *p->img + 2 * sizeof *p->gold + sizeof *p->pool);
    for (size_t i = 0; i < p->n; i++)
        p->fixed_bytes += p->img[i].n * (p->sw ? 1 : p->img[i].own != NULL) +
                          rows_held(&p->gold[i]) + (p->trap ? rows_held(&p->trap[i]) : 0);
    p->ok = vat_verdict_make(true, 1, VAT_OK, "rows match on all %zu fixtures", p->n);
    return p;
fail:
    vat_sql_prep_free(p);
    return NULL;
}

bool vat_sql_prep_uses_fixture_set(const struct vat_sql_prep *p)
{
    return p && p->sw;
}

size_t vat_sql_prep_bytes(struct vat_sql_prep *p)
{
    if (!p)
        return 0;
    size_t n = p->fixed_bytes + atomic_load_explicit(&p->sw_pool.bytes, memory_order_relaxed);
    for (size_t i = 0; i < p->n; i++)
        n += atomic_load_explicit(&p->pool[i].bytes, memory_order_relaxed);
    return n;
}

struct vat_verdict vat_sql_check_prepared(struct vat_sql_prep *p, const char *answer,
                                          size_t len, bool *is_trap)
{
    return vat_sql_check_prepared_pure(p, answer, len, is_trap, NULL);
}

static struct vat_verdict check_prepared(struct vat_sql_prep *p, const char *answer, size_t len,
                                         bool *is_trap, bool *pure, bool reasons, bool reveal);

struct vat_verdict vat_sql_check_prepared_pure(struct vat_sql_prep *p, const char *answer,
                                               size_t len, bool *is_trap, bool *pure)
{
    return check_prepared(p, answer, len, is_trap, pure, true, false);
}

struct vat_verdict vat_sql_check_prepared_as(struct vat_sql_prep *p, const char *answer,
                                             size_t len, bool *is_trap, bool *pure, bool reveal)
{
    return check_prepared(p, answer, len, is_trap, pure, true, reveal);
}

struct vat_verdict vat_sql_check_prepared_score(struct vat_sql_prep *p, const char *answer,
                                                size_t len)
{
    return check_prepared(p, answer, len, NULL, NULL, false, false);
}

/* reasons false: rows that differ give a verdict with its code and no
 * reason (vat_sql_check_prepared_score).  reveal false: reasons about a
 * variant fixture say how the rows differ, never what they hold. */
static struct vat_verdict check_prepared(struct vat_sql_prep *p, const char *answer, size_t len,
                                         bool *is_trap, bool *pure, bool reasons, bool reveal)
{
    struct vat_verdict v;
    bool trap_same = p->trap != NULL, failed = false;
    long long work = 0; /* one budget for the answer on all fixtures */
    sql_last_work = 0;
    if (is_trap)
        *is_trap = false;
    if (pure)
        *pure = true; /* the gate and the rows compared are pure; prep_run says otherwise */
    if (!answer)
        return verdictf(false, VAT_PARSE, "no answer given");
    struct query_facts qf;
    if (!query_gate(answer, len, &qf, &v))
        return v;
    /* The verdict is that of the first fixture where the rows differ, as
     * in vat_check_sql; the scan goes on past it only while the answer
     * still gives the trap's rows, to tell whether it is the trap. */
    struct sandbox *held = NULL;
    if (p->sw && !(held = set_sandbox_take(p, &qf, &v, pure)))
        return v;
    for (size_t i = 0; i < p->n && (!failed || trap_same); i++) {
        char label[32];
        fixture_label(label, sizeof label, i);
        struct sql_rows got;
        struct vat_verdict rv;
        struct rows_memo *m =
            p->seen ? memo_find_rows(&p->seen[i], &p->s, answer, len, RUN_PLAIN) : NULL;
        int rc = 0;
        if (m && work + m->work > p->s.step_budget) { /* as running it would count */
            work = p->s.step_budget + 1;
            rv = budget_verdict(&p->s, label);
            rc = -1;
        } else if (m) {
            work += m->work;
            rows_copy(&got, &m->rows);
        } else {
            rc = prep_run(p, i, p->sw ? &held : NULL, label, answer, len, &qf, &got, &rv, pure,
                          &work);
        }
        sql_last_work = work;
        if (rc != 0) {
            if (held)
                pool_give(&p->sw_pool, held);
            if (!failed) {
                v = rv;
                hide_run_failure(&v, label, !reveal && i > 0);
            }
            return v;
        }
        if (!failed && !rows_agree_as(&got, &p->gold[i], p->s.ordered, p->s.rel_tol,
                                      p->s.abs_tol, label, !reveal && i > 0,
                                      reasons ? &v : NULL)) {
            failed = true;
            if (!reasons)
                v = (struct vat_verdict){.gate_passed = true, .score = 0,
                                         .code = rows_differ_code(&got, &p->gold[i])};
        }
        if (trap_same)
            trap_same = rows_agree(&got, &p->trap[i], p->s.ordered, p->s.rel_tol,
                                   p->s.abs_tol, label, NULL);
        rows_release(&got);
    }
    if (held)
        pool_give(&p->sw_pool, held);
    if (is_trap)
        *is_trap = trap_same;
    if (failed)
        return v;
    return p->ok;
}

/* ---- one database image queried many times ---------------------------------------- *
 * libvat's tool-use episodes (lib/episode.c) run an agent's queries on a
 * task's main fixture as the prompt loads it: the image is held once per
 * task, its sandboxes pooled as a prepared check's are (statements kept
 * by text, every budget counted afresh), read only even during a draw. */
struct vat_sql_db {
    json_t *spec; /* own reference: s points into it */
    struct sql_spec s;
    struct fixture_img img;
    struct sql_pool pool;
};

struct vat_sql_db *vat_sql_db_new(const json_t *spec, unsigned char *img, size_t n,
                                  struct vat_verdict *v)
{
    struct vat_sql_db *d = vat_xcalloc(1, sizeof *d);
    d->img.data = d->img.own = img;
    d->img.n = n;
    pthread_mutex_init(&d->pool.lock, NULL);
    d->spec = json_incref((json_t *)spec);
    if (spec_read(d->spec, false, false, &d->s, v) != 0) {
        vat_sql_db_free(d);
        return NULL;
    }
    if (!is_sqlite_image(img, n)) {
        *v = verdictf(false, VAT_INTERNAL, "the image is not an sqlite database");
        vat_sql_db_free(d);
        return NULL;
    }
    return d;
}

void vat_sql_db_free(struct vat_sql_db *d)
{
    if (!d)
        return;
    pool_release(&d->pool);
    free(d->img.own);
    json_decref(d->spec);
    free(d);
}

size_t vat_sql_db_bytes(struct vat_sql_db *d)
{
    return d ? sizeof *d + d->img.n + atomic_load_explicit(&d->pool.bytes, memory_order_relaxed)
             : 0;
}

int vat_sql_db_query(struct vat_sql_db *d, const char *q, size_t len, size_t max_rows,
                     json_t **cols, json_t **rows, struct vat_verdict *v)
{
    *cols = *rows = NULL;
    if (!q) {
        *v = verdictf(false, VAT_PARSE, "no query given");
        return -1;
    }
    struct query_facts qf;
    if (!query_gate(q, len, &qf, v))
        return -1;
    struct sql_spec s = d->s;
    if (max_rows)
        s.max_rows = max_rows;
    struct sandbox *sb = pool_take(&d->pool);
    if (!sb) {
        pthread_once(&mem_net_once, mem_net_init);
        /* sandbox_new without its draw-time writable copy: always read only */
        sb = vat_xcalloc(1, sizeof *sb);
        sb->tables = d->s.tables;
        sb->step_budget = d->s.step_budget;
        sb->mentions_now = qf.mentions_now;
        if (sandbox_open(sb, d->img.data, d->img.n, RUN_PLAIN, v) != 0) {
            free(sb);
            return -1;
        }
        if (sandbox_pool_setup(sb, true, v) != 0)
            return -1;
    }
    sandbox_rearm(sb, &qf);
    struct sql_rows out;
    memset(&out, 0, sizeof out);
    long long work = 0; /* each query its own budget */
    if (sandbox_query(sb, &s, "main", q, len, &out, v, &work) != 0) {
        sandbox_destroy(sb);
        return -1;
    }
    /* the statement that just ran is the most recent of the sandbox's
     * cache (sandbox_query keeps it there): its column names */
    json_t *names = json_array();
    sqlite3_stmt *st = sb->cache && sb->cache->used ? sb->cache->e[0].stmt : NULL;
    for (size_t c = 0; c < out.ncol; c++) {
        const char *nm = st ? sqlite3_column_name(st, (int)c) : NULL;
        json_array_append_new(names, text_json((const unsigned char *)(nm ? nm : ""),
                                               nm ? strlen(nm) : 0));
    }
    pool_give(&d->pool, sb);
    *cols = names;
    *rows = rows_json(&out);
    rows_release(&out);
    *v = vat_verdict_make(true, 1, VAT_OK, "%zu rows", json_array_size(*rows));
    return 0;
}
