/* lines.h — one line of text for people: a message naming files, task
 * ids or roots, printed with its control bytes written as \xNN, so no
 * name can break the line or forge another.  The builder's summaries and
 * every command print through it.  Exports vat_cli_line and
 * vat_cli_linef. */
#ifndef VAT_LINES_H
#define VAT_LINES_H

#include <stdio.h>

/* Prints text and a newline; vat_cli_linef formats it first. */
void vat_cli_line(FILE *f, const char *text);
void vat_cli_linef(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
