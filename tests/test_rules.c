/* test_rules.c — the rules of docs/adding-a-template.md, held for every
 * registered template and the skeleton (tests/rules.c does the checking):
 * the trap armed on every draw, gold and confirm following the file (the
 * regex family: gold following the question), confirm a second
 * derivation, prompts naming their files and the answer's shape.
 *
 * And the proof that the rules bite: three deliberately broken copies of
 * the skeleton, registered in this test binary only, each break one rule
 * as a newcomer once did, and must get a message naming the rule and
 * the mend; the unbroken copy keeps every rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analytics.h"
#include "rules.h"
#include "template.h"
#include "testutil.h"
#include "values.h"


/* ---- the broken copies ---------------------------------------------------------
 * The skeleton's question (items with quantity >= T; trap >) with one
 * switch per breakage. */
enum breakage { B_NONE, B_PLANTED_REFERENCE, B_CONFIRM_REPEATS, B_TRAP_47_OF_50 };

static const char *const cols[] = {"item_id", "quantity"};
static const struct vat_param params[] = {{0}};

struct planted {
    long count; /* items >= T, as drawn */
};

static int generate(struct vat_task *t, struct vat_rng *rng, enum breakage how,
                    struct vat_err *e)
{
    long rows = vat_rng_range(rng, 20, 40);
    long T = vat_rng_range(rng, 20, 80);
    /* B_TRAP_47_OF_50: 3 of tasks 0..49 plant no item at T on their first
     * draw, so > and >= agree there (admission redraws them). */
    bool arm = !(how == B_TRAP_47_OF_50 && t->attempt == 0 && t->index % 17 == 5);
    struct vat_csv c = VAT_CSV_INIT;
    struct planted *pv = vat_xcalloc(1, sizeof *pv);
    vat_csv_add_row(&c, cols, 2);
    for (long i = 0; i < rows; i++) {
        char id[32];
        long q = i < 2 && arm ? T : vat_rng_range(rng, 0, 100);
        if (!arm && q == T)
            q = T + 1;
        pv->count += q >= T;
        vat_csv_row_begin(&c);
        vat_csv_add(&c, vat_gen_id(rng, "ITM-", 5, id, sizeof id));
        vat_csv_addf(&c, "%ld", q);
    }
    t->priv = pv;
    t->priv_free = free;
    int fi = vat_an_write_csv(t, &c, ".csv", "main", e);
    if (fi < 0) {
        vat_csv_release(&c);
        return -1;
    }
    t->params = json_pack("{s:I}", "threshold", (json_int_t)T);
    t->difficulty = 1;
    struct vat_an_spec s = {.shape = "number", .integer = true, .rel_tol = 0, .abs_tol = 0.5};
    t->spec = vat_an_value_spec(&s);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, "You are given a CSV table of stock items.\n\n");
    vat_an_prompt_csv(&b, t, fi, &c);
    vat_buf_printf(&b, "\nQuestion: how many items have a quantity >= %ld?\n\nAnswer with one "
                       "JSON number (an integer), for example: 7\n", T);
    t->prompt = vat_buf_detach(&b);
    vat_csv_release(&c);
    return 0;
}

static json_t *count_file(const struct vat_task *t, int ge, struct vat_err *e)
{
    long T, n = 0;
    struct vat_csv c = VAT_CSV_INIT;
    if (vat_an_param_int(t, "threshold", 0, 100, &T, e) != 0 ||
        vat_an_read_csv(t, 0, cols, 2, &c, e) != 0)
        return NULL;
    for (size_t r = 1; r < c.nrows; r++) {
        long q = strtol(vat_csv_get(&c, r, 1), NULL, 10);
        n += ge ? q >= T : q > T;
    }
    vat_csv_release(&c);
    return json_integer(n);
}

