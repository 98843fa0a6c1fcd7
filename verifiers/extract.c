/* extract.c — the answer extraction policy of docs/extraction.md.
 *
 * The completion is untrusted and may be 4 MiB of anything, so every rule is
 * one forward pass that never looks back more than a tag's length: think
 * blocks and comments are found by skipping to the next '<', lines by
 * skipping to the next '\n', and each pass records only the LAST candidate
 * of its kind.  The one candidate chosen is then refined (markup around it
 * dropped) once.  Nothing is copied or allocated; the answer is a slice of
 * the completion, which vat_extract_write may decode into fewer bytes.
 *
 * Think blocks and HTML comments split the completion into visible
 * stretches.  The other rules look inside one stretch at a time and never
 * across a hidden block, because a slice cannot skip the text in between
 * (docs/extraction.md explains why this is also what a reader would
 * expect). */
#include "extract.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NONE SIZE_MAX

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* 1 when the lowercase ASCII word w (of length wl) starts at s[i], within
 * s[..end), compared case-insensitively. */
static bool word_at(const char *s, size_t i, size_t end, const char *w, size_t wl)
{
    if (i > end || end - i < wl)
        return false;
    for (size_t k = 0; k < wl; k++)
        if (lower((unsigned char)s[i + k]) != (unsigned char)w[k])
            return false;
    return true;
}

#define LIT(w) w, (sizeof w - 1)

