/* regex_iso_dates.c — the regex template "regex_iso_dates": from log lines
 * holding timestamps, versions, ids, times and dates in several notations,
 * extract the valid dates of one drawn notation (the separators it
 * accepts, field order, year range, boundary rule), month 01-12 and day
 * 01-31, never inside a longer digit run (nor, under the word rule,
 * touching a letter or underscore).
 * The trap is the naive `\d{4}-\d{2}-\d{2}` shape of that notation, armed
 * by planted decoys (month 13, day 00, dates glued to digits) in every
 * line set.  The held-out lines also hold what tells gold from its small
 * mutants: every field's boundary decoys, a letter in each digit place a
 * class of gold covers, and valid dates touching letters; from level 3
 * also two kinds held back from the lower levels, a separator typed
 * twice and spaces around both separators.
 * Exports vat_tmpl_regex_iso_dates. */
#include <stdio.h>
#include <string.h>

#include "level.h"
#include "prompt.h"
#include "regexgen.h"
#include "template.h"

/* ---- the notation space ------------------------------------------------ */

enum order { ORD_YMD, ORD_DMY, ORD_MDY, ORD_YDM, N_ORDERS };
static const char *const order_names[N_ORDERS] = {"YMD", "DMY", "MDY", "YDM"};

/* The separators a notation may accept: any non-empty set of these (a
 * date uses one of them in both places).  A set is a bit mask over seps,
 * 1..N_SEP_SETS; mask 1, 2, 4 are the single separators of vat 0.1. */
static const char seps[] = "-/._";
#define N_SEPS 4
#define N_SEP_SETS ((1 << N_SEPS) - 1)
/* Separators a notation never accepts, for the other-separator decoys. */
static const char other_seps[] = "-/._ :";

/* The boundary rule: a date may touch anything but a digit (vat 0.1), or
 * it must stand as a word of its own (no letter, digit or underscore on
 * either side). */
enum bound { B_DIGITS, B_WORD, N_BOUNDS };
static const char *const bound_names[N_BOUNDS] = {"digits", "word"};

/* The years a notation accepts: any four digits, or a range such as
 * 1950-2049 (range starts and ends on decade edges, drawn from the
 * pairs below), so the year part of gold varies with the task as much as
 * the separator and the order do. */
struct year_rule {
    int min, max;
};
static const int year_lows[] = {1900, 1910, 1920, 1930, 1940, 1950, 1960,
                                 1970, 1980, 1990, 2000, 2010, 2020};
static const int year_highs[] = {1979, 1989, 1999, 2009, 2019, 2029, 2039,
                                  2049, 2059, 2069, 2079, 2089, 2099};
#define N_LOWS 13
#define N_HIGHS 13
/* Rule 0 is "any"; rules 1.. are the (low, high) pairs with low < high:
 * the 8 lows up to 1970 with every high, 1980 with 12, ... 2020 with 8. */
#define N_YEAR_RULES (1 + 8 * 13 + 12 + 11 + 10 + 9 + 8)
#define N_FORMATS (N_SEP_SETS * N_ORDERS * N_BOUNDS * N_YEAR_RULES)
_Static_assert(N_FORMATS > 15000, "regex_iso_dates admits well over 10,000 distinct golds");

static struct year_rule year_rule_of(int yr)
{
    struct year_rule q = {0, 9999};
    for (int i = 0, k = 1; i < N_LOWS; i++)
        for (int j = 0; j < N_HIGHS; j++)
            if (year_lows[i] < year_highs[j] && k++ == yr) {
                q.min = year_lows[i];
                q.max = year_highs[j];
            }
    return q;
}

/* Appends to b, joined by '|', alternatives matching exactly the
 * width-digit numbers lo..hi (leading zeros included), each a prefix and
 * digit classes: the usual split into a partial low block, full middle
 * blocks and a partial high block.  Counts them in *n. */
static void range_alts(struct vat_buf *b, int *n, const char *prefix, int lo, int hi, int width)
{
    int p = 1;
    for (int i = 1; i < width; i++)
        p *= 10;
    char sub[16];
    if (width > 0 && !(lo == 0 && hi == p * 10 - 1)) {
        int a = lo / p, c = hi / p;
        if (a == c) {
            snprintf(sub, sizeof sub, "%s%d", prefix, a);
            range_alts(b, n, sub, lo % p, hi % p, width - 1);
            return;
        }
        int full_lo = a, full_hi = c;
        if (lo % p != 0) {
            snprintf(sub, sizeof sub, "%s%d", prefix, a);
            range_alts(b, n, sub, lo % p, p - 1, width - 1);
            full_lo = a + 1;
        }
        if (hi % p != p - 1)
            full_hi = c - 1;
        if (full_lo <= full_hi) {
            vat_buf_puts(b, (*n)++ ? "|" : "");
            vat_buf_puts(b, prefix);
            if (full_lo == full_hi)
                vat_buf_printf(b, "%d", full_lo);
            else
                vat_buf_printf(b, "[%d-%d]", full_lo, full_hi);
            if (width == 2)
                vat_buf_puts(b, "\\d");
            else if (width > 2)
                vat_buf_printf(b, "\\d{%d}", width - 1);
        }
        if (hi % p != p - 1) {
            snprintf(sub, sizeof sub, "%s%d", prefix, c);
            range_alts(b, n, sub, 0, hi % p, width - 1);
        }
        return;
    }
    /* every number of this width, or no digits left */
    vat_buf_puts(b, (*n)++ ? "|" : "");
    vat_buf_puts(b, prefix);
    if (width == 1)
        vat_buf_puts(b, "\\d");
    else if (width > 1)
        vat_buf_printf(b, "\\d{%d}", width);
}

/* Appends the gold's year sub-pattern: \d{4}, 20\d{2},
 * (?:19[5-9]\d|20[0-4]\d), ... */
