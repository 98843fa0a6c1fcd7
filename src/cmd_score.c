/* cmd_score.c — `vat score`: scores a file of untrusted predictions against
 * a built corpus, each with its task's own checker rebuilt from the
 * verifiers table (as `vat check` does for one answer), and reports
 * accuracy per template and, for the probes, the abstention reliability a
 * user needs.  Exports vat_cmd_score, vat_score_run and vat_score_run_mode.
 *
 * Usage: vat score [--root DIR] [--split all|train|test] [--extract auto|raw]
 *                  [--k 1,4,16] [--reveal-hidden] [PREDICTIONS.jsonl | -]   (no file: stdin)
 *
 * Scoring goes through the reward library (lib/corpus.h): the corpus is
 * opened once, each prediction scored by vat_corpus_score_verdict with the
 * extraction mode given (auto by default, as in Python: the answer is taken
 * out of a completion; raw scores the text as given).
 *
 * Input: one JSON object per line, {"task_id": "...", "answer": ...,
 * "sample": N}.  A string answer is the raw answer text (a regex pattern,
 * an SQL query, the JSON text of a value, or a model's completion with
 * --extract auto); any other JSON value stands for its own JSON text, so
 * {"answer": {"North": 1.5}} and {"answer": "{\"North\": 1.5}"} are the
 * same prediction.  Numbers of any size are taken as the text they are
 * (src/predline.c), so "1e400" reaches the checker (not_finite).  Several
 * lines may name the same task: each is one sample of it.  "sample" is
 * optional (an integer 0..1000000); a line repeating a task's sample
 * number gets code duplicate and is not counted.  Blank lines are skipped.
 * The input is untrusted: a line longer than 1 MiB, a line that is not a
 * JSON object or lacks a readable string task_id gets a verdict with
 * task_id null and code too_large / parse; a line whose task id can be
 * read but whose answer cannot (missing, not JSON, bad "sample") gets code
 * parse and COUNTS against its task as a prediction scoring 0; an id not
 * in the corpus (or not in the --split chosen) gets unknown_task.  At most
 * 1,000,000 lines are read; past that the summary says truncated.
 *
 * Output (stdout), one JSON object per line, keys in a fixed order:
 *   - one verdict per prediction line, in input order:
 *     {"task_id", "gate_passed", "score", "code", "reason", "extracted",
 *     "extract_rule", "is_trap"} and "sample" when the line gave one
 *     (task_id is null when the line has none; extracted and extract_rule
 *     are null, is_trap false, on a line that was not scored);
 *   - one {"summary": "template", ...} line per template of the corpus in
 *     scope, in name order;
 *   - last, one {"summary": "total", ...} line.
 *
 * Summary figures (per template and in total), over the tasks in scope:
 *   tasks, predictions (lines counted against a task), answered (tasks
 *   with at least one prediction), missing (tasks with none), gate_passed
 *   (predictions), mean_per_prediction, mean_per_answered_task (each
 *   task's mean over its predictions, averaged over answered tasks),
 *   mean_score_all_tasks (the same averaged over every task in scope, a
 *   missing task counting 0: the historical mean_score), and k with
 *   pass@k and mean@k: k is the fewest predictions any answered task has;
 *   pass@k is the unbiased estimate 1 - C(n-c,k)/C(n,k) (n predictions,
 *   c of them scoring 1.0) averaged over answered tasks, mean@k the
 *   average task mean.  With --k, for each k asked: pass@k over the tasks
 *   with at least k predictions (null when none has), tasks@k those tasks,
 *   short@k the answered tasks left out for having fewer.
 *   checker_errors counts the predictions whose
 *   verdict is internal, tampered or checker_limit: the checker or the
 *   corpus, not the model, failed; they are left out of every model
 *   figure above, and `vat score` exits 1 when there are any.
 *
 * Probe metrics, for a template whose checker is "abstain" (unanswerable),
 * with every prediction of a task weighing 1/n of it (so one prediction
 * per task gives the classic figures):
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
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corpus.h"
#include "jsonout.h"
#include "predline.h"
#include "tables.h"
#include "template.h"

#define SCORE_MAX_LINE ((size_t)1 << 20)
#define SCORE_MAX_LINES 1000000L
#define SCORE_ID_SHOWN 200 /* bytes of an unknown task_id echoed back */
#define CODE_UNKNOWN_TASK "unknown_task"
#ifndef VAT_CHECKER_LIMIT
#define VAT_CHECKER_LIMIT "checker_limit" /* i9a's code: the checker hit a last-resort net */
#endif

