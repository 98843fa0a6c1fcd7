/* trapmod.c — cross-cutting trap modules planted, cleaned and proven at
 * the CSV layer (see trapmod.h). */
#include "trapmod.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "level.h"
#include "progform.h"
#include "prompt.h"
#include "template.h"

static const char *const tm_names[VAT_TM_N] = {"exact_duplicates", "status_spelling",
                                               "text_numbers", "test_records",
                                               "totals_line", "day_first_dates",
                                               "placeholder_keys", "lookalike_column",
                                               "late_rows", "sign_convention",
                                               "distractor_table", "cutoff_boundary"};
static const char *const tm_mistakes[VAT_TM_N] = {
    "Counting every copy of a row that the export holds twice, identical in every column.",
    "Comparing the status as written, so values in another case or with surrounding spaces "
    "miss the filter.",
    "Skipping the numbers written as text (a currency sign, thousands separators, a word) as "
    "if they were not numbers.",
    "Keeping the test entries, the rows whose id starts with TEST-, as if they were real "
    "records.",
    "Counting the export's closing TOTAL line as if it were one more record.",
    "Skipping the dates written day first (DD/MM/YYYY) as if they were no date.",
    "Counting a key column's placeholder (a guest checkout's stand-in address) as one more "
    "real key.",
    "Reading the look-alike column planted next to the amount (a list price, an amount with "
    "tax) instead of the amount asked for.",
    "Keeping the rows loaded after the report's cut-off (the export run again) as if they "
    "belonged to it.",
    "Adding the refunds' amounts as written, positive, instead of taking them off: the "
    "entry_type column ignored.",
    "Reading the distractor table (a stale snapshot that looks like the answer's source) in "
    "place of the table the question names.",
    "Comparing loaded_at with the cut-off strictly (<), dropping the rows loaded at the "
    "cut-off itself, which belong to the report.",
};

/* The id prefix that marks a test entry, and the same as a GLOB. */
#define TEST_PREFIX "TEST-"
#define TEST_GLOB "'TEST-*'"
/* What a test copy's key (test_key) is prefixed with: a test account. */
#define TEST_KEY_PREFIX "test+"
/* A spelled-out rating as its number, in SQL: for sqlite3_mprintf with
 * the column as a quoted identifier (%w), and for vat_buf_printf with it
 * bare (%s). */
#define WORDS_CASE                                                                             \
    "CASE lower(trim(\"%w\")) WHEN 'one' THEN 1 WHEN 'two' THEN 2 WHEN 'three' THEN 3 "        \
    "WHEN 'four' THEN 4 WHEN 'five' THEN 5 END"
#define WORDS_CASE_Q                                                                           \
    "CASE lower(trim(%s)) WHEN 'one' THEN 1 WHEN 'two' THEN 2 WHEN 'three' THEN 3 WHEN 'four' " \
    "THEN 4 WHEN 'five' THEN 5 END"
/* The id of the totals line. */
#define TOTALS_ID "TOTAL"
/* late_rows: the column it plants last, and the report's cut-off (after
 * every business date of the corpus; a row loaded later arrived late). */
#define LATE_COL "loaded_at"
#define LATE_CUTOFF "2026-01-05 06:30:15"
/* sign_convention: the column it plants last (before loaded_at) and the
 * value that makes a row's positive amount count negative. */
#define SIGN_COL "entry_type"
#define SIGN_CHARGE "charge"
#define SIGN_REFUND "refund"

/* The module of bit m as an index into tm_names: bits are 1 << index. */
static int tm_index(unsigned m)
{
    int k = 0;
    while (m > 1 && k < VAT_TM_N - 1) {
        m >>= 1;
        k++;
    }
    return k;
}

const char *vat_trapmod_name(unsigned m)
{
    return tm_names[tm_index(m)];
}

const char *vat_trapmod_mistake(unsigned m)
{
    return tm_mistakes[tm_index(m)];
}

unsigned vat_trapmod_accepted(const struct vat_template *tm)
{
    const struct vat_trapmods *d = tm->modules;
    if (!d)
        return 0;
    return (d->duplicates ? VAT_TM_DUPLICATES : 0u) | (d->status ? VAT_TM_STATUS : 0u) |
           (d->amount ? VAT_TM_TEXTNUM : 0u) | (d->id ? VAT_TM_TEST : 0u) |
           (d->id && d->totals ? VAT_TM_TOTALS : 0u) | (d->date ? VAT_TM_DATES : 0u) |
           (d->placeholder_col && d->placeholder ? VAT_TM_PLACEHOLDER : 0u) |
           (d->amount && d->lookalike ? VAT_TM_LOOKALIKE : 0u) |
           (d->late && !(d->id && d->totals) ? VAT_TM_LATE | VAT_TM_BOUNDARY : 0u) |
           (d->amount && d->sign ? VAT_TM_SIGN : 0u) |
           (d->db_tables && d->distractor && d->distractor_for && d->distractor_as
                ? VAT_TM_DISTRACTOR
                : 0u);
}

void vat_trapmod_arm(struct vat_task *t)
{
    unsigned acc = vat_trapmod_accepted(t->tmpl);
    int level = vat_task_level(t);
    t->trapmods = 0;
    t->trapmods_off = 0;
    if (!acc || level < 3)
        return;
    if (level >= 4) {
        t->trapmods = acc;
        return;
    }
    unsigned bits[VAT_TM_N];
    uint32_t n = 0;
    for (unsigned m = 1; m <= VAT_TM_LAST; m <<= 1)
        if (acc & m)
            bits[n++] = m;
    /* In turn by task index from a per-template start, so any n tasks in
     * a row arm every accepted module once, whatever the redraws. */
    uint64_t start = vat_rng_key(t->master_seed, t->tmpl->name, "trapmods") % n;
    t->trapmods = bits[(start + t->index) % n];
}

/* ---- planting ------------------------------------------------------------- */

/* A plain decimal: an optional '-', digits, an optional '.' and digits. */
static bool plain_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    while (isdigit((unsigned char)*s))
        s++;
    if (*s == '.') {
        s++;
        if (!isdigit((unsigned char)*s))
            return false;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == 0;
}

/* s (a plain decimal) as text: form 0 "$1,234.50", 1 "1,234.50" (forms
 * 0 and 1 fall back to 2 below 1,000), 2 "$1234.50". */
