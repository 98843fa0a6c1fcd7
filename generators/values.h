/* values.h — realistic value generators (ids, names, regions, dates,
 * money in integer cents) and the exact formatting of money and dates.
 * Exports the vat_gen_*, vat_fmt_* and vat_date_* functions. */
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

#endif
