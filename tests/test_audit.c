/* test_audit.c — `vat audit` (src/audit.h, src/cmd_audit.c).  A small
 * corpus built by the vat binary ($VAT_BINARY) audits clean; then each
 * leak kind is planted in a copy of it — a copied row, a duplicated
 * fixture, a shared held-out string, a near-duplicate CSV and SQLite
 * fixture, a repeated gold program, duplicates within a side — and so are
 * broken rows (unparsable, out of order, missing ids, unsafe paths): each
 * is found, with exit 1, and nothing else is.  The default corpus audits
 * clean in both split modes; the command prints JSON lines and exits 0,
 * 1 or 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <sqlite3.h>

#include "audit.h"
#include "csvio.h"
#include "jsonout.h"
#include "tables.h"
#include "testutil.h"
#include "vat.h"

static const char *bin(void)
{
    const char *b = getenv("VAT_BINARY");
    return b && *b ? b : "./vat";
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *write_file(const char *dir, const char *name, const char *body)
{
    char *path = vat_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

/* ---- the corpus and its copies ------------------------------------------ */

/* grouped_sum in CSV: the tests below edit its fixtures as CSV text. */
static const char small_config[] =
    "[corpus]\nmaster_seed = 3\ntest_fraction = 0.34\n"
    "[templates.grouped_sum]\ncount = 6\nfixture_format = \"csv\"\n"
    "[templates.regex_iso_dates]\ncount = 6\n"
    "[templates.sql_paid_revenue]\ncount = 6\n";

enum { T_GS, T_RX, T_SQL, N_T };
static const char *const tmpl_names[N_T] = {"grouped_sum", "regex_iso_dates", "sql_paid_revenue"};

struct corpus {
    char *dir, *clean;
    char train[N_T][96], test[N_T][96]; /* the first task of each side */
    long tasks[VAT_N_SPLITS];
    int copies;
};

static json_t *load_rows(const char *root, int table, int side)
{
    char *path =
        vat_xasprintf("%s/out/%s/%s.jsonl", root, vat_table_names[table], vat_split_names[side]);
    char *data = vat_test_read_file(path, NULL);
    assert_non_null(data);
    json_t *rows = json_array();
    for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n")) {
        json_t *row = json_loads(l, 0, NULL);
        assert_non_null(row);
        json_array_append_new(rows, row);
    }
    free(data);
    free(path);
    return rows;
}

static void save_rows(const char *root, int table, int side, const json_t *rows)
{
    struct vat_buf b = VAT_BUF_INIT;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        vat_json_dump_buf(&b, row);
        vat_buf_putc(&b, '\n');
    }
    char *path =
        vat_xasprintf("%s/out/%s/%s.jsonl", root, vat_table_names[table], vat_split_names[side]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(b.data ? b.data : "", 1, b.len, f);
    fclose(f);
    free(path);
    vat_buf_release(&b);
}

static json_t *row_of(json_t *rows, const char *task)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
        if (strcmp(json_string_value(json_object_get(row, "task_id")), task) == 0)
            return row;
    fail_msg("no row for '%s'", task);
    return NULL;
}

static int cmp_row_task(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(json_string_value(json_object_get(x, "task_id")),
                  json_string_value(json_object_get(y, "task_id")));
}

