/* sqlio.h — writing SQLite fixtures (one transaction, prepared
 * statements, temporary file then rename) and small query helpers.
 * Exports struct vat_sqlw and the vat_sqlite_* functions. */
#ifndef VAT_SQLIO_H
#define VAT_SQLIO_H

#include <sqlite3.h>

#include "vat.h"

struct vat_sqlw {
    sqlite3 *db;
    char *final_path; /* root/rel                         */
    char *tmp_path;   /* root/rel.tmp while being written */
};

/* Creates root/rel.tmp (removing a stale one), runs schema_sql and opens a
 * transaction.  0 or -1. */
int vat_sqlw_open(struct vat_sqlw *w, const char *root, const char *rel, const char *schema_sql,
                  struct vat_err *e);
/* Inserts one row with a prepared statement cached per sql text.  types is
 * one letter per parameter: 't' const char * (NULL gives NULL), 'i' int64_t (cast literals: it is read with va_arg as int64_t),
 * 'd' double, 'n' NULL (no argument).  0 or -1. */
int vat_sqlw_insert(struct vat_sqlw *w, const char *sql, const char *types, ...);
/* Commits, closes and renames into place.  0 or -1. */
int vat_sqlw_commit(struct vat_sqlw *w, struct vat_err *e);
/* Abandons the file (rollback, close, unlink the temporary). */
void vat_sqlw_abort(struct vat_sqlw *w);

/* Opens root/rel read-only (never creating it).  0 or -1. */
int vat_sqlite_open_ro(const char *root, const char *rel, sqlite3 **db, struct vat_err *e);
/* Runs sql with no result rows; 0 or -1. */
int vat_sqlite_exec(sqlite3 *db, const char *sql, struct vat_err *e);

#endif
