/* test_regex_amounts.c — the regex_amounts template: admission of 60
 * tasks, byte-identical replays, distinct notations, the trap failing on
 * held-out lines alone, the rules of the prompt on hand-made lines in
 * every drawn notation, harmless spellings of gold passing and near
 * misses failing, the share of gold mutants the held-out lines kill,
 * confirm catching tampered fixtures and specs, and parity with Python's
 * re. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"
#include "csvio.h"
#include "jsonout.h"
#include "regexgen.h"
#include "template.h"
#include "testutil.h"
#include "verifiers.h"

extern const struct vat_template vat_tmpl_regex_amounts;
#define TMPL (&vat_tmpl_regex_amounts)
#define SEED 20240613u
#define N_TASKS 60

/* ---- helpers ------------------------------------------------------------ */

struct drawn {
    char *dir;
    json_t *cfg;
    struct vat_task t;
    struct vat_replay r;
};

static void draw(struct drawn *d, uint32_t index, uint64_t seed, const char *dir)
{
    d->dir = dir ? strdup(dir) : vat_test_tmpdir("rxamt");
    d->cfg = vat_template_default_params(TMPL);
    struct vat_draw_opts o = {seed, d->cfg, 6000};
    struct vat_err e = {{0}};
    vat_task_init(&d->t, TMPL, index, d->dir);
    if (vat_task_draw(&d->t, 0, &o, &d->r, &e) != 0)
        fail_msg("task %u did not admit: %s", index, e.msg);
}

static void drawn_release(struct drawn *d, bool rm)
{
    vat_task_clear(&d->t);
    json_decref(d->cfg);
    if (rm)
        vat_test_rmtree(d->dir);
    free(d->dir);
}

static struct vat_verdict check(const struct vat_task *t, const char *answer)
{
    return t->tmpl->check(t, answer, strlen(answer));
}

/* A copy of the task's spec keeping only the held-out cases. */
static json_t *heldout_only(const json_t *spec)
{
    json_t *s = json_deep_copy(spec);
    json_t *cases = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "cases"), i, c)
        if (json_is_true(json_object_get(c, "heldout")))
            json_array_append(cases, c);
    json_object_set_new(s, "cases", cases);
    return s;
}

static const char *param_str(const struct vat_task *t, const char *k)
{
    return json_string_value(json_object_get(t->params, k));
}

static long param_int(const struct vat_task *t, const char *k)
{
    return (long)json_integer_value(json_object_get(t->params, k));
}

/* The notation of a task, read from its params. */
struct note {
    const char *marker;
    char sep, dec;
    bool cents_opt, group_opt;
};

