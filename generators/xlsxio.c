/* xlsxio.c — workbooks written with libxlsxwriter (xlsxio.h; the cell
 * model and the reader are core/xlsx.c).  Exports vat_xl_write.
 *
 * libxlsxwriter stamps the creation time into docProps/core.xml unless
 * the document properties carry one, so every workbook gets the same
 * fixed properties and time; everything else it writes (zip entry times
 * included) is a function of the cells, which the tests check by writing
 * twice, seconds apart, and comparing bytes. */
#include "xlsxio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xlsxwriter.h>

/* ---- writing ------------------------------------------------------------------ */

/* 2024-01-01T00:00:00Z: the creation and modification time of every
 * workbook, so that a workbook's bytes depend on its cells alone. */
#define XL_FIXED_TIME ((time_t)1704067200)

int vat_xl_write(const struct vat_xl_book *b, const char *root, const char *rel,
                 struct vat_err *e)
{
    if (b->nsheets == 0)
        return vat_err_set(e, "xlsx: '%s': a workbook needs at least one sheet", rel);
    if (vat_mkdirs_for(root, rel, e) != 0)
        return -1;
    char *path = vat_path_join(root, rel);
    char *tmp = vat_xasprintf("%s.tmp", path);
    int rc = -1;
    /* libxlsxwriter stages each part of the package in a temporary file
     * (created and unlinked at once); they go beside the workbook, under
     * the root, not to the system's temporary folder. */
    char *dir = vat_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    lxw_workbook_options opt = {.constant_memory = LXW_FALSE,
                                .tmpdir = slash ? dir : NULL,
                                .use_zip64 = LXW_FALSE};
    lxw_workbook *wb = workbook_new_opt(tmp, &opt);
    if (!wb) {
        vat_err_set(e, "xlsx: cannot create '%s'", tmp);
        goto out;
    }
    static char title[] = "vat fixture", author[] = "vat", company[] = "vat";
    lxw_doc_properties props = {.title = title, .author = author, .company = company,
                                .created = XL_FIXED_TIME};
    workbook_set_properties(wb, &props);
    lxw_format *fmt[4] = {NULL};
    fmt[VAT_XL_BOLD] = workbook_add_format(wb);
    format_set_bold(fmt[VAT_XL_BOLD]);
    fmt[VAT_XL_MONEY] = workbook_add_format(wb);
    format_set_num_format(fmt[VAT_XL_MONEY], "0.00");
    fmt[VAT_XL_TITLE] = workbook_add_format(wb);
    format_set_bold(fmt[VAT_XL_TITLE]);
    format_set_font_size(fmt[VAT_XL_TITLE], 14);

    lxw_error err = LXW_NO_ERROR;
    for (size_t i = 0; i < b->nsheets && err == LXW_NO_ERROR; i++) {
        const struct vat_xl_sheet *s = &b->sheet[i];
        lxw_worksheet *ws = workbook_add_worksheet(wb, s->name);
        if (!ws) {
            vat_err_set(e, "xlsx: '%s': sheet name '%s' refused", rel, s->name);
            workbook_close(wb);
            unlink(tmp);
            goto out;
        }
        for (lxw_col_t c = 0; c < 32; c++)
            if (s->col_width[c] > 0)
                worksheet_set_column(ws, c, c, s->col_width[c], NULL);
        for (size_t k = 0; k < s->ncells && err == LXW_NO_ERROR; k++) {
            const struct vat_xl_cell *c = &s->cell[k];
            lxw_format *f = fmt[c->style];
            switch (c->type) {
            case VAT_XL_STRING:
                /* libxlsxwriter refuses an empty string; an empty cell
                 * is a blank, which is what a reader would see anyway. */
                err = c->s[0] ? worksheet_write_string(ws, c->row, (lxw_col_t)c->col, c->s, f)
                              : worksheet_write_blank(ws, c->row, (lxw_col_t)c->col, f);
                break;
            case VAT_XL_NUMBER:
                err = worksheet_write_number(ws, c->row, (lxw_col_t)c->col, c->num, f);
                break;
            case VAT_XL_BOOL:
                err = worksheet_write_boolean(ws, c->row, (lxw_col_t)c->col, c->b, f);
                break;
            case VAT_XL_BLANK:
                err = worksheet_write_blank(ws, c->row, (lxw_col_t)c->col, f);
                break;
            }
        }
        for (size_t k = 0; k < s->nmerge && err == LXW_NO_ERROR; k++) {
            const struct vat_xl_range *m = &s->merge[k];
            const struct vat_xl_cell *c = vat_xl_get(s, m->r1, m->c1);
            /* merge_range writes the top-left cell as a string; a
             * numeric anchor is rewritten after it. */
            const char *txt = c && c->type == VAT_XL_STRING ? c->s : "";
            err = worksheet_merge_range(ws, m->r1, (lxw_col_t)m->c1, m->r2, (lxw_col_t)m->c2, txt,
                                        c ? fmt[c->style] : NULL);
            if (err == LXW_NO_ERROR && c && c->type == VAT_XL_NUMBER)
                err = worksheet_write_number(ws, m->r1, (lxw_col_t)m->c1, c->num, fmt[c->style]);
        }
    }
    if (err != LXW_NO_ERROR) {
        vat_err_set(e, "xlsx: '%s': %s", rel, lxw_strerror(err));
        workbook_close(wb);
        unlink(tmp);
        goto out;
    }
    err = workbook_close(wb);
    if (err != LXW_NO_ERROR) {
        vat_err_set(e, "xlsx: cannot write '%s': %s", tmp, lxw_strerror(err));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        vat_err_set(e, "xlsx: cannot rename '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(dir);
    free(tmp);
    free(path);
    return rc;
}

