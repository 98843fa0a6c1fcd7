/* test_mutate.c — the mutant generators of src/mutate.c: every
 * mutation kind on small inputs, exact mutant lists where they are short,
 * the equivalences marked, and the tokenisers' corner cases (escaped
 * characters, classes holding ']' or '^', the '{' that is a literal,
 * comments, strings and quoted names holding keywords, BETWEEN's AND,
 * CASE), and gold that cannot be tokenised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mutate.h"

/* ---- helpers ------------------------------------------------------------- */

static struct vat_mutants rx(const char *gold)
{
    struct vat_mutants m = VAT_MUTANTS_INIT;
    struct vat_err e = {{0}};
    if (vat_mutate_regex(gold, &m, &e) != 0)
        fail_msg("cannot mutate '%s': %s", gold, e.msg);
    return m;
}

static struct vat_mutants sql(const char *gold, bool ordered)
{
    struct vat_mutants m = VAT_MUTANTS_INIT;
    struct vat_err e = {{0}};
    if (vat_mutate_sql(gold, ordered, &m, &e) != 0)
        fail_msg("cannot mutate '%s': %s", gold, e.msg);
    return m;
}

static const struct vat_mutant *find(const struct vat_mutants *m, const char *text)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].text, text) == 0)
            return &m->v[i];
    return NULL;
}

/* Asserts that text is a mutant of the kind, equivalent or not. */
static void has(const struct vat_mutants *m, const char *kind, const char *text, bool equivalent)
{
    const struct vat_mutant *x = find(m, text);
    if (!x) {
        for (size_t i = 0; i < m->n; i++)
            fprintf(stderr, "  %s: %s\n", m->v[i].kind, m->v[i].text);
        fail_msg("no mutant '%s'", text);
    }
    assert_string_equal(x->kind, kind);
    assert_int_equal(x->equivalent, equivalent);
}

static size_t count_kind(const struct vat_mutants *m, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += strcmp(m->v[i].kind, kind) == 0;
    return n;
}

/* No mutant repeats another or equals gold. */
static void distinct(const struct vat_mutants *m, const char *gold)
{
    for (size_t i = 0; i < m->n; i++) {
        assert_string_not_equal(m->v[i].text, gold);
        for (size_t j = i + 1; j < m->n; j++)
            assert_string_not_equal(m->v[i].text, m->v[j].text);
    }
}

/* ---- regex ----------------------------------------------------------------- */

static void test_rx_anchors_boundaries(void **state)
{
    (void)state;
    struct vat_mutants m = rx("^\\bORD-\\d\\b$");
    has(&m, "drop_anchor", "\\bORD-\\d\\b$", false);
    has(&m, "drop_anchor", "^\\bORD-\\d\\b", false);
    has(&m, "drop_boundary", "^ORD-\\d\\b$", false);
    has(&m, "drop_boundary", "^\\bORD-\\d$", false);
    assert_int_equal(count_kind(&m, "drop_anchor"), 2);
    assert_int_equal(count_kind(&m, "drop_boundary"), 2);
    distinct(&m, "^\\bORD-\\d\\b$");
    vat_mutants_release(&m);

    m = rx("\\Aab\\Z\\B");
    has(&m, "drop_anchor", "ab\\Z\\B", false);
    has(&m, "drop_anchor", "\\Aab\\B", false);
    has(&m, "drop_boundary", "\\Aab\\Z", false);
    assert_int_equal(m.n, 3);
    vat_mutants_release(&m);
}