static void put_year_pattern(struct vat_buf *b, int yr)
{
    struct year_rule q = year_rule_of(yr);
    struct vat_buf alts = VAT_BUF_INIT;
    int n = 0;
    range_alts(&alts, &n, "", q.min, q.max, 4);
    vat_buf_printf(b, n > 1 ? "(?:%s)" : "%s", alts.data);
    vat_buf_release(&alts);
}

struct fmt {
    char sep;        /* the first accepted separator          */
    char acc[N_SEPS + 1]; /* every accepted separator, in seps order */
    int nacc;
    enum order order;
    int yr;          /* year rule, see year_rule_of           */
    enum bound bound;
};

static void fmt_set_seps(struct fmt *x, unsigned mask)
{
    x->nacc = 0;
    for (int i = 0; i < N_SEPS; i++)
        if (mask & (1u << i))
            x->acc[x->nacc++] = seps[i];
    x->acc[x->nacc] = 0;
    x->sep = x->acc[0];
}

static struct fmt fmt_from_index(unsigned f)
{
    struct fmt x;
    fmt_set_seps(&x, 1 + f % N_SEP_SETS);
    f /= N_SEP_SETS;
    x.order = (enum order)(f % N_ORDERS);
    f /= N_ORDERS;
    x.bound = (enum bound)(f % N_BOUNDS);
    x.yr = (int)(f / N_BOUNDS);
    return x;
}

/* How hard notation f is to write a pattern for (0 the easiest): each
 * separator past the first, a field order other than year first (and
 * year-day-month, the rarest, once more), the word rule, and a year
 * range by the alternatives its pattern needs.  Levels take their
 * notations by it (vat_rx_choose_format). */
static unsigned fmt_hardness(unsigned f)
{
    struct fmt x = fmt_from_index(f);
    unsigned h = (unsigned)x.nacc - 1 + (x.order != ORD_YMD) + (x.order == ORD_YDM) +
                 (x.bound == B_WORD);
    if (x.yr) {
        struct year_rule q = year_rule_of(x.yr);
        struct vat_buf alts = VAT_BUF_INIT;
        int n = 0;
        range_alts(&alts, &n, "", q.min, q.max, 4);
        vat_buf_release(&alts);
        h += n <= 2 ? 1u : n <= 4 ? 2u : 3u;
    }
    return h;
}

/* The positions of year, month and day in an order ('Y','M','D'). */
static const char *order_fields(enum order o)
{
    static const char *const f[N_ORDERS] = {"YMD", "DMY", "MDY", "YDM"};
    return f[o];
}

/* "DD.MM.YYYY" for the prompt, with separator sep. */
static void fmt_label_sep(const struct fmt *x, char sep, char out[16])
{
    const char *f = order_fields(x->order);
    size_t k = 0;
    for (int i = 0; i < 3; i++) {
        const char *w = f[i] == 'Y' ? "YYYY" : f[i] == 'M' ? "MM" : "DD";
        for (; *w; w++)
            out[k++] = *w;
        if (i < 2)
            out[k++] = sep;
    }
    out[k] = 0;
}

/* "DD.MM.YYYY" or "YYYY-MM-DD, YYYY/MM/DD or YYYY_MM_DD": every accepted
 * separator's spelling, for the prompt and params. */
static void fmt_label(const struct fmt *x, char out[96])
{
    size_t k = 0;
    for (int i = 0; i < x->nacc; i++) {
        char one[16];
        fmt_label_sep(x, x->acc[i], one);
        k += (size_t)snprintf(out + k, 96 - k, "%s%s",
                              i == 0 ? "" : i == x->nacc - 1 ? " or " : ", ", one);
    }
}

/* "\"-\"" or "\"-\" or \"/\"" for the prompt. */
static void seps_words(const struct fmt *x, char out[64])
{
    size_t k = 0;
    for (int i = 0; i < x->nacc; i++)
        k += (size_t)snprintf(out + k, 64 - k, "%s\"%c\"",
                              i == 0 ? "" : i == x->nacc - 1 ? " or " : ", ", x->acc[i]);
}

/* Reads the notation back from the task's params (what the prompt states),
 * so reference() derives gold from the question, not from generator state. */
static int fmt_from_params(const json_t *params, struct fmt *x, struct vat_err *e)
{
    const char *sep = json_string_value(json_object_get(params, "separator"));
    const char *ord = json_string_value(json_object_get(params, "order"));
    json_int_t ymin = json_integer_value(json_object_get(params, "year_min"));
    json_int_t ymax = json_integer_value(json_object_get(params, "year_max"));
    /* vat 0.1 params name one separator and no boundary rule */
    const char *bound = json_string_value(json_object_get(params, "boundary"));
    if (!sep || !ord)
        return vat_err_set(e, "regex_iso_dates: params lack a valid separator or order");
    unsigned mask = 0;
    for (const char *p = sep; *p; p++) {
        const char *at = strchr(seps, *p);
        /* each at most once, in seps order */
        if (!at || (mask >> (at - seps)) != 0)
            return vat_err_set(e, "regex_iso_dates: params lack a valid separator or order");
        mask |= 1u << (at - seps);
    }
    if (!mask)
        return vat_err_set(e, "regex_iso_dates: params lack a valid separator or order");
    fmt_set_seps(x, mask);
    x->bound = B_DIGITS;
    if (bound && strcmp(bound, bound_names[B_WORD]) == 0)
        x->bound = B_WORD;
    else if (bound && strcmp(bound, bound_names[B_DIGITS]) != 0)
        return vat_err_set(e, "regex_iso_dates: unknown boundary rule '%s'", bound);
    x->order = N_ORDERS;
    for (int i = 0; i < N_ORDERS; i++)
        if (strcmp(ord, order_names[i]) == 0)
            x->order = (enum order)i;
    if (x->order == N_ORDERS)
        return vat_err_set(e, "regex_iso_dates: unknown order '%s'", ord);
    x->yr = -1;
    for (int i = 0; i < N_YEAR_RULES; i++)
        if (year_rule_of(i).min == ymin && year_rule_of(i).max == ymax)
            x->yr = i;
    if (x->yr < 0)
        return vat_err_set(e, "regex_iso_dates: no year rule for %lld..%lld", (long long)ymin,
                           (long long)ymax);
    return 0;
}