static struct note note_of(const struct vat_task *t)
{
    struct note n = {param_str(t, "marker"), param_str(t, "thousands_separator")[0],
                     param_str(t, "decimal_separator")[0],
                     strcmp(param_str(t, "cents"), "optional") == 0,
                     strcmp(param_str(t, "grouping"), "optional") == 0};
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

/* ---- admission ------------------------------------------------------------ */

static void test_sixty_tasks_admit(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxamt");
    char *golds[N_TASKS];
    json_t *markers = json_object(), *pairs = json_object();
    int rules[4] = {0};
    for (uint32_t i = 0; i < N_TASKS; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        struct vat_task *t = &d.t;
        const struct vat_verdict *v = d.r.v;
        assert_true(v[VAT_ROLE_GOLD].gate_passed);
        assert_true(v[VAT_ROLE_GOLD].score == 1.0);
        assert_string_equal(v[VAT_ROLE_GOLD].code, VAT_OK);
        assert_true(v[VAT_ROLE_TRAP].gate_passed);
        assert_true(v[VAT_ROLE_TRAP].score == 0.0);
        assert_string_equal(v[VAT_ROLE_TRAP].code, VAT_WRONG_EXTRACTION);
        assert_false(v[VAT_ROLE_MALFORMED].gate_passed);

        assert_int_equal(t->n_fixtures, 2);
        assert_string_equal(t->fixture[0].role, "main");
        assert_string_equal(t->fixture[1].role, "variant");
        assert_non_null(strstr(t->fixture[1].path, ".heldout.csv"));
        assert_true(t->fixture[0].rows >= 3 && t->fixture[0].rows <= 5);
        assert_true(t->fixture[1].rows >= 24 && t->fixture[1].rows <= 32);
        assert_int_equal(param_int(t, "examples"), t->fixture[0].rows);
        assert_int_equal(param_int(t, "heldout_lines"), t->fixture[1].rows);

        /* examples first, then >= 20 held-out lines never shown; some
         * held-out target is 1000 or more, grouped (the trap's miss) */
        struct note n = note_of(t);
        const json_t *cs = json_object_get(t->spec, "cases");
        size_t nho = 0, k, grouped = 0;
        json_t *c;
        json_array_foreach(cs, k, c) {
            bool ho = json_is_true(json_object_get(c, "heldout"));
            assert_true(ho == (k >= (size_t)t->fixture[0].rows));
            nho += ho;
            const char *text = json_string_value(json_object_get(c, "text"));
            for (const char *p = text; *p; p++)
                assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
            if (ho) {
                assert_null(strstr(t->prompt, text));
                size_t j;
                json_t *x;
                json_array_foreach(json_object_get(c, "expected"), j, x) {
                    const char *a = json_string_value(x) + strlen(n.marker);
                    const char *s = strchr(a, n.sep);
                    const char *dp = strchr(a, n.dec);
                    grouped += s && (!dp || s < dp);
                }
            } else if (!strchr(text, '"')) {
                assert_non_null(strstr(t->prompt, text));
            }
        }
        assert_true(nho >= 20);
        assert_true(grouped >= 1);

        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_null(strstr(t->prompt, ".heldout.csv"));
        assert_non_null(strstr(t->prompt, param_str(t, "format")));
        assert_non_null(strstr(t->prompt, "re.finditer(pattern, line)"));
        assert_true(t->difficulty >= 1 && t->difficulty <= 5);

        golds[i] = strdup(t->gold);
        json_object_set_new(markers, n.marker, json_true());
        char pair[3] = {n.sep, n.dec, 0};
        json_object_set_new(pairs, pair, json_true());
        rules[n.cents_opt * 2 + n.group_opt]++;
        drawn_release(&d, false);
    }
    for (int i = 0; i < N_TASKS; i++)
        for (int j = i + 1; j < N_TASKS; j++)
            if (strcmp(golds[i], golds[j]) == 0)
                fail_msg("tasks %d and %d share the gold '%s'", i, j, golds[i]);
    assert_true(json_object_size(markers) >= 6);
    assert_int_equal(json_object_size(pairs), 6);
    for (int k = 0; k < 4; k++)
        assert_true(rules[k] > 0);
    for (int i = 0; i < N_TASKS; i++)
        free(golds[i]);
    json_decref(markers);
    json_decref(pairs);
    vat_test_rmtree(dir);
    free(dir);
}

/* The first 192 tasks walk every notation once: no gold repeats. */
static void test_notation_space(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxamt");
    json_t *seen = json_object();
    for (uint32_t i = 0; i < 192; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        if (json_object_get(seen, d.t.gold))
            fail_msg("task %u repeats the gold '%s'", i, d.t.gold);
        json_object_set_new(seen, d.t.gold, json_true());
        drawn_release(&d, false);
    }
    assert_int_equal(json_object_size(seen), 192);
    json_decref(seen);
    vat_test_rmtree(dir);
    free(dir);
}

/* ---- determinism ------------------------------------------------------------ */

static char *fixture_bytes(const struct vat_task *t, int k)
{
    char *p = vat_path_join(t->root, t->fixture[k].path);
    char *s = vat_test_read_file(p, NULL);
    free(p);
    assert_non_null(s);
    return s;
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 4; i++) {
        struct drawn a, b, c;
        draw(&a, i * 9, SEED, NULL);
        draw(&b, i * 9, SEED, NULL);
        draw(&c, i * 9, SEED + 1, NULL);
        assert_string_equal(a.t.prompt, b.t.prompt);
        assert_string_equal(a.t.gold, b.t.gold);
        assert_string_equal(a.t.trap, b.t.trap);
        char *sa = vat_json_dumps(a.t.spec), *sb = vat_json_dumps(b.t.spec);
        assert_string_equal(sa, sb);
        free(sa);
        free(sb);
        for (int k = 0; k < 2; k++) {
            char *fa = fixture_bytes(&a.t, k), *fb = fixture_bytes(&b.t, k),
                 *fc = fixture_bytes(&c.t, k);
            assert_string_equal(fa, fb);
            assert_string_equal(a.t.fixture[k].sha256, b.t.fixture[k].sha256);
            assert_string_not_equal(fa, fc);
            free(fa);
            free(fb);
            free(fc);
        }
        drawn_release(&a, true);
        drawn_release(&b, true);
        drawn_release(&c, true);
    }
}

