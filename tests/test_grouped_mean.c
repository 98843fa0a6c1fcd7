/* test_grouped_mean.c — what is particular to the grouped_mean template: over
 * 60 tasks the trap is armed (a rated product with a blank rating in every
 * file) and some product has only blank ratings; the prompt states the blank
 * and all-blank rules and the tolerance; confirm catches a wrong gold and a
 * writer bug.  Admission within the redraws allowed, "same seed, same bytes",
 * the prompt's data section, confirm refusing the trap as gold and a nudged
 * gold, and the golden cases of tests/data/cases/grouped_mean.txt (a product
 * whose ratings are all blank, unrounded means, broken files, checker cases)
 * are checked for every analytics template by tests/test_analytics.c. */
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

#define SEED 51207u /* also in tests/data/cases/grouped_mean.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_grouped_mean;
static const struct vat_template *const T = &vat_tmpl_grouped_mean;

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int with_unrated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 4)), "rating");
        assert_string_equal(json_string_value(json_object_get(t.params, "blank_ratings")),
                            "missing");
        assert_true(json_real_value(json_object_get(t.spec, "rel_tol")) == 1e-6);

        /* The trap is armed: some mean differs beyond the tolerance. */
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-6, 1e-9, &e), -1);

        /* Read the file: a rated product with a blank is always there, and
         * gold holds exactly the products with a rating, means in [1, 5]. */
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        struct vat_an_tally rated = VAT_AN_TALLY_INIT, blank = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++) {
            const char *p = vat_csv_get(&c, k, 1), *cell = vat_csv_get(&c, k, 4);
            vat_an_tally_get(&rated, p);
            vat_an_tally_get(&blank, p);
            if (*cell)
                vat_an_tally_add(&rated, p, 0);
            else
                vat_an_tally_add(&blank, p, 0);
        }
        bool armed = false, unrated = false;
        for (size_t k = 0; k < rated.n; k++) {
            const struct vat_an_entry *b = vat_an_tally_find(&blank, rated.e[k].key);
            json_t *m = json_object_get(gold, rated.e[k].key);
            if (rated.e[k].n == 0) {
                unrated = true;
                assert_null(m);
                assert_true(json_real_value(json_object_get(trap, rated.e[k].key)) == 0.0);
            } else {
                assert_non_null(m);
                assert_true(json_real_value(m) >= 1.0 && json_real_value(m) <= 5.0);
                armed |= b->n > 0;
            }
        }
        assert_true(armed);
        with_unrated += unrated;
        assert_int_equal(json_object_size(trap), rated.n);
        vat_an_tally_release(&rated);
        vat_an_tally_release(&blank);
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    /* The all-blank rule is exercised, not just stated. */
    assert_true(with_unrated >= 6);
    print_message("  %d/%d tasks have a product with only blank ratings\n",
                  with_unrated, NTASKS);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    assert_non_null(strstr(t.prompt, "missing, not zero"));
    assert_non_null(strstr(t.prompt, "has no mean"));
    assert_non_null(strstr(t.prompt, "left out of the answer"));
    assert_non_null(strstr(t.prompt, "unrounded"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "```csv\nreview_id,product,reviewer,reviewed_on,rating,"
                                     "verified_purchase\n"));
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 20, 6000, MAX_ATTEMPTS, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);

    /* A product no file holds (a nudged mean: tests/test_analytics.c). */
    json_t *gold = json_loads(t.gold, 0, NULL);
    json_object_set_new(gold, "Not A Product", json_real(3.0));
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Change one rating in the file, as a faulty writer would: reference
     * and SQL read the same file and agree, the planted ratings do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (*vat_csv_get(&c, k, 4) == 0)
        k++;
    char *cell = c.row[k].cell[4];
    cell[0] = cell[0] == '5' ? '4' : (char)(cell[0] + 1);
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

int main(void)
{
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_sixty_tasks, v),
        cmocka_unit_test_prestate(test_prompt_states_the_rules, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_wrong_gold, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