static const char score_about[] =
    "Scores PREDICTIONS.jsonl (standard input when no file, or '-', is given): one\n"
    "{\"task_id\": ..., \"answer\": ..., \"sample\": N} per line, several per task\n"
    "allowed.  Prints one verdict line per prediction, then summary lines per\n"
    "template and in total.  The answer is taken out of a model's completion by\n"
    "the auto rules of docs/extraction.md (--extract raw scores it as given).\n"
    "--k adds the unbiased pass@k for each k listed (tasks with fewer than k\n"
    "predictions are left out of that k and counted in short@k).\n"
    "Reasons name held-out cases without quoting them; --reveal-hidden quotes\n"
    "them (for a dataset author, never for a model's feedback).";

/* The verdict codes that blame the checker or the corpus, not the model. */
static const char *const checker_error_codes[] = {VAT_INTERNAL, VAT_TAMPERED, VAT_CHECKER_LIMIT};
#define N_CHECKER_ERRORS 3

static int checker_error(const char *code)
{
    for (int k = 0; k < N_CHECKER_ERRORS; k++)
        if (strcmp(code, checker_error_codes[k]) == 0)
            return k;
    return -1;
}

/* One task of the corpus, and what the predictions made of it. */
struct score_task {
    const char *id;        /* the corpus's */
    const char *tmpl_name; /* borrowed from the row */
    const json_t *row;     /* the verifiers row (borrowed from the corpus) */
    char *kind;            /* params.kind, when the task has one */
    bool in_scope;
    long n;                /* predictions counted */
    long passed;           /* of them scoring 1.0 */
    long gate;             /* of them passing the gate */
    double sum;            /* their scores */
    /* abstain probes: the predictions' shares */
    long abst_right, abst_wrong, right, wrong;
    long *samples;         /* sample numbers seen */
    size_t n_samples, cap_samples;
};

struct score_corpus {
    vat_corpus *vc;
    struct score_task *t;
    size_t n;
    long checker_errors[N_CHECKER_ERRORS];
    const struct vat_score_opts *opts;
};

static int task_cmp(const void *a, const void *b)
{
    return strcmp(((const struct score_task *)a)->id, ((const struct score_task *)b)->id);
}

static struct score_task *corpus_find(const struct score_corpus *c, const char *id)
{
    struct score_task key = {.id = id};
    return c->n ? bsearch(&key, c->t, c->n, sizeof *c->t, task_cmp) : NULL;
}

static void corpus_release(struct score_corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->t[i].kind);
        free(c->t[i].samples);
    }
    free(c->t);
    vat_corpus_close(c->vc);
    memset(c, 0, sizeof *c);
}

/* The split a task belongs to, from its verifiers row. */
static const char *task_split(const struct score_task *t)
{
    const char *s = json_string_value(json_object_get(t->row, "split"));
    return s ? s : "train";
}

static bool is_abstain(const struct score_task *t)
{
    const char *checker = json_string_value(json_object_get(t->row, "checker"));
    return checker && strcmp(checker, "abstain") == 0;
}

