/* rules.c — the rule checks of rules.h.  Messages say which rule broke,
 * on which task, and how to mend it; docs/adding-a-template.md lists the
 * same rules with the test that enforces each. */
#include "rules.h"

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
#include "jsonout.h"
#include "testutil.h"
#include "trace.h"

#define RULE_SEED 20261130u
#define RULE_REDRAWS 40

/* Existing templates that do not (yet) keep a rule, and why.  A new
 * template never belongs here: mend it instead. */
static const struct {
    const char *tmpl, *rule, *why;
} exempt[] = {
    {"dup_header", "confirm follows the file",
     "its confirm reads the file by the column positions the generator planted (design.md "
     "allows planted truth), so without t->priv it has no layout to read by"},
    {"dup_header", "confirm is a second derivation",
     "its second derivation is the planted layout, read with the same CSV reader"},
};

const char *vat_rule_exempt(const struct vat_template *tm, const char *rule)
{
    for (size_t i = 0; i < sizeof exempt / sizeof exempt[0]; i++)
        if (strcmp(exempt[i].tmpl, tm->name) == 0 && strcmp(exempt[i].rule, rule) == 0)
            return exempt[i].why;
    return NULL;
}

static char *msg(const struct vat_template *tm, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *msg(const struct vat_template *tm, const char *rule, const char *fmt, ...)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "%s: rule '%s': ", tm->name, rule);
    char body[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    vat_buf_puts(&b, body);
    return vat_buf_detach(&b);
}

/* One scratch root and the template's default params. */
struct scratch {
    char *root;
    json_t *cfg;
    size_t inline_max;
};

static void scratch_open(struct scratch *s, const struct vat_template *tm, const char *tag)
{
    char name[96];
    snprintf(name, sizeof name, "rules-%s-%s", tag, tm->name);
    s->root = vat_test_tmpdir(name);
    s->cfg = vat_template_default_params(tm);
    /* These rules read the value form's callbacks (reference, confirm,
     * trap_answer) directly; the program form is checked by
     * test_contract (both forms) and test_progform. */
    if (json_object_get(s->cfg, "answer_form"))
        json_object_set_new(s->cfg, "answer_form", json_string("value"));
    /* ... and a cap that shows every file keeps them in it: past the cap
     * a value question is asked as a program. */
    s->inline_max = tm->progform ? 1 << 20 : 6000;
}

static void scratch_close(struct scratch *s)
{
    json_decref(s->cfg);
    vat_test_rmtree(s->root);
    free(s->root);
}

/* Draws attempt `attempt` of task index into t (initialised here). */
static int draw_once(struct vat_task *t, const struct vat_template *tm, const struct scratch *s,
                     uint32_t index, uint32_t attempt, struct vat_replay *r, struct vat_err *e)
{
    struct vat_draw_opts o = {.master_seed = RULE_SEED, .cfg = s->cfg,
                              .inline_max_bytes = s->inline_max};
    if (attempt == 0)
        vat_task_init(t, tm, index, s->root);
    return vat_task_draw(t, attempt, &o, r, e);
}

/* Draws task index until admitted (as the pipeline does); 0, or -1 with e
 * the last refusal. */
static int draw_admitted(struct vat_task *t, const struct vat_template *tm,
                         const struct scratch *s, uint32_t index, struct vat_err *e)
{
    struct vat_replay r;
    for (uint32_t a = 0; a <= RULE_REDRAWS; a++)
        if (draw_once(t, tm, s, index, a, &r, e) == 0)
            return 0;
    return -1;
}

/* ---- the trap is armed on every draw ---------------------------------------- */

