/* test_progform.c — the program form of the analytics templates, all
 * covered: the sql checker's CSV loader (header, declared types, blanks as
 * NULL, quoted fields, ragged and malformed files refused, the recorded
 * sha256 of the CSV bytes), and every template with a program form drawn
 * in it: gold scores 1, the trap passes the gate and scores 0 on every
 * fixture it is armed on, a malformed answer fails the gate, at least two
 * variant CSVs with the main fixture's header, confirm agrees, the form
 * comes from its own stream (the main fixture is the same bytes in both
 * forms), and a query that hard-codes the main fixture's rows fails.  A
 * template over a SQLite database (join_aggregate) has no loader, variant
 * databases with its tables and columns, and the same rows as the value
 * form under its program-form table names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "admit.h"
#include "progform.h"
#include "sqlgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

static json_t *load3(void)
{
    return json_pack("{s:s, s:[[s,s],[s,s],[s,s]]}", "table", "t", "columns", "name", "TEXT",
                     "n", "INTEGER", "x", "REAL");
}

static json_t *spec_for(const char *rel, const char *gold)
{
    json_t *s = json_pack("{s:s, s:s, s:[s], s:[s], s:b, s:s}", "checker", "sql", "dialect",
                          "sqlite", "fixtures", rel, "tables", "t", "ordered", 1,
                          "reference_sql", gold);
    json_object_set_new(s, "load", load3());
    return s;
}

static void write_file(const char *root, const char *rel, const char *text)
{
    struct vat_err e = {{0}};
    assert_int_equal(vat_write_file_atomic(root, rel, text, strlen(text), &e), 0);
}

static void test_loader_types_blanks_quotes(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("progform-load");
    write_file(root, "a.csv",
               "name,n,x\r\n\"Doe, Jane\",7,12.50\r\n\"say \"\"hi\"\"\",,\r\nbob,0012,3\r\n");
    json_t *spec = spec_for("a.csv", "SELECT name FROM t");
    struct vat_verdict v;
    const char *q = "SELECT name, typeof(n), n, typeof(x), x FROM t ORDER BY rowid";
    json_t *rows = vat_sql_run(spec, root, "a.csv", q, strlen(q), &v);
    assert_non_null(rows);
    char *text = json_dumps(rows, JSON_COMPACT);
    assert_string_equal(text, "[[\"Doe, Jane\",\"integer\",7,\"real\",12.5],"
                              "[\"say \\\"hi\\\"\",\"null\",null,\"null\",null],"
                              "[\"bob\",\"integer\",12,\"real\",3.0]]");
    free(text);
    json_decref(rows);

    /* The checker scores answers on the loaded table. */
    json_decref(spec);
    spec = spec_for("a.csv", "SELECT name FROM t WHERE n > 0 ORDER BY name");
    const char *good = "select name from t where n >= 1 order by 1";
    v = vat_check_sql(spec, root, good, strlen(good));
    assert_true(v.gate_passed);
    assert_true(v.score == 1.0);
    const char *bad = "SELECT name FROM t ORDER BY name";
    v = vat_check_sql(spec, root, bad, strlen(bad));
    assert_true(v.gate_passed);
    assert_true(v.score == 0.0);
    json_decref(spec);
    vat_test_rmtree(root);
    free(root);
}

static void test_loader_refuses_bad_files(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("progform-bad");
    static const char *const bad[] = {
        "name,x,n\nA,1,2\n",      /* header out of order */
        "name,n,x\nA,1\n",        /* ragged record */
        "name,n,x\nA\"b,1,2\n",   /* a quote in an unquoted field */
        "name,n,x\n\"A,1,2\n",    /* an unterminated quoted field */
        "",                       /* no header */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_file(root, "b.csv", bad[i]);
        json_t *spec = spec_for("b.csv", "SELECT name FROM t");
        struct vat_verdict v = vat_check_sql(spec, root, "SELECT 1", 8);
        assert_false(v.gate_passed);
        assert_string_equal(v.code, VAT_INTERNAL);
        assert_non_null(strstr(v.reason, "cannot be loaded as CSV"));
        json_decref(spec);
    }
    /* A malformed "load" is the spec's fault. */
    write_file(root, "c.csv", "name,n,x\nA,1,2\n");
    json_t *spec = spec_for("c.csv", "SELECT name FROM t");
    json_object_set_new(spec, "load", json_pack("{s:s, s:[[s,s]]}", "table", "t; DROP",
                                                "columns", "name", "TEXT"));
    struct vat_verdict v = vat_check_sql(spec, root, "SELECT 1", 8);
    assert_false(v.gate_passed);
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);
    vat_test_rmtree(root);
    free(root);
}

