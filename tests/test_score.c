/* test_score.c — `vat score` over a small corpus of the two probes and one
 * analytics template (built in-process with vat_build): gold predictions
 * score 1 everywhere; always abstaining scores at most 0.5 on the
 * unanswerable probe (exactly its share of unanswerable tasks) and 0 on
 * dup_header; always giving the trap scores 0 on both probes; the probe
 * metrics (abstention recall and precision, answer recall, the TrustSQL
 * penalised score for c = 0, 1, 10, per-kind means) match a recomputation
 * from the verdict lines and the experience table; missing predictions
 * and --split scope; hostile prediction lines (garbage, a 2 MB line,
 * unknown and duplicate ids, nested JSON answers, NUL bytes, bad UTF-8)
 * each get a verdict line and never stop the run; the command's usage
 * errors exit 2 (through $VAT_BINARY). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "build.h"
#include "cli.h"
#include "config.h"
#include "jsonout.h"
#include "tables.h"
#include "template.h"
#include "testutil.h"
#include "vat.h"


static const char config_text[] = "[corpus]\nmaster_seed = 424242\ntest_fraction = 0.25\n"
                                  "[templates.unanswerable]\ncount = 16\n"
                                  "[templates.dup_header]\ncount = 9\n"
                                  "[templates.grouped_sum]\ncount = 4\n";

struct corpus {
    char *root;
    json_t *experience; /* task_id -> experience row */
    json_t *traps;      /* task_id -> trap answer text */
    size_t ntasks;
};

static json_t *read_table(const char *root, const char *table)
{
    json_t *rows = json_array();
    for (int s = 0; s < 2; s++) {
        char *path = vat_xasprintf("%s/out/%s/%s.jsonl", root, table, s ? "test" : "train");
        size_t n = 0;
        char *data = vat_test_read_file(path, &n);
        assert_non_null(data);
        for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
            json_t *row = json_loads(line, 0, NULL);
            assert_non_null(row);
            json_array_append_new(rows, row);
        }
        free(data);
        free(path);
    }
    return rows;
}

static int setup(void **state)
{
    struct corpus *c = calloc(1, sizeof *c);
    c->root = vat_test_tmpdir("score");
    *state = c; /* teardown runs even when setup fails */
    struct vat_config cfg;
    struct vat_err e = {{0}};
    if (vat_config_parse(&cfg, config_text, strlen(config_text), "seeds.toml", &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    struct vat_build_opts o = {.root = c->root, .jobs = 2,
                               .only = "unanswerable,dup_header,grouped_sum"};
    int rc = vat_build(&cfg, &o, NULL, &e);
    vat_config_release(&cfg);
    if (rc != 0) {
        fprintf(stderr, "build: %d %s\n", rc, e.msg);
        return -1;
    }
    c->experience = json_object();
    json_t *rows = read_table(c->root, "experience");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
        json_object_set(c->experience, json_string_value(json_object_get(r, "task_id")), r);
    c->ntasks = json_array_size(rows);
    json_decref(rows);
    c->traps = json_object();
    rows = read_table(c->root, "rollouts");
    json_array_foreach(rows, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "role")), "trap") == 0)
            json_object_set(c->traps, json_string_value(json_object_get(r, "task_id")),
                            json_object_get(r, "answer"));
    }
    json_decref(rows);
    return 0;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    if (!c)
        return 0;
    vat_test_rmtree(c->root);
    free(c->root);
    json_decref(c->experience);
    json_decref(c->traps);
    free(c);
    return 0;
}

/* The output of one scoring run, parsed. */
struct result {
    int rc;
    json_t *verdicts;  /* array, in input order */
    json_t *templates; /* name -> {"summary":"template"} line */
    json_t *total;     /* the last line */
};

static void result_release(struct result *r)
{
    json_decref(r->verdicts);
    json_decref(r->templates);
    json_decref(r->total);
}

/* --k's list for the next score_bytes (NULL: none). */
static const char *score_ks;

