/* xlsxio.h — workbooks written deterministically with libxlsxwriter
 * (generators/xlsxio.c); the cell model and the reader are core/xlsx.h,
 * included here.  Exports vat_xl_write. */
#ifndef VAT_XLSXIO_H
#define VAT_XLSXIO_H

#include "xlsx.h"

/* Writes b to root/rel (a temporary file, then rename) with libxlsxwriter:
 * fixed document properties and creation time, so equal books give equal
 * bytes.  Sheets must be non-empty names Excel accepts.  0 or -1. */
int vat_xl_write(const struct vat_xl_book *b, const char *root, const char *rel,
                 struct vat_err *e);

#endif
