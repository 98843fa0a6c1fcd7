/* cmd_check.c — `vat check`: score one untrusted answer with a task's own
 * checker, rebuilt from the corpus's verifiers table (so what is published
 * is exactly what scores), through the reward library (lib/corpus.h).
 * --extract raw|auto takes the answer out of a completion as the library
 * does; --explain shows what the answer produces, case by case (regex) or
 * fixture by fixture (SQL).  Held-out cases are named, never quoted, in
 * the reason and the explanation unless --reveal-hidden.  Exits 1 when the verdict blames the checker
 * or the corpus (internal, tampered, checker_limit).  Also the shared CLI
 * helpers.
 * Exports vat_cmd_check, vat_check_explain and vat_cli_*. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corpus.h"
#include "extract.h"
#include "jsonout.h"
#include "tables.h"
#include "verifiers.h"

int vat_cli_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int vat_cli_usage_error(const char *msg)
{
    vat_cli_linef(stderr, "vat: %s", msg);
    return VAT_EXIT_USAGE;
}

int vat_cli_read_file(const char *path, size_t cap, char **out, size_t *len, int *truncated,
                      char *msg, size_t msgcap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, msgcap, "vat: cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = vat_xmalloc(cap + 2);
    size_t n = fread(buf, 1, cap + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        snprintf(msg, msgcap, "vat: cannot read '%s'", path);
        return -1;
    }
    *truncated = n > cap;
    if (n > cap)
        n = cap;
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

int vat_cli_extract_mode(const char *s, vat_extract_mode *mode)
{
    if (strcmp(s, "raw") == 0)
        *mode = VAT_EXTRACT_RAW;
    else if (strcmp(s, "auto") == 0)
        *mode = VAT_EXTRACT_AUTO;
    else
        return -1;
    return 0;
}

/* Reads at most cap + 1 bytes of standard input into a new buffer. */
static char *read_stdin(size_t cap, size_t *len)
{
    struct vat_buf b = VAT_BUF_INIT;
    char chunk[65536];
    size_t n;
    vat_buf_putn(&b, "", 0);
    while (b.len <= cap && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        vat_buf_putn(&b, chunk, b.len + n > cap + 1 ? cap + 1 - b.len : n);
    *len = b.len;
    return vat_buf_detach(&b);
}

/* Whether got (a JSON array of strings) is exactly the case's expected list. */
static bool same_list(const json_t *got, const json_t *exp)
{
    if (!json_is_array(got) || !json_is_array(exp) || json_array_size(got) != json_array_size(exp))
        return false;
    for (size_t i = 0; i < json_array_size(got); i++)
        if (!json_equal(json_array_get(got, i), json_array_get(exp, i)))
            return false;
    return true;
}

static void put_line(FILE *out, json_t *o)
{
    char *s = vat_json_dumps(o);
    fputs(s, out);
    fputc('\n', out);
    free(s);
    json_decref(o);
}

/* --explain: what the answer produces, case by case, for a human; held-out
 * cases are named, never quoted, unless reveal.  An SQL answer runs on
 * every fixture on one budget, as in the check; work is what the check
 * spent (vat_result_work): when it ran past the budget, nothing runs
 * again. */
void vat_check_explain(FILE *out, const json_t *spec, const char *root, const char *answer,
                       size_t len, long long work, bool reveal)
{
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    struct vat_verdict v;
    if (checker && strcmp(checker, "regex") == 0) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, "cases"), i, c) {
            const char *text = json_string_value(json_object_get(c, "text"));
            const json_t *exp = json_object_get(c, "expected");
            bool held = json_is_true(json_object_get(c, "heldout"));
            json_t *got = vat_regex_extract(spec, answer, len, text ? text : "", &v);
            json_t *o = json_object();
            json_object_set_new(o, "case", json_integer((json_int_t)i));
            json_object_set_new(o, "heldout", json_boolean(held));
            if (held && !reveal) {
                if (got) {
                    json_object_set_new(o, "matches", json_integer((json_int_t)json_array_size(got)));
                    json_object_set_new(o, "expected_matches",
                                        json_integer((json_int_t)json_array_size(exp)));
                    json_object_set_new(o, "agrees", json_boolean(same_list(got, exp)));
                } else {
                    json_object_set_new(o, "error", json_string(v.reason));
                }
                json_decref(got);
            } else {
                json_object_set(o, "text", json_object_get(c, "text"));
                json_object_set(o, "expected", (json_t *)exp);
                json_object_set_new(o, "got", got ? got : json_string(v.reason));
            }
            put_line(out, o);
        }
    } else if (checker && strcmp(checker, "sql") == 0) {
        size_t i;
        json_t *fx;
        if (!vat_sql_budget_spent(spec, work))
            work = 0;
        json_array_foreach(json_object_get(spec, "fixtures"), i, fx) {
            const char *rel = json_string_value(fx);
            bool held = i > 0;
            long long before = work;
            json_t *rows = vat_sql_run_counted(spec, root, rel ? rel : "", answer, len, &work, &v);
            json_t *o = json_object();
            json_object_set_new(o, "fixture", json_string(rel ? rel : ""));
            json_object_set_new(o, "heldout", json_boolean(held));
            if (held && !reveal) {
                /* the check of this fixture alone says how the rows differ,
                 * charged as the run above was */
                struct vat_verdict fv =
                    vat_check_sql_fixture_as(spec, root, i, answer, len, false, &before);
                if (rows)
                    json_object_set_new(o, "rows", json_integer((json_int_t)json_array_size(rows)));
                json_decref(rows);
                json_object_set_new(o, "code", json_string(fv.code));
                json_object_set_new(o, "reason", json_string(fv.reason));
            } else {
                json_object_set_new(o, "rows", rows ? rows : json_string(v.reason));
            }
            put_line(out, o);
        }
    }
}

