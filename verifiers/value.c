/* value.c — the value checker: an untrusted answer that is one JSON value
 * (a number, a list, an object of numbers, an object of objects, an object
 * of strings) is
 * capped, parsed, gated on its type and scored against the spec's
 * expected value, numbers within tolerance, all or nothing.  Exports
 * vat_close and vat_check_value, plus the steps declared in
 * value_internal.h that the abstain checker reuses. */
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value_internal.h"
#include "verifiers.h"

/* Lists up to this size are compared on the stack; longer ones are the
 * one place a call allocates beyond the parse. */
#define SMALL_LIST 64
/* At most this many bytes of any answer-supplied text reach a reason. */
#define QUOTE_MAX 40
#define DEFAULT_TOL 1e-9

bool vat_close(double a, double b, double rel_tol, double abs_tol)
{
    if (!isfinite(a) || !isfinite(b))
        return false;
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= fmax(rel_tol * scale, abs_tol);
}

static void reason_init(struct vat_reason *r)
{
    r->n = 0;
    r->s[0] = '\0';
}

/* "12" for integral values, else the shortest of %.15g / %.17g that reads
 * back, so reasons show what the solver most likely wrote. */
static const char *fmt_num(double x, char out[40])
{
    if (fabs(x) < 1e15 && nearbyint(x) == x) {
        snprintf(out, 40, "%.0f", x);
    } else {
        snprintf(out, 40, "%.15g", x);
        if (strtod(out, NULL) != x)
            snprintf(out, 40, "%.17g", x);
    }
    return out;
}

/* 'outer/key' or 'key' */
static void put_path(struct vat_reason *r, const char *outer, const char *key)
{
    vat_reason_puts(r, "'");
    if (outer) {
        vat_reason_escape(r, outer, strlen(outer), QUOTE_MAX, true);
        vat_reason_puts(r, "/");
    }
    vat_reason_escape(r, key, strlen(key), QUOTE_MAX, true);
    vat_reason_puts(r, "'");
}

/* ---- numbers ------------------------------------------------------------ */

enum num_status { NUM_OK, NUM_NOT_NUMBER, NUM_NOT_FINITE };

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The value of a JSON number.  A string is never one: the prompt asks for
 * a JSON number, and a string holding digits fails the gate (type). */
static enum num_status number_of(const json_t *j, double *out)
{
    if (!json_is_number(j))
        return NUM_NOT_NUMBER;
    double d = json_number_value(j);
    if (!isfinite(d))
        return NUM_NOT_FINITE;
    *out = d;
    return NUM_OK;
}

/* ---- spec --------------------------------------------------------------- */

/* Sets an internal verdict about a spec member; returns -1. */
static int spec_fail(struct vat_verdict *v, const char *what, const char *member)
{
    *v = vat_verdict_make(false, 0, VAT_INTERNAL, "the checker spec %s '%s'", what, member);
    return -1;
}

/* Optional members: absent keeps the default; returns 0 or -1. */
static int spec_bool(const json_t *spec, const char *name, bool *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, name);
    if (!j)
        return 0;
    if (!json_is_boolean(j))
        return spec_fail(v, "has a non-boolean", name);
    *out = json_is_true(j);
    return 0;
}

static int spec_tol(const json_t *spec, const char *name, double *out, struct vat_verdict *v)
{
    const json_t *j = json_object_get(spec, name);
    if (!j)
        return 0;
    double d = json_number_value(j);
    if (!json_is_number(j) || !isfinite(d) || d < 0)
        return spec_fail(v, "has an invalid tolerance", name);
    *out = d;
    return 0;
}

const char *vat_value_shape_text(const struct vat_value_spec *vs)
{
    switch (vs->shape) {
    case VAT_SHAPE_NUMBER: return "a number";
    case VAT_SHAPE_LIST: return vs->items_number ? "an array of numbers" : "an array of strings";
    case VAT_SHAPE_OBJECT: return "an object of key -> number";
    case VAT_SHAPE_OBJECT_OF_OBJECTS: return "an object of key -> object of key -> number";
    case VAT_SHAPE_OBJECT_OF_STRINGS: return "an object of key -> string";
    case VAT_SHAPE_ANY: break;
    }
    return "a JSON value";
}

