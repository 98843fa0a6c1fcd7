/* test_strength.c — checker strength (src/strength.c and `vat strength`)
 * on small synthetic regex and SQL tasks whose mutants and their fates
 * are worked out by hand: which are killed, which survive, which fail the
 * gate (invalid) and which are equivalent; how held-out cases raise the
 * share; a gold that does not score 1; and the corpus report and command
 * over a hand-written corpus (per-template totals, JSON, exit codes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "jsonout.h"
#include "strength.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

static const struct vat_template fake_regex = {
    .version = VAT_TEMPLATE_V1, .name = "fake_regex", .family = "regex",
    .answer_kind = "regex", .check = vat_check_task,
};
static const struct vat_template fake_sql = {
    .version = VAT_TEMPLATE_V1, .name = "fake_sql", .family = "sql",
    .answer_kind = "sql", .check = vat_check_task,
};

static json_t *regex_spec(const char *const *texts, const char *const *expected_json, size_t n)
{
    json_t *cases = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "text", json_string(texts[i]));
        json_object_set_new(c, "expected", json_loads(expected_json[i], 0, NULL));
        json_object_set_new(c, "heldout", json_boolean(i > 0));
        json_array_append_new(cases, c);
    }
    json_t *spec = json_object();
    json_object_set_new(spec, "checker", json_string("regex"));
    json_object_set_new(spec, "dialect", json_string("python-re"));
    json_object_set_new(spec, "cases", cases);
    return spec;
}

static void task_for(struct vat_task *t, const struct vat_template *tm, const char *root,
                     json_t *spec, const char *gold)
{
    vat_task_init(t, tm, 0, root);
    snprintf(t->id, sizeof t->id, "%s-00000", tm->name);
    t->spec = spec;
    t->gold = vat_xstrdup(gold);
}

static const struct vat_strength_kind *kind_of(const struct vat_strength *s, const char *kind)
{
    for (size_t i = 0; i < s->nkinds; i++)
        if (strcmp(s->kind[i].kind, kind) == 0)
            return &s->kind[i];
    fail_msg("no kind '%s'", kind);
    return NULL;
}

/* ---- regex ------------------------------------------------------------------ */

#define ORDER_IDS_GOLD "\\bORD-\\d{6}\\b"

/* A regex task of gold ORDER_IDS_GOLD over the first ncases of three cases. */
static void order_ids_task(struct vat_task *t, size_t ncases)
{
    const char *texts[] = {"order ORD-123456 shipped", "XORD-123456 and ORD-1234567",
                           "ref ORD-12AB56 pending"};
    const char *expected[] = {"[\"ORD-123456\"]", "[]", "[]"};
    task_for(t, &fake_regex, "/nonexistent", regex_spec(texts, expected, ncases),
             ORDER_IDS_GOLD);
}

/* Gold \bORD-\d{6}\b has six mutants: both boundaries dropped, \d{5,7},
 * \d{6,}, \w{6} and .{6}.  Glued and overlong ids kill the first four;
 * only an id with letters in its digits kills the class replacements. */
static void test_regex_share_known(void **state)
{
    (void)state;
    struct vat_task t;
    order_ids_task(&t, 2);
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), 0);
    assert_int_equal(s.mutants, 6);
    assert_int_equal(s.equivalent, 0);
    assert_int_equal(s.invalid, 0);
    assert_int_equal(s.killed, 4);
    assert_int_equal(s.survivors, 2);
    assert_true(vat_strength_share(&s) > 0.666 && vat_strength_share(&s) < 0.667);
    assert_int_equal(kind_of(&s, "drop_boundary")->killed, 2);
    assert_int_equal(kind_of(&s, "widen_quantifier")->killed, 2);
    assert_int_equal(kind_of(&s, "class_to_word")->survivors, 1);
    assert_int_equal(kind_of(&s, "class_to_any")->survivors, 1);
    assert_int_equal(s.surv.n, 2);
    assert_string_equal(s.surv.v[0].text, "\\bORD-\\w{6}\\b");
    assert_string_equal(s.surv.v[1].text, "\\bORD-.{6}\\b");
    vat_strength_release(&s);
    vat_task_clear(&t);

    /* the third case kills the rest */
    order_ids_task(&t, 3);
    struct vat_strength s2 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s2), 0);
    assert_int_equal(s2.killed, 6);
    assert_int_equal(s2.survivors, 0);
    assert_true(vat_strength_share(&s2) == 1.0);
    assert_int_equal(s2.surv.n, 0);
    vat_strength_release(&s2);
    vat_task_clear(&t);
}