static void number_as_text(const char *s, int form, char *out, size_t cap)
{
    bool neg = *s == '-';
    const char *d = s + neg;
    size_t ilen = strcspn(d, ".");
    if (ilen <= 3 && form == 1)
        form = 0;
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (form != 1)
        out[o++] = '$';
    for (size_t i = 0; i < ilen && o + 2 < cap; i++) {
        if (form != 2 && i > 0 && (ilen - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = d[i];
    }
    snprintf(out + o, cap - o, "%s", d + ilen);
}

bool vat_trapmod_number(const char *s, double *x)
{
    char buf[64];
    size_t o = 0;
    for (; *s && o + 1 < sizeof buf; s++)
        if (*s != '$' && *s != ',')
            buf[o++] = *s;
    buf[o] = 0;
    if (*s || !plain_number(buf))
        return false;
    *x = strtod(buf, NULL);
    return true;
}

/* Whether c is one of the n names of cols. */
static bool in_cols(const char *const *cols, size_t n, const char *c)
{
    for (size_t i = 0; c && i < n; i++)
        if (strcmp(cols[i], c) == 0)
            return true;
    return false;
}

/* Whether row i is one a module plants in: with a status column and
 * value declared, the rows whose status is that value in any case or
 * spacing (planting comes after status variants), else every row. */
static bool status_target(const struct vat_csv *c, size_t i, int sc, const char *value)
{
    if (sc < 0 || !value)
        return true;
    const char *v = vat_csv_get(c, i, (size_t)sc);
    while (*v == ' ')
        v++;
    size_t n = strlen(value);
    if (strncasecmp(v, value, n) != 0)
        return false;
    for (v += n; *v == ' '; v++)
        ;
    return *v == 0;
}

/* Whether data row i of c is one a module planted as a copy: a test
 * entry, a row loaded after the cut-off, a refund.  A copy of such a row
 * would go with it when its module is cleaned (or, of a refund, take off
 * what another copy adds), so copies are never drawn from them. */
static bool planted_copy(const struct vat_csv *c, size_t i, int ic, int lc, int gc)
{
    return (ic >= 0 && strncmp(vat_csv_get(c, i, (size_t)ic), TEST_PREFIX,
                               sizeof TEST_PREFIX - 1) == 0) ||
           (lc >= 0 && strcmp(vat_csv_get(c, i, (size_t)lc), LATE_CUTOFF) > 0) ||
           (gc >= 0 && strcmp(vat_csv_get(c, i, (size_t)gc), SIGN_REFUND) == 0);
}

/* Row indexes of c's target rows (new array, *n of them): the status
 * rows, and with module `marked` (not 0) only those among them the
 * template marks for it; never a copy another module planted. */
static size_t *targets(const struct vat_task *t, const struct vat_csv *c, int sc,
                       const char *value, unsigned marked, size_t *n)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    int ic = d->id ? vat_csv_col(c, 0, d->id) : -1;
    int lc = vat_csv_col(c, 0, LATE_COL), gc = vat_csv_col(c, 0, SIGN_COL);
    bool *is = NULL;
    if (marked && d->targets) {
        is = vat_xmalloc(c->nrows * sizeof *is);
        for (size_t i = 0; i < c->nrows; i++)
            is[i] = false;
        d->targets(t, c, marked, is);
    }
    size_t *ix = vat_xmalloc(c->nrows * sizeof *ix);
    *n = 0;
    for (size_t i = 1; i < c->nrows; i++)
        if ((!is || is[i]) && status_target(c, i, sc, value) && !planted_copy(c, i, ic, lc, gc))
            ix[(*n)++] = i;
    free(is);
    return ix;
}

static void status_variant(struct vat_csv *c, size_t i, int col, struct vat_rng *r)
{
    const char *v = vat_csv_get(c, i, (size_t)col);
    if (!*v)
        return;
    /* forms: "PAID", "Paid", " Paid", "Paid " */
    char buf[128];
    int form = (int)vat_rng_below(r, 4);
    size_t n = strlen(v) < 120 ? strlen(v) : 120;
    size_t o = 0;
    if (form == 2)
        buf[o++] = ' ';
    for (size_t k = 0; k < n; k++)
        buf[o++] = form == 0 || k == 0 ? (char)toupper((unsigned char)v[k]) : v[k];
    if (form == 3)
        buf[o++] = ' ';
    buf[o] = 0;
    vat_csv_set(c, i, (size_t)col, buf);
}

static const char *const tm_words[] = {"one", "two", "three", "four", "five"};
#define TM_NWORDS 5

/* A whole number 1 to 5 spelled out: "four" or "Four". */
static void word_variant(struct vat_csv *c, size_t i, int col, struct vat_rng *r)
{
    const char *v = vat_csv_get(c, i, (size_t)col);
    if (v[0] < '1' || v[0] > '0' + TM_NWORDS || v[1] != 0)
        return;
    char buf[16];
    snprintf(buf, sizeof buf, "%s", tm_words[v[0] - '1']);
    if (vat_rng_chance(r, 0.5))
        buf[0] = (char)toupper((unsigned char)buf[0]);
    vat_csv_set(c, i, (size_t)col, buf);
}

/* Whether s has the shape `shape` ('d' a digit, anything else itself):
 * as a prefix, or with `whole`, all of it. */
static bool has_shape(const char *s, const char *shape, bool whole)
{
    size_t n = strlen(shape);
    for (size_t k = 0; k < n; k++)
        if (shape[k] == 'd' ? !isdigit((unsigned char)s[k]) : s[k] != shape[k])
            return false;
    return !whole || s[n] == 0;
}

/* Whether s starts "YYYY-MM-DD", or (month) is "YYYY-MM". */
static bool iso_date(const char *s, bool month)
{
    return has_shape(s, month ? "dddd-dd" : "dddd-dd-dd", month);
}

/* The ISO date (and what follows it) day first: "2024-03-14 09:15:00" ->
 * "14/03/2024 09:15:00", a month "2024-03" -> "03/2024". */
static void date_variant_of(struct vat_csv *c, size_t i, int col, bool month)
{
    const char *v = vat_csv_get(c, i, (size_t)col);
    if (!iso_date(v, month))
        return;
    char buf[64];
    if (month)
        snprintf(buf, sizeof buf, "%.2s/%.4s", v + 5, v);
    else
        snprintf(buf, sizeof buf, "%.2s/%.2s/%.4s%.40s", v + 8, v + 5, v, v + 10);
    vat_csv_set(c, i, (size_t)col, buf);
}

static void date_variant(struct vat_csv *c, size_t i, int col, struct vat_rng *r)
{
    (void)r;
    date_variant_of(c, i, col, false);
}

static void month_variant(struct vat_csv *c, size_t i, int col, struct vat_rng *r)
{
    (void)r;
    date_variant_of(c, i, col, true);
}

static void textnum_variant(struct vat_csv *c, size_t i, int col, struct vat_rng *r)
{
    const char *v = vat_csv_get(c, i, (size_t)col);
    if (!plain_number(v) || strlen(v) > 40)
        return;
    char buf[64];
    int form = (int)vat_rng_below(r, 3);
    number_as_text(v, form, buf, sizeof buf);
    vat_csv_set(c, i, (size_t)col, buf);
}

/* Rewrites each status target row with chance p (none when the template
 * says marked_only for m), and two rows the template marks at least
 * (when there are; every one when it says mark_all for m), by `one`. */
static void plant_cells(const struct vat_task *t, unsigned m, struct vat_csv *c, int col,
                        int sc, const char *value, double p, struct vat_rng *r,
                        void (*one)(struct vat_csv *, size_t, int, struct vat_rng *))
{
    size_t n, nm;
    size_t *ix = targets(t, c, sc, value, 0, &n);
    /* without the template's marks, the marked rows are the status rows */
    size_t *mx = t->tmpl->modules->targets ? targets(t, c, sc, value, m, &nm) : ix;
    if (mx == ix)
        nm = n;
    bool *hit = vat_xcalloc(c->nrows, sizeof *hit);
    if (t->tmpl->modules->marked_only & m)
        n = 0;
    for (size_t j = 0; j < n; j++)
        if (vat_rng_chance(r, p)) {
            one(c, ix[j], col, r);
            hit[ix[j]] = true;
        }
    size_t done = 0;
    for (size_t j = 0; j < nm; j++)
        done += hit[mx[j]];
    if (t->tmpl->modules->mark_all & m) {
        for (size_t j = 0; j < nm; j++)
            if (!hit[mx[j]])
                one(c, mx[j], col, r);
    } else {
        for (; done < 2 && nm > 0; done++) {
            size_t j = vat_rng_below(r, (uint32_t)nm);
            one(c, mx[j], col, r);
        }
    }
    free(hit);
    if (mx != ix)
        free(mx);
    free(ix);
}

/* Appends copies of about one row in eight (eight at least), drawn from the
 * target rows, at the end: an export sent twice. */
static void plant_duplicates(const struct vat_task *t, struct vat_csv *c, int sc,
                             const char *value, struct vat_rng *r)
{
    size_t n;
    size_t *ix = targets(t, c, sc, value, VAT_TM_DUPLICATES, &n);
    size_t n0 = c->nrows - 1;
    size_t k = n0 / 8 < 8 ? 8 : n0 / 8;
    for (size_t j = 0; j < k && n > 0; j++) {
        size_t src = ix[vat_rng_below(r, (uint32_t)n)];
        vat_csv_row_begin(c);
        for (size_t col = 0; col < c->row[src].n; col++)
            vat_csv_add(c, vat_csv_get(c, src, col));
    }
    free(ix);
}

/* Moves the last row of c to data row `at` (1 .. nrows-1), the rows from
 * there on one down. */
static void move_last_to(struct vat_csv *c, size_t at)
{
    struct vat_csv_row last = c->row[c->nrows - 1];
    memmove(&c->row[at + 1], &c->row[at], (c->nrows - 1 - at) * sizeof *c->row);
    c->row[at] = last;
}

/* How many copies a module inserts: about one row in thirty, three at
 * least. */
static size_t copies_of(const struct vat_csv *c)
{
    size_t n0 = c->nrows - 1;
    return n0 / 30 < 3 ? 3 : n0 / 30;
}

/* One of the *n rows left in ix, drawn, and taken out of them (swapped
 * to ix[*n], so the array still holds every row): each source once. */
static size_t take_source(size_t *ix, size_t *n, struct vat_rng *r)
{
    size_t pick = vat_rng_below(r, (uint32_t)*n);
    size_t src = ix[pick];
    ix[pick] = ix[--*n];
    ix[*n] = src;
    return src;
}

/* x times pct percent, to the cent: "-12.34". */
static void scaled_cents(double x, long pct, char *out, size_t cap)
{
    double y = x * (double)pct;
    long long cents = (long long)(y < 0 ? y - 0.5 : y + 0.5);
    long long mag = cents < 0 ? -cents : cents;
    snprintf(out, cap, "%s%lld.%02lld", cents < 0 ? "-" : "", mag / 100, mag % 100);
}

/* Inserts copies of about one target row in thirty (three at least),
 * each from another row, at drawn places among the rows, each with its id prefixed "TEST-": an
 * integration test's records left in the export. */
static void plant_test_records(const struct vat_task *t, struct vat_csv *c, int ic, int sc,
                               const char *value, struct vat_rng *r)
{
    const char *key = t->tmpl->modules->test_key;
    int kc = key ? vat_csv_col(c, 0, key) : -1;
    size_t n;
    size_t *ix = targets(t, c, sc, value, VAT_TM_TEST, &n);
    size_t k = copies_of(c);
    for (size_t j = 0; j < k && n > 0; j++) {
        /* each source once: ids stay unique */
        size_t src = take_source(ix, &n, r);
        size_t at = 1 + vat_rng_below(r, (uint32_t)(c->nrows - 1));
        vat_csv_row_begin(c);
        for (size_t col = 0; col < c->row[src].n; col++) {
            const char *v = vat_csv_get(c, src, col);
            if ((int)col == kc) {
                /* a test account: the source's key, trimmed, prefixed */
                while (*v == ' ')
                    v++;
                int len = (int)strlen(v);
                while (len > 0 && v[len - 1] == ' ')
                    len--;
                vat_csv_addf(c, TEST_KEY_PREFIX "%.*s", len, v);
            } else if ((int)col == ic)
                vat_csv_addf(c, TEST_PREFIX "%s", v);
            else
                vat_csv_add(c, v);
        }
        move_last_to(c, at);
        /* the rows at and after `at` moved one down */
        for (size_t q = 0; q < n; q++)
            ix[q] += ix[q] >= at;
    }
    free(ix);
}

/* Rewrites the key (column col) of two rows the template marks, or of
 * every one when it says so, as the placeholder. */
static void plant_placeholder(const struct vat_task *t, struct vat_csv *c, int col, int sc,
                              const char *value, struct vat_rng *r)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    size_t n;
    size_t *ix = targets(t, c, sc, value, VAT_TM_PLACEHOLDER, &n);
    size_t k = (d->mark_all & VAT_TM_PLACEHOLDER) ? n : 2;
    for (size_t j = 0; j < k && n > 0; j++)
        vat_csv_set(c, take_source(ix, &n, r), (size_t)col, d->placeholder);
    free(ix);
}