/* The held-out lines come from their own stream: more or fewer examples
 * leave them as they were, and a redraw changes them. */
static void test_heldout_stream_is_separate(void **state)
{
    (void)state;
    struct drawn d;
    draw(&d, 6, SEED, NULL);
    char *ho0 = fixture_bytes(&d.t, 1);
    for (int nex = 3; nex <= 5; nex += 2) {
        json_object_set_new(d.cfg, "examples_min", json_integer(nex));
        json_object_set_new(d.cfg, "examples_max", json_integer(nex));
        struct vat_draw_opts o = {SEED, d.cfg, 6000};
        struct vat_err e = {{0}};
        assert_int_equal(vat_task_draw(&d.t, 0, &o, &d.r, &e), 0);
        assert_int_equal(d.t.fixture[0].rows, nex);
        char *ho = fixture_bytes(&d.t, 1);
        assert_string_equal(ho, ho0);
        free(ho);
    }
    struct vat_draw_opts o = {SEED, d.cfg, 6000};
    struct vat_err e = {{0}};
    assert_int_equal(vat_task_draw(&d.t, 1, &o, &d.r, &e), 0);
    char *ho1 = fixture_bytes(&d.t, 1);
    assert_string_not_equal(ho0, ho1);
    free(ho0);
    free(ho1);
    drawn_release(&d, true);
}

/* ---- the trap, the rules, spellings and near misses ------------------------ */

static void test_trap_fails_on_heldout(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 16; i++) {
        struct drawn d;
        draw(&d, i * 3, SEED, NULL);
        json_t *full = d.t.spec, *ho = heldout_only(full);
        d.t.spec = ho;
        struct vat_verdict v = check(&d.t, d.t.trap);
        assert_true(v.gate_passed);
        assert_true(v.score == 0.0);
        assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
        assert_non_null(strstr(v.reason, "(held-out)"));
        v = check(&d.t, d.t.gold);
        assert_true(v.score == 1.0);
        d.t.spec = full;
        json_decref(ho);
        drawn_release(&d, true);
    }
}

/* Writes tpl into out in the task's notation: '@' is the marker, '^' the
 * thousands separator, '|' the decimal separator. */
static void in_notation(char *out, size_t cap, const char *tpl, const struct note *n)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (const char *p = tpl; *p; p++) {
        if (*p == '@')
            vat_buf_puts(&b, n->marker);
        else if (*p == '^')
            vat_buf_putc(&b, n->sep);
        else if (*p == '|')
            vat_buf_putc(&b, n->dec);
        else
            vat_buf_putc(&b, *p);
    }
    snprintf(out, cap, "%s", b.data ? b.data : "");
    vat_buf_release(&b);
}

/* When a hand-made amount counts. */
enum when { ALWAYS, CENTS_OPT, GROUP_OPT, BOTH_OPT, NEVER };

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
        {"(@1^000|00) -@5|00", "@1^000|00\n@5|00", ALWAYS},
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
                     (rows[k].when == BOTH_OPT && n.cents_opt && n.group_opt);
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
    N_MUTS
};

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
    put_marker(&b, n.marker, style);
    vat_buf_puts(&b, "(?:0|");
    if (m == MUT_LEADING_ZERO)
        vat_buf_printf(&b, "%s{1,3}", d);
    else
        vat_buf_printf(&b, "[1-9]%s{0,%d}", d, m == MUT_LEAD_LOOSE ? 3 : 2);
    vat_buf_printf(&b, "(?:%s%s{%s})*", s, d, m == MUT_GROUP_LOOSE ? "2,4" : "3");
    if (group_opt)
        vat_buf_printf(&b, "|%s%s*", m == MUT_LEADING_ZERO ? d : "[1-9]", d);
    vat_buf_puts(&b, ")");
    vat_buf_printf(&b, cents_opt ? "(?:%s%s{%s})?" : "%s%s{%s}", dc, d,
                   m == MUT_CENTS_LOOSE ? "1,2" : "2");
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

