/* reason.h — the one bounded-reason builder of the checkers.  A verdict's
 * reason is made of trusted text and pieces of untrusted text (an answer,
 * a value the query read, a case's string); it is always NUL-terminated
 * valid UTF-8 of at most 255 bytes, cut at a character boundary, so
 * jansson can always emit it and no answer can make it longer.  Untrusted
 * text is shown in one of three styles, each the one its checker's
 * reasons have always had (the corpus's rollouts carry them):
 *  - vat_reason_text: the value and abstain checkers'; \n and \t written
 *    so, quotes and backslashes escaped when quoted, other control and
 *    invalid bytes as \xNN, at most max bytes written;
 *  - vat_reason_esc: the SQL checker's; control and invalid bytes as
 *    \xNN, at most max bytes of the text shown;
 *  - vat_reason_quote_ascii: the regex checker's; in double quotes, every
 *    byte outside printable ASCII escaped, at most max bytes in all.
 * Exports struct vat_reason and the vat_reason_* functions. */
#ifndef VAT_REASON_H
#define VAT_REASON_H

#include <stdbool.h>
#include <stddef.h>

#include "vat.h"

/* A reason being built: always NUL-terminated valid UTF-8, truncated at a
 * character boundary so jansson can always emit it. */
struct vat_reason {
    char s[256];
    size_t n;
};

/* Appends trusted text (invalid UTF-8 and what does not fit dropped). */
void vat_reason_puts(struct vat_reason *r, const char *s);
void vat_reason_printf(struct vat_reason *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends at most max bytes of untrusted text: valid UTF-8 is kept,
 * control bytes, quotes, backslashes and invalid bytes are escaped, and a
 * longer text ends in "...".  quoted wraps it in single quotes. */
void vat_reason_text(struct vat_reason *r, const char *s, size_t n, size_t max, bool quoted);
/* The same without the quotes; esc_quote escapes ' and \ too. */
void vat_reason_escape(struct vat_reason *r, const char *s, size_t n, size_t max, bool esc_quote);
/* Cuts r back to at most n bytes, at a character boundary. */
void vat_reason_cut(struct vat_reason *r, size_t n);

/* The SQL checker's style: appends untrusted bytes, valid UTF-8 kept,
 * control and invalid bytes as \xNN, at most max bytes of s shown ("..."
 * after, when it fits); a piece that does not fit ends the text. */
void vat_reason_esc(struct vat_reason *r, const char *s, size_t n, size_t max);
/* vat_reason_esc of all of s (the SQL checker shows every text so). */
void vat_reason_esc_puts(struct vat_reason *r, const char *s);
void vat_reason_esc_printf(struct vat_reason *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The regex checker's style: appends s[0..n) in double quotes, '"', '\',
 * newline and tab escaped by a backslash and every other byte outside
 * printable ASCII as \xNN, in at most max bytes ("..." marks a cut). */
void vat_reason_quote_ascii(struct vat_reason *r, const char *s, size_t n, size_t max);

/* The verdict whose reason is r. */
struct vat_verdict vat_reason_verdict(bool gate, double score, const char *code,
                                      const struct vat_reason *r);
/* A score-0 verdict whose reason is printf-formatted (trusted text), in
 * the SQL checker's style. */
struct vat_verdict vat_reason_verdictf(bool gate, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
