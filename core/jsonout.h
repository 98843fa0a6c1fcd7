/* jsonout.h — deterministic JSON text: compact, keys in insertion order,
 * reals in the shortest form that reads back to the same double, integral
 * reals written with ".0" never dropped silently.  jansson prints reals
 * with %.17g, so every output of vat goes through here instead.
 * Exports vat_json_dumps, vat_json_dump_buf, vat_fmt_real, the row writer
 * vat_jw_* and vat_json_members. */
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

/* A JSON object written member by member straight into a buffer: the
 * text vat_json_dump_buf gives for the jansson object the same calls would
 * build, without building it (no value allocated, validated and freed per
 * member).  As in a jansson object, a member whose value jansson would not
 * make is left out: a string that is NULL or not UTF-8 (json_string), a
 * real that is not finite (json_real), a NULL json_t.  key is NULL for an
 * element of an array.  Keys are plain names (no escapes). */
#define VAT_JW_DEPTH 8
struct vat_jw {
    struct vat_buf *b;
    int depth;                      /* open objects and arrays */
    bool more[VAT_JW_DEPTH];        /* a member already written at that depth */
    char close[VAT_JW_DEPTH];       /* '}' or ']' */
};
/* Opens the top-level object in b. */
void vat_jw_begin(struct vat_jw *w, struct vat_buf *b);
/* Opens a member object or array (key NULL: an element). */
void vat_jw_object(struct vat_jw *w, const char *key);
void vat_jw_array(struct vat_jw *w, const char *key);
/* Closes the innermost open object or array (the top-level one last). */
void vat_jw_end(struct vat_jw *w);
void vat_jw_string(struct vat_jw *w, const char *key, const char *s);
void vat_jw_stringf(struct vat_jw *w, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void vat_jw_int(struct vat_jw *w, const char *key, long long x);
void vat_jw_bool(struct vat_jw *w, const char *key, bool x);
void vat_jw_real(struct vat_jw *w, const char *key, double x);
/* v as JSON (a NULL v leaves the member out). */
void vat_jw_value(struct vat_jw *w, const char *key, const json_t *v);
/* v's JSON text as a string member (the *_json columns). */
void vat_jw_text(struct vat_jw *w, const char *key, const json_t *v);

/* Reads the named top-level members of the JSON object text s[0..n) (one
 * table row), parsing only their values: a long prompt beside them is
 * stepped over, never copied.  out[i] gets member keys[i]'s value (new
 * reference) or NULL when absent; keys are plain names (no escapes).
 * Returns 0, or -1 (every out NULL) when s is not one JSON object. */
int vat_json_members(const char *s, size_t n, const char *const *keys, size_t nkeys,
                     json_t **out);

#endif