/* Scores input (len bytes) in-process and parses every output line. */
static struct result score_bytes(const struct corpus *c, const char *split, const char *input,
                                 size_t len)
{
    FILE *in = tmpfile();
    assert_non_null(in);
    assert_int_equal(fwrite(input, 1, len, in), len);
    rewind(in);
    char *outbuf = NULL;
    size_t outlen = 0;
    FILE *out = open_memstream(&outbuf, &outlen);
    assert_non_null(out);
    char msg[512] = "";
    struct result r = {0};
    struct vat_score_opts so = {.root = c->root, .split = split, .mode = VAT_EXTRACT_RAW};
    if (score_ks)
        assert_int_equal(vat_score_parse_ks(score_ks, &so), 0);
    r.rc = vat_score_run_opts(&so, in, "predictions.jsonl", out, msg, sizeof msg);
    fclose(out);
    fclose(in);
    r.verdicts = json_array();
    r.templates = json_object();
    char *save = NULL;
    json_t *last = NULL;
    for (char *line = strtok_r(outbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (!o)
            fail_msg("output line is not JSON (%s): %.200s", je.text, line);
        const char *summary = json_string_value(json_object_get(o, "summary"));
        if (!summary) {
            /* A verdict line holds exactly the eight members, in order. */
            assert_int_equal(json_object_size(o), json_object_get(o, "sample") ? 9 : 8);
            assert_non_null(strstr(line, "{\"task_id\":"));
            assert_non_null(strstr(line, "\"reason\":"));
            assert_true(strstr(line, "\"reason\":") < strstr(line, "\"extracted\":"));
            assert_true(strstr(line, "\"extracted\":") < strstr(line, "\"extract_rule\":"));
            assert_true(strstr(line, "\"extract_rule\":") < strstr(line, "\"is_trap\":"));
            assert_true(json_is_boolean(json_object_get(o, "gate_passed")));
            assert_true(json_is_number(json_object_get(o, "score")));
            assert_true(json_is_string(json_object_get(o, "code")));
            assert_true(json_is_string(json_object_get(o, "reason")));
            assert_true(json_is_boolean(json_object_get(o, "is_trap")));
            /* scored: what the checker saw and the rule; not scored: nulls */
            const json_t *x = json_object_get(o, "extracted"), *rule = json_object_get(o, "extract_rule");
            assert_true(json_is_string(x) || json_is_null(x));
            assert_true(json_is_string(x) == json_is_string(rule));
            if (json_is_null(x))
                assert_false(json_is_true(json_object_get(o, "is_trap")));
            assert_null(last); /* verdicts come first */
            json_array_append_new(r.verdicts, o);
        } else if (strcmp(summary, "template") == 0) {
            json_object_set_new(r.templates, json_string_value(json_object_get(o, "template")), o);
        } else {
            assert_string_equal(summary, "total");
            assert_null(last);
            last = o;
        }
    }
    free(outbuf);
    if (r.rc == VAT_EXIT_OK)
        assert_non_null(last);
    r.total = last;
    return r;
}

static struct result score_text(const struct corpus *c, const char *split, const char *input)
{
    return score_bytes(c, split, input, strlen(input));
}

/* One prediction line: the answer as the JSON value given. */
static void put_pred(struct vat_buf *b, const char *id, const json_t *answer)
{
    json_t *o = json_pack("{s:s, s:O}", "task_id", id, "answer", answer);
    vat_json_dump_buf(b, o);
    vat_buf_putc(b, '\n');
    json_decref(o);
}

static double num(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a);
    if (b)
        x = json_object_get(x, b);
    if (!json_is_number(x))
        fail_msg("'%s%s%s' is not a number", a, b ? "." : "", b ? b : "");
    return json_number_value(x);
}

static bool close_to(double a, double b)
{
    return a - b < 1e-12 && b - a < 1e-12;
}

static const char *tmpl_of(const json_t *row)
{
    return json_string_value(json_object_get(row, "template"));
}

static bool answerable(const json_t *row)
{
    json_t *params = vat_row_params(row);
    bool can = json_is_true(json_object_get(params, "answerable"));
    json_decref(params);
    return can;
}

