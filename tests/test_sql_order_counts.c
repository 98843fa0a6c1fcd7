/* test_sql_order_counts.c — the sql_order_counts template: 60 draws are
 * admitted on their first draw with the right replays, draws are
 * reproducible byte for byte, the question varies, every fixture holds
 * its corner cases (customers without orders, shared names, window
 * edges, guest and unknown-customer orders, ties, a single buyer), the
 * checker accepts equivalent queries (COUNT of a column, SUM of IS NOT
 * NULL, a correlated subquery, a CTE) and refuses the near misses (the
 * COUNT(*) trap, an inner join, the window in WHERE, no window, a
 * flipped order, grouping by name, counting from the orders table,
 * rows hard-coded from the main fixture), and the held-out cases kill
 * the gold's mutants. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "jsonout.h"
#include "sqlgen.h"
#include "strength.h"
#include "template.h"
#include "testutil.h"
#include "values.h"
#include "vat.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_sql_order_counts;
#define TMPL (&vat_tmpl_sql_order_counts)

#define SEED 20240917u
#define NTASKS 60

/* Tasks 0..NTASKS-1 drawn once for the whole group, each admitted on its
 * first draw. */
static int group_setup(void **state)
{
    *state = vat_tt_drawn_new(TMPL, SEED, NTASKS);
    return 0;
}

static int group_teardown(void **state)
{
    vat_tt_drawn_free(*state);
    return 0;
}

/* A string the question's params must hold. */
static const char *param(const struct vat_task *t, const char *key)
{
    return vat_tt_param_str(t, key);
}


static const char *window_kind(const struct vat_task *t)
{
    const char *s =
        json_string_value(json_object_get(json_object_get(t->params, "window"), "kind"));
    assert_non_null(s);
    return s;
}

static const char *window_str(const struct vat_task *t, const char *key)
{
    return json_string_value(json_object_get(json_object_get(t->params, "window"), key));
}

static bool with_name(const struct vat_task *t)
{
    return json_array_size(json_object_get(t->params, "output_columns")) == 3;
}

/* The window as a condition on alias a's date column, written from the
 * params alone and differently from the gold: text comparisons of the
 * first ten characters. */
static void put_condition(struct vat_buf *b, const struct vat_task *t, const char *a)
{
    const char *kind = window_kind(t), *dc = param(t, "date_column");
    if (strcmp(kind, "year") == 0) {
        long y = (long)json_integer_value(
            json_object_get(json_object_get(t->params, "window"), "year"));
        vat_buf_printf(b, "substr(%s.%s, 1, 4) = '%ld'", a, dc, y);
    } else if (strcmp(kind, "since") == 0) {
        vat_buf_printf(b, "%s.%s >= '%s'", a, dc, window_str(t, "from"));
    } else if (strcmp(kind, "before") == 0) {
        vat_buf_printf(b, "%s.%s < '%s'", a, dc, window_str(t, "before"));
    } else if (strcmp(kind, "range") == 0) {
        vat_buf_printf(b, "substr(%s.%s, 1, 10) BETWEEN '%s' AND '%s'", a, dc,
                       window_str(t, "from"), window_str(t, "through"));
    } else {
        vat_buf_puts(b, "1");
    }
}

enum count_style { STYLE_SUM_NOT_NULL, STYLE_SUBQUERY, STYLE_CTE, STYLE_GROUP_BY_NAME,
                   STYLE_WINDOW_IN_WHERE, STYLE_INNER_JOIN, STYLE_FROM_ORDERS };

static void put_order_by(struct vat_buf *b, const struct vat_task *t, const char *key,
                         const char *cnt, bool flip)
{
    const char *order = param(t, "order");
    const char *asc = flip ? "DESC" : "ASC", *desc = flip ? "ASC" : "DESC";
    if (strcmp(order, "customer id ascending") == 0)
        vat_buf_printf(b, " ORDER BY %s %s", key, asc);
    else if (strcmp(order, "customer id descending") == 0)
        vat_buf_printf(b, " ORDER BY %s %s", key, desc);
    else if (strncmp(order, "count descending", 16) == 0)
        vat_buf_printf(b, " ORDER BY %s %s, %s %s", cnt, desc, key, asc);
    else
        vat_buf_printf(b, " ORDER BY %s %s, %s %s", cnt, asc, key, asc);
}

