/* test_grouped_mean.c — the grouped_mean template: 60 tasks admit (at most
 * five redraws in all) with gold 1, trap 0 (gate passed) and the malformed
 * answer gated out; the trap is armed in every task (a rated product with a
 * blank rating in every file); same seed -> same bytes; the prompt states
 * the blank and all-blank rules and the tolerance; hand-made fixtures for a
 * product whose ratings are all blank, unrounded means and broken files;
 * confirm catches a wrong gold and a writer bug; checker cases. */
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

#define SEED 51207u
#define NTASKS 60
#define MAX_ATTEMPTS 40

extern const struct vat_template vat_tmpl_grouped_mean;
static const struct vat_template *const T = &vat_tmpl_grouped_mean;

struct env {
    char *dir;
    json_t *cfg;
};

static int setup(void **state)
{
    struct env *v = calloc(1, sizeof *v);
    v->dir = vat_test_tmpdir("gmean");
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
    int with_unrated = 0, truncated = 0;
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
        assert_string_equal(t.fixture[0].format, "csv");
        assert_string_equal(t.fixture[0].role, "main");
        assert_int_equal(json_array_size(t.fixture[0].columns), 6);
        assert_string_equal(json_string_value(json_array_get(t.fixture[0].columns, 4)), "rating");
        assert_string_equal(json_string_value(json_object_get(t.params, "blank_ratings")),
                            "missing");
        assert_true(json_real_value(json_object_get(t.spec, "rel_tol")) == 1e-6);

        /* The trap is armed: some mean differs beyond the tolerance. */
        json_t *gold = json_loads(t.gold, 0, NULL), *trap = json_loads(t.trap, 0, NULL);
        assert_non_null(gold);
        assert_non_null(trap);
        struct vat_err e = {{0}};
        assert_int_equal(vat_an_agree("trap", gold, trap, 1e-6, 1e-9, &e), -1);

        /* Read the file: a rated product with a blank is always there, and
         * gold holds exactly the products with a rating, means in [1, 5]. */
        struct vat_csv c = VAT_CSV_INIT;
        assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
        assert_int_equal((long)c.nrows - 1, t.fixture[0].rows);
        struct vat_an_tally rated = VAT_AN_TALLY_INIT, blank = VAT_AN_TALLY_INIT;
        for (size_t k = 1; k < c.nrows; k++) {
            const char *p = vat_csv_get(&c, k, 1), *cell = vat_csv_get(&c, k, 4);
            vat_an_tally_get(&rated, p);
            vat_an_tally_get(&blank, p);
            if (*cell)
                vat_an_tally_add(&rated, p, 0);
            else
                vat_an_tally_add(&blank, p, 0);
        }
        bool armed = false, unrated = false;
        for (size_t k = 0; k < rated.n; k++) {
            const struct vat_an_entry *b = vat_an_tally_find(&blank, rated.e[k].key);
            json_t *m = json_object_get(gold, rated.e[k].key);
            if (rated.e[k].n == 0) {
                unrated = true;
                assert_null(m);
                assert_true(json_real_value(json_object_get(trap, rated.e[k].key)) == 0.0);
            } else {
                assert_non_null(m);
                assert_true(json_real_value(m) >= 1.0 && json_real_value(m) <= 5.0);
                armed |= b->n > 0;
            }
        }
        assert_true(armed);
        with_unrated += unrated;
        assert_int_equal(json_object_size(trap), rated.n);
        vat_an_tally_release(&rated);
        vat_an_tally_release(&blank);
        vat_csv_release(&c);
        json_decref(gold);
        json_decref(trap);
        truncated += strstr(t.prompt, "too long to show whole") != NULL;
        vat_task_clear(&t);
    }
    assert_true(redraws <= 5);
    /* The all-blank rule is exercised, not just stated. */
    assert_true(with_unrated >= 6);
    print_message("  %u redraws; %d/%d tasks have a product with only blank ratings, %d a "
                  "truncated inline section\n",
                  redraws, with_unrated, NTASKS, truncated);
}

