/* test_sql.c — the SQL checker and its sandbox, over two small SQLite
 * fixtures (invoices and customers; a main one and a variant) built here:
 * gold scores 1 with trailing ';' and comments; multiset and ordered
 * comparison (wrong order, wrong rows, missing and extra rows); float
 * tolerance; NULLs; column count; DISTINCT kept; text never equals a
 * number; a hard-coded answer caught by the variant; hostile answers
 * (writes, a second statement, ATTACH, PRAGMA, endless recursion, huge
 * blobs, the schema table, the clock, extensions, parameters, empty, too
 * large, invalid UTF-8, temp-storage bombs, quadratic built-ins, CTE
 * bombs, too many function calls), each
 * stopped with its code in under 3 s of CPU time and with the fixture
 * bytes unchanged; unsafe fixture paths refused; rows as JSON; the trim
 * replacement against SQLite's own on random inputs; the gold admission
 * check; and checks running on several threads at once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif
#include <sqlite3.h>

#include "filememo.h"
#include "measure.h"
#include "testutil.h"
#include "verifiers.h"

#define MAIN_FX "fixtures/main.sqlite"
#define VAR_FX "fixtures/variant.sqlite"
#define GOLD                                                                                   \
    "SELECT customer_id, SUM(amount) FROM invoices WHERE status = 'paid' GROUP BY customer_id"
#define GOLD_ORDERED GOLD " ORDER BY customer_id"

static char *root;  /* the corpus root: fixtures/ below it */
static char *scratch; /* the parent of root: where '../x' would point */
static char *main_bytes;
static size_t main_len;

/* ---- fixtures ------------------------------------------------------------ */

struct invoice {
    const char *id, *customer, *status;
    double amount; /* < 0: NULL */
    const char *issued;
};