char *vat_rule_trap_armed(const struct vat_template *tm, unsigned n)
{
    const char *rule = "the trap is armed on every draw";
    struct scratch s;
    scratch_open(&s, tm, "trap");
    unsigned unarmed = 0, equal = 0;
    char first[512] = "";
    char *out = NULL;
    for (uint32_t i = 0; i < n; i++) {
        struct vat_task t;
        struct vat_replay r;
        struct vat_err e = {{0}};
        int rc = draw_once(&t, tm, &s, i, 0, &r, &e);
        if (rc != 0 && strstr(e.msg, "trap not armed")) {
            if (!unarmed++)
                snprintf(first, sizeof first, "%s", e.msg);
        }
        for (uint32_t a = 1; rc != 0 && a <= RULE_REDRAWS; a++)
            rc = draw_once(&t, tm, &s, i, a, &r, &e);
        if (rc == 0 && (strcmp(t.gold, t.trap) == 0 || !(r.v[VAT_ROLE_TRAP].score < 1.0)))
            if (!equal++ && !first[0])
                snprintf(first, sizeof first, "%s: admitted with trap %s, gold %s", t.id, t.trap,
                         t.gold);
        vat_task_clear(&t);
    }
    if (unarmed || equal)
        out = msg(tm, rule,
                  "the trap answer scores 1 (it equals gold) on %u of %u first draws, and %u "
                  "admitted task%s ha%s trap == gold (first: %s); admission redraws such draws, "
                  "so the corpus hides the gap. Mend: plant the trap's corner in every fixture "
                  "by construction (skeleton.c always writes two items exactly at T), so "
                  "trap_answer differs from gold on every draw",
                  unarmed, n, equal, equal == 1 ? "" : "s", equal == 1 ? "s" : "ve", first);
    scratch_close(&s);
    return out;
}

/* ---- gold and confirm follow the file --------------------------------------- */

/* Copies the bytes of fixture k of `from` over fixture k of `to`, with its
 * recorded rows and columns. */
static void put_fixture(struct vat_task *to, const struct vat_task *from, int k)
{
    size_t len;
    char *data = vat_tt_fixture_text(from, k, &len);
    struct vat_err e = {{0}};
    if (vat_write_file_atomic(to->root, to->fixture[k].path, data, len, &e) != 0)
        fail_msg("cannot rewrite %s: %s", to->fixture[k].path, e.msg);
    free(data);
    to->fixture[k].rows = from->fixture[k].rows;
    json_decref(to->fixture[k].columns);
    to->fixture[k].columns = json_deep_copy(from->fixture[k].columns);
}

static void drop_planted(struct vat_task *t)
{
    if (t->priv_free)
        t->priv_free(t->priv);
    t->priv = NULL;
    t->priv_free = NULL;
}

static char *follows_value(const struct vat_template *tm)
{
    const char *rg = "gold follows the file", *rc = "confirm follows the file";
    struct scratch sa, sb;
    scratch_open(&sa, tm, "swap-a");
    scratch_open(&sb, tm, "swap-b");
    struct vat_task a, b;
    struct vat_err e = {{0}};
    char *out = NULL;
    if (draw_admitted(&a, tm, &sa, 0, &e) != 0)
        fail_msg("%s: task 0 never admitted: %s", tm->name, e.msg);
    /* B: the first later task whose gold differs and whose fixtures line
     * up with A's (same count and formats). */
    bool found = false;
    for (uint32_t j = 1; j < 30 && !found; j++) {
        if (draw_admitted(&b, tm, &sb, j, &e) != 0)
            fail_msg("%s: task %u never admitted: %s", tm->name, j, e.msg);
        found = strcmp(a.gold, b.gold) != 0 && a.n_fixtures == b.n_fixtures;
        for (int k = 0; found && k < a.n_fixtures; k++)
            found = strcmp(a.fixture[k].format, b.fixture[k].format) == 0;
        if (!found)
            vat_task_clear(&b);
    }
    if (!found)
        fail_msg("%s: no task among 1..29 has another gold than task 0 (%s)", tm->name, a.gold);

    /* A keeps its id, paths and planted truth; the file and the question
     * become B's. */
    char *planted = vat_xstrdup(a.gold);
    for (int k = 0; k < a.n_fixtures; k++)
        put_fixture(&a, &b, k);
    json_decref(a.params);
    a.params = json_deep_copy(b.params);
    json_decref(a.spec);
    a.spec = json_deep_copy(b.spec);
    json_object_del(a.spec, "expected");
    free(a.gold);
    free(a.trap);
    a.gold = a.trap = NULL;

    if (tm->reference(&a, &e) != 0) {
        out = msg(tm, rg,
                  "%s: after its fixture was replaced by %s's (and the question with it), "
                  "reference failed: %s. Mend: reference() must read gold from t->fixture[] as "
                  "it lies on disk and the question from t->params",
                  a.id, b.id, e.msg);
    } else if (strcmp(a.gold, b.gold) != 0) {
        bool old = strcmp(a.gold, planted) == 0;
        out = msg(tm, rg,
                  "%s: with %s's fixture and question in place, reference gave %s%s, not %s, "
                  "the gold of the file on disk. Mend: compute gold in reference() by reading "
                  "the fixture back (vat_an_read_csv, vat_an_db_query), never from t->priv or "
                  "other generator memory",
                  a.id, b.id, a.gold, old ? " (the gold planted for the old file)" : "",
                  b.gold);
    }
    if (!out) {
        /* confirm with the planted truth still at hand: the old gold differs
         * from the file and must be refused. */
        free(a.gold);
        a.gold = vat_xstrdup(planted);
        if (tm->confirm(&a, &e) == 0)
            out = msg(tm, rc,
                      "%s: with %s's fixture in place, confirm accepted %s, the gold of the old "
                      "file (what the generator planted), though the file's gold is %s. Mend: "
                      "derive in confirm() from the fixture on disk (SQL over the loaded CSV, "
                      "vat_an_confirm_query; or plain row reads), using t->priv at most as an "
                      "extra cross-check",
                      a.id, b.id, planted, b.gold);
    }
    if (!out && !vat_rule_exempt(tm, rc)) {
        /* Without the planted truth, which no longer describes the file:
         * confirm works from the file alone and accepts its gold. */
        drop_planted(&a);
        free(a.gold);
        a.gold = vat_xstrdup(b.gold);
        if (tm->confirm(&a, &e) != 0)
            out = msg(tm, rc,
                      "%s: with %s's fixture in place and the planted truth dropped (t->priv "
                      "NULL, as a test that replaces a file leaves it), confirm refused the "
                      "file's own gold %s: %s. Mend: confirm() must derive from the file alone; "
                      "cross-check t->priv only when it is not NULL",
                      a.id, b.id, b.gold, e.msg);
    }
    free(planted);
    vat_task_clear(&a);
    vat_task_clear(&b);
    scratch_close(&sa);
    scratch_close(&sb);
    return out;
}

