/* lines.c — one line of text for people, its control bytes escaped
 * (lines.h).  Exports vat_cli_line and vat_cli_linef. */
#include "lines.h"

#include <stdarg.h>

#include "vat.h"

void vat_cli_line(FILE *f, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('\n', f);
}

void vat_cli_linef(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    vat_cli_line(f, b.data ? b.data : "");
    vat_buf_release(&b);
}