static void write_fixture(const char *rel, const struct invoice *inv, size_t n)
{
    char *path = malloc(strlen(root) + strlen(rel) + 2);
    sprintf(path, "%s/%s", root, rel);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer_id TEXT, "
                     "status TEXT, amount REAL, issued_on TEXT);"
                     "CREATE TABLE customers (customer_id TEXT PRIMARY KEY, name TEXT);"
                     "INSERT INTO customers VALUES ('C1','Ada'),('C2','Brook'),('C3','Chen'),"
                     "('C4','Dana');",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO invoices VALUES (?1,?2,?3,?4,?5)", -1,
                                        &st, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_text(st, 1, inv[i].id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, inv[i].customer, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, inv[i].status, -1, SQLITE_STATIC);
        if (inv[i].amount < 0)
            sqlite3_bind_null(st, 4);
        else
            sqlite3_bind_double(st, 4, inv[i].amount);
        sqlite3_bind_text(st, 5, inv[i].issued, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    free(path);
}

static int group_setup(void **state)
{
    (void)state;
    scratch = vat_test_tmpdir("sql");
    root = malloc(strlen(scratch) + 16);
    sprintf(root, "%s/corpus", scratch);
    char *fx = malloc(strlen(root) + 16);
    sprintf(fx, "%s/fixtures", root);
    if (mkdir(root, 0777) != 0 || mkdir(fx, 0777) != 0)
        return -1;
    free(fx);
    static const struct invoice main_rows[] = {
        {"INV-001", "C1", "paid", 100.50, "2024-01-05"},
        {"INV-002", "C1", "open", 20.00, "2024-01-20"},
        {"INV-003", "C2", "paid", 75.25, "2024-02-01"},
        {"INV-004", "C3", "paid", -1, "2024-02-11"},
        {"INV-005", "C2", "void", 10.00, "2024-03-03"},
        {"INV-006", "C3", "paid", 300.00, "2024-03-15"},
        {"INV-007", "C1", "paid", 0.10, "2024-03-20"},
    };
    static const struct invoice variant_rows[] = {
        {"INV-101", "C2", "paid", 5.00, "2024-04-01"},
        {"INV-102", "C2", "paid", 5.00, "2024-04-02"},
        {"INV-103", "C4", "paid", 42.00, "2024-04-03"},
        {"INV-104", "C1", "open", 9.99, "2024-04-04"},
        {"INV-105", "C3", "paid", -1, "2024-04-05"},
    };
    write_fixture(MAIN_FX, main_rows, sizeof main_rows / sizeof main_rows[0]);
    write_fixture(VAR_FX, variant_rows, sizeof variant_rows / sizeof variant_rows[0]);
    char *p = malloc(strlen(root) + 64);
    sprintf(p, "%s/fixtures/notes.sqlite", root);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < 100; i++)
        fputs("not a database at all\n", f);
    fclose(f);
    sprintf(p, "%s/%s", root, MAIN_FX);
    main_bytes = vat_test_read_file(p, &main_len);
    free(p);
    return main_bytes ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    vat_test_rmtree(scratch);
    free(scratch);
    free(root);
    free(main_bytes);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static json_t *make_spec(const char *gold, bool ordered)
{
    return json_pack("{s:s, s:s, s:[s,s], s:[s,s], s:b, s:s}", "checker", "sql", "dialect",
                     "sqlite", "fixtures", MAIN_FX, VAR_FX, "tables", "invoices", "customers",
                     "ordered", ordered, "reference_sql", gold);
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Time is bounded in CPU seconds (under 3), which a loaded machine does not
 * stretch, and in wall seconds only loosely, to catch a call that blocks. */
struct stopwatch {
    double cpu, wall;
};

static struct stopwatch stopwatch_start(void)
{
    struct stopwatch w = {clock_s(CLOCK_PROCESS_CPUTIME_ID), clock_s(CLOCK_MONOTONIC)};
    return w;
}

static void stopwatch_check(const struct stopwatch *w, const char *what)
{
    double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - w->cpu;
    double wall = clock_s(CLOCK_MONOTONIC) - w->wall;
    if (getenv("VAT_TEST_SQL_TIMES"))
        fprintf(stderr, "%.3f s cpu %.3f s wall  %.70s\n", cpu, wall, what);
    if (cpu >= 3.0 || wall >= 30.0)
        fail_msg("%.80s took %.2f s of CPU, %.2f s of wall time", what, cpu, wall);
}

/* Every reason is one short line of valid UTF-8 without control bytes. */
static void assert_reason_sane(const struct vat_verdict *v)
{
    size_t n = strnlen(v->reason, sizeof v->reason);
    assert_true(n > 0 && n < sizeof v->reason);
    for (size_t i = 0; i < n; i++)
        assert_false((unsigned char)v->reason[i] < 0x20 || v->reason[i] == 0x7f);
    json_t *s = json_string(v->reason);
    assert_non_null(s);
    json_decref(s);
}

/* The prepared check (libvat's) of the same answer, its fixtures served as
 * one set (a single connection moved between them) or, with
 * VAT_SQL_FIXTURE_SET=0, one connection each, must give vat_check_sql's
 * verdict, word for word.  (A spec the prepared check refuses is left to
 * vat_check_sql's own assertions.) */
static void assert_prepared_agrees(const json_t *spec, const char *answer, size_t len,
                                   const struct vat_verdict *want)
{
    for (int set = 1; set >= 0; set--) {
        if (!set)
            setenv("VAT_SQL_FIXTURE_SET", "0", 1);
        struct vat_verdict pv;
        struct vat_sql_prep *p = vat_sql_prepare(spec, root, NULL, NULL, 0, &pv);
        unsetenv("VAT_SQL_FIXTURE_SET");
        if (!p)
            continue;
        struct vat_verdict v = vat_sql_check_prepared(p, answer, len, NULL);
        /* the budget nets count allocations, which a reused connection's
         * page cache changes: their verdicts agree on the code only */
        bool budget = strcmp(want->code, VAT_SQL_BUDGET) == 0 ||
                      strcmp(want->code, VAT_CHECKER_LIMIT) == 0;
        if (strcmp(v.code, want->code) != 0 || v.gate_passed != want->gate_passed ||
            v.score != want->score || (!budget && strcmp(v.reason, want->reason) != 0))
            fail_msg("answer %.80s: prepared (fixture set %s) gives %s gate=%d %g '%s', "
                     "vat_check_sql %s gate=%d %g '%s'",
                     answer, set ? "on" : "off", v.code, v.gate_passed, v.score, v.reason,
                     want->code, want->gate_passed, want->score, want->reason);
        /* The strength rule's count-only check: the same gate and score.
         * It scans the held-out variants before the main fixture, so rows
         * that differ give a code of rows differing (on whichever fixture
         * differs first) and no reason; a failure to run gives the same
         * code, its reason naming the fixture where it first failed. */
        struct vat_verdict sv = vat_sql_check_prepared_score(p, answer, len);
        static const char *const differ[] = {VAT_COLUMN_COUNT, VAT_MISSING_ROWS, VAT_EXTRA_ROWS,
                                             VAT_WRONG_ROWS, VAT_WRONG_ORDER};
        bool rows = false;
        for (size_t k = 0; k < sizeof differ / sizeof differ[0]; k++)
            rows = rows || strcmp(want->code, differ[k]) == 0;
        bool sv_rows = false;
        for (size_t k = 0; k < sizeof differ / sizeof differ[0]; k++)
            sv_rows = sv_rows || strcmp(sv.code, differ[k]) == 0;
        if ((rows ? !sv_rows || strcmp(sv.code, VAT_WRONG_ORDER) == 0
                  : strcmp(sv.code, want->code) != 0) ||
            sv.gate_passed != want->gate_passed || sv.score != want->score ||
            (rows ? sv.reason[0] != '\0' : !budget && sv.score == 1.0 &&
                                                 strcmp(sv.reason, v.reason) != 0))
            fail_msg("answer %.80s: the score-only check gives %s gate=%d %g '%s', "
                     "vat_check_sql %s gate=%d %g '%s'",
                     answer, sv.code, sv.gate_passed, sv.score, sv.reason, want->code,
                     want->gate_passed, want->score, want->reason);
        vat_sql_prep_free(p);
    }
}

static struct vat_verdict check_spec(const json_t *spec, const char *answer, size_t len)
{
    struct vat_verdict v = vat_check_sql(spec, root, answer, len);
    assert_reason_sane(&v);
    if (answer)
        assert_prepared_agrees(spec, answer, len, &v);
    return v;
}

static struct vat_verdict check_with(const char *gold, bool ordered, const char *answer)
{
    json_t *spec = make_spec(gold, ordered);
    struct vat_verdict v = check_spec(spec, answer, strlen(answer));
    json_decref(spec);
    return v;
}

static void expect(const char *gold, bool ordered, const char *answer, const char *code,
                   bool gate)
{
    struct vat_verdict v = check_with(gold, ordered, answer);
    if (strcmp(v.code, code) != 0 || v.gate_passed != gate)
        fail_msg("answer %.80s: got %s gate=%d (%s), expected %s gate=%d", answer, v.code,
                 v.gate_passed, v.reason, code, gate);
    assert_true(v.score == (strcmp(code, VAT_OK) == 0 ? 1.0 : 0.0));
}

static void assert_reason_has(const struct vat_verdict *v, const char *needle)
{
    if (!strstr(v->reason, needle))
        fail_msg("reason '%s' lacks '%s'", v->reason, needle);
}

static void assert_fixture_unchanged(void)
{
    char *p = malloc(strlen(root) + 64);
    sprintf(p, "%s/%s", root, MAIN_FX);
    size_t n;
    char *now = vat_test_read_file(p, &n);
    free(p);
    assert_non_null(now);
    assert_int_equal(n, main_len);
    assert_memory_equal(now, main_bytes, n);
    free(now);
}

/* ---- scoring ------------------------------------------------------------------ */

static void test_gold_scores_one(void **state)
{
    (void)state;
    expect(GOLD, false, GOLD, VAT_OK, true);
    expect(GOLD_ORDERED, true, GOLD_ORDERED, VAT_OK, true);
    /* Another spelling of the same question. */
    expect(GOLD, false,
           "select i.customer_id as c, sum(i.amount) from invoices as i\n"
           "where i.status in ('paid') group by 1",
           VAT_OK, true);
    expect(GOLD, false,
           "WITH p AS (SELECT * FROM invoices WHERE status = 'paid')\n"
           "SELECT customer_id, SUM(amount) FROM p GROUP BY customer_id",
           VAT_OK, true);
    /* CTEs naming each other, within the copy limit. */
    expect(GOLD, false,
           "WITH p AS (SELECT * FROM invoices WHERE status = 'paid'),\n"
           " c AS (SELECT DISTINCT customer_id FROM p),\n"
           " t AS (SELECT c.customer_id, (SELECT SUM(amount) FROM p\n"
           "       WHERE p.customer_id = c.customer_id) AS total FROM c)\n"
           "SELECT t.customer_id, t.total FROM t JOIN c USING (customer_id)",
           VAT_OK, true);
    struct vat_verdict v = check_with(GOLD, false, GOLD);
    assert_reason_has(&v, "2 fixtures");
}

static void test_trailing_semicolon_and_comments(void **state)
{
    (void)state;
    static const char *const tails[] = {
        ";", " ;", ";\n", " -- the end", "\n-- a; b\n", " /* c */", "; /* c */ ;",
        ";\n-- x\n;  /* y */ ;\n", " /* unterminated comment", ";;",
    };
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        char q[512];
        snprintf(q, sizeof q, "%s%s", GOLD, tails[i]);
        expect(GOLD, false, q, VAT_OK, true);
    }
    expect(GOLD, false, "-- leading comment\n/* and another */ " GOLD, VAT_OK, true);
    expect(GOLD, false, GOLD "; SELECT 1", VAT_SQL_MULTI, false);
    expect(GOLD, false, GOLD "; -- fine\n x", VAT_SQL_MULTI, false);
}

static void test_multiset_and_ordered(void **state)
{
    (void)state;
    const char *desc = GOLD " ORDER BY customer_id DESC";
    expect(GOLD_ORDERED, false, desc, VAT_OK, true);
    expect(GOLD_ORDERED, true, desc, VAT_WRONG_ORDER, true);
    struct vat_verdict v = check_with(GOLD_ORDERED, true, desc);
    assert_reason_has(&v, "fixture main");
    assert_reason_has(&v, "wrong order");
    /* Ordered, same count, different rows. */
    expect(GOLD_ORDERED, true,
           "SELECT customer_id, SUM(amount) FROM invoices WHERE status <> 'void' "
           "GROUP BY customer_id ORDER BY customer_id",
           VAT_WRONG_ROWS, true);
    /* Ordered, fewer and more rows. */
    expect(GOLD_ORDERED, true, GOLD " HAVING customer_id <> 'C3' ORDER BY customer_id",
           VAT_MISSING_ROWS, true);
    expect(GOLD_ORDERED, true,
           "SELECT customer_id, SUM(amount) FROM invoices GROUP BY customer_id "
           "UNION ALL SELECT 'C9', 1 ORDER BY customer_id",
           VAT_EXTRA_ROWS, true);
    /* Unordered: the trap (no status filter) gives other sums. */
    v = check_with(GOLD, false,
                   "SELECT customer_id, SUM(amount) FROM invoices GROUP BY customer_id");
    assert_string_equal(v.code, VAT_WRONG_ROWS);
    assert_true(v.gate_passed);
    assert_true(v.score == 0.0);
    assert_reason_has(&v, "unexpected ['C1', 120.6");
    assert_reason_has(&v, "missing ['C1', 100.6");
}

static void test_float_tolerance(void **state)
{
    (void)state;
    const char *tiny = "SELECT customer_id, SUM(amount) + 1e-12 FROM invoices "
                       "WHERE status = 'paid' GROUP BY customer_id";
    const char *cent = "SELECT customer_id, SUM(amount) + 0.01 FROM invoices "
                       "WHERE status = 'paid' GROUP BY customer_id";
    expect(GOLD, false, tiny, VAT_OK, true);
    expect(GOLD, false, cent, VAT_WRONG_ROWS, true);
    /* The spec's own tolerance is honoured. */
    json_t *spec = make_spec(GOLD, false);
    json_object_set_new(spec, "abs_tol", json_real(0.1));
    struct vat_verdict v = check_spec(spec, cent, strlen(cent));
    assert_string_equal(v.code, VAT_OK);
    json_object_set_new(spec, "abs_tol", json_real(0));
    json_object_set_new(spec, "rel_tol", json_real(0));
    v = check_spec(spec, tiny, strlen(tiny));
    assert_string_equal(v.code, VAT_WRONG_ROWS);
    json_decref(spec);
    /* INTEGER and REAL compare by value. */
    expect("SELECT COUNT(*) FROM invoices", false, "SELECT COUNT(*) * 1.0 FROM invoices",
           VAT_OK, true);
    expect("SELECT COUNT(*) FROM invoices", false, "SELECT COUNT(*) + 0.5 FROM invoices",
           VAT_WRONG_ROWS, true);
}

static void test_nulls_and_types(void **state)
{
    (void)state;
    const char *gold = "SELECT invoice_id, amount FROM invoices WHERE status = 'paid'";
    expect(gold, false,
           "SELECT invoice_id, CASE WHEN amount IS NULL THEN NULL ELSE amount END "
           "FROM invoices WHERE status = 'paid'",
           VAT_OK, true);
    expect(gold, false,
           "SELECT invoice_id, coalesce(amount, 0) FROM invoices WHERE status = 'paid'",
           VAT_WRONG_ROWS, true);
    expect(gold, false, "SELECT invoice_id, '' FROM invoices WHERE status = 'paid'",
           VAT_WRONG_ROWS, true);
    /* Text never equals a number, even when it reads as one. */
    expect(GOLD, false,
           "SELECT customer_id, CAST(SUM(amount) AS TEXT) FROM invoices "
           "WHERE status = 'paid' GROUP BY customer_id",
           VAT_WRONG_ROWS, true);
    /* Text is byte-exact, and a blob is not text. */
    expect("SELECT name FROM customers", false, "SELECT upper(name) FROM customers",
           VAT_WRONG_ROWS, true);
    expect("SELECT name FROM customers", false, "SELECT CAST(name AS BLOB) FROM customers",
           VAT_WRONG_ROWS, true);
}

static void test_column_count(void **state)
{
    (void)state;
    expect(GOLD, false,
           "SELECT customer_id FROM invoices WHERE status = 'paid' GROUP BY customer_id",
           VAT_COLUMN_COUNT, true);
    expect(GOLD, false,
           "SELECT customer_id, SUM(amount), COUNT(*) FROM invoices WHERE status = 'paid' "
           "GROUP BY customer_id",
           VAT_COLUMN_COUNT, true);
}

static void test_distinct_not_stripped(void **state)
{
    (void)state;
    expect("SELECT DISTINCT customer_id FROM invoices", false,
           "SELECT customer_id FROM invoices", VAT_EXTRA_ROWS, true);
    expect("SELECT customer_id FROM invoices", false,
           "SELECT DISTINCT customer_id FROM invoices", VAT_MISSING_ROWS, true);
    expect("SELECT customer_id FROM invoices", false,
           "SELECT customer_id FROM invoices ORDER BY 1 DESC", VAT_OK, true);
}

static void test_hard_coded_answer_fails_on_variant(void **state)
{
    (void)state;
    const char *hard = "VALUES ('C1', 100.6), ('C2', 75.25), ('C3', 300.0)";
    struct vat_verdict v = check_with(GOLD, false, hard);
    assert_true(v.gate_passed);
    assert_true(v.score == 0.0);
    assert_reason_has(&v, "fixture variant 1");
    /* the variant is held out: the reason counts and points, never quotes */
    assert_reason_has(&v, "fixture variant 1 (held out): ");
    assert_null(strchr(v.reason, '['));
    assert_null(strchr(v.reason, '\''));
    json_t *hs = make_spec(GOLD, false);
    struct vat_verdict rv = vat_check_sql_as(hs, root, hard, strlen(hard), true);
    assert_string_equal(rv.code, v.code);
    assert_reason_has(&rv, "fixture variant 1: ");
    assert_reason_has(&rv, "['C");
    struct vat_verdict pv;
    struct vat_sql_prep *hp = vat_sql_prepare(hs, root, NULL, NULL, 0, &pv);
    assert_non_null(hp);
    pv = vat_sql_check_prepared_as(hp, hard, strlen(hard), NULL, NULL, true);
    assert_string_equal(pv.reason, rv.reason);
    pv = vat_sql_check_prepared_as(hp, hard, strlen(hard), NULL, NULL, false);
    assert_string_equal(pv.reason, v.reason);
    vat_sql_prep_free(hp);
    /* explained fixture by fixture, the variant's verdict is the hidden one */
    pv = vat_check_sql_fixture_as(hs, root, 1, hard, strlen(hard), false, &(long long){0});
    assert_string_equal(pv.reason, v.reason);
    pv = vat_check_sql_fixture_as(hs, root, 0, hard, strlen(hard), false, &(long long){0});
    assert_string_equal(pv.code, VAT_OK);
    assert_string_equal(pv.reason, "rows match on fixture main");
    json_decref(hs);
    /* On the main fixture alone it would pass. */
    json_t *spec = make_spec(GOLD, false);
    json_array_remove(json_object_get(spec, "fixtures"), 1);
    v = check_spec(spec, hard, strlen(hard));
    assert_string_equal(v.code, VAT_OK);
    json_decref(spec);
}

/* ---- hostile answers ------------------------------------------------------------ */

struct hostile {
    const char *answer;
    const char *code;
    bool gate;
};

static void run_hostile(const char *answer, size_t len, const char *code, bool gate)
{
    json_t *spec = make_spec(GOLD, false);
    struct stopwatch w = stopwatch_start();
    struct vat_verdict v = check_spec(spec, answer, len);
    stopwatch_check(&w, answer);
    json_decref(spec);
    if (strcmp(v.code, code) != 0 || v.gate_passed != gate || v.score != 0.0)
        fail_msg("answer %.80s: got %s gate=%d score=%g (%s), expected %s gate=%d", answer,
                 v.code, v.gate_passed, v.score, v.reason, code, gate);
    assert_fixture_unchanged();
}

/* The gate marks a query that names the clock (a 'now' literal, or
 * CURRENT_DATE, CURRENT_TIME or CURRENT_TIMESTAMP in any case), and the
 * sandbox then refuses every date function in it for reading the clock,
 * not only the keyword itself; a name merely like them is not marked. */
static void test_clock_mentions(void **state)
{
    (void)state;
    static const struct {
        const char *answer;
        bool clock;
    } cases[] = {
        {"SELECT date(issued_on), CURRENT_TIMESTAMP FROM invoices", true},
        {"SELECT date(issued_on), current_date FROM invoices", true},
        {"SELECT date(issued_on), Current_Time FROM invoices", true},
        {"SELECT date(issued_on), 'NoW' FROM invoices", true},
        {"SELECT date(issued_on), CURRENT_TIMESTAMPS FROM invoices", false},
        {"SELECT date(issued_on), 'now ' FROM invoices", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vat_verdict v = check_with(GOLD, false, cases[i].answer);
        bool clock = strstr(v.reason, "reading the clock") != NULL;
        if (clock != cases[i].clock)
            fail_msg("%s: %s (%s)", cases[i].answer, v.code, v.reason);
    }
}

static void test_hostile_answers(void **state)
{
    (void)state;
    static const struct hostile cases[] = {
        {"DELETE FROM invoices", VAT_SQL_NOT_SELECT, false},
        {"UPDATE invoices SET amount = 0", VAT_SQL_NOT_SELECT, false},
        {"INSERT INTO invoices (invoice_id) VALUES ('x')", VAT_SQL_NOT_SELECT, false},
        {"SELECT 1; DROP TABLE invoices", VAT_SQL_MULTI, false},
        {"SELECT 1;DELETE FROM invoices;", VAT_SQL_MULTI, false},
        {"PRAGMA writable_schema=1", VAT_SQL_NOT_SELECT, false},
        {"CREATE TEMP TABLE t(x)", VAT_SQL_NOT_SELECT, false},
        {"BEGIN; SELECT 1", VAT_SQL_NOT_SELECT, false},
        {"VACUUM", VAT_SQL_NOT_SELECT, false},
        {"The answer is: SELECT 1", VAT_SQL_NOT_SELECT, false},
        {"WITH d AS (SELECT 1) DELETE FROM invoices", VAT_SQL_DENIED, false},
        {"WITH d AS (SELECT 1) INSERT INTO invoices (invoice_id) SELECT * FROM d",
         VAT_SQL_DENIED, false},
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) "
         "SELECT count(*) FROM r",
         VAT_SQL_BUDGET, true},
        {"SELECT randomblob(1000000000)", VAT_SQL_DENIED, false},
        {"SELECT random()", VAT_SQL_DENIED, false},
        {"SELECT zeroblob(1000000000)", VAT_SQL_BUDGET, true},
        {"SELECT hex(zeroblob(6000)), 1", VAT_SQL_BUDGET, true},
        {"SELECT group_concat(printf('%.*c', 5000, 'x')), 1 FROM invoices", VAT_SQL_BUDGET,
         true},
        {"SELECT * FROM sqlite_master", VAT_SQL_DENIED, false},
        {"SELECT count(*) FROM sqlite_schema", VAT_SQL_DENIED, false},
        {"SELECT * FROM sqlite_temp_master", VAT_SQL_DENIED, false},
        {"SELECT name FROM pragma_table_info('invoices')", VAT_SQL_DENIED, false},
        {"SELECT * FROM invoices, json_each('[1]')", VAT_SQL_DENIED, false},
        {"SELECT * FROM dbstat", VAT_SQL_DENIED, false},
        {"SELECT date('now')", VAT_SQL_DENIED, false},
        {"SELECT datetime('NOW', 'localtime') FROM invoices", VAT_SQL_DENIED, false},
        {"SELECT strftime('%Y', 'now')", VAT_SQL_DENIED, false},
        {"SELECT julianday('now') - julianday(issued_on) FROM invoices", VAT_SQL_DENIED, false},
        {"SELECT CURRENT_TIMESTAMP", VAT_SQL_DENIED, false},
        {"SELECT current_date FROM invoices", VAT_SQL_DENIED, false},
        {"SELECT load_extension('x')", VAT_SQL_DENIED, false},
        {"SELECT sqlite_version()", VAT_SQL_DENIED, false},
        {"SELECT fts3_tokenizer('simple')", VAT_SQL_DENIED, false},
        {"SELECT changes(), last_insert_rowid()", VAT_SQL_DENIED, false},
        {"SELECT * FROM invoices WHERE amount > ?", VAT_SQL_DENIED, false},
        {"SELECT * FROM invoices WHERE amount > ?2", VAT_SQL_DENIED, false},
        {"SELECT * FROM invoices WHERE amount > :min", VAT_SQL_DENIED, false},
        {"SELECT * FROM invoices WHERE amount > @min", VAT_SQL_DENIED, false},
        {"EXPLAIN SELECT * FROM invoices", VAT_SQL_DENIED, false},
        {"EXPLAIN QUERY PLAN SELECT * FROM invoices", VAT_SQL_DENIED, false},
        {"", VAT_PARSE, false},
        {"  \n\t ", VAT_PARSE, false},
        {"-- nothing here", VAT_PARSE, false},
        {";", VAT_PARSE, false},
        {"SELECT FROM WHERE", VAT_PARSE, false},
        {"SELECT \"paid\" FROM invoices", VAT_PARSE, false}, /* no double-quoted strings */
        {"SELECT x'zz'", VAT_PARSE, false},
        {"SELECT abs(-9223372036854775807 - 1)", VAT_SQL_ERROR, true},
        {"SELECT * FROM no_such_table", VAT_PARSE, false},
        /* Temporary storage is capped: a sort or a DISTINCT too big for the
         * page cache is stopped instead of spilling to disk or memory. */
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 100000) "
         "SELECT count(DISTINCT printf('%0500d', n)) FROM r",
         VAT_SQL_BUDGET, true},
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 100000) "
         "SELECT count(*) FROM (SELECT printf('%0500d', n) AS x FROM r ORDER BY x)",
         VAT_SQL_BUDGET, true},
        /* Quadratic built-ins on the longest values allowed, on a million
         * rows: stopped by the step budget or the time net, whichever
         * comes first on this machine. */
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
         "SELECT sum(length(replace(printf('%.*c', 9999, 'a'), printf('%.*c', 4999 + n % 2, 'a') "
         "|| 'b', ''))), 1 FROM r",
         VAT_SQL_BUDGET, true},
        {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
         "SELECT sum(instr(printf('%.*c', 9999, 'a'), printf('%.*c', 4999 + n % 2, 'a') || 'b')), "
         "1 FROM r",
         VAT_SQL_BUDGET, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_hostile(cases[i].answer, strlen(cases[i].answer), cases[i].code, cases[i].gate);

    /* Too many function calls: 90 columns of three calls each. */
    struct vat_buf calls = VAT_BUF_INIT;
    vat_buf_puts(&calls, "SELECT ");
    for (int i = 0; i < 90; i++)
        vat_buf_printf(&calls, "%sabs(%d) + abs(1) + abs(2)", i ? ", " : "", i);
    run_hostile(calls.data, calls.len, VAT_SQL_BUDGET, true);
    vat_buf_release(&calls);

    /* CTE bombs: each level names the one below twice, so preparing would
     * copy the first body 2^25 times; names spelled in every quoting. */
    static const struct {
        const char *def_open, *def_close, *ref_open, *ref_close;
        char ref_letter;
    } spell[] = {{"", "", "", "", 'a'}, {"\"", "\"", "[", "]", 'A'}, {"`", "`", "\"", "\"", 'A'}};
    for (size_t k = 0; k < 3; k++) {
        struct vat_buf bomb = VAT_BUF_INIT;
        vat_buf_puts(&bomb, "WITH ");
        for (int i = 0; i <= 25; i++) {
            vat_buf_printf(&bomb, "%s%sa%d%s AS %s(SELECT ", i ? ", " : "", spell[k].def_open,
                           i, spell[k].def_close, k == 1 ? "NOT MATERIALIZED " : "");
            if (i == 0)
                vat_buf_puts(&bomb, "1 AS x)");
            else
                vat_buf_printf(&bomb, "p.x FROM %s%c%d%s p, %s%c%d%s q)", spell[k].ref_open,
                               spell[k].ref_letter, i - 1, spell[k].ref_close,
                               spell[k].ref_open, spell[k].ref_letter, i - 1,
                               spell[k].ref_close);
        }
        vat_buf_printf(&bomb, " SELECT count(*), 1 FROM %s%c25%s", spell[k].ref_open,
                       spell[k].ref_letter, spell[k].ref_close);
        run_hostile(bomb.data, bomb.len, VAT_SQL_BUDGET, true);
        /* stopped by the gate's count of copies, before SQLite prepares it */
        json_t *bs = make_spec(GOLD, false);
        struct vat_verdict bv = check_spec(bs, bomb.data, bomb.len);
        assert_reason_has(&bv, "common table expressions would be copied");
        json_decref(bs);
        vat_buf_release(&bomb);
    }

    /* ATTACH: refused, and the file it names is never created. */
    char *target = malloc(strlen(scratch) + 64);
    sprintf(target, "%s/attached.db", scratch);
    char *attach = malloc(strlen(target) + 64);
    sprintf(attach, "ATTACH DATABASE '%s' AS x", target);
    run_hostile(attach, strlen(attach), VAT_SQL_NOT_SELECT, false);
    sprintf(attach, "SELECT 1; ATTACH DATABASE '%s' AS x", target);
    run_hostile(attach, strlen(attach), VAT_SQL_MULTI, false);
    sprintf(attach, "VACUUM INTO '%s'", target);
    run_hostile(attach, strlen(attach), VAT_SQL_NOT_SELECT, false);
    assert_int_not_equal(access(target, F_OK), 0);
    free(attach);
    free(target);

    /* Over the answer cap (a 100 KB query that would be valid SQL). */
    size_t big = 100 * 1024;
    char *q = malloc(big + 64);
    strcpy(q, "SELECT 1 ");
    size_t n = strlen(q);
    while (n < big) {
        memcpy(q + n, "-- padding padding padding padding padding padding\n", 51);
        n += 51;
    }
    q[n] = 0;
    run_hostile(q, n, VAT_TOO_LARGE, false);
    free(q);

    /* Bytes that are not UTF-8, and a NUL inside the answer. */
#define HOSTILE_BYTES(lit, code) run_hostile(lit, sizeof lit - 1, code, false)
    HOSTILE_BYTES("SELECT '\xff\xfe'", VAT_PARSE);
    HOSTILE_BYTES("SELECT 'caf\xc3'", VAT_PARSE);
    HOSTILE_BYTES("SELECT 'caf\xc3' FROM invoices", VAT_PARSE);
    HOSTILE_BYTES("SELECT 1\0; DELETE FROM invoices", VAT_PARSE);
#undef HOSTILE_BYTES
}