/* Inserts the look-alike column right after the amount (column ac): each
 * plain amount raised by 5-25% (a list price, an amount with tax), to
 * the cent, other cells blank. */
static void plant_lookalike(const struct vat_trapmods *d, struct vat_csv *c, int ac,
                            struct vat_rng *r)
{
    vat_csv_insert_cell(c, 0, (size_t)ac + 1, d->lookalike);
    for (size_t i = 1; i < c->nrows; i++) {
        const char *v = vat_csv_get(c, i, (size_t)ac);
        char buf[64] = "";
        if (plain_number(v) && strlen(v) < 40) {
            long pct = (long)vat_rng_range(r, 5, 25);
            scaled_cents(strtod(v, NULL), 100 + pct, buf, sizeof buf);
        }
        vat_csv_insert_cell(c, i, (size_t)ac + 1, buf);
    }
}

/* Appends a copy of the first ncols cells of row src, its amount (column
 * ac) times pct percent when it is a number. */
static void append_scaled_copy(struct vat_csv *c, size_t src, size_t ncols, int ac, long pct)
{
    vat_csv_row_begin(c);
    for (size_t col = 0; col < ncols; col++) {
        double x;
        char buf[64];
        if ((int)col == ac && vat_trapmod_number(vat_csv_get(c, src, col), &x)) {
            scaled_cents(x, pct, buf, sizeof buf);
            vat_csv_add(c, buf);
        } else
            vat_csv_add(c, vat_csv_get(c, src, col));
    }
}

/* Appends the loaded_at column: every row loaded before the cut-off
 * (2026-01-01 to 05:59 on 2026-01-05; two target rows at the cut-off,
 * 06:30:15, which count), then, with late_rows armed, amended copies of
 * about one target row in thirty (three at least, each from another
 * row) loaded after it, appended: corrections that belong to the next report.  An
 * amendment's amount (column ac) is its source's times 50-150% (never
 * 100%), so it is no exact copy that duplicates would drop. */
static void plant_late(const struct vat_task *t, struct vat_csv *c, int ac, int sc,
                       const char *value, struct vat_rng *r)
{
    size_t n;
    size_t *ix = targets(t, c, sc, value, VAT_TM_TEST, &n);
    size_t ncols = c->row[0].n;
    vat_csv_insert_cell(c, 0, ncols, LATE_COL);
    for (size_t i = 1; i < c->nrows; i++) {
        char at[64];
        int day = 1 + (int)vat_rng_below(r, 5);
        int hour = (int)vat_rng_below(r, day == 5 ? 6 : 24);
        int min = (int)vat_rng_below(r, 60);
        int sec = (int)vat_rng_below(r, 60);
        snprintf(at, sizeof at, "2026-01-%02d %02d:%02d:%02d", day, hour, min, sec);
        vat_csv_insert_cell(c, i, ncols, at);
    }
    /* two target rows loaded at the cut-off itself, which still count
     * (n is left as it was: they may be amended too) */
    for (size_t j = 0, m = n; j < 2 && m > 0; j++)
        vat_csv_set(c, take_source(ix, &m, r), ncols, LATE_CUTOFF);
    size_t k = (t->trapmods & VAT_TM_LATE) ? copies_of(c) : 0;
    for (size_t j = 0; j < k && n > 0; j++) {
        size_t src = take_source(ix, &n, r);
        int day = 5 + (int)vat_rng_below(r, 2);
        int hour = day == 5 ? 7 + (int)vat_rng_below(r, 17) : (int)vat_rng_below(r, 24);
        int min = (int)vat_rng_below(r, 60);
        long pct = (long)vat_rng_range(r, 50, 149);
        pct += pct >= 100;
        append_scaled_copy(c, src, ncols, ac, pct);
        vat_csv_addf(c, "2026-01-%02d %02d:%02d:00", day, hour, min);
    }
    free(ix);
}

/* Appends the entry_type column, "charge" on every row, then inserts
 * partial refunds (10-45% of the amount, column ac, written positive) of
 * about one target row in thirty (three at least, each from another
 * row) at drawn places after their sources: each a copy of its source
 * but for the amount and "refund".  Below 50%, a refund never equals a
 * late amendment. */
static void plant_sign(const struct vat_task *t, struct vat_csv *c, int ac, int sc,
                       const char *value, struct vat_rng *r)
{
    size_t n;
    size_t *ix = targets(t, c, sc, value, VAT_TM_TEST, &n);
    size_t ncols = c->row[0].n;
    vat_csv_insert_cell(c, 0, ncols, SIGN_COL);
    for (size_t i = 1; i < c->nrows; i++)
        vat_csv_insert_cell(c, i, ncols, SIGN_CHARGE);
    size_t k = copies_of(c);
    for (size_t j = 0; j < k && n > 0; j++) {
        size_t src = take_source(ix, &n, r);
        double x;
        if (!vat_trapmod_number(vat_csv_get(c, src, (size_t)ac), &x))
            continue;
        long pct = (long)vat_rng_range(r, 10, 45);
        /* somewhere after its charge, or last */
        size_t at = src + 1 + vat_rng_below(r, (uint32_t)(c->nrows - src));
        append_scaled_copy(c, src, ncols, ac, pct);
        vat_csv_add(c, SIGN_REFUND);
        move_last_to(c, at);
        for (size_t q = 0; q < n; q++)
            ix[q] += ix[q] >= at;
    }
    free(ix);
}

/* Appends the export's totals line: TOTAL under the id (and the label),
 * the sum of the total column's numbers under it, the rest blank. */
static void plant_totals(const struct vat_trapmods *d, struct vat_csv *c, int ic)
{
    int lc = d->label ? vat_csv_col(c, 0, d->label) : -1;
    int tc = d->total ? vat_csv_col(c, 0, d->total) : -1;
    double sum = 0;
    for (size_t i = 1; i < c->nrows && tc >= 0; i++) {
        double x;
        if (vat_trapmod_number(vat_csv_get(c, i, (size_t)tc), &x))
            sum += x;
    }
    size_t ncols = c->row[0].n;
    vat_csv_row_begin(c);
    for (size_t col = 0; col < ncols; col++) {
        if ((int)col == ic || (int)col == lc)
            vat_csv_add(c, TOTALS_ID);
        else if ((int)col == tc)
            vat_csv_addf(c, "%.2f", sum);
        else
            vat_csv_add(c, "");
    }
}