/* A query in the given style, written from the task's stated params
 * (never from the gold text); flip reverses every ORDER BY direction. */
static char *styled_query(const struct vat_task *t, enum count_style style, bool flip)
{
    const char *ct = param(t, "customers_table"), *k = param(t, "customer_key"),
               *nm = param(t, "name_column"), *ot = param(t, "orders_table"),
               *oid = param(t, "order_id_column"), *fk = param(t, "order_customer_column");
    bool nm_out = with_name(t);
    struct vat_buf b = VAT_BUF_INIT;
    char *key;
    switch (style) {
    case STYLE_CTE:
        vat_buf_printf(&b, "WITH per AS (SELECT x.%s AS who, COUNT(*) AS n FROM %s x WHERE ", fk,
                       ot);
        put_condition(&b, t, "x");
        vat_buf_printf(&b, " GROUP BY x.%s)\nSELECT cu.%s", fk, k);
        if (nm_out)
            vat_buf_printf(&b, ", cu.%s", nm);
        vat_buf_printf(
            &b, ", COALESCE(per.n, 0) AS cnt FROM %s cu LEFT JOIN per ON per.who = cu.%s", ct, k);
        key = vat_xasprintf("cu.%s", k);
        break;
    case STYLE_SUBQUERY:
        vat_buf_printf(&b, "select c.%s", k);
        if (nm_out)
            vat_buf_printf(&b, ", c.%s", nm);
        vat_buf_printf(&b, ", (select count(*) from %s o where o.%s = c.%s and ", ot, fk, k);
        put_condition(&b, t, "o");
        vat_buf_printf(&b, ") as cnt from %s c", ct);
        key = vat_xasprintf("c.%s", k);
        break;
    case STYLE_FROM_ORDERS:
        /* counts what the orders table holds: no zero rows, and rows for
         * guest checkouts and unknown customers */
        vat_buf_printf(&b, "SELECT o.%s", fk);
        if (nm_out)
            vat_buf_printf(&b, ", (SELECT c.%s FROM %s c WHERE c.%s = o.%s)", nm, ct, k, fk);
        vat_buf_printf(&b, ", COUNT(*) AS cnt FROM %s o WHERE ", ot);
        put_condition(&b, t, "o");
        vat_buf_printf(&b, " GROUP BY o.%s", fk);
        key = vat_xasprintf("o.%s", fk);
        break;
    case STYLE_GROUP_BY_NAME:
        vat_buf_printf(&b, "SELECT MIN(c.%s), c.%s, COUNT(o.%s) AS cnt FROM %s c LEFT JOIN %s o "
                           "ON o.%s = c.%s AND ",
                       k, nm, oid, ct, ot, fk, k);
        put_condition(&b, t, "o");
        vat_buf_printf(&b, " GROUP BY c.%s", nm);
        key = vat_xasprintf("MIN(c.%s)", k);
        break;
    default:
        vat_buf_printf(&b, "SELECT c.%s", k);
        if (nm_out)
            vat_buf_printf(&b, ", c.%s", nm);
        if (style == STYLE_SUM_NOT_NULL)
            vat_buf_printf(&b, ", SUM(o.%s IS NOT NULL) AS cnt", oid);
        else
            vat_buf_printf(&b, ", COUNT(o.%s) AS cnt", oid);
        vat_buf_printf(&b, " FROM %s c %s %s o ON o.%s = c.%s", ct,
                       style == STYLE_INNER_JOIN ? "INNER JOIN" : "LEFT OUTER JOIN", ot, fk, k);
        vat_buf_puts(&b, style == STYLE_WINDOW_IN_WHERE ? " WHERE " : " AND ");
        put_condition(&b, t, "o");
        vat_buf_printf(&b, " GROUP BY c.%s", k);
        key = vat_xasprintf("c.%s", k);
        break;
    }
    put_order_by(&b, t, key, "cnt", flip);
    free(key);
    return vat_buf_detach(&b);
}