/* Builds the pattern of the question params state: gold with full field
 * rules and digit-run guards, or the trap's naive digit-count shape.
 * Returns a new string, or NULL with e set when params name no question. */
static char *build_pattern(const json_t *params, bool naive, struct vat_err *e)
{
    struct fmt q = {0};
    if (fmt_from_params(params, &q, e) != 0)
        return NULL;
    const struct fmt *x = &q;
    struct vat_buf b = VAT_BUF_INIT;
    const char *f = order_fields(x->order);
    char sep[32];
    if (x->nacc > 1)
        snprintf(sep, sizeof sep, "[%s]", x->acc); /* '-' first: no range */
    else
        snprintf(sep, sizeof sep, "%s%c", x->sep == '.' ? "\\" : "", x->sep);
    const char *guard = x->bound == B_WORD ? "\\w" : "\\d";
    if (!naive)
        vat_buf_printf(&b, "(?<!%s)", guard);
    for (int i = 0; i < 3; i++) {
        if (naive)
            vat_buf_puts(&b, f[i] == 'Y' ? "\\d{4}" : "\\d{2}");
        else if (f[i] == 'Y')
            put_year_pattern(&b, x->yr);
        else if (f[i] == 'M')
            vat_buf_puts(&b, "(?:0[1-9]|1[0-2])");
        else
            vat_buf_puts(&b, "(?:0[1-9]|[12]\\d|3[01])");
        if (i < 2)
            vat_buf_puts(&b, sep);
    }
    if (!naive)
        vat_buf_printf(&b, "(?!%s)", guard);
    return vat_buf_detach(&b);
}

/* ---- planting ---------------------------------------------------------- */

/* What one slot of a line holds.  The first three kinds are targets,
 * the rest decoys the gold pattern must skip. */
enum kind {
    K_TARGET,       /* a valid date in the task's notation               */
    K_WORD_BEFORE,  /* a valid date right after a letter or underscore   */
    K_WORD_AFTER,   /* a valid date right before a letter                */
    K_MONTH_ZERO,   /* month 00                                           */
    K_MONTH_BIG,    /* month 13..19                                       */
    K_DAY_ZERO,     /* day 00                                             */
    K_DAY_BIG,      /* day 32..39                                         */
    K_YEAR5,        /* a five-digit year                                  */
    K_GLUED_BEFORE, /* a valid date with a digit right before it          */
    K_GLUED_AFTER,  /* a valid date with a digit right after it           */
    K_OTHER_SEP,    /* same order, another separator                      */
    K_OTHER_ORDER,  /* same separator, another order (day 13..31)         */
    K_UNPADDED,     /* month or day written with one digit                */
    K_SHORT_YEAR,   /* a two-digit year                                   */
    K_YEAR_LOW,     /* a year below the task's year range                 */
    K_YEAR_HIGH,    /* a year above the task's year range                 */
    K_MONTH_LETTER, /* a letter in a digit place of the month ("1O")      */
    K_DAY_LETTER,   /* a letter in a digit place of the day ("2x")        */
    K_YEAR_LETTER,  /* a letter in a digit place of the year ("20X4")     */
    /* Held back for levels 3 to 5 (VAT_RX_HELD_BACK_LEVEL): weight 0,
     * required in the held-out lines only from that level on. */
    K_SEP_DOUBLED,  /* a separator typed twice: 2024--03-14               */
    K_SEP_SPACED,   /* spaces around both separators: 2024 - 03 - 14      */
    N_KINDS
};
#define FIRST_HELD_BACK K_SEP_DOUBLED

/* Slot weights of the free (not required) slots; K_YEAR_LOW and
 * K_YEAR_HIGH are zeroed when the notation allows any year. */
static const unsigned kind_weights[N_KINDS] = {
    [K_TARGET] = 34,      [K_WORD_BEFORE] = 4,  [K_WORD_AFTER] = 4,    [K_MONTH_ZERO] = 2,
    [K_MONTH_BIG] = 4,    [K_DAY_ZERO] = 4,     [K_DAY_BIG] = 5,       [K_YEAR5] = 4,
    [K_GLUED_BEFORE] = 5, [K_GLUED_AFTER] = 5,  [K_OTHER_SEP] = 7,     [K_OTHER_ORDER] = 7,
    [K_UNPADDED] = 4,     [K_SHORT_YEAR] = 3,   [K_YEAR_LOW] = 3,      [K_YEAR_HIGH] = 3,
    [K_MONTH_LETTER] = 2, [K_DAY_LETTER] = 2,   [K_YEAR_LETTER] = 3,
};

/* Letters that stand in a digit place: masked dates ("2024-03-xx") and
 * misread ones ("2024-1O-05"). */
static const char letters[] = "xXOolI";

static char draw_letter(struct vat_rng *r)
{
    return letters[vat_rng_below(r, sizeof letters - 1)];
}

static int draw_month(struct vat_rng *r)
{
    static const int edge[] = {1, 9, 10, 12};
    if (vat_rng_chance(r, 0.3))
        return edge[vat_rng_below(r, 4)];
    return (int)vat_rng_range(r, 1, 12);
}

static int draw_day(struct vat_rng *r)
{
    static const int edge[] = {1, 9, 10, 19, 20, 29, 30, 31};
    if (vat_rng_chance(r, 0.35))
        return edge[vat_rng_below(r, 8)];
    return (int)vat_rng_range(r, 1, 31);
}

/* A year inside the rule: mostly recent, sometimes at the rule's edges or
 * anywhere in it (so a narrower year rule than stated gets caught). */
