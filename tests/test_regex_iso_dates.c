/* test_regex_iso_dates.c — what is particular to the regex_iso_dates
 * template: in every year rule, gold's year part accepts exactly the
 * stated years, harmless spellings of gold written from the params alone
 * pass, and near misses (a guard, a month or day rule, the separator or
 * the year rule loosened, a guard widened to letters) are killed by the
 * held-out lines alone, and so is every mutant src/mutate.h makes
 * of gold; the prompt says letters next to a date are fine.  What
 * every regex template owes (admission, determinism, the held-out stream,
 * the trap, tampering, Python parity) is tested over all of them in
 * test_regexgen.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "mutate.h"
#include "regexgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_regex_iso_dates;
#define TMPL (&vat_tmpl_regex_iso_dates)
#define SEED 20240611u

static const char *param_str(const struct vat_task *t, const char *k)
{
    return json_string_value(json_object_get(t->params, k));
}

static long param_int(const struct vat_task *t, const char *k)
{
    return (long)json_integer_value(json_object_get(t->params, k));
}

/* The gold of a task, spelled by the test on its own from the params:
 * month, day, year, separator and guard spellings chosen by `style`.
 * style 0 mirrors the template's rule set with other spellings; the
 * mutations below break one rule each. */
enum mut {
    MUT_NONE,
    MUT_NO_GUARDS,
    MUT_NO_BEFORE,
    MUT_NO_AFTER,
    MUT_MONTH_LOOSE,
    MUT_DAY_LOOSE,
    MUT_ANY_SEP,
    MUT_ANY_YEAR,
    MUT_WORD_BEFORE, /* the guard of the other boundary rule before:   */
    MUT_WORD_AFTER,  /* letters refused (v2024-03-05 lost) or let in */
    /* mistakes only the decoys held back for levels 3-5 catch */
    MUT_SEP_PLUS,    /* a separator repeated: takes 2024--03-05      */
    MUT_SEP_SPACED,  /* spaces around it: takes 2024 - 03 - 05       */
};

/* Whether the task's dates must stand as words (boundary "word"), not
 * just outside digit runs ("digits"; vat 0.1 params have no boundary). */
static bool word_rule(const struct vat_task *t)
{
    const char *b = param_str(t, "boundary");
    return b && strcmp(b, "word") == 0;
}

static char *spell(const struct vat_task *t, int style, enum mut m)
{
    const char *order = param_str(t, "order"), *sep = param_str(t, "separator");
    long ymin = param_int(t, "year_min"), ymax = param_int(t, "year_max");
    /* years: any four digits, or every decade of the range listed */
    char y[256];
    if (m == MUT_ANY_YEAR || (ymin == 0 && ymax == 9999)) {
        snprintf(y, sizeof y, "%s", style ? "\\d\\d\\d\\d" : "[0-9]{4}");
    } else {
        if (ymin % 10 != 0 || ymax % 10 != 9)
            return NULL;
        size_t k = (size_t)snprintf(y, sizeof y, "%s", style ? "(?:" : "(");
        for (long dec = ymin / 10; dec <= ymax / 10; dec++)
            k += (size_t)snprintf(y + k, sizeof y - k, "%s%ld", dec == ymin / 10 ? "" : "|", dec);
        snprintf(y + k, sizeof y - k, "%s", style ? ")\\d" : ")[0-9]");
    }
    const char *mo = m == MUT_MONTH_LOOSE ? "[01]\\d"
                     : style            ? "(?:0[1-9]|1[012])"
                                        : "(1[0-2]|0[1-9])";
    const char *dd = m == MUT_DAY_LOOSE ? "[0-3]\\d"
                     : style           ? "(?:[0][1-9]|[1-2]\\d|3[0-1])"
                                       : "(3[01]|[12][0-9]|0[1-9])";
    /* one accepted separator or several (any of them in each place) */
    char s[32];
    if (m == MUT_ANY_SEP)
        snprintf(s, sizeof s, "[-/._ :]");
    else if (style || strlen(sep) > 1)
        snprintf(s, sizeof s, "[%s]", sep);
    else
        snprintf(s, sizeof s, "%s%s", sep[0] == '/' ? "" : "\\", sep);
    if (m == MUT_SEP_PLUS || m == MUT_SEP_SPACED) {
        char one[32];
        snprintf(one, sizeof one, "%s", s);
        snprintf(s, sizeof s, m == MUT_SEP_PLUS ? "%s+" : "\\s*%s\\s*", one);
    }
    bool before = m != MUT_NO_GUARDS && m != MUT_NO_BEFORE;
    bool after = m != MUT_NO_GUARDS && m != MUT_NO_AFTER;
    bool word = word_rule(t);
    struct vat_buf b = VAT_BUF_INIT;
    if ((m == MUT_WORD_BEFORE) != word && before)
        vat_buf_puts(&b, style ? "(?<!\\w)" : "(?<![0-9A-Za-z_])");
    else if (before)
        vat_buf_puts(&b, style ? "(?<!\\d)" : "(?<![0-9])");
    for (int i = 0; i < 3; i++) {
        vat_buf_puts(&b, order[i] == 'Y' ? y : order[i] == 'M' ? mo : dd);
        if (i < 2)
            vat_buf_puts(&b, s);
    }
    if ((m == MUT_WORD_AFTER) != word && after)
        vat_buf_puts(&b, style ? "(?![A-Za-z0-9_])" : "(?!\\w)");
    else if (after)
        vat_buf_puts(&b, style ? "(?!\\d)" : "(?![0-9])");
    return vat_buf_detach(&b);
}