static const char check_about[] =
    "Scores one answer with the task's own checker, rebuilt from the corpus's\n"
    "verifiers table, and prints one JSON line: task_id, gate_passed, score, code,\n"
    "reason, is_trap, extract_rule and extracted.  The answer is taken out of a\n"
    "model's completion by the auto rules of docs/extraction.md (--extract raw\n"
    "scores the text exactly as given).  Held-out cases are named, never quoted,\n"
    "unless --reveal-hidden.";

int vat_cmd_check(int argc, char **argv)
{
    const char *root = ".", *task_id = NULL, *answer = NULL, *answer_file = NULL;
    const char *extract = "auto";
    int explain = 0, reveal_flag = 0;
    const struct vat_option opts[] = {
        VAT_OPT_VALUE("root", 0, "DIR", "the corpus root (default .)", &root),
        VAT_OPT_VALUE("task", 0, "ID", "the task id, e.g. grouped_sum-00007", &task_id),
        VAT_OPT_VALUE("answer", 0, "TEXT", "the answer or completion", &answer),
        VAT_OPT_VALUE("answer-file", 0, "F", "read it from file F ('-': standard input)",
                      &answer_file),
        VAT_OPT_VALUE("extract", 0, "MODE", "auto (default: the answer out of a completion) or "
                                            "raw (the text as given)", &extract),
        VAT_OPT_FLAG("explain", 0, "also what the answer extracts or returns, case by case",
                     &explain),
        VAT_OPT_FLAG("reveal-hidden", 0, "quote held-out cases (for a dataset author)",
                     &reveal_flag),
        VAT_OPT_END,
    };
    const struct vat_cli_command cmd = {
        "check",
        "vat check [--root DIR] --task ID (--answer TEXT | --answer-file F|-) [--extract auto|raw]\n"
        "                 [--explain] [--reveal-hidden]",
        check_about, opts,
        "0 scored (whatever the score), 1 the verdict blames the checker or the corpus\n"
        "            (internal, tampered, checker_limit), 2 usage or input error"};
    int prc = vat_cli_parse(&cmd, argc, argv, NULL);
    if (prc != 0)
        return prc > 0 ? VAT_EXIT_OK : VAT_EXIT_USAGE;
    bool reveal = reveal_flag != 0;
    vat_extract_mode mode;
    if (vat_cli_extract_mode(extract, &mode) != 0)
        return vat_cli_usage_error("--extract takes auto or raw");
    if (!task_id)
        return vat_cli_usage_error("check needs --task ID");
    if ((answer != NULL) == (answer_file != NULL))
        return vat_cli_usage_error("check needs exactly one of --answer TEXT or --answer-file F");

    char msg[512];
    char *buf = NULL;
    size_t len = 0;
    /* Read a little past the completion cap so the library can say
     * completion_too_large. */
    size_t cap = VAT_MAX_COMPLETION_BYTES + 16;
    if (answer_file && strcmp(answer_file, "-") == 0) {
        buf = read_stdin(cap, &len);
    } else if (answer_file) {
        int trunc = 0;
        if (vat_cli_read_file(answer_file, cap, &buf, &len, &trunc, msg, sizeof msg) != 0) {
            vat_cli_line(stderr, msg);
            return VAT_EXIT_USAGE;
        }
    } else {
        buf = vat_xstrdup(answer);
        len = strlen(answer);
    }

    vat_corpus *c;
    vat_error err;
    if (vat_corpus_open_flags(&c, root, reveal ? VAT_OPEN_REVEAL_HIDDEN : 0, &err) != 0) {
        free(buf);
        vat_cli_line(stderr, err.message);
        return VAT_EXIT_USAGE;
    }
    struct vat_scored sc;
    if (vat_corpus_score_verdict(c, task_id, buf, len, mode, &sc, &err) != 0) {
        free(buf);
        vat_corpus_close(c);
        vat_cli_line(stderr, err.message);
        return VAT_EXIT_USAGE;
    }
    const struct vat_verdict *v = &sc.v;
    json_t *out = json_object();
    json_object_set_new(out, "task_id", json_string(task_id));
    json_object_set_new(out, "gate_passed", json_boolean(v->gate_passed));
    json_object_set_new(out, "score", json_real(v->score));
    json_object_set_new(out, "code", json_string(v->code));
    json_object_set_new(out, "reason", json_string(v->reason));
    json_object_set_new(out, "is_trap", json_boolean(sc.is_trap));
    json_object_set_new(out, "extract_rule", json_string(sc.rule));
    if (mode != VAT_EXTRACT_RAW) {
        json_t *x = json_stringn(sc.extracted, sc.extracted_len);
        json_object_set_new(out, "extracted", x ? x : json_null());
    }
    char *s = vat_json_dumps(out);
    puts(s);
    free(s);
    json_decref(out);
    int rc = VAT_EXIT_OK;
    if (strcmp(v->code, VAT_INTERNAL) == 0 || strcmp(v->code, VAT_TAMPERED) == 0 ||
        strcmp(v->code, "checker_limit") == 0)
        rc = VAT_EXIT_CORPUS; /* the checker or the corpus failed, not the answer */
    if (explain && rc == VAT_EXIT_OK) {
        json_t *spec = vat_verifier_spec(vat_corpus_row(c, task_id));
        if (spec)
            vat_check_explain(stdout, spec, root, sc.extracted, sc.extracted_len, sc.work, reveal);
        json_decref(spec);
    }
    vat_scored_release(&sc);
    vat_corpus_close(c);
    free(buf);
    return rc;
}