static int draw_year(struct vat_rng *r, int yr)
{
    struct year_rule q = year_rule_of(yr);
    int lo = q.min > 1988 ? q.min : 1988, hi = q.max < 2032 ? q.max : 2032;
    if (lo <= hi && vat_rng_chance(r, 0.7))
        return (int)vat_rng_range(r, lo, hi);
    if (yr == 0)
        return (int)vat_rng_range(r, 1700, 2299);
    if (vat_rng_chance(r, 0.5)) {
        int edge[4] = {q.min, q.min + 1, q.max - 1, q.max};
        return edge[vat_rng_below(r, 4)];
    }
    return (int)vat_rng_range(r, q.min, q.max);
}

/* A year just outside the rule, below it or above it: the first of a
 * line set right at the edge (1899 or 2100 when 1900-2099 counts), where
 * a year class widened by one digit gets caught, the others up to 50
 * years away. */
static int draw_bad_year(struct vat_rng *r, int yr, bool below, unsigned seen)
{
    struct year_rule q = year_rule_of(yr);
    if (seen == 0 || vat_rng_chance(r, 0.3))
        return below ? q.min - 1 : q.max + 1;
    return below ? (int)vat_rng_range(r, q.min - 50, q.min - 1)
                 : (int)vat_rng_range(r, q.max + 1, q.max + 50);
}

/* A year of the rule in its lowest century (or its highest, when high):
 * gold's year part is one alternative per century of the rule, so a decoy
 * built on each of the two meets every alternative. */
static int year_of_century(struct vat_rng *r, int yr, bool high)
{
    struct year_rule q = year_rule_of(yr);
    if (yr == 0)
        return draw_year(r, yr);
    int c = high ? q.max / 100 : q.min / 100;
    int lo = c * 100 > q.min ? c * 100 : q.min;
    int hi = c * 100 + 99 < q.max ? c * 100 + 99 : q.max;
    return (int)vat_rng_range(r, lo, hi);
}

/* A year of the rule for a letter to go into, and the digit place (0..3)
 * the letter takes.  The classes of each century's alternative sit on
 * the last two digits, so the first four of a line set take place 2 and 3
 * of the lowest and of the highest century: every class of the year part
 * then meets a letter. */
static int year_letter_place(struct vat_rng *r, int yr, unsigned seen, int *place)
{
    if (yr == 0 || seen >= 4) {
        *place = (int)vat_rng_below(r, 4);
        return draw_year(r, yr);
    }
    *place = 2 + (int)(seen % 2);
    return year_of_century(r, yr, seen / 2 != 0);
}

/* Writes the three field texts in order o with the separator texts s1
 * and s2 between them. */
static void render_text(char *out, size_t cap, const char *y, const char *m, const char *d,
                        enum order o, const char *s1, const char *s2)
{
    const char *f = order_fields(o);
    const char *part[3];
    for (int i = 0; i < 3; i++)
        part[i] = f[i] == 'Y' ? y : f[i] == 'M' ? m : d;
    snprintf(out, cap, "%s%s%s%s%s", part[0], s1, part[1], s2, part[2]);
}

/* The same with the separators sep and sep2. */
static void render2(char *out, size_t cap, const char *y, const char *m, const char *d,
                    enum order o, char sep, char sep2)
{
    char s1[2] = {sep, 0}, s2[2] = {sep2, 0};
    render_text(out, cap, y, m, d, o, s1, s2);
}

/* The same with one separator in both places. */
static void render(char *out, size_t cap, const char *y, const char *m, const char *d,
                   enum order o, char sep)
{
    render2(out, cap, y, m, d, o, sep, sep);
}

/* The date of a slot of kind: the held-back kinds write an accepted
 * separator sep typed twice in one place (2024--03-14), or with a space
 * on each side in both (14 / 03 / 2024, as forms and notes write it), so
 * no three fields stand joined by one separator and gold takes nothing.
 * Caught: a separator written leniently, \d{4}-+\d{2}-+\d{2} (doubled)
 * or \d{4}\s*-\s*\d{2}\s*-\s*\d{2} (spaced), and \D+ or \W+ between
 * the fields (both).  Every other kind: render2 with sep and sep2. */
static void render_kind(char *out, size_t cap, struct vat_rng *r, int kind, const char *y,
                        const char *m, const char *d, enum order o, char sep, char sep2)
{
    char one[2] = {sep, 0}, two[3] = {sep, sep, 0}, spaced[4] = {' ', sep, ' ', 0};
    if (kind == K_SEP_SPACED)
        render_text(out, cap, y, m, d, o, spaced, spaced);
    else if (kind == K_SEP_DOUBLED && vat_rng_chance(r, 0.5))
        render_text(out, cap, y, m, d, o, two, one);
    else if (kind == K_SEP_DOUBLED)
        render_text(out, cap, y, m, d, o, one, two);
    else
        render2(out, cap, y, m, d, o, sep, sep2);
}

/* Text glued to a valid date that keeps it a date: letters and
 * underscores, never a digit right next to it. */
static const char *const word_before[] = {"v", "id", "backup_", "snap_", "build", "rel_", "T"};
static const char *const word_after[] = {"x", "_bak", "Z", "utc", "_full", "h", "T"};