/* A query that lists the main fixture's gold rows as literals (a VALUES
 * list: a compound SELECT of that many terms is over the sandbox's cap). */
static char *hardcoded_query(const struct vat_task *t)
{
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[0].path, t->gold, strlen(t->gold), &v);
    assert_non_null(rows);
    struct vat_buf b = VAT_BUF_INIT;
    size_t i, k;
    json_t *row, *x;
    json_array_foreach(rows, i, row) {
        vat_buf_puts(&b, i ? "), (" : "VALUES (");
        json_array_foreach(row, k, x) {
            if (k)
                vat_buf_puts(&b, ", ");
            if (json_is_integer(x))
                vat_buf_printf(&b, "%lld", (long long)json_integer_value(x));
            else
                vat_sqlgen_put_literal(&b, json_string_value(x));
        }
    }
    vat_buf_putc(&b, ')');
    json_decref(rows);
    return vat_buf_detach(&b);
}

static void test_admitted_with_replays(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        /* the replays again, from the spec and the files alone */
        struct vat_replay r = {.v = {vat_tt_check(t, t->gold), vat_tt_check(t, t->trap),
                                vat_tt_check(t, t->malformed)}};
        vat_tt_assert_replays(&r);
        /* the trap is the gold with COUNT(*) */
        assert_non_null(strstr(t->trap, "COUNT(*)"));
        assert_null(strstr(t->gold, "COUNT(*)"));
        assert_int_equal(t->n_fixtures, 4);
        assert_string_equal(t->fixture[0].role, "main");
        for (int k = 1; k < t->n_fixtures; k++) {
            char suffix[32];
            snprintf(suffix, sizeof suffix, ".v%d.sqlite", k);
            assert_string_equal(t->fixture[k].role, "variant");
            assert_non_null(strstr(t->fixture[k].path, suffix));
            assert_string_equal(t->fixture[k].format, "sqlite");
        }
        assert_true(t->difficulty >= 1 && t->difficulty <= 5);
    }
}

static void test_spec_params_prompt(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        const json_t *spec = t->spec;
        assert_string_equal(json_string_value(json_object_get(spec, "checker")), "sql");
        assert_true(json_is_true(json_object_get(spec, "ordered")));
        assert_string_equal(json_string_value(json_object_get(spec, "reference_sql")), t->gold);
        assert_int_equal(json_array_size(json_object_get(spec, "fixtures")), t->n_fixtures);
        const json_t *tables = json_object_get(spec, "tables");
        assert_int_equal(json_array_size(tables), 2);
        assert_string_equal(json_string_value(json_array_get(tables, 0)),
                            param(t, "customers_table"));
        assert_string_equal(json_string_value(json_array_get(tables, 1)), param(t, "orders_table"));
        assert_null(strstr(t->gold, "LIMIT"));
        assert_non_null(strstr(t->gold, "LEFT JOIN"));

        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_non_null(strstr(t->prompt, "SQLite"));
        assert_non_null(strstr(t->prompt, "one SQL SELECT statement"));
        assert_non_null(strstr(t->prompt, "CREATE TABLE"));
        assert_non_null(strstr(t->prompt, "listed with 0"));
        size_t k;
        json_t *v;
        json_array_foreach(json_object_get(t->params, "output_columns"), k, v) {
            char *quoted = vat_xasprintf("`%s`", json_string_value(v));
            assert_non_null(strstr(t->prompt, quoted));
            free(quoted);
        }
        static const char *const dates[] = {"from", "through", "before"};
        for (size_t j = 0; j < 3; j++)
            if (window_str(t, dates[j]))
                assert_non_null(strstr(t->prompt, window_str(t, dates[j])));
        for (int f = 1; f < t->n_fixtures; f++)
            assert_null(strstr(t->prompt, t->fixture[f].path));
        /* orders of the main fixture within the configured range (rows
         * counts both tables) */
        json_t *cols = NULL;
        struct vat_err e;
        json_t *orders = vat_sqlgen_read_table(t->root, t->fixture[0].path,
                                               param(t, "orders_table"), &cols, &e);
        assert_non_null(orders);
        assert_true(json_array_size(orders) >= 30 && json_array_size(orders) <= 110);
        assert_true(t->fixture[0].rows > (long)json_array_size(orders));
        assert_int_equal(json_array_size(t->fixture[0].columns), 4 + 5);
        json_decref(orders);
        json_decref(cols);
    }
}