/* ---- gold, abstain, trap ---------------------------------------------------- */

static void test_gold_scores_one(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    const char *id;
    json_t *row;
    json_object_foreach(c->experience, id, row)
        put_pred(&b, id, json_object_get(row, "gold"));
    struct result r = score_text(c, "all", b.data);
    assert_int_equal(r.rc, 0);
    assert_int_equal(json_array_size(r.verdicts), c->ntasks);
    size_t i;
    json_t *v;
    json_array_foreach(r.verdicts, i, v) {
        if (num(v, "score", NULL) != 1.0)
            fail_msg("gold of '%s' scored %s", json_string_value(json_object_get(v, "task_id")),
                     json_string_value(json_object_get(v, "reason")));
        assert_false(json_is_true(json_object_get(v, "is_trap")));
    }
    assert_true(num(r.total, "mean_score_all_tasks", NULL) == 1.0);
    assert_int_equal((int)num(r.total, "missing", NULL), 0);
    assert_int_equal((int)num(r.total, "invalid", NULL), 0);
    const json_t *u = json_object_get(json_object_get(r.total, "probes"), "unanswerable");
    assert_true(num(u, "abstention_recall", NULL) == 1.0);
    assert_true(num(u, "abstention_precision", NULL) == 1.0);
    assert_true(num(u, "answer_recall", NULL) == 1.0);
    assert_true(num(u, "trustsql_c0", NULL) == 1.0);
    assert_true(num(u, "trustsql_c1", NULL) == 1.0);
    assert_true(num(u, "trustsql_c10", NULL) == 1.0);
    const json_t *d = json_object_get(json_object_get(r.total, "probes"), "dup_header");
    assert_true(num(d, "accuracy", NULL) == 1.0);
    assert_null(json_object_get(d, "trustsql_c1"));
    /* The analytics template is not a probe. */
    assert_null(json_object_get(json_object_get(r.total, "probes"), "grouped_sum"));
    assert_true(num(r.total, "templates", "grouped_sum") == 1.0);
    const json_t *ut = json_object_get(r.templates, "unanswerable");
    assert_string_equal(json_string_value(json_object_get(ut, "family")), "probe");
    assert_true(num(ut, "mean_score_all_tasks", NULL) == 1.0);
    vat_buf_release(&b);
    result_release(&r);
}

static void test_always_abstain(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    json_t *abst = json_pack("{s:b}", "answerable", 0);
    const char *id;
    json_t *row;
    long unans = 0, n = 0;
    json_object_foreach(c->experience, id, row) {
        put_pred(&b, id, abst);
        if (strcmp(tmpl_of(row), "unanswerable") == 0) {
            n++;
            unans += !answerable(row);
        }
    }
    json_decref(abst);
    struct result r = score_text(c, "all", b.data);
    assert_int_equal(r.rc, 0);
    const json_t *u = json_object_get(json_object_get(r.total, "probes"), "unanswerable");
    double mean = num(r.total, "templates", "unanswerable");
    assert_true(mean <= 0.5);
    assert_true(close_to(mean, (double)unans / (double)n));
    assert_true(num(u, "abstention_recall", NULL) == 1.0);
    assert_true(num(u, "answer_recall", NULL) == 0.0);
    assert_true(close_to(num(u, "abstention_precision", NULL), (double)unans / (double)n));
    /* Abstaining is never penalised, whatever c. */
    assert_true(close_to(num(u, "trustsql_c10", NULL), (double)unans / (double)n));
    assert_true(close_to(num(u, "trustsql_c0", NULL), (double)unans / (double)n));
    assert_true(num(r.total, "templates", "dup_header") == 0.0);
    vat_buf_release(&b);
    result_release(&r);
}

