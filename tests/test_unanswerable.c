/* test_unanswerable.c — the unanswerable probe: 60 tasks admit on their
 * first draw (gold 1, trap gate passed and 0, malformed gated out); every
 * prefix of the tasks is at least half answerable controls, index 0 is one,
 * and every kind of question and of control appears; the abstention passes
 * the gate on every task; same seed -> same bytes; hand-made fixtures for
 * each way a file cannot answer (absent column, month outside the span,
 * absent customer) and their traps; confirm catches a wrong gold; checker
 * cases around the abstention and the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "template.h"
#include "testutil.h"

#define SEED 55117u
#define NTASKS 60
#define ABSTAIN "{\"answerable\":false}"

extern const struct vat_template vat_tmpl_unanswerable;
static const struct vat_template *const T = &vat_tmpl_unanswerable;

static int setup(void **state)
{
    *state = vat_tt_env_new(T, SEED);
    return 0;
}

static int teardown(void **state)
{
    vat_tt_env_free(*state);
    return 0;
}

static bool answerable(const struct vat_task *t)
{
    return json_is_true(json_object_get(t->params, "answerable"));
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit_first_draw(void **state)
{
    struct vat_tt_env *v = *state;
    int kinds[6] = {0}, controls = 0;
    static const char *const names[6] = {"column",           "period",           "entity",
                                         "control-of-column", "control-of-period",
                                         "control-of-entity"};
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        vat_tt_assert_replays(&r);
        const struct vat_verdict *tr = &r.v[VAT_ROLE_TRAP];
        assert_string_not_equal(t.gold, t.trap);

        bool ans = answerable(&t);
        assert_true(json_is_boolean(json_object_get(t.spec, "answerable")));
        assert_int_equal(ans, json_is_true(json_object_get(t.spec, "answerable")));
        if (ans) {
            controls++;
            assert_string_not_equal(t.gold, ABSTAIN);
            assert_string_equal(t.trap, ABSTAIN);
            assert_string_equal(tr->code, "abstained");
            assert_non_null(json_object_get(t.spec, "expected"));
        } else {
            assert_string_equal(t.gold, ABSTAIN);
            assert_string_equal(tr->code, "not_abstained");
            assert_null(json_object_get(t.spec, "expected"));
            /* The trap is a number computed from the file, not a guess. */
            json_t *n = json_loads(t.trap, JSON_DECODE_ANY, NULL);
            assert_true(json_is_number(n));
            json_decref(n);
        }
        /* Every prefix of the tasks is at least half controls. */
        assert_true(2 * controls >= (int)i + 1);

        const char *kind = json_string_value(json_object_get(t.params, "kind"));
        assert_non_null(kind);
        int ki = -1;
        for (int k = 0; k < 6; k++)
            if (strcmp(kind, names[k]) == 0)
                ki = k;
        assert_true(ki >= 0);
        assert_int_equal(ki >= 3, ans);
        kinds[ki]++;

        /* The prompt defines the abstention and names the file. */
        assert_non_null(strstr(t.prompt, "{\"answerable\": false}"));
        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_non_null(strstr(t.prompt, "Its full contents"));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(json_string_value(json_object_get(t.spec, "checker")), "abstain");

        /* The abstention passes the gate on every task, control or not. */
        struct vat_verdict a = vat_tt_check(&t, "{\"answerable\": false}");
        assert_true(a.gate_passed);
        assert_true(a.score == (ans ? 0.0 : 1.0));
        vat_task_clear(&t);
    }
    assert_int_equal(controls, NTASKS / 2);
    for (int k = 0; k < 6; k++) {
        if (kinds[k] < 5)
            fail_msg("kind '%s' drawn %d times", names[k], kinds[k]);
    }
}

