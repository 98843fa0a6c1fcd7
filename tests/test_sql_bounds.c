/* test_sql_bounds.c — one step budget per SQL check, and what one step can
 * cost.  The release build (`make test` runs it there too) times every
 * answer: the dearest step of each operator and built-in the sandbox
 * allows, each burnt on the longest values a query can make until the
 * budget stops it, the conversion burn wrapped around a gold
 * query of the default corpus (it must score below 1), short wrong burns,
 * and `vat check --explain` on one: every one ends within VAT_CPU_BOUND_S
 * of CPU.  Every build (the sanitizer one asserts work counts, not
 * seconds): the same answer gives the same verdict and work count twice
 * in a row, and near-budget answers (a correct one a few steps under the
 * budget and one just over it; short, and over 16 KiB so the verdict memo
 * never keeps them) give identical verdicts and work counts over 100 calls
 * through libvat from 4 threads, with the memo on and off, with fixture
 * sets on and off, while other answers push their statements out of the
 * pooled sandboxes' caches.  VAT_TEST_SQL_TIMES=1 prints the measures;
 * VAT_TEST_REPEATS=N makes the repeat N calls. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "corpus.h"
#include "libvat.h"
#include "tables.h"
#include "testutil.h"
#include "vat.h"
#include "verifiers.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
/* Seconds are asserted on an optimised build without sanitizers only. */
#if defined(__OPTIMIZE__) && !defined(SANITIZED)
#define TIMED 1
#else
#define TIMED 0
#endif

/* What one answer may cost, in CPU seconds, on the release build. */
#define VAT_CPU_BOUND_S 1.0
/* The checker's defaults (verifiers/sql/sql_internal.h): the longest value and the
 * budget of a check. */
#define VALUE_LIMIT 1000
#define BUDGET 1000000LL

struct fix {
    char *dir;  /* scratch: fixtures/ for the battery, corpus/ built by vat */
    char *corpus;
    const char *task, *csv_task; /* an SQLite-fixture task, a CSV one */
    char *gold, *csv_gold;
};

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool show(void)
{
    return getenv("VAT_TEST_SQL_TIMES") != NULL;
}

static void assert_cpu(const char *what, double cpu)
{
    if (TIMED && cpu >= VAT_CPU_BOUND_S)
        fail_msg("%s: %.3f s of CPU, over the bound of %.1f s", what, cpu, VAT_CPU_BOUND_S);
}

/* ---- set-up ------------------------------------------------------------------ */

static void make_fixture(const char *dir)
{
    char *fx = vat_xasprintf("%s/fixtures", dir);
    assert_int_equal(mkdir(fx, 0777), 0);
    char *path = vat_xasprintf("%s/main.sqlite", fx);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer_id TEXT, "
                     "status TEXT, amount REAL, issued_on TEXT);"
                     "CREATE TABLE customers (customer_id TEXT PRIMARY KEY, name TEXT);"
                     "WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n+1 FROM r WHERE n < 1999) "
                     "INSERT INTO invoices SELECT printf('INV-%05d', n), 'C' || (n % 50), "
                     "CASE n % 3 WHEN 0 THEN 'paid' WHEN 1 THEN 'open' ELSE 'void' END, "
                     "n * 1.5, printf('2024-%02d-%02d', 1 + n % 12, 1 + n % 28) FROM r;"
                     "WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n+1 FROM r WHERE n < 49) "
                     "INSERT INTO customers SELECT 'C' || n, 'Name ' || n FROM r;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    free(path);
    free(fx);
}

/* The first task of the corpus whose checker is sql, with (csv) or
 * without a "load" (a program-form task on CSV fixtures). */
static const char *find_task(vat_corpus *c, bool csv)
{
    for (size_t i = 0; i < vat_corpus_task_count(c); i++) {
        const char *id = vat_corpus_task_id(c, i);
        const json_t *row = vat_corpus_row(c, id);
        if (strcmp(json_string_value(json_object_get(row, "checker")), "sql") != 0)
            continue;
        json_t *spec = vat_verifier_spec(row);
        bool has_load = json_object_get(spec, "load") != NULL;
        json_decref(spec);
        if (has_load == csv)
            return id;
    }
    return NULL;
}