static char *follows_sql(const struct vat_template *tm)
{
    const char *rg = "gold follows the file", *rc = "confirm follows the file";
    struct scratch s;
    scratch_open(&s, tm, "swap");
    struct vat_task a;
    struct vat_err e = {{0}};
    char *out = NULL;
    if (draw_admitted(&a, tm, &s, 0, &e) != 0)
        fail_msg("%s: task 0 never admitted: %s", tm->name, e.msg);
    if (a.n_fixtures < 2) {
        out = msg(tm, rg, "%s has %d fixture: an SQL task is checked on its main fixture and "
                          "held-out variants. Mend: write variants (vat_sqlgen_write_set)",
                  a.id, a.n_fixtures);
        goto done;
    }
    /* The main fixture and the first variant trade bytes: same question,
     * other data. */
    size_t l0, l1;
    char *d0 = vat_tt_fixture_text(&a, 0, &l0), *d1 = vat_tt_fixture_text(&a, 1, &l1);
    if (vat_write_file_atomic(a.root, a.fixture[0].path, d1, l1, &e) != 0 ||
        vat_write_file_atomic(a.root, a.fixture[1].path, d0, l0, &e) != 0)
        fail_msg("cannot swap %s's fixtures: %s", a.id, e.msg);
    free(d0);
    free(d1);
    char *trap = vat_xstrdup(a.trap);
    free(a.gold);
    free(a.trap);
    a.gold = a.trap = NULL;
    json_object_del(a.spec, "reference_sql");
    if (tm->reference(&a, &e) != 0) {
        out = msg(tm, rg,
                  "%s: with its main fixture and first variant swapped, reference failed: %s. "
                  "Mend: the gold query and its rows must come from the question and the files "
                  "on disk, not from rows the generator planted",
                  a.id, e.msg);
        goto done_trap;
    }
    struct vat_verdict v = vat_tt_check(&a, a.gold);
    if (!(v.gate_passed && v.score == 1.0)) {
        out = msg(tm, rg,
                  "%s: with its main fixture and first variant swapped, gold scores %g (%s: %s). "
                  "Mend: the checker must compare with the reference query's rows on each "
                  "fixture as it lies on disk, never with stored rows",
                  a.id, v.score, v.code, v.reason);
    } else if (tm->confirm(&a, &e) != 0) {
        out = msg(tm, rc,
                  "%s: with its main fixture and first variant swapped, confirm refused gold: "
                  "%s. Mend: derive each fixture's rows in confirm() from that file's plain row "
                  "reads (vat_sqlgen_read_table), not from what the generator planted",
                  a.id, e.msg);
    } else {
        char *gold = a.gold;
        a.gold = trap;
        int agreed = tm->confirm(&a, &e) == 0;
        a.gold = gold;
        if (agreed)
            out = msg(tm, rc,
                      "%s: confirm accepted the trap query %s as gold. Mend: compare the rows "
                      "derived from each file with the rows gold returns on it",
                      a.id, trap);
    }
done_trap:
    free(trap);
done:
    vat_task_clear(&a);
    scratch_close(&s);
    return out;
}