/* The exact bytes w (of length wl) at s[i], within s[..end). */
static bool exact_at(const char *s, size_t i, size_t end, const char *w, size_t wl)
{
    return i <= end && end - i >= wl && memcmp(s + i, w, wl) == 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_ident(char c)
{
    return is_alpha(c) || is_digit(c) || c == '_';
}

static size_t skip_blanks(const char *s, size_t i, size_t e)
{
    while (i < e && is_blank(s[i]))
        i++;
    return i;
}

static size_t skip_space(const char *s, size_t i, size_t e)
{
    while (i < e && is_space(s[i]))
        i++;
    return i;
}

/* The end of the line that holds i (the '\n' or e). */
static size_t line_end(const char *s, size_t i, size_t e)
{
    const char *nl = i < e ? memchr(s + i, '\n', e - i) : NULL;
    return nl ? (size_t)(nl - s) : e;
}

static bool all_space(const char *s, size_t b, size_t e)
{
    return skip_space(s, b, e) == e;
}

/* The word SELECT or WITH (any case) at i, followed by a blank, a line
 * end, '(' or the end. */
static bool sql_word_at(const char *s, size_t i, size_t e)
{
    size_t w = word_at(s, i, e, LIT("select")) ? 6 : word_at(s, i, e, LIT("with")) ? 4 : 0;
    return w && (i + w == e || is_space(s[i + w]) || s[i + w] == '(');
}

enum kind { K_VALUE, K_REGEX, K_SQL, K_OTHER };

static enum kind kind_of(const char *k)
{
    if (!k)
        return K_OTHER;
    if (strcmp(k, "value") == 0 || strcmp(k, "abstain") == 0)
        return K_VALUE;
    if (strcmp(k, "regex") == 0)
        return K_REGEX;
    if (strcmp(k, "sql") == 0)
        return K_SQL;
    return K_OTHER;
}

/* ---- JSON ------------------------------------------------------------------ */

/* JSON's blanks (RFC 8259). */
static size_t json_ws(const char *s, size_t i, size_t e)
{
    while (i < e && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The index after the JSON string opening at s[i] ('"'), or NONE. */
static size_t json_string_end(const char *s, size_t i, size_t e)
{
    for (i++; i < e; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"')
            return i + 1;
        if (c < 0x20)
            return NONE;
        if (c == '\\') {
            if (++i >= e)
                return NONE;
            if (s[i] == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (i + k >= e || !is_hex(s[i + k]))
                        return NONE;
                i += 4;
            } else if (!strchr("\"\\/bfnrt", s[i]) || s[i] == '\0') {
                return NONE;
            }
        }
    }
    return NONE;
}

/* The index after the JSON number at s[i], or NONE. */
static size_t json_number_end(const char *s, size_t i, size_t e)
{
    if (i < e && s[i] == '-')
        i++;
    if (i >= e || !is_digit(s[i]))
        return NONE;
    if (s[i] == '0')
        i++;
    else
        while (i < e && is_digit(s[i]))
            i++;
    if (i < e && s[i] == '.') {
        if (++i >= e || !is_digit(s[i]))
            return NONE;
        while (i < e && is_digit(s[i]))
            i++;
    }
    if (i < e && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < e && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= e || !is_digit(s[i]))
            return NONE;
        while (i < e && is_digit(s[i]))
            i++;
    }
    return i;
}

/* Whether s[b..e) is exactly one JSON value with blanks around it.  An
 * iterative syntax check (no allocation, no recursion): containers nest at
 * most 512 deep, far past the value checker's own cap. */
static bool json_complete(const char *s, size_t b, size_t e)
{
    enum { VALUE, KEY, AFTER } state = VALUE;
    uint64_t is_obj[8] = {0}; /* one bit per open container */
    size_t depth = 0, i = json_ws(s, b, e);
    for (;;) {
        if (state == AFTER) {
            i = json_ws(s, i, e);
            if (depth == 0)
                return i == e;
            if (i >= e)
                return false;
            bool obj = (is_obj[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1;
            if (s[i] == ',') {
                i = json_ws(s, i + 1, e);
                state = obj ? KEY : VALUE;
            } else if (s[i] == (obj ? '}' : ']')) {
                depth--;
                i++;
            } else {
                return false;
            }
            continue;
        }
        if (state == KEY) {
            if (i >= e || s[i] != '"' || (i = json_string_end(s, i, e)) == NONE)
                return false;
            i = json_ws(s, i, e);
            if (i >= e || s[i] != ':')
                return false;
            i = json_ws(s, i + 1, e);
            state = VALUE;
            continue;
        }
        if (i >= e)
            return false;
        char c = s[i];
        if (c == '{' || c == '[') {
            if (depth == 512)
                return false;
            uint64_t bit = (uint64_t)1 << (depth % 64);
            if (c == '{')
                is_obj[depth / 64] |= bit;
            else
                is_obj[depth / 64] &= ~bit;
            depth++;
            i = json_ws(s, i + 1, e);
            if (i < e && s[i] == (c == '{' ? '}' : ']')) {
                depth--;
                i++;
                state = AFTER;
            } else {
                state = c == '{' ? KEY : VALUE;
            }
            continue;
        }
        if (c == '"')
            i = json_string_end(s, i, e);
        else if (exact_at(s, i, e, LIT("true")) || exact_at(s, i, e, LIT("null")))
            i += 4;
        else if (exact_at(s, i, e, LIT("false")))
            i += 5;
        else
            i = json_number_end(s, i, e);
        if (i == NONE)
            return false;
        state = AFTER;
    }
}

/* ---- numbers written in prose ------------------------------------------------ */

/* The length of the currency sign at s[i] ($, \$ as LaTeX writes it, €, £,
 * ¥), or 0. */
static size_t currency_at(const char *s, size_t i, size_t e)
{
    if (i < e && s[i] == '$')
        return 1;
    if (e - i >= 2 && s[i] == '\\' && s[i + 1] == '$')
        return 2;
    if (e - i >= 3 && memcmp(s + i, "\xE2\x82\xAC", 3) == 0)
        return 3;
    if (e - i >= 2 && (memcmp(s + i, "\xC2\xA3", 2) == 0 || memcmp(s + i, "\xC2\xA5", 2) == 0))
        return 2;
    return 0;
}

/* Whether s[b..e) is a number as prose writes it that is not already a
 * JSON number: a leading currency sign or thousands separators (groups of
 * three digits after one to three), then an optional fraction; a minus
 * before or after the sign. */
static bool prose_number(const char *s, size_t b, size_t e)
{
    size_t i = b;
    bool minus = false;
    if (i < e && s[i] == '-') {
        minus = true;
        i++;
    }
    size_t cur = currency_at(s, i, e);
    i += cur;
    if (cur && !minus && i < e && s[i] == '-')
        i++;
    size_t d = i;
    while (i < e && is_digit(s[i]))
        i++;
    size_t lead = i - d;
    if (lead == 0 || (lead > 1 && s[d] == '0'))
        return false;
    bool groups = false;
    if (i < e && s[i] == ',') {
        if (lead > 3 || s[d] == '0')
            return false;
        while (i < e && s[i] == ',') {
            if (e - i < 4 || !is_digit(s[i + 1]) || !is_digit(s[i + 2]) || !is_digit(s[i + 3]))
                return false;
            i += 4;
        }
        if (i < e && is_digit(s[i]))
            return false;
        groups = true;
    }
    if (i < e && s[i] == '.') {
        size_t f = ++i;
        while (i < e && is_digit(s[i]))
            i++;
        if (i == f)
            return false;
    }
    return i == e && (cur || groups);
}

/* ---- Python string literals ---------------------------------------------------- */

/* Appends code point cp as UTF-8 at d (when d is not NULL); returns its
 * length, or 0 for a surrogate or a value past U+10FFFF. */
static size_t put_utf8(char *d, uint32_t cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | (cp >> 6));
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            return 0;
        u[0] = (unsigned char)(0xE0 | (cp >> 12));
        u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else if (cp <= 0x10FFFF) {
        u[0] = (unsigned char)(0xF0 | (cp >> 18));
        u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    } else {
        return 0;
    }
    if (d)
        memcpy(d, u, n);
    return n;
}

static uint32_t hex_value(const char *s, size_t n)
{
    uint32_t v = 0;
    for (size_t k = 0; k < n; k++) {
        char c = s[k];
        v = v * 16 + (uint32_t)(is_digit(c) ? c - '0' : lower((unsigned char)c) - 'a' + 10);
    }
    return v;
}

/* Decodes the body of a non-raw Python str literal s[0..n) into d (NULL:
 * only checks it) as Python does; returns the decoded length, or NONE for
 * what Python refuses (a short \x, \u or \U, a code point it cannot hold in
 * UTF-8) or what vat does not decode (\N{name}).  An unknown escape keeps
 * its backslash, as in Python. */
static size_t py_decode(const char *s, size_t n, char *d)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] != '\\') {
            if (d)
                d[o] = s[i];
            o++;
            i++;
            continue;
        }
        char c = i + 1 < n ? s[i + 1] : '\0';
        static const char simple_in[] = "\\'\"abfnrtv";
        static const char simple_out[] = "\\'\"\a\b\f\n\r\t\v";
        const char *p = c ? strchr(simple_in, c) : NULL;
        if (p) {
            if (d)
                d[o] = simple_out[p - simple_in];
            o++;
            i += 2;
        } else if (c >= '0' && c <= '7') {
            uint32_t v = 0;
            size_t k = i + 1;
            while (k < n && k < i + 4 && s[k] >= '0' && s[k] <= '7')
                v = v * 8 + (uint32_t)(s[k++] - '0');
            o += put_utf8(d ? d + o : NULL, v);
            i = k;
        } else if (c == 'x' || c == 'u' || c == 'U') {
            size_t w = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            if (n - i - 2 < w)
                return NONE;
            for (size_t k = 0; k < w; k++)
                if (!is_hex(s[i + 2 + k]))
                    return NONE;
            size_t m = put_utf8(d ? d + o : NULL, hex_value(s + i + 2, w));
            if (m == 0)
                return NONE;
            o += m;
            i += 2 + w;
        } else if (c == 'N' || c == '\0' || c == '\n') {
            return NONE;
        } else {
            if (d) {
                d[o] = '\\';
                d[o + 1] = c;
            }
            o += 2;
            i += 2;
        }
    }
    return o;
}