static void test_rx_lookarounds(void **state)
{
    (void)state;
    struct vat_mutants m = rx("(?<!\\d)(?<=x)a(?=b)(?!c)");
    has(&m, "drop_lookaround", "(?<=x)a(?=b)(?!c)", false);
    has(&m, "drop_lookaround", "(?<!\\d)a(?=b)(?!c)", false);
    has(&m, "drop_lookaround", "(?<!\\d)(?<=x)a(?!c)", false);
    has(&m, "drop_lookaround", "(?<!\\d)(?<=x)a(?=b)", false);
    assert_int_equal(count_kind(&m, "drop_lookaround"), 4);
    vat_mutants_release(&m);

    /* a nested group inside goes with it; a repeat of it too */
    m = rx("a(?!(?:b|c)\\d)(?=x)+?z");
    has(&m, "drop_lookaround", "a(?=x)+?z", false);
    has(&m, "drop_lookaround", "a(?!(?:b|c)\\d)z", false);
    vat_mutants_release(&m);

    /* plain and named groups are not lookarounds */
    m = rx("(a)(?:b)(?P<n>c)");
    assert_int_equal(count_kind(&m, "drop_lookaround"), 0);
    vat_mutants_release(&m);
}

static void test_rx_quantifiers(void **state)
{
    (void)state;
    struct vat_mutants m = rx("a{4}");
    has(&m, "widen_quantifier", "a{3,5}", false);
    has(&m, "widen_quantifier", "a{4,}", false);
    assert_int_equal(m.n, 2);
    vat_mutants_release(&m);

    m = rx("a?");
    has(&m, "widen_quantifier", "a*", false);
    assert_int_equal(m.n, 1); /* '*' twice is one mutant */
    vat_mutants_release(&m);

    m = rx("a+b*c{2,5}d{0,3}e{1}f{3,}g{,2}");
    has(&m, "widen_quantifier", "a*b*c{2,5}d{0,3}e{1}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{1,6}d{0,3}e{1}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,}d{0,3}e{1}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,4}e{1}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d*e{1}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,3}e{0,2}f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,3}e+f{3,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,3}e{1}f{2,}g{,2}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,3}e{1}f{3,}g{0,3}", false);
    has(&m, "widen_quantifier", "a+b*c{2,5}d{0,3}e{1}f{3,}g*", false);
    assert_int_equal(m.n, 10); /* '*' has nothing wider */
    vat_mutants_release(&m);

    /* lazy and possessive marks stay with their repeat */
    m = rx("x{2}?y+?");
    has(&m, "widen_quantifier", "x{1,3}?y+?", false);
    has(&m, "widen_quantifier", "x{2}?y*?", false);
    vat_mutants_release(&m);

    /* '{' that is no repeat is a literal: nothing to widen */
    m = rx("a{x}b{}c{1,x}");
    assert_int_equal(m.n, 0);
    vat_mutants_release(&m);
}

static void test_rx_classes(void **state)
{
    (void)state;
    struct vat_mutants m = rx("[0-9]");
    has(&m, "class_to_digit", "\\d", true); /* the same ASCII set */
    has(&m, "class_to_word", "\\w", false);
    has(&m, "class_to_any", ".", false);
    vat_mutants_release(&m);

    m = rx("[1-9]x[A-Z]");
    has(&m, "class_to_digit", "\\dx[A-Z]", false);
    has(&m, "class_to_word", "[1-9]x\\w", false);
    has(&m, "class_to_any", "[1-9]x.", false);
    assert_int_equal(m.n, 6);
    vat_mutants_release(&m);

    /* \d to \d is no mutant; \w and . are */
    m = rx("\\d");
    assert_int_equal(m.n, 2);
    has(&m, "class_to_word", "\\w", false);
    has(&m, "class_to_any", ".", false);
    vat_mutants_release(&m);

    m = rx("[A-Za-z0-9_][^\\n]\\S");
    has(&m, "class_to_word", "\\w[^\\n]\\S", true);
    has(&m, "class_to_any", "[A-Za-z0-9_].\\S", true);
    has(&m, "class_to_any", "[A-Za-z0-9_][^\\n].", false);
    vat_mutants_release(&m);

    /* with (?s) a dot also matches a newline, so [^\n] is not '.' */
    m = rx("(?s)[^\\n]");
    has(&m, "class_to_any", "(?s).", false);
    vat_mutants_release(&m);

    /* with (?i) no equivalence is claimed */
    m = rx("(?i)[0-9a-z_]");
    has(&m, "class_to_word", "(?i)\\w", false);
    vat_mutants_release(&m);
}

