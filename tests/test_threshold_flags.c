/* test_threshold_flags.c — what is particular to the threshold_flags
 * template: over 60 tasks the trap is armed and misses exactly the balances
 * at T, and gold is sorted by byte order, which differs from the file's
 * numeric order; the prompt states T and the order; confirm catches a wrong
 * gold and a writer bug.  In the program form: every fixture holds T
 * exactly and the trap misses exactly those rows; variants hold a cent
 * either side, a blank balance and hits across a power of ten; near
 * misses fail, other correct queries pass, the listed main answer fails.
 * Admission within the redraws allowed, "same seed,
 * same bytes", the prompt's data section, confirm refusing the trap as gold
 * and a nudged gold, and the golden cases of
 * tests/data/cases/threshold_flags.txt (balances exactly at T, one cent
 * either side, negatives, ids of different lengths, broken files, checker
 * cases for order, duplicates, missing and extra ids) are checked for every
 * analytics template by tests/test_analytics.c. */
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
#include "values.h"
#include "verifiers.h"

#define SEED 60421u /* also in tests/data/cases/threshold_flags.txt */
#define NTASKS 60
#define MAX_REDRAWS 5
#define FIRST_DRAW 1 /* a task drawn alone admits on attempt 0 */

extern const struct vat_template vat_tmpl_threshold_flags;
static const struct vat_template *const T = &vat_tmpl_threshold_flags;

/* T of the task in cents. */
static int64_t threshold_cents(const struct vat_task *t)
{
    json_t *jt = json_object_get(t->params, "threshold");
    assert_true(json_is_number(jt));
    return (int64_t)(json_number_value(jt) * 100.0 + 0.5);
}

/* Returns the balance of account id in c (asserting it is there), in cents. */
static int64_t balance_of(const struct vat_csv *c, const char *id)
{
    for (size_t k = 1; k < c->nrows; k++) {
        if (strcmp(vat_csv_get(c, k, 0), id) == 0) {
            int64_t cents;
            assert_int_equal(vat_parse_cents(vat_csv_get(c, k, 5), &cents), 0);
            return cents;
        }
    }
    fail_msg("no account '%s'", id);
    return 0;
}

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int near_misses = 0, negatives = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_REDRAWS + 1, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_object_get(t.params, "comparison")), ">=");
        assert_true(json_is_true(json_object_get(t.spec, "ordered")));
        assert_true(json_is_true(json_object_get(t.spec, "unique")));
        char thr[32];
        int64_t tc = threshold_cents(&t);
        vat_fmt_cents(tc, thr, sizeof thr);
        /* every phrasing names the threshold; the rule after the
         * question says it is inclusive */
        char expect[80];
        snprintf(expect, sizeof expect, "balance is exactly %s counts", thr);
        assert_non_null(strstr(t.prompt, expect));

        /* Gold: every id at or above T, byte order, no repeats; the file
         * lists ids in numeric order, which byte order is not. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        size_t want = 0, at = 0;
        bool below = false, above = false, neg = false;
        for (size_t k = 1; k < c.nrows; k++) {
            int64_t b;
            assert_int_equal(vat_parse_cents(vat_csv_get(&c, k, 5), &b), 0);
            want += b >= tc;
            at += b == tc;
            below |= b == tc - 1;
            above |= b == tc + 1;
            neg |= b < 0;
        }
        assert_true(at >= 1);
        assert_int_equal(json_array_size(gold), want);
        for (size_t k = 1; k < json_array_size(gold); k++)
            assert_true(strcmp(json_string_value(json_array_get(gold, k - 1)),
                               json_string_value(json_array_get(gold, k))) < 0);
        bool numeric_differs = false;
        for (size_t k = 2; k < c.nrows; k++)
            numeric_differs |= strcmp(vat_csv_get(&c, k - 1, 0), vat_csv_get(&c, k, 0)) > 0;
        assert_true(numeric_differs);
        /* Hits are a sensible share of the file, not nearly all of it. */
        assert_true(want * 10 <= (c.nrows - 1) * 7);
        near_misses += below || above;
        negatives += neg;
        json_decref(gold);
        vat_csv_release(&c);
        vat_task_clear(&t);
    }
    assert_true(near_misses >= 20);
    assert_true(negatives >= 10);
    print_message("  %d/%d tasks have a balance one cent from T, %d an overdrawn "
                  "account\n",
                  near_misses, NTASKS, negatives);
}