static void test_control_ratio(void **state)
{
    (void)state;
    static const double ratios[] = {0.75, 1.0, 0.62};
    for (size_t q = 0; q < sizeof ratios / sizeof ratios[0]; q++) {
        struct vat_tt_env *v = vat_tt_env_new(T, SEED);
        json_object_set_new(v->cfg, "control_ratio", json_real(ratios[q]));
        int controls = 0;
        for (uint32_t i = 0; i < 24; i++) {
            struct vat_task t;
            struct vat_replay r;
            vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
            controls += answerable(&t);
            /* Exactly ceil(n * ratio) controls among the first n. */
            int want = (int)((i + 1) * (uint32_t)(ratios[q] * 1000 + 0.5) + 999) / 1000;
            assert_int_equal(controls, want);
            vat_task_clear(&t);
        }
        vat_tt_env_free(v);
    }
}

static void test_same_seed_same_bytes(void **state)
{
    struct vat_tt_env *v = *state;
    char *other = vat_test_tmpdir("unans-b");
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task a, b;
        struct vat_replay r;
        vat_tt_draw(v, &a, NULL, i, 6000, 1, &r);
        vat_tt_draw(v, &b, other, i, 6000, 1, &r);
        size_t la, lb;
        char *fa = vat_tt_fixture_text(&a, 0, &la), *fb = vat_tt_fixture_text(&b, 0, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        assert_string_equal(a.prompt, b.prompt);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        char *qa = vat_json_dumps(a.params), *qb = vat_json_dumps(b.params);
        assert_string_equal(sa, sb);
        assert_string_equal(qa, qb);
        free(sa), free(sb), free(qa), free(qb);
        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then asks about net_amount of "Northwind Foods" in
 * 2023-03 over the given file, and recomputes gold, confirm and trap.
 * The generator's planted truth no longer describes the file. */
static int craft(struct vat_task *t, const struct vat_tt_env *v, uint32_t index, const char *text,
                 struct vat_err *e)
{
    struct vat_replay r;
    vat_tt_draw(v, t, NULL, index, 6000, 1, &r);
    char *path = vat_path_join(t->root, t->fixture[0].path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
    t->priv_free(t->priv);
    t->priv = NULL;
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_set_new(t->params, "column", json_string("net_amount"));
    json_object_set_new(t->params, "customer", json_string("Northwind Foods"));
    json_object_set_new(t->params, "month", json_string("2023-03"));
    json_object_set_new(t->spec, "integer", json_false());
    json_object_del(t->spec, "expected");
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "order_id,ordered_on,customer,region,gross_amount,net_amount\n"
#define ROWS                                                                                 \
    "SO-000001,2023-02-03,Northwind Foods,North,100.00,90.00\n"                              \
    "SO-000002,2023-03-01,Northwind Foods,North,200.00,180.50\n"                             \
    "SO-000003,2023-03-31,Northwind Foods,North,50.00,45.25\n"                               \
    "SO-000004,2023-03-15,Northwind Freight,South,70.00,70.00\n"                             \
    "SO-000005,2023-04-02,Summit Labs,East,10.00,9.00\n"

static void expect_gold_trap(const struct vat_task *t, const char *gold, const char *trap)
{
    json_t *g = json_loads(t->gold, JSON_DECODE_ANY, NULL), *wg = json_loads(gold, JSON_DECODE_ANY, NULL);
    json_t *p = json_loads(t->trap, JSON_DECODE_ANY, NULL), *wp = json_loads(trap, JSON_DECODE_ANY, NULL);
    struct vat_err e = {{0}};
    if (vat_an_agree("gold", wg, g, 0, 0, &e) != 0 || vat_an_agree("trap", wp, p, 0, 0, &e) != 0)
        fail_msg("%s (gold %s, trap %s)", e.msg, t->gold, t->trap);
    json_decref(g), json_decref(wg), json_decref(p), json_decref(wp);
}

static void test_control_sums_the_month(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    if (craft(&t, v, 0, HDR ROWS, &e) != 0)
        fail_msg("%s", e.msg);
    /* Both bounds of the month count; the near-miss customer does not. */
    expect_gold_trap(&t, "225.75", ABSTAIN);
    assert_true(json_is_true(json_object_get(t.spec, "answerable")));
    struct vat_verdict g = vat_tt_check(&t, "225.75"), s = vat_tt_check(&t, "\"225.75\""),
                       w = vat_tt_check(&t, "295.75"), a = vat_tt_check(&t, ABSTAIN);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(!s.gate_passed && strcmp(s.code, "type") == 0); /* a string is no number */
    assert_true(w.gate_passed && w.score == 0.0);
    assert_string_equal(w.code, "wrong_value");
    assert_true(a.gate_passed && a.score == 0.0);
    assert_string_equal(a.code, "abstained");
    vat_task_clear(&t);
}

static void test_absent_column(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    if (craft(&t, v, 1,
              "order_id,ordered_on,customer,region,gross_amount\n"
              "SO-000001,2023-03-01,Northwind Foods,North,200.00\n"
              "SO-000002,2023-03-09,Northwind Foods,North,12.34\n"
              "SO-000003,2023-04-01,Northwind Foods,North,1.00\n",
              &e) != 0)
        fail_msg("%s", e.msg);
    expect_gold_trap(&t, ABSTAIN, "212.34");
    assert_false(json_is_true(json_object_get(t.spec, "answerable")));
    vat_task_clear(&t);
}

static void test_month_outside_span(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* The file covers 2022-01 .. 2022-04: 2023-03 is outside it, and the
     * trap reads March of the year the file holds. */
    if (craft(&t, v, 1,
              HDR "SO-000001,2022-01-03,Northwind Foods,North,100.00,90.00\n"
                  "SO-000002,2022-03-01,Northwind Foods,North,200.00,180.50\n"
                  "SO-000003,2022-03-30,Summit Labs,East,20.00,19.00\n"
                  "SO-000004,2022-04-30,Northwind Foods,North,50.00,45.25\n",
              &e) != 0)
        fail_msg("%s", e.msg);
    expect_gold_trap(&t, ABSTAIN, "180.5");
    vat_task_clear(&t);
}

static void test_month_inside_span_without_orders_is_zero(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* 2023-03 lies inside the span and the customer exists, so the file
     * answers: the customer had no order that month. */
    if (craft(&t, v, 0,
              HDR "SO-000001,2023-02-03,Northwind Foods,North,100.00,90.00\n"
                  "SO-000002,2023-03-11,Summit Labs,East,10.00,9.00\n"
                  "SO-000003,2023-04-02,Northwind Foods,North,10.00,9.00\n",
              &e) != 0)
        fail_msg("%s", e.msg);
    expect_gold_trap(&t, "0.0", ABSTAIN);
    vat_task_clear(&t);
}

static void test_absent_customer(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* "Northwind Freight" shares the first word; "Summit Labs" none. */
    if (craft(&t, v, 1,
              HDR "SO-000001,2023-03-01,Northwind Freight,North,100.00,90.00\n"
                  "SO-000002,2023-03-02,Summit Labs,East,200.00,180.50\n"
                  "SO-000003,2023-03-05,Northwind Freight,North,50.00,45.25\n"
                  "SO-000004,2023-04-05,Northwind Freight,North,50.00,45.00\n",
              &e) != 0)
        fail_msg("%s", e.msg);
    expect_gold_trap(&t, ABSTAIN, "135.25");
    vat_task_clear(&t);
}

static void test_confirm_catches_wrong_gold(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    if (craft(&t, v, 0, HDR ROWS, &e) != 0)
        fail_msg("%s", e.msg);
    free(t.gold);
    t.gold = vat_xstrdup("315.75");
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "disagrees with gold"));
    free(t.gold);
    t.gold = vat_xstrdup(ABSTAIN);
    assert_int_equal(T->confirm(&t, &e), -1);
    vat_task_clear(&t);

    /* And an abstention where the file answers, from a real draw. */
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 2, 6000, 1, &r);
    if (answerable(&t)) {
        free(t.gold);
        t.gold = vat_xstrdup(ABSTAIN);
    } else {
        free(t.gold);
        t.gold = vat_xstrdup("12.5");
    }
    assert_int_equal(T->confirm(&t, &e), -1);
    vat_task_clear(&t);
}

static void test_broken_file_is_an_error(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    assert_int_equal(craft(&t, v, 0,
                           "order_id,date,customer,region,net_amount\n"
                           "SO-000001,2023-03-01,Northwind Foods,North,1.00\n",
                           &e),
                     -1);
    assert_non_null(strstr(e.msg, "header column 2"));
    vat_task_clear(&t);
    assert_int_equal(craft(&t, v, 0, HDR "SO-000001,2023-3-01,Northwind Foods,North,1.00,1.00\n",
                           &e),
                     -1);
    assert_non_null(strstr(e.msg, "YYYY-MM-DD"));
    vat_task_clear(&t);
    assert_int_equal(craft(&t, v, 0, HDR "SO-000001,2023-03-01,Northwind Foods,North,1.00,n/a\n",
                           &e),
                     -1);
    assert_non_null(strstr(e.msg, "not a decimal"));
    vat_task_clear(&t);
}

/* ---- checker cases ------------------------------------------------------------ */

static void test_checker_on_unanswerable(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    uint32_t i = 1;
    for (;; i++) {
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        if (!answerable(&t))
            break;
        vat_task_clear(&t);
    }
    static const char *const pass[] = {ABSTAIN, " {\"answerable\" : false}\n",
                                       "{\"answerable\": false}"};
    for (size_t k = 0; k < sizeof pass / sizeof pass[0]; k++) {
        struct vat_verdict x = vat_tt_check(&t, pass[k]);
        if (!(x.gate_passed && x.score == 1.0))
            fail_msg("'%s' scored %g (%s)", pass[k], x.score, x.reason);
    }
    /* A number passes the gate and scores 0: a missed abstention. */
    struct vat_verdict n = vat_tt_check(&t, "0");
    assert_true(n.gate_passed && n.score == 0.0);
    assert_string_equal(n.code, "not_abstained");
    /* Near misses of the abstention are not abstentions. */
    static const char *const shape[] = {"{\"answerable\":true}", "false", "{}",
                                        "{\"answerable\":\"false\"}", "[0]"};
    for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++) {
        struct vat_verdict x = vat_tt_check(&t, shape[k]);
        if (x.gate_passed)
            fail_msg("'%s' passed the gate", shape[k]);
        assert_non_null(strstr(x.reason, "abstain"));
    }
    struct vat_verdict p = vat_tt_check(&t, "The file cannot answer this.");
    assert_false(p.gate_passed);
    struct vat_verdict d = vat_tt_check(&t, "{\"answerable\":false,\"answerable\":false}");
    assert_false(d.gate_passed);
    vat_task_clear(&t);
}

