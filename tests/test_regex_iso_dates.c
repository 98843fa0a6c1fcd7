/* test_regex_iso_dates.c — the regex_iso_dates template and the shared
 * regex machinery it uses (generators/regexgen.c): admission of 60 tasks,
 * byte-identical replays, distinct notations, the trap failing on held-out
 * lines alone, harmless spellings of gold passing and near misses failing,
 * confirm catching tampered fixtures and specs, parity with Python's re,
 * and the regexgen pieces (line fixtures, plans, frames, prompt inlining). */
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

extern const struct vat_template vat_tmpl_regex_iso_dates;
#define TMPL (&vat_tmpl_regex_iso_dates)
#define SEED 20240611u
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
    d->dir = dir ? strdup(dir) : vat_test_tmpdir("rxdates");
    d->cfg = vat_template_default_params(TMPL);
    struct vat_draw_opts o = {seed, d->cfg, 6000};
    struct vat_err e = {{0}};
    vat_task_init(&d->t, TMPL, index, d->dir);
    int rc = vat_task_draw(&d->t, 0, &o, &d->r, &e);
    if (rc != 0)
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
};

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
    char s[8];
    if (m == MUT_ANY_SEP)
        snprintf(s, sizeof s, "[-/.]");
    else if (style)
        snprintf(s, sizeof s, "[%s]", sep);
    else
        snprintf(s, sizeof s, "%s%s", sep[0] == '/' ? "" : "\\", sep);
    bool before = m != MUT_NO_GUARDS && m != MUT_NO_BEFORE;
    bool after = m != MUT_NO_GUARDS && m != MUT_NO_AFTER;
    struct vat_buf b = VAT_BUF_INIT;
    if (before)
        vat_buf_puts(&b, style ? "(?<!\\d)" : "(?<![0-9])");
    for (int i = 0; i < 3; i++) {
        vat_buf_puts(&b, order[i] == 'Y' ? y : order[i] == 'M' ? mo : dd);
        if (i < 2)
            vat_buf_puts(&b, s);
    }
    if (after)
        vat_buf_puts(&b, style ? "(?!\\d)" : "(?![0-9])");
    return vat_buf_detach(&b);
}

/* ---- admission ------------------------------------------------------------ */

static void test_sixty_tasks_admit(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxdates");
    char *golds[N_TASKS];
    int seps[3] = {0}, orders[4] = {0};
    json_t *years = json_object();
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

        /* fixtures: examples (main) and held-out lines (variant) */
        assert_int_equal(t->n_fixtures, 2);
        assert_string_equal(t->fixture[0].role, "main");
        assert_string_equal(t->fixture[1].role, "variant");
        assert_string_equal(t->fixture[0].format, "csv");
        assert_non_null(strstr(t->fixture[1].path, ".heldout.csv"));
        assert_int_equal(json_array_size(t->fixture[0].columns), 2);
        assert_true(t->fixture[0].rows >= 3 && t->fixture[0].rows <= 5);
        assert_true(t->fixture[1].rows >= 24 && t->fixture[1].rows <= 32);
        assert_int_equal(param_int(t, "examples"), t->fixture[0].rows);
        assert_int_equal(param_int(t, "heldout_lines"), t->fixture[1].rows);

        /* cases: examples first, then >= 20 held-out lines */
        const json_t *cases = json_object_get(t->spec, "cases");
        size_t n = json_array_size(cases), nho = 0, i2;
        json_t *c;
        assert_int_equal(n, (size_t)(t->fixture[0].rows + t->fixture[1].rows));
        json_array_foreach(cases, i2, c) {
            bool ho = json_is_true(json_object_get(c, "heldout"));
            assert_true(ho == (i2 >= (size_t)t->fixture[0].rows));
            nho += ho;
            const char *text = json_string_value(json_object_get(c, "text"));
            for (const char *p = text; *p; p++)
                assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
            /* the prompt never shows a held-out line */
            if (ho)
                assert_null(strstr(t->prompt, text));
            else if (!strchr(text, '"')) /* CSV doubles quotes in the inlined file */
                assert_non_null(strstr(t->prompt, text));
        }
        assert_true(nho >= 20);

        /* the prompt names the example file, never the held-out one */
        assert_non_null(strstr(t->prompt, t->fixture[0].path));
        assert_null(strstr(t->prompt, ".heldout.csv"));
        assert_non_null(strstr(t->prompt, param_str(t, "format")));
        assert_non_null(strstr(t->prompt, "re.finditer(pattern, line)"));
        assert_true(t->difficulty >= 1 && t->difficulty <= 5);

        golds[i] = strdup(t->gold);
        const char *sep = param_str(t, "separator"), *ord = param_str(t, "order");
        seps[strchr("-/.", sep[0]) - "-/."]++;
        for (int k = 0; k < 4; k++)
            if (strcmp(ord, (const char *[]){"YMD", "DMY", "MDY", "YDM"}[k]) == 0)
                orders[k]++;
        char yk[32];
        snprintf(yk, sizeof yk, "%ld-%ld", param_int(t, "year_min"), param_int(t, "year_max"));
        json_object_set_new(years, yk, json_true());
        drawn_release(&d, false);
    }
    /* No two of the 60 tasks share a gold pattern, and every separator,
     * order and year rule is drawn. */
    for (int i = 0; i < N_TASKS; i++)
        for (int j = i + 1; j < N_TASKS; j++)
            if (strcmp(golds[i], golds[j]) == 0)
                fail_msg("tasks %d and %d share the gold '%s'", i, j, golds[i]);
    for (int k = 0; k < 3; k++)
        assert_true(seps[k] > 0);
    for (int k = 0; k < 4; k++)
        assert_true(orders[k] > 0);
    assert_true(json_object_size(years) >= 8);
    for (int i = 0; i < N_TASKS; i++)
        free(golds[i]);
    json_decref(years);
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
        draw(&a, i * 7, SEED, NULL);
        draw(&b, i * 7, SEED, NULL);
        draw(&c, i * 7, SEED + 1, NULL);
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