/* The Python string literal at s[i] ([rRuU] prefix, one ' or " quote, on
 * one line): sets its body [*bb, *be) and *raw and returns the index after
 * it, or NONE.  Triple quotes, byte and f-strings are not taken. */
static size_t py_literal(const char *s, size_t i, size_t e, size_t *bb, size_t *be, bool *raw)
{
    *raw = false;
    if (i < e && (s[i] == 'r' || s[i] == 'R')) {
        *raw = true;
        i++;
    } else if (i < e && (s[i] == 'u' || s[i] == 'U')) {
        i++;
    }
    if (i >= e || (s[i] != '\'' && s[i] != '"'))
        return NONE;
    char q = s[i];
    if (e - i >= 3 && s[i + 1] == q && s[i + 2] == q)
        return NONE;
    for (size_t j = i + 1; j < e; j++) {
        if (s[j] == '\n')
            return NONE;
        if (s[j] == '\\') {
            j++;
            if (j >= e || s[j] == '\n')
                return NONE;
            continue;
        }
        if (s[j] == q) {
            if (!*raw && py_decode(s + i + 1, j - i - 1, NULL) == NONE)
                return NONE;
            *bb = i + 1;
            *be = j;
            return j + 1;
        }
    }
    return NONE;
}

/* An identifier at s[i]; returns the index after it (i when none). */
static size_t ident_end(const char *s, size_t i, size_t e)
{
    if (i >= e || !(is_alpha(s[i]) || s[i] == '_'))
        return i;
    while (i < e && is_ident(s[i]))
        i++;
    return i;
}

/* Line [b, e) (trimmed) is one Python statement giving a pattern:
 * [NAME =] LITERAL, [NAME =] re.compile(LITERAL), or re.findall /
 * re.finditer (LITERAL, NAME).  Sets the literal's body and kind. */
static bool py_pattern_line(const char *s, size_t b, size_t e, size_t *bb, size_t *be, bool *raw)
{
    size_t i = b, k = ident_end(s, b, e);
    if (k > b) {
        size_t j = skip_blanks(s, k, e);
        if (j < e && s[j] == '=' && (j + 1 >= e || s[j + 1] != '='))
            i = skip_blanks(s, j + 1, e);
    }
    size_t after;
    if (exact_at(s, i, e, LIT("re.compile("))) {
        after = py_literal(s, skip_blanks(s, i + 11, e), e, bb, be, raw);
        if (after == NONE)
            return false;
        after = skip_blanks(s, after, e);
        if (after >= e || s[after] != ')')
            return false;
        after++;
    } else if (exact_at(s, i, e, LIT("re.findall(")) || exact_at(s, i, e, LIT("re.finditer("))) {
        size_t open = i + (s[i + 10] == '(' ? 11 : 12);
        after = py_literal(s, skip_blanks(s, open, e), e, bb, be, raw);
        if (after == NONE)
            return false;
        after = skip_blanks(s, after, e);
        if (after >= e || s[after] != ',')
            return false;
        size_t n0 = skip_blanks(s, after + 1, e), n1 = ident_end(s, n0, e);
        after = skip_blanks(s, n1, e);
        if (n1 == n0 || after >= e || s[after] != ')')
            return false;
        after++;
    } else {
        after = py_literal(s, i, e, bb, be, raw);
        if (after == NONE)
            return false;
    }
    return skip_space(s, after, e) == e;
}

/* Text [b, e) is, but for blank lines, comments and "import re", one
 * line that py_pattern_line takes. */
static bool py_pattern(const char *s, size_t b, size_t e, size_t *bb, size_t *be, bool *raw)
{
    bool found = false;
    for (size_t ls = b; ls < e;) {
        size_t le = line_end(s, ls, e), x = skip_space(s, ls, le), y = le;
        while (y > x && is_space(s[y - 1]))
            y--;
        bool skip = x == y || s[x] == '#' ||
                    (y - x == 9 && memcmp(s + x, "import re", 9) == 0);
        if (!skip) {
            if (found || !py_pattern_line(s, x, y, bb, be, raw))
                return false;
            found = true;
        }
        ls = le + 1;
    }
    return found;
}

/* ---- SQL statements --------------------------------------------------------------- */

/* Where a statement ends, read line by line: at a ';' outside strings,
 * quoted names and comments, or at a blank line outside them at paren
 * depth 0. */
struct sql_scan {
    char quote;  /* ' " ` or ']' while inside one, else 0 */
    bool block;  /* inside a block comment */
    long depth;  /* parentheses open */
};

/* Feeds line [ls, le); returns the index after a ';' that ends the
 * statement, or NONE. */