static void test_always_trap(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    const char *id;
    json_t *row;
    long unans = 0, n = 0;
    json_object_foreach(c->experience, id, row) {
        put_pred(&b, id, json_object_get(c->traps, id)); /* the raw trap text */
        if (strcmp(tmpl_of(row), "unanswerable") == 0) {
            n++;
            unans += !answerable(row);
        }
    }
    struct result r = score_text(c, "all", b.data);
    assert_int_equal(r.rc, 0);
    /* Every trap passes the gate, scores 0 and is told to be the trap; the
     * raw answer is what the checker saw. */
    size_t i;
    json_t *v;
    json_array_foreach(r.verdicts, i, v) {
        const char *tid = json_string_value(json_object_get(v, "task_id"));
        assert_true(json_is_true(json_object_get(v, "gate_passed")));
        assert_true(num(v, "score", NULL) == 0.0);
        assert_true(json_is_true(json_object_get(v, "is_trap")));
        assert_string_equal(json_string_value(json_object_get(v, "extract_rule")), "raw");
        assert_string_equal(json_string_value(json_object_get(v, "extracted")),
                            json_string_value(json_object_get(c->traps, tid)));
    }
    assert_true(num(r.total, "templates", "unanswerable") == 0.0);
    assert_true(num(r.total, "templates", "dup_header") == 0.0);
    assert_true(num(r.total, "mean_score_all_tasks", NULL) == 0.0);
    const json_t *u = json_object_get(json_object_get(r.total, "probes"), "unanswerable");
    assert_true(num(u, "abstention_recall", NULL) == 0.0);
    assert_true(num(u, "answer_recall", NULL) == 0.0);
    assert_true(num(u, "abstention_precision", NULL) == 0.0);
    /* Values on unanswerable tasks are missed abstentions; abstaining on
     * the controls costs nothing. */
    assert_true(num(u, "trustsql_c0", NULL) == 0.0);
    assert_true(close_to(num(u, "trustsql_c1", NULL), -(double)unans / (double)n));
    assert_true(close_to(num(u, "trustsql_c10", NULL), -10.0 * (double)unans / (double)n));
    vat_buf_release(&b);
    result_release(&r);
}

/* ---- the metrics, recomputed --------------------------------------------------- */

