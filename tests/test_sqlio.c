/* test_sqlio.c — the SQLite fixture writer (deterministic bytes, typed
 * inserts, the in-memory image equal to a file's, commit by rename, abort,
 * poisoning) and the read-only opener
 * (generators/sqlio.c). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "filememo.h"
#include "sqlio.h"
#include "testutil.h"

static const char schema[] =
    "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer_id INTEGER NOT NULL,"
    " status TEXT, amount REAL, issued_on TEXT);"
    "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT);";

static const char ins_invoice[] = "INSERT INTO invoices VALUES (?, ?, ?, ?, ?)";
static const char ins_customer[] = "INSERT INTO customers VALUES (?, ?)";

static int setup_dir(void **state)
{
    *state = vat_test_tmpdir("sqlio");
    return 0;
}

static int teardown_dir(void **state)
{
    vat_test_rmtree(*state);
    free(*state);
    return 0;
}

static int exists(const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return access(path, F_OK) == 0;
}

/* Writes a small invoices fixture; `extra` adds one more row so that the
 * determinism test can also see different content give different bytes. */
static void write_fixture(const char *root, const char *rel, int extra)
{
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, root, rel, schema, &e), 0);
    for (int i = 0; i < 300; i++) {
        char id[16], day[16];
        snprintf(id, sizeof id, "INV-%05d", i);
        snprintf(day, sizeof day, "2024-%02d-%02d", 1 + i % 12, 1 + i % 28);
        assert_int_equal(vat_sqlw_insert(&w, ins_invoice, "tidtt", id, (int64_t)(i % 17),
                                         i % 3 ? "paid" : "pending", 10.25 * i, day),
                         0);
    }
    for (int i = 0; i < 17 + extra; i++) {
        char name[32];
        snprintf(name, sizeof name, "Customer %d", i);
        assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)i, name), 0);
    }
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    assert_null(w.db);
    assert_null(w.final_path);
    assert_null(w.root);
}

/* The writer builds the database in memory and writes it once: its bytes
 * must be exactly those of the same inserts made through a database file
 * with the same settings (header pinned the same way), so fixtures keep
 * the bytes they had when they were written through a file. */
static void test_memory_image_equals_file(void **state)
{
    const char *root = *state;
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, root, "mem.sqlite", schema, &e), 0);
    for (int i = 0; i < 300; i++) {
        char id[16], day[16];
        snprintf(id, sizeof id, "INV-%05d", i);
        snprintf(day, sizeof day, "2024-%02d-%02d", 1 + i % 12, 1 + i % 28);
        assert_int_equal(vat_sqlw_insert(&w, ins_invoice, "titdt", id, (int64_t)(i % 17),
                                         i % 3 ? "paid" : "pending", 10.25 * i, day),
                         0);
    }
    for (int i = 0; i < 17; i++) {
        char name[32];
        snprintf(name, sizeof name, "Customer %d", i);
        assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)i, name), 0);
    }
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/file.sqlite", root);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "PRAGMA page_size=4096; PRAGMA auto_vacuum=NONE;"
                                  "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                                  "PRAGMA encoding='UTF-8';",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *inv, *cus;
    assert_int_equal(sqlite3_prepare_v2(db, ins_invoice, -1, &inv, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, ins_customer, -1, &cus, NULL), SQLITE_OK);
    for (int i = 0; i < 300; i++) {
        char id[16], day[16];
        snprintf(id, sizeof id, "INV-%05d", i);
        snprintf(day, sizeof day, "2024-%02d-%02d", 1 + i % 12, 1 + i % 28);
        sqlite3_bind_text(inv, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(inv, 2, i % 17);
        sqlite3_bind_text(inv, 3, i % 3 ? "paid" : "pending", -1, SQLITE_STATIC);
        sqlite3_bind_double(inv, 4, 10.25 * i);
        sqlite3_bind_text(inv, 5, day, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(inv), SQLITE_DONE);
        sqlite3_reset(inv);
    }
    for (int i = 0; i < 17; i++) {
        char name[32];
        snprintf(name, sizeof name, "Customer %d", i);
        sqlite3_bind_int64(cus, 1, i);
        sqlite3_bind_text(cus, 2, name, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(cus), SQLITE_DONE);
        sqlite3_reset(cus);
    }
    sqlite3_finalize(inv);
    sqlite3_finalize(cus);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    assert_int_equal(vat_sqlite_pin_header(path, &e), 0);

    char mem[512];
    snprintf(mem, sizeof mem, "%s/mem.sqlite", root);
    size_t nf, nm;
    char *bf = vat_test_read_file(path, &nf), *bm = vat_test_read_file(mem, &nm);
    assert_non_null(bf);
    assert_non_null(bm);
    assert_int_equal(nf, nm);
    assert_memory_equal(bf, bm, nf);
    free(bf);
    free(bm);
}