static void test_rx_tokenisation(void **state)
{
    (void)state;
    /* escaped characters are literals, never classes or anchors */
    struct vat_mutants m = rx("\\$\\.\\^\\\\d\\[\\(");
    assert_int_equal(m.n, 0);
    vat_mutants_release(&m);

    /* ']' first in a class, '^' negating it, escapes inside: one class */
    m = rx("[]a][^]b][\\]-][x^]");
    assert_int_equal(count_kind(&m, "class_to_any"), 4);
    has(&m, "class_to_any", ".[^]b][\\]-][x^]", false);
    has(&m, "class_to_any", "[]a].[\\]-][x^]", false);
    has(&m, "class_to_any", "[]a][^]b].[x^]", false);
    has(&m, "class_to_any", "[]a][^]b][\\]-].", false);
    vat_mutants_release(&m);

    /* a ')' or '|' inside a class does not end a group */
    m = rx("(?<![)|])z");
    has(&m, "drop_lookaround", "z", false);
    vat_mutants_release(&m);

    /* comments, backreferences, inline flags and hex escapes are inert */
    m = rx("(?i)(?#\\d{3})(?P<y>a)(?P=y)\\1\\x41");
    assert_int_equal(m.n, 0);
    vat_mutants_release(&m);

    m = rx("(?<!\\d)\\d{4}-(?:0[1-9]|1[0-2])(?!\\d)");
    distinct(&m, "(?<!\\d)\\d{4}-(?:0[1-9]|1[0-2])(?!\\d)");
    for (size_t i = 0; i < m.n; i++)
        assert_true(m.v[i].offset < strlen("(?<!\\d)\\d{4}-(?:0[1-9]|1[0-2])(?!\\d)"));
    vat_mutants_release(&m);
}

static void test_rx_errors(void **state)
{
    (void)state;
    /* the pattern is read as the checker reads it, so what Python refuses
     * (global flags after the start, a repeated repeat) is refused too */
    static const char *const bad[] = {"(ab", "[ab", "ab\\", "a)b", "(?#x", "a(?i)", "a**"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct vat_mutants m = VAT_MUTANTS_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_mutate_regex(bad[i], &m, &e), -1);
        assert_int_equal(m.n, 0);
        assert_true(e.msg[0] != 0);
        vat_mutants_release(&m);
    }
}

/* ---- SQL ------------------------------------------------------------------ */

static void test_sql_aggregates(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT SUM(x) FROM t", true);
    has(&m, "swap_aggregate", "SELECT COUNT(x) FROM t", false);
    has(&m, "swap_aggregate", "SELECT AVG(x) FROM t", false);
    has(&m, "swap_aggregate", "SELECT MAX(x) FROM t", false);
    has(&m, "swap_aggregate", "SELECT MIN(x) FROM t", false);
    has(&m, "swap_aggregate", "SELECT TOTAL(x) FROM t", false);
    assert_int_equal(m.n, 5);
    vat_mutants_release(&m);

    /* lower case stays lower case; COUNT(x) also becomes COUNT(*) */
    m = sql("select count(distinct o.id) from t", true);
    has(&m, "swap_aggregate", "select sum(distinct o.id) from t", false);
    has(&m, "count_star", "select count(*) from t", false);
    has(&m, "drop_distinct", "select count(o.id) from t", false);
    vat_mutants_release(&m);

    /* COUNT(*) has no sound swap; scalar max(a, b) only becomes min */
    m = sql("SELECT COUNT(*), max(a, b) FROM t", true);
    has(&m, "swap_aggregate", "SELECT COUNT(*), min(a, b) FROM t", false);
    assert_int_equal(m.n, 1);
    vat_mutants_release(&m);

    /* a column called sum is no call */
    m = sql("SELECT sum, \"count\" FROM t", true);
    assert_int_equal(m.n, 0);
    vat_mutants_release(&m);

    /* SUM and TOTAL inside COALESCE(.., 0) are the same answer */
    m = sql("SELECT COALESCE(SUM(x), 0), ROUND(TOTAL(y), 2) FROM t", true);
    has(&m, "swap_aggregate", "SELECT COALESCE(TOTAL(x), 0), ROUND(TOTAL(y), 2) FROM t", true);
    has(&m, "swap_aggregate", "SELECT COALESCE(SUM(x), 0), ROUND(SUM(y), 2) FROM t", false);
    vat_mutants_release(&m);
}

