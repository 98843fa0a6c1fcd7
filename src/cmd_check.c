/* cmd_check.c — `vat check`: score one untrusted answer with a task's own
 * checker, rebuilt from the corpus's verifiers table (so what is published
 * is exactly what scores).  Also the shared CLI helpers.
 * Exports vat_cmd_check and vat_cli_*. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "tables.h"
#include "template.h"
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
    fprintf(stderr, "vat: %s\n", msg);
    return VAT_EXIT_USAGE;
}

int vat_cli_usage_error_arg(const char *cmd, const char *arg)
{
    fprintf(stderr, "vat %s: unknown or incomplete option '%s' (see 'vat --help')\n", cmd, arg);
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

/* Finds the verifiers row of task_id below root; NULL with msg set. */
static json_t *find_verifier_row(const char *root, const char *task_id, char *msg, size_t cap)
{
    static const char *const files[] = {"out/verifiers/train.jsonl", "out/verifiers/test.jsonl"};
    int opened = 0;
    for (size_t k = 0; k < 2; k++) {
        char *path = vat_path_join(root, files[k]);
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
            const char *id = row ? json_string_value(json_object_get(row, "task_id")) : NULL;
            if (id && strcmp(id, task_id) == 0) {
                free(line);
                fclose(f);
                return row;
            }
            json_decref(row);
        }
        free(line);
        fclose(f);
    }
    if (!opened)
        snprintf(msg, cap, "vat: no corpus at '%s' (out/verifiers/*.jsonl missing; run 'vat build')",
                 root);
    else
        snprintf(msg, cap, "vat: no task '%s' in the corpus at '%s'", task_id, root);
    return NULL;
}

/* --extract: what the answer produces, case by case, for a human. */
static void print_extraction(const struct vat_task *t, const char *answer, size_t len)
{
    const char *checker = json_string_value(json_object_get(t->spec, "checker"));
    struct vat_verdict v;
    if (checker && strcmp(checker, "regex") == 0) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(t->spec, "cases"), i, c) {
            const char *text = json_string_value(json_object_get(c, "text"));
            json_t *got = vat_regex_extract(t->spec, answer, len, text ? text : "", &v);
            json_t *o = json_object();
            json_object_set_new(o, "case", json_integer((json_int_t)i));
            json_object_set(o, "heldout", json_object_get(c, "heldout"));
            json_object_set(o, "text", json_object_get(c, "text"));
            json_object_set(o, "expected", json_object_get(c, "expected"));
            json_object_set_new(o, "got", got ? got : json_string(v.reason));
            char *s = vat_json_dumps(o);
            puts(s);
            free(s);
            json_decref(o);
        }
    } else if (checker && strcmp(checker, "sql") == 0) {
        size_t i;
        json_t *fx;
        json_array_foreach(json_object_get(t->spec, "fixtures"), i, fx) {
            const char *rel = json_string_value(fx);
            json_t *rows = vat_sql_run(t->spec, t->root, rel ? rel : "", answer, len, &v);
            json_t *o = json_object();
            json_object_set_new(o, "fixture", json_string(rel ? rel : ""));
            json_object_set_new(o, "rows", rows ? rows : json_string(v.reason));
            char *s = vat_json_dumps(o);
            puts(s);
            free(s);
            json_decref(o);
        }
    }
}

int vat_cmd_check(int argc, char **argv)
{
    const char *root = ".", *task_id = NULL, *answer = NULL, *answer_file = NULL;
    int extract = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(a, "--task") == 0 && i + 1 < argc)
            task_id = argv[++i];
        else if (strcmp(a, "--answer") == 0 && i + 1 < argc)
            answer = argv[++i];
        else if (strcmp(a, "--answer-file") == 0 && i + 1 < argc)
            answer_file = argv[++i];
        else if (strcmp(a, "--extract") == 0)
            extract = 1;
        else
            return vat_cli_usage_error_arg("check", a);
    }
    if (!task_id)
        return vat_cli_usage_error("check needs --task ID");
    if ((answer != NULL) == (answer_file != NULL))
        return vat_cli_usage_error("check needs exactly one of --answer TEXT or --answer-file F");

    char msg[512];
    char *buf = NULL;
    size_t len = 0;
    if (answer_file) {
        int trunc = 0;
        /* Read a little past the checkers' cap so they can say too_large. */
        if (vat_cli_read_file(answer_file, VAT_MAX_ANSWER_BYTES + 16, &buf, &len, &trunc, msg,
                              sizeof msg) != 0) {
            fprintf(stderr, "%s\n", msg);
            return VAT_EXIT_USAGE;
        }
    } else {
        buf = vat_xstrdup(answer);
        len = strlen(answer);
    }

    json_t *row = find_verifier_row(root, task_id, msg, sizeof msg);
    if (!row) {
        free(buf);
        fprintf(stderr, "%s\n", msg);
        return VAT_EXIT_USAGE;
    }
    const char *tname = json_string_value(json_object_get(row, "template"));
    const struct vat_template *tm = tname ? vat_template_find(tname) : NULL;
    if (!tm) {
        free(buf);
        fprintf(stderr, "vat: task '%s' names unknown template '%s'\n", task_id,
                tname ? tname : "");
        json_decref(row);
        return VAT_EXIT_USAGE;
    }
    struct vat_task t;
    vat_task_init(&t, tm, 0, root);
    snprintf(t.id, sizeof t.id, "%s", task_id);
    t.spec = vat_verifier_spec(row);
    json_decref(row);
    struct vat_verdict v = tm->check(&t, buf, len);

    json_t *out = json_object();
    json_object_set_new(out, "task_id", json_string(task_id));
    json_object_set_new(out, "gate_passed", json_boolean(v.gate_passed));
    json_object_set_new(out, "score", json_real(v.score));
    json_object_set_new(out, "code", json_string(v.code));
    json_object_set_new(out, "reason", json_string(v.reason));
    char *s = vat_json_dumps(out);
    puts(s);
    free(s);
    json_decref(out);
    if (extract)
        print_extraction(&t, buf, len);
    vat_task_clear(&t);
    free(buf);
    return VAT_EXIT_OK;
}
