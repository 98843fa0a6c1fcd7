/* test_heldout_leak.c — feedback that hides what is hidden (verifiers.h,
 * include/libvat.h VAT_OPEN_REVEAL_HIDDEN, `vat check --explain`).
 *
 * Builds the default corpus (the repository's seeds.toml, with the vat
 * binary under test), then plants a marker in everything held out: every
 * held-out string of every regex task gets the marker between its words
 * (expected lists recomputed with the gold pattern), and every text value
 * of every variant fixture (SQLite or CSV) that is not a date, a number
 * or a literal of the reference query gets the marker in front; the
 * manifest is written again.  Then every rollout answer (gold, trap,
 * malformed; raw and inside a chat completion), every mutant of the gold
 * program, and for SQL tasks an answer built to make SQLite quote a
 * variant's value in an error message, are scored through libvat and
 * explained as `vat check --explain` does.  No default reason and no
 * default explain line may hold the marker; reasons about a held-out case
 * quote nothing (no '"' for regex, no row for SQL).  The same answers
 * scored with VAT_OPEN_REVEAL_HIDDEN must show the marker, so the markers
 * do reach the checkers and the test can fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cli.h"
#include "corpus.h"
#include "csvio.h"
#include "libvat.h"
#include "manifest.h"
#include "mutate.h"
#include "tables.h"
#include "testutil.h"
#include "vat.h"
#include "verifiers.h"

#define MARK "QZXV"

struct fix {
    char *root;
    vat_corpus *hidden, *revealed;
    size_t planted_cases, planted_values;
};

/* ---- planting ------------------------------------------------------------------ */

/* The held-out text with the marker between its words (and at both ends). */
static char *mark_text(const char *t)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_puts(&b, MARK " ");
    for (; *t; t++)
        vat_buf_puts(&b, *t == ' ' ? " " MARK " " : (char[]){*t, 0});
    vat_buf_puts(&b, " " MARK);
    return vat_buf_detach(&b);
}

static size_t plant_regex(json_t *spec, const char *gold)
{
    size_t n = 0, i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "cases"), i, c) {
        if (!json_is_true(json_object_get(c, "heldout")))
            continue;
        char *text = mark_text(json_string_value(json_object_get(c, "text")));
        struct vat_verdict v;
        json_t *exp = vat_regex_extract(spec, gold, strlen(gold), text, &v);
        if (!exp)
            fail_msg("gold '%s' on a planted line: %s", gold, v.reason);
        json_object_set_new(c, "text", json_string(text));
        json_object_set_new(c, "expected", exp);
        free(text);
        n++;
    }
    return n;
}

/* A text value that can carry the marker without changing what the
 * question selects: not empty, not a date or a number, not a literal the
 * reference query names. */
static bool markable(const char *v, const char *ref)
{
    if (!*v || (*v >= '0' && *v <= '9') || *v == '-')
        return false;
    char *lit = vat_xasprintf("'%s'", v);
    bool named = strstr(ref, lit) != NULL;
    free(lit);
    return !named;
}

static size_t plant_sqlite(const char *path, const json_t *spec, const char *ref)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    size_t n = 0, i;
    const json_t *t;
    json_array_foreach(json_object_get(spec, "tables"), i, t) {
        const char *table = json_string_value(t);
        char *q = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q)", table);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
        sqlite3_free(q);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *col = (const char *)sqlite3_column_text(st, 0);
            char *sel = sqlite3_mprintf("SELECT DISTINCT %w FROM %w WHERE typeof(%w) = 'text'",
                                        col, table, col);
            sqlite3_stmt *vs;
            assert_int_equal(sqlite3_prepare_v2(db, sel, -1, &vs, NULL), SQLITE_OK);
            sqlite3_free(sel);
            struct vat_buf vals = VAT_BUF_INIT; /* the values to mark, NUL-separated */
            size_t nv = 0;
            while (sqlite3_step(vs) == SQLITE_ROW) {
                const char *v = (const char *)sqlite3_column_text(vs, 0);
                if (markable(v, ref)) {
                    vat_buf_putn(&vals, v, strlen(v) + 1);
                    nv++;
                }
            }
            sqlite3_finalize(vs);
            const char *v = vals.data;
            for (size_t k = 0; k < nv; k++, v += strlen(v) + 1) {
                char *up = sqlite3_mprintf("UPDATE %w SET %w = %Q || %w WHERE %w = %Q", table, col,
                                           MARK " ", col, col, v);
                assert_int_equal(sqlite3_exec(db, up, NULL, NULL, NULL), SQLITE_OK);
                n += (size_t)sqlite3_changes(db);
                sqlite3_free(up);
            }
            vat_buf_release(&vals);
        }
        sqlite3_finalize(st);
    }
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    return n;
}