static int reference(struct vat_task *t, enum breakage how, struct vat_err *e)
{
    if (how == B_PLANTED_REFERENCE) {
        /* the breakage: gold from the generator's memory, not the file */
        const struct planted *pv = t->priv;
        return vat_an_gold_from(t, json_integer(pv->count), NULL, e);
    }
    return vat_an_gold_from(t, count_file(t, 1, e), NULL, e);
}

static int confirm(const struct vat_task *t, enum breakage how, struct vat_err *e)
{
    if (how == B_CONFIRM_REPEATS)
        /* the breakage: the reference's own computation, called again */
        return vat_an_confirm_value(t, count_file(t, 1, e), "c count", 0, 0, e);
    long T;
    if (vat_an_param_int(t, "threshold", 0, 100, &T, e) != 0)
        return -1;
    static const char *const types[] = {"TEXT", "INTEGER"};
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM items WHERE quantity >= %ld", T);
    struct vat_an_query q = {.table = "items", .types = types, .sql = sql, .kind = VAT_AN_NUMBER,
                             .how = "sql count"};
    return vat_an_confirm_query(t, &q, 0, 0, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_an_trap_from(t, count_file(t, 0, e));
}

#define BROKEN(tag, how)                                                                        \
    static int tag##_generate(struct vat_task *t, struct vat_rng *r, struct vat_err *e)         \
    {                                                                                           \
        return generate(t, r, how, e);                                                          \
    }                                                                                           \
    static int tag##_reference(struct vat_task *t, struct vat_err *e)                           \
    {                                                                                           \
        return reference(t, how, e);                                                            \
    }                                                                                           \
    static int tag##_confirm(const struct vat_task *t, struct vat_err *e)                       \
    {                                                                                           \
        return confirm(t, how, e);                                                              \
    }                                                                                           \
    static const struct vat_template tag = {                                                    \
        .version = VAT_TEMPLATE_V1, .name = #tag, .family = "analytics", .answer_kind = "value", \
        .trap = "Using > where >= is right.", .summary = "Items at or above a threshold.",       \
        .params = params, .generate = tag##_generate, .reference = tag##_reference,             \
        .confirm = tag##_confirm, .trap_answer = trap_answer, .check = vat_check_task}

BROKEN(unbroken_copy, B_NONE);
BROKEN(planted_reference, B_PLANTED_REFERENCE);
BROKEN(confirm_repeats_reference, B_CONFIRM_REPEATS);
BROKEN(trap_armed_47_of_50, B_TRAP_47_OF_50);

/* Fails unless m names the rule and holds want; prints the message, as a
 * newcomer would read it. */
static void assert_broken(char *m, const char *rule, const char *want)
{
    if (!m)
        fail_msg("the rule '%s' let a broken template pass", rule);
    print_message("  %s\n", m);
    char named[128];
    snprintf(named, sizeof named, "rule '%s'", rule);
    if (!strstr(m, named) || !strstr(m, want) || !strstr(m, "Mend:"))
        fail_msg("'%s' lacks %s, '%s' or a mend", m, named, want);
    free(m);
}

static void test_unbroken_copy_keeps_the_rules(void **state)
{
    (void)state;
    char *m = vat_rule_all(&unbroken_copy);
    if (m)
        fail_msg("%s", m);
}

static void test_reference_from_planted_truth(void **state)
{
    (void)state;
    assert_broken(vat_rule_gold_follows_file(&planted_reference), "gold follows the file",
                  "the gold planted for the old file");
}

static void test_confirm_repeating_reference(void **state)
{
    (void)state;
    assert_broken(vat_rule_confirm_independent(&confirm_repeats_reference),
                  "confirm is a second derivation", "repeats reference's computation");
}

static void test_trap_armed_in_47_of_50_draws(void **state)
{
    (void)state;
    assert_broken(vat_rule_trap_armed(&trap_armed_47_of_50, 50),
                  "the trap is armed on every draw", "on 3 of 50 first draws");
}

/* ---- prompt rules on hand-made prompts ----------------------------------------- */

static void test_prompt_shape_is_read_for_meaning(void **state)
{
    (void)state;
    struct vat_task t;
    memset(&t, 0, sizeof t);
    t.tmpl = &unbroken_copy;
    snprintf(t.id, sizeof t.id, "unbroken_copy-00000");
    struct vat_an_spec s = {.shape = "number", .integer = true};
    t.spec = vat_an_value_spec(&s);
    static const struct {
        const char *prompt;
        bool ok;
    } cases[] = {
        {"Answer with one JSON value: the count as a JSON integer.", true},
        {"Reply with a single JSON integer, nothing else.", true},
        {"Return the count as JSON (an integer).", true},
        {"How many items are there?", false},                 /* no instruction   */
        {"Answer with the count.", false},                    /* no JSON          */
        {"Answer with one JSON value, for example 7.", false}, /* no number word  */
        {"Answer with a JSON number.", false},                /* not an integer   */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t.prompt = (char *)cases[i].prompt;
        char *m = vat_rule_prompt_shape(&t);
        if (cases[i].ok != (m == NULL))
            fail_msg("'%s': %s", cases[i].prompt, m ? m : "accepted");
        if (m && !strstr(m, "rule 'the prompt states the answer's shape'"))
            fail_msg("%s", m);
        free(m);
    }
    json_decref(t.spec);
    s = (struct vat_an_spec){.shape = "object"};
    t.spec = vat_an_value_spec(&s);
    t.prompt = "Answer with one JSON value: an object mapping each region to its total.";
    assert_null(vat_rule_prompt_shape(&t));
    t.prompt = "Answer with one JSON value: a list of regions.";
    char *m = vat_rule_prompt_shape(&t);
    assert_non_null(strstr(m, "a JSON object"));
    free(m);
    json_decref(t.spec);
}

static void test_prompt_files(void **state)
{
    (void)state;
    struct vat_task t;
    memset(&t, 0, sizeof t);
    t.tmpl = &unbroken_copy;
    snprintf(t.id, sizeof t.id, "unbroken_copy-00000");
    t.fixture[0].path = "fixtures/x/x-00000.csv";
    t.fixture[1].path = "fixtures/x/x-00000.v1.csv";
    t.n_fixtures = 2;
    t.prompt = "Read `fixtures/x/x-00000.csv` and `fixtures/x/x-00000.v1.csv`.";
    assert_null(vat_rule_prompt_files(&t));
    t.prompt = "Read the attached file.";
    char *m = vat_rule_prompt_files(&t);
    assert_non_null(strstr(m, "does not name its main fixture"));
    free(m);
    t.prompt = "Read `fixtures/x/x-00000.csv`, then `fixtures/x/lookup.csv`.";
    m = vat_rule_prompt_files(&t);
    assert_non_null(strstr(m, "'fixtures/x/lookup.csv', which is none"));
    free(m);
}

/* ---- every registered template, and the skeleton -------------------------------- */

static void test_every_template_keeps_the_rules(void **state)
{
    (void)state;
    int broken = 0;
    size_t n = 0;
    const struct vat_template *tm;
    for (size_t i = 0; (tm = vat_tt_each(i)); i++) {
        char *m = vat_rule_all(tm);
        if (m) {
            print_error("%s\n", m);
            broken++;
            free(m);
        } else {
            print_message("  %-20s keeps every rule\n", tm->name);
        }
        n++;
    }
    assert_true(n >= 4);
    assert_int_equal(broken, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prompt_shape_is_read_for_meaning),
        cmocka_unit_test(test_prompt_files),
        cmocka_unit_test(test_unbroken_copy_keeps_the_rules),
        cmocka_unit_test(test_reference_from_planted_truth),
        cmocka_unit_test(test_confirm_repeating_reference),
        cmocka_unit_test(test_trap_armed_in_47_of_50_draws),
        cmocka_unit_test(test_every_template_keeps_the_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