static void test_mixed_predictions_match_recomputation(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    json_t *abst = json_pack("{s:b}", "answerable", 0);
    const char *id;
    json_t *row;
    int k = 0;
    /* Cycle through gold, trap, abstain, a wrong number, prose, and no
     * prediction at all. */
    json_object_foreach(c->experience, id, row) {
        if (strcmp(tmpl_of(row), "unanswerable") != 0)
            continue;
        switch (k++ % 6) {
        case 0: put_pred(&b, id, json_object_get(row, "gold")); break;
        case 1: put_pred(&b, id, json_object_get(c->traps, id)); break;
        case 2: put_pred(&b, id, abst); break;
        case 3: {
            json_t *x = json_real(-123.45);
            put_pred(&b, id, x);
            json_decref(x);
            break;
        }
        case 4: {
            json_t *x = json_string("I think it is about 12.");
            put_pred(&b, id, x);
            json_decref(x);
            break;
        }
        default: break;
        }
    }
    json_decref(abst);
    struct result r = score_text(c, "all", b.data);
    assert_int_equal(r.rc, 0);

    /* Recompute from the verdicts and the experience table alone. */
    long tasks = 0, unans = 0, ctl = 0, abst_right = 0, abst_wrong = 0, ctl_right = 0,
         wrong = 0, answered = 0;
    double sum = 0;
    json_object_foreach(c->experience, id, row) {
        if (strcmp(tmpl_of(row), "unanswerable") != 0)
            continue;
        tasks++;
        bool can = answerable(row);
        can ? ctl++ : unans++;
        size_t i;
        json_t *v, *found = NULL;
        json_array_foreach(r.verdicts, i, v)
            if (strcmp(json_string_value(json_object_get(v, "task_id")), id) == 0)
                found = v;
        if (!found)
            continue;
        answered++;
        double s = num(found, "score", NULL);
        const char *code = json_string_value(json_object_get(found, "code"));
        sum += s;
        if (s == 1.0)
            can ? ctl_right++ : abst_right++;
        else if (can && strcmp(code, "abstained") == 0)
            abst_wrong++;
        else
            wrong++;
    }
    const json_t *u = json_object_get(json_object_get(r.total, "probes"), "unanswerable");
    const json_t *ut = json_object_get(r.templates, "unanswerable");
    assert_true(wrong > 0 && abst_wrong > 0 && ctl_right > 0 && abst_right > 0);
    assert_int_equal((long)num(ut, "tasks", NULL), tasks);
    assert_int_equal((long)num(ut, "missing", NULL), tasks - answered);
    assert_true(close_to(num(ut, "mean_score_all_tasks", NULL), sum / (double)tasks));
    assert_true(close_to(num(u, "abstention_recall", NULL), (double)abst_right / (double)unans));
    assert_true(close_to(num(u, "answer_recall", NULL), (double)ctl_right / (double)ctl));
    assert_true(close_to(num(u, "abstention_precision", NULL),
                         (double)abst_right / (double)(abst_right + abst_wrong)));
    static const int cs[] = {0, 1, 10};
    static const char *const names[] = {"trustsql_c0", "trustsql_c1", "trustsql_c10"};
    for (int j = 0; j < 3; j++) {
        double want = ((double)(abst_right + ctl_right) - cs[j] * (double)wrong) / (double)tasks;
        if (!close_to(num(u, names[j], NULL), want))
            fail_msg("%s is %g, want %g", names[j], num(u, names[j], NULL), want);
    }
    /* Kinds: every kind of the probe, the task counts adding up. */
    const json_t *kinds = json_object_get(u, "kinds");
    assert_int_equal(json_object_size(kinds), 6);
    long ksum = 0;
    const char *kn;
    json_t *kv;
    json_object_foreach((json_t *)kinds, kn, kv) ksum += (long)num(kv, "tasks", NULL);
    assert_int_equal(ksum, tasks);
    /* The other templates were not predicted at all. */
    assert_int_equal((long)num(r.total, "missing", NULL), (long)c->ntasks - answered);
    assert_true(num(r.total, "templates", "grouped_sum") == 0.0);
    vat_buf_release(&b);
    result_release(&r);
}

/* 1 - C(n-c, k) / C(n, k), as the ratio of two binomials over k factors. */
static double want_pass(long n, long c, long k)
{
    double ratio = 1.0; /* C(n-c, k) / C(n, k) = prod_j (n-c-j) / (n-j) */
    for (long j = 0; j < k; j++)
        ratio *= n - c - j <= 0 ? 0.0 : (double)(n - c - j) / (double)(n - j);
    return 1.0 - ratio;
}

