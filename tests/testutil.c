/* testutil.c — see testutil.h. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *vat_test_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t n = strlen(base) + strlen(tag) + 32;
    char *p = malloc(n);
    snprintf(p, n, "%s/vat-%s-XXXXXX", base, tag);
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        abort();
    }
    return p;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void vat_test_rmtree(const char *dir)
{
    if (!dir || strstr(dir, "/vat-") == NULL)
        return;
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *vat_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

/* ---- the template-test harness (see testutil.h) -------------------------- */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include "jsonout.h"
#include "level.h"
#include "regexgen.h"
#include "template.h"
#include "verifiers.h"

struct vat_tt_env *vat_tt_env_new(const struct vat_template *tmpl, uint64_t seed)
{
    struct vat_tt_env *v = calloc(1, sizeof *v);
    v->tmpl = tmpl;
    v->dir = vat_test_tmpdir(tmpl->name);
    v->cfg = vat_template_default_params(tmpl);
    /* Template tests check the CSV (or SQLite) format they were written
     * for; workbook tasks have their own tests (test_workbooks.c). */
    if (json_object_get(v->cfg, "fixture_format"))
        json_object_set_new(v->cfg, "fixture_format", json_string("csv"));
    /* Template tests exercise the value form; a test of the program form
     * sets "answer_form" to "sql" on v->cfg. */
    if (json_object_get(v->cfg, "answer_form"))
        json_object_set_new(v->cfg, "answer_form", json_string("value"));
    v->seed = seed;
    return v;
}

void vat_tt_env_free(struct vat_tt_env *v)
{
    if (!v)
        return;
    vat_test_rmtree(v->dir);
    free(v->dir);
    json_decref(v->cfg);
    free(v);
}

uint32_t vat_tt_draw(const struct vat_tt_env *v, struct vat_task *t, const char *root,
                     uint32_t index, size_t inline_max, uint32_t max_attempts,
                     struct vat_replay *r)
{
    struct vat_draw_opts o = {.master_seed = v->seed, .cfg = v->cfg, .inline_max_bytes = inline_max};
    struct vat_err e = {{0}};
    vat_task_init(t, v->tmpl, index, root ? root : v->dir);
    if (max_attempts > 0) {
        uint32_t a = vat_tt_draw_with(t, &o, max_attempts - 1, r, &e);
        if (a < max_attempts)
            return a;
    }
    fail_msg("%s: rule 'every task admits': %s not admitted in %u attempts; the last refusal: "
             "%s. Mend: the refusal names the broken step (reference, confirm, the trap, the "
             "gate); mend that step, and arm the trap by construction",
             v->tmpl->name, t->id, (unsigned)max_attempts, e.msg);
    return max_attempts;
}

uint32_t vat_tt_draw_with(struct vat_task *t, const struct vat_draw_opts *o, uint32_t max_redraws,
                          struct vat_replay *r, struct vat_err *e)
{
    uint32_t a = 0;
    while (a <= max_redraws && vat_task_draw(t, a, o, r, e) != 0)
        a++;
    return a;
}

/* Sets cfg's "difficulty" to all weight on `level`. */
static void set_level(json_t *cfg, int level)
{
    json_t *w = json_array();
    for (int l = 1; l <= VAT_LEVELS; l++)
        json_array_append_new(w, json_integer(l == level));
    json_object_set_new(cfg, "difficulty", w);
}

json_t *vat_tt_level_cfg(const struct vat_template *tmpl, int level)
{
    json_t *cfg = vat_template_default_params(tmpl);
    set_level(cfg, level);
    return cfg;
}

void vat_tt_env_set_level(struct vat_tt_env *v, int level)
{
    set_level(v->cfg, level);
}

char *vat_tt_fixture_text(const struct vat_task *t, int fi, size_t *len)
{
    char *path = vat_path_join(t->root, t->fixture[fi].path);
    char *s = vat_test_read_file(path, len);
    free(path);
    assert_non_null(s);
    return s;
}

char *vat_tt_inline_block(const char *prompt, const char *lang)
{
    char open[32];
    snprintf(open, sizeof open, "```%s\n", lang);
    const char *a = strstr(prompt, open);
    assert_non_null(a);
    a += strlen(open);
    const char *z = strstr(a, "```");
    assert_non_null(z);
    return vat_xstrndup(a, (size_t)(z - a));
}

struct vat_verdict vat_tt_check(const struct vat_task *t, const char *answer)
{
    return t->tmpl->check(t, answer, strlen(answer));
}

