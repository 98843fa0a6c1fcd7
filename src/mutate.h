/* mutate.h — mutants of a gold program, for measuring how strong a
 * checker's held-out cases are (design.md section 5, "Checker strength is
 * measured, not assumed").  A mutant is the gold text with one small,
 * plausible change of a named kind; a checker is strong when its cases
 * tell (nearly) every such change from gold.
 *
 * Regex (Python re syntax), read by the regex checker's own parser
 * (verifiers/rxparse.h: escapes, classes with a leading ']' or '^',
 * groups, inline flags, comments, quantifiers and the '{' that is only a
 * literal, as Python reads them; a pattern Python refuses is refused):
 *   drop_anchor       ^ $ \A \Z removed
 *   drop_boundary     \b or \B removed
 *   drop_lookaround   a whole (?=..) (?!..) (?<=..) (?<!..) removed
 *   widen_quantifier  {n} -> {n-1,n+1} and {n,}; {a,b} -> {a-1,b+1} and
 *                     {a,}; ? -> *; + -> *; {a,} -> {a-1,}
 *   class_to_digit    a class ([..], \d \w \s \D \W \S, .) -> \d
 *   class_to_word     ... -> \w
 *   class_to_any      ... -> .
 * SQL (SQLite), read by the SQL checker's own lexer (verifiers/sql/lex.h:
 * strings, quoted identifiers, blobs, numbers, words, both comment forms),
 * operators SQLite reads as one (<=, ||, ->>) joined:
 *   swap_aggregate    SUM COUNT AVG MAX MIN TOTAL -> each other one
 *                     (a two-argument max/min only to min/max)
 *   count_star        COUNT(x) -> COUNT(*)
 *   flip_comparison   = == <> != < <= > >= to their neighbours and their
 *                     negation; IS <-> IS NOT; IN <-> NOT IN
 *   shift_constant    an integer or decimal literal, or a string holding
 *                     only digits ('2023', '07'), by -1 and +1
 *   shift_date        a 'YYYY-MM-DD' (or 'YYYY-MM-DD HH:MM:SS') literal
 *                     by -1 and +1 day
 *   drop_conjunct     one AND-separated conjunct at the top level of a
 *                     WHERE, ON or HAVING condition (the whole clause when
 *                     it has one; ON's condition becomes 1)
 *   swap_order        an ORDER BY item ASC <-> DESC, DESC added where ASC
 *                     is implicit
 *   drop_distinct     DISTINCT removed
 *   left_to_inner     LEFT [OUTER] JOIN -> JOIN
 *   drop_coalesce     COALESCE(x, ..) / IFNULL(x, ..) -> x
 *
 * Mutants are deduplicated by text and none equals gold.  Some mutants are
 * equivalent to gold by construction and are marked so (they say nothing
 * about a checker): a class replaced by one that holds exactly the same
 * ASCII characters (held-out strings are ASCII), and an ORDER BY change
 * where order cannot show (the outermost ORDER BY of a task compared as a
 * multiset, or a subquery's ORDER BY without LIMIT), and SUM <-> TOTAL
 * inside COALESCE(.., 0) or IFNULL(.., 0) (rows compare numbers by value,
 * so the integer and the real total are the same answer), and a
 * COALESCE dropped around TOTAL(..) or COUNT(..), which are never NULL.
 *
 * Exports struct vat_mutant, struct vat_mutants, vat_mutate_regex,
 * vat_mutate_sql and vat_mutants_release. */
#ifndef VAT_MUTATE_H
#define VAT_MUTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "vat.h"

struct vat_mutant {
    const char *kind; /* one of the kind names above (static storage)       */
    char *text;       /* the whole mutated program                           */
    size_t offset;    /* where in gold the change starts                     */
    bool equivalent;  /* equivalent to gold by construction: not informative */
};

struct vat_mutants {
    struct vat_mutant *v;
    size_t n, cap;
};
#define VAT_MUTANTS_INIT {NULL, 0, 0}

/* Appends the mutants of the regex pattern gold (Python re syntax) to out.
 * Returns 0, or -1 with e set when gold cannot be tokenised (an unclosed
 * group or class, a trailing backslash); out then holds nothing new. */
int vat_mutate_regex(const char *gold, struct vat_mutants *out, struct vat_err *e);

/* Appends the mutants of the SQLite query gold to out.  ordered says
 * whether the task compares rows in order (else the outermost ORDER BY
 * cannot matter).  Returns 0, or -1 with e set when gold cannot be
 * tokenised (an unclosed string, identifier or parenthesis). */
int vat_mutate_sql(const char *gold, bool ordered, struct vat_mutants *out, struct vat_err *e);

/* Frees the texts and the array; m can be reused after. */
void vat_mutants_release(struct vat_mutants *m);

#endif