/* A thread's first writer of a schema runs its CREATE statements; later
 * ones copy the empty database kept from it: a fresh thread's bytes are
 * the bytes of the copies. */
static void *write_in_fresh_thread(void *root)
{
    write_fixture(root, "fixtures/d/fresh.sqlite", 0);
    return NULL;
}

static void test_deterministic_bytes(void **state)
{
    const char *root = *state;
    write_fixture(root, "fixtures/a/one.sqlite", 0);
    write_fixture(root, "fixtures/b/two.sqlite", 0);
    write_fixture(root, "fixtures/c/three.sqlite", 1);
    char p1[512], p2[512], p3[512];
    snprintf(p1, sizeof p1, "%s/fixtures/a/one.sqlite", root);
    snprintf(p2, sizeof p2, "%s/fixtures/b/two.sqlite", root);
    snprintf(p3, sizeof p3, "%s/fixtures/c/three.sqlite", root);
    size_t n1, n2, n3;
    char *b1 = vat_test_read_file(p1, &n1), *b2 = vat_test_read_file(p2, &n2),
         *b3 = vat_test_read_file(p3, &n3);
    assert_non_null(b1);
    assert_non_null(b2);
    assert_non_null(b3);
    assert_true(n1 >= 4096 && n1 % 4096 == 0); /* the pinned page size */
    assert_memory_equal(b1, "SQLite format 3", 16);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    assert_true(n1 != n3 || memcmp(b1, b3, n1) != 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_in_fresh_thread, (void *)root), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    char p4[512];
    snprintf(p4, sizeof p4, "%s/fixtures/d/fresh.sqlite", root);
    size_t n4;
    char *b4 = vat_test_read_file(p4, &n4);
    assert_non_null(b4);
    assert_int_equal(n4, n1);
    assert_memory_equal(b4, b1, n1);
    free(b4);
    free(b1);
    free(b2);
    free(b3);
    assert_false(exists(root, "fixtures/a/one.sqlite.tmp"));
    assert_false(exists(root, "fixtures/a/one.sqlite.tmp-journal"));
}

static void test_insert_types_read_back(void **state)
{
    const char *root = *state;
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(
        vat_sqlw_open(&w, root, "typed.sqlite", "CREATE TABLE t (k INTEGER, a, b, c, d);", &e), 0);
    const char *sql = "INSERT INTO t VALUES (?, ?, ?, ?, ?)";
    assert_int_equal(vat_sqlw_insert(&w, sql, "itidn", (int64_t)1, "text", INT64_MIN, -0.5), 0);
    assert_int_equal(
        vat_sqlw_insert(&w, sql, "itidn", (int64_t)2, (const char *)NULL, INT64_MAX, 1e300), 0);
    assert_int_equal(vat_sqlw_insert(&w, sql, "ittnn", (int64_t)3, "", "it's \"quoted\""), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);

    sqlite3 *db;
    assert_int_equal(vat_sqlite_open_ro(root, "typed.sqlite", &db, &e), 0);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT typeof(a), a, typeof(b), b, typeof(c), c, typeof(d)"
                                        " FROM t ORDER BY k",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal(sqlite3_column_text(st, 0), "text");
    assert_string_equal(sqlite3_column_text(st, 1), "text");
    assert_string_equal(sqlite3_column_text(st, 2), "integer");
    assert_true(sqlite3_column_int64(st, 3) == INT64_MIN);
    assert_string_equal(sqlite3_column_text(st, 4), "real");
    assert_true(sqlite3_column_double(st, 5) == -0.5);
    assert_string_equal(sqlite3_column_text(st, 6), "null");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal(sqlite3_column_text(st, 0), "null");
    assert_true(sqlite3_column_int64(st, 3) == INT64_MAX);
    assert_true(sqlite3_column_double(st, 5) == 1e300);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal(sqlite3_column_text(st, 0), "text");
    assert_string_equal(sqlite3_column_text(st, 1), "");
    assert_string_equal(sqlite3_column_text(st, 3), "it's \"quoted\"");
    assert_string_equal(sqlite3_column_text(st, 4), "null");
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);

    /* Read-only really is read-only. */
    assert_int_equal(vat_sqlite_exec(db, "INSERT INTO t VALUES (9, 1, 2, 3, 4)", &e), -1);
    assert_non_null(strstr(e.msg, "cannot run 'INSERT INTO t"));
    assert_non_null(strstr(e.msg, "readonly"));
    assert_int_equal(vat_sqlite_exec(db, "SELECT 1", &e), 0);
    sqlite3_close(db);
}