static void test_pass_at_every_k(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    /* task i gets n = 1 + i % 7 samples, the first i % (n + 1) of them gold,
     * the rest its trap; every fifth task gets none */
    enum { NK = 3 };
    static const long ks[NK] = {1, 4, 16};
    double want_sum[NK] = {0};
    long want_tasks[NK] = {0}, want_short[NK] = {0};
    const char *id;
    json_t *row;
    long i = 0;
    json_object_foreach(c->experience, id, row) {
        long n = 1 + i % 7, good = i % (n + 1);
        bool skip = i++ % 5 == 4;
        if (skip)
            continue;
        for (long s = 0; s < n; s++) {
            json_t *o = json_pack("{s:s, s:O, s:I}", "task_id", id, "answer",
                                  s < good ? json_object_get(row, "gold")
                                           : json_object_get(c->traps, id),
                                  "sample", (json_int_t)s);
            vat_json_dump_buf(&b, o);
            vat_buf_putc(&b, '\n');
            json_decref(o);
        }
        for (int k = 0; k < NK; k++) {
            if (n < ks[k]) {
                want_short[k]++;
                continue;
            }
            want_tasks[k]++;
            want_sum[k] += want_pass(n, good, ks[k]);
        }
    }
    score_ks = "16,4,1,4";
    struct result r = score_text(c, "all", b.data);
    score_ks = NULL;
    assert_int_equal(r.rc, 0);
    for (int k = 0; k < NK; k++) {
        char name[32];
        snprintf(name, sizeof name, "tasks@%ld", ks[k]);
        assert_int_equal((long)num(r.total, name, NULL), want_tasks[k]);
        snprintf(name, sizeof name, "short@%ld", ks[k]);
        assert_int_equal((long)num(r.total, name, NULL), want_short[k]);
        snprintf(name, sizeof name, "pass@%ld", ks[k]);
        const json_t *p = json_object_get(r.total, name);
        if (want_tasks[k] == 0) {
            assert_true(json_is_null(p));
        } else if (!close_to(json_number_value(p), want_sum[k] / (double)want_tasks[k])) {
            fail_msg("%s: %g, want %g", name, json_number_value(p),
                     want_sum[k] / (double)want_tasks[k]);
        }
    }
    /* per template too, and the tasks of every template add up */
    long tasks4 = 0;
    const char *name;
    json_t *t;
    json_object_foreach(r.templates, name, t) {
        assert_non_null(json_object_get(t, "pass@16"));
        tasks4 += (long)num(t, "tasks@4", NULL);
    }
    assert_int_equal(tasks4, want_tasks[1]);
    /* no --k: no such figures */
    struct result plain = score_text(c, "all", b.data);
    assert_null(json_object_get(plain.total, "tasks@4"));
    vat_buf_release(&b);
    result_release(&r);
    result_release(&plain);
    /* the list's syntax */
    struct vat_score_opts o;
    assert_int_equal(vat_score_parse_ks("1,4,16", &o), 0);
    assert_int_equal(o.n_ks, 3);
    static const char *const bad[] = {"", "0", "1,,4", "4,", "-1", "1.5", "2000000", "a", "1 ,4"};
    for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++)
        if (vat_score_parse_ks(bad[j], &o) == 0)
            fail_msg("--k '%s' accepted", bad[j]);
}

static void test_split_scope(void **state)
{
    struct corpus *c = *state;
    struct vat_buf b = VAT_BUF_INIT;
    const char *id;
    json_t *row;
    long test = 0, train_lines = 0;
    json_object_foreach(c->experience, id, row) {
        put_pred(&b, id, json_object_get(row, "gold"));
        if (strcmp(json_string_value(json_object_get(row, "split")), "test") == 0)
            test++;
        else
            train_lines++;
    }
    assert_true(test > 0 && train_lines > 0);
    struct result r = score_text(c, "test", b.data);
    assert_int_equal(r.rc, 0);
    assert_int_equal((long)num(r.total, "tasks", NULL), test);
    assert_int_equal((long)num(r.total, "invalid", NULL), train_lines);
    assert_true(num(r.total, "mean_score_all_tasks", NULL) == 1.0);
    assert_string_equal(json_string_value(json_object_get(r.total, "split")), "test");
    size_t i;
    json_t *v;
    long unknown = 0;
    json_array_foreach(r.verdicts, i, v)
        unknown += strcmp(json_string_value(json_object_get(v, "code")), "unknown_task") == 0;
    assert_int_equal(unknown, train_lines);
    vat_buf_release(&b);
    result_release(&r);
}

/* ---- hostile input ------------------------------------------------------------- */