static void test_denied_reasons_say_what(void **state)
{
    (void)state;
    struct vat_verdict v = check_with(GOLD, false, "SELECT random()");
    assert_reason_has(&v, "random");
    v = check_with(GOLD, false, "SELECT * FROM sqlite_master");
    assert_reason_has(&v, "sqlite_master");
    v = check_with(GOLD, false, "SELECT date('now')");
    assert_reason_has(&v, "date");
    v = check_with(GOLD, false, "WITH d AS (SELECT 1) DELETE FROM invoices");
    assert_reason_has(&v, "delete from 'invoices'");
    v = check_with(GOLD, false, "SELECT 1; DROP TABLE invoices");
    assert_reason_has(&v, "DROP TABLE");
    v = check_with(GOLD, false, "SELECT * FROM invoices WHERE amount > :min");
    assert_reason_has(&v, ":min");
    v = check_with(GOLD, false, "SELECT * FROM invoices, json_each('[1]')");
    assert_reason_has(&v, "table-valued function 'json_each'");
    v = check_with(GOLD, false, "SELECT name FROM pragma_table_info('invoices')");
    assert_reason_has(&v, "pragma_table_info");
    /* A CTE is not a table: reading it is fine, even without columns. */
    expect("SELECT COUNT(*) FROM invoices", false,
           "WITH p AS (SELECT * FROM invoices) SELECT COUNT(*) FROM p", VAT_OK, true);
    /* A table the spec does not list is denied like the schema table. */
    json_t *spec = make_spec(GOLD, false);
    json_array_remove(json_object_get(spec, "tables"), 1);
    const char *q = "SELECT count(*) FROM customers";
    v = check_spec(spec, q, strlen(q));
    assert_string_equal(v.code, VAT_SQL_DENIED);
    assert_reason_has(&v, "customers");
    json_decref(spec);
}

static void test_limits_from_spec(void **state)
{
    (void)state;
    json_t *spec = make_spec("SELECT * FROM invoices", false);
    const char *all = "SELECT * FROM invoices";
    json_object_set_new(spec, "max_rows", json_integer(7));
    struct vat_verdict v = check_spec(spec, all, strlen(all));
    assert_string_equal(v.code, VAT_OK);
    json_object_set_new(spec, "max_rows", json_integer(6));
    v = check_spec(spec, all, strlen(all));
    /* The reference itself breaks the cap: the task is unusable. */
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    spec = make_spec("SELECT invoice_id FROM invoices", false);
    json_object_set_new(spec, "max_rows", json_integer(7));
    const char *doubled =
        "SELECT invoice_id FROM invoices UNION ALL SELECT invoice_id FROM invoices";
    v = check_spec(spec, doubled, strlen(doubled));
    assert_string_equal(v.code, VAT_SQL_BUDGET);
    assert_true(v.gate_passed);
    json_object_set_new(spec, "max_rows", json_integer(100));
    json_object_set_new(spec, "max_bytes", json_integer(60));
    v = check_spec(spec, doubled, strlen(doubled));
    assert_string_equal(v.code, VAT_SQL_BUDGET);
    json_object_set_new(spec, "max_bytes", json_integer(1000));
    json_object_set_new(spec, "step_budget", json_integer(1000));
    const char *slow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r "
                       "WHERE n < 1000) SELECT invoice_id FROM invoices WHERE "
                       "(SELECT count(*) FROM r) > 0";
    v = check_spec(spec, slow, strlen(slow));
    assert_string_equal(v.code, VAT_SQL_BUDGET);
    assert_reason_has(&v, "budget of 1000 steps");
    json_decref(spec);
}