/* A date out touching a word (kind K_WORD_BEFORE or K_WORD_AFTER). */
static void plant_word(struct vat_rx_builder *b, struct vat_rng *r, const struct fmt *x,
                       int kind, const char *out)
{
    /* A date touching a letter or underscore: a target under the
     * digits rule, a decoy (glue and all) under the word rule. */
    char before[16] = "", after[16] = "";
    if (kind == K_WORD_BEFORE)
        snprintf(before, sizeof before, "%s",
                 word_before[vat_rng_below(r, sizeof word_before / sizeof *word_before)]);
    if (kind == K_WORD_AFTER) {
        const char *w = word_after[vat_rng_below(r, sizeof word_after / sizeof *word_after)];
        if (strcmp(w, "T") == 0) {
            /* one draw per statement, the minutes first (the order
             * the corpus was drawn in, so its bytes stay) */
            int mm = (int)vat_rng_range(r, 0, 59);
            int hh = (int)vat_rng_range(r, 0, 23);
            snprintf(after, sizeof after, "T%02d:%02d", hh, mm);
        } else
            snprintf(after, sizeof after, "%s", w);
    }
    if (x->bound == B_WORD) {
        char glued[96];
        snprintf(glued, sizeof glued, "%s%s%s", before, out, after);
        vat_rx_decoy(b, glued, kind);
        return;
    }
    vat_rx_put(b, before);
    vat_rx_target(b, out, kind);
    vat_rx_put(b, after);
}

static void plant(struct vat_rx_builder *b, struct vat_rng *r, const struct vat_rx_slot *slot,
                  const void *ctx)
{
    const struct fmt *x = ctx;
    int kind = slot->kind;
    int y = draw_year(r, x->yr), mo = draw_month(r), d = draw_day(r);
    char ys[16], ms[8], ds[8], out[64];
    enum order o = x->order;
    /* One of the accepted separators: the first targets of a line set
     * take each in turn (so the hidden lines need every one), the rest
     * any.  A single separator draws nothing, as in vat 0.1. */
    char sep = x->sep;
    if (x->nacc > 1)
        sep = kind == K_TARGET && slot->seen < (unsigned)x->nacc
                  ? x->acc[slot->seen]
                  : x->acc[vat_rng_below(r, (uint32_t)x->nacc)];
    char sep2 = sep;
    snprintf(ys, sizeof ys, "%04d", y);
    snprintf(ms, sizeof ms, "%02d", mo);
    snprintf(ds, sizeof ds, "%02d", d);

    switch ((enum kind)kind) {
    case K_TARGET:
    case K_WORD_BEFORE:
    case K_WORD_AFTER:
        break;
    case K_MONTH_ZERO:
        strcpy(ms, "00");
        break;
    case K_MONTH_BIG:
        snprintf(ms, sizeof ms, "%02d", slot->seen == 0 ? 13 : (int)vat_rng_range(r, 13, 19));
        break;
    case K_DAY_ZERO:
        strcpy(ds, "00");
        break;
    case K_DAY_BIG:
        snprintf(ds, sizeof ds, "%02d", slot->seen == 0 ? 32 : (int)vat_rng_range(r, 32, 39));
        break;
    case K_YEAR5:
        /* The first two append a digit to a year of the lowest and of the
         * highest century, which a widened count (19\d{2,}) takes; a digit
         * put in front is stopped by the guard already. */
        if (slot->seen < 2) {
            /* one draw per statement, the digit first (the order the
             * corpus was drawn in, so its bytes stay) */
            int digit = (int)vat_rng_range(r, 0, 9);
            int year = year_of_century(r, x->yr, slot->seen == 1);
            snprintf(ys, sizeof ys, "%04d%d", year, digit);
        } else if (vat_rng_chance(r, 0.5))
            snprintf(ys, sizeof ys, "%04d%d", y, (int)vat_rng_range(r, 0, 9));
        else
            snprintf(ys, sizeof ys, "%d%04d", (int)vat_rng_range(r, 1, 9), y);
        break;
    case K_GLUED_BEFORE:
    case K_GLUED_AFTER:
        break;
    case K_OTHER_SEP:
        if (x->nacc == 1 && x->sep != '_') {
            /* the single separators of vat 0.1 draw as they did */
            static const char old[] = "-/.";
            sep = old[(size_t)(strchr(old, x->sep) - old + 1 + (long)vat_rng_below(r, 2)) % 3];
        } else {
            char pick[sizeof other_seps];
            uint32_t n = 0;
            for (const char *p = other_seps; *p; p++)
                if (!strchr(x->acc, *p))
                    pick[n++] = *p;
            char bad = pick[vat_rng_below(r, n)];
            /* Where several separators count, gold's separator is a
             * class: the first two of a set put the wrong one in one
             * place only (first, then second), so each class meets it. */
            if (x->nacc > 1 && slot->seen < 2)
                *(slot->seen == 0 ? &sep : &sep2) = bad;
            else
                sep = sep2 = bad;
        }
        break;
    case K_OTHER_ORDER: {
        /* A day of 13 or more cannot be read as a month, so the text is
         * not a valid date in the task's order either. */
        snprintf(ds, sizeof ds, "%02d", (int)vat_rng_range(r, 13, 31));
        int k = (int)vat_rng_below(r, N_ORDERS - 1);
        o = (enum order)(k >= (int)x->order ? k + 1 : k);
        break;
    }
    case K_UNPADDED:
        if (vat_rng_chance(r, 0.5))
            snprintf(ms, sizeof ms, "%d", (int)vat_rng_range(r, 1, 9));
        else
            snprintf(ds, sizeof ds, "%d", (int)vat_rng_range(r, 1, 9));
        break;
    case K_SHORT_YEAR:
        snprintf(ys, sizeof ys, "%02d", y % 100);
        break;
    case K_YEAR_LOW:
    case K_YEAR_HIGH:
        snprintf(ys, sizeof ys, "%04d", draw_bad_year(r, x->yr, kind == K_YEAR_LOW, slot->seen));
        break;
    case K_MONTH_LETTER:
        /* The first takes the second digit of month 10..12, the class of
         * gold's 1[0-2]; later ones either digit of any month. */
        if (slot->seen == 0 || vat_rng_chance(r, 0.5)) {
            snprintf(ms, sizeof ms, "%02d", (int)vat_rng_range(r, 10, 12));
            ms[1] = draw_letter(r);
        } else {
            /* the place, then the letter: one draw per statement */
            uint32_t at = vat_rng_below(r, 2);
            ms[at] = draw_letter(r);
        }
        break;
    case K_DAY_LETTER:
        /* The first takes the second digit of day 10..29 ([12]\d), the
         * second the first digit of the day. */
        if (slot->seen == 0) {
            snprintf(ds, sizeof ds, "%02d", (int)vat_rng_range(r, 10, 29));
            ds[1] = draw_letter(r);
        } else {
            uint32_t at = slot->seen == 1 ? 0 : vat_rng_below(r, 2);
            ds[at] = draw_letter(r);
        }
        break;
    case K_YEAR_LETTER: {
        int place;
        snprintf(ys, sizeof ys, "%04d", year_letter_place(r, x->yr, slot->seen, &place));
        ys[place] = draw_letter(r);
        break;
    }
    case K_SEP_DOUBLED:
    case K_SEP_SPACED:
    case N_KINDS:
        break;
    }
    render_kind(out, sizeof out, r, kind, ys, ms, ds, o, sep, sep2);
    if (kind == K_TARGET) {
        vat_rx_target(b, out, kind);
        return;
    }
    if (kind == K_WORD_BEFORE || kind == K_WORD_AFTER) {
        plant_word(b, r, x, kind, out);
        return;
    }
    char glued[80];
    if (kind == K_GLUED_BEFORE) {
        snprintf(glued, sizeof glued, "%d%s", (int)vat_rng_range(r, 0, 9), out);
        vat_rx_decoy(b, glued, kind);
    } else if (kind == K_GLUED_AFTER) {
        snprintf(glued, sizeof glued, "%s%d", out, (int)vat_rng_range(r, 0, 9));
        vat_rx_decoy(b, glued, kind);
    } else {
        vat_rx_decoy(b, out, kind);
    }
}

