/* lex.h — SQLite's tokens, read as SQLite's tokenizer reads them: words
 * (keywords and bare identifiers, any byte >= 0x80 among them), 'strings',
 * "quoted" `identifiers` [too], x'blobs', numbers (with SQLite's greedy
 * tail: 1e5, 0x1F, 1.5abc is one token), parameters, ';', and every other
 * byte as a token of its own; blanks and both comment forms skipped (an
 * unterminated block comment runs to the end, as in SQLite).  The one SQL
 * lexer: the checker's gate (verifiers/sql/gate.c) reads an answer with
 * it, the builder's mutants (src/mutate.c) a gold query.  Exports enum
 * vat_sql_tok_kind, struct vat_sql_tok and vat_sql_next_tok. */
#ifndef VAT_SQL_LEX_H
#define VAT_SQL_LEX_H

#include <stdbool.h>
#include <stddef.h>

enum vat_sql_tok_kind {
    VAT_SQL_TOK_END,
    VAT_SQL_TOK_WORD,   /* keyword or bare identifier  */
    VAT_SQL_TOK_STRING, /* 'text'                      */
    VAT_SQL_TOK_QUOTED, /* "ident", `ident`, [ident]   */
    VAT_SQL_TOK_BLOB,   /* x'hex'                      */
    VAT_SQL_TOK_NUMBER,
    VAT_SQL_TOK_PARAM,  /* ?, ?7, :name, @name, $name  */
    VAT_SQL_TOK_SEMI,
    VAT_SQL_TOK_OTHER
};

struct vat_sql_tok {
    enum vat_sql_tok_kind kind;
    size_t off, len;
    bool unclosed; /* a string, quoted identifier or blob the text ends inside */
};

/* The token at or after *pos of s[0..n), *pos moved past it; kind
 * VAT_SQL_TOK_END (off the end of the blanks) when there is none. */
struct vat_sql_tok vat_sql_next_tok(const char *s, size_t n, size_t *pos);

#endif
