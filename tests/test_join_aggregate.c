/* test_join_aggregate.c — what is particular to the join_aggregate template:
 * over 60 tasks every fixture holds a customer with three history rows who
 * ordered, and the trap (fan-out) inflates the totals in every task; the
 * prompt shows schema and rows, whole (past the inline cap the task is a
 * program, its prompt cut to each table's leading rows); confirm (C over
 * plain row reads) catches a writer bug.  Admission within the redraws allowed, "same
 * seed, same bytes", the prompt's data section, confirm refusing the trap as
 * gold and a nudged gold, and the golden cases of
 * tests/data/cases/join_aggregate.txt (a three-row customer who moved back,
 * stored newest first, broken databases, checker cases) are checked for every
 * analytics template by tests/test_analytics.c.  In the program form (one
 * SELECT over the database and its variant databases): the orders table
 * carries the task's own name, the trap's rows differ from gold's on every
 * database, each variant has a country only the fan-out lists, and
 * plausible near-miss queries fail on some database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "admit.h"
#include "analytics.h"
#include "jsonout.h"
#include "sqlgen.h"
#include "sqlio.h"
#include "template.h"
#include "testutil.h"

#define SEED 33911u /* also in tests/data/cases/join_aggregate.txt */
#define NTASKS 60
#define MAX_REDRAWS 5
#define FIRST_DRAW 1 /* a task drawn alone admits on attempt 0 */

extern const struct vat_template vat_tmpl_join_aggregate;
static const struct vat_template *const T = &vat_tmpl_join_aggregate;

/* Runs a one-number query on the task's fixture. */
static long long query_number(const struct vat_task *t, const char *sql)
{
    sqlite3 *db = NULL;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlite_open_ro(t->root, t->fixture[0].path, &db, &e), 0);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The sum of an object's numbers. */
static double total_of(const char *text)
{
    json_t *o = json_loads(text, 0, NULL);
    assert_non_null(o);
    double s = 0;
    const char *k;
    json_t *x;
    json_object_foreach(o, k, x) s += json_number_value(x);
    json_decref(o);
    return s;
}

/* ---- sixty tasks ------------------------------------------------------------ */

static void test_sixty_tasks(void **state)
{
    struct vat_tt_env *v = *state;
    int newest_first = 0, moved_back = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        /* every file shown whole: the value form, whatever its size */
        vat_tt_draw(v, &t, NULL, i, 1 << 20, MAX_REDRAWS + 1, &r);
        assert_int_equal(t.n_fixtures, 1);
        assert_int_equal(json_array_size(t.fixture[0].columns), 7);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 5)),
                            "customer_history.country");
        assert_int_equal(t.fixture[0].rows,
                         query_number(&t, "SELECT (SELECT COUNT(*) FROM orders) + "
                                          "(SELECT COUNT(*) FROM customer_history)"));
        /* A customer with three history rows placed an order. */
        assert_true(query_number(&t, "SELECT COUNT(*) FROM orders WHERE customer_id IN (SELECT "
                                     "customer_id FROM customer_history GROUP BY customer_id "
                                     "HAVING COUNT(*) = 3)") >= 1);
        /* Storage order: some customer's latest row is not its last row. */
        newest_first += query_number(&t, "SELECT COUNT(*) FROM customer_history AS h WHERE "
                                         "h.rowid = (SELECT MAX(rowid) FROM customer_history AS "
                                         "x WHERE x.customer_id = h.customer_id) AND "
                                         "h.valid_from < (SELECT MAX(valid_from) FROM "
                                         "customer_history AS x WHERE x.customer_id = "
                                         "h.customer_id)") > 0;
        moved_back += query_number(&t, "SELECT COUNT(*) FROM (SELECT customer_id FROM "
                                       "customer_history GROUP BY customer_id HAVING COUNT(*) > "
                                       "COUNT(DISTINCT country))") > 0;
        vat_task_clear(&t);
    }
    assert_true(newest_first >= 5);
    assert_true(moved_back >= 3);
    print_message("  %d/%d tasks store history newest first, %d have a customer who "
                  "moved back\n",
                  newest_first, NTASKS, moved_back);
}

