/* sqlio.c — SQLite fixture writer and small query helpers (see sqlio.h).
 * Exports vat_sqlw_open, vat_sqlw_insert, vat_sqlw_commit, vat_sqlw_abort,
 * vat_sqlite_pin_header(_mem), vat_sqlite_open_ro and vat_sqlite_exec.
 *
 * A fixture's bytes must depend only on what was inserted: the page size,
 * encoding and auto-vacuum mode are pinned (a library built with other
 * defaults writes the same file), there is no journal, the database is
 * built in memory and written once at commit (so a failure leaves no
 * file), the header's writer-version fields are pinned before it is
 * written, and nothing else varies between runs, so the same inserts give
 * a byte-identical file and a stable sha256.
 *
 * Prepared statements are cached in the connection itself: SQLite keeps a
 * list of a connection's statements (sqlite3_next_stmt) with their text
 * (sqlite3_sql), which is all a per-sql-text cache needs.  During a draw
 * the connection is shared by a thread's databases of one schema (see "a
 * draw's databases under one connection" below), so they stay prepared
 * from one fixture to the next.
 *
 * vat_sqlw_insert has no error out-parameter, so a failed insert poisons
 * the writer: the database is dropped at once and the message is
 * kept (per thread) for vat_sqlw_commit to report.  A fixture with a
 * silently missing row can then never be committed. */
#include "sqlio.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlfile.h"

static _Thread_local char insert_error[512];

static void finalize_all(sqlite3 *db)
{
    sqlite3_stmt *st;
    while ((st = sqlite3_next_stmt(db, NULL)) != NULL)
        sqlite3_finalize(st);
}

static void sqlw_share_drop(void);

/* Closes the connection (its memory goes with it); keeps the paths.  A
 * shared one is dropped with its images: a failed write leaves its state
 * unknown. */
static void drop_db(struct vat_sqlw *w)
{
    if (w->share) {
        sqlw_share_drop();
        w->share = NULL;
        w->db = NULL;
    }
    if (w->db) {
        finalize_all(w->db);
        sqlite3_close(w->db);
        w->db = NULL;
    }
}

static void free_paths(struct vat_sqlw *w)
{
    free(w->final_path);
    free(w->root);
    free(w->rel);
    w->final_path = w->root = w->rel = NULL;
}

/* ---- a draw's databases under one connection ------------------------------- *
 * SQLite reads a database's schema again on every new connection (and
 * after every sqlite3_deserialize), and a task writes several databases
 * with one schema (the main fixture and its variants), each then read
 * back for its description, the prompt and the confirmation.  So during
 * a draw (the file memo on) a thread keeps one connection per schema
 * whose main database is a file of the "vat-sqlw" VFS below: a list of
 * images in memory and the one it serves now.  A writer gets the
 * connection with a fresh copy of the schema's empty database under it
 * (its statements stay prepared from the last fixture); at commit the
 * finished image is written to disk, and once the file read back holds
 * exactly those bytes it is kept as an image of its own, which
 * vat_sqlite_open_ro serves to the task's readers of that file.
 *
 * SQLite notices the move from one image to another as it notices a file
 * another process changed: the connection keeps normal locking, so the
 * pager reads the header's change counter (and page count and freelist,
 * bytes 24-39) each time a transaction starts and drops its page cache
 * when they differ.  A writer's image starts as the empty database
 * (counter c) and ends committed (c + 1); a reader's image is served with
 * a counter of its own (bytes 24-27 and 92-95, the latter so the header's
 * page count stays valid) from a sequence that starts above any a writer
 * reaches, new at every switch.  Every image holds the same schema (the
 * connection is tied to its schema text), so the schema SQLite parsed and
 * the statements it compiled stay right.  A reader's image is read-only
 * (the VFS refuses writes to it, and query_only is on).  The connection
 * serves one user at a time; a second writer or reader while it is held
 * gets a connection of its own, as outside a draw. */

struct sqlw_image {
    unsigned char *data;
    size_t n, cap;
    char *root, *rel;     /* a reader's image: the file it holds */
    unsigned long serial; /* ... as the memo read it */
};

