/* test_grouped_sum.c — the grouped_sum template: 60 tasks admit on their
 * first draw with gold 1, trap 0 (gate passed) and the malformed answer
 * gated out; same seed -> same bytes; the prompt names the fixture and
 * inlines it whole or truncated; hand-made fixtures for a region with only
 * non-paid orders, exact cent sums, quoted customer names and broken
 * files; confirm catches a wrong gold; checker cases around the gold. */
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

#define SEED 77031u
#define NTASKS 60

extern const struct vat_template vat_tmpl_grouped_sum;
static const struct vat_template *const T = &vat_tmpl_grouped_sum;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("gsum");
    v->cfg = vat_template_default_params(T);
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    vat_test_rmtree(v->dir);
    free(v->dir);
    json_decref(v->cfg);
    free(v);
    return 0;
}

/* Draws attempt 0 of task index into root; asserts it is admitted. */
static void draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                 size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    int rc = vat_task_draw(t, 0, &o, r, &e);
    if (rc != 0)
        fail_msg("%s not admitted: %s", t->id, e.msg);
}

static char *fixture_text(const struct vat_task *t, size_t *len)
{
    char *path = vat_path_join(t->root, t->fixture[0].path);
    char *s = vat_test_read_file(path, len);
    free(path);
    assert_non_null(s);
    return s;
}

/* Returns the text between "```csv\n" and the closing "```" of the prompt. */
static char *inline_block(const char *prompt)
{
    const char *a = strstr(prompt, "```csv\n");
    assert_non_null(a);
    a += 7;
    const char *z = strstr(a, "```");
    assert_non_null(z);
    return vat_xstrndup(a, (size_t)(z - a));
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* Asserts two JSON texts hold the same value (numbers exactly equal). */
static void assert_same_json(const char *got, const char *want)
{
    json_t *g = json_loads(got, JSON_DECODE_ANY, NULL), *w = json_loads(want, JSON_DECODE_ANY, NULL);
    assert_non_null(g);
    assert_non_null(w);
    struct vat_err e = {{0}};
    if (vat_an_agree("json", w, g, 0, 0, &e) != 0)
        fail_msg("'%s' is not '%s': %s", got, want, e.msg);
    json_decref(g);
    json_decref(w);
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit_first_draw(void **state)
{
    struct env *v = *state;
    int with_unpaid_region = 0, with_quoted = 0, truncated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw(&t, v, v->dir, i, 6000, &r);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);
        assert_string_not_equal(t.gold, t.trap);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(t.fixture[0].format, "csv");
        assert_string_equal(t.fixture[0].role, "main");
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 2)), "region");
        assert_string_equal(json_string_value(json_object_get(t.params, "status")), "paid");

        /* Rows recorded = records in the file below the header. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);

        /* Regions in the file but not in gold have no paid order. */
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        struct vat_an_tally regions = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++)
            vat_an_tally_add(&regions, vat_csv_get(&c, k, 2), 0);
        assert_true(regions.n >= 3 && regions.n <= 6);
        if (regions.n > json_object_size(gold))
            with_unpaid_region++;
        vat_an_tally_release(&regions);
        json_decref(gold);
        vat_csv_release(&c);

        size_t len;
        char *file = fixture_text(&t, &len);
        with_quoted += strchr(file, '"') != NULL;
        free(file);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;
        vat_task_clear(&t);
    }
    /* The generator exercises the stated rules, not just the easy case. */
    assert_true(with_unpaid_region >= 3);
    assert_true(with_quoted >= 3);
    print_message("  %d/%d tasks have a region without paid orders, %d a quoted customer, "
                  "%d a truncated inline section\n",
                  with_unpaid_region, NTASKS, with_quoted, truncated);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("gsum-b");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task a, b;
        struct vat_replay r;
        draw(&a, v, v->dir, i, 6000, &r);
        draw(&b, v, other, i, 6000, &r);
        size_t la, lb;
        char *fa = fixture_text(&a, &la), *fb = fixture_text(&b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(fa, fb, la);
        assert_string_equal(a.fixture[0].sha256, b.fixture[0].sha256);
        assert_string_equal(a.prompt, b.prompt);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        char *pa = vat_json_dumps(a.params), *pb = vat_json_dumps(b.params);
        char *sa = vat_json_dumps(a.spec), *sb = vat_json_dumps(b.spec);
        assert_string_equal(pa, pb);
        assert_string_equal(sa, sb);
        free(pa), free(pb), free(sa), free(sb);

        /* A neighbouring index is a different task. */
        struct vat_task n;
        draw(&n, v, other, i + 100, 6000, &r);
        assert_string_not_equal(a.fixture[0].sha256, n.fixture[0].sha256);
        vat_task_clear(&n);

        free(fa), free(fb);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    vat_test_rmtree(other);
    free(other);
}

