/* test_filtered_total.c — the filtered_total template: 60 tasks admit (at
 * most five redraws in all) with gold 1, trap 0 (gate passed) and the
 * malformed answer gated out; the trap is armed in every task (a negative
 * adjustment of the asked account in every file); same seed -> same bytes;
 * the prompt names the account and the abs() rule; hand-made fixtures with
 * negative, positive and all-negative adjustments, decoy accounts and
 * kinds, and broken files; confirm catches a wrong gold and a writer bug;
 * checker cases for the number answer. */
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

#define SEED 90023u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_filtered_total;
static const struct vat_template *const T = &vat_tmpl_filtered_total;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("ftotal");
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

/* Draws task index into root, redrawing as the pipeline would; returns
 * how many redraws it took (fails the test if none admits). */
static uint32_t draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                     size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a < MAX_ATTEMPTS; a++)
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return a;
    fail_msg("%s not admitted in %d attempts: %s", t->id, MAX_ATTEMPTS, e.msg);
    return MAX_ATTEMPTS;
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

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    uint32_t redraws = 0;
    int with_positive = 0, with_decoy_account = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        redraws += draw(&t, v, v->dir, i, 6000, &r);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 4)), "amount");
        const char *account = json_string_value(json_object_get(t.params, "account"));
        assert_non_null(account);
        assert_string_equal(json_string_value(json_object_get(t.params, "kind")), "adjustment");
        char quoted[96];
        snprintf(quoted, sizeof quoted, "`account` is exactly `%s`", account);
        assert_non_null(strstr(t.prompt, quoted));

        /* The trap is armed beyond the tolerance. */
        json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
        json_t *trap = json_loads(t.trap, JSON_DECODE_ANY, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-6, &e), -1);
        assert_true(json_real_value(gold) > json_real_value(trap));

        /* Every file holds a negative adjustment of the asked account. */
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);
        bool neg = false, pos = false, other = false;
        for (size_t k = 1; k < c.nrows; k++) {
            if (strcmp(vat_csv_get(&c, k, 3), "adjustment") != 0)
                continue;
            if (strcmp(vat_csv_get(&c, k, 2), account) != 0) {
                other = true;
                continue;
            }
            if (vat_csv_get(&c, k, 4)[0] == '-')
                neg = true;
            else
                pos = true;
        }
        assert_true(neg);
        with_positive += pos;
        with_decoy_account += other;
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
    assert_true(redraws <= 5);
    assert_true(with_positive >= 30);
    assert_int_equal(with_decoy_account, NTASKS);
    print_message("  %u redraws; %d/%d tasks mix positive and negative adjustments\n", redraws,
                  with_positive, NTASKS);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("ftotal-b");
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
        assert_string_equal(pa, pb);
        free(pa), free(pb);

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