static void test_statement_cache(void **state)
{
    const char *root = *state;
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, root, "cache.sqlite", schema, &e), 0);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)i, "x"), 0);
        assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO customers VALUES (?, 'y')  ", "i",
                                         (int64_t)(1000 + i)),
                         0);
    }
    /* Two distinct texts, two prepared statements, however many rows. */
    int n = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(w.db, NULL); st; st = sqlite3_next_stmt(w.db, st))
        n++;
    assert_int_equal(n, 2);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);

    sqlite3 *db;
    assert_int_equal(vat_sqlite_open_ro(root, "cache.sqlite", &db, &e), 0);
    sqlite3_stmt *st;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*), sum(name = 'y') FROM customers", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 100);
    assert_int_equal(sqlite3_column_int(st, 1), 50);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_commit_replaces_and_cleans_stale_tmp(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    write_fixture(root, "fixtures/x/db.sqlite", 0);

    /* A stale temporary (here: garbage) must not be reused. */
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/fixtures/x/db.sqlite.tmp", root);
    FILE *f = fopen(tmp, "wb");
    assert_non_null(f);
    fputs("not a database at all", f);
    fclose(f);

    struct vat_sqlw w;
    assert_int_equal(
        vat_sqlw_open(&w, root, "fixtures/x/db.sqlite", "CREATE TABLE only_t (v);", &e), 0);
    assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO only_t VALUES (?)", "i", (int64_t)7), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    assert_false(exists(root, "fixtures/x/db.sqlite.tmp"));

    sqlite3 *db;
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/x/db.sqlite", &db, &e), 0);
    sqlite3_stmt *st;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT group_concat(name) FROM sqlite_master", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal(sqlite3_column_text(st, 0), "only_t");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static int count_rows(sqlite3 *db, const char *table)
{
    char *q = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", table);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    sqlite3_free(q);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* During a task's draw a read-only connection is kept for the next reader
 * of the same file, and retired when the file is rewritten, even while
 * lent out. */
static void test_ro_connection_kept_per_draw(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    const char *rel = "fixtures/k/db.sqlite";
    struct vat_sqlw w;
    assert_int_equal(vat_sqlw_open(&w, root, rel, "CREATE TABLE t (v);", &e), 0);
    assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?)", "i", (int64_t)1), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);

    vat_file_memo_begin();
    sqlite3 *a, *b;
    assert_int_equal(vat_sqlite_open_ro(root, rel, &a, &e), 0);
    assert_int_equal(count_rows(a, "t"), 1);
    vat_sqlite_close_ro(a);
    assert_int_equal(vat_sqlite_open_ro(root, rel, &b, &e), 0);
    assert_ptr_equal(a, b); /* kept, not reopened */
    /* two readers at once get two connections */
    sqlite3 *c;
    assert_int_equal(vat_sqlite_open_ro(root, rel, &c, &e), 0);
    assert_ptr_not_equal(b, c);
    vat_sqlite_close_ro(c);
    /* rewritten while b is out: b is retired on close, the next reader
     * sees the new file */
    assert_int_equal(vat_sqlw_open(&w, root, rel, "CREATE TABLE t (v);", &e), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?)", "i", (int64_t)i), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    assert_int_equal(count_rows(b, "t"), 1);
    vat_sqlite_close_ro(b);
    sqlite3 *d;
    assert_int_equal(vat_sqlite_open_ro(root, rel, &d, &e), 0);
    assert_int_equal(count_rows(d, "t"), 3);
    vat_sqlite_close_ro(d);
    vat_file_memo_end();
    /* outside a draw every open reads the disk */
    assert_int_equal(vat_sqlite_open_ro(root, rel, &a, &e), 0);
    assert_int_equal(count_rows(a, "t"), 3);
    vat_sqlite_close_ro(a);
}

/* During a draw the writer's connection becomes the file's kept reader
 * (after the file read back equals the bytes written): the first reader
 * gets it, read-only, with the file's rows; outside a draw it is closed. */
static void test_writer_becomes_reader(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    const char *rel = "fixtures/k/w.sqlite";
    struct vat_sqlw w;
    vat_file_memo_begin();
    assert_int_equal(vat_sqlw_open(&w, root, rel, "CREATE TABLE t (v);", &e), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?)", "i", (int64_t)i), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    assert_null(w.db);
    sqlite3 *a;
    assert_int_equal(vat_sqlite_open_ro(root, rel, &a, &e), 0);
    assert_non_null(strstr(sqlite3_db_filename(a, "main"), "vat-sqlw"));
    assert_int_equal(count_rows(a, "t"), 5);
    assert_int_not_equal(sqlite3_exec(a, "INSERT INTO t VALUES (9)", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_equal(count_rows(a, "t"), 5);
    vat_sqlite_close_ro(a);
    vat_file_memo_end();
    /* the file holds what the reader saw */
    assert_int_equal(vat_sqlite_open_ro(root, rel, &a, &e), 0);
    assert_null(strstr(sqlite3_db_filename(a, "main"), "vat-sqlw"));
    assert_int_equal(count_rows(a, "t"), 5);
    vat_sqlite_close_ro(a);
    /* no draw: the writer is closed at commit, nothing kept */
    assert_int_equal(vat_sqlw_open(&w, root, rel, "CREATE TABLE t (v);", &e), 0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    vat_file_memo_begin();
    assert_int_equal(vat_sqlite_open_ro(root, rel, &a, &e), 0);
    assert_null(strstr(sqlite3_db_filename(a, "main"), "vat-sqlw"));
    assert_int_equal(count_rows(a, "t"), 0);
    vat_sqlite_close_ro(a);
    vat_file_memo_end();
}

/* Writes root/rel with n rows of t(k, v) in one draw's writer: k from 0,
 * v = k * mult. */
static void write_kv(const char *root, const char *rel, const char *schema_sql, int n, int mult)
{
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, root, rel, schema_sql, &e), 0);
    for (int i = 0; i < n; i++)
        assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?, ?)", "ii", (int64_t)i,
                                         (int64_t)i * mult),
                         0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
}

