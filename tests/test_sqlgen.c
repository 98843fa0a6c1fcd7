/* test_sqlgen.c — the shared SQL-template machinery: fixture sets (main
 * plus variants on their own streams), prompt rendering within a byte
 * budget, plain row reads, the checker spec, runs on every fixture and
 * result comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sqlgen.h"
#include "testutil.h"
#include "vat.h"
#include "verifiers.h"

static const char schema[] = "CREATE TABLE t (a INTEGER, b TEXT, c REAL);"
                             "CREATE TABLE u (x TEXT)";
static const char *const two_tables[] = {"t", "u"};

/* Main: 20 rows of t and 2 of u; variant k: k + 1 rows of t, none of u.
 * Values come from the fixture's stream, so streams can be compared. */
static int toy_fill(void *ctx, struct vat_rng *rng, int corner, struct vat_sqlw *w,
                    struct vat_err *e)
{
    const char *bad = ctx;
    int n = corner == 0 ? 20 : corner + 1;
    for (int i = 0; i < n; i++) {
        char b[16];
        snprintf(b, sizeof b, "it's %u", vat_rng_below(rng, 1000));
        if (i == 3 && corner == 0) {
            if (vat_sqlw_insert(w, "INSERT INTO t VALUES (?1, ?2, ?3)", "ttn", NULL, "null c") != 0)
                return vat_err_set(e, "insert failed");
            continue;
        }
        if (vat_sqlw_insert(w, "INSERT INTO t VALUES (?1, ?2, ?3)", "itd", (int64_t)i, b,
                            (double)vat_rng_below(rng, 100) / 4.0) != 0)
            return vat_err_set(e, "insert failed");
    }
    if (corner == 0)
        for (int i = 0; i < 2; i++)
            if (vat_sqlw_insert(w, "INSERT INTO u VALUES (?1)", "t", i ? "y" : "x") != 0)
                return vat_err_set(e, "insert failed");
    if (bad && vat_sqlw_insert(w, bad, "i", (int64_t)1) != 0)
        return vat_err_set(e, "insert failed");
    return 0;
}

struct env {
    char *root;
    struct vat_task t;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->root = vat_test_tmpdir("sqlgen");
    vat_task_init(&v->t, NULL, 7, v->root);
    v->t.master_seed = 99;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_task_clear(&v->t);
    vat_test_rmtree(v->root);
    free(v->root);
    free(v);
    return 0;
}

static int write_toy(struct vat_task *t, int nvariants, const char *bad, struct vat_err *e)
{
    struct vat_rng rng;
    vat_rng_seed(&rng, 42, 54);
    struct vat_sqlgen_set s = {schema, two_tables, 2, nvariants, toy_fill, (void *)bad};
    return vat_sqlgen_write_set(t, &rng, &s, e);
}

static void test_write_set_registers_fixtures(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 2, NULL, &e), 0);
    assert_int_equal(v->t.n_fixtures, 3);
    assert_string_equal(v->t.fixture[0].path, "fixtures/task/000/task-00007.sqlite");
    assert_string_equal(v->t.fixture[1].path, "fixtures/task/000/task-00007.v1.sqlite");
    assert_string_equal(v->t.fixture[2].path, "fixtures/task/000/task-00007.v2.sqlite");
    assert_string_equal(v->t.fixture[0].role, "main");
    assert_string_equal(v->t.fixture[1].role, "variant");
    assert_string_equal(v->t.fixture[2].format, "sqlite");
    assert_int_equal(v->t.fixture[0].rows, 22);
    assert_int_equal(v->t.fixture[1].rows, 2);
    assert_int_equal(v->t.fixture[2].rows, 3);
    char *cols = json_dumps(v->t.fixture[0].columns, JSON_COMPACT);
    assert_string_equal(cols, "[\"t.a\",\"t.b\",\"t.c\",\"u.x\"]");
    free(cols);
}