static void test_question_varies(void **state)
{
    struct vat_tt_drawn *d = *state;
    size_t distinct = 0;
    bool seen_kind[5] = {false}, seen_order[4] = {false}, seen_name[2] = {false},
         seen_coded[2] = {false}, seen_stamp[2] = {false};
    static const char *const kinds[] = {"none", "year", "since", "before", "range"};
    static const char *const orders[] = {"customer id ascending", "customer id descending",
                                         "count descending, then customer id ascending",
                                         "count ascending, then customer id ascending"};
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        bool dup = false;
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(d->t[j].gold, t->gold) == 0;
        distinct += !dup;
        for (int k = 0; k < 5; k++)
            seen_kind[k] |= strcmp(window_kind(t), kinds[k]) == 0;
        for (int k = 0; k < 4; k++)
            seen_order[k] |= strcmp(param(t, "order"), orders[k]) == 0;
        seen_name[with_name(t)] = true;
        seen_coded[strcmp(param(t, "customer_key_type"), "text") == 0] = true;
        seen_stamp[strlen(param(t, "date_format")) > 10] = true;
    }
    assert_true(distinct >= 57);
    for (int k = 0; k < 5; k++)
        assert_true(seen_kind[k]);
    for (int k = 0; k < 4; k++)
        assert_true(seen_order[k]);
    assert_true(seen_name[0] && seen_name[1] && seen_coded[0] && seen_coded[1] && seen_stamp[0] &&
                seen_stamp[1]);
}

static void test_equivalent_queries_pass(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        char *semi = vat_xasprintf("%s;", t->gold);
        char *spaced = vat_xasprintf("\n  -- customers and their orders\n%s ;  \n", t->gold);
        char *sum = styled_query(t, STYLE_SUM_NOT_NULL, false);
        char *sub = styled_query(t, STYLE_SUBQUERY, false);
        char *cte = styled_query(t, STYLE_CTE, false);
        const char *answers[] = {semi, spaced, sum, sub, cte};
        for (size_t k = 0; k < sizeof answers / sizeof *answers; k++) {
            struct vat_verdict v = vat_tt_check(t, answers[k]);
            if (!(v.gate_passed && v.score == 1.0))
                fail_msg("%s: equivalent answer %zu failed (%s: %s)\n%s", t->id, k, v.code,
                         v.reason, answers[k]);
        }
        free(semi);
        free(spaced);
        free(sum);
        free(sub);
        free(cte);
    }
}

/* The gold's rows on fixture f. */
static json_t *gold_rows(const struct vat_task *t, int f)
{
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[f].path, t->gold, strlen(t->gold), &v);
    assert_non_null(rows);
    return rows;
}

/* Fails when a near miss is accepted; near misses must pass the gate. */
static void expect_wrong(const struct vat_task *t, const char *answer, const char *what)
{
    struct vat_verdict v = vat_tt_check(t, answer);
    if (!v.gate_passed || v.score != 0.0)
        fail_msg("%s: %s gave gate=%d score=%g (%s: %s)\n%s", t->id, what, v.gate_passed,
                 v.score, v.code, v.reason, answer);
}