static void test_hostile_lines(void **state)
{
    struct corpus *c = *state;
    const char *first = NULL, *an_unans = NULL;
    const char *id;
    json_t *row;
    json_object_foreach(c->experience, id, row) {
        if (!first)
            first = id;
        if (!an_unans && strcmp(tmpl_of(row), "unanswerable") == 0 && !answerable(row))
            an_unans = id;
    }
    struct vat_buf b = VAT_BUF_INIT;
    struct {
        const char *code;
        bool has_id;
    } want[32];
    int nw = 0;
#define EXPECT(cd, id_) (want[nw].code = (cd), want[nw].has_id = (id_), nw++)
    vat_buf_puts(&b, "this is not json\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "\n   \n"); /* blank lines are skipped */
    /* A 2 MB line. */
    vat_buf_printf(&b, "{\"task_id\":\"%s\",\"answer\":\"", first);
    for (int i = 0; i < 2 * 1024 * 1024; i++)
        vat_buf_putc(&b, '9');
    vat_buf_puts(&b, "\"}\n");
    EXPECT("too_large", false);
    vat_buf_puts(&b, "[1,2,3]\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": 5, \"answer\": 1}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": \"a\", \"task_id\": \"b\", \"answer\": 1}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": \"no_such_template-00001\", \"answer\": 1}\n");
    EXPECT("unknown_task", true);
    /* A 300 kB unknown id is echoed cut short. */
    vat_buf_puts(&b, "{\"task_id\": \"");
    for (int i = 0; i < 300000; i++)
        vat_buf_putc(&b, 'x');
    vat_buf_puts(&b, "\", \"answer\": 1}\n");
    EXPECT("unknown_task", true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\"}\n", an_unans);
    EXPECT("parse", true);
    /* Deeply nested answer: a value that is not a number. */
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": ", an_unans);
    for (int i = 0; i < 200; i++)
        vat_buf_putc(&b, '[');
    for (int i = 0; i < 200; i++)
        vat_buf_putc(&b, ']');
    vat_buf_puts(&b, "}\n");
    EXPECT("too_large", true);
    /* A task may have several predictions; a repeated sample number is
     * refused and not counted. */
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": \"[1,\", \"sample\": 3}\n",
                   an_unans);
    EXPECT("parse", true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": {\"answerable\": false}, \"sample\": 3}\n",
                   an_unans);
    EXPECT("duplicate", true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": {\"a\": {\"b\": [1, {\"c\": null}]}}}\n",
                   first);
    EXPECT(NULL, true); /* scored by the checker: gate fails */
    /* Numbers of any size are read (the checker judges them), and an
     * answer that cannot be read still counts against its task. */
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": 1e400}\r\n", first);
    EXPECT(NULL, true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": 123456789012345678901234567890}\n",
                   first);
    EXPECT(NULL, true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": [1, 2,, 3]}\n", first);
    EXPECT("parse", true);
    vat_buf_printf(&b, "{\"task_id\": \"%s\", \"answer\": 1, \"sample\": -1}\n", first);
    EXPECT("parse", true);
    /* Invalid UTF-8 and a raw NUL byte. */
    vat_buf_puts(&b, "{\"task_id\": \"\xff\xfe\", \"answer\": 1}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": \"x\"");
    vat_buf_putn(&b, "\0", 1);
    vat_buf_puts(&b, ", \"answer\": 1}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": \"a\\u0000b\", \"answer\": 1}\n");
    EXPECT("parse", false);
    vat_buf_puts(&b, "{\"task_id\": \"tail-without-newline\", \"answer\": 1}");
    EXPECT("unknown_task", true);
#undef EXPECT

    struct result r = score_bytes(c, "all", b.data, b.len);
    assert_int_equal(r.rc, 0);
    assert_int_equal((int)json_array_size(r.verdicts), nw);
    for (int i = 0; i < nw; i++) {
        const json_t *v = json_array_get(r.verdicts, (size_t)i);
        const char *code = json_string_value(json_object_get(v, "code"));
        assert_false(json_is_true(json_object_get(v, "gate_passed")));
        assert_true(num(v, "score", NULL) == 0.0);
        if (want[i].code && strcmp(code, want[i].code) != 0)
            fail_msg("line %d: code '%s', want '%s' (%s)", i, code, want[i].code,
                     json_string_value(json_object_get(v, "reason")));
        assert_int_equal(json_is_string(json_object_get(v, "task_id")), want[i].has_id);
        const char *tid = json_string_value(json_object_get(v, "task_id"));
        if (tid)
            assert_true(strlen(tid) <= 210);
    }
    /* Counted against their tasks: the answerless line, the deep answer
     * and the unreadable "[1," of an_unans (its repeated sample is not),
     * and the five lines of first; every other line is invalid. */
    assert_int_equal((long)num(r.total, "lines", NULL), nw);
    assert_int_equal((long)num(r.total, "scored", NULL), 8);
    assert_int_equal((long)num(r.total, "predictions", NULL), 8);
    assert_int_equal((long)num(r.total, "answered", NULL), 2);
    assert_int_equal((long)num(r.total, "missing", NULL), (long)c->ntasks - 2);
    assert_int_equal((long)num(r.total, "checker_errors", NULL), 0);
    assert_false(json_is_true(json_object_get(r.total, "truncated")));
    vat_buf_release(&b);
    result_release(&r);
}

