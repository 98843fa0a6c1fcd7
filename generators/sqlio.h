/* sqlio.h — writing SQLite fixtures (one transaction, prepared
 * statements, temporary file then rename) and small query helpers.
 * Exports struct vat_sqlw and the vat_sqlite_* functions. */
#ifndef VAT_SQLIO_H
#define VAT_SQLIO_H

#include <sqlite3.h>

#include "vat.h"

struct vat_sqlw {
    sqlite3 *db;
    char *final_path; /* root/rel (for messages)                 */
    char *root, *rel; /* where commit writes the finished image  */
    void *share;      /* the draw's shared connection, or NULL   */
};

/* Opens a database in memory for root/rel (refusing an unsafe rel), runs
 * schema_sql and opens a transaction.  Nothing is written, and no folder
 * made, until commit.  0 or -1. */
int vat_sqlw_open(struct vat_sqlw *w, const char *root, const char *rel, const char *schema_sql,
                  struct vat_err *e);
/* Inserts one row with a prepared statement cached per sql text.  types is
 * one letter per parameter: 't' const char * (NULL gives NULL), 'i' int64_t (cast literals: it is read with va_arg as int64_t),
 * 'd' double, 'n' NULL (no argument).  0 or -1. */
int vat_sqlw_insert(struct vat_sqlw *w, const char *sql, const char *types, ...);
/* Commits, pins the header and writes the image to root/rel.tmp, renamed
 * into place (vat_write_file_atomic, which makes the folders).  During a
 * task's draw the image, once the file read back holds the bytes written,
 * is kept for the file's readers (vat_sqlite_open_ro): under the thread's
 * shared connection of that schema (sqlio.c), or as the writer's own
 * connection when it had one of its own.  0 or -1. */
int vat_sqlw_commit(struct vat_sqlw *w, struct vat_err *e);
/* Abandons the database (nothing was written). */
void vat_sqlw_abort(struct vat_sqlw *w);

/* The SQLite library that writes a fixture records itself in the database
 * header: offset 96 holds its SQLITE_VERSION_NUMBER, offset 92 the change
 * counter (offset 24) at which it did.  vat_sqlw_commit pins both before
 * the file is renamed into place (so before any digest is taken), so a
 * fixture's bytes do not name the library that wrote it
 * (docs/determinism.md): 96 reads VAT_SQLITE_HEADER_VERSION, what Debian
 * 12's SQLite 3.40.1 writes, so fixtures keep the bytes they had; 92
 * reads the change counter, the one value that keeps the header's page
 * count valid for readers. */
#define VAT_SQLITE_HEADER_VERSION 3040001u
/* Pins those fields of the closed database file at path.  0 or -1. */
int vat_sqlite_pin_header(const char *path, struct vat_err *e);
/* The same on a database image of n bytes in memory.  0 or -1. */
int vat_sqlite_pin_header_mem(unsigned char *img, size_t n, struct vat_err *e);

/* Opens root/rel read-only (never creating it).  0 or -1.  Close it with
 * vat_sqlite_close_ro: during a task's draw (the file memo, core/vat.h)
 * the connection is kept for the task's next reader of the same file,
 * which then skips the open and the schema parse (for a file the thread
 * wrote, the reader gets the thread's shared connection serving the image
 * written); a rewrite of the file retires it.  The caller leaves no
 * statement open and changes nothing on it (it is read-only). */
int vat_sqlite_open_ro(const char *root, const char *rel, sqlite3 **db, struct vat_err *e);
void vat_sqlite_close_ro(sqlite3 *db);
/* Prepares sql on db, a connection vat_sqlite_open_ro gave.  On the
 * thread's shared connection the statement stays prepared there for the
 * next call with the same text, so a task's fixtures (one schema) compile
 * it once; vat_sqlite_stmt_done ends a statement from here (a kept one is
 * reset, any other finalized) before the connection is closed.
 * SQLITE_OK, or the prepare's code with *st NULL. */
int vat_sqlite_prepare_ro(sqlite3 *db, const char *sql, sqlite3_stmt **st);
void vat_sqlite_stmt_done(sqlite3_stmt *st);
/* Runs sql with no result rows; 0 or -1. */
int vat_sqlite_exec(sqlite3 *db, const char *sql, struct vat_err *e);

#endif