static void spellings_and_near_misses(struct drawn *d)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(&d->t, style, MUT_NONE);
        struct vat_verdict v = check(&d->t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", d->t.id, p, v.score, v.reason);
        free(p);
    }
    char *wrapped = vat_xasprintf("(?:%s)", d->t.gold);
    struct vat_verdict v = check(&d->t, wrapped);
    assert_true(v.gate_passed && v.score == 1.0);
    free(wrapped);

    static const char *const names[N_MUTS] = {
        "none",          "no lookbehind",   "no lookahead",    "lookahead: word only",
        "lookahead: separator only", "cents {1,2}", "groups {2,4}", "lead {0,3}",
        "leading zero",  "cents rule flipped", "grouping rule flipped"};
    json_t *full = d->t.spec, *ho = heldout_only(full);
    for (int m = MUT_NONE + 1; m < N_MUTS; m++) {
        char *p = spell(&d->t, m % 2, (enum mut)m);
        d->t.spec = full;
        struct vat_verdict va = check(&d->t, p);
        d->t.spec = ho;
        struct vat_verdict vh = check(&d->t, p);
        d->t.spec = full;
        if (!(va.gate_passed && va.score == 0.0 && vh.gate_passed && vh.score == 0.0))
            fail_msg("%s: near miss '%s' (%s) not killed by held-out lines: %g/%g", d->t.id, p,
                     names[m], va.score, vh.score);
        free(p);
    }
    /* the naive trap with both guards is still wrong: it stops at the
     * first thousands separator and then refuses the rest */
    char *guarded = vat_xasprintf("(?<!\\w)%s(?!\\w|[.,]\\d)", d->t.trap);
    d->t.spec = ho;
    v = check(&d->t, guarded);
    d->t.spec = full;
    assert_true(v.gate_passed && v.score == 0.0);
    free(guarded);
    json_decref(ho);
}

static void test_rules_spellings_near_misses(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxamt");
    for (uint32_t i = 0; i < 48; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        rules_hold(&d.t);
        spellings_and_near_misses(&d);
        drawn_release(&d, false);
    }
    vat_test_rmtree(dir);
    free(dir);
}

/* ---- mutants ------------------------------------------------------------------ */

/* Gold mutants of the kinds the strength report scores: a lookaround or
 * \b dropped, a quantifier widened, a class replaced with \d, \w or ".".
 * Written here for the patterns this template emits (no nested classes,
 * no escapes inside classes). */
static void add_mutant(json_t *out, const char *pat, size_t at, size_t len, const char *with)
{
    char *m = vat_xasprintf("%.*s%s%s", (int)at, pat, with, pat + at + len);
    if (strcmp(m, pat) != 0)
        json_array_append_new(out, json_string(m));
    free(m);
}