static size_t sql_feed(struct sql_scan *q, const char *s, size_t ls, size_t le)
{
    for (size_t i = ls; i < le; i++) {
        char c = s[i];
        if (q->block) {
            if (c == '*' && i + 1 < le && s[i + 1] == '/') {
                q->block = false;
                i++;
            }
        } else if (q->quote) {
            if (c == q->quote) {
                if (c != ']' && i + 1 < le && s[i + 1] == c)
                    i++; /* '' inside a string */
                else
                    q->quote = 0;
            }
        } else if (c == '\'' || c == '"' || c == '`') {
            q->quote = c;
        } else if (c == '[') {
            q->quote = ']';
        } else if (c == '-' && i + 1 < le && s[i + 1] == '-') {
            break; /* a line comment runs to the end of the line */
        } else if (c == '/' && i + 1 < le && s[i + 1] == '*') {
            q->block = true;
            i++;
        } else if (c == '(') {
            q->depth++;
        } else if (c == ')') {
            if (q->depth > 0)
                q->depth--;
        } else if (c == ';') {
            return i + 1;
        }
    }
    return NONE;
}

static bool sql_at_rest(const struct sql_scan *q)
{
    return !q->quote && !q->block && q->depth == 0;
}

/* The end of the statement starting at b, within [b, e). */
static size_t sql_statement_end(const char *s, size_t b, size_t e)
{
    struct sql_scan q = {0, false, 0};
    for (size_t ls = b; ls < e;) {
        size_t le = line_end(s, ls, e);
        if (ls > b && all_space(s, ls, le) && sql_at_rest(&q))
            return ls;
        size_t end = sql_feed(&q, s, ls, le);
        if (end != NONE)
            return end;
        ls = le + 1;
    }
    return e;
}

/* ---- think blocks and comments -------------------------------------------------- */

/* Walks the visible stretches of a completion, in order.  A "<think>" opens a
 * block closed by the next "</think>" (blocks do not nest: an inner "<think>"
 * is thought like any other text); a block never closed runs to the end.  A
 * "</think>" that closes no block ends a block that began where the visible
 * text began (the start of the completion, or the end of the previous block):
 * chat templates that put "<think>" into the prompt produce exactly that.
 * An HTML comment "<!--" … "-->" is hidden the same way (never closed: to
 * the end). */
struct stretches {
    const char *s;
    size_t n;
    size_t pos;
    bool done;
};

/* Position of the next "</think>" (close = true) or "-->" at or after i, or
 * NONE. */
static size_t find_close(const char *s, size_t n, size_t i, bool think)
{
    char first = think ? '<' : '-';
    while (i < n) {
        const char *p = memchr(s + i, first, n - i);
        if (!p)
            return NONE;
        i = (size_t)(p - s);
        if (think ? word_at(s, i, n, LIT("</think>")) : word_at(s, i, n, LIT("-->")))
            return i;
        i++;
    }
    return NONE;
}

static bool next_stretch(struct stretches *it, size_t *b, size_t *e)
{
    if (it->done)
        return false;
    const char *s = it->s;
    size_t n = it->n, start = it->pos, i = it->pos;
    while (i < n) {
        const char *lt = memchr(s + i, '<', n - i);
        if (!lt)
            break;
        i = (size_t)(lt - s);
        if (word_at(s, i, n, LIT("</think>"))) {
            /* A close with no open: what came before it was thought. */
            start = i + 8;
            i = start;
            continue;
        }
        bool think = word_at(s, i, n, LIT("<think>"));
        if (think || word_at(s, i, n, LIT("<!--"))) {
            *b = start;
            *e = i;
            size_t close = find_close(s, n, i + (think ? 7 : 4), think);
            if (close == NONE)
                it->done = true; /* unclosed: hidden to the end */
            else
                it->pos = close + (think ? 8 : 3);
            return true;
        }
        i++;
    }
    *b = start;
    *e = n;
    it->done = true;
    return true;
}

/* ---- fences ----------------------------------------------------------------- */

/* Info-string words that fit each answer kind ("" is a fence without one). */
static bool info_fits(enum kind kind, const char *w, size_t wl)
{
    static const char *const value_fit[] = {"", "json", "text", NULL};
    static const char *const regex_fit[] = {"", "regex", "re", "text", NULL};
    static const char *const sql_fit[] = {"", "sql", "sqlite", "text", NULL};
    static const char *const other_fit[] = {"", "text", NULL};
    const char *const *fit = kind == K_VALUE   ? value_fit
                             : kind == K_REGEX ? regex_fit
                             : kind == K_SQL   ? sql_fit
                                               : other_fit;
    for (size_t k = 0; fit[k]; k++)
        if (strlen(fit[k]) == wl && word_at(w, 0, wl, fit[k], wl))
            return true;
    return false;
}

/* The fence run of line [ls, le): at most three spaces of indent, then three
 * or more '`' or '~' (CommonMark).  Returns the run's length (0 when the line
 * is no fence) and sets *ch and *after (the first byte after the run). */
static size_t fence_run(const char *s, size_t ls, size_t le, char *ch, size_t *after)
{
    size_t i = ls;
    while (i < le && i - ls < 3 && s[i] == ' ')
        i++;
    if (i >= le || (s[i] != '`' && s[i] != '~'))
        return 0;
    char c = s[i];
    size_t j = i;
    while (j < le && s[j] == c)
        j++;
    if (j - i < 3)
        return 0;
    *ch = c;
    *after = j;
    return j - i;
}

/* An opening fence: the run, then an info string (a backtick fence's may not
 * hold a backtick).  Sets the fence's char and length and whether its info
 * string's first word fits the answer kind. */