static void test_sql_comparisons(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT a FROM t WHERE a >= 5", true);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a > 5", false);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a = 5", false);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a < 5", false);
    assert_int_equal(count_kind(&m, "flip_comparison"), 3);
    vat_mutants_release(&m);

    m = sql("SELECT a FROM t WHERE a<>1 OR b!=2 OR c==3 OR d<=4", true);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a<1 OR b!=2 OR c==3 OR d<=4", false);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a<>1 OR b=2 OR c==3 OR d<=4", false);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a<>1 OR b!=2 OR c<>3 OR d<=4", false);
    has(&m, "flip_comparison", "SELECT a FROM t WHERE a<>1 OR b!=2 OR c==3 OR d>4", false);
    assert_int_equal(count_kind(&m, "flip_comparison"), 12);
    vat_mutants_release(&m);

    m = sql("SELECT a FROM t WHERE a IS NULL AND b IS NOT NULL AND c NOT IN (1) AND d in (2)",
            true);
    has(&m, "flip_comparison",
        "SELECT a FROM t WHERE a IS NOT NULL AND b IS NOT NULL AND c NOT IN (1) AND d in (2)",
        false);
    has(&m, "flip_comparison",
        "SELECT a FROM t WHERE a IS NULL AND b IS NULL AND c NOT IN (1) AND d in (2)", false);
    has(&m, "flip_comparison",
        "SELECT a FROM t WHERE a IS NULL AND b IS NOT NULL AND c IN (1) AND d in (2)", false);
    has(&m, "flip_comparison",
        "SELECT a FROM t WHERE a IS NULL AND b IS NOT NULL AND c NOT IN (1) AND d not in (2)",
        false);
    vat_mutants_release(&m);

    /* '||', '<<' and '->' are not comparisons */
    m = sql("SELECT a || b, a << 1, j -> 'x' FROM t", true);
    assert_int_equal(count_kind(&m, "flip_comparison"), 0);
    vat_mutants_release(&m);
}

static void test_sql_constants(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT round(x / 100.0, 2) FROM t WHERE y > 0 AND z = 0x10", true);
    has(&m, "shift_constant", "SELECT round(x / 99.0, 2) FROM t WHERE y > 0 AND z = 0x10", false);
    has(&m, "shift_constant", "SELECT round(x / 101.0, 2) FROM t WHERE y > 0 AND z = 0x10", false);
    has(&m, "shift_constant", "SELECT round(x / 100.0, 1) FROM t WHERE y > 0 AND z = 0x10", false);
    has(&m, "shift_constant", "SELECT round(x / 100.0, 3) FROM t WHERE y > 0 AND z = 0x10", false);
    /* a negative result is bracketed, so "- -1" never becomes a comment */
    has(&m, "shift_constant", "SELECT round(x / 100.0, 2) FROM t WHERE y > (-1) AND z = 0x10",
        false);
    has(&m, "shift_constant", "SELECT round(x / 100.0, 2) FROM t WHERE y > 1 AND z = 0x10", false);
    assert_int_equal(count_kind(&m, "shift_constant"), 6); /* hex is left alone */
    vat_mutants_release(&m);

    /* strings of digits keep their width */
    m = sql("SELECT a FROM t WHERE strftime('%Y', d) = '2023' AND strftime('%m', d) = '07'", true);
    has(&m, "shift_constant",
        "SELECT a FROM t WHERE strftime('%Y', d) = '2022' AND strftime('%m', d) = '07'", false);
    has(&m, "shift_constant",
        "SELECT a FROM t WHERE strftime('%Y', d) = '2023' AND strftime('%m', d) = '08'", false);
    has(&m, "shift_constant",
        "SELECT a FROM t WHERE strftime('%Y', d) = '2023' AND strftime('%m', d) = '06'", false);
    assert_int_equal(count_kind(&m, "shift_constant"), 4);
    vat_mutants_release(&m);

    m = sql("SELECT a FROM t WHERE d >= '2024-03-01' AND s < '2023-12-31 23:59:59' AND "
            "x <> '2023-02-30' AND y = 'it''s'",
            true);
    has(&m, "shift_date",
        "SELECT a FROM t WHERE d >= '2024-02-29' AND s < '2023-12-31 23:59:59' AND "
        "x <> '2023-02-30' AND y = 'it''s'",
        false);
    has(&m, "shift_date",
        "SELECT a FROM t WHERE d >= '2024-03-02' AND s < '2023-12-31 23:59:59' AND "
        "x <> '2023-02-30' AND y = 'it''s'",
        false);
    has(&m, "shift_date",
        "SELECT a FROM t WHERE d >= '2024-03-01' AND s < '2024-01-01 23:59:59' AND "
        "x <> '2023-02-30' AND y = 'it''s'",
        false);
    assert_int_equal(count_kind(&m, "shift_date"), 4); /* not a date: 2023-02-30 */
    vat_mutants_release(&m);
}

