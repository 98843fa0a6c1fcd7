/* test_csvio.c — CSV building, the exact bytes written, strict reading
 * with libcsv, and loading into SQLite (generators/csvio.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "csvio.h"
#include "filememo.h"
#include "rng.h"
#include "testutil.h"

static int setup_dir(void **state)
{
    *state = vat_test_tmpdir("csvio");
    return 0;
}

static int teardown_dir(void **state)
{
    vat_test_rmtree(*state);
    free(*state);
    return 0;
}

/* Writes raw bytes to root/rel, for reading files we did not write. */
static void put_file(const char *root, const char *rel, const char *bytes, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void assert_same_table(const struct vat_csv *a, const struct vat_csv *b)
{
    assert_int_equal(a->nrows, b->nrows);
    for (size_t r = 0; r < a->nrows; r++) {
        if (a->row[r].n != b->row[r].n)
            fail_msg("row %zu: %zu cells, then %zu", r, a->row[r].n, b->row[r].n);
        for (size_t i = 0; i < a->row[r].n; i++)
            if (strcmp(a->row[r].cell[i], b->row[r].cell[i]) != 0)
                fail_msg("row %zu cell %zu: '%s' became '%s'", r, i, a->row[r].cell[i],
                         b->row[r].cell[i]);
    }
}

static void build_tricky(struct vat_csv *c)
{
    static const char *const hdr[] = {"id", "name", "note", "amount"};
    vat_csv_add_row(c, hdr, 4);
    vat_csv_row_begin(c);
    vat_csv_add(c, "1");
    vat_csv_add(c, "Blue Harbor, Foods");
    vat_csv_add(c, "she said \"hi\"");
    vat_csv_addf(c, "%d.%02d", 12, 5);
    vat_csv_row_begin(c);
    vat_csv_add(c, "2");
    vat_csv_add(c, "line one\nline two");
    vat_csv_add(c, "crlf\r\ninside");
    vat_csv_add(c, "");
    vat_csv_row_begin(c);
    vat_csv_add(c, "");
    vat_csv_add(c, " padded ");
    vat_csv_add(c, "\ttabbed");
    vat_csv_add(c, "-3.50");
    /* Ragged rows: a title line and a lone empty cell. */
    static const char *const title[] = {"Report for Q3"};
    vat_csv_add_row(c, title, 1);
    vat_csv_row_begin(c);
    vat_csv_add(c, "");
    vat_csv_row_begin(c);
    vat_csv_add(c, "a");
    vat_csv_add(c, "");
    vat_csv_add(c, "");
    vat_csv_add(c, "\"");
    vat_csv_add(c, "x\"\"y");
}

static void test_exact_bytes(void **state)
{
    (void)state;
    struct vat_csv c = VAT_CSV_INIT;
    build_tricky(&c);
    char *s = vat_csv_to_string(&c);
    assert_string_equal(s, "id,name,note,amount\n"
                           "1,\"Blue Harbor, Foods\",\"she said \"\"hi\"\"\",12.05\n"
                           "2,\"line one\nline two\",\"crlf\r\ninside\",\n"
                           ",\" padded \",\"\ttabbed\",-3.50\n"
                           "Report for Q3\n"
                           "\"\"\n"
                           "a,,,\"\"\"\",\"x\"\"\"\"y\"\n");
    free(s);
    vat_csv_release(&c);

    struct vat_csv empty = VAT_CSV_INIT;
    s = vat_csv_to_string(&empty);
    assert_string_equal(s, "");
    free(s);
}

static void test_write_read_round_trip(void **state)
{
    const char *root = *state;
    struct vat_csv c = VAT_CSV_INIT, back = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    build_tricky(&c);
    assert_int_equal(vat_csv_write(&c, root, "fixtures/t/tricky.csv", &e), 0);

    /* The file holds exactly vat_csv_to_string's bytes, and no temporary. */
    char path[512];
    snprintf(path, sizeof path, "%s/fixtures/t/tricky.csv", root);
    size_t len;
    char *disk = vat_test_read_file(path, &len);
    char *mem = vat_csv_to_string(&c);
    assert_non_null(disk);
    assert_int_equal(len, strlen(mem));
    assert_memory_equal(disk, mem, len);
    snprintf(path, sizeof path, "%s/fixtures/t/tricky.csv.tmp", root);
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(vat_csv_read(&back, root, "fixtures/t/tricky.csv", &e), 0);
    assert_same_table(&c, &back);
    assert_string_equal(vat_csv_get(&back, 2, 2), "crlf\r\ninside");
    assert_string_equal(vat_csv_get(&back, 3, 1), " padded ");

    /* Overwriting replaces the old file whole. */
    struct vat_csv small = VAT_CSV_INIT;
    vat_csv_add(&small, "only");
    assert_int_equal(vat_csv_write(&small, root, "fixtures/t/tricky.csv", &e), 0);
    assert_int_equal(vat_csv_read(&back, root, "fixtures/t/tricky.csv", &e), 0);
    assert_int_equal(back.nrows, 1);
    assert_string_equal(vat_csv_get(&back, 0, 0), "only");

    /* A row of no cells is a blank line, which is no record. */
    vat_csv_row_begin(&small);
    vat_csv_add(&small, "after");
    vat_csv_row_begin(&small);
    vat_csv_row_begin(&small);
    vat_csv_add(&small, "last");
    char *three = vat_csv_to_string(&small);
    assert_string_equal(three, "only\nafter\n\nlast\n");
    free(three);
    assert_int_equal(vat_csv_write(&small, root, "fixtures/t/tricky.csv", &e), 0);
    assert_int_equal(vat_csv_read(&back, root, "fixtures/t/tricky.csv", &e), 0);
    assert_int_equal(back.nrows, 3);
    assert_string_equal(vat_csv_get(&back, 2, 0), "last");

    free(disk);
    free(mem);
    vat_csv_release(&c);
    vat_csv_release(&small);
    vat_csv_release(&back);
}

static void test_random_round_trip(void **state)
{
    const char *root = *state;
    static const char alphabet[] = "ab ,\"\r\n\t1.-";
    struct vat_rng r;
    vat_rng_seed(&r, 2024, 11);
    for (int round = 0; round < 20; round++) {
        struct vat_csv c = VAT_CSV_INIT, back = VAT_CSV_INIT;
        struct vat_err e = {{0}};
        size_t rows = 1 + vat_rng_below(&r, 60);
        for (size_t i = 0; i < rows; i++) {
            vat_csv_row_begin(&c);
            size_t n = 1 + vat_rng_below(&r, 6);
            for (size_t j = 0; j < n; j++) {
                char cell[16];
                size_t len = vat_rng_below(&r, sizeof cell);
                for (size_t k = 0; k < len; k++)
                    cell[k] = alphabet[vat_rng_below(&r, sizeof alphabet - 1)];
                cell[len] = 0;
                vat_csv_add(&c, cell);
            }
        }
        assert_int_equal(vat_csv_write(&c, root, "rand.csv", &e), 0);
        if (vat_csv_read(&back, root, "rand.csv", &e) != 0)
            fail_msg("round %d: %s", round, e.msg);
        assert_same_table(&c, &back);
        vat_csv_release(&c);
        vat_csv_release(&back);
    }
}

static void test_read_foreign_files(void **state)
{
    const char *root = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};

    /* No newline at the end: the last record still counts. */
    put_file(root, "nonl.csv", "a,b\n1,2\n3,\"x,y\"", 15);
    assert_int_equal(vat_csv_read(&c, root, "nonl.csv", &e), 0);
    assert_int_equal(c.nrows, 3);
    assert_string_equal(vat_csv_get(&c, 2, 0), "3");
    assert_string_equal(vat_csv_get(&c, 2, 1), "x,y");

    /* CRLF line ends, blank lines skipped, ragged rows, empty fields kept,
     * edge spaces kept (an RFC 4180 reader keeps them). */
    static const char crlf[] = "h1,h2,h3\r\n\r\n1,,3\r\nonly\r\n x , y\r\n";
    put_file(root, "crlf.csv", crlf, sizeof crlf - 1);
    assert_int_equal(vat_csv_read(&c, root, "crlf.csv", &e), 0);
    assert_int_equal(c.nrows, 4);
    assert_int_equal(c.row[1].n, 3);
    assert_string_equal(vat_csv_get(&c, 1, 1), "");
    assert_int_equal(c.row[2].n, 1);
    assert_string_equal(vat_csv_get(&c, 3, 0), " x ");
    assert_string_equal(vat_csv_get(&c, 3, 1), " y");

    /* An empty file is an empty table. */
    put_file(root, "empty.csv", "", 0);
    assert_int_equal(vat_csv_read(&c, root, "empty.csv", &e), 0);
    assert_int_equal(c.nrows, 0);
    vat_csv_release(&c);
}

