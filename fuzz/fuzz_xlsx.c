/* fuzz_xlsx.c — libFuzzer harness of the workbook reader
 * (generators/xlsxio.c, vat_xl_read_mem).  Never crashes or hangs; a
 * workbook it reads has at least one named sheet, cells in (row, col)
 * order within XFD1048576, strings present for string cells, merged
 * ranges well formed; a workbook it refuses says why in one line and
 * leaves the book empty. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlsxio.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_xlsx: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vat_xl_book b = VAT_XL_BOOK_INIT;
    struct vat_err e = {{0}};
    if (vat_xl_read_mem(&b, data, size, "fuzz", &e) != 0) {
        size_t n = strnlen(e.msg, sizeof e.msg);
        check(n > 0 && n < sizeof e.msg && !memchr(e.msg, '\n', n),
              "a refusal's reason is not one line");
        check(b.nsheets == 0 && b.sheet == NULL, "a refused book is not empty");
        return 0;
    }
    check(b.nsheets > 0, "a read book has no sheet");
    for (size_t i = 0; i < b.nsheets; i++) {
        const struct vat_xl_sheet *s = &b.sheet[i];
        check(s->name && s->name[0], "a sheet has no name");
        for (size_t k = 0; k < s->ncells; k++) {
            const struct vat_xl_cell *c = &s->cell[k];
            check(c->row < VAT_XL_MAX_ROWS && c->col < VAT_XL_MAX_COLS, "a cell is off the grid");
            if (k)
                check(c->row > s->cell[k - 1].row ||
                          (c->row == s->cell[k - 1].row && c->col > s->cell[k - 1].col),
                      "cells are out of order");
            check(c->type != VAT_XL_STRING || c->s != NULL, "a string cell has no text");
            check(vat_xl_get(s, c->row, c->col) == c, "a cell cannot be found by its address");
        }
        for (size_t k = 0; k < s->nmerge; k++)
            check(s->merge[k].r1 <= s->merge[k].r2 && s->merge[k].c1 <= s->merge[k].c2,
                  "a merged range is inverted");
    }
    vat_xl_release(&b);
    return 0;
}