/* ---- the rules of one task ------------------------------------------------- */

static void harmless(const struct vat_task *t)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(t, style, MUT_NONE);
        assert_non_null(p);
        assert_string_not_equal(p, t->gold);
        struct vat_verdict v = vat_tt_check(t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", t->id, p, v.score, v.reason);
        free(p);
    }
}

static void near_misses(const struct vat_task *t)
{
    static const enum mut muts[] = {MUT_NO_GUARDS, MUT_NO_BEFORE,   MUT_NO_AFTER,
                                    MUT_MONTH_LOOSE, MUT_DAY_LOOSE, MUT_ANY_SEP,
                                    MUT_ANY_YEAR,  MUT_WORD_BEFORE, MUT_WORD_AFTER};
    static const char *const names[] = {"no guards",     "no lookbehind", "no lookahead",
                                        "month [01]d",   "day [0-3]d",    "any separator",
                                        "any year",      "no letter before",
                                        "no letter after"};
    bool any_year = param_int(t, "year_min") == 0 && param_int(t, "year_max") == 9999;
    json_t *ho = vat_rx_spec_heldout(t->spec);
    for (size_t k = 0; k < sizeof muts / sizeof muts[0]; k++) {
        if (muts[k] == MUT_ANY_YEAR && any_year)
            continue;
        char *p = spell(t, (int)(k % 2), muts[k]);
        assert_non_null(p);
        struct vat_verdict v = vat_tt_check(t, p), vh = vat_check_regex(ho, p, strlen(p));
        if (!(v.gate_passed && v.score == 0.0 && vh.gate_passed && vh.score == 0.0))
            fail_msg("%s: near miss '%s' (%s) not killed by held-out lines: %g/%g", t->id, p,
                     names[k], v.score, vh.score);
        free(p);
    }
    /* the naive trap with guards added is still wrong (month 13, day 00) */
    char *guarded = vat_xasprintf("(?<!\\d)%s(?!\\d)", t->trap);
    struct vat_verdict v = vat_tt_check(t, guarded);
    assert_true(v.gate_passed && v.score == 0.0);
    free(guarded);
    json_decref(ho);
}

/* The gold's year part accepts exactly the stated years: every year
 * 0000..9999 written in the task's notation (month 07, day 19) is
 * extracted if and only if it lies in year_min..year_max. */
