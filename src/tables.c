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
/* Declared in admit.h; defined here so the library (which links this file
 * for vat_verifier_spec) needs nothing of the builder. */
const char *const vat_role_names[VAT_N_ROLES] = {"gold", "trap", "malformed"};

/* The layout of every row, as vat_tables_add_task writes it; the card's
 * features come from here and a test checks the rows and the schemas in
 * docs/schemas/ against them. */
#define COL(n, t) {n, 'v', t, NULL, false}
static const struct vat_column fixture_cols[] = {
    COL("path", "string"), COL("format", "string"), COL("sha256", "string"),
    COL("rows", "int64"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column seed_cols[] = {
    COL("master_seed", "int64"), COL("stream", "string"), COL("attempt", "int64"),
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column message_cols[] = {
    COL("role", "string"), COL("content", "string"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column generator_cols[] = {
    COL("name", "string"), COL("version", "string"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column experience_cols[] = {
    COL("task_id", "string"), COL("template", "string"), COL("family", "string"),
    COL("split", "string"), COL("answer_kind", "string"), COL("answer_form", "string"),
    COL("prompt", "string"), COL("gold", "string"), COL("self_contained", "bool"),
    {"fixture", 's', NULL, fixture_cols, false}, {"variants", 'l', NULL, fixture_cols, false},
    COL("params_json", "string"), COL("difficulty", "int64"), COL("trap", "string"),
    COL("prompt_style", "string"), COL("phrasing", "string"),
    {"armed_traps", 'q', "string", NULL, false},
    {"seed", 's', NULL, seed_cols, false}, COL("vat_version", "string"),
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column fixture_generators_cols[] = {
    COL("fixture_id", "string"), COL("task_id", "string"), COL("split", "string"),
    COL("path", "string"), COL("role", "string"), COL("format", "string"),
    {"generator", 's', NULL, generator_cols, false}, {"seed", 's', NULL, seed_cols, false},
    COL("params_json", "string"), COL("sha256", "string"), COL("rows", "int64"),
    {"columns", 'q', "string", NULL, false}, {NULL, 0, NULL, NULL, false},
};
static const struct vat_column sft_examples_cols[] = {
    COL("task_id", "string"), COL("split", "string"),
    {"prompt", 'l', NULL, message_cols, false}, {"completion", 'l', NULL, message_cols, false},
    COL("self_contained", "bool"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column rollouts_cols[] = {
    COL("rollout_id", "string"), COL("task_id", "string"), COL("split", "string"),
    COL("role", "string"), COL("answer", "string"), COL("gate_passed", "bool"),
    COL("score", "float64"), COL("code", "string"), COL("reason", "string"),
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column preference_pairs_cols[] = {
    COL("pair_id", "string"), COL("task_id", "string"), COL("split", "string"),
    {"prompt", 'l', NULL, message_cols, false}, {"chosen", 'l', NULL, message_cols, false},
    {"rejected", 'l', NULL, message_cols, false}, COL("rejected_reason", "string"),
    COL("signal", "string"), COL("pair_kind", "string"), COL("self_contained", "bool"),
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column verifiers_cols[] = {
    COL("task_id", "string"), COL("split", "string"), COL("template", "string"),
    COL("checker", "string"), COL("checker_version", "string"),
    {"expected", 'v', "string", NULL, true}, COL("spec_json", "string"),
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column rubric_items_cols[] = {
    COL("item_id", "string"), COL("task_id", "string"), COL("split", "string"),
    COL("item", "string"), COL("kind", "string"), COL("text", "string"),
    COL("weight", "float64"), {NULL, 0, NULL, NULL, false},
};
#undef COL
const struct vat_column *const vat_table_columns[VAT_N_TABLES] = {
    experience_cols, fixture_generators_cols, sft_examples_cols, rollouts_cols,
    preference_pairs_cols, verifiers_cols, rubric_items_cols,
};

char *vat_json_canonical(const char *text)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (!v)
        return NULL;
    char *s = vat_json_dumps(v);
    json_decref(v);
    return s;
}

char *vat_answer_text(const struct vat_task *t, const char *answer)
{
    const char *kind = vat_task_answer_kind(t);
    if (strcmp(kind, "value") == 0 || strcmp(kind, "abstain") == 0) {
        char *s = vat_json_canonical(answer);
        if (s)
            return s;
    }
    return vat_xstrdup(answer ? answer : "");
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
            snprintf(regex_version, sizeof regex_version, "vat-regex/2 pcre2/%s", v);
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

/* One chat message {"role", "content"}. */
/* content is taken (a new reference, or NULL as json_string gives for
 * text that is not UTF-8, which leaves the member out). */
static json_t *message(const char *role, json_t *content)
{
    json_t *m = json_object();
    json_object_set_new(m, "role", json_string(role));
    json_object_set_new(m, "content", content);
    return m;
}

/* A list holding one chat message: TRL's conversational form (content
 * taken, as by message). */
static json_t *one_message(const char *role, json_t *content)
{
    json_t *a = json_array();
    json_array_append_new(a, message(role, content));
    return a;
}

/* Free-shaped values travel as JSON text in a *_json column. */
static json_t *json_text(const json_t *v)
{
    char *s = vat_json_dumps(v);
    json_t *j = json_string(s);
    free(s);
    return j;
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

    json_t *empty = json_object();
    const json_t *params = t->params ? t->params : empty;
    char *gold = vat_answer_text(t, t->gold);
    /* One string value for the prompt, shared by the three rows that
     * carry it. */
    json_t *prompt = json_string(t->prompt);

    /* experience */
    json_t *row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "template", json_string(tm->name));
    json_object_set_new(row, "family", json_string(tm->family));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "answer_kind", json_string(vat_task_answer_kind(t)));
    json_object_set_new(row, "answer_form", json_string(vat_task_answer_form(t)));
    json_object_set(row, "prompt", prompt);
    json_object_set_new(row, "gold", json_string(gold));
    json_object_set_new(row, "self_contained", json_boolean(t->self_contained));
    json_object_set_new(row, "fixture", fixture_json(&t->fixture[0]));
    json_t *variants = json_array();
    for (int i = 1; i < t->n_fixtures; i++)
        json_array_append_new(variants, fixture_json(&t->fixture[i]));
    json_object_set_new(row, "variants", variants);
    json_object_set_new(row, "params_json", json_text(params));
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
        json_object_set_new(row, "params_json", json_text(params));
        json_object_set_new(row, "sha256", json_string(f->sha256));
        json_object_set_new(row, "rows", json_integer(f->rows));
        json_object_set(row, "columns", f->columns ? f->columns : json_array());
        add_row(tb, VAT_T_FIXTURE_GENERATORS, split, row);
    }

    /* sft_examples: TRL's conversational prompt-completion form */
    row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "prompt", one_message("user", json_incref(prompt)));
    json_object_set_new(row, "completion", one_message("assistant", json_string(gold)));
    json_object_set_new(row, "self_contained", json_boolean(t->self_contained));
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
    json_object_set_new(row, "prompt", one_message("user", json_incref(prompt)));
    json_object_set_new(row, "chosen", one_message("assistant", json_string(gold)));
    json_object_set_new(row, "rejected", one_message("assistant", json_string(t->trap)));
    json_object_set_new(row, "rejected_reason", json_sprintf("%s: %s", tv->code, tv->reason));
    json_object_set_new(row, "signal", json_string("trap"));
    /* Both sides are programs (regex, sql, analytics in program form)
     * whose outputs differ on the task's fixtures (the trap is armed, so
     * its rows or matches differ), or both are bare values. */
    {
        const char *kind = vat_task_answer_kind(t);
        bool program = strcmp(kind, "regex") == 0 || strcmp(kind, "sql") == 0;
        json_object_set_new(row, "pair_kind", json_string(program ? "program" : "value"));
    }
    json_object_set_new(row, "self_contained", json_boolean(t->self_contained));
    add_row(tb, VAT_T_PREFERENCE_PAIRS, split, row);

    /* verifiers: the whole checker spec, so `vat check` can rebuild it.
     * Its shape differs per checker, so it travels as JSON text; the
     * expected value (a JSON value of any shape) has a column of its own,
     * as canonical JSON text, so readers need not dig for it. */
    row = json_object();
    json_object_set_new(row, "task_id", json_string(t->id));
    json_object_set_new(row, "split", json_string(split));
    json_object_set_new(row, "template", json_string(tm->name));
    json_object_set_new(row, "checker", json_string(checker));
    json_object_set_new(row, "checker_version", json_string(vat_checker_version(checker)));
    vat_verifier_set_spec(row, t->spec);
    add_row(tb, VAT_T_VERIFIERS, split, row);

    /* rubric_items */
    char *gate = describe_answer(t), *score = describe_score(t);
    struct {
        const char *item, *kind;
        char *text;
        double weight;
    } items[] = {
        {"gate", "gate", vat_xasprintf("The answer is %s", gate), VAT_RUBRIC_GATE},
        {"score", "score", vat_xasprintf("%s", score), VAT_RUBRIC_SCORE},
        {"trap", "trap", vat_xasprintf("The answer avoids the trap: %s", tm->trap),
         vat_rubric_trap_weight(t->n_traps)},
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
        json_object_set_new(row, "weight", json_real(vat_rubric_trap_weight(t->n_traps)));
        add_row(tb, VAT_T_RUBRIC_ITEMS, split, row);
    }
    free(gate);
    free(score);
    free(gold);
    json_decref(empty);
    json_decref(prompt);
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
    const char *text = json_string_value(json_object_get(row, "spec_json"));
    json_t *spec = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (!json_is_object(spec)) {
        json_decref(spec);
        return NULL;
    }
    const json_t *ex = json_object_get(row, "expected");
    if (json_is_string(ex)) {
        json_t *v = json_loads(json_string_value(ex), JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                               NULL);
        if (!v) {
            json_decref(spec);
            return NULL;
        }
        json_object_set_new(spec, "expected", v);
    } else if (ex && !json_is_null(ex)) {
        json_decref(spec);
        return NULL;
    }
    return spec;
}

void vat_verifier_set_spec(json_t *row, const json_t *spec)
{
    const json_t *expected = json_object_get(spec, "expected");
    json_object_set_new(row, "expected", expected ? json_text(expected) : json_null());
    json_t *rest = json_object();
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)spec, k, x) {
        if (strcmp(k, "expected") != 0)
            json_object_set(rest, k, x);
    }
    json_object_set_new(row, "spec_json", json_text(rest));
    json_decref(rest);
}

const char *vat_row_prompt(const json_t *row)
{
    const json_t *p = json_object_get(row, "prompt");
    if (json_is_string(p))
        return json_string_value(p);
    size_t i;
    const json_t *m;
    json_array_foreach(p, i, m) {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (role && strcmp(role, "user") == 0)
            return json_string_value(json_object_get(m, "content"));
    }
    return NULL;
}

json_t *vat_row_params(const json_t *row)
{
    const char *text = json_string_value(json_object_get(row, "params_json"));
    json_t *p = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (!json_is_object(p)) {
        json_decref(p);
        return NULL;
    }
    return p;
}
