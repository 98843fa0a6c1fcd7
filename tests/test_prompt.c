/* test_prompt.c — prompt styles and varied wording, for every template
 * (registered, and the skeletons):
 *   - over 40 tasks each style the template writes draws at least 4
 *     distinct phrasings of the question, the data description and the
 *     answer format (the rule 'at least four phrasings'; the whole
 *     prompt's realisations: tests/test_wording.c), every placeholder
 *     filled and the answer's shape stated;
 * and for those that write natural prompts (declare giveaways):
 *   - the same task drawn in the explicit and the natural style has the
 *     same fixture bytes, gold, trap and armed traps; only the prompt (and
 *     the recorded style) differs;
 *   - natural prompts contain none of the template's give-away phrases
 *     (case-insensitive), name every column the answer needs, and state
 *     the answer's shape; explicit prompts record "explicit";
 *   - "mixed" gives both styles, about half each;
 *   - compound templates (those that fill t->traps) arm at least three
 *     traps in every admitted task, each proven on its own at admission;
 *   - a template without natural prompts records "explicit" when asked
 *     for "natural".
 * And the phrasing picker and placeholder filling of templates/prompt.c. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "config.h"
#include "prompt.h"
#include "prompt_stats.h"
#include "rules.h"
#include "template.h"
#include "testutil.h"

#define SEED 130013u
#define NTASKS 40

/* Case-insensitive strstr. */
static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return hay;
    }
    return NULL;
}

static struct vat_tt_env *env_style(const struct vat_template *tm, const char *style)
{
    struct vat_tt_env *v = vat_tt_env_new(tm, SEED);
    json_object_set_new(v->cfg, "prompt_style", json_string(style));
    return v;
}

/* The prompt without its data (prompt_stats.h): the text the template
 * wrote, every paragraph of it, before or after the data. */
static char *wording(const char *prompt)
{
    return vat_prompt_wording(prompt);
}

/* Fails unless w names `col` (backticked, alone or after a table and a dot). */
static void assert_names(const struct vat_template *tm, const char *id, const char *w,
                         const char *col)
{
    char q1[80], q2[80];
    snprintf(q1, sizeof q1, "`%s`", col);
    snprintf(q2, sizeof q2, ".%s`", col);
    VAT_RULE(strstr(w, q1) || strstr(w, q2), tm, "the natural prompt names the answer's columns",
             "name the column in backticks in the natural data description or question",
             "%s: the natural prompt never names the column %s:\n%s", id, q1, w);
}

/* Distinct records of one slot in the phrasing records: the slot letter's
 * first occurrence and the choices after it (up to the next slot). */
static int distinct_slot(char rec[][160], size_t n, char slot)
{
    char seen[NTASKS][160];
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(rec[i], slot);
        if (!p)
            continue;
        size_t len = 1 + strcspn(p + 1, "abcdefghijklmnopqrstuvwxyz");
        char one[160];
        snprintf(one, sizeof one, "%.*s", (int)len, p);
        bool have = false;
        for (int j = 0; j < k && !have; j++)
            have = strcmp(seen[j], one) == 0;
        if (!have)
            snprintf(seen[k++], sizeof seen[0], "%s", one);
    }
    return k;
}

/* The rule 'at least four phrasings', for every template in every style
 * it writes: the data description ('d'), the question ('q') and the
 * answer format ('a') are always drawn and each varies over four
 * phrasings at least over NTASKS tasks; the question itself varies, not a
 * lead-in before a fixed question (no 'l' slot).  NULL when kept, else a
 * new message naming the rule and its mend. */
static char *phrasing_msg(const struct vat_template *tm, const char *style, char rec[][160])
{
    char what[256] = "";
    if (distinct_slot(rec, NTASKS, 'l') != 0)
        snprintf(what, sizeof what, "the %s style varies a lead-in ('l') instead of the question",
                 style);
    for (const char *slot = "dqa"; *slot && !what[0]; slot++) {
        int k = distinct_slot(rec, NTASKS, *slot);
        if (k < 4)
            snprintf(what, sizeof what, "the %s style draws %d phrasing%s of slot '%c' over %d "
                     "tasks", style, k, k == 1 ? "" : "s", *slot, NTASKS);
    }
    if (!what[0])
        return NULL;
    return vat_xasprintf("%s: rule 'at least four phrasings': %s. Mend: write slot 'd' "
                         "(vat_prompt_data or the family's data sentence), 'q' (the question) "
                         "and 'a' (vat_prompt_answer or the family's closing) from the phrasing "
                         "grammar, four alternatives or more each, and vary the question itself",
                         tm->name, what);
}

