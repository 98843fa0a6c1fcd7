/* test_analytics.c — the shared analytics helpers (templates/analytics.c):
 * CSV fixtures written, recorded and read back with their header checked;
 * the prompt's data section whole and truncated; the value spec and gold;
 * tallies; SQL results shaped as JSON, with their error cases; the
 * agreement test confirm() relies on; and the steps the templates share:
 * params read back, money cells, the prompt's word lists, gold and trap
 * from a maker that may fail, confirm by query and by value, and a SQLite
 * fixture opened read-only behind sanity checks.
 *
 * And, for every registered analytics template, what its own test file
 * would otherwise repeat: the golden cases of tests/data/cases/<name>.txt
 * (hand-made fixtures, the gold and trap they give, the files refused and
 * the verdict of each answer); 60 tasks admitted within the redraws the
 * file allows; "same seed, same bytes"; the prompt's data section, whole
 * or, past the inline cap, in the program form and cut to its leading
 * rows, and its format example free of any real key or item; and confirm
 * refusing the trap as gold and a gold nudged by the least amount. */
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analytics.h"
#include "csvio.h"
#include "jsonout.h"
#include "sqlio.h"
#include "rules.h"
#include "template.h"
#include "testutil.h"
#include "values.h"

extern const struct vat_template vat_tmpl_grouped_sum;
extern const struct vat_template vat_tmpl_skeleton;

static const char *const cols[] = {"id", "name", "group", "amount"};

/* A table with a quoted name; the last row has a blank amount. */
static void sample(struct vat_csv *c, size_t rows)
{
    vat_csv_add_row(c, cols, 4);
    for (size_t i = 0; i < rows; i++) {
        vat_csv_row_begin(c);
        vat_csv_addf(c, "R%03zu", i);
        vat_csv_add(c, i % 3 == 0 ? "Doe, Jane" : "Ann Lee");
        vat_csv_add(c, i % 2 ? "b" : "a");
        if (i + 1 == rows)
            vat_csv_add(c, "");
        else
            vat_csv_addf(c, "%zu.25", i);
    }
}

struct env {
    char *dir;
    struct vat_task t;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("analytics");
    vat_task_init(&v->t, &vat_tmpl_grouped_sum, 7, v->dir);
    v->t.inline_max_bytes = 1 << 20;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_task_clear(&v->t);
    vat_test_rmtree(v->dir);
    free(v->dir);
    free(v);
    return 0;
}

static void test_write_and_read_back(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT, back = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    sample(&c, 5);
    int fi = vat_an_write_csv(&v->t, &c, ".csv", "main", &e);
    assert_int_equal(fi, 0);
    const struct vat_fixture *f = &v->t.fixture[0];
    assert_string_equal(f->path, "fixtures/grouped_sum/000/grouped_sum-00007.csv");
    assert_string_equal(f->format, "csv");
    assert_string_equal(f->role, "main");
    assert_int_equal(f->rows, 5);
    char *colj = vat_json_dumps(f->columns);
    assert_string_equal(colj, "[\"id\",\"name\",\"group\",\"amount\"]");
    free(colj);

    assert_int_equal(vat_an_read_csv(&v->t, 0, cols, 4, &back, &e), 0);
    assert_int_equal(back.nrows, 6);
    assert_string_equal(vat_csv_get(&back, 1, 1), "Doe, Jane");
    assert_string_equal(vat_csv_get(&back, 5, 3), "");
    vat_csv_release(&back);

    /* A header that differs in one name, or in width, is refused. */
    static const char *const other[] = {"id", "name", "grp", "amount"};
    assert_int_equal(vat_an_read_csv(&v->t, 0, other, 4, &back, &e), -1);
    assert_non_null(strstr(e.msg, "'group'"));
    assert_non_null(strstr(e.msg, "'grp'"));
    assert_int_equal(vat_an_read_csv(&v->t, 0, cols, 3, &back, &e), -1);
    assert_int_equal(vat_an_read_csv(&v->t, 1, cols, 4, &back, &e), -1);

    /* A ragged record is refused. */
    c.row[3].n = 3;
    int vi = vat_an_write_csv(&v->t, &c, ".v1.csv", "variant", &e);
    c.row[3].n = 4;
    assert_int_equal(vi, 1);
    assert_string_equal(v->t.fixture[1].role, "variant");
    assert_int_equal(vat_an_read_csv(&v->t, 1, cols, 4, &back, &e), -1);
    assert_non_null(strstr(e.msg, "record 4 has 3 cells"));
    vat_csv_release(&c);
}

static void test_prompt_section(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    sample(&c, 40);
    vat_task_clear(&v->t);
    assert_int_equal(vat_an_write_csv(&v->t, &c, ".csv", "main", &e), 0);
    char *path = vat_path_join(v->dir, v->t.fixture[0].path);
    size_t flen;
    char *file = vat_test_read_file(path, &flen);
    free(path);

    /* Whole. */
    struct vat_buf b = VAT_BUF_INIT;
    v->t.inline_max_bytes = flen;
    assert_int_equal(vat_an_prompt_csv(&b, &v->t, 0, &c), 40);
    assert_true(v->t.self_contained); /* every row shown */
    char *blk = vat_tt_inline_block(b.data, "csv");
    assert_string_equal(blk, file);
    assert_non_null(strstr(b.data, "`fixtures/grouped_sum/000/grouped_sum-00007.csv`"));
    assert_non_null(strstr(b.data, "40 data rows"));
    free(blk);
    vat_buf_release(&b);

    /* One byte short: the last record goes. */
    v->t.inline_max_bytes = flen - 1;
    assert_int_equal(vat_an_prompt_csv(&b, &v->t, 0, &c), 39);
    assert_false(v->t.self_contained); /* one row only in the file */
    blk = vat_tt_inline_block(b.data, "csv");
    size_t keep = flen - 1;
    while (keep > 0 && file[keep - 1] != '\n')
        keep--;
    assert_int_equal(strlen(blk), keep);
    assert_memory_equal(blk, file, keep);
    assert_non_null(strstr(b.data, "first 39 data rows only; the other 1 row is in"));
    free(blk);
    vat_buf_release(&b);

    /* Tiny: the header alone still shows, with zero rows. */
    v->t.inline_max_bytes = 5;
    assert_int_equal(vat_an_prompt_csv(&b, &v->t, 0, &c), 0);
    assert_false(v->t.self_contained);
    blk = vat_tt_inline_block(b.data, "csv");
    assert_string_equal(blk, "id,name,group,amount\n");
    assert_non_null(strstr(b.data, "first 0 data rows only; the other 40 rows are in"));
    free(blk);
    vat_buf_release(&b);

    vat_an_prompt_tolerance(&b, 1e-9, 1e-6);
    assert_string_equal(b.data, "Numbers are compared with an absolute tolerance of 1e-6 and a "
                                "relative tolerance of 1e-9");
    vat_buf_release(&b);
    vat_an_prompt_tolerance(&b, 0.001, 0);
    assert_non_null(strstr(b.data, "absolute tolerance of 0 and a relative tolerance of 0.001"));
    vat_buf_release(&b);
    free(file);
    vat_csv_release(&c);
}

static void test_spec_and_gold(void **state)
{
    struct env *v = *state;
    struct vat_an_spec s = {.shape = "object", .rel_tol = 1e-9, .abs_tol = 1e-6};
    json_t *spec = vat_an_value_spec(&s);
    char *j = vat_json_dumps(spec);
    assert_string_equal(j, "{\"checker\":\"value\",\"shape\":\"object\",\"integer\":false,"
                           "\"rel_tol\":1e-09,\"abs_tol\":1e-06}");
    free(j);
    json_decref(spec);

    struct vat_an_spec l = {.shape = "list", .items = "string", .ordered = true, .unique = true};
    spec = vat_an_value_spec(&l);
    j = vat_json_dumps(spec);
    assert_string_equal(j, "{\"checker\":\"value\",\"shape\":\"list\",\"items\":\"string\","
                           "\"ordered\":true,\"unique\":true,\"integer\":false,"
                           "\"rel_tol\":0.0,\"abs_tol\":0.0}");
    free(j);

    vat_task_clear(&v->t);
    v->t.spec = spec;
    vat_an_set_gold(&v->t, json_pack("[s,s]", "a", "b"));
    assert_string_equal(v->t.gold, "[\"a\",\"b\"]");
    vat_an_set_gold(&v->t, json_pack("[s]", "c"));
    assert_string_equal(v->t.gold, "[\"c\"]");
    j = vat_json_dumps(json_object_get(v->t.spec, "expected"));
    assert_string_equal(j, "[\"c\"]");
    free(j);
    vat_an_set_trap(&v->t, json_real(0.1 + 0.2));
    assert_string_equal(v->t.trap, "0.30000000000000004");
}

