/* value_internal.h — the steps of the value checker (spec reading,
 * capped parsing, the type gate, scoring) and its bounded reason builder,
 * shared by value.c and abstain.c only; nothing outside verifiers/ should
 * include it.  Exports struct vat_value_spec and the vat_value_*
 * functions (the reason builder they share: reason.h). */
#ifndef VAT_VALUE_INTERNAL_H
#define VAT_VALUE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "reason.h"
#include "vat.h"

enum vat_value_shape {
    VAT_SHAPE_NUMBER,
    VAT_SHAPE_LIST,
    VAT_SHAPE_OBJECT,
    VAT_SHAPE_OBJECT_OF_OBJECTS,
    VAT_SHAPE_OBJECT_OF_STRINGS, /* key -> string, compared byte for byte */
    VAT_SHAPE_ANY /* abstain specs of unanswerable tasks may omit "shape" */
};

/* The value members of a checker spec, read once per call. */
struct vat_value_spec {
    enum vat_value_shape shape;
    bool items_number; /* lists: items are numbers (else strings) */
    bool ordered, unique, integer;
    double rel_tol, abs_tol;
    const json_t *expected; /* borrowed from the spec; NULL when not needed */
};

/* Reads the value members of spec.  need_expected demands "expected" (and
 * checks it has the declared shape); shape_optional lets a spec without
 * "shape" gate any JSON value.  Returns 0, or -1 with *v an internal
 * verdict naming the bad member. */
int vat_value_spec_read(const json_t *spec, bool need_expected, bool shape_optional,
                        struct vat_value_spec *vs, struct vat_verdict *v);

/* The expected shape in words: "an object of key -> number" (static). */
const char *vat_value_shape_text(const struct vat_value_spec *vs);

/* Applies the length and depth caps, then parses the answer as one JSON
 * value.  Returns a new reference, or NULL with *v the failing verdict
 * (too_large, parse or not_finite; gate not passed). */
json_t *vat_value_parse(const struct vat_value_spec *vs, const char *answer, size_t len,
                        struct vat_verdict *v);

/* The type gate.  Returns true when the answer has the declared shape
 * with the declared JSON type at every position, else false with *v the
 * failing verdict: type (a position asking for a number or a string holds
 * another JSON type; a string of digits is not a number), shape (one
 * asking for an object or an array holds something else) or not_finite. */
bool vat_value_gate(const struct vat_value_spec *vs, const json_t *answer, struct vat_verdict *v);

/* Scores an answer that passed the gate against vs->expected: score 1 and
 * "ok", or score 0 with the first difference. */
struct vat_verdict vat_value_score(const struct vat_value_spec *vs, const json_t *answer);

/* For a value spec prepared by vat_value_prepare (verifiers.h): true
 * when the answer certainly scores 1 (ok, "matches") by the full path,
 * read without building JSON; false says nothing. */
struct vat_value_prep;
bool vat_value_prep_accepts(const struct vat_value_prep *p, const char *answer, size_t len);
/* True when the prepared spec is usable and j has its shape. */
bool vat_value_prep_gates(const struct vat_value_prep *p, const json_t *j);

#endif