/* The trap differs from gold in every task, exactly by the ids whose
 * balance is T itself. */
static void test_trap_armed_in_every_task(void **state)
{
    struct vat_tt_env *v = *state;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_REDRAWS + 1, &r);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-9, &e), -1);
        assert_true(json_array_size(trap) < json_array_size(gold));
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        int64_t tc = threshold_cents(&t);
        size_t j = 0, missed = 0;
        for (size_t k = 0; k < json_array_size(gold); k++) {
            const char *g = json_string_value(json_array_get(gold, k));
            const char *x = json_string_value(json_array_get(trap, j));
            if (x && strcmp(g, x) == 0) {
                j++;
                assert_true(balance_of(&c, g) > tc);
            } else {
                assert_true(balance_of(&c, g) == tc);
                missed++;
            }
        }
        assert_int_equal(j, json_array_size(trap));
        assert_true(missed >= 1);
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
}

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, FIRST_DRAW, &r);
    assert_non_null(strstr(t.prompt, "exactly"));
    assert_non_null(strstr(t.prompt, "counts"));
    assert_non_null(strstr(t.prompt, "byte order"));
    assert_non_null(strstr(t.prompt, "not numeric order"));
    assert_non_null(strstr(t.prompt, "each once"));
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 20, 6000, FIRST_DRAW, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);

    /* Right ids in numeric (file) order instead of byte order (the trap's
     * list as gold: tests/test_analytics.c). */
    char *orig = t.gold;
    json_t *gold = json_loads(orig, 0, NULL);
    json_t *rev = json_array();
    for (size_t k = json_array_size(gold); k-- > 0;)
        json_array_append(rev, json_array_get(gold, k));
    t.gold = vat_json_dumps(rev);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(rev);
    json_decref(gold);
    free(t.gold);
    t.gold = orig;

    /* A writer that lost a cent on an account at T: the file and the SQL
     * agree, the planted ids do not. */
    struct vat_csv c = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    char thr[32];
    vat_fmt_cents(threshold_cents(&t), thr, sizeof thr);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 5), thr) != 0)
        k++;
    char low[32];
    vat_fmt_cents(threshold_cents(&t) - 1, low, sizeof low);
    assert_true(vat_csv_set(&c, k, 5, low));
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- the program form ------------------------------------------------------ */

#define PF_TASKS 6

/* query with the task's table for each TBL and T for each THR, scored. */
static struct vat_verdict pf_score(const struct vat_task *t, const char *query)
{
    const char *table = json_string_value(json_object_get(json_object_get(t->spec, "load"),
                                                          "table"));
    assert_non_null(table);
    char thr[32];
    vat_fmt_cents(threshold_cents(t), thr, sizeof thr);
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = query; *p;) {
        if (strncmp(p, "TBL", 3) == 0 || strncmp(p, "THR", 3) == 0) {
            vat_buf_puts(&b, p[1] == 'B' ? table : thr);
            p += 3;
        } else {
            vat_buf_putc(&b, *p++);
        }
    }
    struct vat_verdict v = vat_tt_check(t, b.data);
    vat_buf_release(&b);
    return v;
}

/* Every fixture of a task in the sql form, main and variants: a balance
 * exactly at T, and on each variant one a cent either side, a blank
 * balance, and ids at or above T on both sides of a power of ten, so
 * byte order is not the file's order; the trap's rows differ from gold's
 * on every fixture. */