static void test_near_misses_fail(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        bool window = strcmp(window_kind(t), "none") != 0;
        expect_wrong(t, t->trap, "COUNT(*) over the LEFT JOIN");
        char *inner = styled_query(t, STYLE_INNER_JOIN, false);
        expect_wrong(t, inner, "inner join");
        char *flipped = styled_query(t, STYLE_SUM_NOT_NULL, true);
        expect_wrong(t, flipped, "order flipped");
        char *from_orders = styled_query(t, STYLE_FROM_ORDERS, false);
        expect_wrong(t, from_orders, "counting from the orders table");
        char *hard = hardcoded_query(t);
        struct vat_verdict hv;
        json_t *on_main =
            vat_sql_run(t->spec, t->root, t->fixture[0].path, hard, strlen(hard), &hv);
        json_t *want = gold_rows(t, 0);
        /* right on the main fixture, wrong once the variants run */
        assert_true(vat_sqlgen_rows_equal(want, on_main, true, 0, 0, NULL, 0));
        json_decref(on_main);
        json_decref(want);
        expect_wrong(t, hard, "hard-coded main rows");
        if (window) {
            char *where = styled_query(t, STYLE_WINDOW_IN_WHERE, false);
            expect_wrong(t, where, "window in WHERE");
            free(where);
            /* the gold without its window condition */
            const char *and = strstr(t->gold, "\n    AND ");
            const char *group = strstr(t->gold, "\nGROUP BY");
            assert_non_null(and);
            assert_non_null(group);
            char *nowin = vat_xasprintf("%.*s%s", (int)(and - t->gold), t->gold, group);
            expect_wrong(t, nowin, "no window");
            free(nowin);
        }
        if (with_name(t)) {
            char *byname = styled_query(t, STYLE_GROUP_BY_NAME, false);
            expect_wrong(t, byname, "grouped by name");
            free(byname);
        }
        /* A timestamp compared with the bare last day misses that day. */
        if (strcmp(window_kind(t), "range") == 0 && strlen(param(t, "date_format")) > 10) {
            struct vat_buf b = VAT_BUF_INIT;
            const char *dc = param(t, "date_column");
            /* the gold's alias of the orders table ("LEFT JOIN t AS o ON"):
             * a part of the question space (docs/scale.md) */
            const char *as = strstr(strstr(t->gold, "LEFT JOIN "), " AS ");
            assert_non_null(as);
            int alen = (int)strcspn(as + 4, " ");
            char *cond = vat_xasprintf("%.*s.%s >= '%s' AND %.*s.%s <= '%s'", alen, as + 4, dc,
                                       window_str(t, "from"), alen, as + 4, dc,
                                       window_str(t, "through"));
            const char *and = strstr(t->gold, "\n    AND ") + 9;
            const char *group = strstr(t->gold, "\nGROUP BY");
            vat_buf_printf(&b, "%.*s%s%s", (int)(and - t->gold), t->gold, cond, group);
            expect_wrong(t, b.data, "bare end date against timestamps");
            vat_buf_release(&b);
            free(cond);
        }
        free(inner);
        free(flipped);
        free(from_orders);
        free(hard);
    }
}

static size_t zero_counts(const json_t *rows)
{
    size_t n = 0, i;
    json_t *row;
    json_array_foreach(rows, i, row) n +=
        json_integer_value(json_array_get(row, json_array_size(row) - 1)) == 0;
    return n;
}

static bool has_shared_name(const struct vat_task *t, int f)
{
    struct vat_err e;
    json_t *cols = NULL;
    json_t *rows = vat_sqlgen_read_table(t->root, t->fixture[f].path, param(t, "customers_table"),
                                         &cols, &e);
    assert_non_null(rows);
    int c = vat_sqlgen_col(cols, param(t, "name_column"));
    assert_true(c >= 0);
    bool shared = false;
    for (size_t a = 0; a < json_array_size(rows) && !shared; a++)
        for (size_t b = a + 1; b < json_array_size(rows) && !shared; b++)
            shared =
                strcmp(json_string_value(json_array_get(json_array_get(rows, a), (size_t)c)),
                       json_string_value(json_array_get(json_array_get(rows, b), (size_t)c))) == 0;
    json_decref(rows);
    json_decref(cols);
    return shared;
}

/* Counts orders of fixture f with a NULL customer, with a customer not in
 * the customers table, and lists their days. */