#define SQLW_READERS 16
struct sqlw_share {
    sqlite3 *db;
    char *schema;                  /* the schema text of every image */
    unsigned char *empty;          /* the schema's empty database */
    size_t empty_n;
    struct sqlw_image writer;      /* the image a writer fills */
    struct sqlw_image reader[SQLW_READERS];
    struct sqlw_image *cur;        /* the image served */
    uint32_t counter;              /* a reader's served change counter */
    bool held, query_only;
};

struct sqlw_file {
    sqlite3_file base;
    struct sqlw_share *sh;
};

/* The share the next main-database open of the VFS serves. */
static _Thread_local struct sqlw_share *sqlw_opening;
/* This thread's share, or NULL. */
static _Thread_local struct sqlw_share *sqlw_kept;

#define SQLW_VFS_NAME "vat-sqlw"
#define SQLW_READER_COUNTER 0x80000000u

static sqlite3_vfs sqlw_vfs;
static sqlite3_vfs *sqlw_base;
static int sqlw_vfs_rc = SQLITE_ERROR;
static pthread_once_t sqlw_vfs_once = PTHREAD_ONCE_INIT;

/* Whether the served image is a reader's (counters patched, read-only). */
static bool sqlw_reading(const struct sqlw_share *sh)
{
    return sh->cur != &sh->writer;
}

static int sqlw_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
    const struct sqlw_share *sh = ((struct sqlw_file *)f)->sh;
    const struct sqlw_image *im = sh->cur;
    int rc = vat_sqlfile_read(im->data, im->n, buf, amt, off);
    if (sqlw_reading(sh)) {
        const unsigned char ctr[4] = {(unsigned char)(sh->counter >> 24),
                                      (unsigned char)(sh->counter >> 16),
                                      (unsigned char)(sh->counter >> 8),
                                      (unsigned char)sh->counter};
        static const size_t at[2] = {24, 92};
        for (int k = 0; k < 2; k++)
            for (size_t j = 0; j < 4; j++) {
                sqlite3_int64 pos = (sqlite3_int64)(at[k] + j);
                if (pos >= off && pos < off + amt && (size_t)pos < im->n)
                    ((unsigned char *)buf)[pos - off] = ctr[j];
            }
    }
    return rc;
}

static int sqlw_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
    struct sqlw_share *sh = ((struct sqlw_file *)f)->sh;
    if (sqlw_reading(sh) || off < 0 || amt < 0)
        return SQLITE_READONLY;
    struct sqlw_image *im = sh->cur;
    size_t end = (size_t)off + (size_t)amt;
    if (end > im->cap) {
        size_t cap = im->cap ? im->cap : 16384;
        while (cap < end)
            cap *= 2;
        im->data = vat_xrealloc(im->data, cap);
        im->cap = cap;
    }
    if ((size_t)off > im->n)
        memset(im->data + im->n, 0, (size_t)off - im->n);
    memcpy(im->data + off, buf, (size_t)amt);
    if (end > im->n)
        im->n = end;
    return SQLITE_OK;
}

static int sqlw_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    struct sqlw_share *sh = ((struct sqlw_file *)f)->sh;
    if (sqlw_reading(sh) || size < 0)
        return SQLITE_READONLY;
    if ((size_t)size < sh->cur->n)
        sh->cur->n = (size_t)size;
    return SQLITE_OK;
}

static int sqlw_size(sqlite3_file *f, sqlite3_int64 *size)
{
    *size = (sqlite3_int64)((struct sqlw_file *)f)->sh->cur->n;
    return SQLITE_OK;
}

/* As SQLite's memdb VFS, which writes the databases outside a draw. */
static int sqlw_sector(sqlite3_file *f)
{
    (void)f;
    return 1024;
}

static int sqlw_device(sqlite3_file *f)
{
    (void)f;
    return SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_POWERSAFE_OVERWRITE | SQLITE_IOCAP_SAFE_APPEND |
           SQLITE_IOCAP_SEQUENTIAL;
}