void vat_trapmod_plant(const struct vat_task *t, struct vat_csv *c, const char *suffix)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!t->trapmods || !d || c->nrows < 2)
        return;
    char purpose[48];
    snprintf(purpose, sizeof purpose, "trapmods%s", suffix);
    struct vat_rng r;
    vat_rng_stream(&r, t->master_seed, t->tmpl->name, t->index, purpose, t->attempt, NULL);
    int sc = d->status ? vat_csv_col(c, 0, d->status) : -1;
    int ac = d->amount ? vat_csv_col(c, 0, d->amount) : -1;
    int ic = d->id ? vat_csv_col(c, 0, d->id) : -1;
    const char *value = d->status_value;
    /* first, so every other module leaves the refunds alone and the
     * look-alike raises their amounts as any other */
    if ((t->trapmods & VAT_TM_SIGN) && ac >= 0)
        plant_sign(t, c, ac, sc, value, &r);
    /* before the cells are rewritten, so the look-alike figures are the
     * amounts as generated */
    if ((t->trapmods & VAT_TM_LOOKALIKE) && ac >= 0 && d->lookalike)
        plant_lookalike(d, c, ac, &r);
    if ((t->trapmods & VAT_TM_STATUS) && sc >= 0)
        plant_cells(t, VAT_TM_STATUS, c, sc, sc, value, 0.5, &r, status_variant);
    if ((t->trapmods & VAT_TM_TEXTNUM) && ac >= 0)
        plant_cells(t, VAT_TM_TEXTNUM, c, ac, sc, value, 0.5, &r,
                    d->amount_words ? word_variant : textnum_variant);
    int dc = d->date ? vat_csv_col(c, 0, d->date) : -1;
    if ((t->trapmods & VAT_TM_DATES) && dc >= 0)
        plant_cells(t, VAT_TM_DATES, c, dc, sc, value, 0.25, &r,
                    d->date_month ? month_variant : date_variant);
    int pc = d->placeholder_col ? vat_csv_col(c, 0, d->placeholder_col) : -1;
    if ((t->trapmods & VAT_TM_PLACEHOLDER) && pc >= 0)
        plant_placeholder(t, c, pc, sc, value, &r);
    if ((t->trapmods & VAT_TM_TEST) && ic >= 0)
        plant_test_records(t, c, ic, sc, value, &r);
    if (t->trapmods & (VAT_TM_LATE | VAT_TM_BOUNDARY))
        plant_late(t, c, ac, sc, value, &r);
    if (t->trapmods & VAT_TM_DUPLICATES)
        plant_duplicates(t, c, sc, value, &r);
    if ((t->trapmods & VAT_TM_TOTALS) && d->totals && ic >= 0)
        plant_totals(d, c, ic);
}

/* ---- the columns a reader expects ------------------------------------------------ */

/* How the rows' loaded_at compares with the cut-off for the report to
 * keep them, with the modules in `off` left out (NULL: no filter): the
 * one rule of the C reader, the loaded table and the program form's CTE. */
static const char *cutoff_op(const struct vat_task *t, unsigned off)
{
    unsigned armed = t->trapmods & (VAT_TM_LATE | VAT_TM_BOUNDARY);
    if (armed & off & VAT_TM_BOUNDARY) /* the boundary's mistake */
        return (armed & off & VAT_TM_LATE) ? "<>" : "<";
    /* without late rows (or with their mistake) no row is past it */
    return (armed & ~off & VAT_TM_LATE) ? "<=" : NULL;
}

/* Whether a row whose loaded_at compares with the cut-off as cmp
 * (strcmp's sign) is kept by the rule op (cutoff_op). */
static bool cutoff_keeps(const char *op, int cmp)
{
    if (!op)
        return true;
    return strcmp(op, "<=") == 0 ? cmp <= 0 : strcmp(op, "<") == 0 ? cmp < 0 : cmp != 0;
}

/* late_rows and cutoff_boundary: the rows the report does not keep
 * (cutoff_op) dropped; then the column. */
static void late_columns(const struct vat_task *t, struct vat_csv *c)
{
    int lc = vat_csv_col(c, 0, LATE_COL);
    if (!(t->trapmods & (VAT_TM_LATE | VAT_TM_BOUNDARY)) || lc < 0)
        return;
    const char *op = cutoff_op(t, t->trapmods_off);
    for (size_t i = c->nrows; i-- > 0;) {
        int cmp = i > 0 ? strcmp(vat_csv_get(c, i, (size_t)lc), LATE_CUTOFF) : -1;
        if (!cutoff_keeps(op, cmp)) {
            vat_csv_drop_row(c, i);
            continue;
        }
        vat_csv_drop_cell(c, i, (size_t)lc);
    }
}

/* sign_convention: without its cleaning off, each refund's amount
 * negated (it is written positive); then the column. */
static void sign_columns(const struct vat_task *t, struct vat_csv *c, int ac)
{
    int gc = vat_csv_col(c, 0, SIGN_COL);
    if (!(t->trapmods & VAT_TM_SIGN) || gc < 0 || ac < 0)
        return;
    bool on = !(t->trapmods_off & VAT_TM_SIGN);
    for (size_t i = 0; i < c->nrows; i++) {
        if (on && i > 0 && strcmp(vat_csv_get(c, i, (size_t)gc), SIGN_REFUND) == 0) {
            const char *v = vat_csv_get(c, i, (size_t)ac);
            char *neg = *v == '-' ? vat_xstrdup(v + 1) : vat_xasprintf("-%s", v);
            vat_csv_set(c, i, (size_t)ac, neg);
            free(neg);
        }
        vat_csv_drop_cell(c, i, (size_t)gc);
    }
}

void vat_trapmod_columns(const struct vat_task *t, struct vat_csv *c)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!d || c->nrows < 1)
        return;
    late_columns(t, c);
    int ac = d->amount ? vat_csv_col(c, 0, d->amount) : -1;
    int lc = d->lookalike ? vat_csv_col(c, 0, d->lookalike) : -1;
    if ((t->trapmods & VAT_TM_LOOKALIKE) && lc >= 0 && ac >= 0) {
        bool off = (t->trapmods_off & VAT_TM_LOOKALIKE) != 0;
        for (size_t i = 0; i < c->nrows; i++) {
            if (off && i > 0 && c->row[i].n > (size_t)lc)
                vat_csv_set(c, i, (size_t)ac, vat_csv_get(c, i, (size_t)lc));
            vat_csv_drop_cell(c, i, (size_t)lc);
        }
    }
    /* after the look-alike's mistake, which reads a refund's figure too */
    sign_columns(t, c, ac);
}

size_t vat_trapmod_columns_last(const struct vat_task *t, const char *out[2])
{
    const struct vat_trapmods *d = t->tmpl->modules;
    size_t n = 0;
    if (d && (t->trapmods & VAT_TM_SIGN) && d->sign)
        out[n++] = SIGN_COL;
    if (d && (t->trapmods & (VAT_TM_LATE | VAT_TM_BOUNDARY)) && d->late)
        out[n++] = LATE_COL;
    return n;
}

const char *vat_trapmod_column_after(const struct vat_task *t, const char *col)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!(t->trapmods & VAT_TM_LOOKALIKE) || !d || !d->lookalike || !d->amount || !col)
        return NULL;
    return strcmp(col, d->amount) == 0 ? d->lookalike : NULL;
}

bool vat_trapmod_header_types(const struct vat_task *t, const struct vat_csv_row *h,
                              const char *const *types, const char **typed, size_t cap)
{
    const char *last[2];
    size_t nlast = vat_trapmod_columns_last(t, last);
    bool planted = false;
    if (!types || h->n > cap)
        return false; /* every column TEXT, the planted ones too */
    for (size_t j = 0, k = 0; j < h->n; j++) {
        const char *after = j ? vat_trapmod_column_after(t, h->cell[j - 1]) : NULL;
        if (after && strcmp(after, h->cell[j]) == 0)
            typed[j] = typed[j - 1];
        else if (in_cols(last, nlast, h->cell[j]))
            typed[j] = "TEXT";
        else {
            typed[j] = types[k++];
            continue;
        }
        planted = true;
    }
    return planted;
}

/* ---- cleaning in C ----------------------------------------------------------- */

static bool has_text_number(const char *s, bool words)
{
    return words ? isalpha((unsigned char)*s) : strpbrk(s, "$,") != NULL;
}

/* A spelled-out whole number as its digit ("Four" -> "4"), or "". */
static const char *word_digit(const char *s)
{
    static const char *const digits[TM_NWORDS] = {"1", "2", "3", "4", "5"};
    for (int k = 0; k < TM_NWORDS; k++)
        if (strcasecmp(s, tm_words[k]) == 0)
            return digits[k];
    return "";
}