static int group_setup(void **state)
{
    struct fix *f = calloc(1, sizeof *f);
    *state = f;
    const char *src = getenv("VAT_SOURCE_DIR"), *bin = getenv("VAT_BINARY");
    if (!src || !bin)
        return -1;
    f->dir = vat_test_tmpdir("sqlbounds");
    make_fixture(f->dir);
    f->corpus = vat_xasprintf("%s/corpus", f->dir);
    char *cmd = vat_xasprintf("'%s' build --config '%s/seeds.toml' --root '%s' --jobs 2 "
                              ">/dev/null 2>&1",
                              bin, src, f->corpus);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0)
        return -1;
    vat_corpus *c;
    if (vat_corpus_open(&c, f->corpus, NULL) != 0)
        return -1;
    f->task = find_task(c, false);
    f->csv_task = find_task(c, true);
    if (!f->task || !f->csv_task)
        return -1;
    f->task = vat_xstrdup(f->task);
    f->csv_task = vat_xstrdup(f->csv_task);
    f->gold = vat_xstrdup(vat_corpus_rollout_answer(c, f->task, "gold"));
    f->csv_gold = vat_xstrdup(vat_corpus_rollout_answer(c, f->csv_task, "gold"));
    vat_corpus_close(c);
    return 0;
}

static int group_teardown(void **state)
{
    struct fix *f = *state;
    if (f->dir)
        vat_test_rmtree(f->dir);
    free(f->dir);
    free(f->corpus);
    free((char *)f->task);
    free((char *)f->csv_task);
    free(f->gold);
    free(f->csv_gold);
    free(f);
    return 0;
}

/* ---- the dearest step of every operator and built-in ------------------------- */

/* Long values as the constants of MATERIALIZED CTEs, read through scalar
 * subqueries (evaluated once, never folded): {D} digits, {A} 'a's, {B}
 * 'a's and a 'b', {J} a JSON array, {O} a JSON object, {H} half as many
 * digits; {R} a row counter that never ends by itself. */
static char *burn_query(const char *tmpl)
{
    enum { L = VALUE_LIMIT - 16 };
    struct vat_buf b = VAT_BUF_INIT, s = VAT_BUF_INIT;
    vat_buf_puts(&b, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < "
                     "100000000)");
    const char *names = "dabjoh";
    for (const char *k = names; *k; k++) {
        vat_buf_printf(&b, ", %c AS MATERIALIZED (SELECT '", *k);
        switch (*k) {
        case 'd': for (int i = 0; i < L; i++) vat_buf_putc(&b, '1'); break;
        case 'a': for (int i = 0; i < L; i++) vat_buf_putc(&b, 'a'); break;
        case 'b': for (int i = 0; i < L - 1; i++) vat_buf_putc(&b, 'a'); vat_buf_putc(&b, 'b'); break;
        case 'j':
            vat_buf_putc(&b, '[');
            for (int i = 0; i < (L - 2) / 2; i++)
                vat_buf_puts(&b, i ? ",1" : "1");
            vat_buf_putc(&b, ']');
            break;
        case 'o': {
            vat_buf_putc(&b, '{');
            size_t start = b.len;
            for (int i = 0; (int)(b.len - start) + 12 < L; i++)
                vat_buf_printf(&b, "%s\"k%d\":1", i ? "," : "", i);
            vat_buf_putc(&b, '}');
            break;
        }
        default: for (int i = 0; i < L / 2; i++) vat_buf_putc(&b, '1'); break;
        }
        vat_buf_puts(&b, "' AS v)");
    }
    vat_buf_putc(&b, ' ');
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '{' && p[1] && p[2] == '}' && strchr("DABJOH", p[1])) {
            vat_buf_printf(&s, "(SELECT v FROM %c)", p[1] - 'A' + 'a');
            p += 2;
        } else {
            vat_buf_putc(&s, *p);
        }
    }
    vat_buf_putn(&b, s.data, s.len);
    vat_buf_release(&s);
    return vat_buf_detach(&b);
}

/* Sixteen copies of item joined by sep. */
static char *times16(const char *item, const char *sep)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (int i = 0; i < 16; i++)
        vat_buf_printf(&b, "%s%s", i ? sep : "", item);
    return vat_buf_detach(&b);
}

struct burn {
    const char *name, *tmpl;
};

/* Each runs row after row until the budget stops it; the costliest per
 * step found for each class of work (measured at the value limit). */
