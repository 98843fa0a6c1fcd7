/* lex.c — SQLite's tokens, read as SQLite's tokenizer reads them (lex.h):
 * the one SQL lexer, shared by the checker's gate and the builder's
 * mutants.  Exports vat_sql_next_tok. */
#include "lex.h"

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_id_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_id_char(unsigned char c)
{
    return is_id_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* Skips whitespace and comments (an unterminated block comment runs to the
 * end, as in SQLite); returns the offset of the next token. */
static size_t skip_blank(const char *s, size_t n, size_t i)
{
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (is_space(c)) {
            i++;
        } else if (c == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'))
                i++;
            i = i < n ? i + 2 : n;
        } else {
            break;
        }
    }
    return i;
}

/* Scans a quoted run that ends at the closing quote q (doubled quotes
 * escape it unless q is ']'); returns the offset after it, or n with
 * *unclosed set. */
static size_t scan_quoted(const char *s, size_t n, size_t i, char q, bool *unclosed)
{
    for (i++; i < n; i++) {
        if (s[i] != q)
            continue;
        if (q != ']' && i + 1 < n && s[i + 1] == q) {
            i++;
            continue;
        }
        return i + 1;
    }
    *unclosed = true;
    return n;
}

struct vat_sql_tok vat_sql_next_tok(const char *s, size_t n, size_t *pos)
{
    size_t i = skip_blank(s, n, *pos);
    struct vat_sql_tok t = {VAT_SQL_TOK_END, i, 0, false};
    if (i >= n) {
        *pos = n;
        return t;
    }
    unsigned char c = (unsigned char)s[i];
    size_t j = i + 1;
    if ((c == 'x' || c == 'X') && j < n && s[j] == '\'') {
        t.kind = VAT_SQL_TOK_BLOB;
        j = scan_quoted(s, n, j, '\'', &t.unclosed);
    } else if (is_id_start(c)) {
        t.kind = VAT_SQL_TOK_WORD;
        while (j < n && is_id_char((unsigned char)s[j]))
            j++;
    } else if (c == '\'') {
        t.kind = VAT_SQL_TOK_STRING;
        j = scan_quoted(s, n, i, '\'', &t.unclosed);
    } else if (c == '"' || c == '`' || c == '[') {
        t.kind = VAT_SQL_TOK_QUOTED;
        j = scan_quoted(s, n, i, c == '[' ? ']' : (char)c, &t.unclosed);
    } else if ((c >= '0' && c <= '9') || (c == '.' && j < n && s[j] >= '0' && s[j] <= '9')) {
        t.kind = VAT_SQL_TOK_NUMBER;
        while (j < n) {
            unsigned char d = (unsigned char)s[j];
            if ((d == '+' || d == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))
                j++;
            else if (is_id_char(d) || d == '.')
                j++;
            else
                break;
        }
    } else if (c == '?') {
        t.kind = VAT_SQL_TOK_PARAM;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
    } else if ((c == ':' || c == '@' || c == '$' || c == '#') && j < n &&
               is_id_char((unsigned char)s[j])) {
        t.kind = VAT_SQL_TOK_PARAM;
        while (j < n && is_id_char((unsigned char)s[j]))
            j++;
    } else if (c == ';') {
        t.kind = VAT_SQL_TOK_SEMI;
    } else {
        t.kind = VAT_SQL_TOK_OTHER;
        if (c >= 0x80) /* one whole character; our input is valid UTF-8 */
            while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80)
                j++;
    }
    t.len = j - i;
    *pos = j;
    return t;
}