static void clean_status(struct vat_csv *c, int col)
{
    for (size_t i = 1; i < c->nrows; i++) {
        const char *v = vat_csv_get(c, i, (size_t)col);
        while (*v == ' ')
            v++;
        size_t n = strlen(v);
        while (n && v[n - 1] == ' ')
            n--;
        char *s = vat_xmalloc(n + 1);
        for (size_t k = 0; k < n; k++)
            s[k] = (char)tolower((unsigned char)v[k]);
        s[n] = 0;
        vat_csv_set(c, i, (size_t)col, s);
        free(s);
    }
}

static void clean_textnum(struct vat_csv *c, int col, bool on, bool words)
{
    for (size_t i = c->nrows; i-- > 1;) {
        const char *v = vat_csv_get(c, i, (size_t)col);
        if (!has_text_number(v, words))
            continue;
        if (!on) {
            vat_csv_drop_row(c, i);
            continue;
        }
        if (words) {
            vat_csv_set(c, i, (size_t)col, word_digit(v));
            continue;
        }
        char buf[64];
        size_t o = 0;
        for (; *v && o + 1 < sizeof buf; v++)
            if (*v != '$' && *v != ',')
                buf[o++] = *v;
        buf[o] = 0;
        vat_csv_set(c, i, (size_t)col, buf);
    }
}

static uint64_t row_hash(const struct vat_csv_row *row)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < row->n; k++) {
        for (const char *p = row->cell[k]; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0x1f) * 1099511628211ull;
    }
    return h;
}

static bool rows_equal(const struct vat_csv_row *a, const struct vat_csv_row *b)
{
    if (a->n != b->n)
        return false;
    for (size_t k = 0; k < a->n; k++)
        if (strcmp(a->cell[k], b->cell[k]) != 0)
            return false;
    return true;
}

struct row_key {
    uint64_t h;
    size_t i;
};

static int cmp_key(const void *a, const void *b)
{
    const struct row_key *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Drops every data row identical to an earlier one (the first copy
 * stays): rows sorted by (hash, position), so each run of equal hashes
 * is compared with its earlier members only. */
static void clean_duplicates(struct vat_csv *c)
{
    size_t n = c->nrows;
    if (n < 3)
        return;
    struct row_key *k = vat_xmalloc((n - 1) * sizeof *k);
    bool *drop = vat_xmalloc(n * sizeof *drop);
    for (size_t i = 1; i < n; i++) {
        k[i - 1].h = row_hash(&c->row[i]);
        k[i - 1].i = i;
        drop[i] = false;
    }
    qsort(k, n - 1, sizeof *k, cmp_key);
    for (size_t a = 0; a < n - 1; a++)
        for (size_t b = a + 1; b < n - 1 && k[b].h == k[a].h; b++)
            if (!drop[k[b].i] && !drop[k[a].i] &&
                rows_equal(&c->row[k[a].i], &c->row[k[b].i]))
                drop[k[b].i] = true;
    /* one pass keeps the order of the rows that stay */
    size_t w = 1;
    for (size_t i = 1; i < n; i++) {
        if (drop[i]) {
            vat_csv_drop_row(c, w);
            continue;
        }
        w++;
    }
    free(k);
    free(drop);
}

/* Drops the rows whose id (column col) starts with `prefix`, or with
 * `whole`, is it. */
static void drop_by_id(struct vat_csv *c, int col, const char *prefix, bool whole)
{
    size_t n = strlen(prefix);
    for (size_t i = c->nrows; i-- > 1;) {
        const char *v = vat_csv_get(c, i, (size_t)col);
        if (strncmp(v, prefix, n) == 0 && (!whole || v[n] == 0))
            vat_csv_drop_row(c, i);
    }
}

/* Whether s is written day first: "DD/MM/YYYY..." or, a month, "MM/YYYY". */
static bool day_first(const char *s, bool month)
{
    return has_shape(s, month ? "dd/dddd" : "dd/dd/dddd", month);
}

bool vat_trapmod_day(const char *v, char day[11])
{
    if (day_first(v, false))
        snprintf(day, 11, "%.4s-%.2s-%.2s", v + 6, v + 3, v);
    else if (iso_date(v, false))
        snprintf(day, 11, "%.10s", v);
    else
        return false;
    return true;
}

/* Rewrites the day-first dates of column col in ISO order, or without
 * `on` drops their rows (the mistake: no date). */
static void clean_dates(struct vat_csv *c, int col, bool month, bool on)
{
    for (size_t i = c->nrows; i-- > 1;) {
        const char *v = vat_csv_get(c, i, (size_t)col);
        if (!day_first(v, month))
            continue;
        if (!on) {
            vat_csv_drop_row(c, i);
            continue;
        }
        char buf[64];
        if (month)
            snprintf(buf, sizeof buf, "%.4s-%.2s", v + 3, v);
        else
            snprintf(buf, sizeof buf, "%.4s-%.2s-%.2s%.40s", v + 6, v + 3, v, v + 10);
        vat_csv_set(c, i, (size_t)col, buf);
    }
}

void vat_trapmod_clean(const struct vat_task *t, struct vat_csv *c)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!t->trapmods || !d || c->nrows < 1)
        return;
    unsigned on = t->trapmods & ~t->trapmods_off;
    int sc = d->status ? vat_csv_col(c, 0, d->status) : -1;
    int ac = d->amount ? vat_csv_col(c, 0, d->amount) : -1;
    if ((on & VAT_TM_STATUS) && sc >= 0)
        clean_status(c, sc);
    if ((t->trapmods & VAT_TM_TEXTNUM) && ac >= 0)
        clean_textnum(c, ac, (on & VAT_TM_TEXTNUM) != 0, d->amount_words);
    int dc = d->date ? vat_csv_col(c, 0, d->date) : -1;
    if ((t->trapmods & VAT_TM_DATES) && dc >= 0)
        clean_dates(c, dc, d->date_month, (on & VAT_TM_DATES) != 0);
    int ic = d->id ? vat_csv_col(c, 0, d->id) : -1;
    if ((on & VAT_TM_TOTALS) && ic >= 0)
        drop_by_id(c, ic, TOTALS_ID, true);
    if ((on & VAT_TM_TEST) && ic >= 0)
        drop_by_id(c, ic, TEST_PREFIX, false);
    int pc = d->placeholder_col ? vat_csv_col(c, 0, d->placeholder_col) : -1;
    if ((on & VAT_TM_PLACEHOLDER) && pc >= 0 && d->placeholder)
        drop_by_id(c, pc, d->placeholder, true);
    if (on & VAT_TM_DUPLICATES)
        clean_duplicates(c);
}

/* ---- cleaning in SQL ------------------------------------------------------------ */

static int exec_sql(sqlite3 *db, const char *sql, const struct vat_task *t, struct vat_err *e)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        vat_err_set(e, "%s: trap module cleaning: %s", t->id, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The armed modules of t whose column is among cols (one table's): each
 * module acts on the table holding its column; exact_duplicates on any. */
static unsigned modules_in(const struct vat_task *t, const char *const *cols, size_t n)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    return t->trapmods &
           (VAT_TM_DUPLICATES | (in_cols(cols, n, d->status) ? VAT_TM_STATUS : 0u) |
            (in_cols(cols, n, d->amount) ? VAT_TM_TEXTNUM : 0u) |
            (in_cols(cols, n, d->date) ? VAT_TM_DATES : 0u) |
            (in_cols(cols, n, d->id) ? VAT_TM_TEST | VAT_TM_TOTALS : 0u) |
            (d->placeholder && in_cols(cols, n, d->placeholder_col) ? VAT_TM_PLACEHOLDER : 0u) |
            (d->lookalike && in_cols(cols, n, d->amount) ? VAT_TM_LOOKALIKE : 0u) |
            (d->sign && in_cols(cols, n, d->amount) ? VAT_TM_SIGN : 0u));
}

/* The columns of a loaded table, read once (table_info order). */
struct table_cols {
    char *name[64];
    size_t n;
};

static void table_columns(sqlite3 *db, const char *table, struct table_cols *tc)
{
    char *q = sqlite3_mprintf("PRAGMA table_info(\"%w\")", table);
    sqlite3_stmt *st = NULL;
    tc->n = 0;
    if (q && sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK)
        while (tc->n < 64 && sqlite3_step(st) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 1);
            tc->name[tc->n++] = vat_xstrdup(name ? name : "");
        }
    sqlite3_finalize(st);
    sqlite3_free(q);
}

static void table_columns_release(struct table_cols *tc)
{
    for (size_t i = 0; i < tc->n; i++)
        free(tc->name[i]);
    tc->n = 0;
}

