/* test_split.c — the split rule (src/split.h) and its end-to-end effect:
 * every prefix of a template's tasks holds floor or ceil of n*fraction
 * test tasks; the salt and the template move the offset; growing one
 * template's count by five moves no existing task and changes none of its
 * rows; held_out_templates mode puts the named templates wholly, and only
 * them, in every test file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "config.h"
#include "split.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *write_file(const char *dir, const char *name, const char *body)
{
    char *path = vat_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

/* Builds the templates `only` from config text into dir/name; returns
 * the root. */
static char *build(const char *dir, const char *name, const char *config, const char *only)
{
    char *cfgname = vat_xasprintf("%s.toml", name);
    char *cfg = write_file(dir, cfgname, config);
    char *root = vat_xasprintf("%s/%s", dir, name);
    char *cmd = vat_xasprintf("mkdir -p '%s' && '%s' build --config '%s' --root '%s' --jobs 2 "
                              "--only %s >/dev/null",
                              root, bin(), cfg, root, only);
    assert_int_equal(run(cmd), 0);
    free(cmd);
    free(cfg);
    free(cfgname);
    return root;
}

/* The lines of out/<table>/<split>.jsonl, as a JSON array of strings. */
static json_t *table_lines(const char *root, const char *table, const char *split)
{
    char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, split);
    char *data = vat_test_read_file(path, NULL);
    assert_non_null(data);
    json_t *lines = json_array();
    for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n"))
        json_array_append_new(lines, json_string(l));
    free(data);
    free(path);
    return lines;
}

static const char *line_task(const char *line, char *buf, size_t cap)
{
    json_t *row = json_loads(line, 0, NULL);
    assert_non_null(row);
    snprintf(buf, cap, "%s", json_string_value(json_object_get(row, "task_id")));
    json_decref(row);
    return buf;
}

/* ---- the rule itself ---------------------------------------------------- */

static void test_prefix_within_one_task(void **state)
{
    (void)state;
    static const double fractions[] = {0.05, 0.1, 0.2, 0.25, 1.0 / 3.0, 0.5, 0.75, 0.9};
    static const char *const salts[] = {"vat-split-v1", "", "another salt"};
    for (size_t fi = 0; fi < sizeof fractions / sizeof fractions[0]; fi++) {
        double f = fractions[fi];
        for (size_t si = 0; si < sizeof salts / sizeof salts[0]; si++) {
            for (size_t ti = 0; vat_registry[ti]; ti++) {
                const char *tm = vat_registry[ti]->name;
                long test = 0;
                for (uint32_t n = 1; n <= 400; n++) {
                    test += vat_split_is_test(salts[si], f, tm, n - 1);
                    /* floor/ceil also put a task on each side as soon as
                     * n*f >= 1 and n*(1-f) >= 1. */
                    double want = (double)n * f;
                    assert_true((double)test >= floor(want) - 1e-9);
                    assert_true((double)test <= ceil(want) + 1e-9);
                }
            }
        }
    }
}

static void test_salt_and_template_move_the_offset(void **state)
{
    (void)state;
    /* With fraction 0.2 each template's test indices are one residue class
     * mod 5 picked by its offset; salts and templates must not all agree. */
    int differs_by_salt = 0, differs_by_template = 0;
    for (size_t ti = 0; vat_registry[ti]; ti++) {
        const char *tm = vat_registry[ti]->name;
        for (uint32_t i = 0; i < 50; i++) {
            differs_by_salt += vat_split_is_test("vat-split-v1", 0.2, tm, i) !=
                               vat_split_is_test("vat-split-v2", 0.2, tm, i);
            differs_by_template += vat_split_is_test("vat-split-v1", 0.2, tm, i) !=
                                   vat_split_is_test("vat-split-v1", 0.2, "some_other_name", i);
        }
    }
    assert_true(differs_by_salt > 0);
    assert_true(differs_by_template > 0);
}

static void test_side_follows_config(void **state)
{
    (void)state;
    static const char text[] = "[corpus]\ntest_fraction = 0.3\nsplit_salt = \"s1\"\n";
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_parse(&c, text, strlen(text), "mem.toml", &e), 0);
    for (size_t ti = 0; vat_registry[ti]; ti++)
        for (uint32_t i = 0; i < 100; i++)
            assert_string_equal(vat_split_side(&c, vat_registry[ti]->name, i),
                                vat_split_is_test("s1", 0.3, vat_registry[ti]->name, i) ? "test"
                                                                                         : "train");
    vat_config_release(&c);
}

static void test_held_out_side(void **state)
{
    (void)state;
    const char *a = vat_registry[0]->name, *b = vat_registry[1]->name;
    char *text = vat_xasprintf("[corpus]\nsplit = \"held_out_templates\"\n"
                               "held_out_templates = [\"%s\"]\n",
                               b);
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_parse(&c, text, strlen(text), "mem.toml", &e), 0);
    for (uint32_t i = 0; i < 200; i++) {
        assert_string_equal(vat_split_side(&c, a, i), "train");
        assert_string_equal(vat_split_side(&c, b, i), "test");
    }
    vat_config_release(&c);
    free(text);
}