static void test_checker_on_control(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 0, 6000, 1, &r);
    assert_true(answerable(&t));
    double gold = json_number_value(json_object_get(t.spec, "expected"));
    char buf[64];
    snprintf(buf, sizeof buf, " %.17g ", gold);
    struct vat_verdict x = vat_tt_check(&t, buf);
    assert_true(x.gate_passed && x.score == 1.0);
    snprintf(buf, sizeof buf, "%.2f", gold + 0.01);
    x = vat_tt_check(&t, buf);
    assert_true(x.gate_passed && x.score == 0.0);
    snprintf(buf, sizeof buf, "{\"total\": %s}", t.gold);
    x = vat_tt_check(&t, buf);
    assert_false(x.gate_passed);
    x = vat_tt_check(&t, "NaN");
    assert_false(x.gate_passed);
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit_first_draw),
        cmocka_unit_test(test_control_ratio),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_control_sums_the_month),
        cmocka_unit_test(test_absent_column),
        cmocka_unit_test(test_month_outside_span),
        cmocka_unit_test(test_month_inside_span_without_orders_is_zero),
        cmocka_unit_test(test_absent_customer),
        cmocka_unit_test(test_confirm_catches_wrong_gold),
        cmocka_unit_test(test_broken_file_is_an_error),
        cmocka_unit_test(test_checker_on_unanswerable),
        cmocka_unit_test(test_checker_on_control),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