static void test_tally(void **state)
{
    (void)state;
    struct vat_an_tally t = VAT_AN_TALLY_INIT;
    static const char *const keys[] = {"West", "East", "west", "East", "Gulf Coast", "East"};
    for (size_t i = 0; i < 6; i++)
        vat_an_tally_add(&t, keys[i], 10);
    /* Ten cents 11 times: exact in cents, 1.1 once divided. */
    for (int i = 0; i < 8; i++)
        vat_an_tally_add(&t, "East", 10);
    assert_int_equal(t.n, 4);
    assert_string_equal(t.e[0].key, "West"); /* first-seen order before sorting */
    assert_null(vat_an_tally_find(&t, "north"));
    assert_int_equal(vat_an_tally_find(&t, "East")->n, 11);
    json_t *o = vat_an_tally_cents_json(&t);
    char *j = vat_json_dumps(o);
    assert_string_equal(j, "{\"East\":1.1,\"Gulf Coast\":0.1,\"West\":0.1,\"west\":0.1}");
    free(j);
    json_decref(o);
    o = vat_an_tally_counts_json(&t);
    j = vat_json_dumps(o);
    assert_string_equal(j, "{\"East\":11,\"Gulf Coast\":1,\"West\":1,\"west\":1}");
    free(j);
    json_decref(o);
    vat_an_tally_release(&t);
    assert_int_equal(t.n, 0);
}

static void test_sql_shapes(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    sample(&c, 6);
    vat_task_clear(&v->t);
    assert_int_equal(vat_an_write_csv(&v->t, &c, ".csv", "main", &e), 0);
    vat_csv_release(&c);
    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "REAL"};
    sqlite3 *db;
    assert_int_equal(vat_an_csv_sqlite(&v->t, 0, "t", types, 1, &db, &e), 0);

    /* amounts 0.25 1.25 2.25 3.25 4.25 NULL; groups a b a b a b */
    json_t *x = vat_an_sql_json(db, "SELECT \"group\", SUM(amount) FROM t GROUP BY 1",
                                VAT_AN_OBJECT, &e);
    assert_non_null(x);
    char *j = vat_json_dumps(x);
    assert_string_equal(j, "{\"a\":6.75,\"b\":4.5}");
    free(j);
    json_decref(x);

    x = vat_an_sql_json(db, "SELECT COUNT(*) FROM t WHERE amount IS NULL", VAT_AN_NUMBER, &e);
    assert_true(json_is_integer(x) && json_integer_value(x) == 1);
    json_decref(x);

    x = vat_an_sql_json(db, "SELECT id FROM t WHERE name = 'Doe, Jane' ORDER BY id DESC",
                        VAT_AN_LIST, &e);
    j = vat_json_dumps(x);
    assert_string_equal(j, "[\"R003\",\"R000\"]");
    free(j);
    json_decref(x);

    x = vat_an_sql_json(db, "SELECT \"group\", name, COUNT(*) FROM t GROUP BY 1, 2 ORDER BY 1, 2",
                        VAT_AN_OBJECT_OF_OBJECTS, &e);
    j = vat_json_dumps(x);
    assert_string_equal(j, "{\"a\":{\"Ann Lee\":2,\"Doe, Jane\":1},\"b\":{\"Ann Lee\":2,"
                           "\"Doe, Jane\":1}}");
    free(j);
    json_decref(x);

    /* each group's last name in id order: an object of strings */
    x = vat_an_sql_json(db, "SELECT \"group\", name FROM t AS a WHERE id = (SELECT MAX(id) FROM t "
                            "WHERE \"group\" = a.\"group\")",
                        VAT_AN_OBJECT_OF_STRINGS, &e);
    j = vat_json_dumps(x);
    assert_string_equal(j, "{\"a\":\"Ann Lee\",\"b\":\"Ann Lee\"}");
    free(j);
    json_decref(x);

    /* Errors: wrong column count, repeated key, NULL value, no row, bad SQL. */
    static const struct {
        const char *sql;
        enum vat_an_result kind;
        const char *msg;
    } bad[] = {
        {"SELECT id, name FROM t", VAT_AN_LIST, "2 columns, expected 1"},
        {"SELECT name, 1 FROM t", VAT_AN_OBJECT, "repeats"},
        {"SELECT id, amount FROM t", VAT_AN_OBJECT, "non-numeric"},
        {"SELECT \"group\", name FROM t", VAT_AN_OBJECT_OF_STRINGS, "key 'a' repeats"},
        {"SELECT id, amount FROM t", VAT_AN_OBJECT_OF_STRINGS, "NULL key or value"},
        {"SELECT id FROM t", VAT_AN_OBJECT_OF_STRINGS, "1 columns, expected 2"},
        {"SELECT amount FROM t WHERE 0", VAT_AN_NUMBER, "no rows"},
        {"SELECT amount FROM t", VAT_AN_NUMBER, "more than one row"},
        {"SELECT nope FROM t", VAT_AN_NUMBER, "no such column"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.msg[0] = 0;
        assert_null(vat_an_sql_json(db, bad[i].sql, bad[i].kind, &e));
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("'%s': '%s' lacks '%s'", bad[i].sql, e.msg, bad[i].msg);
    }
    /* A second load while the first is held gets a database of its own
     * (the first keeps its rows); the thread's own is then reused. */
    sqlite3 *db2;
    assert_int_equal(vat_an_csv_sqlite(&v->t, 0, "u", NULL, 0, &db2, &e), 0);
    assert_ptr_not_equal(db2, db);
    x = vat_an_sql_json(db2, "SELECT COUNT(*) FROM u WHERE amount = ''", VAT_AN_NUMBER, &e);
    assert_true(json_integer_value(x) == 1);
    json_decref(x);
    x = vat_an_sql_json(db, "SELECT COUNT(*) FROM t WHERE amount IS NULL", VAT_AN_NUMBER, &e);
    assert_true(json_integer_value(x) == 1);
    json_decref(x);
    vat_an_csv_done(db2);
    vat_an_csv_done(db);
    sqlite3 *again;
    assert_int_equal(vat_an_csv_sqlite(&v->t, 0, "t", types, 1, &again, &e), 0);
    assert_ptr_equal(again, db);
    vat_an_csv_done(again);

    /* Blanks as '' when blank_is_null is off. */
    x = vat_an_csv_query(&v->t, 0, "t", NULL, 0, "SELECT COUNT(*) FROM t WHERE amount = ''",
                         VAT_AN_NUMBER, &e);
    assert_true(json_integer_value(x) == 1);
    json_decref(x);
    assert_null(vat_an_csv_query(&v->t, 3, "t", NULL, 0, "SELECT 1", VAT_AN_NUMBER, &e));
}