static json_t *mutants_of(const char *pat)
{
    json_t *out = json_array();
    size_t n = strlen(pat);
    for (size_t i = 0; i < n;) {
        const char *p = pat + i;
        if (strncmp(p, "(?<!", 4) == 0 || strncmp(p, "(?<=", 4) == 0 ||
            strncmp(p, "(?!", 3) == 0 || strncmp(p, "(?=", 3) == 0) {
            int depth = 0;
            size_t j = i;
            for (; j < n; j++) {
                if (pat[j] == '\\') {
                    j++;
                    continue;
                }
                if (pat[j] == '[')
                    while (j < n && pat[j] != ']')
                        j++;
                if (pat[j] == '(')
                    depth++;
                if (pat[j] == ')' && --depth == 0)
                    break;
            }
            add_mutant(out, pat, i, j + 1 - i, "");
            i += strncmp(p, "(?<", 3) == 0 ? 4 : 3;
            continue;
        }
        if (strncmp(p, "(?:", 3) == 0) {
            i += 3;
            continue;
        }
        if (p[0] == '\\' && p[1] == 'b') {
            add_mutant(out, pat, i, 2, "");
            i += 2;
            continue;
        }
        size_t atom = 0;
        if (p[0] == '\\' && (p[1] == 'd' || p[1] == 'w'))
            atom = 2;
        else if (p[0] == '[')
            atom = (size_t)(strchr(p, ']') - p) + 1;
        if (atom) {
            static const char *const cls[] = {"\\d", "\\w", "."};
            for (int k = 0; k < 3; k++)
                if (strlen(cls[k]) != atom || strncmp(p, cls[k], atom) != 0)
                    add_mutant(out, pat, i, atom, cls[k]);
            i += atom;
            continue;
        }
        if (p[0] == '{') {
            int a, b, used = 0;
            size_t len = (size_t)(strchr(p, '}') - p) + 1;
            char w1[32], w2[8];
            if (sscanf(p, "{%d,%d}%n", &a, &b, &used) == 2 && used > 0) {
                snprintf(w1, sizeof w1, "{%d,%d}", a, b + 1);
                snprintf(w2, sizeof w2, "%s", a == 0 ? "*" : "+");
            } else {
                sscanf(p, "{%d}", &a);
                snprintf(w1, sizeof w1, "{%d,%d}", a > 0 ? a - 1 : 0, a + 1);
                snprintf(w2, sizeof w2, "+");
            }
            add_mutant(out, pat, i, len, w1);
            add_mutant(out, pat, i, len, w2);
            i += len;
            continue;
        }
        if (p[0] == '?' || p[0] == '+') {
            add_mutant(out, pat, i, 1, "*");
            i++;
            continue;
        }
        i += p[0] == '\\' ? 2 : 1;
    }
    return out;
}

/* Returns true if the mutant extracts exactly the expected list from
 * every case (a survivor); false if some case tells it apart.  *bad is set
 * when the mutant does not compile (it then neither survives nor counts). */
static bool survives(const struct vat_task *t, const char *m, bool *bad)
{
    size_t k;
    json_t *c;
    *bad = false;
    json_array_foreach(json_object_get(t->spec, "cases"), k, c) {
        struct vat_verdict v;
        const char *text = json_string_value(json_object_get(c, "text"));
        json_t *got = vat_regex_extract(t->spec, m, strlen(m), text, &v);
        if (!got) {
            *bad = true;
            return false;
        }
        bool same = json_equal(got, json_object_get(c, "expected"));
        json_decref(got);
        if (!same)
            return false;
    }
    return true;
}

static void test_mutants_killed(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxamt");
    size_t total = 0, killed = 0;
    char example[256] = "";
    for (uint32_t i = 0; i < N_TASKS; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        json_t *ms = mutants_of(d.t.gold);
        assert_true(json_array_size(ms) >= 20);
        size_t k;
        json_t *m;
        json_array_foreach(ms, k, m) {
            bool bad;
            bool s = survives(&d.t, json_string_value(m), &bad);
            if (bad)
                continue;
            total++;
            if (!s)
                killed++;
            else if (!example[0])
                snprintf(example, sizeof example, "%s: %s", d.t.id, json_string_value(m));
        }
        json_decref(ms);
        drawn_release(&d, false);
    }
    print_message("regex_amounts: %zu of %zu gold mutants killed%s%s\n", killed, total,
                  example[0] ? "; a survivor: " : "", example);
    assert_true(total > 0);
    if (killed * 100 < total * 98)
        fail_msg("only %zu of %zu mutants killed (e.g. %s)", killed, total, example);
    vat_test_rmtree(dir);
    free(dir);
}

/* ---- confirm catches disagreement ------------------------------------------ */

