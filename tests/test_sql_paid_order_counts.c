/* test_sql_paid_order_counts.c — what is particular to the compound SQL
 * template sql_paid_order_counts: 24 tasks admitted on their first draw,
 * each arming its four traps (where_filter, count_star, status, window),
 * every trap's query scored 0 behind a passed gate and named in the task;
 * equivalent gold queries (conditions in a subquery, SUM over CASE, BETWEEN)
 * pass; gold mutants are killed at least 90% per task and 98% overall; the
 * same seed gives the same bytes; confirm refuses a wrong gold.  Both
 * prompt styles are checked by tests/test_prompt.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "strength.h"
#include "template.h"
#include "testutil.h"

#define SEED 90411u
#define NTASKS 24

static const struct vat_template *tmpl(void)
{
    return vat_template_find("sql_paid_order_counts");
}

static int group_setup(void **state)
{
    *state = vat_tt_drawn_new(tmpl(), SEED, NTASKS);
    return 0;
}

static int group_teardown(void **state)
{
    vat_tt_drawn_free(*state);
    return 0;
}

static void test_four_traps_armed(void **state)
{
    struct vat_tt_drawn *d = *state;
    static const char *const names[] = {"where_filter", "count_star", "status", "window"};
    for (uint32_t i = 0; i < d->n; i++) {
        struct vat_task *t = &d->t[i];
        assert_int_equal(t->n_traps, 4);
        for (int k = 0; k < 4; k++) {
            assert_string_equal(t->traps[k].name, names[k]);
            assert_non_null(t->traps[k].text);
            struct vat_verdict v = vat_tt_check(t, t->traps[k].answer);
            if (!v.gate_passed || v.score != 0.0)
                fail_msg("%s: trap %s scored %g (%s)", t->id, names[k], v.score, v.reason);
        }
        struct vat_verdict g = vat_tt_check(t, t->gold);
        assert_string_equal(g.code, "ok");
        /* gold keeps the conditions in the ON clause, counts the key */
        assert_non_null(strstr(t->gold, "LEFT JOIN"));
        assert_null(strstr(t->gold, "WHERE"));
        assert_null(strstr(t->gold, "COUNT(*)"));
        assert_non_null(strstr(t->traps[0].answer, "WHERE"));
        assert_non_null(strstr(t->traps[1].answer, "COUNT(*)"));
        assert_null(strstr(t->traps[2].answer, "'paid'"));
        assert_null(strstr(t->traps[3].answer, "date("));
        /* the level asked for: default params ask for none, level 1 */
        assert_int_equal(t->difficulty, 1);
    }
}

/* Equivalent formulations of gold score 1. */
static void test_equivalent_queries_pass(void **state)
{
    struct vat_tt_drawn *d = *state;
    for (uint32_t i = 0; i < d->n; i++) {
        struct vat_task *t = &d->t[i];
        const char *key = vat_tt_param_str(t, "customer_key");
        const char *ct = vat_tt_param_str(t, "customers_table");
        const char *ot = vat_tt_param_str(t, "orders_table");
        const char *fk = vat_tt_param_str(t, "order_customer_column");
        const char *dc = vat_tt_param_str(t, "date_column");
        const char *sc = vat_tt_param_str(t, "status_column");
        const json_t *w = json_object_get(t->params, "window");
        const char *from = json_string_value(json_object_get(w, "from"));
        const char *to = json_string_value(json_object_get(w, "through"));
        const json_t *oc = json_object_get(t->params, "output_columns");
        size_t ncol = json_array_size(oc);
        const char *cnt = json_string_value(json_array_get(oc, ncol - 1));
        const char *name = ncol == 3 ? json_string_value(json_array_get(oc, 1)) : NULL;
        const char *order = vat_tt_param_str(t, "order");
        char ob[160];
        if (strncmp(order, "customer id ascending", 21) == 0)
            snprintf(ob, sizeof ob, "%s ASC", key);
        else if (strncmp(order, "customer id descending", 22) == 0)
            snprintf(ob, sizeof ob, "%s DESC", key);
        else if (strncmp(order, "count descending", 16) == 0)
            snprintf(ob, sizeof ob, "%s DESC, %s", cnt, key);
        else
            snprintf(ob, sizeof ob, "%s ASC, %s", cnt, key);
        char *q = vat_xasprintf(
            "SELECT c.%s%s%s, COALESCE(p.n, 0) AS %s FROM %s c LEFT JOIN (SELECT %s AS k, "
            "SUM(CASE WHEN %s = 'paid' AND substr(%s, 1, 10) BETWEEN '%s' AND '%s' THEN 1 "
            "ELSE 0 END) AS n FROM %s GROUP BY %s) p ON p.k = c.%s ORDER BY %s;",
            key, name ? ", c." : "", name ? name : "", cnt, ct, fk, sc, dc, from, to, ot, fk, key,
            ob);
        struct vat_verdict v = vat_tt_check(t, q);
        if (strcmp(v.code, "ok") != 0)
            fail_msg("%s: equivalent query scored %s (%s):\n%s", t->id, v.code, v.reason, q);
        free(q);
    }
}

