/* xlsxlay.c — placing tables on sheets in the messy layouts, finding them
 * again, and the task-level glue of workbook fixtures (see xlsxlay.h).
 * Exports the vat_xl_place / vat_xl_find / vat_xl_task_* functions. */
#include "xlsxlay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "level.h"
#include "template.h"
#include "trace.h"
#include "values.h"

/* ---- placing ------------------------------------------------------------------ */

static int cell_number(const char *txt, enum vat_xl_kind k, double *v, int64_t *units)
{
    if (k == VAT_XLK_MONEY) {
        int64_t c;
        if (vat_parse_cents(txt, &c) != 0)
            return -1;
        *units = c;
        *v = (double)c / 100.0;
        return 0;
    }
    char *end;
    errno = 0;
    long long n = strtoll(txt, &end, 10);
    if (!*txt || *end || errno)
        return -1;
    *units = n;
    *v = (double)n;
    return 0;
}

int vat_xl_place(struct vat_xl_sheet *s, uint32_t row0, uint32_t col0,
                 const struct vat_xl_table *t, struct vat_xl_where *w, uint32_t *next,
                 struct vat_err *e)
{
    const struct vat_csv *d = t->data;
    size_t nc = d->nrows ? d->row[0].n : 0;
    uint32_t r = row0;
    memset(w, 0, sizeof *w);
    w->col0 = col0;
    w->title_row = w->group_row = w->totals_row = -1;
    if (t->title) {
        vat_xl_set_str(s, r, col0, t->title, VAT_XL_TITLE);
        w->title_row = r++;
    }
    for (size_t i = 0; i < t->nnotes; i++)
        vat_xl_set_str(s, r++, col0, t->notes[i], VAT_XL_PLAIN);
    if (t->title || t->nnotes)
        r++; /* a blank row between the notes and the table */
    if (t->group) {
        w->group_row = r;
        for (size_t c = 0; c < nc;) {
            size_t k = c + 1;
            while (k < nc && t->group[c] && t->group[k] && strcmp(t->group[c], t->group[k]) == 0)
                k++;
            if (t->group[c] && t->group[c][0]) {
                vat_xl_set_str(s, r, col0 + (uint32_t)c, t->group[c], VAT_XL_BOLD);
                if (k - c > 1)
                    vat_xl_merge(s, r, col0 + (uint32_t)c, r, col0 + (uint32_t)(k - 1));
            }
            c = k;
        }
        r++;
    }
    w->header_row = r;
    for (size_t c = 0; c < nc; c++)
        vat_xl_set_str(s, r, col0 + (uint32_t)c, d->row[0].cell[c], VAT_XL_BOLD);
    r++;
    w->first_row = r;
    int64_t *sum = vat_xcalloc(nc ? nc : 1, sizeof *sum);
    for (size_t i = 1; i < d->nrows; i++, r++) {
        for (size_t c = 0; c < nc; c++) {
            const char *txt = vat_csv_get(d, i, c);
            uint32_t col = col0 + (uint32_t)c;
            if (!txt[0])
                continue; /* missing: no cell at all */
            bool text = t->kind[c] == VAT_XLK_TEXT || (t->as_text && t->as_text[(i - 1) * nc + c]);
            double v;
            int64_t units;
            if (t->kind[c] != VAT_XLK_TEXT && cell_number(txt, t->kind[c], &v, &units) != 0) {
                free(sum);
                return vat_err_set(e, "xlsx layout: row %zu column '%s': '%s' is not a %s", i,
                                   d->row[0].cell[c], txt,
                                   t->kind[c] == VAT_XLK_MONEY ? "decimal" : "whole number");
            }
            if (t->kind[c] != VAT_XLK_TEXT)
                sum[c] += units;
            if (text)
                vat_xl_set_str(s, r, col, txt, VAT_XL_PLAIN);
            else
                vat_xl_set_num(s, r, col, v, t->kind[c] == VAT_XLK_MONEY ? VAT_XL_MONEY : VAT_XL_PLAIN);
        }
    }
    w->nrows = (uint32_t)(d->nrows ? d->nrows - 1 : 0);
    if (t->totals_col >= 0 && (size_t)t->totals_col < nc) {
        w->totals_row = r;
        vat_xl_set_str(s, r, col0 + (uint32_t)t->totals_col, VAT_XL_TOTAL_LABEL, VAT_XL_BOLD);
        for (size_t c = 0; c < nc; c++) {
            if (!t->total_of || !t->total_of[c] || t->kind[c] == VAT_XLK_TEXT)
                continue;
            double v = t->kind[c] == VAT_XLK_MONEY ? (double)sum[c] / 100.0 : (double)sum[c];
            vat_xl_set_num(s, r, col0 + (uint32_t)c, v,
                           t->kind[c] == VAT_XLK_MONEY ? VAT_XL_MONEY : VAT_XL_BOLD);
        }
        r++;
    }
    free(sum);
    for (size_t c = 0; c < nc && col0 + c < 32; c++) {
        size_t wdt = strlen(d->row[0].cell[c]) + 4;
        s->col_width[col0 + c] = wdt < 12 ? 12 : (double)wdt;
    }
    *next = r;
    return 0;
}

