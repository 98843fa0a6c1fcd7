/* test_regex_order_ids.c — the regex_order_ids template: admission of 60
 * tasks, byte-identical replays, distinct shapes, the trap failing on
 * held-out lines alone, the rules of the prompt on hand-made lines,
 * harmless spellings of gold passing and near misses failing, the share
 * of gold mutants the held-out lines kill, confirm catching tampered
 * fixtures and specs, and parity with Python's re. */
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

extern const struct vat_template vat_tmpl_regex_order_ids;
#define TMPL (&vat_tmpl_regex_order_ids)
#define SEED 20240612u
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
    d->dir = dir ? strdup(dir) : vat_test_tmpdir("rxids");
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

/* ---- admission ------------------------------------------------------------ */

static void test_sixty_tasks_admit(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxids");
    char *golds[N_TASKS];
    json_t *prefixes = json_object(), *seps = json_object();
    int digits[9] = {0}, cases[2] = {0};
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

        /* examples first, then >= 20 held-out lines never shown */
        const json_t *cs = json_object_get(t->spec, "cases");
        size_t nho = 0, k, targets = 0;
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
                targets += json_array_size(json_object_get(c, "expected"));
            } else if (!strchr(text, '"')) {
                assert_non_null(strstr(t->prompt, text));
            }
        }
        assert_true(nho >= 20);
        assert_true(targets >= 3);

        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_null(strstr(t->prompt, ".heldout.csv"));
        assert_non_null(strstr(t->prompt, param_str(t, "shape")));
        assert_non_null(strstr(t->prompt, "re.finditer(pattern, line)"));
        assert_true(t->difficulty >= 1 && t->difficulty <= 5);

        golds[i] = strdup(t->gold);
        json_object_set_new(prefixes, param_str(t, "prefix"), json_true());
        json_object_set_new(seps, param_str(t, "separator"), json_true());
        long nd = param_int(t, "digits");
        assert_true(nd >= 5 && nd <= 8);
        digits[nd]++;
        cases[any_case(t)]++;
        drawn_release(&d, false);
    }
    for (int i = 0; i < N_TASKS; i++)
        for (int j = i + 1; j < N_TASKS; j++)
            if (strcmp(golds[i], golds[j]) == 0)
                fail_msg("tasks %d and %d share the gold '%s'", i, j, golds[i]);
    assert_true(json_object_size(prefixes) >= 6);
    assert_int_equal(json_object_size(seps), 4);
    for (int k = 5; k <= 8; k++)
        assert_true(digits[k] > 0);
    assert_true(cases[0] > 0 && cases[1] > 0);
    for (int i = 0; i < N_TASKS; i++)
        free(golds[i]);
    json_decref(prefixes);
    json_decref(seps);
    vat_test_rmtree(dir);
    free(dir);
}

/* The first 256 tasks walk every shape once: no gold repeats. */
static void test_shape_space(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxids");
    json_t *seen = json_object();
    for (uint32_t i = 0; i < 256; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        if (json_object_get(seen, d.t.gold))
            fail_msg("task %u repeats the gold '%s'", i, d.t.gold);
        json_object_set_new(seen, d.t.gold, json_true());
        drawn_release(&d, false);
    }
    assert_int_equal(json_object_size(seen), 256);
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
    draw(&d, 5, SEED, NULL);
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
        /* the trap is the gold without its boundaries */
        assert_true(strncmp(d.t.gold, "\\b", 2) == 0);
        assert_non_null(strstr(d.t.gold, d.t.trap));
        d.t.spec = full;
        json_decref(ho);
        drawn_release(&d, true);
    }
}

/* The id of a task's shape with prefix text pre, separator sep ("" for
 * none) and nd digits, into out. */