/* The prepared check verifies the sha256 of the CSV bytes, as recorded. */
static void test_prepared_hashes_csv_bytes(void **state)
{
    (void)state;
    char *root = vat_test_tmpdir("progform-prep");
    const char *text = "name,n,x\nA,1,2\nB,3,4\n";
    write_file(root, "d.csv", text);
    char hex[65];
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(text, strlen(text), md, &ml, EVP_sha256(), NULL);
    for (int k = 0; k < 32; k++)
        snprintf(hex + 2 * k, 3, "%02x", md[k]);
    json_t *spec = spec_for("d.csv", "SELECT name, n FROM t ORDER BY name");
    const char *sha[1] = {hex};
    struct vat_verdict v;
    struct vat_sql_prep *p = vat_sql_prepare(spec, root, sha, NULL, 0, &v);
    assert_non_null(p);
    const char *ans = "SELECT name, n FROM t ORDER BY n";
    v = vat_sql_check_prepared(p, ans, strlen(ans), NULL);
    assert_true(v.score == 1.0);
    vat_sql_prep_free(p);
    hex[0] = hex[0] == '0' ? '1' : '0';
    assert_null(vat_sql_prepare(spec, root, sha, NULL, 0, &v));
    assert_string_equal(v.code, VAT_TAMPERED);
    json_decref(spec);
    vat_test_rmtree(root);
    free(root);
}

/* The main databases of a task's value form (v) and program form (p)
 * hold the same rows, table by table in creation order, whatever the
 * program form named the tables. */
static void assert_same_rows(const struct vat_task *v, const struct vat_task *p)
{
    json_t *names[2] = {json_array(), json_array()};
    const struct vat_task *t2[2] = {v, p};
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *c;
        json_array_foreach(t2[s]->fixture[0].columns, i, c) {
            const char *full = json_string_value(c);
            json_t *name = json_stringn(full, strcspn(full, "."));
            size_t n = json_array_size(names[s]);
            if (n == 0 || !json_equal(json_array_get(names[s], n - 1), name))
                json_array_append(names[s], name);
            json_decref(name);
        }
    }
    assert_int_equal(json_array_size(names[0]), json_array_size(names[1]));
    assert_true(json_array_size(names[0]) >= 1);
    for (size_t i = 0; i < json_array_size(names[0]); i++) {
        struct vat_err e = {{0}};
        json_t *a = vat_sqlgen_read_table(v->root, v->fixture[0].path,
                                          json_string_value(json_array_get(names[0], i)), NULL, &e);
        json_t *b = vat_sqlgen_read_table(p->root, p->fixture[0].path,
                                          json_string_value(json_array_get(names[1], i)), NULL, &e);
        assert_non_null(a);
        assert_non_null(b);
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
    }
    json_decref(names[0]);
    json_decref(names[1]);
}

static void check_program_template(const struct vat_template *tm)
{
    struct vat_tt_env *vs = vat_tt_env_new(tm, 1414), *vv = vat_tt_env_new(tm, 1414);
    json_object_set_new(vs->cfg, "answer_form", json_string("sql"));
    char *other = vat_test_tmpdir("progform-value");
    for (uint32_t i = 0; i < 6; i++) {
        struct vat_task t, u;
        struct vat_replay r, ru;
        uint32_t a = vat_tt_draw(vs, &t, NULL, i, 6000, 20, &r);
        assert_string_equal(vat_task_answer_kind(&t), "sql");
        assert_string_equal(vat_task_answer_form(&t), "sql");
        /* worded in the task's own style, the record of its own draws */
        assert_string_equal(t.prompt_style, "explicit");
        assert_non_null(strstr(t.prompt, "Question: "));
        assert_true(t.phrasing[0] != 0);
        assert_true(r.v[VAT_ROLE_GOLD].gate_passed && r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed && r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);
        assert_true(t.n_fixtures >= 3);
        /* A SQLite main fixture is used as it is: no CSV loader. */
        bool db = strcmp(t.fixture[0].format, "sqlite") == 0;
        if (db)
            assert_null(json_object_get(t.spec, "load"));
        else
            assert_non_null(json_object_get(t.spec, "load"));
        struct vat_err e = {{0}};
        assert_int_equal(vat_task_confirm(&t, &e), 0);
        /* Variants share the header (a database: its tables and columns),
         * differ from the main fixture. */
        size_t n0 = 0;
        char *main_text = vat_tt_fixture_text(&t, 0, &n0);
        for (int k = 1; k < t.n_fixtures; k++) {
            assert_string_equal(t.fixture[k].role, "variant");
            assert_string_equal(t.fixture[k].format, t.fixture[0].format);
            size_t nk = 0;
            char *vt = vat_tt_fixture_text(&t, k, &nk);
            if (db) {
                assert_true(json_equal(t.fixture[k].columns, t.fixture[0].columns));
                assert_true(nk != n0 || memcmp(vt, main_text, n0) != 0);
            } else {
                size_t h = strcspn(main_text, "\n");
                assert_memory_equal(vt, main_text, h);
                assert_string_not_equal(vt, main_text);
            }
            free(vt);
        }
        /* The value form of the same task (same attempt) has the same
         * main fixture: the form's stream moves no fixture draw.  (Drawn
         * with a cap that shows the whole file: past the cap a value
         * question is asked as a program.) */
        vat_task_init(&u, tm, i, other);
        struct vat_draw_opts o = {.master_seed = 1414, .cfg = vv->cfg,
                                  .inline_max_bytes = 1 << 20};
        assert_int_equal(vat_task_draw(&u, a, &o, &ru, &e), 0);
        size_t n1 = 0;
        char *value_text = vat_tt_fixture_text(&u, 0, &n1);
        if (db) /* renamed tables (progform.h's db_table), the same rows */
            assert_same_rows(&u, &t);
        else {
            assert_int_equal(n0, n1);
            assert_memory_equal(main_text, value_text, n0);
        }
        assert_true(u.n_fixtures == 1);
        /* The value gold is what the gold query gives on the main file. */
        json_t *vg = json_loads(u.gold, JSON_DECODE_ANY, NULL);
        assert_true(json_equal(vg, json_object_get(t.spec, "value_answer")));
        json_decref(vg);
        /* Hard-coding the main fixture's rows passes there, fails overall. */
        struct vat_verdict v;
        json_t *rows = vat_sql_run(t.spec, t.root, t.fixture[0].path, t.gold, strlen(t.gold), &v);
        assert_non_null(rows);
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "SELECT * FROM (VALUES ");
        for (size_t k = 0; k < json_array_size(rows); k++) {
            json_t *row = json_array_get(rows, k);
            vat_buf_puts(&b, k ? ", (" : "(");
            for (size_t c = 0; c < json_array_size(row); c++) {
                json_t *x = json_array_get(row, c);
                if (c)
                    vat_buf_puts(&b, ", ");
                if (json_is_string(x))
                    vat_buf_printf(&b, "'%s'", json_string_value(x));
                else
                    vat_buf_printf(&b, "%.17g", json_number_value(x));
            }
            vat_buf_putc(&b, ')');
        }
        vat_buf_putc(&b, ')');
        v = vat_tt_check(&t, b.data);
        assert_true(v.gate_passed);
        assert_true(v.score < 1.0);
        vat_buf_release(&b);
        json_decref(rows);
        free(main_text);
        free(value_text);
        vat_task_clear(&u);
        vat_task_clear(&t);
    }
    vat_test_rmtree(other);
    free(other);
    vat_tt_env_free(vs);
    vat_tt_env_free(vv);
}

