/* csvio.h — CSV in memory, written and read back with libcsv, and loaded
 * into SQLite for second derivations.  Exports struct vat_csv and the
 * vat_csv_* functions. */
#ifndef VAT_CSVIO_H
#define VAT_CSVIO_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "vat.h"

struct vat_csv_row {
    char **cell;
    size_t n;
};

/* Rows may be ragged (a probe's title lines); row 0 is whatever the file's
 * first record is (usually the header).  A table read from a file keeps
 * its cells' text in one block (arena); cells added or set afterwards are
 * allocated one by one.  Change a cell with vat_csv_set, never free(). */
struct vat_csv {
    struct vat_csv_row *row;
    size_t nrows;
    size_t cap;
    char *arena;      /* the read cells' text, or NULL */
    size_t arena_len; /* bytes of it in use */
};
#define VAT_CSV_INIT {NULL, 0, 0, NULL, 0}

/* Builder: starts a new row, then appends cells to it. */
void vat_csv_row_begin(struct vat_csv *c);
void vat_csv_add(struct vat_csv *c, const char *cell);
void vat_csv_addf(struct vat_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a whole row of n cells. */
void vat_csv_add_row(struct vat_csv *c, const char *const *cells, size_t n);

/* Replaces the text of an existing cell (row, col) with a copy of text;
 * false when there is no such cell. */
bool vat_csv_set(struct vat_csv *c, size_t row, size_t col, const char *text);
/* Returns the cell text, or "" past the row's end. */
const char *vat_csv_get(const struct vat_csv *c, size_t row, size_t col);
/* Returns the index of the column called name in row hdr, or -1. */
int vat_csv_col(const struct vat_csv *c, size_t hdr, const char *name);

/* Writes c to root/rel (temporary file, then rename), quoting fields with
 * csv_fwrite only where RFC 4180 needs it, "\n" line ends.  0 or -1. */
int vat_csv_write(const struct vat_csv *c, const char *root, const char *rel, struct vat_err *e);
/* Serialises c to a new string exactly as vat_csv_write would write it. */
char *vat_csv_to_string(const struct vat_csv *c);
/* The same, and *ends (a new array of c->nrows) the length of the text of
 * rows 0..r for each r: rows are written one after another, so the first
 * r+1 rows serialise to its first (*ends)[r] bytes. */
char *vat_csv_to_string_ends(const struct vat_csv *c, size_t **ends);
/* Reads root/rel with libcsv (CSV_STRICT, CSV_STRICT_FINI, empty fields
 * kept as "").  0 or -1 with e set. */
int vat_csv_read(struct vat_csv *c, const char *root, const char *rel, struct vat_err *e);
void vat_csv_release(struct vat_csv *c);
/* Removes row `row` (later rows move up one); nothing past the end. */
void vat_csv_drop_row(struct vat_csv *c, size_t row);
/* Inserts a copy of text as cell col (0 .. the row's length) of row, the
 * cells from there on one to the right; removes cell col of row, the
 * cells after it one to the left.  Nothing for a row or cell out of
 * range. */
void vat_csv_insert_cell(struct vat_csv *c, size_t row, size_t col, const char *text);
void vat_csv_drop_cell(struct vat_csv *c, size_t row, size_t col);

/* Loads rows [hdr+1, nrows) of c into a new table `table` of db, columns
 * named by row hdr.  types[i] is the SQL column type ("TEXT", "REAL",
 * "INTEGER"), or types NULL for all TEXT.  Blank cells become NULL when
 * blank_is_null, else ''.  0 or -1. */
int vat_csv_to_sqlite(const struct vat_csv *c, size_t hdr, sqlite3 *db, const char *table,
                      const char *const *types, int blank_is_null, struct vat_err *e);

/* An in-memory database that CSV tables are loaded into one after another,
 * one table at a time.  A load whose table has the same name and columns
 * as the last one's empties that table and refills it (the INSERT stays
 * prepared); any other drops it and creates the new one.  So a thread
 * confirming many fixtures of one shape pays for opening a connection,
 * parsing a CREATE TABLE and re-reading the schema once, not per fixture.
 * Between a load and the next, the table is lent: the connection then
 * only reads (an authorizer denies every write, schema change and
 * pragma assignment), so the next load finds it as it was left.
 * Zero-initialise; vat_csv_loader_close frees it. */
struct vat_csv_loader {
    sqlite3 *db;
    char *create, *clear, *drop; /* the held table's CREATE, DELETE and DROP */
    sqlite3_stmt *insert;
    bool lent;
};
/* Loads c into l's table `table` as vat_csv_to_sqlite would into a new
 * database (the same rows, rowids from 1).  0 with the table in l->db, or
 * -1 with e set (and l closed, to start afresh). */
int vat_csv_loader_load(struct vat_csv_loader *l, const struct vat_csv *c, size_t hdr,
                        const char *table, const char *const *types, int blank_is_null,
                        struct vat_err *e);
void vat_csv_loader_close(struct vat_csv_loader *l);

#endif