static void test_sql_conjuncts(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT a FROM t WHERE a = 1 AND b BETWEEN 2 AND 3 AND "
                               "c = 'x AND y' GROUP BY a",
                               false);
    has(&m, "drop_conjunct",
        "SELECT a FROM t WHERE b BETWEEN 2 AND 3 AND c = 'x AND y' GROUP BY a", false);
    has(&m, "drop_conjunct", "SELECT a FROM t WHERE a = 1 AND c = 'x AND y' GROUP BY a", false);
    has(&m, "drop_conjunct", "SELECT a FROM t WHERE a = 1 AND b BETWEEN 2 AND 3 GROUP BY a",
        false);
    assert_int_equal(count_kind(&m, "drop_conjunct"), 3);
    vat_mutants_release(&m);

    /* one condition: the clause goes; a top-level OR is one condition */
    m = sql("SELECT a FROM t WHERE a = 1 OR b = 2 ORDER BY a", true);
    has(&m, "drop_conjunct", "SELECT a FROM t  ORDER BY a", false);
    assert_int_equal(count_kind(&m, "drop_conjunct"), 1);
    vat_mutants_release(&m);

    /* ON conditions: the last one alone becomes 1; HAVING too */
    m = sql("SELECT c.id, COUNT(o.id) FROM c LEFT JOIN o ON o.cid = c.id AND o.d >= '2023-01-01' "
            "JOIN p ON p.id = c.pid GROUP BY c.id HAVING COUNT(o.id) > 1 AND MAX(o.d) < 'z'",
            true);
    has(&m, "drop_conjunct",
        "SELECT c.id, COUNT(o.id) FROM c LEFT JOIN o ON o.d >= '2023-01-01' "
        "JOIN p ON p.id = c.pid GROUP BY c.id HAVING COUNT(o.id) > 1 AND MAX(o.d) < 'z'",
        false);
    has(&m, "drop_conjunct",
        "SELECT c.id, COUNT(o.id) FROM c LEFT JOIN o ON o.cid = c.id "
        "JOIN p ON p.id = c.pid GROUP BY c.id HAVING COUNT(o.id) > 1 AND MAX(o.d) < 'z'",
        false);
    has(&m, "drop_conjunct",
        "SELECT c.id, COUNT(o.id) FROM c LEFT JOIN o ON o.cid = c.id AND o.d >= '2023-01-01' "
        "JOIN p ON 1 GROUP BY c.id HAVING COUNT(o.id) > 1 AND MAX(o.d) < 'z'",
        false);
    has(&m, "drop_conjunct",
        "SELECT c.id, COUNT(o.id) FROM c LEFT JOIN o ON o.cid = c.id AND o.d >= '2023-01-01' "
        "JOIN p ON p.id = c.pid GROUP BY c.id HAVING MAX(o.d) < 'z'",
        false);
    assert_int_equal(count_kind(&m, "drop_conjunct"), 5);
    vat_mutants_release(&m);

    /* AND inside CASE or parentheses is no conjunct; a subquery's WHERE is
     * its own clause */
    m = sql("SELECT a FROM t WHERE CASE WHEN a AND b THEN 1 END AND (c AND d) AND e IN "
            "(SELECT f FROM u WHERE g = 1 AND h = 2)",
            true);
    has(&m, "drop_conjunct",
        "SELECT a FROM t WHERE (c AND d) AND e IN (SELECT f FROM u WHERE g = 1 AND h = 2)",
        false);
    has(&m, "drop_conjunct",
        "SELECT a FROM t WHERE CASE WHEN a AND b THEN 1 END AND (c AND d) AND e IN "
        "(SELECT f FROM u WHERE h = 2)",
        false);
    assert_int_equal(count_kind(&m, "drop_conjunct"), 5);
    vat_mutants_release(&m);
}