static const sqlite3_io_methods sqlw_methods = {
    .iVersion = 1,
    .xClose = vat_sqlfile_close,
    .xRead = sqlw_read,
    .xWrite = sqlw_write,
    .xTruncate = sqlw_truncate,
    .xSync = vat_sqlfile_ok,
    .xFileSize = sqlw_size,
    .xLock = vat_sqlfile_ok,
    .xUnlock = vat_sqlfile_ok,
    .xCheckReservedLock = vat_sqlfile_unreserved,
    .xFileControl = vat_sqlfile_no_control,
    .xSectorSize = sqlw_sector,
    .xDeviceCharacteristics = sqlw_device,
};

/* The main database is the share's; anything else SQLite opens (a sort's
 * spill) goes to the default VFS, as memdb sends it. */
static int sqlw_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    if ((flags & SQLITE_OPEN_MAIN_DB) && sqlw_opening) {
        ((struct sqlw_file *)f)->sh = sqlw_opening;
        sqlw_opening = NULL;
        f->pMethods = &sqlw_methods;
        if (out)
            *out = flags;
        return SQLITE_OK;
    }
    if (flags & SQLITE_OPEN_MAIN_DB) {
        f->pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    return sqlw_base->xOpen(sqlw_base, name, f, flags, out);
}

/* No journal or WAL file of the share's database exists anywhere. */
static int sqlw_vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
    (void)vfs;
    (void)name;
    (void)flags;
    *out = 0;
    return SQLITE_OK;
}

static void sqlw_vfs_init(void)
{
    sqlw_base = sqlite3_vfs_find(NULL);
    if (!sqlw_base)
        return;
    sqlw_vfs = *sqlw_base;
    sqlw_vfs.pNext = NULL;
    sqlw_vfs.zName = SQLW_VFS_NAME;
    if ((size_t)sqlw_vfs.szOsFile < sizeof(struct sqlw_file))
        sqlw_vfs.szOsFile = (int)sizeof(struct sqlw_file);
    sqlw_vfs.xOpen = sqlw_vfs_open;
    sqlw_vfs.xAccess = sqlw_vfs_access;
    sqlw_vfs.xFullPathname = vat_sqlfile_name_as_is;
    sqlw_vfs_rc = sqlite3_vfs_register(&sqlw_vfs, 0);
}

static void sqlw_image_forget(struct sqlw_image *im)
{
    free(im->data);
    free(im->root);
    free(im->rel);
    *im = (struct sqlw_image){0};
}

static void sqlw_share_free(struct sqlw_share *sh)
{
    if (!sh)
        return;
    if (sh->db) {
        finalize_all(sh->db);
        sqlite3_close(sh->db);
    }
    sqlw_image_forget(&sh->writer);
    for (size_t i = 0; i < SQLW_READERS; i++)
        sqlw_image_forget(&sh->reader[i]);
    free(sh->schema);
    free(sh->empty);
    free(sh);
}

static pthread_key_t sqlw_key;
static pthread_once_t sqlw_key_once = PTHREAD_ONCE_INIT;

static void sqlw_thread_end(void *arg)
{
    (void)arg;
    sqlw_share_free(sqlw_kept);
    sqlw_kept = NULL;
}

static void sqlw_key_init(void)
{
    pthread_key_create(&sqlw_key, sqlw_thread_end);
}

/* Drops this thread's share (a failed write leaves its state unknown). */
static void sqlw_share_drop(void)
{
    sqlw_share_free(sqlw_kept);
    sqlw_kept = NULL;
}

/* Sets query_only as the served image needs it (on for a reader's). */
static int sqlw_query_only(struct sqlw_share *sh, bool on)
{
    if (sh->query_only == on)
        return 0;
    if (sqlite3_exec(sh->db, on ? "PRAGMA query_only=ON" : "PRAGMA query_only=OFF", NULL, NULL,
                     NULL) != SQLITE_OK)
        return -1;
    sh->query_only = on;
    return 0;
}

static const char sqlw_conn_pragmas[] = "PRAGMA journal_mode=OFF;"
                                        "PRAGMA synchronous=OFF;";
static const char sqlw_file_pragmas[] = "PRAGMA page_size=4096;"
                                        "PRAGMA auto_vacuum=NONE;"
                                        "PRAGMA encoding='UTF-8';";

/* A new share for schema: its connection opened on an empty image, the
 * schema made (as on a new memdb database) and the result kept as the
 * schema's empty database.  NULL when SQLite refuses any of it. */
