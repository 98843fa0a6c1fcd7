/* test_threshold_flags.c — the threshold_flags template: 60 tasks admit
 * (at most 5 redraws in all) with gold 1, trap 0 (gate passed) and the
 * malformed answer gated out; the trap is armed in every task and misses
 * exactly the balances at T; gold is sorted by byte order, which differs
 * from the file's numeric order; same seed -> same bytes; the prompt
 * states T and the order; hand-made fixtures for balances exactly at T,
 * one cent either side, negatives and ids of different lengths; broken
 * files are refused; confirm catches a wrong gold; checker cases around
 * the gold (order, duplicates, missing and extra ids). */
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
#include "values.h"

#define SEED 60421u
#define NTASKS 60
#define MAX_REDRAWS 5

extern const struct vat_template vat_tmpl_threshold_flags;
static const struct vat_template *const T = &vat_tmpl_threshold_flags;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("thflags");
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

/* Draws task index into root, redrawing as the pipeline would; adds the
 * redraws used to *redraws and fails when none of the attempts admits. */
static void draw_counting(struct vat_task *t, const struct env *v, const char *root,
                          uint32_t index, size_t inline_max, struct vat_replay *r, int *redraws)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    for (uint32_t a = 0; a <= MAX_REDRAWS; a++) {
        if (vat_task_draw(t, a, &o, r, &e) == 0)
            return;
        if (redraws)
            ++*redraws;
    }
    fail_msg("%s not admitted: %s", t->id, e.msg);
}

static void draw(struct vat_task *t, const struct env *v, const char *root, uint32_t index,
                 size_t inline_max, struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, T, index, root);
    if (vat_task_draw(t, 0, &o, r, &e) != 0)
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

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return T->check(t, answer, strlen(answer));
}

/* T of the task in cents. */
static int64_t threshold_cents(const struct vat_task *t)
{
    json_t *jt = json_object_get(t->params, "threshold");
    assert_true(json_is_number(jt));
    return (int64_t)(json_number_value(jt) * 100.0 + 0.5);
}

/* Returns the balance of account id in c (asserting it is there), in cents. */
static int64_t balance_of(const struct vat_csv *c, const char *id)
{
    for (size_t k = 1; k < c->nrows; k++) {
        if (strcmp(vat_csv_get(c, k, 0), id) == 0) {
            int64_t cents;
            assert_int_equal(vat_parse_cents(vat_csv_get(c, k, 5), &cents), 0);
            return cents;
        }
    }
    fail_msg("no account '%s'", id);
    return 0;
}

/* ---- admission over many tasks -------------------------------------------- */

static void test_sixty_tasks_admit(void **state)
{
    struct env *v = *state;
    int redraws = 0, near_misses = 0, negatives = 0, truncated = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, &redraws);

        assert_true(r.v[VAT_ROLE_GOLD].gate_passed);
        assert_true(r.v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(r.v[VAT_ROLE_GOLD].code, "ok");
        assert_true(r.v[VAT_ROLE_TRAP].gate_passed);
        assert_true(r.v[VAT_ROLE_TRAP].score == 0.0);
        assert_string_equal(r.v[VAT_ROLE_TRAP].code, "wrong_length");
        assert_false(r.v[VAT_ROLE_MALFORMED].gate_passed);

        assert_non_null(strstr(t.prompt, t.fixture[0].path));
        assert_true(t.difficulty >= 1 && t.difficulty <= 5);
        assert_string_equal(t.fixture[0].format, "csv");
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_object_get(t.params, "comparison")), ">=");
        assert_true(json_is_true(json_object_get(t.spec, "ordered")));
        assert_true(json_is_true(json_object_get(t.spec, "unique")));
        char thr[32];
        int64_t tc = threshold_cents(&t);
        vat_fmt_cents(tc, thr, sizeof thr);
        char expect[80];
        snprintf(expect, sizeof expect, "at or above %s?", thr);
        assert_non_null(strstr(t.prompt, expect));

        /* Gold: every id at or above T, byte order, no repeats; the file
         * lists ids in numeric order, which byte order is not. */
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);
        json_t *gold = json_loads(t.gold, 0, NULL);
        assert_non_null(gold);
        size_t want = 0, at = 0;
        bool below = false, above = false, neg = false;
        for (size_t k = 1; k < c.nrows; k++) {
            int64_t b;
            assert_int_equal(vat_parse_cents(vat_csv_get(&c, k, 5), &b), 0);
            want += b >= tc;
            at += b == tc;
            below |= b == tc - 1;
            above |= b == tc + 1;
            neg |= b < 0;
        }
        assert_true(at >= 1);
        assert_int_equal(json_array_size(gold), want);
        for (size_t k = 1; k < json_array_size(gold); k++)
            assert_true(strcmp(json_string_value(json_array_get(gold, k - 1)),
                               json_string_value(json_array_get(gold, k))) < 0);
        bool numeric_differs = false;
        for (size_t k = 2; k < c.nrows; k++)
            numeric_differs |= strcmp(vat_csv_get(&c, k - 1, 0), vat_csv_get(&c, k, 0)) > 0;
        assert_true(numeric_differs);
        /* Hits are a sensible share of the file, not nearly all of it. */
        assert_true(want * 10 <= (c.nrows - 1) * 7);
        near_misses += below || above;
        negatives += neg;
        json_decref(gold);
        vat_csv_release(&c);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;
        vat_task_clear(&t);
    }
    assert_true(redraws <= MAX_REDRAWS);
    assert_true(near_misses >= 20);
    assert_true(negatives >= 10);
    print_message("  %d redraws; %d/%d tasks have a balance one cent from T, %d an overdrawn "
                  "account, %d a truncated inline section\n",
                  redraws, near_misses, NTASKS, negatives, truncated);
}

