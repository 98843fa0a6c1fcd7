/* test_analytics.c — the shared analytics helpers (generators/analytics.c):
 * CSV fixtures written, recorded and read back with their header checked;
 * the prompt's data section whole and truncated; the value spec and gold;
 * tallies; SQL results shaped as JSON, with their error cases; and the
 * agreement test confirm() relies on. */
#include <setjmp.h>
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
#include "template.h"
#include "testutil.h"

extern const struct vat_template vat_tmpl_grouped_sum;

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
    assert_string_equal(f->path, "fixtures/grouped_sum/grouped_sum-00007.csv");
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

static char *block_of(const char *prompt)
{
    const char *a = strstr(prompt, "```csv\n");
    assert_non_null(a);
    a += 7;
    const char *z = strstr(a, "```");
    assert_non_null(z);
    return vat_xstrndup(a, (size_t)(z - a));
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
    char *blk = block_of(b.data);
    assert_string_equal(blk, file);
    assert_non_null(strstr(b.data, "`fixtures/grouped_sum/grouped_sum-00007.csv`"));
    assert_non_null(strstr(b.data, "40 data rows"));
    free(blk);
    vat_buf_release(&b);

    /* One byte short: the last record goes. */
    v->t.inline_max_bytes = flen - 1;
    assert_int_equal(vat_an_prompt_csv(&b, &v->t, 0, &c), 39);
    blk = block_of(b.data);
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
    blk = block_of(b.data);
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
    json_t *x = vat_an_sql_json(db, "SELECT \"group\", SUM(amount) FROM t GROUP BY 1", VAT_AN_OBJECT,
                                &e);
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

    /* Errors: wrong column count, repeated key, NULL value, no row, bad SQL. */
    static const struct {
        const char *sql;
        enum vat_an_result kind;
        const char *msg;
    } bad[] = {
        {"SELECT id, name FROM t", VAT_AN_LIST, "2 columns, expected 1"},
        {"SELECT name, 1 FROM t", VAT_AN_OBJECT, "repeats"},
        {"SELECT id, amount FROM t", VAT_AN_OBJECT, "non-numeric"},
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
    sqlite3_close(db);

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read_back),
        cmocka_unit_test(test_prompt_section),
        cmocka_unit_test(test_spec_and_gold),
        cmocka_unit_test(test_tally),
        cmocka_unit_test(test_sql_shapes),
        cmocka_unit_test(test_agree),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