/* The trap differs from gold in every task: the fan-out counts an order
 * once per history row, so the trap's grand total is larger. */
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
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-6, &e), -1);
        json_decref(gold);
        json_decref(trap);
        double g = total_of(t.gold), x = total_of(t.trap);
        assert_true(x > g + 5.0 - 1e-6); /* at least one order of 5.00 or more, counted again */
        /* Gold's grand total is every order once. */
        long long cents = query_number(&t, "SELECT SUM(CAST(round(amount * 100) AS INTEGER)) "
                                           "FROM orders");
        assert_true(g * 100 > (double)cents - 0.5 && g * 100 < (double)cents + 0.5);
        vat_task_clear(&t);
    }
}

static void test_prompt_shows_schema_and_rows(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 3, 1 << 20, FIRST_DRAW, &r);
    assert_non_null(strstr(t.prompt, "CREATE TABLE orders"));
    assert_non_null(strstr(t.prompt, "CREATE TABLE customer_history"));
    assert_non_null(strstr(t.prompt, "INSERT INTO orders VALUES"));
    assert_non_null(strstr(t.prompt, "INSERT INTO customer_history VALUES"));
    assert_non_null(strstr(t.prompt, "The schema and all rows"));
    assert_null(strstr(t.prompt, "Only the leading rows fit"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "latest `valid_from`"));
    assert_non_null(strstr(t.prompt, "count each order exactly once"));
    assert_non_null(strstr(t.prompt, "lived elsewhere on the order date"));
    assert_non_null(strstr(t.prompt, "not listed with 0"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    /* Every order is shown. */
    char expect[64];
    snprintf(expect, sizeof expect, "-- orders: all %lld rows",
             query_number(&t, "SELECT COUNT(*) FROM orders"));
    assert_non_null(strstr(t.prompt, expect));
    vat_task_clear(&t);

    /* Past the cap the question is asked as a program (one SELECT over
     * the database): a value question may only ask about rows it shows. */
    vat_tt_draw(v, &t, NULL, 4, 700, FIRST_DRAW, &r);
    assert_string_equal(vat_task_answer_kind(&t), "sql");
    vat_tt_assert_states_shape(&t);
    assert_non_null(strstr(t.prompt, "the leading rows of each table"));
    assert_non_null(strstr(t.prompt, "Only the leading rows fit"));
    assert_non_null(strstr(t.prompt, "CREATE TABLE customer_history"));
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct vat_tt_env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(v, &t, NULL, 21, 6000, FIRST_DRAW, &r);
    /* A writer that lost a cent on one order: the SQL reference and the C
     * row reads both read the file and agree, the planted totals do not. */
    char *path = vat_path_join(t.root, t.fixture[0].path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE orders SET amount = amount - 0.01 WHERE rowid = "
                                  "(SELECT MIN(rowid) FROM orders)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    free(path);
    struct vat_err e = {{0}};
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- the program form ----------------------------------------------------- */

/* Does any row of rows have `country` as its first cell? */
static bool lists(const json_t *rows, const char *country)
{
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
        if (strcmp(json_string_value(json_array_get(row, 0)), country) == 0)
            return true;
    return false;
}

static void test_program_form(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(T, SEED);
    json_object_set_new(v->cfg, "answer_form", json_string("sql"));
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 20, &r);
        assert_string_equal(vat_task_answer_form(&t), "sql");
        assert_int_equal(t.n_fixtures, 4);
        /* The orders table has the task's name: the gold and the prompt
         * spell it, the database holds it. */
        const json_t *tabs = json_object_get(t.spec, "tables");
        assert_int_equal(json_array_size(tabs), 2);
        const char *orders = json_string_value(json_array_get(tabs, 0));
        assert_string_equal(json_string_value(json_array_get(tabs, 1)), "customer_history");
        char *from = vat_xasprintf("FROM %s AS o", orders);
        char *create = vat_xasprintf("CREATE TABLE %s (", orders);
        assert_non_null(strstr(t.gold, from));
        assert_non_null(strstr(t.prompt, create));
        free(from);
        free(create);
        struct vat_err e = {{0}};
        json_t *gold = vat_sqlgen_run_all(&t, t.gold, &e);
        json_t *trap = vat_sqlgen_run_all(&t, t.trap, &e);
        assert_non_null(gold);
        assert_non_null(trap);
        for (size_t k = 0; k < (size_t)t.n_fixtures; k++) {
            const json_t *g = json_array_get(gold, k), *tr = json_array_get(trap, k);
            assert_false(vat_sqlgen_rows_equal(g, tr, true, 1e-9, 1e-6, NULL, 0));
            if (k == 0)
                continue;
            /* A country the fan-out lists and gold leaves out (a customer's
             * first country that nobody has now). */
            bool ghost = false;
            size_t j;
            const json_t *row;
            json_array_foreach(tr, j, row)
                ghost |= !lists(g, json_string_value(json_array_get(row, 0)));
            assert_true(ghost);
        }
        /* Near misses: the latest row by storage order, the country on the
         * order date, the history driving the join (an orderless country
         * listed with 0), the first country instead of the latest. */
        char *misses[4];
        misses[0] = vat_xasprintf(
            "SELECT h.country, SUM(o.amount) FROM %s AS o JOIN customer_history AS h ON "
            "h.customer_id = o.customer_id WHERE h.rowid = (SELECT MAX(x.rowid) FROM "
            "customer_history AS x WHERE x.customer_id = h.customer_id) GROUP BY h.country "
            "ORDER BY h.country%s",
            orders, strstr(t.gold, " DESC") ? " DESC" : "");
        misses[1] = vat_xasprintf(
            "SELECT h.country, SUM(o.amount) FROM %s AS o JOIN customer_history AS h ON "
            "h.customer_id = o.customer_id AND h.valid_from <= o.ordered_on WHERE NOT EXISTS "
            "(SELECT * FROM customer_history AS x WHERE x.customer_id = h.customer_id AND "
            "x.valid_from <= o.ordered_on AND x.valid_from > h.valid_from) GROUP BY h.country "
            "ORDER BY h.country%s",
            orders, strstr(t.gold, " DESC") ? " DESC" : "");
        misses[2] = vat_xasprintf(
            "SELECT h.country, TOTAL(o.amount) FROM customer_history AS h LEFT JOIN %s AS o ON "
            "o.customer_id = h.customer_id WHERE NOT EXISTS (SELECT * FROM customer_history AS x "
            "WHERE x.customer_id = h.customer_id AND x.valid_from > h.valid_from) GROUP BY "
            "h.country ORDER BY h.country%s",
            orders, strstr(t.gold, " DESC") ? " DESC" : "");
        misses[3] = vat_xasprintf(
            "SELECT h.country, SUM(o.amount) FROM %s AS o JOIN customer_history AS h ON "
            "h.customer_id = o.customer_id WHERE h.valid_from = (SELECT MIN(x.valid_from) FROM "
            "customer_history AS x WHERE x.customer_id = h.customer_id) GROUP BY h.country "
            "ORDER BY h.country%s",
            orders, strstr(t.gold, " DESC") ? " DESC" : "");
        for (int k = 0; k < 4; k++) {
            struct vat_verdict vd = vat_tt_check(&t, misses[k]);
            assert_true(vd.gate_passed);
            assert_true(vd.score < 1.0);
            free(misses[k]);
        }
        /* The gold query written another way passes: GROUP BY with the
         * latest date per customer in a derived table. */
        char *alt = vat_xasprintf(
            "SELECT h.country, SUM(o.amount) FROM %s o JOIN (SELECT customer_id, MAX(valid_from) "
            "AS d FROM customer_history GROUP BY customer_id) AS l ON l.customer_id = "
            "o.customer_id JOIN customer_history h ON h.customer_id = l.customer_id AND "
            "h.valid_from = l.d GROUP BY 1 ORDER BY 1%s",
            orders, strstr(t.gold, " DESC") ? " DESC" : "");
        struct vat_verdict va = vat_tt_check(&t, alt);
        assert_true(va.gate_passed);
        assert_true(va.score == 1.0);
        free(alt);
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
        cmocka_unit_test_prestate(test_prompt_shows_schema_and_rows, v),
        cmocka_unit_test_prestate(test_confirm_catches_a_writer_bug, v),
        cmocka_unit_test(test_program_form),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    vat_tt_env_free(v);
    return rc;
}