static struct sqlw_share *sqlw_share_new(const char *schema)
{
    pthread_once(&sqlw_vfs_once, sqlw_vfs_init);
    if (sqlw_vfs_rc != SQLITE_OK)
        return NULL;
    struct sqlw_share *sh = vat_xcalloc(1, sizeof *sh);
    sh->schema = vat_xstrdup(schema ? schema : "");
    sh->cur = &sh->writer;
    sqlw_opening = sh;
    int rc = sqlite3_open_v2("vat-sqlw", &sh->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             SQLW_VFS_NAME);
    bool taken = sqlw_opening == NULL;
    sqlw_opening = NULL;
    if (rc != SQLITE_OK || !taken ||
        sqlite3_exec(sh->db, sqlw_file_pragmas, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(sh->db, sqlw_conn_pragmas, NULL, NULL, NULL) != SQLITE_OK ||
        (schema && sqlite3_exec(sh->db, schema, NULL, NULL, NULL) != SQLITE_OK) ||
        sh->writer.n < 100) {
        sqlw_share_free(sh);
        return NULL;
    }
    sh->empty = vat_xmalloc(sh->writer.n);
    memcpy(sh->empty, sh->writer.data, sh->writer.n);
    sh->empty_n = sh->writer.n;
    return sh;
}

/* This thread's share for a writer of schema, with the empty database put
 * under it and a transaction open; NULL when it is held (or cannot be
 * made): the writer then goes its own way. */
static struct sqlw_share *sqlw_share_for_writer(const char *schema)
{
    struct sqlw_share *sh = sqlw_kept;
    if (sh && sh->held)
        return NULL;
    if (sh && strcmp(sh->schema, schema ? schema : "") != 0) {
        sqlw_share_drop();
        sh = NULL;
    }
    bool fresh = false;
    if (!sh) {
        pthread_once(&sqlw_key_once, sqlw_key_init);
        if (!(sh = sqlw_share_new(schema)))
            return NULL;
        pthread_setspecific(sqlw_key, (void *)1); /* frees it when the thread ends */
        sqlw_kept = sh;
        fresh = true;
    }
    /* readers' images of files since rewritten, or of another draw */
    for (size_t i = 0; i < SQLW_READERS; i++)
        if (sh->reader[i].data &&
            sh->reader[i].serial != vat_file_memo_serial(sh->reader[i].root, sh->reader[i].rel))
            sqlw_image_forget(&sh->reader[i]);
    if (!fresh) {
        if (sh->writer.cap < sh->empty_n) {
            sh->writer.data = vat_xrealloc(sh->writer.data, sh->empty_n);
            sh->writer.cap = sh->empty_n;
        }
        memcpy(sh->writer.data, sh->empty, sh->empty_n);
        sh->writer.n = sh->empty_n;
    }
    sh->cur = &sh->writer;
    if (sqlw_query_only(sh, false) != 0 ||
        sqlite3_exec(sh->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        sqlw_share_drop();
        return NULL;
    }
    sh->held = true;
    return sh;
}

/* Keeps the committed image img (n bytes of the caller's allocation, now
 * the share's: as written to root/rel and read back from there under the
 * memo's serial) as a reader's image, or frees it when all are taken. */
static void sqlw_share_keep(struct sqlw_share *sh, const char *root, const char *rel,
                            unsigned long serial, unsigned char *img, size_t n)
{
    struct sqlw_image *slot = NULL;
    for (size_t i = 0; i < SQLW_READERS && !slot; i++)
        if (sh->reader[i].data && strcmp(sh->reader[i].rel, rel) == 0 &&
            strcmp(sh->reader[i].root, root) == 0)
            slot = &sh->reader[i];
    for (size_t i = 0; i < SQLW_READERS && !slot; i++)
        if (!sh->reader[i].data)
            slot = &sh->reader[i];
    if (!slot) {
        free(img); /* full: its later readers open the file */
        return;
    }
    sqlw_image_forget(slot);
    slot->data = img;
    slot->n = slot->cap = n;
    slot->root = vat_xstrdup(root);
    slot->rel = vat_xstrdup(rel);
    slot->serial = serial;
}

/* This thread's share serving its image of root/rel to a reader, or NULL
 * (none kept, the file rewritten since, or the share held). */
static sqlite3 *sqlw_share_for_reader(const char *root, const char *rel)
{
    struct sqlw_share *sh = sqlw_kept;
    if (!sh || sh->held)
        return NULL;
    for (size_t i = 0; i < SQLW_READERS; i++) {
        struct sqlw_image *im = &sh->reader[i];
        if (!im->data || strcmp(im->rel, rel) != 0 || strcmp(im->root, root) != 0)
            continue;
        if (im->serial != vat_file_memo_serial(root, rel)) {
            sqlw_image_forget(im);
            return NULL;
        }
        sh->cur = im;
        sh->counter = sh->counter < SQLW_READER_COUNTER ? SQLW_READER_COUNTER : sh->counter + 1;
        if (sqlw_query_only(sh, true) != 0) {
            sqlw_share_drop();
            return NULL;
        }
        sh->held = true;
        return sh->db;
    }
    return NULL;
}

int vat_sqlw_open(struct vat_sqlw *w, const char *root, const char *rel, const char *schema_sql,
                  struct vat_err *e)
{
    w->db = NULL;
    w->share = NULL;
    w->final_path = w->root = w->rel = NULL;
    if (!vat_path_is_safe(rel))
        return vat_err_set(e, "vat: refusing unsafe path '%s'", rel ? rel : "");
    /* Nothing touches the file system before commit, whose atomic write
     * makes the missing folders beneath root (and refuses a path that
     * leaves it). */
    w->final_path = vat_path_join(root, rel);
    w->root = vat_xstrdup(root);
    w->rel = vat_xstrdup(rel);
    if (vat_file_memo_on()) {
        struct sqlw_share *sh = sqlw_share_for_writer(schema_sql);
        if (sh) {
            w->db = sh->db;
            w->share = sh;
            return 0;
        }
    }