static void test_same_seed_same_bytes(void **state)
{
    struct env *v = *state;
    char *other = vat_test_tmpdir("gmean-b");
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
    assert_non_null(strstr(t.prompt, "`fixtures/grouped_mean/grouped_mean-00003.csv`"));
    assert_non_null(strstr(t.prompt, "missing, not zero"));
    assert_non_null(strstr(t.prompt, "A product whose ratings are all blank has no mean and is "
                                     "left out of the answer"));
    assert_non_null(strstr(t.prompt, "unrounded"));
    assert_non_null(strstr(t.prompt, "relative tolerance of 1e-6"));
    assert_non_null(strstr(t.prompt, "Answer with one JSON value"));
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

    /* A small inline budget shows the header and leading rows only. */
    draw(&t, v, v->dir, 4, 200, &r);
    block = inline_block(t.prompt);
    assert_true(strlen(block) <= 200);
    assert_true(strncmp(block, "review_id,product,reviewer,reviewed_on,rating,verified_purchase\n",
                        64) == 0);
    assert_non_null(strstr(t.prompt, "too long to show whole"));
    free(block);
    vat_task_clear(&t);
}

/* ---- hand-made fixtures ----------------------------------------------------- */

/* Draws task index, then replaces its fixture with text and recomputes
 * gold, confirm and trap from it.  The generator's planted ratings no
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

#define HDR "review_id,product,reviewer,reviewed_on,rating,verified_purchase\n"

static void test_product_with_only_blank_ratings(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    int rc = craft(&t, v, 10,
                   HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,5,yes\n"
                       "RV-000002,Desk Lamp,Wei C.,2023-01-02,,yes\n"
                       "RV-000003,Yoga Mat,Ana Silva,2023-01-03,,no\n"
                       "RV-000004,Desk Lamp,Omar H.,2023-01-04,,yes\n"
                       "RV-000005,Yoga Mat,Kofi M.,2023-01-05,4,yes\n"
                       "RV-000006,Chef Knife,Hana S.,2023-01-05,2,no\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    /* Desk Lamp has no rating: left out, not 0 and not null. */
    assert_string_equal(t.gold, "{\"Chef Knife\":2.0,\"Yoga Mat\":4.5}");
    assert_string_equal(t.trap, "{\"Chef Knife\":2.0,\"Desk Lamp\":0.0,\"Yoga Mat\":3.0}");
    struct vat_verdict g = check(&t, t.gold), tr = check(&t, t.trap);
    assert_true(g.gate_passed && g.score == 1.0);
    assert_true(tr.gate_passed && tr.score == 0.0);

    struct vat_verdict z = check(&t, "{\"Chef Knife\":2,\"Desk Lamp\":0,\"Yoga Mat\":4.5}");
    assert_true(z.gate_passed && z.score == 0.0);
    assert_string_equal(z.code, "extra_key");
    struct vat_verdict n = check(&t, "{\"Chef Knife\":2,\"Desk Lamp\":null,\"Yoga Mat\":4.5}");
    assert_false(n.gate_passed);
    assert_string_equal(n.code, "shape");
    /* Blanks skipped but the trap's zero-padding kept for one product. */
    struct vat_verdict h = check(&t, "{\"Chef Knife\":2,\"Yoga Mat\":3}");
    assert_true(h.gate_passed && h.score == 0.0);
    assert_string_equal(h.code, "wrong_value");
    vat_task_clear(&t);
}

