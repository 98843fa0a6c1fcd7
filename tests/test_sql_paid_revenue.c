/* test_sql_paid_revenue.c — the sql_paid_revenue template: 60 draws are
 * admitted with the right replays, draws are reproducible byte for byte,
 * the question varies, the variants hold their corner cases, and the
 * checker accepts equivalent queries and refuses the near misses (ASC/DESC
 * swapped, COUNT for SUM, no paid filter, SUM without COALESCE, rows
 * hard-coded from the main fixture, the paid filter written <= or >=), and
 * the cases kill every gold mutant src/mutate.h makes. */
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
#include "vat.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_sql_paid_revenue;
#define TMPL (&vat_tmpl_sql_paid_revenue)

#define SEED 20240611u
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


/* Replaces the first occurrence of from in s by to, in a new string. */
static char *replace_once(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    assert_non_null(p);
    return vat_xasprintf("%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
}

/* Replaces the last occurrence of from in s by to, in a new string. */
static char *replace_last(const char *s, const char *from, const char *to)
{
    const char *last = NULL;
    for (const char *p = strstr(s, from); p; p = strstr(p + 1, from))
        last = p;
    assert_non_null(last);
    return vat_xasprintf("%.*s%s%s", (int)(last - s), s, to, last + strlen(from));
}

/* An equivalent query written from the task's stated params alone:
 * substr instead of strftime, a CTE, other aliases, COALESCE per row. */
static char *equivalent_query(const struct vat_task *t, bool coalesce)
{
    const char *d = param(t, "date_column"), *a = param(t, "amount_column");
    const char *period = param(t, "period");
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "WITH paid AS (\n  SELECT ");
    if (strcmp(period, "month") == 0)
        vat_buf_printf(&b, "substr(%s, 1, 7)", d);
    else if (strcmp(period, "quarter") == 0)
        vat_buf_printf(&b, "substr(%s, 1, 4) || '-Q' || ((CAST(substr(%s, 6, 2) AS INTEGER) + 2) / 3)",
                       d, d);
    else
        vat_buf_printf(&b, "substr(%s, 1, 4)", d);
    if (coalesce)
        vat_buf_printf(&b, " AS p, COALESCE(%s, 0) AS amt\n  FROM %s i\n  WHERE i.%s IN (", a,
                       param(t, "table"), param(t, "status_column"));
    else
        vat_buf_printf(&b, " AS p, %s AS amt\n  FROM %s i\n  WHERE i.%s IN (", a,
                       param(t, "table"), param(t, "status_column"));
    size_t k;
    json_t *s;
    json_array_foreach(json_object_get(t->params, "paid_statuses"), k, s) {
        if (k)
            vat_buf_puts(&b, ", ");
        vat_sqlgen_put_literal(&b, json_string_value(s));
    }
    vat_buf_puts(&b, ")\n)\nSELECT p AS the_period, ");
    bool have_cents = strcmp(param(t, "amount_unit"), "cents") == 0;
    bool want_cents = strcmp(param(t, "revenue_unit"), "cents") == 0;
    if (!have_cents && !want_cents)
        vat_buf_puts(&b, "round(SUM(amt), 2)");
    else if (!have_cents)
        vat_buf_puts(&b, "round(SUM(amt) * 100)");
    else if (!want_cents)
        vat_buf_puts(&b, "round(SUM(amt) / 100.0, 2)");
    else
        vat_buf_puts(&b, "SUM(amt)");
    vat_buf_printf(&b, " AS money\nFROM paid GROUP BY p ORDER BY the_period %s",
                   strcmp(param(t, "order"), "descending") == 0 ? "DESC" : "ASC");
    return vat_buf_detach(&b);
}