char *vat_rule_gold_follows_file(const struct vat_template *tm)
{
    if (strcmp(tm->family, "regex") == 0)
        return NULL; /* gold follows the question: vat_rule_regex_planted */
    if (strcmp(tm->answer_kind, "sql") == 0)
        return follows_sql(tm);
    return follows_value(tm);
}

/* ---- confirm is a second derivation ----------------------------------------- */

static void trace_text(struct vat_buf *b, const struct vat_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        vat_buf_printf(b, "%s[%.80s]", i ? ", " : "", t->item[i]);
    if (!t->n)
        vat_buf_puts(b, "nothing");
}

char *vat_rule_confirm_independent(const struct vat_template *tm)
{
    const char *rule = "confirm is a second derivation";
    if (strcmp(tm->family, "regex") == 0 || vat_rule_exempt(tm, rule))
        return NULL;
    struct scratch s;
    scratch_open(&s, tm, "trace");
    struct vat_task a;
    struct vat_err e = {{0}};
    char *out = NULL;
    if (draw_admitted(&a, tm, &s, 1, &e) != 0)
        fail_msg("%s: task 1 never admitted: %s", tm->name, e.msg);
    free(a.gold);
    free(a.trap);
    a.gold = a.trap = NULL;
    json_object_del(a.spec, "expected");
    json_object_del(a.spec, "reference_sql");
    struct vat_trace r = VAT_TRACE_INIT, c = VAT_TRACE_INIT;
    vat_trace_open(&r);
    int rr = tm->reference(&a, &e);
    vat_trace_close();
    if (rr != 0)
        fail_msg("%s: reference failed on a fresh draw: %s", a.id, e.msg);
    vat_trace_open(&c);
    int rc = tm->confirm(&a, &e);
    vat_trace_close();
    if (rc != 0)
        fail_msg("%s: confirm failed on a fresh draw: %s", a.id, e.msg);
    bool own = false;
    for (size_t i = 0; i < c.n && !own; i++)
        own = !vat_trace_has(&r, c.item[i]);
    if (!own) {
        struct vat_buf b = VAT_BUF_INIT;
        vat_buf_puts(&b, "");
        trace_text(&b, &c);
        out = msg(tm, rule,
                  "%s: confirm read only what reference read (%s) and ran no reader or query "
                  "of its own, so it repeats reference's computation and would repeat its "
                  "bugs. Mend: answer the question another way: SQL over the CSV loaded into "
                  "SQLite (vat_an_confirm_query) when reference computes in C, plain row reads "
                  "in C when reference runs SQL",
                  a.id, b.data);
        vat_buf_release(&b);
    }
    vat_trace_release(&r);
    vat_trace_release(&c);
    vat_task_clear(&a);
    scratch_close(&s);
    return out;
}

/* ---- regex: gold follows the question --------------------------------------- */