static void test_read_errors(void **state)
{
    const char *root = *state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};

    /* A previous table survives a failed read untouched. */
    vat_csv_add(&c, "keep");

    put_file(root, "open.csv", "a,b\n1,\"never closed\n", 20);
    assert_int_equal(vat_csv_read(&c, root, "open.csv", &e), -1);
    assert_non_null(strstr(e.msg, "cannot parse 'open.csv'"));
    assert_non_null(strstr(e.msg, "at byte 20"));

    put_file(root, "stray.csv", "a,b\nab\"c,d\n", 11);
    assert_int_equal(vat_csv_read(&c, root, "stray.csv", &e), -1);
    assert_non_null(strstr(e.msg, "at byte 6"));

    put_file(root, "after.csv", "\"a\"b,c\n", 7);
    assert_int_equal(vat_csv_read(&c, root, "after.csv", &e), -1);
    assert_non_null(strstr(e.msg, "at byte 3"));

    put_file(root, "nul.csv", "a,b\n1,\0\n", 8);
    assert_int_equal(vat_csv_read(&c, root, "nul.csv", &e), -1);
    assert_non_null(strstr(e.msg, "NUL byte at byte 6"));

    assert_int_equal(vat_csv_read(&c, root, "missing.csv", &e), -1);
    assert_string_equal(e.msg, "vat: cannot open 'missing.csv': No such file or directory");

    assert_int_equal(vat_csv_read(&c, root, "../escape.csv", &e), -1);
    assert_non_null(strstr(e.msg, "unsafe path"));
    assert_int_equal(vat_csv_write(&c, root, "/abs.csv", &e), -1);
    assert_non_null(strstr(e.msg, "unsafe path"));

    assert_int_equal(c.nrows, 1);
    assert_string_equal(vat_csv_get(&c, 0, 0), "keep");
    vat_csv_release(&c);
}

