/* jsonout.c — deterministic JSON text (see jsonout.h). */
#include "jsonout.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes x rounded to d (0 to 2) fraction digits into out, as "%.*f"
 * would when that text reads back to x; |x| < 1e12.  Returns false when
 * the rounded value is 0 (its sign is a question "%.*f" answers; the text
 * cannot read back to a nonzero x anyway). */
static bool fixed_digits(double x, int d, char out[32])
{
    static const double scale[] = {1, 10, 100};
    long long k = llround(fabs(x) * scale[d]);
    if (k == 0)
        return false;
    char digits[24];
    int n = 0;
    for (; k > 0 || n <= d; k /= 10)
        digits[n++] = (char)('0' + k % 10);
    char *p = out;
    if (x < 0)
        *p++ = '-';
    while (n > d)
        *p++ = digits[--n];
    if (d > 0) {
        *p++ = '.';
        while (n > 0)
            *p++ = digits[--n];
    }
    *p = 0;
    return true;
}

/* The fewest fraction digits d, from `from` up to `to` (3 or more), with
 * which "%.*f" of x, written in at most cap bytes as snprintf cuts it,
 * reads back as x: true with that text in out; false when none does, out
 * then holding the text at `to` digits.  fast false finds every digit
 * count by snprintf and strtod alone.  Up to two digits the fast path
 * takes the text from the rounded integer x * 10^d instead: below 1e12 a
 * double's spacing is under a thousandth of 0.01, so a d-digit decimal
 * that reads back to x is the only one that does and the one "%.*f"
 * prints. */
static bool shortest_fixed(double x, int from, int to, char *out, size_t cap, bool fast)
{
    int d = from;
    if (fast && x != 0 && fabs(x) < 1e12 && cap >= 32)
        for (; d <= 2; d++)
            if (fixed_digits(x, d, out) && strtod(out, NULL) == x)
                return true;
    for (; d <= to; d++) {
        snprintf(out, cap, "%.*f", d, x);
        if (strtod(out, NULL) == x)
            return true;
    }
    return false;
}

bool vat_fmt_fixed(double x, int from, int to, char *out, size_t cap)
{
    return shortest_fixed(x, from, to, out, cap, true);
}

/* vat_fmt_real; fast false finds every digit count by snprintf and
 * strtod alone. */
static char *fmt_real(double x, char out[32], bool fast)
{
    if (!isfinite(x)) {
        strcpy(out, "null");
        return out;
    }
    if (x == 0) {
        strcpy(out, signbit(x) ? "-0.0" : "0.0");
        return out;
    }
    double ax = fabs(x);
    int done = 0;
    /* Plain decimals for the magnitudes money and means live in (as
     * Python's repr): the fewest fraction digits that read back. */
    if (ax >= 1e-4 && ax < 1e16)
        done = shortest_fixed(x, 0, 24, out, 32, fast);
    if (!done) {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(out, 32, "%.*g", prec, x);
            if (strtod(out, NULL) == x)
                break;
        }
    }
    /* Keep reals recognisably real: "12" -> "12.0" unless an exponent is
     * present (then the text already is a JSON real). */
    if (!strpbrk(out, ".eEn"))
        strcat(out, ".0");
    return out;
}

char *vat_fmt_real(double x, char out[32])
{
    return fmt_real(x, out, true);
}

char *vat_fmt_real_by_printf(double x, char out[32])
{
    return fmt_real(x, out, false);
}

/* Whether one of the 8 bytes at p needs escaping (below 0x20, '"', '\\'
 * or 0x7f): each test is the classic "a byte is zero" on a transformed
 * word, which may flag the wrong byte of a word but never misses one, and
 * is 0 when no byte qualifies. */
static bool word_needs_escape(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w;
    memcpy(&w, p, sizeof w);
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\'), del = w ^ (ones * 0x7f);
    uint64_t hit = ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs) |
                   ((del - ones) & ~del);
    return (hit & highs) != 0;
}

