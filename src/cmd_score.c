/* cmd_score.c — `vat score`: scores a file of untrusted predictions against
 * a built corpus, each with its task's own checker rebuilt from the
 * verifiers table (as `vat check` does for one answer), and reports
 * accuracy per template and, for the probes, the abstention reliability a
 * user needs.  Exports vat_cmd_score and vat_score_run.
 *
 * Usage: vat score [--root DIR] [--split all|train|test] PREDICTIONS.jsonl
 *
 * Input: one JSON object per line, {"task_id": "...", "answer": ...}.  A
 * string answer is the raw answer text (a regex pattern, an SQL query, or
 * the JSON text of a value); any other JSON value stands for its own JSON
 * text, so {"answer": {"North": 1.5}} and {"answer": "{\"North\": 1.5}"}
 * are the same prediction.  Blank lines are skipped.  The input is
 * untrusted: a line longer than 1 MiB, a line that is not a JSON object,
 * lacks a string task_id or an answer, names a task that is not in the
 * corpus (or not in the --split chosen), or repeats a task_id already
 * scored gets a verdict line with gate_passed false, score 0 and code
 * too_large / parse / unknown_task / duplicate, and the run goes on.  At
 * most 1,000,000 lines are read; past that the summary says truncated.
 *
 * Output (stdout), one JSON object per line, keys in a fixed order:
 *   - one verdict per prediction line, in input order:
 *     {"task_id", "gate_passed", "score", "code", "reason"}
 *     (task_id is null when the line has none);
 *   - one {"summary": "template", ...} line per template of the corpus in
 *     scope, in name order;
 *   - last, one {"summary": "total", ...} line.
 *
 * Scope and missing predictions: the tasks in scope are every task of the
 * corpus in the chosen split (both by default).  A task in scope without a
 * valid prediction is "missing": it scores 0 in every mean, counts as
 * neither an answer nor an abstention, and adds 0 to the penalised score
 * (it is neither rewarded nor penalised: no answer was committed).
 * mean_score = sum of scores / tasks in scope.
 *
 * Probe metrics, for a template whose checker is "abstain" (unanswerable):
 *   abstention_recall    abstentions on unanswerable tasks / unanswerable tasks
 *   abstention_precision abstentions on unanswerable tasks / all abstentions
 *                        (null when there are none)
 *   answer_recall        controls answered correctly / controls
 *   trustsql_cC          the penalised score in the style of TrustSQL, for
 *                        C = 0, 1, 10: each task adds +1 when right (the
 *                        correct value on a control, the abstention on an
 *                        unanswerable task), 0 for abstaining on a control
 *                        or a missing prediction, and -C for anything else
 *                        (a wrong value or a gate failure on a control, a
 *                        value or a gate failure on an unanswerable task:
 *                        a missed abstention); the sum is divided by the
 *                        number of tasks, so 1 is the best score and an
 *                        always-abstaining model scores the share of
 *                        unanswerable tasks.
 * and a per-kind breakdown (params.kind from the experience table).  A
 * value probe (family "probe", e.g. dup_header) reports plain accuracy. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "tables.h"
#include "template.h"
#include "verifiers.h"

#define SCORE_MAX_LINE ((size_t)1 << 20)
#define SCORE_MAX_LINES 1000000L
#define SCORE_ID_SHOWN 200 /* bytes of an unknown task_id echoed back */
#define CODE_UNKNOWN_TASK "unknown_task"


static const char usage_text[] =
    "usage: vat score [--root DIR] [--split all|train|test] PREDICTIONS.jsonl\n"
    "  PREDICTIONS.jsonl holds one {\"task_id\": ..., \"answer\": ...} per line ('-' reads\n"
    "  stdin); prints one verdict line per prediction, then summary lines\n";