static void test_main_fixture_independent_of_variant_count(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 1, NULL, &e), 0);
    size_t n1, n1v;
    char *main1 = vat_tt_fixture_text(&v->t, 0, &n1);
    char *var1 = vat_tt_fixture_text(&v->t, 1, &n1v);
    vat_task_clear(&v->t);

    char *root2 = vat_test_tmpdir("sqlgen2");
    struct vat_task t2;
    vat_task_init(&t2, NULL, 7, root2);
    t2.master_seed = 99;
    assert_int_equal(write_toy(&t2, 3, NULL, &e), 0);
    size_t n2, n2v;
    char *main2 = vat_tt_fixture_text(&t2, 0, &n2);
    char *var2 = vat_tt_fixture_text(&t2, 1, &n2v);
    assert_int_equal(n1, n2);
    assert_memory_equal(main1, main2, n1);
    assert_int_equal(n1v, n2v);
    assert_memory_equal(var1, var2, n1v);

    /* A variant follows the task's identity: another master seed draws
     * other values for it. */
    struct vat_task t3;
    char *root3 = vat_test_tmpdir("sqlgen3");
    vat_task_init(&t3, NULL, 7, root3);
    t3.master_seed = 100;
    assert_int_equal(write_toy(&t3, 1, NULL, &e), 0);
    size_t n3v;
    char *var3 = vat_tt_fixture_text(&t3, 1, &n3v);
    assert_true(n3v != n1v || memcmp(var1, var3, n1v) != 0);

    free(main1);
    free(main2);
    free(var1);
    free(var2);
    free(var3);
    vat_task_clear(&t2);
    vat_task_clear(&t3);
    vat_test_rmtree(root2);
    vat_test_rmtree(root3);
    free(root2);
    free(root3);
}

static void test_failed_fill_leaves_no_file(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 1, "INSERT INTO nowhere VALUES (?1)", &e), -1);
    /* The insert's own message, not just the fill's. */
    assert_non_null(strstr(e.msg, "nowhere"));
    assert_int_equal(v->t.n_fixtures, 0);
    char *p = vat_path_join(v->root, "fixtures/task/000/task-00007.sqlite");
    assert_int_not_equal(access(p, F_OK), 0);
    char *tmp = vat_xasprintf("%s.tmp", p);
    assert_int_not_equal(access(tmp, F_OK), 0);
    free(tmp);
    free(p);

    vat_task_init(&v->t, NULL, 7, v->root);
    assert_int_equal(write_toy(&v->t, 9, NULL, &e), -1);
    assert_non_null(strstr(e.msg, "variant"));
}

/* Writes the toy set with one variant and renders its main fixture with
 * max_bytes of rows into b; *cut is what the rendering says of it. */
static void render_toy(struct env *v, size_t max_bytes, struct vat_buf *b, bool *cut)
{
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 1, NULL, &e), 0);
    assert_int_equal(
        vat_sqlgen_render(v->root, v->t.fixture[0].path, two_tables, 2, max_bytes, b, cut, &e), 0);
}

static void test_render_full(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    struct vat_buf b = VAT_BUF_INIT;
    bool cut = true;
    render_toy(v, 100000, &b, &cut);
    assert_false(cut);
    assert_non_null(strstr(b.data, "CREATE TABLE t (a INTEGER, b TEXT, c REAL);\n"));
    assert_non_null(strstr(b.data, "-- t: all 20 rows\nINSERT INTO t VALUES\n  (0, 'it''s "));
    assert_non_null(strstr(b.data, "  (NULL, 'null c', NULL),\n"));
    assert_non_null(strstr(b.data, "CREATE TABLE u (x TEXT);\n-- u: all 2 rows\n"));
    assert_non_null(strstr(b.data, "  ('x'),\n  ('y');\n"));
    /* Reals stay reals: 0.0, 12.5, 3.0 — never a bare integer. */
    json_t *rows = vat_sqlgen_read_table(v->root, v->t.fixture[0].path, "t", NULL, &e);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        const json_t *c = json_array_get(row, 2);
        if (json_is_real(c) && json_real_value(c) == (double)(long)json_real_value(c)) {
            char *lit = vat_xasprintf(", %ld.0)", (long)json_real_value(c));
            assert_non_null(strstr(b.data, lit));
            free(lit);
        }
    }
    json_decref(rows);
    assert_null(strstr(b.data, "e+"));
    vat_buf_release(&b);

    /* An empty table says so. */
    assert_int_equal(
        vat_sqlgen_render(v->root, v->t.fixture[1].path, two_tables, 2, 100000, &b, &cut, &e), 0);
    assert_non_null(strstr(b.data, "-- u: no rows\n"));
    vat_buf_release(&b);

    assert_int_equal(vat_sqlgen_render(v->root, v->t.fixture[0].path,
                                       (const char *const[]){"missing"}, 1, 100, &b, &cut, &e),
                     -1);
    assert_non_null(strstr(e.msg, "missing"));
    vat_buf_release(&b);
}