static void test_sql_order(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT a, b FROM t ORDER BY a, b DESC NULLS LAST", true);
    has(&m, "swap_order", "SELECT a, b FROM t ORDER BY a DESC, b DESC NULLS LAST", false);
    has(&m, "swap_order", "SELECT a, b FROM t ORDER BY a, b ASC NULLS LAST", false);
    assert_int_equal(count_kind(&m, "swap_order"), 2);
    vat_mutants_release(&m);

    /* compared as a multiset, the outer order cannot show */
    m = sql("select a from t order by a asc", false);
    has(&m, "swap_order", "select a from t order by a desc", true);
    vat_mutants_release(&m);

    /* a subquery's order shows only with LIMIT; a window's always */
    m = sql("SELECT x FROM (SELECT a AS x FROM t ORDER BY a), (SELECT b FROM u ORDER BY b LIMIT "
            "1), (SELECT SUM(c) OVER (ORDER BY d) FROM v)",
            false);
    has(&m, "swap_order",
        "SELECT x FROM (SELECT a AS x FROM t ORDER BY a DESC), (SELECT b FROM u ORDER BY b LIMIT "
        "1), (SELECT SUM(c) OVER (ORDER BY d) FROM v)",
        true);
    has(&m, "swap_order",
        "SELECT x FROM (SELECT a AS x FROM t ORDER BY a), (SELECT b FROM u ORDER BY b DESC LIMIT "
        "1), (SELECT SUM(c) OVER (ORDER BY d) FROM v)",
        false);
    has(&m, "swap_order",
        "SELECT x FROM (SELECT a AS x FROM t ORDER BY a), (SELECT b FROM u ORDER BY b LIMIT "
        "1), (SELECT SUM(c) OVER (ORDER BY d DESC) FROM v)",
        false);
    vat_mutants_release(&m);
}

static void test_sql_misc(void **state)
{
    (void)state;
    struct vat_mutants m = sql("SELECT DISTINCT a FROM t LEFT OUTER JOIN u ON u.k = t.k LEFT "
                               "JOIN v ON v.k = t.k WHERE a IS DISTINCT FROM b",
                               true);
    has(&m, "drop_distinct",
        "SELECT a FROM t LEFT OUTER JOIN u ON u.k = t.k LEFT JOIN v ON v.k = t.k WHERE a IS "
        "DISTINCT FROM b",
        false);
    has(&m, "left_to_inner",
        "SELECT DISTINCT a FROM t JOIN u ON u.k = t.k LEFT JOIN v ON v.k = t.k WHERE a IS "
        "DISTINCT FROM b",
        false);
    has(&m, "left_to_inner",
        "SELECT DISTINCT a FROM t LEFT OUTER JOIN u ON u.k = t.k JOIN v ON v.k = t.k WHERE a IS "
        "DISTINCT FROM b",
        false);
    assert_int_equal(count_kind(&m, "drop_distinct"), 1);
    vat_mutants_release(&m);

    m = sql("SELECT COALESCE(SUM(x), 0), IFNULL(a + b, 0), coalesce(t.c, 1, 2), "
            "COALESCE(COUNT(y), 0) FROM t",
            true);
    has(&m, "drop_coalesce",
        "SELECT SUM(x), IFNULL(a + b, 0), coalesce(t.c, 1, 2), COALESCE(COUNT(y), 0) FROM t",
        false);
    has(&m, "drop_coalesce",
        "SELECT COALESCE(SUM(x), 0), (a + b), coalesce(t.c, 1, 2), COALESCE(COUNT(y), 0) FROM t",
        false);
    has(&m, "drop_coalesce",
        "SELECT COALESCE(SUM(x), 0), IFNULL(a + b, 0), t.c, COALESCE(COUNT(y), 0) FROM t", false);
    has(&m, "drop_coalesce",
        "SELECT COALESCE(SUM(x), 0), IFNULL(a + b, 0), coalesce(t.c, 1, 2), COUNT(y) FROM t",
        true);
    vat_mutants_release(&m);
}