static const struct burn burns[] = {
    /* text converted to a number inside one opcode */
    {"add", "SELECT count(*), 1 FROM r WHERE @16`+`{D}` > n"},
    {"add2", "SELECT count(*), 1 FROM r WHERE {D}+{D} > n"},
    {"mod", "SELECT sum({D} % 7), 1 FROM r"},
    {"neg", "SELECT sum(-{D}), 1 FROM r"},
    {"sum_text", "SELECT sum({D}), 1 FROM r"},
    {"bool", "SELECT count(*), 1 FROM r WHERE CASE WHEN n > 0 THEN @16` AND `{D}` END"},
    {"max16", "SELECT sum(max(@16`,`{D}+0`)), 1 FROM r"},
    {"char16", "SELECT sum(length(char(@16`,`{D}`))), 1 FROM r"},
    {"printf16", "SELECT sum(length(printf('%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d', "
                 "{D},{D},{D},{D},{D},{D},{D},{D},{D},{D},{D},{D},{D},{D},{D}))), 1 FROM r"},
    /* JSON parsed and written again */
    {"json", "SELECT sum(length(json({J}))), 1 FROM r"},
    {"json_insert", "SELECT sum(length(json_insert({J},'$[#]',1))), 1 FROM r"},
    {"json_object", "SELECT sum(length(json_object('a',json({J})))), 1 FROM r"},
    {"json_set", "SELECT sum(length(json_set({O},'$.k1',2,'$.k2',2,'$.k3',2,'$.zz',3))), 1 FROM r"},
    {"json_extract5", "SELECT sum(length(json_extract(CASE n%5 WHEN 0 THEN {J} WHEN 1 THEN "
                      "{J}||'' WHEN 2 THEN ' '||{J} WHEN 3 THEN {J}||' ' ELSE '  '||{J} END,"
                      "'$'))), 1 FROM r"},
    {"json_patch", "SELECT sum(length(json_patch({O},{O}))), 1 FROM r"},
    /* text scanned, compared, sorted and indexed */
    {"trim_set", "SELECT sum(length(rtrim({A},'\xc3\xa9" "a'))), 1 FROM r"},
    {"upper16", "SELECT sum(length(@16`||`upper(substr({A},1,60))`)), 1 FROM r"},
    {"quote", "SELECT sum(length(quote(substr({A},3)))), 1 FROM r"},
    {"nocase", "SELECT count(*), 1 FROM r WHERE CASE WHEN n > 0 THEN @16` OR `{A} = {B} "
               "COLLATE NOCASE` END"},
    {"distinct_nocase", "SELECT count(DISTINCT (substr({A},1,970) || printf('%012d', n%1500)) "
                        "COLLATE NOCASE), 1 FROM r"},
    {"sort_nocase", "SELECT sum((SELECT count(*) FROM (SELECT substr({A},1,970)||"
                    "printf('%012d',(m*7919+n)%1009) AS k FROM (WITH RECURSIVE q(m) AS "
                    "(SELECT 1 UNION ALL SELECT m+1 FROM q WHERE m<150) SELECT m FROM q) "
                    "ORDER BY k COLLATE NOCASE))), 1 FROM r"},
    {"group_nocase", "SELECT sum((SELECT count(*) FROM (SELECT substr({A},1,970)||"
                     "printf('%012d',(m*7919+n)%101) COLLATE NOCASE AS k FROM (WITH RECURSIVE "
                     "q(m) AS (SELECT 1 UNION ALL SELECT m+1 FROM q WHERE m<200) SELECT m FROM "
                     "q) GROUP BY k))), 1 FROM r"},
    /* the built-ins charged by the product of their lengths */
    {"instr", "SELECT sum(instr({A},{B})), 1 FROM r"},
    {"replace", "SELECT sum(length(replace({A},'a','b'))), 1 FROM r"},
    {"like", "SELECT sum({A} LIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b'), 1 FROM r"},
    {"glob", "SELECT sum({A} GLOB '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'), 1 FROM r"},
    /* the burn, at the longest value allowed now */
    {"conversion_burn",
     "SELECT count(*), 1 FROM invoices WHERE (SELECT count(*) FROM r WHERE "
     "@17`+`(SELECT printf('%0990d',1))` > n) >= 0"},
};

/* The template with "@N`sep`item`" written out: N copies of item joined
 * by sep (N is 16 or 17). */