/* The held-out lines come from their own stream: they never repeat an
 * example line, and a redraw (attempt 1) changes them. */
static void test_heldout_stream_is_separate(void **state)
{
    (void)state;
    struct drawn d;
    draw(&d, 3, SEED, NULL);
    const json_t *cases = json_object_get(d.t.spec, "cases");
    for (size_t i = 0; i < json_array_size(cases); i++)
        for (size_t j = i + 1; j < json_array_size(cases); j++)
            assert_string_not_equal(
                json_string_value(json_object_get(json_array_get(cases, i), "text")),
                json_string_value(json_object_get(json_array_get(cases, j), "text")));
    char *ho0 = fixture_bytes(&d.t, 1);

    /* fewer or more examples drawn from the task stream leave the
     * held-out lines as they were */
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

/* ---- the checker on this template's tasks ---------------------------------- */

/* Returns true if reason names a held-out case of t->spec that pattern
 * extracts differently ("case N (held-out) \"...window...\": ..."), and
 * the quoted window is a piece of that case's text. */
static bool reason_names_heldout_miss(const struct vat_task *t, const char *pattern,
                                      const char *reason)
{
    size_t idx;
    int used = 0;
    if (sscanf(reason, "case %zu (held-out) %n", &idx, &used) != 1 || used == 0)
        return false;
    const json_t *c = json_array_get(json_object_get(t->spec, "cases"), idx);
    if (!c || !json_is_true(json_object_get(c, "heldout")))
        return false;
    const char *text = json_string_value(json_object_get(c, "text"));
    struct vat_verdict v;
    json_t *got = vat_regex_extract(t->spec, pattern, strlen(pattern), text, &v);
    assert_non_null(got);
    bool differs = !json_equal(got, json_object_get(c, "expected"));
    json_decref(got);

    const char *q = reason + used;
    if (strncmp(q, "...", 3) == 0)
        q += 3;
    if (*q++ != '"')
        return false;
    char window[128];
    size_t k = 0;
    for (; *q && *q != '"' && k + 1 < sizeof window; q++) {
        if (*q == '\\' && q[1])
            q++;
        window[k++] = *q;
    }
    window[k] = 0;
    if (k >= 3 && strcmp(window + k - 3, "...") == 0)
        window[k - 3] = 0;
    return differs && window[0] && strstr(text, window) != NULL;
}

static void test_trap_fails_on_heldout(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 12; i++) {
        struct drawn d;
        draw(&d, i * 5, SEED, NULL);
        json_t *full = d.t.spec;
        json_t *ho = heldout_only(full);
        d.t.spec = ho;
        struct vat_verdict v = check(&d.t, d.t.trap);
        assert_true(v.gate_passed);
        assert_true(v.score == 0.0);
        assert_string_equal(v.code, VAT_WRONG_EXTRACTION);
        if (!reason_names_heldout_miss(&d.t, d.t.trap, v.reason))
            fail_msg("reason does not name a held-out line: %s", v.reason);
        /* gold still passes the hidden lines alone */
        v = check(&d.t, d.t.gold);
        assert_true(v.score == 1.0);
        d.t.spec = full;
        json_decref(ho);
        drawn_release(&d, true);
    }
}