static void escape_string(struct vat_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    vat_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes copied as they are */
    for (size_t i = 0; i < n; i++) {
        /* Eight bytes at a time through the stretches between escapes. */
        if (i + 8 <= n && !word_needs_escape(s + i)) {
            i += 7;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        vat_buf_putn(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': vat_buf_putn(b, "\\\"", 2); break;
        case '\\': vat_buf_putn(b, "\\\\", 2); break;
        case '\n': vat_buf_putn(b, "\\n", 2); break;
        case '\r': vat_buf_putn(b, "\\r", 2); break;
        case '\t': vat_buf_putn(b, "\\t", 2); break;
        case '\b': vat_buf_putn(b, "\\b", 2); break;
        case '\f': vat_buf_putn(b, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            vat_buf_putn(b, u, 6);
        }
        }
    }
    vat_buf_putn(b, s + run, n - run);
    vat_buf_putc(b, '"');
}

/* A task's prompt goes into three tables' rows (experience, sft_examples,
 * preference_pairs), one after the other: each thread keeps its last long
 * string and its escaped text, and a repeat of the same bytes is copied
 * out instead of escaped again. */
#define ESCAPED_MIN 512
struct escaped {
    struct vat_buf src, out;
};
static pthread_key_t escaped_key;
static pthread_once_t escaped_once = PTHREAD_ONCE_INIT;

static void escaped_free(void *p)
{
    struct escaped *x = p;
    vat_buf_release(&x->src);
    vat_buf_release(&x->out);
    free(x);
}

static void escaped_init(void)
{
    pthread_key_create(&escaped_key, escaped_free);
}

static void dump_string(struct vat_buf *b, const char *s, size_t n)
{
    if (n < ESCAPED_MIN) {
        escape_string(b, s, n);
        return;
    }
    pthread_once(&escaped_once, escaped_init);
    struct escaped *x = pthread_getspecific(escaped_key);
    if (!x) {
        x = vat_xcalloc(1, sizeof *x);
        pthread_setspecific(escaped_key, x);
    }
    if (x->src.len != n || memcmp(x->src.data, s, n) != 0) {
        x->src.len = 0;
        vat_buf_putn(&x->src, s, n);
        x->out.len = 0;
        escape_string(&x->out, s, n);
    }
    vat_buf_putn(b, x->out.data, x->out.len);
}

void vat_json_dump_buf(struct vat_buf *b, const json_t *v)
{
    char num[32];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        vat_buf_putc(b, '{');
        const char *k;
        json_t *x;
        int first = 1;
        /* jansson 2.14 keeps insertion order, which is our fixed key order. */
        json_object_foreach((json_t *)v, k, x) {
            if (!first)
                vat_buf_putc(b, ',');
            first = 0;
            dump_string(b, k, strlen(k));
            vat_buf_putc(b, ':');
            vat_json_dump_buf(b, x);
        }
        vat_buf_putc(b, '}');
        break;
    }
    case JSON_ARRAY: {
        vat_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                vat_buf_putc(b, ',');
            vat_json_dump_buf(b, json_array_get(v, i));
        }
        vat_buf_putc(b, ']');
        break;
    }
    case JSON_STRING:
        dump_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        vat_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        vat_buf_puts(b, vat_fmt_real(json_real_value(v), num));
        break;
    case JSON_TRUE: vat_buf_puts(b, "true"); break;
    case JSON_FALSE: vat_buf_puts(b, "false"); break;
    case JSON_NULL: vat_buf_puts(b, "null"); break;
    }
}

char *vat_json_dumps(const json_t *v)
{
    struct vat_buf b = VAT_BUF_INIT;
    vat_json_dump_buf(&b, v);
    return vat_buf_detach(&b);
}

/* ---- writing a row -------------------------------------------------------- */

void vat_jw_begin(struct vat_jw *w, struct vat_buf *b)
{
    w->b = b;
    w->depth = 1;
    w->more[0] = false;
    w->close[0] = '}';
    vat_buf_putc(b, '{');
}

/* Starts a member: the comma before all but the first, then "key":. */
static void jw_member(struct vat_jw *w, const char *key)
{
    bool *more = &w->more[w->depth - 1];
    if (*more)
        vat_buf_putc(w->b, ',');
    *more = true;
    if (key) {
        vat_buf_putc(w->b, '"');
        vat_buf_puts(w->b, key);
        vat_buf_putn(w->b, "\":", 2);
    }
}

static void jw_open(struct vat_jw *w, const char *key, char open, char close)
{
    if (w->depth == VAT_JW_DEPTH)
        abort(); /* a row nests a handful deep: a caller's bug */
    jw_member(w, key);
    vat_buf_putc(w->b, open);
    w->more[w->depth] = false;
    w->close[w->depth++] = close;
}

void vat_jw_object(struct vat_jw *w, const char *key)
{
    jw_open(w, key, '{', '}');
}

void vat_jw_array(struct vat_jw *w, const char *key)
{
    jw_open(w, key, '[', ']');
}

void vat_jw_end(struct vat_jw *w)
{
    if (w->depth > 0)
        vat_buf_putc(w->b, w->close[--w->depth]);
}

