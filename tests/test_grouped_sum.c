/* test_grouped_sum.c — what is particular to the grouped_sum template: over
 * 60 tasks the files hold 3 to 6 regions, some a region without any paid
 * order and some a customer quoted for a comma; the prompt states the paid
 * filter, the omitted regions and the tolerance; confirm catches a wrong gold
 * and a writer bug.  Admission within the redraws allowed, "same seed, same
 * bytes", the prompt's data section, confirm refusing the trap as gold and a
 * nudged gold, and the golden cases of tests/data/cases/grouped_sum.txt (a
 * region with only non-paid orders, exact cent sums, quoted customer names,
 * broken files, checker cases) are checked for every analytics template by
 * tests/test_analytics.c. */
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

#define SEED 77031u /* also in tests/data/cases/grouped_sum.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 1 /* every task admits on its first draw */

extern const struct vat_template vat_tmpl_grouped_sum;
static const struct vat_template *const T = &vat_tmpl_grouped_sum;

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int with_unpaid_region = 0, with_quoted = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 2)), "region");
        assert_string_equal(json_string_value(json_object_get(t.params, "status")), "paid");

        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);

        /* Regions in the file but not in gold have no paid order. */
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        struct vat_an_tally regions = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++)
            vat_an_tally_add(&regions, vat_csv_get(&c, k, 2), 0);
        assert_true(regions.n >= 3 && regions.n <= 6);
        if (regions.n > json_object_size(gold))
            with_unpaid_region++;
        vat_an_tally_release(&regions);
        json_decref(gold);
        vat_csv_release(&c);

        size_t len;
        char *file = vat_tt_fixture_text(&t, 0, &len);
        with_quoted += strchr(file, '"') != NULL;
        free(file);
        vat_task_clear(&t);
    }
    /* The generator exercises the stated rules, not just the easy case. */
    assert_true(with_unpaid_region >= 3);
    assert_true(with_quoted >= 3);
    print_message("  %d/%d tasks have a region without paid orders, %d a quoted customer\n",
                  with_unpaid_region, NTASKS, with_quoted);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    assert_non_null(
        strstr(t.prompt, "```csv\norder_id,customer,region,status,amount,ordered_on\n"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "exactly `paid`"));
    assert_non_null(strstr(t.prompt, "Include only regions that have at least one paid order"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    vat_task_clear(&t);
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    /* every file shown whole: the value form, whatever its size */
    vat_tt_draw(v, &t, NULL, 20, 1 << 20, MAX_ATTEMPTS, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);

    /* A region dropped from gold (a nudged total: tests/test_analytics.c). */
    json_t *gold = json_loads(t.gold, 0, NULL);
    json_object_del(gold, json_object_iter_key(json_object_iter(gold)));
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
    /* Rewrite the file so that one paid order lost a cent, as a faulty
     * writer would; reference and SQL both read the file and agree, but
     * the generator's planted totals do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 3), "paid") != 0)
        k++;
    char *cell = c.row[k].cell[4];
    size_t n = strlen(cell);
    cell[n - 1] = cell[n - 1] == '0' ? '1' : (char)(cell[n - 1] - 1);
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