/* ---- finding -------------------------------------------------------------------- */

static const char *cell_str(const struct vat_xl_sheet *s, uint32_t r, uint32_t c)
{
    const struct vat_xl_cell *x = vat_xl_get(s, r, c);
    return x && x->type == VAT_XL_STRING ? x->s : NULL;
}

static bool row_has_names(const struct vat_xl_sheet *s, uint32_t r, uint32_t c0,
                          const char *const *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = cell_str(s, r, c0 + (uint32_t)i);
        if (!v || strcmp(v, cols[i]) != 0)
            return false;
    }
    return true;
}

static bool row_blank(const struct vat_xl_sheet *s, uint32_t r, uint32_t c0, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct vat_xl_cell *x = vat_xl_get(s, r, c0 + (uint32_t)i);
        if (x && !(x->type == VAT_XL_BLANK || (x->type == VAT_XL_STRING && !x->s[0])))
            return false;
    }
    return true;
}

/* The cell's text as the CSV fixture would hold it. */
static int cell_csv_text(const struct vat_xl_cell *x, enum vat_xl_kind k, bool drop_text,
                         char *buf, size_t n, const char **out)
{
    *out = "";
    if (!x || x->type == VAT_XL_BLANK)
        return 0;
    if (x->type == VAT_XL_STRING) {
        *out = drop_text && k != VAT_XLK_TEXT ? "" : x->s;
        return 0;
    }
    if (x->type == VAT_XL_BOOL) {
        *out = x->b ? "TRUE" : "FALSE";
        return 0;
    }
    if (k == VAT_XLK_MONEY) {
        double c = round(x->num * 100.0);
        if (fabs(c) > 9e15 || fabs(x->num * 100.0 - c) > 1e-6)
            return -1;
        *out = vat_fmt_cents((int64_t)c, buf, n);
        return 0;
    }
    if (k == VAT_XLK_INT) {
        if (fabs(x->num) > 9e15 || x->num != floor(x->num))
            return -1;
        snprintf(buf, n, "%lld", (long long)x->num);
        *out = buf;
        return 0;
    }
    *out = vat_xl_text(x, buf, n);
    return 0;
}

int vat_xl_find(const struct vat_xl_sheet *s, const char *const *cols, const enum vat_xl_kind *kind,
                size_t n, const struct vat_xl_find_opts *o, struct vat_csv *out,
                struct vat_xl_where *w, struct vat_err *e)
{
    static const struct vat_xl_find_opts none = {0};
    if (!o)
        o = &none;
    vat_trace_note("xlsx table found by its header", s->name);
    memset(w, 0, sizeof *w);
    w->title_row = w->group_row = w->totals_row = -1;
    uint32_t nrows = vat_xl_nrows(s), ncols = vat_xl_ncols(s);
    uint32_t from = 0;
    if (o->title) {
        bool found = false;
        for (size_t i = 0; i < s->ncells && !found; i++) {
            const struct vat_xl_cell *x = &s->cell[i];
            if (x->type == VAT_XL_STRING && strcmp(x->s, o->title) == 0) {
                w->title_row = x->row;
                from = x->row + 1;
                found = true;
            }
        }
        if (!found)
            return vat_err_set(e, "sheet '%s' has no cell reading '%s'", s->name, o->title);
    }
    bool found = false;
    for (uint32_t r = from; r < nrows && !found; r++)
        for (uint32_t c = 0; c + n <= ncols && !found; c++)
            if (row_has_names(s, r, c, cols, n)) {
                w->header_row = r;
                w->col0 = c;
                found = true;
            }
    if (!found)
        return vat_err_set(e, "sheet '%s' has no row with the columns %s, ...%s", s->name,
                           n ? cols[0] : "", o->title ? " below its title" : "");
    if (w->header_row > 0 && !row_blank(s, w->header_row - 1, w->col0, n) &&
        (int64_t)w->header_row - 1 != w->title_row)
        w->group_row = w->header_row - 1;