/* ---- paths and specs ---------------------------------------------------------------- */

static void test_unsafe_fixture_paths(void **state)
{
    (void)state;
    /* A FIFO where '../x.sqlite' points: opening it would not be refused
     * as unsafe but as not a regular file, so the reason shows which. */
    char *fifo = malloc(strlen(scratch) + 32);
    sprintf(fifo, "%s/x.sqlite", scratch);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    static const char *const bad[] = {"../x.sqlite", "/etc/passwd", "fixtures/../../x.sqlite",
                                      "./fixtures/main.sqlite", "fixtures//main.sqlite",
                                      "fixtures\\main.sqlite", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *spec = make_spec(GOLD, false);
        json_array_set_new(json_object_get(spec, "fixtures"), 1, json_string(bad[i]));
        struct vat_verdict v = check_spec(spec, GOLD, strlen(GOLD));
        assert_string_equal(v.code, VAT_INTERNAL);
        assert_false(v.gate_passed);
        assert_reason_has(&v, "unsafe fixture path");
        struct vat_verdict r;
        json_t *rows = vat_sql_run(spec, root, bad[i], "SELECT 1", 8, &r);
        assert_null(rows);
        assert_string_equal(r.code, VAT_INTERNAL);
        assert_reason_has(&r, "unsafe fixture path");
        struct vat_err e = {{0}};
        json_object_set_new(spec, "reference_sql", json_string(GOLD));
        assert_int_equal(vat_sql_gold_admissible(spec, root, &e), -1);
        if (!strstr(e.msg, "unsafe fixture path"))
            fail_msg("admission error '%s'", e.msg);
        json_decref(spec);
    }
    unlink(fifo);
    free(fifo);
}

static void test_bad_specs_and_fixtures(void **state)
{
    (void)state;
    struct vat_verdict v;
    json_t *spec = make_spec(GOLD, false);
    json_object_del(spec, "reference_sql");
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    spec = make_spec(GOLD, false);
    json_object_del(spec, "tables");
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    spec = make_spec(GOLD, false);
    json_object_set_new(spec, "fixtures", json_array());
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_object_set_new(spec, "fixtures", json_pack("[s]", "fixtures/missing.sqlite"));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    assert_reason_has(&v, "cannot be opened");
    json_object_set_new(spec, "fixtures", json_pack("[s]", "fixtures/notes.sqlite"));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    assert_reason_has(&v, "not an sqlite database");
    json_object_set_new(spec, "fixtures", json_pack("[s]", "fixtures"));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    assert_reason_has(&v, "not a regular file");
    json_object_set_new(spec, "fixtures", json_pack("[s]", MAIN_FX));
    json_object_set_new(spec, "ordered", json_string("yes"));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_object_set_new(spec, "ordered", json_false());
    json_object_set_new(spec, "step_budget", json_integer(0));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_object_del(spec, "step_budget");
    /* A reference that reads a table the spec does not list is the task's
     * fault, not the answer's. */
    json_object_set_new(spec, "tables", json_pack("[s]", "customers"));
    v = check_spec(spec, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    json_decref(spec);

    v = vat_check_sql(NULL, root, GOLD, strlen(GOLD));
    assert_string_equal(v.code, VAT_INTERNAL);
    spec = make_spec(GOLD, false);
    v = vat_check_sql(spec, root, NULL, 0);
    assert_string_equal(v.code, VAT_PARSE);
    assert_false(v.gate_passed);
    json_decref(spec);
}

/* ---- vat_sql_run ------------------------------------------------------------------------ */

static void test_run_rows_as_json(void **state)
{
    (void)state;
    json_t *spec = make_spec(GOLD, false);
    struct vat_verdict v;
    const char *q = "SELECT 1, 2.5, 'a', NULL, x'00ff', CAST(x'ff41' AS TEXT), 1e999, -1e999";
    json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    assert_non_null(rows);
    char *s = json_dumps(rows, JSON_COMPACT | JSON_REAL_PRECISION(15));
    /* x'ff41' as TEXT is not UTF-8: the bad byte becomes U+FFFD. */
    assert_string_equal(s, "[[1,2.5,\"a\",null,\"00ff\",\"\xef\xbf\xbd"
                           "A\",\"Infinity\",\"-Infinity\"]]");
    free(s);
    json_decref(rows);

    q = GOLD_ORDERED;
    rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    assert_non_null(rows);
    s = json_dumps(rows, JSON_COMPACT | JSON_REAL_PRECISION(15));
    assert_string_equal(s, "[[\"C1\",100.6],[\"C2\",75.25],[\"C3\",300.0]]");
    free(s);
    json_decref(rows);
    rows = vat_sql_run(spec, root, VAR_FX, q, strlen(q), &v);
    s = json_dumps(rows, JSON_COMPACT | JSON_REAL_PRECISION(15));
    assert_string_equal(s, "[[\"C2\",10.0],[\"C3\",null],[\"C4\",42.0]]");
    free(s);
    json_decref(rows);

    /* No clock: date() and a 'now' the text check cannot see read as NULL,
     * while dates that do not need the clock work. */
    q = "SELECT date(), date('n' || 'ow'), date('2024-01-31', '+1 day'), "
        "strftime('%Y', issued_on) FROM invoices WHERE invoice_id = 'INV-001'";
    rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    assert_non_null(rows);
    s = json_dumps(rows, JSON_COMPACT);
    assert_string_equal(s, "[[null,null,\"2024-02-01\",\"2024\"]]");
    free(s);
    json_decref(rows);

    /* The same gate and sandbox as the checker. */
    q = "DELETE FROM invoices";
    assert_null(vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v));
    assert_string_equal(v.code, VAT_SQL_NOT_SELECT);
    q = "SELECT * FROM sqlite_master";
    assert_null(vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v));
    assert_string_equal(v.code, VAT_SQL_DENIED);
    q = "SELECT 1; SELECT 2";
    assert_null(vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v));
    assert_string_equal(v.code, VAT_SQL_MULTI);
    json_decref(spec);
    assert_fixture_unchanged();
}


/* ---- hostile queries: bounded checking ---------------------------------------------- */

struct attack_arg {
    const char *gold, *answer;
};

static struct vat_verdict attack_run(const void *p)
{
    const struct attack_arg *a = p;
    json_t *spec = make_spec(a->gold, false);
    struct vat_verdict v = vat_check_sql(spec, root, a->answer, strlen(a->answer));
    json_decref(spec);
    return v;
}

/* One check in a child: its verdict must be the counted one, reached in
 * under 2 s of CPU with a peak RSS under 256 MiB. */
static struct measured expect_bounded(const char *gold, const char *answer, const char *code)
{
    struct attack_arg a = {gold, answer};
    struct measured m = measure_verdict(attack_run, &a, 30);
    if (getenv("VAT_TEST_SQL_TIMES"))
        fprintf(stderr, "%-13s %.3f s cpu %.3f s wall %4ld MiB  %.60s\n", m.code, m.cpu, m.wall,
                m.rss_mib, answer);
    if (m.status != 0 || strcmp(m.code, code) != 0)
        fail_msg("answer %.80s: got %s (status %d), expected %s", answer, m.code, m.status,
                 code);
    if (m.cpu >= 2.0 || m.rss_mib >= 256)
        fail_msg("answer %.80s: %.2f s of CPU, %ld MiB peak RSS", answer, m.cpu, m.rss_mib);
    return m;
}

/* Nested subqueries, level by level: "SELECT <expr> AS x FROM (<inner>)". */
static char *nest(const char *base, const char *open, const char *close, int levels)
{
    struct vat_buf b = VAT_BUF_INIT;
    char *cur = vat_xstrdup(base);
    for (int i = 0; i < levels; i++) {
        vat_buf_printf(&b, "%s%s%s", open, cur, close);
        free(cur);
        cur = vat_buf_detach(&b);
    }
    return cur;
}

/* Class 1: preparing grows without a VM step (flattened subqueries copy
 * their expressions into the parent, aliases copy theirs into WHERE,
 * pushed-down terms into the subquery): the counted allocator stops it. */
static void test_prepare_growth_bounded(void **state)
{
    (void)state;
    char *q = nest("SELECT 1 AS x", "SELECT (x*x+x) AS x FROM (", ")", 15);
    assert_true(strlen(q) < 600); /* a 540-byte attack of this shape */
    /* With the flattener off it simply runs: one column where two are due. */
    expect_bounded(GOLD, q, VAT_COLUMN_COUNT);
    free(q);
    q = nest("SELECT 1 AS x", "SELECT (x*x*x+x*x+x+x) AS x FROM (", ")", 14);
    expect_bounded(GOLD, q, VAT_COLUMN_COUNT);
    free(q);
    /* Deeper than SQLite's parser stack: a parse error, quickly. */
    q = nest("SELECT 1 AS x", "SELECT (x*x*x+x*x+x+x) AS x FROM (", ")", 20);
    expect_bounded(GOLD, q, VAT_PARSE);
    free(q);
    q = nest("SELECT amount AS x FROM invoices", "SELECT (x*x+x) AS x FROM (", ") WHERE x > 0",
             13);
    expect_bounded(GOLD, q, VAT_COLUMN_COUNT);
    free(q);
    char *e = nest("1", "(SELECT ", " AS a WHERE a+a+a)", 12);
    q = vat_xasprintf("SELECT %s, 1", e);
    expect_bounded(GOLD, q, VAT_SQL_BUDGET);
    free(q);
    free(e);
    e = nest("amount", "(SELECT ", " AS a FROM invoices GROUP BY a HAVING a*a*a > 0 ORDER BY a+a)",
             10);
    q = vat_xasprintf("SELECT %s, 1", e);
    expect_bounded(GOLD, q, VAT_SQL_BUDGET);
    free(q);
    free(e);
    /* Nesting itself is fine while it stays small: the right rows score 1. */
    q = nest("SELECT customer_id AS c, amount AS x FROM invoices WHERE status = 'paid'",
             "SELECT c, x FROM (", ")", 10);
    char *ok = vat_xasprintf("SELECT c, SUM(x) FROM (%s) GROUP BY c", q);
    expect_bounded(GOLD, ok, VAT_OK);
    free(ok);
    free(q);
}