/* Every placeholder of a prompt filled. */
static void assert_filled(const struct vat_task *t)
{
    for (const char *p = t->prompt; (p = strchr(p, '{')) != NULL; p++)
        VAT_RULE(!islower((unsigned char)p[1]), t->tmpl, "placeholders filled",
                 "give every {name} of the grammar its value in the kv list",
                 "%s: unfilled placeholder at '%.20s'", t->id, p);
}

/* Checks one natural task b against the explicit draw a of the same task. */
static void check_natural(const struct vat_template *tm, const struct vat_task *a,
                          const struct vat_task *b, const struct vat_replay *rb)
{
    const char *same = "the styles agree";
    const char *smend = "draw phrasings from t->prompt_rng only (vat_prompt_say and friends), "
                        "never from the fixture's rng";
    VAT_RULE(strcmp(b->prompt_style, "natural") == 0 && a->attempt == b->attempt &&
                 strcmp(a->fixture[0].sha256, b->fixture[0].sha256) == 0 &&
                 strcmp(a->gold, b->gold) == 0 && strcmp(a->trap, b->trap) == 0 &&
                 a->n_traps == b->n_traps && strcmp(a->prompt, b->prompt) != 0,
             tm, same, smend,
             "%s drawn in the explicit and the natural style differs beyond its prompt "
             "(attempt %u/%u, gold %s/%s, trap %s/%s)",
             b->id, a->attempt, b->attempt, a->gold, b->gold, a->trap, b->trap);
    for (int k = 0; k < a->n_traps; k++)
        VAT_RULE(strcmp(a->traps[k].name, b->traps[k].name) == 0 &&
                     strcmp(a->traps[k].answer, b->traps[k].answer) == 0,
                 tm, same, smend, "%s: trap '%s' differs between the styles", b->id,
                 a->traps[k].name);

    char *w = wording(b->prompt);
    for (const char *const *g = tm->giveaways; *g; g++)
        VAT_RULE(!find_ci(w, *g), tm, "the natural prompt gives nothing away",
                 "state the convention in domain words; keep the giveaways list for the "
                 "explicit style's phrases",
                 "%s: the natural prompt holds \"%s\":\n%s", b->id, *g, w);
    for (const char *const *c = tm->answer_columns; c && *c; c++)
        assert_names(tm, b->id, w, *c);
    /* the columns a task's own params name */
    static const char *const keys[] = {"group_by", "status_column", "date_column",
                                       "order_customer_column", "customer_key"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *col = json_string_value(json_object_get(b->params, keys[k]));
        if (col && !strchr(col, ' ')) /* a column name, not a phrase */
            assert_names(tm, b->id, w, col);
    }
    size_t k;
    json_t *oc;
    json_array_foreach(json_object_get(b->params, "output_columns"), k, oc)
        assert_names(tm, b->id, w, json_string_value(oc));
    VAT_RULE(!strstr(w, "tolerance"), tm, "the natural prompt gives nothing away",
             "name no tolerance in the natural style", "%s: the natural prompt names a "
                                                       "tolerance",
             b->id);
    free(w);

    /* compound: every trap armed and proven in every admitted task */
    if (b->n_traps) {
        VAT_RULE(b->n_traps >= 3, tm, "compound traps", "arm three named traps at least",
                 "%s arms %d", b->id, b->n_traps);
        for (int j = 0; j < b->n_traps; j++)
            VAT_RULE(strcmp(b->traps[j].answer, b->gold) != 0 && rb->traps[j].gate_passed &&
                         rb->traps[j].score < 1.0,
                     tm, "compound traps", "plant every named mistake's corner in the fixture",
                     "%s: trap '%s' is not armed", b->id, b->traps[j].name);
    }
}

/* Every template, registered or skeleton, in every style it writes: the
 * phrasing rule, placeholders filled and the answer's shape stated; a
 * template with natural prompts (it declares giveaways) also draws the
 * same task in both styles and is held to the natural style's rules. */
