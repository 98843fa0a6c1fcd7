/* reason.c — bounded reasons: a verdict's reason built from untrusted
 * bytes, always valid UTF-8 and cut at a character boundary.
 * Part of the SQL checker: what it rests on is verifiers/sql/README.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>

#include "sql_internal.h"

/* ---- bounded reasons ------------------------------------------------------ */

/* Appends untrusted bytes: valid UTF-8 is kept, control bytes and invalid
 * bytes are escaped, and at most max bytes of s are shown ("..." after). */
void reason_text(struct reason *r, const char *s, size_t n, size_t max)
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

void reason_puts(struct reason *r, const char *s)
{
    reason_text(r, s, strlen(s), sizeof r->s);
}

void reason_printf(struct reason *r, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    reason_puts(r, tmp);
}

struct vat_verdict reason_verdict(bool gate, double score, const char *code,
                                  const struct reason *r)
{
    return vat_verdict_make(gate, score, code, "%s", r->s);
}

struct vat_verdict verdictf(bool gate, const char *code, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    struct reason r = {{0}, 0};
    reason_puts(&r, tmp);
    return reason_verdict(gate, 0, code, &r);
}
