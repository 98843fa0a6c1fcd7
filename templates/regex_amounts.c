/* regex_amounts.c — the regex template "regex_amounts": from invoice notes
 * and chat messages, extract the money amounts of one drawn notation
 * (currency marker and whether a space follows it, thousands separator,
 * decimal separator, two or three decimals, whether cents and grouping
 * are required, whether a minus sign belongs to the amount) that are
 * complete and stand on their own.
 * The trap is the naive shape `\$\d+(\.\d{2})?` of that notation, which
 * stops at the first thousands separator: amounts of 1,000 and more are
 * planted in every line set.  The other decoys (bad groupings, one or
 * three cent digits, leading zeros, letters glued on or misread for
 * digits, other currencies) make each part of the gold pattern matter on
 * the held-out lines; from level 3 so do two kinds held back from the
 * lower levels, a minus between the marker and the number and the other
 * convention's separators.  Exports vat_tmpl_regex_amounts. */
#include <stdio.h>
#include <string.h>

#include "level.h"
#include "prompt.h"
#include "regexgen.h"
#include "template.h"

/* ---- the notation space -------------------------------------------------- */

/* Currency markers written before the number, in their usual spacing:
 * the three-letter codes are followed by one space, the signs glued to
 * the number.  A notation may take the other spacing ("USD12.00",
 * "R$ 12,00"). */
static const char *const markers[] = {
    "$",    "US$",  "USD ", "EUR ", "GBP ", "CHF ", "CAD ", "AUD ", "A$",   "C$",   "NZ$",
    "HK$",  "S$",   "R$",   "NT$",  "MX$",  "NZD ", "SEK ", "NOK ", "DKK ", "SGD ", "HKD ",
    "MXN ", "BRL ", "INR ", "ZAR ", "PLN ", "CZK ", "HUF ", "ILS ", "CNY ", "KRW ", "TRY ",
    "AED ", "SAR ", "THB ", "MYR ", "PHP ", "IDR ", "TWD ", "JPY ", "RUB ", "UAH ", "RON ",
    "BGN ", "ISK ", "KWD ", "BHD ", "OMR ", "JOD ", "QAR ", "EGP ", "NGN ", "KES ", "GHS ",
    "MAD ", "TND ", "KZT ", "VND ", "PKR ", "BDT ", "LKR ", "CLP ", "COP ", "PEN ", "ARS ",
    "UYU ", "XOF ", "XAF ", "NPR ", "GEL ", "AMD ", "AZN ", "RSD ", "MKD ", "DZD ", "IQD ",
    "BOB ", "PYG ", "DOP ", "JMD "};
#define N_MARKERS ((int)(sizeof markers / sizeof *markers))

/* (thousands separator, decimal separator) pairs. */
static const char sep_pairs[][2] = {{',', '.'},  {'.', ','},  {' ', '.'},
                                    {' ', ','},  {'\'', '.'}, {'\'', ','}};
#define N_PAIRS 6
/* marker, separators, cents rule, grouping rule, 2 or 3 decimals, minus
 * rule, marker spacing */
#define N_FORMATS (N_MARKERS * N_PAIRS * 2 * 2 * 2 * 2 * 2)
_Static_assert(N_FORMATS > 15000, "regex_amounts admits well over 10,000 distinct golds");

struct fmt {
    char marker[8];     /* as written before the number: "$", "USD "  */
    char sep;           /* thousands separator                         */
    char dec;           /* decimal separator                           */
    bool cents_req;     /* an amount without cents does not count      */
    bool group_req;     /* 1000 and more must be written with groups   */
    int decs;           /* digits after the decimal separator: 2 or 3  */
    bool minus;         /* a '-' right before the marker is part of it */
};

/* A marker without its trailing space: "USD", "$". */
static void marker_base(const char *m, char out[8])
{
    snprintf(out, 8, "%s", m);
    size_t n = strlen(out);
    if (n && out[n - 1] == ' ')
        out[n - 1] = 0;
}

static bool marker_is_code(const char *m)
{
    char base[8];
    marker_base(m, base);
    if (strlen(base) != 3)
        return false;
    for (int i = 0; i < 3; i++)
        if (base[i] < 'A' || base[i] > 'Z')
            return false;
    return true;
}

/* The marker in the other spacing: "USD " <-> "USD", "$" <-> "$ ". */
static void marker_respaced(const char *m, char out[8])
{
    size_t n = strlen(m);
    if (n && m[n - 1] == ' ')
        marker_base(m, out);
    else
        snprintf(out, 8, "%s ", m);
}

static struct fmt fmt_from_index(unsigned f)
{
    struct fmt x;
    const char *m = markers[f % (unsigned)N_MARKERS];
    f /= (unsigned)N_MARKERS;
    x.sep = sep_pairs[f % N_PAIRS][0];
    x.dec = sep_pairs[f % N_PAIRS][1];
    f /= N_PAIRS;
    x.cents_req = f % 2 != 0;
    f /= 2;
    x.group_req = f % 2 != 0;
    f /= 2;
    x.decs = 2 + (int)(f % 2);
    f /= 2;
    x.minus = f % 2 != 0;
    f /= 2;
    if (f % 2)
        marker_respaced(m, x.marker);
    else
        snprintf(x.marker, sizeof x.marker, "%s", m);
    return x;
}