static void test_program_form_fixtures(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < PF_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_REDRAWS, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_true(t.n_fixtures == 4);
        int64_t tc = threshold_cents(&t);
        for (int k = 0; k < t.n_fixtures; k++) {
            struct vat_csv c = VAT_CSV_INIT;
            struct vat_err e = {{0}};
            assert_int_equal(vat_csv_read(&c, t.root, t.fixture[k].path, &e), 0);
            int at = 0, below = 0, above = 0, blank = 0, short_hit = 0, long_hit = 0;
            size_t shortest = SIZE_MAX;
            for (size_t row = 1; row < c.nrows; row++)
                if (strlen(vat_csv_get(&c, row, 0)) < shortest)
                    shortest = strlen(vat_csv_get(&c, row, 0));
            for (size_t row = 1; row < c.nrows; row++) {
                const char *cell = vat_csv_get(&c, row, 5);
                int64_t cents;
                if (!*cell) {
                    blank++;
                    continue;
                }
                assert_int_equal(vat_parse_cents(cell, &cents), 0);
                at += cents == tc;
                below += cents == tc - 1;
                above += cents == tc + 1;
                if (cents >= tc) {
                    bool is_short = strlen(vat_csv_get(&c, row, 0)) == shortest;
                    short_hit += is_short;
                    long_hit += !is_short;
                }
            }
            assert_true(at >= 1);
            if (k > 0) {
                assert_true(below >= 1 && above >= 1 && blank >= 1);
                assert_true(short_hit >= 1 && long_hit >= 1);
            }
            vat_csv_release(&c);
            struct vat_verdict vg, vt;
            json_t *g = vat_sql_run(t.spec, t.root, t.fixture[k].path, t.gold, strlen(t.gold), &vg);
            json_t *tr = vat_sql_run(t.spec, t.root, t.fixture[k].path, t.trap, strlen(t.trap), &vt);
            assert_non_null(g);
            assert_non_null(tr);
            assert_false(json_equal(g, tr));
            /* The trap misses exactly the accounts at T. */
            assert_int_equal(json_array_size(g) - json_array_size(tr), (size_t)at);
            json_decref(g);
            json_decref(tr);
        }
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

/* Plausible near misses fail on some fixture; other correct wordings
 * pass; a query that lists the main fixture's ids fails. */
static void test_program_form_near_misses(void **state)
{
    (void)state;
    static const char *const pass[] = {
        "SELECT account_id FROM TBL WHERE NOT (balance < THR) ORDER BY account_id",
        "select account_id as x from TBL where balance >= THR order by 1;",
        "SELECT account_id FROM TBL WHERE balance - THR >= 0 ORDER BY account_id ASC",
    };
    static const char *const miss[] = {
        "SELECT account_id FROM TBL WHERE balance > THR ORDER BY account_id",
        "SELECT account_id FROM TBL WHERE balance >= THR",
        "SELECT account_id FROM TBL WHERE ROUND(balance) >= THR ORDER BY account_id",
        "SELECT account_id FROM TBL WHERE balance >= THR OR balance IS NULL ORDER BY account_id",
        "SELECT account_id FROM TBL WHERE balance >= THR ORDER BY length(account_id), account_id",
        "SELECT account_id FROM TBL WHERE balance >= THR - 1 ORDER BY account_id",
    };
    struct vat_tt_env *v = vat_tt_env_new(T, SEED + 1);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < PF_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_REDRAWS, &r);
        for (size_t k = 0; k < sizeof pass / sizeof *pass; k++) {
            struct vat_verdict vd = pf_score(&t, pass[k]);
            assert_true(vd.gate_passed);
            assert_true(vd.score == 1.0);
        }
        for (size_t k = 0; k < sizeof miss / sizeof *miss; k++) {
            struct vat_verdict vd = pf_score(&t, miss[k]);
            assert_true(vd.gate_passed);
            if (vd.score >= 1.0)
                fail_msg("task %u: near miss %zu passes: %s", i, k, miss[k]);
        }
        /* The main fixture's ids, listed. */
        struct vat_verdict vg;
        json_t *rows = vat_sql_run(t.spec, t.root, t.fixture[0].path, t.gold, strlen(t.gold), &vg);
        assert_non_null(rows);
        const char *table = json_string_value(json_object_get(json_object_get(t.spec, "load"),
                                                              "table"));
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_printf(&b, "SELECT account_id FROM %s WHERE account_id IN (", table);
        for (size_t k = 0; k < json_array_size(rows); k++)
            vat_buf_printf(&b, "%s'%s'", k ? ", " : "",
                           json_string_value(json_array_get(json_array_get(rows, k), 0)));
        vat_buf_puts(&b, ") ORDER BY account_id");
        struct vat_verdict vd = vat_tt_check(&t, b.data);
        assert_true(vd.gate_passed);
        assert_true(vd.score < 1.0);
        vat_buf_release(&b);
        json_decref(rows);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_sixty_tasks, v),
        cmocka_unit_test_prestate(test_trap_armed_in_every_task, v),
        cmocka_unit_test_prestate(test_prompt_states_the_rules, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_wrong_gold, v),
        cmocka_unit_test(test_program_form_fixtures),
        cmocka_unit_test(test_program_form_near_misses),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