static void order_facts(const struct vat_task *t, int f, size_t *nnull, size_t *nunknown,
                        json_t *days)
{
    struct vat_err e;
    json_t *ccols = NULL, *ocols = NULL;
    json_t *cust = vat_sqlgen_read_table(t->root, t->fixture[f].path, param(t, "customers_table"),
                                         &ccols, &e);
    json_t *ord = vat_sqlgen_read_table(t->root, t->fixture[f].path, param(t, "orders_table"),
                                        &ocols, &e);
    assert_non_null(cust);
    assert_non_null(ord);
    int ck = vat_sqlgen_col(ccols, param(t, "customer_key"));
    int of = vat_sqlgen_col(ocols, param(t, "order_customer_column"));
    int od = vat_sqlgen_col(ocols, param(t, "date_column"));
    *nnull = *nunknown = 0;
    size_t i;
    json_t *row;
    json_array_foreach(ord, i, row) {
        const json_t *fk = json_array_get(row, (size_t)of);
        char day[11];
        snprintf(day, sizeof day, "%s", json_string_value(json_array_get(row, (size_t)od)));
        json_object_set_new(days, day, json_true());
        if (json_is_null(fk)) {
            (*nnull)++;
            continue;
        }
        bool known = false;
        for (size_t k = 0; k < json_array_size(cust) && !known; k++)
            known = json_equal(json_array_get(json_array_get(cust, k), (size_t)ck), (json_t *)fk);
        *nunknown += !known;
    }
    json_decref(cust);
    json_decref(ord);
    json_decref(ccols);
    json_decref(ocols);
}

/* The days next to every edge of the task's window. */
static size_t edge_days(const struct vat_task *t, char out[4][11])
{
    const char *kind = window_kind(t);
    int32_t lo = INT32_MIN, hi = INT32_MAX, x;
    if (strcmp(kind, "year") == 0) {
        int y =
            (int)json_integer_value(json_object_get(json_object_get(t->params, "window"), "year"));
        lo = vat_date_from_civil(y, 1, 1);
        hi = vat_date_from_civil(y, 12, 31);
    }
    if (window_str(t, "from") && vat_parse_date(window_str(t, "from"), &x) == 0)
        lo = x;
    if (window_str(t, "through") && vat_parse_date(window_str(t, "through"), &x) == 0)
        hi = x;
    if (window_str(t, "before") && vat_parse_date(window_str(t, "before"), &x) == 0)
        hi = x - 1;
    size_t n = 0;
    if (lo != INT32_MIN) {
        vat_fmt_date(lo - 1, out[n++]);
        vat_fmt_date(lo, out[n++]);
    }
    if (hi != INT32_MAX) {
        vat_fmt_date(hi, out[n++]);
        vat_fmt_date(hi + 1, out[n++]);
    }
    return n;
}

static void test_fixture_corners(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        const char *order = param(t, "order");
        for (int f = 0; f < t->n_fixtures; f++)
            assert_true(has_shared_name(t, f));

        /* main: at least two customers without orders arm the trap */
        json_t *g0 = gold_rows(t, 0);
        assert_true(zero_counts(g0) >= 2);
        assert_true(json_array_size(g0) >= 8);

        /* v1 "edges": the smallest and largest ids have no orders; guest
         * and unknown-customer orders; orders on every edge day */
        json_t *g1 = gold_rows(t, 1);
        size_t n1 = json_array_size(g1);
        if (strcmp(order, "customer id ascending") == 0 ||
            strcmp(order, "customer id descending") == 0) {
            assert_int_equal(
                json_integer_value(json_array_get(json_array_get(g1, 0),
                                                  json_array_size(json_array_get(g1, 0)) - 1)),
                0);
            assert_int_equal(
                json_integer_value(json_array_get(json_array_get(g1, n1 - 1),
                                                  json_array_size(json_array_get(g1, 0)) - 1)),
                0);
        }
        size_t nnull, nunknown;
        json_t *days = json_object();
        order_facts(t, 1, &nnull, &nunknown, days);
        assert_true(nnull >= 2 && nunknown >= 2);
        char edges[4][11];
        size_t ne = edge_days(t, edges);
        for (size_t k = 0; k < ne; k++)
            if (!json_object_get(days, edges[k]))
                fail_msg("%s: no order on edge day %s in variant 1", t->id, edges[k]);
        json_decref(days);

        /* v2 "ties": some nonzero count is shared by two customers */
        json_t *g2 = gold_rows(t, 2);
        bool tie = false;
        for (size_t a = 0; a < json_array_size(g2) && !tie; a++)
            for (size_t b = a + 1; b < json_array_size(g2) && !tie; b++) {
                const json_t *ra = json_array_get(g2, a), *rb = json_array_get(g2, b);
                json_int_t ca = json_integer_value(json_array_get(ra, json_array_size(ra) - 1));
                json_int_t cb = json_integer_value(json_array_get(rb, json_array_size(rb) - 1));
                tie = ca > 0 && ca == cb;
            }
        assert_true(tie);

        /* v3 "single": exactly one customer has a nonzero count */
        json_t *g3 = gold_rows(t, 3);
        assert_int_equal(zero_counts(g3) + 1, json_array_size(g3));

        json_decref(g0);
        json_decref(g1);
        json_decref(g2);
        json_decref(g3);
    }
}