char *vat_rule_regex_planted(const struct vat_template *tm)
{
    const char *rule = "regex gold follows the question";
    if (strcmp(tm->family, "regex") != 0)
        return NULL;
    struct scratch s;
    scratch_open(&s, tm, "regex");
    char *out = NULL;
    for (uint32_t i = 0; i < 5 && !out; i++) {
        struct vat_task a;
        struct vat_err e = {{0}};
        if (draw_admitted(&a, tm, &s, i, &e) != 0)
            fail_msg("%s: task %u never admitted: %s", tm->name, i, e.msg);
        size_t j;
        json_t *cs;
        json_array_foreach(json_object_get(a.spec, "cases"), j, cs) {
            const char *text = json_string_value(json_object_get(cs, "text"));
            if (json_is_true(json_object_get(cs, "heldout")) && text && *text &&
                strstr(a.prompt, text)) {
                out = msg(tm, rule,
                          "%s: the held-out string '%s' is shown in the prompt. Mend: draw "
                          "held-out strings from the \"heldout\" stream and show only the "
                          "examples",
                          a.id, text);
                break;
            }
        }
        if (!out) {
            /* Gold's extractions with one planted target taken away (what
             * the trap pattern does on its corner): confirm, the planted
             * truth, must refuse them. */
            json_t *c0 = NULL;
            json_array_foreach(json_object_get(a.spec, "cases"), j, cs) {
                if (json_array_size(json_object_get(cs, "expected")) > 0) {
                    c0 = json_object_get(cs, "expected");
                    break;
                }
            }
            if (!c0)
                fail_msg("%s: no case of %s expects an extraction", tm->name, a.id);
            json_t *gone = json_incref(json_array_get(c0, json_array_size(c0) - 1));
            json_array_remove(c0, json_array_size(c0) - 1);
            if (tm->confirm(&a, &e) == 0)
                out = msg(tm, rule,
                          "%s: confirm accepted extractions that miss the planted target '%s'. "
                          "Mend: confirm must compare gold's extractions with the targets the "
                          "generator planted in every example and held-out string",
                          a.id, json_string_value(gone));
            json_decref(gone);
        }
        vat_task_clear(&a);
    }
    scratch_close(&s);
    return out;
}

/* ---- prompts ---------------------------------------------------------------- */

static char *lower_copy(const char *s)
{
    char *x = vat_xstrdup(s);
    for (char *p = x; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return x;
}

/* True when any of the NULL-ended words occurs in s. */
static bool any(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strstr(s, *words))
            return true;
    return false;
}

char *vat_rule_prompt_shape(const struct vat_task *t)
{
    const char *rule = "the prompt states the answer's shape";
    const char *checker = json_string_value(json_object_get(t->spec, "checker"));
    const char *shape = json_string_value(json_object_get(t->spec, "shape"));
    char *p = lower_copy(t->prompt);
    const char *lack = NULL;
    static const char *const answer[] = {"answer", "reply", "respond", "return", NULL};
    static const char *const json[] = {"json", NULL};
    static const char *const number[] = {"number", "integer", NULL};
    static const char *const integer[] = {"integer", "whole number", NULL};
    static const char *const object[] = {"object", NULL};
    static const char *const list[] = {"list", "array", NULL};
    static const char *const regex[] = {"regular expression", "regex", "pattern", NULL};
    static const char *const sql[] = {"select", NULL};
    if (!any(p, answer))
        lack = "how to answer at all (no 'answer', 'reply' or 'return')";
    else if (checker && strcmp(checker, "regex") == 0) {
        if (!any(p, regex))
            lack = "that the answer is a regular expression (pattern)";
    } else if (checker && strcmp(checker, "sql") == 0) {
        if (!any(p, sql))
            lack = "that the answer is one SELECT query";
    } else {
        bool abstain = checker && strcmp(checker, "abstain") == 0;
        if (abstain) {
            char *abst = vat_json_dumps(json_object_get(t->spec, "abstention"));
            /* the prompt may space the JSON as it likes: compare without spaces */
            char *flat = lower_copy(p), *o = flat;
            for (char *q = flat; *q; q++)
                if (*q != ' ')
                    *o++ = *q;
            *o = 0;
            if (!abst || !strstr(flat, abst))
                lack = "the abstention value to answer when the file cannot answer";
            free(abst);
            free(flat);
        }
        if (lack)
            ; /* the abstention value is missing: say that first */
        else if (!any(p, json))
            lack = "that the answer is JSON";
        else if (shape && strcmp(shape, "number") == 0 && !any(p, number))
            lack = "that the answer is a number";
        else if (shape && strncmp(shape, "object", 6) == 0 && !any(p, object))
            lack = "that the answer is a JSON object";
        else if (shape && strcmp(shape, "list") == 0 && !any(p, list))
            lack = "that the answer is a JSON list";
        else if (json_is_true(json_object_get(t->spec, "integer")) && shape &&
                 strcmp(shape, "number") == 0 && !any(p, integer))
            lack = "that the number is an integer";
    }
    free(p);
    if (!lack)
        return NULL;
    return msg(t->tmpl, rule,
               "%s: the prompt never says %s. Mend: end the prompt with the answer's form in "
               "words, e.g. \"Answer with one JSON value: the count as a JSON integer, for "
               "example 7.\"",
               t->id, lack);
}