/* A query that lists the main fixture's gold rows as literals. */
static char *hardcoded_query(const struct vat_task *t, json_t **main_rows)
{
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[0].path, t->gold, strlen(t->gold), &v);
    assert_non_null(rows);
    struct vat_buf b = VAT_BUF_INIT;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char num[32];
        if (i)
            vat_buf_puts(&b, " UNION ALL ");
        vat_buf_puts(&b, "SELECT ");
        vat_sqlgen_put_literal(&b, json_string_value(json_array_get(row, 0)));
        const json_t *x = json_array_get(row, 1);
        if (json_is_integer(x))
            vat_buf_printf(&b, ", %lld", (long long)json_integer_value(x));
        else
            vat_buf_printf(&b, ", %s", vat_fmt_real(json_number_value(x), num));
    }
    *main_rows = rows;
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
        assert_string_equal(json_string_value(json_array_get(json_object_get(spec, "fixtures"), 0)),
                            t->fixture[0].path);
        assert_string_equal(json_string_value(json_array_get(json_object_get(spec, "tables"), 0)),
                            param(t, "table"));
        assert_null(strstr(t->gold, "LIMIT"));

        /* The prompt names the file, the dialect, the table, the filter
         * values, the output columns and the order it states in params. */
        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_non_null(strstr(t->prompt, "SQLite"));
        assert_non_null(strstr(t->prompt, "one SQL SELECT statement"));
        assert_non_null(strstr(t->prompt, "CREATE TABLE"));
        assert_non_null(strstr(t->prompt, param(t, "table")));
        size_t k;
        json_t *v;
        json_array_foreach(json_object_get(t->params, "paid_statuses"), k, v) {
            char *quoted = vat_xasprintf("'%s'", json_string_value(v));
            assert_non_null(strstr(t->prompt, quoted));
            free(quoted);
        }
        json_array_foreach(json_object_get(t->params, "output_columns"), k, v) {
            char *quoted = vat_xasprintf("`%s`", json_string_value(v));
            assert_non_null(strstr(t->prompt, quoted));
            free(quoted);
        }
        assert_non_null(strstr(t->prompt, param(t, "order")));
        /* The variants are held out: the prompt never names them. */
        for (int f = 1; f < t->n_fixtures; f++)
            assert_null(strstr(t->prompt, t->fixture[f].path));
        assert_true(t->fixture[0].rows >= 24 && t->fixture[0].rows <= 90);
        size_t ncol = json_array_size(t->fixture[0].columns);
        assert_true(ncol == 5 || ncol == 6);
        char *first = vat_xasprintf("%s.", param(t, "table"));
        assert_int_equal(strncmp(json_string_value(json_array_get(t->fixture[0].columns, 0)), first,
                                 strlen(first)),
                         0);
        free(first);
    }
}

static void test_question_varies(void **state)
{
    struct vat_tt_drawn *d = *state;
    size_t distinct = 0;
    bool seen_period[3] = {false, false, false}, seen_desc = false, seen_asc = false;
    bool seen_unit_change = false;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        bool dup = false;
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(d->t[j].gold, t->gold) == 0;
        distinct += !dup;
        const char *p = param(t, "period");
        seen_period[strcmp(p, "month") == 0 ? 0 : strcmp(p, "quarter") == 0 ? 1 : 2] = true;
        if (strcmp(param(t, "order"), "descending") == 0)
            seen_desc = true;
        else
            seen_asc = true;
        if (strcmp(param(t, "amount_unit"), param(t, "revenue_unit")) != 0)
            seen_unit_change = true;
    }
    assert_true(distinct >= 40);
    assert_true(seen_period[0] && seen_period[1] && seen_period[2]);
    assert_true(seen_desc && seen_asc && seen_unit_change);
}

static void test_harmless_variants_pass(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        char *semi = vat_xasprintf("%s;", t->gold);
        char *spaced = vat_xasprintf("\n  -- paid revenue\n%s ;  \n", t->gold);
        char *alt = equivalent_query(t, true);
        char *lower = replace_once(t->gold, "SELECT", "select");
        const char *answers[] = {semi, spaced, alt, lower};
        for (size_t k = 0; k < sizeof answers / sizeof *answers; k++) {
            struct vat_verdict v = vat_tt_check(t, answers[k]);
            if (!(v.gate_passed && v.score == 1.0))
                fail_msg("%s: harmless variant %zu failed (%s: %s)\n%s", t->id, k, v.code,
                         v.reason, answers[k]);
        }
        free(semi);
        free(spaced);
        free(alt);
        free(lower);
    }
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
        bool desc = strcmp(param(t, "order"), "descending") == 0;
        char *flipped = replace_last(t->gold, desc ? " DESC" : " ASC", desc ? " ASC" : " DESC");
        expect_wrong(t, flipped, "order flipped");

        /* COUNT in place of the revenue expression: the second select-list
         * item, up to its last " AS " before FROM. */
        const char *start = strstr(t->gold, ",\n       ") + 9;
        const char *from = strstr(start, "\nFROM");
        const char *end = NULL;
        for (const char *p = strstr(start, " AS "); p && p < from; p = strstr(p + 1, " AS "))
            end = p;
        assert_non_null(end);
        char *expr = vat_xstrndup(start, (size_t)(end - start));
        char *counted = replace_once(t->gold, expr, "COUNT(*)");
        expect_wrong(t, counted, "COUNT for SUM");

        expect_wrong(t, t->trap, "no paid filter");
        assert_null(strstr(t->trap, "WHERE"));

        /* SUM without COALESCE gives NULL for a period whose paid invoices
         * all lack an amount; the "gaps" variant always holds one. */
        char *nullsum = equivalent_query(t, false);
        expect_wrong(t, nullsum, "SUM without COALESCE");

        json_t *main_rows = NULL;
        char *hard = hardcoded_query(t, &main_rows);
        struct vat_verdict v;
        json_t *on_main = vat_sql_run(t->spec, t->root, t->fixture[0].path, hard, strlen(hard), &v);
        assert_non_null(on_main);
        /* Right on the main fixture, wrong once the variants are run. */
        assert_true(vat_sqlgen_rows_equal(main_rows, on_main, true, 0, 1e-6, NULL, 0));
        expect_wrong(t, hard, "hard-coded main rows");
        json_decref(on_main);
        json_decref(main_rows);

        free(hard);
        free(nullsum);
        free(expr);
        free(counted);
        free(flipped);
    }
}

