/* rxparse.c — the Python-re parser (rxparse.h): a pattern read the way
 * Python 3.11's re parser reads a str pattern and rewritten into PCRE2
 * syntax.  Why a full parse, and what is refused: verifiers/regex.c.
 * Exports vat_rx_translate and vat_rx_translation_release. */
#include "rxparse.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifiers.h"

/* ---- UTF-8 -------------------------------------------------------------- */

/* Decodes the (already validated) sequence at s; returns its length. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] < 0xE0) {
        *cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        return 2;
    }
    if (s[0] < 0xF0) {
        *cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        return 3;
    }
    *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
          ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
    return 4;
}

/* ---- the translator: Python re syntax in, PCRE2 syntax out ------------- */

/* Python's inline flags. */
#define F_I 0x01u
#define F_M 0x02u
#define F_S 0x04u
#define F_X 0x08u
#define F_A 0x10u
#define F_U 0x20u
#define F_L 0x40u
#define F_T 0x80u
#define F_TYPE (F_A | F_U | F_L)

/* What the last item of a sequence was: Python refuses to repeat nothing
 * or an anchor, and refuses to repeat a repeat. */
enum rx_kind { RX_NONE, RX_AT, RX_REPEAT, RX_ITEM };

/* One token as Python's tokenizer yields it: a character, or a backslash
 * and the character after it. */
struct rx_tok {
    uint32_t cp;
    bool esc;
    size_t len; /* bytes */
};

static int tr_fail(struct rx_tr *t, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int tr_fail(struct rx_tr *t, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->msg, sizeof t->msg, fmt, ap);
    va_end(ap);
    t->code = code;
    return -1;
}

/* Python's own error for a pattern it cannot compile. */
#define PYERR(t, pos, ...) tr_fail_at((t), VAT_REGEX_COMPILE, (pos), __VA_ARGS__)
/* Syntax PCRE2 has and this checker refuses. */
#define UNSUP(t, pos, ...) tr_fail_at((t), VAT_REGEX_UNSUPPORTED, (pos), __VA_ARGS__)

static int tr_fail_at(struct rx_tr *t, const char *code, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int tr_fail_at(struct rx_tr *t, const char *code, size_t pos, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tr_fail(t, code, "%s at position %zu", what, pos);
}

/* Reads the token at t->i without consuming it; false at the end.  A lone
 * trailing backslash was refused before parsing began. */
static bool tok_peek(const struct rx_tr *t, struct rx_tok *k)
{
    if (t->i >= t->n)
        return false;
    size_t i = t->i;
    k->esc = t->s[i] == '\\';
    if (k->esc)
        i++;
    k->len = utf8_decode(t->s + i, &k->cp) + (k->esc ? 1 : 0);
    return true;
}

static bool tok_get(struct rx_tr *t, struct rx_tok *k)
{
    if (!tok_peek(t, k))
        return false;
    t->i += k->len;
    return true;
}

/* True if the next token is the plain character c. */
static bool next_is(const struct rx_tr *t, uint32_t c)
{
    struct rx_tok k;
    return tok_peek(t, &k) && !k.esc && k.cp == c;
}

static bool tok_match(struct rx_tr *t, uint32_t c)
{
    if (!next_is(t, c))
        return false;
    t->i++; /* c is ASCII wherever this is used */
    return true;
}

/* ---- the tokens mutation reads (rxparse.h, vat_rx_tokens) ---- */

/* Appends a token [off, off + len) when t->toks asks for them: the
 * token, or NULL. */
static struct vat_rx_tok *note(struct rx_tr *t, enum vat_rx_tok_kind kind, size_t off, size_t len)
{
    struct vat_rx_toks *ts = t->toks;
    if (!ts)
        return NULL;
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 64;
        ts->v = vat_xrealloc(ts->v, ts->cap * sizeof *ts->v);
    }
    struct vat_rx_tok *k = &ts->v[ts->n++];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->off = off;
    k->len = len;
    k->hi = -1;
    return k;
}

/* A group's opening [at, t->i): its token's index, to close. */
static size_t note_open(struct rx_tr *t, size_t at, bool look)
{
    struct vat_rx_tok *k = note(t, VAT_RX_OPEN, at, t->i - at);
    if (!k)
        return 0;
    k->look = look;
    return t->toks->n - 1;
}

/* The ')' just read closes the group opened at token open. */
static void note_close(struct rx_tr *t, size_t open)
{
    if (note(t, VAT_RX_CLOSE, t->i - 1, 1))
        t->toks->v[open].match = t->toks->n - 1;
}

/* Inline flags that turn on i or s anywhere make every class wider. */
static void note_flags(struct rx_tr *t, unsigned add)
{
    if (!t->toks)
        return;
    t->toks->ignorecase = t->toks->ignorecase || (add & F_I);
    t->toks->dotall = t->toks->dotall || (add & F_S);
}

/* The token of the escape k read at [at, t->i). */
static void note_escape(struct rx_tr *t, const struct rx_tok *k, size_t at)
{
    enum vat_rx_tok_kind kind = VAT_RX_LIT;
    if (strchr("dDwWsS", (int)k->cp) && k->cp)
        kind = VAT_RX_CLASS;
    else if (k->cp == 'A' || k->cp == 'Z')
        kind = VAT_RX_ANCHOR;
    else if (k->cp == 'b' || k->cp == 'B')
        kind = VAT_RX_BOUND;
    else if (k->cp >= '1' && k->cp <= '9' && t->i - at != 4) /* not an octal \ddd */
        kind = VAT_RX_OTHER;
    note(t, kind, at, t->i - at);
}

static bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static bool is_octal(uint32_t c) { return c >= '0' && c <= '7'; }
static bool is_alpha(uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_hex(uint32_t c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static int hex_val(uint32_t c)
{
    return is_digit(c) ? (int)(c - '0') : (int)((c | 0x20) - 'a' + 10);
}

static bool is_py_space(uint32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static unsigned flag_bit(uint32_t c)
{
    switch (c) {
    case 'i': return F_I;
    case 'm': return F_M;
    case 's': return F_S;
    case 'x': return F_X;
    case 'a': return F_A;
    case 'u': return F_U;
    case 'L': return F_L;
    case 't': return F_T;
    default: return 0;
    }
}

/* Escapes PCRE2 has and Python rejects (or, for \N{..}, that need the
 * Unicode name table); named so the reason can say what was used. */
static const char *pcre_only_escape(uint32_t c)
{
    switch (c) {
    case 'K': return "\\K (reset match start)";
    case 'R': return "\\R (any newline)";
    case 'h': return "\\h (horizontal space)";
    case 'H': return "\\H (non-horizontal space)";
    case 'V': return "\\V (non-vertical space)";
    case 'X': return "\\X (extended grapheme)";
    case 'C': return "\\C (one code unit)";
    case 'N': return "\\N";
    case 'Q': return "\\Q (quote)";
    case 'E': return "\\E (end quote)";
    case 'G': return "\\G (match start anchor)";
    case 'g': return "\\g (backreference or subroutine)";
    case 'k': return "\\k (named backreference)";
    case 'p': return "\\p (Unicode property)";
    case 'P': return "\\P (Unicode property)";
    case 'e': return "\\e (escape character)";
    case 'c': return "\\c (control character)";
    case 'o': return "\\o{} (octal)";
    case 'z': return "\\z (Python spells it \\Z)";
    default: return NULL;
    }
}

static void put(struct rx_tr *t, const char *s) { vat_buf_puts(&t->out, s); }

/* Inserts s into the output at offset at. */
static void out_insert(struct rx_tr *t, size_t at, const char *s)
{
    size_t k = strlen(s), tail = t->out.len - at;
    vat_buf_putn(&t->out, s, k); /* grows the buffer by k */
    memmove(t->out.data + at + k, t->out.data + at, tail);
    memcpy(t->out.data + at, s, k);
}

/* Emits one literal code point in a spelling PCRE2 cannot misread,
 * inside or outside a class. */
static int emit_lit(struct rx_tr *t, uint32_t cp, size_t pos)
{
    if (cp >= 0x80 && !t->utf) {
        t->restart = true;
        return -1;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return UNSUP(t, pos, "surrogate code point U+%04X", (unsigned)cp);
    if (cp < 0x80 && (is_digit(cp) || is_alpha(cp)))
        vat_buf_putc(&t->out, (char)cp);
    else if (cp < 0x100)
        vat_buf_printf(&t->out, "\\x%02x", (unsigned)cp);
    else
        vat_buf_printf(&t->out, "\\x{%x}", (unsigned)cp);
    return 0;
}

/* Python's \s for str patterns is str.isspace(), which also holds
 * \x1c-\x1f (and, beyond ASCII, the Unicode spaces); PCRE2's \s does
 * not, so the set is spelled out.  Class bodies, without brackets. */
#define WS_ASCII "\\t-\\r\\x1c-\\x20"
#define NWS_ASCII "\\x00-\\x08\\x0e-\\x1b\\x21-\\xff"
#define WS_UNI                                                                         \
    "\\t-\\r\\x1c-\\x20\\x85\\xa0\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}" \
    "\\x{205f}\\x{3000}"
#define NWS_UNI                                                                    \
    "\\x00-\\x08\\x0e-\\x1b\\x21-\\x84\\x86-\\x9f\\xa1-\\x{167f}\\x{1681}-\\x{1fff}" \
    "\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}"  \
    "\\x{3001}-\\x{10ffff}"
/* Under the ASCII flag in UCP mode, PCRE2's classes would be Unicode. */
#define A_DIGIT "0-9"
#define A_NDIGIT "\\x00-\\x2f\\x3a-\\x{10ffff}"
#define A_WORD "0-9A-Za-z_"
#define A_NWORD "\\x00-\\x2f\\x3a-\\x40\\x5b-\\x5e\\x60\\x7b-\\x{10ffff}"
#define A_SPACE "\\t-\\r\\x20"
#define A_NSPACE "\\x00-\\x08\\x0e-\\x1f\\x21-\\x{10ffff}"

/* Emits one of Python's \d \D \s \S \w \W, as a class body when in_class
 * or as a complete item otherwise. */
static void emit_cat(struct rx_tr *t, uint32_t c, bool ascii, bool in_class)
{
    const char *native = NULL, *body = NULL, *neg = NULL;
    if (!t->utf) {
        /* No UTF: PCRE2's tables are ASCII, like Python's on ASCII text. */
        switch (c) {
        case 'd': native = "\\d"; break;
        case 'D': native = "\\D"; break;
        case 'w': native = "\\w"; break;
        case 'W': native = "\\W"; break;
        case 's': if (ascii) native = "\\s"; else body = WS_ASCII; break;
        case 'S': if (ascii) native = "\\S"; else { body = NWS_ASCII; neg = WS_ASCII; } break;
        default: break;
        }
    } else if (!ascii) {
        switch (c) {
        case 'd': native = "\\d"; break;
        case 'D': native = "\\D"; break;
        case 'w': native = "\\w"; break;
        case 'W': native = "\\W"; break;
        case 's': body = WS_UNI; break;
        case 'S': body = NWS_UNI; neg = WS_UNI; break;
        default: break;
        }
    } else {
        switch (c) {
        case 'd': body = A_DIGIT; break;
        case 'D': body = A_NDIGIT; neg = A_DIGIT; break;
        case 'w': body = A_WORD; break;
        case 'W': body = A_NWORD; neg = A_WORD; break;
        case 's': body = A_SPACE; break;
        case 'S': body = A_NSPACE; neg = A_SPACE; break;
        default: break;
        }
    }
    if (native) {
        put(t, native);
    } else if (in_class) {
        put(t, body);
    } else {
        put(t, neg ? "[^" : "[");
        put(t, neg ? neg : body);
        put(t, "]");
    }
}

/* Reads exactly want hex digits (Python's \x, \u, \U); -1 if fewer. */
static long read_hex(struct rx_tr *t, int want)
{
    long v = 0;
    for (int k = 0; k < want; k++) {
        if (t->i >= t->n || !is_hex(t->s[t->i]))
            return -1;
        v = v * 16 + hex_val(t->s[t->i]);
        t->i++;
    }
    return v;
}

/* The escapes both contexts share: \x \u \U \N and PCRE-only letters.
 * Returns 1 with *cp set for a literal, 0 if not one of these, -1 on error. */
static int escape_common(struct rx_tr *t, const struct rx_tok *k, size_t at, uint32_t *cp)
{
    long v;
    switch (k->cp) {
    case 'x':
        if (next_is(t, '{'))
            return UNSUP(t, at, "\\x{...} (PCRE hex escape; Python spells it \\xhh or \\uhhhh)");
        if ((v = read_hex(t, 2)) < 0)
            return PYERR(t, at, "incomplete escape \\x");
        *cp = (uint32_t)v;
        return 1;
    case 'u':
        if ((v = read_hex(t, 4)) < 0)
            return PYERR(t, at, "incomplete escape \\u");
        *cp = (uint32_t)v;
        return 1;
    case 'U':
        if ((v = read_hex(t, 8)) < 0)
            return PYERR(t, at, "incomplete escape \\U");
        if (v > 0x10FFFF)
            return PYERR(t, at, "bad escape \\U%08lx", v);
        *cp = (uint32_t)v;
        return 1;
    case 'N':
        if (next_is(t, '{'))
            return UNSUP(t, at, "\\N{name} (named characters are not supported here)");
        return UNSUP(t, at, "\\N (PCRE non-newline; Python rejects it)");
    default:
        break;
    }
    const char *pcre = pcre_only_escape(k->cp);
    if (pcre)
        return UNSUP(t, at, "%s is PCRE-only syntax (Python rejects it)", pcre);
    return 0;
}

/* One escape inside a class.  Returns 1 for a literal (*cp), 2 for a
 * category (*cp is its letter), -1 on error. */
static int class_escape(struct rx_tr *t, const struct rx_tok *k, size_t at, uint32_t *cp)
{
    switch (k->cp) {
    case 'a': *cp = 7; return 1;
    case 'b': *cp = 8; return 1;
    case 'f': *cp = 12; return 1;
    case 'n': *cp = 10; return 1;
    case 'r': *cp = 13; return 1;
    case 't': *cp = 9; return 1;
    case 'v': *cp = 11; return 1;
    case '\\': *cp = '\\'; return 1;
    case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
        *cp = k->cp;
        return 2;
    default:
        break;
    }
    int rc = escape_common(t, k, at, cp);
    if (rc)
        return rc;
    if (is_octal(k->cp)) {
        uint32_t v = k->cp - '0';
        for (int d = 0; d < 2 && t->i < t->n && is_octal(t->s[t->i]); d++)
            v = v * 8 + (uint32_t)(t->s[t->i++] - '0');
        if (v > 0377)
            return PYERR(t, at, "octal escape value outside of range 0-0o377");
        *cp = v;
        return 1;
    }
    if (is_digit(k->cp) || is_alpha(k->cp))
        return PYERR(t, at, "bad escape \\%c", (char)k->cp);
    *cp = k->cp;
    return 1;
}

/* PCRE2 reads [:name:], [.x.] and [=x=] inside a class as POSIX syntax;
 * Python reads them as plain characters, so whoever wrote one meant
 * something Python will not do.  Called just after a '[' in a class. */
static bool posix_class_ahead(const struct rx_tr *t)
{
    if (t->i >= t->n)
        return false;
    unsigned char term = t->s[t->i];
    if (term != ':' && term != '.' && term != '=')
        return false;
    for (size_t j = t->i + 1; j + 1 < t->n; j++) {
        if (t->s[j] == ']')
            return false;
        if (t->s[j] == term && t->s[j + 1] == ']')
            return true;
    }
    return false;
}

/* A character class; the '[' at position at is consumed. */
static int tr_class(struct rx_tr *t, size_t at, bool ascii)
{
    struct rx_tok k, k2;
    put(t, "[");
    if (tok_match(t, '^'))
        put(t, "^");
    bool nonempty = false;
    for (;;) {
        size_t here = t->i;
        uint32_t c1, c2;
        int r1, r2;
        if (!tok_get(t, &k))
            return PYERR(t, at, "unterminated character set");
        if (!k.esc && k.cp == ']' && nonempty)
            break;
        if (k.esc) {
            if ((r1 = class_escape(t, &k, here, &c1)) < 0)
                return -1;
        } else {
            if (k.cp == '[' && posix_class_ahead(t))
                return UNSUP(t, here, "POSIX class syntax '[:name:]' (Python reads it as "
                                      "plain characters)");
            r1 = 1;
            c1 = k.cp;
        }
        nonempty = true;
        if (!tok_match(t, '-')) {
            if (r1 == 2)
                emit_cat(t, c1, ascii, true);
            else if (emit_lit(t, c1, here))
                return -1;
            continue;
        }
        size_t there = t->i;
        if (!tok_get(t, &k2))
            return PYERR(t, at, "unterminated character set");
        if (!k2.esc && k2.cp == ']') {
            if (r1 == 2)
                emit_cat(t, c1, ascii, true);
            else if (emit_lit(t, c1, here))
                return -1;
            put(t, "\\x2d]");
            return 0;
        }
        if (k2.esc) {
            if ((r2 = class_escape(t, &k2, there, &c2)) < 0)
                return -1;
        } else {
            r2 = 1;
            c2 = k2.cp;
        }
        if (r1 != 1 || r2 != 1 || c2 < c1)
            return PYERR(t, here, "bad character range");
        if (emit_lit(t, c1, here))
            return -1;
        put(t, "-");
        if (emit_lit(t, c2, there))
            return -1;
    }
    put(t, "]");
    return 0;
}

static bool group_closed(const struct rx_tr *t, size_t gid)
{
    return gid >= 1 && gid <= t->ngroups && t->closed[gid];
}

/* Python's state.checklookbehindgroup. */
static int check_lookbehind_ref(struct rx_tr *t, size_t gid, size_t at)
{
    if (t->lb_groups < 0)
        return 0;
    if (!group_closed(t, gid))
        return PYERR(t, at, "cannot refer to an open group");
    if (gid >= (size_t)t->lb_groups)
        return PYERR(t, at, "cannot refer to group defined in the same lookbehind subpattern");
    return 0;
}

/* An escape outside a class; *kind gets what it was. */
static int tr_escape(struct rx_tr *t, const struct rx_tok *k, size_t at, bool ascii,
                     enum rx_kind *kind)
{
    uint32_t cp;
    *kind = RX_ITEM;
    switch (k->cp) {
    case 'A':
        *kind = RX_AT;
        put(t, "\\A");
        return 0;
    case 'Z':
        /* Python's \Z is the very end; PCRE2's \Z also matches before a
         * final newline. */
        *kind = RX_AT;
        put(t, "\\z");
        return 0;
    case 'b':
        *kind = RX_AT;
        put(t, t->utf && ascii ? "(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|"
                                 "(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))"
                               : "\\b");
        return 0;
    case 'B':
        /* Python (before 3.14) never matches \B in an empty string. */
        *kind = RX_AT;
        put(t, "(?!\\A\\z)");
        put(t, t->utf && ascii ? "(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|"
                                 "(?<![0-9A-Za-z_])(?![0-9A-Za-z_]))"
                               : "\\B");
        return 0;
    case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
        emit_cat(t, k->cp, ascii, false);
        return 0;
    case 'a': return emit_lit(t, 7, at);
    case 'f': return emit_lit(t, 12, at);
    case 'n': return emit_lit(t, 10, at);
    case 'r': return emit_lit(t, 13, at);
    case 't': return emit_lit(t, 9, at);
    case 'v': return emit_lit(t, 11, at); /* PCRE2's \v is a class */
    case '\\': return emit_lit(t, '\\', at);
    default:
        break;
    }
    int rc = escape_common(t, k, at, &cp);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return emit_lit(t, cp, at);
    if (k->cp == '0') {
        uint32_t v = 0;
        for (int d = 0; d < 2 && t->i < t->n && is_octal(t->s[t->i]); d++)
            v = v * 8 + (uint32_t)(t->s[t->i++] - '0');
        return emit_lit(t, v, at);
    }
    if (is_digit(k->cp)) {
        /* Octal escape or group reference, as Python decides it. */
        size_t gid = k->cp - '0';
        if (t->i < t->n && is_digit(t->s[t->i])) {
            uint32_t d2 = t->s[t->i++];
            if (is_octal(k->cp) && is_octal(d2) && t->i < t->n && is_octal(t->s[t->i])) {
                uint32_t v = (k->cp - '0') * 64 + (d2 - '0') * 8 + (uint32_t)(t->s[t->i++] - '0');
                if (v > 0377)
                    return PYERR(t, at, "octal escape value outside of range 0-0o377");
                return emit_lit(t, v, at);
            }
            gid = gid * 10 + (d2 - '0');
        }
        if (gid < 1 || gid > t->ngroups)
            return PYERR(t, at, "invalid group reference %zu", gid);
        if (!group_closed(t, gid))
            return PYERR(t, at, "cannot refer to an open group");
        if (check_lookbehind_ref(t, gid, at))
            return -1;
        vat_buf_printf(&t->out, "\\g{%zu}", gid);
        return 0;
    }
    if (is_alpha(k->cp))
        return PYERR(t, at, "bad escape \\%c", (char)k->cp);
    return emit_lit(t, k->cp, at);
}

/* Python's Tokenizer.getuntil: the text up to terminator; escapes inside
 * make it an invalid name, which the caller finds. */
static int get_until(struct rx_tr *t, uint32_t term, const char *what, size_t *off, size_t *len)
{
    struct rx_tok k;
    *off = t->i;
    for (;;) {
        size_t here = t->i;
        if (!tok_get(t, &k)) {
            if (here == *off)
                return PYERR(t, here, "missing %s", what);
            return PYERR(t, here, "missing %c, unterminated name", (char)term);
        }
        if (!k.esc && k.cp == term) {
            if (here == *off)
                return PYERR(t, here, "missing %s", what);
            *len = here - *off;
            return 0;
        }
    }
}

/* Group names: Python takes any identifier; names only live in this
 * parser (PCRE2 sees numbered groups), so ASCII is the one restriction. */
static int check_name(struct rx_tr *t, size_t off, size_t len)
{
    const unsigned char *s = t->s + off;
    for (size_t j = 0; j < len; j++)
        if (s[j] >= 0x80)
            return UNSUP(t, off, "group name outside ASCII");
    bool ok = is_alpha(s[0]) || s[0] == '_';
    for (size_t j = 1; ok && j < len; j++)
        ok = is_alpha(s[j]) || is_digit(s[j]) || s[j] == '_';
    if (!ok)
        return PYERR(t, off, "bad character in group name '%.*s'", (int)(len > 40 ? 40 : len),
                     (const char *)s);
    return 0;
}

static size_t name_lookup(const struct rx_tr *t, size_t off, size_t len)
{
    for (size_t j = 0; j < t->nnames; j++)
        if (t->names[j].len == len && memcmp(t->s + t->names[j].off, t->s + off, len) == 0)
            return t->names[j].gid;
    return 0;
}

static int open_group(struct rx_tr *t, size_t name_off, size_t name_len, size_t at, size_t *gid)
{
    if (name_len) {
        size_t old = name_lookup(t, name_off, name_len);
        if (old)
            return PYERR(t, at, "redefinition of group name '%.*s' as group %zu; was group %zu",
                         (int)(name_len > 40 ? 40 : name_len), (const char *)t->s + name_off,
                         t->ngroups + 1, old);
    }
    *gid = ++t->ngroups;
    if (*gid >= t->closed_cap) {
        t->closed_cap = t->closed_cap ? t->closed_cap * 2 : 16;
        t->closed = vat_xrealloc(t->closed, t->closed_cap);
    }
    t->closed[*gid] = 0;
    if (name_len) {
        if (t->nnames == t->names_cap) {
            t->names_cap = t->names_cap ? t->names_cap * 2 : 8;
            t->names = vat_xrealloc(t->names, t->names_cap * sizeof *t->names);
        }
        t->names[t->nnames++] = (struct rx_name){name_off, name_len, *gid};
    }
    return 0;
}

static int tr_sub(struct rx_tr *t, bool verbose, bool ascii, int nested);
static int tr_seq(struct rx_tr *t, bool verbose, bool ascii, int nested, bool first);

/* Emits the i/m/s part of a flag set (the others are this parser's). */
static void put_flags(struct rx_tr *t, unsigned f)
{
    if (f & F_I)
        put(t, "i");
    if (f & F_M)
        put(t, "m");
    if (f & F_S)
        put(t, "s");
}

/* Python's _parse_flags, c being the first character after "(?".
 * Returns 1 for global flags (in *add), 0 for a scoped group, -1. */
static int parse_flags(struct rx_tr *t, uint32_t c, size_t at, unsigned *add, unsigned *del)
{
    struct rx_tok k;
    *add = *del = 0;
    if (c != '-') {
        for (;;) {
            unsigned f = flag_bit(c);
            if (f == F_L)
                return PYERR(t, at, "bad inline flags: cannot use 'L' flag with a str pattern");
            if (f == F_T)
                return UNSUP(t, at, "the deprecated 't' (template) flag");
            *add |= f;
            if ((f & F_TYPE) && (*add & F_TYPE) != f)
                return PYERR(t, at, "bad inline flags: flags 'a', 'u' and 'L' are incompatible");
            if (!tok_get(t, &k))
                return PYERR(t, at, "missing -, : or )");
            c = k.esc ? 0 : k.cp;
            if (c == ')' || c == '-' || c == ':')
                break;
            if (!flag_bit(c)) {
                if (c == 'n' || c == 'J' || c == 'U')
                    return UNSUP(t, at, "PCRE-only inline flag '%c'", (char)c);
                return PYERR(t, at, "%s", c && is_alpha(c) ? "unknown flag" : "missing -, : or )");
            }
        }
    }
    if (c == ')')
        return 1;
    if (c == '-') {
        if (!tok_get(t, &k))
            return PYERR(t, at, "missing flag");
        c = k.esc ? 0 : k.cp;
        if (*add == 0 && is_digit(c))
            return UNSUP(t, at, "relative subroutine call '(?-n)' (PCRE-only; Python rejects it)");
        if (!flag_bit(c))
            return PYERR(t, at, "%s", c && is_alpha(c) ? "unknown flag" : "missing flag");
        for (;;) {
            unsigned f = flag_bit(c);
            if (f & F_TYPE)
                return PYERR(t, at, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
            if (f == F_T)
                return PYERR(t, at, "bad inline flags: cannot turn off global flag");
            *del |= f;
            if (!tok_get(t, &k))
                return PYERR(t, at, "missing :");
            c = k.esc ? 0 : k.cp;
            if (c == ':')
                break;
            if (!flag_bit(c))
                return PYERR(t, at, "%s", c && is_alpha(c) ? "unknown flag" : "missing :");
        }
    }
    if (*add & *del)
        return PYERR(t, at, "bad inline flags: flag turned on and off");
    return 0;
}

/* After "(?(": a conditional on a group's having matched. */
static int tr_conditional(struct rx_tr *t, size_t at, bool verbose, bool ascii, int nested)
{
    size_t off, len, gid = 0;
    if (get_until(t, ')', "group name", &off, &len))
        return -1;
    const unsigned char *s = t->s + off;
    bool digits = true;
    for (size_t j = 0; j < len; j++)
        digits = digits && is_digit(s[j]);
    if (digits) {
        for (size_t j = 0; j < len; j++) {
            gid = gid * 10 + (s[j] - '0');
            if (gid > RX_MAX_REPEAT)
                return UNSUP(t, off, "group reference above %u", RX_MAX_REPEAT);
        }
        if (gid == 0)
            return PYERR(t, off, "bad group number");
        if (gid > t->maxcond) {
            t->maxcond = gid;
            t->maxcond_pos = off;
        }
    } else {
        if (check_name(t, off, len))
            return -1;
        gid = name_lookup(t, off, len);
        if (!gid)
            return PYERR(t, off, "unknown group name '%.*s'", (int)(len > 40 ? 40 : len),
                         (const char *)s);
    }
    if (check_lookbehind_ref(t, gid, off))
        return -1;
    vat_buf_printf(&t->out, "(?(%zu)", gid);
    size_t open = note_open(t, at, false);
    if (tr_seq(t, verbose, ascii, nested + 1, false))
        return -1;
    if (tok_match(t, '|')) {
        put(t, "|");
        note(t, VAT_RX_ALT, t->i - 1, 1);
        if (tr_seq(t, verbose, ascii, nested + 1, false))
            return -1;
        if (next_is(t, '|'))
            return PYERR(t, t->i, "conditional backref with more than two branches");
    }
    if (!tok_match(t, ')'))
        return PYERR(t, at, "missing ), unterminated subpattern");
    note_close(t, open);
    put(t, ")");
    return 0;
}

/* A lookaround; c is '=', '!' or '<' after "(?" at position at. */
static int tr_lookaround(struct rx_tr *t, size_t at, uint32_t c, bool verbose, bool ascii,
                         int nested)
{
    struct rx_tok k;
    bool behind = c == '<';
    if (behind) {
        if (!tok_get(t, &k))
            return PYERR(t, at, "unexpected end of pattern");
        c = k.esc ? 0 : k.cp;
        if (c != '=' && c != '!') {
            if (is_alpha(c) || c == '_')
                return UNSUP(t, at, "named group '(?<name>...)' (PCRE spelling; "
                                    "Python needs '(?P<name>...)')");
            return PYERR(t, at, "unknown extension ?<");
        }
    }
    long saved = t->lb_groups;
    if (behind && saved < 0)
        t->lb_groups = (long)t->ngroups + 1;
    /* PCRE2 10.42 lets a lookbehind's top-level branches differ in
     * length; Python wants one fixed width for the whole, which a
     * single wrapping group asks of PCRE2 too. */
    put(t, behind ? (c == '=' ? "(?<=(?:" : "(?<!(?:") : (c == '=' ? "(?=" : "(?!"));
    size_t open = note_open(t, at, true);
    if (tr_sub(t, verbose, ascii, nested + 1))
        return -1;
    if (behind && saved < 0)
        t->lb_groups = -1;
    if (!tok_match(t, ')'))
        return PYERR(t, at, "missing ), unterminated subpattern");
    note_close(t, open);
    put(t, behind ? "))" : ")");
    return 0;
}

/* A group of any kind; the '(' at position at is consumed.  *global is
 * set when it was a global flag group (which is no item). */
static int tr_group(struct rx_tr *t, size_t at, bool verbose, bool ascii, int nested,
                    bool first, bool had_item, bool *global, enum rx_kind *kind)
{
    struct rx_tok k;
    bool capture = true;
    size_t name_off = 0, name_len = 0, gid = 0;
    unsigned add = 0, del = 0;
    *kind = RX_ITEM;
    *global = false;
    if (next_is(t, '*'))
        return UNSUP(t, at, "PCRE verb '(*...)' (Python reads '(*' as nothing to repeat)");
    if (tok_match(t, '?')) {
        if (!tok_get(t, &k))
            return PYERR(t, at, "unexpected end of pattern");
        uint32_t c = k.esc ? 0 : k.cp;
        switch (c) {
        case 'P':
            if (tok_match(t, '<')) {
                if (get_until(t, '>', "group name", &name_off, &name_len) ||
                    check_name(t, name_off, name_len))
                    return -1;
                break;
            }
            if (tok_match(t, '=')) {
                size_t off, len;
                if (get_until(t, ')', "group name", &off, &len) || check_name(t, off, len))
                    return -1;
                size_t ref = name_lookup(t, off, len);
                if (!ref)
                    return PYERR(t, off, "unknown group name '%.*s'",
                                 (int)(len > 40 ? 40 : len), (const char *)t->s + off);
                if (!group_closed(t, ref))
                    return PYERR(t, off, "cannot refer to an open group");
                if (check_lookbehind_ref(t, ref, off))
                    return -1;
                vat_buf_printf(&t->out, "\\g{%zu}", ref);
                note(t, VAT_RX_OTHER, at, t->i - at);
                return 0;
            }
            if (next_is(t, '>'))
                return UNSUP(t, at, "subroutine call '(?P>name)' (PCRE-only; Python rejects it)");
            return PYERR(t, at, "unknown extension ?P");
        case ':':
            capture = false;
            break;
        case '#':
            /* A comment: no item, nothing emitted. */
            for (;;) {
                if (!tok_get(t, &k))
                    return PYERR(t, at, "missing ), unterminated comment");
                if (!k.esc && k.cp == ')')
                    break;
            }
            note(t, VAT_RX_OTHER, at, t->i - at);
            *kind = RX_NONE;
            return 0;
        case '=':
        case '!':
        case '<':
            return tr_lookaround(t, at, c, verbose, ascii, nested);
        case '(':
            return tr_conditional(t, at, verbose, ascii, nested);
        case '>':
            return UNSUP(t, at, "atomic group '(?>...)' (Python 3.11 only; not accepted)");
        case 'R': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9': case '+':
            return UNSUP(t, at, "recursion or subroutine call '(?%c...)' (PCRE-only; Python "
                                "rejects it)", (char)c);
        case '&':
            return UNSUP(t, at, "subroutine call '(?&name)' (PCRE-only; Python rejects it)");
        case '|':
            return UNSUP(t, at, "branch reset group '(?|...)' (PCRE-only; Python rejects it)");
        case 'C':
            return UNSUP(t, at, "callout '(?C...)' (PCRE-only; Python rejects it)");
        case '\'':
            return UNSUP(t, at, "named group \"(?'name'...)\" (PCRE spelling; Python needs "
                                "'(?P<name>...)')");
        case '^':
            return UNSUP(t, at, "flag reset '(?^)' (PCRE-only; Python rejects it)");
        case 'n': case 'J': case 'U':
            return UNSUP(t, at, "PCRE-only inline flag '%c'", (char)c);
        default:
            if (c == '-' || flag_bit(c)) {
                int g = parse_flags(t, c, at, &add, &del);
                if (g < 0)
                    return -1;
                note_flags(t, add);
                if (g == 1) {
                    if (!first || had_item)
                        return PYERR(t, at, "global flags not at the start of the expression");
                    t->gflags |= add;
                    if ((t->gflags & F_A) && (t->gflags & F_U))
                        return PYERR(t, at, "ASCII and UNICODE flags are incompatible");
                    if (add & (F_I | F_M | F_S)) {
                        put(t, "(?");
                        put_flags(t, add);
                        put(t, ")");
                    }
                    note(t, VAT_RX_OTHER, at, t->i - at);
                    *global = true;
                    *kind = RX_NONE;
                    return 0;
                }
                capture = false;
                break;
            }
            if (k.esc)
                return PYERR(t, at, "unknown extension ?\\");
            return PYERR(t, at, "unknown extension ?%c", c < 0x80 ? (char)c : '?');
        }
    }
    if (capture) {
        if (open_group(t, name_off, name_len, at, &gid))
            return -1;
        put(t, "(");
    } else if ((add | del) & (F_I | F_M | F_S)) {
        put(t, "(?");
        put_flags(t, add);
        if (del & (F_I | F_M | F_S)) {
            put(t, "-");
            put_flags(t, del);
        }
        put(t, ":");
    } else {
        put(t, "(?:");
    }
    bool sub_verbose = (verbose || (add & F_X)) && !(del & F_X);
    bool sub_ascii = (add & F_A) ? true : (add & F_U) ? false : ascii;
    size_t open = note_open(t, at, false);
    if (tr_sub(t, sub_verbose, sub_ascii, nested + 1))
        return -1;
    if (!tok_match(t, ')'))
        return PYERR(t, at, "missing ), unterminated subpattern");
    note_close(t, open);
    if (capture)
        t->closed[gid] = 1;
    put(t, ")");
    return 0;
}

/* A quantifier; c is '*', '+', '?' or '{' (consumed, at position at).
 * Returns 1 if a '{' turned out to be a literal, 0, or -1. */
static int tr_repeat(struct rx_tr *t, uint32_t c, size_t at, enum rx_kind last,
                     size_t item_start)
{
    char q[48];
    bool never = false;
    long tok_lo = c == '+', tok_hi = c == '?' ? 1 : -1; /* the bounds as a token gives them */
    if (c == '{') {
        size_t here = t->i;
        uint64_t lo = 0, hi = 0;
        bool have_lo = false, have_hi = false, comma = false;
        if (next_is(t, '}'))
            return 1;
        while (t->i < t->n && is_digit(t->s[t->i])) {
            lo = lo > RX_PY_MAXREPEAT ? lo : lo * 10 + (t->s[t->i] - '0');
            have_lo = true;
            t->i++;
        }
        if (tok_match(t, ',')) {
            comma = true;
            while (t->i < t->n && is_digit(t->s[t->i])) {
                hi = hi > RX_PY_MAXREPEAT ? hi : hi * 10 + (t->s[t->i] - '0');
                have_hi = true;
                t->i++;
            }
        } else {
            hi = lo;
            have_hi = have_lo;
        }
        if (!tok_match(t, '}')) {
            t->i = here;
            return 1;
        }
        if ((have_lo && lo >= RX_PY_MAXREPEAT) || (have_hi && hi >= RX_PY_MAXREPEAT))
            return PYERR(t, at, "the repetition number is too large");
        if (have_hi && hi < lo)
            return PYERR(t, at, "min repeat greater than max repeat");
        never = have_hi && hi == 0;
        tok_lo = (long)lo;
        tok_hi = have_hi ? (long)hi : -1;
        /* {,n} and {,} are quantifiers in Python and literals in PCRE2
         * 10.42, so the bounds are always written out. */
        if (!comma)
            snprintf(q, sizeof q, "{%u}", (unsigned)lo);
        else if (!have_hi || hi > RX_MAX_REPEAT)
            snprintf(q, sizeof q, "{%u,}", (unsigned)lo);
        else
            snprintf(q, sizeof q, "{%u,%u}", (unsigned)lo, (unsigned)hi);
    } else {
        q[0] = (char)c;
        q[1] = 0;
    }
    if (last == RX_NONE || last == RX_AT)
        return PYERR(t, at, "nothing to repeat");
    if (last == RX_REPEAT)
        return PYERR(t, at, "multiple repeat");
    if (q[0] == '{' && strtoul(q + 1, NULL, 10) > RX_MAX_REPEAT)
        return UNSUP(t, at, "repeat minimum above %u", RX_MAX_REPEAT);
    if (never) {
        /* PCRE2 10.42 misjudges anchoring for X{0} when X is a group with
         * an anchored branch ("(?:a|\\A){0}x" finds no "x" past the start).
         * Opening the group with (?!) hides X from that analysis; it keeps
         * the group numbers and the zero width that lookbehinds need. */
        out_insert(t, item_start, "(?:(?!)");
        put(t, "){0}");
    } else {
        put(t, q);
    }
    struct vat_rx_tok *n = note(t, VAT_RX_QUANT, at, t->i - at);
    if (n) {
        n->lo = tok_lo;
        n->hi = tok_hi;
        n->braces = c == '{';
    }
    if (tok_match(t, '?')) {
        put(t, "?");
        note(t, VAT_RX_OTHER, t->i - 1, 1);
    }
    else if (next_is(t, '+'))
        return UNSUP(t, t->i, "possessive quantifier '%s+' (Python 3.11 only; not accepted)", q);
    return 0;
}

/* Python's _parse: one branch, up to '|' or ')' or the end. */
static int tr_seq(struct rx_tr *t, bool verbose, bool ascii, int nested, bool first)
{
    enum rx_kind last = RX_NONE;
    size_t last_start = 0;
    bool had_item = false;
    struct rx_tok k;
    while (tok_peek(t, &k)) {
        if (!k.esc && (k.cp == '|' || k.cp == ')'))
            break;
        size_t at = t->i;
        t->i += k.len;
        if (verbose && !k.esc) {
            if (is_py_space(k.cp))
                continue;
            if (k.cp == '#') {
                while (tok_get(t, &k) && (k.esc || k.cp != '\n'))
                    ;
                continue;
            }
        }
        enum rx_kind kind = RX_ITEM;
        size_t start = t->out.len;
        if (k.esc) {
            if (tr_escape(t, &k, at, ascii, &kind))
                return -1;
            note_escape(t, &k, at);
        } else {
            switch (k.cp) {
            case '[':
                if (tr_class(t, at, ascii))
                    return -1;
                note(t, VAT_RX_CLASS, at, t->i - at);
                break;
            case '*':
            case '+':
            case '?':
            case '{': {
                int r = tr_repeat(t, k.cp, at, last, last_start);
                if (r < 0)
                    return -1;
                if (r == 0) {
                    kind = RX_REPEAT;
                } else if (emit_lit(t, '{', at)) {
                    return -1;
                } else {
                    note(t, VAT_RX_LIT, at, t->i - at);
                }
                break;
            }
            case '.':
                put(t, ".");
                note(t, VAT_RX_CLASS, at, 1);
                break;
            case '^':
                put(t, "^");
                kind = RX_AT;
                note(t, VAT_RX_ANCHOR, at, 1);
                break;
            case '$':
                put(t, "$");
                kind = RX_AT;
                note(t, VAT_RX_ANCHOR, at, 1);
                break;
            case '(': {
                bool global;
                if (tr_group(t, at, verbose, ascii, nested, first, had_item, &global, &kind))
                    return -1;
                if (global) {
                    verbose = t->gflags & F_X;
                    ascii = t->gflags & F_A;
                }
                break;
            }
            default:
                if (emit_lit(t, k.cp, at))
                    return -1;
                note(t, VAT_RX_LIT, at, t->i - at);
                break;
            }
        }
        if (kind != RX_NONE) {
            if (kind != RX_REPEAT)
                last_start = start;
            last = kind;
            had_item = true;
        }
    }
    return 0;
}

/* Python's _parse_sub: branches separated by '|'. */
static int tr_sub(struct rx_tr *t, bool verbose, bool ascii, int nested)
{
    if (nested > RX_MAX_NEST)
        return tr_fail(t, VAT_TOO_LARGE, "groups nested deeper than %d", RX_MAX_NEST);
    bool first_branch = true;
    for (;;) {
        if (tr_seq(t, verbose, ascii, nested + 1, nested == 0 && first_branch))
            return -1;
        if (!tok_match(t, '|'))
            return 0;
        put(t, "|");
        note(t, VAT_RX_ALT, t->i - 1, 1);
        first_branch = false;
        if (nested == 0) {
            verbose = t->gflags & F_X;
            ascii = t->gflags & F_A;
        }
    }
}

void vat_rx_translation_release(struct rx_tr *t)
{
    vat_buf_release(&t->out);
    free(t->closed);
    free(t->names);
}

/* One translation attempt, noting the tokens met in toks when not NULL. */
static int translate(struct rx_tr *t, const char *pat, size_t len, bool utf,
                     struct vat_rx_toks *toks)
{
    memset(t, 0, sizeof *t);
    t->toks = toks;
    t->s = (const unsigned char *)pat;
    t->n = len;
    t->utf = utf;
    t->lb_groups = -1;
    /* Python's tokenizer fails on a final lone backslash wherever it is. */
    for (size_t i = 0; i < len;) {
        if (pat[i] == '\\') {
            if (i + 1 >= len)
                return PYERR(t, i, "bad escape (end of pattern)");
            i++;
        }
        i += vat_utf8_seq((const unsigned char *)pat + i, len - i);
    }
    vat_buf_puts(&t->out, "");
    if (tr_sub(t, false, false, 0))
        return -1;
    if (t->i < t->n)
        return PYERR(t, t->i, "unbalanced parenthesis");
    if (t->maxcond > t->ngroups)
        return PYERR(t, t->maxcond_pos, "invalid group reference %zu", t->maxcond);
    if (t->out.len > RX_MAX_OUT)
        return tr_fail(t, VAT_TOO_LARGE, "pattern expands past %d bytes", RX_MAX_OUT);
    return 0;
}

int vat_rx_translate(struct rx_tr *t, const char *pat, size_t len, bool utf)
{
    return translate(t, pat, len, utf, NULL);
}

int vat_rx_tokens(const char *pat, struct vat_rx_toks *out, struct vat_err *e)
{
    struct rx_tr t;
    size_t len = strlen(pat);
    *out = (struct vat_rx_toks){out->v, 0, out->cap, false, false};
    int rc = translate(&t, pat, len, false, out);
    if (rc != 0 && t.restart) {
        /* as the checker compiles it: read again for UTF mode */
        vat_rx_translation_release(&t);
        *out = (struct vat_rx_toks){out->v, 0, out->cap, false, false};
        rc = translate(&t, pat, len, true, out);
    }
    if (rc != 0) {
        vat_err_set(e, "%s", t.msg);
        out->n = 0;
    }
    vat_rx_translation_release(&t);
    return rc;
}