static bool fence_open(const char *s, size_t ls, size_t le, enum kind kind, char *ch,
                       size_t *flen, bool *fits)
{
    size_t after;
    size_t run = fence_run(s, ls, le, ch, &after);
    if (run == 0)
        return false;
    if (*ch == '`' && memchr(s + after, '`', le - after))
        return false; /* inline code such as ```42```, not a fence */
    size_t w = skip_blanks(s, after, le);
    size_t we = w;
    while (we < le && !is_space(s[we]))
        we++;
    *flen = run;
    *fits = info_fits(kind, s + w, we - w);
    return true;
}

/* A closing fence: the same char, at least as long, then only blanks. */
static bool fence_close(const char *s, size_t ls, size_t le, char ch, size_t flen)
{
    char c;
    size_t after;
    size_t run = fence_run(s, ls, le, &c, &after);
    return run != 0 && c == ch && run >= flen && all_space(s, after, le);
}

/* ---- answer lines ------------------------------------------------------------ */

/* The run of n emphasis characters c at s[i]? */
static bool run_at(const char *s, size_t i, size_t e, char c, size_t n)
{
    if (n == 0 || i > e || e - i < n)
        return false;
    for (size_t k = 0; k < n; k++)
        if (s[i + k] != c)
            return false;
    return true;
}

/* Line [ls, le) is an answer line: blanks, an optional '>' and heading
 * ('#' to '######'), an optional emphasis ('*', '**', '_', '__'), an
 * optional "Final", the word "Answer", the emphasis closed here or after
 * a colon; then either a colon and the answer, or nothing more on the
 * line (the answer follows on the next lines).  Returns where the answer
 * may start, or NONE; *closer is the length of an emphasis left open
 * before the answer, which the answer's line then closes (**Answer: 7**),
 * *closer_ch its character. */
static size_t answer_marker(const char *s, size_t ls, size_t le, char *closer_ch, size_t *closer)
{
    size_t i = skip_blanks(s, ls, le);
    *closer = 0;
    if (i < le && s[i] == '>')
        i = skip_blanks(s, i + 1, le);
    size_t h = i;
    while (i < le && s[i] == '#' && i - h < 7)
        i++;
    if (i > h) {
        if (i - h > 6 || i >= le || !is_blank(s[i]))
            return NONE;
        i = skip_blanks(s, i, le);
    }
    char ec = 0;
    size_t el = 0;
    if (i < le && (s[i] == '*' || s[i] == '_')) {
        ec = s[i];
        while (i < le && s[i] == ec && el < 2) {
            i++;
            el++;
        }
    }
    if (word_at(s, i, le, LIT("final"))) {
        size_t j = i + 5;
        if (j >= le || !is_blank(s[j]))
            return NONE;
        i = skip_blanks(s, j, le);
    }
    if (!word_at(s, i, le, LIT("answer")))
        return NONE;
    i += 6;
    if (i < le && s[i] != ':' && !is_space(s[i]) && !(el && s[i] == ec))
        return NONE; /* "answers", "answered" */
    bool closed = false;
    if (run_at(s, i, le, ec, el)) {
        i += el;
        closed = true;
    }
    i = skip_blanks(s, i, le);
    if (i < le && s[i] == ':') {
        i++;
        if (!closed && run_at(s, i, le, ec, el)) {
            i += el;
            closed = true;
        }
        if (el && !closed) {
            *closer_ch = ec;
            *closer = el;
        }
        return skip_blanks(s, i, le);
    }
    /* no colon: only a heading or the bare marker, the answer below */
    if (!all_space(s, i, le) || (el && !closed))
        return NONE;
    return le;
}

/* ---- the candidates ---------------------------------------------------------- */

struct slice {
    size_t b, e; /* b == NONE: none found */
};

struct found {
    struct slice tag, fit_fence, any_fence, boxed;
    struct slice line;     /* [where the answer may start, the stretch's end) */
    size_t line_end;       /* the end of the marker's line */
    char closer_ch;
    size_t closer;
    struct slice sql;      /* [the statement's start, the stretch's end) */
    struct slice last;     /* the last line not blank, of the last stretch not blank */
    struct slice whole;    /* the last stretch not blank */
};

static void scan_tags(const char *s, size_t b, size_t e, struct found *f)
{
    size_t open = NONE, i = b;
    while (i < e) {
        const char *lt = memchr(s + i, '<', e - i);
        if (!lt)
            break;
        i = (size_t)(lt - s);
        if (word_at(s, i, e, LIT("<answer>"))) {
            open = i + 8; /* tags do not nest: the latest opening wins */
            i += 8;
        } else if (word_at(s, i, e, LIT("</answer>"))) {
            if (open != NONE)
                f->tag = (struct slice){open, i};
            open = NONE;
            i += 9;
        } else {
            i++;
        }
    }
}

/* The last \boxed{…} with its braces balanced ("\{" and "\}" are not
 * braces).  Boxes may nest: the one closed last wins, so an outer box
 * beats the one inside it; a box never closed is no box.  At most 16
 * boxes are tracked open at once (deeper ones are plain braces). */
static void scan_boxed(const char *s, size_t b, size_t e, struct found *f)
{
    size_t open_at[16], open_depth[16], nopen = 0, depth = 0;
    for (size_t i = b; i < e; i++) {
        char c = s[i];
        if (c == '\\') {
            if (exact_at(s, i, e, LIT("\\boxed{"))) {
                if (nopen < 16) {
                    open_at[nopen] = i + 7;
                    open_depth[nopen++] = depth;
                }
                depth++;
                i += 6;
            } else {
                i++; /* an escaped character, "\{" included */
            }
        } else if (c == '{') {
            depth++;
        } else if (c == '}' && depth > 0) {
            depth--;
            if (nopen && open_depth[nopen - 1] == depth)
                f->boxed = (struct slice){open_at[--nopen], i};
        }
    }
}