/* The columns, quoted and comma-separated (new sqlite3 string). */
static char *column_list(const struct table_cols *tc)
{
    char *out = NULL;
    for (size_t i = 0; i < tc->n; i++) {
        char *next = sqlite3_mprintf("%s%s\"%w\"", out ? out : "", out ? ", " : "", tc->name[i]);
        sqlite3_free(out);
        out = next;
    }
    return out;
}

/* The SQL test for a day-first value of column col, and the expression
 * that writes it in ISO order (new sqlite3 strings). */
static char *day_first_glob(const char *col, bool month)
{
    return sqlite3_mprintf(month ? "\"%w\" GLOB '[0-9][0-9]/[0-9][0-9][0-9][0-9]'"
                                 : "\"%w\" GLOB '[0-9][0-9]/[0-9][0-9]/[0-9][0-9][0-9][0-9]*'",
                           col);
}

static char *day_first_iso(const char *col, bool month, bool date_only)
{
    if (month)
        return sqlite3_mprintf("substr(\"%w\", 4, 4) || '-' || substr(\"%w\", 1, 2)", col, col);
    /* without a time the year runs to the end, and date() gives NULL for
     * any other shape: a mutant shifting a bound changes the answer */
    if (date_only)
        return sqlite3_mprintf("date(substr(\"%w\", 7) || '-' || substr(\"%w\", 4, 2) || '-' || "
                               "substr(\"%w\", 1, 2))",
                               col, col, col);
    return sqlite3_mprintf("substr(\"%w\", 7, 4) || '-' || substr(\"%w\", 4, 2) || '-' || "
                           "substr(\"%w\", 1, 2) || substr(\"%w\", 11)",
                           col, col, col, col);
}

int vat_trapmod_clean_sqlite(const struct vat_task *t, sqlite3 *db, const char *table,
                             struct vat_err *e)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!t->trapmods || !d)
        return 0;
    struct table_cols tc;
    table_columns(db, table, &tc);
    const char *const *names = (const char *const *)tc.name;
    unsigned here = modules_in(t, names, tc.n);
    unsigned on = here & ~t->trapmods_off;
    int rc = 0;
    /* the look-alike's mistake first: its figures are the amount's */
    if ((here & t->trapmods_off & VAT_TM_LOOKALIKE) && in_cols(names, tc.n, d->lookalike)) {
        char *q = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = \"%w\"", table, d->amount,
                                  d->lookalike);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (on & VAT_TM_STATUS) && d->status) {
        char *q = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = lower(trim(\"%w\", ' '))", table,
                                  d->status, d->status);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (here & VAT_TM_TEXTNUM) && d->amount && d->amount_words) {
        char *q = (on & VAT_TM_TEXTNUM)
                      ? sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = " WORDS_CASE
                                        " WHERE typeof(\"%w\") = 'text' AND \"%w\" GLOB "
                                        "'*[A-Za-z]*'",
                                        table, d->amount, d->amount, d->amount, d->amount)
                      : sqlite3_mprintf("DELETE FROM \"%w\" WHERE \"%w\" GLOB '*[A-Za-z]*'",
                                        table, d->amount);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    } else if (rc == 0 && (here & VAT_TM_TEXTNUM) && d->amount) {
        char *q = (on & VAT_TM_TEXTNUM)
                      ? sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = CAST(replace(replace(\"%w\", "
                                        "'$', ''), ',', '') AS REAL) WHERE typeof(\"%w\") = "
                                        "'text' AND \"%w\" GLOB '*[$,]*'",
                                        table, d->amount, d->amount, d->amount, d->amount)
                      : sqlite3_mprintf("DELETE FROM \"%w\" WHERE \"%w\" GLOB '*[$,]*'", table,
                                        d->amount);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (on & VAT_TM_SIGN) && in_cols(names, tc.n, SIGN_COL)) {
        char *q = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = -\"%w\" WHERE \"%w\" = '%q'",
                                  table, d->amount, d->amount, SIGN_COL, SIGN_REFUND);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (here & VAT_TM_DATES) && d->date) {
        char *is = day_first_glob(d->date, d->date_month);
        char *iso = day_first_iso(d->date, d->date_month, d->date_only);
        char *q = (on & VAT_TM_DATES)
                      ? sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = %s WHERE %s", table, d->date,
                                        iso, is)
                      : sqlite3_mprintf("DELETE FROM \"%w\" WHERE %s", table, is);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
        sqlite3_free(is);
        sqlite3_free(iso);
    }
    if (rc == 0 && (on & VAT_TM_TOTALS) && d->id) {
        char *q = sqlite3_mprintf("DELETE FROM \"%w\" WHERE \"%w\" = '" TOTALS_ID "'", table,
                                  d->id);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (on & VAT_TM_TEST) && d->id) {
        char *q = sqlite3_mprintf("DELETE FROM \"%w\" WHERE \"%w\" GLOB " TEST_GLOB, table,
                                  d->id);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (on & VAT_TM_PLACEHOLDER)) {
        char *q = sqlite3_mprintf("DELETE FROM \"%w\" WHERE \"%w\" = %Q", table,
                                  d->placeholder_col, d->placeholder);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    const char *cut = cutoff_op(t, t->trapmods_off);
    if (rc == 0 && cut && in_cols(names, tc.n, LATE_COL)) {
        /* the rows the report keeps: loaded by the cut-off (<=), or
         * before it (<, the boundary's mistake), or any (<>: only the
         * rows at the cut-off go) */
        char *q = sqlite3_mprintf("DELETE FROM \"%w\" WHERE NOT (\"%w\" %s '%q')", table,
                                  LATE_COL, cut, LATE_CUTOFF);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    if (rc == 0 && (on & VAT_TM_DUPLICATES)) {
        char *cols = column_list(&tc);
        char *q = sqlite3_mprintf("DELETE FROM \"%w\" WHERE rowid NOT IN (SELECT min(rowid) "
                                  "FROM \"%w\" GROUP BY %s)",
                                  table, table, cols ? cols : "rowid");
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
        sqlite3_free(cols);
    }
    table_columns_release(&tc);
    return rc;
}

/* Appends the amount column c of the program form's CTE, "<expr> AS c":
 * the look-alike's figure (swap: its mistake), else the amount with text
 * numbers read (amount), each refund's negated (sign). */
static void amount_expr(struct vat_buf *b, const struct vat_trapmods *d, const char *c,
                        bool swap, bool amount, bool sign)
{
    struct vat_buf x = VAT_BUF_INIT;
    if (swap)
        vat_buf_puts(&x, d->lookalike);
    else if (amount && d->amount_words)
        vat_buf_printf(&x, "CASE WHEN %s GLOB '*[A-Za-z]*' THEN " WORDS_CASE_Q " ELSE %s END", c,
                       c, c);
    else if (amount)
        vat_buf_printf(&x,
                       "CASE WHEN %s GLOB '*[$,]*' THEN CAST(replace(replace(%s, '$', ''), "
                       "',', '') AS REAL) ELSE %s END",
                       c, c, c);
    else
        vat_buf_puts(&x, c);
    if (sign)
        vat_buf_printf(b, "CASE " SIGN_COL " WHEN '" SIGN_REFUND "' THEN -(%s) ELSE %s END AS %s",
                       x.data, x.data, c);
    else
        vat_buf_printf(b, "%s AS %s", x.data, c);
    vat_buf_release(&x);
}

/* Appends the CTE shadowing `table` (columns cols) with the cleaning of
 * the modules in `on` that act on it, after "WITH " or ",\n" (`first`);
 * false, nothing appended, when none does. */
static bool wrap_one(struct vat_buf *b, const struct vat_task *t, unsigned off,
                     const char *table, const char *const *cols, size_t ncols, bool first)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    unsigned here = modules_in(t, cols, ncols), on = here & ~off;
    /* late_rows acts on a CSV's table, whose loaded_at the CTE filters on */
    const char *cut = d->late && !d->db_tables ? cutoff_op(t, off) : NULL;
    bool late = cut != NULL;
    /* the look-alike's mistake: its figures read as the amount's */
    bool swap = (here & off & VAT_TM_LOOKALIKE) != 0;
    bool status = on & VAT_TM_STATUS, date = on & VAT_TM_DATES, amount = on & VAT_TM_TEXTNUM;
    bool totals = on & VAT_TM_TOTALS, test = on & VAT_TM_TEST, ph = on & VAT_TM_PLACEHOLDER;
    bool dup = (on & VAT_TM_DUPLICATES) != 0, sign = on & VAT_TM_SIGN;
    if (!(status || date || amount || totals || test || ph || dup || swap || late || sign))
        return false;
    vat_buf_printf(b, "%s%s AS (SELECT %s", first ? "WITH " : ",\n", table,
                   dup ? "DISTINCT " : "");
    for (size_t i = 0; i < ncols; i++) {
        const char *c = cols[i];
        if (i)
            vat_buf_puts(b, ", ");
        if (d->amount && strcmp(c, d->amount) == 0 && (swap || amount || sign))
            amount_expr(b, d, c, swap, amount, sign);
        else if (status && strcmp(c, d->status) == 0)
            vat_buf_printf(b, "lower(trim(%s)) AS %s", c, c);
        else if (date && strcmp(c, d->date) == 0) {
            char *is = day_first_glob(c, d->date_month);
            char *iso = day_first_iso(c, d->date_month, d->date_only);
            vat_buf_printf(b, "CASE WHEN %s THEN %s ELSE %s END AS %s", is, iso, c, c);
            sqlite3_free(is);
            sqlite3_free(iso);
        } else
            vat_buf_puts(b, c);
    }
    vat_buf_printf(b, " FROM main.%s", table);
    const char *where = " WHERE";
    if (totals) {
        vat_buf_printf(b, "%s %s IS NOT '" TOTALS_ID "'", where, d->id);
        where = " AND";
    }
    if (test) {
        vat_buf_printf(b, "%s NOT %s GLOB " TEST_GLOB, where, d->id);
        where = " AND";
    }
    if (ph) {
        char *lit = sqlite3_mprintf("%Q", d->placeholder);
        vat_buf_printf(b, "%s %s IS NOT %s", where, d->placeholder_col, lit);
        sqlite3_free(lit);
        where = " AND";
    }
    if (late)
        vat_buf_printf(b, "%s " LATE_COL " %s '" LATE_CUTOFF "'", where, cut);
    vat_buf_puts(b, ")");
    return true;
}