/* Returns rows sorted by task_id (stable for equal ids: insertion order). */
static json_t *sorted_rows(json_t *rows)
{
    size_t n = json_array_size(rows);
    json_t **v = vat_xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(rows, i);
    /* insertion sort: stable, and the tables are small */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp_row_task(&v[j - 1], &v[j]) > 0; j--) {
            json_t *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

static char *copy_corpus(struct corpus *c)
{
    char *root = vat_xasprintf("%s/copy%d", c->dir, c->copies++);
    char *cmd = vat_xasprintf("cp -r '%s' '%s'", c->clean, root);
    assert_int_equal(run(cmd), 0);
    free(cmd);
    return root;
}

static void same_reports(const struct vat_audit_report *a, const struct vat_audit_report *b)
{
    json_t *sa = vat_audit_summary_json(a), *sb = vat_audit_summary_json(b);
    char *x = vat_json_dumps(sa), *y = vat_json_dumps(sb);
    assert_string_equal(x, y);
    free(x);
    free(y);
    json_decref(sa);
    json_decref(sb);
    assert_int_equal(a->nf, b->nf);
    for (size_t i = 0; i < a->nf; i++) {
        json_t *fa = vat_audit_finding_json(&a->f[i]), *fb = vat_audit_finding_json(&b->f[i]);
        assert_true(json_equal(fa, fb));
        json_decref(fa);
        json_decref(fb);
    }
}

/* Audits root; and again with the smallest memory budget, every sort
 * spilled to many runs and merged in passes, which must not change the
 * report (findings, their order, the figures), nor with a kept-finding
 * bound of 2 the first two of each kind. */
static void audit(const char *root, struct vat_audit_report *r)
{
    struct vat_err e = {{0}};
    vat_audit_init(r, 1000);
    assert_int_equal(vat_audit_run(root, r, &e), 0);
    struct vat_audit_report small;
    struct vat_audit_opts tight = {.memory_budget = 1};
    vat_audit_init(&small, 1000);
    assert_int_equal(vat_audit_run_with(root, &tight, &small, &e), 0);
    same_reports(r, &small);
    vat_audit_release(&small);
    struct vat_audit_report two;
    vat_audit_init(&two, 2);
    assert_int_equal(vat_audit_run_with(root, &tight, &two, &e), 0);
    size_t k = 0;
    for (size_t i = 0; i < r->nf; i++) {
        long before = 0; /* findings of its kind before it */
        for (size_t j = 0; j < i; j++)
            before += r->f[j].kind == r->f[i].kind;
        if (before >= 2)
            continue;
        assert_true(k < two.nf);
        assert_int_equal(two.f[k].kind, r->f[i].kind);
        assert_string_equal(two.f[k].detail, r->f[i].detail);
        k++;
    }
    assert_int_equal(k, two.nf);
    assert_int_equal(two.findings, r->findings);
    vat_audit_release(&two);
}

/* Prints what was found, so a failing test says why. */
static void show(const struct vat_audit_report *r)
{
    for (size_t i = 0; i < r->nf; i++)
        print_message("  %s %s %s %s: %s\n", vat_audit_kind_name(r->f[i].kind),
                      r->f[i].table ? r->f[i].table : "-", r->f[i].split ? r->f[i].split : "-",
                      r->f[i].task_id ? r->f[i].task_id : "-", r->f[i].detail);
}

/* Asserts the findings are exactly of the kinds in want (each >= 1). */
static void expect_only(const struct vat_audit_report *r, const enum vat_audit_kind *want,
                        size_t n)
{
    for (int k = 0; k < VAT_AUDIT_N_KINDS; k++) {
        int wanted = 0;
        for (size_t i = 0; i < n; i++)
            wanted |= want[i] == (enum vat_audit_kind)k;
        if (wanted ? r->count[k] == 0 : r->count[k] != 0) {
            show(r);
            fail_msg("finding kind '%s': %ld found, %s expected", vat_audit_kind_name(k),
                     r->count[k], wanted ? "some" : "none");
        }
    }
}

static char *file_sha(const char *root, const char *rel)
{
    char *path = vat_path_join(root, rel);
    size_t n = 0;
    char *data = vat_test_read_file(path, &n);
    assert_non_null(data);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    EVP_Digest(data, n, d, &dl, EVP_sha256(), NULL);
    char *hex = vat_xcalloc(65, 1);
    for (unsigned int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    free(data);
    free(path);
    return hex;
}

static void copy_file(const char *root, const char *from, const char *to)
{
    char *a = vat_path_join(root, from), *b = vat_path_join(root, to);
    char *cmd = vat_xasprintf("cp '%s' '%s'", a, b);
    assert_int_equal(run(cmd), 0);
    free(cmd);
    free(a);
    free(b);
}

/* The main fixture path of a task, from its experience row. */
static char *main_fixture(const char *root, int side, const char *task)
{
    json_t *rows = load_rows(root, VAT_T_EXPERIENCE, side);
    char *p = vat_xstrdup(
        json_string_value(json_object_get(json_object_get(row_of(rows, task), "fixture"), "path")));
    json_decref(rows);
    return p;
}

/* Records the file's current sha256 for rel in experience and
 * fixture_generators (side's files), as a careful forger would. */
static void reseal(const char *root, int side, const char *rel)
{
    char *sha = file_sha(root, rel);
    json_t *exp = load_rows(root, VAT_T_EXPERIENCE, side);
    size_t i, j;
    json_t *row, *v;
    int hits = 0;
    json_array_foreach(exp, i, row) {
        json_t *fx = json_object_get(row, "fixture");
        if (strcmp(json_string_value(json_object_get(fx, "path")), rel) == 0) {
            json_object_set_new(fx, "sha256", json_string(sha));
            hits++;
        }
        json_array_foreach(json_object_get(row, "variants"), j, v) {
            if (strcmp(json_string_value(json_object_get(v, "path")), rel) == 0) {
                json_object_set_new(v, "sha256", json_string(sha));
                hits++;
            }
        }
    }
    save_rows(root, VAT_T_EXPERIENCE, side, exp);
    json_decref(exp);
    json_t *fg = load_rows(root, VAT_T_FIXTURE_GENERATORS, side);
    json_array_foreach(fg, i, row) {
        if (strcmp(json_string_value(json_object_get(row, "path")), rel) == 0) {
            json_object_set_new(row, "sha256", json_string(sha));
            hits++;
        }
    }
    save_rows(root, VAT_T_FIXTURE_GENERATORS, side, fg);
    json_decref(fg);
    assert_int_equal(hits, 2);
    free(sha);
}

static int setup(void **state)
{
    struct corpus *c = vat_xcalloc(1, sizeof *c);
    c->dir = vat_test_tmpdir("audit");
    c->clean = vat_xasprintf("%s/clean", c->dir);
    char *cfg = write_file(c->dir, "seeds.toml", small_config);
    char *cmd = vat_xasprintf("mkdir -p '%s' && '%s' build --config '%s' --root '%s' --jobs 2 "
                              "--only grouped_sum,regex_iso_dates,sql_paid_revenue >/dev/null",
                              c->clean, bin(), cfg, c->clean);
    int rc = run(cmd);
    free(cmd);
    free(cfg);
    if (rc != 0)
        return -1;
    for (int s = 0; s < VAT_N_SPLITS; s++) {
        json_t *rows = load_rows(c->clean, VAT_T_EXPERIENCE, s);
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) {
            const char *id = json_string_value(json_object_get(row, "task_id"));
            const char *tm = json_string_value(json_object_get(row, "template"));
            for (int t = 0; t < N_T; t++) {
                char *slot = s == VAT_SPLIT_TRAIN ? c->train[t] : c->test[t];
                if (strcmp(tm, tmpl_names[t]) == 0 && !slot[0])
                    snprintf(slot, 96, "%s", id);
            }
        }
        c->tasks[s] = (long)json_array_size(rows);
        json_decref(rows);
    }
    for (int t = 0; t < N_T; t++)
        if (!c->train[t][0] || !c->test[t][0])
            return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct corpus *c = *state;
    vat_test_rmtree(c->dir);
    free(c->dir);
    free(c->clean);
    free(c);
    return 0;
}

/* ---- in-process `vat audit`, output captured ---------------------------- */

static int audit_cmd(struct corpus *c, char **out, char **err, int argc, char **argv)
{
    char *po = vat_xasprintf("%s/cmd.out", c->dir), *pe = vat_xasprintf("%s/cmd.err", c->dir);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(so >= 0 && se >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = vat_cmd_audit(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(fo);
    close(fe);
    *out = vat_test_read_file(po, NULL);
    *err = vat_test_read_file(pe, NULL);
    free(po);
    free(pe);
    return rc;
}

/* The stdout lines of the command as parsed JSON objects. */
static json_t *json_lines(char *text)
{
    json_t *v = json_array();
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        json_t *o = json_loads(l, 0, NULL);
        assert_non_null(o);
        json_array_append_new(v, o);
    }
    return v;
}

/* ---- tests -------------------------------------------------------------- */

static void test_normal_forms(void **state)
{
    (void)state;
    char *p = vat_audit_normalise_prompt("  Total\tAmount\n\n per  REGION ");
    assert_string_equal(p, "total amount per region");
    free(p);
    char *a = vat_audit_normalise_program(
        "SELECT  region ,\n SUM(amount) AS Total -- the sum\nFROM orders WHERE status = 'Paid  X'"
        " /* c */ GROUP BY region ;",
        "sql");
    char *b = vat_audit_normalise_program(
        "select region, sum( amount ) as total from orders where STATUS = 'Paid  X' group by "
        "REGION",
        "sql");
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "'Paid  X'")); /* literals kept byte for byte */
    free(a);
    free(b);
    a = vat_audit_normalise_program("select 'a'", "sql");
    b = vat_audit_normalise_program("select 'A'", "sql");
    assert_string_not_equal(a, b);
    free(a);
    free(b);
    a = vat_audit_normalise_program(" \\d{4}  -x\n", "regex");
    assert_string_equal(a, "\\d{4} -x");
    free(a);
    a = vat_audit_normalise_program("\\D", "regex");
    b = vat_audit_normalise_program("\\d", "regex");
    assert_string_not_equal(a, b); /* case matters in a pattern */
    free(a);
    free(b);
}