int vat_value_spec_read(const json_t *spec, bool need_expected, bool shape_optional,
                        struct vat_value_spec *vs, struct vat_verdict *v)
{
    memset(vs, 0, sizeof *vs);
    vs->rel_tol = DEFAULT_TOL;
    vs->abs_tol = DEFAULT_TOL;
    if (!json_is_object(spec)) {
        *v = vat_verdict_make(false, 0, VAT_INTERNAL, "the checker spec is not an object");
        return -1;
    }
    const json_t *shape = json_object_get(spec, "shape");
    const char *s = json_string_value(shape);
    if (!shape && shape_optional)
        vs->shape = VAT_SHAPE_ANY;
    else if (!s)
        return spec_fail(v, "lacks a string", "shape");
    else if (strcmp(s, "number") == 0)
        vs->shape = VAT_SHAPE_NUMBER;
    else if (strcmp(s, "list") == 0)
        vs->shape = VAT_SHAPE_LIST;
    else if (strcmp(s, "object") == 0)
        vs->shape = VAT_SHAPE_OBJECT;
    else if (strcmp(s, "object_of_objects") == 0)
        vs->shape = VAT_SHAPE_OBJECT_OF_OBJECTS;
    else if (strcmp(s, "object_of_strings") == 0)
        vs->shape = VAT_SHAPE_OBJECT_OF_STRINGS;
    else
        return spec_fail(v, "has an unknown", "shape");
    if (vs->shape == VAT_SHAPE_LIST) {
        const char *items = json_string_value(json_object_get(spec, "items"));
        if (items && strcmp(items, "number") == 0)
            vs->items_number = true;
        else if (!items || strcmp(items, "string") != 0)
            return spec_fail(v, "lacks a valid", "items");
    }
    if (spec_bool(spec, "ordered", &vs->ordered, v) < 0 ||
        spec_bool(spec, "unique", &vs->unique, v) < 0 ||
        spec_bool(spec, "integer", &vs->integer, v) < 0 ||
        spec_tol(spec, "rel_tol", &vs->rel_tol, v) < 0 ||
        spec_tol(spec, "abs_tol", &vs->abs_tol, v) < 0)
        return -1;
    if (need_expected) {
        vs->expected = json_object_get(spec, "expected");
        struct vat_verdict gv;
        if (!vs->expected)
            return spec_fail(v, "lacks", "expected");
        if (vs->shape == VAT_SHAPE_ANY || !vat_value_gate(vs, vs->expected, &gv)) {
            *v = vat_verdict_make(false, 0, VAT_INTERNAL,
                                  "the checker spec's 'expected' is not %s",
                                  vat_value_shape_text(vs));
            return -1;
        }
    }
    return 0;
}

/* ---- parse -------------------------------------------------------------- */

json_t *vat_value_parse(const struct vat_value_spec *vs, const char *answer, size_t len,
                        struct vat_verdict *v)
{
    const char *want = vat_value_shape_text(vs);
    if (!answer) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "no answer given; expected %s", want);
        return NULL;
    }
    if (len > VAT_MAX_ANSWER_BYTES) {
        *v = vat_verdict_make(false, 0, VAT_TOO_LARGE,
                              "the answer is %zu bytes, over the %d-byte cap", len,
                              VAT_MAX_ANSWER_BYTES);
        return NULL;
    }
    /* jansson would recurse to its own limit of 2048 levels and stops
     * reading at a NUL byte, so both are settled here, outside strings. */
    size_t depth = 0;
    bool in_str = false, esc = false, blank = true;
    for (size_t i = 0; i < len; i++) {
        char c = answer[i];
        if (c == '\0') {
            *v =
                vat_verdict_make(false, 0, VAT_PARSE,
                                 "the answer holds a NUL byte at offset %zu; expected %s", i, want);
            return NULL;
        }
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > VAT_MAX_JSON_DEPTH) {
                *v = vat_verdict_make(false, 0, VAT_TOO_LARGE,
                                      "the answer nests deeper than %d levels", VAT_MAX_JSON_DEPTH);
                return NULL;
            }
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                depth--;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            blank = false;
    }
    if (blank) {
        *v = vat_verdict_make(false, 0, VAT_PARSE, "the answer is empty; expected %s", want);
        return NULL;
    }
    json_error_t err;
    /* INT_AS_REAL: a long integer is a finite number, not a parse error */
    json_t *j = json_loadb(
        answer, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &err);
    if (j)
        return j;
    struct vat_reason r;
    reason_init(&r);
    bool overflow = json_error_code(&err) == json_error_numeric_overflow;
    vat_reason_puts(&r, overflow ? "a number is out of range (" : "not valid JSON (");
    vat_reason_text(&r, err.text, strnlen(err.text, sizeof err.text), 80, false);
    vat_reason_printf(&r, " at line %d column %d); expected %s", err.line, err.column, want);
    *v = vat_reason_verdict(false, 0, overflow ? VAT_NOT_FINITE : VAT_PARSE, &r);
    return NULL;
}

/* ---- gate --------------------------------------------------------------- */

/* Where in the answer a value sits, for reasons. */
struct where {
    const char *outer; /* object_of_objects: the outer key */
    const char *key;   /* object key */
    size_t index;      /* list item, 1-based; 0 when not a list item */
};

/* 'path' for object members, "item N" for list items. */
static void put_where(struct vat_reason *r, const struct where *w)
{
    if (w->key)
        put_path(r, w->outer, w->key);
    else
        vat_reason_printf(r, "item %zu", w->index);
}

static const char *type_text(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    }
    return "something else";
}

/* A position that asks for an object or an array holds something else:
 * "expected <shape>, got X" or "expected <shape>, but <where> is X". */
static bool shape_fail(const struct vat_value_spec *vs, const struct where *w, const json_t *j,
                       struct vat_verdict *v)
{
    struct vat_reason r;
    reason_init(&r);
    vat_reason_printf(&r, "expected %s, ", vat_value_shape_text(vs));
    if (w) {
        vat_reason_puts(&r, "but ");
        put_where(&r, w);
        vat_reason_puts(&r, " is ");
    } else {
        vat_reason_puts(&r, "got ");
    }
    vat_reason_puts(&r, type_text(j));
    *v = vat_reason_verdict(false, 0, VAT_SHAPE, &r);
    return false;
}