    /* The database is built in memory (SQLite's memdb VFS: a private
     * database, its name not starting with '/', so never shared between
     * connections) and written to the file once at commit: no file is
     * opened, locked, written page by page and reopened while it is
     * filled.  The memdb VFS is an ordinary file to the pager (unlike
     * ":memory:"), so the header's change counter and every page come out
     * as they did in a file. */
    if (sqlite3_open_v2("file:vat-sqlw?vfs=memdb", &w->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        vat_err_set(e, "vat: cannot create '%s': %s", rel,
                    w->db ? sqlite3_errmsg(w->db) : "out of memory");
        goto fail;
    }
    /* Outside a draw, or while the thread's shared connection is held, a
     * writer makes its database from nothing: the file's settings, the
     * connection's (no journal, no syncs), the schema. */
    char *msg = NULL;
    if (sqlite3_exec(w->db, sqlw_file_pragmas, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(w->db, sqlw_conn_pragmas, NULL, NULL, &msg) != SQLITE_OK ||
        (schema_sql && sqlite3_exec(w->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK) ||
        sqlite3_exec(w->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        goto fail_exec;
    }
    return 0;
fail_exec:
    vat_err_set(e, "vat: cannot create '%s': %s", rel, msg ? msg : sqlite3_errmsg(w->db));
    sqlite3_free(msg);
fail:
    drop_db(w);
    free_paths(w);
    return -1;
}

static int all_space(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return 0;
    return 1;
}

/* sqlite3_sql gives a statement's text up to the end of the statement, so
 * sql matches it when only whitespace follows. */
static int same_sql(const char *text, const char *sql)
{
    size_t n = strlen(text);
    return strncmp(text, sql, n) == 0 && all_space(sql + n);
}

/* Returns the cached statement for sql, preparing it on first use; NULL
 * if sql does not prepare as exactly one statement. */
static sqlite3_stmt *statement_for(sqlite3 *db, const char *sql)
{
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st; st = sqlite3_next_stmt(db, st)) {
        const char *text = sqlite3_sql(st);
        if (text && same_sql(text, sql))
            return st;
    }
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, &tail) != SQLITE_OK)
        return NULL;
    /* A second statement would be silently skipped by every insert. */
    if (!st || (tail && !all_space(tail))) {
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

static int poison(struct vat_sqlw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int poison(struct vat_sqlw *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(insert_error, sizeof insert_error, fmt, ap);
    va_end(ap);
    drop_db(w);
    return -1;
}

int vat_sqlw_insert(struct vat_sqlw *w, const char *sql, const char *types, ...)
{
    if (!w->db)
        return -1; /* poisoned or never opened: the first error stands */
    sqlite3_stmt *st = statement_for(w->db, sql);
    if (!st)
        return poison(w, "cannot prepare '%.80s': %s", sql,
                      sqlite3_errcode(w->db) == SQLITE_OK ? "not exactly one statement"
                                                          : sqlite3_errmsg(w->db));
    if (!types)
        types = "";
    size_t ntypes = strlen(types);
    if ((size_t)sqlite3_bind_parameter_count(st) != ntypes)
        return poison(w, "'%.80s' has %d parameters, types give %zu", sql,
                      sqlite3_bind_parameter_count(st), ntypes);

    va_list ap;
    va_start(ap, types);
    int rc = SQLITE_OK;
    for (size_t i = 0; i < ntypes && rc == SQLITE_OK; i++) {
        int k = (int)i + 1;
        switch (types[i]) {
        case 't': {
            const char *s = va_arg(ap, const char *);
            /* Bound static: the text outlives the step below, and the
             * bindings are cleared before this call returns. */
            rc = s ? sqlite3_bind_text(st, k, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, k);
            break;
        }
        case 'i':
            rc = sqlite3_bind_int64(st, k, va_arg(ap, int64_t));
            break;
        case 'd':
            rc = sqlite3_bind_double(st, k, va_arg(ap, double));
            break;
        case 'n':
            rc = sqlite3_bind_null(st, k);
            break;
        default:
            va_end(ap);
            sqlite3_clear_bindings(st);
            return poison(w, "bad type letter '%c' for '%.80s'", types[i], sql);
        }
    }
    va_end(ap);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE || rc == SQLITE_ROW)
            rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        /* Take the message before reset, which may replace it. */
        char msg[256];
        snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(w->db));
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return poison(w, "cannot insert with '%.80s': %s", sql, msg);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return 0;
}

static void ro_close(void *db);

/* The memo's serial of root/rel once the file, read back from disk,
 * holds exactly the n bytes at img; 0 when not (or the memo is off). */
static unsigned long read_back_serial(const char *root, const char *rel, const unsigned char *img,
                                      size_t n)
{
    if (!vat_file_memo_on())
        return 0;
    char *data = NULL;
    size_t len = 0;
    struct vat_err ignore = {{0}};
    bool same = vat_read_file_beneath(root, rel, n + 1, &data, &len, &ignore) == 0 &&
                len == n && memcmp(data, img, n) == 0;
    free(data);
    return same ? vat_file_memo_serial(root, rel) : 0;
}

/* A writer with a connection of its own (one that could not share):
 * during a draw its connection, which holds the database just written
 * with its schema parsed, becomes the file's kept read-only connection
 * (vat_sqlite_open_ro), sparing the task's first reader an open and a
 * schema parse.  Only once the file has been read back from disk and
 * found to hold exactly the bytes written (img, header pinned): the
 * reader then sees what is on disk, as if it had opened it.  Pages are the
 * same; the header's fields 92-99 (pinned in the file only) change
 * nothing a query reads.  Otherwise the connection is closed. */
static void keep_as_reader(struct vat_sqlw *w, const unsigned char *img, size_t n)
{
    if (!w->db)
        return;
    unsigned long serial = read_back_serial(w->root, w->rel, img, n);
    if (!serial || sqlite3_exec(w->db, "PRAGMA query_only=ON", NULL, NULL, NULL) != SQLITE_OK)
        return;
    vat_file_memo_put_obj(w->root, w->rel, "sqlite-ro", serial, w->db, ro_close);
    w->db = NULL;
}

/* vat_sqlw_commit on the shared connection, committed: the file is
 * written from the writer's image, pinned, and the image kept for readers
 * once read back; the connection, its statements still prepared, goes
 * back to the thread. */
static int commit_shared(struct vat_sqlw *w, struct vat_err *e)
{
    struct sqlw_share *sh = w->share;
    size_t n = sh->writer.n;
    unsigned char *img = vat_xmalloc(n ? n : 1);
    memcpy(img, sh->writer.data, n);
    int rc = vat_sqlite_pin_header_mem(img, n, e) == 0 &&
                     vat_write_file_atomic(w->root, w->rel, (const char *)img, n, e) == 0
                 ? 0
                 : -1;
    unsigned long serial = rc == 0 ? read_back_serial(w->root, w->rel, img, n) : 0;
    if (serial)
        sqlw_share_keep(sh, w->root, w->rel, serial, img, n);
    else
        free(img);
    sh->held = false;
    w->share = NULL;
    w->db = NULL;
    return rc;
}

int vat_sqlw_commit(struct vat_sqlw *w, struct vat_err *e)
{
    int rc = -1;
    if (!w->final_path) {
        vat_err_set(e, "vat: commit of a writer that is not open");
        return -1;
    }
    if (!w->db) {
        vat_err_set(e, "vat: cannot write '%s': %s", w->final_path,
                    insert_error[0] ? insert_error : "an earlier insert failed");
        goto out;
    }
    char *msg = NULL;
    if (sqlite3_exec(w->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
        vat_err_set(e, "vat: cannot write '%s': %s", w->final_path,
                    msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        drop_db(w);
        goto out;
    }
    if (w->share) {
        rc = commit_shared(w, e);
        goto out;
    }
    finalize_all(w->db);
    sqlite3_int64 size = 0;
    unsigned char *img = sqlite3_serialize(w->db, "main", &size, 0);
    if (!img || size < 100) {
        sqlite3_free(img);
        drop_db(w);
        vat_err_set(e, "vat: cannot write '%s': the database cannot be serialized",
                    w->final_path);
        goto out;
    }
    if (vat_sqlite_pin_header_mem(img, (size_t)size, e) != 0 ||
        vat_write_file_atomic(w->root, w->rel, (const char *)img, (size_t)size, e) != 0) {
        sqlite3_free(img);
        drop_db(w);
        goto out;
    }
    keep_as_reader(w, img, (size_t)size);
    sqlite3_free(img);
    drop_db(w);
    rc = 0;
out:
    insert_error[0] = 0;
    free_paths(w);
    return rc;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

int vat_sqlite_pin_header_mem(unsigned char *img, size_t n, struct vat_err *e)
{
    static const char magic[16] = "SQLite format 3";
    if (n < 100 || memcmp(img, magic, sizeof magic) != 0)
        return vat_err_set(e, "vat: the database has no SQLite database header");
    /* version-valid-for = change counter, then the writer's version */
    memcpy(img + 92, img + 24, 4);
    put_be32(img + 96, VAT_SQLITE_HEADER_VERSION);
    return 0;
}

int vat_sqlite_pin_header(const char *path, struct vat_err *e)
{
    static const char magic[16] = "SQLite format 3";
    unsigned char h[100];
    FILE *f = fopen(path, "r+b");
    if (!f)
        return vat_err_set(e, "vat: cannot open '%s': %s", path, strerror(errno));
    if (fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, magic, sizeof magic) != 0) {
        fclose(f);
        return vat_err_set(e, "vat: '%s' has no SQLite database header", path);
    }
    struct vat_err ignore;
    vat_sqlite_pin_header_mem(h, sizeof h, &ignore);
    int bad = fseek(f, 92, SEEK_SET) != 0 || fwrite(h + 92, 1, 8, f) != 8;
    if (fclose(f) != 0 || bad)
        return vat_err_set(e, "vat: cannot write the header of '%s': %s", path, strerror(errno));
    return 0;
}

void vat_sqlw_abort(struct vat_sqlw *w)
{
    drop_db(w);
    free_paths(w);
    insert_error[0] = 0;
}

/* The read-only connections handed out during a task's draw (the file
 * memo is on): each remembers which read of which file it was made from,
 * so vat_sqlite_close_ro can keep it for the task's next reader of that
 * file, unless the file has been rewritten since. */
#define RO_LENT_MAX 16
static _Thread_local struct ro_lent {
    sqlite3 *db;
    char *root, *rel;
    unsigned long serial;
} ro_lent[RO_LENT_MAX];

static void ro_close(void *db)
{
    sqlite3_close(db);
}

static void ro_lend(const char *root, const char *rel, sqlite3 *db, unsigned long serial)
{
    for (size_t i = 0; i < RO_LENT_MAX; i++)
        if (!ro_lent[i].db) {
            ro_lent[i] = (struct ro_lent){db, vat_xstrdup(root), vat_xstrdup(rel), serial};
            return;
        }
}

void vat_sqlite_close_ro(sqlite3 *db)
{
    if (!db)
        return;
    struct sqlw_share *sh = sqlw_kept;
    if (sh && db == sh->db && sh->held && sqlw_reading(sh)) {
        sh->held = false;
        return;
    }
    for (size_t i = 0; i < RO_LENT_MAX; i++)
        if (ro_lent[i].db == db) {
            struct ro_lent x = ro_lent[i];
            ro_lent[i] = (struct ro_lent){0};
            vat_file_memo_put_obj(x.root, x.rel, "sqlite-ro", x.serial, db, ro_close);
            free(x.root);
            free(x.rel);
            return;
        }
    sqlite3_close(db);
}

int vat_sqlite_open_ro(const char *root, const char *rel, sqlite3 **db, struct vat_err *e)
{
    *db = NULL;
    if (!vat_path_is_safe(rel))
        return vat_err_set(e, "vat: refusing unsafe path '%s'", rel ? rel : "");
    if (vat_file_memo_on() && (*db = sqlw_share_for_reader(root, rel)) != NULL)
        return 0;
    unsigned long serial = 0;
    sqlite3 *kept = vat_file_memo_take_obj(root, rel, "sqlite-ro", &serial);
    if (kept) {
        if (serial == vat_file_memo_serial(root, rel)) {
            *db = kept;
            ro_lend(root, rel, kept, serial);
            return 0;
        }
        sqlite3_close(kept);
    }
    /* Read beneath root (no symbolic link followed) and handed to SQLite
     * as a read-only image: SQLite never opens the path itself. */
    char *data = NULL;
    size_t len = 0;
    if (vat_read_file_beneath(root, rel, (size_t)1 << 30, &data, &len, e) != 0)
        return -1;
    unsigned char *img = sqlite3_malloc64(len ? len : 1);
    if (!img) {
        free(data);
        return vat_err_set(e, "vat: cannot open '%s': out of memory", rel);
    }
    memcpy(img, data, len);
    free(data);
    int rc = sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_free(img);
        vat_err_set(e, "vat: cannot open '%s': %s", rel,
                    *db ? sqlite3_errmsg(*db) : "out of memory");
        goto fail;
    }
    rc = sqlite3_deserialize(*db, "main", img, (sqlite3_int64)len, (sqlite3_int64)len,
                             SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
    if (rc != SQLITE_OK) {
        vat_err_set(e, "vat: cannot open '%s': %s", rel, sqlite3_errmsg(*db));
        goto fail;
    }
    /* Read the schema now so that a file that is not a database fails
     * here, where the path is known, not at first query. */
    if (sqlite3_exec(*db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
        vat_err_set(e, "vat: cannot open '%s': %s", rel, sqlite3_errmsg(*db));
        goto fail;
    }
    if ((serial = vat_file_memo_serial(root, rel)) != 0)
        ro_lend(root, rel, *db, serial);
    return 0;
fail:
    sqlite3_close(*db);
    *db = NULL;
    return -1;
}

/* Whether db is this thread's shared connection, whose statements live
 * until it is dropped (sqlw_share_free finalizes them). */
static bool is_shared(sqlite3 *db)
{
    return db && sqlw_kept && sqlw_kept->db == db;
}

int vat_sqlite_prepare_ro(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
    if (is_shared(db)) {
        *st = statement_for(db, sql);
        return *st ? SQLITE_OK : SQLITE_ERROR;
    }
    return sqlite3_prepare_v2(db, sql, -1, st, NULL);
}

void vat_sqlite_stmt_done(sqlite3_stmt *st)
{
    if (st && is_shared(sqlite3_db_handle(st))) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    } else {
        sqlite3_finalize(st);
    }
}

int vat_sqlite_exec(sqlite3 *db, const char *sql, struct vat_err *e)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    vat_err_set(e, "vat: cannot run '%.80s': %s", sql, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}