static size_t plant_csv(const char *root, const char *rel, const json_t *load, const char *ref)
{
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    if (vat_csv_read(&c, root, rel, &e) != 0)
        fail_msg("%s", e.msg);
    size_t n = 0, i;
    const json_t *col;
    json_array_foreach(json_object_get(load, "columns"), i, col) {
        const char *type = json_string_value(json_array_get(col, 1));
        if (!type || strcmp(type, "TEXT") != 0)
            continue;
        for (size_t r = 1; r < c.nrows; r++) {
            const char *v = vat_csv_get(&c, r, i);
            if (!markable(v, ref))
                continue;
            char *m = vat_xasprintf(MARK " %s", v);
            assert_true(vat_csv_set(&c, r, i, m));
            free(m);
            n++;
        }
    }
    if (vat_csv_write(&c, root, rel, &e) != 0)
        fail_msg("%s", e.msg);
    vat_csv_release(&c);
    return n;
}

/* Plants markers in every held-out case of the corpus at root, rewrites
 * its verifiers tables and its manifest. */
static void plant(struct fix *f)
{
    vat_corpus *c;
    assert_int_equal(vat_corpus_open(&c, f->root, NULL), 0);
    static const char *const tables[] = {"out/verifiers/train.jsonl", "out/verifiers/test.jsonl"};
    for (size_t k = 0; k < 2; k++) {
        char *path = vat_xasprintf("%s/%s", f->root, tables[k]);
        char *text = vat_test_read_file(path, NULL);
        assert_non_null(text);
        struct vat_buf out = VAT_BUF_INIT;
        for (char *line = text, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            assert_non_null(nl);
            *nl = 0;
            json_t *row = json_loads(line, JSON_DECODE_ANY, NULL);
            assert_non_null(row);
            const char *id = json_string_value(json_object_get(row, "task_id"));
            json_t *spec = json_loads(json_string_value(json_object_get(row, "spec_json")), 0, NULL);
            assert_non_null(spec);
            const char *checker = json_string_value(json_object_get(spec, "checker"));
            if (strcmp(checker, "regex") == 0) {
                f->planted_cases += plant_regex(spec, vat_corpus_rollout_answer(c, id, "gold"));
                char *s = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
                json_object_set_new(row, "spec_json", json_string(s));
                free(s);
            } else if (strcmp(checker, "sql") == 0) {
                const char *ref = json_string_value(json_object_get(spec, "reference_sql"));
                const json_t *load = json_object_get(spec, "load");
                size_t i;
                json_t *fx;
                json_array_foreach(json_object_get(spec, "fixtures"), i, fx) {
                    if (i == 0)
                        continue; /* the main fixture is in the prompt */
                    const char *rel = json_string_value(fx);
                    if (load) {
                        f->planted_values += plant_csv(f->root, rel, load, ref);
                    } else {
                        char *p = vat_xasprintf("%s/%s", f->root, rel);
                        f->planted_values += plant_sqlite(p, spec, ref);
                        free(p);
                    }
                }
            }
            json_decref(spec);
            char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
            vat_buf_puts(&out, s);
            vat_buf_putc(&out, '\n');
            free(s);
            json_decref(row);
        }
        FILE *w = fopen(path, "wb");
        assert_non_null(w);
        assert_int_equal(fwrite(out.data, 1, out.len, w), out.len);
        assert_int_equal(fclose(w), 0);
        vat_buf_release(&out);
        free(text);
        free(path);
    }
    vat_corpus_close(c);
    struct vat_err e = {{0}};
    if (vat_manifest_write(f->root, &e) != 0)
        fail_msg("%s", e.msg);
}

static int setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    *state = f;
    const char *src = getenv("VAT_SOURCE_DIR"), *bin = getenv("VAT_BINARY");
    if (!src || !bin)
        return -1;
    f->root = vat_test_tmpdir("leak");
    char *cmd = vat_xasprintf("'%s' build --config '%s/seeds.toml' --root '%s' --jobs 2 "
                              ">/dev/null 2>&1",
                              bin, src, f->root);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0)
        return -1;
    plant(f);
    if (vat_corpus_open(&f->hidden, f->root, NULL) != 0 ||
        vat_corpus_open_flags(&f->revealed, f->root, VAT_OPEN_REVEAL_HIDDEN, NULL) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;
    vat_corpus_close(f->hidden);
    vat_corpus_close(f->revealed);
    if (f->root)
        vat_test_rmtree(f->root);
    free(f->root);
    free(f);
    return 0;
}

