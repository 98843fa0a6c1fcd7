/* test_filtered_total.c — what is particular to the filtered_total template:
 * over 60 tasks the trap is armed (a negative adjustment of the asked account
 * in every file); the prompt names the account and the abs() rule; confirm
 * catches a writer bug.  Admission within the redraws allowed, "same seed,
 * same bytes", the prompt's data section, confirm refusing the trap as gold
 * and a nudged gold, and the golden cases of
 * tests/data/cases/filtered_total.txt (negative, positive and all-negative
 * adjustments, decoy accounts and kinds, broken files, checker cases for the
 * number answer) are checked for every analytics template by
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

#define SEED 90023u /* also in tests/data/cases/filtered_total.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_filtered_total;
static const struct vat_template *const T = &vat_tmpl_filtered_total;

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int with_positive = 0, with_decoy_account = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 4)), "amount");
        const char *account = json_string_value(json_object_get(t.params, "account"));
        assert_non_null(account);
        assert_string_equal(json_string_value(json_object_get(t.params, "kind")), "adjustment");
        char quoted[96];
        snprintf(quoted, sizeof quoted, "`account` is exactly `%s`", account);
        assert_non_null(strstr(t.prompt, quoted));

        /* The trap is armed beyond the tolerance. */
        json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
        json_t *trap = json_loads(t.trap, JSON_DECODE_ANY, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-6, &e), -1);
        assert_true(json_real_value(gold) > json_real_value(trap));

        /* Every file holds a negative adjustment of the asked account. */
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        bool neg = false, pos = false, other = false;
        for (size_t k = 1; k < c.nrows; k++) {
            if (strcmp(vat_csv_get(&c, k, 3), "adjustment") != 0)
                continue;
            if (strcmp(vat_csv_get(&c, k, 2), account) != 0) {
                other = true;
                continue;
            }
            if (vat_csv_get(&c, k, 4)[0] == '-')
                neg = true;
            else
                pos = true;
        }
        assert_true(neg);
        with_positive += pos;
        with_decoy_account += other;
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    assert_true(with_positive >= 30);
    assert_int_equal(with_decoy_account, NTASKS);
    print_message("  %d/%d tasks mix positive and negative adjustments\n",
                  with_positive, NTASKS);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    assert_non_null(strstr(t.prompt, "absolute values of `amount`"));
    assert_non_null(strstr(t.prompt, "`kind` is exactly `adjustment`"));
    assert_non_null(strstr(t.prompt, "an amount of -5.00 adds 5.00"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    /* The format example is a placeholder, not a number. */
    assert_non_null(strstr(t.prompt, "written like <total>"));
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Flip the sign of one of the asked account's adjustments, as a faulty
     * writer might: the magnitude is unchanged and gold still agrees ... */
    const char *account = json_string_value(json_object_get(t.params, "account"));
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 2), account) != 0 ||
           strcmp(vat_csv_get(&c, k, 3), "adjustment") != 0)
        k++;
    char *cell = c.row[k].cell[4];
    char *flipped = cell[0] == '-' ? vat_xstrdup(cell + 1) : vat_xasprintf("-%s", cell);
    c.row[k].cell[4] = flipped;
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), 0);
    /* ... but a cent lost is caught by the planted magnitude. */
    size_t n = strlen(flipped);
    flipped[n - 1] = flipped[n - 1] == '0' ? '1' : (char)(flipped[n - 1] - 1);
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    c.row[k].cell[4] = cell;
    free(flipped);
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
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