static void test_agree(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    json_t *a = json_loads("{\"x\":1.0,\"y\":{\"z\":[\"p\",2]}}", 0, NULL);
    json_t *b = json_loads("{\"y\":{\"z\":[\"p\",2.0]},\"x\":1}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), 0);
    json_decref(b);

    b = json_loads("{\"x\":1.0,\"y\":{\"z\":[\"p\",2.001]}}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), -1);
    assert_string_equal(e.msg, "t: at ['y']['z'][1]: want 2, got 2.001");
    assert_int_equal(vat_an_agree("t", a, b, 0, 0.01, &e), 0);
    json_decref(b);

    b = json_loads("{\"x\":1.0}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "at ['y']: missing"));
    json_decref(b);

    b = json_loads("{\"x\":1.0,\"y\":{\"z\":[\"p\",2]},\"w\":3}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "['w']: unexpected"));
    json_decref(b);

    b = json_loads("{\"x\":1.0,\"y\":{\"z\":[\"P\",2]}}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "[0]"));
    json_decref(b);

    b = json_loads("{\"x\":1.0,\"y\":{\"z\":[\"p\"]}}", 0, NULL);
    assert_int_equal(vat_an_agree("t", a, b, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "want 2 items, got 1"));
    json_decref(b);

    b = json_loads("\"1.0\"", JSON_DECODE_ANY, NULL);
    json_t *one = json_real(1.0);
    assert_int_equal(vat_an_agree("t", one, b, 0, 0, &e), -1);
    json_decref(one);
    json_decref(b);

    vat_task_clear(&v->t);
    v->t.gold = vat_xstrdup("{\"x\":1.0,\"y\":{\"z\":[\"p\",2]}}");
    assert_int_equal(vat_an_confirm_gold(&v->t, a, "sql", 0, 0, &e), 0);
    json_object_set_new(a, "x", json_real(1.5));
    assert_int_equal(vat_an_confirm_gold(&v->t, a, "sql", 0, 0, &e), -1);
    assert_string_equal(e.msg, "grouped_sum-00007: sql disagrees with gold: at ['x']: want 1.0, "
                               "got 1.5");
    json_decref(a);
}

/* ---- the steps the templates share ------------------------------------------ */

static void test_params_read_back(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    vat_task_clear(&v->t);
    v->t.params = json_loads("{\"n\":3,\"big\":12,\"t\":2500.5,\"ti\":7,\"s\":\"Operating\","
                             "\"blank\":\"\",\"txt\":\"3\"}",
                             0, NULL);
    long n = 0;
    assert_int_equal(vat_an_param_int(&v->t, "n", 1, 10, &n, &e), 0);
    assert_int_equal(n, 3);
    /* Out of range, missing, or the wrong JSON type: refused, n untouched. */
    static const char *const bad_int[] = {"big", "nope", "txt", "t"};
    for (size_t i = 0; i < sizeof bad_int / sizeof bad_int[0]; i++) {
        n = 99;
        assert_int_equal(vat_an_param_int(&v->t, bad_int[i], 1, 10, &n, &e), -1);
        assert_int_equal(n, 99);
        char want[64];
        snprintf(want, sizeof want, "grouped_sum-00007: params lack a valid '%s'", bad_int[i]);
        assert_string_equal(e.msg, want);
    }
    double x = 0;
    assert_int_equal(vat_an_param_real(&v->t, "t", 0.01, 1e12, &x, &e), 0);
    assert_true(x == 2500.5);
    assert_int_equal(vat_an_param_real(&v->t, "ti", 0.01, 1e12, &x, &e), 0);
    assert_true(x == 7.0);
    assert_int_equal(vat_an_param_real(&v->t, "t", 0.01, 100, &x, &e), -1);
    assert_int_equal(vat_an_param_real(&v->t, "s", 0.01, 100, &x, &e), -1);
    assert_true(x == 7.0);
    assert_string_equal(vat_an_param_str(&v->t, "s", &e), "Operating");
    assert_null(vat_an_param_str(&v->t, "blank", &e));
    assert_non_null(strstr(e.msg, "'blank'"));
    assert_null(vat_an_param_str(&v->t, "n", &e));
    /* Months: "YYYY-MM" exactly. */
    json_object_set_new(v->t.params, "m", json_string("2024-02"));
    json_object_set_new(v->t.params, "m13", json_string("2024-13"));
    json_object_set_new(v->t.params, "mday", json_string("2024-02-01"));
    int y = 0, mo = 0;
    assert_int_equal(vat_an_param_month(&v->t, "m", &y, &mo, &e), 0);
    assert_int_equal(y, 2024);
    assert_int_equal(mo, 2);
    static const char *const bad_month[] = {"m13", "mday", "n", "nope"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(vat_an_param_month(&v->t, bad_month[i], &y, &mo, &e), -1);
        assert_non_null(strstr(e.msg, "params lack a valid"));
    }
    vat_task_clear(&v->t);
    assert_null(vat_an_param_str(&v->t, "s", &e)); /* no params at all */
}

static void test_money_cells(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    sample(&c, 4); /* amounts 0.25 1.25 2.25 and a blank */
    vat_task_clear(&v->t);
    assert_int_equal(vat_an_write_csv(&v->t, &c, ".csv", "main", &e), 0);
    vat_csv_release(&c);
    assert_int_equal(vat_an_read_csv(&v->t, 0, cols, 4, &c, &e), 0);
    int64_t cents = 0;
    assert_int_equal(vat_an_csv_cents(&v->t, 0, &c, 2, 3, &cents, &e), 0);
    assert_true(cents == 125);
    cents = 5;
    assert_int_equal(vat_an_csv_cents(&v->t, 0, &c, 4, 3, &cents, &e), -1);
    assert_string_equal(e.msg, "grouped_sum-00007: 'fixtures/grouped_sum/000/grouped_sum-00007.csv' "
                               "record 5: amount '' is not a decimal with two places");
    /* The column is named from the header. */
    assert_int_equal(vat_an_csv_cents(&v->t, 0, &c, 1, 1, &cents, &e), -1);
    assert_non_null(strstr(e.msg, "record 2: name 'Doe, Jane' is not"));
    /* Date cells the same way: the bad record, column and cell named. */
    int32_t day = 7;
    assert_int_equal(vat_an_csv_date(&v->t, 0, &c, 2, 0, &day, &e), -1);
    assert_string_equal(e.msg, "grouped_sum-00007: 'fixtures/grouped_sum/000/grouped_sum-00007.csv' "
                               "record 3: id 'R001' is not a date YYYY-MM-DD");
    assert_int_equal(day, 7);
    vat_csv_release(&c);
    static const char *const dcols[] = {"id", "on"};
    vat_csv_add_row(&c, dcols, 2);
    static const char *const days[] = {"2024-02-29", "2023-02-29", "2024-2-01", " 2024-02-01"};
    for (size_t i = 0; i < 4; i++) {
        vat_csv_row_begin(&c);
        vat_csv_addf(&c, "D%zu", i);
        vat_csv_add(&c, days[i]);
    }
    assert_int_equal(vat_an_csv_date(&v->t, 0, &c, 1, 1, &day, &e), 0);
    assert_int_equal(day, vat_date_from_civil(2024, 2, 29));
    for (size_t r = 2; r <= 4; r++) {
        assert_int_equal(vat_an_csv_date(&v->t, 0, &c, r, 1, &day, &e), -1);
        assert_non_null(strstr(e.msg, "is not a date YYYY-MM-DD"));
    }
    vat_csv_release(&c);
}

/* Whole numbers and timestamps read from cells, a bad one naming the
 * record, the column and the cell. */
static void test_int_and_timestamp_cells(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    vat_task_clear(&v->t);
    sample(&c, 2);
    assert_int_equal(vat_an_write_csv(&v->t, &c, ".csv", "main", &e), 0);
    vat_csv_release(&c);
    static const char *const tcols[] = {"qty", "at"};
    static const char *const cells[][2] = {
        {"0", "2024-02-29 23:59:59"},  {"-17", "1970-01-01 00:00:00"},
        {"123456789012345678", "2024-12-31 00:00:01"},
        {"+3", "2023-02-29 10:00:00"}, {" 4", "2024-01-01 24:00:00"},
        {"4.0", "2024-01-01T10:00:00"}, {"1,000", "2024-01-01 10:00"},
        {"", "2024-01-01"},            {"1234567890123456789", " 2024-01-01 10:00:00"},
        {"-", "2024-01-01 10:00:00 "},
    };
    vat_csv_add_row(&c, tcols, 2);
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
        vat_csv_row_begin(&c);
        vat_csv_add(&c, cells[i][0]);
        vat_csv_add(&c, cells[i][1]);
    }
    int64_t q = 99, s = 99;
    static const int64_t want_q[] = {0, -17, 123456789012345678};
    static const int64_t want_s[] = {1709251199, 0, 1735603201};
    for (size_t r = 1; r <= 3; r++) {
        assert_int_equal(vat_an_csv_int(&v->t, 0, &c, r, 0, &q, &e), 0);
        assert_true(q == want_q[r - 1]);
        assert_int_equal(vat_an_csv_timestamp(&v->t, 0, &c, r, 1, &s, &e), 0);
        assert_true(s == want_s[r - 1]);
    }
    for (size_t r = 4; r < c.nrows; r++) {
        q = s = 99;
        assert_int_equal(vat_an_csv_int(&v->t, 0, &c, r, 0, &q, &e), -1);
        assert_non_null(strstr(e.msg, "is not a whole number"));
        assert_int_equal(vat_an_csv_timestamp(&v->t, 0, &c, r, 1, &s, &e), -1);
        assert_non_null(strstr(e.msg, "is not a timestamp YYYY-MM-DD HH:MM:SS"));
        assert_true(q == 99 && s == 99);
    }
    assert_int_equal(vat_an_csv_int(&v->t, 0, &c, 4, 0, &q, &e), -1);
    char *want = vat_xasprintf("grouped_sum-00007: '%s' record 5: qty '+3' is not a whole number",
                               v->t.fixture[0].path);
    assert_string_equal(e.msg, want);
    free(want);
    assert_int_equal(vat_an_csv_timestamp(&v->t, 0, &c, 5, 1, &s, &e), -1);
    want = vat_xasprintf("grouped_sum-00007: '%s' record 6: at '2024-01-01 24:00:00' is not a "
                         "timestamp YYYY-MM-DD HH:MM:SS",
                         v->t.fixture[0].path);
    assert_string_equal(e.msg, want);
    free(want);
    vat_csv_release(&c);
}

static void test_prompt_words(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        const char *want;
    } cases[] = {
        {0, ""},
        {1, "`void`"},
        {2, "`pending` or `void`"},
        {4, "`paid`, `pending`, `refunded` or `void`"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *words[] = {"void", "pending", "refunded", "paid"};
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "");
        vat_an_prompt_words(&b, words, cases[i].n);
        assert_string_equal(b.data, cases[i].want);
        vat_buf_release(&b);
    }
    /* The caller's array ends up in byte order: capitals before lower case. */
    const char *words[] = {"b", "B", "a"};
    struct vat_buf b = VAT_BUF_INIT;
    vat_an_prompt_words(&b, words, 3);
    assert_string_equal(words[0], "B");
    assert_string_equal(words[2], "b");
    vat_buf_release(&b);
}

static void test_gold_and_trap_from(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    vat_task_clear(&v->t);
    /* A failed maker: -1, e left as the maker set it, no gold. */
    vat_err_set(&e, "maker failed");
    assert_int_equal(vat_an_gold_from(&v->t, NULL, "empty", &e), -1);
    assert_string_equal(e.msg, "maker failed");
    assert_null(v->t.gold);
    assert_int_equal(vat_an_trap_from(&v->t, NULL), -1);
    assert_null(v->t.trap);
    /* Empty object or list with a message: refused (and freed: ASan). */
    assert_int_equal(vat_an_gold_from(&v->t, json_object(), "the fixture has no paid order", &e),
                     -1);
    assert_string_equal(e.msg, "grouped_sum-00007: the fixture has no paid order");
    assert_int_equal(vat_an_gold_from(&v->t, json_array(), "no id", &e), -1);
    assert_null(v->t.gold);
    /* Without a message an empty answer is a fine gold; numbers never count
     * as empty. */
    assert_int_equal(vat_an_gold_from(&v->t, json_array(), NULL, &e), 0);
    assert_string_equal(v->t.gold, "[]");
    assert_int_equal(vat_an_gold_from(&v->t, json_integer(0), "empty", &e), 0);
    assert_string_equal(v->t.gold, "0");
    assert_int_equal(vat_an_gold_from(&v->t, json_pack("{s:f}", "North", 10.5), "empty", &e), 0);
    assert_string_equal(v->t.gold, "{\"North\":10.5}");
    char *x = vat_json_dumps(json_object_get(v->t.spec, "expected"));
    assert_string_equal(x, "{\"North\":10.5}");
    free(x);
    assert_int_equal(vat_an_trap_from(&v->t, json_pack("{s:f}", "North", 11.0)), 0);
    assert_string_equal(v->t.trap, "{\"North\":11.0}");
}

static void test_confirm_by_query_and_value(void **state)
{
    struct env *v = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    sample(&c, 6); /* groups a b a b a b; amounts 0.25 .. 4.25, NULL */
    vat_task_clear(&v->t);
    assert_int_equal(vat_an_write_csv(&v->t, &c, ".csv", "main", &e), 0);
    vat_csv_release(&c);
    vat_an_set_gold(&v->t, json_pack("{s:f, s:f}", "a", 6.75, "b", 4.5));
    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "REAL"};
    struct vat_an_query q = {.table = "t", .types = types, .blank_is_null = 1,
                             .kind = VAT_AN_OBJECT,
                             .sql = "SELECT \"group\", SUM(amount) FROM t GROUP BY 1"};
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0, &e), 0);
    /* A different answer names the derivation and the first difference. */
    q.sql = "SELECT \"group\", SUM(amount) + 0.01 FROM t GROUP BY 1";
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees with gold: at ['a']"));
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0.02, &e), 0);
    q.how = "sql sum";
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, ": sql sum disagrees"));
    /* A query that cannot run is a confirm error, not a disagreement. */
    q.sql = "SELECT nope, 1 FROM t";
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "grouped_sum-00007: confirm: sql: no such column"));
    q.fi = 2;
    assert_int_equal(vat_an_confirm_query(&v->t, &q, 0, 0, &e), -1);
    assert_non_null(strstr(e.msg, "confirm:"));

    /* By value: the derived answer is taken over (ASan sees no leak). */
    assert_int_equal(vat_an_confirm_value(&v->t, json_pack("{s:i, s:f}", "a", 0, "b", 4.5),
                                          "the planted totals", 0, 10, &e),
                     0);
    assert_int_equal(vat_an_confirm_value(&v->t, json_pack("{s:f}", "a", 6.75),
                                          "the planted totals", 0, 0, &e),
                     -1);
    assert_string_equal(e.msg, "grouped_sum-00007: the planted totals disagrees with gold: at "
                               "['b']: missing (want 4.5)");
}

