/* test_prompt.c — prompt styles and varied wording, for every
 * registered template that writes natural prompts (declares giveaways):
 *   - the same task drawn in the explicit and the natural style has the
 *     same fixture bytes, gold, trap and armed traps; only the prompt (and
 *     the recorded style) differs;
 *   - natural prompts contain none of the template's give-away phrases
 *     (case-insensitive), name every column the answer needs, and state
 *     the answer's shape; explicit prompts record "explicit";
 *   - over 40 tasks each style draws at least 4 distinct phrasings of the
 *     question, the data description and the answer format (the whole
 *     prompt's realisations: tests/test_wording.c);
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

/* Asserts that w names `col` (backticked, alone or after a table and a dot). */
static void assert_names(const char *id, const char *w, const char *col)
{
    char q1[80], q2[80];
    snprintf(q1, sizeof q1, "`%s`", col);
    snprintf(q2, sizeof q2, ".%s`", col);
    if (!strstr(w, q1) && !strstr(w, q2))
        fail_msg("%s: natural prompt never names the column %s:\n%s", id, q1, w);
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

static void check_template(const struct vat_template *tm)
{
    struct vat_tt_env *ex = env_style(tm, "explicit"), *na = env_style(tm, "natural");
    char rec[2][NTASKS][160];
    for (uint32_t i = 0; i < NTASKS; i++) {
        struct vat_task a, b;
        struct vat_replay ra, rb;
        vat_tt_draw(ex, &a, NULL, i, 6000, 40, &ra);
        vat_tt_draw(na, &b, NULL, i, 6000, 40, &rb);
        assert_string_equal(a.prompt_style, "explicit");
        assert_string_equal(b.prompt_style, "natural");
        /* same task, other words */
        assert_int_equal(a.attempt, b.attempt);
        assert_string_equal(a.fixture[0].sha256, b.fixture[0].sha256);
        assert_string_equal(a.gold, b.gold);
        assert_string_equal(a.trap, b.trap);
        assert_int_equal(a.n_traps, b.n_traps);
        for (int k = 0; k < a.n_traps; k++) {
            assert_string_equal(a.traps[k].name, b.traps[k].name);
            assert_string_equal(a.traps[k].answer, b.traps[k].answer);
        }
        assert_string_not_equal(a.prompt, b.prompt);

        char *w = wording(b.prompt);
        for (const char *const *g = tm->giveaways; *g; g++)
            if (find_ci(w, *g))
                fail_msg("%s: natural prompt gives away \"%s\":\n%s", b.id, *g, w);
        for (const char *const *c = tm->answer_columns; c && *c; c++)
            assert_names(b.id, w, *c);
        /* the columns a task's own params name */
        static const char *const keys[] = {"group_by", "status_column", "date_column",
                                           "order_customer_column", "customer_key"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *col = json_string_value(json_object_get(b.params, keys[k]));
            if (col && !strchr(col, ' ')) /* a column name, not a phrase */
                assert_names(b.id, w, col);
        }
        size_t k;
        json_t *oc;
        json_array_foreach(json_object_get(b.params, "output_columns"), k, oc)
            assert_names(b.id, w, json_string_value(oc));
        assert_null(strstr(w, "tolerance"));
        free(w);
        /* every placeholder filled, in both styles */
        for (const char *p = a.prompt; (p = strchr(p, '{')) != NULL; p++)
            if (islower((unsigned char)p[1]))
                fail_msg("%s: unfilled placeholder at '%.20s'", a.id, p);
        for (const char *p = b.prompt; (p = strchr(p, '{')) != NULL; p++)
            if (islower((unsigned char)p[1]))
                fail_msg("%s: unfilled placeholder at '%.20s'", b.id, p);
        vat_tt_assert_states_shape(&a);
        vat_tt_assert_states_shape(&b);

        /* compound: every trap armed and proven in every admitted task */
        if (b.n_traps) {
            assert_true(b.n_traps >= 3);
            for (int j = 0; j < b.n_traps; j++) {
                assert_string_not_equal(b.traps[j].answer, b.gold);
                assert_true(rb.traps[j].gate_passed);
                assert_true(rb.traps[j].score < 1.0);
            }
        }
        snprintf(rec[0][i], 160, "%s", a.phrasing);
        snprintf(rec[1][i], 160, "%s", b.phrasing);
        vat_task_clear(&a);
        vat_task_clear(&b);
    }
    /* every slot drawn varies over at least 4 phrasings; the data
     * description ('d'), the question ('q') and the answer format ('a')
     * are always drawn, in both styles: the question itself varies, not
     * just a lead-in before a fixed question (no 'l' slot any more) */
    for (int s = 0; s < 2; s++) {
        if (distinct_slot(rec[s], NTASKS, 'l') != 0)
            fail_msg("%s: %s style varies a lead-in ('l') instead of the question", tm->name,
                     s ? "natural" : "explicit");
        for (const char *slot = "dqa"; *slot; slot++) {
            int k = distinct_slot(rec[s], NTASKS, *slot);
            if (k < 4)
                fail_msg("%s: %s style draws %d phrasings of slot '%c' over %d tasks", tm->name,
                         s ? "natural" : "explicit", k, *slot, NTASKS);
        }
    }
    print_message("  %s: explicit and natural agree on %d tasks\n", tm->name, NTASKS);
    vat_tt_env_free(ex);
    vat_tt_env_free(na);
}

static void test_natural_templates(void **state)
{
    (void)state;
    int n = 0;
    for (size_t i = 0; vat_registry[i]; i++)
        if (vat_registry[i]->giveaways) {
            check_template(vat_registry[i]);
            n++;
        }
    assert_true(n >= 1);
    assert_non_null(vat_template_find("payments_reconciliation")->giveaways);
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
    struct vat_config c;
    struct vat_err e = {{0}};
    assert_int_equal(vat_config_parse(&c, text, strlen(text), "full.toml", &e), 0);
    assert_true(c.inline_full);
    for (size_t i = 0; vat_registry[i]; i++) {
        const struct vat_template *tm = vat_registry[i];
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
                if (++a >= 40)
                    fail_msg("%s not admitted with inline = full: %s", t.id, e.msg);
            if (strstr(t.prompt, "too long") || strstr(t.prompt, "Only the leading rows") ||
                strstr(t.prompt, "leading rows of each table"))
                fail_msg("%s: prompt does not show the whole fixture", t.id);
            if (strcmp(t.fixture[0].format, "csv") == 0 && strstr(t.prompt, "```csv\n") &&
                strcmp(tm->family, "regex") != 0 && strcmp(tm->name, "dup_header") != 0) {
                size_t len;
                char *file = vat_tt_fixture_text(&t, 0, &len);
                char *block = vat_tt_inline_block(t.prompt, "csv");
                assert_string_equal(block, file);
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
        cmocka_unit_test(test_natural_templates),
        cmocka_unit_test(test_mixed_halves),
        cmocka_unit_test(test_explicit_only_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
