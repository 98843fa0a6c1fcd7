/* values.h — realistic value generators (ids, names, customers, regions,
 * dates, money in integer cents, dirty spellings of labels), the exact
 * formatting and strict parsing of money, dates, timestamps and months,
 * and the trim-and-lower-case normalisation of hand-typed labels.
 * Exports the vat_gen_*, vat_fmt_*, vat_parse_* and vat_date_* functions,
 * vat_words, vat_norm_label, struct vat_customer_mix, enum vat_dirty and
 * the vat_gen_fn type. */
#ifndef VAT_VALUES_H
#define VAT_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* A person's name, "Maria Lopez".  Returns out. */
char *vat_gen_person(struct vat_rng *r, char *out, size_t cap);
/* A company name, "Northwind Logistics".  Returns out. */
char *vat_gen_company(struct vat_rng *r, char *out, size_t cap);
/* An id: prefix followed by `digits` decimal digits ("INV-004512").  Returns out. */
char *vat_gen_id(struct vat_rng *r, const char *prefix, int digits, char *out, size_t cap);
/* Picks n distinct entries of the named word list into out[] (n <= list
 * size; returns the number picked).  Lists: "region", "product", "team",
 * "carrier", "country", "city", "first_name", "last_name", "status",
 * "account", "category". */
size_t vat_gen_distinct(struct vat_rng *r, const char *list, const char **out, size_t n);
/* Returns the named word list and its size through n (NULL if unknown). */
const char *const *vat_words(const char *list, size_t *n);

/* Civil dates as days since 1970-01-01 (proleptic Gregorian). */
int32_t vat_date_from_civil(int y, int m, int d);
void vat_date_to_civil(int32_t days, int *y, int *m, int *d);
/* Returns 1 if y-m-d is a real calendar date. */
int vat_date_valid(int y, int m, int d);
/* "YYYY-MM-DD" into out (11 bytes). */
char *vat_fmt_date(int32_t days, char out[11]);
/* "YYYY-MM-DD HH:MM:SS" from seconds since the epoch into out (20 bytes). */
char *vat_fmt_timestamp(int64_t secs, char out[20]);
/* Parses "YYYY-MM-DD" exactly; 0 on success, -1 otherwise. */
int vat_parse_date(const char *s, int32_t *days);

/* Uniform cents in [lo, hi]. */
int64_t vat_gen_cents(struct vat_rng *r, int64_t lo, int64_t hi);
/* Plain decimal with two places, "-1234.05"; returns out. */
char *vat_fmt_cents(int64_t cents, char *out, size_t cap);
/* Parses "[-]digits[.d[d]]" exactly into cents; 0 or -1. */
int vat_parse_cents(const char *s, int64_t *cents);

/* ---- appended: generators and parsers shared by the analytics templates */

/* A generator of one string value: writes it into out (cap bytes) and
 * returns out; arg is the generator's own setting (may be NULL). */
typedef char *vat_gen_fn(struct vat_rng *r, const void *arg, char *out, size_t cap);

/* How vat_gen_customer mixes its three kinds of customer, as relative
 * weights: "Lopez, Maria" (a CRM export's style, which CSV quotes), a
 * company, a person "Maria Lopez". */
struct vat_customer_mix {
    uint32_t last_first, company, person;
};

/* A customer name: one vat_rng_below(r, sum of the weights) draw k; k <
 * last_first gives "Last, First" (the two names drawn as vat_gen_person
 * draws them), the next `company` values of k a vat_gen_company name, the
 * rest a vat_gen_person name.  mix is a const struct vat_customer_mix *
 * (void, so that this is a vat_gen_fn).  Returns out. */
char *vat_gen_customer(struct vat_rng *r, const void *mix, char *out, size_t cap);

/* Fills out, a char[k][cap] array, with k values of gen that are all
 * different, calling gen again whenever a value repeats an earlier one
 * (at most 1000 times per slot).  Returns how many slots it filled: k,
 * unless gen cannot make k different values. */
size_t vat_gen_unique(struct vat_rng *r, vat_gen_fn *gen, const void *arg, char *out, size_t k,
                      size_t cap);

/* n days drawn uniformly in [first, last] (one vat_rng_range each), then
 * sorted ascending, as the dates of an export sorted by id.  Returns a
 * new array. */