/* Writes a SQLite fixture from sql and records it on t as fixture 0. */
static void sqlite_fixture(struct vat_task *t, const char *sql)
{
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, t->root, "fixtures/grouped_sum/t.sqlite", sql, &e), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    vat_task_add_fixture(t, "fixtures/grouped_sum/t.sqlite", "sqlite", "main");
}

static void test_db_query(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    vat_task_clear(&v->t);
    sqlite_fixture(&v->t, "CREATE TABLE o (k TEXT, amount REAL);"
                          "INSERT INTO o VALUES ('x', 1.5), ('y', 2.0), ('x', 0.25);");
    static const struct vat_an_sanity ok[] = {
        {"SELECT COUNT(*) FROM o WHERE k IS NULL", "a key is missing"},
        {"SELECT COUNT(*) FROM o WHERE amount < 0", "an amount is negative"},
    };
    json_t *x = vat_an_db_query(&v->t, 0, ok, 2, "SELECT k, SUM(amount) FROM o GROUP BY k",
                                VAT_AN_OBJECT, &e);
    assert_non_null(x);
    char *j = vat_json_dumps(x);
    assert_string_equal(j, "{\"x\":1.75,\"y\":2.0}");
    free(j);
    json_decref(x);

    /* A sanity query that counts offending rows names what is wrong. */
    static const struct vat_an_sanity dup[] = {
        {"SELECT COUNT(*) FROM o WHERE amount < 0", "an amount is negative"},
        {"SELECT COUNT(*) - COUNT(DISTINCT k) FROM o", "a key repeats"},
    };
    assert_null(vat_an_db_query(&v->t, 0, dup, 2, "SELECT 1", VAT_AN_NUMBER, &e));
    assert_string_equal(e.msg, "grouped_sum-00007: 'fixtures/grouped_sum/t.sqlite': a key repeats");
    /* A sanity query that fails, a main query that fails, a missing fixture. */
    static const struct vat_an_sanity broken[] = {{"SELECT COUNT(*) FROM nope", "x"}};
    assert_null(vat_an_db_query(&v->t, 0, broken, 1, "SELECT 1", VAT_AN_NUMBER, &e));
    assert_non_null(strstr(e.msg, "'fixtures/grouped_sum/t.sqlite': sql: no such table"));
    assert_null(vat_an_db_query(&v->t, 0, NULL, 0, "SELECT amount FROM o", VAT_AN_NUMBER, &e));
    assert_non_null(strstr(e.msg, "more than one row"));
    assert_null(vat_an_db_query(&v->t, 1, NULL, 0, "SELECT 1", VAT_AN_NUMBER, &e));
    assert_non_null(strstr(e.msg, "no fixture 1"));
    /* Read-only: a query that writes is refused by SQLite. */
    assert_null(vat_an_db_query(&v->t, 0, NULL, 0,
                                "INSERT INTO o VALUES ('z', 1) RETURNING amount",
                                VAT_AN_NUMBER, &e));
    assert_non_null(strstr(e.msg, "readonly"));
    x = vat_an_db_query(&v->t, 0, NULL, 0, "SELECT COUNT(*) FROM o", VAT_AN_NUMBER, &e);
    assert_true(json_integer_value(x) == 3);
    json_decref(x);
}

/* ---- the golden cases of every analytics template --------------------------- */

static char *cases_path(const char *name)
{
    const char *src = getenv("VAT_SOURCE_DIR");
    struct vat_buf b = VAT_BUF_INIT;
    if (src && *src) {
        vat_buf_printf(&b, "%s/tests", src);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        if (slash)
            vat_buf_putn(&b, __FILE__, (size_t)(slash - __FILE__));
        else
            vat_buf_puts(&b, ".");
    }
    vat_buf_printf(&b, "/data/cases/%s.txt", name);
    return vat_buf_detach(&b);
}

/* The text of a template's cases file (fails the test when unreadable). */
static char *cases_text(const char *name, char **path)
{
    *path = cases_path(name);
    char *text = vat_test_read_file(*path, NULL);
    if (!text) {
        char shown[512];
        snprintf(shown, sizeof shown, "%s", *path);
        free(*path);
        fail_msg("cannot read '%s': every analytics template has golden cases; copy "
                 "tests/data/cases/skeleton.txt there and rewrite its cases "
                 "(docs/adding-a-template.md, step 1)",
                 shown);
    }
    return text;
}

/* The master seed a cases file draws its tasks with ("seed N"). */
static uint64_t cases_seed(const char *text)
{
    const char *p = strstr(text, "\nseed ");
    assert_non_null(p);
    return strtoull(p + 6, NULL, 10);
}

/* The value of a cases file's "KEY VALUE" line, in a new string (NULL when
 * the file has none). */