/* How hard notation f is to write a pattern for (0 the easiest): a
 * thousands separator other than the comma, a decimal comma, three
 * decimals, a minus that belongs to the amount, optional cents, optional
 * grouping (both spellings of 1000 and more) and the marker in its
 * unusual spacing each add one.  Levels take their notations by it
 * (vat_rx_choose_format). */
static unsigned fmt_hardness(unsigned f)
{
    struct fmt x = fmt_from_index(f);
    const char *m = markers[f % (unsigned)N_MARKERS];
    return (unsigned)(x.sep != ',') + (x.dec != '.') + (x.decs == 3) + x.minus + !x.cents_req +
           !x.group_req + (strcmp(x.marker, m) != 0);
}

/* A separator as a pattern literal. */
static const char *sep_rx(char c)
{
    switch (c) {
    case '.': return "\\.";
    case ',': return ",";
    case ' ': return " ";
    default: return "'";
    }
}

static const char *sep_name(char c)
{
    switch (c) {
    case '.': return "\".\" (full stop)";
    case ',': return "\",\" (comma)";
    case ' ': return "\" \" (one space)";
    default: return "\"'\" (apostrophe)";
    }
}

/* Reads the notation back from the task's params (what the prompt states),
 * so reference() derives gold from the question, not from generator state. */
static int fmt_from_params(const json_t *params, struct fmt *x, struct vat_err *e)
{
    const char *m = json_string_value(json_object_get(params, "marker"));
    const char *s = json_string_value(json_object_get(params, "thousands_separator"));
    const char *d = json_string_value(json_object_get(params, "decimal_separator"));
    const char *cents = json_string_value(json_object_get(params, "cents"));
    const char *grouping = json_string_value(json_object_get(params, "grouping"));
    /* vat 0.1 params have neither: two decimals, the minus outside */
    json_t *decs = json_object_get(params, "decimals");
    const char *minus = json_string_value(json_object_get(params, "minus"));
    if (!m || !s || !d || !cents || !grouping || strlen(s) != 1 || strlen(d) != 1)
        return vat_err_set(e, "regex_amounts: params lack the marker, separators or rules");
    char base[8];
    marker_base(m, base);
    bool known = false;
    for (int i = 0; i < N_MARKERS && strlen(m) < sizeof x->marker; i++) {
        char b2[8];
        marker_base(markers[i], b2);
        known = known || (strcmp(base, b2) == 0 && strlen(base) > 0);
    }
    if (!known)
        return vat_err_set(e, "regex_amounts: unknown marker '%s'", m);
    snprintf(x->marker, sizeof x->marker, "%s", m);
    x->decs = decs ? (int)json_integer_value(decs) : 2;
    if (x->decs != 2 && x->decs != 3)
        return vat_err_set(e, "regex_amounts: decimals must be 2 or 3");
    if (minus && strcmp(minus, "part") && strcmp(minus, "outside"))
        return vat_err_set(e, "regex_amounts: minus must be part or outside");
    x->minus = minus && strcmp(minus, "part") == 0;
    int pair = -1;
    for (int i = 0; i < N_PAIRS; i++)
        if (sep_pairs[i][0] == s[0] && sep_pairs[i][1] == d[0])
            pair = i;
    if (pair < 0)
        return vat_err_set(e, "regex_amounts: unknown separators '%s' and '%s'", s, d);
    x->sep = s[0];
    x->dec = d[0];
    if ((strcmp(cents, "optional") && strcmp(cents, "required")) ||
        (strcmp(grouping, "optional") && strcmp(grouping, "required")))
        return vat_err_set(e, "regex_amounts: cents and grouping must be optional or required");
    x->cents_req = strcmp(cents, "required") == 0;
    x->group_req = strcmp(grouping, "required") == 0;
    return 0;
}

/* Builds the pattern of the question params state: gold, or the trap's
 * naive digits-and-cents shape.  Gold is: not glued on the left; the
 * marker; 0, or 1-3 digits not starting with 0 and groups of three (or,
 * where grouping is optional, any run of digits not starting with 0);
 * cents; and not followed by a word character or by a separator and a
 * digit.  Returns a new string, or NULL with e set when params name no
 * question. */
static char *build_pattern(const json_t *params, bool naive, struct vat_err *e)
{
    struct fmt q = {0};
    if (fmt_from_params(params, &q, e) != 0)
        return NULL;
    const struct fmt *x = &q;
    struct vat_buf b = VAT_BUF_INIT;
    const char *s = sep_rx(x->sep), *d = sep_rx(x->dec);
    if (!naive)
        vat_buf_puts(&b, x->minus ? "(?<!\\w)-?" : "(?<!\\w)");
    for (const char *p = x->marker; *p; p++) {
        if (*p == '$')
            vat_buf_puts(&b, "\\$");
        else
            vat_buf_putc(&b, *p);
    }
    if (naive) {
        vat_buf_printf(&b, x->cents_req ? "\\d+%s\\d{%d}" : "\\d+(%s\\d{%d})?", d, x->decs);
        return vat_buf_detach(&b);
    }
    vat_buf_printf(&b, "(?:[1-9]\\d{0,2}(?:%s\\d{3})*|", s);
    if (!x->group_req)
        vat_buf_puts(&b, "[1-9]\\d*|");
    vat_buf_puts(&b, "0)");
    vat_buf_printf(&b, x->cents_req ? "%s\\d{%d}" : "(?:%s\\d{%d})?", d, x->decs);
    vat_buf_printf(&b, "(?!\\w|[.,%s]\\d)", x->sep == '.' || x->sep == ',' ? "" : s);
    return vat_buf_detach(&b);
}

