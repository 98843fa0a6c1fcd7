/* test_tables.c — the row layout helpers of src/tables.h: canonical JSON
 * text, the verifiers row's spec (spec_json plus the expected column) read
 * back exactly and refused when malformed, the prompt of every table's
 * row form, params_json, and rows of a real task having every column of
 * the layout in order.  tests/python_tables.py checks whole corpora. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsonout.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"

static void expect_canonical(const char *in, const char *want)
{
    char *got = vat_json_canonical(in);
    if (!want) {
        if (got)
            fail_msg("'%s' gave '%s', expected no canonical form", in ? in : "(null)", got);
        return;
    }
    if (!got)
        fail_msg("'%s' has no canonical form", in);
    assert_string_equal(got, want);
    free(got);
}

static void test_canonical(void **state)
{
    (void)state;
    expect_canonical("12", "12");
    expect_canonical(" 1.50 ", "1.5");
    expect_canonical("1e2", "100.0");
    expect_canonical("1e-7", "1e-07");
    expect_canonical("0.1", "0.1");
    expect_canonical("{ \"b\" : [1, 2.0, \"x\"], \"a\" : {\"answerable\": false} }",
                     "{\"b\":[1,2.0,\"x\"],\"a\":{\"answerable\":false}}");
    expect_canonical("\"caf\\u00e9\\n\"", "\"caf\xc3\xa9\\n\"");
    expect_canonical("{\"a\": 1, \"a\": 2}", NULL); /* duplicate keys */
    expect_canonical("SELECT 1", NULL);
    expect_canonical("", NULL);
    expect_canonical(NULL, NULL);
}

static void test_verifier_spec_round_trip(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "{\"checker\":\"value\",\"shape\":\"object\",\"rel_tol\":1e-09,\"abs_tol\":1e-06,"
        "\"expected\":{\"north\":12.5,\"south\":3}}",
        "{\"checker\":\"regex\",\"dialect\":\"python-re\",\"cases\":[{\"text\":\"a\","
        "\"expected\":[\"a\"],\"heldout\":true}]}",
        "{\"checker\":\"abstain\",\"answerable\":false,\"abstention\":{\"answerable\":false}}",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        json_t *spec = json_loads(specs[i], 0, NULL);
        assert_non_null(spec);
        json_t *row = json_object();
        json_object_set_new(row, "task_id", json_string("x-00000"));
        vat_verifier_set_spec(row, spec);
        const json_t *ex = json_object_get(row, "expected");
        const char *text = json_string_value(json_object_get(row, "spec_json"));
        assert_non_null(text);
        assert_null(strstr(text, "\"expected\":{")); /* the value lives in its column */
        if (json_object_get(spec, "expected"))
            assert_true(json_is_string(ex));
        else
            assert_true(json_is_null(ex));
        /* Through the JSONL text and back, the spec is the same value. */
        char *line = vat_json_dumps(row);
        json_t *back = json_loads(line, 0, NULL);
        json_t *got = vat_verifier_spec(back);
        assert_non_null(got);
        assert_true(json_equal(got, spec));
        /* Every member is a string or null: one type per column. */
        const char *k;
        json_t *v;
        json_object_foreach(back, k, v)
            assert_true(json_is_string(v) || json_is_null(v));
        json_decref(got);
        json_decref(back);
        free(line);
        json_decref(row);
        json_decref(spec);
    }
}

static void expect_no_spec(const char *row_text)
{
    json_t *row = json_loads(row_text, 0, NULL);
    assert_non_null(row);
    json_t *spec = vat_verifier_spec(row);
    if (spec)
        fail_msg("a spec from '%s'", row_text);
    json_decref(row);
}

static void test_verifier_spec_refused(void **state)
{
    (void)state;
    expect_no_spec("{\"task_id\":\"x\"}");                                /* no spec_json */
    expect_no_spec("{\"spec_json\":\"[1]\",\"expected\":null}");          /* not an object */
    expect_no_spec("{\"spec_json\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}");      /* duplicate keys */
    expect_no_spec("{\"spec_json\":\"{}\",\"expected\":\"{nope\"}");      /* bad expected */
    expect_no_spec("{\"spec_json\":\"{}\",\"expected\":12}");             /* expected not text */
    /* The old layout (the spec members in the row itself) is not read. */
    expect_no_spec("{\"checker\":\"value\",\"shape\":\"number\",\"expected\":3}");
    json_t *row = json_loads("{\"spec_json\":\"{\\\"checker\\\":\\\"value\\\"}\",\"expected\":\"3\"}",
                             0, NULL);
    json_t *spec = vat_verifier_spec(row);
    assert_non_null(spec);
    assert_true(json_is_integer(json_object_get(spec, "expected")));
    json_decref(spec);
    json_decref(row);
}