/* The rows of t in root/rel as one checksum: count, sum of k, sum of v
 * (read through vat_sqlite_open_ro, which during a draw serves the kept
 * image). */
static void read_kv(const char *root, const char *rel, int64_t out[3], bool *shared)
{
    sqlite3 *db;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlite_open_ro(root, rel, &db, &e), 0);
    if (shared)
        *shared = strstr(sqlite3_db_filename(db, "main"), "vat-sqlw") != NULL;
    sqlite3_stmt *st;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT count(*), total(k), total(v) FROM t", -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    for (int i = 0; i < 3; i++)
        out[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    vat_sqlite_close_ro(db);
}

static char *file_bytes(const char *root, const char *rel, size_t *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *b = vat_test_read_file(path, n);
    assert_non_null(b);
    return b;
}

/* During a draw a thread's databases of one schema are written and read
 * through one connection (the "vat-sqlw" VFS serving one image at a time):
 * the files have the bytes the writer gives outside a draw (each through a
 * connection of its own), every reader sees its own file's rows whatever
 * the order of reads and writes, a second user while the connection is
 * held gets a connection of its own, a file rewritten behind it is read
 * anew, another schema starts another connection, and a failed insert
 * drops it without harm to the next writer. */
static void test_shared_connection(void **state)
{
    const char *root = *state;
    static const char kv[] = "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER);";
    static const char kv2[] = "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER, w TEXT);";
    /* rows and multipliers of five files: sizes cross page boundaries */
    static const int rows[5] = {3, 700, 40, 1500, 1};
    static const int mult[5] = {1, 3, 5, 7, 11};
    char rel[5][64], ref[5][64];
    size_t ref_n[5];
    char *ref_b[5];
    for (int i = 0; i < 5; i++) {
        snprintf(rel[i], sizeof rel[i], "fixtures/s/db%d.sqlite", i);
        snprintf(ref[i], sizeof ref[i], "ref/s/db%d.sqlite", i);
        write_kv(root, ref[i], kv, rows[i], mult[i]); /* no draw: memdb, one connection each */
        ref_b[i] = file_bytes(root, ref[i], &ref_n[i]);
    }
    int64_t got[3];
    bool shared;
    vat_file_memo_begin();
    /* writes and reads interleaved, reads in every order */
    write_kv(root, rel[0], kv, rows[0], mult[0]);
    write_kv(root, rel[1], kv, rows[1], mult[1]);
    read_kv(root, rel[0], got, &shared);
    assert_true(shared);
    assert_int_equal(got[0], 3);
    assert_int_equal(got[2], 3);
    write_kv(root, rel[2], kv, rows[2], mult[2]);
    static const int order[] = {1, 2, 0, 2, 1, 1, 0};
    for (size_t j = 0; j < sizeof order / sizeof order[0]; j++) {
        int i = order[j];
        read_kv(root, rel[i], got, &shared);
        assert_true(shared);
        int64_t n = rows[i], sk = n * (n - 1) / 2;
        assert_int_equal(got[0], n);
        assert_int_equal(got[1], sk);
        assert_int_equal(got[2], sk * mult[i]);
    }
    /* a reader holding the connection: a writer meanwhile gets its own,
     * and so does a second reader */
    sqlite3 *held;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlite_open_ro(root, rel[1], &held, &e), 0);
    assert_non_null(strstr(sqlite3_db_filename(held, "main"), "vat-sqlw"));
    write_kv(root, rel[3], kv, rows[3], mult[3]);
    read_kv(root, rel[2], got, &shared);
    assert_false(shared);
    assert_int_equal(got[0], rows[2]);
    assert_int_equal(count_rows(held, "t"), rows[1]);
    /* the served image is read-only */
    assert_int_not_equal(sqlite3_exec(held, "INSERT INTO t VALUES (100000, 1)", NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_equal(count_rows(held, "t"), rows[1]);
    vat_sqlite_close_ro(held);
    read_kv(root, rel[3], got, NULL);
    assert_int_equal(got[0], rows[3]);
    /* a file rewritten behind the connection is read from disk */
    assert_int_equal(
        vat_write_file_atomic(root, rel[0], ref_b[4], ref_n[4], &e), 0);
    read_kv(root, rel[0], got, &shared);
    assert_false(shared);
    assert_int_equal(got[0], rows[4]);
    assert_int_equal(got[2], 0);
    /* a failed insert drops the connection; the next writer is whole */
    struct vat_sqlw w;
    assert_int_equal(vat_sqlw_open(&w, root, "fixtures/s/bad.sqlite", kv, &e), 0);
    assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?, ?)", "ii", (int64_t)1,
                                     (int64_t)1),
                     0);
    assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?, ?)", "ii", (int64_t)1,
                                     (int64_t)1),
                     -1);
    assert_int_equal(vat_sqlw_commit(&w, &e), -1);
    assert_false(exists(root, "fixtures/s/bad.sqlite"));
    write_kv(root, rel[4], kv, rows[4], mult[4]);
    read_kv(root, rel[4], got, &shared);
    assert_true(shared);
    assert_int_equal(got[0], rows[4]);
    /* another schema: another connection; the first schema's files are
     * read from disk */
    assert_int_equal(vat_sqlw_open(&w, root, "fixtures/s/other.sqlite", kv2, &e), 0);
    assert_int_equal(vat_sqlw_insert(&w, "INSERT INTO t VALUES (?, ?, ?)", "iit", (int64_t)1,
                                     (int64_t)2, "x"),
                     0);
    assert_int_equal(vat_sqlw_commit(&w, &e), 0);
    read_kv(root, rel[1], got, &shared);
    assert_false(shared);
    assert_int_equal(got[0], rows[1]);
    read_kv(root, "fixtures/s/other.sqlite", got, &shared);
    assert_true(shared);
    assert_int_equal(got[0], 1);
    vat_file_memo_end();
    /* after the draw nothing is served from memory */
    read_kv(root, rel[2], got, &shared);
    assert_false(shared);
    /* every file written in the draw has the bytes of the same inserts
     * written outside one */
    for (int i = 1; i < 5; i++) {
        size_t n;
        char *b = file_bytes(root, rel[i], &n);
        if (n != ref_n[i] || memcmp(b, ref_b[i], n) != 0)
            fail_msg("%s differs from the same inserts written outside a draw", rel[i]);
        free(b);
    }
    for (int i = 0; i < 5; i++)
        free(ref_b[i]);
}