/* Log-line frames by number of slots.  Every slot is bordered by a space,
 * letter or punctuation that is neither a digit nor followed by one, so a
 * plant extends into its neighbours only where it is glued on purpose. */
static const char *const frames0[] = {
    "{time} {level} {svc}: retrying job {id} ({n} of 5) after {ms}",
    "{level} {svc}: heartbeat ok from {host}, build {ver}, uptime {n}h",
    "{user} opened ticket {id} from {ip} at {time}",
    "{level} [{svc}] cache hit ratio {pct} on {host}, p99 {ms}",
};
static const char *const frames1[] = {
    "{slot} {time} {level} {svc}: request {id} served in {ms}",
    "{slot}T{time}Z {level} [{svc}] user {user} signed in from {ip}",
    "{level} cron[{n}]: rotated logs older than {slot} on {host}",
    "{time} {level} {svc}: maintenance on {host} moved to {slot}",
    "release {ver} notes: \"fixes everything reported since {slot}\", {pct} faster start",
    "backup {id} finished at {time} on {host}; next run {slot}",
    "[{svc}] {user} set the invoice due date to {slot} (build {ver})",
};
static const char *const frames2[] = {
    "[{svc}] deploy of v{ver} scheduled for {slot}, rollback window ends {slot}",
    "{level} {svc}: certificate for {host} expires {slot} (checked {slot} at {time})",
    "{user} changed the due date from {slot} to {slot}",
    "import {id} covered {slot} through {slot}, {n} rows skipped",
    "audit: {user} exported report dated={slot};{slot} via {ip}",
};
static const char *const frames3[] = {
    "{slot} {time} {level} {svc}: job {id} reprocessed days {slot} and {slot}",
    "{user}: \"moved the review from {slot} to {slot}, then to {slot}\"",
    "{level} {svc}: billing periods {slot}, {slot}, {slot} closed in {ms}",
};

/* Of 20 lines, 2 hold no date slot, 9 one, 7 two and 2 three. */
static const struct vat_rx_layout layout = {
    VAT_RX_FRAMES(frames0, frames1, frames2, frames3),
    .slot_weights = {2, 9, 7, 2},
    .weights = kind_weights,
    .n_kinds = N_KINDS,
    .plant = plant,
};

/* Under the word rule no slot may touch a letter: the frame that glues a
 * time to its date writes them apart. */
static const char *const frames1_word[] = {
    "{slot} {time} {level} {svc}: request {id} served in {ms}",
    "{slot} {time}Z {level} [{svc}] user {user} signed in from {ip}",
    "{level} cron[{n}]: rotated logs older than {slot} on {host}",
    "{time} {level} {svc}: maintenance on {host} moved to {slot}",
    "release {ver} notes: \"fixes everything reported since {slot}\", {pct} faster start",
    "backup {id} finished at {time} on {host}; next run {slot}",
    "[{svc}] {user} set the invoice due date to {slot} (build {ver})",
};
_Static_assert(sizeof frames1_word == sizeof frames1, "the word rule's frames replace frames1");

/* ---- the prompt ---------------------------------------------------------- */

/* The data sentence and the question in both styles (explicit
 * questions: vat_rx_prompt_question). */