static void test_row_prompt_and_params(void **state)
{
    (void)state;
    json_t *a = json_loads("{\"prompt\":\"P\",\"params_json\":\"{\\\"kind\\\":\\\"k\\\"}\"}", 0, NULL);
    json_t *b = json_loads("{\"prompt\":[{\"role\":\"user\",\"content\":\"Q\"}]}", 0, NULL);
    json_t *c = json_loads("{\"prompt\":[{\"role\":\"assistant\",\"content\":\"R\"}],"
                           "\"params_json\":\"[1]\"}",
                           0, NULL);
    assert_string_equal(vat_row_prompt(a), "P");
    assert_string_equal(vat_row_prompt(b), "Q");
    assert_null(vat_row_prompt(c));
    json_t *p = vat_row_params(a);
    assert_string_equal(json_string_value(json_object_get(p, "kind")), "k");
    json_decref(p);
    assert_null(vat_row_params(b));
    assert_null(vat_row_params(c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* Fails the test unless row's members are exactly cols, in order, each of its
 * column's JSON type (recursively). */
static void layout_row(const char *where, const json_t *row, const struct vat_column *cols);

static void layout_value(const char *where, const json_t *v, const struct vat_column *c)
{
    switch (c->kind) {
    case 's':
        layout_row(where, v, c->members);
        break;
    case 'l':
    case 'q': {
        if (!json_is_array(v))
            fail_msg("%s.%s is not a list", where, c->name);
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            if (c->kind == 'l')
                layout_row(where, x, c->members);
            else if (!json_is_string(x))
                fail_msg("%s.%s holds a non-string", where, c->name);
        }
        break;
    }
    default:
        if (json_is_null(v) && c->nullable)
            break;
        if ((strcmp(c->dtype, "string") == 0 && !json_is_string(v)) ||
            (strcmp(c->dtype, "int64") == 0 && !json_is_integer(v)) ||
            (strcmp(c->dtype, "float64") == 0 && !json_is_real(v)) ||
            (strcmp(c->dtype, "bool") == 0 && !json_is_boolean(v)))
            fail_msg("%s.%s is not a %s", where, c->name, c->dtype);
    }
}

static void layout_row(const char *where, const json_t *row, const struct vat_column *cols)
{
    if (!json_is_object(row))
        fail_msg("%s: not an object", where);
    const struct vat_column *c = cols;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)row, k, v) {
        if (!c->name || strcmp(c->name, k) != 0)
            fail_msg("%s: member '%s' where the layout has '%s'", where, k,
                     c->name ? c->name : "(end)");
        layout_value(where, v, c);
        c++;
    }
    if (c->name)
        fail_msg("%s: no member '%s'", where, c->name);
}

/* Draws task 0 of template name (seed 11) into t and appends its rows to
 * tb (zeroed here), to the train split. */
static struct vat_tt_env *add_one_task(const char *name, struct vat_task *t,
                                       struct vat_tables *tb)
{
    const struct vat_template *tm = vat_template_find(name);
    assert_non_null(tm);
    struct vat_tt_env *env = vat_tt_env_new(tm, 11);
    struct vat_replay r;
    vat_tt_draw(env, t, NULL, 0, 6000, 40, &r);
    memset(tb, 0, sizeof *tb);
    vat_tables_add_task(tb, t, &r, "train");
    return env;
}

/* One real task of each family through vat_tables_add_task: every row of
 * every table has the layout's columns. */
static void test_rows_follow_layout(void **state)
{
    (void)state;
    static const char *const names[] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue",
                                        "unanswerable"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        struct vat_task t;
        struct vat_tables tb;
        struct vat_tt_env *env = add_one_task(names[n], &t, &tb);
        for (int i = 0; i < VAT_N_TABLES; i++) {
            const struct vat_buf *b = &tb.buf[i][VAT_SPLIT_TRAIN];
            assert_true(b->len > 0);
            assert_int_equal(tb.buf[i][VAT_SPLIT_TEST].len, 0);
            char *text = vat_xstrndup(b->data, b->len);
            char *save = NULL;
            for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                json_t *row = json_loads(l, 0, NULL);
                char where[128];
                snprintf(where, sizeof where, "%s %s", names[n], vat_table_names[i]);
                layout_row(where, row, vat_table_columns[i]);
                json_decref(row);
            }
            free(text);
        }
        vat_tables_release(&tb);
        vat_task_clear(&t);
        vat_tt_env_free(env);
    }
}

/* rubric_items weights (docs/tables.md): a task's items sum to 1, gate
 * 0.2 and score 0.6; a compound task's `trap` item and every `trap:<name>`
 * item share the trap's 0.2 equally, none of them 0. */
static void test_rubric_weights(void **state)
{
    (void)state;
    static const char *const names[] = {"grouped_sum", "payments_reconciliation",
                                        "sql_paid_order_counts"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        struct vat_task t;
        struct vat_tables tb;
        struct vat_tt_env *env = add_one_task(names[n], &t, &tb);
        const struct vat_buf *b = &tb.buf[VAT_T_RUBRIC_ITEMS][VAT_SPLIT_TRAIN];
        char *text = vat_xstrndup(b->data, b->len);
        char *save = NULL;
        double sum = 0, trap = -1;
        int rows = 0, named = 0;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            json_t *row = json_loads(l, 0, NULL);
            const char *item = json_string_value(json_object_get(row, "item"));
            double w = json_real_value(json_object_get(row, "weight"));
            assert_true(w > 0);
            sum += w;
            rows++;
            if (strcmp(item, "gate") == 0)
                assert_true(w == VAT_RUBRIC_GATE);
            else if (strcmp(item, "score") == 0)
                assert_true(w == VAT_RUBRIC_SCORE);
            else if (strcmp(item, "trap") == 0)
                trap = w;
            else {
                assert_memory_equal(item, "trap:", 5);
                named++;
                assert_true(w == VAT_RUBRIC_TRAPS / (t.n_traps + 1));
            }
            json_decref(row);
        }
        assert_int_equal(named, t.n_traps);
        assert_int_equal(rows, 3 + t.n_traps);
        assert_true(trap == VAT_RUBRIC_TRAPS / (t.n_traps + 1));
        assert_true(sum > 1 - 1e-12 && sum < 1 + 1e-12);
        if (n > 0)
            assert_true(t.n_traps >= 3); /* the compound templates */
        free(text);
        vat_tables_release(&tb);
        vat_task_clear(&t);
        vat_tt_env_free(env);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_verifier_spec_round_trip),
        cmocka_unit_test(test_verifier_spec_refused),
        cmocka_unit_test(test_row_prompt_and_params),
        cmocka_unit_test(test_rows_follow_layout),
        cmocka_unit_test(test_rubric_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