/* ---- planting ------------------------------------------------------------ */

/* What one slot of a line holds.  K_TARGET .. K_FIELD are targets
 * (K_UNGROUPED and K_NO_CENTS only where the notation allows them); every
 * other kind is a decoy the gold pattern must skip. */
enum kind {
    K_TARGET,       /* a valid amount                                            */
    K_GROUPED,      /* a valid amount of 1000 or more, grouped: $1,234.50        */
    K_UNGROUPED,    /* 1000 or more without separators: $1234.50                 */
    K_NO_CENTS,     /* no cents: $12                                             */
    K_WRAPPED,      /* a valid amount with a sign or brackets: -$12.00, ($5)     */
    K_FOLLOWED,     /* a valid amount followed by a range or a split: $40-60     */
    K_FIELD,        /* a valid amount inside key=value text: total=$5,status=ok  */
    K_ONE_CENT,     /* one cent digit: $12.5, $1.5k                              */
    K_THREE_CENTS,  /* three cent digits: $12.345                                */
    K_SHORT_GROUP,  /* a group of two digits: $1,00                              */
    K_LONG_GROUP,   /* a group of four digits: $12,3456                          */
    K_LONG_LEAD,    /* four digits before the first separator: $1234,567         */
    K_LZ_PLAIN,     /* a leading zero: $05, $012.50                              */
    K_LZ_GROUPED,   /* a leading zero before a group: $0,500                     */
    K_GLUED_BEFORE, /* a letter right before the marker: A$12, sUSD 12.00        */
    K_GLUED_AFTER,  /* a letter right after the amount: $12k, $3.50M             */
    K_OCR_PLAIN,    /* a letter read for a digit: $1O5                           */
    K_OCR_GROUP,    /* a letter read for a digit inside a group: $1,5O0          */
    K_OCR_CENTS,    /* a letter read for the last cent digit: $12.5O             */
    K_TAIL,         /* a second cents part: $12.50.25                            */
    K_OTHER_MARKER, /* another currency, or the marker spelled otherwise         */
    /* Held back for levels 3 to 5 (VAT_RX_HELD_BACK_LEVEL): weight 0,
     * required in the held-out lines only from that level on. */
    K_MINUS_INSIDE, /* a minus between the marker and the number: $-12.00        */
    K_LOCALE,       /* the other convention's separators: $1.234,56 for 1,234.56 */
    N_KINDS
};
#define FIRST_DECOY K_ONE_CENT
#define FIRST_HELD_BACK K_MINUS_INSIDE

static const unsigned kind_weights[N_KINDS] = {
    [K_TARGET] = 30,     [K_GROUPED] = 12,     [K_UNGROUPED] = 4,    [K_NO_CENTS] = 4,
    [K_WRAPPED] = 4,     [K_FOLLOWED] = 3,     [K_FIELD] = 3,        [K_ONE_CENT] = 4,
    [K_THREE_CENTS] = 3, [K_SHORT_GROUP] = 3,  [K_LONG_GROUP] = 3,   [K_LONG_LEAD] = 3,
    [K_LZ_PLAIN] = 2,    [K_LZ_GROUPED] = 2,   [K_GLUED_BEFORE] = 3, [K_GLUED_AFTER] = 4,
    [K_OCR_PLAIN] = 2,   [K_OCR_GROUP] = 2,    [K_OCR_CENTS] = 2,    [K_TAIL] = 2,
    [K_OTHER_MARKER] = 5,
};

/* The whole-number part of a value: grouped by threes with sep, or plain. */
static void fmt_int(char *out, size_t cap, long v, bool grouped, char sep)
{
    char raw[32];
    int n = snprintf(raw, sizeof raw, "%ld", v);
    size_t k = 0;
    for (int i = 0; i < n && k + 2 < cap; i++) {
        if (grouped && i > 0 && (n - i) % 3 == 0)
            out[k++] = sep;
        out[k++] = raw[i];
    }
    out[k] = 0;
}

/* A value below 1000 (sometimes 0), or one of 1000 and more. */
static long draw_small(struct vat_rng *r)
{
    if (vat_rng_chance(r, 0.05))
        return 0;
    if (vat_rng_chance(r, 0.5))
        return (long)vat_rng_range(r, 1, 99);
    return (long)vat_rng_range(r, 100, 999);
}

static long draw_big(struct vat_rng *r)
{
    unsigned u = vat_rng_below(r, 10);
    if (u < 6)
        return (long)vat_rng_range(r, 1000, 99999);
    if (u < 9)
        return (long)vat_rng_range(r, 100000, 999999);
    return (long)vat_rng_range(r, 1000000, 99999999);
}

/* Appends the decimal separator and n random digits. */
static void add_digits(char *num, size_t cap, const struct fmt *x, struct vat_rng *r, int n)
{
    size_t k = strlen(num);
    snprintf(num + k, cap - k, "%c%0*d", x->dec, n,
             (int)vat_rng_range(r, 0, n == 1 ? 9 : n == 2 ? 99 : n == 3 ? 999 : 9999));
}