/* Gold (?<=\d{2})x: widening the repeat inside the lookbehind makes it
 * variable-width, which Python refuses: those mutants fail the gate and
 * do not count.  [0-9] -> \d is equivalent and never scored. */
static void test_regex_invalid_and_equivalent(void **state)
{
    (void)state;
    const char *texts[] = {"12x 1x ax"};
    const char *expected[] = {"[\"x\"]"};
    struct vat_task t;
    task_for(&t, &fake_regex, "/nonexistent", regex_spec(texts, expected, 1), "(?<=[0-9]{2})x");
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), 0);
    /* drop_lookaround (killed: three x), {1,3} and {2,} (invalid),
     * \d (equivalent), \w (survives: " 1" and " a" are not two word
     * characters), . (killed: " 1x") */
    assert_int_equal(s.mutants, 6);
    assert_int_equal(s.invalid, 2);
    assert_int_equal(s.equivalent, 1);
    assert_int_equal(s.killed, 2);
    assert_int_equal(s.survivors, 1);
    assert_int_equal(kind_of(&s, "widen_quantifier")->invalid, 2);
    assert_int_equal(kind_of(&s, "class_to_digit")->equivalent, 1);
    assert_string_equal(s.surv.v[0].kind, "class_to_word");
    vat_strength_release(&s);
    vat_task_clear(&t);
}

/* ---- SQL -------------------------------------------------------------------- */

static void write_db(const char *root, const char *rel, const char *rows_sql)
{
    char *path = vat_path_join(root, rel);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *sql = vat_xasprintf("CREATE TABLE t (k TEXT, v INTEGER); %s", rows_sql);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    free(sql);
    sqlite3_close(db);
    free(path);
}

static json_t *sql_spec(const char *gold, bool ordered, size_t nfix)
{
    static const char *const rels[] = {"main.sqlite", "v1.sqlite"};
    json_t *spec = json_object();
    json_object_set_new(spec, "checker", json_string("sql"));
    json_object_set_new(spec, "dialect", json_string("sqlite"));
    json_t *fx = json_array();
    for (size_t i = 0; i < nfix; i++)
        json_array_append_new(fx, json_string(rels[i]));
    json_object_set_new(spec, "fixtures", fx);
    json_t *tables = json_array();
    json_array_append_new(tables, json_string("t"));
    json_object_set_new(spec, "tables", tables);
    json_object_set_new(spec, "ordered", json_boolean(ordered));
    json_object_set_new(spec, "reference_sql", json_string(gold));
    return spec;
}

struct sqlfix {
    char *root;
};

static int sql_setup(void **state)
{
    struct sqlfix *f = calloc(1, sizeof *f);
    f->root = vat_test_tmpdir("strength");
    write_db(f->root, "main.sqlite",
             "INSERT INTO t VALUES ('a', 10), ('a', 20), ('b', 5), ('b', 30), ('c', 12);");
    write_db(f->root, "v1.sqlite", "INSERT INTO t VALUES ('d', 9), ('d', 40), ('e', 11);");
    *state = f;
    return 0;
}

static int sql_teardown(void **state)
{
    struct sqlfix *f = *state;
    vat_test_rmtree(f->root);
    free(f->root);
    free(f);
    return 0;
}

#define SQL_GOLD "SELECT k, SUM(v) AS s FROM t WHERE v >= 10 GROUP BY k ORDER BY k"

/* Twelve mutants: five aggregate swaps, three comparison flips, 10 -> 9
 * and 11, the WHERE dropped, ORDER BY k DESC.  On the main fixture TOTAL
 * (the same sums, as reals) and >= 9 (no row holds 9) survive; the
 * variant's row at 9 kills the second. */
