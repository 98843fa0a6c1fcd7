/* xlsx.h — workbooks (.xlsx) in memory, read by our own reader over libzip
 * and expat (core/xlsx.c): below the checkers, whose episodes read workbook
 * fixtures, and the generators, whose writer (generators/xlsxio.h) makes
 * them.  Exports struct vat_xl_book (sheets of sparse cells and merged
 * ranges), the builder, vat_xl_read / vat_xl_read_mem, A1 address helpers
 * and the grid rendering prompts show.
 *
 * The reader understands exactly what a plain workbook holds: sheets named
 * in xl/workbook.xml and found through its relationships, shared strings
 * (plain and rich runs), inline strings, numbers, booleans, formulas by
 * their cached value, blanks (a styled cell without a value) and merged
 * ranges.  Anything else it refuses with a one-line error naming the part
 * and cell: error values, typed dates, a DTD, an unknown cell type, an
 * address beyond XFD1048576, a part larger than its cap, a zip whose
 * entries expand past the total cap, nesting deeper than the depth cap. */
#ifndef VAT_XLSX_H
#define VAT_XLSX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vat.h"

/* Excel's own grid bounds (XFD1048576). */
#define VAT_XL_MAX_ROWS 1048576u
#define VAT_XL_MAX_COLS 16384u

/* Reader caps: a fixture is small; anything past these is not ours. */
#define VAT_XL_MAX_FILE_BYTES ((size_t)16 << 20)  /* the .xlsx itself        */
#define VAT_XL_MAX_PART_BYTES ((size_t)16 << 20)  /* one inflated part       */
#define VAT_XL_MAX_TOTAL_BYTES ((size_t)48 << 20) /* all inflated parts read */
#define VAT_XL_MAX_ENTRIES 256                    /* zip entries             */
#define VAT_XL_MAX_SHEETS 64
#define VAT_XL_MAX_CELLS 500000u                  /* cells, all sheets       */
#define VAT_XL_MAX_STRINGS 500000u                /* shared strings          */
#define VAT_XL_MAX_TEXT 32767u                    /* one cell (Excel's cap)  */
#define VAT_XL_MAX_DEPTH 32                       /* XML element nesting     */
#define VAT_XL_MAX_MERGES 10000u

enum vat_xl_type { VAT_XL_BLANK, VAT_XL_STRING, VAT_XL_NUMBER, VAT_XL_BOOL };

/* Writer-side look of a cell; the reader leaves it VAT_XL_PLAIN. */
enum vat_xl_style { VAT_XL_PLAIN, VAT_XL_BOLD, VAT_XL_MONEY, VAT_XL_TITLE };

struct vat_xl_cell {
    uint32_t row, col;     /* 0-based */
    enum vat_xl_type type;
    enum vat_xl_style style;
    char *s;               /* STRING: the text (never NULL for strings) */
    double num;            /* NUMBER                                    */
    bool b;                /* BOOL                                      */
    bool formula;          /* reader: the value is a formula's cached one */
};

struct vat_xl_range {
    uint32_t r1, c1, r2, c2; /* inclusive, 0-based, r1 <= r2, c1 <= c2 */
};

struct vat_xl_sheet {
    char *name;
    struct vat_xl_cell *cell; /* sorted by (row, col) once the book is sealed */
    size_t ncells, cap;
    struct vat_xl_range *merge;
    size_t nmerge, mcap;
    double col_width[32];     /* writer: widths of the first columns (0: default) */
};

struct vat_xl_book {
    struct vat_xl_sheet *sheet;
    size_t nsheets;
};
#define VAT_XL_BOOK_INIT {NULL, 0}

/* ---- building -------------------------------------------------------------- */

/* Appends a sheet called name (copied); returns it (valid until the next add). */
struct vat_xl_sheet *vat_xl_add_sheet(struct vat_xl_book *b, const char *name);
/* Sets a cell, replacing what was there. */
void vat_xl_set_str(struct vat_xl_sheet *s, uint32_t row, uint32_t col, const char *text,
                    enum vat_xl_style st);
void vat_xl_set_num(struct vat_xl_sheet *s, uint32_t row, uint32_t col, double v,
                    enum vat_xl_style st);
void vat_xl_set_bool(struct vat_xl_sheet *s, uint32_t row, uint32_t col, bool v);
/* A blank cell that carries only a style (written as <c r=".." s=".."/>). */
void vat_xl_set_blank(struct vat_xl_sheet *s, uint32_t row, uint32_t col, enum vat_xl_style st);
/* Merges r1..r2 x c1..c2; the top-left cell keeps its value. */
void vat_xl_merge(struct vat_xl_sheet *s, uint32_t r1, uint32_t c1, uint32_t r2, uint32_t c2);

void vat_xl_release(struct vat_xl_book *b);

/* ---- looking up ------------------------------------------------------------ */

/* The sheet called name, or NULL. */
const struct vat_xl_sheet *vat_xl_find_sheet(const struct vat_xl_book *b, const char *name);
/* The cell at (row, col), or NULL when absent (an absent cell is blank). */
const struct vat_xl_cell *vat_xl_get(const struct vat_xl_sheet *s, uint32_t row, uint32_t col);
/* Rows and columns spanned: 1 + the largest row / col holding a cell or a
 * merge, 0 for an empty sheet. */
uint32_t vat_xl_nrows(const struct vat_xl_sheet *s);
uint32_t vat_xl_ncols(const struct vat_xl_sheet *s);
/* The merged range that holds (row, col), or NULL. */
const struct vat_xl_range *vat_xl_merge_at(const struct vat_xl_sheet *s, uint32_t row,
                                           uint32_t col);
/* The cell's text as a reader shows it: strings as they are, numbers in
 * the shortest form that reads back to the same double (%.15g, else
 * %.17g), TRUE/FALSE, "" for blank or absent.  Writes into buf. */
const char *vat_xl_text(const struct vat_xl_cell *c, char *buf, size_t n);

/* ---- addresses --------------------------------------------------------------- */

/* Writes "A1"-style address of (row, col) into buf (>= 12 bytes). */
char *vat_xl_addr(uint32_t row, uint32_t col, char *buf, size_t n);
/* Column letters of col ("A", "AB"); buf >= 4 bytes. */
char *vat_xl_col_name(uint32_t col, char *buf, size_t n);
/* Parses "B12" (letters then digits, nothing else, within XFD1048576).
 * 0, or -1 when s is not such an address. */
int vat_xl_parse_addr(const char *s, size_t len, uint32_t *row, uint32_t *col);

/* ---- files ------------------------------------------------------------------- */


/* Reads root/rel into b (which must be empty).  0, or -1 with e set to a
 * one-line reason (b released). */
int vat_xl_read(struct vat_xl_book *b, const char *root, const char *rel, struct vat_err *e);
/* The same over len bytes in memory; `name` labels errors. */
int vat_xl_read_mem(struct vat_xl_book *b, const void *data, size_t len, const char *name,
                    struct vat_err *e);

/* ---- the prompt's view -------------------------------------------------------- */

/* Appends rows [0, nrows) of sheet s as a grid with A1 addresses: a header
 * line of column letters, then one line per row "<n> | a | b | ...", text
 * cells that look like numbers shown with a leading apostrophe (Excel's
 * mark for a number stored as text), merged ranges listed after the grid.
 * Returns the bytes appended. */
size_t vat_xl_grid(struct vat_buf *out, const struct vat_xl_sheet *s, uint32_t nrows);

#endif