static int corpus_load(struct score_corpus *c, const char *root, const char *split,
                       unsigned open_flags, char *msg, size_t msgcap)
{
    memset(c, 0, sizeof *c);
    vat_error err;
    if (vat_corpus_open_flags(&c->vc, root, open_flags, &err) != 0) {
        snprintf(msg, msgcap, "%s", err.message);
        return -1;
    }
    size_t n = vat_corpus_task_count(c->vc);
    c->t = vat_xcalloc(n ? n : 1, sizeof *c->t);
    for (size_t i = 0; i < n; i++) {
        const char *id = vat_corpus_task_id(c->vc, i);
        const json_t *row = vat_corpus_row(c->vc, id);
        const char *tn = json_string_value(json_object_get(row, "template"));
        if (!tn)
            continue; /* a row without a template is no task */
        struct score_task *t = &c->t[c->n++];
        t->id = id;
        t->tmpl_name = tn;
        t->row = row;
        t->in_scope = strcmp(split, "all") == 0 || strcmp(task_split(t), split) == 0;
        if (is_abstain(t)) {
            const json_t *e = vat_corpus_experience_row(c->vc, id);
            json_t *params = vat_row_params(e);
            const char *kind = json_string_value(json_object_get(params, "kind"));
            if (kind)
                t->kind = vat_xstrdup(kind);
            json_decref(params);
        }
    }
    qsort(c->t, c->n, sizeof *c->t, task_cmp);
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

/* One verdict line; sc is the scored answer (NULL for a line that was not
 * scored). */
static void print_verdict(FILE *out, const char *task_id, long sample,
                          const struct vat_verdict *v, const struct vat_scored *sc)
{
    json_t *o = json_object();
    json_object_set_new(o, "task_id", task_id ? json_string(task_id) : json_null());
    json_object_set_new(o, "gate_passed", json_boolean(v->gate_passed));
    json_object_set_new(o, "score", json_real(v->score));
    json_object_set_new(o, "code", json_string(v->code));
    json_object_set_new(o, "reason", json_string(v->reason));
    /* (an answer read from a JSON line is valid UTF-8; should one not be,
     * extracted is null, as in `vat check`) */
    json_t *x = sc ? json_stringn(sc->extracted ? sc->extracted : "", sc->extracted_len) : NULL;
    json_object_set_new(o, "extracted", x ? x : json_null());
    json_object_set_new(o, "extract_rule",
                        sc && sc->rule ? json_string(sc->rule) : json_null());
    json_object_set_new(o, "is_trap", json_boolean(sc && sc->is_trap));
    if (sample >= 0)
        json_object_set_new(o, "sample", json_integer(sample));
    char *s = vat_json_dumps(o);
    fprintf(out, "%s\n", s);
    free(s);
    json_decref(o);
}

/* Counts one prediction's verdict against its task. */
static void count(struct score_corpus *c, struct score_task *t, const struct vat_verdict *v)
{
    int ce = checker_error(v->code);
    if (ce >= 0) {
        c->checker_errors[ce]++;
        return;
    }
    bool one = v->gate_passed && v->score == 1.0;
    t->n++;
    t->sum += v->score;
    t->gate += v->gate_passed;
    t->passed += one;
    if (!is_abstain(t))
        return;
    json_t *spec = vat_verifier_spec(t->row);
    bool can = json_is_true(json_object_get(spec, "answerable"));
    json_decref(spec);
    if (can) {
        if (one)
            t->right++;
        else if (strcmp(v->code, VAT_ABSTAINED) == 0)
            t->abst_wrong++;
        else
            t->wrong++;
    } else {
        if (one)
            t->abst_right++;
        else
            t->wrong++;
    }
}

/* Scores one prediction line; prints its verdict.  Returns true when it
 * was counted against a task in scope. */
static bool score_line(struct score_corpus *c, const char *split, vat_extract_mode mode,
                       const struct vat_buf *line, bool too_long, long lineno, FILE *out)
{
    struct vat_verdict v;
    if (too_long) {
        v = vat_verdict_make(false, 0, VAT_TOO_LARGE, "line %ld is longer than %zu bytes", lineno,
                             SCORE_MAX_LINE);
        print_verdict(out, NULL, -1, &v, NULL);
        return false;
    }
    struct vat_pred p;
    int rc = vat_pred_read(line->data, line->len, &p);
    if (!p.task_id) {
        v = vat_verdict_make(false, 0, p.code, "line %ld: %s", lineno, p.reason);
        print_verdict(out, NULL, -1, &v, NULL);
        vat_pred_release(&p);
        return false;
    }
    struct score_task *t = corpus_find(c, p.task_id);
    if (!t || !t->in_scope) {
        char *shown = clip_utf8(p.task_id, SCORE_ID_SHOWN), *brief = clip_utf8(p.task_id, 80);
        if (!t)
            v = vat_verdict_make(false, 0, CODE_UNKNOWN_TASK, "no task '%s' in the corpus",
                                 brief);
        else
            v = vat_verdict_make(false, 0, CODE_UNKNOWN_TASK,
                                 "task '%s' is in the %s split, not scored with --split %s",
                                 t->id, task_split(t), split);
        print_verdict(out, shown, p.sample, &v, NULL);
        free(shown);
        free(brief);
        vat_pred_release(&p);
        return false;
    }
    if (p.sample >= 0) {
        for (size_t k = 0; k < t->n_samples; k++)
            if (t->samples[k] == p.sample) {
                v = vat_verdict_make(false, 0, VAT_DUPLICATE,
                                     "line %ld repeats sample %ld of task '%s'; its first "
                                     "prediction stands",
                                     lineno, p.sample, t->id);
                print_verdict(out, t->id, p.sample, &v, NULL);
                vat_pred_release(&p);
                return false;
            }
        if (t->n_samples == t->cap_samples) {
            t->cap_samples = t->cap_samples ? 2 * t->cap_samples : 4;
            t->samples = vat_xrealloc(t->samples, t->cap_samples * sizeof *t->samples);
        }
        t->samples[t->n_samples++] = p.sample;
    }
    struct vat_scored sc;
    bool scored = false;
    if (rc != 0) {
        /* the id is known, the answer is not: a prediction scoring 0 */
        v = vat_verdict_make(false, 0, p.code, "line %ld: %s", lineno, p.reason);
    } else {
        vat_error err;
        if (vat_corpus_score_verdict(c->vc, t->id, p.answer, p.answer_len, mode, &sc, &err) !=
            0) {
            v = vat_verdict_make(false, 0, VAT_INTERNAL, "%s", err.message);
        } else {
            v = sc.v;
            scored = true;
        }
    }
    count(c, t, &v);
    print_verdict(out, t->id, p.sample, &v, scored ? &sc : NULL);
    if (scored)
        vat_scored_release(&sc);
    vat_pred_release(&p);
    return true;
}

/* ---- the summary --------------------------------------------------------------- */

/* Tallies over the tasks in scope of one template, one kind of a probe,
 * or the whole corpus. */
struct score_tally {
    const char *name;
    long tasks, answered, predictions, gate_passed;
    double pred_sum;     /* scores of every prediction */
    double task_mean_sum;/* each answered task's mean score */
    long k;              /* fewest predictions of an answered task (0: none yet) */
    /* abstain probes, in task shares (each prediction weighs 1/n of its task) */
    long unanswerable, controls;
    double abst_right, abst_wrong, controls_right, wrong;
};

static json_t *ratio(double num, long den)
{
    return den > 0 ? json_real(num / (double)den) : json_null();
}

static void tally_add(struct score_tally *a, const struct score_task *t)
{
    a->tasks++;
    a->predictions += t->n;
    a->gate_passed += t->gate;
    a->pred_sum += t->sum;
    if (t->n) {
        a->answered++;
        a->task_mean_sum += t->sum / (double)t->n;
        if (a->k == 0 || t->n < a->k)
            a->k = t->n;
    }
    if (!is_abstain(t))
        return;
    double w = t->n ? 1.0 / (double)t->n : 0;
    json_t *spec = vat_verifier_spec(t->row);
    bool can = json_is_true(json_object_get(spec, "answerable"));
    json_decref(spec);
    if (can) {
        a->controls++;
        a->controls_right += w * (double)t->right;
        a->abst_wrong += w * (double)t->abst_wrong;
        a->wrong += w * (double)t->wrong;
    } else {
        a->unanswerable++;
        a->abst_right += w * (double)t->abst_right;
        a->wrong += w * (double)t->wrong;
    }
}

/* pass@k for one task with n predictions of which c scored 1.0: the
 * unbiased estimate 1 - C(n-c, k) / C(n, k), as a running product. */
static double pass_at_k(long n, long c, long k)
{
    if (n - c < k)
        return 1.0;
    double fail = 1.0;
    for (long i = n - c + 1; i <= n; i++)
        fail *= 1.0 - (double)k / (double)i;
    return 1.0 - fail;
}

/* The probe metrics of an abstain template (see the top of the file). */
static void probe_metrics(json_t *o, const struct score_tally *a)
{
    static const int penalties[] = {0, 1, 10};
    json_object_set_new(o, "unanswerable", json_integer(a->unanswerable));
    json_object_set_new(o, "controls", json_integer(a->controls));
    json_object_set_new(o, "abstention_recall", ratio(a->abst_right, a->unanswerable));
    json_object_set_new(o, "abstention_precision",
                        a->abst_right + a->abst_wrong > 0
                            ? json_real(a->abst_right / (a->abst_right + a->abst_wrong))
                            : json_null());
    json_object_set_new(o, "answer_recall", ratio(a->controls_right, a->controls));
    for (size_t k = 0; k < sizeof penalties / sizeof penalties[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "trustsql_c%d", penalties[k]);
        double s = (a->abst_right + a->controls_right) - penalties[k] * a->wrong;
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

/* The figures every summary line gives (see the top of the file). */
static void put_figures(json_t *o, const struct score_corpus *c, const struct score_tally *a,
                        bool (*in)(const struct score_task *, const void *), const void *arg)
{
    json_object_set_new(o, "tasks", json_integer(a->tasks));
    json_object_set_new(o, "predictions", json_integer(a->predictions));
    json_object_set_new(o, "answered", json_integer(a->answered));
    json_object_set_new(o, "missing", json_integer(a->tasks - a->answered));
    json_object_set_new(o, "gate_passed", json_integer(a->gate_passed));
    json_object_set_new(o, "mean_per_prediction", ratio(a->pred_sum, a->predictions));
    json_object_set_new(o, "mean_per_answered_task", ratio(a->task_mean_sum, a->answered));
    json_object_set_new(o, "mean_score_all_tasks", ratio(a->task_mean_sum, a->tasks));
    json_object_set_new(o, "k", json_integer(a->k));
    double pass = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct score_task *t = &c->t[i];
        if (t->in_scope && t->n && in(t, arg))
            pass += pass_at_k(t->n, t->passed, a->k);
    }
    char name[40];
    snprintf(name, sizeof name, "pass@%ld", a->k);
    json_object_set_new(o, name, ratio(pass, a->answered));
    snprintf(name, sizeof name, "mean@%ld", a->k);
    json_object_set_new(o, name, ratio(a->task_mean_sum, a->answered));
    /* --k: every k asked, over the tasks with at least k predictions */
    for (size_t j = 0; c->opts && j < c->opts->n_ks; j++) {
        long k = c->opts->ks[j], counted = 0, short_of = 0;
        double sum = 0;
        for (size_t i = 0; i < c->n; i++) {
            const struct score_task *t = &c->t[i];
            if (!t->in_scope || !t->n || !in(t, arg))
                continue;
            if (t->n < k) {
                short_of++;
                continue;
            }
            counted++;
            sum += pass_at_k(t->n, t->passed, k);
        }
        snprintf(name, sizeof name, "pass@%ld", k);
        json_object_set_new(o, name, ratio(sum, counted));
        snprintf(name, sizeof name, "tasks@%ld", k);
        json_object_set_new(o, name, json_integer(counted));
        snprintf(name, sizeof name, "short@%ld", k);
        json_object_set_new(o, name, json_integer(short_of));
    }
}

static bool in_template(const struct score_task *t, const void *name)
{
    return strcmp(t->tmpl_name, name) == 0;
}

static bool in_all(const struct score_task *t, const void *arg)
{
    (void)t;
    (void)arg;
    return true;
}

/* The probe section of one template: accuracy, and for an abstain
 * template the abstention metrics and the mean score per kind. */
static json_t *probe_section(const struct score_corpus *c, const struct score_tally *a)
{
    json_t *p = json_object();
    json_object_set_new(p, "tasks", json_integer(a->tasks));
    json_object_set_new(p, "accuracy", ratio(a->task_mean_sum, a->tasks));
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
                                      "mean_score", ratio(kinds[k].task_mean_sum, kinds[k].tasks)));
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
        put_figures(o, c, a, in_template, a->name);
        json_object_set_new(means, a->name, ratio(a->task_mean_sum, a->tasks));
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
    json_object_set_new(o, "lines", json_integer(lines));
    json_object_set_new(o, "scored", json_integer(scored));
    json_object_set_new(o, "invalid", json_integer(lines - scored));
    put_figures(o, c, &total, in_all, NULL);
    json_t *ce = json_object();
    long n_ce = 0;
    for (int k = 0; k < N_CHECKER_ERRORS; k++) {
        json_object_set_new(ce, checker_error_codes[k], json_integer(c->checker_errors[k]));
        n_ce += c->checker_errors[k];
    }
    json_object_set_new(o, "checker_errors", json_integer(n_ce));
    json_object_set_new(o, "checker_error_codes", ce);
    json_object_set_new(o, "templates", means);
    json_object_set_new(o, "probes", probes);
    json_object_set_new(o, "truncated", json_boolean(truncated));
    print_json_line(out, o);
}