static void scan_lines(const char *s, size_t b, size_t e, enum kind kind, struct found *f)
{
    bool in_fence = false, fits = false, in_stmt = false;
    struct sql_scan q = {0, false, 0};
    char ch = 0;
    size_t flen = 0, content = 0, ls = b;
    for (;;) {
        size_t le = line_end(s, ls, e);
        size_t next = le < e ? le + 1 : e;
        bool blank = all_space(s, ls, le);
        if (!blank)
            f->last = (struct slice){ls, le};
        if (in_fence) {
            if (fence_close(s, ls, le, ch, flen)) {
                struct slice block = {content, ls};
                f->any_fence = block;
                if (fits)
                    f->fit_fence = block;
                in_fence = false;
            }
        } else if (fence_open(s, ls, le, kind, &ch, &flen, &fits)) {
            in_fence = true;
            in_stmt = false;
            content = next;
        } else {
            char cc = 0;
            size_t cl;
            size_t a = answer_marker(s, ls, le, &cc, &cl);
            if (a != NONE) {
                f->line = (struct slice){a, e};
                f->line_end = le;
                f->closer_ch = cc;
                f->closer = cl;
            }
            if (kind == K_SQL) {
                size_t w = skip_blanks(s, ls, le);
                if (in_stmt && blank && sql_at_rest(&q)) {
                    in_stmt = false;
                } else if (!in_stmt && sql_word_at(s, w, le)) {
                    in_stmt = true;
                    q = (struct sql_scan){0, false, 0};
                    f->sql = (struct slice){w, e};
                }
                if (in_stmt && sql_feed(&q, s, ls, le) != NONE)
                    in_stmt = false;
            }
        }
        if (le >= e)
            break;
        ls = next;
    }
    if (in_fence) {
        /* Never closed: the block runs to the end of the stretch (CommonMark). */
        struct slice block = {content, e};
        f->any_fence = block;
        if (fits)
            f->fit_fence = block;
    }
}

/* ---- refining the chosen candidate -------------------------------------------------- */

/* The answer within a candidate: a slice, how it is decoded, and whether
 * markup delimited it (code span, Python literal). */
struct cand {
    size_t b, e;
    enum vat_extract_decode decode;
    bool coded;
};

static void trim(const char *s, size_t *b, size_t *e)
{
    while (*b < *e && is_space(s[*b]))
        (*b)++;
    while (*e > *b && is_space(s[*e - 1]))
        (*e)--;
}

/* Drops a code span's backticks around the whole of [b, e), on one line:
 * a run of n backticks, content holding no run of exactly n, the same
 * run; one space inside each end goes too when both have one
 * (CommonMark). */
static bool unwrap_code(const char *s, size_t *b, size_t *e)
{
    if (*b >= *e || s[*b] != '`' || memchr(s + *b, '\n', *e - *b))
        return false;
    size_t n = 0;
    while (*b + n < *e && s[*b + n] == '`')
        n++;
    if (n == 0 || *e - *b < 2 * n + 1)
        return false;
    size_t cb = *b + n, ce = *e - n;
    if (!run_at(s, ce, *e, '`', n) || s[ce - 1] == '`')
        return false;
    for (size_t i = cb; i < ce;) {
        if (s[i] != '`') {
            i++;
            continue;
        }
        size_t r = i;
        while (r < ce && s[r] == '`')
            r++;
        if (r - i == n)
            return false;
        i = r;
    }
    if (ce - cb >= 2 && s[cb] == ' ' && s[ce - 1] == ' ' && !all_space(s, cb, ce)) {
        cb++;
        ce--;
    }
    *b = cb;
    *e = ce;
    return true;
}

/* Drops bold (** or __) around the whole of [b, e). */
static bool unwrap_bold(const char *s, size_t *b, size_t *e)
{
    if (*e - *b < 5)
        return false;
    char c = s[*b];
    if ((c != '*' && c != '_') || s[*b + 1] != c || s[*e - 1] != c || s[*e - 2] != c)
        return false;
    *b += 2;
    *e -= 2;
    trim(s, b, e);
    return true;
}

/* Drops one trailing '.' or '!' of a sentence: for value answers always;
 * for others only after a closing backtick, emphasis or quote, since a
 * pattern or a query may itself end in '.'. */
static void drop_stop(const char *s, size_t *b, size_t *e, enum kind kind)
{
    if (*e - *b < 2 || (s[*e - 1] != '.' && s[*e - 1] != '!'))
        return;
    if (kind == K_VALUE || (s[*e - 2] && strchr("`*_\"'", s[*e - 2]))) {
        (*e)--;
        trim(s, b, e);
    }
}

enum { R_PROSE = 1, R_CODE = 2 };

/* The answer in [b, e): trimmed; in prose (R_PROSE) a sentence's stop and
 * bold dropped; a code span unwrapped (R_CODE); for regex answers a
 * Python string literal decoded; for value answers in prose a number's
 * currency sign and thousands separators dropped. */