void vat_tt_assert_states_shape(const struct vat_task *t)
{
    const char *checker = json_string_value(json_object_get(t->spec, "checker"));
    if (checker && strcmp(checker, "sql") == 0) {
        assert_non_null(strstr(t->prompt, "SELECT"));
        return;
    }
    if (checker && strcmp(checker, "regex") == 0) {
        assert_true(strstr(t->prompt, "pattern") || strstr(t->prompt, "regular expression") ||
                    strstr(t->prompt, "regex"));
        return;
    }
    const char *shape = json_string_value(json_object_get(t->spec, "shape"));
    assert_non_null(strstr(t->prompt, "JSON"));
    const char *word = NULL;
    if (shape && strcmp(shape, "number") == 0)
        word = "number";
    else if (shape && strcmp(shape, "list") == 0)
        word = "list";
    else if (shape)
        word = "object";
    if (word && strcmp(word, "list") == 0 && strstr(t->prompt, "array"))
        word = NULL;
    if (word && strcmp(word, "number") == 0 && strstr(t->prompt, "integer"))
        word = NULL;
    if (word && !strstr(t->prompt, word))
        fail_msg("%s: the prompt never says its answer is a JSON %s", t->id, word);
}

void vat_tt_assert_replays(const struct vat_replay *r)
{
    assert_true(r->v[VAT_ROLE_GOLD].gate_passed);
    assert_true(r->v[VAT_ROLE_GOLD].score == 1.0);
    assert_string_equal(r->v[VAT_ROLE_GOLD].code, "ok");
    assert_true(r->v[VAT_ROLE_TRAP].gate_passed);
    assert_true(r->v[VAT_ROLE_TRAP].score == 0.0);
    assert_false(r->v[VAT_ROLE_MALFORMED].gate_passed);
    assert_true(r->v[VAT_ROLE_MALFORMED].score == 0.0);
}

void vat_tt_assert_same_task(const struct vat_task *a, const struct vat_task *b)
{
    assert_string_equal(b->prompt, a->prompt);
    assert_string_equal(b->gold, a->gold);
    assert_string_equal(b->trap, a->trap);
    char *j1 = vat_json_dumps(a->params), *j2 = vat_json_dumps(b->params);
    assert_string_equal(j1, j2);
    free(j1);
    free(j2);
    assert_int_equal(b->n_fixtures, a->n_fixtures);
    for (int f = 0; f < a->n_fixtures; f++) {
        assert_string_equal(b->fixture[f].path, a->fixture[f].path);
        assert_string_equal(b->fixture[f].sha256, a->fixture[f].sha256);
        size_t n1, n2;
        char *b1 = vat_tt_fixture_text(a, f, &n1), *b2 = vat_tt_fixture_text(b, f, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(b1, b2, n1);
        free(b1);
        free(b2);
    }
}

void vat_tt_assert_redraw_differs(const struct vat_tt_env *v, const char *root, uint32_t index,
                                  const struct vat_task *first)
{
    struct vat_task t;
    struct vat_replay r;
    struct vat_err e = {{0}};
    struct vat_draw_opts o = {.master_seed = v->seed, .cfg = v->cfg, .inline_max_bytes = 6000};
    vat_task_init(&t, v->tmpl, index, root ? root : v->dir);
    assert_int_equal(vat_task_draw(&t, 1, &o, &r, &e), 0);
    assert_string_not_equal(t.fixture[0].sha256, first->fixture[0].sha256);
    vat_task_clear(&t);
}

struct vat_tt_drawn *vat_tt_drawn_new(const struct vat_template *tmpl, uint64_t seed, uint32_t n)
{
    struct vat_tt_drawn *d = calloc(1, sizeof *d);
    d->env = vat_tt_env_new(tmpl, seed);
    d->t = calloc(n ? n : 1, sizeof *d->t);
    d->n = n;
    for (uint32_t i = 0; i < n; i++) {
        struct vat_replay r;
        vat_tt_draw(d->env, &d->t[i], NULL, i, 6000, 1, &r);
    }
    return d;
}

void vat_tt_drawn_free(struct vat_tt_drawn *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->n; i++)
        vat_task_clear(&d->t[i]);
    free(d->t);
    vat_tt_env_free(d->env);
    free(d);
}

const char *vat_tt_param_str(const struct vat_task *t, const char *key)
{
    const char *s = json_string_value(json_object_get(t->params, key));
    assert_non_null(s);
    return s;
}

extern const struct vat_template vat_tmpl_skeleton, vat_tmpl_skeleton_regex, vat_tmpl_skeleton_sql;

const struct vat_template *const vat_tt_skeletons[] = {
    &vat_tmpl_skeleton, &vat_tmpl_skeleton_regex, &vat_tmpl_skeleton_sql, NULL,
};