/* Bytes of the "  (...)" row lines in a rendering. */
static size_t row_bytes(const char *s)
{
    size_t n = 0;
    for (const char *p = strstr(s, "\n  ("); p; p = strstr(p + 1, "\n  ("))
        n += (size_t)(strchr(p + 1, '\n') - p);
    return n;
}

static void test_render_budget(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    struct vat_buf b = VAT_BUF_INIT;
    bool cut = false;
    /* The short table u keeps both rows; t gets what is left. */
    render_toy(v, 200, &b, &cut);
    assert_true(cut);
    assert_non_null(strstr(b.data, "-- u: all 2 rows\n"));
    assert_non_null(strstr(b.data, "of 20 rows (the other "));
    assert_true(row_bytes(b.data) <= 200);
    assert_true(row_bytes(b.data) > 100);
    /* The last shown row ends the statement. */
    const char *ins = strstr(b.data, "INSERT INTO t VALUES\n");
    const char *end = strstr(ins, ";\n");
    assert_non_null(end);
    assert_true(end < strstr(b.data, "CREATE TABLE u"));
    vat_buf_release(&b);

    assert_int_equal(
        vat_sqlgen_render(v->root, v->t.fixture[0].path, two_tables, 2, 0, &b, &cut, &e), 0);
    assert_true(cut);
    assert_non_null(strstr(b.data, "-- t: 20 rows, none shown here (they are in the file)\n"));
    assert_null(strstr(b.data, "INSERT"));
    assert_non_null(strstr(b.data, "CREATE TABLE u"));
    vat_buf_release(&b);
}

static void test_read_table_and_col(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 1, NULL, &e), 0);
    json_t *cols = NULL;
    json_t *rows = vat_sqlgen_read_table(v->root, v->t.fixture[0].path, "t", &cols, &e);
    assert_non_null(rows);
    assert_int_equal(json_array_size(rows), 20);
    assert_int_equal(vat_sqlgen_col(cols, "a"), 0);
    assert_int_equal(vat_sqlgen_col(cols, "c"), 2);
    assert_int_equal(vat_sqlgen_col(cols, "z"), -1);
    const json_t *r0 = json_array_get(rows, 0), *r3 = json_array_get(rows, 3);
    assert_true(json_is_integer(json_array_get(r0, 0)));
    assert_true(json_is_string(json_array_get(r0, 1)));
    assert_true(json_is_real(json_array_get(r0, 2)));
    assert_true(json_is_null(json_array_get(r3, 0)));
    assert_string_equal(json_string_value(json_array_get(r3, 1)), "null c");
    json_decref(rows);
    json_decref(cols);
    assert_null(vat_sqlgen_read_table(v->root, v->t.fixture[0].path, "nope", NULL, &e));
    assert_null(vat_sqlgen_read_table(v->root, "fixtures/none.sqlite", "t", NULL, &e));
}

/* The rows vat_sqlgen_scan_table hands over, kept for comparison. */
struct scanned {
    size_t rows, stop_at;
    struct vat_sqlgen_cell cell[32][3];
    char text[32][3][24];
};

static int keep_row(void *ctx, size_t row, const struct vat_sqlgen_cell *cell,
                    struct vat_err *e)
{
    struct scanned *s = ctx;
    if (row != s->rows || row >= 32)
        return vat_err_set(e, "row %zu out of turn", row);
    for (int k = 0; k < 3; k++) {
        s->cell[row][k] = cell[k];
        if (cell[k].s) {
            assert_int_equal(cell[k].s[cell[k].n], 0); /* NUL-terminated */
            snprintf(s->text[row][k], sizeof s->text[row][k], "%s", cell[k].s);
            s->cell[row][k].s = s->text[row][k];
        }
    }
    s->rows++;
    return s->rows == s->stop_at ? vat_err_set(e, "stopped at %zu", row) : 0;
}

/* A scan gives the columns asked for, in the order asked, with the types
 * and values the JSON read gives; a missing column, a missing table and a
 * callback's stop are errors; a blob comes as its bytes, NUL-terminated. */