/* Period text to a running index, so gaps between periods can be seen. */
static long period_index(const char *period, const char *key)
{
    int y = atoi(key);
    if (strcmp(period, "month") == 0)
        return y * 12L + atoi(key + 5) - 1;
    if (strcmp(period, "quarter") == 0)
        return y * 4L + atoi(key + 6) - 1;
    return y;
}

static void test_variant_corners(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        struct vat_verdict v;
        struct vat_err e;
        const char *period = param(t, "period");

        /* Main: the trap is armed by non-paid invoices with amounts. */
        json_t *g0 = vat_sql_run(t->spec, t->root, t->fixture[0].path, t->gold, strlen(t->gold), &v);
        json_t *t0 = vat_sql_run(t->spec, t->root, t->fixture[0].path, t->trap, strlen(t->trap), &v);
        assert_true(json_array_size(g0) >= 3);
        assert_false(vat_sqlgen_rows_equal(g0, t0, true, 0, 1e-6, NULL, 0));

        /* v1 "gaps": a zero-revenue period (paid, NULL amounts), a period
         * with only non-paid invoices (in the trap's rows, not gold's) and
         * an empty period (a hole in the trap's run of periods). */
        const char *v1 = t->fixture[1].path;
        json_t *g1 = vat_sql_run(t->spec, t->root, v1, t->gold, strlen(t->gold), &v);
        json_t *t1 = vat_sql_run(t->spec, t->root, v1, t->trap, strlen(t->trap), &v);
        assert_non_null(g1);
        assert_non_null(t1);
        bool zero = false;
        size_t k;
        json_t *row;
        json_array_foreach(g1, k, row) zero |= json_number_value(json_array_get(row, 1)) == 0.0;
        assert_true(zero);
        assert_true(json_array_size(t1) == json_array_size(g1) + 1);
        long lo = 1L << 40, hi = -(1L << 40);
        json_array_foreach(t1, k, row) {
            long p = period_index(period, json_string_value(json_array_get(row, 0)));
            lo = p < lo ? p : lo;
            hi = p > hi ? p : hi;
        }
        assert_true(hi - lo + 1 > (long)json_array_size(t1));

        /* v3 "single": one invoice, one row. */
        json_t *rows3 = vat_sqlgen_read_table(t->root, t->fixture[3].path, param(t, "table"), NULL, &e);
        assert_non_null(rows3);
        assert_int_equal(json_array_size(rows3), 1);
        assert_int_equal(t->fixture[3].rows, 1);

        json_decref(rows3);
        json_decref(g0);
        json_decref(t0);
        json_decref(g1);
        json_decref(t1);
    }
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *root2 = vat_test_tmpdir("sqlrev2");
    for (uint32_t i = 0; i < 8; i++) {
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
    for (uint32_t i = 0; i < 4; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 800, 1, &r);
        assert_true(t.fixture[0].rows >= 150);
        assert_non_null(strstr(t.prompt, "Only the leading rows fit here"));
        char *note = vat_xasprintf("of %ld rows", t.fixture[0].rows);
        assert_non_null(strstr(t.prompt, note));
        free(note);
        /* Inlined rows stay within the budget: count the row lines. */
        size_t bytes = 0;
        for (const char *p = strstr(t.prompt, "VALUES\n"); p && (p = strstr(p, "\n  (")); p++) {
            const char *eol = strchr(p + 1, '\n');
            bytes += (size_t)(eol - p);
        }
        assert_true(bytes > 0 && bytes <= 800);
        vat_task_clear(&t);

        vat_tt_draw(v, &t, NULL, i, 1 << 20, 1, &r);
        assert_null(strstr(t.prompt, "Only the leading rows"));
        note = vat_xasprintf("all %ld rows", t.fixture[0].rows);
        assert_non_null(strstr(t.prompt, note));
        free(note);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_task *t = &d->t[5];
    struct vat_err e = {{0}};
    assert_int_equal(t->tmpl->confirm(t, &e), 0);
    /* Swap the gold for the trap: the row reads must disagree. */
    char *gold = t->gold;
    t->gold = t->trap;
    assert_int_equal(t->tmpl->confirm(t, &e), -1);
    assert_non_null(strstr(e.msg, "disagree"));
    t->gold = gold;
}