/* Appends the decimal separator and the notation's cent digits when with
 * is true. */
static void add_cents(char *num, size_t cap, const struct fmt *x, struct vat_rng *r, bool with)
{
    if (with)
        add_digits(num, cap, x, r, x->decs);
}

/* Whether an amount drawn for a target carries cents. */
static bool want_cents(const struct fmt *x, struct vat_rng *r)
{
    return x->cents_req || vat_rng_chance(r, 0.55);
}

/* A valid number (no marker) into num: small or big, grouped as the
 * notation allows, cents as it allows. */
static void valid_number(char *num, size_t cap, const struct fmt *x, struct vat_rng *r)
{
    long v = vat_rng_chance(r, 0.7) ? draw_small(r) : draw_big(r);
    bool grouped = x->group_req || vat_rng_chance(r, 0.75);
    fmt_int(num, cap, v, grouped, x->sep);
    add_cents(num, cap, x, r, want_cents(x, r));
}

/* Replaces the digit at num[i] by a letter a scan could misread for it. */
static void misread(char *num, size_t i, struct vat_rng *r)
{
    static const char letters[] = "OOlIS";
    num[i] = letters[vat_rng_below(r, 5)];
}

/* The number of an amount of slot's kind, into num (cap bytes). */
static void draw_number(char *num, size_t cap, const struct fmt *x, struct vat_rng *r,
                        const struct vat_rx_slot *slot, bool cents)
{
    int kind = slot->kind;
    switch ((enum kind)kind) {
    case K_TARGET:
    case K_WRAPPED:
    case K_FOLLOWED:
    case K_FIELD:
        valid_number(num, cap, x, r);
        break;
    case K_GROUPED:
        fmt_int(num, cap, draw_big(r), true, x->sep);
        add_cents(num, cap, x, r, cents);
        break;
    case K_UNGROUPED:
        fmt_int(num, cap, draw_big(r), false, x->sep);
        add_cents(num, cap, x, r, cents);
        break;
    case K_NO_CENTS: {
        long v = vat_rng_chance(r, 0.6) ? draw_small(r) : draw_big(r);
        fmt_int(num, cap, v, x->group_req || vat_rng_chance(r, 0.75), x->sep);
        break;
    }
    case K_ONE_CENT:
        fmt_int(num, cap, draw_small(r), true, x->sep);
        /* the first of a set is plain ("$12.5"), where a cents rule of
         * one or two digits is caught; later ones may read "$1.5k" */
        {
            /* one draw per statement, the suffix first (the order the
             * corpus was drawn in, so its bytes stay) */
            const char *k = slot->seen && vat_rng_chance(r, 0.3) ? "k" : "";
            add_digits(num, cap, x, r, x->decs - 1); /* one digit too few */
            snprintf(num + strlen(num), cap - strlen(num), "%s", k);
        }
        break;
    case K_THREE_CENTS:
        fmt_int(num, cap, vat_rng_chance(r, 0.7) ? draw_small(r) : draw_big(r), true,
                x->sep);
        add_digits(num, cap, x, r, x->decs + 1); /* one digit too many */
        break;
    case K_SHORT_GROUP:
    case K_LONG_GROUP:
    case K_LONG_LEAD: {
        /* a valid lead, then one group of the wrong width (or a lead of
         * four digits and a valid group) */
        long lead = kind == K_LONG_LEAD ? (long)vat_rng_range(r, 1000, 9999)
                                        : (long)vat_rng_range(r, 1, 999);
        int width = kind == K_SHORT_GROUP ? 2 : kind == K_LONG_GROUP ? 4 : 3;
        long group = (long)vat_rng_range(r, 0, width == 2 ? 99 : width == 3 ? 999 : 9999);
        snprintf(num, cap, "%ld%c%0*ld", lead, x->sep, width, group);
        add_cents(num, cap, x, r, cents);
        break;
    }
    case K_LZ_PLAIN:
        snprintf(num, cap, "0%ld", (long)vat_rng_range(r, 1, 99));
        add_cents(num, cap, x, r, cents);
        break;
    case K_LZ_GROUPED:
        if (vat_rng_chance(r, 0.5))
            snprintf(num, cap, "0%c%03ld", x->sep, (long)vat_rng_range(r, 0, 999));
        else {
            /* one draw per statement, the group first */
            long group = (long)vat_rng_range(r, 0, 999);
            long lead = (long)vat_rng_range(r, 1, 99);
            snprintf(num, cap, "0%ld%c%03ld", lead, x->sep, group);
        }
        add_cents(num, cap, x, r, cents);
        break;
    case K_GLUED_BEFORE:
    case K_GLUED_AFTER:
    case K_OTHER_MARKER:
    case K_MINUS_INSIDE:
        valid_number(num, cap, x, r);
        break;
    case K_LOCALE: {
        /* 1000 or more written in the other convention: the decimal
         * separator swapped for the other of '.' and ',', and so is a
         * thousands separator that is one of them ($1.234,56 where
         * $1,234.56 is asked, CHF 1'234.50 where CHF 1'234,50 is).  Gold's
         * guard refuses a '.' or ',' followed by a digit, so it takes no
         * part.  Caught: one pattern for both conventions, separators
         * written as classes: \$\d{1,3}(?:[.,]\d{3})*(?:[.,]\d{2})? */
        struct fmt other = *x;
        other.dec = x->dec == '.' ? ',' : '.';
        other.sep = x->sep == ',' ? '.' : x->sep == '.' ? ',' : x->sep;
        fmt_int(num, cap, draw_big(r), true, other.sep);
        add_digits(num, cap, &other, r, x->decs);
        break;
    }
    case K_OCR_PLAIN: {
        /* two or three digits, a letter for one after the first */
        long v = (long)vat_rng_range(r, 10, 999);
        snprintf(num, cap, "%ld", v);
        misread(num, 1 + vat_rng_below(r, (uint32_t)strlen(num) - 1), r);
        add_cents(num, cap, x, r, cents);
        break;
    }
    case K_OCR_GROUP: {
        /* not the group's first digit: "$1,O50" would leave "$1" valid */
        fmt_int(num, cap, draw_big(r), true, x->sep);
        size_t n = strlen(num);
        size_t last_sep = n - 4;
        misread(num, last_sep + 2 + vat_rng_below(r, 2), r);
        add_cents(num, cap, x, r, cents);
        break;
    }
    case K_OCR_CENTS:
        /* the last cent digit: "$12.O5" would leave "$12" valid */
        fmt_int(num, cap, vat_rng_chance(r, 0.7) ? draw_small(r) : draw_big(r), true,
                x->sep);
        add_digits(num, cap, x, r, x->decs - 1);
        snprintf(num + strlen(num), cap - strlen(num), "0");
        misread(num, strlen(num) - 1, r);
        break;
    case K_TAIL:
        fmt_int(num, cap, vat_rng_chance(r, 0.7) ? draw_small(r) : draw_big(r), true,
                x->sep);
        add_cents(num, cap, x, r, true);
        add_cents(num, cap, x, r, true);
        break;
    case N_KINDS:
        num[0] = 0;
        break;
    }
}

