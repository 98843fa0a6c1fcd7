/* test_regex_order_ids.c — what is particular to the regex_order_ids
 * template: the rules of the prompt on hand-made lines built from the
 * params, harmless spellings of gold, near misses (a boundary dropped,
 * the digit count, the case rule or the separator loosened) killed by the
 * held-out lines alone, the trap being gold without its boundaries, and
 * the drawn shapes.  What every regex template owes (admission, the shape
 * walk, determinism, the held-out stream, the trap on held-out lines,
 * tampering, mutants, Python parity) is tested over all of them in
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
#include "regexgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_regex_order_ids;
#define TMPL (&vat_tmpl_regex_order_ids)
#define SEED 20240612u
#define N_TASKS 60

static const char *param_str(const struct vat_task *t, const char *k)
{
    return json_string_value(json_object_get(t->params, k));
}

static bool any_case(const struct vat_task *t)
{
    return strcmp(param_str(t, "case"), "any") == 0;
}

/* Runs pattern over text with the checker's engine; returns the list. */
static json_t *extract(const struct vat_task *t, const char *pattern, const char *text)
{
    struct vat_verdict v;
    json_t *got = vat_regex_extract(t->spec, pattern, strlen(pattern), text, &v);
    if (!got)
        fail_msg("'%s' failed on '%s': %s", pattern, text, v.reason);
    return got;
}

/* ---- the rules, spellings and near misses ------------------------------- */

/* The id of a task's shape with prefix text pre, separator sep ("" for
 * none) and nd digits, into out. */
static void id_of(char *out, size_t cap, const char *pre, const char *sep, int nd)
{
    static const char digits[] = "40718293651234";
    snprintf(out, cap, "%s%s%.*s", pre, sep, nd, digits);
}

/* The digit counts the task accepts: digits .. digits_max (ranges
 * added ranges; an exact count has digits_max == digits). */
static int digits_lo(const struct vat_task *t)
{
    return (int)json_integer_value(json_object_get(t->params, "digits"));
}

static int digits_hi(const struct vat_task *t)
{
    const json_t *m = json_object_get(t->params, "digits_max");
    return m ? (int)json_integer_value(m) : digits_lo(t);
}

/* Copies tpl into out with every '@' replaced by with. */
static void subst(char *out, size_t cap, const char *tpl, const char *with)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = tpl; *p; p++) {
        if (*p == '@')
            vat_buf_puts(&b, with);
        else
            vat_buf_putc(&b, *p);
    }
    snprintf(out, cap, "%s", b.data ? b.data : "");
    vat_buf_release(&b);
}

/* The rules as the prompt states them, on hand-made lines built from the
 * task's params: what gold extracts is exactly what the rules say. */
static void rules_hold(const struct vat_task *t)
{
    const char *pre = param_str(t, "prefix"), *sep = param_str(t, "separator");
    int lo = digits_lo(t), nd = digits_hi(t);
    char low[8], cap[8], id[32], x[32], y[32], line[256];
    for (size_t i = 0; i <= strlen(pre); i++) {
        low[i] = pre[i] >= 'A' && pre[i] <= 'Z' ? (char)(pre[i] - 'A' + 'a') : pre[i];
        cap[i] = i == 0 ? pre[i] : low[i];
    }
    id_of(id, sizeof id, pre, sep, nd);
    struct {
        const char *tpl; /* '@' stands for the id */
        int want;        /* how many copies of the id gold takes */
    } rows[] = {
        {"@", 1},
        {"order @, please", 1},
        {"(@) and [@]", 2},
        {"\"@\": @.", 2},
        {"X@", 0},
        {"@X", 0},
        {"_@", 0},
        {"@_", 0},
        {"7@", 0},
        {"@9", 0},
        {"@-2 is a line item", 1},
        {"#@#", 1},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        subst(line, sizeof line, rows[k].tpl, id);
        json_t *got = extract(t, t->gold, line);
        if ((int)json_array_size(got) != rows[k].want)
            fail_msg("%s: gold '%s' takes %zu from '%s', want %d", t->id, t->gold,
                     json_array_size(got), line, rows[k].want);
        for (size_t j = 0; j < json_array_size(got); j++)
            assert_string_equal(json_string_value(json_array_get(got, j)), id);
        json_decref(got);
    }
    /* digit counts, separators and case */
    struct {
        const char *pre, *sep;
        int nd;
        int want;
    } ids[] = {
        {pre, sep, nd, 1},        {pre, sep, lo - 1, 0}, {pre, sep, nd + 1, 0},
        {pre, sep, lo, 1},
        {low, sep, nd, -1},       {cap, sep, nd, -1},    {pre, *sep ? "" : "-", nd, 0},
        {pre, " ", nd, 0},        {pre, *sep == '#' ? "-" : "#", nd, 0},
    };
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        id_of(x, sizeof x, ids[k].pre, ids[k].sep, ids[k].nd);
        int want = ids[k].want < 0 ? any_case(t) : ids[k].want;
        snprintf(line, sizeof line, "see %s now", x);
        json_t *got = extract(t, t->gold, line);
        if ((int)json_array_size(got) != want)
            fail_msg("%s: gold '%s' takes %zu from '%s', want %d", t->id, t->gold,
                     json_array_size(got), line, want);
        json_decref(got);
    }
    /* a masked id is not one */
    snprintf(y, sizeof y, "%s%s", pre, sep);
    for (int i = 0; i < nd; i++)
        strcat(y, i < nd - 2 ? "X" : "5");
    json_t *got = extract(t, t->gold, y);
    assert_int_equal(json_array_size(got), 0);
    json_decref(got);
}

