/* xlsxlay.h — the messy layouts of workbook fixtures: placing a table on a
 * sheet (a title and notes above it, a two-row header whose group cells
 * are merged over their sub-columns, numbers stored as text in chosen
 * cells, blanks for missing values, a totals row under it), and finding
 * it again in a workbook read back by the reader, as text a CSV reader
 * would have seen, so a template's CSV arithmetic applies unchanged.
 * Also the per-task fixture format draw and the prompt's workbook section.
 * Exports the vat_xl_place / vat_xl_find functions and friends. */
#ifndef VAT_XLSXLAY_H
#define VAT_XLSXLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "csvio.h"
#include "rng.h"
#include "task.h"
#include "vat.h"
#include "xlsxio.h"

/* How a data column's texts become cells. */
enum vat_xl_kind {
    VAT_XLK_TEXT,  /* strings as they are                              */
    VAT_XLK_INT,   /* integers -> numbers                              */
    VAT_XLK_MONEY, /* decimals with two places -> numbers, "0.00" style */
};

/* The label of a totals row, in its label column.  A row with a cell
 * reading it ends the table. */
#define VAT_XL_TOTAL_LABEL "Total"

struct vat_xl_table {
    const char *title;               /* bold line above the table, or NULL      */
    const char *const *notes;        /* lines under the title                   */
    size_t nnotes;
    const struct vat_csv *data;      /* row 0: column names; rows 1..: texts    */
    const enum vat_xl_kind *kind;    /* per column                              */
    const char *const *group;        /* per column group label, or NULL: a row
                                        of them above the names, runs of equal
                                        labels merged into one cell             */
    const bool *as_text;             /* per data cell [(row - 1) * ncols + col]:
                                        a number written as a text cell; NULL   */
    int totals_col;                  /* -1: none; else the "Total" label column */
    const bool *total_of;            /* per column: the totals row sums it      */
};

/* Where a placed table lies (0-based rows); found tables say the same. */
struct vat_xl_where {
    uint32_t col0;          /* first column                        */
    int64_t title_row;      /* -1: no title                        */
    int64_t group_row;      /* -1: no group row                    */
    uint32_t header_row;    /* the row of column names             */
    uint32_t first_row;     /* first data row                      */
    uint32_t nrows;         /* data rows                           */
    int64_t totals_row;     /* -1: none                            */
};

/* Places t on sheet s from row0, column col0.  Returns the first row
 * after the table (its totals row included).  0 or -1 with e set (a
 * number cell whose text does not parse as its kind says). */
int vat_xl_place(struct vat_xl_sheet *s, uint32_t row0, uint32_t col0,
                 const struct vat_xl_table *t, struct vat_xl_where *w, uint32_t *next,
                 struct vat_err *e);

/* How vat_xl_find reads a table back; the non-default members are the
 * readings of the layouts' traps. */
struct vat_xl_find_opts {
    const char *title;            /* the table below this title cell; NULL: the first */
    bool keep_totals;             /* trap: the totals row read as a data row           */
    bool drop_text_numbers;       /* trap: numbers stored as text read as blanks       */
};

/* Finds the table whose column names are cols[0..n) in consecutive cells
 * of one row on sheet s (below the title cell when o->title is set), and
 * returns its data rows as CSV text into out (row 0: cols): number cells
 * of MONEY columns as "%.2f" (refused unless a whole number of cents),
 * of INT columns as integers, text cells as they are, blanks as "".  The
 * data ends at the sheet's end, a row blank across the table's columns,
 * or a totals row (a cell of it reading VAT_XL_TOTAL_LABEL).  0 or -1
 * with e set (out released). */
int vat_xl_find(const struct vat_xl_sheet *s, const char *const *cols, const enum vat_xl_kind *kind,
                size_t n, const struct vat_xl_find_opts *o, struct vat_csv *out,
                struct vat_xl_where *w, struct vat_err *e);

/* Every row of sheet s from row 1 to its last, each as wide as the sheet,
 * as CSV text: strings as they are, whole numbers as integers, other
 * numbers in whole cents as "%.2f" (anything finer is refused), booleans
 * TRUE/FALSE, blanks and merged-over cells "".  0 or -1 with e set. */
int vat_xl_sheet_csv(const struct vat_xl_sheet *s, struct vat_csv *out, struct vat_err *e);

/* ---- tasks ------------------------------------------------------------------ */

/* The fixture format of a task from the template's `fixture_format`
 * param: "csv" or "xlsx" as they are; "mixed" draws xlsx with chance
 * `xlsx_share` from the task's own "fixture_format" stream (derived from
 * the task's identity and attempt, so no other draw of the task moves).
 * Seeds *layout (when not NULL) from the task's "fixture_layout" stream
 * for the layout's own draws.  Returns "csv" or "xlsx" (static), or NULL
 * when the param names neither nor "mixed". */
const char *vat_xl_task_format(const struct vat_task *t, struct vat_rng *layout);

/* Writes b as the task's workbook fixture fixtures/<tmpl>/<bucket>/<id><suffix>
 * and records it (format "xlsx", role, rows, columns = "Sheet.column" for
 * the named columns).  Returns the fixture index or -1 with e set. */
int vat_xl_task_write(struct vat_task *t, const struct vat_xl_book *b, const char *suffix,
                      const char *role, long rows, json_t *columns, struct vat_err *e);

/* Reads the task's fixture fi (a workbook) into b.  0 or -1 with e set. */
int vat_xl_task_read(const struct vat_task *t, int fi, struct vat_xl_book *b, struct vat_err *e);

/* Appends the prompt's workbook section: names the file, then each sheet
 * by name as a grid with A1 addresses; when the whole grid text passes
 * t->inline_max_bytes, each sheet shows its leading rows that fit (the
 * section says how many of how many).  Returns true when every sheet is
 * shown whole. */
bool vat_xl_prompt(struct vat_buf *b, const struct vat_task *t, int fi,
                   const struct vat_xl_book *book);

#endif
