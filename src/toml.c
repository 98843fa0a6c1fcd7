/* toml.c — the seeds.toml reader: the TOML subset described in toml.h,
 * parsed into a jansson tree plus a "dotted.key.path" -> line map.
 * Anything outside the subset is an error with PATH:LINE: reason rather
 * than something skipped, so a typo can never silently change a corpus.
 * Exports vat_toml_parse and vat_toml_path_append. */
#include "toml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END (-1)

/* A key path longer than this is refused: seeds.toml never needs one, and
 * the cap keeps hostile input from costing quadratic time in path copies. */
#define MAX_PATH 1024

/* How a table came to exist.  TOML lets a header define a table that an
 * earlier header only implied, lets headers add sub-tables below tables
 * made by dotted keys, and forbids every other redefinition. */
enum tbl_kind { TBL_IMPLICIT = 1, TBL_HEADER, TBL_DOTTED };

struct parser {
    const char *s;
    size_t n, i;
    long line;
    const char *path;
    struct vat_err *e;
    json_t *root;
    json_t *lines;  /* rendered path -> line, handed to the caller        */
    json_t *kinds;  /* rendered table path -> enum tbl_kind (private)     */
    json_t *cur;    /* the table key/value lines go into                  */
    char *cur_path; /* its rendered path; "" for the root                 */
};