static struct cand refine(const char *s, size_t b, size_t e, enum kind kind, unsigned how)
{
    struct cand c = {b, e, VAT_DECODE_NONE, false};
    trim(s, &c.b, &c.e);
    if (how & R_PROSE) {
        drop_stop(s, &c.b, &c.e, kind);
        if (unwrap_bold(s, &c.b, &c.e))
            drop_stop(s, &c.b, &c.e, kind);
    }
    if ((how & R_CODE) && unwrap_code(s, &c.b, &c.e))
        c.coded = true;
    size_t bb, be;
    bool raw;
    if (kind == K_REGEX && py_pattern(s, c.b, c.e, &bb, &be, &raw)) {
        c.b = bb;
        c.e = be;
        c.decode = raw ? VAT_DECODE_PY_RAW : VAT_DECODE_PY;
        c.coded = true;
    } else if ((how & R_PROSE) && kind == K_VALUE && prose_number(s, c.b, c.e)) {
        c.decode = VAT_DECODE_NUMBER;
    }
    return c;
}

/* A refined answer that a value checker can read as it is: one JSON value,
 * or a number from prose. */
static bool value_ready(const char *s, const struct cand *c)
{
    return c->decode == VAT_DECODE_NUMBER || json_complete(s, c->b, c->e);
}

/* Whether a sentence's answer is one for the kind: value answers JSON or
 * a prose number; regex answers delimited (code span, Python literal);
 * SQL answers a SELECT or WITH statement, delimited or not. */
static bool sentence_ready(const char *s, const struct cand *c, enum kind kind)
{
    switch (kind) {
    case K_VALUE: return value_ready(s, c);
    case K_SQL: return c->b < c->e && sql_word_at(s, c->b, c->e);
    default: return c->coded;
    }
}

/* The answer of the answer line found: from its first text (on the
 * marker's line or below) — for value answers that line alone when it is
 * a value, else to the end of the stretch; for regex answers that line;
 * for SQL answers that line when a code span, else the statement. */
static struct cand take_answer_line(const char *s, const struct found *f, enum kind kind)
{
    size_t p = skip_space(s, f->line.b, f->line.e), e = f->line.e;
    if (p == e)
        return (struct cand){p, p, VAT_DECODE_NONE, false};
    size_t eol = line_end(s, p, e), le = eol;
    bool bold_line = false;
    if (f->closer && p < f->line_end) {
        /* **Answer: X** — X ends where the emphasis closes */
        size_t y = le;
        while (y > p && is_space(s[y - 1]))
            y--;
        if (y - p > f->closer && run_at(s, y - f->closer, y, f->closer_ch, f->closer)) {
            le = y - f->closer;
            bold_line = true;
        }
    }
    struct cand c = refine(s, p, le, kind, R_PROSE | R_CODE);
    if (kind == K_VALUE) {
        if (bold_line || value_ready(s, &c))
            return c;
        return refine(s, p, e, kind, R_CODE);
    }
    if (kind == K_SQL && !c.coded && !bold_line)
        return refine(s, p, sql_statement_end(s, p, e), kind, R_CODE);
    return c;
}

/* A determiner that opens a committing sentence's subject. */
static size_t determiner_at(const char *s, size_t i, size_t e)
{
    static const char *const dets[] = {"the", "my", "our"};
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(dets[k]);
        if (word_at(s, i, e, dets[k], n) && i + n < e && is_blank(s[i + n]))
            return n;
    }
    return 0;
}

/* A verb that commits a subject to an answer. */
static size_t verb_at(const char *s, size_t i, size_t e)
{
    static const char *const verbs[] = {"is", "are", "was", "equals", "="};
    for (size_t k = 0; k < 5; k++) {
        size_t n = strlen(verbs[k]);
        if (word_at(s, i, e, verbs[k], n) &&
            (i + n == e || is_blank(s[i + n]) || s[i + n] == ':'))
            return n;
    }
    return 0;
}

/* The closing sentence of the last line not blank: the last
 * "<the|my|our> <one to eight words> <is|are|was|equals|=> X" on it
 * whose X (to the end of the line, its stop dropped, markup unwrapped)
 * is an answer of the kind.  Only the last such clause is tried. */
static bool take_sentence(const char *s, const struct found *f, enum kind kind, struct cand *out)
{
    size_t ls = f->last.b, le = f->last.e, x = NONE;
    for (size_t i = ls; i < le; i++) {
        if (i > ls && is_ident(s[i - 1]))
            continue;
        size_t d = determiner_at(s, i, le);
        if (!d)
            continue;
        size_t j = skip_blanks(s, i + d, le);
        for (int words = 0; words < 9 && j < le; words++) {
            size_t v = words > 0 ? verb_at(s, j, le) : 0;
            if (v) {
                size_t k = j + v;
                if (k < le && s[k] == ':')
                    k++;
                x = k;
                break;
            }
            while (j < le && !is_blank(s[j]))
                j++;
            j = skip_blanks(s, j, le);
        }
    }
    if (x == NONE)
        return false;
    struct cand c = refine(s, x, le, kind, R_PROSE | R_CODE);
    if (c.b == c.e || !sentence_ready(s, &c, kind))
        return false;
    *out = c;
    return true;
}

/* \text{X} (or \textbf, \mathrm) around the whole of a box's content. */
static void unwrap_text(const char *s, size_t *b, size_t *e)
{
    static const char *const cmds[] = {"\\text{", "\\textbf{", "\\mathrm{"};
    trim(s, b, e);
    for (size_t k = 0; k < 3; k++) {
        size_t n = strlen(cmds[k]);
        if (*e - *b > n && memcmp(s + *b, cmds[k], n) == 0 && s[*e - 1] == '}') {
            size_t depth = 0;
            for (size_t i = *b + n; i < *e - 1; i++) {
                if (s[i] == '{')
                    depth++;
                else if (s[i] == '}' && depth-- == 0)
                    return; /* the command closes before the end */
            }
            *b += n;
            (*e)--;
            return;
        }
    }
}