/* Spellings of gold written here from the params alone. */
static char *spell(const struct vat_task *t, int style)
{
    const char *pre = param_str(t, "prefix"), *sep = param_str(t, "separator");
    int nd = digits_lo(t), hi = digits_hi(t);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, style == 0 ? "(?<![A-Za-z0-9_])" : "(?<!\\w)");
    if (any_case(t))
        vat_buf_printf(&b, "(?i:%s)", pre);
    else
        vat_buf_puts(&b, pre);
    if (*sep)
        vat_buf_printf(&b, "%s%s", strchr("#-.", *sep) ? "\\" : "", sep);
    if (style == 0)
        vat_buf_printf(&b, "[0-9]{%d,%d}", nd, hi);
    else
        for (int i = 0; i < hi; i++)
            vat_buf_puts(&b, i < nd ? "\\d" : "\\d?");
    vat_buf_puts(&b, style == 0 ? "(?![A-Za-z0-9_])" : "(?!\\w)");
    return vat_buf_detach(&b);
}

enum mut {
    MUT_NO_BEFORE,
    MUT_NO_AFTER,
    MUT_DIGITS_RANGE,
    MUT_DIGITS_PLUS,
    MUT_DIGITS_WORD,
    MUT_CASE_FLIP,
    MUT_ANY_SEP,
    N_MUTS,
    /* mistakes only the decoys held back for levels 3-5 catch */
    MUT_SEP_PLUS = N_MUTS, /* ORD-+\d{6}: takes ORD--123456           */
    MUT_SEP_SPACED,        /* ORD\s*-\s*\d{6}: takes ORD - 123456     */
    MUT_DIGITS_CHUNKED,    /* ORD-(?:\d[ -]?){5}\d: takes ORD-123 456 */
};

static char *near_miss(const struct vat_task *t, enum mut m)
{
    const char *pre = param_str(t, "prefix"), *sep = param_str(t, "separator");
    int nd = digits_lo(t), hi = digits_hi(t);
    bool ci = any_case(t) != (m == MUT_CASE_FLIP);
    struct vat_buf b = VAT_BUF_INIT;
    if (m != MUT_NO_BEFORE)
        vat_buf_puts(&b, "\\b");
    if (ci)
        vat_buf_printf(&b, "(?i:%s)", pre);
    else
        vat_buf_puts(&b, pre);
    if (m == MUT_ANY_SEP)
        vat_buf_puts(&b, "[-_#/. ]?");
    else if (*sep && m == MUT_SEP_PLUS)
        vat_buf_printf(&b, "[%s]+", sep);
    else if (*sep && m == MUT_SEP_SPACED)
        vat_buf_printf(&b, "\\s*[%s]\\s*", sep);
    else if (*sep)
        vat_buf_printf(&b, "[%s]", sep);
    if (m == MUT_DIGITS_CHUNKED)
        vat_buf_printf(&b, "(?:\\d[ -]?){%d,%d}\\d", nd - 1, hi - 1);
    else if (m == MUT_DIGITS_RANGE)
        vat_buf_printf(&b, "\\d{%d,%d}", nd - 1, hi + 1);
    else if (m == MUT_DIGITS_PLUS)
        vat_buf_puts(&b, "\\d+");
    else if (m == MUT_DIGITS_WORD)
        vat_buf_printf(&b, "\\w{%d,%d}", nd, hi);
    else
        vat_buf_printf(&b, "\\d{%d,%d}", nd, hi);
    if (m != MUT_NO_AFTER)
        vat_buf_puts(&b, "\\b");
    return vat_buf_detach(&b);
}