/* Within a draw (the file memo on) a CSV is parsed once: later reads get
 * a copy of the table of the bytes first read, each the caller's own (a
 * cell replaced or a row grown in one copy does not show in the next);
 * the file rewritten through vat_write_file_atomic is parsed afresh; with
 * the memo off every read parses the disk as it is. */
static void test_read_shared_within_draw(void **state)
{
    const char *root = *state;
    struct vat_csv c = VAT_CSV_INIT, a = VAT_CSV_INIT, b = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    build_tricky(&c);
    assert_int_equal(vat_csv_write(&c, root, "fixtures/t/memo.csv", &e), 0);

    vat_file_memo_begin();
    assert_int_equal(vat_csv_read(&a, root, "fixtures/t/memo.csv", &e), 0);
    assert_same_table(&c, &a);
    /* The caller's copy is its own: a cell replaced, the last row grown
     * past its capacity (add_owned's rule: the next power of two). */
    assert_true(vat_csv_set(&a, 1, 1, "changed"));
    assert_string_equal(vat_csv_get(&a, 1, 1), "changed");
    assert_false(vat_csv_set(&a, 1, 99, "no such cell"));
    for (int k = 0; k < 9; k++)
        vat_csv_add(&a, "more");
    /* Bytes changed behind the memo's back: the draw still sees the
     * table of its first read. */
    put_file(root, "fixtures/t/memo.csv", "x,y\n1,2\n", 8);
    assert_int_equal(vat_csv_read(&b, root, "fixtures/t/memo.csv", &e), 0);
    assert_same_table(&c, &b);
    vat_csv_release(&b);
    /* A write through vat forgets it. */
    struct vat_csv small = VAT_CSV_INIT;
    vat_csv_add(&small, "only");
    assert_int_equal(vat_csv_write(&small, root, "fixtures/t/memo.csv", &e), 0);
    assert_int_equal(vat_csv_read(&b, root, "fixtures/t/memo.csv", &e), 0);
    assert_same_table(&small, &b);
    assert_int_equal(vat_csv_read(&b, root, "fixtures/t/memo.csv", &e), 0);
    assert_same_table(&small, &b);
    vat_file_memo_end();

    /* Memo off: the disk as it is. */
    put_file(root, "fixtures/t/memo.csv", "x,y\n1,2\n", 8);
    assert_int_equal(vat_csv_read(&b, root, "fixtures/t/memo.csv", &e), 0);
    assert_int_equal(b.nrows, 2);
    assert_string_equal(vat_csv_get(&b, 1, 1), "2");
    vat_csv_release(&small);
    vat_csv_release(&a);
    vat_csv_release(&b);
    vat_csv_release(&c);
}

