/* test_regex_amounts.c — what is particular to the regex_amounts
 * template: the rules of the prompt on hand-made lines in every drawn
 * notation, harmless spellings of gold written from the params alone,
 * near misses (a guard, the cents, grouping or lead rule loosened, a rule
 * flipped) killed by the held-out lines alone, and amounts of 1,000 and
 * more (what the trap misses) planted among the held-out targets.  What
 * every regex template owes (admission, the notation walk, determinism,
 * the held-out stream, the trap, tampering, mutants, Python parity) is
 * tested over all of them in test_regexgen.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "jsonout.h"
#include "regexgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_regex_amounts;
#define TMPL (&vat_tmpl_regex_amounts)
#define SEED 20240613u
#define N_TASKS 60

static const char *param_str(const struct vat_task *t, const char *k)
{
    return json_string_value(json_object_get(t->params, k));
}

/* The notation of a task, read from its params. */
struct note {
    const char *marker; /* with its space, when one follows it */
    char sep, dec;
    bool cents_opt, group_opt;
    int decs;           /* 2 or 3 digits after the decimal separator */
    bool minus;         /* a '-' right before the marker is part of it */
};

static struct note note_of(const struct vat_task *t)
{
    const char *minus = param_str(t, "minus");
    json_t *decs = json_object_get(t->params, "decimals");
    struct note n = {param_str(t, "marker"), param_str(t, "thousands_separator")[0],
                     param_str(t, "decimal_separator")[0],
                     strcmp(param_str(t, "cents"), "optional") == 0,
                     strcmp(param_str(t, "grouping"), "optional") == 0,
                     decs ? (int)json_integer_value(decs) : 2,
                     minus && strcmp(minus, "part") == 0};
    return n;
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

/* Writes tpl into out in the task's notation: '@' is the marker, '^' the
 * thousands separator, '|' the decimal separator.  The templates' rows
 * are written for two decimals; with three, a '5' goes in after every
 * decimal separator, so "|50" stays right, "|5" one short, "|345" one
 * over and "|5O" ends in its letter. */
static void in_notation(char *out, size_t cap, const char *tpl, const struct note *n)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = tpl; *p; p++) {
        if (*p == '@')
            vat_buf_puts(&b, n->marker);
        else if (*p == '^')
            vat_buf_putc(&b, n->sep);
        else if (*p == '|') {
            vat_buf_putc(&b, n->dec);
            if (n->decs == 3)
                vat_buf_putc(&b, '5');
        }
        else
            vat_buf_putc(&b, *p);
    }
    snprintf(out, cap, "%s", b.data ? b.data : "");
    vat_buf_release(&b);
}

/* When a hand-made amount counts. */
enum when { ALWAYS, CENTS_OPT, GROUP_OPT, BOTH_OPT, MINUS_OUT, MINUS_PART, NEVER };

/* The rules as the prompt states them, on hand-made lines written in the
 * task's notation: gold extracts exactly what the rules say. */
static void rules_hold(const struct vat_task *t)
{
    struct note n = note_of(t);
    static const struct {
        const char *text; /* in notation: see in_notation */
        const char *want; /* what counts, "\n"-separated, when `when` holds */
        enum when when;
    } rows[] = {
        {"paid @1^234|50 today", "@1^234|50", ALWAYS},
        {"paid @12|50.", "@12|50", ALWAYS},
        {"@0|99 and @7^000^000|00", "@0|99\n@7^000^000|00", ALWAYS},
        {"only @12 here", "@12", CENTS_OPT},
        {"only @12, thanks", "@12", CENTS_OPT},
        {"@1234|50 ok", "@1234|50", GROUP_OPT},
        {"@1234 ok", "@1234", BOTH_OPT},
        {"@0 due", "@0", CENTS_OPT},
        {"(@1^000|00) +@5|00", "@1^000|00\n@5|00", ALWAYS},
        {"refund -@5|00 and -(@7|00)", "@5|00\n@7|00", MINUS_OUT},
        {"refund -@5|00 and -(@7|00)", "-@5|00\n@7|00", MINUS_PART},
        {"@40|00-60 per seat", "@40|00", ALWAYS},
        {"@36|00/3 each", "@36|00", ALWAYS},
        {"total=@5|00,status=ok", "@5|00", ALWAYS},
        {"@12|5 off", "", NEVER},
        {"@12|345 off", "", NEVER},
        {"@1^00|00 off", "", NEVER},
        {"@12^3456|00 off", "", NEVER},
        {"@1234^567|00 off", "", NEVER},
        {"@05|00 off", "", NEVER},
        {"@0^500|00 off", "", NEVER},
        {"X@12|00 off", "", NEVER},
        {"_@12|00 off", "", NEVER},
        {"@12|00k off", "", NEVER},
        {"@12|00_ off", "", NEVER},
        {"@1O5|00 off", "", NEVER},
        {"@1^5O0|00 off", "", NEVER},
        {"@12|5O off", "", NEVER},
        {"@12|50|25 off", "", NEVER},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        char text[128], want[128];
        in_notation(text, sizeof text, rows[k].text, &n);
        bool holds = rows[k].when == ALWAYS ||
                     (rows[k].when == CENTS_OPT && n.cents_opt) ||
                     (rows[k].when == GROUP_OPT && n.group_opt) ||
                     (rows[k].when == BOTH_OPT && n.cents_opt && n.group_opt) ||
                     (rows[k].when == MINUS_OUT && !n.minus) ||
                     (rows[k].when == MINUS_PART && n.minus);
        if ((rows[k].when == MINUS_OUT || rows[k].when == MINUS_PART) && !holds)
            continue; /* the other rule's row */
        in_notation(want, sizeof want, holds ? rows[k].want : "", &n);
        json_t *expect = json_array();
        for (char *s = want, *nl; *s; s = nl ? nl + 1 : s + strlen(s)) {
            nl = strchr(s, '\n');
            if (nl)
                *nl = 0;
            json_array_append_new(expect, json_string(s));
        }
        json_t *got = extract(t, t->gold, text);
        if (!json_equal(got, expect)) {
            char *g = vat_json_dumps(got), *w = vat_json_dumps(expect);
            fail_msg("%s: gold '%s' on '%s' gives %s, want %s", t->id, t->gold, text, g, w);
        }
        json_decref(got);
        json_decref(expect);
    }
}