static void spellings_and_near_misses(const struct vat_task *t)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(t, style);
        struct vat_verdict v = vat_tt_check(t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", t->id, p, v.score, v.reason);
        free(p);
    }
    static const char *const names[N_MUTS] = {"no leading boundary", "no trailing boundary",
                                              "digits n-1..n+1",     "digits +",
                                              "\\w for digits",      "case rule flipped",
                                              "any separator"};
    json_t *ho = vat_rx_spec_heldout(t->spec);
    for (int m = 0; m < N_MUTS; m++) {
        char *p = near_miss(t, (enum mut)m);
        struct vat_verdict va = vat_tt_check(t, p), vh = vat_check_regex(ho, p, strlen(p));
        if (!(va.gate_passed && va.score == 0.0 && vh.gate_passed && vh.score == 0.0))
            fail_msg("%s: near miss '%s' (%s) not killed by held-out lines: %g/%g", t->id, p,
                     names[m], va.score, vh.score);
        free(p);
    }
    json_decref(ho);
}

/* The trap is the gold without its boundaries; the held-out lines hold
 * at least three ids to take; the digit count is 4 to 9, or a range of up
 * to two more. */
static void trap_and_targets(const struct vat_task *t)
{
    assert_true(strncmp(t->gold, "\\b", 2) == 0);
    assert_non_null(strstr(t->gold, t->trap));
    size_t targets = 0, k;
    json_t *c;
    json_array_foreach(json_object_get(t->spec, "cases"), k, c)
        if (json_is_true(json_object_get(c, "heldout")))
            targets += json_array_size(json_object_get(c, "expected"));
    assert_true(targets >= 3);
    int lo = digits_lo(t), hi = digits_hi(t);
    assert_true(lo >= 4 && lo <= 9 && hi >= lo && hi <= lo + 2);
}

/* On the first 60 tasks the trap and targets are as above; on the first
 * 40 the rules hold, spellings pass and near misses fail. */
static void test_first_tasks(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(TMPL, SEED);
    for (uint32_t i = 0; i < N_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        trap_and_targets(&t);
        if (i < 40) {
            rules_hold(&t);
            spellings_and_near_misses(&t);
        }
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

/* ---- the decoy kinds held back for levels 3-5 ----------------------------- */

/* Held-back mistake k (MUT_SEP_PLUS + k); a separator written leniently
 * needs a shape with a separator. */
static char *held_back_mistake(const struct vat_task *t, int k)
{
    enum mut m = (enum mut)(MUT_SEP_PLUS + k);
    return m == MUT_DIGITS_CHUNKED || *param_str(t, "separator") ? near_miss(t, m) : NULL;
}

/* ORD--<digits> and ORD - <digits> (a shape without a separator doubles
 * or spaces '-'), and ORD-<digits> typed in two chunks. */
static int held_back_decoys(const struct vat_task *t, char text[][64], int *mistake)
{
    const char *pre = param_str(t, "prefix"), *sep = param_str(t, "separator");
    char s = *sep ? *sep : '-', dig[16];
    int nd = digits_hi(t);
    id_of(dig, sizeof dig, "", "", nd);
    snprintf(text[0], 64, "%s%c%c%s", pre, s, s, dig);
    snprintf(text[1], 64, "%s %c %s", pre, s, dig);
    snprintf(text[2], 64, "%s%s%.*s %s", pre, sep, nd / 2, dig, dig + nd / 2);
    for (int k = 0; k < 3; k++)
        mistake[k] = k;
    return 3;
}

/* K_SEP_PADDED and K_DIGITS_SPLIT of regex_order_ids.c's enum kind. */
static const struct vat_tt_held_back held_back = {
    .tmpl = TMPL,
    .seed = SEED,
    .kinds = (1u << 10) | (1u << 11),
    .n_mistakes = 3,
    .mistake = held_back_mistake,
    .pass_below = 7,
    .decoys = held_back_decoys,
    .tasks = 16,
};

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_tasks),
        cmocka_unit_test_prestate(vat_tt_held_back_at_level_4, (void *)&held_back),
        cmocka_unit_test_prestate(vat_tt_held_back_below_level_3, (void *)&held_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
