/* test_workbooks.c — the workbook format of the templates that have it
 * (grouped_sum, grouped_mean, pivot, join_aggregate, dup_header): a CSV
 * task draws the same bytes whatever fixture_format says, workbook tasks
 * admit with their layout traps armed and every trap layout drawn, the
 * prompt shows the sheets as A1 grids (a workbook past the inline cap is
 * redrawn: a value prompt shows every row), the same task gives the same
 * bytes, and confirm and reference refuse a workbook changed or broken
 * behind them.  (tests/python_workbooks.py re-derives every gold through openpyxl.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "anxl.h"
#include "template.h"
#include "testutil.h"
#include "xlsxio.h"

#define SEED 515151u

extern const struct vat_template vat_tmpl_grouped_sum, vat_tmpl_grouped_mean, vat_tmpl_pivot,
    vat_tmpl_join_aggregate, vat_tmpl_dup_header;

struct wt {
    const struct vat_template *t;
    const char *traps[4]; /* trap layouts the template must draw, NULL-ended */
};

static const struct wt wts[] = {
    {&vat_tmpl_grouped_sum, {"own", "two_tables", "text_numbers", NULL}},
    {&vat_tmpl_grouped_mean, {"own", "two_tables", "text_numbers", NULL}},
    {&vat_tmpl_pivot, {"own", "totals", "two_tables", NULL}},
    {&vat_tmpl_join_aggregate, {"own", NULL}},
    {&vat_tmpl_dup_header, {"own", "group_header", NULL}},
};
#define NWT (sizeof wts / sizeof wts[0])

static struct vat_tt_env *env(const struct vat_template *t, const char *format)
{
    struct vat_tt_env *v = vat_tt_env_new(t, SEED);
    json_object_set_new(v->cfg, "fixture_format", json_string(format));
    return v;
}

/* A CSV task is the same task whether the format was asked for or fell
 * out of the mixed draw: the format and layout come from streams of
 * their own. */
static void test_csv_unchanged_under_mixed(void **state)
{
    (void)state;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *csv = env(wts[k].t, "csv"), *mixed = env(wts[k].t, "mixed");
        int nbook = 0, ncsv = 0;
        for (uint32_t i = 0; i < 12; i++) {
            struct vat_task a, b;
            struct vat_replay r;
            /* every file shown whole, so no draw is redrawn for its size */
            vat_tt_draw(mixed, &b, NULL, i, 1 << 20, 1, &r);
            if (strcmp(b.fixture[0].format, "xlsx") == 0) {
                nbook++;
                vat_task_clear(&b);
                continue;
            }
            ncsv++;
            vat_tt_draw(csv, &a, NULL, i, 1 << 20, 1, &r);
            vat_tt_assert_same_task(&a, &b);
            assert_null(json_object_get(b.params, "workbook"));
            vat_task_clear(&a);
            vat_task_clear(&b);
        }
        if (nbook == 0 || ncsv == 0)
            fail_msg("%s: mixed drew %d workbooks and %d CSVs of 12", wts[k].t->name, nbook, ncsv);
        vat_tt_env_free(csv);
        vat_tt_env_free(mixed);
    }
}

static bool has(const json_t *arr, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), s) == 0) return true;
    return false;
}

static void test_workbook_tasks(void **state)
{
    (void)state;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *v = env(wts[k].t, "xlsx");
        bool seen[4] = {false};
        for (uint32_t i = 0; i < 18; i++) {
            struct vat_task t;
            struct vat_replay r;
            /* every workbook shown whole (test_workbook_past_the_cap) */
            vat_tt_draw(v, &t, NULL, i, 1 << 20, 4, &r);
            vat_tt_assert_replays(&r);
            assert_true(t.self_contained);
            assert_string_equal(t.fixture[0].format, "xlsx");
            assert_non_null(strstr(t.fixture[0].path, ".xlsx"));
            const json_t *wb = json_object_get(t.params, "workbook");
            assert_non_null(wb);
            const char *sheet = json_string_value(json_object_get(wb, "sheet"));
            const char *trap = json_string_value(json_object_get(wb, "trap"));
            assert_non_null(sheet);
            assert_non_null(trap);
            for (int j = 0; wts[k].traps[j]; j++)
                if (strcmp(trap, wts[k].traps[j]) == 0)
                    seen[j] = true;
            /* The trap's layout is one the workbook has. */
            if (strcmp(trap, "own") != 0)
                assert_true(has(json_object_get(wb, "layouts"), trap));
            /* The workbook reads back, and the prompt names it, its
             * sheet, and shows the sheet as an A1 grid. */
            struct vat_xl_book b = VAT_XL_BOOK_INIT;
            struct vat_err e = {{0}};
            assert_int_equal(vat_xl_read(&b, t.root, t.fixture[0].path, &e), 0);
            assert_non_null(vat_xl_find_sheet(&b, sheet));
            vat_xl_release(&b);
            assert_non_null(strstr(t.prompt, t.fixture[0].path));
            char *named = vat_xasprintf("Sheet `%s`", sheet);
            assert_non_null(strstr(t.prompt, named));
            free(named);
            assert_non_null(strstr(t.prompt, "A1 notation"));
            assert_non_null(strstr(t.prompt, "|   | A | B |"));
            assert_non_null(strstr(t.prompt, "| 1 |"));
            /* A two-table task names its table by title, and the other
             * table is in the file too. */
            if (strcmp(trap, "two_tables") == 0) {
                char *title = vat_xasprintf("titled `%s`",
                                            json_string_value(json_object_get(wb, "table")));
                assert_non_null(strstr(t.prompt, title));
                free(title);
                assert_non_null(json_string_value(json_object_get(wb, "decoy")));
            }
            if (wts[k].t == &vat_tmpl_join_aggregate)
                assert_true(has(json_object_get(wb, "layouts"), "lookup_sheet"));
            vat_task_clear(&t);
        }
        for (int j = 0; wts[k].traps[j]; j++)
            if (!seen[j])
                fail_msg("%s: trap layout %s never drawn in 18 tasks", wts[k].t->name,
                         wts[k].traps[j]);
        vat_tt_env_free(v);
    }
}