int vat_score_run_opts(const struct vat_score_opts *o, FILE *in, const char *in_name, FILE *out,
                       char *msg, size_t msgcap)
{
    const char *split = o->split ? o->split : "all";
    vat_extract_mode mode = o->mode;
    struct score_corpus c;
    if (corpus_load(&c, o->root, split, o->open_flags, msg, msgcap) != 0)
        return VAT_EXIT_USAGE;
    c.opts = o;
    struct vat_buf line = VAT_BUF_INIT;
    long lines = 0, scored = 0, lineno = 0;
    bool too_long, truncated = false;
    while (read_line(in, &line, SCORE_MAX_LINE, &too_long)) {
        lineno++;
        if (!too_long && blank(&line))
            continue;
        if (lines == SCORE_MAX_LINES) {
            truncated = true;
            vat_cli_linef(stderr, "vat: '%s' has more than %ld predictions; the rest is ignored",
                          in_name, SCORE_MAX_LINES);
            break;
        }
        lines++;
        scored += score_line(&c, split, mode, &line, too_long, lineno, out);
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
    long n_ce = 0;
    for (int k = 0; k < N_CHECKER_ERRORS; k++)
        n_ce += c.checker_errors[k];
    corpus_release(&c);
    if (n_ce) {
        snprintf(msg, msgcap,
                 "vat: %ld verdicts blame the checker or the corpus (internal, tampered or "
                 "checker_limit), not the model; see checker_errors",
                 n_ce);
        return VAT_EXIT_CORPUS;
    }
    return VAT_EXIT_OK;
}

int vat_score_run_mode(const char *root, const char *split, vat_extract_mode mode, FILE *in,
                       const char *in_name, FILE *out, char *msg, size_t msgcap)
{
    struct vat_score_opts o = {.root = root, .split = split, .mode = mode};
    return vat_score_run_opts(&o, in, in_name, out, msg, msgcap);
}

int vat_score_run(const char *root, const char *split, FILE *in, const char *in_name, FILE *out,
                  char *msg, size_t msgcap)
{
    return vat_score_run_mode(root, split, VAT_EXTRACT_RAW, in, in_name, out, msg, msgcap);
}

static int long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int vat_score_parse_ks(const char *s, struct vat_score_opts *o)
{
    o->n_ks = 0;
    const char *p = s;
    for (;;) {
        if (*p < '1' || *p > '9')
            return -1;
        long k = 0;
        while (*p >= '0' && *p <= '9') {
            k = k * 10 + (*p++ - '0');
            if (k > 1000000)
                return -1;
        }
        if (o->n_ks == VAT_SCORE_MAX_KS)
            return -1;
        o->ks[o->n_ks++] = k;
        if (!*p)
            break;
        if (*p++ != ',')
            return -1;
    }
    qsort(o->ks, o->n_ks, sizeof o->ks[0], long_cmp);
    size_t w = 0;
    for (size_t i = 0; i < o->n_ks; i++)
        if (!w || o->ks[w - 1] != o->ks[i])
            o->ks[w++] = o->ks[i];
    o->n_ks = w;
    return 0;
}

int vat_cmd_score(int argc, char **argv)
{
    const char *root = ".", *split = "all", *path = NULL, *extract = "auto", *ks = NULL;
    int reveal = 0;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (default .)", &root),
        VAT_OPT_VALUE("split", 0, "SPLIT", "all (default), train or test: the tasks in scope",
                      &split),
        VAT_OPT_VALUE("extract", 0, "MODE", "auto (default: the answer out of a completion) or "
                                            "raw (the text as given)", &extract),
        VAT_OPT_VALUE("k", 0, "K,K,...", "add the unbiased pass@k for each k listed (1,4,16)",
                      &ks),
        VAT_OPT_FLAG("reveal-hidden", 0, "quote held-out cases in reasons (for a dataset author)",
                     &reveal),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "score",
        "vat score [--root DIR] [--split all|train|test] [--extract auto|raw] [--k 1,4,16]\n"
        "                 [--reveal-hidden] [PREDICTIONS.jsonl | -]",
        score_about, opts,
        "0 scored (whatever the scores), 1 a verdict blames the checker or the corpus\n"
        "            (internal, tampered, checker_limit), 2 usage or input error"};
    int npos = 0;
    int prc = vat_cli_parse(&cmd, argc, argv, &npos);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    if (npos > 1)
        return vat_cli_usage_error("score takes one PREDICTIONS.jsonl file (see 'vat score --help')");
    path = npos ? argv[1] : "-";
    if (strcmp(split, "all") != 0 && strcmp(split, "train") != 0 && strcmp(split, "test") != 0)
        return vat_cli_usage_error("--split takes all, train or test");
    vat_extract_mode mode;
    if (vat_cli_extract_mode(extract, &mode) != 0)
        return vat_cli_usage_error("--extract takes auto or raw");
    struct vat_score_opts o = {.root = root, .split = split, .mode = mode,
                               .open_flags = reveal ? VAT_OPEN_REVEAL_HIDDEN : 0};
    if (ks && vat_score_parse_ks(ks, &o) != 0)
        return vat_cli_usage_error("--k takes a list of positive integers, as in 1,4,16");
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!in) {
        vat_cli_linef(stderr, "vat: cannot open '%s': %s", path, strerror(errno));
        return VAT_EXIT_USAGE;
    }
    char msg[512];
    int rc = vat_score_run_opts(&o, in, path, stdout, msg, sizeof msg);
    if (in != stdin)
        fclose(in);
    if (rc != VAT_EXIT_OK)
        vat_cli_line(stderr, msg);
    return rc;
}