static void test_scan_table(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 1, "INSERT INTO u VALUES (CASE WHEN ?1 THEN x'6162' END)",
                               &e),
                     0);
    const char *rel = v->t.fixture[0].path;
    json_t *rows = vat_sqlgen_read_table(v->root, rel, "t", NULL, &e);
    assert_non_null(rows);
    static const char *const want[3] = {"c", "a", "b"};
    static const int from[3] = {2, 0, 1};
    struct scanned *s = calloc(1, sizeof *s);
    assert_int_equal(vat_sqlgen_scan_table(v->root, rel, "t", want, 3, keep_row, s, &e), 0);
    assert_int_equal(s->rows, json_array_size(rows));
    for (size_t r = 0; r < s->rows; r++)
        for (int k = 0; k < 3; k++) {
            const json_t *j = json_array_get(json_array_get(rows, r), (size_t)from[k]);
            const struct vat_sqlgen_cell *c = &s->cell[r][k];
            if (json_is_integer(j)) {
                assert_int_equal(c->type, SQLITE_INTEGER);
                assert_int_equal(c->i, json_integer_value(j));
            } else if (json_is_real(j)) {
                assert_int_equal(c->type, SQLITE_FLOAT);
                assert_true(c->d == json_real_value(j));
            } else if (json_is_null(j)) {
                assert_int_equal(c->type, SQLITE_NULL);
                assert_null(c->s);
            } else {
                assert_int_equal(c->type, SQLITE_TEXT);
                assert_string_equal(c->s, json_string_value(j));
                assert_int_equal(c->n, json_string_length(j));
            }
        }
    /* row 3 holds NULL, 'null c' and the text 'null c' in c */
    assert_int_equal(s->cell[3][1].type, SQLITE_NULL);
    assert_string_equal(s->cell[3][2].s, "null c");
    json_decref(rows);

    /* the blob in u */
    memset(s, 0, sizeof *s);
    static const char *const x[3] = {"x", "x", "x"};
    assert_int_equal(vat_sqlgen_scan_table(v->root, rel, "u", x, 3, keep_row, s, &e), 0);
    assert_int_equal(s->rows, 3);
    assert_int_equal(s->cell[2][0].type, SQLITE_BLOB);
    assert_int_equal(s->cell[2][0].n, 2);
    assert_string_equal(s->cell[2][0].s, "ab");

    /* the callback stops the scan */
    memset(s, 0, sizeof *s);
    s->stop_at = 5;
    assert_int_equal(vat_sqlgen_scan_table(v->root, rel, "t", want, 3, keep_row, s, &e), -1);
    assert_int_equal(s->rows, 5);
    assert_non_null(strstr(e.msg, "stopped at 4"));

    static const char *const missing[2] = {"a", "zz"};
    assert_int_equal(vat_sqlgen_scan_table(v->root, rel, "t", missing, 2, keep_row, s, &e), -1);
    assert_non_null(strstr(e.msg, "'zz'"));
    assert_int_equal(vat_sqlgen_scan_table(v->root, rel, "nope", want, 3, keep_row, s, &e), -1);
    assert_int_equal(
        vat_sqlgen_scan_table(v->root, "fixtures/none.sqlite", "t", want, 3, keep_row, s, &e), -1);
    free(s);
}

static void test_spec(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 2, NULL, &e), 0);
    json_t *spec = vat_sqlgen_spec(&v->t, two_tables, 2, true, 0, 1e-6);
    assert_string_equal(json_string_value(json_object_get(spec, "checker")), "sql");
    assert_string_equal(json_string_value(json_object_get(spec, "dialect")), "sqlite");
    const json_t *fx = json_object_get(spec, "fixtures");
    assert_int_equal(json_array_size(fx), 3);
    assert_string_equal(json_string_value(json_array_get(fx, 2)), v->t.fixture[2].path);
    assert_int_equal(json_array_size(json_object_get(spec, "tables")), 2);
    assert_true(json_is_true(json_object_get(spec, "ordered")));
    assert_true(json_real_value(json_object_get(spec, "abs_tol")) == 1e-6);
    assert_int_equal(json_integer_value(json_object_get(spec, "step_budget")),
                     VAT_SQLGEN_STEP_BUDGET);
    assert_int_equal(json_integer_value(json_object_get(spec, "max_rows")), VAT_SQLGEN_MAX_ROWS);
    json_decref(spec);
}

