/* toml.h — the small TOML reader for seeds.toml.  Accepts the subset
 * seeds.toml uses: comments, [tables], [dotted.tables], bare and quoted
 * keys, dotted keys, basic "strings" (with \" \\ \n \t \uXXXX escapes) and
 * 'literal strings', integers (decimal, optional sign and _ separators),
 * floats (decimal/exponent, inf/nan rejected), booleans, and one-line or
 * multi-line arrays of these (trailing comma allowed), and one-line
 * inline tables `{ k = v, ... }` of these (no nesting, no dotted keys,
 * no trailing comma).  Anything else — dates, multi-line strings, arrays of tables, hex ints —
 * is a `PATH:LINE: reason` error, as are duplicate keys and tables.
 * Exports vat_toml_parse and vat_toml_path_append. */
#ifndef VAT_TOML_H
#define VAT_TOML_H

#include <stddef.h>

#include <jansson.h>

#include "vat.h"

/* Parses text into a JSON object tree (tables -> objects, arrays ->
 * arrays, integers -> json_integer, floats -> json_real).  *lines, when
 * lines is not NULL, receives an object mapping each dotted key path
 * ("templates.grouped_sum.count", and table paths too) to the line number
 * where it was defined, so later validation can say PATH:LINE.  path is
 * only used in messages.  Returns NULL with e = "PATH:LINE: reason". */
json_t *vat_toml_parse(const char *text, size_t len, const char *path, json_t **lines,
                       struct vat_err *e);

/* Appends key to a dotted key path exactly as vat_toml_parse spells the
 * paths in *lines: a bare key as itself, any other key as a quoted TOML
 * string ("a.\"b c\""), joined with '.'; prefix NULL or "" gives the key
 * alone.  Returns a new string. */
char *vat_toml_path_append(const char *prefix, const char *key);

#endif