static void test_clean_corpus(void **state)
{
    struct corpus *c = *state;
    struct vat_audit_report r;
    audit(c->clean, &r);
    expect_only(&r, NULL, 0);
    assert_int_equal(r.findings, 0);
    assert_int_equal(r.tasks[VAT_SPLIT_TRAIN], c->tasks[VAT_SPLIT_TRAIN]);
    assert_int_equal(r.tasks[VAT_SPLIT_TEST], c->tasks[VAT_SPLIT_TEST]);
    assert_true(r.fixtures[VAT_SPLIT_TRAIN] > r.tasks[VAT_SPLIT_TRAIN]); /* variants too */
    assert_int_equal(r.ngram_test_prompts, c->tasks[VAT_SPLIT_TEST]);
    assert_true(r.ngram_overlap_share >= 0.0 && r.ngram_overlap_share <= 1.0);
    assert_true(r.max_overlap_share <= 0.5);
    assert_int_equal(r.n_templates, N_T);
    vat_audit_release(&r);
}

/* ---- planting a leak ------------------------------------------------------
 * Every scenario copies the clean corpus, mutates the copy, audits it and
 * expects findings of exactly some kinds; what it asserts beyond that it
 * reads from the report. */

struct leak {
    char *root;       /* the copy the leak is planted in */
    char *tr, *te;    /* main fixtures of the first train and test task of a template */
    struct vat_audit_report r;
};

/* Copies the corpus; tmpl >= 0 also names that template's main fixtures. */
static void leak_begin(struct leak *l, struct corpus *c, int tmpl)
{
    memset(l, 0, sizeof *l);
    l->root = copy_corpus(c);
    if (tmpl >= 0) {
        l->tr = main_fixture(l->root, VAT_SPLIT_TRAIN, c->train[tmpl]);
        l->te = main_fixture(l->root, VAT_SPLIT_TEST, c->test[tmpl]);
    }
}

/* Audits the copy and asserts the findings are of exactly the nwant kinds
 * that follow (each found at least once). */