static void plant(struct vat_rx_builder *b, struct vat_rng *r, const struct vat_rx_slot *slot,
                  const void *ctx)
{
    const struct fmt *x = ctx;
    int kind = slot->kind;
    const char *marker = x->marker;
    char num[64], amt[96], alt[16];
    bool cents = want_cents(x, r);

    draw_number(num, sizeof num, x, r, slot, cents);

    if (kind == K_OTHER_MARKER) {
        /* another currency, or ours spelled another way */
        char ours[8], theirs[8];
        marker_base(x->marker, ours);
        if (vat_rng_chance(r, 0.6)) {
            do {
                marker = markers[vat_rng_below(r, (uint32_t)N_MARKERS)];
                marker_base(marker, theirs);
            } while (strcmp(theirs, ours) == 0);
        } else if (marker_is_code(x->marker) && vat_rng_chance(r, 0.5)) {
            /* the code in lower case, spaced as ours */
            size_t i = 0;
            for (; x->marker[i]; i++)
                alt[i] = x->marker[i] >= 'A' && x->marker[i] <= 'Z'
                             ? (char)(x->marker[i] - 'A' + 'a')
                             : x->marker[i];
            alt[i] = 0;
            marker = alt;
        } else {
            /* ours in the other spacing: "USD12", "$ 12" */
            marker_respaced(x->marker, alt);
            marker = alt;
        }
    }
    /* A minus between the marker and the number, as printf("$%.2f")
     * writes a negative amount: no number follows the marker, so gold
     * takes nothing.  Caught: the minus looked for after the marker,
     * \$-?\d+ (or -?\$-?...). */
    snprintf(amt, sizeof amt, "%s%s%s", marker, kind == K_MINUS_INSIDE ? "-" : "", num);

    bool target = kind < FIRST_DECOY;
    if (kind == K_UNGROUPED)
        target = !x->group_req;
    if (kind == K_NO_CENTS)
        target = !x->cents_req;

    switch ((enum kind)kind) {
    case K_WRAPPED: {
        static const char *const wraps[][2] = {
            {"-", ""}, {"(", ")"}, {"+", ""}, {"~", ""}, {"\"", "\""}, {"-(", ")"}};
        size_t w = vat_rng_below(r, 6);
        /* The first of a set is a plain minus, where the minus rule
         * shows; where the minus is part of the amount, it is taken. */
        if (slot->seen == 0)
            w = 0;
        if (x->minus && w == 0) {
            char neg[112];
            snprintf(neg, sizeof neg, "-%s", amt);
            vat_rx_target(b, neg, kind);
            return;
        }
        vat_rx_put(b, wraps[w][0]);
        vat_rx_target(b, amt, kind);
        vat_rx_put(b, wraps[w][1]);
        return;
    }
    case K_FOLLOWED:
        vat_rx_target(b, amt, kind);
        if (vat_rng_chance(r, 0.5))
            vat_rx_putf(b, "-%d", (int)vat_rng_range(r, 2, 999));
        else
            vat_rx_putf(b, "/%d", (int)vat_rng_range(r, 2, 12));
        return;
    case K_FIELD: {
        static const char *const keys[] = {"amount=", "total=", "paid=", "due="};
        static const char *const rest[] = {",status=paid", ",ref=inv", ",note=ok",
                                           ",method=card"};
        vat_rx_put(b, VAT_PICK(r, keys));
        vat_rx_target(b, amt, kind);
        vat_rx_put(b, VAT_PICK(r, rest));
        return;
    }
    case K_GLUED_BEFORE: {
        static const char *const sign_glue[] = {"A", "C", "NZ", "HK", "S", "x"};
        static const char *const code_glue[] = {"s", "c", "t", "X", "w"};
        vat_rx_putf(b, "%s", marker_is_code(x->marker) ? VAT_PICK(r, code_glue)
                                                       : VAT_PICK(r, sign_glue));
        vat_rx_decoy(b, amt, kind);
        return;
    }
    case K_GLUED_AFTER: {
        static const char *const glue[] = {"k", "K", "M", "m", "bn", "x"};
        char out[112];
        snprintf(out, sizeof out, "%s%s", amt, VAT_PICK(r, glue));
        vat_rx_decoy(b, out, kind);
        return;
    }
    default:
        if (target)
            vat_rx_target(b, amt, kind);
        else
            vat_rx_decoy(b, amt, kind);
        return;
    }
}