/* One task of the corpus, and what the predictions made of it. */
struct score_task {
    char *id;
    char *tmpl_name;
    const struct vat_template *tm; /* NULL when the registry lacks it */
    json_t *row;                   /* the verifiers row: the checker spec */
    char *kind;                    /* params.kind, when the task has one */
    bool in_scope;
    bool answered;
    struct vat_verdict v;
};

struct score_corpus {
    struct score_task *t;
    size_t n, cap;
};

static int task_cmp(const void *a, const void *b)
{
    return strcmp(((const struct score_task *)a)->id, ((const struct score_task *)b)->id);
}

static struct score_task *corpus_find(const struct score_corpus *c, const char *id)
{
    struct score_task key = {.id = (char *)id};
    return c->n ? bsearch(&key, c->t, c->n, sizeof *c->t, task_cmp) : NULL;
}

static void corpus_release(struct score_corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->t[i].id);
        free(c->t[i].tmpl_name);
        free(c->t[i].kind);
        json_decref(c->t[i].row);
    }
    free(c->t);
    memset(c, 0, sizeof *c);
}

/* Calls fn on every row of out/<table>/{train,test}.jsonl below root.
 * Returns how many of the two files could be opened. */
static int each_row(const char *root, const char *table,
                    void (*fn)(struct score_corpus *, json_t *), struct score_corpus *c)
{
    static const char *const splits[] = {"train", "test"};
    int opened = 0;
    for (size_t k = 0; k < 2; k++) {
        char *rel = vat_xasprintf("out/%s/%s.jsonl", table, splits[k]);
        char *path = vat_path_join(root, rel);
        free(rel);
        FILE *f = fopen(path, "rb");
        free(path);
        if (!f)
            continue;
        opened++;
        char *line = NULL;
        size_t lcap = 0;
        ssize_t got;
        while ((got = getline(&line, &lcap, f)) > 0) {
            json_t *row = json_loadb(line, (size_t)got, 0, NULL);
            if (json_is_object(row))
                fn(c, row);
            json_decref(row);
        }
        free(line);
        fclose(f);
    }
    return opened;
}

static void add_verifier_row(struct score_corpus *c, json_t *row)
{
    const char *id = json_string_value(json_object_get(row, "task_id"));
    const char *tn = json_string_value(json_object_get(row, "template"));
    if (!id || !tn)
        return;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->t = vat_xrealloc(c->t, c->cap * sizeof *c->t);
    }
    struct score_task *t = &c->t[c->n++];
    memset(t, 0, sizeof *t);
    t->id = vat_xstrdup(id);
    t->tmpl_name = vat_xstrdup(tn);
    t->tm = vat_template_find(tn);
    t->row = json_incref(row);
}

static void add_experience_row(struct score_corpus *c, json_t *row)
{
    const char *id = json_string_value(json_object_get(row, "task_id"));
    json_t *params = vat_row_params(row);
    const char *kind = json_string_value(json_object_get(params, "kind"));
    struct score_task *t = id && kind ? corpus_find(c, id) : NULL;
    if (t && !t->kind)
        t->kind = vat_xstrdup(kind);
    json_decref(params);
}

/* The split a task belongs to, from its verifiers row. */
static const char *task_split(const struct score_task *t)
{
    const char *s = json_string_value(json_object_get(t->row, "split"));
    return s ? s : "train";
}

static int corpus_load(struct score_corpus *c, const char *root, const char *split, char *msg,
                       size_t msgcap)
{
    memset(c, 0, sizeof *c);
    if (!each_row(root, "verifiers", add_verifier_row, c)) {
        snprintf(msg, msgcap,
                 "vat: no corpus at '%s' (out/verifiers/*.jsonl missing; run 'vat build')", root);
        return -1;
    }
    qsort(c->t, c->n, sizeof *c->t, task_cmp);
    /* A task id listed twice (a damaged corpus) keeps one of its rows. */
    size_t w = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (w > 0 && strcmp(c->t[w - 1].id, c->t[i].id) == 0) {
            free(c->t[i].id);
            free(c->t[i].tmpl_name);
            json_decref(c->t[i].row);
            continue;
        }
        c->t[w++] = c->t[i];
    }
    c->n = w;
    for (size_t i = 0; i < c->n; i++)
        c->t[i].in_scope = strcmp(split, "all") == 0 || strcmp(task_split(&c->t[i]), split) == 0;
    each_row(root, "experience", add_experience_row, c);
    return 0;
}