static void test_unrounded_means(void **state)
{
    struct env *v = *state;
    struct vat_task t;
    struct vat_err e = {{0}};
    /* Espresso Grinder: 5,4,2 -> 11/3; Rain Jacket: 1,2,2,1,2,1,5 -> 2.0
     * with 14/7; blanks in both. */
    int rc = craft(&t, v, 11,
                   HDR "RV-000001,Espresso Grinder,Maria L.,2023-01-02,5,yes\n"
                       "RV-000002,Espresso Grinder,Wei C.,2023-01-02,4,yes\n"
                       "RV-000003,Espresso Grinder,Ana S.,2023-01-03,,no\n"
                       "RV-000004,Espresso Grinder,Omar H.,2023-01-04,2,yes\n"
                       "RV-000005,Rain Jacket,Kofi M.,2023-01-05,1,yes\n"
                       "RV-000006,Rain Jacket,Hana S.,2023-01-05,2,no\n"
                       "RV-000007,Rain Jacket,Hana S.,2023-01-05,2,no\n"
                       "RV-000008,Rain Jacket,Hana S.,2023-01-05,1,no\n"
                       "RV-000009,Rain Jacket,Liam M.,2023-01-06,,yes\n"
                       "RV-000010,Rain Jacket,Hana S.,2023-01-07,2,no\n"
                       "RV-000011,Rain Jacket,Hana S.,2023-01-08,1,no\n"
                       "RV-000012,Rain Jacket,Zara K.,2023-01-09,5,yes\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"Espresso Grinder\":3.6666666666666665,\"Rain Jacket\":2.0}");
    assert_string_equal(t.trap, "{\"Espresso Grinder\":2.75,\"Rain Jacket\":1.75}");
    static const char *const pass[] = {
        "{\"Espresso Grinder\":3.6666666666666665,\"Rain Jacket\":2}",
        "{\"Espresso Grinder\":3.666667,\"Rain Jacket\":2.0}",
        "{\"Espresso Grinder\":3.6666667,\"Rain Jacket\":\"2.000\"}",
    };
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        struct vat_verdict vd = check(&t, pass[i]);
        if (!(vd.gate_passed && vd.score == 1.0))
            fail_msg("'%s' should pass: %s %s", pass[i], vd.code, vd.reason);
    }
    static const char *const rounded[] = {
        "{\"Espresso Grinder\":3.67,\"Rain Jacket\":2.0}",
        "{\"Espresso Grinder\":3.667,\"Rain Jacket\":2.0}",
        "{\"Espresso Grinder\":3.6667,\"Rain Jacket\":2.0}",
        "{\"Espresso Grinder\":4,\"Rain Jacket\":2.0}",
    };
    for (size_t i = 0; i < sizeof rounded / sizeof rounded[0]; i++) {
        struct vat_verdict vd = check(&t, rounded[i]);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, "wrong_value") != 0)
            fail_msg("'%s' is rounded beyond the tolerance but got %s", rounded[i], vd.code);
    }
    vat_task_clear(&t);
}

