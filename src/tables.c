/* tables.c — rows of the seven corpus tables (see tables.h). */
#include "tables.h"

#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "jsonout.h"
#include "template.h"
#include "verifiers.h"

const char *const vat_table_names[VAT_N_TABLES] = {
    "experience", "fixture_generators", "sft_examples", "rollouts",
    "preference_pairs", "verifiers", "rubric_items",
};
const char *const vat_split_names[VAT_N_SPLITS] = {"train", "test"};

json_t *vat_answer_json(const struct vat_task *t, const char *answer)
{
    const char *kind = t->tmpl->answer_kind;
    if (strcmp(kind, "value") == 0 || strcmp(kind, "abstain") == 0) {
        json_t *v = json_loads(answer, JSON_DECODE_ANY, NULL);
        if (v)
            return v;
    }
    return json_string(answer);
}

const char *vat_checker_version(const char *checker)
{
    static char regex_version[64];
    if (strcmp(checker, "sql") == 0)
        return vat_sql_checker_version();
    if (strcmp(checker, "regex") == 0) {
        /* Written once per build before any thread starts (see build.c). */
        if (!regex_version[0]) {
            char v[32] = "";
            pcre2_config(PCRE2_CONFIG_VERSION, v);
            char *sp = strchr(v, ' ');
            if (sp)
                *sp = 0;
            snprintf(regex_version, sizeof regex_version, "vat-regex/1 pcre2/%s", v);
        }
        return regex_version;
    }
    if (strcmp(checker, "abstain") == 0)
        return "vat-abstain/1";
    return "vat-value/1";
}

static void add_row(struct vat_tables *tb, enum vat_table_id id, const char *split, json_t *row)
{
    int s = strcmp(split, "test") == 0 ? VAT_SPLIT_TEST : VAT_SPLIT_TRAIN;
    vat_json_dump_buf(&tb->buf[id][s], row);
    vat_buf_putc(&tb->buf[id][s], '\n');
    json_decref(row);
}

static json_t *seed_json(const struct vat_task *t)
{
    json_t *s = json_object();
    json_object_set_new(s, "master_seed", json_integer((json_int_t)t->master_seed));
    json_object_set_new(s, "stream", json_string(t->stream_hex));
    json_object_set_new(s, "attempt", json_integer(t->attempt));
    return s;
}

static json_t *fixture_json(const struct vat_fixture *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(f->path));
    json_object_set_new(o, "format", json_string(f->format));
    json_object_set_new(o, "sha256", json_string(f->sha256));
    json_object_set_new(o, "rows", json_integer(f->rows));
    return o;
}

/* What shape a value answer must have, in words, from its checker spec. */
static char *describe_answer(const struct vat_task *t)
{
    const json_t *spec = t->spec;
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    if (!checker)
        checker = "value";
    if (strcmp(checker, "regex") == 0)
        return vat_xstrdup("one Python re pattern that compiles and uses no PCRE-only syntax");
    if (strcmp(checker, "sql") == 0)
        return vat_xstrdup("one SQLite SELECT statement that the sandbox accepts");
    const char *shape = json_string_value(json_object_get(spec, "shape"));
    const char *items = json_string_value(json_object_get(spec, "items"));
    const char *what = "one JSON value";
    if (shape && strcmp(shape, "number") == 0)
        what = "one JSON number";
    else if (shape && strcmp(shape, "object") == 0)
        what = "one JSON object mapping each key to a number";
    else if (shape && strcmp(shape, "object_of_objects") == 0)
        what = "one JSON object of objects of numbers";
    else if (shape && strcmp(shape, "list") == 0)
        what = items && strcmp(items, "number") == 0 ? "one JSON list of numbers"
                                                      : "one JSON list of strings";
    if (strcmp(checker, "abstain") == 0)
        return vat_xasprintf("%s, or the abstention value the prompt defines", what);
    return vat_xstrdup(what);
}

static char *describe_score(const struct vat_task *t)
{
    const json_t *spec = t->spec;
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    char a[32], b[32];
    double rel = json_number_value(json_object_get(spec, "rel_tol"));
    double abs = json_number_value(json_object_get(spec, "abs_tol"));
    if (checker && strcmp(checker, "regex") == 0)
        return vat_xasprintf("The pattern extracts exactly the expected matches from all %zu "
                             "strings, the held-out ones included",
                             json_array_size(json_object_get(spec, "cases")));
    if (checker && strcmp(checker, "sql") == 0)
        return vat_xasprintf("The query returns the reference rows (%s) on the task's fixture and "
                             "on %zu held-out variant fixtures",
                             json_is_true(json_object_get(spec, "ordered")) ? "in order"
                                                                             : "as a multiset",
                             json_array_size(json_object_get(spec, "fixtures")) - 1);
    return vat_xasprintf("Every key and number matches the reference within rel_tol %s and "
                         "abs_tol %s",
                         vat_fmt_real(rel, a), vat_fmt_real(abs, b));
}