static void leak_audit(struct leak *l, int nwant, ...)
{
    enum vat_audit_kind want[VAT_AUDIT_N_KINDS];
    va_list ap;
    va_start(ap, nwant);
    for (int i = 0; i < nwant; i++)
        want[i] = (enum vat_audit_kind)va_arg(ap, int);
    va_end(ap);
    audit(l->root, &l->r);
    expect_only(&l->r, want, (size_t)nwant);
}

static void leak_end(struct leak *l)
{
    vat_audit_release(&l->r);
    vat_test_rmtree(l->root);
    free(l->root);
    free(l->tr);
    free(l->te);
}

/* Writes rows over a table file and drops them. */
static void store_rows(const char *root, int table, int side, json_t *rows)
{
    save_rows(root, table, side, rows);
    json_decref(rows);
}

/* Appends a copy of task's row of table from side `from` to side `to`,
 * relabelled with its new side when relabel is set; keeps the file sorted
 * by task_id when sorted is set. */
static void plant_row(const char *root, int table, const char *task, int from, int to,
                      bool relabel, bool sorted)
{
    json_t *src = load_rows(root, table, from);
    json_t *dst = from == to ? json_incref(src) : load_rows(root, table, to);
    json_t *row = json_deep_copy(row_of(src, task));
    if (relabel)
        json_object_set_new(row, "split", json_string(vat_split_names[to]));
    json_array_append_new(dst, row);
    store_rows(root, table, to, sorted ? sorted_rows(dst) : json_incref(dst));
    json_decref(dst);
    json_decref(src);
}

/* The number of data rows of a CSV fixture. */
static size_t csv_data_rows(const char *root, const char *rel)
{
    struct vat_csv probe = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&probe, root, rel, &e), 0);
    size_t n = probe.nrows - 1;
    vat_csv_release(&probe);
    return n;
}

static void test_copied_row(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    /* A train regex task's experience row, relabelled, in the test file. */
    plant_row(l.root, VAT_T_EXPERIENCE, c->train[T_RX], VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, true,
              true);
    /* The same fixture files are now listed on both sides, so they are
     * also (trivially) near-duplicates of themselves. */
    leak_audit(&l, 6, VAT_AUDIT_TASK_ID, VAT_AUDIT_FIXTURE_DIGEST, VAT_AUDIT_PROMPT,
               VAT_AUDIT_GOLD_PROGRAM, VAT_AUDIT_NEAR_DUPLICATE, VAT_AUDIT_TASK_ROWS_MISSING);
    assert_int_equal(l.r.count[VAT_AUDIT_TASK_ID], 1);
    /* The copy has no rows in the test side's six other tables. */
    assert_int_equal(l.r.count[VAT_AUDIT_TASK_ROWS_MISSING], 1);
    /* The copy has variants: the held-out lines file crosses too. */
    assert_int_equal(l.r.count[VAT_AUDIT_FIXTURE_DIGEST], 2);
    leak_end(&l);
}

static void test_copied_row_other_table(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    plant_row(l.root, VAT_T_ROLLOUTS, c->train[T_GS], VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, true,
              true);
    leak_audit(&l, 2, VAT_AUDIT_TASK_ID, VAT_AUDIT_ORPHAN);
    assert_int_equal(l.r.count[VAT_AUDIT_TASK_ID], 1);
    leak_end(&l);
}

static void test_duplicated_fixture_across(void **state)
{
    struct leak l;
    leak_begin(&l, *state, T_GS);
    copy_file(l.root, l.te, l.tr);
    reseal(l.root, VAT_SPLIT_TRAIN, l.tr);
    leak_audit(&l, 2, VAT_AUDIT_FIXTURE_DIGEST, VAT_AUDIT_NEAR_DUPLICATE);
    assert_int_equal(l.r.count[VAT_AUDIT_FIXTURE_DIGEST], 1);
    assert_true(l.r.max_overlap_share == 1.0);
    leak_end(&l);
}

static void test_duplicated_fixture_within_side(void **state)
{
    struct leak l;
    leak_begin(&l, *state, -1);
    json_t *train = load_rows(l.root, VAT_T_EXPERIENCE, VAT_SPLIT_TRAIN);
    /* Two train tasks of one template. */
    const char *a = NULL, *b = NULL;
    size_t i;
    json_t *row;
    json_array_foreach(train, i, row) {
        const char *id = json_string_value(json_object_get(row, "task_id"));
        if (strncmp(id, "grouped_sum-", 12) != 0)
            continue;
        if (!a)
            a = id;
        else if (!b)
            b = id;
    }
    assert_non_null(b);
    char *fa = main_fixture(l.root, VAT_SPLIT_TRAIN, a);
    char *fb = main_fixture(l.root, VAT_SPLIT_TRAIN, b);
    json_decref(train);
    copy_file(l.root, fa, fb);
    reseal(l.root, VAT_SPLIT_TRAIN, fb);
    leak_audit(&l, 1, VAT_AUDIT_DUP_FIXTURE_DIGEST);
    leak_end(&l);
    free(fa);
    free(fb);
}

static void test_fixture_changed_behind_tables(void **state)
{
    struct leak l;
    leak_begin(&l, *state, T_GS);
    char *path = vat_path_join(l.root, l.tr);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("X-1,north,paid,1.00\n", f);
    fclose(f);
    free(path);
    leak_audit(&l, 1, VAT_AUDIT_FIXTURE_SHA256);
    assert_int_equal(l.r.count[VAT_AUDIT_FIXTURE_SHA256], 2); /* experience and fixture_generators */
    leak_end(&l);
}