    vat_csv_row_begin(out);
    for (size_t i = 0; i < n; i++)
        vat_csv_add(out, cols[i]);
    w->first_row = w->header_row + 1;
    char buf[64];
    for (uint32_t r = w->first_row; r < nrows; r++) {
        if (row_blank(s, r, w->col0, n))
            break;
        bool totals = false;
        for (size_t i = 0; i < n && !totals; i++) {
            const char *v = cell_str(s, r, w->col0 + (uint32_t)i);
            totals = v && strcmp(v, VAT_XL_TOTAL_LABEL) == 0;
        }
        if (totals && w->totals_row < 0)
            w->totals_row = r;
        if (totals && !o->keep_totals)
            break;
        vat_csv_row_begin(out);
        for (size_t i = 0; i < n; i++) {
            const char *txt;
            if (cell_csv_text(vat_xl_get(s, r, w->col0 + (uint32_t)i), kind[i],
                              o->drop_text_numbers, buf, sizeof buf, &txt) != 0) {
                char a[16];
                vat_csv_release(out);
                return vat_err_set(e, "sheet '%s' cell %s: not a %s", s->name,
                                   vat_xl_addr(r, w->col0 + (uint32_t)i, a, sizeof a),
                                   kind[i] == VAT_XLK_MONEY ? "whole number of cents"
                                                            : "whole number");
            }
            vat_csv_add(out, txt);
        }
        w->nrows++;
        if (totals)
            break;
    }
    return 0;
}

int vat_xl_sheet_csv(const struct vat_xl_sheet *s, struct vat_csv *out, struct vat_err *e)
{
    uint32_t nr = vat_xl_nrows(s), nc = vat_xl_ncols(s);
    char buf[64];
    vat_trace_note("xlsx sheet rows", s->name);
    for (uint32_t r = 0; r < nr; r++) {
        vat_csv_row_begin(out);
        for (uint32_t c = 0; c < nc; c++) {
            const struct vat_xl_cell *x = vat_xl_get(s, r, c);
            const char *txt = "";
            if (x && x->type == VAT_XL_NUMBER && x->num == floor(x->num) && fabs(x->num) < 9e15) {
                snprintf(buf, sizeof buf, "%lld", (long long)x->num);
                txt = buf;
            } else if (cell_csv_text(x, VAT_XLK_MONEY, false, buf, sizeof buf, &txt) != 0) {
                char a[16];
                vat_csv_release(out);
                return vat_err_set(e, "sheet '%s' cell %s: %.17g is not in whole cents", s->name,
                                   vat_xl_addr(r, c, a, sizeof a), x->num);
            }
            vat_csv_add(out, txt);
        }
    }
    return 0;
}

/* ---- tasks ------------------------------------------------------------------------ */

const char *vat_xl_task_format(const struct vat_task *t, struct vat_rng *layout)
{
    const char *want = vat_task_str(t, "fixture_format");
    const char *fmt = NULL;
    if (strcmp(want, "csv") == 0) {
        fmt = "csv";
    } else if (strcmp(want, "xlsx") == 0) {
        fmt = "xlsx";
    } else if (strcmp(want, "mixed") == 0 && vat_level_past_prompt(t)) {
        /* a workbook question is asked over the grid the prompt shows
         * whole; when the level's fewest rows are past the prompt's share,
         * a mixed draw is a CSV task (asked as a program), not a redraw */
        fmt = "csv";
    } else if (strcmp(want, "mixed") == 0) {
        struct vat_rng r;
        vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, "fixture_format", t->attempt,
                       NULL);
        fmt = vat_rng_chance(&r, vat_task_real(t, "xlsx_share")) ? "xlsx" : "csv";
    }
    if (layout)
        vat_rng_stream(layout, t->master_seed, t->tmpl->name, t->index, "fixture_layout",
                       t->attempt, NULL);
    return fmt;
}