/* ---- the prompt ----------------------------------------------------------- */

static void test_prompt_inlines_whole_file(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    assert_string_equal(block, file);
    assert_non_null(strstr(t.prompt, "`fixtures/grouped_sum/grouped_sum-00003.csv`"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    assert_null(strstr(t.prompt, "too long"));
    /* The rules a solver needs are stated. */
    assert_non_null(strstr(t.prompt, "exactly `paid`"));
    assert_non_null(strstr(t.prompt, "Include only regions that have at least one paid order"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
    /* The format example uses placeholders, never a real region. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(gold, k, x) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "{\"%s\"", k);
        assert_null(strstr(t.prompt, quoted));
    }
    json_decref(gold);
    free(block);
    free(file);
    vat_task_clear(&t);
}

static void test_prompt_truncates_to_inline_max(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    const size_t max = 300;
    draw(&t, v, v->dir, 4, max, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    size_t bl = strlen(block);
    assert_true(bl <= max);
    assert_true(bl < len);
    /* A prefix of the file that ends on a record boundary. */
    assert_memory_equal(block, file, bl);
    assert_int_equal(block[bl - 1], '\n');
    assert_true(strncmp(block, "order_id,customer,region,status,amount,ordered_on\n", 50) == 0);
    /* The prompt says how many rows are shown, and it is the truth. */
    size_t shown = count_char(block, '\n') - 1;
    char expect[128];
    snprintf(expect, sizeof expect, "first %zu data rows only", shown);
    assert_non_null(strstr(t.prompt, expect));
    snprintf(expect, sizeof expect, "then %ld data rows", t.fixture[0].rows);
    assert_non_null(strstr(t.prompt, expect));
    assert_non_null(strstr(t.prompt, t.fixture[0].path));
    /* The next record would not have fitted. */
    const char *next = strchr(file + bl, '\n');
    assert_non_null(next);
    assert_true((size_t)(next + 1 - file) > max);
    free(block);
    free(file);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then replaces its fixture with text and recomputes
 * gold, confirm and trap from it.  The generator's planted totals no
 * longer describe the file, so they are dropped. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *text,
                 struct vat_err *e)
{
    struct vat_replay r;
    draw(t, v, v->dir, index, 6000, &r);
    char *path = vat_path_join(t->root, t->fixture[0].path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
    t->priv_free(t->priv);
    t->priv = NULL;
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "order_id,customer,region,status,amount,ordered_on\n"

static void test_region_with_only_unpaid_orders(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10,
                   HDR "ORD-000001,Maria Lopez,North,paid,10.00,2023-01-02\n"
                       "ORD-000002,Wei Chen,South,pending,25.50,2023-01-02\n"
                       "ORD-000003,Wei Chen,South,refunded,4.50,2023-01-03\n"
                       "ORD-000004,\"Lopez, Maria\",East,paid,7.25,2023-01-04\n"
                       "ORD-000005,Ana Silva,North,cancelled,1.00,2023-01-05\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_same_json(t.gold, "{\"East\":7.25,\"North\":10.0}");
    assert_same_json(t.trap, "{\"East\":7.25,\"North\":11.0,\"South\":30.0}");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed);
    assert_true(tr.score == 0.0);
    /* Listing the unpaid region with 0 is not what the prompt asks. */
    struct vat_verdict z = check(&t, "{\"East\":7.25,\"North\":10.0,\"South\":0}");
    assert_true(z.gate_passed);
    assert_true(z.score == 0.0);
    assert_string_equal(z.code, "extra_key");
    vat_task_clear(&t);
}

static void test_cents_sum_exactly(void **state)
{
    struct env *v = *state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, HDR "ORD-000001,Maria Lopez,West,paid,0.10,2023-01-02\n"
                         "ORD-000002,Wei Chen,West,paid,0.20,2023-01-02\n"
                         "ORD-000003,Wei Chen,West,void,0.30,2023-01-02\n");
    /* Ten times 0.10 is 0.9999999999999999 in binary floating point. */
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "ORD-1%05d,Ana Silva,East,paid,0.10,2023-02-01\n", i);
    struct vat_task t;
    struct vat_err e = {{0}};
    if (craft(&t, v, 11, b.data, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"East\":1.0,\"West\":0.3}");
    assert_string_equal(t.trap, "{\"East\":1.0,\"West\":0.6}");
    assert_true(check(&t, "{\"West\":0.30000000000000004,\"East\":0.9999999999999999}").score ==
                1.0);
    vat_buf_release(&b);
    vat_task_clear(&t);
}

static void test_whole_totals_print_as_decimals(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Gold is what a solver is shown as the answer: round totals must read
     * as money ("10.0", "1200.0"), never as "1e+01" or "1.2e+03". */
    int rc = craft(&t, v, 14,
                   HDR "ORD-000001,Maria Lopez,North,paid,10.00,2023-01-02\n"
                       "ORD-000002,Wei Chen,South,paid,1200.00,2023-01-02\n"
                       "ORD-000003,Wei Chen,South,void,4.50,2023-01-03\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    char *gold = vat_xstrdup(t.gold);
    vat_task_clear(&t);
    if (strcmp(gold, "{\"North\":10.0,\"South\":1200.0}") != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s", gold);
        free(gold);
        fail_msg("gold reads '%s'", msg);
    }
    free(gold);
}

static void test_quoted_fields_read_back(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* A comma inside a quoted customer must not shift region or amount. */
    int rc = craft(&t, v, 12,
                   HDR "ORD-000001,\"Okafor, Emeka\",Pacific,paid,100.00,2023-03-01\n"
                       "ORD-000002,\"Smith, \"\"Jo\"\"\",Pacific,paid,0.01,2023-03-01\n"
                       "ORD-000003,Hana Sato,Gulf Coast,paid,12.34,2023-03-02\n"
                       "ORD-000004,Hana Sato,Gulf Coast,failed,1.00,2023-03-02\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"Gulf Coast\":12.34,\"Pacific\":100.01}");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "order_id,customer,area,status,amount,ordered_on\n"
        "ORD-000001,Maria Lopez,North,paid,10.00,2023-01-02\n",
        /* three decimals */
        HDR "ORD-000001,Maria Lopez,North,paid,10.005,2023-01-02\n",
        /* a blank amount */
        HDR "ORD-000001,Maria Lopez,North,paid,,2023-01-02\n",
        /* a short record */
        HDR "ORD-000001,Maria Lopez,North,paid,10.00\n",
        /* no paid order at all */
        HDR "ORD-000001,Maria Lopez,North,pending,10.00,2023-01-02\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i], &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "grouped_sum-00013"));
        vat_task_clear(&t);
    }
}

/* ---- confirm -------------------------------------------------------------- */

static void test_confirm_catches_a_wrong_gold(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 20, 6000, &r);
    struct vat_err e = {{0}};
    assert_int_equal(T->confirm(&t, &e), 0);

    /* One cent more in one region. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k = json_object_iter_key(json_object_iter(gold));
    json_t *x = json_object_get(gold, k);
    json_real_set(x, json_real_value(x) + 0.01);
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    assert_non_null(strstr(e.msg, k));

    /* A region dropped from gold. */
    json_object_del(gold, k);
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* Rewrite the file so that one paid order lost a cent, as a faulty
     * writer would; reference and SQL both read the file and agree, but
     * the generator's planted totals do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 3), "paid") != 0)
        k++;
    char *cell = c.row[k].cell[4];
    size_t n = strlen(cell);
    cell[n - 1] = cell[n - 1] == '0' ? '1' : (char)(cell[n - 1] - 1);
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    vat_csv_release(&c);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "planted"));
    vat_task_clear(&t);
}

/* ---- checker cases ---------------------------------------------------------- */

static void test_checker_cases(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 30,
                   HDR "ORD-000001,Maria Lopez,North,paid,1000.00,2023-01-02\n"
                       "ORD-000002,Wei Chen,North,paid,234.50,2023-01-02\n"
                       "ORD-000003,Wei Chen,South,paid,99.99,2023-01-03\n"
                       "ORD-000004,Ana Silva,East,pending,5.00,2023-01-04\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"North\":1234.5,\"South\":99.99}");

    static const char *const pass[] = {
        "{\"North\":1234.5,\"South\":99.99}",
        "{\"South\":99.99,\"North\":1234.5}",
        "{\"North\":\"1,234.50\",\"South\":99.99}",
        "{\"North\":\"1234.50\",\"South\":\"99.99\"}",
        "{\"North\":1234.50,\"South\":99.990}",
        "{\"North\":1.2345e3,\"South\":99.99}",
        "{\"North\":1234.5000001,\"South\":99.99}",
        "  {\"North\": 1234.5, \"South\": 99.99}\n",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }

    static const struct {
        const char *answer;
        const char *code;
    } scored0[] = {
        {"{\"North\":1234.51,\"South\":99.99}", "wrong_value"},
        {"{\"North\":1234.5,\"South\":99.98}", "wrong_value"},
        {"{\"North\":1234.5}", "missing_key"},
        {"{\"North\":1234.5,\"South\":99.99,\"East\":5.0}", "extra_key"},
        {"{\"North\":1234.5,\"South\":99.99,\"East\":0}", "extra_key"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    /* A lower-cased key is not the region's name. */
    struct vat_verdict kc = check(&t, "{\"north\":1234.5,\"South\":99.99}");
    assert_true(kc.score == 0.0);

    static const char *const gated[] = {
        "The answer is: {\"North\":1234.5,\"South\":99.99}",
        "[1234.5, 99.99]",
        "1334.49",
        "{\"North\":[1234.5],\"South\":99.99}",
        "{\"North\":NaN,\"South\":99.99}",
        "{\"North\":1234.5,\"North\":1234.5,\"South\":99.99}",
        "{\"North\":1234.5,\"South\":99.99",
        "",
    };
    for (size_t i = 0; i < sizeof gated / sizeof gated[0]; i++) {
        struct vat_verdict vd = check(&t, gated[i]);
        if (vd.gate_passed || vd.score != 0.0)
            fail_msg("'%s' should fail the gate, got %s (%s)", gated[i], vd.code, vd.reason);
    }
    vat_task_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit_first_draw),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_inlines_whole_file),
        cmocka_unit_test(test_prompt_truncates_to_inline_max),
        cmocka_unit_test(test_region_with_only_unpaid_orders),
        cmocka_unit_test(test_cents_sum_exactly),
        cmocka_unit_test(test_whole_totals_print_as_decimals),
        cmocka_unit_test(test_quoted_fields_read_back),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