/* count(*) of t in db through vat_sqlite_prepare_ro: all rows when below
 * is -1, else those with k < ?1, bound to below when below >= 0 (left
 * unbound, so NULL and no row, when -2); the statement used in *used. */
static int64_t count_kept(sqlite3 *db, int64_t below, sqlite3_stmt **used)
{
    sqlite3_stmt *st = NULL;
    const char *sql = below != -1 ? "SELECT count(*) FROM t WHERE k < ?1" : "SELECT count(*) FROM t";
    assert_int_equal(vat_sqlite_prepare_ro(db, sql, &st), SQLITE_OK);
    if (below >= 0)
        assert_int_equal(sqlite3_bind_int64(st, 1, below), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    *used = st;
    vat_sqlite_stmt_done(st);
    return n;
}

/* A reading statement on the thread's shared connection is compiled once
 * and serves every image of the schema (each reader gets its own rows,
 * also after a writer came between); its bindings go with its use; on any
 * other connection it is finalized, so the connection closes clean. */
static void test_kept_statements(void **state)
{
    const char *root = *state;
    static const char kv[] = "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER);";
    struct vat_err e = {{0}};
    sqlite3 *db, *other;
    sqlite3_stmt *a, *b;
    vat_file_memo_begin();
    write_kv(root, "fixtures/k/a.sqlite", kv, 3, 1);
    write_kv(root, "fixtures/k/b.sqlite", kv, 700, 1);
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/k/a.sqlite", &db, &e), 0);
    assert_non_null(strstr(sqlite3_db_filename(db, "main"), "vat-sqlw"));
    assert_int_equal(count_kept(db, -1, &a), 3);
    assert_int_equal(count_kept(db, 2, &b), 2);
    sqlite3_stmt *b1;
    assert_int_equal(count_kept(db, -2, &b1), 0); /* the last use's binding is gone */
    assert_ptr_equal(b1, b);
    vat_sqlite_close_ro(db);
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/k/b.sqlite", &db, &e), 0);
    sqlite3_stmt *a2, *b2;
    assert_int_equal(count_kept(db, -1, &a2), 700);
    assert_ptr_equal(a2, a);
    assert_int_equal(count_kept(db, 500, &b2), 500);
    assert_ptr_equal(b2, b);
    /* kept, reset: not running */
    assert_false(sqlite3_stmt_busy(a));
    vat_sqlite_close_ro(db);
    /* a writer between: the kept statements still read the right image */
    write_kv(root, "fixtures/k/c.sqlite", kv, 40, 1);
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/k/a.sqlite", &db, &e), 0);
    assert_int_equal(count_kept(db, -1, &a2), 3);
    assert_ptr_equal(a2, a);
    /* another reader meanwhile has a connection of its own: finalized */
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/k/c.sqlite", &other, &e), 0);
    assert_null(strstr(sqlite3_db_filename(other, "main"), "vat-sqlw"));
    assert_int_equal(count_kept(other, -1, &b2), 40);
    assert_null(sqlite3_next_stmt(other, NULL));
    vat_sqlite_close_ro(other);
    vat_sqlite_close_ro(db);
    vat_file_memo_end();
    /* outside a draw: finalized */
    assert_int_equal(vat_sqlite_open_ro(root, "fixtures/k/b.sqlite", &db, &e), 0);
    assert_int_equal(count_kept(db, 10, &b2), 10);
    assert_null(sqlite3_next_stmt(db, NULL));
    vat_sqlite_close_ro(db);
}

static void test_abort_leaves_nothing(void **state)
{
    const char *root = *state;
    struct vat_sqlw w;
    struct vat_err e = {{0}};
    assert_int_equal(vat_sqlw_open(&w, root, "gone/db.sqlite", schema, &e), 0);
    assert_false(exists(root, "gone/db.sqlite.tmp")); /* nothing is written before commit */
    assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)1, "a"), 0);
    vat_sqlw_abort(&w);
    assert_false(exists(root, "gone/db.sqlite.tmp"));
    assert_false(exists(root, "gone/db.sqlite"));
    assert_null(w.db);
    assert_null(w.final_path);
    vat_sqlw_abort(&w); /* twice is harmless */
}