/* ---- scoring ---------------------------------------------------------------------- */

static bool has_mark(const char *s)
{
    return strstr(s, MARK) != NULL;
}

/* What the whole run saw. */
struct tally {
    size_t answers, heldout_failures, revealed_marks, explained, explain_marks_revealed;
    size_t exfil_hidden;
};

/* The explain lines of answer for the task's spec, as one string. */
static char *explain(struct fix *f, const json_t *spec, const char *answer, size_t len,
                     bool reveal)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    vat_check_explain(tmp, spec, f->root, answer, len, 0, reveal);
    long n = ftell(tmp);
    rewind(tmp);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, tmp), (size_t)n);
    s[n] = 0;
    fclose(tmp);
    return s;
}

static void check_answer(struct fix *f, const char *id, const json_t *spec, const char *text,
                         vat_extract_mode mode, bool with_explain, struct tally *t)
{
    const char *checker = json_string_value(json_object_get(spec, "checker"));
    vat_result *h, *r;
    assert_int_equal(vat_corpus_score(f->hidden, id, text, strlen(text), mode, &h, NULL), 0);
    assert_int_equal(vat_corpus_score(f->revealed, id, text, strlen(text), mode, &r, NULL), 0);
    const char *reason = vat_result_reason(h);
    if (has_mark(reason))
        fail_msg("%s: the reason of '%.80s' quotes a held-out case: %s", id, text, reason);
    /* the same verdict, only the words differ */
    assert_true(vat_result_score(h) == vat_result_score(r));
    assert_string_equal(vat_result_code(h), vat_result_code(r));
    if (strstr(reason, "(held-out)") || strstr(reason, "(held out)")) {
        t->heldout_failures++;
        bool quotes = strcmp(checker, "regex") == 0 ? strchr(reason, '"') != NULL
                                                    : strchr(reason, '[') != NULL;
        if (quotes)
            fail_msg("%s: a held-out reason quotes something: %s", id, reason);
    }
    t->revealed_marks += has_mark(vat_result_reason(r));
    if (with_explain) {
        size_t n;
        const char *x = vat_result_extracted(h, &n);
        char *lines = explain(f, spec, x, n, false);
        if (has_mark(lines))
            fail_msg("%s: an explain line of '%.80s' quotes a held-out case: %.300s", id, text,
                     lines);
        free(lines);
        lines = explain(f, spec, x, n, true);
        t->explain_marks_revealed += has_mark(lines);
        free(lines);
        t->explained++;
    }
    t->answers++;
    vat_result_free(h);
    vat_result_free(r);
}

/* An answer that gives gold's rows on the main fixture and, on a fixture
 * with another row count, asks json_extract for a path read from a
 * marked column, whose error message SQLite writes with the value in it. */
static char *exfil_answer(struct fix *f, const json_t *spec, const char *gold)
{
    const json_t *load = json_object_get(spec, "load");
    const char *rel = json_string_value(json_array_get(json_object_get(spec, "fixtures"), 0));
    char *table = NULL, *column = NULL;
    long rows = -1;
    if (load) {
        table = vat_xstrdup(json_string_value(json_object_get(load, "table")));
        size_t i;
        json_t *col;
        json_array_foreach(json_object_get(load, "columns"), i, col) {
            if (!column && strcmp(json_string_value(json_array_get(col, 1)), "TEXT") == 0)
                column = vat_xstrdup(json_string_value(json_array_get(col, 0)));
        }
        struct vat_csv c = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        if (vat_csv_read(&c, f->root, rel, &e) == 0)
            rows = (long)c.nrows - 1;
        vat_csv_release(&c);
    } else {
        table = vat_xstrdup(json_string_value(json_array_get(json_object_get(spec, "tables"), 0)));
        char *p = vat_xasprintf("%s/%s", f->root, rel);
        sqlite3 *db;
        if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
            char *q = sqlite3_mprintf("SELECT (SELECT count(*) FROM %w), (SELECT name FROM "
                                      "pragma_table_info(%Q) WHERE type = 'TEXT')",
                                      table, table);
            sqlite3_stmt *st;
            if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW) {
                rows = sqlite3_column_int64(st, 0);
                if (sqlite3_column_text(st, 1))
                    column = vat_xstrdup((const char *)sqlite3_column_text(st, 1));
            }
            sqlite3_finalize(st);
            sqlite3_free(q);
        }
        sqlite3_close(db);
        free(p);
    }
    char *out = NULL;
    if (table && column && rows >= 0) {
        size_t n = strlen(gold);
        while (n && (gold[n - 1] == ';' || gold[n - 1] == ' ' || gold[n - 1] == '\n'))
            n--;
        out = vat_xasprintf("SELECT * FROM (%.*s) WHERE json_extract('{}', CASE WHEN (SELECT "
                            "count(*) FROM \"%s\") = %ld THEN '$' ELSE (SELECT max(\"%s\") FROM "
                            "\"%s\") END) IS NOT NULL",
                            (int)n, gold, table, rows, column, table);
    }
    free(table);
    free(column);
    return out;
}