static void test_mutants_killed(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_strength all = VAT_STRENGTH_INIT;
    for (int i = 0; i < NTASKS; i++) {
        struct vat_strength s = VAT_STRENGTH_INIT;
        assert_int_equal(vat_strength_task(&d->t[i], &s), 0);
        assert_true(s.mutants >= 8);
        if (vat_strength_share(&s) < 0.9)
            fail_msg("%s: only %ld of %ld mutants killed; first survivor (%s): %s", d->t[i].id,
                     s.killed, s.killed + s.survivors, s.surv.v[0].kind, s.surv.v[0].text);
        vat_strength_add(&all, &s);
        vat_strength_release(&s);
    }
    /* every kind the gold offers shows up, and the corners kill nearly all */
    static const char *const kinds[] = {"swap_aggregate", "count_star", "flip_comparison",
                                        "shift_date", "shift_constant", "drop_conjunct",
                                        "swap_order", "left_to_inner"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        bool seen = false;
        for (size_t j = 0; j < all.nkinds; j++)
            seen |= strcmp(all.kind[j].kind, kinds[k]) == 0 && all.kind[j].mutants > 0;
        if (!seen)
            fail_msg("no %s mutant in 60 tasks", kinds[k]);
    }
    assert_true(vat_strength_share(&all) >= 0.98);
    vat_strength_release(&all);
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *root2 = vat_test_tmpdir("sqlcount2");
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(d->env, &t, root2, i, 6000, 1, &r);
        vat_tt_assert_same_task(&d->t[i], &t);
        vat_task_clear(&t);
    }
    /* Another attempt is another draw. */
    vat_tt_assert_redraw_differs(d->env, root2, 0, &d->t[0]);
    vat_test_rmtree(root2);
    free(root2);
}

static void test_prompt_inlines_within_budget(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(TMPL, SEED);
    json_object_set_new(v->cfg, "rows_min", json_integer(150));
    json_object_set_new(v->cfg, "rows_max", json_integer(200));
    for (uint32_t i = 0; i < 3; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 900, 1, &r);
        assert_non_null(strstr(t.prompt, "Only the leading rows fit here"));
        vat_task_clear(&t);
        vat_tt_draw(v, &t, NULL, i, 1 << 20, 1, &r);
        assert_null(strstr(t.prompt, "Only the leading rows"));
        assert_non_null(strstr(t.prompt, "all the rows"));
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_task *t = &d->t[3];
    struct vat_err e = {{0}};
    assert_int_equal(t->tmpl->confirm(t, &e), 0);
    char *gold = t->gold;
    t->gold = t->trap;
    assert_int_equal(t->tmpl->confirm(t, &e), -1);
    assert_non_null(strstr(e.msg, "disagree"));
    t->gold = gold;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admitted_with_replays),
        cmocka_unit_test(test_spec_params_prompt),
        cmocka_unit_test(test_question_varies),
        cmocka_unit_test(test_equivalent_queries_pass),
        cmocka_unit_test(test_near_misses_fail),
        cmocka_unit_test(test_fixture_corners),
        cmocka_unit_test(test_mutants_killed),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_inlines_within_budget),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