static void years_exact(const struct vat_task *t)
{
    const char *order = param_str(t, "order");
    char sep[2] = {param_str(t, "separator")[0], 0}; /* the first accepted one */
    long ymin = param_int(t, "year_min"), ymax = param_int(t, "year_max");
    for (int from = 0; from < 10000; from += 2500) {
        struct vat_buf text = VAT_BUF_INIT;
        json_t *want = json_array();
        for (int y = from; y < from + 2500; y++) {
            char ys[16], date[64];
            snprintf(ys, sizeof ys, "%04d", y);
            const char *f[3];
            for (int i = 0; i < 3; i++)
                f[i] = order[i] == 'Y' ? ys : order[i] == 'M' ? "07" : "19";
            snprintf(date, sizeof date, "%s%s%s%s%s", f[0], sep, f[1], sep, f[2]);
            vat_buf_printf(&text, "%s ", date);
            if (y >= ymin && y <= ymax)
                json_array_append_new(want, json_string(date));
        }
        struct vat_verdict v;
        json_t *got = vat_regex_extract(t->spec, t->gold, strlen(t->gold), text.data, &v);
        assert_non_null(got);
        if (!json_equal(got, want))
            fail_msg("%s: gold '%s' takes %zu of years %d..%d, want %zu", t->id, t->gold,
                     json_array_size(got), from, from + 2499, json_array_size(want));
        json_decref(got);
        json_decref(want);
        vat_buf_release(&text);
    }
}

/* Every mutant of gold (a guard, class or count changed by one step) is
 * killed by the held-out lines alone: they hold a letter in each digit
 * place a class covers, each field's boundary values and dates touching
 * letters, so none of these small mistakes passes. */
static void mutants_killed(const struct vat_task *t)
{
    struct vat_mutants m = VAT_MUTANTS_INIT;
    struct vat_err e;
    assert_int_equal(vat_mutate_regex(t->gold, &m, &e), 0);
    assert_true(m.n >= 10);
    json_t *ho = vat_rx_spec_heldout(t->spec);
    for (size_t i = 0; i < m.n; i++) {
        if (m.v[i].equivalent)
            continue;
        struct vat_verdict v = vat_check_regex(ho, m.v[i].text, strlen(m.v[i].text));
        if (v.gate_passed && v.score >= 1.0)
            fail_msg("%s: %s mutant '%s' survives the held-out lines", t->id, m.v[i].kind,
                     m.v[i].text);
    }
    json_decref(ho);
    vat_mutants_release(&m);
}

/* The digit-run rule is about digits only, and the prompt says so with a
 * date of the task's own notation (in its year range) next to letters,
 * which gold indeed extracts; under the word rule the prompt says such
 * dates hold nothing to extract, and gold extracts none of them. */
static void prompt_allows_letters(const struct vat_task *t)
{
    bool word = word_rule(t);
    if (word)
        assert_non_null(strstr(t->prompt, "hold no date to extract"));
    else
        assert_non_null(strstr(t->prompt, "Letters, underscores and other non-digits right next "
                                          "to a date do not stop it from counting"));
    const char *order = param_str(t, "order");
    char sep[2] = {param_str(t, "separator")[0], 0}; /* what the prompt's samples use */
    long ymin = param_int(t, "year_min"), ymax = param_int(t, "year_max");
    char ys[8], date[32], text[160], shown[64];
    snprintf(ys, sizeof ys, "%04ld", ymin > 2024 ? ymin : ymax < 2024 ? ymax : 2024);
    const char *f[3];
    for (int i = 0; i < 3; i++)
        f[i] = order[i] == 'Y' ? ys : order[i] == 'M' ? "03" : "05";
    snprintf(date, sizeof date, "%s%s%s%s%s", f[0], sep, f[1], sep, f[2]);
    snprintf(shown, sizeof shown, "backup_%s.tar", date);
    assert_non_null(strstr(t->prompt, shown));
    snprintf(text, sizeof text, "v%s x_%sT08:15:00 id%s_bak", date, date, date);
    struct vat_verdict v;
    json_t *got = vat_regex_extract(t->spec, t->gold, strlen(t->gold), text, &v);
    assert_non_null(got);
    assert_int_equal(json_array_size(got), word ? 0 : 3);
    for (size_t i = 0; i < json_array_size(got); i++)
        assert_string_equal(json_string_value(json_array_get(got, i)), date);
    json_decref(got);
}