static void test_no_default_feedback_quotes_a_held_out_case(void **state)
{
    struct fix *f = *state;
    print_message("  planted the marker in %zu held-out lines and %zu variant values\n",
                  f->planted_cases, f->planted_values);
    assert_true(f->planted_cases > 100);
    assert_true(f->planted_values > 1000);
    struct tally t = {0};
    static const char *const roles[] = {"gold", "trap", "malformed"};
    size_t tasks = 0, mutants = 0, exfil = 0;
    for (size_t i = 0; i < vat_corpus_task_count(f->hidden); i++) {
        const char *id = vat_corpus_task_id(f->hidden, i);
        const json_t *row = vat_corpus_row(f->hidden, id);
        json_t *spec = vat_verifier_spec(row);
        assert_non_null(spec);
        const char *checker = json_string_value(json_object_get(spec, "checker"));
        bool rx = strcmp(checker, "regex") == 0, sql = strcmp(checker, "sql") == 0;
        if (!rx && !sql) {
            json_decref(spec);
            continue;
        }
        tasks++;
        for (size_t r = 0; r < 3; r++) {
            const char *a = vat_corpus_rollout_answer(f->hidden, id, roles[r]);
            assert_non_null(a);
            check_answer(f, id, spec, a, VAT_EXTRACT_RAW, true, &t);
            char *chat = vat_xasprintf("<think>first the rows</think>\nHere it is:\n```%s\n%s\n```\n",
                                       rx ? "regex" : "sql", a);
            check_answer(f, id, spec, chat, VAT_EXTRACT_AUTO, false, &t);
            free(chat);
        }
        const char *gold = vat_corpus_rollout_answer(f->hidden, id, "gold");
        struct vat_mutants m = VAT_MUTANTS_INIT;
        struct vat_err e = {{0}};
        int rc = rx ? vat_mutate_regex(gold, &m, &e)
                    : vat_mutate_sql(gold, json_is_true(json_object_get(spec, "ordered")), &m, &e);
        assert_int_equal(rc, 0);
        for (size_t k = 0; k < m.n; k++)
            check_answer(f, id, spec, m.v[k].text, VAT_EXTRACT_RAW, true, &t);
        mutants += m.n;
        vat_mutants_release(&m);
        if (sql) {
            char *x = exfil_answer(f, spec, gold);
            if (x) {
                vat_result *h;
                assert_int_equal(
                    vat_corpus_score(f->hidden, id, x, strlen(x), VAT_EXTRACT_RAW, &h, NULL), 0);
                t.exfil_hidden += strcmp(vat_result_code(h), "sql_error") == 0 &&
                                  strstr(vat_result_reason(h), "(held out)");
                vat_result_free(h);
                check_answer(f, id, spec, x, VAT_EXTRACT_RAW, true, &t);
                exfil++;
                free(x);
            }
        }
        json_decref(spec);
    }
    print_message("  %zu regex and SQL tasks: %zu answers (%zu mutants, %zu built to make SQLite "
                  "quote a value), %zu explained; %zu reasons about a held-out case, none "
                  "quoting it\n",
                  tasks, t.answers, mutants, exfil, t.explained, t.heldout_failures);
    print_message("  revealed: %zu reasons and %zu explanations show the marker; %zu SQLite "
                  "errors on a variant withheld\n",
                  t.revealed_marks, t.explain_marks_revealed, t.exfil_hidden);
    assert_true(tasks >= 36 + 36);
    assert_true(t.heldout_failures > 100);
    /* the markers reach the checkers: revealed, they show */
    assert_true(t.revealed_marks > 100);
    assert_true(t.explain_marks_revealed > 100);
    /* SQLite's own message would have carried a marked value */
    assert_true(t.exfil_hidden > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_default_feedback_quotes_a_held_out_case),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
