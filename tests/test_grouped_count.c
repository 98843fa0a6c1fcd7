/* test_grouped_count.c — what is particular to the grouped_count template:
 * over 60 tasks the trap is armed (some team has two spellings in every file,
 * often one differing only by a trailing space); the prompt states the
 * normalisation; confirm catches a writer bug.  Admission within the redraws
 * allowed, "same seed, same bytes", the prompt's data section, confirm
 * refusing the trap as gold and a nudged gold, and the golden cases of
 * tests/data/cases/grouped_count.txt (trailing-space, case and inner-space
 * labels, broken files, checker cases for key case, untrimmed keys and
 * counts) are checked for every analytics template by tests/test_analytics.c.
 * The program form (answer_form = "sql"): the prompt spells the key as
 * normalised; honest rewrites of gold pass; near misses (lower() or trim()
 * alone, GROUP BY the column shadowed by the alias, a raw label shown,
 * COUNT of a column with blanks, a team list copied from the main file,
 * the other direction) fail on some fixture; the trap gives other rows
 * than gold on every fixture; each variant lacks a team of the main file
 * and has a team it lacks.  The generic checks of the form are in
 * tests/test_progform.c. */
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
#include "values.h"
#include "verifiers.h"

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
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_ATTEMPTS, &r);
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
    assert_true(vat_csv_set(&c, 1, 3, vat_csv_get(&c, k, 3)));
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

/* What a program-form task's gold spells: its table, its value column and
 * its order's direction. */
struct pf_names {
    char table[64], out[64];
    bool desc;
};

static void pf_names_of(const struct vat_task *t, struct pf_names *n)
{
    const char *tab =
        json_string_value(json_object_get(json_object_get(t->spec, "load"), "table"));
    assert_non_null(tab);
    snprintf(n->table, sizeof n->table, "%s", tab);
    const char *a = strstr(t->gold, "COUNT(*) AS ");
    assert_non_null(a);
    a += strlen("COUNT(*) AS ");
    snprintf(n->out, sizeof n->out, "%.*s", (int)strcspn(a, "\n"), a);
    n->desc = strstr(t->gold, " DESC") != NULL;
}

/* q with {t} (the table), {o} (the value column), {d} (the task's
 * direction: " DESC" or ""), {r} (the other one) and {k} (extra text). */
static char *pf_query(const char *q, const struct pf_names *n, const char *k)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = q; *p; p++) {
        if (p[0] == '{' && p[1] && p[2] == '}') {
            const char *x = p[1] == 't'   ? n->table
                            : p[1] == 'o' ? n->out
                            : p[1] == 'd' ? (n->desc ? " DESC" : "")
                            : p[1] == 'r' ? (n->desc ? "" : " DESC")
                                          : k;
            vat_buf_puts(&b, x);
            p += 2;
        } else {
            vat_buf_putc(&b, *p);
        }
    }
    return vat_buf_detach(&b);
}

/* The rows query q gives on fixture fi of t. */
static json_t *pf_rows(const struct vat_task *t, int fi, const char *q)
{
    struct vat_verdict v;
    json_t *rows = vat_sql_run(t->spec, t->root, t->fixture[fi].path, q, strlen(q), &v);
    assert_non_null(rows);
    return rows;
}

/* Whether rows (key first) hold a row whose key is key. */
static bool pf_has_key(const json_t *rows, const char *key)
{
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        if (strcmp(json_string_value(json_array_get(row, 0)), key) == 0)
            return true;
    }
    return false;
}