static void test_failed_insert_poisons_writer(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    static const struct {
        const char *sql, *types;
        const char *why;
    } bad[] = {
        {"INSERT INTO customers VALUES (?, ?)", "i", "parameters"},
        {"INSERT INTO customers VALUES (?, ?)", "iq", "bad type letter"},
        {"INSERT INTO nowhere VALUES (?)", "i", "no such table"},
        {"INSERT INTO customers VALUES (1, 'a'); DELETE FROM customers", "", "one statement"},
        {"INSERT INTO customers VALUES (?, ?)", "it", "UNIQUE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vat_sqlw w;
        assert_int_equal(vat_sqlw_open(&w, root, "p/db.sqlite", schema, &e), 0);
        assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)1, "first"), 0);
        assert_int_equal(vat_sqlw_insert(&w, bad[i].sql, bad[i].types, (int64_t)1, "dup"), -1);
        assert_false(exists(root, "p/db.sqlite.tmp"));
        /* Later inserts fail too, and commit reports the first error. */
        assert_int_equal(vat_sqlw_insert(&w, ins_customer, "it", (int64_t)2, "second"), -1);
        assert_int_equal(vat_sqlw_commit(&w, &e), -1);
        if (!strstr(e.msg, bad[i].why))
            fail_msg("case %zu: '%s' does not say '%s'", i, e.msg, bad[i].why);
        assert_false(exists(root, "p/db.sqlite"));
        assert_null(w.final_path);
    }
}