/* A workbook has no program form: past the inline cap its value prompt
 * could not show every row, so the draw is refused, and the redraw
 * admitted shows every sheet whole. */
static void test_workbook_past_the_cap(void **state)
{
    (void)state;
    int templates_refused = 0;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *v = env(wts[k].t, "xlsx");
        struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = 6000};
        int refused = 0;
        for (uint32_t i = 0; i < 18; i++) {
            struct vat_task t;
            struct vat_replay r;
            struct vat_err e = {{0}};
            vat_task_init(&t, wts[k].t, i, v->dir);
            uint32_t a = 0;
            while (vat_task_draw(&t, a, &o, &r, &e) != 0) {
                refused += strstr(e.msg, "the value prompt does not show every row") != NULL;
                if (++a == 40)
                    fail_msg("%s never admitted: %s", t.id, e.msg);
            }
            assert_string_equal(t.fixture[0].format, "xlsx");
            assert_true(t.self_contained);
            vat_task_clear(&t);
        }
        print_message("  %s: %d workbook draws of 18 tasks refused past the cap\n",
                      wts[k].t->name, refused);
        templates_refused += refused > 0;
        vat_tt_env_free(v);
    }
    /* (a level-1 dup_header workbook is small enough to fit) */
    assert_true(templates_refused >= 3);
}

static void test_same_bytes(void **state)
{
    (void)state;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *v = env(wts[k].t, "xlsx");
        char *other = vat_test_tmpdir("workbooks-again");
        for (uint32_t i = 0; i < 3; i++) {
            struct vat_task a, b;
            struct vat_replay r;
            vat_tt_draw(v, &a, NULL, i, 6000, 4, &r);
            vat_tt_draw(v, &b, other, i, 6000, 4, &r);
            vat_tt_assert_same_task(&a, &b);
            vat_task_clear(&a);
            vat_task_clear(&b);
        }
        vat_test_rmtree(other);
        free(other);
        vat_tt_env_free(v);
    }
}

/* Moves every number cell of the first sheet below row 3 by one unit
 * and writes the workbook back, as an edit behind the tables would. */
static void nudge_workbook(const struct vat_task *t)
{
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_xl_read(&b, t->root, t->fixture[0].path, &e), 0);
    struct vat_xl_sheet *s = &b.sheet[0];
    size_t moved = 0;
    for (size_t i = 0; i < s->ncells; i++)
        if (s->cell[i].type == VAT_XL_NUMBER && s->cell[i].row >= 3) {
            s->cell[i].num += 1;
            moved++;
        }
    assert_true(moved > 0);
    assert_int_equal(vat_xl_write(&b, t->root, t->fixture[0].path, &e), 0);
    vat_xl_release(&b);
}

static void test_changed_and_broken_workbooks(void **state)
{
    (void)state;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *v = env(wts[k].t, "xlsx");
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        /* Confirm reads the file again: changed numbers change its
         * answer (pivot counts rows, which no number moves). */
        bool noticed = false;
        for (uint32_t i = 0; i < 6 && !noticed; i++) {
            vat_tt_draw(v, &t, NULL, i, 6000, 4, &r);
            nudge_workbook(&t);
            noticed = t.tmpl->confirm(&t, &e) != 0;
            vat_task_clear(&t);
        }
        if (wts[k].t != &vat_tmpl_pivot && !noticed)
            fail_msg("%s: confirm never noticed a changed workbook", wts[k].t->name);
        /* A broken workbook is an error with a reason, never a crash. */
        vat_tt_draw(v, &t, NULL, 0, 6000, 4, &r);
        char *path = vat_path_join(t.root, t.fixture[0].path);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, 40, SEEK_SET), 0);
        assert_int_equal(fwrite("garbage!", 1, 8, f), 8);
        fclose(f);
        free(path);
        free(t.gold);
        t.gold = NULL;
        memset(&e, 0, sizeof e);
        assert_int_equal(t.tmpl->reference(&t, &e), -1);
        assert_non_null(strstr(e.msg, t.id));
        assert_non_null(strstr(e.msg, "xlsx"));
        vat_task_clear(&t);
        vat_tt_env_free(v);
    }
}

/* An unknown fixture_format is an error naming it, not a silent CSV. */
static void test_unknown_format(void **state)
{
    (void)state;
    for (size_t k = 0; k < NWT; k++) {
        struct vat_tt_env *v = env(wts[k].t, "ods");
        struct vat_task t;
        struct vat_err e = {{0}};
        struct vat_rng rng;
        vat_task_init(&t, wts[k].t, 0, v->dir);
        t.cfg = v->cfg;
        t.master_seed = v->seed;
        t.inline_max_bytes = 6000;
        vat_rng_stream(&rng, v->seed, wts[k].t->name, 0, "task", 0, t.stream_hex);
        assert_int_equal(wts[k].t->generate(&t, &rng, &e), -1);
        assert_non_null(strstr(e.msg, "'ods'"));
        vat_task_clear(&t);
        vat_tt_env_free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_unchanged_under_mixed),
        cmocka_unit_test(test_workbook_tasks),
        cmocka_unit_test(test_workbook_past_the_cap),
        cmocka_unit_test(test_same_bytes),
        cmocka_unit_test(test_changed_and_broken_workbooks),
        cmocka_unit_test(test_unknown_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