/* Class 2: one call of a built-in that loops far past the length limit. */
static void test_unbounded_builtins(void **state)
{
    (void)state;
    static const char *const attacks[] = {
        "SELECT printf('%.*c', 2147483647, 'x')",
        "SELECT format('%.*c', 2147483647, 'x')",
        "SELECT printf('%.*c', -2147483647, 'x')",
        "SELECT printf('%.2147483647c', 'x')",
        "SELECT printf('%2147483647c', 'x')",
        "SELECT printf('%-*c', 2147483647, 'x')",
        "SELECT printf('%*d', 2147483647, 1)",
        "SELECT printf('%*d', -2147483647, 1)",
        "SELECT printf('%.*d', 2147483647, 1)",
        "SELECT printf('%!.*f', 2147483647, 1.5)",
        "SELECT printf('%0*.*g', 2147483647, 2147483647, 1.5)",
        "SELECT printf('%d %s %.*c', 1, 'a', 2147483647, 'x')",
        "SELECT printf('%' || '.2147483647' || 'c', 'x')",
        "SELECT printf(status || '%.*c', 2147483647, 'x') FROM invoices",
        "SELECT format('%99999999999999999999c', 'x')",
        /* Memory that grows row by row past the length limit's reach. */
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT length(json_group_array(printf('%09000d', n))), 1 FROM r",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT length(json_group_object(n, printf('%09000d', n))), 1 FROM r",
        /* Linear work on the longest values, row after row: what SQLite
         * allocates is charged to the step budget. */
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(length(upper(printf('%09000d', n)))), 1 FROM r",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(json_array_length('[' || printf('%.*c', 9000, ' ') || n || ']')), 1 FROM r",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(length(hex(zeroblob(4900 + n % 7)))), 1 FROM r",
        /* Quadratic built-ins charge the step budget. */
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(printf('%.*c', 9999, 'a') LIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b'), 1 FROM r",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(printf('%.*c', 9999, 'a') GLOB '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'), 1 FROM r",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1000000) "
        "SELECT sum(instr(printf('%.*c', 9999, 'a'), printf('%.*c', 4999 + n % 2, 'a') || 'b')), "
        "1 FROM r",
    };
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++)
        expect_bounded(GOLD, attacks[i], VAT_SQL_BUDGET);
    /* The wrappers give SQLite's own results. */
    json_t *spec = make_spec(GOLD, false);
    struct vat_verdict v;
    const char *q = "SELECT printf('%5.2f|%-4d|%.3s|%c|%q|%,d|%.*c|%%', 3.14159, 7, 'abcdef', "
                    "'xyz', 'it''s', 1234567, 3, 'z'), format('%s', NULL), printf(NULL), "
                    "instr('banana', 'nan'), replace('banana', 'an', 'AN'), "
                    "'abc' LIKE 'A_C', 'a%c' LIKE 'a!%c' ESCAPE '!', 'abc' GLOB 'a*', "
                    "printf('%.*s', 2147483647, 'short')";
    json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    assert_non_null(rows);
    char *got = json_dumps(rows, JSON_COMPACT);
    assert_string_equal(got, "[[\" 3.14|7   |abc|x|it''s|1,234,567|zzz|%\",\"\",null,3,"
                             "\"bANANa\",1,1,1,\"short\"]]");
    free(got);
    json_decref(rows);
    json_decref(spec);
}

/* Class 4: a verdict is the counted budget's, whatever the machine: a
 * correct answer with a costly uncorrelated subquery scores 1 while under
 * the step budget and sql_budget above it, never checker_limit. */
static void test_costly_answer_counted(void **state)
{
    (void)state;
    const char *gold = "SELECT count(*) FROM invoices";
    expect_bounded(gold,
                   "SELECT count(*) FROM invoices WHERE (WITH RECURSIVE r(n) AS (SELECT 1 "
                   "UNION ALL SELECT n+1 FROM r WHERE n < 20000) SELECT count(*) FROM r) > 0",
                   VAT_OK);
    expect_bounded(gold,
                   "SELECT count(*) FROM invoices WHERE (WITH RECURSIVE r(n) AS (SELECT 1 "
                   "UNION ALL SELECT n+1 FROM r WHERE n < 10000000) SELECT count(*) FROM r) > 0",
                   VAT_SQL_BUDGET);
    /* A few hundred of the costliest calls SQLite allows: seconds of CPU
     * once, stopped then by the CPU net (on a slow build sooner than on a
     * fast one); now charged to the step budget, which stops it at once. */
    struct measured m = expect_bounded(
        gold,
        "SELECT count(*) FROM invoices WHERE (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
        "SELECT n+1 FROM r WHERE n < 400) SELECT sum(instr(printf('%.*c', 999 - n % 2, 'a'), "
        "printf('%.*c', 499, 'a') || 'b')) FROM r) >= 0",
        VAT_SQL_BUDGET);
    if (!strstr(m.reason, "budget of"))
        fail_msg("not stopped by the counted budget: %s", m.reason);
    /* A handful of them is within the budget: the right count scores 1. */
    expect_bounded(gold,
                   "SELECT count(*) FROM invoices WHERE (WITH RECURSIVE r(n) AS (SELECT 1 UNION "
                   "ALL SELECT n+1 FROM r WHERE n < 4) SELECT sum(instr(printf('%.*c', 999 - n "
                   "% 2, 'a'), printf('%.*c', 499, 'a') || 'b')) FROM r) >= 0",
                   VAT_OK);
}

/* The printf/format wrapper gives SQLite's own result for every call it
 * lets through, widths and precisions read exactly as SQLite reads them
 * ('*' arguments cut to int, digits wrapping), compared here with a plain
 * SQLite connection. */
static void test_printf_matches_sqlite(void **state)
{
    (void)state;
    static const char *const calls[] = {
        "printf('%*d', 4294967301, 7)", "printf('%.*f', -3, 3.14159)",
        "printf('%*d', -5, 42)", "printf('%5.2f|%-8s|%08.3f', 2.5, 'ab', -1.25)",
        "printf('%,d %!.3g %q %Q %Q %w', 1234567, 0.1, 'it''s', NULL, 'x', 'a\"b')",
        "printf('%c|%.3c|%5c|%-5c|', 'xyz', 'ab', 'q', 'r')", "printf('%x %X %#o %#x', 255, 255, 8, 16)",
        "printf('%e %E %g %G', 1e100, 2.5e-7, 123456789.0, 0.000012345)",
        "printf('%z %s %.2s', 'a', 'bcd', 'efg')", "printf('100%% %')", "printf('%l')",
        "printf('%lld %ld', 9223372036854775807, -1)", "printf('%5')", "format('%d %d %d', 1)",
        "printf('%.*c', 999, 'z')", "printf('%999d', 1)", "printf('%.*c', 1000, 'z')",
        "printf('%.4294967299c', 'w')",
        "printf('%4294967301d', 3)", "printf('%p %n %i %u', 16, 5, -5)",
        "printf('%.*s', 3, 'abcdef')", "printf(x'2573', x'41')", "printf(12, 3)",
    };
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000);
    json_t *spec = make_spec(GOLD, false);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char *q = vat_xasprintf("SELECT %s", calls[i]);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
        int rc = sqlite3_step(st);
        struct vat_verdict v;
        json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
        if (rc != SQLITE_ROW) {
            if (rows)
                fail_msg("%s: SQLite fails (%s), the sandbox gives a row", calls[i],
                         sqlite3_errmsg(db));
        } else {
            if (!rows)
                fail_msg("%s: SQLite gives a row, the sandbox %s: %s", calls[i], v.code,
                         v.reason);
            const json_t *got = json_array_get(json_array_get(rows, 0), 0);
            const char *want = (const char *)sqlite3_column_text(st, 0);
            if (!want ? !json_is_null(got)
                      : (!json_is_string(got) || strcmp(json_string_value(got), want) != 0))
                fail_msg("%s: SQLite gives '%.60s', the sandbox '%.60s'", calls[i],
                         want ? want : "NULL", json_string_value(got));
        }
        json_decref(rows);
        sqlite3_finalize(st);
        free(q);
    }
    json_decref(spec);
    sqlite3_close(db);
}

static void test_checker_version(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "vat-sql/3 sqlite/%s", sqlite3_libversion());
    assert_string_equal(vat_sql_checker_version(), want);
    assert_ptr_equal(vat_sql_checker_version(), vat_sql_checker_version());
}

/* ---- trim ------------------------------------------------------------------------------- */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Random bytes drawn from pieces that exercise SQLite's character split:
 * ASCII, 2- and 3-byte characters, stray lead and continuation bytes and
 * an overlong run of continuation bytes. */
static void random_text(uint64_t *s, char *hex, size_t max_pieces)
{
    static const char *const pieces[] = {"61", "62", "20", "2c", "c3a9", "c3a8", "e282ac",
                                         "c3", "80", "c3808080808080", "f09f9880", "e2"};
    size_t n = lcg(s) % (max_pieces + 1);
    hex[0] = 0;
    for (size_t i = 0; i < n; i++)
        strcat(hex, pieces[lcg(s) % (sizeof pieces / sizeof pieces[0])]);
}

/* date() and strftime() in the sandbox (their fast path for plain dates,
 * SQLite's own function for the rest) against SQLite's: every day of 14
 * years and the days around them (months 00 to 13, days 00 to 32), with
 * times in and out of the fast path, under formats in and out of it. */
static const char *const date_formats[] = {
    "%Y", "%m", "%d", "%Y-%m", "%Y-%m-%d", "%H:%M:%S", "%Y%m%d%H%M%S", "%%Y %Y", "x%Yx",
    "%j", "%W", "%s", "plain", "", "%", "%Y-%", "%Y-%m-%dT%H:%M:%S", "%f", "%J", "%w",
    "%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y"};

static void cells_match(sqlite3_stmt *st, const json_t *row, int ncol, const char *what)
{
    for (int c = 0; c < ncol; c++) {
        const char *want = (const char *)sqlite3_column_text(st, c);
        const json_t *got = json_array_get(row, (size_t)c);
        if (!want ? !json_is_null(got)
                  : (!json_is_string(got) || strcmp(json_string_value(got), want) != 0))
            fail_msg("%s, column %d: SQLite gives '%s', the sandbox '%s'", what, c,
                     want ? want : "NULL", json_is_null(got) ? "NULL" : json_string_value(got));
    }
}

/* Runs q on plain SQLite and in the sandbox; every row and cell the same. */
static void dates_agree(sqlite3 *plain, const json_t *spec, const char *q)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(plain, q, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%.200s: %s", q, sqlite3_errmsg(plain));
    struct vat_verdict v;
    json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    if (!rows)
        fail_msg("%.200s: %s: %s", q, v.code, v.reason);
    size_t r = 0;
    int ncol = sqlite3_column_count(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char what[96];
        snprintf(what, sizeof what, "row %zu of %.60s", r, q);
        assert_true(r < json_array_size(rows));
        cells_match(st, json_array_get(rows, r), ncol, what);
        r++;
    }
    assert_int_equal(r, json_array_size(rows));
    sqlite3_finalize(st);
    json_decref(rows);
}