static void test_open_errors(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    struct vat_sqlw w;
    assert_int_equal(vat_sqlw_open(&w, root, "../out.sqlite", schema, &e), -1);
    assert_non_null(strstr(e.msg, "unsafe path '../out.sqlite'"));
    assert_int_equal(vat_sqlw_open(&w, root, "bad.sqlite", "CREATE TABLE (", &e), -1);
    assert_non_null(strstr(e.msg, "cannot create 'bad.sqlite'"));
    assert_false(exists(root, "bad.sqlite.tmp"));
    assert_null(w.db);
    assert_int_equal(vat_sqlw_commit(&w, &e), -1);

    sqlite3 *db = (sqlite3 *)&w; /* must be reset to NULL on failure */
    static const char *const unsafe[] = {"../x.sqlite", "/etc/passwd", "a/./b.sqlite", "", "a\\b"};
    for (size_t i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++) {
        assert_int_equal(vat_sqlite_open_ro(root, unsafe[i], &db, &e), -1);
        assert_non_null(strstr(e.msg, "unsafe path"));
        assert_null(db);
    }
    assert_int_equal(vat_sqlite_open_ro(root, "missing.sqlite", &db, &e), -1);
    assert_non_null(strstr(e.msg, "cannot open 'missing.sqlite'"));
    assert_null(db);
    assert_false(exists(root, "missing.sqlite")); /* never created */

    char path[512];
    snprintf(path, sizeof path, "%s/junk.sqlite", root);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < 200; i++)
        fputs("this is not a database file. ", f);
    fclose(f);
    assert_int_equal(vat_sqlite_open_ro(root, "junk.sqlite", &db, &e), -1);
    assert_non_null(strstr(e.msg, "not a database"));
    assert_null(db);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The fixture still opens, passes SQLite's own integrity check and holds
 * its 300 invoices. */