static void test_sql_share_known(void **state)
{
    struct sqlfix *f = *state;
    struct vat_task t;
    task_for(&t, &fake_sql, f->root, sql_spec(SQL_GOLD, true, 1), SQL_GOLD);
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), 0);
    assert_int_equal(s.mutants, 12);
    assert_int_equal(s.equivalent, 0);
    assert_int_equal(s.invalid, 0);
    assert_int_equal(s.killed, 10);
    assert_int_equal(s.survivors, 2);
    assert_int_equal(kind_of(&s, "swap_aggregate")->survivors, 1);
    assert_int_equal(kind_of(&s, "shift_constant")->survivors, 1);
    assert_int_equal(kind_of(&s, "flip_comparison")->killed, 3);
    assert_int_equal(kind_of(&s, "drop_conjunct")->killed, 1);
    assert_int_equal(kind_of(&s, "swap_order")->killed, 1);
    assert_string_equal(s.surv.v[0].text,
                        "SELECT k, TOTAL(v) AS s FROM t WHERE v >= 10 GROUP BY k ORDER BY k");
    assert_string_equal(s.surv.v[1].text,
                        "SELECT k, SUM(v) AS s FROM t WHERE v >= 9 GROUP BY k ORDER BY k");
    vat_strength_release(&s);
    vat_task_clear(&t);

    task_for(&t, &fake_sql, f->root, sql_spec(SQL_GOLD, true, 2), SQL_GOLD);
    struct vat_strength s2 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s2), 0);
    assert_int_equal(s2.killed, 11);
    assert_int_equal(s2.survivors, 1);
    assert_true(vat_strength_share(&s2) > 0.916 && vat_strength_share(&s2) < 0.917);

    /* totals add up, kinds merge by name, survivors are copied */
    struct vat_strength sum = VAT_STRENGTH_INIT;
    vat_strength_add(&sum, &s2);
    vat_strength_add(&sum, &s2);
    assert_int_equal(sum.mutants, 24);
    assert_int_equal(sum.killed, 22);
    assert_int_equal(sum.nkinds, s2.nkinds);
    assert_int_equal(kind_of(&sum, "swap_aggregate")->mutants, 10);
    assert_int_equal(sum.surv.n, 2);
    vat_strength_release(&s2);
    vat_strength_release(&sum);
    vat_task_clear(&t);
}

/* Compared as a multiset, ORDER BY k DESC is equivalent: not scored. */
static void test_sql_unordered(void **state)
{
    struct sqlfix *f = *state;
    struct vat_task t;
    task_for(&t, &fake_sql, f->root, sql_spec(SQL_GOLD, false, 2), SQL_GOLD);
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), 0);
    assert_int_equal(s.mutants, 12);
    assert_int_equal(s.equivalent, 1);
    assert_int_equal(kind_of(&s, "swap_order")->equivalent, 1);
    assert_int_equal(s.killed + s.survivors + s.invalid, 11);
    vat_strength_release(&s);
    vat_task_clear(&t);
}

static void test_gold_must_score(void **state)
{
    struct sqlfix *f = *state;
    struct vat_task t;
    /* the spec's reference differs from the gold being mutated */
    task_for(&t, &fake_sql, f->root, sql_spec(SQL_GOLD, true, 1),
             "SELECT k, SUM(v) AS s FROM t GROUP BY k ORDER BY k");
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s), -1);
    assert_non_null(strstr(s.error, "gold scores 0"));
    vat_strength_release(&s);
    vat_task_clear(&t);

    /* abstain and value tasks have no mutants */
    json_t *spec = json_object();
    json_object_set_new(spec, "checker", json_string("value"));
    task_for(&t, &fake_sql, f->root, spec, "12");
    struct vat_strength s2 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s2), -1);
    assert_non_null(strstr(s2.error, "no mutants"));
    vat_strength_release(&s2);
    vat_task_clear(&t);

    /* an unbalanced gold cannot be mutated */
    task_for(&t, &fake_sql, f->root, sql_spec(SQL_GOLD, true, 1), "SELECT (k FROM t");
    struct vat_strength s3 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task(&t, &s3), -1);
    assert_non_null(strstr(s3.error, "cannot mutate"));
    vat_strength_release(&s3);
    vat_task_clear(&t);
}

/* A check that counts its calls and scores with the task's own check. */
static struct vat_verdict counting_check(void *ctx, const struct vat_task *t, const char *answer,
                                         size_t len)
{
    (*(int *)ctx)++;
    return t->tmpl->check(t, answer, len);
}

/* Given gold's verdict by the same check (the builder's admission replay),
 * strength does not score gold again: one call per scored mutant, the same
 * counts; a given verdict below 1 is refused as a scored one is. */
static void test_gold_verdict_given(void **state)
{
    (void)state;
    const char *gold = ORDER_IDS_GOLD;
    struct vat_task t;
    order_ids_task(&t, 3);
    int calls = 0;
    struct vat_strength s = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, NULL, &s), 0);
    assert_int_equal(calls, 7); /* gold, then six mutants */
    struct vat_verdict g = t.tmpl->check(&t, gold, strlen(gold));
    calls = 0;
    struct vat_strength s2 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, &g, &s2), 0);
    assert_int_equal(calls, 6);
    assert_int_equal(s2.killed, s.killed);
    assert_int_equal(s2.survivors, s.survivors);
    g.score = 0.5;
    struct vat_strength s3 = VAT_STRENGTH_INIT;
    assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, &g, &s3), -1);
    assert_non_null(strstr(s3.error, "gold scores 0.5"));
    vat_strength_release(&s);
    vat_strength_release(&s2);
    vat_strength_release(&s3);
    vat_task_clear(&t);
}