static void test_no_corpus(void **state)
{
    (void)state;
    char *dir = vat_test_tmpdir("score-empty");
    FILE *in = tmpfile();
    char msg[512] = "";
    int rc = vat_score_run(dir, "all", in, "p.jsonl", stdout, msg, sizeof msg);
    fclose(in);
    assert_int_equal(rc, VAT_EXIT_USAGE);
    assert_non_null(strstr(msg, "no corpus"));
    vat_test_rmtree(dir);
    free(dir);
}

/* ---- the command ------------------------------------------------------------------ */

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

static int run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        vat_buf_putn(&b, chunk, n);
    int st = pclose(p);
    if (out)
        *out = vat_buf_detach(&b);
    else
        vat_buf_release(&b);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_command(void **state)
{
    struct corpus *c = *state;
    static const char *const bad[] = {"score --split bogus p.jsonl",
                                      "score /nonexistent/p.jsonl", "score --frob p.jsonl",
                                      "score a.jsonl b.jsonl", "score .",
                                      "score --k 0 p.jsonl", "score --k 1,x p.jsonl"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *cmd = vat_xasprintf("cd '%s' && '%s' %s 2>&1 >/dev/null", c->root, bin(), bad[i]);
        char *out = NULL;
        int rc = run(cmd, &out);
        if (rc != 2)
            fail_msg("'vat %s' exited %d: %s", bad[i], rc, out);
        assert_true(strncmp(out, "vat", 3) == 0);
        free(out);
        free(cmd);
    }
    /* Predictions on stdin; the last line is the total. */
    const char *id;
    json_t *row;
    json_object_foreach(c->experience, id, row) break;
    char *cmd = vat_xasprintf("printf '%%s\\n' '{\"task_id\":\"%s\",\"answer\":\"x\"}' | '%s' "
                              "score --root '%s' --k 1,4 -",
                              id, bin(), c->root);
    char *out = NULL;
    assert_int_equal(run(cmd, &out), 0);
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '\n')
        out[--n] = 0;
    char *nl = strrchr(out, '\n');
    json_t *t = json_loads(nl ? nl + 1 : out, 0, NULL);
    assert_non_null(t);
    assert_string_equal(json_string_value(json_object_get(t, "summary")), "total");
    assert_int_equal((long)num(t, "predictions", NULL), 1);
    assert_int_equal((long)num(t, "tasks@1", NULL), 1);
    assert_int_equal((long)num(t, "short@4", NULL), 1);
    assert_true(json_is_null(json_object_get(t, "pass@4")));
    json_decref(t);
    free(out);
    free(cmd);
    /* No file at all reads standard input too, as '-' does. */
    cmd = vat_xasprintf("printf '%%s\n' '{\"task_id\":\"%s\",\"answer\":\"x\"}' | '%s' "
                        "score --root='%s'",
                        id, bin(), c->root);
    assert_int_equal(run(cmd, &out), 0);
    assert_non_null(strstr(out, "\"summary\":\"total\""));
    assert_non_null(strstr(out, "\"predictions\":1"));
    free(out);
    free(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gold_scores_one),
        cmocka_unit_test(test_always_abstain),
        cmocka_unit_test(test_always_trap),
        cmocka_unit_test(test_mixed_predictions_match_recomputation),
        cmocka_unit_test(test_pass_at_every_k),
        cmocka_unit_test(test_split_scope),
        cmocka_unit_test(test_hostile_lines),
        cmocka_unit_test(test_no_corpus),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