/* Invoice-note and chat frames by number of slots.  Every slot is
 * bordered by a space, punctuation or a line edge, never by a letter,
 * digit or underscore, and never followed by a separator and a digit
 * (not even a space and a digit), so a plant touches its neighbours only
 * where it is glued on purpose. */
static const char *const frames0[] = {
    "{user}: will send the invoice tomorrow, ref {id}",
    "{level} [{svc}] payment batch {id} queued in {ms}",
    "{user}: thanks, received! ({time})",
    "{user}: can you resend the receipt to {user}? sent {time}",
};
static const char *const frames1[] = {
    "invoice {id}: total due {slot} by Friday",
    "{user}: can you refund {slot}? it was charged twice",
    "{user} paid {slot} by card at {time}",
    "line 3: support plan, annual, qty 1 @ {slot}",
    "{user}: the quote came in at {slot}, which is over budget",
    "subtotal: {slot}",
    "[{svc}] charge of {slot} declined for {user}",
    "{user}: ok so {slot} for the whole team?",
};
static const char *const frames2[] = {
    "{user}: it was {slot} last month and {slot} now",
    "invoice total {slot} (tax {slot} included)",
    "{user} moved {slot} from savings; balance now {slot}.",
    "refund issued: {slot}; fee withheld: {slot}",
    "{user}: {slot} upfront, then {slot} monthly",
};
static const char *const frames3[] = {
    "items: {slot}, {slot} and {slot}; shipping free",
    "{user}: budget {slot}, spent {slot}, left {slot}",
    "{time} {level} [{svc}] settled {slot} + {slot} - {slot} for {user}",
};

/* Of 20 lines, 2 hold no amount slot, 8 one, 6 two and 4 three. */
static const struct vat_rx_layout layout = {
    VAT_RX_FRAMES(frames0, frames1, frames2, frames3),
    .slot_weights = {2, 8, 6, 4},
    .weights = kind_weights,
    .n_kinds = N_KINDS,
    .plant = plant,
};

/* ---- the task ------------------------------------------------------------ */

/* "USD 1,234,567.89" for the prompt and params. */
static void fmt_sample(const struct fmt *x, char out[32])
{
    snprintf(out, 32, "%s1%c234%c567%c89%s", x->marker, x->sep, x->sep, x->dec,
             x->decs == 3 ? "5" : "");
}

/* The data sentence and the question in both styles (explicit
 * questions: vat_rx_prompt_question). */
static const char *const d_explicit[] = {
    "[[The lines below are|Below are|You are given|The example lines are|These lines are]] "
    "[[invoice notes and chat messages|chat messages and invoice notes]][[:|; they mention| "
    "with]] money in [[several currencies and notations|many currencies and notations|several "
    "currencies and formats]], [[quantities|amounts of goods]], [[ids|references]] and "
    "[[times|timestamps]].",
};
static const char *const d_natural[] = {
    "[[These are invoice notes and messages from our billing chat|Here are some lines from "
    "invoices and customer chats|Below: notes from our invoices and finance chat|I copied these "
    "lines from invoice notes and chat threads|Our billing team collected these lines]][[;|:|, "
    "and]] [[money comes up in them|they quote prices and totals|amounts show up in them]] in "
    "[[all sorts of currencies and notations|several currencies and notations|many currencies "
    "and formats]].",
};
static const char *const q_natural[] = {
    "Could you write a regex that pulls every amount written like \"{sample}\" out of lines "
    "like these? Only well-formed amounts, please.{facts}",
    "I need a regular expression that finds the amounts in our notation, \"{sample}\", and "
    "only complete, correctly written ones.{facts}",
    "Can you give me a regex to extract the money amounts written the way \"{sample}\" is? "
    "Malformed numbers are not amounts.{facts}",
    "Please write a regex that picks out every proper amount in the \"{sample}\" notation "
    "from such lines.{facts}",
    "[[For our invoice parser|For the billing import|For the payments bot]] I need a regex "
    "for amounts written like \"{sample}\", well-formed ones only.{facts}",
};
static const char *const giveaways[] = {
    "not extracted at all", "not even in part", "stands on its own", "does not count",
    "do not count", "groups of exactly three", "stuck to it", "leading zero",
    "followed directly by a digit", NULL,
};
/* The decoys, which a natural prompt never describes. */
static const char *const defects[] = {
    "typo", "malformed amounts like", "wrong grouping", "too many decimals", NULL,
};
static const char *const answer_columns[] = {NULL};
static const char *const states_cents[] = {"always show", "often left off", NULL};
static const char *const states_grouping[] = {
    "always have the thousands separator", "without thousands separators", NULL,
};
static const char *const states_minus[] = {"belongs to the amount", "not part of it", NULL};
static const struct vat_convention conventions[] = {
    {"cents", states_cents},
    {"grouping", states_grouping},
    {"minus", states_minus},
    {NULL, NULL},
};