static void harmless(struct drawn *d)
{
    for (int style = 0; style < 2; style++) {
        char *p = spell(&d->t, style, MUT_NONE);
        assert_non_null(p);
        assert_string_not_equal(p, d->t.gold);
        struct vat_verdict v = check(&d->t, p);
        if (!(v.gate_passed && v.score == 1.0))
            fail_msg("%s: harmless '%s' scored %g: %s", d->t.id, p, v.score, v.reason);
        free(p);
    }
    /* the gold inside a redundant group is the same pattern */
    char *wrapped = vat_xasprintf("(?:%s)", d->t.gold);
    struct vat_verdict v = check(&d->t, wrapped);
    assert_true(v.gate_passed && v.score == 1.0);
    free(wrapped);
}

static void near_misses(struct drawn *d)
{
    static const enum mut muts[] = {MUT_NO_GUARDS,   MUT_NO_BEFORE, MUT_NO_AFTER, MUT_MONTH_LOOSE,
                                    MUT_DAY_LOOSE,   MUT_ANY_SEP,   MUT_ANY_YEAR};
    static const char *const names[] = {"no guards", "no lookbehind", "no lookahead",
                                        "month [01]d", "day [0-3]d", "any separator",
                                        "any year"};
    bool any_year = param_int(&d->t, "year_min") == 0 && param_int(&d->t, "year_max") == 9999;
    json_t *full = d->t.spec, *ho = heldout_only(full);
    for (size_t k = 0; k < sizeof muts / sizeof muts[0]; k++) {
        if (muts[k] == MUT_ANY_YEAR && any_year)
            continue;
        char *p = spell(&d->t, (int)(k % 2), muts[k]);
        assert_non_null(p);
        d->t.spec = full;
        struct vat_verdict v = check(&d->t, p);
        d->t.spec = ho;
        struct vat_verdict vh = check(&d->t, p);
        if (!(v.gate_passed && v.score == 0.0 && vh.gate_passed && vh.score == 0.0))
            fail_msg("%s: near miss '%s' (%s) not killed by held-out lines: %g/%g", d->t.id, p,
                     names[k], v.score, vh.score);
        free(p);
    }
    /* the naive trap with guards added is still wrong (month 13, day 00) */
    d->t.spec = full;
    char *guarded = vat_xasprintf("(?<!\\d)%s(?!\\d)", d->t.trap);
    struct vat_verdict v = check(&d->t, guarded);
    assert_true(v.gate_passed && v.score == 0.0);
    free(guarded);
    json_decref(ho);
}

/* The gold's year part accepts exactly the stated years: every year
 * 0000..9999 written in the task's notation (month 07, day 19) is
 * extracted if and only if it lies in year_min..year_max. */
static void years_exact(struct drawn *d)
{
    const char *order = param_str(&d->t, "order"), *sep = param_str(&d->t, "separator");
    long ymin = param_int(&d->t, "year_min"), ymax = param_int(&d->t, "year_max");
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
        json_t *got = vat_regex_extract(d->t.spec, d->t.gold, strlen(d->t.gold), text.data, &v);
        assert_non_null(got);
        if (!json_equal(got, want))
            fail_msg("%s: gold '%s' takes %zu of years %d..%d, want %zu", d->t.id, d->t.gold,
                     json_array_size(got), from, from + 2499, json_array_size(want));
        json_decref(got);
        json_decref(want);
        vat_buf_release(&text);
    }
}

/* One task of every year rule (the first N_FORMATS indexes hold every
 * notation): the year part is exact, harmless spellings of gold pass and
 * near misses are killed by the held-out lines alone. */
static void test_every_year_rule(void **state)
{
    (void)state;
    json_t *seen = json_object();
    for (uint32_t i = 0; i < 432 && json_object_size(seen) < 36; i++) {
        struct drawn d;
        draw(&d, i, SEED, NULL);
        char key[32];
        snprintf(key, sizeof key, "%ld-%ld", param_int(&d.t, "year_min"),
                 param_int(&d.t, "year_max"));
        if (!json_object_get(seen, key)) {
            json_object_set_new(seen, key, json_true());
            years_exact(&d);
            harmless(&d);
            near_misses(&d);
        }
        drawn_release(&d, true);
    }
    assert_int_equal(json_object_size(seen), 36);
    assert_non_null(json_object_get(seen, "0-9999"));
    assert_non_null(json_object_get(seen, "1950-2049"));
    json_decref(seen);
}

