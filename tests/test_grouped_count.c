/* test_grouped_count.c — what is particular to the grouped_count template:
 * over 60 tasks the trap is armed (some team has two spellings in every file,
 * often one differing only by a trailing space); the prompt states the
 * normalisation; confirm catches a writer bug.  Admission within the redraws
 * allowed, "same seed, same bytes", the prompt's data section, confirm
 * refusing the trap as gold and a nudged gold, and the golden cases of
 * tests/data/cases/grouped_count.txt (trailing-space, case and inner-space
 * labels, broken files, checker cases for key case, untrimmed keys and
 * counts) are checked for every analytics template by tests/test_analytics.c. */
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

#define SEED 64411u /* also in tests/data/cases/grouped_count.txt */
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_grouped_count;
static const struct vat_template *const T = &vat_tmpl_grouped_count;

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int with_trailing_only = 0, with_case_only = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 3)), "team");
        assert_true(json_is_true(json_object_get(t.spec, "integer")));

        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 0, 0, &e), -1);

        /* Gold keys are normalised, counts add up to the rows, and some team
         * has two raw spellings in every file. */
        const char *k;
        json_t *x;
        json_int_t total = 0;
        json_object_foreach(gold, k, x) {
            char nk[64];
            vat_norm_label(k, nk, sizeof nk);
            assert_string_equal(k, nk);
            assert_true(json_is_integer(x));
            total += json_integer_value(x);
        }
        assert_int_equal(total, t.fixture[0].rows);
        assert_true(json_object_size(trap) > json_object_size(gold));
        bool trailing_only = false, case_only = false;
        const char *k2;
        json_t *y;
        json_object_foreach(trap, k, x) {
            json_object_foreach(trap, k2, y) {
                size_t n = strlen(k);
                if (strlen(k2) == n + 1 && strncmp(k, k2, n) == 0 && k2[n] == ' ')
                    trailing_only = true;
                char a[64], b[64];
                vat_norm_label(k, a, sizeof a);
                vat_norm_label(k2, b, sizeof b);
                if (strcmp(k, k2) != 0 && strlen(k2) == n && strlen(a) == n && strcmp(a, b) == 0)
                    case_only = true;
            }
        }
        with_trailing_only += trailing_only;
        with_case_only += case_only;
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    /* The subtle variants are exercised, not just possible. */
    assert_true(with_trailing_only >= 25);
    assert_true(with_case_only >= 10);
    print_message("  %d/%d tasks hold a label differing only by a trailing space, %d "
                  "one differing only by case\n",
                  with_trailing_only, NTASKS, with_case_only);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_states_the_rules(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, MAX_ATTEMPTS, &r);
    /* (The edge spaces of the labels reach the prompt byte for byte: the
     * whole file is inlined as it is, tests/test_analytics.c.) */
    assert_non_null(strstr(t.prompt, "removing the spaces at both ends and lower-casing"));
    assert_non_null(strstr(t.prompt, "spaces inside a name stay"));
    assert_non_null(strstr(t.prompt, "trimmed and in lower case"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 0"));
    /* Not even as `team`: the example keys are placeholders. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(gold, k, x) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "`%s`", k);
        assert_null(strstr(t.prompt, quoted));
    }
    json_decref(gold);
    assert_string_equal(json_string_value(json_object_get(t.params, "key_normalisation")),
                        "trim spaces at both ends, lower-case");
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, MAX_ATTEMPTS, &r);
    /* Move one ticket to another team in the file, as a faulty writer
     * would: reference and SQL agree, the planted counts do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    char a[64], b[64];
    vat_norm_label(vat_csv_get(&c, 1, 3), a, sizeof a);
    size_t k = 2;
    for (;; k++) {
        assert_true(k < c.nrows);
        vat_norm_label(vat_csv_get(&c, k, 3), b, sizeof b);
        if (strcmp(a, b) != 0)
            break;
    }
    free(c.row[1].cell[3]);
    c.row[1].cell[3] = vat_xstrdup(vat_csv_get(&c, k, 3));
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
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