static const char *const count_words[] = {"no", "one", "two", "three", "four"};

/* The facts of the notation a sample cannot show, as a client states
 * them: the decimals, the grouping rule, and what a minus sign is. */
static void natural_facts(struct vat_buf *f, struct vat_task *t, const struct fmt *x)
{
    char m12[16], m1234567[24];
    snprintf(m12, sizeof m12, "%s12", x->marker);
    snprintf(m1234567, sizeof m1234567, "%s1234567", x->marker);
    const char *kv[] = {"n", count_words[x->decs], "dec", sep_name(x->dec),
                        "sep", sep_name(x->sep), "m12", m12, "m1234567", m1234567, NULL};
    vat_prompt_say(f, t, 'c',
                   x->cents_req ? " [[Our amounts|Amounts here]] always show {n} decimals after "
                                  "the {dec}."
                                : " The {n} decimals after the {dec} are often left off, as in "
                                  "{m12}.",
                   kv);
    vat_prompt_say(f, t, 'c',
                   x->group_req ? " Amounts of a thousand or more always have the thousands "
                                  "separator {sep}."
                                : " [[Amounts|Sums]] of a thousand or more sometimes come "
                                  "without thousands separators, as in {m1234567}.",
                   kv);
    vat_prompt_say(f, t, 'c',
                   x->minus ? " A refund carries a minus sign right before the currency, as "
                              "in -{m12}, and the minus belongs to the amount."
                            : " [[A sign or brackets around an amount are not part of it|Signs "
                              "and brackets around an amount are not part of it]].",
                   kv);
}

static void prompt_rules(struct vat_buf *b, struct vat_task *t, const struct fmt *x)
{
    char sample[32];
    fmt_sample(x, sample);
    if (vat_prompt_natural(t)) {
        struct vat_buf facts = VAT_BUF_INIT;
        natural_facts(&facts, t, x);
        const char *kv[] = {"sample", sample, "facts", facts.data, NULL};
        VAT_RX_PROMPT_ASK(b, t, d_natural, q_natural, kv);
        vat_buf_release(&facts);
        return;
    }
    char base[8], tail[64];
    marker_base(x->marker, base);
    bool spaced = strcmp(base, x->marker) != 0;
    snprintf(tail, sizeof tail, "written like \"%s\"", sample);
    VAT_RX_PROMPT_QUESTION(b, t, d_explicit, "amount", "amounts", tail);
    char after[32] = "\".\" or \",\"";
    if (x->sep == ' ' || x->sep == '\'')
        snprintf(after, sizeof after, "\".\", \",\" or \"%c\"", x->sep);
    const char *what = marker_is_code(x->marker) ? "code" : "currency sign";
    char *space = vat_prompt_text(t, 'r',
                                  spaced ? "[[then exactly one space|and exactly one space]] "
                                           "before the number"
                                         : "directly before the number (no space)",
                                  NULL);
    const char *kv[] = {
        "base", base, "sep", sep_name(x->sep), "dec", sep_name(x->dec),
        "n", count_words[x->decs], "after", after, "what", what, "marker", x->marker,
        "space", space, NULL,
    };
    if (marker_is_code(x->marker))
        vat_prompt_say(b, t, 'r',
                       "- [[it starts with|it begins with|first comes]] the currency code "
                       "\"{base}\" [[in capital letters|in upper case]], {space};\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r', "- [[it starts with|it begins with]] \"{base}\" {space};\n",
                       kv);
    vat_prompt_say(b, t, 'r',
                   "- [[the whole-number part is|the part before the decimals is]] 0, or 1 to 3 "
                   "digits not starting with 0 [[followed by|and then]] any number of groups "
                   "of exactly three digits, [[each group preceded by|each preceded by|every "
                   "group after]] the thousands separator {sep}",
                   kv);
    if (x->group_req)
        vat_prompt_say(b, t, 'r',
                       "; numbers of 1000 and more are always grouped ([[written without "
                       "separators they do not count|without separators they do not "
                       "count]]);\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "; numbers of 1000 and more may also be written as one run of digits "
                       "[[with no separators at all|without any separator]] (not starting "
                       "with 0);\n",
                       kv);
    if (x->cents_req)
        vat_prompt_say(b, t, 'r',
                       "- [[then|after that|next]] the decimal separator {dec} and exactly {n} "
                       "decimal digits; [[they are required (an amount without them does not "
                       "count)|an amount without them does not count|they are required]];\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "- [[then, optionally,|optionally, after that,|then, if present,]] the "
                       "decimal separator {dec} and exactly {n} decimal digits;\n",
                       kv);
    vat_prompt_say(b, t, 'r',
                   x->minus ? "- [[it stands on its own|it stands alone]]: [[the character right "
                              "before the amount (its minus sign, if any)|what comes right "
                              "before the amount (its minus sign, if any)]], where there is "
                              "one, [[is not a letter, a digit or an underscore|is neither a "
                              "letter nor a digit nor an underscore]]; "
                            : "- [[it stands on its own|it stands alone]]: [[the character right "
                              "before the {what}|what comes right before the {what}]], where "
                              "there is one, [[is not a letter, a digit or an underscore|is "
                              "neither a letter nor a digit nor an underscore]]; ",
                   kv);
    vat_prompt_say(b, t, 'r',
                   "[[the character right after the amount|what comes right after the amount]], "
                   "[[where there is one|if any]], [[is not a letter, a digit or an "
                   "underscore|is neither a letter nor a digit nor an underscore]], and is not "
                   "{after} followed directly by a digit.\n",
                   kv);
    vat_prompt_say(b, t, 'r',
                   "A number that breaks any of these rules ([[a group of two or four digits, "
                   "one decimal digit too few or too many, a leading zero, a letter in it or "
                   "stuck to it, another currency|another currency, a leading zero, a group of "
                   "two or four digits, a decimal digit too many or too few, a letter in it or "
                   "stuck to it]]) is not extracted at all, not even in part. ",
                   kv);
    if (x->minus)
        vat_prompt_say(b, t, 'r',
                       "A minus sign right before the {what} is part of the amount "
                       "(\"-{marker}12\" is extracted whole); any other sign, bracket or "
                       "punctuation around an amount is not, and a full stop or comma that "
                       "ends a sentence after it is fine.\n\n",
                       kv);
    else
        vat_prompt_say(b, t, 'r',
                       "A sign, bracket or punctuation around an amount is not part of it, and "
                       "a full stop or comma that ends a sentence after it is fine.\n\n",
                       kv);
    free(space);
}