/* ---- end to end --------------------------------------------------------- */

static const char grow_before[] =
    "[corpus]\nmaster_seed = 11\ntest_fraction = 0.3\n"
    "[templates.grouped_sum]\ncount = 7\n"
    "[templates.regex_iso_dates]\ncount = 4\n";
static const char grow_after[] =
    "[corpus]\nmaster_seed = 11\ntest_fraction = 0.3\n"
    "[templates.grouped_sum]\ncount = 12\n"
    "[templates.regex_iso_dates]\ncount = 4\n";

/* Every row of the first corpus is in the second, byte for byte, in the
 * same split file: adding five tasks to one template moved nothing. */
static void test_growing_a_count_moves_nothing(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("split-grow");
    char *before = build(dir, "before", grow_before, "grouped_sum,regex_iso_dates");
    char *after = build(dir, "after", grow_after, "grouped_sum,regex_iso_dates");
    long moved_in = 0;
    for (int t = 0; t < VAT_N_TABLES; t++) {
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            json_t *old = table_lines(before, vat_table_names[t], vat_split_names[s]);
            json_t *now = table_lines(after, vat_table_names[t], vat_split_names[s]);
            size_t i, j;
            json_t *l, *m;
            json_array_foreach(old, i, l) {
                int found = 0;
                json_array_foreach(now, j, m) {
                    if (strcmp(json_string_value(l), json_string_value(m)) == 0) {
                        found = 1;
                        break;
                    }
                }
                if (!found)
                    fail_msg("%s/%s row %zu of the first build is not in the second",
                             vat_table_names[t], vat_split_names[s], i);
            }
            /* The new rows are the new tasks' (indices 7..11) only. */
            json_array_foreach(now, j, m) {
                char id[128];
                line_task(json_string_value(m), id, sizeof id);
                int known = 0;
                json_array_foreach(old, i, l) {
                    char oid[128];
                    if (strcmp(line_task(json_string_value(l), oid, sizeof oid), id) == 0) {
                        known = 1;
                        break;
                    }
                }
                if (!known) {
                    assert_true(strncmp(id, "grouped_sum-", 12) == 0);
                    assert_true(atoi(id + 12) >= 7);
                    moved_in += t == VAT_T_EXPERIENCE;
                }
            }
            json_decref(old);
            json_decref(now);
        }
    }
    assert_int_equal(moved_in, 5);
    vat_test_rmtree(dir);
    free(before);
    free(after);
    free(dir);
}

static void test_held_out_templates_only_in_test(void **state)
{
    (void)state;
    static const char config[] =
        "[corpus]\nmaster_seed = 5\nsplit = \"held_out_templates\"\n"
        "held_out_templates = [\"regex_iso_dates\"]\n"
        "[templates.grouped_sum]\ncount = 4\n"
        "[templates.regex_iso_dates]\ncount = 4\n"
        "[templates.sql_paid_revenue]\ncount = 3\n";
    char *dir = vat_test_tmpdir("split-held");
    char *root = build(dir, "held", config, "grouped_sum,regex_iso_dates,sql_paid_revenue");
    for (int t = 0; t < VAT_N_TABLES; t++) {
        long rows[VAT_N_SPLITS] = {0};
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            json_t *lines = table_lines(root, vat_table_names[t], vat_split_names[s]);
            size_t i;
            json_t *l;
            json_array_foreach(lines, i, l) {
                json_t *row = json_loads(json_string_value(l), 0, NULL);
                assert_non_null(row);
                const char *id = json_string_value(json_object_get(row, "task_id"));
                assert_non_null(id);
                int held = strncmp(id, "regex_iso_dates-", 16) == 0;
                assert_int_equal(held, s == VAT_SPLIT_TEST);
                assert_string_equal(json_string_value(json_object_get(row, "split")),
                                    vat_split_names[s]);
                /* Paths of the row follow its task. */
                const char *path = json_string_value(json_object_get(row, "path"));
                if (path)
                    assert_non_null(strstr(path, id));
                json_decref(row);
                rows[s]++;
            }
            json_decref(lines);
        }
        assert_true(rows[VAT_SPLIT_TRAIN] > 0);
        assert_true(rows[VAT_SPLIT_TEST] > 0);
    }
    vat_test_rmtree(dir);
    free(root);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_within_one_task),
        cmocka_unit_test(test_salt_and_template_move_the_offset),
        cmocka_unit_test(test_side_follows_config),
        cmocka_unit_test(test_held_out_side),
        cmocka_unit_test(test_growing_a_count_moves_nothing),
        cmocka_unit_test(test_held_out_templates_only_in_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