static void test_every_program_template(void **state)
{
    (void)state;
    int n = 0;
    for (size_t i = 0; vat_registry[i]; i++) {
        if (!vat_registry[i]->progform)
            continue;
        assert_string_equal(vat_registry[i]->family, "analytics");
        check_program_template(vat_registry[i]);
        n++;
    }
    assert_true(n >= 1);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names space is injective for every template: no two elements spell
 * the same (table, out), so tasks below VAT_PF_NAME_SPACE get distinct
 * gold programs (a base that a prefix or suffix composes into another
 * base, as "shop_" + "orders" into "shop_orders", would break it). */
static void test_names_space_injective(void **state)
{
    (void)state;
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_progform *pf = vat_registry[i]->progform;
        if (!pf)
            continue;
        assert_true(pf->ntables >= 4 && pf->nouts >= 4);
        uint64_t n = VAT_PF_NAME_SPACE(pf);
        assert_true(n >= 16384);
        char **v = vat_xcalloc((size_t)n, sizeof *v);
        for (uint64_t q = 0; q < n; q++) {
            struct vat_pf_names nm;
            vat_progform_compose(pf, q, &nm);
            assert_true(strlen(nm.table) < sizeof nm.table - 1);
            v[q] = vat_xasprintf("%s %s", nm.table, nm.out);
        }
        qsort(v, (size_t)n, sizeof *v, cmp_str);
        for (uint64_t q = 1; q < n; q++)
            if (strcmp(v[q - 1], v[q]) == 0)
                fail_msg("%s: the names '%s' come twice", vat_registry[i]->name, v[q]);
        for (uint64_t q = 0; q < n; q++)
            free(v[q]);
        free(v);
    }
}

/* "mixed" draws both forms over a dozen tasks. */
static void test_mixed_draws_both(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_template_find("grouped_sum");
    assert_non_null(tm);
    struct vat_tt_env *v = vat_tt_env_new(tm, 7);
    json_object_set_new(v->cfg, "answer_form", json_string("mixed"));
    int sql = 0, value = 0;
    for (uint32_t i = 0; i < 12; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 20, &r);
        if (strcmp(vat_task_answer_form(&t), "sql") == 0)
            sql++;
        else
            value++;
        vat_task_clear(&t);
    }
    assert_true(sql > 0 && value > 0);
    vat_tt_env_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loader_types_blanks_quotes),
        cmocka_unit_test(test_loader_refuses_bad_files),
        cmocka_unit_test(test_prepared_hashes_csv_bytes),
        cmocka_unit_test(test_every_program_template),
        cmocka_unit_test(test_mixed_draws_both),
        cmocka_unit_test(test_names_space_injective),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