/* The segments of one (possibly dotted) key, each a NUL-free string. */
struct key {
    char **seg;
    size_t n, cap;
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int perr(struct parser *p, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vat_err_set(p->e, "%s:%ld: %s", p->path, p->line, msg);
}

/* Returns the length of the valid UTF-8 sequence at u (at most avail
 * bytes), or 0 when it is malformed, overlong, a surrogate or > U+10FFFF. */
static size_t utf8_seq(const unsigned char *u, size_t avail)
{
    static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t cp;
    size_t len;
    if (u[0] < 0x80)
        return 1;
    if ((u[0] & 0xE0) == 0xC0) {
        len = 2;
        cp = u[0] & 0x1Fu;
    } else if ((u[0] & 0xF0) == 0xE0) {
        len = 3;
        cp = u[0] & 0x0Fu;
    } else if ((u[0] & 0xF8) == 0xF0) {
        len = 4;
        cp = u[0] & 0x07u;
    } else {
        return 0;
    }
    if (avail < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((u[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (u[k] & 0x3Fu);
    }
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static void put_utf8(struct vat_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    vat_buf_putn(b, u, n);
}

static bool is_bare(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* TOML forbids raw control characters other than tab in strings and
 * comments. */
static bool is_control(int c)
{
    return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7F;
}

static int at(const struct parser *p)
{
    return p->i < p->n ? (unsigned char)p->s[p->i] : END;
}

static int peek(const struct parser *p, size_t ahead)
{
    return p->i + ahead < p->n ? (unsigned char)p->s[p->i + ahead] : END;
}

static bool at_eol(const struct parser *p)
{
    return at(p) == '\n' || (at(p) == '\r' && peek(p, 1) == '\n');
}

static void eat_eol(struct parser *p)
{
    p->i += at(p) == '\r' ? 2 : 1;
    p->line++;
}

static void skip_ws(struct parser *p)
{
    while (at(p) == ' ' || at(p) == '\t')
        p->i++;
}

/* Writes a printable rendering of the character at p (for messages). */
static const char *describe_here(const struct parser *p, char out[16])
{
    int c = at(p);
    if (c == END)
        snprintf(out, 16, "end of file");
    else if (at_eol(p))
        snprintf(out, 16, "end of line");
    else if (c >= 0x80)
        snprintf(out, 16, "'%.*s'", (int)utf8_seq((const unsigned char *)p->s + p->i, p->n - p->i),
                 p->s + p->i);
    else if (is_control(c))
        snprintf(out, 16, "byte 0x%02x", (unsigned)c);
    else
        snprintf(out, 16, "'%c'", c);
    return out;
}

/* At '#': consumes the comment up to (not including) the line end. */
static int skip_comment(struct parser *p)
{
    for (p->i++;; p->i++) {
        int c = at(p);
        if (c == END || at_eol(p))
            return 0;
        if (c == '\r')
            return perr(p, "bare carriage return");
        if (is_control(c))
            return perr(p, "control character 0x%02x in comment", (unsigned)c);
    }
}

/* Skips blanks, line ends and comments (inside arrays). */
static int skip_ws_nl(struct parser *p)
{
    for (;;) {
        skip_ws(p);
        if (at_eol(p))
            eat_eol(p);
        else if (at(p) == '#') {
            if (skip_comment(p) < 0)
                return -1;
        } else if (at(p) == '\r')
            return perr(p, "bare carriage return");
        else
            return 0;
    }
}

/* After a statement: optional blanks and comment, then a line end or EOF. */
static int end_of_line(struct parser *p, const char *after)
{
    skip_ws(p);
    if (at(p) == '#' && skip_comment(p) < 0)
        return -1;
    if (at(p) == END)
        return 0;
    if (at_eol(p)) {
        eat_eol(p);
        return 0;
    }
    if (at(p) == '\r')
        return perr(p, "bare carriage return");
    return perr(p, "unexpected text after %s", after);
}

/* ---- paths ------------------------------------------------------------- */

static void path_put(struct vat_buf *b, const char *key)
{
    static const char hex[] = "0123456789abcdef";
    bool bare = *key != 0;
    for (const char *k = key; *k && bare; k++)
        bare = is_bare((unsigned char)*k);
    if (b->len)
        vat_buf_putc(b, '.');
    if (bare) {
        vat_buf_puts(b, key);
        return;
    }
    vat_buf_putc(b, '"');
    for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
        switch (*k) {
        case '"': vat_buf_puts(b, "\\\""); break;
        case '\\': vat_buf_puts(b, "\\\\"); break;
        case '\b': vat_buf_puts(b, "\\b"); break;
        case '\t': vat_buf_puts(b, "\\t"); break;
        case '\n': vat_buf_puts(b, "\\n"); break;
        case '\f': vat_buf_puts(b, "\\f"); break;
        case '\r': vat_buf_puts(b, "\\r"); break;
        default:
            if (is_control(*k)) {
                char u[7] = {'\\', 'u', '0', '0', hex[*k >> 4], hex[*k & 15], 0};
                vat_buf_puts(b, u);
            } else {
                vat_buf_putc(b, (char)*k);
            }
        }
    }
    vat_buf_putc(b, '"');
}

char *vat_toml_path_append(const char *prefix, const char *key)
{
    struct vat_buf b = VAT_BUF_INIT;
    if (prefix)
        vat_buf_puts(&b, prefix);
    path_put(&b, key);
    return vat_buf_detach(&b);
}

/* The key as written, for messages about it. */
static char *key_written(const struct key *k, size_t upto)
{
    struct vat_buf b = VAT_BUF_INIT;
    for (size_t j = 0; j < upto; j++)
        path_put(&b, k->seg[j]);
    return vat_buf_detach(&b);
}

static void key_release(struct key *k)
{
    for (size_t j = 0; j < k->n; j++)
        free(k->seg[j]);
    free(k->seg);
    memset(k, 0, sizeof *k);
}

static int get_kind(const struct parser *p, const char *path)
{
    return (int)json_integer_value(json_object_get(p->kinds, path));
}

static void set_kind(struct parser *p, const char *path, int kind)
{
    json_object_set_new(p->kinds, path, json_integer(kind));
}

static void set_line(struct parser *p, const char *path, long line)
{
    json_object_set_new(p->lines, path, json_integer(line));
}

/* ---- strings ----------------------------------------------------------- */

static int parse_hex_escape(struct parser *p, struct vat_buf *b, int width)
{
    /* p->i is at the 'u' / 'U' */
    uint32_t cp = 0;
    int got = 0;
    while (got < width && p->i + 1 + (size_t)got < p->n) {
        int c = (unsigned char)p->s[p->i + 1 + (size_t)got];
        int v = is_digit(c) ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
              : -1;
        if (v < 0)
            break;
        cp = (cp << 4) | (uint32_t)v;
        got++;
    }
    if (got < width || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return perr(p, "invalid unicode escape '\\%.*s'", got + 1, p->s + p->i);
    /* A NUL would silently cut every C string the value later becomes. */
    if (cp == 0)
        return perr(p, "nul character in string");
    put_utf8(b, cp);
    p->i += 1 + (size_t)width;
    return 0;
}

/* At '"': a one-line basic string with escapes, into b. */
static int parse_basic(struct parser *p, struct vat_buf *b)
{
    if (peek(p, 1) == '"' && peek(p, 2) == '"')
        return perr(p, "multi-line strings are not supported");
    p->i++;
    for (;;) {
        int c = at(p);
        if (c == END || at_eol(p))
            return perr(p, "unterminated string");
        if (c == '"') {
            p->i++;
            return 0;
        }
        if (c == '\\') {
            p->i++;
            int x = at(p);
            char out[16];
            switch (x) {
            case 'b': vat_buf_putc(b, '\b'); break;
            case 't': vat_buf_putc(b, '\t'); break;
            case 'n': vat_buf_putc(b, '\n'); break;
            case 'f': vat_buf_putc(b, '\f'); break;
            case 'r': vat_buf_putc(b, '\r'); break;
            case '"': vat_buf_putc(b, '"'); break;
            case '\\': vat_buf_putc(b, '\\'); break;
            case 'u':
            case 'U':
                if (parse_hex_escape(p, b, x == 'u' ? 4 : 8) < 0)
                    return -1;
                continue;
            default:
                if (x == END || at_eol(p))
                    return perr(p, "unterminated string");
                if (is_control(x) || x == '\r' || x == ' ')
                    return perr(p, "invalid escape: backslash followed by %s",
                                describe_here(p, out));
                if (x >= 0x80)
                    return perr(p, "invalid escape '\\%.*s'",
                                (int)utf8_seq((const unsigned char *)p->s + p->i, p->n - p->i),
                                p->s + p->i);
                return perr(p, "invalid escape '\\%c'", x);
            }
            p->i++;
            continue;
        }
        if (c == '\r')
            return perr(p, "bare carriage return");
        if (is_control(c))
            return perr(p, "control character 0x%02x in string", (unsigned)c);
        vat_buf_putc(b, (char)c);
        p->i++;
    }
}

/* At '\'': a one-line literal string (no escapes), into b. */
static int parse_literal(struct parser *p, struct vat_buf *b)
{
    if (peek(p, 1) == '\'' && peek(p, 2) == '\'')
        return perr(p, "multi-line strings are not supported");
    p->i++;
    for (;;) {
        int c = at(p);
        if (c == END || at_eol(p))
            return perr(p, "unterminated string");
        if (c == '\'') {
            p->i++;
            return 0;
        }
        if (c == '\r')
            return perr(p, "bare carriage return");
        if (is_control(c))
            return perr(p, "control character 0x%02x in string", (unsigned)c);
        vat_buf_putc(b, (char)c);
        p->i++;
    }
}

/* ---- keys -------------------------------------------------------------- */

/* Parses a bare, quoted or dotted key (blanks allowed around the dots),
 * leaving p after the trailing blanks.  expected names what was wanted. */
static int parse_key(struct parser *p, struct key *k, const char *expected)
{
    size_t text_len = 0;
    for (;;) {
        skip_ws(p);
        int c = at(p);
        struct vat_buf b = VAT_BUF_INIT;
        if (c == '"' || c == '\'') {
            if ((c == '"' ? parse_basic(p, &b) : parse_literal(p, &b)) < 0) {
                vat_buf_release(&b);
                return -1;
            }
        } else if (is_bare(c)) {
            size_t start = p->i;
            while (is_bare(at(p)))
                p->i++;
            vat_buf_putn(&b, p->s + start, p->i - start);
        } else {
            char out[16];
            return perr(p, "%s, found %s", expected, describe_here(p, out));
        }
        text_len += b.len + 1;
        if (k->n == k->cap) {
            k->cap = k->cap ? 2 * k->cap : 4;
            k->seg = vat_xrealloc(k->seg, k->cap * sizeof *k->seg);
        }
        k->seg[k->n++] = vat_buf_detach(&b);
        if (text_len > MAX_PATH)
            return perr(p, "key longer than %d bytes", MAX_PATH);
        skip_ws(p);
        if (at(p) != '.')
            return 0;
        p->i++;
    }
}

/* ---- values ------------------------------------------------------------ */

/* Scans digits with single underscores between them, from t[*k] (a digit). */
static int scan_digits(struct parser *p, const char *t, size_t m, size_t *k)
{
    while (*k < m) {
        if (is_digit((unsigned char)t[*k]))
            (*k)++;
        else if (t[*k] == '_') {
            if (*k + 1 >= m || !is_digit((unsigned char)t[*k + 1]))
                return perr(p, "misplaced underscore in number");
            (*k)++;
        } else
            break;
    }
    return 0;
}

static json_t *parse_number(struct parser *p, const char *t, size_t m)
{
    size_t k = 0;
    bool is_float = false;
    int shown = m > 40 ? 40 : (int)m;
    if (t[k] == '+' || t[k] == '-')
        k++;
    if (k >= m || !is_digit((unsigned char)t[k]))
        goto invalid;
    if (t[k] == '0' && k + 1 < m && (is_digit((unsigned char)t[k + 1]) || t[k + 1] == '_')) {
        perr(p, "leading zeros are not allowed");
        return NULL;
    }
    if (scan_digits(p, t, m, &k) < 0)
        return NULL;
    if (k < m && t[k] == '.') {
        is_float = true;
        k++;
        if (k >= m || !is_digit((unsigned char)t[k]))
            goto invalid;
        if (scan_digits(p, t, m, &k) < 0)
            return NULL;
    }
    if (k < m && (t[k] == 'e' || t[k] == 'E')) {
        is_float = true;
        k++;
        if (k < m && (t[k] == '+' || t[k] == '-'))
            k++;
        if (k >= m || !is_digit((unsigned char)t[k]))
            goto invalid;
        if (scan_digits(p, t, m, &k) < 0)
            return NULL;
    }
    if (k != m)
        goto invalid;

    char *clean = vat_xmalloc(m + 1);
    size_t c = 0;
    for (size_t j = 0; j < m; j++)
        if (t[j] != '_')
            clean[c++] = t[j];
    clean[c] = 0;
    json_t *v = NULL;
    errno = 0;
    if (!is_float) {
        long long x = strtoll(clean, NULL, 10);
        if (errno == ERANGE)
            perr(p, "integer out of range");
        else
            v = json_integer((json_int_t)x);
    } else {
        /* vat never calls setlocale, so strtod reads '.' as the point. */
        double d = strtod(clean, NULL);
        /* Overflow, and underflow all the way to zero, would change the
         * value written; a subnormal result is still the nearest double. */
        if (!isfinite(d) || (errno == ERANGE && d == 0))
            perr(p, "float out of range");
        else
            v = json_real(d);
    }
    free(clean);
    return v;

invalid:
    perr(p, "invalid number '%.*s%s'", shown, t, (size_t)shown < m ? "..." : "");
    return NULL;
}

/* A bare token: boolean, number, or one of the unsupported forms. */
static json_t *parse_bare_value(struct parser *p)
{
    size_t start = p->i;
    while (is_bare(at(p)) || at(p) == '+' || at(p) == '.' || at(p) == ':')
        p->i++;
    const char *t = p->s + start;
    size_t m = p->i - start;
    int shown = m > 40 ? 40 : (int)m;
    const char *more = (size_t)shown < m ? "..." : "";
    if (m == 0) {
        char out[16];
        perr(p, "expected a value, found %s", describe_here(p, out));
        return NULL;
    }
    if (m == 4 && memcmp(t, "true", 4) == 0)
        return json_true();
    if (m == 5 && memcmp(t, "false", 5) == 0)
        return json_false();
    const char *u = t + (t[0] == '+' || t[0] == '-');
    size_t um = m - (size_t)(u - t);
    if (um == 3 && (memcmp(u, "inf", 3) == 0 || memcmp(u, "nan", 3) == 0)) {
        perr(p, "nan and inf are not allowed");
        return NULL;
    }
    if ((m >= 5 && is_digit((unsigned char)t[0]) && is_digit((unsigned char)t[1]) &&
         is_digit((unsigned char)t[2]) && is_digit((unsigned char)t[3]) && t[4] == '-') ||
        (m >= 3 && is_digit((unsigned char)t[0]) && is_digit((unsigned char)t[1]) &&
         t[2] == ':')) {
        perr(p, "dates and times are not supported");
        return NULL;
    }
    if (um >= 2 && u[0] == '0' && (u[1] == 'x' || u[1] == 'o' || u[1] == 'b')) {
        perr(p, "hex, octal and binary integers are not supported");
        return NULL;
    }
    if (is_digit((unsigned char)t[0]) || t[0] == '+' || t[0] == '-' || t[0] == '.')
        return parse_number(p, t, m);
    perr(p, "invalid value '%.*s%s'", shown, t, more);
    return NULL;
}

/* The array's element type, with true and false as one type. */
static int value_class(const json_t *v)
{
    return json_is_boolean(v) ? JSON_TRUE : (int)json_typeof(v);
}

static json_t *parse_value(struct parser *p, bool in_array);

static json_t *parse_array(struct parser *p)
{
    long start = p->line;
    json_t *arr = json_array();
    int cls = -1;
    p->i++;
    for (;;) {
        if (skip_ws_nl(p) < 0)
            goto fail;
        if (at(p) == END)
            goto unterminated;
        if (at(p) == ']') {
            p->i++;
            return arr;
        }
        json_t *v = parse_value(p, true);
        if (!v)
            goto fail;
        if (cls < 0)
            cls = value_class(v);
        else if (value_class(v) != cls) {
            json_decref(v);
            perr(p, "mixed types in array");
            goto fail;
        }
        json_array_append_new(arr, v);
        if (skip_ws_nl(p) < 0)
            goto fail;
        if (at(p) == ',') {
            p->i++;
        } else if (at(p) == ']') {
            p->i++;
            return arr;
        } else if (at(p) == END) {
            goto unterminated;
        } else {
            char out[16];
            perr(p, "expected ',' or ']' in array, found %s", describe_here(p, out));
            goto fail;
        }
    }
unterminated:
    p->line = start;
    perr(p, "unterminated array");
fail:
    json_decref(arr);
    return NULL;
}

/* A key, then '=' and the blanks after it. */
static int parse_key_eq(struct parser *p, struct key *k, const char *expected)
{
    if (parse_key(p, k, expected) < 0)
        return -1;
    if (at(p) != '=')
        return perr(p, "expected '=' after key");
    p->i++;
    skip_ws(p);
    return 0;
}

/* `{ k = v, ... }` on one line: single-segment keys, scalar or array
 * values (an inline table inside one is refused), no trailing comma. */
static json_t *parse_inline_table(struct parser *p)
{
    json_t *obj = json_object();
    struct key k = {0};
    p->i++;
    skip_ws(p);
    if (at(p) == '}') {
        p->i++;
        return obj;
    }
    for (;;) {
        if (parse_key_eq(p, &k, "expected a key in inline table") < 0)
            goto fail;
        if (k.n != 1) {
            perr(p, "dotted keys in inline tables are not supported");
            goto fail;
        }
        if (json_object_get(obj, k.seg[0])) {
            perr(p, "duplicate key '%s' in inline table", k.seg[0]);
            goto fail;
        }
        if (at(p) == '{') {
            perr(p, "nested inline tables are not supported");
            goto fail;
        }
        json_t *v = parse_value(p, false);
        if (!v)
            goto fail;
        json_object_set_new(obj, k.seg[0], v);
        key_release(&k);
        skip_ws(p);
        if (at(p) == ',') {
            p->i++;
            skip_ws(p);
        } else if (at(p) == '}') {
            p->i++;
            return obj;
        } else {
            char out[16];
            perr(p, "expected ',' or '}' in inline table, found %s", describe_here(p, out));
            goto fail;
        }
    }
fail:
    key_release(&k);
    json_decref(obj);
    return NULL;
}

static json_t *parse_value(struct parser *p, bool in_array)
{
    int c = at(p);
    if (c == '"' || c == '\'') {
        struct vat_buf b = VAT_BUF_INIT;
        json_t *v = NULL;
        if ((c == '"' ? parse_basic(p, &b) : parse_literal(p, &b)) == 0) {
            v = json_stringn(b.data ? b.data : "", b.len);
            if (!v)
                perr(p, "invalid utf-8 in string");
        }
        vat_buf_release(&b);
        return v;
    }
    if (c == '[') {
        if (in_array) {
            perr(p, "nested arrays are not supported");
            return NULL;
        }
        return parse_array(p);
    }
    if (c == '{') {
        if (in_array) {
            perr(p, "inline tables inside arrays are not supported");
            return NULL;
        }
        return parse_inline_table(p);
    }
    return parse_bare_value(p);
}

/* ---- statements -------------------------------------------------------- */

/* `[a.b.c]`: defines the table and makes it current. */
static int parse_header(struct parser *p)
{
    struct key k = {0};
    struct vat_buf path = VAT_BUF_INIT;
    json_t *t = p->root;
    if (peek(p, 1) == '[')
        return perr(p, "arrays of tables are not supported");
    p->i++;
    if (parse_key(p, &k, "expected a table name") < 0)
        goto fail;
    if (at(p) != ']') {
        perr(p, "expected ']' after table name");
        goto fail;
    }
    p->i++;
    for (size_t j = 0; j < k.n; j++) {
        bool last = j + 1 == k.n;
        path_put(&path, k.seg[j]);
        if (path.len > MAX_PATH) {
            perr(p, "key longer than %d bytes", MAX_PATH);
            goto fail;
        }
        json_t *child = json_object_get(t, k.seg[j]);
        if (!child) {
            child = json_object();
            json_object_set_new(t, k.seg[j], child);
            set_kind(p, path.data, last ? TBL_HEADER : TBL_IMPLICIT);
            set_line(p, path.data, p->line);
        } else if (!json_is_object(child)) {
            perr(p, "key '%s' is already a value, not a table", path.data);
            goto fail;
        } else if (last) {
            int kind = get_kind(p, path.data);
            if (kind == TBL_HEADER) {
                perr(p, "table '%s' defined twice", path.data);
                goto fail;
            }
            if (kind == TBL_DOTTED) {
                perr(p, "table '%s' already defined by dotted keys", path.data);
                goto fail;
            }
            set_kind(p, path.data, TBL_HEADER);
            set_line(p, path.data, p->line);
        }
        t = child;
    }
    key_release(&k);
    free(p->cur_path);
    p->cur_path = vat_buf_detach(&path);
    p->cur = t;
    return 0;
fail:
    key_release(&k);
    vat_buf_release(&path);
    return -1;
}

/* `key = value` into the current table; dotted keys create tables. */
static int parse_keyval(struct parser *p)
{
    struct key k = {0};
    struct vat_buf path = VAT_BUF_INIT;
    json_t *t = p->cur;
    char *written = NULL;
    long line = p->line;
    vat_buf_puts(&path, p->cur_path);
    if (parse_key_eq(p, &k, "expected a key") < 0)
        goto fail;
    for (size_t j = 0; j < k.n; j++) {
        path_put(&path, k.seg[j]);
        if (path.len > MAX_PATH) {
            perr(p, "key longer than %d bytes", MAX_PATH);
            goto fail;
        }
        json_t *child = json_object_get(t, k.seg[j]);
        if (j + 1 == k.n) {
            if (child) {
                written = key_written(&k, k.n);
                perr(p, "duplicate key '%s'", written);
                goto fail;
            }
            break;
        }
        if (!child) {
            child = json_object();
            json_object_set_new(t, k.seg[j], child);
            set_kind(p, path.data, TBL_DOTTED);
            set_line(p, path.data, line);
        } else if (!json_is_object(child)) {
            perr(p, "key '%s' is already a value, not a table", path.data);
            goto fail;
        } else if (get_kind(p, path.data) != TBL_DOTTED) {
            perr(p, "table '%s' was made by a table header; dotted keys cannot extend it",
                 path.data);
            goto fail;
        }
        t = child;
    }
    json_t *v = parse_value(p, false);
    if (!v)
        goto fail;
    json_object_set_new(t, k.seg[k.n - 1], v);
    set_line(p, path.data, line);
    key_release(&k);
    vat_buf_release(&path);
    return 0;
fail:
    free(written);
    key_release(&k);
    vat_buf_release(&path);
    return -1;
}

/* Rejects NUL bytes and invalid UTF-8 up front, so later stages (and
 * jansson, which refuses invalid UTF-8) never meet them. */
static int prescan(struct parser *p)
{
    const unsigned char *u = (const unsigned char *)p->s;
    long line = 1;
    for (size_t i = p->i; i < p->n;) {
        if (u[i] == 0 || u[i] >= 0x80) {
            size_t k = u[i] ? utf8_seq(u + i, p->n - i) : 0;
            if (k == 0) {
                p->line = line;
                return perr(p, "%s", u[i] ? "invalid utf-8" : "nul byte in input");
            }
            i += k;
            continue;
        }
        if (u[i] == '\n')
            line++;
        i++;
    }
    return 0;
}

json_t *vat_toml_parse(const char *text, size_t len, const char *path, json_t **lines,
                       struct vat_err *e)
{
    struct parser p = {.s = text, .n = len, .line = 1, .path = path, .e = e};
    int rc = 0;
    if (lines)
        *lines = NULL;
    if (!text)
        p.n = 0;
    /* A UTF-8 byte order mark is allowed and means nothing. */
    if (p.n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        p.i = 3;
    if (prescan(&p) < 0)
        return NULL;
    p.root = json_object();
    p.lines = json_object();
    p.kinds = json_object();
    p.cur = p.root;
    p.cur_path = vat_xstrdup("");
    while (rc == 0) {
        skip_ws(&p);
        int c = at(&p);
        if (c == END)
            break;
        if (at_eol(&p))
            eat_eol(&p);
        else if (c == '#')
            rc = skip_comment(&p) < 0 ? -1 : end_of_line(&p, "comment");
        else if (c == '[')
            rc = parse_header(&p) < 0 ? -1 : end_of_line(&p, "table header");
        else if (c == '\r')
            rc = perr(&p, "bare carriage return");
        else
            rc = parse_keyval(&p) < 0 ? -1 : end_of_line(&p, "value");
    }
    free(p.cur_path);
    json_decref(p.kinds);
    if (rc < 0) {
        json_decref(p.root);
        json_decref(p.lines);
        return NULL;
    }
    if (lines)
        *lines = p.lines;
    else
        json_decref(p.lines);
    return p.root;
}