static void test_dates_match_sqlite(void **state)
{
    (void)state;
    sqlite3 *plain;
    assert_int_equal(sqlite3_open(":memory:", &plain), SQLITE_OK);
    json_t *spec = make_spec(GOLD, false);
    static const char *const years[] = {"1000", "1600", "1899", "1900", "1999", "2000", "2001",
                                        "2004", "2023", "2024", "2100", "2400", "9999", "0999",
                                        "0000", "0001"};
    static const char *const times[] = {"",          " 00:00:00", " 23:59:59", " 24:00:00",
                                        " 12:60:00", " 12:00:60", " 07:08:09", "T07:08:09",
                                        " 07:08",    " 07:08:09.5", " 07:08:09Z", " 7:08:09"};
    struct vat_buf cols = VAT_BUF_INIT;
    vat_buf_puts(&cols, "s, date(s)");
    for (size_t f = 0; f < sizeof date_formats / sizeof date_formats[0]; f++)
        vat_buf_printf(&cols, ", strftime('%s', s)", date_formats[f]);
    for (size_t y = 0; y < sizeof years / sizeof years[0]; y++)
        for (size_t t = 0; t < sizeof times / sizeof times[0]; t++) {
            char *q = vat_xasprintf(
                "WITH RECURSIVE m(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM m WHERE v < 13), "
                "d(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM d WHERE v < 32), "
                "t(s) AS (SELECT printf('%s-%%02d-%%02d%s', m.v, d.v) FROM m, d) "
                "SELECT %s FROM t ORDER BY s",
                years[y], times[t], cols.data);
            dates_agree(plain, spec, q);
            free(q);
        }
    vat_buf_release(&cols);
    /* Arguments of other kinds, counts and modifiers, all SQLite's (the
     * clock's forms are denied by the gate, before any function runs). */
    static const char *const calls[] = {
        "strftime('%Y', 2460000.5)", "strftime('%Y', NULL)", "strftime(NULL, '2024-01-01')",
        "strftime('%Y', CAST('2024-01-01' AS BLOB))", "strftime(5, '2024-01-01')",
        "date('2024-01-01', '+1 day')", "date('2024-01-31', 'start of month')",
        "date(' 2024-01-01')", "date('2024-01-01 ')", "date('2024-1-01')", "date(20240101)",
        "date('2024-02-29 23:59:59')", "date('2023-02-29')", "date(NULL)", "date('')",
        "strftime('%Y-%m-%d', '2024-12-31 23:59:59', 'utc')", "date('2024-01-01', NULL)",
        "strftime('%Y', '2024-01-01', '+1 year')", "date('10000-01-01')",
        "date('2024-06-15' || ' 01:02:03')", "strftime('%H%M%S', '2024-06-15 01:02:03')",
        "typeof(date('2024-06-15'))", "typeof(strftime('%Y', '2024-06-15'))",
    };
    struct vat_buf one = VAT_BUF_INIT;
    vat_buf_puts(&one, "SELECT ");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        vat_buf_printf(&one, "%s%s", i ? ", " : "", calls[i]);
    dates_agree(plain, spec, one.data);
    vat_buf_release(&one);
    /* A format read from a row changes from row to row: each row's own
     * format applies (a format read once per statement is kept only while
     * it is a constant), fast and slow ones interleaved, fields and
     * lengths differing. */
    struct vat_buf fm = VAT_BUF_INIT;
    vat_buf_puts(&fm, "WITH f(k, v) AS (VALUES ");
    for (size_t f = 0; f < sizeof date_formats / sizeof date_formats[0]; f++)
        vat_buf_printf(&fm, "%s(%zu, '%s')", f ? ", " : "", f, date_formats[f]);
    vat_buf_puts(&fm, "), t(s) AS (VALUES ('2024-02-29'), ('2023-12-31 23:59:58'), "
                      "('2024-13-01'), ('1999-01-02 03:04:05')) "
                      "SELECT t.s, strftime(f.v, t.s), strftime(f.v || '%d', t.s) "
                      "FROM t, f ORDER BY t.s, f.k");
    dates_agree(plain, spec, fm.data);
    vat_buf_release(&fm);
    /* Every byte of a plain date and of a date and time replaced by its
     * neighbours around the digits and separators, by letters, and by
     * bytes with the high bit set whose low bits are a digit's or a
     * separator's (the shape is checked eight bytes at a time). */
    static const unsigned char swaps[] = {'/', ':', '0', '9', '-', ' ', 'a', 'T', 0x2c, 0x2e,
                                          0xb0, 0xb9, 0xad, 0xa0, 0xba, 0x80, 0xff, 0x10};
    static const char *const plains[] = {"2024-06-15", "2024-06-15 07:08:09"};
    struct vat_buf sw = VAT_BUF_INIT;
    vat_buf_puts(&sw, "WITH t(k, s) AS (VALUES ");
    int k = 0;
    for (size_t p = 0; p < 2; p++)
        for (size_t i = 0; plains[p][i]; i++)
            for (size_t c = 0; c < sizeof swaps; c++) {
                vat_buf_printf(&sw, "%s(%d, CAST(X'", k ? ", " : "", k);
                for (size_t j = 0; plains[p][j]; j++)
                    vat_buf_printf(&sw, "%02x",
                                   j == i ? swaps[c] : (unsigned char)plains[p][j]);
                vat_buf_puts(&sw, "' AS TEXT))");
                k++;
            }
    vat_buf_puts(&sw, ") SELECT date(s), strftime('%Y-%m-%d %H:%M:%S', s), strftime('%d', s) "
                      "FROM t ORDER BY k");
    dates_agree(plain, spec, sw.data);
    vat_buf_release(&sw);
    json_decref(spec);
    sqlite3_close(plain);
}

static void test_trim_matches_sqlite(void **state)
{
    (void)state;
    sqlite3 *plain;
    assert_int_equal(sqlite3_open(":memory:", &plain), SQLITE_OK);
    json_t *spec = make_spec(GOLD, false);
    uint64_t seed = 12345;
    int multi = 0;
    for (int iter = 0; iter < 400; iter++) {
        char x[256], y[128], q[2048];
        random_text(&seed, x, 12);
        random_text(&seed, y, iter % 2 ? 6 : 2);
        if (strstr(y, "c380808080"))
            multi++;
        snprintf(q, sizeof q,
                 "SELECT hex(ltrim(CAST(x'%s' AS TEXT), CAST(x'%s' AS TEXT))), "
                 "hex(rtrim(CAST(x'%s' AS TEXT), CAST(x'%s' AS TEXT))), "
                 "hex(trim(CAST(x'%s' AS TEXT), CAST(x'%s' AS TEXT)))",
                 x, y, x, y, x, y);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(plain, q, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        struct vat_verdict v;
        json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
        if (!rows)
            fail_msg("%s: %s", v.code, v.reason);
        for (int c = 0; c < 3; c++) {
            const char *want = (const char *)sqlite3_column_text(st, c);
            const char *got = json_string_value(json_array_get(json_array_get(rows, 0), (size_t)c));
            if (!got || strcmp(want, got) != 0)
                fail_msg("trim #%d of x'%s' by x'%s': sqlite %s, sandbox %s", c, x, y, want,
                         got ? got : "(null)");
        }
        sqlite3_finalize(st);
        json_decref(rows);
    }
    assert_true(multi > 0);
    /* NULLs and the one-argument forms. */
    const char *q = "SELECT trim(NULL, 'a'), trim('aba', NULL), trim('  x  '), "
                    "ltrim('xxy', ''), rtrim(12300, '0'), trim('ab', 'ba')";
    struct vat_verdict v;
    json_t *rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    assert_non_null(rows);
    char *s = json_dumps(rows, JSON_COMPACT);
    assert_string_equal(s, "[[null,null,\"x\",\"xxy\",\"123\",\"\"]]");
    free(s);
    json_decref(rows);
    sqlite3_close(plain);

    /* Fast on the worst case for SQLite's own loop: many calls with a set
     * as long as a value may be (about 10 ms each there). */
    q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 400) "
        "SELECT sum(length(trim(printf('%.*c', 999, 'a'), printf('%.*c', 998, 'b') || 'a'))) "
        "FROM r";
    struct stopwatch w = stopwatch_start();
    rows = vat_sql_run(spec, root, MAIN_FX, q, strlen(q), &v);
    stopwatch_check(&w, q);
    if (!rows)
        fail_msg("%s: %s", v.code, v.reason);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(rows, 0), 0)), 0);
    json_decref(rows);
    json_decref(spec);
}

/* ---- admission -------------------------------------------------------------------------- */

static int admissible(const char *gold, bool ordered, bool allow_empty, char *why, size_t cap)
{
    json_t *spec = make_spec(gold, ordered);
    if (allow_empty)
        json_object_set_new(spec, "allow_empty_variants", json_true());
    struct vat_err e = {{0}};
    int rc = vat_sql_gold_admissible(spec, root, &e);
    snprintf(why, cap, "%s", e.msg);
    json_decref(spec);
    return rc;
}

static void expect_refused(const char *gold, bool ordered, const char *needle)
{
    char why[512];
    if (admissible(gold, ordered, false, why, sizeof why) != -1)
        fail_msg("gold %s was admitted", gold);
    if (!strstr(why, needle))
        fail_msg("gold %s refused for '%s', expected '%s'", gold, why, needle);
}

static void test_gold_admissible(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(admissible(GOLD, false, false, why, sizeof why), 0);
    assert_int_equal(admissible(GOLD_ORDERED, true, false, why, sizeof why), 0);
    /* LIMIT only inside an identifier, a string or a comment is fine. */
    assert_int_equal(admissible("SELECT invoice_id AS \"limit\", 'limit' FROM invoices -- limit",
                                false, false, why, sizeof why),
                     0);

    expect_refused("SELECT invoice_id FROM invoices WHERE 0", false, "no rows on fixture main");
    expect_refused(GOLD_ORDERED " LIMIT 2", true, "LIMIT");
    expect_refused(GOLD_ORDERED "\nlimit 2 offset 1", true, "LIMIT");
    expect_refused("SELECT random() FROM invoices", false, "sql_denied");
    expect_refused("SELECT date('now')", false, "sql_denied");
    expect_refused("DELETE FROM invoices", false, "sql_not_select");
    /* Rows placed only by scan order: group_concat without an order, and
     * an ORDER BY with ties under an ordered comparison. */
    expect_refused("SELECT group_concat(invoice_id) FROM invoices", false, "different rows");
    expect_refused("SELECT customer_id, invoice_id FROM invoices ORDER BY customer_id", true,
                   "different rows");
    assert_int_equal(admissible("SELECT customer_id, invoice_id FROM invoices "
                                "ORDER BY customer_id, invoice_id",
                                true, false, why, sizeof why),
                     0);
    /* An order only the storage gives: the explicit rowid order survives a
     * backwards scan, and only the copy with its rows stored last first
     * (new rowids) shows it. */
    expect_refused("SELECT group_concat(invoice_id) FROM "
                   "(SELECT invoice_id FROM invoices ORDER BY rowid)",
                   false, "with rows stored in reverse order");
    expect_refused("SELECT group_concat(invoice_id) FROM invoices", false,
                   "with tables scanned backwards");
    /* Empty on a variant only (the variant has no 'void' invoices). */
    const char *voids = "SELECT invoice_id FROM invoices WHERE status = 'void'";
    expect_refused(voids, false, "no rows on fixture variant 1");
    assert_int_equal(admissible(voids, false, true, why, sizeof why), 0);
}

/* Within a task's draw a sandbox hands repeated runs of a query their
 * rows again: never across scan orders or row limits. */
