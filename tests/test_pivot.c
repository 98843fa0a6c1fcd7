/* test_pivot.c — what is particular to the pivot template: over 60 tasks gold
 * is a full month x carrier grid of the file and the trap is armed in every
 * task; the prompt states the full-grid rule; confirm catches a wrong gold
 * and a writer bug.  Admission within the redraws allowed, "same seed, same
 * bytes", the prompt's data section, confirm refusing the trap as gold and a
 * nudged gold, and the golden cases of tests/data/cases/pivot.txt (empty
 * cells, a calendar month absent from the file, broken files, checker cases)
 * are checked for every analytics template by tests/test_analytics.c.  In
 * the program form (one SELECT checked on the CSV and its variants): the
 * trap's rows differ from gold's on every fixture, the variants hold their
 * corner cases, and plausible near-miss queries fail on some fixture. */
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
#include "sqlgen.h"
#include "template.h"
#include "testutil.h"

#define SEED 51107u /* also in tests/data/cases/pivot.txt */
#define NTASKS 60
#define MAX_REDRAWS 5
#define FIRST_DRAW 1 /* a task drawn alone admits on attempt 0 */

extern const struct vat_template vat_tmpl_pivot;
static const struct vat_template *const T = &vat_tmpl_pivot;

/* "YYYY-MM" -> months since year 0. */
static int month_index(const char *s)
{
    return atoi(s) * 12 + atoi(s + 5) - 1;
}

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int with_gap = 0, many_zeros = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_REDRAWS + 1, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 7);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 1)), "month");
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 2)), "carrier");
        assert_string_equal(json_string_value(json_object_get(t.spec, "shape")),
                            "object_of_objects");
        assert_true(json_is_true(json_object_get(t.spec, "integer")));

        /* Gold is the full grid of the file's months and carriers, its
         * counts add up to the rows, and some cell is 0. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        struct vat_an_tally months = VAT_AN_TALLY_INIT, carriers = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++) {
            vat_an_tally_add(&months, vat_csv_get(&c, k, 1), 0);
            vat_an_tally_add(&carriers, vat_csv_get(&c, k, 2), 0);
        }
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        assert_int_equal(json_object_size(gold), months.n);
        long total = 0;
        int zeros = 0;
        const char *mk;
        json_t *row;
        json_object_foreach(gold, mk, row) {
            assert_non_null(vat_an_tally_find(&months, mk));
            assert_int_equal(json_object_size(row), carriers.n);
            const char *ck;
            json_t *n;
            json_object_foreach(row, ck, n) {
                assert_non_null(vat_an_tally_find(&carriers, ck));
                assert_true(json_is_integer(n));
                total += (long)json_integer_value(n);
                zeros += json_integer_value(n) == 0;
            }
        }
        assert_int_equal(total, t.fixture[0].rows);
        assert_true(zeros >= 1);
        many_zeros += zeros >= 3;
        vat_an_tally_sort(&months);
        if (month_index(months.e[months.n - 1].key) - month_index(months.e[0].key) + 1 >
            (int)months.n)
            with_gap++;
        vat_an_tally_release(&months);
        vat_an_tally_release(&carriers);
        json_decref(gold);
        vat_csv_release(&c);
        vat_task_clear(&t);
    }
    /* The generator exercises the stated rules, not just the easy case. */
    assert_true(with_gap >= 3);
    assert_true(many_zeros >= 3);
    print_message("  %d/%d tasks skip a calendar month, %d have 3+ zero cells\n",
                  with_gap, NTASKS, many_zeros);
}

/* The trap differs from gold in every task, and exactly as the named
 * mistake says: the same cells minus some zero cells. */
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
        int dropped = 0;
        const char *mk;
        json_t *grow;
        json_object_foreach(gold, mk, grow) {
            json_t *trow = json_object_get(trap, mk);
            assert_non_null(trow);
            const char *ck;
            json_t *n;
            json_object_foreach(grow, ck, n) {
                json_t *m = json_object_get(trow, ck);
                if (json_integer_value(n) == 0) {
                    assert_null(m);
                    dropped++;
                } else {
                    assert_non_null(m);
                    assert_int_equal(json_integer_value(m), json_integer_value(n));
                }
            }
        }
        assert_true(dropped >= 1);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, FIRST_DRAW, &r);
    assert_non_null(strstr(t.prompt, "```csv\nshipment_id,month,carrier,origin,destination,"
                                     "parcels,weight_kg\n"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "with the count 0"));
    assert_non_null(strstr(t.prompt, "every carrier that appears"));
    assert_non_null(strstr(t.prompt, "does not appear in the file at all is not listed"));
    assert_non_null(strstr(t.prompt, "as a JSON integer"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-9"));
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
    /* A zero cell dropped, what the trap does, shows as a cell the file's
     * grid has and gold lacks (one more shipment in a cell and the trap
     * as gold in general: tests/test_analytics.c). */
    free(t.gold);
    t.gold = vat_xstrdup(t.trap);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "unexpected"));
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, FIRST_DRAW, &r);
    /* Rewrite the file with one shipment moved to another carrier of the
     * file, as a faulty writer would: reference and SQL both read the file
     * and agree, but the generator's planted grid does not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 2;
    while (strcmp(vat_csv_get(&c, k, 2), vat_csv_get(&c, 1, 2)) == 0)
        k++;
    assert_true(vat_csv_set(&c, 1, 2, vat_csv_get(&c, k, 2)));
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- the program form ----------------------------------------------------- */