void vat_tables_add_task(struct vat_tables *tb, const struct vat_task *t,
                         const struct vat_replay *r, const char *split)
{
    const struct vat_template *tm = t->tmpl;
    const char *checker = json_string_value(json_object_get(t->spec, "checker"));
    if (!checker)
        checker = tm->answer_kind;

    /* experience */
    json_t *row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "template", json_string(tm->name));
    json_object_set_new(row, "family", json_string(tm->family));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "answer_kind", json_string(tm->answer_kind));
    json_object_set_new(row, "prompt", json_string(t->prompt));
    json_object_set_new(row, "gold", vat_answer_json(t, t->gold));
    json_object_set_new(row, "fixture", fixture_json(&t->fixture[0]));
    json_t *variants = json_array();
    for (int i = 1; i < t->n_fixtures; i++)
        json_array_append_new(variants, fixture_json(&t->fixture[i]));
    json_object_set_new(row, "variants", variants);
    json_object_set(row, "params", t->params ? t->params : json_object());
    json_object_set_new(row, "difficulty", json_integer(t->difficulty));
    json_object_set_new(row, "trap", json_string(tm->trap));
    /* issue 13: how the prompt is worded, and which phrasings it drew */
    json_object_set_new(row, "prompt_style",
                        json_string(t->prompt_style ? t->prompt_style : "explicit"));
    json_object_set_new(row, "phrasing", json_string(t->phrasing));
    json_t *armed = json_array();
    for (int i = 0; i < t->n_traps; i++)
        json_array_append_new(armed, json_string(t->traps[i].name));
    json_object_set_new(row, "armed_traps", armed);
    json_object_set_new(row, "seed", seed_json(t));
    json_object_set_new(row, "vat_version", json_string(VAT_VERSION));
    add_row(tb, VAT_T_EXPERIENCE, split, row);

    /* fixture_generators */
    for (int i = 0; i < t->n_fixtures; i++) {
        const struct vat_fixture *f = &t->fixture[i];
        char fid[128];
        if (i == 0)
            snprintf(fid, sizeof fid, "%s/main", t->id);
        else
            snprintf(fid, sizeof fid, "%s/v%d", t->id, i);
        row = json_object();
        json_object_set_new(row, "fixture_id", json_string(fid));
        json_object_set_new(row, "task_id", json_string(t->id));
        json_object_set_new(row, "split", json_string(split));
        json_object_set_new(row, "path", json_string(f->path));
        json_object_set_new(row, "role", json_string(f->role));
        json_object_set_new(row, "format", json_string(f->format));
        json_t *gen = json_object();
        json_object_set_new(gen, "name", json_string(tm->name));
        json_object_set_new(gen, "version", json_string(VAT_VERSION));
        json_object_set_new(row, "generator", gen);
        json_object_set_new(row, "seed", seed_json(t));
        json_object_set(row, "params", t->params ? t->params : json_object());
        json_object_set_new(row, "sha256", json_string(f->sha256));
        json_object_set_new(row, "rows", json_integer(f->rows));
        json_object_set(row, "columns", f->columns ? f->columns : json_array());
        add_row(tb, VAT_T_FIXTURE_GENERATORS, split, row);
    }

    /* sft_examples */
    row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "prompt", json_string(t->prompt));
    json_object_set_new(row, "completion", json_string(t->gold));
    json_t *msgs = json_array();
    json_t *m = json_object();
    json_object_set_new(m, "role", json_string("user"));
    json_object_set_new(m, "content", json_string(t->prompt));
    json_array_append_new(msgs, m);
    m = json_object();
    json_object_set_new(m, "role", json_string("assistant"));
    json_object_set_new(m, "content", json_string(t->gold));
    json_array_append_new(msgs, m);
    json_object_set_new(row, "messages", msgs);
    add_row(tb, VAT_T_SFT_EXAMPLES, split, row);

    /* rollouts: the three admission replays */
    const char *answers[VAT_N_ROLES] = {t->gold, t->trap, t->malformed};
    for (int k = 0; k < VAT_N_ROLES; k++) {
        const struct vat_verdict *v = &r->v[k];
        row = json_object();
        json_object_set_new(row, "rollout_id", json_sprintf("%s/%s", t->id, vat_role_names[k]));
        json_object_set_new(row, "task_id", json_string(t->id));
        json_object_set_new(row, "split", json_string(split));
        json_object_set_new(row, "role", json_string(vat_role_names[k]));
        json_object_set_new(row, "answer", json_string(answers[k]));
        json_object_set_new(row, "gate_passed", json_boolean(v->gate_passed));
        json_object_set_new(row, "score", json_real(v->score));
        json_object_set_new(row, "code", json_string(v->code));
        json_object_set_new(row, "reason", json_string(v->reason));
        add_row(tb, VAT_T_ROLLOUTS, split, row);
    }
    /* A compound task replays each single mistake under its own role. */
    for (int i = 0; i < t->n_traps; i++) {
        const struct vat_verdict *v = &r->traps[i];
        row = json_object();
        json_object_set_new(row, "rollout_id", json_sprintf("%s/trap:%s", t->id, t->traps[i].name));
        json_object_set_new(row, "task_id", json_string(t->id));
        json_object_set_new(row, "split", json_string(split));
        json_object_set_new(row, "role", json_sprintf("trap:%s", t->traps[i].name));
        json_object_set_new(row, "answer", json_string(t->traps[i].answer));
        json_object_set_new(row, "gate_passed", json_boolean(v->gate_passed));
        json_object_set_new(row, "score", json_real(v->score));
        json_object_set_new(row, "code", json_string(v->code));
        json_object_set_new(row, "reason", json_string(v->reason));
        add_row(tb, VAT_T_ROLLOUTS, split, row);
    }

    /* preference_pairs: the armed trap is the rejected side */
    const struct vat_verdict *tv = &r->v[VAT_ROLE_TRAP];
    row = json_object();
    json_object_set_new(row, "pair_id", json_sprintf("%s/trap", t->id));
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "prompt", json_string(t->prompt));
    json_object_set_new(row, "chosen", json_string(t->gold));
    json_object_set_new(row, "rejected", json_string(t->trap));
    json_object_set_new(row, "rejected_reason", json_sprintf("%s: %s", tv->code, tv->reason));
    json_object_set_new(row, "signal", json_string("trap"));
    add_row(tb, VAT_T_PREFERENCE_PAIRS, split, row);

    /* verifiers: the whole checker spec, so `vat check` can rebuild it */
    row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "template", json_string(tm->name));
    json_object_set_new(row, "checker", json_string(checker));
    json_object_set_new(row, "checker_version", json_string(vat_checker_version(checker)));
    const char *k;
    json_t *x;
    json_object_foreach(t->spec, k, x) {
        if (!json_object_get(row, k))
            json_object_set(row, k, x);
    }
    add_row(tb, VAT_T_VERIFIERS, split, row);

    /* rubric_items */
    char *gate = describe_answer(t), *score = describe_score(t);
    struct {
        const char *item, *kind;
        char *text;
        double weight;
    } items[] = {
        {"gate", "gate", vat_xasprintf("The answer is %s", gate), 0.2},
        {"score", "score", vat_xasprintf("%s", score), 0.6},
        {"trap", "trap", vat_xasprintf("The answer avoids the trap: %s", tm->trap), 0.2},
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        row = json_object();
        json_object_set_new(row, "item_id", json_sprintf("%s/%s", t->id, items[i].item));
        json_object_set_new(row, "task_id", json_string(t->id));
        json_object_set_new(row, "split", json_string(split));
        json_object_set_new(row, "item", json_string(items[i].item));
        json_object_set_new(row, "kind", json_string(items[i].kind));
        json_object_set_new(row, "text", json_string(items[i].text));
        json_object_set_new(row, "weight", json_real(items[i].weight));
        add_row(tb, VAT_T_RUBRIC_ITEMS, split, row);
        free(items[i].text);
    }
    /* One rubric item per armed trap of a compound task, named by it. */
    for (int i = 0; i < t->n_traps; i++) {
        row = json_object();
        json_object_set_new(row, "item_id", json_sprintf("%s/trap:%s", t->id, t->traps[i].name));
        json_object_set_new(row, "task_id", json_string(t->id));
        json_object_set_new(row, "split", json_string(split));
        json_object_set_new(row, "item", json_sprintf("trap:%s", t->traps[i].name));
        json_object_set_new(row, "kind", json_string("trap"));
        json_object_set_new(row, "text", json_sprintf("The answer avoids the mistake '%s': %s",
                                                      t->traps[i].name, t->traps[i].text));
        json_object_set_new(row, "weight", json_real(0.0));
        add_row(tb, VAT_T_RUBRIC_ITEMS, split, row);
    }
    free(gate);
    free(score);
}

int vat_tables_write(struct vat_tables *tb, const char *root, struct vat_err *e)
{
    for (int i = 0; i < VAT_N_TABLES; i++) {
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            char rel[128];
            snprintf(rel, sizeof rel, "out/%s/%s.jsonl", vat_table_names[i], vat_split_names[s]);
            const struct vat_buf *b = &tb->buf[i][s];
            if (vat_write_file_atomic(root, rel, b->data ? b->data : "", b->len, e) != 0)
                return -1;
        }
    }
    return 0;
}

void vat_tables_release(struct vat_tables *tb)
{
    for (int i = 0; i < VAT_N_TABLES; i++)
        for (int s = 0; s < VAT_N_SPLITS; s++)
            vat_buf_release(&tb->buf[i][s]);
}

json_t *vat_verifier_spec(const json_t *row)
{
    /* Today a verifiers row is the spec itself plus its identity columns. */
    return json_is_object(row) ? json_incref((json_t *)row) : NULL;
}