/* Files with the most fields per byte (empty fields between commas,
 * empty quoted fields, CRLF line ends, no final newline) fill the read
 * table's text block to its bound and never past it (ASan watches). */
static void test_read_dense_fields(void **state)
{
    const char *root = *state;
    struct vat_buf b = VAT_BUF_INIT;
    for (int r = 0; r < 50; r++) {
        for (int k = 0; k < 40; k++)
            vat_buf_putc(&b, ',');
        vat_buf_puts(&b, r % 2 ? "\r\n" : "\n");
        vat_buf_puts(&b, "\"\",\"\",\"\"\n");
    }
    vat_buf_puts(&b, ",");
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    assert_int_equal(vat_write_file_atomic(root, "fixtures/t/dense.csv", b.data, b.len, &e), 0);
    assert_int_equal(vat_csv_read(&c, root, "fixtures/t/dense.csv", &e), 0);
    assert_int_equal(c.nrows, 101);
    assert_int_equal(c.row[0].n, 41);
    assert_int_equal(c.row[1].n, 3);
    assert_int_equal(c.row[100].n, 2);
    for (size_t r = 0; r < c.nrows; r++)
        for (size_t k = 0; k < c.row[r].n; k++)
            assert_string_equal(vat_csv_get(&c, r, k), "");
    assert_true(c.arena_len <= 2 * b.len + 2);
    vat_csv_add(&c, "appended");
    assert_string_equal(vat_csv_get(&c, 100, 2), "appended");
    vat_csv_release(&c);
    vat_buf_release(&b);
}

static void test_get_and_col(void **state)
{
    (void)state;
    struct vat_csv c = VAT_CSV_INIT;
    vat_csv_add(&c, "first"); /* no row begun: one is started */
    static const char *const hdr[] = {"order_id", "region", "amount"};
    vat_csv_add_row(&c, hdr, 3);
    for (int i = 0; i < 100; i++)
        vat_csv_addf(&c, "c%d", i);
    assert_int_equal(c.nrows, 2);
    assert_int_equal(c.row[1].n, 103);
    assert_string_equal(vat_csv_get(&c, 1, 102), "c99");
    assert_string_equal(vat_csv_get(&c, 0, 0), "first");
    assert_string_equal(vat_csv_get(&c, 0, 1), "");
    assert_string_equal(vat_csv_get(&c, 9, 0), "");
    assert_int_equal(vat_csv_col(&c, 1, "region"), 1);
    assert_int_equal(vat_csv_col(&c, 1, "Region"), -1);
    assert_int_equal(vat_csv_col(&c, 5, "region"), -1);
    vat_csv_release(&c);
    assert_int_equal(c.nrows, 0);
    assert_null(c.row);
}

