/* jsonout.h — deterministic JSON text: compact, keys in insertion order,
 * reals in the shortest form that reads back to the same double, integral
 * reals written with ".0" never dropped silently.  jansson prints reals
 * with %.17g, so every output of vat goes through here instead.
 * Exports vat_json_dumps, vat_json_dump_buf, vat_fmt_real and
 * vat_json_members. */
#ifndef VAT_JSONOUT_H
#define VAT_JSONOUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "vat.h"

/* Shortest round-trip decimal for a finite double ("0.1", "1234.5", "12",
 * "1e-07"); writes "null" for NaN/Inf.  Returns out (32 bytes). */
char *vat_fmt_real(double x, char out[32]);
/* The same text found the slow way, by snprintf and strtod for every digit
 * count (what vat_fmt_real's fast path is tested against). */
char *vat_fmt_real_by_printf(double x, char out[32]);
/* The fewest fraction digits, from `from` up to `to` (3 or more), with
 * which x in fixed point ("%.*f", cut to cap bytes) reads back as x: true
 * with the text in out, false (out then at `to` digits) when none does. */
bool vat_fmt_fixed(double x, int from, int to, char *out, size_t cap);
/* Appends the JSON text of v to b. */
void vat_json_dump_buf(struct vat_buf *b, const json_t *v);
/* Returns the JSON text of v in a new string. */
char *vat_json_dumps(const json_t *v);

/* Reads the named top-level members of the JSON object text s[0..n) (one
 * table row), parsing only their values: a long prompt beside them is
 * stepped over, never copied.  out[i] gets member keys[i]'s value (new
 * reference) or NULL when absent; keys are plain names (no escapes).
 * Returns 0, or -1 (every out NULL) when s is not one JSON object. */
int vat_json_members(const char *s, size_t n, const char *const *keys, size_t nkeys,
                     json_t **out);

#endif
