/* anxl.h — the workbook format of the analytics templates: the per-task
 * format and layout draw, the workbook written from the table a template
 * built for its CSV (so a template's question and arithmetic stay one),
 * the prompt's data section, the table read back for reference (the gold
 * reading and each layout's trap reading) and the independent confirm
 * reading by recorded cell addresses into SQLite.
 *
 * Layouts (names as recorded in params.workbook.layouts):
 *   title_notes   a title and note lines above the table
 *   two_tables    a second table with the same columns on the same sheet,
 *                 below or above it after blank rows; the question names
 *                 its table by title.  Trap: reading the other table.
 *   group_header  a two-row header, group labels merged over sub-columns.
 *   totals        a "Total" row under the table.  Trap: counting it.
 *   text_numbers  some numbers stored as text cells.  Trap: skipping them.
 *   blanks        blank cells meaning missing (the template's own data).
 *   lookup_sheet  a second sheet holding a lookup table (join templates).
 * The trap layout of a task is drawn among those its template arms;
 * "own" means the template's own trap.
 * Exports vat_axl_* and struct vat_axl_desc. */
#ifndef VAT_ANXL_H
#define VAT_ANXL_H

#include <stdbool.h>

#include <jansson.h>
#include <sqlite3.h>

#include "analytics.h"
#include "csvio.h"
#include "template.h"
#include "xlsxlay.h"

enum vat_axl_layout {
    VAT_AXL_OWN,          /* no layout trap: the template's own */
    VAT_AXL_TITLE_NOTES,
    VAT_AXL_TWO_TABLES,
    VAT_AXL_GROUP_HEADER,
    VAT_AXL_TOTALS,
    VAT_AXL_TEXT_NUMBERS,
    VAT_AXL_BLANKS,
    VAT_AXL_LOOKUP_SHEET,
    VAT_AXL_N
};
#define VAT_AXL_BIT(l) (1u << (l))

extern const char *const vat_axl_layout_names[VAT_AXL_N];

/* The two params every template with the workbook format declares. */
#define VAT_AXL_PARAMS                                                                  \
    {.name = "fixture_format", .type = VAT_PARAM_STR, .def_str = "mixed",              \
     .doc = "fixture format: csv, xlsx, or mixed (drawn per task)"},                   \
    {.name = "xlsx_share", .type = VAT_PARAM_REAL, .def = 0.4, .min = 0, .max = 1,      \
     .doc = "under mixed, the chance that a task's fixture is a workbook"}

/* What a template says about its table. */
struct vat_axl_desc {
    const char *sheet;            /* sheet name, e.g. "Orders"                       */
    const char *what;             /* what a row is, plural: "orders"                 */
    const char *const *titles;    /* candidate table titles, at least two            */
    size_t ntitles;
    const enum vat_xl_kind *kind; /* per column                                      */
    const char *const *group;     /* per column group label, or NULL                 */
    int totals_col;               /* totals row label column, -1: none offered      */
    const bool *total_of;         /* per column                                      */
    unsigned traps;               /* layouts whose trap the template arms (bits)     */
    unsigned decor;               /* layouts allowed besides (bits)                  */
};

/* One task's format and layout, drawn by vat_axl_begin. */
struct vat_axl_state {
    const char *format;          /* "csv" | "xlsx"                                */
    unsigned layouts;            /* VAT_AXL_BIT()s present                        */
    enum vat_axl_layout trap;    /* the layout whose trap the task arms, or OWN   */
    const char *title;           /* the question's table title, or NULL           */
    const char *decoy;           /* two_tables: the other table's title           */
    bool decoy_above;
    struct vat_rng lay;          /* the task's layout stream                      */
    json_t *wb;                  /* params.workbook, built by vat_axl_write       */
};

/* Draws the task's format from its own "fixture_format" stream and, for a
 * workbook, its trap layout (among d->traps and the template's own) and
 * decorations from its "fixture_layout" stream, so no draw of the
 * template's moves.  0, or -1 with e set (unknown fixture_format). */
int vat_axl_begin(struct vat_task *t, const struct vat_axl_desc *d, struct vat_axl_state *st,
                  struct vat_err *e);

/* Writes the task's main fixture from c (row 0 the header): the CSV as
 * before, or the workbook in the drawn layout (decoy table, text cells,
 * totals row drawn from st->lay).  Returns the fixture index or -1. */
int vat_axl_write(struct vat_task *t, struct vat_axl_state *st, const struct vat_csv *c,
                  const struct vat_axl_desc *d, struct vat_err *e);

/* Appends the data section: vat_an_prompt_csv for CSV; for a workbook a
 * paragraph naming the file, the sheet and the table, then the grids.
 * Sets t->self_contained to whether all of the data is shown. */
void vat_axl_prompt(struct vat_buf *b, struct vat_task *t, const struct vat_axl_state *st,
                    int fi, const struct vat_csv *c, const struct vat_axl_desc *d);

/* Moves st->wb into t->params as "workbook" (call after t->params is set;
 * nothing for CSV). */
void vat_axl_finish(struct vat_task *t, struct vat_axl_state *st);
/* Frees what st holds (after an error). */
void vat_axl_release(struct vat_axl_state *st);

/* The task's trap layout, from t->params (VAT_AXL_OWN for CSV). */
enum vat_axl_layout vat_axl_trap(const struct vat_task *t);

/* Reads the task's table as a CSV reader would see it: vat_an_read_csv
 * for CSV; for a workbook the table found by its title on its sheet
 * through the reader, or with trap, as the trap layout misreads it.
 * 0 or -1 with e set. */
int vat_axl_read(const struct vat_task *t, int fi, const char *const *cols, size_t n,
                 const struct vat_axl_desc *d, bool trap, struct vat_csv *out, struct vat_err *e);

/* confirm's reading: for CSV vat_an_confirm_query(q); for a workbook the
 * cells at the range the generator recorded (no header or title search),
 * under the names cols, loaded into SQLite as q says, q->sql compared
 * with gold.  0 or -1 with e set. */
int vat_axl_confirm_query(const struct vat_task *t, const struct vat_an_query *q,
                          const char *const *cols, size_t n, double rel_tol, double abs_tol,
                          struct vat_err *e);

#endif