static char *burn_text(const char *tmpl)
{
    const char *at = strchr(tmpl, '@');
    if (!at)
        return burn_query(tmpl);
    int count = atoi(at + 1);
    const char *s1 = strchr(at, '`'), *s2 = strchr(s1 + 1, '`'), *s3 = strchr(s2 + 1, '`');
    char *sep = vat_xstrndup(s1 + 1, (size_t)(s2 - s1 - 1));
    char *one = vat_xstrndup(s2 + 1, (size_t)(s3 - s2 - 1));
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_putn(&b, tmpl, (size_t)(at - tmpl));
    char *many = times16(one, sep);
    vat_buf_puts(&b, many);
    if (count == 17)
        vat_buf_printf(&b, "%s%s", sep, one);
    vat_buf_puts(&b, s3 + 1);
    char *t = vat_buf_detach(&b);
    char *q = burn_query(t);
    free(t);
    free(many);
    free(one);
    free(sep);
    return q;
}

static json_t *battery_spec(void)
{
    return json_pack("{s:s, s:[s], s:[s,s], s:s}", "checker", "sql", "fixtures",
                     "fixtures/main.sqlite", "tables", "invoices", "customers", "reference_sql",
                     "SELECT 1, 1");
}

static void test_value_limit(void **state)
{
    struct fix *f = *state;
    json_t *spec = battery_spec();
    struct vat_verdict v;
    char *q = vat_xasprintf("SELECT length(zeroblob(%d)), 1", VALUE_LIMIT);
    json_t *rows = vat_sql_run(spec, f->dir, "fixtures/main.sqlite", q, strlen(q), &v);
    assert_non_null(rows);
    json_decref(rows);
    free(q);
    q = vat_xasprintf("SELECT length(zeroblob(%d)), 1", VALUE_LIMIT + 1);
    assert_null(vat_sql_run(spec, f->dir, "fixtures/main.sqlite", q, strlen(q), &v));
    assert_string_equal(v.code, VAT_SQL_BUDGET);
    free(q);
    /* The count is SQLite's own VM steps and the built-ins' charges: the
     * same numbers in the release and sanitizer builds of one SQLite. */
    static const struct {
        const char *q;
        long long work; /* SQLite 3.40.1 */
    } fixed[] = {
        {"SELECT status, count(*) FROM invoices WHERE amount > 10 GROUP BY status", 29982},
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 5000) "
         "SELECT count(*), sum(instr(printf('%0500d', n), '5')) FROM r", 140018},
    };
    json_object_set_new(spec, "reference_sql", json_string("SELECT 1, 1"));
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        v = vat_check_sql(spec, f->dir, fixed[i].q, strlen(fixed[i].q));
        long long work = vat_sql_last_work();
        if (show())
            fprintf(stderr, "fixed answer %zu: %s after %lld steps\n", i, v.code, work);
        assert_true(work > 0);
        if (sqlite3_libversion_number() == 3040001 && fixed[i].work >= 0 &&
            work != fixed[i].work)
            fail_msg("'%s': %lld steps, %lld in the release build", fixed[i].q, work,
                     fixed[i].work);
    }
    /* the budget a spec may ask for is the default at most */
    json_object_set_new(spec, "step_budget", json_integer(BUDGET + 1));
    v = vat_check_sql(spec, f->dir, "SELECT 1, 1", 11);
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);
}

static void test_dearest_steps(void **state)
{
    struct fix *f = *state;
    json_t *spec = battery_spec();
    double worst = 0;
    const char *worst_name = "";
    if (show())
        fprintf(stderr, "%-16s %-12s %9s %8s %8s\n", "burn", "code", "steps", "cpu s", "ns/step");
    for (size_t i = 0; i < sizeof burns / sizeof burns[0]; i++) {
        char *q = burn_text(burns[i].tmpl);
        double t0 = thread_cpu();
        struct vat_verdict v = vat_check_sql(spec, f->dir, q, strlen(q));
        double cpu = thread_cpu() - t0;
        long long work = vat_sql_last_work();
        /* the same count a second time, on the sandbox the first left */
        struct vat_verdict again = vat_check_sql(spec, f->dir, q, strlen(q));
        if (vat_sql_last_work() != work || strcmp(again.code, v.code) != 0 ||
            strcmp(again.reason, v.reason) != 0)
            fail_msg("%s: %s after %lld steps, then %s after %lld", burns[i].name, v.code, work,
                     again.code, vat_sql_last_work());
        if (strcmp(v.code, VAT_SQL_BUDGET) != 0 || work != BUDGET + 1)
            fail_msg("%s: %s after %lld steps (%s), not stopped by the budget", burns[i].name,
                     v.code, work, v.reason);
        double per = cpu * 1e9 / (double)work;
        if (per > worst) {
            worst = per;
            worst_name = burns[i].name;
        }
        if (show())
            fprintf(stderr, "%-16s %-12s %9lld %8.3f %8.1f\n", burns[i].name, v.code, work, cpu,
                    per);
        assert_cpu(burns[i].name, cpu);
        free(q);
    }
    if (show())
        fprintf(stderr, "dearest step: %s, %.0f ns; a whole budget of %lld steps: %.2f s\n",
                worst_name, worst, BUDGET, worst * (double)BUDGET / 1e9);
    json_decref(spec);
}