/* The trap differs from gold in every task, exactly by the ids whose
 * balance is T itself. */
static void test_trap_armed_in_every_task(void **state)
{
    struct env *v = *state;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        draw_counting(&t, v, v->dir, i, 6000, &r, NULL);
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-9, 1e-9, &e), -1);
        assert_true(json_array_size(trap) < json_array_size(gold));
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        int64_t tc = threshold_cents(&t);
        size_t j = 0, missed = 0;
        for (size_t k = 0; k < json_array_size(gold); k++) {
            const char *g = json_string_value(json_array_get(gold, k));
            const char *x = json_string_value(json_array_get(trap, j));
            if (x && strcmp(g, x) == 0) {
                j++;
                assert_true(balance_of(&c, g) > tc);
            } else {
                assert_true(balance_of(&c, g) == tc);
                missed++;
            }
        }
        assert_int_equal(j, json_array_size(trap));
        assert_true(missed >= 1);
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        vat_task_clear(&t);
    }
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("thflags-b");
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

static void test_prompt_states_the_rules(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_replay r;
    draw(&t, v, v->dir, 3, 1 << 20, &r);
    assert_non_null(strstr(t.prompt, "`fixtures/threshold_flags/threshold_flags-00003.csv`"));
    assert_non_null(strstr(t.prompt, "Its full contents"));
    assert_non_null(strstr(t.prompt, "exactly"));
    assert_non_null(strstr(t.prompt, "counts"));
    assert_non_null(strstr(t.prompt, "byte order"));
    assert_non_null(strstr(t.prompt, "not numeric order"));
    assert_non_null(strstr(t.prompt, "each once"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
    /* The example ids are placeholders, never a real account. */
    json_t *gold = json_loads(t.gold, 0, NULL);
    for (size_t k = 0; k < json_array_size(gold); k++) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "[\"%s\"", json_string_value(json_array_get(gold, k)));
        assert_null(strstr(t.prompt, quoted));
    }
    json_decref(gold);
    vat_task_clear(&t);

    /* Truncated: the section says how much is shown and that the answer
     * covers the whole file. */
    draw(&t, v, v->dir, 4, 500, &r);
    assert_non_null(strstr(t.prompt, "too long to show whole"));
    char expect[80];
    snprintf(expect, sizeof expect, "answer must cover all %ld", t.fixture[0].rows);
    assert_non_null(strstr(t.prompt, expect));
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, replaces its fixture with text and T with thr (a
 * two-place decimal as the prompt would state it), then recomputes gold,
 * confirm and trap from them. */
static int craft(struct vat_task *t, const struct env *v, uint32_t index, const char *text,
                 double thr, struct vat_err *e)
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
    json_object_set_new(t->params, "threshold", json_real(thr));
    free(t->gold);
    free(t->trap);
    t->gold = t->trap = NULL;
    json_object_del(t->spec, "expected");
    if (T->reference(t, e) != 0 || T->confirm(t, e) != 0 || T->trap_answer(t, e) != 0)
        return -1;
    return 0;
}

#define HDR "account_id,holder,account_type,branch,opened_on,balance\n"

static void test_balances_exactly_at_threshold(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10,
                   HDR "AC-9,Maria Lopez,checking,Lagos,2019-01-02,1000.00\n"
                       "AC-10,Wei Chen,savings,Lagos,2019-02-03,999.99\n"
                       "AC-11,\"Okafor, Emeka\",business,Oslo,2019-03-04,1000.01\n"
                       "AC-99,Ana Silva,savings,Oslo,2019-04-05,1000\n"
                       "AC-100,Hana Sato,checking,Lima,2020-01-06,25000.50\n"
                       "AC-101,Kofi Asante,checking,Lima,2020-02-07,-1000.00\n"
                       "AC-102,Redwood Labs,business,Lima,2020-03-08,1000.0\n",
                   1000.0, &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    /* 1000, 1000.0 and 1000.00 are all T; byte order puts AC-100 first. */
    assert_string_equal(t.gold, "[\"AC-100\",\"AC-102\",\"AC-11\",\"AC-9\",\"AC-99\"]");
    assert_string_equal(t.trap, "[\"AC-100\",\"AC-11\"]");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);
    vat_task_clear(&t);
}