static void test_run_all_and_variants_differ(void **state)
{
    struct env *v = *state;
    struct vat_err e = {{0}};
    assert_int_equal(write_toy(&v->t, 2, NULL, &e), 0);
    v->t.spec = vat_sqlgen_spec(&v->t, two_tables, 2, true, 0, 1e-6);
    json_t *res = vat_sqlgen_run_all(&v->t, "SELECT COUNT(*) FROM t", &e);
    assert_non_null(res);
    assert_int_equal(json_array_size(res), 3);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(json_array_get(res, 0), 0), 0)),
                     20);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(json_array_get(res, 2), 0), 0)),
                     3);
    assert_int_equal(vat_sqlgen_variants_differ(&v->t, res, true, 0, 1e-6, &e), 0);
    json_decref(res);

    /* A query whose answer is the same everywhere cannot be told apart. */
    res = vat_sqlgen_run_all(&v->t, "SELECT 1", &e);
    assert_non_null(res);
    assert_int_equal(vat_sqlgen_variants_differ(&v->t, res, true, 0, 1e-6, &e), -1);
    assert_non_null(strstr(e.msg, ".v1.sqlite"));
    json_decref(res);

    assert_null(vat_sqlgen_run_all(&v->t, "SELECT * FROM nowhere", &e));
    assert_non_null(strstr(e.msg, "task-00007.sqlite"));
}

static json_t *parse(const char *s)
{
    json_error_t err;
    json_t *j = json_loads(s, JSON_DECODE_ANY, &err);
    assert_non_null(j);
    return j;
}

static bool eq(const char *a, const char *b, bool ordered, char *why)
{
    json_t *x = parse(a), *y = parse(b);
    bool r = vat_sqlgen_rows_equal(x, y, ordered, 0, 1e-6, why, 200);
    json_decref(x);
    json_decref(y);
    return r;
}

static void test_rows_equal(void **state)
{
    (void)state;
    char why[200] = "";
    assert_true(eq("[[\"a\",1],[\"b\",2.5]]", "[[\"a\",1.0],[\"b\",2.5000001]]", true, why));
    assert_false(eq("[[\"a\",1],[\"b\",2.5]]", "[[\"a\",1],[\"b\",2.51]]", true, why));
    assert_non_null(strstr(why, "row 2 differs"));
    assert_false(eq("[[\"a\",1],[\"b\",2]]", "[[\"b\",2],[\"a\",1]]", true, why));
    assert_true(eq("[[\"a\",1],[\"b\",2]]", "[[\"b\",2],[\"a\",1]]", false, why));
    assert_false(eq("[[\"a\",1]]", "[[\"a\",1],[\"a\",1]]", false, why));
    assert_non_null(strstr(why, "1 rows expected, 2 returned"));
    assert_false(eq("[[\"a\"],[\"a\"],[\"b\"]]", "[[\"a\"],[\"b\"],[\"b\"]]", false, why));
    assert_false(eq("[[null]]", "[[0]]", true, why));
    assert_true(eq("[[null]]", "[[null]]", true, why));
    assert_false(eq("[[\"1\"]]", "[[1]]", true, why));
    assert_false(eq("[[\"A\"]]", "[[\"a\"]]", true, why));
    assert_false(eq("[[\"a\",1]]", "[[\"a\",1,2]]", true, why));
    assert_true(eq("[]", "[]", true, why));
}

static void test_put_literal(void **state)
{
    (void)state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_sqlgen_put_literal(&b, "O'Brien's");
    assert_string_equal(b.data, "'O''Brien''s'");
    vat_buf_release(&b);
    vat_sqlgen_put_literal(&b, "");
    assert_string_equal(b.data, "''");
    vat_buf_release(&b);
}

/* Literals quote their text with every quote inside doubled, and SQLite
 * reads each back as the text it came from. */
static void test_put_literal_reads_back(void **state)
{
    (void)state;
    static const struct {
        const char *text, *sql;
    } cases[] = {
        {"", "''"},
        {"plain", "'plain'"},
        {"O'Brien", "'O''Brien'"},
        {"'", "''''"},
        {"''", "''''''"},
        {"a'b'c'", "'a''b''c'''"},
        {"'lead", "'''lead'"},
        {"say \"hi\"", "'say \"hi\"'"},
    };
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "x");
        vat_sqlgen_put_literal(&b, cases[i].text);
        assert_string_equal(b.data + 1, cases[i].sql);
        char *q = sqlite3_mprintf("SELECT %s", b.data + 1);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), cases[i].text);
        sqlite3_finalize(st);
        sqlite3_free(q);
        vat_buf_release(&b);
    }
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_literal_reads_back),
        cmocka_unit_test_setup_teardown(test_write_set_registers_fixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_main_fixture_independent_of_variant_count, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_fill_leaves_no_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_render_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_render_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_table_and_col, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_all_and_variants_differ, setup, teardown),
        cmocka_unit_test(test_rows_equal),
        cmocka_unit_test(test_put_literal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