/* The marker, a separator, as pattern text (style 1 uses classes). */
static void put_marker(struct vat_buf *b, const char *m, int style)
{
    for (const char *p = m; *p; p++) {
        if (*p == '$')
            vat_buf_puts(b, style ? "[$]" : "\\$");
        else if (*p == ' ')
            vat_buf_puts(b, style ? "[ ]" : " ");
        else
            vat_buf_putc(b, *p);
    }
}

static const char *sep_text(char c)
{
    return c == '.' ? "\\." : c == ' ' ? " " : c == ',' ? "," : "'";
}

enum mut {
    MUT_NONE,
    MUT_NO_BEFORE,
    MUT_NO_AFTER,
    MUT_AFTER_WORD_ONLY,
    MUT_AFTER_SEP_ONLY,
    MUT_CENTS_LOOSE,
    MUT_GROUP_LOOSE,
    MUT_LEAD_LOOSE,
    MUT_LEADING_ZERO,
    MUT_CENTS_FLIP,
    MUT_GROUP_FLIP,
    MUT_MINUS_FLIP,
    N_MUTS,
    /* mistakes only the decoys held back for levels 3-5 catch */
    MUT_MINUS_AFTER = N_MUTS, /* a minus also after the marker: takes $-12.00 */
    MUT_LOCALE,               /* '.' and ',' either way: takes $1.234,56      */
};

/* The other of '.' and ',' (any other separator as it is). */
static char swapped(char c)
{
    return c == '.' ? ',' : c == ',' ? '.' : c;
}

/* Gold written here from the params alone, in one of two styles, or
 * with one rule broken. */
static char *spell(const struct vat_task *t, int style, enum mut m)
{
    struct note n = note_of(t);
    const char *d = style ? "[0-9]" : "\\d";
    const char *s = sep_text(n.sep), *dc = sep_text(n.dec);
    bool cents_opt = n.cents_opt != (m == MUT_CENTS_FLIP);
    bool group_opt = n.group_opt != (m == MUT_GROUP_FLIP);
    struct vat_buf b = VAT_BUF_INIT;
    if (m != MUT_NO_BEFORE)
        vat_buf_puts(&b, style ? "(?<![A-Za-z0-9_])" : "(?<!\\w)");
    if (n.minus != (m == MUT_MINUS_FLIP))
        vat_buf_puts(&b, style ? "[-]?" : "-?");
    put_marker(&b, n.marker, style);
    if (m == MUT_MINUS_AFTER)
        vat_buf_puts(&b, "-?");
    char sc[16], dcc[16];
    if (m == MUT_LOCALE) {
        /* each separator a class holding both conventions' */
        snprintf(sc, sizeof sc, "[%s%s]", s, sep_text(swapped(n.sep)));
        snprintf(dcc, sizeof dcc, "[%s%s]", dc, sep_text(swapped(n.dec)));
        s = sc;
        dc = dcc;
    }
    vat_buf_puts(&b, "(?:0|");
    if (m == MUT_LEADING_ZERO)
        vat_buf_printf(&b, "%s{1,3}", d);
    else
        vat_buf_printf(&b, "[1-9]%s{0,%d}", d, m == MUT_LEAD_LOOSE ? 3 : 2);
    vat_buf_printf(&b, "(?:%s%s{%s})*", s, d, m == MUT_GROUP_LOOSE ? "2,4" : "3");
    if (group_opt)
        vat_buf_printf(&b, "|%s%s*", m == MUT_LEADING_ZERO ? d : "[1-9]", d);
    vat_buf_puts(&b, ")");
    char cents[32];
    if (m == MUT_CENTS_LOOSE)
        snprintf(cents, sizeof cents, "%d,%d", n.decs - 1, n.decs);
    else
        snprintf(cents, sizeof cents, "%d", n.decs);
    vat_buf_printf(&b, cents_opt ? "(?:%s%s{%s})?" : "%s%s{%s}", dc, d, cents);
    char cls[8];
    snprintf(cls, sizeof cls, "[.,%s]", n.sep == ' ' ? " " : n.sep == '\'' ? "'" : "");
    bool word = m != MUT_NO_AFTER && m != MUT_AFTER_SEP_ONLY;
    bool sepd = m != MUT_NO_AFTER && m != MUT_AFTER_WORD_ONLY;
    if (word)
        vat_buf_puts(&b, style ? "(?![A-Za-z0-9_])" : "(?!\\w)");
    if (sepd)
        vat_buf_printf(&b, "(?!%s%s)", cls, d);
    return vat_buf_detach(&b);
}