static void id_of(char *out, size_t cap, const char *pre, const char *sep, int nd)
{
    static const char digits[] = "40718293651234";
    snprintf(out, cap, "%s%s%.*s", pre, sep, nd, digits);
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
    int nd = (int)param_int(t, "digits");
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
        {pre, sep, nd, 1},        {pre, sep, nd - 1, 0}, {pre, sep, nd + 1, 0},
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
    int nd = (int)param_int(t, "digits");
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, style == 0 ? "(?<![A-Za-z0-9_])" : "(?<!\\w)");
    if (any_case(t))
        vat_buf_printf(&b, "(?i:%s)", pre);
    else
        vat_buf_puts(&b, pre);
    if (*sep)
        vat_buf_printf(&b, "%s%s", *sep == '#' || *sep == '-' ? "\\" : "", sep);
    if (style == 0)
        vat_buf_printf(&b, "[0-9]{%d}", nd);
    else
        for (int i = 0; i < nd; i++)
            vat_buf_puts(&b, "\\d");
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
    N_MUTS
};

static char *near_miss(const struct vat_task *t, enum mut m)
{
    const char *pre = param_str(t, "prefix"), *sep = param_str(t, "separator");
    int nd = (int)param_int(t, "digits");
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
    else if (*sep)
        vat_buf_printf(&b, "[%s]", sep);
    if (m == MUT_DIGITS_RANGE)
        vat_buf_printf(&b, "\\d{%d,%d}", nd - 1, nd + 1);
    else if (m == MUT_DIGITS_PLUS)
        vat_buf_puts(&b, "\\d+");
    else if (m == MUT_DIGITS_WORD)
        vat_buf_printf(&b, "\\w{%d}", nd);
    else
        vat_buf_printf(&b, "\\d{%d}", nd);
    if (m != MUT_NO_AFTER)
        vat_buf_puts(&b, "\\b");
    return vat_buf_detach(&b);
}

static void spellings_and_near_misses(struct drawn *d)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(&d->t, style);
        struct vat_verdict v = check(&d->t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", d->t.id, p, v.score, v.reason);
        free(p);
    }
    char *wrapped = vat_xasprintf("(?:%s)", d->t.gold);
    struct vat_verdict v = check(&d->t, wrapped);
    assert_true(v.gate_passed && v.score == 1.0);
    free(wrapped);

    static const char *const names[N_MUTS] = {"no leading boundary", "no trailing boundary",
                                              "digits n-1..n+1",     "digits +",
                                              "\\w for digits",      "case rule flipped",
                                              "any separator"};
    json_t *full = d->t.spec, *ho = heldout_only(full);
    for (int m = 0; m < N_MUTS; m++) {
        char *p = near_miss(&d->t, (enum mut)m);
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
    json_decref(ho);
}

static void test_rules_spellings_near_misses(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxids");
    for (uint32_t i = 0; i < 40; i++) {
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
    char *dir = vat_test_tmpdir("rxids");
    size_t total = 0, killed = 0;
    char example[256] = "";
    for (uint32_t i = 0; i < N_TASKS; i++) {
        struct drawn d;
        draw(&d, i, SEED, dir);
        json_t *ms = mutants_of(d.t.gold);
        assert_true(json_array_size(ms) >= 6);
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
    print_message("regex_order_ids: %zu of %zu gold mutants killed%s%s\n", killed, total,
                  example[0] ? "; a survivor: " : "", example);
    /* every mutant of this template changes what the pattern accepts on
     * some planted decoy kind, so the held-out lines kill them all */
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
    draw(&d, 13, SEED, NULL);
    struct vat_err e = {{0}};
    assert_int_equal(TMPL->confirm(&d.t, &e), 0);

    json_t *c = json_array_get(json_object_get(d.t.spec, "cases"), 8);
    json_array_append_new(json_object_get(c, "expected"), json_string("ORD-000000"));
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "held-out line"));

    /* a held-out line changed on disk: reference reads it back, confirm
     * sees the planted line differ */
    struct vat_csv csv = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    char *old = csv.row[3].cell[1];
    csv.row[3].cell[1] = vat_xasprintf("%s ok", old);
    free(old);
    assert_int_equal(vat_csv_write(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    vat_csv_release(&csv);
    free(d.t.gold);
    d.t.gold = NULL;
    assert_int_equal(TMPL->reference(&d.t, &e), 0);
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "reads back"));

    /* params that no longer name a shape are refused by reference */
    json_object_set_new(d.t.params, "prefix", json_string("ZZZ"));
    assert_int_equal(TMPL->reference(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "ZZZ"));
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
    char *dir = vat_test_tmpdir("rxids-py");
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
        cmocka_unit_test(test_shape_space),
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