/* ---- reading untrusted lines ------------------------------------------------ */

/* Reads the next line into b without its line end, keeping at most cap
 * bytes; *too_long says the line was longer (its rest was skipped).
 * Returns false at the end of the input. */
static bool read_line(FILE *f, struct vat_buf *b, size_t cap, bool *too_long)
{
    b->len = 0;
    vat_buf_putn(b, "", 0);
    *too_long = false;
    bool any = false;
    int ch;
    while ((ch = getc(f)) != EOF) {
        any = true;
        if (ch == '\n')
            break;
        if (b->len < cap)
            vat_buf_putc(b, (char)ch);
        else
            *too_long = true;
    }
    if (b->len && b->data[b->len - 1] == '\r')
        b->data[--b->len] = 0;
    return any;
}

static bool blank(const struct vat_buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (!strchr(" \t\r\f\v", b->data[i]))
            return false;
    return true;
}

/* Copies at most max bytes of a valid UTF-8 string without cutting a
 * character, adding "..." when cut. */
static char *clip_utf8(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return vat_xstrdup(s);
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    char *out = vat_xmalloc(max + 4);
    memcpy(out, s, max);
    memcpy(out + max, "...", 4);
    return out;
}

static void print_verdict(FILE *out, const char *task_id, const struct vat_verdict *v)
{
    json_t *o = json_object();
    json_object_set_new(o, "task_id", task_id ? json_string(task_id) : json_null());
    json_object_set_new(o, "gate_passed", json_boolean(v->gate_passed));
    json_object_set_new(o, "score", json_real(v->score));
    json_object_set_new(o, "code", json_string(v->code));
    json_object_set_new(o, "reason", json_string(v->reason));
    char *s = vat_json_dumps(o);
    fprintf(out, "%s\n", s);
    free(s);
    json_decref(o);
}

/* Scores one prediction line; prints its verdict.  Returns true when it
 * was a valid prediction of a task in scope. */