/* ---- confirm catches disagreement ------------------------------------------ */

static void test_confirm_catches_tampering(void **state)
{
    (void)state;
    struct drawn d;
    draw(&d, 11, SEED, NULL);
    struct vat_err e = {{0}};
    assert_int_equal(TMPL->confirm(&d.t, &e), 0);

    /* a wrong expected list in the spec */
    json_t *c = json_array_get(json_object_get(d.t.spec, "cases"), 7);
    json_t *exp = json_object_get(c, "expected");
    json_array_append_new(exp, json_string("2024-01-01"));
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "held-out line"));

    /* a held-out fixture changed on disk: reference reads it back, confirm
     * sees the planted line differ */
    struct vat_csv csv = VAT_CSV_INIT;
    assert_int_equal(vat_csv_read(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    char *old = csv.row[2].cell[1];
    csv.row[2].cell[1] = vat_xasprintf("%s ok", old);
    free(old);
    assert_int_equal(vat_csv_write(&csv, d.t.root, d.t.fixture[1].path, &e), 0);
    vat_csv_release(&csv);
    free(d.t.gold);
    d.t.gold = NULL;
    assert_int_equal(TMPL->reference(&d.t, &e), 0);
    assert_int_equal(TMPL->confirm(&d.t, &e), -1);
    assert_non_null(strstr(e.msg, "reads back"));
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
    char *dir = vat_test_tmpdir("rxdates-py");
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
        draw(&d[i], i * 6 + 2, SEED, NULL);
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
                struct vat_verdict v;
                json_t *ours = vat_regex_extract(d[i].t.spec, pat, strlen(pat), text, &v);
                assert_non_null(ours);
                if (!json_equal(ours, json_array_get(py, k)))
                    fail_msg("'%s' on '%s': python and vat disagree", pat, text);
                /* and for gold, python agrees with the planted expectation */
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

/* ---- regexgen pieces --------------------------------------------------------- */

static void fill(struct vat_rx_builder *b, struct vat_rng *r, void *ctx)
{
    (void)r;
    int *k = ctx;
    if ((*k)++ % 2 == 0)
        vat_rx_target(b, "T1", 3);
    else
        vat_rx_decoy(b, "D1", 5);
}

static void test_regexgen_lines_roundtrip(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("rxgen");
    struct vat_rx_set s = VAT_RX_SET_INIT, back = VAT_RX_SET_INIT;
    struct vat_rx_builder b;
    struct vat_rng r;
    struct vat_err e = {{0}};
    vat_rng_seed(&r, 42, 54);
    vat_rx_begin(&b);
    int k = 0;
    assert_int_equal(vat_rx_expand(&b, &r, "a, \"quoted\" {slot} and {slot}; {time}", fill, &k,
                                   &e),
                     2);
    vat_rx_finish(&b, &s);
    assert_int_equal(vat_rx_expand(&b, &r, "{level} {svc} {user} {host} {ip} {ver} {id} {ms} "
                                           "{n} {pct}",
                                   fill, &k, &e),
                     0);
    vat_rx_finish(&b, &s);
    assert_int_equal(vat_rx_expand(&b, &r, "bad {nope}", fill, &k, &e), -1);
    assert_non_null(strstr(e.msg, "{nope}"));
    vat_rx_builder_release(&b);

    assert_int_equal(s.n, 2);
    assert_int_equal(json_array_size(s.line[0].expected), 1);
    assert_string_equal(json_string_value(json_array_get(s.line[0].expected, 0)), "T1");
    assert_int_equal(s.line[0].kinds, (1u << 3) | (1u << 5));
    assert_int_equal(vat_rx_set_kinds(&s), (1u << 3) | (1u << 5));
    assert_int_equal(json_array_size(s.line[1].expected), 0);
    assert_int_equal(vat_rx_frame_slots("{slot}x{slot}{time}"), 2);

    assert_int_equal(vat_rx_write_lines(&s, "h", dir, "fx/lines.csv", &e), 0);
    char *path = vat_path_join(dir, "fx/lines.csv");
    char *bytes = vat_test_read_file(path, NULL);
    char *csv = vat_rx_lines_csv(&s, "h");
    assert_string_equal(bytes, csv);
    assert_true(strncmp(bytes, "line_id,text\nh1,\"a, \"\"quoted\"\" T1 and D1; ", 42) == 0);
    assert_int_equal(vat_rx_read_lines(&back, dir, "fx/lines.csv", &e), 0);
    assert_int_equal(back.n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(back.line[i].text, s.line[i].text);
        assert_null(back.line[i].expected);
    }

    /* a file whose header is not line_id,text is refused */
    FILE *f = fopen(path, "w");
    fputs("id,text\n1,x\n", f);
    fclose(f);
    struct vat_rx_set bad = VAT_RX_SET_INIT;
    assert_int_equal(vat_rx_read_lines(&bad, dir, "fx/lines.csv", &e), -1);
    assert_non_null(strstr(e.msg, "line_id,text"));
    vat_rx_set_release(&bad);

    free(csv);
    free(bytes);
    free(path);
    vat_rx_set_release(&s);
    vat_rx_set_release(&back);
    vat_test_rmtree(dir);
    free(dir);
}

static void test_regexgen_plan_keeps_required(void **state)
{
    (void)state;
    struct vat_rng r;
    vat_rng_seed(&r, 7, 9);
    const int req[] = {4, 4, 2, 1};
    const unsigned w[] = {1, 0, 0, 0, 0}; /* free slots are all kind 0 */
    for (int round = 0; round < 20; round++) {
        int *plan = vat_rx_plan(&r, 10, req, 4, w, 5);
        int count[5] = {0};
        for (int i = 0; i < 10; i++)
            count[plan[i]]++;
        assert_int_equal(count[4], 2);
        assert_int_equal(count[2], 1);
        assert_int_equal(count[1], 1);
        assert_int_equal(count[0], 6);
        assert_int_equal(count[3], 0);
        free(plan);
    }
    /* fewer slots than required kinds: the first ones that fit */
    int *plan = vat_rx_plan(&r, 2, req, 4, w, 5);
    assert_int_equal(plan[0] + plan[1], 8);
    free(plan);
}

static void test_regexgen_prompt_inlines_what_fits(void **state)
{
    (void)state;
    struct vat_rx_set s = VAT_RX_SET_INIT;
    struct vat_rx_builder b;
    vat_rx_begin(&b);
    for (int i = 0; i < 3; i++) {
        vat_rx_putf(&b, "line number %d holds ", i);
        vat_rx_target(&b, "2024-01-0", 0);
        vat_rx_finish(&b, &s);
    }
    vat_rx_builder_release(&b);
    struct vat_buf out = VAT_BUF_INIT;
    vat_rx_prompt_examples(&out, &s, "fixtures/x/x.csv", 6000);
    assert_non_null(strstr(out.data, "fixtures/x/x.csv"));
    assert_non_null(strstr(out.data, "e3,line number 2 holds"));
    assert_non_null(strstr(out.data, "- e3: [\"2024-01-0\"]"));
    assert_null(strstr(out.data, "first"));
    vat_buf_release(&out);

    /* room for the header and one line only */
    vat_rx_prompt_examples(&out, &s, "fixtures/x/x.csv", 50);
    assert_non_null(strstr(out.data, "the first 1 of its 3 lines"));
    assert_non_null(strstr(out.data, "e1,line number 0"));
    assert_null(strstr(out.data, "e2,"));
    assert_null(strstr(out.data, "- e2:"));
    vat_buf_release(&out);

    /* not even the header fits */
    vat_rx_prompt_examples(&out, &s, "fixtures/x/x.csv", 5);
    assert_non_null(strstr(out.data, "its 3 lines are too long to show here"));
    assert_null(strstr(out.data, "```"));
    vat_buf_release(&out);

    vat_rx_prompt_answer(&out, 27, "log lines");
    assert_non_null(strstr(out.data, "27 held-out log lines"));
    assert_non_null(strstr(out.data, "[m.group(0) for m in re.finditer(pattern, line)]"));
    vat_buf_release(&out);
    vat_rx_set_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixty_tasks_admit),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_heldout_stream_is_separate),
        cmocka_unit_test(test_trap_fails_on_heldout),
        cmocka_unit_test(test_every_year_rule),
        cmocka_unit_test(test_confirm_catches_tampering),
        cmocka_unit_test(test_python_agrees),
        cmocka_unit_test(test_regexgen_lines_roundtrip),
        cmocka_unit_test(test_regexgen_plan_keeps_required),
        cmocka_unit_test(test_regexgen_prompt_inlines_what_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