int vat_trapmod_clean_db(const struct vat_task *t, sqlite3 *db, struct vat_err *e)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    int rc = 0;
    for (size_t k = 0; d && d->db_tables && k < d->ndb_tables && rc == 0; k++)
        rc = vat_trapmod_clean_sqlite(t, db, d->db_tables[k].name, e);
    if (rc == 0 && (t->trapmods & t->trapmods_off & VAT_TM_DISTRACTOR) && d->distractor_as) {
        char *q = sqlite3_mprintf("DELETE FROM \"%w\"; INSERT INTO \"%w\" SELECT * FROM (%s)",
                                  d->distractor_for, d->distractor_for, d->distractor_as);
        rc = exec_sql(db, q, t, e);
        sqlite3_free(q);
    }
    return rc;
}

char *vat_trapmod_wrap_sql(const struct vat_task *t, const struct vat_progform *pf,
                           const char *table, const char *sql, unsigned off)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    /* nothing armed: nothing to clean, no mistake to make (otherwise each
     * table's CTE says whether it has anything to do) */
    if (!d || !t->trapmods)
        return vat_xstrdup(sql);
    struct vat_buf b = VAT_BUF_INIT;
    bool any = false;
    if (d->db_tables) {
        bool misread = (t->trapmods & off & VAT_TM_DISTRACTOR) && d->distractor_as;
        for (size_t k = 0; k < d->ndb_tables; k++) {
            const struct vat_trapmod_table *x = &d->db_tables[k];
            const char *name = x->renamed ? table : x->name;
            if (misread && strcmp(x->name, d->distractor_for) == 0) {
                /* the distractor's mistake: the table read from it */
                vat_buf_printf(&b, "%s%s AS (%s)", any ? ",\n" : "WITH ", name,
                               d->distractor_as);
                any = true;
                continue;
            }
            any |= wrap_one(&b, t, off, name, x->columns, x->ncols, !any);
        }
    } else
        any = wrap_one(&b, t, off, table, pf->columns, pf->ncols, true);
    if (!any) {
        vat_buf_release(&b);
        return vat_xstrdup(sql);
    }
    if (strncmp(sql, "WITH ", 5) == 0)
        vat_buf_printf(&b, ",\n%s", sql + 5);
    else
        vat_buf_printf(&b, "\n%s", sql);
    return vat_buf_detach(&b);
}

/* ---- the prompt ------------------------------------------------------------------ */

static const char tm_say_dup_explicit[] =
    "[[Rows identical in every column are one record: count each such row once|A row that "
    "matches another in every column is the same record and counts once|Identical rows "
    "(every column equal) are one record, taken once]].";
static const char tm_say_dup_natural[] =
    "[[Two rows that match in every column are the same record, so it counts once|When rows "
    "match in every column, they are one record and count once]].";
/* Explicit questions say the status is "exactly" its value; the
 * convention says what "exactly" is compared against, so the two agree. */
static const char tm_say_status_explicit[] =
    "[[`{col}` is compared after trimming surrounding spaces and lower-casing: a value that "
    "is then exactly `{value}` counts|`{col}` is matched trimmed and in lower case, so any "
    "spelling that becomes exactly `{value}` counts|Before the comparison, trim `{col}` and "
    "lower-case it: whatever then reads exactly `{value}` counts]].";
static const char tm_say_status_natural[] =
    "[[The `{col}` values mean the same whatever their case or surrounding spaces|{An} `{col}` "
    "is the same value in capitals or with spaces around it]].";
static const char tm_say_num_explicit[] =
    "[[{An} `{col}` with a currency sign or thousands separators is the number it shows "
    "(`$1,234.50` is 1234.50)|`{col}` is a number even where it carries a `$` sign or "
    "thousands separators: `$1,234.50` means 1234.50|Read `{col}` as a number, a `$` sign and "
    "thousands separators dropped (`$1,234.50` is 1234.50)]].";
static const char tm_say_num_natural[] =
    "[[{An} `{col}` such as `$1,234.50` is simply 1234.50|Amounts in `{col}` count as numbers "
    "with or without a `$` sign and thousands separators]].";

static const char tm_say_test_explicit[] =
    "[[Rows whose `{col}` starts with `TEST-` are test entries, not real records: leave them "
    "out|{An} `{col}` beginning with `TEST-` marks a test entry, which is not part of the "
    "data and is left out|Leave out the test entries, the rows whose `{col}` starts with "
    "`TEST-`]].";
static const char tm_say_test_natural[] =
    "[[Anything whose `{col}` starts with `TEST-` is test data from an integration run and "
    "doesn't count|The rows with {an} `{col}` starting with `TEST-` are just test entries, so "
    "ignore them]].";

static const char tm_say_totals_explicit[] =
    "[[The last line, whose `{col}` is `TOTAL`, is the export's totals line, not a record: "
    "leave it out|The export ends with a totals line (`{col}` reads `TOTAL`); it is not a "
    "record and is left out|Leave out the closing totals line, the row whose `{col}` is "
    "`TOTAL`]].";
static const char tm_say_totals_natural[] =
    "[[The `TOTAL` line at the bottom is just the export's summary, not a real entry|Skip the "
    "last line, the one with `TOTAL` in `{col}`: it's the export's totals line]].";

static const char tm_say_words_explicit[] =
    "[[{An} `{col}` spelled out in words is that number of stars (`four` is 4)|`{col}` is "
    "sometimes written as a word: `four` means 4, in any case|Read {an} `{col}` written as a "
    "word as its number: `Four` is 4]].";
static const char tm_say_words_natural[] =
    "[[Some ratings are written out as words; `four` just means 4|A rating like `Four` is "
    "simply 4 stars]].";

static const char tm_say_dates_explicit[] =
    "[[Some `{col}` values are written day first, {form} (`{ex}` is {iso}): they are those "
    "{what}|{An} `{col}` written day first, {form}, is that {one}: `{ex}` is {iso}|Read "
    "`{col}` written as {form} day first: `{ex}` means {iso}]].";
static const char tm_say_dates_natural[] =
    "[[A few `{col}` values are written day first, like `{ex}`, which is just {iso}|Where "
    "`{col}` reads like `{ex}`, that's the day first: {iso}]].";

static const char tm_say_placeholder_explicit[] =
    "[[{An} `{col}` of `{ph}` is a placeholder (a guest checkout), not a real value: leave "
    "those rows out|Where `{col}` reads `{ph}`, it stands for no one (a guest checkout); "
    "those rows are left out|Leave out the rows whose `{col}` is the placeholder `{ph}`, "
    "written for guest checkouts]].";
static const char tm_say_placeholder_natural[] =
    "[[`{ph}` in `{col}` is just the placeholder our checkout writes for guests, not a real "
    "one|Guest checkouts show `{ph}` as the `{col}`; that's a placeholder, so leave those "
    "out]].";