/* ---- the policy -------------------------------------------------------------- */

const char *vat_extract_looked_for(const char *answer_kind)
{
    switch (kind_of(answer_kind)) {
    case K_VALUE:
        return "no answer found: looked for an <answer> tag, a json fence, \\boxed{}, an "
               "Answer: line, a sentence such as 'The answer is X.', a last line that is JSON, "
               "or a completion of one line or one JSON value";
    case K_REGEX:
        return "no answer found: looked for an <answer> tag, a regex fence, \\boxed{}, an "
               "Answer: line, a sentence such as 'The pattern is `X`.', a Python string "
               "literal, or a completion of one line";
    case K_SQL:
        return "no answer found: looked for an <answer> tag, an sql fence, \\boxed{}, an "
               "Answer: line, a statement starting with SELECT or WITH, or a completion of "
               "one line";
    case K_OTHER: break;
    }
    return "no answer found: looked for an <answer> tag, a fence, \\boxed{}, an Answer: line, "
           "a closing sentence, or a completion of one line";
}

/* The whole visible text is the answer when it is one line or one JSON
 * value (whole_plain), or when it starts with SELECT or WITH. */
static bool whole_plain(const char *s, size_t b, size_t e)
{
    trim(s, &b, &e);
    return !memchr(s + b, '\n', e - b) || json_complete(s, b, e);
}

int vat_extract(const char *answer_kind, const char *completion, size_t len, int mode,
                struct vat_extraction *out)
{
    if (!completion) {
        completion = "";
        len = 0;
    }
    out->text = completion;
    out->len = 0;
    out->rule = mode == VAT_EXTRACT_RAW ? "raw" : "none";
    out->decode = VAT_DECODE_NONE;
    if (len > VAT_MAX_COMPLETION_BYTES)
        return -1;
    if (mode == VAT_EXTRACT_RAW) {
        out->len = len;
        return 0;
    }

    const char *s = completion;
    enum kind kind = kind_of(answer_kind);
    struct found f;
    struct slice none = {NONE, NONE};
    f.tag = f.fit_fence = f.any_fence = f.boxed = f.line = f.sql = f.last = f.whole = none;
    f.line_end = 0;
    f.closer = 0;
    f.closer_ch = 0;
    struct stretches it = {s, len, 0, false};
    size_t b, e;
    while (next_stretch(&it, &b, &e)) {
        scan_tags(s, b, e, &f);
        scan_boxed(s, b, e, &f);
        scan_lines(s, b, e, kind, &f);
        if (!all_space(s, b, e))
            f.whole = (struct slice){b, e};
    }

    struct cand c = {len, len, VAT_DECODE_NONE, false};
    const char *rule = "none";
    if (f.tag.b != NONE) {
        c = refine(s, f.tag.b, f.tag.e, kind, R_CODE);
        rule = "answer_tag";
    } else if (f.fit_fence.b != NONE) {
        c = refine(s, f.fit_fence.b, f.fit_fence.e, kind, 0);
        rule = "fence";
    } else if (f.boxed.b != NONE) {
        size_t bb = f.boxed.b, be = f.boxed.e;
        unwrap_text(s, &bb, &be);
        c = refine(s, bb, be, kind, R_PROSE | R_CODE);
        rule = "boxed";
    } else if (f.line.b != NONE) {
        c = take_answer_line(s, &f, kind);
        rule = "answer_line";
    } else if (f.last.b != NONE && take_sentence(s, &f, kind, &c)) {
        rule = "sentence";
    } else if (f.any_fence.b != NONE) {
        c = refine(s, f.any_fence.b, f.any_fence.e, kind, 0);
        rule = "fence";
    } else if (f.whole.b != NONE && whole_plain(s, f.whole.b, f.whole.e)) {
        c = refine(s, f.whole.b, f.whole.e, kind, R_CODE);
        rule = "whole";
    } else if (f.sql.b != NONE) {
        c = refine(s, f.sql.b, sql_statement_end(s, f.sql.b, f.sql.e), kind, R_CODE);
        rule = "sql_tail";
    } else if (kind == K_VALUE && f.last.b != NONE &&
               (c = refine(s, f.last.b, f.last.e, kind, R_CODE), json_complete(s, c.b, c.e))) {
        rule = "last_line";
    } else if (f.whole.b != NONE && sql_word_at(s, skip_space(s, f.whole.b, f.whole.e), f.whole.e)) {
        c = refine(s, f.whole.b, f.whole.e, kind, R_CODE);
        rule = "whole";
    } else {
        c = (struct cand){len, len, VAT_DECODE_NONE, false};
    }
    out->text = s + c.b;
    out->len = c.e - c.b;
    out->rule = rule;
    out->decode = c.decode;
    return 0;
}

size_t vat_extract_write(const struct vat_extraction *x, char *dst)
{
    const char *s = x->text;
    size_t n = x->len;
    switch (x->decode) {
    case VAT_DECODE_PY: {
        size_t m = py_decode(s, n, dst);
        if (m != NONE)
            return m;
        break; /* vat_extract checked it: not reached */
    }
    case VAT_DECODE_NUMBER: {
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            size_t cur = currency_at(s, i, n);
            if (cur) {
                i += cur - 1;
                continue;
            }
            if (s[i] != ',')
                dst[o++] = s[i];
        }
        return o;
    }
    case VAT_DECODE_NONE:
    case VAT_DECODE_PY_RAW: break;
    }
    if (n)
        memcpy(dst, s, n);
    return n;
}
