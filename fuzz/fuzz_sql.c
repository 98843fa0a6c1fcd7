/* fuzz_sql.c — libFuzzer harness of the SQL checker and its sandbox.  The
 * input is the answer, checked against a grouped-sum reference over a
 * small fixture (invoices and customers) made here at start-up, in a
 * temporary root.  Every verdict must be well formed (fuzz_common.h), and
 * the fixture's bytes must never change. */
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
static unsigned char *fixture_bytes;
static size_t fixture_len;

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        abort();
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len)
        abort();
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void make_fixture(void)
{
    snprintf(root, sizeof root, "/tmp/vat-fuzz-sql-XXXXXX");
    if (!mkdtemp(root))
        abort();
    char path[128];
    snprintf(path, sizeof path, "%s/fixtures", root);
    if (mkdir(path, 0777) != 0)
        abort();
    snprintf(path, sizeof path, "%s/fixtures/main.sqlite", root);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        abort();
    const char *sql =
        "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, region TEXT);"
        "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer_id INTEGER, "
        "amount REAL, status TEXT, issued_on TEXT);"
        "INSERT INTO customers VALUES (1, 'Acme', 'north'), (2, 'Globex', 'south'), "
        "(3, 'Initech', NULL);"
        "INSERT INTO invoices VALUES ('A-1', 1, 120.5, 'paid', '2024-01-03'),"
        "('A-2', 1, 80, 'open', '2024-01-09'), ('B-1', 2, 42.25, 'paid', '2024-02-11'),"
        "('B-2', 2, NULL, 'paid', '2024-02-12'), ('C-1', 3, 7, 'void', '2024-03-01'),"
        "('C-2', 3, 19.75, 'paid', NULL), ('D-1', NULL, 5, 'paid', '2024-03-30');"
        "CREATE INDEX invoices_by_customer ON invoices(customer_id);";
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        abort();
    sqlite3_close(db);
    fixture_bytes = slurp(path, &fixture_len);
    spec = json_pack("{s:s, s:s, s:[s], s:[s,s], s:b, s:s}", "checker", "sql", "dialect",
                     "sqlite", "fixtures", "fixtures/main.sqlite", "tables", "invoices",
                     "customers", "ordered", 0, "reference_sql",
                     "SELECT customer_id, SUM(amount) FROM invoices WHERE status = 'paid' "
                     "GROUP BY customer_id");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!spec)
        make_fixture();
    struct vat_verdict v = vat_check_sql(spec, root, (const char *)data, size);
    fuzz_assert_verdict(&v);
    struct vat_verdict r;
    json_t *rows = vat_sql_run(spec, root, "fixtures/main.sqlite", (const char *)data, size, &r);
    fuzz_assert_verdict(&r);
    if (rows && !json_is_array(rows))
        abort();
    json_decref(rows);
    /* The fixture is never written: compare it now and then. */
    static unsigned runs;
    if (++runs % 256 == 0) {
        char path[128];
        size_t n;
        snprintf(path, sizeof path, "%s/fixtures/main.sqlite", root);
        unsigned char *now = slurp(path, &n);
        if (n != fixture_len || memcmp(now, fixture_bytes, n) != 0)
            abort();
        free(now);
    }
    return 0;
}