static void test_rows_memo_within_draw(void **state)
{
    vat_file_memo_begin();
    const char *cat = "SELECT group_concat(invoice_id) FROM invoices";
    json_t *spec = make_spec(cat, false);
    struct vat_verdict v;
    json_t *first = vat_sql_run(spec, root, MAIN_FX, cat, strlen(cat), &v);
    json_t *again = vat_sql_run(spec, root, MAIN_FX, cat, strlen(cat), &v);
    assert_non_null(first);
    assert_non_null(again);
    assert_true(json_equal(first, again));
    json_decref(first);
    json_decref(again);
    json_decref(spec);
    expect_refused(cat, false, "with tables scanned backwards");
    expect_refused("SELECT group_concat(invoice_id) FROM "
                   "(SELECT invoice_id FROM invoices ORDER BY rowid)",
                   false, "with rows stored in reverse order");
    test_limits_from_spec(state);
    /* the prepared check of the draw takes the reference rows the
     * admission computed on each fixture: no query runs for them */
    spec = make_spec(GOLD, false);
    struct vat_err e = {{0}};
    assert_int_equal(vat_sql_gold_admissible(spec, root, &e), 0);
    unsigned long before = vat_sql_runs();
    struct vat_sql_prep *p = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    assert_int_equal(vat_sql_runs(), before);
    /* nor for the gold's own check: its rows on each fixture are those */
    v = vat_sql_check_prepared(p, GOLD, strlen(GOLD), NULL);
    assert_string_equal(v.code, VAT_OK);
    assert_int_equal(vat_sql_runs(), before);
    const char *hard = "VALUES ('C1', 100.6), ('C2', 75.25), ('C3', 300.0)";
    v = vat_sql_check_prepared(p, hard, strlen(hard), NULL);
    assert_true(v.gate_passed && v.score == 0.0);
    /* a query not run before runs: main's rows written out, so on both */
    assert_int_equal(vat_sql_runs(), before + 2);
    vat_sql_prep_free(p);
    /* A query run on the main fixture before the check is prepared (as a
     * trap is armed) is compared there by its rows, and run on the variant
     * only; with the same verdict, reason included, as outside a draw. */
    const char *paid = "SELECT customer_id, SUM(amount) FROM invoices "
                       "WHERE status = 'paid' AND issued_on < '2024-05' GROUP BY customer_id";
    json_t *armed = vat_sql_run(spec, root, MAIN_FX, paid, strlen(paid), &v);
    assert_non_null(armed);
    json_decref(armed);
    p = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    before = vat_sql_runs();
    struct vat_verdict inside = vat_sql_check_prepared(p, paid, strlen(paid), NULL);
    assert_int_equal(vat_sql_runs(), before + 1);
    vat_sql_prep_free(p);
    /* a row limit of its own: the rows kept under the other limit do not
     * serve, and the reference runs on both fixtures */
    json_t *capped = json_deep_copy(spec);
    json_object_set_new(capped, "max_rows", json_integer(77));
    before = vat_sql_runs();
    p = vat_sql_prepare(capped, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    assert_int_equal(vat_sql_runs(), before + 2);
    v = vat_sql_check_prepared(p, GOLD, strlen(GOLD), NULL);
    assert_string_equal(v.code, VAT_OK);
    vat_sql_prep_free(p);
    json_decref(capped);
    vat_file_memo_end();
    struct vat_verdict outside = vat_check_sql(spec, root, paid, strlen(paid));
    assert_string_equal(inside.code, outside.code);
    assert_true(inside.gate_passed == outside.gate_passed && inside.score == outside.score);
    assert_string_equal(inside.reason, outside.reason);
    /* outside a draw the reference runs on every fixture */
    before = vat_sql_runs();
    p = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    assert_int_equal(vat_sql_runs(), before + 2);
    vat_sql_prep_free(p);
    json_decref(spec);
}

/* Within a draw the admission's run with the rows stored last first
 * happens inside the fixture's plain sandbox, in a transaction rolled
 * back after the query: every admission verdict is the one outside a
 * draw (where a sandbox of its own holds the copy), the rows-reversed
 * runs do not open a sandbox each, and the plain sandbox afterwards holds
 * the fixture as it was (a query reading the storage order, not run
 * before, gives the plain rows). */
static void test_rows_reversed_inside_plain_sandbox(void **state)
{
    const char *byrowid = "SELECT group_concat(invoice_id) FROM "
                          "(SELECT invoice_id FROM invoices ORDER BY rowid) /* after */";
    json_t *spec = make_spec(byrowid, false);
    struct vat_verdict v;
    json_t *plain = vat_sql_run(spec, root, MAIN_FX, byrowid, strlen(byrowid), &v);
    assert_non_null(plain);

    vat_file_memo_begin();
    /* A spec of its own (a step budget no other test uses), so no sandbox
     * of an earlier test serves it: the admission opens one connection
     * per fixture, for all three orders. */
    struct vat_err e = {{0}};
    json_t *gold = make_spec(GOLD, false);
    json_object_set_new(gold, "step_budget", json_integer(987654));
    unsigned long opens = vat_sql_sandbox_opens(), compiles = vat_sql_compiles();
    assert_int_equal(vat_sql_gold_admissible(gold, root, &e), 0);
    assert_int_equal(vat_sql_sandbox_opens(), opens + 2);
    /* the gold compiled twice per fixture (backwards, then plain for the
     * plain and rows-reversed runs) */
    assert_int_equal(vat_sql_compiles(), compiles + 4);
    unsigned long before = vat_sql_runs();
    assert_int_equal(vat_sql_gold_admissible(gold, root, &e), 0);
    assert_int_equal(vat_sql_runs(), before); /* every order's rows kept */
    /* the prepared check of the draw runs the gold on what the plain run
     * compiled */
    struct vat_verdict pv;
    struct vat_sql_prep *pp = vat_sql_prepare(gold, root, NULL, NULL, 0, &pv);
    assert_non_null(pp);
    pv = vat_sql_check_prepared(pp, GOLD, strlen(GOLD), NULL);
    assert_string_equal(pv.code, VAT_OK);
    vat_sql_prep_free(pp);
    assert_int_equal(vat_sql_compiles(), compiles + 4);
    json_decref(gold);
    test_gold_admissible(state);
    json_t *after = vat_sql_run(spec, root, MAIN_FX, byrowid, strlen(byrowid), &v);
    assert_non_null(after);
    assert_true(json_equal(plain, after));
    vat_file_memo_end();
    json_decref(after);
    json_decref(plain);
    json_decref(spec);
}

/* Within a draw, a writable plain sandbox the thread's cache lets go of is
 * kept and the next fixture is put under the same connection.  Every
 * verdict and every row on such a connection is the one a new connection
 * gives: the gold's rows, the storage order, the denials (schema, pragma
 * functions, 'now', extensions, writes), the step budget, a missing
 * table, on both fixtures, round after round. */
static void test_spare_sandboxes(void **state)
{
    (void)state;
    static const char *const queries[] = {
        GOLD,
        "SELECT group_concat(invoice_id) FROM invoices",
        "SELECT group_concat(invoice_id) FROM (SELECT invoice_id FROM invoices ORDER BY rowid)",
        "SELECT * FROM sqlite_master",
        "SELECT name FROM pragma_table_info('invoices')",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) SELECT count(*) FROM r",
        "SELECT date('now')",
        "SELECT load_extension('x')",
        "WITH d AS (SELECT 1) DELETE FROM invoices",
        "SELECT * FROM no_such_table",
    };
    enum { NQ = sizeof queries / sizeof queries[0], ROUNDS = 3 };
    static const char *const fx[2] = {MAIN_FX, VAR_FX};
    json_t *fresh[NQ][2];
    char fresh_code[NQ][2][32];
    for (size_t q = 0; q < NQ; q++)
        for (size_t f = 0; f < 2; f++) {
            json_t *spec = make_spec(GOLD, false);
            json_object_set_new(spec, "step_budget", json_integer(400000 + (json_int_t)q));
            struct vat_verdict v;
            fresh[q][f] = vat_sql_run(spec, root, fx[f], queries[q], strlen(queries[q]), &v);
            snprintf(fresh_code[q][f], sizeof fresh_code[q][f], "%s", v.code);
            json_decref(spec);
        }
    assert_non_null(fresh[0][0]);
    assert_null(fresh[3][0]);

    vat_file_memo_begin();
    unsigned long reimages = vat_sql_sandbox_reimages();
    for (int round = 0; round < ROUNDS; round++)
        for (size_t q = 0; q < NQ; q++)
            for (size_t f = 0; f < 2; f++) {
                /* a budget of its own: a sandbox not in the cache */
                json_t *spec = make_spec(GOLD, false);
                json_object_set_new(spec, "step_budget",
                                    json_integer(410000 + 1000 * round + 10 * (json_int_t)q +
                                                 (json_int_t)f));
                struct vat_verdict v;
                json_t *got = vat_sql_run(spec, root, fx[f], queries[q], strlen(queries[q]), &v);
                if (strcmp(v.code, fresh_code[q][f]) != 0 ||
                    !(got ? fresh[q][f] && json_equal(got, fresh[q][f]) : !fresh[q][f]))
                    fail_msg("round %d, '%s' on %s: %s, a new connection gave %s (rows %s)",
                             round, queries[q], fx[f], v.code, fresh_code[q][f],
                             strcmp(v.code, fresh_code[q][f]) == 0 ? "differ" : "aside");
                json_decref(got);
                json_decref(spec);
            }
    /* the gold's admission on both fixtures, in all three orders, on
     * spares too */
    struct vat_err e = {{0}};
    for (int i = 0; i < 20; i++) {
        json_t *gold = make_spec(GOLD, false);
        json_object_set_new(gold, "step_budget", json_integer(420000 + i));
        assert_int_equal(vat_sql_gold_admissible(gold, root, &e), 0);
        json_decref(gold);
    }
    expect_refused("SELECT group_concat(invoice_id) FROM "
                   "(SELECT invoice_id FROM invoices ORDER BY rowid)",
                   false, "with rows stored in reverse order");
    assert_true(vat_sql_sandbox_reimages() >= reimages + 20);
    vat_file_memo_end();
    /* a fixture that is no database: a spare that cannot take it gives
     * the verdict a new connection gives */
    char *good = vat_path_join(root, MAIN_FX);
    char *bad = vat_path_join(root, "fixtures/garbage.sqlite");
    size_t gn = 0;
    unsigned char *img = (unsigned char *)vat_test_read_file(good, &gn);
    assert_true(img && gn > 200);
    for (size_t i = 100; i < gn; i++) /* the header kept, the pages garbled */
        img[i] ^= (unsigned char)(0x5a + i);
    FILE *gf = fopen(bad, "wb");
    assert_non_null(gf);
    assert_int_equal(fwrite(img, 1, gn, gf), gn);
    fclose(gf);
    free(img);
    free(good);
    char out_code[2][32], out_reason[2][256];
    for (int in_draw = 0; in_draw < 2; in_draw++) {
        if (in_draw) {
            vat_file_memo_begin();
            json_t *warm = make_spec(GOLD, false); /* leaves a spare behind */
            assert_int_equal(vat_sql_gold_admissible(warm, root, &e), 0);
            json_decref(warm);
        }
        json_t *spec = make_spec(GOLD, false);
        json_object_set_new(spec, "step_budget", json_integer(430000 + in_draw));
        struct vat_verdict v;
        unsigned long r0 = vat_sql_sandbox_reimages();
        assert_null(vat_sql_run(spec, root, "fixtures/garbage.sqlite", GOLD, strlen(GOLD), &v));
        assert_int_equal(vat_sql_sandbox_reimages(), r0 + (unsigned long)in_draw); /* tried */
        snprintf(out_code[in_draw], sizeof out_code[0], "%s", v.code);
        snprintf(out_reason[in_draw], sizeof out_reason[0], "%s", v.reason);
        json_decref(spec);
        if (in_draw)
            vat_file_memo_end();
    }
    assert_string_equal(out_code[1], out_code[0]);
    assert_string_equal(out_reason[1], out_reason[0]);
    assert_non_null(strstr(out_reason[0], "not a readable sqlite database"));
    remove(bad);
    free(bad);
    for (size_t q = 0; q < NQ; q++)
        for (size_t f = 0; f < 2; f++)
            json_decref(fresh[q][f]);
    assert_fixture_unchanged();
}

/* Tables the rows-reversed copy cannot rewrite keep their order, inside a
 * draw (the copy made in the plain sandbox) as outside it (a sandbox of
 * its own): a WITHOUT ROWID table, a table with a generated column (the
 * copy fails and is rolled back), a table whose rowid is its INTEGER
 * PRIMARY KEY (put back under the same keys); ordinary tables beside
 * them are reversed, every kind of value (NULL, the extreme integers, a
 * real, empty text and blob, bytes, text with a NUL) kept as it was.
 * Each gold gets the same verdict both ways. */
static void test_rows_reversed_edge_tables(void **state)
{
    (void)state;
    char *path = vat_xasprintf("%s/fixtures/edges.sqlite", root);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "CREATE TABLE w (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;"
                     "CREATE TABLE g (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2) VIRTUAL);"
                     "CREATE TABLE ipk (id INTEGER PRIMARY KEY, v INTEGER);"
                     "CREATE TABLE t (x INTEGER);"
                     "INSERT INTO w VALUES ('a', 1), ('b', 2), ('c', 3);"
                     "INSERT INTO g (a) VALUES (1), (2), (3);"
                     "INSERT INTO ipk VALUES (10, 1), (20, 2), (30, 3);"
                     "INSERT INTO t VALUES (1), (2), (3);"
                     "CREATE TABLE m (k TEXT PRIMARY KEY, v);"
                     "INSERT INTO m VALUES ('a', NULL), ('b', 9223372036854775807), "
                     "('c', -9223372036854775808), ('d', 1.5e300), ('e', -0.25), ('f', ''), "
                     "('g', x''), ('h', x'00ff10'), ('i', 'a' || char(0) || 'b'), "
                     "('j', 'caf' || char(233)), ('k', '12'), ('l', 12);",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    free(path);
    static const struct {
        const char *gold;
        bool admitted;
    } cases[] = {
        {"SELECT group_concat(a) FROM (SELECT a FROM g ORDER BY rowid)", true},
        {"SELECT group_concat(v) FROM (SELECT v FROM ipk ORDER BY rowid)", true},
        {"SELECT group_concat(k) FROM (SELECT k FROM w ORDER BY k)", true},
        {"SELECT group_concat(x) FROM (SELECT x FROM t ORDER BY rowid)", false},
        {"SELECT x FROM t ORDER BY x", true},
        /* every kind of value comes back as it was, type and bytes */
        {"SELECT k, typeof(v), quote(v), hex(CAST(v AS BLOB)) FROM m ORDER BY k", true},
        {"SELECT group_concat(k) FROM (SELECT k FROM m ORDER BY rowid)", false},
    };
    for (int draw = 0; draw < 2; draw++) {
        if (draw)
            vat_file_memo_begin();
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            json_t *spec = json_pack("{s:s, s:s, s:[s], s:[s,s,s,s,s], s:b, s:s}", "checker",
                                     "sql", "dialect", "sqlite", "fixtures",
                                     "fixtures/edges.sqlite", "tables", "w", "g", "ipk", "t", "m",
                                     "ordered", false, "reference_sql", cases[i].gold);
            struct vat_err e = {{0}};
            int rc = vat_sql_gold_admissible(spec, root, &e);
            if ((rc == 0) != cases[i].admitted)
                fail_msg("%s (%s a draw): %s", cases[i].gold, draw ? "inside" : "outside",
                         rc == 0 ? "admitted" : e.msg);
            if (!cases[i].admitted)
                assert_non_null(strstr(e.msg, "with rows stored in reverse order"));
            json_decref(spec);
        }
        if (draw)
            vat_file_memo_end();
    }
}