/* A position that asks for a number or a string holds another JSON type:
 * "expected a number at <where>, got the string '3.5'" (at the top, no
 * "at"). */
static bool type_fail(const char *want, const struct where *w, const json_t *j,
                      struct vat_verdict *v)
{
    struct vat_reason r;
    reason_init(&r);
    vat_reason_printf(&r, "expected %s", want);
    if (w) {
        vat_reason_puts(&r, " at ");
        put_where(&r, w);
    }
    vat_reason_puts(&r, ", got ");
    if (json_is_string(j)) {
        vat_reason_puts(&r, "the string ");
        vat_reason_text(&r, json_string_value(j), json_string_length(j), QUOTE_MAX, true);
    } else {
        vat_reason_puts(&r, type_text(j));
    }
    *v = vat_reason_verdict(false, 0, VAT_TYPE, &r);
    return false;
}

/* Returns true for a finite JSON number, else false with *v a type (or
 * not_finite) verdict. */
static bool gate_number(const struct vat_value_spec *vs, const json_t *j, const struct where *w,
                        struct vat_verdict *v)
{
    (void)vs;
    double d;
    enum num_status st = number_of(j, &d);
    if (st == NUM_OK)
        return true;
    if (st == NUM_NOT_FINITE) {
        /* jansson refuses overflow when parsing; kept for values built in C */
        struct vat_reason r;
        reason_init(&r);
        if (w) {
            put_where(&r, w);
            vat_reason_puts(&r, " is ");
        }
        vat_reason_puts(&r, "not a finite number");
        *v = vat_reason_verdict(false, 0, VAT_NOT_FINITE, &r);
        return false;
    }
    return type_fail("a number", w, j, v);
}

/* Gates an object of numbers; outer names it inside an object of objects. */
static bool gate_object(const struct vat_value_spec *vs, const json_t *obj, const char *outer,
                        struct vat_verdict *v)
{
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)obj, k, val) {
        struct where w = {outer, k, 0};
        if (!gate_number(vs, val, &w, v))
            return false;
    }
    return true;
}

bool vat_value_gate(const struct vat_value_spec *vs, const json_t *a, struct vat_verdict *v)
{
    const char *k;
    json_t *val;
    size_t i;
    switch (vs->shape) {
    case VAT_SHAPE_ANY:
        return true;
    case VAT_SHAPE_NUMBER:
        return gate_number(vs, a, NULL, v);
    case VAT_SHAPE_LIST:
        if (!json_is_array(a))
            return shape_fail(vs, NULL, a, v);
        json_array_foreach(a, i, val) {
            struct where w = {NULL, NULL, i + 1};
            if (vs->items_number && !gate_number(vs, val, &w, v))
                return false;
            if (!vs->items_number && !json_is_string(val))
                return type_fail("a string", &w, val, v);
        }
        return true;
    case VAT_SHAPE_OBJECT:
        if (!json_is_object(a))
            return shape_fail(vs, NULL, a, v);
        return gate_object(vs, a, NULL, v);
    case VAT_SHAPE_OBJECT_OF_OBJECTS:
        if (!json_is_object(a))
            return shape_fail(vs, NULL, a, v);
        json_object_foreach((json_t *)a, k, val) {
            struct where w = {NULL, k, 0};
            if (!json_is_object(val))
                return shape_fail(vs, &w, val, v);
            if (!gate_object(vs, val, k, v))
                return false;
        }
        return true;
    case VAT_SHAPE_OBJECT_OF_STRINGS:
        if (!json_is_object(a))
            return shape_fail(vs, NULL, a, v);
        json_object_foreach((json_t *)a, k, val) {
            struct where w = {NULL, k, 0};
            if (!json_is_string(val))
                return type_fail("a string", &w, val, v);
        }
        return true;
    }
    return shape_fail(vs, NULL, a, v);
}

/* ---- scoring ------------------------------------------------------------ */

static struct vat_verdict ok_verdict(void)
{
    return vat_verdict_make(true, 1, VAT_OK, "matches");
}

/* Compares two gated numbers; on a mismatch fills a wrong_value verdict
 * naming the place (NULL for a bare number). */