static bool score_line(struct score_corpus *c, const char *root, const char *split,
                       const struct vat_buf *line, bool too_long, long lineno, FILE *out)
{
    struct vat_verdict v;
    if (too_long) {
        v = vat_verdict_make(false, 0, VAT_TOO_LARGE, "line %ld is longer than %zu bytes", lineno,
                             SCORE_MAX_LINE);
        print_verdict(out, NULL, &v);
        return false;
    }
    json_error_t je;
    json_t *o = json_loadb(line->data, line->len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(o)) {
        if (o)
            v = vat_verdict_make(false, 0, VAT_PARSE, "line %ld is not a JSON object", lineno);
        else
            v = vat_verdict_make(false, 0, VAT_PARSE, "line %ld is not JSON: %s", lineno, je.text);
        print_verdict(out, NULL, &v);
        json_decref(o);
        return false;
    }
    const json_t *jid = json_object_get(o, "task_id");
    const char *id = json_string_value(jid);
    if (!id || memchr(id, 0, json_string_length(jid))) {
        v = vat_verdict_make(false, 0, VAT_PARSE, "line %ld lacks a string 'task_id'", lineno);
        print_verdict(out, NULL, &v);
        json_decref(o);
        return false;
    }
    struct score_task *t = corpus_find(c, id);
    if (!t || !t->in_scope) {
        char *shown = clip_utf8(id, SCORE_ID_SHOWN), *brief = clip_utf8(id, 80);
        if (!t)
            v = vat_verdict_make(false, 0, CODE_UNKNOWN_TASK, "no task '%s' in the corpus",
                                 brief);
        else
            v = vat_verdict_make(false, 0, CODE_UNKNOWN_TASK,
                                 "task '%s' is in the %s split, not scored with --split %s",
                                 t->id, task_split(t), split);
        print_verdict(out, shown, &v);
        free(shown);
        free(brief);
        json_decref(o);
        return false;
    }
    if (t->answered) {
        v = vat_verdict_make(false, 0, VAT_DUPLICATE,
                             "line %ld repeats task '%s'; its first prediction stands", lineno,
                             t->id);
        print_verdict(out, t->id, &v);
        json_decref(o);
        return false;
    }
    const json_t *ans = json_object_get(o, "answer");
    if (!ans) {
        v = vat_verdict_make(false, 0, VAT_PARSE, "line %ld lacks 'answer'", lineno);
        print_verdict(out, t->id, &v);
        json_decref(o);
        return false;
    }
    char *text;
    size_t len;
    if (json_is_string(ans)) {
        len = json_string_length(ans);
        /* A NUL inside the string must reach the checker, not end it. */
        text = vat_xmalloc(len + 1);
        memcpy(text, json_string_value(ans), len);
        text[len] = 0;
    } else {
        text = vat_json_dumps(ans);
        len = strlen(text);
    }
    if (!t->tm) {
        v = vat_verdict_make(false, 0, VAT_INTERNAL, "task '%s' names unknown template '%s'",
                             t->id, t->tmpl_name);
    } else {
        struct vat_task task;
        vat_task_init(&task, t->tm, 0, root);
        snprintf(task.id, sizeof task.id, "%s", t->id);
        task.spec = vat_verifier_spec(t->row);
        v = t->tm->check(&task, text, len);
        vat_task_clear(&task);
    }
    free(text);
    t->answered = true;
    t->v = v;
    print_verdict(out, t->id, &v);
    json_decref(o);
    return true;
}

/* ---- the summary --------------------------------------------------------------- */

/* Tallies over the tasks in scope of one template, one kind of a probe,
 * or the whole corpus. */
struct score_tally {
    const char *name;
    long tasks, answered, gate_passed;
    double score_sum;
    /* abstain probes: unanswerable tasks and controls, abstentions on
     * each, controls answered right, and committed wrong answers */
    long unanswerable, controls, abst_right, abst_wrong, controls_right, wrong;
};

static json_t *ratio(double num, long den)
{
    return den > 0 ? json_real(num / (double)den) : json_null();
}

static bool is_abstain(const struct score_task *t)
{
    const char *checker = json_string_value(json_object_get(t->row, "checker"));
    return checker && strcmp(checker, "abstain") == 0;
}

static void tally_add(struct score_tally *a, const struct score_task *t)
{
    a->tasks++;
    if (t->answered) {
        a->answered++;
        a->gate_passed += t->v.gate_passed;
        a->score_sum += t->v.score;
    }
    if (!is_abstain(t))
        return;
    json_t *spec = vat_verifier_spec(t->row);
    bool can = json_is_true(json_object_get(spec, "answerable"));
    json_decref(spec);
    bool right = t->answered && t->v.gate_passed && t->v.score == 1.0;
    if (can) {
        a->controls++;
        if (right)
            a->controls_right++;
        else if (t->answered && strcmp(t->v.code, VAT_ABSTAINED) == 0)
            a->abst_wrong++;
        else if (t->answered)
            a->wrong++;
    } else {
        a->unanswerable++;
        if (right)
            a->abst_right++;
        else if (t->answered)
            a->wrong++;
    }
}