static char *cases_value(const char *text, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\n%s ", key);
    const char *p = strstr(text, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    return vat_xstrndup(p, strcspn(p, "\r\n"));
}

/* One registered analytics template, set up as its cases file says. */
struct tmpl_run {
    const struct vat_template *tm;
    struct vat_tt_env *env; /* seeded with the file's "seed" */
    char *path;             /* the cases file ...             */
    char *text;             /* ... and its text               */
};

/* Calls fn for every registered analytics template, in registry order (at
 * least the ten of the catalogue), then for the skeleton, whose cases file
 * is the one a newcomer copies; returns the sum of what fn returns (its
 * failures, for a check that reports them all before failing). */
static int each_template(int (*fn)(struct tmpl_run *run))
{
    int n = 0, failures = 0;
    for (size_t i = 0;; i++) {
        const struct vat_template *tm = vat_registry[i] ? vat_registry[i] : &vat_tmpl_skeleton;
        if (strcmp(tm->family, "analytics") != 0)
            continue;
        struct tmpl_run run = {.tm = tm};
        run.text = cases_text(run.tm->name, &run.path);
        run.env = vat_tt_env_new(run.tm, cases_seed(run.text));
        failures += fn(&run);
        vat_tt_env_free(run.env);
        free(run.text);
        free(run.path);
        n++;
        if (!vat_registry[i])
            break;
    }
    assert_true(n >= 11);
    return failures;
}

/* Cuts the next line out of *next (NUL-terminating it, without its \r). */
static char *next_line(char **next)
{
    char *line = *next, *nl = strchr(line, '\n');
    if (nl) {
        *nl = 0;
        *next = nl + 1;
    } else {
        *next = line + strlen(line);
    }
    size_t n = strlen(line);
    if (n && line[n - 1] == '\r')
        line[n - 1] = 0;
    return line;
}

/* Expands \n, \t and \\ in place (the "esc" answer lines). */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == '\\')) {
            s++;
            *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : '\\';
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

/* Replaces the fixture of the drawn task t with text (a CSV) or with the
 * database the SQL script text builds, sets the params members given,
 * drops what the generator planted (it no longer describes the file) and
 * recomputes gold, confirm and trap from the file as the pipeline does. */
static int craft(struct vat_task *t, bool sqlite, const char *text, json_t *params,
                 struct vat_err *e)
{
    if (sqlite) {
        struct vat_sqlw w;
        if (vat_sqlw_open(&w, t->root, t->fixture[0].path, text, e) != 0 ||
            vat_sqlw_commit(&w, e) != 0)
            fail_msg("cannot build the database: %s", e->msg);
    } else {
        char *path = vat_path_join(t->root, t->fixture[0].path);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        free(path);
    }
    if (t->priv_free)
        t->priv_free(t->priv);
    t->priv = NULL;
    t->priv_free = NULL;
    if (params)
        json_object_update(t->params, params);
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    const struct vat_template *tm = t->tmpl;
    if (tm->reference(t, e) != 0 || tm->confirm(t, e) != 0 || tm->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

/* The state of one cases file as it is read. */
struct golden {
    const char *path;
    int line;
    int failures;
    struct vat_tt_env *env;
    struct vat_task t;
    bool drawn;    /* t holds a task                          */
    int crafted;   /* -2 not yet, else craft()'s return value */
    bool refused;  /* a "refused" line was met                */
    struct vat_err e;
    json_t *params;
    char last[768]; /* the last failure, for the tests of the runner itself */
};

/* How to mend the usual failures of a cases file. */
#define MEND_FORMAT "follow the cases file format (docs/adding-a-template.md, section 4)"
#define MEND_REFUSED                                                                           \
    "make the case's fixture one reference accepts, or add the line 'refused WORDS' when "   \
    "refusing it is right"
#define MEND_VALUE                                                                             \
    "work the case out by hand from its fixture: when the line is right, fix reference() "    \
    "(gold) or trap_answer() (trap); when it is wrong, fix the line"

/* Reports a failure of the rule 'golden cases' at the current line, with
 * its mend (NULL: the message carries its own). */
static void golden_fail(struct golden *g, const char *mend, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void golden_fail(struct golden *g, const char *mend, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(g->last, sizeof g->last, "%s:%d: rule 'golden cases': %s%s%s", g->path, g->line, msg,
             mend ? ". Mend: " : "", mend ? mend : "");
    print_error("%s\n", g->last);
    g->failures++;
}

/* Ends the current case: a file refused without a "refused" line fails. */
static void golden_end_case(struct golden *g)
{
    if (g->drawn && g->crafted == -1 && !g->refused)
        golden_fail(g, strstr(g->e.msg, "Mend:") ? NULL : MEND_REFUSED, "%s: refused: %s",
                    g->t.id, g->e.msg);
    if (g->drawn)
        vat_task_clear(&g->t);
    json_decref(g->params);
    g->params = NULL;
    g->drawn = false;
    g->crafted = -2;
    g->refused = false;
}

/* True when the case's fixture made a task; reports a failure otherwise. */
static bool golden_ready(struct golden *g)
{
    if (!g->drawn || g->crafted == -2) {
        golden_fail(g, MEND_FORMAT, "an expectation before the case's fixture");
        return false;
    }
    if (g->crafted != 0) {
        golden_fail(g, strstr(g->e.msg, "Mend:") ? NULL : MEND_REFUSED, "%s: refused: %s",
                    g->t.id, g->e.msg);
        g->refused = true; /* reported once */
        return false;
    }
    return true;
}

/* "<answer>\t<code>": checks answer; the code "gated" stands for any gate
 * failure and "wrong" for any score 0 behind a passed gate. */
static void golden_answer(struct golden *g, char *line)
{
    char *tab = strrchr(line, '\t');
    if (!tab) {
        golden_fail(g, MEND_FORMAT, "not a directive nor answer<TAB>code: '%s'", line);
        return;
    }
    *tab = 0;
    const char *code = tab + 1;
    if (strncmp(line, "esc ", 4) == 0)
        unescape(line += 4);
    if (!golden_ready(g))
        return;
    struct vat_verdict v = vat_tt_check(&g->t, line);
    bool gate_code = strcmp(code, VAT_SHAPE) == 0 || strcmp(code, VAT_TYPE) == 0 ||
                     strcmp(code, VAT_PARSE) == 0 || strcmp(code, VAT_TOO_LARGE) == 0 || strcmp(code, VAT_NOT_FINITE) == 0;
    bool ok;
    if (strcmp(code, "gated") == 0)
        ok = !v.gate_passed && v.score == 0.0;
    else if (strcmp(code, "wrong") == 0)
        ok = v.gate_passed && v.score == 0.0;
    else
        ok = strcmp(v.code, code) == 0 && v.gate_passed == !gate_code &&
             v.score == (strcmp(code, VAT_OK) == 0 ? 1.0 : 0.0);
    if (!ok)
        golden_fail(g,
                    "the checker's verdict follows from the spec (shape, tolerances, order): "
                    "fix the spec reference() completes, or the case's code",
                    "%s: answer '%s': got %s gate=%d score=%g (%s), expected %s", g->t.id,
                    line, v.code, v.gate_passed, v.score, v.reason, code);
}

/* Reads the block of lines up to "." (a line starting ".." stands for
 * the same line with one dot less) into a new string. */
static char *golden_block(struct golden *g, char **next)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "");
    for (;;) {
        if (!**next) {
            golden_fail(g, MEND_FORMAT, "a fixture block without its closing '.'");
            break;
        }
        char *line = next_line(next);
        g->line++;
        if (strcmp(line, ".") == 0)
            break;
        vat_buf_printf(&b, "%s\n", line[0] == '.' ? line + 1 : line);
    }
    return vat_buf_detach(&b);
}

/* Runs every case of one template's file; returns how many failed (a
 * file needs at least two cases: hand-made fixtures, one good and one
 * refused at the least), the last failure in last (cap bytes) when not
 * NULL. */
static int golden_run_last(struct tmpl_run *run, char *last, size_t cap)
{
    struct golden g = {.path = run->path, .crafted = -2, .env = run->env};
    char *text = vat_xstrdup(run->text), *next = text;
    int ncases = 0;
    while (*next) {
        char *line = next_line(&next);
        g.line++;
        if (!line[0] || line[0] == '#' || strncmp(line, "seed ", 5) == 0 ||
            strncmp(line, "confirm ", 8) == 0 || strncmp(line, "redraws ", 8) == 0 ||
            strncmp(line, "trapcode ", 9) == 0)
            continue;
        if (strncmp(line, "case ", 5) == 0) {
            golden_end_case(&g);
            struct vat_replay r;
            /* The cases check the value form over a small hand-made file
             * put in place of the drawn one: the cap shows every drawn
             * file, so the task is drawn in the value form whatever its
             * size. */
            vat_tt_draw(g.env, &g.t, NULL, (uint32_t)strtoul(line + 5, NULL, 10), 1 << 20, 40,
                        &r);
            g.drawn = true;
            ncases++;
        } else if (strncmp(line, "params ", 7) == 0) {
            json_error_t je;
            json_decref(g.params);
            g.params = json_loads(line + 7, 0, &je);
            if (!json_is_object(g.params))
                golden_fail(&g, MEND_FORMAT, "params is not a JSON object: %s", je.text);
        } else if (strcmp(line, "csv") == 0 || strcmp(line, "sqlite") == 0) {
            bool sqlite = line[0] == 's';
            char *fixture = golden_block(&g, &next);
            if (!g.drawn)
                golden_fail(&g, MEND_FORMAT, "a fixture outside a case");
            else
                g.crafted = craft(&g.t, sqlite, fixture, g.params, &g.e);
            free(fixture);
            if (g.crafted == 0) {
                struct vat_verdict v = vat_tt_check(&g.t, g.t.gold);
                if (strcmp(v.code, VAT_OK) != 0)
                    golden_fail(&g,
                                "make reference() and the spec it completes agree with the "
                                "checker (the spec's shape and tolerances)",
                                "%s: gold %s scores %s (%s)", g.t.id, g.t.gold, v.code, v.reason);
            }
        } else if (strncmp(line, "gold ", 5) == 0 || strncmp(line, "trap ", 5) == 0) {
            if (!golden_ready(&g))
                continue;
            /* a gold line of another shape than the spec's says so, naming
             * both, before it is compared */
            json_t *want = json_loads(line + 5, JSON_DECODE_ANY, NULL);
            struct vat_err se = {{0}};
            if (want && vat_an_gold_shape(&g.t, g.t.spec, want, &se) != 0) {
                const char *shape = json_string_value(json_object_get(g.t.spec, "shape"));
                golden_fail(&g,
                            "write the line as the checker reads the answer, or, when the "
                            "case's params change the answer's shape, build t->spec from "
                            "t->params so the spec follows",
                            "%s: the case's %.4s line %.80s is %s, but the checker spec's shape "
                            "is '%s'",
                            g.t.id, line, line + 5, vat_an_json_kind(want), shape ? shape : "");
                json_decref(want);
                continue;
            }
            json_decref(want);
            const char *got = line[0] == 'g' ? g.t.gold : g.t.trap;
            if (strcmp(got, line + 5) != 0)
                golden_fail(&g, MEND_VALUE, "%s: %.4s is %s, expected %s", g.t.id, line, got,
                            line + 5);
        } else if (strncmp(line, "refused", 7) == 0 && (!line[7] || line[7] == ' ')) {
            const char *frag = line[7] ? line + 8 : "";
            if (!g.drawn || g.crafted == -2)
                golden_fail(&g, MEND_FORMAT, "refused before the case's fixture");
            else if (g.crafted == 0)
                golden_fail(&g,
                            "reference() must refuse a file it cannot answer (vat_err_set "
                            "naming the task, the file and the record), or drop the line",
                            "%s: the fixture was not refused (gold %s)", g.t.id, g.t.gold);
            else if (!strstr(g.e.msg, g.t.id) || !strstr(g.e.msg, frag))
                golden_fail(&g,
                            "refuse with vat_err_set(e, \"%%s: ...\", t->id, ...) naming the bad "
                            "record, in the words the line gives",
                            "%s: refused with '%s', expected the task id and '%s'", g.t.id,
                            g.e.msg, frag);
            g.refused = true;
        } else {
            golden_answer(&g, line);
        }
    }
    golden_end_case(&g);
    free(text);
    if (ncases < 2)
        golden_fail(&g,
                    "add hand-made cases: a fixture with its exact gold and trap, and one "
                    "reference refuses",
                    "only %d cases", ncases);
    if (last)
        snprintf(last, cap, "%s", g.last);
    return g.failures;
}

static int golden_run(struct tmpl_run *run)
{
    return golden_run_last(run, NULL, 0);
}

static void test_golden_cases(void **state)
{
    (void)state;
    assert_int_equal(each_template(golden_run), 0);
}

/* ---- the gold-shape test ------------------------------------------------------
 * The skeleton with one param more: "by_item" turns the question into an
 * object (each item's quantity) while the spec still says a number, as a
 * newcomer's params once did.  A cases file that sets it, and one whose
 * gold line has another shape than the spec's, fail naming both. */
static int by_item_reference(struct vat_task *t, struct vat_err *e)
{
    if (!json_is_true(json_object_get(t->params, "by_item")))
        return vat_tmpl_skeleton.reference(t, e);
    struct vat_csv c = VAT_CSV_INIT;
    static const char *const skel_cols[] = {"item_id", "quantity"};
    if (vat_an_read_csv(t, 0, skel_cols, 2, &c, e) != 0)
        return -1;
    json_t *gold = json_object();
    for (size_t r = 1; r < c.nrows; r++)
        json_object_set_new(gold, vat_csv_get(&c, r, 0), json_integer(atol(vat_csv_get(&c, r, 1))));
    vat_csv_release(&c);
    return vat_an_gold_from(t, gold, NULL, e);
}

static void test_gold_shape_differs_from_spec(void **state)
{
    (void)state;
    struct vat_template by_item = vat_tmpl_skeleton;
    by_item.reference = by_item_reference;
    /* each file has a second case that holds (a refused file), so the
     * one failure is the shape's */
    static const char refused[] = "case 2 a refused file\n"
                                  "csv\nitem_id,quantity\nITM-00001,three\n.\n"
                                  "refused quantity 'three' is not a whole number\n";
    static const char *const texts[] = {
        "seed 7\n"
        "case 0 params turn the question into an object\n"
        "params {\"by_item\": true}\n"
        "csv\nitem_id,quantity\nITM-00001,3\nITM-00002,80\n.\n"
        "gold 1\n",
        "seed 7\n"
        "case 1 a gold line of another shape\n"
        "csv\nitem_id,quantity\nITM-00001,3\nITM-00002,80\n.\n"
        "gold {\"ITM-00002\": 80}\n",
    };
    for (size_t i = 0; i < 2; i++) {
        char *text = vat_xasprintf("%s%s", texts[i], refused);
        struct tmpl_run run = {.tm = &by_item, .path = "deliberate.txt", .text = text};
        run.env = vat_tt_env_new(run.tm, 7);
        char last[768] = "";
        int failures = golden_run_last(&run, last, sizeof last);
        vat_tt_env_free(run.env);
        free(text);
        print_message("  %s\n", last);
        assert_int_equal(failures, 1);
        if (!strstr(last, "is an object of numbers, but the checker spec's shape is 'number'") ||
            !strstr(last, "Mend:"))
            fail_msg("the failure does not name gold's kind, the spec's shape and a mend: %s",
                     last);
    }
}

/* Tasks 0..59 of every analytics template, drawn as the pipeline draws
 * them: all admitted within the redraws the cases file allows over the 60
 * ("redraws N"), gold 1, the trap 0 behind a passed gate (in the value
 * form, with the code "trapcode" names, when it does), the malformed
 * answer gated out; gold and trap differ; a value prompt shows its file
 * whole (past the cap the task is a program); the prompt names the main
 * fixture, whose format is its suffix and, for a CSV, whose recorded rows
 * are the file's records; the difficulty is the level asked for, 1 to 5. */
static int sixty_admit(struct tmpl_run *run)
{
    const struct vat_template *tm = run->tm;
    const char *admit = "admission within budget";
    char *budget = cases_value(run->text, "redraws");
    char *trapcode = cases_value(run->text, "trapcode");
    VAT_RULE(budget, tm, admit, "give the cases file a line 'redraws N' (0 when the trap is "
                                "armed by construction)", "%s has no 'redraws' line", run->path);
    unsigned redraws = 0, programs = 0;
    for (uint32_t i = 0; i < 60; i++) {
        struct vat_task t;
        struct vat_replay r;
        redraws += vat_tt_draw(run->env, &t, NULL, i, 6000, 40, &r);
        const struct vat_verdict *g = &r.v[VAT_ROLE_GOLD], *tr = &r.v[VAT_ROLE_TRAP],
                                 *m = &r.v[VAT_ROLE_MALFORMED];
        VAT_RULE(g->gate_passed && g->score == 1.0 && strcmp(g->code, "ok") == 0, tm,
                 "gold scores 1", "make reference() and the spec agree with the checker",
                 "%s: gold %s: %s %g (%s)", t.id, t.gold, g->code, g->score, g->reason);
        VAT_RULE(tr->gate_passed && tr->score == 0.0 && strcmp(t.gold, t.trap) != 0, tm,
                 "the trap passes the gate and scores 0",
                 "trap_answer() must give an answer of the right shape that differs from gold",
                 "%s: trap %s: %s %g (%s)", t.id, t.trap, tr->code, tr->score, tr->reason);
        VAT_RULE(!m->gate_passed && m->score == 0.0, tm, "the malformed answer fails the gate",
                 "leave t->malformed unset, or set it to an answer of the wrong shape",
                 "%s: malformed %s: %s", t.id, t.malformed, m->code);
        /* A value question is asked only over a file its prompt shows
         * whole; past the cap the task is asked as a program. */
        bool value_form = strcmp(vat_task_answer_kind(&t), "sql") != 0;
        VAT_RULE(!value_form || t.self_contained, tm, "a value prompt shows every row",
                 "give the template a program form, or redraw a value task whose file is past "
                 "the inline cap",
                 "%s: a value prompt shows the file %s in part", t.id, t.fixture[0].path);
        programs += !value_form;
        /* 'trapcode' is the value checker's verdict; the program form's
         * trap is a query whose rows differ from gold's */
        VAT_RULE(!trapcode || !value_form || strcmp(tr->code, trapcode) == 0, tm, admit,
                 "make the trap fail the way the cases file's 'trapcode' says, or change the line",
                 "%s: the trap's verdict is %s, the cases file says %s", t.id, tr->code,
                 trapcode);
        VAT_RULE(t.difficulty == t.level && t.difficulty >= 1 && t.difficulty <= 5, tm, admit,
                 "leave t->difficulty and t->level to the pipeline (templates/level.h)",
                 "%s: difficulty %d at level %d", t.id, t.difficulty, t.level);
        const struct vat_fixture *f = &t.fixture[0];
        VAT_RULE(strstr(t.prompt, f->path), tm, "the prompt names every file",
                 "name the main fixture in the prompt (vat_an_prompt_csv does it for a CSV)",
                 "%s: the prompt does not name %s", t.id, f->path);
        const char *dot = strrchr(f->path, '.');
        VAT_RULE(strcmp(f->role, "main") == 0 && dot && strcmp(f->format, dot + 1) == 0, tm,
                 admit, "write the main fixture first, with vat_an_write_csv (it records role, "
                        "format and rows)",
                 "%s: fixture 0 is %s, role '%s', format '%s'", t.id, f->path, f->role,
                 f->format);
        if (strcmp(f->format, "csv") == 0) {
            struct vat_csv c = VAT_CSV_INIT;
            struct vat_err e = {{0}};
            assert_int_equal(vat_csv_read(&c, t.root, f->path, &e), 0);
            VAT_RULE((long)c.nrows - 1 == f->rows, tm, admit,
                     "record the fixture with vat_an_write_csv on the table as written",
                     "%s: %s holds %ld records, %ld recorded", t.id, f->path, (long)c.nrows - 1,
                     f->rows);
            vat_csv_release(&c);
        }
        vat_task_clear(&t);
    }
    VAT_RULE(redraws <= strtoul(budget, NULL, 10), tm, admit,
             "arm the trap and meet every admission rule by construction, so the first draw "
             "admits (the refusals say which rule the redrawn draws broke)",
             "%u redraws over 60 tasks, more than the %s the cases file allows", redraws, budget);
    print_message("  %s: %u redraws over 60 tasks, %u asked as programs\n", run->tm->name,
                  redraws, programs);
    free(budget);
    free(trapcode);
    return 0;
}

static void test_sixty_tasks_admit(void **state)
{
    (void)state;
    each_template(sixty_admit);
}

/* Draws tasks 0..4 of every analytics template twice, into two roots:
 * every byte the task is made of agrees; task i + 100 is another task. */
static int same_bytes(struct tmpl_run *run)
{
    const char *rule = "same seed, same bytes";
    const char *mend = "draw only from rng (one draw per statement), keep paths relative, no "
                       "clock, locale, pointer order or global state";
    char *other = vat_test_tmpdir("same-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b, c;
        struct vat_replay r;
        vat_tt_draw(run->env, &a, NULL, i, 6000, 40, &r);
        vat_tt_draw(run->env, &b, other, i, 6000, 40, &r);
        size_t la, lb;
        char *fa = vat_tt_fixture_text(&a, 0, &la), *fb = vat_tt_fixture_text(&b, 0, &lb);
        char *pa = vat_json_dumps(a.params), *pb = vat_json_dumps(b.params);
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        const char *differs = la != lb || memcmp(fa, fb, la) != 0 ? "the fixture"
                              : strcmp(a.prompt, b.prompt) != 0   ? "the prompt"
                              : strcmp(a.gold, b.gold) != 0       ? "gold"
                              : strcmp(a.trap, b.trap) != 0       ? "the trap"
                              : strcmp(pa, pb) != 0               ? "the params"
                              : strcmp(sa, sb) != 0               ? "the spec"
                                                                  : NULL;
        VAT_RULE(!differs, run->tm, rule, mend, "%s drawn into two roots: %s differs", a.id,
                 differs);
        free(pa), free(pb), free(sa), free(sb);
        vat_tt_draw(run->env, &c, other, i + 100, 6000, 40, &r);
        VAT_RULE(strcmp(a.fixture[0].sha256, c.fixture[0].sha256) != 0, run->tm,
                 "every task is its own", "draw the fixture from the task's rng, not from a "
                                          "fixed seed",
                 "%s and %s have the same fixture", a.id, c.id);
        vat_task_clear(&c);
        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
    return 0;
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    each_template(same_bytes);
}

/* Fails when a key or item of the answer v (one level of nesting deep)
 * stands in the prompt as the start of an object or list: the format
 * example must use placeholders, never a real region, name or id. */
static void assert_placeholders(const struct vat_template *tm, const char *prompt, const json_t *v,
                                const char *id)
{
    char quoted[160];
    const char *k;
    json_t *x;
    size_t i;
    const char *rule = "the prompt's data", *mend =
        "write the format example with placeholders (<region>, <n>), never a key or item of "
        "the answer";
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, x) {
            snprintf(quoted, sizeof quoted, "{\"%s\"", k);
            VAT_RULE(!strstr(prompt, quoted), tm, rule, mend,
                     "%s: the prompt's example holds %s", id, quoted);
            assert_placeholders(tm, prompt, x, id);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) {
            snprintf(quoted, sizeof quoted, "[\"%s\"", json_string_value(x));
            VAT_RULE(!json_is_string(x) || !strstr(prompt, quoted), tm, rule, mend,
                     "%s: the prompt's example holds %s", id, quoted);
        }
    }
}

/* The number of lines of s (each ended by '\n'). */
static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Task 3 drawn with room for everything: a CSV fixture is inlined whole
 * in a ```csv block, the file named; the format example shows no real key
 * or item of gold. */
static int prompt_whole(struct tmpl_run *run)
{
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(run->env, &t, NULL, 3, 1 << 20, 40, &r);
    char named[160];
    snprintf(named, sizeof named, "`%s`", t.fixture[0].path);
    VAT_RULE(strstr(t.prompt, named), run->tm, "the prompt names every file",
             "name the main fixture in backticks (vat_an_prompt_csv does it for a CSV)",
             "%s: the prompt does not name %s", t.id, named);
    /* The answer's shape is stated in words that mean it (rules.c), not
     * in one literal phrase. */
    char *shape = vat_rule_prompt_shape(&t);
    if (shape)
        fail_msg("%s", shape);
    if (strcmp(t.fixture[0].format, "csv") == 0) {
        size_t len;
        char *file = vat_tt_fixture_text(&t, 0, &len);
        char *block = vat_tt_inline_block(t.prompt, "csv");
        char *dropped = vat_rule_prompt_data_whole(&t, block, file);
        if (dropped)
            fail_msg("%s", dropped);
        VAT_RULE(strstr(t.prompt, "Its full contents") && !strstr(t.prompt, "too long"), run->tm,
                 "the prompt's data", "write the data section with vat_an_prompt_csv",
                 "%s: the section does not say the file is shown whole", t.id);
        free(block);
        free(file);
    }
    json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
    assert_non_null(gold);
    assert_placeholders(run->tm, t.prompt, gold, t.id);
    json_decref(gold);
    vat_task_clear(&t);
    return 0;
}

static void test_prompt_inlines_the_whole_file(void **state)
{
    (void)state;
    each_template(prompt_whole);
}

/* The rule 'the prompt's data' over deliberate prompts that drop rows:
 * the failure names the rule, the rows and the mend, not a raw diff. */
static void test_dropped_rows_named(void **state)
{
    (void)state;
    static const char file[] = "a,b\n1,2\n3,4\n5,6\n";
    static const struct {
        const char *block, *want;
    } cases[] = {
        {"a,b\n1,2\n5,6\n", "holds 2 of its 3 data rows; first difference at line 3: the file "
                            "has '3,4', the block '5,6'"},
        {"a,b\n1,2\n3,4\n", "holds 2 of its 3 data rows; first difference at line 4: the file "
                            "has '5,6', the block ends"},
    };
    struct vat_task t;
    memset(&t, 0, sizeof t);
    t.tmpl = &vat_tmpl_skeleton;
    t.inline_max_bytes = 6000;
    snprintf(t.id, sizeof t.id, "skeleton-00003");
    assert_null(vat_rule_prompt_data_whole(&t, file, file));
    for (size_t i = 0; i < 2; i++) {
        char *m = vat_rule_prompt_data_whole(&t, cases[i].block, file);
        if (!m || !strstr(m, "skeleton: rule 'the prompt's data': skeleton-00003:") ||
            !strstr(m, cases[i].want) || !strstr(m, "Mend: inline the fixture"))
            fail_msg("dropped rows reported as: %s", m ? m : "(kept)");
        print_message("  %s\n", m);
        free(m);
    }
}

/* Task 4 of a template without a program form, drawn with a small inline
 * budget as the pipeline draws it: an attempt whose file is past the cap
 * is refused (its value prompt could not show every row), and the attempt
 * admitted is one whose file the prompt shows whole. */
static int prompt_cut_refused(struct tmpl_run *run, size_t max)
{
    const char *rule = "a value prompt shows every row";
    const char *mend = "leave the refusal to the pipeline (src/admit.c): it redraws a value "
                       "task whose file is past the inline cap";
    struct vat_task t;
    struct vat_replay r;
    struct vat_draw_opts o = {.master_seed = run->env->seed, .cfg = run->env->cfg,
                              .inline_max_bytes = max};
    vat_task_init(&t, run->tm, 4, run->env->dir);
    int rc = -1;
    unsigned refused = 0;
    for (uint32_t a = 0; rc != 0 && a < 40; a++) {
        struct vat_err e = {{0}};
        rc = vat_task_draw(&t, a, &o, &r, &e);
        size_t len;
        char *file = vat_tt_fixture_text(&t, 0, &len);
        free(file);
        if (rc != 0)
            VAT_RULE(len > max && strstr(e.msg, "the value prompt does not show every row"),
                     run->tm, rule, mend, "%s: attempt %u (a file of %zu bytes, an inline cap "
                     "of %zu) was refused: %s", t.id, a, len, max, e.msg);
        else
            VAT_RULE(len <= max && t.self_contained && strstr(t.prompt, "Its full contents"),
                     run->tm, rule, mend, "%s: attempt %u (a file of %zu bytes, an inline cap "
                     "of %zu) was admitted with its file shown in part", t.id, a, len, max);
        refused += rc != 0;
    }
    VAT_RULE(rc == 0, run->tm, "every task admits", mend, "%s: no attempt of 40 fits %zu bytes",
             t.id, max);
    print_message("  %s: %u draws of task 4 refused past an inline cap of %zu bytes\n",
                  run->tm->name, refused, max);
    vat_task_clear(&t);
    return 0;
}

/* Task 4 drawn with a small inline budget.  A value question may only
 * ask about rows its prompt shows, so past the cap the task is asked as a
 * program (a template without a program form: prompt_cut_refused); the
 * block is the header and the leading records of the file, cut on a
 * record boundary, and the section tells the truth about how much is
 * shown. */
static int prompt_cut(struct tmpl_run *run)
{
    const size_t max = 300;
    const char *rule = "the prompt's data";
    const char *mend = "write the data section with vat_an_prompt_csv on the table exactly as "
                       "written: past the inline cap it shows the header and the leading "
                       "records, and says how many";
    if (!run->tm->progform)
        return prompt_cut_refused(run, max);
    struct vat_task t;
    struct vat_replay r;
    vat_tt_draw(run->env, &t, NULL, 4, max, 40, &r);
    VAT_RULE(strcmp(vat_task_answer_kind(&t), "sql") == 0, run->tm,
             "a value prompt shows every row",
             "ask the task as a program past the inline cap (vat_progform_form)",
             "%s: with an inline cap of %zu bytes the task is asked as '%s'", t.id, max,
             vat_task_answer_kind(&t));
    vat_tt_assert_states_shape(&t);
    if (strcmp(t.fixture[0].format, "csv") != 0) {
        vat_task_clear(&t);
        return 0;
    }
    size_t len;
    char *file = vat_tt_fixture_text(&t, 0, &len);
    char *block = vat_tt_inline_block(t.prompt, "csv");
    size_t bl = strlen(block);
    const char *eol = strchr(file, '\n');
    /* A prefix of the file that ends on a record boundary, header first,
     * within the cap, and the next record would not have fitted. */
    const char *next = bl < len ? strchr(file + bl, '\n') : NULL;
    VAT_RULE(bl <= max && bl < len && memcmp(block, file, bl) == 0 && block[bl - 1] == '\n' &&
                 (size_t)(eol + 1 - file) <= bl && next && (size_t)(next + 1 - file) > max,
             run->tm, rule, mend,
             "%s: with an inline cap of %zu bytes the csv block (%zu bytes) is not the file's "
             "header and the leading records that fit (the file: %zu bytes)",
             t.id, max, bl, len);
    VAT_RULE(strstr(t.prompt, "too long to show whole"), run->tm, rule, mend,
             "%s: the section does not say the file is cut", t.id);
    /* The prompt says how many rows are shown, and it is the truth (no
     * quoted newlines in these files: one line, one record). */
    size_t shown = count_lines(block);
    char expect[3][128];
    snprintf(expect[0], sizeof expect[0], "first %zu data row", shown - 1);
    snprintf(expect[1], sizeof expect[1], "then %ld data rows", t.fixture[0].rows);
    snprintf(expect[2], sizeof expect[2], "answer must cover all %ld", t.fixture[0].rows);
    for (int k = 0; k < 3; k++)
        VAT_RULE(strstr(t.prompt, expect[k]), run->tm, rule, mend,
                 "%s: the section does not say '%s'", t.id, expect[k]);
    free(block);
    free(file);
    vat_task_clear(&t);
    return 0;
}

static void test_prompt_cuts_to_leading_rows(void **state)
{
    (void)state;
    each_template(prompt_cut);
}

#define CONFIRM_RULE "confirm tells gold from near misses"
#define CONFIRM_MEND                                                                           \
    "derive the answer in confirm() another way from the fixture (vat_an_confirm_query), "    \
    "compare it with gold within the spec's tolerances, and name the derivation as the "     \
    "cases file's 'confirm' line does"

/* Confirm agrees with gold, and refuses the trap's answer put in its
 * place, naming the derivation the cases file gives: the second
 * derivation tells the named mistake from the truth. */
static int confirm_trap(struct tmpl_run *run)
{
    char *how = cases_value(run->text, "confirm");
    VAT_RULE(how, run->tm, CONFIRM_RULE, "give the cases file a line 'confirm WORDS'",
             "%s has no 'confirm' line", run->path);
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    vat_tt_draw(run->env, &t, NULL, 20, 1 << 20, 40, &r); /* shown whole: the value form */
    int agreed = run->tm->confirm(&t, &e);
    VAT_RULE(agreed == 0, run->tm, CONFIRM_RULE, CONFIRM_MEND, "%s: confirm refused gold: %s",
             t.id, e.msg);
    free(t.gold);
    t.gold = vat_xstrdup(t.trap);
    int refused = run->tm->confirm(&t, &e);
    char want[160];
    snprintf(want, sizeof want, "%s: %s disagrees with gold", t.id, how);
    VAT_RULE(refused == -1 && strstr(e.msg, want), run->tm, CONFIRM_RULE, CONFIRM_MEND,
             "%s: with the trap %s as gold, confirm %s '%s', not '%s'", t.id, t.trap,
             refused == -1 ? "said" : "agreed", refused == -1 ? e.msg : "", want);
    free(how);
    vat_task_clear(&t);
    return 0;
}

static void test_confirm_refuses_the_trap_as_gold(void **state)
{
    (void)state;
    each_template(confirm_trap);
}

/* Nudges the first number of v (depth first) by one part in 10^9, or the
 * first integer by one; a list of strings gets its first two swapped.
 * Returns the key of the first object level passed (or NULL). */
static const char *nudge(json_t *v)
{
    const char *key;
    json_t *x;
    if (json_is_object(v)) {
        json_object_foreach(v, key, x) {
            if (json_is_number(x) || json_is_object(x)) {
                nudge(x);
                return key;
            }
        }
        return NULL;
    }
    if (json_is_integer(v))
        json_integer_set(v, json_integer_value(v) + 1);
    else if (json_is_real(v))
        json_real_set(v, json_real_value(v) + fmax(json_real_value(v), 1.0) * 1e-9);
    else if (json_is_array(v) && json_array_size(v) >= 2) {
        json_t *first = json_incref(json_array_get(v, 0));
        json_array_set(v, 0, json_array_get(v, 1));
        json_array_set_new(v, 1, first);
    }
    return NULL;
}

/* Confirm refuses a gold nudged by the least amount that matters (a
 * number by one part in 10^9, a count by one, an ordered list by a swap),
 * naming its derivation and the key. */
static int confirm_nudged(struct tmpl_run *run)
{
    char *how = cases_value(run->text, "confirm");
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    vat_tt_draw(run->env, &t, NULL, 20, 1 << 20, 40, &r); /* shown whole: the value form */
    json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
    assert_non_null(gold);
    const char *key = nudge(gold);
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    int refused = run->tm->confirm(&t, &e);
    char want[160];
    snprintf(want, sizeof want, "%s: %s disagrees with gold", t.id, how);
    VAT_RULE(refused == -1 && strstr(e.msg, want) && (!key || strstr(e.msg, key)), run->tm,
             CONFIRM_RULE, CONFIRM_MEND,
             "%s: with gold nudged to %s, confirm %s '%s', not '%s' naming the key '%s'", t.id,
             t.gold, refused == -1 ? "said" : "agreed", refused == -1 ? e.msg : "", want,
             key ? key : "");
    json_decref(gold);
    free(how);
    vat_task_clear(&t);
    return 0;
}

static void test_confirm_refuses_a_nudged_gold(void **state)
{
    (void)state;
    each_template(confirm_nudged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read_back),
        cmocka_unit_test(test_prompt_section),
        cmocka_unit_test(test_spec_and_gold),
        cmocka_unit_test(test_tally),
        cmocka_unit_test(test_sql_shapes),
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_params_read_back),
        cmocka_unit_test(test_money_cells),
        cmocka_unit_test(test_int_and_timestamp_cells),
        cmocka_unit_test(test_prompt_words),
        cmocka_unit_test(test_gold_and_trap_from),
        cmocka_unit_test(test_confirm_by_query_and_value),
        cmocka_unit_test(test_db_query),
        cmocka_unit_test(test_golden_cases),
        cmocka_unit_test(test_gold_shape_differs_from_spec),
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_inlines_the_whole_file),
        cmocka_unit_test(test_dropped_rows_named),
        cmocka_unit_test(test_prompt_cuts_to_leading_rows),
        cmocka_unit_test(test_confirm_refuses_the_trap_as_gold),
        cmocka_unit_test(test_confirm_refuses_a_nudged_gold),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