static void test_prompt_states_the_rules(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    size_t len;
    char *file = fixture_text(&t, &len);
    char *block = inline_block(t.prompt);
    assert_string_equal(block, file);
    assert_non_null(strstr(t.prompt, "`fixtures/filtered_total/filtered_total-00003.csv`"));
    assert_non_null(strstr(t.prompt, "sum of the absolute values of `amount`"));
    assert_non_null(strstr(t.prompt, "`kind` is exactly `adjustment`"));
    assert_non_null(strstr(t.prompt, "an amount of -5.00 adds 5.00"));
    assert_non_null(strstr(t.prompt, "absolute tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-9"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
    /* The format example is a placeholder, not a number. */
    assert_non_null(strstr(t.prompt, "written like <total>"));
    free(block);
    free(file);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then replaces its fixture with text, sets the asked
 * account and recomputes gold, confirm and trap from the file.  The
 * generator's planted magnitude no longer describes it, so it is dropped. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *account,
                 const char *text, struct vat_err *e)
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
    json_object_set_new(t->params, "account", json_string(account));
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "entry_id,posted_on,account,kind,amount,memo\n"

static void test_negative_adjustments_count_by_size(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10, "Petty Cash",
                   HDR "LE-0000001,2023-01-02,Petty Cash,deposit,200.00,cash deposit\n"
                       "LE-0000002,2023-01-02,Petty Cash,adjustment,-12.50,correction of entry "
                       "LE-0000001\n"
                       "LE-0000003,2023-01-03,Payroll,adjustment,-100.00,bank error correction\n"
                       "LE-0000004,2023-01-03,Petty Cash,fee,-5.00,monthly service fee\n"
                       "LE-0000005,2023-01-04,Petty Cash,adjustment,30.00,reversal of duplicate "
                       "posting\n"
                       "LE-0000006,2023-01-05,Petty Cash,adjustment,-0.05,\"rounding, cents\"\n"
                       "LE-0000007,2023-01-05,Petty Cash ,adjustment,-7.00,keyed by hand\n"
                       "LE-0000008,2023-01-06,Petty Cash,Adjustment,-9.00,legacy import\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    /* Only exact `Petty Cash` and exact `adjustment` rows count. */
    assert_string_equal(t.gold, "42.55");
    assert_string_equal(t.trap, "17.45");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);
    assert_string_equal(tr.code, "wrong_value");
    /* The other mistakes near it also fail: the negated trap, the account
     * filter dropped, the fee taken in. */
    static const char *const wrong[] = {"-17.45", "142.55", "47.55", "12.55"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        struct vat_verdict vd = check(&t, wrong[i]);
        assert_true(vd.gate_passed && vd.score == 0.0);
    }
    vat_task_clear(&t);
}

static void test_all_adjustments_negative(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 11, "Accounts Receivable",
                   HDR "LE-0000001,2023-01-02,Accounts Receivable,adjustment,-10.00,correction\n"
                       "LE-0000002,2023-01-02,Accounts Receivable,adjustment,-2.50,correction\n"
                       "LE-0000003,2023-01-03,Escrow,adjustment,40.00,correction\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "12.5");
    assert_string_equal(t.trap, "-12.5");
    assert_true(check(&t, "-12.5").score == 0.0);
    assert_true(check(&t, "12.50").score == 1.0);
    vat_task_clear(&t);
}

static void test_cents_sum_exactly(void **state)
{
    struct env *v = *state;
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, HDR);
    /* Ten times 0.10 is 0.9999999999999999 in binary floating point. */
    for (int i = 0; i < 10; i++)
        vat_buf_printf(&b, "LE-10000%02d,2023-02-01,Reserve,adjustment,%s0.10,correction\n", i,
                       i % 2 ? "-" : "");
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 12, "Reserve", b.data, &e);
    vat_buf_release(&b);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "1.0");
    assert_string_equal(t.trap, "0.0");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "entry_id,posted_on,account,type,amount,memo\n"
        "LE-0000001,2023-01-02,Reserve,adjustment,-1.00,correction\n",
        /* amounts that are not plain decimals */
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,\"-1,200.00\",correction\n",
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,$5.00,correction\n",
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,(5.00),correction\n",
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,-1.005,correction\n",
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,,correction\n",
        /* a short record */
        HDR "LE-0000001,2023-01-02,Reserve,adjustment,-1.00\n",
        /* no adjustment of the asked account */
        HDR "LE-0000001,2023-01-02,Escrow,adjustment,-1.00,correction\n"
            "LE-0000002,2023-01-02,Reserve,fee,-1.00,wire fee\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, "Reserve", bad[i], &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "filtered_total-00013"));
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
    json_t *gold = json_loads(t.gold, JSON_DECODE_ANY, NULL);
    char *wrong = vat_xasprintf("%.2f", json_real_value(gold) + 0.01);
    free(t.gold);
    t.gold = wrong;
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    json_decref(gold);
    vat_task_clear(&t);
}

static void test_confirm_catches_a_writer_bug(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 21, 6000, &r);
    /* Flip the sign of one of the asked account's adjustments, as a faulty
     * writer might: the magnitude is unchanged and gold still agrees ... */
    const char *account = json_string_value(json_object_get(t.params, "account"));
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 2), account) != 0 ||
           strcmp(vat_csv_get(&c, k, 3), "adjustment") != 0)
        k++;
    char *cell = c.row[k].cell[4];
    char *flipped = cell[0] == '-' ? vat_xstrdup(cell + 1) : vat_xasprintf("-%s", cell);
    c.row[k].cell[4] = flipped;
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    free(t.gold);
    t.gold = NULL;
    assert_int_equal(T->reference(&t, &e), 0);
    assert_int_equal(T->confirm(&t, &e), 0);
    /* ... but a cent lost is caught by the planted magnitude. */
    size_t n = strlen(flipped);
    flipped[n - 1] = flipped[n - 1] == '0' ? '1' : (char)(flipped[n - 1] - 1);
    assert_int_equal(vat_csv_write(&c, t.root, t.fixture[0].path, &e), 0);
    c.row[k].cell[4] = cell;
    free(flipped);
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
    int rc = craft(&t, v, 30, "Operating",
                   HDR "LE-0000001,2023-01-02,Operating,adjustment,-1000.00,correction\n"
                       "LE-0000002,2023-01-02,Operating,adjustment,234.56,correction\n"
                       "LE-0000003,2023-01-03,Savings,adjustment,-99.99,correction\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "1234.56");

    static const char *const pass[] = {
        "1234.56", "1234.560", "\"1234.56\"", "\"1,234.56\"", "1.23456e3", "1234.5600001",
        " 1234.56\n",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }
    static const char *const scored0[] = {"-765.44", "765.44", "1234.55", "1234.6", "1235",
                                          "-1234.56", "1334.55"};
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i]);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, "wrong_value") != 0)
            fail_msg("'%s' should score 0 with wrong_value, got gate %d %s (%s)", scored0[i],
                     vd.gate_passed, vd.code, vd.reason);
    }
    static const char *const gated[] = {
        "The answer is: 1234.56", "{\"total\":1234.56}", "[1234.56]", "\"$1234.56\"",
        "\"1234.56 USD\"", "\"1.234,56\"", "NaN", "Infinity", "null", "", "1234.56 1",
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
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_states_the_rules),
        cmocka_unit_test(test_negative_adjustments_count_by_size),
        cmocka_unit_test(test_all_adjustments_negative),
        cmocka_unit_test(test_cents_sum_exactly),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