/* gold with its first `from` replaced by `to` (a near miss). */
static char *pv_edit(const char *gold, const char *from, const char *to)
{
    const char *at = strstr(gold, from);
    assert_non_null(at);
    return vat_xasprintf("%.*s%s%s", (int)(at - gold), gold, to, at + strlen(from));
}

static void test_program_form(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    json_object_set_new(v->cfg, "fixture_format", json_string("csv"));
    for (uint32_t i = 0; i < 8; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 20, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_int_equal(t.n_fixtures, 4);
        struct vat_err e = {{0}};
        json_t *gold = vat_sqlgen_run_all(&t, t.gold, &e);
        json_t *trap = vat_sqlgen_run_all(&t, t.trap, &e);
        assert_non_null(gold);
        assert_non_null(trap);
        for (size_t k = 0; k < (size_t)t.n_fixtures; k++) {
            const json_t *g = json_array_get(gold, k), *tr = json_array_get(trap, k);
            /* The trap omits the zero cells, on every fixture. */
            assert_true(json_array_size(tr) < json_array_size(g));
            size_t zeros = 0, j;
            const json_t *row;
            json_array_foreach(g, j, row)
                zeros += json_integer_value(json_array_get(row, 2)) == 0;
            assert_true(zeros >= 1);
        }
        /* Variant corner cases: blank load cells, a year end, a gap month
         * and a shipment of 0 parcels, the lower-case carrier. */
        char *v1 = vat_tt_fixture_text(&t, 1, NULL), *v2 = vat_tt_fixture_text(&t, 2, NULL),
             *v3 = vat_tt_fixture_text(&t, 3, NULL);
        assert_non_null(strstr(v1, ",,\n"));
        assert_non_null(strstr(v2, ",0,0.0\n"));
        assert_non_null(strstr(v3, ",bpost,"));
        bool dec = false, jan = false;
        for (const char *p = strchr(v1, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
            const char *m = strchr(p + 1, ',');
            dec |= m && strncmp(m + 5, "-12,", 4) == 0;
            jan |= m && strncmp(m + 5, "-01,", 4) == 0;
        }
        assert_true(dec && jan);
        free(v1);
        free(v2);
        free(v3);
        /* Plausible near misses fail on some fixture: counting a column
         * that has blanks, summing parcels, counting distinct routes, the
         * pairs that occur only (an inner join), a case-blind order. */
        static const char *const misses[][2] = {
            {"COUNT(s.shipment_id)", "COUNT(s.parcels)"},
            {"COUNT(s.shipment_id)", "TOTAL(s.parcels)"},
            {"COUNT(s.shipment_id)", "COUNT(DISTINCT s.origin || s.destination || s.weight_kg)"},
            {"LEFT JOIN", "JOIN"},
        };
        size_t nm = sizeof misses / sizeof *misses;
        for (size_t k = 0; k <= nm; k++) {
            char *q;
            if (k < nm) {
                q = pv_edit(t.gold, misses[k][0], misses[k][1]);
            } else {
                const char *kc = strstr(strstr(t.gold, "ORDER BY"), "k.carrier");
                assert_non_null(kc);
                q = vat_xasprintf("%.*sk.carrier COLLATE NOCASE%s", (int)(kc - t.gold), t.gold,
                                  kc + strlen("k.carrier"));
            }
            struct vat_verdict vd = vat_tt_check(&t, q);
            assert_true(vd.gate_passed);
            assert_true(vd.score < 1.0);
            free(q);
        }
        json_decref(gold);
        json_decref(trap);
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
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