/* ---- burns on the default corpus, through libvat and the command ------------ */

struct scored {
    double score;
    char code[32], reason[256];
    long long work;
    int trap;
};

static struct scored score(vat_corpus *c, const char *id, const char *text)
{
    struct scored s = {0};
    vat_result *r = NULL;
    vat_error err;
    if (vat_corpus_score(c, id, text, strlen(text), VAT_EXTRACT_RAW, &r, &err) != 0)
        fail_msg("%s: %s", id, err.message);
    s.score = vat_result_score(r);
    s.work = vat_result_work(r);
    s.trap = vat_result_is_trap(r);
    snprintf(s.code, sizeof s.code, "%s", vat_result_code(r));
    snprintf(s.reason, sizeof s.reason, "%s", vat_result_reason(r));
    vat_result_free(r);
    return s;
}

/* The attack: gold rows, kept by a WHERE that converts a long
 * text to a number in every `+` of a 40,000-row count (835 bytes with a
 * width of 9990). */
static char *conversion_burn(const char *gold, int width)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "SELECT * FROM (%s) WHERE (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
                       "SELECT n+1 FROM r WHERE n<40000) SELECT count(*) FROM r WHERE ",
                   gold);
    for (int i = 0; i < 17; i++)
        vat_buf_printf(&b, "%s(SELECT printf('%%0%dd',1))", i ? "+" : "", width);
    vat_buf_puts(&b, " > n) >= 0");
    return vat_buf_detach(&b);
}

static void test_conversion_burn_gold_scores_below_one(void **state)
{
    struct fix *f = *state;
    vat_corpus *c;
    assert_int_equal(vat_corpus_open(&c, f->corpus, NULL), 0);
    const char *ids[2] = {f->task, f->csv_task};
    const char *golds[2] = {f->gold, f->csv_gold};
    for (int t = 0; t < 2; t++) {
        struct scored g = score(c, ids[t], golds[t]);
        assert_true(g.score == 1.0);
        /* gold leaves the attack most of the budget: even over a level-5
         * fixture (2,400 rows) behind every trap module's cleaning it
         * takes under a fifth */
        assert_true(g.work > 0 && g.work < BUDGET / 5);
        static const int widths[] = {9990, 990, 500};
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            char *q = conversion_burn(golds[t], widths[w]);
            double t0 = thread_cpu();
            struct scored s = score(c, ids[t], q);
            double cpu = thread_cpu() - t0;
            if (show())
                fprintf(stderr, "burn gold %s width %d (%zu bytes): %s %g, %lld steps, %.3f s\n",
                        ids[t], widths[w], strlen(q), s.code, s.score, s.work, cpu);
            if (!(s.score < 1.0) || strcmp(s.code, VAT_SQL_BUDGET) != 0)
                fail_msg("%s, width %d: %s %g (%s)", ids[t], widths[w], s.code, s.score,
                         s.reason);
            assert_cpu(q, cpu);
            free(q);
        }
    }
    vat_corpus_close(c);
}

