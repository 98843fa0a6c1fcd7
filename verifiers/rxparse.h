/* rxparse.h — the Python-re parser: a pattern read as Python 3.11's re
 * parser reads it (re/_parser.py, token for token, with Python's own
 * error wording), and rewritten into a PCRE2 pattern that means the same
 * thing (verifiers/rxparse.c).  The regex checker compiles what it
 * writes (verifiers/regex.c); the builder's mutants (src/mutate.c) read
 * the same parse as a list of tokens (vat_rx_tokens).  Exports struct
 * rx_tr, vat_rx_translate, vat_rx_translation_release, struct vat_rx_tok,
 * struct vat_rx_toks and vat_rx_tokens. */
#ifndef VAT_RXPARSE_H
#define VAT_RXPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vat.h"

/* Group nesting depth (Python itself fails somewhere past a few hundred). */
#define RX_MAX_NEST 200
/* The rewritten pattern may grow (classes spelled out); this bounds it. */
#define RX_MAX_OUT (256 * 1024)
#define RX_MAX_REPEAT 65535u
/* Python's MAXREPEAT: counts at or above it are an OverflowError there. */
#define RX_PY_MAXREPEAT 4294967295u
struct rx_name {
    size_t off, len; /* into the pattern */
    size_t gid;
};

struct vat_rx_toks;

struct rx_tr {
    const unsigned char *s;
    size_t n, i;
    bool utf;     /* emitting for PCRE2_UTF | PCRE2_UCP                   */
    bool restart; /* met a code point >= 0x80 while !utf: redo with utf   */
    unsigned gflags;
    struct vat_buf out;
    size_t ngroups;        /* capture groups opened so far                 */
    unsigned char *closed; /* closed[gid] once the group's ')' is read     */
    size_t closed_cap;
    struct rx_name *names;
    size_t nnames, names_cap;
    long lb_groups;        /* Python's state.lookbehindgroups, -1 for None */
    size_t maxcond;        /* highest group a conditional refers to        */
    size_t maxcond_pos;
    const char *code;      /* set on failure                               */
    char msg[200];
    struct vat_rx_toks *toks; /* when not NULL, the tokens met, in order    */
};

/* One translation attempt of the len bytes at pat (utf: emitting for
 * PCRE2_UTF | PCRE2_UCP); returns 0 with t->out holding the PCRE2
 * pattern, or -1 with t->code/t->msg set (or t->restart: the pattern
 * holds a code point >= 0x80, translate again with utf). */
int vat_rx_translate(struct rx_tr *t, const char *pat, size_t len, bool utf);
/* Frees what a translation holds (its output among it). */
void vat_rx_translation_release(struct rx_tr *t);

/* ---- the parse as tokens ------------------------------------------------ *
 * What mutation needs of a pattern: its pieces in order, each with its
 * place in the text, as the parser met them (verbose-mode blanks and
 * comments are no piece). */
enum vat_rx_tok_kind {
    VAT_RX_LIT,     /* a literal character, escaped or not       */
    VAT_RX_CLASS,   /* [..], \d \D \w \W \s \S, .                  */
    VAT_RX_ANCHOR,  /* ^ $ \A \Z                                   */
    VAT_RX_BOUND,   /* \b \B                                       */
    VAT_RX_OPEN,    /* ( (?: (?P<n> (?= (?! (?<= (?<! (?flags: (?(1) */
    VAT_RX_CLOSE,   /* )                                           */
    VAT_RX_ALT,     /* |                                           */
    VAT_RX_QUANT,   /* * + ? {..} (without a lazy mark)            */
    VAT_RX_OTHER    /* backreferences, inline flags, comments, a lazy mark */
};

struct vat_rx_tok {
    enum vat_rx_tok_kind kind;
    size_t off, len;
    bool look;       /* VAT_RX_OPEN: a lookaround                       */
    size_t match;    /* VAT_RX_OPEN: index of its ')'                    */
    long lo, hi;     /* VAT_RX_QUANT: bounds, hi -1 for no upper bound   */
    bool braces;     /* VAT_RX_QUANT: written with braces                */
};

struct vat_rx_toks {
    struct vat_rx_tok *v;
    size_t n, cap;
    bool ignorecase, dotall; /* an inline flag group turns i or s on */
};

/* Parses the Python-re pattern pat into out (initialise it zeroed; free
 * out->v after) as the regex checker parses it.  0, or -1 with e set to
 * Python's error (or the checker's refusal); out then holds nothing. */
int vat_rx_tokens(const char *pat, struct vat_rx_toks *out, struct vat_err *e);

#endif