/* The probe metrics of an abstain template (see the top of the file). */
static void probe_metrics(json_t *o, const struct score_tally *a)
{
    static const int penalties[] = {0, 1, 10};
    json_object_set_new(o, "unanswerable", json_integer(a->unanswerable));
    json_object_set_new(o, "controls", json_integer(a->controls));
    json_object_set_new(o, "abstention_recall", ratio((double)a->abst_right, a->unanswerable));
    json_object_set_new(o, "abstention_precision",
                        ratio((double)a->abst_right, a->abst_right + a->abst_wrong));
    json_object_set_new(o, "answer_recall", ratio((double)a->controls_right, a->controls));
    for (size_t k = 0; k < sizeof penalties / sizeof penalties[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "trustsql_c%d", penalties[k]);
        double s = (double)(a->abst_right + a->controls_right) - penalties[k] * (double)a->wrong;
        json_object_set_new(o, name, ratio(s, a->tasks));
    }
}

/* Returns the tally called name in a growing list, adding it. */
static struct score_tally *tally_for(struct score_tally **list, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i].name, name) == 0)
            return &(*list)[i];
    *list = vat_xrealloc(*list, (*n + 1) * sizeof **list);
    struct score_tally *a = &(*list)[(*n)++];
    memset(a, 0, sizeof *a);
    a->name = name;
    return a;
}

static int tally_cmp(const void *a, const void *b)
{
    return strcmp(((const struct score_tally *)a)->name, ((const struct score_tally *)b)->name);
}

static void print_json_line(FILE *out, json_t *o)
{
    char *s = vat_json_dumps(o);
    fprintf(out, "%s\n", s);
    free(s);
    json_decref(o);
}

/* The probe section of one template: accuracy, and for an abstain
 * template the abstention metrics and the mean score per kind. */
static json_t *probe_section(const struct score_corpus *c, const struct score_tally *a)
{
    json_t *p = json_object();
    json_object_set_new(p, "tasks", json_integer(a->tasks));
    json_object_set_new(p, "accuracy", ratio(a->score_sum, a->tasks));
    if (a->unanswerable + a->controls == 0)
        return p;
    probe_metrics(p, a);
    struct score_tally *kinds = NULL;
    size_t nk = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct score_task *t = &c->t[i];
        if (t->in_scope && t->kind && strcmp(t->tmpl_name, a->name) == 0)
            tally_add(tally_for(&kinds, &nk, t->kind), t);
    }
    if (nk > 1)
        qsort(kinds, nk, sizeof *kinds, tally_cmp);
    json_t *ko = json_object();
    for (size_t k = 0; k < nk; k++)
        json_object_set_new(ko, kinds[k].name,
                            json_pack("{s:I, s:o}", "tasks", (json_int_t)kinds[k].tasks,
                                      "mean_score", ratio(kinds[k].score_sum, kinds[k].tasks)));
    free(kinds);
    json_object_set_new(p, "kinds", ko);
    return p;
}

static void print_summary(const struct score_corpus *c, const char *split, long lines,
                          long scored, bool truncated, FILE *out)
{
    struct score_tally total = {.name = "total"}, *per = NULL;
    size_t np = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->t[i].in_scope)
            continue;
        tally_add(tally_for(&per, &np, c->t[i].tmpl_name), &c->t[i]);
        tally_add(&total, &c->t[i]);
    }
    if (np > 1)
        qsort(per, np, sizeof *per, tally_cmp);

    json_t *means = json_object(), *probes = json_object();
    for (size_t k = 0; k < np; k++) {
        const struct score_tally *a = &per[k];
        const struct vat_template *tm = vat_template_find(a->name);
        json_t *o = json_object();
        json_object_set_new(o, "summary", json_string("template"));
        json_object_set_new(o, "template", json_string(a->name));
        json_object_set_new(o, "family", json_string(tm ? tm->family : "unknown"));
        json_object_set_new(o, "tasks", json_integer(a->tasks));
        json_object_set_new(o, "answered", json_integer(a->answered));
        json_object_set_new(o, "missing", json_integer(a->tasks - a->answered));
        json_object_set_new(o, "gate_passed", json_integer(a->gate_passed));
        json_object_set_new(o, "mean_score", ratio(a->score_sum, a->tasks));
        json_object_set_new(means, a->name, ratio(a->score_sum, a->tasks));
        if ((tm && strcmp(tm->family, "probe") == 0) || a->unanswerable + a->controls > 0) {
            json_t *p = probe_section(c, a);
            const char *key;
            json_t *x;
            json_object_foreach(p, key, x) {
                if (strcmp(key, "tasks") != 0)
                    json_object_set(o, key, x);
            }
            json_object_set_new(probes, a->name, p);
        }
        print_json_line(out, o);
    }
    free(per);

    json_t *o = json_object();
    json_object_set_new(o, "summary", json_string("total"));
    json_object_set_new(o, "split", json_string(split));
    json_object_set_new(o, "predictions", json_integer(lines));
    json_object_set_new(o, "scored", json_integer(scored));
    json_object_set_new(o, "invalid", json_integer(lines - scored));
    json_object_set_new(o, "tasks", json_integer(total.tasks));
    json_object_set_new(o, "answered", json_integer(total.answered));
    json_object_set_new(o, "missing", json_integer(total.tasks - total.answered));
    json_object_set_new(o, "mean_score", ratio(total.score_sum, total.tasks));
    json_object_set_new(o, "templates", means);
    json_object_set_new(o, "probes", probes);
    json_object_set_new(o, "truncated", json_boolean(truncated));
    print_json_line(out, o);
}