static const char tm_say_look_explicit[] =
    "[[`{look}` is {is}, not `{col}`: every figure of the answer comes from `{col}`|The "
    "figures come from `{col}`; `{look}` is {is} and is not used|`{look}` holds {is}; the "
    "answer reads `{col}` only]].";
static const char tm_say_look_natural[] =
    "[[Go by `{col}`; `{look}` is just {is}|`{look}` is only {is}, so the numbers come from "
    "`{col}`]].";

static const char tm_say_late_explicit[] =
    "[[The report is as of {cut}: rows whose `{col}` is later arrived after it (the export "
    "was run again) and are left out|`{col}` says when each row reached the export; rows "
    "loaded after {cut} belong to the next report and are left out|Leave out the rows "
    "loaded after the cut-off, {cut}: their `{col}` is later]].";
static const char tm_say_late_natural[] =
    "[[The report's cut-off was {cut}; anything with a later `{col}` came in after it and "
    "isn't part of this one|Rows loaded after {cut} (see `{col}`) are from a re-run of the "
    "export, so leave them out]].";

static const char tm_say_boundary_explicit[] =
    "[[A row loaded at {cut} exactly still belongs to the report|The cut-off is inclusive: "
    "rows whose `{col}` is {cut} itself count|Rows loaded at the cut-off itself, {cut}, are "
    "part of the report]].";
static const char tm_say_boundary_natural[] =
    "[[Anything loaded right at {cut} still makes it in|Rows stamped exactly {cut} do "
    "count]].";

static const char tm_say_sign_explicit[] =
    "[[`{col}` says whether a row is a `charge` or a `refund`; every `{amt}` is written "
    "positive, and a refund's is taken off the total|A row whose `{col}` is `refund` gives "
    "money back: its `{amt}`, written positive, counts negative|`{amt}` is always written "
    "positive: rows with `{col}` = `refund` subtract their `{amt}`, rows with `charge` add "
    "it]].";
static const char tm_say_sign_natural[] =
    "[[Refunds show up as their own rows with `{col}` set to `refund` and a positive `{amt}`, "
    "so take those off|A `refund` in `{col}` is money going back: its `{amt}` is positive "
    "in the file but it should come off the total]].";

static const char tm_say_distractor_explicit[] =
    "[[`{tab}` is {is}: the answer does not read it|Leave `{tab}` aside: it is {is}|The "
    "table `{tab}` is {is}, and no part of the answer comes from it]].";
static const char tm_say_distractor_natural[] =
    "[[Don't go by `{tab}`, that's {is}|`{tab}` is just {is}, so don't use it for this]].";

void vat_trapmod_prompt(struct vat_task *t)
{
    const struct vat_trapmods *d = t->tmpl->modules;
    if (!t->trapmods || !d || !t->prompt)
        return;
    bool nat = vat_prompt_natural(t);
    /* The conventions follow the data they are about: after the CSV
     * block the prompt shows, else at the end. */
    const char *at = strstr(t->prompt, d->db_tables ? "```sql\n" : "```csv\n");
    at = at ? strstr(at, "\n```\n") : NULL;
    size_t cut = at ? (size_t)(at - t->prompt) + 5 : strlen(t->prompt);
    struct vat_buf b = VAT_BUF_INIT;
    vat_buf_putn(&b, t->prompt, cut);
    while (b.len && b.data[b.len - 1] == '\n')
        b.len--;
    vat_buf_puts(&b, "\n\n");
    const char *sep = "";
    if (t->trapmods & VAT_TM_DUPLICATES) {
        vat_prompt_say(&b, t, 'D', nat ? tm_say_dup_natural : tm_say_dup_explicit, NULL);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_STATUS) {
        const char *kv[] = {"col", d->status, "value", d->status_value, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'S', nat ? tm_say_status_natural : tm_say_status_explicit, kv);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_TEXTNUM) {
        const char *kv[] = {"col", d->amount, NULL};
        vat_buf_puts(&b, sep);
        if (d->amount_words)
            vat_prompt_say(&b, t, 'W', nat ? tm_say_words_natural : tm_say_words_explicit, kv);
        else
            vat_prompt_say(&b, t, 'N', nat ? tm_say_num_natural : tm_say_num_explicit, kv);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_DATES) {
        const char *kv[] = {"col", d->date,
                            "form", d->date_month ? "`MM/YYYY`" : "`DD/MM/YYYY`",
                            "ex", d->date_month ? "03/2024" : "14/03/2024",
                            "iso", d->date_month ? "2024-03" : "2024-03-14",
                            "what", d->date_month ? "months" : "dates",
                            "one", d->date_month ? "month" : "date",
                            NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'F', nat ? tm_say_dates_natural : tm_say_dates_explicit, kv);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_TEST) {
        const char *kv[] = {"col", d->id, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'T', nat ? tm_say_test_natural : tm_say_test_explicit, kv);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_TOTALS) {
        const char *kv[] = {"col", d->id, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'L', nat ? tm_say_totals_natural : tm_say_totals_explicit, kv);
        sep = " ";
    }
    if (t->trapmods & VAT_TM_PLACEHOLDER) {
        const char *kv[] = {"col", d->placeholder_col, "ph", d->placeholder, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'G',
                       nat ? tm_say_placeholder_natural : tm_say_placeholder_explicit, kv);
        sep = " ";
    }
    if ((t->trapmods & VAT_TM_LOOKALIKE) && d->lookalike) {
        const char *kv[] = {"col", d->amount, "look", d->lookalike, "is",
                            d->lookalike_is ? d->lookalike_is : "another figure", NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'K', nat ? tm_say_look_natural : tm_say_look_explicit, kv);
        sep = " ";
    }
    if ((t->trapmods & (VAT_TM_LATE | VAT_TM_BOUNDARY)) && d->late) {
        const char *kv[] = {"col", LATE_COL, "cut", LATE_CUTOFF, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'A', nat ? tm_say_late_natural : tm_say_late_explicit, kv);
        if (t->trapmods & VAT_TM_BOUNDARY) {
            vat_buf_putc(&b, ' ');
            vat_prompt_say(&b, t, 'O',
                           nat ? tm_say_boundary_natural : tm_say_boundary_explicit, kv);
        }
        sep = " ";
    }
    if ((t->trapmods & VAT_TM_SIGN) && d->sign) {
        const char *kv[] = {"col", SIGN_COL, "amt", d->amount, NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'R', nat ? tm_say_sign_natural : tm_say_sign_explicit, kv);
        sep = " ";
    }
    if ((t->trapmods & VAT_TM_DISTRACTOR) && d->distractor) {
        const char *kv[] = {"tab", d->distractor, "is",
                            d->distractor_is ? d->distractor_is : "another table", NULL};
        vat_buf_puts(&b, sep);
        vat_prompt_say(&b, t, 'B', nat ? tm_say_distractor_natural : tm_say_distractor_explicit,
                       kv);
    }
    vat_buf_puts(&b, at ? "\n\n" : "\n");
    if (at) {
        const char *rest = t->prompt + cut;
        while (*rest == '\n')
            rest++;
        vat_buf_puts(&b, rest);
    }
    free(t->prompt);
    t->prompt = vat_buf_detach(&b);
}

/* ---- the modules' traps ------------------------------------------------------------ */

/* The reference with module m's cleaning off: t->gold and the spec's
 * "expected" as they were. */
static char *answer_without(struct vat_task *t, unsigned m, struct vat_err *e)
{
    char *gold = t->gold;
    json_t *expected = json_incref(json_object_get(t->spec, "expected"));
    t->gold = NULL;
    t->trapmods_off = m;
    int rc = t->tmpl->reference(t, e);
    t->trapmods_off = 0;
    char *ans = t->gold;
    t->gold = gold;
    if (expected)
        json_object_set_new(t->spec, "expected", expected);
    if (rc != 0) {
        free(ans);
        return NULL;
    }
    return ans;
}

int vat_trapmod_traps(struct vat_task *t, struct vat_err *e)
{
    for (unsigned m = 1; m <= VAT_TM_LAST; m <<= 1) {
        if (!(t->trapmods & m))
            continue;
        if (t->n_traps == VAT_MAX_TRAPS)
            return vat_err_set(e, "%s: no room for trap '%s'", t->id, vat_trapmod_name(m));
        struct vat_err inner;
        char *ans = answer_without(t, m, &inner);
        if (!ans)
            return vat_err_set(e, "%s: trap '%s': %s", t->id, vat_trapmod_name(m), inner.msg);
        struct vat_trap *tp = &t->traps[t->n_traps++];
        tp->name = vat_trapmod_name(m);
        tp->text = vat_trapmod_mistake(m);
        tp->answer = ans;
        tp->module = m;
    }
    return 0;
}