static void spellings_and_near_misses(const struct vat_task *t)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(t, style, MUT_NONE);
        struct vat_verdict v = vat_tt_check(t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", t->id, p, v.score, v.reason);
        free(p);
    }
    static const char *const names[N_MUTS] = {
        "none",          "no lookbehind",   "no lookahead",    "lookahead: word only",
        "lookahead: separator only", "cents {1,2}", "groups {2,4}", "lead {0,3}",
        "leading zero",  "cents rule flipped", "grouping rule flipped", "minus rule flipped"};
    json_t *ho = vat_rx_spec_heldout(t->spec);
    for (int m = MUT_NONE + 1; m < N_MUTS; m++) {
        char *p = spell(t, m % 2, (enum mut)m);
        struct vat_verdict va = vat_tt_check(t, p), vh = vat_check_regex(ho, p, strlen(p));
        if (!(va.gate_passed && va.score == 0.0 && vh.gate_passed && vh.score == 0.0))
            fail_msg("%s: near miss '%s' (%s) not killed by held-out lines: %g/%g", t->id, p,
                     names[m], va.score, vh.score);
        free(p);
    }
    /* the naive trap with both guards is still wrong: it stops at the
     * first thousands separator and then refuses the rest */
    char *guarded = vat_xasprintf("(?<!\\w)%s(?!\\w|[.,]\\d)", t->trap);
    struct vat_verdict v = vat_check_regex(ho, guarded, strlen(guarded));
    assert_true(v.gate_passed && v.score == 0.0);
    free(guarded);
    json_decref(ho);
}

/* Some held-out target is 1000 or more, grouped: what the trap stops
 * short of. */
static void heldout_holds_grouped_amounts(const struct vat_task *t)
{
    struct note n = note_of(t);
    size_t grouped = 0, k, j;
    json_t *c, *x;
    json_array_foreach(json_object_get(t->spec, "cases"), k, c) {
        if (!json_is_true(json_object_get(c, "heldout")))
            continue;
        json_array_foreach(json_object_get(c, "expected"), j, x) {
            const char *a = json_string_value(x) + strlen(n.marker);
            const char *s = strchr(a, n.sep);
            const char *dp = strchr(a, n.dec);
            grouped += s && (!dp || s < dp);
        }
    }
    if (grouped < 1)
        fail_msg("%s: no grouped amount among the held-out targets", t->id);
}

/* The first 60 tasks hold grouped held-out targets; on the first 48 the
 * rules hold, spellings pass and near misses fail. */
static void test_first_tasks(void **state)
{
    (void)state;
    struct vat_tt_env *v = vat_tt_env_new(TMPL, SEED);
    for (uint32_t i = 0; i < N_TASKS; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 1, &r);
        heldout_holds_grouped_amounts(&t);
        if (i < 48) {
            rules_hold(&t);
            spellings_and_near_misses(&t);
        }
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

/* ---- the decoy kinds held back for levels 3-5 ----------------------------- */

/* Held-back mistake k: MUT_MINUS_AFTER + k. */
static char *held_back_mistake(const struct vat_task *t, int k)
{
    return spell(t, k, (enum mut)(MUT_MINUS_AFTER + k));
}

/* A minus between the marker and the number, and 12,345.50 in the other
 * convention's separators. */
static int held_back_decoys(const struct vat_task *t, char text[][64], int *mistake)
{
    struct note n = note_of(t), other = n;
    other.sep = swapped(n.sep);
    other.dec = swapped(n.dec);
    in_notation(text[0], 64, "@-12|50", &n);
    in_notation(text[1], 64, "@12^345|50", &other);
    mistake[0] = 0;
    mistake[1] = 1;
    return 2;
}

/* K_MINUS_INSIDE and K_LOCALE of regex_amounts.c's enum kind.  Reading
 * '.' and ',' either way is also caught below level 3, by a group of two
 * digits read as cents ($1,00), so only the minus mistake passes there. */
static const struct vat_tt_held_back held_back = {
    .tmpl = TMPL,
    .seed = SEED,
    .kinds = (1u << 21) | (1u << 22),
    .n_mistakes = 2,
    .mistake = held_back_mistake,
    .pass_below = 1,
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