static void check_template(const struct vat_template *tm)
{
    bool natural = tm->giveaways != NULL;
    struct vat_tt_env *ex = env_style(tm, "explicit");
    struct vat_tt_env *na = natural ? env_style(tm, "natural") : NULL;
    char rec[2][NTASKS][160];
    /* A template with a program form is held to the value form's wording:
     * every file shown whole (past the cap the task would be a program,
     * worded by progform.c: test_progform.c). */
    size_t cap = tm->progform ? 1 << 20 : 6000;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task a, b;
        struct vat_replay ra, rb;
        vat_tt_draw(ex, &a, NULL, i, cap, 40, &ra);
        assert_string_equal(a.prompt_style, "explicit");
        assert_filled(&a);
        vat_tt_assert_states_shape(&a);
        snprintf(rec[0][i], 160, "%s", a.phrasing);
        if (natural) {
            vat_tt_draw(na, &b, NULL, i, cap, 40, &rb);
            check_natural(tm, &a, &b, &rb);
            assert_filled(&b);
            vat_tt_assert_states_shape(&b);
            snprintf(rec[1][i], 160, "%s", b.phrasing);
            vat_task_clear(&b);
        }
        vat_task_clear(&a);
    }
    for (int k = 0; k < 1 + natural; k++) {
        char *m = phrasing_msg(tm, k ? "natural" : "explicit", rec[k]);
        if (m)
            fail_msg("%s", m);
    }
    print_message("  %s: %s over %d tasks\n", tm->name,
                  natural ? "explicit and natural agree, four phrasings each"
                          : "explicit only, four phrasings",
                  NTASKS);
    vat_tt_env_free(ex);
    vat_tt_env_free(na);
}

static void test_every_template(void **state)
{
    (void)state;
    int n = 0, natural = 0;
    const struct vat_template *tm;
    for (size_t i = 0; (tm = vat_tt_each(i)); i++) {
        check_template(tm);
        n++;
        natural += tm->giveaways != NULL;
    }
    assert_true(n >= 4 && natural >= 1);
    assert_non_null(vat_template_find("payments_reconciliation")->giveaways);
}

/* The phrasing rule bites an explicit-only template too: one written with
 * fixed text (one phrasing per slot) fails naming the rule and its mend,
 * and so does a lead-in varied before a fixed question. */
static void test_one_phrasing_fails(void **state)
{
    (void)state;
    struct vat_template fixed = *vat_tt_skeletons[0];
    fixed.name = "fixed_text";
    fixed.giveaways = NULL;
    char rec[NTASKS][160];
    for (size_t i = 0; i < NTASKS; i++)
        snprintf(rec[i], sizeof rec[i], "d0q0a%zu", i % 5);
    char *m = phrasing_msg(&fixed, "explicit", rec);
    assert_non_null(m);
    print_message("  %s\n", m);
    assert_non_null(strstr(m, "fixed_text: rule 'at least four phrasings': the explicit style "
                              "draws 1 phrasing of slot 'd' over 40 tasks. Mend: "));
    free(m);
    for (size_t i = 0; i < NTASKS; i++)
        snprintf(rec[i], sizeof rec[i], "l%zud%zuq0a%zu", i % 4, i % 4, i % 4);
    m = phrasing_msg(&fixed, "explicit", rec);
    assert_non_null(strstr(m, "varies a lead-in ('l') instead of the question"));
    free(m);
    for (size_t i = 0; i < NTASKS; i++)
        snprintf(rec[i], sizeof rec[i], "d%zuq%zua%zu", i % 4, i % 5, i % 6);
    assert_null(phrasing_msg(&fixed, "explicit", rec));
}

/* "mixed" draws both styles, about half each, from the prompt sub-stream;
 * the fixture is the one the explicit style draws. */
static void test_mixed_halves(void **state)
{
    (void)state;
    const struct vat_template *tm = vat_template_find("payments_reconciliation");
    struct vat_tt_env *mx = env_style(tm, "mixed"), *ex = env_style(tm, "explicit");
    int natural = 0;
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task a, b;
        struct vat_replay r;
        vat_tt_draw(mx, &a, NULL, i, 6000, 40, &r);
        vat_tt_draw(ex, &b, NULL, i, 6000, 40, &r);
        assert_string_equal(a.fixture[0].sha256, b.fixture[0].sha256);
        natural += strcmp(a.prompt_style, "natural") == 0;
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    print_message("  mixed: %d of %d natural\n", natural, NTASKS);
    assert_true(natural >= NTASKS / 4 && natural <= 3 * NTASKS / 4);
    vat_tt_env_free(mx);
    vat_tt_env_free(ex);
}

/* A template without natural prompts stays explicit, and says so.  Every
 * registered template writes natural prompts now, so the test takes one
 * and withdraws its giveaways (what marks a template as natural-capable):
 * asked for "natural", its task records "explicit" and its prompt is the
 * explicit one. */
