/* tables.c — rows of the corpus tables (see tables.h). */
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
    "preference_pairs", "verifiers", "rubric_items", "env", "grpo", "sft_reasoning",
};
const char *const vat_split_names[VAT_N_SPLITS] = {"train", "test"};

void vat_table_rel(char rel[VAT_TABLE_REL_MAX], int table, int split)
{
    snprintf(rel, VAT_TABLE_REL_MAX, "out/%s/%s.jsonl", vat_table_names[table],
             vat_split_names[split]);
}
/* Declared in admit.h. */
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
/* The env table's transcript messages: OpenAI's chat form with tool
 * calls (arguments as JSON text), every member in every message. */
static const struct vat_column function_cols[] = {
    COL("name", "string"), COL("arguments", "string"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column tool_call_cols[] = {
    COL("id", "string"), COL("type", "string"), {"function", 's', NULL, function_cols, false},
    {NULL, 0, NULL, NULL, false},
};
static const struct vat_column agent_message_cols[] = {
    COL("role", "string"), COL("content", "string"),
    {"tool_calls", 'l', NULL, tool_call_cols, false}, COL("tool_call_id", "string"),
    COL("name", "string"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column env_cols[] = {
    COL("task_id", "string"), COL("split", "string"), COL("template", "string"),
    COL("family", "string"), COL("answer_kind", "string"), COL("tool_set", "string"),
    {"prompt", 'l', NULL, message_cols, false},
    {"completion", 'l', NULL, agent_message_cols, false}, COL("tools", "string"),
    COL("env_json", "string"), {NULL, 0, NULL, NULL, false},
};
static const struct vat_column grpo_cols[] = {
    COL("task_id", "string"), COL("split", "string"),
    {"prompt", 'l', NULL, message_cols, false}, COL("template", "string"),
    COL("answer_kind", "string"), COL("difficulty", "int64"), COL("self_contained", "bool"),
    {NULL, 0, NULL, NULL, false},
};
#undef COL
const struct vat_column *const vat_table_columns[VAT_N_TABLES] = {
    experience_cols, fixture_generators_cols, sft_examples_cols, rollouts_cols,
    preference_pairs_cols, verifiers_cols, rubric_items_cols, env_cols, grpo_cols,
    sft_examples_cols, /* sft_reasoning: the same columns */
};

const char *vat_system_prompt(const char *answer_kind)
{
    if (answer_kind && strcmp(answer_kind, "regex") == 0)
        return "You solve data tasks whose answers are checked by a program. Think briefly and "
               "concretely: what the question fixes, what the example lines must give, the "
               "mistake to avoid. Then end your reply with the answer, one Python re pattern, "
               "alone in a fenced code block tagged regex. Only that block is scored, whatever "
               "the task says about answering with the bare pattern.";
    if (answer_kind && strcmp(answer_kind, "sql") == 0)
        return "You solve data tasks whose answers are checked by a program. Think briefly and "
               "concretely: what the question fixes, the tables and rows that count, the "
               "mistake to avoid. Then end your reply with the answer, one SQLite SELECT "
               "statement, alone in a fenced code block tagged sql. Only that block is scored, "
               "whatever the task says about answering with the bare query.";
    return "You solve data tasks whose answers are checked by a program. Think briefly and "
           "concretely: what the question fixes, the rows and groups that count, a subtotal or "
           "two, the mistake to avoid. Then end your reply with the answer, one JSON value, "
           "alone in a fenced code block tagged json. Only that block is scored, whatever the "
           "task says about answering with the bare value.";
}

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
    /* /2: a value's gate checks the JSON type at every position (a number
     * written as a string fails it) */
    if (strcmp(checker, "abstain") == 0)
        return "vat-abstain/2";
    return "vat-value/2";
}

/* Opens a row of table id in split's buffer. */
static void row_begin(struct vat_jw *w, struct vat_tables *tb, enum vat_table_id id,
                      const char *split)
{
    int s = strcmp(split, "test") == 0 ? VAT_SPLIT_TEST : VAT_SPLIT_TRAIN;
    vat_jw_begin(w, &tb->buf[id][s]);
}

/* Opens a row of table id and writes the head most rows share: the row's
 * own id "<task_id>/<suffix>" under id_key (none when id_key is NULL),
 * task_id and split. */
static void row_head(struct vat_jw *w, struct vat_tables *tb, enum vat_table_id id,
                     const char *split, const char *id_key, const struct vat_task *t,
                     const char *suffix)
{
    row_begin(w, tb, id, split);
    if (id_key)
        vat_jw_stringf(w, id_key, "%s/%s", t->id, suffix);
    vat_jw_string(w, "task_id", t->id);
    vat_jw_string(w, "split", split);
}

static void row_end(struct vat_jw *w)
{
    vat_jw_end(w);
    vat_buf_putc(w->b, '\n');
}

static void put_seed(struct vat_jw *w, const struct vat_task *t)
{
    vat_jw_object(w, "seed");
    vat_jw_int(w, "master_seed", (long long)t->master_seed);
    vat_jw_string(w, "stream", t->stream_hex);
    vat_jw_int(w, "attempt", t->attempt);
    vat_jw_end(w);
}

static void put_fixture(struct vat_jw *w, const char *key, const struct vat_fixture *f)
{
    vat_jw_object(w, key);
    vat_jw_string(w, "path", f->path);
    vat_jw_string(w, "format", f->format);
    vat_jw_string(w, "sha256", f->sha256);
    vat_jw_int(w, "rows", f->rows);
    vat_jw_end(w);
}

/* A list holding one chat message {"role", "content"}: TRL's
 * conversational form (content left out when it is not UTF-8). */
static void put_one_message(struct vat_jw *w, const char *key, const char *role,
                            const char *content)
{
    vat_jw_array(w, key);
    vat_jw_object(w, NULL);
    vat_jw_string(w, "role", role);
    vat_jw_string(w, "content", content);
    vat_jw_end(w);
    vat_jw_end(w);
}

/* A conversational prompt: the system message for the task's answer
 * kind, then the task's prompt as the user's message. */
static void put_chat_prompt(struct vat_jw *w, const struct vat_task *t)
{
    vat_jw_array(w, "prompt");
    vat_jw_object(w, NULL);
    vat_jw_string(w, "role", "system");
    vat_jw_string(w, "content", vat_system_prompt(vat_task_answer_kind(t)));
    vat_jw_end(w);
    vat_jw_object(w, NULL);
    vat_jw_string(w, "role", "user");
    vat_jw_string(w, "content", t->prompt);
    vat_jw_end(w);
    vat_jw_end(w);
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
    else if (shape && strcmp(shape, "object_of_strings") == 0)
        what = "one JSON object mapping each key to a string";
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

/* A rollout row: one answer replayed through the task's check. */
static void put_rollout(struct vat_tables *tb, const struct vat_task *t, const char *split,
                        const char *role, const char *answer, const struct vat_verdict *v)
{
    struct vat_jw w;
    row_head(&w, tb, VAT_T_ROLLOUTS, split, "rollout_id", t, role);
    vat_jw_string(&w, "role", role);
    vat_jw_string(&w, "answer", answer);
    vat_jw_bool(&w, "gate_passed", v->gate_passed);
    vat_jw_real(&w, "score", v->score);
    vat_jw_string(&w, "code", v->code);
    vat_jw_string(&w, "reason", v->reason);
    row_end(&w);
}

static void put_rubric_item(struct vat_tables *tb, const struct vat_task *t, const char *split,
                            const char *item, const char *kind, const char *text, double weight)
{
    struct vat_jw w;
    row_head(&w, tb, VAT_T_RUBRIC_ITEMS, split, "item_id", t, item);
    vat_jw_string(&w, "item", item);
    vat_jw_string(&w, "kind", kind);
    vat_jw_string(&w, "text", text);
    vat_jw_real(&w, "weight", weight);
    row_end(&w);
}

/* The rollouts of a task: its admission replays, each single mistake of
 * a compound task, and the expert transcript's answer. */
static void put_rollouts(struct vat_tables *tb, const struct vat_task *t,
                         const struct vat_replay *r, const char *split)
{
    /* rollouts: the three admission replays */
    const char *answers[VAT_N_ROLES] = {t->gold, t->trap, t->malformed};
    for (int k = 0; k < VAT_N_ROLES; k++)
        put_rollout(tb, t, split, vat_role_names[k], answers[k], &r->v[k]);
    /* A compound task replays each single mistake under its own role. */
    for (int i = 0; i < t->n_traps; i++) {
        char *role = vat_xasprintf("trap:%s", t->traps[i].name);
        put_rollout(tb, t, split, role, t->traps[i].answer, &r->traps[i]);
        free(role);
    }
    /* The expert transcript's answer, replayed through the environment
     * (templates/expert.h): there only when it scored 1.0. */
    const json_t *agent = json_object_get(t->env, "agent");
    if (json_is_object(agent)) {
        struct vat_verdict av = vat_verdict_make(
            json_is_true(json_object_get(agent, "gate_passed")),
            json_number_value(json_object_get(agent, "score")),
            VAT_OK, "%s", json_string_value(json_object_get(agent, "reason")));
        put_rollout(tb, t, split, "agent", json_string_value(json_object_get(agent, "answer")),
                    &av);
    }

}

/* The rubric items of a task: its gate, its score, and each trap. */
static void put_rubric_items(struct vat_tables *tb, const struct vat_task *t, const char *split)
{
    const struct vat_template *tm = t->tmpl;
    /* rubric_items */
    char *gate = describe_answer(t), *score = describe_score(t);
    char *text = vat_xasprintf("The answer is %s", gate);
    put_rubric_item(tb, t, split, "gate", "gate", text, VAT_RUBRIC_GATE);
    free(text);
    put_rubric_item(tb, t, split, "score", "score", score, VAT_RUBRIC_SCORE);
    text = vat_xasprintf("The answer avoids the trap: %s", tm->trap);
    put_rubric_item(tb, t, split, "trap", "trap", text, vat_rubric_trap_weight(t->n_traps));
    free(text);
    /* One rubric item per armed trap of a compound task, named by it. */
    for (int i = 0; i < t->n_traps; i++) {
        char *item = vat_xasprintf("trap:%s", t->traps[i].name);
        text = vat_xasprintf("The answer avoids the mistake '%s': %s", t->traps[i].name,
                             t->traps[i].text);
        put_rubric_item(tb, t, split, item, "trap", text, vat_rubric_trap_weight(t->n_traps));
        free(item);
        free(text);
    }
    free(gate);
    free(score);

}

/* Each row is written member by member straight into its split's buffer
 * (vat_jw), in the layout's order (vat_table_columns). */
void vat_tables_add_task(struct vat_tables *tb, const struct vat_task *t,
                         const struct vat_replay *r, const char *split)
{
    const struct vat_template *tm = t->tmpl;
    const char *checker = json_string_value(json_object_get(t->spec, "checker"));
    if (!checker)
        checker = tm->answer_kind;
    json_t *empty = json_object();
    /* as JSON text once: the experience row and every fixture's row carry it */
    char *params = vat_json_dumps(t->params ? t->params : empty);
    json_decref(empty);
    char *gold = vat_answer_text(t, t->gold);
    struct vat_jw w;

    /* experience */
    row_begin(&w, tb, VAT_T_EXPERIENCE, split);
    vat_jw_string(&w, "task_id", t->id);
    vat_jw_string(&w, "template", tm->name);
    vat_jw_string(&w, "family", tm->family);
    vat_jw_string(&w, "split", split);
    vat_jw_string(&w, "answer_kind", vat_task_answer_kind(t));
    vat_jw_string(&w, "answer_form", vat_task_answer_form(t));
    vat_jw_string(&w, "prompt", t->prompt);
    vat_jw_string(&w, "gold", gold);
    vat_jw_bool(&w, "self_contained", t->self_contained);
    put_fixture(&w, "fixture", &t->fixture[0]);
    vat_jw_array(&w, "variants");
    for (int i = 1; i < t->n_fixtures; i++)
        put_fixture(&w, NULL, &t->fixture[i]);
    vat_jw_end(&w);
    vat_jw_string(&w, "params_json", params);
    vat_jw_int(&w, "difficulty", t->difficulty);
    vat_jw_string(&w, "trap", tm->trap);
    /* how the prompt is worded, and which phrasings it drew (vat audit counts them) */
    vat_jw_string(&w, "prompt_style", t->prompt_style ? t->prompt_style : "explicit");
    vat_jw_string(&w, "phrasing", t->phrasing);
    vat_jw_array(&w, "armed_traps");
    for (int i = 0; i < t->n_traps; i++)
        vat_jw_string(&w, NULL, t->traps[i].name);
    vat_jw_end(&w);
    put_seed(&w, t);
    vat_jw_string(&w, "vat_version", VAT_VERSION);
    row_end(&w);

    /* fixture_generators */
    for (int i = 0; i < t->n_fixtures; i++) {
        const struct vat_fixture *f = &t->fixture[i];
        char which[16] = "main";
        if (i > 0)
            snprintf(which, sizeof which, "v%d", i);
        row_head(&w, tb, VAT_T_FIXTURE_GENERATORS, split, "fixture_id", t, which);
        vat_jw_string(&w, "path", f->path);
        vat_jw_string(&w, "role", f->role);
        vat_jw_string(&w, "format", f->format);
        vat_jw_object(&w, "generator");
        vat_jw_string(&w, "name", tm->name);
        vat_jw_string(&w, "version", VAT_VERSION);
        vat_jw_end(&w);
        put_seed(&w, t);
        vat_jw_string(&w, "params_json", params);
        vat_jw_string(&w, "sha256", f->sha256);
        vat_jw_int(&w, "rows", f->rows);
        if (f->columns) {
            vat_jw_value(&w, "columns", f->columns);
        } else {
            vat_jw_array(&w, "columns");
            vat_jw_end(&w);
        }
        row_end(&w);
    }

    /* sft_examples: TRL's conversational prompt-completion form */
    row_head(&w, tb, VAT_T_SFT_EXAMPLES, split, NULL, t, NULL);
    put_one_message(&w, "prompt", "user", t->prompt);
    put_one_message(&w, "completion", "assistant", gold);
    vat_jw_bool(&w, "self_contained", t->self_contained);
    row_end(&w);

    put_rollouts(tb, t, r, split);

    /* preference_pairs: the armed trap is the rejected side */
    const struct vat_verdict *tv = &r->v[VAT_ROLE_TRAP];
    row_head(&w, tb, VAT_T_PREFERENCE_PAIRS, split, "pair_id", t, "trap");
    put_one_message(&w, "prompt", "user", t->prompt);
    put_one_message(&w, "chosen", "assistant", gold);
    put_one_message(&w, "rejected", "assistant", t->trap);
    vat_jw_stringf(&w, "rejected_reason", "%s: %s", tv->code, tv->reason);
    vat_jw_string(&w, "signal", "trap");
    /* Both sides are programs (regex, sql, analytics in program form)
     * whose outputs differ on the task's fixtures (the trap is armed, so
     * its rows or matches differ), or both are bare values. */
    {
        const char *kind = vat_task_answer_kind(t);
        bool program = strcmp(kind, "regex") == 0 || strcmp(kind, "sql") == 0;
        vat_jw_string(&w, "pair_kind", program ? "program" : "value");
    }
    vat_jw_bool(&w, "self_contained", t->self_contained);
    row_end(&w);

    /* verifiers: the whole checker spec, so `vat check` can rebuild it.
     * Its shape differs per checker, so it travels as JSON text; the
     * expected value (a JSON value of any shape) has a column of its own,
     * as canonical JSON text, so readers need not dig for it. */
    row_head(&w, tb, VAT_T_VERIFIERS, split, NULL, t, NULL);
    vat_jw_string(&w, "template", tm->name);
    vat_jw_string(&w, "checker", checker);
    vat_jw_string(&w, "checker_version", vat_checker_version(checker));
    vat_verifier_put_spec(&w, t->spec);
    row_end(&w);

    put_rubric_items(tb, t, split);

    /* grpo: the prompt in conversational form for RL trainers, and the
     * columns reward functions and filters read */
    row_head(&w, tb, VAT_T_GRPO, split, NULL, t, NULL);
    put_chat_prompt(&w, t);
    vat_jw_string(&w, "template", tm->name);
    vat_jw_string(&w, "answer_kind", vat_task_answer_kind(t));
    vat_jw_int(&w, "difficulty", t->difficulty);
    vat_jw_bool(&w, "self_contained", t->self_contained);
    row_end(&w);

    /* sft_reasoning: the same prompt, and the worked completion admission
     * proved (reasoning, then gold in a fence of its kind) */
    row_head(&w, tb, VAT_T_SFT_REASONING, split, NULL, t, NULL);
    put_chat_prompt(&w, t);
    put_one_message(&w, "completion", "assistant", t->reasoned ? t->reasoned : gold);
    vat_jw_bool(&w, "self_contained", t->self_contained);
    row_end(&w);

    /* env: the task as a tool-use environment */
    if (t->env) {
        row_head(&w, tb, VAT_T_ENV, split, NULL, t, NULL);
        vat_jw_string(&w, "template", tm->name);
        vat_jw_string(&w, "family", tm->family);
        vat_jw_string(&w, "answer_kind", vat_task_answer_kind(t));
        vat_jw_string(&w, "tool_set", json_string_value(json_object_get(t->env, "tool_set")));
        put_one_message(&w, "prompt", "user",
                        json_string_value(json_object_get(t->env, "prompt")));
        vat_jw_value(&w, "completion", json_object_get(t->env, "completion"));
        vat_jw_string(&w, "tools", json_string_value(json_object_get(t->env, "tools")));
        vat_jw_string(&w, "env_json", json_string_value(json_object_get(t->env, "env_json")));
        row_end(&w);
    }
    free(gold);
    free(params);
}

int vat_tables_write(struct vat_tables *tb, const char *root, struct vat_err *e)
{
    for (int i = 0; i < VAT_N_TABLES; i++) {
        for (int s = 0; s < VAT_N_SPLITS; s++) {
            char rel[VAT_TABLE_REL_MAX];
            vat_table_rel(rel, i, s);
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

void vat_verifier_put_spec(struct vat_jw *w, const json_t *spec)
{
    const json_t *expected = json_object_get(spec, "expected");
    if (expected) {
        vat_jw_text(w, "expected", expected);
    } else {
        json_t *null = json_null();
        vat_jw_value(w, "expected", null);
        json_decref(null);
    }
    json_t *rest = json_object();
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)spec, k, x) {
        if (strcmp(k, "expected") != 0)
            json_object_set(rest, k, x);
    }
    vat_jw_text(w, "spec_json", rest);
    json_decref(rest);
}

void vat_verifier_set_spec(json_t *row, const json_t *spec)
{
    struct vat_buf b = VAT_BUF_INIT;
    struct vat_jw w;
    vat_jw_begin(&w, &b);
    vat_verifier_put_spec(&w, spec);
    vat_jw_end(&w);
    json_t *cols = json_loadb(b.data, b.len, 0, NULL);
    const char *k;
    json_t *x;
    json_object_foreach(cols, k, x)
        json_object_set(row, k, x);
    json_decref(cols);
    vat_buf_release(&b);
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