/* Told the share the caller asks for (the builder's admission), strength
 * stops scoring once the share is sure to reach it whatever the rest give,
 * and never before: the answer to "does it reach stop_at" is the full
 * count's, a share short of it is counted whole, and the stop comes at the
 * first mutant where the rest, all survivors, could no longer pull it under. */
static void test_stop_once_sure(void **state)
{
    (void)state;
    static const double targets[] = {0.3, 0.5, 2.0 / 3.0, 0.7, 0.9, 1.0};
    for (int cases = 2; cases <= 3; cases++) {
        struct vat_task t;
        order_ids_task(&t, cases);
        int full_calls = 0;
        struct vat_strength full = VAT_STRENGTH_INIT;
        assert_int_equal(vat_strength_task_with(&t, counting_check, &full_calls, NULL, &full), 0);
        for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
            int calls = 0;
            struct vat_strength s = VAT_STRENGTH_INIT;
            s.stop_at = targets[k];
            assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, NULL, &s), 0);
            bool reach = vat_strength_share(&full) >= targets[k];
            assert_int_equal(vat_strength_share(&s) >= targets[k], reach);
            if (!s.stopped) {
                assert_int_equal(calls, full_calls);
                assert_int_equal(s.killed, full.killed);
                assert_int_equal(s.survivors, full.survivors);
            } else {
                assert_true(reach);
                assert_true(calls < full_calls);
            }
            if (!reach)
                assert_false(s.stopped);
            vat_strength_release(&s);
        }
        vat_strength_release(&full);
        vat_task_clear(&t);
    }
    /* six mutants, all killed: at one half, after three kills (3 of 3 + 3
     * left); at 0.9, after all six have been scored, so no stop */
    struct vat_task t;
    order_ids_task(&t, 3);
    int calls = 0;
    struct vat_strength s = VAT_STRENGTH_INIT;
    s.stop_at = 0.5;
    assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, NULL, &s), 0);
    assert_true(s.stopped);
    assert_int_equal(calls, 1 + 3); /* gold, then three mutants */
    assert_int_equal(s.killed, 3);
    vat_strength_release(&s);
    calls = 0;
    struct vat_strength s2 = VAT_STRENGTH_INIT;
    s2.stop_at = 0.9;
    assert_int_equal(vat_strength_task_with(&t, counting_check, &calls, NULL, &s2), 0);
    assert_false(s2.stopped);
    assert_int_equal(calls, 1 + 6);
    vat_strength_release(&s2);
    vat_task_clear(&t);
}

/* ---- the corpus report and the command -------------------------------------- */

static void put_line(FILE *f, json_t *row)
{
    char *s = vat_json_dumps(row);
    fprintf(f, "%s\n", s);
    free(s);
    json_decref(row);
}

/* A verifiers row of the tables' layout holding spec (consumed). */
static json_t *verifier_row(json_t *spec, const char *task_id, const char *tmpl)
{
    json_t *row = json_object();
    json_object_set_new(row, "task_id", json_string(task_id));
    json_object_set_new(row, "template", json_string(tmpl));
    vat_verifier_set_spec(row, spec);
    json_decref(spec);
    return row;
}

/* A corpus of two tasks under registered regex and sql template names,
 * with the synthetic specs above (their checks are the default check). */