/* The first held-out case of a checker spec. */
static json_t *first_heldout(json_t *spec, const char *task)
{
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(spec, "cases"), i, cs)
        if (json_is_true(json_object_get(cs, "heldout")))
            return cs;
    fail_msg("no held-out case for '%s'", task);
    return NULL;
}

static void test_shared_heldout_string(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    json_t *test = load_rows(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TEST);
    json_t *train = load_rows(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TRAIN);
    json_t *test_spec = vat_verifier_spec(row_of(test, c->test[T_RX]));
    json_t *train_spec = vat_verifier_spec(row_of(train, c->train[T_RX]));
    const json_t *src = first_heldout(test_spec, c->test[T_RX]);
    json_t *dst = first_heldout(train_spec, c->train[T_RX]);
    assert_non_null(src);
    assert_non_null(dst);
    json_object_set(dst, "text", json_object_get(src, "text"));
    json_object_set(dst, "expected", json_object_get(src, "expected"));
    vat_verifier_set_spec(row_of(train, c->train[T_RX]), train_spec);
    store_rows(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TRAIN, train);
    json_decref(test_spec);
    json_decref(train_spec);
    json_decref(test);

    leak_audit(&l, 1, VAT_AUDIT_HELDOUT_STRING);
    assert_int_equal(l.r.findings, 1);
    assert_string_equal(l.r.f[0].task_id, c->test[T_RX]);
    assert_non_null(strstr(l.r.f[0].detail, c->train[T_RX]));
    leak_end(&l);
}

/* Rewrites the train task's CSV fixture as the test fixture's header and
 * its first `take` data rows, then `own` of the train fixture's own rows. */
static void graft_rows(const char *root, const char *tr, const char *te, size_t take, size_t own,
                       size_t *te_rows)
{
    struct vat_csv a = VAT_CSV_INIT, b = VAT_CSV_INIT, out = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_csv_read(&a, root, te, &e), 0);
    assert_int_equal(vat_csv_read(&b, root, tr, &e), 0);
    assert_true(a.nrows > take && b.nrows > own);
    for (size_t r = 0; r <= take; r++)
        vat_csv_add_row(&out, (const char *const *)a.row[r].cell, a.row[r].n);
    for (size_t r = 1; r <= own; r++)
        vat_csv_add_row(&out, (const char *const *)b.row[r].cell, b.row[r].n);
    assert_int_equal(vat_csv_write(&out, root, tr, &e), 0);
    *te_rows = a.nrows - 1;
    vat_csv_release(&a);
    vat_csv_release(&b);
    vat_csv_release(&out);
}

static void test_near_duplicate_csv(void **state)
{
    struct leak l;
    leak_begin(&l, *state, T_GS);
    size_t n = csv_data_rows(l.root, l.te);
    size_t te_rows = 0, take = n * 6 / 10 + 1;
    graft_rows(l.root, l.tr, l.te, take, 2, &te_rows);
    reseal(l.root, VAT_SPLIT_TRAIN, l.tr);
    leak_audit(&l, 1, VAT_AUDIT_NEAR_DUPLICATE);
    assert_int_equal(l.r.count[VAT_AUDIT_NEAR_DUPLICATE], 1);
    assert_int_equal(l.r.max_overlap_rows, (long)take);
    assert_true(l.r.max_overlap_share > 0.5);
    leak_end(&l);
}

static void test_overlap_under_half_is_a_figure(void **state)
{
    struct leak l;
    leak_begin(&l, *state, T_GS);
    size_t own = csv_data_rows(l.root, l.tr);
    size_t n = csv_data_rows(l.root, l.te);
    /* Under half of either fixture's rows: fewer than 40% of the test
     * rows, and fewer than the train fixture's own rows kept beside them. */
    size_t take = n * 4 / 10 < own ? n * 4 / 10 : own - 1;
    assert_true(take >= 1);
    size_t te_rows = 0;
    graft_rows(l.root, l.tr, l.te, take, own, &te_rows);
    reseal(l.root, VAT_SPLIT_TRAIN, l.tr);
    leak_audit(&l, 0);
    double s_te = (double)take / (double)te_rows, s_tr = (double)take / (double)(take + own);
    assert_int_equal(l.r.max_overlap_rows, (long)take);
    assert_true(l.r.max_overlap_share > 0.0 && l.r.max_overlap_share <= 0.5);
    assert_true(fabs(l.r.max_overlap_share - (s_te >= s_tr ? s_te : s_tr)) < 1e-12);
    assert_string_equal(l.r.max_overlap_a, s_te >= s_tr ? l.te : l.tr);
    assert_string_equal(l.r.max_overlap_b, s_te >= s_tr ? l.tr : l.te);
    leak_end(&l);
}