static long query_long(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void build_orders(struct vat_csv *c)
{
    static const char *const rows[][4] = {
        {"order_id", "region", "status", "amount"},
        {"ORD-1", "North", "paid", "12.50"},
        {"ORD-2", "North", "", "7"},
        {"ORD-3", "South", "paid", ""},
        {"ORD-4", "South", "void", "-2.25"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        vat_csv_add_row(c, rows[i], 4);
}

static void test_to_sqlite(void **state)
{
    (void)state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    build_orders(&c);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "REAL"};
    assert_int_equal(vat_csv_to_sqlite(&c, 0, db, "orders", types, 1, &e), 0);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders"), 4);
    /* REAL affinity turned the text into numbers, "7" included. */
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE typeof(amount)='real'"), 3);
    assert_int_equal(query_long(db, "SELECT CAST(round(sum(amount)*100) AS INT) FROM orders"),
                     1725);
    /* Blank cells are NULL, in every column type. */
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE amount IS NULL"), 1);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE status IS NULL"), 1);

    /* Without blank_is_null (and all TEXT) blanks stay ''. */
    assert_int_equal(vat_csv_to_sqlite(&c, 0, db, "orders_text", NULL, 0, &e), 0);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders_text WHERE status = ''"), 1);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders_text WHERE status IS NULL"), 0);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders_text WHERE typeof(amount)='text'"),
                     4);

    /* A second load of the same name fails and changes nothing. */
    assert_int_equal(vat_csv_to_sqlite(&c, 0, db, "orders", types, 1, &e), -1);
    assert_non_null(strstr(e.msg, "cannot load table 'orders'"));
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders"), 4);

    sqlite3_close(db);
    vat_csv_release(&c);
}