static void test_explicit_only_template(void **state)
{
    (void)state;
    struct vat_template only = *vat_template_find("grouped_sum");
    only.giveaways = NULL;
    struct vat_tt_env *na = env_style(&only, "natural"), *ex = env_style(&only, "explicit");
    struct vat_task t, u;
    struct vat_replay r;
    vat_tt_draw(na, &t, NULL, 0, 6000, 40, &r);
    vat_tt_draw(ex, &u, NULL, 0, 6000, 40, &r);
    assert_string_equal(vat_prompt_style_of(&t), "explicit");
    assert_string_equal(t.prompt_style, "explicit");
    assert_string_equal(t.prompt, u.prompt);
    vat_task_clear(&t);
    vat_task_clear(&u);
    vat_tt_env_free(na);
    vat_tt_env_free(ex);
}

static void test_fill_and_pick(void **state)
{
    (void)state;
    static const char *const kv[] = {"a", "x", "bb", "yy", NULL};
    struct vat_buf b = VAT_BUF_INIT;
    vat_prompt_fill(&b, "{a}-{bb}-{c}-{-{a", kv);
    assert_string_equal(b.data, "x-yy-{c}-{-{a");
    vat_buf_release(&b);

    struct vat_task t;
    memset(&t, 0, sizeof t);
    vat_rng_seed(&t.prompt_rng, 1, 2);
    static const char *const list[] = {"p0", "p1", "p2", "p3"};
    int seen[4] = {0};
    for (int i = 0; i < 12; i++) {
        t.phrasing[0] = 0;
        const char *p = VAT_PROMPT_PHRASE(&t, 'q', list);
        seen[p[1] - '0']++;
        char want[8];
        snprintf(want, sizeof want, "q%c", p[1]);
        assert_string_equal(t.phrasing, want);
    }
    assert_true(seen[0] + seen[1] + seen[2] + seen[3] == 12);
    /* one list entry draws nothing */
    struct vat_rng before = t.prompt_rng;
    static const char *const one[] = {"only"};
    assert_string_equal(VAT_PROMPT_PHRASE(&t, 'a', one), "only");
    assert_memory_equal(&before, &t.prompt_rng, sizeof before);
}

/* The grammar: choices drawn and recorded, nested; agreement, articles,
 * capitals; data values, JSON and single brackets left as they are. */
static void test_grammar(void **state)
{
    (void)state;
    static const char *const kv[] = {"n", "3", "one", "1", "what", "our tickets", "what#", "pl",
                                     "code", "[x]{y}", NULL};
    struct vat_buf b = VAT_BUF_INIT;
    /* without a task: every choice its first alternative */
    vat_prompt_fill(&b, "[[a|b]] {n} {n?row|rows}, {one} {one?row|rows}; {^what} {what?is|are} "
                        "{an} order, {an} user, {An} SQL query; {code} [y] {\"k\": 1} {nope}",
                    kv);
    assert_string_equal(b.data, "a 3 rows, 1 row; Our tickets are an order, a user, An SQL "
                                "query; [x]{y} [y] {\"k\": 1} {nope}");
    vat_buf_release(&b);

    struct vat_task t;
    memset(&t, 0, sizeof t);
    vat_rng_seed(&t.prompt_rng, 7, 9);
    int seen[3][2] = {{0}};
    for (int i = 0; i < 60; i++) {
        t.phrasing[0] = 0;
        vat_prompt_say(&b, &t, 'q', "[[x|y [[u|v]]|z]]", NULL);
        /* the record: the slot, then the outer index, then the inner one
         * when the second alternative was drawn */
        assert_int_equal(t.phrasing[0], 'q');
        int k = t.phrasing[1] - '0';
        assert_true(k >= 0 && k < 3);
        if (k == 1) {
            int j = t.phrasing[2] - '0';
            assert_string_equal(b.data, j ? "y v" : "y u");
            seen[1][j]++;
        } else {
            assert_int_equal(t.phrasing[2], 0);
            assert_string_equal(b.data, k ? "z" : "x");
            seen[k][0]++;
        }
        vat_buf_release(&b);
    }
    assert_true(seen[0][0] && seen[1][0] && seen[1][1] && seen[2][0]);
    /* a plural mark agrees the data description's verb */
    t.prompt_style = "explicit";
    static const char *const dkv[] = {"what", "the tickets{#pl}", "unit", "ticket",
                                      "cols", "`a`", NULL};
    for (int i = 0; i < 20; i++) {
        vat_prompt_data(&b, &t, dkv);
        assert_null(strstr(b.data, " is the tickets"));
        assert_null(strstr(b.data, "{#pl}"));
        vat_buf_release(&b);
    }
    /* a task without a prompt stream takes the first phrasings */
    struct vat_task u;
    memset(&u, 0, sizeof u);
    vat_prompt_say(&b, &u, 'q', "[[x|y|z]]", NULL);
    assert_string_equal(b.data, "x");
    assert_string_equal(u.phrasing, "q0");
    vat_buf_release(&b);
}

