/* reason.c — the one bounded-reason builder of the checkers (reason.h).
 * Exports the vat_reason_* functions. */
#include "reason.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends n bytes, stopping before a character that would not fit. */
static void reason_putn(struct vat_reason *r, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = vat_utf8_seq((const unsigned char *)s + i, n - i);
        if (k == 0 || r->n + k > sizeof r->s - 1)
            break;
        memcpy(r->s + r->n, s + i, k);
        r->n += k;
        i += k;
    }
    r->s[r->n] = '\0';
}

void vat_reason_puts(struct vat_reason *r, const char *s)
{
    reason_putn(r, s, strlen(s));
}

void vat_reason_printf(struct vat_reason *r, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    /* a truncated tail may end mid-character: reason_putn drops it */
    reason_putn(r, tmp, strlen(tmp));
}

void vat_reason_cut(struct vat_reason *r, size_t n)
{
    if (n >= r->n)
        return;
    while (n > 0 && ((unsigned char)r->s[n] & 0xC0) == 0x80)
        n--;
    r->n = n;
    r->s[n] = '\0';
}

void vat_reason_escape(struct vat_reason *r, const char *s, size_t n, size_t max, bool esc_quote)
{
    static const char hex[] = "0123456789abcdef";
    size_t used = 0, i = 0;
    while (i < n) {
        const unsigned char c = (unsigned char)s[i];
        size_t k = vat_utf8_seq((const unsigned char *)s + i, n - i);
        char piece[8];
        size_t plen;
        if (k == 1 && (c == '\n' || c == '\t')) {
            piece[0] = '\\';
            piece[1] = c == '\n' ? 'n' : 't';
            plen = 2;
        } else if (k == 0 || (k == 1 && (c < 0x20 || c == 0x7f))) {
            piece[0] = '\\';
            piece[1] = 'x';
            piece[2] = hex[c >> 4];
            piece[3] = hex[c & 15];
            plen = 4;
            k = 1;
        } else if (esc_quote && (c == '\'' || c == '\\')) {
            piece[0] = '\\';
            piece[1] = (char)c;
            plen = 2;
        } else {
            memcpy(piece, s + i, k);
            plen = k;
        }
        if (used + plen > max) {
            vat_reason_puts(r, "...");
            return;
        }
        reason_putn(r, piece, plen);
        used += plen;
        i += k;
    }
}

void vat_reason_text(struct vat_reason *r, const char *s, size_t n, size_t max, bool quoted)
{
    if (quoted)
        vat_reason_puts(r, "'");
    vat_reason_escape(r, s, n, max, quoted);
    if (quoted)
        vat_reason_puts(r, "'");
}

/* Appends untrusted bytes: valid UTF-8 is kept, control bytes and invalid
 * bytes are escaped, and at most max bytes of s are shown ("..." after). */
void vat_reason_esc(struct vat_reason *r, const char *s, size_t n, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t shown = 0;
    for (size_t i = 0; i < n;) {
        char esc[8];
        const char *piece;
        size_t plen, k = vat_utf8_seq(u + i, n - i);
        if (shown >= max) {
            piece = "...";
            plen = 3;
            if (r->n + plen < sizeof r->s) {
                memcpy(r->s + r->n, piece, plen);
                r->n += plen;
            }
            break;
        }
        if (k == 1 && (u[i] < 0x20 || u[i] == 0x7f)) {
            snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            piece = esc;
            plen = 4;
        } else if (k == 0) {
            snprintf(esc, sizeof esc, "\\x%02x", u[i]);
            piece = esc;
            plen = 4;
            k = 1;
        } else {
            piece = s + i;
            plen = k;
        }
        if (r->n + plen >= sizeof r->s)
            break;
        memcpy(r->s + r->n, piece, plen);
        r->n += plen;
        r->s[r->n] = 0;
        shown += k;
        i += k;
    }
    r->s[r->n] = 0;
}

void vat_reason_esc_puts(struct vat_reason *r, const char *s)
{
    vat_reason_esc(r, s, strlen(s), sizeof r->s);
}

void vat_reason_esc_printf(struct vat_reason *r, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    vat_reason_esc_puts(r, tmp);
}

struct vat_verdict vat_reason_verdict(bool gate, double score, const char *code,
                                      const struct vat_reason *r)
{
    return vat_verdict_make(gate, score, code, "%s", r->s);
}

struct vat_verdict vat_reason_verdictf(bool gate, const char *code, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    struct vat_reason r = {{0}, 0};
    vat_reason_esc_puts(&r, tmp);
    return vat_reason_verdict(gate, 0, code, &r);
}

/* Appends s[0..n) quoted and escaped, in at most max bytes ("..." marks
 * a cut).  Only ASCII reaches the reason, so a cut never splits UTF-8. */
void vat_reason_quote_ascii(struct vat_reason *r, const char *s, size_t n, size_t max)
{
    size_t start = r->n;
    vat_reason_puts(r, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        if (c == '"' || c == '\\')
            snprintf(tmp, sizeof tmp, "\\%c", c);
        else if (c == '\n')
            snprintf(tmp, sizeof tmp, "\\n");
        else if (c == '\t')
            snprintf(tmp, sizeof tmp, "\\t");
        else if (c < 0x20 || c >= 0x7f)
            snprintf(tmp, sizeof tmp, "\\x%02x", c);
        else
            snprintf(tmp, sizeof tmp, "%c", c);
        if (r->n - start + strlen(tmp) + 4 > max) {
            vat_reason_puts(r, "...");
            break;
        }
        vat_reason_puts(r, tmp);
    }
    vat_reason_puts(r, "\"");
}