static void test_sql_tokenisation(void **state)
{
    (void)state;
    /* keywords inside strings, quoted names and comments are not touched */
    const char *gold = "-- SUM(x) >= 1 AND LEFT JOIN\n"
                       "SELECT 'SUM(a) >= 2', \"COUNT\"(b), [max] /* ORDER BY z */ FROM t";
    struct vat_mutants m = sql(gold, true);
    assert_int_equal(m.n, 0);
    vat_mutants_release(&m);

    /* the two statements of a mutants list never mix */
    m = sql("SELECT a FROM t WHERE a > 1", true);
    size_t first = m.n;
    struct vat_err e = {{0}};
    assert_int_equal(vat_mutate_sql("SELECT a FROM t WHERE a > 2", true, &m, &e), 0);
    assert_true(m.n == 2 * first); /* same shapes, other texts: nothing deduplicated away */
    vat_mutants_release(&m);

    static const char *const bad[] = {"SELECT 'abc", "SELECT (a FROM t", "SELECT a) FROM t",
                                      "SELECT \"a FROM t"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct vat_mutants x = VAT_MUTANTS_INIT;
        assert_int_equal(vat_mutate_sql(bad[i], true, &x, &e), -1);
        assert_int_equal(x.n, 0);
        vat_mutants_release(&x);
    }
}

static void test_sql_realistic_gold(void **state)
{
    (void)state;
    const char *gold = "SELECT c.customer_id, COUNT(o.order_id) AS n\n"
                       "FROM customers AS c\n"
                       "LEFT JOIN orders AS o ON o.customer_id = c.customer_id\n"
                       "    AND date(o.placed_at) >= '2023-04-01'\n"
                       "GROUP BY c.customer_id\n"
                       "ORDER BY n DESC, c.customer_id ASC";
    struct vat_mutants m = sql(gold, true);
    distinct(&m, gold);
    assert_int_equal(count_kind(&m, "swap_aggregate"), 5);
    assert_int_equal(count_kind(&m, "count_star"), 1);
    assert_int_equal(count_kind(&m, "flip_comparison"), 6);
    assert_int_equal(count_kind(&m, "shift_date"), 2);
    assert_int_equal(count_kind(&m, "drop_conjunct"), 2);
    assert_int_equal(count_kind(&m, "swap_order"), 2);
    assert_int_equal(count_kind(&m, "left_to_inner"), 1);
    assert_int_equal(m.n, 19);
    for (size_t i = 0; i < m.n; i++)
        assert_false(m.v[i].equivalent);
    vat_mutants_release(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rx_anchors_boundaries),
        cmocka_unit_test(test_rx_lookarounds),
        cmocka_unit_test(test_rx_quantifiers),
        cmocka_unit_test(test_rx_classes),
        cmocka_unit_test(test_rx_tokenisation),
        cmocka_unit_test(test_rx_errors),
        cmocka_unit_test(test_sql_aggregates),
        cmocka_unit_test(test_sql_comparisons),
        cmocka_unit_test(test_sql_constants),
        cmocka_unit_test(test_sql_conjuncts),
        cmocka_unit_test(test_sql_order),
        cmocka_unit_test(test_sql_misc),
        cmocka_unit_test(test_sql_tokenisation),
        cmocka_unit_test(test_sql_realistic_gold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