/* The 4-gram share: repeats lower it, data blocks do not count, case is
 * folded; no 4-gram at all is 1. */
static void test_word4_share(void **state)
{
    (void)state;
    const char *same[] = {"one two three four five", "one two three four five"};
    assert_true(vat_prompt_word4_share(same, 2) == 0.5);
    const char *diff[] = {"one two three four", "ONE two three FIVE"};
    assert_true(vat_prompt_word4_share(diff, 2) == 1.0);
    const char *data[] = {"a b c d\n```csv\nx,y\n1,2\n```\n", "a b c d\n```csv\nq,r\n3,4\n```\n"};
    assert_true(vat_prompt_word4_share(data, 2) == 0.5);
    const char *csv[] = {"p q r s\n\nThe data is the CSV file `f`: 1 2 3 4 5",
                         "p q r s\n\nThe data is the CSV file `g`: 6 7 8 9 0"};
    assert_true(vat_prompt_word4_share(csv, 2) == 0.5);
    /* wording after the data counts; a schema, its rows and a path do not */
    const char *after[] = {"```csv\nx\n```\n\nw x y z",
                           "CREATE TABLE t (\n  a INT\n);\nINSERT INTO t VALUES\n  (1),\n  (2);\n"
                           "`fixtures/a/b.csv` w x y z"};
    assert_true(vat_prompt_word4_share(after, 2) == 0.5);
    const char *few[] = {"too short"};
    assert_true(vat_prompt_word4_share(few, 1) == 1.0);
}

/* inline = "full": every template's tasks show their whole fixture in the
 * prompt (rows capped by config.c), traps still armed (admission passed). */
static void test_inline_full_every_template(void **state)
{
    (void)state;
    static const char text[] = "[corpus]\ninline = 'full'\ninline_max_bytes = 6000\n";
    /* every template, the skeletons too: their params resolved as the
     * registry's are */
    const struct vat_template *all[64];
    size_t n = 0;
    for (const struct vat_template *tm; n < 63 && (tm = vat_tt_each(n)); n++)
        all[n] = tm;
    all[n] = NULL;
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_parse_registry(&c, text, strlen(text), "full.toml", all, &e), 0);
    assert_true(c.inline_full);
    const char *rule = "inline = \"full\" shows every fixture whole";
    const char *mend = "declare the params that size the data with .role = VAT_PARAM_ROWS and "
                       "size data sections with vat_task_inline_cap(t)";
    for (size_t i = 0; all[i]; i++) {
        const struct vat_template *tm = all[i];
        struct vat_tt_env *v = vat_tt_env_new(tm, SEED);
        json_decref(v->cfg);
        v->cfg = json_deep_copy(json_object_get(c.templates, tm->name));
        struct vat_draw_opts o = {.master_seed = SEED, .cfg = v->cfg, .inline_max_bytes = 6000,
                                  .inline_full = true};
        for (uint32_t k = 0; k < 3; k++) {
            struct vat_task t;
            struct vat_replay r;
            vat_task_init(&t, tm, k, v->dir);
            uint32_t a = 0;
            while (vat_task_draw(&t, a, &o, &r, &e) != 0)
                VAT_RULE(++a < 40, tm, rule, mend, "%s not admitted with inline = full: %s",
                         t.id, e.msg);
            VAT_RULE(!strstr(t.prompt, "too long") && !strstr(t.prompt, "Only the leading rows") &&
                         !strstr(t.prompt, "leading rows of each table"),
                     tm, rule, mend, "%s: the prompt does not show the whole fixture", t.id);
            if (strcmp(t.fixture[0].format, "csv") == 0 && strstr(t.prompt, "```csv\n") &&
                strcmp(tm->family, "regex") != 0 && strcmp(tm->name, "dup_header") != 0) {
                size_t len;
                char *file = vat_tt_fixture_text(&t, 0, &len);
                char *block = vat_tt_inline_block(t.prompt, "csv");
                char *m = vat_rule_prompt_data_whole(&t, block, file);
                if (m)
                    fail_msg("%s", m);
                free(block);
                free(file);
            }
            assert_true(r.v[VAT_ROLE_TRAP].gate_passed && r.v[VAT_ROLE_TRAP].score < 1.0);
            vat_task_clear(&t);
        }
        vat_tt_env_free(v);
    }
    vat_config_release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_and_pick),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_word4_share),
        cmocka_unit_test(test_inline_full_every_template),
        cmocka_unit_test(test_one_phrasing_fails),
        cmocka_unit_test(test_every_template),
        cmocka_unit_test(test_mixed_halves),
        cmocka_unit_test(test_explicit_only_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