static void test_broken_fixtures_are_refused(void **state)
{
    struct env *v = *state;
    static const char *const bad[] = {
        /* renamed column */
        "review_id,product,reviewer,reviewed_on,stars,verified_purchase\n"
        "RV-000001,Yoga Mat,Maria L.,2023-01-02,5,yes\n",
        /* out of the 1..5 scale */
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,0,yes\n",
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,6,yes\n",
        /* half stars, words and a padded blank are not what the prompt says */
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,4.5,yes\n",
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,five,yes\n",
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02, ,yes\n",
        /* a short record */
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,5\n",
        /* no rating at all */
        HDR "RV-000001,Yoga Mat,Maria L.,2023-01-02,,yes\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        assert_int_equal(craft(&t, v, 13, bad[i], &e), -1);
        assert_true(e.msg[0] != 0);
        assert_non_null(strstr(e.msg, "grouped_mean-00013"));
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

    json_t *gold = json_loads(t.gold, 0, NULL);
    const char *k = json_object_iter_key(json_object_iter(gold));
    json_t *x = json_object_get(gold, k);
    json_real_set(x, json_real_value(x) * (1 + 1e-9));
    free(t.gold);
    t.gold = vat_json_dumps(gold);
    assert_int_equal(T->confirm(&t, &e), -1);
    assert_non_null(strstr(e.msg, "sql avg over the loaded csv disagrees"));
    assert_non_null(strstr(e.msg, k));

    json_object_set_new(gold, "Not A Product", json_real(3.0));
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
    /* Change one rating in the file, as a faulty writer would: reference
     * and SQL read the same file and agree, the planted ratings do not. */
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&c, t.root, t.fixture[0].path, &e), 0);
    size_t k = 1;
    while (*vat_csv_get(&c, k, 4) == 0)
        k++;
    char *cell = c.row[k].cell[4];
    cell[0] = cell[0] == '5' ? '4' : (char)(cell[0] + 1);
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
                   HDR "RV-000001,Smart Thermostat,Maria L.,2023-01-02,4,yes\n"
                       "RV-000002,Smart Thermostat,Wei C.,2023-01-02,5,yes\n"
                       "RV-000003,USB-C Hub,Ana S.,2023-01-03,3,no\n"
                       "RV-000004,USB-C Hub,Omar H.,2023-01-04,,yes\n",
                   &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(t.gold, "{\"Smart Thermostat\":4.5,\"USB-C Hub\":3.0}");

    static const char *const pass[] = {
        "{\"Smart Thermostat\":4.5,\"USB-C Hub\":3.0}",
        "{\"USB-C Hub\":3,\"Smart Thermostat\":4.5}",
        "{\"Smart Thermostat\":\"4.5\",\"USB-C Hub\":\"3\"}",
        "{\"Smart Thermostat\":4.500001,\"USB-C Hub\":2.999999}",
        "{\"Smart Thermostat\":45e-1,\"USB-C Hub\":3.0}",
        " {\"Smart Thermostat\": 4.5, \"USB-C Hub\": 3.0}\n",
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
        {"{\"Smart Thermostat\":4.5,\"USB-C Hub\":1.5}", "wrong_value"},
        {"{\"Smart Thermostat\":4.51,\"USB-C Hub\":3.0}", "wrong_value"},
        {"{\"Smart Thermostat\":4.5}", "missing_key"},
        {"{\"Smart Thermostat\":4.5,\"USB-C Hub\":3.0,\"Yoga Mat\":4}", "extra_key"},
        {"{\"smart thermostat\":4.5,\"USB-C Hub\":3.0}", "key_case"},
        {"{\"Smart Thermostat \":4.5,\"USB-C Hub\":3.0}", "key_case"},
    };
    for (size_t i = 0; i < sizeof scored0 / sizeof scored0[0]; i++) {
        struct vat_verdict vd = check(&t, scored0[i].answer);
        if (!vd.gate_passed || vd.score != 0.0 || strcmp(vd.code, scored0[i].code) != 0)
            fail_msg("'%s' should score 0 with %s, got gate %d score %g %s (%s)",
                     scored0[i].answer, scored0[i].code, vd.gate_passed, vd.score, vd.code,
                     vd.reason);
    }

    static const char *const gated[] = {
        "The answer is: {\"Smart Thermostat\":4.5,\"USB-C Hub\":3.0}",
        "[4.5, 3.0]",
        "3.75",
        "{\"Smart Thermostat\":\"4.5 stars\",\"USB-C Hub\":3.0}",
        "{\"Smart Thermostat\":NaN,\"USB-C Hub\":3.0}",
        "{\"Smart Thermostat\":4.5,\"Smart Thermostat\":4.5,\"USB-C Hub\":3.0}",
        "{\"Smart Thermostat\":4.5,",
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
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_prompt_states_the_rules),
        cmocka_unit_test(test_product_with_only_blank_ratings),
        cmocka_unit_test(test_unrounded_means),
        cmocka_unit_test(test_broken_fixtures_are_refused),
        cmocka_unit_test(test_confirm_catches_a_wrong_gold),
        cmocka_unit_test(test_confirm_catches_a_writer_bug),
        cmocka_unit_test(test_checker_cases),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