int vat_score_run(const char *root, const char *split, FILE *in, const char *in_name, FILE *out,
                  char *msg, size_t msgcap)
{
    struct score_corpus c;
    if (corpus_load(&c, root, split, msg, msgcap) != 0)
        return VAT_EXIT_USAGE;
    struct vat_buf line = VAT_BUF_INIT;
    long lines = 0, scored = 0, lineno = 0;
    bool too_long, truncated = false;
    while (read_line(in, &line, SCORE_MAX_LINE, &too_long)) {
        lineno++;
        if (!too_long && blank(&line))
            continue;
        if (lines == SCORE_MAX_LINES) {
            truncated = true;
            fprintf(stderr, "vat: '%s' has more than %ld predictions; the rest is ignored\n",
                    in_name, SCORE_MAX_LINES);
            break;
        }
        lines++;
        scored += score_line(&c, root, split, &line, too_long, lineno, out);
    }
    vat_buf_release(&line);
    if (ferror(in)) {
        /* A directory opens but cannot be read: an input error, not an
         * empty prediction file. */
        snprintf(msg, msgcap, "vat: cannot read '%s'", in_name);
        corpus_release(&c);
        return VAT_EXIT_USAGE;
    }
    print_summary(&c, split, lines, scored, truncated, out);
    corpus_release(&c);
    return VAT_EXIT_OK;
}

int vat_cmd_score(int argc, char **argv)
{
    const char *root = ".", *split = "all", *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return VAT_EXIT_OK;
        } else if (strcmp(a, "--root") == 0 && i + 1 < argc) {
            root = argv[++i];
        } else if (strcmp(a, "--split") == 0 && i + 1 < argc) {
            split = argv[++i];
            if (strcmp(split, "all") != 0 && strcmp(split, "train") != 0 &&
                strcmp(split, "test") != 0)
                return vat_cli_usage_error("--split takes all, train or test");
        } else if ((a[0] != '-' || strcmp(a, "-") == 0) && !path) {
            path = a;
        } else {
            return vat_cli_usage_error_arg("score", a);
        }
    }
    if (!path)
        return vat_cli_usage_error("score needs a PREDICTIONS.jsonl file (see 'vat score --help')");
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!in) {
        fprintf(stderr, "vat: cannot open '%s': %s\n", path, strerror(errno));
        return VAT_EXIT_USAGE;
    }
    char msg[512];
    int rc = vat_score_run(root, split, in, path, stdout, msg, sizeof msg);
    if (in != stdin)
        fclose(in);
    if (rc != VAT_EXIT_OK)
        fprintf(stderr, "%s\n", msg);
    return rc;
}