const struct vat_template *vat_tt_each(size_t i)
{
    size_t n = 0;
    while (vat_registry[n])
        n++;
    if (i < n)
        return vat_registry[i];
    for (size_t k = 0; vat_tt_skeletons[k]; k++)
        if (k == i - n)
            return vat_tt_skeletons[k];
    return NULL;
}

/* ---- regex decoy kinds held back for the higher levels (testutil.h) ------- */

/* What pattern p extracts from text through t's spec (fails the test when
 * the checker refuses it). */
static json_t *held_back_extract(const struct vat_task *t, const char *p, const char *text)
{
    struct vat_verdict v;
    json_t *got = vat_regex_extract(t->spec, p, strlen(p), text, &v);
    if (!got)
        fail_msg("%s: '%s' failed on '%s': %s", t->id, p, text, v.reason);
    return got;
}

static void held_back_decoys(const struct vat_tt_held_back *h, const struct vat_task *t)
{
    char text[VAT_TT_MAX_DECOYS][64], line[96];
    int mistake[VAT_TT_MAX_DECOYS];
    int n = h->decoys(t, text, mistake);
    assert_true(n > 0 && n <= VAT_TT_MAX_DECOYS);
    for (int i = 0; i < n; i++) {
        snprintf(line, sizeof line, "see %.63s now", text[i]);
        json_t *got = held_back_extract(t, t->gold, line);
        if (json_array_size(got) != 0)
            fail_msg("%s: gold '%s' takes %zu from '%s'", t->id, t->gold, json_array_size(got),
                     line);
        json_decref(got);
        char *p = mistake[i] < 0 ? NULL : h->mistake(t, mistake[i]);
        if (!p)
            continue;
        got = held_back_extract(t, p, line);
        if (json_array_size(got) != 1 ||
            strcmp(json_string_value(json_array_get(got, 0)), text[i]) != 0)
            fail_msg("%s: mistake '%s' does not take '%s' whole", t->id, p, text[i]);
        json_decref(got);
        free(p);
    }
}

void vat_tt_held_back_at_level_4(void **state)
{
    const struct vat_tt_held_back *h = *state;
    uint32_t n = h->tasks;
    struct vat_tt_env *v = vat_tt_env_new(h->tmpl, h->seed);
    vat_tt_env_set_level(v, 4);
    for (uint32_t i = 0; i < n; i++) {
        struct vat_task t;
        struct vat_replay r;
        vat_tt_draw(v, &t, NULL, i, 6000, 8, &r);
        assert_int_equal(vat_task_level(&t), 4);
        assert_int_equal(vat_rx_task_kinds(&t, true) & h->kinds, h->kinds);
        assert_int_equal(vat_rx_task_kinds(&t, false) & h->kinds, 0);
        struct vat_verdict g = vat_tt_check(&t, t.gold);
        assert_true(g.gate_passed && g.score == 1.0);
        held_back_decoys(h, &t);
        json_t *ho = vat_rx_spec_heldout(t.spec);
        for (int k = 0; k < h->n_mistakes; k++) {
            char *p = h->mistake(&t, k);
            if (!p)
                continue;
            struct vat_verdict vh = vat_check_regex(ho, p, strlen(p));
            if (!(vh.gate_passed && vh.score < 1.0))
                fail_msg("%s: mistake '%s' not caught by the held-out lines: %g", t.id, p,
                         vh.score);
            free(p);
        }
        json_decref(ho);
        vat_task_clear(&t);
    }
    vat_tt_env_free(v);
}

void vat_tt_held_back_below_level_3(void **state)
{
    const struct vat_tt_held_back *h = *state;
    uint32_t n = h->tasks;
    for (int level = 1; level <= 2; level++) {
        struct vat_tt_env *v = vat_tt_env_new(h->tmpl, h->seed);
        vat_tt_env_set_level(v, level);
        for (uint32_t i = 0; i < n; i++) {
            struct vat_task t;
            struct vat_replay r;
            vat_tt_draw(v, &t, NULL, i, 6000, 8, &r);
            assert_int_equal(vat_task_level(&t), level);
            assert_int_equal(
                (vat_rx_task_kinds(&t, true) | vat_rx_task_kinds(&t, false)) & h->kinds, 0);
            for (int k = 0; k < h->n_mistakes; k++) {
                char *p = h->pass_below & (1u << k) ? h->mistake(&t, k) : NULL;
                if (!p)
                    continue;
                struct vat_verdict va = vat_tt_check(&t, p);
                if (!(va.gate_passed && va.score == 1.0))
                    fail_msg("%s: level %d catches '%s' (%g): %s", t.id, level, p, va.score,
                             va.reason);
                free(p);
            }
            vat_task_clear(&t);
        }
        vat_tt_env_free(v);
    }
}