static void test_confirm_catches_tampering(void **state)
{
    (void)state;
    struct drawn d;
    draw(&d, 17, SEED, NULL);
    struct vat_err e = {{0}};
    assert_int_equal(TMPL->confirm(&d.t, &e), 0);

    json_t *c = json_array_get(json_object_get(d.t.spec, "cases"), 9);
    json_array_append_new(json_object_get(c, "expected"), json_string("$1.00"));
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "held-out line"));

    struct vat_csv csv = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    char *old = csv.row[4].cell[1];
    csv.row[4].cell[1] = vat_xasprintf("%s ok", old);
    free(old);
    assert_int_equal(vat_csv_write(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    vat_csv_release(&csv);
    free(d.t.gold);
    d.t.gold = NULL;
    assert_int_equal(TMPL->reference(&d.t, &e), 0);
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "reads back"));

    json_object_set_new(d.t.params, "decimal_separator", json_string(";"));
    assert_int_equal(TMPL->reference(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "separators"));
    drawn_release(&d, true);
}

/* ---- parity with Python's re ------------------------------------------------- */

static bool have_python(void)
{
    return system("python3 -c 'import re, json' >/dev/null 2>&1") == 0;
}

static void test_python_agrees(void **state)
{
    (void)state;
    if (!have_python())
        skip();
    char *dir = vat_test_tmpdir("rxamt-py");
    char *in = vat_xasprintf("%s/in.json", dir), *script = vat_xasprintf("%s/rx.py", dir);
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fputs("import json, re, sys\n"
          "jobs = json.load(open(sys.argv[1]))\n"
          "out = [[[m.group(0) for m in re.finditer(j['p'], s)] for s in j['lines']]"
          " for j in jobs]\n"
          "print(json.dumps(out))\n",
          f);
    fclose(f);

    json_t *jobs = json_array();
    struct drawn d[10];
    for (uint32_t i = 0; i < 10; i++) {
        draw(&d[i], i * 7 + 1, SEED, NULL);
        json_t *lines = json_array();
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(d[i].t.spec, "cases"), k, c)
            json_array_append(lines, json_object_get(c, "text"));
        for (int role = 0; role < 2; role++) {
            json_t *j = json_object();
            json_object_set_new(j, "p", json_string(role ? d[i].t.trap : d[i].t.gold));
            json_object_set(j, "lines", lines);
            json_array_append_new(jobs, j);
        }
        json_decref(lines);
    }
    assert_int_equal(json_dump_file(jobs, in, 0), 0);
    char *cmd = vat_xasprintf("python3 '%s' '%s'", script, in);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        vat_buf_putn(&b, chunk, got);
    assert_int_equal(pclose(p), 0);
    json_error_t err;
    json_t *out = json_loads(b.data ? b.data : "", 0, &err);
    assert_non_null(out);
    assert_int_equal(json_array_size(out), 20);

    for (uint32_t i = 0; i < 10; i++) {
        const json_t *cases = json_object_get(d[i].t.spec, "cases");
        for (int role = 0; role < 2; role++) {
            const char *pat = role ? d[i].t.trap : d[i].t.gold;
            const json_t *py = json_array_get(out, 2 * i + (size_t)role);
            size_t k;
            json_t *c;
            json_array_foreach(cases, k, c) {
                const char *text = json_string_value(json_object_get(c, "text"));
                json_t *ours = extract(&d[i].t, pat, text);
                if (!json_equal(ours, json_array_get(py, k)))
                    fail_msg("'%s' on '%s': python and vat disagree", pat, text);
                if (role == 0 && !json_equal(json_object_get(c, "expected"), json_array_get(py, k)))
                    fail_msg("gold '%s' on '%s': python differs from expected", pat, text);
                json_decref(ours);
            }
        }
        drawn_release(&d[i], true);
    }
    json_decref(out);
    json_decref(jobs);
    vat_buf_release(&b);
    free(cmd);
    free(in);
    free(script);
    vat_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_notation_space),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_heldout_stream_is_separate),
        cmocka_unit_test(test_trap_fails_on_heldout),
        cmocka_unit_test(test_rules_spellings_near_misses),
        cmocka_unit_test(test_mutants_killed),
        cmocka_unit_test(test_confirm_catches_tampering),
        cmocka_unit_test(test_python_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