static void test_program_form(void **state)
{
    (void)state;
    static const char *const good[] = {
        "select lower(trim(team)) as team, count(ticket_id) as {o} from {t} group by 1 "
        "order by 1{d}",
        "SELECT k AS team, COUNT(*) AS {o} FROM (SELECT LOWER(TRIM(team)) AS k FROM {t}) "
        "GROUP BY k ORDER BY k{d};",
    };
    static const char *const near[] = {
        /* lower() alone keeps the edge spaces */
        "SELECT LOWER(team) AS team, COUNT(*) AS {o} FROM {t} GROUP BY LOWER(team) "
        "ORDER BY LOWER(team){d}",
        /* trim() alone keeps the case */
        "SELECT TRIM(team) AS team, COUNT(*) AS {o} FROM {t} GROUP BY TRIM(team) "
        "ORDER BY TRIM(team){d}",
        /* GROUP BY names the column, not the alias shadowing it */
        "SELECT LOWER(TRIM(team)) AS team, COUNT(*) AS {o} FROM {t} GROUP BY team "
        "ORDER BY 1{d}",
        /* the groups right, the key a raw label of the group */
        "SELECT team, COUNT(*) AS {o} FROM {t} GROUP BY LOWER(TRIM(team)) "
        "ORDER BY LOWER(TRIM(team)){d}",
        /* a column with blanks counted, not the rows */
        "SELECT LOWER(TRIM(team)) AS team, COUNT(requester) AS {o} FROM {t} GROUP BY 1 "
        "ORDER BY 1{d}",
        "SELECT LOWER(TRIM(team)) AS team, COUNT(priority) AS {o} FROM {t} GROUP BY 1 "
        "ORDER BY 1{d}",
        "SELECT LOWER(TRIM(team)) AS team, COUNT(channel) AS {o} FROM {t} GROUP BY 1 "
        "ORDER BY 1{d}",
        /* the main file's teams copied into the query */
        "SELECT LOWER(TRIM(team)) AS team, COUNT(*) AS {o} FROM {t} WHERE LOWER(TRIM(team)) "
        "IN ({k}) GROUP BY 1 ORDER BY 1{d}",
        /* the other direction */
        "SELECT LOWER(TRIM(team)) AS team, COUNT(*) AS {o} FROM {t} GROUP BY 1 ORDER BY 1{r}",
    };
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < 8; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, MAX_ATTEMPTS, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_non_null(strstr(t.prompt, "`team` (the team's normalised name"));
        struct pf_names n;
        pf_names_of(&t, &n);
        /* The main file's teams, as SQL literals. */
        struct vat_buf keys = VAT_BUF_INIT;
        const char *key;
        json_t *x;
        json_object_foreach(json_object_get(t.spec, "value_answer"), key, x) {
            if (keys.len)
                vat_buf_puts(&keys, ", ");
            vat_sqlgen_put_literal(&keys, key);
        }
        for (size_t q = 0; q < sizeof good / sizeof *good; q++) {
            char *sql = pf_query(good[q], &n, keys.data);
            struct vat_verdict vd = vat_tt_check(&t, sql);
            if (vd.score != 1.0)
                print_message("task %u, good query %zu: %s: %s\n", i, q, vd.code, vd.reason);
            assert_true(vd.score == 1.0);
            free(sql);
        }
        for (size_t q = 0; q < sizeof near / sizeof *near; q++) {
            char *sql = pf_query(near[q], &n, keys.data);
            struct vat_verdict vd = vat_tt_check(&t, sql);
            if (!(vd.gate_passed && vd.score == 0.0))
                print_message("task %u, near miss %zu passes: %s\n", i, q, sql);
            assert_true(vd.gate_passed);
            assert_true(vd.score == 0.0);
            free(sql);
        }
        vat_buf_release(&keys);
        /* The trap returns other rows than gold on every fixture; each
         * variant lacks a team of the main file and has one it lacks. */
        json_t *main_rows = pf_rows(&t, 0, t.gold);
        for (int k = 0; k < t.n_fixtures; k++) {
            json_t *g = pf_rows(&t, k, t.gold), *tr = pf_rows(&t, k, t.trap);
            assert_false(vat_sqlgen_rows_equal(g, tr, true, 0, 0, NULL, 0));
            if (k > 0) {
                bool lacks = false, adds = false;
                size_t j;
                json_t *row;
                json_array_foreach(main_rows, j, row) {
                    lacks = lacks || !pf_has_key(g, json_string_value(json_array_get(row, 0)));
                }
                json_array_foreach(g, j, row) {
                    adds = adds || !pf_has_key(main_rows, json_string_value(json_array_get(row, 0)));
                }
                if (!lacks || !adds) {
                    char *a = json_dumps(main_rows, JSON_COMPACT), *b = json_dumps(g, JSON_COMPACT);
                    print_message("task %u fixture %d: %s vs %s\n", i, k, a, b);
                    free(a);
                    free(b);
                }
                assert_true(lacks);
                assert_true(adds);
            }
            json_decref(g);
            json_decref(tr);
        }
        json_decref(main_rows);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

int main(void)
{
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_sixty_tasks, v),
        cmocka_unit_test_prestate(test_prompt_states_the_rules, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