static bool number_agrees(const struct vat_value_spec *vs, const json_t *a, const json_t *e,
                          const char *outer, const char *key, struct vat_verdict *v)
{
    double da = NAN, de = NAN;
    if (number_of(a, &da) == NUM_OK && number_of(e, &de) == NUM_OK &&
        vat_close(da, de, vs->rel_tol, vs->abs_tol))
        return true;
    char b1[40], b2[40];
    struct vat_reason r;
    reason_init(&r);
    if (key) {
        put_path(&r, outer, key);
        vat_reason_puts(&r, ": ");
    }
    vat_reason_printf(&r, "got %s, expected %s", fmt_num(da, b1), fmt_num(de, b2));
    if (vs->integer && !vat_close(da, nearbyint(da), vs->rel_tol, vs->abs_tol))
        vat_reason_puts(&r, " (not an integer)");
    *v = vat_reason_verdict(true, 0, VAT_WRONG_VALUE, &r);
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static char fold(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Keys equal after trimming ASCII whitespace and folding ASCII case. */
static bool fold_equal(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    while (na && is_space(*a))
        a++, na--;
    while (na && is_space(a[na - 1]))
        na--;
    while (nb && is_space(*b))
        b++, nb--;
    while (nb && is_space(b[nb - 1]))
        nb--;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (fold(a[i]) != fold(b[i]))
            return false;
    return true;
}

/* Same key sets?  A missing gold key is key_case when a surplus answer key
 * folds to it, else missing_key; a surplus key is extra_key. */
static bool keys_agree(const json_t *a, const json_t *e, const char *outer, struct vat_verdict *v)
{
    const char *k, *ak;
    json_t *ev, *av;
    struct vat_reason r;
    json_object_foreach((json_t *)e, k, ev) {
        if (json_object_get(a, k))
            continue;
        const char *near = NULL;
        json_object_foreach((json_t *)a, ak, av) {
            if (!json_object_get(e, ak) && fold_equal(ak, k)) {
                near = ak;
                break;
            }
        }
        reason_init(&r);
        vat_reason_puts(&r, "key ");
        if (near) {
            put_path(&r, outer, near);
            vat_reason_puts(&r, " should be ");
            put_path(&r, outer, k);
        } else {
            put_path(&r, outer, k);
            vat_reason_puts(&r, " is missing");
        }
        *v = vat_reason_verdict(true, 0, near ? VAT_KEY_CASE : VAT_MISSING_KEY, &r);
        return false;
    }
    json_object_foreach((json_t *)a, ak, av) {
        if (json_object_get(e, ak))
            continue;
        reason_init(&r);
        vat_reason_puts(&r, "unexpected key ");
        put_path(&r, outer, ak);
        *v = vat_reason_verdict(true, 0, VAT_EXTRA_KEY, &r);
        return false;
    }
    return true;
}

/* Returns true when every gold key's value agrees (the key sets already
 * do), else false with *v naming the first that does not. */
static bool values_agree(const struct vat_value_spec *vs, const json_t *a, const json_t *e,
                         const char *outer, struct vat_verdict *v)
{
    const char *k;
    json_t *ev;
    json_object_foreach((json_t *)e, k, ev) {
        if (!number_agrees(vs, json_object_get(a, k), ev, outer, k, v))
            return false;
    }
    return true;
}

/* Returns true when every gold key's string value is the answer's, byte
 * for byte (the key sets already agree), else false with *v naming the
 * first that is not, and saying so when the two differ only in letter
 * case or surrounding spaces: the prompt states how values are written. */
static bool strings_agree(const json_t *a, const json_t *e, struct vat_verdict *v)
{
    const char *k;
    json_t *ev;
    json_object_foreach((json_t *)e, k, ev) {
        const json_t *av = json_object_get(a, k);
        size_t na = json_string_length(av), ne = json_string_length(ev);
        const char *sa = json_string_value(av), *se = json_string_value(ev);
        if (na == ne && memcmp(sa, se, na) == 0)
            continue;
        struct vat_reason r;
        reason_init(&r);
        put_path(&r, NULL, k);
        vat_reason_puts(&r, ": got ");
        vat_reason_text(&r, sa, na, QUOTE_MAX, true);
        vat_reason_puts(&r, ", expected ");
        vat_reason_text(&r, se, ne, QUOTE_MAX, true);
        /* fold_equal reads C strings: a NUL inside either is a difference */
        if (strlen(sa) == na && strlen(se) == ne && fold_equal(sa, se))
            vat_reason_puts(&r, " (they differ only in letter case or surrounding spaces)");
        *v = vat_reason_verdict(true, 0, VAT_WRONG_VALUE, &r);
        return false;
    }
    return true;
}

static struct vat_verdict score_object_of_objects(const struct vat_value_spec *vs, const json_t *a,
                                                  const json_t *e)
{
    struct vat_verdict v;
    const char *k;
    json_t *ev;
    /* key problems anywhere outrank value problems anywhere, so a trap
     * that drops cells reads as missing_key whatever the key order */
    if (!keys_agree(a, e, NULL, &v))
        return v;
    json_object_foreach((json_t *)e, k, ev) {
        if (!keys_agree(json_object_get(a, k), ev, k, &v))
            return v;
    }
    json_object_foreach((json_t *)e, k, ev) {
        if (!values_agree(vs, json_object_get(a, k), ev, k, &v))
            return v;
    }
    return ok_verdict();
}

/* ---- lists -------------------------------------------------------------- */

struct item {
    const char *s; /* string items */
    size_t n;
    double d;      /* number items */
};

/* Reads a gated array into items, in order. */
static void load_items(const struct vat_value_spec *vs, const json_t *arr, struct item *out)
{
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j) {
        out[i].s = NULL;
        out[i].n = 0;
        out[i].d = NAN;
        if (vs->items_number)
            (void)number_of(j, &out[i].d); /* gated already */
        else {
            out[i].s = json_string_value(j);
            out[i].n = json_string_length(j);
        }
    }
}

static bool item_eq(const struct vat_value_spec *vs, const struct item *a, const struct item *b)
{
    if (vs->items_number)
        return vat_close(a->d, b->d, vs->rel_tol, vs->abs_tol);
    return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

/* A total order: -0 before 0, which compare equal but print differently
 * in a reason, so the reason does not depend on the libc's qsort. */
static int cmp_num(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->d != b->d)
        return (a->d > b->d) - (a->d < b->d);
    return (signbit(b->d) != 0) - (signbit(a->d) != 0);
}

static int cmp_str(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

static void put_item(struct vat_reason *r, const struct vat_value_spec *vs, const struct item *it)
{
    char buf[40];
    if (vs->items_number)
        vat_reason_puts(r, fmt_num(it->d, buf));
    else
        vat_reason_text(r, it->s, it->n, QUOTE_MAX, true);
}

/* Index of the first unequal pair, or n. */
static size_t first_diff(const struct vat_value_spec *vs, const struct item *a,
                         const struct item *e, size_t n)
{
    size_t i = 0;
    while (i < n && item_eq(vs, &a[i], &e[i]))
        i++;
    return i;
}

/* The list rules in order: equal (ordered or as multisets) -> ok, then
 * duplicate, wrong_length, wrong_order, wrong_items.  As/Es are scratch
 * for the sorted copies. */
static struct vat_verdict judge_list(const struct vat_value_spec *vs, const struct item *A,
                                     size_t na, const struct item *E, size_t ne, struct item *As,
                                     struct item *Es)
{
    struct vat_reason r;
    reason_init(&r);
    if (vs->ordered && na == ne && first_diff(vs, A, E, na) == na)
        return ok_verdict();
    int (*cmp)(const void *, const void *) = vs->items_number ? cmp_num : cmp_str;
    memcpy(As, A, na * sizeof *A);
    memcpy(Es, E, ne * sizeof *E);
    qsort(As, na, sizeof *As, cmp);
    qsort(Es, ne, sizeof *Es, cmp);
    bool same_set = na == ne && first_diff(vs, As, Es, na) == na;
    if (!vs->ordered && same_set)
        return ok_verdict();
    if (vs->unique) {
        for (size_t i = 1; i < na; i++) {
            if (item_eq(vs, &As[i - 1], &As[i])) {
                if (vs->items_number)
                    vat_reason_puts(&r, "the value ");
                put_item(&r, vs, &As[i]);
                vat_reason_puts(&r, " appears more than once");
                return vat_reason_verdict(true, 0, VAT_DUPLICATE, &r);
            }
        }
    }
    if (na != ne) {
        vat_reason_printf(&r, "got %zu items, expected %zu", na, ne);
        return vat_reason_verdict(true, 0, VAT_WRONG_LENGTH, &r);
    }
    if (vs->ordered) {
        size_t i = first_diff(vs, A, E, na);
        if (same_set)
            vat_reason_puts(&r, "right items in the wrong order: ");
        vat_reason_printf(&r, "item %zu is ", i + 1);
        put_item(&r, vs, &A[i]);
        vat_reason_puts(&r, ", expected ");
        put_item(&r, vs, &E[i]);
        return vat_reason_verdict(true, 0, same_set ? VAT_WRONG_ORDER : VAT_WRONG_ITEMS, &r);
    }
    /* merge walk over both sorted lists: the first gold item the answer
     * lacks and the first answer item gold lacks */
    const struct item *miss = NULL, *extra = NULL;
    size_t i = 0, j = 0;
    while (i < ne && j < na && (!miss || !extra)) {
        if (item_eq(vs, &Es[i], &As[j])) {
            i++;
            j++;
        } else if (cmp(&Es[i], &As[j]) < 0) {
            if (!miss)
                miss = &Es[i];
            i++;
        } else {
            if (!extra)
                extra = &As[j];
            j++;
        }
    }
    if (!miss && i < ne)
        miss = &Es[i];
    if (!extra && j < na)
        extra = &As[j];
    if (miss) {
        put_item(&r, vs, miss);
        vat_reason_puts(&r, " is missing");
    }
    if (extra) {
        vat_reason_puts(&r, miss ? " and " : "");
        put_item(&r, vs, extra);
        vat_reason_puts(&r, " is not expected");
    }
    if (!miss && !extra)
        vat_reason_puts(&r, "the items differ");
    return vat_reason_verdict(true, 0, VAT_WRONG_ITEMS, &r);
}

/* Loads both lists (on the stack when short) and judges them. */
static struct vat_verdict score_list(const struct vat_value_spec *vs, const json_t *a,
                                     const json_t *e)
{
    size_t na = json_array_size(a), ne = json_array_size(e);
    struct item small[4][SMALL_LIST];
    struct item *heap = NULL, *A, *E, *As, *Es;
    if (na <= SMALL_LIST && ne <= SMALL_LIST) {
        A = small[0];
        E = small[1];
        As = small[2];
        Es = small[3];
    } else {
        heap = vat_xmalloc(2 * (na + ne) * sizeof *heap);
        A = heap;
        E = A + na;
        As = E + ne;
        Es = As + na;
    }
    load_items(vs, a, A);
    load_items(vs, e, E);
    struct vat_verdict v = judge_list(vs, A, na, E, ne, As, Es);
    free(heap);
    return v;
}

struct vat_verdict vat_value_score(const struct vat_value_spec *vs, const json_t *a)
{
    const json_t *e = vs->expected;
    struct vat_verdict v;
    if (!e)
        return vat_verdict_make(false, 0, VAT_INTERNAL, "the checker spec lacks 'expected'");
    switch (vs->shape) {
    case VAT_SHAPE_NUMBER:
        return number_agrees(vs, a, e, NULL, NULL, &v) ? ok_verdict() : v;
    case VAT_SHAPE_LIST:
        return score_list(vs, a, e);
    case VAT_SHAPE_OBJECT:
        if (!keys_agree(a, e, NULL, &v) || !values_agree(vs, a, e, NULL, &v))
            return v;
        return ok_verdict();
    case VAT_SHAPE_OBJECT_OF_OBJECTS:
        return score_object_of_objects(vs, a, e);
    case VAT_SHAPE_OBJECT_OF_STRINGS:
        if (!keys_agree(a, e, NULL, &v) || !strings_agree(a, e, &v))
            return v;
        return ok_verdict();
    case VAT_SHAPE_ANY:
        break;
    }
    return vat_verdict_make(false, 0, VAT_INTERNAL, "the checker spec has no shape to score");
}

static struct vat_verdict check_read(const struct vat_value_spec *vs, const char *answer,
                                     size_t len)
{
    struct vat_verdict v;
    json_t *a = vat_value_parse(vs, answer, len, &v);
    if (!a)
        return v;
    if (vat_value_gate(vs, a, &v))
        v = vat_value_score(vs, a);
    json_decref(a);
    return v;
}

struct vat_verdict vat_check_value(const json_t *spec, const char *answer, size_t len)
{
    struct vat_value_spec vs;
    struct vat_verdict v;
    if (vat_value_spec_read(spec, true, false, &vs, &v) < 0)
        return v;
    return check_read(&vs, answer, len);
}

/* ---- the fast accept path ------------------------------------------------ */

/* A prepared spec also holds its expected value as C data, so that a check
 * can read a plain answer (numbers, ASCII strings without escapes, the
 * spec's shape) straight against it without building JSON.  The fast path
 * only ever ACCEPTS: when it reads the whole answer and everything agrees
 * it returns the verdict the full path would (ok, "matches"); anything
 * else (an escape, a number written as a string, a duplicate or missing
 * key, a value out of tolerance, a byte it does not know, too many
 * items) sends the answer down the full jansson path, which writes the
 * reason.  So verdicts are the full path's by construction; tests compare
 * the two over the golden cases and random answers. */

/* Expected objects and lists up to this size are held for the fast path. */
#define FAST_MAX_ITEMS SMALL_LIST
/* A number literal longer than this goes down the full path. */
#define FAST_NUM_MAX 64

struct fast_obj;
struct fast_key {
    const char *k; /* borrowed from the spec */
    size_t n;
    double d;                  /* objects of numbers */
    const struct fast_obj *sub; /* objects of objects */
    const char *s;             /* objects of strings: borrowed from the spec */
    size_t sn;
};
struct fast_obj {
    size_t n;
    struct fast_key *keys;
};

struct vat_value_prep {
    int rc; /* vat_value_spec_read's */
    struct vat_value_spec vs;
    struct vat_verdict v; /* the spec's verdict when rc < 0 */
    bool fast;            /* the expected value is held below */
    double num;           /* VAT_SHAPE_NUMBER */
    struct fast_obj obj;  /* VAT_SHAPE_OBJECT and _OF_OBJECTS (outer) */
    struct fast_obj *subs;
    struct item *items;   /* VAT_SHAPE_LIST, as load_items reads them */
    size_t nitems;
};

/* Reads an object of numbers (or, with subs, of objects of numbers; with
 * strings, of strings) from the spec; false when it does not fit the fast
 * path. */
static bool fast_obj_read(const json_t *e, struct fast_obj *o, struct fast_obj *subs,
                          bool strings)
{
    size_t n = json_object_size(e), i = 0;
    if (n > FAST_MAX_ITEMS)
        return false;
    o->keys = vat_xcalloc(n ? n : 1, sizeof *o->keys);
    o->n = n;
    for (void *it = json_object_iter((json_t *)e); it;
         it = json_object_iter_next((json_t *)e, it)) {
        const char *k = json_object_iter_key(it);
        const json_t *val = json_object_iter_value(it);
        struct fast_key *fk = &o->keys[i];
        fk->k = k;
        fk->n = json_object_iter_key_len(it);
        /* a key holding a NUL is looked up by its prefix on the full path */
        if (strlen(k) != fk->n || i >= n)
            return false;
        if (strings) {
            if (!json_is_string(val))
                return false;
            fk->s = json_string_value(val);
            fk->sn = json_string_length(val);
        } else if (subs) {
            if (!fast_obj_read(val, &subs[i], NULL, false))
                return false;
            fk->sub = &subs[i];
        } else if (number_of(val, &fk->d) != NUM_OK) {
            return false;
        }
        i++;
    }
    return i == n;
}

static void fast_obj_free(struct fast_obj *o)
{
    free(o->keys);
}

static void fast_prepare(struct vat_value_prep *p)
{
    const struct vat_value_spec *vs = &p->vs;
    const json_t *e = vs->expected;
    switch (vs->shape) {
    case VAT_SHAPE_NUMBER:
        p->fast = number_of(e, &p->num) == NUM_OK;
        break;
    case VAT_SHAPE_OBJECT:
        p->fast = fast_obj_read(e, &p->obj, NULL, false);
        break;
    case VAT_SHAPE_OBJECT_OF_STRINGS:
        p->fast = fast_obj_read(e, &p->obj, NULL, true);
        break;
    case VAT_SHAPE_OBJECT_OF_OBJECTS:
        if (json_object_size(e) > FAST_MAX_ITEMS)
            break;
        p->subs = vat_xcalloc(json_object_size(e) + 1, sizeof *p->subs);
        p->fast = fast_obj_read(e, &p->obj, p->subs, false);
        break;
    case VAT_SHAPE_LIST:
        p->nitems = json_array_size(e);
        if (p->nitems > FAST_MAX_ITEMS)
            break;
        p->items = vat_xcalloc(p->nitems + 1, sizeof *p->items);
        load_items(vs, e, p->items);
        p->fast = true;
        break;
    case VAT_SHAPE_ANY:
        break;
    }
}

struct vat_value_prep *vat_value_prepare(const json_t *spec)
{
    struct vat_value_prep *p = vat_xcalloc(1, sizeof *p);
    p->rc = vat_value_spec_read(spec, true, false, &p->vs, &p->v);
    if (p->rc == 0)
        fast_prepare(p);
    return p;
}

void vat_value_prep_free(struct vat_value_prep *p)
{
    if (!p)
        return;
    if (p->subs)
        for (size_t i = 0; i < p->obj.n; i++)
            fast_obj_free(&p->subs[i]);
    fast_obj_free(&p->obj);
    free(p->subs);
    free(p->items);
    free(p);
}

/* A cursor over the answer; every reader returns false to give up. */
struct fast_in {
    const char *s, *end;
};

/* jansson's whitespace */
static void fast_ws(struct fast_in *in)
{
    while (in->s < in->end && (*in->s == ' ' || *in->s == '\t' || *in->s == '\n' || *in->s == '\r'))
        in->s++;
}

static bool fast_char(struct fast_in *in, char c)
{
    fast_ws(in);
    if (in->s < in->end && *in->s == c) {
        in->s++;
        return true;
    }
    return false;
}

/* A string of printable ASCII without escapes: its bytes are its value. */
static bool fast_string(struct fast_in *in, const char **out, size_t *n)
{
    fast_ws(in);
    if (in->s >= in->end || *in->s != '"')
        return false;
    const char *b = ++in->s;
    while (in->s < in->end) {
        unsigned char c = (unsigned char)*in->s;
        if (c == '"') {
            *out = b;
            *n = (size_t)(in->s - b);
            in->s++;
            return true;
        }
        if (c < 0x20 || c > 0x7e || c == '\\')
            return false;
        in->s++;
    }
    return false;
}

static const char *fast_digits(const char *s, const char *end)
{
    while (s < end && is_digit(*s))
        s++;
    return s;
}

/* The literal [b, e) (JSON's number grammar, already checked) as the
 * double strtod gives, when that needs no rounding beyond one IEEE
 * operation: at most 19 significant digits forming an integer m <= 2^53
 * and a decimal exponent k with |k| <= 22, so that m and 10^|k| are exact
 * doubles and m * 10^k (or m / 10^-k) is the one correctly rounded result
 * (Clinger's fast path; x86-64 and the like evaluate doubles in double,
 * FLT_EVAL_METHOD 0).  false: left to strtod. */
static bool exact_decimal(const char *b, const char *e, double *d)
{
#if FLT_EVAL_METHOD == 0
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    bool neg = *b == '-';
    const char *s = b + neg;
    uint64_t m = 0;
    int digits = 0;
    long k = 0;
    for (; s < e && is_digit(*s); s++) {
        if (m || *s != '0')
            digits++;
        m = m * 10 + (uint64_t)(*s - '0');
        if (digits > 19)
            return false;
    }
    if (s < e && *s == '.')
        for (s++; s < e && is_digit(*s); s++) {
            if (m || *s != '0')
                digits++;
            if (digits > 19)
                return false;
            m = m * 10 + (uint64_t)(*s - '0');
            k--;
        }
    if (s < e) { /* the exponent */
        s++;
        bool eneg = *s == '-';
        if (*s == '+' || *s == '-')
            s++;
        long x = 0;
        for (; s < e; s++) {
            x = x * 10 + (*s - '0');
            if (x > 400)
                return false;
        }
        k += eneg ? -x : x;
    }
    if (m > (UINT64_C(1) << 53) || k < -22 || k > 22)
        return false;
    double v = (double)m;
    v = k < 0 ? v / p10[-k] : v * p10[k];
    *d = neg ? -v : v;
    return true;
#else
    (void)b, (void)e, (void)d;
    return false;
#endif
}

/* A number in JSON's grammar, read as jansson reads it with
 * JSON_DECODE_INT_AS_REAL: strtod over the literal (the C locale's point
 * is checked by the caller); an overflow goes down the full path. */
static bool fast_number(struct fast_in *in, double *d)
{
    fast_ws(in);
    const char *b = in->s, *s = b, *end = in->end;
    if (s < end && *s == '-')
        s++;
    if (s >= end || !is_digit(*s))
        return false;
    s = *s == '0' ? s + 1 : fast_digits(s, end);
    if (s < end && *s == '.') {
        if (s + 1 >= end || !is_digit(s[1]))
            return false;
        s = fast_digits(s + 1, end);
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < end && (*s == '+' || *s == '-'))
            s++;
        if (s >= end || !is_digit(*s))
            return false;
        s = fast_digits(s, end);
    }
    size_t n = (size_t)(s - b);
    if (exact_decimal(b, s, d)) {
        in->s = s;
        return true;
    }
    char buf[FAST_NUM_MAX];
    /* strtod reads the locale's decimal point */
    if (n >= sizeof buf || strcmp(localeconv()->decimal_point, ".") != 0)
        return false;
    memcpy(buf, b, n);
    buf[n] = '\0';
    char *stop;
    double v = strtod(buf, &stop);
    if (stop != buf + n || !isfinite(v))
        return false;
    *d = v;
    in->s = s;
    return true;
}

/* Reads an object whose keys are exactly o's, each once, with every value
 * agreeing (numbers within tolerance, or objects read the same way). */
static bool fast_object(struct fast_in *in, const struct vat_value_spec *vs,
                        const struct fast_obj *o)
{
    bool seen[FAST_MAX_ITEMS] = {false};
    size_t count = 0;
    if (!fast_char(in, '{'))
        return false;
    if (fast_char(in, '}'))
        return o->n == 0;
    for (;;) {
        const char *k;
        size_t n, i = 0;
        if (!fast_string(in, &k, &n))
            return false;
        while (i < o->n && (o->keys[i].n != n || memcmp(o->keys[i].k, k, n) != 0))
            i++;
        if (i == o->n || seen[i] || !fast_char(in, ':'))
            return false;
        seen[i] = true;
        count++;
        if (o->keys[i].sub) {
            if (!fast_object(in, vs, o->keys[i].sub))
                return false;
        } else if (o->keys[i].s) {
            const char *sv;
            size_t sn;
            if (!fast_string(in, &sv, &sn) || sn != o->keys[i].sn ||
                memcmp(sv, o->keys[i].s, sn) != 0)
                return false;
        } else {
            double d;
            if (!fast_number(in, &d) || !vat_close(d, o->keys[i].d, vs->rel_tol, vs->abs_tol))
                return false;
        }
        if (fast_char(in, ','))
            continue;
        if (fast_char(in, '}'))
            break;
        return false;
    }
    return count == o->n;
}

/* A list of the spec's item type, judged by the list rules themselves. */
static bool fast_list(struct fast_in *in, const struct vat_value_prep *p)
{
    const struct vat_value_spec *vs = &p->vs;
    struct item A[FAST_MAX_ITEMS], As[FAST_MAX_ITEMS], Es[FAST_MAX_ITEMS];
    size_t na = 0;
    if (!fast_char(in, '['))
        return false;
    if (!fast_char(in, ']')) {
        for (;;) {
            if (na == FAST_MAX_ITEMS)
                return false;
            struct item *it = &A[na++];
            it->s = NULL;
            it->n = 0;
            it->d = NAN;
            if (vs->items_number ? !fast_number(in, &it->d) : !fast_string(in, &it->s, &it->n))
                return false;
            if (fast_char(in, ','))
                continue;
            if (fast_char(in, ']'))
                break;
            return false;
        }
    }
    struct vat_verdict v = judge_list(vs, A, na, p->items, p->nitems, As, Es);
    return v.score == 1.0 && v.gate_passed;
}

/* True when the answer certainly scores 1 on the full path. */
static bool fast_accept(const struct vat_value_prep *p, const char *answer, size_t len)
{
    if (!p->fast || !answer || len > VAT_MAX_ANSWER_BYTES)
        return false;
    struct fast_in in = {answer, answer + len};
    bool ok = false;
    switch (p->vs.shape) {
    case VAT_SHAPE_NUMBER: {
        double d;
        ok = fast_number(&in, &d) && vat_close(d, p->num, p->vs.rel_tol, p->vs.abs_tol);
        break;
    }
    case VAT_SHAPE_OBJECT:
    case VAT_SHAPE_OBJECT_OF_OBJECTS:
    case VAT_SHAPE_OBJECT_OF_STRINGS:
        ok = fast_object(&in, &p->vs, &p->obj);
        break;
    case VAT_SHAPE_LIST:
        ok = fast_list(&in, p);
        break;
    case VAT_SHAPE_ANY:
        break;
    }
    fast_ws(&in);
    return ok && in.s == in.end;
}

bool vat_value_prep_accepts(const struct vat_value_prep *p, const char *answer, size_t len)
{
    return p->rc == 0 && fast_accept(p, answer, len);
}

bool vat_value_prep_gates(const struct vat_value_prep *p, const json_t *j)
{
    struct vat_verdict v;
    return p->rc == 0 && j && vat_value_gate(&p->vs, j, &v);
}

struct vat_verdict vat_check_value_prepared(const struct vat_value_prep *p, const char *answer,
                                            size_t len)
{
    if (p->rc < 0)
        return p->v;
    if (fast_accept(p, answer, len))
        return ok_verdict();
    return check_read(&p->vs, answer, len);
}