static void test_to_sqlite_identifiers_and_header_row(void **state)
{
    (void)state;
    struct vat_csv c = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    static const char *const title[] = {"Quarterly export"};
    static const char *const hdr[] = {"we\"ird col", "select"};
    static const char *const row[] = {"v\"1", "2"};
    vat_csv_add_row(&c, title, 1);
    vat_csv_add_row(&c, hdr, 2);
    vat_csv_add_row(&c, row, 2);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(vat_csv_to_sqlite(&c, 1, db, "odd\"table", NULL, 1, &e), 0);
    assert_int_equal(
        query_long(db, "SELECT count(*) FROM \"odd\"\"table\" WHERE \"we\"\"ird col\" = 'v\"1' "
                       "AND \"select\" = '2'"),
        1);

    /* Header past the end, bad types and ragged data rows are refused,
     * leaving no table behind. */
    assert_int_equal(vat_csv_to_sqlite(&c, 7, db, "t1", NULL, 1, &e), -1);
    static const char *const evil[] = {"TEXT); DROP TABLE x; --", "TEXT"};
    assert_int_equal(vat_csv_to_sqlite(&c, 1, db, "t2", evil, 1, &e), -1);
    assert_non_null(strstr(e.msg, "bad column type"));
    static const char *const longer[] = {"a", "b", "c"};
    vat_csv_add_row(&c, longer, 3);
    assert_int_equal(vat_csv_to_sqlite(&c, 1, db, "t3", NULL, 1, &e), -1);
    assert_non_null(strstr(e.msg, "row 3 has 3 cells, header has 2"));
    c.row[3].n = 1; /* now one cell short */
    assert_int_equal(vat_csv_to_sqlite(&c, 1, db, "t4", NULL, 1, &e), -1);
    assert_non_null(strstr(e.msg, "row 3 has 1 cells, header has 2"));
    c.row[3].n = 3;
    assert_int_equal(query_long(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 't_'"), 0);

    /* Inside a caller's transaction the load still works. */
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    struct vat_csv ok = VAT_CSV_INIT;
    vat_csv_add_row(&ok, hdr, 2);
    vat_csv_add_row(&ok, row, 2);
    assert_int_equal(vat_csv_to_sqlite(&ok, 0, db, "in_tx", NULL, 0, &e), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(query_long(db, "SELECT count(*) FROM in_tx"), 1);

    sqlite3_close(db);
    vat_csv_release(&c);
    vat_csv_release(&ok);
}

/* The loader refills one table of one connection: each load holds exactly
 * the rows vat_csv_to_sqlite would put in a new database (rowids from 1),
 * a lent table cannot be changed, and a failed load starts afresh. */
static void test_loader(void **state)
{
    (void)state;
    struct vat_csv c = VAT_CSV_INIT, fewer = VAT_CSV_INIT, ragged = VAT_CSV_INIT;
    struct vat_err e = {{0}};
    build_orders(&c);
    static const char *const types[] = {"TEXT", "TEXT", "TEXT", "REAL"};
    struct vat_csv_loader l = {0};

    assert_int_equal(vat_csv_loader_load(&l, &c, 0, "orders", types, 1, &e), 0);
    assert_true(l.lent);
    sqlite3 *db = l.db;
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders"), 4);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE typeof(amount)='real'"), 3);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE status IS NULL"), 1);
    assert_int_equal(query_long(db, "SELECT count(*) FROM pragma_table_info('orders')"), 4);

    /* Lent, the connection reads and nothing more. */
    static const char *const writes[] = {
        "DELETE FROM orders",
        "INSERT INTO orders VALUES ('x', 'y', 'z', 1)",
        "UPDATE orders SET amount = 0",
        "CREATE TABLE other (a)",
        "CREATE TEMP TABLE other (a)",
        "DROP TABLE orders",
        "ALTER TABLE orders ADD COLUMN b",
        "ATTACH ':memory:' AS aux",
        "BEGIN",
        "PRAGMA writable_schema = ON",
        "PRAGMA query_only = ON",
        "UPDATE sqlite_master SET sql = ''",
    };
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
        assert_int_not_equal(sqlite3_exec(db, writes[i], NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders"), 4);
    assert_int_equal(query_long(db, "SELECT count(*) FROM sqlite_master"), 1);
    assert_int_equal(sqlite3_get_autocommit(db), 1);

    /* The same shape again: the same connection, the new rows only,
     * numbered from 1 as in a new table. */
    static const char *const hdr[] = {"order_id", "region", "status", "amount"};
    static const char *const one[] = {"ORD-9", "East", "", "3.5"};
    vat_csv_add_row(&fewer, hdr, 4);
    vat_csv_add_row(&fewer, one, 4);
    vat_csv_add_row(&fewer, one, 4);
    assert_int_equal(vat_csv_loader_load(&l, &fewer, 0, "orders", types, 1, &e), 0);
    assert_ptr_equal(l.db, db);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders"), 2);
    assert_int_equal(query_long(db, "SELECT min(rowid) * 10 + max(rowid) FROM orders"), 12);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE status IS NULL"), 2);

    /* Another shape (all TEXT, blanks kept): the old table is gone. */
    assert_int_equal(vat_csv_loader_load(&l, &c, 0, "orders", NULL, 0, &e), 0);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE typeof(amount)='text'"), 4);
    assert_int_equal(query_long(db, "SELECT count(*) FROM orders WHERE status = ''"), 1);
    assert_int_equal(vat_csv_loader_load(&l, &fewer, 0, "t2", types, 1, &e), 0);
    assert_int_equal(query_long(db, "SELECT count(*) FROM sqlite_master"), 1);
    assert_int_equal(query_long(db, "SELECT count(*) FROM t2"), 2);

    /* A ragged row fails the load and closes the loader; the next load
     * opens a new connection. */
    vat_csv_add_row(&ragged, hdr, 4);
    vat_csv_add_row(&ragged, hdr, 3);
    assert_int_equal(vat_csv_loader_load(&l, &ragged, 0, "t2", types, 1, &e), -1);
    assert_non_null(strstr(e.msg, "row 1 has 3 cells, header has 4"));
    assert_null(l.db);
    assert_false(l.lent);
    assert_int_equal(vat_csv_loader_load(&l, &c, 0, "orders", types, 1, &e), 0);
    assert_int_equal(query_long(l.db, "SELECT count(*) FROM orders"), 4);

    vat_csv_loader_close(&l);
    vat_csv_release(&c);
    vat_csv_release(&fewer);
    vat_csv_release(&ragged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_bytes),
        cmocka_unit_test_setup_teardown(test_write_read_round_trip, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_random_round_trip, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_read_foreign_files, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_read_errors, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_read_shared_within_draw, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_read_dense_fields, setup_dir, teardown_dir),
        cmocka_unit_test(test_get_and_col),
        cmocka_unit_test(test_to_sqlite),
        cmocka_unit_test(test_to_sqlite_identifiers_and_header_row),
        cmocka_unit_test(test_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