static void assert_sound(const char *root, const char *rel)
{
    struct vat_err e = {{0}};
    sqlite3 *db = NULL;
    assert_int_equal(vat_sqlite_open_ro(root, rel, &db, &e), 0);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM invoices", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 300);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* A committed fixture's header names VAT_SQLITE_HEADER_VERSION as its
 * writer, whatever library wrote it, with version-valid-for equal to the
 * change counter, and the file is still a sound database. */
static void test_header_pinned(void **state)
{
    const char *root = *state;
    write_fixture(root, "fixtures/h/pinned.sqlite", 0);
    char path[512];
    snprintf(path, sizeof path, "%s/fixtures/h/pinned.sqlite", root);
    size_t n = 0;
    unsigned char *b = (unsigned char *)vat_test_read_file(path, &n);
    assert_non_null(b);
    assert_true(n >= 100);
    assert_int_equal(be32(b + 96), VAT_SQLITE_HEADER_VERSION);
    assert_int_equal(be32(b + 92), be32(b + 24));
    assert_true(be32(b + 24) > 0);
    free(b);
    assert_sound(root, "fixtures/h/pinned.sqlite");
}

/* vat_sqlite_pin_header rewrites the fields a newer library would leave
 * (another version number, a stale version-valid-for), touches no other
 * byte, and refuses a file that is not a database. */
static void test_pin_header_rewrites(void **state)
{
    const char *root = *state;
    struct vat_err e = {{0}};
    write_fixture(root, "fixtures/h/other.sqlite", 0);
    char path[512];
    snprintf(path, sizeof path, "%s/fixtures/h/other.sqlite", root);
    size_t n = 0, m = 0;
    unsigned char *pinned = (unsigned char *)vat_test_read_file(path, &n);
    assert_non_null(pinned);

    /* as SQLite 3.46.0 would have written it, six commits later */
    static const unsigned char other[8] = {0, 0, 0, 8, 0, 0x2e, 0x7a, 0x70};
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 92, SEEK_SET), 0);
    assert_int_equal(fwrite(other, 1, sizeof other, f), sizeof other);
    assert_int_equal(fclose(f), 0);
    unsigned char *b = (unsigned char *)vat_test_read_file(path, &m);
    assert_int_equal(be32(b + 96), 3046000);
    assert_true(memcmp(b, pinned, n) != 0);
    free(b);

    assert_int_equal(vat_sqlite_pin_header(path, &e), 0);
    b = (unsigned char *)vat_test_read_file(path, &m);
    assert_int_equal(m, n);
    assert_memory_equal(b, pinned, n); /* the same bytes as the first commit */
    free(b);
    free(pinned);
    assert_sound(root, "fixtures/h/other.sqlite");

    char junk[512];
    snprintf(junk, sizeof junk, "%s/junk.bin", root);
    f = fopen(junk, "wb");
    assert_non_null(f);
    for (int i = 0; i < 20; i++)
        fputs("not a database, ", f);
    fclose(f);
    assert_int_equal(vat_sqlite_pin_header(junk, &e), -1);
    assert_non_null(strstr(e.msg, "no SQLite database header"));
    snprintf(junk, sizeof junk, "%s/missing.sqlite", root);
    assert_int_equal(vat_sqlite_pin_header(junk, &e), -1);
    assert_non_null(strstr(e.msg, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deterministic_bytes, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_memory_image_equals_file, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_insert_types_read_back, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_statement_cache, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_commit_replaces_and_cleans_stale_tmp, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_shared_connection, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_writer_becomes_reader, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_kept_statements, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_ro_connection_kept_per_draw, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_failed_insert_poisons_writer, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_open_errors, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_header_pinned, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_pin_header_rewrites, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