static int generate(struct vat_task *t, struct vat_rng *rng, struct vat_err *e)
{
    struct fmt x = fmt_from_index(vat_rx_choose_format(t, rng, N_FORMATS));
    struct vat_rx_draw d;
    if (vat_rx_task_begin(t, rng, &d, e) != 0)
        return -1;

    /* Required plants.  The examples show a grouped amount (what the trap
     * misses), the grouping and cents rules and the main decoys; the
     * held-out lines hold every kind, so that each part of the gold
     * pattern is needed on the hidden lines alone. */
    vat_rx_require(&d.ex, K_TARGET);
    vat_rx_require(&d.ex, K_GROUPED);
    vat_rx_require(&d.ex, K_UNGROUPED);
    vat_rx_require(&d.ex, K_NO_CENTS);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_ONE_CENT : K_THREE_CENTS);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_SHORT_GROUP : K_LONG_GROUP);
    vat_rx_require(&d.ex, vat_rng_chance(rng, 0.5) ? K_GLUED_BEFORE : K_GLUED_AFTER);
    vat_rx_require(&d.ho, K_TARGET);
    vat_rx_require(&d.ho, K_TARGET);
    vat_rx_require(&d.ho, K_GROUPED);
    for (int k = 0; k < FIRST_HELD_BACK; k++)
        vat_rx_require(&d.ho, k);
    /* From level 3 on, the held-out lines also hold the kinds held back
     * (never shown in the examples): a minus after the marker and the
     * other convention's separators. */
    if (vat_task_level(t) >= VAT_RX_HELD_BACK_LEVEL)
        for (int k = FIRST_HELD_BACK; k < N_KINDS; k++)
            vat_rx_require(&d.ho, k);
    if (vat_rx_task_plant(t, rng, &d, &layout, &x, e) != 0)
        return -1;

    char sample[32];
    fmt_sample(&x, sample);
    t->params = json_object();
    json_object_set_new(t->params, "format", json_string(sample));
    json_object_set_new(t->params, "marker", json_string(x.marker));
    json_object_set_new(t->params, "thousands_separator", json_stringn(&x.sep, 1));
    json_object_set_new(t->params, "decimal_separator", json_stringn(&x.dec, 1));
    json_object_set_new(t->params, "cents", json_string(x.cents_req ? "required" : "optional"));
    json_object_set_new(t->params, "grouping",
                        json_string(x.group_req ? "required" : "optional"));
    json_object_set_new(t->params, "decimals", json_integer(x.decs));
    json_object_set_new(t->params, "minus", json_string(x.minus ? "part" : "outside"));

    struct vat_buf b = VAT_BUF_INIT;
    prompt_rules(&b, t, &x);
    vat_rx_task_prompt(t, &b, "lines");
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

const struct vat_template vat_tmpl_regex_amounts = {
    .version = VAT_TEMPLATE_V1,
    .name = "regex_amounts",
    .family = "regex",
    .answer_kind = "regex",
    .trap = "The naive shape such as \\$\\d+(\\.\\d{2})?, which stops at the first thousands "
            "separator of amounts of 1,000 and more and takes parts of malformed numbers.",
    .summary = "Extract the complete, standalone money amounts of one drawn notation "
               "(currency marker, thousands and decimal separators, cents and grouping "
               "rules) from invoice notes and chat lines.",
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
