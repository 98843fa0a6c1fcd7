/* fuzz_sql_repeat.c — libFuzzer harness: the same SQL answer, the same
 * verdict and work count, however it is checked.  The input is the answer;
 * it is checked against a grouped-sum reference on three fixtures of one
 * schema (made here at start-up) under a small step budget, so that many
 * inputs end near it: twice through a prepared check whose fixtures are
 * served as one set (the second run reuses the pooled connection and, when
 * it is still cached, the statement), once through one with a connection
 * per fixture, and once through vat_check_sql on sandboxes of this
 * thread's cache.  The four verdicts (gate, score, code, reason) and work
 * counts must be equal, and each well formed (fuzz_common.h).  Inputs
 * before it push statements out of the pools' caches, so a statement
 * prepared afresh, reused or prepared again after eviction all meet. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fuzz_common.h"
#include "verifiers.h"

static char root[64];
static json_t *spec;
static struct vat_sql_prep *as_set, *apart;

static void make_fixture(const char *rel, int rows)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        abort();
    char *sql = sqlite3_mprintf(
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, region TEXT);"
        "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer_id INTEGER, "
        "amount REAL, status TEXT, issued_on TEXT);"
        "CREATE INDEX invoices_by_customer ON invoices(customer_id);"
        "INSERT INTO customers VALUES (1, 'Acme', 'north'), (2, 'Globex', 'south'), "
        "(3, 'Initech', NULL);"
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < %d) "
        "INSERT INTO invoices SELECT 'I-' || n, 1 + n %% 4, n * 2.5, "
        "CASE n %% 3 WHEN 0 THEN 'paid' WHEN 1 THEN 'open' ELSE 'void' END, "
        "printf('2024-%%02d-%%02d', 1 + n %% 12, 1 + n %% 28) FROM r;",
        rows);
    if (!sql || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_free(sql);
    sqlite3_close(db);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/vat-fuzz-sqlrep-XXXXXX");
    if (!mkdtemp(root))
        abort();
    char path[128];
    snprintf(path, sizeof path, "%s/fixtures", root);
    if (mkdir(path, 0777) != 0)
        abort();
    make_fixture("fixtures/main.sqlite", 40);
    make_fixture("fixtures/v1.sqlite", 25);
    make_fixture("fixtures/v2.sqlite", 60);
    /* A budget a recursive CTE of a few thousand rows reaches. */
    spec = json_pack("{s:s, s:s, s:[s,s,s], s:[s,s], s:b, s:i, s:s}", "checker", "sql",
                     "dialect", "sqlite", "fixtures", "fixtures/main.sqlite",
                     "fixtures/v1.sqlite", "fixtures/v2.sqlite", "tables", "invoices",
                     "customers", "ordered", 0, "step_budget", 20000, "reference_sql",
                     "SELECT customer_id, SUM(amount) FROM invoices WHERE status = 'paid' "
                     "GROUP BY customer_id");
    struct vat_verdict v;
    as_set = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    setenv("VAT_SQL_FIXTURE_SET", "0", 1);
    apart = vat_sql_prepare(spec, root, NULL, NULL, 0, &v);
    unsetenv("VAT_SQL_FIXTURE_SET");
    if (!as_set || !apart || !vat_sql_prep_uses_fixture_set(as_set) ||
        vat_sql_prep_uses_fixture_set(apart))
        abort();
}

struct seen {
    struct vat_verdict v;
    long long work;
};

static bool same(const struct seen *a, const struct seen *b)
{
    return a->v.gate_passed == b->v.gate_passed && a->v.score == b->v.score &&
           strcmp(a->v.code, b->v.code) == 0 && strcmp(a->v.reason, b->v.reason) == 0 &&
           a->work == b->work;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!spec)
        setup();
    const char *q = (const char *)data;
    struct seen s[4];
    s[0].v = vat_sql_check_prepared(as_set, q, size, NULL);
    s[0].work = vat_sql_last_work();
    s[1].v = vat_sql_check_prepared(as_set, q, size, NULL);
    s[1].work = vat_sql_last_work();
    s[2].v = vat_sql_check_prepared(apart, q, size, NULL);
    s[2].work = vat_sql_last_work();
    s[3].v = vat_check_sql(spec, root, q, size);
    s[3].work = vat_sql_last_work();
    for (int i = 0; i < 4; i++) {
        fuzz_assert_verdict(&s[i].v);
        if (!same(&s[0], &s[i])) {
            fprintf(stderr, "check %d differs: %s %g %lld '%s', first %s %g %lld '%s'\n", i,
                    s[i].v.code, s[i].v.score, s[i].work, s[i].v.reason, s[0].v.code,
                    s[0].v.score, s[0].work, s[0].v.reason);
            abort();
        }
    }
    return 0;
}