static void test_near_duplicate_sqlite(void **state)
{
    struct leak l;
    leak_begin(&l, *state, T_SQL);
    copy_file(l.root, l.te, l.tr);
    /* One row fewer: other bytes, most rows shared. */
    char *path = vat_path_join(l.root, l.tr);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "ORDER BY name LIMIT 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *sql = vat_xasprintf("DELETE FROM \"%s\" WHERE rowid = (SELECT min(rowid) FROM \"%s\")",
                              (const char *)sqlite3_column_text(st, 0),
                              (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_changes(db), 1);
    sqlite3_close(db);
    free(sql);
    free(path);
    reseal(l.root, VAT_SPLIT_TRAIN, l.tr);
    leak_audit(&l, 1, VAT_AUDIT_NEAR_DUPLICATE);
    assert_true(l.r.max_overlap_share == 1.0); /* every row of the trimmed copy */
    leak_end(&l);
}

static void swap_case_outside_quotes(char *s)
{
    int quoted = 0;
    for (; *s; s++) {
        if (*s == '\'')
            quoted = !quoted;
        else if (!quoted && *s >= 'a' && *s <= 'z')
            *s = (char)(*s - 'a' + 'A');
        else if (!quoted && *s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
    }
}

static void test_repeated_gold_program(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    json_t *test = load_rows(l.root, VAT_T_EXPERIENCE, VAT_SPLIT_TEST);
    json_t *train = load_rows(l.root, VAT_T_EXPERIENCE, VAT_SPLIT_TRAIN);
    const char *gold = json_string_value(json_object_get(row_of(test, c->test[T_SQL]), "gold"));
    assert_non_null(gold);
    /* Same query, other spelling: case, spacing, a trailing semicolon. */
    char *other = vat_xasprintf("\n  %s ;\n", gold);
    swap_case_outside_quotes(other);
    json_object_set_new(row_of(train, c->train[T_SQL]), "gold", json_string(other));
    store_rows(l.root, VAT_T_EXPERIENCE, VAT_SPLIT_TRAIN, train);
    free(other);
    json_decref(test);

    leak_audit(&l, 1, VAT_AUDIT_GOLD_PROGRAM);
    assert_int_equal(l.r.findings, 1);
    leak_end(&l);
}

static void test_duplicates_within_side(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    plant_row(l.root, VAT_T_EXPERIENCE, c->train[T_GS], VAT_SPLIT_TRAIN, VAT_SPLIT_TRAIN, false,
              true);
    leak_audit(&l, 1, VAT_AUDIT_DUP_TASK_ID);
    assert_int_equal(l.r.count[VAT_AUDIT_DUP_TASK_ID], 1);
    assert_int_equal(l.r.tasks[VAT_SPLIT_TRAIN], c->tasks[VAT_SPLIT_TRAIN] + 1);
    leak_end(&l);
}

static void test_duplicate_prompt_within_side(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    json_t *train = load_rows(l.root, VAT_T_SFT_EXAMPLES, VAT_SPLIT_TRAIN);
    /* Another train task with a's prompt, case and spacing changed. */
    const char *a = c->train[T_GS];
    const char *prompt = vat_row_prompt(row_of(train, a));
    assert_non_null(prompt);
    char *other = vat_xasprintf("  %s\n", prompt);
    for (char *p = other; *p; p++) {
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
        else if (*p == ' ')
            *p = '\t';
    }
    json_object_set_new(json_array_get(json_object_get(row_of(train, c->train[T_RX]), "prompt"), 0),
                        "content", json_string(other));
    store_rows(l.root, VAT_T_SFT_EXAMPLES, VAT_SPLIT_TRAIN, train);
    free(other);
    leak_audit(&l, 1, VAT_AUDIT_DUP_PROMPT);
    leak_end(&l);
}

/* Inserts text as a line before line `at` (0-based) of a table file. */
static void insert_line(const char *root, int table, int side, size_t at, const char *text)
{
    char *path =
        vat_xasprintf("%s/out/%s/%s.jsonl", root, vat_table_names[table], vat_split_names[side]);
    char *data = vat_test_read_file(path, NULL);
    assert_non_null(data);
    struct vat_buf b = VAT_BUF_INIT;
    size_t line = 0;
    char *p = data;
    for (; *p && line < at; p++)
        if (*p == '\n')
            line++;
    vat_buf_putn(&b, data, (size_t)(p - data));
    vat_buf_puts(&b, text);
    vat_buf_puts(&b, p);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(b.data, 1, b.len, f);
    fclose(f);
    vat_buf_release(&b);
    free(data);
    free(path);
}

static void test_unparsable_lines(void **state)
{
    struct leak l;
    leak_begin(&l, *state, -1);
    insert_line(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TRAIN, 1, "{\"task_id\": \"x\", \n");
    insert_line(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TRAIN, 3, "\n");
    insert_line(l.root, VAT_T_RUBRIC_ITEMS, VAT_SPLIT_TEST, 0, "[1, 2]\n");
    insert_line(l.root, VAT_T_RUBRIC_ITEMS, VAT_SPLIT_TEST, 0, "{\"a\": 1, \"a\": 2}\n");
    leak_audit(&l, 1, VAT_AUDIT_UNPARSABLE);
    assert_int_equal(l.r.count[VAT_AUDIT_UNPARSABLE], 4);
    leak_end(&l);
}

static void test_out_of_order_rows(void **state)
{
    struct leak l;
    leak_begin(&l, *state, -1);
    json_t *rows = load_rows(l.root, VAT_T_RUBRIC_ITEMS, VAT_SPLIT_TEST);
    size_t n = json_array_size(rows);
    json_t *first = json_incref(json_array_get(rows, 0));
    json_array_set(rows, 0, json_array_get(rows, n - 1));
    json_array_set_new(rows, n - 1, first);
    store_rows(l.root, VAT_T_RUBRIC_ITEMS, VAT_SPLIT_TEST, rows);
    leak_audit(&l, 1, VAT_AUDIT_ORDER);
    leak_end(&l);
}

static void test_missing_ids(void **state)
{
    struct leak l;
    leak_begin(&l, *state, -1);
    json_t *sft = load_rows(l.root, VAT_T_SFT_EXAMPLES, VAT_SPLIT_TRAIN);
    json_object_del(json_array_get(sft, 0), "task_id");
    store_rows(l.root, VAT_T_SFT_EXAMPLES, VAT_SPLIT_TRAIN, sft);
    json_t *ro = load_rows(l.root, VAT_T_ROLLOUTS, VAT_SPLIT_TEST);
    json_object_del(json_array_get(ro, 1), "rollout_id");
    store_rows(l.root, VAT_T_ROLLOUTS, VAT_SPLIT_TEST, ro);
    /* The sft row without its task_id leaves that task without one. */
    leak_audit(&l, 2, VAT_AUDIT_MISSING_ID, VAT_AUDIT_TASK_ROWS_MISSING);
    assert_int_equal(l.r.count[VAT_AUDIT_MISSING_ID], 2);
    assert_int_equal(l.r.count[VAT_AUDIT_TASK_ROWS_MISSING], 1);
    leak_end(&l);
}

static void test_unsafe_and_missing_paths(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    json_t *fg = load_rows(l.root, VAT_T_FIXTURE_GENERATORS, VAT_SPLIT_TRAIN);
    json_object_set_new(json_array_get(fg, 0), "path", json_string("../../../etc/passwd"));
    json_object_set_new(json_array_get(fg, 1), "path", json_integer(7));
    store_rows(l.root, VAT_T_FIXTURE_GENERATORS, VAT_SPLIT_TRAIN, fg);
    json_t *ve = load_rows(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TEST);
    json_t *spec = vat_verifier_spec(row_of(ve, c->test[T_SQL]));
    json_t *fx = json_object_get(spec, "fixtures");
    json_array_append_new(fx, json_string("/etc/passwd"));
    json_array_append_new(fx, json_string("fixtures/sql_paid_revenue")); /* a directory */
    json_array_append_new(fx, json_string("fixtures/no/such.sqlite"));
    vat_verifier_set_spec(row_of(ve, c->test[T_SQL]), spec);
    json_decref(spec);
    store_rows(l.root, VAT_T_VERIFIERS, VAT_SPLIT_TEST, ve);
    leak_audit(&l, 2, VAT_AUDIT_UNSAFE_PATH, VAT_AUDIT_FIXTURE_MISSING);
    assert_int_equal(l.r.count[VAT_AUDIT_UNSAFE_PATH], 3);
    assert_int_equal(l.r.count[VAT_AUDIT_FIXTURE_MISSING], 2);
    leak_end(&l);
}

static void test_missing_table_and_corpus(void **state)
{
    struct corpus *c = *state;
    struct leak l;
    leak_begin(&l, c, -1);
    char *path = vat_xasprintf("%s/out/preference_pairs/test.jsonl", l.root);
    assert_int_equal(remove(path), 0);
    free(path);
    leak_audit(&l, 1, VAT_AUDIT_MISSING_TABLE);
    leak_end(&l);

    /* No out/ at all is an input error, not a finding. */
    struct vat_audit_report r;
    struct vat_err e = {{0}};
    vat_audit_init(&r, 10);
    assert_int_equal(vat_audit_run(c->dir, &r, &e), -1);
    assert_non_null(strstr(e.msg, "no corpus"));
    vat_audit_release(&r);
}

static void test_command(void **state)
{
    struct corpus *c = *state;
    char *out, *err;
    char *clean_argv[] = {"audit", "--root", c->clean, NULL};
    assert_int_equal(audit_cmd(c, &out, &err, 3, clean_argv), 0);
    json_t *lines = json_lines(out);
    assert_int_equal(json_array_size(lines), 1);
    json_t *sum = json_array_get(lines, 0);
    assert_true(json_is_true(json_object_get(sum, "clean")));
    assert_non_null(json_object_get(sum, "ngram_overlap_share"));
    assert_non_null(json_object_get(json_object_get(sum, "max_fixture_row_overlap"), "share"));
    assert_string_equal(err, "audit: clean\n");
    json_decref(lines);
    free(out);
    free(err);

    /* A leak: findings, then the summary; exit 1. */
    char *root = copy_corpus(c);
    /* appended as it is: out of order too */
    plant_row(root, VAT_T_EXPERIENCE, c->train[T_GS], VAT_SPLIT_TRAIN, VAT_SPLIT_TEST, false,
              false);
    char *argv[] = {"audit", "--root", root, NULL};
    assert_int_equal(audit_cmd(c, &out, &err, 3, argv), 1);
    lines = json_lines(out);
    size_t n = json_array_size(lines);
    assert_true(n >= 3);
    for (size_t i = 0; i + 1 < n; i++) {
        json_t *f = json_array_get(lines, i);
        assert_non_null(json_string_value(json_object_get(f, "finding")));
        assert_non_null(json_object_get(f, "detail"));
    }
    sum = json_array_get(lines, n - 1);
    assert_true(json_is_false(json_object_get(sum, "clean")));
    assert_int_equal(json_integer_value(json_object_get(sum, "findings")), (json_int_t)(n - 1));
    assert_true(json_integer_value(json_object_get(json_object_get(sum, "by_kind"), "order")) >=
                1);
    char want_err[64];
    snprintf(want_err, sizeof want_err, "audit: %zu findings\n", n - 1);
    assert_string_equal(err, want_err);
    json_decref(lines);
    free(out);
    free(err);

    /* --max-per-kind 0: the summary alone, counting what it left out. */
    char *quiet_argv[] = {"audit", "--root", root, "--max-per-kind", "0", NULL};
    assert_int_equal(audit_cmd(c, &out, &err, 5, quiet_argv), 1);
    lines = json_lines(out);
    assert_int_equal(json_array_size(lines), 1);
    sum = json_array_get(lines, 0);
    assert_int_equal(json_integer_value(json_object_get(sum, "findings")), (json_int_t)(n - 1));
    assert_true(json_object_size(json_object_get(sum, "omitted")) >= 1);
    json_decref(lines);
    free(out);
    free(err);
    vat_test_rmtree(root);
    free(root);

    /* Usage and input errors: exit 2. */
    char *bad_argv[] = {"audit", "--bogus", NULL};
    assert_int_equal(audit_cmd(c, &out, &err, 2, bad_argv), 2);
    free(out);
    free(err);
    char *none_argv[] = {"audit", "--root", c->dir, NULL};
    assert_int_equal(audit_cmd(c, &out, &err, 3, none_argv), 2);
    assert_non_null(strstr(err, "no corpus"));
    free(out);
    free(err);
}

/* The repository's seeds.toml, built in both split modes, audits clean. */
static void test_default_corpus_both_modes(void **state)
{
    struct corpus *c = *state;
    const char *src = getenv("VAT_SOURCE_DIR");
    assert_non_null(src);
    char *seeds_path = vat_xasprintf("%s/seeds.toml", src);
    char *seeds = vat_test_read_file(seeds_path, NULL);
    assert_non_null(seeds);
    const char *random_line = "split = \"random\"";
    char *at = strstr(seeds, random_line);
    assert_non_null(at);
    char *held = vat_xasprintf("%.*ssplit = \"held_out_templates\"\n"
                               "held_out_templates = [\"grouped_mean\", \"regex_iso_dates\"]%s",
                               (int)(at - seeds), seeds, at + strlen(random_line));
    const char *texts[2] = {seeds, held};
    for (int mode = 0; mode < 2; mode++) {
        char *name = vat_xasprintf("default%d.toml", mode);
        char *cfg = write_file(c->dir, name, texts[mode]);
        char *root = vat_xasprintf("%s/default%d", c->dir, mode);
        char *cmd = vat_xasprintf("mkdir -p '%s' && '%s' build --config '%s' --root '%s' "
                                  "--jobs 2 >/dev/null",
                                  root, bin(), cfg, root);
        assert_int_equal(run(cmd), 0);
        struct vat_audit_report r;
        audit(root, &r);
        print_message("  %s: train %ld test %ld tasks; 13-gram overlap %ld/%ld test prompts; "
                      "max fixture-row overlap %.3f (%ld rows)\n",
                      mode ? "held_out_templates" : "random", r.tasks[0], r.tasks[1],
                      r.ngram_overlap_tasks, r.ngram_test_prompts, r.max_overlap_share,
                      r.max_overlap_rows);
        expect_only(&r, NULL, 0);
        assert_true(r.tasks[VAT_SPLIT_TEST] > 0 && r.tasks[VAT_SPLIT_TRAIN] > 0);
        vat_audit_release(&r);
        vat_test_rmtree(root);
        free(cmd);
        free(root);
        free(cfg);
        free(name);
    }
    free(held);
    free(seeds);
    free(seeds_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_forms),
        cmocka_unit_test(test_clean_corpus),
        cmocka_unit_test(test_copied_row),
        cmocka_unit_test(test_copied_row_other_table),
        cmocka_unit_test(test_duplicated_fixture_across),
        cmocka_unit_test(test_duplicated_fixture_within_side),
        cmocka_unit_test(test_fixture_changed_behind_tables),
        cmocka_unit_test(test_shared_heldout_string),
        cmocka_unit_test(test_near_duplicate_csv),
        cmocka_unit_test(test_overlap_under_half_is_a_figure),
        cmocka_unit_test(test_near_duplicate_sqlite),
        cmocka_unit_test(test_repeated_gold_program),
        cmocka_unit_test(test_duplicates_within_side),
        cmocka_unit_test(test_duplicate_prompt_within_side),
        cmocka_unit_test(test_unparsable_lines),
        cmocka_unit_test(test_out_of_order_rows),
        cmocka_unit_test(test_missing_ids),
        cmocka_unit_test(test_unsafe_and_missing_paths),
        cmocka_unit_test(test_missing_table_and_corpus),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_default_corpus_both_modes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