static void jw_stringn(struct vat_jw *w, const char *key, const char *s, size_t n)
{
    if (vat_utf8_prefix(s, n) != n)
        return;
    jw_member(w, key);
    dump_string(w->b, s, n);
}

void vat_jw_string(struct vat_jw *w, const char *key, const char *s)
{
    if (s)
        jw_stringn(w, key, s, strlen(s));
}

void vat_jw_stringf(struct vat_jw *w, const char *key, const char *fmt, ...)
{
    struct vat_buf t = VAT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    vat_buf_vprintf(&t, fmt, ap);
    va_end(ap);
    jw_stringn(w, key, t.data ? t.data : "", t.len);
    vat_buf_release(&t);
}

void vat_jw_int(struct vat_jw *w, const char *key, long long x)
{
    char d[24];
    jw_member(w, key);
    vat_buf_puts(w->b, vat_fmt_int(x, 0, d));
}

void vat_jw_bool(struct vat_jw *w, const char *key, bool x)
{
    jw_member(w, key);
    vat_buf_puts(w->b, x ? "true" : "false");
}

void vat_jw_real(struct vat_jw *w, const char *key, double x)
{
    char num[32];
    if (!isfinite(x))
        return;
    jw_member(w, key);
    vat_buf_puts(w->b, vat_fmt_real(x, num));
}

void vat_jw_value(struct vat_jw *w, const char *key, const json_t *v)
{
    if (!v)
        return;
    jw_member(w, key);
    vat_json_dump_buf(w->b, v);
}

void vat_jw_text(struct vat_jw *w, const char *key, const json_t *v)
{
    if (!v)
        return;
    struct vat_buf t = VAT_BUF_INIT;
    vat_json_dump_buf(&t, v);
    jw_stringn(w, key, t.data ? t.data : "", t.len);
    vat_buf_release(&t);
}

/* ---- reading members of a row -------------------------------------------- */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* Whether one of the 8 bytes at p is '"' or '\\' (the test of
 * word_needs_escape, for those two). */
static bool word_has_quote(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w;
    memcpy(&w, p, sizeof w);
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return ((((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs) != 0;
}

/* The end of the string starting at s[i] == '"', or 0 when unterminated.
 * A prompt's long stretches without a quote or a backslash are stepped
 * over eight bytes at a time. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (i + 8 <= n && !word_has_quote(s + i)) {
            i += 7;
            continue;
        }
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/* The end of the value starting at s[i], or 0 when it does not end. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    if (s[i] == '"')
        return skip_string(s, n, i);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        for (; i < n; i++) {
            if (s[i] == '"') {
                size_t e = skip_string(s, n, i);
                if (!e)
                    return 0;
                i = e - 1;
            } else if (s[i] == '{' || s[i] == '[') {
                depth++;
            } else if ((s[i] == '}' || s[i] == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return 0;
    }
    size_t j = i;
    while (j < n && s[j] != ',' && s[j] != '}' && s[j] != ' ' && s[j] != '\t' &&
           s[j] != '\n' && s[j] != '\r')
        j++;
    return j > i ? j : 0;
}

int vat_json_members(const char *s, size_t n, const char *const *keys, size_t nkeys,
                     json_t **out)
{
    for (size_t k = 0; k < nkeys; k++)
        out[k] = NULL;
    size_t i = skip_ws(s, n, 0);
    if (i >= n || s[i] != '{')
        return -1;
    i = skip_ws(s, n, i + 1);
    if (i < n && s[i] == '}')
        return skip_ws(s, n, i + 1) == n ? 0 : -1;
    for (;;) {
        if (i >= n || s[i] != '"')
            break;
        size_t kend = skip_string(s, n, i);
        if (!kend)
            break;
        size_t v = skip_ws(s, n, kend);
        if (v >= n || s[v] != ':')
            break;
        v = skip_ws(s, n, v + 1);
        size_t vend = skip_value(s, n, v);
        if (!vend)
            break;
        for (size_t k = 0; k < nkeys; k++)
            if (!out[k] && strlen(keys[k]) == kend - i - 2 &&
                memcmp(s + i + 1, keys[k], kend - i - 2) == 0) {
                out[k] = json_loadb(s + v, vend - v, JSON_DECODE_ANY, NULL);
                if (!out[k])
                    goto bad;
            }
        i = skip_ws(s, n, vend);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == '}' && skip_ws(s, n, i + 1) == n)
            return 0;
        break;
    }
bad:
    for (size_t k = 0; k < nkeys; k++) {
        json_decref(out[k]);
        out[k] = NULL;
    }
    return -1;
}