/* ---- threads ------------------------------------------------------------------------------ */

struct worker {
    int ok, runs;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    json_t *spec = make_spec(GOLD, false);
    static const char *const answers[] = {
        GOLD, "SELECT customer_id, SUM(amount) FROM invoices GROUP BY customer_id",
        "SELECT * FROM sqlite_master"};
    static const char *const codes[] = {VAT_OK, VAT_WRONG_ROWS, VAT_SQL_DENIED};
    for (int i = 0; i < 30; i++) {
        struct vat_verdict v = vat_check_sql(spec, root, answers[i % 3], strlen(answers[i % 3]));
        w->runs++;
        if (strcmp(v.code, codes[i % 3]) == 0)
            w->ok++;
    }
    json_decref(spec);
    return NULL;
}

static void exec_on(const char *rel, const char *sql)
{
    char *path = malloc(strlen(root) + strlen(rel) + 2);
    sprintf(path, "%s/%s", root, rel);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    free(path);
}

static struct vat_verdict prepared(const json_t *spec, const char *answer, bool *set)
{
    struct vat_verdict v;
    struct vat_sql_prep *p = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    *set = vat_sql_prep_uses_fixture_set(p);
    v = vat_sql_check_prepared(p, answer, strlen(answer), NULL);
    vat_sql_prep_free(p);
    return v;
}

/* The prepared check serves fixtures of one schema as a set (one
 * connection, one statement, moved between fixtures) and every other
 * task a connection per fixture; the verdicts are the same either way. */
static void test_fixture_set(void **state)
{
    (void)state;
    static const struct invoice rows[] = {
        {"INV-201", "C4", "paid", 1.00, "2024-05-01"},
        {"INV-202", "C4", "paid", 2.00, "2024-05-02"},
    };
    write_fixture("fixtures/third.sqlite", rows, 2);
    write_fixture("fixtures/indexed.sqlite", rows, 2);
    exec_on("fixtures/indexed.sqlite", "CREATE INDEX by_status ON invoices(status)");
    write_fixture("fixtures/analyzed.sqlite", rows, 2);
    exec_on("fixtures/analyzed.sqlite", "ANALYZE");

    json_t *spec = make_spec(GOLD_ORDERED, true);
    json_t *fx = json_object_get(spec, "fixtures");
    json_array_append_new(fx, json_string("fixtures/third.sqlite"));
    bool set;
    /* one statement, three fixtures: each run sees its own rows */
    struct vat_verdict v = prepared(spec, GOLD_ORDERED, &set);
    assert_true(set);
    assert_string_equal(v.code, VAT_OK);
    v = prepared(spec, "SELECT 'C4', 3.0", &set);
    assert_true(v.gate_passed && v.score == 0.0);
    assert_reason_has(&v, "fixture main");
    /* right on the first two fixtures only: the third says so */
    const char *two = "SELECT customer_id, SUM(amount) FROM invoices WHERE status = 'paid' "
                      "AND issued_on < '2024-05' GROUP BY customer_id ORDER BY customer_id";
    struct vat_sql_prep *p = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    assert_non_null(p);
    assert_true(vat_sql_prep_uses_fixture_set(p));
    for (int round = 0; round < 3; round++) { /* the statement kept between checks */
        v = vat_sql_check_prepared(p, two, strlen(two), NULL);
        assert_true(v.gate_passed && v.score == 0.0);
        assert_reason_has(&v, "fixture variant 2");
        v = vat_sql_check_prepared(p, GOLD_ORDERED, strlen(GOLD_ORDERED), NULL);
        assert_string_equal(v.code, VAT_OK);
    }
    vat_sql_prep_free(p);
    /* turned off: a connection per fixture, the same verdict */
    setenv("VAT_SQL_FIXTURE_SET", "0", 1);
    v = prepared(spec, two, &set);
    unsetenv("VAT_SQL_FIXTURE_SET");
    assert_false(set);
    assert_reason_has(&v, "fixture variant 2");

    /* a fixture with another schema (an index more), or with statistics
     * that steer the planner: no set, verdicts still right */
    static const char *const apart[] = {"fixtures/indexed.sqlite", "fixtures/analyzed.sqlite"};
    for (size_t k = 0; k < 2; k++) {
        json_array_set_new(fx, 2, json_string(apart[k]));
        v = prepared(spec, GOLD_ORDERED, &set);
        assert_false(set);
        assert_string_equal(v.code, VAT_OK);
        v = prepared(spec, two, &set);
        assert_true(v.gate_passed && v.score == 0.0);
        assert_reason_has(&v, "fixture variant 2");
    }
    /* a single fixture needs no set */
    json_array_remove(fx, 2);
    json_array_remove(fx, 1);
    v = prepared(spec, GOLD_ORDERED, &set);
    assert_false(set);
    assert_string_equal(v.code, VAT_OK);
    json_decref(spec);
}

/* SQLite's allocations go through vat's counting allocator, which keeps
 * freed blocks per thread in size classes: a block keeps its bytes through
 * every resize, whatever classes it crosses (up to past the largest,
 * where the C library's realloc takes over), reports the size asked for,
 * stays poisoned under ASan while kept, and blocks freed on another
 * thread, or kept by a thread that ends, are handed back (LeakSanitizer
 * checks at exit). */
static void fill_pattern(unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        p[i] = (unsigned char)(i * 7 + 3);
}

static bool pattern_holds(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7 + 3))
            return false;
    return true;
}

static void *free_blocks_main(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < 64; i++)
        sqlite3_free(blocks[i]);
    /* and keeps some of its own when it ends */
    for (int i = 0; i < 64; i++)
        sqlite3_free(sqlite3_malloc(16 + 37 * i));
    return NULL;
}

static void test_sqlite_allocator(void **state)
{
    (void)state;
    static const int sizes[] = {10, 100, 1000, 1008, 1009, 2000, 5000, 70000, 262000, 262144,
                                300000, 1 << 20, 50, 3};
    unsigned char *p = sqlite3_malloc(sizes[0]);
    assert_non_null(p);
    fill_pattern(p, 0, (size_t)sizes[0]);
    int have = sizes[0];
    for (size_t k = 1; k < sizeof sizes / sizeof sizes[0]; k++) {
        p = sqlite3_realloc(p, sizes[k]);
        assert_non_null(p);
        assert_true(sqlite3_msize(p) >= (sqlite3_uint64)sizes[k]);
        assert_true(sqlite3_msize(p) < (sqlite3_uint64)sizes[k] + 8);
        size_t kept = (size_t)(have < sizes[k] ? have : sizes[k]);
        assert_true(pattern_holds(p, kept));
        fill_pattern(p, kept, (size_t)sizes[k]);
        have = sizes[k];
    }
    sqlite3_free(p);

    /* Either side of every large class's edge (a 16-byte header, then four
     * steps per doubling of 1 KiB): a block one byte short of its class
     * would overrun its heap block, which AddressSanitizer reports. */
    p = NULL;
    have = 0;
    for (int d = 0; d < 8; d++)
        for (int s = 0; s < 4; s++) {
            int edge = (1024 << d) + (s + 1) * (256 << d) - 16;
            for (int n = edge - 1; n <= edge + 1; n++) {
                p = sqlite3_realloc(p, n);
                assert_non_null(p);
                /* SQLite rounds a request up to 8 bytes before asking. */
                assert_true(sqlite3_msize(p) >= (sqlite3_uint64)n);
                assert_true(sqlite3_msize(p) < (sqlite3_uint64)n + 8);
                size_t kept = (size_t)(have < n ? have : n);
                assert_true(pattern_holds(p, kept));
                fill_pattern(p, kept, (size_t)n);
                have = n;
            }
        }
    sqlite3_free(p);

    /* Many blocks of every class, freed and asked for again. */
    void *blocks[600];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 600; i++) {
            int n = 1 + (i * 131 + round * 17) % (i < 550 ? 1100 : 200000);
            blocks[i] = sqlite3_malloc(n);
            assert_non_null(blocks[i]);
            memset(blocks[i], i & 0xff, (size_t)n);
        }
        for (int i = 0; i < 600; i++) {
            int n = 1 + (i * 131 + round * 17) % (i < 550 ? 1100 : 200000);
            const unsigned char *b = blocks[i];
            assert_int_equal(b[0], i & 0xff);
            assert_int_equal(b[n - 1], i & 0xff);
        }
        for (int i = 0; i < 600; i++)
            sqlite3_free(blocks[i]);
    }
#if defined(__SANITIZE_ADDRESS__)
    {
        unsigned char *q = sqlite3_malloc(200);
        assert_non_null(q);
        assert_false(__asan_address_is_poisoned(q + 199));
        sqlite3_free(q);
        assert_true(__asan_address_is_poisoned(q));
        assert_true(__asan_address_is_poisoned(q + 199));
    }
#endif

    /* Freed on another thread, which then ends with blocks kept. */
    for (int i = 0; i < 64; i++)
        assert_non_null(blocks[i] = sqlite3_malloc(24 + 61 * i));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, free_blocks_main, blocks), 0);
    pthread_join(th, NULL);
}

static void test_threads(void **state)
{
    (void)state;
    pthread_t th[4];
    struct worker w[4];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].runs, 30);
        assert_int_equal(w[i].ok, 30);
    }
    assert_fixture_unchanged();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gold_scores_one),
        cmocka_unit_test(test_trailing_semicolon_and_comments),
        cmocka_unit_test(test_multiset_and_ordered),
        cmocka_unit_test(test_float_tolerance),
        cmocka_unit_test(test_nulls_and_types),
        cmocka_unit_test(test_column_count),
        cmocka_unit_test(test_distinct_not_stripped),
        cmocka_unit_test(test_hard_coded_answer_fails_on_variant),
        cmocka_unit_test(test_hostile_answers),
        cmocka_unit_test(test_clock_mentions),
        cmocka_unit_test(test_denied_reasons_say_what),
        cmocka_unit_test(test_limits_from_spec),
        cmocka_unit_test(test_unsafe_fixture_paths),
        cmocka_unit_test(test_bad_specs_and_fixtures),
        cmocka_unit_test(test_run_rows_as_json),
        cmocka_unit_test(test_prepare_growth_bounded),
        cmocka_unit_test(test_unbounded_builtins),
        cmocka_unit_test(test_costly_answer_counted),
        cmocka_unit_test(test_printf_matches_sqlite),
        cmocka_unit_test(test_checker_version),
        cmocka_unit_test(test_trim_matches_sqlite),
        cmocka_unit_test(test_dates_match_sqlite),
        cmocka_unit_test(test_gold_admissible),
        cmocka_unit_test(test_rows_reversed_inside_plain_sandbox),
        cmocka_unit_test(test_spare_sandboxes),
        cmocka_unit_test(test_rows_reversed_edge_tables),
        cmocka_unit_test(test_rows_memo_within_draw),
        cmocka_unit_test(test_fixture_set),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_sqlite_allocator),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