/* Wrong answers of the same kind, at most 600 bytes. */
static const char *const wrong_burns[] = {
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r "
    "WHERE (SELECT printf('%0990d',1))+(SELECT printf('%0990d',1)) > n",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT sum(length(json("
    "'[' || replace(printf('%0490d',n),'0','1,') || '1]'))) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r), t(x) AS MATERIALIZED "
    "(SELECT printf('%0990d',7)) SELECT sum(x%3+x%5+x%7+x%11+x%13+x%17+x%19+x%23) FROM r, t",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r "
    "WHERE CAST((SELECT printf('%0990d',1)) AS REAL) + CAST((SELECT printf('%0990d',1)) AS "
    "INTEGER) + (SELECT printf('%0990d',1)) * 1 + (SELECT printf('%0990d',1)) % 3 > n",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(DISTINCT "
    "printf('%0970d', n % 1500) || 'x' COLLATE NOCASE) FROM r",
};

static void test_wrong_burns_bounded(void **state)
{
    struct fix *f = *state;
    vat_corpus *c;
    assert_int_equal(vat_corpus_open(&c, f->corpus, NULL), 0);
    for (size_t i = 0; i < sizeof wrong_burns / sizeof wrong_burns[0]; i++) {
        const char *q = wrong_burns[i];
        assert_true(strlen(q) <= 600);
        double t0 = thread_cpu();
        struct scored s = score(c, f->task, q);
        double cpu = thread_cpu() - t0;
        if (show())
            fprintf(stderr, "wrong burn %zu (%zu bytes): %s, %lld steps, %.3f s\n", i, strlen(q),
                    s.code, s.work, cpu);
        assert_true(s.score == 0.0);
        assert_string_equal(s.code, VAT_SQL_BUDGET);
        assert_cpu(q, cpu);
    }
    vat_corpus_close(c);
}

/* `vat check --explain` runs the answer again on every fixture: on one
 * budget too, so it ends as soon as the check would. */
static void test_explain_bounded(void **state)
{
    struct fix *f = *state;
    char *q = conversion_burn(f->gold, 990);
    char *file = vat_xasprintf("%s/burn.sql", f->dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fputs(q, fp);
    fclose(fp);
    char *out = vat_xasprintf("%s/explain.out", f->dir);
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(out, "w", stdout))
            _exit(126);
        execl(getenv("VAT_BINARY"), "vat", "check", "--root", f->corpus, "--task", f->task,
              "--answer-file", file, "--explain", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    getrusage(RUSAGE_CHILDREN, &after);
    double cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                 (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6 +
                 (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                 (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
    size_t n;
    char *text = vat_test_read_file(out, &n);
    assert_non_null(text);
    if (show())
        fprintf(stderr, "vat check --explain on the burn: %.3f s\n%s", cpu, text);
    /* the check, then a line per fixture: each says the budget is spent */
    assert_non_null(strstr(text, "\"code\":\"sql_budget\""));
    size_t lines = 0;
    for (const char *p = strstr(text, "\"fixture\""); p; p = strstr(p + 1, "\"fixture\"")) {
        lines++;
        const char *eol = strchr(p, '\n');
        char *line = vat_xstrndup(p, eol ? (size_t)(eol - p) : strlen(p));
        if (!strstr(line, "budget of"))
            fail_msg("explain line '%s' ran past the budget", line);
        free(line);
    }
    assert_true(lines >= 2);
    assert_cpu("vat check --explain", cpu);
    free(text);
    free(out);
    free(file);
    free(q);
}

/* ---- the same answer, the same verdict and work count ------------------------ */

/* The gold, kept only when a count of k rows (uncorrelated: once per
 * fixture) is positive, padded with a comment to pad bytes. */
static char *padded_gold(const char *gold, long k, size_t pad)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_printf(&b, "SELECT * FROM (%s) WHERE (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
                       "SELECT n+1 FROM r WHERE n < %ld) SELECT count(*) FROM r) > 0",
                   gold, k);
    if (pad) {
        vat_buf_puts(&b, "\n/* ");
        while (b.len < pad)
            vat_buf_puts(&b, "padding ");
        vat_buf_puts(&b, "*/");
    }
    return vat_buf_detach(&b);
}

/* The largest k whose padded gold is within the budget. */
static long near_budget_k(vat_corpus *c, const char *id, const char *gold)
{
    char *q1 = padded_gold(gold, 1000, 0), *q2 = padded_gold(gold, 2000, 0);
    long long w1 = score(c, id, q1).work, w2 = score(c, id, q2).work;
    free(q1);
    free(q2);
    assert_true(w2 > w1);
    long k = 1000 + (long)((BUDGET - w1) * 1000 / (w2 - w1));
    for (int guard = 0; guard < 200; guard++) {
        char *a = padded_gold(gold, k, 0), *b = padded_gold(gold, k + 1, 0);
        struct scored sa = score(c, id, a), sb = score(c, id, b);
        free(a);
        free(b);
        if (sa.score == 1.0 && sb.score < 1.0)
            return k;
        k += sa.score == 1.0 ? 1 : -1;
    }
    fail_msg("no near-budget count found for %s", id);
    return 0;
}

struct repeat_job {
    vat_corpus *c;
    const char *id;
    const char *const *answers; /* [0] under the budget, [1] over it */
    const struct scored *want;
    int calls;
    int thread;
    int bad;
};

/* Scores the two near-budget answers calls times in turn, with an answer
 * of its own in between each time (so the pooled sandboxes' statement
 * caches, 8 deep, drop the near-budget statements and prepare them again). */
static void *repeat_thread(void *arg)
{
    struct repeat_job *j = arg;
    for (int i = 0; i < j->calls; i++) {
        int which = i % 2;
        struct scored s = score(j->c, j->id, j->answers[which]);
        if (s.score != j->want[which].score || s.work != j->want[which].work ||
            strcmp(s.code, j->want[which].code) != 0 ||
            strcmp(s.reason, j->want[which].reason) != 0) {
            fprintf(stderr, "thread %d call %d: %s %g, %lld steps; expected %s %g, %lld\n",
                    j->thread, i, s.code, s.score, s.work, j->want[which].code,
                    j->want[which].score, j->want[which].work);
            j->bad++;
        }
        char *filler = vat_xasprintf("%s -- thread %d call %d", j->answers[2], j->thread, i);
        score(j->c, j->id, filler);
        free(filler);
    }
    return NULL;
}

static int repeats(void)
{
    const char *env = getenv("VAT_TEST_REPEATS");
    int n = env ? atoi(env) : 100;
    return n > 0 ? n : 100;
}

static void test_near_budget_repeats(void **state)
{
    struct fix *f = *state;
    vat_corpus *probe;
    assert_int_equal(vat_corpus_open(&probe, f->corpus, NULL), 0);
    long k = near_budget_k(probe, f->task, f->gold);
    vat_corpus_close(probe);
    enum { THREADS = 4 };
    int calls = repeats();
    for (int config = 0; config < 8; config++) {
        bool memo = config & 1, sets = config & 2, long_text = config & 4;
        size_t pad = long_text ? 17 * 1024 : 0;
        char *under = padded_gold(f->gold, k, pad), *over = padded_gold(f->gold, k + 1, pad);
        const char *answers[3] = {under, over, f->gold};
        if (memo)
            unsetenv("VAT_VERDICT_MEMO");
        else
            setenv("VAT_VERDICT_MEMO", "0", 1);
        if (sets)
            unsetenv("VAT_SQL_FIXTURE_SET");
        else
            setenv("VAT_SQL_FIXTURE_SET", "0", 1);
        vat_corpus *c;
        assert_int_equal(vat_corpus_open(&c, f->corpus, NULL), 0);
        struct scored want[2] = {score(c, f->task, under), score(c, f->task, over)};
        unsetenv("VAT_VERDICT_MEMO");
        unsetenv("VAT_SQL_FIXTURE_SET");
        if (show())
            fprintf(stderr,
                    "near budget (%s, memo %s, fixture sets %s, %zu bytes): %s %g at %lld "
                    "steps, %s %g at %lld\n",
                    long_text ? "long" : "short", memo ? "on" : "off", sets ? "on" : "off",
                    strlen(under), want[0].code, want[0].score, want[0].work, want[1].code,
                    want[1].score, want[1].work);
        assert_true(want[0].score == 1.0);
        assert_true(want[0].work <= BUDGET && want[0].work > BUDGET - BUDGET / 50);
        assert_string_equal(want[1].code, VAT_SQL_BUDGET);
        assert_true(want[1].work == BUDGET + 1);
        pthread_t th[THREADS];
        struct repeat_job jobs[THREADS];
        for (int t = 0; t < THREADS; t++) {
            jobs[t] = (struct repeat_job){c, f->task, answers, want,
                                          (calls + THREADS - 1) / THREADS, t, 0};
            assert_int_equal(pthread_create(&th[t], NULL, repeat_thread, &jobs[t]), 0);
        }
        int bad = 0;
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            bad += jobs[t].bad;
        }
        vat_corpus_close(c);
        free(under);
        free(over);
        if (bad)
            fail_msg("%d of %d calls gave another verdict or work count", bad, calls);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_limit),
        cmocka_unit_test(test_dearest_steps),
        cmocka_unit_test(test_conversion_burn_gold_scores_below_one),
        cmocka_unit_test(test_wrong_burns_bounded),
        cmocka_unit_test(test_explain_bounded),
        cmocka_unit_test(test_near_budget_repeats),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