static void test_mutants_killed(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_strength all = VAT_STRENGTH_INIT;
    for (uint32_t i = 0; i < d->n; i++) {
        struct vat_strength s = VAT_STRENGTH_INIT;
        assert_int_equal(vat_strength_task(&d->t[i], &s), 0);
        if (vat_strength_share(&s) < 0.9)
            fail_msg("%s: only %.0f%% of mutants killed", d->t[i].id,
                     100 * vat_strength_share(&s));
        vat_strength_add(&all, &s);
        vat_strength_release(&s);
    }
    print_message("  %ld of %ld mutants killed\n", all.killed, all.killed + all.survivors);
    assert_true(vat_strength_share(&all) >= 0.98);
    vat_strength_release(&all);
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *other = vat_test_tmpdir("spoc-same");
    for (uint32_t i = 0; i < 3; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(d->env, &t, other, i, 6000, 1, &r);
        vat_tt_assert_same_task(&d->t[i], &t);
        for (int k = 0; k < t.n_traps; k++)
            assert_string_equal(t.traps[k].answer, d->t[i].traps[k].answer);
        vat_task_clear(&t);
    }
    vat_test_rmtree(other);
    free(other);
}

/* confirm derives the rows from plain reads: a gold without the status
 * filter disagrees with it. */
/* The parts of the question the gold spells (docs/scale.md), as one
 * string: names, columns, count alias and the window's first day. */
static char *question_parts(const struct vat_task *t)
{
    const json_t *p = t->params;
    assert_non_null(p);
    const json_t *cols = json_object_get(p, "output_columns");
    char *s = vat_xasprintf(
        "%s|%s|%s|%s|%s|%s|%s|%s", json_string_value(json_object_get(p, "customers_table")),
        json_string_value(json_object_get(p, "customer_key")),
        json_string_value(json_object_get(p, "orders_table")),
        json_string_value(json_object_get(p, "order_id_column")),
        json_string_value(json_object_get(p, "date_column")),
        json_string_value(json_object_get(p, "status_column")),
        json_string_value(json_array_get(cols, json_array_size(cols) - 1)),
        json_string_value(json_object_get(json_object_get(p, "window"), "from")));
    return s;
}

/* Task i asks question i of the template's question space: the parts the
 * gold spells differ between tasks, each part appears in the gold as the
 * question names it, and a redraw (attempt 1, new data) asks the same
 * question, so no task's gold depends on another task or on the draw. */
static void test_question_from_index(void **state)
{
    struct vat_tt_drawn *d = *state;
    char *parts[NTASKS];
    for (uint32_t i = 0; i < d->n; i++) {
        struct vat_task *t = &d->t[i];
        parts[i] = question_parts(t);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(parts[i], parts[j]) == 0)
                fail_msg("%s and %s ask the same question %s", d->t[j].id, t->id, parts[i]);
        char *from = vat_xasprintf("'%s'", strrchr(parts[i], '|') + 1);
        assert_non_null(strstr(t->gold, from));
        free(from);
        const char *ot = vat_tt_param_str(t, "orders_table");
        char *join = vat_xasprintf("LEFT JOIN %s AS o ON o.%s = c.%s", ot,
                                   vat_tt_param_str(t, "order_customer_column"),
                                   vat_tt_param_str(t, "customer_key"));
        assert_non_null(strstr(t->gold, join));
        free(join);
        char *st = vat_xasprintf("o.%s = 'paid'", vat_tt_param_str(t, "status_column"));
        assert_non_null(strstr(t->gold, st));
        free(st);
    }
    for (uint32_t i = 0; i < 3; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        struct vat_draw_opts o = {
            .master_seed = d->env->seed, .cfg = d->env->cfg, .inline_max_bytes = 6000};
        vat_task_init(&t, d->env->tmpl, i, d->env->dir);
        assert_int_equal(vat_task_draw(&t, 1, &o, &r, &e), 0);
        assert_string_not_equal(t.fixture[0].sha256, d->t[i].fixture[0].sha256);
        char *again = question_parts(&t);
        assert_string_equal(again, parts[i]);
        free(again);
        vat_task_clear(&t);
    }
    for (uint32_t i = 0; i < d->n; i++)
        free(parts[i]);
}

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_drawn *d = *state;
    struct vat_task *t = &d->t[0];
    char *saved = t->gold;
    t->gold = vat_xstrdup(t->traps[2].answer);
    struct vat_err e = {{0}};
    assert_int_not_equal(t->tmpl->confirm(t, &e), 0);
    free(t->gold);
    t->gold = saved;
    assert_int_equal(t->tmpl->confirm(t, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_traps_armed),
        cmocka_unit_test(test_equivalent_queries_pass),
        cmocka_unit_test(test_mutants_killed),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_question_from_index),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