char *vat_rule_prompt_files(const struct vat_task *t)
{
    const char *rule = "the prompt names every file";
    if (!strstr(t->prompt, t->fixture[0].path))
        return msg(t->tmpl, rule,
                   "%s: the prompt does not name its main fixture %s. Mend: name it in "
                   "backticks (vat_an_prompt_csv does it for a CSV)",
                   t->id, t->fixture[0].path);
    for (const char *p = strstr(t->prompt, "fixtures/"); p; p = strstr(p + 1, "fixtures/")) {
        bool known = false;
        for (int k = 0; k < t->n_fixtures && !known; k++)
            known = strncmp(p, t->fixture[k].path, strlen(t->fixture[k].path)) == 0;
        if (!known) {
            size_t n = strcspn(p, "` \n,;)");
            return msg(t->tmpl, rule,
                       "%s: the prompt refers to '%.*s', which is none of the task's "
                       "fixtures. Mend: write every file the prompt mentions as a fixture "
                       "(vat_an_write_csv) and print its recorded path",
                       t->id, (int)n, p);
        }
    }
    return NULL;
}

static size_t lines_of(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

char *vat_rule_prompt_data_whole(const struct vat_task *t, const char *block, const char *file)
{
    if (strcmp(block, file) == 0)
        return NULL;
    size_t line = 1;
    const char *a = file, *b = block;
    while (*a && *b) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || memcmp(a, b, na) != 0)
            break;
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
        line++;
    }
    char fa[80], fb[80];
    snprintf(fa, sizeof fa, *a ? "has '%.*s'" : "ends", (int)strcspn(a, "\n"), a);
    snprintf(fb, sizeof fb, *b ? "'%.*s'" : "ends", (int)strcspn(b, "\n"), b);
    size_t nb = lines_of(block), nf = lines_of(file);
    return msg(t->tmpl, "the prompt's data",
               "%s: the whole file fits (%zu bytes, inline cap %zu), but the prompt's csv "
               "block holds %zu of its %zu data rows; first difference at line %zu: the file "
               "%s, the block %s. Mend: inline the fixture with vat_an_prompt_csv on the table "
               "exactly as written; it cuts rows only past the inline cap, and says so",
               t->id, strlen(file), t->inline_max_bytes, nb ? nb - 1 : 0, nf ? nf - 1 : 0, line,
               fa, *b ? fb : "ends");
}

static void join(char **acc, char *m)
{
    if (!m)
        return;
    if (!*acc) {
        *acc = m;
        return;
    }
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "%s\n%s", *acc, m);
    free(*acc);
    free(m);
    *acc = vat_buf_detach(&b);
}

char *vat_rule_all(const struct vat_template *tm)
{
    char *out = NULL;
    join(&out, vat_rule_trap_armed(tm, 50));
    join(&out, vat_rule_gold_follows_file(tm));
    join(&out, vat_rule_confirm_independent(tm));
    join(&out, vat_rule_regex_planted(tm));
    struct scratch s;
    scratch_open(&s, tm, "prompt");
    for (uint32_t i = 0; i < 5; i++) {
        struct vat_task t;
        struct vat_err e = {{0}};
        if (draw_admitted(&t, tm, &s, i, &e) != 0)
            fail_msg("%s: task %u never admitted: %s", tm->name, i, e.msg);
        char *m1 = vat_rule_prompt_shape(&t), *m2 = vat_rule_prompt_files(&t);
        vat_task_clear(&t);
        join(&out, m1);
        join(&out, m2);
        if (m1 || m2)
            break;
    }
    scratch_close(&s);
    return out;
}