/* With one paid value the filter is "= 'paid'"; written as <= or >= it
 * takes the non-paid statuses sorting on that side, and the main fixture
 * holds invoices with amounts of a non-paid status on either side, so
 * both are caught (also when only the prompt's stated status is read). */
static void test_paid_filter_sides(void **state)
{
    struct vat_tt_drawn *d = *state;
    int single = 0;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        json_t *paid = json_object_get(t->params, "paid_statuses");
        if (json_array_size(paid) != 1)
            continue;
        single++;
        const char *pv = json_string_value(json_array_get(paid, 0));
        char *eq = vat_xasprintf("%s = '", param(t, "status_column"));
        for (int side = 0; side < 2; side++) {
            char *to = vat_xasprintf("%s %s '", param(t, "status_column"), side ? ">=" : "<=");
            char *loose = replace_once(t->gold, eq, to);
            struct vat_verdict v = vat_tt_check(t, loose);
            if (!v.gate_passed || v.score >= 1.0)
                fail_msg("%s: filter %s '%s' not caught (score %g)", t->id, side ? ">=" : "<=",
                         pv, v.score);
            free(loose);
            free(to);
        }
        free(eq);
        /* and the main fixture alone shows both sides */
        char *below = vat_xasprintf("SELECT COUNT(*) FROM %s WHERE %s < '%s' AND %s IS NOT NULL",
                                    param(t, "table"), param(t, "status_column"), pv,
                                    param(t, "amount_column"));
        char *above = vat_xasprintf("SELECT COUNT(*) FROM %s WHERE %s > '%s' AND %s IS NOT NULL",
                                    param(t, "table"), param(t, "status_column"), pv,
                                    param(t, "amount_column"));
        struct vat_verdict v;
        json_t *rb = vat_sql_run(t->spec, t->root, t->fixture[0].path, below, strlen(below), &v);
        json_t *ra = vat_sql_run(t->spec, t->root, t->fixture[0].path, above, strlen(above), &v);
        assert_non_null(rb);
        assert_non_null(ra);
        assert_true(json_integer_value(json_array_get(json_array_get(rb, 0), 0)) > 0);
        assert_true(json_integer_value(json_array_get(json_array_get(ra, 0), 0)) > 0);
        json_decref(rb);
        json_decref(ra);
        free(below);
        free(above);
    }
    assert_true(single >= 10);
}

/* The cases tell every informative gold mutant (mutate.h) from gold: no
 * mutant survives in any of the drawn tasks. */
static void test_every_gold_mutant_killed(void **state)
{
    struct vat_tt_drawn *d = *state;
    long killed = 0;
    for (int i = 0; i < NTASKS; i++) {
        const struct vat_task *t = &d->t[i];
        struct vat_strength st = VAT_STRENGTH_INIT;
        if (vat_strength_task(t, &st) != 0)
            fail_msg("%s: %s", t->id, st.error);
        if (st.survivors != 0)
            fail_msg("%s: %s mutant survives:\n%s", t->id, st.surv.v[0].kind,
                     st.surv.v[0].text);
        killed += st.killed;
        vat_strength_release(&st);
    }
    assert_true(killed >= 5 * NTASKS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admitted_with_replays),
        cmocka_unit_test(test_spec_params_prompt),
        cmocka_unit_test(test_question_varies),
        cmocka_unit_test(test_harmless_variants_pass),
        cmocka_unit_test(test_near_misses_fail),
        cmocka_unit_test(test_variant_corners),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_inlines_within_budget),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_paid_filter_sides),
        cmocka_unit_test(test_every_gold_mutant_killed),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