static void write_corpus(const char *root, bool strong)
{
    struct vat_err e = {{0}};
    assert_int_equal(vat_mkdirs_for(root, "out/verifiers/train.jsonl", &e), 0);
    assert_int_equal(vat_mkdirs_for(root, "out/experience/train.jsonl", &e), 0);
    char *vp = vat_path_join(root, "out/verifiers/train.jsonl");
    char *ep = vat_path_join(root, "out/experience/train.jsonl");
    FILE *v = fopen(vp, "w"), *x = fopen(ep, "w");
    assert_non_null(v);
    assert_non_null(x);

    const char *texts[] = {"order ORD-123456 shipped", "XORD-123456 and ORD-1234567",
                           "ref ORD-12AB56 pending"};
    const char *expected[] = {"[\"ORD-123456\"]", "[]", "[]"};
    put_line(v, verifier_row(regex_spec(texts, expected, strong ? 3 : 2), "regex_iso_dates-00000",
                             "regex_iso_dates"));
    put_line(v, verifier_row(sql_spec(SQL_GOLD, true, 2), "sql_paid_revenue-00003",
                             "sql_paid_revenue"));
    json_t *vr = json_object();
    json_object_set_new(vr, "task_id", json_string("grouped_sum-00000"));
    json_object_set_new(vr, "template", json_string("grouped_sum"));
    json_object_set_new(vr, "checker", json_string("value"));
    put_line(v, vr);

    json_t *e1 = json_object();
    json_object_set_new(e1, "task_id", json_string("regex_iso_dates-00000"));
    json_object_set_new(e1, "gold", json_string("\\bORD-\\d{6}\\b"));
    put_line(x, e1);
    json_t *e2 = json_object();
    json_object_set_new(e2, "task_id", json_string("sql_paid_revenue-00003"));
    json_object_set_new(e2, "gold", json_string(SQL_GOLD));
    put_line(x, e2);
    fclose(v);
    fclose(x);
    free(vp);
    free(ep);
}

static void test_corpus_report(void **state)
{
    struct sqlfix *f = *state;
    write_corpus(f->root, false);
    struct vat_strength_report r;
    struct vat_err e = {{0}};
    assert_int_equal(vat_strength_corpus(f->root, NULL, NULL, &r, &e), 0);
    /* registry order; the value template is not measured */
    assert_int_equal(r.n, 2);
    assert_string_equal(r.per[0].tmpl->name, "regex_iso_dates");
    assert_string_equal(r.per[1].tmpl->name, "sql_paid_revenue");
    assert_int_equal(r.per[0].tasks, 1);
    assert_int_equal(r.per[0].s.killed, 4);
    assert_int_equal(r.per[0].s.survivors, 2);
    assert_string_equal(r.per[0].example_task, "regex_iso_dates-00000");
    assert_int_equal(r.per[1].s.killed, 11);

    json_t *j0 = vat_strength_template_json(&r.per[0], 0.9);
    assert_false(json_is_true(json_object_get(j0, "passed")));
    assert_true(json_real_value(json_object_get(j0, "share_killed")) == 0.6666);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j0, "survivor_example"),
                                                          "kind")),
                        "class_to_word");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(j0, "kinds"), "drop_boundary"), "killed")),
                     2);
    json_t *j1 = vat_strength_template_json(&r.per[1], 0.9);
    assert_true(json_is_true(json_object_get(j1, "passed")));
    json_decref(j0);
    json_decref(j1);
    vat_strength_report_release(&r);

    /* --only */
    assert_int_equal(vat_strength_corpus(f->root, "sql_paid_revenue", NULL, &r, &e), 0);
    assert_int_equal(r.n, 1);
    vat_strength_report_release(&r);

    /* the command: below target exits 1, a reachable target 0 */
    char *argv_low[] = {"strength", "--root", f->root, NULL};
    assert_int_equal(vat_cmd_strength(3, argv_low), 1);
    char *argv_ok[] = {"strength", "--root", f->root, "--target", "0.6", NULL};
    assert_int_equal(vat_cmd_strength(5, argv_ok), 0);
    char *argv_bad[] = {"strength", "--target", "2", NULL};
    assert_int_equal(vat_cmd_strength(3, argv_bad), 2);
    char *argv_only[] = {"strength", "--only", "grouped_sum", NULL};
    assert_int_equal(vat_cmd_strength(3, argv_only), 2);

    /* with the third case every template passes */
    write_corpus(f->root, true);
    assert_int_equal(vat_cmd_strength(3, argv_low), 0);

    /* no corpus */
    char *argv_none[] = {"strength", "--root", "/nonexistent-vat-root", NULL};
    assert_int_equal(vat_cmd_strength(3, argv_none), 2);
    assert_int_equal(vat_strength_corpus("/nonexistent-vat-root", NULL, NULL, &r, &e), -1);
    assert_non_null(strstr(e.msg, "no corpus"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regex_share_known),
        cmocka_unit_test(test_regex_invalid_and_equivalent),
        cmocka_unit_test(test_sql_share_known),
        cmocka_unit_test(test_sql_unordered),
        cmocka_unit_test(test_gold_must_score),
        cmocka_unit_test(test_gold_verdict_given),
        cmocka_unit_test(test_stop_once_sure),
        cmocka_unit_test(test_corpus_report),
    };
    return cmocka_run_group_tests(tests, sql_setup, sql_teardown);
}