/* One task of every year rule (the first N_FORMATS indexes hold every
 * notation; 155 year rules, the any-year rule included): the year part is
 * exact, harmless spellings of gold pass and near misses are killed by
 * the held-out lines alone.  Both boundary rules and several-separator
 * notations turn up on the way, and are checked the same. */
#define N_YEAR_RULES 155
static void test_every_year_rule(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(TMPL, SEED);
    json_t *seen = json_object();
    int word = 0, multi = 0;
    for (uint32_t i = 0; i < 4000 && json_object_size(seen) < N_YEAR_RULES; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        char key[32];
        snprintf(key, sizeof key, "%ld-%ld", param_int(&t, "year_min"), param_int(&t, "year_max"));
        if (!json_object_get(seen, key)) {
            json_object_set_new(seen, key, json_true());
            word += word_rule(&t);
            multi += strlen(param_str(&t, "separator")) > 1;
            years_exact(&t);
            harmless(&t);
            near_misses(&t);
            mutants_killed(&t);
            prompt_allows_letters(&t);
        }
        vat_task_clear(&t);
    }
    assert_int_equal(json_object_size(seen), N_YEAR_RULES);
    print_message("  %d of %d with the word rule, %d with several separators\n", word,
                  N_YEAR_RULES, multi);
    assert_true(word > 0 && multi > 0);
    assert_non_null(json_object_get(seen, "0-9999"));
    assert_non_null(json_object_get(seen, "1950-2049"));
    json_decref(seen);
    vat_tt_env_free(v);
}

/* ---- the decoy kinds held back for levels 3-5 ----------------------------- */

/* Held-back mistake k: MUT_SEP_PLUS + k. */
static char *held_back_mistake(const struct vat_task *t, int k)
{
    return spell(t, k, (enum mut)(MUT_SEP_PLUS + k));
}

/* Per accepted separator (at most two): a date in t's notation (month
 * 03, day 05, a year of its range) with it doubled in the first and in
 * the second place, and with spaces around it in both. */
static int held_back_decoys(const struct vat_task *t, char text[][64], int *mistake)
{
    const char *order = param_str(t, "order"), *sep = param_str(t, "separator");
    long ymin = param_int(t, "year_min"), ymax = param_int(t, "year_max");
    char ys[8];
    snprintf(ys, sizeof ys, "%04ld", ymin > 2024 ? ymin : ymax < 2024 ? ymax : 2024);
    const char *f[3];
    for (int i = 0; i < 3; i++)
        f[i] = order[i] == 'Y' ? ys : order[i] == 'M' ? "03" : "05";
    int n = 0;
    for (const char *c = sep; *c && n + 3 <= 6; c++) {
        char one[2] = {*c, 0}, two[3] = {*c, *c, 0}, spaced[4] = {' ', *c, ' ', 0};
        const char *s1[3] = {two, one, spaced}, *s2[3] = {one, two, spaced};
        for (int k = 0; k < 3; k++, n++) {
            snprintf(text[n], 64, "%s%s%s%s%s", f[0], s1[k], f[1], s2[k], f[2]);
            mistake[n] = k < 2 ? 0 : 1;
        }
    }
    return n;
}

/* K_SEP_DOUBLED and K_SEP_SPACED of regex_iso_dates.c's enum kind. */
static const struct vat_tt_held_back held_back = {
    .tmpl = TMPL,
    .seed = SEED,
    .kinds = (1u << 19) | (1u << 20),
    .n_mistakes = 2,
    .mistake = held_back_mistake,
    .pass_below = 3,
    .decoys = held_back_decoys,
    .tasks = 16,
};

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_year_rule),
        cmocka_unit_test_prestate(vat_tt_held_back_at_level_4, (void *)&held_back),
        cmocka_unit_test_prestate(vat_tt_held_back_below_level_3, (void *)&held_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
