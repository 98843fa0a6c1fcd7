/* verifier_row.h — the reader of a verifiers row, the checkers' own: the
 * corpus handle (lib/corpus.c) and every command that reads the
 * verifiers table go through it, so the row's layout is read in one
 * place; its writer is the builder's (src/tables.h,
 * vat_verifier_put_spec).  Exports vat_verifier_spec. */
#ifndef VAT_VERIFIER_ROW_H
#define VAT_VERIFIER_ROW_H

#include <jansson.h>

/* The checker spec of a verifiers row, as the shared verifiers read it
 * (a new reference; NULL when the row holds none).  Every reader of the
 * verifiers table goes through this, so the row's layout lives here:
 * the row's spec_json with its `expected` value put back from the
 * row's `expected` column (canonical JSON text, null when none). */
json_t *vat_verifier_spec(const json_t *row);

#endif