int32_t *vat_gen_days_sorted(struct vat_rng *r, size_t n, int32_t first, int32_t last);

/* The dirty spellings of a hand-typed label.  Each differs from a clean,
 * capitalised label ("Billing") and normalises back to it under
 * vat_norm_label.  The values are stable: templates draw them by number. */
enum vat_dirty {
    VAT_DIRTY_TRAIL,       /* "Billing ": only a trailing space, the subtle one */
    VAT_DIRTY_LOWER,       /* "billing"    */
    VAT_DIRTY_UPPER,       /* "BILLING"    */
    VAT_DIRTY_LEAD,        /* " Billing"   */
    VAT_DIRTY_BOTH,        /* "  Billing " */
    VAT_DIRTY_LOWER_TRAIL, /* "billing  "  */
    VAT_DIRTY_UPPER_LEAD,  /* " BILLING"   */
    VAT_DIRTY_N
};

/* Writes spelling `kind` of label into out (cap bytes, truncating; an
 * unknown kind gives the label unchanged).  Returns out. */
char *vat_gen_dirty_label(const char *label, enum vat_dirty kind, char *out, size_t cap);

/* The key a hand-typed label groups by: spaces (only ' ', as SQLite's
 * trim) removed at both ends and ASCII letters lower-cased, as SQL's
 * lower(trim(x)).  Writes into out (cap bytes, truncating; out must not
 * overlap s).  Returns out. */
char *vat_norm_label(const char *s, char *out, size_t cap);

/* Parses "YYYY-MM-DD HH:MM:SS" exactly (a real date, 00-23:00-59:00-59)
 * into seconds since the epoch; 0 on success, -1 otherwise. */
int vat_parse_timestamp(const char *s, int64_t *secs);

/* Parses "YYYY-MM" exactly (month 01-12) into year and month (either may
 * be NULL); 0 on success, -1 otherwise. */
int vat_parse_month(const char *s, int *year, int *month);

/* ---- appended: dirty variants of any string, e-mail addresses, months */

/* The ways a hand-typed value is spelled differently from its clean form.
 * Unlike enum vat_dirty (which assumes a capitalised label) these apply to
 * any string, lower-case ones such as e-mail addresses included. */
enum vat_variant {
    VAT_VARIANT_UPPER,   /* "MARIA.LOPEZ@EXAMPLE.COM"                     */
    VAT_VARIANT_LOWER,   /* "billing"                                     */
    VAT_VARIANT_CAPITAL, /* first letter up, the rest as is: "Maria.lopez@..." */
    VAT_VARIANT_LEAD,    /* " x"                                          */
    VAT_VARIANT_TRAIL,   /* "x "                                          */
    VAT_VARIANT_BOTH,    /* "  x "                                        */
    VAT_VARIANT_INNER,   /* the first inner space doubled: "Field  Ops"   */
    VAT_VARIANT_N
};

/* Writes variant `kind` of s into out (cap bytes, truncating).  Returns 1
 * when the variant differs from s, 0 when this kind cannot change s (UPPER
 * of "123", INNER of a string without an inner space, an unknown kind):
 * out then holds s unchanged, so a template draws another kind.  Every
 * variant but INNER normalises back to vat_norm_label(s); INNER needs a
 * normalisation that also collapses inner runs of spaces. */
int vat_variant(const char *s, enum vat_variant kind, char *out, size_t cap);

/* A plausible personal e-mail address, lower case ASCII:
 * "maria.lopez@example.com", "mlopez@mail.example.org", "maria_lopez7@..."
 * (a first and a last name of vat_gen_person's lists, a style and a domain:
 * four draws, one per statement).  Returns out. */
char *vat_gen_email(struct vat_rng *r, char *out, size_t cap);

/* Month arithmetic on (year, month 1-12) pairs: *ry, *rm = k months after
 * y-m (k may be negative). */
void vat_month_add(int y, int m, int k, int *ry, int *rm);
/* The day number (days since 1970-01-01) of the first day of y-m. */
int32_t vat_month_first_day(int y, int m);
/* The number of days of y-m (28 to 31). */
int vat_month_days(int y, int m);
/* "January" .. "December" for m = 1 .. 12, NULL otherwise. */
const char *vat_month_name(int m);
/* "YYYY-MM" into out (8 bytes).  Returns out. */
char *vat_fmt_month(int y, int m, char out[8]);

#endif