static const char *const d_explicit[] = {
    "[[The lines below come from application logs|Below are application log lines|You are "
    "given lines of application logs|The example lines are application logs|These lines are "
    "from application logs]][[:|; they hold| with]] [[timestamps|time stamps]], [[request "
    "ids|request identifiers]], [[versions|version numbers]], [[times of day|clock times]] "
    "and dates [[written in several notations|in several notations|in many notations]].",
};
static const char *const d_natural[] = {
    "[[These lines come from our application logs|Here is a sample of our service logs|Below: "
    "some lines from the app's logs|I pulled these lines out of our logs|Ops shared these log "
    "lines]][[:|, with|; they mix]] [[ids|request ids]], [[version numbers|versions]], [[times "
    "of day|times]] and dates [[in all sorts of notations|written in different ways|of every "
    "notation]].",
};
static const char *const q_natural[] = {
    "Could you write a regex that pulls every valid date written {label} out of lines like "
    "these?{facts}",
    "I need a regular expression that finds the dates in {label} notation, valid ones "
    "only.{facts}",
    "Can you give me a regex to extract the real dates written {label}?{facts}",
    "Please write a regex that picks out every proper {label} date from such log lines.{facts}",
    "[[For the log importer|For our audit trail|For the retention job]] I need a regex for the "
    "valid {label} dates in lines like these.{facts}",
};
static const char *const giveaways[] = {
    "longer run", "run of digits", "are not digits", "month is 01 to 12", "zero-padded",
    "does not count", "another separator", "do not stop it", NULL,
};
/* The decoys, which a natural prompt never describes. */
static const char *const defects[] = {
    "month 13", "day 00", "invalid dates like", "five-digit year", "typo", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_bound[] = {"a word of its own", "count too", NULL};
static const char *const states_format[] = {"{}", NULL};
static const struct vat_convention conventions[] = {
    {"boundary", states_bound},
    {"format", states_format},
    {NULL, NULL},
};

static void prompt_rules(struct vat_buf *b, struct vat_task *t, const struct fmt *x)
{
    struct year_rule yr = year_rule_of(x->yr);
    char label[96], sepw[64], sample[64], ys[8], y0[8], y1[8];
    fmt_label(x, label);
    seps_words(x, sepw);
    snprintf(ys, sizeof ys, "%04d", yr.min > 2024 ? yr.min : yr.max < 2024 ? yr.max : 2024);
    snprintf(y0, sizeof y0, "%04d", yr.min);
    snprintf(y1, sizeof y1, "%04d", yr.max);
    render(sample, sizeof sample, ys, "03", "05", x->order, x->sep);
    const char *kv[] = {"s", sample, "y0", y0, "y1", y1, "sepw", sepw, NULL};

    if (vat_prompt_natural(t)) {
        /* The facts convention leaves open, stated about the data: the
         * year range, that days are not checked against the month, and
         * what may touch a date. */
        struct vat_buf facts = VAT_BUF_INIT;
        if (x->yr != 0)
            vat_prompt_say(&facts, t, 'c',
                           " [[Only years {y0} through {y1} are of interest|We only care "
                           "about years {y0} to {y1}]].",
                           kv);
        vat_prompt_say(&facts, t, 'c',
                       " [[We never check a day against its month: any day 01-31 is fine in "
                       "any month|Days are never checked against the month; any day from 01 "
                       "to 31 is fine in any month]].",
                       kv);
        if (x->bound == B_WORD)
            vat_prompt_say(&facts, t, 'c',
                           " A date has to stand as a word of its own; one stuck to letters, "
                           "as in v{s} or {s}T08:15:00, is part of some other token.",
                           kv);
        else
            vat_prompt_say(&facts, t, 'c',
                           " Dates next to letters, as in v{s}, backup_{s}.tar or "
                           "{s}T08:15:00, count too.",
                           kv);
        const char *qkv[] = {"label", label, "facts", facts.data, NULL};
        VAT_RX_PROMPT_ASK(b, t, d_natural, q_natural, qkv);
        vat_buf_release(&facts);
        return;
    }

    const char *f = order_fields(x->order);
    const char *names[3];
    for (int i = 0; i < 3; i++)
        names[i] = f[i] == 'Y' ? "[[a four-digit year|the year in four digits]]"
                   : f[i] == 'M' ? "[[a two-digit month|the month in two digits]]"
                                 : "[[a two-digit day|the day in two digits]]";
    char fields[512];
    if (x->nacc > 1)
        snprintf(fields, sizeof fields, "%s, a separator (%s), %s, a separator, %s", names[0],
                 sepw, names[1], names[2]);
    else
        snprintf(fields, sizeof fields, "%s, \"%c\", %s, \"%c\", %s", names[0], x->sep,
                 names[1], x->sep, names[2]);
    char tail[640];
    snprintf(tail, sizeof tail, "written %s (%s)", label, fields);
    char *said = vat_prompt_text(t, 'r', tail, NULL);
    VAT_RX_PROMPT_QUESTION(b, t, d_explicit, "date", "dates", said);
    free(said);
    vat_prompt_say(b, t, 'r',
                   "- [[the month is 01 to 12|the month lies between 01 and 12|the month runs "
                   "from 01 to 12]] and [[the day is 01 to 31|the day lies between 01 and "
                   "31|the day runs from 01 to 31]] whatever the month ([[day 31 of month 02 "
                   "counts|even day 31 of month 02|02-31 included]]), [[both exactly two "
                   "digits, zero-padded|each written with exactly two digits, zero-padded|both "
                   "zero-padded to exactly two digits]];\n",
                   kv);
    if (x->yr == 0)
        vat_prompt_say(b, t, 'r',
                       "- [[the year is exactly four digits|the year has exactly four "
                       "digits|the year is written with exactly four digits]], [[any "
                       "value|of any value|whatever its value]];\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "- [[the year is exactly four digits|the year has exactly four "
                       "digits|the year is written with exactly four digits]], [[from {y0} to "
                       "{y1}|between {y0} and {y1}|{y0} through {y1}]];\n",
                       kv);
    vat_prompt_say(b, t, 'r',
                   "- [[the fields are in exactly that order|the fields come in exactly that "
                   "order|the fields keep exactly that order]] and [[are separated by|are split "
                   "by|are joined by]] {sepw} ([[the same date in another order or with another "
                   "separator does not count|the same date reordered or with a different "
                   "separator is "
                   "not a match|no other order or separator is accepted]]);\n",
                   kv);
    if (x->bound == B_WORD) {
        vat_prompt_say(b, t, 'r',
                       "- [[it stands on its own|it is a token of its own|it stands alone]]: "
                       "[[the character right before it and the character right after "
                       "it|the characters right before and right after it]], [[where there is "
                       "one|if there is one|when present]], [[are not a letter, a digit or an "
                       "underscore|are neither letters "
                       "nor digits nor underscores]] ([[spaces, punctuation and the line's "
                       "ends are fine|a space, punctuation or either end of the line is "
                       "fine]]).\n"
                       "[[So|Thus|Hence]] v{s}, backup_{s}.tar and {s}T08:15:00 hold no date "
                       "to extract, and [[neither does a date inside a longer run of digits|nor "
                       "does a date inside a longer run of digits|a date inside a longer run of "
                       "digits holds none either]].\n\n",
                       kv);
        return;
    }
    vat_prompt_say(b, t, 'r',
                   "- [[it is not part of a longer run of digits|it does not sit inside a "
                   "longer run of digits|no digit is glued to it]]: [[the character right "
                   "before it and the character right after it|the characters right before "
                   "and right after it]], [[where there is one|if there is one|when present]], "
                   "[[are not digits|are non-digits]].\n",
                   kv);
    /* The digit-run rule is about digits only; said outright with the
     * task's own notation, so a guard against letters is a plain mistake. */
    vat_prompt_say(b, t, 'r',
                   "Letters, underscores and other non-digits right next to a date do not stop "
                   "it from counting: v{s}, backup_{s}.tar and {s}T08:15:00 each hold the date "
                   "{s}.\n\n",
                   kv);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct fmt x = fmt_from_index(vat_rx_choose_format(t, rng, N_FORMATS));
    struct vat_rx_draw d;
    if (vat_rx_task_begin(t, rng, &d, e) != 0)
        return -1;

    /* Required plants.  The examples teach every rule the trap breaks
     * (month, day, glued digits, another notation) and that a letter next
     * to a date is no digit; the held-out lines hold every decoy kind, so
     * the naive shape and a pattern without the digit-run guards both fail
     * on held-out lines alone, and so does every small mutant of gold: a
     * guard widened to letters meets a date touching a letter, a class
     * widened to \w or . a letter in its digit place, a narrowed class
     * widened to \d the field's boundary values (month 00 and 13, day 00
     * and 32, the years right outside the range). */
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_WORD_BEFORE : K_WORD_AFTER);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_MONTH_ZERO : K_MONTH_BIG);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_DAY_ZERO : K_DAY_BIG);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_GLUED_BEFORE : K_GLUED_AFTER);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_OTHER_SEP : K_OTHER_ORDER);
    if (x.yr != 0)
        vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_YEAR_LOW : K_YEAR_HIGH);
    for (int k = 0; k < 4; k++)
        vat_rx_require(&d.ho, K_TARGET);
    for (int k = K_WORD_BEFORE; k < FIRST_HELD_BACK; k++)
        if ((k != K_YEAR_LOW && k != K_YEAR_HIGH) || x.yr != 0)
            vat_rx_require(&d.ho, k);
    /* the second day letter takes the day's first digit, the second
     * five-digit year and the year letters 2..4 the other century and
     * digit places (year_of_century, year_letter_place) */
    vat_rx_require(&d.ho, K_DAY_LETTER);
    vat_rx_require(&d.ho, K_YEAR5);
    if (x.nacc > 1)
        vat_rx_require(&d.ho, K_OTHER_SEP); /* one per separator place */
    for (int k = 0; k < 3; k++)
        vat_rx_require(&d.ho, K_YEAR_LETTER);
    /* From level 3 on, the held-out lines also hold the kinds held back
     * (never shown in the examples): separators doubled and spaced. */
    if (vat_task_level(t) >= VAT_RX_HELD_BACK_LEVEL)
        for (int k = FIRST_HELD_BACK; k < N_KINDS; k++)
            vat_rx_require(&d.ho, k);

    /* A notation that takes any year has no out-of-range decoy to plant. */
    struct vat_rx_layout l = layout;
    if (x.bound == B_WORD)
        l.frames[1] = frames1_word;
    unsigned weights[N_KINDS];
    memcpy(weights, kind_weights, sizeof weights);
    if (x.yr == 0)
        weights[K_YEAR_LOW] = weights[K_YEAR_HIGH] = 0;
    l.weights = weights;
    if (vat_rx_task_plant(t, rng, &d, &l, &x, e) != 0)
        return -1;

    char label[96];
    fmt_label(&x, label);
    struct year_rule yr = year_rule_of(x.yr);
    t->params = json_object();
    json_object_set_new(t->params, "format", json_string(label));
    json_object_set_new(t->params, "separator", json_string(x.acc));
    json_object_set_new(t->params, "order", json_string(order_names[x.order]));
    json_object_set_new(t->params, "year_min", json_integer(yr.min));
    json_object_set_new(t->params, "year_max", json_integer(yr.max));
    json_object_set_new(t->params, "boundary", json_string(bound_names[x.bound]));

    struct vat_buf b = VAT_BUF_INIT;
    prompt_rules(&b, t, &x);
    vat_rx_task_prompt(t, &b, "log lines");
    return 0;
}

static int reference(struct vat_task *t, struct vat_err *e)
{
    return vat_rx_task_reference(t, build_pattern, e);
}

static int trap_answer(struct vat_task *t, struct vat_err *e)
{
    return vat_rx_task_trap(t, build_pattern, e);
}

const struct vat_template vat_tmpl_regex_iso_dates = {
    .version = VAT_TEMPLATE_V1,
    .name = "regex_iso_dates",
    .family = "regex",
    .answer_kind = "regex",
    .trap = "The naive digit-count shape such as \\d{4}-\\d{2}-\\d{2}, which also takes month "
            "13, day 00 and dates glued to longer digit runs.",
    .summary = "Extract the valid dates of one drawn notation (separator, field order, year "
               "range) from log lines, never inside a longer run of digits.",
    .params = vat_rx_task_params,
    .default_count = 12,
    .generate = generate,
    .reference = reference,
    .confirm = vat_rx_task_confirm,
    .trap_answer = trap_answer,
    .check = vat_check_task,
    .giveaways = giveaways,
    .conventions = conventions,
    .defects = defects,
    .answer_columns = answer_columns,
    .notation_hardness = fmt_hardness,
};