int vat_xl_task_write(struct vat_task *t, const struct vat_xl_book *b, const char *suffix,
                      const char *role, long rows, json_t *columns, struct vat_err *e)
{
    char *rel = vat_task_fixture_relpath(t, suffix);
    if (vat_xl_write(b, t->root, rel, e) != 0) {
        free(rel);
        json_decref(columns);
        return -1;
    }
    struct vat_fixture *f = vat_task_add_fixture(t, rel, "xlsx", role);
    free(rel);
    f->rows = rows;
    json_array_extend(f->columns, columns);
    json_decref(columns);
    return t->n_fixtures - 1;
}

int vat_xl_task_read(const struct vat_task *t, int fi, struct vat_xl_book *b, struct vat_err *e)
{
    if (fi < 0 || fi >= t->n_fixtures || strcmp(t->fixture[fi].format, "xlsx") != 0)
        return vat_err_set(e, "%s: fixture %d is not a workbook", t->id, fi);
    if (vat_xl_read(b, t->root, t->fixture[fi].path, e) != 0) {
        struct vat_err e2 = *e;
        return vat_err_set(e, "%s: %s", t->id, e2.msg);
    }
    return 0;
}

bool vat_xl_prompt(struct vat_buf *b, const struct vat_task *t, int fi,
                   const struct vat_xl_book *book)
{
    struct vat_buf all = VAT_BUF_INIT;
    for (size_t i = 0; i < book->nsheets; i++)
        vat_xl_grid(&all, &book->sheet[i], vat_xl_nrows(&book->sheet[i]));
    bool whole = all.len <= t->inline_max_bytes;
    /* Cut: every sheet shows the same share of its rows, the largest that
     * fits, found by halving (rows are never cut in the middle). */
    uint32_t keep_num = 1, keep_den = 1;
    if (!whole) {
        uint32_t lo = 0, hi = 1000;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo + 1) / 2;
            struct vat_buf g = VAT_BUF_INIT;
            for (size_t i = 0; i < book->nsheets; i++) {
                uint32_t nr = vat_xl_nrows(&book->sheet[i]);
                vat_xl_grid(&g, &book->sheet[i], (uint32_t)((uint64_t)nr * mid / 1000));
            }
            if (g.len <= t->inline_max_bytes)
                lo = mid;
            else
                hi = mid - 1;
            vat_buf_release(&g);
        }
        keep_num = lo;
        keep_den = 1000;
    }
    vat_buf_release(&all);
    vat_buf_printf(b, "The workbook is the file `%s` (%zu sheet%s). ", t->fixture[fi].path,
                   book->nsheets, book->nsheets == 1 ? "" : "s");
    vat_buf_puts(b, "Each sheet is shown below as a grid: columns by letter, rows by number, "
                    "so a cell is named in A1 notation (column letter then row number); an "
                    "empty grid cell is a blank cell; a value shown with a leading apostrophe "
                    "(') is a number stored as text; merged cells are listed under their "
                    "sheet's grid.\n\n");
    for (size_t i = 0; i < book->nsheets; i++) {
        const struct vat_xl_sheet *s = &book->sheet[i];
        uint32_t nr = vat_xl_nrows(s);
        uint32_t show = (uint32_t)((uint64_t)nr * keep_num / keep_den);
        if (show == nr)
            vat_buf_printf(b, "Sheet `%s` (rows 1 to %lu):\n\n```\n", s->name, (unsigned long)nr);
        else
            vat_buf_printf(b, "Sheet `%s` (rows 1 to %lu of %lu shown; the rest are in the "
                              "file):\n\n```\n",
                           s->name, (unsigned long)show, (unsigned long)nr);
        vat_xl_grid(b, s, show);
        vat_buf_puts(b, "```\n\n");
    }
    return whole;
}