static void test_only_balances_at_threshold(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Nothing is above T: the trap is the empty list, which still passes
     * the gate and scores 0. */
    int rc = craft(&t, v, 11,
                   HDR "BA7,Maria Lopez,checking,Lagos,2019-01-02,250.00\n"
                       "BA8,Wei Chen,savings,Lagos,2019-02-03,249.99\n",
                   250.0, &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"BA7\"]");
    assert_string_equal(t.trap, "[]");
    struct vat_verdict tr = check(&t, t.trap);
    assert_true(tr.gate_passed && tr.score == 0.0);
    assert_string_equal(tr.code, "wrong_length");
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "account_id,holder,account_type,branch,opened_on,current_balance\n"
        "AC-1,Maria Lopez,checking,Lagos,2019-01-02,10.00\n",
        /* a repeated id */
        HDR "AC-1,Maria Lopez,checking,Lagos,2019-01-02,10.00\n"
            "AC-1,Wei Chen,savings,Lagos,2019-02-03,2000.00\n",
        /* a thousands separator */
        HDR "AC-1,Maria Lopez,checking,Lagos,2019-01-02,\"1,500.00\"\n",
        /* a blank balance */
        HDR "AC-1,Maria Lopez,checking,Lagos,2019-01-02,\n",
        /* a blank id */
        HDR ",Maria Lopez,checking,Lagos,2019-01-02,1500.00\n",
        /* nothing reaches T */
        HDR "AC-1,Maria Lopez,checking,Lagos,2019-01-02,10.00\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i], 1000.0, &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "threshold_flags-00013"));
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

    /* The trap's list: the ids at T missing. */
    char *orig = t.gold;
    t.gold = vat_xstrdup(t.trap);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql over the loaded csv disagrees"));
    free(t.gold);

    /* Right ids in numeric (file) order instead of byte order. */
    json_t *gold = json_loads(orig, 0, NULL);
    json_t *rev = json_array();
    for (size_t k = json_array_size(gold); k-- > 0;)
        json_array_append(rev, json_array_get(gold, k));
    t.gold = vat_json_dumps(rev);
    assert_int_equal(T->confirm(&t, &e), -1);
    json_decref(rev);
    json_decref(gold);
    free(t.gold);
    t.gold = orig;

    /* A writer that lost a cent on an account at T: the file and the SQL
     * agree, the planted ids do not. */
    struct vat_csv c = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    char thr[32];
    vat_fmt_cents(threshold_cents(&t), thr, sizeof thr);
    size_t k = 1;
    while (strcmp(vat_csv_get(&c, k, 5), thr) != 0)
        k++;
    char low[32];
    vat_fmt_cents(threshold_cents(&t) - 1, low, sizeof low);
    free(c.row[k].cell[5]);
    c.row[k].cell[5] = vat_xstrdup(low);
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
                   HDR "A98,Maria Lopez,checking,Lagos,2019-01-02,5000.00\n"
                       "A99,Wei Chen,savings,Lagos,2019-02-03,7200.10\n"
                       "A100,Ana Silva,savings,Oslo,2019-04-05,4999.99\n"
                       "A101,Hana Sato,checking,Lima,2020-01-06,12000.00\n"
                       "A102,Kofi Asante,checking,Lima,2020-02-07,-50.00\n",
                   5000.0, &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "[\"A101\",\"A98\",\"A99\"]");

    static const char *const pass[] = {
        "[\"A101\",\"A98\",\"A99\"]",
        " [ \"A101\" , \"A98\" , \"A99\" ]\n",
        "[\"A\\u0031\\u00301\",\"A98\",\"A99\"]",
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
        /* numeric order, as the file lists them */
        {"[\"A98\",\"A99\",\"A101\"]", "wrong_order"},
        {"[\"A99\",\"A98\",\"A101\"]", "wrong_order"},
        /* the trap: the balance at T left out */
        {"[\"A101\",\"A99\"]", "wrong_length"},
        /* one cent below T let in */
        {"[\"A100\",\"A101\",\"A98\",\"A99\"]", "wrong_length"},
        {"[\"A101\",\"A98\",\"A98\",\"A99\"]", "duplicate"},
        {"[\"A101\",\"A98\",\"A100\"]", "wrong_items"},
        {"[\"a101\",\"a98\",\"a99\"]", "wrong_items"},
        {"[\"A101 \",\"A98\",\"A99\"]", "wrong_items"},
        {"[]", "wrong_length"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: [\"A101\",\"A98\",\"A99\"]",
        "A101, A98, A99",
        "\"A101\"",
        "[\"A101\",98,\"A99\"]",
        "{\"ids\":[\"A101\",\"A98\",\"A99\"]}",
        "[\"A101\",\"A98\",\"A99\"",
        "[[\"A101\"],\"A98\",\"A99\"]",
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
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_trap_armed_in_every_task),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_states_the_rules),
        cmocka_unit_test(test_balances_exactly_at_threshold),
        cmocka_unit_test(test_only_balances_at_threshold),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
